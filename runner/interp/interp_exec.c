/* interp_exec.c — the executor of the Host IR interpreter of one rank (hostir-format.md §2):
 * every statement through exec_table, indexed by the op enum, with the statement hooks around
 * it; control flow (blocks, FOR, the host FOR, IF) and scalar definitions; the create/run/
 * destroy API and what hooks may ask. A statement family (ops_*.c, ops_internal.h) is reached
 * only through its table entries; the environment (interp_internal.h) holds the bindings. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "dialect/intops.h"
#include "runner/interp/ops_internal.h"

/* ---------------------------------------------------------------- statements */

static int exec_block(hir_interp *it, const hir_block *b, hir_diag *e);

static int exec_loop(hir_interp *it, const hir_scalar *idx, int64_t start, int64_t stop,
                     const hir_block *body, hir_diag *e)
{
    int64_t trips = 0;
    if (stop > start && (hir_sub_overflow(stop, start, &trips) || trips > HIR_MAX_LOOP_TRIPS))
        return interp_fail(it, e, "the loop from %" PRId64 " to %" PRId64 " would run more than %" PRId64
                           " iterations (HIR_MAX_LOOP_TRIPS), refused before its first",
                           start, stop, (int64_t)HIR_MAX_LOOP_TRIPS);
    /* the loops around this one multiply its trips: a nest of loops each under the limit
     * above can still never end (2^24 x 2^24), so the product is bounded too */
    int64_t outer = it->nest_work > 0 ? it->nest_work : 1, work = outer;
    int64_t bound = it->cfg.max_loop_work > 0 ? it->cfg.max_loop_work
                                              : HIR_INTERP_DEFAULT_LOOP_WORK;
    if (stop > start && (__builtin_mul_overflow(outer, trips, &work) || work > bound)) {
        return interp_fail(it, e, "the loop from %" PRId64 " to %" PRId64 " (%" PRId64
                           " iterations) inside loops of %" PRId64 " iterations in all would "
                           "run its body %s%" PRId64 " times, more than the bound on a loop "
                           "nest's work (%" PRId64 "; hir-run --max-loop-work=N); refused "
                           "before its first iteration", start, stop, trips, outer,
                           work == outer ? "more than " : "", work == outer ? INT64_MAX : work,
                           bound);
    }
    rt_scalar *slot = interp_scalar_slot(&it->scalars, idx);
    char sn[96];
    if (!slot)
        return interp_oom(it, e, "binding", interp_scalar_name(idx, sn, sizeof sn));
    rt_scalar saved = *slot;
    int64_t saved_work = it->nest_work;
    it->nest_work = stop > start ? work : outer;
    int level = it->loops++;
    if (level < INTERP_LOOP_DEPTH)
        it->loop_trips[level] = stop > start ? trips : 0;
    for (int64_t i = start; i < stop; i++) {
        slot = interp_scalar_slot(&it->scalars, idx);   /* the body may have grown the table */
        slot->v = i;
        slot->bound = 1;
        if (level < INTERP_LOOP_DEPTH)
            it->loop_at[level] = i - start;
        if (exec_block(it, body, e)) {
            it->loops--;
            it->nest_work = saved_work;
            return -1;
        }
    }
    it->loops--;
    it->nest_work = saved_work;
    *interp_scalar_slot(&it->scalars, idx) = saved;
    return 0;
}

/* The statement hooks (watchdog, fault injection, benchmarks, progress), in the order added:
 * 0 runs the statement, 1 skips it, -1 fails. */
static int hooks_before(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    for (int i = 0; i < it->nhooks; i++) {
        int h = it->hooks[i].before ? it->hooks[i].before(it->hooks[i].ctx, it, s, e) : 0;
        if (h)
            return h < 0 ? -1 : 1;
    }
    return 0;
}

static void hooks_after(hir_interp *it, const hir_stmt *s)
{
    for (int i = 0; i < it->nhooks; i++)
        if (it->hooks[i].after)
            it->hooks[i].after(it->hooks[i].ctx, it, s);
}

/* ---------------------------------------------------------------- statements, one entry each */

