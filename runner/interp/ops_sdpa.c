/* ops_sdpa.c — the sdpa statement (docs/runner.md, "sdpa"): its operands and scalars are
 * read and checked here, its outputs bound, and the attention itself is the backend's (the
 * table's sdpa: runner/cpu/cpu_sdpa.c, runner/cuda/cuda_sdpa.c). A backend without it gets a
 * located refusal. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/interp/ops_internal.h"

/* a scalar argument as a double: literals directly, anything else through interp_eval */
static int sdpa_scalar(hir_interp *it, const hir_value *v, double *out, hir_diag *e)
{
    const hir_scalar *sc = (const hir_scalar *)v;
    if (sc->kind == HIR_SC_FLOAT) {
        *out = sc->fval;
        return 0;
    }
    int64_t i;
    if (interp_eval(it, sc, &i, e))
        return -1;
    *out = (double)i;
    return 0;
}

/* Unsplit device-parallel axes of t (extent 1 on this rank) leave v: the verifier does not
 * count them, and a head- or batch-sharded attention has them. A split axis with a device part
 * (ideviceIdx.x*iS) is one dimension at its local extent and stays. v's dimensions are t's
 * runtime axes (its view's logical axes without reductions: hir_interp_rt_axes). 1 when t has
 * such an axis. */
static int drop_device_axes(const hir_tensor *t, hir_view *v)
{
    hir_shape_axis ax[HIR_MAX_DIMS];
    int n = hir_interp_rt_axes(t, ax), m = 0, dropped = 0, k = 0;
    for (; k < v->ndim && k < n; k++) {
        if (ax[k].nparts == 1 && ax[k].device && v->shape[k] == 1) {
            dropped = 1;
            continue;
        }
        v->shape[m] = v->shape[k];
        v->stride[m++] = v->stride[k];
    }
    for (; k < v->ndim; k++) {
        v->shape[m] = v->shape[k];
        v->stride[m++] = v->stride[k];
    }
    v->ndim = m;
    return dropped;
}

static int get_operand(hir_interp *it, const hir_value *val, hir_view *v, hir_diag *e)
{
    const hir_tensor *t = hir_value_tensor((hir_value *)val);
    if (interp_get(it, t, v, e))
        return -1;
    drop_device_axes(t, v);
    return 0;
}

/* An output of nd axes of extents want: a sharded one as its declared local shape (device
 * axes of extent 1 included, as the statements that read it expect), which must come to want */
static int bind_output(hir_interp *it, const hir_tensor *t, int nd, const int64_t *want,
                       hir_view *v, hir_diag *e)
{
    int rnd = nd;
    int64_t shape[HIR_MAX_DIMS];
    hir_view probe;
    memset(&probe, 0, sizeof probe);
    hir_shape_axis ax[HIR_MAX_DIMS];
    int n = hir_interp_rt_axes(t, ax);
    probe.ndim = n < 0 ? 0 : n;
    for (int d = 0; d < probe.ndim; d++)
        probe.shape[d] = 1;
    if (!drop_device_axes(t, &probe))
        return interp_bind_new(it, t, nd, want, v, e);
    if (interp_rt_shape(it, t, &rnd, shape, e) || interp_bind_new(it, t, rnd, shape, v, e))
        return -1;
    drop_device_axes(t, v);
    bool same = v->ndim == nd;
    for (int d = 0; same && d < nd; d++)
        same = v->shape[d] == want[d];
    char tn[32];
    if (!same)
        return interp_fail(it, e, "%s does not hold this rank's sdpa result (%d axes of "
                           "%lld, %lld, ... expected)", interp_tname(t, tn, sizeof tn), nd,
                           (long long)want[0], (long long)want[1]);
    return 0;
}

/* bias/mask: 4-d, each extent equal to [N, H, L, S]'s or 1 (broadcast) */
static int check_bcast(hir_interp *it, const hir_view *m, const int64_t *want, const char *what,
                       hir_diag *e)
{
    if (m->ndim != 4)
        return interp_fail(it, e, "%s has %d axes, expected 4 ([N, H, L, S] or broadcast)",
                           what, m->ndim);
    for (int d = 0; d < 4; d++)
        if (m->shape[d] != want[d] && m->shape[d] != 1)
            return interp_fail(it, e, "%s axis %d has extent %lld, expected %lld or 1", what,
                               d, (long long)m->shape[d], (long long)want[d]);
    return 0;
}

static int sdpa_outputs(hir_interp *it, const hir_stmt *s, hir_sdpa *a, hir_diag *e)
{
    int64_t N = a->q.shape[0], H = a->q.shape[1], L = a->q.shape[2], Ev = a->v.shape[3];
    int64_t oshape[4] = {N, H, L, Ev}, lshape[3] = {N, H, L};
    if (bind_output(it, s->out, 4, oshape, &a->out, e))
        return -1;
    if (s->u.sdpa->extra[0] && bind_output(it, s->u.sdpa->extra[0], 3, lshape, &a->lse, e))
        return -1;
    for (int i = 1; i < 3; i++) {   /* philox seed/offset: no dropout, so zeros */
        const hir_tensor *t = s->u.sdpa->extra[i];
        int nd;
        int64_t shape[HIR_MAX_DIMS];
        hir_view v;
        if (!t)
            continue;
        if (interp_rt_shape(it, t, &nd, shape, e) || interp_bind_new(it, t, nd, shape, &v, e))
            return -1;
        if (it->be->ops->fill(it->be, it->cur, &v, 0.0, e))
            return interp_backend_fail(it, e);
    }
    return 0;
}

