/* agree.c — the checks of a job across ranks and against the world, before anything runs (not
 * the --check comparison, which is compare.c's): the program's meshes against the world size,
 * the program text being the same on every rank, the CUDA-IPC P2P order of its blocks, and the
 * node assignment its node tests assume. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "runner/job/job_internal.h"
#include "runner/boot/boot.h"
#include "support/support.h"

/* ---------------------------------------------------------------- meshes */

typedef struct mesh_walk {
    uint8_t *seen;               /* devices named, index = device id, bounded by cap */
    int64_t cap;
    int64_t bad;                 /* a device id outside [0, cap), or -1 */
    int64_t max;                 /* largest device id named */
    int named;
} mesh_walk;

static void note_device(mesh_walk *w, int64_t d)
{
    w->named = 1;
    if (d > w->max)
        w->max = d;
    if (d < 0 || d >= w->cap) {
        if (w->bad < 0)
            w->bad = d;
        return;
    }
    w->seen[d] = 1;
}

static void note_tensor(mesh_walk *w, const hir_tensor *t)
{
    if (t && t->mesh)
        for (int64_t i = 0; i < t->mesh->ndevices; i++)
            note_device(w, t->mesh->devices[i]);
}

static bool walk_stmt(hir_stmt *s, int depth, void *ctx)
{
    (void)depth;
    mesh_walk *w = ctx;
    note_tensor(w, s->out);
    for (int i = 0; i < s->nin; i++)
        note_tensor(w, hir_value_tensor(s->in[i]));
    if (s->op == HIR_OP_COMMUNICATION)
        for (int i = 0; i < s->u.comm->nteam; i++)
            note_device(w, s->u.comm->team[i]);
    if (s->op == HIR_OP_COMMUNICATION || s->op == HIR_OP_P2P) {
        note_tensor(w, s->u.comm->input);
        note_tensor(w, s->u.comm->output);
        note_tensor(w, s->u.comm->buffer);
    }
    return true;
}

/* The rank count a mesh naming device `max` needs (max + 1, saturated: a mutated program may
 * name device INT64_MAX). */
static int64_t ranks_needed(int64_t max)
{
    return max < INT64_MAX ? max + 1 : INT64_MAX;
}

int hir_check_meshes(hir_program *p, int size, hir_diag *e)
{
    mesh_walk w = {0};
    w.cap = size;
    w.bad = -1;
    w.seen = calloc((size_t)size + 1, 1);
    if (!w.seen)
        return hir_fail(e, "out of host memory");
    for (int i = 0; i < p->inputs.n; i++)
        note_tensor(&w, hir_value_tensor(p->inputs.items[i]));
    for (int i = 0; i < p->outputs.n; i++)
        note_tensor(&w, hir_value_tensor(p->outputs.items[i]));
    hir_block_walk(&p->body, 0, walk_stmt, &w);
    int rc = 0;
    if (w.bad >= 0) {
        rc = hir_fail(e, "the program's meshes name device %" PRId64 ", but the job has %d "
                           "rank%s (devices 0..%d); run it with -np %" PRId64, w.max, size,
                           size == 1 ? "" : "s", size - 1, ranks_needed(w.max));
    } else if (w.named) {
        int missing = -1, nmissing = 0;
        for (int r = 0; r < size; r++)
            if (!w.seen[r]) {
                if (missing < 0)
                    missing = r;
                nmissing++;
            }
        if (nmissing)
            rc = hir_fail(e, "the program's meshes name devices up to %" PRId64 ", but the "
                               "job has %d ranks: rank %d%s is in no mesh; run it with -np %"
                               PRId64, w.max, size, missing, nmissing > 1 ? " (and others)" : "",
                               ranks_needed(w.max));
    }
    free(w.seen);
    return rc;
}

/* ---------------------------------------------------------------- same program everywhere */

uint64_t hir_check_text_hash(const char *text, size_t len)
{
    return hir_fnv1a(text, len, HIR_FNV1A_INIT);
}

