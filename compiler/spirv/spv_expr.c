/*
 * spv_expr.c — kir expressions to SPIR-V instructions.
 *
 * Each operator maps to one opcode chosen by its operand type (signed,
 * unsigned, float, bool). C semantics that SPIR-V spells differently are
 * written out here: != is unordered (true for NaN), roundf rounds halves
 * away from zero, fminf/fmaxf return the number when one side is NaN
 * (GLSL NMin/NMax), copysignf is bit arithmetic, kc_cdiv is a ceiling
 * division for any signs.
 */
#include "spv_private.h"

#include <assert.h>

#include <string.h>

static const kc_type *scalar_of(const kc_type *t) { return kc_type_scalar(t->scalar); }

spv_var *spv_var_of(spv *S, const void *key)
{
    char k[32];
    snprintf(k, sizeof(k), "%p", key);
    spv_var *v = kc_map_get(&S->vars, k);
    if (!v && !S->failed) {
        KC_BROKEN_INVARIANT("the SPIR-V backend declares every variable before use");
        kc_error_at(S->diag, S->fn->loc, "internal error: SPIR-V backend has no variable for an operand");
        S->failed = true;
    }
    return v;
}

uint32_t spv_builtin_input(spv *S, SpvBuiltIn b, bool vec3)
{
    for (int i = 0; i < S->ninputs; i++)
        if (S->input_list[i] == (uint32_t)b)
            return S->inputs[i];
    uint32_t u = spv_type_scalar(S, KC_S_UINT);
    uint32_t t = u;
    if (vec3) { /* uvec3: declared directly, kc has no 3-component vectors */
        char key[] = "uvec3";
        t = (uint32_t)(uintptr_t)kc_map_get(&S->cache, key);
        if (!t) {
            t = spv_id(S);
            spv_op(&S->types, SpvOpTypeVector, 3, (uint32_t[]){t, u, 3});
            kc_map_put(S->arena, &S->cache, "uvec3", (void *)(uintptr_t)t);
        }
    }
    uint32_t ptr = spv_type_ptr(S, SpvStorageClassInput, t);
    uint32_t id = spv_id(S);
    spv_op(&S->types, SpvOpVariable, 3, (uint32_t[]){ptr, id, SpvStorageClassInput});
    spv_decorate(S, id, SpvDecorationBuiltIn, 1, (uint32_t[]){(uint32_t)b});
    S->input_list[S->ninputs] = (uint32_t)b;
    S->inputs[S->ninputs++] = id;
    return id;
}

/* ---- memory -------------------------------------------------------------------- */

uint32_t spv_elem_ptr(spv *S, const spv_var *v, uint32_t index, int lane, const kc_type *t)
{
    uint32_t idx[3];
    int n = 0;
    if (v->in_block)
        idx[n++] = spv_const_i32(S, 0);
    if (index)
        idx[n++] = index;
    uint32_t pointee = v->elem_type;
    if (lane >= 0) {
        idx[n++] = spv_const_i32(S, lane);
        pointee = spv_type_scalar(S, t->scalar);
    }
    if (!n)
        return v->id;
    uint32_t w[5] = {v->id};
    memcpy(w + 1, idx, sizeof(uint32_t) * (size_t)n);
    return spv_emit_op(S, SpvOpAccessChain, spv_type_ptr(S, v->sc, pointee), n + 1, w);
}

/* Converts between a value and how it is stored: bool as a uint 0/1,
 * float as its bits where float atomics use compare-and-swap. */
static uint32_t from_storage(spv *S, const spv_var *v, uint32_t x, const kc_type *t)
{
    if (v->bool_as_uint)
        return spv_emit_op(S, SpvOpINotEqual, spv_type(S, t), 2, (uint32_t[]){x, spv_const_u32(S, 0)});
    if (v->float_as_uint)
        return spv_emit_op(S, SpvOpBitcast, spv_type(S, t), 1, (uint32_t[]){x});
    return x;
}

