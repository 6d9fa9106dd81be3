/* error.c — the one way library code reports failure: a formatted one-line message in the
 * caller's hir_error, and -1 returned so call sites can write `return hir_error_set(...)`. */
#include <stdio.h>
#include <string.h>

#include "support/error.h"

int hir_error_vset(hir_error *e, const char *fmt, va_list ap)
{
    if (!e)
        return -1;
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    /* Messages are one line by contract; a stray newline from a library string would break
     * the "rank N: file:line: message" prefix the interpreter adds. */
    for (char *p = e->msg; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    return -1;
}

int hir_error_set(hir_error *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hir_error_vset(e, fmt, ap);
    va_end(ap);
    if (e)
        e->peer = -1;
    return -1;
}