int hir_check_same_program(hir_boot *boot, uint64_t hash, const char *what, hir_diag *e)
{
    int size = hir_boot_size(boot), rank = hir_boot_rank(boot);
    if (size == 1)
        return 0;
    int *team = malloc(sizeof(int) * (size_t)size);
    uint64_t *all = malloc(sizeof(uint64_t) * (size_t)size);
    if (!team || !all) {
        free(team);
        free(all);
        return hir_fail(e, "out of host memory");
    }
    for (int r = 0; r < size; r++)
        team[r] = r;
    int rc = 0;
    for (int r = 0; r < size && !rc; r++) {
        all[r] = r == rank ? hash : 0;
        rc = hir_boot_team_bcast(boot, team, size, r, &all[r], sizeof all[r], e);
    }
    if (!rc) {
        char list[256];
        size_t k = 0;
        int n = 0;
        list[0] = 0;
        for (int r = 1; r < size; r++)
            if (all[r] != all[0]) {
                if (k < sizeof list - 16)
                    k += (size_t)snprintf(list + k, sizeof list - k, "%s%d", n ? ", " : "", r);
                n++;
            }
        if (n)
            rc = hir_fail(e, "the %s differs between ranks: rank%s %s read a text other "
                               "than rank 0's (hash %016" PRIx64 "); every rank must run the "
                               "same program", what, n > 1 ? "s" : "", list, all[0]);
    }
    free(team);
    free(all);
    return rc;
}

/* ---------------------------------------------------------------- P2P order */

typedef struct order_ctx {
    hir_p2p_protocol proto;
    hir_diag *e;
    int bad, fatal;
} order_ctx;

/* `exchange`: b is the else-branch of an IF directly in a kernel-IR FOR body — the shape of
 * the pipeline's exchange, which every rank runs at the same iteration. There a wrong order
 * deadlocks for certain; elsewhere it depends on what the other ranks run, so it is a warning. */
static void order_block(order_ctx *c, const hir_block *b, bool exchange)
{
    const hir_stmt *first_send = NULL, *first_recv = NULL;
    int is = -1, ir = -1;
    for (int i = 0; i < hir_block_size(b); i++) {
        const hir_stmt *s = hir_block_at(b, i);
        if (hir_ops[s->op].flags & HIR_OPF_REGION) {
            for (int k = 0; s->op == HIR_OP_FOR && k < hir_block_size(&s->body); k++) {
                const hir_stmt *t = hir_block_at(&s->body, k);
                if (t->op == HIR_OP_IF)
                    order_block(c, &t->else_body, true);
            }
            order_block(c, &s->body, false);
            if (s->op != HIR_OP_IF || !exchange)
                order_block(c, &s->else_body, false);
        }
        if (s->op != HIR_OP_P2P || s->u.comm->backend != HIR_BK_CUDA)
            continue;
        if (s->u.comm->is_send && !first_send) {
            first_send = s;
            is = i;
        }
        if (!s->u.comm->is_send && !first_recv) {
            first_recv = s;
            ir = i;
        }
    }
    if (!first_send || !first_recv)
        return;
    /* the blocking half (receive for Get, send for Put) must not come first */
    bool put = c->proto == HIR_P2P_PUT;
    const hir_stmt *blocking = put ? first_send : first_recv;
    const hir_stmt *signal = put ? first_recv : first_send;
    if ((put ? is : ir) > (put ? ir : is))
        return;
    c->bad++;
    c->fatal += exchange;
    if (c->e) {
        hir_diag_emit(c->e, exchange ? HIR_ERROR : HIR_WARNING, blocking->loc,
                "with the %s protocol, P2PCommunication %lld (%s) is queued "
                "before P2PCommunication %lld (%s) of the same block; %s every stream waits "
                "before signalling its peer and the ring cannot complete (hostir-format.md 4.6). "
                "Lower it with --pass-pipeline='backend{kind=cuda,protocol=%s}' or run with "
                "--p2p-protocol=%s.",
                put ? "Put" : "Get",
                (long long)blocking->u.comm->number, blocking->u.comm->is_send ? "send" : "recv",
                (long long)signal->u.comm->number, signal->u.comm->is_send ? "send" : "recv",
                exchange ? "every rank runs this exchange at the same iteration, so"
                         : "if every rank runs this block,",
                put ? "put" : "get", put ? "get" : "put");
    }
}