static uint32_t to_storage(spv *S, const spv_var *v, uint32_t x)
{
    uint32_t u = spv_type_scalar(S, KC_S_UINT);
    if (v->bool_as_uint)
        return spv_emit_op(S, SpvOpSelect, u, 3, (uint32_t[]){x, spv_const_u32(S, 1), spv_const_u32(S, 0)});
    if (v->float_as_uint)
        return spv_emit_op(S, SpvOpBitcast, u, 1, (uint32_t[]){x});
    return x;
}

/* An element of a buffer's wide view (spirv.c) */
static uint32_t view_ptr(spv *S, const spv_var *v, uint32_t index)
{
    return spv_emit_op(S, SpvOpAccessChain, spv_type_ptr(S, v->sc, v->view_type), 3,
                       (uint32_t[]){v->view_id, spv_const_i32(S, 0), index});
}

/* An element of a const buffer read as a texel (spirv.c,
 * declare_texel_buffer): the fetch gives 4 lanes, of which a scalar
 * element takes the first; a half4's come as floats, converted to half
 * unless widen (the code casts them to float4 at once). */
static uint32_t fetch_texel(spv *S, const spv_var *v, uint32_t index, const kc_type *t, bool widen)
{
    uint32_t simg = spv_emit_op(S, SpvOpLoad, v->texel_sampled, 1, (uint32_t[]){v->id});
    uint32_t img = spv_emit_op(S, SpvOpImage, v->texel_image, 1, (uint32_t[]){simg});
    bool half = t->scalar == KC_S_HALF;
    uint32_t four = spv_type(S, kc_type_vector(half ? KC_S_FLOAT : t->scalar, 4));
    uint32_t x = spv_emit_op(S, SpvOpImageFetch, four, 2, (uint32_t[]){img, index});
    if (half && !widen)
        return spv_emit_op(S, SpvOpFConvert, spv_type(S, t), 1, (uint32_t[]){x});
    if (t->lanes == 4)
        return x;
    return spv_emit_op(S, SpvOpCompositeExtract, spv_type(S, t), 2, (uint32_t[]){x, 0});
}

uint32_t spv_load_elem(spv *S, const spv_var *v, uint32_t index, const kc_type *t)
{
    if (v->texel_image)
        return fetch_texel(S, v, index, t, false);
    if (v->view_id && index) {
        uint32_t x = spv_emit_op(S, SpvOpLoad, v->view_type, 1, (uint32_t[]){view_ptr(S, v, index)});
        return spv_emit_op(S, SpvOpBitcast, spv_type(S, t), 1, (uint32_t[]){x});
    }
    uint32_t ptr = spv_elem_ptr(S, v, index, -1, t);
    uint32_t stored = v->bool_as_uint || v->float_as_uint ? spv_type_scalar(S, KC_S_UINT) : spv_type(S, t);
    uint32_t x = spv_emit_op(S, SpvOpLoad, stored, 1, (uint32_t[]){ptr});
    return from_storage(S, v, x, t);
}

void spv_store_elem(spv *S, const spv_var *v, uint32_t index, int lane, uint32_t value, const kc_type *t)
{
    if (v->view_id && index && lane < 0) {
        uint32_t x = spv_emit_op(S, SpvOpBitcast, v->view_type, 1, (uint32_t[]){value});
        spv_op(&S->code, SpvOpStore, 2, (uint32_t[]){view_ptr(S, v, index), x});
        return;
    }
    uint32_t ptr = spv_elem_ptr(S, v, index, lane, t);
    spv_op(&S->code, SpvOpStore, 2, (uint32_t[]){ptr, to_storage(S, v, value)});
}

/* ---- conversions ----------------------------------------------------------------- */

static uint32_t splat(spv *S, uint32_t x, const kc_type *to)
{
    uint32_t parts[4] = {x, x, x, x};
    return spv_emit_op(S, SpvOpCompositeConstruct, spv_type(S, to), to->lanes, parts);
}

static uint32_t zero_or_one(spv *S, kc_scalar s, bool one)
{
    return spv_const(S, s, one, one ? 1.0 : 0.0);
}

/* 16-bit storage alone allows a half only width conversions (OpFConvert),
 * so a half meets integers and bools by way of float. That gives the same
 * value as a direct conversion: every integer a half can hold is exact in a
 * float, and one too large to be exact there is too large for a half
 * either way. */
