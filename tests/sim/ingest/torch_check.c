/* torch_check: `ulysim validate --torch-trace --format json` against
 *   - the plan the same flags give (`ulysim plan --format json`): each
 *     category's predicted time is the sum of its ops' time_s, a per-layer op
 *     counted once per layer (one micro-batch, no pipeline), the categories
 *     read here from each op's kind, collective, phase and recompute;
 *   - the measured medians worked out by hand from the trace (CAT=MS ...).
 *
 *   torch_check PLAN.json VALIDATE.json LAYERS CAT=MS... */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cJSON *load(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static char buf[1 << 22];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return cJSON_Parse(buf);
}

/* The category of an op of the plan's JSON, worded as the trace's. */
static const char *category(const cJSON *op)
{
    const char *kind = cJSON_GetObjectItem(op, "kind")->valuestring;
    if (!strcmp(kind, "comm")) {
        const char *coll = cJSON_GetObjectItem(op, "coll")->valuestring;
        static const char *const map[][2] = {{"alltoall", "nccl_alltoall"}, {"allgather", "nccl_allgather"},
                                             {"reduce_scatter", "nccl_reduce_scatter"}, {"allreduce", "nccl_allreduce"},
                                             {"sendrecv", "nccl_sendrecv"}};
        for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
            if (!strcmp(coll, map[i][0])) return map[i][1];
        return "other";
    }
    if (!strcmp(kind, "attn")) {
        const int fwd = !strcmp(cJSON_GetObjectItem(op, "phase")->valuestring, "fwd");
        return fwd || cJSON_IsTrue(cJSON_GetObjectItem(op, "recompute")) ? "attn_fwd" : "attn_bwd";
    }
    return !strcmp(kind, "gemm") ? "gemm" : "other";
}

int main(int argc, char **argv)
{
    if (argc < 4) return 2;
    cJSON *plan = load(argv[1]), *val = load(argv[2]);
    const double layers = atof(argv[3]);
    int bad = 0;
    if (!plan || !val) {
        fprintf(stderr, "cannot read %s or %s\n", argv[1], argv[2]);
        return 1;
    }
    const cJSON *ops = cJSON_GetObjectItem(cJSON_GetObjectItem(plan, "operations"), "ops");
    const cJSON *cats = cJSON_GetObjectItem(val, "categories");
    if (!cJSON_IsArray(ops) || !cJSON_IsArray(cats)) {
        fprintf(stderr, "no operations in the plan or no categories in validate's output\n");
        return 1;
    }
    double total = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cats)
    {
        const char *name = cJSON_GetObjectItem(c, "category")->valuestring;
        const double pred = cJSON_GetObjectItem(c, "predicted_s")->valuedouble;
        const double meas = cJSON_GetObjectItem(c, "measured_s")->valuedouble;
        double want = 0;
        const cJSON *op;
        cJSON_ArrayForEach(op, ops)
        {
            const char *per = cJSON_GetObjectItem(op, "per")->valuestring;
            const double t = cJSON_GetObjectItem(op, "time_s")->valuedouble * (!strcmp(per, "layer") ? layers : 1);
            if (!strcmp(name, "total") || !strcmp(category(op), name)) want += t;
        }
        if (strcmp(name, "total")) total += want;
        if (!(fabs(pred - want) <= 1e-9 * fabs(want) + 1e-15)) {
            fprintf(stderr, "%s: predicted %.9g s, the plan's ops sum to %.9g s\n", name, pred, want);
            bad = 1;
        }
        double want_ms = 0;
        for (int i = 4; i < argc; i++) {
            size_t l = strlen(name);
            if (!strncmp(argv[i], name, l) && argv[i][l] == '=') want_ms = atof(argv[i] + l + 1);
        }
        if (fabs(meas * 1e3 - want_ms) > 1e-9) {
            fprintf(stderr, "%s: measured %.9g ms, want %.9g ms (by hand from the trace)\n", name, meas * 1e3, want_ms);
            bad = 1;
        }
        printf("%-20s measured %8.3f ms (want %8.3f)  predicted %10.4f ms (plan's ops %10.4f)\n", name, meas * 1e3,
               want_ms, pred * 1e3, want * 1e3);
    }
    if (total <= 0) {
        fprintf(stderr, "the plan's ops sum to nothing\n");
        bad = 1;
    }
    cJSON_Delete(plan);
    cJSON_Delete(val);
    return bad;
}
