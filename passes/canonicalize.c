/* canonicalize.c — --canonicalize: tidies index arithmetic without changing meaning.
 *
 * Needs: nothing.
 * Changes: (1) integer/boolean scalar expressions that depend on no runtime value are folded
 *   to literals (`8 * 128` -> 1048576; only definitions that evaluate without error, so
 *   a division by zero stays as written), and x+0, 0+x, x-0, x*1, 1*x, x/1 become x;
 *   (2) numbered symbols whose definitions are structurally equal become one (the lowest
 *   number survives); a stream index stays an expression, since "Stream 7" would name a
 *   stream object rather than the stream with index 7; (3) "Index definitions:" entries that nothing references are dropped
 *   and the rest are printed in number order. Floating-point expressions are left alone.
 * Idempotent: a second run changes nothing.
 */
#include "passes/ir_util.h"
#include "passes/passes.h"

#include <stdlib.h>

static bool is_bool_valued(const hir_scalar *s)
{
    if (s->dtype == HIR_DT_BOOL)
        return true;
    const hir_sexpr *e = s->def;
    if (!e)
        return false;
    if (e->kind == HIR_SX_UNARY && e->op == HIR_UN_NOT)
        return true;
    return e->kind == HIR_SX_BINARY &&
           (e->op == HIR_BIN_EQ || e->op == HIR_BIN_NE || e->op == HIR_BIN_LT || e->op == HIR_BIN_LE ||
            e->op == HIR_BIN_GT || e->op == HIR_BIN_GE || e->op == HIR_BIN_AND || e->op == HIR_BIN_OR);
}

static bool is_int_or_bool(const hir_scalar *s)
{
    switch (s->dtype) {
    case HIR_DT_BOOL: case HIR_DT_INT8: case HIR_DT_INT16: case HIR_DT_INT32: case HIR_DT_INT64:
    case HIR_DT_UINT8: case HIR_DT_UINT16: case HIR_DT_UINT32: case HIR_DT_UINT64: case HIR_DT_INDEX:
        return true;
    default:
        return false;
    }
}

static bool is_lit(const hir_scalar *s, int64_t v) { return s->kind == HIR_SC_INT && s->ival == v; }

typedef struct fold { hir_program *p; int changed; hir_map keep; } fold;

/* "Stream ( e )" must keep an expression: "Stream 7" would name stream object 7, a
 * different stream than the one with index 7 (hostir-format.md 1.5). */
static bool stream_slots(hir_stmt *s, int depth, void *ctx)
{
    (void)depth;
    if ((hir_ops[s->op].flags & HIR_OPF_STREAM) && s->u.stream.index)
        hir_map_put(ctx, (uint64_t)(uintptr_t)&s->u.stream.index >> 1, s);
    return true;
}

static void fold_slot(hir_scalar **slot, void *ctx)
{
    fold *f = ctx;
    hir_scalar *s = *slot;
    if (!s->def || hir_scalar_is_literal(s) || !is_int_or_bool(s))
        return;
    if (hir_map_get(&f->keep, (uint64_t)(uintptr_t)slot >> 1))
        return;
    int64_t v;
    if (hir_scalar_const(s, &v)) {
        *slot = is_bool_valued(s) ? hir_scalar_bool(f->p, v != 0) : hir_scalar_int(f->p, v);
        f->changed++;
        return;
    }
    const hir_sexpr *e = s->def;
    if (e->kind != HIR_SX_BINARY || is_bool_valued(s))
        return;
    hir_scalar *a = e->args[0], *b = e->args[1], *keep = NULL;
    switch (e->op) {
    case HIR_BIN_ADD: keep = is_lit(a, 0) ? b : is_lit(b, 0) ? a : NULL; break;
    case HIR_BIN_SUB: keep = is_lit(b, 0) ? a : NULL; break;
    case HIR_BIN_MUL: keep = is_lit(a, 1) ? b : is_lit(b, 1) ? a : NULL; break;
    case HIR_BIN_DIV: keep = is_lit(b, 1) ? a : NULL; break;
    default: break;
    }
    if (keep) {
        *slot = keep;
        f->changed++;
    }
}

typedef struct merge { hir_map to; int changed; } merge;

static void merge_slot(hir_scalar **slot, void *ctx)
{
    merge *m = ctx;
    if ((*slot)->kind != HIR_SC_SYMBOL)
        return;
    hir_scalar *t = hir_map_get(&m->to, (uint64_t)(*slot)->number);
    if (t) {
        *slot = t;
        m->changed++;
    }
}

static int by_number(const void *a, const void *b)
{
    const hir_scalar *x = *(hir_scalar *const *)a, *y = *(hir_scalar *const *)b;
    return x->number < y->number ? -1 : x->number > y->number;
}

int hir_run_canonicalize(hir_program *p, const hir_pass_args *args, hir_diag *d)
{
    (void)args;
    (void)d;
    /* (1) folding, to a fixed point: a fold can expose an identity above it */
    for (int round = 0; round < 64; round++) {
        fold f = {p, 0, {0}};
        hir_map_init_in(&f.keep, p->arena);
        hir_block_walk(&p->body, 0, stream_slots, &f.keep);
        pu_visit_scalars(p, true, fold_slot, &f);
        hir_map_fini(&f.keep);
        if (!f.changed)
            break;
    }
    /* (2) merging structurally equal definitions, lowest number first */
    for (int round = 0; round < 64; round++) {
        hir_ptrvec defs = {0};
        for (size_t i = 0; i < p->symbols.cap; i++) {
            hir_scalar *s = p->symbols.vals[i];
            if (p->symbols.keys[i] != UINT64_MAX && s && s->def)
                hir_ptrvec_push(p->arena, &defs, s);
        }
        if (defs.n)
            qsort(defs.items, defs.n, sizeof(void *), by_number);
        merge m;
        hir_map_init_in(&m.to, p->arena);
        m.changed = 0;
        int found = 0;
        for (int i = 0; i < defs.n; i++) {
            hir_scalar *a = defs.items[i];
            if (hir_map_get(&m.to, (uint64_t)a->number))
                continue;
            for (int j = i + 1; j < defs.n; j++) {
                hir_scalar *b = defs.items[j];
                if (!hir_map_get(&m.to, (uint64_t)b->number) && hir_scalar_equal(a, b)) {
                    hir_map_put(&m.to, (uint64_t)b->number, a);
                    found++;
                }
            }
        }
        if (found)
            pu_visit_scalars(p, true, merge_slot, &m);
        hir_map_fini(&m.to);
        if (!found)
            break;
    }
    /* (3) dead trailer entries, deterministic order */
    pu_prune_index_defs(p, NULL);
    if (p->index_defs.n)
        qsort(p->index_defs.items, p->index_defs.n, sizeof(void *), by_number);
    return 0;
}

const hir_pass_option hir_opts_canonicalize[] = {{NULL, NULL, NULL}};
