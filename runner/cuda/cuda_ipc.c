/* cuda_ipc.c — P2P over CUDA IPC (transport CUDA): per (statement, peer, buffer) a cached pair
 * of handles, each side with its own exported semaphore and the peer's imported one; Get
 * (receiver pulls) by default, Put (sender pushes) when asked. Copies run on the copy engines;
 * synchronization is stream memory operations on sequence numbers:
 *   Get: send n:  signal the receiver's semaphore := n (data ready)
 *        recv n:  wait mine >= n; copy peer -> mine; signal the sender's := n (data taken)
 *        wait(send n): wait mine >= n            wait(recv n): nothing more
 *   Put: recv n:  signal the sender's semaphore := n (buffer free)
 *        send n:  wait mine >= n; copy mine -> peer; signal the receiver's := n (data landed)
 *        wait(recv n): wait mine >= n            wait(send n): nothing more
 * Both sides count the posts of a pair, so the n-th post of one matches the n-th of the other;
 * waits compare with >= (wrap-safe 32-bit), so a later post can never be satisfied by an earlier
 * signal and several posts may be in flight. The handle record carries the buffer's byte size
 * and dtype, checked on import. Exported memory (buffers and semaphores) is never freed while a
 * peer may map it: hir_cu_release_peers orders the teardown. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/cuda/cuda_internal.h"

enum { TAG_COUNTS = 0x4c01, TAG_HANDLES = 0x4c02, TAG_RELEASE = 0x4c03 };

/* What one side sends the other (only to that peer, never to the world). */
typedef struct hir_cu_ipc_pod {
    int64_t offset;              /* of the buffer inside its allocation */
    cudaIpcMemHandle_t buf;      /* the allocation */
    cudaIpcMemHandle_t sem;      /* the exporter's semaphore */
    int64_t rank;                /* the exporter */
    int64_t bytes;               /* the buffer's size and element type, checked on import */
    int32_t dtype;
    int32_t is_send;
} hir_cu_ipc_pod;

static hir_cu_ipc *lookup(hir_cu_backend *cb, const hir_p2p *p)
{
    size_t es = hir_dtype_size(p->buf.dtype);
    int64_t n = hir_cu_numel(&p->buf);
    for (int i = 0; i < cb->nipc; i++) {
        hir_cu_ipc *x = cb->ipc[i];
        if (x->stmt_id == p->stmt_id && x->peer == p->peer && x->is_send == p->is_send &&
            x->data == (char *)p->buf.data && x->esize == es && x->numel == n)
            return x;
    }
    return NULL;
}

/* Keep exported memory until the ordered teardown (a peer may still map it). */
static void hold(hir_cu_backend *cb, void *p)
{
    for (int i = 0; i < cb->nheld; i++)
        if (cb->held[i] == p) return;
    if (hir_cu_grow((void **)&cb->held, &cb->cap_held, cb->nheld, sizeof(void *), NULL) < 0)
        return;              /* out of host memory: leak it rather than free it under a peer */
    cb->held[cb->nheld++] = p;
}

/* Drop an entry: close my mappings of the peer's memory; my exported semaphore is held if the
 * peer imported it (exported = 1), freed at once otherwise (an export that never left). */
static void ipc_free(hir_cu_backend *cb, hir_cu_ipc *x, int exported)
{
    if (!x) return;
    if (!cb->dead) {
        if (x->peer_base) cudaIpcCloseMemHandle(x->peer_base);
        if (x->peer_sem) cudaIpcCloseMemHandle(x->peer_sem);
        if (x->sem) {
            if (exported) hold(cb, x->sem);
            else cudaFree(x->sem);
        }
    }
    free(x);
}