static int exec_for(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    int64_t start = 0, stop;
    const hir_iterdomain *id = s->u.kfor.id;
    if (interp_extent(it, id, &stop, e) ||
        (hir_id_start(id) && interp_eval(it, hir_id_start(id), &start, e)) ||
        (hir_id_stop(id) && interp_eval(it, hir_id_stop(id), &stop, e)))
        return -1;
    return exec_loop(it, s->u.kfor.index, start, stop, &s->body, e);
}

static int exec_host_for(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    int64_t a, b;
    if (interp_eval(it, s->u.hfor.start, &a, e) || interp_eval(it, s->u.hfor.stop, &b, e))
        return -1;
    return exec_loop(it, s->u.hfor.index, a, b, &s->body, e);
}

static int exec_if(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    int64_t c;
    if (interp_eval(it, s->u.cond.pred, &c, e))
        return -1;
    return exec_block(it, c ? &s->body : &s->else_body, e);
}

static int exec_scalar_def(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    /* A symbol that carries its own definition is evaluated where used; a statement-only
     * definition binds its current value. */
    hir_scalar tmp = {0};
    tmp.head.kind = HIR_VAL_SCALAR;
    tmp.kind = HIR_SC_ANON;
    tmp.dtype = s->u.sdef.out->dtype;
    tmp.def = s->u.sdef.def;
    int64_t v;
    if (interp_eval(it, &tmp, &v, e))
        return -1;
    return s->u.sdef.out->def ? 0 : interp_bind_scalar(it, s->u.sdef.out, v, e);
}

/* What each statement kind does, indexed by the op table (dialect/defs/ops.def). A kind
 * without an entry cannot run here; the message names it by its keyword. */
typedef int (*exec_fn)(hir_interp *it, const hir_stmt *s, hir_diag *e);

static const exec_fn exec_table[HIR_OP_COUNT] = {
    [HIR_OP_ALLOCATE] = ops_allocate,
    [HIR_OP_HIR_ALLOCATE] = ops_hir_allocate,
    [HIR_OP_DEALLOCATE] = ops_deallocate,
    [HIR_OP_GET_STREAM] = ops_get_stream,
    [HIR_OP_SET_STREAM] = ops_set_stream,
    [HIR_OP_SYNC_STREAM] = ops_sync_stream,
    [HIR_OP_FOR] = exec_for,
    [HIR_OP_HOST_FOR] = exec_host_for,
    [HIR_OP_IF] = exec_if,
    [HIR_OP_SCALAR_DEF] = exec_scalar_def,
    [HIR_OP_ALIAS_SELECT] = ops_alias_select,
    [HIR_OP_SELECT] = ops_alias_select,
    [HIR_OP_SHARD_BY_STREAM] = ops_shard_by_stream,
    [HIR_OP_SYM_VIEW] = ops_sym_view,
    [HIR_OP_SET] = ops_set,
    [HIR_OP_SEGMENTER_SET] = ops_set,
    [HIR_OP_LDMATRIX] = ops_kernel_level,
    [HIR_OP_STMATRIX] = ops_kernel_level,
    [HIR_OP_CPASYNC] = ops_kernel_level,
    [HIR_OP_CPASYNC_BULK] = ops_kernel_level,
    [HIR_OP_CPASYNC_TILE] = ops_kernel_level,
    [HIR_OP_LDTMEM] = ops_kernel_level,
    [HIR_OP_STTMEM] = ops_kernel_level,
    [HIR_OP_LINEAR] = ops_linear,
    [HIR_OP_MATMUL] = ops_matmul,
    [HIR_OP_UNARY] = ops_elementwise,
    [HIR_OP_BINARY] = ops_elementwise,
    [HIR_OP_TERNARY] = ops_elementwise,
    [HIR_OP_REDUCTION] = ops_reduction,
    [HIR_OP_SLICE] = ops_slice,
    [HIR_OP_VIEW] = ops_view,
    [HIR_OP_BROADCAST] = ops_flags,
    [HIR_OP_SQUEEZE] = ops_flags,
    [HIR_OP_SDPA] = ops_sdpa,
    [HIR_OP_SDPA_BWD] = ops_sdpa_bwd,
    [HIR_OP_EXPAND] = ops_expand,
    [HIR_OP_FULL] = ops_full,
    [HIR_OP_GROUPED_MMA] = ops_grouped_mma,
    [HIR_OP_COMMUNICATION] = ops_communication,
    [HIR_OP_P2P] = ops_p2p,
    [HIR_OP_WAIT] = ops_wait,
    [HIR_OP_START_COAL] = ops_start_coal,
    [HIR_OP_END_COAL] = ops_end_coal,
    [HIR_OP_SHARE_HANDLES] = ops_share,
    [HIR_OP_POST_ON_STREAM] = ops_kernel,
    [HIR_OP_LAUNCH_KERNEL] = ops_kernel,
    [HIR_OP_CPERM] = ops_cperm,
    [HIR_OP_DISPATCH] = ops_dispatch,
    [HIR_OP_COMBINE] = ops_combine,
};

