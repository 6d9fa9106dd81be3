/* interp_ops.c — tensor statements of the interpreter: views (HirAliasSelect, select,
 * ShardByStream, slice, view, broadcast, squeeze), Set (copy, alias, or the allgather a
 * resharding Set stands for), linear/matmul through the backend GEMM, element-wise ops with
 * broadcasting by stride-0 views, and reductions. Outputs already bound are written in place;
 * unbound outputs get fresh buffers (hostir-format.md §2.3). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dialect/intops.h"
#include "runner/interp/interp_internal.h"

/* ---------------------------------------------------------------- view helpers */

static rt_buf *buf_of(hir_interp *it, const hir_tensor *t)
{
    rt_val *v = hir_map_get(&it->tensors, (uintptr_t)t);
    return v ? v->buf : NULL;
}

static void *elem_ptr(const hir_view *v, int dim, int64_t idx)
{
    return (char *)v->data + idx * v->stride[dim] * (int64_t)hir_dtype_size(v->dtype);
}

static void view_drop_dim(hir_view *v, int dim)
{
    for (int d = dim; d + 1 < v->ndim; d++) {
        v->shape[d] = v->shape[d + 1];
        v->stride[d] = v->stride[d + 1];
    }
    v->ndim--;
}

static hir_view view_squeezed(const hir_view *v)
{
    hir_view r = *v;
    r.ndim = 0;
    for (int d = 0; d < v->ndim; d++)
        if (v->shape[d] != 1) {
            r.shape[r.ndim] = v->shape[d];
            r.stride[r.ndim++] = v->stride[d];
        }
    return r;
}

static int shape_eq(const hir_view *a, const hir_view *b)
{
    if (a->ndim != b->ndim)
        return 0;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d])
            return 0;
    return 1;
}

static void shape_str(const hir_view *v, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int d = 0; d < v->ndim && k < n; d++)
        k += (size_t)snprintf(buf + k, n - k, "%s%" PRId64, d ? ", " : "", v->shape[d]);
    if (k < n)
        snprintf(buf + k, n - k, "]");
}

static int be_fail(hir_interp *it, hir_error *e)
{
    char msg[sizeof e->msg];
    snprintf(msg, sizeof msg, "%s", e->msg);
    return interp_fail(it, e, "%s", msg);
}

static int copy_into(hir_interp *it, const hir_view *dst, const hir_view *src, hir_error *e)
{
    hir_view d = *dst, s = *src;
    if (!shape_eq(&d, &s)) {
        d = view_squeezed(dst);
        s = view_squeezed(src);
        if (!shape_eq(&d, &s)) {
            char a[96], b[96];
            shape_str(dst, a, sizeof a);
            shape_str(src, b, sizeof b);
            return interp_fail(it, e, "cannot copy a %s tensor into a %s one", b, a);
        }
    }
    if (hir_view_numel(&d) == 0)
        return 0;
    if (it->be->ops->copy(it->be, it->cur, &d, &s, e))
        return be_fail(it, e);
    return 0;
}

int ops_materialize(hir_interp *it, const hir_view *v, hir_view *out, rt_buf **buf,
                    hir_error *e)
{
    hir_view nv;
    hir_view_init(&nv, NULL, v->dtype, v->ndim, v->shape);
    rt_buf *b = interp_buf_new(it, hir_view_bytes(&nv), e);
    if (!b)
        return -1;
    nv.data = b->ptr;
    if (hir_view_numel(&nv) && it->be->ops->copy(it->be, it->cur, &nv, v, e)) {
        interp_buf_unref(it, b);
        return be_fail(it, e);
    }
    *out = nv;
    *buf = b;
    return 0;
}

/* Output of a computing statement: the bound view, or a fresh buffer of `shape`. */
static int out_view(hir_interp *it, const hir_tensor *t, int ndim, const int64_t *shape,
                    hir_view *v, hir_error *e)
{
    if (interp_bound(it, t, v)) {
        hir_view want;
        hir_view_init(&want, NULL, t->dtype, ndim, shape);
        hir_view a = view_squeezed(v), b = view_squeezed(&want);
        if (!shape_eq(v, &want) && !shape_eq(&a, &b)) {
            char x[96], y[96], tn[32];
            shape_str(v, x, sizeof x);
            shape_str(&want, y, sizeof y);
            return interp_fail(it, e, "output %s is bound to a %s tensor, the result is %s",
                               interp_tname(t, tn, sizeof tn), x, y);
        }
        if (v->dtype != t->dtype)
            return interp_fail(it, e, "output is bound to a tensor of another dtype");
        return 0;
    }
    return interp_bind_new(it, t, ndim, shape, v, e);
}

/* ---------------------------------------------------------------- views */

