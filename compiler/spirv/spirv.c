/*
 * spirv.c — the SPIR-V backend's entry: declares the kernel's interface
 * (buffers, push constants, shared and private memory), emits the body,
 * assembles the sections in the order SPIR-V 2.4 prescribes, and runs the
 * validator. Known traps, from other projects' trackers, handled here:
 * one descriptor set for everything; the entry point's interface lists
 * only Input/Output variables before SPIR-V 1.4 and every global after;
 * push constants past the device limit spill to a storage buffer;
 * booleans in buffers are 32-bit.
 */
#include "spv_private.h"

#ifdef KC_HAVE_SPIRV_TOOLS
#include <spirv-tools/libspirv.h>
#endif
#include <stdlib.h>
#include <string.h>

void kc_spv_default_options(kc_spv_options *o)
{
    o->spirv_minor = 3;
    o->push_limit = 128;
    o->native_float_atomics = false;
    o->validate = true;
    o->wide_views = true;
}

void kc_spv_scalar_layout(const kc_ir_func *k, uint32_t push_limit, int *offsets, uint32_t *size, bool *spilled)
{
    uint32_t at = 0;
    for (int i = 0; i < k->nparams; i++) {
        offsets[i] = -1;
        if (!k->params[i]->is_buffer) {
            offsets[i] = (int)at;
            at += (uint32_t)kc_scalar_push_bytes(k->params[i]->type->scalar); /* half as float */
        }
    }
    *size = at;
    *spilled = at > push_limit;
}

/* ---- the kernel's interface ---------------------------------------------------- */

static uint32_t elem_size(const kc_type *t)
{
    return (uint32_t)kc_type_bytes(t);
}

static spv_var *new_var(spv *S, const void *key)
{
    spv_var *v = KC_NEW(S->arena, spv_var);
    kc_map_put(S->arena, &S->vars, kc_arena_printf(S->arena, "%p", key), v);
    return v;
}

/* Does the kernel use float atomics on this memory? Then it is kept as
 * uint bits for the compare-and-swap loop. */
typedef struct float_atomic_scan {
    const void *root;
    bool hit;
} float_atomic_scan;

static void scan_float_atomic(void *user, kc_ir_stmt *s)
{
    float_atomic_scan *f = user;
    if (s->kind == KIR_ATOMIC && kc_type_is_float(s->value->type) &&
        (s->root.var ? (const void *)s->root.var : (const void *)s->root.param) == f->root)
        f->hit = true;
}

static bool cas_floats(spv *S, const void *root)
{
    if (S->o->native_float_atomics)
        return false;
    float_atomic_scan f = {root, false};
    kc_ir_walk((kc_ir_block *)&S->fn->body, scan_float_atomic, &f);
    return f.hit;
}

static uint32_t stored_type(spv *S, spv_var *v, const kc_type *t)
{
    if (t->scalar == KC_S_BOOL && t->lanes == 1)
        v->bool_as_uint = true;
    return v->bool_as_uint || v->float_as_uint ? spv_type_scalar(S, KC_S_UINT) : spv_type(S, t);
}

/* ---- wide views of vector buffers ---------------------------------------------- */

/* A CPU Vulkan driver built on gallivm (lavapipe, Mesa 21-23) runs every
 * buffer access as a loop over the subgroup's lanes, and in each lane a
 * bounds check, a load and an insert per component of the element. A
 * float4 read as two ulongs takes two of those steps instead of four, a
 * half4 read as one ulong one instead of four: softmax and layernorm at
 * their package shapes -17% and -14%, a float4 copy +28% GB/s (docs/
 * backends.md). A GPU reads 16 bytes either way and the bitcast is free.
 * So a buffer of 4-, 8- or 16-byte vectors is declared a second time over
 * the same binding as uint, ulong or ulong2 words, through which whole
 * elements are loaded and stored. A store to one lane of an element needs
 * the vector view: such a buffer keeps both, both Aliased.
 *
 * Where nothing else uses 64-bit integers, the views' ulong and ulong2 are
 * named "kc.view64" and "kc.view64x2", uint2 and uint4 are declared before
 * them, and nothing but the views refers to them: libkcrt rewrites them to
 * uint2 and uint4 for a device without shaderInt64 (runtime/binary.c). */
