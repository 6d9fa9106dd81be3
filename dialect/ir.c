/* ir.c — construction and lookup of IR values and statements. Everything is allocated in the
 * program's arena; by-number lookups go through the program's maps, tensors and IterDomains
 * through dense arrays first (dense_get/dense_put). */
#include "dialect/hir.h"

#include <stdlib.h>
#include <string.h>

hir_program *hir_program_new(void)
{
    hir_arena *a = hir_arena_new();
    hir_program *p = a ? hir_arena_try_alloc(a, sizeof *p) : NULL;
    if (!p) {
        hir_arena_free(a);
        return NULL;
    }
    p->arena = a;
    hir_strtab_init(&p->strings, a);
    hir_map_init_in(&p->tensors, a);
    hir_map_init_in(&p->iterdomains, a);
    hir_map_init_in(&p->symbols, a);
    hir_map_init_in(&p->named, a);
    hir_map_init_in(&p->comms, a);
    hir_map_init_in(&p->meshes, a);
    hir_map_init_in(&p->literals, a);
    return p;
}

void hir_program_free(hir_program *p)
{
    if (!p)
        return;
    free(p->dtensors.items);
    free(p->diterdomains.items);
    free(p->dcomms.items);
    hir_map_fini(&p->tensors);
    hir_map_fini(&p->iterdomains);
    hir_map_fini(&p->symbols);
    hir_map_fini(&p->named);
    hir_map_fini(&p->comms);
    hir_map_fini(&p->meshes);
    hir_map_fini(&p->literals);
    hir_strtab_fini(&p->strings);
    hir_arena_free(p->arena);
}

const char *hir_program_intern(hir_program *p, const char *s)
{
    return hir_intern(&p->strings, s, strlen(s));
}

static void bump(int64_t *next, int64_t number)
{
    if (number >= *next)
        *next = number + 1;
}

/* Programs number their tensors and IterDomains densely from 0, so an array indexed by number
 * replaces the hash map for them. The array only grows to a number below twice its entries
 * plus 4096 (at most about 16 bytes an entry, never more than the values themselves); a
 * number past that (a sparse or hostile spelling, T99999999999) goes to the map instead. A
 * number is in one of the two: dense_put takes it out of the map when the array has grown
 * over it since. */
enum { DENSE_SLACK = 4096 };

static void *dense_get(const hir_dense *d, const hir_map *m, int64_t number)
{
    if (number < 0)
        return NULL;
    if ((uint64_t)number < d->cap && d->items[number])
        return d->items[number];
    return m->n ? hir_map_get(m, (uint64_t)number) : NULL;
}

static void dense_put(hir_program *p, hir_dense *d, hir_map *m, int64_t number, void *val)
{
    uint64_t u = (uint64_t)number;
    if (u >= d->cap && u < 2 * (uint64_t)d->n + DENSE_SLACK) {
        size_t cap = d->cap ? d->cap * 2 : 1024;
        if (cap <= u)
            cap = (size_t)u + 1;
        void **items = realloc(d->items, cap * sizeof *items);
        if (!items)
            hir_arena_oom(p->arena);
        memset(items + d->cap, 0, (cap - d->cap) * sizeof *items);
        d->items = items;
        d->cap = cap;
    }
    if (u >= d->cap) {
        hir_map_put(m, u, val);
        return;
    }
    if (m->n)
        hir_map_del(m, u);
    d->n += !d->items[u];
    d->items[u] = val;
}

hir_tensor *hir_tensor_get(hir_program *p, int64_t number)
{
    return dense_get(&p->dtensors, &p->tensors, number);
}

