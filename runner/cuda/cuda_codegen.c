/* cuda_codegen.c — element-wise and reduction kernels generated at run time: CUDA C source per
 * (op, dtypes, ndim), NVRTC to LTO-IR for compute_XY, nvJitLink to a cubin for sm_XY, loaded
 * with cuModuleLoadData and cached in the backend (also for the kernels of cuda_sdpa.c and
 * cuda_moe.c, by key), and the GPU-free check that compiles a kernel of every op. The launches
 * are cuda_kernels.c's. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvrtc.h>
#include <nvJitLink.h>

#include "dialect/intops.h"
#include "runner/cuda/cuda_internal.h"

/* ---------------------------------------------------------------- source text */

typedef struct sbuf { char *p; size_t n, cap; int oom; } sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need < 0 || b->oom) { va_end(ap2); return; }
    if (b->n + (size_t)need + 1 > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 4096;
        while (nc < b->n + (size_t)need + 1) nc *= 2;
        char *q = realloc(b->p, nc);
        if (!q) { b->oom = 1; va_end(ap2); return; }
        b->p = q, b->cap = nc;
    }
    vsnprintf(b->p + b->n, (size_t)need + 1, fmt, ap2);
    va_end(ap2);
    b->n += (size_t)need;
}

static const char *PRELUDE =
    "#define HD __device__ __forceinline__\n"
    "#define HIR_INF __int_as_float(0x7f800000)\n"
    "#define HIR_NAN __int_as_float(0x7fc00000)\n"
    "HD float h2f(unsigned short h){float f;asm(\"cvt.f32.f16 %0, %1;\":\"=f\"(f):\"h\"(h));return f;}\n"
    "HD unsigned short f2h(float f){unsigned short h;asm(\"cvt.rn.f16.f32 %0, %1;\":\"=h\"(h):\"f\"(f));return h;}\n"
    "HD float b2f(unsigned short h){return __uint_as_float(((unsigned int)h)<<16);}\n"
    "HD unsigned short f2b(float f){unsigned int u=__float_as_uint(f);\n"
    "  if((u&0x7fffffffu)>0x7f800000u) return (unsigned short)((u>>16)|0x40);\n"
    "  u+=0x7fffu+((u>>16)&1u); return (unsigned short)(u>>16);}\n"
    "template<class T> HD T nanmax(T a,T b){return (a!=a)?a:((b!=b)?b:(a>b?a:b));}\n"
    "template<class T> HD T nanmin(T a,T b){return (a!=a)?a:((b!=b)?b:(a<b?a:b));}\n"
    "template<class T> HD T imax(T a,T b){return a>b?a:b;}\n"
    "template<class T> HD T imin(T a,T b){return a<b?a:b;}\n"
    "template<class T> HD T frem(T a,T b){T r=fmod(a,b);return (r!=0&&((r<0)!=(b<0)))?r+b:r;}\n";

const char *hir_cu_ew_storage_type(int dt)
{
    switch (dt) {
    case HIR_DT_FLOAT: return "float";
    case HIR_DT_DOUBLE: return "double";
    case HIR_DT_HALF: case HIR_DT_BFLOAT: case HIR_DT_UINT16: return "unsigned short";
    case HIR_DT_BOOL: case HIR_DT_UINT8: return "unsigned char";
    case HIR_DT_INT8: return "signed char";
    case HIR_DT_INT16: return "short";
    case HIR_DT_INT32: return "int";
    case HIR_DT_INT64: case HIR_DT_INDEX: return "long long";
    case HIR_DT_UINT32: return "unsigned int";
    case HIR_DT_UINT64: return "unsigned long long";
    default: return NULL;
    }
}

static int is_floaty(int dt)
{
    return dt == HIR_DT_FLOAT || dt == HIR_DT_HALF || dt == HIR_DT_BFLOAT || dt == -1;
}

/* "(CT)<load of element OFF of input I>" */
static void emit_load(sbuf *b, const char *ct, int dt, const char *ptr, const char *off)
{
    const char *st = hir_cu_ew_storage_type(dt);
    if (dt == HIR_DT_HALF) sb_printf(b, "(%s)h2f(((const %s*)%s)[%s])", ct, st, ptr, off);
    else if (dt == HIR_DT_BFLOAT) sb_printf(b, "(%s)b2f(((const %s*)%s)[%s])", ct, st, ptr, off);
    else if (dt == HIR_DT_BOOL) sb_printf(b, "(%s)(((const %s*)%s)[%s]!=0)", ct, st, ptr, off);
    else sb_printf(b, "(%s)(((const %s*)%s)[%s])", ct, st, ptr, off);
}

