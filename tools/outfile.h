/* outfile.h — how the tools write their output: every byte checked, and a named regular file
 * is written under a temporary name in its directory and renamed over the target only once
 * complete, so a failed write (full disk, file size limit) leaves nothing half written. The
 * target keeps its mode and owner, and a symbolic link is written through: the file it names
 * is replaced, the link stays (hir_replace, support.h). */
#ifndef HIR_TOOLS_OUTFILE_H
#define HIR_TOOLS_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

#include "support/support.h"

/* Write buf[0..len) to path (stdout when path is NULL or "-"). 0, or -1 with a message
 * naming the file in err. */
int hir_tool_write_output(const char *path, const char *buf, size_t len, char *err,
                          size_t errlen);

/* A streamed output: the tool prints into `f` as it goes, and nothing of it stays in memory.
 * A named regular file (or a new one) is written under a temporary name in its directory and
 * renamed at commit; stdout is spooled into an unnamed temporary file and copied to stdout at
 * commit (so a failed run still prints nothing); other targets (a device, a FIFO) and the
 * case where no temporary file can be made are buffered in memory and written at commit by
 * hir_tool_write_output. Write errors keep their errno for commit's message. */
typedef struct hir_outfile {
    FILE *f;
    const char *path;            /* NULL or "-": stdout */
    int mode;                    /* OUT_RENAME, OUT_SPOOL, OUT_MEM (outfile.c) */
    int fd;                      /* the temporary file (RENAME, SPOOL) */
    hir_replace rep;             /* RENAME: the temporary file and its target (support.h) */
    int err;                     /* first write error (errno), 0 none */
    char *mem;                   /* OUT_MEM's buffer (grown by doubling, never zeroed) */
    size_t memlen, memcap;
    char buf[1 << 16];           /* f's buffer (no allocation per write) */
} hir_outfile;
/* 0, or -1 when not even a memory stream could be opened (out of memory). */
int  hir_outfile_open(hir_outfile *o, const char *path);
/* Completes the output (rename, copy to stdout or write); 0, or -1 with a message in err, or
 * HIR_ENOMEM when the memory stream could not hold the output. */
int  hir_outfile_commit(hir_outfile *o, char *err, size_t errlen);
/* Drops the output: nothing is written, the temporary file goes. */
void hir_outfile_abort(hir_outfile *o);

#endif