static uint32_t view_type(spv *S, const kc_type *t)
{
    if (t->lanes < 2 || !(kc_type_is_float(t) || t->scalar == KC_S_INT || t->scalar == KC_S_UINT))
        return 0;
    if (t->scalar == KC_S_HALF && !S->need_float16)
        return 0; /* a half vector made by a bitcast needs Float16, which 16-bit storage alone does not give */
    uint32_t bytes = elem_size(t);
    if (bytes == 4)
        return spv_type_scalar(S, KC_S_UINT);
    if (bytes != 8 && bytes != 16)
        return 0;
    if (!S->view64) {
        bool had = S->need_int64;
        spv_type(S, kc_type_vector(KC_S_UINT, 2)); /* what narrowing puts in their place, first */
        spv_type(S, kc_type_vector(KC_S_UINT, 4));
        S->view64 = spv_type_scalar(S, KC_S_ULONG);
        S->view64x2 = spv_type(S, kc_type_vector(KC_S_ULONG, 2));
        S->need_int64 = had;
    }
    return bytes == 8 ? S->view64 : S->view64x2;
}

typedef struct lane_store_scan {
    const kc_ir_param *root;
    bool hit;
} lane_store_scan;

static void scan_lane_store(void *user, kc_ir_stmt *s)
{
    lane_store_scan *f = user;
    if ((s->kind == KIR_STORE || s->kind == KIR_ATOMIC) && s->root.param == f->root &&
        (s->kind == KIR_ATOMIC || s->lane >= 0))
        f->hit = true;
}

/* Does the kernel store to single lanes of this buffer's elements? */
static bool stores_lanes(spv *S, const kc_ir_param *p)
{
    lane_store_scan f = {p, false};
    kc_ir_walk((kc_ir_block *)&S->fn->body, scan_lane_store, &f);
    return f.hit;
}

/* A storage buffer variable at p's binding: a runtime array of elem with
 * the given stride, in a Block struct. */
static uint32_t buffer_variable(spv *S, const kc_ir_param *p, uint32_t elem, uint32_t stride, SpvDecoration alias)
{
    char key[48];
    snprintf(key, sizeof(key), "rta.%u", elem);
    uint32_t rta = (uint32_t)(uintptr_t)kc_map_get(&S->cache, key);
    if (!rta) {
        rta = spv_id(S);
        spv_op(&S->types, SpvOpTypeRuntimeArray, 2, (uint32_t[]){rta, elem});
        spv_decorate(S, rta, SpvDecorationArrayStride, 1, (uint32_t[]){stride});
        kc_map_put(S->arena, &S->cache, kc_arena_strdup(S->arena, key), (void *)(uintptr_t)rta);
    }
    uint32_t st = spv_id(S);
    spv_op(&S->types, SpvOpTypeStruct, 2, (uint32_t[]){st, rta});
    spv_decorate(S, st, SpvDecorationBlock, 0, NULL);
    spv_member_decorate(S, st, 0, SpvDecorationOffset, 1, (uint32_t[]){0});
    if (p->readonly)
        spv_member_decorate(S, st, 0, SpvDecorationNonWritable, 0, NULL);
    uint32_t id = spv_id(S);
    spv_op(&S->types, SpvOpVariable, 3,
           (uint32_t[]){spv_type_ptr(S, SpvStorageClassStorageBuffer, st), id, SpvStorageClassStorageBuffer});
    spv_decorate(S, id, SpvDecorationDescriptorSet, 1, (uint32_t[]){0});
    spv_decorate(S, id, SpvDecorationBinding, 1, (uint32_t[]){(uint32_t)p->binding});
    spv_decorate(S, id, alias, 0, NULL);
    return id;
}

/* The texel format of a buffer element that KC_TEXEL_READS may read as a
 * texel: 32-bit scalars and 4-lane vectors of them, and half4 (a 2-lane
 * or a 16-bit one-lane format needs StorageImageExtendedFormats, which a
 * device may lack). 0: none. */
