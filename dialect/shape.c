/* shape.c — the logical view of every tensor: which logical axes a printed loop domain stands
 * for and where each lives in the loop-ordered buffer (hir.h "shape.c"; docs/language.md,
 * "How hir decides a shape"). The rules are the invariants of nvFuser's printer:
 *
 *   - a split makes its outer IterDomain, then its inner (numbers n, n+1), after every logical
 *     IterDomain of its tensor; device and stream sharding split outer, so the parallel axis
 *     is the outer; an inner extent ( ceilDiv(X, k) ) next to a parallel axis of extent k
 *     proves the split (X is the logical extent); a swizzled stream axis is numbered inner+1;
 *   - "rf" marks a logical axis (reshape, rFactor), never a split the scheduler made;
 *   - stream, then device axes are moved to the front; the other axes keep their order, so a
 *     non-parallel axis is where its logical axis is (reshape and permute outputs included);
 *   - an unsplit parallel axis goes back among the others by its number (logical IterDomains
 *     are numbered in logical order).
 *
 * hir_tensor_create gives every tensor its print-only view: decided when it has no device or
 * stream axis (the loop domain as printed), open otherwise. hir_program_shapes decides the
 * open ones once per program: a pair "parallel axis n, axis n+1" may be one split axis or two
 * logical axes, and the rest of the text decides (numbers printed elsewhere, other splits of the
 * tensor, ShardByStream and HirAliasSelect, the ranks that matmul, linear, Set and the
 * communications imply), or the user (--logical), or nothing: then a located error. */
#include "dialect/hir.h"

#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

enum { G_CAND, G_SPLIT, G_NOT };           /* a group's status */
enum { K_SPLIT, K_NESTED, K_SWIZZLE };     /* how its numbers look */
#define MAXG 8                             /* groups looked at per tensor */
#define MAXL 64                            /* loop axes per tensor the rules look at */

typedef struct group {
    int pos[3], n;               /* loop positions of its parts, outer to inner */
    int kind, status;
    bool direct;                 /* decided by the text itself (not by ranks or convention) */
    int64_t low;                 /* the smallest number the split made */
    bool by_rf;                  /* decided by an rf part */
    const char *why;             /* the evidence for the status (in the program's arena) */
} group;

/* A tensor's groups while its view is decided. */
typedef struct reading {
    hir_tensor *t;
    hir_arena *arena;            /* where the reasons go */
    bool permuted;               /* the output of a Set.Permute: printed order is not numbered */
    int ng;
    group g[MAXG];
} reading;