int hir_check_p2p_order(const hir_program *p, hir_p2p_protocol proto, hir_diag *e, int *fatal)
{
    order_ctx c = {proto, e, 0, 0};
    order_block(&c, &p->body, false);
    if (fatal)
        *fatal = c.fatal;
    return c.bad;
}

/* ---------------------------------------------------------------- node assignment */

/* K of a kind=auto node test `( x / K ) == ( rank / K )` (passes/backend.c), else 0 */
static int64_t node_test_size(const hir_scalar *pred)
{
    const hir_sexpr *eq = pred ? pred->def : NULL;
    if (!eq || eq->kind != HIR_SX_BINARY || eq->op != HIR_BIN_EQ || eq->nargs != 2 || !eq->args[0] ||
        !eq->args[1])
        return 0;
    const hir_sexpr *x = eq->args[0]->def, *r = eq->args[1]->def;
    if (!x || !r || x->kind != HIR_SX_BINARY || r->kind != HIR_SX_BINARY || x->op != HIR_BIN_DIV ||
        r->op != HIR_BIN_DIV || x->nargs != 2 || r->nargs != 2 || !r->args[0] ||
        r->args[0]->kind != HIR_SC_NAMED || strcmp(r->args[0]->name, "rank"))
        return 0;
    int64_t k1, k2;
    if (!hir_scalar_const(x->args[1], &k1) || !hir_scalar_const(r->args[1], &k2) || k1 != k2 || k1 <= 0)
        return 0;
    return k1;
}

typedef struct node_walk {
    const hir_boot *boot;
    int size;
    int *owner;                  /* node -> the first block of K ranks seen on it */
    hir_diag *e;
    int rc;
} node_walk;

static bool one_p2p(hir_block *b, hir_backend_kind k, bool *is_send)
{
    if (hir_block_size(b) != 1)
        return false;
    hir_stmt *s = hir_block_at(b, 0);
    if (s->op != HIR_OP_P2P || !s->u.comm || s->u.comm->backend != k)
        return false;
    *is_send = s->u.comm->is_send;
    return true;
}

/* The error just recorded is about the node test s: located there (line, caret). */
static bool node_fail_at(node_walk *w, const hir_stmt *s)
{
    if (w->e && w->e->last && s->loc.src)
        w->e->last->loc = s->loc;
    return false;
}

static bool walk_node_tests(hir_stmt *s, int depth, void *ctx)
{
    (void)depth;
    node_walk *w = ctx;
    bool a, b;
    if (s->op != HIR_OP_IF || !one_p2p(&s->body, HIR_BK_CUDA, &a) ||
        !one_p2p(&s->else_body, HIR_BK_NCCL, &b) || a != b)
        return true;
    int64_t k = node_test_size(s->u.cond.pred);
    if (!k)
        return true;
    const char *sim = hir_boot_nodes_simulated(w->boot) ? " (simulated by --simulate-nodes)" : "";
    if (w->size % k) {
        w->rc = hir_fail(w->e, "the program picks CUDA IPC or NCCL by nodes of %" PRId64
                              " consecutive ranks, which %d ranks do not fill; lower it with "
                              "backend{kind=auto nodes=N} for this job's N nodes",
                              k, w->size);
        return node_fail_at(w, s);
    }
    for (int i = 0; i < w->size; i++)
        w->owner[i] = -1;
    for (int r = 0; r < w->size; r++) {
        int node = hir_boot_node(w->boot, r), lead = hir_boot_node(w->boot, (int)(r / k * k));
        int block = (int)(r / k);
        bool bad = node != lead || node < 0 || node >= w->size;
        if (!bad && w->owner[node] < 0)
            w->owner[node] = block;
        bad = bad || w->owner[node] != block;
        if (bad) {
            int other = node != lead ? (int)(r / k * k) : (int)(w->owner[node] * k);
            if (node != lead)
                w->rc = hir_fail(w->e, "the program picks CUDA IPC or NCCL by nodes of %"
                                      PRId64 " consecutive ranks, so ranks %d and %d share a "
                                      "node, but this job puts them on nodes %d and %d%s; lower "
                                      "it with backend{kind=auto nodes=N} for this job's N nodes "
                                      "(hir-run --topology shows them)",
                                      k, other, r, lead, node, sim);
            else
                w->rc = hir_fail(w->e, "the program picks CUDA IPC or NCCL by nodes of %"
                                      PRId64 " consecutive ranks, so ranks %d and %d are on two "
                                      "nodes, but this job puts both on node %d%s; lower it with "
                                      "backend{kind=auto nodes=N} for this job's N nodes (hir-run "
                                      "--topology shows them)", k, other, r, node, sim);
            return node_fail_at(w, s);
        }
    }
    return true;
}

