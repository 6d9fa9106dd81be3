/* ops_gemm.c — the GEMM statements: linear and matmul (batch dimensions broadcast, leading
 * dimensions merged into M where their strides allow) and GroupedMmaOp (one GEMM per group),
 * all through the backend's gemm. Outputs already bound are written in place; unbound
 * outputs get fresh results (hostir-format.md §2.3). */
#include <inttypes.h>
#include <string.h>

#include "runner/interp/ops_internal.h"

/* ---------------------------------------------------------------- GEMM */

/* Merge dims [0, n) of v into one if their strides allow; returns 1 on success. */
static int merge_leading(const hir_view *v, int n, int64_t *size, int64_t *stride)
{
    int64_t sz = 1, st = 0;
    int have = 0;
    for (int d = n - 1; d >= 0; d--) {
        if (v->shape[d] == 1)
            continue;
        if (!have) {
            st = v->stride[d];
            sz = v->shape[d];
            have = 1;
        } else {
            if (v->stride[d] != st * sz)
                return 0;
            sz *= v->shape[d];
        }
    }
    *size = sz;
    *stride = have ? st : 1;
    return 1;
}

/* a 2-D view of rows [M, C] with unit column stride, or materialize it */
static int unit_cols(hir_interp *it, hir_view *v, rt_buf **keep, hir_diag *e)
{
    if (v->ndim >= 1 && (v->stride[v->ndim - 1] == 1 || v->shape[v->ndim - 1] == 1)) {
        v->stride[v->ndim - 1] = 1;
        return 0;
    }
    hir_view c;
    if (interp_materialize(it, v, &c, keep, e))
        return -1;
    *v = c;
    return 0;
}

/* out[lead.., M, N] = A[lead.., M, K] · op(B) (+bias), B 2-D (shared by all lead indices) or
 * batched alike; loops over lead indices that cannot be merged. */
typedef struct gemm_job {
    hir_view a, b, out;       /* a: [L.., M, K]; b: [Lb.., K|N, N|K]; out: [L.., M, N] */
    int nlead;                /* leading dims of a and out (b: same count, or 0) */
    int b_batched;
    const hir_view *bias;
    int b_trans;
} gemm_job;

static int gemm_run(hir_interp *it, const gemm_job *g, hir_diag *e)
{
    int L = g->nlead;
    hir_gemm gm = {0};
    gm.bias = g->bias;
    gm.b_trans = g->b_trans;
    gm.batch = 1;
    int64_t ms, mst, os, ost;
    /* fast path: B shared, A's and out's lead dims merge into M */
    if (!g->b_batched && merge_leading(&g->a, L + 1, &ms, &mst) &&
        merge_leading(&g->out, L + 1, &os, &ost) && ms == os) {
        int nd = g->a.ndim;
        gm.a = g->a;
        gm.a.ndim = 2;
        gm.a.shape[0] = ms;
        gm.a.stride[0] = mst;
        gm.a.shape[1] = g->a.shape[nd - 1];
        gm.a.stride[1] = 1;
        gm.out = g->out;
        gm.out.ndim = 2;
        gm.out.shape[0] = os;
        gm.out.stride[0] = ost;
        gm.out.shape[1] = g->out.shape[nd - 1];
        gm.out.stride[1] = 1;
        gm.b = g->b;
        if (ms == 0 || gm.out.shape[1] == 0)
            return 0;
        if (it->be->ops->gemm(it->be, it->cur, &gm, e))
            return interp_backend_fail(it, e);
        return 0;
    }
    int64_t total = 1;
    for (int d = 0; d < L; d++)
        total *= g->out.shape[d];
    for (int64_t i = 0; i < total; i++) {
        int64_t rem = i;
        hir_view a = g->a, b = g->b, o = g->out;
        char *pa = a.data, *pb = b.data, *po = o.data;
        for (int d = L - 1; d >= 0; d--) {
            int64_t x = rem % g->out.shape[d];
            rem /= g->out.shape[d];
            int64_t xa = g->a.shape[d] == 1 ? 0 : x;
            pa += xa * a.stride[d] * (int64_t)hir_dtype_size(a.dtype);
            po += x * o.stride[d] * (int64_t)hir_dtype_size(o.dtype);
            if (g->b_batched) {
                int64_t xb = g->b.shape[d] == 1 ? 0 : x;
                pb += xb * b.stride[d] * (int64_t)hir_dtype_size(b.dtype);
            }
        }
        gm.a = a;
        gm.a.data = pa;
        gm.a.ndim = 2;
        gm.a.shape[0] = a.shape[L];
        gm.a.stride[0] = a.stride[L];
        gm.a.shape[1] = a.shape[L + 1];
        gm.a.stride[1] = 1;
        gm.out = o;
        gm.out.data = po;
        gm.out.ndim = 2;
        gm.out.shape[0] = o.shape[L];
        gm.out.stride[0] = o.stride[L];
        gm.out.shape[1] = o.shape[L + 1];
        gm.out.stride[1] = 1;
        gm.b = b;
        gm.b.data = pb;
        if (g->b_batched) {
            gm.b.ndim = 2;
            gm.b.shape[0] = b.shape[L];
            gm.b.stride[0] = b.stride[L];
            gm.b.shape[1] = b.shape[L + 1];
            gm.b.stride[1] = 1;
        }
        if (gm.a.shape[0] == 0 || gm.out.shape[1] == 0)
            continue;
        if (it->be->ops->gemm(it->be, it->cur, &gm, e))
            return interp_backend_fail(it, e);
    }
    return 0;
}

