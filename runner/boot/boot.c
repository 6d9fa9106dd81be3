/* boot.c — the bootstrap over MPI (rank discovery, node ids, the polled barrier / team
 * broadcast / pairwise exchange that backends use for NCCL ids and IPC handles) and the
 * start-up and shut-down sentinel. The MPI polling and the per-team communicator cache are in
 * mpi.c, the local launcher behind `hir-run -np N` in launch.c. */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runner/boot/boot_mpi.h"
#include "support/diag.h"
#include "support/support.h"

#define HIR_BOOT_DEFAULT_TIMEOUT 300.0
/* The sentinel: a thread alive from MPI start-up to the end of shut-down. It ends the
 * process when a timed phase (MPI_Init and the bootstrap, MPI_Finalize) makes no progress
 * for longer than its limit, which the run's own timeouts cannot cover, and when the
 * launcher that started this rank (`hir-run -np`, through mpirun) has died: the rank is then
 * re-parented, and nothing else would end it. */
typedef struct sentinel {
    pthread_t thread;
    int started;
    int rank;
    double limit;
    pid_t parent;                        /* getppid() at start when we launched it, else 0 */
    _Atomic int64_t phase_ns;            /* start of the timed phase; 0: none */
    _Atomic(const char *) phase;
    _Atomic int stop;
} sentinel;

struct hir_boot {
    MPI_Comm world, local;
    int rank, size, local_rank, local_size;
    /* Node identity (hir_boot_node). host_of: per world rank, the index of its shared-memory
     * domain (MPI_COMM_TYPE_SHARED), numbered in the order of each domain's lowest rank.
     * node_of: the node each rank counts as: host_of, or a simulated block of ranks
     * (hir_boot_simulate_nodes). */
    int *host_of, *node_of;
    int nhosts, nnodes, simulated;
    int node_local_rank, node_local_size;
    double timeout;
    int initialized_mpi;         /* we called MPI_Init_thread, so we finalize */
    int pending;                 /* a bootstrap collective timed out and is still in flight:
                                  * MPI can neither cancel it nor free or finalize around it */
    hir_mpi_team_cache teams;
    sentinel sent;
};

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* "hir-run: rank R: error: MSG", one write(2) through the diagnostic engine */
static void sentinel_say(int rank, const char *msg)
{
    char prefix[48];
    snprintf(prefix, sizeof prefix, "hir-run: rank %d", rank);
    hir_diag_write_fatal(prefix, &(hir_severity){HIR_ERROR}, msg);
}

static void *sentinel_main(void *arg)
{
    sentinel *st = arg;
    while (!atomic_load(&st->stop)) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
        char msg[512];
        if (st->parent && getppid() != st->parent) {
            snprintf(msg, sizeof msg, "the launcher (pid %d) is gone; ending this rank",
                     (int)st->parent);
            sentinel_say(st->rank, msg);
            _exit(1);
        }
        int64_t t0 = atomic_load(&st->phase_ns);
        const char *what = atomic_load(&st->phase);
        if (t0 && what && (mono_ns() - t0) * 1e-9 > st->limit) {
            snprintf(msg, sizeof msg, "no progress for %.0f s in %s (timeout); ending this rank",
                     st->limit, what);
            sentinel_say(st->rank, msg);
            _exit(1);
        }
    }
    return NULL;
}

static void sentinel_phase(sentinel *st, const char *what)
{
    atomic_store(&st->phase_ns, what ? mono_ns() : 0);
    atomic_store(&st->phase, what);
}

static void sentinel_start(sentinel *st, double limit)
{
    memset(st, 0, sizeof *st);
    st->rank = -1;
    st->limit = limit;
    /* only a rank this program's launcher started watches its parent (hir_launch_local) */
    st->parent = getenv(HIR_LAUNCH_MARKER) ? getppid() : 0;
    if (st->parent == 1)
        _exit(1);                        /* the launcher died before we got here */
    st->started = pthread_create(&st->thread, NULL, sentinel_main, st) == 0;
}

