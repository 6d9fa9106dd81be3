/* dtype.c — lookups over the dtype table. */
#include "dialect/dtype.h"

#include <string.h>

static const struct {
    const char *name;
    size_t size;
    const char *prefix;
    int is_float, is_int;
} dtypes[] = {
#define X(E, NAME, SIZE, PREFIX, ISF, ISI) {NAME, SIZE, PREFIX, ISF, ISI},
#include "dialect/dtype.def"
#undef X
};

const char *hir_dtype_name(hir_dtype t) { return t < HIR_DT_COUNT ? dtypes[t].name : "?"; }
size_t hir_dtype_size(hir_dtype t) { return t < HIR_DT_COUNT ? dtypes[t].size : 0; }
const char *hir_dtype_prefix(hir_dtype t) { return t < HIR_DT_COUNT ? dtypes[t].prefix : "?"; }
int hir_dtype_is_float(hir_dtype t) { return t < HIR_DT_COUNT && dtypes[t].is_float; }
int hir_dtype_is_int(hir_dtype t) { return t < HIR_DT_COUNT && dtypes[t].is_int; }

size_t hir_dtype_match(const char *s, size_t n, hir_dtype *out)
{
    size_t best = 0;
    for (int i = 0; i < HIR_DT_COUNT; i++) {
        size_t len = strlen(dtypes[i].name);
        if (len > best && len <= n && memcmp(s, dtypes[i].name, len) == 0) {
            best = len;
            *out = (hir_dtype)i;
        }
    }
    return best;
}
