/* stream_parallel_rs.c — the GEMM + reduce-scatter half of --stream-parallel (the row-parallel
 * linear): a stream-parallel partial GEMM followed by the sum of its device axis, scattered
 * over the GEMM's stream axis, becomes one pipeline over the row chunks.
 *
 * Needs: at top level, a linear or matmul whose output P is [DID{d}, stream{d}, rows, n, rK]
 *   and whose first input A is [DID{d} or b{1}, {d}, rows, k] (the chunk axis), immediately followed
 *   by `O = reduction(P, op = add, ...)` with O [r{d}, DID{d}, rows, n] (hir-gen linear-rs /
 *   matmul-rs make exactly this; it is the pre-pass form of nvFuser's 2026 mm-rs print).
 * Changes: each such pair becomes ALLOCATEs, GetCurrentStream, the synchronisation FOR and the
 *   main FOR over P's stream axis:
 *   - NCCL (nvFuser's form, printed as nvFuser prints it): per chunk i the partial GEMM on
 *     slices, then `Communication (type=Reduce, root=streamIdx)` of the chunk onto its owner's
 *     output and its Wait;
 *   - CUDA: an accumulating ring with the all-gather ring's semaphore discipline (one sender
 *     and one receiver per rank and step, both ends at the same step, a predicate equal on
 *     every rank). Step i of rank r computes the partial of chunk c = (r + i + 1) % d; step 0
 *     starts c's running sum with it; step i > 0 makes its stream wait for step i - 1's,
 *     sends the sum of chunk (r + i) % d to rank r - 1, receives c's sum from rank r + 1 and
 *     adds its partial. The last step is the rank's own chunk; after the loop it goes into the
 *     output. Sums are kept and sent in float buffers [d, DID{d}, rows, n] and rounded once
 *     (fp32 accumulation for bf16/fp16).
 *   After --convert-to-communication (the GEMM, then ALLOCATE(O), a ReduceScatter or Allreduce
 *   of P into O and its Wait) the GEMM alone is pipelined, the collective left after the loop.
 * Leaves everything else to the all-gather lowering of stream_parallel.c, which calls this first.
 * hir_rs_backend (--backend) rewrites either lowered form into the other (end of this file).
 */
#include "passes/ir_util.h"
#include "passes/passes.h"
#include "passes/stream_parallel_rs.h"

#include <stdio.h>
#include <string.h>

static bool is_dev(const hir_iterdomain *id) { return hir_ptype_is_device(id->ptype); }

static bool extent_is(const hir_iterdomain *id, int64_t v)
{
    int64_t x;
    return id->extent && hir_scalar_const(id->extent, &x) && x == v;
}

/* P [DID{d}, stream{d}, ...] and A [DID{d} or b{1}, {d}, ...] on a 1-d mesh of d devices */
static bool gemm_axes(const hir_tensor *P, const hir_tensor *A, int64_t d)
{
    hir_iterdomain *const *pi = P->shape.ids, *const *ai = A->shape.ids;
    if (!is_dev(pi[0]) || !hir_ptype_is_stream(pi[1]->ptype) || pi[1]->itype != HIR_IT_ITER ||
        !extent_is(pi[1], d))
        return false;
    /* A's leading axis: the device axis of the K slices, or a size-1 axis standing for it (the
     * GELU output of a tensor-parallel MLP block, each rank's slice of the feed-forward axis) */
    if (!(is_dev(ai[0]) || (ai[0]->itype == HIR_IT_BROADCAST && extent_is(ai[0], 1))) ||
        ai[1]->itype != HIR_IT_ITER || !extent_is(ai[1], d))
        return false;
    return P->mesh && P->mesh->ndims == 1 && (int64_t)P->mesh->ndevices == d;
}

/* O [r{d}, DID{d}, rest without device or stream axes]; `whole`: O [r{d}, {d}, rest] (the
 * sum on every rank, an Allreduce) is accepted too */
static bool summed(const hir_tensor *O, int64_t d, bool whole)
{
    if (!O || O->shape.naxes != O->nloop || O->nloop < 3)
        return false;
    hir_iterdomain *const *oi = O->shape.ids;
    if (oi[0]->itype != HIR_IT_REDUCTION || !extent_is(oi[0], d) || !extent_is(oi[1], d) ||
        hir_ptype_is_stream(oi[1]->ptype) || !(is_dev(oi[1]) || whole))
        return false;
    for (int k = 2; k < O->nloop; k++)
        if (is_dev(oi[k]) || hir_ptype_is_stream(oi[k]->ptype))
            return false;
    return true;
}

/* g: a linear or matmul whose output P and first input A have the form of the header; *d gets
 * the number of ranks */
