/* cuda_moe.c — MoE Dispatch/Combine on the CUDA backend (hostir-2026.md §3.11, top-1 routing;
 * docs/cuda-backend.md, "Dispatch and Combine"): the routing the CPU backend computes
 * (runner/cpu/cpu_comm.c), with the token rows on the GPU. The expert ids come to the host (the
 * sizes of the results depend on them), the host sorts the tokens by expert, a generated kernel
 * gathers the rows in that order, and the rows move in a variable all-to-all:
 *   backend=NCCL  grouped ncclSend/ncclRecv of the per-destination counts, then of the rows
 *                 (cuda_nccl.c; one rank per GPU, as NCCL wants)
 *   backend=CUDA  counts over the bootstrap channel, rows by CUDA IPC: each rank opens its
 *                 peers' result buffers and copies its rows into them, then tells the peer it
 *                 is done (ranks may share a GPU)
 * Combine sends every row back the same way and a kernel scatters it to its source row. */
#include <stdlib.h>
#include <string.h>

#include "runner/cuda/cuda_internal.h"

enum { TAG_MOE_COUNTS = 0x4c20, TAG_MOE_HANDLES = 0x4c21, TAG_MOE_DONE = 0x4c22 };
#define MOE_TAG 102              /* kernel cache key tag (not an element-wise spec) */
#define MOE_BUFS 4

/* ---------------------------------------------------------------- row gather / scatter */

/* Mirrors the `P` struct of the generated source. */
typedef struct mv_params {
    const void *src;
    void *dst;
    const long long *idx;
    long long n, words;          /* rows, words per row */
} mv_params;

typedef struct mv_spec {
    int tag;
    int word;                    /* bytes per word: 1, 2, 4, 8 */
    int scatter;                 /* 0: dst[i] = src[idx[i]]; 1: dst[idx[i]] = src[i] */
    int arch;
} mv_spec;

static int gen_move(const void *key, char **out, hir_diag *e)
{
    const mv_spec *sp = key;
    const char *w = sp->word == 8 ? "unsigned long long" : sp->word == 4 ? "unsigned int"
                    : sp->word == 2 ? "unsigned short" : "unsigned char";
    const char *fmt =
        "typedef %s W;\n"
        "struct P{const void*src;void*dst;const long long*idx;long long n,words;};\n"
        "extern \"C\" __global__ void k(P p){\n"
        "long long tot=p.n*p.words;\n"
        "for(long long t=(long long)blockIdx.x*blockDim.x+threadIdx.x;t<tot;"
        "t+=(long long)gridDim.x*blockDim.x){\n"
        "long long i=t/p.words,w=t%%p.words;\n"
        "%s}}\n";
    const char *body = sp->scatter ? "((W*)p.dst)[p.idx[i]*p.words+w]=((const W*)p.src)[i*p.words+w];"
                                   : "((W*)p.dst)[i*p.words+w]=((const W*)p.src)[p.idx[i]*p.words+w];";
    size_t n = strlen(fmt) + strlen(w) + strlen(body) + 16;
    char *src = malloc(n);
    if (!src) return hir_fail(e, "out of host memory"), -1;
    snprintf(src, n, fmt, w, body);
    *out = src;
    return 0;
}

/* n rows of `row` bytes between contiguous buffers, through device indices idx */
static int move_rows(hir_cu_backend *cb, hir_stream *s, int scatter, const void *src, void *dst,
                     const long long *idx, int64_t n, size_t row, hir_diag *e)
{
    if (!n || !row) return 0;
    mv_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.tag = MOE_TAG;
    /* the widest word that divides the row and both addresses */
    uintptr_t al = (uintptr_t)row | (uintptr_t)src | (uintptr_t)dst;
    sp.word = al % 8 == 0 ? 8 : al % 4 == 0 ? 4 : al % 2 == 0 ? 2 : 1;
    sp.scatter = scatter;
    sp.arch = cb->cc_major * 10 + cb->cc_minor;
    CUfunction fn;
    if (hir_cu_kernel_keyed(cb, &sp, sizeof sp, gen_move, &fn, e) < 0) return -1;
    mv_params p = {src, dst, idx, (long long)n, (long long)(row / (size_t)sp.word)};
    int64_t grid = (n * p.words + 255) / 256, cap = (int64_t)cb->sm_count * 32;
    if (grid > cap) grid = cap;
    if (grid < 1) grid = 1;
    void *args[1] = {&p};
    size_t psize = sizeof p;
    return hir_cu_launch(cb, fn, (unsigned)grid, 1, 1, 256, 1, 1, 0, (CUstream)s->s, args, &psize,
                         1, e);
}

