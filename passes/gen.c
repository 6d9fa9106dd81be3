/* gen.c — generated input programs (see gen.h). Values are numbered the way nvFuser numbers
 * them for these fusions: inputs first, then the output, then the resharding Set's output,
 * IterDomains in logical order, so generated text reads like a captured dump. */
#include "passes/gen.h"

#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include "passes/ir_util.h"

static const char *const kind_names[] = {"ag-linear", "ag-matmul", "linear", "matmul",
                                         "linear-rs", "matmul-rs", "linear-rs-ref", "matmul-rs-ref",
                                         "tp-mlp"};
#define NKINDS ((int)(sizeof kind_names / sizeof *kind_names))

static bool is_rs_ref(hir_gen_kind k) { return k == HIR_GEN_LINEAR_RS_REF || k == HIR_GEN_MATMUL_RS_REF; }
static bool is_rs(hir_gen_kind k)
{
    return k == HIR_GEN_LINEAR_RS || k == HIR_GEN_MATMUL_RS || is_rs_ref(k) || k == HIR_GEN_TP_MLP;
}

int hir_gen_kind_parse(const char *name, hir_gen_kind *out)
{
    for (int i = 0; i < NKINDS; i++)
        if (!strcmp(name, kind_names[i])) {
            *out = (hir_gen_kind)i;
            return 0;
        }
    return -1;
}

int hir_gen_check(const hir_gen_params *g, hir_diag *dg)
{
    const char *names[] = {"--m", "--k", "--n", "--d"};
    int64_t v[] = {g->m, g->k, g->n, g->d};
    for (int i = 0; i < 4; i++)
        if (v[i] <= 0) {
            hir_diag_error(dg, "%s must be a positive integer (got %lld)", names[i], (long long)v[i]);
            return -1;
        }
    bool ag = g->kind == HIR_GEN_AG_LINEAR || g->kind == HIR_GEN_AG_MATMUL || is_rs(g->kind);
    if (!ag && g->d != 1) {
        hir_diag_error(dg, "%s is a single-device GEMM; --d must be 1 (got %lld)",
                 kind_names[g->kind], (long long)g->d);
        return -1;
    }
    if (ag && g->m % g->d) {
        hir_diag_error(dg, "--m (%lld) must be divisible by --d (%lld): each device holds m/d rows",
                 (long long)g->m, (long long)g->d);
        return -1;
    }
    if (g->kind == HIR_GEN_TP_MLP && g->n % g->d) {
        hir_diag_error(dg, "--n (%lld) must be divisible by --d (%lld): each device holds n/d "
                 "feed-forward columns", (long long)g->n, (long long)g->d);
        return -1;
    }
    if (is_rs(g->kind) && g->kind != HIR_GEN_TP_MLP && g->k % g->d) {
        hir_diag_error(dg, "--k (%lld) must be divisible by --d (%lld): each device holds k/d columns",
                 (long long)g->k, (long long)g->d);
        return -1;
    }
    if (g->bias && g->kind != HIR_GEN_AG_LINEAR && g->kind != HIR_GEN_LINEAR) {
        hir_diag_error(dg, "%s has no bias", kind_names[g->kind]);
        return -1;
    }
    return 0;
}

typedef struct gen {
    hir_program *p;
    hir_mesh *mesh;
    hir_dtype dt;
    int64_t next_t, next_id;
} gen;

static hir_iterdomain *id(gen *g, hir_itype it, hir_ptype pt, int64_t extent)
{
    return hir_iterdomain_create(g->p, g->next_id++, it, pt, hir_scalar_int(g->p, extent));
}

static hir_tensor *tensor(gen *g, int n, hir_iterdomain **ids)
{
    return hir_tensor_create(g->p, g->next_t++, HIR_MEM_GLOBAL, g->dt, n, ids, g->mesh);
}

