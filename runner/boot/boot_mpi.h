/* boot_mpi.h — internal: the MPI side of the bootstrap (runner/boot/mpi.c), shared by
 * runner/boot/boot.c and the CPU backend. Only runner/ .c files include this (and so mpi.h). */
#ifndef HIR_RUNNER_BOOT_MPI_H
#define HIR_RUNNER_BOOT_MPI_H

#include <mpi.h>

#include "runner/boot/boot.h"

/* The bootstrap's private duplicate of MPI_COMM_WORLD (world ranks = program ranks). */
MPI_Comm hir_boot_mpi_world(const hir_boot *b);

/* Complete n requests by polling MPI_Test with short sleeps; fails after timeout_s seconds.
 * what names the operation in the message; peers[i] (or -1, or peers NULL) names the peer of
 * request i, and the first unfinished one is reported (and stored in e->peer). Requests that
 * complete are set to MPI_REQUEST_NULL, so a caller may cancel what is left. */
int hir_mpi_poll(MPI_Request *reqs, const int *peers, int n, double timeout_s,
                 const char *what, hir_diag *e);
/* hir_mpi_poll that also calls progress(arg, e) before each round: -1 stops with its error,
 * 1 means it has more to do (the poll goes on even when the requests are done, and times
 * out as a wait for "not all team members"), 0 that it has nothing left. n may be 0. */
int hir_mpi_poll_progress(MPI_Request *reqs, const int *peers, int n, double timeout_s,
                          const char *what, int (*progress)(void *arg, hir_diag *e), void *arg,
                          hir_diag *e);
/* Give up on requests a failed poll left behind: receives are cancelled (so they cannot
 * match a later message), sends are detached (MPI completes or drops them). */
void hir_mpi_drop_pending(MPI_Request *r, int n);

/* Communicators per team, created on first use and kept: the caller's rank in it is its
 * position in team, so team-relative roots need no translation. */
typedef struct hir_mpi_team_cache {
    struct hir_mpi_team_entry *v;
    int n, cap;
} hir_mpi_team_cache;

/* Communicator over team (world ranks of parent, in program order), from the cache or made
 * with MPI_Comm_create_group: collective over the members only, so ranks outside the team
 * never call it. A polled handshake with team[0] first makes a missing member a timeout
 * naming it rather than a hang inside MPI. */
int  hir_mpi_team_comm(hir_mpi_team_cache *c, MPI_Comm parent, const int *team, int n,
                       double timeout_s, MPI_Comm *out, hir_diag *e);
/* The same, and (agree not NULL) a duplicate of the communicator made with it, for
 * exchanges that must not share the communicator's collective order (the CPU backend's
 * agreement on each collective). A team is always asked for with or always without it. */
int  hir_mpi_team_comms(hir_mpi_team_cache *c, MPI_Comm parent, const int *team, int n,
                        double timeout_s, MPI_Comm *out, MPI_Comm *agree, hir_diag *e);
void hir_mpi_team_cache_free(hir_mpi_team_cache *c);

/* "MPI_Xxx: <MPI error string>" for a failed call */
int hir_mpi_error(hir_diag *e, const char *call, int rc);

#endif
