/*
 * llvm_math.c — the math built-ins.
 *
 * What LLVM does exactly on both targets is used as it is, on half and
 * vectors too: fabs floor ceil round (halves away from zero, C's roundf)
 * fmin fmax (minnum/maxnum: the number wins over a NaN) fma copysign, and
 * sqrt (correctly rounded: AMDGPU expands llvm.sqrt.f32 so by default,
 * NVPTX emits sqrt.rn; half goes through float, which is exact here since
 * float has more than twice half's precision).
 *
 * The accurate transcendental functions (sinf, expf, erff, …) never get
 * here: kc's math library, written in kc, expands them into plain kir
 * before any backend. What remains are the exact operations, sqrtf (the
 * targets' own is correctly rounded), and the kc_fast_* forms, which are
 * the native instructions. tanh has no native instruction on AMDGPU, so
 * kc_fast_tanhf there is a short formula on the native exp.
 */
#include "llvm_private.h"

bool lw_is_math(kc_builtin b)
{
    return (b >= KC_B_SQRT && b <= KC_B_COPYSIGN) || (b >= KC_B_FAST_SQRT && b <= KC_B_FAST_DIV);
}

static LLVMValueRef f1(lw *W, const char *name, LLVMValueRef x)
{
    LLVMTypeRef t = LLVMTypeOf(x);
    return lw_intrinsic(W, name, &t, 1, &x, 1);
}

static LLVMValueRef fmul(lw *W, LLVMValueRef a, double k)
{
    return LLVMBuildFMul(W->b, a, lw_f32c(W, k), "");
}

/* a * x + b, for polynomials in Horner form */
static LLVMValueRef horner(lw *W, LLVMValueRef x, const double *c, int n)
{
    LLVMValueRef p = lw_f32c(W, c[0]);
    for (int i = 1; i < n; i++)
        p = LLVMBuildFAdd(W->b, LLVMBuildFMul(W->b, p, x, ""), lw_f32c(W, c[i]), "");
    return p;
}

static LLVMValueRef copysign_(lw *W, LLVMValueRef mag, LLVMValueRef sign)
{
    LLVMTypeRef t = lw_f32(W);
    return lw_intrinsic(W, "llvm.copysign", &t, 1, (LLVMValueRef[]){mag, sign}, 2);
}

static LLVMValueRef native(lw *W, lw_math op, LLVMValueRef x, LLVMValueRef y)
{
    return W->arch->math(W, op, x, y);
}

/* kc_fast_tanhf without a native instruction: a Pade approximant
 * (Lambert's continued fraction) near 0, where 1 - 2 / (e^2|x| + 1) would
 * cancel, and that formula on the native exp beyond. */
static LLVMValueRef fast_tanh(lw *W, LLVMValueRef x)
{
    LLVMBuilderRef B = W->b;
    LLVMValueRef x2 = LLVMBuildFMul(B, x, x, "");
    static const double num[] = {1, 378, 17325, 135135}, den[] = {28, 3150, 62370, 135135};
    LLVMValueRef small =
        LLVMBuildFDiv(B, LLVMBuildFMul(B, x, horner(W, x2, num, 4), ""), horner(W, x2, den, 4), "");
    LLVMValueRef ax = f1(W, "llvm.fabs", x);
    LLVMValueRef e = native(W, LW_FAST_EXP, fmul(W, ax, 2.0), NULL);
    LLVMValueRef e1 = LLVMBuildFAdd(B, e, lw_f32c(W, 1.0), "");
    LLVMValueRef q = native(W, LW_FAST_DIV, lw_f32c(W, 2.0), e1);
    LLVMValueRef big = copysign_(W, LLVMBuildFSub(B, lw_f32c(W, 1.0), q, ""), x);
    LLVMValueRef near0 = LLVMBuildFCmp(B, LLVMRealOLT, ax, lw_f32c(W, 0.625), "");
    return LLVMBuildSelect(B, near0, small, big, "");
}

static LLVMValueRef fast_pow(lw *W, LLVMValueRef x, LLVMValueRef y)
{
    LLVMValueRef l = native(W, LW_FAST_LOG2, x, NULL);
    return native(W, LW_FAST_EXP2, LLVMBuildFMul(W->b, y, l, ""), NULL);
}

