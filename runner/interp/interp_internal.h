/* interp_internal.h — what the interpreter's files share: runtime buffers and bindings, the
 * interpreter state, and the environment's functions (interp_env.c and the small files beside
 * it: interp_work.c, interp_scan.c, interp_tensor.c). The statement families' entries are in
 * ops_internal.h. Arrows point one way: the executor (interp_exec.c) calls the families only
 * through its table, the families call only the environment, the environment calls neither. */
#ifndef HIR_INTERP_INTERNAL_H
#define HIR_INTERP_INTERNAL_H

#include "runner/interp/interp.h"

/* Backend memory with a reference count: bindings, views and the allocation cache share it. */
typedef struct rt_buf {
    void *ptr;
    size_t bytes;
    int refs;
} rt_buf;

/* A tensor's binding: a view into a buffer (buf NULL for caller-owned memory such as inputs). */
typedef struct rt_val {
    hir_view v;
    rt_buf *buf;
} rt_val;

typedef struct rt_scalar {
    int64_t v;
    int bound;
} rt_scalar;

/* Stream keys of the backend: indexed streams use the evaluated index (>= 0); streams made
 * for an unindexed object `Stream N` that was never captured by GetCurrentStream use a key
 * in a range no program index reaches. */
#define HIR_STREAM_OBJECT_KEY_BASE ((int64_t)1 << 48)

#define WORK_SKIPPED ((hir_work *)(uintptr_t)1)   /* this rank was outside the team */

#define INTERP_LOOP_DEPTH 16

struct hir_interp {
    hir_program *p;
    hir_backend *be;
    hir_interp_config cfg;
    hir_map tensors;        /* hir_tensor* -> rt_val* (the run's environment) */
    hir_map scalars;        /* key (see scalar_key) -> rt_scalar* */
    hir_map user_scalars;   /* key -> rt_scalar*: bindings that outlive a run */
    hir_map alloc_cache;    /* hir_stmt* -> rt_buf* */
    hir_map result_cache;   /* (statement, tensor) -> rt_result: fresh results reused across runs */
    hir_map obj_streams;    /* stream object number -> hir_stream* */
    hir_map works;          /* expression number -> hir_work* */
    int64_t *p2p_sent;      /* [cfg.size]: P2P sends posted to each rank, over all runs */
    int64_t *p2p_recvd;     /* [cfg.size]: P2P receives posted from each rank */
    hir_stream *cur;
    int in_group;           /* inside StartCoalescing .. EndCoalescing */
    const hir_stmt *stmt;   /* statement being executed (for messages) */
    int depth;
    uint64_t run_no;        /* runs started, for the result cache's per-run occurrence slots */
    hir_scalar *sc_rank, *sc_nstreams, *sc_stream_idx;   /* the named scalars bound by runs */
    /* 2026 statements (hostir-2026.md §3) */
    int form2026;           /* the program is in 2026 syntax: a constant root= is a team position
                               (shapes do not depend on it: they come from the view) */
    hir_map rings;          /* CollectivePermute hir_stmt* -> rt_ring* (recognised ring steps) */
    hir_map swizzled;       /* ShardByStream hir_stmt* -> rt_ring* of its loop (§3.10 rule 2) */
    hir_map held;           /* expression number -> rt_held*: buffers a posted transfer uses */
    hir_map moe;            /* Dispatch hir_stmt* -> rt_moe*: its unprinted outputs */
    hir_map ew_plans;       /* element-wise hir_stmt* -> rt_ew*: its pre-resolved launch */
    int loops;              /* FOR loops being executed (nesting) */
    /* the innermost INTERP_LOOP_DEPTH of them: iterations done and trip count (a stream
     * chunk's index in the loop that runs over its chunks: interp_shard_here) */
    int64_t loop_at[INTERP_LOOP_DEPTH], loop_trips[INTERP_LOOP_DEPTH];
    int64_t nest_work;      /* product of the trip counts of the loops being executed (1 outside) */
    hir_interp_hook hooks[HIR_INTERP_MAX_HOOKS];   /* run around every statement, in order */
    int nhooks;
};

