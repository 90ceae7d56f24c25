/*
 * llvm.c — the LLVM backend's entry: one LLVMContext and target machine
 * per compile, the kernel function and its interface, memory (buffers,
 * shared, private and constant arrays), then default<O3> and the output.
 *
 * LLVM's own failures (an LDS budget overrun, an instruction it cannot
 * select) arrive through the context's diagnostic handler, which kc
 * installs: without it LLVM prints and calls exit(), and the tuner would
 * die with one bad variant.
 */
#include "llvm_private.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

void kc_llvm_default_options(kc_llvm_options *o)
{
    o->target = "gfx1100";
    o->amdgpu_cov = 5;
    o->optimize = true;
}

/* gfx9 processors (gfx906, gfx90a, gfx942) have three characters after
 * "gfx" and run wave64; gfx10 and later have four and run wave32, which is
 * LLVM's default for them too (kc does not override it). */
static bool alnum_from(const char *s)
{
    for (; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z')))
            return false;
    return true;
}

bool kc_llvm_target_parse(const char *name, kc_llvm_target *out)
{
    size_t n = strlen(name);
    if (!strcmp(name, "host")) {
        *out = (kc_llvm_target){name, KC_LLVM_HOST, 1};
        return true;
    }
    if (!strncmp(name, "gfx", 3) && (n == 6 || n == 7) && name[3] >= '1' && name[3] <= '9' &&
        alnum_from(name + 3)) {
        *out = (kc_llvm_target){name, KC_LLVM_AMDGPU, n == 7 ? 32 : 64};
        return true;
    }
    if (!strncmp(name, "sm_", 3) && (n == 5 || n == 6) && name[3] >= '1' && name[3] <= '9' &&
        alnum_from(name + 3)) {
        *out = (kc_llvm_target){name, KC_LLVM_NVPTX, 32};
        return true;
    }
    return false;
}

/* ---- the kernel-argument layout --------------------------------------------- */

static uint32_t arg_bytes(const kc_ir_param *p)
{
    return p->is_buffer ? 8 : (uint32_t)kc_scalar_arg_bytes(p->type->scalar); /* a 64-bit pointer */
}

void kc_llvm_kernarg_layout(const kc_ir_func *k, uint32_t *offset, uint32_t *size, uint32_t *total)
{
    uint32_t at = 0;
    for (int i = 0; i < k->nparams; i++) {
        uint32_t s = arg_bytes(k->params[i]);
        at = (at + s - 1) / s * s; /* natural alignment: every size is a power of two */
        offset[i] = at;
        size[i] = s;
        at += s;
    }
    *total = at;
}

/* ---- small pieces ------------------------------------------------------------------ */

void lw_fail(lw *W, const char *fmt, ...)
{
    if (W->failed)
        return;
    W->failed = true;
    kc_buf msg = {0};
    va_list ap;
    va_start(ap, fmt);
    kc_buf_vprintf(&msg, fmt, ap);
    va_end(ap);
    kc_error_at(W->diag, W->fn->loc, "%s", msg.data);
    kc_buf_free(&msg);
}

LLVMTypeRef lw_i32(lw *W)
{
    return LLVMInt32TypeInContext(W->ctx);
}
LLVMTypeRef lw_f32(lw *W)
{
    return LLVMFloatTypeInContext(W->ctx);
}
LLVMValueRef lw_u32(lw *W, uint32_t v)
{
    return LLVMConstInt(lw_i32(W), v, 0);
}
LLVMValueRef lw_f32c(lw *W, double v)
{
    return LLVMConstReal(lw_f32(W), v);
}

static LLVMTypeRef scalar_type(lw *W, kc_scalar s, bool in_memory)
{
    switch (s) {
    case KC_S_BOOL: return in_memory ? lw_i32(W) : LLVMInt1TypeInContext(W->ctx);
    case KC_S_INT:
    case KC_S_UINT: return lw_i32(W);
    case KC_S_LONG:
    case KC_S_ULONG: return LLVMInt64TypeInContext(W->ctx);
    case KC_S_HALF: return LLVMHalfTypeInContext(W->ctx);
    case KC_S_FLOAT: return lw_f32(W);
    default: return LLVMVoidTypeInContext(W->ctx);
    }
}

LLVMTypeRef lw_type(lw *W, const kc_type *t)
{
    LLVMTypeRef s = scalar_type(W, t->scalar, false);
    return t->lanes > 1 ? LLVMVectorType(s, (unsigned)t->lanes) : s;
}

LLVMTypeRef lw_mem_type(lw *W, const kc_type *t)
{
    LLVMTypeRef s = scalar_type(W, t->scalar, true);
    return t->lanes > 1 ? LLVMVectorType(s, (unsigned)t->lanes) : s;
}

static LLVMValueRef splat(LLVMValueRef c, int lanes)
{
    if (lanes == 1)
        return c;
    LLVMValueRef parts[4] = {c, c, c, c};
    return LLVMConstVector(parts, (unsigned)lanes);
}

LLVMValueRef lw_const(lw *W, const kc_type *t, uint64_t ival, double fval)
{
    LLVMTypeRef s = scalar_type(W, t->scalar, false);
    LLVMValueRef c = kc_scalar_is_float(t->scalar) ? LLVMConstReal(s, fval) : LLVMConstInt(s, ival, 0);
    return splat(c, t->lanes);
}

/* A call to an LLVM intrinsic; over: the types it is overloaded on. */
LLVMValueRef lw_intrinsic(lw *W, const char *name, LLVMTypeRef *over, int nover, LLVMValueRef *args,
                          int nargs)
{
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    if (!id) {
        lw_fail(W, "internal error: LLVM 19 has no intrinsic '%s'", name);
        return LLVMGetPoison(lw_i32(W));
    }
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(W->mod, id, over, (size_t)nover);
    LLVMTypeRef fty = LLVMIntrinsicGetType(W->ctx, id, over, (size_t)nover);
    return LLVMBuildCall2(W->b, fty, fn, args, (unsigned)nargs, "");
}

/* A call to a helper function written as LLVM IR text: for what the C API
 * of LLVM 19 cannot build (sync scopes on fences and atomics). The
 * definition is parsed and linked in before optimisation, and inlined. */
LLVMValueRef lw_helper(lw *W, const char *name, LLVMTypeRef ret, LLVMTypeRef *params, int nparams,
                       LLVMValueRef *args, const char *definition)
{
    LLVMTypeRef fty = LLVMFunctionType(ret, params, (unsigned)nparams, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(W->mod, name);
    if (!fn) {
        fn = LLVMAddFunction(W->mod, name, fty);
        kc_buf_puts(&W->helpers, definition);
    }
    return LLVMBuildCall2(W->b, fty, fn, args, (unsigned)nparams, "");
}

LLVMBasicBlockRef lw_block(lw *W, const char *name)
{
    return LLVMAppendBasicBlockInContext(W->ctx, W->kernel, name);
}

void lw_position(lw *W, LLVMBasicBlockRef bb)
{
    LLVMPositionBuilderAtEnd(W->b, bb);
    W->open = true;
}

void lw_branch(lw *W, LLVMBasicBlockRef to)
{
    if (!W->open)
        return;
    LLVMBuildBr(W->b, to);
    W->open = false;
}

/* ---- memory ------------------------------------------------------------------------ */

static lw_mem *new_mem(lw *W, const void *key)
{
    lw_mem *m = KC_NEW(W->arena, lw_mem);
    kc_map_put(W->arena, &W->mems, kc_arena_printf(W->arena, "%p", key), m);
    return m;
}

lw_mem *lw_mem_of(lw *W, const void *key)
{
    char k[32];
    snprintf(k, sizeof(k), "%p", key);
    lw_mem *m = kc_map_get(&W->mems, k);
    if (!m) {
        KC_BROKEN_INVARIANT("the LLVM backend declares every variable before use");
        lw_fail(W, "internal error: the LLVM backend has no memory for an operand");
    }
    return m;
}

LLVMValueRef lw_elem_ptr(lw *W, const lw_mem *mem, LLVMValueRef index, int lane, const kc_type *t)
{
    LLVMValueRef p = mem->base;
    if (index)
        p = LLVMBuildInBoundsGEP2(W->b, mem->elem, p, &index, 1, "");
    if (lane >= 0) {
        LLVMValueRef l = lw_u32(W, (uint32_t)lane);
        p = LLVMBuildInBoundsGEP2(W->b, lw_mem_type(W, kc_type_scalar(t->scalar)), p, &l, 1, "");
    }
    return p;
}

/* Booleans are i32 in memory: 0 or 1 in, any non-zero value true out. */
LLVMValueRef lw_load(lw *W, const lw_mem *mem, LLVMValueRef index, const kc_type *t)
{
    LLVMValueRef x = LLVMBuildLoad2(W->b, lw_mem_type(W, t), lw_elem_ptr(W, mem, index, -1, t), "");
    if (t->scalar == KC_S_BOOL)
        x = LLVMBuildICmp(W->b, LLVMIntNE, x, LLVMConstNull(LLVMTypeOf(x)), "");
    return x;
}

void lw_store(lw *W, const lw_mem *mem, LLVMValueRef index, int lane, LLVMValueRef value, const kc_type *t)
{
    if (t->scalar == KC_S_BOOL)
        value = LLVMBuildZExt(W->b, value, lw_mem_type(W, t), "");
    LLVMBuildStore(W->b, value, lw_elem_ptr(W, mem, index, lane, t));
}

static LLVMValueRef const_init(lw *W, const kc_ir_var *v, LLVMTypeRef elem)
{
    LLVMValueRef *parts = kc_arena_alloc(W->arena, sizeof(LLVMValueRef) * (size_t)v->len);
    for (int64_t i = 0; i < v->len; i++) {
        const kc_ir_expr *c = v->init[i];
        if (c->kind == KIR_CONST) {
            parts[i] = lw_const(W, v->type, c->ival, c->fval);
            if (v->type->scalar == KC_S_BOOL)
                parts[i] = LLVMConstInt(lw_i32(W), c->ival != 0, 0);
        } else {
            parts[i] = LLVMConstNull(elem);
        }
    }
    return LLVMConstArray2(elem, parts, (uint64_t)v->len);
}

/* Shared arrays are 16-byte aligned, as LLVM would align any global over
 * 128 bytes, so that wide LDS accesses are possible; kc sets it so that
 * it can count the bytes exactly, each variable at its alignment. */
static unsigned shared_align(lw *W, LLVMTypeRef elem, bool array)
{
    unsigned a = LLVMABIAlignmentOfType(LLVMGetModuleDataLayout(W->mod), elem);
    return array && a < 16 ? 16 : a;
}

static void add_shared_bytes(lw *W, LLVMTypeRef elem, int64_t len, unsigned align)
{
    uint64_t size = LLVMABISizeOfType(LLVMGetModuleDataLayout(W->mod), elem);
    uint64_t at = (W->layout->shared_bytes + align - 1) / align * align + size * (uint64_t)len;
    W->layout->shared_bytes = at > UINT32_MAX ? UINT32_MAX : (uint32_t)at;
}

static void declare_var(lw *W, const kc_ir_var *v)
{
    lw_mem *m = new_mem(W, v);
    m->elem = lw_mem_type(W, v->type);
    LLVMTypeRef type = v->is_array ? LLVMArrayType2(m->elem, (uint64_t)v->len) : m->elem;
    switch (v->mem) {
    case KIR_MEM_PRIVATE:
        m->as = W->arch->as_private;
        m->base = LLVMBuildAlloca(W->b, type, v->name);
        return;
    case KIR_MEM_SHARED:
        m->as = W->arch->as_shared;
        m->shared = true;
        m->base = LLVMAddGlobalInAddressSpace(W->mod, type, v->name, m->as);
        LLVMSetInitializer(m->base, LLVMGetPoison(type)); /* workgroup memory starts undefined */
        LLVMSetAlignment(m->base, shared_align(W, m->elem, v->is_array));
        add_shared_bytes(W, m->elem, v->is_array ? v->len : 1, shared_align(W, m->elem, v->is_array));
        break;
    case KIR_MEM_CONST:
        m->as = W->arch->as_const;
        m->wide_index = true;
        m->base = LLVMAddGlobalInAddressSpace(W->mod, type, v->name, m->as);
        LLVMSetInitializer(m->base, const_init(W, v, m->elem));
        LLVMSetGlobalConstant(m->base, 1);
        LLVMSetUnnamedAddress(m->base, LLVMGlobalUnnamedAddr);
        break;
    default:
        KC_BROKEN_INVARIANT("inlining leaves no helper array parameter");
        lw_fail(W, "internal error: array parameter '%s' of a helper reached the LLVM backend", v->name);
        return;
    }
    LLVMSetLinkage(m->base, LLVMInternalLinkage);
}

/* ---- the kernel function --------------------------------------------------------------- */

static void add_attr(lw *W, unsigned index, const char *name, uint64_t value)
{
    unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
    LLVMAddAttributeAtIndex(W->kernel, index, LLVMCreateEnumAttribute(W->ctx, kind, value));
}

static LLVMTypeRef param_type(lw *W, const kc_ir_param *p)
{
    if (p->is_buffer)
        return LLVMPointerTypeInContext(W->ctx, W->arch->as_global);
    return p->type->scalar == KC_S_BOOL ? lw_i32(W) : lw_type(W, p->type);
}

/* Buffers do not alias unless the kernel says KC_MAY_ALIAS; kernels cannot
 * keep a pointer, so nocapture always holds. */
static void buffer_attrs(lw *W, const kc_ir_param *p, unsigned index)
{
    if (!W->fn->may_alias)
        add_attr(W, index, "noalias", 0);
    add_attr(W, index, "nocapture", 0);
    add_attr(W, index, "noundef", 0);
    if (p->readonly)
        add_attr(W, index, "readonly", 0);
    add_attr(W, index, "align", (uint32_t)kc_type_bytes(p->type));
}

/* The host's kernel is void name(const void *kernargs, const int ids[9]):
 * the arguments laid out as on a GPU, and local, group and num_groups ids
 * in x, y, z order. */
static void declare_host_kernel(lw *W)
{
    LLVMTypeRef ptr = LLVMPointerTypeInContext(W->ctx, 0);
    LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(W->ctx), (LLVMTypeRef[]){ptr, ptr}, 2, 0);
    W->kernel = LLVMAddFunction(W->mod, W->fn->name, fty);
    LLVMSetValueName2(LLVMGetParam(W->kernel, 0), "kernargs", 8);
    LLVMSetValueName2(LLVMGetParam(W->kernel, 1), "ids", 3);
    add_attr(W, LLVMAttributeFunctionIndex, "nounwind", 0);
    W->arch->kernel(W);
}

static void declare_kernel(lw *W)
{
    const kc_ir_func *k = W->fn;
    if (W->arch->host) {
        declare_host_kernel(W);
        return;
    }
    LLVMTypeRef *types = kc_arena_alloc(W->arena, sizeof(LLVMTypeRef) * (size_t)(k->nparams + 1));
    for (int i = 0; i < k->nparams; i++)
        types[i] = param_type(W, k->params[i]);
    LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(W->ctx), types, (unsigned)k->nparams, 0);
    W->kernel = LLVMAddFunction(W->mod, k->name, fty);
    LLVMSetFunctionCallConv(W->kernel, W->arch->kernel_cc);
    for (int i = 0; i < k->nparams; i++) {
        LLVMValueRef a = LLVMGetParam(W->kernel, (unsigned)i);
        LLVMSetValueName2(a, k->params[i]->name, strlen(k->params[i]->name));
        if (k->params[i]->is_buffer)
            buffer_attrs(W, k->params[i], (unsigned)i + 1);
        else
            add_attr(W, (unsigned)i + 1, "noundef", 0);
    }
    add_attr(W, LLVMAttributeFunctionIndex, "nounwind", 0);
    W->arch->kernel(W);
}

