/* registry.c — the known backends and which of them this build has. The only file outside a
 * backend's own folder that tests HIR_HAVE_CUDA: a backend that was not built keeps its row
 * with a NULL constructor, so `--device=cuda` can say that this build has no CUDA backend. */
#include <stdio.h>
#include <string.h>

#include "runner/registry/registry.h"
#include "runner/cpu/cpu.h"
#ifdef HIR_HAVE_CUDA
#include "runner/cuda/cuda_backend.h"
#endif

static const hir_backend_entry backends[] = {
    {.name = "cpu", .title = "CPU", .create = hir_backend_cpu_create, .reference = 1,
     .offers = HIR_OFFER_ANY_TEAM_ORDER},
    {.name = "cuda", .title = "CUDA",
#ifdef HIR_HAVE_CUDA
     .create = hir_backend_cuda_create, .device_count = hir_cuda_device_count,
#endif
     .no_device = "no CUDA GPU is visible to this process",
     .offers = HIR_OFFER_KERNELS | HIR_OFFER_GRAPHS},
};
enum { NBACKENDS = (int)(sizeof backends / sizeof backends[0]) };

const hir_backend_entry *hir_registry_find(const char *name)
{
    for (int i = 0; name && i < NBACKENDS; i++)
        if (!strcmp(backends[i].name, name))
            return &backends[i];
    return NULL;
}

const hir_backend_entry *hir_registry_reference(void)
{
    for (int i = 0; i < NBACKENDS; i++)
        if (backends[i].reference)
            return &backends[i];
    return &backends[0];
}

int hir_registry_built(const hir_backend_entry *b)
{
    return b && b->create != NULL;
}

int hir_registry_device_count(const hir_backend_entry *b)
{
    return hir_registry_built(b) && b->device_count ? b->device_count() : 0;
}

int hir_registry_available(const hir_backend_entry *b, char *why, size_t n)
{
    const char *reason = NULL;
    char lack[96];
    if (!hir_registry_built(b)) {
        snprintf(lack, sizeof lack, "this build has no %s backend", b ? b->title : "such");
        reason = lack;
    } else if (b->device_count && b->device_count() <= 0) {
        reason = b->no_device;
    }
    if (reason && why && n)
        snprintf(why, n, "%s", reason);
    return reason == NULL;
}

const hir_backend_entry *hir_registry_default(void)
{
    for (int i = 0; i < NBACKENDS; i++)
        if (backends[i].device_count && hir_registry_available(&backends[i], NULL, 0))
            return &backends[i];
    return hir_registry_reference();
}

const hir_backend_entry *hir_registry_offering(unsigned offer)
{
    for (int i = 0; i < NBACKENDS; i++)
        if (backends[i].offers & offer)
            return &backends[i];
    return NULL;
}

const char *hir_registry_names(char *buf, size_t n)
{
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < NBACKENDS && at < n; i++) {
        const char *sep = i == 0 ? "" : i == NBACKENDS - 1 ? " or " : ", ";
        int k = snprintf(buf + at, n - at, "%s%s", sep, backends[i].name);
        if (k < 0)
            break;
        at += (size_t)k;
    }
    return buf;
}

int hir_registry_create(const hir_backend_entry *b, const hir_backend_config *cfg,
                        hir_backend **out, hir_diag *e)
{
    *out = NULL;
    if (!b)
        return hir_fail(e, "hir_registry_create: no backend entry");
    if (!b->create)
        return hir_fail(e, "hir was built without the %s backend", b->title);
    return b->create(cfg, out, e);
}