static int check_peer(hir_cu_backend *cb, const hir_p2p *p, hir_diag *e)
{
    const hir_backend_config *c = &cb->base.cfg;
    if (p->peer == c->rank)
        return hir_fail(e, "CUDA-IPC P2P: send to self not supported (rank %d)", p->peer),
               -1;
    if (p->peer < 0 || p->peer >= c->size)
        return hir_fail(e, "CUDA-IPC P2P: peer %d out of range (world of %d)", p->peer,
                             c->size), -1;
    if (!c->boot) return hir_fail(e, "CUDA-IPC P2P needs the bootstrap channel"), -1;
    int my_node = hir_boot_node(c->boot, c->rank), peer_node = hir_boot_node(c->boot, p->peer);
    if (my_node != peer_node)
        /* a program that mixes CUDA IPC within nodes and NCCL across them is not lowered yet */
        return hir_fail(e, "CUDA-IPC P2P: rank %d (node %d) and peer rank %d (node %d%s) "
                                "are on different nodes; CUDA IPC works within one node only "
                                "(use backend=NCCL for this communication)", c->rank, my_node,
                             p->peer, peer_node,
                             hir_boot_nodes_simulated(c->boot) ? ", simulated by "
                                                                 "--simulate-nodes" : ""), -1;
    if (!hir_cu_view_contiguous(&p->buf) || hir_dtype_size(p->buf.dtype) == 0)
        return hir_fail(e, "CUDA-IPC P2P: the buffer must be contiguous"), -1;
    return 0;
}

/* Exporter side of §4.1: allocation base + offset, the allocation's IPC handle, and a fresh
 * 4-byte semaphore set to idle. The semaphore is zeroed with a stream write on a private
 * stream: that also proves stream memory operations work before any peer depends on them. */
static int export_local(hir_cu_backend *cb, const hir_p2p *p, hir_cu_ipc **out, hir_diag *e)
{
    if (!cb->memops_checked) {
        /* legacy CUDA IPC needs unified addressing; stream memory operations are probed by
         * the semaphore write below */
        int ua = 0;
        HIR_CK(e, cu, cb->drv.DeviceGetAttribute(&ua, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING,
                                                 (CUdevice)cb->device));
        if (!ua)
            return hir_fail(e, "CUDA-IPC P2P: device %d has no unified addressing, which "
                                    "CUDA IPC needs", cb->device), -1;
        cb->memops_checked = 1;
    }
    hir_cu_ipc *x = calloc(1, sizeof *x);
    if (!x) return hir_fail(e, "out of host memory"), -1;
    x->stmt_id = p->stmt_id;
    x->peer = p->peer;
    x->is_send = p->is_send;
    x->data = p->buf.data;
    x->esize = hir_dtype_size(p->buf.dtype);
    x->dtype = (int)p->buf.dtype;
    x->numel = hir_cu_numel(&p->buf);
    x->bytes = x->esize * (size_t)x->numel;
    CUdeviceptr base = 0;
    size_t size = 0;
    HIR_CK_GOTO(e, cu, cb->drv.MemGetAddressRange(&base, &size, (CUdeviceptr)x->data), fail);
    x->my_offset = (int64_t)((CUdeviceptr)x->data - base);
    if ((size_t)x->my_offset + x->bytes > size) {
        hir_fail(e, "CUDA-IPC P2P: buffer of %zu bytes overruns its allocation", x->bytes);
        goto fail;
    }
    int capable = 1;
    if (cb->drv.PointerGetAttribute(&capable, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE,
                                    (CUdeviceptr)x->data) == CUDA_SUCCESS && !capable) {
        hir_fail(e, "CUDA-IPC P2P: buffer is not IPC-capable (not from cudaMalloc)");
        goto fail;
    }
    HIR_CK_GOTO(e, cuda, cudaIpcGetMemHandle(&x->my_buf_h, (void *)base), fail);
    HIR_CK_GOTO(e, cuda, cudaMalloc((void **)&x->sem, sizeof(uint32_t)), fail);
    int st = cb->drv.StreamWriteValue32((CUstream)cb->aux, (CUdeviceptr)x->sem, 0,
                                        CU_STREAM_WRITE_VALUE_DEFAULT);
    if (st != CUDA_SUCCESS) {
        hir_fail(e, "cuStreamWriteValue32: %s: stream memory operations are not usable on "
                         "this device/driver, which the CUDA-IPC transport needs",
                      hir_cu_str_cu(st));
        goto fail;
    }
    HIR_CK_GOTO(e, cuda, cudaStreamSynchronize(cb->aux), fail);
    HIR_CK_GOTO(e, cuda, cudaIpcGetMemHandle(&x->my_sem_h, x->sem), fail);
    *out = x;
    return 0;
fail:
    ipc_free(cb, x, 0);
    return -1;
}