/* A parameter's value: the argument, or on the host its bytes in the
 * kernel-argument buffer, at the offset the layout gives it. */
static LLVMValueRef param_value(lw *W, int i)
{
    if (!W->arch->host)
        return LLVMGetParam(W->kernel, (unsigned)i);
    LLVMValueRef off = LLVMConstInt(LLVMInt64TypeInContext(W->ctx), W->layout->arg_offset[i], 0);
    LLVMValueRef p =
        LLVMBuildInBoundsGEP2(W->b, LLVMInt8TypeInContext(W->ctx), LLVMGetParam(W->kernel, 0), &off, 1, "");
    return LLVMBuildLoad2(W->b, param_type(W, W->fn->params[i]), p, W->fn->params[i]->name);
}

/* Buffers, variables and scalar parameters, in the entry block. */
static void declare_memory(lw *W)
{
    const kc_ir_func *k = W->fn;
    W->params = kc_arena_alloc(W->arena, sizeof(LLVMValueRef) * (size_t)(k->nparams + 1));
    for (int i = 0; i < k->nparams; i++) {
        const kc_ir_param *p = k->params[i];
        LLVMValueRef a = param_value(W, i);
        if (p->is_buffer) {
            lw_mem *m = new_mem(W, p);
            *m = (lw_mem){a, lw_mem_type(W, p->type), W->arch->as_global, true, false};
        } else if (p->type->scalar == KC_S_BOOL) {
            W->params[i] = LLVMBuildICmp(W->b, LLVMIntNE, a, lw_u32(W, 0), p->name);
        } else {
            W->params[i] = a;
        }
    }
    for (int i = 0; i < W->m->consts.len; i++)
        declare_var(W, W->m->consts.items[i]);
    for (int i = 0; i < k->vars.len; i++)
        declare_var(W, k->vars.items[i]);
}

