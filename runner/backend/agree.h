/* agree.h — what the members of a collective must agree on before it is posted (issue 31):
 * its signature (kind, team, root, the element count and dtype every member has in common,
 * and where in the program it is), the comparison that names the first member that differs,
 * and a cache of signatures already agreed by statement, for backends whose exchange costs
 * (the CUDA backend). The exchange itself is the backend's (its transport). */
#ifndef HIR_RUNNER_BACKEND_AGREE_H
#define HIR_RUNNER_BACKEND_AGREE_H

#include "runner/backend/backend.h"

enum { HIR_SIG_KIND, HIR_SIG_TEAM, HIR_SIG_ROOT, HIR_SIG_COUNT, HIR_SIG_DTYPE, HIR_SIG_WHERE,
       HIR_SIG_N };

/* c's signature on this rank */
void hir_coll_signature(const hir_collective *c, int64_t sig[HIR_SIG_N]);
/* all: the team's signatures in team order; -1 with e set (the same text on every member)
 * when a member's differs from member 0's in kind, team, root, elements or dtype, else 0.
 * HIR_SIG_WHERE is not compared: members may reach one collective through different
 * statements (IF branches); hir_coll_sig_same_place says whether they did. */
int hir_coll_sig_compare(const hir_collective *c, const int64_t *all, hir_diag *e);
int hir_coll_sig_same_place(const hir_collective *c, const int64_t *all);

/* A P2P transfer's two sides: the sender's dtype and element count (as its header says; a
 * dtype outside the table is printed "?") against the receiver's. -1 with e set (its peer
 * `peer`) naming both ranks, both sizes and both dtypes when they differ, else 0. */
int hir_p2p_header_compare(int sender, int receiver, int64_t send_dtype, int64_t send_count,
                           int64_t recv_dtype, int64_t recv_count, int peer, hir_diag *e);

/* Signatures agreed so far, one per statement (stmt_id). A member whose signature equals its
 * statement's agreed one skips the exchange. Sound: the members had agreed on that value, so
 * a member whose signature changed differs from one whose did not, and then the ranks do
 * disagree; the changed member's exchange meets the other's next exchange (another statement:
 * the HIR_SIG_WHERE field differs) or times out, so the job still stops with an error. */
typedef struct hir_sig_cache {
    struct hir_sig_entry *v;
    int n, cap;
} hir_sig_cache;

/* 1 when stmt's agreed signature is sig */
int  hir_sig_cache_hit(const hir_sig_cache *k, uintptr_t stmt, const int64_t sig[HIR_SIG_N]);
/* remember sig as stmt's agreed signature; -1 when out of memory (nothing is cached then) */
int  hir_sig_cache_put(hir_sig_cache *k, uintptr_t stmt, const int64_t sig[HIR_SIG_N]);
void hir_sig_cache_free(hir_sig_cache *k);

#endif
