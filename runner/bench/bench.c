/* bench.c — `hir-run --bench/--graph/--trace`. The timing loop: synchronize, barrier, event on
 * the main stream, one run, an end event on every stream that got work, synchronize; then the
 * per-iteration maximum over ranks (gathered on rank 0 over the bootstrap) and its statistics.
 * The interpreter's statement hook counts statements, GEMM FLOPs and streams and feeds the
 * trace (runner/bench/trace.c); hir_bench_program (program.c) drives both for hir_run_job,
 * capturing a run into a CUDA graph for --graph. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runner/bench/bench.h"
#include "runner/bench/trace.h"
#include "runner/boot/boot.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct bench_state {
    hir_backend *be;
    hir_event *start;
    hir_event **end;             /* one per stream slot */
    int nend;
} bench_state;

static int ensure_end_events(bench_state *st, int n, hir_diag *e)
{
    if (n <= st->nend) return 0;
    hir_event **v = realloc(st->end, (size_t)n * sizeof *v);
    if (!v) return hir_fail(e, "bench: out of memory");
    st->end = v;
    for (; st->nend < n; st->nend++)
        if (st->be->ops->event_create(st->be, &st->end[st->nend], e) < 0) return -1;
    return 0;
}

/* One timed run on one clock: every stream idle and the optional prepare step done, a barrier;
 * the wall time from leaving it to leaving the barrier that follows the drained run (so the
 * slowest rank decides; a constant barrier latency of microseconds is included). Also the
 * device interval of this rank (start event on the main stream to the last end event over
 * the streams that got work) and the host time spent issuing the run. */
static int run_once(bench_state *st, hir_boot *boot, const hir_bench_opts *bo,
                    hir_bench_counters *c, hir_bench_run_fn fn, void *ctx, int iter,
                    double *dev_ms, double *host_us, double *wall_ms, hir_diag *e)
{
    hir_backend *be = st->be;
    const hir_backend_ops *o = be->ops;
    hir_stream *main_s = o->stream_main(be);
    if (o->synchronize(be, e) < 0) return -1;
    if (bo->prepare && bo->prepare(bo->prepare_ctx, iter, e) < 0) return -1;
    if (boot && hir_boot_barrier(boot, e) < 0) return -1;
    memset(c, 0, sizeof *c);
    double t0 = now_s();
    if (o->event_record(be, st->start, main_s, e) < 0) return -1;
    if (fn(ctx, iter, e) < 0) return -1;
    double t1 = now_s();
    int n = c->nstreams + 1;
    if (ensure_end_events(st, n, e) < 0) return -1;
    if (o->event_record(be, st->end[0], main_s, e) < 0) return -1;
    for (int i = 0; i < c->nstreams; i++)
        if (c->streams[i] != main_s && o->event_record(be, st->end[i + 1], c->streams[i], e) < 0)
            return -1;
    if (o->synchronize(be, e) < 0) return -1;
    if (boot && hir_boot_barrier(boot, e) < 0) return -1;
    double t2 = now_s();
    double best = 0;
    for (int i = 0; i < n; i++) {
        if (i > 0 && c->streams[i - 1] == main_s) continue;
        double ms;
        if (o->event_elapsed_ms(be, st->start, st->end[i], &ms, e) < 0) return -1;
        if (ms > best) best = ms;
    }
    *dev_ms = best;
    *host_us = (t1 - t0) * 1e6;
    *wall_ms = (t2 - t0) * 1e3;
    return 0;
}

static int world_team(hir_boot *boot, int **team, hir_diag *e)
{
    int size = hir_boot_size(boot);
    *team = malloc((size_t)size * sizeof **team);
    if (!*team) return hir_fail(e, "bench: out of memory");
    for (int i = 0; i < size; i++) (*team)[i] = i;
    return 0;
}

