/* strip_communication.c — --strip-communication: remove every communication statement and
 * keep the compute, for the compute-only ceiling of a lowered pipeline ("the same GEMMs with
 * the communication removed").
 *
 * Why: a benchmark of an overlapped AG+GEMM pipeline needs the time the GEMMs alone take on the
 * same streams with the same shapes; the difference to the full program is what the
 * communication costs after overlap.
 *
 * The stripped program computes meaningless values, and must not be checked against the input
 * program (do not run it with `hir-run --check`); only its timing means something. But its
 * GEMMs must read real data: a buffer that a removed receive or collective used to fill would
 * otherwise keep what a fresh allocation holds — zeros, on which GEMMs run faster than on real
 * data (on an H200, 2026-12-03, a compute-only figure 25 % too high). So when that buffer (or
 * the buffer it is a HirAliasSelect view of) comes from a top-level ALLOCATE, the ALLOCATE is
 * removed and the buffer becomes an input of the program: hir-run fills it like every input.
 *
 * Needs: any program (typically one lowered by --stream-parallel, --backend=nccl|cuda,
 *   --defer-send-wait or --convert-to-communication).
 * Changes: removes P2PCommunication, Communication, ShareMemHandles, Wait, StartCoalescing and
 *   EndCoalescing statements at any depth. An IF whose else-branch became empty prints without
 *   `ELSE:`. A FOR or IF that lost statements and now holds nothing but HirAliasSelect views
 *   (an emptied `IF pred: ELSE: Wait send` of --defer-send-wait, the exchange loop of
 *   --hoist-handle-exchange) is removed, unless a view it defines is read elsewhere and not
 *   defined there. Every other statement — compute, views, ALLOCATE, FOR loops, stream
 *   statements — stays as it is, in order. Trailer definitions that only removed statements
 *   used are dropped (those that were already unused stay: that is --canonicalize's job).
 *   A program without communication comes out unchanged; running it twice changes nothing.
 */
#include "passes/ir_util.h"
#include "passes/passes.h"

#include <stdlib.h>

typedef struct strip_ctx {
    hir_program *p;
    int removed;                 /* communication statements removed */
    hir_tensor **filled;         /* buffers a removed communication wrote */
    int nfilled, capfilled;
    hir_map is_filled;           /* the same as a set (pointer -> itself) */
    hir_map gone;                /* statements removed from their blocks (pointer -> itself);
                                  * blocks are compacted once at the end of a phase */
    /* regions that lost statements, innermost first, with the block that holds them */
    hir_stmt **region;
    hir_block **parent;
    int nregion, capregion;
} strip_ctx;

static bool is_comm(const hir_stmt *s) { return (hir_ops[s->op].flags & HIR_OPF_COMM) != 0; }

static bool is_region(const hir_stmt *s) { return (hir_ops[s->op].flags & HIR_OPF_REGION) != 0; }

static void note_filled(strip_ctx *c, hir_tensor *t)
{
    if (!t || hir_map_get(&c->is_filled, (uint64_t)(uintptr_t)t))
        return;
    if (c->nfilled == c->capfilled) {
        int cap = c->capfilled ? 2 * c->capfilled : 16;
        hir_tensor **f = realloc(c->filled, (size_t)cap * sizeof *f);
        if (!f)
            return;              /* out of memory: that buffer just stays an ALLOCATE */
        c->filled = f;
        c->capfilled = cap;
    }
    c->filled[c->nfilled++] = t;
    hir_map_put(&c->is_filled, (uint64_t)(uintptr_t)t, t);
}

static bool is_removed(const strip_ctx *c, const hir_stmt *s)
{
    return hir_map_get(&c->gone, (uint64_t)(uintptr_t)s) != NULL;
}

/* Drops the removed statements of b, keeping the order of the others (one pass over b). */
static void compact(strip_ctx *c, hir_block *b)
{
    int k = 0;
    for (int i = 0; i < hir_block_size(b); i++)
        if (!is_removed(c, hir_block_at(b, i)))
            b->stmts.items[k++] = b->stmts.items[i];
    b->stmts.n = k;
}

