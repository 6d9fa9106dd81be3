/* messages.c — the wording the phases of a job share: a refusal, prefixed with the rank, and
 * the name of a program input or output as files and messages spell it. It calls nothing of
 * the other files, so the phases depend on it and it on none of them. */
#include <inttypes.h>
#include <stdio.h>

#include "runner/job/job_internal.h"

hir_run_status job_refuse(hir_diag *e, int rank, const char *fmt, const char *a,
                          const char *b)
{
    char msg[900];
    snprintf(msg, sizeof msg, fmt, a, b);
    hir_fail(e, "rank %d: %s", rank, msg);
    return HIR_RUN_REFUSED;
}

const char *job_value_name(const hir_value *v, char *buf, size_t n)
{
    const hir_tensor *t = hir_value_tensor((hir_value *)v);
    const hir_scalar *s = hir_value_scalar((hir_value *)v);
    if (t)
        snprintf(buf, n, "T%" PRId64, t->number);
    else if (s && s->kind == HIR_SC_SYMBOL)
        snprintf(buf, n, "%s%" PRId64, s->name, s->number);
    else if (s && s->kind == HIR_SC_NAMED)
        snprintf(buf, n, "%s", s->name);
    else
        snprintf(buf, n, "input");
    return buf;
}
