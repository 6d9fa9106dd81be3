/* fuzz_roundtrip.c — libFuzzer target for the text format: parse -> verify -> print ->
 * re-parse -> verify -> print, aborting when the two printed texts differ or when text the
 * printer wrote is refused. Crashes, leaks and UB are caught by the sanitizers of the build
 * (-DHIR_FUZZ=ON compiles every library with -fsanitize=fuzzer-no-link,address,undefined). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dialect/hir.h"
#include "parser/parser.h"

/* Diagnostics of the fuzzed input are expected and not printed; those of the printer's own
 * output are bugs and printed before aborting. */
static void report(const char *what, hir_diag *d, const char *a, size_t alen, const char *b,
                   size_t blen)
{
    fprintf(stderr, "fuzz_roundtrip: %s\n", what);
    d->out = stderr;
    hir_diag_flush(d);
    if (a)
        fprintf(stderr, "---- first print (%zu bytes) ----\n%.*s", alen, (int)alen, a);
    if (b)
        fprintf(stderr, "---- second print (%zu bytes) ----\n%.*s", blen, (int)blen, b);
    abort();
}

/* Parses and verifies text (NUL-padded as hir_parse wants); on success prints the program
 * into a malloc'd string. Returns 0 on success, -1 on a parse or verify failure. */
static int parse_print(const char *name, char *text, size_t len, hir_diag *d, char **out,
                       size_t *outlen)
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
    if (p)
        hir_program_free(p);
    /* Diagnostics point into src: print them (if asked) before it goes away. */
    if (rc && d->out)
        hir_diag_flush(d);
    hir_source_fini(&src);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 2);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = text[size + 1] = 0;

    hir_diag d;
    hir_diag_init(&d, NULL);
    char *p1 = NULL, *p2 = NULL;
    size_t n1 = 0, n2 = 0;
    int rc = parse_print("<fuzz>", text, size, &d, &p1, &n1);
    hir_diag_fini(&d);
    free(text);
    if (rc)
        return 0;                       /* refused input: fine, as long as nothing broke */

    /* The printer's output must be accepted and must print back to itself. */
    char *again = malloc(n1 + 2);
    if (!again)
        abort();
    memcpy(again, p1, n1);
    again[n1] = again[n1 + 1] = 0;
    hir_diag_init(&d, stderr);
    if (parse_print("<first print>", again, n1, &d, &p2, &n2))
        report("the printed program does not parse or verify again", &d, p1, n1, NULL, 0);
    if (n1 != n2 || memcmp(p1, p2, n1))
        report("printing is not a fixed point", &d, p1, n1, p2, n2);
    hir_diag_fini(&d);
    free(again);
    free(p1);
    free(p2);
    return 0;
}
