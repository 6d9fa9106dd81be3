/* expr.c — evaluation, constant folding and structural comparison of scalar expressions
 * (loop indices, peers, predicates, extents). Integer semantics are dialect/intops.h's, the
 * same as the backends'; a result that does not fit in 64 bits is refused, not wrapped. */
#include "dialect/hir.h"

#include "dialect/intops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool hir_scalar_is_literal(const hir_scalar *s)
{
    return s->kind == HIR_SC_INT || s->kind == HIR_SC_BOOL || s->kind == HIR_SC_FLOAT;
}

static int fail(char *msg, size_t len, const char *what, const hir_scalar *s)
{
    if (msg && len) {
        if (s && s->kind == HIR_SC_SYMBOL)
            snprintf(msg, len, "%s '%s%lld'", what, s->name, (long long)s->number);
        else if (s && s->kind == HIR_SC_NAMED)
            snprintf(msg, len, "%s '%s'", what, s->name);
        else
            snprintf(msg, len, "%s", what);
    }
    return -1;
}

static int overflow(char *msg, size_t len) { return fail(msg, len, "integer overflow in index expression", NULL); }

/* The status of a dialect/intops.h operation as the index evaluator reports it: a wrapped
 * result is refused (an index, extent or peer that does not fit in 64 bits is a user error),
 * never used; division by zero is an error. The value itself is intops.h's, as everywhere. */
static int iop_status(int st, char *msg, size_t len)
{
    if (st == HIR_IOP_DIV0)
        return fail(msg, len, "division by zero in index expression", NULL);
    return st ? overflow(msg, len) : 0;
}

static int eval_binary(int op, int64_t a, int64_t b, int64_t *r, char *msg, size_t len)
{
    switch (op) {
    case HIR_BIN_ADD: return iop_status(hir_iop_add(a, b, r), msg, len);
    case HIR_BIN_SUB: return iop_status(hir_iop_sub(a, b, r), msg, len);
    case HIR_BIN_MUL: return iop_status(hir_iop_mul(a, b, r), msg, len);
    case HIR_BIN_DIV: return iop_status(hir_iop_div(a, b, r), msg, len);
    case HIR_BIN_MOD:
    case HIR_BIN_FMOD: return iop_status(hir_iop_mod(a, b, r), msg, len);
    case HIR_BIN_REMAINDER: return iop_status(hir_iop_remainder(a, b, r), msg, len);
    case HIR_BIN_CEILDIV: return iop_status(hir_iop_ceildiv(a, b, r), msg, len);
    case HIR_BIN_EQ: *r = a == b; return 0;
    case HIR_BIN_NE: *r = a != b; return 0;
    case HIR_BIN_LT: *r = a < b; return 0;
    case HIR_BIN_LE: *r = a <= b; return 0;
    case HIR_BIN_GT: *r = a > b; return 0;
    case HIR_BIN_GE: *r = a >= b; return 0;
    case HIR_BIN_AND: *r = a && b; return 0;
    case HIR_BIN_OR: *r = a || b; return 0;
    case HIR_BIN_BITAND: *r = a & b; return 0;
    case HIR_BIN_BITOR: *r = a | b; return 0;
    case HIR_BIN_XOR: *r = a ^ b; return 0;
    case HIR_BIN_SHL: return iop_status(hir_iop_shl(a, b, r), msg, len);
    case HIR_BIN_SHR: return iop_status(hir_iop_shr(a, b, r), msg, len);
    case HIR_BIN_MAX: case HIR_BIN_FMAX: *r = a > b ? a : b; return 0;
    case HIR_BIN_MIN: case HIR_BIN_FMIN: *r = a < b ? a : b; return 0;
    case HIR_BIN_GCD: return iop_status(hir_iop_gcd(a, b, r), msg, len);
    case HIR_BIN_POW:
        if (b < 0)   /* a fraction in an index: refused as a user error */
            return fail(msg, len, "negative exponent in index expression", NULL);
        return iop_status(hir_iop_pow(a, b, r), msg, len);
    default:
        return fail(msg, len, "operator not supported on integers in index expression", NULL);
    }
}

