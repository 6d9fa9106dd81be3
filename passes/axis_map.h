/* axis_map.h — which IterDomains of a program correspond to each other through its
 * operations (hostir-format.md 3.3), standing in for nvFuser's IdModel broadcast graph:
 * a union-find over IterDomain numbers, built from op semantics. */
#ifndef HIR_PASSES_AXIS_MAP_H
#define HIR_PASSES_AXIS_MAP_H

#include "dialect/hir.h"

typedef struct pu_axis_map {
    hir_map parent;              /* IterDomain number -> parent hir_iterdomain* (absent: root) */
} pu_axis_map;

/* Maps the axes of every statement of the program (all nesting levels). */
void pu_axis_map_build(pu_axis_map *m, hir_program *p);
void pu_axis_map_fini(pu_axis_map *m);
bool pu_axis_mapped(pu_axis_map *m, const hir_iterdomain *a, const hir_iterdomain *b);
/* Logical position of the unique axis of t mapped to id; -1 when none, -2 when several
 * (*second receives the second one's position). */
int pu_axis_find(pu_axis_map *m, const hir_tensor *t, const hir_iterdomain *id, int *second);

#endif
