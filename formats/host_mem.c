/* host_mem.c: the host memory a program may still take (host_mem.h). Read
 * from /proc and the cgroup files at the edge, never by the model library. */
#include "host_mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* A "Key: N kB" line of a /proc file in bytes; -1 when absent. */
static double proc_kb_bytes(const char *path, const char *key)
{
    FILE *fp = fopen(path, "r");
    if (!fp) return -1;
    char line[256];
    double v = -1;
    const size_t n = strlen(key);
    while (fgets(line, sizeof line, fp))
        if (!strncmp(line, key, n) && line[n] == ':') {
            v = strtod(line + n + 1, NULL) * 1024.0;
            break;
        }
    fclose(fp);
    return v;
}

/* A number in a cgroup file; -1 when absent or "max". */
static double cgroup_value(const char *path)
{
    FILE *fp = fopen(path, "r");
    if (!fp) return -1;
    char buf[64] = "";
    const int ok = fgets(buf, sizeof buf, fp) != NULL;
    fclose(fp);
    char *end = NULL;
    const double v = ok ? strtod(buf, &end) : -1;
    return ok && end != buf ? v : -1;
}

double host_mem_available(const char **src)
{
    double avail = proc_kb_bytes("/proc/meminfo", "MemAvailable");
    *src = "MemAvailable (/proc/meminfo)";
    static const char *const lim[2][2] = {{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
                                          {"/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                           "/sys/fs/cgroup/memory/memory.usage_in_bytes"}};
    for (int v = 0; v < 2; v++) {
        const double limit = cgroup_value(lim[v][0]);
        if (limit < 0 || limit >= 0x1p60) continue; /* "max", or v1's "no limit" */
        const double used = cgroup_value(lim[v][1]);
        const double room = limit - (used > 0 ? used : 0);
        if (avail < 0 || room < avail) {
            avail = room > 0 ? room : 0;
            *src = v == 0 ? "the cgroup limit's room (memory.max - memory.current)"
                          : "the cgroup limit's room (memory.limit_in_bytes - memory.usage_in_bytes)";
        }
        break;
    }
    return avail;
}

double host_mem_process_room(const char **src)
{
    double avail = host_mem_available(src);
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        const double used = proc_kb_bytes("/proc/self/status", "VmSize");
        const double room = (double)rl.rlim_cur - (used > 0 ? used : 0);
        if (avail < 0 || room < avail) {
            avail = room > 0 ? room : 0;
            *src = "the room under this process's address-space limit (ulimit -v)";
        }
    }
    return avail;
}