/* The value of one definition from the values of its arguments. */
static int eval_sexpr(const hir_sexpr *e, const int64_t *a, int64_t *out, char *msg, size_t len)
{
    switch (e->kind) {
    case HIR_SX_BINARY:
        return eval_binary(e->op, a[0], a[1], out, msg, len);
    case HIR_SX_UNARY:
        switch (e->op) {
        case HIR_UN_NEG: return iop_status(hir_iop_neg(a[0], out), msg, len);
        case HIR_UN_NOT: *out = !a[0]; return 0;
        case HIR_UN_BITNOT: *out = ~a[0]; return 0;
        case HIR_UN_ABS: return iop_status(hir_iop_abs(a[0], out), msg, len);
        case HIR_UN_SET: case HIR_UN_CEIL: case HIR_UN_FLOOR: case HIR_UN_ROUND:
        case HIR_UN_TRUNC:
            *out = a[0];
            return 0;
        default:
            return fail(msg, len, "operator not supported on integers in index expression", NULL);
        }
    case HIR_SX_TERNARY:
        if (e->op == HIR_TER_WHERE) {
            *out = a[0] ? a[1] : a[2];
            return 0;
        }
        if (e->op == HIR_TER_CLAMP) {
            *out = a[0] < a[1] ? a[1] : a[0] > a[2] ? a[2] : a[0];
            return 0;
        }
        return fail(msg, len, "operator not supported on integers in index expression", NULL);
    case HIR_SX_CALL:
        /* casts between integer types keep the value */
        if (e->nargs == 1) {
            *out = a[0];
            return 0;
        }
        return fail(msg, len, "unknown function in index expression", NULL);
    }
    return fail(msg, len, "bad expression", NULL);
}

/* ---- the memo: one record per definition reached, so a shared subexpression (a DAG of
 * definitions, which a short text can make exponentially large as a tree) is evaluated once,
 * and an explicit stack instead of recursion, so long chains cannot exhaust the C stack. */

enum { MEMO_ACTIVE = 1, MEMO_DONE, MEMO_FAILED };

struct hir_scalar_memo_rec {
    int64_t v;
    int state;
};

struct hir_eval_frame {
    const hir_scalar *s;
    size_t rec;
    int next;
    int64_t a[3];
};

void hir_scalar_memo_init(hir_scalar_memo *m) { memset(m, 0, sizeof *m); }

void hir_scalar_memo_init_in(hir_scalar_memo *m, hir_arena *oom)
{
    memset(m, 0, sizeof *m);
    m->oom = oom;
}

void hir_scalar_memo_fini(hir_scalar_memo *m)
{
    hir_map_fini(&m->at);
    free(m->rec);
    free(m->stack);
    memset(m, 0, sizeof *m);
}

/* Room for need items in *p (moved and *cap updated); -1, with *p as it was, when the memory
 * cannot be had. */
static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap * 2 : 64;
    while (n < need)
        n *= 2;
    void *q = n <= SIZE_MAX / elem ? realloc(*p, n * elem) : NULL;
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

#define NO_REC SIZE_MAX   /* memo_rec: out of memory */

/* The record of s, made on first sight (state 0). */
static size_t memo_rec(hir_scalar_memo *m, const hir_scalar *s)
{
    uintptr_t at = (uintptr_t)hir_map_get(&m->at, (uint64_t)(uintptr_t)s);
    if (at)
        return at - 1;
    if (grow((void **)&m->rec, &m->cap, m->n + 1, sizeof *m->rec) ||
        hir_map_try_put(&m->at, (uint64_t)(uintptr_t)s, (void *)(uintptr_t)(m->n + 1)))
        return NO_REC;
    m->rec[m->n] = (struct hir_scalar_memo_rec){0, 0};
    return m->n++;
}

/* A leaf's value (0), a definition to evaluate (1), or a failure (-1). */
static int leaf(const hir_scalar *s, const hir_scalar_env *env, int64_t *out, char *msg, size_t len)
{
    switch (s->kind) {
    case HIR_SC_INT:
    case HIR_SC_BOOL:
        *out = s->ival;
        return 0;
    case HIR_SC_FLOAT:
        /* the range check keeps the conversion defined */
        if (!isfinite(s->fval) || s->fval < -9223372036854775808.0 || s->fval >= 9223372036854775808.0 ||
            s->fval != (double)(int64_t)s->fval)
            return fail(msg, len, "floating-point value used as an index", s);
        *out = (int64_t)s->fval;
        return 0;
    case HIR_SC_NAMED:
    case HIR_SC_SYMBOL:
        if (env && env->lookup && env->lookup(env->ctx, s, out) == 0)
            return 0;
        if (!s->def)
            return fail(msg, len, "unbound value", s);
        return 1;
    case HIR_SC_ANON:
        if (!s->def)
            return fail(msg, len, "value without definition", s);
        return 1;
    }
    return fail(msg, len, "bad scalar", NULL);
}

