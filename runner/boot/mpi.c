/* mpi.c — the MPI side shared by the bootstrap and the CPU backend (boot_mpi.h): polling
 * requests against a timeout, giving up on the ones left, and the per-team communicator
 * cache. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runner/boot/boot_mpi.h"
#include "support/diag.h"

/* tag of the membership handshake before MPI_Comm_create_group, and of the create itself */
#define HIR_TEAM_TAG 0x7ff0

struct hir_mpi_team_entry {
    int n;
    int *team;
    MPI_Comm comm;
    MPI_Comm agree;             /* a duplicate of comm made with it when asked, else NULL */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int hir_mpi_error(hir_diag *e, const char *call, int rc)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS)
        snprintf(s, sizeof s, "error %d", rc);
    return hir_fail(e, "%s: %s", call, s);
}

int hir_mpi_poll(MPI_Request *reqs, const int *peers, int n, double timeout_s,
                 const char *what, hir_diag *e)
{
    return hir_mpi_poll_progress(reqs, peers, n, timeout_s, what, NULL, NULL, e);
}

int hir_mpi_poll_progress(MPI_Request *reqs, const int *peers, int n, double timeout_s,
                          const char *what, int (*progress)(void *arg, hir_diag *e), void *arg,
                          hir_diag *e)
{
    double t0 = now_s();
    long spins = 0;
    for (;;) {
        int pending = -1, more = 0;
        if (progress && (more = progress(arg, e)) < 0)
            return -1;
        for (int i = 0; i < n; i++) {
            if (reqs[i] == MPI_REQUEST_NULL)
                continue;
            int flag = 0;
            int rc = MPI_Test(&reqs[i], &flag, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS)
                return hir_mpi_error(e, "MPI_Test", rc);
            if (!flag && pending < 0)
                pending = i;
        }
        if (pending < 0 && !more)
            return 0;
        double waited = now_s() - t0;
        if (waited > timeout_s) {
            int peer = peers && pending >= 0 ? peers[pending] : -1;
            if (peer >= 0)
                return hir_fail_peer(e, peer, "%s: peer rank %d did not take part within %.1f s "
                                     "(timeout)", what, peer, timeout_s);
            return hir_fail(e, "%s: not all team members took part within %.1f s (timeout)",
                            what, timeout_s);
        }
        /* Spin politely first (latency of short exchanges), then sleep with a growing
         * interval capped at 0.5 ms so an idle wait does not burn a core that a peer rank
         * oversubscribed on the same machine may need. */
        if (spins < 2000) {
            sched_yield();
        } else {
            long ns = (spins - 2000) * 1000 + 10000;
            struct timespec ts = {0, ns > 500000 ? 500000 : ns};
            nanosleep(&ts, NULL);
        }
        spins++;
    }
}

/* Give up on requests a failed poll left behind: receives are cancelled (so they cannot
 * match a later message), sends are detached (MPI completes or drops them). */
void hir_mpi_drop_pending(MPI_Request *r, int n)
{
    for (int i = 0; i < n; i++) {
        if (r[i] == MPI_REQUEST_NULL)
            continue;
        MPI_Cancel(&r[i]);
        MPI_Request_free(&r[i]);
    }
}

/* ---------------------------------------------------------------- team communicators */

static int team_handshake(MPI_Comm parent, const int *team, int n, double timeout_s,
                          hir_diag *e)
{
    int me;
    MPI_Comm_rank(parent, &me);
    int token = 0, rc;
    if (me == team[0]) {
        MPI_Request *r = calloc(2 * (size_t)n, sizeof *r);
        int *tok = calloc((size_t)n, sizeof *tok);
        int *peers = calloc(2 * (size_t)n, sizeof *peers);
        if (!r || !tok || !peers) {
            free(r); free(tok); free(peers);
            return hir_fail(e, "team communicator: out of memory");
        }
        for (int i = 0; i < 2 * n; i++) {
            r[i] = MPI_REQUEST_NULL;
            peers[i] = team[i % n];
        }
        for (int i = 1; i < n; i++)
            MPI_Irecv(&tok[i], 1, MPI_INT, team[i], HIR_TEAM_TAG, parent, &r[i]);
        rc = hir_mpi_poll(r, peers, n, timeout_s, "creating team communicator", e);
        for (int i = 1; i < n && rc == 0; i++)
            MPI_Isend(&token, 1, MPI_INT, team[i], HIR_TEAM_TAG, parent, &r[n + i]);
        if (rc == 0)
            rc = hir_mpi_poll(r + n, peers + n, n, timeout_s, "creating team communicator", e);
        if (rc)
            hir_mpi_drop_pending(r, 2 * n);
        free(r); free(tok); free(peers);
        return rc;
    }
    MPI_Request r[2];
    int peers[2] = {team[0], team[0]};
    int go = 0;
    MPI_Isend(&token, 1, MPI_INT, team[0], HIR_TEAM_TAG, parent, &r[0]);
    MPI_Irecv(&go, 1, MPI_INT, team[0], HIR_TEAM_TAG, parent, &r[1]);
    rc = hir_mpi_poll(r, peers, 2, timeout_s, "creating team communicator", e);
    if (rc)
        hir_mpi_drop_pending(r, 2);
    return rc;
}

