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
 * Needs: a program lowered by --stream-parallel (any backend; after --backend,
 *   --defer-send-wait and --hoist-handle-exchange or before them, in any order).
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

/* ---------------------------------------------------------------- who names a tensor */

#define MAX_NAMED 64

static void add(hir_tensor **ts, int *n, hir_tensor *t)
{
    if (!t || *n >= MAX_NAMED)
        return;
    for (int i = 0; i < *n; i++)
        if (ts[i] == t)
            return;
    ts[(*n)++] = t;
}

static void add_comm(hir_tensor **ts, int *n, const hir_comm *c)
{
    if (c) {
        add(ts, n, c->buffer);
        add(ts, n, c->input);
        add(ts, n, c->output);
    }
}

/* The tensors s names (each once); false when there are more than MAX_NAMED, which the
 * caller takes as "names everything". */
static bool named(const hir_stmt *s, hir_tensor **ts, int *n)
{
    *n = 0;
    add(ts, n, s->out);
    for (int i = 0; i < s->nin; i++)
        add(ts, n, hir_value_tensor(s->in[i]));
    switch (s->op) {
    case HIR_OP_ALLOCATE: add(ts, n, s->u.alloc.alias); break;
    case HIR_OP_COMMUNICATION: case HIR_OP_P2P: case HIR_OP_END_COAL: case HIR_OP_CPERM:
        add_comm(ts, n, s->u.comm);
        break;
    case HIR_OP_SHARE_HANDLES:
        for (int i = 0; i < s->u.share.n; i++)
            add_comm(ts, n, s->u.share.comms[i]);
        break;
    case HIR_OP_DISPATCH: case HIR_OP_COMBINE:
        if (s->u.moe) {
            add(ts, n, s->u.moe->hidden[0]);
            add(ts, n, s->u.moe->hidden[1]);
        }
        break;
    case HIR_OP_SDPA: case HIR_OP_SDPA_BWD:
        for (int i = 0; s->u.sdpa && i < 3; i++)
            add(ts, n, s->u.sdpa->extra[i]);
        break;
    default: break;
    }
    return *n < MAX_NAMED;
}

/* how many statements of the program name each tensor (tensor -> count), in one walk */
typedef struct refs {
    hir_map count;
    bool overflow;               /* a statement named too many to list: trust no count */
} refs;

typedef struct fwd_ctx {
    hir_program *p;
    refs refs;
    int forwarded;
} fwd_ctx;

static bool count_refs(hir_stmt *s, int depth, void *ctx)
{
    (void)depth;
    refs *r = ctx;
    hir_tensor *ts[MAX_NAMED];
    int n;
    r->overflow |= !named(s, ts, &n);
    for (int i = 0; i < n; i++) {
        uint64_t k = (uint64_t)(uintptr_t)ts[i];
        hir_map_put(&r->count, k, (void *)((uintptr_t)hir_map_get(&r->count, k) + 1));
    }
    return true;
}

static uintptr_t refs_of(const fwd_ctx *c, const hir_tensor *t)
{
    return c->refs.overflow ? UINTPTR_MAX : (uintptr_t)hir_map_get(&c->refs.count, (uint64_t)(uintptr_t)t);
}

static bool in_values(const hir_ptrvec *v, const hir_tensor *t)
{
    for (int i = 0; i < v->n; i++)
        if (hir_value_tensor(v->items[i]) == t)
            return true;
    return false;
}

/* ---------------------------------------------------------------- who writes a tensor */

typedef struct writes {
    const hir_tensor *t;
    bool yes;
} writes;

static bool writes_t(const hir_stmt *s, const hir_tensor *t)
{
    hir_tensor *ts[MAX_NAMED];
    int n;
    hir_tensor *outs[16];
    int no = pu_stmt_outputs((hir_stmt *)s, outs, 16);
    for (int i = 0; i < no; i++)
        if (outs[i] == t)
            return true;
    if ((s->op == HIR_OP_P2P && s->u.comm && !s->u.comm->is_send && s->u.comm->buffer == t) ||
        ((s->op == HIR_OP_COMMUNICATION || s->op == HIR_OP_CPERM) && s->u.comm && s->u.comm->output == t))
        return true;
    if (s->op == HIR_OP_DISPATCH || s->op == HIR_OP_COMBINE || s->op == HIR_OP_SDPA ||
        s->op == HIR_OP_SDPA_BWD || s->op == HIR_OP_POST_ON_STREAM || s->op == HIR_OP_LAUNCH_KERNEL) {
        /* out-of-line or listed outputs: any tensor it names counts as written */
        if (!named(s, ts, &n))
            return true;
        for (int i = 0; i < n; i++)
            if (ts[i] == t)
                return true;
    }
    return false;
}

static bool find_write(hir_stmt *s, int depth, void *ctx)
{
    (void)depth;
    writes *w = ctx;
    w->yes |= writes_t(s, w->t);
    return !w->yes;
}

/* whether a statement of b from position `from` on, at any depth, writes t */
static bool written_from(hir_block *b, int from, const hir_tensor *t)
{
    writes w = {t, false};
    for (int i = from; i < hir_block_size(b) && !w.yes; i++) {
        hir_stmt *s = hir_block_at(b, i);
        find_write(s, 0, &w);
        if (!w.yes)
            hir_block_walk(&s->body, 1, find_write, &w);
        if (!w.yes)
            hir_block_walk(&s->else_body, 1, find_write, &w);
    }
    return w.yes;
}

/* statements of b[from, to), nested ones included, that name t */
static uintptr_t names_in(hir_block *b, int from, int to, const hir_tensor *t)
{
    refs r = {{0}, false};
    uintptr_t n = 0;
    hir_map_init(&r.count);
    for (int i = from; i < to; i++) {
        hir_stmt *s = hir_block_at(b, i);
        count_refs(s, 0, &r);
        hir_block_walk(&s->body, 1, count_refs, &r);
        hir_block_walk(&s->else_body, 1, count_refs, &r);
    }
    n = r.overflow ? UINTPTR_MAX - 1 : (uintptr_t)hir_map_get(&r.count, (uint64_t)(uintptr_t)t);
    hir_map_fini(&r.count);
    return n;
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
    if (names_in(body, def + 1, at, v) || names_in(body, 0, hir_block_size(body), v) != refs_of(c, v))
        return;
    /* (4) nothing but its ALLOCATE and that view names G; not a program input or output */
    if (in_values(&c->p->inputs, g) || in_values(&c->p->outputs, g) || refs_of(c, g) != 2)
        return;
    /* (5) the shard is not written in the loop, V not after the exchange; X only here */
    if (written_from(body, 0, s) || written_from(body, at + 1, v) || refs_of(c, x) != 2)
        return;
    sel->out = v;
    sel->out_loc = copy->out_loc;
    hir_ptrvec_remove(&t->stmts, 1);
    c->forwarded++;
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
    hir_map_init_in(&c.refs.count, p->arena);
    hir_block_walk(&p->body, 0, count_refs, &c.refs);
    hir_block_walk(&p->body, 0, visit, &c);
    hir_map_fini(&c.refs.count);
    return 0;
}

const hir_pass_option hir_opts_forward_local_shard[] = {
    {NULL, 0, NULL, NULL, NULL, false},
};