static int import_peer(hir_cu_backend *cb, hir_cu_ipc *x, const hir_cu_ipc_pod *pod,
                       hir_diag *e)
{
    if (pod->rank != x->peer)
        return hir_fail(e, "CUDA-IPC handle exchange: expected handles of rank %d, got "
                                "rank %lld", x->peer, (long long)pod->rank), -1;
    if (pod->is_send == x->is_send)
        return hir_fail(e, "CUDA-IPC handle exchange: rank %d's matching operation is also "
                                "a %s", x->peer, x->is_send ? "send" : "receive"), -1;
    if (pod->bytes != (int64_t)x->bytes || pod->dtype != x->dtype)
        return hir_fail(e, "CUDA-IPC P2P with rank %d: my %s buffer is %zu bytes of %s, "
                                "the peer's %s buffer %lld bytes of %s", x->peer,
                             x->is_send ? "send" : "receive", x->bytes,
                             hir_dtype_name((hir_dtype)x->dtype),
                             x->is_send ? "receive" : "send", (long long)pod->bytes,
                             hir_dtype_name((hir_dtype)pod->dtype)), -1;
    void *base = NULL, *sem = NULL;
    HIR_CK(e, cuda, cudaIpcOpenMemHandle(&base, pod->buf, cudaIpcMemLazyEnablePeerAccess));
    x->peer_base = base;
    HIR_CK(e, cuda, cudaIpcOpenMemHandle(&sem, pod->sem, cudaIpcMemLazyEnablePeerAccess));
    x->peer_sem = sem;
    x->peer_ptr = (char *)base + pod->offset;
    x->imported = 1;
    return 0;
}

static void fill_pod(const hir_backend_config *c, const hir_cu_ipc *x, hir_cu_ipc_pod *pod)
{
    memset(pod, 0, sizeof *pod);
    pod->offset = x->my_offset;
    pod->buf = x->my_buf_h;
    pod->sem = x->my_sem_h;
    pod->rank = c->rank;
    pod->bytes = (int64_t)x->bytes;
    pod->dtype = x->dtype;
    pod->is_send = x->is_send;
}

static int note_peer(hir_cu_backend *cb, int peer, hir_diag *e)
{
    for (int i = 0; i < cb->nipc_peers; i++)
        if (cb->ipc_peers[i] == peer) return 0;
    if (hir_cu_grow((void **)&cb->ipc_peers, &cb->cap_ipc_peers, cb->nipc_peers, sizeof(int),
                    e) < 0)
        return -1;
    cb->ipc_peers[cb->nipc_peers++] = peer;
    return 0;
}

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* Exchange with one peer: counts first (so diverged caches fail with a message instead of a
 * hang), then the handles; my k-th send pairs with the peer's k-th receive from me. */
