/* convert_to_communication.c — --convert-to-communication: resharding Sets become
 * collectives (nvFuser's ConvertOpToCommunication, hostir-format.md 3.5 end).
 *
 * Needs: Sets at top level or directly in a FOR body (IF bodies are left alone, as in
 *   nvFuser); a resharding Set's input carries a device mesh.
 * Changes: a Set whose input is sharded on a deviceIdx axis that its output is not sharded on
 *   (the output axis is serial or stream-parallel) becomes
 *     ALLOCATE(out); Communication N (type=Allgather, team=(mesh), input=in, output=out,
 *     backend=B); Wait Communication N
 *   with B the option backend=, else the backend the program's communications already use
 *   (pu_program_backend), else NCCL (both support Allgather).
 * A sum over the input's outermost device axis (the partial sums of a row-parallel GEMM)
 *   becomes ALLOCATE(out); Communication N (type=ReduceScatter, ...) when the output is
 *   sharded on the next axis, (type=Allreduce, ...) when it is not; Wait — always NCCL (the
 *   CUDA backend has no reducing collectives).
 * Fails (located) on resharding it cannot express as an Allgather of the outermost axis:
 *   sharding added (scatter), moved between device axes, a non-outermost gathered axis, a
 *   missing or different mesh.
 * Order: after --stream-parallel the DID->stream Set is already a P2P exchange and is not
 *   touched here; run this pass first to gather up front and pipeline only the compute.
 */
#include "passes/ir_util.h"
#include "passes/passes.h"

typedef struct cc {
    hir_program *p;
    hir_diag *d;
    hir_backend_kind backend;
    int converted;
} cc;

static int fail(cc *c, hir_stmt *s, const char *msg)
{
    hir_diag_emit(c->d, HIR_ERROR, pu_loc_near(c->p, s), "cannot convert resharding Set to a communication: %s", msg);
    return -1;
}

/* 1: resharding (*axis = gathered logical axis of the input), 0: not, -1: error */
static int resharding(cc *c, hir_stmt *s, int *axis)
{
    hir_tensor *in = hir_value_tensor(s->in[0]), *out = s->out;
    if (!in || !out)
        return 0;
    hir_iterdomain *a[64], *b[64];
    int na = 0, nb = 0;
    int pa[64];
    for (int i = 0; i < in->nloop && na < 64; i++)
        if (in->shape.ids[i]->itype != HIR_IT_REDUCTION) {
            pa[na] = i;
            a[na++] = in->shape.ids[i];
        }
    for (int i = 0; i < out->nloop && nb < 64; i++)
        if (out->shape.ids[i]->itype != HIR_IT_REDUCTION)
            b[nb++] = out->shape.ids[i];
    int gathered = -1, found = 0;
    bool added = false;
    for (int k = 1; k <= na && k <= nb; k++) {
        hir_ptype pin = a[na - k]->ptype, pout = b[nb - k]->ptype;
        bool din = hir_ptype_is_device(pin), dout = hir_ptype_is_device(pout);
        if (din && pout != pin) {
            gathered = pa[na - k];
            found++;
            if (dout)
                added = true;
        } else if (dout && !din)
            added = true;
    }
    if (!found && !added)
        return 0;
    if (added)
        return fail(c, s, "the output is sharded on a device axis the input is not sharded on "
                          "(only Allgather is supported)");
    if (found > 1)
        return fail(c, s, "more than one device axis is gathered");
    if (gathered != 0)
        return fail(c, s, "the gathered device axis must be the outermost logical axis of the input");
    if (!in->mesh)
        return fail(c, s, "the input has no device mesh");
    if (out->mesh && out->mesh != in->mesh)
        return fail(c, s, "input and output meshes differ");
    *axis = gathered;
    return 1;
}

/* A sum whose reduced axis is the input's outermost device axis (the partial sums of a
 * row-parallel GEMM, hir-gen linear-rs / matmul-rs): 1 with *type ReduceScatter when the
 * output is sharded on the next axis (the input's axis 1 of extent d becomes the output's
 * device axis: the input's d parts in order), Allreduce when the output is not sharded; 0 for
 * any other reduction. */