static bool half_meets_non_float(kc_scalar fs, kc_scalar ts)
{
    return (fs == KC_S_HALF && !kc_scalar_is_float(ts)) || (ts == KC_S_HALF && !kc_scalar_is_float(fs));
}

uint32_t spv_convert(spv *S, uint32_t v, const kc_type *from, const kc_type *to)
{
    if (kc_type_equal(from, to))
        return v;
    if (from->lanes == 1 && to->lanes > 1)
        return splat(S, spv_convert(S, v, from, scalar_of(to)), to);
    kc_scalar fs = from->scalar, ts = to->scalar;
    if (half_meets_non_float(fs, ts)) {
        const kc_type *f32 = kc_type_vector(KC_S_FLOAT, from->lanes);
        return spv_convert(S, spv_convert(S, v, from, f32), f32, to);
    }
    uint32_t rt = spv_type(S, to);
    if (fs == KC_S_BOOL)
        return spv_emit_op(S, SpvOpSelect, rt, 3, (uint32_t[]){v, zero_or_one(S, ts, true), zero_or_one(S, ts, false)});
    if (ts == KC_S_BOOL) {
        bool fl = kc_scalar_is_float(fs);
        /* C: any nonzero value is true, NaN included (unordered !=) */
        return spv_emit_op(S, fl ? SpvOpFUnordNotEqual : SpvOpINotEqual, rt, 2,
                           (uint32_t[]){v, zero_or_one(S, fs, false)});
    }
    bool ff = kc_scalar_is_float(fs), tf = kc_scalar_is_float(ts);
    if (ff && tf)
        return spv_emit_op(S, SpvOpFConvert, rt, 1, (uint32_t[]){v});
    if (!ff && tf)
        return spv_emit_op(S, kc_scalar_is_signed(fs) ? SpvOpConvertSToF : SpvOpConvertUToF, rt, 1, (uint32_t[]){v});
    if (ff && !tf)
        return spv_emit_op(S, kc_scalar_is_signed(ts) ? SpvOpConvertFToS : SpvOpConvertFToU, rt, 1, (uint32_t[]){v});
    if (kc_scalar_bits(fs) != kc_scalar_bits(ts)) {
        /* widen by the source's signedness; narrowing just truncates */
        kc_scalar mid = kc_scalar_bits(ts) == 64 ? (kc_scalar_is_signed(fs) ? KC_S_LONG : KC_S_ULONG)
                                                 : (kc_scalar_is_signed(fs) ? KC_S_INT : KC_S_UINT);
        const kc_type *mt = kc_type_vector(mid, to->lanes);
        v = spv_emit_op(S, kc_scalar_is_signed(fs) ? SpvOpSConvert : SpvOpUConvert, spv_type(S, mt), 1, (uint32_t[]){v});
        if (mid == ts)
            return v;
    }
    return spv_emit_op(S, SpvOpBitcast, rt, 1, (uint32_t[]){v});
}

/* ---- operators --------------------------------------------------------------------- */

/* kc_lang.h's SPIR-V columns: the instruction of each operator on float,
 * signed, unsigned and bool operands. */
static const SpvOp ops[KC_OP_COUNT][4] = {
#define X(id, s, w, n, p, f, sg, u, b, ...) [KC_OP_##id] = {SpvOp##f, SpvOp##sg, SpvOp##u, SpvOp##b},
    KC_OPS(X)
#undef X
};

static SpvOp op_for(kc_op op, const kc_type *t)
{
    int column = kc_type_is_float(t)            ? 0
                 : t->scalar == KC_S_BOOL       ? 3
                 : kc_scalar_is_signed(t->scalar) ? 1
                                                : 2;
    assert(ops[op][column] != SpvOpNop && "the front end lets an operator reach only types it has");
    return ops[op][column];
}

static uint32_t unary(spv *S, const kc_ir_expr *e)
{
    uint32_t a = spv_expr(S, e->a);
    return spv_emit_op(S, op_for(e->op, e->type), spv_type(S, e->type), 1, (uint32_t[]){a});
}

