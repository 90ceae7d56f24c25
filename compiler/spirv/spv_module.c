/*
 * spv_module.c — building a SPIR-V module: word buffers for the sections
 * of the logical layout (SPIR-V 2.4), result ids, and types and constants
 * made once each.
 */
#include "spv_private.h"

#include <stdlib.h>
#include <string.h>

void spv_put(spv_words *b, uint32_t w)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 256;
        b->w = realloc(b->w, sizeof(uint32_t) * b->cap);
        if (!b->w)
            abort();
    }
    b->w[b->n++] = w;
}

void spv_op(spv_words *b, SpvOp op, int nwords, const uint32_t *operands)
{
    spv_put(b, (uint32_t)(nwords + 1) << 16 | (uint32_t)op);
    for (int i = 0; i < nwords; i++)
        spv_put(b, operands[i]);
}

/* A string operand: UTF-8 bytes, NUL-terminated, padded to words. */
static int string_words(const char *s, uint32_t *out, int max)
{
    size_t len = strlen(s) + 1;
    int n = (int)((len + 3) / 4);
    if (n > max)
        n = max;
    memset(out, 0, sizeof(uint32_t) * (size_t)n);
    memcpy(out, s, len > (size_t)n * 4 ? (size_t)n * 4 - 1 : len);
    return n;
}

void spv_op_str(spv_words *b, SpvOp op, int npre, const uint32_t *pre, const char *s, int npost,
                const uint32_t *post)
{
    uint32_t w[128];
    int n = 0;
    for (int i = 0; i < npre; i++)
        w[n++] = pre[i];
    n += string_words(s, w + n, 100);
    for (int i = 0; i < npost && n < 128; i++)
        w[n++] = post[i];
    spv_op(b, op, n, w);
}

uint32_t spv_id(spv *S)
{
    return S->next_id++;
}

static uint32_t cached(spv *S, const char *key)
{
    return (uint32_t)(uintptr_t)kc_map_get(&S->cache, key);
}

static void remember(spv *S, const char *key, uint32_t id)
{
    kc_map_put(S->arena, &S->cache, kc_arena_strdup(S->arena, key), (void *)(uintptr_t)id);
}

/* ---- types ------------------------------------------------------------------ */

uint32_t spv_type_void(spv *S)
{
    uint32_t id = cached(S, "void");
    if (!id) {
        id = spv_id(S);
        spv_op(&S->types, SpvOpTypeVoid, 1, (uint32_t[]){id});
        remember(S, "void", id);
    }
    return id;
}

uint32_t spv_type_scalar(spv *S, kc_scalar s)
{
    char key[32];
    snprintf(key, sizeof(key), "s%d", (int)s);
    if (s == KC_S_LONG || s == KC_S_ULONG)
        S->need_int64 = true; /* on every use: the views' ulong does not count (spirv.c) */
    uint32_t id = cached(S, key);
    if (id)
        return id;
    id = spv_id(S);
    switch (s) {
    case KC_S_BOOL: spv_op(&S->types, SpvOpTypeBool, 1, (uint32_t[]){id}); break;
    case KC_S_INT: spv_op(&S->types, SpvOpTypeInt, 3, (uint32_t[]){id, 32, 1}); break;
    case KC_S_UINT: spv_op(&S->types, SpvOpTypeInt, 3, (uint32_t[]){id, 32, 0}); break;
    case KC_S_LONG: spv_op(&S->types, SpvOpTypeInt, 3, (uint32_t[]){id, 64, 1}); break;
    case KC_S_ULONG: spv_op(&S->types, SpvOpTypeInt, 3, (uint32_t[]){id, 64, 0}); break;
    case KC_S_HALF: spv_op(&S->types, SpvOpTypeFloat, 2, (uint32_t[]){id, 16}); break;
    case KC_S_FLOAT: spv_op(&S->types, SpvOpTypeFloat, 2, (uint32_t[]){id, 32}); break;
    default: return spv_type_void(S);
    }
    remember(S, key, id);
    return id;
}