static void emit_store(sbuf *b, int dt, const char *ptr, const char *off, const char *val)
{
    const char *st = hir_cu_ew_storage_type(dt);
    if (dt == HIR_DT_HALF) sb_printf(b, "((%s*)%s)[%s]=f2h((float)(%s));\n", st, ptr, off, val);
    else if (dt == HIR_DT_BFLOAT) sb_printf(b, "((%s*)%s)[%s]=f2b((float)(%s));\n", st, ptr, off, val);
    else if (dt == HIR_DT_BOOL) sb_printf(b, "((%s*)%s)[%s]=(unsigned char)((%s)!=0);\n", st, ptr, off, val);
    else sb_printf(b, "((%s*)%s)[%s]=(%s)(%s);\n", st, ptr, off, st, val);
}

/* Unary ops computed in floating point even on integer inputs (as PyTorch promotes them). */
static int unary_needs_float(int op)
{
    switch (op) {
    case HIR_UN_EXP: case HIR_UN_LOG: case HIR_UN_SQRT: case HIR_UN_RSQRT: case HIR_UN_SIN:
    case HIR_UN_COS: case HIR_UN_TANH: case HIR_UN_SIGMOID: case HIR_UN_RECIPROCAL:
    case HIR_UN_ERF: case HIR_UN_SILU: case HIR_UN_GELU:
    case HIR_UN_ACOS: case HIR_UN_ACOSH: case HIR_UN_ASIN: case HIR_UN_ASINH: case HIR_UN_ATAN:
    case HIR_UN_ATANH: case HIR_UN_COSH: case HIR_UN_SINH: case HIR_UN_TAN: case HIR_UN_EXP2:
    case HIR_UN_EXPM1: case HIR_UN_ERFC: case HIR_UN_ERFINV: case HIR_UN_ERFCINV:
    case HIR_UN_LGAMMA: case HIR_UN_LOG10: case HIR_UN_LOG1P: case HIR_UN_LOG2:
    case HIR_UN_SIGNBIT: case HIR_UN_ISFINITE: case HIR_UN_ISINF: case HIR_UN_ISNAN:
    case HIR_UN_ISNEGINF: case HIR_UN_ISPOSINF: return 1;
    default: return 0;
    }
}

/* The CUDA spelling of every element-wise op, indexed by the dialect's enums
 * (dialect/defs/ewise.def): {integer form, floating form}; a NULL form means the op is not
 * defined in that arithmetic. Integer forms call the functions of dialect/intops.h, whose
 * text every kernel starts with, so the device computes exactly what the CPU backend does. */
typedef struct cu_spelling { const char *i, *f; } cu_spelling;