int hir_check_node_assignment(hir_program *p, const hir_boot *boot, hir_diag *e)
{
    node_walk w = {boot, hir_boot_size(boot), NULL, e, 0};
    w.owner = malloc(sizeof(int) * (size_t)(w.size > 0 ? w.size : 1));
    if (!w.owner)
        return hir_fail(e, "out of host memory");
    hir_block_walk(&p->body, 0, walk_node_tests, &w);
    free(w.owner);
    return w.rc;
}

/* ---------------------------------------------------------------- bound extents */

/* Every free symbol the program's tensors use as an extent (inputs first, then the outputs of
 * statements, in program order) and every scalar input: what each rank bound it to (--bind,
 * the shapes of --inputs=DIR files, per-rank files included). Every rank holds the same
 * program (job_load compared the texts), so the k-th entry names the same symbol everywhere
 * and only the values travel. */
enum { AGREE_MAX = 64 };
#define AGREE_UNBOUND INT64_MIN

typedef struct extent_entry {
    const hir_scalar *sym;       /* NULL for a scalar input (then name holds it) */
    char where[80];              /* "input T0, axis 1" / "T7, axis 0" / "scalar input i2" */
    char name[64];
} extent_entry;

typedef struct extent_rec {
    int64_t n;                   /* entries (may exceed AGREE_MAX: the rest only in the hash) */
    uint64_t hash;               /* FNV-1a of every value in order */
    int64_t v[AGREE_MAX];
} extent_rec;

typedef struct extent_walk {
    job *j;
    hir_map seen;                /* symbols already listed */
    extent_entry list[AGREE_MAX];
    extent_rec rec;
    int oom;
} extent_walk;

static void extent_add(extent_walk *w, const hir_scalar *sym, const char *name, int64_t v,
                       const char *where)
{
    if (w->rec.n < AGREE_MAX) {
        extent_entry *x = &w->list[w->rec.n];
        x->sym = sym;
        snprintf(x->name, sizeof x->name, "%s", name);
        snprintf(x->where, sizeof x->where, "%s", where);
        w->rec.v[w->rec.n] = v;
    }
    w->rec.hash = hir_fnv1a(&v, sizeof v, w->rec.hash);
    w->rec.n++;
}

static void extent_tensor(extent_walk *w, const hir_tensor *t, const char *what)
{
    hir_shape_axis ax[HIR_MAX_DIMS];
    int n = t ? hir_interp_rt_axes(t, ax) : 0;
    for (int d = 0; d < n; d++) {
        const hir_scalar *x = ax[d].extent;
        if (!x || x->kind != HIR_SC_SYMBOL || x->def || hir_map_get(&w->seen, (uintptr_t)x))
            continue;
        if (hir_map_try_put(&w->seen, (uintptr_t)x, (void *)x)) {
            w->oom = 1;
            return;
        }
        hir_diag scratch;
        hir_diag_init(&scratch, NULL);
        int64_t v;
        if (hir_interp_eval(w->j->it, x, &v, &scratch))
            v = AGREE_UNBOUND;
        hir_diag_fini(&scratch);
        char name[64], where[80];
        snprintf(name, sizeof name, "%s%" PRId64, x->name, x->number);
        snprintf(where, sizeof where, "%sT%" PRId64 ", axis %d", what, t->number, d);
        extent_add(w, x, name, v, where);
    }
}

static bool extent_stmt(hir_stmt *s, int depth, void *ctx)
{
    (void)depth;
    extent_walk *w = ctx;
    if (s->out)
        extent_tensor(w, s->out, "");
    return !w->oom;
}

