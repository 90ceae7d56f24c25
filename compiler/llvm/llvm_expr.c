/*
 * llvm_expr.c — kir expressions to LLVM instructions.
 *
 * Each operator maps to one instruction chosen by its operand type. C
 * semantics that LLVM spells differently, or leaves undefined where kc
 * does not, are written out here:
 *   - != on floats is unordered (true for NaN): fcmp une; the others are
 *     ordered;
 *   - a float to integer conversion is the hardware's (saturating, NaN to
 *     0 on both targets) and never poison: fptosi/fptoui are frozen, so an
 *     out-of-range value gives some number, not undefined behaviour that
 *     LLVM could optimise on;
 *   - shifts take their amount modulo the width, as the hardware does,
 *     instead of LLVM's poison for an out-of-range amount;
 *   - kc_cdiv is a ceiling division for any signs.
 * Integer division by zero stays undefined, as docs/language.md says.
 */
#include "llvm_private.h"

#include <string.h>

LLVMValueRef lw_flags(LLVMValueRef inst, LLVMFastMathFlags f)
{
    if (LLVMCanValueUseFastMathFlags(inst))
        LLVMSetFastMathFlags(inst, f);
    return inst;
}

static LLVMValueRef splat_value(lw *W, LLVMValueRef x, int lanes)
{
    LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(x), (unsigned)lanes);
    LLVMValueRef v = LLVMBuildInsertElement(W->b, LLVMGetPoison(vt), x, lw_u32(W, 0), "");
    LLVMValueRef mask = LLVMConstNull(LLVMVectorType(lw_i32(W), (unsigned)lanes));
    return LLVMBuildShuffleVector(W->b, v, LLVMGetPoison(vt), mask, "");
}

/* ---- conversions ------------------------------------------------------------------- */

static LLVMValueRef to_int(lw *W, LLVMValueRef v, const kc_type *from, const kc_type *to, LLVMTypeRef rt)
{
    if (kc_scalar_is_float(from->scalar)) {
        LLVMValueRef x = kc_scalar_is_signed(to->scalar) ? LLVMBuildFPToSI(W->b, v, rt, "")
                                                         : LLVMBuildFPToUI(W->b, v, rt, "");
        return LLVMBuildFreeze(W->b, x, "");
    }
    int fb = kc_scalar_bits(from->scalar), tb = kc_scalar_bits(to->scalar);
    if (fb == tb)
        return v; /* int <-> uint: the same bits */
    if (fb > tb)
        return LLVMBuildTrunc(W->b, v, rt, "");
    return kc_scalar_is_signed(from->scalar) ? LLVMBuildSExt(W->b, v, rt, "")
                                             : LLVMBuildZExt(W->b, v, rt, "");
}

LLVMValueRef lw_convert(lw *W, LLVMValueRef v, const kc_type *from, const kc_type *to)
{
    if (kc_type_equal(from, to))
        return v;
    if (from->lanes == 1 && to->lanes > 1)
        return splat_value(W, lw_convert(W, v, from, kc_type_scalar(to->scalar)), to->lanes);
    kc_scalar fs = from->scalar, ts = to->scalar;
    LLVMTypeRef rt = lw_type(W, to);
    if (fs == KC_S_BOOL)
        return kc_scalar_is_float(ts) ? LLVMBuildUIToFP(W->b, v, rt, "") : LLVMBuildZExt(W->b, v, rt, "");
    if (ts == KC_S_BOOL) { /* C: any non-zero value is true, NaN included */
        LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(v));
        return kc_scalar_is_float(fs) ? LLVMBuildFCmp(W->b, LLVMRealUNE, v, zero, "")
                                      : LLVMBuildICmp(W->b, LLVMIntNE, v, zero, "");
    }
    bool ff = kc_scalar_is_float(fs), tf = kc_scalar_is_float(ts);
    if (ff && tf)
        return kc_scalar_bits(fs) < kc_scalar_bits(ts) ? LLVMBuildFPExt(W->b, v, rt, "")
                                                       : LLVMBuildFPTrunc(W->b, v, rt, "");
    if (tf)
        return kc_scalar_is_signed(fs) ? LLVMBuildSIToFP(W->b, v, rt, "") : LLVMBuildUIToFP(W->b, v, rt, "");
    return to_int(W, v, from, to, rt);
}

