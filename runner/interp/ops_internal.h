/* ops_internal.h — the statement families of the interpreter, one ops_*.c file each: the
 * entries of the executor's exec_table (interp_exec.c, indexed by the op enum), and what a
 * family keeps across runs and releases when the interpreter goes. Each entry runs one
 * statement and returns 0, or -1 with e set through interp_fail. A family uses the
 * environment (interp_internal.h) and nothing else: no other family, not the executor. */
#ifndef HIR_INTERP_OPS_INTERNAL_H
#define HIR_INTERP_OPS_INTERNAL_H

#include "runner/interp/interp_internal.h"

/* ops_comm.c: Communication, P2PCommunication, ShareMemHandles, Wait, Start/EndCoalescing */
int ops_communication(hir_interp *it, const hir_stmt *s, hir_diag *e);
int ops_p2p(hir_interp *it, const hir_stmt *s, hir_diag *e);
int ops_share(hir_interp *it, const hir_stmt *s, hir_diag *e);
int ops_wait(hir_interp *it, const hir_stmt *s, hir_diag *e);
int ops_start_coal(hir_interp *it, const hir_stmt *s, hir_diag *e);
int ops_end_coal(hir_interp *it, const hir_stmt *s, hir_diag *e);

/* ops_permute.c: CollectivePermute */
int ops_cperm(hir_interp *it, const hir_stmt *s, hir_diag *e);

/* ops_moe.c: Dispatch, Combine; the routed tokens a Dispatch keeps for its Combine */
int ops_dispatch(hir_interp *it, const hir_stmt *s, hir_diag *e);
int ops_combine(hir_interp *it, const hir_stmt *s, hir_diag *e);
void ops_moe_release(hir_interp *it);

/* ops_alloc.c: ALLOCATE (cached), the 2026 fresh ALLOCATE, Deallocate */
int ops_allocate(hir_interp *it, const hir_stmt *s, hir_diag *e);
int ops_hir_allocate(hir_interp *it, const hir_stmt *s, hir_diag *e);
int ops_deallocate(hir_interp *it, const hir_stmt *s, hir_diag *e);

/* ops_kernel.c: PostOnStream, LaunchKernel, and the kernel-level loads and stores */
int ops_kernel(hir_interp *it, const hir_stmt *s, hir_diag *e);
int ops_kernel_level(hir_interp *it, const hir_stmt *s, hir_diag *e);

/* ops_stream.c: GetCurrentStream, SetCurrentStream, Synchronize */
int ops_get_stream(hir_interp *it, const hir_stmt *s, hir_diag *e);
int ops_set_stream(hir_interp *it, const hir_stmt *s, hir_diag *e);
int ops_sync_stream(hir_interp *it, const hir_stmt *s, hir_diag *e);

/* ops_view.c: HirAliasSelect/select, ShardByStream, slice, view, broadcast/squeeze (flags),
 * SymmetricContiguousView */
int ops_alias_select(hir_interp *it, const hir_stmt *s, hir_diag *e);
int ops_shard_by_stream(hir_interp *it, const hir_stmt *s, hir_diag *e);
int ops_slice(hir_interp *it, const hir_stmt *s, hir_diag *e);
int ops_view(hir_interp *it, const hir_stmt *s, hir_diag *e);
int ops_flags(hir_interp *it, const hir_stmt *s, hir_diag *e);
int ops_sym_view(hir_interp *it, const hir_stmt *s, hir_diag *e);

/* ops_set.c: Set and SegmenterSet (copy, alias, cast, or the allgather of a resharding Set) */
int ops_set(hir_interp *it, const hir_stmt *s, hir_diag *e);

/* ops_gemm.c: linear, matmul, GroupedMmaOp */
int ops_linear(hir_interp *it, const hir_stmt *s, hir_diag *e);
int ops_matmul(hir_interp *it, const hir_stmt *s, hir_diag *e);
int ops_grouped_mma(hir_interp *it, const hir_stmt *s, hir_diag *e);

/* ops_ew.c: unary, binary, ternary; the plans the backend resolved for them */
int ops_elementwise(hir_interp *it, const hir_stmt *s, hir_diag *e);
void ops_ew_release(hir_interp *it);

/* ops_shape.c: expand, full, reductions */
int ops_expand(hir_interp *it, const hir_stmt *s, hir_diag *e);
int ops_full(hir_interp *it, const hir_stmt *s, hir_diag *e);
int ops_reduction(hir_interp *it, const hir_stmt *s, hir_diag *e);

/* ops_sdpa.c: scaled dot-product attention and its backward (host-memory backends) */
int ops_sdpa(hir_interp *it, const hir_stmt *s, hir_diag *e);
int ops_sdpa_bwd(hir_interp *it, const hir_stmt *s, hir_diag *e);

#endif
