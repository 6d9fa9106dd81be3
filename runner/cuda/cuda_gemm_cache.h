/* cuda_gemm_cache.h — the cache file of tuned GEMM algorithms (hir-run --gemm-tune=FILE): one
 * winner a line, parsed and formatted here in plain C (no CUDA header), so that a host-only
 * unit test covers it (test/unit/test_gemm_cache.c). cuda_gemm.c owns the tuning itself.
 *
 * A line (fields separated by one space; '#' starts a comment line):
 *   v1 CUBLASLT_VERSION DEVICE WORKSPACE K0,K1,...,K19 ALGO MS
 * DEVICE is the device's name with every byte outside [A-Za-z0-9._-] written as '_'
 * ("NVIDIA_H100_80GB_HBM3"), WORKSPACE the cuBLASLt workspace in bytes, K0..K19 the plan's key
 * (cuda_gemm.c: sizes, leading dimensions, transposes, dtypes, batch, batch strides, bias,
 * alignments), ALGO the 64 bytes of cublasLtMatmulAlgo_t in hex (128 digits), MS the median
 * time of the winner in milliseconds (informative). A line of another cuBLASLt version or
 * device is foreign: kept in the file, never used. A malformed line is ignored (counted, the
 * first reason kept for a warning). */
#ifndef HIR_CUDA_GEMM_CACHE_H
#define HIR_CUDA_GEMM_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "support/diag.h"

#define HIR_GEMM_KEY_LEN 20
#define HIR_GEMM_ALGO_BYTES 64
#define HIR_GEMM_CACHE_LINE_MAX 1024

typedef struct hir_gemm_cache_entry {
    int64_t key[HIR_GEMM_KEY_LEN];
    uint64_t workspace;
    unsigned char algo[HIR_GEMM_ALGO_BYTES];
    double ms;
} hir_gemm_cache_entry;

/* Who reads and writes the cache: the cuBLASLt version and the device's name as a line spells
 * it (hir_gemm_cache_ident). */
typedef struct hir_gemm_cache_ident {
    unsigned long long version;
    char device[96];
} hir_gemm_cache_ident;

typedef struct hir_gemm_cache {
    char *path;                      /* malloc'd */
    hir_gemm_cache_ident id;
    hir_gemm_cache_entry *entries;   /* this device's and version's, in file order */
    int n, cap;
    int ignored;                     /* malformed lines */
    int foreign;                     /* lines of another device or version */
    char note[200];                  /* "FILE:LINE: why" of the first malformed line */
} hir_gemm_cache;

/* The ident of a cuBLASLt version and a device name (spaces and other bytes become '_'). */
void hir_gemm_cache_ident_init(hir_gemm_cache_ident *id, unsigned long long version,
                               const char *device_name);

/* One line (without its newline): 1 an entry of id's device and version (into *out), 0 a
 * comment, a blank line or a foreign line (*foreign set to 1 for the last), -1 malformed (why
 * in why). */
int hir_gemm_cache_parse_line(const char *line, const hir_gemm_cache_ident *id,
                              hir_gemm_cache_entry *out, int *foreign, char *why, size_t n);

/* The line of an entry (with its newline) into buf; -1 when buf is too small. */
int hir_gemm_cache_format_line(const hir_gemm_cache_entry *en, const hir_gemm_cache_ident *id,
                               char *buf, size_t n);

/* Reads the file at path (a missing file is an empty cache). -1 only when the file exists but
 * cannot be read, or out of memory. */
int hir_gemm_cache_load(hir_gemm_cache *c, const char *path, const hir_gemm_cache_ident *id,
                        hir_diag *e);

/* The entry of key and workspace, or NULL (the last one in the file wins). */
const hir_gemm_cache_entry *hir_gemm_cache_find(const hir_gemm_cache *c, const int64_t *key,
                                                uint64_t workspace);

/* Adds en to c and to the file: the file as it is now plus the new line, written to a
 * temporary file renamed over it (support's hir_replace), so a reader never sees half a
 * line. */
int hir_gemm_cache_append(hir_gemm_cache *c, const hir_gemm_cache_entry *en, hir_diag *e);

void hir_gemm_cache_free(hir_gemm_cache *c);

#endif
