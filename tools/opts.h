/* opts.h — strict parsing of the tools' numeric command-line values (hir-run, hir-gen): the
 * whole text must be one number inside the option's range, so `--iters=4294967297` or
 * `--timeout=nan` is a usage error instead of a silently truncated or disabled setting. */
#ifndef HIR_TOOLS_OPTS_H
#define HIR_TOOLS_OPTS_H

#include <stddef.h>

/* A decimal integer in lo..hi (no sign other than a leading '-', no spaces, no suffix).
 * 0, or -1 with why the text was refused in err ("an integer in 1..2147483647"). */
int hir_opt_int(const char *s, long long lo, long long hi, long long *out, char *err,
                size_t errlen);
/* A finite decimal number with lo < x <= hi (NaN, infinities and hex floats refused). */
int hir_opt_double(const char *s, double lo, double hi, double *out, char *err, size_t errlen);

#endif
