/* stream_parallel.c — --stream-parallel: pipelines stream-parallel statements over CUDA
 * streams (nvFuser's StreamParallelType pass, hostir-format.md 3.5).
 *
 * Needs: top-level statements whose output tensors may carry one `streamIdx` axis; that
 *   axis must be an iteration/broadcast axis of the logical domain, made by no split/merge;
 *   container inputs must not be stream-parallel (OCT rule); no PostOnStream/LaunchKernel
 *   may produce a stream-parallel tensor.
 * Changes: each run of consecutive stream-parallel statements whose stream axes map becomes
 *   ALLOCATEs + GetCurrentStream + a synchronisation FOR + the main FOR (kernel-IR loops over
 *   the stream IterDomain, index `streamIdx`), the bodies working on HirAliasSelect slices.
 *   A Set from a DID axis to the stream axis (an allgather) becomes the per-iteration P2P
 *   exchange of the chosen backend (option backend=nccl|cuda; default: the backend the
 *   program's communications already use, else NCCL — a later --backend rewrites it; option
 *   protocol=get|put orders a CUDA exchange for the runner's protocol).
 * Adds numbered Index scalars and the "Index definitions:" trailer. Programs with no
 *   stream-parallel top-level computation are left unchanged (so running it twice is a no-op).
 */
#include "passes/axis_map.h"
#include "passes/ir_util.h"
#include "passes/passes.h"
#include "passes/schedule_model.h"
#include "passes/stream_parallel_rs.h"

#include <stdlib.h>
#include <string.h>

extern const hir_pass_option hir_opts_stream_parallel[];

typedef struct slice_key {
    hir_tensor *t;
    int axis;
    hir_scalar *index;
    hir_tensor *slice;
} slice_key;

typedef struct sp {
    hir_program *p;
    hir_diag *d;
    hir_backend_kind backend;
    bool put;                    /* protocol=put: CUDA exchanges post recv before send */
    pu_axis_map map;
    /* The slicing cache of 3.4, one per loop: nvFuser keys it by index *objects* and makes
     * new index objects per loop, so reuse never crosses loops; our named scalars are
     * interned, so the cache is reset per loop to keep that behaviour. */
    slice_key *cache;
    int ncache, capcache;
    hir_map cache_at;            /* hash of (t, axis, index) -> 1 + first cache entry with it */
    int *cache_next;             /* next entry with the same hash, -1 */
    hir_map groups;              /* the FOR statements step 1 made (pointer -> itself) */
    int64_t stream_floor;        /* pu_next_stream of the program before lowering */
    hir_map allocated;           /* tensors an ALLOCATE among the lowered statements makes */
    int alloc_scanned;           /* how many of those statements `allocated` has seen */
    /* order= / nodes= / chunks= (docs/passes.md, "Schedules past one node"): scheduled is
     * set when any of them is given; order_req -1 (chosen), 0 ring, 1 local-first; chunks_req
     * 0 (chosen) */
    bool scheduled;
    int order_req;
    int64_t nodes, chunks_req;
} sp;

static int axis_err(sp *c, hir_stmt *s, const hir_iterdomain *id, const char *why)
{
    hir_diag_emit(c->d, HIR_ERROR, pu_loc_near(c->p, s), "stream-parallel axis %lld %s",
                  (long long)id->number, why);
    return -1;
}

/* The slice of t at `index` along logical axis `axis`: a new local tensor whose logical
 * domain is t's without that axis (IterDomains cloned, so freshly numbered). *fresh says
 * whether the caller must emit the HirAliasSelect. */
static uint64_t slice_hash(const hir_tensor *t, int axis, const hir_scalar *index)
{
    struct { const void *t; int64_t axis; const void *index; } k = {t, axis, index};
    uint64_t h = hir_hash_bytes(&k, sizeof k);
    return h == UINT64_MAX ? 0 : h;
}

static hir_tensor *slice_of(sp *c, hir_tensor *t, int axis, hir_scalar *index, bool *fresh)
{
    uint64_t h = slice_hash(t, axis, index);
    for (int i = (int)(uintptr_t)hir_map_get(&c->cache_at, h) - 1; i >= 0; i = c->cache_next[i])
        if (c->cache[i].t == t && c->cache[i].axis == axis && c->cache[i].index == index) {
            *fresh = false;
            return c->cache[i].slice;
        }
    hir_program *p = c->p;
    hir_iterdomain *ids[64];
    int n = 0;
    for (int i = 0; i < t->nloop && n < 64; i++)
        if (i != axis)
            ids[n++] = hir_iterdomain_clone(p, t->shape.ids[i]);
    hir_tensor *s = hir_tensor_new(p, HIR_MEM_LOCAL, t->dtype, n, ids, t->mesh);
    if (c->ncache == c->capcache) {
        int cap = c->capcache ? 2 * c->capcache : 16;
        c->cache = hir_arena_grow(p->arena, c->cache, sizeof(slice_key) * c->capcache,
                                  sizeof(slice_key) * cap);
        c->cache_next = hir_arena_grow(p->arena, c->cache_next, sizeof(int) * c->capcache,
                                       sizeof(int) * cap);
        c->capcache = cap;
    }
    c->cache_next[c->ncache] = (int)(uintptr_t)hir_map_get(&c->cache_at, h) - 1;
    c->cache[c->ncache++] = (slice_key){t, axis, index, s};
    hir_map_put(&c->cache_at, h, (void *)(uintptr_t)c->ncache);
    *fresh = true;
    return s;
}

