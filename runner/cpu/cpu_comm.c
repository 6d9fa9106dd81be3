/* cpu_comm.c — communication of the CPU reference backend over MPI: the backend's private
 * world communicator, the work items every post returns (requests, staging buffers, unpacking
 * after completion), P2P of both transports as matched Isend/Irecv, coalescing groups, and
 * waits that poll with the run's timeout. Buffers that are not contiguous in the transfer
 * dtype are packed at post and unpacked after completion; bf16/f16 reductions travel as f32
 * and are rounded once at the end. The collectives (cpu_collective.c) post through the work
 * items here; the all-to-alls of MoE routing (cpu_moe.c) run on the same communicator. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/backend/agree.h"
#include "runner/backend/convert.h"
#include "runner/cpu/cpu_comm_internal.h"
#include "support/support.h"


typedef struct unpack_step {
    hir_view dst;
    hir_view src;                   /* contiguous, in a buffer the work owns */
} unpack_step;

/* What a receive expects of its sender: the sender's header (dtype, element count), sent just
 * before its data on the header tag, lands in got and is compared at the wait, before the
 * data is looked at. */
typedef struct hdr_check {
    int64_t *got;                   /* [2] in a buffer the work owns */
    int64_t dtype, count;
} hdr_check;

struct hir_work {
    char what[160];
    int n, cap;
    MPI_Request *req;
    int *peer;
    int *is_recv;
    int nh, caph;                   /* receives' header checks, completed before req */
    MPI_Request *hreq;
    int *hpeer;
    hdr_check *h;
    int nun, capun;
    unpack_step *un;
    int nbuf, capbuf;
    void **bufs;
    cpu_pending *pend;              /* the collective, until its team has agreed on it */
    int failed;                     /* its agreement failed (reported by the call that found it) */
};

/* ---------------------------------------------------------------- MPI reduction ops */

#define NAN_OP(name, F, D)                                                                 \
    static void name(void *in, void *inout, int *len, MPI_Datatype *dt)                    \
    {                                                                                      \
        if (*dt == MPI_FLOAT) {                                                            \
            const float *a = in;                                                           \
            float *b = inout;                                                              \
            for (int i = 0; i < *len; i++)                                                 \
                b[i] = F(a[i], b[i]);                                                      \
        } else if (*dt == MPI_DOUBLE) {                                                    \
            const double *a = in;                                                          \
            double *b = inout;                                                             \
            for (int i = 0; i < *len; i++)                                                 \
                b[i] = D(a[i], b[i]);                                                      \
        }                                                                                  \
    }
#define PMAX(x, y) (isnan(x) || isnan(y) ? NAN : ((x) > (y) ? (x) : (y)))
#define PMIN(x, y) (isnan(x) || isnan(y) ? NAN : ((x) < (y) ? (x) : (y)))
NAN_OP(op_nan_max, PMAX, PMAX)
NAN_OP(op_nan_min, PMIN, PMIN)
NAN_OP(op_num_max, fmaxf, fmax)
NAN_OP(op_num_min, fminf, fmin)
#undef NAN_OP

int cpu_comm_create(hir_cpu_backend *cb, hir_diag *e)
{
    hir_cpu_comm *c = calloc(1, sizeof *c);
    if (!c)
        return hir_fail(e, "CPU backend: out of memory");
    cb->comm = c;
    const hir_backend_config *cfg = &cb->base.cfg;
    c->rank = cfg->rank;
    c->world = MPI_COMM_NULL;
    c->timeout = cfg->timeout > 0 ? cfg->timeout : cfg->boot ? hir_boot_timeout(cfg->boot) : 300;
    if (!cfg->boot)
        return 0;   /* compute only; teams of one still work (local copies) */
    c->rank = hir_boot_rank(cfg->boot);
    c->boot = cfg->boot;
    MPI_Request r;
    int rc = MPI_Comm_idup(hir_boot_mpi_world(cfg->boot), &c->world, &r);
    if (rc != MPI_SUCCESS)
        return hir_mpi_error(e, "MPI_Comm_idup", rc);
    if (hir_mpi_poll(&r, NULL, 1, c->timeout, "creating the CPU backend's communicator", e))
        return -1;
    MPI_Comm_set_errhandler(c->world, MPI_ERRORS_RETURN);
    MPI_Op_create(op_nan_max, 1, &c->op_max);
    MPI_Op_create(op_nan_min, 1, &c->op_min);
    MPI_Op_create(op_num_max, 1, &c->op_fmax);
    MPI_Op_create(op_num_min, 1, &c->op_fmin);
    c->have_mpi = 1;
    return 0;
}

