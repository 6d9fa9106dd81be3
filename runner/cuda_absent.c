/* cuda_absent.c — stands in for runner/cuda/ when CMake did not find the CUDA toolkit (or
 * HIR_ENABLE_CUDA=OFF), so tools link the same way and fail with a clear message. */
#include "runner/backend.h"

int hir_backend_cuda_create(const hir_backend_config *cfg, hir_backend **out, hir_error *e)
{
    *out = 0;
    return hir_error_set(e, "hir was built without the CUDA backend");
}

int hir_cuda_available(void) { return 0; }
