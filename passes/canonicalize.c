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
#include <string.h>

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

typedef struct fold { hir_program *p; int changed; hir_map keep; hir_scalar_memo memo; } fold;

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
    /* one memo per round: folding keeps every value, so each definition is evaluated once */
    if (!hir_scalar_eval_memo(s, NULL, &f->memo, &v, NULL, 0)) {
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

/* ---- structural classes (hash-consing): two scalars get the same class exactly when
 * hir_scalar_equal holds, computed bottom-up once per scalar, so merging n definitions costs
 * about n map operations instead of n^2 deep comparisons. */

typedef struct ckey {
    int tag;                     /* 1 expression, 2 int, 3 bool, 4 float, 5 named, 6 itself */
    int kind, op, nargs;         /* expressions: hir_sexpr_kind, operator, arity */
    const void *fn;
    uint64_t a[3];               /* argument classes, or the leaf's value */
} ckey;

typedef struct classes {
    hir_map of;                  /* scalar pointer -> class + 1 */
    hir_map active;              /* expressions on the stack (a cycle reaches one again) */
    hir_map first;               /* key hash -> first class + 1 with that hash */
    ckey *keys;
    int *next;                   /* next class with the same hash, -1 */
    int n, cap;
    struct cframe { const hir_scalar *s; int next; ckey k; } *stack;
    int ns, caps;
} classes;

static bool is_expr(const hir_scalar *s)
{
    return (s->kind == HIR_SC_ANON || s->kind == HIR_SC_SYMBOL) && s->def;
}

static uint64_t ckey_hash(const ckey *k)
{
    uint64_t h = hir_hash_bytes(k, sizeof *k);
    return h == UINT64_MAX ? 0 : h;
}

static int class_of_key(classes *c, const ckey *k)
{
    uint64_t h = ckey_hash(k);
    int at = (int)(uintptr_t)hir_map_get(&c->first, h) - 1;
    for (int i = at; i >= 0; i = c->next[i])
        if (!memcmp(&c->keys[i], k, sizeof *k))
            return i;
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 256;
        c->keys = realloc(c->keys, sizeof *c->keys * (size_t)c->cap);
        c->next = realloc(c->next, sizeof *c->next * (size_t)c->cap);
        hir_assert(c->keys && c->next);
    }
    c->keys[c->n] = *k;
    c->next[c->n] = at;
    hir_map_put(&c->first, h, (void *)(uintptr_t)(c->n + 1));
    return c->n++;
}

/* The key of a leaf (not an expression). */
static ckey leaf_key(const hir_scalar *s)
{
    ckey k;
    memset(&k, 0, sizeof k);   /* keys are compared and hashed as bytes */
    switch (s->kind) {
    case HIR_SC_INT: k.tag = 2; k.a[0] = (uint64_t)s->ival; break;
    case HIR_SC_BOOL: k.tag = 3; k.a[0] = (uint64_t)s->ival; break;
    case HIR_SC_FLOAT:
        if (s->fval != s->fval) {   /* NaN equals nothing */
            k.tag = 6;
            k.a[0] = (uint64_t)(uintptr_t)s;
            break;
        }
        k.tag = 4;
        k.op = s->dtype;
        double z = s->fval == 0 ? 0.0 : s->fval;   /* -0 == 0 */
        memcpy(&k.a[0], &z, sizeof z);
        break;
    case HIR_SC_NAMED: k.tag = 5; k.a[0] = (uint64_t)(uintptr_t)s->name; break;
    default: k.tag = 6; k.a[0] = (uint64_t)(uintptr_t)s; break;   /* only equal to itself */
    }
    return k;
}

static void class_push(classes *c, const hir_scalar *s)
{
    if (c->ns == c->caps) {
        c->caps = c->caps ? c->caps * 2 : 64;
        c->stack = realloc(c->stack, sizeof *c->stack * (size_t)c->caps);
        hir_assert(c->stack);
    }
    struct cframe *f = &c->stack[c->ns++];
    f->s = s;
    f->next = 0;
    memset(&f->k, 0, sizeof f->k);
    f->k.tag = 1;
    f->k.op = s->def->op;
    f->k.nargs = s->def->nargs;
    f->k.fn = s->def->kind == HIR_SX_CALL ? s->def->fn : NULL;
    f->k.kind = s->def->kind;
    hir_map_put(&c->active, (uint64_t)(uintptr_t)s, (void *)s);
}