static void work_free(hir_work *w, int free_bufs);

void cpu_comm_destroy(hir_cpu_backend *cb)
{
    hir_cpu_comm *c = cb->comm;
    if (!c)
        return;
    if (c->group)
        work_free(c->group, 1);
    int fin = 0;
    MPI_Finalized(&fin);
    hir_mpi_team_cache_free(&c->teams);
    free(c->pending);               /* its works were released before (cpu_work_release) */
    while (c->given_up) {
        cpu_pending *p = c->given_up;
        c->given_up = p->next;
        p->agree = MPI_REQUEST_NULL;
        p->drop(p);
    }
    if (c->have_mpi && !fin) {
        MPI_Op_free(&c->op_max);
        MPI_Op_free(&c->op_min);
        MPI_Op_free(&c->op_fmax);
        MPI_Op_free(&c->op_fmin);
        MPI_Comm_free(&c->world);
    }
    free(c);
    cb->comm = NULL;
}

/* ---------------------------------------------------------------- work items */

hir_work *cpu_work_new(const char *what)
{
    hir_work *w = calloc(1, sizeof *w);
    if (w)
        snprintf(w->what, sizeof w->what, "%s", what);
    return w;
}

static void work_free(hir_work *w, int free_bufs)
{
    if (!w)
        return;
    if (free_bufs)
        for (int i = 0; i < w->nbuf; i++)
            free(w->bufs[i]);
    free(w->bufs);
    free(w->req);
    free(w->peer);
    free(w->is_recv);
    free(w->hreq);
    free(w->hpeer);
    free(w->h);
    free(w->un);
    free(w);
}

static int grow(void **v, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return 0;
    int c = *cap ? *cap * 2 : 4;
    while (c < need)
        c *= 2;
    void *p = realloc(*v, (size_t)c * elem);
    if (!p)
        return -1;
    *v = p;
    *cap = c;
    return 0;
}

/* ---------------------------------------------------------------- agreements in flight */

/* p's exchange is given up: freed now when it has completed, else with the backend */
static void give_up(hir_cpu_comm *cc, cpu_pending *p)
{
    if (p->agree == MPI_REQUEST_NULL) {
        p->drop(p);
        return;
    }
    p->next = cc->given_up;
    cc->given_up = p;
}

int cpu_work_defer(hir_cpu_comm *cc, hir_work *w, cpu_pending *p, hir_diag *e)
{
    if (grow((void **)&cc->pending, &cc->cappending, cc->npending + 1, sizeof *cc->pending)) {
        give_up(cc, p);
        return hir_fail(e, "%s: out of host memory (while recording posted communication)",
                        w->what);
    }
    w->pend = p;
    cc->pending[cc->npending++] = w;
    return 0;
}

/* Issue every pending collective whose agreement has completed, keeping the posting order of
 * each communicator (one whose agreement is still in flight holds the later ones on its
 * communicator back). -1: an issue failed (its error in e, located at its own statement);
 * 1: some are still pending; 0: none is. */
static int progress(hir_cpu_comm *cc, hir_diag *e)
{
    int k = 0, rc = 0;
    for (int i = 0; i < cc->npending; i++) {
        hir_work *w = cc->pending[i];
        cpu_pending *p = w->pend;
        int held = rc != 0, done = 0;
        for (int j = 0; j < k && !held; j++)
            held = cc->pending[j]->pend->comm == p->comm;
        if (!held) {
            int mrc = MPI_Test(&p->agree, &done, MPI_STATUS_IGNORE);
            if (mrc != MPI_SUCCESS) {
                rc = hir_mpi_error(e, "MPI_Test", mrc);
                done = 0;
            }
        }
        if (!done) {
            cc->pending[k++] = w;
            continue;
        }
        w->pend = NULL;
        if (p->issue(p, w, e)) {
            w->failed = 1;
            rc = -1;
        }
        p->drop(p);
    }
    cc->npending = k;
    return rc ? -1 : k > 0;
}

/* the poll's progress callbacks: drive the pending collectives while a wait polls (a rank
 * that waits must still post the collectives its peers wait for), until w is issued */
typedef struct until_issued {
    hir_cpu_comm *cc;
    const hir_work *w;
} until_issued;