static void build_kernel(lw *W)
{
    declare_kernel(W);
    W->entry = lw_block(W, "entry");
    lw_position(W, W->entry);
    declare_memory(W);
    lw_stmts(W, &W->fn->body);
    if (W->open)
        LLVMBuildRetVoid(W->b);
    W->open = false;
}

/* ---- what the kernel needs from a device ------------------------------------------------- */

typedef struct feature_scan {
    bool half, wide;
} feature_scan;

static void scan_expr(feature_scan *f, const kc_ir_expr *e)
{
    if (!e)
        return;
    f->half |= e->type && e->type->scalar == KC_S_HALF && e->kind != KIR_LOAD && e->kind != KIR_PARAM;
    f->wide |= e->type && kc_scalar_bits(e->type->scalar) == 64;
    scan_expr(f, e->a);
    scan_expr(f, e->b);
    scan_expr(f, e->c);
    for (int i = 0; i < e->nargs; i++)
        scan_expr(f, e->args[i]);
}

static void scan_stmt(void *user, kc_ir_stmt *s)
{
    const kc_ir_expr *es[] = {s->index, s->value, s->cmp, s->cond, s->post};
    for (size_t i = 0; i < KC_COUNT(es); i++)
        scan_expr(user, es[i]);
}

static void features(lw *W)
{
    feature_scan f = {false, false};
    kc_ir_walk((kc_ir_block *)&W->fn->body, scan_stmt, &f);
    kc_llvm_layout *L = W->layout;
    L->needs_float16 = f.half;
    L->needs_int64 = f.wide;
    L->needs_float_atomics = W->used_float_atomics;
}

