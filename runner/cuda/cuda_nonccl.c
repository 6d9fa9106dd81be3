/* cuda_nonccl.c — the NCCL half of the CUDA backend in a build without NCCL
 * (HIR_ENABLE_NCCL=OFF, or AUTO where NCCL was not found); it replaces cuda_nccl.c. CUDA-IPC
 * P2P and the CUDA-IPC Allgather need no NCCL and keep working; every other collective, P2P
 * over the NCCL transport and StartCoalescing fail with a message that says why. hir-run
 * refuses a program naming backend=NCCL before it runs (hir_cuda_has_nccl). */
#include "runner/cuda/cuda_internal.h"

#define HIR_NO_NCCL "this build has no NCCL (configure with -DHIR_ENABLE_NCCL=ON and " \
                    "NCCL_HOME=DIR); only CUDA-IPC transfers can run"

int hir_cuda_has_nccl(void) { return 0; }

const char *hir_cu_str_nccl(int st) { return "NCCL is not part of this build"; }

int hir_cu_nccl_version(void) { return 0; }

int hir_cu_nccl_collective(hir_backend *be, hir_stream *s, const hir_collective *c,
                           hir_work **w, hir_diag *e)
{
    *w = NULL;
    return hir_fail(e, "collective: without NCCL the CUDA backend runs only an Allgather "
                            "with backend=CUDA, and " HIR_NO_NCCL), -1;
}

int hir_cu_nccl_p2p(hir_cu_backend *cb, hir_stream *s, const hir_p2p *p, hir_work **w,
                    hir_diag *e)
{
    *w = NULL;
    return hir_fail(e, "P2P over NCCL: " HIR_NO_NCCL), -1;
}

int hir_cu_group_begin(hir_backend *be, hir_diag *e)
{
    return hir_fail(e, "StartCoalescing groups NCCL operations: " HIR_NO_NCCL), -1;
}

int hir_cu_group_end(hir_backend *be, hir_stream *s, hir_work **w, hir_diag *e)
{
    *w = NULL;
    return hir_fail(e, "EndCoalescing without StartCoalescing"), -1;
}

/* no communicator is ever made, so there is nothing to check or destroy */
int hir_cu_nccl_check_async(hir_cu_backend *cb, hir_diag *e) { return 0; }

void hir_cu_nccl_destroy(hir_cu_backend *cb) {}

int hir_cu_nccl_alltoallv(hir_cu_backend *cb, hir_stream *s, int nbuf,
                          const void *const *sbuf, void *const *rbuf, const size_t *row,
                          const int64_t *sc, const int64_t *rc, hir_diag *e)
{
    return hir_fail(e, "Dispatch/Combine with backend=NCCL: " HIR_NO_NCCL
                            " (backend=CUDA routes through CUDA IPC)"), -1;
}
