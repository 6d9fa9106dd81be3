/* cuda_core.c — the CUDA backend's memory entries, the dispatch of communication (NCCL,
 * host-staged or CUDA IPC by transport, coalescing groups, waits), the device's description
 * and the re-arming of CUDA-IPC semaphores before a graph replay. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/cuda/cuda_internal.h"

/* ---------------------------------------------------------------- memory */

int hir_cu_alloc(hir_backend *be, size_t bytes, void **ptr, hir_diag *e)
{
    *ptr = NULL;
    if (bytes == 0) bytes = 1;      /* distinct, freeable pointers even for empty tensors */
    int st = cudaMalloc(ptr, bytes);
    if (st != cudaSuccess) {
        cudaGetLastError();          /* OOM is not sticky; clear it */
        return hir_fail(e, "cudaMalloc(%zu bytes): %s", bytes,
                             cudaGetErrorString((cudaError_t)st)), -1;
    }
    return 0;
}

void hir_cu_free(hir_backend *be, void *ptr)
{
    hir_cu_backend *cb = hir_cu(be);
    if (!ptr || cb->dead) return;
    if (cb->rec_on) cb->rec_freed = 1;
    if (hir_cu_ipc_forget(cb, ptr)) hir_cu_ipc_hold(cb, ptr);   /* a peer may map it */
    else cudaFree(ptr);
}

int hir_cu_mem_available(hir_backend *be, size_t *bytes, hir_diag *e)
{
    size_t fr = 0, tot = 0;
    HIR_CK(e, cuda, cudaMemGetInfo(&fr, &tot));
    *bytes = fr;
    return 0;
}

/* Synchronous transfers go through the main stream and wait on it only (not the device). */
int hir_cu_upload(hir_backend *be, void *dst, const void *src, size_t bytes, hir_diag *e)
{
    hir_cu_backend *cb = hir_cu(be);
    HIR_CK(e, cuda, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, cb->main.s));
    HIR_CK(e, cuda, cudaStreamSynchronize(cb->main.s));
    return 0;
}

int hir_cu_download(hir_backend *be, void *dst, const void *src, size_t bytes, hir_diag *e)
{
    hir_cu_backend *cb = hir_cu(be);
    HIR_CK(e, cuda, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, cb->main.s));
    HIR_CK(e, cuda, cudaStreamSynchronize(cb->main.s));
    return 0;
}

/* ---------------------------------------------------------------- communication dispatch */

void hir_cu_work_free(hir_cu_backend *cb, hir_work *w)
{
    if (!w) return;
    if (w->ev) hir_cu_event_put(cb, w->ev);
    hir_cu_headers_drop(w->hdr, w->nhdr);
    free(w->hdr);
    free(w);
}

/* StartCoalescing: an NCCL group, or with --nccl-p2p=host-staged a list that EndCoalescing
 * runs (cuda_staged.c). CUDA-IPC posts may sit in either kind of group. */
int hir_cu_coalesce_begin(hir_backend *be, hir_diag *e)
{
    hir_cu_backend *cb = hir_cu(be);
    if (cb->in_group) return hir_fail(e, "StartCoalescing: already coalescing"), -1;
    cb->ngroup_ipc = 0;
    if (!cb->base.cfg.p2p_host_staged) return hir_cu_group_begin(be, e);
    cb->in_group = 1;
    cb->staged_group = 1;
    cb->nstaged = 0;
    return 0;
}

int hir_cu_coalesce_end(hir_backend *be, hir_stream *s, hir_work **w, hir_diag *e)
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
        hir_cu_work_free(cb, nw);
    }
    hir_work *hw = NULL;          /* the group's NCCL P2P headers go to its work */
    /* the waits of the group's CUDA-IPC transfers, then one event for the whole group */
    for (int i = 0; i < cb->ngroup_ipc; i++) {
        hir_work *iw = cb->group_ipc[i];
        if (!rc && hir_cu_ipc_wait(cb, s, iw, e) < 0) rc = -1;
        hir_cu_work_free(cb, iw);
    }
    cb->ngroup_ipc = 0;
    if (rc || hir_cu_work_event(cb, s, &hw, e) < 0) {
        hir_cu_group_headers(cb, NULL, e);
        return -1;
    }
    hir_cu_group_headers(cb, hw, e);
    *w = hw;
    return 0;
}

/* A P2P or collective outside a group on s's high-priority companion (--comm-priority=high;
 * without it c is s): forked before, joined after, so the order the program sees is s's. */
static int comm_join(hir_cu_backend *cb, hir_stream *s, hir_stream *c, int rc, hir_work **w,
                     hir_diag *e)
{
    if (rc < 0 || hir_cu_comm_join(cb, s, c, e) == 0) return rc;
    if (*w) hir_cu_work_free(cb, *w);
    *w = NULL;
    return -1;
}