/* Runs the job, staging the output through a contiguous temporary when its columns are not
 * unit-stride. */
/* The bytes [*lo, *hi) that v's elements occupy (empty for no elements). */
static void byte_range(const hir_view *v, uintptr_t *lo, uintptr_t *hi)
{
    int64_t a = 0, b = 0;
    *lo = *hi = 0;
    for (int d = 0; d < v->ndim; d++) {
        if (v->shape[d] == 0)
            return;
        int64_t span = (v->shape[d] - 1) * v->stride[d];
        if (span < 0)
            a += span;
        else
            b += span;
    }
    int64_t sz = (int64_t)hir_dtype_size(v->dtype);
    *lo = (uintptr_t)v->data + (uintptr_t)(a * sz);
    *hi = (uintptr_t)v->data + (uintptr_t)((b + 1) * sz);
}

/* Whether the bytes of two views overlap (a GEMM writing its own operand, T0 = linear(T0, T1)). */
static bool views_overlap(const hir_view *x, const hir_view *y)
{
    if (!x || !y || !x->data || !y->data)
        return false;
    uintptr_t xl, xh, yl, yh;
    byte_range(x, &xl, &xh);
    byte_range(y, &yl, &yh);
    return xl < xh && yl < yh && xl < yh && yl < xh;
}

/* The GEMM into g->out; through a temporary when the output is strided (no unit column
 * stride) or when its bytes overlap an operand's: the backend's GEMM reads its operands while
 * it writes, so out = A·W into A itself would read what it wrote (zeros on the CPU backend).
 * The temporary gives the statement its meaning, the product of the operands as they were. */
static int gemm_to(hir_interp *it, gemm_job *g, hir_diag *e)
{
    bool overlap = views_overlap(&g->out, &g->a) || views_overlap(&g->out, &g->b) ||
                   views_overlap(&g->out, g->bias);
    if (!overlap &&
        (g->out.stride[g->out.ndim - 1] == 1 || g->out.shape[g->out.ndim - 1] == 1)) {
        g->out.stride[g->out.ndim - 1] = 1;
        return gemm_run(it, g, e);
    }
    hir_view final = g->out, tmp;
    hir_view_init(&tmp, NULL, final.dtype, final.ndim, final.shape);
    rt_buf *b = interp_buf_new(it, hir_view_bytes(&tmp), e);
    if (!b)
        return -1;
    tmp.data = b->ptr;
    g->out = tmp;
    int rc = gemm_run(it, g, e);
    if (!rc)
        rc = interp_copy_into(it, &final, &tmp, e);
    interp_buf_unref(it, b);
    return rc;
}

