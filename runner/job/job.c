/* interp_job.c — one rank's share of a hir-run job: read and verify the program, refuse it
 * when ranks disagree or its meshes do not fit the world, make the inputs (generated on the
 * global tensor, or read from .npy), run it --iters times (or warm-up + timed iterations),
 * save the outputs and check them against a reference run on the CPU backend. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "parser/log.h"
#include "parser/parser.h"
#include "runner/bench/bench.h"
#include "runner/boot/boot.h"
#include "runner/data/npy.h"
#include "runner/job/job.h"
#include "runner/bench/trace.h"
#include "runner/guard/guard.h"

#include "runner/registry/registry.h"

void hir_run_options_init(hir_run_options *o)
{
    memset(o, 0, sizeof *o);
    o->num_streams = 4;
    o->timeout = 300;
    o->inputs = HIR_INPUTS_GENERATED;
    o->data = HIR_DATA_RANDOM;
    o->iters = 1;
    o->check_vectors = 2;
    o->progress_after = 2.0;
    o->out = stdout;
    o->err = stderr;
}

/* A program loaded on this rank. */
typedef struct loaded {
    hir_input in;                    /* read, not mapped: the runner is a library (input.h) */
    hir_log log;                     /* the programs of text, which may be a log */
    hir_source src;
    hir_program *p;
} loaded;

static void loaded_free(loaded *l)
{
    hir_program_free(l->p);
    if (l->in.text)
        hir_source_fini(&l->src);
    hir_log_fini(&l->log);
    hir_input_fini(&l->in);
    memset(l, 0, sizeof *l);
}

static hir_run_status refuse(hir_error *e, int rank, const char *fmt, const char *a,
                             const char *b)
{
    char msg[900];
    snprintf(msg, sizeof msg, fmt, a, b);
    hir_error_set(e, "rank %d: %s", rank, msg);
    return HIR_RUN_REFUSED;
}

/* The progress line of runs that are not benchmarks (--progress): rank 0 only, from the
 * statement hook, so a single long run shows it too. */
typedef struct progress_line {
    FILE *f;
    int ranks, iter, iters;
    double t0, last, after;
    bool shown;
} progress_line;

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void progress_show(progress_line *pl)
{
    double now = mono_s();
    if (now - pl->t0 < pl->after || now - pl->last < 0.25)
        return;
    pl->last = now;
    pl->shown = true;
    fprintf(pl->f, "\r\033[Khir-run: %d rank%s, iteration %d/%d, %.1f s", pl->ranks,
            pl->ranks == 1 ? "" : "s", pl->iter + 1, pl->iters, now - pl->t0);
    fflush(pl->f);
}

static int progress_on_stmt(void *ctx, hir_interp *it, const hir_stmt *s, hir_error *e)
{
    (void)it, (void)s, (void)e;
    progress_show(ctx);
    return 0;
}

static void progress_end(progress_line *pl)
{
    if (pl->shown) {
        fputs("\r\033[K", pl->f);   /* the line goes; what follows starts clean */
        fflush(pl->f);
    }
}

/* --verbose: each rank writes its statement trace into memory; at the end of a job that every
 * rank finished alike, rank 0 prints all of them, rank by rank in rank order, so the lines of
 * one rank stay together (docs/runner.md). A rank that failed, or a job that cannot gather,
 * prints its own lines at once (each line names its rank), so nothing is lost. */
typedef struct verbose_log {
    FILE *f;                     /* memory stream, NULL when off */
    char *buf;
    size_t len;
} verbose_log;

