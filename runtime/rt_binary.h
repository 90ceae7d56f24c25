/*
 * rt_binary.h — structural checks of variant binaries (binary.c).
 */
#ifndef KC_RT_BINARY_H
#define KC_RT_BINARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rt_spirv_facts {
    uint32_t minor;    /* SPIR-V 1.minor */
    unsigned features; /* RT_F_* from its capabilities */
    bool has_entry;
    uint32_t local_size[3]; /* the entry point's LocalSize; 0s when it has none */
} rt_spirv_facts;

/* Walks a SPIR-V module; false and a message (completing "variant X: …")
 * when it is not one, is damaged, or lacks the kernel's entry point. */
bool rt_check_spirv(const void *blob, size_t size, const char *kernel, rt_spirv_facts *facts, char *err,
                    size_t errlen);

/* kc's SPIR-V reads and writes whole vector elements through 64-bit
 * integer views (compiler/spirv/spirv.c). Where nothing else in the module
 * uses 64-bit integers it names them so, and a device without shaderInt64
 * runs the module with the views rewritten to uint2 and uint4: the same
 * bytes, the same arithmetic. rt_spirv_has_views: does the module have
 * such views (a walked module, rt_check_spirv)? rt_spirv_narrow_views: the
 * rewritten module (malloc'd, *out_size bytes), or NULL when it has none
 * or memory ran out. */
bool rt_spirv_has_views(const void *blob, size_t size);
void *rt_spirv_narrow_views(const void *blob, size_t size, size_t *out_size);

/* kc's SPIR-V reads a const buffer through a uniform texel buffer where
 * the kernel says KC_TEXEL_READS (compiler/spirv/spirv.c): a
 * UniformConstant sampled image of dimension Buffer at the buffer's
 * binding, in its element's format. rt_spirv_texel_bindings fills out[b]
 * for bindings 0 .. nbindings - 1 (RT_TEXEL_NONE: a storage buffer) and
 * says whether any binding is a texel buffer. */
typedef enum rt_texel {
    RT_TEXEL_NONE,
    RT_TEXEL_R32F,
    RT_TEXEL_RGBA32F,
    RT_TEXEL_R32I,
    RT_TEXEL_RGBA32I,
    RT_TEXEL_R32UI,
    RT_TEXEL_RGBA32UI,
    RT_TEXEL_RGBA16F, /* half4, read as floats */
    RT_TEXEL_KINDS
} rt_texel;

/* kc's SPIR-V makes each KC_SPECIALIZE scalar a specialisation constant
 * whose SpecId is the parameter's index (compiler/spirv/kc_spirv.h).
 * rt_spirv_spec_ids: the SpecIds the module decorates, ascending, at most
 * max of them into ids; the number found (more than max when it has more),
 * 0 for a module with none or one that does not walk. */
int rt_spirv_spec_ids(const void *blob, size_t size, uint32_t *ids, int max);

bool rt_spirv_texel_bindings(const void *blob, size_t size, rt_texel *out, uint32_t nbindings);
uint32_t rt_texel_bytes(rt_texel t); /* 4, 8 or 16 */

#endif
