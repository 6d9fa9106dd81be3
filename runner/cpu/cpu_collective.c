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

/* One collective on its way to MPI: what the common checks found (the transfer dtype xt and
 * its MPI type, the op, the team's communicator), and what a kind's handler posts (r, with
 * the MPI status in rc and, for SendRecv, the peer and direction). */
typedef struct coll_post {
    hir_work *w;
    const hir_collective *c;
    const char *name;
    const hir_view *in, *out;
    int ts, me, root, is_root;
    hir_dtype xt;
    MPI_Datatype mt;
    MPI_Op op;
    MPI_Comm comm;
    MPI_Request r;
    int rc, peer, is_recv;
    hir_cpu_comm *cc;
} coll_post;

/* the team's agreement on the collective, after this rank's own checks, before MPI sees it */
static int coll_agree(const coll_post *p, hir_diag *e);

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
    if (coll_agree(p, e))
        return -1;
    p->rc = MPI_Iallgather(sbuf, (int)n, p->mt, rbuf, (int)n, p->mt, p->comm, &p->r);
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
    if (coll_agree(p, e))
        return -1;
    p->rc = MPI_Ireduce_scatter_block(sbuf, rbuf, (int)n, p->mt, p->op, p->comm, &p->r);
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
    if (coll_agree(p, e))
        return -1;
    p->rc = MPI_Iallreduce(MPI_IN_PLACE, rbuf, (int)n, p->mt, p->op, p->comm, &p->r);
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
    if (coll_agree(p, e))
        return -1;
    p->rc = MPI_Ibcast(rbuf, (int)n, p->mt, p->root, p->comm, &p->r);
    return 0;
}

static int coll_gather(coll_post *p, hir_diag *e)
{
    const char *name = p->name;
    const hir_view *in = p->in, *out = p->out;
    int is_root = p->is_root;
    void *sbuf = NULL, *rbuf = NULL;
    if (need(in, "input", name, e) || (is_root && need(out, "output on the root", name, e)))
        return -1;
    int64_t n = hir_view_numel(in);
    if (is_root && hir_view_numel(out) != n * p->ts)
        return hir_fail(e, "%s: root output has %lld elements, expected %d x %lld",
                             name, (long long)hir_view_numel(out), p->ts, (long long)n);
    if (cpu_mpi_count_ok(n * p->ts, name, e) || cpu_work_stage(p->w, in, p->xt, 1, 0, &sbuf, e) ||
        (is_root && cpu_work_stage(p->w, out, p->xt, 0, 1, &rbuf, e)))
        return -1;
    if (coll_agree(p, e))
        return -1;
    p->rc = MPI_Igather(sbuf, (int)n, p->mt, rbuf, (int)n, p->mt, p->root, p->comm, &p->r);
    return 0;
}

static int coll_scatter(coll_post *p, hir_diag *e)
{
    const char *name = p->name;
    const hir_view *in = p->in, *out = p->out;
    int is_root = p->is_root;
    void *sbuf = NULL, *rbuf = NULL;
    if (need(out, "output", name, e) || (is_root && need(in, "input on the root", name, e)))
        return -1;
    int64_t n = hir_view_numel(out);
    if (is_root && hir_view_numel(in) != n * p->ts)
        return hir_fail(e, "%s: root input has %lld elements, expected %d x %lld",
                             name, (long long)hir_view_numel(in), p->ts, (long long)n);
    if (cpu_mpi_count_ok(n * p->ts, name, e) || (is_root && cpu_work_stage(p->w, in, p->xt, 1, 0, &sbuf, e)) ||
        cpu_work_stage(p->w, out, p->xt, 0, 1, &rbuf, e))
        return -1;
    if (coll_agree(p, e))
        return -1;
    p->rc = MPI_Iscatter(sbuf, (int)n, p->mt, rbuf, (int)n, p->mt, p->root, p->comm, &p->r);
    return 0;
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
    if (coll_agree(p, e))
        return -1;
    p->rc = MPI_Ireduce(sbuf, rbuf, (int)n, p->mt, p->op, p->root, p->comm, &p->r);
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
        if (coll_agree(p, e))
            return -1;
        p->rc = MPI_Isend(sbuf, (int)n, p->mt, 1 - root, HIR_SENDRECV_TAG, p->comm, &p->r);
    } else {
        p->peer = p->c->team[root];
        p->is_recv = 1;
        if (need(p->out, "output on the receiver", name, e))
            return -1;
        n = hir_view_numel(p->out);
        if (cpu_mpi_count_ok(n, name, e) || cpu_work_stage(p->w, p->out, p->xt, 0, 1, &rbuf, e))
            return -1;
        if (coll_agree(p, e))
            return -1;
        p->rc = MPI_Irecv(rbuf, (int)n, p->mt, root, HIR_SENDRECV_TAG, p->comm, &p->r);
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
    if (coll_agree(p, e))
        return -1;
    p->rc = MPI_Ialltoall(sbuf, (int)(n / ts), p->mt, rbuf, (int)(n / ts), p->mt, p->comm,
                          &p->r);
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
 * the team's communicator, on every execution (the reference pays for the plainest check).
 * MPI itself checks none of it: a Broadcast whose root differs between ranks completes and
 * every rank keeps its own data. Every member compares every signature with member 0's, so
 * all of them stop with the same message. */
static int coll_agree(const coll_post *p, hir_diag *e)
{
    hir_cpu_comm *cc = p->cc;
    int64_t mine[HIR_SIG_N], stack[8 * HIR_SIG_N], *all = stack;
    hir_coll_signature(p->c, mine);
    if (p->ts > 8 && !(all = malloc(sizeof *all * HIR_SIG_N * (size_t)p->ts)))
        return hir_fail(e, "%s: out of host memory", p->name);
    MPI_Request r;
    int rc = MPI_Iallgather(mine, HIR_SIG_N, MPI_INT64_T, all, HIR_SIG_N, MPI_INT64_T, p->comm,
                            &r);
    if (rc != MPI_SUCCESS)
        rc = hir_mpi_error(e, "MPI_Iallgather", rc);
    else
        rc = hir_mpi_poll(&r, NULL, 1, cc->timeout, "agreeing on a collective", e);
    if (!rc)
        rc = hir_coll_sig_compare(p->c, all, e);
    if (all != stack)
        free(all);
    return rc;
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
                   .root = c->root_index, .r = MPI_REQUEST_NULL, .rc = MPI_SUCCESS, .peer = -1,
                   .cc = cc};
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
    if (hir_mpi_team_comm(&cc->teams, cc->world, c->team, ts, cc->timeout, &p.comm, e))
        return -1;
    coll_fn post = (unsigned)c->kind < HIR_COMM_COUNT ? coll_handlers[c->kind] : NULL;
    if (!post)
        return hir_fail(e, "collective kind %d unknown", (int)c->kind);
    if (post(&p, e))
        return -1;
    if (p.rc != MPI_SUCCESS)
        return hir_mpi_error(e, name, p.rc);
    return cpu_work_add_req(w, p.r, p.peer, p.is_recv, e);
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