int hir_scalar_eval_memo(const hir_scalar *s, const hir_scalar_env *env, hir_scalar_memo *m,
                         int64_t *out, char *msg, size_t msglen)
{
    if (msg && msglen)
        msg[0] = 0;
    int r = leaf(s, env, out, msg, msglen);
    if (r <= 0)
        return r;
    size_t base = m->sn;   /* the stack is empty between calls; kept for its capacity */
    const hir_scalar *c = s;
    for (;;) {
        /* c is a definition to evaluate: its memo, or a new frame */
        size_t ri = memo_rec(m, c);
        if (ri == NO_REC)
            goto oom;
        int64_t v = 0;
        bool have = false;
        switch (m->rec[ri].state) {
        case MEMO_DONE:
            v = m->rec[ri].v;
            have = true;
            break;
        case MEMO_FAILED:
            fail(msg, msglen, "cannot evaluate", c);
            goto failed;
        case MEMO_ACTIVE:
            fail(msg, msglen, "cyclic definition of", c);
            goto failed;
        default:
            if (grow((void **)&m->stack, &m->scap, m->sn + 1, sizeof *m->stack))
                goto oom;
            m->rec[ri].state = MEMO_ACTIVE;
            m->stack[m->sn++] = (struct hir_eval_frame){c, ri, 0, {0, 0, 0}};
            break;
        }
        if (have && m->sn == base) {   /* the root, evaluated by an earlier call */
            *out = v;
            return 0;
        }
        /* run frames until one needs a definition evaluated, or the root is done */
        for (;;) {
            struct hir_eval_frame *f = &m->stack[m->sn - 1];
            if (have) {
                f->a[f->next++] = v;
                have = false;
            }
            const hir_sexpr *e = f->s->def;
            if (f->next < e->nargs && f->next < 3) {
                const hir_scalar *arg = e->args[f->next];
                int lr = leaf(arg, env, &v, msg, msglen);
                if (lr < 0)
                    goto failed;
                if (lr == 0) {
                    have = true;
                    continue;
                }
                c = arg;
                break;
            }
            if (eval_sexpr(e, f->a, &v, msg, msglen))
                goto failed;
            m->rec[f->rec].v = v;
            m->rec[f->rec].state = MEMO_DONE;
            if (--m->sn == base) {
                *out = v;
                return 0;
            }
            have = true;
        }
    }
failed:
    /* whatever was being evaluated depends on the failure; the innermost named definition
     * being evaluated is where it happened */
    m->failed_at = s;
    for (size_t i = m->sn; i > base; i--)
        if (m->stack[i - 1].s->kind != HIR_SC_ANON) {
            m->failed_at = m->stack[i - 1].s;
            break;
        }
    /* a named definition that failed stays failed; an unnamed one is evaluated afresh when it
     * is reached again (the parser shares equal unnamed expressions between statements, and
     * each statement gets the failure's own message) */
    while (m->sn > base) {
        const struct hir_eval_frame *f = &m->stack[--m->sn];
        m->rec[f->rec].state = f->s->kind == HIR_SC_ANON ? 0 : MEMO_FAILED;
    }
    return -1;
oom:
    /* nothing was learnt about the definitions being evaluated: they go back to unknown, so a
     * later call evaluates them afresh */
    while (m->sn > base)
        m->rec[m->stack[--m->sn].rec].state = 0;
    if (m->oom)
        hir_arena_oom(m->oom);
    fail(msg, msglen, "out of memory", NULL);
    return HIR_ENOMEM;
}

int hir_scalar_eval(const hir_scalar *s, const hir_scalar_env *env, int64_t *out, char *msg,
                    size_t msglen)
{
    hir_scalar_memo m;
    hir_scalar_memo_init(&m);
    int r = hir_scalar_eval_memo(s, env, &m, out, msg, msglen);
    hir_scalar_memo_fini(&m);
    return r;
}

