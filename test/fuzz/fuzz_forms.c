/* fuzz_forms.c — libFuzzer target for the front end around the parser: the input read as a log
 * (parser/log.c: every program found is parsed and verified, its diagnostics rendered with the
 * log's prefixes and line numbers), and a program that verifies converted to a generation of
 * nvFuser's printer (dialect/form.c, hir-opt --print-form): what a conversion prints must parse
 * and verify again. Crashes, leaks and UB are caught by the sanitizers of the build. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dialect/hir.h"
#include "parser/log.h"
#include "parser/parser.h"

#include "fuzz_util.h"

/* The programs of the input read as a log: parsed and verified, diagnostics rendered (with
 * the log's prefixes and line numbers) into a scratch stream. Nothing may crash or leak. */
static void read_as_log(const char *text, size_t size)
{
    hir_log log;
    if (hir_log_find(text, size, false, &log))
        return;
    for (int i = 0; i < log.n; i++) {
        if (!log.programs[i].text)
            continue;                    /* the input as it is: parsed below */
        hir_source src;
        hir_log_source(&log, i, "<log>", text, size, &src);
        hir_diag d;
        hir_diag_init(&d, NULL);
        hir_program *p = NULL;
        if (!hir_parse(&src, &d, &p)) {
            hir_verify_opts vo = {true, NULL, 0};
            hir_program_verify(p, &vo, &d);
        }
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
            abort();
        for (hir_diag_entry *e = d.first; e; e = e->next)
            hir_diag_print_entry(f, e);
        fclose(f);
        free(buf);
        hir_program_free(p);
        hir_diag_fini(&d);
        hir_source_fini(&src);
    }
    hir_log_fini(&log);
}

/* A verified program converted to generation `form`: when the conversion succeeds, its print
 * must parse and verify again. Takes p. */
static void convert(hir_program *p, hir_form form)
{
    hir_diag d;
    hir_diag_init(&d, NULL);
    int bad = hir_program_convert_form(p, form, &d);
    char *out = NULL;
    size_t n = 0;
    if (!bad) {
        FILE *f = open_memstream(&out, &n);
        if (!f)
            abort();
        hir_program_print(p, f);
        fclose(f);
    }
    hir_program_free(p);
    hir_diag_fini(&d);
    if (bad)
        return;
    char *again = malloc(n + 2);
    if (!again)
        abort();
    memcpy(again, out, n);
    again[n] = again[n + 1] = 0;
    char *p2 = NULL;
    size_t n2 = 0;
    hir_diag_init(&d, stderr);
    if (fuzz_parse_print("<converted>", again, n, &d, &p2, &n2, NULL))
        fuzz_report("fuzz_forms", "the converted program does not parse or verify again", &d,
                    out, n, NULL, 0);
    hir_diag_fini(&d);
    free(again);
    free(out);
    free(p2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 2);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = text[size + 1] = 0;
    read_as_log(text, size);
    hir_diag d;
    hir_diag_init(&d, NULL);
    char *p1 = NULL;
    size_t n1 = 0;
    hir_program *p = NULL;
    int rc = fuzz_parse_print("<fuzz>", text, size, &d, &p1, &n1, &p);
    hir_diag_fini(&d);
    if (!rc) {
        /* one generation per input (the other for inputs of the other parity) */
        convert(p, size & 1 ? HIR_FORM_2025 : HIR_FORM_2026);
    }
    free(text);               /* after the program read from it */
    free(p1);
    return 0;
}
