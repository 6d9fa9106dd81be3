/* axis_map.c — axis correspondence through operations (see axis_map.h). The rules are those
 * of hostir-format.md 3.3: position-wise for Set and element-wise ops (non-reduction logical
 * axes, right-aligned), index-wise for reductions, and the M/N/K rules of linear and matmul.
 * Mapping is transitive, like IdModel's broadcast graph. */
#include "passes/axis_map.h"

static hir_iterdomain *find(pu_axis_map *m, hir_iterdomain *id)
{
    for (;;) {
        hir_iterdomain *up = hir_map_get(&m->parent, (uint64_t)id->number);
        if (!up || up == id)
            return id;
        id = up;
    }
}

static void unite(pu_axis_map *m, hir_iterdomain *a, hir_iterdomain *b)
{
    a = find(m, a);
    b = find(m, b);
    if (a == b)
        return;
    /* the older (lower-numbered) IterDomain represents the class */
    if (b->number < a->number) {
        hir_iterdomain *t = a;
        a = b;
        b = t;
    }
    hir_map_put(&m->parent, (uint64_t)b->number, a);
}

/* non-reduction logical axes of t */
static int nonred(const hir_tensor *t, hir_iterdomain **out)
{
    int n = 0;
    for (int i = 0; i < t->nloop; i++)
        if (t->shape.ids[i]->itype != HIR_IT_REDUCTION)
            out[n++] = t->shape.ids[i];
    return n;
}

static void positionwise(pu_axis_map *m, const hir_tensor *in, const hir_tensor *out)
{
    hir_iterdomain *a[64], *b[64];
    if (in->nloop > 64 || out->nloop > 64)
        return;
    int na = nonred(in, a), nb = nonred(out, b);
    for (int i = 1; i <= na && i <= nb; i++)
        unite(m, a[na - i], b[nb - i]);
}

static void map_linear(pu_axis_map *m, hir_stmt *s)
{
    hir_tensor *A = hir_value_tensor(s->in[0]), *W = hir_value_tensor(s->in[1]);
    hir_tensor *b = s->nin > 2 ? hir_value_tensor(s->in[2]) : NULL, *o = s->out;
    if (!A || !o || A->nloop < 1)
        return;
    int nA = A->nloop, no = o->nloop;
    /* out = [A's leading axes..., N, rK] */
    for (int i = 0; i < nA - 1 && i < no; i++)
        unite(m, A->shape.ids[i], o->shape.ids[i]);
    if (no >= 1)
        unite(m, A->shape.ids[nA - 1], o->shape.ids[no - 1]);
    if (W && W->nloop >= 2 && no >= 2) {
        unite(m, W->shape.ids[W->nloop - 2], o->shape.ids[no - 2]);
        unite(m, W->shape.ids[W->nloop - 1], o->shape.ids[no - 1]);
    }
    if (b && b->nloop >= 1 && no >= 2)
        unite(m, b->shape.ids[b->nloop - 1], o->shape.ids[no - 2]);
}

static void map_matmul(pu_axis_map *m, hir_stmt *s)
{
    hir_tensor *A = hir_value_tensor(s->in[0]), *B = hir_value_tensor(s->in[1]), *o = s->out;
    if (!A || !B || !o || A->nloop < 2 || B->nloop < 2 || o->nloop < 3)
        return;
    int nA = A->nloop, nB = B->nloop, no = o->nloop;
    /* out = [batch..., M, N, rK]; A = [batch..., M, K]; B = [batch..., K, N] */
    for (int i = 0; i < nA - 1; i++) {
        int j = no - 1 - nA + i;
        if (j >= 0)
            unite(m, A->shape.ids[i], o->shape.ids[j]);
    }
    unite(m, A->shape.ids[nA - 1], o->shape.ids[no - 1]);
    unite(m, B->shape.ids[nB - 2], o->shape.ids[no - 1]);
    unite(m, B->shape.ids[nB - 1], o->shape.ids[no - 2]);
    for (int i = 0; i < nB - 2; i++) {
        int j = no - 3 - (nB - 2) + i;
        if (j >= 0)
            unite(m, B->shape.ids[i], o->shape.ids[j]);
    }
}

static bool map_stmt(hir_stmt *s, int depth, void *ctx)
{
    (void)depth;
    pu_axis_map *m = ctx;
    if (!s->out)
        return true;
    switch (s->op) {
    case HIR_OP_LINEAR:
        map_linear(m, s);
        break;
    case HIR_OP_MATMUL:
        map_matmul(m, s);
        break;
    case HIR_OP_REDUCTION: {
        hir_tensor *in = hir_value_tensor(s->in[0]);
        for (int i = 0; in && i < in->nloop && i < s->out->nloop; i++)
            unite(m, in->shape.ids[i], s->out->shape.ids[i]);
        break;
    }
    default:
        /* Set-like and element-wise statements (a DID axis of a Set input thereby maps to
         * the stream axis of its output: the allgather case) */
        if (hir_ops[s->op].fmt == HIR_FMT_LOADSTORE || s->op == HIR_OP_UNARY ||
            s->op == HIR_OP_BINARY || s->op == HIR_OP_TERNARY || s->op == HIR_OP_SLICE)
            for (int i = 0; i < s->nin; i++) {
                hir_tensor *in = hir_value_tensor(s->in[i]);
                if (in)
                    positionwise(m, in, s->out);
            }
        break;
    }
    return true;
}

void pu_axis_map_build(pu_axis_map *m, hir_program *p)
{
    hir_map_init_in(&m->parent, p->arena);
    hir_block_walk(&p->body, 0, map_stmt, m);
}

void pu_axis_map_fini(pu_axis_map *m) { hir_map_fini(&m->parent); }

bool pu_axis_mapped(pu_axis_map *m, const hir_iterdomain *a, const hir_iterdomain *b)
{
    return find(m, (hir_iterdomain *)a) == find(m, (hir_iterdomain *)b);
}

int pu_axis_find(pu_axis_map *m, const hir_tensor *t, const hir_iterdomain *id, int *second)
{
    int found = -1;
    for (int i = 0; i < t->nloop; i++)
        if (pu_axis_mapped(m, t->shape.ids[i], id)) {
            if (found >= 0) {
                if (second)
                    *second = i;
                return -2;
            }
            found = i;
        }
    return found;
}