/* ---- the quick path: a small tree of unnamed definitions (an IF predicate, a stream index)
 * evaluated without a memo, in the memo's order. It answers only where the memo would answer
 * the same: a value, or a failure at a free leaf (a named scalar or symbol with no definition
 * and, without an env, no binding) reached before anything else could fail. A named
 * definition (whose memo record may already say more), any other failure, a FLOAT leaf, more
 * than QUICK_NODES definitions or a deeper tree: HIR_EVAL_UNSURE, and the caller asks the
 * memo. */
enum { QUICK_DEPTH = 16, QUICK_NODES = 64, QUICK_DEF = -1 };

static int quick_leaf(const hir_scalar *s, int64_t *out)
{
    switch (s->kind) {
    case HIR_SC_INT:
    case HIR_SC_BOOL:
        *out = s->ival;
        return 0;
    case HIR_SC_NAMED:
    case HIR_SC_SYMBOL:
        return s->def ? HIR_EVAL_UNSURE : HIR_EVAL_FREE;
    case HIR_SC_ANON:
        return s->def ? QUICK_DEF : HIR_EVAL_UNSURE;
    default:
        return HIR_EVAL_UNSURE;
    }
}

int hir_scalar_eval_quick(const hir_scalar *s, int64_t *out)
{
    struct { const hir_sexpr *e; int next; int64_t a[3]; } st[QUICK_DEPTH];
    int r = quick_leaf(s, out);
    if (r != QUICK_DEF)
        return r;
    int n = 0, nodes = 0;
    int64_t v = 0;
    bool have = false;
    const hir_scalar *c = s;
    for (;;) {
        if (n == QUICK_DEPTH || ++nodes > QUICK_NODES)
            return HIR_EVAL_UNSURE;
        st[n].e = c->def;
        st[n].next = 0;
        n++;
        for (;;) {
            if (have) {
                st[n - 1].a[st[n - 1].next++] = v;
                have = false;
            }
            const hir_sexpr *e = st[n - 1].e;
            if (st[n - 1].next < e->nargs && st[n - 1].next < 3) {
                c = e->args[st[n - 1].next];
                r = quick_leaf(c, &v);
                if (r == 0) {
                    have = true;
                    continue;
                }
                if (r != QUICK_DEF)
                    return r;
                break;
            }
            if (eval_sexpr(e, st[n - 1].a, &v, NULL, 0))
                return HIR_EVAL_UNSURE;
            if (--n == 0) {
                *out = v;
                return 0;
            }
            have = true;
        }
    }
}

bool hir_scalar_const(const hir_scalar *s, int64_t *out)
{
    return hir_scalar_eval(s, NULL, out, NULL, 0) == 0;
}

/* ---- structural equality and dependence, also without recursion: explicit stacks of
 * scalars or scalar pairs; a pair (or node) seen once is not walked again. */

typedef struct spair { const hir_scalar *a, *b; } spair;

typedef struct sstack {
    spair *items;
    size_t n, cap;
    spair local[32];
} sstack;

/* false when the stack cannot grow (out of memory) */
static bool sstack_push(sstack *st, const hir_scalar *a, const hir_scalar *b)
{
    if (st->n == st->cap) {
        size_t cap = st->cap * 2;
        spair *p = st->items == st->local ? malloc(cap * sizeof *p) : realloc(st->items, cap * sizeof *p);
        if (!p)
            return false;
        if (st->items == st->local)
            memcpy(p, st->local, sizeof st->local);
        st->items = p;
        st->cap = cap;
    }
    st->items[st->n++] = (spair){a, b};
    return true;
}

static void sstack_init(sstack *st)
{
    st->items = st->local;
    st->n = 0;
    st->cap = sizeof st->local / sizeof st->local[0];
}

static void sstack_fini(sstack *st)
{
    if (st->items != st->local)
        free(st->items);
}

/* Set of scalar pairs (open addressing; the pairs themselves are the keys, so it is exact). */
typedef struct pairset { spair *slot; size_t n, cap; } pairset;

static uint64_t pair_hash(spair p)
{
    uint64_t x = (uint64_t)(uintptr_t)p.a * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uintptr_t)p.b;
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ULL;
    return x ^ (x >> 29);
}

