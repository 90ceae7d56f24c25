/*
 * llvm_nvptx.c — what is particular to nvptx64-nvidia-cuda.
 *
 * Address spaces (NVPTXUsage): 1 global (buffers), 3 shared (KC_SHARED),
 * 4 const (file-scope tables, the .const bank), 0 generic for allocas,
 * which LLVM turns into .local.
 *
 * PTX ISA 7.8 (CUDA 11.8) is enough for everything kc emits on sm_75 to
 * sm_90 and is the oldest the sm_89/sm_90 targets allow, so the PTX loads
 * on every driver since; CUDA 13's ptxas assembles it. A kernel is a
 * ptx_kernel function, also listed in nvvm.annotations as older tools
 * expect, with .reqntid from KC_WORKGROUP (PTX forbids .maxntid beside it;
 * it implies the same bound).
 *
 * llvm.nvvm.barrier0 is bar.sync 0, which orders the CTA's shared and
 * global memory accesses as __syncthreads does; LLVM treats it as touching
 * memory, so no fences are needed. Atomics are relaxed at the default gpu
 * scope (atom.global / atom.shared; lw_atomic_plain); LLVM 19's NVPTX back
 * end has no sync scopes to ask for narrower ones.
 */
#include "llvm_private.h"

#include <string.h>


static LLVMValueRef local_id(lw *W, int dim)
{
    return lw_dim_intrinsic(W, "llvm.nvvm.read.ptx.sreg.tid.%c", dim);
}
static LLVMValueRef group_id(lw *W, int dim)
{
    return lw_dim_intrinsic(W, "llvm.nvvm.read.ptx.sreg.ctaid.%c", dim);
}
static LLVMValueRef num_groups(lw *W, int dim)
{
    return lw_dim_intrinsic(W, "llvm.nvvm.read.ptx.sreg.nctaid.%c", dim);
}

static LLVMValueRef lane_id(lw *W)
{
    return lw_intrinsic(W, "llvm.nvvm.read.ptx.sreg.laneid", NULL, 0, NULL, 0);
}

static void barrier(lw *W)
{
    lw_intrinsic(W, "llvm.nvvm.barrier0", NULL, 0, NULL, 0);
}

/* ---- lanes: shfl.sync -------------------------------------------------------------------- */

static LLVMValueRef ballot(lw *W)
{
    return lw_intrinsic(W, "llvm.nvvm.activemask", NULL, 0, NULL, 0);
}

static LLVMValueRef shfl(lw *W, const char *name, LLVMValueRef mask, LLVMValueRef word, LLVMValueRef lane)
{
    return lw_intrinsic(W, name, NULL, 0, (LLVMValueRef[]){mask, word, lane, lw_u32(W, 31)}, 4);
}

static LLVMValueRef shuffle(lw *W, LLVMValueRef word, LLVMValueRef lane)
{
    return shfl(W, "llvm.nvvm.shfl.sync.idx.i32", ballot(W), word, lane);
}

static LLVMValueRef shuffle_xor(lw *W, LLVMValueRef word, int mask)
{
    return shfl(W, "llvm.nvvm.shfl.sync.bfly.i32", lw_u32(W, ~0u), word, lw_u32(W, (uint32_t)mask));
}

static LLVMValueRef read_lane(lw *W, LLVMValueRef word, LLVMValueRef lane, LLVMValueRef active)
{
    return shfl(W, "llvm.nvvm.shfl.sync.idx.i32", active, word, lane);
}

/* ---- math: the SFU's approximations ---------------------------------------------------------- */

static LLVMValueRef nv1(lw *W, const char *name, LLVMValueRef x)
{
    return lw_intrinsic(W, name, NULL, 0, &x, 1);
}

static LLVMValueRef scaled(lw *W, LLVMValueRef x, double k)
{
    return LLVMBuildFMul(W->b, x, lw_f32c(W, k), "");
}