static const cu_spelling unary_cuda[HIR_UN_COUNT] = {
    [HIR_UN_NEG] = {"hir_iv_neg(a)", "-a"},
    [HIR_UN_NOT] = {"(CT)(!a)", "(CT)(!a)"},
    [HIR_UN_BITNOT] = {"~a", NULL},
    [HIR_UN_ABS] = {"hir_iv_abs(a)", "fabs(a)"},
    [HIR_UN_EXP] = {NULL, "exp(a)"},
    [HIR_UN_LOG] = {NULL, "log(a)"},
    [HIR_UN_SQRT] = {NULL, "sqrt(a)"},
    [HIR_UN_RSQRT] = {NULL, "(CT)1/sqrt(a)"},
    [HIR_UN_SIN] = {NULL, "sin(a)"},
    [HIR_UN_COS] = {NULL, "cos(a)"},
    [HIR_UN_TANH] = {NULL, "tanh(a)"},
    [HIR_UN_RELU] = {"(a>0?a:(CT)0)", "((a!=a)?a:(a>0?a:(CT)0))"},
    [HIR_UN_SIGMOID] = {NULL, "(CT)1/((CT)1+exp(-a))"},
    [HIR_UN_RECIPROCAL] = {NULL, "(CT)1/a"},
    [HIR_UN_CEIL] = {"a", "ceil(a)"},
    [HIR_UN_FLOOR] = {"a", "floor(a)"},
    [HIR_UN_ROUND] = {"a", "rint(a)"},     /* half to even, like torch */
    [HIR_UN_TRUNC] = {"a", "trunc(a)"},
    [HIR_UN_ERF] = {NULL, "erf(a)"},
    [HIR_UN_SILU] = {NULL, "a/((CT)1+exp(-a))"},
    [HIR_UN_GELU] = {NULL, "(CT)0.5*a*((CT)1+erf(a*(CT)0.70710678118654752))"},
    [HIR_UN_SET] = {"a", "a"},
    [HIR_UN_ACOS] = {NULL, "acos(a)"},
    [HIR_UN_ACOSH] = {NULL, "acosh(a)"},
    [HIR_UN_ASIN] = {NULL, "asin(a)"},
    [HIR_UN_ASINH] = {NULL, "asinh(a)"},
    [HIR_UN_ATAN] = {NULL, "atan(a)"},
    [HIR_UN_ATANH] = {NULL, "atanh(a)"},
    [HIR_UN_COSH] = {NULL, "cosh(a)"},
    [HIR_UN_SINH] = {NULL, "sinh(a)"},
    [HIR_UN_TAN] = {NULL, "tan(a)"},
    [HIR_UN_EXP2] = {NULL, "exp2(a)"},
    [HIR_UN_EXPM1] = {NULL, "expm1(a)"},
    [HIR_UN_ERFC] = {NULL, "erfc(a)"},
    [HIR_UN_ERFINV] = {NULL, "erfinv(a)"},
    [HIR_UN_ERFCINV] = {NULL, "erfcinv(a)"},
    [HIR_UN_FRAC] = {"(a-a)", "(a-trunc(a))"},
    [HIR_UN_LGAMMA] = {NULL, "lgamma(a)"},
    [HIR_UN_LOG10] = {NULL, "log10(a)"},
    [HIR_UN_LOG1P] = {NULL, "log1p(a)"},
    [HIR_UN_LOG2] = {NULL, "log2(a)"},
    [HIR_UN_SIGNBIT] = {NULL, "(CT)(signbit(a)!=0)"},
    [HIR_UN_ISFINITE] = {NULL, "(CT)(isfinite(a)!=0)"},
    [HIR_UN_ISINF] = {NULL, "(CT)(isinf(a)!=0)"},
    [HIR_UN_ISNAN] = {NULL, "(CT)(a!=a)"},
    [HIR_UN_ISNEGINF] = {NULL, "(CT)(isinf(a)&&a<0)"},
    [HIR_UN_ISPOSINF] = {NULL, "(CT)(isinf(a)&&a>0)"},
    [HIR_UN_ISREAL] = {"(CT)1", "(CT)1"},
};

static const cu_spelling binary_cuda[HIR_BIN_COUNT] = {
    [HIR_BIN_ADD] = {"hir_iv_add(a,b)", "a+b"},
    [HIR_BIN_SUB] = {"hir_iv_sub(a,b)", "a-b"},
    [HIR_BIN_MUL] = {"hir_iv_mul(a,b)", "a*b"},
    [HIR_BIN_DIV] = {"hir_iv_div(a,b)", "a/b"},
    [HIR_BIN_MOD] = {"hir_iv_mod(a,b)", "fmod(a,b)"},
    [HIR_BIN_EQ] = {"(CT)(a==b)", "(CT)(a==b)"},
    [HIR_BIN_NE] = {"(CT)(a!=b)", "(CT)(a!=b)"},
    [HIR_BIN_LT] = {"(CT)(a<b)", "(CT)(a<b)"},
    [HIR_BIN_LE] = {"(CT)(a<=b)", "(CT)(a<=b)"},
    [HIR_BIN_GT] = {"(CT)(a>b)", "(CT)(a>b)"},
    [HIR_BIN_GE] = {"(CT)(a>=b)", "(CT)(a>=b)"},
    [HIR_BIN_AND] = {"(CT)(a&&b)", "(CT)(a&&b)"},
    [HIR_BIN_OR] = {"(CT)(a||b)", "(CT)(a||b)"},
    [HIR_BIN_BITAND] = {"a&b", NULL},
    [HIR_BIN_BITOR] = {"a|b", NULL},
    [HIR_BIN_XOR] = {"a^b", NULL},
    [HIR_BIN_SHL] = {"hir_iv_shl(a,b)", NULL},
    [HIR_BIN_SHR] = {"hir_iv_shr(a,b)", NULL},
    [HIR_BIN_MAX] = {"imax(a,b)", "nanmax(a,b)"},
    [HIR_BIN_MIN] = {"imin(a,b)", "nanmin(a,b)"},
    [HIR_BIN_FMAX] = {"imax(a,b)", "fmax(a,b)"},
    [HIR_BIN_FMIN] = {"imin(a,b)", "fmin(a,b)"},
    [HIR_BIN_POW] = {"hir_iv_pow(a,b)", "pow(a,b)"},
    [HIR_BIN_ATAN2] = {NULL, "atan2(a,b)"},
    [HIR_BIN_FMOD] = {"hir_iv_mod(a,b)", "fmod(a,b)"},
    [HIR_BIN_REMAINDER] = {"hir_iv_remainder(a,b)", "frem(a,b)"},
    [HIR_BIN_CEILDIV] = {"hir_iv_ceildiv(a,b)", "ceil(a/b)"},
    [HIR_BIN_GCD] = {"hir_iv_gcd(a,b)", NULL},
};