/* Class of s, computed with an explicit stack (definition chains may be long). */
static int class_of(classes *c, const hir_scalar *s)
{
    int got = (int)(uintptr_t)hir_map_get(&c->of, (uint64_t)(uintptr_t)s) - 1;
    if (got >= 0)
        return got;
    if (!is_expr(s)) {
        ckey k = leaf_key(s);
        got = class_of_key(c, &k);
        hir_map_put(&c->of, (uint64_t)(uintptr_t)s, (void *)(uintptr_t)(got + 1));
        return got;
    }
    class_push(c, s);
    while (c->ns) {
        struct cframe *f = &c->stack[c->ns - 1];
        if (f->next < f->k.nargs) {
            const hir_scalar *a = f->s->def->args[f->next];
            int ac = -1;
            if (!a)
                ac = INT32_MAX;
            else if ((ac = (int)(uintptr_t)hir_map_get(&c->of, (uint64_t)(uintptr_t)a) - 1) < 0) {
                if (is_expr(a)) {
                    /* on a cycle (which the verifier reports) a only equals itself */
                    if (!hir_map_get(&c->active, (uint64_t)(uintptr_t)a)) {
                        class_push(c, a);
                        continue;
                    }
                    ckey k;
                    memset(&k, 0, sizeof k);
                    k.tag = 6;
                    k.a[0] = (uint64_t)(uintptr_t)a;
                    ac = class_of_key(c, &k);
                } else {
                    ckey k = leaf_key(a);
                    ac = class_of_key(c, &k);
                    hir_map_put(&c->of, (uint64_t)(uintptr_t)a, (void *)(uintptr_t)(ac + 1));
                }
            }
            f->k.a[f->next] = (uint64_t)ac;
            f->next++;
            continue;
        }
        got = class_of_key(c, &f->k);
        hir_map_put(&c->of, (uint64_t)(uintptr_t)f->s, (void *)(uintptr_t)(got + 1));
        hir_map_del(&c->active, (uint64_t)(uintptr_t)f->s);
        c->ns--;
    }
    return got;
}

static void classes_fini(classes *c)
{
    hir_map_fini(&c->of);
    hir_map_fini(&c->active);
    hir_map_fini(&c->first);
    free(c->keys);
    free(c->next);
    free(c->stack);
}

int hir_run_canonicalize(hir_program *p, const hir_pass_args *args, hir_diag *d)
{
    (void)args;
    (void)d;
    /* (1) folding, to a fixed point: a fold can expose an identity above it */
    for (int round = 0; round < 64; round++) {
        fold f;
        memset(&f, 0, sizeof f);
        f.p = p;
        hir_map_init_in(&f.keep, p->arena);
        hir_scalar_memo_init(&f.memo);
        hir_block_walk(&p->body, 0, stream_slots, &f.keep);
        pu_visit_scalars(p, true, fold_slot, &f);
        hir_map_fini(&f.keep);
        hir_scalar_memo_fini(&f.memo);
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
        classes c;
        memset(&c, 0, sizeof c);
        hir_map_init(&c.of);
        hir_map_init(&c.active);
        hir_map_init(&c.first);
        hir_map rep;   /* class -> its lowest-numbered definition */
        hir_map_init(&rep);
        for (int i = 0; i < defs.n; i++) {
            hir_scalar *b = defs.items[i];
            uint64_t k = (uint64_t)class_of(&c, b);
            hir_scalar *a = hir_map_get(&rep, k);
            if (!a)
                hir_map_put(&rep, k, b);
            else {
                hir_map_put(&m.to, (uint64_t)b->number, a);
                found++;
            }
        }
        hir_map_fini(&rep);
        classes_fini(&c);
        if (found)
            pu_visit_scalars(p, true, merge_slot, &m);
        hir_map_fini(&m.to);
        /* merged symbols stay in the symbol table, so a round finds them again; a round
         * that replaced nothing left the program as it was, and so would every later one
         * (stopping only at !found ran all 64 rounds over the whole program) */
        if (!found || !m.changed)
            break;
    }
    /* (3) dead trailer entries, deterministic order */
    pu_prune_index_defs(p, NULL);
    if (p->index_defs.n)
        qsort(p->index_defs.items, p->index_defs.n, sizeof(void *), by_number);
    return 0;
}

const hir_pass_option hir_opts_canonicalize[] = {{NULL, 0, NULL, NULL, NULL, false}};