int ops_alias_select(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    hir_tensor *in = hir_value_tensor(s->in[0]);
    char tn[32];
    hir_view v;
    if (interp_get(it, in, &v, e))
        return -1;
    int pos = interp_axis_pos(it, in, s->u.sel.axis);
    if (pos < 0)
        return interp_fail(it, e, "axis %" PRId64 " is not an axis of %s",
                           s->u.sel.axis->number, interp_tname(in, tn, sizeof tn));
    /* a reduction axis has no runtime dimension: the output is the input unchanged
     * (hostir-2026.md §3.14, the MDE reduce-scatter's selection of the reduced buffer) */
    if (s->u.sel.axis->itype == HIR_IT_REDUCTION)
        return interp_bind(it, s->out, &v, buf_of(it, in), e);
    int a = interp_rt_pos(it, in, pos);
    if (a >= v.ndim)
        return interp_fail(it, e, "axis position %d outside the %d dimensions of %s", a, v.ndim,
                           interp_tname(in, tn, sizeof tn));
    int64_t idx = 0;
    /* a broadcast axis, or an axis of local size 1 (a device axis on this rank), selects
     * index 0 whatever `index =` says (hostir-2026.md §3.14) */
    if (s->u.sel.axis->itype != HIR_IT_BROADCAST && v.shape[a] != 1 &&
        interp_eval(it, s->u.sel.index, &idx, e))
        return -1;
    if (idx < 0 || idx >= v.shape[a])
        return interp_fail(it, e, "index %" PRId64 " outside [0, %" PRId64 ") of axis %d of %s",
                           idx, v.shape[a], a, interp_tname(in, tn, sizeof tn));
    v.data = elem_ptr(&v, a, idx);
    view_drop_dim(&v, a);
    return interp_bind(it, s->out, &v, buf_of(it, in), e);
}

int ops_shard_by_stream(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    hir_tensor *in = hir_value_tensor(s->in[0]);
    hir_view v;
    if (interp_get(it, in, &v, e))
        return -1;
    const hir_tensor *o = s->out;
    int pos = -1;
    for (int i = 0; i < o->nloop; i++)
        if (hir_ptype_is_stream(interp_axes(it, o)[i]->ptype))
            pos = i;
    if (pos < 0)
        return interp_fail(it, e, "the output has no stream-parallel axis");
    int a = interp_rt_pos(it, o, pos);
    if (a >= v.ndim)
        return interp_fail(it, e, "stream axis %d outside the input's %d dimensions", a, v.ndim);
    int64_t k, x;
    const hir_iterdomain *sid = interp_axes(it, o)[pos];
    if (interp_eval(it, sid->extent, &k, e) || interp_eval(it, s->u.stream_index, &x, e))
        return -1;
    if (k <= 0)
        return interp_fail(it, e, "stream axis extent %" PRId64 " is not positive", k);
    /* in the loop of a CollectivePermute ring the stream axis is swizzled: chunk
     * (x + t) % n on the rank at team position t (hostir-2026.md §3.10, rule 2) */
    rt_ring *ring = hir_map_get(&it->swizzled, (uintptr_t)s);
    if (ring && ring->pos >= 0 && x >= 0 &&
        (hir_iop_add(x, ring->pos, &x) || hir_iop_mod(x, ring->n, &x)))
        return interp_fail(it, e, "integer overflow in the swizzled stream index");
    int64_t n = v.shape[a], cs = (n + k - 1) / k;
    if (x < 0 || x >= k)
        return interp_fail(it, e, "stream index %" PRId64 " outside [0, %" PRId64 ")", x, k);
    int64_t start = x * cs < n ? x * cs : n, size = n - start < cs ? n - start : cs;
    v.data = elem_ptr(&v, a, start);
    v.shape[a] = size;
    return interp_bind(it, s->out, &v, buf_of(it, in), e);
}

int ops_slice(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    hir_tensor *in = hir_value_tensor(s->in[0]);
    hir_view v;
    if (interp_get(it, in, &v, e))
        return -1;
    if (s->u.slice.nranges != v.ndim)
        return interp_fail(it, e, "%d ranges for a %d-dimensional input", s->u.slice.nranges,
                           v.ndim);
    for (int d = 0; d < v.ndim; d++) {
        const hir_slice_range *r = &s->u.slice.ranges[d];
        int64_t a = 0, b = v.shape[d], st = 1;
        if ((r->start && interp_eval(it, r->start, &a, e)) ||
            (r->stop && interp_eval(it, r->stop, &b, e)) ||
            (r->step && interp_eval(it, r->step, &st, e)))
            return -1;
        if (st <= 0)
            return interp_fail(it, e, "slice step %" PRId64 " is not positive", st);
        a = a < 0 ? 0 : a > v.shape[d] ? v.shape[d] : a;
        b = b < a ? a : b > v.shape[d] ? v.shape[d] : b;
        v.data = elem_ptr(&v, d, a);
        v.shape[d] = (b - a + st - 1) / st;
        v.stride[d] *= st;
    }
    hir_view o;
    if (interp_bound(it, s->out, &o))
        return copy_into(it, &o, &v, e);
    return interp_bind(it, s->out, &v, buf_of(it, in), e);
}