/* Squeeze W to [N, K] given K (size-1 dims carry no data; DID dims of size 1 go away). */
static int weight_2d(hir_interp *it, const hir_view *w, int64_t K, hir_view *r, int *has_n,
                     hir_diag *e)
{
    hir_view q = interp_view_squeezed(w);
    *r = q;
    if (q.ndim == 2) {
        *has_n = 1;
        return 0;
    }
    if (q.ndim == 1 || q.ndim == 0) {
        int64_t n = hir_view_numel(&q);
        r->ndim = 2;
        if (n == K) {   /* [K] (or [1, K]): one output feature */
            r->shape[0] = 1;
            r->stride[0] = K;
            r->shape[1] = K;
            r->stride[1] = q.ndim ? q.stride[0] : 1;
            *has_n = w->ndim >= 2;
            return 0;
        }
        if (K == 1) {   /* [N, 1] */
            r->shape[0] = n;
            r->stride[0] = q.ndim ? q.stride[0] : 1;
            r->shape[1] = 1;
            r->stride[1] = 1;
            *has_n = 1;
            return 0;
        }
    }
    char x[96];
    interp_shape_str(w, x, sizeof x);
    return interp_fail(it, e, "weight %s is not [N, K] with K = %" PRId64, x, K);
}

/* The leading dimensions of a weight [*D, N, K] (nvFuser's device-parallel ones): each must be
 * of size 1; the output gets them first. */
static int weight_lead(hir_interp *it, const hir_view *w, int andim, int *n, hir_diag *e)
{
    *n = w->ndim > 2 ? w->ndim - 2 : 0;
    for (int d = 0; d < *n; d++)
        if (w->shape[d] != 1) {
            char x[96];
            interp_shape_str(w, x, sizeof x);
            return interp_fail(it, e, "weight %s: the dimensions before [N, K] must be of size 1"
                               " (device-parallel)", x);
        }
    if (*n + andim > HIR_MAX_DIMS)
        return interp_fail(it, e, "too many dimensions");
    return 0;
}