/* The views and ALLOCATEs of the program by output tensor, in the order of a pre-order walk
 * (a statement before the bodies it holds): what a search of the program for the first
 * statement defining t finds, without a search per tensor. */
typedef struct def_rec { hir_stmt *s; bool top; int next; } def_rec;
typedef struct def_index {
    hir_map first, last;         /* tensor -> 1 + first / last record */
    def_rec *rec;
    int n, cap;
} def_index;

static void index_defs(strip_ctx *c, def_index *x, hir_block *b, bool top)
{
    for (int i = 0; i < hir_block_size(b); i++) {
        hir_stmt *s = hir_block_at(b, i);
        if (s->out && (s->op == HIR_OP_ALIAS_SELECT || s->op == HIR_OP_ALLOCATE)) {
            if (x->n == x->cap) {
                int cap = x->cap ? 2 * x->cap : 64;
                x->rec = hir_arena_grow(c->p->arena, x->rec, sizeof *x->rec * (size_t)x->cap,
                                        sizeof *x->rec * (size_t)cap);
                x->cap = cap;
            }
            x->rec[x->n] = (def_rec){s, top, -1};
            uint64_t key = (uint64_t)(uintptr_t)s->out;
            int last = (int)(uintptr_t)hir_map_get(&x->last, key) - 1;
            if (last >= 0)
                x->rec[last].next = x->n;
            else
                hir_map_put(&x->first, key, (void *)(uintptr_t)(x->n + 1));
            hir_map_put(&x->last, key, (void *)(uintptr_t)(x->n + 1));
            x->n++;
        }
        if (is_region(s)) {
            index_defs(c, x, &s->body, false);
            index_defs(c, x, &s->else_body, false);
        }
    }
}

/* The first statement (see def_index) still in the program whose output is t and that is a
 * view or ALLOCATE. */
static hir_stmt *definer(strip_ctx *c, const def_index *x, const hir_tensor *t, bool *at_top)
{
    for (int i = (int)(uintptr_t)hir_map_get(&x->first, (uint64_t)(uintptr_t)t) - 1; i >= 0;
         i = x->rec[i].next)
        if (!is_removed(c, x->rec[i].s)) {
            *at_top = x->rec[i].top;
            return x->rec[i].s;
        }
    return NULL;
}

/* Buffers that removed communications filled, when they (or what they view) come from a
 * top-level ALLOCATE: that ALLOCATE goes, the buffer becomes a program input. */
static void filled_to_inputs(strip_ctx *c)
{
    hir_program *p = c->p;
    def_index x = {{0}, {0}, NULL, 0, 0};
    hir_map_init_in(&x.first, p->arena);
    hir_map_init_in(&x.last, p->arena);
    index_defs(c, &x, &p->body, true);
    hir_map io;                  /* tensors among the program's inputs and outputs */
    hir_map_init_in(&io, p->arena);
    hir_ptrvec *lists[2] = {&p->inputs, &p->outputs};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < lists[k]->n; i++) {
            hir_tensor *t = hir_value_tensor(lists[k]->items[i]);
            if (t)
                hir_map_put(&io, (uint64_t)(uintptr_t)t, t);
        }
    int dropped = 0;
    for (int i = 0; i < c->nfilled; i++) {
        hir_tensor *t = c->filled[i];
        bool top = false;
        hir_stmt *s = NULL;
        for (int depth = 0; depth < 64 && t; depth++) {
            s = definer(c, &x, t, &top);
            if (!s || s->op == HIR_OP_ALLOCATE || s->nin < 1)
                break;
            t = hir_value_tensor(s->in[0]);  /* a view: what it views */
        }
        if (!s || s->op != HIR_OP_ALLOCATE || !top || s->u.alloc.zero_init ||
            hir_map_get(&io, (uint64_t)(uintptr_t)t))
            continue;
        hir_map_put(&c->gone, (uint64_t)(uintptr_t)s, s);
        dropped++;
        hir_ptrvec_push(p->arena, &p->inputs, t);
        hir_map_put(&io, (uint64_t)(uintptr_t)t, t);
    }
    if (dropped)
        compact(c, &p->body);
    hir_map_fini(&x.first);
    hir_map_fini(&x.last);
    hir_map_fini(&io);
}

