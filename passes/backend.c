/* backend.c — --backend=KIND: chooses the communication backend (nccl or cuda).
 *
 * Needs: nothing; any program.
 * Changes: (1) every per-iteration P2P allgather exchange that --stream-parallel emitted (an
 *   `IF Manual pred` directly in a kernel-IR FOR body whose then-branch is the local copy
 *   `Set(recvbuf <- local shard)` (or --forward-local-shard's view of the shard in its place)
 *   and whose else-branch is the NCCL form
 *   `StartCoalescing; recv; send; EndCoalescing e; Wait e` or the CUDA form
 *   `[ShareMemHandles(recv, send);] send; recv; Wait send; Wait recv`, or that of
 *   --defer-send-wait: `... send; recv; Wait recv` with `IF Manual pred: ELSE: Wait send`
 *   later in the loop body) is rewritten into the other form: chunk index, peers, predicate
 *   and the else-branch change together, and the loop's slices follow the new chunk index.
 *   The NCCL and kind=auto forms wait for their whole group in the exchange, so a deferred
 *   send Wait goes with the CUDA form (its epilogue IF is dropped); handle exchanges hoisted
 *   by --hoist-handle-exchange go too (NCCL has none). A rewrite to CUDA gives the plain CUDA
 *   form: run those passes again; (2) collective Communications take the backend
 *   where it supports them (NCCL: all; CUDA: Allgather and Broadcast only — the others stay
 *   as they are); (3) a GEMM + reduce-scatter pipeline of --stream-parallel in nvFuser's
 *   Reduce form or as the CUDA-IPC ring is lowered again in the other form when the kind
 *   asks for it (stream_parallel_rs.c: CUDA the ring, NCCL the Reduce form; kind=auto the
 *   ring on one node, else the Reduce form). Nothing is recorded beyond the printed program: a later --stream-parallel or
 *   --convert-to-communication takes its own backend= option, or reads the backend= fields of
 *   the communications this pass rewrote.
 * Option protocol=get|put (CUDA only) orders every CUDA exchange for the CUDA-IPC protocol the
 * runner will use (hir-run --p2p-protocol): Get posts `send; recv`, Put posts `recv; send`,
 * because each rank must queue the non-blocking half before its blocking half (4.6). Without
 * it, exchanges already in the CUDA form keep their order and rewritten ones take Get's.
 * Fails (located: pu_loc_near, also for statements an earlier pass of the pipeline made) on a
 * P2PCommunication of another backend outside a recognised exchange, saying what to do.
 * Index definitions made dead by the rewrite are dropped; other trailer entries are kept.
 */
#include "passes/ir_util.h"
#include "passes/passes.h"
#include "passes/stream_parallel_rs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct exchange {
    hir_stmt *loop, *cond;
    hir_comm *recv, *send;
    bool cuda;                   /* current form (the kind=auto form counts as CUDA) */
    /* the kind=auto form: the NCCL twins of send and recv, the IFs that pick between the
     * twins, and the EndCoalescing that closes the group (all NULL in the other forms) */
    hir_comm *send_net, *recv_net, *end;
    hir_stmt *pick[2];
    /* --defer-send-wait's epilogue of a CUDA exchange (NULL when the send's Wait is in the
     * exchange): `IF Manual pred: ELSE: Wait send` later in the loop body */
    hir_stmt *deferred;
} exchange;

typedef struct bk {
    hir_program *p;
    hir_diag *d;
    hir_backend_kind kind;
    exchange *ex;
    int nex, capex;
    hir_map known;               /* the P2P expressions of ex[] (pointer -> itself), as
                                  * index_exchanges last saw them */
} bk;

static hir_stmt *at(hir_block *b, int i) { return i < hir_block_size(b) ? hir_block_at(b, i) : NULL; }

static bool is_p2p(hir_stmt *s, bool send)
{
    return s && s->op == HIR_OP_P2P && s->u.comm && s->u.comm->is_send == send;
}

static bool is_wait(hir_stmt *s, hir_comm *c) { return s && s->op == HIR_OP_WAIT && s->u.wait.number == c->number; }

/* --defer-send-wait's epilogue for an exchange whose IF is cond: after cond in the loop body,
 * `IF Manual <cond's predicate>:` with an empty then-branch and `ELSE: Wait send`; or NULL */
static hir_stmt *deferred_wait(hir_stmt *loop, hir_stmt *cond, hir_comm *send)
{
    hir_block *b = &loop->body;
    int i = 0;
    while (i < hir_block_size(b) && hir_block_at(b, i) != cond)
        i++;
    for (i++; i < hir_block_size(b); i++) {
        hir_stmt *s = hir_block_at(b, i);
        if (s->op == HIR_OP_IF && !hir_block_size(&s->body) && hir_block_size(&s->else_body) == 1 &&
            is_wait(hir_block_at(&s->else_body, 0), send) &&
            (s->u.cond.pred == cond->u.cond.pred || hir_scalar_equal(s->u.cond.pred, cond->u.cond.pred)))
            return s;
    }
    return NULL;
}

/* The CUDA form `[ShareMemHandles;] send; recv; Wait send; Wait recv` (recv first: Put's
 * order), or --defer-send-wait's, whose else-branch ends at `Wait recv` and whose `Wait send`
 * is in x->deferred. */
