/* ops_stream.c — the stream statements: GetCurrentStream, SetCurrentStream and Synchronize;
 * an indexed stream is the backend's stream of that index, a `Stream N` object the one it was
 * captured or first set as. */
#include <inttypes.h>

#include "runner/interp/ops_internal.h"

static int stream_resolve(hir_interp *it, const hir_stream_ref *r, int create, hir_stream **out,
                          hir_diag *e)
{
    if (r->number < 0) {
        int64_t k;
        if (interp_eval(it, r->index, &k, e))
            return -1;
        if (k < 0)
            return interp_fail(it, e, "stream index %" PRId64 " is negative", k);
        if (k >= HIR_STREAM_OBJECT_KEY_BASE)
            return interp_fail(it, e, "stream index %" PRId64 " is too large (at most %" PRId64 ")",
                               k, HIR_STREAM_OBJECT_KEY_BASE - 1);
        if (it->be->ops->stream_get(it->be, k, out, e))
            return interp_backend_fail(it, e);
        return 0;
    }
    hir_stream *s = hir_map_get(&it->obj_streams, (uint64_t)r->number);
    if (!s) {
        if (!create)
            return interp_fail(it, e, "Stream %" PRId64 " was never captured or set", r->number);
        if (r->number >= HIR_STREAM_OBJECT_KEY_BASE)
            return interp_fail(it, e, "Stream %" PRId64 ": stream numbers above %" PRId64
                               " are not supported", r->number, HIR_STREAM_OBJECT_KEY_BASE - 1);
        if (it->be->ops->stream_get(it->be, HIR_STREAM_OBJECT_KEY_BASE + r->number, &s, e))
            return interp_backend_fail(it, e);
        if (hir_map_try_put(&it->obj_streams, (uint64_t)r->number, s))
            return interp_oom(it, e, "recording a stream", NULL);
    }
    *out = s;
    return 0;
}

int ops_get_stream(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    if (s->u.stream.number < 0)
        return interp_fail(it, e, "GetCurrentStream into an indexed stream is not supported");
    if (!hir_map_get(&it->obj_streams, (uint64_t)s->u.stream.number) &&
        hir_map_try_put(&it->obj_streams, (uint64_t)s->u.stream.number, it->cur))
        return interp_oom(it, e, "recording a stream", NULL);
    return 0;
}

int ops_set_stream(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    hir_stream *st;
    int rc = stream_resolve(it, &s->u.stream, 1, &st, e);
    if (!rc)
        it->cur = st;
    return rc;
}

int ops_sync_stream(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    hir_stream *st;
    int rc = stream_resolve(it, &s->u.stream, 1, &st, e);
    if (!rc && st != it->cur && it->be->ops->stream_wait(it->be, it->cur, st, e))
        rc = interp_backend_fail(it, e);
    return rc;
}