static SpvImageFormat texel_format(const kc_type *t)
{
    if (t->scalar == KC_S_HALF)
        return t->lanes == 4 ? SpvImageFormatRgba16f : 0;
    if (t->lanes != 1 && t->lanes != 4)
        return 0;
    switch (t->scalar) {
    case KC_S_FLOAT: return t->lanes == 1 ? SpvImageFormatR32f : SpvImageFormatRgba32f;
    case KC_S_INT: return t->lanes == 1 ? SpvImageFormatR32i : SpvImageFormatRgba32i;
    case KC_S_UINT: return t->lanes == 1 ? SpvImageFormatR32ui : SpvImageFormatRgba32ui;
    default: return 0;
    }
}

/* A const buffer read through a uniform texel buffer (KC_TEXEL_READS): a
 * UniformConstant sampled image of dimension Buffer at p's binding, in the
 * element's own format. libkcrt finds these in the module and binds a view
 * of the buffer there. A half4 texel is fetched as 32-bit floats (Vulkan's
 * sampled types are 32-bit) and converted back: the values are exact. */
static bool declare_texel_buffer(spv *S, const kc_ir_param *p, spv_var *v)
{
    SpvImageFormat format = texel_format(p->type);
    if (!S->fn->texel_reads || !p->readonly || !format)
        return false;
    char key[32], skey[32];
    snprintf(key, sizeof(key), "texel.%d", (int)format); /* a type is declared once */
    snprintf(skey, sizeof(skey), "stexel.%d", (int)format);
    v->texel_image = (uint32_t)(uintptr_t)kc_map_get(&S->cache, key);
    v->texel_sampled = (uint32_t)(uintptr_t)kc_map_get(&S->cache, skey);
    if (!v->texel_image) {
        uint32_t sampled = spv_type_scalar(S, p->type->scalar == KC_S_HALF ? KC_S_FLOAT : p->type->scalar);
        v->texel_image = spv_id(S);
        spv_op(&S->types, SpvOpTypeImage, 8,
               (uint32_t[]){v->texel_image, sampled, SpvDimBuffer, 0, 0, 0, 1, (uint32_t)format});
        v->texel_sampled = spv_id(S);
        spv_op(&S->types, SpvOpTypeSampledImage, 2, (uint32_t[]){v->texel_sampled, v->texel_image});
        kc_map_put(S->arena, &S->cache, kc_arena_strdup(S->arena, key), (void *)(uintptr_t)v->texel_image);
        kc_map_put(S->arena, &S->cache, kc_arena_strdup(S->arena, skey), (void *)(uintptr_t)v->texel_sampled);
    }
    v->id = spv_id(S);
    v->sc = SpvStorageClassUniformConstant;
    spv_op(&S->types, SpvOpVariable, 3,
           (uint32_t[]){spv_type_ptr(S, SpvStorageClassUniformConstant, v->texel_sampled), v->id,
                        SpvStorageClassUniformConstant});
    spv_decorate(S, v->id, SpvDecorationDescriptorSet, 1, (uint32_t[]){0});
    spv_decorate(S, v->id, SpvDecorationBinding, 1, (uint32_t[]){(uint32_t)p->binding});
    spv_name(S, v->id, p->name);
    /* a half4's texels are floats: its half4 type exists only where the
     * code needs one (spv_expr.c, fetch_texel) */
    v->elem_type = spv_type(S, p->type->scalar == KC_S_HALF ? kc_type_vector(KC_S_FLOAT, 4) : p->type);
    S->need_texel = true;
    return true;
}

static void declare_buffer(spv *S, const kc_ir_param *p)
{
    spv_var *v = new_var(S, p);
    if (declare_texel_buffer(S, p, v))
        return;
    v->float_as_uint = cas_floats(S, p);
    v->elem_type = stored_type(S, v, p->type);
    v->sc = SpvStorageClassStorageBuffer;
    v->in_block = true;
    v->scope = SpvScopeDevice;
    if (p->type->scalar == KC_S_HALF)
        S->need_storage16 = true;
    uint32_t stride = v->bool_as_uint || v->float_as_uint ? 4 : elem_size(p->type);
    SpvDecoration alias = S->fn->may_alias ? SpvDecorationAliased : SpvDecorationRestrict;
    v->view_type = S->o->wide_views && !v->float_as_uint ? view_type(S, p->type) : 0;
    bool both = v->view_type && stores_lanes(S, p);
    if (both)
        alias = SpvDecorationAliased;
    if (v->view_type) {
        v->view_id = buffer_variable(S, p, v->view_type, stride, alias);
        spv_name(S, v->view_id, p->name);
    }
    if (!v->view_type || both) {
        v->id = buffer_variable(S, p, v->elem_type, stride, alias);
        spv_name(S, v->id, p->name);
    }
}