static bool match_cuda(hir_block *e, exchange *x)
{
    int ne = hir_block_size(e);
    int k = ne >= 4 && at(e, 0)->op == HIR_OP_SHARE_HANDLES ? 1 : 0;
    if (ne != 4 + k && ne != 3 + k)
        return false;
    if (is_p2p(at(e, k), true) && is_p2p(at(e, k + 1), false)) {
        x->send = at(e, k)->u.comm;
        x->recv = at(e, k + 1)->u.comm;
    } else if (is_p2p(at(e, k), false) && is_p2p(at(e, k + 1), true)) {
        x->recv = at(e, k)->u.comm;       /* Put order */
        x->send = at(e, k + 1)->u.comm;
    } else
        return false;
    if (ne == 3 + k) {
        x->deferred = is_wait(at(e, k + 2), x->recv) ? deferred_wait(x->loop, x->cond, x->send) : NULL;
        if (!x->deferred)
            return false;
    } else if (!is_wait(at(e, k + 2), x->send) || !is_wait(at(e, k + 3), x->recv))
        return false;
    x->cuda = true;
    return true;
}

/* A half of the kind=auto form: `IF Manual pred: P2P (CUDA) ELSE: P2P (NCCL)`, both of one
 * direction, buffer and peer. */
static bool mixed_half(hir_stmt *s, bool send, hir_comm **ipc, hir_comm **net)
{
    if (!s || s->op != HIR_OP_IF || hir_block_size(&s->body) != 1 || hir_block_size(&s->else_body) != 1)
        return false;
    hir_stmt *a = hir_block_at(&s->body, 0), *b = hir_block_at(&s->else_body, 0);
    if (!is_p2p(a, send) || !is_p2p(b, send))
        return false;
    hir_comm *i = a->u.comm, *n = b->u.comm;
    if (i->backend != HIR_BK_CUDA || n->backend != HIR_BK_NCCL || i->buffer != n->buffer || i->peer != n->peer)
        return false;
    *ipc = i;
    *net = n;
    return true;
}

/* Recognises the exchange shapes of the header comment and the kind=auto form (to_mixed). */
static bool match(hir_stmt *cond, exchange *x)
{
    hir_block *t = &cond->body, *e = &cond->else_body;
    int nt = hir_block_size(t);
    if (cond->op != HIR_OP_IF || nt < 1 || nt > 2)
        return false;
    hir_stmt *copy = hir_block_at(t, nt - 1);
    /* the local copy, or --forward-local-shard's view of the local shard in its place */
    bool forwarded = nt == 1 && copy->op == HIR_OP_ALIAS_SELECT;
    if (!forwarded && (copy->op != HIR_OP_SET || (nt == 2 && hir_block_at(t, 0)->op != HIR_OP_ALIAS_SELECT)))
        return false;
    int ne = hir_block_size(e);
    x->cond = cond;
    if (ne == 5 && at(e, 0)->op == HIR_OP_START_COAL && is_p2p(at(e, 1), false) &&
        is_p2p(at(e, 2), true) && at(e, 3)->op == HIR_OP_END_COAL &&
        is_wait(at(e, 4), at(e, 3)->u.comm)) {
        x->recv = at(e, 1)->u.comm;
        x->send = at(e, 2)->u.comm;
        x->cuda = false;
    } else if (ne == 5 && at(e, 0)->op == HIR_OP_START_COAL && mixed_half(at(e, 1), true, &x->send, &x->send_net) &&
               mixed_half(at(e, 2), false, &x->recv, &x->recv_net) && at(e, 3)->op == HIR_OP_END_COAL &&
               is_wait(at(e, 4), at(e, 3)->u.comm)) {
        x->cuda = true;
        x->end = at(e, 3)->u.comm;
        x->pick[0] = at(e, 1);
        x->pick[1] = at(e, 2);
    } else if (!match_cuda(e, x))
        return false;
    return x->recv->buffer == copy->out;
}

static bool find_exchanges(hir_stmt *s, int depth, void *ctx)
{
    (void)depth;
    bk *c = ctx;
    if (s->op != HIR_OP_FOR)
        return true;
    for (int i = 0; i < hir_block_size(&s->body); i++) {
        exchange x = {0};
        x.loop = s;
        if (!match(hir_block_at(&s->body, i), &x))
            continue;
        if (c->nex == c->capex) {
            int cap = c->capex ? 2 * c->capex : 8;
            c->ex = hir_arena_grow(c->p->arena, c->ex, sizeof(exchange) * c->capex, sizeof(exchange) * cap);
            c->capex = cap;
        }
        c->ex[c->nex++] = x;
    }
    return true;
}

/* Records the P2P expressions of every recognised exchange, so that `recognised` is one map
 * look-up rather than a scan of all exchanges (quadratic in a program of many loops). Called
 * again whenever the exchanges were rewritten. */
static void index_exchanges(bk *c)
{
    hir_map_fini(&c->known);
    hir_map_init_in(&c->known, c->p->arena);
    for (int i = 0; i < c->nex; i++) {
        hir_comm *m[4] = {c->ex[i].recv, c->ex[i].send, c->ex[i].recv_net, c->ex[i].send_net};
        for (int k = 0; k < 4; k++)
            if (m[k])
                hir_map_put(&c->known, (uint64_t)(uintptr_t)m[k], m[k]);
    }
}