static const cu_spelling ternary_cuda[HIR_TER_COUNT] = {
    [HIR_TER_WHERE] = {"(a!=0?b:c)", "(a!=0?b:c)"},
    [HIR_TER_CLAMP] = {"(a<b?b:(a>c?c:a))", "(a<b?b:(a>c?c:a))"},
    [HIR_TER_LERP] = {"(a+c*(b-a))", "(a+c*(b-a))"},
    [HIR_TER_THRESHOLD] = {"(a<=b?c:a)", "(a<=b?c:a)"},
};

const char *hir_cu_ewise_spelling(int nargs, int op, int isint)
{
    const cu_spelling *t = nargs == 1 ? unary_cuda : nargs == 2 ? binary_cuda : nargs == 3 ? ternary_cuda : NULL;
    int count = nargs == 1 ? HIR_UN_COUNT : nargs == 2 ? HIR_BIN_COUNT : nargs == 3 ? HIR_TER_COUNT : 0;
    if (!t || op < 0 || op >= count)
        return NULL;
    return isint ? t[op].i : t[op].f;
}

/* Compute type of an element-wise op: double if any input is double, float if any input is a
 * floating type (or a float scalar), else 64-bit integer arithmetic. */
static const char *ew_ctype(const hir_cu_ew_spec *s)
{
    int dbl = 0, flt = 0;
    int first = (s->tag == 3 && s->op == HIR_TER_WHERE) ? 1 : 0;   /* condition: no promotion */
    for (int i = first; i < s->tag; i++) {
        if (s->in[i] == HIR_DT_DOUBLE) dbl = 1;
        if (is_floaty(s->in[i])) flt = 1;
    }
    if (s->tag == 1 && unary_needs_float(s->op)) flt = 1;
    if (s->tag == 2 && (s->op == HIR_BIN_ATAN2 ||
                        (s->op == HIR_BIN_DIV && (hir_dtype_is_float((hir_dtype)s->out)))))
        flt = 1;
    return dbl ? "double" : flt ? "float" : "long long";
}