static bool gemm_form(const hir_stmt *g, int64_t *d)
{
    if ((g->op != HIR_OP_LINEAR && g->op != HIR_OP_MATMUL) || !g->out || !g->nin)
        return false;
    const hir_tensor *P = g->out, *A = hir_value_tensor(g->in[0]);
    if (!A || P->shape.naxes != P->nloop || A->shape.naxes != A->nloop)
        return false;   /* split axes: not this form */
    if (P->nloop < 3 || A->nloop < 3)
        return false;
    if (!P->shape.ids[0]->extent || !hir_scalar_const(P->shape.ids[0]->extent, d) || *d < 1)
        return false;
    return gemm_axes(P, A, *d);
}

/* The pair (GEMM at i, reduction at i + 1) in the form of the header. */
static bool rs_pair(const hir_block *b, int i)
{
    if (i + 1 >= hir_block_size(b))
        return false;
    const hir_stmt *g = hir_block_at(b, i), *r = hir_block_at(b, i + 1);
    int64_t d;
    if (r->op != HIR_OP_REDUCTION || !r->out || r->nin != 1 || r->u.red.op != HIR_RED_SUM ||
        !gemm_form(g, &d) || hir_value_tensor(r->in[0]) != g->out)
        return false;
    return summed(r->out, d, false);
}

/* The pair after --convert-to-communication: the GEMM at i, then `ALLOCATE(O)`, the
 * ReduceScatter (or Allreduce) of its output into O, and its Wait. */
static bool rs_converted(const hir_block *b, int i)
{
    if (i + 3 >= hir_block_size(b))
        return false;
    const hir_stmt *g = hir_block_at(b, i), *a = hir_block_at(b, i + 1), *cs = hir_block_at(b, i + 2);
    const hir_stmt *w = hir_block_at(b, i + 3);
    int64_t d;
    if (a->op != HIR_OP_ALLOCATE || cs->op != HIR_OP_COMMUNICATION || w->op != HIR_OP_WAIT ||
        !gemm_form(g, &d))
        return false;
    const hir_comm *m = cs->u.comm;
    bool rs = m->type == HIR_COMM_REDUCESCATTER;
    if ((!rs && m->type != HIR_COMM_ALLREDUCE) || m->input != g->out || m->output != a->out ||
        w->u.wait.number != m->number)
        return false;
    return summed(m->output, d, !rs);
}

/* out = in, converted where the dtypes differ (nvFuser's cast spelling "__bfloat2float") */
static hir_stmt *cast_or_set(hir_program *p, hir_tensor *out, hir_tensor *in)
{
    if (out->dtype == in->dtype)
        return pu_set(p, out, in);
    const char *a = hir_dtype_name(in->dtype), *b = hir_dtype_name(out->dtype);
    a += a[0] == '_' && a[1] == '_' ? 2 : 0;
    b += b[0] == '_' && b[1] == '_' ? 2 : 0;
    size_t n = strlen(a) + strlen(b) + 4;
    char *fn = hir_arena_alloc(p->arena, n);
    snprintf(fn, n, "__%s2%s", a, b);
    hir_stmt *s = hir_stmt_new(p, HIR_OP_UNARY);
    s->out = out;
    s->u.ew.op = -1;
    s->u.ew.infix = false;
    s->u.ew.fn = fn;
    hir_value *v[1] = {&in->head};
    hir_stmt_set_inputs(p, s, 1, v);
    return s;
}

/* what lower_pair makes: nvFuser's form, the CUDA ring, or (after
 * --convert-to-communication) the GEMM alone, its collective left as it is */
typedef enum rs_form { RS_REDUCE, RS_RING, RS_GEMM_ONLY } rs_form;

typedef struct rs {
    hir_program *p;
    hir_diag *d;
    rs_form form;
    bool put;
    int64_t next_stream;
    const hir_stream_ref *main_ref;  /* re-lowering: the main stream the old pipeline used */
} rs;

/* the slice of t without logical axis `axis`, and its HirAliasSelect appended to b */
static hir_tensor *select_into(hir_program *p, hir_block *b, hir_tensor *t, int axis, hir_scalar *index)
{
    hir_iterdomain *ids[64];
    int n = 0;
    for (int i = 0; i < t->nloop && n < 64; i++)
        if (i != axis)
            ids[n++] = hir_iterdomain_clone(p, t->shape.ids[i]);
    hir_tensor *s = hir_tensor_new(p, HIR_MEM_LOCAL, t->dtype, n, ids, t->mesh);
    hir_block_append(p, b, pu_alias_select(p, s, t, t->shape.ids[axis], index));
    return s;
}