/* slice t and emit the HirAliasSelect into b when new */
static hir_tensor *slice_into(sp *c, hir_block *b, hir_tensor *t, int axis, hir_scalar *index)
{
    bool fresh;
    hir_tensor *s = slice_of(c, t, axis, index, &fresh);
    if (fresh)
        hir_block_append(c->p, b, pu_alias_select(c->p, s, t, t->shape.ids[axis], index));
    return s;
}

/* The stream axis of a statement's output, or NULL; errors for the unsupported forms. */
static int stream_axis(sp *c, hir_stmt *s, hir_tensor *t, hir_iterdomain **out)
{
    *out = NULL;
    for (int i = 0; i < t->nloop; i++) {
        hir_iterdomain *id = t->loop[i];
        if (!hir_ptype_is_stream(id->ptype))
            continue;
        if (*out) {
            hir_diag_emit(c->d, HIR_ERROR, pu_loc_near(c->p, s),
                          "T%lld has more than one stream-parallel axis", (long long)t->number);
            return -1;
        }
        if (id->itype == HIR_IT_REDUCTION)
            return axis_err(c, s, id, "is a reduction axis; streams cannot split a reduction");
        if (id->itype != HIR_IT_ITER && id->itype != HIR_IT_BROADCAST)
            return axis_err(c, s, id, "must be an iteration or broadcast axis");
        if (id->flags & HIR_ID_RFACTOR)
            return axis_err(c, s, id,
                            "is produced by a split or merge (rfactor); only logical axes can be stream-parallel");
        *out = id;
    }
    return 0;
}

/* Extents of mapped axes must agree: a difference means the stream axis was made by a
 * split or merge that the printed text does not show. */
static int check_extent(sp *c, hir_stmt *s, hir_tensor *t, int axis, hir_iterdomain *sid)
{
    int64_t a, b;
    hir_iterdomain *id = t->shape.ids[axis];
    if (id->itype == HIR_IT_BROADCAST || !id->extent || !sid->extent)
        return 0;
    if (hir_scalar_const(id->extent, &a) && hir_scalar_const(sid->extent, &b) && a != b) {
        hir_diag_emit(c->d, HIR_ERROR, pu_loc_near(c->p, s),
                      "axis %lld of T%lld (extent %lld) maps to the stream axis %lld (extent %lld); "
                      "a stream axis made by split or merge is not supported",
                      (long long)id->number, (long long)t->number, (long long)a,
                      (long long)sid->number, (long long)b);
        return -1;
    }
    return 0;
}

/* Logical position in t of the axis mapped to the loop's stream axis (-1: none). */
static int mapped_axis(sp *c, hir_stmt *s, hir_tensor *t, hir_iterdomain *sid, int *pos)
{
    int second = -1;
    *pos = pu_axis_find(&c->map, t, sid, &second);
    if (*pos == -2) {
        hir_diag_emit(c->d, HIR_ERROR, pu_loc_near(c->p, s),
                      "T%lld has more than one axis mapped to the stream axis %lld (axis %lld is the second)",
                      (long long)t->number, (long long)sid->number,
                      (long long)t->shape.ids[second]->number);
        return -1;
    }
    if (*pos >= 0)
        return check_extent(c, s, t, *pos, sid);
    return 0;
}

typedef struct chunk_view { hir_tensor *t; int axis; hir_tensor *view; } chunk_view;

typedef struct loopctx {
    hir_stmt *main;              /* the main FOR */
    hir_scalar *idx, *rank, *stop, *tensor_index;
    /* a loop lowered with a schedule other than today's ring (sched.chunks steps; when a step
     * takes G > 1 shards, tensor_index is the block index and the statements other than the
     * exchange work on ShardByStream views of the block, kept in views[]) */
    bool custom;
    hir_sched sched;
    /* chunks > d: each shard in S pieces; step idx takes piece `piece` (idx % S) of the shard
     * of step `step` (idx / S) of the schedule of one shard a step, and the statements work on
     * ShardByStream views (S parts) of the slot tensor_index */
    int64_t S, rows;             /* rows: the shard's (constant, a multiple of S) */
    hir_scalar *step, *piece;
    chunk_view views[16];
    int nviews;
} loopctx;