int ops_sdpa(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    if (!it->be->ops->model)
        return interp_fail(it, e, "the %s backend does not compute sdpa", it->be->ops->name);
    hir_sdpa a;
    memset(&a, 0, sizeof a);
    int k = 3;
    if (get_operand(it, s->in[0], &a.q, e) ||
        get_operand(it, s->in[1], &a.k, e) ||
        get_operand(it, s->in[2], &a.v, e))
        return -1;
    if ((a.has_bias = s->u.sdpa->has_bias) && get_operand(it, s->in[k++], &a.bias, e))
        return -1;
    if ((a.has_mask = s->u.sdpa->has_mask) && get_operand(it, s->in[k++], &a.mask, e))
        return -1;
    double dropout, causal;
    if (sdpa_scalar(it, s->in[k], &dropout, e) || sdpa_scalar(it, s->in[k + 1], &causal, e))
        return -1;
    if (dropout != 0)
        return interp_fail(it, e, "dropout_p is %g; only 0 runs (no dropout compatible with "
                           "nvFuser's random numbers is claimed)", dropout);
    a.causal = causal != 0;
    if (a.q.ndim != 4 || a.k.ndim != 4 || a.v.ndim != 4)
        return interp_fail(it, e, "q, k and v must have 4 axes, not %d, %d and %d",
                           a.q.ndim, a.k.ndim, a.v.ndim);
    int64_t N = a.q.shape[0], H = a.q.shape[1], L = a.q.shape[2], E = a.q.shape[3];
    int64_t S = a.k.shape[2];
    if (a.k.shape[0] != N || a.v.shape[0] != N || a.k.shape[1] != H ||
        a.v.shape[1] != H || a.k.shape[3] != E || a.v.shape[2] != S)
        return interp_fail(it, e, "q, k and v do not fit [N, H, L, E], [N, H, S, E], "
                           "[N, H, S, Ev]");
    a.scale = 1.0 / sqrt((double)E);
    if (s->u.sdpa->has_scale && sdpa_scalar(it, s->in[k + 2], &a.scale, e))
        return -1;
    int64_t want[4] = {N, H, L, S};
    if ((a.has_bias && check_bcast(it, &a.bias, want, "bias", e)) ||
        (a.has_mask && check_bcast(it, &a.mask, want, "mask", e)))
        return -1;
    if (sdpa_outputs(it, s, &a, e))
        return -1;
    if (it->be->ops->model->sdpa(it->be, it->cur, &a, e))
        return interp_backend_fail(it, e);
    return 0;
}

/* ---------------------------------------------------------------- sdpa_bwd */

typedef struct sdpa_bwd_args {
    hir_view dout, q, k, v, out, lse, dq, dk, dv;
    bool causal;
    double scale;
    int64_t N, H, L, S, E, Ev;
} sdpa_bwd_args;

/* One (n, h) slice of the attention gradient, in double: P = exp(q·kᵀ·scale - lse) (0 where
 * the causal mask hides j > i), dV = Pᵀ·dO, dS = P ∘ (dO·Vᵀ - rowsum(dO ∘ O)),
 * dQ = dS·K·scale, dK = dSᵀ·Q·scale. p holds L×S doubles, ds as many. */
static void sdpa_bwd_slice(const sdpa_bwd_args *a, int64_t n, int64_t h, double *p, double *ds)
{
    for (int64_t i = 0; i < a->L; i++) {
        int64_t li[3] = {n, h, i};
        double lse = hir_view_load_at(&a->lse, li), dsum = 0;
        for (int64_t c = 0; c < a->Ev; c++) {
            int64_t oi[4] = {n, h, i, c};
            dsum += hir_view_load_at(&a->dout, oi) * hir_view_load_at(&a->out, oi);
        }
        for (int64_t j = 0; j < a->S; j++) {
            double s = 0, dp = 0;
            for (int64_t c = 0; c < a->E; c++) {
                int64_t qi[4] = {n, h, i, c}, ki[4] = {n, h, j, c};
                s += hir_view_load_at(&a->q, qi) * hir_view_load_at(&a->k, ki);
            }
            for (int64_t c = 0; c < a->Ev; c++) {
                int64_t oi[4] = {n, h, i, c}, vi[4] = {n, h, j, c};
                dp += hir_view_load_at(&a->dout, oi) * hir_view_load_at(&a->v, vi);
            }
            double pij = a->causal && j > i ? 0 : exp(s * a->scale - lse);
            p[i * a->S + j] = pij;
            ds[i * a->S + j] = pij * (dp - dsum);
        }
    }
    for (int64_t i = 0; i < a->L; i++)
        for (int64_t c = 0; c < a->E; c++) {
            double acc = 0;
            for (int64_t j = 0; j < a->S; j++) {
                int64_t ki[4] = {n, h, j, c};
                acc += ds[i * a->S + j] * hir_view_load_at(&a->k, ki);
            }
            int64_t qi[4] = {n, h, i, c};
            hir_view_store_at(&a->dq, qi, acc * a->scale);
        }
    for (int64_t j = 0; j < a->S; j++) {
        for (int64_t c = 0; c < a->E; c++) {
            double acc = 0;
            for (int64_t i = 0; i < a->L; i++) {
                int64_t qi[4] = {n, h, i, c};
                acc += ds[i * a->S + j] * hir_view_load_at(&a->q, qi);
            }
            int64_t ki[4] = {n, h, j, c};
            hir_view_store_at(&a->dk, ki, acc * a->scale);
        }
        for (int64_t c = 0; c < a->Ev; c++) {
            double acc = 0;
            for (int64_t i = 0; i < a->L; i++) {
                int64_t oi[4] = {n, h, i, c};
                acc += p[i * a->S + j] * hir_view_load_at(&a->dout, oi);
            }
            int64_t vi[4] = {n, h, j, c};
            hir_view_store_at(&a->dv, vi, acc);
        }
    }
}

