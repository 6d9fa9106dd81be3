/* ops_kernel.c — kernels: LaunchKernel runs a user kernel through the backend's optional
 * launch_kernel (--kernel GROUP=FILE); PostOnStream (a fusion only nvFuser can compile) and the
 * kernel-level loads and stores are refused with a located message. */
#include <inttypes.h>

#include "runner/interp/ops_internal.h"

int ops_kernel(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    if (s->op == HIR_OP_POST_ON_STREAM)
        return interp_fail(it, e, "needs a kernel: HostUnit%" PRId64
                           " is a fusion that only nvFuser can compile", s->u.kernel.number);
    if (s->u.kernel.number < 0)
        return interp_fail(it, e, "needs a kernel: this LaunchKernel prints no group index"
                           " (nvFuser's layout of early 2025), so no --kernel GROUP=FILE names it");
    if (it->be->ops->kernels) {
        int ni = s->u.kernel.ninputs, no = s->nin - ni;
        const hir_view *ins[64], *outs[64];
        hir_view vals[128];
        if (ni > 64 || no > 64)
            return interp_fail(it, e, "too many kernel arguments");
        for (int i = 0; i < s->nin; i++) {
            hir_tensor *t = hir_value_tensor(s->in[i]);
            if (!t)
                return interp_fail(it, e, "scalar kernel arguments are not supported");
            if (interp_get(it, t, &vals[i], e))
                return -1;
            if (i < ni)
                ins[i] = &vals[i];
            else
                outs[i - ni] = &vals[i];
        }
        if (it->be->ops->kernels->launch(it->be, it->cur, (int)s->u.kernel.number, ins, ni, outs,
                                       no, e))
            return interp_backend_fail(it, e);
        return 0;
    }
    return interp_fail(it, e, "needs a kernel: group %" PRId64
                       " has none (give --kernel %" PRId64 "=FILE on --device=cuda)",
                       s->u.kernel.number, s->u.kernel.number);
}

int ops_kernel_level(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    (void)s;
    return interp_fail(it, e, "a kernel-level load/store cannot run on the host");
}
