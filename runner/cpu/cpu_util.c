/* cpu_util.c — the strided machinery every file of the CPU reference backend is built on: the
 * row walk, row load/store through f64/i64, view checks, copy with casts, and the GEMM scratch
 * buffers. It calls no other file of the backend. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/backend/convert.h"
#include "runner/cpu/cpu_internal.h"

/* ---------------------------------------------------------------- strided machinery */

int cpu_for_rows(int ndim, const int64_t *shape, int nv, const hir_view *const *views,
                 cpu_row_fn fn, void *ctx)
{
    int64_t sh[HIR_MAX_DIMS], st[CPU_MAX_VIEWS][HIR_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == 0)
            return 0;
        if (shape[i] == 1)
            continue;
        /* axis i continues the previous kept axis in every view: walk them as one */
        int merge = nd > 0;
        for (int v = 0; v < nv && merge; v++)
            merge = st[v][nd - 1] == views[v]->stride[i] * shape[i];
        if (merge) {
            sh[nd - 1] *= shape[i];
            for (int v = 0; v < nv; v++)
                st[v][nd - 1] = views[v]->stride[i];
            continue;
        }
        sh[nd] = shape[i];
        for (int v = 0; v < nv; v++)
            st[v][nd] = views[v]->stride[i];
        nd++;
    }
    if (nd == 0) {
        sh[0] = 1;
        for (int v = 0; v < nv; v++)
            st[v][0] = 0;
        nd = 1;
    }
    size_t es[CPU_MAX_VIEWS];
    int64_t inner[CPU_MAX_VIEWS];
    for (int v = 0; v < nv; v++) {
        es[v] = hir_dtype_size(views[v]->dtype);
        inner[v] = st[v][nd - 1];
    }
    int64_t idx[HIR_MAX_DIMS] = {0};
    char *ptr[CPU_MAX_VIEWS];
    for (;;) {
        for (int v = 0; v < nv; v++) {
            int64_t off = 0;
            for (int d = 0; d < nd - 1; d++)
                off += idx[d] * st[v][d];
            ptr[v] = (char *)views[v]->data + off * (int64_t)es[v];
        }
        int rc = fn(ctx, ptr, inner, sh[nd - 1]);
        if (rc)
            return rc;
        int d = nd - 2;
        for (; d >= 0; d--) {
            if (++idx[d] < sh[d])
                break;
            idx[d] = 0;
        }
        if (d < 0)
            return 0;
    }
}

#define ID(x) (x)

#define ROW_STORE(T, EXPR)                                                                 \
    do {                                                                                   \
        T *p_ = (T *)dst;                                                                  \
        for (int64_t i = 0; i < n; i++)                                                    \
            p_[i * stride] = EXPR(src[i]);                                                 \
    } while (0)

void cpu_store_f64(char *dst, hir_dtype t, int64_t stride, const double *src, int64_t n)
{
    switch (t) {
    case HIR_DT_FLOAT: ROW_STORE(float, (float)); break;
    case HIR_DT_DOUBLE: ROW_STORE(double, ID); break;
    case HIR_DT_BFLOAT: ROW_STORE(uint16_t, hir_f64_to_bf16); break;
    case HIR_DT_HALF: ROW_STORE(uint16_t, hir_f64_to_f16); break;
    default: {
        size_t es = hir_dtype_size(t);
        for (int64_t i = 0; i < n; i++)
            hir_store_f64(dst + i * stride * (int64_t)es, t, src[i]);
    }
    }
}

void cpu_store_i64(char *dst, hir_dtype t, int64_t stride, const int64_t *src, int64_t n)
{
    switch (t) {
    case HIR_DT_INT32: ROW_STORE(int32_t, (int32_t)); break;
    case HIR_DT_INT64: case HIR_DT_INDEX: ROW_STORE(int64_t, ID); break;
    default: {
        size_t es = hir_dtype_size(t);
        for (int64_t i = 0; i < n; i++)
            hir_store_i64(dst + i * stride * (int64_t)es, t, src[i]);
    }
    }
}
#undef ROW_STORE
#undef ID

int cpu_check_view(const hir_view *v, const char *what, hir_diag *e)
{
    if (!v)
        return hir_fail(e, "%s: missing view", what);
    if (!hir_dtype_is_storable(v->dtype))
        return hir_fail(e, "%s: dtype %s is not supported by the CPU backend", what,
                             hir_dtype_name(v->dtype));
    if (v->ndim < 0 || v->ndim > HIR_MAX_DIMS)
        return hir_fail(e, "%s: rank %d outside 0..%d", what, v->ndim, HIR_MAX_DIMS);
    if (!v->data && hir_view_numel(v) > 0)
        return hir_fail(e, "%s: null data pointer", what);
    return 0;
}

