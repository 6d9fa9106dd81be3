/* compare.c — the --check phase: the reference program runs on the reference backend with the
 * same inputs; GEMMs it deferred are verified by the randomized product check (data.h), every
 * other element is compared with tolerances over the region both runs hold, the figures are
 * totalled over the ranks and rank 0 reports each output and the verdict. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runner/boot/boot.h"
#include "runner/job/job_internal.h"

/* ---------------------------------------------------------------- comparing a region */

/* Gather the elements both blocks hold into dst, contiguous: per dimension, pos[d][j] is the
 * local index (into a row-major block of `shape`) of the j-th global index both hold, cnt[d]
 * of them. */
static void extract(char *dst, const char *src, size_t es, int nd, const int64_t *shape,
                    int64_t *const *pos, const int64_t *cnt)
{
    int64_t idx[HIR_MAX_DIMS] = {0}, stride[HIR_MAX_DIMS];
    int64_t s = 1;
    for (int d = nd - 1; d >= 0; d--) {
        stride[d] = s;
        s *= shape[d];
    }
    for (int d = 0; d < nd; d++)
        if (cnt[d] <= 0)
            return;
    for (;;) {
        int64_t lin = 0;
        for (int d = 0; d < nd; d++)
            lin += pos[d][idx[d]] * stride[d];
        memcpy(dst, src + (size_t)lin * es, es);
        dst += es;
        int d = nd - 1;
        while (d >= 0 && ++idx[d] == cnt[d]) {
            idx[d] = 0;
            d--;
        }
        if (d < 0)
            return;
    }
}

/* Compare one output: got (the program's local data) against want (the reference's local
 * data), both host copies of dtype dt described by their shards; only the global elements both
 * ranks hold are compared (a shard holds one block of each dimension, or a block every period
 * where a device part sits inside a split: hir_shard_global). *compared is the number of
 * elements compared. */
static int compare_region(const void *got, const hir_shard *gs, const void *want,
                          const hir_shard *ws, hir_dtype dt, hir_compare_result *r,
                          int64_t *compared, hir_diag *e)
{
    memset(r, 0, sizeof *r);
    r->first_bad = -1;
    *compared = 0;
    if (gs->ndim != ws->ndim)
        return hir_fail(e, "the output has %d dimensions, the reference's %d", gs->ndim,
                             ws->ndim);
    int nd = gs->ndim;
    int64_t n = 1, cnt[HIR_MAX_DIMS] = {0}, total = 0;
    for (int d = 0; d < nd; d++) {
        if (gs->global[d] != ws->global[d])
            return hir_fail(e, "global dimension %d is %" PRId64 " in the program and %"
                                 PRId64 " in the reference", d, gs->global[d], ws->global[d]);
        total += gs->local[d];
    }
    /* the global indices both hold, per dimension, as local indices of each */
    int64_t *buf = malloc(sizeof(int64_t) * (size_t)(2 * total + 1));
    if (!buf)
        return hir_fail(e, "out of host memory comparing an output");
    int64_t *gp[HIR_MAX_DIMS], *wp[HIR_MAX_DIMS], *at = buf;
    for (int d = 0; d < nd; d++) {
        gp[d] = at;
        wp[d] = at + gs->local[d];
        at += 2 * gs->local[d];
        for (int64_t l = 0; l < gs->local[d]; l++) {
            int64_t w = hir_shard_local(ws, d, hir_shard_global(gs, d, l));
            if (w >= 0) {
                gp[d][cnt[d]] = l;
                wp[d][cnt[d]++] = w;
            }
        }
        n *= cnt[d];
    }
    if (n == 0) {
        free(buf);
        return 0;
    }
    size_t es = hir_dtype_size(dt);
    char *g = hir_alloc_large((size_t)n * es), *w = hir_alloc_large((size_t)n * es);
    if (!g || !w) {
        free(g);
        free(w);
        free(buf);
        return hir_fail(e, "out of host memory comparing %" PRId64 " elements", n);
    }
    extract(g, got, es, nd, gs->local, gp, cnt);
    extract(w, want, es, nd, ws->local, wp, cnt);
    free(buf);
    int rc = hir_compare(g, w, dt, n, r);
    free(g);
    free(w);
    if (rc < 0)
        return hir_fail(e, "outputs of dtype %s cannot be compared on the host",
                             hir_dtype_name(dt));
    *compared = n;
    return 0;
}