static bool recognised(bk *c, const hir_comm *m)
{
    return m && hir_map_get(&c->known, (uint64_t)(uintptr_t)m) != NULL;
}

typedef struct check { bk *c; int rc; } check;

typedef struct wait_of { int64_t number; hir_stmt *found; } wait_of;

static bool find_wait(hir_stmt *s, int depth, void *ctx)
{
    (void)depth;
    wait_of *w = ctx;
    if (s->op == HIR_OP_WAIT && s->u.wait.number == w->number)
        w->found = s;
    return !w->found;
}

static bool check_p2p(hir_stmt *s, int depth, void *ctx)
{
    (void)depth;
    check *k = ctx;
    if (s->op == HIR_OP_P2P && s->u.comm->backend != k->c->kind && !recognised(k->c, s->u.comm)) {
        hir_diag_entry *e =
            hir_diag_emit(k->c->d, HIR_ERROR, pu_loc_near(k->c->p, s),
                          "cannot switch P2PCommunication %lld to %s: it is not part of a recognised "
                          "stream-parallel exchange (the NCCL, CUDA or kind=auto form of "
                          "--stream-parallel, also after --hoist-handle-exchange and "
                          "--defer-send-wait); run --backend before the pass that changed it, or "
                          "lower the program again with --stream-parallel",
                          (long long)s->u.comm->number, hir_backend_kind_name(k->c->kind));
        /* a CUDA send's Wait (the one --defer-send-wait moves) found elsewhere is shown */
        wait_of w = {s->u.comm->number, NULL};
        if (s->u.comm->is_send && s->u.comm->backend == HIR_BK_CUDA)
            hir_block_walk(&k->c->p->body, 0, find_wait, &w);
        if (w.found)
            hir_diag_note(k->c->d, e, pu_loc_near(k->c->p, w.found),
                          "its Wait is here: --backend looks for it in the exchange or, after "
                          "--defer-send-wait, in an `IF Manual <the exchange's predicate>: ELSE: "
                          "Wait` after the exchange in the loop body");
        k->rc = -1;
        return false;
    }
    return true;
}

/* every HirAliasSelect directly in the loop body indexed by `from` now uses `to` */
static void reindex(hir_stmt *loop, hir_scalar *from, hir_scalar *to)
{
    for (int i = 0; i < hir_block_size(&loop->body); i++) {
        hir_stmt *s = hir_block_at(&loop->body, i);
        if (s->op == HIR_OP_ALIAS_SELECT && s->u.sel.index == from)
            s->u.sel.index = to;
    }
}

static void to_cuda(bk *c, exchange *x, hir_scalar *tensor_index, hir_scalar *send_peer)
{
    hir_program *p = c->p;
    hir_scalar *rank = hir_scalar_named(p, "rank");
    x->cond->u.cond.pred = pu_anon(p, HIR_BIN_EQ, send_peer, rank);
    x->recv->peer = tensor_index;
    x->send->peer = send_peer;
    x->recv->backend = x->send->backend = HIR_BK_CUDA;
    hir_block *e = &x->cond->else_body;
    e->stmts.n = 0;
    hir_comm *pair[2] = {x->recv, x->send};
    hir_block_append(p, e, pu_share(p, 2, pair));
    hir_block_append(p, e, pu_comm_stmt(p, x->send));
    hir_block_append(p, e, pu_comm_stmt(p, x->recv));
    hir_block_append(p, e, pu_wait(p, x->send));
    hir_block_append(p, e, pu_wait(p, x->recv));
}

/* The NCCL and kind=auto forms wait for the whole group inside the exchange: an exchange
 * that --defer-send-wait changed loses its epilogue (`IF Manual pred: ELSE: Wait send`), whose
 * predicate's symbols are marked in old (when given) for the trailer's pruning. */
static void undefer(exchange *x, hir_map *old)
{
    if (!x->deferred)
        return;
    hir_block *b = &x->loop->body;
    for (int i = 0; i < hir_block_size(b); i++)
        if (hir_block_at(b, i) == x->deferred) {
            hir_ptrvec_remove(&b->stmts, i);
            break;
        }
    if (old)
        pu_mark_symbols(old, x->deferred->u.cond.pred);
    x->deferred = NULL;
}

static void to_nccl(bk *c, exchange *x)
{
    hir_program *p = c->p;
    hir_scalar *idx = x->loop->u.kfor.index, *rank = hir_scalar_named(p, "rank");
    x->cond->u.cond.pred = pu_anon(p, HIR_BIN_EQ, idx, rank);
    x->recv->peer = x->send->peer = idx;
    x->recv->backend = x->send->backend = HIR_BK_NCCL;
    hir_block *e = &x->cond->else_body;
    e->stmts.n = 0;
    hir_block_append(p, e, hir_stmt_new(p, HIR_OP_START_COAL));
    hir_block_append(p, e, pu_comm_stmt(p, x->recv));
    hir_block_append(p, e, pu_comm_stmt(p, x->send));
    hir_comm *end = x->end ? x->end : hir_comm_new(p, HIR_OP_END_COAL);
    hir_block_append(p, e, pu_comm_stmt(p, end));
    hir_block_append(p, e, pu_wait(p, end));
}

