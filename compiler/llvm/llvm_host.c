/*
 * llvm_host.c — the CPU kc runs on, as a target for kc's own tests: it
 * runs everything the GPU targets share (control flow, conversions, memory,
 * the math formulas, atomics) where there is no GPU, and checks it
 * against the C compiler (tests/llvm/test_llvm_host.c).
 *
 * The kernel is void name(const void *kernargs, const int32_t ids[9]); its
 * parameters are read from kernargs at the offsets of kc's kernel-argument
 * layout, so the host also checks that layout from the other side. The
 * caller runs work-items one at a time: a barrier cannot be honoured and is
 * refused; a subgroup is one work-item; shared memory is a global, which is
 * right for one workgroup at a time. Math is the C library's, through
 * LLVM's intrinsics; "native" means the same functions.
 */
#include "llvm_private.h"

static LLVMValueRef id(lw *W, int k)
{
    LLVMValueRef off = lw_u32(W, (uint32_t)k);
    LLVMValueRef p = LLVMBuildInBoundsGEP2(W->b, lw_i32(W), LLVMGetParam(W->kernel, 1), &off, 1, "");
    return LLVMBuildLoad2(W->b, lw_i32(W), p, "");
}

static LLVMValueRef local_id(lw *W, int dim)
{
    return id(W, dim);
}
static LLVMValueRef group_id(lw *W, int dim)
{
    return id(W, 3 + dim);
}
static LLVMValueRef num_groups(lw *W, int dim)
{
    return id(W, 6 + dim);
}

static LLVMValueRef lane_id(lw *W)
{
    return lw_u32(W, 0);
}

static void barrier(lw *W)
{
    lw_fail(W, "the host target runs work-items one at a time and cannot wait at a barrier");
}

/* A subgroup of one: every lane primitive is the identity. */
static LLVMValueRef ballot(lw *W)
{
    return LLVMConstInt(LLVMInt1TypeInContext(W->ctx), 1, 0);
}

static LLVMValueRef shuffle(lw *W, LLVMValueRef word, LLVMValueRef lane)
{
    (void)W, (void)lane;
    return word;
}

static LLVMValueRef shuffle_xor(lw *W, LLVMValueRef word, int mask)
{
    (void)W, (void)mask;
    return word;
}

static LLVMValueRef read_lane(lw *W, LLVMValueRef word, LLVMValueRef lane, LLVMValueRef active)
{
    (void)W, (void)lane, (void)active;
    return word;
}

static LLVMValueRef f1(lw *W, const char *name, LLVMValueRef x)
{
    LLVMTypeRef t = LLVMTypeOf(x);
    return lw_intrinsic(W, name, &t, 1, &x, 1);
}

static LLVMValueRef math(lw *W, lw_math op, LLVMValueRef x, LLVMValueRef y)
{
    switch (op) {
    case LW_FAST_EXP: return f1(W, "llvm.exp", x);
    case LW_FAST_EXP2: return f1(W, "llvm.exp2", x);
    case LW_FAST_LOG: return f1(W, "llvm.log", x);
    case LW_FAST_LOG2: return f1(W, "llvm.log2", x);
    case LW_FAST_SIN: return f1(W, "llvm.sin", x);
    case LW_FAST_COS: return f1(W, "llvm.cos", x);
    case LW_FAST_SQRT: return f1(W, "llvm.sqrt", x);
    case LW_FAST_RSQRT: return LLVMBuildFDiv(W->b, lw_f32c(W, 1.0), f1(W, "llvm.sqrt", x), "");
    case LW_FAST_DIV: return LLVMBuildFDiv(W->b, x, y, "");
    case LW_FAST_TANH: return NULL;
    }
    return x;
}

static void kernel(lw *W)
{
    (void)W;
}

static bool finish(lw *W)
{
    (void)W;
    return true;
}

const lw_arch kc_llvm_host = {
    .triple = NULL, /* LLVM's default triple */
    .kernel_cc = LLVMCCallConv,
    .as_global = 0,
    .as_private = 0,
    .as_shared = 0,
    .as_const = 0,
    .host = true,
    .features = NULL,
    .kernel = kernel,
    .local_id = local_id,
    .group_id = group_id,
    .num_groups = num_groups,
    .lane_id = lane_id,
    .barrier = barrier,
    .atomic = lw_atomic_plain,
    .ballot = ballot,
    .shuffle = shuffle,
    .shuffle_xor = shuffle_xor,
    .read_lane = read_lane,
    .math = math,
    .finish = finish,
    .binary = lw_emit_object,
};
