/* ir_util.c — IR helpers shared by the passes (see ir_util.h). Builders fill statements
 * exactly as the parser would, so a pass's output prints, re-parses and prints to itself. */
#include "passes/ir_util.h"

#include "dialect/intops.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

hir_scalar *pu_index(hir_program *p, hir_binary_op op, hir_scalar *a, hir_scalar *b)
{
    hir_scalar *s = hir_scalar_new_index(p, hir_sexpr_binary(p, op, a, b));
    hir_ptrvec_push(p->arena, &p->index_defs, s);
    p->has_index_defs = true;
    return s;
}

hir_scalar *pu_anon(hir_program *p, hir_binary_op op, hir_scalar *a, hir_scalar *b)
{
    hir_scalar *s = hir_scalar_anon(p, hir_sexpr_binary(p, op, a, b));
    bool cmp = op == HIR_BIN_EQ || op == HIR_BIN_NE || op == HIR_BIN_LT || op == HIR_BIN_LE ||
               op == HIR_BIN_GT || op == HIR_BIN_GE || op == HIR_BIN_AND || op == HIR_BIN_OR;
    s->dtype = cmp ? HIR_DT_BOOL : HIR_DT_INDEX;
    return s;
}

hir_scalar *pu_tensor_size(hir_program *p, const hir_tensor *t, hir_loc where, hir_diag *d)
{
    /* constants multiply into one literal; symbolic extents chain left to right after it,
     * which is how nvFuser's simplifier prints "( ( i0 * i2 ) * i3 )" */
    int64_t c = 1;
    hir_scalar *sym = NULL;
    char dims[160] = "";
    size_t dl = 0;
    bool ovf = false;
    for (int i = 0; i < t->nloop; i++) {
        const hir_iterdomain *id = t->shape.ids[i];
        if (id->itype == HIR_IT_REDUCTION || id->itype == HIR_IT_STRIDE)
            continue;
        hir_scalar *e = hir_id_expanded(id) ? hir_id_expanded(id) : id->extent;
        int64_t v;
        if (e && hir_scalar_const(e, &v)) {
            if (v < 0) {
                hir_diag_emit(d, HIR_ERROR, where, "T%lld: extent %lld of IterDomain %lld is negative",
                              (long long)t->number, (long long)v, (long long)id->number);
                return NULL;
            }
            if (dl < sizeof dims)
                dl += (size_t)snprintf(dims + dl, sizeof dims - dl, "%s%lld", dl ? " x " : "", (long long)v);
            ovf |= hir_mul_overflow(c, v, &c);
        } else if (e)
            sym = sym ? pu_anon(p, HIR_BIN_MUL, sym, e) : e;
    }
    if (ovf) {
        hir_diag_emit(d, HIR_ERROR, where, "T%lld has %s elements: its size does not fit in 64 bits",
                      (long long)t->number, dims);
        return NULL;
    }
    if (!sym)
        return hir_scalar_int(p, c);
    return c == 1 ? sym : pu_anon(p, HIR_BIN_MUL, hir_scalar_int(p, c), sym);
}

/* ---- scalar visitor */

typedef struct visit {
    pu_slot_fn fn;
    void *ctx;
} visit;

static void slot(visit *v, hir_scalar **s)
{
    if (!*s)
        return;
    v->fn(s, v->ctx);
    /* unnamed expressions have no identity of their own: their arguments are uses too */
    if (*s && (*s)->kind == HIR_SC_ANON && (*s)->def)
        for (int i = 0; i < (*s)->def->nargs; i++)
            slot(v, &(*s)->def->args[i]);
}

static void comm_slots(visit *v, hir_comm *c)
{
    if (!c)
        return;
    slot(v, &c->root);
    slot(v, &c->peer);
}