int hir_cu_moe_codegen_check(int cc_major, int cc_minor, int *ncompiled, hir_diag *e)
{
    hir_cu_backend fake;
    memset(&fake, 0, sizeof fake);
    fake.cc_major = cc_major;
    fake.cc_minor = cc_minor;
    *ncompiled = 0;
    for (int w = 1; w <= 8; w *= 2)
        for (int sc = 0; sc < 2; sc++) {
            mv_spec sp = {MOE_TAG, w, sc, cc_major * 10 + cc_minor};
            char *src = NULL;
            if (gen_move(&sp, &src, e) < 0) return -1;
            int rc = hir_cu_kernel_compile(&fake, src, NULL, e);
            free(src);
            if (rc < 0) return -1;
            (*ncompiled)++;
        }
    return 0;
}

/* ---------------------------------------------------------------- helpers */

typedef struct moe_tmp { void *p[8]; int n; } moe_tmp;

static int tmp(hir_stream *s, moe_tmp *t, size_t bytes, void **out, hir_diag *e)
{
    int st = cudaMallocAsync(out, bytes ? bytes : 1, s->s);
    if (st != cudaSuccess) {
        *out = NULL;
        return hir_fail(e, "cudaMallocAsync(%zu bytes) for routing: %s", bytes,
                             cudaGetErrorString((cudaError_t)st)), -1;
    }
    t->p[t->n++] = *out;
    return 0;
}

static void tmp_free(hir_stream *s, moe_tmp *t)
{
    for (int i = 0; i < t->n; i++) cudaFreeAsync(t->p[i], s->s);
    t->n = 0;
}

static int drain(hir_cu_backend *cb, hir_stream *s, hir_diag *e)
{
    return hir_cu_stream_drain(cb, s, "MoE routing: the stream is", hir_cu_now_s(), e);
}

/* v ([n, cols] or [n], any strides) as a contiguous buffer of dtype dt: v itself when it is one */
static int dense(hir_backend *be, hir_stream *s, moe_tmp *t, const hir_view *v, hir_dtype dt,
                 void **out, hir_diag *e)
{
    if (v->dtype == dt && hir_cu_view_contiguous(v)) {
        *out = v->data;
        return 0;
    }
    hir_view d = *v;
    d.dtype = dt;
    if (tmp(s, t, (size_t)hir_cu_numel(v) * hir_dtype_size(dt), &d.data, e) < 0) return -1;
    hir_view_init(&d, d.data, dt, v->ndim, v->shape);
    *out = d.data;
    return hir_cu_copy(be, s, &d, v, e);
}

/* one value per token, [n, 1] or [n] (top-1 routing) */
static int column(const hir_view *v, int64_t n, const char *what, hir_diag *e)
{
    if (!(v->ndim == 1 || (v->ndim == 2 && v->shape[1] == 1)) || v->shape[0] != n)
        return hir_fail(e, "%s must be [%lld, 1] (one value per token: top-1 routing)", what,
                             (long long)n), -1;
    if (!hir_dtype_size(v->dtype))
        return hir_fail(e, "%s: dtype %s cannot be routed", what, hir_dtype_name(v->dtype)), -1;
    return 0;
}

static int transport_ok(hir_backend_kind k, hir_diag *e)
{
    if (k == HIR_BK_NCCL || k == HIR_BK_CUDA) return 0;
    return hir_fail(e, "the cuda backend routes MoE tokens with backend=NCCL or "
                            "backend=CUDA, not backend=%s", hir_backend_kind_name(k)), -1;
}

/* ---------------------------------------------------------------- the all-to-alls */

