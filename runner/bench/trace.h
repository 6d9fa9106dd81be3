/* trace.h — Chrome/Perfetto trace of one run of a program (`hir-run --trace=FILE.json`).
 * Part of the bench room (bench.h), whose statement hook brackets every statement the
 * interpreter executes with hir_trace_begin/hir_trace_end;
 * device statements get a pair of backend events on the stream they were queued on, resolved
 * after the run's synchronize, so each (rank, stream) becomes one track and overlap between
 * copies, GEMMs and communication shows. Rank 0 gathers every rank's records over the
 * bootstrap and writes one JSON file (open it in ui.perfetto.dev or chrome://tracing). */
#ifndef HIR_RUNNER_TRACE_H
#define HIR_RUNNER_TRACE_H

#include <stdint.h>

#include "dialect/hir.h"
#include "runner/backend/backend.h"

typedef struct hir_trace hir_trace;

int  hir_trace_create(hir_backend *be, hir_boot *boot, hir_trace **out, hir_diag *e);
void hir_trace_destroy(hir_trace *t);

/* Start recording a run (after a barrier, so rank clocks line up): earlier records are
 * dropped, a base event is recorded on the main stream. Until armed, begin/end cost nothing. */
int  hir_trace_arm(hir_trace *t, hir_diag *e);
/* Stop recording; call after the backend's synchronize. Resolves every event pair into
 * microseconds since the base event. */
int  hir_trace_disarm(hir_trace *t, hir_diag *e);

/* Bracket one statement. s is the stream its device work is queued on, or NULL for a statement
 * that only runs on the host (views, control flow, scalars). Returns a token for
 * hir_trace_end (negative when not recording; end ignores it). Never fails the run: an event
 * that cannot be recorded makes the record host-only. */
int  hir_trace_begin(hir_trace *t, hir_stream *s, const hir_stmt *st);
void hir_trace_end(hir_trace *t, int token);
/* Give a stream its track name ("stream 2"); unnamed streams are numbered by first use. */
void hir_trace_name_stream(hir_trace *t, hir_stream *s, const char *name);
/* Label the records that follow with a loop index (shown as "i" in the args), -1 to clear. */
void hir_trace_set_index(hir_trace *t, int64_t index);

/* Collective over all ranks: rank 0 writes the merged trace to path. */
int  hir_trace_write(hir_trace *t, const char *path, hir_diag *e);

/* The category of a statement in the trace ("gemm", "copy", "nccl", "ipc", "wait", ...). */
const char *hir_trace_category(const hir_stmt *st);

static inline int hir_trace_on(const hir_trace *t) { return t != NULL; }

#endif
