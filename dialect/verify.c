/* verify.c — what makes a program well formed and runnable: definitions before uses with block
 * scoping, Wait targets, coalescing groups, shapes of linear/matmul, dtypes and meshes that must
 * agree, expression numbers, ShareMemHandles membership, axes and arity from the op table.
 * Every finding is a located diagnostic; IR made by passes has no locations, so each message
 * names the statement and the values involved on its own. */
#include "dialect/hir.h"

#include <limits.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

static bool resolve_one(hir_stmt *s, int depth, void *ctx)
{
    hir_program *p = ctx;
    if (s->op == HIR_OP_WAIT)
        s->u.wait.target = hir_comm_get(p, s->u.wait.number);
    return true;
}

void hir_program_resolve_waits(hir_program *p) { hir_block_walk(&p->body, 0, resolve_one, p); }

/* ------------------------------------------------------------------ sets */

/* A set of pointers with real deletion (linear probing, backward-shift removal), for the
 * tables whose members come and go: the values in scope and the definitions one check_scalar
 * is walking. It holds only what is in it now, so it stays as small as the deepest scope, where
 * a hir_map would keep a slot for every value ever defined. Growth that fails jumps to the
 * arena's recovery point (the set is left as it was, and freed there). */
typedef struct vset {
    uintptr_t *keys;             /* 0: an empty slot */
    size_t cap, n;               /* cap: 0 or a power of two */
    hir_arena *oom;
} vset;

static size_t vs_home(const vset *s, uintptr_t k)
{
    uint64_t h = (uint64_t)k * 0x9E3779B97F4A7C15ULL;
    return (size_t)(h ^ (h >> 29)) & (s->cap - 1);
}

static bool vs_has(const vset *s, const void *p)
{
    uintptr_t k = (uintptr_t)p;
    if (!s->n)
        return false;
    for (size_t i = vs_home(s, k);; i = (i + 1) & (s->cap - 1)) {
        if (s->keys[i] == k)
            return true;
        if (!s->keys[i])
            return false;
    }
}

static void vs_insert(vset *s, uintptr_t k)
{
    size_t i = vs_home(s, k);
    while (s->keys[i])
        i = (i + 1) & (s->cap - 1);
    s->keys[i] = k;
    s->n++;
}

/* Adds p (not NULL, not yet in the set). */
static void vs_add(vset *s, const void *p)
{
    if ((s->n + 1) * 2 > s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 64;
        uintptr_t *nk = ncap <= SIZE_MAX / sizeof *nk ? calloc(ncap, sizeof *nk) : NULL;
        if (!nk)
            hir_arena_oom(s->oom);
        uintptr_t *ok = s->keys;
        size_t ocap = s->cap;
        s->keys = nk;
        s->cap = ncap;
        s->n = 0;
        for (size_t i = 0; i < ocap; i++)
            if (ok[i])
                vs_insert(s, ok[i]);
        free(ok);
    }
    vs_insert(s, (uintptr_t)p);
}

static void vs_del(vset *s, const void *p)
{
    uintptr_t k = (uintptr_t)p;
    if (!s->n)
        return;
    size_t mask = s->cap - 1, i = vs_home(s, k);
    while (s->keys[i] != k) {
        if (!s->keys[i])
            return;
        i = (i + 1) & mask;
    }
    /* move back every later member of the run that may live at i */
    for (size_t j = (i + 1) & mask; s->keys[j]; j = (j + 1) & mask) {
        size_t h = vs_home(s, s->keys[j]);
        if (((j - h) & mask) >= ((j - i) & mask)) {
            s->keys[i] = s->keys[j];
            i = j;
        }
    }
    s->keys[i] = 0;
    s->n--;
}

static void vs_fini(vset *s)
{
    free(s->keys);
    s->keys = NULL;
    s->cap = s->n = 0;
}

/* ------------------------------------------------------------------ context */

/* Values in scope are members of `defined`; every block records the members it added in
 * `trail` so they can be dropped when the block ends. */
typedef struct vctx {
    hir_program *p;
    hir_diag *d;
    const hir_verify_opts *o;
    int errors;
    vset defined;                /* the values in scope */
    const void **trail;          /* keys added, in order */
    int ntrail, captrail;
    hir_map stmt_defined;        /* symbols defined by a SCALAR_DEF statement */
    bool stmt_defined_known;     /* stmt_defined is filled on first need (is_stmt_defined) */
    hir_map reported;            /* undefined values reported once */
    vset visiting;               /* definitions already walked by one check_scalar */
    const hir_scalar **work, **seen;   /* check_scalar's explicit stack and walked nodes */
    int nwork, capwork, capseen;
    hir_map comm_stmt;           /* expression number -> first executing statement */
    hir_map inputs;              /* program input tensors */
    hir_map deallocated;         /* tensor -> the Deallocate that ended its binding */
    hir_scalar_memo consts;      /* values of constant definitions, each computed once */
} vctx;

static uint64_t key(const void *p) { return (uint64_t)(uintptr_t)p; }

/* The verifier allocates nothing in the program's arena: it may run after every pass. */
static void define(vctx *v, const void *val, hir_loc l)
{
    (void)l;
    if (!val || vs_has(&v->defined, val))
        return;
    vs_add(&v->defined, val);
    if (v->ntrail == v->captrail) {
        v->captrail = v->captrail ? v->captrail * 2 : 256;
        const void **nt = realloc(v->trail, sizeof *v->trail * v->captrail);
        if (!nt)
            hir_arena_oom(v->p->arena);   /* back to hir_program_verify */
        v->trail = nt;
    }
    v->trail[v->ntrail++] = val;
}

static void undefine(vctx *v, const void *val) { vs_del(&v->defined, val); }

static bool is_defined(vctx *v, const void *val) { return vs_has(&v->defined, val); }

/* A table of the verifier with room for need items; when it cannot grow, the verifier jumps to
 * the recovery point of oom (the program's arena): the table is left as it was, so it is freed
 * there. */
static void *grow_ptrs_sized(hir_arena *oom, void *items, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return items;
    int n = *cap ? *cap : 128;
    while (n < need) {
        if (n > INT_MAX / 2)
            hir_arena_oom(oom);
        n *= 2;
    }
    void *grown = realloc(items, elem * (size_t)n);
    if (!grown)
        hir_arena_oom(oom);
    *cap = n;
    return grown;
}

static void *grow_ptrs(vctx *v, void *items, int *cap, int need)
{
    return grow_ptrs_sized(v->p->arena, items, cap, need, sizeof(void *));
}

/* hir_scalar_const for the verifier: running out of memory jumps to its recovery point instead
 * of counting as "not a constant". Literals and small unnamed expressions (every extent of a
 * parsed program) are decided without a memo. */
static bool vconst(vctx *v, const hir_scalar *s, int64_t *out)
{
    if (s->kind == HIR_SC_INT || s->kind == HIR_SC_BOOL) {
        *out = s->ival;
        return true;
    }
    int q = hir_scalar_eval_quick(s, out);
    if (q != HIR_EVAL_UNSURE)
        return q == 0;
    int r = hir_scalar_eval(s, NULL, out, NULL, 0);
    if (r == HIR_ENOMEM)
        hir_arena_oom(v->p->arena);
    return r == 0;
}

static void push_work(vctx *v, const hir_scalar *s)
{
    v->work = grow_ptrs(v, v->work, &v->capwork, v->nwork + 1);
    v->work[v->nwork++] = s;
}