/* counts: sc[r] rows for rank r; rc[r] comes back from rank r */
static int exchange_counts(hir_cu_backend *cb, hir_stream *s, hir_backend_kind k,
                           const int64_t *sc, int64_t *rc, hir_diag *e)
{
    int size = cb->base.cfg.size, me = cb->base.cfg.rank;
    if (k == HIR_BK_NCCL) {
        moe_tmp t = {{0}, 0};
        void *dsc, *drc;
        int64_t *ones = malloc((size_t)size * sizeof *ones);
        int rc2 = -1;
        if (!ones) return hir_fail(e, "out of host memory"), -1;
        for (int r = 0; r < size; r++) ones[r] = 1;
        size_t row = sizeof(int64_t);
        if (tmp(s, &t, (size_t)size * row, &dsc, e) == 0 &&
            tmp(s, &t, (size_t)size * row, &drc, e) == 0) {
            int st = cudaMemcpyAsync(dsc, sc, (size_t)size * row, cudaMemcpyHostToDevice, s->s);
            const void *sb[1] = {dsc};
            void *rb[1] = {drc};
            if (st != cudaSuccess)
                hir_cu_fail(e, "cudaMemcpyAsync", cudaGetErrorString((cudaError_t)st), __FILE__,
                            __LINE__);
            else if (hir_cu_nccl_alltoallv(cb, s, 1, sb, rb, &row, ones, ones, e) == 0) {
                st = cudaMemcpyAsync(rc, drc, (size_t)size * row, cudaMemcpyDeviceToHost, s->s);
                if (st != cudaSuccess)
                    hir_cu_fail(e, "cudaMemcpyAsync", cudaGetErrorString((cudaError_t)st),
                                __FILE__, __LINE__);
                else
                    rc2 = 0;
            }
        }
        /* the host arrays are read and written by the stream: wait for it in any case */
        if (drain(cb, s, rc2 ? NULL : e) < 0) rc2 = -1;
        tmp_free(s, &t);
        free(ones);
        return rc2;
    }
    rc[me] = sc[me];
    for (int p = 0; p < size; p++)
        if (p != me && hir_boot_exchange(cb->base.cfg.boot, p, TAG_MOE_COUNTS, &sc[p], &rc[p],
                                         sizeof *sc, e) < 0)
            return -1;
    return 0;
}

/* what a receiver tells a sender: where its rows go */
typedef struct ipc_dest {
    cudaIpcMemHandle_t h[MOE_BUFS];
    int64_t first_row;           /* row of the receive buffers where this sender's rows start */
} ipc_dest;

/* CUDA IPC: rows into the peers' receive buffers (each the base of a cudaMalloc allocation),
 * peer by peer in ascending order; a peer's "done" means its rows are in my buffers. */