/* C's signed remainder, a - (a / b) * b. Not OpSRem: Vulkan's SPIR-V
 * environment leaves OpSRem and OpSMod undefined when an operand is
 * negative (unless VK_KHR_maintenance8), and NVIDIA's driver does return
 * other values there (-1 % 768 gave 255); OpSDiv truncates toward zero
 * for any signs. */
static uint32_t srem(spv *S, uint32_t rt, uint32_t a, uint32_t b)
{
    uint32_t q = spv_emit_op(S, SpvOpSDiv, rt, 2, (uint32_t[]){a, b});
    uint32_t qb = spv_emit_op(S, SpvOpIMul, rt, 2, (uint32_t[]){q, b});
    return spv_emit_op(S, SpvOpISub, rt, 2, (uint32_t[]){a, qb});
}

static uint32_t binary(spv *S, const kc_ir_expr *e)
{
    uint32_t a = spv_expr(S, e->a), b = spv_expr(S, e->b);
    SpvOp op = op_for(e->op, e->a->type);
    if (op == SpvOpSRem)
        return srem(S, spv_type(S, e->type), a, b);
    uint32_t r = spv_emit_op(S, op, spv_type(S, e->type), 2, (uint32_t[]){a, b});
    if (e->exact)
        spv_decorate(S, r, SpvDecorationNoContraction, 0, NULL);
    return r;
}

static uint32_t select_(spv *S, const kc_type *t, uint32_t c, uint32_t a, uint32_t b)
{
    if (t->lanes > 1 && S->o->spirv_minor < 4) /* before 1.4, a vector select needs a vector condition */
        c = splat(S, c, kc_type_vector(KC_S_BOOL, t->lanes));
    return spv_emit_op(S, SpvOpSelect, spv_type(S, t), 3, (uint32_t[]){c, a, b});
}

/* ---- built-ins ---------------------------------------------------------------------- */

static uint32_t id_builtin(spv *S, SpvBuiltIn b, int dim)
{
    uint32_t var = spv_builtin_input(S, b, true);
    uint32_t v = spv_emit_op(S, SpvOpLoad, (uint32_t)(uintptr_t)kc_map_get(&S->cache, "uvec3"), 1, (uint32_t[]){var});
    uint32_t x = spv_emit_op(S, SpvOpCompositeExtract, spv_type_scalar(S, KC_S_UINT), 2, (uint32_t[]){v, (uint32_t)dim});
    return spv_emit_op(S, SpvOpBitcast, spv_type_scalar(S, KC_S_INT), 1, (uint32_t[]){x});
}

static uint32_t scalar_builtin(spv *S, SpvBuiltIn b)
{
    S->need_sg_basic = true;
    uint32_t var = spv_builtin_input(S, b, false);
    uint32_t x = spv_emit_op(S, SpvOpLoad, spv_type_scalar(S, KC_S_UINT), 1, (uint32_t[]){var});
    return spv_emit_op(S, SpvOpBitcast, spv_type_scalar(S, KC_S_INT), 1, (uint32_t[]){x});
}