LLVMValueRef lw_index(lw *W, const kc_ir_expr *e)
{
    return lw_convert(W, lw_expr(W, e), e->type, kc_type_scalar(KC_S_LONG));
}

/* ---- operators ------------------------------------------------------------------------ */

static LLVMValueRef unary(lw *W, const kc_ir_expr *e)
{
    LLVMValueRef a = lw_expr(W, e->a);
    switch (e->op) {
    case KC_OP_NEG: return kc_type_is_float(e->type) ? LLVMBuildFNeg(W->b, a, "") : LLVMBuildNeg(W->b, a, "");
    default: return LLVMBuildNot(W->b, a, ""); /* ! on bool, ~ on integers */
    }
}

/* The shift amount in the value's type, modulo its width. */
static LLVMValueRef shift_amount(lw *W, const kc_ir_expr *e, LLVMValueRef b)
{
    const kc_type *vt = e->a->type, *at = e->b->type;
    const kc_type *want = kc_type_vector(vt->scalar, at->lanes);
    b = lw_convert(W, b, at, want);
    b = lw_convert(W, b, want, vt);
    return LLVMBuildAnd(W->b, b, lw_const(W, vt, (uint64_t)kc_scalar_bits(vt->scalar) - 1, 0), "");
}

/* kc_lang.h's LLVM columns: for float, signed and unsigned operands, the
 * LLVMOpcode of each arithmetic operator, the predicate of each
 * comparison; LLVMNone where the table gives none. */
enum { LLVMNone = -1 };
static const int ops[KC_OP_COUNT][3] = {
#define X(id, s, w, n, p, sf, ss, su, sb, f, sg, u) [KC_OP_##id] = {LLVM##f, LLVM##sg, LLVM##u},
    KC_OPS(X)
#undef X
};

static bool is_comparison(kc_op op)
{
    return kc_op_precedence(op) == KC_PREC_REL || kc_op_precedence(op) == KC_PREC_EQ;
}

static LLVMValueRef binary(lw *W, const kc_ir_expr *e)
{
    LLVMValueRef a = lw_expr(W, e->a), b = lw_expr(W, e->b);
    const kc_type *t = e->a->type;
    bool fl = kc_type_is_float(t);
    int code = ops[e->op][fl ? 0 : kc_scalar_is_signed(t->scalar) ? 1 : 2];
    if (code == LLVMNone) {
        KC_BROKEN_INVARIANT("the operator table lowers every operator sema lets through");
        lw_fail(W, "internal error: operator '%s' on %s reached the LLVM backend", kc_op_text(e->op),
                kc_scalar_name(t->scalar));
        return a;
    }
    if (is_comparison(e->op))
        return fl ? LLVMBuildFCmp(W->b, (LLVMRealPredicate)code, a, b, "")
                  : LLVMBuildICmp(W->b, (LLVMIntPredicate)code, a, b, "");
    if (e->op == KC_OP_SHL || e->op == KC_OP_SHR)
        b = shift_amount(W, e, b);
    LLVMValueRef r = LLVMBuildBinOp(W->b, (LLVMOpcode)code, a, b, "");
    /* docs/language.md: a * b + c may be fused, as Vulkan's drivers do
     * with SPIR-V; without 'contract' AMDGPU and NVPTX never form an FMA
     * (half the peak). The math library's error-free steps are exact. */
    if (fl && !e->exact && (code == LLVMFAdd || code == LLVMFSub || code == LLVMFMul))
        lw_flags(r, LLVMFastMathAllowContract);
    return r;
}

static LLVMValueRef vector(lw *W, const kc_ir_expr *e)
{
    if (e->nargs == 1)
        return splat_value(W, lw_expr(W, e->args[0]), e->type->lanes);
    LLVMValueRef v = LLVMGetPoison(lw_type(W, e->type));
    for (int i = 0; i < e->nargs; i++)
        v = LLVMBuildInsertElement(W->b, v, lw_expr(W, e->args[i]), lw_u32(W, (uint32_t)i), "");
    return v;
}

/* ---- built-ins ------------------------------------------------------------------------- */

/* group * size + local; no wrap: a grid has fewer than 2^32 invocations. */
static LLVMValueRef global_id(lw *W, int d)
{
    LLVMValueRef g = W->arch->group_id(W, d);
    if (W->fn->wg_size[d] == 1)
        return g;
    LLVMValueRef base = LLVMBuildNUWMul(W->b, g, lw_u32(W, (uint32_t)W->fn->wg_size[d]), "");
    return LLVMBuildNUWAdd(W->b, base, W->arch->local_id(W, d), "");
}