static int exec_stmt(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    it->stmt = s;
    int hooked = hooks_before(it, s, e);
    if (hooked)
        return hooked < 0 ? -1 : 0;         /* skip: the statement silently does nothing */
    if (it->cfg.trace)
        interp_trace(it, s);
    exec_fn fn = (unsigned)s->op < HIR_OP_COUNT ? exec_table[s->op] : NULL;
    int rc;
    if (fn) {
        rc = fn(it, s, e);
    } else {
        const hir_opinfo *op = (unsigned)s->op < HIR_OP_COUNT ? &hir_ops[s->op] : NULL;
        rc = interp_fail(it, e, "statement %s cannot run on the host",
                         !op ? "?" : op->keyword ? op->keyword : op->enum_name);
    }
    it->stmt = s;
    hooks_after(it, s);
    return rc;
}

static int exec_block(hir_interp *it, const hir_block *b, hir_diag *e)
{
    if (++it->depth > HIR_MAX_NESTING) {
        it->depth--;
        return interp_fail(it, e, "statements nested more than %d deep", HIR_MAX_NESTING);
    }
    for (int i = 0; i < hir_block_size(b); i++)
        if (exec_stmt(it, hir_block_at(b, i), e)) {
            it->depth--;
            return -1;
        }
    it->depth--;
    return 0;
}

/* ---------------------------------------------------------------- API */

/* The named scalars the interpreter binds itself (made if the program never names them) and the
 * interned --bind names live in the program's arena, which has no recovery point once the
 * program is accepted: this one makes running out of memory there an error. Only heap objects
 * are changed between setjmp and a jump. */
static int program_lookups(hir_interp *it, const char **names, const char **interned, int n)
{
    jmp_buf jb;
    jmp_buf *outer = hir_arena_on_oom(it->p->arena, &jb);
    if (setjmp(jb)) {
        hir_arena_on_oom(it->p->arena, outer);
        return -1;
    }
    it->sc_rank = hir_scalar_named(it->p, "rank");
    it->sc_nstreams = hir_scalar_named(it->p, "numberOfStreams");
    it->sc_stream_idx = hir_scalar_named(it->p, "streamIdx");
    for (int i = 0; i < n; i++)
        interned[i] = hir_program_intern(it->p, names[i]);
    hir_arena_on_oom(it->p->arena, outer);
    return 0;
}

/* hir_block_walk: stops (false) at a loop whose index is ctx */
static bool not_loop_index(hir_stmt *s, int depth, void *ctx)
{
    (void)depth;
    return !((s->op == HIR_OP_FOR && s->u.kfor.index == ctx) ||
             (s->op == HIR_OP_HOST_FOR && s->u.hfor.index == ctx));
}

/* The backend makes the communicator of every team of the program's Communications that this
 * rank is in, before the first statement and in program order (backend.h team_prepare). A
 * team the statement itself would refuse (a member outside the job, truncated) is left to
 * the statement. */
typedef struct team_walk {
    hir_interp *it;
    hir_diag *e;
    int rc;
} team_walk;