static uint32_t scalar_slot_type(spv *S, const kc_type *t)
{
    switch (t->scalar) {
    case KC_S_INT: return spv_type_scalar(S, KC_S_INT);
    case KC_S_FLOAT:
    case KC_S_HALF: return spv_type_scalar(S, KC_S_FLOAT);
    default: return spv_type_scalar(S, KC_S_UINT);
    }
}

/* The scalars' block: push constants, or a storage buffer when spilled. */
static uint32_t declare_scalars(spv *S, uint32_t *block_type, SpvStorageClass *sc)
{
    const kc_ir_func *k = S->fn;
    kc_spv_layout *L = S->layout;
    uint32_t members[256];
    int n = 0;
    for (int i = 0; i < k->nparams && n < 256; i++)
        if (!k->params[i]->is_buffer)
            members[n++] = scalar_slot_type(S, k->params[i]->type);
    if (!n)
        return 0;
    uint32_t st = spv_id(S);
    uint32_t w[257] = {st};
    memcpy(w + 1, members, sizeof(uint32_t) * (size_t)n);
    spv_op(&S->types, SpvOpTypeStruct, n + 1, w);
    spv_decorate(S, st, SpvDecorationBlock, 0, NULL);
    int m = 0;
    for (int i = 0; i < k->nparams; i++)
        if (!k->params[i]->is_buffer) {
            spv_member_decorate(S, st, (uint32_t)m, SpvDecorationOffset, 1, (uint32_t[]){(uint32_t)L->push_offset[i]});
            if (L->spilled)
                spv_member_decorate(S, st, (uint32_t)m, SpvDecorationNonWritable, 0, NULL);
            m++;
        }
    *sc = L->spilled ? SpvStorageClassStorageBuffer : SpvStorageClassPushConstant;
    uint32_t var = spv_id(S);
    spv_op(&S->types, SpvOpVariable, 3, (uint32_t[]){spv_type_ptr(S, *sc, st), var, *sc});
    if (L->spilled) {
        spv_decorate(S, var, SpvDecorationDescriptorSet, 1, (uint32_t[]){0});
        spv_decorate(S, var, SpvDecorationBinding, 1, (uint32_t[]){(uint32_t)L->nbuffers});
    }
    spv_name(S, var, "scalars");
    *block_type = st;
    return var;
}

/* A KC_SPECIALIZE scalar: the specialisation constant unless it was left
 * at its default, else the pushed value x (kc_spirv.h). */
static uint32_t specialised(spv *S, const kc_ir_param *p, uint32_t slot, uint32_t x)
{
    uint32_t spec = spv_id(S);
    spv_op(&S->types, SpvOpSpecConstant, 3, (uint32_t[]){slot, spec, KC_SPV_SPEC_UNSET});
    spv_decorate(S, spec, SpvDecorationSpecId, 1, (uint32_t[]){(uint32_t)p->index});
    uint32_t unset = p->type->scalar == KC_S_INT ? spv_const_i32(S, INT32_MIN) : spv_const_u32(S, KC_SPV_SPEC_UNSET);
    uint32_t is_unset = spv_emit_op(S, SpvOpIEqual, spv_type_scalar(S, KC_S_BOOL), 2, (uint32_t[]){spec, unset});
    return spv_emit_op(S, SpvOpSelect, slot, 3, (uint32_t[]){is_unset, x, spec});
}

