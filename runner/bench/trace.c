/* trace.c — recording one run as Chrome trace events: host spans from the monotonic clock,
 * device spans from backend event pairs on the statement's stream (resolved against a base
 * event recorded on the main stream right after a barrier), merged on rank 0 over the
 * bootstrap. Records are fixed-size PODs so they travel between ranks as plain bytes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runner/bench/trace.h"
#include "runner/boot/boot.h"

#define TRACE_NAME 64
#define TRACE_TRACKS 64

typedef struct trace_rec {          /* sent between ranks as bytes: no pointers */
    char name[TRACE_NAME];
    char cat[16];
    int32_t line;
    int32_t track;                  /* 0 host only, else index into tracks + 1 */
    int64_t index;                  /* loop index, or -1 */
    double h0, h1;                  /* host, microseconds since arm */
    double g0, g1;                  /* device, microseconds since the base event */
    int32_t ev0, ev1;               /* event slots while recording, -1 none */
    int32_t has_gpu;
} trace_rec;

typedef struct trace_track {        /* also sent between ranks */
    char name[32];
} trace_track;

struct hir_trace {
    hir_backend *be;
    hir_boot *boot;
    int armed;
    double t0;                      /* host seconds at arm */
    hir_event *base;
    hir_event **ev;                 /* pool, reused across runs */
    int nev, cap_ev;
    trace_rec *rec;
    int nrec, cap_rec;
    hir_stream *stream_of[TRACE_TRACKS];
    trace_track track[TRACE_TRACKS];
    int ntracks;
    int evused;
    int64_t index;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int hir_trace_create(hir_backend *be, hir_boot *boot, hir_trace **out, hir_diag *e)
{
    hir_trace *t = calloc(1, sizeof *t);
    if (!t) return hir_fail(e, "trace: out of memory");
    t->be = be;
    t->boot = boot;
    t->index = -1;
    if (be->ops->event_create(be, &t->base, e) < 0) {
        free(t);
        return -1;
    }
    hir_trace_name_stream(t, be->ops->stream_main(be), "main stream");
    *out = t;
    return 0;
}

void hir_trace_destroy(hir_trace *t)
{
    if (!t) return;
    for (int i = 0; i < t->nev; i++) t->be->ops->event_destroy(t->be, t->ev[i]);
    if (t->base) t->be->ops->event_destroy(t->be, t->base);
    free(t->ev);
    free(t->rec);
    free(t);
}

static int track_of(hir_trace *t, hir_stream *s)
{
    for (int i = 0; i < t->ntracks; i++)
        if (t->stream_of[i] == s) return i + 1;
    if (t->ntracks == TRACE_TRACKS) return 0;
    int i = t->ntracks++;
    t->stream_of[i] = s;
    snprintf(t->track[i].name, sizeof t->track[i].name, "stream #%d", i);
    return i + 1;
}

void hir_trace_name_stream(hir_trace *t, hir_stream *s, const char *name)
{
    if (!t || !s) return;
    int k = track_of(t, s);
    if (k > 0) snprintf(t->track[k - 1].name, sizeof t->track[k - 1].name, "%s", name);
}

void hir_trace_set_index(hir_trace *t, int64_t index)
{
    if (t) t->index = index;
}

int hir_trace_arm(hir_trace *t, hir_diag *e)
{
    t->nrec = 0;
    t->evused = 0;
    t->index = -1;
    hir_backend *be = t->be;
    if (be->ops->event_record(be, t->base, be->ops->stream_main(be), e) < 0) return -1;
    t->t0 = now_s();
    t->armed = 1;
    return 0;
}

/* The next pooled event, created on demand; -1 when none can be had. */
static int take_event(hir_trace *t)
{
    if (t->evused == t->nev) {
        if (t->nev == t->cap_ev) {
            int cap = t->cap_ev ? 2 * t->cap_ev : 256;
            hir_event **v = realloc(t->ev, (size_t)cap * sizeof *v);
            if (!v) return -1;
            t->ev = v;
            t->cap_ev = cap;
        }
        if (t->be->ops->event_create(t->be, &t->ev[t->nev], NULL) < 0) return -1;
        t->nev++;
    }
    return t->evused++;
}

static int record_on(hir_trace *t, int track)
{
    if (track <= 0) return -1;
    int k = take_event(t);
    if (k < 0) return -1;
    if (t->be->ops->event_record(t->be, t->ev[k], t->stream_of[track - 1], NULL) < 0) return -1;
    return k;
}

const char *hir_trace_category(const hir_stmt *st)
{
    switch (st->op) {
    case HIR_OP_LINEAR: case HIR_OP_MATMUL: return "gemm";
    case HIR_OP_SET: case HIR_OP_SEGMENTER_SET: return "copy";
    case HIR_OP_COMMUNICATION: case HIR_OP_END_COAL: case HIR_OP_START_COAL:
        return st->u.comm && st->u.comm->backend == HIR_BK_CUDA ? "ipc" : "nccl";
    case HIR_OP_P2P: return st->u.comm->backend == HIR_BK_CUDA ? "ipc" : "nccl";
    case HIR_OP_WAIT: return "wait";
    case HIR_OP_SHARE_HANDLES: return "ipc-exchange";
    case HIR_OP_SYNC_STREAM: return "sync";
    case HIR_OP_ALLOCATE: case HIR_OP_DEALLOCATE: return "alloc";
    case HIR_OP_POST_ON_STREAM: case HIR_OP_LAUNCH_KERNEL: return "kernel";
    default:
        return hir_ops[st->op].flags & HIR_OPF_COMPUTE ? "kernel" : "host";
    }
}

static void stmt_name(const hir_stmt *st, char *buf, size_t n)
{
    const char *kw = hir_ops[st->op].keyword;
    if (!kw) kw = st->op == HIR_OP_SCALAR_DEF ? "scalar" : "op";
    if ((st->op == HIR_OP_P2P || st->op == HIR_OP_COMMUNICATION) && st->u.comm) {
        const hir_comm *c = st->u.comm;
        const char *what = st->op == HIR_OP_P2P ? (c->is_send ? "send" : "recv")
                                                 : hir_comm_type_name(c->type);
        const hir_tensor *bt = st->op == HIR_OP_P2P ? c->buffer : c->output;
        if (bt)
            snprintf(buf, n, "%s T%lld (%s)", what, (long long)bt->number,
                     hir_backend_kind_name(c->backend));
        else
            snprintf(buf, n, "%s (%s)", what, hir_backend_kind_name(c->backend));
    } else if (st->op == HIR_OP_WAIT) {
        const hir_comm *c = st->u.wait.target;
        snprintf(buf, n, "Wait %lld%s", (long long)st->u.wait.number,
                 c && c->op == HIR_OP_P2P ? (c->is_send ? " (send)" : " (recv)") : "");
    } else if (st->out) {
        snprintf(buf, n, "%s T%lld", kw, (long long)st->out->number);
    } else {
        snprintf(buf, n, "%s", kw);
    }
}

int hir_trace_begin(hir_trace *t, hir_stream *s, const hir_stmt *st)
{
    if (!t || !t->armed) return -1;
    if (t->nrec == t->cap_rec) {
        int cap = t->cap_rec ? 2 * t->cap_rec : 1024;
        trace_rec *v = realloc(t->rec, (size_t)cap * sizeof *v);
        if (!v) return -1;
        t->rec = v;
        t->cap_rec = cap;
    }
    int k = t->nrec++;
    trace_rec *r = &t->rec[k];
    memset(r, 0, sizeof *r);
    stmt_name(st, r->name, sizeof r->name);
    snprintf(r->cat, sizeof r->cat, "%s", hir_trace_category(st));
    r->line = -1;
    if (st->loc.src) {
        int line = 0, col = 0;
        hir_source_linecol((hir_source *)st->loc.src, st->loc.begin, &line, &col);
        r->line = line;
    }
    r->index = t->index;
    r->track = s ? track_of(t, s) : 0;
    r->ev0 = record_on(t, r->track);
    r->ev1 = -1;
    r->h0 = (now_s() - t->t0) * 1e6;
    return k;
}

void hir_trace_end(hir_trace *t, int token)
{
    if (!t || !t->armed || token < 0 || token >= t->nrec) return;
    trace_rec *r = &t->rec[token];
    if (r->ev0 >= 0) r->ev1 = record_on(t, r->track);
    r->h1 = (now_s() - t->t0) * 1e6;
}

int hir_trace_disarm(hir_trace *t, hir_diag *e)
{
    if (!t->armed) return 0;
    t->armed = 0;
    hir_backend *be = t->be;
    for (int i = 0; i < t->nrec; i++) {
        trace_rec *r = &t->rec[i];
        if (r->ev0 < 0 || r->ev1 < 0) continue;
        double a, b;
        if (be->ops->event_elapsed_ms(be, t->base, t->ev[r->ev0], &a, e) < 0) return -1;
        if (be->ops->event_elapsed_ms(be, t->base, t->ev[r->ev1], &b, e) < 0) return -1;
        r->g0 = a * 1e3;
        r->g1 = b * 1e3;
        r->has_gpu = 1;
    }
    return 0;
}

/* ---------------------------------------------------------------- merge and write */

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        if ((unsigned char)*s >= 0x20) fputc(*s, f);
    }
    fputc('"', f);
}