/* one pair being lowered */
typedef struct pair {
    hir_stmt *g;                 /* the GEMM */
    hir_loc rloc;                /* the reduction's place (the Reduce, the ring's add) */
    hir_tensor *P, *O, *A;
    hir_tensor *Acc, *Rcv;       /* the CUDA ring's float buffers */
    hir_block *b;                /* the main loop's body */
    hir_scalar *idx, *rank, *stop, *chunk;
    hir_tensor *Ps;              /* the partial of this step */
} pair;

/* a float buffer [d slots, DID{d}, rows, n] shaped like O with its reduced axis iterated */
static hir_tensor *ring_buffer(hir_program *p, const hir_tensor *O)
{
    hir_iterdomain *ids[64];
    int n = 0;
    ids[n++] = hir_iterdomain_clone(p, O->shape.ids[0]);
    ids[0]->itype = HIR_IT_ITER;
    for (int k = 1; k < O->nloop && n < 64; k++)
        ids[n++] = hir_iterdomain_clone(p, O->shape.ids[k]);
    return hir_tensor_new(p, HIR_MEM_GLOBAL, HIR_DT_FLOAT, n, ids, O->mesh);
}

/* the GEMM on slices: inputs with an axis 1 of the stream extent (A's chunk axis, B's
 * broadcast axis as nvFuser selects it), the output's stream axis */
static void emit_gemm(hir_program *p, pair *x)
{
    hir_stmt *ng = pu_stmt_clone(p, x->g);
    for (int i = 0; i < x->g->nin; i++) {
        hir_tensor *t = hir_value_tensor(x->g->in[i]);
        if (!t || t->nloop < 2 || t->shape.naxes != t->nloop)
            continue;
        hir_iterdomain *a1 = t->shape.ids[1];
        if (t == x->A || (a1->itype == HIR_IT_BROADCAST && t->nloop == x->P->nloop - 1))
            ng->in[i] = &select_into(p, x->b, t, 1, x->chunk)->head;
    }
    x->Ps = select_into(p, x->b, x->P, 1, x->chunk);
    ng->out = x->Ps;
    hir_block_append(p, x->b, ng);
}

/* nvFuser's form: the Reduce's input view again, the output's view on its reduced device
 * axis, Reduce onto root streamIdx (a team position), Wait */
static void emit_reduce(hir_program *p, pair *x)
{
    hir_block_append(p, x->b, pu_alias_select(p, x->Ps, x->P, x->P->shape.ids[1], x->chunk));
    hir_tensor *Os = select_into(p, x->b, x->O, 0, x->chunk);
    hir_comm *m = hir_comm_new(p, HIR_OP_COMMUNICATION);
    m->type = HIR_COMM_REDUCE;
    m->nteam = (int)x->P->mesh->ndevices;
    m->team = x->P->mesh->devices;
    m->root = x->idx;
    m->input = x->Ps;
    m->output = Os;
    m->backend = HIR_BK_NCCL;
    m->red_op = HIR_RED_SUM;
    m->loc = x->rloc;
    hir_stmt *cs = pu_comm_stmt(p, m);
    cs->loc = x->rloc;
    hir_block_append(p, x->b, cs);
    hir_block_append(p, x->b, pu_wait(p, m));
}

static hir_comm *p2p(hir_program *p, bool send, hir_tensor *buf, hir_scalar *peer)
{
    hir_comm *m = hir_comm_new(p, HIR_OP_P2P);
    m->is_send = send;
    m->buffer = buf;
    m->peer = peer;
    m->backend = HIR_BK_CUDA;
    return m;
}

/* The ring's step: step 0 starts chunk c's sum with this rank's partial; step i > 0 waits for
 * step i - 1 (its stream wrote the sum it passes on), sends the previous chunk's sum to the
 * rank before, receives this chunk's sum from the rank after, and adds its partial. */
