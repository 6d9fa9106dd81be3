/* opts.c — strict numeric option values for the tools (opts.h). */
#include "tools/opts.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int hir_opt_int(const char *s, long long lo, long long hi, long long *out, char *err,
                size_t errlen)
{
    const char *d = s[0] == '-' ? s + 1 : s;
    char *end;
    errno = 0;
    long long x = isdigit((unsigned char)*d) ? strtoll(s, &end, 10) : 0;
    if (!isdigit((unsigned char)*d) || *end || errno || x < lo || x > hi) {
        snprintf(err, errlen, "an integer in %lld..%lld", lo, hi);
        return -1;
    }
    *out = x;
    return 0;
}

int hir_opt_double(const char *s, double lo, double hi, double *out, char *err, size_t errlen)
{
    const char *d = s[0] == '-' || s[0] == '+' ? s + 1 : s;
    char *end;
    errno = 0;
    /* a digit or a '.' first: no "nan", "inf", "infinity"; no "0x..." hex floats either */
    int ok = isdigit((unsigned char)*d) || (*d == '.' && isdigit((unsigned char)d[1]));
    ok = ok && !(d[0] == '0' && (d[1] == 'x' || d[1] == 'X'));
    double x = ok ? strtod(s, &end) : 0;
    if (!ok || *end || errno == ERANGE || !isfinite(x) || !(x > lo) || x > hi) {
        snprintf(err, errlen, "a number greater than %g and at most %g", lo, hi);
        return -1;
    }
    *out = x;
    return 0;
}
