/* fuzz_util.c — see fuzz_util.h. */
#define _GNU_SOURCE
#include "fuzz_util.h"

#include <stdio.h>
#include <stdlib.h>

#include "parser/parser.h"

void fuzz_report(const char *target, const char *what, hir_diag *d, const char *a, size_t alen,
                 const char *b, size_t blen)
{
    fprintf(stderr, "%s: %s\n", target, what);
    d->out = stderr;
    hir_diag_flush(d);
    if (a)
        fprintf(stderr, "---- first print (%zu bytes) ----\n%.*s", alen, (int)alen, a);
    if (b)
        fprintf(stderr, "---- second print (%zu bytes) ----\n%.*s", blen, (int)blen, b);
    abort();
}

int fuzz_parse_print(const char *name, char *text, size_t len, hir_diag *d, char **out,
                     size_t *outlen, hir_program **keep)
{
    hir_source src;
    hir_source_init(&src, name, text, len);
    hir_program *p = NULL;
    int rc = hir_parse(&src, d, &p);
    if (!rc) {
        hir_verify_opts vo = {false};
        if (hir_program_verify(p, &vo, d) || d->errors)
            rc = -1;
    }
    if (!rc) {
        FILE *f = open_memstream(out, outlen);
        if (!f)
            abort();
        hir_program_print(p, f);
        fclose(f);
    }
    /* Diagnostics point into src: print them (if asked) before it goes away. */
    if (rc && d->out)
        hir_diag_flush(d);
    if (keep && !rc) {
        *keep = p;
        p = NULL;
    }
    if (p)
        hir_program_free(p);
    hir_source_fini(&src);
    return rc;
}