static hir_diag_entry *verr(vctx *v, hir_loc l, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static hir_diag_entry *verr(vctx *v, hir_loc l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hir_diag_entry *e = hir_diag_vemit(v->d, HIR_ERROR, l, fmt, ap);
    va_end(ap);
    v->errors++;
    return e;
}

/* The place of `spelling` inside a statement (parsed programs): the statement's range, or its
 * first line for FOR/IF whose range is the keyword only. Falls back to the statement. */
static hir_loc find_in(hir_loc sl, const char *spelling)
{
    if (!sl.src || !spelling || !*spelling)
        return sl;
    const char *t = sl.src->text;
    size_t end = sl.end, n = strlen(spelling);
    size_t eol = sl.begin;
    while (eol < sl.src->len && t[eol] != '\n')
        eol++;
    if (eol > end)
        end = eol;
    for (size_t i = sl.begin; i + n <= end; i++) {
        if (memcmp(t + i, spelling, n))
            continue;
        char before = i > 0 ? t[i - 1] : ' ', after = i + n < sl.src->len ? t[i + n] : ' ';
        bool word_b = (before >= 'a' && before <= 'z') || (before >= 'A' && before <= 'Z') ||
                      (before >= '0' && before <= '9') || before == '_' || before == '.';
        bool word_a = (after >= 'a' && after <= 'z') || (after >= 'A' && after <= 'Z') ||
                      (after >= '0' && after <= '9') || after == '_' || after == '.';
        if (!word_b && !word_a) {
            hir_loc l = {sl.src, (uint32_t)i, (uint32_t)(i + n)};
            return l;
        }
    }
    return sl;
}

static void scalar_name(const hir_scalar *s, char *buf, size_t n)
{
    if (s->kind == HIR_SC_SYMBOL)
        snprintf(buf, n, "%s%lld", s->name, (long long)s->number);
    else if (s->kind == HIR_SC_NAMED)
        snprintf(buf, n, "%s", s->name);
    else
        snprintf(buf, n, "?");
}

static const char *op_name(const hir_stmt *s)
{
    static const char *fmt_names[] = {[HIR_OP_UNARY] = "unary operation",
                                      [HIR_OP_BINARY] = "binary operation",
                                      [HIR_OP_TERNARY] = "ternary operation",
                                      [HIR_OP_SCALAR_DEF] = "scalar definition"};
    if (hir_ops[s->op].keyword)
        return hir_ops[s->op].keyword;
    return fmt_names[s->op] ? fmt_names[s->op] : "statement";
}

/* ------------------------------------------------------------------ scalars */

static bool named_is_global(const char *n)
{
    switch (n[0]) {              /* the first byte picks the one name it can be */
    case 'r': return !strcmp(n, "rank");
    case 'n': return !strcmp(n, "numberOfStreams");
    case 'c': return !strcmp(n, "cacheId");
    case 'd': return !strncmp(n, "deviceIdx.", 10);
    default: return false;
    }
}

static void undefined_use(vctx *v, const hir_scalar *s, hir_loc where, const char *why)
{
    if (hir_map_get(&v->reported, key(s)))
        return;
    hir_map_put(&v->reported, key(s), (void *)s);
    char nm[64];
    scalar_name(s, nm, sizeof nm);
    hir_loc l = find_in(where, nm);
    hir_severity sev = v->o && v->o->undefined_is_error ? HIR_ERROR : HIR_WARNING;
    /* to run, a free value (a symbolic extent such as i0) needs a value from the command line */
    char hint[160];
    if (sev == HIR_ERROR && !*why && !s->def) {
        snprintf(hint, sizeof hint, " (a free value such as a symbolic extent: give it with --bind %s=N)", nm);
        why = hint;
    }
    hir_diag_entry *e = hir_diag_emit(v->d, sev, l, "use of undefined value '%s'%s", nm, why);
    if (sev == HIR_ERROR)
        v->errors++;
    if (s->def && s->def_loc.src)
        hir_diag_note(v->d, e, s->def_loc, "'%s' is defined here, after its use", nm);
}

static bool collect_defs(hir_stmt *s, int depth, void *ctx)
{
    vctx *v = ctx;
    if (s->op == HIR_OP_SCALAR_DEF && s->u.sdef.out)
        hir_map_put(&v->stmt_defined, key(s->u.sdef.out), s->u.sdef.out);
    return true;
}

/* Is the symbol s defined by a SCALAR_DEF statement (anywhere in the program)? The statements
 * are collected by one walk, made only when a symbol with a definition is used out of scope:
 * most programs never need it. */
static bool is_stmt_defined(vctx *v, const hir_scalar *s)
{
    if (!v->stmt_defined_known) {
        hir_block_walk(&v->p->body, 0, collect_defs, v);
        v->stmt_defined_known = true;
    }
    return hir_map_get(&v->stmt_defined, key(s)) != NULL;
}

/* A definition that depends on no runtime value and whose value does not fit in 64 bits is
 * refused like a literal that does not fit. Each definition is evaluated once (v->consts), and
 * an overflow is reported once, at the named definition where it happens (`where` when it is
 * inside an unnamed expression). A division by zero is left to run time (it may be guarded).
 * Small unnamed expressions are decided without the memo (hir_scalar_eval_quick). */
static void check_overflow(vctx *v, const hir_scalar *s, hir_loc where)
{
    int64_t val;
    if (!s->def || hir_scalar_eval_quick(s, &val) != HIR_EVAL_UNSURE)
        return;   /* a value, or stopped by a free value first: no overflow either way */
    char why[160];
    if (!hir_scalar_eval_memo(s, NULL, &v->consts, &val, why, sizeof why) ||
        strncmp(why, "integer overflow", 16))
        return;
    const hir_scalar *at = v->consts.failed_at;
    char nm[64];
    if (at && at->kind != HIR_SC_ANON) {
        scalar_name(at, nm, sizeof nm);
        verr(v, at->def_loc.src ? at->def_loc : where,
             "integer overflow: the value of '%s' does not fit in 64 bits", nm);
    } else
        verr(v, where, "integer overflow: the value of this index expression does not fit in 64 bits");
}

/* Has check_scalar walked s already? While it has walked few definitions, they are looked up in
 * v->seen directly; beyond SEEN_LINEAR they are kept in v->visiting too. */
enum { SEEN_LINEAR = 16 };
static bool seen_has(const vctx *v, int nseen, const hir_scalar *s)
{
    for (int i = 0; i < nseen; i++)
        if (v->seen[i] == s)
            return true;
    return false;
}

/* Checks that s can be evaluated at a statement at `where`: every leaf is a literal, a value
 * in scope, a runtime-bound named scalar, or a symbol whose definition is checked in turn.
 * Walks the definitions with an explicit stack, each once (seen_has, v->visiting), so a long
 * chain or a widely shared DAG of definitions costs its size; cycles are reported by
 * check_cycles. */
static void check_scalar(vctx *v, const hir_scalar *root, hir_loc where)
{
    if (!root || hir_scalar_is_literal(root))
        return;
    check_overflow(v, root, where);
    int nseen = 0;
    bool hashed = false;         /* the walked definitions are in v->visiting too */
    v->nwork = 0;
    push_work(v, root);
    while (v->nwork) {
        const hir_scalar *s = v->work[--v->nwork];
        if (!s || hir_scalar_is_literal(s) || is_defined(v, s))
            continue;
        if (s->kind == HIR_SC_NAMED) {
            if (named_is_global(s->name))
                continue;
            if (!strcmp(s->name, "streamIdx") || !strcmp(s->name, "StreamIdx")) {
                undefined_use(v, s, where, " outside a loop that binds it");
                continue;
            }
            undefined_use(v, s, where, "");
            continue;
        }
        if (s->kind == HIR_SC_SYMBOL && (!s->def || is_stmt_defined(v, s))) {
            undefined_use(v, s, where, "");
            continue;
        }
        if (!s->def || (hashed ? vs_has(&v->visiting, s) : seen_has(v, nseen, s)))
            continue;
        v->seen = grow_ptrs(v, v->seen, &v->capseen, nseen + 1);
        v->seen[nseen++] = s;
        if (hashed)
            vs_add(&v->visiting, s);
        else if (nseen > SEEN_LINEAR) {
            hashed = true;
            for (int i = 0; i < nseen; i++)
                vs_add(&v->visiting, v->seen[i]);
        }
        for (int i = s->def->nargs - 1; i >= 0; i--)
            push_work(v, s->def->args[i]);
    }
    if (hashed)
        for (int i = 0; i < nseen; i++)
            vs_del(&v->visiting, v->seen[i]);
}

/* ------------------------------------------------------------------ tensors */

static char *tname(const hir_tensor *t, char *buf, size_t n)
{
    snprintf(buf, n, "T%lld", (long long)t->number);
    return buf;
}

static hir_loc tensor_loc(const hir_tensor *t, hir_loc where)
{
    char nm[32];
    return find_in(where, tname(t, nm, sizeof nm));
}

static void use_tensor(vctx *v, const hir_stmt *s, const hir_tensor *t, hir_loc where)
{
    if (!t || is_defined(v, t))
        return;
    if (hir_map_get(&v->reported, key(t)))
        return;
    const hir_stmt *gone = hir_map_get(&v->deallocated, key(t));
    if (gone) {   /* always an error: the runner would read released storage */
        hir_map_put(&v->reported, key(t), (void *)t);
        hir_diag_entry *e = verr(v, where.src == s->loc.src && where.begin == s->loc.begin ? tensor_loc(t, where) : where,
                                 "%s uses T%lld after it was deallocated", op_name(s), (long long)t->number);
        hir_diag_note(v->d, e, gone->loc, "T%lld is deallocated here", (long long)t->number);
        return;
    }
    hir_map_put(&v->reported, key(t), (void *)t);
    hir_severity sev = v->o && v->o->undefined_is_error ? HIR_ERROR : HIR_WARNING;
    hir_diag_emit(v->d, sev, where.src == s->loc.src && where.begin == s->loc.begin ? tensor_loc(t, where) : where,
                  "%s uses T%lld, which is not defined at this point", op_name(s), (long long)t->number);
    if (sev == HIR_ERROR)
        v->errors++;
}

/* Runtime extents of a tensor: the axes of its logical view (shape.c) less reductions and
 * device axes of their own marked rf (hir_shape_axis.dim), at
 * their local extent: an unsplit device axis as 1 (left out with squeeze_did), a split one as
 * its other parts. -1 = not constant. ids: each axis's innermost IterDomain. */
static int runtime_shape(vctx *v, const hir_tensor *t, bool squeeze_did, int64_t *ext,
                         const hir_iterdomain **ids, int max)
{
    int n = 0;
    hir_shape_axis a;
    for (int i = 0; i < t->shape.naxes && n < max; i++) {
        hir_shape_axis_get(t, i, &a);
        if (!a.dim)
            continue;
        if (a.nparts == 1 && a.device) {
            if (squeeze_did)
                continue;
            ext[n] = 1;
        } else if (a.nparts == 1) {
            if (!a.inner->extent || !vconst(v, a.inner->extent, &ext[n]))
                ext[n] = -1;
        } else {
            ext[n] = a.local;
        }
        ids[n++] = a.inner;
    }
    return n;
}

/* the reduction axis of a matmul or linear output: an unsplit one on no device */
static const hir_iterdomain *reduction_axis(const hir_tensor *t)
{
    hir_shape_axis a;
    for (int i = 0; i < t->shape.naxes; i++) {
        hir_shape_axis_get(t, i, &a);
        if (a.nparts == 1 && a.inner->itype == HIR_IT_REDUCTION && !a.device)
            return a.inner;
    }
    return NULL;
}

static void extent_mismatch(vctx *v, const hir_stmt *s, hir_loc l, const char *what,
                            const hir_tensor *a, int64_t ea, const hir_tensor *b, int64_t eb)
{
    verr(v, l, "%s: %s: T%lld has extent %lld, T%lld has extent %lld", op_name(s), what,
         (long long)a->number, (long long)ea, (long long)b->number, (long long)eb);
}

static bool both_const_differ(int64_t a, int64_t b) { return a >= 0 && b >= 0 && a != b; }

static hir_loc in_loc(const hir_stmt *s, int i)
{
    if (s->in_loc && s->in_loc[i].end)
        return hir_stmt_loc(s, s->in_loc[i]);
    return s->loc;
}

static hir_loc out_loc(const hir_stmt *s) { return s->out_loc.end ? hir_stmt_loc(s, s->out_loc) : s->loc; }

#define MAXR 16

static long long in_tensor_num(const hir_stmt *s, int i)
{
    const hir_tensor *t = hir_value_tensor(s->in[i]);
    return t ? (long long)t->number : -1;
}

/* the first of ext[0 .. n) known to be other than 1, or -1 */
static int first_not_one(const int64_t *ext, int n)
{
    for (int i = 0; i < n; i++)
        if (ext[i] >= 0 && ext[i] != 1)
            return i;
    return -1;
}

static void check_linear(vctx *v, const hir_stmt *s)
{
    const hir_tensor *a = hir_value_tensor(s->in[0]), *w = hir_value_tensor(s->in[1]);
    const hir_tensor *b = s->nin > 2 ? hir_value_tensor(s->in[2]) : NULL, *o = s->out;
    if (!a || !w || (s->nin > 2 && !b)) {
        verr(v, s->loc, "linear: operands must be tensors");
        return;
    }
    int64_t ea[MAXR], ew[MAXR], eb[MAXR], eo[MAXR];
    const hir_iterdomain *ia[MAXR], *iw[MAXR], *ib[MAXR], *io[MAXR];
    int na = runtime_shape(v, a, false, ea, ia, MAXR), nw = runtime_shape(v, w, false, ew, iw, MAXR);
    if (na < 1) {
        verr(v, in_loc(s, 0), "linear: input T%lld has no axes, expected [..., M, K]", (long long)a->number);
        return;
    }
    /* nvFuser's linear (ops/composite.cpp, LinearOp::evaluate): a weight [*D, N, K] whose
     * leading axes are device-parallel, size 1 on a rank (squeezed before at::linear); the
     * output [*D, ..., M, N] puts them first, the bias is [*D, N] */
    if (nw < 2) {
        verr(v, in_loc(s, 1), "linear: weight T%lld has %d axes, expected 2 or more ([..., N, K])", (long long)w->number, nw);
        return;
    }
    int nd = nw - 2, bad = first_not_one(ew, nd);
    if (bad >= 0) {
        verr(v, in_loc(s, 1), "linear: axis %d of weight T%lld has extent %lld on a rank: the axes before [N, K] must be device-parallel (size 1 on a rank), as nvFuser's linear squeezes them",
             bad, (long long)w->number, (long long)ew[bad]);
        return;
    }
    memmove(ew, ew + nd, 2 * sizeof *ew);
    if (both_const_differ(ea[na - 1], ew[1]))
        extent_mismatch(v, s, in_loc(s, 1), "K of the input and of the weight [N, K] differ", a, ea[na - 1], w, ew[1]);
    if (b) {
        int nb = runtime_shape(v, b, false, eb, ib, MAXR);
        bad = nb == nd + 1 ? first_not_one(eb, nd) : -1;
        if (nb != nd + 1)
            verr(v, in_loc(s, 2), "linear: bias T%lld has %d axes, expected %d (the weight's leading axes, then [N])", (long long)b->number, nb, nd + 1);
        else if (bad >= 0)
            verr(v, in_loc(s, 2), "linear: axis %d of bias T%lld has extent %lld on a rank: the axes before N must be device-parallel (size 1 on a rank), like the weight's",
                 bad, (long long)b->number, (long long)eb[bad]);
        else if (both_const_differ(eb[nd], ew[0]))
            extent_mismatch(v, s, in_loc(s, 2), "N of the bias and of the weight [N, K] differ", b, eb[nd], w, ew[0]);
    }
    if (!o)
        return;
    /* the output may carry an rfactored device axis that the runtime squeezes */
    int no = 0;
    hir_shape_axis ax;
    for (int i = 0; i < o->shape.naxes && no < MAXR; i++) {
        hir_shape_axis_get(o, i, &ax);
        if (!ax.dim)
            continue;
        if (ax.nparts == 1 && ax.device)
            eo[no] = 1;
        else if (ax.nparts > 1)
            eo[no] = ax.local;
        else if (!ax.inner->extent || !vconst(v, ax.inner->extent, &eo[no]))
            eo[no] = -1;
        io[no++] = ax.inner;
    }
    /* hir's own generators (hir-gen linear-rs) print a weight [D, N, K] whose device axis
     * matches one of the input's, and an output of the input's rank: taken as before */
    if (no == na && nd > 0)
        nd = 0;
    if (no != na + nd) {
        if (nd)
            verr(v, out_loc(s), "linear: output T%lld has %d axes, expected %d (the weight's %d leading axes, then [..., M, N] for an input of %d axes)",
                 (long long)o->number, no, na + nd, nd, na);
        else
            verr(v, out_loc(s), "linear: output T%lld has %d axes, expected %d ([..., M, N] for an input of %d axes)",
                 (long long)o->number, no, na, na);
        return;
    }
    if ((bad = first_not_one(eo, nd)) >= 0) {
        verr(v, out_loc(s), "linear: axis %d of output T%lld has extent %lld on a rank: it stands for a leading axis of the weight, size 1 on a rank",
             bad, (long long)o->number, (long long)eo[bad]);
        return;
    }
    for (int i = 0; i + 1 < na; i++)
        if (both_const_differ(eo[nd + i], ea[i]))
            extent_mismatch(v, s, out_loc(s), "a leading axis of the output and of the input differ", o, eo[nd + i], a, ea[i]);
    if (both_const_differ(eo[nd + na - 1], ew[0]))
        extent_mismatch(v, s, out_loc(s), "N of the output and of the weight [N, K] differ", o, eo[nd + na - 1], w, ew[0]);
    const hir_iterdomain *rk = reduction_axis(o);
    int64_t k;
    if (rk && rk->extent && vconst(v, rk->extent, &k) && both_const_differ(k, ew[1]))
        extent_mismatch(v, s, out_loc(s), "the reduction axis of the output and K of the weight differ", o, k, w, ew[1]);
    (void)io;
    (void)iw;
    (void)ia;
}

static void check_matmul(vctx *v, const hir_stmt *s)
{
    const hir_tensor *a = hir_value_tensor(s->in[0]), *b = hir_value_tensor(s->in[1]), *o = s->out;
    if (!a || !b) {
        verr(v, s->loc, "matmul: operands must be tensors");
        return;
    }
    int64_t ea[MAXR], eb[MAXR], eo[MAXR];
    const hir_iterdomain *ia[MAXR], *ib[MAXR], *io[MAXR];
    int na = runtime_shape(v, a, false, ea, ia, MAXR), nb = runtime_shape(v, b, false, eb, ib, MAXR);
    if (na < 1 || nb < 1) {
        verr(v, s->loc, "matmul: operands must have at least one axis");
        return;
    }
    int64_t kb = nb >= 2 ? eb[nb - 2] : eb[0];
    if (both_const_differ(ea[na - 1], kb))
        extent_mismatch(v, s, in_loc(s, 1), "K of A [..., M, K] and of B [..., K, N] differ", a, ea[na - 1], b, kb);
    if (!o || na < 2 || nb < 2)
        return;
    int no = runtime_shape(v, o, false, eo, io, MAXR);
    int want = na > nb ? na : nb;
    if (no != want) {
        verr(v, out_loc(s), "matmul: output T%lld has %d axes, expected %d", (long long)o->number, no, want);
        return;
    }
    if (both_const_differ(eo[no - 1], eb[nb - 1]))
        extent_mismatch(v, s, out_loc(s), "N of the output and of B [..., K, N] differ", o, eo[no - 1], b, eb[nb - 1]);
    if (both_const_differ(eo[no - 2], ea[na - 2]))
        extent_mismatch(v, s, out_loc(s), "M of the output and of A [..., M, K] differ", o, eo[no - 2], a, ea[na - 2]);
}

/* sdpa's outputs: out [N, H, L, Ev] of q's dtype, logsumexp [N, H, L] float, seed/offset uint64 */
static void check_sdpa_outs(vctx *v, const hir_stmt *s, const hir_tensor *const *t, const int64_t *want)
{
    const hir_iterdomain *ids[MAXR];
    const hir_tensor *o = s->out, *lse = s->u.sdpa->extra[0];
    int64_t eo[MAXR];
    if (o) {
        int n = runtime_shape(v, o, true, eo, ids, MAXR);
        if (n != 4)
            verr(v, out_loc(s), "sdpa: output T%lld has %d axes, expected 4 ([N, H, L, Ev])", (long long)o->number, n);
        else
            for (int d = 0; d < 4; d++)
                if (both_const_differ(eo[d], want[d]))
                    extent_mismatch(v, s, out_loc(s), "the output [N, H, L, Ev] does not match q/v", o, eo[d],
                                    t[d == 3 ? 2 : 0], want[d]);
        if (o->dtype != t[0]->dtype)
            verr(v, out_loc(s), "sdpa: output T%lld has dtype %s, expected %s (q's)", (long long)o->number,
                 hir_dtype_name(o->dtype), hir_dtype_name(t[0]->dtype));
    }
    if (lse) {
        hir_loc l = s->u.sdpa->extra_loc[0].src ? s->u.sdpa->extra_loc[0] : s->loc;
        int n = runtime_shape(v, lse, true, eo, ids, MAXR);
        if (n != 3)
            verr(v, l, "sdpa: logsumexp T%lld has %d axes, expected 3 ([N, H, L])", (long long)lse->number, n);
        else
            for (int d = 0; d < 3; d++)
                if (both_const_differ(eo[d], want[d]))
                    extent_mismatch(v, s, l, "logsumexp [N, H, L] does not match q", lse, eo[d], t[0], want[d]);
        if (lse->dtype != HIR_DT_FLOAT)
            verr(v, l, "sdpa: logsumexp T%lld has dtype %s, expected float", (long long)lse->number,
                 hir_dtype_name(lse->dtype));
    }
    for (int i = 1; i < 3; i++) {
        const hir_tensor *x = s->u.sdpa->extra[i];
        hir_loc l = s->u.sdpa->extra_loc[i].src ? s->u.sdpa->extra_loc[i] : s->loc;
        if (x && x->dtype != HIR_DT_UINT64)
            verr(v, l, "sdpa: philox %s T%lld has dtype %s, expected uint64_t", i == 1 ? "seed" : "offset",
                 (long long)x->number, hir_dtype_name(x->dtype));
    }
}

/* sdpa: q [N, H, L, E], k [N, H, S, E], v [N, H, S, Ev] -> out [N, H, L, Ev], logsumexp
 * [N, H, L] float; q, k, v, out (and an additive bias) share one floating dtype. */
static void check_sdpa(vctx *v, const hir_stmt *s)
{
    static const char *const qkv_name[3] = {"q", "k", "v"};
    const hir_tensor *t[3];
    int64_t e[3][MAXR];
    const hir_iterdomain *ids[MAXR];
    for (int i = 0; i < 3; i++)     /* logsumexp and the philox seed/offset are defined here */
        if (s->u.sdpa->extra[i])
            define(v, s->u.sdpa->extra[i], s->u.sdpa->extra_loc[i].src ? s->u.sdpa->extra_loc[i] : s->loc);
    for (int i = 0; i < 3; i++) {
        t[i] = hir_value_tensor(s->in[i]);
        if (!t[i]) {
            verr(v, in_loc(s, i), "sdpa: %s must be a tensor", qkv_name[i]);
            return;
        }
        int n = runtime_shape(v, t[i], true, e[i], ids, MAXR);
        if (n != 4) {
            verr(v, in_loc(s, i), "sdpa: %s T%lld has %d axes, expected 4 ([N, H, %s, %s])",
                 qkv_name[i], (long long)t[i]->number, n, i ? "S" : "L", i == 2 ? "Ev" : "E");
            return;
        }
        if (i == 0 && !hir_dtype_is_float(t[0]->dtype)) {
            verr(v, in_loc(s, 0), "sdpa: q T%lld has dtype %s, expected a floating-point dtype",
                 (long long)t[0]->number, hir_dtype_name(t[0]->dtype));
            return;
        }
        if (t[i]->dtype != t[0]->dtype)
            verr(v, in_loc(s, i), "sdpa: %s T%lld has dtype %s, expected %s (q's)", qkv_name[i],
                 (long long)t[i]->number, hir_dtype_name(t[i]->dtype), hir_dtype_name(t[0]->dtype));
    }
    for (int d = 0; d < 2; d++)
        for (int i = 1; i < 3; i++)
            if (both_const_differ(e[0][d], e[i][d]))
                extent_mismatch(v, s, in_loc(s, i), d ? "H of q and of k/v differ" : "N of q and of k/v differ",
                                t[0], e[0][d], t[i], e[i][d]);
    if (both_const_differ(e[1][2], e[2][2]))
        extent_mismatch(v, s, in_loc(s, 2), "S of k [N, H, S, E] and of v [N, H, S, Ev] differ", t[1], e[1][2], t[2], e[2][2]);
    if (both_const_differ(e[0][3], e[1][3]))
        extent_mismatch(v, s, in_loc(s, 1), "E of q [N, H, L, E] and of k [N, H, S, E] differ", t[0], e[0][3], t[1], e[1][3]);
    int64_t want[4] = {e[0][0], e[0][1], e[0][2], e[2][3]};
    check_sdpa_outs(v, s, t, want);
    int k = 3;
    if (s->u.sdpa->has_bias) {
        const hir_tensor *b = hir_value_tensor(s->in[k]);
        if (b && b->dtype != t[0]->dtype && b->dtype != HIR_DT_FLOAT)
            verr(v, in_loc(s, k), "sdpa: bias T%lld has dtype %s, expected %s or float", (long long)b->number,
                 hir_dtype_name(b->dtype), hir_dtype_name(t[0]->dtype));
        k++;
    }
    if (s->u.sdpa->has_mask) {
        const hir_tensor *m = hir_value_tensor(s->in[k]);
        if (m && m->dtype != HIR_DT_BOOL)
            verr(v, in_loc(s, k), "sdpa: mask T%lld has dtype %s, expected bool", (long long)m->number,
                 hir_dtype_name(m->dtype));
    }
}

/* sdpa_bwd: grad q, k, v (defined here) have the dtypes of q, k, v; every input named by
 * position is a tensor */
static void check_sdpa_bwd(vctx *v, const hir_stmt *s)
{
    const hir_tensor *grads[3] = {s->out, s->u.sdpa->extra[0], s->u.sdpa->extra[1]};
    for (int i = 0; i < 2; i++)
        if (grads[i + 1])
            define(v, grads[i + 1], s->u.sdpa->extra_loc[i].src ? s->u.sdpa->extra_loc[i] : s->loc);
    static const char *const names[3] = {"q", "k", "v"};
    for (int i = 0; i < 3; i++) {
        const hir_tensor *t = hir_value_tensor(s->in[1 + i]);
        if (t && grads[i] && t->dtype != grads[i]->dtype)
            verr(v, s->loc, "sdpa_bwd: the gradient of %s, T%lld, is %s but %s T%lld is %s", names[i],
                 (long long)grads[i]->number, hir_dtype_name(grads[i]->dtype), names[i],
                 (long long)t->number, hir_dtype_name(t->dtype));
    }
}

/* the outputs a statement defines besides `out`: a Dispatch's that only a Combine names, and
 * sdpa's logsumexp and philox seed/offset (checked with the rest of the sdpa) */
static void check_multi_output(vctx *v, const hir_stmt *s)
{
    if (s->op == HIR_OP_SDPA)
        check_sdpa(v, s);
    if (s->op == HIR_OP_DISPATCH)
        for (int i = 0; i < 2; i++)
            define(v, s->u.moe->hidden[i], out_loc(s));
    if (s->op == HIR_OP_SDPA_BWD)
        check_sdpa_bwd(v, s);
}

/* dtype of every tensor input equals the output's for ops that do not convert */
static bool keeps_dtype(hir_op op)
{
    switch (hir_ops[op].fmt) {
    case HIR_FMT_ALIAS_SELECT: case HIR_FMT_SHARD: case HIR_FMT_SYMVIEW: case HIR_FMT_LOADSTORE:
    case HIR_FMT_LINEAR: case HIR_FMT_MATMUL: case HIR_FMT_REDUCTION: case HIR_FMT_SELECT:
    case HIR_FMT_SLICE: case HIR_FMT_VIEW: case HIR_FMT_FLAGS:
        return true;
    default:
        return false;
    }
}

static char *mesh_str(const hir_mesh *m, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "DeviceMesh{");
    for (int64_t i = 0; i < m->ndevices && k + 24 < n; i++)
        k += (size_t)snprintf(buf + k, n - k, i ? " %lld" : "%lld", (long long)m->devices[i]);
    snprintf(buf + k, n - k, "%s}", k + 24 >= n ? " ..." : "");
    return buf;
}