static bool only_views(hir_block *b)
{
    for (int i = 0; i < hir_block_size(b); i++)
        if (hir_block_at(b, i)->op != HIR_OP_ALIAS_SELECT)
            return false;
    return true;
}

/* NCCL needs no handle exchange: drop ShareMemHandles of the rewritten pairs (also those
 * hoisted by --hoist-handle-exchange) and the regions that did nothing else. Returns
 * whether b lost one. */
static bool strip_block(bk *c, hir_block *b)
{
    bool removed = false;
    int k = 0;
    for (int i = 0; i < hir_block_size(b); i++) {
        hir_stmt *s = hir_block_at(b, i);
        if (s->op == HIR_OP_SHARE_HANDLES) {
            bool ours = false;
            for (int j = 0; j < s->u.share.n; j++)
                ours |= recognised(c, s->u.share.comms[j]);
            if (ours) {
                removed = true;
                continue;
            }
        }
        if (hir_ops[s->op].flags & HIR_OPF_REGION) {
            bool r = strip_block(c, &s->body);
            r |= strip_block(c, &s->else_body);
            if (r) {
                removed = true;
                if (only_views(&s->body) && only_views(&s->else_body))
                    continue;
            }
        }
        b->stmts.items[k++] = s;
    }
    b->stmts.n = k;
    return removed;
}

extern const hir_pass_option hir_opts_backend[];

/* s as an unnamed expression down to named scalars and literals: a node test prints the same
 * whether the peer's symbols were made by a pass (printed inline) or read from the text
 * (printed by name), so piping between passes gives what one pipeline gives. */
static hir_scalar *expanded(hir_program *p, hir_scalar *s, int depth)
{
    if (!s || !s->def || depth > 64 || s->def->kind != HIR_SX_BINARY || s->def->nargs != 2)
        return s;
    return pu_anon(p, (hir_binary_op)s->def->op, expanded(p, s->def->args[0], depth + 1),
                   expanded(p, s->def->args[1], depth + 1));
}

/* kind=auto, mixed case: the else-branch of an exchange in the CUDA form becomes
 *   StartCoalescing
 *   IF Manual ( ( send_peer / K ) == ( rank / K ) ): send (CUDA)  ELSE: send (NCCL)
 *   IF Manual ( ( recv_peer / K ) == ( rank / K ) ): recv (CUDA)  ELSE: recv (NCCL)
 *   EndCoalescing e
 *   Wait Communication e
 * with K ranks per node: each half picks its transport per iteration from its own peer (a
 * ring's send and receive peers can lie on different nodes in the same iteration), the text
 * says which one runs, and the one group keeps the NCCL halves of all ranks from waiting on
 * each other in a cycle. The CUDA halves keep their numbers; the NCCL twins are new. */
static void to_mixed(bk *c, exchange *x, hir_scalar *per_node, hir_scalar *rank_node)
{
    hir_program *p = c->p;
    hir_block *e = &x->cond->else_body;
    e->stmts.n = 0;
    hir_block_append(p, e, hir_stmt_new(p, HIR_OP_START_COAL));
    hir_comm *half[2] = {x->send, x->recv}, *twin[2] = {x->send_net, x->recv_net};
    for (int i = 0; i < 2; i++) {
        hir_comm *ipc = half[i];
        hir_comm *net = twin[i] ? twin[i] : hir_comm_new(p, HIR_OP_P2P);   /* again: same numbers */
        net->is_send = ipc->is_send;
        net->buffer = ipc->buffer;
        net->peer = ipc->peer;
        net->backend = HIR_BK_NCCL;
        ipc->backend = HIR_BK_CUDA;
        hir_scalar *peer_node = pu_anon(p, HIR_BIN_DIV, expanded(p, ipc->peer, 0), per_node);
        hir_stmt *pick = pu_if(p, pu_anon(p, HIR_BIN_EQ, peer_node, rank_node));
        hir_block_append(p, &pick->body, pu_comm_stmt(p, ipc));
        hir_block_append(p, &pick->else_body, pu_comm_stmt(p, net));
        hir_block_append(p, e, pick);
    }
    hir_comm *end = x->end ? x->end : hir_comm_new(p, HIR_OP_END_COAL);
    hir_block_append(p, e, pu_comm_stmt(p, end));
    hir_block_append(p, e, pu_wait(p, end));
}

/* kind=auto: nodes= as a positive whole number, or -1 after a diagnostic */
static int64_t auto_nodes(const hir_pass_args *args, hir_diag *d)
{
    const char *v = hir_pass_opt(hir_opts_backend, args, "nodes");
    if (!v) {
        hir_diag_emit(d, HIR_ERROR, (hir_loc){0},
                      "backend: kind=auto needs nodes=N (the number of nodes the program will run "
                      "on; node k holds the k-th block of consecutive ranks), e.g. "
                      "--pass-pipeline='backend{kind=auto nodes=2}'");
        return -1;
    }
    char *end;
    double n = strtod(v, &end);
    if (*end || !(n >= 1) || n > 1e9 || n != (double)(int64_t)n) {
        hir_diag_emit(d, HIR_ERROR, (hir_loc){0}, "backend: nodes=%s is not a whole number of nodes (1 or more)", v);
        return -1;
    }
    return (int64_t)n;
}