static int ipc_alltoallv(hir_cu_backend *cb, hir_stream *s, int nbuf, const void *const *sbuf,
                         void *const *rbuf, const size_t *row, const int64_t *sc,
                         const int64_t *rc, hir_diag *e)
{
    int size = cb->base.cfg.size, me = cb->base.cfg.rank;
    int64_t *soff = calloc((size_t)size + 1, sizeof *soff), *roff = calloc((size_t)size + 1, sizeof *roff);
    if (!soff || !roff) {
        free(soff);
        free(roff);
        return hir_fail(e, "out of host memory"), -1;
    }
    for (int r = 0; r < size; r++) {
        soff[r + 1] = soff[r] + sc[r];
        roff[r + 1] = roff[r] + rc[r];
    }
    int rc2 = -1;
    ipc_dest mine;
    memset(&mine, 0, sizeof mine);
    for (int b = 0; b < nbuf; b++)
        if (size > 1) HIR_CK_GOTO(e, cuda, cudaIpcGetMemHandle(&mine.h[b], rbuf[b]), out);
    for (int b = 0; b < nbuf; b++)
        if (sc[me])
            HIR_CK_GOTO(e, cuda, cudaMemcpyAsync((char *)rbuf[b] + roff[me] * row[b],
                                                 (const char *)sbuf[b] + soff[me] * row[b],
                                                 (size_t)sc[me] * row[b],
                                                 cudaMemcpyDeviceToDevice, s->s), out);
    /* the rows to send were made on s */
    if (drain(cb, s, e) < 0) goto out;
    for (int p = 0; p < size; p++) {
        if (p == me) continue;
        ipc_dest theirs;
        mine.first_row = roff[p];
        if (hir_boot_exchange(cb->base.cfg.boot, p, TAG_MOE_HANDLES, &mine, &theirs,
                              sizeof mine, e) < 0)
            goto out;
        void *peer[MOE_BUFS] = {0};
        int bad = 0;
        for (int b = 0; b < nbuf && sc[p] && !bad; b++) {
            int st = cudaIpcOpenMemHandle(&peer[b], theirs.h[b], cudaIpcMemLazyEnablePeerAccess);
            if (st != cudaSuccess) {
                peer[b] = NULL;
                bad = hir_cu_fail(e, "cudaIpcOpenMemHandle", cudaGetErrorString((cudaError_t)st),
                                  __FILE__, __LINE__);
                break;
            }
            st = cudaMemcpyAsync((char *)peer[b] + theirs.first_row * (int64_t)row[b],
                                 (const char *)sbuf[b] + soff[p] * row[b], (size_t)sc[p] * row[b],
                                 cudaMemcpyDeviceToDevice, s->s);
            if (st != cudaSuccess)
                bad = hir_cu_fail(e, "cudaMemcpyAsync", cudaGetErrorString((cudaError_t)st),
                                  __FILE__, __LINE__);
        }
        if (drain(cb, s, bad ? NULL : e) < 0) bad = -1;
        for (int b = 0; b < nbuf; b++)
            if (peer[b]) cudaIpcCloseMemHandle(peer[b]);
        /* a peer that failed says so in its done word, so neither side waits on the other */
        int32_t done = bad ? -1 : 1, their_done = 0;
        if (hir_boot_exchange(cb->base.cfg.boot, p, TAG_MOE_DONE, &done, &their_done,
                              sizeof done, bad ? NULL : e) < 0 || bad)
            goto out;
        if (their_done != 1) {
            hir_fail(e, "rank %d failed to send its MoE rows to this rank", p);
            goto out;
        }
    }
    rc2 = 0;
out:
    free(soff);
    free(roff);
    return rc2;
}

static int alltoallv(hir_cu_backend *cb, hir_stream *s, hir_backend_kind k, int nbuf,
                     const void *const *sbuf, void *const *rbuf, const size_t *row,
                     const int64_t *sc, const int64_t *rc, hir_diag *e)
{
    if (k == HIR_BK_NCCL)
        return hir_cu_nccl_alltoallv(cb, s, nbuf, sbuf, rbuf, row, sc, rc, e);
    return ipc_alltoallv(cb, s, nbuf, sbuf, rbuf, row, sc, rc, e);
}

/* ---------------------------------------------------------------- Dispatch */

static int out_alloc(hir_backend *be, hir_view *v, hir_dtype dt, int ndim, const int64_t *shape,
                     hir_diag *e)
{
    hir_view_init(v, NULL, dt, ndim, shape);
    size_t bytes = hir_view_bytes(v);
    if (bytes == SIZE_MAX) return hir_fail(e, "an output of more than SIZE_MAX bytes"), -1;
    return be->ops->alloc(be, bytes ? bytes : 1, &v->data, e);
}

static void routed_free(hir_backend *be, hir_moe_routed *r)
{
    hir_view *vs[6] = {&r->x, &r->topk_idx, &r->topk_weights, &r->src_idx, &r->send_counts,
                       &r->recv_counts};
    for (int i = 0; i < 6; i++)
        if (vs[i]->data) be->ops->free(be, vs[i]->data);
    memset(r, 0, sizeof *r);
}

/* the host's part of a Dispatch: expert ids in, the stable order by expert and the counts out */
typedef struct moe_plan {
    int64_t *ex, *order, *sidx, *sc, *rc;
} moe_plan;

static void plan_free(moe_plan *p)
{
    free(p->ex);
    free(p->order);
    free(p->sidx);
    free(p->sc);
    free(p->rc);
}