/* ---- LLVM itself ---------------------------------------------------------------------- */

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init_targets(void)
{
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    LLVMInitializeNativeTarget();
    LLVMInitializeNativeAsmPrinter();
}

/* LLVM's errors (and only those) become kc errors; without a handler
 * LLVM would print them and exit. */
static void on_diagnostic(LLVMDiagnosticInfoRef di, void *user)
{
    lw *W = user;
    if (LLVMGetDiagInfoSeverity(di) != LLVMDSError)
        return;
    char *text = LLVMGetDiagInfoDescription(di);
    const char *msg = strncmp(text, "<unknown>:0:0: ", 15) == 0 ? text + 15 : text; /* no source locations */
    lw_fail(W, "LLVM could not compile '%s' for %s: %s", W->fn->name, W->target.name, msg);
    LLVMDisposeMessage(text);
}

static void free_host(char *triple, char *cpu, char *features)
{
    LLVMDisposeMessage(triple);
    LLVMDisposeMessage(cpu);
    LLVMDisposeMessage(features);
}

static bool make_machine(lw *W)
{
    pthread_once(&init_once, init_targets);
    const lw_arch *A = W->arch;
    char *host_triple = A->host ? LLVMGetDefaultTargetTriple() : NULL;
    char *host_cpu = A->host ? LLVMGetHostCPUName() : NULL,
         *host_features = A->host ? LLVMGetHostCPUFeatures() : NULL;
    snprintf(W->triple, sizeof(W->triple), "%s", A->host ? host_triple : A->triple);
    LLVMTargetRef target;
    char *err = NULL;
    if (LLVMGetTargetFromTriple(W->triple, &target, &err)) {
        lw_fail(W, "LLVM has no target '%s': %s", W->triple, err ? err : "");
        LLVMDisposeMessage(err);
        free_host(host_triple, host_cpu, host_features);
        return false;
    }
    W->tm = LLVMCreateTargetMachine(target, W->triple, A->host ? host_cpu : W->target.name,
                                    A->host ? host_features : A->features, LLVMCodeGenLevelAggressive,
                                    A->host ? LLVMRelocPIC : LLVMRelocDefault, LLVMCodeModelDefault);
    free_host(host_triple, host_cpu, host_features);
    W->ctx = LLVMContextCreate();
    LLVMContextSetDiagnosticHandler(W->ctx, on_diagnostic, W);
    W->mod = LLVMModuleCreateWithNameInContext(W->fn->name, W->ctx);
    LLVMSetTarget(W->mod, W->triple);
    LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(W->tm);
    LLVMSetModuleDataLayout(W->mod, dl);
    LLVMDisposeTargetData(dl);
    W->b = LLVMCreateBuilderInContext(W->ctx);
    return true;
}