static void extent_value(char *b, size_t n, int64_t v)
{
    if (v == AGREE_UNBOUND)
        snprintf(b, n, "nothing (unbound)");
    else
        snprintf(b, n, "%" PRId64, v);
}

int job_agree_extents(job *j, hir_diag *e)
{
    if (j->size == 1)
        return 0;
    extent_walk *w = calloc(1, sizeof *w);
    extent_rec *all = calloc((size_t)j->size, sizeof *all);
    if (!w || !all) {
        free(w);
        free(all);
        return hir_fail(e, "rank %d: out of host memory", j->rank);
    }
    w->j = j;
    w->rec.hash = HIR_FNV1A_INIT;
    hir_map_init(&w->seen);
    hir_program *p = j->main.p;
    const hir_run_options *o = j->o;
    for (int i = 0; i < p->inputs.n; i++) {
        hir_value *v = p->inputs.items[i];
        const hir_scalar *s = hir_value_scalar(v);
        if (s) {
            char nm[64], where[80];
            job_value_name(v, nm, sizeof nm);
            int64_t val = AGREE_UNBOUND;
            for (int k = 0; k < o->nbinds; k++)
                if (!strcmp(o->binds[k].name, nm))
                    val = o->binds[k].value;
            snprintf(where, sizeof where, "scalar input %s", nm);
            extent_add(w, NULL, nm, val, where);
        } else {
            extent_tensor(w, hir_value_tensor(v), "input ");
        }
    }
    if (!w->oom)
        hir_block_walk(&p->body, 0, extent_stmt, w);
    hir_map_fini(&w->seen);
    /* a rank that ran out of memory still takes part, with a record nobody else can match */
    if (w->oom)
        w->rec.hash = ~w->rec.hash, w->rec.n = -1;
    int *world = malloc(sizeof(int) * (size_t)j->size);
    int rc = world ? 0 : hir_fail(e, "rank %d: out of host memory", j->rank);
    for (int r = 0; world && r < j->size; r++)
        world[r] = r;
    if (!rc)
        rc = hir_boot_team_allgather(j->boot, world, j->size, &w->rec, all, sizeof *all, e);
    free(world);
    for (int r = 1; r < j->size && !rc; r++) {
        const extent_rec *a = &all[0], *b = &all[r];
        if (a->n == b->n && a->hash == b->hash)
            continue;
        if (a->n < 0 || b->n < 0) {
            rc = hir_fail(e, "rank %d: out of host memory listing the program's extents",
                          a->n < 0 ? 0 : r);
            break;
        }
        int k = 0;
        int64_t lim = a->n < AGREE_MAX ? a->n : AGREE_MAX;
        while (k < lim && a->v[k] == b->v[k])
            k++;
        if (k == lim) {
            rc = hir_fail(e, "ranks 0 and %d disagree on an extent past the first %d the "
                          "program names; every rank must bind its extents the same", r,
                          AGREE_MAX);
            break;
        }
        const extent_entry *x = &w->list[k];
        char va[40], vb[40];
        extent_value(va, sizeof va, a->v[k]);
        extent_value(vb, sizeof vb, b->v[k]);
        const hir_interp_terms *tm = hir_interp_terms_or_default(o->terms);
        char how[200];
        if (o->inputs == HIR_INPUTS_DIR)
            snprintf(how, sizeof how, "%s%s%s=N or from the shapes of the .npy files "
                     "under %s, a rank's own NAME.rankR.npy included", tm->bind_open, x->name,
                     tm->bind_close, o->inputs_dir);
        else
            snprintf(how, sizeof how, "%s%s%s=N", tm->bind_open, x->name, tm->bind_close);
        if (x->sym)
            rc = hir_fail(e, "the ranks disagree on extent %s (%s): rank 0 has %s, rank %d "
                          "has %s; every rank must bind it to the same value (it comes from %s)", x->name,
                          x->where, va, r, vb, how);
        else
            rc = hir_fail(e, "the ranks disagree on %s: rank 0 has %s, rank %d has %s; every "
                          "rank must bind it to the same value (it comes from %s)", x->where, va, r, vb, how);
        rc = 1;
    }
    free(w);
    free(all);
    return rc;
}
