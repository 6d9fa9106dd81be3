/* intops.h — the one integer semantics of hir: + - * / % ceilDiv pow gcd << >> (and neg, abs,
 * remainder) on int64, defined once. The index evaluator (dialect/expr.c) and the CPU backend
 * call these functions; the CUDA backend prepends HIR_INTOPS_TEXT, the same definitions as
 * source text, to every generated kernel, so the device computes identically.
 *
 * Every operation is total and returns its value in *r:
 *   + - * neg abs pow   wrap modulo 2^64 (two's complement); abs(INT64_MIN) = INT64_MIN.
 *   /                   truncates toward zero; INT64_MIN / -1 wraps to INT64_MIN.
 *   %                   C's remainder (sign of the dividend); INT64_MIN % -1 = 0.
 *   remainder           the remainder with the sign of the divisor (Python's %).
 *   ceilDiv             the quotient rounded toward +infinity; ceilDiv(INT64_MIN, -1) wraps.
 *   pow(a, b)           b >= 0: by squaring (3**100 is 3^100 mod 2^64); b < 0: the truncated
 *                       1 / a^-b (1 for a = 1, +-1 for a = -1, 0 for |a| > 1).
 *   gcd                 of |a| and |b| on uint64; gcd(INT64_MIN, 0) = 2^63 wraps to INT64_MIN.
 *   a << b              b in [0, 63]: the bits of a shifted left (wrapping); any other b
 *                       (>= 64 or negative) saturates: 0.
 *   a >> b              b in [0, 63]: arithmetic shift; any other b saturates to the sign
 *                       fill: -1 for negative a, else 0.
 * Division by zero (/, %, remainder, ceilDiv by 0, and pow(0, b < 0)) is the only failure: the
 * status is HIR_IOP_DIV0 and *r is still defined (quotients -1, remainders a, as RISC-V
 * defines them), which is what the device, having no error path, computes. The status
 * HIR_IOP_WRAPPED says the exact result did not fit and *r is the wrapped value: the index
 * evaluator refuses such an expression as a user error (docs/runner.md), element-wise tensor
 * arithmetic keeps the wrapped value.
 *
 * The definitions are written once, inside HIR_INTOPS(QUALIFIER), so that the host compiles
 * them (static inline) and HIR_INTOPS_TEXT spells them for NVRTC (__device__). They use only
 * hir_i64, hir_u64 and plain C. The checked helpers at the end serve sizes and extents. */
#ifndef HIR_INTOPS_H
#define HIR_INTOPS_H

#include <stdbool.h>
#include <stdint.h>

enum { HIR_IOP_OK = 0, HIR_IOP_WRAPPED = 1, HIR_IOP_DIV0 = 2 };

/* The definitions name their types hir_i64/hir_u64 so that the device text can declare them
 * without clashing with whatever <stdint.h> the CUDA compiler has seen. */
typedef int64_t hir_i64;
typedef uint64_t hir_u64;