static void sentinel_stop(sentinel *st)
{
    if (!st->started)
        return;
    atomic_store(&st->stop, 1);
    pthread_join(st->thread, NULL);
    st->started = 0;
}

/* Test-only fault injection (docs/reliability.md): HIR_FAULT_BOOT=init-stall|fini-stall makes
 * this process stall inside MPI start-up or shut-down, where only the sentinel can end it. */
static void boot_fault(const char *where)
{
    const char *f = getenv("HIR_FAULT_BOOT");
    if (f && !strncmp(f, where, strlen(where)) && !strcmp(f + strlen(where), "-stall"))
        for (;;)
            pause();
}

/* ---------------------------------------------------------------- bootstrap */

/* Node identity from MPI, not from host names (two containers or hosts may share a name, and
 * one host may answer to several): ranks in one MPI_COMM_TYPE_SHARED communicator (b->local,
 * ordered by world rank, so its local rank 0 is its lowest world rank) form a node. Every rank
 * learns the lowest world rank of its node, all ranks gather these, and a node's index is the
 * number of nodes whose lowest rank comes before its own. */
static int discover_nodes(hir_boot *b, hir_diag *e)
{
    int *lead = calloc((size_t)b->size, sizeof *lead);
    b->host_of = calloc((size_t)b->size, sizeof *b->host_of);
    b->node_of = calloc((size_t)b->size, sizeof *b->node_of);
    if (!lead || !b->host_of || !b->node_of) {
        free(lead);
        return hir_fail(e, "hir_boot_init: out of memory");
    }
    int mine = b->rank;
    MPI_Request r;
    int rc = MPI_Ibcast(&mine, 1, MPI_INT, 0, b->local, &r);
    if (rc != MPI_SUCCESS) {
        free(lead);
        return hir_mpi_error(e, "MPI_Ibcast", rc);
    }
    if (hir_mpi_poll(&r, NULL, 1, b->timeout, "node leader broadcast", e)) {
        b->pending = 1;
        free(lead);
        return -1;
    }
    rc = MPI_Iallgather(&mine, 1, MPI_INT, lead, 1, MPI_INT, b->world, &r);
    if (rc != MPI_SUCCESS) {
        free(lead);
        return hir_mpi_error(e, "MPI_Iallgather", rc);
    }
    if (hir_mpi_poll(&r, NULL, 1, b->timeout, "allgather of node leaders", e)) {
        b->pending = 1;
        free(lead);
        return -1;
    }
    b->nhosts = 0;
    for (int q = 0; q < b->size; q++) {
        if (lead[q] < 0 || lead[q] > q || lead[lead[q]] != lead[q]) {
            hir_fail(e, "node discovery: rank %d reports rank %d as the lowest rank of "
                             "its node, which MPI_COMM_TYPE_SHARED cannot give", q, lead[q]);
            free(lead);
            return -1;
        }
        /* leaders appear in ascending order, each before the ranks it leads */
        b->host_of[q] = lead[q] == q ? b->nhosts++ : b->host_of[lead[q]];
    }
    free(lead);
    memcpy(b->node_of, b->host_of, (size_t)b->size * sizeof *b->node_of);
    b->nnodes = b->nhosts;
    b->node_local_rank = b->local_rank;
    b->node_local_size = b->local_size;
    return 0;
}

int hir_boot_simulate_nodes(hir_boot *b, int n, hir_diag *e)
{
    if (n < 1 || n > b->size)
        return hir_fail(e, "--simulate-nodes=%d: needs 1 to %d (the number of ranks)", n,
                             b->size);
    if (b->size % n)
        return hir_fail(e, "--simulate-nodes=%d: %d ranks do not split into %d equal "
                                "blocks of consecutive ranks (%d %% %d = %d)", n, b->size, n,
                             b->size, n, b->size % n);
    if (b->nhosts != 1)
        return hir_fail(e, "--simulate-nodes=%d: the ranks already span %d nodes; "
                                "simulated nodes split the ranks of one node", n, b->nhosts);
    int per = b->size / n;
    for (int q = 0; q < b->size; q++)
        b->node_of[q] = q / per;
    b->nnodes = n;
    b->simulated = 1;
    b->node_local_rank = b->rank % per;
    b->node_local_size = per;
    return 0;
}