static hir_stmt *gemm(gen *g, bool linear, hir_tensor *out, hir_tensor *a, hir_tensor *b, hir_tensor *bias)
{
    hir_stmt *s = hir_stmt_new(g->p, linear ? HIR_OP_LINEAR : HIR_OP_MATMUL);
    s->out = out;
    hir_value *v[3] = {&a->head, &b->head, bias ? &bias->head : NULL};
    hir_stmt_set_inputs(g->p, s, bias ? 3 : 2, v);
    return s;
}

static int gen_build(const hir_gen_params *prm, hir_program *p, hir_diag *dg);

static hir_tensor *tensor_ids(gen *g, int n, const hir_itype *it, const hir_ptype *pt, const int64_t *ext)
{
    hir_iterdomain *ids[8];
    for (int i = 0; i < n; i++)
        ids[i] = id(g, it[i], pt[i], ext[i]);
    return tensor(g, n, ids);
}

static hir_stmt *one_in(hir_program *p, hir_op op, hir_tensor *out, hir_tensor *in)
{
    hir_stmt *s = hir_stmt_new(p, op);
    s->out = out;
    hir_value *v[1] = {&in->head};
    hir_stmt_set_inputs(p, s, 1, v);
    return s;
}

/* The reference of linear-rs / matmul-rs (same inputs, the output sharded the same way) with
 * one GEMM per rank over the whole K, so that the randomized product check of hir-run --check
 * verifies it at any size: A and W gathered over their device axis, A's chunk axis moved out
 * (Set.Permute) and the K parts joined (view), this rank's chunk taken (a Set onto the device
 * axis), then linear / matmul straight into the output. */