static LLVMValueRef local_id(lw *W, int d)
{
    return W->fn->wg_size[d] == 1 ? lw_u32(W, 0) : W->arch->local_id(W, d);
}

static LLVMValueRef id_builtin(lw *W, const kc_ir_expr *e)
{
    int d = e->nargs ? (int)(e->args[0]->ival % 3) : 0;
    switch (e->builtin) {
    case KC_B_GLOBAL_ID: return global_id(W, d);
    case KC_B_LOCAL_ID: return local_id(W, d);
    case KC_B_GROUP_ID: return W->arch->group_id(W, d);
    case KC_B_GROUP_SIZE: return lw_u32(W, (uint32_t)W->fn->wg_size[d]);
    case KC_B_NUM_GROUPS: return W->arch->num_groups(W, d);
    case KC_B_SUBGROUP_SIZE: return lw_u32(W, (uint32_t)W->target.wave_size);
    case KC_B_SUBGROUP_ID:
        W->layout->needs_subgroups = true;
        return LLVMBuildUDiv(W->b, lw_linear_local_id(W), lw_u32(W, (uint32_t)W->target.wave_size), "");
    default: W->layout->needs_subgroups = true; return W->arch->lane_id(W);
    }
}

/* kc_cdiv(a, b) = a / b + (a % b != 0 && (a < 0) == (b < 0)), any signs. */
static LLVMValueRef cdiv(lw *W, const kc_type *t, LLVMValueRef a, LLVMValueRef b)
{
    bool sg = kc_scalar_is_signed(t->scalar);
    LLVMBuilderRef B = W->b;
    LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(a));
    LLVMValueRef q = sg ? LLVMBuildSDiv(B, a, b, "") : LLVMBuildUDiv(B, a, b, "");
    LLVMValueRef r = sg ? LLVMBuildSRem(B, a, b, "") : LLVMBuildURem(B, a, b, "");
    LLVMValueRef inexact = LLVMBuildICmp(B, LLVMIntNE, r, zero, "");
    if (sg) {
        LLVMValueRef an = LLVMBuildICmp(B, LLVMIntSLT, a, zero, ""),
                     bn = LLVMBuildICmp(B, LLVMIntSLT, b, zero, "");
        inexact = LLVMBuildAnd(B, inexact, LLVMBuildICmp(B, LLVMIntEQ, an, bn, ""), "");
    }
    return LLVMBuildAdd(B, q, LLVMBuildZExt(B, inexact, LLVMTypeOf(a), ""), "");
}

/* The high 32 bits of the 64-bit product of two uints. */
static LLVMValueRef mul_hi(lw *W, LLVMValueRef a, LLVMValueRef b)
{
    LLVMTypeRef i64 = LLVMInt64TypeInContext(W->ctx);
    LLVMValueRef p = LLVMBuildMul(W->b, LLVMBuildZExt(W->b, a, i64, ""), LLVMBuildZExt(W->b, b, i64, ""), "");
    return LLVMBuildTrunc(W->b, LLVMBuildLShr(W->b, p, LLVMConstInt(i64, 32, 0), ""), lw_i32(W), "");
}

static LLVMValueRef min_max(lw *W, kc_builtin b, const kc_type *t, LLVMValueRef *a)
{
    LLVMTypeRef rt = lw_type(W, t);
    bool fl = kc_type_is_float(t), sg = kc_scalar_is_signed(t->scalar);
    /* floats: the number wins over a NaN (C's fminf/fmaxf) */
    const char *lo = fl ? "llvm.maxnum" : sg ? "llvm.smax" : "llvm.umax";
    const char *hi = fl ? "llvm.minnum" : sg ? "llvm.smin" : "llvm.umin";
    if (b == KC_B_MIN)
        return lw_intrinsic(W, hi, &rt, 1, a, 2);
    if (b == KC_B_MAX)
        return lw_intrinsic(W, lo, &rt, 1, a, 2);
    LLVMValueRef x = lw_intrinsic(W, lo, &rt, 1, (LLVMValueRef[]){a[0], a[1]}, 2);
    return lw_intrinsic(W, hi, &rt, 1, (LLVMValueRef[]){x, a[2]}, 2);
}

