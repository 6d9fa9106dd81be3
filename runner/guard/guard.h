/* guard.h — the guard room (runner/guard/): what keeps a job from running what it cannot hold
 * or from hanging. It owns the up-front resource check (limits.c), fault injection for the
 * reliability tests (fault.c, a statement hook) and the watchdog that ends a rank stuck in a
 * blocking device call (watchdog.h, a statement hook). It sees a run only through the
 * interpreter's public face and hooks (runner/interp/interp.h); it may use the backend table,
 * the bootstrap (to share verdicts), the dialect and support/. */
#ifndef HIR_RUNNER_GUARD_H
#define HIR_RUNNER_GUARD_H

#include "runner/boot/boot.h"
#include "runner/guard/watchdog.h"
#include "runner/interp/interp.h"

/* Environment variable of the fault injector: RANK:LINE:KIND, KIND one of
 *   exit            the rank prints a line and _exit()s (a peer that disappears)
 *   crash           the rank prints a line and raises SIGSEGV
 *   stall           the rank prints a line and sleeps forever (a hung peer)
 *   corrupt[=T<n>]  the rank negates-and-increments its shard of input T<n> (every tensor
 *                   input when no name is given), then runs on
 *   skip            from the program's second run on, the statement is not executed at all
 *                   (work silently skipped: its output keeps what an earlier run left)
 * fired on rank RANK just before the statement that starts on line LINE of the program
 * (every time it is reached; never in the --check reference run). */
#define HIR_FAULT_ENV "HIR_FAULT"

/* The `before` of a statement hook (hir_interp_hook; ctx unused) that the job adds to every
 * interpreter. Returns 0 (and for the terminal kinds
 * does not return at all), 1 when the statement must be skipped, or -1 with e set when HIR_FAULT is malformed or names no line
 * where a statement starts (checked at the program's first statement, on every rank). */
int hir_fault_before_stmt(void *ctx, hir_interp *it, const hir_stmt *s, hir_diag *e);

/* Resource limits, checked on every rank before any input is made or statement runs:
 * extents whose element counts or byte sizes overflow 64 bits are located errors, and a
 * program whose inputs plus allocations (ALLOCATE statements and the fresh results of compute
 * statements) exceed the backend's available memory is refused with both sizes. The verdict
 * is shared so that every rank refuses together: returns 0, or 1 when refused (or -1 when the
 * ranks cannot agree), with the message in e. */
int hir_limits_check(hir_interp *it, hir_program *p, hir_backend *be, hir_boot *boot,
                     hir_diag *e);

#endif
