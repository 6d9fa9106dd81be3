/* cuda_backend.h — the CUDA backend's extras beyond hir_backend_ops: user kernels for
 * LaunchKernel (`hir-run --kernel GROUP=FILE`). Includes no CUDA header, so tools may use it;
 * every function fails cleanly on a backend that is not the CUDA one. */
#ifndef HIR_CUDA_BACKEND_H
#define HIR_CUDA_BACKEND_H

#include <stddef.h>

#include "runner/backend/backend.h"

/* The constructor (the registry calls it): fails cleanly, with a message saying why, when no
 * GPU is visible. */
int hir_backend_cuda_create(const hir_backend_config *cfg, hir_backend **out, hir_diag *e);
/* 1 when a GPU is visible (no error otherwise). */
int hir_cuda_available(void);
/* GPUs this process sees (0 without a GPU). */
int hir_cuda_device_count(void);
/* 1 when this build's CUDA backend has NCCL (the NCCL transport). */
int hir_cuda_has_nccl(void);

/* How a user kernel is launched. The kernel's parameters are the raw data pointers of its
 * inputs, then of its outputs, then one `long long n` = numel of the first output:
 *     extern "C" __global__ void k(const float *in0, ..., float *out0, ..., long long n);
 * grid 0 means ceil(n / block) (capped at 2^31-1); block 0 means 256. */
typedef struct hir_cuda_kernel_opts {
    const char *entry;           /* kernel symbol; NULL: "kernel" */
    unsigned block;              /* threads per block (1-D) */
    unsigned grid;               /* blocks (1-D) */
    unsigned shared_bytes;       /* dynamic shared memory */
} hir_cuda_kernel_opts;

/* Load FILE for kernel group `group`. By extension: .cubin is loaded as is; .ptx, .ltoir (or
 * .lto/.nvvm) and .fatbin are linked through nvJitLink for the running GPU. opts NULL: read
 * the sidecar "FILE.launch" if present (lines `entry=NAME`, `block=N`, `grid=N`,
 * `shared=N`), else defaults. Loading a group twice replaces it. */
int hir_cuda_load_user_kernel(hir_backend *be, int group, const char *path,
                              const hir_cuda_kernel_opts *opts, hir_diag *e);

/* Launch group `group` on stream s with the given views (outputs must be pre-bound). */
int hir_cuda_launch_user_kernel(hir_backend *be, hir_stream *s, int group,
                                const hir_view *const *inputs, int ninputs,
                                const hir_view *const *outputs, int noutputs, hir_diag *e);

/* CUDA graphs (runner/cuda/cuda_graph.c), for `hir-run --graph`: capture the work queued
 * between begin and end (starting on the main stream; other streams join through stream waits
 * and must be joined back), then replay it on the main stream. end with ok = 0 abandons a
 * capture after a failed run. Work that cannot be captured makes end fail with the reason. */
typedef struct hir_cuda_graph hir_cuda_graph;
int    hir_cuda_graph_begin(hir_backend *be, hir_diag *e);
int    hir_cuda_graph_end(hir_backend *be, int ok, hir_cuda_graph **out, hir_diag *e);
int    hir_cuda_graph_launch(hir_backend *be, hir_cuda_graph *g, hir_diag *e);
void   hir_cuda_graph_destroy(hir_cuda_graph *g);
/* 1 when s is part of an active capture (work queued on it is recorded, not run) */
int    hir_cuda_stream_capturing(hir_stream *s);
/* Before each replay of a graph that holds CUDA-IPC transfers (all ranks idle, a barrier
 * after it): the captured semaphore sequence numbers start over. */
int    hir_cuda_ipc_rearm(hir_backend *be, hir_diag *e);

/* The CUDA C spelling of element-wise op `op` of the family with `nargs` inputs (1 unary,
 * 2 binary, 3 ternary: dialect/tables.h) in integer or floating arithmetic; NULL when the op
 * has no form there. Table data only: usable without a GPU (its unit test checks every row). */
const char *hir_cu_ewise_spelling(int nargs, int op, int isint);

#endif