int hir_boot_init(int *argc, char ***argv, double timeout_s, hir_boot **out, hir_diag *e)
{
    *out = NULL;
    hir_boot *b = calloc(1, sizeof *b);
    if (!b)
        return hir_fail(e, "hir_boot_init: out of memory");
    b->timeout = timeout_s > 0 ? timeout_s : HIR_BOOT_DEFAULT_TIMEOUT;
    b->world = b->local = MPI_COMM_NULL;
    /* the same grace as the GPU watchdog (watchdog.c): start-up is slow on a loaded machine */
    sentinel_start(&b->sent, b->timeout + 30);
    sentinel_phase(&b->sent, "MPI start-up (MPI_Init_thread and the bootstrap)");
    boot_fault("init");

    int inited = 0, rc;
    MPI_Initialized(&inited);
    if (!inited) {
        int provided = 0;
        rc = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
        if (rc != MPI_SUCCESS) {
            sentinel_stop(&b->sent);
            free(b);
            return hir_fail(e, "MPI_Init_thread failed (error %d)", rc);
        }
        b->initialized_mpi = 1;
        /* CUDA/NCCL helper threads never call MPI, but the thread that initialised MPI must
         * be allowed to run while they exist: FUNNELED is the least that promises it. */
        if (provided < MPI_THREAD_FUNNELED) {
            hir_fail(e, "MPI_Init_thread: MPI_THREAD_FUNNELED not provided (got %d)",
                          provided);
            goto fail;
        }
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &b->rank);
    b->sent.rank = b->rank;
    MPI_Comm_size(MPI_COMM_WORLD, &b->size);

    /* A private duplicate keeps our tags away from any other user of MPI_COMM_WORLD. */
    MPI_Request r;
    rc = MPI_Comm_idup(MPI_COMM_WORLD, &b->world, &r);
    if (rc != MPI_SUCCESS) {
        hir_mpi_error(e, "MPI_Comm_idup", rc);
        goto fail;
    }
    if (hir_mpi_poll(&r, NULL, 1, b->timeout, "MPI_Comm_idup of the world", e)) {
        b->pending = 1;
        goto fail;
    }
    MPI_Comm_set_errhandler(b->world, MPI_ERRORS_RETURN);

    rc = MPI_Comm_split_type(b->world, MPI_COMM_TYPE_SHARED, b->rank, MPI_INFO_NULL, &b->local);
    if (rc != MPI_SUCCESS) {
        hir_mpi_error(e, "MPI_Comm_split_type", rc);
        goto fail;
    }
    MPI_Comm_rank(b->local, &b->local_rank);
    MPI_Comm_size(b->local, &b->local_size);

    if (discover_nodes(b, e))
        goto fail;
    sentinel_phase(&b->sent, NULL);     /* the run has timeouts of its own */
    *out = b;
    return 0;
fail:
    hir_boot_fini(b);
    return -1;
}

void hir_boot_fini(hir_boot *b)
{
    if (!b)
        return;
    int fin = 0;
    MPI_Finalized(&fin);
    /* After a timed-out bootstrap collective, freeing its communicator or finalizing made
     * Open MPI complete the orphaned request in MPI_Finalize and crash (SIGSEGV): leave MPI
     * as it is; the process ends with the caller's error (a launcher then ends the job). */
    if (b->pending)
        fin = 1;
    sentinel_phase(&b->sent, "MPI shut-down (MPI_Finalize)");
    boot_fault("fini");
    hir_mpi_team_cache_free(&b->teams);
    if (!fin) {
        if (b->local != MPI_COMM_NULL)
            MPI_Comm_free(&b->local);
        if (b->world != MPI_COMM_NULL)
            MPI_Comm_free(&b->world);
        if (b->initialized_mpi)
            MPI_Finalize();
    }
    sentinel_stop(&b->sent);
    free(b->host_of);
    free(b->node_of);
    free(b);
}