/* ---------------------------------------------------------------- outputs against the reference */

typedef struct cmp_rec {
    int64_t n, mismatches, first_bad;
    double max_abs, max_rel, got, want, atol, rtol;
    int failed;                /* could not compare (message on that rank) */
    int verified;              /* every element was verified by the randomized product check */
    /* GEMM results verified by the randomized product check instead of compared */
    int64_t fv_gemms, fv_rows, fv_bad_rows, fv_first_bad;
    double fv_worst, fv_diff, fv_bound;
} cmp_rec;

/* Where deferred GEMM d writes inside reference output view vw (bytes from vw.data), or -1. */
static int64_t offset_in(const hir_deferred_gemm *d, const hir_view *vw)
{
    if (!vw->data || !d->g.out.data) return -1;
    size_t bytes = hir_view_bytes(vw);
    uintptr_t lo = (uintptr_t)vw->data, hi = lo + bytes, p = (uintptr_t)d->g.out.data;
    if (p < lo || p >= hi) return -1;
    return (int64_t)(p - lo);
}

/* Copy a GEMM output region (unit column stride) between two host buffers of equal layout. */
static void copy_region(const hir_gemm *g, char *dst, const char *src, size_t es)
{
    for (int64_t bi = 0; bi < (g->batch < 1 ? 1 : g->batch); bi++)
        for (int64_t m = 0; m < g->out.shape[0]; m++) {
            int64_t off = (bi * g->batch_stride_out + m * g->out.stride[0]) * (int64_t)es;
            memcpy(dst + off, src + off, (size_t)g->out.shape[1] * es);
        }
}

/* Which elements of a local output the randomized check verified, one bit each: an output all
 * of whose elements it verified (and whose values were then copied into the reference) needs no
 * element-wise comparison, which would only compare each value with itself. */
static void cover_region(uint64_t *bits, int64_t numel, const hir_gemm *g, int64_t first)
{
    for (int64_t bi = 0; bi < (g->batch < 1 ? 1 : g->batch); bi++)
        for (int64_t m = 0; m < g->out.shape[0]; m++) {
            int64_t lo = first + bi * g->batch_stride_out + m * g->out.stride[0];
            int64_t hi = lo + g->out.shape[1];
            if (lo < 0) lo = 0;
            if (hi > numel) hi = numel;
            for (int64_t k = lo; k < hi;) {
                if ((k & 63) == 0 && hi - k >= 64) {
                    bits[k >> 6] = ~(uint64_t)0;
                    k += 64;
                } else {
                    bits[k >> 6] |= (uint64_t)1 << (k & 63);
                    k++;
                }
            }
        }
}

static int all_covered(const uint64_t *bits, int64_t numel)
{
    int64_t k = 0;
    for (; k + 64 <= numel; k += 64)
        if (bits[k >> 6] != ~(uint64_t)0) return 0;
    for (; k < numel; k++)
        if (!(bits[k >> 6] >> (k & 63) & 1)) return 0;
    return 1;
}

static int same_shard(const hir_shard *a, const hir_shard *b)
{
    if (a->ndim != b->ndim) return 0;
    for (int d = 0; d < a->ndim; d++)
        if (a->local[d] != b->local[d] || a->offset[d] != b->offset[d] ||
            a->global[d] != b->global[d] || a->block[d] != b->block[d] ||
            a->period[d] != b->period[d])
            return 0;
    return 1;
}

