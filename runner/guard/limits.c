/* limits.c — refuse, before anything is allocated, programs this job cannot hold: element
 * counts or byte sizes that overflow 64 bits (a located error) and programs whose inputs,
 * ALLOCATE buffers and fresh results need more memory than the backend has available. Every
 * rank shares its verdict so that all of them refuse together with the same message. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/guard/guard.h"
#include "runner/boot/boot.h"

/* What one rank found; exchanged with every other rank. */
typedef struct limit_rec {
    uint64_t need;           /* bytes of backend memory (saturated at UINT64_MAX) */
    uint64_t inputs, allocs, results;
    uint64_t avail;
    uint64_t node;           /* host identity: CPU-backend ranks of one node share its memory */
    int status;              /* 0 ok, 1 overflow (msg), 2 could not ask the backend (msg) */
    char msg[700];
    int located;             /* status 1 at [begin, end) of the program's source (every rank
                              * holds the same text: the job compared it) */
    uint32_t begin, end;
} limit_rec;

typedef struct limit_walk {
    hir_interp *it;
    hir_map seen;            /* tensors already counted */
    hir_map storage;         /* tensors that get storage elsewhere (ALLOCATE, views, inputs) */
    limit_rec *r;
} limit_walk;

static void fmt_bytes(uint64_t b, char *buf, size_t n)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (b == UINT64_MAX) {
        snprintf(buf, n, "more than 16 EiB");
        return;
    }
    double v = (double)b;
    int u = 0;
    while (v >= 1024 && u < 6) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, n, "%" PRIu64 " B", b);
    else
        snprintf(buf, n, "%.1f %s", v, units[u]);
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Bytes of t's local shard on this rank; 0 when t is not on this rank or its extents are not
 * known before the run (they are checked when it is made). -1: overflow, message in r. */
static int shard_bytes(limit_walk *w, const hir_tensor *t, hir_loc loc, uint64_t *bytes)
{
    *bytes = 0;
    hir_diag scratch;
    hir_diag_init(&scratch, NULL);
    hir_shard sh;
    int rc = hir_interp_shard(w->it, t, &sh, &scratch);
    hir_diag_fini(&scratch);
    if (rc || !sh.on_rank)
        return 0;
    uint64_t n = hir_dtype_size(t->dtype) ? hir_dtype_size(t->dtype) : 1;
    int64_t numel = 1;
    for (int d = 0; d < sh.ndim; d++) {
        if (__builtin_mul_overflow(numel, sh.local[d], &numel) ||
            __builtin_mul_overflow((uint64_t)numel, n, bytes) || *bytes > INT64_MAX) {
            char dims[300] = "";
            hir_source *src = hir_interp_program(w->it)->src;
            w->r->located = src && loc.src == src;
            w->r->begin = loc.begin;
            w->r->end = loc.end;
            size_t k = 0;
            for (int i = 0; i < sh.ndim && k < sizeof dims - 40; i++)
                k += (size_t)snprintf(dims + k, sizeof dims - k, "%s%" PRId64, i ? " x " : "",
                                      sh.local[i]);
            snprintf(w->r->msg, sizeof w->r->msg, "%sT%" PRId64 " has %s elements of %"
                     PRIu64 " byte%s: its size does not fit in 64 bits",
                     w->r->located ? "" : "error: ", t->number, dims,
                     n, n == 1 ? "" : "s");
            w->r->status = 1;
            return -1;
        }
    }
    *bytes = (uint64_t)numel * n;
    return 0;
}

/* the walk's tables could not grow: the check fails on this rank, and so does the job */
static int out_of_memory(limit_walk *w)
{
    snprintf(w->r->msg, sizeof w->r->msg,
             "out of memory (while adding up the program's memory needs)");
    w->r->status = 1;
    return -1;
}

static int count(limit_walk *w, const hir_tensor *t, hir_loc loc, uint64_t *bucket)
{
    if (!t || hir_map_get(&w->seen, (uintptr_t)t))
        return 0;
    if (hir_map_try_put(&w->seen, (uintptr_t)t, (void *)t))
        return out_of_memory(w);
    uint64_t b;
    if (shard_bytes(w, t, loc, &b))
        return -1;
    *bucket = sat_add(*bucket, b);
    return 0;
}

static bool mark_storage(hir_stmt *s, int depth, void *ctx)
{
    limit_walk *w = ctx;
    if (s->out && (s->op == HIR_OP_ALLOCATE || (hir_ops[s->op].flags & HIR_OPF_VIEW)) &&
        hir_map_try_put(&w->storage, (uintptr_t)s->out, s->out))
        return out_of_memory(w) == 0;
    return true;
}

