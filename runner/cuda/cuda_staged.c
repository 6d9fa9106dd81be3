/* cuda_staged.c — P2P with backend=NCCL run host-staged (hir-run --nccl-p2p=host-staged):
 * the stream drains, each send is copied to host memory, the bytes travel over the
 * bootstrap's MPI channel (hir_boot_exchange), and each receive is copied back to the device.
 * It exists for ranks that share one GPU (hir-run --simulate-nodes on a one-GPU machine),
 * where NCCL refuses to run; it is not NCCL and says so in its messages and in
 * docs/cuda-backend.md. The host blocks until the transfer is done, so the returned work is an
 * event on a stream that is already past the transfer.
 *
 * Pairing: a coalescing group (or a lone post, a group of one) is run peer by peer in
 * ascending peer rank — the lexicographic order of the pairs (min, max) on every rank, so the
 * blocking pairwise exchanges cannot wait on each other in a cycle. With one peer, my k-th send
 * and my k-th receive travel in one exchange of max(their sizes) bytes each way: the peer's
 * k-th receive from me is my k-th send, and its k-th send my k-th receive, so both sides
 * compute the same size; a missing half sends or drops padding. Before the data, the two
 * exchange headers (dtype and element count of each half), and a send whose size or dtype is
 * not its receive's is refused on both sides (issue 31). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runner/cuda/cuda_internal.h"

enum { TAG_STAGED = 0x4c10 };

/* Wait for s to drain (hir_cu_stream_drain: polling, so a stream blocked on a peer fails after
 * the timeout with what it waits for, instead of hanging in cudaStreamSynchronize). */
static int drain(hir_cu_backend *cb, hir_stream *s, hir_diag *e)
{
    return hir_cu_stream_drain(cb, s, "host-staged P2P: the stream is", hir_cu_now_s(), e);
}

static size_t view_bytes(const hir_p2p *p) { return hir_dtype_size(p->buf.dtype) * (size_t)hir_cu_numel(&p->buf); }