/* Every rank's `bytes` into all[rank * bytes] on every rank. */
static int gather_all(hir_boot *boot, const void *mine, void *all, size_t bytes, hir_diag *e)
{
    if (!boot || hir_boot_size(boot) == 1) {
        memcpy(all, mine, bytes);
        return 0;
    }
    int size = hir_boot_size(boot), rank = hir_boot_rank(boot), *team, rc = 0;
    if (world_team(boot, &team, e) < 0) return -1;
    for (int r = 0; r < size && rc == 0; r++) {
        char *slot = (char *)all + (size_t)r * bytes;
        if (r == rank) memcpy(slot, mine, bytes);
        rc = hir_boot_team_bcast(boot, team, size, r, slot, bytes, e);
    }
    free(team);
    return rc;
}

/* Element-wise maximum over ranks of v[0..n), on every rank. */
static int reduce_max(hir_boot *boot, double *v, int n, hir_diag *e)
{
    if (!boot || hir_boot_size(boot) == 1) return 0;
    int size = hir_boot_size(boot);
    double *all = malloc((size_t)n * (size_t)size * sizeof *all);
    if (!all) return hir_fail(e, "bench: out of memory");
    int rc = gather_all(boot, v, all, (size_t)n * sizeof *v, e);
    for (int r = 0; rc == 0 && r < size; r++)
        for (int i = 0; i < n; i++)
            if (all[(size_t)r * (size_t)n + (size_t)i] > v[i]) v[i] = all[(size_t)r * (size_t)n + (size_t)i];
    free(all);
    return rc;
}