static bool stmt_slots(hir_stmt *s, int depth, void *ctx)
{
    (void)depth;
    visit *v = ctx;
    for (int i = 0; i < s->nin; i++)
        if (s->in[i] && s->in[i]->kind == HIR_VAL_SCALAR)
            slot(v, (hir_scalar **)&s->in[i]);
    switch (s->op) {
    case HIR_OP_ALLOCATE: slot(v, &s->u.alloc.size); break;
    case HIR_OP_GET_STREAM: case HIR_OP_SET_STREAM: case HIR_OP_SYNC_STREAM:
        slot(v, &s->u.stream.index);
        break;
    case HIR_OP_FOR: slot(v, &s->u.kfor.index); break;
    case HIR_OP_HOST_FOR:
        slot(v, &s->u.hfor.index);
        slot(v, &s->u.hfor.start);
        slot(v, &s->u.hfor.stop);
        break;
    case HIR_OP_IF: slot(v, &s->u.cond.pred); break;
    case HIR_OP_ALIAS_SELECT: case HIR_OP_SELECT: slot(v, &s->u.sel.index); break;
    case HIR_OP_SHARD_BY_STREAM: slot(v, &s->u.stream_index); break;
    case HIR_OP_REDUCTION: slot(v, &s->u.red.init); break;
    case HIR_OP_SLICE:
        for (int i = 0; i < s->u.slice.nranges; i++) {
            slot(v, &s->u.slice.ranges[i].start);
            slot(v, &s->u.slice.ranges[i].stop);
            slot(v, &s->u.slice.ranges[i].step);
        }
        break;
    case HIR_OP_COMMUNICATION: case HIR_OP_P2P: comm_slots(v, s->u.comm); break;
    case HIR_OP_SHARE_HANDLES:
        for (int i = 0; i < s->u.share.n; i++)
            comm_slots(v, s->u.share.comms[i]);
        break;
    case HIR_OP_SCALAR_DEF: {
        /* the defined symbol is seen (it counts as used) but never replaced: rewriting it
         * would turn "i169 = i140 + 0" into "i140 = i140 + 0" */
        hir_scalar *out = s->u.sdef.out;
        slot(v, &out);
        for (int i = 0; i < s->u.sdef.def->nargs; i++)
            slot(v, &s->u.sdef.def->args[i]);
        break;
    }
    default: break;
    }
    return true;
}

void pu_visit_scalars(hir_program *p, bool defs, pu_slot_fn fn, void *ctx)
{
    visit v = {fn, ctx};
    size_t at = 0;
    for (int i = 0; i < p->inputs.n; i++)
        if (((hir_value *)p->inputs.items[i])->kind == HIR_VAL_SCALAR)
            slot(&v, (hir_scalar **)&p->inputs.items[i]);
    for (int i = 0; i < p->outputs.n; i++)
        if (((hir_value *)p->outputs.items[i])->kind == HIR_VAL_SCALAR)
            slot(&v, (hir_scalar **)&p->outputs.items[i]);
    hir_block_walk(&p->body, 0, stmt_slots, &v);
    for (hir_iterdomain *id = NULL; (id = hir_iterdomain_next(p, id, &at));) {
        slot(&v, &id->extent);
        if (id->range) {
            slot(&v, &id->range->start);
            slot(&v, &id->range->stop);
            slot(&v, &id->range->expanded);
        }
    }
    if (defs)
        for (size_t i = 0; i < p->symbols.cap; i++) {
            hir_scalar *s = p->symbols.vals[i];
            if (p->symbols.keys[i] == UINT64_MAX || !s || !s->def)
                continue;
            for (int k = 0; k < s->def->nargs; k++)
                slot(&v, &s->def->args[k]);
        }
}