/* Loads every scalar parameter once, at the top of the kernel. */
static void load_scalars(spv *S, uint32_t block, SpvStorageClass sc)
{
    const kc_ir_func *k = S->fn;
    int m = 0;
    for (int i = 0; i < k->nparams; i++) {
        const kc_ir_param *p = k->params[i];
        if (p->is_buffer)
            continue;
        uint32_t slot = scalar_slot_type(S, p->type);
        uint32_t ptr = spv_emit_op(S, SpvOpAccessChain, spv_type_ptr(S, sc, slot), 2,
                                   (uint32_t[]){block, spv_const_i32(S, m++)});
        uint32_t x = spv_emit_op(S, SpvOpLoad, slot, 1, (uint32_t[]){ptr});
        if (p->specialize)
            x = specialised(S, p, slot, x);
        if (p->type->scalar == KC_S_BOOL)
            x = spv_emit_op(S, SpvOpINotEqual, spv_type(S, p->type), 2, (uint32_t[]){x, spv_const_u32(S, 0)});
        else if (p->type->scalar == KC_S_HALF) {
            S->param_float[i] = x;
            /* the half value itself only where half types are allowed */
            if (S->need_float16 || S->need_storage16)
                x = spv_emit_op(S, SpvOpFConvert, spv_type(S, p->type), 1, (uint32_t[]){x});
        }
        S->param_value[i] = x;
    }
}

static void declare_var(spv *S, const kc_ir_var *kv)
{
    spv_var *v = new_var(S, kv);
    switch (kv->mem) {
    case KIR_MEM_SHARED: v->sc = SpvStorageClassWorkgroup; break;
    case KIR_MEM_CONST: v->sc = SpvStorageClassPrivate; break;
    default: v->sc = SpvStorageClassFunction; break;
    }
    v->scope = SpvScopeWorkgroup;
    v->float_as_uint = kv->mem == KIR_MEM_SHARED && cas_floats(S, kv);
    if (kv->mem == KIR_MEM_SHARED)
        v->elem_type = stored_type(S, v, kv->type);
    else
        v->elem_type = spv_type(S, kv->type);
    uint32_t type = kv->is_array ? spv_type_array(S, v->elem_type, (uint32_t)kv->len) : v->elem_type;
    uint32_t ptr = spv_type_ptr(S, v->sc, type);
    v->id = spv_id(S);
    if (kv->mem == KIR_MEM_CONST) {
        uint32_t *parts = kc_arena_alloc(S->arena, sizeof(uint32_t) * (size_t)kv->len);
        for (int64_t i = 0; i < kv->len; i++) {
            const kc_ir_expr *c = kv->init[i];
            parts[i] = c->kind == KIR_CONST ? spv_const(S, c->type->scalar, c->ival, c->fval) : spv_const_i32(S, 0);
        }
        uint32_t init = spv_const_composite(S, type, (int)kv->len, parts);
        spv_op(&S->types, SpvOpVariable, 4, (uint32_t[]){ptr, v->id, SpvStorageClassPrivate, init});
    } else if (kv->mem == KIR_MEM_SHARED) {
        spv_op(&S->types, SpvOpVariable, 3, (uint32_t[]){ptr, v->id, SpvStorageClassWorkgroup});
    } else {
        spv_op(&S->fnvars, SpvOpVariable, 3, (uint32_t[]){ptr, v->id, SpvStorageClassFunction});
    }
    spv_name(S, v->id, kv->name);
}

/* ---- capabilities ------------------------------------------------------------------ */

/* Half values beyond loads, stores and conversions need the Float16
 * capability (shaderFloat16). 16-bit storage alone covers the rest, but
 * only where there is a half buffer to declare it for; without one, any
 * half value needs Float16. */
typedef struct half_scan {
    bool arith, any;
} half_scan;

/* (float)h of a half parameter reads the float the host passed: no half
 * value at all. */
static bool param_as_float(const kc_ir_expr *e)
{
    return e->kind == KIR_CAST && e->type->scalar == KC_S_FLOAT && e->type->lanes == 1 && e->a->kind == KIR_PARAM &&
           e->a->type->scalar == KC_S_HALF;
}

static void scan_half(half_scan *h, const kc_ir_expr *e)
{
    if (!e || param_as_float(e))
        return;
    if (e->type->scalar == KC_S_HALF) {
        h->any = true;
        if (e->kind != KIR_LOAD && e->kind != KIR_CAST && e->kind != KIR_CONST && e->kind != KIR_PARAM)
            h->arith = true;
    }
    scan_half(h, e->a);
    scan_half(h, e->b);
    scan_half(h, e->c);
    for (int i = 0; i < e->nargs; i++)
        scan_half(h, e->args[i]);
}

