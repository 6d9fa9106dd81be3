/* panic.c — the one way hir stops on a broken invariant: report file, line and the failed
 * condition on stderr and abort. User mistakes never get here; they become diagnostics. */
#include "support/support.h"

#include "support/diag.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Formatted by the diagnostic engine into a buffer on the stack and written with one write(2):
 * no allocation, no stdio lock, one piece even when several threads fail at once. */
_Noreturn void hir_panic(const char *file, int line, const char *what)
{
    char where[256], buf[640];
    snprintf(where, sizeof where, "%s:%d", file, line);
    size_t n = hir_diag_format_line(buf, sizeof buf, where, HIR_INTERNAL, what);
    fflush(stderr);
    ssize_t w = write(2, buf, n);
    (void)w;
    abort();
}
