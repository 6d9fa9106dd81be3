/* interp_internal.h — what the interpreter's files share: runtime buffers and bindings, the
 * interpreter state, and the tensor-op entry points of interp_ops.c. */
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
    int form2026;           /* the program is in 2026 syntax: a constant root= is a team position */
    hir_map rings;          /* CollectivePermute hir_stmt* -> rt_ring* (recognised ring steps) */
    hir_map swizzled;       /* ShardByStream hir_stmt* -> rt_ring* of its loop (§3.10 rule 2) */
    hir_map held;           /* expression number -> rt_held*: buffers a posted transfer uses */
    hir_map moe;            /* Dispatch hir_stmt* -> rt_moe*: its unprinted outputs */
    hir_map ew_plans;       /* element-wise hir_stmt* -> rt_ew*: its pre-resolved launch */
    int loops;              /* FOR loops being executed (nesting) */
    hir_interp_hook hooks[HIR_INTERP_MAX_HOOKS];   /* run around every statement, in order */
    int nhooks;
};

/* ops_elementwise's record of one element-wise statement resolved by the backend
 * (ops->plans): the operands and output as they were bound when it was resolved, and the
 * backend's plan. A later execution whose operands and output are bound to exactly these views
 * (and whose integer scalars evaluate to the same values) issues the plan directly. */
typedef struct rt_ew {
    int nin;                /* operands compared: min(s->nin, 3) */
    hir_view in[3];         /* tensor operands as bound */
    int64_t si[3];          /* integer scalar operands as evaluated */
    hir_view out;           /* the output as bound */
    int nd;                 /* the result shape the output was bound with */
    int64_t shape[HIR_MAX_DIMS];
    hir_ew_plan *plan;
} rt_ew;
void interp_ew_plans_free(hir_interp *it);

/* A CollectivePermute read as a step of a ring over loop variable x (hostir-2026.md §3.10):
 * recv_peer = (x + t) % n, send_peer = (n + (t - x)) % n, evaluated with this rank's team
 * position in place of the printed t. */
typedef struct rt_ring {
    const hir_scalar *x;
    int64_t n;
    int pos;                /* this rank's position in the team, -1 outside it */
} rt_ring;

/* interp.c */
int  interp_fail(hir_interp *it, hir_error *e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int  interp_eval(hir_interp *it, const hir_scalar *s, int64_t *v, hir_error *e);
int  interp_get(hir_interp *it, const hir_tensor *t, hir_view *v, hir_error *e);
int  interp_bound(hir_interp *it, const hir_tensor *t, hir_view *v);   /* 1 when bound */
/* bind t to v (buf may be NULL; takes a new reference); -1 with e set when the binding
 * table cannot grow (out of memory) */
int  interp_bind(hir_interp *it, const hir_tensor *t, const hir_view *v, rt_buf *buf,
                 hir_error *e);
void interp_unbind(hir_interp *it, const hir_tensor *t);
rt_buf *interp_buf_new(hir_interp *it, size_t bytes, hir_error *e);
void interp_buf_unref(hir_interp *it, rt_buf *b);
/* a fresh contiguous result of t's dtype and the given shape, bound to t */
int  interp_bind_new(hir_interp *it, const hir_tensor *t, int ndim, const int64_t *shape,
                     hir_view *v, hir_error *e);
/* runtime shape of t from its logical domain (reduction/stride axes dropped, DID axes 1) */
int  interp_rt_shape(hir_interp *it, const hir_tensor *t, int *ndim, int64_t *shape,
                     hir_error *e);
/* The order of a tensor's runtime axes: its logical domain (the loop domain sorted by
 * IterDomain number, hostir-format.md 1.10), or in a 2026-syntax program the loop domain as
 * printed: the 2026 FusionExecutorCache lowering allocates sharded tensors in loop order
 * (stream, device, then the rest) and its loop domains are splits of the logical one, whose
 * numbers do not follow the logical order (docs/runner.md). */
const hir_iterdomain *const *interp_axes(const hir_interp *it, const hir_tensor *t);
/* position of id in interp_axes(it, t), -1 when absent */
int  interp_axis_pos(const hir_interp *it, const hir_tensor *t, const hir_iterdomain *id);
/* number of runtime dims before position pos of interp_axes (reduction/stride axes skipped) */
int  interp_rt_pos(const hir_interp *it, const hir_tensor *t, int pos);
const char *interp_tname(const hir_tensor *t, char *buf, size_t n);

/* interp_ops.c: tensor statements; each returns 0 or -1 with e set through interp_fail */
int ops_set(hir_interp *it, const hir_stmt *s, hir_error *e);
int ops_linear(hir_interp *it, const hir_stmt *s, hir_error *e);
int ops_matmul(hir_interp *it, const hir_stmt *s, hir_error *e);
int ops_elementwise(hir_interp *it, const hir_stmt *s, hir_error *e);
int ops_reduction(hir_interp *it, const hir_stmt *s, hir_error *e);
int ops_alias_select(hir_interp *it, const hir_stmt *s, hir_error *e);
int ops_shard_by_stream(hir_interp *it, const hir_stmt *s, hir_error *e);
int ops_slice(hir_interp *it, const hir_stmt *s, hir_error *e);
int ops_view(hir_interp *it, const hir_stmt *s, hir_error *e);
int ops_expand(hir_interp *it, const hir_stmt *s, hir_error *e);
int ops_full(hir_interp *it, const hir_stmt *s, hir_error *e);
int ops_grouped_mma(hir_interp *it, const hir_stmt *s, hir_error *e);
int ops_sdpa_bwd(hir_interp *it, const hir_stmt *s, hir_error *e);
int ops_flags(hir_interp *it, const hir_stmt *s, hir_error *e);
/* interp_sdpa.c: scaled dot-product attention (host-memory backends) */
int ops_sdpa(hir_interp *it, const hir_stmt *s, hir_error *e);
/* contiguous copy of v into a fresh buffer (caller unrefs) */
int ops_materialize(hir_interp *it, const hir_view *v, hir_view *out, rt_buf **buf,
                    hir_error *e);

#endif
