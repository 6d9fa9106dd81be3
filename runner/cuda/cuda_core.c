/* cuda_backend.c — the CUDA backend's skeleton: creation and teardown, memory, streams,
 * events, synchronize with a timeout, error strings, and the hir_backend_ops table. The
 * heavier parts live beside it: cuda_gemm.c, cuda_kernels.c, cuda_nccl.c, cuda_ipc.c. */
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

int hir_cu_fail(hir_error *e, const char *expr, const char *str, const char *file, int line)
{
    /* name the call, not its whole argument list */
    int n = 0;
    while (expr[n] && expr[n] != '(' && n < 96) n++;
    const char *base = strrchr(file, '/');
    hir_error_set(e, "%.*s: %s (%s:%d)", n, expr, str, base ? base + 1 : file, line);
    return -1;
}

int hir_cu_grow(void **arr, int *cap, int n, size_t sz, hir_error *e)
{
    if (n < *cap) return 0;
    int nc = *cap ? *cap * 2 : 8;
    while (nc <= n) nc *= 2;
    void *p = realloc(*arr, (size_t)nc * sz);
    if (!p) return hir_error_set(e, "out of host memory"), -1;
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

/* ---------------------------------------------------------------- events */

int hir_cu_event_get(hir_cu_backend *cb, cudaEvent_t *ev, hir_error *e)
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
    hir_error e;
    if (hir_cu_grow((void **)&cb->ev_pool, &cb->cap_ev_pool, cb->nev_pool, sizeof(cudaEvent_t),
                    &e) < 0) {
        cudaEventDestroy(ev);
        return;
    }
    cb->ev_pool[cb->nev_pool++] = ev;
}

int hir_cu_work_event(hir_cu_backend *cb, hir_stream *s, hir_work **w, hir_error *e)
{
    hir_work *wk = calloc(1, sizeof *wk);
    if (!wk) return hir_error_set(e, "out of host memory"), -1;
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

/* ---------------------------------------------------------------- memory */

static int cu_alloc(hir_backend *be, size_t bytes, void **ptr, hir_error *e)
{
    *ptr = NULL;
    if (bytes == 0) bytes = 1;      /* distinct, freeable pointers even for empty tensors */
    int st = cudaMalloc(ptr, bytes);
    if (st != cudaSuccess) {
        cudaGetLastError();          /* OOM is not sticky; clear it */
        return hir_error_set(e, "cudaMalloc(%zu bytes): %s", bytes,
                             cudaGetErrorString((cudaError_t)st)), -1;
    }
    return 0;
}

static void cu_free(hir_backend *be, void *ptr)
{
    hir_cu_backend *cb = hir_cu(be);
    if (!ptr || cb->dead) return;
    if (cb->rec_on) cb->rec_freed = 1;
    if (hir_cu_ipc_forget(cb, ptr)) hir_cu_ipc_hold(cb, ptr);   /* a peer may map it */
    else cudaFree(ptr);
}

static int cu_mem_available(hir_backend *be, size_t *bytes, hir_error *e)
{
    size_t fr = 0, tot = 0;
    HIR_CK(e, cuda, cudaMemGetInfo(&fr, &tot));
    *bytes = fr;
    return 0;
}

/* Synchronous transfers go through the main stream and wait on it only (not the device). */
static int cu_upload(hir_backend *be, void *dst, const void *src, size_t bytes, hir_error *e)
{
    hir_cu_backend *cb = hir_cu(be);
    HIR_CK(e, cuda, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, cb->main.s));
    HIR_CK(e, cuda, cudaStreamSynchronize(cb->main.s));
    return 0;
}

static int cu_download(hir_backend *be, void *dst, const void *src, size_t bytes, hir_error *e)
{
    hir_cu_backend *cb = hir_cu(be);
    HIR_CK(e, cuda, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, cb->main.s));
    HIR_CK(e, cuda, cudaStreamSynchronize(cb->main.s));
    return 0;
}

/* ---------------------------------------------------------------- streams */

