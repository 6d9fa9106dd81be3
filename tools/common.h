/* common.h — what every hir tool's command line shares: --version text and --color. */
#ifndef HIR_TOOLS_COMMON_H
#define HIR_TOOLS_COMMON_H

#include <stdbool.h>
#include <stdio.h>

/* "NAME VERSION (git HASH)\n": the version of dialect/hir.h and the commit the build was
 * configured from (HIR_GIT_HASH, top-level CMakeLists.txt; "-dirty" with local changes). */
void hir_tool_version(FILE *f, const char *tool);

typedef enum hir_color_mode { HIR_COLOR_AUTO, HIR_COLOR_ALWAYS, HIR_COLOR_NEVER } hir_color_mode;

/* The value of --color=WHEN ("auto", "always" or "never"). 0, or -1 for another word. */
int hir_tool_color_parse(const char *when, hir_color_mode *mode);
/* Colour diagnostics written to f? always / never, or for auto: f is a terminal, TERM is set
 * and not "dumb", and NO_COLOR is unset (https://no-color.org). */
bool hir_tool_use_color(hir_color_mode mode, FILE *f);

#endif