static void set_why(reading *r, group *g, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_why(reading *r, group *g, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    g->why = hir_arena_strndup(r->arena, buf, n < 0 ? 0 : (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

static bool hostpar(const hir_iterdomain *id)
{
    return hir_ptype_is_device(id->ptype) || hir_ptype_is_stream(id->ptype);
}

static bool reductionlike(const hir_iterdomain *id)
{
    return id->itype == HIR_IT_REDUCTION || id->itype == HIR_IT_STRIDE;
}

static int pos_of(const hir_tensor *t, int64_t number)
{
    for (int i = 0; i < t->nloop; i++)
        if (t->loop[i]->number == number)
            return i;
    return -1;
}

static char *id_name(const hir_iterdomain *id, char *buf, size_t n)
{
    snprintf(buf, n, "%c%s%lld", hir_itype_letter(id->itype), hir_ptype_name(id->ptype),
             (long long)id->number);
    return buf;
}

/* X when s is ( ceilDiv(X, k) ) with k the extent of `by`, else NULL */
static hir_scalar *ceildiv_of(const hir_scalar *s, const hir_iterdomain *by)
{
    const hir_sexpr *e = s ? s->def : NULL;
    if (!e || e->kind != HIR_SX_BINARY || e->op != HIR_BIN_CEILDIV || !by->extent)
        return NULL;
    int64_t a, b;
    if (hir_scalar_equal(e->args[1], by->extent) ||
        (hir_scalar_const(e->args[1], &a) && hir_scalar_const(by->extent, &b) && a == b))
        return e->args[0];
    return NULL;
}

static int group_of(const reading *r, int pos)
{
    for (int k = 0; k < r->ng; k++)
        for (int j = 0; j < r->g[k].n; j++)
            if (r->g[k].pos[j] == pos)
                return k;
    return -1;
}

static void add_group(reading *r, int kind, int64_t low, int a, int b)
{
    if (r->ng == MAXG)
        return;
    group *g = &r->g[r->ng++];
    memset(g, 0, sizeof *g);
    g->kind = kind;
    g->low = low;
    g->pos[0] = a;
    g->pos[1] = b;
    g->n = 2;
}

/* The pairs the print suggests, and what the tensor's own print says of each. */
static void find_groups(reading *r)
{
    const hir_tensor *t = r->t;
    hir_iterdomain *const *L = t->loop;
    r->ng = 0;
    if (t->nloop > MAXL)
        return;
    for (int i = 0; i < t->nloop; i++) {
        int j = hostpar(L[i]) ? pos_of(t, L[i]->number + 1) : -1;
        if (j >= 0 && !hostpar(L[j]) && group_of(r, j) < 0)
            add_group(r, K_SPLIT, L[i]->number, i, j);
    }
    /* nested: n's inner n+1 was split again into n+2 (parallel) and n+3 */
    for (int i = 0; i < t->nloop; i++) {
        if (!hostpar(L[i]) || group_of(r, i) >= 0 || pos_of(t, L[i]->number + 1) >= 0)
            continue;
        int k = group_of(r, pos_of(t, L[i]->number + 2));
        if (k >= 0 && r->g[k].kind == K_SPLIT && r->g[k].pos[0] == pos_of(t, L[i]->number + 2)) {
            group *g = &r->g[k];
            g->pos[2] = g->pos[1];
            g->pos[1] = g->pos[0];
            g->pos[0] = i;
            g->n = 3;
            g->kind = K_NESTED;
            g->low = L[i]->number;
        }
    }
    /* swizzled: a stream axis n made after the split (n-2, n-1) it replaced */
    for (int i = 0; i < t->nloop; i++) {
        int64_t n = L[i]->number;
        int j = pos_of(t, n - 1);
        if (hir_ptype_is_stream(L[i]->ptype) && group_of(r, i) < 0 && n >= 2 &&
            pos_of(t, n + 1) < 0 && pos_of(t, n - 2) < 0 && j >= 0 && !hostpar(L[j]) &&
            group_of(r, j) < 0)
            add_group(r, K_SWIZZLE, n - 2, i, j);
    }
    char a[64], b[64];
    for (int k = 0; k < r->ng; k++) {
        group *g = &r->g[k];
        const hir_iterdomain *outer = L[g->pos[0]], *inner = L[g->pos[g->n - 1]];
        g->status = G_CAND;
        for (int j = 0; j < g->n; j++)
            if (L[g->pos[j]]->flags & HIR_ID_RFACTOR) {
                g->status = G_NOT;
                g->by_rf = true;
                set_why(r, g, "%s is rf, a logical axis",
                         id_name(L[g->pos[j]], a, sizeof a));
            }
        if (g->status == G_CAND && ceildiv_of(inner->extent, L[g->pos[g->n - 2]])) {
            g->status = G_SPLIT;
            g->direct = true;
            set_why(r, g, "the extent of %s is ceilDiv by %s",
                     id_name(inner, a, sizeof a), id_name(L[g->pos[g->n - 2]], b, sizeof b));
        } else if (g->status == G_CAND && g->kind == K_SWIZZLE) {
            set_why(r, g, "%.50s is numbered after %.50s (a swizzled stream axis)",
                     id_name(outer, a, sizeof a), id_name(inner, b, sizeof b));
        }
    }
}

/* Print evidence that needs the program: the smallest IterDomain number printed nowhere (a
 * split consumed an axis numbered below it), the tensor's logical axes and its other splits. */
static bool decide_by_numbers(reading *r, int64_t hole)
{
    hir_iterdomain *const *L = r->t->loop;
    bool changed = false;
    char a[64], b[64];
    for (int k = 0; k < r->ng; k++) {
        group *g = &r->g[k];
        if (g->status != G_CAND)
            continue;
        if (g->low <= hole) {
            g->status = G_NOT;
            g->direct = true;
            if (g->low == 0)
                set_why(r, g, "numbered 0: no axis was made before it to be split");
            else
                set_why(r, g,
                         "every IterDomain number below %lld is printed: no axis is left for a split to have consumed",
                         (long long)g->low);
            changed = true;
            continue;
        }
        for (int i = 0; i < r->t->nloop && g->status == G_CAND; i++) {
            int h = group_of(r, i);
            /* rf axes are logical but made by rFactor after the splits: not evidence */
            if ((h < 0 || r->g[h].status == G_NOT) && L[i]->number > g->low &&
                !(L[i]->flags & HIR_ID_RFACTOR)) {
                g->status = G_NOT;
                g->direct = true;
                set_why(r, g,
                         "the logical axis %s is numbered above it: split outputs come after their tensor's logical axes",
                         id_name(L[i], a, sizeof a));
            } else if (h >= 0 && h != k && r->g[h].status == G_SPLIT && r->g[h].low < g->low) {
                g->status = G_SPLIT;
                set_why(r, g,
                         "numbered above the split of %s: logical axes come before every split",
                         id_name(L[r->g[h].pos[0]], b, sizeof b));
            } else if (!r->permuted && (h < 0 || r->g[h].status == G_NOT) && !hostpar(L[i]) &&
                       i > g->pos[g->n - 1] && L[i]->number < L[g->pos[g->n - 1]]->number &&
                       !(L[i]->flags & HIR_ID_RFACTOR)) {
                /* the axes that are not parallel keep their logical order, and logical axes
                 * are numbered in it: an axis printed before a smaller-numbered one was made
                 * after it, by a split */
                g->status = G_SPLIT;
                g->direct = true;
                set_why(r, g,
                         "%.40s is printed before the logical axis %.40s, numbered below it: a split output",
                         id_name(L[g->pos[g->n - 1]], b, sizeof b), id_name(L[i], a, sizeof a));
            }
        }
        changed |= g->status != G_CAND;
    }
    return changed;
}

typedef struct unit {
    int key;                     /* 2 x printed position (+1: the anchor itself) */
    int64_t number;
    int g;                       /* group, or -1 for one IterDomain */
    int pos;                     /* the IterDomain of a single */
} unit;

static int cmp_unit(const void *x, const void *y)
{
    const unit *a = x, *b = y;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->number < b->number ? -1 : a->number > b->number;
}

/* The view of reading r where the groups in `split` (a bit per group) are splits: ids and
 * parts (nloop entries each) in logical order; returns the number of axes. */
static int build(const reading *r, unsigned split, hir_iterdomain **ids, unsigned char *parts)
{
    const hir_tensor *t = r->t;
    hir_iterdomain *const *L = t->loop;
    unit u[MAXL];
    int nu = 0;
    for (int i = 0; i < t->nloop; i++) {
        int g = group_of(r, i);
        if (g >= 0 && (split >> g & 1)) {
            if (i == r->g[g].pos[r->g[g].n - 1])
                u[nu++] = (unit){2 * i + 1, L[r->g[g].pos[0]]->number, g, i};
            continue;
        }
        if (!hostpar(L[i])) {
            u[nu++] = (unit){2 * i + 1, L[i]->number, -1, i};
            continue;
        }
        /* an unsplit parallel axis: before the first single non-parallel axis numbered above */
        int key = 2 * t->nloop;
        for (int j = 0; j < t->nloop; j++) {
            int h = group_of(r, j);
            if (!hostpar(L[j]) && (h < 0 || !(split >> h & 1)) && L[j]->number > L[i]->number) {
                key = 2 * j;
                break;
            }
        }
        u[nu++] = (unit){key, L[i]->number, -1, i};
    }
    qsort(u, nu, sizeof *u, cmp_unit);
    int n = 0;
    for (int k = 0; k < nu; k++) {
        if (u[k].g < 0) {
            ids[n++] = L[u[k].pos];
            parts[k] = 1;
        } else {
            const group *g = &r->g[u[k].g];
            for (int j = 0; j < g->n; j++)
                ids[n++] = L[g->pos[j]];
            parts[k] = (unsigned char)g->n;
        }
    }
    return nu;
}

/* Runtime rank of a reading: axes with a dimension, less an rfactored device axis of its own
 * (the part of a reduction a rank keeps: the runtime squeezes it). */
static int rank_of(const reading *r, unsigned split)
{
    hir_iterdomain *ids[MAXL];
    unsigned char parts[MAXL];
    int na = build(r, split, ids, parts), rank = 0, at = 0;
    for (int k = 0; k < na; at += parts[k++]) {
        const hir_iterdomain *in = ids[at + parts[k] - 1];
        if (reductionlike(in))
            continue;
        if (parts[k] == 1 && hir_ptype_is_device(in->ptype) && (in->flags & HIR_ID_RFACTOR))
            continue;
        rank++;
    }
    return rank;
}

static unsigned split_mask(const reading *r)
{
    unsigned m = 0;
    for (int k = 0; k < r->ng; k++)
        m |= (unsigned)(r->g[k].status == G_SPLIT) << k;
    return m;
}

static unsigned cand_mask(const reading *r)
{
    unsigned m = 0;
    for (int k = 0; k < r->ng; k++)
        m |= (unsigned)(r->g[k].status == G_CAND) << k;
    return m;
}

/* Sets the tensor's view from r's decided groups (candidates read as two axes) and says how. */
static void set_view(hir_program *p, reading *r, int state, const char *extra)
{
    hir_tensor *t = r->t;
    hir_iterdomain *ids[MAXL];
    unsigned char parts[MAXL];
    int na = build(r, split_mask(r), ids, parts);
    bool same = na == t->nloop;
    for (int i = 0; i < t->nloop && same; i++)
        same = ids[i] == t->loop[i];
    if (same) {
        t->shape.ids = t->loop;
        t->shape.parts = NULL;
    } else {
        t->shape.ids = hir_arena_alloc(p->arena, sizeof *ids * (size_t)t->nloop);
        memcpy(t->shape.ids, ids, sizeof *ids * (size_t)t->nloop);
        bool ones = true;
        for (int k = 0; k < na; k++)
            ones &= parts[k] == 1;
        if (!ones) {
            t->shape.parts = hir_arena_alloc(p->arena, (size_t)na);
            memcpy(t->shape.parts, parts, (size_t)na);
        }
    }
    t->shape.naxes = na;
    t->shape.state = (unsigned char)state;
    char how[1024], a[64], b[64];
    size_t n = 0;
#define HOW(...) (n += n < sizeof how ? (size_t)snprintf(how + n, sizeof how - n, __VA_ARGS__) : 0)
    for (int k = 0; k < r->ng; k++) {
        const group *g = &r->g[k];
        if (g->status == G_CAND)
            continue;
        HOW("%s%s %s %s (%s)", n ? "; " : "", id_name(t->loop[g->pos[0]], a, sizeof a),
            g->status == G_SPLIT ? "splits the axis of" : "is an axis of its own, not a split of",
            id_name(t->loop[g->pos[g->n - 1]], b, sizeof b), g->why ? g->why : "");
    }
    bool moved = false;
    for (int i = 0; i < t->nloop; i++)
        if (hostpar(t->loop[i]) && group_of(r, i) < 0)
            moved |= t->shape.ids[i] != t->loop[i];
    if (moved)
        HOW("%sunsplit parallel axes back by their numbers", n ? "; " : "");
    int nrf = 0;
    for (int i = 0; i < t->nloop; i++)
        if ((t->loop[i]->flags & HIR_ID_RFACTOR) && group_of(r, i) < 0)
            HOW("%s%s", nrf++ ? ", " : n ? "; rf axes " : "rf axes ", id_name(t->loop[i], a, sizeof a));
    if (!n)
        HOW("as printed");
    if (extra)
        HOW("; %s", extra);
#undef HOW
    if (n >= sizeof how)
        n = sizeof how - 1;
    t->shape.how = hir_arena_strndup(p->arena, how, n);
}

/* ------------------------------------------------------------------ the user's readings */

/* Sets the view of the tensor a reading "T1=2,11*12" names: 0, or 1 after an error. */
static int apply_user(hir_program *p, const char *text, hir_diag *d)
{
    char *end;
    const char *s = text;
    hir_loc none = {0};
    if (*s != 'T' || s[1] < '0' || s[1] > '9') {
        hir_diag_emit(d, HIR_ERROR, none, "--logical '%s': expected T<number>=<axes>, e.g. T1=2,11*12", text);
        return 1;
    }
    long long tn = strtoll(s + 1, &end, 10);
    hir_tensor *t = hir_tensor_get(p, tn);
    if (*end != '=') {
        hir_diag_emit(d, HIR_ERROR, none, "--logical '%s': expected '=' after T%lld", text, tn);
        return 1;
    }
    if (!t) {
        hir_diag_emit(d, HIR_ERROR, none, "--logical '%s': the program has no tensor T%lld", text, tn);
        return 1;
    }
    if (t->nloop > MAXL) {
        hir_diag_emit(d, HIR_ERROR, t->loc, "--logical '%s': T%lld has more than %d axes", text, tn, MAXL);
        return 1;
    }
    hir_iterdomain *ids[MAXL];
    unsigned char parts[MAXL];
    int n = 0, na = 0;
    bool used[MAXL] = {false};
    s = end + 1;
    for (;;) {
        int np = 0;
        for (;;) {
            long long num = strtoll(s, &end, 10);
            int at = end == s ? -1 : pos_of(t, num);
            if (at < 0 || used[at]) {
                hir_diag_emit(d, HIR_ERROR, t->loc, "--logical '%s': %s", text,
                              end == s ? "expected an IterDomain number"
                                       : at < 0 ? "a number that is not one of the tensor's IterDomains"
                                                : "an IterDomain named twice");
                return 1;
            }
            used[at] = true;
            ids[n++] = t->loop[at];
            np++;
            s = end;
            if (*s != '*')
                break;
            s++;
        }
        parts[na++] = (unsigned char)np;
        if (*s != ',')
            break;
        s++;
    }
    if (*s || n != t->nloop) {
        hir_diag_emit(d, HIR_ERROR, t->loc, "--logical '%s': %s", text,
                      *s ? "expected ',' or '*' between IterDomain numbers"
                         : "name every IterDomain of the tensor once");
        return 1;
    }
    t->shape.ids = hir_arena_alloc(p->arena, sizeof *ids * (size_t)n);
    memcpy(t->shape.ids, ids, sizeof *ids * (size_t)n);
    t->shape.parts = hir_arena_alloc(p->arena, (size_t)na);
    memcpy(t->shape.parts, parts, (size_t)na);
    t->shape.naxes = na;
    t->shape.state = HIR_SHAPE_DECIDED;
    t->shape.how = "given by --logical";
    return 0;
}

int hir_shape_read_as(hir_program *p, const char *reading, hir_diag *d)
{
    jmp_buf oom;
    jmp_buf *outer = hir_arena_on_oom(p->arena, &oom);
    if (setjmp(oom)) {
        hir_arena_on_oom(p->arena, outer);
        return HIR_ENOMEM;
    }
    int rc = apply_user(p, reading, d);
    hir_arena_on_oom(p->arena, outer);
    return rc;
}

/* ------------------------------------------------------------------ the operations */

typedef struct rel {             /* rank(a) == rank(b) + off; b NULL: rank(a) == off; with c:
                                    rank(a) == max(rank(b), rank(c)), both at least 2 (matmul),
                                    or with lin: rank(a) == rank(b) + rank(c) - 2 (linear: the
                                    weight c's leading axes come first in the output a) */
    hir_tensor *a, *b, *c;
    int off;
    bool lin;
    const hir_stmt *s;
} rel;

typedef struct shctx {
    hir_program *p;
    reading *rd;                 /* open tensors */
    int nrd;
    hir_map at;                  /* tensor number -> 1 + index in rd */
    rel *rels;
    int nrel, caprel;
    hir_map host;                /* tensor number -> 1: a HirAliasSelect output (host-made) */
    const char *older;           /* set when host-made IterDomains are numbered below the
                                    fusion's (the older host lowering): what shows it */
} shctx;

static reading *open_of(shctx *c, const hir_tensor *t)
{
    if (!t)
        return NULL;
    uintptr_t k = (uintptr_t)hir_map_get(&c->at, (uint64_t)t->number);
    return k && c->rd[k - 1].t == t ? &c->rd[k - 1] : NULL;
}

static void add_rel(shctx *c, hir_tensor *a, hir_tensor *b, int off, const hir_stmt *s)
{
    if (!a || (!b && off < 0))
        return;
    if (c->nrel == c->caprel) {
        int cap = c->caprel ? 2 * c->caprel : 64;
        c->rels = hir_arena_grow(c->p->arena, c->rels, sizeof *c->rels * (size_t)c->caprel,
                                 sizeof *c->rels * (size_t)cap);
        c->caprel = cap;
    }
    c->rels[c->nrel++] = (rel){a, b, NULL, off, false, s};
}

static void op_evidence(shctx *c, hir_tensor *t, const hir_iterdomain *id, int status,
                        const hir_stmt *s, const char *what)
{
    reading *r = open_of(c, t);
    if (!r || !id)
        return;
    for (int k = 0; k < r->ng; k++) {
        group *g = &r->g[k];
        if (g->status == G_CAND && t->loop[g->pos[0]] == id) {
            g->status = status;
            g->direct = true;
            set_why(r, g, "%s", what);
        }
    }
}

/* A ShardByStream whose output's stream axis has another constant extent than its input's
 * stream axis chunks that whole axis (--stream-parallel's blocks of several shards: [d, r, k]
 * into d/K shards a step), rather than the axis nvFuser's stream axis was split from. */
static bool chunks_whole_axis(const hir_stmt *s, const hir_tensor *in)
{
    int a = in ? hir_tensor_stream_axis(in) : -1, b = s->out ? hir_tensor_stream_axis(s->out) : -1;
    int64_t x, y;
    return a >= 0 && b >= 0 && in->loop[a]->extent && s->out->loop[b]->extent &&
           hir_scalar_const(in->loop[a]->extent, &x) && hir_scalar_const(s->out->loop[b]->extent, &y) &&
           x != y;
}

/* A HirAliasSelect output: the host lowering makes its IterDomains itself, one clone for each
 * logical axis of the input but the selected one, in order (nvFuser host_ir/pass/
 * stream_parallel_type.cpp), so none of its pairs is a split. This holds whatever the numbers
 * say; the older lowering (HostIrLower::lower) numbers these IterDomains from its own counter,
 * which may put them below the fusion's numbers or repeat one (see hir_program_shapes). A pair
 * the print itself proves a split (a ceilDiv inner: a select hir's own passes made of a split
 * tensor) stays one. */
static void host_made(shctx *c, hir_tensor *out, const hir_tensor *in, const hir_stmt *s)
{
    reading *r = open_of(c, out);
    if (!r || !in)
        return;
    int line = 0, col = 0;
    char at[32] = "";
    if (s->loc.src)
        hir_source_linecol((hir_source *)s->loc.src, s->loc.begin, &line, &col);
    if (line)
        snprintf(at, sizeof at, " at line %d", line);
    for (int k = 0; k < r->ng; k++) {
        group *g = &r->g[k];
        if (g->status != G_CAND)
            continue;
        g->status = G_NOT;   /* not `direct`: no evidence of the program's convention */
        set_why(r, g, "HirAliasSelect%s makes T%lld's IterDomains, one for each logical axis of T%lld but the selected one: no split",
                at, (long long)out->number, (long long)in->number);
    }
}

/* The device axes of t of their own marked rf (a rank's part of a reduction, which the rank of
 * a reading leaves out: rank_of). An rf part is never a split's, so these are t's whatever
 * its reading. A ShardByStream output (newValLike) and a HirAliasSelect output
 * (cloneWithoutRFactor) make each of them an ordinary axis, which a rank counts. */
static int rf_device_axes(const hir_tensor *t, const hir_iterdomain *except)
{
    int n = 0;
    for (int i = 0; t && i < t->nloop; i++) {
        const hir_iterdomain *id = t->loop[i];
        n += id != except && hir_ptype_is_device(id->ptype) && (id->flags & HIR_ID_RFACTOR) &&
             !reductionlike(id);
    }
    return n;
}

/* rank(HirAliasSelect output) - rank(input): one axis less, but none where the selected axis
 * is one a rank leaves out (a reduction, an rf device axis of its own), plus the input's rf
 * device axes of their own, which the output counts (rf_device_axes) */
static int select_offset(const hir_tensor *in, const hir_iterdomain *axis)
{
    int rf = rf_device_axes(in, axis);
    bool uncounted = axis && (reductionlike(axis) || rf != rf_device_axes(in, NULL));
    return (uncounted ? 0 : -1) + rf;
}

/* nvFuser's linear: weight [*D, N, K] (its leading axes device-parallel), bias [*D, N],
 * output [*D, ..., M, N]: rank(out) = rank(in) + rank(weight) - 2 and rank(bias) =
 * rank(weight) - 1 (ops/composite.cpp, newForLinear) */
static void linear_rels(shctx *c, hir_stmt *s, hir_tensor *in0)
{
    hir_tensor *w = s->nin > 1 ? hir_value_tensor(s->in[1]) : NULL;
    if (s->out && in0 && w) {
        add_rel(c, s->out, in0, 0, s);
        c->rels[c->nrel - 1].c = w;
        c->rels[c->nrel - 1].lin = true;
    }
    if (s->nin > 2 && w)
        add_rel(c, hir_value_tensor(s->in[2]), w, -1, s);
}

static bool collect(hir_stmt *s, int depth, void *ctx)
{
    shctx *c = ctx;
    hir_tensor *in0 = s->nin > 0 ? hir_value_tensor(s->in[0]) : NULL;
    if ((s->op == HIR_OP_SET || s->op == HIR_OP_SEGMENTER_SET) && s->u.ls.permute) {
        reading *r = open_of(c, s->out);
        if (r)
            r->permuted = true;
        add_rel(c, s->out, in0, 0, s);
        return true;
    }
    switch (s->op) {
    case HIR_OP_SET: case HIR_OP_SEGMENTER_SET: case HIR_OP_UNARY: case HIR_OP_BINARY:
    case HIR_OP_TERNARY:
        for (int i = 0; i < s->nin; i++)
            if (hir_value_tensor(s->in[i]))
                add_rel(c, s->out, hir_value_tensor(s->in[i]), 0, s);
        break;
    case HIR_OP_SHARD_BY_STREAM:
        /* the output is newValLike(input): one axis per logical axis of the input but its
         * reductions, rf dropped */
        add_rel(c, s->out, in0, rf_device_axes(in0, NULL), s);
        if (chunks_whole_axis(s, in0)) {
            op_evidence(c, in0, in0->loop[hir_tensor_stream_axis(in0)], G_NOT, s,
                        "ShardByStream into another number of chunks than its extent: a logical axis");
            break;
        }
        for (int side = 0; side < 2; side++) {
            hir_tensor *t = side ? s->out : in0;
            if (t && hir_tensor_stream_axis(t) >= 0)
                op_evidence(c, t, t->loop[hir_tensor_stream_axis(t)], G_SPLIT, s,
                            "ShardByStream chunks the axis its stream axis was split from");
        }
        break;
    case HIR_OP_ALIAS_SELECT:
        /* nvFuser keeps the input's reduction axes in the output (cloneWithoutRFactor of every
         * logical axis but the selected one), and a rank here leaves reductions out: selecting
         * a reduction axis leaves the rank as it is */
        add_rel(c, s->out, in0, select_offset(in0, s->u.sel.axis), s);
        op_evidence(c, in0, s->u.sel.axis, G_NOT, s, "HirAliasSelect selects it: a logical axis");
        host_made(c, s->out, in0, s);
        if (s->out)
            hir_map_put(&c->host, (uint64_t)s->out->number, (void *)1);
        break;
    case HIR_OP_LINEAR:
        linear_rels(c, s, in0);
        break;
    case HIR_OP_MATMUL:
        if (s->out && in0 && s->nin > 1 && hir_value_tensor(s->in[1])) {
            add_rel(c, s->out, in0, 0, s);
            c->rels[c->nrel - 1].c = hir_value_tensor(s->in[1]);
        }
        break;
    case HIR_OP_COMMUNICATION:
    case HIR_OP_CPERM: {
        const hir_comm *m = s->u.comm;
        if (m && m->input && m->output &&
            (s->op == HIR_OP_CPERM || m->type == HIR_COMM_ALLGATHER || m->type == HIR_COMM_BROADCAST ||
             m->type == HIR_COMM_SENDRECV || m->type == HIR_COMM_ALLTOALL))
            add_rel(c, m->output, m->input, 0, s);
        break;
    }
    default:
        break;
    }
    return true;
}

static int rank_known(shctx *c, const hir_tensor *t)
{
    reading *r = open_of(c, t);
    if (r)
        return cand_mask(r) ? -1 : rank_of(r, split_mask(r));
    hir_shape_axis a;
    int rank = 0;
    for (int i = 0; i < t->shape.naxes; i++) {
        hir_shape_axis_get(t, i, &a);
        rank += a.dim;
    }
    return rank;
}

static bool narrow_range(reading *r, int lo, int want, const hir_stmt *s);

/* Keeps the readings of r of rank `want`; decides the groups they agree on. */
static bool narrow(reading *r, int want, const hir_stmt *s)
{
    return narrow_range(r, want, want, s);
}

/* Keeps the readings of r of a rank from lo to want; decides the groups they agree on. */
static bool narrow_range(reading *r, int lo, int want, const hir_stmt *s)
{
    unsigned cand = cand_mask(r), base = split_mask(r), agree_split = ~0u, agree_not = ~0u;
    int nok = 0;
    for (unsigned m = cand;; m = (m - 1) & cand) {
        int rk = rank_of(r, base | m);
        if (rk >= lo && rk <= want) {
            nok++;
            agree_split &= m;
            agree_not &= ~m;
        }
        if (!m)
            break;
    }
    if (!nok)
        return false;
    bool changed = false;
    int line = 0, col = 0;
    if (s->loc.src)
        hir_source_linecol((hir_source *)s->loc.src, s->loc.begin, &line, &col);
    for (int k = 0; k < r->ng; k++) {
        group *g = &r->g[k];
        if (g->status != G_CAND || !((agree_split | agree_not) >> k & 1))
            continue;
        g->status = agree_split >> k & 1 ? G_SPLIT : G_NOT;
        char at[32] = "";
        if (line)
            snprintf(at, sizeof at, " at line %d", line);
        set_why(r, g, "%s%s needs T%lld to have %s%d ax%s",
                 hir_ops[s->op].keyword ? hir_ops[s->op].keyword : "the statement", at,
                 (long long)r->t->number, lo < want ? "at most " : "", want, want == 1 ? "is" : "es");
        changed = true;
    }
    return changed;
}

/* One relation: the reading it narrowed, or NULL. */
static reading *apply_rel(shctx *c, const rel *e)
{
    int ra = rank_known(c, e->a), rb = e->b ? rank_known(c, e->b) : 0;
    reading *r;
    if (e->lin) {   /* linear: a = b + c - 2 */
        int rc = rank_known(c, e->c);
        if (ra < 0 && rb >= 0 && rc >= 2 && (r = open_of(c, e->a)))
            return narrow(r, rb + rc - 2, e->s) ? r : NULL;
        if (rb < 0 && ra >= 0 && rc >= 2 && (r = open_of(c, e->b)))
            return narrow(r, ra - rc + 2, e->s) ? r : NULL;
        if (rc < 0 && ra >= 0 && rb >= 0 && (r = open_of(c, e->c)))
            return narrow(r, ra - rb + 2, e->s) ? r : NULL;
        return NULL;
    }
    if (e->c) {   /* matmul: out = max(A, B) when both have 2 axes or more */
        int rc = rank_known(c, e->c);
        if (ra < 0 && rb >= 2 && rc >= 2 && (r = open_of(c, e->a)))
            return narrow(r, rb > rc ? rb : rc, e->s) ? r : NULL;
        if (rb < 0 && ra >= 2 && rc >= 2 && rc <= ra && (r = open_of(c, e->b)))
            return narrow_range(r, rc < ra ? ra : 2, ra, e->s) ? r : NULL;
        if (rc < 0 && ra >= 2 && rb >= 2 && rb <= ra && (r = open_of(c, e->c)))
            return narrow_range(r, rb < ra ? ra : 2, ra, e->s) ? r : NULL;
        return NULL;
    }
    if (ra < 0 && rb >= 0 && (r = open_of(c, e->a)))
        return narrow(r, rb + e->off, e->s) ? r : NULL;
    if (e->b && rb < 0 && ra >= 0 && (r = open_of(c, e->b)))
        return narrow(r, ra - e->off, e->s) ? r : NULL;
    return NULL;
}

/* The relations, through a worklist: a reading that changes puts back the relations it is
 * in (so a chain of n Sets costs O(n), not O(n^2)), and its own rules run again. */
static void by_operations(shctx *c, int64_t hole)
{
    int n = c->nrd, m = c->nrel, total = 0;
    if (!m)
        return;
    int *start = hir_arena_alloc(c->p->arena, sizeof *start * (size_t)(n + 2));
    for (int i = 0; i < m; i++) {
        hir_tensor *ends[3] = {c->rels[i].a, c->rels[i].b, c->rels[i].c};
        for (int k = 0; k < 3; k++) {
            reading *r = open_of(c, ends[k]);
            if (r)
                start[r - c->rd + 2]++, total++;
        }
    }
    for (int i = 2; i < n + 2; i++)
        start[i] += start[i - 1];
    int *adj = hir_arena_alloc(c->p->arena, sizeof *adj * (size_t)(total ? total : 1));
    for (int i = 0; i < m; i++) {
        hir_tensor *ends[3] = {c->rels[i].a, c->rels[i].b, c->rels[i].c};
        for (int k = 0; k < 3; k++) {
            reading *r = open_of(c, ends[k]);
            if (r)
                adj[start[r - c->rd + 1]++] = i;
        }
    }
    /* start[j] .. start[j + 1]: the relations of reading j */
    int *queue = hir_arena_alloc(c->p->arena, sizeof *queue * (size_t)m);
    bool *inq = hir_arena_alloc(c->p->arena, (size_t)m);
    int head = 0, count = m;
    for (int i = 0; i < m; i++) {
        queue[i] = i;
        inq[i] = true;
    }
    while (count) {
        int i = queue[head];
        head = (head + 1) % m;
        count--;
        inq[i] = false;
        reading *r = apply_rel(c, &c->rels[i]);
        if (!r)
            continue;
        while (decide_by_numbers(r, hole))
            ;
        int j = (int)(r - c->rd);
        for (int k = start[j]; k < start[j + 1]; k++)
            if (!inq[adj[k]]) {
                inq[adj[k]] = true;
                queue[(head + count++) % m] = adj[k];
            }
    }
}

/* What is left open after the text and the operations: the program's own convention, when it
 * shows one. A producer either shards by splitting logical axes (FusionExecutorCache: a ceilDiv
 * inner extent, ShardByStream) or keeps device and stream axes as logical axes of their own
 * (MultiDeviceExecutor: HirAliasSelect on a stream axis, numbers that leave no room for a
 * split); where the text proves one and not the other, the open pairs follow it. */
static void by_convention(shctx *c)
{
    const reading *split_by = NULL, *not_by = NULL;
    int gs = 0, gn = 0;
    for (int i = 0; i < c->nrd; i++)
        for (int k = 0; k < c->rd[i].ng; k++) {
            const group *g = &c->rd[i].g[k];
            if (!g->direct || g->by_rf)
                continue;
            if (g->status == G_SPLIT && !split_by)
                split_by = &c->rd[i], gs = k;
            if (g->status == G_NOT && !not_by)
                not_by = &c->rd[i], gn = k;
        }
    if (!split_by == !not_by)
        return;
    const reading *by = split_by ? split_by : not_by;
    const group *bg = &by->g[split_by ? gs : gn];
    char a[64];
    bool any = false;
    for (int i = 0; i < c->nrd; i++)
        for (int k = 0; k < c->rd[i].ng; k++) {
            group *g = &c->rd[i].g[k];
            if (g->status != G_CAND)
                continue;
            g->status = split_by ? G_SPLIT : G_NOT;
            set_why(&c->rd[i], g, "the program %s: %s in T%lld",
                     split_by ? "shards by splits" : "keeps parallel axes whole",
                     id_name(by->t->loop[bg->pos[0]], a, sizeof a), (long long)by->t->number);
            any = true;
        }
    (void)any;
}

/* "[2, 8] (T1=2,11*12)" for the reading of r with `split` */
static size_t describe_reading(const reading *r, unsigned split, char *buf, size_t n)
{
    hir_iterdomain *ids[MAXL];
    unsigned char parts[MAXL];
    int na = build(r, split, ids, parts), at = 0;
    size_t w = (size_t)snprintf(buf, n, "[");
    for (int k = 0; k < na && w < n; at += parts[k++]) {
        int64_t e = 1, x;
        bool known = true;
        for (int j = 0; j < parts[k]; j++)
            known = known && ids[at + j]->extent && hir_scalar_const(ids[at + j]->extent, &x) && (e *= x, true);
        if (known)
            w += (size_t)snprintf(buf + w, n - w, "%s%lld", k ? ", " : "", (long long)e);
        else
            w += (size_t)snprintf(buf + w, n - w, "%s?", k ? ", " : "");
    }
    if (w < n)
        w += (size_t)snprintf(buf + w, n - w, "] (T%lld=", (long long)r->t->number);
    at = 0;
    for (int k = 0; k < na && w < n; at += parts[k++])
        for (int j = 0; j < parts[k] && w < n; j++)
            w += (size_t)snprintf(buf + w, n - w, "%s%lld", j ? "*" : k ? "," : "",
                                  (long long)ids[at + j]->number);
    if (w < n)
        w += (size_t)snprintf(buf + w, n - w, ")");
    return w < n ? w : n - 1;
}

static void refuse(shctx *c, reading *r, hir_diag *d)
{
    char buf[1024], tn[64];
    unsigned cand = cand_mask(r), base = split_mask(r);
    size_t w = 0;
    int shown = 0;
    for (unsigned m = cand;; m = (m - 1) & cand) {
        if (shown < 4 && w < sizeof buf) {
            w += (size_t)snprintf(buf + w, sizeof buf - w, "%s", shown ? " or as " : "");
            if (w < sizeof buf)
                w += describe_reading(r, base | m, buf + w, sizeof buf - w);
            shown++;
        }
        if (!m)
            break;
    }
    char *ts = hir_tensor_str(r->t);
    char first[256];
    describe_reading(r, base | cand, first, sizeof first);
    char *eq = strstr(first, "(T");
    snprintf(tn, sizeof tn, "T%lld", (long long)r->t->number);
    hir_diag_entry *e = hir_diag_emit(
        d, HIR_ERROR, r->t->loc,
        "the shape of %s is ambiguous: %s reads as %s; neither the print nor the operations on %s decide",
        tn, ts ? ts : tn, buf, tn);
    free(ts);
    if (eq) {
        eq[strlen(eq) - 1] = 0;
        hir_diag_note(d, e, r->t->loc, "say which with --logical %s (IterDomain numbers of each logical axis, '*' between the parts of a split)",
                      eq + 1);
    }
    if (c->older)
        hir_diag_note(d, e, r->t->loc, "%s", c->older);
    set_view(c->p, r, HIR_SHAPE_REFUSED, NULL);
}

/* The smallest IterDomain number that no IterDomain of p has. */
static int64_t first_hole(const hir_program *p)
{
    size_t n = p->diterdomains.cap, at;
    int64_t hole = 0;
    for (size_t i = 0; i < n; i++, hole++)
        if (!p->diterdomains.items[i])
            return hole;
    /* past the dense array: the far numbers (rare) */
    for (;;) {
        bool found = false;
        for (const hir_iterdomain *id = hir_iterdomain_next(p, NULL, &at); id;
             id = hir_iterdomain_next(p, id, &at))
            if (id->number == hole) {
                found = true;
                break;
            }
        if (!found)
            return hole;
        hole++;
    }
}

/* Whether the host lowering numbered the IterDomains it made (HirAliasSelect outputs) below the
 * fusion's. nvFuser's older lowering (HostIrLower::lower) clones the fusion's values one by one
 * into a new container: a clone keeps its number, but the container's counter only counts the
 * clones, so what the host makes afterwards is numbered from the number of IterDomains cloned,
 * below the fusion's largest numbers, and may repeat one (the newer lowering copies the
 * counters). Such numbers say nothing about splits; host_made decides those tensors from the
 * operation instead, and the explanation says why. The number rules for the fusion's tensors
 * still hold: their numbers are the fusion's, and the lowest number the fusion's print leaves
 * out stays out (the counter has counted at least every IterDomain below it, and the axis a
 * split consumed, before it makes one). */
static void find_older(shctx *c)
{
    int64_t fmax = -1, hmin = INT64_MAX;
    const hir_tensor *ft = NULL, *ht = NULL;
    const hir_iterdomain *fid = NULL, *hid = NULL;
    size_t at;
    for (hir_tensor *t = hir_tensor_next(c->p, NULL, &at); t; t = hir_tensor_next(c->p, t, &at)) {
        bool host = hir_map_get(&c->host, (uint64_t)t->number) != NULL;
        for (int i = 0; i < t->nloop; i++) {
            int64_t n = t->loop[i]->number;
            if (host && n < hmin)
                hmin = n, ht = t, hid = t->loop[i];
            else if (!host && n > fmax)
                fmax = n, ft = t, fid = t->loop[i];
        }
    }
    if (!ht || !ft || hmin > fmax)
        return;
    char a[64], b[64], buf[320];
    int n = snprintf(buf, sizeof buf,
                     "%s of the HirAliasSelect output T%lld is numbered below %s of T%lld: the older host lowering (HostIrLower::lower) numbers what it makes from its own counter, so these numbers are no evidence",
                     id_name(hid, a, sizeof a), (long long)ht->number, id_name(fid, b, sizeof b),
                     (long long)ft->number);
    c->older = hir_arena_strndup(c->p->arena, buf, n < 0 ? 0 : (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

int hir_program_shapes(hir_program *p, const char *const *logical, int nlogical, hir_diag *d)
{
    shctx *c = calloc(1, sizeof *c);
    if (!c)
        return HIR_ENOMEM;
    c->p = p;
    hir_map_init_in(&c->at, p->arena);
    hir_map_init_in(&c->host, p->arena);
    jmp_buf oom;
    jmp_buf *outer = hir_arena_on_oom(p->arena, &oom);
    if (setjmp(oom)) {
        hir_arena_on_oom(p->arena, outer);
        hir_map_fini(&c->at);
        hir_map_fini(&c->host);
        free(c->rd);
        free(c);
        return HIR_ENOMEM;
    }
    int errors = 0;
    for (int i = 0; i < nlogical; i++)
        errors += apply_user(p, logical[i], d);
    if (errors) {   /* the user's readings first: nothing is decided around a wrong one */
        hir_arena_on_oom(p->arena, outer);
        hir_map_fini(&c->at);
        hir_map_fini(&c->host);
        free(c->rd);
        free(c);
        return errors;
    }
    size_t at;
    int n = 0;
    for (hir_tensor *t = hir_tensor_next(p, NULL, &at); t; t = hir_tensor_next(p, t, &at))
        n += t->shape.state == HIR_SHAPE_OPEN;
    c->rd = calloc((size_t)(n ? n : 1), sizeof *c->rd);   /* transient: freed below */
    if (!c->rd)
        hir_arena_oom(p->arena);
    int64_t hole = n ? first_hole(p) : 0;
    for (hir_tensor *t = hir_tensor_next(p, NULL, &at); t; t = hir_tensor_next(p, t, &at)) {
        if (t->shape.state != HIR_SHAPE_OPEN)
            continue;
        reading *r = &c->rd[c->nrd];
        r->t = t;
        r->arena = p->arena;
        find_groups(r);
        hir_map_put(&c->at, (uint64_t)t->number, (void *)(uintptr_t)(++c->nrd));
    }
    if (c->nrd) {
        hir_block_walk(&p->body, 0, collect, c);
        find_older(c);
        for (int i = 0; i < c->nrd; i++)
            while (decide_by_numbers(&c->rd[i], hole))
                ;
        by_operations(c, hole);
    }
    if (c->nrd)
        by_convention(c);
    for (int i = 0; i < c->nrd; i++) {
        reading *r = &c->rd[i];
        if (cand_mask(r)) {
            refuse(c, r, d);
            errors++;
        } else {
            set_view(p, r, HIR_SHAPE_DECIDED,
                     c->older && hir_map_get(&c->host, (uint64_t)r->t->number) ? c->older : NULL);
        }
    }
    hir_arena_on_oom(p->arena, outer);
    hir_map_fini(&c->at);
    hir_map_fini(&c->host);
    free(c->rd);
    free(c);
    return errors;
}

/* ------------------------------------------------------------------ queries */

void hir_shape_axis_get(const hir_tensor *t, int i, hir_shape_axis *a)
{
    int first = 0;
    if (t->shape.parts)
        for (int k = 0; k < i; k++)
            first += t->shape.parts[k];
    else
        first = i;
    memset(a, 0, sizeof *a);
    a->first = first;
    a->nparts = t->shape.parts ? t->shape.parts[i] : 1;
    hir_iterdomain *const *ids = t->shape.ids;
    a->outer = ids[first];
    a->inner = ids[first + a->nparts - 1];
    a->reduction = reductionlike(a->inner);
    a->global = a->local = 1;
    for (int j = 0; j < a->nparts; j++) {
        const hir_iterdomain *id = ids[first + j];
        int64_t e;
        a->device |= hir_ptype_is_device(id->ptype);
        a->rf |= (id->flags & HIR_ID_RFACTOR) != 0;
        if (!id->extent || !hir_scalar_const(id->extent, &e))
            a->global = -1;
        else if (a->global >= 0)
            a->global *= e;
        if (!hir_ptype_is_device(id->ptype)) {
            if (!id->extent || !hir_scalar_const(id->extent, &e))
                a->local = -1;
            else if (a->local >= 0)
                a->local *= e;
        }
    }
    if (a->nparts == 1)
        a->extent = a->inner->extent;
    else
        a->extent = ceildiv_of(a->inner->extent, ids[first + a->nparts - 2]);
    if (a->nparts == 3 && a->extent)   /* nested: X is itself ( ceilDiv(Y, outer) ) */
        a->extent = ceildiv_of(a->extent, ids[first]);
    int64_t x;
    if (a->extent && hir_scalar_const(a->extent, &x))
        a->global = x;
    /* a split by stream: the whole axis outside its loop (local to a device, not a stream) */
    if (a->nparts > 1 && a->local >= 0 && a->extent && !a->device && hir_scalar_const(a->extent, &x))
        a->local = x;
    else if (a->nparts > 1 && !a->device && a->extent)
        a->local = a->global;
    a->dim = !a->reduction && !(a->nparts == 1 && a->device && a->rf);
}

static void print_extent(const hir_tensor *t, const hir_shape_axis *a, bool local, FILE *f)
{
    int64_t v = local ? a->local : a->global;
    if (v >= 0) {
        fprintf(f, "%lld", (long long)v);
        return;
    }
    if (a->extent && (!local || !a->device)) {
        hir_scalar_print_inline(a->extent, f);
        return;
    }
    hir_scalar *x1;   /* split by device first, its inner again: a device holds that inner */
    if (local && a->nparts == 3 && hir_ptype_is_device(a->outer->ptype) &&
        (x1 = ceildiv_of(a->inner->extent, t->shape.ids[a->first + 1]))) {
        hir_scalar_print_inline(x1, f);
        return;
    }
    for (int j = 0, k = 0; j < a->nparts; j++) {
        const hir_iterdomain *id = t->shape.ids[a->first + j];
        if (local && hir_ptype_is_device(id->ptype))
            continue;
        fputs(k++ ? "*" : "", f);
        if (id->extent)
            hir_scalar_print_inline(id->extent, f);
        else
            fputs("?", f);
    }
}

typedef struct permutes {
    const hir_stmt **s;
    size_t n, cap;
} permutes;

static bool find_permutes(hir_stmt *s, int depth, void *ctx)
{
    permutes *ps = ctx;
    if ((s->op == HIR_OP_SET || s->op == HIR_OP_SEGMENTER_SET) && s->u.ls.permute && s->out &&
        s->nin == 1 && hir_value_tensor(s->in[0])) {
        if (ps->n == ps->cap) {
            size_t cap = ps->cap ? 2 * ps->cap : 16;
            const hir_stmt **g = realloc(ps->s, cap * sizeof *g);
            if (!g)
                return false;
            ps->s = g;
            ps->cap = cap;
        }
        ps->s[ps->n++] = s;
    }
    return true;
}

/* "; Set.Permute of T0, axes from [2, 0, 1]" for the output of a permute */
static void print_permute(const permutes *ps, const hir_tensor *t, FILE *f)
{
    int perm[MAXL];
    for (size_t k = 0; k < ps->n; k++) {
        const hir_tensor *in = hir_value_tensor(ps->s[k]->in[0]);
        if (ps->s[k]->out != t || hir_shape_permutation(in, t, perm))
            continue;
        fprintf(f, "; %s.Permute of T%lld, axes from [", hir_ops[ps->s[k]->op].keyword,
                (long long)in->number);
        for (int i = 0; i < t->shape.naxes; i++)
            fprintf(f, "%s%d", i ? ", " : "", perm[i]);
        fputs("]", f);
        return;
    }
}

void hir_program_print_shapes(const hir_program *p, FILE *f)
{
    size_t at;
    char nm[64];
    permutes ps = {NULL, 0, 0};
    hir_block_walk((hir_block *)&p->body, 0, find_permutes, &ps);
    for (const hir_tensor *t = hir_tensor_next(p, NULL, &at); t; t = hir_tensor_next(p, t, &at)) {
        hir_shape_axis a;
        bool differ = false;
        fprintf(f, "T%lld: [", (long long)t->number);
        for (int i = 0; i < t->shape.naxes; i++) {
            hir_shape_axis_get(t, i, &a);
            fputs(i ? ", " : "", f);
            if (a.reduction)
                fputc('r', f);
            print_extent(t, &a, false, f);
            differ |= a.device && !a.reduction;
        }
        fputs("]", f);
        if (differ) {
            fputs(" local [", f);
            for (int i = 0, k = 0; i < t->shape.naxes; i++) {
                hir_shape_axis_get(t, i, &a);
                if (a.reduction)
                    continue;
                fputs(k++ ? ", " : "", f);
                if (a.device && a.nparts == 1)
                    fputs("1", f);
                else
                    print_extent(t, &a, true, f);
            }
            fputs("]", f);
        }
        fputs(" = [", f);
        for (int i = 0; i < t->shape.naxes; i++) {
            hir_shape_axis_get(t, i, &a);
            fputs(i ? ", " : "", f);
            for (int j = 0; j < a.nparts; j++)
                fprintf(f, "%s%s", j ? "*" : "", id_name(t->shape.ids[a.first + j], nm, sizeof nm));
        }
        fprintf(f, "] (%s%s",
                t->shape.state == HIR_SHAPE_REFUSED ? "ambiguous, read as separate axes: " :
                t->shape.state == HIR_SHAPE_OPEN ? "not decided yet: " : "",
                t->shape.how ? t->shape.how : "as printed");
        for (int i = 0, k = 0; i < t->nloop && !t->shape.how; i++)
            if (t->loop[i]->flags & HIR_ID_RFACTOR)
                fprintf(f, "%s%s", k++ ? ", " : "; rf axes ", id_name(t->loop[i], nm, sizeof nm));
        print_permute(&ps, t, f);
        fputs(")\n", f);
    }
    free(ps.s);
}

int hir_shape_permutation(const hir_tensor *in, const hir_tensor *out, int *perm)
{
    /* the output's IterDomains were made in the input's order, then permuted: output axis i
     * comes from the input axis whose rank among the input's axes equals the rank of i's
     * number among the output's numbers */
    int n = out->shape.naxes;
    if (n != in->shape.naxes || out->shape.parts || in->shape.parts || n > MAXL)
        return -1;
    for (int i = 0; i < n; i++) {
        int rank = 0;
        for (int j = 0; j < n; j++)
            rank += out->shape.ids[j]->number < out->shape.ids[i]->number;
        perm[i] = rank;
    }
    return 0;
}
