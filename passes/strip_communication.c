/* strip_communication.c — --strip-communication: remove every communication statement and
 * keep the compute, for the compute-only ceiling of a lowered pipeline ("the same GEMMs with
 * the communication removed").
 *
 * Why: a benchmark of an overlapped AG+GEMM pipeline needs the time the GEMMs alone take on the
 * same streams with the same shapes; the difference to the full program is what the
 * communication costs after overlap.
 *
 * The stripped program computes meaningless values: a buffer that a receive or a collective
 * used to fill keeps whatever it held (an ALLOCATE is not zeroed), so the GEMMs read garbage.
 * That is intended — its outputs must not be checked against the input program (do not run
 * it with `hir-run --check`); only its timing means something.
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
    /* regions that lost statements, innermost first, with the block that holds them */
    hir_stmt **region;
    hir_block **parent;
    int nregion, capregion;
} strip_ctx;

static bool is_comm(const hir_stmt *s) { return (hir_ops[s->op].flags & HIR_OPF_COMM) != 0; }

static bool is_region(const hir_stmt *s) { return (hir_ops[s->op].flags & HIR_OPF_REGION) != 0; }

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
    strip_ctx c = {p, 0, NULL, NULL, 0, 0};

    hir_map before;
    hir_map_init_in(&before, p->arena);
    pu_used_symbols(p, &before);

    strip_block(&c, &p->body);
    /* innermost first, so an emptied IF goes before the loop that held it is judged */
    for (int i = 0; i < c.nregion; i++)
        if (removable(p, c.region[i]))
            remove_from(c.parent[i], c.region[i]);
    if (c.removed)
        pu_prune_index_defs(p, &before);

    hir_map_fini(&before);
    free(c.region);
    free(c.parent);
    return 0;
}

const hir_pass_option hir_opts_strip_communication[] = {
    {NULL, NULL, NULL},
};
