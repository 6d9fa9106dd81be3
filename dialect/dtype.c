/* dtype.c — lookups over the dtype table (defs/dtype.def) and the scalar-symbol prefixes. */
#include "dialect/dtype.h"

#include <string.h>

static const struct {
    const char *name;
    size_t namelen;              /* strlen(name), for the lookups below */
    size_t size;
    const char *prefix;
    int is_float, is_int, sym;
} dtypes[] = {
#define X(E, NAME, SIZE, PREFIX, ISF, ISI, SYM) {NAME, sizeof(NAME) - 1, SIZE, PREFIX, ISF, ISI, SYM},
#include "dialect/defs/dtype.def"
#undef X
};

const char *hir_dtype_name(hir_dtype t) { return t < HIR_DT_COUNT ? dtypes[t].name : "?"; }
size_t hir_dtype_name_len(hir_dtype t) { return t < HIR_DT_COUNT ? dtypes[t].namelen : 1; }
size_t hir_dtype_size(hir_dtype t) { return t < HIR_DT_COUNT ? dtypes[t].size : 0; }
int hir_dtype_is_float(hir_dtype t) { return t < HIR_DT_COUNT && dtypes[t].is_float; }
int hir_dtype_is_int(hir_dtype t) { return t < HIR_DT_COUNT && dtypes[t].is_int; }

size_t hir_dtype_match(const char *s, size_t n, hir_dtype *out)
{
    size_t best = 0;
    if (!n)
        return 0;
    for (int i = 0; i < HIR_DT_COUNT; i++) {
        size_t len = dtypes[i].namelen;
        if (len > best && len <= n && s[0] == dtypes[i].name[0] &&
            s[len - 1] == dtypes[i].name[len - 1] && memcmp(s, dtypes[i].name, len) == 0) {
            best = len;
            *out = (hir_dtype)i;
            if (best == n)       /* the whole word: no longer name can match */
                break;
        }
    }
    return best;
}

bool hir_dtype_of_symbol_prefix(const char *s, size_t n, hir_dtype *out)
{
    for (int i = 0; i < HIR_DT_COUNT; i++)
        if (dtypes[i].sym && strlen(dtypes[i].prefix) == n && !memcmp(dtypes[i].prefix, s, n)) {
            *out = (hir_dtype)i;
            return true;
        }
    static const char *const index_prefixes[] = {
#define X(P) P,
#include "dialect/defs/symbol.def"
#undef X
    };
    for (size_t i = 0; i < sizeof index_prefixes / sizeof *index_prefixes; i++)
        if (strlen(index_prefixes[i]) == n && !memcmp(index_prefixes[i], s, n)) {
            *out = HIR_DT_INDEX;
            return true;
        }
    return false;
}