/* One float lane of a kc_fast_ function. */
static LLVMValueRef lane(lw *W, kc_builtin b, LLVMValueRef x, LLVMValueRef y)
{
    switch (b) {
    case KC_B_FAST_SQRT: return native(W, LW_FAST_SQRT, x, NULL);
    case KC_B_FAST_RSQRT: return native(W, LW_FAST_RSQRT, x, NULL);
    case KC_B_FAST_EXP: return native(W, LW_FAST_EXP, x, NULL);
    case KC_B_FAST_EXP2: return native(W, LW_FAST_EXP2, x, NULL);
    case KC_B_FAST_LOG: return native(W, LW_FAST_LOG, x, NULL);
    case KC_B_FAST_LOG2: return native(W, LW_FAST_LOG2, x, NULL);
    case KC_B_FAST_POW: return fast_pow(W, x, y);
    case KC_B_FAST_SIN: return native(W, LW_FAST_SIN, x, NULL);
    case KC_B_FAST_COS: return native(W, LW_FAST_COS, x, NULL);
    case KC_B_FAST_TAN:
        return native(W, LW_FAST_DIV, native(W, LW_FAST_SIN, x, NULL), native(W, LW_FAST_COS, x, NULL));
    case KC_B_FAST_TANH: {
        LLVMValueRef t = native(W, LW_FAST_TANH, x, NULL);
        return t ? t : fast_tanh(W, x);
    }
    case KC_B_FAST_DIV: return native(W, LW_FAST_DIV, x, y);
    default: break;
    }
    KC_BROKEN_INVARIANT("every built-in that reaches the LLVM backend has a lowering");
    lw_fail(W, "internal error: no LLVM lowering for '%s'", kc_builtins[b].name);
    return x;
}

/* Runs lane() on each component, in float. */
static LLVMValueRef per_lane(lw *W, kc_builtin b, const kc_type *t, LLVMValueRef *a)
{
    const kc_type *ft = kc_type_vector(KC_S_FLOAT, t->lanes);
    LLVMValueRef x = lw_convert(W, a[0], t, ft), y = a[1] ? lw_convert(W, a[1], t, ft) : NULL;
    LLVMValueRef r;
    if (t->lanes == 1) {
        r = lane(W, b, x, y);
    } else {
        r = LLVMGetPoison(lw_type(W, ft));
        for (int i = 0; i < t->lanes; i++) {
            LLVMValueRef k = lw_u32(W, (uint32_t)i);
            LLVMValueRef xi = LLVMBuildExtractElement(W->b, x, k, "");
            LLVMValueRef yi = y ? LLVMBuildExtractElement(W->b, y, k, "") : NULL;
            r = LLVMBuildInsertElement(W->b, r, lane(W, b, xi, yi), k, "");
        }
    }
    return lw_convert(W, r, ft, t);
}

static LLVMValueRef exact(lw *W, const char *name, const kc_type *t, LLVMValueRef *a, int n)
{
    LLVMTypeRef rt = lw_type(W, t);
    return lw_intrinsic(W, name, &rt, 1, a, n);
}

/* kc_lang.h's llvm column: the intrinsic that computes a built-in exactly. */
static const char *const intrinsic[KC_B_COUNT] = {
#define X(id, name, n, rule, g, l) [KC_B_##id] = l,
    KC_BUILTINS(X)
#undef X
};

LLVMValueRef lw_math_builtin(lw *W, kc_builtin b, const kc_type *t, LLVMValueRef *a)
{
    if (b == KC_B_SQRT) { /* half goes through float (docs/backends.md, sqrtf) */
        const kc_type *ft = kc_type_vector(KC_S_FLOAT, t->lanes);
        LLVMValueRef x = lw_convert(W, a[0], t, ft);
        return lw_convert(W, exact(W, intrinsic[b], ft, &x, 1), ft, t);
    }
    if (intrinsic[b])
        return exact(W, intrinsic[b], t, a, kc_builtins[b].nargs);
    return per_lane(W, b, t, a);
}