static int progress_until_issued(void *arg, hir_diag *e)
{
    until_issued *u = arg;
    return progress(u->cc, e) < 0 ? -1 : u->w->pend != NULL;
}

static int progress_any(void *arg, hir_diag *e)
{
    return progress(arg, e) < 0 ? -1 : 0;
}

static int poll(hir_cpu_comm *cc, MPI_Request *r, const int *peers, int n, const char *what,
                hir_diag *e)
{
    return hir_mpi_poll_progress(r, peers, n, cc->timeout, what, progress_any, cc, e);
}

/* w leaves the pending list; its agreement, still in flight, is given up */
static void unpend(hir_cpu_comm *cc, hir_work *w)
{
    if (!w->pend)
        return;
    int k = 0;
    for (int i = 0; i < cc->npending; i++)
        if (cc->pending[i] != w)
            cc->pending[k++] = cc->pending[i];
    cc->npending = k;
    give_up(cc, w->pend);
    w->pend = NULL;
}

/* Until w's collective is posted: its agreement, and the earlier ones on its communicator,
 * complete while every other pending collective is driven too. */
static int issue_now(hir_cpu_comm *cc, hir_work *w, hir_diag *e)
{
    until_issued u = {cc, w};
    if (w->pend && hir_mpi_poll_progress(NULL, NULL, 0, cc->timeout, "agreeing on a collective",
                                         progress_until_issued, &u, e))
        return -1;
    if (w->failed)
        return hir_fail(e, "%s: its team did not agree on it (reported above)", w->what);
    return 0;
}

int cpu_work_add_req(hir_work *w, MPI_Request r, int peer, int is_recv, hir_diag *e)
{
    if (w->n == w->cap) {
        int cap = w->cap ? 2 * w->cap : 4;
        MPI_Request *nr = realloc(w->req, (size_t)cap * sizeof *nr);
        if (nr)
            w->req = nr;
        int *np = nr ? realloc(w->peer, (size_t)cap * sizeof *np) : NULL;
        if (np)
            w->peer = np;
        int *ni = np ? realloc(w->is_recv, (size_t)cap * sizeof *ni) : NULL;
        if (!ni)
            return hir_fail(e, "%s: out of memory", w->what);
        w->is_recv = ni;
        w->cap = cap;
    }
    w->req[w->n] = r;
    w->peer[w->n] = peer;
    w->is_recv[w->n] = is_recv;
    w->n++;
    return 0;
}

static void *work_buf(hir_work *w, size_t bytes, hir_diag *e)
{
    if (grow((void **)&w->bufs, &w->capbuf, w->nbuf + 1, sizeof *w->bufs)) {
        hir_fail(e, "%s: out of memory", w->what);
        return NULL;
    }
    void *p = hir_alloc_large(bytes ? bytes : 1);
    if (!p) {
        hir_fail(e, "%s: out of memory for %zu bytes", w->what, bytes);
        return NULL;
    }
    w->bufs[w->nbuf++] = p;
    return p;
}

/* A contiguous buffer holding v's elements in dtype xt: v's own memory when it already is
 * one, else a work-owned buffer (filled from v when copy_in). When write_back, the buffer
 * is copied into v once the work completes. */
int cpu_work_stage(hir_work *w, const hir_view *v, hir_dtype xt, int copy_in, int write_back,
                   void **out, hir_diag *e)
{
    if (v->dtype == xt && hir_view_is_contiguous(v)) {
        *out = v->data;
        return 0;
    }
    int64_t n = hir_view_numel(v);
    void *buf = work_buf(w, (size_t)n * hir_dtype_size(xt), e);
    if (!buf)
        return -1;
    hir_view bv;
    hir_view_init(&bv, buf, xt, v->ndim, v->shape);
    if (copy_in && cpu_copy_view(&bv, v, e))
        return -1;
    if (write_back) {
        if (grow((void **)&w->un, &w->capun, w->nun + 1, sizeof *w->un))
            return hir_fail(e, "%s: out of memory", w->what);
        w->un[w->nun++] = (unpack_step){*v, bv};
    }
    *out = buf;
    return 0;
}

