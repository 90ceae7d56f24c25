/*
 * spv_private.h — the SPIR-V emitter's state and building blocks.
 */
#ifndef KC_SPV_PRIVATE_H
#define KC_SPV_PRIVATE_H

#include <spirv/unified1/GLSL.std.450.h>
#include <spirv/unified1/spirv.h>

#include "kc_spirv.h"

typedef struct spv_words {
    uint32_t *w;
    size_t n, cap;
} spv_words;

/* A construct that break or continue may leave. */
typedef struct spv_target {
    uint32_t merge;    /* where break goes */
    uint32_t cont;     /* where continue goes (loops) */
    bool is_loop;
    bool merge_used;   /* something branches to merge */
} spv_target;

/* Where a variable lives and how its elements are stored. */
typedef struct spv_var {
    uint32_t id;           /* the OpVariable */
    SpvStorageClass sc;
    uint32_t elem_type;    /* the type of one stored element */
    bool bool_as_uint;     /* booleans in buffers and shared memory are 32-bit */
    bool float_as_uint;    /* float atomics by CAS keep the bits as uint */
    bool in_block;         /* a buffer: index 0 selects the runtime array member */
    uint32_t view_id;      /* a vector buffer's wide view (0: none): the same */
    uint32_t view_type;    /* binding as ulong/ulong2/uint words (spirv.c) */
    uint32_t texel_image;  /* a const buffer read as a uniform texel buffer: */
    uint32_t texel_sampled;/* its image type and sampled-image type (0: not) */
    SpvScope scope;        /* for atomics */
} spv_var;

typedef struct spv {
    const kc_ir_module *m;
    const kc_ir_func *fn;
    const kc_spv_options *o;
    kc_diag *diag;
    kc_arena *arena;
    uint32_t next_id;
    spv_words caps, exts, memmodel, entry, execmodes, names, decos, types, fnvars, code;
    kc_map cache;     /* types and constants, by a key */
    kc_map vars;      /* "%p" of a kc_ir_var or kc_ir_param -> spv_var* */
    uint32_t glsl;    /* the GLSL.std.450 import */
    uint32_t scalars; /* the scalars' block variable, if any */
    uint32_t *param_value; /* scalar parameters, loaded once in the entry block */
    uint32_t *param_float; /* half parameters: the float the host passed */
    uint32_t inputs[8];    /* builtin input variables, made on first use */
    uint32_t input_list[8];
    int ninputs;
    /* the current block: after a branch, code is unreachable until the next label */
    bool open;
    spv_target targets[512];
    int ntargets;
    bool failed;
    /* features used, which become capabilities */
    bool need_int64, need_float16, need_storage16, need_sg_basic, need_sg_arith, need_sg_shuffle,
        need_sg_relative, need_sg_ballot, need_float_atomic, need_texel;
    uint32_t view64, view64x2; /* the 64-bit views' ulong and ulong2 types, if made */
    kc_spv_layout *layout;
} spv;

void spv_put(spv_words *b, uint32_t w);
void spv_op(spv_words *b, SpvOp op, int nwords, const uint32_t *operands);
void spv_op_str(spv_words *b, SpvOp op, int npre, const uint32_t *pre, const char *s, int npost,
                const uint32_t *post);
void spv_words_free(spv_words *b);
uint32_t spv_id(spv *S);

uint32_t spv_type_void(spv *S);
uint32_t spv_type_scalar(spv *S, kc_scalar s);
uint32_t spv_type(spv *S, const kc_type *t);
uint32_t spv_type_bvec(spv *S, int lanes);
uint32_t spv_type_ptr(spv *S, SpvStorageClass sc, uint32_t pointee);
uint32_t spv_type_array(spv *S, uint32_t elem, uint32_t len);
uint32_t spv_type_fn_void(spv *S);

uint32_t spv_const_u32(spv *S, uint32_t v);
uint32_t spv_const_i32(spv *S, int32_t v);
uint32_t spv_const_bool(spv *S, bool v);
uint32_t spv_const_f32(spv *S, float v);
uint32_t spv_const(spv *S, kc_scalar s, uint64_t ival, double fval);
uint32_t spv_const_composite(spv *S, uint32_t type, int n, const uint32_t *parts);

uint32_t spv_emit_op(spv *S, SpvOp op, uint32_t type, int n, const uint32_t *operands);
uint32_t spv_glsl(spv *S, int inst, uint32_t type, int n, const uint32_t *args);
void spv_name(spv *S, uint32_t id, const char *name);
void spv_decorate(spv *S, uint32_t id, SpvDecoration d, int n, const uint32_t *extra);
void spv_member_decorate(spv *S, uint32_t id, uint32_t member, SpvDecoration d, int n, const uint32_t *extra);

/* spv_expr.c */
uint32_t spv_expr(spv *S, const kc_ir_expr *e);
uint32_t spv_convert(spv *S, uint32_t v, const kc_type *from, const kc_type *to);
uint32_t spv_builtin_input(spv *S, SpvBuiltIn b, bool vec3);
uint32_t spv_elem_ptr(spv *S, const spv_var *v, uint32_t index, int lane, const kc_type *t);
uint32_t spv_load_elem(spv *S, const spv_var *v, uint32_t index, const kc_type *t);
void spv_store_elem(spv *S, const spv_var *v, uint32_t index, int lane, uint32_t value, const kc_type *t);
spv_var *spv_var_of(spv *S, const void *key);

/* spv_stmt.c */
void spv_block(spv *S, const kc_ir_block *b);
void spv_label(spv *S, uint32_t label);
void spv_branch(spv *S, uint32_t target);

#endif
