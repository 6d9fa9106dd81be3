/* watchdog.h — part of the guard room (guard.h): ends a rank whose host thread is stuck in a
 * blocking call (watchdog.c). */
#ifndef HIR_RUNNER_WATCHDOG_H
#define HIR_RUNNER_WATCHDOG_H

#include "dialect/hir.h"
#include "runner/interp/interp.h"

typedef struct hir_watchdog hir_watchdog;

/* Starts watching; NULL when no thread could be made (the run goes on unwatched). */
hir_watchdog *hir_watchdog_start(double limit_s, int rank);
/* The interpreter starts statement s (NULL: between statements). w may be NULL. */
void hir_watchdog_tick(hir_watchdog *w, const hir_stmt *s);
void hir_watchdog_stop(hir_watchdog *w);
/* The `before` of a statement hook (hir_interp_hook) whose ctx is the watchdog: ticks it. */
int hir_watchdog_before(void *ctx, hir_interp *it, const hir_stmt *s, hir_diag *e);

#endif
