/* schedule_explain.c — hir-opt --explain-schedule: for every lowered all-gather pipeline of a
 * program (a kernel-IR FOR whose body receives shards by P2PCommunication and runs a linear or
 * matmul), the scale model's PREDICTED time per step and efficiency on a topology. The
 * schedule is read from the program itself: every receive peer is evaluated for every rank
 * and step, so the report describes what the text does, whatever pass or hand wrote it. */
#include "passes/schedule_explain.h"
#include "passes/ir_util.h"

#include <stdlib.h>

typedef struct pipe {
    hir_comm *recv[4096];
    int nrecv;
    hir_stmt *gemm;
    /* backend{kind=auto}'s stream per transport: the exchange runs on Stream nvl when the
     * receive peer shares the rank's node, else on Stream ib (-1: on the worker streams) */
    int64_t nvl, ib;
} pipe;

/* `IF ...: SetCurrentStream to Stream A  ELSE: SetCurrentStream to Stream B` directly in the
 * loop body (backend.c's transport pick) */
static void find_transport_streams(hir_stmt *loop, pipe *q)
{
    q->nvl = q->ib = -1;
    for (int i = 0; i < hir_block_size(&loop->body); i++) {
        hir_stmt *s = hir_block_at(&loop->body, i);
        if (s->op != HIR_OP_IF || hir_block_size(&s->body) != 1 || hir_block_size(&s->else_body) != 1)
            continue;
        hir_stmt *a = hir_block_at(&s->body, 0), *b = hir_block_at(&s->else_body, 0);
        if (a->op == HIR_OP_SET_STREAM && b->op == HIR_OP_SET_STREAM && !a->u.stream.index &&
            !b->u.stream.index) {
            q->nvl = a->u.stream.number;
            q->ib = b->u.stream.number;
            return;
        }
    }
}

static bool collect(hir_stmt *s, int depth, void *ctx)
{
    (void)depth;
    pipe *q = ctx;
    if (s->op == HIR_OP_P2P && s->u.comm && !s->u.comm->is_send) {
        /* the kind=auto form names each receive twice (CUDA and NCCL twin): count it once */
        bool twin = false;
        for (int i = 0; i < q->nrecv && !twin; i++)
            twin = q->recv[i]->buffer == s->u.comm->buffer && q->recv[i]->peer == s->u.comm->peer;
        if (!twin && q->nrecv < (int)(sizeof q->recv / sizeof q->recv[0]))
            q->recv[q->nrecv++] = s->u.comm;
    }
    if ((s->op == HIR_OP_LINEAR || s->op == HIR_OP_MATMUL) && !q->gemm)
        q->gemm = s;
    return true;
}

/* constant extent of logical axis i of t (-1: unknown) */
static int64_t extent(const hir_tensor *t, int i)
{
    hir_shape_axis a;
    if (i < 0 || i >= t->shape.naxes)
        return -1;
    hir_shape_axis_get(t, i, &a);
    return a.global;
}

/* the gathered axis extent: of the axis the receive slot's HirAliasSelect selects (directly,
 * or through the ShardByStream of a piece: *pieces the pieces a shard); *slot its output */
static int64_t ranks_of(hir_stmt *loop, const hir_comm *recv, int64_t *pieces, const hir_tensor **slot)
{
    int64_t n;
    const hir_stmt *s = pu_slot_select(&loop->body, recv->buffer, pieces);
    *slot = s ? s->out : recv->buffer;
    if (s && s->u.sel.axis && s->u.sel.axis->extent && hir_scalar_const(s->u.sel.axis->extent, &n))
        return n;
    return -1;
}

/* what the report needs of one pipeline */
typedef struct shape {
    int64_t d, K, rows, k, n, g, pieces;   /* rows: of a received piece (a shard / pieces) */
    size_t esize;
    hir_loc where;
    int line;
} shape;