static void check_types(vctx *v, const hir_stmt *s)
{
    const hir_tensor *o = s->out;
    if (!o)
        return;
    for (int i = 0; i < s->nin; i++) {
        const hir_tensor *t = hir_value_tensor(s->in[i]);
        if (!t)
            continue;
        if (keeps_dtype(s->op) && t->dtype != o->dtype) {
            hir_diag_entry *e = verr(v, in_loc(s, i), "%s: T%lld has dtype %s but the output T%lld has dtype %s",
                                     op_name(s), (long long)t->number, hir_dtype_name(t->dtype),
                                     (long long)o->number, hir_dtype_name(o->dtype));
            hir_diag_note(v->d, e, out_loc(s), "output T%lld is here", (long long)o->number);
        }
        if (t->mesh && o->mesh && t->mesh != o->mesh) {
            char m1[256], m2[256];
            hir_diag_entry *e = verr(v, in_loc(s, i), "%s: T%lld is on %s but the output T%lld is on %s",
                                     op_name(s), (long long)t->number, mesh_str(t->mesh, m1, sizeof m1),
                                     (long long)o->number, mesh_str(o->mesh, m2, sizeof m2));
            hir_diag_note(v->d, e, out_loc(s), "output T%lld is here", (long long)o->number);
        }
    }
}

