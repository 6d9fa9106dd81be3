/* share.c — share/hir relative to the running executable (tools/share.h). */
#include "tools/share.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef HIR_SHARE_FROM_BIN
#define HIR_SHARE_FROM_BIN "../share/hir"
#endif

int hir_tool_share_path(const char *name, char *buf, size_t n)
{
    char exe[PATH_MAX];
    if (n == 0)
        return -1;
    buf[0] = '\0';
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return -1;
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    int w = snprintf(buf, n, "%s/%s/%s", exe, HIR_SHARE_FROM_BIN, name);
    if (w < 0 || (size_t)w >= n) {
        buf[0] = '\0';
        return -1;
    }
    return access(buf, R_OK) == 0 ? 0 : -1;
}
