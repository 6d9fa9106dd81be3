/* cpu.h — the CPU reference backend's constructor (runner/cpu/). Everything else it offers is
 * reached through its table (runner/backend/backend.h); only the registry and tests call this. */
#ifndef HIR_RUNNER_CPU_H
#define HIR_RUNNER_CPU_H

#include "runner/backend/backend.h"

int hir_backend_cpu_create(const hir_backend_config *cfg, hir_backend **out, hir_diag *e);

#endif
