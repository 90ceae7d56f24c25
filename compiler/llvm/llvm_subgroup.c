/*
 * llvm_subgroup.c — subgroup reductions, scans, shuffles and broadcasts, in
 * terms of four primitives each target gives on 32-bit words (ballot,
 * shuffle from any lane, shuffle by xor, read one lane).
 *
 * A reduction is over the active invocations, as in SPIR-V's
 * GroupNonUniform operations. When every lane of the wave or warp is
 * active (the common case: uniform control flow, a workgroup that fills
 * whole waves) it is a butterfly of log2(size) xor-shuffles; otherwise a
 * loop visits the active lanes one at a time and reads each from its lane
 * (AMDGPU readlane, NVPTX shfl.idx over the active mask). The branch
 * between the two is uniform. Correct first, fast second: DPP on AMDGPU
 * would beat the ds_bpermute butterfly.
 *
 * Values wider or narrower than 32 bits, and vectors, move as 32-bit
 * words: a half is zero-extended, a long is two words.
 */
#include "llvm_private.h"

LLVMValueRef lw_linear_local_id(lw *W)
{
    const int64_t *wg = W->fn->wg_size;
    LLVMValueRef id = wg[0] > 1 ? W->arch->local_id(W, 0) : lw_u32(W, 0);
    if (wg[1] > 1) {
        LLVMValueRef y = LLVMBuildNUWMul(W->b, W->arch->local_id(W, 1), lw_u32(W, (uint32_t)wg[0]), "");
        id = LLVMBuildNUWAdd(W->b, id, y, "");
    }
    if (wg[2] > 1) {
        LLVMValueRef z =
            LLVMBuildNUWMul(W->b, W->arch->local_id(W, 2), lw_u32(W, (uint32_t)(wg[0] * wg[1])), "");
        id = LLVMBuildNUWAdd(W->b, id, z, "");
    }
    return id;
}

/* ---- values as 32-bit words ------------------------------------------------------------ */

static int to_words(lw *W, LLVMValueRef v, const kc_type *t, LLVMValueRef *w)
{
    LLVMTypeRef i32 = lw_i32(W);
    int n = 0;
    for (int i = 0; i < t->lanes; i++) {
        LLVMValueRef c = t->lanes > 1 ? LLVMBuildExtractElement(W->b, v, lw_u32(W, (uint32_t)i), "") : v;
        int bits = kc_scalar_bits(t->scalar);
        if (bits == 64) {
            LLVMValueRef pair = LLVMBuildBitCast(W->b, c, LLVMVectorType(i32, 2), "");
            w[n++] = LLVMBuildExtractElement(W->b, pair, lw_u32(W, 0), "");
            w[n++] = LLVMBuildExtractElement(W->b, pair, lw_u32(W, 1), "");
        } else if (bits == 16) {
            LLVMValueRef h = LLVMBuildBitCast(W->b, c, LLVMInt16TypeInContext(W->ctx), "");
            w[n++] = LLVMBuildZExt(W->b, h, i32, "");
        } else {
            w[n++] = LLVMBuildBitCast(W->b, c, i32, "");
        }
    }
    return n;
}

static LLVMValueRef from_words(lw *W, LLVMValueRef *w, const kc_type *t)
{
    const kc_type *s = kc_type_scalar(t->scalar);
    LLVMTypeRef st = lw_type(W, s), i32 = lw_i32(W);
    LLVMValueRef v = t->lanes > 1 ? LLVMGetPoison(lw_type(W, t)) : NULL;
    for (int i = 0; i < t->lanes; i++) {
        int bits = kc_scalar_bits(t->scalar);
        LLVMValueRef c;
        if (bits == 64) {
            LLVMValueRef pair = LLVMGetPoison(LLVMVectorType(i32, 2));
            pair = LLVMBuildInsertElement(W->b, pair, *w++, lw_u32(W, 0), "");
            pair = LLVMBuildInsertElement(W->b, pair, *w++, lw_u32(W, 1), "");
            c = LLVMBuildBitCast(W->b, pair, st, "");
        } else if (bits == 16) {
            c = LLVMBuildBitCast(W->b, LLVMBuildTrunc(W->b, *w++, LLVMInt16TypeInContext(W->ctx), ""), st,
                                 "");
        } else {
            c = LLVMBuildBitCast(W->b, *w++, st, "");
        }
        v = t->lanes > 1 ? LLVMBuildInsertElement(W->b, v, c, lw_u32(W, (uint32_t)i), "") : c;
    }
    return v;
}