/* Every stream owns its GEMM workspace. cuBLASLt kernels keep scratch in the workspace (split-K
 * partials, stream-K tile counters); two GEMMs in flight on different streams that share one
 * workspace corrupt each other's — seen on an H200 as output tiles left unwritten and GEMMs
 * that "finished" faster than the GPU's peak (docs/cuda-backend.md). Allocated when the stream
 * is made, so no timed run allocates. */
int hir_cu_stream_init_ws(hir_cu_backend *cb, hir_stream *s, hir_error *e)
{
    s->ws = NULL;
    if (!cb->workspace_bytes) return 0;
    if (cb->shared_ws && s != &cb->main) return s->ws = cb->main.ws, 0;
    int st = cudaMalloc(&s->ws, cb->workspace_bytes);
    if (st != cudaSuccess) {
        cudaGetLastError();
        s->ws = NULL;
        return hir_error_set(e, "cudaMalloc(%zu bytes) for a stream's GEMM workspace: %s",
                             cb->workspace_bytes, cudaGetErrorString((cudaError_t)st)), -1;
    }
    return 0;
}

static void stream_fini(hir_cu_backend *cb, hir_stream *s)
{
    if (s->ws && !cb->dead && (!cb->shared_ws || s == &cb->main)) cudaFree(s->ws);
    s->ws = NULL;
    if (s->s) cudaStreamDestroy(s->s);
    s->s = NULL;
}

/* stream_main is a non-blocking stream created at init (not the legacy NULL stream, which
 * would implicitly serialize with every other stream and defeat the overlap). */
static hir_stream *cu_stream_main(hir_backend *be) { return &hir_cu(be)->main; }

static int cu_stream_get(hir_backend *be, int64_t key, hir_stream **out, hir_error *e)
{
    hir_cu_backend *cb = hir_cu(be);
    for (int i = 0; i < cb->nstreams; i++)
        if (cb->streams[i]->key == key) return *out = cb->streams[i], 0;
    if (hir_cu_grow((void **)&cb->streams, &cb->cap_streams, cb->nstreams, sizeof(hir_stream *),
                    e) < 0)
        return -1;
    hir_stream *s = calloc(1, sizeof *s);
    if (!s) return hir_error_set(e, "out of host memory"), -1;
    s->key = key;
    s->pending_peer = -1;
    int st = cudaStreamCreateWithFlags(&s->s, cudaStreamNonBlocking);
    if (st != cudaSuccess) {
        free(s);
        HIR_CK_ST(e, cuda, "cudaStreamCreateWithFlags", st);
    }
    if (hir_cu_stream_init_ws(cb, s, e) < 0) {
        cudaStreamDestroy(s->s);
        free(s);
        return -1;
    }
    cb->streams[cb->nstreams++] = s;
    *out = s;
    return 0;
}