static int exchange_with(hir_cu_backend *cb, int peer, hir_cu_ipc **fresh, int nfresh,
                         hir_diag *e)
{
    const hir_backend_config *c = &cb->base.cfg;
    int64_t mine[2] = {0, 0}, theirs[2] = {0, 0};
    for (int i = 0; i < nfresh; i++)
        if (fresh[i]->peer == peer) mine[fresh[i]->is_send ? 0 : 1]++;
    if (hir_boot_exchange(c->boot, peer, TAG_COUNTS, mine, theirs, sizeof mine, e) < 0)
        return -1;
    if (theirs[0] != mine[1] || theirs[1] != mine[0])
        return hir_fail(e, "ShareMemHandles: rank %d has %lld new sends/%lld new receives "
                                "for rank %d, which has %lld/%lld the other way: the handle "
                                "caches diverged (did a buffer move on one side only?)",
                             c->rank, (long long)mine[0], (long long)mine[1], peer,
                             (long long)theirs[1], (long long)theirs[0]), -1;
    int64_t n = mine[0] + mine[1];
    hir_cu_ipc_pod *out = calloc((size_t)n, sizeof *out), *in = calloc((size_t)n, sizeof *in);
    hir_cu_ipc **order = calloc((size_t)n, sizeof *order);
    int rc = -1;
    if (!out || !in || !order) { hir_fail(e, "out of host memory"); goto done; }
    int64_t ks = 0, kr = mine[0];
    for (int i = 0; i < nfresh; i++) {
        if (fresh[i]->peer != peer) continue;
        int64_t k = fresh[i]->is_send ? ks++ : kr++;
        order[k] = fresh[i];
        fill_pod(c, fresh[i], &out[k]);
    }
    if (hir_boot_exchange(c->boot, peer, TAG_HANDLES, out, in, (size_t)n * sizeof *out, e) < 0)
        goto done;
    /* from here on the peer may map my memory: the teardown must hear from it */
    if (note_peer(cb, peer, e) < 0) goto done;
    /* theirs: [their sends = my receives..., their receives = my sends...] */
    for (int64_t k = 0; k < mine[0]; k++)
        if (import_peer(cb, order[k], &in[mine[1] + k], e) < 0) goto done;
    for (int64_t k = 0; k < mine[1]; k++)
        if (import_peer(cb, order[mine[0] + k], &in[k], e) < 0) goto done;
    rc = 0;
done:
    free(out);
    free(in);
    free(order);
    return rc;
}

int hir_cu_share_handles(hir_backend *be, const hir_p2p *list, int n, hir_diag *e)
{
    hir_cu_backend *cb = hir_cu(be);
    hir_cu_ipc **fresh = calloc((size_t)(n > 0 ? n : 1), sizeof *fresh);
    int *peers = calloc((size_t)(n > 0 ? n : 1), sizeof *peers);
    int nfresh = 0, npeers = 0, rc = -1;
    if (!fresh || !peers) { hir_fail(e, "out of host memory"); goto done; }
    /* 1-2: validate, skip cached, export all new ones before any import (§4.3) */
    for (int i = 0; i < n; i++) {
        const hir_p2p *p = &list[i];
        if (p->transport != HIR_BK_CUDA) continue;
        if (check_peer(cb, p, e) < 0) goto done;
        if (lookup(cb, p)) continue;
        int dup = 0;
        for (int j = 0; j < nfresh; j++)
            if (fresh[j]->stmt_id == p->stmt_id && fresh[j]->peer == p->peer &&
                fresh[j]->is_send == p->is_send && fresh[j]->data == (char *)p->buf.data &&
                fresh[j]->numel == hir_cu_numel(&p->buf))
                dup = 1;
        if (dup) continue;
        if (export_local(cb, p, &fresh[nfresh], e) < 0) goto done;
        nfresh++;
        int seen = 0;
        for (int j = 0; j < npeers; j++) seen |= peers[j] == p->peer;
        if (!seen) peers[npeers++] = p->peer;
    }
    /* 3: pairwise with each peer, ascending peer rank. That is the lexicographic order of the
     * pairs (min, max) on every rank, so blocking pairwise exchanges cannot form a cycle. No
     * world barrier: ranks without new handles take no part. */
    qsort(peers, (size_t)npeers, sizeof *peers, cmp_int);
    for (int j = 0; j < npeers; j++)
        if (exchange_with(cb, peers[j], fresh, nfresh, e) < 0) goto done;
    for (int i = 0; i < nfresh; i++) {
        if (hir_cu_grow((void **)&cb->ipc, &cb->cap_ipc, cb->nipc, sizeof(hir_cu_ipc *), e) < 0)
            goto done;
        cb->ipc[cb->nipc++] = fresh[i];
        fresh[i] = NULL;
    }
    rc = 0;
done:
    for (int i = 0; i < nfresh; i++) ipc_free(cb, fresh[i], 1);
    free(fresh);
    free(peers);
    return rc;
}

