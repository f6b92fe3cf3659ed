/* host_mem.h: how much host memory a program may still take, for the
 * up-front checks that refuse work which would not fit (ulyharness's
 * buffers, the torch.profiler trace reader's JSON tree) with a message
 * naming the need and the room, rather than failing part-way. */
#ifndef FORMATS_HOST_MEM_H
#define FORMATS_HOST_MEM_H

/* The memory this machine can give, in bytes: MemAvailable (/proc/meminfo),
 * or the room left under this process's cgroup limit (v2 memory.max, v1
 * memory.limit_in_bytes) when a limit is set and it is smaller; *src names
 * which. -1: unknown. */
double host_mem_available(const char **src);

/* The same for this process alone: the above, or the room left under its
 * address-space limit (RLIMIT_AS, `ulimit -v`) when that is smaller. */
double host_mem_process_room(const char **src);

#endif
