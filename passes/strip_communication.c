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
    /* regions that lost statements, innermost first, with the block that holds them */
    hir_stmt **region;
    hir_block **parent;
    int nregion, capregion;
} strip_ctx;

static bool is_comm(const hir_stmt *s) { return (hir_ops[s->op].flags & HIR_OPF_COMM) != 0; }

static bool is_region(const hir_stmt *s) { return (hir_ops[s->op].flags & HIR_OPF_REGION) != 0; }

static void remove_from(hir_block *b, const hir_stmt *s);
#define remove_from_top remove_from

static void note_filled(strip_ctx *c, hir_tensor *t)
{
    if (!t)
        return;
    for (int i = 0; i < c->nfilled; i++)
        if (c->filled[i] == t)
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
}

/* The statement of block b (at any depth) whose output is t and that is a view or ALLOCATE. */
static hir_stmt *definer(const hir_block *b, const hir_tensor *t, bool top, bool *at_top)
{
    for (int i = 0; i < hir_block_size(b); i++) {
        hir_stmt *s = hir_block_at(b, i);
        if (s->out == t && (s->op == HIR_OP_ALIAS_SELECT || s->op == HIR_OP_ALLOCATE)) {
            *at_top = top;
            return s;
        }
        if (is_region(s)) {
            hir_stmt *r = definer(&s->body, t, false, at_top);
            if (!r)
                r = definer(&s->else_body, t, false, at_top);
            if (r)
                return r;
        }
    }
    return NULL;
}

static bool in_list(const hir_ptrvec *v, const hir_tensor *t)
{
    for (int i = 0; i < v->n; i++)
        if (hir_value_tensor(v->items[i]) == t)
            return true;
    return false;
}

/* Buffers that removed communications filled, when they (or what they view) come from a
 * top-level ALLOCATE: that ALLOCATE goes, the buffer becomes a program input. */
static void filled_to_inputs(strip_ctx *c)
{
    hir_program *p = c->p;
    for (int i = 0; i < c->nfilled; i++) {
        hir_tensor *t = c->filled[i];
        bool top = false;
        hir_stmt *s = NULL;
        for (int depth = 0; depth < 64 && t; depth++) {
            s = definer(&p->body, t, true, &top);
            if (!s || s->op == HIR_OP_ALLOCATE || s->nin < 1)
                break;
            t = hir_value_tensor(s->in[0]);  /* a view: what it views */
        }
        if (!s || s->op != HIR_OP_ALLOCATE || !top || s->u.alloc.zero_init ||
            in_list(&p->inputs, t) || in_list(&p->outputs, t))
            continue;
        remove_from_top(&p->body, s);
        hir_ptrvec_push(p->arena, &p->inputs, t);
    }
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

static bool only_views(const hir_block *b)
{
    for (int i = 0; i < hir_block_size(b); i++)
        if (hir_block_at(b, i)->op != HIR_OP_ALIAS_SELECT)
            return false;
    return true;
}

typedef struct use {
    const hir_tensor *t;
    const hir_stmt *skip;        /* the region whose removal is considered */
    bool read, defined;
} use;

static void uses_in(use *u, const hir_block *b)
{
    for (int i = 0; i < hir_block_size(b); i++) {
        hir_stmt *s = hir_block_at(b, i);
        if (s == u->skip)
            continue;
        for (int j = 0; j < s->nin; j++)
            if (hir_value_tensor(s->in[j]) == u->t)
                u->read = true;
        if (s->op == HIR_OP_ALLOCATE && s->u.alloc.alias == u->t)
            u->read = true;
        hir_tensor *outs[64];
        int n = pu_stmt_outputs(s, outs, 64);
        for (int j = 0; j < n; j++)
            if (outs[j] == u->t)
                u->defined = true;
        if (is_region(s)) {
            uses_in(u, &s->body);
            uses_in(u, &s->else_body);
        }
    }
}

/* Is the view output t read outside region r without being defined there too? */
static bool view_needed(hir_program *p, const hir_stmt *r, const hir_tensor *t)
{
    use u = {t, r, false, false};
    uses_in(&u, &p->body);
    for (int i = 0; i < p->outputs.n; i++)
        if (p->outputs.items[i] == (const void *)t)
            u.read = true;
    return u.read && !u.defined;
}

static bool removable(hir_program *p, const hir_stmt *r)
{
    if (!only_views(&r->body) || !only_views(&r->else_body))
        return false;
    const hir_block *bl[2] = {&r->body, &r->else_body};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < hir_block_size(bl[k]); i++)
            if (view_needed(p, r, hir_block_at(bl[k], i)->out))
                return false;
    return true;
}

static void remove_from(hir_block *b, const hir_stmt *s)
{
    for (int i = 0; i < hir_block_size(b); i++)
        if (hir_block_at(b, i) == s) {
            hir_ptrvec_remove(&b->stmts, i);
            return;
        }
}

int hir_run_strip_communication(hir_program *p, const hir_pass_args *args, hir_diag *d)
{
    (void)args;
    (void)d;   /* nothing to refuse: every program has a communication-free form */
    strip_ctx c = {p, 0, NULL, 0, 0, NULL, NULL, 0, 0};

    hir_map before;
    hir_map_init_in(&before, p->arena);
    pu_used_symbols(p, &before);

    strip_block(&c, &p->body);
    /* innermost first, so an emptied IF goes before the loop that held it is judged */
    for (int i = 0; i < c.nregion; i++)
        if (removable(p, c.region[i]))
            remove_from(c.parent[i], c.region[i]);
    filled_to_inputs(&c);
    if (c.removed)
        pu_prune_index_defs(p, &before);

    hir_map_fini(&before);
    free(c.region);
    free(c.parent);
    free(c.filled);
    return 0;
}

const hir_pass_option hir_opts_strip_communication[] = {
    {NULL, 0, NULL, NULL, NULL, false},
};