typedef enum { MOVE_ANY, MOVE_XOR, MOVE_READ } move_kind;

/* Moves a value across lanes, word by word. */
static LLVMValueRef move(lw *W, move_kind k, LLVMValueRef v, const kc_type *t, LLVMValueRef lane, int mask,
                         LLVMValueRef active)
{
    LLVMValueRef w[8];
    int n = to_words(W, v, t, w);
    for (int i = 0; i < n; i++)
        w[i] = k == MOVE_ANY   ? W->arch->shuffle(W, w[i], lane)
               : k == MOVE_XOR ? W->arch->shuffle_xor(W, w[i], mask)
                               : W->arch->read_lane(W, w[i], lane, active);
    return from_words(W, w, t);
}

/* ---- reductions ------------------------------------------------------------------------ */

static LLVMValueRef combine(lw *W, kc_builtin b, const kc_type *t, LLVMValueRef x, LLVMValueRef y)
{
    bool fl = kc_type_is_float(t), sg = kc_scalar_is_signed(t->scalar);
    LLVMTypeRef rt = lw_type(W, t);
    if (b == KC_B_SUBGROUP_ADD)
        return fl ? LLVMBuildFAdd(W->b, x, y, "") : LLVMBuildAdd(W->b, x, y, "");
    const char *name = b == KC_B_SUBGROUP_MIN ? (fl   ? "llvm.minnum"
                                                 : sg ? "llvm.smin"
                                                      : "llvm.umin")
                                              : (fl   ? "llvm.maxnum"
                                                 : sg ? "llvm.smax"
                                                      : "llvm.umax");
    return lw_intrinsic(W, name, &rt, 1, (LLVMValueRef[]){x, y}, 2);
}

static LLVMValueRef identity(lw *W, kc_builtin b, const kc_type *t)
{
    LLVMTypeRef rt = lw_type(W, t);
    int bits = kc_scalar_bits(t->scalar);
    bool sg = kc_scalar_is_signed(t->scalar);
    if (kc_type_is_float(t)) {
        double inf = __builtin_inf();
        return LLVMConstReal(rt, b == KC_B_SUBGROUP_ADD ? -0.0 : b == KC_B_SUBGROUP_MIN ? inf : -inf);
    }
    uint64_t top = (uint64_t)1 << (bits - 1), ones = bits == 64 ? ~0ull : ((uint64_t)1 << bits) - 1;
    if (b == KC_B_SUBGROUP_ADD)
        return LLVMConstInt(rt, 0, 0);
    if (b == KC_B_SUBGROUP_MIN)
        return LLVMConstInt(rt, sg ? top - 1 : ones, 0);
    return LLVMConstInt(rt, sg ? top : 0, 0);
}

static LLVMValueRef butterfly(lw *W, kc_builtin b, const kc_type *t, LLVMValueRef v)
{
    for (int k = 1; k < W->target.wave_size; k <<= 1)
        v = combine(W, b, t, v, move(W, MOVE_XOR, v, t, NULL, k, NULL));
    return v;
}

/* The active lanes one at a time, lowest first, then on to done. */
static LLVMValueRef one_by_one(lw *W, kc_builtin b, const kc_type *t, LLVMValueRef v, LLVMValueRef active,
                               LLVMBasicBlockRef done)
{
    LLVMBuilderRef B = W->b;
    LLVMBasicBlockRef from = LLVMGetInsertBlock(B), loop = lw_block(W, "sg.loop");
    LLVMTypeRef mt = LLVMTypeOf(active);
    lw_branch(W, loop);
    lw_position(W, loop);
    LLVMValueRef acc = LLVMBuildPhi(B, lw_type(W, t), "sg.acc"), m = LLVMBuildPhi(B, mt, "sg.lanes");
    LLVMValueRef no_zero = LLVMConstInt(LLVMInt1TypeInContext(W->ctx), 1, 0);
    LLVMValueRef lane = lw_intrinsic(W, "llvm.cttz", &mt, 1, (LLVMValueRef[]){m, no_zero}, 2);
    lane = LLVMBuildTrunc(B, lane, lw_i32(W), "");
    LLVMValueRef next = combine(W, b, t, acc, move(W, MOVE_READ, v, t, lane, 0, active));
    LLVMValueRef rest = LLVMBuildAnd(B, m, LLVMBuildSub(B, m, LLVMConstInt(mt, 1, 0), ""), "");
    LLVMAddIncoming(acc, (LLVMValueRef[]){identity(W, b, t), next}, (LLVMBasicBlockRef[]){from, loop}, 2);
    LLVMAddIncoming(m, (LLVMValueRef[]){active, rest}, (LLVMBasicBlockRef[]){from, loop}, 2);
    LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntNE, rest, LLVMConstNull(mt), ""), loop, done);
    W->open = false;
    return next;
}