static void note_region(strip_ctx *c, hir_block *parent, hir_stmt *s)
{
    if (c->nregion == c->capregion) {
        int cap = c->capregion ? 2 * c->capregion : 16;
        hir_stmt **r = realloc(c->region, (size_t)cap * sizeof *r);
        if (r)
            c->region = r;
        hir_block **b = realloc(c->parent, (size_t)cap * sizeof *b);
        if (b)
            c->parent = b;
        if (!r || !b)
            hir_arena_oom(c->p->arena);   /* back to hir_pipeline_run (c's arrays leak) */
        c->capregion = cap;
    }
    c->region[c->nregion] = s;
    c->parent[c->nregion] = parent;
    c->nregion++;
}

/* Drops the communication statements of b and of the regions in it. Returns whether b or a
 * region in it lost a statement; such regions are noted, innermost first. */
static bool strip_block(strip_ctx *c, hir_block *b)
{
    bool lost = false;
    int k = 0;
    for (int i = 0; i < hir_block_size(b); i++) {
        hir_stmt *s = hir_block_at(b, i);
        if (is_comm(s)) {
            /* the expression is no longer executed by any statement */
            if ((s->op == HIR_OP_COMMUNICATION || s->op == HIR_OP_P2P || s->op == HIR_OP_END_COAL) &&
                s->u.comm && s->u.comm->stmt == s)
                s->u.comm->stmt = NULL;
            if (s->op == HIR_OP_P2P && s->u.comm && !s->u.comm->is_send)
                note_filled(c, s->u.comm->buffer);
            if (s->op == HIR_OP_COMMUNICATION && s->u.comm)
                note_filled(c, s->u.comm->output);
            c->removed++;
            lost = true;
            continue;
        }
        if (is_region(s)) {
            bool r = strip_block(c, &s->body);
            r |= strip_block(c, &s->else_body);
            if (r) {
                lost = true;
                if (s->op == HIR_OP_IF && hir_block_size(&s->else_body) == 0)
                    s->u.cond.has_else = false;
                note_region(c, b, s);
            }
        }
        b->stmts.items[k++] = s;
    }
    b->stmts.n = k;
    return lost;
}

static bool only_views(const strip_ctx *c, const hir_block *b)
{
    for (int i = 0; i < hir_block_size(b); i++)
        if (hir_block_at(b, i)->op != HIR_OP_ALIAS_SELECT && !is_removed(c, hir_block_at(b, i)))
            return false;
    return true;
}

/* How often each tensor is read (an input, or the alias of an ALLOCATE) and defined (an
 * output) by the statements of a part of the program. */
typedef struct use { int read, defined; } use;

static use *use_of(hir_program *p, hir_map *m, const hir_tensor *t)
{
    use *u = hir_map_get(m, (uint64_t)(uintptr_t)t);
    if (!u) {
        u = hir_arena_alloc(p->arena, sizeof *u);
        u->read = u->defined = 0;
        hir_map_put(m, (uint64_t)(uintptr_t)t, u);
    }
    return u;
}

/* Adds sign x the uses of s (not of the statements it holds) to m. */
static void count_stmt(hir_program *p, hir_map *m, const hir_stmt *s, int sign)
{
    for (int j = 0; j < s->nin; j++) {
        hir_tensor *t = hir_value_tensor(s->in[j]);
        if (t)
            use_of(p, m, t)->read += sign;
    }
    if (s->op == HIR_OP_ALLOCATE && s->u.alloc.alias)
        use_of(p, m, s->u.alloc.alias)->read += sign;
    hir_tensor *outs[64];
    int n = pu_stmt_outputs((hir_stmt *)s, outs, 64);
    for (int j = 0; j < n; j++)
        if (outs[j])
            use_of(p, m, outs[j])->defined += sign;
}

