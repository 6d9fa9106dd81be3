/* file.c — output files: opening one without waiting on a FIFO that nobody reads, and writing
 * one whole through a temporary file that keeps the target's mode and owner (support.h). */
#define _GNU_SOURCE
#include "support/support.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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

/* The target of path: a copy of it, or where its symbolic links lead. NULL with errno. */
static char *resolve_target(const char *path)
{
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
        return realpath(path, NULL);     /* ENOENT for a link whose target does not exist */
    char *s = strdup(path);
    if (!s)
        errno = ENOMEM;
    return s;
}

/* Opens r->tmp, "TARGET.tmpXXXXXX" with six letters or digits no other file has, O_EXCL with
 * mode 0666 so that the umask applies as for a new file (mkstemp would make it 0600). */
static int open_unique(hir_replace *r)
{
    static const char abc[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    size_t n = strlen(r->target);
    r->tmp = malloc(n + 16);
    if (!r->tmp) {
        errno = ENOMEM;
        return -1;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t h = hir_fnv1a(&ts, sizeof ts, HIR_FNV1A_INIT);
    pid_t pid = getpid();
    h = hir_fnv1a(&pid, sizeof pid, h);
    h = hir_fnv1a(&r, sizeof r, h);
    for (int tries = 0; tries < 100; tries++) {
        h = hir_fnv1a(&tries, sizeof tries, h);
        char sfx[7];
        uint64_t x = h;
        for (int i = 0; i < 6; i++, x /= 62)
            sfx[i] = abc[x % 62];
        sfx[6] = 0;
        snprintf(r->tmp, n + 16, "%s.tmp%s", r->target, sfx);
        r->fd = open(r->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (r->fd >= 0 || errno != EEXIST)
            break;
    }
    if (r->fd < 0) {
        int saved = errno;
        free(r->tmp);
        r->tmp = NULL;
        errno = saved;
        return -1;
    }
    return 0;
}

int hir_replace_open(hir_replace *r, const char *path, char *err, size_t errlen)
{
    r->fd = -1;
    r->tmp = NULL;
    r->target = resolve_target(path);
    struct stat st;
    int have = r->target && stat(r->target, &st) == 0;
    if (!r->target || open_unique(r)) {
        int saved = errno;
        snprintf(err, errlen, "%s", saved == ENOMEM ? "out of memory" : strerror(saved));
        hir_replace_abort(r);
        errno = saved;
        return -1;
    }
    if (!have)
        return 0;
    /* the owner first: chown may clear the set-user-ID and set-group-ID bits fchmod then sets */
    if ((st.st_uid != geteuid() || st.st_gid != getegid()) &&
        fchown(r->fd, st.st_uid, st.st_gid)) {
        int saved = errno;
        snprintf(err, errlen, "it belongs to user %u, group %u, which its replacement could not "
                 "keep (%s); nothing was written", (unsigned)st.st_uid, (unsigned)st.st_gid,
                 strerror(saved));
        hir_replace_abort(r);
        errno = saved;
        return -1;
    }
    if (fchmod(r->fd, st.st_mode & 07777)) {
        int saved = errno;
        snprintf(err, errlen, "%s", strerror(saved));
        hir_replace_abort(r);
        errno = saved;
        return -1;
    }
    return 0;
}

int hir_replace_commit(hir_replace *r, char *err, size_t errlen)
{
    int rc = 0;
    if (r->fd >= 0 && close(r->fd))
        rc = -1;
    r->fd = -1;
    if (!rc && rename(r->tmp, r->target))
        rc = -1;
    int saved = errno;
    if (rc)
        snprintf(err, errlen, "%s", strerror(saved));
    else {
        free(r->tmp);              /* renamed: nothing to remove */
        r->tmp = NULL;
    }
    hir_replace_abort(r);
    errno = saved;
    return rc;
}

void hir_replace_abort(hir_replace *r)
{
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
    if (r->tmp)
        unlink(r->tmp);
    free(r->tmp);
    free(r->target);
    r->tmp = r->target = NULL;
}
