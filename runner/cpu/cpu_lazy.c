/* cpu_lazy.c — deferred GEMMs for randomized checking. A CPU backend created with
 * cfg.defer_gemm_flops > 0 does not compute GEMMs of at least that many FLOP: it records them
 * (operands, output region) and fills the output with NaN. A deferred GEMM is computed after
 * all, in program order, as soon as any later operation reads its output or writes any of its
 * operands or its output; its operand memory is kept alive if the program frees it. What is
 * still deferred at the end is handed to the check (ops->check->take_deferred), which
 * verifies the other backend's result with a randomized product test (cpu_verify.c) instead of
 * an O(MNK) reference product. Every op of the table that touches memory is wrapped (the model
 * group's too), so no access can miss a deferred result. */
#include <malloc.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runner/cpu/cpu_internal.h"

typedef struct range { uintptr_t lo, hi; } range;

/* Bytes a view may touch (an over-approximation for exotic strides); empty when numel is 0. */
static range view_range(const hir_view *v, int64_t batch, int64_t batch_stride)
{
    range r = {0, 0};
    if (!v || !v->data) return r;
    int64_t lo = 0, hi = 0;
    for (int d = 0; d < v->ndim; d++) {
        if (v->shape[d] == 0) return r;
        int64_t ext = (v->shape[d] - 1) * v->stride[d];
        if (ext < 0) lo += ext; else hi += ext;
    }
    if (batch > 1) {
        int64_t ext = (batch - 1) * batch_stride;
        if (ext < 0) lo += ext; else hi += ext;
    }
    int64_t es = (int64_t)hir_dtype_size(v->dtype);
    r.lo = (uintptr_t)v->data + (uintptr_t)(lo * es);
    r.hi = (uintptr_t)v->data + (uintptr_t)((hi + 1) * es);
    return r;
}

static int meets(range a, range b) { return a.lo < a.hi && b.lo < b.hi && a.lo < b.hi && b.lo < a.hi; }

static range def_out(const hir_deferred_gemm *d)
{
    return view_range(&d->g.out, d->g.batch, d->g.batch_stride_out);
}

static int def_reads(const hir_deferred_gemm *d, range w)
{
    return meets(w, view_range(&d->g.a, d->g.batch, d->g.batch_stride_a)) ||
           meets(w, view_range(&d->g.b, d->g.batch, d->g.batch_stride_b)) ||
           (d->has_bias && meets(w, view_range(&d->bias, 1, 0)));
}

static int compute(hir_cpu_backend *cb, hir_deferred_gemm *d, hir_diag *e)
{
    hir_gemm g = d->g;
    g.bias = d->has_bias ? &d->bias : NULL;
    return cpu_gemm(&cb->base, &cb->main, &g, e);
}

/* Compute (and drop) every deferred GEMM whose output meets a read range, or whose operands
 * or output meet a write range. Pending GEMMs never depend on each other (a GEMM reading a
 * pending output made it compute first), so their order does not matter. */
static int touch(hir_cpu_backend *cb, const range *reads, int nr, const range *writes, int nw,
                 hir_diag *e)
{
    for (int i = 0; i < cb->ndef;) {
        hir_deferred_gemm *d = &cb->def[i];
        range o = def_out(d);
        int need = 0;
        for (int k = 0; k < nr && !need; k++) need = meets(reads[k], o);
        for (int k = 0; k < nw && !need; k++) need = meets(writes[k], o) || def_reads(d, writes[k]);
        if (!need) {
            i++;
            continue;
        }
        hir_deferred_gemm x = *d;
        memmove(d, d + 1, (size_t)(cb->ndef - i - 1) * sizeof *d);
        cb->ndef--;
        if (compute(cb, &x, e) < 0) return -1;
    }
    return 0;
}

static range vr(const hir_view *v) { return view_range(v, 1, 0); }
static range opr(const hir_operand *o) { return o && !o->is_scalar ? vr(&o->view) : (range){0, 0}; }
static range bytes_range(const void *p, size_t n) { return (range){(uintptr_t)p, (uintptr_t)p + n}; }