/* the pipeline's ranks, steps, shard and GEMM sizes; 1: not a pipeline, -1 after a diagnostic */
static int loop_shape(const hir_program *p, hir_stmt *loop, const pipe *q, const hir_explain_opts *o,
                      hir_diag *d, shape *sh)
{
    if (!q->nrecv || !q->gemm)
        return 1;
    sh->where = pu_loc(p, loop);
    const hir_tensor *slot;
    sh->d = ranks_of(loop, q->recv[0], &sh->pieces, &slot);
    if (!hir_scalar_const(loop->u.kfor.id->extent, &sh->K) || sh->K < 1 || sh->d < 1 || sh->d % o->nodes) {
        hir_diag_emit(d, HIR_ERROR, sh->where,
                      sh->d >= 1 && sh->d % o->nodes
                          ? "explain-schedule: %lld nodes do not split the %lld ranks of this pipeline"
                          : "explain-schedule: this pipeline's step count and rank count must be constants",
                      (long long)o->nodes, (long long)sh->d);
        return -1;
    }
    hir_tensor *w = q->gemm->nin > 1 ? hir_value_tensor(q->gemm->in[1]) : NULL;
    sh->rows = extent(slot, 0);
    if (sh->rows > 0 && sh->rows % sh->pieces == 0)
        sh->rows /= sh->pieces;
    else if (sh->pieces > 1)
        sh->rows = -1;
    sh->k = extent(slot, slot->shape.naxes - 1);
    sh->n = w ? extent(w, q->gemm->op == HIR_OP_LINEAR ? 0 : w->shape.naxes - 1) : -1;
    sh->esize = hir_dtype_size(slot->dtype);
    sh->g = sh->d / o->nodes;
    if (sh->rows < 1 || sh->k < 1 || sh->n < 1 || !sh->esize) {
        hir_diag_emit(d, HIR_ERROR, sh->where,
                      "explain-schedule: the shard, weight or element size of this pipeline is not a constant");
        return -1;
    }
    int col = 0;
    sh->line = 0;
    if (loop->loc.src && loop->loc.begin != HIR_LOC_WHOLE)
        hir_source_linecol((hir_source *)loop->loc.src, loop->loc.begin, &sh->line, &col);
    return 0;
}

/* rows each rank receives from its node (near) and from other nodes (far) at each step, from
 * the receive peers evaluated; *per_step: receives a step; n_near/n_far: rank 0's shards */
static int count_rows(const shape *sh, const pipe *q, double *near, double *far, int64_t *per_step,
                      int64_t nn[2], hir_diag *d)
{
    int64_t K = sh->K, g = sh->g;
    *per_step = q->nrecv;
    for (int64_t r = 0; r < sh->d; r++)
        for (int64_t c = 0; c < K; c++)
            for (int i = 0; i < q->nrecv; i++) {
                int64_t peer;
                char msg[256];
                if (pu_eval_at_step(q->recv[i]->peer, r, c, &peer, msg, sizeof msg)) {
                    hir_diag_emit(d, HIR_ERROR, sh->where,
                                  "explain-schedule: the peer of P2PCommunication %lld at rank %lld, "
                                  "step %lld: %s",
                                  (long long)q->recv[i]->number, (long long)r, (long long)c, msg);
                    return -1;
                }
                if (peer == r)
                    continue;
                bool same = peer / g == r / g;
                (same ? near : far)[r * K + c] += (double)sh->rows;
                nn[same ? 0 : 1] += r == 0;
            }
    /* the model's GEMM is of m/K rows: steps that do not cover every shard are not modelled */
    if (*per_step * K != sh->d * sh->pieces) {
        hir_diag_emit(d, HIR_ERROR, sh->where,
                      "explain-schedule: %lld steps of %lld received %s do not cover the %lld ranks' shards",
                      (long long)K, (long long)*per_step, sh->pieces > 1 ? "pieces" : "shards", (long long)sh->d);
        return -1;
    }
    return 0;
}

/* the stream count (given, or the best of the model's choices) and its time */
static double best_streams(const hir_sm *mo, const shape *sh, const pipe *q, const hir_explain_opts *o,
                           const double *near, const double *far, int *streams)
{
    static const int choices[] = {1, 2, 3, 4, 8};
    double best = -1;
    for (int i = 0; i < 5; i++) {
        int s = o->streams ? o->streams : choices[i];
        double t = hir_sm_run(mo, (int)sh->d, (int)sh->K, s, near, far, NULL, q->nvl >= 0);
        if (t > 0 && (best < 0 || t < best * (1 - 1e-12))) {
            best = t;
            *streams = s;
        }
        if (o->streams)
            break;
    }
    return best;
}