static uint32_t subgroup(spv *S, const kc_ir_expr *e, uint32_t *a)
{
    const kc_type *t = e->type;
    uint32_t rt = spv_type(S, t), scope = spv_const_u32(S, SpvScopeSubgroup);
    bool fl = kc_type_is_float(t), sg = kc_scalar_is_signed(t->scalar);
    S->need_sg_basic = true;
    SpvOp op;
    switch (e->builtin) {
    case KC_B_SUBGROUP_ADD: op = fl ? SpvOpGroupNonUniformFAdd : SpvOpGroupNonUniformIAdd; break;
    case KC_B_SUBGROUP_MIN: op = fl ? SpvOpGroupNonUniformFMin : sg ? SpvOpGroupNonUniformSMin : SpvOpGroupNonUniformUMin; break;
    case KC_B_SUBGROUP_MAX: op = fl ? SpvOpGroupNonUniformFMax : sg ? SpvOpGroupNonUniformSMax : SpvOpGroupNonUniformUMax; break;
    case KC_B_SUBGROUP_INCLUSIVE_ADD:
    case KC_B_SUBGROUP_EXCLUSIVE_ADD: {
        S->need_sg_arith = true;
        uint32_t how = e->builtin == KC_B_SUBGROUP_INCLUSIVE_ADD ? SpvGroupOperationInclusiveScan
                                                                 : SpvGroupOperationExclusiveScan;
        return spv_emit_op(S, fl ? SpvOpGroupNonUniformFAdd : SpvOpGroupNonUniformIAdd, rt, 3,
                           (uint32_t[]){scope, how, a[0]});
    }
    case KC_B_SUBGROUP_SHUFFLE_UP:
    case KC_B_SUBGROUP_SHUFFLE_DOWN: {
        S->need_sg_relative = true;
        uint32_t delta = spv_emit_op(S, SpvOpBitcast, spv_type_scalar(S, KC_S_UINT), 1, (uint32_t[]){a[1]});
        op = e->builtin == KC_B_SUBGROUP_SHUFFLE_UP ? SpvOpGroupNonUniformShuffleUp : SpvOpGroupNonUniformShuffleDown;
        return spv_emit_op(S, op, rt, 3, (uint32_t[]){scope, a[0], delta});
    }
    case KC_B_SUBGROUP_SHUFFLE_XOR: {
        S->need_sg_shuffle = true;
        uint32_t mask = spv_emit_op(S, SpvOpBitcast, spv_type_scalar(S, KC_S_UINT), 1, (uint32_t[]){a[1]});
        return spv_emit_op(S, SpvOpGroupNonUniformShuffleXor, rt, 3, (uint32_t[]){scope, a[0], mask});
    }
    default: {
        uint32_t lane = spv_emit_op(S, SpvOpBitcast, spv_type_scalar(S, KC_S_UINT), 1, (uint32_t[]){a[1]});
        int64_t k;
        if (e->builtin == KC_B_SUBGROUP_BROADCAST && kc_ir_const_value(e->args[1], &k) && k >= 0) {
            S->need_sg_ballot = true; /* a constant lane: the broadcast instruction */
            return spv_emit_op(S, SpvOpGroupNonUniformBroadcast, rt, 3,
                               (uint32_t[]){scope, a[0], spv_const_u32(S, (uint32_t)k)});
        }
        S->need_sg_shuffle = true; /* a variable lane needs SPIR-V 1.5 to broadcast; shuffle is the same */
        return spv_emit_op(S, SpvOpGroupNonUniformShuffle, rt, 3, (uint32_t[]){scope, a[0], lane});
    }
    }
    S->need_sg_arith = true;
    return spv_emit_op(S, op, rt, 3, (uint32_t[]){scope, SpvGroupOperationReduce, a[0]});
}

/* roundf: halves away from zero. trunc(x) + copysign(|x - trunc(x)| >= 0.5, x);
 * x - trunc(x) is exact, so there is no double rounding. */
static uint32_t round_away(spv *S, const kc_type *t, uint32_t x)
{
    uint32_t rt = spv_type(S, t), bt = spv_type_bvec(S, t->lanes);
    uint32_t tr = spv_glsl(S, GLSLstd450Trunc, rt, 1, (uint32_t[]){x});
    uint32_t fr = spv_glsl(S, GLSLstd450FAbs, rt, 1, (uint32_t[]){spv_emit_op(S, SpvOpFSub, rt, 2, (uint32_t[]){x, tr})});
    uint32_t half = spv_convert(S, spv_const(S, t->scalar, 0, 0.5), scalar_of(t), t);
    uint32_t one = spv_convert(S, spv_const(S, t->scalar, 0, 1.0), scalar_of(t), t);
    uint32_t zero = spv_convert(S, spv_const(S, t->scalar, 0, 0.0), scalar_of(t), t);
    uint32_t up = spv_emit_op(S, SpvOpFOrdGreaterThanEqual, bt, 2, (uint32_t[]){fr, half});
    uint32_t step = spv_emit_op(S, SpvOpSelect, rt, 3, (uint32_t[]){up, one, zero});
    uint32_t sign = spv_glsl(S, GLSLstd450FSign, rt, 1, (uint32_t[]){x});
    step = spv_emit_op(S, SpvOpFMul, rt, 2, (uint32_t[]){step, sign}); /* -0.0 stays -0.0 */
    return spv_emit_op(S, SpvOpFAdd, rt, 2, (uint32_t[]){tr, step});
}