#define HIR_INTOPS(Q)                                                                           \
    Q int hir_iop_add(hir_i64 a, hir_i64 b, hir_i64 *r)                                         \
    {                                                                                           \
        *r = (hir_i64)((hir_u64)a + (hir_u64)b);                                              \
        return ((a < 0) == (b < 0) && (*r < 0) != (a < 0)) ? 1 : 0;                             \
    }                                                                                           \
    Q int hir_iop_sub(hir_i64 a, hir_i64 b, hir_i64 *r)                                         \
    {                                                                                           \
        *r = (hir_i64)((hir_u64)a - (hir_u64)b);                                              \
        return ((a < 0) != (b < 0) && (*r < 0) != (a < 0)) ? 1 : 0;                             \
    }                                                                                           \
    Q int hir_iop_mul(hir_i64 a, hir_i64 b, hir_i64 *r)                                         \
    {                                                                                           \
        hir_u64 ua = a < 0 ? 0 - (hir_u64)a : (hir_u64)a;                                    \
        hir_u64 ub = b < 0 ? 0 - (hir_u64)b : (hir_u64)b;                                    \
        hir_u64 limit = ((a < 0) != (b < 0)) ? (hir_u64)1 << 63 : ((hir_u64)1 << 63) - 1;    \
        *r = (hir_i64)((hir_u64)a * (hir_u64)b);                                              \
        return (ua != 0 && ub > limit / ua) ? 1 : 0;                                            \
    }                                                                                           \
    Q int hir_iop_neg(hir_i64 a, hir_i64 *r) { return hir_iop_sub(0, a, r); }                   \
    Q int hir_iop_abs(hir_i64 a, hir_i64 *r)                                                    \
    {                                                                                           \
        if (a >= 0) {                                                                           \
            *r = a;                                                                             \
            return 0;                                                                           \
        }                                                                                       \
        return hir_iop_neg(a, r);                                                               \
    }                                                                                           \
    Q int hir_iop_div(hir_i64 a, hir_i64 b, hir_i64 *r)                                         \
    {                                                                                           \
        if (b == 0) {                                                                           \
            *r = -1;                                                                            \
            return 2;                                                                           \
        }                                                                                       \
        if (b == -1)                                                                            \
            return hir_iop_neg(a, r);                                                           \
        *r = a / b;                                                                             \
        return 0;                                                                               \
    }                                                                                           \
    Q int hir_iop_mod(hir_i64 a, hir_i64 b, hir_i64 *r)                                         \
    {                                                                                           \
        if (b == 0) {                                                                           \
            *r = a;                                                                             \
            return 2;                                                                           \
        }                                                                                       \
        *r = b == -1 ? 0 : a % b;                                                               \
        return 0;                                                                               \
    }                                                                                           \
    Q int hir_iop_remainder(hir_i64 a, hir_i64 b, hir_i64 *r)                                   \
    {                                                                                           \
        int st = hir_iop_mod(a, b, r);                                                          \
        if (st == 0 && *r != 0 && ((*r < 0) != (b < 0)))                                        \
            *r += b;                                                                            \
        return st;                                                                              \
    }                                                                                           \
    Q int hir_iop_ceildiv(hir_i64 a, hir_i64 b, hir_i64 *r)                                     \
    {                                                                                           \
        if (b == 0 || b == -1)                                                                  \
            return hir_iop_div(a, b, r);                                                        \
        *r = a / b + ((a % b != 0) && ((a < 0) == (b < 0)));                                    \
        return 0;                                                                               \
    }                                                                                           \
    Q int hir_iop_pow(hir_i64 a, hir_i64 b, hir_i64 *r)                                         \
    {                                                                                           \
        if (b < 0) {                                                                            \
            if (a == 0) {                                                                       \
                *r = -1;                                                                        \
                return 2;                                                                       \
            }                                                                                   \
            *r = a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;                                 \
            return 0;                                                                           \
        }                                                                                       \
        hir_i64 v = 1, t;                                                                       \
        int st = 0;                                                                             \
        while (b > 0) {                                                                         \
            if (b & 1)                                                                          \
                st |= hir_iop_mul(v, a, &v);                                                    \
            b >>= 1;                                                                            \
            if (b > 0) {                                                                        \
                /* squaring the base matters only while bits of b remain */                     \
                st |= hir_iop_mul(a, a, &t);                                                    \
                a = t;                                                                          \
            }                                                                                   \
        }                                                                                       \
        *r = v;                                                                                 \
        return st;                                                                              \
    }                                                                                           \
    Q int hir_iop_gcd(hir_i64 a, hir_i64 b, hir_i64 *r)                                         \
    {                                                                                           \
        hir_u64 x = a < 0 ? 0 - (hir_u64)a : (hir_u64)a;                                     \
        hir_u64 y = b < 0 ? 0 - (hir_u64)b : (hir_u64)b;                                     \
        while (y) {                                                                             \
            hir_u64 t = x % y;                                                                 \
            x = y;                                                                              \
            y = t;                                                                              \
        }                                                                                       \
        *r = (hir_i64)x;                                                                        \
        return x >> 63 ? 1 : 0;                                                                 \
    }                                                                                           \
    Q int hir_iop_shl(hir_i64 a, hir_i64 b, hir_i64 *r)                                         \
    {                                                                                           \
        *r = (b < 0 || b > 63) ? 0 : (hir_i64)((hir_u64)a << b);                               \
        return 0;                                                                               \
    }                                                                                           \
    Q int hir_iop_shr(hir_i64 a, hir_i64 b, hir_i64 *r)                                         \
    {                                                                                           \
        *r = (b < 0 || b > 63) ? (a < 0 ? -1 : 0) : (a < 0 ? ~(~a >> b) : a >> b);              \
        return 0;                                                                               \
    }