int hir_cu_p2p_post(hir_backend *be, hir_stream *s, const hir_p2p *p, hir_work **w,
                    hir_diag *e)
{
    hir_cu_backend *cb = hir_cu(be);
    hir_cu_rec_other(cb);
    *w = NULL;
    if (p->transport == HIR_BK_NCCL) {
        if (cb->base.cfg.p2p_host_staged)
            return hir_cu_staged_p2p(cb, s, p, w, e);   /* its exchange carries the header */
        hir_stream *c;
        if (hir_cu_comm_fork(cb, s, &c, e) < 0) return -1;
        if (comm_join(cb, s, c, hir_cu_nccl_p2p(cb, c, p, w, e), w, e) < 0) return -1;
        if (hir_cu_p2p_header(cb, p, *w, e) < 0) {
            hir_cu_work_free(cb, *w);
            *w = NULL;
            return -1;
        }
        return 0;
    }
    if (p->transport == HIR_BK_CUDA) {
        hir_stream *c;
        if (hir_cu_comm_fork(cb, s, &c, e) < 0) return -1;
        if (comm_join(cb, s, c, hir_cu_ipc_post(cb, c, p, w, e), w, e) < 0) return -1;
        if (cb->in_group) {
            /* in a group the transfer is queued now (it is no NCCL operation) and its wait at
             * EndCoalescing, after the group's NCCL part: the group's Wait covers it */
            if (hir_cu_grow((void **)&cb->group_ipc, &cb->cap_group_ipc, cb->ngroup_ipc,
                            sizeof(hir_work *), e) < 0) {
                hir_cu_work_free(cb, *w);
                *w = NULL;
                return -1;
            }
            cb->group_ipc[cb->ngroup_ipc++] = *w;
            *w = NULL;
        }
        return 0;
    }
    return hir_fail(e, "the CUDA backend has no UCC transport; use backend=NCCL or CUDA"),
           -1;
}

/* An Allgather over the CUDA transport runs over CUDA IPC; every other collective over NCCL. */
int hir_cu_collective(hir_backend *be, hir_stream *s, const hir_collective *c, hir_work **w,
                      hir_diag *e)
{
    hir_cu_backend *cb = hir_cu(be);
    hir_cu_rec_other(cb);
    *w = NULL;
    if (cb->staged_group)
        return hir_fail(e, "%s inside a coalescing group: with --nccl-p2p=host-staged a "
                                "group holds P2P only", hir_comm_type_name(c->kind)), -1;
    if (hir_cu_coll_agree(cb, c, e))
        return -1;
    hir_stream *cs;
    if (hir_cu_comm_fork(cb, s, &cs, e) < 0) return -1;
    if (c->transport == HIR_BK_CUDA && c->kind == HIR_COMM_ALLGATHER && !cb->in_group)
        return comm_join(cb, s, cs, hir_cu_ipc_allgather(cb, cs, c, w, e), w, e);
    return comm_join(cb, s, cs, hir_cu_nccl_collective(be, cs, c, w, e), w, e);
}

int hir_cu_wait(hir_backend *be, hir_stream *s, hir_work *w, hir_diag *e)
{
    hir_cu_backend *cb = hir_cu(be);
    if (!w) return hir_fail(e, "wait: no work recorded"), -1;
    /* the senders' headers first: a mismatch is refused before the device waits on it */
    int rc = hir_cu_headers_at_wait(cb, w, e);
    if (rc) {
        hir_cu_work_free(cb, w);
        return -1;
    }
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

void hir_cu_work_release(hir_backend *be, hir_work *w)
{
    hir_cu_work_free(hir_cu(be), w);
}

/* ---------------------------------------------------------------- the device */

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

int hir_cu_device_info(hir_backend *be, hir_device_info *d, hir_diag *e)
{
    hir_cu_backend *cb = hir_cu(be);
    memset(d, 0, sizeof *d);
    struct cudaDeviceProp prop;
    HIR_CK(e, cuda, cudaGetDeviceProperties(&prop, cb->device));
    snprintf(d->name, sizeof d->name, "%.*s", (int)sizeof d->name - 1, prop.name); /* cut to fit */
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
    hir_cu_gemm_tune_info(cb, d);
    return 0;
}

/* Graph replays: the captured semaphore numbers repeat every replay, so before each replay
 * (every rank idle, and a barrier after this on every rank) the semaphores start over. */
int hir_cuda_ipc_rearm(hir_backend *be, hir_diag *e)
{
    hir_cu_backend *cb = hir_cu(be);
    for (int i = 0; i < cb->nipc; i++)
        HIR_CK(e, cuda, cudaMemsetAsync(cb->ipc[i]->sem, 0, sizeof(uint32_t), cb->aux));
    HIR_CK(e, cuda, cudaStreamSynchronize(cb->aux));
    return 0;
}