static int gen_rs_ref(gen *g, const hir_gen_params *prm)
{
    hir_program *p = g->p;
    int64_t d = prm->d, m = prm->m, k = prm->k, n = prm->n, r = m / d, kd = k / d;
    bool linear = prm->kind == HIR_GEN_LINEAR_RS_REF;
    const hir_itype I = HIR_IT_ITER, B = HIR_IT_BROADCAST, R = HIR_IT_REDUCTION;
    const hir_ptype S = HIR_PT_SERIAL, X = HIR_PT_DIDX, T = HIR_PT_STREAM;
    hir_tensor *A = tensor_ids(g, 4, (hir_itype[]){I, I, I, I}, (hir_ptype[]){X, T, S, S},
                               (int64_t[]){d, d, r, kd});
    hir_tensor *W = linear ? tensor_ids(g, 3, (hir_itype[]){I, I, I}, (hir_ptype[]){X, S, S},
                                        (int64_t[]){d, n, kd})
                           : tensor_ids(g, 4, (hir_itype[]){I, B, I, I}, (hir_ptype[]){X, S, S, S},
                                        (int64_t[]){d, 1, kd, n});
    hir_tensor *O = tensor_ids(g, 4, (hir_itype[]){I, I, I, R}, (hir_ptype[]){X, S, S, S},
                               (int64_t[]){d, r, n, k});
    hir_ptrvec_push(p->arena, &p->inputs, A);
    hir_ptrvec_push(p->arena, &p->inputs, W);
    hir_ptrvec_push(p->arena, &p->outputs, O);
    /* A: gathered [j, c, r, kd] -> permuted [c, r, j, kd] (clones made in input order, numbers
     * carry the permutation) -> [c, r, k] -> this rank's chunk [DID c, r, k] */
    hir_tensor *Ag = tensor_ids(g, 4, (hir_itype[]){I, I, I, I}, (hir_ptype[]){S, S, S, S},
                                (int64_t[]){d, d, r, kd});
    hir_iterdomain *pj = id(g, I, S, d), *pc = id(g, I, S, d), *pr = id(g, I, S, r), *pk = id(g, I, S, kd);
    hir_tensor *Ap = tensor(g, 4, (hir_iterdomain *[]){pc, pr, pj, pk});
    hir_tensor *Av = tensor_ids(g, 3, (hir_itype[]){I, I, I}, (hir_ptype[]){S, S, S}, (int64_t[]){d, r, k});
    hir_tensor *Ac = tensor_ids(g, 3, (hir_itype[]){I, I, I}, (hir_ptype[]){X, S, S}, (int64_t[]){d, r, k});
    hir_block_append(p, &p->body, pu_set(p, Ag, A));
    hir_stmt *perm = pu_set(p, Ap, Ag);
    perm->u.ls.permute = true;
    hir_block_append(p, &p->body, perm);
    hir_block_append(p, &p->body, one_in(p, HIR_OP_VIEW, Av, Ap));
    hir_block_append(p, &p->body, pu_set(p, Ac, Av));
    /* W: gathered [j, n, kd] -> [n, j, kd] -> [n, k]; B: gathered [j, 1, kd, n] -> [k, n] */
    hir_tensor *Wk;
    if (linear) {
        hir_tensor *Wg = tensor_ids(g, 3, (hir_itype[]){I, I, I}, (hir_ptype[]){S, S, S}, (int64_t[]){d, n, kd});
        hir_iterdomain *wj = id(g, I, S, d), *wn = id(g, I, S, n), *wk = id(g, I, S, kd);
        hir_tensor *Wp = tensor(g, 3, (hir_iterdomain *[]){wn, wj, wk});
        Wk = tensor_ids(g, 2, (hir_itype[]){I, I}, (hir_ptype[]){S, S}, (int64_t[]){n, k});
        hir_block_append(p, &p->body, pu_set(p, Wg, W));
        hir_stmt *wperm = pu_set(p, Wp, Wg);
        wperm->u.ls.permute = true;
        hir_block_append(p, &p->body, wperm);
        hir_block_append(p, &p->body, one_in(p, HIR_OP_VIEW, Wk, Wp));
    } else {
        hir_tensor *Wg = tensor_ids(g, 4, (hir_itype[]){I, B, I, I}, (hir_ptype[]){S, S, S, S},
                                    (int64_t[]){d, 1, kd, n});
        Wk = tensor_ids(g, 2, (hir_itype[]){I, I}, (hir_ptype[]){S, S}, (int64_t[]){k, n});
        hir_block_append(p, &p->body, pu_set(p, Wg, W));
        hir_block_append(p, &p->body, one_in(p, HIR_OP_VIEW, Wk, Wg));
    }
    hir_block_append(p, &p->body, gemm(g, linear, O, Ac, Wk, NULL));
    return 0;
}

/* A tensor-parallel MLP block (hidden size k, feed-forward size n, m tokens): X [DID{d}, m/d, k]
 * (rows sharded), W1 [DID{d}, n/d, k] and W2 [DID{d}, k, n/d] (each rank's slice of the
 * feed-forward axis). The column-parallel half gathers X into a stream-parallel [d, m/d, k] and
 * multiplies it by W1 (H [d, m/d, n/d]); GELU writes [1, d, m/d, n/d] (a leading size-1 axis in
 * the place of the device axis the row-parallel half reduces); the row-parallel half multiplies
 * that by W2 into the partial sums P [DID{d}, d, m/d, k] and reduce-scatters them over rows:
 * Y [r{d}, DID{d}, m/d, k], sharded as X is. --stream-parallel pipelines both halves. */
