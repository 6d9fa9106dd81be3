/* api.c — the public C API of include/hir/hir.h that libhir implements: diagnostics lists,
 * parsing, verifying, printing, pass pipelines and the description of a program's inputs and
 * outputs. Nothing here prints or exits: diagnostics are rendered into strings
 * (open_memstream) and handed to the caller's list. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "dialect/hir.h"
#include "parser/parser.h"
#include "passes/passes.h"

const char *hirc_version(void) { return HIR_VERSION; }

const char *hirc_status_string(hirc_status s)
{
    switch (s) {
    case HIRC_OK: return "ok";
    case HIRC_ERR_INVALID_ARGUMENT: return "invalid argument";
    case HIRC_ERR_IO: return "input/output error";
    case HIRC_ERR_PARSE: return "parse error";
    case HIRC_ERR_VERIFY: return "verification error";
    case HIRC_ERR_PIPELINE: return "pass pipeline error";
    case HIRC_ERR_RUN: return "run error";
    case HIRC_ERR_MISMATCH: return "buffer does not match the program";
    case HIRC_ERR_NO_MEMORY: return "out of memory";
    }
    return "unknown status";
}

/* ---------------------------------------------------------------- diagnostics */

hirc_status hirc_diagnostics_create(hirc_diagnostics **out)
{
    if (!out)
        return HIRC_ERR_INVALID_ARGUMENT;
    *out = calloc(1, sizeof **out);
    return *out ? HIRC_OK : HIRC_ERR_NO_MEMORY;
}

void hirc_diagnostics_clear(hirc_diagnostics *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n; i++) {
        free(d->v[i].file);
        free(d->v[i].msg);
        free(d->v[i].rendered);
    }
    d->n = 0;
    d->errors = 0;
}

void hirc_diagnostics_destroy(hirc_diagnostics *d)
{
    if (!d)
        return;
    hirc_diagnostics_clear(d);
    free(d->v);
    free(d);
}

size_t hirc_diagnostics_count(const hirc_diagnostics *d) { return d ? d->n : 0; }
size_t hirc_diagnostics_error_count(const hirc_diagnostics *d) { return d ? d->errors : 0; }

hirc_status hirc_diagnostics_get(const hirc_diagnostics *d, size_t i, hirc_diagnostic *out)
{
    if (!d || !out || i >= d->n)
        return HIRC_ERR_INVALID_ARGUMENT;
    const hirc_diag_item *it = &d->v[i];
    out->severity = it->sev;
    out->file = it->file;
    out->line = it->line;
    out->column = it->col;
    out->message = it->msg;
    out->rendered = it->rendered;
    return HIRC_OK;
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s);
    char *r = malloc(n + 1);
    if (r)
        memcpy(r, s, n + 1);
    return r;
}

/* Append one item; takes ownership of rendered (freed on failure). */
static hirc_status push(hirc_diagnostics *d, hirc_severity sev, const char *file, int line,
                        int col, const char *msg, char *rendered)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 8;
        hirc_diag_item *v = realloc(d->v, cap * sizeof *v);
        if (!v) {
            free(rendered);
            return HIRC_ERR_NO_MEMORY;
        }
        d->v = v;
        d->cap = cap;
    }
    hirc_diag_item *it = &d->v[d->n];
    it->sev = sev;
    it->line = line;
    it->col = col;
    it->file = dup_str(file ? file : "<unknown>");
    it->msg = dup_str(msg);
    it->rendered = rendered;
    if (!it->file || !it->msg || !it->rendered) {
        free(it->file);
        free(it->msg);
        free(it->rendered);
        return HIRC_ERR_NO_MEMORY;
    }
    d->n++;
    if (sev == HIRC_ERROR)
        d->errors++;
    return HIRC_OK;
}

static hirc_severity sev_public(hir_severity s)
{
    return s == HIR_ERROR ? HIRC_ERROR : s == HIR_WARNING ? HIRC_WARNING : HIRC_NOTE;
}

/* One entry (with_notes: and its notes) as hir_diag_print_entry prints it. */
static char *render(const hir_diag_entry *e, bool with_notes)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    hir_diag_entry one = *e;
    if (!with_notes)
        one.notes = NULL;
    hir_diag_print_entry(f, &one);
    if (fclose(f)) {
        free(buf);
        return NULL;
    }
    return buf;
}