static int plan_make(moe_plan *p, int64_t T, int64_t E, int size, hir_diag *e)
{
    size_t nt = (size_t)(T ? T : 1);
    int64_t per = E / size, *start = calloc((size_t)E + 1, sizeof *start);
    p->order = malloc(nt * sizeof *p->order);
    p->sidx = malloc(nt * sizeof *p->sidx);
    p->sc = calloc((size_t)size, sizeof *p->sc);
    p->rc = calloc((size_t)size, sizeof *p->rc);
    if (!start || !p->order || !p->sidx || !p->sc || !p->rc) {
        free(start);
        return hir_fail(e, "out of host memory"), -1;
    }
    for (int64_t t = 0; t < T; t++) {
        if (p->ex[t] < 0 || p->ex[t] >= E) {
            free(start);
            return hir_fail(e, "topk_idx row %lld holds %lld, not an expert id in [0, %lld)",
                                 (long long)t, (long long)p->ex[t], (long long)E), -1;
        }
        start[p->ex[t] + 1]++;
    }
    for (int64_t k = 0; k < E; k++) start[k + 1] += start[k];
    for (int64_t t = 0; t < T; t++) p->order[start[p->ex[t]]++] = t;
    for (int64_t i = 0; i < T; i++) {
        p->sidx[i] = p->ex[p->order[i]];
        p->sc[p->sidx[i] / per]++;
    }
    free(start);
    return 0;
}

int hir_cu_moe_dispatch(hir_backend *be, hir_stream *s, const hir_moe_dispatch *d,
                        hir_moe_routed *r, hir_diag *e)
{
    hir_cu_backend *cb = hir_cu(be);
    memset(r, 0, sizeof *r);
    int size = be->cfg.size > 0 ? be->cfg.size : 1;
    const hir_view *x = &d->x;
    if (transport_ok(d->transport, e) < 0) return -1;
    if (x->ndim != 2) return hir_fail(e, "in must be [T, H], it has %d axes", x->ndim), -1;
    int64_t T = x->shape[0], H = x->shape[1], E = d->num_experts;
    if (column(&d->topk_idx, T, "topk_idx", e) < 0 ||
        column(&d->topk_weights, T, "topk_weights", e) < 0)
        return -1;
    if (!hir_dtype_is_int(d->topk_idx.dtype))
        return hir_fail(e, "topk_idx is %s, expert ids must be integers",
                             hir_dtype_name(d->topk_idx.dtype)), -1;
    if (E <= 0 || E % size)
        return hir_fail(e, "num_experts=%lld is not a positive multiple of the job's %d "
                                "ranks", (long long)E, size), -1;
    size_t es = hir_dtype_size(x->dtype), ws = hir_dtype_size(d->topk_weights.dtype);
    if (!es) return hir_fail(e, "dtype %s cannot be routed", hir_dtype_name(x->dtype)), -1;
    size_t row = (size_t)H * es;
    moe_tmp t = {{0}, 0};
    moe_plan p;
    memset(&p, 0, sizeof p);
    int rc = -1;
    void *didx, *dx, *dw, *dorder, *sx, *sw, *sidx, *ssrc;
    /* expert ids to the host, as int64 */
    if (dense(be, s, &t, &d->topk_idx, HIR_DT_INT64, &didx, e) < 0) goto out;
    p.ex = malloc((size_t)(T ? T : 1) * sizeof *p.ex);
    if (!p.ex) { hir_fail(e, "out of host memory"); goto out; }
    if (T) HIR_CK_GOTO(e, cuda, cudaMemcpyAsync(p.ex, didx, (size_t)T * sizeof *p.ex,
                                                cudaMemcpyDeviceToHost, s->s), out);
    if (drain(cb, s, e) < 0 || plan_make(&p, T, E, size, e) < 0) goto out;
    /* the rows to send, in expert order; every token's expert id and its source row */
    if (dense(be, s, &t, x, x->dtype, &dx, e) < 0 ||
        dense(be, s, &t, &d->topk_weights, d->topk_weights.dtype, &dw, e) < 0 ||
        tmp(s, &t, (size_t)T * 8, &dorder, e) < 0 || tmp(s, &t, (size_t)T * row, &sx, e) < 0 ||
        tmp(s, &t, (size_t)T * ws, &sw, e) < 0 || tmp(s, &t, (size_t)T * 8, &sidx, e) < 0)
        goto out;
    ssrc = dorder;               /* the source row of the i-th sent token is order[i] */
    if (T) {
        HIR_CK_GOTO(e, cuda, cudaMemcpyAsync(dorder, p.order, (size_t)T * 8,
                                             cudaMemcpyHostToDevice, s->s), out);
        HIR_CK_GOTO(e, cuda, cudaMemcpyAsync(sidx, p.sidx, (size_t)T * 8,
                                             cudaMemcpyHostToDevice, s->s), out);
    }
    if (move_rows(cb, s, 0, dx, sx, dorder, T, row, e) < 0 ||
        move_rows(cb, s, 0, dw, sw, dorder, T, ws, e) < 0)
        goto out;
    if (exchange_counts(cb, s, d->transport, p.sc, p.rc, e) < 0) goto out;
    int64_t R = 0;
    for (int k = 0; k < size; k++) R += p.rc[k];
    int64_t shx[2] = {R, H}, shc[2] = {R, 1}, shn[1] = {size};
    if (out_alloc(be, &r->x, x->dtype, 2, shx, e) < 0 ||
        out_alloc(be, &r->topk_idx, HIR_DT_INT64, 2, shc, e) < 0 ||
        out_alloc(be, &r->topk_weights, d->topk_weights.dtype, 2, shc, e) < 0 ||
        out_alloc(be, &r->src_idx, HIR_DT_INT64, 1, &R, e) < 0 ||
        out_alloc(be, &r->send_counts, HIR_DT_INT64, 1, shn, e) < 0 ||
        out_alloc(be, &r->recv_counts, HIR_DT_INT64, 1, shn, e) < 0)
        goto out;
    {
        const void *sb[MOE_BUFS] = {sx, sidx, sw, ssrc};
        void *rb[MOE_BUFS] = {r->x.data, r->topk_idx.data, r->topk_weights.data, r->src_idx.data};
        size_t rows[MOE_BUFS] = {row, 8, ws, 8};
        if (alltoallv(cb, s, d->transport, MOE_BUFS, sb, rb, rows, p.sc, p.rc, e) < 0) goto out;
    }
    if (be->ops->upload(be, r->send_counts.data, p.sc, (size_t)size * 8, e) < 0 ||
        be->ops->upload(be, r->recv_counts.data, p.rc, (size_t)size * 8, e) < 0)
        goto out;
    rc = 0;
out:
    if (rc) {
        drain(cb, s, NULL);  /* the host arrays may still be read by the stream */
        routed_free(be, r);
    }
    tmp_free(s, &t);
    plan_free(&p);
    return rc;
}

