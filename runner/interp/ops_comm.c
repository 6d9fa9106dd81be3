/* ops_comm.c — the communication statements (hostir-format.md §2.5): Communication (one
 * collective through the backend, checked in three steps: comm_team, comm_root, comm_buffers),
 * P2PCommunication, ShareMemHandles, Wait, and StartCoalescing/EndCoalescing. What is posted is
 * recorded for its Wait by interp_work.c. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "runner/interp/ops_internal.h"

/* The team as world ranks, each checked against the job's size. */
static int comm_team(hir_interp *it, const hir_comm *c, int *team, hir_diag *e)
{
    if (c->nteam > 1024)
        return interp_fail(it, e, "team of %d ranks is too large", c->nteam);
    for (int i = 0; i < c->nteam; i++) {
        if (c->team[i] < 0 || c->team[i] >= it->cfg.size)
            return interp_fail(it, e, "team member %" PRId64 " is not a rank of this job (%d ranks)",
                               c->team[i], it->cfg.size);
        team[i] = (int)c->team[i];
    }
    return 0;
}

/* The team position of a rooted kind's root (-1 for the others). */
static int comm_root(hir_interp *it, const hir_comm *c, int *root_index, hir_diag *e)
{
    *root_index = -1;
    if (!hir_comm_type_has_root(c->type))
        return 0;
    if (!c->root)
        return interp_fail(it, e, "%s needs a root", hir_comm_type_name(c->type));
    int64_t root;
    if (interp_eval(it, c->root, &root, e))
        return -1;
    if (it->form2026) {
        /* 2026 syntax: the evaluated root is a position in the team (hostir-2026.md §3.9) */
        if (root < 0 || root >= c->nteam)
            return interp_fail(it, e, "root %" PRId64 " is not a position in the team of %d "
                               "(in a 2026-syntax program a root is a team position)",
                               root, c->nteam);
        *root_index = (int)root;
        return 0;
    }
    *root_index = interp_team_index(c->team, c->nteam, root);
    if (*root_index < 0)
        return interp_fail(it, e, "root %" PRId64 " is not in the team", root);
    return 0;
}

/* The buffers this rank must have for the kind (§2.5), and the sizes the kinds relate. */
static int comm_buffers(hir_interp *it, const hir_comm *c, bool is_root, hir_view *in,
                        hir_view *out, hir_collective *col, hir_diag *e)
{
    int have_in = c->input && interp_bound(it, c->input, in);
    int have_out = c->output && interp_bound(it, c->output, out);
    bool need_in = true, need_out = true;
    switch (c->type) {
    case HIR_COMM_GATHER: need_out = is_root; break;
    case HIR_COMM_SCATTER: need_in = is_root; break;
    case HIR_COMM_REDUCE: need_out = is_root; break;
    case HIR_COMM_BROADCAST: need_in = is_root; need_out = !is_root; break;
    case HIR_COMM_SENDRECV: need_in = is_root; need_out = !is_root || c->nteam == 1; break;
    default: break;
    }
    char tn[32];
    if (need_in && !have_in)
        return interp_fail(it, e, "input %s is not bound",
                           c->input ? interp_tname(c->input, tn, sizeof tn) : "(none printed)");
    if (need_out && !have_out)
        return interp_fail(it, e, "output %s is not bound (no ALLOCATE before it?)",
                           c->output ? interp_tname(c->output, tn, sizeof tn) : "(none printed)");
    col->input = have_in ? in : NULL;
    col->output = have_out ? out : NULL;
    if (!have_in || !have_out)
        return 0;
    int64_t ni = hir_view_numel(in), no = hir_view_numel(out);
    if (c->type == HIR_COMM_ALLGATHER && no != ni * c->nteam)
        return interp_fail(it, e, "output has %" PRId64 " elements, not %d x %" PRId64,
                           no, c->nteam, ni);
    if (c->type == HIR_COMM_ALLTOALL && (no != ni || ni % c->nteam))
        return interp_fail(it, e, "input (%" PRId64 " elements) and output (%" PRId64 ") must have "
                           "equal sizes divisible by the team of %d", ni, no, c->nteam);
    if (c->type == HIR_COMM_REDUCESCATTER && ni != no * c->nteam)
        return interp_fail(it, e, "input has %" PRId64 " elements, not %d x %" PRId64,
                           ni, c->nteam, no);
    return 0;
}

/* The runtime position of t's device-parallel view axis and whether it is split; -1 when t
 * has none or more than one. */
