/* interp_scan.c — what the interpreter reads from the whole program once, when it is made:
 * whether it is in 2026 syntax (form2026: roots are team positions; shapes come from the
 * tensors' views, not from it), the
 * CollectivePermutes that are steps of a ring over a loop variable (hostir-2026.md §3.10) and
 * the ShardByStreams of those loops, whose stream axis is swizzled. CollectivePermute
 * (ops_permute.c) and ShardByStream (ops_view.c) read the maps it fills. */
#include <stdlib.h>

#include "runner/interp/interp_internal.h"

static const hir_sexpr *bin_def(const hir_scalar *s, int op)
{
    if (!s || !s->def || s->def->kind != HIR_SX_BINARY || s->def->op != op || s->def->nargs != 2)
        return NULL;
    return s->def;
}

static int int_lit(const hir_scalar *s, int64_t *v)
{
    if (!s || s->kind != HIR_SC_INT || s->def)
        return 0;
    *v = s->ival;
    return 1;
}

/* The two peer shapes of nvFuser's dispatchSwizzle1D (hostir-2026.md §3.10):
 * recv_peer = ( ( x + t ) % n ), send_peer = ( ( n + ( t - x ) ) % n ), with the same loop
 * variable x and the same integer constants t and n in both. */
static int ring_match(const hir_comm *c, const hir_scalar **x, int64_t *n)
{
    int cr;
    const hir_sexpr *m, *a, *m2, *a2, *d2;
    int64_t n1, t1, n2, n3, t2, k;
    if (!(m = bin_def(c->recv_peer, HIR_BIN_MOD)) || !int_lit(m->args[1], &n1) ||
        !(a = bin_def(m->args[0], HIR_BIN_ADD)) || !int_lit(a->args[1], &t1))
        return 0;
    if (!(m2 = bin_def(c->send_peer, HIR_BIN_MOD)) || !int_lit(m2->args[1], &n2) ||
        !(a2 = bin_def(m2->args[0], HIR_BIN_ADD)) || !int_lit(a2->args[0], &n3) ||
        !(d2 = bin_def(a2->args[1], HIR_BIN_SUB)) || !int_lit(d2->args[0], &t2))
        return 0;
    const hir_scalar *xr = a->args[0], *xs = d2->args[1];
    if (n1 != n2 || n2 != n3 || t1 != t2 || n1 <= 0 || !xr || !xs ||
        !(xr == xs || hir_scalar_equal(xr, xs)))
        return 0;
    if ((cr = hir_scalar_eval(xr, NULL, &k, NULL, 0)) != -1)
        return cr == HIR_ENOMEM ? -1 : 0;   /* a constant is no loop variable */
    *x = xr;
    *n = n1;
    return 1;
}

static bool same_scalar(const hir_scalar *a, const hir_scalar *b)
{
    return a == b || (a && b && hir_scalar_equal(a, b));
}

static rt_ring *find_ring(hir_interp *it, const hir_block *b, const hir_scalar *x)
{
    for (int i = 0; i < hir_block_size(b); i++) {
        const hir_stmt *s = hir_block_at(b, i);
        rt_ring *r = NULL;
        if (s->op == HIR_OP_CPERM && (r = hir_map_get(&it->rings, (uintptr_t)s)) &&
            same_scalar(r->x, x))
            return r;
        if ((r = find_ring(it, &s->body, x)) || (r = find_ring(it, &s->else_body, x)))
            return r;
    }
    return NULL;
}

/* -1: out of memory */
static int mark_shards(hir_interp *it, const hir_block *b, rt_ring *r)
{
    for (int i = 0; i < hir_block_size(b); i++) {
        const hir_stmt *s = hir_block_at(b, i);
        if (s->op == HIR_OP_SHARD_BY_STREAM && !hir_map_get(&it->swizzled, (uintptr_t)s) &&
            hir_map_try_put(&it->swizzled, (uintptr_t)s, r))
            return -1;
        if (mark_shards(it, &s->body, r) || mark_shards(it, &s->else_body, r))
            return -1;
    }
    return 0;
}

/* Once per interpreter: the program's generation, the ring steps and the swizzled
 * ShardByStreams of their loops. -1: out of memory. */
int interp_scan_2026(hir_interp *it, const hir_block *b, int depth)
{
    if (depth > HIR_MAX_NESTING)
        return 0;   /* exec_block refuses such a program before anything runs */
    for (int i = 0; i < hir_block_size(b); i++) {
        const hir_stmt *s = hir_block_at(b, i);
        if (s->form == HIR_FORM_2026 || s->op == HIR_OP_HIR_ALLOCATE || s->op == HIR_OP_CPERM ||
            s->op == HIR_OP_DISPATCH || s->op == HIR_OP_COMBINE ||
            (s->op == HIR_OP_COMMUNICATION && s->u.comm && s->u.comm->type == HIR_COMM_ALLTOALL))
            it->form2026 = 1;
        const hir_scalar *x;
        int64_t n;
        int m = s->op == HIR_OP_CPERM && s->u.comm ? ring_match(s->u.comm, &x, &n) : 0;
        if (m < 0)
            return -1;
        if (m && n == s->u.comm->nteam) {
            rt_ring *r = calloc(1, sizeof *r);
            if (!r || hir_map_try_put(&it->rings, (uintptr_t)s, r)) {
                free(r);
                return -1;
            }
            r->x = x;
            r->n = n;
            r->pos = interp_team_index(s->u.comm->team, s->u.comm->nteam, it->cfg.rank);
        }
        if (interp_scan_2026(it, &s->body, depth + 1) ||
            interp_scan_2026(it, &s->else_body, depth + 1))
            return -1;
        const hir_scalar *idx = s->op == HIR_OP_FOR ? s->u.kfor.index
                                : s->op == HIR_OP_HOST_FOR ? s->u.hfor.index : NULL;
        rt_ring *r;
        if (idx && (r = find_ring(it, &s->body, idx)) && mark_shards(it, &s->body, r))
            return -1;
    }
    return 0;
}

void interp_scan_free(hir_interp *it)
{
    for (size_t i = 0; i < it->rings.cap; i++)
        if (it->rings.keys[i] != UINT64_MAX)
            free(it->rings.vals[i]);
    hir_map_fini(&it->rings);
    hir_map_fini(&it->swizzled);
}
