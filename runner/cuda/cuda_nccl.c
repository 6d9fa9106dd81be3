/* cuda_nccl.c — collectives and NCCL-transport P2P. One communicator per team (key = the
 * team's world ranks), created lazily: member 0 makes the unique id and shares it through
 * hir_boot_team_bcast. Operations are queued on the caller's stream; the work is an event
 * recorded after them, and `wait` is a device-side cudaStreamWaitEvent. The one file of the
 * backend that includes <nccl.h>; built only with NCCL (cuda_nonccl.c stands in otherwise). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nccl.h>

#include "runner/cuda/cuda_internal.h"

const char *hir_cu_str_nccl(int st) { return ncclGetErrorString((ncclResult_t)st); }

int hir_cu_nccl_version(void)
{
    int v = 0;
    ncclGetVersion(&v);
    return v;
}

int hir_cuda_has_nccl(void) { return 1; }

static int nccl_type(hir_dtype t, int reducing, ncclDataType_t *dt, size_t *mult)
{
    *mult = 1;
    switch (t) {
    case HIR_DT_FLOAT: *dt = ncclFloat32; return 0;
    case HIR_DT_DOUBLE: *dt = ncclFloat64; return 0;
    case HIR_DT_HALF: *dt = ncclFloat16; return 0;
    case HIR_DT_BFLOAT: *dt = ncclBfloat16; return 0;
    case HIR_DT_INT8: *dt = ncclInt8; return 0;
    case HIR_DT_UINT8: *dt = ncclUint8; return 0;
    case HIR_DT_INT32: *dt = ncclInt32; return 0;
    case HIR_DT_UINT32: *dt = ncclUint32; return 0;
    case HIR_DT_INT64: case HIR_DT_INDEX: *dt = ncclInt64; return 0;
    case HIR_DT_UINT64: *dt = ncclUint64; return 0;
#if NCCL_VERSION_CODE >= 22400
    case HIR_DT_E4M3: *dt = ncclFloat8e4m3; return 0;
    case HIR_DT_E5M2: *dt = ncclFloat8e5m2; return 0;
#endif
    default: break;
    }
    /* data movement only: any fixed-size type travels as bytes */
    if (reducing || hir_dtype_size(t) == 0) return -1;
    *dt = ncclUint8;
    *mult = hir_dtype_size(t);
    return 0;
}

static ncclRedOp_t nccl_op(hir_reduce_op op)
{
    switch (op) {
    case HIR_RED_PROD: return ncclProd;
    case HIR_RED_MAX: case HIR_RED_FMAX: return ncclMax;   /* NCCL has no NaN-aware variants */
    case HIR_RED_MIN: case HIR_RED_FMIN: return ncclMin;
    default: return ncclSum;
    }
}

/* NCCL refuses two ranks on one GPU, and then fails with an opaque "invalid usage"; check
 * the team's device UUIDs first so every member fails with the same clear message. */
static int check_distinct_devices(hir_cu_backend *cb, const int *team, int n, int me,
                                  hir_diag *e)
{
    cudaUUID_t *all = calloc((size_t)n, sizeof *all);
    if (!all) return hir_fail(e, "out of host memory"), -1;
    for (int i = 0; i < n; i++) {
        if (i == me) all[i] = cb->uuid;
        if (hir_boot_team_bcast(cb->base.cfg.boot, team, n, i, &all[i], sizeof all[i], e) < 0)
            return free(all), -1;
    }
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (!memcmp(&all[i], &all[j], sizeof all[i])) {
                free(all);
                return hir_fail(e, "NCCL cannot run two ranks on one GPU: ranks %d and %d "
                                        "of team share a device; use backend=CUDA (CUDA IPC "
                                        "works between processes on one GPU) or one rank per "
                                        "GPU (for P2P only: hir-run --nccl-p2p=host-staged "
                                        "moves it through host memory instead of NCCL)",
                                 team[i], team[j]), -1;
            }
    free(all);
    return 0;
}

