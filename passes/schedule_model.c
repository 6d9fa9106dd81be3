/* schedule_model.c — bench/scale_model.py's model in C and the gather schedules of
 * --stream-parallel (schedule_model.h). Every figure here is a prediction. */
#include "passes/schedule_model.h"

#include <stdlib.h>

void hir_sm_defaults(hir_sm *mo)
{
    *mo = (hir_sm){
        .m = 32768, .k = 16384, .n = 8192, .elem = 2, .g = 8,
        /* bench/scale_model.py from bench/results/ag_gemm-h200-2026-12-02.json: hir's GEMM at
         * the headline shape on one H200 (measured), and the fixed cost per GEMM fitted to
         * torch F.linear at 1024x4096x4096 (0.0700 ms measured, the roofline's 0.0495 ms) */
        .R = 693.869e12, .t_fixed = 20.459823267112156e-6,
        /* nominal (scale_model.py's NOMINAL) */
        .B_nvl = 450e9, .B_ib = 50e9, .B_hbm = 4800e9, .lat_nvl = 20e-6, .lat_ib = 30e-6,
    };
}

double hir_sm_gemm(const hir_sm *mo, double rows)
{
    double flops = 2.0 * rows * mo->n * mo->k;
    double bytes = mo->elem * (rows * mo->k + mo->n * mo->k + rows * mo->n);
    double a = flops / mo->R, b = bytes / mo->B_hbm;
    return (a > b ? a : b) + mo->t_fixed;
}

static double dmax(double a, double b) { return a > b ? a : b; }

double hir_sm_run(const hir_sm *mo, int npos, int chunks, int streams, const double *near,
                  const double *far, double *gemm_end, bool per_transport)
{
    double t_g = hir_sm_gemm(mo, (double)((int64_t)mo->m / chunks));
    double row_bytes = mo->k * mo->elem, worst = 0.0;
    double *end = gemm_end ? gemm_end : malloc(sizeof(double) * (size_t)chunks);
    if (!end)
        return -1;
    for (int pos = 0; pos < npos; pos++) {
        double *ge = gemm_end ? gemm_end + (size_t)pos * chunks : end;
        double nvl = 0.0, ib = 0.0, prev_end = 0.0;
        for (int i = 0; i < chunks; i++) {
            double nr = near[(size_t)pos * chunks + i], fr = far[(size_t)pos * chunks + i];
            /* the worker stream is free once the GEMM of step i - streams is done; a transport
             * stream once its link's previous transfer is (nvl, ib) */
            double stream_free = i >= streams ? ge[i - streams] : 0.0, ready = stream_free;
            if (per_transport)
                stream_free = 0.0;
            if (nr > 0) {
                nvl = dmax(nvl, stream_free) + mo->lat_nvl + nr * row_bytes / mo->B_nvl;
                ready = dmax(ready, nvl);
            }
            if (fr > 0) {
                ib = dmax(ib, stream_free) + mo->lat_ib + fr * row_bytes / mo->B_ib;
                ready = dmax(ready, ib);
            }
            ge[i] = dmax(prev_end, ready) + t_g;
            prev_end = ge[i];
        }
        worst = dmax(worst, prev_end);
    }
    if (!gemm_end)
        free(end);
    return worst;
}

/* ---- schedules */

static bool pow2(int64_t x) { return x > 0 && !(x & (x - 1)); }

const char *hir_sched_invalid(const hir_sched *s)
{
    if (s->d < 1 || s->nodes < 1 || s->chunks < 1)
        return "the rank, node and chunk counts must be positive";
    if (s->d % s->nodes)
        return "the nodes do not split the ranks into equal blocks";
    if (s->chunks > s->d && s->chunks % s->d)
        return "a chunk count above the number of ranks must be a multiple of it (each shard split into the same number of pieces)";
    if (s->chunks < s->d && s->d % s->chunks)
        return "the chunk count must divide the number of ranks";
    int64_t g = s->d / s->nodes, G = hir_sched_shards(s);
    if (s->local_first && G < g && g % G)
        return "local-first needs the shards of a chunk to divide the ranks of a node";
    if (s->local_first && G > g && G % g)
        return "local-first needs a chunk to hold whole nodes when it is larger than one";
    return NULL;
}

int64_t hir_sched_shards(const hir_sched *s) { return s->chunks >= s->d ? 1 : s->d / s->chunks; }

int64_t hir_sched_pieces(const hir_sched *s) { return s->chunks > s->d ? s->chunks / s->d : 1; }

void hir_sched_normalize(hir_sched *s)
{
    int64_t g = s->d / s->nodes, G = hir_sched_shards(s);
    if (s->local_first && (s->nodes == 1 || G >= g))
        s->local_first = false;
}

