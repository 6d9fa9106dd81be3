/* cuda_sdpa.c — the sdpa statement on the CUDA backend (docs/cuda-backend.md, "sdpa"): per
 * chunk of (n, h) slices, scores = q·kᵀ as one strided batched cuBLASLt GEMM into a float
 * buffer (hir_cu_gemm), a generated softmax kernel over each score row (scale, additive bias,
 * boolean mask, top-left causal mask, row max and sum, float log-sum-exp), then out = P·v as a
 * second batched GEMM in float and a converting copy into the output. Everything is queued on
 * the statement's stream; temporaries are stream-ordered allocations. The arithmetic follows
 * the CPU reference (runner/cpu/cpu_sdpa.c): operands rounded to float, float accumulation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/cuda/cuda_internal.h"

#define SDPA_BLOCK 256
#define SDPA_TAG 101                 /* kernel cache key tag (not an element-wise spec) */
#define SDPA_CHUNK_FLOATS (1LL << 28) /* at most 1 GiB of scores per chunk */

/* Mirrors the `P` struct of the generated source: 8-byte fields only, so both compilers lay it
 * out alike. Broadcast axes of bias and mask have stride 0. */
typedef struct sm_params {
    float *sc;                   /* [rows, S] scores of the chunk, softmax written in place */
    const void *bias, *mask;
    void *lse;
    long long rows, L, S, H, slice0, causal;
    double scale;
    long long bs[4], ms[4], ls[3];
} sm_params;

/* What the softmax kernel depends on; its bytes are the cache key. */
typedef struct sm_spec {
    int tag;
    int bias, mask, lse;         /* hir_dtype, or -1 when absent */
    int arch;
} sm_spec;

static const char *load_expr(int dt)
{
    switch (dt) {
    case HIR_DT_FLOAT: return "((const float*)%s)[%s]";
    case HIR_DT_DOUBLE: return "(float)((const double*)%s)[%s]";
    case HIR_DT_HALF: return "h2f(((const unsigned short*)%s)[%s])";
    case HIR_DT_BFLOAT: return "b2f(((const unsigned short*)%s)[%s])";
    case HIR_DT_BOOL: case HIR_DT_UINT8: return "(float)((const unsigned char*)%s)[%s]";
    case HIR_DT_INT8: return "(float)((const signed char*)%s)[%s]";
    case HIR_DT_INT32: return "(float)((const int*)%s)[%s]";
    case HIR_DT_INT64: return "(float)((const long long*)%s)[%s]";
    default: return NULL;
    }
}

static const char *store_stmt(int dt)
{
    switch (dt) {
    case HIR_DT_FLOAT: return "((float*)p.lse)[o]=v;";
    case HIR_DT_DOUBLE: return "((double*)p.lse)[o]=(double)v;";
    case HIR_DT_HALF: return "((unsigned short*)p.lse)[o]=f2h(v);";
    case HIR_DT_BFLOAT: return "((unsigned short*)p.lse)[o]=f2b(v);";
    default: return NULL;
    }
}