static int gen_ew(const hir_cu_ew_spec *s, sbuf *b, hir_diag *e)
{
    const char *ct = ew_ctype(s);
    int isint = ct[0] == 'l';
    const char *ex = hir_cu_ewise_spelling(s->tag, s->op, isint);
    if (!ex) return hir_fail(e, "element-wise op %d (%d inputs) has no kernel for %s "
                                     "arithmetic", s->op, s->tag, ct), -1;
    sb_printf(b, "%s%s", HIR_INTOPS_TEXT, PRELUDE);
    sb_printf(b, "typedef %s CT;\n#define ND %d\n", ct, s->nd);
    sb_printf(b, "struct P{long long n;void*out;const void*in[3];long long shape[8];"
                 "long long so[8];long long si[3][8];double sf[3];long long sint[3];};\n");
    sb_printf(b, "extern \"C\" __global__ void __launch_bounds__(%d) k(P p){\n", HIR_CU_EW_BLOCK);
    sb_printf(b, "for(long long i=blockIdx.x*(long long)blockDim.x+threadIdx.x;i<p.n;"
                 "i+=(long long)gridDim.x*blockDim.x){\n");
    sb_printf(b, "long long r=i,oo=0,o0=0,o1=0,o2=0;\n#pragma unroll\n"
                 "for(int d=ND-1;d>=0;d--){long long q=(d==0)?r:r%%p.shape[d];"
                 "if(d)r/=p.shape[d];oo+=q*p.so[d];o0+=q*p.si[0][d];o1+=q*p.si[1][d];"
                 "o2+=q*p.si[2][d];}\n");
    const char *names[3] = {"a", "b", "c"};
    const char *offs[3] = {"o0", "o1", "o2"};
    for (int i = 0; i < s->tag; i++) {
        /* where's condition keeps its own type; everything else is loaded as CT */
        const char *lt = (s->tag == 3 && s->op == HIR_TER_WHERE && i == 0) ? "double" : "CT";
        if (lt[0] == 'd' && s->in[i] >= 0 && !hir_dtype_is_float((hir_dtype)s->in[i]))
            lt = "long long";
        sb_printf(b, "%s %s=", lt, names[i]);
        if (s->in[i] == -1) sb_printf(b, "(%s)p.sf[%d]", lt, i);
        else if (s->in[i] == -2) sb_printf(b, "(%s)p.sint[%d]", lt, i);
        else {
            char ptr[16];
            snprintf(ptr, sizeof ptr, "p.in[%d]", i);
            emit_load(b, lt, s->in[i], ptr, offs[i]);
        }
        sb_printf(b, ";\n");
    }
    sb_printf(b, "CT v=(CT)(%s);\n", ex);
    emit_store(b, s->out, "p.out", "oo", "v");
    sb_printf(b, "}}\n");
    return b->oom ? (hir_fail(e, "out of host memory"), -1) : 0;
}

static const char *red_combine(int op, int isint)
{
    switch (op) {
    case HIR_RED_SUM: return isint ? "hir_iv_add(x,y)" : "x+y";
    case HIR_RED_PROD: return isint ? "hir_iv_mul(x,y)" : "x*y";
    case HIR_RED_MAX: return isint ? "imax(x,y)" : "nanmax(x,y)";
    case HIR_RED_MIN: return isint ? "imin(x,y)" : "nanmin(x,y)";
    case HIR_RED_FMAX: return isint ? "imax(x,y)" : "fmax(x,y)";
    case HIR_RED_FMIN: return isint ? "imin(x,y)" : "fmin(x,y)";
    default: return NULL;
    }
}

static const char *red_identity(int op, int isint)
{
    switch (op) {
    case HIR_RED_SUM: return "0";
    case HIR_RED_PROD: return "1";
    case HIR_RED_MAX: return isint ? "(-9223372036854775807LL-1)" : "-HIR_INF";
    case HIR_RED_MIN: return isint ? "9223372036854775807LL" : "HIR_INF";
    /* fmax/fmin skip NaN, so NaN is their identity (an all-NaN input stays NaN) */
    case HIR_RED_FMAX: return isint ? "(-9223372036854775807LL-1)" : "HIR_NAN";
    case HIR_RED_FMIN: return isint ? "9223372036854775807LL" : "HIR_NAN";
    default: return NULL;
    }
}