/* ------------------------------------------------------------------ statements */

static void check_block(vctx *v, hir_block *b, int depth, const hir_scalar *index, hir_loc iloc);

static void check_comm_number(vctx *v, hir_stmt *s, const char *what)
{
    hir_comm *c = s->u.comm;
    if (!c) {
        verr(v, s->loc, "%s without its expression", what);
        return;
    }
    hir_stmt *first = hir_map_get(&v->comm_stmt, (uint64_t)c->number);
    if (first && first != s) {
        hir_diag_entry *e = verr(v, s->loc, "%s %lld is executed twice: expression numbers must be unique",
                                 what, (long long)c->number);
        hir_diag_note(v->d, e, first->loc, "expression %lld is first executed here", (long long)c->number);
    } else
        hir_map_put(&v->comm_stmt, (uint64_t)c->number, s);
}

static bool is_index_scalar(const hir_scalar *s)
{
    if (s->kind == HIR_SC_INT)
        return true;
    if (s->kind == HIR_SC_BOOL || s->kind == HIR_SC_FLOAT)
        return false;
    return hir_dtype_is_int(s->dtype);
}

static int bind_any(void *ctx, const hir_scalar *s, int64_t *v)
{
    (void)ctx;
    if (s->def)
        return -1;   /* evaluate through the definition */
    *v = 7;
    return 0;
}

