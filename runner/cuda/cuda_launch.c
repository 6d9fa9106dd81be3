/* cuda_launch.c — every cuLaunchKernel of the CUDA backend, and the record of them that
 * hir-run --bench-bare replays (the table's profile group: launch_record, launch_replay). */
#include <stdlib.h>
#include <string.h>

#include "runner/cuda/cuda_internal.h"

/* ---------------------------------------------------------------- launches and their record */

static int record_launch(hir_cu_backend *cb, const hir_cu_launch_rec *r, void **args,
                         const size_t *sizes, int nargs)
{
    size_t bytes = (size_t)nargs * sizeof(void *);
    for (int i = 0; i < nargs; i++) bytes += (sizes[i] + 15) & ~(size_t)15;
    void **argv = malloc(bytes ? bytes : 1);
    if (!argv || hir_cu_grow((void **)&cb->recs, &cb->cap_recs, cb->nrecs,
                             sizeof(hir_cu_launch_rec), NULL) < 0) {
        free(argv);
        return -1;
    }
    unsigned char *at = (unsigned char *)(argv + nargs);
    for (int i = 0; i < nargs; i++) {
        memcpy(at, args[i], sizes[i]);
        argv[i] = at;
        at += (sizes[i] + 15) & ~(size_t)15;
    }
    hir_cu_launch_rec *d = &cb->recs[cb->nrecs++];
    *d = *r;
    d->argv = argv;
    return 0;
}

int hir_cu_launch(hir_cu_backend *cb, CUfunction fn, unsigned gx, unsigned gy, unsigned gz,
                  unsigned bx, unsigned by, unsigned bz, unsigned shmem, CUstream st,
                  void **args, const size_t *sizes, int nargs, hir_diag *e)
{
    HIR_CK(e, cu, cb->drv.LaunchKernel(fn, gx, gy, gz, bx, by, bz, shmem, st, args, NULL));
    if (cb->rec_on && !cb->rec_bad) {
        hir_cu_launch_rec r = {.fn = fn, .grid = {gx, gy, gz}, .block = {bx, by, bz},
                               .shmem = shmem, .stream = st};
        if (record_launch(cb, &r, args, sizes, nargs) < 0) cb->rec_bad = 1;
    }
    return 0;
}

void hir_cu_launch_recs_free(hir_cu_backend *cb)
{
    for (int i = 0; i < cb->nrecs; i++) free(cb->recs[i].argv);
    cb->nrecs = 0;
}

/* on = 1: forget the previous record and record every launch from now on; on = 0: stop. */
int hir_cu_launch_record(hir_backend *be, int on, hir_diag *e)
{
    (void)e;
    hir_cu_backend *cb = hir_cu(be);
    if (on) {
        hir_cu_launch_recs_free(cb);
        cb->rec_bad = cb->rec_freed = 0;
        cb->rec_other = 0;
    }
    cb->rec_on = on;
    return 0;
}

/* The bare loop: the recorded launches again, through cuLaunchKernel and nothing else. */
int hir_cu_launch_replay(hir_backend *be, int64_t *launches, int64_t *other, hir_diag *e)
{
    hir_cu_backend *cb = hir_cu(be);
    if (cb->rec_on)
        return hir_fail(e, "bare launch replay while still recording"), -1;
    if (cb->rec_bad)
        return hir_fail(e, "bare launch replay: the record is incomplete (out of host "
                                "memory while recording)"), -1;
    if (cb->rec_freed)
        return hir_fail(e, "bare launch replay: the recorded run freed device memory, so "
                                "its launches cannot be replayed safely"), -1;
    const hir_cu_launch_rec *r = cb->recs;
    __typeof__(&cuLaunchKernel) launch_fn = cb->drv.LaunchKernel;
    for (int i = 0, n = cb->nrecs; i < n; i++, r++) {
        int st = launch_fn(r->fn, r->grid[0], r->grid[1], r->grid[2], r->block[0], r->block[1],
                           r->block[2], r->shmem, r->stream, r->argv, NULL);
        HIR_CK_ST(e, cu, "cuLaunchKernel", st);
    }
    if (launches) *launches = cb->nrecs;
    if (other) *other = cb->rec_other;
    return 0;
}