/* copysignf on the bits (float; half goes through float, exactly). */
static uint32_t copysign_(spv *S, const kc_type *t, uint32_t x, uint32_t y)
{
    const kc_type *ft = kc_type_vector(KC_S_FLOAT, t->lanes), *ut = kc_type_vector(KC_S_UINT, t->lanes);
    uint32_t fx = spv_convert(S, x, t, ft), fy = spv_convert(S, y, t, ft), u = spv_type(S, ut);
    uint32_t bx = spv_emit_op(S, SpvOpBitcast, u, 1, (uint32_t[]){fx});
    uint32_t by = spv_emit_op(S, SpvOpBitcast, u, 1, (uint32_t[]){fy});
    uint32_t mag = spv_convert(S, spv_const_u32(S, 0x7fffffffu), kc_type_scalar(KC_S_UINT), ut);
    uint32_t sgn = spv_convert(S, spv_const_u32(S, 0x80000000u), kc_type_scalar(KC_S_UINT), ut);
    bx = spv_emit_op(S, SpvOpBitwiseAnd, u, 2, (uint32_t[]){bx, mag});
    by = spv_emit_op(S, SpvOpBitwiseAnd, u, 2, (uint32_t[]){by, sgn});
    uint32_t r = spv_emit_op(S, SpvOpBitwiseOr, u, 2, (uint32_t[]){bx, by});
    r = spv_emit_op(S, SpvOpBitcast, spv_type(S, ft), 1, (uint32_t[]){r});
    return spv_convert(S, r, ft, t);
}

/* kc_cdiv(a, b) = a / b + (a % b != 0 && (a < 0) == (b < 0)), any signs. */
static uint32_t cdiv(spv *S, const kc_type *t, uint32_t a, uint32_t b)
{
    bool sg = kc_scalar_is_signed(t->scalar);
    uint32_t rt = spv_type(S, t), bt = spv_type_scalar(S, KC_S_BOOL);
    uint32_t zero = spv_const(S, t->scalar, 0, 0), one = spv_const(S, t->scalar, 1, 0);
    uint32_t q = spv_emit_op(S, sg ? SpvOpSDiv : SpvOpUDiv, rt, 2, (uint32_t[]){a, b});
    uint32_t qb = spv_emit_op(S, SpvOpIMul, rt, 2, (uint32_t[]){q, b});
    uint32_t inexact = spv_emit_op(S, SpvOpINotEqual, bt, 2, (uint32_t[]){qb, a});
    if (sg) {
        uint32_t an = spv_emit_op(S, SpvOpSLessThan, bt, 2, (uint32_t[]){a, zero});
        uint32_t bn = spv_emit_op(S, SpvOpSLessThan, bt, 2, (uint32_t[]){b, zero});
        uint32_t same = spv_emit_op(S, SpvOpLogicalEqual, bt, 2, (uint32_t[]){an, bn});
        inexact = spv_emit_op(S, SpvOpLogicalAnd, bt, 2, (uint32_t[]){inexact, same});
    }
    uint32_t add = spv_emit_op(S, SpvOpSelect, rt, 3, (uint32_t[]){inexact, one, zero});
    return spv_emit_op(S, SpvOpIAdd, rt, 2, (uint32_t[]){q, add});
}

static uint32_t mul_hi(spv *S, uint32_t a, uint32_t b)
{
    uint32_t u = spv_type_scalar(S, KC_S_UINT);
    uint32_t st = (uint32_t)(uintptr_t)kc_map_get(&S->cache, "umulx");
    if (!st) {
        st = spv_id(S);
        spv_op(&S->types, SpvOpTypeStruct, 3, (uint32_t[]){st, u, u});
        kc_map_put(S->arena, &S->cache, "umulx", (void *)(uintptr_t)st);
    }
    uint32_t r = spv_emit_op(S, SpvOpUMulExtended, st, 2, (uint32_t[]){a, b});
    return spv_emit_op(S, SpvOpCompositeExtract, u, 2, (uint32_t[]){r, 1});
}