void pu_mark_symbols(hir_map *used, hir_scalar *root)
{
    /* an explicit stack: definition chains may be as long as the program */
    hir_scalar *local[64], **st = local;
    int n = 0, cap = 64;
    if (root)
        st[n++] = root;
    while (n) {
        hir_scalar *s = st[--n];
        if (s->kind == HIR_SC_SYMBOL) {
            if (hir_map_get(used, (uint64_t)s->number))
                continue;
            hir_map_put(used, (uint64_t)s->number, s);
        }
        if (!s->def)
            continue;
        for (int i = s->def->nargs - 1; i >= 0; i--) {
            if (!s->def->args[i])
                continue;
            if (n == cap) {
                hir_scalar **big = malloc(sizeof *big * (size_t)cap * 2);
                hir_assert(big);
                memcpy(big, st, sizeof *big * (size_t)n);
                if (st != local)
                    free(st);
                st = big;
                cap *= 2;
            }
            st[n++] = s->def->args[i];
        }
    }
    if (st != local)
        free(st);
}

static void mark_slot(hir_scalar **slot, void *ctx) { pu_mark_symbols(ctx, *slot); }

void pu_used_symbols(hir_program *p, hir_map *used) { pu_visit_scalars(p, false, mark_slot, used); }

void pu_prune_index_defs(hir_program *p, const hir_map *only)
{
    hir_map used;
    hir_map_init_in(&used, p->arena);
    pu_used_symbols(p, &used);
    int k = 0;
    for (int i = 0; i < p->index_defs.n; i++) {
        hir_scalar *s = p->index_defs.items[i];
        bool dead = !hir_map_get(&used, (uint64_t)s->number);
        if (dead && (!only || hir_map_get(only, (uint64_t)s->number)))
            continue;
        p->index_defs.items[k++] = s;
    }
    p->index_defs.n = k;
    hir_map_fini(&used);
}

/* ---- statements */

hir_stmt *pu_allocate(hir_program *p, hir_tensor *t, bool own_mem, hir_loc where, hir_diag *d)
{
    hir_scalar *size = pu_tensor_size(p, t, where, d);
    if (!size)
        return NULL;
    hir_stmt *s = hir_stmt_new(p, HIR_OP_ALLOCATE);
    s->out = t;
    s->loc = where;
    /* OCT allocates every stream buffer in global memory; a symmetric tensor keeps its kind */
    s->u.alloc.mem = own_mem ? t->mem : t->mem == HIR_MEM_SYMMETRIC ? HIR_MEM_SYMMETRIC : HIR_MEM_GLOBAL;
    s->u.alloc.size = size;
    hir_stmt_set_inputs(p, s, 0, NULL);
    return s;
}

hir_stmt *pu_alias_select(hir_program *p, hir_tensor *out, hir_tensor *in, hir_iterdomain *axis,
                          hir_scalar *index)
{
    hir_stmt *s = hir_stmt_new(p, HIR_OP_ALIAS_SELECT);
    s->out = out;
    hir_value *v = &in->head;
    hir_stmt_set_inputs(p, s, 1, &v);
    s->u.sel.axis = axis;
    s->u.sel.index = index;
    return s;
}

hir_stmt *pu_set(hir_program *p, hir_tensor *out, hir_tensor *in)
{
    hir_stmt *s = hir_stmt_new(p, HIR_OP_SET);
    s->out = out;
    hir_value *v = &in->head;
    hir_stmt_set_inputs(p, s, 1, &v);
    s->u.ls.cache_op = hir_program_intern(p, "Streaming");
    return s;
}

hir_stmt *pu_stream_stmt(hir_program *p, hir_op op, int64_t number, hir_scalar *index)
{
    hir_stmt *s = hir_stmt_new(p, op);
    s->u.stream.number = index ? -1 : number;
    s->u.stream.index = index;
    hir_stmt_set_inputs(p, s, 0, NULL);
    return s;
}

hir_stmt *pu_kfor(hir_program *p, hir_scalar *index, hir_iterdomain *id)
{
    hir_stmt *s = hir_stmt_new(p, HIR_OP_FOR);
    s->u.kfor.index = index;
    s->u.kfor.id = id;
    hir_stmt_set_inputs(p, s, 0, NULL);
    return s;
}

