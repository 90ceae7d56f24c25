/*
 * llvm_private.h — the LLVM backend's state, and the struct of function
 * pointers (STYLE.md §3) that holds what differs between AMDGPU and NVPTX.
 *
 *   llvm.c          the entry: context, target machine, the kernel's
 *                   interface, memory, the pipeline, the output
 *   llvm_expr.c     expressions, conversions and the simple built-ins
 *   llvm_math.c     the math built-ins
 *   llvm_subgroup.c subgroup reductions, shuffles and broadcasts
 *   llvm_stmt.c     statements: control flow, stores, atomics, barriers
 *   llvm_amdgpu.c   the AMDGPU side (ids, barrier, atomics, lanes, math,
 *                   the code object)
 *   llvm_nvptx.c    the NVPTX side (the same, PTX)
 *   llvm_host.c     the CPU kc runs on, one work-item at a time (tests)
 *   llvm_link.c     ld.lld, run as a program
 */
#ifndef KC_LLVM_PRIVATE_H
#define KC_LLVM_PRIVATE_H

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "kc_llvm.h"

typedef struct lw lw;

/* Where the elements of a variable or buffer are. Booleans are 32-bit in
 * every kind of memory (0 or 1), as in SPIR-V: one rule for buffers,
 * shared and private memory; LLVM turns private ones back into i1. */
typedef struct lw_mem {
    LLVMValueRef base; /* a pointer */
    LLVMTypeRef elem;  /* the memory type of one element */
    unsigned as;       /* its address space */
    bool wide_index;   /* 64-bit address space: index with i64 */
    bool shared;       /* workgroup memory: atomics at workgroup scope */
} lw_mem;

/* A construct that break or continue leaves. */
typedef struct lw_jump {
    LLVMBasicBlockRef exit; /* where break goes */
    LLVMBasicBlockRef cont; /* where continue goes; NULL for a switch */
    bool exit_used;
} lw_jump;

/* The native math each target offers, on float scalars. */
typedef enum {
    LW_FAST_EXP,
    LW_FAST_EXP2,
    LW_FAST_LOG,
    LW_FAST_LOG2,
    LW_FAST_SIN,
    LW_FAST_COS, /* any argument */
    LW_FAST_SQRT,
    LW_FAST_RSQRT,
    LW_FAST_DIV,
    LW_FAST_TANH, /* NULL where there is no instruction */
} lw_math;

typedef struct lw_arch {
    const char *triple;
    LLVMCallConv kernel_cc;
    unsigned as_global, as_private, as_shared, as_const;
    /* the CPU kc runs on: LLVM's host triple, processor and features,
     * position-independent code, and the kernel takes (kernargs, ids) */
    bool host;
    /* the target machine's feature string */
    const char *features;
    /* attributes and metadata a kernel function needs */
    void (*kernel)(lw *W);
    /* ids: i32 values */
    LLVMValueRef (*local_id)(lw *W, int dim);
    LLVMValueRef (*group_id)(lw *W, int dim);
    LLVMValueRef (*num_groups)(lw *W, int dim);
    LLVMValueRef (*lane_id)(lw *W);
    void (*barrier)(lw *W);
    /* the old value of an atomic op on *ptr; cmp for compare-and-swap */
    LLVMValueRef (*atomic)(lw *W, kc_builtin op, const lw_mem *mem, LLVMValueRef ptr, LLVMValueRef v,
                           LLVMValueRef cmp, const kc_type *t);
    /* subgroup primitives on i32 words */
    LLVMValueRef (*ballot)(lw *W); /* the active lanes, an i32 or i64 mask */
    LLVMValueRef (*shuffle)(lw *W, LLVMValueRef word, LLVMValueRef lane);
    LLVMValueRef (*shuffle_xor)(lw *W, LLVMValueRef word, int mask); /* every lane active */
    LLVMValueRef (*read_lane)(lw *W, LLVMValueRef word, LLVMValueRef lane, LLVMValueRef active);
    LLVMValueRef (*math)(lw *W, lw_math op, LLVMValueRef x, LLVMValueRef y);
    /* after the kernel is built, before optimisation (AMDGPU: link the
     * helpers written as IR text) */
    bool (*finish)(lw *W);
    /* the binary: AMDGPU a linked code object, NVPTX PTX text */
    bool (*binary)(lw *W, kc_llvm_module *out);
} lw_arch;

extern const lw_arch kc_llvm_amdgpu;
extern const lw_arch kc_llvm_nvptx;
extern const lw_arch kc_llvm_host;