/* dst's elements = src's elements in flattened order (shapes may differ, counts may not) */
int cpu_work_flat_copy(hir_work *w, const hir_view *dst, const hir_view *src, hir_diag *e)
{
    if (dst->data == src->data && dst->dtype == src->dtype && hir_view_is_contiguous(dst) &&
        hir_view_is_contiguous(src))
        return 0;
    void *buf;
    if (cpu_work_stage(w, src, dst->dtype, 1, 0, &buf, e))
        return -1;
    hir_view bv;
    hir_view_init(&bv, buf, dst->dtype, dst->ndim, dst->shape);
    return cpu_copy_view(dst, &bv, e);
}

static int finish(hir_work *w, hir_diag *e)
{
    for (int i = 0; i < w->nun; i++)
        if (cpu_copy_view(&w->un[i].dst, &w->un[i].src, e))
            return -1;
    return 0;
}

/* ---------------------------------------------------------------- dtype and op mapping */

MPI_Datatype cpu_mpi_type(hir_dtype t)
{
    switch (t) {
    case HIR_DT_FLOAT: return MPI_FLOAT;
    case HIR_DT_DOUBLE: return MPI_DOUBLE;
    case HIR_DT_HALF: case HIR_DT_BFLOAT: case HIR_DT_UINT16: return MPI_UINT16_T;
    case HIR_DT_BOOL: case HIR_DT_UINT8: return MPI_UINT8_T;
    case HIR_DT_INT8: return MPI_INT8_T;
    case HIR_DT_INT16: return MPI_INT16_T;
    case HIR_DT_INT32: return MPI_INT32_T;
    case HIR_DT_INT64: case HIR_DT_INDEX: return MPI_INT64_T;
    case HIR_DT_UINT32: return MPI_UINT32_T;
    case HIR_DT_UINT64: return MPI_UINT64_T;
    default: return MPI_DATATYPE_NULL;
    }
}

MPI_Op cpu_mpi_op(hir_cpu_comm *c, hir_reduce_op op, hir_dtype xt)
{
    int fp = xt == HIR_DT_FLOAT || xt == HIR_DT_DOUBLE;
    /* bool follows c10d's NCCL mapping: sum is "any" (max), product is "all" (min) */
    if (xt == HIR_DT_BOOL)
        return op == HIR_RED_SUM || op == HIR_RED_MAX || op == HIR_RED_FMAX ? MPI_MAX : MPI_MIN;
    switch (op) {
    case HIR_RED_SUM: return MPI_SUM;
    case HIR_RED_PROD: return MPI_PROD;
    case HIR_RED_MAX: return fp ? c->op_max : MPI_MAX;
    case HIR_RED_MIN: return fp ? c->op_min : MPI_MIN;
    case HIR_RED_FMAX: return fp ? c->op_fmax : MPI_MAX;
    case HIR_RED_FMIN: return fp ? c->op_fmin : MPI_MIN;
    default: return MPI_OP_NULL;
    }
}

/* at most one MPI message (the counts are int) */
int cpu_mpi_count_ok(int64_t n, const char *coll, hir_diag *e)
{
    if (n > 0x7fffffff)
        return hir_fail(e, "%s: %lld elements exceed one MPI message", coll, (long long)n);
    return 0;
}

/* ---------------------------------------------------------------- P2P */

int cpu_group_begin(hir_backend *be, hir_diag *e)
{
    hir_cpu_comm *cc = cpu_of(be)->comm;
    if (cc->group)
        return hir_fail(e, "StartCoalescing: a coalescing group is already open");
    cc->group = cpu_work_new("coalesced P2P group");
    return cc->group ? 0 : hir_fail(e, "StartCoalescing: out of memory");
}

int cpu_group_end(hir_backend *be, hir_stream *s, hir_work **w, hir_diag *e)
{
    hir_cpu_comm *cc = cpu_of(be)->comm;
    if (!cc->group)
        return hir_fail(e, "EndCoalescing: no coalescing group is open");
    *w = cc->group;
    cc->group = NULL;
    return 0;
}

/* The header of a P2P transfer: the sender sends its dtype and element count just before the
 * data (on the transport's header tag, so headers pair in the same posting order as the data);
 * the receiver posts a receive for it and checks it against its own buffer at the wait
 * (p2p_headers_check) before it looks at the data. MPI alone compares neither: a shorter send
 * fills part of the receive, a float send into an int receive hands over raw bits. */