/* The reference's deferred GEMMs: verify the program's result region by region (Freivalds),
 * then put the program's values into the reference copy there, so the element-wise comparison
 * that follows covers everything else. A GEMM whose region cannot be matched one to one
 * (different sharding, a non-contiguous reference output) is computed after all. */
static int verify_deferred(const hir_run_options *o, hir_interp *it, hir_program *rp,
                           hir_backend *cpu, hir_deferred_gemm *defs, int ndefs,
                           const outputs *got, outputs *want, cmp_rec *recs, int rank,
                           int threads, hir_diag *e)
{
    int rc = 0, nout = rp->outputs.n;
    uint64_t **cov = calloc((size_t)nout + 1, sizeof *cov);   /* per output, once copied into */
    char *lost = calloc((size_t)nout + 1, 1);                  /* recomputed: compare it all */
    if (!cov || !lost) {
        free(cov);
        free(lost);
        return hir_fail(e, "out of host memory");
    }
    for (int k = 0; k < ndefs && !rc; k++) {
        hir_deferred_gemm *d = &defs[k];
        for (int i = 0; i < rp->outputs.n; i++) {
            hir_view vw;
            if (!want->present[i] || hir_interp_output(it, i, &vw, NULL))
                continue;
            int64_t off = offset_in(d, &vw);
            if (off < 0)
                continue;
            size_t es = hir_dtype_size(vw.dtype);
            if (!got->present[i] || got->dtype[i] != vw.dtype || !hir_view_is_contiguous(&vw) ||
                !same_shard(&got->shard[i], &want->shard[i]) || d->g.out.dtype != vw.dtype) {
                /* no one-to-one region: compute it and fetch that output again */
                free(want->host[i]);
                want->host[i] = NULL;
                if (cpu->ops->check->gemm_now(cpu, d, e) ||
                    cpu->ops->download == NULL ||
                    !(want->host[i] = hir_alloc_large(hir_view_bytes(&vw) + 1)) ||
                    cpu->ops->download(cpu, want->host[i], vw.data, hir_view_bytes(&vw), e))
                    rc = want->host[i] ? -1 : hir_fail(e, "out of host memory");
                lost[i] = 1;
                break;
            }
            hir_gemm g = d->g;
            g.bias = d->has_bias ? &d->bias : NULL;
            g.out.data = (char *)got->host[i] + off;
            hir_data_gemm_check r;
            if (hir_data_verify_gemm(&g, o->check_vectors, o->seed * 0x9e3779b97f4a7c15ull +
                                     (uint64_t)k * 1000003u + (uint64_t)rank, threads, &r,
                                     e)) {
                rc = -1;
                break;
            }
            cmp_rec *c = &recs[i];
            if (c->fv_bad_rows == 0 && r.bad_rows) {
                c->fv_first_bad = c->fv_rows + r.first_bad_row;
                c->fv_diff = r.diff_first;
                c->fv_bound = r.bound_first;
            }
            c->fv_gemms++;
            c->fv_rows += r.rows;
            c->fv_bad_rows += r.bad_rows;
            if (r.worst > c->fv_worst || isnan(r.worst)) c->fv_worst = r.worst;
            copy_region(&g, (char *)want->host[i] + off, (const char *)got->host[i] + off, es);
            int64_t numel = hir_view_numel(&vw);
            if (!cov[i] && !(cov[i] = calloc((size_t)numel / 64 + 1, sizeof **cov))) {
                rc = hir_fail(e, "out of host memory");
                break;
            }
            cover_region(cov[i], numel, &g, off / (int64_t)es);
            break;
        }
    }
    for (int i = 0; i < nout; i++) {
        hir_view vw;
        if (!rc && cov[i] && !lost[i] && !hir_interp_output(it, i, &vw, NULL))
            recs[i].verified = all_covered(cov[i], hir_view_numel(&vw));
        free(cov[i]);
    }
    free(cov);
    free(lost);
    return rc;
}

