/* panic.c — the one way hir stops on a broken invariant: report file, line and the failed
 * condition on stderr and abort. User mistakes never get here; they become diagnostics. */
#include "support/support.h"

#include <stdio.h>
#include <stdlib.h>

_Noreturn void hir_panic(const char *file, int line, const char *what)
{
    fprintf(stderr, "%s:%d: internal error: %s\n", file, line, what);
    fflush(stderr);
    abort();
}
