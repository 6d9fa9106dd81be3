/* outfile.c — checked, all-or-nothing output for the tools (outfile.h). */
#include "tools/outfile.h"

#include "support/support.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int write_all(int fd, const char *buf, size_t len)
{
    while (len) {
        ssize_t k = write(fd, buf, len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (k == 0)
                errno = EIO;
            return -1;
        }
        buf += k;
        len -= (size_t)k;
    }
    return 0;
}

int hir_tool_write_output(const char *path, const char *buf, size_t len, char *err,
                          size_t errlen)
{
    if (!path || !strcmp(path, "-")) {
        if (fflush(stdout) || write_all(1, buf, len)) {
            snprintf(err, errlen, "writing the output to stdout failed: %s", strerror(errno));
            return -1;
        }
        return 0;
    }
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* a device or a pipe (/dev/null, /dev/stdout): no temporary name to rename; a FIFO
         * that no process reads is an error, not a wait without end */
        FILE *f = hir_fopen_write(path);
        int ok = f && fwrite(buf, 1, len, f) == len;
        int saved = errno;
        if (f && fclose(f) && ok) {
            ok = 0;
            saved = errno;
        }
        if (!ok) {
            snprintf(err, errlen, "cannot write '%s': %s", path, hir_open_strerror(saved));
            return -1;
        }
        return 0;
    }
    size_t n = strlen(path);
    char *tmp = malloc(n + 16);
    if (!tmp) {
        snprintf(err, errlen, "cannot write '%s': out of memory", path);
        return -1;
    }
    snprintf(tmp, n + 16, "%s.tmpXXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
        free(tmp);
        return -1;
    }
    int rc = write_all(fd, buf, len);
    int saved = errno;
    if (close(fd) && !rc) {
        rc = -1;
        saved = errno;
    }
    /* mkstemp makes the file 0600; give it the mode a plain fopen would */
    mode_t um = umask(0);
    umask(um);
    if (!rc && (chmod(tmp, 0666 & ~um) || rename(tmp, path))) {
        rc = -1;
        saved = errno;
    }
    if (rc) {
        unlink(tmp);
        snprintf(err, errlen, "cannot write '%s': %s", path, strerror(saved));
    }
    free(tmp);
    return rc;
}