hir_stmt *pu_if(hir_program *p, hir_scalar *pred)
{
    hir_stmt *s = hir_stmt_new(p, HIR_OP_IF);
    s->u.cond.pred_type = hir_program_intern(p, "Manual");
    s->u.cond.pred = pred;
    hir_stmt_set_inputs(p, s, 0, NULL);
    return s;
}

hir_stmt *pu_comm_stmt(hir_program *p, hir_comm *c)
{
    hir_stmt *s = hir_stmt_new(p, c->op);
    s->u.comm = c;
    c->stmt = s;
    hir_stmt_set_inputs(p, s, 0, NULL);
    return s;
}

hir_stmt *pu_wait(hir_program *p, hir_comm *c)
{
    hir_stmt *s = hir_stmt_new(p, HIR_OP_WAIT);
    s->u.wait.number = c->number;
    s->u.wait.target = c;
    hir_stmt_set_inputs(p, s, 0, NULL);
    return s;
}

hir_stmt *pu_share(hir_program *p, int n, hir_comm **comms)
{
    hir_stmt *s = hir_stmt_new(p, HIR_OP_SHARE_HANDLES);
    s->u.share.n = n;
    s->u.share.comms = hir_arena_alloc(p->arena, sizeof(hir_comm *) * (n ? n : 1));
    memcpy(s->u.share.comms, comms, sizeof(hir_comm *) * n);
    hir_stmt_set_inputs(p, s, 0, NULL);
    return s;
}

hir_stmt *pu_stmt_clone(hir_program *p, const hir_stmt *s)
{
    hir_stmt *c = hir_stmt_new(p, s->op);
    hir_stmt fresh = *c;         /* its own out-of-line part, if the op has one */
    *c = *s;
    if (s->op == HIR_OP_SDPA || s->op == HIR_OP_SDPA_BWD) {
        c->u.sdpa = fresh.u.sdpa;
        *c->u.sdpa = *s->u.sdpa;
    } else if (s->op == HIR_OP_DISPATCH || s->op == HIR_OP_COMBINE) {
        c->u.moe = fresh.u.moe;
        *c->u.moe = *s->u.moe;
    }
    hir_stmt_set_inputs(p, c, s->nin, s->in);
    if (s->nin && s->in_loc)
        memcpy(c->in_loc, s->in_loc, sizeof *c->in_loc * s->nin);
    memset(&c->body, 0, sizeof c->body);
    memset(&c->else_body, 0, sizeof c->else_body);
    return c;
}

static bool max_stream(hir_stmt *s, int depth, void *ctx)
{
    (void)depth;
    int64_t *next = ctx;
    if ((hir_ops[s->op].flags & HIR_OPF_STREAM) && !s->u.stream.index &&
        s->u.stream.number >= *next)
        *next = s->u.stream.number + 1;
    return true;
}

int64_t pu_next_stream(hir_program *p)
{
    int64_t next = p->next_stream;
    hir_block_walk(&p->body, 0, max_stream, &next);
    return next;
}

/* adds t to ts[0..*n) unless it is NULL or there; *n = max + 1 once ts is full */
static void add_tensor(hir_tensor **ts, int *n, int max, hir_tensor *t)
{
    if (!t || *n > max)
        return;
    for (int i = 0; i < *n; i++)
        if (ts[i] == t)
            return;
    if (*n == max)
        *n = max + 1;
    else
        ts[(*n)++] = t;
}

static void add_comm_tensors(hir_tensor **ts, int *n, int max, const hir_comm *c)
{
    if (c) {
        add_tensor(ts, n, max, c->buffer);
        add_tensor(ts, n, max, c->input);
        add_tensor(ts, n, max, c->output);
    }
}

