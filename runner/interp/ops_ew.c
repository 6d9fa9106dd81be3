/* ops_ew.c — element-wise statements (unary, binary, ternary) with broadcasting by stride-0
 * views; where the backend resolves them (ew_resolve), the plan is kept per statement and
 * issued directly while its operands and output are bound as they were. */
#include <stdlib.h>
#include <string.h>

#include "runner/interp/ops_internal.h"

/* ops_elementwise's record of one element-wise statement resolved by the backend
 * (ops->plans): the operands and output as they were bound when it was resolved, and the
 * backend's plan. A later execution whose operands and output are bound to exactly these views
 * (and whose integer scalars evaluate to the same values) issues the plan directly. */
typedef struct rt_ew {
    int nin;                /* operands compared: min(s->nin, 3) */
    hir_view in[3];         /* tensor operands as bound */
    int64_t si[3];          /* integer scalar operands as evaluated */
    hir_view out;           /* the output as bound */
    int nd;                 /* the result shape the output was bound with */
    int64_t shape[HIR_MAX_DIMS];
    hir_ew_plan *plan;
} rt_ew;

static int view_eq(const hir_view *a, const hir_view *b)
{
    if (a->data != b->data || a->dtype != b->dtype || a->ndim != b->ndim)
        return 0;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d] || a->stride[d] != b->stride[d])
            return 0;
    return 1;
}

void ops_ew_release(hir_interp *it)
{
    for (size_t i = 0; i < it->ew_plans.cap; i++) {
        rt_ew *c = it->ew_plans.vals[i];
        if (it->ew_plans.keys[i] != UINT64_MAX && c) {
            if (c->plan)
                it->be->ops->plans->free(it->be, c->plan);
            free(c);
        }
    }
    hir_map_fini(&it->ew_plans);
}

/* The statement's plan, when its operands and output are bound exactly as when it was resolved
 * (an unbound output is bound as the resolved run bound it): 1 after queuing it, 0 when there
 * is none or it does not fit (the caller resolves again), -1 on error. */
static int ew_fast(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    rt_ew *c = it->be->ops->plans && !it->cfg.no_resolve ? hir_map_get(&it->ew_plans, (uintptr_t)s) : NULL;
    if (!c)
        return 0;
    for (int i = 0; i < c->nin; i++) {
        hir_tensor *t = hir_value_tensor(s->in[i]);
        hir_view v;
        if (t) {
            if (!interp_bound(it, t, &v) || !view_eq(&v, &c->in[i]))
                return 0;
            continue;
        }
        hir_scalar *sc = hir_value_scalar(s->in[i]);
        int64_t x;
        if (sc->kind != HIR_SC_FLOAT) {
            if (interp_eval(it, sc, &x, e))
                return -1;
            if (x != c->si[i])
                return 0;
        }
    }
    hir_view o;
    /* the operands match, so the result shape is the resolved one: binding an unbound output
     * here binds what the full path would */
    if (!interp_bound(it, s->out, &o) && interp_out_view(it, s->out, c->nd, c->shape, &o, e))
        return -1;
    if (!view_eq(&o, &c->out))
        return 0;
    if (it->be->ops->plans->launch(it->be, it->cur, c->plan, e))
        return interp_backend_fail(it, e);
    return 1;
}

/* A kernel of the backend's own (casts and set are copies), and a backend that resolves. */
static int ew_resolvable(hir_interp *it, const hir_stmt *s)
{
    int plain = s->op != HIR_OP_UNARY || (s->u.ew.op >= 0 && s->u.ew.op != HIR_UN_SET);
    return plain && it->be->ops->plans != NULL && !it->cfg.no_resolve;
}

/* Resolve the statement with the backend, keep the plan for later executions, queue it. */
static int ew_resolve_run(hir_interp *it, const hir_stmt *s, const hir_view *views,
                          const hir_operand *ops, const hir_view *raw_out, const hir_view *o,
                          int nd, const int64_t *shape, hir_diag *e)
{
    const hir_backend_ops *bo = it->be->ops;
    const hir_operand *ins[3] = {&ops[0], &ops[1], &ops[2]};
    int kn = s->op == HIR_OP_UNARY ? 1 : s->op == HIR_OP_BINARY ? 2 : 3;
    hir_ew_plan *plan = NULL;
    if (bo->plans->resolve(it->be, kn, s->u.ew.op, o, ins, &plan, e))
        return interp_backend_fail(it, e);
    rt_ew *c = hir_map_get(&it->ew_plans, (uintptr_t)s);
    if (!c) {
        c = calloc(1, sizeof *c);
        if (!c || hir_map_try_put(&it->ew_plans, (uintptr_t)s, c)) {
            free(c);
            bo->plans->free(it->be, plan);
            return interp_fail(it, e, "out of host memory (keeping a resolved statement)");
        }
    } else if (c->plan) {
        bo->plans->free(it->be, c->plan);
    }
    c->nin = s->nin < 3 ? s->nin : 3;
    for (int i = 0; i < c->nin; i++) {
        memset(&c->in[i], 0, sizeof c->in[i]);
        c->si[i] = 0;
        if (!ops[i].is_scalar)
            c->in[i] = views[i];
        else
            c->si[i] = ops[i].i;
    }
    c->out = *raw_out;
    c->nd = nd;
    memcpy(c->shape, shape, sizeof(int64_t) * (size_t)nd);
    c->plan = plan;
    if (bo->plans->launch(it->be, it->cur, plan, e))
        return interp_backend_fail(it, e);
    return 0;
}

