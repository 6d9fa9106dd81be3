/* cuda_user_kernel.c — user-supplied kernels for LaunchKernel (`hir-run --kernel GROUP=FILE`):
 * a cubin loaded as is, or PTX / LTO-IR / fatbin linked for the running GPU by nvJitLink.
 * The kernel takes its inputs' data pointers, then its outputs', then `long long n`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvJitLink.h>

#include "runner/cuda/cuda_internal.h"

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

static int read_file(const char *path, char **data, size_t *size, hir_diag *e)
{
    FILE *f = fopen(path, "rb");
    if (!f) return hir_fail(e, "cannot open kernel file %s", path), -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)(n > 0 ? n : 0) + 1);
    if (!p || n < 0 || fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        fclose(f);
        return hir_fail(e, "cannot read kernel file %s", path), -1;
    }
    p[n] = 0;       /* PTX must be NUL-terminated for nvJitLink */
    fclose(f);
    *data = p;
    *size = (size_t)n + (ends_with(path, ".ptx") ? 1 : 0);
    return 0;
}

/* Sidecar "FILE.launch": `key=value` lines; unknown keys are an error (typos must not pass). */
static int read_sidecar(const char *path, hir_cuda_kernel_opts *o, char *entry, size_t esz,
                        hir_diag *e)
{
    char side[1024];
    snprintf(side, sizeof side, "%s.launch", path);
    FILE *f = fopen(side, "r");
    if (!f) return 0;
    char line[256];
    int ln = 0;
    while (fgets(line, sizeof line, f)) {
        ln++;
        char *nl = strpbrk(line, "\r\n");
        if (nl) *nl = 0;
        if (!line[0] || line[0] == '#') continue;
        char *eq = strchr(line, '=');
        if (!eq) goto bad;
        *eq = 0;
        const char *k = line, *v = eq + 1;
        if (!strcmp(k, "entry")) snprintf(entry, esz, "%s", v);
        else if (!strcmp(k, "block")) o->block = (unsigned)strtoul(v, NULL, 0);
        else if (!strcmp(k, "grid")) o->grid = (unsigned)strtoul(v, NULL, 0);
        else if (!strcmp(k, "shared")) o->shared_bytes = (unsigned)strtoul(v, NULL, 0);
        else goto bad;
    }
    fclose(f);
    return 0;
bad:
    fclose(f);
    return hir_fail(e, "%s:%d: expected entry=, block=, grid= or shared=", side, ln), -1;
}

int hir_cuda_load_user_kernel(hir_backend *be, int group, const char *path,
                              const hir_cuda_kernel_opts *opts, hir_diag *e)
{
    if (!be || strcmp(be->ops->name, "cuda"))
        return hir_fail(e, "user kernels need the CUDA backend"), -1;
    hir_cu_backend *cb = hir_cu(be);
    hir_cuda_kernel_opts o = {0};
    char entry[128] = "kernel";
    if (opts) {
        o = *opts;
        if (opts->entry) snprintf(entry, sizeof entry, "%s", opts->entry);
    } else if (read_sidecar(path, &o, entry, sizeof entry, e) < 0) {
        return -1;
    }
    char *data = NULL;
    size_t size = 0;
    if (read_file(path, &data, &size, e) < 0) return -1;
    CUmodule mod = NULL;
    int rc;
    if (ends_with(path, ".cubin")) {
        int st = cb->drv.ModuleLoadData(&mod, data);
        rc = st ? hir_fail(e, "cuModuleLoadData(%s): %s", path, hir_cu_str_cu(st)), -1 : 0;
    } else {
        int kind = ends_with(path, ".ptx") ? NVJITLINK_INPUT_PTX
                 : ends_with(path, ".fatbin") ? NVJITLINK_INPUT_FATBIN
                 : (ends_with(path, ".ltoir") || ends_with(path, ".lto") ||
                    ends_with(path, ".nvvm")) ? NVJITLINK_INPUT_LTOIR : -1;
        if (kind < 0) {
            free(data);
            return hir_fail(e, "%s: unknown kernel file type (expected .cubin, .ptx, "
                                    ".ltoir or .fatbin)", path), -1;
        }
        const void *in[1] = {data};
        rc = hir_cu_link_module(cb, in, &size, &kind, 1, &mod, e);
    }
    free(data);
    if (rc < 0) return -1;
    CUfunction fn;
    int st = cb->drv.ModuleGetFunction(&fn, mod, entry);
    if (st) {
        cb->drv.ModuleUnload(mod);
        return hir_fail(e, "cuModuleGetFunction(%s): %s: no kernel named \"%s\" (set "
                                "entry= in %s.launch)", path, hir_cu_str_cu(st), entry, path),
               -1;
    }
    if (o.shared_bytes > 48 * 1024)
        HIR_CK(e, cu, cb->drv.FuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                (int)o.shared_bytes));
    hir_cu_user_kernel *k = NULL;
    for (int i = 0; i < cb->nukernels; i++)
        if (cb->ukernels[i].group == group) {
            k = &cb->ukernels[i];
            cb->drv.ModuleUnload(k->mod);
        }
    if (!k) {
        if (hir_cu_grow((void **)&cb->ukernels, &cb->cap_ukernels, cb->nukernels,
                        sizeof(hir_cu_user_kernel), e) < 0) {
            cb->drv.ModuleUnload(mod);
            return -1;
        }
        k = &cb->ukernels[cb->nukernels++];
    }
    k->group = group;
    k->mod = mod;
    k->fn = fn;
    k->opts = o;
    snprintf(k->entry, sizeof k->entry, "%s", entry);
    k->opts.entry = k->entry;
    return 0;
}

