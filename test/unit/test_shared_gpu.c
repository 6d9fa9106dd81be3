/* test_shared_gpu.c — ranks sharing one GPU (runner/job/shared_gpu.c): the note of ranks
 * time-sliced without MPS is due exactly when more than one rank shares a GPU and no MPS
 * daemon was found; hir_mps_detect finds a daemon only where one listens on
 * CUDA_MPS_PIPE_DIRECTORY/control (a listening socket made here stands for it), not where the
 * directory is empty, nor where a socket file is left with nobody listening. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner/job/job.h"

static void test_note_decision(void **state)
{
    (void)state;
    char buf[600];
    assert_null(hir_shared_gpu_note(0, 0, buf, sizeof buf));   /* no GPU */
    assert_null(hir_shared_gpu_note(1, 0, buf, sizeof buf));   /* one rank a GPU */
    assert_null(hir_shared_gpu_note(1, 1, buf, sizeof buf));
    assert_null(hir_shared_gpu_note(4, 1, buf, sizeof buf));   /* MPS runs them side by side */
    assert_null(hir_shared_gpu_note(4, 0, buf, 0));
    assert_ptr_equal(hir_shared_gpu_note(4, 0, buf, sizeof buf), buf);
    assert_non_null(strstr(buf, "4 ranks share each GPU"));
    assert_non_null(strstr(buf, "not those of 4 GPUs"));
    assert_non_null(strstr(buf, "nvidia-cuda-mps-control -d"));
    assert_ptr_equal(hir_shared_gpu_note(2, 0, buf, 16), buf);   /* cut, still terminated */
    assert_int_equal(strlen(buf), 15);
}

/* a UNIX socket bound at DIR/control, listening or not; its descriptor */
static int bind_control(const char *dir, int listening)
{
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof a.sun_path, "%s/control", dir);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    if (listening)
        assert_int_equal(listen(fd, 4), 0);
    return fd;
}

static void test_detect(void **state)
{
    (void)state;
    char dir[] = "/tmp/hir-mps-test.XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/control", dir);
    setenv("CUDA_MPS_PIPE_DIRECTORY", dir, 1);
    assert_int_equal(hir_mps_detect(), 0);                 /* empty directory */
    int fd = bind_control(dir, 1);
    assert_int_equal(hir_mps_detect(), 1);                 /* a daemon listens */
    assert_int_equal(hir_mps_detect(), 1);                 /* and again: nothing consumed */
    close(fd);
    assert_int_equal(hir_mps_detect(), 0);                 /* the file left behind, nobody */
    unlink(path);
    fd = bind_control(dir, 0);
    assert_int_equal(hir_mps_detect(), 0);                 /* bound, not listening */
    close(fd);
    unlink(path);
    FILE *f = fopen(path, "w");                            /* a plain file of that name */
    assert_non_null(f);
    fclose(f);
    assert_int_equal(hir_mps_detect(), 0);
    unlink(path);
    char longdir[200];                                     /* past sun_path: no socket there */
    memset(longdir, 'x', sizeof longdir - 1);
    longdir[0] = '/';
    longdir[sizeof longdir - 1] = 0;
    setenv("CUDA_MPS_PIPE_DIRECTORY", longdir, 1);
    assert_int_equal(hir_mps_detect(), 0);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_note_decision),
        cmocka_unit_test(test_detect),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
