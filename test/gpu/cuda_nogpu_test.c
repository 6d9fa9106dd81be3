/* cuda_nogpu_test.c — ctest for CPU-only machines: with no GPU visible, hir_cuda_available()
 * is 0 and hir_backend_cuda_create fails with a message instead of crashing. Skips (exit 77)
 * when a GPU is visible. Plain C, no CMocka. */
#include <stdio.h>
#include <string.h>

#include "runner/cuda/cuda_backend.h"

int main(void)
{
    if (hir_cuda_available()) {
        printf("SKIP: a GPU is visible\n");
        return 77;
    }
    hir_backend_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.size = 1;
    cfg.timeout = 5;
    hir_backend *be = NULL;
    hir_diag e = {0};
    memset(&e, 0, sizeof e);
    int rc = hir_backend_cuda_create(&cfg, &be, &e);
    if (rc != -1 || be != NULL || !strstr(hir_diag_last_error(&e), "no GPU")) {
        printf("FAIL: create returned %d, message \"%s\"\n", rc, hir_diag_last_error(&e));
        return 1;
    }
    printf("PASS: %s\n", hir_diag_last_error(&e));
    hir_diag_fini(&e);
    return 0;
}