static int comm_get(hir_cu_backend *cb, const int *team, int n, int me, ncclComm_t *out,
                    hir_diag *e)
{
    for (int i = 0; i < cb->ncomms; i++)
        if (cb->comms[i].team_size == n && !memcmp(cb->comms[i].team, team, n * sizeof(int)))
            return *out = cb->comms[i].comm, 0;
    if (n > 1 && !cb->base.cfg.boot)
        return hir_fail(e, "NCCL team of %d needs the bootstrap channel", n), -1;
    if (n > 1 && check_distinct_devices(cb, team, n, me, e) < 0) return -1;
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    if (me == 0) HIR_CK(e, nccl, ncclGetUniqueId(&id));
    if (n > 1 && hir_boot_team_bcast(cb->base.cfg.boot, team, n, 0, &id, sizeof id, e) < 0)
        return -1;
    if (hir_cu_grow((void **)&cb->comms, &cb->cap_comms, cb->ncomms, sizeof(hir_cu_comm), e) < 0)
        return -1;
    hir_cu_comm *c = &cb->comms[cb->ncomms];
    c->team = malloc(n * sizeof(int));
    if (!c->team) return hir_fail(e, "out of host memory"), -1;
    memcpy(c->team, team, n * sizeof(int));
    c->team_size = n;
    int st = ncclCommInitRank(&c->comm, n, id, me);
    if (st != ncclSuccess) {
        free(c->team);
        HIR_CK_ST(e, nccl, "ncclCommInitRank", st);
    }
    cb->ncomms++;
    *out = c->comm;
    return 0;
}

static int world_comm(hir_cu_backend *cb, ncclComm_t *comm, hir_diag *e)
{
    int n = cb->base.cfg.size;
    int *team = malloc((n > 0 ? n : 1) * sizeof(int));
    if (!team) return hir_fail(e, "out of host memory"), -1;
    for (int i = 0; i < n; i++) team[i] = i;
    int rc = comm_get(cb, team, n, cb->base.cfg.rank, comm, e);
    free(team);
    return rc;
}

static void note_pending(hir_stream *s, int peer, const char *fmt, const char *what)
{
    snprintf(s->pending, sizeof s->pending, fmt, what);
    s->pending_peer = peer;
}

static int need(const hir_view *v, const char *what, const hir_collective *c, hir_diag *e)
{
    if (!v) return hir_fail(e, "%s: missing %s", hir_comm_type_name(c->kind), what), -1;
    if (!hir_cu_view_contiguous(v))
        return hir_fail(e, "%s: %s must be contiguous", hir_comm_type_name(c->kind), what), -1;
    return 0;
}

/* One collective's checked operands and the arguments of its NCCL calls, as the per-kind
 * handlers below read them. comm is NULL for a team of one that a kind runs as a local copy. */
typedef struct nccl_coll {
    const hir_collective *c;
    int n, me, root;
    const hir_view *in, *out;
    ncclDataType_t dt;
    size_t mult, es;             /* NCCL elements per element, bytes per element */
    ncclComm_t comm;
    ncclRedOp_t op;
    cudaStream_t st;
} nccl_coll;

static int nccl_allgather(const nccl_coll *k, hir_diag *e)
{
    const hir_collective *c = k->c;
    const hir_view *in = k->in, *out = k->out;
    if (need(in, "input", c, e) < 0 || need(out, "output", c, e) < 0) return -1;
    size_t cnt = (size_t)hir_cu_numel(in);
    if ((size_t)hir_cu_numel(out) != cnt * k->n)
        return hir_fail(e, "Allgather: output has %lld elements, expected %zu",
                             (long long)hir_cu_numel(out), cnt * k->n), -1;
    HIR_CK(e, nccl, ncclAllGather(in->data, out->data, cnt * k->mult, k->dt, k->comm, k->st));
    return 0;
}

static int nccl_reducescatter(const nccl_coll *k, hir_diag *e)
{
    const hir_collective *c = k->c;
    const hir_view *in = k->in, *out = k->out;
    if (need(in, "input", c, e) < 0 || need(out, "output", c, e) < 0) return -1;
    size_t cnt = (size_t)hir_cu_numel(out);
    if ((size_t)hir_cu_numel(in) != cnt * k->n)
        return hir_fail(e, "ReduceScatter: input has %lld elements, expected %zu",
                             (long long)hir_cu_numel(in), cnt * k->n), -1;
    HIR_CK(e, nccl, ncclReduceScatter(in->data, out->data, cnt, k->dt, k->op, k->comm, k->st));
    return 0;
}

