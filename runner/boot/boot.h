/* boot.h — the boot room (runner/boot/): starting and ending a run's ranks. It owns the MPI
 * bootstrap (boot.c: rank, size, node ids, team broadcast, pair exchange, barrier, the start-up
 * and shut-down sentinel) and the local launcher that re-executes hir-run under the system's
 * mpirun (`hir-run -np`). Backends and the job use the queries and collectives below; the CPU
 * backend, whose transport is MPI, also uses boot_mpi.h. It may use support/ only. */
#ifndef HIR_RUNNER_BOOT_H
#define HIR_RUNNER_BOOT_H

#include <stdio.h>

#include <stddef.h>
#include <stdint.h>

#include "support/diag.h"

/* The out-of-band channel between ranks (implemented over MPI in runner/boot/boot.c). Backends use
 * it to share NCCL unique ids and CUDA-IPC handles; the CPU backend moves its data with it.
 * All calls honour the configured timeout and fail with a message naming the peer. */
typedef struct hir_boot hir_boot;

int  hir_boot_rank(const hir_boot *b);
int  hir_boot_size(const hir_boot *b);
int  hir_boot_local_rank(const hir_boot *b);
int  hir_boot_local_size(const hir_boot *b);
/* Host threads one rank may use: the node's processors divided among its ranks (b may be
 * NULL: one rank), at least 1 and at most max. */
int  hir_boot_threads(const hir_boot *b, int max);
/* Index of the physical node of a rank: ranks that MPI puts in one MPI_COMM_TYPE_SHARED
 * communicator share it; nodes are numbered 0.. in the order of their lowest rank. For what
 * is really shared (memory, GPUs). local_rank/local_size above are positions on it. */
uint64_t hir_boot_node_id(const hir_boot *b, int rank);
/* The node a rank counts as for communication: the physical node, or its block under
 * hir_boot_simulate_nodes (runner/boot/boot.h). -1 for a rank outside the world. */
int  hir_boot_node(const hir_boot *b, int rank);
int  hir_boot_node_count(const hir_boot *b);
int  hir_boot_nodes_simulated(const hir_boot *b);
int  hir_boot_node_local_rank(const hir_boot *b);   /* this rank's position on hir_boot_node */
int  hir_boot_node_local_size(const hir_boot *b);
double hir_boot_timeout(const hir_boot *b);   /* seconds */
/* World barrier (used only for benchmarks/timing, never by the IPC handle exchange). */
int  hir_boot_barrier(hir_boot *b, hir_diag *e);
/* Broadcast `bytes` from team member `root_index` to every member of `team` (world ranks,
 * ascending positions as in the program's team=(...)); every member must call it. */
int  hir_boot_team_bcast(hir_boot *b, const int *team, int team_size, int root_index,
                         void *data, size_t bytes, hir_diag *e);
/* Every member of `team` gets every member's `bytes` (all: team_size slots in team order);
 * every member must call it. On a communicator of the bootstrap's own, never the one a
 * backend moves data on. */
int  hir_boot_team_allgather(hir_boot *b, const int *team, int team_size, const void *mine,
                             void *all, size_t bytes, hir_diag *e);
/* Exchange `bytes` with one peer: send `mine`, receive into `theirs`. Only the two ranks take
 * part (no barrier); `tag` separates concurrent exchanges. */
int  hir_boot_exchange(hir_boot *b, int peer, int tag, const void *mine, void *theirs,
                       size_t bytes, hir_diag *e);

/* A small message posted without waiting (a P2P header, agree.h): its bytes (at most
 * HIR_BOOT_MSG_MAX) are copied into the message, so the caller's buffer may go at once. */
#define HIR_BOOT_MSG_MAX 64
typedef struct hir_boot_msg hir_boot_msg;
/* Post a send of `bytes` of data to peer on tag, or (is_recv) a receive of `bytes` from it. */
int  hir_boot_msg_post(hir_boot *b, int peer, int tag, int is_recv, const void *data,
                       size_t bytes, hir_boot_msg **out, hir_diag *e);
/* Complete m: with wait, polled up to the timeout (a located failure naming the peer and
 * `what`); without, only tested. Returns 1 when complete (a receive's bytes copied to out; m
 * freed), 0 when not yet (never with wait), -1 on failure (m freed). */
int  hir_boot_msg_complete(hir_boot *b, hir_boot_msg *m, int wait, void *out, const char *what,
                           hir_diag *e);
/* Give m up: a receive is cancelled, a send left to MPI; m freed. */
void hir_boot_msg_drop(hir_boot_msg *m);

/* Initialise MPI (unless the caller already did; MPI_THREAD_FUNNELED at least) and discover
 * rank, size, local rank/size and node indices (from MPI_COMM_TYPE_SHARED, not host
 * names). Works under mpirun/mpiexec (OpenMPI, MPICH) and
 * as a singleton. timeout_s <= 0 selects the default (300 s, like c10d's TCPStore). */
int  hir_boot_init(int *argc, char ***argv, double timeout_s, hir_boot **out, hir_diag *e);
/* Free the communicators and finalize MPI if hir_boot_init initialised it. */
void hir_boot_fini(hir_boot *b);
/* Take the whole job down (MPI_Abort): the one exit for a rank that cannot continue while
 * its peers may be blocked on it. Does not return. */
void hir_boot_abort(hir_boot *b, int code);
void hir_boot_set_timeout(hir_boot *b, double timeout_s);

/* Testing several nodes on one: the ranks split into n blocks of size/n consecutive ranks, and
 * each block counts as a node (hir_boot_node, hir_boot_node_local_*), so a backend treats a
 * peer in another block as remote. The GPU a rank uses is still chosen by its position on the
 * real node (hir_boot_local_rank). Needs every rank on one real node and n dividing the
 * number of ranks; every rank reaches the same verdict, without communicating. */
int  hir_boot_simulate_nodes(hir_boot *b, int n, hir_diag *e);
/* Collective: rank 0 writes to out one header line and one line per rank, in rank order:
 * `rank R node N local_rank L local_size S host H gpu G` (G: gpu, the GPU this rank would use,
 * or `none` for gpu < 0). */
int  hir_boot_print_topology(hir_boot *b, int gpu, FILE *out, hir_diag *e);

/* Name of the environment variable marking a process started by hir_launch_local. */
#define HIR_LAUNCH_MARKER "HIR_LAUNCHED"
/* Set by hir_launch_local for its ranks when its own stderr is a terminal. */
#define HIR_LAUNCH_TTY "HIR_LAUNCHED_STDERR_TTY"

/* `hir-run -np N ...`: when this process is not already a rank of a launcher, run
 * `mpirun -np N <this binary> <argv minus -np N>` and wait for it (words after "--" are kept
 * as they are). Open MPI's mpirun gets --oversubscribe and --quiet: its banners after a rank
 * exits non-zero or calls MPI_Abort would only repeat what hir-run reported; the caller says
 * what they would have when a rank ends otherwise (*exit_code neither 0 nor 1).
 * Returns 0 with *exit_code set when the job ran (exit status, 128+signal if killed);
 * 1 when the caller should run in-process (already under a launcher, or np <= 1);
 * -1 on error (no mpirun on PATH, fork/exec failure). */
int  hir_launch_local(int np, int argc, char **argv, int *exit_code, hir_diag *e);
/* 1 when the environment says a launcher (mpirun/mpiexec/srun, or hir_launch_local) started
 * this process. */
int  hir_launch_is_child(void);

#endif