int ops_linear(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    hir_view a, w, bias;
    rt_buf *keep[4] = {0};
    int rc = -1;
    if (interp_get(it, hir_value_tensor(s->in[0]), &a, e) ||
        interp_get(it, hir_value_tensor(s->in[1]), &w, e))
        return -1;
    int has_bias = s->nin > 2 && hir_value_tensor(s->in[2]);
    if (has_bias && interp_get(it, hir_value_tensor(s->in[2]), &bias, e))
        return -1;
    if (a.ndim == 0)
        return interp_fail(it, e, "the input of linear is a scalar");
    hir_view a2 = a;
    if (a.ndim == 1) {   /* [K] -> [1, K] */
        a2.ndim = 2;
        a2.shape[1] = a.shape[0];
        a2.stride[1] = a.stride[0];
        a2.shape[0] = 1;
        a2.stride[0] = 0;
    }
    int64_t K = a2.shape[a2.ndim - 1];
    /* a weight [*D, N, K] of nvFuser's (its leading axes device-parallel, size 1 on a rank,
     * squeezed as LinearOp::evaluate does): the output has them first, [*D, ..., M, N] */
    int nd_lead;
    if (weight_lead(it, &w, a.ndim, &nd_lead, e))
        return -1;
    hir_view w2;
    int has_n;
    if (weight_2d(it, &w, K, &w2, &has_n, e))
        return -1;
    if (w2.shape[1] != K)
        return interp_fail(it, e, "weight has K = %" PRId64 ", the input %" PRId64, w2.shape[1], K);
    int64_t N = w2.shape[0];
    hir_view b1;
    if (has_bias) {
        b1 = interp_view_squeezed(&bias);
        if (hir_view_numel(&b1) != N || b1.ndim > 1)
            return interp_fail(it, e, "bias of %" PRId64 " elements for N = %" PRId64,
                               hir_view_numel(&b1), N);
        b1.ndim = 1;
        b1.shape[0] = N;
        if (bias.ndim == 0 || hir_view_numel(&b1) == 1)
            b1.stride[0] = 1;
    }
    /* output shape: A's leading dims and M, then N (unless the IR output has no N axis) */
    int nd;
    int64_t oshape[HIR_MAX_DIMS];
    if (interp_rt_shape(it, s->out, &nd, oshape, e))
        return -1;
    /* an output of the input's rank (hir-gen linear-rs) has no dimensions of the weight's */
    if (nd < a.ndim + nd_lead)
        nd_lead = 0;
    nd -= nd_lead;
    int keep_n = has_n || nd > (a.ndim - 1);
    int ond = 0;
    for (int d = 0; d < nd_lead; d++)
        oshape[ond++] = 1;
    for (int d = 0; d + 1 < a.ndim; d++)
        oshape[ond++] = a.shape[d];
    if (keep_n)
        oshape[ond++] = N;
    hir_view o;
    if (interp_out_view(it, s->out, ond, oshape, &o, e))
        return -1;
    /* give the job [L.., M, N] views */
    gemm_job g = {0};
    g.a = a2;
    g.nlead = a2.ndim - 2;
    g.out = a2;
    g.out.dtype = o.dtype;
    g.out.data = o.data;
    {
        hir_view q = o;
        /* reshape o (which may lack the N or M dims) to a2's lead+M and N */
        hir_view want;
        int64_t ws[HIR_MAX_DIMS];
        memcpy(ws, a2.shape, sizeof ws);
        ws[a2.ndim - 1] = N;
        hir_view_init(&want, NULL, o.dtype, a2.ndim, ws);
        if (q.ndim == want.ndim) {
            g.out = q;
        } else {
            /* insert size-1 dims where a2/N has them: walk want dims, take q dims for the
             * non-1 sizes */
            hir_view qs = interp_view_squeezed(&q);
            int k = 0;
            g.out = want;
            g.out.data = q.data;
            for (int d = 0; d < want.ndim; d++) {
                if (want.shape[d] == 1) {
                    g.out.stride[d] = 0;
                } else {
                    if (k >= qs.ndim)
                        goto shape_err;
                    g.out.stride[d] = qs.stride[k++];
                }
            }
            if (k != qs.ndim)
                goto shape_err;
        }
    }
    if (unit_cols(it, &g.a, &keep[0], e) || unit_cols(it, &w2, &keep[1], e))
        goto done;
    if (has_bias && b1.stride[0] != 1) {
        if (interp_materialize(it, &b1, &b1, &keep[2], e))
            goto done;
    }
    g.b = w2;
    g.b_trans = 1;
    g.bias = has_bias ? &b1 : NULL;
    rc = gemm_to(it, &g, e);
    goto done;
shape_err:
    rc = interp_fail(it, e, "cannot lay the linear result out in the bound output");
done:
    for (int i = 0; i < 4; i++)
        interp_buf_unref(it, keep[i]);
    return rc;
}