/* The GEMMs the reference backend still defers (none where its table has no take_deferred). */
static int take_deferred(hir_backend *cpu, hir_deferred_gemm **defs, int *n, hir_diag *e)
{
    *defs = NULL;
    *n = 0;
    return cpu->ops->check ? cpu->ops->check->take_deferred(cpu, defs, n, e) : 0;
}

/* This rank's comparison of every output it holds with the reference's (into mine); the first
 * output that could not be compared is named in the report (a `check: rank R:` line). */
static void compare_local(const hir_run_options *o, hir_program *mp, const outputs *got,
                          const outputs *want, cmp_rec *mine, int rank)
{
    char firstmsg[600] = "";
    for (int i = 0; i < got->n; i++) {
        cmp_rec *c = &mine[i];
        c->first_bad = -1;
        if (!got->present[i] || !want->present[i])
            continue;
        hir_compare_result r;
        int64_t cnt;
        hir_diag ce;
        hir_diag_init(&ce, NULL);
        if (got->dtype[i] != want->dtype[i]) {
            hir_fail(&ce, "dtype %s in the program, %s in the reference",
                          hir_dtype_name(got->dtype[i]), hir_dtype_name(want->dtype[i]));
            c->failed = 1;
        } else if (c->verified) {
            /* the product check verified every element and copied it into the reference:
             * compared element-wise each would equal itself */
            int64_t n = 1;
            for (int d = 0; d < got->shard[i].ndim; d++)
                n *= got->shard[i].local[d];
            c->n = n;
            hir_compare_tolerance(got->dtype[i], &c->atol, &c->rtol);
        } else if (compare_region(got->host[i], &got->shard[i], want->host[i], &want->shard[i],
                                  got->dtype[i], &r, &cnt, &ce)) {
            c->failed = 1;
        } else {
            c->n = cnt;
            c->mismatches = r.mismatches;
            c->first_bad = r.first_bad;
            c->max_abs = r.max_abs;
            c->max_rel = r.max_rel;
            c->got = r.got_first;
            c->want = r.want_first;
            c->atol = r.atol;
            c->rtol = r.rtol;
        }
        if (c->failed && !firstmsg[0]) {
            char nm[64];
            snprintf(firstmsg, sizeof firstmsg, "rank %d: output %d (%s): %s", rank, i,
                     job_value_name(mp->outputs.items[i], nm, sizeof nm),
                     hir_diag_last_error(&ce));
        }
        hir_diag_fini(&ce);
    }
    if (firstmsg[0]) {
        fprintf(o->out, "check: %s\n", firstmsg);
        fflush(o->out);                      /* ahead of rank 0's summary */
    }
}

/* One output's comparison over all ranks. */
typedef struct cmp_total {
    cmp_rec tot;
    int bad_rank, nfail, fv_bad_rank;   /* first rank with a mismatch / a failed GEMM row */
    int empty;                          /* the output has no elements */
} cmp_total;

static void total_output(const cmp_rec *all, int n, int size, int i, cmp_total *t)
{
    memset(t, 0, sizeof *t);
    cmp_rec *tot = &t->tot;
    tot->first_bad = -1;
    t->bad_rank = t->fv_bad_rank = -1;
    for (int r = 0; r < size; r++) {
        const cmp_rec *c = &all[(size_t)r * (size_t)(n + 1) + (size_t)i];
        t->nfail += c->failed;
        tot->n += c->n;
        tot->mismatches += c->mismatches;
        if (c->max_abs > tot->max_abs || isnan(c->max_abs))
            tot->max_abs = c->max_abs;
        if (c->max_rel > tot->max_rel || isnan(c->max_rel))
            tot->max_rel = c->max_rel;
        if (c->n) {
            tot->atol = c->atol;
            tot->rtol = c->rtol;
        }
        tot->fv_gemms += c->fv_gemms;
        tot->fv_rows += c->fv_rows;
        if (c->fv_bad_rows && !tot->fv_bad_rows) {
            t->fv_bad_rank = r;
            tot->fv_first_bad = c->fv_first_bad;
            tot->fv_diff = c->fv_diff;
            tot->fv_bound = c->fv_bound;
        }
        tot->fv_bad_rows += c->fv_bad_rows;
        if (c->fv_worst > tot->fv_worst || isnan(c->fv_worst)) tot->fv_worst = c->fv_worst;
        if (c->mismatches && t->bad_rank < 0) {
            t->bad_rank = r;
            tot->first_bad = c->first_bad;
            tot->got = c->got;
            tot->want = c->want;
        }
    }
}

