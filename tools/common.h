/* common.h — what every hir tool's command line shares: --version text and --color. */
#ifndef HIR_TOOLS_COMMON_H
#define HIR_TOOLS_COMMON_H

#include <stdbool.h>
#include <stdio.h>

/* "NAME VERSION (git DESCRIBE)\n": project(VERSION) of the top-level CMakeLists.txt and
 * `git describe` of the commit the build was configured from: the release tag ("v0.1.0"), how
 * far past it ("v0.1.0-4-g<hash>"), or the hash before the first tag; "-dirty" with local
 * changes (HIR_GIT_DESCRIBE, top-level CMakeLists.txt). */
void hir_tool_version(FILE *f, const char *tool);

typedef enum hir_color_mode { HIR_COLOR_AUTO, HIR_COLOR_ALWAYS, HIR_COLOR_NEVER } hir_color_mode;

/* The value of --color=WHEN ("auto", "always" or "never"). 0, or -1 for another word. */
int hir_tool_color_parse(const char *when, hir_color_mode *mode);
/* Colour diagnostics written to f? always / never, or for auto: f is a terminal, TERM is set
 * and not "dumb", and NO_COLOR is unset (https://no-color.org). */
bool hir_tool_use_color(hir_color_mode mode, FILE *f);

/* A usage error: prints "TOOL: error: MESSAGE (see TOOL --help)" as one line on stderr and returns 2,
 * the exit status of a bad command line. Whatever the user typed that the message quotes is
 * made printable: control bytes (a newline in an argument) are escaped as \xNN, and a message
 * longer than 300 bytes is cut with "...", so the error stays one line. */
int hir_tool_usage_error(const char *tool, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The same one-line, printable form for an error that is not a usage error (exit 1):
 * "TOOL: error: MESSAGE". */
void hir_tool_error(const char *tool, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An input mapped by hir_input_read (HIR_INPUT_MAP) raises SIGBUS when another process
 * truncates the file under it. This handler (installed before the file is opened) writes
 * "TOOL: error: 'PATH' changed while it was read (truncated?)" with one write(2), removes the
 * temporary output named by hir_tool_sigbus_unlink (if any), and exits 1. 0, or -1 when it
 * cannot be installed (the caller then reads the file instead of mapping it). */
int  hir_tool_catch_sigbus(const char *tool, const char *path);
void hir_tool_sigbus_unlink(const char *tmp);

#endif
