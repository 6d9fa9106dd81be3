/* unit_views.h — views for the unit tests of runner/: a row-major 2-D view over a test's own
 * array, rows `ld` elements apart. */
#ifndef HIR_TEST_UNIT_VIEWS_H
#define HIR_TEST_UNIT_VIEWS_H

#include "runner/backend/types.h"

static inline hir_view view2(void *data, hir_dtype dt, int64_t r, int64_t c, int64_t ld)
{
    hir_view v = {0};
    v.data = data;
    v.dtype = dt;
    v.ndim = 2;
    v.shape[0] = r;
    v.shape[1] = c;
    v.stride[0] = ld;
    v.stride[1] = 1;
    return v;
}

#endif
