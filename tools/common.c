/* common.c — --version and --color for the tools (common.h). */
#include "tools/common.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dialect/hir.h"

#ifndef HIR_GIT_HASH
#define HIR_GIT_HASH "unknown"
#endif

void hir_tool_version(FILE *f, const char *tool)
{
    fprintf(f, "%s %s (git %s)\n", tool, HIR_VERSION, HIR_GIT_HASH);
}

int hir_tool_color_parse(const char *when, hir_color_mode *mode)
{
    if (!strcmp(when, "auto"))
        *mode = HIR_COLOR_AUTO;
    else if (!strcmp(when, "always"))
        *mode = HIR_COLOR_ALWAYS;
    else if (!strcmp(when, "never"))
        *mode = HIR_COLOR_NEVER;
    else
        return -1;
    return 0;
}

bool hir_tool_use_color(hir_color_mode mode, FILE *f)
{
    if (mode != HIR_COLOR_AUTO)
        return mode == HIR_COLOR_ALWAYS;
    const char *term = getenv("TERM");
    const char *no = getenv("NO_COLOR");
    return isatty(fileno(f)) && term && *term && strcmp(term, "dumb") && !(no && *no);
}
