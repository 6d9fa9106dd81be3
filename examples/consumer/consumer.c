/* consumer.c — a program that uses hir through its installed C API only (<hir/hir.h>), built
 * against an installed tree by pkg-config (Makefile) and by find_package (CMakeLists.txt).
 *
 *   consumer PROGRAM.hir PIPELINE
 *
 * parses PROGRAM.hir, runs PIPELINE on it and prints the result to stdout; then shows a
 * located diagnostic for a broken program; then runs a small matmul on one rank (CPU
 * backend) and checks its numbers. Exits 0 when everything worked, 1 otherwise. */
#include <hir/hir.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static void show(const hirc_diagnostics *d)
{
    for (size_t i = 0; i < hirc_diagnostics_count(d); i++) {
        hirc_diagnostic x;
        if (hirc_diagnostics_get(d, i, &x) == HIRC_OK && x.severity != HIRC_NOTE)
            fputs(x.rendered, stderr);
    }
}

static int transform(const char *path, const char *pipeline, hirc_diagnostics *d)
{
    hirc_program *p = NULL;
    char *text = NULL;
    size_t len = 0;
    hirc_status st = hirc_parse_file(path, d, &p);
    if (st == HIRC_OK)
        st = hirc_verify(p, d);
    if (st == HIRC_OK)
        st = hirc_run_pipeline(p, pipeline, d);
    if (st == HIRC_OK)
        st = hirc_print(p, &text, &len);
    if (st == HIRC_OK)
        fwrite(text, 1, len, stdout);
    else
        fprintf(stderr, "consumer: %s: %s\n", path, hirc_status_string(st));
    show(d);
    hirc_free(text);
    hirc_program_destroy(p);
    return st == HIRC_OK ? 0 : 1;
}

/* A parse error comes back as a diagnostic with file, line and column. */
static int diagnose(hirc_diagnostics *d)
{
    static const char bad[] = "%HostIrContainer { (T0_g_float[iS0{2}]) -> (T1_g_float[iS1{2}]) :\n"
                              "  T1_g_float[iS1{2}] = Bogus( T0_g_float[iS0{2}] )\n"
                              "} // %HostIrContainer\n";
    hirc_program *p = NULL;
    hirc_diagnostics_clear(d);
    hirc_status st = hirc_parse_string(bad, strlen(bad), "bad.hir", d, &p);
    hirc_diagnostic x;
    if (st != HIRC_ERR_PARSE || p || hirc_diagnostics_error_count(d) == 0 ||
        hirc_diagnostics_get(d, 0, &x) != HIRC_OK || x.line != 2 || strcmp(x.file, "bad.hir")) {
        fprintf(stderr, "consumer: the broken program was not reported at bad.hir:2\n");
        hirc_program_destroy(p);
        return 1;
    }
    fprintf(stderr, "consumer: expected diagnostic: %s:%d:%d: %s\n", x.file, x.line, x.column,
            x.message);
    return 0;
}

/* T2[m, n] = T0[m, k] x T1[k, n] with m = 2, k = 3, n = 2, checked against a loop. */
static int run_matmul(hirc_diagnostics *d)
{
    static const char prog[] =
        "%HostIrContainer { (T0_g_float[iS0{2}, iS1{3}] (DeviceMesh{0}), "
        "T1_g_float[iS2{3}, iS3{2}] (DeviceMesh{0})) -> "
        "(T2_g_float[iS4{2}, iS5{2}, rS6{3}] (DeviceMesh{0})) :\n"
        "  T2_g_float[iS4{2}, iS5{2}, rS6{3}] (DeviceMesh{0})\n"
        "     = matmul(T0_g_float[iS0{2}, iS1{3}] (DeviceMesh{0}),\n"
        "              T1_g_float[iS2{3}, iS3{2}] (DeviceMesh{0}))\n"
        "} // %HostIrContainer\n";
    float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {7, 8, 9, 10, 11, 12}, c[4] = {0};
    hirc_tensor in[2] = {{a, HIRC_FLOAT32, 2, {2, 3}}, {b, HIRC_FLOAT32, 2, {3, 2}}};
    hirc_tensor out[1] = {{c, HIRC_FLOAT32, 2, {2, 2}}};
    hirc_program *p = NULL;
    hirc_diagnostics_clear(d);
    hirc_status st = hirc_parse_string(prog, strlen(prog), "matmul.hir", d, &p);
    if (st == HIRC_OK)
        st = hirc_run(p, in, 2, out, 1, NULL, d);
    show(d);
    hirc_program_destroy(p);
    if (st != HIRC_OK) {
        fprintf(stderr, "consumer: running matmul.hir: %s\n", hirc_status_string(st));
        return 1;
    }
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            float want = 0;
            for (int k = 0; k < 3; k++)
                want += a[i * 3 + k] * b[k * 2 + j];
            if (fabsf(c[i * 2 + j] - want) > 1e-5f) {
                fprintf(stderr, "consumer: C[%d][%d] = %g, want %g\n", i, j, c[i * 2 + j], want);
                return 1;
            }
        }
    fprintf(stderr, "consumer: matmul on one rank: [[%g, %g], [%g, %g]] (correct)\n", c[0], c[1],
            c[2], c[3]);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: consumer PROGRAM.hir PIPELINE\n");
        return 2;
    }
    hirc_diagnostics *d = NULL;
    if (hirc_diagnostics_create(&d) != HIRC_OK)
        return 1;
    fprintf(stderr, "consumer: hir %s\n", hirc_version());
    int rc = transform(argv[1], argv[2], d);
    rc |= diagnose(d);
    rc |= run_matmul(d);
    hirc_diagnostics_destroy(d);
    return rc;
}