static double median_of(double *x, int n)
{
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* Every rank's own wall, device and host figures (v[0..3*iters) of each rank), summarised per
 * rank into r->per_rank on every rank. */
static int rank_stats(hir_boot *boot, const double *v, int iters, hir_bench_result *r,
                      hir_diag *e)
{
    int size = boot ? hir_boot_size(boot) : 1;
    size_t per = 3 * (size_t)iters;
    double *all = malloc(per * (size_t)size * sizeof *all);
    double *tmp = malloc((size_t)iters * sizeof *tmp);
    r->per_rank = calloc((size_t)size, sizeof *r->per_rank);
    if (!all || !tmp || !r->per_rank) {
        free(all);
        free(tmp);
        return hir_fail(e, "bench: out of memory");
    }
    if (gather_all(boot, v, all, per * sizeof *v, e) < 0) {
        free(all);
        free(tmp);
        return -1;
    }
    for (int q = 0; q < size; q++) {
        const double *w = all + per * (size_t)q;
        struct hir_bench_rank *s = &r->per_rank[q];
        memcpy(tmp, w, (size_t)iters * sizeof *tmp);
        s->wall_median = median_of(tmp, iters);
        s->wall_min = tmp[0];
        s->wall_max = tmp[iters - 1];
        memcpy(tmp, w + iters, (size_t)iters * sizeof *tmp);
        s->dev_median = median_of(tmp, iters);
        s->dev_min = tmp[0];
        s->dev_max = tmp[iters - 1];
        double h = 0;
        for (int i = 0; i < iters; i++) h += w[2 * iters + i];
        s->host_us = h / iters;
    }
    free(all);
    free(tmp);
    return 0;
}

static void progress(FILE *f, int ranks, int done, int total, double elapsed_s, double mean_ms)
{
    fprintf(f, "\r\033[Khir-run: %d rank%s, timed iteration %d/%d, %.1f s, %.3f ms mean so far",
            ranks, ranks == 1 ? "" : "s", done, total, elapsed_s, mean_ms);
    fflush(f);
}

/* Which ranks share a physical device (same node, same device UUID), and the busiest
 * device's summed FLOP per iteration. */
static int per_device(hir_boot *boot, const hir_device_info *d, int have, double flops,
                      double *dev_flops, int *ranks_per_dev, int *ndev, hir_diag *e)
{
    int size = boot ? hir_boot_size(boot) : 1, rank = boot ? hir_boot_rank(boot) : 0;
    double mine[2];
    uint64_t key = boot ? hir_boot_node_id(boot, rank) : 0;
    key = hir_fnv1a_str(have ? d->uuid : "host", key ^ 0x9e3779b97f4a7c15ull);
    memcpy(&mine[0], &key, sizeof key);
    mine[1] = flops;
    double *all = malloc((size_t)size * sizeof mine);
    if (!all) return hir_fail(e, "bench: out of memory");
    if (gather_all(boot, mine, all, sizeof mine, e) < 0) return free(all), -1;
    *dev_flops = 0;
    *ranks_per_dev = 0;
    *ndev = 0;
    for (int r = 0; r < size; r++) {
        uint64_t kr;
        memcpy(&kr, &all[2 * r], sizeof kr);
        int first = 1, count = 0;
        double sum = 0;
        for (int q = 0; q < size; q++) {
            uint64_t kq;
            memcpy(&kq, &all[2 * q], sizeof kq);
            if (kq != kr) continue;
            if (q < r) first = 0;
            count++;
            sum += all[2 * q + 1];
        }
        if (!first) continue;
        (*ndev)++;
        if (sum > *dev_flops) *dev_flops = sum;
        if (count > *ranks_per_dev) *ranks_per_dev = count;
    }
    free(all);
    return 0;
}

static double peak_for(const hir_device_info *d, unsigned dtypes)
{
    double p = 0;
    if (dtypes & ((1u << HIR_DT_HALF) | (1u << HIR_DT_BFLOAT))) p = d->peak_tflops_16;
    if ((dtypes & (1u << HIR_DT_FLOAT)) && d->peak_tflops_32 > p) p = d->peak_tflops_32;
    if ((dtypes & (1u << HIR_DT_DOUBLE)) && d->peak_tflops_64 > p) p = d->peak_tflops_64;
    return p;
}

/* The warm-up and timed runs: per timed iteration wall ms, device ms and host us into v (then
 * the first run's wall ms at v[3 * iters]); a progress line on rank 0 for runs that take a
 * while (after 2 s, refreshed twice a second). */
static int timed_loop(bench_state *st, hir_boot *boot, const hir_bench_opts *o,
                      hir_bench_counters *c, hir_bench_run_fn fn, void *ctx, int rank0,
                      int warmup, int iters, int ranks, double *v, hir_diag *e)
{
    int show = rank0 && o->progress_out &&
               (o->progress > 0 || (o->progress < 0 && isatty(fileno(o->progress_out))));
    double t_begin = now_s(), sum = 0, last_shown = t_begin;
    double after = o->progress_after > 0 ? o->progress_after : 2.0;
    int shown = 0;
    for (int i = 0; i < warmup + iters; i++) {
        double dev, host, wall;
        if (run_once(st, boot, o, c, fn, ctx, i, &dev, &host, &wall, e) < 0) return -1;
        if (i == 0) v[3 * iters] = wall;
        if (i < warmup) continue;
        int k = i - warmup;
        v[k] = wall;
        v[iters + k] = dev;
        v[2 * iters + k] = host;
        sum += wall;
        double now = now_s();
        if (show && now - t_begin > after && now - last_shown > 0.5) {
            progress(o->progress_out, ranks, k + 1, iters, now - t_begin, sum / (k + 1));
            last_shown = now;
            shown = 1;
        }
    }
    if (shown) fputs("\r\033[K", o->progress_out);
    return 0;
}

/* Mean, spread, median and host time of the timed iterations in v (already the slowest rank's). */
static int summarize(const double *v, int iters, hir_bench_result *r, hir_diag *e)
{
    double *sorted = malloc((size_t)iters * sizeof *sorted);
    if (!sorted) {
        hir_fail(e, "bench: out of memory");
        return -1;
    }
    memcpy(sorted, v, (size_t)iters * sizeof *v);
    qsort(sorted, (size_t)iters, sizeof *sorted, cmp_double);
    double mean = 0, var = 0, dmean = 0, hmean = 0, hmin = v[2 * iters];
    for (int i = 0; i < iters; i++) {
        mean += v[i];
        dmean += v[iters + i];
        hmean += v[2 * iters + i];
        if (v[2 * iters + i] < hmin) hmin = v[2 * iters + i];
    }
    mean /= iters;
    dmean /= iters;
    hmean /= iters;
    for (int i = 0; i < iters; i++) var += (v[i] - mean) * (v[i] - mean);
    r->mean_ms = mean;
    r->dev_mean_ms = dmean;
    r->stddev_ms = iters > 1 ? sqrt(var / (iters - 1)) : 0;
    r->min_ms = sorted[0];
    r->max_ms = sorted[iters - 1];
    r->median_ms = iters % 2 ? sorted[iters / 2] : 0.5 * (sorted[iters / 2 - 1] + sorted[iters / 2]);
    free(sorted);
    r->host_us = hmean;
    r->host_us_min = hmin;
    return 0;
}

int hir_bench_run(hir_backend *be, hir_boot *boot, const hir_bench_opts *o,
                  hir_bench_counters *c, hir_bench_run_fn fn, void *ctx,
                  hir_bench_result *r, hir_diag *e)
{
    memset(r, 0, sizeof *r);
    int warmup = o->warmup >= 0 ? o->warmup : 5, iters = o->iters > 0 ? o->iters : 50;
    int rank = boot ? hir_boot_rank(boot) : 0;
    r->ranks = boot ? hir_boot_size(boot) : 1;
    r->warmup = warmup;
    r->iters = iters;
    r->backend = be->ops->name;
    r->program = o->program ? o->program : "";
    r->mode = o->mode ? o->mode : "eager";
    bench_state st = {.be = be};
    /* per iteration: wall ms, device ms, host us; then the first run's wall ms, flops */
    int nv = 3 * iters + 2;
    double *v = calloc((size_t)nv, sizeof *v);
    r->per_iter_ms = calloc((size_t)iters, sizeof *r->per_iter_ms);
    int rc = -1;
    if (!v || !r->per_iter_ms) {
        hir_fail(e, "bench: out of memory");
        goto out;
    }
    if (be->ops->event_create(be, &st.start, e) < 0) goto out;
    if (timed_loop(&st, boot, o, c, fn, ctx, rank == 0, warmup, iters, r->ranks, v, e) < 0)
        goto out;
    double my_flops = c->flops;
    v[3 * iters + 1] = c->flops;
    r->gemms = c->gemms;
    r->stmts = c->stmts;
    r->dtypes = c->dtypes;
    r->nshapes = c->nshapes;
    memcpy(r->shapes, c->shapes, sizeof r->shapes);
    if (rank_stats(boot, v, iters, r, e) < 0) goto out;
    if (reduce_max(boot, v, nv, e) < 0) goto out;
    memcpy(r->per_iter_ms, v, (size_t)iters * sizeof *v);
    if (summarize(v, iters, r, e) < 0)
        goto out;
    double mean = r->mean_ms;
    r->first_ms = v[3 * iters];
    r->flops = v[3 * iters + 1];
    r->tflops = mean > 0 ? r->flops / (mean * 1e-3) / 1e12 : 0;
    if (be->ops->profile) {
        if (be->ops->profile->device_info(be, &r->device, e) < 0) goto out;
        r->have_device = 1;
    }
    double dev_flops = 0;
    if (per_device(boot, &r->device, r->have_device, my_flops, &dev_flops, &r->ranks_per_device,
                   &r->ndevices, e) < 0)
        goto out;
    r->tflops_per_device = mean > 0 ? dev_flops / (mean * 1e-3) / 1e12 : 0;
    r->peak_tflops = r->have_device ? peak_for(&r->device, r->dtypes) : 0;
    /* every rank computed the same figures from the same gathered values */
    if (r->peak_tflops > 0 && r->tflops_per_device > r->peak_tflops) {
        hir_fail(e, "bench: %.1f TFLOP/s on one %s is above its peak of %.1f TFLOP/s "
                         "(%d SMs x %.3f GHz): work was skipped or the time is wrong; this is "
                         "a defect, not a result", r->tflops_per_device, r->device.name,
                      r->peak_tflops, r->device.sm_count, r->device.clock_khz / 1e6);
        goto out;
    }
    rc = 0;
out:
    free(v);
    if (st.start) be->ops->event_destroy(be, st.start);
    for (int i = 0; i < st.nend; i++) be->ops->event_destroy(be, st.end[i]);
    free(st.end);
    if (rc < 0) hir_bench_result_free(r);
    return rc;
}

void hir_bench_result_free(hir_bench_result *r)
{
    free(r->per_iter_ms);
    r->per_iter_ms = NULL;
    free(r->per_rank);
    r->per_rank = NULL;
}

void hir_bench_print(FILE *f, const hir_bench_result *r)
{
    fprintf(f, "bench: %s, %s backend, %d rank%s, %s, %d warm-up + %d timed iterations\n",
            r->program, r->backend, r->ranks, r->ranks == 1 ? "" : "s", r->mode, r->warmup,
            r->iters);
    fprintf(f, "  time/iter   mean %.4f ms  median %.4f  min %.4f  max %.4f  stddev %.4f ms "
               "(wall, one clock: barrier to barrier)\n",
            r->mean_ms, r->median_ms, r->min_ms, r->max_ms, r->stddev_ms);
    if (r->flops > 0) {
        fprintf(f, "  throughput  %.1f TFLOP/s per rank (%lld GEMMs, %.6g FLOP per rank per "
                   "iteration)\n", r->tflops, (long long)r->gemms, r->flops);
        fprintf(f, "              %.1f TFLOP/s per device (%d rank%s on the busiest of %d "
                   "device%s)", r->tflops_per_device, r->ranks_per_device,
                r->ranks_per_device == 1 ? "" : "s", r->ndevices, r->ndevices == 1 ? "" : "s");
        if (r->peak_tflops > 0)
            fprintf(f, "; peak %.1f (%.1f %%) of %s, %d SMs at %.3f GHz\n", r->peak_tflops,
                    100.0 * r->tflops_per_device / r->peak_tflops, r->device.name,
                    r->device.sm_count, r->device.clock_khz / 1e6);
        else
            fprintf(f, "; device peak unknown\n");
        if (r->peak_tflops > 0 && r->tflops_per_device > 0.85 * r->peak_tflops)
            fprintf(f, "  warning     within 15 %% of the device's peak: no real GEMM gets that close; "
                       "verify with --check --vary-inputs before trusting this figure\n");
    }
    fprintf(f, "  device      %.4f ms mean per-rank event interval (largest rank)\n",
            r->dev_mean_ms);
    fprintf(f, "  host        %.1f us to issue an iteration (min %.1f), %lld statements, "
               "%.3f us/statement\n",
            r->host_us, r->host_us_min, (long long)r->stmts,
            r->stmts ? r->host_us / (double)r->stmts : 0.0);
    if (r->bare_ok) {
        double per = r->stmts ? r->bare_host_us / (double)r->stmts : 0.0;
        fprintf(f, "  bare launch %.1f us to replay the run's %lld kernel launches with "
                   "cuLaunchKernel only (min %.1f), %.3f us/statement; eager / bare %.2fx\n",
                r->bare_host_us, (long long)r->bare_launches, r->bare_host_us_min, per,
                r->bare_host_us > 0 ? r->host_us / r->bare_host_us : 0.0);
        if (r->bare_other > 0)
            fprintf(f, "              %lld device calls of the run are not kernel launches "
                       "(GEMMs, copies, communication): in the eager time, not in the bare "
                       "loop\n", (long long)r->bare_other);
    } else if (r->bare_why[0]) {
        fprintf(f, "  bare launch not measured: %s\n", r->bare_why);
    }
    fprintf(f, "  first run   %.3f ms (setup included)\n", r->first_ms);
    if (r->per_rank) {
        /* one screen: at most 8 rank rows and 2 lines of iterations */
        fprintf(f, "  per rank    rank  wall ms:  min   median      max  device ms:  min   "
                   "median      max   host us\n");
        int shown = r->ranks < 8 ? r->ranks : 8;
        for (int q = 0; q < shown; q++) {
            const struct hir_bench_rank *s = &r->per_rank[q];
            fprintf(f, "              %4d %13.4f %8.4f %8.4f %15.4f %8.4f %8.4f %9.1f\n",
                    q, s->wall_min, s->wall_median, s->wall_max, s->dev_min, s->dev_median,
                    s->dev_max, s->host_us);
        }
        if (shown < r->ranks)
            fprintf(f, "              ... %d more ranks (all in --bench-json)\n", r->ranks - shown);
    }
    if (r->per_iter_ms && r->iters > 0) {
        fprintf(f, "  per iter    ms, slowest rank:");
        int n = r->iters <= 10 ? r->iters : 10;
        for (int i = 0; i < n; i++) fprintf(f, " %.4g", r->per_iter_ms[i]);
        if (n < r->iters) {
            /* the slowest iterations and where they were */
            int worst[3] = {-1, -1, -1};
            for (int i = 0; i < r->iters; i++)
                for (int k = 0; k < 3; k++)
                    if (worst[k] < 0 || r->per_iter_ms[i] > r->per_iter_ms[worst[k]]) {
                        for (int j = 2; j > k; j--) worst[j] = worst[j - 1];
                        worst[k] = i;
                        break;
                    }
            fprintf(f, " ... (%d more)\n              slowest: ", r->iters - n);
            for (int k = 0; k < 3 && worst[k] >= 0; k++)
                fprintf(f, "%s#%d %.4g ms", k ? ", " : "", worst[k], r->per_iter_ms[worst[k]]);
        }
        fputc('\n', f);
    }
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const char *p = s ? s : ""; *p; p++) {
        if (*p == '"' || *p == '\\') fputc('\\', f);
        if ((unsigned char)*p >= 0x20) fputc(*p, f);
    }
    fputc('"', f);
}