/* ---- the scheduled exchange (schedule_model.h gives the same formulas in integers) */

static hir_scalar *ix(hir_program *p, hir_binary_op op, hir_scalar *a, hir_scalar *b)
{
    return pu_index(p, op, a, b);
}

static hir_scalar *lit(hir_program *p, int64_t v) { return hir_scalar_int(p, v); }

/* the block of G shards this rank takes at step idx (inv: the block whose step idx is ours) */
static hir_scalar *sched_block(hir_program *p, const loopctx *L, bool inv)
{
    hir_sched one = {L->sched.d, L->sched.nodes, L->sched.d, L->sched.local_first};
    const hir_sched *s = L->S > 1 ? &one : &L->sched;   /* pieces: by the shard's step */
    int64_t K = s->chunks, G = s->d / s->chunks;
    hir_scalar *rank = L->rank, *idx = L->S > 1 ? L->step : L->idx;
    if (!s->local_first) {
        hir_scalar *rb = G == 1 ? rank : ix(p, HIR_BIN_DIV, rank, lit(p, G));
        hir_scalar *step = inv ? ix(p, HIR_BIN_SUB, lit(p, K), idx) : idx;
        return ix(p, HIR_BIN_MOD, ix(p, HIR_BIN_ADD, rb, step), lit(p, K));
    }
    int64_t g = s->d / s->nodes, bn = g / G, N = s->nodes;
    hir_scalar *node = ix(p, HIR_BIN_DIV, rank, lit(p, g));
    hir_scalar *within = ix(p, HIR_BIN_MOD, rank, lit(p, g));
    if (G > 1)
        within = ix(p, HIR_BIN_DIV, within, lit(p, G));
    hir_scalar *hop = ix(p, HIR_BIN_DIV, idx, lit(p, bn)), *off = ix(p, HIR_BIN_MOD, idx, lit(p, bn));
    if (inv) {
        hop = ix(p, HIR_BIN_SUB, lit(p, N), hop);
        off = ix(p, HIR_BIN_SUB, lit(p, bn), off);
    }
    hir_scalar *nb = ix(p, HIR_BIN_MUL, ix(p, HIR_BIN_MOD, ix(p, HIR_BIN_ADD, node, hop), lit(p, N)),
                        lit(p, bn));
    return ix(p, HIR_BIN_ADD, nb, ix(p, HIR_BIN_MOD, ix(p, HIR_BIN_ADD, within, off), lit(p, bn)));
}

/* shard t of the step (send: the rank that takes our shard as its piece t) */
static hir_scalar *sched_peer(hir_program *p, const loopctx *L, hir_scalar *block, hir_scalar *u,
                              int64_t t, bool send)
{
    int64_t G = hir_sched_shards(&L->sched);
    if (G == 1)
        return block;
    hir_scalar *piece = t == 0 ? u
                               : ix(p, HIR_BIN_MOD, ix(p, HIR_BIN_ADD, u, lit(p, send ? G - t : t)), lit(p, G));
    return ix(p, HIR_BIN_ADD, ix(p, HIR_BIN_MUL, block, lit(p, G)), piece);
}

/* a ShardByStream view of block L->tensor_index of t along its logical axis `axis` (one per
 * tensor and loop); emitted into b when new */
static hir_tensor *shard_view(hir_program *p, hir_block *b, hir_tensor *t, int axis, int64_t parts,
                              hir_scalar *index, int64_t split);

static hir_tensor *slice_into(sp *c, hir_block *b, hir_tensor *t, int axis, hir_scalar *index);

static hir_tensor *chunk_into(sp *c, loopctx *L, hir_block *b, hir_tensor *t, int axis)
{
    for (int i = 0; i < L->nviews; i++)
        if (L->views[i].t == t && L->views[i].axis == axis)
            return L->views[i].view;
    /* pieces: part `piece` of S of the slot (whose rows are the slot's axis `axis`) */
    hir_tensor *v = L->S > 1 ? shard_view(c->p, b, slice_into(c, b, t, axis, L->tensor_index), axis, L->S, L->piece, L->rows)
                             : shard_view(c->p, b, t, axis, L->sched.chunks, L->tensor_index, 0);
    if (L->nviews < (int)(sizeof L->views / sizeof L->views[0]))
        L->views[L->nviews++] = (chunk_view){t, axis, v};
    return v;
}

/* `T = ShardByStream(t, stream_index = index)` appended to b: part `index` of `parts` of t's
 * logical axis `axis`. split 0: the view's stream axis stands for that whole axis (blocks of
 * slots, the shape reader's "another number of chunks"); split X > 0: the axis, of extent X, is
 * split (the stream axis of extent `parts`, then the inner of X / parts), as nvFuser prints a
 * ShardByStream */