static int gen_reduce(const hir_cu_ew_spec *s, sbuf *b, hir_diag *e)
{
    int dt = s->in[0];
    const char *ct = dt == HIR_DT_DOUBLE ? "double" : hir_dtype_is_float((hir_dtype)dt) ? "float"
                                                                                      : "long long";
    int isint = ct[0] == 'l';
    sb_printf(b, "%s%s", HIR_INTOPS_TEXT, PRELUDE);
    sb_printf(b, "typedef %s CT;\n#define NK %d\n#define NR %d\n", ct, s->nd, s->nr);
    sb_printf(b, "#define COMB(x,y) (%s)\n#define ID ((CT)%s)\n", red_combine(s->op, isint),
              red_identity(s->op, isint));
    sb_printf(b, "struct P{void*out;const void*in;long long nout,nred;long long kshape[8],"
                 "kin[8],kout[8],rshape[8],rin[8];};\n");
    sb_printf(b, "extern \"C\" __global__ void __launch_bounds__(%d) k(P p){\n"
                 "__shared__ CT sh[32];int lane=threadIdx.x&31,warp=threadIdx.x>>5;\n"
                 "int nw=(blockDim.x+31)>>5;\n", HIR_CU_EW_BLOCK);
    sb_printf(b, "for(long long o=blockIdx.x;o<p.nout;o+=gridDim.x){\n"
                 "long long r=o,ib=0,ob=0;\n#pragma unroll\n"
                 "for(int d=NK-1;d>=0;d--){long long q=r%%p.kshape[d];r/=p.kshape[d];"
                 "ib+=q*p.kin[d];ob+=q*p.kout[d];}\n"
                 "CT acc=ID;\n"
                 "for(long long j=threadIdx.x;j<p.nred;j+=blockDim.x){long long rr=j,off=ib;\n"
                 "#pragma unroll\nfor(int d=NR-1;d>=0;d--){long long q=rr%%p.rshape[d];"
                 "rr/=p.rshape[d];off+=q*p.rin[d];}\nCT x=acc, y=");
    emit_load(b, "CT", dt, "p.in", "off");
    sb_printf(b, ";acc=COMB(x,y);}\n"
                 "for(int s=16;s>0;s>>=1){CT x=acc,y=__shfl_down_sync(0xffffffffu,acc,s);"
                 "acc=COMB(x,y);}\n"
                 "if(lane==0)sh[warp]=acc;__syncthreads();\n"
                 "if(warp==0){acc=lane<nw?sh[lane]:ID;"
                 "for(int s=16;s>0;s>>=1){CT x=acc,y=__shfl_down_sync(0xffffffffu,acc,s);"
                 "acc=COMB(x,y);}\nif(lane==0){");
    emit_store(b, s->out, "p.out", "ob", "acc");
    sb_printf(b, "}}\n__syncthreads();}}\n");
    return b->oom ? (hir_fail(e, "out of host memory"), -1) : 0;
}

/* ---------------------------------------------------------------- compile, link, cache */

int hir_cu_link_module(hir_cu_backend *cb, const void *const *inputs, const size_t *sizes,
                       const int *kinds, int n, CUmodule *mod, hir_diag *e)
{
    char arch[32];
    snprintf(arch, sizeof arch, "-arch=sm_%d%d", cb->cc_major, cb->cc_minor);
    const char *opts[3] = {arch, "-O3", "-lto"};
    int nopt = 2;
    for (int i = 0; i < n; i++)
        if (kinds[i] == NVJITLINK_INPUT_LTOIR) nopt = 3;
    nvJitLinkHandle h = NULL;
    HIR_CK(e, nvjitlink, nvJitLinkCreate(&h, (uint32_t)nopt, opts));
    int rc = -1;
    void *cubin = NULL;
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "input%d", i);
        int st = nvJitLinkAddData(h, (nvJitLinkInputType)kinds[i], inputs[i], sizes[i], name);
        if (st) goto linkfail;
    }
    int st = nvJitLinkComplete(h);
    if (st) goto linkfail;
    size_t sz = 0;
    HIR_CK_GOTO(e, nvjitlink, nvJitLinkGetLinkedCubinSize(h, &sz), done);
    cubin = malloc(sz);
    if (!cubin) { hir_fail(e, "out of host memory"); goto done; }
    HIR_CK_GOTO(e, nvjitlink, nvJitLinkGetLinkedCubin(h, cubin), done);
    if (mod) HIR_CK_GOTO(e, cu, cb->drv.ModuleLoadData(mod, cubin), done);
    rc = 0;
    goto done;
linkfail: {
        size_t ls = 0;
        char log[700] = "";
        if (nvJitLinkGetErrorLogSize(h, &ls) == NVJITLINK_SUCCESS && ls > 1) {
            char *full = malloc(ls);
            if (full && nvJitLinkGetErrorLog(h, full) == NVJITLINK_SUCCESS)
                snprintf(log, sizeof log, "%s", full);
            free(full);
        }
        hir_fail(e, "nvJitLink (%s) failed: %s", arch, log[0] ? log : "(no log)");
    }
done:
    free(cubin);
    nvJitLinkDestroy(&h);
    return rc;
}

