/* cpu_collective.c — the collectives of the CPU reference backend over MPI (hostir-format.md
 * §2.5), on lazily created per-team communicators: the common checks, one handler per kind,
 * and the post of the work item that a wait completes (cpu_comm.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/backend/agree.h"
#include "runner/backend/convert.h"
#include "runner/cpu/cpu_comm_internal.h"
#include "support/support.h"

static int need(const hir_view *v, const char *what, const char *coll, hir_diag *e)
{
    if (!v)
        return hir_fail(e, "%s: missing %s", coll, what);
    return cpu_check_view(v, coll, e);
}

/* The MPI call of one collective, whole: what issue() posts once the team has agreed, after
 * the statement's own views are gone (the buffers are the tensors', held until the Wait, or
 * the work's staging buffers). */
typedef struct coll_args {
    hir_comm_type kind;
    void *sbuf, *rbuf;
    int count, root, is_root, ts;
    MPI_Datatype mt;
    MPI_Op op;
    MPI_Comm comm;
} coll_args;

/* One collective on its way to MPI: what the common checks found (the transfer dtype xt and
 * its MPI type, the op, the team's communicators), and what a kind's handler fills in (the
 * call in a, and, for SendRecv, the peer and direction). */
typedef struct coll_post {
    hir_work *w;
    const hir_collective *c;
    const char *name;
    const hir_view *in, *out;
    int ts, me, root, is_root;
    hir_dtype xt;
    MPI_Datatype mt;
    MPI_Op op;
    MPI_Comm comm, agree;
    coll_args a;
    int peer, is_recv;
    hir_cpu_comm *cc;
} coll_post;

static int coll_allgather(coll_post *p, hir_diag *e)
{
    const char *name = p->name;
    const hir_view *in = p->in, *out = p->out;
    void *sbuf = NULL, *rbuf = NULL;
    if (need(in, "input", name, e) || need(out, "output", name, e))
        return -1;
    int64_t n = hir_view_numel(in);
    if (hir_view_numel(out) != n * p->ts)
        return hir_fail(e, "%s: output has %lld elements, expected %d x %lld", name,
                             (long long)hir_view_numel(out), p->ts, (long long)n);
    if (cpu_mpi_count_ok(n, name, e) || cpu_work_stage(p->w, in, p->xt, 1, 0, &sbuf, e) ||
        cpu_work_stage(p->w, out, p->xt, 0, 1, &rbuf, e))
        return -1;
    p->a.sbuf = sbuf;
    p->a.rbuf = rbuf;
    p->a.count = (int)n;
    return 0;
}

static int coll_reducescatter(coll_post *p, hir_diag *e)
{
    const char *name = p->name;
    const hir_view *in = p->in, *out = p->out;
    void *sbuf = NULL, *rbuf = NULL;
    if (need(in, "input", name, e) || need(out, "output", name, e))
        return -1;
    int64_t n = hir_view_numel(out);
    if (hir_view_numel(in) != n * p->ts)
        return hir_fail(e, "%s: input has %lld elements, expected %d x %lld", name,
                             (long long)hir_view_numel(in), p->ts, (long long)n);
    if (cpu_mpi_count_ok(n * p->ts, name, e) || cpu_work_stage(p->w, in, p->xt, 1, 0, &sbuf, e) ||
        cpu_work_stage(p->w, out, p->xt, 0, 1, &rbuf, e))
        return -1;
    p->a.sbuf = sbuf;
    p->a.rbuf = rbuf;
    p->a.count = (int)n;
    return 0;
}

static int coll_allreduce(coll_post *p, hir_diag *e)
{
    const char *name = p->name;
    const hir_view *in = p->in, *out = p->out;
    void *rbuf = NULL;
    if (need(in, "input", name, e) || need(out, "output", name, e))
        return -1;
    int64_t n = hir_view_numel(out);
    if (hir_view_numel(in) != n)
        return hir_fail(e, "%s: input has %lld elements, output %lld", name,
                             (long long)hir_view_numel(in), (long long)n);
    /* the input travels in the output's staging buffer (copy, then in-place allreduce) */
    if (cpu_mpi_count_ok(n, name, e) || cpu_work_stage(p->w, out, p->xt, 0, 1, &rbuf, e))
        return -1;
    hir_view bv;
    hir_view_init(&bv, rbuf, p->xt, out->ndim, out->shape);
    if (rbuf != in->data && cpu_work_flat_copy(p->w, &bv, in, e))
        return -1;
    p->a.sbuf = MPI_IN_PLACE;
    p->a.rbuf = rbuf;
    p->a.count = (int)n;
    return 0;
}