static void scan_half_stmt(void *user, kc_ir_stmt *s)
{
    half_scan *h = user;
    const kc_ir_expr *es[] = {s->index, s->value, s->cmp, s->cond, s->post};
    for (size_t i = 0; i < KC_COUNT(es); i++)
        scan_half(h, es[i]);
    for (int i = 0; i < s->ncases; i++)
        for (int k = 0; s->cases[i].values && k < s->cases[i].nvalues; k++)
            scan_half(h, s->cases[i].values[k]);
}

static void scan_half_vars(spv *S)
{
    half_scan h = {false, false};
    kc_ir_walk((kc_ir_block *)&S->fn->body, scan_half_stmt, &h);
    bool buffers = false;
    for (int i = 0; i < S->fn->nparams; i++)
        buffers |= S->fn->params[i]->is_buffer && S->fn->params[i]->type->scalar == KC_S_HALF;
    bool need = h.arith || (h.any && !buffers);
    for (int i = 0; i < S->fn->vars.len; i++) {
        const kc_ir_var *v = S->fn->vars.items[i];
        need |= v->type->scalar == KC_S_HALF && v->mem != KIR_MEM_CONST;
    }
    for (int i = 0; i < S->m->consts.len; i++)
        need |= ((const kc_ir_var *)S->m->consts.items[i])->type->scalar == KC_S_HALF;
    S->need_float16 = need;
}

static void capability(spv *S, SpvCapability c)
{
    spv_op(&S->caps, SpvOpCapability, 1, (uint32_t[]){(uint32_t)c});
}

static void declare_capabilities(spv *S)
{
    capability(S, SpvCapabilityShader);
    if (S->need_int64 || S->view64)
        capability(S, SpvCapabilityInt64);
    if (S->view64 && !S->need_int64) { /* only the views use 64-bit integers: libkcrt may narrow them */
        spv_name(S, S->view64, "kc.view64");
        spv_name(S, S->view64x2, "kc.view64x2");
    }
    if (S->need_float16)
        capability(S, SpvCapabilityFloat16);
    if (S->need_storage16)
        capability(S, SpvCapabilityStorageBuffer16BitAccess);
    if (S->need_sg_basic)
        capability(S, SpvCapabilityGroupNonUniform);
    if (S->need_sg_arith)
        capability(S, SpvCapabilityGroupNonUniformArithmetic);
    if (S->need_sg_shuffle)
        capability(S, SpvCapabilityGroupNonUniformShuffle);
    if (S->need_sg_relative)
        capability(S, SpvCapabilityGroupNonUniformShuffleRelative);
    if (S->need_sg_ballot)
        capability(S, SpvCapabilityGroupNonUniformBallot);
    if (S->need_texel)
        capability(S, SpvCapabilitySampledBuffer);
    if (S->need_float_atomic) {
        capability(S, SpvCapabilityAtomicFloat32AddEXT);
        spv_op_str(&S->exts, SpvOpExtension, 0, NULL, "SPV_EXT_shader_atomic_float_add", 0, NULL);
    }
    kc_spv_layout *L = S->layout;
    L->needs_float16 = S->need_float16;
    L->needs_int64 = S->need_int64 || S->view64; /* the bundle's features say what the module declares */
    L->needs_storage16 = S->need_storage16;
    L->needs_subgroups = S->need_sg_basic;
    L->needs_float_atomics = S->need_float_atomic;
}

/* ---- assembly ---------------------------------------------------------------------- */

static void append(spv_words *out, const spv_words *in)
{
    for (size_t i = 0; i < in->n; i++)
        spv_put(out, in->w[i]);
}

static void emit_function(spv *S)
{
    uint32_t block_type = 0;
    SpvStorageClass sc = SpvStorageClassPushConstant;
    uint32_t scalars = S->scalars = declare_scalars(S, &block_type, &sc);
    for (int i = 0; i < S->fn->nparams; i++)
        if (S->fn->params[i]->is_buffer)
            declare_buffer(S, S->fn->params[i]);
    for (int i = 0; i < S->m->consts.len; i++)
        declare_var(S, S->m->consts.items[i]);
    for (int i = 0; i < S->fn->vars.len; i++)
        declare_var(S, S->fn->vars.items[i]);
    S->open = true;
    if (scalars)
        load_scalars(S, scalars, sc);
    spv_block(S, &S->fn->body);
    if (S->open) {
        spv_op(&S->code, SpvOpReturn, 0, NULL);
        S->open = false;
    }
}

