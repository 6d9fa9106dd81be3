/* cuda_kernels.c — element-wise and reduction kernels generated at run time: CUDA C source per
 * (op, dtypes, ndim), NVRTC to LTO-IR for compute_XY, nvJitLink to a cubin for sm_XY, loaded
 * with cuModuleLoadData and cached in the backend. Plain copies and zero fills use the copy
 * engines (cudaMemcpy*Async / cudaMemsetAsync) instead. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvrtc.h>
#include <nvJitLink.h>

#include "dialect/intops.h"
#include "runner/cuda/cuda_internal.h"

#define EW_BLOCK 256

/* Mirrors the `P` struct of the generated source (passed by value). */
typedef struct ew_params {
    int64_t n;
    void *out;
    const void *in[3];
    int64_t shape[HIR_MAX_DIMS];
    int64_t so[HIR_MAX_DIMS];
    int64_t si[3][HIR_MAX_DIMS];
    double sf[3];
    int64_t sint[3];
} ew_params;

typedef struct red_params {
    void *out;
    const void *in;
    int64_t nout, nred;
    int64_t kshape[HIR_MAX_DIMS], kin[HIR_MAX_DIMS], kout[HIR_MAX_DIMS];
    int64_t rshape[HIR_MAX_DIMS], rin[HIR_MAX_DIMS];
} red_params;

/* What a generated kernel depends on; its bytes are the cache key. */
typedef struct ew_spec {
    int tag;                     /* 1..3: element-wise with that many inputs; 9: reduce */
    int op;
    int out;                     /* hir_dtype */
    int in[3];                   /* hir_dtype, or -1 for a float scalar, -2 for an int scalar */
    int nd, nr;                  /* element-wise: dims; reduce: kept dims, reduced dims */
    int arch;
} ew_spec;

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

static const char *storage_type(int dt)
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
    const char *st = storage_type(dt);
    if (dt == HIR_DT_HALF) sb_printf(b, "(%s)h2f(((const %s*)%s)[%s])", ct, st, ptr, off);
    else if (dt == HIR_DT_BFLOAT) sb_printf(b, "(%s)b2f(((const %s*)%s)[%s])", ct, st, ptr, off);
    else if (dt == HIR_DT_BOOL) sb_printf(b, "(%s)(((const %s*)%s)[%s]!=0)", ct, st, ptr, off);
    else sb_printf(b, "(%s)(((const %s*)%s)[%s])", ct, st, ptr, off);
}

static void emit_store(sbuf *b, int dt, const char *ptr, const char *off, const char *val)
{
    const char *st = storage_type(dt);
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
static const char *ew_ctype(const ew_spec *s)
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

static int gen_ew(const ew_spec *s, sbuf *b, hir_error *e)
{
    const char *ct = ew_ctype(s);
    int isint = ct[0] == 'l';
    const char *ex = hir_cu_ewise_spelling(s->tag, s->op, isint);
    if (!ex) return hir_error_set(e, "element-wise op %d (%d inputs) has no kernel for %s "
                                     "arithmetic", s->op, s->tag, ct), -1;
    sb_printf(b, "%s%s", HIR_INTOPS_TEXT, PRELUDE);
    sb_printf(b, "typedef %s CT;\n#define ND %d\n", ct, s->nd);
    sb_printf(b, "struct P{long long n;void*out;const void*in[3];long long shape[8];"
                 "long long so[8];long long si[3][8];double sf[3];long long sint[3];};\n");
    sb_printf(b, "extern \"C\" __global__ void __launch_bounds__(%d) k(P p){\n", EW_BLOCK);
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
    return b->oom ? (hir_error_set(e, "out of host memory"), -1) : 0;
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

static int gen_reduce(const ew_spec *s, sbuf *b, hir_error *e)
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
                 "int nw=(blockDim.x+31)>>5;\n", EW_BLOCK);
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
    return b->oom ? (hir_error_set(e, "out of host memory"), -1) : 0;
}

/* ---------------------------------------------------------------- compile, link, cache */