static hir_tensor *shard_view(hir_program *p, hir_block *b, hir_tensor *t, int axis, int64_t parts,
                              hir_scalar *index, int64_t split)
{
    hir_iterdomain *ids[64];
    int n = 0;
    for (int i = 0; i < t->nloop && n < 63; i++) {
        ids[n] = hir_iterdomain_clone(p, t->shape.ids[i]);
        if (i == axis) {
            ids[n]->extent = lit(p, parts);
            ids[n]->ptype = HIR_PT_STREAM;
            int64_t own;
            if (split && t->shape.ids[i]->extent && hir_scalar_const(t->shape.ids[i]->extent, &own) && own > 0)
                split = own;
            if (split) {
                ids[++n] = hir_iterdomain_clone(p, t->shape.ids[i]);
                ids[n]->extent = lit(p, (split + parts - 1) / parts);
            }
        }
        n++;
    }
    hir_tensor *v = hir_tensor_new(p, HIR_MEM_LOCAL, t->dtype, n, ids, t->mesh);
    hir_stmt *s = hir_stmt_new(p, HIR_OP_SHARD_BY_STREAM);
    s->out = v;
    hir_value *in = &t->head;
    hir_stmt_set_inputs(p, s, 1, &in);
    s->u.stream_index = index;
    hir_block_append(p, b, s);
    return v;
}

static bool blocks(const loopctx *L) { return L->custom && L->sched.chunks != L->sched.d; }

/* One exchange of the local shard of `in` into out's slot at recv_peer: `IF send_peer ==
 * rank` the local copy, else the backend's transfer. `shifted` (the NCCL form of a scheduled
 * loop): the predicate and peers of the CUDA form in an NCCL coalescing group. */
static void emit_exchange(sp *c, loopctx *L, hir_stmt *s, hir_tensor *in, hir_tensor *out,
                          hir_scalar *recv_peer, hir_scalar *send_peer, bool shifted)
{
    hir_program *p = c->p;
    hir_block *b = &L->main->body;
    bool cuda = c->backend == HIR_BK_CUDA;
    hir_scalar *pred = pu_anon(p, HIR_BIN_EQ, send_peer, L->rank);
    /* the local shard without its size-1 device axis, then the receive slot; a scheduled loop
     * defines the local view in every exchange that may copy (only its first does) */
    bool fresh_local;
    hir_tensor *local, *recvbuf, *sent = in;
    hir_stmt *cond = pu_if(p, pred);
    cond->loc = s->loc;
    if (L->S > 1) {
        /* pieces: the views of the local shard's piece and of the slot's piece come before the
         * exchange (the send names the piece, the shard's other pieces go on other steps) */
        local = shard_view(p, b, slice_into(c, b, in, 0, hir_scalar_int(p, 0)), 0, L->S, L->piece, L->rows);
        recvbuf = chunk_into(c, L, b, out, 0);
        sent = local;
    } else {
        local = slice_of(c, in, 0, hir_scalar_int(p, 0), &fresh_local);
        recvbuf = slice_into(c, b, out, 0, recv_peer);
        if (fresh_local || L->custom)
            hir_block_append(p, &cond->body, pu_alias_select(p, local, in, in->shape.ids[0], hir_scalar_int(p, 0)));
    }
    hir_block_append(p, &cond->body, pu_set(p, recvbuf, local));

    hir_comm *recv = hir_comm_new(p, HIR_OP_P2P);
    recv->is_send = false;
    recv->buffer = recvbuf;
    recv->peer = recv_peer;
    recv->backend = c->backend;
    /* the whole local shard is sent: its device axis has local size 1 (3.7 (1)) */
    hir_comm *send = hir_comm_new(p, HIR_OP_P2P);
    send->is_send = true;
    send->buffer = sent;
    send->peer = shifted || cuda ? send_peer : recv_peer;
    send->backend = c->backend;
    hir_block *e = &cond->else_body;
    if (cuda) {
        /* The non-blocking half must be queued before this rank's blocking half
         * (hostir-format.md 4.6): Get posts send first (it only raises flags, the receive
         * waits), Put posts recv first (it signals "ready", the send waits). */
        hir_comm *pair[2] = {recv, send};
        hir_block_append(p, e, pu_share(p, 2, pair));
        hir_block_append(p, e, pu_comm_stmt(p, c->put ? recv : send));
        hir_block_append(p, e, pu_comm_stmt(p, c->put ? send : recv));
        hir_block_append(p, e, pu_wait(p, send));
        hir_block_append(p, e, pu_wait(p, recv));
    } else {
        hir_block_append(p, e, hir_stmt_new(p, HIR_OP_START_COAL));
        hir_block_append(p, e, pu_comm_stmt(p, recv));
        hir_block_append(p, e, pu_comm_stmt(p, send));
        hir_comm *end = hir_comm_new(p, HIR_OP_END_COAL);
        hir_block_append(p, e, pu_comm_stmt(p, end));
        hir_block_append(p, e, pu_wait(p, end));
    }
    cond->u.cond.has_else = true;
    hir_block_append(p, b, cond);
}

