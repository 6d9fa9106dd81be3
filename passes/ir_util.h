/* ir_util.h — IR helpers shared by the passes: statement builders in the exact shapes the
 * printer expects, numbered index scalars that land in the "Index definitions:" trailer,
 * a visitor over every scalar reference of a program, and block surgery. */
#ifndef HIR_PASSES_IR_UTIL_H
#define HIR_PASSES_IR_UTIL_H

#include "dialect/hir.h"

/* ---- scalars */

/* A new numbered Index symbol `a OP b`, printed inline-expanded where nvFuser inlines and by
 * name where it prints names; recorded in the trailer so the text stays self-contained. */
hir_scalar *pu_index(hir_program *p, hir_binary_op op, hir_scalar *a, hir_scalar *b);
/* An unnumbered value `( a OP b )` (predicates: nvFuser lists only Index scalars). */
hir_scalar *pu_anon(hir_program *p, hir_binary_op op, hir_scalar *a, hir_scalar *b);
/* Product of the extents of t's non-reduction, non-stride logical axes (constant-folded
 * where possible), as ALLOCATE prints it. NULL after an error at `where` when a constant
 * extent is negative or the constant product does not fit in 64 bits. */
hir_scalar *pu_tensor_size(hir_program *p, const hir_tensor *t, hir_loc where, hir_diag *d);

/* Calls fn on every place the program refers to a scalar: statement fields, Communication
 * fields, IterDomain bounds and extents, the arguments of unnamed expressions (recursively)
 * and, when `defs` is set, the arguments of numbered symbols' definitions. fn may replace
 * *slot. */
typedef void (*pu_slot_fn)(hir_scalar **slot, void *ctx);
void pu_visit_scalars(hir_program *p, bool defs, pu_slot_fn fn, void *ctx);
/* Marks (key: symbol number) every numbered symbol the program uses, directly or through
 * the definitions of used values. Trailer entries do not count as uses. */
void pu_used_symbols(hir_program *p, hir_map *used);
/* Marks s (if numbered) and every numbered symbol its definition reaches. */
void pu_mark_symbols(hir_map *used, hir_scalar *s);
/* Drops trailer entries that nothing uses (only those for which keep_only is NULL or
 * contains the symbol's number). */
void pu_prune_index_defs(hir_program *p, const hir_map *only);

/* The value of s on rank `rank` at step `step` of a stream loop: the scalars named rank and
 * streamIdx take those values, any other unbound scalar fails (hir_scalar_eval's result and
 * message). How the passes read a schedule (a peer, a slot) off the program's text. */
int pu_eval_at_step(const hir_scalar *s, int64_t rank, int64_t step, int64_t *v, char *msg,
                    size_t msglen);

/* ---- statements */

/* ALLOCATE(t) located at `where`: in global memory (what OCT's stream pass emits) unless
 * own_mem, then in t's own memory type (what the communication lowering emits). */
hir_stmt *pu_allocate(hir_program *p, hir_tensor *t, bool own_mem, hir_loc where, hir_diag *d);   /* NULL: error */
/* The HirAliasSelect in b (top level) that makes the receive slot `buf`, or that makes the
 * input of the ShardByStream in b that makes `buf` (a piece of a slot: stream-parallel{chunks=K}
 * with K > d); *pieces gets 1, or that ShardByStream's stream extent. NULL when neither. */
const hir_stmt *pu_slot_select(const hir_block *b, const hir_tensor *buf, int64_t *pieces);
hir_stmt *pu_alias_select(hir_program *p, hir_tensor *out, hir_tensor *in, hir_iterdomain *axis,
                          hir_scalar *index);
hir_stmt *pu_set(hir_program *p, hir_tensor *out, hir_tensor *in);
hir_stmt *pu_stream_stmt(hir_program *p, hir_op op, int64_t number, hir_scalar *index);
hir_stmt *pu_kfor(hir_program *p, hir_scalar *index, hir_iterdomain *id);
hir_stmt *pu_if(hir_program *p, hir_scalar *pred);
hir_stmt *pu_comm_stmt(hir_program *p, hir_comm *c);   /* Communication, P2P or EndCoalescing */
hir_stmt *pu_wait(hir_program *p, hir_comm *c);
hir_stmt *pu_share(hir_program *p, int n, hir_comm **comms);
/* A shallow copy (new input array; bodies are shared only for non-region statements). */
hir_stmt *pu_stmt_clone(hir_program *p, const hir_stmt *s);

/* One past the highest "Stream N" object number in the program. */
int64_t pu_next_stream(hir_program *p);
/* Tensor outputs of s: its out, or PostOnStream/LaunchKernel outputs. Returns the count. */
int pu_stmt_outputs(hir_stmt *s, hir_tensor **outs, int max);
/* Every tensor s names — its output, inputs, ALLOCATE alias, communication buffers (also of
 * the communications a ShareMemHandles lists), MoE and SDPA operands — each once, into ts.
 * Returns the count, or -1 when there are more than max (the caller must then assume s
 * names any tensor). Statements s holds (loop and IF bodies) are not included. */
int pu_stmt_tensors(const hir_stmt *s, hir_tensor **ts, int max);

/* Location of s (its statement start), for a builder's diagnostics; a statement a pass made
 * has none: the whole program source (`file: error: ...`, not a made-up 1:1). */
hir_loc pu_loc(const hir_program *p, const hir_stmt *s);
hir_loc pu_tensor_loc(const hir_program *p, const hir_tensor *t);
/* Location for a diagnostic that blames s, also when a pass of the same pipeline made s (it
 * has no place of its own): the innermost statement around s that has one (the IF of an
 * exchange lowered from a Communication has that Communication's), else the last located
 * statement printed before s, else the whole source (`file: error: ...`, never a made-up
 * 1:1). Walks the program: for diagnostics, not for every statement of a pass. */
hir_loc pu_loc_near(const hir_program *p, const hir_stmt *s);

/* Makes the program what its printed text reads back as, so that a later pass sees the same
 * program in one pipeline as after `hir-opt A | hir-opt B`: numbered symbols that print
 * expanded in inline positions (predicates, stream indices, sizes, extents) become unnamed
 * expressions, and the next expression and symbol numbers continue after the highest the
 * text shows. The pipeline runner calls it after every pass. */
void pu_as_printed(hir_program *p);

/* "nccl"/"cuda" (any case) -> backend; returns -1 for anything else. */
int pu_backend_parse(const char *s, hir_backend_kind *out);
/* The backend the program's communications already use, read from the program as printed:
 * the backend= of every P2PCommunication and of every Allgather/Broadcast Communication (the
 * kinds both backends support), when there is at least one and all are NCCL or all are CUDA.
 * Returns 1 with *out set, else 0. */
int pu_program_backend(const hir_program *p, hir_backend_kind *out);
/* The backend a lowering pass uses: its option if given, else pu_program_backend, else NCCL.
 * Never state carried from an earlier pass (options live in the pipeline, not in the IR).
 * Returns -1 after a diagnostic. */
int pu_backend_choose(hir_program *p, const char *option, const char *pass, hir_diag *d,
                      hir_backend_kind *out);

#endif
