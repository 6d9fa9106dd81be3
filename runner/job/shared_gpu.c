/* shared_gpu.c — ranks sharing one GPU: whether the CUDA Multi-Process Service (MPS) is there
 * to run them side by side, and the note rank 0 prints when it is not (docs/runner.md, "Ranks
 * sharing one GPU").
 *
 * Without MPS the GPU time-slices the contexts of separate processes: a rank that spins on a
 * peer's semaphore keeps the GPU for its slice while the peer that would release it cannot
 * run, so d ranks on one GPU measure neither one GPU nor d of them. The CUDA driver API has no
 * query for MPS; the CUDA driver itself, when it initializes, connects to the control daemon's
 * socket `control` in CUDA_MPS_PIPE_DIRECTORY (default /tmp/nvidia-mps) and runs without MPS
 * when that fails. hir_mps_detect makes the same connection: a daemon that listens there
 * accepts it (the connection is closed at once; the daemon's control.log records an accepted
 * connection that sent no credentials); a socket file left by a daemon that is gone refuses
 * it; no file, no daemon. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "runner/job/job.h"

/* connect() to the UNIX socket at path with a socket of this type: 1 a listener took it (or
 * its queue is full), 0 not, -1 a socket of another type is bound there. Never blocks. */
static int connects(const char *path, int type)
{
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    memcpy(a.sun_path, path, strlen(path) + 1);       /* the caller checked the length */
    int fd = socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    int rc = connect(fd, (struct sockaddr *)&a, sizeof a);
    int err = errno;
    close(fd);
    if (rc == 0 || err == EAGAIN || err == EINPROGRESS)
        return 1;
    return err == EPROTOTYPE ? -1 : 0;
}

int hir_mps_detect(void)
{
    const char *dir = getenv("CUDA_MPS_PIPE_DIRECTORY");
    if (!dir || !*dir)
        dir = "/tmp/nvidia-mps";
    char path[sizeof ((struct sockaddr_un *)0)->sun_path];
    int n = snprintf(path, sizeof path, "%s/control", dir);
    if (n < 0 || (size_t)n >= sizeof path)
        return 0;                       /* no socket can be bound at such a path */
    int r = connects(path, SOCK_STREAM);
    if (r < 0)
        r = connects(path, SOCK_SEQPACKET);
    return r > 0;
}

const char *hir_shared_gpu_note(int ranks_per_device, int mps_detected, char *buf, size_t n)
{
    if (ranks_per_device <= 1 || mps_detected || !buf || n == 0)
        return NULL;
    snprintf(buf, n, "%d ranks share each GPU and no CUDA MPS daemon answers (in "
             "CUDA_MPS_PIPE_DIRECTORY, default /tmp/nvidia-mps): the GPU time-slices their "
             "contexts, and a rank waiting on a peer can hold it while the peer cannot run, so "
             "the timings are not those of %d GPUs; for ranks that run side by side start MPS "
             "first (`nvidia-cuda-mps-control -d`, stopped by `echo quit | "
             "nvidia-cuda-mps-control`; the bench scripts take MPS=1)",
             ranks_per_device, ranks_per_device);
    return buf;
}
