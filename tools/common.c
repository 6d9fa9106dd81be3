/* common.c — --version and --color for the tools (common.h). */
#include "tools/common.h"

#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dialect/hir.h"

#ifndef HIR_GIT_DESCRIBE
#define HIR_GIT_DESCRIBE "unknown"
#endif

void hir_tool_version(FILE *f, const char *tool)
{
    fprintf(f, "%s %s (git %s)\n", tool, HIR_VERSION, HIR_GIT_DESCRIBE);
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
    vline(tool, "error: ", tail, fmt, ap);
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

/* What the SIGBUS handler writes, and the temporary output it removes. A signal handler reaches
 * nothing but static storage: this is the tools' one piece of it, written before the handler is
 * installed (and the temporary's name once, after), only read by the handler. */
static struct {
    char line[1400];
    size_t len;
    char tmp[4096];
} sigbus_exit;

static void on_sigbus(int sig)
{
    (void)sig;
    if (sigbus_exit.tmp[0])
        unlink(sigbus_exit.tmp);
    for (size_t k = 0; k < sigbus_exit.len;) {
        ssize_t w = write(STDERR_FILENO, sigbus_exit.line + k, sigbus_exit.len - k);
        if (w <= 0)
            break;
        k += (size_t)w;
    }
    _exit(1);
}

int hir_tool_catch_sigbus(const char *tool, const char *path)
{
    char msg[1024];
    snprintf(msg, sizeof msg, "'%s' changed while it was read (truncated?)", path);
    sigbus_exit.len = hir_diag_format_line(sigbus_exit.line, sizeof sigbus_exit.line, tool,
                                           HIR_ERROR, msg);
    sigbus_exit.tmp[0] = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigbus;
    sigemptyset(&sa.sa_mask);
    return sigaction(SIGBUS, &sa, NULL);
}

void hir_tool_sigbus_unlink(const char *tmp)
{
    sigset_t bus, old;
    sigemptyset(&bus);
    sigaddset(&bus, SIGBUS);
    sigprocmask(SIG_BLOCK, &bus, &old);
    snprintf(sigbus_exit.tmp, sizeof sigbus_exit.tmp, "%s", tmp && strlen(tmp) <
             sizeof sigbus_exit.tmp ? tmp : "");
    sigprocmask(SIG_SETMASK, &old, NULL);
}
