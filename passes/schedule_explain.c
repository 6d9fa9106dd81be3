/* schedule_explain.c — hir-opt --explain-schedule: for every lowered all-gather pipeline of a
 * program (a kernel-IR FOR whose body receives shards by P2PCommunication and runs a linear or
 * matmul), the scale model's PREDICTED time per step and efficiency on a topology. The
 * schedule is read from the program itself: every receive peer is evaluated for every rank
 * and step, so the report describes what the text does, whatever pass or hand wrote it. */
#include "passes/schedule_explain.h"
#include "passes/ir_util.h"

#include <stdlib.h>
#include <string.h>

typedef struct env { int64_t rank, step; } env;

static int lookup(void *ctx, const hir_scalar *s, int64_t *v)
{
    env *e = ctx;
    if (s->kind != HIR_SC_NAMED)
        return -1;
    if (!strcmp(s->name, "rank"))
        *v = e->rank;
    else if (!strcmp(s->name, "streamIdx"))
        *v = e->step;
    else
        return -1;
    return 0;
}

typedef struct pipe {
    hir_comm *recv[4096];
    int nrecv;
    hir_stmt *gemm;
} pipe;

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

/* the gathered axis extent: of the axis the receive slot's HirAliasSelect selects */
static int64_t ranks_of(hir_stmt *loop, const hir_comm *recv)
{
    int64_t n;
    for (int i = 0; i < hir_block_size(&loop->body); i++) {
        hir_stmt *s = hir_block_at(&loop->body, i);
        if (s->op == HIR_OP_ALIAS_SELECT && s->out == recv->buffer && s->u.sel.axis &&
            s->u.sel.axis->extent && hir_scalar_const(s->u.sel.axis->extent, &n))
            return n;
    }
    return -1;
}