static void emit_ring_step(hir_program *p, pair *x, bool put)
{
    hir_scalar *one = hir_scalar_int(p, 1), *nstreams = hir_scalar_named(p, "numberOfStreams");
    hir_tensor *As = select_into(p, x->b, x->Acc, 0, x->chunk);
    /* the exchange's views come before the IF (as the all-gather's receive slot does), so
     * --hoist-handle-exchange can make them in its loop */
    hir_scalar *prev_chunk = pu_index(p, HIR_BIN_MOD, pu_index(p, HIR_BIN_ADD, x->rank, x->idx), x->stop);
    hir_tensor *Prev = select_into(p, x->b, x->Acc, 0, prev_chunk);
    hir_tensor *Rs = select_into(p, x->b, x->Rcv, 0, x->chunk);
    hir_stmt *cond = pu_if(p, pu_anon(p, HIR_BIN_EQ, x->idx, hir_scalar_int(p, 0)));
    cond->loc = x->rloc;
    hir_block_append(p, &cond->body, cast_or_set(p, As, x->Ps));
    hir_block *e = &cond->else_body;
    hir_scalar *prev_stream = pu_index(p, HIR_BIN_MOD, pu_index(p, HIR_BIN_SUB, x->idx, one), nstreams);
    hir_block_append(p, e, pu_stream_stmt(p, HIR_OP_SYNC_STREAM, -1, prev_stream));
    hir_scalar *to = pu_index(p, HIR_BIN_MOD,
                              pu_index(p, HIR_BIN_ADD, x->stop, pu_index(p, HIR_BIN_SUB, x->rank, one)),
                              x->stop);
    hir_scalar *from = pu_index(p, HIR_BIN_MOD, pu_index(p, HIR_BIN_ADD, x->rank, one), x->stop);
    hir_comm *recv = p2p(p, false, Rs, from), *send = p2p(p, true, Prev, to);
    hir_comm *pair2[2] = {recv, send};
    hir_block_append(p, e, pu_share(p, 2, pair2));
    /* the non-blocking half first, as in the all-gather ring: Get posts the send (it raises
     * flags, the receive pulls), Put posts the receive (it signals ready) */
    hir_block_append(p, e, pu_comm_stmt(p, put ? recv : send));
    hir_block_append(p, e, pu_comm_stmt(p, put ? send : recv));
    hir_block_append(p, e, pu_wait(p, send));
    hir_block_append(p, e, pu_wait(p, recv));
    hir_stmt *add = hir_stmt_new(p, HIR_OP_BINARY);
    add->out = As;
    add->u.ew.op = HIR_BIN_ADD;
    add->u.ew.infix = true;
    hir_value *v[2] = {&Rs->head, &x->Ps->head};
    hir_stmt_set_inputs(p, add, 2, v);
    hir_block_append(p, e, add);
    for (int i = 0; i < hir_block_size(e); i++)   /* a later pass's diagnostics point here */
        hir_block_at(e, i)->loc = x->rloc;
    cond->u.cond.has_else = true;
    hir_block_append(p, x->b, cond);
}

/* after the ring: the last step summed this rank's own chunk; into the output, rounded once */
static int emit_ring_result(rs *c, pair *x, hir_ptrvec *out)
{
    hir_program *p = c->p;
    hir_stmt *a = pu_allocate(p, x->O, false, x->rloc, c->d);
    if (!a)
        return -1;
    a->loc = x->rloc;
    hir_ptrvec_push(p->arena, out, a);
    hir_iterdomain *ids[64];
    int n = 0;
    for (int k = 1; k < x->Acc->nloop && n < 64; k++)
        ids[n++] = hir_iterdomain_clone(p, x->Acc->shape.ids[k]);
    hir_tensor *mine = hir_tensor_new(p, HIR_MEM_LOCAL, HIR_DT_FLOAT, n, ids, x->Acc->mesh);
    hir_ptrvec_push(p->arena, out, pu_alias_select(p, mine, x->Acc, x->Acc->shape.ids[0], x->rank));
    hir_stmt *cp = cast_or_set(p, x->O, mine);
    cp->loc = x->rloc;
    hir_ptrvec_push(p->arena, out, cp);
    return 0;
}

/* a statement on the main stream (re-lowering: the old pipeline's, with its address) */
static hir_stmt *main_stream_stmt(rs *c, hir_op op, int64_t number)
{
    hir_stmt *s = pu_stream_stmt(c->p, op, number, NULL);
    if (c->main_ref)
        s->u.stream.addr = c->main_ref->addr;
    return s;
}