LLVMValueRef lw_builtin(lw *W, const kc_ir_expr *e)
{
    kc_builtin b = e->builtin;
    if (b <= KC_B_SUBGROUP_LOCAL_ID)
        return id_builtin(W, e);
    LLVMValueRef a[3] = {0, 0, 0};
    for (int i = 0; i < e->nargs && i < 3; i++)
        a[i] = lw_expr(W, e->args[i]);
    const kc_type *t = e->type;
    switch (b) {
    case KC_B_SUBGROUP_ADD:
    case KC_B_SUBGROUP_MIN:
    case KC_B_SUBGROUP_MAX:
    case KC_B_SUBGROUP_SHUFFLE:
    case KC_B_SUBGROUP_BROADCAST:
    case KC_B_SUBGROUP_SHUFFLE_UP:
    case KC_B_SUBGROUP_SHUFFLE_DOWN:
    case KC_B_SUBGROUP_SHUFFLE_XOR:
    case KC_B_SUBGROUP_INCLUSIVE_ADD:
    case KC_B_SUBGROUP_EXCLUSIVE_ADD: return lw_subgroup(W, b, t, a, e->nargs > 1 ? e->args[1] : NULL);
    case KC_B_POPCOUNT:
    case KC_B_BITREVERSE: {
        LLVMTypeRef rt = lw_type(W, t);
        return lw_intrinsic(W, b == KC_B_POPCOUNT ? "llvm.ctpop" : "llvm.bitreverse", &rt, 1, a, 1);
    }
    case KC_B_MIN:
    case KC_B_MAX:
    case KC_B_CLAMP: return min_max(W, b, t, a);
    case KC_B_CDIV: return cdiv(W, t, a[0], a[1]);
    case KC_B_MUL_HI: return mul_hi(W, a[0], a[1]);
    case KC_B_AS_UINT:
    case KC_B_AS_INT:
    case KC_B_AS_FLOAT: return LLVMBuildBitCast(W->b, a[0], lw_type(W, t), "");
    default: break;
    }
    if (lw_is_math(b))
        return lw_math_builtin(W, b, t, a);
    KC_BROKEN_INVARIANT("every built-in that reaches the LLVM backend is lowered");
    lw_fail(W, "internal error: '%s' reached the LLVM backend", kc_builtins[b].name);
    return LLVMGetPoison(lw_type(W, t));
}

/* ---- expressions ---------------------------------------------------------------------------- */

static LLVMValueRef load(lw *W, const kc_ir_expr *e)
{
    const void *key = e->root.var ? (const void *)e->root.var : (const void *)e->root.param;
    lw_mem *m = lw_mem_of(W, key);
    LLVMValueRef i = e->a ? lw_index(W, e->a) : NULL;
    return m ? lw_load(W, m, i, e->type) : LLVMGetPoison(lw_type(W, e->type));
}

LLVMValueRef lw_expr(lw *W, const kc_ir_expr *e)
{
    switch (e->kind) {
    case KIR_CONST: return lw_const(W, e->type, e->ival, e->fval);
    case KIR_PARAM: return W->params[e->param->index];
    case KIR_VAR: {
        lw_mem *m = lw_mem_of(W, e->var);
        return m ? lw_load(W, m, NULL, e->type) : LLVMGetPoison(lw_type(W, e->type));
    }
    case KIR_LOAD: return load(W, e);
    case KIR_UNARY: return unary(W, e);
    case KIR_BINARY: return binary(W, e);
    case KIR_SELECT: {
        LLVMValueRef c = lw_expr(W, e->a), a = lw_expr(W, e->b), b = lw_expr(W, e->c);
        return LLVMBuildSelect(W->b, c, a, b, "");
    }
    case KIR_CAST: return lw_convert(W, lw_expr(W, e->a), e->a->type, e->type);
    case KIR_LANE: return LLVMBuildExtractElement(W->b, lw_expr(W, e->a), lw_u32(W, (uint32_t)e->lane), "");
    case KIR_VEC: return vector(W, e);
    case KIR_BUILTIN: return lw_builtin(W, e);
    case KIR_TUNABLE: break;
    }
    KC_BROKEN_INVARIANT("the LLVM backend sees only specialised kir");
    lw_fail(W, "internal error: unspecialised kir reached the LLVM backend");
    return LLVMGetPoison(lw_i32(W));
}