void hir_boot_abort(hir_boot *b, int code)
{
    int inited = 0, fin = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&fin);
    fflush(stdout);
    fflush(stderr);
    if (inited && !fin)
        MPI_Abort(b && b->world != MPI_COMM_NULL ? b->world : MPI_COMM_WORLD, code);
    _Exit(code);   /* no MPI: there is no job to take down beyond this process */
}

void hir_boot_set_timeout(hir_boot *b, double timeout_s)
{
    b->timeout = timeout_s > 0 ? timeout_s : HIR_BOOT_DEFAULT_TIMEOUT;
}

int hir_boot_rank(const hir_boot *b) { return b->rank; }
int hir_boot_size(const hir_boot *b) { return b->size; }
int hir_boot_local_rank(const hir_boot *b) { return b->local_rank; }
int hir_boot_local_size(const hir_boot *b) { return b->local_size; }

int hir_boot_threads(const hir_boot *b, int max)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int local = b ? b->local_size : 1;
    long t = (ncpu > 0 ? ncpu : 1) / (local > 0 ? local : 1);
    return t < 1 ? 1 : t > max ? max : (int)t;
}
double hir_boot_timeout(const hir_boot *b) { return b->timeout; }
MPI_Comm hir_boot_mpi_world(const hir_boot *b) { return b->world; }

uint64_t hir_boot_node_id(const hir_boot *b, int rank)
{
    return rank >= 0 && rank < b->size ? (uint64_t)b->host_of[rank] : UINT64_MAX;
}

int hir_boot_node(const hir_boot *b, int rank)
{
    return rank >= 0 && rank < b->size ? b->node_of[rank] : -1;
}

int hir_boot_node_count(const hir_boot *b) { return b->nnodes; }
int hir_boot_nodes_simulated(const hir_boot *b) { return b->simulated; }
int hir_boot_node_local_rank(const hir_boot *b) { return b->node_local_rank; }
int hir_boot_node_local_size(const hir_boot *b) { return b->node_local_size; }

/* What rank 0 learns of every rank for hir_boot_print_topology */
typedef struct topo_rec {
    char host[256];
    int node, local_rank, local_size, gpu;
} topo_rec;

int hir_boot_print_topology(hir_boot *b, int gpu, FILE *out, hir_diag *e)
{
    topo_rec mine;
    memset(&mine, 0, sizeof mine);
    if (gethostname(mine.host, sizeof mine.host - 1))
        snprintf(mine.host, sizeof mine.host, "?");
    for (char *c = mine.host; *c; c++)        /* one token per field, whatever the name */
        if (*c <= ' ' || *c == 0x7f)
            *c = '?';
    mine.node = b->node_of[b->rank];
    mine.local_rank = b->node_local_rank;
    mine.local_size = b->node_local_size;
    mine.gpu = gpu;
    topo_rec *all = NULL;
    if (b->rank == 0 && !(all = calloc((size_t)b->size, sizeof *all)))
        return hir_fail(e, "topology: out of memory");
    MPI_Request r;
    int rc = MPI_Igather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, 0,
                         b->world, &r);
    if (rc != MPI_SUCCESS) {
        free(all);
        return hir_mpi_error(e, "MPI_Igather", rc);
    }
    if (hir_mpi_poll(&r, NULL, 1, b->timeout, "gathering the topology", e)) {
        b->pending = 1;
        free(all);
        return -1;
    }
    if (b->rank == 0) {
        /* the layout hir-opt's nodes= describes (stream-parallel, backend{kind=auto}): node k
         * the k-th block of size/nnodes consecutive ranks */
        bool blocks = b->nnodes > 0 && b->size % b->nnodes == 0;
        for (int q = 0; q < b->size && blocks; q++)
            blocks = all[q].node == q / (b->size / b->nnodes);
        fprintf(out, "topology: %d rank%s on %d node%s (%s); ", b->size, b->size == 1 ? "" : "s",
                b->nnodes, b->nnodes == 1 ? "" : "s",
                b->simulated ? "simulated: --simulate-nodes" : "MPI_COMM_TYPE_SHARED");
        if (blocks)
            fprintf(out, "for hir-opt: nodes=%d\n", b->nnodes);
        else
            fprintf(out, "for hir-opt: none (the nodes are not blocks of consecutive ranks of one "
                         "size, which nodes= describes)\n");
        for (int q = 0; q < b->size; q++) {
            fprintf(out, "rank %d node %d local_rank %d local_size %d host %s gpu ", q,
                    all[q].node, all[q].local_rank, all[q].local_size, all[q].host);
            if (all[q].gpu >= 0)
                fprintf(out, "%d\n", all[q].gpu);
            else
                fprintf(out, "none\n");
        }
        fflush(out);
    }
    free(all);
    return 0;
}