static uint32_t *assemble(spv *S, uint32_t fn, size_t *nwords)
{
    const kc_ir_func *k = S->fn;
    spv_words out = {0};
    spv_put(&out, SpvMagicNumber);
    spv_put(&out, 0x10000u | (uint32_t)S->o->spirv_minor << 8);
    spv_put(&out, 0); /* generator: not registered */
    size_t bound_at = out.n;
    spv_put(&out, 0);
    spv_put(&out, 0);
    append(&out, &S->caps);
    append(&out, &S->exts);
    spv_op_str(&out, SpvOpExtInstImport, 1, (uint32_t[]){S->glsl}, "GLSL.std.450", 0, NULL);
    spv_op(&out, SpvOpMemoryModel, 2, (uint32_t[]){SpvAddressingModelLogical, SpvMemoryModelGLSL450});
    /* The interface: Input variables before SPIR-V 1.4, every global from 1.4 on. */
    uint32_t iface[600];
    int ni = 0;
    for (int i = 0; i < S->ninputs; i++)
        iface[ni++] = S->inputs[i];
    if (S->o->spirv_minor >= 4 && S->scalars)
        iface[ni++] = S->scalars;
    if (S->o->spirv_minor >= 4)
        for (int i = 0; i < S->vars.cap && ni < 600; i++)
            if (S->vars.keys[i]) {
                const spv_var *v = S->vars.vals[i];
                if (v->sc != SpvStorageClassFunction && v->id)
                    iface[ni++] = v->id;
                if (v->view_id && ni < 600)
                    iface[ni++] = v->view_id;
            }
    uint32_t pre[2] = {SpvExecutionModelGLCompute, fn};
    spv_op_str(&out, SpvOpEntryPoint, 2, pre, k->name, ni, iface);
    spv_op(&out, SpvOpExecutionMode, 5,
           (uint32_t[]){fn, SpvExecutionModeLocalSize, (uint32_t)k->wg_size[0], (uint32_t)k->wg_size[1],
                        (uint32_t)k->wg_size[2]});
    append(&out, &S->names);
    append(&out, &S->decos);
    append(&out, &S->types);
    spv_op(&out, SpvOpFunction, 4, (uint32_t[]){spv_type_void(S), fn, SpvFunctionControlMaskNone, spv_type_fn_void(S)});
    spv_op(&out, SpvOpLabel, 1, (uint32_t[]){spv_id(S)});
    append(&out, &S->fnvars);
    append(&out, &S->code);
    spv_op(&out, SpvOpFunctionEnd, 0, NULL);
    out.w[bound_at] = S->next_id;
    *nwords = out.n;
    return out.w;
}

#ifdef KC_HAVE_SPIRV_TOOLS
static spv_target_env env_for(int minor)
{
    return minor >= 5 ? SPV_ENV_VULKAN_1_2 : minor == 4 ? SPV_ENV_VULKAN_1_1_SPIRV_1_4 : SPV_ENV_VULKAN_1_1;
}

char *kc_spv_validate(const uint32_t *words, size_t nwords, int spirv_minor)
{
    spv_context ctx = spvContextCreate(env_for(spirv_minor));
    spv_validator_options opts = spvValidatorOptionsCreate();
    spv_const_binary_t bin = {words, nwords};
    spv_diagnostic diag = NULL;
    spv_result_t r = spvValidateWithOptions(ctx, opts, &bin, &diag);
    char *msg = NULL;
    if (r != SPV_SUCCESS) {
        kc_buf b = {0};
        kc_buf_puts(&b, diag && diag->error ? diag->error : "invalid module");
        msg = kc_buf_take(&b);
    }
    spvDiagnosticDestroy(diag);
    spvValidatorOptionsDestroy(opts);
    spvContextDestroy(ctx);
    return msg;
}