int hir_cu_link_module(hir_cu_backend *cb, const void *const *inputs, const size_t *sizes,
                       const int *kinds, int n, CUmodule *mod, hir_error *e)
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
    if (!cubin) { hir_error_set(e, "out of host memory"); goto done; }
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
        hir_error_set(e, "nvJitLink (%s) failed: %s", arch, log[0] ? log : "(no log)");
    }
done:
    free(cubin);
    nvJitLinkDestroy(&h);
    return rc;
}

static int compile_source(hir_cu_backend *cb, const char *src, CUmodule *mod, hir_error *e)
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
        hir_error_set(e, "nvrtcCompileProgram: %s: %s", nvrtcGetErrorString((nvrtcResult)st),
                      log);
        goto done;
    }
    size_t sz = 0;
    HIR_CK_GOTO(e, nvrtc, nvrtcGetLTOIRSize(prog, &sz), done);
    ltoir = malloc(sz);
    if (!ltoir) { hir_error_set(e, "out of host memory"); goto done; }
    HIR_CK_GOTO(e, nvrtc, nvrtcGetLTOIR(prog, ltoir), done);
    const void *in[1] = {ltoir};
    int kind[1] = {NVJITLINK_INPUT_LTOIR};
    rc = hir_cu_link_module(cb, in, &sz, kind, 1, mod, e);
done:
    free(ltoir);
    nvrtcDestroyProgram(&prog);
    return rc;
}

static int kernel_get(hir_cu_backend *cb, ew_spec *spec, CUfunction *fn, hir_error *e)
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
        return hir_error_set(e, "out of host memory"), -1;
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

int hir_cu_kernel_compile(hir_cu_backend *cb, const char *src, CUmodule *mod, hir_error *e)
{
    return compile_source(cb, src, mod, e);
}

int hir_cu_kernel_keyed(hir_cu_backend *cb, const void *key, size_t keylen,
                        int (*gen)(const void *key, char **src, hir_error *e), CUfunction *fn,
                        hir_error *e)
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
        if (!kcopy) hir_error_set(e, "out of host memory");
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

/* ---------------------------------------------------------------- element-wise launch */

static int check_dtype(int dt, hir_error *e)
{
    if (!storage_type(dt))
        return hir_error_set(e, "the CUDA backend has no element-wise kernels for dtype %s",
                             hir_dtype_name((hir_dtype)dt)), -1;
    return 0;
}

/* Drop size-1 dims and merge dims that are contiguous in every view (fewer index divisions,
 * fewer kernel variants). strides[v][d]: v = 0 output, 1.. inputs (NULL = scalar). */
static int collapse(int nd, const int64_t *shape, int nv, const int64_t *const *strides,
                    int64_t oshape[], int64_t ostr[][HIR_MAX_DIMS])
{
    int m = 0;
    for (int d = 0; d < nd; d++) {
        if (shape[d] == 1) continue;
        if (m > 0) {
            int ok = 1;
            for (int v = 0; v < nv; v++)
                if (strides[v] && ostr[v][m - 1] != strides[v][d] * shape[d]) ok = 0;
            if (ok) {
                oshape[m - 1] *= shape[d];
                for (int v = 0; v < nv; v++) if (strides[v]) ostr[v][m - 1] = strides[v][d];
                continue;
            }
        }
        oshape[m] = shape[d];
        for (int v = 0; v < nv; v++) ostr[v][m] = strides[v] ? strides[v][d] : 0;
        m++;
    }
    return m;
}

/* ---------------------------------------------------------------- launches and their record */