static hirc_status take_entry(hirc_diagnostics *diags, const hir_diag_entry *e, bool with_notes)
{
    int line = 0, col = 0;
    const char *file = NULL;
    if (e->loc.src) {
        /* the source is the caller's parse buffer; line starts are computed lazily in it */
        hir_source_linecol((hir_source *)e->loc.src, e->loc.begin, &line, &col);
        file = e->loc.src->name;
    }
    char *r = render(e, with_notes);
    if (!r)
        return HIRC_ERR_NO_MEMORY;
    return push(diags, sev_public(e->sev), file, line, col, e->msg, r);
}

hirc_status hirc__diags_take(hirc_diagnostics *diags, hir_diag *d)
{
    hirc_status st = HIRC_OK;
    for (const hir_diag_entry *e = d->first; diags && e && st == HIRC_OK; e = e->next) {
        st = take_entry(diags, e, true);
        for (const hir_diag_entry *n = e->notes; n && st == HIRC_OK; n = n->next)
            st = take_entry(diags, n, false);
    }
    if (diags && st == HIRC_OK && d->lost)
        st = hirc__diags_error(diags, HIRC_OK, NULL,
                               "out of memory: %d diagnostic%s could not be kept", d->lost,
                               d->lost == 1 ? "" : "s");
    hir_diag_fini(d);
    d->errors = d->warnings = d->lost = 0;
    return st;
}

hirc_status hirc__diags_located(hirc_diagnostics *diags, hirc_status st, const char *file,
                                int line, int col, const char *msg)
{
    if (!diags)
        return st;
    size_t n = strlen(file) + strlen(msg) + 64;
    char *r = malloc(n);
    if (!r)
        return HIRC_ERR_NO_MEMORY;
    snprintf(r, n, "%s:%d:%d: error: %s\n", file, line, col, msg);
    hirc_status pst = push(diags, HIRC_ERROR, file, line, col, msg, r);
    return pst == HIRC_OK ? st : pst;
}

hirc_status hirc__diags_error(hirc_diagnostics *diags, hirc_status st, const char *file,
                              const char *fmt, ...)
{
    if (!diags)
        return st;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t n = strlen(file ? file : "") + strlen(msg) + 16;
    char *r = malloc(n);
    if (!r)
        return HIRC_ERR_NO_MEMORY;
    if (file)
        snprintf(r, n, "%s: error: %s\n", file, msg);
    else
        snprintf(r, n, "error: %s\n", msg);
    hirc_status pst = push(diags, HIRC_ERROR, file, 0, 0, msg, r);
    return pst == HIRC_OK ? st : pst;
}

/* ---------------------------------------------------------------- programs */

static void program_free(hirc_program *h)
{
    if (!h)
        return;
    hir_program_free(h->p);
    hir_source_fini(&h->src);
    for (size_t i = 0; i < h->nstrings; i++)
        free(h->strings[i]);
    free(h->strings);
    free(h->text);
    free(h->name);
    free(h);
}

void hirc_program_destroy(hirc_program *p) { program_free(p); }

/* Parse h->text (already NUL-padded) named h->name. */
static hirc_status parse_into(hirc_program *h, size_t len, hirc_diagnostics *diags,
                              hirc_program **out)
{
    hir_source_init(&h->src, h->name, h->text, len);
    hir_diag d;
    hir_diag_init(&d, NULL);
    d.keep = true;
    int rc = hir_parse(&h->src, &d, &h->p);
    hirc_status ts = hirc__diags_take(diags, &d);
    if (rc == HIR_ENOMEM) {
        ts = hirc__diags_error(diags, HIRC_ERR_NO_MEMORY, NULL,
                               "out of memory (while parsing %s)", h->name);
        program_free(h);
        return ts;
    }
    if (rc || !h->p) {
        program_free(h);
        return ts == HIRC_OK ? HIRC_ERR_PARSE : ts;
    }
    *out = h;
    return HIRC_OK;
}

