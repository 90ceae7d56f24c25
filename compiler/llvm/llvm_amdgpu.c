/*
 * llvm_amdgpu.c — what is particular to amdgcn-amd-amdhsa.
 *
 * Address spaces (AMDGPUUsage, "Address Spaces"): 1 global (buffers), 3
 * local (KC_SHARED, LDS), 4 constant (file-scope tables), 5 private.
 *
 * The workgroup size is a constant of each specialised variant, so kc
 * never reads it; the number of workgroups comes from the HSA dispatch
 * packet (grid size over workgroup size), which code object v4 and v5 both
 * provide, rather than from implicit-argument offsets that differ between
 * them. With no implicit argument used, default<O3> marks the kernel
 * amdgpu-no-implicitarg-ptr and the code object declares only the
 * explicit arguments.
 *
 * LLVM 19's C API cannot put a sync scope on a fence or an atomic, so the
 * barrier and the atomics are small helper functions written as IR text,
 * linked in and inlined before optimisation:
 *   barrier: fence syncscope("workgroup") release; s_barrier;
 *            fence syncscope("workgroup") acquire   (HIP's __syncthreads)
 *   atomics: monotonic, syncscope("agent") on buffers and ("workgroup") on
 *            shared memory; buffers are device memory kc's runtime
 *            allocates (coarse-grained), which !amdgpu.no.fine.grained.memory
 *            tells LLVM, so float add may use the hardware instruction where
 *            it keeps IEEE semantics (LLVM decides; else a CAS loop).
 */
#include "llvm_private.h"

#include <llvm-c/IRReader.h>
#include <llvm-c/Linker.h>
#include <string.h>


static LLVMValueRef local_id(lw *W, int dim)
{
    return lw_dim_intrinsic(W, "llvm.amdgcn.workitem.id.%c", dim);
}
static LLVMValueRef group_id(lw *W, int dim)
{
    return lw_dim_intrinsic(W, "llvm.amdgcn.workgroup.id.%c", dim);
}

/* hsa_kernel_dispatch_packet_t: grid_size_x/y/z are u32 at bytes 12, 16,
 * 20; the grid counts work-items, so divide (rounding up) by the size. */
static LLVMValueRef num_groups(lw *W, int dim)
{
    LLVMValueRef dp = lw_intrinsic(W, "llvm.amdgcn.dispatch.ptr", NULL, 0, NULL, 0);
    LLVMValueRef off = LLVMConstInt(LLVMInt64TypeInContext(W->ctx), 12 + 4 * (uint64_t)dim, 0);
    LLVMValueRef p = LLVMBuildInBoundsGEP2(W->b, LLVMInt8TypeInContext(W->ctx), dp, &off, 1, "");
    LLVMValueRef grid = LLVMBuildLoad2(W->b, lw_i32(W), p, "grid");
    unsigned kind = LLVMGetMDKindIDInContext(W->ctx, "invariant.load", 14);
    LLVMSetMetadata(grid, kind, LLVMMetadataAsValue(W->ctx, LLVMMDNodeInContext2(W->ctx, NULL, 0)));
    uint32_t wg = (uint32_t)W->fn->wg_size[dim];
    if (wg == 1)
        return grid;
    LLVMValueRef up = LLVMBuildAdd(W->b, grid, lw_u32(W, wg - 1), "");
    return LLVMBuildUDiv(W->b, up, lw_u32(W, wg), "");
}

static LLVMValueRef lane_id(lw *W)
{
    LLVMValueRef all = lw_u32(W, ~0u);
    LLVMValueRef lo =
        lw_intrinsic(W, "llvm.amdgcn.mbcnt.lo", NULL, 0, (LLVMValueRef[]){all, lw_u32(W, 0)}, 2);
    if (W->target.wave_size == 32)
        return lo;
    return lw_intrinsic(W, "llvm.amdgcn.mbcnt.hi", NULL, 0, (LLVMValueRef[]){all, lo}, 2);
}

static void barrier(lw *W)
{
    static const char def[] =
        "define linkonce_odr hidden void @kc.barrier() convergent alwaysinline nounwind {\n"
        "  fence syncscope(\"workgroup\") release\n"
        "  call void @llvm.amdgcn.s.barrier()\n"
        "  fence syncscope(\"workgroup\") acquire\n"
        "  ret void\n"
        "}\n"
        "declare void @llvm.amdgcn.s.barrier()\n";
    LLVMValueRef call = lw_helper(W, "kc.barrier", LLVMVoidTypeInContext(W->ctx), NULL, 0, NULL, def);
    unsigned kind = LLVMGetEnumAttributeKindForName("convergent", 10);
    LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(W->ctx, kind, 0));
}