static int compile_source(hir_cu_backend *cb, const char *src, CUmodule *mod, hir_diag *e)
{
    char arch[48];
    snprintf(arch, sizeof arch, "--gpu-architecture=compute_%d%d", cb->cc_major, cb->cc_minor);
    const char *opts[] = {arch, "-dlto", "--std=c++17"};
    nvrtcProgram prog;
    HIR_CK(e, nvrtc, nvrtcCreateProgram(&prog, src, "hir_kernel.cu", 0, NULL, NULL));
    int rc = -1;
    char *ltoir = NULL;
    int st = nvrtcCompileProgram(prog, 3, opts);
    if (st != NVRTC_SUCCESS) {
        size_t ls = 0;
        char log[700] = "";
        if (nvrtcGetProgramLogSize(prog, &ls) == NVRTC_SUCCESS && ls > 1) {
            char *full = malloc(ls);
            if (full && nvrtcGetProgramLog(prog, full) == NVRTC_SUCCESS)
                snprintf(log, sizeof log, "%s", full);
            free(full);
        }
        hir_fail(e, "nvrtcCompileProgram: %s: %s", nvrtcGetErrorString((nvrtcResult)st),
                      log);
        goto done;
    }
    size_t sz = 0;
    HIR_CK_GOTO(e, nvrtc, nvrtcGetLTOIRSize(prog, &sz), done);
    ltoir = malloc(sz);
    if (!ltoir) { hir_fail(e, "out of host memory"); goto done; }
    HIR_CK_GOTO(e, nvrtc, nvrtcGetLTOIR(prog, ltoir), done);
    const void *in[1] = {ltoir};
    int kind[1] = {NVJITLINK_INPUT_LTOIR};
    rc = hir_cu_link_module(cb, in, &sz, kind, 1, mod, e);
done:
    free(ltoir);
    nvrtcDestroyProgram(&prog);
    return rc;
}

int hir_cu_ew_kernel(hir_cu_backend *cb, hir_cu_ew_spec *spec, CUfunction *fn, hir_diag *e)
{
    spec->arch = cb->cc_major * 10 + cb->cc_minor;
    uint64_t h = hir_fnv1a(spec, sizeof *spec, HIR_FNV1A_INIT);
    for (int i = 0; i < cb->nkernels; i++)
        if (cb->kernels[i].hash == h && cb->kernels[i].keylen == sizeof *spec &&
            !memcmp(cb->kernels[i].key, spec, sizeof *spec))
            return *fn = cb->kernels[i].fn, 0;
    sbuf b = {0};
    if ((spec->tag == 9 ? gen_reduce(spec, &b, e) : gen_ew(spec, &b, e)) < 0) {
        free(b.p);
        return -1;
    }
    CUmodule mod = NULL;
    int rc = compile_source(cb, b.p, &mod, e);
    free(b.p);
    if (rc < 0) return -1;
    CUfunction f;
    int st = cb->drv.ModuleGetFunction(&f, mod, "k");
    if (st) {
        cb->drv.ModuleUnload(mod);
        HIR_CK_ST(e, cu, "cuModuleGetFunction", st);
    }
    if (hir_cu_grow((void **)&cb->kernels, &cb->cap_kernels, cb->nkernels, sizeof(hir_cu_kernel),
                    e) < 0) {
        cb->drv.ModuleUnload(mod);
        return -1;
    }
    hir_cu_kernel *k = &cb->kernels[cb->nkernels];
    k->key = malloc(sizeof *spec);
    if (!k->key) {
        cb->drv.ModuleUnload(mod);
        return hir_fail(e, "out of host memory"), -1;
    }
    memcpy(k->key, spec, sizeof *spec);
    k->keylen = sizeof *spec;
    k->hash = h;
    k->mod = mod;
    k->fn = f;
    cb->nkernels++;
    *fn = f;
    return 0;
}

const char *hir_cu_kernel_prelude(void) { return PRELUDE; }

int hir_cu_kernel_compile(hir_cu_backend *cb, const char *src, CUmodule *mod, hir_diag *e)
{
    return compile_source(cb, src, mod, e);
}

