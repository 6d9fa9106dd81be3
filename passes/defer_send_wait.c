/* defer_send_wait.c — --defer-send-wait: move the `Wait` of each CUDA-IPC send from the
 * exchange to the end of its loop iteration (what nvFuser's December 2025 lowering does,
 * hostir-format.md 3.6.3).
 *
 * Why: under the Get protocol `Wait send` makes this rank's stream wait until the peer has
 * pulled this rank's shard. Placed in the exchange, it sits before the chunk's GEMM on the
 * same stream, so the GEMM waits for a copy it does not depend on — a cross-rank stall that
 * the H200 trace in docs/benchmarks.md shows (GEMMs starting 9–27 ms after their data
 * arrived). After the move the GEMM only waits for its own receive.
 * Correct because the send buffer (the local shard) is not written inside the loop, and the
 * wait still completes before the iteration's stream is joined back into the main stream.
 *
 * Needs: a program lowered by --stream-parallel --backend=cuda (an `IF Manual pred` directly
 *   in a kernel-IR FOR body whose else-branch holds `send`, `recv` and their Waits).
 * Changes: each such `Wait send` leaves the else-branch; a new `IF Manual pred:` with an empty
 *   then-branch and `ELSE: Wait send` goes at the end of the loop body, before the statements
 *   that restore the main stream. Running it twice changes nothing. --backend recognises
 *   the deferred form: kind=cuda keeps it, kind=nccl and kind=auto (nodes > 1) put the Wait
 *   back into the exchange's group (their forms have one Wait for both halves).
 */
#include "passes/ir_util.h"
#include "passes/passes.h"

#include <string.h>

typedef struct defer_ctx {
    hir_program *p;
    int moved;
} defer_ctx;

/* Index in the loop body before which the epilogue goes: the trailing restore of the main
 * stream (`SetCurrentStream to Stream N` and the `Synchronize` statements after it). */
static int epilogue_at(hir_block *body)
{
    int n = hir_block_size(body);
    int at = n;
    for (int i = n - 1; i >= 0; i--) {
        hir_stmt *s = hir_block_at(body, i);
        if (s->op == HIR_OP_SYNC_STREAM)
            continue;
        if (s->op == HIR_OP_SET_STREAM && s->u.stream.number >= 0)
            at = i;
        break;
    }
    return at;
}

static bool visit(hir_stmt *loop, int depth, void *ctx)
{
    (void)depth;
    defer_ctx *c = ctx;
    if (loop->op != HIR_OP_FOR)
        return true;
    hir_block *body = &loop->body;
    for (int i = 0; i < hir_block_size(body); i++) {
        hir_stmt *cond = hir_block_at(body, i);
        if (cond->op != HIR_OP_IF)
            continue;
        hir_block *e = &cond->else_body;
        hir_comm *send = NULL;
        bool has_recv = false;
        for (int j = 0; j < hir_block_size(e); j++) {
            hir_stmt *s = hir_block_at(e, j);
            if (s->op == HIR_OP_P2P && s->u.comm->backend == HIR_BK_CUDA) {
                if (s->u.comm->is_send)
                    send = s->u.comm;
                else
                    has_recv = true;
            }
        }
        if (!send || !has_recv)
            continue;
        int w = -1;
        for (int j = 0; j < hir_block_size(e); j++) {
            hir_stmt *s = hir_block_at(e, j);
            if (s->op == HIR_OP_WAIT && s->u.wait.number == send->number)
                w = j;
        }
        if (w < 0)
            continue;   /* already deferred */
        hir_stmt *wait = hir_block_at(e, w);
        hir_ptrvec_remove(&e->stmts, w);
        hir_stmt *epi = pu_if(c->p, cond->u.cond.pred);
        epi->u.cond.pred_type = cond->u.cond.pred_type;
        hir_block_append(c->p, &epi->else_body, wait);
        epi->u.cond.has_else = true;
        hir_block_insert(c->p, body, epilogue_at(body), epi);
        c->moved++;
    }
    return true;
}

int hir_run_defer_send_wait(hir_program *p, const hir_pass_args *args, hir_diag *d)
{
    (void)args;
    (void)d;
    defer_ctx c = {p, 0};
    hir_block_walk(&p->body, 0, visit, &c);
    return 0;
}

const hir_pass_option hir_opts_defer_send_wait[] = {
    {NULL, 0, NULL, NULL, NULL, false},
};