static bool verify(lw *W)
{
    char *msg = NULL;
    if (LLVMVerifyModule(W->mod, LLVMReturnStatusAction, &msg)) {
        lw_fail(W, "internal compiler error: kc made invalid LLVM IR for '%s': %s", W->fn->name,
                msg ? msg : "");
        kc_diag_fix(W->diag,
                    "please report this with the kernel file; `kc emit --emit kir` shows what kc lowered");
    }
    LLVMDisposeMessage(msg);
    return !W->failed;
}

static bool optimize(lw *W)
{
    if (!W->o->optimize)
        return true;
    LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
    LLVMErrorRef err = LLVMRunPasses(W->mod, "default<O3>", W->tm, opts);
    LLVMDisposePassBuilderOptions(opts);
    if (err) {
        char *msg = LLVMGetErrorMessage(err);
        lw_fail(W, "internal error: LLVM's optimiser failed: %s", msg);
        LLVMDisposeErrorMessage(msg);
    }
    return !W->failed;
}

void lw_take_text(kc_llvm_module *out, const char *text, size_t len)
{
    out->data = malloc(len + 1);
    if (!out->data)
        abort();
    memcpy(out->data, text, len);
    out->data[len] = 0;
    out->size = len;
}

LLVMMemoryBufferRef lw_codegen(lw *W, LLVMCodeGenFileType type)
{
    char *err = NULL;
    LLVMMemoryBufferRef buf = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(W->tm, W->mod, type, &err, &buf) || W->failed) {
        lw_fail(W, "LLVM could not compile '%s' for %s: %s", W->fn->name, W->target.name, err ? err : "");
        LLVMDisposeMessage(err);
        if (buf)
            LLVMDisposeMemoryBuffer(buf);
        return NULL;
    }
    return buf;
}

