/* test_launch.c — hir_launch_local end to end: the parent re-executes itself under the
 * system's mpirun with -np stripped; children check the world they see and exit with the
 * status the parent asked for, which must come back through the launcher. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner/boot/boot.h"

/* hir_boot_threads: the node's processors divided among its local ranks, clamped to [1, max] */
static int threads_ok(const hir_boot *b, int local)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    long share = (ncpu > 0 ? ncpu : 1) / local;
    int want = share < 1 ? 1 : share > 1000 ? 1000 : (int)share;
    if (hir_boot_threads(b, 1000) != want || hir_boot_threads(b, 1) != 1) {
        fprintf(stderr, "launch: hir_boot_threads with %d local ranks: %d (want %d), max 1: %d\n",
                local, hir_boot_threads(b, 1000), want, hir_boot_threads(b, 1));
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    hir_diag e = {0};
    int code = 0;
    int want_exit = 0;
    for (int i = 1; i < argc; i++)
        if (!strncmp(argv[i], "--exit=", 7))
            want_exit = atoi(argv[i] + 7);

    if (!hir_launch_is_child()) {
        if (!threads_ok(NULL, 1))   /* no world: one rank */
            return 1;
        /* parent: one clean run and one whose ranks fail with status 7 */
        char *args[] = {argv[0], "-np", "2", "--check", NULL};
        int rc = hir_launch_local(2, 4, args, &code, &e);
        if (rc != 0 || code != 0) {
            fprintf(stderr, "launch: rc %d exit %d: %s\n", rc, code, rc ? hir_diag_last_error(&e) : "");
            return 1;
        }
        char *args2[] = {argv[0], "--exit=7", "-np=2", NULL};
        rc = hir_launch_local(2, 3, args2, &code, &e);
        if (rc != 0 || code != 7) {
            fprintf(stderr, "launch: expected exit 7, got rc %d exit %d\n", rc, code);
            return 1;
        }
        if (hir_launch_local(1, 3, args2, &code, &e) != 1) {
            fprintf(stderr, "launch: -np 1 should run in-process\n");
            return 1;
        }
        printf("test_launch: ok\n");
        return 0;
    }
    /* child: -np and its value must be gone, the world must have two ranks */
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-np") || !strncmp(argv[i], "-np=", 4) || !strcmp(argv[i], "2"))
            return 2;
    if (!getenv(HIR_LAUNCH_MARKER))
        return 3;
    hir_boot *b;
    if (hir_boot_init(&argc, &argv, 10, &b, &e)) {
        fprintf(stderr, "%s\n", hir_diag_last_error(&e));
        return 4;
    }
    int ok = hir_boot_size(b) == 2 && hir_boot_barrier(b, &e) == 0 &&
             threads_ok(b, hir_boot_local_size(b));
    hir_boot_fini(b);
    hir_diag_fini(&e);
    return ok ? want_exit : 5;
}
