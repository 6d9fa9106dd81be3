/* convert.c — bit-exact host conversions between the storage dtypes. bf16/f16 sit in the
 * GEMM and collective paths, so the bulk versions are straight-line loops without branches
 * (selects only) that gcc/clang auto-vectorize. */
#include <math.h>
#include <string.h>

#include "runner/backend/convert.h"

static inline uint32_t f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float f32_from(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

float hir_bf16_to_f32(uint16_t h) { return f32_from((uint32_t)h << 16); }

uint16_t hir_f32_to_bf16(float f)
{
    uint32_t u = f32_bits(f);
    /* adding 0x7FFF plus the lsb of the kept part rounds to nearest, ties to even */
    uint32_t r = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
    /* NaN: the add could carry into the exponent and make an infinity; keep it NaN */
    uint32_t q = (u >> 16) | 0x40u;
    return (uint16_t)((u & 0x7FFFFFFFu) > 0x7F800000u ? q : r);
}

/* The f16 pair follows the FP16 library (M. Dukhan): float arithmetic does the subnormal
 * rounding for us, so there is no bit loop and no branch. */
float hir_f16_to_f32(uint16_t h)
{
    uint32_t w = (uint32_t)h << 16;
    uint32_t sign = w & 0x80000000u;
    uint32_t two_w = w + w;
    float normalized = f32_from((two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f;
    float denormalized = f32_from((two_w >> 17) | (126u << 23)) - 0.5f;
    uint32_t r = sign | (two_w < (1u << 27) ? f32_bits(denormalized) : f32_bits(normalized));
    return f32_from(r);
}

uint16_t hir_f32_to_f16(float f)
{
    float base = (fabsf(f) * 0x1.0p+112f) * 0x1.0p-110f;
    uint32_t w = f32_bits(f);
    uint32_t shl1_w = w + w;
    uint32_t sign = w & 0x80000000u;
    uint32_t bias = shl1_w & 0xFF000000u;
    bias = bias < 0x71000000u ? 0x71000000u : bias;
    base = f32_from((bias >> 1) + 0x07800000u) + base;
    uint32_t bits = f32_bits(base);
    uint32_t nonsign = ((bits >> 13) & 0x7C00u) + (bits & 0x0FFFu);
    return (uint16_t)((sign >> 16) | (shl1_w > 0xFF000000u ? 0x7E00u : nonsign));
}

/* Round d to float with round-to-odd: a float with 24 significant bits rounded to odd and
 * then to nearest-even at 8 or 11 bits gives the same answer as rounding d directly. */
static float f64_to_f32_odd(double d)
{
    float f = (float)d;
    if (isnan(d) || isinf(f) || (double)f == d)
        return f;
    if (fabs((double)f) > fabs(d))
        f = nextafterf(f, 0.0f);
    uint32_t u = f32_bits(f) | 1u;
    return f32_from(u);
}

/* bf16 from a double directly where the result is a normal bf16 (2^-126 <= |d| < 2^127): the
 * double's 52 fraction bits rounded to nearest-even at 7 by one add, a carry moving into the
 * exponent as it should, the exponent rebiased; the same value as through round-to-odd float,
 * a few times faster (it fills every bf16 input). Zero, subnormals, huge values, inf and NaN
 * take the path through float. */
static inline uint16_t f64_to_bf16(double d)
{
    uint64_t b;
    memcpy(&b, &d, 8);
    uint64_t mag = b & 0x7FFFFFFFFFFFFFFFull, e = mag >> 52;
    if (e >= 1023 - 126 && e <= 1023 + 126) {
        uint64_t r = (mag + ((1ull << 44) - 1) + ((mag >> 45) & 1)) >> 45;  /* exp | 7 bits */
        return (uint16_t)((b >> 48 & 0x8000u) | (((r >> 7) - 1023 + 127) << 7) | (r & 0x7Fu));
    }
    return hir_f32_to_bf16(f64_to_f32_odd(d));
}

uint16_t hir_f64_to_bf16(double d) { return f64_to_bf16(d); }

void hir_f64_to_bf16_n(uint16_t *restrict dst, const double *restrict src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = f64_to_bf16(src[i]);
}
uint16_t hir_f64_to_f16(double d) { return hir_f32_to_f16(f64_to_f32_odd(d)); }

void hir_bf16_to_f32_n(float *restrict dst, const uint16_t *restrict src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = f32_from((uint32_t)src[i] << 16);
}

void hir_f32_to_bf16_n(uint16_t *restrict dst, const float *restrict src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = hir_f32_to_bf16(src[i]);
}

void hir_f16_to_f32_n(float *restrict dst, const uint16_t *restrict src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = hir_f16_to_f32(src[i]);
}

void hir_f32_to_f16_n(uint16_t *restrict dst, const float *restrict src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = hir_f32_to_f16(src[i]);
}

int hir_dtype_is_storable(hir_dtype t)
{
    switch (t) {
    case HIR_DT_FLOAT: case HIR_DT_DOUBLE: case HIR_DT_HALF: case HIR_DT_BFLOAT:
    case HIR_DT_BOOL: case HIR_DT_INT8: case HIR_DT_INT16: case HIR_DT_INT32: case HIR_DT_INT64:
    case HIR_DT_UINT8: case HIR_DT_UINT16: case HIR_DT_UINT32: case HIR_DT_UINT64:
    case HIR_DT_INDEX:
        return 1;
    default:
        return 0;
    }
}

#define LOAD(T) do { T x; memcpy(&x, p, sizeof x); return x; } while (0)

double hir_load_f64(const void *p, hir_dtype t)
{
    uint16_t h;
    switch (t) {
    case HIR_DT_FLOAT: LOAD(float);
    case HIR_DT_DOUBLE: LOAD(double);
    case HIR_DT_HALF: memcpy(&h, p, 2); return hir_f16_to_f32(h);
    case HIR_DT_BFLOAT: memcpy(&h, p, 2); return hir_bf16_to_f32(h);
    case HIR_DT_BOOL: return *(const uint8_t *)p != 0;
    case HIR_DT_INT8: LOAD(int8_t);
    case HIR_DT_INT16: LOAD(int16_t);
    case HIR_DT_INT32: LOAD(int32_t);
    case HIR_DT_INT64: case HIR_DT_INDEX: LOAD(int64_t);
    case HIR_DT_UINT8: LOAD(uint8_t);
    case HIR_DT_UINT16: LOAD(uint16_t);
    case HIR_DT_UINT32: LOAD(uint32_t);
    case HIR_DT_UINT64: LOAD(uint64_t);
    default: return NAN;
    }
}

int64_t hir_load_i64(const void *p, hir_dtype t)
{
    switch (t) {
    case HIR_DT_BOOL: return *(const uint8_t *)p != 0;
    case HIR_DT_INT8: LOAD(int8_t);
    case HIR_DT_INT16: LOAD(int16_t);
    case HIR_DT_INT32: LOAD(int32_t);
    case HIR_DT_INT64: case HIR_DT_INDEX: LOAD(int64_t);
    case HIR_DT_UINT8: LOAD(uint8_t);
    case HIR_DT_UINT16: LOAD(uint16_t);
    case HIR_DT_UINT32: LOAD(uint32_t);
    case HIR_DT_UINT64: LOAD(uint64_t);   /* wraps above INT64_MAX, like a C cast */
    default: {
        double d = hir_load_f64(p, t);
        if (isnan(d)) return 0;
        if (d >= 0x1p63) return INT64_MAX;
        if (d < -0x1p63) return INT64_MIN;
        return (int64_t)d;
    }
    }
}
#undef LOAD

#define STORE(T, x) do { T y_ = (T)(x); memcpy(p, &y_, sizeof y_); } while (0)

/* Saturate before the cast: an out-of-range double -> int conversion is undefined in C. */
static int64_t sat_i64(double v, double lo, double hi)
{
    if (isnan(v)) return 0;
    if (v <= lo) return (int64_t)lo;
    if (v >= hi) return (int64_t)hi;
    return (int64_t)v;
}

void hir_store_f64(void *p, hir_dtype t, double v)
{
    switch (t) {
    case HIR_DT_FLOAT: STORE(float, v); break;
    case HIR_DT_DOUBLE: STORE(double, v); break;
    case HIR_DT_HALF: STORE(uint16_t, hir_f64_to_f16(v)); break;
    case HIR_DT_BFLOAT: STORE(uint16_t, hir_f64_to_bf16(v)); break;
    case HIR_DT_BOOL: *(uint8_t *)p = v != 0; break;
    case HIR_DT_INT8: STORE(int8_t, sat_i64(v, -128, 127)); break;
    case HIR_DT_INT16: STORE(int16_t, sat_i64(v, -32768, 32767)); break;
    case HIR_DT_INT32: STORE(int32_t, sat_i64(v, -2147483648.0, 2147483647.0)); break;
    case HIR_DT_INT64: case HIR_DT_INDEX:
        if (isnan(v)) STORE(int64_t, 0);
        else if (v >= 0x1p63) STORE(int64_t, INT64_MAX);
        else if (v < -0x1p63) STORE(int64_t, INT64_MIN);
        else STORE(int64_t, v);
        break;
    case HIR_DT_UINT8: STORE(uint8_t, sat_i64(v, 0, 255)); break;
    case HIR_DT_UINT16: STORE(uint16_t, sat_i64(v, 0, 65535)); break;
    case HIR_DT_UINT32: STORE(uint32_t, sat_i64(v, 0, 4294967295.0)); break;
    case HIR_DT_UINT64:
        if (isnan(v) || v <= 0) STORE(uint64_t, 0);
        else if (v >= 0x1p64) STORE(uint64_t, UINT64_MAX);
        else STORE(uint64_t, v);
        break;
    default: break;
    }
}

void hir_store_i64(void *p, hir_dtype t, int64_t v)
{
    switch (t) {
    case HIR_DT_BOOL: *(uint8_t *)p = v != 0; break;
    /* integer to integer keeps C's modular conversion, as a device cast does */
    case HIR_DT_INT8: STORE(int8_t, (uint8_t)v); break;
    case HIR_DT_INT16: STORE(int16_t, (uint16_t)v); break;
    case HIR_DT_INT32: STORE(int32_t, (uint32_t)v); break;
    case HIR_DT_INT64: case HIR_DT_INDEX: STORE(int64_t, v); break;
    case HIR_DT_UINT8: STORE(uint8_t, v); break;
    case HIR_DT_UINT16: STORE(uint16_t, v); break;
    case HIR_DT_UINT32: STORE(uint32_t, v); break;
    case HIR_DT_UINT64: STORE(uint64_t, v); break;
    default: hir_store_f64(p, t, (double)v); break;
    }
}
#undef STORE

/* n elements of dtype t, `stride` elements apart, as doubles (bf16 and half through float) or as
 * int64 */
/* a unit-stride row gets a loop of its own, which the compiler can vectorize */
#define ROW_LOOP(T, EXPR)                                                                  \
    do {                                                                                   \
        const T *p_ = (const T *)src;                                                      \
        if (stride == 1)                                                                   \
            for (int64_t i = 0; i < n; i++)                                                \
                dst[i] = EXPR(p_[i]);                                                      \
        else                                                                               \
            for (int64_t i = 0; i < n; i++)                                                \
                dst[i] = EXPR(p_[i * stride]);                                             \
    } while (0)
#define ID(x) (x)

void hir_load_f64_n(double *dst, const void *src, hir_dtype t, int64_t stride, int64_t n)
{
    switch (t) {
    case HIR_DT_FLOAT: ROW_LOOP(float, ID); break;
    case HIR_DT_DOUBLE: ROW_LOOP(double, ID); break;
    case HIR_DT_BFLOAT: ROW_LOOP(uint16_t, hir_bf16_to_f32); break;
    case HIR_DT_HALF: ROW_LOOP(uint16_t, hir_f16_to_f32); break;
    case HIR_DT_INT32: ROW_LOOP(int32_t, ID); break;
    case HIR_DT_INT64: case HIR_DT_INDEX: ROW_LOOP(int64_t, ID); break;
    default: {
        size_t es = hir_dtype_size(t);
        for (int64_t i = 0; i < n; i++)
            dst[i] = hir_load_f64((const char *)src + i * stride * (int64_t)es, t);
    }
    }
}

/* the same for integers, exact beyond 2^53 */
void hir_load_i64_n(int64_t *dst, const void *src, hir_dtype t, int64_t stride, int64_t n)
{
    switch (t) {
    case HIR_DT_INT32: ROW_LOOP(int32_t, ID); break;
    case HIR_DT_INT64: case HIR_DT_INDEX: ROW_LOOP(int64_t, ID); break;
    default: {
        size_t es = hir_dtype_size(t);
        for (int64_t i = 0; i < n; i++)
            dst[i] = hir_load_i64((const char *)src + i * stride * (int64_t)es, t);
    }
    }
}

#undef ROW_LOOP
#undef ID
