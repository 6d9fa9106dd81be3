/* cuda_util.c — what every file of the CUDA backend calls: the error strings of each library
 * and the check macro's failure path, array growth, view sizes, the monotonic clock, the pool
 * of timing-free events and the work item of an event, one device-to-device copy. It calls no
 * other file of the backend. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nvrtc.h>
#include <nvJitLink.h>

#include "runner/cuda/cuda_internal.h"

/* ---------------------------------------------------------------- errors, small helpers */

const char *hir_cu_str_cuda(int st) { return cudaGetErrorString((cudaError_t)st); }
const char *hir_cu_str_cublas(int st)
{
    switch (st) {
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return "cuBLAS error";
    }
}
const char *hir_cu_str_nvrtc(int st) { return nvrtcGetErrorString((nvrtcResult)st); }
const char *hir_cu_str_nvjitlink(int st)
{
    switch (st) {
    case NVJITLINK_ERROR_UNRECOGNIZED_OPTION: return "unrecognized option";
    case NVJITLINK_ERROR_MISSING_ARCH: return "missing -arch";
    case NVJITLINK_ERROR_INVALID_INPUT: return "invalid input";
    case NVJITLINK_ERROR_PTX_COMPILE: return "PTX compile error";
    case NVJITLINK_ERROR_NVVM_COMPILE: return "NVVM compile error";
    case NVJITLINK_ERROR_INTERNAL: return "internal error";
    default: return "nvJitLink error";
    }
}
/* The driver's own strings need the entry point; these cover what the backend can hit. */
const char *hir_cu_str_cu(int st)
{
    switch (st) {
    case CUDA_ERROR_INVALID_VALUE: return "invalid argument";
    case CUDA_ERROR_OUT_OF_MEMORY: return "out of memory";
    case CUDA_ERROR_NOT_INITIALIZED: return "driver not initialized";
    case CUDA_ERROR_NOT_SUPPORTED: return "operation not supported";
    case CUDA_ERROR_INVALID_IMAGE: return "invalid kernel image";
    case CUDA_ERROR_INVALID_CONTEXT: return "invalid context";
    case CUDA_ERROR_NOT_FOUND: return "named symbol not found";
    case CUDA_ERROR_INVALID_HANDLE: return "invalid resource handle";
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: return "too many resources requested for launch";
    case CUDA_ERROR_INVALID_PTX: return "invalid PTX";
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION: return "unsupported PTX version";
    case CUDA_ERROR_NO_BINARY_FOR_GPU: return "no kernel image for this GPU";
    case CUDA_ERROR_ILLEGAL_ADDRESS: return "illegal memory access";
    default: return "CUDA driver error";
    }
}

int hir_cu_fail(hir_diag *e, const char *expr, const char *str, const char *file, int line)
{
    /* name the call, not its whole argument list */
    int n = 0;
    while (expr[n] && expr[n] != '(' && n < 96) n++;
    const char *base = strrchr(file, '/');
    hir_fail(e, "%.*s: %s (%s:%d)", n, expr, str, base ? base + 1 : file, line);
    return -1;
}

int hir_cu_grow(void **arr, int *cap, int n, size_t sz, hir_diag *e)
{
    if (n < *cap) return 0;
    int nc = *cap ? *cap * 2 : 8;
    while (nc <= n) nc *= 2;
    void *p = realloc(*arr, (size_t)nc * sz);
    if (!p) return hir_fail(e, "out of host memory"), -1;
    *arr = p;
    *cap = nc;
    return 0;
}

int64_t hir_cu_numel(const hir_view *v)
{
    int64_t n = 1;
    for (int i = 0; i < v->ndim; i++) n *= v->shape[i];
    return n;
}

int hir_cu_view_contiguous(const hir_view *v)
{
    int64_t st = 1;
    for (int i = v->ndim - 1; i >= 0; i--) {
        if (v->shape[i] != 1 && v->stride[i] != st) return 0;
        st *= v->shape[i];
    }
    return 1;
}

/* ---------------------------------------------------------------- device-to-device copies */

cudaError_t hir_cu_copy_d2d(cudaStream_t st, void *dst, const void *src, size_t bytes,
                            int device, int method)
{
    if (method == HIR_CU_COPY_MEMCPY)
        return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, st);
    struct cudaMemcpyAttributes a;
    memset(&a, 0, sizeof a);
    a.srcAccessOrder = cudaMemcpySrcAccessOrderStream;   /* after the stream's earlier work */
    a.srcLocHint.type = a.dstLocHint.type = cudaMemLocationTypeDevice;
    a.srcLocHint.id = a.dstLocHint.id = device;
    a.flags = method == HIR_CU_COPY_BATCH_OVERLAP ? cudaMemcpyFlagPreferOverlapWithCompute : 0;
    void *d[1] = {dst};
    const void *sp[1] = {src};
    size_t n[1] = {bytes}, idx[1] = {0};
    return cudaMemcpyBatchAsync(d, sp, n, 1, &a, idx, 1, st);
}

/* ---------------------------------------------------------------- events */

int hir_cu_event_get(hir_cu_backend *cb, cudaEvent_t *ev, hir_diag *e)
{
    if (cb->nev_pool > 0) {
        *ev = cb->ev_pool[--cb->nev_pool];
        return 0;
    }
    HIR_CK(e, cuda, cudaEventCreateWithFlags(ev, cudaEventDisableTiming));
    return 0;
}

/* Reusing an event right after cudaStreamWaitEvent is safe: the wait captured the record. */
void hir_cu_event_put(hir_cu_backend *cb, cudaEvent_t ev)
{
    if (hir_cu_grow((void **)&cb->ev_pool, &cb->cap_ev_pool, cb->nev_pool, sizeof(cudaEvent_t),
                    NULL) < 0) {
        cudaEventDestroy(ev);
        return;
    }
    cb->ev_pool[cb->nev_pool++] = ev;
}

int hir_cu_work_event(hir_cu_backend *cb, hir_stream *s, hir_work **w, hir_diag *e)
{
    hir_work *wk = calloc(1, sizeof *wk);
    if (!wk) return hir_fail(e, "out of host memory"), -1;
    wk->kind = HIR_CU_WORK_EVENT;
    wk->posted_on = s;
    if (hir_cu_event_get(cb, &wk->ev, e) < 0) return free(wk), -1;
    int st = cudaEventRecord(wk->ev, s->s);
    if (st != cudaSuccess) {
        hir_cu_event_put(cb, wk->ev);
        free(wk);
        HIR_CK_ST(e, cuda, "cudaEventRecord", st);
    }
    *w = wk;
    return 0;
}

/* ---------------------------------------------------------------- clock */

double hir_cu_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}
