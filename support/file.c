/* file.c — opening an output file without waiting on a FIFO that nobody reads (support.h). */
#define _GNU_SOURCE
#include "support/support.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

FILE *hir_fopen_write(const char *path)
{
    /* O_NONBLOCK: opening a FIFO for writing fails at once (ENXIO) when no process has it open
     * for reading, where a plain open waits for one without end; a regular file or a device
     * does not care. Writes are blocking again once it is open. */
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_CLOEXEC, 0666);
    if (fd < 0)
        return NULL;
    int fl = fcntl(fd, F_GETFL);
    FILE *f = fl >= 0 && fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        int saved = errno;
        close(fd);
        errno = saved;
    }
    return f;
}

const char *hir_open_strerror(int err)
{
    return err == ENXIO ? "no process reads it (a FIFO without a reader)" : strerror(err);
}
