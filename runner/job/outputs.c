/* outputs.c — what a job brings back: the outputs fetched to the host and saved as .npy
 * (--save-outputs), the per-peer P2P counts agreed across ranks (a send nobody received), and
 * what is gathered to rank 0 over the bootstrap (small records, the --verbose traces). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runner/boot/boot.h"
#include "runner/data/npy.h"
#include "runner/job/job_internal.h"

/* Host copy of one output (contiguous, dtype of the view). */
static int download(hir_backend *be, const hir_view *v, void **host, hir_diag *e)
{
    size_t bytes;
    *host = NULL;
    if (hir_view_size_checked(v, NULL, &bytes))
        return hir_fail(e, "output size does not fit in 64 bits");
    *host = hir_alloc_large(bytes ? bytes : 1);
    if (!*host)
        return hir_fail(e, "out of host memory");
    if (!bytes)
        return 0;
    if (be->ops->synchronize(be, e))
        return -1;
    if (hir_view_is_contiguous(v))
        return be->ops->download(be, *host, v->data, bytes, e);
    hir_view c;
    hir_view_init(&c, NULL, v->dtype, v->ndim, v->shape);
    if (be->ops->alloc(be, bytes, &c.data, e))
        return -1;
    int rc = be->ops->copy(be, be->ops->stream_main(be), &c, v, e) ||
             be->ops->synchronize(be, e) || be->ops->download(be, *host, c.data, bytes, e);
    be->ops->free(be, c.data);
    return rc ? -1 : 0;
}

void job_outputs_free(outputs *o)
{
    for (int i = 0; i < o->n; i++)
        free(o->host ? o->host[i] : NULL);
    free(o->host);
    free(o->shard);
    free(o->dtype);
    free(o->present);
    memset(o, 0, sizeof *o);
}

int job_fetch_outputs(hir_interp *it, hir_program *p, hir_backend *be, int rank,
                      outputs *out, hir_diag *e)
{
    memset(out, 0, sizeof *out);
    out->n = p->outputs.n;
    out->host = calloc((size_t)out->n + 1, sizeof *out->host);
    out->shard = calloc((size_t)out->n + 1, sizeof *out->shard);
    out->dtype = calloc((size_t)out->n + 1, sizeof *out->dtype);
    out->present = calloc((size_t)out->n + 1, sizeof *out->present);
    if (!out->host || !out->shard || !out->dtype || !out->present)
        return hir_fail(e, "out of host memory");
    for (int i = 0; i < out->n; i++) {
        hir_tensor *t = hir_value_tensor(p->outputs.items[i]);
        if (!t)
            return hir_fail(e, "output %d is a scalar; only tensor outputs are supported",
                                 i);
        if (hir_interp_shard(it, t, &out->shard[i], e))
            return -1;
        if (!out->shard[i].on_rank)
            continue;
        hir_view v;
        if (hir_interp_output(it, i, &v, e))
            return -1;
        hir_view want;
        hir_view_init(&want, NULL, t->dtype, out->shard[i].ndim, out->shard[i].local);
        if (hir_view_numel(&v) != hir_view_numel(&want))
            return hir_fail(e, "rank %d: output T%" PRId64 " holds %" PRId64
                                 " elements, its shape needs %" PRId64, rank, t->number,
                                 hir_view_numel(&v), hir_view_numel(&want));
        out->dtype[i] = v.dtype;
        if (download(be, &v, &out->host[i], e))
            return -1;
        out->present[i] = 1;
    }
    return 0;
}