/* the number of ranks of a ring loop, or -1: the constant extent of the axis its receive slot
 * selects, directly or through the ShardByStream of a piece (the gathered buffer's; a loop of
 * stream-parallel{chunks=K} has K steps), else
 * of the loop */
static int64_t ring_size(const exchange *x)
{
    int64_t n;
    hir_block *b = &x->loop->body;
    int64_t pieces;
    const hir_stmt *s = pu_slot_select(b, x->recv->buffer, &pieces);
    if (s && s->u.sel.axis && s->u.sel.axis->extent)
        return hir_scalar_const(s->u.sel.axis->extent, &n) && n > 0 ? n : -1;
    return hir_scalar_const(x->loop->u.kfor.id->extent, &n) && n > 0 ? n : -1;
}

/* An exchange of a schedule of stream-parallel{order= nodes= chunks=}: its receive peer is
 * neither the NCCL form's loop index nor the ring's ( rank + i ) % d of one shard a step. */
static bool scheduled(bk *c, const exchange *x)
{
    hir_program *p = c->p;
    hir_scalar *idx = x->loop->u.kfor.index, *rank = hir_scalar_named(p, "rank");
    hir_scalar *peer = expanded(p, x->recv->peer, 0);
    if (hir_scalar_equal(peer, idx))
        return false;
    hir_scalar *ring = pu_anon(p, HIR_BIN_MOD, pu_anon(p, HIR_BIN_ADD, rank, idx), x->loop->u.kfor.id->extent);
    return !hir_scalar_equal(peer, ring);
}

/* a numbered symbol without a definition in s (its definition expanded), or NULL */
static const hir_scalar *undefined_in(const hir_scalar *s, int depth)
{
    if (!s || depth > 64)
        return NULL;
    if (s->kind == HIR_SC_SYMBOL && !s->def)
        return s;
    for (int i = 0; s->def && i < s->def->nargs && i < 3; i++) {
        const hir_scalar *u = undefined_in(s->def->args[i], depth + 1);
        if (u)
            return u;
    }
    return NULL;
}

/* A peer that is a symbol with no definition (nvFuser prints a program without its `Index
 * definitions:`): whether the exchange is the ring or a schedule cannot be told, which the
 * rewrite needs; refused, saying so (-1), else 0. */
static int undefined_peer(bk *c, const exchange *x)
{
    const hir_scalar *u = undefined_in(x->recv->peer, 0);
    bool recv = u != NULL;
    if (!u)
        u = undefined_in(x->send->peer, 0);
    if (!u)
        return 0;
    int64_t n = ring_size(x);
    char ring[64];
    if (n > 0)
        snprintf(ring, sizeof ring, "( rank + %s ) %% %lld", x->loop->u.kfor.index->name, (long long)n);
    else
        snprintf(ring, sizeof ring, "( rank + %s ) %% d", x->loop->u.kfor.index->name);
    hir_diag_emit(c->d, HIR_ERROR, pu_loc_near(c->p, x->cond),
                  "backend: the %s peer %s%lld of this exchange has no definition (no `Index "
                  "definitions:` line gives it, as when nvFuser prints a program), so --backend "
                  "cannot tell whether the exchange is the ring (receive peer %s) or a schedule of "
                  "stream-parallel{order= nodes= chunks=}, and the %s form needs to know; define "
                  "%s%lld in the trailer, or lower the unlowered program with stream-parallel{backend=%s}",
                  recv ? "receive" : "send", u->name, (long long)u->number, ring,
                  hir_backend_kind_name(c->kind), u->name, (long long)u->number,
                  c->kind == HIR_BK_CUDA ? "cuda" : "nccl");
    return -1;
}

/* A scheduled exchange keeps its peers in the CUDA and kind=auto forms; the NCCL form of the
 * rewrite (and the ring of a rewrite to CUDA) would drop its schedule: refused, located. */
static int check_schedules(bk *c)
{
    for (int i = 0; i < c->nex; i++) {
        exchange *x = &c->ex[i];
        bool rewrite = x->end ? c->kind != HIR_BK_CUDA : x->cuda != (c->kind == HIR_BK_CUDA);
        if (rewrite && scheduled(c, x)) {
            if (undefined_peer(c, x))
                return -1;
            hir_diag_emit(c->d, HIR_ERROR, pu_loc_near(c->p, x->cond),
                          "backend: this exchange follows a schedule of stream-parallel{order= "
                          "nodes= chunks=} that the %s form of --backend cannot express; lower the "
                          "input again with stream-parallel{backend=%s ...}",
                          hir_backend_kind_name(c->kind), c->kind == HIR_BK_CUDA ? "cuda" : "nccl");
            return -1;
        }
    }
    return 0;
}

/* --backend's kind (and, for auto, nodes=) into c->kind and *nodes; -1 after a diagnostic */
static int choose_kind(bk *c, const char *kind, const hir_pass_args *args, int64_t *nodes)
{
    if (!strcasecmp(kind, "auto")) {
        if ((*nodes = auto_nodes(args, c->d)) < 0)
            return -1;
        if (hir_pass_arg(args, "protocol", NULL)) {
            hir_diag_emit(c->d, HIR_ERROR, (hir_loc){0}, "backend: protocol= applies to kind=cuda only");
            return -1;
        }
        c->kind = HIR_BK_CUDA;  /* first every exchange in the CUDA form, then split by node */
        return 0;
    }
    if (hir_pass_arg(args, "nodes", NULL)) {
        hir_diag_emit(c->d, HIR_ERROR, (hir_loc){0}, "backend: nodes= applies to kind=auto only");
        return -1;
    }
    return pu_backend_choose(c->p, kind, "backend", c->d, &c->kind) ? -1 : 0;
}