int pu_stmt_tensors(const hir_stmt *s, hir_tensor **ts, int max)
{
    int n = 0;
    add_tensor(ts, &n, max, s->out);
    for (int i = 0; i < s->nin; i++)
        add_tensor(ts, &n, max, hir_value_tensor(s->in[i]));
    switch (s->op) {
    case HIR_OP_ALLOCATE: add_tensor(ts, &n, max, s->u.alloc.alias); break;
    case HIR_OP_COMMUNICATION: case HIR_OP_P2P: case HIR_OP_END_COAL: case HIR_OP_CPERM:
        add_comm_tensors(ts, &n, max, s->u.comm);
        break;
    case HIR_OP_SHARE_HANDLES:
        for (int i = 0; i < s->u.share.n; i++)
            add_comm_tensors(ts, &n, max, s->u.share.comms[i]);
        break;
    case HIR_OP_DISPATCH: case HIR_OP_COMBINE:
        if (s->u.moe) {
            add_tensor(ts, &n, max, s->u.moe->hidden[0]);
            add_tensor(ts, &n, max, s->u.moe->hidden[1]);
        }
        break;
    case HIR_OP_SDPA: case HIR_OP_SDPA_BWD:
        for (int i = 0; s->u.sdpa && i < 3; i++)
            add_tensor(ts, &n, max, s->u.sdpa->extra[i]);
        break;
    default: break;
    }
    return n > max ? -1 : n;
}

int pu_stmt_outputs(hir_stmt *s, hir_tensor **outs, int max)
{
    int n = 0;
    if (s->op == HIR_OP_POST_ON_STREAM || s->op == HIR_OP_LAUNCH_KERNEL) {
        for (int i = s->u.kernel.ninputs; i < s->nin && n < max; i++)
            if (hir_value_tensor(s->in[i]))
                outs[n++] = hir_value_tensor(s->in[i]);
        return n;
    }
    if (s->out && max > 0)
        outs[n++] = s->out;
    return n;
}

/* the whole program source, for what a pass made and has no place of its own: printed as
 * `file: error: ...` rather than at a 1:1 that is not where the trouble is */
static hir_loc whole_src(const hir_program *p)
{
    hir_loc l = {p->src, p->src ? HIR_LOC_WHOLE : 0, p->src ? HIR_LOC_WHOLE : 0};
    return l;
}

hir_loc pu_loc(const hir_program *p, const hir_stmt *s)
{
    return s && s->loc.src ? s->loc : whole_src(p);
}

/* pu_loc_near's walk: *anc is the place of the innermost located statement around b (or
 * {0}), *prev that of the last located statement met so far in print order */
typedef struct near_walk { const hir_stmt *target; hir_loc prev; int depth; } near_walk;

static bool near_find(near_walk *w, const hir_block *b, hir_loc anc, hir_loc *out)
{
    if (++w->depth > 256) {      /* deeper than any program a pass sees: give up the search */
        w->depth--;
        return false;
    }
    for (int i = 0; i < b->stmts.n; i++) {
        const hir_stmt *t = b->stmts.items[i];
        hir_loc here = t->loc.src ? t->loc : anc;
        if (t->loc.src)
            w->prev = t->loc;
        if (t == w->target) {
            *out = here.src ? here : w->prev;
            w->depth--;
            return true;
        }
        if ((hir_ops[t->op].flags & HIR_OPF_REGION) &&
            (near_find(w, &t->body, here, out) || near_find(w, &t->else_body, here, out))) {
            w->depth--;
            return true;
        }
    }
    w->depth--;
    return false;
}

hir_loc pu_loc_near(const hir_program *p, const hir_stmt *s)
{
    if (s && s->loc.src)
        return s->loc;
    near_walk w = {s, {0}, 0};
    hir_loc l = {0};
    if (s && near_find(&w, &p->body, (hir_loc){0}, &l) && l.src)
        return l;
    return whole_src(p);
}

hir_loc pu_tensor_loc(const hir_program *p, const hir_tensor *t)
{
    return t && t->loc.src ? t->loc : whole_src(p);
}

typedef struct step_env { int64_t rank, step; } step_env;

static int step_lookup(void *ctx, const hir_scalar *s, int64_t *v)
{
    const step_env *e = ctx;
    if (s->kind != HIR_SC_NAMED)
        return -1;
    if (!strcmp(s->name, "rank"))
        *v = e->rank;
    else if (!strcmp(s->name, "streamIdx"))
        *v = e->step;
    else
        return -1;
    return 0;
}