/* The place of the k-th member of "team=(a b c)" in a parsed statement (else the statement). */
static hir_loc team_member_loc(hir_loc sl, int k)
{
    if (!sl.src)
        return sl;
    const char *t = sl.src->text;
    for (uint32_t i = sl.begin; i + 6 <= sl.end; i++) {
        if (memcmp(t + i, "team=(", 6))
            continue;
        uint32_t j = i + 6;
        for (int n = 0; j < sl.end && t[j] != ')'; n++) {
            while (j < sl.end && t[j] == ' ')
                j++;
            uint32_t b = j;
            while (j < sl.end && t[j] != ' ' && t[j] != ')')
                j++;
            if (n == k && j > b)
                return (hir_loc){sl.src, b, j};
        }
        break;
    }
    return sl;
}

typedef struct member { int64_t dev; int at; } member;

static int by_dev(const void *a, const void *b)
{
    const member *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    return (x->at > y->at) - (x->at < y->at);
}

/* A device listed twice in a team would take part twice in one collective, which no backend
 * can do (hir-run waited forever for the second member). Reports the first repeat. */
static void check_team(vctx *v, const hir_stmt *s, const hir_comm *c)
{
    if (c->nteam < 2)
        return;
    member *m = malloc(sizeof *m * (size_t)c->nteam);
    if (!m)
        hir_arena_oom(v->p->arena);   /* nothing of this function's to free */
    for (int i = 0; i < c->nteam; i++)
        m[i] = (member){c->team[i], i};
    qsort(m, (size_t)c->nteam, sizeof *m, by_dev);
    int first = -1, repeat = -1;
    for (int i = 1; i < c->nteam; i++)
        if (m[i].dev == m[i - 1].dev && (repeat < 0 || m[i].at < repeat)) {
            repeat = m[i].at;
            int k = i;
            while (k > 0 && m[k - 1].dev == m[i].dev)
                k--;
            first = m[k].at;
        }
    if (repeat >= 0) {
        hir_diag_entry *e = verr(v, team_member_loc(s->loc, repeat),
                                 "Communication %lld: device %lld is in the team twice", (long long)c->number,
                                 (long long)c->team[repeat]);
        if (s->loc.src)
            hir_diag_note(v->d, e, team_member_loc(s->loc, first), "first listed here");
    }
    free(m);
}

/* The checks of one statement format (the format column of dialect/defs/ops.def); formats
 * with nothing beyond operands, uses, types and definitions have no entry. */
static void vc_allocate(vctx *v, hir_block *b, int idx, int depth, hir_stmt *s)
{
    hir_tensor *t = s->out;
    if (hir_map_get(&v->inputs, key(t))) {
        hir_diag_entry *e = verr(v, out_loc(s), "ALLOCATE of T%lld, which is an input of the program: only outputs and intermediates are allocated",
                                 (long long)t->number);
        hir_diag_note(v->d, e, t->loc, "T%lld is an input here", (long long)t->number);
    }
    for (int i = 0; i < t->nloop; i++) {
        const hir_iterdomain *id = t->loop[i];
        if (id->itype != HIR_IT_REDUCTION && id->itype != HIR_IT_STRIDE)
            check_scalar(v, hir_id_expanded(id) ? hir_id_expanded(id) : id->extent, s->loc);
    }
    if (s->u.alloc.alias) {
        use_tensor(v, s, s->u.alloc.alias, s->loc);
        if (s->u.alloc.alias->dtype != t->dtype)
            verr(v, s->loc, "ALLOCATE: alias T%lld has dtype %s but the buffer T%lld has dtype %s",
                 (long long)s->u.alloc.alias->number, hir_dtype_name(s->u.alloc.alias->dtype),
                 (long long)t->number, hir_dtype_name(t->dtype));
    }
}

static void vc_stream(vctx *v, hir_block *b, int idx, int depth, hir_stmt *s)
{
    if (s->u.stream.index)
        check_scalar(v, s->u.stream.index, s->loc);
}

/* The Waits in blocks the verifier does not check (a FOR's else block, a region statement
 * refused before its body): resolved all the same, as hir_program_resolve_waits would. */
static void resolve_unchecked(vctx *v, hir_block *b, int depth)
{
    if (b->stmts.n)
        hir_block_walk(b, depth, resolve_one, v->p);
}

static void vc_for(vctx *v, hir_block *b, int idx, int depth, hir_stmt *s)
{
    const hir_iterdomain *id = s->u.kfor.id;
    if (!id || !id->extent) {
        verr(v, s->loc, "FOR without an IterDomain extent");
        resolve_unchecked(v, &s->body, depth + 1);
        resolve_unchecked(v, &s->else_body, depth + 1);
        return;
    }
    check_scalar(v, id->extent, s->loc);
    if (hir_id_start(id))
        check_scalar(v, hir_id_start(id), s->loc);
    /* evaluable: integer operators only (leaves bound to a stand-in value); an extent that
     * evaluates without binding anything (a literal) is evaluable */
    char why[128];
    int64_t ignored;
    hir_scalar_env any = {bind_any, NULL};
    int er = hir_scalar_eval_quick(id->extent, &ignored) == 0
                 ? 0 : hir_scalar_eval(id->extent, &any, &ignored, why, sizeof why);
    if (er == HIR_ENOMEM)
        hir_arena_oom(v->p->arena);
    if (er &&
        (strstr(why, "not supported") || strstr(why, "unknown function") || strstr(why, "floating-point")))
    {
        char sp[64];
        snprintf(sp, sizeof sp, "%c%s%lld", hir_itype_letter(id->itype), hir_ptype_name(id->ptype),
                 (long long)id->number);
        verr(v, find_in(s->loc, sp), "FOR: the extent of IterDomain %lld cannot be evaluated: %s",
             (long long)id->number, why);
    }
    int64_t e;
    if (vconst(v, id->extent, &e) && e < 0) {
        char buf[32];
        snprintf(buf, sizeof buf, "%lld", (long long)e);
        verr(v, find_in(s->loc, buf), "FOR: loop extent %lld is negative", (long long)e);
    }
    check_block(v, &s->body, depth + 1, s->u.kfor.index, s->loc);
    resolve_unchecked(v, &s->else_body, depth + 1);
}

static void vc_host_for(vctx *v, hir_block *b, int idx, int depth, hir_stmt *s)
{
    check_scalar(v, s->u.hfor.start, s->loc);
    check_scalar(v, s->u.hfor.stop, s->loc);
    check_block(v, &s->body, depth + 1, s->u.hfor.index, s->loc);
    resolve_unchecked(v, &s->else_body, depth + 1);
}

static void vc_if(vctx *v, hir_block *b, int idx, int depth, hir_stmt *s)
{
    check_scalar(v, s->u.cond.pred, s->loc);
    if (s->u.cond.pred && s->u.cond.pred->kind == HIR_SC_FLOAT)
        verr(v, find_in(s->loc, s->u.cond.pred->name), "IF: the predicate is a floating-point literal, not a boolean");
    check_block(v, &s->body, depth + 1, NULL, s->loc);
    check_block(v, &s->else_body, depth + 1, NULL, s->loc);
}

static void vc_select(vctx *v, hir_block *b, int idx, int depth, hir_stmt *s)
{
    const hir_tensor *in = hir_value_tensor(s->in[0]);
    check_scalar(v, s->u.sel.index, s->loc);
    if (in && s->u.sel.axis && hir_tensor_logical_pos(in, s->u.sel.axis) < 0) {
        char ax[32];
        snprintf(ax, sizeof ax, "%lld{", (long long)s->u.sel.axis->number);
        hir_loc l = s->loc;
        if (l.src) {   /* the "axis = " spelling */
            const char *t = l.src->text;
            for (uint32_t i = l.begin; i + 7 < l.end; i++)
                if (!memcmp(t + i, "axis = ", 7)) {
                    uint32_t j = i + 7;
                    while (j < l.end && t[j] != '}')
                        j++;
                    l.begin = i + 7;
                    l.end = j + 1;
                    break;
                }
        }
        hir_diag_entry *e = verr(v, l, "%s: axis %lld is not an axis of the input T%lld",
                                 op_name(s), (long long)s->u.sel.axis->number, (long long)in->number);
        hir_diag_note(v->d, e, in_loc(s, 0), "input T%lld is here", (long long)in->number);
    }
}

static void vc_shard(vctx *v, hir_block *b, int idx, int depth, hir_stmt *s)
{
    check_scalar(v, s->u.stream_index, s->loc);
    if (s->out && hir_tensor_stream_axis(s->out) < 0)
        verr(v, out_loc(s), "ShardByStream: the output T%lld has no stream-parallel axis", (long long)s->out->number);
}

static void vc_linear(vctx *v, hir_block *b, int idx, int depth, hir_stmt *s)
{
    check_linear(v, s);
}

