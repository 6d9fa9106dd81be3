/* boot.h — starting and ending a run's ranks: MPI bootstrap (runner/boot.c) and the local
 * launcher that re-executes hir-run under the system's mpirun. The hir_boot_* queries and
 * collectives used by backends are declared in runner/backend.h. */
#ifndef HIR_RUNNER_BOOT_H
#define HIR_RUNNER_BOOT_H

#include "runner/backend.h"

/* Initialise MPI (unless the caller already did; MPI_THREAD_FUNNELED at least) and discover
 * rank, size, local rank/size and node ids. Works under mpirun/mpiexec (OpenMPI, MPICH) and
 * as a singleton. timeout_s <= 0 selects the default (300 s, like c10d's TCPStore). */
int  hir_boot_init(int *argc, char ***argv, double timeout_s, hir_boot **out, hir_error *e);
/* Free the communicators and finalize MPI if hir_boot_init initialised it. */
void hir_boot_fini(hir_boot *b);
/* Take the whole job down (MPI_Abort): the one exit for a rank that cannot continue while
 * its peers may be blocked on it. Does not return. */
void hir_boot_abort(hir_boot *b, int code);
void hir_boot_set_timeout(hir_boot *b, double timeout_s);

/* Name of the environment variable marking a process started by hir_launch_local. */
#define HIR_LAUNCH_MARKER "HIR_LAUNCHED"
/* Set by hir_launch_local for its ranks when its own stderr is a terminal. */
#define HIR_LAUNCH_TTY "HIR_LAUNCHED_STDERR_TTY"

/* `hir-run -np N ...`: when this process is not already a rank of a launcher, run
 * `mpirun -np N <this binary> <argv minus -np N>` and wait for it.
 * Returns 0 with *exit_code set when the job ran (exit status, 128+signal if killed);
 * 1 when the caller should run in-process (already under a launcher, or np <= 1);
 * -1 on error (no mpirun on PATH, fork/exec failure). */
int  hir_launch_local(int np, int argc, char **argv, int *exit_code, hir_error *e);
/* 1 when the environment says a launcher (mpirun/mpiexec/srun, or hir_launch_local) started
 * this process. */
int  hir_launch_is_child(void);

#endif