int pu_eval_at_step(const hir_scalar *s, int64_t rank, int64_t step, int64_t *v, char *msg,
                    size_t msglen)
{
    step_env e = {rank, step};
    hir_scalar_env en = {step_lookup, &e};
    return hir_scalar_eval(s, &en, v, msg, msglen);
}

int pu_backend_parse(const char *s, hir_backend_kind *out)
{
    if (!strcasecmp(s, "nccl"))
        *out = HIR_BK_NCCL;
    else if (!strcasecmp(s, "cuda"))
        *out = HIR_BK_CUDA;
    else
        return -1;
    return 0;
}

typedef struct bk_scan { int found, mixed; hir_backend_kind kind; } bk_scan;

static bool scan_backend(hir_stmt *s, int depth, void *ctx)
{
    (void)depth;
    bk_scan *b = ctx;
    const hir_comm *m = s->op == HIR_OP_P2P || s->op == HIR_OP_COMMUNICATION ? s->u.comm : NULL;
    if (!m || (m->op == HIR_OP_COMMUNICATION && m->type != HIR_COMM_ALLGATHER &&
               m->type != HIR_COMM_BROADCAST))
        return true;
    if ((m->backend != HIR_BK_NCCL && m->backend != HIR_BK_CUDA) || (b->found && m->backend != b->kind))
        b->mixed = 1;
    b->kind = m->backend;
    b->found = 1;
    return true;
}

int pu_program_backend(const hir_program *p, hir_backend_kind *out)
{
    /* the statements the program prints, not every communication ever made */
    bk_scan b = {0, 0, HIR_BK_NCCL};
    hir_block_walk((hir_block *)&p->body, 0, scan_backend, &b);
    if (!b.found || b.mixed)
        return 0;
    *out = b.kind;
    return 1;
}

int pu_backend_choose(hir_program *p, const char *option, const char *pass, hir_diag *d,
                      hir_backend_kind *out)
{
    if (option) {
        if (pu_backend_parse(option, out)) {
            hir_diag_emit(d, HIR_ERROR, (hir_loc){0},
                          "%s: unknown backend '%s' (expected nccl or cuda)", pass, option);
            return -1;
        }
        return 0;
    }
    if (!pu_program_backend(p, out))
        *out = HIR_BK_NCCL;
    return 0;
}

/* ---- the program as its text says it */

/* The scalar the parser makes of s printed in an inline position: a numbered symbol that
 * prints expanded ("( i1 % 8 )" for i2) reads back as an unnamed expression whose arguments
 * are, recursively, what they print as. */
static hir_scalar *as_printed_inline(hir_program *p, hir_scalar *s, int depth)
{
    if (!s || !s->def || depth > 256 || (s->kind != HIR_SC_ANON && !s->inline_expand))
        return s;
    hir_scalar *args[3];
    bool changed = s->kind != HIR_SC_ANON;
    for (int i = 0; i < s->def->nargs && i < 3; i++) {
        args[i] = as_printed_inline(p, s->def->args[i], depth + 1);
        changed |= args[i] != s->def->args[i];
    }
    if (!changed)
        return s;
    hir_sexpr *e = hir_arena_alloc(p->arena, sizeof *e);
    *e = *s->def;
    for (int i = 0; i < e->nargs && i < 3; i++)
        e->args[i] = args[i];
    hir_scalar *a = hir_scalar_anon(p, e);
    a->dtype = s->kind == HIR_SC_ANON ? s->dtype : HIR_DT_INDEX;
    a->loc = s->loc;
    return a;
}

static void inline_slot(hir_program *p, hir_scalar **slot) { *slot = as_printed_inline(p, *slot, 0); }