static const char *rmw_name(kc_builtin op, const kc_type *t)
{
    bool sg = kc_scalar_is_signed(t->scalar);
    switch (op) {
    case KC_B_ATOMIC_ADD: return kc_type_is_float(t) ? "fadd" : "add";
    case KC_B_ATOMIC_MIN: return sg ? "min" : "umin";
    case KC_B_ATOMIC_MAX: return sg ? "max" : "umax";
    case KC_B_ATOMIC_XCHG: return "xchg";
    default: return "cmpxchg";
    }
}

static LLVMValueRef atomic(lw *W, kc_builtin op, const lw_mem *mem, LLVMValueRef ptr, LLVMValueRef v,
                           LLVMValueRef cmp, const kc_type *t)
{
    const char *ty = kc_type_is_float(t) ? "float" : "i32", *rmw = rmw_name(op, t);
    const char *scope = mem->as == 1 ? "agent" : "workgroup";
    const char *coarse = mem->as == 1 ? ", !amdgpu.no.fine.grained.memory !0" : "";
    char name[64];
    snprintf(name, sizeof(name), "kc.atomic.%s.%s.p%u", rmw, ty, mem->as);
    kc_buf def = {0};
    kc_buf_printf(
        &def,
        "define linkonce_odr hidden %s @%s(ptr addrspace(%u) %%p, %s %%v, %s %%c) alwaysinline nounwind {\n",
        ty, name, mem->as, ty, ty);
    if (op == KC_B_ATOMIC_CAS)
        kc_buf_printf(&def,
                      "  %%r = cmpxchg ptr addrspace(%u) %%p, %s %%c, %s %%v syncscope(\"%s\") monotonic "
                      "monotonic, align 4%s\n"
                      "  %%o = extractvalue { %s, i1 } %%r, 0\n  ret %s %%o\n}\n",
                      mem->as, ty, ty, scope, coarse, ty, ty);
    else
        kc_buf_printf(
            &def,
            "  %%r = atomicrmw %s ptr addrspace(%u) %%p, %s %%v syncscope(\"%s\") monotonic, align 4%s\n"
            "  ret %s %%r\n}\n",
            rmw, mem->as, ty, scope, coarse, ty);
    LLVMTypeRef vt = lw_type(W, t);
    LLVMTypeRef params[3] = {LLVMTypeOf(ptr), vt, vt};
    LLVMValueRef args[3] = {ptr, v, cmp ? cmp : LLVMGetPoison(vt)};
    LLVMValueRef r = lw_helper(W, name, vt, params, 3, args, def.data);
    kc_buf_free(&def);
    return r;
}

/* ---- lanes ------------------------------------------------------------------------------- */

static LLVMValueRef ballot(lw *W)
{
    LLVMTypeRef mt = LLVMIntTypeInContext(W->ctx, (unsigned)W->target.wave_size);
    LLVMValueRef yes = LLVMConstInt(LLVMInt1TypeInContext(W->ctx), 1, 0);
    return lw_intrinsic(W, "llvm.amdgcn.ballot", &mt, 1, &yes, 1);
}

/* ds_bpermute takes the source lane's byte address: lane * 4. It spans the
 * whole wave on gfx9 (wave64) and on gfx10+ in wave32, the sizes kc uses;
 * gfx10+ in wave64 would permute within halves. */
static LLVMValueRef shuffle(lw *W, LLVMValueRef word, LLVMValueRef lane)
{
    LLVMValueRef addr = LLVMBuildShl(W->b, lane, lw_u32(W, 2), "");
    return lw_intrinsic(W, "llvm.amdgcn.ds.bpermute", NULL, 0, (LLVMValueRef[]){addr, word}, 2);
}

static LLVMValueRef shuffle_xor(lw *W, LLVMValueRef word, int mask)
{
    return shuffle(W, word, LLVMBuildXor(W->b, lane_id(W), lw_u32(W, (uint32_t)mask), ""));
}

static LLVMValueRef read_lane(lw *W, LLVMValueRef word, LLVMValueRef lane, LLVMValueRef active)
{
    (void)active;
    LLVMTypeRef t = lw_i32(W);
    return lw_intrinsic(W, "llvm.amdgcn.readlane", &t, 1, (LLVMValueRef[]){word, lane}, 2);
}

/* ---- math -------------------------------------------------------------------------------- */

static LLVMValueRef f1(lw *W, const char *name, LLVMValueRef x)
{
    LLVMTypeRef t = LLVMTypeOf(x);
    return lw_intrinsic(W, name, &t, 1, &x, 1);
}

static LLVMValueRef revolutions(lw *W, LLVMValueRef x)
{
    return LLVMBuildFMul(W->b, x, lw_f32c(W, 0.15915494309189533577), "");
}

/* The native instructions behind kc_fast_*: afn asks llvm.exp/log for the
 * bare instruction; v_sin/v_cos take revolutions and reduce nothing. */