static int resharding_reduction(const hir_stmt *s, hir_comm_type *type)
{
    hir_tensor *in = hir_value_tensor(s->in[0]), *out = s->out;
    if (!in || !out || s->u.red.op != HIR_RED_SUM || !in->mesh || in->mesh->ndims != 1 ||
        in->nloop < 2 || out->nloop < 2 || in->shape.naxes != in->nloop || out->shape.naxes != out->nloop ||
        (out->mesh && out->mesh != in->mesh))
        return 0;
    hir_iterdomain *const *a = in->shape.ids, *const *b = out->shape.ids;
    if (!hir_ptype_is_device(a[0]->ptype) || b[0]->itype != HIR_IT_REDUCTION)
        return 0;
    for (int i = 2; i < out->nloop; i++)
        if (hir_ptype_is_device(b[i]->ptype))
            return 0;
    int64_t d = (int64_t)in->mesh->ndevices, x;
    if (hir_ptype_is_device(b[1]->ptype)) {
        if (!a[1]->extent || !hir_scalar_const(a[1]->extent, &x) || x != d ||
            hir_ptype_is_device(a[1]->ptype))
            return 0;
        *type = HIR_COMM_REDUCESCATTER;
        return 1;
    }
    *type = HIR_COMM_ALLREDUCE;
    return 1;
}

/* s (a resharding Set or reduction) as ALLOCATE of its output, the Communication `type` of its
 * input over the input's mesh (reducing by sum) and that Communication's Wait, each located at
 * s, appended to out */
static int lower(cc *c, hir_ptrvec *out, const hir_stmt *s, hir_comm_type type,
                 hir_backend_kind backend)
{
    hir_program *p = c->p;
    hir_tensor *in = hir_value_tensor(s->in[0]);
    hir_stmt *alloc = pu_allocate(p, s->out, true, pu_loc(p, s), c->d);
    if (!alloc)
        return -1;
    hir_comm *m = hir_comm_new(p, HIR_OP_COMMUNICATION);
    m->type = type;
    m->nteam = (int)in->mesh->ndevices;
    m->team = in->mesh->devices;
    m->team_truncated = false;
    m->input = in;
    m->output = s->out;
    m->backend = backend;
    m->red_op = HIR_RED_SUM;
    m->loc = s->loc;
    alloc->loc = s->loc;
    hir_stmt *cs = pu_comm_stmt(p, m);
    cs->loc = s->loc;
    hir_ptrvec_push(p->arena, out, alloc);
    hir_ptrvec_push(p->arena, out, cs);
    hir_ptrvec_push(p->arena, out, pu_wait(p, m));
    c->converted++;
    return 0;
}

/* The block is rebuilt in one walk (statements copied into a new array, three for each
 * converted Set), never by insertion in place: that would move the rest of the block for
 * every Set, quadratic in a long block. */
static int convert_block(cc *c, hir_block *b)
{
    hir_program *p = c->p;
    hir_ptrvec out = {0};
    int converted = 0;
    for (int i = 0; i < hir_block_size(b); i++) {
        hir_stmt *s = hir_block_at(b, i);
        if (s->op == HIR_OP_FOR || s->op == HIR_OP_HOST_FOR) {
            if (convert_block(c, &s->body))
                return -1;
            hir_ptrvec_push(p->arena, &out, s);
            continue;
        }
        hir_comm_type rtype;
        if (s->op == HIR_OP_REDUCTION && resharding_reduction(s, &rtype)) {
            /* NCCL whatever the option says: the CUDA backend has no reducing collectives */
            if (lower(c, &out, s, rtype, HIR_BK_NCCL))
                return -1;
            converted++;
            continue;
        }
        int axis, r = 0;
        if ((s->op == HIR_OP_SET || s->op == HIR_OP_SEGMENTER_SET) && (r = resharding(c, s, &axis)) < 0)
            return -1;
        if (!r) {
            hir_ptrvec_push(p->arena, &out, s);
            continue;
        }
        if (lower(c, &out, s, HIR_COMM_ALLGATHER, c->backend))
            return -1;
        converted++;
    }
    if (converted)
        b->stmts = out;
    return 0;
}

extern const hir_pass_option hir_opts_convert_to_communication[];

int hir_run_convert_to_communication(hir_program *p, const hir_pass_args *args, hir_diag *d)
{
    cc c = {p, d, HIR_BK_NCCL, 0};
    if (pu_backend_choose(p, hir_pass_opt(hir_opts_convert_to_communication, args, "backend"),
                          "convert-to-communication", d, &c.backend))
        return -1;
    return convert_block(&c, &p->body);
}

const hir_pass_option hir_opts_convert_to_communication[] = {
    {"backend", HIR_PASS_OPT_ENUM, "nccl|cuda", NULL,
     "backend of the new collectives (default: the backend of the program's P2P/Allgather/"
     "Broadcast communications when they agree, else nccl)", false},
    {NULL, 0, NULL, NULL, NULL, false},
};