static int record_launch(hir_cu_backend *cb, const hir_cu_launch_rec *r, void **args,
                         const size_t *sizes, int nargs)
{
    size_t bytes = (size_t)nargs * sizeof(void *);
    for (int i = 0; i < nargs; i++) bytes += (sizes[i] + 15) & ~(size_t)15;
    void **argv = malloc(bytes ? bytes : 1);
    hir_error ignore;
    if (!argv || hir_cu_grow((void **)&cb->recs, &cb->cap_recs, cb->nrecs,
                             sizeof(hir_cu_launch_rec), &ignore) < 0) {
        free(argv);
        return -1;
    }
    unsigned char *at = (unsigned char *)(argv + nargs);
    for (int i = 0; i < nargs; i++) {
        memcpy(at, args[i], sizes[i]);
        argv[i] = at;
        at += (sizes[i] + 15) & ~(size_t)15;
    }
    hir_cu_launch_rec *d = &cb->recs[cb->nrecs++];
    *d = *r;
    d->argv = argv;
    return 0;
}

int hir_cu_launch(hir_cu_backend *cb, CUfunction fn, unsigned gx, unsigned gy, unsigned gz,
                  unsigned bx, unsigned by, unsigned bz, unsigned shmem, CUstream st,
                  void **args, const size_t *sizes, int nargs, hir_error *e)
{
    HIR_CK(e, cu, cb->drv.LaunchKernel(fn, gx, gy, gz, bx, by, bz, shmem, st, args, NULL));
    if (cb->rec_on && !cb->rec_bad) {
        hir_cu_launch_rec r = {.fn = fn, .grid = {gx, gy, gz}, .block = {bx, by, bz},
                               .shmem = shmem, .stream = st};
        if (record_launch(cb, &r, args, sizes, nargs) < 0) cb->rec_bad = 1;
    }
    return 0;
}

void hir_cu_launch_recs_free(hir_cu_backend *cb)
{
    for (int i = 0; i < cb->nrecs; i++) free(cb->recs[i].argv);
    cb->nrecs = 0;
}

/* on = 1: forget the previous record and record every launch from now on; on = 0: stop. */
int hir_cu_launch_record(hir_backend *be, int on, hir_error *e)
{
    (void)e;
    hir_cu_backend *cb = hir_cu(be);
    if (on) {
        hir_cu_launch_recs_free(cb);
        cb->rec_bad = cb->rec_freed = 0;
        cb->rec_other = 0;
    }
    cb->rec_on = on;
    return 0;
}

/* The bare loop: the recorded launches again, through cuLaunchKernel and nothing else. */
int hir_cu_launch_replay(hir_backend *be, int64_t *launches, int64_t *other, hir_error *e)
{
    hir_cu_backend *cb = hir_cu(be);
    if (cb->rec_on)
        return hir_error_set(e, "bare launch replay while still recording"), -1;
    if (cb->rec_bad)
        return hir_error_set(e, "bare launch replay: the record is incomplete (out of host "
                                "memory while recording)"), -1;
    if (cb->rec_freed)
        return hir_error_set(e, "bare launch replay: the recorded run freed device memory, so "
                                "its launches cannot be replayed safely"), -1;
    const hir_cu_launch_rec *r = cb->recs;
    __typeof__(&cuLaunchKernel) launch_fn = cb->drv.LaunchKernel;
    for (int i = 0, n = cb->nrecs; i < n; i++, r++) {
        int st = launch_fn(r->fn, r->grid[0], r->grid[1], r->grid[2], r->block[0], r->block[1],
                           r->block[2], r->shmem, r->stream, r->argv, NULL);
        HIR_CK_ST(e, cu, "cuLaunchKernel", st);
    }
    if (launches) *launches = cb->nrecs;
    if (other) *other = cb->rec_other;
    return 0;
}

static int launch(hir_cu_backend *cb, hir_stream *s, CUfunction fn, unsigned grid,
                  unsigned block, void *params, size_t psize, hir_error *e)
{
    void *args[1] = {params};
    return hir_cu_launch(cb, fn, grid, 1, 1, block, 1, 1, 0, (CUstream)s->s, args, &psize, 1, e);
}

static unsigned grid_for(hir_cu_backend *cb, int64_t n, unsigned block)
{
    int64_t g = (n + block - 1) / block, cap = (int64_t)cb->sm_count * 32;
    if (g > cap) g = cap;
    return (unsigned)(g < 1 ? 1 : g);
}