/* 3.5 step 3(a): a Set from the DID axis of its input to the stream axis of its output,
 * lowered to "my chunk from its owner, my shard to whoever needs it" per iteration. A
 * scheduled loop makes one exchange per shard of its step, with the schedule's peers. */
static int lower_p2p(sp *c, loopctx *L, hir_stmt *s, hir_iterdomain *sid)
{
    hir_program *p = c->p;
    hir_tensor *in = hir_value_tensor(s->in[0]), *out = s->out;
    int ia, oa;
    if (mapped_axis(c, s, in, sid, &ia) || mapped_axis(c, s, out, sid, &oa))
        return -1;
    if (s->op != HIR_OP_SET || ia != 0 || oa != 0) {
        hir_diag_emit(c->d, HIR_ERROR, pu_loc_near(p, s),
                      "resharding from a device axis to the stream axis is supported only for a Set "
                      "whose outermost logical axes are the device axis (input) and the stream axis (output)");
        return -1;
    }
    if (!L->custom) {
        bool cuda = c->backend == HIR_BK_CUDA;
        hir_scalar *send_peer =
            cuda ? pu_index(p, HIR_BIN_MOD,
                            pu_index(p, HIR_BIN_ADD, L->stop, pu_index(p, HIR_BIN_SUB, L->rank, L->idx)),
                            L->stop)
                 : L->idx;
        emit_exchange(c, L, s, in, out, L->tensor_index, send_peer, false);
        return 0;
    }
    int64_t G = hir_sched_shards(&L->sched);
    hir_scalar *inv = sched_block(p, L, true);
    hir_scalar *u = G > 1 ? ix(p, HIR_BIN_MOD, L->rank, lit(p, G)) : NULL;   /* our place in a block */
    for (int64_t t = 0; t < G; t++) {
        hir_scalar *recv_peer = sched_peer(p, L, L->tensor_index, u, t, false);
        hir_scalar *send_peer = sched_peer(p, L, inv, u, t, true);
        emit_exchange(c, L, s, in, out, recv_peer, send_peer, true);
    }
    return 0;
}

/* Does s read a tensor whose stream-mapped axis is a device axis? (3.5 step 3(a)) */
static int needs_p2p(sp *c, hir_stmt *s, hir_iterdomain *sid, bool *yes)
{
    *yes = false;
    for (int i = 0; i < s->nin; i++) {
        hir_tensor *t = hir_value_tensor(s->in[i]);
        int pos;
        if (!t)
            continue;
        if (mapped_axis(c, s, t, sid, &pos))
            return -1;
        if (pos >= 0 && hir_ptype_is_device(t->shape.ids[pos]->ptype))
            *yes = true;
    }
    return 0;
}

/* 3.5 step 3(b): the statement on slices (a scheduled loop whose steps take several shards:
 * on ShardByStream views of the step's block); its output slice is written in place. */
static int lower_plain(sp *c, loopctx *L, hir_stmt *s, hir_iterdomain *sid)
{
    hir_program *p = c->p;
    hir_block *b = &L->main->body;
    hir_stmt *n = pu_stmt_clone(p, s);
    for (int i = 0; i < s->nin; i++) {
        hir_tensor *t = hir_value_tensor(s->in[i]);
        int pos;
        if (!t)
            continue;
        if (mapped_axis(c, s, t, sid, &pos))
            return -1;
        if (pos >= 0)
            n->in[i] = &(blocks(L) ? chunk_into(c, L, b, t, pos) : slice_into(c, b, t, pos, L->tensor_index))->head;
    }
    int pos;
    if (mapped_axis(c, s, s->out, sid, &pos))
        return -1;
    if (pos >= 0)
        n->out = blocks(L) ? chunk_into(c, L, b, s->out, pos) : slice_into(c, b, s->out, pos, L->tensor_index);
    hir_block_append(p, b, n);
    return 0;
}

/* an ALLOCATE (long or short form) of t among the statements before the group; the statements
 * appended to `before` since the last call are indexed first, so the whole pass stays linear */
static bool allocated_before(sp *c, const hir_ptrvec *before, const hir_tensor *t)
{
    for (; c->alloc_scanned < before->n; c->alloc_scanned++) {
        const hir_stmt *s = before->items[c->alloc_scanned];
        if ((hir_ops[s->op].flags & HIR_OPF_ALLOC) && s->out)
            hir_map_put(&c->allocated, (uint64_t)(uintptr_t)s->out, s->out);
    }
    return hir_map_get(&c->allocated, (uint64_t)(uintptr_t)t) != NULL;
}

/* The schedule of a loop with an exchange (order=, nodes=, chunks=; what is not given, the
 * model chooses for this d and layout). Today's ring (chunks = d) keeps today's form. */
