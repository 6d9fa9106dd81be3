/* hir/hir.h — the public C API of hir: read, verify, print and transform nvFuser Host IR
 * (%HostIrContainer text) and run a program on one rank with the CPU reference backend.
 *
 * Every name starts with hirc_ (the library's internal names start with hir_ and are not part
 * of this API). Handles are opaque; every function that can fail returns a hirc_status, and
 * what went wrong is recorded in a hirc_diagnostics list the caller owns (nothing is printed).
 * The library keeps no mutable global state; one handle must not be used by two threads at
 * once. (Parsing, verifying, printing and pipelines on separate handles are independent;
 * concurrent runs have not been tested.)
 *
 * Two libraries implement this header (docs/api.md):
 *   libhir          everything except hirc_run and hirc_output_shapes; needs only libc/libm.
 *   libhir_runtime  hirc_run and hirc_output_shapes (links libhir and the runner, which links
 *                   MPI and BLAS; a one-rank run never initialises MPI, so no mpirun is needed).
 * With CMake: find_package(hir) and link hir::hir (or hir::hir_runtime); with pkg-config:
 * `pkg-config --cflags --libs hir` (or hir-runtime). */
#ifndef HIRC_HIR_H
#define HIRC_HIR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HIRC_VERSION_MAJOR 0
#define HIRC_VERSION_MINOR 1
#define HIRC_VERSION_PATCH 0
#define HIRC_MAX_DIMS 8

/* ---------------------------------------------------------------- status */

typedef enum hirc_status {
    HIRC_OK = 0,
    HIRC_ERR_INVALID_ARGUMENT = 1,  /* a NULL handle, a bad index, a malformed option */
    HIRC_ERR_IO = 2,                /* a file could not be read */
    HIRC_ERR_PARSE = 3,             /* the text is not a valid program (see the diagnostics) */
    HIRC_ERR_VERIFY = 4,            /* the program does not verify (see the diagnostics) */
    HIRC_ERR_PIPELINE = 5,          /* the pipeline text is wrong, or a pass failed */
    HIRC_ERR_RUN = 6,               /* the program could not be run, or failed while running */
    HIRC_ERR_MISMATCH = 7,          /* a buffer's dtype or shape is not the program's */
    HIRC_ERR_NO_MEMORY = 8,
} hirc_status;

/* A static English name of a status ("ok", "parse error", ...). */
const char *hirc_status_string(hirc_status s);
/* "0.1.0" */
const char *hirc_version(void);

/* ---------------------------------------------------------------- diagnostics */

typedef enum hirc_severity { HIRC_NOTE = 0, HIRC_WARNING = 1, HIRC_ERROR = 2 } hirc_severity;

/* One diagnostic. Strings belong to the list and live until it is cleared or destroyed.
 * file is the name given to the parser ("<string>" by default), or "<unknown>" for a
 * diagnostic about no file (IR made by passes, a pipeline's text); line and column are
 * 1-based, 0 when the diagnostic has no location. rendered is
 * the text hir-opt would print for it: "file:line:col: error: message", the source line and a
 * caret line, and its notes, each line ending in '\n'. A note attached to an error or warning
 * follows it in the list (and is part of its rendered text). */
typedef struct hirc_diagnostic {
    hirc_severity severity;
    const char *file;
    int line, column;
    const char *message;
    const char *rendered;
} hirc_diagnostic;

typedef struct hirc_diagnostics hirc_diagnostics;

hirc_status hirc_diagnostics_create(hirc_diagnostics **out);
void        hirc_diagnostics_destroy(hirc_diagnostics *d);        /* NULL is allowed */
void        hirc_diagnostics_clear(hirc_diagnostics *d);
size_t      hirc_diagnostics_count(const hirc_diagnostics *d);
size_t      hirc_diagnostics_error_count(const hirc_diagnostics *d);
/* The i-th diagnostic (0 <= i < count), in the order they were reported. */
hirc_status hirc_diagnostics_get(const hirc_diagnostics *d, size_t i, hirc_diagnostic *out);

/* ---------------------------------------------------------------- programs */

typedef struct hirc_program hirc_program;

/* Parse text[0, len) (a copy is taken; the text need not be NUL-terminated). filename names
 * the text in diagnostics (NULL: "<string>"). On failure *out is NULL, the status is
 * HIRC_ERR_PARSE and diags (which may be NULL to discard them) holds located errors. Warnings
 * of a successful parse are appended too. Parsing does not verify: call hirc_verify. */
hirc_status hirc_parse_string(const char *text, size_t len, const char *filename,
                              hirc_diagnostics *diags, hirc_program **out);
/* Read and parse a file; HIRC_ERR_IO (with a one-line error naming the file) when it cannot
 * be read. */
hirc_status hirc_parse_file(const char *path, hirc_diagnostics *diags, hirc_program **out);
void        hirc_program_destroy(hirc_program *p);              /* NULL is allowed */
/* An independent copy. Until a pipeline has run on p, the copy is parsed from p's own text
 * under its name, so its diagnostics point into the same file; afterwards from p's printed
 * text, named "NAME (after passes)". */
hirc_status hirc_program_copy(const hirc_program *p, hirc_diagnostics *diags, hirc_program **out);

/* Say how to read a tensor whose logical shape the program leaves ambiguous (a device or
 * stream axis that may split the axis after it or be an axis of its own; docs/language.md
 * §12): "T1=2,11*12" lists T1's logical axes in order as the IterDomain numbers of each, '*'
 * between the parts of a split, as hir-opt --logical does. Call it before hirc_verify (which
 * refuses an ambiguous tensor with the readings it allows). HIRC_ERR_VERIFY with a
 * diagnostic when the reading is malformed or does not name each IterDomain of the tensor
 * once. */