static int coll_broadcast(coll_post *p, hir_diag *e)
{
    const char *name = p->name;
    const hir_view *in = p->in, *out = p->out;
    void *rbuf = NULL;
    const hir_view *buf = out ? out : in;
    if (p->is_root && need(in, "input on the root", name, e))
        return -1;
    if (!p->is_root && need(out, "output", name, e))
        return -1;
    int64_t n = hir_view_numel(buf);
    if (cpu_mpi_count_ok(n, name, e))
        return -1;
    if (p->is_root) {
        if (out && cpu_work_flat_copy(p->w, out, in, e))
            return -1;
        if (cpu_work_stage(p->w, buf, p->xt, 1, 0, &rbuf, e))
            return -1;
    } else if (cpu_work_stage(p->w, buf, p->xt, 0, 1, &rbuf, e)) {
        return -1;
    }
    p->a.sbuf = NULL;
    p->a.rbuf = rbuf;
    p->a.count = (int)n;
    return 0;
}

/* Gather and Scatter, mirror images: every member has its part (n elements), the root also
 * the whole (team x n); the part is a Gather's input and a Scatter's output. The input is
 * staged to send and the output to receive where this member has them. */
static int coll_rooted_parts(coll_post *p, int part_is_in, hir_diag *e)
{
    const char *name = p->name;
    int is_root = p->is_root;
    const hir_view *part = part_is_in ? p->in : p->out, *whole = part_is_in ? p->out : p->in;
    const char *part_what = part_is_in ? "input" : "output";
    const char *whole_what = part_is_in ? "output" : "input";
    void *sbuf = NULL, *rbuf = NULL;
    if (need(part, part_what, name, e) ||
        (is_root && need(whole, part_is_in ? "output on the root" : "input on the root", name, e)))
        return -1;
    int64_t n = hir_view_numel(part);
    if (is_root && hir_view_numel(whole) != n * p->ts)
        return hir_fail(e, "%s: root %s has %lld elements, expected %d x %lld", name, whole_what,
                        (long long)hir_view_numel(whole), p->ts, (long long)n);
    if (cpu_mpi_count_ok(n * p->ts, name, e) ||
        ((part_is_in || is_root) && cpu_work_stage(p->w, p->in, p->xt, 1, 0, &sbuf, e)) ||
        ((!part_is_in || is_root) && cpu_work_stage(p->w, p->out, p->xt, 0, 1, &rbuf, e)))
        return -1;
    p->a.sbuf = sbuf;
    p->a.rbuf = rbuf;
    p->a.count = (int)n;
    return 0;
}

static int coll_gather(coll_post *p, hir_diag *e)
{
    return coll_rooted_parts(p, 1, e);
}

static int coll_scatter(coll_post *p, hir_diag *e)
{
    return coll_rooted_parts(p, 0, e);
}

static int coll_reduce(coll_post *p, hir_diag *e)
{
    const char *name = p->name;
    const hir_view *in = p->in, *out = p->out;
    int is_root = p->is_root;
    void *sbuf = NULL, *rbuf = NULL;
    if (need(in, "input", name, e) || (is_root && need(out, "output on the root", name, e)))
        return -1;
    int64_t n = hir_view_numel(in);
    if (is_root && hir_view_numel(out) != n)
        return hir_fail(e, "%s: root output has %lld elements, input %lld", name,
                             (long long)hir_view_numel(out), (long long)n);
    /* reducing the root's input into its output = copy then reduce in place */
    if (cpu_mpi_count_ok(n, name, e) || cpu_work_stage(p->w, in, p->xt, 1, 0, &sbuf, e) ||
        (is_root && cpu_work_stage(p->w, out, p->xt, 0, 1, &rbuf, e)))
        return -1;
    if (is_root && sbuf == rbuf)
        sbuf = MPI_IN_PLACE;
    p->a.sbuf = sbuf;
    p->a.rbuf = rbuf;
    p->a.count = (int)n;
    return 0;
}