/* GLSL.std.450 instructions for the math built-ins that map to one
 * (kc_lang.h's glsl column); GLSLstd450Bad (0) for the others. The
 * accurate functions (sinf, expf, …) reach the backend as calls to kc's
 * own math library and are inlined before this; only the kc_fast_ forms
 * and exact operations arrive here. */
static const int glsl[KC_B_COUNT] = {
#define X(id, name, n, rule, g, ...) [KC_B_##id] = GLSLstd450##g,
    KC_BUILTINS(X)
#undef X
};

static int glsl_inst(kc_builtin b, bool fl, bool sg)
{
    if (!fl && b == KC_B_MIN)
        return sg ? GLSLstd450SMin : GLSLstd450UMin;
    if (!fl && b == KC_B_MAX)
        return sg ? GLSLstd450SMax : GLSLstd450UMax;
    return glsl[b];
}

static uint32_t builtin(spv *S, const kc_ir_expr *e)
{
    switch (e->builtin) {
    case KC_B_GLOBAL_ID: return id_builtin(S, SpvBuiltInGlobalInvocationId, (int)e->args[0]->ival);
    case KC_B_LOCAL_ID: return id_builtin(S, SpvBuiltInLocalInvocationId, (int)e->args[0]->ival);
    case KC_B_GROUP_ID: return id_builtin(S, SpvBuiltInWorkgroupId, (int)e->args[0]->ival);
    case KC_B_NUM_GROUPS: return id_builtin(S, SpvBuiltInNumWorkgroups, (int)e->args[0]->ival);
    case KC_B_GROUP_SIZE: return spv_const_i32(S, (int32_t)S->m->kernel->wg_size[e->args[0]->ival % 3]);
    case KC_B_SUBGROUP_SIZE: return scalar_builtin(S, SpvBuiltInSubgroupSize);
    case KC_B_SUBGROUP_ID: return scalar_builtin(S, SpvBuiltInSubgroupId);
    case KC_B_SUBGROUP_LOCAL_ID: return scalar_builtin(S, SpvBuiltInSubgroupLocalInvocationId);
    default: break;
    }
    uint32_t a[3] = {0, 0, 0};
    for (int i = 0; i < e->nargs && i < 3; i++)
        a[i] = spv_expr(S, e->args[i]);
    const kc_type *t = e->type;
    uint32_t rt = spv_type(S, t);
    bool fl = kc_type_is_float(t), sg = kc_scalar_is_signed(t->scalar);
    switch (e->builtin) {
    case KC_B_SUBGROUP_ADD:
    case KC_B_SUBGROUP_MIN:
    case KC_B_SUBGROUP_MAX:
    case KC_B_SUBGROUP_SHUFFLE:
    case KC_B_SUBGROUP_BROADCAST:
    case KC_B_SUBGROUP_SHUFFLE_UP:
    case KC_B_SUBGROUP_SHUFFLE_DOWN:
    case KC_B_SUBGROUP_SHUFFLE_XOR:
    case KC_B_SUBGROUP_INCLUSIVE_ADD:
    case KC_B_SUBGROUP_EXCLUSIVE_ADD: return subgroup(S, e, a);
    case KC_B_POPCOUNT: return spv_emit_op(S, SpvOpBitCount, rt, 1, a);
    case KC_B_BITREVERSE: return spv_emit_op(S, SpvOpBitReverse, rt, 1, a);
    case KC_B_ROUND: return round_away(S, t, a[0]);
    case KC_B_COPYSIGN: return copysign_(S, t, a[0], a[1]);
    case KC_B_CDIV: return cdiv(S, t, a[0], a[1]);
    case KC_B_CLAMP:
        if (fl) {
            uint32_t lo = spv_glsl(S, GLSLstd450NMax, rt, 2, (uint32_t[]){a[0], a[1]});
            return spv_glsl(S, GLSLstd450NMin, rt, 2, (uint32_t[]){lo, a[2]});
        }
        return spv_glsl(S, sg ? GLSLstd450SClamp : GLSLstd450UClamp, rt, 3, a);
    case KC_B_FAST_DIV: return spv_emit_op(S, SpvOpFDiv, rt, 2, a);
    case KC_B_AS_UINT:
    case KC_B_AS_INT:
    case KC_B_AS_FLOAT: return spv_emit_op(S, SpvOpBitcast, rt, 1, a);
    case KC_B_MUL_HI: return mul_hi(S, a[0], a[1]);
    default: break;
    }
    int inst = glsl_inst(e->builtin, fl, sg);
    if (!inst) {
        KC_BROKEN_INVARIANT("the accurate math built-ins are inlined before the SPIR-V backend");
        kc_error_at(S->diag, S->fn->loc, "internal error: '%s' reached the SPIR-V backend unexpanded",
                    kc_builtins[e->builtin].name);
        S->failed = true;
        return spv_const_i32(S, 0);
    }
    return spv_glsl(S, inst, rt, kc_builtins[e->builtin].nargs, a);
}