/* kind=auto: the node assignment must fit every ring before anything changes (-1 after a
 * diagnostic). One node: every pair shares it, the CUDA form as kind=cuda gives it; one rank
 * a node: every pair crosses nodes, the NCCL form as kind=nccl gives it (c->kind becomes
 * NCCL); else the CUDA form first, split by node afterwards. */
static int auto_fit(bk *c, int64_t nodes)
{
    bool all_net = c->nex > 0;
    for (int i = 0; i < c->nex; i++) {
        int64_t n = ring_size(&c->ex[i]);
        if (n < 0 || n % nodes) {
            hir_diag_emit(c->d, HIR_ERROR, pu_loc_near(c->p, c->ex[i].loop),
                          n < 0 ? "backend: kind=auto needs a ring loop of constant extent (the "
                                  "number of ranks) to assign ranks to %lld nodes"
                                : "backend: kind=auto: %lld nodes do not split the %lld ranks "
                                  "of this ring into equal blocks",
                          (long long)nodes, (long long)n);
            return -1;
        }
        all_net &= n == nodes;
    }
    if (all_net)
        c->kind = HIR_BK_NCCL;
    return 0;
}

/* ---- a stream per transport (docs/passes.md, "Schedules past one node") */

/* Does every rank, at every step of x's loop, send and receive over the same transport (both
 * peers on its node, or both off it)? Then the step's exchange can run on that transport's
 * stream, and the two ends of every transfer sit on streams of the same transport, each
 * taking its steps in loop order. A ring across nodes mixes them (false). */
static bool uniform_steps(const exchange *x, int64_t d, int64_t per_node)
{
    int64_t K;
    if (!hir_scalar_const(x->loop->u.kfor.id->extent, &K) || K < 1 || d < 1 || d * K > (int64_t)1 << 22)
        return false;
    for (int64_t r = 0; r < d; r++)
        for (int64_t t = 0; t < K; t++) {
            int64_t a, b;
            char msg[128];
            if (pu_eval_at_step(x->recv->peer, r, t, &a, msg, sizeof msg) ||
                pu_eval_at_step(x->send->peer, r, t, &b, msg, sizeof msg))
                return false;
            if ((a / per_node == r / per_node) != (b / per_node == r / per_node))
                return false;
        }
    return true;
}

static bool is_transport_pick(const hir_stmt *s, hir_op op)
{
    return s && s->op == HIR_OP_IF && hir_block_size(&s->body) == 1 && hir_block_size(&s->else_body) == 1 &&
           hir_block_at(&s->body, 0)->op == op;
}

/* `IF Manual on_node: <op> Stream nvl ELSE: <op> Stream ib` */
static hir_stmt *transport_pick(hir_program *p, hir_scalar *on_node, hir_op op, int64_t nvl, int64_t ib)
{
    hir_stmt *pick = pu_if(p, on_node);
    hir_block_append(p, &pick->body, pu_stream_stmt(p, op, nvl, NULL));
    hir_block_append(p, &pick->else_body, pu_stream_stmt(p, op, ib, NULL));
    return pick;
}

/* The exchange x runs on the stream of its step's transport: before it, `IF on the node:
 * SetCurrentStream to Stream nvl ELSE: ... Stream ib`; after it, back on the step's worker
 * stream, which waits for that transport stream (its GEMM reads what was received). */
static void on_transport_stream(bk *c, exchange *x, hir_scalar *per_node, hir_scalar *rank_node,
                                int64_t nvl, int64_t ib)
{
    hir_program *p = c->p;
    hir_block *b = &x->loop->body;
    int at = -1;
    for (int i = 0; i < hir_block_size(b) && at < 0; i++)
        if (hir_block_at(b, i) == x->cond)
            at = i;
    if (at < 1 || is_transport_pick(hir_block_at(b, at - 1), HIR_OP_SET_STREAM))
        return;                  /* already on its transport's stream (the pass ran before) */
    hir_stmt *worker = hir_block_at(b, 0);
    if (worker->op != HIR_OP_SET_STREAM)
        return;
    hir_scalar *on_node = pu_anon(p, HIR_BIN_EQ, pu_anon(p, HIR_BIN_DIV, expanded(p, x->recv->peer, 0), per_node),
                                  rank_node);
    hir_block_insert(p, b, at, transport_pick(p, on_node, HIR_OP_SET_STREAM, nvl, ib));
    hir_block_insert(p, b, at + 2, pu_stream_stmt(p, HIR_OP_SET_STREAM, -1, worker->u.stream.index));
    hir_block_insert(p, b, at + 3, transport_pick(p, on_node, HIR_OP_SYNC_STREAM, nvl, ib));
}

/* before the loop, the transport streams wait for the main stream (the program's inputs, and
 * the previous run's readers of the receive slots): `SetCurrentStream to Stream nvl;
 * Synchronize Stream main; ...; SetCurrentStream to Stream main` */