hirc_status hirc_parse_string(const char *text, size_t len, const char *filename,
                              hirc_diagnostics *diags, hirc_program **out)
{
    if (!out)
        return HIRC_ERR_INVALID_ARGUMENT;
    *out = NULL;
    if (!text && len)
        return hirc__diags_error(diags, HIRC_ERR_INVALID_ARGUMENT, filename,
                                 "hirc_parse_string: NULL text");
    if (len > SIZE_MAX - 2)
        return HIRC_ERR_INVALID_ARGUMENT;
    hirc_program *h = calloc(1, sizeof *h);
    if (!h)
        return HIRC_ERR_NO_MEMORY;
    h->name = dup_str(filename ? filename : "<string>");
    h->text = malloc(len + 2);   /* the scanner needs two NUL bytes after the text */
    if (!h->name || !h->text) {
        program_free(h);
        return HIRC_ERR_NO_MEMORY;
    }
    if (len)
        memcpy(h->text, text, len);
    h->text[len] = h->text[len + 1] = 0;
    return parse_into(h, len, diags, out);
}

hirc_status hirc_parse_file(const char *path, hirc_diagnostics *diags, hirc_program **out)
{
    if (!out || !path)
        return HIRC_ERR_INVALID_ARGUMENT;
    *out = NULL;
    hirc_program *h = calloc(1, sizeof *h);
    if (!h)
        return HIRC_ERR_NO_MEMORY;
    h->name = dup_str(path);
    if (!h->name) {
        program_free(h);
        return HIRC_ERR_NO_MEMORY;
    }
    char err[512];
    size_t len = 0;
    /* hir_input_read reads standard input for "-"; here "-" is a file of that name */
    /* read, not mapped (support/input.h: a library does not map), so the text is malloc'd and
     * h keeps it */
    hir_input in;
    if (hir_input_read(&in, strcmp(path, "-") ? path : "./-", 0, err, sizeof err)) {
        program_free(h);
        return hirc__diags_error(diags, HIRC_ERR_IO, path, "%s", err);
    }
    h->text = in.text;
    len = in.len;
    return parse_into(h, len, diags, out);
}

hirc_status hirc_program_copy(const hirc_program *h, hirc_diagnostics *diags, hirc_program **out)
{
    if (!h || !h->p || !out)
        return HIRC_ERR_INVALID_ARGUMENT;
    *out = NULL;
    if (!h->rewritten)   /* the same text under the same name: the same locations */
        return hirc_parse_string(h->text, h->src.len, h->name, diags, out);
    char *text = NULL;
    size_t len = 0;
    hirc_status st = hirc_print(h, &text, &len);
    if (st != HIRC_OK)
        return st;
    size_t n = strlen(h->name) + 32;
    char *name = malloc(n);
    if (!name) {
        free(text);
        return HIRC_ERR_NO_MEMORY;
    }
    snprintf(name, n, "%s (after passes)", h->name);
    st = hirc_parse_string(text, len, name, diags, out);
    if (st == HIRC_OK)
        (*out)->rewritten = true;
    free(name);
    free(text);
    return st;
}

hirc_status hirc_set_logical(hirc_program *h, const char *reading, hirc_diagnostics *diags)
{
    if (!h || !h->p || !reading)
        return HIRC_ERR_INVALID_ARGUMENT;
    hir_diag d;
    hir_diag_init(&d, NULL);
    d.keep = true;
    int rc = hir_shape_read_as(h->p, reading, &d);
    int nerr = d.errors;
    hirc_status ts = hirc__diags_take(diags, &d);
    if (rc == HIR_ENOMEM)
        return hirc__diags_error(diags, HIRC_ERR_NO_MEMORY, NULL,
                                 "out of memory (while reading a shape of %s)", h->name);
    if (rc || nerr)
        return HIRC_ERR_VERIFY;
    return ts;
}

hirc_status hirc_verify(hirc_program *h, hirc_diagnostics *diags)
{
    if (!h || !h->p)
        return HIRC_ERR_INVALID_ARGUMENT;
    hir_diag d;
    hir_diag_init(&d, NULL);
    d.keep = true;
    hir_verify_opts vo = {false, NULL, 0};
    int rc = hir_program_verify(h->p, &vo, &d);
    int nerr = d.errors;
    hirc_status ts = hirc__diags_take(diags, &d);
    if (rc == HIR_ENOMEM)
        return hirc__diags_error(diags, HIRC_ERR_NO_MEMORY, NULL,
                                 "out of memory (while verifying %s)", h->name);
    if (rc || nerr)
        return HIRC_ERR_VERIFY;
    return ts;
}