/* (float4)h[i] of a half4 buffer read as texels: the fetch's floats as
 * they come. Without it the half4 between them would need Float16 or
 * 16-bit storage, which a kernel whose only half buffers are texels does
 * not declare. 0 when e is not that. */
static uint32_t widened_half_texel(spv *S, const kc_ir_expr *e)
{
    const kc_ir_expr *load = e->a;
    if (load->kind != KIR_LOAD || load->type->scalar != KC_S_HALF || e->type->scalar != KC_S_FLOAT ||
        e->type->lanes != load->type->lanes)
        return 0;
    spv_var *v = spv_var_of(S, load->root.var ? (const void *)load->root.var : (const void *)load->root.param);
    if (!v || !v->texel_image)
        return 0;
    return fetch_texel(S, v, spv_expr(S, load->a), load->type, true);
}

uint32_t spv_expr(spv *S, const kc_ir_expr *e)
{
    switch (e->kind) {
    case KIR_CONST: return spv_const(S, e->type->scalar, e->ival, e->fval);
    case KIR_PARAM: return S->param_value[e->param->index];
    case KIR_VAR: {
        spv_var *v = spv_var_of(S, e->var);
        return v ? spv_load_elem(S, v, 0, e->type) : spv_const_i32(S, 0);
    }
    case KIR_LOAD: {
        spv_var *v = spv_var_of(S, e->root.var ? (const void *)e->root.var : (const void *)e->root.param);
        uint32_t i = spv_expr(S, e->a);
        return v ? spv_load_elem(S, v, i, e->type) : spv_const_i32(S, 0);
    }
    case KIR_UNARY: return unary(S, e);
    case KIR_BINARY: return binary(S, e);
    case KIR_SELECT: {
        uint32_t c = spv_expr(S, e->a), a = spv_expr(S, e->b), b = spv_expr(S, e->c);
        return select_(S, e->type, c, a, b);
    }
    case KIR_CAST:
        if (e->a->kind == KIR_PARAM && S->param_float[e->a->param->index] && e->type->scalar == KC_S_FLOAT &&
            e->type->lanes == 1) /* a half parameter, as the float the host passed */
            return S->param_float[e->a->param->index];
        uint32_t wide = widened_half_texel(S, e);
        return wide ? wide : spv_convert(S, spv_expr(S, e->a), e->a->type, e->type);
    case KIR_LANE:
        return spv_emit_op(S, SpvOpCompositeExtract, spv_type(S, e->type), 2,
                           (uint32_t[]){spv_expr(S, e->a), (uint32_t)e->lane});
    case KIR_VEC: {
        if (e->nargs == 1)
            return splat(S, spv_expr(S, e->args[0]), e->type);
        uint32_t parts[4];
        for (int i = 0; i < e->nargs && i < 4; i++)
            parts[i] = spv_expr(S, e->args[i]);
        return spv_emit_op(S, SpvOpCompositeConstruct, spv_type(S, e->type), e->nargs, parts);
    }
    case KIR_BUILTIN: return builtin(S, e);
    case KIR_TUNABLE: break;
    }
    KC_BROKEN_INVARIANT("the SPIR-V backend sees only specialised kir");
    kc_error_at(S->diag, S->fn->loc, "internal error: unspecialised kir reached the SPIR-V backend");
    S->failed = true;
    return spv_const_i32(S, 0);
}