static int verbose_pull(hir_boot *b, int peer, int rank, const char *mine, size_t len, FILE *out,
                        hir_error *e)
{
    enum { TAG = 7401, CHUNK = 1 << 16 };
    static const char zeros[CHUNK];
    uint64_t n = rank == 0 ? 0 : len, theirs = 0;
    if (hir_boot_exchange(b, peer, TAG, &n, &theirs, sizeof n, e) < 0)
        return -1;
    uint64_t total = rank == 0 ? theirs : len;
    char *chunk = malloc(CHUNK);
    if (!chunk)
        return hir_error_set(e, "--verbose: out of memory");
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

static void verbose_finish(verbose_log *v, hir_run_status st, hir_boot *boot, FILE *out)
{
    if (!v->f)
        return;
    bool lost = fclose(v->f) != 0;
    v->f = NULL;
    int rank = hir_boot_rank(boot), size = hir_boot_size(boot);
    if (size > 1 && (st == HIR_RUN_OK || st == HIR_RUN_CHECK_FAILED)) {
        hir_error e = {{0}, -1};
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
                    rank, e.msg);
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

/* Visitor: stops at the first Communication or P2PCommunication with backend=NCCL. */
static bool find_nccl(hir_stmt *s, int depth, void *ctx)
{
    if ((s->op != HIR_OP_COMMUNICATION && s->op != HIR_OP_P2P) || s->u.comm->backend != HIR_BK_NCCL)
        return true;
    *(hir_stmt **)ctx = s;
    return false;
}

/* Read, compare across ranks, parse, verify and check the meshes. Uniform outcomes only. */
static hir_run_status load_program(const char *path, const char *role, int container,
                                   hir_boot *boot, FILE *err, const hir_run_options *o,
                                   loaded *l, hir_error *e)
{
    int rank = hir_boot_rank(boot), size = hir_boot_size(boot);
    char msg[512];
    memset(l, 0, sizeof *l);
    uint64_t hash = 0;
    int rd = hir_input_read(&l->in, path, 0, msg, sizeof msg);
    if (!rd)
        hash = hir_check_text_hash(l->in.text, l->in.len);
    else
        hash = 0x4e4f46494c45ULL ^ (uint64_t)rank;   /* unreadable: differs from everyone */
    hir_error he = {{0}, -1};
    char what[300];
    snprintf(what, sizeof what, "%s %s", role, path);
    if (hir_check_same_program(boot, hash, what, &he)) {
        if (rd)
            return refuse(e, rank, "%s%s", msg, "");
        hir_error_set(e, "rank %d: %s", rank, he.msg);
        return HIR_RUN_REFUSED;
    }
    if (rd)
        return refuse(e, rank, "%s%s", msg, "");
    /* a log: the one program in it, or the --container'th */
    if (hir_log_find(l->in.text, l->in.len, false, &l->log))
        return refuse(e, rank, "out of memory (while reading %s)%s", path, "");
    int n = l->log.n;
    if (container > n || (!container && n > 1)) {
        if (!container)
            snprintf(msg, sizeof msg, "%.300s holds %d %%HostIrContainer programs: choose one with "
                     "--container=N", path, n);
        else if (n)
            snprintf(msg, sizeof msg, "--container=%d, but %.300s holds %d %%HostIrContainer "
                     "program%s", container, path, n, n == 1 ? "" : "s");
        else
            snprintf(msg, sizeof msg, "--container=%d, but %.300s holds no %%HostIrContainer "
                     "program", container, path);
        return refuse(e, rank, "%s%s", msg, "");
    }
    if (n)
        hir_log_source(&l->log, container ? container - 1 : 0, path, l->in.text, l->in.len, &l->src);
    else
        hir_source_init(&l->src, path, l->in.text, l->in.len);
    hir_diag d;
    hir_diag_init(&d, rank == 0 ? err : NULL);
    d.color = o->color;
    int bad = hir_parse(&l->src, &d, &l->p);
    const char *doing = "parsing";
    if (!bad) {
        /* --bind takes effect before verification: a bound symbolic extent is defined */
        const char *bound[64];
        int nb = 0;
        for (int i = 0; i < o->nbinds && nb < 64; i++)
            bound[nb++] = o->binds[i].name;
        hir_verify_opts vo = {true, bound, nb};
        bad = hir_program_verify(l->p, &vo, &d);
        doing = "verifying";
    }
    hir_diag_flush(&d);
    int nerr = d.errors;
    hir_diag_fini(&d);
    if (bad == HIR_ENOMEM)
        return refuse(e, rank, "out of memory (while %s %s)", doing, path);
    if (bad || nerr) {
        snprintf(msg, sizeof msg, "%d error(s)", nerr);
        return refuse(e, rank, "%s is not a runnable program (%s)", path, msg);
    }
    if (hir_check_meshes(l->p, size, &he))
        return refuse(e, rank, "%s: %s", path, he.msg);
    if (hir_check_node_assignment(l->p, boot, &he)) {   /* the message names the statement */
        hir_error_set(e, "rank %d: %s", rank, he.msg);
        return HIR_RUN_REFUSED;
    }
    return HIR_RUN_OK;
}

/* ---------------------------------------------------------------- inputs */

/* Host and backend copies of one rank's inputs. */
typedef struct inputs {
    int n;
    hir_view *views;         /* what hir_interp_run gets */
    void **dev;              /* backend buffers (NULL for scalars / absent) */
    int64_t *scalars;
} inputs;

static void inputs_free(inputs *in, hir_backend *be)
{
    for (int i = 0; i < in->n; i++)
        if (in->dev && in->dev[i])
            be->ops->free(be, in->dev[i]);
    free(in->views);
    free(in->dev);
    free(in->scalars);
    memset(in, 0, sizeof *in);
}

static const char *value_name(const hir_value *v, char *buf, size_t n)
{
    const hir_tensor *t = hir_value_tensor((hir_value *)v);
    const hir_scalar *s = hir_value_scalar((hir_value *)v);
    if (t)
        snprintf(buf, n, "T%" PRId64, t->number);
    else if (s && s->kind == HIR_SC_SYMBOL)
        snprintf(buf, n, "%s%" PRId64, s->name, s->number);
    else if (s && s->kind == HIR_SC_NAMED)
        snprintf(buf, n, "%s", s->name);
    else
        snprintf(buf, n, "input");
    return buf;
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* In DIR mode, extents named by symbols come from the files' shapes. */
static int bind_dir_extents(hir_interp *it, hir_program *p, const hir_run_options *o,
                            hir_program *names, int rank, hir_error *e)
{
    for (int i = 0; i < p->inputs.n; i++) {
        hir_tensor *t = hir_value_tensor(p->inputs.items[i]);
        if (!t)
            continue;
        char nm[64], path[4096];
        value_name(names->inputs.items[i], nm, sizeof nm);
        snprintf(path, sizeof path, "%s/%s.rank%d.npy", o->inputs_dir, nm, rank);
        int local = file_exists(path);
        if (!local)
            snprintf(path, sizeof path, "%s/%s.npy", o->inputs_dir, nm);
        hir_npy_header h;
        if (!file_exists(path))
            continue;   /* reported when the data is read */
        if (hir_npy_read_header(path, &h, e)) {
            char msg[sizeof e->msg];
            snprintf(msg, sizeof msg, "%s", e->msg);
            return hir_error_set(e, "rank %d: input %s: %s", rank, nm, msg);
        }
        int d = 0;
        for (int k = 0; k < t->nloop && d < h.ndim; k++) {
            const hir_iterdomain *id = hir_interp_axes(it, t)[k];
            if (id->itype == HIR_IT_REDUCTION || id->itype == HIR_IT_STRIDE)
                continue;
            if (id->extent && id->extent->kind == HIR_SC_SYMBOL && !id->extent->def &&
                !(local && hir_ptype_is_device(id->ptype)))
                hir_interp_bind_scalar(it, id->extent, h.shape[d], e);
            d++;
        }
    }
    return 0;
}

static int make_inputs(hir_interp *it, hir_program *p, hir_backend *be,
                       const hir_run_options *o, hir_program *names, int rank, inputs *in,
                       hir_error *e)
{
    memset(in, 0, sizeof *in);
    in->n = p->inputs.n;
    in->views = calloc((size_t)in->n + 1, sizeof *in->views);
    in->dev = calloc((size_t)in->n + 1, sizeof *in->dev);
    in->scalars = calloc((size_t)in->n + 1, sizeof *in->scalars);
    if (!in->views || !in->dev || !in->scalars)
        return hir_error_set(e, "out of host memory");
    /* the main program's extents are bound before the limits check too (hir_run_job);
     * binding again gives the same values */
    if (o->inputs == HIR_INPUTS_DIR && bind_dir_extents(it, p, o, names, rank, e))
        return -1;
    for (int i = 0; i < in->n; i++) {
        char nm[64];
        value_name(names->inputs.items[i], nm, sizeof nm);
        hir_value *v = p->inputs.items[i];
        if (hir_value_scalar(v)) {
            int found = 0;
            for (int k = 0; k < o->nbinds; k++)
                if (!strcmp(o->binds[k].name, nm)) {
                    in->scalars[i] = o->binds[k].value;
                    found = 1;
                }
            if (!found)
                return hir_error_set(e, "rank %d: scalar input %s needs a value: give --bind "
                                     "%s=VALUE", rank, nm, nm);
            hir_view_init(&in->views[i], &in->scalars[i], HIR_DT_INT64, 0, NULL);
            continue;
        }
        hir_tensor *t = hir_value_tensor(v);
        hir_shard sh;
        if (hir_interp_shard(it, t, &sh, e)) {
            char msg[sizeof e->msg];
            snprintf(msg, sizeof msg, "%s", e->msg);
            return hir_error_set(e, "%s (input %s: give --bind NAME=N for symbolic extents, "
                                 "or --inputs=DIR)", msg, nm);
        }
        if (!sh.on_rank)
            continue;
        hir_view hv, gv;
        hir_view_init(&hv, NULL, t->dtype, sh.ndim, sh.local);
        hir_view_init(&gv, NULL, t->dtype, sh.ndim, sh.global);
        size_t bytes, gbytes;
        if (hir_view_size_checked(&hv, NULL, &bytes) ||
            hir_view_size_checked(&gv, NULL, &gbytes) || gbytes == SIZE_MAX)
            return hir_error_set(e, "rank %d: input %s: its size does not fit in 64 bits", rank,
                                 nm);
        if (!hir_npy_descr(t->dtype, 0))
            return hir_error_set(e, "rank %d: input %s has dtype %s, which the runner cannot "
                                 "make data for", rank, nm, hir_dtype_name(t->dtype));
        void *host = malloc(bytes ? bytes : 1);
        if (!host)
            return hir_error_set(e, "out of host memory for input %s", nm);
        int rc = 0;
        if (o->inputs == HIR_INPUTS_GENERATED) {
            rc = hir_data_fill(host, t->dtype, sh.ndim, sh.local, sh.global, sh.offset, o->data,
                               o->seed, hir_data_key(nm), e);
        } else {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s.rank%d.npy", o->inputs_dir, nm, rank);
            if (file_exists(path)) {
                rc = hir_npy_read(path, host, t->dtype, sh.ndim, sh.local, e);
            } else {
                snprintf(path, sizeof path, "%s/%s.npy", o->inputs_dir, nm);
                if (!file_exists(path)) {
                    rc = hir_error_set(e, "rank %d: input %s: neither %s/%s.rank%d.npy nor %s "
                                       "exists", rank, nm, o->inputs_dir, nm, rank, path);
                } else {
                    /* the global array, then this rank's block of it */
                    char *g = malloc(gbytes + 1);
                    if (!g)
                        rc = hir_error_set(e, "out of host memory reading %s", path);
                    else if (!(rc = hir_npy_read(path, g, t->dtype, sh.ndim, sh.global, e))) {
                        hir_shard whole = sh;
                        memcpy(whole.local, sh.global, sizeof whole.local);
                        memset(whole.offset, 0, sizeof whole.offset);
                        /* copy the block with the region extractor of check.c: compare
                         * against itself is not needed, so do it by hand */
                        size_t es = hir_dtype_size(t->dtype);
                        int64_t idx[HIR_MAX_DIMS] = {0}, n = hir_view_numel(&hv);
                        for (int64_t k = 0; k < n; k++) {
                            int64_t lin = 0, rem = k;
                            for (int d = sh.ndim - 1; d >= 0; d--) {
                                idx[d] = rem % sh.local[d];
                                rem /= sh.local[d];
                            }
                            for (int d = 0; d < sh.ndim; d++)
                                lin = lin * sh.global[d] + idx[d] + sh.offset[d];
                            memcpy((char *)host + (size_t)k * es, g + (size_t)lin * es, es);
                        }
                    }
                    free(g);
                }
            }
        }
        if (!rc && be->ops->alloc(be, bytes ? bytes : 1, &in->dev[i], e))
            rc = -1;
        if (!rc && bytes && be->ops->upload(be, in->dev[i], host, bytes, e))
            rc = -1;
        free(host);
        if (rc)
            return -1;
        hv.data = in->dev[i];
        in->views[i] = hv;
    }
    return 0;
}

/* ---------------------------------------------------------------- outputs */

/* Host copy of one output (contiguous, dtype of the view). */
static int download(hir_backend *be, const hir_view *v, void **host, hir_error *e)
{
    size_t bytes;
    *host = NULL;
    if (hir_view_size_checked(v, NULL, &bytes))
        return hir_error_set(e, "output size does not fit in 64 bits");
    *host = malloc(bytes ? bytes : 1);
    if (!*host)
        return hir_error_set(e, "out of host memory");
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

typedef struct outputs {
    int n;
    void **host;
    hir_shard *shard;
    hir_dtype *dtype;
    int *present;
} outputs;

static void outputs_free(outputs *o)
{
    for (int i = 0; i < o->n; i++)
        free(o->host ? o->host[i] : NULL);
    free(o->host);
    free(o->shard);
    free(o->dtype);
    free(o->present);
    memset(o, 0, sizeof *o);
}

static int fetch_outputs(hir_interp *it, hir_program *p, hir_backend *be, int rank,
                         outputs *out, hir_error *e)
{
    memset(out, 0, sizeof *out);
    out->n = p->outputs.n;
    out->host = calloc((size_t)out->n + 1, sizeof *out->host);
    out->shard = calloc((size_t)out->n + 1, sizeof *out->shard);
    out->dtype = calloc((size_t)out->n + 1, sizeof *out->dtype);
    out->present = calloc((size_t)out->n + 1, sizeof *out->present);
    if (!out->host || !out->shard || !out->dtype || !out->present)
        return hir_error_set(e, "out of host memory");
    for (int i = 0; i < out->n; i++) {
        hir_tensor *t = hir_value_tensor(p->outputs.items[i]);
        if (!t)
            return hir_error_set(e, "output %d is a scalar; only tensor outputs are supported",
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
            return hir_error_set(e, "rank %d: output T%" PRId64 " holds %" PRId64
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
                        hir_error *e)
{
    if (mkdir(o->save_dir, 0777) && errno != EEXIST)
        return hir_error_set(e, "rank %d: cannot create %s: %s", rank, o->save_dir,
                             strerror(errno));
    for (int i = 0; i < out->n; i++) {
        if (!out->present[i])
            continue;
        char nm[64], path[4096];
        value_name(p->outputs.items[i], nm, sizeof nm);
        snprintf(path, sizeof path, "%s/%s.rank%d.npy", o->save_dir, nm, rank);
        if (hir_npy_write(path, out->host[i], out->dtype[i], out->shard[i].ndim,
                          out->shard[i].local, o->raw_bf16 ? HIR_NPY_RAW_BF16 : 0, e))
            return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- gathering to rank 0 */

/* every rank gets every rank's `bytes` (small messages over the bootstrap) */
static int allgather_small(hir_boot *boot, const void *mine, void *all, size_t bytes,
                           hir_error *e)
{
    int size = hir_boot_size(boot), rank = hir_boot_rank(boot);
    int *team = malloc(sizeof(int) * (size_t)size);
    if (!team)
        return hir_error_set(e, "out of host memory");
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

/* ---------------------------------------------------------------- unmatched P2P */

/* Every P2P send must have met a receive: a small send completes on its own on some backends
 * (MPI buffers it), so a program that ends with a send nobody received would pass unnoticed.
 * The per-peer counts of all runs are shared; every rank reaches the same verdict. */
static hir_run_status check_p2p_matched(hir_interp *it, hir_boot *boot, hir_error *e)
{
    int size = hir_boot_size(boot), rank = hir_boot_rank(boot);
    const int64_t *sent, *recvd;
    hir_interp_p2p_counts(it, &sent, &recvd);
    size_t row = 2 * (size_t)size;
    int64_t *mine = malloc(row * sizeof *mine);
    int64_t *all = malloc(row * (size_t)size * sizeof *all);
    hir_run_status st = HIR_RUN_OK;
    if (!mine || !all) {
        hir_error_set(e, "out of host memory");
        st = HIR_RUN_FAILED;
        goto out;
    }
    memcpy(mine, sent, (size_t)size * sizeof *mine);
    memcpy(mine + size, recvd, (size_t)size * sizeof *mine);
    if (allgather_small(boot, mine, all, row * sizeof *mine, e)) {
        st = HIR_RUN_FAILED;
        goto out;
    }
    for (int from = 0; from < size && st == HIR_RUN_OK; from++)
        for (int to = 0; to < size; to++) {
            int64_t s = all[(size_t)from * row + (size_t)to];
            int64_t r = all[(size_t)to * row + (size_t)size + (size_t)from];
            if (s == r)
                continue;
            hir_error_set(e, "rank %d: the program's P2P communication does not match: rank %d "
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

/* ---------------------------------------------------------------- check */

typedef struct cmp_rec {
    int64_t n, mismatches, first_bad;
    double max_abs, max_rel, got, want, atol, rtol;
    int failed;                /* could not compare (message on that rank) */
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

static int same_shard(const hir_shard *a, const hir_shard *b)
{
    if (a->ndim != b->ndim) return 0;
    for (int d = 0; d < a->ndim; d++)
        if (a->local[d] != b->local[d] || a->offset[d] != b->offset[d] ||
            a->global[d] != b->global[d])
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
                           hir_error *e)
{
    int rc = 0;
    for (int k = 0; k < ndefs && !rc; k++) {
        hir_deferred_gemm *d = &defs[k];
        for (int i = 0; i < rp->outputs.n; i++) {
            hir_view vw;
            hir_error ignore;
            if (!want->present[i] || hir_interp_output(it, i, &vw, &ignore))
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
                    !(want->host[i] = malloc(hir_view_bytes(&vw) + 1)) ||
                    cpu->ops->download(cpu, want->host[i], vw.data, hir_view_bytes(&vw), e))
                    rc = want->host[i] ? -1 : hir_error_set(e, "out of host memory");
                break;
            }
            hir_gemm g = d->g;
            g.bias = d->has_bias ? &d->bias : NULL;
            g.out.data = (char *)got->host[i] + off;
            hir_gemm_check r;
            if (hir_cpu_verify_gemm(&g, o->check_vectors, o->seed * 0x9e3779b97f4a7c15ull +
                                    (uint64_t)k * 1000003u + (uint64_t)rank, &r, e)) {
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
            break;
        }
    }
    return rc;
}

/* The GEMMs the reference backend still defers (none where its table has no take_deferred). */
static int take_deferred(hir_backend *cpu, hir_deferred_gemm **defs, int *n, hir_error *e)
{
    *defs = NULL;
    *n = 0;
    return cpu->ops->check ? cpu->ops->check->take_deferred(cpu, defs, n, e) : 0;
}

/* This rank's comparison of every output it holds with the reference's (into mine); the first
 * output that could not be compared is named on stderr. */
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
        hir_error ce = {{0}, -1};
        if (got->dtype[i] != want->dtype[i]) {
            hir_error_set(&ce, "dtype %s in the program, %s in the reference",
                          hir_dtype_name(got->dtype[i]), hir_dtype_name(want->dtype[i]));
            c->failed = 1;
        } else if (hir_check_compare_region(got->host[i], &got->shard[i], want->host[i],
                                            &want->shard[i], got->dtype[i], &r, &cnt, &ce)) {
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
                     value_name(mp->outputs.items[i], nm, sizeof nm), ce.msg);
        }
    }
    if (firstmsg[0])
        fprintf(o->err, "check: %s\n", firstmsg);
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
            i, value_name(mp->outputs.items[i], nm, sizeof nm), "",
            value_name(rp->outputs.items[i], rn, sizeof rn),
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
                "stderr)\n", t->nfail);
    if (!t->nfail && tot->n == 0 && t->empty)
        fprintf(o->out, "check:   the output has no elements: nothing to compare\n");
    else if (!t->nfail && tot->n == 0)
        fprintf(o->out, "check:   no rank holds a region of this output that the "
                "reference also holds\n");
}

static int scale_inputs(hir_backend *be, inputs *in, double f, hir_error *e);

static hir_run_status check_outputs(const hir_run_options *o, hir_boot *boot, loaded *main,
                                    loaded *ref, const outputs *got, hir_backend *cpu,
                                    const hir_interp_config *base, double in_scale,
                                    hir_error *e)
{
    int rank = hir_boot_rank(boot), size = hir_boot_size(boot);
    hir_program *rp = ref->p, *mp = main->p;
    if (rp->inputs.n != mp->inputs.n || rp->outputs.n != mp->outputs.n)
        return refuse(e, rank, "the reference %s does not have the program's number of inputs "
                      "and outputs%s", ref->src.name, "");
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
    if (make_inputs(it, rp, cpu, o, mp, rank, &in, e) ||
        (in_scale != 1.0 && scale_inputs(cpu, &in, in_scale, e)) ||
        hir_interp_run(it, in.views, e) ||
        take_deferred(cpu, &defs, &ndefs, e) ||
        fetch_outputs(it, rp, cpu, rank, &want, e)) {
        free(defs);
        hir_interp_destroy(it);
        inputs_free(&in, cpu);
        outputs_free(&want);
        return HIR_RUN_FAILED;
    }
    int n = got->n;
    cmp_rec *mine = calloc((size_t)n + 1, sizeof *mine);
    cmp_rec *all = calloc((size_t)(n + 1) * (size_t)size, sizeof *all);
    if (!mine || !all) {
        hir_error_set(e, "out of host memory");
        goto out;
    }
    if (verify_deferred(o, it, rp, cpu, defs, ndefs, got, &want, mine, rank, e))
        goto out;
    compare_local(o, mp, got, &want, mine, rank);
    if (allgather_small(boot, mine, all, sizeof(cmp_rec) * (size_t)(n + 1), e))
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
    inputs_free(&in, cpu);
    outputs_free(&want);
    return st;
}

/* ---------------------------------------------------------------- --vary-inputs */

/* Runs alternate between two input sets: the generated one and the same scaled by 2 (exact in
 * every float format for data in [-1, 1)), switched in place on the device before a run, so
 * the program and a captured graph keep their pointers and nothing is generated twice. The
 * previous run's outputs are filled with NaN first. A GEMM then changes by 4x, a copy by 2x:
 * neither an output left from an earlier run nor one computed from earlier inputs can pass the
 * check, which rebuilds the inputs of the last run. Untimed. */
typedef struct vary {
    hir_interp *it;
    hir_backend *be;
    hir_program *p;
    inputs *in;
    int runs, cur;               /* cur: 1 when the inputs are scaled by 2 */
} vary;

static int scale_inputs(hir_backend *be, inputs *in, double f, hir_error *e)
{
    hir_stream *s = be->ops->stream_main(be);
    for (int i = 0; i < in->n; i++) {
        if (!in->dev[i] || !hir_dtype_is_float(in->views[i].dtype))
            continue;
        hir_operand a = {0}, k = {0};
        a.view = in->views[i];
        k.is_scalar = 1;
        k.f = f;
        if (be->ops->binary(be, s, HIR_BIN_MUL, &in->views[i], &a, &k, e))
            return -1;
    }
    return be->ops->synchronize(be, e);
}

static int vary_prepare(void *ctx, int iter, hir_error *e)
{
    vary *v = ctx;
    hir_backend *be = v->be;
    hir_stream *s = be->ops->stream_main(be);
    int j = v->runs++ % 2;
    if (j != v->cur && scale_inputs(be, v->in, j ? 2.0 : 0.5, e))
        return -1;
    v->cur = j;
    for (int i = 0; i < v->p->outputs.n; i++) {
        hir_view out;
        hir_error ignore;
        if (hir_interp_output(v->it, i, &out, &ignore) || !out.data ||
            !hir_dtype_is_float(out.dtype))
            continue;
        int is_input = 0;
        for (int k = 0; k < v->in->n; k++)
            is_input |= v->in->dev[k] == out.data;
        if (!is_input && be->ops->fill(be, s, &out, NAN, e))
            return -1;
    }
    return be->ops->synchronize(be, e);
}

/* ---------------------------------------------------------------- the job */

/* The backend named by --device (or the registry's default), refused unless this build has it
 * and it can run here. */
static hir_run_status choose_device(const hir_run_options *o, int rank,
                                    const hir_backend_entry **dev, hir_error *e)
{
    char why[160];
    *dev = o->device ? hir_registry_find(o->device) : hir_registry_default();
    if (!*dev)
        return refuse(e, rank, "--device=%s: expected %s", o->device,
                      hir_registry_names(why, sizeof why));
    if (!hir_registry_available(*dev, why, sizeof why))
        return refuse(e, rank, "--device=%s: %s", (*dev)->name, why);
    return HIR_RUN_OK;
}

/* The statement hooks of the guard room: the watchdog (when there is one) hears of every
 * statement, then HIR_FAULT=rank:line:kind may fire (fault.c). */
static int guard_hooks(hir_interp *it, hir_watchdog *wd, hir_error *e)
{
    if (wd && hir_interp_add_hook(it, &(hir_interp_hook){.before = hir_watchdog_before,
                                                         .ctx = wd}, e))
        return -1;
    return hir_interp_add_hook(it, &(hir_interp_hook){.before = hir_fault_before_stmt}, e);
}

/* The watchdog stops (and leaves the interpreter's hooks) before work that may take long
 * legitimately, and at the end. */
static void watch_stop(hir_interp *it, hir_watchdog **wd)
{
    if (it && *wd)
        hir_interp_remove_hook(it, &(hir_interp_hook){.before = hir_watchdog_before, .ctx = *wd});
    hir_watchdog_stop(*wd);
    *wd = NULL;
}

static int load_kernels(const hir_run_options *o, hir_backend *be, hir_error *e)
{
    for (int i = 0; i < o->nkernels; i++) {
        const char *spec = o->kernels[i], *eq = strchr(spec, '=');
        if (!eq || eq == spec)
            return hir_error_set(e, "--kernel %s: expected GROUP=FILE", spec);
        if (!be->ops->kernels) {
            const hir_backend_entry *k = hir_registry_offering(HIR_OFFER_KERNELS);
            if (k && hir_registry_built(k))
                return hir_error_set(e, "--kernel needs --device=%s", k->name);
            return hir_error_set(e, "--kernel needs the %s backend, which this build lacks",
                                 k ? k->title : "a kernel-running");
        }
        if (be->ops->kernels->load(be, atoi(spec), eq + 1, e))
            return -1;
    }
    return 0;
}

/* One job on one rank, phase by phase; job_end releases whatever the phases made. */
typedef struct job {
    const hir_run_options *o;
    hir_boot *boot;
    int rank, size;
    loaded main, ref;
    verbose_log vlog;
    const hir_backend_entry *dev, *refb;
    int is_cpu;                  /* the device is the reference backend */
    int located;                 /* past the device choice: failures get the rank prefix */
    hir_backend *be, *cpu;       /* cpu: the reference run's backend (be itself when it can) */
    hir_interp_config cfg;
    hir_watchdog *wd;
    hir_interp *it;
    inputs in;
    outputs out;
    vary vi;
    hir_bench_result bres;
} job;

/* Load and verify: the program (and the --check reference), each read, verified and agreed
 * on across ranks by load_program. */
static hir_run_status job_load(job *j, hir_error *e)
{
    const hir_run_options *o = j->o;
    hir_run_status st = load_program(o->program, "program", o->container, j->boot, o->err, o,
                                     &j->main, e);
    if (!st && o->check && o->check_ref)
        st = load_program(o->check_ref, "reference", 0, j->boot, o->err, o, &j->ref, e);
    return st;
}

/* The backends: the device's, and the reference's own when --check needs one that defers the
 * GEMMs the randomized check covers; then what a run needs from the options. */
static hir_run_status job_backends(job *j, hir_error *e)
{
    const hir_run_options *o = j->o;
    hir_run_status st = choose_device(o, j->rank, &j->dev, e);
    if (st)
        return st;
    j->located = 1;
    hir_backend_config bc = {.boot = j->boot, .rank = j->rank, .size = j->size,
                             .device = hir_boot_local_rank(j->boot),
                             .timeout = o->timeout,
                             .p2p_protocol = o->p2p_protocol,
                             .p2p_host_staged = o->p2p_host_staged};
    j->refb = hir_registry_reference();
    j->is_cpu = j->dev == j->refb;
    if (hir_registry_create(j->dev, &bc, &j->be, e))
        return HIR_RUN_FAILED;
    hir_backend_config rc_cfg = bc;
    rc_cfg.defer_gemm_flops = o->check_mode == HIR_CHECK_FULL ? 0
                              : o->check_mode == HIR_CHECK_RANDOMIZED ? 1 : 1073741824.0;
    if (o->check && (!j->is_cpu || rc_cfg.defer_gemm_flops > 0) &&
        hir_registry_create(j->refb, &rc_cfg, &j->cpu, e))
        return HIR_RUN_FAILED;
    if (!j->cpu)
        j->cpu = j->be;
    if (o->vary_inputs && (o->inputs != HIR_INPUTS_GENERATED || o->data != HIR_DATA_RANDOM))
        return refuse(e, j->rank, "--vary-inputs needs generated random inputs "
                      "(--inputs=random)%s%s", "", "");
    if (load_kernels(o, j->be, e))
        return HIR_RUN_FAILED;
    j->cfg.rank = j->rank;
    j->cfg.size = j->size;
    j->cfg.num_streams = o->num_streams;
    j->cfg.binds = o->binds;
    j->cfg.nbinds = o->nbinds;
    j->cfg.no_resolve = o->no_resolve;
    if (o->verbose) {
        j->vlog.f = j->size > 1 ? open_memstream(&j->vlog.buf, &j->vlog.len) : NULL;
        j->cfg.trace = j->vlog.f ? j->vlog.f : o->err;   /* one rank: straight to stderr */
    }
    return HIR_RUN_OK;
}

/* Refusals before anything runs: NCCL transports on a backend without NCCL, and on a device
 * (which has no timeout of its own) CUDA-IPC exchanges ordered for the other protocol. */
static hir_run_status job_refusals(job *j, hir_error *e)
{
    const hir_run_options *o = j->o;
    hir_stmt *nccl = NULL;
    if (!(j->be->ops->caps & HIR_CAP_NCCL) &&
        !hir_block_walk(&j->main.p->body, 0, find_nccl, &nccl)) {
        char where[300];
        snprintf(where, sizeof where, "%s", o->program);
        if (nccl->loc.src) {
            int line, col;
            hir_source_linecol((hir_source *)nccl->loc.src, nccl->loc.begin, &line, &col);
            snprintf(where, sizeof where, "%s:%d:%d", nccl->loc.src->name, line, col);
        }
        char msg[800];
        snprintf(msg, sizeof msg, "%s: %s with backend=NCCL, but this build's %s backend has "
                 "no NCCL (configure with -DHIR_ENABLE_NCCL=ON and NCCL_HOME=DIR); only CUDA-IPC "
                 "transfers run on the GPU: lower the program with --backend=cuda or run it with "
                 "--device=%s", where, hir_ops[nccl->op].keyword, j->dev->title, j->refb->name);
        return refuse(e, j->rank, "%s%s", msg, "");
    }
    if (!j->is_cpu) {
        int fatal = 0;
        hir_check_p2p_order(j->main.p, o->p2p_protocol, j->rank == 0 ? o->err : NULL, &fatal);
        if (fatal)
            return refuse(e, j->rank, "%s: its CUDA-IPC exchanges are ordered for the other P2P "
                          "protocol%s", o->program, "");
    }
    return HIR_RUN_OK;
}

/* The interpreter, watched on a device, with the guard's hooks; extents from .npy shapes
 * bound, then the resource limits checked on every rank together. */
static hir_run_status job_interp(job *j, hir_error *e)
{
    /* On the GPU a blocked CUDA call has no timeout of its own: watch the run (watchdog.c) */
    if (!j->is_cpu)
        j->wd = hir_watchdog_start(j->o->timeout + 30, j->rank);
    if (hir_interp_create(j->main.p, j->be, &j->cfg, &j->it, e))
        return HIR_RUN_REFUSED;
    if (guard_hooks(j->it, j->wd, e))
        return HIR_RUN_FAILED;
    if (j->o->inputs == HIR_INPUTS_DIR &&
        bind_dir_extents(j->it, j->main.p, j->o, j->main.p, j->rank, e))
        return HIR_RUN_FAILED;
    int limits = hir_limits_check(j->it, j->main.p, j->be, j->boot, e);
    return limits > 0 ? HIR_RUN_REFUSED : limits < 0 ? HIR_RUN_FAILED : HIR_RUN_OK;
}

/* The runs: timed or traced through hir_bench_program, else --iters plain runs with the
 * progress line. Results are reused run to run (interp.c): each run starts on an idle
 * device. */
static int job_run(job *j, hir_error *e)
{
    const hir_run_options *o = j->o;
    hir_bench_run_fn prep = o->vary_inputs ? vary_prepare : NULL;
    if (o->bench > 0 || o->trace_json)
        return hir_bench_program(o, j->boot, j->it, j->be, j->in.views, prep, &j->vi, &j->bres,
                                 e);
    progress_line pl = {o->err, j->size, 0, o->iters, mono_s(), 0, o->progress_after, false};
    hir_interp_hook ph = {.before = progress_on_stmt, .ctx = &pl};
    bool hooked = o->progress && j->rank == 0;
    if (hooked && hir_interp_add_hook(j->it, &ph, e))   /* bench.c hooks --bench likewise */
        return -1;
    int failed = 0;
    for (int i = 0; i < o->iters && !failed; i++) {
        pl.iter = i;
        failed = (i && j->be->ops->synchronize(j->be, e)) || (prep && prep(&j->vi, i, e)) ||
                 hir_interp_run(j->it, j->in.views, e);
    }
    progress_end(&pl);
    if (hooked)
        hir_interp_remove_hook(j->it, &ph);
    return failed ? -1 : 0;
}

/* Outputs: fetched to the host, P2P counts agreed across ranks, saved with --save-outputs. */
static hir_run_status job_outputs(job *j, hir_error *e)
{
    hir_run_status st;
    if (j->be->ops->synchronize(j->be, e) ||
        fetch_outputs(j->it, j->main.p, j->be, j->rank, &j->out, e))
        return HIR_RUN_FAILED;
    if ((st = check_p2p_matched(j->it, j->boot, e)) != HIR_RUN_OK)
        return st;
    watch_stop(j->it, &j->wd);   /* the CPU check below may take long, legitimately */
    if (j->o->save_dir && save_outputs(j->o, j->main.p, &j->out, j->rank, e))
        return HIR_RUN_FAILED;
    return HIR_RUN_OK;
}

/* --check against the reference run (which sees the inputs of the run whose outputs were
 * kept), then the benchmark's JSON with the verdict. */
static hir_run_status job_check(job *j, hir_error *e)
{
    const hir_run_options *o = j->o;
    hir_run_status st = HIR_RUN_OK;
    if (o->check)
        st = check_outputs(o, j->boot, &j->main, o->check_ref ? &j->ref : &j->main, &j->out,
                           j->cpu, &j->cfg, j->vi.cur ? 2.0 : 1.0, e);
    if (j->bres.iters > 0 && o->bench_json && j->rank == 0 &&
        (st == HIR_RUN_OK || st == HIR_RUN_CHECK_FAILED)) {
        static const char *const modes[] = {"auto", "full", "randomized"};
        hir_bench_meta meta = {.streams = o->num_streams,
                               .protocol = j->is_cpu ? NULL
                                           : o->p2p_protocol == HIR_P2P_PUT ? "put" : "get",
                               .check = !o->check ? "not checked"
                                        : st == HIR_RUN_OK ? "PASS" : "FAIL",
                               .check_mode = o->check ? modes[o->check_mode] : NULL,
                               .vary_inputs = o->vary_inputs};
        if (hir_bench_write_json(o->bench_json, &j->bres, &meta, e))
            st = HIR_RUN_FAILED;
    }
    return st;
}

/* Release in order: the interpreter first (it ends communication still in flight on the input
 * buffers), then inputs, then, when every rank got here the same way, peer memory (CUDA IPC),
 * then the backends. A failure past the device choice gets the rank prefix. */
static hir_run_status job_end(job *j, hir_run_status st, hir_error *e)
{
    hir_bench_result_free(&j->bres);
    watch_stop(j->it, &j->wd);
    outputs_free(&j->out);
    hir_interp_destroy(j->it);
    if (j->be)
        inputs_free(&j->in, j->be);
    if (j->it && (st == HIR_RUN_OK || st == HIR_RUN_CHECK_FAILED) &&
        j->be->ops->release_peers(j->be, e))
        st = HIR_RUN_FAILED;
    if (j->cpu && j->cpu != j->be)
        j->cpu->ops->destroy(j->cpu);
    if (j->be)
        j->be->ops->destroy(j->be);
    if (j->located && st == HIR_RUN_FAILED && strncmp(e->msg, "rank ", 5)) {
        char msg[sizeof e->msg];
        snprintf(msg, sizeof msg, "%s", e->msg);
        int peer = e->peer;
        hir_error_set(e, "rank %d: %s", j->rank, msg);
        e->peer = peer;
    }
    verbose_finish(&j->vlog, st, j->boot, j->o->err);
    loaded_free(&j->main);
    loaded_free(&j->ref);
    return st;
}

hir_run_status hir_run_job(const hir_run_options *o, hir_boot *boot, hir_error *e)
{
    job j;
    memset(&j, 0, sizeof j);
    j.o = o;
    j.boot = boot;
    j.rank = hir_boot_rank(boot);
    j.size = hir_boot_size(boot);
    hir_run_status st;
    if ((st = job_load(&j, e)) || (st = job_backends(&j, e)) || (st = job_refusals(&j, e)) ||
        (st = job_interp(&j, e)))
        return job_end(&j, st, e);
    j.vi = (vary){.it = j.it, .be = j.be, .in = &j.in, .p = j.main.p};
    if (make_inputs(j.it, j.main.p, j.be, o, j.main.p, j.rank, &j.in, e) || job_run(&j, e))
        return job_end(&j, HIR_RUN_FAILED, e);
    if ((st = job_outputs(&j, e)))
        return job_end(&j, st, e);
    return job_end(&j, job_check(&j, e), e);
}

/* ---------------------------------------------------------------- hir-run --bench / --trace
 * (the timing loop, the statement hook and the trace are runner/bench/bench.c's) */

typedef struct prog_ctx {
    hir_interp *it;
    hir_backend *be;
    const hir_view *inputs;
    hir_graph *graph;
    hir_bench_counters *c;
    hir_bench_counters captured;     /* what one run counts, replayed with the graph */
    int64_t bare_launches, bare_other;
} prog_ctx;

static int run_eager(void *ctx, int iter, hir_error *e)
{
    prog_ctx *p = ctx;
    return hir_interp_run(p->it, p->inputs, e);
}

static int run_graph(void *ctx, int iter, hir_error *e)
{
    prog_ctx *p = ctx;
    *p->c = p->captured;
    p->c->nstreams = 0;              /* a graph runs from the main stream, which is timed anyway */
    return p->be->ops->graph->launch(p->be, p->graph, e);
}

static int run_bare(void *ctx, int iter, hir_error *e)
{
    prog_ctx *p = ctx;
    *p->c = p->captured;
    return p->be->ops->profile->launch_replay(p->be, &p->bare_launches, &p->bare_other, e);
}

/* --bench-bare: one eager run with the backend recording its kernel launches, then the loop
 * that replays exactly those launches (cuLaunchKernel only) timed like the eager runs, then one
 * more eager run so that the buffers end as a real run leaves them. A rank that cannot replay
 * (its run freed device memory) makes every rank skip the loop, saying why. */
static int bench_bare(prog_ctx *p, hir_boot *boot, const hir_bench_opts *eager,
                      hir_bench_result *res, hir_error *e)
{
    hir_backend *be = p->be;
    if (!be->ops->profile) {
        snprintf(res->bare_why, sizeof res->bare_why, "the %s backend records no launches",
                 be->ops->name);
        return 0;
    }
    if (be->ops->synchronize(be, e) < 0) return -1;
    if (eager->prepare && eager->prepare(eager->prepare_ctx, 0, e) < 0) return -1;
    if (boot && hir_boot_barrier(boot, e) < 0) return -1;
    memset(p->c, 0, sizeof *p->c);
    if (be->ops->profile->launch_record(be, 1, e) < 0) return -1;
    int rc = hir_interp_run(p->it, p->inputs, e);
    hir_error ignore;
    be->ops->profile->launch_record(be, 0, &ignore);
    if (rc < 0 || be->ops->synchronize(be, e) < 0) return -1;
    p->captured = *p->c;
    hir_error pe = {{0}, -1};
    int ok = be->ops->profile->launch_replay(be, &p->bare_launches, &p->bare_other, &pe) == 0;
    int all = hir_bench_all_ok(boot, ok, e);
    if (all < 0) return -1;
    if (!all) {
        snprintf(res->bare_why, sizeof res->bare_why, "%.150s",
                 ok ? "another rank could not replay its launches" : pe.msg);
        return be->ops->synchronize(be, e);
    }
    hir_bench_opts bo = *eager;
    bo.prepare = NULL;
    bo.progress = 0;
    bo.mode = "bare cuLaunchKernel replay";
    hir_bench_result br;
    if (hir_bench_run(be, boot, &bo, p->c, run_bare, p, &br, e) < 0) return -1;
    res->bare_ok = 1;
    res->bare_host_us = br.host_us;
    res->bare_host_us_min = br.host_us_min;
    res->bare_launches = p->bare_launches;
    res->bare_other = p->bare_other;
    hir_bench_result_free(&br);
    if (be->ops->synchronize(be, e) < 0) return -1;
    if (eager->prepare && eager->prepare(eager->prepare_ctx, 0, e) < 0) return -1;
    if (boot && hir_boot_barrier(boot, e) < 0) return -1;
    return hir_interp_run(p->it, p->inputs, e);
}

/* One eager run to set everything up, then a captured run; on any rank's failure every rank
 * stays eager (a message says why). Returns 1 with the graph, 0 without, -1 on error. */
static int capture(prog_ctx *p, hir_boot *boot, hir_bench_hook *h, FILE *err, int rank,
                   hir_error *e)
{
    hir_backend *be = p->be;
    if (hir_interp_run(p->it, p->inputs, e) < 0 || be->ops->synchronize(be, e) < 0) return -1;
    if (boot && hir_boot_barrier(boot, e) < 0) return -1;
    hir_error ce = {{0}, -1};
    int ok = 0;
    if (be->ops->graph) {
        ok = be->ops->graph->begin(be, &ce) == 0;
    } else {
        const hir_backend_entry *g = hir_registry_offering(HIR_OFFER_GRAPHS);
        if (g)
            hir_error_set(&ce, "%s graphs need the %s backend%s", g->title, g->title,
                          hir_registry_built(g) ? "" : ", which this build lacks");
        else
            hir_error_set(&ce, "no backend of this build captures graphs");
    }
    if (ok) {
        memset(p->c, 0, sizeof *p->c);
        h->capturing = 1;
        h->escaped = NULL;
        int rc = hir_interp_run(p->it, p->inputs, &ce);
        h->capturing = 0;
        if (rc == 0 && h->escaped) {
            int line = 0, col = 0;
            if (h->escaped->loc.src)
                hir_source_linecol((hir_source *)h->escaped->loc.src, h->escaped->loc.begin,
                                   &line, &col);
            hir_error_set(&ce, "line %d queues work on a stream that never waited for the main "
                               "stream, so a capture would miss it", line);
            rc = -1;
        }
        ok = be->ops->graph->end(be, rc == 0, &p->graph, rc == 0 ? &ce : &(hir_error){{0}, -1})
             == 0;
        p->captured = *p->c;
    }
    int all = hir_bench_all_ok(boot, ok, e);
    if (all < 0) return -1;
    if (!all) {
        if (p->graph) be->ops->graph->destroy(be, p->graph);
        p->graph = NULL;
        if (!ok) fprintf(err, "rank %d: --graph: not captured (%s); timing eager runs\n", rank,
                         ce.msg[0] ? ce.msg : "a run failed during capture");
        /* leave the backend clean for eager runs */
        if (be->ops->synchronize(be, e) < 0) return -1;
        return 0;
    }
    return 1;
}

typedef struct prep_ctx {
    hir_bench_run_fn user;
    void *user_ctx;
    hir_backend *be;
    hir_boot *boot;
    int graph;
} prep_ctx;

/* Before each run: the caller's step (inputs, outputs), then for graph replays a barrier (every
 * rank's previous replay is over) and the CUDA-IPC semaphores start over; hir_bench_run's own
 * barrier follows, so no rank signals before every rank has reset. */
static int prepare_run(void *ctx, int iter, hir_error *e)
{
    prep_ctx *p = ctx;
    if (p->user && p->user(p->user_ctx, iter, e) < 0) return -1;
    if (p->graph) {
        if (p->boot && hir_boot_barrier(p->boot, e) < 0) return -1;
        if (p->be->ops->graph && p->be->ops->graph->rearm(p->be, e) < 0) return -1;
    }
    return 0;
}

int hir_bench_program(const hir_run_options *o, hir_boot *boot, hir_interp *it,
                      hir_backend *be, const hir_view *inputs, hir_bench_run_fn prepare,
                      void *prepare_ctx, hir_bench_result *res, hir_error *e)
{
    int rank = boot ? hir_boot_rank(boot) : 0;
    memset(res, 0, sizeof *res);
    hir_bench_counters counters;
    memset(&counters, 0, sizeof counters);
    hir_bench_hook hook;
    memset(&hook, 0, sizeof hook);
    hook.counters = &counters;
    hir_trace *trace = NULL;
    prog_ctx p = {.it = it, .be = be, .inputs = inputs, .c = &counters};
    prep_ctx pc = {.user = prepare, .user_ctx = prepare_ctx, .be = be, .boot = boot};
    /* the interpreter calls the hook for every statement while this runs */
    hir_interp_hook bh = {.before = hir_bench_before, .after = hir_bench_after, .ctx = &hook};
    if (hir_interp_add_hook(it, &bh, e))
        return -1;
    int rc = -1;
    FILE *out = o->out ? o->out : stdout, *err = o->err ? o->err : stderr;

    if (o->bench > 0) {
        hir_bench_opts bo = {.warmup = o->warmup, .iters = o->bench, .progress = o->progress, .progress_after = o->progress_after,
                             .err = err, .program = o->program, .mode = "eager",
                             .prepare = prepare_run, .prepare_ctx = &pc};
        hir_bench_run_fn fn = run_eager;
        if (o->graph) {
            if (prepare && prepare(prepare_ctx, 0, e) < 0) goto out;
            int g = capture(&p, boot, &hook, err, rank, e);
            if (g < 0) goto out;
            if (g) {
                fn = run_graph;
                bo.mode = "graph";
                pc.graph = 1;
            } else {
                bo.mode = "eager (graph capture failed)";
            }
        }
        if (hir_bench_run(be, boot, &bo, &counters, fn, &p, res, e) < 0) goto out;
        if (o->bench_bare && fn == run_eager && !o->graph &&
            bench_bare(&p, boot, &bo, res, e) < 0)
            goto out;
        if (o->bench_bare && o->graph)
            snprintf(res->bare_why, sizeof res->bare_why, "%s",
                     "--graph times graph replays; run --bench-bare without --graph");
        if (rank == 0)
            hir_bench_print(out, res);
    } else {
        /* plain runs; with --trace the last one is recorded */
        int n = o->iters > 0 ? o->iters : 1;
        for (int i = 0; i < n - (o->trace_json != NULL); i++)
            if ((i && be->ops->synchronize(be, e) < 0) ||
                (prepare && prepare(prepare_ctx, i, e) < 0) ||
                hir_interp_run(it, inputs, e) < 0)
                goto out;
    }
    if (o->trace_json) {
        if (hir_trace_create(be, boot, &trace, e) < 0) goto out;
        hook.trace = trace;
        if (be->ops->synchronize(be, e) < 0) goto out;
        if (prepare && prepare(prepare_ctx, -1, e) < 0) goto out;
        if (boot && hir_boot_barrier(boot, e) < 0) goto out;
        if (hir_trace_arm(trace, e) < 0) goto out;
        if (hir_interp_run(it, inputs, e) < 0) goto out;
        if (be->ops->synchronize(be, e) < 0) goto out;
        if (hir_trace_disarm(trace, e) < 0) goto out;
        if (hir_trace_write(trace, o->trace_json, e) < 0) goto out;
        if (rank == 0)
            fprintf(out, "trace: %s (open in ui.perfetto.dev or chrome://tracing)\n",
                    o->trace_json);
    }
    rc = 0;
out:
    hir_interp_remove_hook(it, &bh);
    hook.trace = NULL;
    hir_trace_destroy(trace);
    if (p.graph) be->ops->graph->destroy(be, p.graph);
    return rc;
}