static bool prepare_team(hir_stmt *s, int depth, void *ctx)
{
    (void)depth;
    team_walk *t = ctx;
    hir_interp *it = t->it;
    const hir_comm *c = s->op == HIR_OP_COMMUNICATION ? s->u.comm : NULL;
    if (!c || c->team_truncated || c->nteam < 2 || c->nteam > 1024 ||
        interp_team_index(c->team, c->nteam, it->cfg.rank) < 0)
        return true;
    int team[1024];
    for (int i = 0; i < c->nteam; i++) {
        if (c->team[i] < 0 || c->team[i] >= it->cfg.size)
            return true;
        team[i] = (int)c->team[i];
    }
    if (!it->be->ops->team_prepare(it->be, team, c->nteam, t->e)) 
        return true;
    hir_diag_entry *x = t->e ? t->e->last : NULL;
    if (x && x->sev == HIR_ERROR && !x->loc.src && !x->origin)
        x->at = s;
    t->rc = interp_backend_fail(it, t->e);
    return false;
}

const hir_interp_terms *hir_interp_terms_or_default(const hir_interp_terms *terms)
{
    static const hir_interp_terms hir_run_terms = {"--bind ", "", "--bind", "--streams=N"};
    return terms ? terms : &hir_run_terms;
}

int hir_interp_create(hir_program *p, hir_backend *be, const hir_interp_config *cfg,
                      hir_interp **out, hir_diag *e)
{
    hir_interp *it = calloc(1, sizeof *it);
    if (!it)
        return hir_fail(e, "out of host memory");
    it->p = p;
    it->be = be;
    it->cfg = *cfg;
    if (it->cfg.num_streams <= 0)
        it->cfg.num_streams = HIR_INTERP_DEFAULT_STREAMS;
    hir_map_init(&it->tensors);
    hir_map_init(&it->scalars);
    hir_map_init(&it->user_scalars);
    hir_map_init(&it->alloc_cache);
    hir_map_init(&it->result_cache);
    hir_map_init(&it->obj_streams);
    hir_map_init(&it->works);
    hir_map_init(&it->rings);
    hir_map_init(&it->swizzled);
    hir_map_init(&it->held);
    hir_map_init(&it->moe);
    hir_map_init(&it->ew_plans);
    int n = it->cfg.size > 0 ? it->cfg.size : 1;
    it->p2p_sent = calloc((size_t)n, sizeof *it->p2p_sent);
    it->p2p_recvd = calloc((size_t)n, sizeof *it->p2p_recvd);
    if (!it->p2p_sent || !it->p2p_recvd || interp_scan_2026(it, &p->body, 0)) {
        hir_interp_destroy(it);
        return hir_fail(e, "out of memory (while making the interpreter's tables)");
    }
    it->cur = be->ops->stream_main(be);
    const char *names[64], *interned[64];
    const hir_interp_terms *tm = hir_interp_terms_or_default(cfg->terms);
    int nb = cfg->nbinds < 64 ? cfg->nbinds : 64;
    for (int i = 0; i < nb; i++)
        names[i] = cfg->binds[i].name;
    if (cfg->nbinds > 64 || program_lookups(it, names, interned, nb)) {
        hir_interp_destroy(it);
        if (cfg->nbinds > 64)
            return hir_fail(e, "more than 64 %s", tm->binds);
        return hir_fail(e, "out of memory (while looking up the program's named scalars)");
    }
    /* user bindings by printed name: symbols i<k>/b<k>/..., or named scalars */
    for (int i = 0; i < nb; i++) {
        const char *nm = cfg->binds[i].name;
        const hir_scalar *s = NULL;
        size_t pl = strcspn(nm, "0123456789");
        if (pl && nm[pl] && strspn(nm + pl, "0123456789") == strlen(nm + pl)) {
            int64_t num = strtoll(nm + pl, NULL, 10);
            const hir_scalar *c = hir_map_get(&p->symbols, (uint64_t)num);
            if (c && c->name && strlen(c->name) == pl && !strncmp(c->name, nm, pl))
                s = c;
        }
        if (!s)
            s = hir_map_get(&p->named, (uintptr_t)interned[i]);
        if (!s) {
            hir_interp_destroy(it);
            return hir_fail(e, "%s%s%s: the program has no scalar of that name", tm->bind_open,
                            nm, tm->bind_close);
        }
        /* a value the run gives itself would shadow the binding, or the binding the program */
        char set_streams[80];
        snprintf(set_streams, sizeof set_streams, "the runner sets it (give %s)", tm->streams);
        const char *why = s == it->sc_rank ? "the runner sets it to each rank's number"
                          : s == it->sc_nstreams ? set_streams
                          : s->def ? "the program defines it"
                          : !hir_block_walk(&p->body, 0, not_loop_index, (void *)s)
                          ? "it is the index of a loop of the program" : NULL;
        if (why) {
            hir_interp_destroy(it);
            return hir_fail(e, "%s%s%s: %s", tm->bind_open, nm, tm->bind_close, why);
        }
        if (hir_interp_bind_scalar(it, s, cfg->binds[i].value, e)) {
            hir_interp_destroy(it);
            return -1;
        }
    }
    team_walk tw = {it, e, 0};
    if (be->ops->team_prepare && it->cfg.size > 1)
        hir_block_walk(&p->body, 0, prepare_team, &tw);
    if (tw.rc) {
        hir_interp_destroy(it);
        return -1;
    }
    *out = it;
    return 0;
}

