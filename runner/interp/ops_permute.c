/* ops_permute.c — CollectivePermute (hostir-2026.md §3.10): one grouped send/receive pair, or
 * a local copy when both peers are this rank. A ring step recognised by interp_scan.c takes
 * this rank's team position in place of the printed one. */
#include <inttypes.h>
#include <string.h>

#include "dialect/intops.h"
#include "runner/interp/ops_internal.h"

int ops_cperm(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    const hir_comm *c = s->u.comm;
    if (c->team_truncated)
        return interp_fail(it, e, "the team was printed truncated (\" ...\"): members unknown");
    int my = interp_team_index(c->team, c->nteam, it->cfg.rank);
    if (my < 0)
        return interp_record_work(it, c->number, WORK_SKIPPED, e);
    for (int i = 0; i < c->nteam; i++)
        if (c->team[i] < 0 || c->team[i] >= it->cfg.size)
            return interp_fail(it, e, "team member %" PRId64 " is not a rank of this job (%d ranks)",
                               c->team[i], it->cfg.size);
    int64_t sp, rp;
    rt_ring *ring = hir_map_get(&it->rings, (uintptr_t)s);
    if (ring) {
        /* a ring step printed on rank 0: this rank's position takes the place of t */
        int64_t x;
        if (interp_eval(it, ring->x, &x, e))
            return -1;
        if (hir_iop_add(x, my, &rp) || hir_iop_mod(rp, ring->n, &rp) ||
            hir_iop_sub(my, x, &sp) || hir_iop_add(ring->n, sp, &sp) ||
            hir_iop_mod(sp, ring->n, &sp))
            return interp_fail(it, e, "integer overflow in the ring peers (loop variable %" PRId64
                               ")", x);
    } else if (interp_eval(it, c->send_peer, &sp, e) || interp_eval(it, c->recv_peer, &rp, e)) {
        return -1;
    }
    if (sp < 0 || sp >= c->nteam)
        return interp_fail(it, e, "send_peer %" PRId64 " is not a position in the team of %d",
                           sp, c->nteam);
    if (rp < 0 || rp >= c->nteam)
        return interp_fail(it, e, "recv_peer %" PRId64 " is not a position in the team of %d",
                           rp, c->nteam);
    hir_view in, out;
    if (interp_get(it, c->input, &in, e) || interp_get(it, c->output, &out, e))
        return -1;
    if (hir_view_numel(&in) != hir_view_numel(&out))
        return interp_fail(it, e, "input has %" PRId64 " elements, output %" PRId64,
                           hir_view_numel(&in), hir_view_numel(&out));
    if (in.dtype != out.dtype)
        return interp_fail(it, e, "input is %s, output %s", hir_dtype_name(in.dtype),
                           hir_dtype_name(out.dtype));
    if (sp == my && rp == my) {
        /* both peers are this rank: a local copy, nothing posted (the Wait is a no-op) */
        hir_view src = in;
        if (in.ndim != out.ndim || memcmp(in.shape, out.shape, sizeof(int64_t) * (size_t)in.ndim)) {
            if (!hir_view_is_contiguous(&in))
                return interp_fail(it, e, "input and output shapes differ and the input is not "
                                   "contiguous");
            hir_view_init(&src, in.data, in.dtype, out.ndim, out.shape);
        }
        if (hir_view_numel(&out) && it->be->ops->copy(it->be, it->cur, &out, &src, e))
            return interp_backend_fail(it, e);
        return interp_record_work(it, c->number, WORK_SKIPPED, e);
    }
    if (it->in_group)
        return interp_fail(it, e, "CollectivePermute inside StartCoalescing is not supported");
    /* one grouped send/receive pair (NCCL: ncclSend/ncclRecv in a group; CPU: MPI) */
    hir_p2p snd = {1, (int)c->team[sp], c->backend, in, (uintptr_t)c};
    hir_p2p rcv = {0, (int)c->team[rp], c->backend, out, (uintptr_t)c};
    hir_work *w = NULL, *none = NULL;
    if (it->be->ops->group_begin(it->be, e))
        return interp_backend_fail(it, e);
    int rc = it->be->ops->p2p_post(it->be, it->cur, &snd, &none, e);
    if (!rc)
        rc = it->be->ops->p2p_post(it->be, it->cur, &rcv, &none, e);
    int rc2 = it->be->ops->group_end(it->be, it->cur, &w, rc ? NULL : e);
    if (rc || rc2) {
        if (w)
            it->be->ops->work_release(it->be, w);
        return interp_backend_fail(it, e);
    }
    if (interp_record_work(it, c->number, w ? w : WORK_SKIPPED, e))
        return -1;
    if (w)
        return interp_held_keep(it, c->number, c->input, c->output, e);
    return 0;
}