static int p2p_header(hir_work *w, const hir_p2p *p, int64_t n, MPI_Comm world, hir_diag *e)
{
    int tag = p->transport == HIR_BK_CUDA ? HIR_P2P_IPC_HDR_TAG : HIR_P2P_HDR_TAG;
    int64_t *h = work_buf(w, 2 * sizeof *h, e);
    if (!h)
        return -1;
    MPI_Request r;
    if (p->is_send) {
        h[0] = p->buf.dtype;
        h[1] = n;
        int rc = MPI_Isend(h, 2, MPI_INT64_T, p->peer, tag, world, &r);
        if (rc != MPI_SUCCESS)
            return hir_mpi_error(e, "MPI_Isend", rc);
        return cpu_work_add_req(w, r, p->peer, 0, e);
    }
    int cap_req = w->caph, cap_peer = w->caph;     /* the three arrays grow together */
    if (grow((void **)&w->hreq, &cap_req, w->nh + 1, sizeof *w->hreq) ||
        grow((void **)&w->hpeer, &cap_peer, w->nh + 1, sizeof *w->hpeer) ||
        grow((void **)&w->h, &w->caph, w->nh + 1, sizeof *w->h))
        return hir_fail(e, "%s: out of memory", w->what);
    int rc = MPI_Irecv(h, 2, MPI_INT64_T, p->peer, tag, world, &r);
    if (rc != MPI_SUCCESS)
        return hir_mpi_error(e, "MPI_Irecv", rc);
    w->hreq[w->nh] = r;
    w->hpeer[w->nh] = p->peer;
    w->h[w->nh] = (hdr_check){.got = h, .dtype = p->buf.dtype, .count = n};
    w->nh++;
    return 0;
}

/* Every receive's header against its buffer: a sender whose size or dtype differs is refused,
 * naming both sides, before the data is used. */
static int p2p_headers_check(hir_cpu_comm *cc, hir_work *w, hir_diag *e)
{
    if (!w->nh)
        return 0;
    if (poll(cc, w->hreq, w->hpeer, w->nh, w->what, e))
        return -1;
    for (int i = 0; i < w->nh; i++) {
        const hdr_check *c = &w->h[i];
        if (hir_p2p_header_compare(w->hpeer[i], cc->rank, c->got[0], c->got[1], c->dtype,
                                   c->count, w->hpeer[i], e))
            return -1;
    }
    return 0;
}

int cpu_p2p_post(hir_backend *be, hir_stream *s, const hir_p2p *p, hir_work **wp, hir_diag *e)
{
    hir_cpu_comm *cc = cpu_of(be)->comm;
    const char *dir = p->is_send ? "send" : "recv";
    *wp = NULL;
    if (p->peer == cc->rank && p->transport == HIR_BK_CUDA)
        return hir_fail(e, "P2P %s: send to self not supported", dir);
    if (!cc->have_mpi)
        return hir_fail(e, "P2P %s with rank %d needs the MPI bootstrap (no hir_boot given)",
                             dir, p->peer);
    int size;
    MPI_Comm_size(cc->world, &size);
    if (p->peer < 0 || p->peer >= size)
        return hir_fail(e, "P2P %s: peer %d outside a world of %d", dir, p->peer, size);
    /* Every transport runs over MPI here, but a program that names CUDA IPC for a pair on two
     * nodes (real or --simulate-nodes) could not run on the GPUs: it was lowered for another
     * node assignment, and the CPU run refuses it as the CUDA backend would. */
    int my_node = hir_boot_node(cc->boot, cc->rank), peer_node = hir_boot_node(cc->boot, p->peer);
    if (p->transport == HIR_BK_CUDA && my_node != peer_node)
        return hir_fail(e, "P2P %s with backend=CUDA: rank %d (node %d) and peer rank %d (node "
                                "%d%s) are on different nodes, and CUDA IPC works within one node "
                                "only; the program was lowered for another node assignment (lower "
                                "it with backend{kind=auto nodes=N} for this run's N nodes)",
                             dir, cc->rank, my_node, p->peer, peer_node,
                             hir_boot_nodes_simulated(cc->boot) ? ", simulated by --simulate-nodes" : "");
    if (cpu_check_view(&p->buf, "P2P buffer", e))
        return -1;
    MPI_Datatype mt = cpu_mpi_type(p->buf.dtype);
    if (mt == MPI_DATATYPE_NULL)
        return hir_fail(e, "P2P %s: dtype %s cannot be communicated", dir,
                             hir_dtype_name(p->buf.dtype));
    int64_t n = hir_view_numel(&p->buf);
    if (cpu_mpi_count_ok(n, "P2P", e))
        return -1;
    hir_work *w = cc->group;
    if (!w) {
        char what[64];
        snprintf(what, sizeof what, "P2P %s %s rank %d", dir, p->is_send ? "to" : "from", p->peer);
        if (!(w = cpu_work_new(what)))
            return hir_fail(e, "P2P %s: out of memory", dir);
    }
    void *buf;
    MPI_Request r;
    int rc;
    if (cpu_work_stage(w, &p->buf, p->buf.dtype, p->is_send, !p->is_send, &buf, e))
        goto fail;
    int tag = p->transport == HIR_BK_CUDA ? HIR_P2P_IPC_TAG : HIR_P2P_TAG;
    if (p2p_header(w, p, n, cc->world, e))
        goto fail;
    rc = p->is_send ? MPI_Isend(buf, (int)n, mt, p->peer, tag, cc->world, &r)
                    : MPI_Irecv(buf, (int)n, mt, p->peer, tag, cc->world, &r);
    if (rc != MPI_SUCCESS) {
        hir_mpi_error(e, p->is_send ? "MPI_Isend" : "MPI_Irecv", rc);
        goto fail;
    }
    if (cpu_work_add_req(w, r, p->peer, !p->is_send, e))
        goto fail;
    if (!cc->group)
        *wp = w;
    return 0;
fail:
    if (!cc->group)
        cpu_work_release(be, w);
    return -1;
}