/* Lowers the GEMM g whose output is summed into O (the reduction at rloc) in c->form. */
static int lower_pair(rs *c, hir_stmt *g, hir_tensor *O, hir_loc rloc, hir_ptrvec *out)
{
    hir_program *p = c->p;
    bool ring = c->form == RS_RING;
    pair x = {g, rloc, g->out, O, hir_value_tensor(g->in[0]), NULL, NULL, NULL,
              NULL, NULL, NULL, NULL, NULL};
    hir_iterdomain *sid = x.P->shape.ids[1];
    /* the CUDA ring's buffers: the running sums (slot c holds chunk c's sum so far) and the
     * sums received from the next rank */
    if (ring) {
        x.Acc = ring_buffer(p, x.O);
        x.Rcv = ring_buffer(p, x.O);
    }
    /* the converted form allocates O itself, before its collective */
    hir_tensor *alloc[3] = {x.P, ring ? x.Acc : c->form == RS_REDUCE ? x.O : NULL, ring ? x.Rcv : NULL};
    for (int k = 0; k < 3 && alloc[k]; k++) {
        hir_stmt *a = pu_allocate(p, alloc[k], false, pu_loc(p, g), c->d);
        if (!a)
            return -1;
        a->loc = g->loc;
        hir_ptrvec_push(p->arena, out, a);
    }

    x.idx = hir_scalar_named(p, "streamIdx");
    x.rank = hir_scalar_named(p, "rank");
    x.stop = sid->extent;
    hir_scalar *worker = pu_index(p, HIR_BIN_MOD, x.idx, hir_scalar_named(p, "numberOfStreams"));
    int64_t main_stream = c->main_ref ? c->main_ref->number : c->next_stream++;
    hir_ptrvec_push(p->arena, out, main_stream_stmt(c, HIR_OP_GET_STREAM, main_stream));
    hir_stmt *sync = pu_kfor(p, x.idx, sid);
    sync->loc = g->loc;
    hir_block_append(p, &sync->body, pu_stream_stmt(p, HIR_OP_SET_STREAM, -1, worker));
    hir_block_append(p, &sync->body, main_stream_stmt(c, HIR_OP_SYNC_STREAM, main_stream));
    hir_ptrvec_push(p->arena, out, sync);

    hir_stmt *loop = pu_kfor(p, x.idx, sid);
    loop->loc = g->loc;
    x.b = &loop->body;
    hir_block_append(p, x.b, pu_stream_stmt(p, HIR_OP_SET_STREAM, -1, worker));
    /* chunk of this step: streamIdx (NCCL, uniform over ranks for the collective) or
     * (rank + streamIdx + 1) % d (CUDA ring: every rank on a different chunk, its own last) */
    x.chunk = ring ? pu_index(p, HIR_BIN_MOD,
                              pu_index(p, HIR_BIN_ADD, pu_index(p, HIR_BIN_ADD, x.rank, x.idx),
                                       hir_scalar_int(p, 1)),
                              x.stop)
                   : x.idx;
    emit_gemm(p, &x);
    if (ring)
        emit_ring_step(p, &x, c->put);
    else if (c->form == RS_REDUCE)
        emit_reduce(p, &x);
    hir_block_append(p, x.b, main_stream_stmt(c, HIR_OP_SET_STREAM, main_stream));
    hir_block_append(p, x.b, pu_stream_stmt(p, HIR_OP_SYNC_STREAM, -1, worker));
    hir_ptrvec_push(p->arena, out, loop);
    return ring ? emit_ring_result(c, &x, out) : 0;
}

int hir_stream_parallel_rs(hir_program *p, hir_backend_kind backend, bool put, bool scheduled,
                           hir_diag *d)
{
    hir_block *body = &p->body;
    int first = -1;
    for (int i = 0; i < hir_block_size(body) && first < 0; i++)
        if (rs_pair(body, i) || rs_converted(body, i))
            first = i;
    if (first < 0)
        return 0;
    if (scheduled) {   /* the options are the all-gather's; this lowering has one schedule */
        hir_diag_emit(d, HIR_ERROR, pu_loc_near(p, hir_block_at(body, first)),
                      "order=, nodes= and chunks= schedule an all-gather pipeline; the GEMM + "
                      "reduce-scatter lowering has one schedule (the ring of one chunk a rank): "
                      "lower this program without them");
        return -1;
    }
    rs c = {p, d, backend == HIR_BK_CUDA ? RS_RING : RS_REDUCE, put, pu_next_stream(p), NULL};
    hir_ptrvec out = {0};
    for (int i = 0; i < hir_block_size(body); i++) {
        hir_stmt *s = hir_block_at(body, i);
        if (rs_pair(body, i)) {
            hir_stmt *r = hir_block_at(body, i + 1);
            if (lower_pair(&c, s, r->out, r->loc, &out))
                return -1;
            i++;
            continue;
        }
        if (rs_converted(body, i)) {
            /* the GEMM alone is pipelined; its ALLOCATE, collective and Wait follow as they are */
            rs g = c;
            g.form = RS_GEMM_ONLY;
            if (lower_pair(&g, s, hir_block_at(body, i + 1)->out, s->loc, &out))
                return -1;
            c.next_stream = g.next_stream;
            continue;
        }
        hir_ptrvec_push(p->arena, &out, s);
    }
    body->stmts = out;
    if (p->next_stream < c.next_stream)
        p->next_stream = c.next_stream;
    return 0;
}

/* ---- --backend on a lowered pipeline (hir_rs_backend): nvFuser's Reduce form and the ring
 * are rewritten into each other by taking the pipeline back to its (GEMM, sum) pair and
 * lowering that again, in the place of the old pipeline and on its main stream */