static LLVMValueRef reduce(lw *W, kc_builtin b, const kc_type *t, LLVMValueRef v)
{
    LLVMBuilderRef B = W->b;
    LLVMValueRef active = W->arch->ballot(W);
    LLVMValueRef all = LLVMBuildICmp(B, LLVMIntEQ, active, LLVMConstAllOnes(LLVMTypeOf(active)), "");
    LLVMBasicBlockRef full = lw_block(W, "sg.full"), some = lw_block(W, "sg.some"),
                      done = lw_block(W, "sg.done");
    LLVMBuildCondBr(B, all, full, some);
    lw_position(W, full);
    LLVMValueRef r1 = butterfly(W, b, t, v);
    LLVMBasicBlockRef full_end = LLVMGetInsertBlock(B);
    lw_branch(W, done);
    lw_position(W, some);
    LLVMValueRef r2 = one_by_one(W, b, t, v, active, done);
    LLVMBasicBlockRef loop_end = LLVMGetInsertBlock(B);
    lw_position(W, done);
    LLVMValueRef r = LLVMBuildPhi(B, lw_type(W, t), "sg.result");
    LLVMAddIncoming(r, (LLVMValueRef[]){r1, r2}, (LLVMBasicBlockRef[]){full_end, loop_end}, 2);
    return r;
}

/* ---- scans ------------------------------------------------------------------------------ */

/* Every lane active: Hillis-Steele, log2(size) steps, each adding the value
 * k lanes below. The exclusive scan is the inclusive one moved up a lane
 * (subtracting x again would not be exact for floats). */
static LLVMValueRef scan_full(lw *W, bool inclusive, const kc_type *t, LLVMValueRef v)
{
    LLVMBuilderRef B = W->b;
    LLVMValueRef me = W->arch->lane_id(W);
    for (int k = 1; k < W->target.wave_size; k <<= 1) {
        LLVMValueRef kk = lw_u32(W, (uint32_t)k);
        LLVMValueRef below = move(W, MOVE_ANY, v, t, LLVMBuildSub(B, me, kk, ""), 0, NULL);
        LLVMValueRef sum = combine(W, KC_B_SUBGROUP_ADD, t, v, below);
        v = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntUGE, me, kk, ""), sum, v, "");
    }
    if (inclusive)
        return v;
    LLVMValueRef up = move(W, MOVE_ANY, v, t, LLVMBuildSub(B, me, lw_u32(W, 1), ""), 0, NULL);
    LLVMValueRef first = LLVMBuildICmp(B, LLVMIntEQ, me, lw_u32(W, 0), "");
    return LLVMBuildSelect(B, first, identity(W, KC_B_SUBGROUP_ADD, t), up, "");
}

/* Some lanes inactive: the active lanes one at a time, lowest first, as
 * one_by_one; each lane keeps the running sum when its own turn comes. */
static LLVMValueRef scan_some(lw *W, bool inclusive, const kc_type *t, LLVMValueRef v, LLVMValueRef active,
                              LLVMBasicBlockRef done)
{
    LLVMBuilderRef B = W->b;
    LLVMBasicBlockRef from = LLVMGetInsertBlock(B), loop = lw_block(W, "scan.loop");
    LLVMTypeRef mt = LLVMTypeOf(active), rt = lw_type(W, t);
    LLVMValueRef me = W->arch->lane_id(W), zero = identity(W, KC_B_SUBGROUP_ADD, t);
    lw_branch(W, loop);
    lw_position(W, loop);
    LLVMValueRef acc = LLVMBuildPhi(B, rt, "scan.acc"), mine = LLVMBuildPhi(B, rt, "scan.mine");
    LLVMValueRef m = LLVMBuildPhi(B, mt, "scan.lanes");
    LLVMValueRef no_zero = LLVMConstInt(LLVMInt1TypeInContext(W->ctx), 1, 0);
    LLVMValueRef lane = lw_intrinsic(W, "llvm.cttz", &mt, 1, (LLVMValueRef[]){m, no_zero}, 2);
    lane = LLVMBuildTrunc(B, lane, lw_i32(W), "");
    LLVMValueRef next = combine(W, KC_B_SUBGROUP_ADD, t, acc, move(W, MOVE_READ, v, t, lane, 0, active));
    LLVMValueRef turn = LLVMBuildICmp(B, LLVMIntEQ, lane, me, "");
    LLVMValueRef kept = LLVMBuildSelect(B, turn, inclusive ? next : acc, mine, "");
    LLVMValueRef rest = LLVMBuildAnd(B, m, LLVMBuildSub(B, m, LLVMConstInt(mt, 1, 0), ""), "");
    LLVMAddIncoming(acc, (LLVMValueRef[]){zero, next}, (LLVMBasicBlockRef[]){from, loop}, 2);
    LLVMAddIncoming(mine, (LLVMValueRef[]){zero, kept}, (LLVMBasicBlockRef[]){from, loop}, 2);
    LLVMAddIncoming(m, (LLVMValueRef[]){active, rest}, (LLVMBasicBlockRef[]){from, loop}, 2);
    LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntNE, rest, LLVMConstNull(mt), ""), loop, done);
    W->open = false;
    return kept;
}

