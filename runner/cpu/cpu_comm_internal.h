/* cpu_comm_internal.h — what cpu_comm.c (the MPI state, work items, P2P, waits) shares with
 * cpu_collective.c (the collectives): the MPI state, the tags, and the work-item helpers a
 * collective posts through. cpu_collective.c calls cpu_comm.c, never the other way. */
#ifndef HIR_CPU_COMM_INTERNAL_H
#define HIR_CPU_COMM_INTERNAL_H

#include "runner/boot/boot_mpi.h"
#include "runner/cpu/cpu_internal.h"

/* One tag per transport for P2P traffic on the backend's private world communicator: like
 * NCCL, sends and receives between a pair match in posting order (MPI's non-overtaking rule
 * for one (source, tag, communicator)). The tag says only which transport the program named:
 * a send over CUDA IPC never matches a receive over NCCL (on the GPUs they could not meet
 * either), so a program whose two sides of a pair disagree on the transport hangs here too
 * and fails at the --timeout instead of passing on the CPU. */
#define HIR_P2P_TAG 0
#define HIR_SENDRECV_TAG 1
#define HIR_P2P_IPC_TAG 2           /* backend=CUDA */
/* each P2P send's header (its dtype and element count) goes before the data, on its own tag */
#define HIR_P2P_HDR_TAG 3
#define HIR_P2P_IPC_HDR_TAG 4

struct hir_cpu_comm {
    int have_mpi;
    int rank;
    const hir_boot *boot;           /* the job's topology (NULL: compute only) */
    double timeout;
    MPI_Comm world;                 /* private dup of the bootstrap's world */
    hir_mpi_team_cache teams;
    /* NaN-aware max/min for f32/f64; MPI_MAX/MPI_MIN leave NaN handling unspecified */
    MPI_Op op_max, op_min, op_fmax, op_fmin;
    hir_work *group;                /* open coalescing group, or NULL */
    hir_work **pending;             /* collectives waiting for their team's agreement, in
                                     * posting order (cpu_work_defer) */
    int npending, cappending;
    struct cpu_pending *given_up;   /* agreements abandoned in flight: MPI may still write to
                                     * them, so they are freed only with the backend */
};

/* A collective whose team is still agreeing on it (cpu_collective.c): the signatures are in
 * flight on `agree` (the team's agreement communicator). Once that completes, issue() compares
 * them and posts the collective on comm (adding its request to the work), or fails with the
 * message located at the collective's statement; drop() frees it (never while the exchange
 * is in flight: one given up then waits in given_up until the backend is destroyed). Posts
 * on one communicator are issued in their posting order. */
typedef struct cpu_pending {
    MPI_Comm comm;
    MPI_Request agree;
    int (*issue)(struct cpu_pending *p, hir_work *w, hir_diag *e);
    void (*drop)(struct cpu_pending *p);
    struct cpu_pending *next;       /* in the backend's given-up list */
} cpu_pending;

/* Hand p to w: w's collective is posted when its agreement completes, which any later wait,
 * or w's own, drives (so a rank never blocks at a post: overlapping teams may be posted in
 * different orders on different ranks). On failure p is dropped. */
int cpu_work_defer(hir_cpu_comm *cc, hir_work *w, cpu_pending *p, hir_diag *e);

/* a new work item (NULL: out of memory), described by `what` in messages */
hir_work *cpu_work_new(const char *what);
/* add a posted request to w (peer: world rank or -1) */
int cpu_work_add_req(hir_work *w, MPI_Request r, int peer, int is_recv, hir_diag *e);
/* A contiguous buffer holding v's elements in dtype xt: v's own memory when it already is
 * one, else a work-owned buffer (filled from v when copy_in). When write_back, the buffer is
 * copied into v once the work completes. */
int cpu_work_stage(hir_work *w, const hir_view *v, hir_dtype xt, int copy_in, int write_back,
                   void **out, hir_diag *e);
/* dst's elements = src's elements in flattened order (shapes may differ, counts may not) */
int cpu_work_flat_copy(hir_work *w, const hir_view *dst, const hir_view *src, hir_diag *e);
/* the MPI datatype and reduction op of a transfer dtype */
MPI_Datatype cpu_mpi_type(hir_dtype t);
MPI_Op cpu_mpi_op(hir_cpu_comm *c, hir_reduce_op op, hir_dtype xt);
int cpu_mpi_count_ok(int64_t n, const char *coll, hir_diag *e);

#endif