void hir_interp_p2p_counts(const hir_interp *it, const int64_t **sent, const int64_t **recvd)
{
    *sent = it->p2p_sent;
    *recvd = it->p2p_recvd;
}

int hir_interp_add_hook(hir_interp *it, const hir_interp_hook *h, hir_diag *e)
{
    if (it->nhooks == HIR_INTERP_MAX_HOOKS)
        return hir_fail(e, "more than %d statement hooks", HIR_INTERP_MAX_HOOKS);
    it->hooks[it->nhooks++] = *h;
    return 0;
}

void hir_interp_remove_hook(hir_interp *it, const hir_interp_hook *h)
{
    for (int i = 0; i < it->nhooks; i++) {
        hir_interp_hook *x = &it->hooks[i];
        if (x->before == h->before && x->after == h->after && x->ctx == h->ctx) {
            memmove(x, x + 1, (size_t)(it->nhooks - i - 1) * sizeof *x);
            it->nhooks--;
            return;
        }
    }
}

/* ---------------------------------------------------------------- what hooks may ask */

hir_program *hir_interp_program(const hir_interp *it) { return it->p; }

hir_backend *hir_interp_backend(const hir_interp *it) { return it->be; }

hir_stream *hir_interp_stream(const hir_interp *it) { return it->cur; }

const hir_interp_config *hir_interp_cfg(const hir_interp *it) { return &it->cfg; }

uint64_t hir_interp_run_count(const hir_interp *it) { return it->run_no; }

int hir_interp_bound(hir_interp *it, const hir_tensor *t, hir_view *v)
{
    return interp_bound(it, t, v);
}

int hir_interp_eval(hir_interp *it, const hir_scalar *s, int64_t *v, hir_diag *e)
{
    return interp_eval(it, s, v, e);
}

int hir_interp_fail(hir_interp *it, hir_diag *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hir_vfail(e, fmt, ap);
    va_end(ap);
    return interp_backend_fail(it, e);
}

int hir_interp_locate(hir_interp *it, hir_diag *e) { return interp_backend_fail(it, e); }

int hir_interp_bind_run_scalars(hir_interp *it, hir_diag *e)
{
    return hir_interp_bind_scalar(it, it->sc_rank, it->cfg.rank, e) ||
           hir_interp_bind_scalar(it, it->sc_nstreams, it->cfg.num_streams, e) ? -1 : 0;
}

void hir_interp_destroy(hir_interp *it)
{
    if (!it)
        return;
    interp_work_release_all(it);   /* posted work first, then the buffers it holds */
    interp_scan_free(it);
    hir_map_fini(&it->held);
    interp_unbind_all(it);
    ops_moe_release(it);           /* what the families keep across runs */
    ops_ew_release(it);
    interp_caches_free(it);
    free(it->p2p_sent);
    free(it->p2p_recvd);
    interp_scalars_clear(&it->scalars);
    interp_scalars_clear(&it->user_scalars);
    hir_map_fini(&it->scalars);
    hir_map_fini(&it->user_scalars);
    hir_map_fini(&it->alloc_cache);
    hir_map_fini(&it->obj_streams);
    hir_map_fini(&it->works);
    free(it);
}