static int explain_loop(const hir_program *p, hir_stmt *loop, const hir_explain_opts *o, FILE *out,
                        hir_diag *d, int *count)
{
    pipe *q = calloc(1, sizeof *q);
    if (!q)
        return HIR_ENOMEM;
    hir_block_walk(&loop->body, 0, collect, q);
    int rc = 0;
    int64_t K, dd = q->nrecv ? ranks_of(loop, q->recv[0]) : -1;
    if (!q->nrecv || !q->gemm) {
        free(q);
        return 0;
    }
    hir_loc where = pu_loc(p, loop);
    if (!hir_scalar_const(loop->u.kfor.id->extent, &K) || K < 1 || dd < 1 || dd % o->nodes) {
        hir_diag_emit(d, HIR_ERROR, where,
                      dd >= 1 && dd % o->nodes
                          ? "explain-schedule: %lld nodes do not split the %lld ranks of this pipeline"
                          : "explain-schedule: this pipeline's step count and rank count must be constants",
                      (long long)o->nodes, (long long)dd);
        free(q);
        return -1;
    }
    const hir_tensor *slot = q->recv[0]->buffer;
    hir_tensor *w = q->gemm->nin > 1 ? hir_value_tensor(q->gemm->in[1]) : NULL;
    int64_t rows = extent(slot, 0), k = extent(slot, slot->shape.naxes - 1);
    int64_t n = w ? extent(w, q->gemm->op == HIR_OP_LINEAR ? 0 : w->shape.naxes - 1) : -1;
    size_t esize = hir_dtype_size(slot->dtype);
    if (rows < 1 || k < 1 || n < 1 || !esize) {
        hir_diag_emit(d, HIR_ERROR, where,
                      "explain-schedule: the shard, weight or element size of this pipeline is not a constant");
        free(q);
        return -1;
    }
    hir_sm mo = o->model;
    mo.m = (double)(dd * rows);
    mo.k = (double)k;
    mo.n = (double)n;
    mo.elem = (double)esize;
    mo.g = dd / o->nodes;
    int64_t g = mo.g;
    double *near = calloc((size_t)(dd * K) * 2, sizeof(double));
    if (!near) {
        free(q);
        return HIR_ENOMEM;
    }
    double *far = near + dd * K;
    int64_t shards_step = 0, n_near = 0, n_far = 0;
    for (int64_t r = 0; r < dd && !rc; r++)
        for (int64_t c = 0; c < K && !rc; c++)
            for (int i = 0; i < q->nrecv; i++) {
                env e = {r, c};
                hir_scalar_env en = {lookup, &e};
                int64_t peer;
                char msg[256];
                if (hir_scalar_eval(q->recv[i]->peer, &en, &peer, msg, sizeof msg)) {
                    hir_diag_emit(d, HIR_ERROR, where,
                                  "explain-schedule: the peer of P2PCommunication %lld at rank %lld, "
                                  "step %lld: %s",
                                  (long long)q->recv[i]->number, (long long)r, (long long)c, msg);
                    rc = -1;
                    break;
                }
                if (r == 0 && c == 0)
                    shards_step++;
                if (peer == r)
                    continue;
                if (peer / g == r / g) {
                    near[r * K + c] += (double)rows;
                    n_near += r == 0;
                } else {
                    far[r * K + c] += (double)rows;
                    n_far += r == 0;
                }
            }
    if (rc) {
        free(near);
        free(q);
        return rc;
    }
    /* the model's GEMM is of m/K rows; a pipeline whose steps do not cover m is not modelled */
    int64_t covered = shards_step * K;
    if (covered != dd) {
        hir_diag_emit(d, HIR_ERROR, where,
                      "explain-schedule: %lld steps of %lld received shards do not cover the %lld ranks' shards",
                      (long long)K, (long long)shards_step, (long long)dd);
        free(near);
        free(q);
        return -1;
    }
    static const int choices[] = {1, 2, 3, 4, 8};
    int best_s = o->streams;
    double best = -1;
    for (int i = 0; i < 5; i++) {
        int s = o->streams ? o->streams : choices[i];
        double t = hir_sm_run(&mo, (int)dd, (int)K, s, near, far, NULL);
        if (t > 0 && (best < 0 || t < best * (1 - 1e-12))) {
            best = t;
            best_s = s;
        }
        if (o->streams)
            break;
    }
    double *ends = malloc(sizeof(double) * (size_t)(dd * K));
    if (!ends || best < 0) {
        free(ends);
        free(near);
        free(q);
        return HIR_ENOMEM;
    }
    hir_sm_run(&mo, (int)dd, (int)K, best_s, near, far, ends);
    int64_t slow = 0;
    for (int64_t r = 1; r < dd; r++)
        if (ends[r * K + K - 1] > ends[slow * K + K - 1])
            slow = r;
    double alone = hir_sm_gemm(&mo, mo.m);
    if ((*count)++)
        fputc('\n', out);
    fprintf(out, "PREDICTED by the scale model (bench/scale_model.py; its C port passes/schedule_model.c): "
                 "not a measurement\n");
    int line = 0, col = 0;
    if (loop->loc.src && loop->loc.begin != HIR_LOC_WHOLE)
        hir_source_linecol((hir_source *)loop->loc.src, loop->loc.begin, &line, &col);
    fprintf(out, "pipeline: FOR at line %d: %lld ranks, %lld steps of %lld shard%s (m=%lld k=%lld n=%lld, "
                 "%zu-byte elements)\n",
            line, (long long)dd, (long long)K, (long long)shards_step,
            shards_step == 1 ? "" : "s", (long long)(dd * rows), (long long)k, (long long)n, esize);
    fprintf(out, "topology: %lld node%s of %lld ranks (node j holds ranks j*%lld .. j*%lld+%lld); "
                 "rank 0 receives %lld shards over NVLink, %lld over InfiniBand\n",
            (long long)o->nodes, o->nodes == 1 ? "" : "s", (long long)g, (long long)g, (long long)g,
            (long long)(g - 1), (long long)n_near, (long long)n_far);
    fprintf(out, "inputs: GEMM %.3f TFLOP/s + %.2f us per GEMM, NVLink %.0f GB/s + %.0f us, InfiniBand "
                 "%.0f GB/s + %.0f us, HBM %.0f GB/s\n",
            mo.R / 1e12, mo.t_fixed * 1e6, mo.B_nvl / 1e9, mo.lat_nvl * 1e6, mo.B_ib / 1e9,
            mo.lat_ib * 1e6, mo.B_hbm / 1e9);
    fprintf(out, "streams: %d%s\n", best_s, o->streams ? "" : " (the best of 1, 2, 3, 4, 8; run with hir-run --streams)");
    fprintf(out, "| step | rows from the node | rows from other nodes | GEMM ends (ms), rank %lld |\n",
            (long long)slow);
    fprintf(out, "|---|---|---|---|\n");
    for (int64_t c = 0; c < K; c++) {
        if (K > 40 && c == 16) {
            fprintf(out, "| ... | | | |\n");
            c = K - 8;
        }
        fprintf(out, "| %lld | %.0f | %.0f | %.4f |\n", (long long)c, near[slow * K + c],
                far[slow * K + c], ends[slow * K + c] * 1e3);
    }
    fprintf(out, "predicted: pipeline %.4f ms, GEMM alone %.4f ms, efficiency %.4f\n", best * 1e3,
            alone * 1e3, alone / best);
    hir_sched ch;
    int cs = 0;
    double ce = 0;
    if (!hir_sched_choose(dd, o->nodes, -1, 0, &ch, &cs, &ce))
        fprintf(out, "default of stream-parallel{nodes=%lld} for %lld ranks (the model at its headline "
                     "shape): order=%s chunks=%lld, %d streams, predicted efficiency %.4f there\n",
                (long long)o->nodes, (long long)dd, ch.local_first ? "local-first" : "ring",
                (long long)ch.chunks, cs, ce);
    free(ends);
    free(near);
    free(q);
    return 0;
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
