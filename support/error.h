/* error.h — the status message of a failed call: library code writes a one-line message into
 * the caller's hir_error and returns -1, so call sites can write `return hir_error_set(...)`.
 * The runner's rooms and backends use it; the tools and the job report it. */
#ifndef HIR_SUPPORT_ERROR_H
#define HIR_SUPPORT_ERROR_H

#include <stdarg.h>

/* Every fallible call returns 0 on success and -1 on failure, having written a one-line
 * message (no trailing newline) into the hir_error it was given. Messages name the failing
 * call (cudaMemcpyAsync, ncclGroupEnd, MPI_Wait...) and its error string; the interpreter
 * prefixes rank and statement location. */
typedef struct hir_error {
    char msg[1024];
    int peer;            /* for waits that timed out: the peer waited for, else -1 */
} hir_error;

int hir_error_set(hir_error *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int hir_error_vset(hir_error *e, const char *fmt, va_list ap);

#endif