/* A CollectivePermute read as a step of a ring over loop variable x (hostir-2026.md §3.10):
 * recv_peer = (x + t) % n, send_peer = (n + (t - x)) % n, evaluated with this rank's team
 * position in place of the printed t. */
typedef struct rt_ring {
    const hir_scalar *x;
    int64_t n;
    int pos;                /* this rank's position in the team, -1 outside it */
} rt_ring;

/* ------------------------------------------------------------------------------------------
 * The environment: what every statement needs. Nothing here calls a statement family
 * (ops_*.c) or the executor (interp_exec.c). Functions that fail return -1 with e set through
 * interp_fail (rank, location and statement in front of the message). */

/* interp_env.c: messages */
int  interp_fail(hir_interp *it, hir_diag *e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* a backend call failed with its message in e: rank and statement in front */
int  interp_backend_fail(hir_interp *it, hir_diag *e);
/* one of the interpreter's own tables cannot grow: "out of memory (while WHAT NAME)" */
int  interp_oom(hir_interp *it, hir_diag *e, const char *what, const char *name);
const char *interp_tname(const hir_tensor *t, char *buf, size_t n);
/* the --trace line of s */
void interp_trace(hir_interp *it, const hir_stmt *s);

/* interp_env.c: buffers, bindings and the results kept across runs */
rt_buf *interp_buf_new(hir_interp *it, size_t bytes, hir_diag *e);
void interp_buf_unref(hir_interp *it, rt_buf *b);
rt_buf *interp_buf_of(hir_interp *it, const hir_tensor *t);   /* t's buffer, NULL if none */
int  interp_get(hir_interp *it, const hir_tensor *t, hir_view *v, hir_diag *e);
int  interp_bound(hir_interp *it, const hir_tensor *t, hir_view *v);   /* 1 when bound */
/* bind t to v (buf may be NULL; takes a new reference); -1 with e set when the binding
 * table cannot grow (out of memory) */
int  interp_bind(hir_interp *it, const hir_tensor *t, const hir_view *v, rt_buf *buf,
                 hir_diag *e);
void interp_unbind(hir_interp *it, const hir_tensor *t);
void interp_unbind_all(hir_interp *it);
/* a fresh contiguous result of t's dtype and the given shape, bound to t */
int  interp_bind_new(hir_interp *it, const hir_tensor *t, int ndim, const int64_t *shape,
                     hir_view *v, hir_diag *e);
void interp_forget_results(hir_interp *it, const hir_tensor *t);
void interp_caches_free(hir_interp *it);   /* the allocation cache and the kept results */

/* interp_env.c: scalars */
int  interp_eval(hir_interp *it, const hir_scalar *s, int64_t *v, hir_diag *e);
/* a hir_scalar_env lookup (ctx is the interpreter): 0 with *v when s is bound */
int  interp_lookup(void *ctx, const hir_scalar *s, int64_t *v);
int  interp_bind_scalar(hir_interp *it, const hir_scalar *s, int64_t v, hir_diag *e);
rt_scalar *interp_scalar_slot(hir_map *m, const hir_scalar *s);   /* NULL: out of memory */
const char *interp_scalar_name(const hir_scalar *s, char *buf, size_t n);
void interp_scalars_clear(hir_map *m);

/* interp_env.c: shapes. A tensor's runtime dimensions are its view's logical axes
 * (t->shape, dialect/shape.c) without the reductions: a split axis is one dimension (local
 * extent on a rank when a part is a device axis, offset = coordinate x what follows the
 * device part), an unsplit device axis a dimension of size 1 locally (docs/runner.md). */
/* runtime shape of t here: inside a loop, a stream-parallel axis is this iteration's chunk */
int  interp_rt_shape(hir_interp *it, const hir_tensor *t, int *ndim, int64_t *shape,
                     hir_diag *e);
/* hir_interp_shard, but inside a loop a stream-parallel axis is one chunk (ALLOCATE and the
 * results made inside a stream loop; at top level the axis counts whole) */
int  interp_shard_here(hir_interp *it, const hir_tensor *t, hir_shard *s, hir_diag *e);
/* -1 with a message when t (here) has a device part inside a split (a rank holds a block in
 * every period of the axis: hir_shard), which `what` (a statement that moves whole blocks
 * between ranks) does not handle; else 0 */
int  interp_refuse_blocks(hir_interp *it, const hir_tensor *t, const char *what, hir_diag *e);
/* The loop IterDomains of t in logical order (t->shape.ids), each split axis's parts together. */
const hir_iterdomain *const *interp_axes(const hir_interp *it, const hir_tensor *t);
/* the view axis of t that id is (a part of), -1 when absent */
int  interp_axis_pos(const hir_interp *it, const hir_tensor *t, const hir_iterdomain *id);
/* number of runtime dims before view axis pos of t (reduction/stride axes skipped) */
int  interp_rt_pos(const hir_interp *it, const hir_tensor *t, int pos);
int  interp_rf_expand(const hir_tensor *t, hir_view *v);
int  interp_rf_squeeze(const hir_tensor *t, hir_view *v);
int  interp_unreduced_pos(const hir_tensor *t, int pos);
bool interp_axis_runtime(const hir_iterdomain *id);   /* not a reduction or stride axis */
int  interp_extent(hir_interp *it, const hir_iterdomain *id, int64_t *v, hir_diag *e);

/* interp_work.c: posted communication (Communication, P2P, CollectivePermute, coalescing) */
int  interp_team_index(const int64_t *team, int n, int64_t rank);   /* -1: not in the team */
/* The devices of mesh m as a team of world ranks, team[0, *n) (team holds INTERP_MAX_TEAM),
 * and this rank's position in it, *my (-1 outside it); a mesh larger than that or a device that
 * is not a rank of this job is an error. The mesh's dimensions are the caller's to check. */
#define INTERP_MAX_TEAM 1024
int  interp_mesh_team(hir_interp *it, const hir_mesh *m, int *team, int *n, int *my,
                      hir_diag *e);
/* c posted on the current stream and waited for (the collectives a statement stands for,
 * complete when it ends) */
int  interp_collective_now(hir_interp *it, const hir_collective *c, hir_diag *e);
/* remembers w for Wait Communication <number>; when it cannot, w is ended and e set */
int  interp_record_work(hir_interp *it, int64_t number, hir_work *w, hir_diag *e);
/* keeps the buffers of a and b (either may be NULL) alive until the Wait of number */
int  interp_held_keep(hir_interp *it, int64_t number, const hir_tensor *a, const hir_tensor *b,
                      hir_diag *e);
void interp_held_release(hir_interp *it, int64_t number);
void interp_work_release_all(hir_interp *it);

/* interp_scan.c: once per interpreter, the program's generation (form2026: roots), its
 * CollectivePermute ring steps (rings) and the ShardByStreams of their loops (swizzled);
 * -1: out of memory */
int  interp_scan_2026(hir_interp *it, const hir_block *b, int depth);
void interp_scan_free(hir_interp *it);

/* interp_tensor.c: views and results shared by the tensor statements */
void *interp_elem_ptr(const hir_view *v, int dim, int64_t idx);
hir_view interp_view_squeezed(const hir_view *v);   /* size-1 dims dropped */
void interp_shape_str(const hir_view *v, char *buf, size_t n);   /* "[2, 3]" */
/* a copy through the backend; shapes must agree up to size-1 dims */
int  interp_copy_into(hir_interp *it, const hir_view *dst, const hir_view *src, hir_diag *e);
/* contiguous copy of v into a fresh buffer (caller unrefs) */
int  interp_materialize(hir_interp *it, const hir_view *v, hir_view *out, rt_buf **buf,
                        hir_diag *e);
/* output of a computing statement: the bound view, or a fresh buffer of `shape` */
int  interp_out_view(hir_interp *it, const hir_tensor *t, int ndim, const int64_t *shape,
                     hir_view *v, hir_diag *e);
/* right-align v to ndim dims of `shape`, size-1 dims broadcast with stride 0 */
int  interp_broadcast_to(hir_interp *it, const hir_view *v, int ndim, const int64_t *shape,
                         hir_view *r, hir_diag *e);
/* the first input's view and the output's run-time shape (view, expand) */
int  interp_input_and_out_shape(hir_interp *it, const hir_stmt *s, hir_view *v, int *nd,
                                int64_t *shape, hir_diag *e);

#endif
