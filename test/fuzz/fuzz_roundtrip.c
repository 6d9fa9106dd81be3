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

#include "fuzz_util.h"

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
    int rc = fuzz_parse_print("<fuzz>", text, size, &d, &p1, &n1, NULL);
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
    if (fuzz_parse_print("<first print>", again, n1, &d, &p2, &n2, NULL))
        fuzz_report("fuzz_roundtrip", "the printed program does not parse or verify again", &d,
                    p1, n1, NULL, 0);
    if (n1 != n2 || memcmp(p1, p2, n1))
        fuzz_report("fuzz_roundtrip", "printing is not a fixed point", &d, p1, n1, p2, n2);
    hir_diag_fini(&d);
    free(again);
    free(p1);
    free(p2);
    return 0;
}