#define BASE(cb) ((cb)->base_ops)

static int lz_upload(hir_backend *be, void *dst, const void *src, size_t n, hir_diag *e)
{
    hir_cpu_backend *cb = cpu_of(be);
    range w = bytes_range(dst, n);
    return touch(cb, NULL, 0, &w, 1, e) < 0 ? -1 : BASE(cb)->upload(be, dst, src, n, e);
}

static int lz_download(hir_backend *be, void *dst, const void *src, size_t n, hir_diag *e)
{
    hir_cpu_backend *cb = cpu_of(be);
    range r = bytes_range(src, n);
    return touch(cb, &r, 1, NULL, 0, e) < 0 ? -1 : BASE(cb)->download(be, dst, src, n, e);
}

static int lz_fill(hir_backend *be, hir_stream *s, const hir_view *out, double v, hir_diag *e)
{
    hir_cpu_backend *cb = cpu_of(be);
    range w = vr(out);
    return touch(cb, NULL, 0, &w, 1, e) < 0 ? -1 : BASE(cb)->fill(be, s, out, v, e);
}

static int lz_copy(hir_backend *be, hir_stream *s, const hir_view *dst, const hir_view *src,
                   hir_diag *e)
{
    hir_cpu_backend *cb = cpu_of(be);
    range r = vr(src), w = vr(dst);
    return touch(cb, &r, 1, &w, 1, e) < 0 ? -1 : BASE(cb)->copy(be, s, dst, src, e);
}

static int lz_unary(hir_backend *be, hir_stream *s, hir_unary_op op, const hir_view *out,
                    const hir_operand *a, hir_diag *e)
{
    hir_cpu_backend *cb = cpu_of(be);
    range r = opr(a), w = vr(out);
    return touch(cb, &r, 1, &w, 1, e) < 0 ? -1 : BASE(cb)->unary(be, s, op, out, a, e);
}

static int lz_binary(hir_backend *be, hir_stream *s, hir_binary_op op, const hir_view *out,
                     const hir_operand *a, const hir_operand *b, hir_diag *e)
{
    hir_cpu_backend *cb = cpu_of(be);
    range r[2] = {opr(a), opr(b)}, w = vr(out);
    return touch(cb, r, 2, &w, 1, e) < 0 ? -1 : BASE(cb)->binary(be, s, op, out, a, b, e);
}

static int lz_ternary(hir_backend *be, hir_stream *s, hir_ternary_op op, const hir_view *out,
                      const hir_operand *a, const hir_operand *b, const hir_operand *c,
                      hir_diag *e)
{
    hir_cpu_backend *cb = cpu_of(be);
    range r[3] = {opr(a), opr(b), opr(c)}, w = vr(out);
    return touch(cb, r, 3, &w, 1, e) < 0 ? -1 : BASE(cb)->ternary(be, s, op, out, a, b, c, e);
}

static int lz_reduce(hir_backend *be, hir_stream *s, hir_reduce_op op, const hir_view *out,
                     const hir_view *in, uint32_t mask, hir_diag *e)
{
    hir_cpu_backend *cb = cpu_of(be);
    range r = vr(in), w = vr(out);
    return touch(cb, &r, 1, &w, 1, e) < 0 ? -1 : BASE(cb)->reduce(be, s, op, out, in, mask, e);
}

static int lz_collective(hir_backend *be, hir_stream *s, const hir_collective *c, hir_work **wk,
                         hir_diag *e)
{
    hir_cpu_backend *cb = cpu_of(be);
    range r = c->input ? vr(c->input) : (range){0, 0};
    range w = c->output ? vr(c->output) : (range){0, 0};
    return touch(cb, &r, 1, &w, 1, e) < 0 ? -1 : BASE(cb)->collective(be, s, c, wk, e);
}

