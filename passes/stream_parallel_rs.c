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
 *   - CUDA: a shifted exchange with the all-gather ring's peers and semaphore discipline: at
 *     step i rank r computes the partial of chunk c = (r + i) % d, sends it to its owner c and
 *     receives the partial of its own chunk from rank (d + r - i) % d into slot (d + r - i) % d
 *     of a receive buffer [d, DID{d}, rows, n]; step 0 copies its own partial locally. After the
 *     loop one reduction sums the d slots into the output (the backends reduce in float and
 *     round once: fp32 accumulation for bf16/fp16).
 * Leaves everything else to the all-gather lowering of stream_parallel.c, which calls this first.
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

/* The pair (GEMM at i, reduction at i + 1) in the form of the header, or false. */
static bool rs_pair(const hir_block *b, int i, int64_t *dout)
{
    if (i + 1 >= hir_block_size(b))
        return false;
    const hir_stmt *g = hir_block_at(b, i), *r = hir_block_at(b, i + 1);
    if ((g->op != HIR_OP_LINEAR && g->op != HIR_OP_MATMUL) || r->op != HIR_OP_REDUCTION || !g->out ||
        !r->out || r->nin != 1 || hir_value_tensor(r->in[0]) != g->out || r->u.red.op != HIR_RED_SUM)
        return false;
    const hir_tensor *P = g->out, *O = r->out, *A = g->nin ? hir_value_tensor(g->in[0]) : NULL;
    if (!A || P->shape.naxes != P->nloop || O->shape.naxes != O->nloop || A->shape.naxes != A->nloop)
        return false;   /* split axes: not this form */
    if (P->nloop < 3 || O->nloop < 3 || A->nloop < 3)
        return false;
    hir_iterdomain *const *pi = P->shape.ids, *const *oi = O->shape.ids, *const *ai = A->shape.ids;
    int64_t d;
    if (!pi[0]->extent || !hir_scalar_const(pi[0]->extent, &d) || d < 1)
        return false;
    if (!is_dev(pi[0]) || !hir_ptype_is_stream(pi[1]->ptype) || pi[1]->itype != HIR_IT_ITER ||
        !extent_is(pi[1], d))
        return false;
    if (oi[0]->itype != HIR_IT_REDUCTION || !extent_is(oi[0], d) || !is_dev(oi[1]) ||
        !extent_is(oi[1], d))
        return false;
    /* A's leading axis: the device axis of the K slices, or a size-1 axis standing for it (the
     * GELU output of a tensor-parallel MLP block, each rank's slice of the feed-forward axis) */
    if (!(is_dev(ai[0]) || (ai[0]->itype == HIR_IT_BROADCAST && extent_is(ai[0], 1))) ||
        ai[1]->itype != HIR_IT_ITER || !extent_is(ai[1], d))
        return false;
    for (int k = 2; k < O->nloop; k++)
        if (is_dev(oi[k]) || hir_ptype_is_stream(oi[k]->ptype))
            return false;
    if (!P->mesh || P->mesh->ndims != 1 || (int64_t)P->mesh->ndevices != d)
        return false;
    *dout = d;
    return true;
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

typedef struct rs {
    hir_program *p;
    hir_diag *d;
    hir_backend_kind backend;
    bool put;
    int64_t next_stream;
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

static int lower_pair(rs *c, hir_stmt *g, hir_stmt *r, int64_t d, hir_ptrvec *out)
{
    hir_program *p = c->p;
    hir_tensor *P = g->out, *O = r->out, *A = hir_value_tensor(g->in[0]);
    hir_iterdomain *sid = P->shape.ids[1];
    bool cuda = c->backend == HIR_BK_CUDA;

    /* the CUDA ring's float buffers [d slots, DID{d}, rows, n]: the running sums (slot c holds
     * chunk c's sum so far) and the sums received from the next rank */
    hir_tensor *Acc = NULL, *Rcv = NULL;
    if (cuda) {
        hir_tensor **bufs[2] = {&Acc, &Rcv};
        for (int j = 0; j < 2; j++) {
            hir_iterdomain *ids[64];
            int n = 0;
            ids[n++] = hir_iterdomain_clone(p, O->shape.ids[0]);
            ids[0]->itype = HIR_IT_ITER;
            for (int k = 1; k < O->nloop && n < 64; k++)
                ids[n++] = hir_iterdomain_clone(p, O->shape.ids[k]);
            *bufs[j] = hir_tensor_new(p, HIR_MEM_GLOBAL, HIR_DT_FLOAT, n, ids, O->mesh);
        }
    }
    hir_tensor *alloc[3] = {P, cuda ? Acc : O, cuda ? Rcv : NULL};
    for (int k = 0; k < 3 && alloc[k]; k++) {
        hir_stmt *a = pu_allocate(p, alloc[k], false, pu_loc(p, g), c->d);
        if (!a)
            return -1;
        a->loc = g->loc;
        hir_ptrvec_push(p->arena, out, a);
    }

    hir_scalar *idx = hir_scalar_named(p, "streamIdx"), *rank = hir_scalar_named(p, "rank");
    hir_scalar *stop = sid->extent;
    hir_scalar *worker = pu_index(p, HIR_BIN_MOD, idx, hir_scalar_named(p, "numberOfStreams"));
    int64_t main_stream = c->next_stream++;
    hir_ptrvec_push(p->arena, out, pu_stream_stmt(p, HIR_OP_GET_STREAM, main_stream, NULL));
    hir_stmt *sync = pu_kfor(p, idx, sid);
    sync->loc = g->loc;
    hir_block_append(p, &sync->body, pu_stream_stmt(p, HIR_OP_SET_STREAM, -1, worker));
    hir_block_append(p, &sync->body, pu_stream_stmt(p, HIR_OP_SYNC_STREAM, main_stream, NULL));
    hir_ptrvec_push(p->arena, out, sync);

    hir_stmt *loop = pu_kfor(p, idx, sid);
    loop->loc = g->loc;
    hir_block *b = &loop->body;
    hir_block_append(p, b, pu_stream_stmt(p, HIR_OP_SET_STREAM, -1, worker));
    /* chunk of this step: streamIdx (NCCL, uniform over ranks for the collective) or
     * (rank + streamIdx + 1) % d (CUDA ring: every rank on a different chunk, its own last) */
    hir_scalar *chunk =
        cuda ? pu_index(p, HIR_BIN_MOD,
                        pu_index(p, HIR_BIN_ADD, pu_index(p, HIR_BIN_ADD, rank, idx), hir_scalar_int(p, 1)),
                        stop)
             : idx;

    /* the GEMM on slices: inputs with an axis 1 of the stream extent (A's chunk axis, B's
     * broadcast axis as nvFuser selects it), the output's stream axis */
    hir_stmt *ng = pu_stmt_clone(p, g);
    for (int i = 0; i < g->nin; i++) {
        hir_tensor *t = hir_value_tensor(g->in[i]);
        if (!t || t->nloop < 2 || t->shape.naxes != t->nloop)
            continue;
        hir_iterdomain *a1 = t->shape.ids[1];
        bool chunked = t == A || (a1->itype == HIR_IT_BROADCAST && t->nloop == P->nloop - 1);
        if (chunked)
            ng->in[i] = &select_into(p, b, t, 1, chunk)->head;
    }
    hir_tensor *Ps = select_into(p, b, P, 1, chunk);
    ng->out = Ps;
    hir_block_append(p, b, ng);

    if (!cuda) {
        /* nvFuser's form: the Reduce's input view again, the output's view on its reduced
         * device axis, Reduce onto root streamIdx (a team position), Wait */
        hir_block_append(p, b, pu_alias_select(p, Ps, P, sid, chunk));
        hir_tensor *Os = select_into(p, b, O, 0, chunk);
        hir_comm *m = hir_comm_new(p, HIR_OP_COMMUNICATION);
        m->type = HIR_COMM_REDUCE;
        m->nteam = (int)P->mesh->ndevices;
        m->team = P->mesh->devices;
        m->root = idx;
        m->input = Ps;
        m->output = Os;
        m->backend = HIR_BK_NCCL;
        m->red_op = HIR_RED_SUM;
        m->loc = r->loc;
        hir_stmt *cs = pu_comm_stmt(p, m);
        cs->loc = r->loc;
        hir_block_append(p, b, cs);
        hir_block_append(p, b, pu_wait(p, m));
    } else {
        /* step 0 starts chunk c's sum with this rank's partial; step i > 0 waits for step
         * i - 1 (its stream wrote the sum it passes on), sends the previous chunk's sum to the
         * rank before, receives this chunk's sum from the rank after, and adds its partial */
        hir_tensor *As = select_into(p, b, Acc, 0, chunk);
        /* the exchange's views come before the IF (as the all-gather's receive slot does), so
         * --hoist-handle-exchange can make them in its loop */
        hir_scalar *prev_chunk = pu_index(p, HIR_BIN_MOD, pu_index(p, HIR_BIN_ADD, rank, idx), stop);
        hir_tensor *Prev = select_into(p, b, Acc, 0, prev_chunk);
        hir_tensor *Rs = select_into(p, b, Rcv, 0, chunk);
        hir_stmt *cond = pu_if(p, pu_anon(p, HIR_BIN_EQ, idx, hir_scalar_int(p, 0)));
        cond->loc = r->loc;
        hir_block_append(p, &cond->body, cast_or_set(p, As, Ps));
        hir_block *e = &cond->else_body;
        hir_scalar *prev_stream = pu_index(p, HIR_BIN_MOD, pu_index(p, HIR_BIN_SUB, idx, hir_scalar_int(p, 1)),
                                           hir_scalar_named(p, "numberOfStreams"));
        hir_block_append(p, e, pu_stream_stmt(p, HIR_OP_SYNC_STREAM, -1, prev_stream));
        hir_scalar *to = pu_index(p, HIR_BIN_MOD,
                                  pu_index(p, HIR_BIN_ADD, stop, pu_index(p, HIR_BIN_SUB, rank, hir_scalar_int(p, 1))),
                                  stop);
        hir_scalar *from = pu_index(p, HIR_BIN_MOD, pu_index(p, HIR_BIN_ADD, rank, hir_scalar_int(p, 1)), stop);
        hir_comm *recv = hir_comm_new(p, HIR_OP_P2P);
        recv->is_send = false;
        recv->buffer = Rs;
        recv->peer = from;
        recv->backend = HIR_BK_CUDA;
        hir_comm *send = hir_comm_new(p, HIR_OP_P2P);
        send->is_send = true;
        send->buffer = Prev;
        send->peer = to;
        send->backend = HIR_BK_CUDA;
        hir_comm *pair[2] = {recv, send};
        hir_block_append(p, e, pu_share(p, 2, pair));
        /* the non-blocking half first, as in the all-gather ring: Get posts the send (it
         * raises flags, the receive pulls), Put posts the receive (it signals ready) */
        hir_block_append(p, e, pu_comm_stmt(p, c->put ? recv : send));
        hir_block_append(p, e, pu_comm_stmt(p, c->put ? send : recv));
        hir_block_append(p, e, pu_wait(p, send));
        hir_block_append(p, e, pu_wait(p, recv));
        hir_stmt *add = hir_stmt_new(p, HIR_OP_BINARY);
        add->out = As;
        add->u.ew.op = HIR_BIN_ADD;
        add->u.ew.infix = true;
        hir_value *v[2] = {&Rs->head, &Ps->head};
        hir_stmt_set_inputs(p, add, 2, v);
        hir_block_append(p, e, add);
        cond->u.cond.has_else = true;
        hir_block_append(p, b, cond);
    }
    hir_block_append(p, b, pu_stream_stmt(p, HIR_OP_SET_STREAM, main_stream, NULL));
    hir_block_append(p, b, pu_stream_stmt(p, HIR_OP_SYNC_STREAM, -1, worker));
    hir_ptrvec_push(p->arena, out, loop);

    if (cuda) {
        /* the last step summed this rank's own chunk: into the output, rounded once */
        hir_stmt *a = pu_allocate(p, O, false, pu_loc(p, r), c->d);
        if (!a)
            return -1;
        a->loc = r->loc;
        hir_ptrvec_push(p->arena, out, a);
        hir_iterdomain *ids[64];
        int n = 0;
        for (int k = 1; k < Acc->nloop && n < 64; k++)
            ids[n++] = hir_iterdomain_clone(p, Acc->shape.ids[k]);
        hir_tensor *mine = hir_tensor_new(p, HIR_MEM_LOCAL, HIR_DT_FLOAT, n, ids, Acc->mesh);
        hir_ptrvec_push(p->arena, out, pu_alias_select(p, mine, Acc, Acc->shape.ids[0], rank));
        hir_stmt *cp = cast_or_set(p, O, mine);
        cp->loc = r->loc;
        hir_ptrvec_push(p->arena, out, cp);
    }
    return 0;
}

int hir_stream_parallel_rs(hir_program *p, hir_backend_kind backend, bool put, hir_diag *d)
{
    hir_block *body = &p->body;
    int64_t dd;
    bool any = false;
    for (int i = 0; i < hir_block_size(body) && !any; i++)
        any = rs_pair(body, i, &dd);
    if (!any)
        return 0;
    rs c = {p, d, backend, put, pu_next_stream(p)};
    hir_ptrvec out = {0};
    for (int i = 0; i < hir_block_size(body); i++) {
        hir_stmt *s = hir_block_at(body, i);
        if (rs_pair(body, i, &dd)) {
            if (lower_pair(&c, s, hir_block_at(body, i + 1), dd, &out))
                return -1;
            i++;
            continue;
        }
        hir_ptrvec_push(p->arena, &out, s);
    }
    body->stmts = out;
    if (p->next_stream < c.next_stream)
        p->next_stream = c.next_stream;
    return 0;
}