static int coll_sendrecv(coll_post *p, hir_diag *e)
{
    const char *name = p->name;
    int root = p->root;
    void *sbuf = NULL, *rbuf = NULL;
    int64_t n;
    if (p->ts != 2)
        return hir_fail(e, "%s: team of %d, expected 1 or 2", name, p->ts);
    p->peer = p->c->team[1 - root];
    if (p->is_root) {
        if (need(p->in, "input on the sender", name, e))
            return -1;
        n = hir_view_numel(p->in);
        if (cpu_mpi_count_ok(n, name, e) || cpu_work_stage(p->w, p->in, p->xt, 1, 0, &sbuf, e))
            return -1;
        p->a.sbuf = sbuf;
        p->a.rbuf = NULL;
        p->a.count = (int)n;
    } else {
        p->peer = p->c->team[root];
        p->is_recv = 1;
        if (need(p->out, "output on the receiver", name, e))
            return -1;
        n = hir_view_numel(p->out);
        if (cpu_mpi_count_ok(n, name, e) || cpu_work_stage(p->w, p->out, p->xt, 0, 1, &rbuf, e))
            return -1;
        p->a.sbuf = NULL;
        p->a.rbuf = rbuf;
        p->a.count = (int)n;
    }
    return 0;
}

static int coll_alltoall(coll_post *p, hir_diag *e)
{
    /* part j of the flat input goes to member j; part i of the output comes from member i */
    const char *name = p->name;
    const hir_view *in = p->in, *out = p->out;
    int ts = p->ts;
    void *sbuf = NULL, *rbuf = NULL;
    if (need(in, "input", name, e) || need(out, "output", name, e))
        return -1;
    int64_t n = hir_view_numel(in);
    if (hir_view_numel(out) != n || n % ts)
        return hir_fail(e, "%s: input (%lld elements) and output (%lld) must have equal "
                             "sizes divisible by the team of %d", name, (long long)n,
                             (long long)hir_view_numel(out), ts);
    if (cpu_mpi_count_ok(n, name, e) || cpu_work_stage(p->w, in, p->xt, 1, 0, &sbuf, e) ||
        cpu_work_stage(p->w, out, p->xt, 0, 1, &rbuf, e))
        return -1;
    p->a.sbuf = sbuf;
    p->a.rbuf = rbuf;
    p->a.count = (int)(n / ts);
    return 0;
}

/* The handler of each collective kind (dialect/defs/comm.def); a kind without one is refused. */
typedef int (*coll_fn)(coll_post *p, hir_diag *e);
static const coll_fn coll_handlers[HIR_COMM_COUNT] = {
    [HIR_COMM_GATHER] = coll_gather,
    [HIR_COMM_ALLGATHER] = coll_allgather,
    [HIR_COMM_SCATTER] = coll_scatter,
    [HIR_COMM_REDUCE] = coll_reduce,
    [HIR_COMM_ALLREDUCE] = coll_allreduce,
    [HIR_COMM_REDUCESCATTER] = coll_reducescatter,
    [HIR_COMM_BROADCAST] = coll_broadcast,
    [HIR_COMM_SENDRECV] = coll_sendrecv,
    [HIR_COMM_ALLTOALL] = coll_alltoall,
};

/* ---------------------------------------------------------------- agreement across the team */

/* Before a collective is posted (after this rank's own checks, so a refusal of its buffers
 * stays local and nothing reaches MPI), its team agrees on its signature (agree.h: kind, team,
 * root, element count, dtype, statement): one MPI_Iallgather of HIR_SIG_N int64 per member on
 * the team's agreement communicator (a duplicate of the team's, so the exchanges keep their
 * own order), on every execution (the reference pays for the plainest check). MPI itself
 * checks none of it: a Broadcast whose root differs between ranks completes and every rank
 * keeps its own data. Every member compares every signature with member 0's, so all of them
 * stop with the same message.
 *
 * The exchange is started at the post and never waited for there: the collective itself is
 * posted (issue) when the exchange has completed, which the rank's next waits drive
 * (cpu_comm.c). So no rank blocks at a post, and overlapping teams whose collectives are
 * posted in different orders on different ranks (team (0 1) then (1 2) on one rank, the other
 * order on another) complete, as MPI's nonblocking collectives do. */
typedef struct coll_pending {
    cpu_pending base;
    coll_args a;
    int team_size;
    int *team;                      /* a copy: the statement's array is gone by the issue */
    uintptr_t stmt_id;
    int64_t mine[HIR_SIG_N];
    int64_t *all;                   /* HIR_SIG_N per member, filled by the exchange */
} coll_pending;