int ops_matmul(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    hir_view a, b;
    if (interp_get(it, hir_value_tensor(s->in[0]), &a, e) ||
        interp_get(it, hir_value_tensor(s->in[1]), &b, e))
        return -1;
    if (a.ndim == 0 || b.ndim == 0)
        return interp_fail(it, e, "matmul of a scalar");
    hir_view a2 = a, b2 = b;
    int a_vec = a.ndim == 1, b_vec = b.ndim == 1;
    if (a_vec) {
        a2.ndim = 2;
        a2.shape[1] = a.shape[0];
        a2.stride[1] = a.stride[0];
        a2.shape[0] = 1;
        a2.stride[0] = 0;
    }
    if (b_vec) {
        b2.ndim = 2;
        b2.shape[0] = b.shape[0];
        b2.stride[0] = b.stride[0];
        b2.shape[1] = 1;
        b2.stride[1] = 1;
    }
    if (a2.shape[a2.ndim - 1] != b2.shape[b2.ndim - 2]) {
        char x[96], y[96];
        interp_shape_str(&a, x, sizeof x);
        interp_shape_str(&b, y, sizeof y);
        return interp_fail(it, e, "matmul of %s and %s: inner dimensions differ", x, y);
    }
    /* broadcast batch dims to L = max */
    int la = a2.ndim - 2, lb = b2.ndim - 2, L = la > lb ? la : lb;
    if (L + 2 > HIR_MAX_DIMS)
        return interp_fail(it, e, "too many dimensions");
    hir_view A = a2, B = b2;
    A.ndim = B.ndim = L + 2;
    int64_t bshape[HIR_MAX_DIMS];
    for (int d = 0; d < L; d++) {
        int da = d - (L - la), db = d - (L - lb);
        int64_t sa = da >= 0 ? a2.shape[da] : 1, sb = db >= 0 ? b2.shape[db] : 1;
        A.shape[d] = sa;
        A.stride[d] = da >= 0 ? a2.stride[da] : 0;
        B.shape[d] = sb;
        B.stride[d] = db >= 0 ? b2.stride[db] : 0;
        if (sa != sb && sa != 1 && sb != 1)
            return interp_fail(it, e, "batch dimensions %" PRId64 " and %" PRId64
                               " do not broadcast", sa, sb);
        bshape[d] = sa > sb ? sa : sb;
    }
    for (int k = 0; k < 2; k++) {
        A.shape[L + k] = a2.shape[la + k];
        A.stride[L + k] = a2.stride[la + k];
        B.shape[L + k] = b2.shape[lb + k];
        B.stride[L + k] = b2.stride[lb + k];
    }
    int64_t M = A.shape[L], N = B.shape[L + 1];
    int64_t oshape[HIR_MAX_DIMS];
    int ond = 0;
    for (int d = 0; d < L; d++)
        oshape[ond++] = bshape[d];
    if (!a_vec)
        oshape[ond++] = M;
    if (!b_vec)
        oshape[ond++] = N;
    hir_view o;
    if (interp_out_view(it, s->out, ond, oshape, &o, e))
        return -1;
    gemm_job g = {0};
    g.nlead = L;
    g.a = A;
    g.b = B;
    g.out = A;
    g.out.dtype = o.dtype;
    g.out.data = o.data;
    for (int d = 0, k = 0; d < L + 2; d++) {
        int64_t sz = d < L ? bshape[d] : d == L ? M : N;
        bool present = d < L || (d == L && !a_vec) || (d == L + 1 && !b_vec);
        g.out.shape[d] = sz;
        g.out.stride[d] = present ? o.stride[k++] : 0;
    }
    g.b_batched = 0;
    for (int d = 0; d < L; d++)
        if (B.shape[d] != 1)
            g.b_batched = 1;
    if (!g.b_batched) {   /* shared B: a plain 2-D operand */
        g.b.ndim = 2;
        g.b.shape[0] = B.shape[L];
        g.b.stride[0] = B.stride[L];
        g.b.shape[1] = B.shape[L + 1];
        g.b.stride[1] = B.stride[L + 1];
    } else {
        /* the job indexes A and B by the output's lead index: A with size-1 lead dims is
         * broadcast there */
    }
    rt_buf *keep[2] = {0};
    int rc = -1;
    if (unit_cols(it, &g.a, &keep[0], e) || unit_cols(it, &g.b, &keep[1], e))
        goto done;
    rc = gemm_to(it, &g, e);
done:
    interp_buf_unref(it, keep[0]);
    interp_buf_unref(it, keep[1]);
    return rc;
}

/* ---------------------------------------------------------------- grouped matmul */

