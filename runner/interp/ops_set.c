/* ops_set.c — Set and SegmenterSet: a copy, an alias, a cast, or, when the input is sharded
 * on an axis the output is not, the allgather that resharding Set stands for (and the local
 * slice in the other direction). */
#include <inttypes.h>
#include <string.h>

#include "runner/interp/ops_internal.h"

/* A Set whose input is sharded on an axis the output is not (same logical position) is the
 * allgather of that axis over the input's mesh; the converse takes the local slice. */
static int set_allgather(hir_interp *it, const hir_stmt *s, const hir_view *in, int j,
                         hir_diag *e)
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
    if (interp_out_view(it, s->out, in->ndim, oshape, &out, e))
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
        rc = interp_backend_fail(it, e);
    if (!rc) {
        hir_view perm = tmp;
        perm.stride[j] = tmp.stride[0];
        for (int d = 0, k = 1; d < in->ndim; d++)
            if (d != j) {
                perm.shape[d] = tmp.shape[k];
                perm.stride[d] = tmp.stride[k++];
            }
        perm.shape[j] = n;
        rc = interp_copy_into(it, &out, &perm, e);
    }
    interp_buf_unref(it, b);
    return rc;
}

int ops_set(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    hir_tensor *tin = hir_value_tensor(s->in[0]);
    const hir_tensor *tout = s->out;
    hir_view v;
    if (interp_get(it, tin, &v, e))
        return -1;
    if (s->u.ls.permute) {
        hir_view q = interp_view_squeezed(&v);
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
        v.data = interp_elem_ptr(&v, scatter, off);
        v.shape[scatter] = 1;
    }
    hir_view o;
    if (interp_bound(it, tout, &o))
        return interp_copy_into(it, &o, &v, e);
    if (v.dtype != tout->dtype) {   /* a Set that changes dtype is a cast */
        hir_view c;
        if (interp_bind_new(it, tout, v.ndim, v.shape, &c, e))
            return -1;
        return interp_copy_into(it, &c, &v, e);
    }
    return interp_bind(it, tout, &v, interp_buf_of(it, tin), e);
}