/* The host's copy. A wrapped pow may report HIR_IOP_WRAPPED only when the exact result does
 * not fit: the squaring of the base is skipped once no bit of the exponent remains. */
HIR_INTOPS(static inline)

#define HIR_INTOPS_STR_(...) #__VA_ARGS__
#define HIR_INTOPS_STR(...) HIR_INTOPS_STR_(__VA_ARGS__)
/* The device's copy, for NVRTC: hir_i64 and hir_u64 as CUDA spells them, then the same
 * definitions as __device__ functions, then value-returning forms hir_iv_OP(a, b) for
 * generated expressions (the device has no error path: the values documented above). The
 * qualifier is the token hir_iop_devfn, defined inside the text: the arguments of a macro are
 * expanded before they are stringified, and where the CUDA headers are included __device__
 * and __forceinline__ are host macros (empty or GCC attributes), which NVRTC then rejects. */
#define HIR_INTOPS_TEXT                                                                          \
    "typedef long long hir_i64;\ntypedef unsigned long long hir_u64;\n"                        \
    "#define hir_iop_devfn static __device__ __forceinline__\n"                                 \
    HIR_INTOPS_STR(HIR_INTOPS(hir_iop_devfn)) "\n"                                              \
    "#define HIR_IV(OP) static __device__ __forceinline__ hir_i64 hir_iv_##OP(hir_i64 a, "      \
    "hir_i64 b) { hir_i64 r; hir_iop_##OP(a, b, &r); return r; }\n"                              \
    "HIR_IV(add) HIR_IV(sub) HIR_IV(mul) HIR_IV(div) HIR_IV(mod) HIR_IV(remainder) "             \
    "HIR_IV(ceildiv) HIR_IV(pow) HIR_IV(gcd) HIR_IV(shl) HIR_IV(shr)\n"                          \
    "static __device__ __forceinline__ hir_i64 hir_iv_neg(hir_i64 a) "                           \
    "{ hir_i64 r; hir_iop_neg(a, &r); return r; }\n"                                             \
    "static __device__ __forceinline__ hir_i64 hir_iv_abs(hir_i64 a) "                           \
    "{ hir_i64 r; hir_iop_abs(a, &r); return r; }\n"

/* Checked helpers for sizes, extents and trip counts: true when the exact result does not fit
 * (then *r is the wrapped value). */
static inline bool hir_add_overflow(int64_t a, int64_t b, int64_t *r) { return hir_iop_add(a, b, r) != 0; }
static inline bool hir_sub_overflow(int64_t a, int64_t b, int64_t *r) { return hir_iop_sub(a, b, r) != 0; }
static inline bool hir_mul_overflow(int64_t a, int64_t b, int64_t *r) { return hir_iop_mul(a, b, r) != 0; }
static inline bool hir_neg_overflow(int64_t a, int64_t *r) { return hir_iop_neg(a, r) != 0; }
static inline bool hir_abs_overflow(int64_t a, int64_t *r) { return hir_iop_abs(a, r) != 0; }
static inline bool hir_pow_overflow(int64_t a, int64_t b, int64_t *r) { return hir_iop_pow(a, b, r) != 0; }

/* Rounds-up quotient for b != 0 (ceilDiv above, without the status). */
static inline int64_t hir_ceildiv(int64_t a, int64_t b)
{
    int64_t r;
    hir_iop_ceildiv(a, b, &r);
    return r;
}

#endif