static int cu_stream_wait(hir_backend *be, hir_stream *waiter, hir_stream *on, hir_error *e)
{
    hir_cu_backend *cb = hir_cu(be);
    if (waiter == on) return 0;
    cudaEvent_t ev;
    if (hir_cu_event_get(cb, &ev, e) < 0) return -1;
    int st = cudaEventRecord(ev, on->s);
    int st2 = st == cudaSuccess ? cudaStreamWaitEvent(waiter->s, ev, 0) : cudaSuccess;
    hir_cu_event_put(cb, ev);
    HIR_CK_ST(e, cuda, "cudaEventRecord", st);
    HIR_CK_ST(e, cuda, "cudaStreamWaitEvent", st2);
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Poll instead of cudaStreamSynchronize: a stream blocked on a semaphore of a dead peer never
 * drains, and the user must get a message naming the stream and what it waits for. Waits for s
 * (timeout counted from t0, CLOCK_MONOTONIC seconds); `what` starts the message. */
int hir_cu_stream_drain(hir_cu_backend *cb, hir_stream *s, const char *what, double t0,
                        hir_error *e)
{
    double timeout = cb->base.cfg.timeout > 0 ? cb->base.cfg.timeout : 300.0;
    long sleep_ns = 2000;
    for (;;) {
        cudaError_t st = cudaStreamQuery(s->s);
        if (st == cudaSuccess) return 0;
        if (st != cudaErrorNotReady) HIR_CK_ST(e, cuda, "cudaStreamQuery", st);
        if (cb->ncomms && hir_cu_nccl_check_async(cb, e) < 0) return -1;
        if (now_s() - t0 > timeout) {
            cb->dead = 1;
            hir_error_set(e, "%s still busy after %.1f s%s%s", what, timeout,
                          s->pending[0] ? "; last queued: " : "", s->pending);
            e->peer = s->pending_peer;
            return -1;
        }
        struct timespec ts = {0, sleep_ns};
        nanosleep(&ts, NULL);
        if (sleep_ns < 1000000) sleep_ns *= 2;
    }
}

double hir_cu_now_s(void) { return now_s(); }

static int cu_synchronize(hir_backend *be, hir_error *e)
{
    hir_cu_backend *cb = hir_cu(be);
    double t0 = now_s();
    for (int i = -1; i < cb->nstreams; i++) {
        hir_stream *s = i < 0 ? &cb->main : cb->streams[i];
        char what[64];
        if (s->key < 0) snprintf(what, sizeof what, "synchronize: stream main");
        else snprintf(what, sizeof what, "synchronize: stream %lld", (long long)s->key);
        if (hir_cu_stream_drain(cb, s, what, t0, e) < 0) return -1;
        s->pending[0] = 0;
        s->pending_peer = -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- timing events */

static int cu_event_create(hir_backend *be, hir_event **ev, hir_error *e)
{
    hir_event *x = calloc(1, sizeof *x);
    if (!x) return hir_error_set(e, "out of host memory"), -1;
    int st = cudaEventCreate(&x->ev);
    if (st != cudaSuccess) {
        free(x);
        HIR_CK_ST(e, cuda, "cudaEventCreate", st);
    }
    *ev = x;
    return 0;
}

static int cu_event_record(hir_backend *be, hir_event *ev, hir_stream *s, hir_error *e)
{
    HIR_CK(e, cuda, cudaEventRecord(ev->ev, s->s));
    return 0;
}

static int cu_event_elapsed_ms(hir_backend *be, hir_event *a, hir_event *b, double *ms,
                               hir_error *e)
{
    float f = 0;
    HIR_CK(e, cuda, cudaEventSynchronize(b->ev));
    HIR_CK(e, cuda, cudaEventElapsedTime(&f, a->ev, b->ev));
    *ms = f;
    return 0;
}

static void cu_event_destroy(hir_backend *be, hir_event *ev)
{
    if (!ev) return;
    cudaEventDestroy(ev->ev);
    free(ev);
}

/* ---------------------------------------------------------------- communication dispatch */

static void cu_work_release_raw(hir_cu_backend *cb, hir_work *w)
{
    if (!w) return;
    if (w->ev) hir_cu_event_put(cb, w->ev);
    free(w);
}

/* StartCoalescing: an NCCL group, or with --nccl-p2p=host-staged a list that EndCoalescing
 * runs (cuda_staged.c). CUDA-IPC posts may sit in either kind of group. */
static int cu_group_begin(hir_backend *be, hir_error *e)
{
    hir_cu_backend *cb = hir_cu(be);
    if (cb->in_group) return hir_error_set(e, "StartCoalescing: already coalescing"), -1;
    cb->ngroup_ipc = 0;
    if (!cb->base.cfg.p2p_host_staged) return hir_cu_group_begin(be, e);
    cb->in_group = 1;
    cb->staged_group = 1;
    cb->nstaged = 0;
    return 0;
}

static int cu_group_end(hir_backend *be, hir_stream *s, hir_work **w, hir_error *e)
{
    hir_cu_backend *cb = hir_cu(be);
    *w = NULL;
    int rc;
    if (cb->staged_group) {
        cb->in_group = 0;
        cb->staged_group = 0;
        rc = hir_cu_staged_flush(cb, s, e);
    } else {
        hir_work *nw = NULL;
        rc = hir_cu_group_end(be, s, &nw, e);
        cu_work_release_raw(cb, nw);
    }
    /* the waits of the group's CUDA-IPC transfers, then one event for the whole group */
    for (int i = 0; i < cb->ngroup_ipc; i++) {
        hir_work *iw = cb->group_ipc[i];
        if (!rc && hir_cu_ipc_wait(cb, s, iw, e) < 0) rc = -1;
        cu_work_release_raw(cb, iw);
    }
    cb->ngroup_ipc = 0;
    if (rc) return -1;
    return hir_cu_work_event(cb, s, w, e);
}

static int cu_p2p_post(hir_backend *be, hir_stream *s, const hir_p2p *p, hir_work **w,
                       hir_error *e)
{
    hir_cu_backend *cb = hir_cu(be);
    hir_cu_rec_other(cb);
    *w = NULL;
    if (p->transport == HIR_BK_NCCL)
        return cb->base.cfg.p2p_host_staged ? hir_cu_staged_p2p(cb, s, p, w, e)
                                            : hir_cu_nccl_p2p(cb, s, p, w, e);
    if (p->transport == HIR_BK_CUDA) {
        if (hir_cu_ipc_post(cb, s, p, w, e) < 0) return -1;
        if (cb->in_group) {
            /* in a group the transfer is queued now (it is no NCCL operation) and its wait at
             * EndCoalescing, after the group's NCCL part: the group's Wait covers it */
            if (hir_cu_grow((void **)&cb->group_ipc, &cb->cap_group_ipc, cb->ngroup_ipc,
                            sizeof(hir_work *), e) < 0) {
                cu_work_release_raw(cb, *w);
                *w = NULL;
                return -1;
            }
            cb->group_ipc[cb->ngroup_ipc++] = *w;
            *w = NULL;
        }
        return 0;
    }
    return hir_error_set(e, "the CUDA backend has no UCC transport; use backend=NCCL or CUDA"),
           -1;
}

/* An Allgather over the CUDA transport runs over CUDA IPC; every other collective over NCCL. */
static int cu_collective(hir_backend *be, hir_stream *s, const hir_collective *c, hir_work **w,
                         hir_error *e)
{
    hir_cu_backend *cb = hir_cu(be);
    hir_cu_rec_other(cb);
    *w = NULL;
    if (cb->staged_group)
        return hir_error_set(e, "%s inside a coalescing group: with --nccl-p2p=host-staged a "
                                "group holds P2P only", hir_comm_type_name(c->kind)), -1;
    if (c->transport == HIR_BK_CUDA && c->kind == HIR_COMM_ALLGATHER && !cb->in_group)
        return hir_cu_ipc_allgather(cb, s, c, w, e);
    return hir_cu_nccl_collective(be, s, c, w, e);
}

static int cu_wait(hir_backend *be, hir_stream *s, hir_work *w, hir_error *e)
{
    hir_cu_backend *cb = hir_cu(be);
    if (!w) return hir_error_set(e, "wait: no work recorded"), -1;
    int rc = 0;
    if (w->kind == HIR_CU_WORK_IPC) {
        rc = hir_cu_ipc_wait(cb, s, w, e);
    } else {
        int st = cudaStreamWaitEvent(s->s, w->ev, 0);
        if (st != cudaSuccess) rc = hir_cu_fail(e, "cudaStreamWaitEvent", cudaGetErrorString(st),
                                                __FILE__, __LINE__);
    }
    if (w->ev) hir_cu_event_put(cb, w->ev);
    free(w);
    return rc;
}

static void cu_work_release(hir_backend *be, hir_work *w)
{
    if (!w) return;
    if (w->ev) hir_cu_event_put(hir_cu(be), w->ev);
    free(w);
}

/* ---------------------------------------------------------------- create / destroy */

static void cu_destroy(hir_backend *be)
{
    hir_cu_backend *cb = hir_cu(be);
    if (!cb) return;
    if (!cb->dead) cudaDeviceSynchronize();
    for (int i = 0; i < cb->ngroup_ipc; i++) cu_work_release_raw(cb, cb->group_ipc[i]);
    free(cb->group_ipc);
    free(cb->staged);
    hir_cu_ipc_destroy(cb);
    hir_cu_nccl_destroy(cb);
    hir_cu_gemm_destroy(cb);
    hir_cu_launch_recs_free(cb);
    free(cb->recs);
    hir_cu_kernels_destroy(cb);
    hir_cu_user_kernels_destroy(cb);
    for (int i = 0; i < cb->nstreams; i++) {
        stream_fini(cb, cb->streams[i]);
        free(cb->streams[i]);
    }
    free(cb->streams);
    for (int i = 0; i < cb->nev_pool; i++) cudaEventDestroy(cb->ev_pool[i]);
    free(cb->ev_pool);
    stream_fini(cb, &cb->main);
    if (cb->aux) cudaStreamDestroy(cb->aux);
    free(cb);
}

/* Dense FLOP per clock per SM: 16-bit tensor-core GEMM, float (FMA pipes, no TF32), double.
 * Upper bounds per architecture family (data-centre parts; consumer parts are lower), used
 * only to reject impossible benchmark figures. */
static void arch_flops(int major, int minor, double *f16, double *f32, double *f64)
{
    *f16 = *f32 = *f64 = 0;
    if (major == 7) { *f16 = 1024; *f32 = 128; *f64 = minor == 0 ? 64 : 4; }
    else if (major == 8) {
        if (minor == 0) { *f16 = 2048; *f32 = 128; *f64 = 128; }
        else { *f16 = 1024; *f32 = 256; *f64 = 4; }
    } else if (major == 9) { *f16 = 4096; *f32 = 256; *f64 = 256; }
    else if (major == 10 || major == 11) { *f16 = 8192; *f32 = 256; *f64 = 256; }
    else if (major == 12) { *f16 = 1024; *f32 = 256; *f64 = 4; }
}

static int cu_device_info(hir_backend *be, hir_device_info *d, hir_error *e)
{
    hir_cu_backend *cb = hir_cu(be);
    memset(d, 0, sizeof *d);
    struct cudaDeviceProp prop;
    HIR_CK(e, cuda, cudaGetDeviceProperties(&prop, cb->device));
    snprintf(d->name, sizeof d->name, "%s", prop.name);
    const unsigned char *u = (const unsigned char *)cb->uuid.bytes;
    char *o = d->uuid;
    o += sprintf(o, "GPU-");
    for (int i = 0; i < 16; i++)
        o += sprintf(o, "%02x%s", u[i], i == 3 || i == 5 || i == 7 || i == 9 ? "-" : "");
    d->sm_count = cb->sm_count;
    d->cc_major = cb->cc_major;
    d->cc_minor = cb->cc_minor;
    HIR_CK(e, cuda, cudaDeviceGetAttribute(&d->clock_khz, cudaDevAttrClockRate, cb->device));
    HIR_CK(e, cuda, cudaDeviceGetAttribute(&d->mem_clock_khz, cudaDevAttrMemoryClockRate,
                                           cb->device));
    cudaDriverGetVersion(&d->driver_version);
    cudaRuntimeGetVersion(&d->runtime_version);
    d->nccl_version = hir_cu_nccl_version();
    d->cublaslt_version = (int)cublasLtGetVersion();
    double f16, f32, f64;
    arch_flops(cb->cc_major, cb->cc_minor, &f16, &f32, &f64);
    double sm_hz = (double)d->sm_count * (double)d->clock_khz * 1e3;
    d->peak_tflops_16 = sm_hz * f16 / 1e12;
    d->peak_tflops_32 = sm_hz * f32 / 1e12;
    d->peak_tflops_64 = sm_hz * f64 / 1e12;
    return 0;
}

/* Graph replays: the captured semaphore numbers repeat every replay, so before each replay
 * (every rank idle, and a barrier after this on every rank) the semaphores start over. */
int hir_cuda_ipc_rearm(hir_backend *be, hir_error *e)
{
    hir_cu_backend *cb = hir_cu(be);
    for (int i = 0; i < cb->nipc; i++)
        HIR_CK(e, cuda, cudaMemsetAsync(cb->ipc[i]->sem, 0, sizeof(uint32_t), cb->aux));
    HIR_CK(e, cuda, cudaStreamSynchronize(cb->aux));
    return 0;
}

/* The extras of this backend as optional entries of its table (runner/backend/backend.h). */
static int cu_load_kernel(hir_backend *be, int group, const char *path, hir_error *e)
{
    return hir_cuda_load_user_kernel(be, group, path, NULL, e);
}

static int cu_graph_end(hir_backend *be, int ok, hir_graph **out, hir_error *e)
{
    hir_cuda_graph *g = NULL;
    int rc = hir_cuda_graph_end(be, ok, &g, e);
    *out = (hir_graph *)g;
    return rc;
}

static int cu_graph_launch(hir_backend *be, hir_graph *g, hir_error *e)
{
    return hir_cuda_graph_launch(be, (hir_cuda_graph *)g, e);
}

static void cu_graph_destroy(hir_backend *be, hir_graph *g)
{
    (void)be;
    hir_cuda_graph_destroy((hir_cuda_graph *)g);
}

static int cu_stream_capturing(hir_backend *be, hir_stream *s)
{
    (void)be;
    return hir_cuda_stream_capturing(s);
}

static const hir_backend_ops cu_ops = {
    .name = "cuda",
#ifdef HIR_HAVE_NCCL
    .caps = HIR_CAP_NCCL,
#endif
    .destroy = cu_destroy,
    .alloc = cu_alloc,
    .free = cu_free,
    .mem_available = cu_mem_available,
    .upload = cu_upload,
    .download = cu_download,
    .stream_main = cu_stream_main,
    .stream_get = cu_stream_get,
    .stream_wait = cu_stream_wait,
    .synchronize = cu_synchronize,
    .event_create = cu_event_create,
    .event_record = cu_event_record,
    .event_elapsed_ms = cu_event_elapsed_ms,
    .event_destroy = cu_event_destroy,
    .fill = hir_cu_fill,
    .copy = hir_cu_copy,
    .gemm = hir_cu_gemm,
    .unary = hir_cu_unary,
    .binary = hir_cu_binary,
    .ternary = hir_cu_ternary,
    .reduce = hir_cu_reduce,
    .collective = cu_collective,
    .group_begin = cu_group_begin,
    .group_end = cu_group_end,
    .p2p_post = cu_p2p_post,
    .share_handles = hir_cu_share_handles,
    .wait = cu_wait,
    .work_release = cu_work_release,
    .release_peers = hir_cu_release_peers,
    .device_info = cu_device_info,
    .sdpa = hir_cu_sdpa,
    .moe_dispatch = hir_cu_moe_dispatch,
    .moe_combine = hir_cu_moe_combine,
    .load_kernel = cu_load_kernel,
    .launch_kernel = hir_cuda_launch_user_kernel,
    .graph_begin = hir_cuda_graph_begin,
    .graph_end = cu_graph_end,
    .graph_launch = cu_graph_launch,
    .graph_destroy = cu_graph_destroy,
    .stream_capturing = cu_stream_capturing,
    .graph_rearm = hir_cuda_ipc_rearm,
    .launch_record = hir_cu_launch_record,
    .launch_replay = hir_cu_launch_replay,
    .ew_resolve = hir_cu_ew_resolve,
    .ew_launch = hir_cu_ew_launch,
    .ew_plan_free = hir_cu_ew_plan_free,
};

static int load_driver(hir_cu_driver *d, hir_error *e)
{
#define GET(field, sym) do { \
        enum cudaDriverEntryPointQueryResult q; \
        void *fp = NULL; \
        HIR_CK(e, cuda, cudaGetDriverEntryPointByVersion(sym, &fp, 12000, cudaEnableDefault, &q)); \
        if (q != cudaDriverEntryPointSuccess || !fp) \
            return hir_error_set(e, "driver entry point %s not found", sym), -1; \
        memcpy(&d->field, &fp, sizeof fp); \
    } while (0)
    GET(GetErrorString, "cuGetErrorString");
    GET(MemGetAddressRange, "cuMemGetAddressRange");
    GET(StreamWriteValue32, "cuStreamWriteValue32");
    GET(StreamWaitValue32, "cuStreamWaitValue32");
    GET(ModuleLoadData, "cuModuleLoadData");
    GET(ModuleUnload, "cuModuleUnload");
    GET(ModuleGetFunction, "cuModuleGetFunction");
    GET(LaunchKernel, "cuLaunchKernel");
    GET(DeviceGetAttribute, "cuDeviceGetAttribute");
    GET(PointerGetAttribute, "cuPointerGetAttribute");
    GET(FuncSetAttribute, "cuFuncSetAttribute");
#undef GET
    return 0;
}

int hir_cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n > 0 ? n : 0;
}

int hir_cuda_available(void)
{
    return hir_cuda_device_count() > 0;
}

int hir_backend_cuda_create(const hir_backend_config *cfg, hir_backend **out, hir_error *e)
{
    *out = NULL;
    int ndev = 0;
    cudaError_t st = cudaGetDeviceCount(&ndev);
    if (st != cudaSuccess || ndev == 0) {
        cudaGetLastError();
        return hir_error_set(e, "CUDA backend unavailable: no GPU visible (%s); use the CPU "
                                "backend", st != cudaSuccess ? cudaGetErrorString(st)
                                                             : "0 devices"), -1;
    }
    if (cfg->device < 0)
        return hir_error_set(e, "CUDA backend: device %d requested", cfg->device), -1;
    hir_cu_backend *cb = calloc(1, sizeof *cb);
    if (!cb) return hir_error_set(e, "out of host memory"), -1;
    cb->base.ops = &cu_ops;
    cb->base.cfg = *cfg;
    /* more ranks on a node than visible GPUs (hir-run passes the local rank): they share the
     * GPUs round-robin, local_rank % visible, as backend.h documents */
    cb->base.cfg.device = cfg->device % ndev;
    cb->device = cb->base.cfg.device;
    cb->main.key = -1;
    cb->main.pending_peer = -1;
    /* NCCL reads this at its first call: never use NVLink multicast (NVLS). */
    setenv("NCCL_NVLS_ENABLE", "0", 0);

    HIR_CK_GOTO(e, cuda, cudaSetDevice(cb->device), fail);
    HIR_CK_GOTO(e, cuda, cudaFree(0), fail);           /* make the primary context current */
    if (load_driver(&cb->drv, e) < 0) goto fail;
    struct cudaDeviceProp prop;
    HIR_CK_GOTO(e, cuda, cudaGetDeviceProperties(&prop, cb->device), fail);
    cb->cc_major = prop.major;
    cb->cc_minor = prop.minor;
    cb->sm_count = prop.multiProcessorCount;
    cb->uuid = prop.uuid;
    HIR_CK_GOTO(e, cuda, cudaDeviceGetPCIBusId(cb->pci_bus_id, sizeof cb->pci_bus_id,
                                               cb->device), fail);
    HIR_CK_GOTO(e, cuda, cudaStreamCreateWithFlags(&cb->main.s, cudaStreamNonBlocking), fail);
    HIR_CK_GOTO(e, cuda, cudaStreamCreateWithFlags(&cb->aux, cudaStreamNonBlocking), fail);
    HIR_CK_GOTO(e, cublas, cublasLtCreate(&cb->lt), fail);
    /* What the cuBLAS documentation recommends per workspace: 32 MiB on Hopper (sm_90) and
     * later, 4 MiB before. One per stream (hir_cu_stream_init_ws). */
    cb->workspace_bytes = cb->cc_major >= 9 ? (size_t)32 << 20 : (size_t)4 << 20;
    const char *sw = getenv("HIR_CUDA_SHARED_WORKSPACE");
    cb->shared_ws = sw && !strcmp(sw, "1");
    if (hir_cu_stream_init_ws(cb, &cb->main, e) < 0) goto fail;
    *out = &cb->base;
    return 0;
fail:
    cu_destroy(&cb->base);
    return -1;
}