uint32_t spv_type(spv *S, const kc_type *t)
{
    if (t->lanes == 1)
        return spv_type_scalar(S, t->scalar);
    char key[32];
    snprintf(key, sizeof(key), "v%d.%d", (int)t->scalar, t->lanes);
    uint32_t id = cached(S, key);
    if (!id) {
        uint32_t elem = spv_type_scalar(S, t->scalar);
        id = spv_id(S);
        spv_op(&S->types, SpvOpTypeVector, 3, (uint32_t[]){id, elem, (uint32_t)t->lanes});
        remember(S, key, id);
    }
    return id;
}

uint32_t spv_type_bvec(spv *S, int lanes)
{
    return spv_type(S, kc_type_vector(KC_S_BOOL, lanes));
}

uint32_t spv_type_ptr(spv *S, SpvStorageClass sc, uint32_t pointee)
{
    char key[48];
    snprintf(key, sizeof(key), "p%d.%u", (int)sc, pointee);
    uint32_t id = cached(S, key);
    if (!id) {
        id = spv_id(S);
        spv_op(&S->types, SpvOpTypePointer, 3, (uint32_t[]){id, (uint32_t)sc, pointee});
        remember(S, key, id);
    }
    return id;
}

uint32_t spv_type_array(spv *S, uint32_t elem, uint32_t len)
{
    char key[48];
    snprintf(key, sizeof(key), "a%u.%u", elem, len);
    uint32_t id = cached(S, key);
    if (!id) {
        uint32_t n = spv_const_u32(S, len);
        id = spv_id(S);
        spv_op(&S->types, SpvOpTypeArray, 3, (uint32_t[]){id, elem, n});
        remember(S, key, id);
    }
    return id;
}

uint32_t spv_type_fn_void(spv *S)
{
    uint32_t id = cached(S, "fnvoid");
    if (!id) {
        uint32_t v = spv_type_void(S);
        id = spv_id(S);
        spv_op(&S->types, SpvOpTypeFunction, 2, (uint32_t[]){id, v});
        remember(S, "fnvoid", id);
    }
    return id;
}

/* ---- constants ------------------------------------------------------------------ */

static uint32_t const_bits(spv *S, kc_scalar s, uint64_t bits)
{
    char key[64];
    snprintf(key, sizeof(key), "c%d.%llx", (int)s, (unsigned long long)bits);
    uint32_t id = cached(S, key);
    if (id)
        return id;
    uint32_t t = spv_type_scalar(S, s);
    id = spv_id(S);
    if (s == KC_S_BOOL)
        spv_op(&S->types, bits ? SpvOpConstantTrue : SpvOpConstantFalse, 2, (uint32_t[]){t, id});
    else if (kc_scalar_bits(s) == 64)
        spv_op(&S->types, SpvOpConstant, 4, (uint32_t[]){t, id, (uint32_t)bits, (uint32_t)(bits >> 32)});
    else
        spv_op(&S->types, SpvOpConstant, 3, (uint32_t[]){t, id, (uint32_t)bits});
    remember(S, key, id);
    return id;
}

uint32_t spv_const_u32(spv *S, uint32_t v) { return const_bits(S, KC_S_UINT, v); }
uint32_t spv_const_i32(spv *S, int32_t v) { return const_bits(S, KC_S_INT, (uint32_t)v); }
uint32_t spv_const_bool(spv *S, bool v) { return const_bits(S, KC_S_BOOL, v); }

uint32_t spv_const_f32(spv *S, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, 4);
    return const_bits(S, KC_S_FLOAT, bits);
}