int hir_bench_write_json(const char *path, const hir_bench_result *r, const hir_bench_meta *m,
                         hir_diag *e)
{
    FILE *f = hir_fopen_write(path);
    if (!f) return hir_fail(e, "bench: cannot write %s: %s", path, hir_open_strerror(errno));
    hir_bench_meta none = {0};
    if (!m) m = &none;
    fprintf(f, "{\n  \"program\": ");
    json_str(f, r->program);
    fprintf(f, ",\n  \"hir_version\": \"%s\",\n  \"hir_git\": \"%s\",\n", HIR_VERSION,
            HIR_GIT_HASH);
    fprintf(f, "  \"backend\": \"%s\",\n  \"mode\": \"%s\",\n  \"ranks\": %d,\n"
               "  \"ranks_per_device\": %d,\n  \"devices\": %d,\n  \"streams\": %d,\n"
               "  \"protocol\": ",
            r->backend, r->mode, r->ranks, r->ranks_per_device, r->ndevices, m->streams);
    json_str(f, m->protocol ? m->protocol : "");
    fprintf(f, ",\n  \"warmup\": %d,\n  \"iters\": %d,\n  \"check\": ", r->warmup, r->iters);
    json_str(f, m->check ? m->check : "not checked");
    fprintf(f, ",\n  \"check_mode\": ");
    json_str(f, m->check_mode ? m->check_mode : "");
    fprintf(f, ",\n  \"vary_inputs\": %d,\n", m->vary_inputs);
    fprintf(f, "  \"gemm_shapes\": [");
    for (int i = 0; i < r->nshapes; i++)
        fprintf(f, "%s{\"m\": %lld, \"n\": %lld, \"k\": %lld, \"dtype\": \"%s\", "
                   "\"per_iter\": %lld}", i ? ", " : "", (long long)r->shapes[i].m,
                (long long)r->shapes[i].n, (long long)r->shapes[i].k,
                hir_dtype_name((hir_dtype)r->shapes[i].dtype), (long long)r->shapes[i].count);
    fprintf(f, "],\n");
    if (r->have_device) {
        const hir_device_info *d = &r->device;
        fprintf(f, "  \"device\": {\"name\": ");
        json_str(f, d->name);
        fprintf(f, ", \"uuid\": \"%s\", \"sm_count\": %d, \"cc\": \"%d.%d\", "
                   "\"sm_clock_mhz\": %.0f, \"mem_clock_mhz\": %.0f, \"driver\": %d, "
                   "\"cuda_runtime\": %d, \"nccl\": %d, \"cublaslt\": %d, "
                   "\"peak_tflops_16bit\": %.1f, \"peak_tflops_fp32\": %.1f, "
                   "\"peak_tflops_fp64\": %.1f},\n",
                d->uuid, d->sm_count, d->cc_major, d->cc_minor, d->clock_khz / 1e3,
                d->mem_clock_khz / 1e3, d->driver_version, d->runtime_version, d->nccl_version,
                d->cublaslt_version, d->peak_tflops_16, d->peak_tflops_32, d->peak_tflops_64);
    }
    fprintf(f, "  \"time_ms\": {\"mean\": %.6f, \"median\": %.6f, \"min\": %.6f, \"max\": %.6f, "
               "\"stddev\": %.6f, \"clock\": \"wall, barrier to barrier\"},\n",
            r->mean_ms, r->median_ms, r->min_ms, r->max_ms, r->stddev_ms);
    fprintf(f, "  \"device_event_ms_mean\": %.6f,\n", r->dev_mean_ms);
    fprintf(f, "  \"flops_per_rank\": %.6g,\n  \"gemms\": %lld,\n  \"tflops\": %.3f,\n"
               "  \"tflops_per_device\": %.3f,\n  \"peak_tflops\": %.3f,\n",
            r->flops, (long long)r->gemms, r->tflops, r->tflops_per_device, r->peak_tflops);
    fprintf(f, "  \"host_us_per_iter\": %.3f,\n  \"host_us_per_iter_min\": %.3f,\n"
               "  \"stmts_per_iter\": %lld,\n  \"host_us_per_stmt\": %.4f,\n"
               "  \"first_run_ms\": %.3f,\n",
            r->host_us, r->host_us_min, (long long)r->stmts,
            r->stmts ? r->host_us / (double)r->stmts : 0.0, r->first_ms);
    if (r->bare_ok) {
        fprintf(f, "  \"bare_launch\": {\"host_us_per_iter\": %.3f, \"host_us_per_iter_min\": "
                   "%.3f, \"launches_per_iter\": %lld, \"other_device_calls\": %lld, "
                   "\"host_us_per_stmt\": %.4f, \"eager_over_bare\": %.4f},\n",
                r->bare_host_us, r->bare_host_us_min, (long long)r->bare_launches,
                (long long)r->bare_other,
                r->stmts ? r->bare_host_us / (double)r->stmts : 0.0,
                r->bare_host_us > 0 ? r->host_us / r->bare_host_us : 0.0);
    } else if (r->bare_why[0]) {
        fprintf(f, "  \"bare_launch\": {\"not_measured\": ");
        json_str(f, r->bare_why);
        fprintf(f, "},\n");
    }
    fprintf(f, "  \"per_rank\": [");
    for (int q = 0; r->per_rank && q < r->ranks; q++) {
        const struct hir_bench_rank *s = &r->per_rank[q];
        fprintf(f, "%s\n    {\"rank\": %d, \"wall_ms\": {\"min\": %.6f, \"median\": %.6f, "
                   "\"max\": %.6f}, \"device_ms\": {\"min\": %.6f, \"median\": %.6f, "
                   "\"max\": %.6f}, \"host_us_mean\": %.3f}",
                q ? "," : "", q, s->wall_min, s->wall_median, s->wall_max, s->dev_min,
                s->dev_median, s->dev_max, s->host_us);
    }
    fprintf(f, "],\n  \"per_iter_ms\": [");
    for (int i = 0; i < r->iters; i++) fprintf(f, "%s%.6f", i ? ", " : "", r->per_iter_ms[i]);
    fprintf(f, "]\n}\n");
    if (fclose(f) != 0) return hir_fail(e, "bench: error writing %s", path);
    return 0;
}