/* ---------------------------------------------------------------- Combine */

static int counts_to_host(hir_backend *be, const hir_view *v, int size, int64_t *out,
                          const char *what, hir_diag *e)
{
    if (v->ndim != 1 || v->shape[0] != size || v->dtype != HIR_DT_INT64 ||
        !hir_cu_view_contiguous(v))
        return hir_fail(e, "the Dispatch's %s are not per rank of this job", what), -1;
    return be->ops->download(be, out, v->data, (size_t)size * 8, e);
}

/* Combine's second half: every row and its source row back to the sender (sc[r] rows to rank
 * r, rc[r] from it), the source rows checked on the host, the rows scattered into c->out */
static int send_back(hir_cu_backend *cb, hir_stream *s, moe_tmp *t, const hir_moe_combine *c,
                     const void *dx, const void *dsrc, const int64_t *sc, const int64_t *rc,
                     int64_t *bsrc, size_t row, hir_diag *e)
{
    hir_backend *be = &cb->base;
    const hir_view *out = &c->out;
    int64_t T = out->shape[0];
    void *bx, *dbsrc, *dout;
    /* the buffers IPC peers write into must be cudaMalloc allocations of their own */
    if (be->ops->alloc(be, (size_t)(T ? T : 1) * (row ? row : 1), &bx, e) < 0) return -1;
    if (be->ops->alloc(be, (size_t)(T ? T : 1) * 8, &dbsrc, e) < 0) {
        be->ops->free(be, bx);
        return -1;
    }
    const void *sb[2] = {dx, dsrc};
    void *rb[2] = {bx, dbsrc};
    size_t rows[2] = {row, 8};
    int st = alltoallv(cb, s, c->transport, 2, sb, rb, rows, sc, rc, e);
    if (st == 0 && T)
        st = cudaMemcpyAsync(bsrc, dbsrc, (size_t)T * 8, cudaMemcpyDeviceToHost, s->s) ==
                     cudaSuccess ? 0 : hir_fail(e, "cudaMemcpyAsync of the source rows failed");
    if (drain(cb, s, st ? NULL : e) < 0) st = -1;
    for (int64_t i = 0; st == 0 && i < T; i++)
        if (bsrc[i] < 0 || bsrc[i] >= T)
            st = hir_fail(e, "a token came back for row %lld of %lld", (long long)bsrc[i],
                               (long long)T);
    if (st == 0) {
        dout = out->data;
        int direct = hir_cu_view_contiguous(out);
        if (!direct) st = tmp(s, t, (size_t)T * row, &dout, e);
        if (st == 0) st = move_rows(cb, s, 1, bx, dout, dbsrc, T, row, e);
        if (st == 0 && !direct) {
            hir_view d;
            hir_view_init(&d, dout, out->dtype, 2, out->shape);
            st = hir_cu_copy(be, s, out, &d, e);
        }
    }
    /* the scatter reads bx and dbsrc: done before they go */
    if (drain(cb, s, st ? NULL : e) < 0) st = -1;
    be->ops->free(be, bx);
    be->ops->free(be, dbsrc);
    return st ? -1 : 0;
}