/* Signal n into the peer's semaphore. The default flag puts a memory fence before the write, so
 * the stream's earlier work (the copy) is visible to the peer before the number is. */
static int signal_peer(hir_cu_backend *cb, hir_stream *s, hir_cu_ipc *x, uint32_t n,
                       hir_diag *e)
{
    HIR_CK(e, cu, cb->drv.StreamWriteValue32((CUstream)s->s, (CUdeviceptr)x->peer_sem, n,
                                             CU_STREAM_WRITE_VALUE_DEFAULT));
    return 0;
}

/* One CUDA-IPC copy on s, as cfg.ipc_copy_overlap says (hir_cu_copy_d2d). A batched copy
 * cannot be captured into a CUDA graph, and a capture that went on would lack the copy: refused
 * on a capturing stream rather than run without the data. */
static int ipc_copy(hir_cu_backend *cb, hir_stream *s, void *dst, const void *src, size_t bytes,
                    hir_diag *e)
{
    int overlap = cb->base.cfg.ipc_copy_overlap;
    if (overlap) {
        enum cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
        HIR_CK(e, cuda, cudaStreamIsCapturing(s->s, &cap));
        if (cap != cudaStreamCaptureStatusNone)
            return hir_fail(e, "CUDA-IPC copy: --ipc-copy=overlap (a batched copy) cannot be "
                               "captured into a CUDA graph; use --ipc-copy=memcpy with --graph");
    }
    HIR_CK_ST(e, cuda, overlap ? "cudaMemcpyBatchAsync" : "cudaMemcpyAsync",
              hir_cu_copy_d2d(s->s, dst, src, bytes, cb->device,
                              overlap ? HIR_CU_COPY_BATCH_OVERLAP : HIR_CU_COPY_MEMCPY));
    return 0;
}

/* Block the stream until my semaphore has reached n (wrap-safe: (int32)(*sem - n) >= 0). */
static int wait_mine(hir_cu_backend *cb, hir_stream *s, hir_cu_ipc *x, uint32_t n, hir_diag *e)
{
    HIR_CK(e, cu, cb->drv.StreamWaitValue32((CUstream)s->s, (CUdeviceptr)x->sem, n,
                                            CU_STREAM_WAIT_VALUE_GEQ));
    return 0;
}

int hir_cu_ipc_post(hir_cu_backend *cb, hir_stream *s, const hir_p2p *p, hir_work **w,
                    hir_diag *e)
{
    *w = NULL;
    if (check_peer(cb, p, e) < 0) return -1;
    hir_cu_ipc *x = lookup(cb, p);
    if (!x) {
        /* not shared yet: share this one on the spot, pairwise with its peer (the peer must
         * post its matching operation; ShareMemHandles up front is the normal path) */
        if (hir_cu_share_handles(&cb->base, p, 1, e) < 0) return -1;
        x = lookup(cb, p);
        if (!x) return hir_fail(e, "CUDA-IPC P2P: handles missing after sharing"), -1;
    }
    int put = cb->base.cfg.p2p_protocol == HIR_P2P_PUT;
    uint32_t n = x->seq + 1;
    if (x->is_send != put) {
        /* Get send / Put recv: announce n (data ready / buffer free) */
        if (signal_peer(cb, s, x, n, e) < 0) return -1;
    } else {
        /* Get recv: pull once the sender announced n; Put send: push once the receiver did */
        if (wait_mine(cb, s, x, n, e) < 0) return -1;
        if (ipc_copy(cb, s, put ? x->peer_ptr : x->data, put ? x->data : x->peer_ptr,
                     x->bytes, e) < 0)
            return -1;
        if (signal_peer(cb, s, x, n, e) < 0) return -1;
    }
    x->seq = n;
    snprintf(s->pending, sizeof s->pending, "CUDA-IPC %s rank %d (%s protocol, transfer %u)",
             p->is_send ? "send to" : "recv from", p->peer, put ? "put" : "get", n);
    s->pending_peer = p->peer;
    /* the same event-backed work as other communications, marked as an IPC transfer */
    hir_work *wk;
    if (hir_cu_work_event(cb, s, &wk, e) < 0) return -1;
    wk->kind = HIR_CU_WORK_IPC;
    wk->ipc = x;
    wk->seq = n;
    *w = wk;
    return 0;
}