/* out[M, N] = GroupedMmaOp(mat1 [M, K], mat2 [G, K, N], offsets [G]) as torch._grouped_mm:
 * rows offsets[g-1] (0 for g = 0) up to offsets[g] of mat1 times mat2[g]; rows after the last
 * offset are zero. One GEMM per group through the backend; the offsets are read on the host,
 * so this runs where tensors live in host memory (--device=cpu). The other operand ranks of
 * torch._grouped_mm (2-D x 2-D over K, 3-D x 2-D, 3-D x 3-D) are refused at the statement. */
int ops_grouped_mma(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    if (!(it->be->ops->caps & HIR_CAP_HOST_MEMORY))
        return interp_fail(it, e, "runs on --device=cpu only; the %s backend does not compute it"
                           " yet", it->be->ops->name);
    hir_view a, b, off;
    if (interp_get(it, hir_value_tensor(s->in[0]), &a, e) ||
        interp_get(it, hir_value_tensor(s->in[1]), &b, e) ||
        interp_get(it, hir_value_tensor(s->in[2]), &off, e))
        return -1;
    if (a.ndim != 2 || b.ndim != 3 || off.ndim != 1)
        return interp_fail(it, e, "only mat1 [M, K], mat2 [G, K, N] and offsets [G] are computed"
                           " (got %d-, %d- and %d-dimensional operands)", a.ndim, b.ndim, off.ndim);
    int64_t M = a.shape[0], K = a.shape[1], G = b.shape[0], N = b.shape[2];
    if (b.shape[1] != K || off.shape[0] != G)
        return interp_fail(it, e, "mat1 [%" PRId64 ", %" PRId64 "], mat2 [%" PRId64 ", %" PRId64
                           ", %" PRId64 "] and offsets [%" PRId64 "] do not agree", M, K, G,
                           b.shape[1], N, off.shape[0]);
    int64_t shape[2] = {M, N};
    hir_view o;
    if (interp_out_view(it, s->out, 2, shape, &o, e))
        return -1;
    if (M * N > 0 && it->be->ops->fill(it->be, it->cur, &o, 0.0, e))
        return interp_backend_fail(it, e);
    int64_t start = 0;
    for (int64_t g = 0; g < G; g++) {
        const char *p = interp_elem_ptr(&off, 0, g);
        int64_t end;
        if (off.dtype == HIR_DT_INT32) {
            int32_t x;
            memcpy(&x, p, sizeof x);
            end = x;
        } else if (off.dtype == HIR_DT_INT64 || off.dtype == HIR_DT_INDEX) {
            memcpy(&end, p, sizeof end);
        } else {
            return interp_fail(it, e, "offsets must be int or int64_t, not %s", hir_dtype_name(off.dtype));
        }
        if (end < start || end > M)
            return interp_fail(it, e, "offsets[%" PRId64 "] = %" PRId64 " is outside [%" PRId64
                               ", %" PRId64 "]", g, end, start, M);
        if (end > start && N > 0) {
            gemm_job j = {0};
            j.a = a;
            j.a.shape[0] = end - start;
            j.a.data = interp_elem_ptr(&a, 0, start);
            j.b = b;
            j.b.ndim = 2;
            j.b.data = interp_elem_ptr(&b, 0, g);
            j.b.shape[0] = K;
            j.b.stride[0] = b.stride[1];
            j.b.shape[1] = N;
            j.b.stride[1] = b.stride[2];
            j.out = o;
            j.out.shape[0] = end - start;
            j.out.data = interp_elem_ptr(&o, 0, start);
            rt_buf *keep[2] = {0};
            int rc = unit_cols(it, &j.a, &keep[0], e) || unit_cols(it, &j.b, &keep[1], e) ||
                     gemm_to(it, &j, e) ? -1 : 0;
            interp_buf_unref(it, keep[0]);
            interp_buf_unref(it, keep[1]);
            if (rc)
                return -1;
        }
        start = end;
    }
    return 0;
}