/* where step c's exchange runs on rank `slow` (the text of the table's column) */
static void exchange_stream(char *buf, size_t n, const pipe *q, int64_t c, int streams, double near, double far)
{
    if (near <= 0 && far <= 0)
        snprintf(buf, n, "- (own shard)");
    else if (q->nvl < 0)
        snprintf(buf, n, "worker %lld", (long long)(c % streams));
    else if (far <= 0)
        snprintf(buf, n, "Stream %lld (NVLink)", (long long)q->nvl);
    else if (near <= 0)
        snprintf(buf, n, "Stream %lld (InfiniBand)", (long long)q->ib);
    else
        snprintf(buf, n, "Streams %lld, %lld", (long long)q->nvl, (long long)q->ib);
}

static void report(FILE *out, const hir_sm *mo, const shape *sh, const pipe *q, const hir_explain_opts *o,
                   int64_t per_step, const int64_t nn[2], const double *near, const double *far,
                   const double *ends, int streams, double best)
{
    int64_t K = sh->K, g = sh->g, slow = 0;
    for (int64_t r = 1; r < sh->d; r++)
        if (ends[r * K + K - 1] > ends[slow * K + K - 1])
            slow = r;
    double alone = hir_sm_gemm(mo, mo->m);
    fprintf(out, "PREDICTED by the scale model (bench/scale_model.py; its C port passes/schedule_model.c): "
                 "not a measurement\n");
    if (sh->pieces > 1)
        fprintf(out, "pipeline: FOR at line %d: %lld ranks, %lld steps of 1/%lld shard (m=%lld k=%lld n=%lld, "
                     "%zu-byte elements)\n",
                sh->line, (long long)sh->d, (long long)K, (long long)sh->pieces,
                (long long)(sh->d * sh->rows * sh->pieces), (long long)sh->k, (long long)sh->n, sh->esize);
    else
        fprintf(out, "pipeline: FOR at line %d: %lld ranks, %lld steps of %lld shard%s (m=%lld k=%lld n=%lld, "
                     "%zu-byte elements)\n",
                sh->line, (long long)sh->d, (long long)K, (long long)per_step, per_step == 1 ? "" : "s",
                (long long)(sh->d * sh->rows), (long long)sh->k, (long long)sh->n, sh->esize);
    fprintf(out, "topology: %lld node%s of %lld ranks (node j holds ranks j*%lld .. j*%lld+%lld); "
                 "rank 0 receives %lld %s over NVLink, %lld over InfiniBand\n",
            (long long)o->nodes, o->nodes == 1 ? "" : "s", (long long)g, (long long)g, (long long)g,
            (long long)(g - 1), (long long)nn[0], sh->pieces > 1 ? "pieces" : "shards", (long long)nn[1]);
    fprintf(out, "inputs: GEMM %.3f TFLOP/s + %.2f us per GEMM, NVLink %.0f GB/s + %.0f us, InfiniBand "
                 "%.0f GB/s + %.0f us, HBM %.0f GB/s\n",
            mo->R / 1e12, mo->t_fixed * 1e6, mo->B_nvl / 1e9, mo->lat_nvl * 1e6, mo->B_ib / 1e9,
            mo->lat_ib * 1e6, mo->B_hbm / 1e9);
    fprintf(out, "streams: %d%s\n", streams, o->streams ? "" : " (the best of 1, 2, 3, 4, 8; run with hir-run --streams)");
    if (q->nvl >= 0)
        fprintf(out, "exchanges: a stream per transport (backend{kind=auto}): NVLink steps on Stream %lld, "
                     "InfiniBand steps on Stream %lld, each in step order; a transfer waits for its link's "
                     "earlier transfers only, and step i's GEMM, on worker stream i %% %d, for its transfer "
                     "and the previous GEMM\n",
                (long long)q->nvl, (long long)q->ib, streams);
    else
        fprintf(out, "exchanges: on the worker streams: step i's exchange and GEMM run on worker stream "
                     "i %% %d, so its transfer waits for the GEMM of step i - %d and for its link's earlier "
                     "transfers, and its GEMM for the transfer and the previous GEMM\n",
                streams, streams);
    fprintf(out, "| step | rows from the node | rows from other nodes | exchange on | GEMM on | GEMM ends (ms), rank %lld |\n",
            (long long)slow);
    fprintf(out, "|---|---|---|---|---|---|\n");
    for (int64_t c = 0; c < K; c++) {
        if (K > 40 && c == 16) {
            fprintf(out, "| ... | | | | | |\n");
            c = K - 8;
        }
        char on[64];
        exchange_stream(on, sizeof on, q, c, streams, near[slow * K + c], far[slow * K + c]);
        fprintf(out, "| %lld | %.0f | %.0f | %s | worker %lld | %.4f |\n", (long long)c, near[slow * K + c],
                far[slow * K + c], on, (long long)(c % streams), ends[slow * K + c] * 1e3);
    }
    fprintf(out, "predicted: pipeline %.4f ms, GEMM alone %.4f ms, efficiency %.4f\n", best * 1e3,
            alone * 1e3, alone / best);
    hir_sched ch;
    int cs = 0;
    double ce = 0;
    if (!hir_sched_choose(sh->d, o->nodes, -1, 0, &ch, &cs, &ce))
        fprintf(out, "default of stream-parallel{nodes=%lld} for %lld ranks (the model at its headline "
                     "shape, in the backend{kind=auto} form): order=%s chunks=%lld, %d stream%s, predicted "
                     "efficiency %.4f there\n",
                (long long)o->nodes, (long long)sh->d, ch.local_first ? "local-first" : "ring",
                (long long)ch.chunks, cs, cs == 1 ? "" : "s", ce);
}

