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
 * when a member's differs from member 0's, else 0 */
int hir_coll_sig_compare(const hir_collective *c, const int64_t *all, hir_diag *e);

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