/* The CUDA-IPC protocol (hostir-format.md §4) exchanges memory handles so that the receiver
 * can later pull the sender's buffer (get) or the sender push into the receiver's (put). On
 * the CPU the matched Isend/Irecv posted by p2p_post moves exactly the same bytes between
 * the same pair in the same order, so there are no handles to share; only nvFuser's check
 * that a rank does not talk to itself remains. */
int cpu_share_handles(hir_backend *be, const hir_p2p *list, int n, hir_diag *e)
{
    hir_cpu_comm *cc = cpu_of(be)->comm;
    for (int i = 0; i < n; i++)
        if (list[i].peer == cc->rank)
            return hir_fail(e, "ShareMemHandles: send to self not supported");
    return 0;
}

/* ---------------------------------------------------------------- completion */

/* Abandon what is still in flight: receives are cancelled; sends (and nonblocking
 * collectives, which MPI cannot cancel) are left to finish or die with the job. Their
 * buffers are then leaked on purpose: freeing memory MPI may still read is worse, and a
 * timed-out run is about to end. */
static void cancel_headers(hir_work *w)
{
    for (int i = 0; i < w->nh; i++)
        if (w->hreq[i] != MPI_REQUEST_NULL) {
            MPI_Cancel(&w->hreq[i]);
            MPI_Wait(&w->hreq[i], MPI_STATUS_IGNORE);   /* a cancelled receive completes */
        }
    w->nh = 0;
}

static void work_abandon(hir_work *w)
{
    int pending = 0;
    cancel_headers(w);
    for (int i = 0; i < w->n; i++) {
        if (w->req[i] == MPI_REQUEST_NULL)
            continue;
        int flag = 0;
        MPI_Test(&w->req[i], &flag, MPI_STATUS_IGNORE);
        if (flag)
            continue;
        if (w->is_recv[i]) {
            MPI_Cancel(&w->req[i]);
            MPI_Wait(&w->req[i], MPI_STATUS_IGNORE);   /* a cancelled receive completes */
        } else {
            pending = 1;
        }
    }
    work_free(w, !pending);
}

int cpu_wait(hir_backend *be, hir_stream *s, hir_work *w, hir_diag *e)
{
    hir_cpu_comm *cc = cpu_of(be)->comm;
    if (!w)
        return hir_fail(e, "wait: no work to wait for");
    if (w == cc->group)
        return hir_fail(e, "wait: the coalescing group is still open");
    if (issue_now(cc, w, e) || p2p_headers_check(cc, w, e) ||
        (w->n && poll(cc, w->req, w->peer, w->n, w->what, e))) {
        unpend(cc, w);
        work_abandon(w);
        return -1;
    }
    int rc = finish(w, e);
    work_free(w, 1);
    return rc;
}

/* A work dropped unwaited (the program never waited for it, or an error path): receives are
 * cancelled at once; sends, which MPI cannot cancel, get the timeout to complete (a peer that
 * receives late) so that the buffers they read are not freed while MPI may still read them.
 * Only a send still pending after that is abandoned. */