typedef struct rs_found {
    int first, loop_at, last;    /* top-level places: its first statement, the main FOR, its last */
    hir_stmt *gemm;              /* the GEMM on whole tensors (a copy, not in the program) */
    hir_tensor *O;
    hir_loc rloc;
    bool ring;
    hir_stmt *exchange;          /* the ring's IF */
    const hir_stream_ref *main_ref;
    hir_tensor *bufs[3];         /* what its ALLOCATEs make: P and O, or P, Acc and Rcv */
    int alloc_at[3];
} rs_found;

/* the tensor whose HirAliasSelect (before `upto` in b) makes t, or NULL; *axis: its axis */
static hir_tensor *source(const hir_block *b, int upto, const hir_tensor *t, hir_iterdomain **axis)
{
    for (int i = upto - 1; i >= 0; i--) {
        const hir_stmt *s = hir_block_at(b, i);
        if (s->op == HIR_OP_ALIAS_SELECT && s->out == t && s->nin == 1) {
            if (axis)
                *axis = s->u.sel.axis;
            return hir_value_tensor(s->in[0]);
        }
    }
    return NULL;
}

static bool is_stream(const hir_stmt *s, hir_op op, bool indexed)
{
    return s && s->op == op && (s->u.stream.index != NULL) == indexed;
}

/* nvFuser's form after the GEMM at k: the view of O on its reduced axis, `Communication
 * (type=Reduce, root=streamIdx, input=P's view, output=O's view)` and its Wait */
static bool found_reduce(hir_stmt *loop, int k, hir_tensor *Ps, rs_found *f)
{
    hir_block *b = &loop->body;
    for (int i = k + 1; i + 1 < hir_block_size(b); i++) {
        hir_stmt *s = hir_block_at(b, i), *w = hir_block_at(b, i + 1);
        if (s->op != HIR_OP_COMMUNICATION)
            continue;
        hir_comm *m = s->u.comm;
        hir_iterdomain *axis = NULL;
        if (m->type != HIR_COMM_REDUCE || m->input != Ps || m->root != loop->u.kfor.index ||
            w->op != HIR_OP_WAIT || w->u.wait.number != m->number)
            return false;
        f->O = source(b, i, m->output, &axis);
        f->bufs[1] = f->O;
        f->rloc = s->loc;
        return f->O && axis == f->O->shape.ids[0];
    }
    return false;
}

/* the ring after the GEMM at k: the exchange's IF (step 0 starts Acc's slot from the partial,
 * the others end adding the received sum to it), then at top level ALLOCATE(O), the view of
 * Acc at rank and O from it */
static bool found_ring(hir_block *top, hir_stmt *loop, int k, hir_tensor *Ps, rs_found *f)
{
    hir_block *b = &loop->body;
    for (int i = k + 1; i < hir_block_size(b) && !f->exchange; i++) {
        hir_stmt *s = hir_block_at(b, i);
        if (s->op != HIR_OP_IF || hir_block_size(&s->body) != 1 || hir_block_size(&s->else_body) < 2)
            continue;
        hir_stmt *start = hir_block_at(&s->body, 0);
        hir_stmt *add = hir_block_at(&s->else_body, hir_block_size(&s->else_body) - 1);
        if (start->nin != 1 || hir_value_tensor(start->in[0]) != Ps || add->op != HIR_OP_BINARY ||
            add->out != start->out || add->nin != 2)
            return false;
        f->bufs[1] = source(b, i, start->out, NULL);
        f->bufs[2] = source(b, i, hir_value_tensor(add->in[0]), NULL);
        f->exchange = s;
    }
    int at = f->loop_at;
    if (!f->exchange || !f->bufs[1] || !f->bufs[2] || at + 3 >= hir_block_size(top))
        return false;
    hir_stmt *a = hir_block_at(top, at + 1), *v = hir_block_at(top, at + 2), *o = hir_block_at(top, at + 3);
    if (a->op != HIR_OP_ALLOCATE || v->op != HIR_OP_ALIAS_SELECT || v->nin != 1 ||
        hir_value_tensor(v->in[0]) != f->bufs[1] || o->out != a->out || o->nin != 1 ||
        hir_value_tensor(o->in[0]) != v->out)
        return false;
    f->O = a->out;
    f->rloc = o->loc;
    f->last = at + 3;
    f->ring = true;
    return true;
}