/* ---------------------------------------------------------------- the interpreter's hook */

/* Statements that queue device work on the current stream (the others only run host code). */
static int on_device(const hir_stmt *s)
{
    switch (s->op) {
    case HIR_OP_LINEAR: case HIR_OP_MATMUL: case HIR_OP_SET: case HIR_OP_SEGMENTER_SET:
    case HIR_OP_UNARY: case HIR_OP_BINARY: case HIR_OP_TERNARY: case HIR_OP_REDUCTION:
    case HIR_OP_COMMUNICATION: case HIR_OP_P2P: case HIR_OP_WAIT: case HIR_OP_END_COAL:
    case HIR_OP_POST_ON_STREAM: case HIR_OP_LAUNCH_KERNEL:
        return 1;
    default:
        return 0;
    }
}

int hir_bench_before(void *ctx, hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    (void)e;
    hir_bench_hook *h = ctx;
    hir_backend *be = hir_interp_backend(it);
    hir_stream *cur = hir_interp_stream(it);
    int dev = on_device(s);
    if (h->trace && h->nloops > 0) {
        int64_t v;
        hir_trace_set_index(h->trace, hir_interp_eval(it, h->loops[h->nloops - 1], &v,
                                                      NULL) == 0 ? v : -1);
    }
    if (h->counters) hir_bench_count_stmt(h->counters, dev ? cur : NULL);
    if (h->capturing && dev && !h->escaped && be->ops->graph &&
        !be->ops->graph->capturing(be, cur))
        h->escaped = s;
    if (h->trace && h->depth < HIR_BENCH_HOOK_DEPTH)
        h->tokens[h->depth] = hir_trace_begin(h->trace, dev ? cur : NULL, s);
    h->depth++;
    if ((s->op == HIR_OP_FOR || s->op == HIR_OP_HOST_FOR) && h->nloops < HIR_BENCH_HOOK_DEPTH)
        h->loops[h->nloops++] = s->op == HIR_OP_FOR ? s->u.kfor.index : s->u.hfor.index;
    return 0;
}