static int nccl_allreduce(const nccl_coll *k, hir_diag *e)
{
    const hir_collective *c = k->c;
    const hir_view *in = k->in, *out = k->out;
    if (need(in, "input", c, e) < 0 || need(out, "output", c, e) < 0) return -1;
    size_t cnt = (size_t)hir_cu_numel(out);
    HIR_CK(e, nccl, ncclAllReduce(in->data, out->data, cnt, k->dt, k->op, k->comm, k->st));
    return 0;
}

static int nccl_broadcast(const nccl_coll *k, hir_diag *e)
{
    /* the root sends its input; everyone receives into output (or in place) */
    const hir_collective *c = k->c;
    const hir_view *in = k->in, *out = k->out;
    int me = k->me, root = k->root;
    const hir_view *buf = out ? out : in;
    if (need(buf, "buffer", c, e) < 0) return -1;
    if (me == root && need(in, "input", c, e) < 0) return -1;
    size_t cnt = (size_t)hir_cu_numel(buf);
    HIR_CK(e, nccl, ncclBroadcast(me == root ? in->data : buf->data, buf->data, cnt * k->mult,
                                  k->dt, root, k->comm, k->st));
    return 0;
}

static int nccl_reduce(const nccl_coll *k, hir_diag *e)
{
    const hir_collective *c = k->c;
    const hir_view *in = k->in, *out = k->out;
    int me = k->me, root = k->root;
    if (need(in, "input", c, e) < 0) return -1;
    if (me == root && need(out, "output", c, e) < 0) return -1;
    size_t cnt = (size_t)hir_cu_numel(in);
    HIR_CK(e, nccl, ncclReduce(in->data, me == root ? out->data : NULL, cnt, k->dt, k->op, root,
                               k->comm, k->st));
    return 0;
}

/* The root's part of a Gather or Scatter: a receive (Gather) or send (Scatter) per member and
 * a local copy of its own slice; stops at the first failure. */
static int nccl_root_slices(const nccl_coll *k, int gather, const hir_view *big,
                            const hir_view *small, size_t cnt, size_t bytes, hir_diag *e)
{
    int n = k->n, me = k->me, rc = 0;
    ncclDataType_t dt = k->dt;
    size_t mult = k->mult;
    ncclComm_t comm = k->comm;
    cudaStream_t st = k->st;
    for (int i = 0; i < n && !rc; i++) {
        char *slice = (char *)big->data + (size_t)i * bytes;
        int st2;
        if (i == me)
            st2 = cudaMemcpyAsync(gather ? slice : small->data, gather ? small->data : slice,
                                  bytes, cudaMemcpyDeviceToDevice, st),
            rc = st2 ? hir_cu_fail(e, "cudaMemcpyAsync", cudaGetErrorString(st2),
                                   __FILE__, __LINE__) : 0;
        else if (gather)
            st2 = ncclRecv(slice, cnt * mult, dt, i, comm, st),
            rc = st2 ? hir_cu_fail(e, "ncclRecv", ncclGetErrorString(st2), __FILE__,
                                   __LINE__) : 0;
        else
            st2 = ncclSend(slice, cnt * mult, dt, i, comm, st),
            rc = st2 ? hir_cu_fail(e, "ncclSend", ncclGetErrorString(st2), __FILE__,
                                   __LINE__) : 0;
    }
    return rc;
}