static int choose_schedule(sp *c, hir_stmt *group, hir_iterdomain *sid, loopctx *L)
{
    int64_t d;
    if (!sid->extent || !hir_scalar_const(sid->extent, &d) || d < 1) {
        hir_diag_emit(c->d, HIR_ERROR, pu_loc_near(c->p, group),
                      "stream-parallel: order=, nodes= and chunks= need a stream axis of constant "
                      "extent (the number of ranks)");
        return -1;
    }
    hir_sched want = {d, c->nodes, c->chunks_req ? c->chunks_req : d, c->order_req == 1};
    const char *why = hir_sched_invalid(&want);
    if (!why && hir_sched_choose(d, c->nodes, c->order_req, c->chunks_req, &L->sched, NULL, NULL))
        why = "no schedule fits";
    if (why) {
        hir_diag_emit(c->d, HIR_ERROR, pu_loc_near(c->p, group),
                      "stream-parallel: cannot schedule %lld ranks on %lld node%s in %lld chunks%s%s: %s",
                      (long long)d, (long long)c->nodes, c->nodes == 1 ? "" : "s",
                      (long long)want.chunks, c->order_req == 1 ? " local-first" : "",
                      c->chunks_req ? "" : " (chunks = ranks)", why);
        return -1;
    }
    L->custom = L->sched.local_first || L->sched.chunks != d;
    return 0;
}

/* Steps 2-4 for one group: appends the statements that replace it to out, which holds the
 * top-level statements before it. */
static int lower_group(sp *c, hir_stmt *group, hir_ptrvec *out)
{
    hir_program *p = c->p;
    hir_iterdomain *sid = group->u.kfor.id;
    hir_block *orig = &group->body;
    c->ncache = 0;
    hir_map_fini(&c->cache_at);
    hir_map_init_in(&c->cache_at, p->arena);

    loopctx L = {0};
    L.idx = hir_scalar_named(p, "streamIdx");
    L.rank = hir_scalar_named(p, "rank");
    L.stop = sid->extent;
    hir_scalar *nstreams = hir_scalar_named(p, "numberOfStreams");
    hir_scalar *worker = pu_index(p, HIR_BIN_MOD, L.idx, nstreams);

    bool any_p2p = false;
    for (int i = 0; i < hir_block_size(orig); i++) {
        bool yes;
        if (needs_p2p(c, hir_block_at(orig, i), sid, &yes))
            return -1;
        any_p2p |= yes;
    }
    hir_iterdomain *loop_id = sid;
    if (any_p2p && c->scheduled) {
        if (choose_schedule(c, group, sid, &L))
            return -1;
        if (L.custom && L.sched.chunks != L.sched.d) {
            loop_id = hir_iterdomain_clone(p, sid);      /* the loop over the steps */
            loop_id->extent = hir_scalar_int(p, L.sched.chunks);
        }
    }
    if (L.custom && L.sched.chunks > L.sched.d) {
        L.S = L.sched.chunks / L.sched.d;
        /* the shard's rows: axis 1 of the gathered buffer (the Set's output) */
        for (int i = 0; i < hir_block_size(orig) && !L.rows; i++) {
            hir_stmt *s = hir_block_at(orig, i);
            bool yes;
            if (needs_p2p(c, s, sid, &yes))
                return -1;
            if (yes && s->out && s->out->nloop > 1 && s->out->shape.ids[1]->extent &&
                !(hir_scalar_const(s->out->shape.ids[1]->extent, &L.rows) && L.rows % L.S == 0 && L.rows > 0))
                L.rows = -1;
        }
        if (L.rows <= 0) {
            hir_diag_emit(c->d, HIR_ERROR, pu_loc_near(p, group),
                          "stream-parallel: chunks=%lld splits each shard in %lld pieces, which needs the "
                          "shard's rows (axis 1 of the gathered tensor) a constant multiple of %lld",
                          (long long)L.sched.chunks, (long long)L.S, (long long)L.S);
            return -1;
        }
        L.step = ix(p, HIR_BIN_DIV, L.idx, lit(p, L.S));
        L.piece = ix(p, HIR_BIN_MOD, L.idx, lit(p, L.S));
    }
    /* The CUDA ring needs every rank on a different chunk per step (3.6.2); collectives
     * need uniform indexing, so only loops with a P2P exchange are offset by rank. */
    L.tensor_index = L.custom ? sched_block(p, &L, false)
                     : any_p2p && c->backend == HIR_BK_CUDA
                         ? pu_index(p, HIR_BIN_MOD, pu_index(p, HIR_BIN_ADD, L.rank, L.idx), L.stop)
                         : L.idx;

    /* step 2: allocations of every output with a stream-mapped axis, in body order, unless the
     * program allocates it already (the 2026 FusionExecutorCache prints a short ALLOCATE of a
     * stream-parallel output before the statement that writes it) */
    for (int i = 0; i < hir_block_size(orig); i++) {
        hir_stmt *s = hir_block_at(orig, i);
        int pos;
        if (mapped_axis(c, s, s->out, sid, &pos))
            return -1;
        if (pos >= 0 && !allocated_before(c, out, s->out)) {
            hir_stmt *a = pu_allocate(p, s->out, false, pu_loc(p, s), c->d);
            if (!a)
                return -1;
            a->loc = s->loc;
            hir_ptrvec_push(p->arena, out, a);
        }
    }

    /* step 4 around step 3 */
    /* pu_next_stream(p), without a walk per group: the body it would walk is the input's
     * until every group is lowered, so only p->next_stream moves */
    int64_t main_stream = p->next_stream > c->stream_floor ? p->next_stream : c->stream_floor;
    p->next_stream = main_stream + 1;
    hir_ptrvec_push(p->arena, out, pu_stream_stmt(p, HIR_OP_GET_STREAM, main_stream, NULL));
    hir_stmt *sync = pu_kfor(p, L.idx, loop_id);
    sync->loc = group->loc;
    hir_block_append(p, &sync->body, pu_stream_stmt(p, HIR_OP_SET_STREAM, -1, worker));
    hir_block_append(p, &sync->body, pu_stream_stmt(p, HIR_OP_SYNC_STREAM, main_stream, NULL));
    hir_ptrvec_push(p->arena, out, sync);

    L.main = pu_kfor(p, L.idx, loop_id);
    L.main->loc = group->loc;
    hir_block_append(p, &L.main->body, pu_stream_stmt(p, HIR_OP_SET_STREAM, -1, worker));
    for (int i = 0; i < hir_block_size(orig); i++) {
        hir_stmt *s = hir_block_at(orig, i);
        bool yes;
        if (needs_p2p(c, s, sid, &yes))
            return -1;
        if (yes ? lower_p2p(c, &L, s, sid) : lower_plain(c, &L, s, sid))
            return -1;
    }
    hir_block_append(p, &L.main->body, pu_stream_stmt(p, HIR_OP_SET_STREAM, main_stream, NULL));
    hir_block_append(p, &L.main->body, pu_stream_stmt(p, HIR_OP_SYNC_STREAM, -1, worker));
    hir_ptrvec_push(p->arena, out, L.main);
    return 0;
}