void hir_bench_after(void *ctx, hir_interp *it, const hir_stmt *s)
{
    hir_bench_hook *h = ctx;
    hir_backend *be = hir_interp_backend(it);
    hir_stream *cur = hir_interp_stream(it);
    if (h->depth > 0) h->depth--;
    if ((s->op == HIR_OP_FOR || s->op == HIR_OP_HOST_FOR) && h->nloops > 0) {
        h->nloops--;
        if (h->trace && h->nloops == 0) hir_trace_set_index(h->trace, -1);
    }
    if (h->trace && s->op == HIR_OP_SET_STREAM) {
        /* name the track after the program's stream: "Stream 1" or the evaluated index */
        char name[32];
        int64_t v;
        if (s->u.stream.number >= 0)
            snprintf(name, sizeof name, "Stream %lld", (long long)s->u.stream.number);
        else if (hir_interp_eval(it, s->u.stream.index, &v, NULL) == 0)
            snprintf(name, sizeof name, "stream %lld", (long long)v);
        else
            name[0] = 0;
        if (name[0] && cur != be->ops->stream_main(be))
            hir_trace_name_stream(h->trace, cur, name);
    }
    if (h->trace && h->depth < HIR_BENCH_HOOK_DEPTH) hir_trace_end(h->trace, h->tokens[h->depth]);
    if (h->counters && (s->op == HIR_OP_LINEAR || s->op == HIR_OP_MATMUL)) {
        hir_view out, a;
        if (hir_interp_bound(it, s->out, &out) && s->nin > 0 &&
            s->in[0]->kind == HIR_VAL_TENSOR &&
            hir_interp_bound(it, (const hir_tensor *)s->in[0], &a) && a.ndim > 0 &&
            out.ndim > 0) {
            int64_t n = out.shape[out.ndim - 1], k = a.shape[a.ndim - 1];
            int64_t m = n ? hir_view_numel(&out) / n : 0;
            hir_bench_count_gemm(h->counters, m, n, k, 1, (int)a.dtype);
        }
    }
}

/* 1 on every rank when ok is 1 on every rank. */
int hir_bench_all_ok(hir_boot *boot, int ok, hir_diag *e)
{
    if (!boot || hir_boot_size(boot) == 1) return ok;
    double v = ok ? 0 : 1;
    if (reduce_max(boot, &v, 1, e) < 0) return -1;
    int size = hir_boot_size(boot);
    int *team = malloc((size_t)size * sizeof *team);
    if (!team) return hir_fail(e, "bench: out of memory");
    for (int i = 0; i < size; i++) team[i] = i;
    int rc = hir_boot_team_bcast(boot, team, size, 0, &v, sizeof v, e);
    free(team);
    return rc < 0 ? -1 : v == 0;
}