static int nccl_gather_scatter(const nccl_coll *k, hir_diag *e)
{
    /* root holds team_size slices of dim 0: a group of sends/receives, its own slice by
     * a local copy */
    const hir_collective *c = k->c;
    int n = k->n, me = k->me, root = k->root;
    int gather = c->kind == HIR_COMM_GATHER;
    const hir_view *big = gather ? k->out : k->in, *small = gather ? k->in : k->out;
    if (need(small, gather ? "input" : "output", c, e) < 0) return -1;
    if (me == root && need(big, gather ? "output" : "input", c, e) < 0) return -1;
    size_t cnt = (size_t)hir_cu_numel(small), bytes = cnt * k->es;
    if (me == root && (size_t)hir_cu_numel(big) != cnt * n)
        return hir_fail(e, "%s: root buffer has %lld elements, expected %zu",
                             hir_comm_type_name(c->kind), (long long)hir_cu_numel(big), cnt * n), -1;
    if (n > 1) HIR_CK(e, nccl, ncclGroupStart());
    int rc = 0;
    if (me == root) {
        rc = nccl_root_slices(k, gather, big, small, cnt, bytes, e);
    } else if (gather) {
        int st2 = ncclSend(small->data, cnt * k->mult, k->dt, root, k->comm, k->st);
        rc = st2 ? hir_cu_fail(e, "ncclSend", ncclGetErrorString(st2), __FILE__, __LINE__) : 0;
    } else {
        int st2 = ncclRecv(small->data, cnt * k->mult, k->dt, root, k->comm, k->st);
        rc = st2 ? hir_cu_fail(e, "ncclRecv", ncclGetErrorString(st2), __FILE__, __LINE__) : 0;
    }
    if (n > 1) {
        int st3 = ncclGroupEnd();
        if (!rc && st3) rc = hir_cu_fail(e, "ncclGroupEnd", ncclGetErrorString(st3),
                                         __FILE__, __LINE__);
    }
    if (rc) return -1;
    return 0;
}

static int nccl_sendrecv(const nccl_coll *k, hir_diag *e)
{
    const hir_collective *c = k->c;
    const hir_view *in = k->in, *out = k->out;
    int n = k->n, me = k->me, sender = k->root;
    if (n == 1) {
        if (need(in, "input", c, e) < 0 || need(out, "output", c, e) < 0) return -1;
        if (in->data != out->data)
            HIR_CK(e, cuda, cudaMemcpyAsync(out->data, in->data, hir_cu_numel(in) * k->es,
                                            cudaMemcpyDeviceToDevice, k->st));
        return 0;
    }
    if (n != 2) return hir_fail(e, "SendRecv: team of %d (1 or 2 expected)", n), -1;
    if (me == sender) {
        if (need(in, "input", c, e) < 0) return -1;
        HIR_CK(e, nccl, ncclSend(in->data, hir_cu_numel(in) * k->mult, k->dt, 1 - me, k->comm,
                                 k->st));
    } else {
        if (need(out, "output", c, e) < 0) return -1;
        HIR_CK(e, nccl, ncclRecv(out->data, hir_cu_numel(out) * k->mult, k->dt, 1 - me, k->comm,
                                 k->st));
    }
    return 0;
}

static int nccl_alltoall(const nccl_coll *k, hir_diag *e)
{
    /* NCCL has no all-to-all: one grouped send and receive per member, part i of the
     * flat buffers to and from member i (hostir-2026.md §3.9) */
    const hir_collective *c = k->c;
    const hir_view *in = k->in, *out = k->out;
    int n = k->n;
    if (need(in, "input", c, e) < 0 || need(out, "output", c, e) < 0) return -1;
    size_t cnt = (size_t)hir_cu_numel(in);
    if ((size_t)hir_cu_numel(out) != cnt || cnt % (size_t)n)
        return hir_fail(e, "AllToAll: input (%zu elements) and output (%lld) must have "
                                "equal sizes divisible by the team of %d", cnt,
                             (long long)hir_cu_numel(out), n), -1;
    size_t part = cnt / (size_t)n, pbytes = part * k->es;
    HIR_CK(e, nccl, ncclGroupStart());
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        ncclResult_t st2 = ncclSend((char *)in->data + (size_t)i * pbytes, part * k->mult, k->dt,
                                    i, k->comm, k->st);
        if (st2 == ncclSuccess)
            st2 = ncclRecv((char *)out->data + (size_t)i * pbytes, part * k->mult, k->dt, i,
                           k->comm, k->st);
        if (st2 != ncclSuccess)
            rc = hir_cu_fail(e, "ncclSend/ncclRecv", ncclGetErrorString(st2), __FILE__,
                             __LINE__);
    }
    int st3 = ncclGroupEnd();
    if (!rc && st3) rc = hir_cu_fail(e, "ncclGroupEnd", ncclGetErrorString(st3), __FILE__,
                                     __LINE__);
    if (rc) return -1;
    return 0;
}