static void write_rank(FILE *f, int rank, const trace_rec *rec, int n, const trace_track *tr,
                       int ntr, const char *backend, int *first)
{
    /* tid 0 = host, tid k = track k (stream) */
    fprintf(f, "%s\n{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":"
               "\"rank %d (%s)\"}}", *first ? "" : ",", rank, rank, backend);
    *first = 0;
    fprintf(f, ",\n{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_sort_index\",\"args\":"
               "{\"sort_index\":%d}}", rank, rank);
    fprintf(f, ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"name\":\"thread_name\",\"args\":"
               "{\"name\":\"host\"}}", rank);
    for (int k = 0; k < ntr; k++) {
        fprintf(f, ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_name\",\"args\":"
                   "{\"name\":", rank, k + 1);
        json_str(f, tr[k].name);
        fprintf(f, "}}");
        fprintf(f, ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_sort_index\","
                   "\"args\":{\"sort_index\":%d}}", rank, k + 1, k + 1);
    }
    for (int i = 0; i < n; i++) {
        const trace_rec *r = &rec[i];
        for (int dev = 0; dev < 2; dev++) {
            if (dev && !r->has_gpu) continue;
            double a = dev ? r->g0 : r->h0, b = dev ? r->g1 : r->h1;
            if (b < a) b = a;
            fprintf(f, ",\n{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,"
                       "\"name\":", rank, dev ? r->track : 0, a, b - a);
            json_str(f, r->name);
            fprintf(f, ",\"cat\":");
            json_str(f, dev ? r->cat : "host");
            fprintf(f, ",\"args\":{\"line\":%d", r->line);
            if (r->index >= 0) fprintf(f, ",\"i\":%lld", (long long)r->index);
            if (!dev && r->track > 0)
                fprintf(f, ",\"stream\":\"%s\",\"device_cat\":\"%s\"",
                        r->track <= ntr ? tr[r->track - 1].name : "?", r->cat);
            fprintf(f, "}}");
        }
    }
}