/* The operands of an element-wise statement: tensor views (their count in *nt) and scalars. */
static int ew_operands(hir_interp *it, const hir_stmt *s, hir_operand *ops, hir_view *views,
                       int *nt, hir_diag *e)
{
    memset(ops, 0, 3 * sizeof *ops);
    *nt = 0;
    for (int i = 0; i < s->nin && i < 3; i++) {
        hir_tensor *t = hir_value_tensor(s->in[i]);
        if (t) {
            if (interp_get(it, t, &views[i], e))
                return -1;
            (*nt)++;
            continue;
        }
        hir_scalar *sc = hir_value_scalar(s->in[i]);
        ops[i].is_scalar = 1;
        if (sc->kind == HIR_SC_FLOAT) {
            ops[i].f = sc->fval;
        } else {
            if (interp_eval(it, sc, &ops[i].i, e))
                return -1;
            ops[i].scalar_is_int = 1;
            ops[i].f = (double)ops[i].i;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- element-wise */

int ops_elementwise(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    int f = ew_fast(it, s, e);
    if (f)
        return f < 0 ? -1 : 0;
    hir_operand ops[3];
    hir_view views[3];
    int nt = 0, nd = 0;
    int64_t shape[HIR_MAX_DIMS];
    if (ew_operands(it, s, ops, views, &nt, e))
        return -1;
    /* result shape: broadcast of the tensor operands, at the output's rank */
    int ond;
    int64_t oshape[HIR_MAX_DIMS];
    int known = !interp_rt_shape(it, s->out, &ond, oshape, e);
    if (!known) {
        /* symbolic output extents: take the operands' shapes */
        ond = 0;
        for (int i = 0; i < s->nin; i++)
            if (!ops[i].is_scalar && views[i].ndim > ond)
                ond = views[i].ndim;
        for (int d = 0; d < ond; d++)
            oshape[d] = 1;
    }
    nd = ond;
    for (int d = 0; d < nd; d++)
        shape[d] = 1;
    for (int i = 0; i < s->nin && i < 3; i++) {
        if (ops[i].is_scalar)
            continue;
        if (views[i].ndim > nd)
            return interp_fail(it, e, "operand %d has more dimensions than the output", i);
        for (int d = 0; d < views[i].ndim; d++) {
            int od = d + nd - views[i].ndim;
            if (views[i].shape[d] != 1)
                shape[od] = views[i].shape[d];
        }
    }
    if (!nt)
        memcpy(shape, oshape, sizeof shape);
    hir_view o;
    if (interp_out_view(it, s->out, nd, shape, &o, e))
        return -1;
    hir_view raw_out = o;
    if (o.ndim != nd) {   /* bound output with other unit dims: align by squeezing */
        hir_view q = interp_view_squeezed(&o);
        hir_view w;
        hir_view_init(&w, o.data, o.dtype, nd, shape);
        int k = 0;
        for (int d = 0; d < nd; d++)
            w.stride[d] = shape[d] == 1 ? 0 : q.stride[k++];
        o = w;
    }
    for (int i = 0; i < s->nin && i < 3; i++)
        if (!ops[i].is_scalar && interp_broadcast_to(it, &views[i], nd, shape, &ops[i].view, e))
            return -1;
    if (hir_view_numel(&o) == 0)
        return 0;
    if (nt && known && ew_resolvable(it, s))
        return ew_resolve_run(it, s, views, ops, &raw_out, &o, nd, shape, e);
    int rc = 0;
    if (s->op == HIR_OP_UNARY) {
        if (s->u.ew.op < 0 && !hir_ewise_is_cast(s->u.ew.fn))
            return interp_fail(it, e, "has no run-time meaning on the host: not one of"
                               " nvFuser's unary operators or casts that hir knows");
        if (s->u.ew.op < 0 || s->u.ew.op == HIR_UN_SET) {   /* casts and set are copies */
            if (ops[0].is_scalar)
                rc = it->be->ops->fill(it->be, it->cur, &o, ops[0].f, e);
            else
                rc = it->be->ops->copy(it->be, it->cur, &o, &ops[0].view, e);
        } else {
            rc = it->be->ops->unary(it->be, it->cur, (hir_unary_op)s->u.ew.op, &o, &ops[0], e);
        }
    } else if (s->op == HIR_OP_BINARY) {
        rc = it->be->ops->binary(it->be, it->cur, (hir_binary_op)s->u.ew.op, &o, &ops[0],
                                 &ops[1], e);
    } else {
        rc = it->be->ops->ternary(it->be, it->cur, (hir_ternary_op)s->u.ew.op, &o, &ops[0],
                                  &ops[1], &ops[2], e);
    }
    return rc ? interp_backend_fail(it, e) : 0;
}