hirc_status hirc_set_logical(hirc_program *p, const char *reading, hirc_diagnostics *diags);

/* Run the verifier. Undefined scalars (a symbolic extent nothing defines) are warnings, as
 * in hir-opt; hirc_run treats them as errors unless bound. HIRC_ERR_VERIFY on any error. */
hirc_status hirc_verify(hirc_program *p, hirc_diagnostics *diags);

/* The program's text, exactly as nvFuser prints it, in a NUL-terminated buffer allocated for
 * the caller (release it with hirc_free); *len (when not NULL) gets its length. */
hirc_status hirc_print(const hirc_program *p, char **text, size_t *len);
void        hirc_free(void *ptr);

/* Run a pass pipeline given as text, the grammar of `hir-opt --pass-pipeline`:
 * "pass1,pass2{key=value,key2=value2}". The verifier runs after every pass. On failure the
 * program may be partly rewritten; it should be destroyed, not printed. */
hirc_status hirc_run_pipeline(hirc_program *p, const char *pipeline, hirc_diagnostics *diags);

/* ---------------------------------------------------------------- inputs and outputs */

typedef enum hirc_dtype {
    HIRC_FLOAT32 = 0, HIRC_FLOAT64, HIRC_FLOAT16, HIRC_BFLOAT16, HIRC_BOOL,
    HIRC_INT8, HIRC_INT16, HIRC_INT32, HIRC_INT64,
    HIRC_UINT8, HIRC_UINT16, HIRC_UINT32, HIRC_UINT64,
    HIRC_INDEX,                /* nvfuser_index_t: 64-bit signed, like HIRC_INT64 */
    HIRC_DTYPE_OTHER,          /* a type this API cannot exchange (fp8, complex, ...) */
} hirc_dtype;

const char *hirc_dtype_name(hirc_dtype t);   /* "float32", "bfloat16", ... */
size_t      hirc_dtype_size(hirc_dtype t);   /* bytes per element; 0 for HIRC_DTYPE_OTHER */

/* What the program says about one of its inputs or outputs. name is the value as printed
 * ("T0", "i3"); for a tensor, ndim is the number of its logical axes, the axes a buffer for it
 * has (docs/language.md §12: a split axis counts once, reduction and stride axes are not
 * stored; views still open are decided first, as hirc_verify decides them). Strings live as
 * long as the program. */
typedef struct hirc_value_info {
    const char *name;
    int is_scalar;
    hirc_dtype dtype;
    int ndim;
} hirc_value_info;

size_t      hirc_num_inputs(const hirc_program *p);
size_t      hirc_num_outputs(const hirc_program *p);
hirc_status hirc_input_info(const hirc_program *p, size_t i, hirc_value_info *out);
hirc_status hirc_output_info(const hirc_program *p, size_t i, hirc_value_info *out);

/* ---------------------------------------------------------------- running (libhir_runtime) */

/* A caller-owned, contiguous row-major buffer. A scalar input is a buffer of ndim 0 holding
 * one int64_t (dtype HIRC_INT64 or HIRC_INDEX). */
typedef struct hirc_tensor {
    void *data;
    hirc_dtype dtype;
    int ndim;
    int64_t shape[HIRC_MAX_DIMS];
} hirc_tensor;

/* A value for a free scalar of the program, by its printed name ("i0"), like hir-run's
 * --bind i0=1024. */
typedef struct hirc_binding {
    const char *name;
    int64_t value;
} hirc_binding;

typedef struct hirc_run_options {
    int num_streams;               /* value of numberOfStreams; 0: 4 */
    const hirc_binding *bindings;  /* free scalars; may be NULL */
    size_t nbindings;
    /* GEMM tuning as hir-run --gemm-tune: NULL or "off", "on", or a cache file (a path with a
     * '/' or a '.'); anything else is HIRC_ERR_INVALID_ARGUMENT. The CPU backend of hirc_run
     * accepts it and ignores it (docs/cuda-backend.md, "GEMM tuning"). */
    const char *gemm_tune;
    /* Communication priority as hir-run --comm-priority: 0 default, 1 high (communication on
     * streams of the device's greatest priority); anything else is HIRC_ERR_INVALID_ARGUMENT.
     * The CPU backend of hirc_run accepts it and ignores it (docs/cuda-backend.md,
     * "Communication priority"). */
    int comm_priority;
} hirc_run_options;

/* The dtype and shape each output buffer must have when the program runs with these inputs
 * (their data pointers are not read): fills outputs[0, nout) (data is set to NULL). Extents
 * spelled as a bare symbol (iS0{i0}) are taken from the inputs' shapes. nout must be
 * hirc_num_outputs(p). */
hirc_status hirc_output_shapes(hirc_program *p, const hirc_tensor *inputs, size_t nin,
                               hirc_tensor *outputs, size_t nout,
                               const hirc_run_options *opts, hirc_diagnostics *diags);

/* Run the program once on one rank (rank 0 of a world of one) with the CPU reference backend.
 * inputs[i] is container input i and outputs[i] container output i; each dtype and shape must
 * be what the program needs (HIRC_ERR_MISMATCH names the first that is not). Inputs are
 * copied in and not modified; outputs are written only on success. The program is verified
 * first (HIRC_ERR_VERIFY) and must name no device other than 0 (HIRC_ERR_RUN). opts may be
 * NULL. */
hirc_status hirc_run(hirc_program *p, const hirc_tensor *inputs, size_t nin,
                     hirc_tensor *outputs, size_t nout, const hirc_run_options *opts,
                     hirc_diagnostics *diags);

#ifdef __cplusplus
}
#endif

#endif
