/* common.c — --version and --color for the tools (common.h). */
#include "tools/common.h"

#include <stdarg.h>
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

/* msg made printable on one line: control bytes and DEL as \xNN, cut after `max` bytes */
static void print_line(FILE *f, const char *msg, size_t max)
{
    size_t n = 0;
    for (const unsigned char *c = (const unsigned char *)msg; *c; c++) {
        if (n >= max) {
            fputs("...", f);
            break;
        }
        if (*c < 0x20 || *c == 0x7f) {
            fprintf(f, "\\x%02x", *c);
            n += 4;
        } else {
            fputc(*c, f);
            n++;
        }
    }
}

static void vline(const char *tool, const char *kind, const char *tail, const char *fmt,
                  va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    fprintf(stderr, "%s: %s", tool, kind);
    print_line(stderr, msg, 300);
    fprintf(stderr, "%s\n", tail);
}

int hir_tool_usage_error(const char *tool, const char *fmt, ...)
{
    char tail[80];
    snprintf(tail, sizeof tail, " (see %s --help)", tool);
    va_list ap;
    va_start(ap, fmt);
    vline(tool, "", tail, fmt, ap);
    va_end(ap);
    return 2;
}

/* The diagnostic engine's one-line form (hir_diag_format_line), formatted on the stack so that
 * the message survives when memory has run out. */
void hir_tool_error(const char *tool, const char *fmt, ...)
{
    char msg[1024], line[1400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    hir_diag_format_line(line, sizeof line, tool, HIR_ERROR, msg);
    fputs(line, stderr);
}