/* Rank 0 takes each peer's records in turn; hir_boot_exchange moves equal byte counts both
 * ways, so rank 0 sends a scratch buffer of the peer's size. */
static int pull(hir_boot *b, int peer, int tag, const void *mine, size_t bytes, void **theirs,
                hir_diag *e)
{
    void *scratch = NULL;
    *theirs = malloc(bytes ? bytes : 1);
    if (!*theirs) return hir_fail(e, "trace: out of memory");
    if (!mine) {
        scratch = calloc(1, bytes ? bytes : 1);
        if (!scratch) return free(*theirs), hir_fail(e, "trace: out of memory");
        mine = scratch;
    }
    int rc = hir_boot_exchange(b, peer, tag, mine, *theirs, bytes, e);
    free(scratch);
    if (rc < 0) free(*theirs), *theirs = NULL;
    return rc;
}

int hir_trace_write(hir_trace *t, const char *path, hir_diag *e)
{
    hir_boot *b = t->boot;
    int rank = b ? hir_boot_rank(b) : 0, size = b ? hir_boot_size(b) : 1;
    const char *backend = t->be->ops->name;
    enum { TAG = 7301 };
    if (rank != 0) {
        int64_t cnt[2] = {t->nrec, t->ntracks}, dummy[2];
        if (hir_boot_exchange(b, 0, TAG, cnt, dummy, sizeof cnt, e) < 0) return -1;
        void *junk;
        if (pull(b, 0, TAG + 1, t->rec, (size_t)t->nrec * sizeof(trace_rec), &junk, e) < 0)
            return -1;
        free(junk);
        if (pull(b, 0, TAG + 2, t->track, (size_t)t->ntracks * sizeof(trace_track), &junk,
                 e) < 0)
            return -1;
        free(junk);
        return 0;
    }
    FILE *f = hir_fopen_write(path);
    if (!f) return hir_fail(e, "trace: cannot write %s: %s", path, hir_open_strerror(errno));
    int first = 1, rc = 0;
    fprintf(f, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"tool\":\"hir-run --trace\","
               "\"ranks\":%d,\"backend\":\"%s\"},\"traceEvents\":[", size, backend);
    write_rank(f, 0, t->rec, t->nrec, t->track, t->ntracks, backend, &first);
    for (int p = 1; p < size && rc == 0; p++) {
        int64_t zero[2] = {0, 0}, cnt[2];
        void *rec = NULL, *trk = NULL;
        if (hir_boot_exchange(b, p, TAG, zero, cnt, sizeof cnt, e) < 0 ||
            pull(b, p, TAG + 1, NULL, (size_t)cnt[0] * sizeof(trace_rec), &rec, e) < 0 ||
            pull(b, p, TAG + 2, NULL, (size_t)cnt[1] * sizeof(trace_track), &trk, e) < 0) {
            rc = -1;
        } else {
            write_rank(f, p, rec, (int)cnt[0], trk, (int)cnt[1], backend, &first);
        }
        free(rec);
        free(trk);
    }
    fprintf(f, "\n]}\n");
    if (fclose(f) != 0 && rc == 0) rc = hir_fail(e, "trace: error writing %s", path);
    return rc;
}