int hir_cu_moe_combine(hir_backend *be, hir_stream *s, const hir_moe_combine *c, hir_diag *e)
{
    hir_cu_backend *cb = hir_cu(be);
    int size = be->cfg.size > 0 ? be->cfg.size : 1;
    const hir_view *x = &c->x, *out = &c->out;
    if (transport_ok(c->transport, e) < 0) return -1;
    if (x->ndim != 2 || out->ndim != 2)
        return hir_fail(e, "in and out must be [R, H] and [T, H]"), -1;
    int64_t R = x->shape[0], H = x->shape[1], T = out->shape[0];
    if (out->shape[1] != H || out->dtype != x->dtype)
        return hir_fail(e, "out must be [%lld, %lld] %s like the tokens", (long long)T,
                             (long long)H, hir_dtype_name(x->dtype)), -1;
    if (column(&c->src_idx, R, "src_idx", e) < 0) return -1;
    if (!hir_dtype_is_int(c->src_idx.dtype))
        return hir_fail(e, "src_idx must hold integers"), -1;
    size_t row = (size_t)H * hir_dtype_size(x->dtype);
    int64_t *sc = calloc((size_t)size, sizeof *sc), *rcnt = calloc((size_t)size, sizeof *rcnt);
    int64_t *bsrc = malloc((size_t)(T ? T : 1) * sizeof *bsrc);
    moe_tmp t = {{0}, 0};
    int rc = -1;
    void *dx, *dsrc;
    if (!sc || !rcnt || !bsrc) { hir_fail(e, "out of host memory"); goto out; }
    /* back to the senders: what came from rank r returns to it */
    if (counts_to_host(be, &c->recv_counts, size, sc, "token counts", e) < 0 ||
        counts_to_host(be, &c->send_counts, size, rcnt, "token counts", e) < 0)
        goto out;
    int64_t ns = 0, nb = 0;
    for (int k = 0; k < size; k++) {
        ns += sc[k];
        nb += rcnt[k];
    }
    if (ns != R) {
        hir_fail(e, "%lld tokens, the Dispatch received %lld", (long long)R, (long long)ns);
        goto out;
    }
    if (nb != T) {
        hir_fail(e, "out has %lld rows, the Dispatch sent %lld tokens", (long long)T,
                      (long long)nb);
        goto out;
    }
    if (dense(be, s, &t, x, x->dtype, &dx, e) < 0 ||
        dense(be, s, &t, &c->src_idx, HIR_DT_INT64, &dsrc, e) < 0 ||
        send_back(cb, s, &t, c, dx, dsrc, sc, rcnt, bsrc, row, e) < 0)
        goto out;
    rc = 0;
out:
    tmp_free(s, &t);
    free(sc);
    free(rcnt);
    free(bsrc);
    return rc;
}