/* The handler of each collective kind (dialect/defs/comm.def); a kind without one is refused. */
typedef int (*nccl_coll_fn)(const nccl_coll *k, hir_diag *e);
static const nccl_coll_fn nccl_colls[HIR_COMM_COUNT] = {
    [HIR_COMM_GATHER] = nccl_gather_scatter,
    [HIR_COMM_ALLGATHER] = nccl_allgather,
    [HIR_COMM_SCATTER] = nccl_gather_scatter,
    [HIR_COMM_REDUCE] = nccl_reduce,
    [HIR_COMM_ALLREDUCE] = nccl_allreduce,
    [HIR_COMM_REDUCESCATTER] = nccl_reducescatter,
    [HIR_COMM_BROADCAST] = nccl_broadcast,
    [HIR_COMM_SENDRECV] = nccl_sendrecv,
    [HIR_COMM_ALLTOALL] = nccl_alltoall,
};

/* Every collective but an Allgather over CUDA IPC (cu_collective, cuda_backend.c). */
int hir_cu_nccl_collective(hir_backend *be, hir_stream *s, const hir_collective *c,
                           hir_work **w, hir_diag *e)
{
    hir_cu_backend *cb = hir_cu(be);
    *w = NULL;
    if (c->transport != HIR_BK_NCCL)
        return hir_fail(e, "%s: the CUDA backend runs collectives over NCCL (and an "
                                "Allgather also over CUDA IPC)", hir_comm_type_name(c->kind)), -1;
    if (cb->in_group)
        return hir_fail(e, "%s inside StartCoalescing is not supported",
                             hir_comm_type_name(c->kind)), -1;
    nccl_coll k = {.c = c, .n = c->team_size, .me = c->my_index,
                   .root = c->root_index < 0 ? 0 : c->root_index, .in = c->input,
                   .out = c->output};
    const hir_view *ref = k.in ? k.in : k.out;
    if (!ref) return hir_fail(e, "%s: no buffers", hir_comm_type_name(c->kind)), -1;
    int reducing = hir_comm_type_reduces(c->kind);
    if (nccl_type(ref->dtype, reducing, &k.dt, &k.mult) < 0)
        return hir_fail(e, "%s: dtype %s not supported by NCCL", hir_comm_type_name(c->kind),
                             hir_dtype_name(ref->dtype)), -1;
    k.es = hir_dtype_size(ref->dtype);
    k.comm = NULL;
    /* a team of one still goes through NCCL (a 1-rank communicator), except the kinds that
     * are plain local copies then */
    int local = k.n == 1 && (c->kind == HIR_COMM_SENDRECV || c->kind == HIR_COMM_GATHER ||
                             c->kind == HIR_COMM_SCATTER);
    if (!local && comm_get(cb, c->team, k.n, k.me, &k.comm, e) < 0) return -1;
    k.op = nccl_op(c->op);
    k.st = s->s;
    note_pending(s, -1, "NCCL %s", hir_comm_type_name(c->kind));
    nccl_coll_fn run = (unsigned)c->kind < HIR_COMM_COUNT ? nccl_colls[c->kind] : NULL;
    if (!run) return hir_fail(e, "collective kind %d unknown", (int)c->kind), -1;
    if (run(&k, e) < 0) return -1;
    return hir_cu_work_event(cb, s, w, e);
}

int hir_cu_nccl_p2p(hir_cu_backend *cb, hir_stream *s, const hir_p2p *p, hir_work **w,
                    hir_diag *e)
{
    if (p->peer == cb->base.cfg.rank)
        return hir_fail(e, "P2P to self (rank %d) not supported", p->peer), -1;
    if (!hir_cu_view_contiguous(&p->buf))
        return hir_fail(e, "P2P buffer must be contiguous"), -1;
    ncclDataType_t dt;
    size_t mult;
    if (nccl_type(p->buf.dtype, 0, &dt, &mult) < 0)
        return hir_fail(e, "P2P: dtype %s not supported by NCCL",
                             hir_dtype_name(p->buf.dtype)), -1;
    ncclComm_t comm;
    if (world_comm(cb, &comm, e) < 0) return -1;
    size_t cnt = (size_t)hir_cu_numel(&p->buf) * mult;
    if (p->is_send) HIR_CK(e, nccl, ncclSend(p->buf.data, cnt, dt, p->peer, comm, s->s));
    else HIR_CK(e, nccl, ncclRecv(p->buf.data, cnt, dt, p->peer, comm, s->s));
    note_pending(s, p->peer, "NCCL %s", p->is_send ? "send" : "recv");
    if (cb->in_group) {
        cb->group_has_ops = 1;
        return 0;
    }
    return hir_cu_work_event(cb, s, w, e);
}