hir_tensor *hir_tensor_create(hir_program *p, int64_t number, hir_mem mem, hir_dtype dt,
                              int nloop, hir_iterdomain **loop, hir_mesh *mesh)
{
    hir_tensor *t = hir_arena_alloc(p->arena, sizeof *t);
    t->head.kind = HIR_VAL_TENSOR;
    t->number = number;
    t->mem = mem;
    t->dtype = dt;
    t->nloop = nloop;
    t->loop = hir_arena_alloc(p->arena, sizeof(*loop) * (nloop ? nloop : 1));
    if (nloop)
        memcpy(t->loop, loop, sizeof(*loop) * nloop);
    /* The print-only view (shape.c): without a device or stream axis nothing was split or
     * moved, so the loop domain as printed is the logical one; otherwise the view stays open
     * until hir_program_shapes reads the whole program. */
    t->shape.ids = t->loop;
    t->shape.naxes = nloop;
    t->shape.state = HIR_SHAPE_DECIDED;
    for (int i = 0; i < nloop; i++)
        if (hir_ptype_is_device(loop[i]->ptype) || hir_ptype_is_stream(loop[i]->ptype))
            t->shape.state = HIR_SHAPE_OPEN;
    t->mesh = mesh;
    dense_put(p, &p->dtensors, &p->tensors, number, t);
    bump(&p->next_tensor, number);
    return t;
}

hir_tensor *hir_tensor_new(hir_program *p, hir_mem mem, hir_dtype dt, int nloop,
                           hir_iterdomain **loop, hir_mesh *mesh)
{
    /* a pass makes its loop domain in logical order, each IterDomain an axis */
    hir_tensor *t = hir_tensor_create(p, p->next_tensor, mem, dt, nloop, loop, mesh);
    t->shape.state = HIR_SHAPE_DECIDED;
    t->shape.how = "made by a pass, in its order";
    return t;
}


/* The next entry of a dense array and its map of far numbers, from *at (0 to start): the
 * dense part in number order, then the map's */
static void *dense_next(const hir_dense *d, const hir_map *m, size_t *at)
{
    size_t nd = d->cap;
    for (; *at < nd; ++*at)
        if (d->items[*at])
            return d->items[(*at)++];
    for (; *at - nd < m->cap; ++*at) {
        size_t i = *at - nd;
        if (m->keys[i] != UINT64_MAX && m->vals[i])
            return m->vals[(*at)++ - nd];
    }
    return NULL;
}

hir_tensor *hir_tensor_next(const hir_program *p, const hir_tensor *prev, size_t *at)
{
    if (!prev)
        *at = 0;
    return dense_next(&p->dtensors, &p->tensors, at);
}

hir_iterdomain *hir_iterdomain_next(const hir_program *p, const hir_iterdomain *prev, size_t *at)
{
    if (!prev)
        *at = 0;
    return dense_next(&p->diterdomains, &p->iterdomains, at);
}

hir_comm *hir_comm_next(const hir_program *p, const hir_comm *prev, size_t *at)
{
    if (!prev)
        *at = 0;
    return dense_next(&p->dcomms, &p->comms, at);
}

hir_iterdomain *hir_iterdomain_get(hir_program *p, int64_t number)
{
    return dense_get(&p->diterdomains, &p->iterdomains, number);
}

hir_iterdomain *hir_iterdomain_create(hir_program *p, int64_t number, hir_itype it,
                                      hir_ptype pt, hir_scalar *extent)
{
    hir_iterdomain *id = hir_arena_alloc(p->arena, sizeof *id);
    id->number = number;
    id->itype = it;
    id->ptype = pt;
    id->extent = extent;
    dense_put(p, &p->diterdomains, &p->iterdomains, number, id);
    bump(&p->next_iterdomain, number);
    return id;
}

_Static_assert(HIR_IT_COUNT <= 256 && HIR_PT_COUNT <= 256 && HIR_ID_CLUSTERED < 256,
               "hir_iterdomain.itype, .ptype and .flags are 8 bits");

void hir_iterdomain_set_range(hir_program *p, hir_iterdomain *id, hir_scalar *start,
                              hir_scalar *stop, hir_scalar *expanded)
{
    if (!start && !stop && !expanded) {
        id->range = NULL;
        return;
    }
    if (!id->range)
        id->range = hir_arena_alloc(p->arena, sizeof *id->range);
    id->range->start = start;
    id->range->stop = stop;
    id->range->expanded = expanded;
}

hir_iterdomain *hir_iterdomain_clone(hir_program *p, const hir_iterdomain *from)
{
    hir_iterdomain *id = hir_iterdomain_create(p, p->next_iterdomain, from->itype, from->ptype,
                                               from->extent);
    hir_iterdomain_set_range(p, id, hir_id_start(from), hir_id_stop(from), hir_id_expanded(from));
    id->flags = from->flags;
    return id;
}

