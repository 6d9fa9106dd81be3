/* intops.h — checked int64 arithmetic, the one place hir computes with integers taken from its
 * input (index expressions, extents, sizes, trip counts). Each helper returns true when the
 * exact result does not fit in int64 and then leaves *r unspecified; callers turn that into a
 * diagnostic. Signed overflow is undefined in C, so nothing else may compute these by hand. */
#ifndef HIR_INTOPS_H
#define HIR_INTOPS_H

#include <stdbool.h>
#include <stdint.h>

static inline bool hir_add_overflow(int64_t a, int64_t b, int64_t *r) { return __builtin_add_overflow(a, b, r); }
static inline bool hir_sub_overflow(int64_t a, int64_t b, int64_t *r) { return __builtin_sub_overflow(a, b, r); }
static inline bool hir_mul_overflow(int64_t a, int64_t b, int64_t *r) { return __builtin_mul_overflow(a, b, r); }
static inline bool hir_neg_overflow(int64_t a, int64_t *r) { return __builtin_sub_overflow((int64_t)0, a, r); }

static inline bool hir_abs_overflow(int64_t a, int64_t *r)
{
    if (a >= 0) {
        *r = a;
        return false;
    }
    return hir_neg_overflow(a, r);
}

/* a to the power b (b >= 0) by repeated squaring; squares the base only while bits of b remain,
 * so an overflow of the base means an overflow of the result. */
static inline bool hir_pow_overflow(int64_t a, int64_t b, int64_t *r)
{
    int64_t v = 1;
    while (b > 0) {
        if ((b & 1) && hir_mul_overflow(v, a, &v))
            return true;
        b >>= 1;
        if (b > 0 && hir_mul_overflow(a, a, &a))
            return true;
    }
    *r = v;
    return false;
}

/* Rounds-up quotient for b != 0 and not (a == INT64_MIN && b == -1). */
static inline int64_t hir_ceildiv(int64_t a, int64_t b)
{
    return a / b + ((a % b != 0) && ((a < 0) == (b < 0)));
}

#endif