int hir_cu_group_begin(hir_backend *be, hir_diag *e)
{
    hir_cu_backend *cb = hir_cu(be);
    if (cb->in_group) return hir_fail(e, "StartCoalescing: already coalescing"), -1;
    /* the world communicator must exist before the group: creating it inside would be grouped */
    ncclComm_t comm;
    if (cb->base.cfg.size > 1 && world_comm(cb, &comm, e) < 0) return -1;
    HIR_CK(e, nccl, ncclGroupStart());
    cb->in_group = 1;
    cb->group_has_ops = 0;
    return 0;
}

int hir_cu_group_end(hir_backend *be, hir_stream *s, hir_work **w, hir_diag *e)
{
    hir_cu_backend *cb = hir_cu(be);
    *w = NULL;
    if (!cb->in_group) return hir_fail(e, "EndCoalescing without StartCoalescing"), -1;
    cb->in_group = 0;
    HIR_CK(e, nccl, ncclGroupEnd());
    return hir_cu_work_event(cb, s, w, e);
}

int hir_cu_nccl_check_async(hir_cu_backend *cb, hir_diag *e)
{
    for (int i = 0; i < cb->ncomms; i++) {
        ncclResult_t r = ncclSuccess;
        if (ncclCommGetAsyncError(cb->comms[i].comm, &r) != ncclSuccess) continue;
        if (r != ncclSuccess && r != ncclInProgress)
            return hir_fail(e, "NCCL communicator of %d ranks failed: %s",
                                 cb->comms[i].team_size, ncclGetErrorString(r)), -1;
    }
    return 0;
}

void hir_cu_nccl_destroy(hir_cu_backend *cb)
{
    /* same order on every rank (creation order, which the SPMD program makes identical) */
    for (int i = 0; i < cb->ncomms; i++) {
        if (cb->dead) ncclCommAbort(cb->comms[i].comm);
        else ncclCommDestroy(cb->comms[i].comm);
        free(cb->comms[i].team);
    }
    free(cb->comms);
    cb->comms = NULL;
    cb->ncomms = 0;
}

/* MoE routing (cuda_moe.c): a variable all-to-all of rows over the job's world communicator in
 * one NCCL group, self included (NCCL sends to its own rank inside a group). */
int hir_cu_nccl_alltoallv(hir_cu_backend *cb, hir_stream *s, int nbuf,
                          const void *const *sbuf, void *const *rbuf, const size_t *row,
                          const int64_t *sc, const int64_t *rc, hir_diag *e)
{
    ncclComm_t comm;
    if (world_comm(cb, &comm, e) < 0) return -1;
    int size = cb->base.cfg.size, rc2 = 0;
    HIR_CK(e, nccl, ncclGroupStart());
    for (int b = 0; b < nbuf && !rc2; b++) {
        size_t so = 0, ro = 0;
        for (int r = 0; r < size && !rc2; r++) {
            size_t sn = (size_t)sc[r] * row[b], rn = (size_t)rc[r] * row[b];
            if (sn) rc2 = ncclSend((const char *)sbuf[b] + so, sn, ncclUint8, r, comm, s->s);
            if (!rc2 && rn) rc2 = ncclRecv((char *)rbuf[b] + ro, rn, ncclUint8, r, comm, s->s);
            so += sn;
            ro += rn;
        }
    }
    int st = ncclGroupEnd();
    if (rc2) return hir_cu_fail(e, "ncclSend/ncclRecv", ncclGetErrorString(rc2), __FILE__, __LINE__);
    HIR_CK_ST(e, nccl, "ncclGroupEnd", st);
    note_pending(s, -1, "NCCL %s", "MoE all-to-all");
    return 0;
}
