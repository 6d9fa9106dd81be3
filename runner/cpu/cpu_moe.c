/* cpu_moe.c — MoE token routing of the CPU reference backend (the model group's
 * moe_dispatch and moe_combine). Dispatch/Combine (hostir-2026.md §3.11): an all-to-all of
 * per-rank token counts, then all-to-alls with variable counts of the token rows and their
 * metadata, over the whole job. The checks, the packing by expert and the bookkeeping are
 * here; the all-to-alls themselves are cpu_comm.c's. */
#include <stdlib.h>
#include <string.h>

#include "runner/backend/convert.h"
#include "runner/cpu/cpu_internal.h"

/* row i of a [N, H] view (any strides) to/from a contiguous row of H elements */
static void moe_row_get(char *dst, const hir_view *v, int64_t i)
{
    size_t es = hir_dtype_size(v->dtype);
    const char *src = (const char *)v->data + i * v->stride[0] * (int64_t)es;
    if (v->shape[1] && v->stride[1] == 1) {
        memcpy(dst, src, (size_t)v->shape[1] * es);
        return;
    }
    for (int64_t h = 0; h < v->shape[1]; h++)
        memcpy(dst + h * (int64_t)es, src + h * v->stride[1] * (int64_t)es, es);
}

static void moe_row_put(const hir_view *v, int64_t i, const char *src)
{
    size_t es = hir_dtype_size(v->dtype);
    char *dst = (char *)v->data + i * v->stride[0] * (int64_t)es;
    if (v->shape[1] && v->stride[1] == 1) {
        memcpy(dst, src, (size_t)v->shape[1] * es);
        return;
    }
    for (int64_t h = 0; h < v->shape[1]; h++)
        memcpy(dst + h * v->stride[1] * (int64_t)es, src + h * (int64_t)es, es);
}

/* a [N, 1] or [N] view of one value per token */
static int moe_column(const hir_view *v, int64_t n, const char *what, hir_diag *e)
{
    if (!v->data && n)
        return hir_fail(e, "%s is not bound", what);
    if (!(v->ndim == 1 || (v->ndim == 2 && v->shape[1] == 1)) || v->shape[0] != n)
        return hir_fail(e, "%s must be [%lld, 1] (one value per token: top-1 routing)", what,
                             (long long)n);
    if (!hir_dtype_size(v->dtype))
        return hir_fail(e, "%s: dtype %s cannot be routed", what, hir_dtype_name(v->dtype));
    return 0;
}

/* the value of element i of a column view, as bytes */
static const char *moe_col_ptr(const hir_view *v, int64_t i)
{
    return (const char *)v->data + i * v->stride[0] * (int64_t)hir_dtype_size(v->dtype);
}

static int moe_alloc(hir_backend *be, hir_view *v, hir_dtype dt, int ndim, const int64_t *shape,
                     hir_diag *e)
{
    hir_view_init(v, NULL, dt, ndim, shape);
    size_t bytes = hir_view_bytes(v);
    if (bytes == SIZE_MAX)
        return hir_fail(e, "an output of more than SIZE_MAX bytes");
    return be->ops->alloc(be, bytes ? bytes : 1, &v->data, e);
}

static void moe_routed_free(hir_backend *be, hir_moe_routed *r)
{
    hir_view *vs[6] = {&r->x, &r->topk_idx, &r->topk_weights, &r->src_idx, &r->send_counts,
                       &r->recv_counts};
    for (int i = 0; i < 6; i++)
        if (vs[i]->data)
            be->ops->free(be, vs[i]->data);
    memset(r, 0, sizeof *r);
}

/* A Dispatch's checked figures: T tokens of H elements (row bytes each), E experts, per
 * experts a rank, es and ws the bytes of an element and of a weight. */
typedef struct moe_dims {
    int64_t T, H, E, per;
    size_t es, ws, row;
} moe_dims;

/* The send side of a Dispatch: each token's expert, the tokens in expert order, the experts'
 * starts, the per-rank send and receive counts, and the packed rows, ids, weights and
 * source rows. */
typedef struct moe_send {
    int64_t *ex, *order, *start, *sc, *rcnt, *sidx, *ssrc;
    char *sx, *sw;
} moe_send;

static void moe_send_free(moe_send *b)
{
    free(b->ex);
    free(b->order);
    free(b->start);
    free(b->sc);
    free(b->rcnt);
    free(b->sidx);
    free(b->ssrc);
    free(b->sw);
    free(b->sx);
}

static int moe_send_alloc(moe_send *b, const moe_dims *m, int size, hir_diag *e)
{
    size_t nt = (size_t)(m->T ? m->T : 1);
    b->ex = malloc(nt * sizeof *b->ex);
    b->order = malloc(nt * sizeof *b->order);
    b->start = calloc((size_t)m->E + 1, sizeof *b->start);
    b->sc = calloc((size_t)size, sizeof *b->sc);
    b->rcnt = calloc((size_t)size, sizeof *b->rcnt);
    b->sidx = malloc(nt * sizeof *b->sidx);
    b->ssrc = malloc(nt * sizeof *b->ssrc);
    b->sw = malloc(nt * (m->ws ? m->ws : 1));
    b->sx = (m->T && m->row > SIZE_MAX / (size_t)m->T) ? NULL
                                                       : malloc(nt * (m->row ? m->row : 1));
    if (!b->ex || !b->order || !b->start || !b->sc || !b->rcnt || !b->sidx || !b->ssrc ||
        !b->sw || !b->sx)
        return hir_fail(e, "out of memory");
    return 0;
}