static int device_dim(const hir_tensor *t, bool *split)
{
    hir_shape_axis ax[HIR_MAX_DIMS];
    int n = hir_interp_rt_axes(t, ax), at = -1;
    for (int d = 0; d < n; d++)
        if (ax[d].device) {
            if (at >= 0)
                return -1;
            at = d;
            *split = ax[d].nparts > 1;
        }
    return at;
}

/* An AllToAll between a device-split input and output speaks logical axes: block c of the
 * input along the output's device axis goes to team member c, and the block from member s
 * lands at position s of the output along the input's device axis. The backend exchanges
 * flat equal chunks, so the blocks are packed into a contiguous buffer and unpacked after
 * the exchange (which completes here; the Wait then has nothing to wait for). Returns 1 when
 * the layouts are not both device-split (the flat exchange is that AllToAll), 0 done, -1. */
static int alltoall_blocks(hir_interp *it, const hir_stmt *s, hir_collective *col,
                           hir_diag *e)
{
    const hir_comm *c = s->u.comm;
    bool si = false, so = false;
    int ji = c->input ? device_dim(c->input, &si) : -1;
    int jo = c->output ? device_dim(c->output, &so) : -1;
    if (!col->input || !col->output || ji < 0 || jo < 0 || ji == jo || !(si || so))
        return 1;
    const hir_view *in = col->input, *out = col->output;
    int n = col->team_size;
    if (ji >= in->ndim || jo >= in->ndim || in->ndim != out->ndim || in->shape[jo] % n ||
        out->shape[ji] != in->shape[ji] * n)
        return interp_fail(it, e, "AllToAll: a local input of %d dimensions does not split "
                           "along dimension %d into the output's blocks along %d", in->ndim,
                           jo, ji);
    hir_view blk;
    hir_view_init(&blk, NULL, in->dtype, in->ndim, in->shape);
    blk.shape[jo] /= n;
    hir_view_set_contiguous(&blk);
    int64_t bn = hir_view_numel(&blk), total = bn * n;
    hir_view flat;
    hir_view_init(&flat, NULL, in->dtype, 1, &total);
    rt_buf *sb = interp_buf_new(it, hir_view_bytes(&flat), e), *rb = NULL;
    if (!sb || !(rb = interp_buf_new(it, hir_view_bytes(&flat), e))) {
        if (sb)
            interp_buf_unref(it, sb);
        return -1;
    }
    int rc = 0;
    for (int k = 0; !rc && k < n; k++) {   /* pack: block k of the input along jo */
        hir_view src = *in, dst = blk;
        src.data = interp_elem_ptr(in, jo, k * blk.shape[jo]);
        src.shape[jo] = blk.shape[jo];
        dst.data = (char *)sb->ptr + (size_t)(k * bn) * hir_dtype_size(in->dtype);
        rc = interp_copy_into(it, &dst, &src, e);
    }
    hir_view fs = flat, fr = flat;
    fs.data = sb->ptr;
    fr.data = rb->ptr;
    hir_collective flatcol = *col;
    flatcol.input = &fs;
    flatcol.output = &fr;
    hir_work *w = NULL;
    if (!rc && (it->be->ops->collective(it->be, it->cur, &flatcol, &w, e) ||
                (w && it->be->ops->wait(it->be, it->cur, w, e))))
        rc = interp_backend_fail(it, e);
    for (int k = 0; !rc && k < n; k++) {   /* unpack: from member k to block k along ji */
        hir_view src = blk, dst = *out;
        src.data = (char *)rb->ptr + (size_t)(k * bn) * hir_dtype_size(in->dtype);
        dst.data = interp_elem_ptr(out, ji, k * in->shape[ji]);
        dst.shape[ji] = in->shape[ji];
        rc = interp_copy_into(it, &dst, &src, e);
    }
    interp_buf_unref(it, sb);
    interp_buf_unref(it, rb);
    if (rc)
        return -1;
    return interp_record_work(it, c->number, WORK_SKIPPED, e);
}