static int gen_softmax(const void *key, char **out, hir_diag *e)
{
    const sm_spec *sp = key;
    char bias[160] = "0.0f", mask[160] = "1.0f";
    if (sp->bias >= 0)
        snprintf(bias, sizeof bias, load_expr(sp->bias), "p.bias",
                 "n*p.bs[0]+h*p.bs[1]+i*p.bs[2]+j*p.bs[3]");
    if (sp->mask >= 0)
        snprintf(mask, sizeof mask, load_expr(sp->mask), "p.mask",
                 "n*p.ms[0]+h*p.ms[1]+i*p.ms[2]+j*p.ms[3]");
    const char *fmt =
        "%s"
        "struct P{float*sc;const void*bias;const void*mask;void*lse;\n"
        "long long rows,L,S,H,slice0,causal;double scale;long long bs[4],ms[4],ls[3];};\n"
        "HD float wmax(float v){for(int o=16;o>0;o>>=1)v=fmaxf(v,__shfl_xor_sync(0xffffffffu,v,o));return v;}\n"
        "HD double wsum(double v){for(int o=16;o>0;o>>=1)v+=__shfl_xor_sync(0xffffffffu,v,o);return v;}\n"
        "extern \"C\" __global__ void __launch_bounds__(%d) k(P p){\n"
        "__shared__ float smx[32];__shared__ double ssum[32];\n"
        "int lane=threadIdx.x&31,warp=threadIdx.x>>5,nw=(blockDim.x+31)>>5;\n"
        "for(long long r=blockIdx.x;r<p.rows;r+=gridDim.x){\n"
        "long long i=r%%p.L,sl=p.slice0+r/p.L,h=sl%%p.H,n=sl/p.H;\n"
        "float*row=p.sc+r*p.S;float mx=-HIR_INF;\n"
        "for(long long j=threadIdx.x;j<p.S;j+=blockDim.x){\n"
        "float x=row[j]*(float)p.scale+%s;\n"
        "if((p.causal&&j>i)||(%s)==0.0f)x=-HIR_INF;\n"
        "row[j]=x;mx=x>mx?x:mx;}\n"
        "mx=wmax(mx);if(lane==0)smx[warp]=mx;__syncthreads();\n"
        "mx=lane<nw?smx[lane]:-HIR_INF;mx=wmax(mx);\n"
        "double sum=0;\n"
        "for(long long j=threadIdx.x;j<p.S;j+=blockDim.x){float x=expf(row[j]-mx);row[j]=x;sum+=x;}\n"
        "sum=wsum(sum);if(lane==0)ssum[warp]=sum;__syncthreads();\n"
        "sum=lane<nw?ssum[lane]:0.0;sum=wsum(sum);\n"
        "for(long long j=threadIdx.x;j<p.S;j+=blockDim.x)row[j]=(float)((double)row[j]/sum);\n"
        "if(threadIdx.x==0&&p.lse){long long o=n*p.ls[0]+h*p.ls[1]+i*p.ls[2];"
        "float v=(float)((double)mx+log(sum));%s}\n"
        "__syncthreads();}}\n";
    const char *st = sp->lse >= 0 ? store_stmt(sp->lse) : "";
    if (!st || (sp->bias >= 0 && !load_expr(sp->bias)) || (sp->mask >= 0 && !load_expr(sp->mask)))
        return hir_fail(e, "sdpa on CUDA: no kernel for bias %s, mask %s, logsumexp %s",
                             sp->bias >= 0 ? hir_dtype_name((hir_dtype)sp->bias) : "-",
                             sp->mask >= 0 ? hir_dtype_name((hir_dtype)sp->mask) : "-",
                             sp->lse >= 0 ? hir_dtype_name((hir_dtype)sp->lse) : "-"), -1;
    const char *pre = hir_cu_kernel_prelude();
    size_t n = strlen(fmt) + strlen(pre) + strlen(bias) + strlen(mask) + strlen(st) + 64;
    char *src = malloc(n);
    if (!src) return hir_fail(e, "out of host memory"), -1;
    snprintf(src, n, fmt, pre, SDPA_BLOCK, bias, mask, st);
    *out = src;
    return 0;
}

/* ---------------------------------------------------------------- batched views */

/* A 4-d operand as [slices, rows, cols] with one stride between the slices of a group: all
 * N·H slices when the (n, h) axes collapse, else the H slices of one n. */
typedef struct bview {
    hir_view m;                  /* 2-d [rows, cols] of the group's first slice */
    int64_t bstride;             /* elements between slices */
} bview;

static int collapses(const hir_view *v)
{
    return v->shape[0] == 1 || v->shape[1] == 1 || v->stride[0] == v->shape[1] * v->stride[1];
}

static bview group_of(const hir_view *v, int per_n, int64_t n)
{
    bview b;
    b.m = *v;
    b.m.ndim = 2;
    b.m.shape[0] = v->shape[2], b.m.shape[1] = v->shape[3];
    b.m.stride[0] = v->stride[2], b.m.stride[1] = v->stride[3];
    b.m.data = (char *)v->data + n * v->stride[0] * (int64_t)hir_dtype_size(v->dtype);
    b.bstride = per_n || v->shape[1] > 1 ? v->stride[1] : v->stride[0];
    return b;
}