int hir_boot_barrier(hir_boot *b, hir_diag *e)
{
    MPI_Request r;
    int rc = MPI_Ibarrier(b->world, &r);
    if (rc != MPI_SUCCESS)
        return hir_mpi_error(e, "MPI_Ibarrier", rc);
    return hir_mpi_poll(&r, NULL, 1, b->timeout, "world barrier", e);
}

int hir_boot_team_bcast(hir_boot *b, const int *team, int team_size, int root_index,
                        void *data, size_t bytes, hir_diag *e)
{
    if (team_size <= 1 || bytes == 0)
        return 0;
    if (bytes > INT_MAX)
        return hir_fail(e, "hir_boot_team_bcast: %zu bytes is more than one message", bytes);
    if (root_index < 0 || root_index >= team_size)
        return hir_fail(e, "hir_boot_team_bcast: root index %d outside a team of %d",
                             root_index, team_size);
    MPI_Comm comm;
    if (hir_mpi_team_comm(&b->teams, b->world, team, team_size, b->timeout, &comm, e))
        return -1;
    MPI_Request r;
    int rc = MPI_Ibcast(data, (int)bytes, MPI_BYTE, root_index, comm, &r);
    if (rc != MPI_SUCCESS)
        return hir_mpi_error(e, "MPI_Ibcast", rc);
    char what[96];
    snprintf(what, sizeof what, "team broadcast from rank %d", team[root_index]);
    return hir_mpi_poll(&r, NULL, 1, b->timeout, what, e);
}

int hir_boot_team_allgather(hir_boot *b, const int *team, int team_size, const void *mine,
                            void *all, size_t bytes, hir_diag *e)
{
    if (team_size <= 1 || bytes == 0) {
        memmove(all, mine, bytes);
        return 0;
    }
    if (bytes > INT_MAX / (size_t)team_size)
        return hir_fail(e, "hir_boot_team_allgather: %zu bytes from %d members is more than "
                           "one message", bytes, team_size);
    MPI_Comm comm;
    if (hir_mpi_team_comm(&b->teams, b->world, team, team_size, b->timeout, &comm, e))
        return -1;
    MPI_Request r;
    int rc = MPI_Iallgather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, comm, &r);
    if (rc != MPI_SUCCESS)
        return hir_mpi_error(e, "MPI_Iallgather", rc);
    return hir_mpi_poll(&r, NULL, 1, b->timeout, "team exchange", e);
}

struct hir_boot_msg {
    MPI_Request r;
    int peer, is_recv;
    size_t bytes;
    unsigned char buf[HIR_BOOT_MSG_MAX];
};