struct lw {
    const kc_ir_module *m;
    const kc_ir_func *fn;
    const kc_llvm_options *o;
    const lw_arch *arch;
    kc_llvm_target target;
    kc_diag *diag;
    kc_arena *arena;
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    LLVMTargetMachineRef tm;
    char triple[128];
    LLVMBuilderRef b;
    LLVMValueRef kernel;
    LLVMBasicBlockRef entry; /* allocas go here */
    kc_map mems;             /* "%p" of a kc_ir_var or kc_ir_param -> lw_mem* */
    LLVMValueRef *params;    /* scalar parameters' values, by index */
    /* the current block: after a branch, code is unreachable until the
     * next block starts */
    bool open;
    lw_jump jumps[512];
    int njumps;
    kc_buf helpers; /* AMDGPU: helper functions as IR text */
    bool failed;
    bool used_float_atomics;
    kc_llvm_layout *layout;
};

/* llvm.c */
void lw_fail(lw *W, const char *fmt, ...) KC_PRINTF(2, 3);
LLVMTypeRef lw_type(lw *W, const kc_type *t);     /* a value's type: bool is i1 */
LLVMTypeRef lw_mem_type(lw *W, const kc_type *t); /* in memory: bool is i32 */
LLVMTypeRef lw_i32(lw *W);
LLVMTypeRef lw_f32(lw *W);
LLVMValueRef lw_u32(lw *W, uint32_t v);
LLVMValueRef lw_f32c(lw *W, double v);
LLVMValueRef lw_const(lw *W, const kc_type *t, uint64_t ival, double fval); /* splat for vectors */
LLVMValueRef lw_intrinsic(lw *W, const char *name, LLVMTypeRef *over, int nover, LLVMValueRef *args,
                          int nargs);
LLVMValueRef lw_helper(lw *W, const char *name, LLVMTypeRef ret, LLVMTypeRef *params, int nparams,
                       LLVMValueRef *args, const char *definition);
lw_mem *lw_mem_of(lw *W, const void *key);
LLVMValueRef lw_elem_ptr(lw *W, const lw_mem *mem, LLVMValueRef index, int lane, const kc_type *t);
LLVMValueRef lw_load(lw *W, const lw_mem *mem, LLVMValueRef index, const kc_type *t);
void lw_store(lw *W, const lw_mem *mem, LLVMValueRef index, int lane, LLVMValueRef value, const kc_type *t);
LLVMBasicBlockRef lw_block(lw *W, const char *name);
/* Runs the code generator; NULL after reporting. */
LLVMMemoryBufferRef lw_codegen(lw *W, LLVMCodeGenFileType type);
void lw_take_text(kc_llvm_module *out, const char *text, size_t len);
/* The code generator's assembly (PTX for NVPTX) as out's text. */
bool lw_emit_text(lw *W, kc_llvm_module *out);
/* The code generator's object file, linked (lw_link) into out. */
bool lw_emit_object(lw *W, kc_llvm_module *out);
/* A target's id intrinsic for one dimension: fmt has a %c for x, y or z
 * ("llvm.nvvm.read.ptx.sreg.tid.%c"). */
LLVMValueRef lw_dim_intrinsic(lw *W, const char *fmt, int dim);
void lw_position(lw *W, LLVMBasicBlockRef bb);
void lw_branch(lw *W, LLVMBasicBlockRef to);

/* llvm_expr.c */
LLVMValueRef lw_expr(lw *W, const kc_ir_expr *e);
LLVMValueRef lw_index(lw *W, const kc_ir_expr *e); /* an element index, as i64 */
LLVMValueRef lw_convert(lw *W, LLVMValueRef v, const kc_type *from, const kc_type *to);
LLVMValueRef lw_builtin(lw *W, const kc_ir_expr *e);
LLVMValueRef lw_flags(LLVMValueRef inst, LLVMFastMathFlags f); /* sets fast-math flags, returns inst */

/* llvm_math.c */
bool lw_is_math(kc_builtin b);
LLVMValueRef lw_math_builtin(lw *W, kc_builtin b, const kc_type *t, LLVMValueRef *args);

/* llvm_subgroup.c */
LLVMValueRef lw_subgroup(lw *W, kc_builtin b, const kc_type *t, LLVMValueRef *args, const kc_ir_expr *lane);
LLVMValueRef lw_linear_local_id(lw *W);

/* llvm_stmt.c */
void lw_stmts(lw *W, const kc_ir_block *b);
LLVMValueRef lw_atomic_plain(lw *W, kc_builtin op, const lw_mem *mem, LLVMValueRef ptr, LLVMValueRef v,
                             LLVMValueRef cmp, const kc_type *t);

/* llvm_link.c: runs ld.lld -shared on an object; the code object in out */
bool lw_link(lw *W, const void *obj, size_t size, kc_llvm_module *out);

#endif