/* slices [b0, b0 + nb) of a group as a 3-d view */
static hir_view chunk3(const bview *b, int64_t b0, int64_t nb)
{
    hir_view v = b->m;
    v.ndim = 3;
    v.shape[0] = nb, v.shape[1] = b->m.shape[0], v.shape[2] = b->m.shape[1];
    v.stride[0] = b->bstride, v.stride[1] = b->m.stride[0], v.stride[2] = b->m.stride[1];
    v.data = (char *)b->m.data + b0 * b->bstride * (int64_t)hir_dtype_size(b->m.dtype);
    return v;
}

/* what cuBLASLt takes: a dense row- or column-major matrix per slice */
static int gemm_dense(const hir_view *m)
{
    int64_t r = m->shape[0], c = m->shape[1];
    return ((c == 1 || m->stride[1] == 1) && (r == 1 || m->stride[0] >= c)) ||
           ((r == 1 || m->stride[0] == 1) && (c == 1 || m->stride[1] >= r));
}

static int gemm_dtype(hir_dtype t)
{
    return t == HIR_DT_FLOAT || t == HIR_DT_HALF || t == HIR_DT_BFLOAT;
}

/* ---------------------------------------------------------------- the statement */

typedef struct sdpa_tmp {
    void *sc, *q, *k, *v, *o;    /* stream-ordered allocations */
} sdpa_tmp;

static int tmp_alloc(hir_stream *s, void **p, size_t bytes, const char *what, hir_diag *e)
{
    int st = cudaMallocAsync(p, bytes ? bytes : 1, s->s);
    if (st != cudaSuccess) {
        *p = NULL;
        return hir_fail(e, "sdpa on CUDA: cudaMallocAsync(%zu bytes) for %s: %s", bytes,
                             what, cudaGetErrorString((cudaError_t)st)), -1;
    }
    return 0;
}

/* a contiguous [nb, rows, cols] view of dtype dt at p */
static hir_view dense3(void *p, hir_dtype dt, int64_t nb, int64_t rows, int64_t cols)
{
    int64_t shape[3] = {nb, rows, cols};
    hir_view v;
    hir_view_init(&v, p, dt, 3, shape);
    return v;
}

/* operand x of the chunk as a GEMM operand of dtype dt: itself when cuBLASLt takes it, else
 * converted into the temporary buf (contiguous) */
static int gemm_operand(hir_backend *be, hir_stream *s, const bview *x, int64_t b0, int64_t nb,
                        hir_dtype dt, void *buf, hir_view *m, int64_t *bstride, hir_diag *e)
{
    hir_view c = chunk3(x, b0, nb);
    if (x->m.dtype == dt && gemm_dense(&x->m)) {
        *m = x->m;
        m->data = c.data;
        *bstride = x->bstride;
        return 0;
    }
    hir_view d = dense3(buf, dt, nb, c.shape[1], c.shape[2]);
    if (hir_cu_copy(be, s, &d, &c, e) < 0) return -1;
    *m = x->m;
    m->dtype = dt;
    m->data = buf;
    m->stride[0] = c.shape[2], m->stride[1] = 1;
    *bstride = c.shape[1] * c.shape[2];
    return 0;
}

typedef struct sdpa_run {
    const hir_sdpa *a;
    bview q, k, v, o;
    hir_dtype qk_dt;             /* the first GEMM's operand dtype */
    int need_q, need_k, need_v;  /* operands converted into temporaries */
    CUfunction softmax;
    int64_t L, S, E, Ev, H;
} sdpa_run;

static void fill_strides(long long *dst, const hir_view *v, int nd)
{
    for (int d = 0; d < nd; d++)
        dst[d] = v->data && v->shape[d] != 1 ? v->stride[d] : 0;
}