char *kc_spv_disassemble(const uint32_t *words, size_t nwords, char *err, size_t errlen)
{
    spv_context ctx = spvContextCreate(SPV_ENV_UNIVERSAL_1_5);
    spv_text text = NULL;
    spv_diagnostic diag = NULL;
    char *out = NULL;
    if (spvBinaryToText(ctx, words, nwords, SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES | SPV_BINARY_TO_TEXT_OPTION_INDENT,
                        &text, &diag) == SPV_SUCCESS) {
        out = malloc(text->length + 1);
        if (!out)
            abort();
        memcpy(out, text->str, text->length);
        out[text->length] = 0;
    } else if (err) {
        snprintf(err, errlen, "%s", diag && diag->error ? diag->error : "cannot disassemble");
    }
    spvTextDestroy(text);
    spvDiagnosticDestroy(diag);
    spvContextDestroy(ctx);
    return out;
}
#else
/* A kc built without SPIRV-Tools (-DKC_WITH_SPIRV_TOOLS=OFF): no validation, no disassembly. */
char *kc_spv_validate(const uint32_t *words, size_t nwords, int spirv_minor)
{
    (void)words, (void)nwords, (void)spirv_minor;
    return NULL;
}

char *kc_spv_disassemble(const uint32_t *words, size_t nwords, char *err, size_t errlen)
{
    (void)words, (void)nwords;
    if (err)
        snprintf(err, errlen, "this kc was built without SPIRV-Tools (-DKC_WITH_SPIRV_TOOLS=OFF): no disassembly");
    return NULL;
}
#endif

static void free_sections(spv *S)
{
    spv_words *all[] = {&S->caps, &S->exts, &S->memmodel, &S->entry, &S->execmodes, &S->names,
                        &S->decos, &S->types, &S->fnvars, &S->code};
    for (size_t i = 0; i < KC_COUNT(all); i++)
        spv_words_free(all[i]);
}

bool kc_spv_emit(const kc_ir_module *m, const kc_spv_options *o, kc_spv_module *out, kc_diag *diag)
{
    memset(out, 0, sizeof(*out));
    kc_arena arena;
    kc_arena_init(&arena);
    spv S = {0};
    S.m = m;
    S.fn = m->kernel;
    S.o = o;
    S.diag = diag;
    S.arena = &arena;
    S.next_id = 1;
    S.layout = &out->layout;
    const kc_ir_func *k = m->kernel;
    out->layout.push_offset = calloc((size_t)k->nparams + 1, sizeof(int));
    S.param_value = kc_arena_alloc(&arena, sizeof(uint32_t) * (size_t)(k->nparams + 1));
    S.param_float = kc_arena_alloc(&arena, sizeof(uint32_t) * (size_t)(k->nparams + 1));
    kc_spv_scalar_layout(k, o->push_limit, out->layout.push_offset, &out->layout.push_size, &out->layout.spilled);
    out->layout.nbuffers = k->nbuffers;
    for (int i = 0; i < 3; i++)
        out->layout.wg[i] = (uint32_t)k->wg_size[i];
    scan_half_vars(&S);
    S.glsl = spv_id(&S);
    uint32_t fn = spv_id(&S);
    spv_name(&S, fn, k->name);
    emit_function(&S);
    spv_type_fn_void(&S); /* every type exists before the sections are joined */
    declare_capabilities(&S);
    bool ok = !S.failed;
    if (ok) {
        out->words = assemble(&S, fn, &out->nwords);
        if (o->validate) {
            char *msg = kc_spv_validate(out->words, out->nwords, o->spirv_minor);
            if (msg) {
                kc_error_at(diag, k->loc, "internal compiler error: kc made an invalid SPIR-V module for '%s': %s",
                            k->name, msg);
                kc_diag_fix(diag, "please report this with the kernel file; `kc emit --emit spvasm` shows the module");
                free(msg);
                ok = false;
            }
        }
    }
    free_sections(&S);
    kc_arena_free(&arena);
    if (!ok) {
        free(out->words);
        out->words = NULL;
    }
    return ok;
}

void kc_spv_module_free(kc_spv_module *m)
{
    free(m->words);
    free(m->layout.push_offset);
    memset(m, 0, sizeof(*m));
}