hir_mesh *hir_mesh_intern(hir_program *p, int ndims, const int64_t *dims, const int64_t *devices)
{
    int64_t nd = 1;
    for (int i = 0; i < ndims; i++)
        nd *= dims[i];
    uint64_t h = hir_hash_bytes(dims, sizeof(int64_t) * ndims) ^
                 (hir_hash_bytes(devices, sizeof(int64_t) * nd) >> 1);
    h &= ~(1ULL << 63);
    /* chain of meshes with this hash, linked through a small wrapper */
    typedef struct link { struct link *next; hir_mesh *m; } link;
    link *head = hir_map_get(&p->meshes, h);
    for (link *l = head; l; l = l->next) {
        hir_mesh *m = l->m;
        if (m->ndims == ndims && !memcmp(m->dims, dims, sizeof(int64_t) * ndims) &&
            !memcmp(m->devices, devices, sizeof(int64_t) * nd))
            return m;
    }
    hir_mesh *m = hir_arena_alloc(p->arena, sizeof *m);
    m->ndims = ndims;
    m->dims = hir_arena_alloc(p->arena, sizeof(int64_t) * (ndims ? ndims : 1));
    memcpy(m->dims, dims, sizeof(int64_t) * ndims);
    m->ndevices = nd;
    m->devices = hir_arena_alloc(p->arena, sizeof(int64_t) * (nd ? nd : 1));
    memcpy(m->devices, devices, sizeof(int64_t) * nd);
    link *l = hir_arena_alloc(p->arena, sizeof *l);
    l->m = m;
    l->next = head;
    hir_map_put(&p->meshes, h, l);
    return m;
}

static hir_scalar *scalar_alloc(hir_program *p, hir_scalar_kind k)
{
    hir_scalar *s = hir_arena_alloc(p->arena, sizeof *s);
    s->head.kind = HIR_VAL_SCALAR;
    s->kind = k;
    s->number = -1;
    s->dtype = HIR_DT_INDEX;
    return s;
}

hir_scalar *hir_scalar_named(hir_program *p, const char *name)
{
    const char *in = hir_program_intern(p, name);
    hir_scalar *s = hir_map_get(&p->named, (uint64_t)(uintptr_t)in);
    if (s)
        return s;
    s = scalar_alloc(p, HIR_SC_NAMED);
    s->name = in;
    /* rank and numberOfStreams are Int in nvFuser; loop indices are Index */
    s->dtype = (!strcmp(in, "rank") || !strcmp(in, "numberOfStreams")) ? HIR_DT_INT64
               : !strcmp(in, "cacheId") ? HIR_DT_UINT64 : HIR_DT_INDEX;
    hir_map_put(&p->named, (uint64_t)(uintptr_t)in, s);
    return s;
}

hir_scalar *hir_scalar_symbol(hir_program *p, const char *prefix, int64_t number)
{
    hir_scalar *s = hir_map_get(&p->symbols, (uint64_t)number);
    if (s)
        return s;
    s = scalar_alloc(p, HIR_SC_SYMBOL);
    s->number = number;
    s->name = hir_program_intern(p, prefix);
    hir_dtype dt;
    s->dtype = hir_dtype_of_symbol_prefix(prefix, strlen(prefix), &dt) ? dt : HIR_DT_INDEX;
    hir_map_put(&p->symbols, (uint64_t)number, s);
    bump(&p->next_scalar, number);
    return s;
}

static hir_scalar *literal(hir_program *p, hir_scalar_kind k, int64_t iv, double fv,
                           const char *spelling, hir_dtype dt)
{
    uint64_t key[3] = {(uint64_t)k, (uint64_t)iv, 0};
    memcpy(&key[2], &fv, sizeof fv);
    uint64_t h = hir_hash_bytes(key, sizeof key) ^ (spelling ? hir_hash_bytes(spelling, strlen(spelling)) : 0);
    h &= ~(1ULL << 63);
    hir_scalar *s = hir_map_get(&p->literals, h);
    if (s && s->kind == k && (k == HIR_SC_FLOAT || s->ival == iv) && s->dtype == dt &&
        (k != HIR_SC_FLOAT || (s->name && spelling && !strcmp(s->name, spelling))))
        return s;
    s = scalar_alloc(p, k);
    if (k == HIR_SC_FLOAT)
        s->fval = fv;            /* its iv is always 0 */
    else
        s->ival = iv;
    s->dtype = dt;
    if (spelling)
        s->name = hir_program_intern(p, spelling);
    if (!hir_map_get(&p->literals, h))
        hir_map_put(&p->literals, h, s);
    return s;
}

