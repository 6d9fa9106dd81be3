/* convert.h — host-side element conversions: bf16/f16 <-> f32 (single and bulk), and a
 * generic load/store of any storable dtype through double or int64. */
#ifndef HIR_RUNNER_CONVERT_H
#define HIR_RUNNER_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#include "dialect/dtype.h"

float    hir_bf16_to_f32(uint16_t h);
uint16_t hir_f32_to_bf16(float f);      /* round to nearest even; NaN stays (quiet) NaN */
float    hir_f16_to_f32(uint16_t h);    /* IEEE binary16: subnormals, inf, nan */
uint16_t hir_f32_to_f16(float f);       /* round to nearest even, overflow -> inf */
/* double -> 16-bit float rounded once (no double rounding through float) */
uint16_t hir_f64_to_bf16(double d);
uint16_t hir_f64_to_f16(double d);

/* bulk conversions of contiguous arrays (branch-free loops the compiler vectorizes) */
void hir_bf16_to_f32_n(float *dst, const uint16_t *src, size_t n);
void hir_f32_to_bf16_n(uint16_t *dst, const float *src, size_t n);
void hir_f16_to_f32_n(float *dst, const uint16_t *src, size_t n);
void hir_f32_to_f16_n(uint16_t *dst, const float *src, size_t n);
void hir_f64_to_bf16_n(uint16_t *dst, const double *src, size_t n);   /* as hir_f64_to_bf16 */

/* 1 for dtypes the runner can store and convert (float, double, half, bfloat, bool, the
 * integers and index); fp8/fp4/complex are not storable on the host. */
int     hir_dtype_is_storable(hir_dtype t);
double  hir_load_f64(const void *p, hir_dtype t);
/* n elements of dtype t, `stride` elements apart from src, into dst as doubles (the CPU
 * backend's strided loads and the data room's GEMM check share it) */
void    hir_load_f64_n(double *dst, const void *src, hir_dtype t, int64_t stride, int64_t n);
void    hir_store_f64(void *p, hir_dtype t, double v);   /* ints: truncate, saturate; bool: v != 0 */
/* integer-exact variants (int64/uint64 beyond 2^53); floats go through double */
int64_t hir_load_i64(const void *p, hir_dtype t);
void    hir_store_i64(void *p, hir_dtype t, int64_t v);
/* n elements of dtype t, `stride` elements apart from src, into dst as int64 (integers exact) */
void    hir_load_i64_n(int64_t *dst, const void *src, hir_dtype t, int64_t stride, int64_t n);

#endif