static int coll_mpi(const coll_args *a, MPI_Request *r)
{
    switch (a->kind) {
    case HIR_COMM_ALLGATHER:
        return MPI_Iallgather(a->sbuf, a->count, a->mt, a->rbuf, a->count, a->mt, a->comm, r);
    case HIR_COMM_REDUCESCATTER:
        return MPI_Ireduce_scatter_block(a->sbuf, a->rbuf, a->count, a->mt, a->op, a->comm, r);
    case HIR_COMM_ALLREDUCE:
        return MPI_Iallreduce(a->sbuf, a->rbuf, a->count, a->mt, a->op, a->comm, r);
    case HIR_COMM_BROADCAST:
        return MPI_Ibcast(a->rbuf, a->count, a->mt, a->root, a->comm, r);
    case HIR_COMM_GATHER:
        return MPI_Igather(a->sbuf, a->count, a->mt, a->rbuf, a->count, a->mt, a->root, a->comm,
                           r);
    case HIR_COMM_SCATTER:
        return MPI_Iscatter(a->sbuf, a->count, a->mt, a->rbuf, a->count, a->mt, a->root,
                            a->comm, r);
    case HIR_COMM_REDUCE:
        return MPI_Ireduce(a->sbuf, a->rbuf, a->count, a->mt, a->op, a->root, a->comm, r);
    case HIR_COMM_SENDRECV:
        return a->is_root
                   ? MPI_Isend(a->sbuf, a->count, a->mt, 1 - a->root, HIR_SENDRECV_TAG, a->comm, r)
                   : MPI_Irecv(a->rbuf, a->count, a->mt, a->root, HIR_SENDRECV_TAG, a->comm, r);
    case HIR_COMM_ALLTOALL:
        return MPI_Ialltoall(a->sbuf, a->count, a->mt, a->rbuf, a->count, a->mt, a->comm, r);
    default:
        return MPI_ERR_OTHER;
    }
}

/* the exchange has completed: compare, then post the collective on the team's communicator */
static int coll_issue(cpu_pending *base, hir_work *w, hir_diag *e)
{
    coll_pending *q = (coll_pending *)base;
    hir_collective c = {.team = q->team, .team_size = q->team_size};
    int rc = hir_coll_sig_compare(&c, q->all, e);
    MPI_Request r = MPI_REQUEST_NULL;
    if (!rc) {
        int mrc = coll_mpi(&q->a, &r);
        rc = mrc != MPI_SUCCESS ? hir_mpi_error(e, hir_comm_type_name(q->a.kind), mrc) : 0;
    }
    if (rc) {
        /* the message belongs to the collective's statement, not to the wait that found it */
        if (e && e->last && e->last->sev == HIR_ERROR && !e->last->loc.src)
            e->last->at = (const void *)q->stmt_id;
        return -1;
    }
    int peer = q->a.kind == HIR_COMM_SENDRECV ? q->team[q->a.is_root ? 1 - q->a.root : q->a.root]
                                               : -1;
    return cpu_work_add_req(w, r, peer, q->a.kind == HIR_COMM_SENDRECV && !q->a.is_root, e);
}

static void coll_drop(cpu_pending *base)
{
    coll_pending *q = (coll_pending *)base;
    free(q->all);
    free(q->team);
    free(q);
}

static int coll_defer(coll_post *p, hir_diag *e)
{
    hir_cpu_comm *cc = p->cc;
    coll_pending *q = calloc(1, sizeof *q);
    if (q) {
        q->team = malloc(sizeof *q->team * (size_t)p->ts);
        q->all = malloc(sizeof *q->all * HIR_SIG_N * (size_t)p->ts);
    }
    if (!q || !q->team || !q->all) {
        if (q) {
            free(q->team);
            free(q->all);
        }
        free(q);
        return hir_fail(e, "%s: out of host memory", p->name);
    }
    memcpy(q->team, p->c->team, sizeof *q->team * (size_t)p->ts);
    q->team_size = p->ts;
    q->stmt_id = p->c->stmt_id;
    q->a = p->a;
    q->a.kind = p->c->kind;
    q->a.root = p->root;
    q->a.is_root = p->is_root;
    q->a.ts = p->ts;
    q->a.mt = p->mt;
    q->a.op = p->op;
    q->a.comm = p->comm;
    q->base.comm = p->comm;
    q->base.agree = MPI_REQUEST_NULL;
    q->base.issue = coll_issue;
    q->base.drop = coll_drop;
    hir_coll_signature(p->c, q->mine);
    int rc = MPI_Iallgather(q->mine, HIR_SIG_N, MPI_INT64_T, q->all, HIR_SIG_N, MPI_INT64_T,
                            p->agree, &q->base.agree);
    if (rc != MPI_SUCCESS) {
        q->base.agree = MPI_REQUEST_NULL;
        coll_drop(&q->base);
        return hir_mpi_error(e, "MPI_Iallgather", rc);
    }
    return cpu_work_defer(cc, p->w, &q->base, e);
}