static int lz_p2p_post(hir_backend *be, hir_stream *s, const hir_p2p *p, hir_work **wk,
                       hir_diag *e)
{
    hir_cpu_backend *cb = cpu_of(be);
    range x = vr(&p->buf);
    int rc = p->is_send ? touch(cb, &x, 1, NULL, 0, e) : touch(cb, NULL, 0, &x, 1, e);
    return rc < 0 ? -1 : BASE(cb)->p2p_post(be, s, p, wk, e);
}

static int lz_moe_dispatch(hir_backend *be, hir_stream *s, const hir_moe_dispatch *d,
                           hir_moe_routed *r, hir_diag *e)
{
    hir_cpu_backend *cb = cpu_of(be);
    range rd[3] = {vr(&d->x), vr(&d->topk_idx), vr(&d->topk_weights)};
    return touch(cb, rd, 3, NULL, 0, e) < 0 ? -1 : BASE(cb)->model->moe_dispatch(be, s, d, r, e);
}

static int lz_moe_combine(hir_backend *be, hir_stream *s, const hir_moe_combine *c, hir_diag *e)
{
    hir_cpu_backend *cb = cpu_of(be);
    range rd[4] = {vr(&c->x), vr(&c->src_idx), vr(&c->send_counts), vr(&c->recv_counts)};
    range w = vr(&c->out);
    return touch(cb, rd, 4, &w, 1, e) < 0 ? -1 : BASE(cb)->model->moe_combine(be, s, c, e);
}

/* sdpa reads q, k, v, bias and mask and writes out and lse: a deferred GEMM that produced an
 * operand is computed first, and so is one whose operands or output the results overwrite */
static int lz_sdpa(hir_backend *be, hir_stream *s, const hir_sdpa *a, hir_diag *e)
{
    hir_cpu_backend *cb = cpu_of(be);
    range rd[5] = {vr(&a->q), vr(&a->k), vr(&a->v), a->has_bias ? vr(&a->bias) : (range){0, 0},
                   a->has_mask ? vr(&a->mask) : (range){0, 0}};
    range w[2] = {vr(&a->out), vr(&a->lse)};
    return touch(cb, rd, 5, w, 2, e) < 0 ? -1 : BASE(cb)->model->sdpa(be, s, a, e);
}

/* Freeing memory a deferred GEMM reads: keep it until the backend goes. Freeing a deferred
 * output: that result can no longer be observed, drop it. */
static void lz_free(hir_backend *be, void *ptr)
{
    hir_cpu_backend *cb = cpu_of(be);
    if (!ptr) return;
    range blk = bytes_range(ptr, malloc_usable_size(ptr));
    int keep = 0;
    for (int i = 0; i < cb->ndef;) {
        hir_deferred_gemm *d = &cb->def[i];
        if (def_reads(d, blk)) keep = 1;
        range o = def_out(d);
        if (o.lo >= blk.lo && o.hi <= blk.hi && !def_reads(d, blk)) {
            memmove(d, d + 1, (size_t)(cb->ndef - i - 1) * sizeof *d);
            cb->ndef--;
            continue;
        }
        i++;
    }
    if (!keep) {
        BASE(cb)->free(be, ptr);
        return;
    }
    void **h = realloc(cb->held, (size_t)(cb->nheld + 1) * sizeof *h);
    if (!h) return;          /* out of memory: leak rather than free memory still needed */
    cb->held = h;
    cb->held[cb->nheld++] = ptr;
}