static int moe_dispatch_check(const hir_moe_dispatch *d, int size, moe_dims *m, hir_diag *e)
{
    const hir_view *x = &d->x;
    if (x->ndim != 2)
        return hir_fail(e, "in must be [T, H], it has %d axes", x->ndim);
    m->T = x->shape[0], m->H = x->shape[1];
    if (moe_column(&d->topk_idx, m->T, "topk_idx", e) ||
        moe_column(&d->topk_weights, m->T, "topk_weights", e))
        return -1;
    if (!hir_dtype_is_int(d->topk_idx.dtype))
        return hir_fail(e, "topk_idx is %s, expert ids must be integers",
                             hir_dtype_name(d->topk_idx.dtype));
    m->E = d->num_experts;
    if (m->E <= 0 || m->E % size)
        return hir_fail(e, "num_experts=%lld is not a positive multiple of the "
                             "job's %d ranks", (long long)m->E, size);
    m->per = m->E / size;
    m->es = hir_dtype_size(x->dtype), m->ws = hir_dtype_size(d->topk_weights.dtype);
    if (!m->es)
        return hir_fail(e, "dtype %s cannot be routed", hir_dtype_name(x->dtype));
    m->row = (size_t)m->H * m->es;
    if (m->H && m->row / (size_t)m->H != m->es)
        return hir_fail(e, "a token row does not fit in memory");
    return 0;
}

/* Each token's expert checked, then the tokens packed by a stable counting sort on the
 * expert: the tokens for rank r are contiguous, in rank order; sc counts them. */
static int moe_pack(const hir_moe_dispatch *d, const moe_dims *m, moe_send *b, hir_diag *e)
{
    int64_t T = m->T, E = m->E;
    if (T)
        hir_load_i64_n(b->ex, d->topk_idx.data, d->topk_idx.dtype, d->topk_idx.stride[0], T);
    for (int64_t t = 0; t < T; t++) {
        if (b->ex[t] < 0 || b->ex[t] >= E)
            return hir_fail(e, "topk_idx row %lld holds %lld, not an expert id in "
                                 "[0, %lld)", (long long)t, (long long)b->ex[t], (long long)E);
        b->start[b->ex[t] + 1]++;
    }
    for (int64_t k = 0; k < E; k++)
        b->start[k + 1] += b->start[k];
    for (int64_t t = 0; t < T; t++)
        b->order[b->start[b->ex[t]]++] = t;
    for (int64_t i = 0; i < T; i++) {
        int64_t t = b->order[i];
        b->sc[b->ex[t] / m->per]++;
        moe_row_get(b->sx + (size_t)i * m->row, &d->x, t);
        b->sidx[i] = b->ex[t];
        memcpy(b->sw + (size_t)i * m->ws, moe_col_ptr(&d->topk_weights, t), m->ws);
        b->ssrc[i] = t;
    }
    return 0;
}

/* The counts exchanged, r's outputs allocated, and the rows and their metadata routed. */
static int moe_route(hir_backend *be, int size, const hir_moe_dispatch *d, const moe_dims *m,
                     moe_send *b, hir_moe_routed *r, hir_diag *e)
{
    if (cpu_comm_alltoall_i64(be, size, b->sc, b->rcnt, e))
        return -1;
    int64_t R = 0;
    for (int k = 0; k < size; k++)
        R += b->rcnt[k];
    int64_t shx[2] = {R, m->H}, shc[2] = {R, 1}, shn[1] = {size};
    if (moe_alloc(be, &r->x, d->x.dtype, 2, shx, e) ||
        moe_alloc(be, &r->topk_idx, HIR_DT_INT64, 2, shc, e) ||
        moe_alloc(be, &r->topk_weights, d->topk_weights.dtype, 2, shc, e) ||
        moe_alloc(be, &r->src_idx, HIR_DT_INT64, 1, &R, e) ||
        moe_alloc(be, &r->send_counts, HIR_DT_INT64, 1, shn, e) ||
        moe_alloc(be, &r->recv_counts, HIR_DT_INT64, 1, shn, e))
        return -1;
    memcpy(r->send_counts.data, b->sc, (size_t)size * sizeof *b->sc);
    memcpy(r->recv_counts.data, b->rcnt, (size_t)size * sizeof *b->rcnt);
    if (cpu_comm_alltoallv(be, size, b->sx, b->sc, r->x.data, b->rcnt, m->row, "tokens", e) ||
        cpu_comm_alltoallv(be, size, (char *)b->sidx, b->sc, r->topk_idx.data, b->rcnt, 8,
                           "expert ids", e) ||
        cpu_comm_alltoallv(be, size, b->sw, b->sc, r->topk_weights.data, b->rcnt, m->ws,
                           "weights", e) ||
        cpu_comm_alltoallv(be, size, (char *)b->ssrc, b->sc, r->src_idx.data, b->rcnt, 8,
                           "source rows", e))
        return -1;
    return 0;
}