/* What an element-wise launch needs, resolved once: the kernel, its packed parameters and the
 * grid (hir_ew_plan of the backend table: the interpreter keeps one per statement). */
struct hir_ew_plan {
    CUfunction fn;
    unsigned grid;
    int64_t n;                   /* 0: nothing to launch */
    ew_params p;
};

static int ew_resolve(hir_cu_backend *cb, int nin, int op, const hir_view *out,
                      const hir_operand *const *ins, hir_ew_plan *r, hir_error *e)
{
    if (check_dtype(out->dtype, e) < 0) return -1;
    int64_t n = hir_cu_numel(out);
    r->n = n;
    if (n == 0) return 0;
    ew_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.tag = nin;
    spec.op = op;
    spec.out = out->dtype;
    ew_params *p = &r->p;
    memset(p, 0, sizeof *p);
    const int64_t *strides[4] = {out->stride, NULL, NULL, NULL};
    for (int i = 0; i < nin; i++) {
        const hir_operand *o = ins[i];
        if (o->is_scalar) {
            spec.in[i] = o->scalar_is_int ? -2 : -1;
            p->sf[i] = o->f;
            p->sint[i] = o->i;
            continue;
        }
        if (check_dtype(o->view.dtype, e) < 0) return -1;
        if (o->view.ndim != out->ndim)
            return hir_error_set(e, "element-wise operand %d has %d dims, output %d", i,
                                 o->view.ndim, out->ndim), -1;
        for (int d = 0; d < out->ndim; d++)
            if (o->view.shape[d] != out->shape[d] && o->view.stride[d] != 0 &&
                o->view.shape[d] != 1)
                return hir_error_set(e, "element-wise operand %d: dim %d is %lld, output %lld",
                                     i, d, (long long)o->view.shape[d],
                                     (long long)out->shape[d]), -1;
        spec.in[i] = o->view.dtype;
        p->in[i] = o->view.data;
        strides[i + 1] = o->view.stride;
    }
    int64_t str[4][HIR_MAX_DIMS];
    int nd = collapse(out->ndim, out->shape, nin + 1, strides, p->shape, str);
    if (nd == 0) {
        nd = 1;
        p->shape[0] = 1;
        for (int v = 0; v < 4; v++) str[v][0] = 0;
    }
    spec.nd = nd;
    for (int d = 0; d < nd; d++) {
        p->so[d] = str[0][d];
        for (int i = 0; i < nin; i++) p->si[i][d] = strides[i + 1] ? str[i + 1][d] : 0;
    }
    p->n = n;
    p->out = out->data;
    r->grid = grid_for(cb, n, EW_BLOCK);
    return kernel_get(cb, &spec, &r->fn, e);
}

static int ew_issue(hir_cu_backend *cb, hir_stream *s, const hir_ew_plan *r, hir_error *e)
{
    if (r->n == 0) return 0;
    void *args[1] = {(void *)&r->p};
    static const size_t psize = sizeof r->p;
    return hir_cu_launch(cb, r->fn, r->grid, 1, 1, EW_BLOCK, 1, 1, 0, (CUstream)s->s, args,
                         &psize, 1, e);
}

static int elementwise(hir_backend *be, hir_stream *s, int nin, int op, const hir_view *out,
                       const hir_operand *const *ins, hir_error *e)
{
    hir_cu_backend *cb = hir_cu(be);
    hir_ew_plan r;
    if (ew_resolve(cb, nin, op, out, ins, &r, e) < 0) return -1;
    return ew_issue(cb, s, &r, e);
}

int hir_cu_ew_resolve(hir_backend *be, int nin, int op, const hir_view *out,
                      const hir_operand *const *ins, hir_ew_plan **plan, hir_error *e)
{
    *plan = NULL;
    hir_ew_plan *r = malloc(sizeof *r);
    if (!r) return hir_error_set(e, "out of host memory"), -1;
    if (ew_resolve(hir_cu(be), nin, op, out, ins, r, e) < 0) {
        free(r);
        return -1;
    }
    *plan = r;
    return 0;
}