int ops_communication(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    const hir_comm *c = s->u.comm;
    int my = interp_team_index(c->team, c->nteam, it->cfg.rank);
    if (c->team_truncated)
        return interp_fail(it, e, "the team was printed truncated (\" ...\"): members unknown");
    if (my < 0)
        return interp_record_work(it, c->number, WORK_SKIPPED, e);
    if (interp_refuse_blocks(it, c->input, "a communication", e) ||
        interp_refuse_blocks(it, c->output, "a communication", e))
        return -1;
    int team[1024];
    hir_collective col = {0};
    if (comm_team(it, c, team, e) || comm_root(it, c, &col.root_index, e))
        return -1;
    col.kind = c->type;
    col.transport = c->backend;
    col.team = team;
    col.team_size = c->nteam;
    col.my_index = my;
    col.op = c->red_op;
    col.stmt_id = (uintptr_t)s;
    col.where = s->loc.src ? (int64_t)s->loc.begin : -1;
    hir_view in, out;
    if (comm_buffers(it, c, col.root_index == my, &in, &out, &col, e))
        return -1;
    if (c->type == HIR_COMM_ALLTOALL) {
        int r = alltoall_blocks(it, s, &col, e);
        if (r <= 0)
            return r;
    }
    hir_work *w = NULL;
    if (it->be->ops->collective(it->be, it->cur, &col, &w, e))
        return interp_backend_fail(it, e);
    if (interp_record_work(it, c->number, w ? w : WORK_SKIPPED, e))
        return -1;
    if (w)
        return interp_held_keep(it, c->number, col.input ? c->input : NULL,
                         col.output ? c->output : NULL, e);
    return 0;
}

static int make_p2p(hir_interp *it, const hir_comm *c, hir_p2p *p, hir_diag *e)
{
    memset(p, 0, sizeof *p);
    int64_t peer;
    if (interp_eval(it, c->peer, &peer, e))
        return -1;
    if (peer < 0 || peer >= it->cfg.size)
        return interp_fail(it, e, "peer %" PRId64 " is not a rank of this job (%d ranks)", peer,
                           it->cfg.size);
    p->is_send = c->is_send;
    p->peer = (int)peer;
    p->transport = c->backend;
    p->stmt_id = (uintptr_t)c;
    return interp_get(it, c->buffer, &p->buf, e);
}

int ops_p2p(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    hir_p2p p;
    if (make_p2p(it, s->u.comm, &p, e))
        return -1;
    hir_work *w = NULL;
    if (it->be->ops->p2p_post(it->be, it->cur, &p, &w, e))
        return interp_backend_fail(it, e);
    (p.is_send ? it->p2p_sent : it->p2p_recvd)[p.peer]++;
    if (!it->in_group)
        return interp_record_work(it, s->u.comm->number, w, e);
    if (w)
        it->be->ops->work_release(it->be, w);
    return 0;
}

int ops_share(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    int n = s->u.share.n;
    hir_p2p *list = calloc((size_t)(n ? n : 1), sizeof *list);
    if (!list)
        return interp_fail(it, e, "out of host memory");
    int rc = 0;
    for (int i = 0; i < n && !rc; i++)
        rc = make_p2p(it, s->u.share.comms[i], &list[i], e);
    if (!rc && it->be->ops->share_handles(it->be, list, n, e))
        rc = interp_backend_fail(it, e);
    free(list);
    return rc;
}

int ops_wait(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    uint64_t k = (uint64_t)s->u.wait.number;
    hir_work *w = hir_map_get(&it->works, k);
    if (!w)
        return interp_fail(it, e, "nothing was posted for expression %" PRId64
                           " on this rank (or it was already waited for)", s->u.wait.number);
    hir_map_del(&it->works, k);
    if (w == WORK_SKIPPED)
        return 0;
    if (it->be->ops->wait(it->be, it->cur, w, e))
        return interp_backend_fail(it, e);
    interp_held_release(it, s->u.wait.number);
    return 0;
}

int ops_start_coal(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    (void)s;
    if (it->in_group)
        return interp_fail(it, e, "StartCoalescing inside an open coalescing group");
    if (it->be->ops->group_begin(it->be, e))
        return interp_backend_fail(it, e);
    it->in_group = 1;
    return 0;
}

/* EndCoalescing n: close the group and record its work under n; one read without its number
 * (nvFuser before 2025-06-03) cannot be named by a Wait, so the stream waits for it now */
int ops_end_coal(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    hir_work *w = NULL;
    if (!it->in_group)
        return interp_fail(it, e, "EndCoalescing without StartCoalescing");
    it->in_group = 0;
    if (it->be->ops->group_end(it->be, it->cur, &w, e))
        return interp_backend_fail(it, e);
    if (s->u.comm->number_unprinted)
        return w && it->be->ops->wait(it->be, it->cur, w, e) ? interp_backend_fail(it, e) : 0;
    return interp_record_work(it, s->u.comm->number, w ? w : WORK_SKIPPED, e);
}