/* slices [b0, b0 + nb) of one group, whose first slice is global slice slice0 */
static int run_chunk(hir_backend *be, hir_stream *s, const sdpa_run *r, const sdpa_tmp *t,
                     int64_t slice0, int64_t b0, int64_t nb, hir_diag *e)
{
    hir_cu_backend *cb = hir_cu(be);
    hir_gemm g;
    memset(&g, 0, sizeof g);
    g.batch = nb;
    g.b_trans = 1;
    if (gemm_operand(be, s, &r->q, b0, nb, r->qk_dt, t->q, &g.a, &g.batch_stride_a, e) < 0 ||
        gemm_operand(be, s, &r->k, b0, nb, r->qk_dt, t->k, &g.b, &g.batch_stride_b, e) < 0)
        return -1;
    hir_view sc = dense3(t->sc, HIR_DT_FLOAT, nb, r->L, r->S);
    g.out = sc;
    g.out.ndim = 2;
    g.out.shape[0] = r->L, g.out.shape[1] = r->S;
    g.out.stride[0] = r->S, g.out.stride[1] = 1;
    g.batch_stride_out = r->L * r->S;
    if (hir_cu_gemm(be, s, &g, e) < 0) return -1;

    const hir_sdpa *a = r->a;
    sm_params p;
    memset(&p, 0, sizeof p);
    p.sc = t->sc;
    p.bias = a->has_bias ? a->bias.data : NULL;
    p.mask = a->has_mask ? a->mask.data : NULL;
    p.lse = a->lse.data;
    p.rows = nb * r->L, p.L = r->L, p.S = r->S, p.H = r->H, p.slice0 = slice0 + b0;
    p.causal = a->causal;
    p.scale = a->scale;
    if (a->has_bias) fill_strides(p.bs, &a->bias, 4);
    if (a->has_mask) fill_strides(p.ms, &a->mask, 4);
    if (a->lse.data) fill_strides(p.ls, &a->lse, 3);
    int64_t grid = p.rows, cap = (int64_t)cb->sm_count * 32;
    if (grid > cap) grid = cap;
    if (grid < 1) grid = 1;
    void *args[1] = {&p};
    size_t psize = sizeof p;
    if (hir_cu_launch(cb, r->softmax, (unsigned)grid, 1, 1, SDPA_BLOCK, 1, 1, 0, (CUstream)s->s,
                      args, &psize, 1, e) < 0)
        return -1;

    memset(&g, 0, sizeof g);
    g.batch = nb;
    g.a = sc;
    g.a.ndim = 2;
    g.a.shape[0] = r->L, g.a.shape[1] = r->S;
    g.a.stride[0] = r->S, g.a.stride[1] = 1;
    g.batch_stride_a = r->L * r->S;
    if (gemm_operand(be, s, &r->v, b0, nb, HIR_DT_FLOAT, t->v, &g.b, &g.batch_stride_b, e) < 0)
        return -1;
    hir_view ot = dense3(t->o, HIR_DT_FLOAT, nb, r->L, r->Ev);
    g.out = ot;
    g.out.ndim = 2;
    g.out.shape[0] = r->L, g.out.shape[1] = r->Ev;
    g.out.stride[0] = r->Ev, g.out.stride[1] = 1;
    g.batch_stride_out = r->L * r->Ev;
    if (hir_cu_gemm(be, s, &g, e) < 0) return -1;
    hir_view dst = chunk3(&r->o, b0, nb);
    return hir_cu_copy(be, s, &dst, &ot, e);
}

static int softmax_kernel(hir_cu_backend *cb, const hir_sdpa *a, CUfunction *fn, hir_diag *e)
{
    sm_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.tag = SDPA_TAG;
    sp.bias = a->has_bias ? (int)a->bias.dtype : -1;
    sp.mask = a->has_mask ? (int)a->mask.dtype : -1;
    sp.lse = a->lse.data ? (int)a->lse.dtype : -1;
    sp.arch = cb->cc_major * 10 + cb->cc_minor;
    return hir_cu_kernel_keyed(cb, &sp, sizeof sp, gen_softmax, fn, e);
}

