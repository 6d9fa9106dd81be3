/* hash.c — FNV-1a, the single byte-string hash of hir (maps, interning, fingerprints of
 * programs and hosts, data seeds, kernel caches all call it; nothing spells the constants
 * again). */
#include "support/support.h"

uint64_t hir_fnv1a(const void *p, size_t n, uint64_t h)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * UINT64_C(1099511628211);
    return h;
}

uint64_t hir_fnv1a_str(const char *s, uint64_t h)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
    return h;
}