int hir_boot_msg_post(hir_boot *b, int peer, int tag, int is_recv, const void *data,
                      size_t bytes, hir_boot_msg **out, hir_diag *e)
{
    *out = NULL;
    if (peer < 0 || peer >= b->size)
        return hir_fail(e, "hir_boot_msg_post: peer %d outside a world of %d", peer, b->size);
    if (bytes > HIR_BOOT_MSG_MAX)
        return hir_fail(e, "hir_boot_msg_post: %zu bytes is more than %d", bytes,
                        HIR_BOOT_MSG_MAX);
    hir_boot_msg *m = calloc(1, sizeof *m);
    if (!m)
        return hir_fail(e, "out of host memory");
    m->peer = peer;
    m->is_recv = is_recv;
    m->bytes = bytes;
    int rc;
    if (is_recv) {
        rc = MPI_Irecv(m->buf, (int)bytes, MPI_BYTE, peer, tag, b->world, &m->r);
    } else {
        memcpy(m->buf, data, bytes);
        rc = MPI_Isend(m->buf, (int)bytes, MPI_BYTE, peer, tag, b->world, &m->r);
    }
    if (rc != MPI_SUCCESS) {
        free(m);
        return hir_mpi_error(e, is_recv ? "MPI_Irecv" : "MPI_Isend", rc);
    }
    *out = m;
    return 0;
}

int hir_boot_msg_complete(hir_boot *b, hir_boot_msg *m, int wait, void *out, const char *what,
                          hir_diag *e)
{
    int rc;
    if (wait) {
        rc = hir_mpi_poll(&m->r, &m->peer, 1, b->timeout, what, e);
    } else {
        int flag = 0;
        rc = MPI_Test(&m->r, &flag, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            rc = hir_mpi_error(e, "MPI_Test", rc);
        else if (!flag)
            return 0;
    }
    if (rc) {
        hir_boot_msg_drop(m);
        return -1;
    }
    if (m->is_recv && out)
        memcpy(out, m->buf, m->bytes);
    free(m);
    return 1;
}

void hir_boot_msg_drop(hir_boot_msg *m)
{
    if (!m)
        return;
    int done = 0;
    if (m->r != MPI_REQUEST_NULL && !m->is_recv)   /* a small send is usually gone already */
        MPI_Test(&m->r, &done, MPI_STATUS_IGNORE);
    if (m->r != MPI_REQUEST_NULL && !done) {
        hir_mpi_drop_pending(&m->r, 1);
        if (!m->is_recv)
            return;   /* a detached send still reads m->buf: leaked rather than freed early */
    }
    free(m);
}

int hir_boot_exchange(hir_boot *b, int peer, int tag, const void *mine, void *theirs,
                      size_t bytes, hir_diag *e)
{
    if (peer < 0 || peer >= b->size)
        return hir_fail(e, "hir_boot_exchange: peer %d outside a world of %d", peer, b->size);
    if (bytes > INT_MAX)
        return hir_fail(e, "hir_boot_exchange: %zu bytes is more than one message", bytes);
    if (peer == b->rank) {
        memmove(theirs, mine, bytes);
        return 0;
    }
    MPI_Request r[2];
    int peers[2] = {peer, peer};
    int rc = MPI_Irecv(theirs, (int)bytes, MPI_BYTE, peer, tag, b->world, &r[1]);
    if (rc != MPI_SUCCESS)
        return hir_mpi_error(e, "MPI_Irecv", rc);
    rc = MPI_Isend(mine, (int)bytes, MPI_BYTE, peer, tag, b->world, &r[0]);
    if (rc != MPI_SUCCESS) {
        MPI_Cancel(&r[1]);
        MPI_Request_free(&r[1]);
        return hir_mpi_error(e, "MPI_Isend", rc);
    }
    char what[64];
    snprintf(what, sizeof what, "exchange (tag %d) with rank %d", tag, peer);
    if (hir_mpi_poll(r, peers, 2, b->timeout, what, e)) {
        /* leave no receive behind that could match a later exchange's message */
        hir_mpi_drop_pending(r, 2);
        return -1;
    }
    return 0;
}