int hir_cu_sdpa(hir_backend *be, hir_stream *s, const hir_sdpa *a, hir_diag *e)
{
    hir_cu_backend *cb = hir_cu(be);
    sdpa_run r;
    memset(&r, 0, sizeof r);
    r.a = a;
    int64_t N = a->q.shape[0];
    r.H = a->q.shape[1], r.L = a->q.shape[2], r.E = a->q.shape[3];
    r.S = a->k.shape[2], r.Ev = a->v.shape[3];
    if (!N || !r.H || !r.L || !r.Ev) return 0;
    if (!r.S) {   /* no keys: every row is empty, 0/0 as in the reference */
        if (hir_cu_fill(be, s, &a->out, NAN, e) < 0) return -1;
        return a->lse.data ? hir_cu_fill(be, s, &a->lse, -INFINITY, e) : 0;
    }
    r.qk_dt = a->q.dtype == a->k.dtype && gemm_dtype(a->q.dtype) ? a->q.dtype : HIR_DT_FLOAT;
    if (softmax_kernel(cb, a, &r.softmax, e) < 0) return -1;
    int per_n = !(collapses(&a->q) && collapses(&a->k) && collapses(&a->v) &&
                  collapses(&a->out));
    int64_t groups = per_n ? N : 1, gsize = per_n ? r.H : N * r.H;
    int64_t per = SDPA_CHUNK_FLOATS / (r.L * r.S > 0 ? r.L * r.S : 1);
    /* HIR_CUDA_SDPA_CHUNK=n: at most n slices per chunk, so that small cases take the
     * several-chunk path too (test/gpu/suite.sh, tier sdpa-cuda) */
    const char *env = getenv("HIR_CUDA_SDPA_CHUNK");
    if (env && atoll(env) > 0 && atoll(env) < per) per = atoll(env);
    if (per < 1) per = 1;
    if (per > gsize) per = gsize;
    sdpa_tmp t;
    memset(&t, 0, sizeof t);
    int rc = -1;
    size_t es = hir_dtype_size(r.qk_dt);
    if (tmp_alloc(s, &t.sc, (size_t)(per * r.L * r.S) * 4, "the scores", e) < 0 ||
        tmp_alloc(s, &t.q, (size_t)(per * r.L * r.E) * es, "q", e) < 0 ||
        tmp_alloc(s, &t.k, (size_t)(per * r.S * r.E) * es, "k", e) < 0 ||
        tmp_alloc(s, &t.v, (size_t)(per * r.S * r.Ev) * 4, "v in float", e) < 0 ||
        tmp_alloc(s, &t.o, (size_t)(per * r.L * r.Ev) * 4, "the float result", e) < 0)
        goto done;
    for (int64_t n = 0; n < groups; n++) {
        r.q = group_of(&a->q, per_n, n);
        r.k = group_of(&a->k, per_n, n);
        r.v = group_of(&a->v, per_n, n);
        r.o = group_of(&a->out, per_n, n);
        for (int64_t b0 = 0; b0 < gsize; b0 += per) {
            int64_t nb = gsize - b0 < per ? gsize - b0 : per;
            if (run_chunk(be, s, &r, &t, n * gsize, b0, nb, e) < 0) goto done;
        }
    }
    rc = 0;
done:
    for (int i = 0; i < 5; i++) {
        void *p = ((void **)&t)[i];
        if (p) cudaFreeAsync(p, s->s);
    }
    return rc;
}

/* ---------------------------------------------------------------- GPU-free check */

int hir_cu_sdpa_codegen_check(int cc_major, int cc_minor, int *ncompiled, hir_diag *e)
{
    hir_cu_backend fake;
    memset(&fake, 0, sizeof fake);
    fake.cc_major = cc_major;
    fake.cc_minor = cc_minor;
    static const int specs[][3] = {
        {-1, -1, -1}, {-1, -1, HIR_DT_FLOAT}, {HIR_DT_FLOAT, -1, HIR_DT_FLOAT},
        {HIR_DT_BFLOAT, HIR_DT_BOOL, HIR_DT_FLOAT}, {HIR_DT_HALF, -1, HIR_DT_HALF},
        {-1, HIR_DT_BOOL, -1}, {HIR_DT_DOUBLE, HIR_DT_INT64, HIR_DT_DOUBLE},
    };
    *ncompiled = 0;
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        sm_spec sp = {SDPA_TAG, specs[i][0], specs[i][1], specs[i][2], cc_major * 10 + cc_minor};
        char *src = NULL;
        if (gen_softmax(&sp, &src, e) < 0) return -1;
        int rc = hir_cu_kernel_compile(&fake, src, NULL, e);
        free(src);
        if (rc < 0) return -1;
        (*ncompiled)++;
    }
    return 0;
}