static LLVMValueRef scan(lw *W, bool inclusive, const kc_type *t, LLVMValueRef v)
{
    LLVMBuilderRef B = W->b;
    LLVMValueRef active = W->arch->ballot(W);
    LLVMValueRef all = LLVMBuildICmp(B, LLVMIntEQ, active, LLVMConstAllOnes(LLVMTypeOf(active)), "");
    LLVMBasicBlockRef full = lw_block(W, "scan.full"), some = lw_block(W, "scan.some"),
                      done = lw_block(W, "scan.done");
    LLVMBuildCondBr(B, all, full, some);
    lw_position(W, full);
    LLVMValueRef r1 = scan_full(W, inclusive, t, v);
    LLVMBasicBlockRef full_end = LLVMGetInsertBlock(B);
    lw_branch(W, done);
    lw_position(W, some);
    LLVMValueRef r2 = scan_some(W, inclusive, t, v, active, done);
    LLVMBasicBlockRef loop_end = LLVMGetInsertBlock(B);
    lw_position(W, done);
    LLVMValueRef r = LLVMBuildPhi(B, lw_type(W, t), "scan.result");
    LLVMAddIncoming(r, (LLVMValueRef[]){r1, r2}, (LLVMBasicBlockRef[]){full_end, loop_end}, 2);
    return r;
}

/* The lane a relative shuffle reads: below, above, or by xor. Out of the
 * subgroup the result is undefined, as in SPIR-V. */
static LLVMValueRef relative_lane(lw *W, kc_builtin b, LLVMValueRef by)
{
    LLVMValueRef me = W->arch->lane_id(W);
    if (b == KC_B_SUBGROUP_SHUFFLE_UP)
        return LLVMBuildSub(W->b, me, by, "");
    if (b == KC_B_SUBGROUP_SHUFFLE_DOWN)
        return LLVMBuildAdd(W->b, me, by, "");
    return LLVMBuildXor(W->b, me, by, "");
}

LLVMValueRef lw_subgroup(lw *W, kc_builtin b, const kc_type *t, LLVMValueRef *a, const kc_ir_expr *lane)
{
    W->layout->needs_subgroups = true;
    if (b == KC_B_SUBGROUP_SHUFFLE)
        return move(W, MOVE_ANY, a[0], t, a[1], 0, NULL);
    if (b == KC_B_SUBGROUP_INCLUSIVE_ADD || b == KC_B_SUBGROUP_EXCLUSIVE_ADD)
        return scan(W, b == KC_B_SUBGROUP_INCLUSIVE_ADD, t, a[0]);
    /* Even by a constant, a kernel's xor shuffle is not the butterfly's
     * (W->arch->shuffle_xor: every lane active): it may run where some
     * lanes are off (attention's rows past lq), and NVPTX's shfl.sync
     * naming a lane that never arrives is undefined; through CUDA on an
     * H200 it hung. The shuffle from any lane is over the active ones. */
    if (b == KC_B_SUBGROUP_SHUFFLE_UP || b == KC_B_SUBGROUP_SHUFFLE_DOWN || b == KC_B_SUBGROUP_SHUFFLE_XOR)
        return move(W, MOVE_ANY, a[0], t, relative_lane(W, b, a[1]), 0, NULL);
    if (b == KC_B_SUBGROUP_BROADCAST) {
        int64_t k;
        if (kc_ir_const_value(lane, &k) && k >= 0) /* a constant lane is uniform: read it */
            return move(W, MOVE_READ, a[0], t, a[1], 0, W->arch->ballot(W));
        return move(W, MOVE_ANY, a[0], t, a[1], 0, NULL);
    }
    return reduce(W, b, t, a[0]);
}