int hir_cu_ew_launch(hir_backend *be, hir_stream *s, const hir_ew_plan *plan, hir_error *e)
{
    return ew_issue(hir_cu(be), s, plan, e);
}

void hir_cu_ew_plan_free(hir_backend *be, hir_ew_plan *plan)
{
    (void)be;
    free(plan);
}

int hir_cu_unary(hir_backend *be, hir_stream *s, hir_unary_op op, const hir_view *out,
                 const hir_operand *a, hir_error *e)
{
    const hir_operand *ins[1] = {a};
    return elementwise(be, s, 1, op, out, ins, e);
}

int hir_cu_binary(hir_backend *be, hir_stream *s, hir_binary_op op, const hir_view *out,
                  const hir_operand *a, const hir_operand *b, hir_error *e)
{
    const hir_operand *ins[2] = {a, b};
    return elementwise(be, s, 2, op, out, ins, e);
}

int hir_cu_ternary(hir_backend *be, hir_stream *s, hir_ternary_op op, const hir_view *out,
                   const hir_operand *a, const hir_operand *b, const hir_operand *c,
                   hir_error *e)
{
    const hir_operand *ins[3] = {a, b, c};
    return elementwise(be, s, 3, op, out, ins, e);
}

int hir_cu_fill(hir_backend *be, hir_stream *s, const hir_view *out, double v, hir_error *e)
{
    int64_t n = hir_cu_numel(out);
    if (n == 0) return 0;
    size_t es = hir_dtype_size(out->dtype);
    /* zero (any type) and byte-sized values: the memset engine, no kernel */
    if (hir_cu_view_contiguous(out) && es > 0 &&
        ((v == 0.0 && !(1.0 / v < 0)) ||
         (es == 1 && hir_dtype_is_int(out->dtype) && v >= -128 && v <= 255 && v == (int)v) ||
         (out->dtype == HIR_DT_BOOL))) {
        int byte = out->dtype == HIR_DT_BOOL ? (v != 0) : (int)v & 0xff;
        hir_cu_rec_other(hir_cu(be));
        HIR_CK(e, cuda, cudaMemsetAsync(out->data, byte, (size_t)n * es, s->s));
        return 0;
    }
    hir_operand a;
    memset(&a, 0, sizeof a);
    a.is_scalar = 1;
    a.scalar_is_int = !hir_dtype_is_float(out->dtype);
    a.f = v;
    a.i = (int64_t)v;
    const hir_operand *ins[1] = {&a};
    return elementwise(be, s, 1, HIR_UN_SET, out, ins, e);
}

int hir_cu_copy(hir_backend *be, hir_stream *s, const hir_view *dst, const hir_view *src,
                hir_error *e)
{
    if (dst->ndim != src->ndim)
        return hir_error_set(e, "copy: %d-D into %d-D", src->ndim, dst->ndim), -1;
    for (int d = 0; d < dst->ndim; d++)
        if (dst->shape[d] != src->shape[d] && !(src->shape[d] == 1 && src->stride[d] == 0))
            return hir_error_set(e, "copy: shapes differ at dim %d (%lld vs %lld)", d,
                                 (long long)dst->shape[d], (long long)src->shape[d]), -1;
    int64_t n = hir_cu_numel(dst);
    if (n == 0) return 0;
    size_t es = hir_dtype_size(dst->dtype);
    if (dst->dtype == src->dtype && es > 0) {
        /* same type: use the copy engines when the region is 1-D dense or 2-D pitched */
        const int64_t *strides[2] = {dst->stride, src->stride};
        int64_t shp[HIR_MAX_DIMS], str[2][HIR_MAX_DIMS];
        int nd = collapse(dst->ndim, dst->shape, 2, strides, shp, str);
        int engine = nd == 0 || (nd == 1 && str[0][0] == 1 && str[1][0] == 1) ||
                     (nd == 2 && str[0][1] == 1 && str[1][1] == 1 && str[0][0] >= shp[1] &&
                      str[1][0] >= shp[1]);
        if (engine) hir_cu_rec_other(hir_cu(be));
        if (nd == 0) {
            HIR_CK(e, cuda, cudaMemcpyAsync(dst->data, src->data, es, cudaMemcpyDeviceToDevice,
                                            s->s));
            return 0;
        }
        if (nd == 1 && str[0][0] == 1 && str[1][0] == 1) {
            HIR_CK(e, cuda, cudaMemcpyAsync(dst->data, src->data, (size_t)n * es,
                                            cudaMemcpyDeviceToDevice, s->s));
            return 0;
        }
        if (nd == 2 && str[0][1] == 1 && str[1][1] == 1 && str[0][0] >= shp[1] &&
            str[1][0] >= shp[1]) {
            HIR_CK(e, cuda, cudaMemcpy2DAsync(dst->data, (size_t)str[0][0] * es, src->data,
                                              (size_t)str[1][0] * es, (size_t)shp[1] * es,
                                              (size_t)shp[0], cudaMemcpyDeviceToDevice, s->s));
            return 0;
        }
    }
    hir_operand a;
    memset(&a, 0, sizeof a);
    a.view = *src;
    return hir_cu_unary(be, s, HIR_UN_SET, dst, &a, e);
}