/* grad_q, grad_k, grad_v = sdpa_bwd(grad_attn, q, k, v, attn_out, logsum_exp, dropout_p,
 * is_causal, philox_seed, philox_offset[, scale]); the log-sum-exp is the forward's [N, H, L] */
int ops_sdpa_bwd(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    if (!(it->be->ops->caps & HIR_CAP_HOST_MEMORY))
        return interp_fail(it, e, "runs on --device=cpu only; the %s backend does not "
                           "compute it yet", it->be->ops->name);
    sdpa_bwd_args a;
    memset(&a, 0, sizeof a);
    hir_view *in[6] = {&a.dout, &a.q, &a.k, &a.v, &a.out, &a.lse};
    for (int i = 0; i < 6; i++)
        if (interp_get(it, hir_value_tensor(s->in[i]), in[i], e))
            return -1;
    double dropout, causal;
    if (sdpa_scalar(it, s->in[6], &dropout, e) || sdpa_scalar(it, s->in[7], &causal, e))
        return -1;
    if (dropout != 0)
        return interp_fail(it, e, "dropout_p is %g; only 0 runs", dropout);
    a.causal = causal != 0;
    if (a.q.ndim != 4 || a.k.ndim != 4 || a.v.ndim != 4 || a.dout.ndim != 4 || a.out.ndim != 4 ||
        a.lse.ndim != 3)
        return interp_fail(it, e, "grad_attn, q, k, v, attn_out need 4 axes and logsum_exp 3");
    a.N = a.q.shape[0], a.H = a.q.shape[1], a.L = a.q.shape[2], a.E = a.q.shape[3];
    a.S = a.k.shape[2], a.Ev = a.v.shape[3];
    int64_t want[6][4] = {{a.N, a.H, a.L, a.Ev}, {a.N, a.H, a.L, a.E}, {a.N, a.H, a.S, a.E},
                          {a.N, a.H, a.S, a.Ev}, {a.N, a.H, a.L, a.Ev}, {a.N, a.H, a.L, 0}};
    static const char *const names[6] = {"grad_attn", "q", "k", "v", "attn_out", "logsum_exp"};
    for (int i = 0; i < 6; i++)
        for (int d = 0; d < in[i]->ndim; d++)
            if (in[i]->shape[d] != want[i][d])
                return interp_fail(it, e, "%s axis %d has extent %lld, expected %lld (q [N, H, L, E],"
                                   " k [N, H, S, E], v [N, H, S, Ev])", names[i], d,
                                   (long long)in[i]->shape[d], (long long)want[i][d]);
    a.scale = 1.0 / sqrt((double)a.E);
    if (s->u.sdpa->has_scale && sdpa_scalar(it, s->in[10], &a.scale, e))
        return -1;
    if (it->be->ops->synchronize(it->be, e))
        return -1;
    const hir_tensor *gt[3] = {s->out, s->u.sdpa->extra[0], s->u.sdpa->extra[1]};
    hir_view *gv[3] = {&a.dq, &a.dk, &a.dv};
    for (int i = 0; i < 3; i++)
        if (!gt[i] || interp_bind_new(it, gt[i], 4, want[1 + i], gv[i], e))
            return gt[i] ? -1 : interp_fail(it, e, "an output is missing");
    size_t cells = (size_t)(a.L > 0 ? a.L : 1) * (size_t)(a.S > 0 ? a.S : 1);
    double *p = malloc(2 * cells * sizeof *p);
    if (!p)
        return interp_fail(it, e, "out of memory for %lld x %lld scores", (long long)a.L,
                           (long long)a.S);
    for (int64_t n = 0; n < a.N; n++)
        for (int64_t h = 0; h < a.H; h++)
            sdpa_bwd_slice(&a, n, h, p, p + cells);
    free(p);
    return 0;
}
