/* cpu_internal.h — what the files of the CPU reference backend share: the backend struct,
 * the strided row iterator every kernel is built on, and row load/store through f64/i64.
 * Files call each other in one direction only: cpu_backend.c (the table, create/destroy) calls
 * the files of the entries, they call cpu_util.c, and nothing calls cpu_backend.c. */
#ifndef HIR_CPU_INTERNAL_H
#define HIR_CPU_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "runner/backend/backend.h"

#define CPU_MAX_VIEWS 5

struct hir_stream {
    int64_t key;
};

struct hir_event {
    double t;
};

typedef struct hir_cpu_comm hir_cpu_comm;   /* cpu_comm.c: MPI state */

typedef struct hir_cpu_backend {
    hir_backend base;
    struct hir_stream main;
    struct hir_stream **streams;              /* indexed streams, created on first use */
    int nstreams, cap_streams;
    /* GEMM scratch for converted operands, kept across calls (the GEMM path runs per loop
     * iteration; reallocating every time would dominate small GEMMs) */
    void *scratch[3];
    size_t scratch_cap[3];
    hir_cpu_comm *comm;
    /* deferred GEMMs (cpu_lazy.c), when cfg.defer_gemm_flops > 0 */
    const hir_backend_ops *base_ops;          /* the plain table the wrappers call */
    hir_backend_ops lazy_ops;
    hir_model_ops lazy_model;                 /* its model group, wrapped likewise */
    hir_deferred_gemm *def;
    int ndef, cap_def;
    void **held;                              /* freed by the program, read by a deferred GEMM */
    int nheld;
} hir_cpu_backend;

static inline hir_cpu_backend *cpu_of(hir_backend *be) { return (hir_cpu_backend *)be; }

/* cpu_util.c: the strided machinery.
 * Visit all elements of an index space `shape` row by row (the innermost axis after
 * merging axes that are contiguous in every view). fn gets one pointer per view at the
 * row start, the row's element stride per view, and the row length; a non-zero return
 * stops the walk and is returned. */
typedef int (*cpu_row_fn)(void *ctx, char **ptr, const int64_t *stride, int64_t n);
int cpu_for_rows(int ndim, const int64_t *shape, int nv, const hir_view *const *views,
                 cpu_row_fn fn, void *ctx);

/* contiguous buffer of double / int64 -> strided row (the loads are hir_load_f64_n and
 * hir_load_i64_n of convert.h) */
void cpu_store_f64(char *dst, hir_dtype t, int64_t stride, const double *src, int64_t n);
void cpu_store_i64(char *dst, hir_dtype t, int64_t stride, const int64_t *src, int64_t n);

/* copy with cast between views of equal shape (used by copy, collectives, p2p unpack) */
int cpu_copy_view(const hir_view *dst, const hir_view *src, hir_diag *e);
int cpu_check_view(const hir_view *v, const char *what, hir_diag *e);

/* scratch buffer i (0..2) of at least `bytes` */
void *cpu_scratch(hir_cpu_backend *cb, int i, size_t bytes, hir_diag *e);

/* cpu_core.c: memory, streams, events, fill, copy */
int  cpu_alloc(hir_backend *be, size_t bytes, void **ptr, hir_diag *e);
void cpu_free(hir_backend *be, void *ptr);
int  cpu_mem_available(hir_backend *be, size_t *bytes, hir_diag *e);
int  cpu_upload(hir_backend *be, void *dst, const void *src, size_t bytes, hir_diag *e);
int  cpu_download(hir_backend *be, void *dst, const void *src, size_t bytes, hir_diag *e);
hir_stream *cpu_stream_main(hir_backend *be);
int  cpu_stream_get(hir_backend *be, int64_t key, hir_stream **s, hir_diag *e);
int  cpu_stream_wait(hir_backend *be, hir_stream *w, hir_stream *on, hir_diag *e);
int  cpu_event_create(hir_backend *be, hir_event **ev, hir_diag *e);
int  cpu_event_record(hir_backend *be, hir_event *ev, hir_stream *s, hir_diag *e);
int  cpu_event_elapsed_ms(hir_backend *be, hir_event *from, hir_event *to, double *ms,
                          hir_diag *e);