static void transport_prologue(bk *c, hir_stmt *loop, int64_t nvl, int64_t ib)
{
    hir_program *p = c->p;
    hir_block *top = &p->body;
    int at = -1;
    int64_t main_stream = -1;
    for (int i = 0; i < hir_block_size(top) && at < 0; i++) {
        hir_stmt *s = hir_block_at(top, i);
        if (s->op == HIR_OP_GET_STREAM && !s->u.stream.index)
            main_stream = s->u.stream.number;
        if (s == loop)
            at = i;
    }
    if (at < 0 || main_stream < 0)
        return;
    hir_stmt *seq[5] = {
        pu_stream_stmt(p, HIR_OP_SET_STREAM, nvl, NULL), pu_stream_stmt(p, HIR_OP_SYNC_STREAM, main_stream, NULL),
        pu_stream_stmt(p, HIR_OP_SET_STREAM, ib, NULL), pu_stream_stmt(p, HIR_OP_SYNC_STREAM, main_stream, NULL),
        pu_stream_stmt(p, HIR_OP_SET_STREAM, main_stream, NULL)};
    for (int i = 0; i < 5; i++)
        hir_block_insert(p, top, at + i, seq[i]);
}

/* kind=auto with 1 < nodes < ranks: every exchange (now in the CUDA form) into to_mixed's */
static void split_by_node(bk *c, int64_t nodes)
{
    hir_program *p = c->p;
    hir_scalar *rank = hir_scalar_named(p, "rank");
    hir_stmt *loop = NULL;
    hir_scalar *per_node = NULL, *rank_node = NULL;
    for (int i = 0; i < c->nex; i++) {
        exchange *x = &c->ex[i];
        if (x->loop != loop) {
            per_node = hir_scalar_int(p, ring_size(x) / nodes);
            rank_node = pu_anon(p, HIR_BIN_DIV, rank, per_node);
            loop = x->loop;
        }
        undefer(x, NULL);        /* its predicate stays: the exchange's own */
        to_mixed(c, x, per_node, rank_node);
    }
    /* a stream per transport where every step is wholly NVLink or wholly InfiniBand */
    int64_t nvl = -1, ib = -1;
    hir_stmt *prologue_done = NULL;
    for (int i = 0; i < c->nex; i++) {
        exchange *x = &c->ex[i];
        int64_t d = ring_size(x), g = d / nodes;
        if (!uniform_steps(x, d, g))
            continue;
        if (nvl < 0) {
            nvl = pu_next_stream(p);
            ib = nvl + 1;
        }
        hir_scalar *per = hir_scalar_int(p, g);
        hir_block *b = &x->loop->body;
        bool fresh = true;
        for (int k = 0; k < hir_block_size(b); k++)
            if (is_transport_pick(hir_block_at(b, k), HIR_OP_SET_STREAM))
                fresh = false;
        on_transport_stream(c, x, per, pu_anon(p, HIR_BIN_DIV, rank, per), nvl, ib);
        if (fresh && x->loop != prologue_done) {
            transport_prologue(c, x->loop, nvl, ib);
            prologue_done = x->loop;
        }
    }
    /* ShareMemHandles of these pairs (also hoisted ones) named both halves of a pair whose
     * halves now each run only where their peer shares the node */
    index_exchanges(c);
    strip_block(c, &p->body);
}

/* Every exchange not yet in c->kind's form rewritten into it (the symbols its old peers used
 * marked in *old); true when any was. */
static bool convert_exchanges(bk *c, hir_map *old)
{
    hir_program *p = c->p;
    hir_stmt *done_loop = NULL;
    hir_scalar *tensor_index = NULL, *send_peer = NULL;
    bool any = false;
    for (int i = 0; i < c->nex; i++) {
        exchange *x = &c->ex[i];
        if (x->end) {
            /* the kind=auto form: its node tests go; as CUDA it keeps its ring peers */
            pu_mark_symbols(old, x->pick[0]->u.cond.pred);
            pu_mark_symbols(old, x->pick[1]->u.cond.pred);
            if (c->kind == HIR_BK_CUDA) {
                hir_scalar *pred = x->cond->u.cond.pred;   /* already send_peer == rank */
                to_cuda(c, x, x->recv->peer, x->send->peer);
                x->cond->u.cond.pred = pred;
                any = true;
                continue;
            }
        }
        if (x->cuda == (c->kind == HIR_BK_CUDA))
            continue;
        any = true;
        pu_mark_symbols(old, x->recv->peer);
        pu_mark_symbols(old, x->send->peer);
        hir_scalar *from = x->recv->peer;
        if (c->kind == HIR_BK_CUDA) {
            /* one chunk index per loop, made in the order --stream-parallel makes it */
            if (x->loop != done_loop) {
                hir_scalar *idx = x->loop->u.kfor.index, *rank = hir_scalar_named(p, "rank");
                hir_scalar *stop = x->loop->u.kfor.id->extent;
                tensor_index = pu_index(p, HIR_BIN_MOD, pu_index(p, HIR_BIN_ADD, rank, idx), stop);
                send_peer = pu_index(p, HIR_BIN_MOD,
                                     pu_index(p, HIR_BIN_ADD, stop, pu_index(p, HIR_BIN_SUB, rank, idx)),
                                     stop);
                reindex(x->loop, from, tensor_index);
                done_loop = x->loop;
            }
            to_cuda(c, x, tensor_index, send_peer);
        } else {
            reindex(x->loop, from, x->loop->u.kfor.index);
            undefer(x, old);
            to_nccl(c, x);
        }
    }
    return any;
}

