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

int ops_communication(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    const hir_comm *c = s->u.comm;
    int my = interp_team_index(c->team, c->nteam, it->cfg.rank);
    if (c->team_truncated)
        return interp_fail(it, e, "the team was printed truncated (\" ...\"): members unknown");
    if (my < 0)
        return interp_record_work(it, c->number, WORK_SKIPPED, e);
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
    hir_view in, out;
    if (comm_buffers(it, c, col.root_index == my, &in, &out, &col, e))
        return -1;
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