static bool output(lw *W, kc_llvm_output what, kc_llvm_module *out)
{
    if (what == KC_LLVM_OUT_IR) {
        char *text = LLVMPrintModuleToString(W->mod);
        lw_take_text(out, text, strlen(text));
        LLVMDisposeMessage(text);
        return true;
    }
    if (what == KC_LLVM_OUT_BINARY)
        return W->arch->binary(W, out);
    return lw_emit_text(W, out);
}

bool lw_emit_text(lw *W, kc_llvm_module *out)
{
    LLVMMemoryBufferRef buf = lw_codegen(W, LLVMAssemblyFile);
    if (!buf)
        return false;
    lw_take_text(out, LLVMGetBufferStart(buf), LLVMGetBufferSize(buf));
    LLVMDisposeMemoryBuffer(buf);
    return true;
}

bool lw_emit_object(lw *W, kc_llvm_module *out)
{
    LLVMMemoryBufferRef obj = lw_codegen(W, LLVMObjectFile);
    if (!obj)
        return false;
    bool ok = lw_link(W, LLVMGetBufferStart(obj), LLVMGetBufferSize(obj), out);
    LLVMDisposeMemoryBuffer(obj);
    return ok;
}

LLVMValueRef lw_dim_intrinsic(lw *W, const char *fmt, int dim)
{
    char name[64];
    snprintf(name, sizeof(name), fmt, "xyz"[dim]);
    return lw_intrinsic(W, name, NULL, 0, NULL, 0);
}