static bool count_stmt(hir_stmt *s, int depth, void *ctx)
{
    limit_walk *w = ctx;
    if (s->op == HIR_OP_ALLOCATE)
        return count(w, s->out, s->loc, &w->r->allocs) == 0;
    /* a compute statement whose output has no storage of its own gets a fresh result */
    if (s->out && (hir_ops[s->op].flags & HIR_OPF_COMPUTE) &&
        !hir_map_get(&w->storage, (uintptr_t)s->out))
        return count(w, s->out, s->loc, &w->r->results) == 0;
    return true;
}

static void measure(hir_interp *it, hir_program *p, hir_backend *be, hir_boot *boot,
                    limit_rec *r)
{
    limit_walk w = {it, {0}, {0}, r};
    hir_map_init(&w.seen);
    hir_map_init(&w.storage);
    hir_diag e;
    hir_diag_init(&e, NULL);
    /* extents may use rank and numberOfStreams; the run binds them to these same values */
    if (hir_interp_bind_run_scalars(it, &e))
        out_of_memory(&w);
    for (int i = 0; i < p->inputs.n && !r->status; i++) {
        hir_tensor *t = hir_value_tensor(p->inputs.items[i]);
        if (t && hir_map_try_put(&w.storage, (uintptr_t)t, t))
            out_of_memory(&w);
        else if (t)
            count(&w, t, t->loc, &r->inputs);
    }
    if (!r->status && hir_block_walk(&p->body, 0, mark_storage, &w))
        hir_block_walk(&p->body, 0, count_stmt, &w);
    hir_map_fini(&w.seen);
    hir_map_fini(&w.storage);
    if (r->status) {
        hir_diag_fini(&e);
        return;
    }
    r->need = sat_add(sat_add(r->inputs, r->allocs), r->results);
    size_t avail = 0;
    if (be->ops->mem_available(be, &avail, &e)) {
        snprintf(r->msg, sizeof r->msg, "cannot tell how much %s memory is available: %.600s",
                 be->ops->name, hir_diag_last_error(&e));
        r->status = 2;
        hir_diag_fini(&e);
        return;
    }
    hir_diag_fini(&e);
    r->avail = avail;
    int rank = hir_interp_cfg(it)->rank;
    r->node = !(be->ops->caps & HIR_CAP_HOST_MEMORY) ? (uint64_t)rank : hir_boot_node_id(boot, rank);
}

int hir_limits_check(hir_interp *it, hir_program *p, hir_backend *be, hir_boot *boot,
                     hir_diag *e)
{
    int rank = hir_boot_rank(boot), size = hir_boot_size(boot);
    limit_rec *all = calloc((size_t)size, sizeof *all);
    int *team = calloc((size_t)size, sizeof *team);
    if (!all || !team) {
        free(all);
        free(team);
        hir_fail(e, "rank %d: out of host memory", rank);
        return -1;
    }
    measure(it, p, be, boot, &all[rank]);
    for (int r = 0; r < size; r++)
        team[r] = r;
    for (int r = 0; r < size && size > 1; r++)
        if (hir_boot_team_bcast(boot, team, size, r, &all[r], sizeof *all, e)) {
            free(all);
            free(team);
            return -1;
        }
    free(team);
    int st = 0;
    for (int r = 0; r < size && st == 0; r++) {
        const limit_rec *x = &all[r];
        hir_source *src = hir_interp_program(it)->src;
        if (x->status == 1 && x->located && src && e) {   /* the engine prints line and caret */
            hir_fail(e, "%s", x->msg);
            if (e->last) {
                e->last->loc = (hir_loc){src, x->begin, x->end};
                hir_diag_set_origin(e->last, "rank %d", r);
            }
            st = 1;
            continue;
        }
        if (x->status) {
            hir_fail(e, "rank %d: %s", r, x->msg);
            st = 1;
            continue;
        }
        /* ranks on one node with the CPU backend draw on the same host memory */
        uint64_t need = 0;
        int sharing = 0;
        for (int q = 0; q < size; q++)
            if (!all[q].status && all[q].node == x->node) {
                need = sat_add(need, all[q].need);
                sharing++;
            }
        if (need <= x->avail)
            continue;
        char n[40], a[40], in[40], al[40], re[40], tot[40];
        fmt_bytes(x->need, n, sizeof n);
        fmt_bytes(x->avail, a, sizeof a);
        fmt_bytes(x->inputs, in, sizeof in);
        fmt_bytes(x->allocs, al, sizeof al);
        fmt_bytes(x->results, re, sizeof re);
        fmt_bytes(need, tot, sizeof tot);
        char shared[160] = "";
        if (sharing > 1)
            snprintf(shared, sizeof shared, "; the %d ranks on its node need %s together",
                     sharing, tot);
        hir_fail(e, "rank %d: program needs %s of %s memory for its allocations (inputs "
                      "%s, ALLOCATE %s, results %s)%s, %s available", r, n,
                      be->ops->caps & HIR_CAP_HOST_MEMORY ? "host" : "device", in, al, re, shared, a);
        st = 1;
    }
    free(all);
    return st;
}
