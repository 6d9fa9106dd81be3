/* outfile.h — how the tools write their output: every byte checked, and a named regular file
 * is written under a temporary name in its directory and renamed over the target only once
 * complete, so a failed write (full disk, file size limit) leaves nothing half written. */
#ifndef HIR_TOOLS_OUTFILE_H
#define HIR_TOOLS_OUTFILE_H

#include <stddef.h>

/* Write buf[0..len) to path (stdout when path is NULL or "-"). 0, or -1 with a message
 * naming the file in err. */
int hir_tool_write_output(const char *path, const char *buf, size_t len, char *err,
                          size_t errlen);

#endif