static void vc_matmul(vctx *v, hir_block *b, int idx, int depth, hir_stmt *s)
{
    check_matmul(v, s);
}

static void vc_reduction(vctx *v, hir_block *b, int idx, int depth, hir_stmt *s)
{
    check_scalar(v, s->u.red.init, s->loc);
}

static void vc_slice(vctx *v, hir_block *b, int idx, int depth, hir_stmt *s)
{
    for (int i = 0; i < s->u.slice.nranges; i++) {
        check_scalar(v, s->u.slice.ranges[i].start, s->loc);
        check_scalar(v, s->u.slice.ranges[i].stop, s->loc);
        check_scalar(v, s->u.slice.ranges[i].step, s->loc);
    }
}

/* GroupedMmaOp: two operands of one dtype and integer group offsets */
static void vc_grouped_mma(vctx *v, hir_block *b, int idx, int depth, hir_stmt *s)
{
    hir_tensor *a = hir_value_tensor(s->in[0]), *m = hir_value_tensor(s->in[1]);
    hir_tensor *o = hir_value_tensor(s->in[2]);
    if (!a || !m || !o) {
        verr(v, s->loc, "GroupedMmaOp takes tensors for mat1, mat2 and offsets");
        return;
    }
    if (a->dtype != m->dtype)
        verr(v, s->loc, "GroupedMmaOp: mat1 T%lld is %s but mat2 T%lld is %s", (long long)a->number,
             hir_dtype_name(a->dtype), (long long)m->number, hir_dtype_name(m->dtype));
    if (!hir_dtype_is_int(o->dtype))
        verr(v, s->in_loc ? hir_stmt_loc(s, s->in_loc[2]) : s->loc, "GroupedMmaOp: offsets T%lld must be an integer"
             " tensor, not %s", (long long)o->number, hir_dtype_name(o->dtype));
}

/* full({extents}, value): one extent per output axis, scalars only */
static void vc_full(vctx *v, hir_block *b, int idx, int depth, hir_stmt *s)
{
    for (int i = 0; i < s->nin; i++)
        if (hir_value_tensor(s->in[i]))
            verr(v, s->in_loc ? hir_stmt_loc(s, s->in_loc[i]) : s->loc, "full takes scalars (extents and a value), not a tensor");
    if (s->out && s->out->nloop != s->nin - 1)
        verr(v, s->loc, "full gives %d extents for T%lld, which has %d axes", s->nin - 1,
             (long long)s->out->number, s->out->nloop);
}

static void vc_comm(vctx *v, hir_block *b, int idx, int depth, hir_stmt *s)
{
    check_comm_number(v, s, "Communication");
    hir_comm *c = s->u.comm;
    if (!c)
        return;
    use_tensor(v, s, c->input, s->loc);
    use_tensor(v, s, c->output, s->loc);
    check_scalar(v, c->root, s->loc);
    check_team(v, s, c);
    if (c->input && c->output && c->input->dtype != c->output->dtype)
        verr(v, s->loc, "Communication %lld: input T%lld has dtype %s but output T%lld has dtype %s",
             (long long)c->number, (long long)c->input->number, hir_dtype_name(c->input->dtype),
             (long long)c->output->number, hir_dtype_name(c->output->dtype));
    if (!c->input && !c->output)
        verr(v, s->loc, "Communication %lld has neither an input nor an output", (long long)c->number);
}

static void vc_p2p(vctx *v, hir_block *b, int idx, int depth, hir_stmt *s)
{
    check_comm_number(v, s, "P2PCommunication");
    hir_comm *c = s->u.comm;
    if (!c)
        return;
    use_tensor(v, s, c->buffer, s->loc);
    if (c->peer) {
        check_scalar(v, c->peer, s->loc);
        if (!is_index_scalar(c->peer)) {
            hir_loc l = s->loc;
            if (l.src)
                for (uint32_t i = l.begin; i + 5 < l.end; i++)
                    if (!memcmp(l.src->text + i, "peer=", 5)) {
                        uint32_t j = i + 5;
                        while (j < l.end && l.src->text[j] != ',')
                            j++;
                        l.begin = i + 5;
                        l.end = j;
                        break;
                    }
            verr(v, l, "P2PCommunication %lld: the peer must be an index expression, not a %s value",
                 (long long)c->number, c->peer->kind == HIR_SC_BOOL ? "bool" : hir_dtype_name(c->peer->dtype));
        }
    } else
        verr(v, s->loc, "P2PCommunication %lld has no peer", (long long)c->number);
}

static void vc_endcoal(vctx *v, hir_block *b, int idx, int depth, hir_stmt *s)
{
    check_comm_number(v, s, "EndCoalescing");
    bool open = false;
    for (int i = idx - 1; i >= 0; i--) {
        hir_op o = hir_block_at(b, i)->op;
        if (o == HIR_OP_END_COAL)
            break;
        if (o == HIR_OP_START_COAL) {
            open = true;
            break;
        }
    }
    if (!open)
        verr(v, s->loc, "EndCoalescing %lld without a preceding StartCoalescing in the same block",
             s->u.comm ? (long long)s->u.comm->number : -1LL);
}

static void vc_startcoal(vctx *v, hir_block *b, int idx, int depth, hir_stmt *s)
{
    bool closed = false;
    for (int i = idx + 1; i < hir_block_size(b); i++) {
        hir_op o = hir_block_at(b, i)->op;
        if (o == HIR_OP_START_COAL)
            break;
        if (o == HIR_OP_END_COAL) {
            closed = true;
            break;
        }
    }
    if (!closed)
        verr(v, s->loc, "StartCoalescing without a following EndCoalescing in the same block");
}

static void vc_wait(vctx *v, hir_block *b, int idx, int depth, hir_stmt *s)
{
    hir_comm *c = s->u.wait.target ? s->u.wait.target : hir_comm_get(v->p, s->u.wait.number);
    if (c && !c->number_unprinted && c->stmt)
        return;
    char num[32];
    snprintf(num, sizeof num, "%lld", (long long)s->u.wait.number);
    if (!c)
        verr(v, find_in(s->loc, num), "Wait refers to expression %lld, which is not a Communication, P2PCommunication or EndCoalescing",
             (long long)s->u.wait.number);
    else if (c->number_unprinted)
        verr(v, find_in(s->loc, num), "Wait refers to expression %lld, which no statement prints"
             " (an EndCoalescing read without its number cannot be waited for)",
             (long long)s->u.wait.number);
    else if (!c->stmt) {
        hir_diag_entry *e = verr(v, find_in(s->loc, num), "Wait refers to expression %lld, which is never executed",
                                 (long long)s->u.wait.number);
        if (c->loc.src)
            hir_diag_note(v->d, e, c->loc, "expression %lld is only mentioned here", (long long)c->number);
    }
}

static void vc_share(vctx *v, hir_block *b, int idx, int depth, hir_stmt *s)
{
    /* The handles may be exchanged ahead of the transfer (--hoist-handle-exchange does it
     * once, before the pipeline): the communication must be executed somewhere. */
    for (int i = 0; i < s->u.share.n; i++) {
        hir_comm *c = s->u.share.comms[i];
        if (!c || c->op != HIR_OP_P2P) {
            verr(v, s->loc, "ShareMemHandles lists something that is not a P2PCommunication");
            continue;
        }
        use_tensor(v, s, c->buffer, s->loc);
        check_scalar(v, c->peer, s->loc);
        if (!c->stmt) {
            char num[48];
            snprintf(num, sizeof num, "P2PCommunication %lld", (long long)c->number);
            verr(v, find_in(s->loc, num),
                 "ShareMemHandles lists P2PCommunication %lld, which is never executed",
                 (long long)c->number);
        }
    }
}

static void vc_dealloc(vctx *v, hir_block *b, int idx, int depth, hir_stmt *s)
{
    /* A program input may be deallocated too (nvFuser's 2025 prints do it): that ends its
     * binding like any other tensor's, and a later use is an undefined value. */
    const hir_tensor *t = hir_value_tensor(s->in[0]);
    if (t) {
        undefine(v, t);
        hir_map_put(&v->deallocated, key(t), s);
    }
}

static void vc_cperm(vctx *v, hir_block *b, int idx, int depth, hir_stmt *s)
{
    check_comm_number(v, s, "CollectivePermute");
    hir_comm *c = s->u.comm;
    if (!c)
        return;
    check_scalar(v, c->send_peer, s->loc);
    check_scalar(v, c->recv_peer, s->loc);
    check_team(v, s, c);
    if (c->nteam < 1)
        verr(v, s->loc, "CollectivePermute %lld has an empty team", (long long)c->number);
    if (c->input && c->output && c->input->dtype != c->output->dtype)
        verr(v, s->loc, "CollectivePermute %lld: input T%lld has dtype %s but output T%lld has dtype %s",
             (long long)c->number, (long long)c->input->number, hir_dtype_name(c->input->dtype),
             (long long)c->output->number, hir_dtype_name(c->output->dtype));
}

static void vc_combine(vctx *v, hir_block *b, int idx, int depth, hir_stmt *s)
{
    if (!s->u.moe->dispatch)
        verr(v, in_loc(s, 0), "Combine %lld: no Dispatch before it has out=T%lld, its in=",
             (long long)s->u.moe->number, (long long)in_tensor_num(s, 0));
}

static void vc_scalardef(vctx *v, hir_block *b, int idx, int depth, hir_stmt *s)
{
    const hir_scalar *out = s->u.sdef.out;
    if (out && out->kind != HIR_SC_SYMBOL && out->kind != HIR_SC_NAMED)
        verr(v, out_loc(s), "only a symbol or a named scalar can be defined");
}

