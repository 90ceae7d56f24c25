/*
 * kc_spirv.h — the SPIR-V backend: specialised kir to a Vulkan compute
 * shader module (DESIGN.md §4), emitted directly (no LLVM), and checked
 * with SPIRV-Tools.
 *
 * The interface a host sees (the runtime, `kc export`'s manifest):
 *   - one descriptor set (0); buffer parameter i is binding i (its index
 *     among buffer parameters), a StorageBuffer runtime array;
 *   - scalar parameters in one push-constant block, 4 bytes each in
 *     parameter order (int, uint, float as themselves; bool as a uint 0/1;
 *     half as a float, converted by the kernel), or, past the device's
 *     push-constant limit, in a storage buffer at binding nbuffers with the
 *     same layout (`spilled`);
 *   - the workgroup size is the LocalSize of the entry point, which is
 *     named after the kernel;
 *   - a scalar the kernel names in KC_SPECIALIZE is also a specialisation
 *     constant, its SpecId the parameter's index, a 32-bit int (uint for
 *     uint and bool) whose default is KC_SPV_SPEC_UNSET. The kernel uses
 *     the constant unless it holds that default, and the push constant
 *     then: a pipeline made without VkSpecializationInfo runs every value,
 *     and one made with the launch's value runs that value, with the
 *     branches on it folded away by the driver. The push constant is
 *     always written, so a pipeline specialised to UNSET itself is right.
 */
#ifndef KC_SPIRV_H
#define KC_SPIRV_H

#include "kc_ir.h"

#define KC_SPV_SPEC_UNSET 0x80000000u

typedef struct kc_spv_options {
    int spirv_minor;          /* SPIR-V 1.x: 3 (Vulkan 1.1, the default) .. 5 */
    uint32_t push_limit;      /* bytes of push constants to use before spilling (128) */
    bool native_float_atomics; /* SPV_EXT_shader_atomic_float_add instead of a CAS loop */
    bool validate;            /* run spvValidateWithOptions (true) */
    bool wide_views;          /* whole vector elements through uint/ulong views (true; spirv.c) */
} kc_spv_options;

void kc_spv_default_options(kc_spv_options *o);

/* What a host needs to know to bind and launch the module. */
typedef struct kc_spv_layout {
    int nbuffers;             /* storage buffers the kernel's parameters take */
    int *push_offset;         /* per parameter: byte offset of a scalar, -1 for a buffer */
    uint32_t push_size;       /* bytes of scalar data */
    bool spilled;             /* scalars are in a storage buffer at binding nbuffers */
    uint32_t wg[3];           /* LocalSize */
    bool needs_float16, needs_int64, needs_storage16, needs_subgroups, needs_float_atomics;
} kc_spv_layout;

typedef struct kc_spv_module {
    uint32_t *words;
    size_t nwords;
    kc_spv_layout layout;
} kc_spv_module;

/* Emits (and unless told otherwise validates) the module for a specialised,
 * fully inlined kir module. Returns false after reporting in diag; an
 * invalid module is a compiler bug and the message includes the
 * validator's words. */
bool kc_spv_emit(const kc_ir_module *m, const kc_spv_options *o, kc_spv_module *out, kc_diag *diag);
void kc_spv_module_free(kc_spv_module *m);

/* The validator on its own; NULL when valid, else a message (free it). */
char *kc_spv_validate(const uint32_t *words, size_t nwords, int spirv_minor);
/* Disassembly text (free it); NULL with a message in err on failure. */
char *kc_spv_disassemble(const uint32_t *words, size_t nwords, char *err, size_t errlen);

/* The push-constant layout of a kernel's scalars, shared with everyone who
 * must agree on it (the emitter, the bundle, the runtime). */
void kc_spv_scalar_layout(const kc_ir_func *kernel, uint32_t push_limit, int *offsets, uint32_t *size,
                          bool *spilled);

#endif