/* The first input's view and the output's run-time shape: the prologue of the statements that
 * reshape their input (view, expand). */
static int input_and_out_shape(hir_interp *it, const hir_stmt *s, hir_view *v, int *nd,
                               int64_t *shape, hir_error *e)
{
    if (interp_get(it, hir_value_tensor(s->in[0]), v, e))
        return -1;
    return interp_rt_shape(it, s->out, nd, shape, e);
}

int ops_view(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    hir_tensor *in = hir_value_tensor(s->in[0]);
    hir_view v, o;
    int nd;
    int64_t shape[HIR_MAX_DIMS];
    if (input_and_out_shape(it, s, &v, &nd, shape, e))
        return -1;
    hir_view want;
    hir_view_init(&want, NULL, v.dtype, nd, shape);
    if (hir_view_numel(&want) != hir_view_numel(&v))
        return interp_fail(it, e, "cannot view %" PRId64 " elements as %" PRId64,
                           hir_view_numel(&v), hir_view_numel(&want));
    if (interp_bound(it, s->out, &o)) {
        if (!hir_view_is_contiguous(&v)) {
            hir_view c;
            rt_buf *b;
            if (ops_materialize(it, &v, &c, &b, e))
                return -1;
            want.data = c.data;
            int rc = copy_into(it, &o, &want, e);
            interp_buf_unref(it, b);
            return rc;
        }
        want.data = v.data;
        return copy_into(it, &o, &want, e);
    }
    if (hir_view_is_contiguous(&v)) {
        want.data = v.data;
        return interp_bind(it, s->out, &want, buf_of(it, in), e);
    }
    hir_view c;
    rt_buf *b;
    if (ops_materialize(it, &v, &c, &b, e))
        return -1;
    want.data = c.data;
    int rc = interp_bind(it, s->out, &want, b, e);
    interp_buf_unref(it, b);
    return rc;
}

/* broadcast (flags over output axes: true = new axis) and squeeze (flags over input axes:
 * true = removed) */
int ops_flags(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    hir_tensor *in = hir_value_tensor(s->in[0]);
    hir_view v, r;
    if (interp_get(it, in, &v, e))
        return -1;
    r = v;
    r.ndim = 0;
    int nf = s->u.flags.nflags;
    if (s->op == HIR_OP_BROADCAST) {
        int k = 0;
        for (int i = 0; i < nf; i++) {
            if (r.ndim == HIR_MAX_DIMS)
                return interp_fail(it, e, "too many dimensions");
            if (s->u.flags.flags[i]) {
                r.shape[r.ndim] = 1;
                r.stride[r.ndim++] = 0;
            } else {
                if (k >= v.ndim)
                    return interp_fail(it, e, "flags name more input axes than the input has");
                r.shape[r.ndim] = v.shape[k];
                r.stride[r.ndim++] = v.stride[k++];
            }
        }
        if (k != v.ndim)
            return interp_fail(it, e, "flags name %d input axes, the input has %d", k, v.ndim);
    } else {
        if (nf != v.ndim)
            return interp_fail(it, e, "%d flags for a %d-dimensional input", nf, v.ndim);
        for (int i = 0; i < nf; i++) {
            if (s->u.flags.flags[i]) {
                if (v.shape[i] != 1)
                    return interp_fail(it, e, "cannot squeeze axis %d of size %" PRId64, i,
                                       v.shape[i]);
                continue;
            }
            r.shape[r.ndim] = v.shape[i];
            r.stride[r.ndim++] = v.stride[i];
        }
    }
    hir_view o;
    if (interp_bound(it, s->out, &o))
        return copy_into(it, &o, &r, e);
    return interp_bind(it, s->out, &r, buf_of(it, in), e);
}

/* ---------------------------------------------------------------- Set */

/* A Set whose input is sharded on an axis the output is not (same logical position) is the
 * allgather of that axis over the input's mesh; the converse takes the local slice. */
