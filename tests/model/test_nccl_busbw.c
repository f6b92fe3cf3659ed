/* Published multi-node nccl-tests bus bandwidths (traces/published/
 * nccl_tests_busbw.csv, its path the first argument) against the model:
 * each row's collective, on the preset it names with the row's nodes and
 * GPUs per node, is priced by uly_cost_collective for one communicator over
 * all ranks (alone on its nodes, as nccl-tests runs it); the time becomes a
 * bus bandwidth by nccl-tests' own definition (NVIDIA/nccl-tests
 * doc/PERFORMANCE.md: algbw = S / t, busbw = algbw x 2(n-1)/n for
 * all_reduce, x (n-1)/n for all_gather, reduce_scatter and alltoall), and
 * must land within 15% of the published figure (the collectives' bar in docs/validation.md).
 * Every row's error is printed. The bytes each rank sends, from S: an
 * all-reduce's ring sends 2(n-1)/n S, an all-gather's (n-1)/n of its output
 * S, a reduce-scatter's (n-1)/n of its input S, an all-to-all's (n-1)/n of
 * its buffer S. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preset.h"

static int fails;

static int coll_of(const char *name, uly_coll *c, double *bus)
{
    if (!strcmp(name, "all_reduce")) *c = ULY_COLL_ALLREDUCE, *bus = 2.0;
    else if (!strcmp(name, "all_gather")) *c = ULY_COLL_ALLGATHER, *bus = 1.0;
    else if (!strcmp(name, "reduce_scatter")) *c = ULY_COLL_REDUCE_SCATTER, *bus = 1.0;
    else if (!strcmp(name, "alltoall")) *c = ULY_COLL_ALLTOALL, *bus = 1.0;
    else return 0;
    return 1;
}

static int algo_of(const char *name, int32_t *mask)
{
    if (!strcmp(name, "default")) *mask = 0;
    else if (!strcmp(name, "ring")) *mask = ULY_NCCL_ALGO_RING;
    else if (!strcmp(name, "tree")) *mask = ULY_NCCL_ALGO_TREE;
    else return 0;
    return 1;
}

/* One row: 0 when it is within 15%, 1 when not, 2 when it cannot be read. */
static int check_row(char *line, int lineno)
{
    char *f[8];
    int n = 0;
    for (char *tok = strtok(line, ",\n"); tok && n < 8; tok = strtok(NULL, ",\n")) f[n++] = tok;
    if (n != 8) {
        fprintf(stderr, "line %d: %d fields, want 8\n", lineno, n);
        return 2;
    }
    uly_cluster c;
    char why[512];
    uly_coll coll;
    double bus, busbw_pub = atof(f[6]), S = atof(f[5]);
    const int64_t nodes = atoll(f[3]), gpn = atoll(f[4]);
    int32_t mask;
    if (preset_cluster_load(f[1], &c, why, sizeof why) || !coll_of(f[2], &coll, &bus) || !algo_of(f[7], &mask) ||
        nodes < 2 || gpn < 1 || !(S > 0) || !(busbw_pub > 0)) {
        fprintf(stderr, "line %d: unreadable row (%s)\n", lineno, why);
        return 2;
    }
    c.nodes = nodes;
    c.gpus_per_node = gpn;
    c.nccl_algos = mask;
    const double p = (double)(nodes * gpn);
    const uly_group_place gp = {.size = nodes * gpn, .stride = 1, .per_node = gpn, .nodes = nodes, .node_groups = 1,
                                .tiers = ULY_TIER_INTER | (gpn > 1 ? ULY_TIER_INTRA : 0)};
    const double sent = bus * (p - 1.0) / p * S;
    const double t = uly_cost_collective(&c, coll, &gp, sent, 1, 1);
    const double busbw = S / t * bus * (p - 1.0) / p / 1e9;
    const double err = busbw / busbw_pub - 1.0;
    const int ok = fabs(err) <= 0.15;
    printf("%-14s %-13s %3lld x %-3lld %12.0f B  %-7s published %7.1f GB/s  model %7.1f GB/s  error %+6.1f%%  %s\n", f[2],
           f[1], (long long)nodes, (long long)gpn, S, f[7], busbw_pub, busbw, 100 * err, ok ? "ok" : "FAIL");
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s nccl_tests_busbw.csv\n", argv[0]);
        return 2;
    }
    FILE *fp = fopen(argv[1], "r");
    if (!fp) {
        fprintf(stderr, "cannot open %s\n", argv[1]);
        return 2;
    }
    char line[4096];
    int lineno = 0, rows = 0;
    while (fgets(line, sizeof line, fp)) {
        lineno++;
        if (line[0] == '#' || line[0] == '\n') continue;
        const int r = check_row(line, lineno);
        if (r == 2) {
            fclose(fp);
            return 1;
        }
        fails += r;
        rows++;
    }
    fclose(fp);
    printf("%d rows, %d outside 15%%\n", rows, fails);
    return fails || rows == 0 ? 1 : 0;
}