void cpu_work_release(hir_backend *be, hir_work *w)
{
    if (!w)
        return;
    hir_cpu_comm *cc = cpu_of(be)->comm;
    int sends = 0;
    /* a collective still agreeing gets the timeout to be posted, as a send gets it to
     * complete: its peers may be waiting for it */
    if (w->pend && issue_now(cc, w, NULL))
        unpend(cc, w);
    for (int i = 0; i < w->n; i++) {
        if (w->req[i] == MPI_REQUEST_NULL)
            continue;
        if (w->is_recv[i]) {
            MPI_Cancel(&w->req[i]);
            MPI_Wait(&w->req[i], MPI_STATUS_IGNORE);   /* a cancelled receive completes */
        } else {
            sends = 1;
        }
    }
    if (sends) {
        poll(cc, w->req, w->peer, w->n, w->what, NULL);
    }
    work_abandon(w);
}

int cpu_synchronize(hir_backend *be, hir_diag *e)
{
    return 0;   /* compute is synchronous; pending communication completes in wait */
}

/* ---------------------------------------------------------------- all-to-alls over the job
 * (MoE token routing, cpu_moe.c) */

int cpu_comm_world_size(hir_backend *be, int *size)
{
    hir_cpu_comm *cc = cpu_of(be)->comm;
    *size = 1;
    if (cc->have_mpi)
        MPI_Comm_size(cc->world, size);
    return 0;
}

/* All-to-all of rows of `row` bytes: sc[r] rows to rank r (in rank order in sbuf), rc[r]
 * rows from rank r (in rank order into rbuf). */
int cpu_comm_alltoallv(hir_backend *be, int size, const char *sbuf, const int64_t *sc,
                       char *rbuf, const int64_t *rc, size_t row, const char *what, hir_diag *e)
{
    hir_cpu_comm *cc = cpu_of(be)->comm;
    if (size == 1 || !cc->have_mpi) {
        if (sc[0] != rc[0])
            return hir_fail(e, "%s: %lld rows sent to self, %lld expected back", what,
                                 (long long)sc[0], (long long)rc[0]);
        if (sc[0] && row)
            memcpy(rbuf, sbuf, (size_t)sc[0] * row);
        return 0;
    }
    int *cnt = calloc((size_t)size * 4, sizeof *cnt);
    if (!cnt)
        return hir_fail(e, "%s: out of memory", what);
    int *sdis = cnt + size, *rcnt = cnt + 2 * size, *rdis = cnt + 3 * size;
    int64_t so = 0, ro = 0;
    for (int r = 0; r < size; r++) {
        int64_t sb = sc[r] * (int64_t)row, rb = rc[r] * (int64_t)row;
        if (sc[r] < 0 || rc[r] < 0 || sb > INT32_MAX || rb > INT32_MAX || so > INT32_MAX ||
            ro > INT32_MAX) {
            free(cnt);
            return hir_fail(e, "%s: more than 2^31 bytes to route with one rank", what);
        }
        cnt[r] = (int)sb;
        sdis[r] = (int)so;
        rcnt[r] = (int)rb;
        rdis[r] = (int)ro;
        so += sb;
        ro += rb;
    }
    MPI_Request req;
    int rc2 = MPI_Ialltoallv(sbuf, cnt, sdis, MPI_BYTE, rbuf, rcnt, rdis, MPI_BYTE, cc->world,
                             &req);
    free(cnt);
    if (rc2 != MPI_SUCCESS)
        return hir_mpi_error(e, "MPI_Ialltoallv", rc2);
    return poll(cc, &req, NULL, 1, what, e);
}

int cpu_comm_alltoall_i64(hir_backend *be, int size, const int64_t *sc, int64_t *rc,
                          hir_diag *e)
{
    hir_cpu_comm *cc = cpu_of(be)->comm;
    if (size == 1 || !cc->have_mpi) {
        rc[0] = sc[0];
        return 0;
    }
    MPI_Request req;
    int rc2 = MPI_Ialltoall(sc, 1, MPI_INT64_T, rc, 1, MPI_INT64_T, cc->world, &req);
    if (rc2 != MPI_SUCCESS)
        return hir_mpi_error(e, "MPI_Ialltoall", rc2);
    return poll(cc, &req, NULL, 1, "token counts", e);
}