int hir_cu_reduce(hir_backend *be, hir_stream *s, hir_reduce_op op, const hir_view *out,
                  const hir_view *in, uint32_t mask, hir_error *e)
{
    hir_cu_backend *cb = hir_cu(be);
    if (check_dtype(out->dtype, e) < 0 || check_dtype(in->dtype, e) < 0) return -1;
    if (out->ndim != in->ndim)
        return hir_error_set(e, "reduce: output has %d dims, input %d", out->ndim, in->ndim),
               -1;
    red_params p;
    memset(&p, 0, sizeof p);
    ew_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.tag = 9;
    spec.op = op;
    spec.out = out->dtype;
    spec.in[0] = in->dtype;
    int nk = 0, nr = 0;
    p.nout = 1, p.nred = 1;
    for (int d = 0; d < in->ndim; d++) {
        if (in->shape[d] == 1) continue;
        if (mask & (1u << d)) {
            if (out->shape[d] != 1)
                return hir_error_set(e, "reduce: reduced dim %d of the output is %lld, not 1",
                                     d, (long long)out->shape[d]), -1;
            p.rshape[nr] = in->shape[d];
            p.rin[nr++] = in->stride[d];
            p.nred *= in->shape[d];
        } else {
            if (out->shape[d] != in->shape[d])
                return hir_error_set(e, "reduce: kept dim %d differs (%lld vs %lld)", d,
                                     (long long)out->shape[d], (long long)in->shape[d]), -1;
            p.kshape[nk] = in->shape[d];
            p.kin[nk] = in->stride[d];
            p.kout[nk++] = out->stride[d];
            p.nout *= in->shape[d];
        }
    }
    if (p.nred == 0 || p.nout == 0) {
        if (p.nout == 0) return 0;
        /* empty reduction: the identity (sum 0, prod 1, max -inf ...) */
        double id = op == HIR_RED_SUM ? 0.0 : op == HIR_RED_PROD ? 1.0
                  : (op == HIR_RED_MAX || op == HIR_RED_FMAX) ? -1.0 / 0.0 : 1.0 / 0.0;
        return hir_cu_fill(be, s, out, id, e);
    }
    spec.nd = nk;
    spec.nr = nr;
    p.out = out->data;
    p.in = in->data;
    CUfunction fn;
    if (kernel_get(cb, &spec, &fn, e) < 0) return -1;
    unsigned block = p.nred >= EW_BLOCK ? EW_BLOCK : (unsigned)((p.nred + 31) / 32 * 32);
    int64_t grid = p.nout, cap = (int64_t)cb->sm_count * 64;
    if (grid > cap) grid = cap;
    return launch(cb, s, fn, (unsigned)grid, block, &p, sizeof p, e);
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

int hir_cu_codegen_check(int cc_major, int cc_minor, int *ncompiled, FILE *log, hir_error *e)
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
                ew_spec sp;
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
