/* forward_local_shard.c — --forward-local-shard: in an all-gather pipeline, the GEMM of the
 * chunk a rank holds itself reads that shard where it lies, instead of a copy of it in the
 * gathered buffer.
 *
 * Why: --stream-parallel lowers an all-gather + GEMM as nvFuser does: every loop iteration
 * selects the chunk's slot in the gathered buffer, fills it from a peer (the exchange's
 * else-branch) or, for the rank's own chunk, copies the local shard into it (`Set`, the
 * then-branch), and the chunk's GEMM reads the slot. When nothing but that loop reads the
 * gathered buffer, the copy is work no one needs: m/d × k elements read and written per rank
 * and iteration (256 MiB each way at the headline shape with d = 4), on the stream of the
 * first chunk's GEMM, which waits for it. Here the then-branch selects the slot's view from
 * the local shard instead: the GEMM reads the rank's own input, the copy is gone.
 *
 * Needs: a program lowered by --stream-parallel (any backend; before or after --backend and
 *   --defer-send-wait; before --hoist-handle-exchange, whose handle loop names the gathered
 *   buffer once more, so that after it nothing is forwarded).
 * Changes: an `IF` directly in a FOR body is rewritten when (1) its then-branch is
 *   `X = HirAliasSelect(S, axis, index)` then `V = Set(X)`; (2) its else-branch receives into
 *   V (a P2PCommunication recv, or a Communication whose output is V); (3) V is defined
 *   earlier in the same loop body as `V = HirAliasSelect(G, ...)`, and X has V's extents;
 *   (4) G, the gathered buffer, is neither an input nor an output of the program and nothing
 *   else reads or writes it (its ALLOCATE and that one view aside), so no one can see that
 *   the rank's own slot is no longer filled; (5) nothing in the loop writes S, nothing after
 *   the IF writes V, and nothing else names X. The then-branch becomes
 *   `V = HirAliasSelect(S, axis, index)`: V names the shard's rows for the rest of the
 *   iteration, and the next iteration's view of G names the slot again. An IF that does not
 *   qualify is left as it is, silently (the pass is an optimization, not a requirement);
 *   `hir-opt --pass-statistics` shows one statement fewer per forwarded exchange. Running it
 *   twice changes nothing. --backend recognises the forwarded exchange and keeps it.
 * What it costs: the gathered buffer no longer holds the rank's own shard after the loop;
 *   condition (4) is why that is invisible. --strip-communication of the result keeps no copy
 *   at all (the compute-only ceiling of this form is the GEMMs alone).
 */
#include "passes/ir_util.h"
#include "passes/passes.h"

#include <stdbool.h>
#include <stdint.h>

/* ---------------------------------------------------------------- who names, who writes */

#define MAX_NAMED 64

static bool names_t(const hir_stmt *s, const hir_tensor *t)
{
    hir_tensor *ts[MAX_NAMED];
    int n = pu_stmt_tensors(s, ts, MAX_NAMED);
    if (n < 0)
        return true;   /* too many to list: assume it does */
    for (int i = 0; i < n; i++)
        if (ts[i] == t)
            return true;
    return false;
}

static bool writes_t(const hir_stmt *s, const hir_tensor *t)
{
    hir_tensor *outs[MAX_NAMED];
    int n = pu_stmt_outputs((hir_stmt *)s, outs, MAX_NAMED);
    for (int i = 0; i < n; i++)
        if (outs[i] == t)
            return true;
    switch (s->op) {
    case HIR_OP_P2P:
        return s->u.comm && !s->u.comm->is_send && s->u.comm->buffer == t;
    case HIR_OP_COMMUNICATION: case HIR_OP_CPERM:
        return s->u.comm && s->u.comm->output == t;
    case HIR_OP_DISPATCH: case HIR_OP_COMBINE: case HIR_OP_SDPA: case HIR_OP_SDPA_BWD:
    case HIR_OP_POST_ON_STREAM: case HIR_OP_LAUNCH_KERNEL:
        return names_t(s, t);   /* out-of-line or listed outputs: whatever it names */
    default:
        return false;
    }
}

typedef bool (*tensor_pred)(const hir_stmt *s, const hir_tensor *t);

typedef struct scan {
    tensor_pred pred;
    const hir_tensor *t;
    int n;
} scan;

static bool scan_stmt(hir_stmt *s, int depth, void *ctx)
{
    (void)depth;
    scan *c = ctx;
    c->n += c->pred(s, c->t);
    return true;
}

/* how many statements of b[from, to), nested ones included, satisfy pred for t */
static int count_in(hir_block *b, int from, int to, tensor_pred pred, const hir_tensor *t)
{
    scan c = {pred, t, 0};
    for (int i = from; i < to; i++) {
        hir_stmt *s = hir_block_at(b, i);
        scan_stmt(s, 0, &c);
        hir_block_walk(&s->body, 1, scan_stmt, &c);
        hir_block_walk(&s->else_body, 1, scan_stmt, &c);
    }
    return c.n;
}

/* how many statements of the program name each tensor (tensor -> count), in one walk */
typedef struct fwd_ctx {
    hir_program *p;
    hir_map refs;
    bool overflow;               /* a statement named too many to list: trust no count */
} fwd_ctx;