static int gen_tp_mlp(gen *g, const hir_gen_params *prm)
{
    hir_program *p = g->p;
    int64_t d = prm->d, m = prm->m, k = prm->k, n = prm->n, r = m / d, nd = n / d;
    const hir_itype I = HIR_IT_ITER, B = HIR_IT_BROADCAST, R = HIR_IT_REDUCTION;
    const hir_ptype S = HIR_PT_SERIAL, X = HIR_PT_DIDX, T = HIR_PT_STREAM;
    hir_tensor *Xin = tensor_ids(g, 3, (hir_itype[]){I, I, I}, (hir_ptype[]){X, S, S}, (int64_t[]){d, r, k});
    hir_tensor *W1 = tensor_ids(g, 3, (hir_itype[]){I, I, I}, (hir_ptype[]){X, S, S}, (int64_t[]){d, nd, k});
    hir_tensor *W2 = tensor_ids(g, 3, (hir_itype[]){I, I, I}, (hir_ptype[]){X, S, S}, (int64_t[]){d, k, nd});
    hir_tensor *Y = tensor_ids(g, 4, (hir_itype[]){R, I, I, I}, (hir_ptype[]){S, X, S, S}, (int64_t[]){d, d, r, k});
    hir_ptrvec_push(p->arena, &p->inputs, Xin);
    hir_ptrvec_push(p->arena, &p->inputs, W1);
    hir_ptrvec_push(p->arena, &p->inputs, W2);
    hir_ptrvec_push(p->arena, &p->outputs, Y);
    hir_tensor *G = tensor_ids(g, 3, (hir_itype[]){I, I, I}, (hir_ptype[]){T, S, S}, (int64_t[]){d, r, k});
    hir_tensor *H = tensor_ids(g, 4, (hir_itype[]){I, I, I, R}, (hir_ptype[]){T, S, S, S}, (int64_t[]){d, r, nd, k});
    hir_tensor *H2 = tensor_ids(g, 4, (hir_itype[]){B, I, I, I}, (hir_ptype[]){S, T, S, S}, (int64_t[]){1, d, r, nd});
    hir_tensor *P = tensor_ids(g, 5, (hir_itype[]){I, I, I, I, R}, (hir_ptype[]){X, T, S, S, S},
                               (int64_t[]){d, d, r, k, nd});
    hir_block_append(p, &p->body, pu_set(p, G, Xin));
    hir_block_append(p, &p->body, gemm(g, true, H, G, W1, NULL));
    hir_stmt *gelu = one_in(p, HIR_OP_UNARY, H2, H);
    gelu->u.ew.op = HIR_UN_GELU;
    gelu->u.ew.fn = "gelu";
    hir_block_append(p, &p->body, gelu);
    hir_block_append(p, &p->body, gemm(g, true, P, H2, W2, NULL));
    hir_stmt *red = one_in(p, HIR_OP_REDUCTION, Y, P);
    red->u.red.op_name = "add";
    red->u.red.op = HIR_RED_SUM;
    red->u.red.init = hir_scalar_float(p, HIR_DT_FLOAT, 0.0, "float(0)");
    hir_block_append(p, &p->body, red);
    return 0;
}

/* GEMM + reduce-scatter as nvFuser's MultiDeviceExecutor hands it to the stream pass (the
 * pre-pass form of the 2026 print mm-rs-reduce-mde.hir): every device holds all m rows of A
 * and its k/d slice of K; the partial GEMM P is stream-parallel over d row chunks; the sum
 * of P over the devices, P's device axis reduced, is scattered so that device r holds chunk
 * r. A's row-chunk axis is stream-parallel as nvFuser schedules it (the chunk a loop iteration
 * reads). Numbering follows creation order: A, B/W, P, out. */
