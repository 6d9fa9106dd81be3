/* input.h — reading an input file for the parser: its text followed by the two NUL bytes the
 * scanner needs, either read into memory or, for a large regular file, mapped copy-on-write so
 * that the pages already scanned can be given back (the input then costs almost no resident
 * memory). */
#ifndef HIR_INPUT_H
#define HIR_INPUT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct hir_input {
    char *text;                  /* len bytes, then two NULs; writable (flex scans in place) */
    size_t len;
    size_t maplen;               /* bytes mapped at text, 0: malloc'd */
} hir_input;

/* hir_input_read's flags. HIR_INPUT_MAP: a regular file of at least HIR_INPUT_MAP_MIN bytes
 * is mapped (MAP_PRIVATE, so the scanner's transient NULs never reach the file). A caller
 * that asks for it must be ready for SIGBUS: a file truncated by another process while mapped
 * raises it when a page past its new end is read. Only a tool may install the handler
 * (hir_tool_catch_sigbus, tools/common.h); a library does not ask for a mapping. */
enum { HIR_INPUT_MAP = 1 };
#define HIR_INPUT_MAP_MIN ((size_t)1 << 20)

/* Reads a file ("-" = stdin) into *in. Returns 0, or -1 with a message in err (in is then
 * empty, hir_input_fini harmless). Without HIR_INPUT_MAP the text is always malloc'd (maplen
 * 0): a caller may keep it and free() it itself in place of hir_input_fini. */
int  hir_input_read(hir_input *in, const char *path, unsigned flags, char *err, size_t errlen);
void hir_input_fini(hir_input *in);

/* Gives back the resident pages that lie wholly inside text[from, to) of a mapped input; a
 * later read of them faults them in again from the file, with the same bytes as long as
 * whoever wrote into them put every byte back (the scanner does). Nothing for a read input
 * (mapped false). The caller must not have a byte of that range changed at the time. */
void hir_text_release(const char *text, bool mapped, size_t from, size_t to);

#endif