static int save_outputs(const hir_run_options *o, hir_program *p, const outputs *out, int rank,
                        hir_diag *e)
{
    if (mkdir(o->save_dir, 0777) && errno != EEXIST)
        return hir_fail(e, "rank %d: cannot create %s: %s", rank, o->save_dir,
                             strerror(errno));
    for (int i = 0; i < out->n; i++) {
        if (!out->present[i])
            continue;
        char nm[64], path[4096];
        job_value_name(p->outputs.items[i], nm, sizeof nm);
        snprintf(path, sizeof path, "%s/%s.rank%d.npy", o->save_dir, nm, rank);
        if (hir_npy_write(path, out->host[i], out->dtype[i], out->shard[i].ndim,
                          out->shard[i].local, o->raw_bf16 ? HIR_NPY_RAW_BF16 : 0, e))
            return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- gathering to rank 0 */

/* every rank gets every rank's `bytes` (small messages over the bootstrap) */
int job_allgather(hir_boot *boot, const void *mine, void *all, size_t bytes, hir_diag *e)
{
    int size = hir_boot_size(boot), rank = hir_boot_rank(boot);
    int *team = malloc(sizeof(int) * (size_t)size);
    if (!team)
        return hir_fail(e, "out of host memory");
    for (int r = 0; r < size; r++)
        team[r] = r;
    int rc = 0;
    for (int r = 0; r < size && !rc; r++) {
        char *slot = (char *)all + (size_t)r * bytes;
        if (r == rank)
            memcpy(slot, mine, bytes);
        if (size > 1)
            rc = hir_boot_team_bcast(boot, team, size, r, slot, bytes, e);
    }
    free(team);
    return rc;
}

static int verbose_pull(hir_boot *b, int peer, int rank, const char *mine, size_t len, FILE *out,
                        hir_diag *e)
{
    enum { TAG = 7401, CHUNK = 1 << 16 };
    static const char zeros[CHUNK];
    uint64_t n = rank == 0 ? 0 : len, theirs = 0;
    if (hir_boot_exchange(b, peer, TAG, &n, &theirs, sizeof n, e) < 0)
        return -1;
    uint64_t total = rank == 0 ? theirs : len;
    char *chunk = malloc(CHUNK);
    if (!chunk)
        return hir_fail(e, "--verbose: out of memory");
    int rc = 0;
    for (uint64_t off = 0; off < total && rc == 0; off += CHUNK) {
        size_t k = total - off < CHUNK ? (size_t)(total - off) : CHUNK;
        rc = hir_boot_exchange(b, peer, TAG + 1, rank == 0 ? zeros : mine + off, chunk, k, e);
        if (rc == 0 && rank == 0)
            fwrite(chunk, 1, k, out);
    }
    free(chunk);
    return rc;
}

void job_verbose_finish(verbose_log *v, hir_run_status st, hir_boot *boot, FILE *out)
{
    if (!v->f)
        return;
    bool lost = fclose(v->f) != 0;
    v->f = NULL;
    int rank = hir_boot_rank(boot), size = hir_boot_size(boot);
    if (size > 1 && (st == HIR_RUN_OK || st == HIR_RUN_CHECK_FAILED)) {
        hir_diag e;
        hir_diag_init(&e, NULL);
        int rc = 0;
        if (rank == 0) {
            fwrite(v->buf, 1, v->len, out);
            for (int p = 1; p < size && rc == 0; p++)
                rc = verbose_pull(boot, p, 0, NULL, 0, out, &e);
        } else {
            rc = verbose_pull(boot, 0, rank, v->buf, v->len, out, &e);
        }
        if (rc < 0)
            fprintf(out, "hir-run: rank %d: --verbose: the trace could not be gathered (%s)\n",
                    rank, hir_diag_last_error(&e));
        hir_diag_fini(&e);
    } else {
        fwrite(v->buf, 1, v->len, out);
    }
    if (lost)
        fprintf(out, "hir-run: rank %d: --verbose: out of memory, the trace is cut short\n",
                rank);
    fflush(out);
    free(v->buf);
    v->buf = NULL;
}

/* ---------------------------------------------------------------- unmatched P2P */

/* Every P2P send must have met a receive: a small send completes on its own on some backends
 * (MPI buffers it), so a program that ends with a send nobody received would pass unnoticed.
 * The per-peer counts of all runs are shared; every rank reaches the same verdict. */
static hir_run_status check_p2p_matched(hir_interp *it, hir_boot *boot, hir_diag *e)
{
    int size = hir_boot_size(boot), rank = hir_boot_rank(boot);
    const int64_t *sent, *recvd;
    hir_interp_p2p_counts(it, &sent, &recvd);
    size_t row = 2 * (size_t)size;
    int64_t *mine = malloc(row * sizeof *mine);
    int64_t *all = malloc(row * (size_t)size * sizeof *all);
    hir_run_status st = HIR_RUN_OK;
    if (!mine || !all) {
        hir_fail(e, "out of host memory");
        st = HIR_RUN_FAILED;
        goto out;
    }
    memcpy(mine, sent, (size_t)size * sizeof *mine);
    memcpy(mine + size, recvd, (size_t)size * sizeof *mine);
    if (job_allgather(boot, mine, all, row * sizeof *mine, e)) {
        st = HIR_RUN_FAILED;
        goto out;
    }
    for (int from = 0; from < size && st == HIR_RUN_OK; from++)
        for (int to = 0; to < size; to++) {
            int64_t s = all[(size_t)from * row + (size_t)to];
            int64_t r = all[(size_t)to * row + (size_t)size + (size_t)from];
            if (s == r)
                continue;
            hir_fail(e, "rank %d: the program's P2P communication does not match: rank %d "
                          "posted %" PRId64 " send%s to rank %d, and rank %d posted %" PRId64
                          " receive%s from rank %d (%s)", rank, from, s, s == 1 ? "" : "s",
                          to, to, r, r == 1 ? "" : "s", from,
                          s > r ? "a send nobody received" : "a receive nobody answered");
            st = HIR_RUN_REFUSED;
            break;
        }
out:
    free(mine);
    free(all);
    return st;
}

/* ---------------------------------------------------------------- the phase */

/* Outputs: fetched to the host, P2P counts agreed across ranks, saved with --save-outputs. */
hir_run_status job_outputs(job *j, hir_diag *e)
{
    hir_run_status st;
    if (j->be->ops->synchronize(j->be, e) ||
        job_fetch_outputs(j->it, j->main.p, j->be, j->rank, &j->out, e))
        return HIR_RUN_FAILED;
    if ((st = check_p2p_matched(j->it, j->boot, e)) != HIR_RUN_OK)
        return st;
    job_watch_stop(j->it, &j->wd);   /* the CPU check below may take long, legitimately */
    if (j->o->save_dir && save_outputs(j->o, j->main.p, &j->out, j->rank, e))
        return HIR_RUN_FAILED;
    return HIR_RUN_OK;
}