/* tanh.approx.f32 (sm_75 and later) has no LLVM 19 intrinsic. */
static LLVMValueRef tanh_approx(lw *W, LLVMValueRef x)
{
    LLVMTypeRef f = lw_f32(W);
    LLVMTypeRef fty = LLVMFunctionType(f, &f, 1, 0);
    static const char text[] = "tanh.approx.f32 $0, $1;", constraints[] = "=f,f";
    LLVMValueRef as = LLVMGetInlineAsm(fty, text, strlen(text), constraints, strlen(constraints), 0, 0,
                                       LLVMInlineAsmDialectATT, 0);
    return LLVMBuildCall2(W->b, fty, as, &x, 1, "");
}

/* TEMPORARY until kc's math library lands: exp and log through ex2 and
 * lg2.approx, as the SPIR-V backend's native instructions do. */
static LLVMValueRef math(lw *W, lw_math op, LLVMValueRef x, LLVMValueRef y)
{
    switch (op) {
    case LW_FAST_EXP: return nv1(W, "llvm.nvvm.ex2.approx.f", scaled(W, x, 1.4426950408889634074));
    case LW_FAST_EXP2: return nv1(W, "llvm.nvvm.ex2.approx.f", x);
    case LW_FAST_LOG: return scaled(W, nv1(W, "llvm.nvvm.lg2.approx.f", x), 0.69314718055994530942);
    case LW_FAST_LOG2: return nv1(W, "llvm.nvvm.lg2.approx.f", x);
    case LW_FAST_SIN: return nv1(W, "llvm.nvvm.sin.approx.f", x);
    case LW_FAST_COS: return nv1(W, "llvm.nvvm.cos.approx.f", x);
    case LW_FAST_SQRT: return nv1(W, "llvm.nvvm.sqrt.approx.f", x);
    case LW_FAST_RSQRT: return nv1(W, "llvm.nvvm.rsqrt.approx.f", x);
    case LW_FAST_DIV: return lw_intrinsic(W, "llvm.nvvm.div.approx.f", NULL, 0, (LLVMValueRef[]){x, y}, 2);
    case LW_FAST_TANH: return tanh_approx(W, x);
    }
    return x;
}

/* ---- the kernel and the PTX ------------------------------------------------------------------ */

static void annotate(lw *W, const char *key, uint32_t value)
{
    LLVMMetadataRef md[3] = {LLVMValueAsMetadata(W->kernel), LLVMMDStringInContext2(W->ctx, key, strlen(key)),
                             LLVMValueAsMetadata(lw_u32(W, value))};
    LLVMAddNamedMetadataOperand(W->mod, "nvvm.annotations",
                                LLVMMetadataAsValue(W->ctx, LLVMMDNodeInContext2(W->ctx, md, 3)));
}

static void kernel(lw *W)
{
    annotate(W, "kernel", 1);
    annotate(W, "reqntidx", (uint32_t)W->fn->wg_size[0]);
    annotate(W, "reqntidy", (uint32_t)W->fn->wg_size[1]);
    annotate(W, "reqntidz", (uint32_t)W->fn->wg_size[2]);
}

/* Static shared memory is limited to 48 KB per CTA on every NVIDIA GPU;
 * more needs dynamic shared memory, which kc does not use. ptxas would
 * refuse the PTX; the tuner is better told now. */
static bool finish(lw *W)
{
    if (W->layout->shared_bytes > 48 * 1024)
        lw_fail(W,
                "'%s' uses %u bytes of shared memory; NVIDIA GPUs allow a kernel 49152 bytes of static "
                "shared memory",
                W->fn->name, W->layout->shared_bytes);
    return !W->failed;
}

const lw_arch kc_llvm_nvptx = {
    .triple = "nvptx64-nvidia-cuda",
    .kernel_cc = LLVMPTXKernelCallConv,
    .as_global = 1,
    .as_private = 0,
    .as_shared = 3,
    .as_const = 4,
    .features = "+ptx78",
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
    .binary = lw_emit_text, /* PTX: the driver compiles it */
};