int hir_cu_kernel_keyed(hir_cu_backend *cb, const void *key, size_t keylen,
                        int (*gen)(const void *key, char **src, hir_diag *e), CUfunction *fn,
                        hir_diag *e)
{
    uint64_t h = hir_fnv1a(key, keylen, HIR_FNV1A_INIT);
    for (int i = 0; i < cb->nkernels; i++)
        if (cb->kernels[i].hash == h && cb->kernels[i].keylen == keylen &&
            !memcmp(cb->kernels[i].key, key, keylen))
            return *fn = cb->kernels[i].fn, 0;
    char *src = NULL;
    if (gen(key, &src, e) < 0) return -1;
    CUmodule mod = NULL;
    int rc = compile_source(cb, src, &mod, e);
    free(src);
    if (rc < 0) return -1;
    CUfunction f;
    int st = cb->drv.ModuleGetFunction(&f, mod, "k");
    void *kcopy = st ? NULL : malloc(keylen);
    if (st || !kcopy ||
        hir_cu_grow((void **)&cb->kernels, &cb->cap_kernels, cb->nkernels, sizeof(hir_cu_kernel),
                    e) < 0) {
        cb->drv.ModuleUnload(mod);
        free(kcopy);
        if (st) HIR_CK_ST(e, cu, "cuModuleGetFunction", st);
        if (!kcopy) hir_fail(e, "out of host memory");
        return -1;
    }
    memcpy(kcopy, key, keylen);
    hir_cu_kernel *k = &cb->kernels[cb->nkernels++];
    k->key = kcopy;
    k->keylen = keylen;
    k->hash = h;
    k->mod = mod;
    k->fn = f;
    *fn = f;
    return 0;
}

void hir_cu_kernels_destroy(hir_cu_backend *cb)
{
    for (int i = 0; i < cb->nkernels; i++) {
        if (cb->kernels[i].mod && cb->drv.ModuleUnload) cb->drv.ModuleUnload(cb->kernels[i].mod);
        free(cb->kernels[i].key);
    }
    free(cb->kernels);
    cb->kernels = NULL;
    cb->nkernels = 0;
}

/* ---------------------------------------------------------------- GPU-free check */

static int ops_valid_on_float(int tag, int op)
{
    if (tag == 1) return op != HIR_UN_BITNOT;
    if (tag == 2)
        return op != HIR_BIN_BITAND && op != HIR_BIN_BITOR && op != HIR_BIN_XOR &&
               op != HIR_BIN_SHL && op != HIR_BIN_SHR && op != HIR_BIN_GCD;
    return 1;
}

int hir_cu_codegen_check(int cc_major, int cc_minor, int *ncompiled, FILE *log, hir_diag *e)
{
    hir_cu_backend fake;
    memset(&fake, 0, sizeof fake);
    fake.cc_major = cc_major;
    fake.cc_minor = cc_minor;
    static const int fdts[] = {HIR_DT_FLOAT, HIR_DT_BFLOAT, HIR_DT_DOUBLE};
    static const int idts[] = {HIR_DT_INT32, HIR_DT_INT64};
    int counts[4] = {0, HIR_UN_COUNT, HIR_BIN_COUNT, HIR_TER_COUNT};
    *ncompiled = 0;
    for (int tag = 1; tag <= 9; tag++) {
        if (tag > 3 && tag < 9) continue;
        int nops = tag == 9 ? HIR_RED_COUNT : counts[tag];
        for (int op = 0; op < nops; op++)
            for (int di = 0; di < 5; di++) {
                int dt = di < 3 ? fdts[di] : idts[di - 3];
                if (di < 3 && tag != 9 && !ops_valid_on_float(tag, op)) continue;
                if (di == 2 && tag != 9 && op % 3) continue;   /* sample double */
                hir_cu_ew_spec sp;
                memset(&sp, 0, sizeof sp);
                sp.tag = tag, sp.op = op, sp.out = dt, sp.nd = 2, sp.nr = 1;
                sp.in[0] = sp.in[1] = sp.in[2] = dt;
                if (tag == 2 && op == HIR_BIN_ADD) sp.in[1] = -1;    /* a scalar operand */
                if (tag == 3 && op == HIR_TER_WHERE) sp.in[0] = HIR_DT_BOOL;
                sbuf b = {0};
                int rc = tag == 9 ? gen_reduce(&sp, &b, e) : gen_ew(&sp, &b, e);
                if (rc == 0) rc = compile_source(&fake, b.p, NULL, e);
                if (rc < 0) {
                    if (log) fprintf(log, "codegen: tag %d op %d dtype %s failed:\n%s\n", tag,
                                     op, hir_dtype_name((hir_dtype)dt), b.p ? b.p : "");
                    free(b.p);
                    return -1;
                }
                free(b.p);
                (*ncompiled)++;
            }
    }
    return 0;
}