static bool is_group(sp *c, hir_stmt *s) { return hir_map_get(&c->groups, (uint64_t)(uintptr_t)s) != NULL; }

/* PostOnStream / LaunchKernel anywhere at top level may not produce stream-parallel data */
static int check_kernel(sp *c, hir_stmt *s)
{
    hir_tensor *outs[64];
    int n = pu_stmt_outputs(s, outs, 64);
    if (s->op != HIR_OP_POST_ON_STREAM && s->op != HIR_OP_LAUNCH_KERNEL)
        return 0;
    for (int i = 0; i < n; i++)
        if (hir_tensor_stream_axis(outs[i]) >= 0) {
            hir_diag_emit(c->d, HIR_ERROR, pu_loc_near(c->p, s),
                          "%s cannot be stream-parallelized (output T%lld has a stream axis); "
                          "only standalone host operations can",
                          hir_ops[s->op].keyword, (long long)outs[i]->number);
            return -1;
        }
    return 0;
}

/* nodes= / chunks=: a whole number from 1 (-1 after a diagnostic) */
static int sched_number(const char *v, const char *key, hir_diag *d, int64_t *out)
{
    char *end;
    double x = strtod(v, &end);
    if (*end || !(x >= 1) || x > 1e9 || x != (double)(int64_t)x) {
        hir_diag_emit(d, HIR_ERROR, (hir_loc){0}, "stream-parallel: %s=%s is not a whole number from 1", key, v);
        return -1;
    }
    *out = (int64_t)x;
    return 0;
}