static void dispose(lw *W)
{
    if (W->b)
        LLVMDisposeBuilder(W->b);
    if (W->mod)
        LLVMDisposeModule(W->mod);
    if (W->ctx)
        LLVMContextDispose(W->ctx);
    if (W->tm)
        LLVMDisposeTargetMachine(W->tm);
    kc_buf_free(&W->helpers);
}

static void init_layout(const kc_ir_func *k, const kc_llvm_target *t, kc_llvm_layout *L)
{
    L->nparams = k->nparams;
    L->arg_offset = calloc((size_t)k->nparams + 1, sizeof(uint32_t));
    L->arg_size = calloc((size_t)k->nparams + 1, sizeof(uint32_t));
    if (!L->arg_offset || !L->arg_size)
        abort();
    kc_llvm_kernarg_layout(k, L->arg_offset, L->arg_size, &L->args_size);
    for (int i = 0; i < 3; i++)
        L->wg[i] = (uint32_t)k->wg_size[i];
    L->wave_size = t->wave_size;
}

/* Every listed GPU, AMD and NVIDIA alike, runs at most 1024 invocations
 * in a workgroup. kc's front end bounds each dimension; the product is
 * checked here, where LLVM would otherwise quietly ignore the size
 * (AMDGPU) or ptxas accept a .reqntid no launch can meet. */
static bool workgroup_fits(const kc_ir_func *k, const kc_llvm_target *t, kc_diag *diag)
{
    int64_t n = k->wg_size[0] * k->wg_size[1] * k->wg_size[2];
    if (t->arch == KC_LLVM_HOST || n <= 1024)
        return true;
    kc_error_at(diag, k->loc,
                "a workgroup of %lld invocations (%lld x %lld x %lld); %s GPUs run at most 1024",
                (long long)n, (long long)k->wg_size[0], (long long)k->wg_size[1], (long long)k->wg_size[2],
                t->arch == KC_LLVM_AMDGPU ? "AMD" : "NVIDIA");
    return false;
}

bool kc_llvm_emit(const kc_ir_module *m, const kc_llvm_options *o, kc_llvm_output what, kc_llvm_module *out,
                  kc_diag *diag)
{
    memset(out, 0, sizeof(*out));
    kc_llvm_target target;
    if (!kc_llvm_target_parse(o->target, &target)) {
        kc_error_at(diag, m->kernel->loc, "'%s' is not an LLVM target kc knows (gfxNNNN, sm_NN or host)",
                    o->target);
        return false;
    }
    if (!workgroup_fits(m->kernel, &target, diag))
        return false;
    kc_arena arena;
    kc_arena_init(&arena);
    lw W = {.m = m,
            .fn = m->kernel,
            .o = o,
            .diag = diag,
            .arena = &arena,
            .layout = &out->layout,
            .target = target};
    W.arch = target.arch == KC_LLVM_AMDGPU  ? &kc_llvm_amdgpu
             : target.arch == KC_LLVM_NVPTX ? &kc_llvm_nvptx
                                            : &kc_llvm_host;
    init_layout(m->kernel, &target, &out->layout);
    bool ok = make_machine(&W);
    if (ok) {
        build_kernel(&W);
        ok = !W.failed && W.arch->finish(&W) && verify(&W) && optimize(&W) && output(&W, what, out);
    }
    features(&W);
    dispose(&W);
    kc_arena_free(&arena);
    if (!ok)
        kc_llvm_module_free(out);
    return ok;
}

void kc_llvm_module_free(kc_llvm_module *m)
{
    free(m->data);
    free(m->layout.arg_offset);
    free(m->layout.arg_size);
    memset(m, 0, sizeof(*m));
}