/* true if p was not in the set (and is now, unless the set could not grow: then the caller
 * walks p again, which costs time, never correctness) */
static bool pairset_add(pairset *ps, spair p)
{
    if (2 * (ps->n + 1) > ps->cap) {
        pairset big = {calloc(ps->cap ? ps->cap * 2 : 64, sizeof(spair)), 0, ps->cap ? ps->cap * 2 : 64};
        if (!big.slot)
            return true;
        for (size_t i = 0; i < ps->cap; i++)
            if (ps->slot[i].a)
                pairset_add(&big, ps->slot[i]);
        free(ps->slot);
        *ps = big;
    }
    for (size_t i = pair_hash(p) & (ps->cap - 1);; i = (i + 1) & (ps->cap - 1)) {
        if (!ps->slot[i].a) {
            ps->slot[i] = p;
            ps->n++;
            return true;
        }
        if (ps->slot[i].a == p.a && ps->slot[i].b == p.b)
            return false;
    }
}

static bool is_expr(const hir_scalar *s)
{
    return (s->kind == HIR_SC_ANON || s->kind == HIR_SC_SYMBOL) && s->def;
}

/* 0: differ; 1: equal; 2: same operator, the arguments decide */
static int head_equal(const hir_scalar *a, const hir_scalar *b)
{
    if (a == b)
        return 1;
    if (!a || !b)
        return 0;
    if (is_expr(a) && is_expr(b)) {
        const hir_sexpr *x = a->def, *y = b->def;
        if (x->kind != y->kind || x->op != y->op || x->nargs != y->nargs)
            return 0;
        if (x->kind == HIR_SX_CALL && x->fn != y->fn)
            return 0;
        return 2;
    }
    if (a->kind != b->kind)
        return 0;
    switch (a->kind) {
    case HIR_SC_INT:
    case HIR_SC_BOOL:
        return a->ival == b->ival;
    case HIR_SC_FLOAT:
        return a->fval == b->fval && a->dtype == b->dtype;
    case HIR_SC_NAMED:
        return a->name == b->name;
    default:
        return 0;   /* distinct symbols without definitions */
    }
}

bool hir_scalar_equal(const hir_scalar *a, const hir_scalar *b)
{
    int h = head_equal(a, b);
    if (h != 2)
        return h;
    /* A pair already compared (or being compared) is not compared again: equal DAGs cost
     * their size, not the size of their trees, and a cycle ends. */
    sstack st;
    sstack_init(&st);
    pairset seen = {0};
    bool eq = sstack_push(&st, a, b);
    while (eq && st.n) {
        spair p = st.items[--st.n];
        h = head_equal(p.a, p.b);
        if (h != 2) {
            eq = h;
            continue;
        }
        if (!pairset_add(&seen, p))
            continue;
        for (int i = p.a->def->nargs - 1; i >= 0 && eq; i--)
            eq = sstack_push(&st, p.a->def->args[i], p.b->def->args[i]);   /* false: not shown */
    }
    free(seen.slot);
    sstack_fini(&st);
    return eq;
}

bool hir_scalar_depends_on(const hir_scalar *s, const hir_scalar *leaf)
{
    sstack st;
    sstack_init(&st);
    hir_map seen;
    hir_map_init(&seen);
    bool found = false;
    if (s && !sstack_push(&st, s, NULL))
        found = true;   /* out of memory: "may depend" */
    while (!found && st.n) {
        const hir_scalar *x = st.items[--st.n].a;
        if (x == leaf || (x->kind == HIR_SC_NAMED && leaf->kind == HIR_SC_NAMED && x->name == leaf->name)) {
            found = true;
            break;
        }
        if (!x->def || hir_map_get(&seen, (uint64_t)(uintptr_t)x))
            continue;
        (void)hir_map_try_put(&seen, (uint64_t)(uintptr_t)x, (void *)x);   /* else: walked again */
        for (int i = x->def->nargs - 1; i >= 0 && !found; i--)
            if (x->def->args[i] && !sstack_push(&st, x->def->args[i], NULL))
                found = true;   /* out of memory: "may depend" */
    }
    hir_map_fini(&seen);
    sstack_fini(&st);
    return found;
}