/* protocol=put|get: every CUDA exchange's two P2P statements in that protocol's order */
static void order_for_protocol(bk *c, const char *proto)
{
    bool put = !strcmp(proto, "put");
    for (int i = 0; i < c->nex; i++) {
        hir_block *e = &c->ex[i].cond->else_body;
        for (int j = 0; j + 1 < hir_block_size(e); j++) {
            hir_stmt *a = hir_block_at(e, j), *b = hir_block_at(e, j + 1);
            if (a->op == HIR_OP_P2P && b->op == HIR_OP_P2P && a->u.comm->is_send == put) {
                e->stmts.items[j] = b;
                e->stmts.items[j + 1] = a;
                break;
            }
        }
    }
}

/* The collectives' backend: NCCL for kind=auto (nodes > 0); else c->kind, which for CUDA only
 * Allgather and Broadcast take. */
static void set_collective_backends(hir_program *p, const bk *c, int64_t nodes)
{
    size_t at;
    for (hir_comm *m = hir_comm_next(p, NULL, &at); m; m = hir_comm_next(p, m, &at)) {
        if (m->op != HIR_OP_COMMUNICATION)
            continue;
        if (nodes)
            m->backend = HIR_BK_NCCL;  /* kind=auto: collectives go to NCCL */
        else if (c->kind == HIR_BK_NCCL || m->type == HIR_COMM_ALLGATHER || m->type == HIR_COMM_BROADCAST)
            m->backend = c->kind;
    }
}

int hir_run_backend(hir_program *p, const hir_pass_args *args, hir_diag *d)
{
    bk c = {p, d, HIR_BK_NCCL, NULL, 0, 0, {0}};
    const char *kind = hir_pass_opt(hir_opts_backend, args, "kind");
    if (!kind) {
        hir_diag_emit(d, HIR_ERROR, (hir_loc){0}, "backend: missing kind (use --backend=nccl or --backend=cuda)");
        return -1;
    }
    int64_t nodes = 0;        /* kind=auto: the number of nodes; 0 otherwise */
    if (choose_kind(&c, kind, args, &nodes))
        return -1;
    const char *proto = hir_pass_arg(args, "protocol", NULL);
    if (proto && c.kind != HIR_BK_CUDA) {
        hir_diag_emit(d, HIR_ERROR, (hir_loc){0}, "backend: protocol= applies to kind=cuda only");
        return -1;
    }
    hir_map old;
    hir_map_init_in(&old, p->arena);
    /* GEMM + reduce-scatter pipelines first (stream_parallel_rs.c): the ring is CUDA IPC
     * within a node; kind=auto across nodes takes the Reduce form (a collective: NCCL) */
    int rs = hir_rs_backend(p, nodes > 1 || c.kind == HIR_BK_NCCL ? HIR_BK_NCCL : HIR_BK_CUDA, proto, &old, d);
    if (rs < 0) {
        hir_map_fini(&old);
        return -1;
    }
    hir_block_walk(&p->body, 0, find_exchanges, &c);
    if (nodes && auto_fit(&c, nodes)) {
        hir_map_fini(&old);
        return -1;
    }
    hir_map_init_in(&c.known, p->arena);
    index_exchanges(&c);
    check k = {&c, 0};
    hir_block_walk(&p->body, 0, check_p2p, &k);
    if (k.rc || check_schedules(&c)) {
        hir_map_fini(&old);
        hir_map_fini(&c.known);
        return -1;
    }
    bool any = convert_exchanges(&c, &old);
    if (proto)
        order_for_protocol(&c, proto);
    if (any && c.kind == HIR_BK_NCCL) {
        index_exchanges(&c);
        strip_block(&c, &p->body);
    }
    if (any || rs)
        pu_prune_index_defs(p, &old);
    hir_map_fini(&old);

    if (nodes > 1 && c.kind == HIR_BK_CUDA)
        split_by_node(&c, nodes);

    set_collective_backends(p, &c, nodes);
    hir_map_fini(&c.known);
    return 0;
}

const hir_pass_option hir_opts_backend[] = {
    {"kind", HIR_PASS_OPT_ENUM, "nccl|cuda|auto", NULL,
     "the backend to use; auto: CUDA IPC for P2P pairs within a node, NCCL across nodes and for "
     "collectives (needs nodes=)", true},
    {"nodes", HIR_PASS_OPT_NUMBER, NULL, NULL,
     "kind=auto: the number of nodes; node k holds the k-th block of size/nodes consecutive "
     "ranks (what hir-run --simulate-nodes=N and mpirun --map-by slot give)", false},
    {"protocol", HIR_PASS_OPT_ENUM, "get|put", NULL,
     "kind=cuda: order every CUDA-IPC exchange for hir-run --p2p-protocol (default: CUDA "
     "exchanges keep their order, rewritten ones take get's)", false},
    {NULL, 0, NULL, NULL, NULL, false},
};
