/* hx_nccl_stub.c: the nccl backend when ulyharness is built without CUDA or
 * NCCL (CMake found no nvcc or no NCCL, or -DULY_CUDA=OFF): --backend nccl
 * is refused as bad usage (exit 2) with one line saying why. */
#include <stdio.h>

#include "hx.h"

static int stub_configure(hx_opts *o, int rank)
{
    (void)o;
    if (rank == 0)
        fprintf(stderr, "ulyharness: --backend nccl: ulyharness was built without CUDA/NCCL: --backend nccl "
                        "unavailable (valid here: mpi)\n");
    return 2;
}

const hx_backend hx_backend_nccl = {
    .name = "nccl",
    .configure = stub_configure,
};