static int bind_inputs(hir_interp *it, const hir_view *inputs, hir_diag *e)
{
    hir_program *p = it->p;
    char tn[32];
    for (int i = 0; i < p->inputs.n; i++) {
        hir_value *v = p->inputs.items[i];
        hir_scalar *sc = hir_value_scalar(v);
        if (sc) {
            if (inputs[i].ndim != 0 || !inputs[i].data)
                return interp_fail(it, e, "scalar input %d needs a value", i);
            if (interp_bind_scalar(it, sc, *(const int64_t *)inputs[i].data, e))
                return -1;
            continue;
        }
        hir_tensor *t = hir_value_tensor(v);
        hir_shard sh;
        if (hir_interp_shard(it, t, &sh, e))
            return -1;
        if (!sh.on_rank)
            continue;
        if (inputs[i].ndim != sh.ndim)
            return interp_fail(it, e, "input %s has %d dimensions, the program expects %d",
                               interp_tname(t, tn, sizeof tn), inputs[i].ndim, sh.ndim);
        for (int d = 0; d < sh.ndim; d++)
            if (inputs[i].shape[d] != sh.local[d])
                return interp_fail(it, e, "input %s: dimension %d has size %" PRId64
                                   ", the program expects %" PRId64,
                                   interp_tname(t, tn, sizeof tn), d, inputs[i].shape[d],
                                   sh.local[d]);
        if (interp_bind(it, t, &inputs[i], NULL, e))
            return -1;
        /* extents named by symbols take the global size (§2.2) */
        hir_shape_axis ax[HIR_MAX_DIMS];
        int n = hir_interp_rt_axes(t, ax);
        for (int d = 0; d < n && d < sh.ndim; d++) {
            const hir_scalar *x = ax[d].extent;   /* the logical extent (X of a ceilDiv) */
            if (x && x->kind == HIR_SC_SYMBOL && !x->def &&
                interp_bind_scalar(it, x, sh.global[d], e))
                return -1;
        }
    }
    return 0;
}

int hir_interp_run(hir_interp *it, const hir_view *inputs, hir_diag *e)
{
    it->stmt = NULL;
    it->run_no++;
    interp_unbind_all(it);
    interp_scalars_clear(&it->scalars);
    it->cur = it->be->ops->stream_main(it->be);
    it->in_group = 0;
    it->loops = 0;
    it->nest_work = 1;
    if (interp_bind_scalar(it, it->sc_rank, it->cfg.rank, e) ||
        interp_bind_scalar(it, it->sc_nstreams, it->cfg.num_streams, e) ||
        bind_inputs(it, inputs, e))
        return -1;
    if (exec_block(it, &it->p->body, e))
        return -1;
    it->stmt = NULL;
    if (it->in_group)
        return interp_fail(it, e, "the program ended inside a coalescing group");
    for (size_t i = 0; i < it->works.cap; i++) {
        hir_work *w = it->works.vals[i];
        if (it->works.keys[i] != UINT64_MAX && w && w != WORK_SKIPPED)
            return interp_fail(it, e, "Communication %" PRIu64 " was posted but never waited "
                               "for (no Wait Communication %" PRIu64 " reached it)",
                               it->works.keys[i], it->works.keys[i]);
    }
    return 0;
}

int hir_interp_output(hir_interp *it, int i, hir_view *v, hir_diag *e)
{
    it->stmt = NULL;
    if (i < 0 || i >= it->p->outputs.n)
        return interp_fail(it, e, "no output %d", i);
    hir_tensor *t = hir_value_tensor(it->p->outputs.items[i]);
    char tn[32];
    if (!t)
        return interp_fail(it, e, "output %d is a scalar; only tensor outputs are supported", i);
    if (!interp_bound(it, t, v))
        return interp_fail(it, e, "output %s was never bound on this rank",
                           interp_tname(t, tn, sizeof tn));
    return 0;
}