/* Set.Permute: the permutation its numbers carry (shape.c) maps input extents onto the
 * output's; a permutation the numbers do not carry is not checked. */
static void vc_loadstore(vctx *v, hir_block *b, int idx, int depth, hir_stmt *s)
{
    const hir_tensor *in = s->nin == 1 ? hir_value_tensor(s->in[0]) : NULL, *o = s->out;
    int perm[MAXR];
    if (!s->u.ls.permute || !in || !o || o->shape.naxes > MAXR || hir_shape_permutation(in, o, perm))
        return;
    hir_shape_axis ai, ao;
    for (int i = 0; i < o->shape.naxes; i++) {
        hir_shape_axis_get(o, i, &ao);
        hir_shape_axis_get(in, perm[i], &ai);
        if (both_const_differ(ao.global, ai.global)) {
            verr(v, out_loc(s), "%s.Permute: output axis %d of T%lld has extent %lld, but its numbers say it is axis %d of T%lld, of extent %lld",
                 hir_ops[s->op].keyword, i, (long long)o->number, (long long)ao.global, perm[i],
                 (long long)in->number, (long long)ai.global);
            return;
        }
    }
}

/* reshape: as many elements out as in (constant extents, reductions left out) */
static void vc_view(vctx *v, hir_block *b, int idx, int depth, hir_stmt *s)
{
    const hir_tensor *in = s->nin == 1 ? hir_value_tensor(s->in[0]) : NULL, *o = s->out;
    if (s->op != HIR_OP_VIEW || !in || !o)
        return;
    int64_t n[2] = {1, 1};
    const hir_tensor *t[2] = {in, o};
    hir_shape_axis a;
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < t[k]->shape.naxes && n[k] >= 0; i++) {
            hir_shape_axis_get(t[k], i, &a);
            if (a.reduction)
                continue;
            if (a.global < 0 || (a.global && n[k] > INT64_MAX / a.global))
                n[k] = -1;
            else
                n[k] *= a.global;
        }
    if (both_const_differ(n[0], n[1]))
        verr(v, out_loc(s), "%s: T%lld has %lld elements, T%lld has %lld", op_name(s),
             (long long)in->number, (long long)n[0], (long long)o->number, (long long)n[1]);
}

typedef void (*stmt_checker)(vctx *v, hir_block *b, int idx, int depth, hir_stmt *s);

static const stmt_checker check_by_fmt[HIR_FMT_COUNT] = {
    [HIR_FMT_ALLOCATE] = vc_allocate,
    [HIR_FMT_HIRALLOC] = vc_allocate,
    [HIR_FMT_STREAM] = vc_stream,
    [HIR_FMT_FOR] = vc_for,
    [HIR_FMT_HOST_FOR] = vc_host_for,
    [HIR_FMT_IF] = vc_if,
    [HIR_FMT_ALIAS_SELECT] = vc_select,
    [HIR_FMT_SELECT] = vc_select,
    [HIR_FMT_SHARD] = vc_shard,
    [HIR_FMT_LINEAR] = vc_linear,
    [HIR_FMT_MATMUL] = vc_matmul,
    [HIR_FMT_REDUCTION] = vc_reduction,
    [HIR_FMT_SLICE] = vc_slice,
    [HIR_FMT_COMM] = vc_comm,
    [HIR_FMT_P2P] = vc_p2p,
    [HIR_FMT_ENDCOAL] = vc_endcoal,
    [HIR_FMT_STARTCOAL] = vc_startcoal,
    [HIR_FMT_WAIT] = vc_wait,
    [HIR_FMT_SHARE] = vc_share,
    [HIR_FMT_DEALLOC] = vc_dealloc,
    [HIR_FMT_CPERM] = vc_cperm,
    [HIR_FMT_COMBINE] = vc_combine,
    [HIR_FMT_SCALARDEF] = vc_scalardef,
    [HIR_FMT_FULL] = vc_full,
    [HIR_FMT_GROUPEDMMA] = vc_grouped_mma,
    [HIR_FMT_LOADSTORE] = vc_loadstore,
    [HIR_FMT_VIEW] = vc_view,
};

/* Operands and output as the op table wants them; false after reporting what is wrong. */
static bool check_arity(vctx *v, const hir_stmt *s, const hir_opinfo *info)
{
    /* arity from the op table; communications keep their tensors in the expression */
    int nin = s->nin;
    if ((s->op == HIR_OP_COMMUNICATION || s->op == HIR_OP_P2P) && s->u.comm)
        nin = s->op == HIR_OP_P2P ? (s->u.comm->buffer != NULL)
                                  : (s->u.comm->input != NULL) + (s->u.comm->output != NULL);
    if (nin < info->nin_min || nin > info->nin_max) {
        if (info->nin_min == info->nin_max)
            verr(v, s->loc, "%s takes %d operand%s, not %d", op_name(s), info->nin_min,
                 info->nin_min == 1 ? "" : "s", nin);
        else
            verr(v, s->loc, "%s takes %d to %d operands, not %d", op_name(s), info->nin_min,
                 info->nin_max, nin);
        return false;
    }
    for (int i = 0; i < s->nin; i++)
        if (!s->in[i]) {
            verr(v, s->loc, "%s: operand %d is missing", op_name(s), i);
            return false;
        }
    if (info->has_out && !s->out && !hir_stmt_sout(s)) {
        verr(v, s->loc, "%s has no output", op_name(s));
        return false;
    }
    return true;
}

static void check_stmt(vctx *v, hir_block *b, int idx, int depth)
{
    hir_stmt *s = hir_block_at(b, idx);
    const hir_opinfo *info = &hir_ops[s->op];
    resolve_one(s, depth, v->p);   /* as hir_program_resolve_waits, in the same walk */
    if (!check_arity(v, s, info)) {
        if (info->flags & HIR_OPF_REGION) {
            resolve_unchecked(v, &s->body, depth + 1);
            resolve_unchecked(v, &s->else_body, depth + 1);
        }
        return;
    }

    /* uses (kernel outputs are written, not read) */
    int nuse = s->nin;
    if (info->fmt == HIR_FMT_POST || info->fmt == HIR_FMT_LAUNCH)
        nuse = s->u.kernel.ninputs;
    for (int i = 0; i < nuse; i++) {
        hir_value *val = s->in[i];
        if (val->kind == HIR_VAL_TENSOR)
            use_tensor(v, s, (hir_tensor *)val, in_loc(s, i));
        else
            check_scalar(v, (hir_scalar *)val, in_loc(s, i));
    }

    if ((unsigned)info->fmt < HIR_FMT_COUNT && check_by_fmt[info->fmt])
        check_by_fmt[info->fmt](v, b, idx, depth, s);
    check_types(v, s);

    /* definitions */
    if (s->out) {
        define(v, s->out, out_loc(s));
        hir_map_del(&v->deallocated, key(s->out));
    }
    check_multi_output(v, s);
    hir_scalar *sout = hir_stmt_sout(s);
    if (sout)
        define(v, sout, out_loc(s));
    if (info->fmt == HIR_FMT_POST || info->fmt == HIR_FMT_LAUNCH)
        for (int i = s->u.kernel.ninputs; i < s->nin; i++)
            define(v, s->in[i], in_loc(s, i));
}

/* Checks a block in its own scope; `index` is the loop index a FOR binds inside it. */
static void check_block(vctx *v, hir_block *b, int depth, const hir_scalar *index, hir_loc iloc)
{
    if (depth > HIR_MAX_NESTING) {
        verr(v, iloc, "statements nested deeper than %d levels", HIR_MAX_NESTING);
        hir_block_walk(b, depth, resolve_one, v->p);   /* not checked, but resolved */
        return;
    }
    int mark = v->ntrail;
    if (index)
        define(v, index, iloc);
    for (int i = 0; i < hir_block_size(b); i++)
        check_stmt(v, b, i, depth);
    /* values defined inside the block go out of scope with it */
    for (int i = mark; i < v->ntrail; i++)
        undefine(v, v->trail[i]);
    v->ntrail = mark;
}

/* ------------------------------------------------------------------ cycles */

/* Every cycle among scalar definitions, used or not (trailer entries may be dead), is one
 * error at the member read first: Tarjan's strongly connected components over the definition
 * graph, with explicit stacks, so neither the length of a cycle nor of a chain matters. */
typedef struct tnode {
    const hir_scalar *s;
    int index, low;
    bool on_stack, self_loop;
} tnode;

typedef struct tframe { int node, next; } tframe;

typedef struct tarjan {
    hir_arena *oom;              /* where a table that cannot grow jumps (check_cycles) */
    hir_map at;                  /* scalar pointer -> 1 + index into nodes */
    tnode *nodes;
    int n, cap;
    int *stack, nstack, capstack;
    tframe *calls;
    int ncalls, capcalls;
    const hir_scalar **reps;     /* one member per cycle */
    int *sizes;
    int nreps, capreps, capsizes;
} tarjan;

static int tarjan_node(tarjan *t, const hir_scalar *s)
{
    uintptr_t at = (uintptr_t)hir_map_get(&t->at, key(s));
    if (at)
        return (int)at - 1;
    t->nodes = grow_ptrs_sized(t->oom, t->nodes, &t->cap, t->n + 1, sizeof *t->nodes);
    t->nodes[t->n] = (tnode){s, t->n, t->n, true, false};
    hir_map_put(&t->at, key(s), (void *)(uintptr_t)(t->n + 1));
    t->stack = grow_ptrs_sized(t->oom, t->stack, &t->capstack, t->nstack + 1, sizeof *t->stack);
    t->stack[t->nstack++] = t->n;
    t->calls = grow_ptrs_sized(t->oom, t->calls, &t->capcalls, t->ncalls + 1, sizeof *t->calls);
    t->calls[t->ncalls++] = (tframe){t->n, 0};
    return t->n++;
}

