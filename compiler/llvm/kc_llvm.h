/*
 * kc_llvm.h — the LLVM backend: specialised kir lowered through the LLVM-C
 * API of LLVM 19 to AMDGPU code objects (.hsaco) and NVIDIA PTX
 * (DESIGN.md §4; docs/backends.md has the mapping of every kir node).
 *
 *   kir -> LLVM IR (one kernel function) -> default<O3>
 *       AMDGPU: object in memory -> ld.lld -shared -> code object
 *       NVPTX:  PTX text
 *
 * The interface a host sees (the runtime, `kc export`'s manifest):
 *   - kernel arguments in parameter order, each at its natural alignment:
 *     a buffer is an 8-byte global pointer; int, uint, float 4 bytes; half
 *     2; bool 4 (a uint, 0 or 1; any non-zero value is true). This is the
 *     AMDGPU explicit kernarg segment (no hidden arguments: the kernels
 *     use none) and the packing cuLaunchKernel's parameter buffer uses;
 *   - the entry point is named after the kernel; the workgroup size is
 *     fixed (reqd_work_group_size / .reqntid);
 *   - the subgroup is the wavefront (32 on gfx10 and later, 64 on gfx9) or
 *     the warp (32).
 *
 * Every compile makes its own LLVMContext and target machine and disposes
 * of them, so the tuner can compile thousands of variants in one process.
 */
#ifndef KC_LLVM_H
#define KC_LLVM_H

#include "kc_ir.h"

/* HOST is the CPU kc runs on, for kc's own tests: the kernel becomes
 * void name(const void *kernargs, const int32_t ids[9]) with the arguments
 * in the layout below and ids = local x y z, group x y z, num_groups x y z;
 * the caller runs the work-items one at a time, so there are no barriers,
 * and a subgroup is one work-item. The binary is a shared object. */
typedef enum { KC_LLVM_AMDGPU, KC_LLVM_NVPTX, KC_LLVM_HOST } kc_llvm_arch;

/* What a target name means to the backend. */
typedef struct kc_llvm_target {
    const char *name; /* "gfx1100", "sm_90": LLVM's processor name */
    kc_llvm_arch arch;
    int wave_size; /* the subgroup size kernels see */
} kc_llvm_target;

/* Parses a target name (gfx followed by a processor, sm_NN, or host);
 * false if it is none of them. Which names kc offers is the driver's table
 * (compiler/driver/targets.c), not this function. */
bool kc_llvm_target_parse(const char *name, kc_llvm_target *out);

typedef enum {
    KC_LLVM_OUT_BINARY, /* AMDGPU: the linked code object; NVPTX: PTX text; host: a shared object */
    KC_LLVM_OUT_IR,     /* LLVM IR text, after optimisation */
    KC_LLVM_OUT_ASM,    /* AMDGPU assembly text; NVPTX: PTX text */
} kc_llvm_output;

typedef struct kc_llvm_options {
    const char *target; /* "gfx1100", "sm_90", … */
    int amdgpu_cov;     /* AMDGPU code object version, 4 or 5 (the default) */
    bool optimize;      /* run default<O3> (true); false only to look at kc's own IR */
} kc_llvm_options;

void kc_llvm_default_options(kc_llvm_options *o);

/* What a host needs to know to launch the kernel. */
typedef struct kc_llvm_layout {
    int nparams;
    uint32_t *arg_offset;  /* per parameter: byte offset in the kernel arguments */
    uint32_t *arg_size;    /* per parameter: bytes */
    uint32_t args_size;    /* bytes of explicit kernel arguments */
    uint32_t wg[3];        /* the workgroup size */
    uint32_t shared_bytes; /* workgroup memory, each variable at its alignment */
    int wave_size;
    bool needs_float16, needs_int64, needs_subgroups, needs_float_atomics;
} kc_llvm_layout;

typedef struct kc_llvm_module {
    char *data;  /* code object bytes, or NUL-terminated text */
    size_t size; /* bytes (text: without the NUL) */
    kc_llvm_layout layout;
} kc_llvm_module;

/* Compiles a specialised, fully inlined kir module. Returns false after
 * reporting in diag: an unknown target, a missing ld.lld, or an internal
 * error (LLVM's verifier rejecting kc's IR is a compiler bug, and the
 * message says so). */
bool kc_llvm_emit(const kc_ir_module *m, const kc_llvm_options *o, kc_llvm_output what, kc_llvm_module *out,
                  kc_diag *diag);
void kc_llvm_module_free(kc_llvm_module *m);

/* The kernel-argument layout above, shared with everyone who must agree on
 * it (the emitter, the bundle, the runtime). offset and size have one
 * entry per parameter. */
void kc_llvm_kernarg_layout(const kc_ir_func *k, uint32_t *offset, uint32_t *size, uint32_t *total);

/* The ld.lld kc links code objects with: $KC_LD_LLD, else ld.lld-19 on
 * PATH, /usr/lib/llvm-19/bin/ld.lld, then ld.lld on PATH. NULL if none. */
const char *kc_llvm_lld_path(void);

#endif