int cpu_moe_dispatch(hir_backend *be, hir_stream *s, const hir_moe_dispatch *d,
                     hir_moe_routed *r, hir_diag *e)
{
    (void)s;
    memset(r, 0, sizeof *r);
    int size;
    cpu_comm_world_size(be, &size);
    moe_dims m = {0};
    if (moe_dispatch_check(d, size, &m, e))
        return -1;
    moe_send b = {0};
    int rc = -1;
    if (!moe_send_alloc(&b, &m, size, e) && !moe_pack(d, &m, &b, e) &&
        !moe_route(be, size, d, &m, &b, r, e))
        rc = 0;
    if (rc)
        moe_routed_free(be, r);
    moe_send_free(&b);
    return rc;
}

int cpu_moe_combine(hir_backend *be, hir_stream *s, const hir_moe_combine *c, hir_diag *e)
{
    (void)s;
    int size;
    cpu_comm_world_size(be, &size);
    const hir_view *x = &c->x, *out = &c->out;
    if (x->ndim != 2 || out->ndim != 2)
        return hir_fail(e, "in and out must be [R, H] and [T, H]");
    int64_t R = x->shape[0], H = x->shape[1], T = out->shape[0];
    if (out->shape[1] != H || out->dtype != x->dtype)
        return hir_fail(e, "out must be [%lld, %lld] %s like the tokens",
                             (long long)T, (long long)H, hir_dtype_name(x->dtype));
    if (moe_column(&c->src_idx, R, "src_idx", e))
        return -1;
    if (!hir_dtype_is_int(c->src_idx.dtype))
        return hir_fail(e, "src_idx must hold integers");
    if (c->send_counts.ndim != 1 || c->send_counts.shape[0] != size ||
        c->recv_counts.ndim != 1 || c->recv_counts.shape[0] != size)
        return hir_fail(e, "the Dispatch's token counts are not per rank of "
                             "this job");
    size_t es = hir_dtype_size(x->dtype), row = (size_t)H * es;
    int rc = -1;
    int64_t *sc = calloc((size_t)size, sizeof *sc), *rcnt = calloc((size_t)size, sizeof *rcnt);
    int64_t *src = malloc((size_t)(R ? R : 1) * sizeof *src);
    char *sx = (R && row > SIZE_MAX / (size_t)R) ? NULL : malloc((size_t)(R ? R : 1) * (row ? row : 1));
    int64_t *bsrc = NULL;
    char *bx = NULL;
    if (!sc || !rcnt || !src || !sx) {
        hir_fail(e, "out of memory");
        goto out;
    }
    /* back to the senders: what came from rank r returns to it */
    hir_load_i64_n(sc, c->recv_counts.data, c->recv_counts.dtype, c->recv_counts.stride[0], size);
    hir_load_i64_n(rcnt, c->send_counts.data, c->send_counts.dtype, c->send_counts.stride[0], size);
    int64_t ns = 0, nb = 0;
    for (int k = 0; k < size; k++) {
        ns += sc[k];
        nb += rcnt[k];
    }
    if (ns != R) {
        hir_fail(e, "%lld tokens, the Dispatch received %lld", (long long)R,
                      (long long)ns);
        goto out;
    }
    if (nb != T) {
        hir_fail(e, "out has %lld rows, the Dispatch sent %lld tokens",
                      (long long)T, (long long)nb);
        goto out;
    }
    for (int64_t i = 0; i < R; i++)
        moe_row_get(sx + (size_t)i * row, x, i);
    if (R)
        hir_load_i64_n(src, c->src_idx.data, c->src_idx.dtype, c->src_idx.stride[0], R);
    bsrc = malloc((size_t)(T ? T : 1) * sizeof *bsrc);
    bx = malloc((size_t)(T ? T : 1) * (row ? row : 1));
    if (!bsrc || !bx) {
        hir_fail(e, "out of memory");
        goto out;
    }
    if (cpu_comm_alltoallv(be, size, sx, sc, bx, rcnt, row, "tokens", e) ||
        cpu_comm_alltoallv(be, size, (char *)src, sc, (char *)bsrc, rcnt, 8, "source rows", e))
        goto out;
    for (int64_t i = 0; i < T; i++) {
        if (bsrc[i] < 0 || bsrc[i] >= T) {
            hir_fail(e, "a token came back for row %lld of %lld",
                          (long long)bsrc[i], (long long)T);
            goto out;
        }
        moe_row_put(out, bsrc[i], bx + (size_t)i * row);
    }
    rc = 0;
out:
    free(sc);
    free(rcnt);
    free(src);
    free(sx);
    free(bsrc);
    free(bx);
    return rc;
}