/* The member to name: read first in the text, else the lowest number. */
static bool named_before(const hir_scalar *a, const hir_scalar *b)
{
    bool sa = a->def_loc.src != NULL, sb = b->def_loc.src != NULL;
    if (sa != sb)
        return sa;
    if (sa && a->def_loc.begin != b->def_loc.begin)
        return a->def_loc.begin < b->def_loc.begin;
    return a->number < b->number;
}

static void tarjan_component(tarjan *t, int root)
{
    const hir_scalar *rep = NULL;
    int size = 0, members = 0;
    for (;;) {
        int w = t->stack[--t->nstack];
        t->nodes[w].on_stack = false;
        members++;
        const hir_scalar *s = t->nodes[w].s;
        if (s->kind != HIR_SC_ANON) {
            size++;
            if (!rep || named_before(s, rep))
                rep = s;
        }
        if (w == root)
            break;
    }
    if (!rep || (members == 1 && !t->nodes[root].self_loop))
        return;
    t->reps = grow_ptrs_sized(t->oom, t->reps, &t->capreps, t->nreps + 1, sizeof *t->reps);
    t->sizes = grow_ptrs_sized(t->oom, t->sizes, &t->capsizes, t->nreps + 1, sizeof *t->sizes);
    t->reps[t->nreps] = rep;
    t->sizes[t->nreps++] = size;
}

static void tarjan_from(tarjan *t, const hir_scalar *root)
{
    if (!root->def || hir_map_get(&t->at, key(root)))
        return;
    tarjan_node(t, root);
    while (t->ncalls) {
        tframe *f = &t->calls[t->ncalls - 1];
        tnode *n = &t->nodes[f->node];
        const hir_sexpr *e = n->s->def;
        if (f->next < e->nargs) {
            const hir_scalar *w = e->args[f->next++];
            if (!w || !w->def)
                continue;
            if (w == n->s)
                n->self_loop = true;
            uintptr_t at = (uintptr_t)hir_map_get(&t->at, key(w));
            if (!at)
                tarjan_node(t, w);   /* may move t->nodes and t->calls */
            else if (t->nodes[at - 1].on_stack && t->nodes[at - 1].index < n->low)
                n->low = t->nodes[at - 1].index;
            continue;
        }
        int done = f->node;
        if (t->nodes[done].low == t->nodes[done].index)
            tarjan_component(t, done);
        if (--t->ncalls) {
            tnode *parent = &t->nodes[t->calls[t->ncalls - 1].node];
            if (t->nodes[done].low < parent->low)
                parent->low = t->nodes[done].low;
        }
    }
}

static void tarjan_fini(tarjan *t)
{
    hir_map_fini(&t->at);
    free(t->nodes);
    free(t->stack);
    free(t->calls);
    free(t->reps);
    free(t->sizes);
}

/* Its tables are freed here when one cannot grow; then the jump goes on to the verifier's
 * recovery point. The state lives on the heap (nothing changed after setjmp is automatic). */
static void check_cycles(vctx *v)
{
    tarjan *t = calloc(1, sizeof *t);
    if (!t)
        hir_arena_oom(v->p->arena);
    t->oom = v->p->arena;
    hir_map_init_in(&t->at, v->p->arena);
    jmp_buf jb;
    jmp_buf *outer = hir_arena_on_oom(v->p->arena, &jb);
    if (setjmp(jb)) {
        hir_arena_on_oom(v->p->arena, outer);
        tarjan_fini(t);
        free(t);
        hir_arena_oom(v->p->arena);
    }
    const hir_map *maps[2] = {&v->p->symbols, &v->p->named};
    for (int m = 0; m < 2; m++)
        for (size_t i = 0; i < maps[m]->cap; i++)
            if (maps[m]->keys[i] != UINT64_MAX && maps[m]->vals[i])
                tarjan_from(t, maps[m]->vals[i]);
    hir_arena_on_oom(v->p->arena, outer);
    /* report in text order */
    for (int i = 1; i < t->nreps; i++)
        for (int j = i; j > 0 && named_before(t->reps[j], t->reps[j - 1]); j--) {
            const hir_scalar *r = t->reps[j];
            t->reps[j] = t->reps[j - 1];
            t->reps[j - 1] = r;
            int z = t->sizes[j];
            t->sizes[j] = t->sizes[j - 1];
            t->sizes[j - 1] = z;
        }
    for (int i = 0; i < t->nreps; i++) {
        char nm[64];
        scalar_name(t->reps[i], nm, sizeof nm);
        if (t->sizes[i] > 1)
            verr(v, t->reps[i]->def_loc, "the definition of '%s' depends on itself (a cycle through %d definitions)",
                 nm, t->sizes[i]);
        else
            verr(v, t->reps[i]->def_loc, "the definition of '%s' depends on itself", nm);
    }
    tarjan_fini(t);
    free(t);
}

static void verify_fini(vctx *v)
{
    vs_fini(&v->defined);
    hir_map_fini(&v->stmt_defined);
    hir_map_fini(&v->reported);
    vs_fini(&v->visiting);
    hir_map_fini(&v->comm_stmt);
    hir_map_fini(&v->inputs);
    hir_map_fini(&v->deallocated);
    free(v->trail);
    hir_scalar_memo_fini(&v->consts);
    free(v->work);
    free(v->seen);
}

/* The verifier's tables are malloc'd (never in the arena); when one cannot grow it jumps back
 * here through the program arena's recovery point, frees them, and returns HIR_ENOMEM. The
 * context is on the heap so that nothing read after the jump is an automatic variable that
 * changed after setjmp. The caller's recovery point (a pass pipeline's) is put back. */
int hir_program_verify(hir_program *p, const hir_verify_opts *o, hir_diag *d)
{
    vctx *v = calloc(1, sizeof *v);
    if (!v)
        return HIR_ENOMEM;
    *v = (vctx){.p = p, .d = d, .o = o};
    v->defined.oom = p->arena;
    hir_map_init_in(&v->stmt_defined, p->arena);
    hir_map_init_in(&v->reported, p->arena);
    v->visiting.oom = p->arena;
    hir_map_init_in(&v->comm_stmt, p->arena);
    hir_map_init_in(&v->inputs, p->arena);
    hir_map_init_in(&v->deallocated, p->arena);
    hir_scalar_memo_init_in(&v->consts, p->arena);
    jmp_buf oom;
    jmp_buf *outer = hir_arena_on_oom(p->arena, &oom);
    if (setjmp(oom)) {
        hir_arena_on_oom(p->arena, outer);
        verify_fini(v);
        free(v);
        return HIR_ENOMEM;
    }
    /* the logical view of every tensor still open (shape.c): the checks below read it */
    int se = hir_program_shapes(p, NULL, 0, d);
    if (se == HIR_ENOMEM)
        hir_arena_oom(p->arena);
    v->errors += se;
    /* Wait targets are resolved by check_stmt, statement by statement (resolve_one) */

    /* inputs and the extent symbols bound by them */
    for (int i = 0; i < p->inputs.n; i++) {
        hir_value *val = p->inputs.items[i];
        if (!val)
            continue;
        if (val->kind == HIR_VAL_TENSOR) {
            hir_tensor *t = (hir_tensor *)val;
            define(v, t, t->loc);
            hir_map_put(&v->inputs, key(t), t);
            for (int k = 0; k < t->nloop; k++) {
                const hir_iterdomain *id = t->loop[k];
                const hir_scalar *ex[2] = {id->extent, hir_id_expanded(id)};
                for (int j = 0; j < 2; j++)
                    if (ex[j] && ex[j]->kind == HIR_SC_SYMBOL && !ex[j]->def)
                        define(v, ex[j], id->loc);
            }
            /* a split axis's logical extent, X of its ( ceilDiv(X, k) ), is the input's size
             * along that axis (the run takes it from --inputs files): defined by the input too,
             * though printed only inside the ceilDiv */
            for (int k = 0; k < t->shape.naxes; k++) {
                hir_shape_axis a;
                hir_shape_axis_get(t, k, &a);
                if (a.nparts > 1 && a.extent && a.extent->kind == HIR_SC_SYMBOL && !a.extent->def)
                    define(v, a.extent, a.inner->loc);
            }
        } else
            define(v, val, ((hir_scalar *)val)->loc);
    }
    /* --bind NAME=V: the named scalar or symbol is an input of the run */
    if (o && o->nbound) {
        const hir_map *maps[2] = {&p->symbols, &p->named};
        for (int m = 0; m < 2; m++)
            for (size_t i = 0; i < maps[m]->cap; i++) {
                const hir_scalar *sc = maps[m]->vals[i];
                if (maps[m]->keys[i] == UINT64_MAX || !sc || sc->def)
                    continue;
                char nm[64];
                scalar_name(sc, nm, sizeof nm);
                for (int b = 0; b < o->nbound; b++)
                    if (!strcmp(nm, o->bound[b]))
                        define(v, sc, sc->loc);
            }
    }
    check_block(v, &p->body, 0, NULL, (hir_loc){0});
    check_cycles(v);
    {
        const hir_map *maps[2] = {&p->symbols, &p->named};
        for (int m = 0; m < 2; m++)
            for (size_t i = 0; i < maps[m]->cap; i++)
                if (maps[m]->keys[i] != UINT64_MAX && maps[m]->vals[i])
                    check_overflow(v, maps[m]->vals[i], (hir_loc){0});
    }
    hir_arena_on_oom(p->arena, outer);
    verify_fini(v);
    int errors = v->errors;
    free(v);
    return errors;
}