void hirc_free(void *ptr) { free(ptr); }

hirc_status hirc_print(const hirc_program *h, char **text, size_t *len)
{
    if (!h || !h->p || !text)
        return HIRC_ERR_INVALID_ARGUMENT;
    *text = NULL;
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        return HIRC_ERR_NO_MEMORY;
    hir_program_print(h->p, f);
    int bad = ferror(f);
    if (fclose(f) || bad) {
        free(buf);
        return HIRC_ERR_NO_MEMORY;
    }
    *text = buf;
    if (len)
        *len = n;
    return HIRC_OK;
}

hirc_status hirc_run_pipeline(hirc_program *h, const char *pipeline, hirc_diagnostics *diags)
{
    if (!h || !h->p || !pipeline)
        return HIRC_ERR_INVALID_ARGUMENT;
    hir_pipeline pl;
    memset(&pl, 0, sizeof pl);
    hir_diag pd;                 /* kept, not printed: the message goes to diags */
    hir_diag_init(&pd, NULL);
    pd.keep = true;
    if (hir_pipeline_parse(&pl, pipeline, &pd)) {
        const char *msg = hir_diag_first_error(&pd);
        hirc_status st = hirc__diags_error(diags, HIRC_ERR_PIPELINE, NULL, "%s",
                                           msg ? msg : "out of memory");
        hir_diag_fini(&pd);
        hir_pipeline_fini(&pl);
        return st;
    }
    hir_diag_fini(&pd);
    hir_pipeline_opts po;
    memset(&po, 0, sizeof po);
    po.verify_each = 1;
    hir_diag d;
    hir_diag_init(&d, NULL);
    d.keep = true;
    h->rewritten = true;
    int rc = hir_pipeline_run(h->p, &pl, &po, &d);
    int nerr = d.errors;
    hir_pipeline_fini(&pl);
    hirc_status ts = hirc__diags_take(diags, &d);
    if (rc == HIR_ENOMEM)
        return hirc__diags_error(diags, HIRC_ERR_NO_MEMORY, NULL,
                                 "out of memory (while running the passes on %s)", h->name);
    if (rc || nerr)
        return HIRC_ERR_PIPELINE;
    return ts;
}

/* ---------------------------------------------------------------- inputs and outputs */

hirc_dtype hirc__dtype_public(hir_dtype t)
{
    switch (t) {
    case HIR_DT_FLOAT: return HIRC_FLOAT32;
    case HIR_DT_DOUBLE: return HIRC_FLOAT64;
    case HIR_DT_HALF: return HIRC_FLOAT16;
    case HIR_DT_BFLOAT: return HIRC_BFLOAT16;
    case HIR_DT_BOOL: return HIRC_BOOL;
    case HIR_DT_INT8: return HIRC_INT8;
    case HIR_DT_INT16: return HIRC_INT16;
    case HIR_DT_INT32: return HIRC_INT32;
    case HIR_DT_INT64: return HIRC_INT64;
    case HIR_DT_UINT8: return HIRC_UINT8;
    case HIR_DT_UINT16: return HIRC_UINT16;
    case HIR_DT_UINT32: return HIRC_UINT32;
    case HIR_DT_UINT64: return HIRC_UINT64;
    case HIR_DT_INDEX: return HIRC_INDEX;
    default: return HIRC_DTYPE_OTHER;
    }
}

int hirc__dtype_internal(hirc_dtype t, hir_dtype *out)
{
    for (int i = 0; i < HIR_DT_COUNT; i++)
        if (hirc__dtype_public((hir_dtype)i) == t && t != HIRC_DTYPE_OTHER) {
            *out = (hir_dtype)i;
            return 0;
        }
    return -1;
}

static const char *const dtype_names[] = {
    "float32", "float64", "float16", "bfloat16", "bool", "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64", "index", "other",
};