static int explain_loop(const hir_program *p, hir_stmt *loop, const hir_explain_opts *o, FILE *out,
                        hir_diag *d, int *count)
{
    pipe *q = calloc(1, sizeof *q);
    if (!q)
        return HIR_ENOMEM;
    hir_block_walk(&loop->body, 0, collect, q);
    find_transport_streams(loop, q);
    shape sh;
    int rc = loop_shape(p, loop, q, o, d, &sh);
    if (rc) {
        free(q);
        return rc > 0 ? 0 : rc;
    }
    hir_sm mo = o->model;
    mo.m = (double)(sh.d * sh.rows * sh.pieces);
    mo.k = (double)sh.k;
    mo.n = (double)sh.n;
    mo.elem = (double)sh.esize;
    mo.g = sh.g;
    size_t cells = (size_t)(sh.d * sh.K);
    double *near = calloc(cells * 3, sizeof(double));
    if (!near) {
        free(q);
        return HIR_ENOMEM;
    }
    double *far = near + cells, *ends = far + cells;
    int64_t per_step = 0, nn[2] = {0, 0};
    int streams = o->streams;
    rc = count_rows(&sh, q, near, far, &per_step, nn, d);
    double best = rc ? -1 : best_streams(&mo, &sh, q, o, near, far, &streams);
    if (!rc && best < 0)
        rc = HIR_ENOMEM;
    if (!rc) {
        hir_sm_run(&mo, (int)sh.d, (int)sh.K, streams, near, far, ends, q->nvl >= 0);
        if ((*count)++)
            fputc('\n', out);
        report(out, &mo, &sh, q, o, per_step, nn, near, far, ends, streams, best);
    }
    free(near);
    free(q);
    return rc;
}

int hir_explain_schedule(const hir_program *p, const hir_explain_opts *o, FILE *out, hir_diag *d)
{
    int count = 0;
    for (int i = 0; i < hir_block_size((hir_block *)&p->body); i++) {
        hir_stmt *s = hir_block_at((hir_block *)&p->body, i);
        if (s->op != HIR_OP_FOR)
            continue;
        int rc = explain_loop(p, s, o, out, d, &count);
        if (rc)
            return rc;
    }
    if (!count)
        fprintf(out, "explain-schedule: no lowered all-gather pipeline (a FOR that receives shards by "
                     "P2PCommunication and runs a GEMM) in this program; run --stream-parallel first\n");
    return 0;
}