/* Rank 0's report of one output: the summary line, then what failed and where. */
static void report_output(const hir_run_options *o, hir_program *mp, hir_program *rp,
                          const outputs *got, const outputs *want, int i, int size,
                          const cmp_total *t)
{
    const cmp_rec *tot = &t->tot;
    char nm[64], rn[64];
    const hir_shard *sh = &got->shard[i];
    char shape[128];
    size_t k = (size_t)snprintf(shape, sizeof shape, "[");
    for (int d = 0; d < sh->ndim; d++)
        k += (size_t)snprintf(shape + k, sizeof shape - k, "%s%" PRId64, d ? ", " : "",
                              sh->global[d]);
    snprintf(shape + k, sizeof shape - k, "]");
    fprintf(o->out, "check: output %d %s%s vs %s: %s %s, %" PRId64
            " elements compared over %d rank%s: max abs err %.3g, max rel err %.3g, "
            "%" PRId64 " mismatch%s (atol %.3g x max|ref|, rtol %.3g)\n",
            i, job_value_name(mp->outputs.items[i], nm, sizeof nm), "",
            job_value_name(rp->outputs.items[i], rn, sizeof rn),
            hir_dtype_name(got->dtype[i] ? got->dtype[i] : want->dtype[i]), shape, tot->n,
            size, size == 1 ? "" : "s", tot->max_abs, tot->max_rel, tot->mismatches,
            tot->mismatches == 1 ? "" : "es", tot->atol, tot->rtol);
    if (tot->fv_gemms)
        fprintf(o->out, "check:   of which %" PRId64 " GEMM result%s (%" PRId64
                " rows) verified by the randomized product check with %d random "
                "vector%s: %" PRId64 " row%s failed, largest |difference|/bound %.3g\n",
                tot->fv_gemms, tot->fv_gemms == 1 ? "" : "s", tot->fv_rows,
                o->check_vectors, o->check_vectors == 1 ? "" : "s", tot->fv_bad_rows,
                tot->fv_bad_rows == 1 ? "" : "s", tot->fv_worst);
    if (t->fv_bad_rank >= 0 && isnan(tot->fv_diff))
        fprintf(o->out, "check:   first failing GEMM row on rank %d, row %" PRId64
                " of its checked rows: it holds NaN or inf (never written, or "
                "overflow)\n", t->fv_bad_rank, tot->fv_first_bad);
    else if (t->fv_bad_rank >= 0)
        fprintf(o->out, "check:   first failing GEMM row on rank %d, row %" PRId64
                " of its checked rows: |C·r - A·(B·r)| = %.6g > bound %.6g\n",
                t->fv_bad_rank, tot->fv_first_bad, tot->fv_diff, tot->fv_bound);
    if (t->bad_rank >= 0)
        fprintf(o->out, "check:   first mismatch on rank %d, element %" PRId64
                " of its compared region: got %.6g, expected %.6g\n", t->bad_rank,
                tot->first_bad, tot->got, tot->want);
    if (t->nfail)
        fprintf(o->out, "check:   %d rank(s) could not compare this output (see "
                "their check: rank lines)\n", t->nfail);
    if (!t->nfail && tot->n == 0 && t->empty)
        fprintf(o->out, "check:   the output has no elements: nothing to compare\n");
    else if (!t->nfail && tot->n == 0)
        fprintf(o->out, "check:   no rank holds a region of this output that the "
                "reference also holds\n");
}