hir_scalar *hir_scalar_int(hir_program *p, int64_t v)
{
    /* extents repeat a few small values ({8}, {128}, ...): a table in front of the hash */
    bool small = v >= 0 && v < (int64_t)(sizeof p->small_ints / sizeof *p->small_ints);
    if (small && p->small_ints[v])
        return p->small_ints[v];
    hir_scalar *s = literal(p, HIR_SC_INT, v, 0, NULL, HIR_DT_INDEX);
    if (small)
        p->small_ints[v] = s;
    return s;
}

hir_scalar *hir_scalar_bool(hir_program *p, bool v)
{
    return literal(p, HIR_SC_BOOL, v, 0, NULL, HIR_DT_BOOL);
}

hir_scalar *hir_scalar_float(hir_program *p, hir_dtype dt, double v, const char *spelling)
{
    return literal(p, HIR_SC_FLOAT, 0, v, spelling, dt);
}

hir_scalar *hir_scalar_anon(hir_program *p, hir_sexpr *def)
{
    hir_scalar *s = scalar_alloc(p, HIR_SC_ANON);
    s->def = def;
    return s;
}

hir_scalar *hir_scalar_new_index(hir_program *p, hir_sexpr *def)
{
    /* Always a new symbol, and the next number after it: a number that no longer shows in
     * the text (pu_as_printed frees those of dropped definitions) may still name the dropped
     * symbol, and taking that object over would leave next_scalar where it was, so the
     * following new symbol would be the same object again (a definition of itself). */
    int64_t number = p->next_scalar;
    hir_scalar *s = scalar_alloc(p, HIR_SC_SYMBOL);
    s->number = number;
    s->name = hir_program_intern(p, "i");
    s->dtype = HIR_DT_INDEX;
    hir_map_put(&p->symbols, (uint64_t)number, s);
    bump(&p->next_scalar, number);
    s->def = def;
    s->inline_expand = true;
    return s;
}

/* Function-style names: the family follows from the argument count. */
bool hir_fn_lookup(const char *s, int nargs, hir_sexpr_kind *kind, int *op)
{
    static const hir_sexpr_kind by_nargs[] = {HIR_SX_CALL, HIR_SX_UNARY, HIR_SX_BINARY, HIR_SX_TERNARY};
    if (nargs < 1 || nargs > 3 || !hir_ewise_fn_lookup(s, nargs, op))
        return false;
    *kind = by_nargs[nargs];
    return true;
}

hir_sexpr *hir_sexpr_binary(hir_program *p, hir_binary_op op, hir_scalar *a, hir_scalar *b)
{
    hir_sexpr *e = hir_arena_alloc(p->arena, sizeof *e);
    e->kind = HIR_SX_BINARY;
    e->op = op;
    e->infix = hir_binary_infix(op) != NULL;
    e->fn = e->infix ? NULL : hir_program_intern(p, hir_binary_op_name(op));
    e->nargs = 2;
    e->args[0] = a;
    e->args[1] = b;
    return e;
}

hir_sexpr *hir_sexpr_unary(hir_program *p, hir_unary_op op, hir_scalar *a)
{
    hir_sexpr *e = hir_arena_alloc(p->arena, sizeof *e);
    e->kind = HIR_SX_UNARY;
    e->op = op;
    e->infix = hir_unary_prefix(op) != NULL;
    e->fn = e->infix ? NULL : hir_program_intern(p, hir_unary_op_name(op));
    e->nargs = 1;
    e->args[0] = a;
    return e;
}

hir_comm *hir_comm_get(hir_program *p, int64_t number)
{
    return dense_get(&p->dcomms, &p->comms, number);
}