static int gen_rs(gen *g, const hir_gen_params *prm)
{
    hir_program *p = g->p;
    int64_t d = prm->d, m = prm->m, k = prm->k, n = prm->n;
    bool linear = prm->kind == HIR_GEN_LINEAR_RS;
    hir_iterdomain *ia[4] = {id(g, HIR_IT_ITER, HIR_PT_DIDX, d), id(g, HIR_IT_ITER, HIR_PT_STREAM, d),
                             id(g, HIR_IT_ITER, HIR_PT_SERIAL, m / d),
                             id(g, HIR_IT_ITER, HIR_PT_SERIAL, k / d)};
    hir_tensor *A = tensor(g, 4, ia);
    hir_tensor *W;
    if (linear) {                /* W [DIDx{d}, n, k/d] */
        hir_iterdomain *iw[3] = {id(g, HIR_IT_ITER, HIR_PT_DIDX, d), id(g, HIR_IT_ITER, HIR_PT_SERIAL, n),
                                 id(g, HIR_IT_ITER, HIR_PT_SERIAL, k / d)};
        W = tensor(g, 3, iw);
    } else {                     /* B [DIDx{d}, b{1}, k/d, n] */
        hir_iterdomain *iw[4] = {id(g, HIR_IT_ITER, HIR_PT_DIDX, d), id(g, HIR_IT_BROADCAST, HIR_PT_SERIAL, 1),
                                 id(g, HIR_IT_ITER, HIR_PT_SERIAL, k / d),
                                 id(g, HIR_IT_ITER, HIR_PT_SERIAL, n)};
        W = tensor(g, 4, iw);
    }
    /* P [DIDx{d}, streamIdx{d}, m/d, n, rK{k/d}] */
    hir_iterdomain *ip[5] = {id(g, HIR_IT_ITER, HIR_PT_DIDX, d), id(g, HIR_IT_ITER, HIR_PT_STREAM, d),
                             id(g, HIR_IT_ITER, HIR_PT_SERIAL, m / d), id(g, HIR_IT_ITER, HIR_PT_SERIAL, n),
                             id(g, HIR_IT_REDUCTION, HIR_PT_SERIAL, k / d)};
    hir_tensor *P = tensor(g, 5, ip);
    /* out [r{d}, DIDx{d}, m/d, n]: P's device axis summed, its stream axis sharded */
    hir_iterdomain *io[4] = {id(g, HIR_IT_REDUCTION, HIR_PT_SERIAL, d), id(g, HIR_IT_ITER, HIR_PT_DIDX, d),
                             id(g, HIR_IT_ITER, HIR_PT_SERIAL, m / d), id(g, HIR_IT_ITER, HIR_PT_SERIAL, n)};
    hir_tensor *O = tensor(g, 4, io);
    hir_ptrvec_push(p->arena, &p->inputs, A);
    hir_ptrvec_push(p->arena, &p->inputs, W);
    hir_ptrvec_push(p->arena, &p->outputs, O);
    hir_block_append(p, &p->body, gemm(g, linear, P, A, W, NULL));
    hir_stmt *r = hir_stmt_new(p, HIR_OP_REDUCTION);
    r->out = O;
    hir_value *v[1] = {&P->head};
    hir_stmt_set_inputs(p, r, 1, v);
    r->u.red.op_name = "add";
    r->u.red.op = HIR_RED_SUM;
    r->u.red.init = hir_scalar_float(p, HIR_DT_FLOAT, 0.0, "float(0)");
    r->u.red.allreduce = false;
    hir_block_append(p, &p->body, r);
    return 0;
}

int hir_gen_program(const hir_gen_params *prm, hir_program **out, hir_diag *dg)
{
    *out = NULL;
    if (hir_gen_check(prm, dg))
        return -1;
    hir_program *p = hir_program_new();
    jmp_buf oom;
    if (!p) {
        hir_diag_error(dg, "out of memory");
        return HIR_ENOMEM;
    }
    if (setjmp(oom)) {            /* the arena (or a map of p) could not grow */
        hir_program_free(p);
        hir_diag_error(dg, "out of memory");
        return HIR_ENOMEM;
    }
    hir_arena_on_oom(p->arena, &oom);
    int rc = gen_build(prm, p, dg);
    if (rc) {
        hir_program_free(p);
        return rc;
    }
    hir_arena_on_oom(p->arena, NULL);
    *out = p;
    return 0;
}

