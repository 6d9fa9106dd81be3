/* cuda_absent.c — stands in for runner/cuda/ when CMake did not find the CUDA toolkit (or
 * HIR_ENABLE_CUDA=OFF), so tools link the same way and fail with a clear message. */
#include "runner/backend.h"
#include "runner/cuda/cuda_backend.h"

int hir_backend_cuda_create(const hir_backend_config *cfg, hir_backend **out, hir_error *e)
{
    *out = 0;
    return hir_error_set(e, "hir was built without the CUDA backend");
}

int hir_cuda_available(void) { return 0; }
int hir_cuda_device_count(void) { return 0; }

int hir_cuda_has_nccl(void) { return 0; }

int hir_cuda_graph_begin(hir_backend *be, hir_error *e)
{
    return hir_error_set(e, "CUDA graphs need the CUDA backend, which this build lacks");
}

int hir_cuda_graph_end(hir_backend *be, int ok, hir_cuda_graph **out, hir_error *e)
{
    *out = 0;
    return hir_error_set(e, "CUDA graphs need the CUDA backend, which this build lacks");
}

int hir_cuda_graph_launch(hir_backend *be, hir_cuda_graph *g, hir_error *e)
{
    return hir_error_set(e, "CUDA graphs need the CUDA backend, which this build lacks");
}

void hir_cuda_graph_destroy(hir_cuda_graph *g) {}

int hir_cuda_stream_capturing(hir_stream *s) { return 0; }

int hir_cuda_ipc_rearm(hir_backend *be, hir_error *e)
{
    (void)be;
    return hir_error_set(e, "this build has no CUDA backend");
}
