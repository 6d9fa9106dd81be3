/* registry.h — the registry room: which backends this build has, and creating one.
 * It owns the list of known backends (runner/registry/registry.c), the only place besides a
 * backend's own folder that names a backend or knows which were built. It may use the backend
 * table (runner/backend/), the backends' constructors (runner/cpu/, runner/cuda/) and support/.
 * Everything above it (the job, hir-run) asks it, never a backend's name. */
#ifndef HIR_RUNNER_REGISTRY_H
#define HIR_RUNNER_REGISTRY_H

#include <stddef.h>

#include "runner/backend/backend.h"

/* What a known backend offers when it is built (messages say which backend a feature needs). */
enum {
    HIR_OFFER_KERNELS = 1u << 0,   /* user kernels for LaunchKernel (ops->kernels) */
    HIR_OFFER_GRAPHS = 1u << 1,    /* capture and replay (ops->graph) */
    /* collectives of overlapping teams posted in any order: a post never waits for the team
     * (each collective is posted once its team has agreed on it). A backend without it runs
     * a rank's collectives one after another, so the job refuses cyclic team orders before
     * making it (hir_check_team_order) */
    HIR_OFFER_ANY_TEAM_ORDER = 1u << 2,
};

typedef struct hir_backend_entry {
    const char *name;              /* the --device spelling: "cpu" */
    const char *title;             /* in messages: "CPU" */
    /* NULL: this build lacks the backend */
    int (*create)(const hir_backend_config *cfg, hir_backend **out, hir_diag *e);
    /* devices this process sees; NULL for a backend that runs on the host (always available) */
    int (*device_count)(void);
    const char *no_device;         /* why a built backend with no device cannot run */
    unsigned offers;               /* HIR_OFFER_* */
    int reference;                 /* the reference backend that --check compares against */
} hir_backend_entry;

/* The entry named `name`, NULL when no backend has that name. */
const hir_backend_entry *hir_registry_find(const char *name);
/* The reference backend (always built). */
const hir_backend_entry *hir_registry_reference(void);
/* The backend a job runs on when none is named: the first available one with a device, else
 * the reference. */
const hir_backend_entry *hir_registry_default(void);
/* The first known backend (built or not) that offers `offer`; NULL when none does. */
const hir_backend_entry *hir_registry_offering(unsigned offer);
int hir_registry_built(const hir_backend_entry *b);
/* Devices of b this process sees: 0 when b is not built or sees none; 0 for host backends. */
int hir_registry_device_count(const hir_backend_entry *b);
/* 1 when b can run here: built, and for a device backend a device is visible. Otherwise 0,
 * with the reason (a sentence without a trailing period) in why when it is not NULL. */
int hir_registry_available(const hir_backend_entry *b, char *why, size_t n);
/* The names of all known backends for a message: "cpu or cuda". */
const char *hir_registry_names(char *buf, size_t n);
/* Create backend b (an entry found above); fails with a message when b is NULL or the build
 * lacks it, else with the backend's own (no device, ...). */
int hir_registry_create(const hir_backend_entry *b, const hir_backend_config *cfg,
                        hir_backend **out, hir_diag *e);

#endif