/* IEEE binary16 bits of a value already rounded to half (fold.c did it). */
static uint16_t half_bits(double v)
{
    float f = (float)v;
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    int e = (int)((x >> 23) & 0xff) - 127 + 15;
    uint32_t m = x & 0x7fffff;
    if (((x >> 23) & 0xff) == 0xff)
        return sign | 0x7c00 | (m ? 0x200 : 0);
    if (e >= 31)
        return sign | 0x7c00;
    if (e <= 0) { /* subnormal half (the value is exact: it was rounded before) */
        if (e < -10)
            return sign;
        m |= 0x800000;
        return sign | (uint16_t)(m >> (14 - e));
    }
    return sign | (uint16_t)(e << 10) | (uint16_t)(m >> 13);
}

/* A scalar constant of any type. Half constants without the Float16
 * capability are made in the function by converting a float constant,
 * which 16-bit storage alone allows. */
uint32_t spv_const(spv *S, kc_scalar s, uint64_t ival, double fval)
{
    switch (s) {
    case KC_S_FLOAT: return spv_const_f32(S, (float)fval);
    case KC_S_HALF:
        if (S->need_float16)
            return const_bits(S, KC_S_HALF, half_bits(fval));
        return spv_emit_op(S, SpvOpFConvert, spv_type_scalar(S, KC_S_HALF), 1,
                           (uint32_t[]){spv_const_f32(S, (float)fval)});
    default: return const_bits(S, s, ival);
    }
}

uint32_t spv_const_composite(spv *S, uint32_t type, int n, const uint32_t *parts)
{
    kc_buf key = {0};
    kc_buf_printf(&key, "cc%u", type);
    for (int i = 0; i < n; i++)
        kc_buf_printf(&key, ".%u", parts[i]);
    uint32_t id = cached(S, key.data);
    if (!id) {
        id = spv_id(S);
        uint32_t *w = malloc(sizeof(uint32_t) * (size_t)(n + 2));
        if (!w)
            abort();
        w[0] = type;
        w[1] = id;
        memcpy(w + 2, parts, sizeof(uint32_t) * (size_t)n);
        spv_op(&S->types, SpvOpConstantComposite, n + 2, w);
        free(w);
        remember(S, key.data, id);
    }
    kc_buf_free(&key);
    return id;
}

/* ---- instructions in the current function ------------------------------------------ */

uint32_t spv_emit_op(spv *S, SpvOp op, uint32_t type, int n, const uint32_t *operands)
{
    uint32_t id = spv_id(S);
    uint32_t w[16];
    w[0] = type;
    w[1] = id;
    for (int i = 0; i < n && i < 14; i++)
        w[2 + i] = operands[i];
    spv_op(&S->code, op, n + 2, w);
    return id;
}

uint32_t spv_glsl(spv *S, int inst, uint32_t type, int n, const uint32_t *args)
{
    uint32_t w[8] = {S->glsl, (uint32_t)inst};
    for (int i = 0; i < n && i < 6; i++)
        w[2 + i] = args[i];
    return spv_emit_op(S, SpvOpExtInst, type, n + 2, w);
}

void spv_name(spv *S, uint32_t id, const char *name)
{
    spv_op_str(&S->names, SpvOpName, 1, (uint32_t[]){id}, name, 0, NULL);
}

void spv_decorate(spv *S, uint32_t id, SpvDecoration d, int n, const uint32_t *extra)
{
    uint32_t w[4] = {id, (uint32_t)d};
    for (int i = 0; i < n && i < 2; i++)
        w[2 + i] = extra[i];
    spv_op(&S->decos, SpvOpDecorate, n + 2, w);
}

void spv_member_decorate(spv *S, uint32_t id, uint32_t member, SpvDecoration d, int n, const uint32_t *extra)
{
    uint32_t w[5] = {id, member, (uint32_t)d};
    for (int i = 0; i < n && i < 2; i++)
        w[3 + i] = extra[i];
    spv_op(&S->decos, SpvOpMemberDecorate, n + 3, w);
}

void spv_words_free(spv_words *b)
{
    free(b->w);
    b->w = NULL;
    b->n = b->cap = 0;
}