int hir_cu_ipc_wait(hir_cu_backend *cb, hir_stream *s, hir_work *w, hir_diag *e)
{
    hir_cu_ipc *x = w->ipc;
    int put = cb->base.cfg.p2p_protocol == HIR_P2P_PUT;
    /* waiting on another stream than the post's: first order after the post */
    if (s != w->posted_on) HIR_CK(e, cuda, cudaStreamWaitEvent(s->s, w->ev, 0));
    /* Get: the sender waits until the receiver has taken transfer n; the receiver's copy is
     * already on its stream. Put: the receiver waits until transfer n has landed. */
    if (x->is_send != put) {
        if (wait_mine(cb, s, x, w->seq, e) < 0) return -1;
        snprintf(s->pending, sizeof s->pending, "wait for CUDA-IPC %s rank %d (transfer %u)",
                 x->is_send ? "send to" : "recv from", x->peer, w->seq);
        s->pending_peer = x->peer;
    }
    return 0;
}

/* Allgather over CUDA IPC (a collective with backend=CUDA), for ranks of one node — also
 * ranks sharing one GPU, where NCCL refuses to run. Built from the P2P protocol above: with
 * every peer a send of my input and a receive into the peer's slice of the output, their
 * handles shared in one exchange, then (Get) all sends announced, all receives pulled, and the
 * stream waits until every peer has taken my input (Put: all receives announced, all sends
 * pushed, then wait for every slice to land). The order is the same on every rank and no post
 * waits for a later one, so it cannot deadlock. My own slice is a local copy. */
int hir_cu_ipc_allgather(hir_cu_backend *cb, hir_stream *s, const hir_collective *c,
                         hir_work **w, hir_diag *e)
{
    *w = NULL;
    const hir_view *in = c->input, *out = c->output;
    if (!in || !out)
        return hir_fail(e, "Allgather over CUDA IPC needs an input and an output"), -1;
    int n = c->team_size, me = c->my_index;
    int64_t cnt = hir_cu_numel(in);
    if (hir_cu_numel(out) != cnt * n || in->dtype != out->dtype)
        return hir_fail(e, "Allgather: output has %lld elements of %s, expected %lld of %s",
                             (long long)hir_cu_numel(out), hir_dtype_name(out->dtype),
                             (long long)(cnt * n), hir_dtype_name(in->dtype)), -1;
    if (!hir_cu_view_contiguous(in) || !hir_cu_view_contiguous(out))
        return hir_fail(e, "Allgather over CUDA IPC: input and output must be contiguous"),
               -1;
    size_t es = hir_dtype_size(in->dtype);
    hir_p2p *ops = calloc((size_t)(2 * n + 1), sizeof *ops);
    hir_work **works = calloc((size_t)(2 * n + 1), sizeof *works);
    int nops = 0, rc = -1;
    if (!ops || !works) {
        hir_fail(e, "out of host memory");
        goto done;
    }
    for (int j = 0; j < n; j++) {
        if (j == me) continue;
        hir_p2p snd = {.is_send = 1, .peer = c->team[j], .transport = HIR_BK_CUDA,
                       .buf = *in, .stmt_id = c->stmt_id};
        hir_p2p rcv = {.is_send = 0, .peer = c->team[j], .transport = HIR_BK_CUDA,
                       .buf = *in, .stmt_id = c->stmt_id};
        rcv.buf.data = (char *)out->data + (size_t)j * (size_t)cnt * es;
        ops[nops++] = snd;
        ops[nops++] = rcv;
    }
    if (hir_cu_share_handles(&cb->base, ops, nops, e) < 0) goto done;
    int put = cb->base.cfg.p2p_protocol == HIR_P2P_PUT;
    /* first every non-blocking post (Get: sends; Put: receives), then the blocking ones */
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < nops; k++) {
            int nonblocking = ops[k].is_send != put;
            if (nonblocking != (pass == 0)) continue;
            if (hir_cu_ipc_post(cb, s, &ops[k], &works[k], e) < 0) goto done;
        }
    if (cnt && ipc_copy(cb, s, (char *)out->data + (size_t)me * (size_t)cnt * es, in->data,
                        (size_t)cnt * es, e) < 0)
        goto done;
    for (int k = 0; k < nops; k++) {
        int rc2 = hir_cu_ipc_wait(cb, s, works[k], e);
        hir_cu_event_put(cb, works[k]->ev);
        free(works[k]);
        works[k] = NULL;
        if (rc2 < 0) goto done;
    }
    snprintf(s->pending, sizeof s->pending, "CUDA-IPC Allgather over %d ranks", n);
    s->pending_peer = -1;
    rc = hir_cu_work_event(cb, s, w, e);