/* the block of G shards rank r takes at step c (inv: the rank block whose step c is r's) */
static int64_t block_of(const hir_sched *s, int64_t r, int64_t c, bool inv)
{
    if (s->chunks > s->d) {
        /* a shard split into S pieces: steps c = j*S .. j*S+S-1 take the pieces of the shard
         * of step j of the schedule of one shard a step */
        hir_sched one = {s->d, s->nodes, s->d, s->local_first};
        return block_of(&one, r, c / hir_sched_pieces(s), inv);
    }
    int64_t K = s->chunks, G = s->d / s->chunks;
    if (!s->local_first)
        return inv ? (r / G + K - c) % K : (r / G + c) % K;
    int64_t g = s->d / s->nodes, bn = g / G, N = s->nodes;
    int64_t nr = r / g, w = (r % g) / G;
    if (inv)
        return ((nr + N - c / bn) % N) * bn + (w + bn - c % bn) % bn;
    return ((nr + c / bn) % N) * bn + (w + c % bn) % bn;
}

int64_t hir_sched_recv(const hir_sched *s, int64_t r, int64_t c, int64_t t)
{
    int64_t G = hir_sched_shards(s);
    return block_of(s, r, c, false) * G + (r % G + t) % G;
}

int64_t hir_sched_send(const hir_sched *s, int64_t r, int64_t c, int64_t t)
{
    int64_t G = hir_sched_shards(s);
    return block_of(s, r, c, true) * G + (r % G + G - t) % G;
}

bool hir_sched_transport_streams(const hir_sched *s)
{
    int64_t g = s->d / s->nodes, G = hir_sched_shards(s);
    if (s->nodes <= 1 || s->nodes >= s->d || s->d * s->chunks * G > (int64_t)1 << 22)
        return false;
    /* backend.c's test: every rank, at every step (and piece), receives and sends over one
     * transport */
    for (int64_t r = 0; r < s->d; r++)
        for (int64_t c = 0; c < s->chunks; c++)
            for (int64_t t = 0; t < G; t++) {
                int64_t a = hir_sched_recv(s, r, c, t), b = hir_sched_send(s, r, c, t);
                if ((a / g == r / g) != (b / g == r / g))
                    return false;
            }
    return true;
}

static const int stream_choices[] = {1, 2, 3, 4, 8};

double hir_sched_predict(const hir_sm *mo_in, const hir_sched *s, int streams_in, int *streams)
{
    hir_sm mo = *mo_in;
    mo.g = s->d / s->nodes;
    int64_t K = s->chunks, G = hir_sched_shards(s), g = mo.g;
    int npos = (int)g;
    double *near = calloc((size_t)(npos * K) * 2, sizeof(double));
    if (!near)
        return -1;
    double *far = near + npos * K, rows = mo.m / (double)s->d / (double)hir_sched_pieces(s);
    for (int pos = 0; pos < npos; pos++)
        for (int64_t c = 0; c < K; c++)
            for (int64_t t = 0; t < G; t++) {
                int64_t peer = hir_sched_recv(s, pos, c, t);
                if (peer == pos)
                    continue;
                if (peer / g == pos / g)
                    near[pos * K + c] += rows;
                else
                    far[pos * K + c] += rows;
            }
    double best = -1;
    bool per_transport = hir_sched_transport_streams(s);
    for (int i = 0; i < 5; i++) {
        int st = streams_in ? streams_in : stream_choices[i];
        double t = hir_sm_run(&mo, npos, (int)K, st, near, far, NULL, per_transport);
        if (t > 0 && (best < 0 || t < best * (1 - 1e-12))) {
            best = t;
            if (streams)
                *streams = st;
        }
        if (streams_in)
            break;
    }
    free(near);
    return best;
}

int hir_sched_choose(int64_t d, int64_t nodes, int order_req, int64_t chunks_req, hir_sched *out,
                     int *streams, double *eff)
{
    hir_sm mo;
    hir_sm_defaults(&mo);
    double best = -1;
    int best_s = 4;
    for (int lf = 0; lf < 2; lf++) {
        if (order_req >= 0 && lf != order_req)
            continue;
        /* candidates: powers of two below d, d itself, and 2d, 4d, 8d (shards split in 2, 4, 8) */
        for (int64_t K = chunks_req ? chunks_req : 1; K <= (chunks_req ? chunks_req : 8 * d); K = K < d && K * 2 > d ? d : K * 2) {
            hir_sched s = {d, nodes, K, lf == 1};
            if (chunks_req && K != chunks_req)
                break;
            if ((!chunks_req && !pow2(K) && K % d) || hir_sched_invalid(&s))
                continue;
            hir_sched_normalize(&s);
            int st = 4;
            double t = hir_sched_predict(&mo, &s, 0, &st);
            if (t > 0 && (best < 0 || t < best * (1 - 1e-9))) {
                best = t;
                best_s = st;
                *out = s;
            }
        }
    }
    if (best < 0)
        return -1;
    if (streams)
        *streams = best_s;
    if (eff)
        *eff = hir_sm_gemm(&mo, mo.m) / best;
    return 0;
}
