/* cuda_stream.c — the CUDA backend's streams (each with its own GEMM workspace), the polling
 * drain with a timeout that synchronize, MoE routing and host-staged P2P wait through, and the
 * timing events. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runner/cuda/cuda_internal.h"

/* ---------------------------------------------------------------- streams */

/* Every stream owns its GEMM workspace. cuBLASLt kernels keep scratch in the workspace (split-K
 * partials, stream-K tile counters); two GEMMs in flight on different streams that share one
 * workspace corrupt each other's — seen on an H200 as output tiles left unwritten and GEMMs
 * that "finished" faster than the GPU's peak (docs/cuda-backend.md). Allocated when the stream
 * is made, so no timed run allocates. */
int hir_cu_stream_init_ws(hir_cu_backend *cb, hir_stream *s, hir_diag *e)
{
    s->ws = NULL;
    if (!cb->workspace_bytes) return 0;
    if (cb->shared_ws && s != &cb->main) return s->ws = cb->main.ws, 0;
    int st = cudaMalloc(&s->ws, cb->workspace_bytes);
    if (st != cudaSuccess) {
        cudaGetLastError();
        s->ws = NULL;
        return hir_fail(e, "cudaMalloc(%zu bytes) for a stream's GEMM workspace: %s",
                             cb->workspace_bytes, cudaGetErrorString((cudaError_t)st)), -1;
    }
    return 0;
}

void hir_cu_stream_fini(hir_cu_backend *cb, hir_stream *s)
{
    if (s->comm) {
        hir_cu_stream_fini(cb, s->comm);
        free(s->comm);
        s->comm = NULL;
    }
    if (s->ws && !cb->dead && (!cb->shared_ws || s == &cb->main)) cudaFree(s->ws);
    s->ws = NULL;
    if (s->s) cudaStreamDestroy(s->s);
    s->s = NULL;
}

/* stream_main is a non-blocking stream created at init (not the legacy NULL stream, which
 * would implicitly serialize with every other stream and defeat the overlap). */
hir_stream *hir_cu_stream_main(hir_backend *be) { return &hir_cu(be)->main; }

int hir_cu_stream_get(hir_backend *be, int64_t key, hir_stream **out, hir_diag *e)
{
    hir_cu_backend *cb = hir_cu(be);
    for (int i = 0; i < cb->nstreams; i++)
        if (cb->streams[i]->key == key) return *out = cb->streams[i], 0;
    if (hir_cu_grow((void **)&cb->streams, &cb->cap_streams, cb->nstreams, sizeof(hir_stream *),
                    e) < 0)
        return -1;
    hir_stream *s = calloc(1, sizeof *s);
    if (!s) return hir_fail(e, "out of host memory"), -1;
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

int hir_cu_stream_wait(hir_backend *be, hir_stream *waiter, hir_stream *on, hir_diag *e)
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

/* ---------------------------------------------------------------- communication priority */

/* The companion is made on first use: a non-blocking stream at the greatest priority the device
 * offers (cudaDeviceGetStreamPriorityRange), without a GEMM workspace (it runs no GEMM). Its
 * kernels (NCCL's) are scheduled ahead of the GEMMs of normal-priority streams when both wait
 * for SMs; copies on the copy engines and stream memory operations are not kernels and gain
 * nothing but their place in the queue (docs/cuda-backend.md, "Communication priority"). */
int hir_cu_comm_fork(hir_cu_backend *cb, hir_stream *s, hir_stream **c, hir_diag *e)
{
    *c = s;
    if (!cb->base.cfg.comm_priority || cb->in_group || cb->staged_group) return 0;
    if (!s->comm) {
        int least = 0, greatest = 0;
        HIR_CK(e, cuda, cudaDeviceGetStreamPriorityRange(&least, &greatest));
        hir_stream *x = calloc(1, sizeof *x);
        if (!x) return hir_fail(e, "out of host memory"), -1;
        x->key = s->key;
        x->pending_peer = -1;
        int st = cudaStreamCreateWithPriority(&x->s, cudaStreamNonBlocking, greatest);
        if (st != cudaSuccess) {
            free(x);
            HIR_CK_ST(e, cuda, "cudaStreamCreateWithPriority", st);
        }
        s->comm = x;
    }
    if (hir_cu_stream_wait(&cb->base, s->comm, s, e) < 0) return -1;
    *c = s->comm;
    return 0;
}

int hir_cu_comm_join(hir_cu_backend *cb, hir_stream *s, hir_stream *c, hir_diag *e)
{
    if (c == s) return 0;
    memcpy(s->pending, c->pending, sizeof s->pending);
    s->pending_peer = c->pending_peer;
    return hir_cu_stream_wait(&cb->base, s, c, e);
}

/* Poll instead of cudaStreamSynchronize: a stream blocked on a semaphore of a dead peer never
 * drains, and the user must get a message naming the stream and what it waits for. Waits for s
 * (timeout counted from t0, CLOCK_MONOTONIC seconds); `what` starts the message. */
int hir_cu_stream_drain(hir_cu_backend *cb, hir_stream *s, const char *what, double t0,
                        hir_diag *e)
{
    double timeout = cb->base.cfg.timeout > 0 ? cb->base.cfg.timeout : 300.0;
    long sleep_ns = 2000;
    for (;;) {
        cudaError_t st = cudaStreamQuery(s->s);
        if (st == cudaSuccess) return 0;
        if (st != cudaErrorNotReady) HIR_CK_ST(e, cuda, "cudaStreamQuery", st);
        if (cb->ncomms && hir_cu_nccl_check_async(cb, e) < 0) return -1;
        if (hir_cu_now_s() - t0 > timeout) {
            cb->dead = 1;
            return hir_fail_peer(e, s->pending_peer, "%s still busy after %.1f s%s%s", what,
                                 timeout, s->pending[0] ? "; last queued: " : "", s->pending);
        }
        struct timespec ts = {0, sleep_ns};
        nanosleep(&ts, NULL);
        if (sleep_ns < 1000000) sleep_ns *= 2;
    }
}

int hir_cu_synchronize(hir_backend *be, hir_diag *e)
{
    hir_cu_backend *cb = hir_cu(be);
    /* P2P headers that had not arrived at their Wait: a size or dtype mismatch would leave a
     * stream blocked for ever, so they are settled before any stream is drained */
    if (hir_cu_headers_settle(cb, e) < 0) return -1;
    double t0 = hir_cu_now_s();
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

int hir_cu_event_create(hir_backend *be, hir_event **ev, hir_diag *e)
{
    hir_event *x = calloc(1, sizeof *x);
    if (!x) return hir_fail(e, "out of host memory"), -1;
    int st = cudaEventCreate(&x->ev);
    if (st != cudaSuccess) {
        free(x);
        HIR_CK_ST(e, cuda, "cudaEventCreate", st);
    }
    *ev = x;
    return 0;
}

int hir_cu_event_record(hir_backend *be, hir_event *ev, hir_stream *s, hir_diag *e)
{
    HIR_CK(e, cuda, cudaEventRecord(ev->ev, s->s));
    return 0;
}

int hir_cu_event_elapsed_ms(hir_backend *be, hir_event *a, hir_event *b, double *ms,
                            hir_diag *e)
{
    float f = 0;
    HIR_CK(e, cuda, cudaEventSynchronize(b->ev));
    HIR_CK(e, cuda, cudaEventElapsedTime(&f, a->ev, b->ev));
    *ms = f;
    return 0;
}

void hir_cu_event_destroy(hir_backend *be, hir_event *ev)
{
    if (!ev) return;
    cudaEventDestroy(ev->ev);
    free(ev);
}
