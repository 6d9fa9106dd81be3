/* interp_work.c — posted communication, below the families that post it (Communication,
 * P2PCommunication, CollectivePermute, EndCoalescing) and the Wait that ends it: the work
 * handle recorded under the expression number a Wait names, and the buffers a transfer uses,
 * held until that Wait (interp_internal.h). */
#include <stdlib.h>

#include "runner/interp/interp_internal.h"

int interp_team_index(const int64_t *team, int n, int64_t rank)
{
    for (int i = 0; i < n; i++)
        if (team[i] == rank)
            return i;
    return -1;
}

int interp_mesh_team(hir_interp *it, const hir_mesh *m, int *team, int *n, int *my, hir_diag *e)
{
    *n = (int)m->ndevices;
    *my = -1;
    if (*n > INTERP_MAX_TEAM)
        return interp_fail(it, e, "mesh too large");
    for (int i = 0; i < *n; i++) {
        team[i] = (int)m->devices[i];
        if (team[i] == it->cfg.rank)
            *my = i;
        if (team[i] < 0 || team[i] >= it->cfg.size)
            return interp_fail(it, e, "mesh device %d is not a rank of this job", team[i]);
    }
    return 0;
}

int interp_collective_now(hir_interp *it, const hir_collective *c, hir_diag *e)
{
    hir_work *w = NULL;
    if (it->be->ops->collective(it->be, it->cur, c, &w, e) ||
        (w && it->be->ops->wait(it->be, it->cur, w, e)))
        return interp_backend_fail(it, e);
    return 0;
}

/* The buffers of a posted transfer stay alive until its Wait, whatever Deallocate does in
 * between (hostir-2026.md §3.8: the 2026 lowering deallocates communication buffers right
 * after the communication, before its Wait). */
typedef struct rt_held {
    rt_buf *b[2];
} rt_held;

void interp_held_release(hir_interp *it, int64_t number)
{
    rt_held *h = hir_map_get(&it->held, (uint64_t)number);
    if (!h)
        return;
    hir_map_del(&it->held, (uint64_t)number);
    for (int i = 0; i < 2; i++)
        interp_buf_unref(it, h->b[i]);
    free(h);
}

/* -1 with e set when the buffers cannot be held (out of memory): the work posted under number
 * is ended first, so nothing in flight uses a buffer that a Deallocate may free */
int interp_held_keep(hir_interp *it, int64_t number, const hir_tensor *a, const hir_tensor *b,
                     hir_diag *e)
{
    interp_held_release(it, number);
    rt_held *h = calloc(1, sizeof *h);
    if (!h || hir_map_try_put(&it->held, (uint64_t)number, h)) {
        free(h);
        hir_work *w = hir_map_get(&it->works, (uint64_t)number);
        if (w && w != WORK_SKIPPED)
            it->be->ops->work_release(it->be, w);
        hir_map_del(&it->works, (uint64_t)number);
        return interp_oom(it, e, "holding the buffers of posted communication", NULL);
    }
    const hir_tensor *ts[2] = {a, b};
    for (int i = 0; i < 2; i++)
        if ((h->b[i] = interp_buf_of(it, ts[i])))
            h->b[i]->refs++;
    return 0;
}

static void held_release_all(hir_interp *it)
{
    for (size_t i = 0; i < it->held.cap; i++) {
        rt_held *h = it->held.vals[i];
        if (it->held.keys[i] != UINT64_MAX && h) {
            for (int k = 0; k < 2; k++)
                interp_buf_unref(it, h->b[k]);
            free(h);
        }
    }
    hir_map_fini(&it->held);
    hir_map_init(&it->held);
}

/* Communication still in flight first (receives cancelled, sends completed or given up by the
 * backend), then the buffers it reads or writes: the other order frees memory a transfer may
 * still touch. */
void interp_work_release_all(hir_interp *it)
{
    for (size_t i = 0; i < it->works.cap; i++) {
        hir_work *w = it->works.vals[i];
        if (it->works.keys[i] != UINT64_MAX && w && w != WORK_SKIPPED)
            it->be->ops->work_release(it->be, w);
        it->works.vals[i] = NULL;
    }
    held_release_all(it);
}

/* Remembers w for Wait Communication <number>; when it cannot be remembered, w is ended now
 * (hir_interp_destroy could not find it) and the statement fails. */
int interp_record_work(hir_interp *it, int64_t number, hir_work *w, hir_diag *e)
{
    hir_work *old = hir_map_get(&it->works, (uint64_t)number);
    if (old && old != WORK_SKIPPED)
        it->be->ops->work_release(it->be, old);
    if (hir_map_try_put(&it->works, (uint64_t)number, w)) {
        hir_map_del(&it->works, (uint64_t)number);   /* old is released: forget it */
        if (w && w != WORK_SKIPPED)
            it->be->ops->work_release(it->be, w);
        return interp_oom(it, e, "recording posted communication", NULL);
    }
    return 0;
}
