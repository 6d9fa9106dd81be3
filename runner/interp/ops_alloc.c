/* ops_alloc.c — memory statements: ALLOCATE (a buffer per statement, cached across runs as
 * nvFuser's allocation cache is), the 2026 ALLOCATE(mem_type=…, zero_init=…) (a fresh buffer
 * each execution, hostir-2026.md §3.7), and Deallocate. */
#include <stddef.h>

#include "runner/interp/ops_internal.h"

/* ---------------------------------------------------------------- ALLOCATE */

int ops_allocate(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    if (interp_bound(it, s->out, NULL))
        return 0;
    hir_shard sh;
    if (interp_shard_here(it, s->out, &sh, e))   /* in a stream loop: one chunk */
        return -1;
    hir_view v;
    hir_view_init(&v, NULL, s->out->dtype, sh.ndim, sh.local);
    size_t bytes = hir_view_bytes(&v);
    rt_buf *b = hir_map_get(&it->alloc_cache, (uintptr_t)s);
    /* a shorter last stream chunk (interp_shard_here) takes the front of the cached buffer */
    if (b && b->bytes != bytes && !(it->loops > 0 && b->bytes > bytes)) {
        char tn[32];
        return interp_fail(it, e, "%s: the allocation cache holds %zu bytes for this statement, "
                           "the shape now needs %zu", interp_tname(s->out, tn, sizeof tn),
                           b->bytes, bytes);
    }
    if (!b) {
        if (!(b = interp_buf_new(it, bytes, e)))
            return -1;
        if (hir_map_try_put(&it->alloc_cache, (uintptr_t)s, b)) {
            interp_buf_unref(it, b);
            char tn[32];
            return interp_oom(it, e, "caching the allocation of", interp_tname(s->out, tn, sizeof tn));
        }
        v.data = b->ptr;
        /* zero_init only on a fresh buffer, as nvFuser's cache does */
        if (s->u.alloc.zero_init && hir_view_numel(&v) &&
            it->be->ops->fill(it->be, it->cur, &v, 0.0, e))
            return interp_backend_fail(it, e);
    }
    v.data = b->ptr;
    return interp_bind(it, s->out, &v, b, e);
}

/* ---------------------------------------------------------------- fresh ALLOCATE */

/* ALLOCATE(mem_type=…, zero_init=…): a new buffer every time the statement executes
 * (hostir-2026.md §3.7); each execution in a run gets its own (interp_bind_new's slots). */
int ops_hir_allocate(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    /* inside a loop the storage of a stream-parallel axis is this iteration's chunk: the
     * FEC lowering allocates there exactly the tensors whose storage is stream-parallel
     * (hostir-2026.md §4.2); at top level the axis counts whole */
    hir_shard sh;
    if (interp_shard_here(it, s->out, &sh, e))
        return -1;
    hir_view v;
    if (interp_bind_new(it, s->out, sh.ndim, sh.local, &v, e))
        return -1;
    if (s->u.alloc.zero_init && hir_view_numel(&v) &&
        it->be->ops->fill(it->be, it->cur, &v, 0.0, e))
        return interp_backend_fail(it, e);
    return 0;
}

/* ---------------------------------------------------------------- Deallocate */

int ops_deallocate(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    (void)e;
    hir_tensor *t = hir_value_tensor(s->in[0]);
    if (!t)
        return 0;
    interp_unbind(it, t);
    /* Deallocate means "release the memory": results kept for reuse go too */
    interp_forget_results(it, t);
    return 0;
}
