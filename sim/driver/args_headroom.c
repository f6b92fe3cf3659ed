/* args_headroom.c: --mem-headroom GiB, the device memory a plan leaves
 * unused: the CUDA context, NCCL's buffers and the caching allocator's
 * fragmentation (the cluster preset's gpu.reserved_gib by default;
 * docs/model.md, "Memory headroom"). Usable memory is the device's less it;
 * the plan shows both. */
#include "args.h"

#include <math.h>

int sim_mem_headroom_parse(const char *flag, const char *v, double *gib, char *why, size_t n)
{
    char qb[80], *end = NULL;
    const double x = sim_strtod_dec(v, &end);
    if (!v[0] || !end || *end || !(x >= 0 && x <= 1024))
        return sim_fail(why, n, "%s %s: not a size in GiB (valid: a number in [0, 1024], e.g. 3 or 4.5)", flag,
                        text_quote(v, qb, sizeof qb));
    *gib = x;
    return 0;
}