const char *hirc_dtype_name(hirc_dtype t)
{
    return (unsigned)t <= HIRC_DTYPE_OTHER ? dtype_names[t] : "invalid";
}

size_t hirc_dtype_size(hirc_dtype t)
{
    hir_dtype it;
    return hirc__dtype_internal(t, &it) ? 0 : hir_dtype_size(it);
}

const char *hirc__value_name(const hir_value *v, char *buf, size_t n)
{
    const hir_tensor *t = hir_value_tensor((hir_value *)v);
    const hir_scalar *s = hir_value_scalar((hir_value *)v);
    if (t)
        snprintf(buf, n, "T%lld", (long long)t->number);
    else if (s && s->kind == HIR_SC_SYMBOL)
        snprintf(buf, n, "%s%lld", s->name, (long long)s->number);
    else if (s && s->kind == HIR_SC_NAMED)
        snprintf(buf, n, "%s", s->name);
    else
        snprintf(buf, n, "value");
    return buf;
}

/* The logical axes of t's view without the reductions (a split axis is one). */
int hirc__tensor_ndim(const hir_tensor *t)
{
    int n = 0;
    for (int i = 0; i < t->shape.naxes; i++) {
        hir_shape_axis a;
        hir_shape_axis_get(t, i, &a);
        n += a.dim;
    }
    return n;
}

size_t hirc_num_inputs(const hirc_program *h) { return h && h->p ? (size_t)h->p->inputs.n : 0; }
size_t hirc_num_outputs(const hirc_program *h) { return h && h->p ? (size_t)h->p->outputs.n : 0; }

static hirc_status value_info(const hirc_program *hc, const hir_ptrvec *vec, size_t i,
                              hirc_value_info *out)
{
    hirc_program *h = (hirc_program *)hc;   /* the name cache is not part of the value */
    if (!h || !h->p || !out || i >= (size_t)vec->n)
        return HIRC_ERR_INVALID_ARGUMENT;
    const hir_value *v = vec->items[i];
    char nm[128];
    hirc__value_name(v, nm, sizeof nm);
    char *name = NULL;
    for (size_t k = 0; k < h->nstrings && !name; k++)   /* each name is kept once */
        if (!strcmp(h->strings[k], nm))
            name = h->strings[k];
    if (!name && h->nstrings == h->capstrings) {
        size_t cap = h->capstrings ? 2 * h->capstrings : 8;
        char **s = realloc(h->strings, cap * sizeof *s);
        if (!s)
            return HIRC_ERR_NO_MEMORY;
        h->strings = s;
        h->capstrings = cap;
    }
    if (!name) {
        if (!(name = dup_str(nm)))
            return HIRC_ERR_NO_MEMORY;
        h->strings[h->nstrings++] = name;
    }
    memset(out, 0, sizeof *out);
    out->name = name;
    const hir_tensor *t = hir_value_tensor((hir_value *)v);
    if (t && t->shape.state == HIR_SHAPE_OPEN) {
        /* ndim counts logical axes: decide the views still open, as hirc_verify would (an
         * ambiguous one stays open and is reported by hirc_verify) */
        hir_diag d;
        hir_diag_init(&d, NULL);
        d.keep = true;
        int rc = hir_program_shapes(h->p, NULL, 0, &d);
        hir_diag_fini(&d);
        if (rc == HIR_ENOMEM)
            return HIRC_ERR_NO_MEMORY;
    }
    if (t) {
        out->dtype = hirc__dtype_public(t->dtype);
        out->ndim = hirc__tensor_ndim(t);
    } else {
        out->is_scalar = 1;
        out->dtype = hirc__dtype_public(hir_value_scalar((hir_value *)v)->dtype);
    }
    return HIRC_OK;
}

hirc_status hirc_input_info(const hirc_program *h, size_t i, hirc_value_info *out)
{
    return h && h->p ? value_info(h, &h->p->inputs, i, out) : HIRC_ERR_INVALID_ARGUMENT;
}

hirc_status hirc_output_info(const hirc_program *h, size_t i, hirc_value_info *out)
{
    return h && h->p ? value_info(h, &h->p->outputs, i, out) : HIRC_ERR_INVALID_ARGUMENT;
}