void cpu_event_destroy(hir_backend *be, hir_event *ev);
int  cpu_fill(hir_backend *be, hir_stream *s, const hir_view *out, double value, hir_diag *e);
int  cpu_copy(hir_backend *be, hir_stream *s, const hir_view *dst, const hir_view *src,
              hir_diag *e);
int  cpu_release_peers(hir_backend *be, hir_diag *e);

/* cpu_lazy.c */
void cpu_lazy_install(hir_cpu_backend *cb);
void cpu_lazy_destroy(hir_cpu_backend *cb);

/* cpu_gemm.c */
int cpu_gemm(hir_backend *be, hir_stream *s, const hir_gemm *g, hir_diag *e);
/* cpu_elementwise.c */
int cpu_unary(hir_backend *be, hir_stream *s, hir_unary_op op, const hir_view *out,
              const hir_operand *a, hir_diag *e);
int cpu_binary(hir_backend *be, hir_stream *s, hir_binary_op op, const hir_view *out,
               const hir_operand *a, const hir_operand *b, hir_diag *e);
int cpu_ternary(hir_backend *be, hir_stream *s, hir_ternary_op op, const hir_view *out,
                const hir_operand *a, const hir_operand *b, const hir_operand *c, hir_diag *e);
int cpu_reduce(hir_backend *be, hir_stream *s, hir_reduce_op op, const hir_view *out,
               const hir_view *in, uint32_t reduce_mask, hir_diag *e);

/* cpu_comm.c (cpu_collective: cpu_collective.c) */
int  cpu_comm_create(hir_cpu_backend *cb, hir_diag *e);
void cpu_comm_destroy(hir_cpu_backend *cb);
/* the team's communicators made before the run (backend.h team_prepare) */
int  cpu_team_prepare(hir_backend *be, const int *team, int n, hir_diag *e);
int  cpu_collective(hir_backend *be, hir_stream *s, const hir_collective *c, hir_work **w,
                    hir_diag *e);
int  cpu_group_begin(hir_backend *be, hir_diag *e);
int  cpu_group_end(hir_backend *be, hir_stream *s, hir_work **w, hir_diag *e);
int  cpu_p2p_post(hir_backend *be, hir_stream *s, const hir_p2p *p, hir_work **w, hir_diag *e);
int  cpu_share_handles(hir_backend *be, const hir_p2p *list, int n, hir_diag *e);
int  cpu_wait(hir_backend *be, hir_stream *s, hir_work *w, hir_diag *e);
void cpu_work_release(hir_backend *be, hir_work *w);
int  cpu_synchronize(hir_backend *be, hir_diag *e);
/* all-to-alls over the job (MoE routing): ranks of the job (1 without MPI); sc[r] rows of
 * `row` bytes from sbuf (in rank order) to rank r, rc[r] rows from rank r into rbuf (in rank
 * order); one int64 to and from every rank */
int  cpu_comm_world_size(hir_backend *be, int *size);
int  cpu_comm_alltoallv(hir_backend *be, int size, const char *sbuf, const int64_t *sc,
                        char *rbuf, const int64_t *rc, size_t row, const char *what,
                        hir_diag *e);
int  cpu_comm_alltoall_i64(hir_backend *be, int size, const int64_t *sc, int64_t *rc,
                           hir_diag *e);
/* cpu_moe.c: the model group's Dispatch/Combine */
int  cpu_moe_dispatch(hir_backend *be, hir_stream *s, const hir_moe_dispatch *d,
                      hir_moe_routed *r, hir_diag *e);
int  cpu_moe_combine(hir_backend *be, hir_stream *s, const hir_moe_combine *c, hir_diag *e);
int  cpu_sdpa(hir_backend *be, hir_stream *s, const hir_sdpa *a, hir_diag *e);   /* cpu_sdpa.c */
/* randomized checking (cpu_lazy.c): the table's check group */
int  cpu_take_deferred(hir_backend *be, hir_deferred_gemm **list, int *n, hir_diag *e);
int  cpu_gemm_now(hir_backend *be, const hir_deferred_gemm *d, hir_diag *e);

#endif