/* The uses of the statements of b and of those they hold, removed ones excepted. */
static void count_block(strip_ctx *c, hir_map *m, const hir_block *b, int sign)
{
    for (int i = 0; i < hir_block_size(b); i++) {
        hir_stmt *s = hir_block_at(b, i);
        if (is_removed(c, s))
            continue;
        count_stmt(c->p, m, s, sign);
        if (is_region(s)) {
            count_block(c, m, &s->body, sign);
            count_block(c, m, &s->else_body, sign);
        }
    }
}

/* Can region r go: it holds nothing but views, and no view output it defines is read
 * outside r without being defined outside r too (program outputs count as reads)? `all`
 * counts the uses of the whole program as it stands; `in` receives those of r. */
static bool removable(strip_ctx *c, hir_map *all, hir_map *in, const hir_stmt *r,
                      const hir_map *outputs)
{
    if (!only_views(c, &r->body) || !only_views(c, &r->else_body))
        return false;
    count_stmt(c->p, in, r, 1);
    count_block(c, in, &r->body, 1);
    count_block(c, in, &r->else_body, 1);
    const hir_block *bl[2] = {&r->body, &r->else_body};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < hir_block_size(bl[k]); i++) {
            const hir_stmt *v = hir_block_at(bl[k], i);
            if (is_removed(c, v))
                continue;
            const hir_tensor *t = v->out;
            use *ua = use_of(c->p, all, t), *ur = use_of(c->p, in, t);
            bool read = ua->read - ur->read > 0 || hir_map_get(outputs, (uint64_t)(uintptr_t)t);
            bool defined = ua->defined - ur->defined > 0;
            if (read && !defined)
                return false;
        }
    return true;
}

int hir_run_strip_communication(hir_program *p, const hir_pass_args *args, hir_diag *d)
{
    (void)args;
    (void)d;   /* nothing to refuse: every program has a communication-free form */
    strip_ctx c = {p, 0, NULL, 0, 0, {0}, {0}, NULL, NULL, 0, 0};
    hir_map_init_in(&c.is_filled, p->arena);
    hir_map_init_in(&c.gone, p->arena);

    hir_map before;
    hir_map_init_in(&before, p->arena);
    pu_used_symbols(p, &before);

    strip_block(&c, &p->body);
    /* innermost first, so an emptied IF goes before the loop that held it is judged; the
     * uses of the whole program are counted once and a removed region's taken out */
    if (c.nregion) {
        hir_map all, outputs, parents;
        hir_map_init_in(&all, p->arena);
        hir_map_init_in(&outputs, p->arena);
        hir_map_init_in(&parents, p->arena);
        count_block(&c, &all, &p->body, 1);
        for (int i = 0; i < p->outputs.n; i++)
            if (p->outputs.items[i])
                hir_map_put(&outputs, (uint64_t)(uintptr_t)p->outputs.items[i], p->outputs.items[i]);
        for (int i = 0; i < c.nregion; i++) {
            hir_map in;
            hir_map_init_in(&in, p->arena);
            if (removable(&c, &all, &in, c.region[i], &outputs)) {
                count_stmt(p, &all, c.region[i], -1);
                count_block(&c, &all, &c.region[i]->body, -1);
                count_block(&c, &all, &c.region[i]->else_body, -1);
                hir_map_put(&c.gone, (uint64_t)(uintptr_t)c.region[i], c.region[i]);
                hir_map_put(&parents, (uint64_t)(uintptr_t)c.parent[i], c.parent[i]);
            }
            hir_map_fini(&in);
        }
        for (size_t i = 0; i < parents.cap; i++)
            if (parents.keys[i] != UINT64_MAX && parents.vals[i])
                compact(&c, parents.vals[i]);
        hir_map_fini(&all);
        hir_map_fini(&outputs);
        hir_map_fini(&parents);
    }
    filled_to_inputs(&c);
    if (c.removed)
        pu_prune_index_defs(p, &before);

    hir_map_fini(&before);
    hir_map_fini(&c.is_filled);
    hir_map_fini(&c.gone);
    free(c.region);
    free(c.parent);
    free(c.filled);
    return 0;
}

const hir_pass_option hir_opts_strip_communication[] = {
    {NULL, 0, NULL, NULL, NULL, false},
};
