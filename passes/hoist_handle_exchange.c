/* hoist_handle_exchange.c — --hoist-handle-exchange: exchanges all CUDA-IPC handles of a
 * pipeline once, before it starts, instead of inside its main loop (beyond nvFuser).
 *
 * Needs: kernel-IR FOR loops whose body holds `IF Manual pred:` statements with a
 *   `ShareMemHandles(...)` in the else-branch next to the P2P work (the CUDA form of
 *   --stream-parallel), with every exchanged buffer either defined before the loop or a
 *   HirAliasSelect view made in the loop body from such a tensor.
 * Changes: before the loop's stream pattern (before its GetCurrentStream, or before the loop
 *   itself) a new FOR over the same IterDomain with the same index is inserted; per
 *   exchange it re-creates the buffer views (the same HirAliasSelect statements) and an
 *   `IF Manual pred:` with the same predicate, an empty then-branch and the ShareMemHandles
 *   in the else-branch. The ShareMemHandles leave the main loop. Loops whose buffers are
 *   computed in the loop are left unchanged.
 * Why it is correct: the runner's IPC handle cache is keyed by (evaluated peer, evaluated
 *   buffer, communication). At iteration i the new loop evaluates the same peers and views
 *   (same expressions of the same index and rank, views of the same allocations) for the
 *   same communications as the main loop, so after it every key the main loop's send/recv
 *   uses is cached. The same predicate makes the same ranks skip the exchange at iteration i
 *   (the ranks that copy locally), so the store round trips and the world barrier that ends
 *   each exchange are entered by the same ranks at the same iterations as before — the CUDA
 *   ring's uniformity (hostir-format.md 3.6.2) is kept. The main loop then never blocks the
 *   host, and its iterations overlap from the first run on.
 * Idempotent: loops whose else-branches hold nothing but the exchange are not hoisted again.
 */
#include "passes/ir_util.h"
#include "passes/passes.h"

typedef struct hoist { hir_program *p; int hoisted; } hoist;

static bool defined_in(hir_block *b, int upto, hir_tensor *t, hir_stmt **def)
{
    for (int i = upto - 1; i >= 0; i--) {
        hir_stmt *s = hir_block_at(b, i);
        hir_tensor *outs[64];
        int n = pu_stmt_outputs(s, outs, 64);
        for (int k = 0; k < n; k++)
            if (outs[k] == t) {
                *def = s;
                return true;
            }
    }
    return false;
}

static bool has_view(hir_block *b, hir_stmt *s)
{
    for (int i = 0; i < hir_block_size(b); i++)
        if (hir_block_at(b, i) == s)
            return true;
    return false;
}

/* Appends to `views` the HirAliasSelects (in body order) that t depends on inside the loop
 * body before position `upto`; false when t is computed by anything else in the loop. */
static bool collect_views(hir_program *p, hir_block *body, int upto, hir_tensor *t, hir_block *views)
{
    hir_stmt *def;
    if (!defined_in(body, upto, t, &def))
        return true;   /* defined before the loop */
    if (def->op != HIR_OP_ALIAS_SELECT)
        return false;
    int at = 0;
    while (hir_block_at(body, at) != def)
        at++;
    if (!collect_views(p, body, at, hir_value_tensor(def->in[0]), views))
        return false;
    if (!has_view(views, def))
        hir_block_append(p, views, def);
    return true;
}

static hir_stmt *share_in(hir_stmt *cond, int *pos)
{
    hir_block *e = &cond->else_body;
    for (int i = 0; i < hir_block_size(e); i++)
        if (hir_block_at(e, i)->op == HIR_OP_SHARE_HANDLES) {
            *pos = i;
            return hir_block_size(e) > 1 ? hir_block_at(e, i) : NULL;
        }
    return NULL;
}

/* Builds the exchange loop for `loop`; NULL when there is nothing (or nothing safe) to do. */
static hir_stmt *exchange_loop(hoist *h, hir_stmt *loop)
{
    hir_program *p = h->p;
    hir_block *body = &loop->body;
    hir_stmt *ex = pu_kfor(p, loop->u.kfor.index, loop->u.kfor.id);
    ex->loc = loop->loc;
    int n = 0;
    for (int i = 0; i < hir_block_size(body); i++) {
        hir_stmt *cond = hir_block_at(body, i);
        int pos;
        hir_stmt *share = cond->op == HIR_OP_IF ? share_in(cond, &pos) : NULL;
        if (!share)
            continue;
        hir_block views = {0};
        for (int k = 0; k < share->u.share.n; k++)
            if (!collect_views(p, body, i, share->u.share.comms[k]->buffer, &views))
                return NULL;
        for (int k = 0; k < hir_block_size(&views); k++)
            if (!has_view(&ex->body, hir_block_at(&views, k)))
                hir_block_append(p, &ex->body, pu_stmt_clone(p, hir_block_at(&views, k)));
        hir_stmt *c = pu_if(p, cond->u.cond.pred);
        c->loc = cond->loc;
        c->u.cond.pred_type = cond->u.cond.pred_type;
        c->u.cond.has_else = true;
        hir_block_append(p, &c->else_body, share);
        hir_block_append(p, &ex->body, c);
        n++;
    }
    if (!n)
        return NULL;
    /* commit: the main loop keeps its P2P work without the exchange */
    for (int i = 0; i < hir_block_size(body); i++) {
        hir_stmt *cond = hir_block_at(body, i);
        int pos;
        if (cond->op == HIR_OP_IF && share_in(cond, &pos))
            hir_ptrvec_remove(&cond->else_body.stmts, pos);
    }
    return ex;
}

/* The block is rebuilt in one walk into a new array (an exchange loop lands at most two
 * statements before the loop it serves), never by insertion in place: that would move the
 * rest of the block for every pipeline, quadratic in a program of many pipelines. */
static void hoist_block(hoist *h, hir_block *b)
{
    hir_ptrvec out = {0};
    int added = 0;
    for (int i = 0; i < hir_block_size(b); i++) {
        hir_stmt *s = hir_block_at(b, i);
        if (hir_ops[s->op].flags & HIR_OPF_REGION) {
            hoist_block(h, &s->body);
            hoist_block(h, &s->else_body);
        }
        hir_stmt *ex = s->op == HIR_OP_FOR ? exchange_loop(h, s) : NULL;
        if (ex) {
            /* before the stream pattern [GetCurrentStream, sync FOR, main FOR] when present */
            int at = out.n;
            if (at >= 2 && ((hir_stmt *)out.items[at - 1])->op == HIR_OP_FOR &&
                ((hir_stmt *)out.items[at - 1])->u.kfor.id == s->u.kfor.id &&
                ((hir_stmt *)out.items[at - 2])->op == HIR_OP_GET_STREAM)
                at -= 2;
            hir_ptrvec_insert(h->p->arena, &out, at, ex);
            added++;
            h->hoisted++;
        }
        hir_ptrvec_push(h->p->arena, &out, s);
    }
    if (added)
        b->stmts = out;
}

int hir_run_hoist_handle_exchange(hir_program *p, const hir_pass_args *args, hir_diag *d)
{
    (void)args;
    (void)d;
    hoist h = {p, 0};
    hoist_block(&h, &p->body);
    return 0;
}

const hir_pass_option hir_opts_hoist_handle_exchange[] = {{NULL, 0, NULL, NULL, NULL, false}};
