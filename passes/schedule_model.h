/* schedule_model.h — the scale model of bench/scale_model.py in C, and the gather schedules
 * --stream-parallel emits (order, chunk count, node layout).
 *
 * Everything this model computes is a PREDICTION (docs/passes.md, "Schedules past one node").
 * The model is bench/scale_model.py's, step for step; bench/scale_model.py stays its
 * reference: test/lit/passes/schedule-model.test compares this port's figures with the
 * script's. Used by --stream-parallel (the default schedule for a given d and layout) and by
 * hir-opt --explain-schedule (a lowered program's predicted time per step). */
#ifndef HIR_PASSES_SCHEDULE_MODEL_H
#define HIR_PASSES_SCHEDULE_MODEL_H

#include <stdbool.h>
#include <stdint.h>

/* The model's inputs (bench/scale_model.py's Model): shape, element size, GPUs per node, GEMM
 * rate and fixed cost per GEMM, link bandwidths (bytes/s) and latencies (s). */
typedef struct hir_sm {
    double m, k, n, elem;
    int64_t g;
    double R, t_fixed, B_nvl, B_ib, B_hbm, lat_nvl, lat_ib;
} hir_sm;

/* bench/scale_model.py's defaults: the headline shape (m=32768 k=16384 n=8192 bf16), 8 GPUs a
 * node, the GEMM rate and fixed cost it derives from bench/results/ag_gemm-h200-2026-12-02.json
 * (693.869 TFLOP/s measured; 20.46 us fitted), and its nominal links (NVLink 450 GB/s + 20 us,
 * InfiniBand 50 GB/s + 30 us, HBM 4800 GB/s). */
void hir_sm_defaults(hir_sm *mo);
/* seconds for one GEMM of `rows` rows of A against all of W */
double hir_sm_gemm(const hir_sm *mo, double rows);

/* The pipeline of `chunks` steps of m/chunks rows on `streams` streams for npos ranks, each
 * with near[pos * chunks + i] rows from its node and far[...] from other nodes at step i:
 * the slowest rank's seconds. gemm_end (npos * chunks entries, may be NULL) receives when
 * each step's GEMM ends. Step i's GEMM runs on worker stream i % streams after its rows are
 * in and after the previous GEMM; per_transport false: step i's exchange runs on that worker
 * stream too, so its transfer also waits for the GEMM of step i - streams; true: it runs on
 * its link's own stream (backend{kind=auto}'s Stream 1 NVLink, Stream 2 InfiniBand), after
 * that link's earlier transfers only. */
double hir_sm_run(const hir_sm *mo, int npos, int chunks, int streams, const double *near,
                  const double *far, double *gemm_end, bool per_transport);
/* ---- the schedules --stream-parallel emits */

/* d ranks, `nodes` nodes of d/nodes consecutive ranks, `chunks` steps of d/chunks shards.
 * ring: at step c, rank r takes the block (r/G + c) % K of G = d/K shards (G = 1: shard
 * (r + c) % d, today's ring); local-first (when G < the node size): the blocks of its own
 * node first, then those of the next node, and so on. Within a block, shard t of the step is
 * block*G + (r % G + t) % G. Every (step, t) is a permutation of the ranks. */
typedef struct hir_sched {
    int64_t d, nodes, chunks;
    bool local_first;
} hir_sched;

/* shards a step (d/chunks, 1 when chunks >= d) and pieces a shard (chunks/d, 1 when chunks <= d):
 * chunks > d (a multiple of d) splits every shard into chunks/d pieces, taken on consecutive
 * steps in the order of the schedule of one shard a step */
int64_t hir_sched_shards(const hir_sched *s);
int64_t hir_sched_pieces(const hir_sched *s);
/* NULL when the schedule can be lowered, else why not (a constant sentence) */
const char *hir_sched_invalid(const hir_sched *s);
/* local-first that is the ring (one node, or blocks of whole nodes) becomes the ring */
void hir_sched_normalize(hir_sched *s);
/* the shard rank r receives as piece t of step c, and the rank it sends its shard to then */
int64_t hir_sched_recv(const hir_sched *s, int64_t r, int64_t c, int64_t t);
int64_t hir_sched_send(const hir_sched *s, int64_t r, int64_t c, int64_t t);

/* The default schedule for d ranks on `nodes` nodes: the model at its headline shape picks the
 * order (order_req -1; else 0 ring, 1 local-first) and the chunk count (chunks_req 0; else
 * that count) among those that can be lowered (chunks a power of two dividing d, d, or 2d, 4d,
 * 8d),
 * ties to the ring, then to fewer chunks; *streams gets the stream count it assumed best and
 * *eff the predicted efficiency (GEMM alone / pipeline). Returns -1 when no candidate is
 * valid (the caller reports hir_sched_invalid of the requested one). */
int hir_sched_choose(int64_t d, int64_t nodes, int order_req, int64_t chunks_req, hir_sched *out,
                     int *streams, double *eff);
/* Does backend{kind=auto nodes=} put this schedule's exchanges on a stream per transport?
 * (1 < nodes < d and every rank at every step and piece receives and sends over one
 * transport: local-first, or blocks of one whole node; the ring across nodes does not.) */
bool hir_sched_transport_streams(const hir_sched *s);
/* The predicted seconds of a schedule under mo (mo->g is set from the schedule), in the form
 * backend{kind=auto} gives it (a stream per transport where hir_sched_transport_streams, else
 * the worker streams); its best stream count from {1, 2, 3, 4, 8} in *streams when
 * streams_in is 0. */
double hir_sched_predict(const hir_sm *mo, const hir_sched *s, int streams_in, int *streams);

#endif