/* the ALLOCATEs of bufs[] among the ALLOCATEs and FORs (a hoisted handle exchange) before `at` */
static bool found_allocs(hir_block *top, int at, rs_found *f)
{
    int n = f->ring ? 3 : 2, left = n;
    for (int k = 0; k < 3; k++)
        f->alloc_at[k] = -1;
    for (int i = at - 1; i >= 0 && left; i--) {
        hir_stmt *s = hir_block_at(top, i);
        if (s->op != HIR_OP_ALLOCATE && s->op != HIR_OP_FOR)
            return false;
        for (int k = 0; k < n; k++)
            if (s->op == HIR_OP_ALLOCATE && s->out == f->bufs[k] && f->alloc_at[k] < 0) {
                f->alloc_at[k] = i;
                f->first = i;
                left--;
            }
    }
    return !left;
}

/* the stream statements around the main FOR at top[at]: GetCurrentStream N, the
 * synchronisation FOR, and the main FOR's worker stream and its return to N */
static bool found_streams(hir_block *top, int at, rs_found *f)
{
    hir_stmt *loop = hir_block_at(top, at);
    hir_block *b = &loop->body;
    int n = hir_block_size(b);
    if (loop->op != HIR_OP_FOR || at < 2 || n < 4 || !is_stream(hir_block_at(b, 0), HIR_OP_SET_STREAM, true) ||
        !is_stream(hir_block_at(b, n - 2), HIR_OP_SET_STREAM, false) ||
        !is_stream(hir_block_at(b, n - 1), HIR_OP_SYNC_STREAM, true))
        return false;
    hir_stmt *get = hir_block_at(top, at - 2), *sync = hir_block_at(top, at - 1);
    if (!is_stream(get, HIR_OP_GET_STREAM, false) ||
        get->u.stream.number != hir_block_at(b, n - 2)->u.stream.number || sync->op != HIR_OP_FOR ||
        hir_block_size(&sync->body) != 2 || !is_stream(hir_block_at(&sync->body, 1), HIR_OP_SYNC_STREAM, false))
        return false;
    f->main_ref = &get->u.stream;
    return true;
}

/* A GEMM + reduce-scatter pipeline in either form whose main FOR is top[at]. */
static bool found_pipeline(hir_program *p, int at, rs_found *f)
{
    hir_block *top = &p->body;
    memset(f, 0, sizeof *f);
    f->loop_at = f->last = at;
    if (!found_streams(top, at, f))
        return false;
    hir_stmt *loop = hir_block_at(top, at);
    hir_block *b = &loop->body;
    int n = hir_block_size(b), k = 0;
    while (k < n && hir_block_at(b, k)->op != HIR_OP_LINEAR && hir_block_at(b, k)->op != HIR_OP_MATMUL)
        k++;
    if (k == n)
        return false;
    hir_stmt *g = hir_block_at(b, k);
    hir_iterdomain *axis = NULL;
    hir_tensor *P = source(b, k, g->out, &axis);
    if (!P || P->nloop < 2 || axis != P->shape.ids[1])
        return false;
    /* the GEMM on the tensors its views are of */
    hir_stmt *whole = pu_stmt_clone(p, g);
    for (int i = 0; i < g->nin; i++) {
        hir_tensor *t = hir_value_tensor(g->in[i]), *src = t ? source(b, k, t, NULL) : NULL;
        if (src)
            whole->in[i] = &src->head;
    }
    whole->out = P;
    int64_t d;
    if (!gemm_form(whole, &d))
        return false;
    f->gemm = whole;
    f->bufs[0] = P;
    if (!found_reduce(loop, k, g->out, f) && !found_ring(top, loop, k, g->out, f))
        return false;
    return summed(f->O, d, false) && found_allocs(top, at - 2, f);
}

typedef struct marking { hir_program *p; hir_map *old; } marking;

/* Marks v's symbols, and the trailer entries equal in value to v or a part of it: a removed
 * statement read back from text holds the expanded expression (`( streamIdx - 1 ) %
 * numberOfStreams`), not the entries it stands for. */
static void mark_value(marking *m, hir_scalar *v, int depth)
{
    if (!v || depth > 32)
        return;
    pu_mark_symbols(m->old, v);
    if (!v->def)
        return;
    for (int i = 0; i < m->p->index_defs.n; i++) {
        hir_scalar *t = m->p->index_defs.items[i];
        if (t != v && hir_scalar_equal(t, v))
            pu_mark_symbols(m->old, t);
    }
    for (int i = 0; i < v->def->nargs; i++)
        mark_value(m, v->def->args[i], depth + 1);
}