static int set_allgather(hir_interp *it, const hir_stmt *s, const hir_view *in, int j,
                         hir_error *e)
{
    const hir_tensor *tin = hir_value_tensor(s->in[0]);
    const hir_mesh *m = tin->mesh;
    if (m->ndims != 1)
        return interp_fail(it, e, "resharding Set over a %d-D mesh is not supported", m->ndims);
    int n = (int)m->ndevices, my = -1;
    int team[1024];
    if (n > 1024)
        return interp_fail(it, e, "mesh too large");
    for (int i = 0; i < n; i++) {
        team[i] = (int)m->devices[i];
        if (team[i] == it->cfg.rank)
            my = i;
        if (team[i] < 0 || team[i] >= it->cfg.size)
            return interp_fail(it, e, "mesh device %d is not a rank of this job", team[i]);
    }
    if (my < 0)
        return 0;
    hir_shard sh;
    if (hir_interp_shard(it, s->out, &sh, e))
        return -1;
    int64_t oshape[HIR_MAX_DIMS];
    memcpy(oshape, in->shape, sizeof oshape);
    oshape[j] = n;
    hir_view out;
    if (out_view(it, s->out, in->ndim, oshape, &out, e))
        return -1;
    /* gather into [n, in without axis j] (contiguous), then place it with a permuted view */
    hir_view tmp;
    int64_t tshape[HIR_MAX_DIMS];
    tshape[0] = n;
    for (int d = 0, k = 1; d < in->ndim; d++)
        if (d != j)
            tshape[k++] = in->shape[d];
    hir_view_init(&tmp, NULL, in->dtype, in->ndim, tshape);
    rt_buf *b = interp_buf_new(it, hir_view_bytes(&tmp), e);
    if (!b)
        return -1;
    tmp.data = b->ptr;
    hir_collective c = {0};
    c.kind = HIR_COMM_ALLGATHER;
    c.transport = HIR_BK_NCCL;
    c.team = team;
    c.team_size = n;
    c.my_index = my;
    c.root_index = -1;
    c.op = HIR_RED_SUM;
    c.input = in;
    c.output = &tmp;
    c.stmt_id = (uintptr_t)s;
    hir_work *w = NULL;
    int rc = 0;
    if (it->be->ops->collective(it->be, it->cur, &c, &w, e) ||
        (w && it->be->ops->wait(it->be, it->cur, w, e)))
        rc = be_fail(it, e);
    if (!rc) {
        hir_view perm = tmp;
        perm.stride[j] = tmp.stride[0];
        for (int d = 0, k = 1; d < in->ndim; d++)
            if (d != j) {
                perm.shape[d] = tmp.shape[k];
                perm.stride[d] = tmp.stride[k++];
            }
        perm.shape[j] = n;
        rc = copy_into(it, &out, &perm, e);
    }
    interp_buf_unref(it, b);
    return rc;
}

int ops_set(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    hir_tensor *tin = hir_value_tensor(s->in[0]);
    const hir_tensor *tout = s->out;
    hir_view v;
    if (interp_get(it, tin, &v, e))
        return -1;
    if (s->u.ls.permute) {
        hir_view q = view_squeezed(&v);
        if (q.ndim > 1)
            return interp_fail(it, e, "Set.Permute: the permutation is not printed, so it "
                               "cannot be applied to a tensor with %d non-unit axes", q.ndim);
    }
    /* resharding: compare device parallelization position-wise over runtime axes */
    int ki = 0, ko = 0, gather = -1, scatter = -1;
    while (ki < tin->nloop && ko < tout->nloop) {
        const hir_iterdomain *a = interp_axes(it, tin)[ki], *b = interp_axes(it, tout)[ko];
        if (a->itype == HIR_IT_REDUCTION || a->itype == HIR_IT_STRIDE) { ki++; continue; }
        if (b->itype == HIR_IT_REDUCTION || b->itype == HIR_IT_STRIDE) { ko++; continue; }
        int pos = interp_rt_pos(it, tin, ki);
        bool da = hir_ptype_is_device(a->ptype), db = hir_ptype_is_device(b->ptype);
        if (da && !db)
            gather = gather < 0 ? pos : -2;
        else if (!da && db)
            scatter = scatter < 0 ? pos : -2;
        else if (da && db && a->ptype != b->ptype)
            return interp_fail(it, e, "resharding between %s and %s is not supported",
                               hir_ptype_name(a->ptype), hir_ptype_name(b->ptype));
        ki++;
        ko++;
    }
    if (gather == -2 || scatter == -2 || (gather >= 0 && scatter >= 0))
        return interp_fail(it, e, "a Set that reshards more than one axis is not supported");
    if (gather >= 0 && tin->mesh && tin->mesh->ndevices > 1)
        return set_allgather(it, s, &v, gather, e);
    if (scatter >= 0 && tout->mesh) {
        hir_shard sh;
        if (hir_interp_shard(it, tout, &sh, e))
            return -1;
        if (!sh.on_rank)
            return 0;
        int64_t off = sh.offset[scatter];
        if (off >= v.shape[scatter])
            return interp_fail(it, e, "shard %" PRId64 " outside an axis of %" PRId64, off,
                               v.shape[scatter]);
        v.data = elem_ptr(&v, scatter, off);
        v.shape[scatter] = 1;
    }
    hir_view o;
    if (interp_bound(it, tout, &o))
        return copy_into(it, &o, &v, e);
    if (v.dtype != tout->dtype) {   /* a Set that changes dtype is a cast */
        hir_view c;
        if (interp_bind_new(it, tout, v.ndim, v.shape, &c, e))
            return -1;
        return copy_into(it, &c, &v, e);
    }
    return interp_bind(it, tout, &v, buf_of(it, tin), e);
}

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
static int unit_cols(hir_interp *it, hir_view *v, rt_buf **keep, hir_error *e)
{
    if (v->ndim >= 1 && (v->stride[v->ndim - 1] == 1 || v->shape[v->ndim - 1] == 1)) {
        v->stride[v->ndim - 1] = 1;
        return 0;
    }
    hir_view c;
    if (ops_materialize(it, v, &c, keep, e))
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

static int gemm_run(hir_interp *it, const gemm_job *g, hir_error *e)
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
            return be_fail(it, e);
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
            return be_fail(it, e);
    }
    return 0;
}