static int is_intlike(hir_dtype t) { return hir_dtype_is_int(t) || t == HIR_DT_BOOL; }

enum { CHUNK = 512 };

static int copy_row_same(void *ctx, char **p, const int64_t *st, int64_t n)
{
    size_t es = *(size_t *)ctx;
    if (st[0] == 1 && st[1] == 1) {
        memmove(p[0], p[1], (size_t)n * es);
        return 0;
    }
    for (int64_t i = 0; i < n; i++)
        memcpy(p[0] + i * st[0] * (int64_t)es, p[1] + i * st[1] * (int64_t)es, es);
    return 0;
}

typedef struct copy_ctx {
    hir_dtype dt, st;
    int via_int;
} copy_ctx;

static int copy_row_cast(void *ctx, char **p, const int64_t *st, int64_t n)
{
    copy_ctx *c = ctx;
    size_t ed = hir_dtype_size(c->dt), es = hir_dtype_size(c->st);
    /* the bulk converters for the casts that sit on the GEMM/collective paths */
    if (st[0] == 1 && st[1] == 1) {
        if (c->dt == HIR_DT_FLOAT && c->st == HIR_DT_BFLOAT)
            return hir_bf16_to_f32_n((float *)p[0], (const uint16_t *)p[1], (size_t)n), 0;
        if (c->dt == HIR_DT_BFLOAT && c->st == HIR_DT_FLOAT)
            return hir_f32_to_bf16_n((uint16_t *)p[0], (const float *)p[1], (size_t)n), 0;
        if (c->dt == HIR_DT_FLOAT && c->st == HIR_DT_HALF)
            return hir_f16_to_f32_n((float *)p[0], (const uint16_t *)p[1], (size_t)n), 0;
        if (c->dt == HIR_DT_HALF && c->st == HIR_DT_FLOAT)
            return hir_f32_to_f16_n((uint16_t *)p[0], (const float *)p[1], (size_t)n), 0;
    }
    for (int64_t i0 = 0; i0 < n; i0 += CHUNK) {
        int64_t k = n - i0 < CHUNK ? n - i0 : CHUNK;
        const char *s = p[1] + i0 * st[1] * (int64_t)es;
        char *d = p[0] + i0 * st[0] * (int64_t)ed;
        if (c->via_int) {
            int64_t buf[CHUNK];
            hir_load_i64_n(buf, s, c->st, st[1], k);
            cpu_store_i64(d, c->dt, st[0], buf, k);
        } else {
            double buf[CHUNK];
            hir_load_f64_n(buf, s, c->st, st[1], k);
            cpu_store_f64(d, c->dt, st[0], buf, k);
        }
    }
    return 0;
}

int cpu_copy_view(const hir_view *dst, const hir_view *src, hir_diag *e)
{
    if (cpu_check_view(dst, "copy destination", e) || cpu_check_view(src, "copy source", e))
        return -1;
    if (dst->ndim != src->ndim)
        return hir_fail(e, "copy: rank %d destination from rank %d source", dst->ndim,
                             src->ndim);
    for (int i = 0; i < dst->ndim; i++)
        if (dst->shape[i] != src->shape[i])
            return hir_fail(e, "copy: extent %lld of axis %d differs from the source's %lld",
                                 (long long)dst->shape[i], i, (long long)src->shape[i]);
    const hir_view *vs[2] = {dst, src};
    if (dst->dtype == src->dtype) {
        size_t es = hir_dtype_size(dst->dtype);
        return cpu_for_rows(dst->ndim, dst->shape, 2, vs, copy_row_same, &es);
    }
    /* integer to integer goes through int64 so values above 2^53 survive */
    copy_ctx c = {dst->dtype, src->dtype, is_intlike(dst->dtype) && is_intlike(src->dtype)};
    return cpu_for_rows(dst->ndim, dst->shape, 2, vs, copy_row_cast, &c);
}

void *cpu_scratch(hir_cpu_backend *cb, int i, size_t bytes, hir_diag *e)
{
    if (bytes > cb->scratch_cap[i]) {
        void *p = realloc(cb->scratch[i], bytes);
        if (!p) {
            hir_fail(e, "CPU backend: out of memory for %zu bytes of scratch", bytes);
            return NULL;
        }
        cb->scratch[i] = p;
        cb->scratch_cap[i] = bytes;
    }
    return cb->scratch[i];
}
