/* cuda_agree.c — what the ranks must agree on before the GPU moves data (issue 31; the
 * signature and its comparison are runner/backend/agree.c's, shared with the CPU backend):
 *   collectives: before NCCL or CUDA IPC sees one, its team exchanges signatures over the
 *   bootstrap, only when this rank's is not the one its statement agreed on before;
 *   NCCL P2P: each side posts its header (dtype, element count) to the other over the
 *   bootstrap without waiting, on every post (no cache: a pair's sends and receives need not
 *   come from one statement each, so a per-statement cache could skip a header whose
 *   receive does not); the receive checks the sender's at its Wait if it has arrived, else at the next synchronize
 *   (before the streams are drained). Never blocking at the post or the Wait: a ring posted
 *   receive-first on several streams still completes, and a mismatch still stops the job
 *   before its outputs are fetched. */
#include <stdlib.h>
#include <string.h>

#include "runner/cuda/cuda_internal.h"

enum { TAG_NCCL_HDR = 0x4c11 };

int hir_cu_coll_agree(hir_cu_backend *cb, const hir_collective *c, hir_diag *e)
{
    hir_boot *boot = cb->base.cfg.boot;
    if (c->team_size <= 1 || !boot)
        return 0;
    int64_t mine[HIR_SIG_N], stack[8 * HIR_SIG_N], *all = stack;
    hir_coll_signature(c, mine);
    if (hir_sig_cache_hit(&cb->agreed, c->stmt_id, mine))
        return 0;
    if (c->team_size > 8 && !(all = malloc(sizeof *all * HIR_SIG_N * (size_t)c->team_size)))
        return hir_fail(e, "%s: out of host memory", hir_comm_type_name(c->kind)), -1;
    cb->agree_exchanges++;
    int rc = hir_boot_team_allgather(boot, c->team, c->team_size, mine, all, sizeof mine, e);
    if (!rc)
        rc = hir_coll_sig_compare(c, all, e);
    /* cached only when every member came through this statement (no memory: no cache, still
     * right); members that reach it through different statements exchange every time */
    if (!rc && hir_coll_sig_same_place(c, all))
        hir_sig_cache_put(&cb->agreed, c->stmt_id, mine);
    if (all != stack)
        free(all);
    return rc ? -1 : 0;
}

/* the checks of a header that arrived: this rank's receive against the sender's header */
static int hdr_compare(hir_cu_backend *cb, const hir_cu_hdr *h, const int64_t got[2],
                       hir_diag *e)
{
    return hir_p2p_header_compare(h->peer, cb->base.cfg.rank, got[0], got[1], h->dtype,
                                  h->count, h->peer, e);
}

void hir_cu_headers_drop(hir_cu_hdr *h, int n)
{
    for (int i = 0; i < n; i++)
        hir_boot_msg_drop(h[i].m);
}

static int hdr_push(hir_cu_hdr **v, int *n, int *cap, const hir_cu_hdr *h, hir_diag *e)
{
    if (hir_cu_grow((void **)v, cap, *n, sizeof **v, e) < 0)
        return -1;
    (*v)[(*n)++] = *h;
    return 0;
}

int hir_cu_p2p_header(hir_cu_backend *cb, const hir_p2p *p, hir_work *w, hir_diag *e)
{
    hir_boot *boot = cb->base.cfg.boot;
    if (!boot)
        return 0;
    hir_cu_hdr h = {.peer = p->peer, .is_recv = !p->is_send, .dtype = p->buf.dtype,
                    .count = hir_cu_numel(&p->buf)};
    int64_t mine[2] = {h.dtype, h.count};
    if (hir_boot_msg_post(boot, p->peer, TAG_NCCL_HDR, h.is_recv, mine, sizeof mine, &h.m, e))
        return -1;
    int rc = w ? hdr_push(&w->hdr, &w->nhdr, &(int){w->nhdr}, &h, e)
               : hdr_push(&cb->ghdr, &cb->nghdr, &cb->cap_ghdr, &h, e);
    if (rc) {
        hir_boot_msg_drop(h.m);
        return -1;
    }
    return 0;
}

int hir_cu_group_headers(hir_cu_backend *cb, hir_work *w, hir_diag *e)
{
    (void)e;
    if (!w) {
        hir_cu_headers_drop(cb->ghdr, cb->nghdr);
    } else {
        w->hdr = cb->ghdr;
        w->nhdr = cb->nghdr;
        cb->ghdr = NULL;
        cb->cap_ghdr = 0;
    }
    cb->nghdr = 0;
    return 0;
}

/* Complete what has arrived, without waiting; keep the rest for the next synchronize. */
static int hdr_try(hir_cu_backend *cb, hir_cu_hdr *h, int wait, int *kept, hir_diag *e)
{
    int64_t got[2] = {-1, -1};
    hir_cu_hdr mine = *h;
    int done = hir_boot_msg_complete(cb->base.cfg.boot, h->m, wait, got,
                                     h->is_recv ? "P2P header (NCCL receive)"
                                                : "P2P header (NCCL send)", e);
    if (done < 0)
        return -1;
    if (!done)
        return hdr_push(&cb->late, kept, &cb->cap_late, &mine, e);
    return mine.is_recv ? hdr_compare(cb, &mine, got, e) : 0;
}

int hir_cu_headers_at_wait(hir_cu_backend *cb, hir_work *w, hir_diag *e)
{
    int rc = 0, i = 0;
    /* the earlier late ones first: they are older */
    int n = cb->nlate, kept = 0;
    for (i = 0; i < n && !rc; i++) {
        hir_cu_hdr h = cb->late[i];
        int64_t got[2];
        int done = hir_boot_msg_complete(cb->base.cfg.boot, h.m, 0, got, "P2P header", e);
        if (done < 0)
            rc = -1;
        else if (!done)
            cb->late[kept++] = h;
        else if (h.is_recv)
            rc = hdr_compare(cb, &h, got, e);
    }
    for (; i < n; i++)
        cb->late[kept++] = cb->late[i];
    cb->nlate = kept;
    for (i = 0; i < w->nhdr && !rc; i++)
        rc = hdr_try(cb, &w->hdr[i], 0, &cb->nlate, e);
    if (rc)
        hir_cu_headers_drop(w->hdr + i, w->nhdr - i);
    free(w->hdr);
    w->hdr = NULL;
    w->nhdr = 0;
    return rc;
}

int hir_cu_headers_settle(hir_cu_backend *cb, hir_diag *e)
{
    int rc = 0, i;
    for (i = 0; i < cb->nlate && !rc; i++) {
        hir_cu_hdr h = cb->late[i];
        int64_t got[2];
        int done = hir_boot_msg_complete(cb->base.cfg.boot, h.m, 1, got,
                                         h.is_recv ? "P2P header (NCCL receive)"
                                                   : "P2P header (NCCL send)", e);
        if (done < 0)
            rc = -1;
        else if (h.is_recv)
            rc = hdr_compare(cb, &h, got, e);
    }
    if (rc)
        hir_cu_headers_drop(cb->late + i, cb->nlate - i);
    cb->nlate = 0;
    return rc;
}

void hir_cu_agree_destroy(hir_cu_backend *cb)
{
    hir_cu_headers_drop(cb->ghdr, cb->nghdr);
    hir_cu_headers_drop(cb->late, cb->nlate);
    free(cb->ghdr);
    free(cb->late);
    hir_sig_cache_free(&cb->agreed);
}