/* Runs the job, staging the output through a contiguous temporary when its columns are not
 * unit-stride. */
static int gemm_to(hir_interp *it, gemm_job *g, hir_error *e)
{
    if (g->out.stride[g->out.ndim - 1] == 1 || g->out.shape[g->out.ndim - 1] == 1) {
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
        rc = copy_into(it, &final, &tmp, e);
    interp_buf_unref(it, b);
    return rc;
}

/* Squeeze W to [N, K] given K (size-1 dims carry no data; DID dims of size 1 go away). */
static int weight_2d(hir_interp *it, const hir_view *w, int64_t K, hir_view *r, int *has_n,
                     hir_error *e)
{
    hir_view q = view_squeezed(w);
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
    shape_str(w, x, sizeof x);
    return interp_fail(it, e, "weight %s is not [N, K] with K = %" PRId64, x, K);
}

int ops_linear(hir_interp *it, const hir_stmt *s, hir_error *e)
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
    hir_view w2;
    int has_n;
    if (weight_2d(it, &w, K, &w2, &has_n, e))
        return -1;
    if (w2.shape[1] != K)
        return interp_fail(it, e, "weight has K = %" PRId64 ", the input %" PRId64, w2.shape[1], K);
    int64_t N = w2.shape[0];
    hir_view b1;
    if (has_bias) {
        b1 = view_squeezed(&bias);
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
    int keep_n = has_n || nd > (a.ndim - 1);
    int ond = 0;
    for (int d = 0; d + 1 < a.ndim; d++)
        oshape[ond++] = a.shape[d];
    if (keep_n)
        oshape[ond++] = N;
    hir_view o;
    if (out_view(it, s->out, ond, oshape, &o, e))
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
            hir_view qs = view_squeezed(&q);
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
        if (ops_materialize(it, &b1, &b1, &keep[2], e))
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

int ops_matmul(hir_interp *it, const hir_stmt *s, hir_error *e)
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
        shape_str(&a, x, sizeof x);
        shape_str(&b, y, sizeof y);
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
    if (out_view(it, s->out, ond, oshape, &o, e))
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

/* ---------------------------------------------------------------- element-wise */

/* right-align v to ndim dims of `shape`, size-1 dims broadcast with stride 0 */
static int broadcast_to(hir_interp *it, const hir_view *v, int ndim, const int64_t *shape,
                        hir_view *r, hir_error *e)
{
    *r = *v;
    r->ndim = ndim;
    for (int d = 0; d < ndim; d++) {
        int sd = d - (ndim - v->ndim);
        if (sd < 0) {
            r->shape[d] = shape[d];
            r->stride[d] = 0;
            continue;
        }
        if (v->shape[sd] == shape[d]) {
            r->shape[d] = shape[d];
            r->stride[d] = v->stride[sd];
        } else if (v->shape[sd] == 1) {
            r->shape[d] = shape[d];
            r->stride[d] = 0;
        } else {
            return interp_fail(it, e, "operand dimension %d of size %" PRId64
                               " does not broadcast to %" PRId64, sd, v->shape[sd], shape[d]);
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- pre-resolved element-wise */

static int view_eq(const hir_view *a, const hir_view *b)
{
    if (a->data != b->data || a->dtype != b->dtype || a->ndim != b->ndim)
        return 0;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d] || a->stride[d] != b->stride[d])
            return 0;
    return 1;
}

void interp_ew_plans_free(hir_interp *it)
{
    for (size_t i = 0; i < it->ew_plans.cap; i++) {
        rt_ew *c = it->ew_plans.vals[i];
        if (it->ew_plans.keys[i] != UINT64_MAX && c) {
            if (c->plan)
                it->be->ops->plans->free(it->be, c->plan);
            free(c);
        }
    }
    hir_map_fini(&it->ew_plans);
}

/* The statement's plan, when its operands and output are bound exactly as when it was resolved
 * (an unbound output is bound as the resolved run bound it): 1 after queuing it, 0 when there
 * is none or it does not fit (the caller resolves again), -1 on error. */
static int ew_fast(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    rt_ew *c = it->be->ops->plans && !it->cfg.no_resolve ? hir_map_get(&it->ew_plans, (uintptr_t)s) : NULL;
    if (!c)
        return 0;
    for (int i = 0; i < c->nin; i++) {
        hir_tensor *t = hir_value_tensor(s->in[i]);
        hir_view v;
        if (t) {
            if (!interp_bound(it, t, &v) || !view_eq(&v, &c->in[i]))
                return 0;
            continue;
        }
        hir_scalar *sc = hir_value_scalar(s->in[i]);
        int64_t x;
        if (sc->kind != HIR_SC_FLOAT) {
            if (interp_eval(it, sc, &x, e))
                return -1;
            if (x != c->si[i])
                return 0;
        }
    }
    hir_view o;
    /* the operands match, so the result shape is the resolved one: binding an unbound output
     * here binds what the full path would */
    if (!interp_bound(it, s->out, &o) && out_view(it, s->out, c->nd, c->shape, &o, e))
        return -1;
    if (!view_eq(&o, &c->out))
        return 0;
    if (it->be->ops->plans->launch(it->be, it->cur, c->plan, e))
        return be_fail(it, e);
    return 1;
}

/* A kernel of the backend's own (casts and set are copies), and a backend that resolves. */
static int ew_resolvable(hir_interp *it, const hir_stmt *s)
{
    int plain = s->op != HIR_OP_UNARY || (s->u.ew.op >= 0 && s->u.ew.op != HIR_UN_SET);
    return plain && it->be->ops->plans != NULL && !it->cfg.no_resolve;
}

/* Resolve the statement with the backend, keep the plan for later executions, queue it. */
static int ew_resolve_run(hir_interp *it, const hir_stmt *s, const hir_view *views,
                          const hir_operand *ops, const hir_view *raw_out, const hir_view *o,
                          int nd, const int64_t *shape, hir_error *e)
{
    const hir_backend_ops *bo = it->be->ops;
    const hir_operand *ins[3] = {&ops[0], &ops[1], &ops[2]};
    int kn = s->op == HIR_OP_UNARY ? 1 : s->op == HIR_OP_BINARY ? 2 : 3;
    hir_ew_plan *plan = NULL;
    if (bo->plans->resolve(it->be, kn, s->u.ew.op, o, ins, &plan, e))
        return be_fail(it, e);
    rt_ew *c = hir_map_get(&it->ew_plans, (uintptr_t)s);
    if (!c) {
        c = calloc(1, sizeof *c);
        if (!c || hir_map_try_put(&it->ew_plans, (uintptr_t)s, c)) {
            free(c);
            bo->plans->free(it->be, plan);
            return interp_fail(it, e, "out of host memory (keeping a resolved statement)");
        }
    } else if (c->plan) {
        bo->plans->free(it->be, c->plan);
    }
    c->nin = s->nin < 3 ? s->nin : 3;
    for (int i = 0; i < c->nin; i++) {
        memset(&c->in[i], 0, sizeof c->in[i]);
        c->si[i] = 0;
        if (!ops[i].is_scalar)
            c->in[i] = views[i];
        else
            c->si[i] = ops[i].i;
    }
    c->out = *raw_out;
    c->nd = nd;
    memcpy(c->shape, shape, sizeof(int64_t) * (size_t)nd);
    c->plan = plan;
    if (bo->plans->launch(it->be, it->cur, plan, e))
        return be_fail(it, e);
    return 0;
}

/* The operands of an element-wise statement: tensor views (their count in *nt) and scalars. */
static int ew_operands(hir_interp *it, const hir_stmt *s, hir_operand *ops, hir_view *views,
                       int *nt, hir_error *e)
{
    memset(ops, 0, 3 * sizeof *ops);
    *nt = 0;
    for (int i = 0; i < s->nin && i < 3; i++) {
        hir_tensor *t = hir_value_tensor(s->in[i]);
        if (t) {
            if (interp_get(it, t, &views[i], e))
                return -1;
            (*nt)++;
            continue;
        }
        hir_scalar *sc = hir_value_scalar(s->in[i]);
        ops[i].is_scalar = 1;
        if (sc->kind == HIR_SC_FLOAT) {
            ops[i].f = sc->fval;
        } else {
            if (interp_eval(it, sc, &ops[i].i, e))
                return -1;
            ops[i].scalar_is_int = 1;
            ops[i].f = (double)ops[i].i;
        }
    }
    return 0;
}

int ops_elementwise(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    int f = ew_fast(it, s, e);
    if (f)
        return f < 0 ? -1 : 0;
    hir_operand ops[3];
    hir_view views[3];
    int nt = 0, nd = 0;
    int64_t shape[HIR_MAX_DIMS];
    if (ew_operands(it, s, ops, views, &nt, e))
        return -1;
    /* result shape: broadcast of the tensor operands, at the output's rank */
    int ond;
    int64_t oshape[HIR_MAX_DIMS];
    int known = !interp_rt_shape(it, s->out, &ond, oshape, e);
    if (!known) {
        /* symbolic output extents: take the operands' shapes */
        ond = 0;
        for (int i = 0; i < s->nin; i++)
            if (!ops[i].is_scalar && views[i].ndim > ond)
                ond = views[i].ndim;
        for (int d = 0; d < ond; d++)
            oshape[d] = 1;
    }
    nd = ond;
    for (int d = 0; d < nd; d++)
        shape[d] = 1;
    for (int i = 0; i < s->nin && i < 3; i++) {
        if (ops[i].is_scalar)
            continue;
        if (views[i].ndim > nd)
            return interp_fail(it, e, "operand %d has more dimensions than the output", i);
        for (int d = 0; d < views[i].ndim; d++) {
            int od = d + nd - views[i].ndim;
            if (views[i].shape[d] != 1)
                shape[od] = views[i].shape[d];
        }
    }
    if (!nt)
        memcpy(shape, oshape, sizeof shape);
    hir_view o;
    if (out_view(it, s->out, nd, shape, &o, e))
        return -1;
    hir_view raw_out = o;
    if (o.ndim != nd) {   /* bound output with other unit dims: align by squeezing */
        hir_view q = view_squeezed(&o);
        hir_view w;
        hir_view_init(&w, o.data, o.dtype, nd, shape);
        int k = 0;
        for (int d = 0; d < nd; d++)
            w.stride[d] = shape[d] == 1 ? 0 : q.stride[k++];
        o = w;
    }
    for (int i = 0; i < s->nin && i < 3; i++)
        if (!ops[i].is_scalar && broadcast_to(it, &views[i], nd, shape, &ops[i].view, e))
            return -1;
    if (hir_view_numel(&o) == 0)
        return 0;
    if (nt && known && ew_resolvable(it, s))
        return ew_resolve_run(it, s, views, ops, &raw_out, &o, nd, shape, e);
    int rc = 0;
    if (s->op == HIR_OP_UNARY) {
        if (s->u.ew.op < 0 && !hir_ewise_is_cast(s->u.ew.fn))
            return interp_fail(it, e, "has no run-time meaning on the host: not one of"
                               " nvFuser's unary operators or casts that hir knows");
        if (s->u.ew.op < 0 || s->u.ew.op == HIR_UN_SET) {   /* casts and set are copies */
            if (ops[0].is_scalar)
                rc = it->be->ops->fill(it->be, it->cur, &o, ops[0].f, e);
            else
                rc = it->be->ops->copy(it->be, it->cur, &o, &ops[0].view, e);
        } else {
            rc = it->be->ops->unary(it->be, it->cur, (hir_unary_op)s->u.ew.op, &o, &ops[0], e);
        }
    } else if (s->op == HIR_OP_BINARY) {
        rc = it->be->ops->binary(it->be, it->cur, (hir_binary_op)s->u.ew.op, &o, &ops[0],
                                 &ops[1], e);
    } else {
        rc = it->be->ops->ternary(it->be, it->cur, (hir_ternary_op)s->u.ew.op, &o, &ops[0],
                                  &ops[1], &ops[2], e);
    }
    return rc ? be_fail(it, e) : 0;
}

/* ---------------------------------------------------------------- expand, full */

/* out = expand(in): in's size-1 axes stretched to out's extents (an expanded broadcast
 * bS{1 ex N} has N at run time). Like at::expand, an unbound output is bound to a view of
 * the input with stride 0 on the stretched axes; a bound one receives a copy. */
int ops_expand(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    hir_tensor *in = hir_value_tensor(s->in[0]);
    hir_view v, o, x;
    int nd;
    int64_t shape[HIR_MAX_DIMS];
    if (input_and_out_shape(it, s, &v, &nd, shape, e))
        return -1;
    if (nd < v.ndim)
        return interp_fail(it, e, "expand to %d axes from a tensor of %d", nd, v.ndim);
    if (broadcast_to(it, &v, nd, shape, &x, e))
        return -1;
    if (interp_bound(it, s->out, &o))
        return copy_into(it, &o, &x, e);
    return interp_bind(it, s->out, &x, buf_of(it, in), e);
}

/* out = full({extents}, value): a new tensor of out's shape filled with value (the extents
 * printed must agree with out's) */
int ops_full(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    int nd;
    int64_t shape[HIR_MAX_DIMS];
    if (interp_rt_shape(it, s->out, &nd, shape, e))
        return -1;
    int next = s->nin - 1;
    if (next != nd)
        return interp_fail(it, e, "gives %d extents for a tensor of %d axes", next, nd);
    for (int i = 0; i < next; i++) {
        int64_t x;
        if (interp_eval(it, hir_value_scalar(s->in[i]), &x, e))
            return -1;
        if (x != shape[i])
            return interp_fail(it, e, "extent %d is %" PRId64 " but the output's axis is %" PRId64,
                               i, x, shape[i]);
    }
    const hir_scalar *val = hir_value_scalar(s->in[next]);
    double f;
    if (val->kind == HIR_SC_FLOAT) {
        f = val->fval;
    } else {
        int64_t k;
        if (interp_eval(it, val, &k, e))
            return -1;
        f = (double)k;
    }
    hir_view o;
    if (out_view(it, s->out, nd, shape, &o, e))
        return -1;
    if (hir_view_numel(&o) == 0)
        return 0;
    return it->be->ops->fill(it->be, it->cur, &o, f, e) ? be_fail(it, e) : 0;
}

/* ---------------------------------------------------------------- grouped matmul */

/* out[M, N] = GroupedMmaOp(mat1 [M, K], mat2 [G, K, N], offsets [G]) as torch._grouped_mm:
 * rows offsets[g-1] (0 for g = 0) up to offsets[g] of mat1 times mat2[g]; rows after the last
 * offset are zero. One GEMM per group through the backend; the offsets are read on the host,
 * so this runs where tensors live in host memory (--device=cpu). The other operand ranks of
 * torch._grouped_mm (2-D x 2-D over K, 3-D x 2-D, 3-D x 3-D) are refused at the statement. */
int ops_grouped_mma(hir_interp *it, const hir_stmt *s, hir_error *e)
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
    if (out_view(it, s->out, 2, shape, &o, e))
        return -1;
    if (M * N > 0 && it->be->ops->fill(it->be, it->cur, &o, 0.0, e))
        return be_fail(it, e);
    int64_t start = 0;
    for (int64_t g = 0; g < G; g++) {
        const char *p = elem_ptr(&off, 0, g);
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
            j.a.data = elem_ptr(&a, 0, start);
            j.b = b;
            j.b.ndim = 2;
            j.b.data = elem_ptr(&b, 0, g);
            j.b.shape[0] = K;
            j.b.stride[0] = b.stride[1];
            j.b.shape[1] = N;
            j.b.stride[1] = b.stride[2];
            j.out = o;
            j.out.shape[0] = end - start;
            j.out.data = elem_ptr(&o, 0, start);
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

/* ---------------------------------------------------------------- reductions */

int ops_reduction(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    hir_tensor *tin = hir_value_tensor(s->in[0]);
    const hir_tensor *tout = s->out;
    hir_view v;
    if (interp_get(it, tin, &v, e))
        return -1;
    /* the output's logical axes (reductions included) line up with the input's runtime dims */
    uint32_t mask = 0;
    int k = 0;
    for (int i = 0; i < tout->nloop; i++) {
        const hir_iterdomain *id = interp_axes(it, tout)[i];
        if (id->itype == HIR_IT_STRIDE)
            continue;
        if (id->itype == HIR_IT_REDUCTION)
            mask |= 1u << k;
        k++;
    }
    if (k != v.ndim)
        return interp_fail(it, e, "the output has %d axes, the input %d dimensions", k, v.ndim);
    int64_t oshape[HIR_MAX_DIMS];
    int ond = 0;
    for (int d = 0; d < v.ndim; d++)
        if (!(mask & (1u << d)))
            oshape[ond++] = v.shape[d];
    hir_view o;
    if (out_view(it, tout, ond, oshape, &o, e))
        return -1;
    hir_view q = view_squeezed(&o), full = v;
    full.data = o.data;
    full.dtype = o.dtype;
    for (int d = 0, j = 0; d < v.ndim; d++) {
        if (mask & (1u << d) || v.shape[d] == 1) {
            full.shape[d] = 1;
            full.stride[d] = 0;
        } else {
            full.stride[d] = q.stride[j++];
        }
    }
    if (hir_view_numel(&full) == 0)
        return 0;
    if (hir_view_numel(&v) == 0)
        return it->be->ops->fill(it->be, it->cur, &full, 0.0, e) ? be_fail(it, e) : 0;
    if (it->be->ops->reduce(it->be, it->cur, s->u.red.op, &full, &v, mask, e))
        return be_fail(it, e);
    return 0;
}
