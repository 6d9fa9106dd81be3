/* share.h — the data files a tool finds under share/hir (cmake/HirShare.cmake), relative to the
 * tool's own executable, so an installed tree works wherever it is put and nothing points back
 * into the source checkout. */
#ifndef HIR_TOOLS_SHARE_H
#define HIR_TOOLS_SHARE_H

#include <stddef.h>

/* The path of share/hir/NAME for the running executable (the folder of /proc/self/exe, then
 * HIR_SHARE_FROM_BIN, then NAME) into buf (n bytes). 0 when that file exists; -1 when it does
 * not or the path cannot be made, with buf still holding the path looked at (or "" when even
 * the executable's path is unknown), for the caller's message. */
int hir_tool_share_path(const char *name, char *buf, size_t n);

#endif