static int lz_gemm(hir_backend *be, hir_stream *s, const hir_gemm *g, hir_diag *e)
{
    hir_cpu_backend *cb = cpu_of(be);
    int64_t batch = g->batch < 1 ? 1 : g->batch;
    range r[3] = {view_range(&g->a, batch, g->batch_stride_a),
                  view_range(&g->b, batch, g->batch_stride_b),
                  g->bias ? vr(g->bias) : (range){0, 0}};
    range w = view_range(&g->out, batch, g->batch_stride_out);
    if (touch(cb, r, 3, &w, 1, e) < 0) return -1;
    if (g->a.ndim != 2 || g->b.ndim != 2 || g->out.ndim != 2)
        return BASE(cb)->gemm(be, s, g, e);
    double m = (double)g->a.shape[0], k = (double)g->a.shape[1];
    double n = (double)(g->b_trans ? g->b.shape[0] : g->b.shape[1]);
    if (2.0 * m * n * k * (double)batch < be->cfg.defer_gemm_flops || k == 0)
        return BASE(cb)->gemm(be, s, g, e);
    if (cb->ndef == cb->cap_def) {
        int nc = cb->cap_def ? 2 * cb->cap_def : 16;
        hir_deferred_gemm *p = realloc(cb->def, (size_t)nc * sizeof *p);
        if (!p) return hir_fail(e, "CPU backend: out of memory deferring a GEMM"), -1;
        cb->def = p;
        cb->cap_def = nc;
    }
    hir_deferred_gemm *d = &cb->def[cb->ndef];
    memset(d, 0, sizeof *d);
    d->g = *g;
    d->g.batch = batch;
    d->g.bias = NULL;
    if (g->bias) {
        d->bias = *g->bias;
        d->has_bias = 1;
    }
    /* NaN where the result would be: anything that reads it without the check notices */
    for (int64_t bi = 0; bi < batch; bi++) {
        hir_view o = g->out;
        o.data = (char *)o.data + bi * g->batch_stride_out * (int64_t)hir_dtype_size(o.dtype);
        if (BASE(cb)->fill(be, s, &o, NAN, e) < 0) return -1;
    }
    cb->ndef++;
    return 0;
}

void cpu_lazy_install(hir_cpu_backend *cb)
{
    cb->base_ops = cb->base.ops;
    cb->lazy_ops = *cb->base.ops;
    cb->lazy_ops.upload = lz_upload;
    cb->lazy_ops.download = lz_download;
    cb->lazy_ops.fill = lz_fill;
    cb->lazy_ops.copy = lz_copy;
    cb->lazy_ops.gemm = lz_gemm;
    cb->lazy_ops.unary = lz_unary;
    cb->lazy_ops.binary = lz_binary;
    cb->lazy_ops.ternary = lz_ternary;
    cb->lazy_ops.reduce = lz_reduce;
    cb->lazy_ops.collective = lz_collective;
    cb->lazy_ops.p2p_post = lz_p2p_post;
    cb->lazy_ops.free = lz_free;
    if (cb->base.ops->model) {
        cb->lazy_model.moe_dispatch = lz_moe_dispatch;
        cb->lazy_model.moe_combine = lz_moe_combine;
        cb->lazy_model.sdpa = lz_sdpa;
        cb->lazy_ops.model = &cb->lazy_model;
    }
    cb->base.ops = &cb->lazy_ops;
}

void cpu_lazy_destroy(hir_cpu_backend *cb)
{
    free(cb->def);
    cb->def = NULL;
    cb->ndef = cb->cap_def = 0;
    for (int i = 0; i < cb->nheld; i++) free(cb->held[i]);
    free(cb->held);
    cb->held = NULL;
    cb->nheld = 0;
}

int cpu_take_deferred(hir_backend *be, hir_deferred_gemm **list, int *n, hir_diag *e)
{
    *list = NULL;
    *n = 0;
    (void)e;
    hir_cpu_backend *cb = cpu_of(be);
    if (!cb->ndef) return 0;
    *list = malloc((size_t)cb->ndef * sizeof **list);
    if (!*list) return hir_fail(e, "out of host memory"), -1;
    memcpy(*list, cb->def, (size_t)cb->ndef * sizeof **list);
    *n = cb->ndef;
    cb->ndef = 0;
    return 0;
}

int cpu_gemm_now(hir_backend *be, const hir_deferred_gemm *d, hir_diag *e)
{
    return compute(cpu_of(be), (hir_deferred_gemm *)d, e);
}