static hir_run_status check_outputs(const hir_run_options *o, hir_boot *boot, loaded *main,
                                    loaded *ref, const outputs *got, hir_backend *cpu,
                                    const hir_interp_config *base, double in_scale,
                                    hir_diag *e)
{
    int rank = hir_boot_rank(boot), size = hir_boot_size(boot);
    hir_program *rp = ref->p, *mp = main->p;
    if (rp->inputs.n != mp->inputs.n || rp->outputs.n != mp->outputs.n)
        return job_refuse(e, rank, "the reference %s does not have the program's number of "
                          "inputs and outputs%s", ref->src.name, "");
    hir_interp_config cfg = *base;
    cfg.label = "check";
    hir_interp *it = NULL;
    if (hir_interp_create(rp, cpu, &cfg, &it, e))
        return HIR_RUN_REFUSED;
    inputs in;
    outputs want;
    memset(&want, 0, sizeof want);
    hir_run_status st = HIR_RUN_FAILED;
    hir_deferred_gemm *defs = NULL;
    int ndefs = 0;
    /* deferred GEMMs are taken before the outputs are read (a read would compute them) */
    if (job_make_inputs(it, rp, cpu, o, mp, rank, &in, e) ||
        (in_scale != 1.0 && job_scale_inputs(cpu, &in, in_scale, e)) ||
        hir_interp_run(it, in.views, e) ||
        take_deferred(cpu, &defs, &ndefs, e) ||
        job_fetch_outputs(it, rp, cpu, rank, &want, e)) {
        free(defs);
        hir_interp_destroy(it);
        job_inputs_free(&in, cpu);
        job_outputs_free(&want);
        return HIR_RUN_FAILED;
    }
    int n = got->n;
    cmp_rec *mine = calloc((size_t)n + 1, sizeof *mine);
    cmp_rec *all = calloc((size_t)(n + 1) * (size_t)size, sizeof *all);
    if (!mine || !all) {
        hir_fail(e, "out of host memory");
        goto out;
    }
    if (verify_deferred(o, it, rp, cpu, defs, ndefs, got, &want, mine, rank,
                        hir_boot_threads(boot, 16), e))
        goto out;
    compare_local(o, mp, got, &want, mine, rank);
    if (job_allgather(boot, mine, all, sizeof(cmp_rec) * (size_t)(n + 1), e))
        goto out;
    int pass = 1;
    for (int i = 0; i < n; i++) {
        cmp_total t;
        total_output(all, n, size, i, &t);
        /* an output with no elements (an extent bound to 0) has nothing to compare; any other
         * output that no rank compared fails the check */
        int64_t global = 1;
        for (int d = 0; d < got->shard[i].ndim; d++)
            global = got->shard[i].global[d] ? global : 0;
        t.empty = global == 0;
        pass &= !t.nfail && !t.tot.mismatches && (t.tot.n > 0 || t.empty) && !t.tot.fv_bad_rows;
        if (rank == 0)
            report_output(o, mp, rp, got, &want, i, size, &t);
    }
    if (rank == 0) {
        fprintf(o->out, "check: %s\n", pass ? "PASS" : "FAIL");
        fflush(o->out);
    }
    st = pass ? HIR_RUN_OK : HIR_RUN_CHECK_FAILED;
out:
    free(defs);
    free(mine);
    free(all);
    hir_interp_destroy(it);
    job_inputs_free(&in, cpu);
    job_outputs_free(&want);
    return st;
}

/* ---------------------------------------------------------------- the phase */

/* --check against the reference run (which sees the inputs of the run whose outputs were
 * kept). */
hir_run_status job_compare(job *j, hir_diag *e)
{
    const hir_run_options *o = j->o;
    if (!o->check)
        return HIR_RUN_OK;
    return check_outputs(o, j->boot, &j->main, o->check_ref ? &j->ref : &j->main, &j->out,
                         j->cpu, &j->cfg, j->vi.cur ? 2.0 : 1.0, e);
}