static int check_post(hir_cu_backend *cb, const hir_p2p *p, hir_diag *e)
{
    const hir_backend_config *c = &cb->base.cfg;
    if (p->peer == c->rank)
        return hir_fail(e, "P2P to self (rank %d) not supported", p->peer), -1;
    if (p->peer < 0 || p->peer >= c->size)
        return hir_fail(e, "host-staged P2P: peer %d outside a world of %d", p->peer,
                             c->size), -1;
    if (!c->boot) return hir_fail(e, "host-staged P2P needs the bootstrap channel"), -1;
    if (!hir_cu_view_contiguous(&p->buf) || hir_dtype_size(p->buf.dtype) == 0)
        return hir_fail(e, "host-staged P2P: the buffer must be contiguous"), -1;
    return 0;
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* the n-th post in list (in order) that goes to/from peer in direction is_send, or NULL */
static const hir_p2p *nth(const hir_p2p *list, int n, int peer, int is_send, int k)
{
    for (int i = 0; i < n; i++)
        if (list[i].peer == peer && list[i].is_send == is_send && k-- == 0) return &list[i];
    return NULL;
}

static int run_staged(hir_cu_backend *cb, hir_stream *s, const hir_p2p *list, int n,
                      hir_diag *e)
{
    if (n == 0) return 0;
    enum cudaStreamCaptureStatus cap_st = cudaStreamCaptureStatusNone;
    HIR_CK(e, cuda, cudaStreamIsCapturing(s->s, &cap_st));
    if (cap_st != cudaStreamCaptureStatusNone)
        return hir_fail(e, "host-staged P2P blocks the host, so it cannot be captured into a "
                                "CUDA graph (run without --graph)"), -1;
    /* the data of every send is what the stream has computed so far */
    if (drain(cb, s, e) < 0) return -1;
    int *peers = calloc((size_t)n, sizeof *peers), np = 0, rc = -1;
    if (!peers) return hir_fail(e, "out of host memory"), -1;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < np; j++) seen |= peers[j] == list[i].peer;
        if (!seen) peers[np++] = list[i].peer;
    }
    qsort(peers, (size_t)np, sizeof *peers, cmp_int);
    char *mine = NULL, *theirs = NULL;
    size_t cap = 0;
    for (int j = 0; j < np; j++) {
        for (int k = 0;; k++) {
            const hir_p2p *snd = nth(list, n, peers[j], 1, k), *rcv = nth(list, n, peers[j], 0, k);
            if (!snd && !rcv) break;
            /* both sides' headers first (dtype and element count of my send and my receive;
             * -1 and 0 for a missing half): each side checks both directions, so a size or
             * dtype mismatch stops both before any byte is padded or dropped */
            int64_t hm[4] = {snd ? snd->buf.dtype : -1, snd ? hir_cu_numel(&snd->buf) : 0,
                             rcv ? rcv->buf.dtype : -1, rcv ? hir_cu_numel(&rcv->buf) : 0};
            int64_t ht[4];
            if (hir_boot_exchange(cb->base.cfg.boot, peers[j], TAG_STAGED, hm, ht, sizeof hm,
                                  e) < 0)
                goto done;
            int me = cb->base.cfg.rank;
            if ((rcv && hir_p2p_header_compare(peers[j], me, ht[0], ht[1], hm[2], hm[3],
                                               peers[j], e)) ||
                (snd && hir_p2p_header_compare(me, peers[j], hm[0], hm[1], ht[2], ht[3],
                                               peers[j], e)))
                goto done;
            size_t sb = snd ? view_bytes(snd) : 0, rb = rcv ? view_bytes(rcv) : 0;
            size_t bytes = sb > rb ? sb : rb;
            if (bytes > cap) {
                free(mine);
                free(theirs);
                mine = malloc(bytes);
                theirs = malloc(bytes);
                cap = bytes;
                if (!mine || !theirs) {
                    hir_fail(e, "host-staged P2P: out of host memory for %zu bytes", bytes);
                    cap = 0;
                    goto done;
                }
            }
            if (sb) {
                HIR_CK_GOTO(e, cuda, cudaMemcpyAsync(mine, snd->buf.data, sb,
                                                     cudaMemcpyDeviceToHost, s->s), done);
                if (drain(cb, s, e) < 0) goto done;
            }
            if (sb < bytes) memset(mine + sb, 0, bytes - sb);
            if (hir_boot_exchange(cb->base.cfg.boot, peers[j], TAG_STAGED, mine, theirs, bytes,
                                  e) < 0)
                goto done;
            if (rb) {
                HIR_CK_GOTO(e, cuda, cudaMemcpyAsync(rcv->buf.data, theirs, rb,
                                                     cudaMemcpyHostToDevice, s->s), done);
                /* the host buffer is reused: the copy must have read it */
                if (drain(cb, s, e) < 0) goto done;
            }
        }
    }
    rc = 0;
done:
    free(mine);
    free(theirs);
    free(peers);
    return rc;
}

int hir_cu_staged_p2p(hir_cu_backend *cb, hir_stream *s, const hir_p2p *p, hir_work **w,
                      hir_diag *e)
{
    *w = NULL;
    if (check_post(cb, p, e) < 0) return -1;
    if (cb->staged_group) {
        /* runs at EndCoalescing, with the rest of the group */
        if (hir_cu_grow((void **)&cb->staged, &cb->cap_staged, cb->nstaged, sizeof(hir_p2p), e) < 0)
            return -1;
        cb->staged[cb->nstaged++] = *p;
        return 0;
    }
    /* alone: the host blocks until the peer posts its matching operation (or the timeout) */
    snprintf(s->pending, sizeof s->pending, "host-staged %s rank %d",
             p->is_send ? "send to" : "recv from", p->peer);
    s->pending_peer = p->peer;
    if (run_staged(cb, s, p, 1, e) < 0) return -1;
    return hir_cu_work_event(cb, s, w, e);
}

int hir_cu_staged_flush(hir_cu_backend *cb, hir_stream *s, hir_diag *e)
{
    int n = cb->nstaged;
    cb->nstaged = 0;
    snprintf(s->pending, sizeof s->pending, "host-staged coalesced group of %d P2P", n);
    s->pending_peer = -1;
    return run_staged(cb, s, cb->staged, n, e);
}