static bool inline_stmt(hir_stmt *s, int depth, void *ctx)
{
    (void)depth;
    hir_program *p = ctx;
    switch (s->op) {
    case HIR_OP_ALLOCATE: inline_slot(p, &s->u.alloc.size); break;
    case HIR_OP_GET_STREAM: case HIR_OP_SET_STREAM: case HIR_OP_SYNC_STREAM:
        inline_slot(p, &s->u.stream.index);
        break;
    case HIR_OP_HOST_FOR:
        inline_slot(p, &s->u.hfor.start);
        inline_slot(p, &s->u.hfor.stop);
        break;
    case HIR_OP_IF: inline_slot(p, &s->u.cond.pred); break;
    case HIR_OP_COMMUNICATION:
        if (s->u.comm)
            inline_slot(p, &s->u.comm->root);
        break;
    case HIR_OP_CPERM:
        if (s->u.comm) {
            inline_slot(p, &s->u.comm->send_peer);
            inline_slot(p, &s->u.comm->recv_peer);
        }
        break;
    default: break;
    }
    return true;
}

static bool max_comm(hir_stmt *s, int depth, void *ctx)
{
    (void)depth;
    int64_t *next = ctx;
    hir_comm *c = NULL;
    if (s->op == HIR_OP_P2P || s->op == HIR_OP_COMMUNICATION || s->op == HIR_OP_END_COAL ||
        s->op == HIR_OP_CPERM)
        c = s->u.comm;
    if (c && c->number >= *next)
        *next = c->number + 1;
    if (s->op == HIR_OP_SHARE_HANDLES)
        for (int i = 0; i < s->u.share.n; i++)
            if (s->u.share.comms[i] && s->u.share.comms[i]->number >= *next)
                *next = s->u.share.comms[i]->number + 1;
    return true;
}

void pu_as_printed(hir_program *p)
{
    /* (1) inline positions hold what the text shows there */
    hir_block_walk(&p->body, 0, inline_stmt, p);
    size_t at = 0;
    for (hir_iterdomain *id = NULL; (id = hir_iterdomain_next(p, id, &at));) {
        inline_slot(p, &id->extent);
        if (id->range) {
            inline_slot(p, &id->range->start);
            inline_slot(p, &id->range->stop);
            inline_slot(p, &id->range->expanded);
        }
    }
    /* (2) new expression and symbol numbers continue after the highest the text shows, as
     * they do after parsing it: numbers of removed statements and dropped definitions are
     * free again */
    int64_t next = 0;
    hir_block_walk(&p->body, 0, max_comm, &next);
    p->next_expr = next;
    hir_map used;
    hir_map_init_in(&used, p->arena);
    pu_used_symbols(p, &used);
    for (int i = 0; i < p->index_defs.n; i++)
        pu_mark_symbols(&used, p->index_defs.items[i]);
    next = 0;
    for (size_t i = 0; i < used.cap; i++)
        if (used.keys[i] != UINT64_MAX && used.vals[i] && (int64_t)used.keys[i] >= next)
            next = (int64_t)used.keys[i] + 1;
    p->next_scalar = next;
    hir_map_fini(&used);
}

const hir_stmt *pu_slot_select(const hir_block *b, const hir_tensor *buf, int64_t *pieces)
{
    *pieces = 1;
    for (int pass = 0; pass < 2 && buf; pass++) {
        const hir_tensor *next = NULL;
        for (int i = 0; i < hir_block_size(b); i++) {
            const hir_stmt *s = hir_block_at(b, i);
            if (s->out != buf)
                continue;
            if (s->op == HIR_OP_ALIAS_SELECT)
                return s;
            if (pass == 0 && s->op == HIR_OP_SHARD_BY_STREAM && s->nin == 1) {
                int a = hir_tensor_stream_axis(s->out);
                int64_t n;
                if (a < 0 || !s->out->loop[a]->extent || !hir_scalar_const(s->out->loop[a]->extent, &n) || n < 1)
                    return NULL;
                *pieces = n;
                next = hir_value_tensor(s->in[0]);
                break;
            }
        }
        buf = next;
    }
    return NULL;
}