static bool count_refs(hir_stmt *s, int depth, void *ctx)
{
    (void)depth;
    fwd_ctx *c = ctx;
    hir_tensor *ts[MAX_NAMED];
    int n = pu_stmt_tensors(s, ts, MAX_NAMED);
    c->overflow |= n < 0;
    for (int i = 0; i < n; i++) {
        uint64_t k = (uint64_t)(uintptr_t)ts[i];
        hir_map_put(&c->refs, k, (void *)((uintptr_t)hir_map_get(&c->refs, k) + 1));
    }
    return true;
}

/* statements of the program that name t; -1 when no count can be trusted */
static int refs_of(const fwd_ctx *c, const hir_tensor *t)
{
    return c->overflow ? -1 : (int)(uintptr_t)hir_map_get(&c->refs, (uint64_t)(uintptr_t)t);
}

static bool in_values(const hir_ptrvec *v, const hir_tensor *t)
{
    for (int i = 0; i < v->n; i++)
        if (hir_value_tensor(v->items[i]) == t)
            return true;
    return false;
}

/* ---------------------------------------------------------------- the rewrite */

static bool same_extents(const hir_tensor *a, const hir_tensor *b)
{
    if (a->nloop != b->nloop)
        return false;
    hir_iterdomain **ia = a->shape.ids ? a->shape.ids : a->loop, **ib = b->shape.ids ? b->shape.ids : b->loop;
    if (a->nloop && (!ia || !ib))
        return false;
    for (int i = 0; i < a->nloop; i++) {
        if (!ia[i] || !ib[i])
            return false;
        hir_scalar *x = ia[i]->extent, *y = ib[i]->extent;
        int64_t u, v;
        if (x == y)
            continue;
        if (!x || !y || !hir_scalar_const(x, &u) || !hir_scalar_const(y, &v) || u != v)
            return false;
    }
    return true;
}

/* whether the else-branch e fills v from a peer */
static bool receives_into(hir_block *e, const hir_tensor *v)
{
    for (int i = 0; i < hir_block_size(e); i++) {
        const hir_stmt *s = hir_block_at(e, i);
        if (s->op == HIR_OP_P2P && s->u.comm && !s->u.comm->is_send && s->u.comm->buffer == v)
            return true;
        if (s->op == HIR_OP_COMMUNICATION && s->u.comm && s->u.comm->output == v)
            return true;
        /* the kind=auto form picks between two receives with an inner IF */
        if (s->op == HIR_OP_IF && (receives_into((hir_block *)&s->body, v) ||
                                   receives_into((hir_block *)&s->else_body, v)))
            return true;
    }
    return false;
}

static void try_forward(fwd_ctx *c, hir_block *body, int at)
{
    hir_stmt *cond = hir_block_at(body, at);
    hir_block *t = &cond->body;
    if (hir_block_size(t) != 2)
        return;
    hir_stmt *sel = hir_block_at(t, 0), *copy = hir_block_at(t, 1);
    if (sel->op != HIR_OP_ALIAS_SELECT || sel->nin != 1 || copy->op != HIR_OP_SET || copy->nin != 1 ||
        hir_value_tensor(copy->in[0]) != sel->out || !sel->out || !copy->out)
        return;
    hir_tensor *x = sel->out, *v = copy->out, *s = hir_value_tensor(sel->in[0]);
    if (!s || !receives_into(&cond->else_body, v) || !same_extents(x, v) || x->dtype != v->dtype)
        return;
    /* (3) V is a view of the gathered buffer G, made earlier in this loop body */
    int def = at - 1;
    while (def >= 0 && hir_block_at(body, def)->out != v)
        def--;
    if (def < 0)
        return;
    hir_stmt *view = hir_block_at(body, def);
    hir_tensor *g = view->op == HIR_OP_ALIAS_SELECT && view->nin == 1 ? hir_value_tensor(view->in[0]) : NULL;
    if (!g || g == s)
        return;
    /* nothing reads the slot between its view and the exchange, nothing outside the loop
     * names V (what it would read there is the last iteration's binding) */
    int nb = hir_block_size(body);
    if (count_in(body, def + 1, at, names_t, v) || count_in(body, 0, nb, names_t, v) != refs_of(c, v))
        return;
    /* (4) nothing but its ALLOCATE and that view names G; not a program input or output */
    if (in_values(&c->p->inputs, g) || in_values(&c->p->outputs, g) || refs_of(c, g) != 2)
        return;
    /* (5) the shard is not written in the loop, V not after the exchange; X only here */
    if (count_in(body, 0, nb, writes_t, s) || count_in(body, at + 1, nb, writes_t, v) || refs_of(c, x) != 2)
        return;
    sel->out = v;
    sel->out_loc = copy->out_loc;
    hir_ptrvec_remove(&t->stmts, 1);
}

static bool visit(hir_stmt *loop, int depth, void *ctx)
{
    (void)depth;
    if (loop->op != HIR_OP_FOR)
        return true;
    hir_block *body = &loop->body;
    for (int i = 0; i < hir_block_size(body); i++)
        if (hir_block_at(body, i)->op == HIR_OP_IF)
            try_forward(ctx, body, i);
    return true;
}

int hir_run_forward_local_shard(hir_program *p, const hir_pass_args *args, hir_diag *d)
{
    (void)args;
    (void)d;
    fwd_ctx c = {.p = p};
    hir_map_init_in(&c.refs, p->arena);
    hir_block_walk(&p->body, 0, count_refs, &c);
    hir_block_walk(&p->body, 0, visit, &c);
    hir_map_fini(&c.refs);
    return 0;
}

const hir_pass_option hir_opts_forward_local_shard[] = {
    {NULL, 0, NULL, NULL, NULL, false},
};
