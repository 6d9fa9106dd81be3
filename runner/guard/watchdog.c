/* watchdog.c — the last line of defence against hangs on the GPU. Every wait on a peer has
 * its own timeout, but some CUDA calls block the host without one: once a stream is stuck on
 * a semaphore a peer never releases (a dead or mis-programmed peer), a later cudaMalloc or
 * cudaFree waits for it forever. A thread watches the interpreter's progress and, when no
 * statement has started for longer than the limit, names the statement and ends the process
 * with a failure status, which makes the launcher take the whole job down. */
#include "runner/guard/watchdog.h"
#include "support/diag.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct hir_watchdog {
    pthread_t thread;
    double limit;
    int rank;
    _Atomic int64_t last_ns;             /* when the current statement started */
    _Atomic(const hir_stmt *) stmt;      /* the statement running, or NULL */
    _Atomic int stop;
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *watch(void *arg)
{
    hir_watchdog *w = arg;
    while (!atomic_load(&w->stop)) {
        struct timespec ts = {0, 200 * 1000 * 1000};
        nanosleep(&ts, NULL);
        double idle = (now_ns() - atomic_load(&w->last_ns)) * 1e-9;
        if (idle <= w->limit || atomic_load(&w->stop))
            continue;
        /* The main thread is stuck inside a call; reading the statement is safe. */
        const hir_stmt *s = atomic_load(&w->stmt);
        char where[512] = "";
        if (s && s->loc.src) {
            int line, col;
            hir_source_linecol((hir_source *)s->loc.src, s->loc.begin, &line, &col);
            snprintf(where, sizeof where, " in the statement at %s:%d:%d (%s)", s->loc.src->name,
                     line, col, hir_ops[s->op].enum_name);
        } else if (s) {
            snprintf(where, sizeof where, " in a %s statement", hir_ops[s->op].enum_name);
        }
        char msg[1024], prefix[48];
        snprintf(prefix, sizeof prefix, "hir-run: rank %d", w->rank);
        snprintf(msg, sizeof msg, "no progress for %.0f s%s: a CUDA call is blocked, most likely "
                 "on work that waits for a peer that never answers (a dead rank, or P2P "
                 "operations posted in an order the protocol cannot complete); ending the job",
                 idle, where);
        hir_diag_write_fatal(prefix, &(hir_severity){HIR_ERROR}, msg);
        _exit(3);
    }
    return NULL;
}

hir_watchdog *hir_watchdog_start(double limit_s, int rank)
{
    hir_watchdog *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->limit = limit_s;
    w->rank = rank;
    atomic_store(&w->last_ns, now_ns());
    if (pthread_create(&w->thread, NULL, watch, w)) {
        free(w);
        return NULL;
    }
    return w;
}

void hir_watchdog_tick(hir_watchdog *w, const hir_stmt *s)
{
    if (!w)
        return;
    atomic_store(&w->stmt, s);
    atomic_store(&w->last_ns, now_ns());
}

void hir_watchdog_stop(hir_watchdog *w)
{
    if (!w)
        return;
    atomic_store(&w->stop, 1);
    pthread_join(w->thread, NULL);
    free(w);
}

int hir_watchdog_before(void *ctx, hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    (void)it, (void)e;
    hir_watchdog_tick(ctx, s);
    return 0;
}