static LLVMValueRef math(lw *W, lw_math op, LLVMValueRef x, LLVMValueRef y)
{
    switch (op) {
    case LW_FAST_EXP: return lw_flags(f1(W, "llvm.exp", x), LLVMFastMathApproxFunc);
    case LW_FAST_EXP2: return f1(W, "llvm.amdgcn.exp2", x);
    case LW_FAST_LOG: return lw_flags(f1(W, "llvm.log", x), LLVMFastMathApproxFunc);
    case LW_FAST_LOG2: return f1(W, "llvm.amdgcn.log", x);
    case LW_FAST_SIN: return f1(W, "llvm.amdgcn.sin", f1(W, "llvm.amdgcn.fract", revolutions(W, x)));
    case LW_FAST_COS: return f1(W, "llvm.amdgcn.cos", f1(W, "llvm.amdgcn.fract", revolutions(W, x)));
    case LW_FAST_SQRT: return f1(W, "llvm.amdgcn.sqrt", x);
    case LW_FAST_RSQRT: return f1(W, "llvm.amdgcn.rsq", x);
    case LW_FAST_DIV: return LLVMBuildFMul(W->b, x, f1(W, "llvm.amdgcn.rcp", y), "");
    case LW_FAST_TANH: return NULL;
    }
    return x;
}

/* ---- the kernel and the code object -------------------------------------------------------- */

static void string_attr(lw *W, const char *k, const char *v)
{
    LLVMAddAttributeAtIndex(
        W->kernel, LLVMAttributeFunctionIndex,
        LLVMCreateStringAttribute(W->ctx, k, (unsigned)strlen(k), v, (unsigned)strlen(v)));
}

static LLVMMetadataRef md_u32(lw *W, uint32_t v)
{
    return LLVMValueAsMetadata(lw_u32(W, v));
}

static void kernel(lw *W)
{
    const int64_t *wg = W->fn->wg_size;
    char n[32];
    snprintf(n, sizeof(n), "%lld,%lld", (long long)(wg[0] * wg[1] * wg[2]),
             (long long)(wg[0] * wg[1] * wg[2]));
    string_attr(W, "amdgpu-flat-work-group-size", n);
    string_attr(W, "uniform-work-group-size", "true"); /* kc launches whole workgroups */
    LLVMMetadataRef size[3] = {md_u32(W, (uint32_t)wg[0]), md_u32(W, (uint32_t)wg[1]),
                               md_u32(W, (uint32_t)wg[2])};
    LLVMGlobalSetMetadata(W->kernel, LLVMGetMDKindIDInContext(W->ctx, "reqd_work_group_size", 20),
                          LLVMMDNodeInContext2(W->ctx, size, 3));
    int cov = W->o->amdgpu_cov == 4 ? 4 : 5;
    LLVMAddModuleFlag(W->mod, LLVMModuleFlagBehaviorError, "amdhsa_code_object_version", 26,
                      md_u32(W, (uint32_t)cov * 100));
}

/* Parses the helpers and links them into the kernel's module. */
static bool finish(lw *W)
{
    if (!W->helpers.len)
        return true;
    kc_buf text = {0};
    kc_buf_printf(&text, "target datalayout = \"%s\"\ntarget triple = \"%s\"\n%s!0 = !{}\n",
                  LLVMGetDataLayoutStr(W->mod), W->triple, W->helpers.data);
    LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(text.data, text.len, "kc-helpers");
    kc_buf_free(&text);
    LLVMModuleRef helpers = NULL;
    char *msg = NULL;
    if (LLVMParseIRInContext(W->ctx, buf, &helpers, &msg)) { /* takes the buffer */
        lw_fail(W, "internal error: kc's AMDGPU helpers do not parse: %s", msg ? msg : "");
        LLVMDisposeMessage(msg);
        return false;
    }
    if (LLVMLinkModules2(W->mod, helpers)) /* destroys helpers */
        lw_fail(W, "internal error: kc's AMDGPU helpers do not link");
    return !W->failed;
}

const lw_arch kc_llvm_amdgpu = {
    .triple = "amdgcn-amd-amdhsa",
    .kernel_cc = LLVMAMDGPUKERNELCallConv,
    .as_global = 1,
    .as_private = 5,
    .as_shared = 3,
    .as_const = 4,
    .features = "", /* LLVM's defaults for the processor: wave32 on gfx10+, wave64 on gfx9 */
    .kernel = kernel,
    .local_id = local_id,
    .group_id = group_id,
    .num_groups = num_groups,
    .lane_id = lane_id,
    .barrier = barrier,
    .atomic = atomic,
    .ballot = ballot,
    .shuffle = shuffle,
    .shuffle_xor = shuffle_xor,
    .read_lane = read_lane,
    .math = math,
    .finish = finish,
    .binary = lw_emit_object,
};