int hir_cuda_launch_user_kernel(hir_backend *be, hir_stream *s, int group,
                                const hir_view *const *inputs, int ninputs,
                                const hir_view *const *outputs, int noutputs, hir_diag *e)
{
    if (!be || strcmp(be->ops->name, "cuda"))
        return hir_fail(e, "user kernels need the CUDA backend"), -1;
    hir_cu_backend *cb = hir_cu(be);
    hir_cu_user_kernel *k = NULL;
    for (int i = 0; i < cb->nukernels; i++)
        if (cb->ukernels[i].group == group) k = &cb->ukernels[i];
    if (!k)
        return hir_fail(e, "LaunchKernel: no kernel loaded for group %d (hir-run --kernel "
                                "%d=FILE)", group, group), -1;
    int np = ninputs + noutputs;
    void **ptrs = calloc((size_t)np + 1, sizeof *ptrs);
    void **args = calloc((size_t)np + 1, sizeof *args);
    if (!ptrs || !args) {
        free(ptrs);
        free(args);
        return hir_fail(e, "out of host memory"), -1;
    }
    for (int i = 0; i < ninputs; i++) ptrs[i] = inputs[i]->data;
    for (int i = 0; i < noutputs; i++) ptrs[ninputs + i] = outputs[i]->data;
    long long n = noutputs ? hir_cu_numel(outputs[0]) : ninputs ? hir_cu_numel(inputs[0]) : 0;
    for (int i = 0; i < np; i++) args[i] = &ptrs[i];
    args[np] = &n;
    unsigned block = k->opts.block ? k->opts.block : 256;
    unsigned long long g = k->opts.grid ? k->opts.grid : (unsigned long long)(n + block - 1) / block;
    if (g < 1) g = 1;
    if (g > 0x7fffffffull) g = 0x7fffffffull;
    size_t *sizes = calloc((size_t)np + 1, sizeof *sizes);
    int rc = -1;
    if (!sizes) {
        hir_fail(e, "out of host memory");
    } else {
        for (int i = 0; i < np; i++) sizes[i] = sizeof ptrs[i];
        sizes[np] = sizeof n;
        rc = hir_cu_launch(cb, k->fn, (unsigned)g, 1, 1, block, 1, 1, k->opts.shared_bytes,
                           (CUstream)s->s, args, sizes, np + 1, e);
    }
    free(sizes);
    free(ptrs);
    free(args);
    return rc;
}

void hir_cu_user_kernels_destroy(hir_cu_backend *cb)
{
    for (int i = 0; i < cb->nukernels; i++)
        if (cb->ukernels[i].mod && cb->drv.ModuleUnload) cb->drv.ModuleUnload(cb->ukernels[i].mod);
    free(cb->ukernels);
    cb->ukernels = NULL;
    cb->nukernels = 0;
}