int hir_run_stream_parallel(hir_program *p, const hir_pass_args *args, hir_diag *d)
{
    sp c = {p, d, HIR_BK_NCCL, false, {{0}}, NULL, 0, 0, {0}, NULL, {0}, 0, {0}, 0, false, -1, 1, 0};
    hir_map_init_in(&c.cache_at, p->arena);
    hir_map_init_in(&c.groups, p->arena);
    hir_map_init_in(&c.allocated, p->arena);
    if (pu_backend_choose(p, hir_pass_opt(hir_opts_stream_parallel, args, "backend"), "stream-parallel",
                          d, &c.backend))
        return -1;
    const char *proto = hir_pass_opt(hir_opts_stream_parallel, args, "protocol");
    if (hir_pass_arg(args, "protocol", NULL) && c.backend != HIR_BK_CUDA) {
        hir_diag_emit(d, HIR_ERROR, (hir_loc){0}, "stream-parallel: protocol= applies to backend=cuda only");
        return -1;
    }
    c.put = !strcmp(proto, "put");
    const char *order = hir_pass_arg(args, "order", NULL), *nodes = hir_pass_arg(args, "nodes", NULL);
    const char *chunks = hir_pass_arg(args, "chunks", NULL);
    c.scheduled = order || nodes || chunks;
    c.order_req = order ? !strcmp(order, "local-first") : -1;
    c.nodes = 1;
    if (nodes && sched_number(nodes, "nodes", d, &c.nodes))
        return -1;
    if (chunks && sched_number(chunks, "chunks", d, &c.chunks_req))
        return -1;
    /* GEMM + reduce-scatter pairs first (stream_parallel_rs.c), then the all-gather groups */
    if (hir_stream_parallel_rs(p, c.backend, c.put, c.scheduled, d))
        return -1;

    pu_axis_map_build(&c.map, p);
    int rc = 0;
    /* step 1: group consecutive stream-parallel statements with mapped stream axes */
    hir_ptrvec grouped = {0}, groups = {0};
    for (int i = 0; i < hir_block_size(&p->body) && !rc; i++) {
        hir_stmt *s = hir_block_at(&p->body, i);
        hir_iterdomain *sid = NULL;
        if ((rc = check_kernel(&c, s)))
            break;
        if (s->out && (hir_ops[s->op].flags & HIR_OPF_COMPUTE) && (rc = stream_axis(&c, s, s->out, &sid)))
            break;
        if (!sid) {
            hir_ptrvec_push(p->arena, &grouped, s);
            continue;
        }
        hir_stmt *last = grouped.n ? grouped.items[grouped.n - 1] : NULL;
        if (last && is_group(&c, last) && pu_axis_mapped(&c.map, last->u.kfor.id, sid)) {
            hir_block_append(p, &last->body, s);
            continue;
        }
        hir_stmt *f = pu_kfor(p, hir_scalar_named(p, "streamIdx"), sid);
        f->loc = s->loc;
        hir_block_append(p, &f->body, s);
        hir_ptrvec_push(p->arena, &grouped, f);
        hir_ptrvec_push(p->arena, &groups, f);
        hir_map_put(&c.groups, (uint64_t)(uintptr_t)f, f);
    }
    /* OCT rule: container inputs are never stream-parallel (checked only when there is
     * something to lower, so that an already lowered program passes through unchanged) */
    for (int i = 0; i < p->inputs.n && !rc && groups.n; i++) {
        hir_tensor *t = hir_value_tensor(p->inputs.items[i]);
        if (t && hir_tensor_stream_axis(t) >= 0) {
            hir_diag_emit(d, HIR_ERROR, pu_tensor_loc(p, t),
                          "container input T%lld is stream-parallel; inputs must be fully materialized",
                          (long long)t->number);
            rc = -1;
        }
    }
    /* steps 2-4 */
    c.stream_floor = groups.n ? pu_next_stream(p) : 0;
    hir_ptrvec result = {0};
    for (int i = 0; i < grouped.n && !rc; i++) {
        hir_stmt *s = grouped.items[i];
        if (is_group(&c, s))
            rc = lower_group(&c, s, &result);
        else
            hir_ptrvec_push(p->arena, &result, s);
    }
    if (!rc && groups.n)
        p->body.stmts = result;
    pu_axis_map_fini(&c.map);
    hir_map_fini(&c.cache_at);
    hir_map_fini(&c.groups);
    hir_map_fini(&c.allocated);
    return rc;
}

const hir_pass_option hir_opts_stream_parallel[] = {
    {"backend", HIR_PASS_OPT_ENUM, "nccl|cuda", NULL,
     "form of the P2P exchange (default: the backend of the program's P2P/Allgather/Broadcast "
     "communications when they agree, else nccl)", false},
    {"protocol", HIR_PASS_OPT_ENUM, "get|put", "get",
     "backend=cuda: post send before recv (get) or recv before send (put), for hir-run --p2p-protocol", false},
    {"order", HIR_PASS_OPT_ENUM, "ring|local-first", NULL,
     "gather order: ring (from rank+1 on), or local-first (the node's own ranks, then the next "
     "nodes'; needs nodes=) (default: chosen by the scale model for d and nodes=)", false},
    {"nodes", HIR_PASS_OPT_NUMBER, NULL, NULL,
     "the node layout the schedule is for: node k holds the k-th block of d/nodes consecutive "
     "ranks, as backend{kind=auto} (default 1)", false},
    {"chunks", HIR_PASS_OPT_NUMBER, NULL, NULL,
     "steps of the pipeline, each of d/chunks shards (a divisor of d) or of a 1/(chunks/d) piece of one (a multiple of d; default: chosen by the "
     "scale model; without order=, nodes=, chunks= the ring with one shard a step)", false},
    {NULL, 0, NULL, NULL, NULL, false},
};