/* Builds the program into p; on failure the caller frees p. */
static int gen_build(const hir_gen_params *prm, hir_program *p, hir_diag *dg)
{
    gen g = {p, NULL, prm->dtype, 0, 0};
    int64_t d = prm->d, m = prm->m, k = prm->k, n = prm->n;
    int64_t dims[1] = {d};
    int64_t devs[4096];
    if (d > 4096) {
        hir_diag_error(dg, "--d (%lld) is larger than 4096", (long long)d);
        return -1;
    }
    for (int64_t i = 0; i < d; i++)
        devs[i] = i;
    g.mesh = hir_mesh_intern(p, 1, dims, devs);
    if (prm->kind == HIR_GEN_TP_MLP)
        return gen_tp_mlp(&g, prm);
    if (is_rs_ref(prm->kind))
        return gen_rs_ref(&g, prm);
    if (is_rs(prm->kind))
        return gen_rs(&g, prm);
    bool ag = prm->kind == HIR_GEN_AG_LINEAR || prm->kind == HIR_GEN_AG_MATMUL;
    bool linear = prm->kind == HIR_GEN_AG_LINEAR || prm->kind == HIR_GEN_LINEAR;
    bool bias = linear && prm->bias;

    /* A: [DIDx{d}, m/d, k] (sharded rows) or [m, k] */
    hir_iterdomain *ia[3];
    int na = 0;
    if (ag)
        ia[na++] = id(&g, HIR_IT_ITER, HIR_PT_DIDX, d);
    ia[na++] = id(&g, HIR_IT_ITER, HIR_PT_SERIAL, ag ? m / d : m);
    ia[na++] = id(&g, HIR_IT_ITER, HIR_PT_SERIAL, k);
    hir_tensor *A = tensor(&g, na, ia);
    /* W: [n, k] for linear, B: [k, n] for matmul */
    hir_iterdomain *iw[2];
    iw[0] = id(&g, HIR_IT_ITER, HIR_PT_SERIAL, linear ? n : k);
    iw[1] = id(&g, HIR_IT_ITER, HIR_PT_SERIAL, linear ? k : n);
    hir_tensor *W = tensor(&g, 2, iw);
    hir_tensor *b = NULL;
    if (bias) {
        hir_iterdomain *ib = id(&g, HIR_IT_ITER, HIR_PT_SERIAL, n);
        b = tensor(&g, 1, &ib);
    }
    /* out: [streamIdx{d}, m/d, n, rK] (stream-parallel rows) or [m, n, rK] */
    hir_iterdomain *io[4];
    int no = 0;
    if (ag)
        io[no++] = id(&g, HIR_IT_ITER, HIR_PT_STREAM, d);
    io[no++] = id(&g, HIR_IT_ITER, HIR_PT_SERIAL, ag ? m / d : m);
    io[no++] = id(&g, HIR_IT_ITER, HIR_PT_SERIAL, n);
    io[no++] = id(&g, HIR_IT_REDUCTION, HIR_PT_SERIAL, k);
    hir_tensor *O = tensor(&g, no, io);

    hir_ptrvec_push(p->arena, &p->inputs, A);
    hir_ptrvec_push(p->arena, &p->inputs, W);
    if (b)
        hir_ptrvec_push(p->arena, &p->inputs, b);
    hir_ptrvec_push(p->arena, &p->outputs, O);

    hir_tensor *lhs = A;
    if (ag) {
        /* the resharding Set: the device axis of A becomes the stream axis of the gathered A */
        hir_iterdomain *ig[3] = {id(&g, HIR_IT_ITER, HIR_PT_STREAM, d),
                                 id(&g, HIR_IT_ITER, HIR_PT_SERIAL, m / d),
                                 id(&g, HIR_IT_ITER, HIR_PT_SERIAL, k)};
        lhs = tensor(&g, 3, ig);
        hir_block_append(p, &p->body, pu_set(p, lhs, A));
    }
    hir_block_append(p, &p->body, gemm(&g, linear, O, lhs, W, b));
    return 0;
}