int hir_mpi_team_comm(hir_mpi_team_cache *c, MPI_Comm parent, const int *team, int n,
                      double timeout_s, MPI_Comm *out, hir_diag *e)
{
    return hir_mpi_team_comms(c, parent, team, n, timeout_s, out, NULL, e);
}

int hir_mpi_team_comms(hir_mpi_team_cache *c, MPI_Comm parent, const int *team, int n,
                       double timeout_s, MPI_Comm *out, MPI_Comm *agree, hir_diag *e)
{
    for (int i = 0; i < c->n; i++)
        if (c->v[i].n == n && !memcmp(c->v[i].team, team, (size_t)n * sizeof *team)) {
            if (agree && c->v[i].agree == MPI_COMM_NULL)
                return hir_fail(e, "team communicator: made without its agreement duplicate");
            *out = c->v[i].comm;
            if (agree)
                *agree = c->v[i].agree;
            return 0;
        }
    int me, member = 0;
    MPI_Comm_rank(parent, &me);
    for (int i = 0; i < n; i++)
        member |= team[i] == me;
    if (!member)
        return hir_fail(e, "team communicator: rank %d is not a member of the team", me);
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 8;
        struct hir_mpi_team_entry *v = realloc(c->v, (size_t)cap * sizeof *v);
        if (!v)
            return hir_fail(e, "team communicator: out of memory");
        c->v = v;
        c->cap = cap;
    }
    int *copy = malloc((size_t)n * sizeof *copy);
    if (!copy)
        return hir_fail(e, "team communicator: out of memory");
    memcpy(copy, team, (size_t)n * sizeof *team);

    if (team_handshake(parent, team, n, timeout_s, e)) {
        free(copy);
        return -1;
    }
    MPI_Group world_group, group;
    MPI_Comm comm;
    MPI_Comm_group(parent, &world_group);
    int rc = MPI_Group_incl(world_group, n, team, &group);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_create_group(parent, group, HIR_TEAM_TAG + 1, &comm);
    MPI_Group_free(&world_group);
    if (rc != MPI_SUCCESS) {
        free(copy);
        return hir_mpi_error(e, "MPI_Comm_create_group", rc);
    }
    MPI_Group_free(&group);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm dup = MPI_COMM_NULL;
    if (agree) {
        /* made right after comm, by the same members in the same order: no other collective
         * on comm can come between */
        MPI_Request r;
        rc = MPI_Comm_idup(comm, &dup, &r);
        if (rc != MPI_SUCCESS) {
            free(copy);
            MPI_Comm_free(&comm);
            return hir_mpi_error(e, "MPI_Comm_idup", rc);
        }
        if (hir_mpi_poll(&r, NULL, 1, timeout_s, "creating team communicator", e)) {
            free(copy);   /* comm and the idup in flight are left to MPI_Finalize */
            return -1;
        }
        MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
        *agree = dup;
    }
    c->v[c->n++] = (struct hir_mpi_team_entry){n, copy, comm, dup};
    *out = comm;
    return 0;
}

void hir_mpi_team_cache_free(hir_mpi_team_cache *c)
{
    int fin = 0;
    MPI_Finalized(&fin);
    for (int i = 0; i < c->n; i++) {
        if (!fin)
            MPI_Comm_free(&c->v[i].comm);
        if (!fin && c->v[i].agree != MPI_COMM_NULL)
            MPI_Comm_free(&c->v[i].agree);
        free(c->v[i].team);
    }
    free(c->v);
    memset(c, 0, sizeof *c);
}