hir_comm *hir_comm_create(hir_program *p, int64_t number, hir_op op)
{
    hir_comm *c = hir_arena_alloc(p->arena, sizeof *c);
    c->number = number;
    c->op = op;
    dense_put(p, &p->dcomms, &p->comms, number, c);
    bump(&p->next_expr, number);
    return c;
}

hir_comm *hir_comm_new(hir_program *p, hir_op op)
{
    return hir_comm_create(p, p->next_expr, op);
}

_Static_assert(HIR_OP_COUNT <= 256 && HIR_FORM_2026 < 256, "hir_stmt.op and .form are 8 bits");

_Static_assert(HIR_DT_COUNT <= 256 && HIR_SC_FLOAT < 256 && HIR_SX_CALL < 256,
               "hir_scalar.kind, .dtype and hir_sexpr.kind are 8 bits");
_Static_assert(HIR_MEM_COUNT <= 256, "hir_tensor.mem is 8 bits");
_Static_assert(HIR_COMM_COUNT <= 256 && HIR_RED_COUNT <= 256 && HIR_BK_COUNT <= 256,
               "hir_comm.type, .red_op and .backend are 8 bits");

hir_stmt *hir_stmt_new(hir_program *p, hir_op op)
{
    hir_stmt *s = hir_arena_alloc(p->arena, sizeof *s);
    s->op = op;
    if (op == HIR_OP_SDPA || op == HIR_OP_SDPA_BWD)
        s->u.sdpa = hir_arena_alloc(p->arena, sizeof *s->u.sdpa);
    else if (op == HIR_OP_DISPATCH || op == HIR_OP_COMBINE)
        s->u.moe = hir_arena_alloc(p->arena, sizeof *s->u.moe);
    s->form = p->form;           /* statements made by passes take the program's form */
    return s;
}

void hir_stmt_set_inputs(hir_program *p, hir_stmt *s, int n, hir_value **vals)
{
    s->nin = n;
    s->in = hir_arena_alloc(p->arena, sizeof(*vals) * (n ? n : 1));
    s->in_loc = hir_arena_alloc(p->arena, sizeof *s->in_loc * (n ? n : 1));
    if (n)
        memcpy(s->in, vals, sizeof(*vals) * n);
}

void hir_block_append(hir_program *p, hir_block *b, hir_stmt *s)
{
    hir_ptrvec_push(p->arena, &b->stmts, s);
}

void hir_block_insert(hir_program *p, hir_block *b, int at, hir_stmt *s)
{
    hir_ptrvec_insert(p->arena, &b->stmts, at, s);
}

int hir_tensor_logical_pos(const hir_tensor *t, const hir_iterdomain *id)
{
    for (int i = 0; i < t->nloop; i++)
        if (t->shape.ids[i] == id)
            return i;
    return -1;
}

bool hir_tensor_same_type(const hir_tensor *a, const hir_tensor *b)
{
    if (a->mem != b->mem || a->dtype != b->dtype || a->nloop != b->nloop || a->mesh != b->mesh)
        return false;
    if ((a->annotations == NULL) != (b->annotations == NULL) ||
        (a->annotations && strcmp(a->annotations, b->annotations)))
        return false;
    for (int i = 0; i < a->nloop; i++)
        if (a->loop[i] != b->loop[i])
            return false;
    return true;
}

int hir_tensor_stream_axis(const hir_tensor *t)
{
    for (int i = 0; i < t->nloop; i++)
        if (hir_ptype_is_stream(t->loop[i]->ptype))
            return i;
    return -1;
}

bool hir_block_walk(hir_block *b, int depth, hir_stmt_visit fn, void *ctx)
{
    for (int i = 0; i < b->stmts.n; i++) {
        hir_stmt *s = b->stmts.items[i];
        if (!fn(s, depth, ctx))
            return false;
        if (hir_ops[s->op].flags & HIR_OPF_REGION) {
            if (!hir_block_walk(&s->body, depth + 1, fn, ctx))
                return false;
            if (!hir_block_walk(&s->else_body, depth + 1, fn, ctx))
                return false;
        }
    }
    return true;
}