/* The checks every kind shares: root and team index in the team, a buffer, a dtype MPI can
 * carry (bf16/f16 reductions as f32), a known reduction op. Fills p's common fields. */
static int coll_check(hir_cpu_comm *cc, const hir_collective *c, coll_post *p, hir_diag *e)
{
    const char *name = p->name;
    int ts = p->ts, me = p->me, root = p->root;
    int reducing = hir_comm_type_reduces(c->kind);
    int rooted = hir_comm_type_has_root(c->kind);
    if (rooted && (root < 0 || root >= ts))
        return hir_fail(e, "%s: root index %d outside a team of %d", name, root, ts);
    if (me < 0 || me >= ts)
        return hir_fail(e, "%s: this rank's team index %d outside a team of %d", name, me, ts);
    const hir_view *any = p->out ? p->out : p->in;
    if (!any)
        return hir_fail(e, "%s: neither input nor output given", name);
    hir_dtype dt = any->dtype;
    p->xt = reducing && (dt == HIR_DT_HALF || dt == HIR_DT_BFLOAT) ? HIR_DT_FLOAT : dt;
    p->mt = cpu_mpi_type(p->xt);
    if (p->mt == MPI_DATATYPE_NULL)
        return hir_fail(e, "%s: dtype %s cannot be communicated", name, hir_dtype_name(dt));
    p->op = reducing ? cpu_mpi_op(cc, c->op, p->xt) : MPI_OP_NULL;
    if (reducing && p->op == MPI_OP_NULL)
        return hir_fail(e, "%s: reduction op %d unknown", name, (int)c->op);
    return 0;
}

static int post_collective(hir_cpu_comm *cc, hir_work *w, const hir_collective *c, hir_diag *e)
{
    coll_post p = {.w = w, .c = c, .name = hir_comm_type_name(c->kind), .in = c->input,
                   .out = c->output, .ts = c->team_size, .me = c->my_index,
                   .root = c->root_index, .peer = -1, .cc = cc};
    const char *name = p.name;
    const hir_view *in = p.in, *out = p.out;
    int ts = p.ts;
    p.is_root = p.me == p.root;
    if (coll_check(cc, c, &p, e))
        return -1;

    /* a team of one moves nothing: every kind degenerates to output = input */
    if (ts == 1) {
        if (in && out)
            return hir_view_numel(in) == hir_view_numel(out)
                       ? cpu_work_flat_copy(w, out, in, e)
                       : hir_fail(e, "%s: team of one with %lld input and %lld output elements",
                                       name, (long long)hir_view_numel(in),
                                       (long long)hir_view_numel(out));
        return 0;
    }
    if (!cc->have_mpi)
        return hir_fail(e, "%s: a team of %d needs the MPI bootstrap (no hir_boot given)",
                             name, ts);
    if (hir_mpi_team_comms(&cc->teams, cc->world, c->team, ts, cc->timeout, &p.comm, &p.agree,
                           e))
        return -1;
    coll_fn post = (unsigned)c->kind < HIR_COMM_COUNT ? coll_handlers[c->kind] : NULL;
    if (!post)
        return hir_fail(e, "collective kind %d unknown", (int)c->kind);
    if (post(&p, e))
        return -1;
    return coll_defer(&p, e);
}

int cpu_team_prepare(hir_backend *be, const int *team, int n, hir_diag *e)
{
    hir_cpu_comm *cc = cpu_of(be)->comm;
    MPI_Comm comm, agree;
    if (!cc->have_mpi || n < 2)
        return 0;
    return hir_mpi_team_comms(&cc->teams, cc->world, team, n, cc->timeout, &comm, &agree, e);
}

int cpu_collective(hir_backend *be, hir_stream *s, const hir_collective *c, hir_work **wp,
                   hir_diag *e)
{
    hir_cpu_comm *cc = cpu_of(be)->comm;
    *wp = NULL;
    char what[160];
    int k = snprintf(what, sizeof what, "%s (%s) over team (", hir_comm_type_name(c->kind),
                     hir_backend_kind_name(c->transport));
    for (int i = 0; i < c->team_size && k < (int)sizeof what - 16; i++)
        k += snprintf(what + k, sizeof what - (size_t)k, "%s%d", i ? "," : "", c->team[i]);
    snprintf(what + k, sizeof what - (size_t)k, ")");
    hir_work *w = cpu_work_new(what);
    if (!w)
        return hir_fail(e, "%s: out of memory", what);
    if (post_collective(cc, w, c, e)) {
        cpu_work_release(be, w);
        return -1;
    }
    *wp = w;
    return 0;
}