done:
    for (int k = 0; k < nops; k++)
        if (works && works[k]) {
            hir_cu_event_put(cb, works[k]->ev);
            free(works[k]);
        }
    free(ops);
    free(works);
    return rc;
}

/* A freed buffer must not keep its cache entries: a later buffer at the same address would hit
 * them and talk to the peer through the old allocation's mapping (silently wrong data). Returns
 * 1 when the allocation was exported to a peer: the caller must hold it, not free it. */
int hir_cu_ipc_forget(hir_cu_backend *cb, void *ptr)
{
    CUdeviceptr base = 0;
    size_t size = 0;
    if (!cb->nipc || cb->drv.MemGetAddressRange(&base, &size, (CUdeviceptr)ptr) != CUDA_SUCCESS)
        return 0;
    int k = 0, exported = 0;
    for (int i = 0; i < cb->nipc; i++) {
        CUdeviceptr d = (CUdeviceptr)cb->ipc[i]->data;
        if (d >= base && d < base + size) {
            ipc_free(cb, cb->ipc[i], 1);
            exported = 1;
        } else {
            cb->ipc[k++] = cb->ipc[i];
        }
    }
    cb->nipc = k;
    return exported;
}

void hir_cu_ipc_hold(hir_cu_backend *cb, void *ptr) { hold(cb, ptr); }

int hir_cu_release_peers(hir_backend *be, hir_diag *e)
{
    hir_cu_backend *cb = hir_cu(be);
    if (cb->dead) return 0;
    /* my work that reads or writes peer memory is done before I say so */
    HIR_CK(e, cuda, cudaDeviceSynchronize());
    for (int i = 0; i < cb->nipc; i++) ipc_free(cb, cb->ipc[i], 1);
    cb->nipc = 0;
    /* ascending peer order: the lexicographic order of the pairs on every rank (no cycle) */
    qsort(cb->ipc_peers, (size_t)cb->nipc_peers, sizeof(int), cmp_int);
    for (int i = 0; i < cb->nipc_peers; i++) {
        int64_t mine = 1, theirs = 0;
        if (hir_boot_exchange(cb->base.cfg.boot, cb->ipc_peers[i], TAG_RELEASE, &mine, &theirs,
                              sizeof mine, e) < 0)
            return -1;
    }
    cb->nipc_peers = 0;
    for (int i = 0; i < cb->nheld; i++) cudaFree(cb->held[i]);
    cb->nheld = 0;
    return 0;
}

void hir_cu_ipc_destroy(hir_cu_backend *cb)
{
    /* without the ordered teardown (a failed job): close mappings, free nothing a peer may
     * still map; the process exit releases it */
    for (int i = 0; i < cb->nipc; i++) ipc_free(cb, cb->ipc[i], 1);
    free(cb->ipc);
    cb->ipc = NULL;
    cb->nipc = 0;
    free(cb->held);
    cb->held = NULL;
    cb->nheld = 0;
    free(cb->ipc_peers);
    cb->ipc_peers = NULL;
}
