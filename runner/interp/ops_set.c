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
    int team[INTERP_MAX_TEAM], n, my;
    if (interp_mesh_team(it, m, team, &n, &my, e))
        return -1;
    if (my < 0)
        return 0;
    hir_shard sh;
    if (hir_interp_shard(it, s->out, &sh, e))
        return -1;
    /* the gathered axis: n blocks of the local extent (1 for an unsplit device axis, the
     * inner extent for a split one) */
    int64_t oshape[HIR_MAX_DIMS];
    memcpy(oshape, in->shape, sizeof oshape);
    oshape[j] = in->shape[j] * n;
    hir_view out;
    if (interp_out_view(it, s->out, in->ndim, oshape, &out, e))
        return -1;
    /* gather the n local blocks one after the other (contiguous), then place each */
    hir_view tmp, one;
    hir_view_init(&one, NULL, in->dtype, in->ndim, in->shape);
    int64_t total = hir_view_numel(&one) * n;
    hir_view_init(&tmp, NULL, in->dtype, 1, &total);
    rt_buf *b = interp_buf_new(it, hir_view_bytes(&tmp), e);
    if (!b)
        return -1;
    tmp.data = b->ptr;
    hir_collective c = {.kind = HIR_COMM_ALLGATHER, .transport = HIR_BK_NCCL, .team = team,
                        .team_size = n, .my_index = my, .root_index = -1, .op = HIR_RED_SUM,
                        .input = in, .output = &tmp, .stmt_id = (uintptr_t)s,
                        .where = s->loc.src ? (int64_t)s->loc.begin : -1};
    int rc = interp_collective_now(it, &c, e);
    /* block r of tmp goes to [r * local, (r + 1) * local) of the output's axis j */
    for (int r = 0; !rc && r < n; r++) {
        hir_view blk = one, dst = out;
        blk.data = interp_elem_ptr(&tmp, 0, r * hir_view_numel(&one));
        dst.data = interp_elem_ptr(&out, j, r * in->shape[j]);
        dst.shape[j] = in->shape[j];
        rc = interp_copy_into(it, &dst, &blk, e);
    }
    interp_buf_unref(it, b);
    return rc;
}

/* The device part of a view axis, or NULL. */
static const hir_iterdomain *dev_part(const hir_tensor *t, const hir_shape_axis *a)
{
    for (int k = 0; k < a->nparts; k++)
        if (hir_ptype_is_device(t->shape.ids[a->first + k]->ptype))
            return t->shape.ids[a->first + k];
    return NULL;
}

/* Set.Permute: the permutation its IterDomain numbers carry (hir_shape_permutation), over the
 * runtime axes (reductions dropped); the output is a permuted view of the input, or a copy
 * into it when it is bound. */
static int set_permute(hir_interp *it, const hir_stmt *s, const hir_view *v, hir_diag *e)
{
    const hir_tensor *tin = hir_value_tensor(s->in[0]), *tout = s->out;
    int perm[HIR_MAX_DIMS * 4];
    char tn[32];
    if (tout->shape.naxes > (int)(sizeof perm / sizeof *perm) ||
        hir_shape_permutation(tin, tout, perm))
        return interp_fail(it, e, "Set.Permute: the IterDomain numbers of %s carry no "
                           "permutation of its input's axes", interp_tname(tout, tn, sizeof tn));
    hir_view r = *v;
    r.ndim = 0;
    for (int i = 0; i < tout->shape.naxes; i++) {
        hir_shape_axis a;
        hir_shape_axis_get(tout, i, &a);
        if (!a.dim)
            continue;
        int d = interp_rt_pos(it, tin, perm[i]);
        if (d >= v->ndim || r.ndim == HIR_MAX_DIMS)
            return interp_fail(it, e, "Set.Permute: axis %d of the output has no runtime "
                               "dimension in the input's %d", i, v->ndim);
        r.shape[r.ndim] = v->shape[d];
        r.stride[r.ndim++] = v->stride[d];
    }
    if (r.ndim != v->ndim)
        return interp_fail(it, e, "Set.Permute: the output has %d runtime axes, the input %d",
                           r.ndim, v->ndim);
    hir_view o;
    if (interp_bound(it, tout, &o))
        return interp_copy_into(it, &o, &r, e);
    if (r.dtype != tout->dtype) {
        hir_view c;
        if (interp_bind_new(it, tout, r.ndim, r.shape, &c, e))
            return -1;
        return interp_copy_into(it, &c, &r, e);
    }
    return interp_bind(it, tout, &r, interp_buf_of(it, tin), e);
}

int ops_set(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    hir_tensor *tin = hir_value_tensor(s->in[0]);
    const hir_tensor *tout = s->out;
    hir_view v;
    if (interp_get(it, tin, &v, e))
        return -1;
    if (s->u.ls.permute)
        return set_permute(it, s, &v, e);
    /* resharding: compare device parallelization axis by axis over the views' runtime axes */
    hir_shape_axis ai[HIR_MAX_DIMS], ao[HIR_MAX_DIMS];
    int ni = hir_interp_rt_axes(tin, ai), no = hir_interp_rt_axes(tout, ao);
    int gather = -1, scatter = -1;
    for (int k = 0; k < ni && k < no; k++) {
        const hir_iterdomain *a = dev_part(tin, &ai[k]), *b = dev_part(tout, &ao[k]);
        if (a && !b)
            gather = gather < 0 ? k : -2;
        else if (!a && b)
            scatter = scatter < 0 ? k : -2;
        else if (a && b && a->ptype != b->ptype)
            return interp_fail(it, e, "resharding between %s and %s is not supported",
                               hir_ptype_name(a->ptype), hir_ptype_name(b->ptype));
    }
    if (gather == -2 || scatter == -2 || (gather >= 0 && scatter >= 0))
        return interp_fail(it, e, "a Set that reshards more than one axis is not supported");
    if ((gather >= 0 || scatter >= 0) &&
        (interp_refuse_blocks(it, tin, "a resharding Set", e) ||
         interp_refuse_blocks(it, tout, "a resharding Set", e)))
        return -1;
    if (gather >= 0 && tin->mesh && tin->mesh->ndevices > 1)
        return set_allgather(it, s, &v, gather, e);
    if (scatter >= 0 && tout->mesh) {
        hir_shard sh;
        if (hir_interp_shard(it, tout, &sh, e))
            return -1;
        if (!sh.on_rank)
            return 0;
        int64_t off = sh.offset[scatter], len = sh.local[scatter];
        if (off >= v.shape[scatter] || len > v.shape[scatter] - off)
            return interp_fail(it, e, "shard [%" PRId64 ", %" PRId64 ") outside an axis of %"
                               PRId64, off, off + len, v.shape[scatter]);
        v.data = interp_elem_ptr(&v, scatter, off);
        v.shape[scatter] = len;
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