static bool mark_walk(hir_stmt *s, int depth, void *ctx)
{
    (void)depth;
    marking *m = ctx;
    switch (s->op) {
    case HIR_OP_ALIAS_SELECT: mark_value(m, s->u.sel.index, 0); break;
    case HIR_OP_IF: mark_value(m, s->u.cond.pred, 0); break;
    case HIR_OP_SET_STREAM:
    case HIR_OP_SYNC_STREAM: mark_value(m, s->u.stream.index, 0); break;
    case HIR_OP_P2P:
    case HIR_OP_COMMUNICATION:
        mark_value(m, s->u.comm->peer, 0);
        mark_value(m, s->u.comm->root, 0);
        break;
    default: break;
    }
    return true;
}

/* the index symbols a removed statement used, for the trailer's pruning */
static void mark_removed(hir_program *p, hir_stmt *s, hir_map *old)
{
    marking m = {p, old};
    mark_walk(s, 0, &m);
    hir_block_walk(&s->body, 1, mark_walk, &m);
    hir_block_walk(&s->else_body, 1, mark_walk, &m);
}

/* only ShareMemHandles that name a P2P statement of the ring's exchange */
static bool ring_handles(const hir_block *b, const hir_stmt *exchange)
{
    for (int i = 0; i < hir_block_size(b); i++) {
        const hir_stmt *s = hir_block_at(b, i);
        if (s->op != HIR_OP_SHARE_HANDLES || s->u.share.n < 1)
            return false;
        for (int j = 0; j < s->u.share.n; j++) {
            hir_stmt *owner = s->u.share.comms[j]->stmt;
            bool ours = false;
            for (int k = 0; k < hir_block_size(&exchange->else_body); k++)
                ours |= hir_block_at(&exchange->else_body, k) == owner;
            if (!ours)
                return false;
        }
    }
    return true;
}

/* --hoist-handle-exchange's loop for the ring: views and IFs of its handle exchange only */
static bool hoisted_handles(const hir_stmt *s, const hir_stmt *exchange)
{
    if (s->op != HIR_OP_FOR || !hir_block_size(&s->body))
        return false;
    for (int i = 0; i < hir_block_size(&s->body); i++) {
        const hir_stmt *t = hir_block_at(&s->body, i);
        if (t->op != HIR_OP_ALIAS_SELECT &&
            !(t->op == HIR_OP_IF && ring_handles(&t->body, exchange) && ring_handles(&t->else_body, exchange)))
            return false;
    }
    return true;
}

/* protocol=: the ring's two P2P statements in that protocol's order */
static void ring_order(hir_stmt *exchange, bool put)
{
    hir_block *e = &exchange->else_body;
    for (int j = 0; j + 1 < hir_block_size(e); j++) {
        hir_stmt *a = hir_block_at(e, j), *b = hir_block_at(e, j + 1);
        if (a->op == HIR_OP_P2P && b->op == HIR_OP_P2P && a->u.comm->is_send == put) {
            e->stmts.items[j] = b;
            e->stmts.items[j + 1] = a;
            return;
        }
    }
}

/* the found pipeline replaced by `made`; what it removes is marked in old */
static void replace(hir_program *p, const rs_found *f, hir_ptrvec *made, hir_map *old)
{
    hir_block *top = &p->body;
    hir_ptrvec out = {0};
    for (int j = 0; j < hir_block_size(top); j++) {
        hir_stmt *s = hir_block_at(top, j);
        if (j == f->first)
            for (int k = 0; k < made->n; k++)
                hir_ptrvec_push(p->arena, &out, made->items[k]);
        bool gone = (j >= f->loop_at - 2 && j <= f->last) || j == f->alloc_at[0] || j == f->alloc_at[1] ||
                    j == f->alloc_at[2] ||
                    (f->ring && j > f->first && j < f->loop_at - 2 && hoisted_handles(s, f->exchange));
        if (gone)
            mark_removed(p, s, old);
        else
            hir_ptrvec_push(p->arena, &out, s);
    }
    top->stmts = out;
}

int hir_rs_backend(hir_program *p, hir_backend_kind kind, const char *protocol, hir_map *old, hir_diag *d)
{
    hir_block *top = &p->body;
    bool to_ring = kind == HIR_BK_CUDA, put = protocol && !strcmp(protocol, "put");
    int changed = 0;
    for (int i = 0; i < hir_block_size(top); i++) {
        rs_found f;
        if (!found_pipeline(p, i, &f))
            continue;
        if (f.ring == to_ring) {
            if (f.ring && protocol)
                ring_order(f.exchange, put);
            i = f.last;
            continue;
        }
        rs c = {p, d, to_ring ? RS_RING : RS_REDUCE, put, 0, f.main_ref};
        hir_ptrvec made = {0};
        if (lower_pair(&c, f.gemm, f.O, f.rloc, &made))
            return -1;
        replace(p, &f, &made, old);
        i = f.first + made.n - 1;
        changed++;
    }
    return changed;
}
