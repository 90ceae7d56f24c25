/*
 * binary.c — checks on a variant's binary before any driver sees it.
 *
 * A driver given a malformed SPIR-V module may crash rather than fail, so
 * a module is walked here first (SPIR-V 1.6 §2.3, the physical layout):
 * the header, then instructions whose word counts must tile the module
 * exactly. On the way it collects what the module declares (capabilities,
 * the GLCompute entry point named after the kernel) so that a variant that
 * needs a device feature is refused with a message, not a driver error.
 * This is no validator: a module with well-formed instructions and wrong
 * meaning passes (the compiler validates what it writes with SPIRV-Tools).
 */
#include "rt_binary.h"
#include "rt_private.h"

#include <stdlib.h>
#include <string.h>

enum {
    SPV_MAGIC = 0x07230203,
    OP_CAPABILITY = 17,
    OP_ENTRY_POINT = 15,
    OP_EXECUTION_MODE = 16,
    MODE_LOCAL_SIZE = 17,
    EXEC_GLCOMPUTE = 5,
    /* capabilities (SPIR-V §3.31) that need a device feature */
    CAP_FLOAT16 = 9,
    CAP_INT64 = 11,
    CAP_INT64_ATOMICS = 12,
    CAP_INT16 = 22,
    CAP_INT8 = 39,
    CAP_GROUP_NON_UNIFORM = 61,
    CAP_GROUP_NON_UNIFORM_VOTE = 62,
    CAP_GROUP_NON_UNIFORM_ARITHMETIC = 63,
    CAP_GROUP_NON_UNIFORM_BALLOT = 64,
    CAP_GROUP_NON_UNIFORM_SHUFFLE = 65,
    CAP_STORAGE_BUFFER_16BIT = 4433,
    CAP_ATOMIC_FLOAT32_ADD = 6033,
};

static unsigned capability_feature(uint32_t cap)
{
    switch (cap) {
    case CAP_FLOAT16: return RT_F_FLOAT16;
    case CAP_INT64: return RT_F_INT64;
    case CAP_STORAGE_BUFFER_16BIT: return RT_F_STORAGE16;
    case CAP_GROUP_NON_UNIFORM:
    case CAP_GROUP_NON_UNIFORM_VOTE: return RT_F_SUBGROUPS;
    case CAP_GROUP_NON_UNIFORM_ARITHMETIC: return RT_F_SUBGROUPS | RT_F_SG_ARITH;
    case CAP_GROUP_NON_UNIFORM_BALLOT: return RT_F_SUBGROUPS | RT_F_SG_BALLOT;
    case CAP_GROUP_NON_UNIFORM_SHUFFLE: return RT_F_SUBGROUPS | RT_F_SG_SHUFFLE;
    case CAP_ATOMIC_FLOAT32_ADD: return RT_F_FLOAT_ATOMICS;
    default: return 0;
    }
}

/* Does the literal string at w[0..n) equal name (NUL-terminated, padded)? */
static bool string_is(const uint32_t *w, size_t n, const char *name)
{
    size_t len = strlen(name);
    if ((len + 1 + 3) / 4 > n)
        return false;
    const char *s = (const char *)w;
    return memcmp(s, name, len) == 0 && s[len] == 0;
}

bool rt_check_spirv(const void *blob, size_t size, const char *kernel, rt_spirv_facts *facts, char *err,
                    size_t errlen)
{
    memset(facts, 0, sizeof(*facts));
    if (size % 4 != 0)
        return rt_printf(err, errlen, "its SPIR-V is %zu bytes, not a whole number of words", size), false;
    if (size < 20)
        return rt_printf(err, errlen, "its SPIR-V is %zu bytes, shorter than a module header", size), false;
    size_t n = size / 4;
    const uint32_t *w = blob;
    uint32_t head[5];
    memcpy(head, w, sizeof(head)); /* the blob need not be aligned */
    if (head[0] != SPV_MAGIC)
        return rt_printf(err, errlen, "its binary is not SPIR-V (magic 0x%08x)", head[0]), false;
    uint32_t major = head[1] >> 16 & 0xff, minor = head[1] >> 8 & 0xff;
    if (major != 1 || minor > 6)
        return rt_printf(err, errlen, "its SPIR-V version %u.%u is unknown", major, minor), false;
    facts->minor = minor;
    uint32_t entry = 0;
    for (size_t i = 5; i < n;) {
        uint32_t first;
        memcpy(&first, &w[i], 4);
        uint32_t count = first >> 16, op = first & 0xffff;
        if (count == 0 || count > n - i)
            return rt_printf(err, errlen,
                             "its SPIR-V is damaged: an instruction at word %zu runs past the end", i),
                   false;
        uint32_t ops[64] = {0};
        size_t nops = count - 1 < 64 ? count - 1 : 64;
        memcpy(ops, &w[i + 1], nops * 4);
        if (op == OP_CAPABILITY && count == 2)
            facts->features |= capability_feature(ops[0]);
        if (op == OP_ENTRY_POINT && count >= 4 && ops[0] == EXEC_GLCOMPUTE &&
            string_is(ops + 2, nops - 2, kernel)) {
            facts->has_entry = true;
            entry = ops[1];
        }
        if (op == OP_EXECUTION_MODE && count == 6 && facts->has_entry && ops[0] == entry &&
            ops[1] == MODE_LOCAL_SIZE)
            memcpy(facts->local_size, ops + 2, sizeof(facts->local_size));
        i += count;
    }
    if (!facts->has_entry)
        return rt_printf(err, errlen, "its SPIR-V has no GLCompute entry point named '%s'", kernel), false;
    return true;
}

/* ---- kc's 64-bit views, narrowed ------------------------------------------------------------------------- */

enum {
    OP_NAME = 5,
    OP_TYPE_INT = 21,
    OP_TYPE_VECTOR = 23,
    OP_TYPE_ARRAY = 28,
    OP_TYPE_RUNTIME_ARRAY = 29,
    OP_TYPE_STRUCT = 30,
    OP_TYPE_POINTER = 32,
    OP_LOAD = 61,
    OP_BITCAST = 124,
};

/* The ids the rewrite needs: the views' ulong (a) and ulong2 (v), and
 * the uint2 (x2) and uint4 (x4) that take their places. */
typedef struct views {
    uint32_t a, v, x2, x4;
} views;

static uint32_t word(const uint32_t *w, size_t i)
{
    uint32_t x;
    memcpy(&x, &w[i], 4); /* the blob need not be aligned */
    return x;
}

/* Finds the views. False where the module has none, or where what
 * compiler/spirv/spirv.c promises does not hold: "kc.view64" names an
 * OpTypeInt 64 0, "kc.view64x2" a vector of two of them, and a uint2 and
 * a uint4 are declared before them (so that what uses the views may use
 * those instead). */
static bool find_views(const uint32_t *w, size_t n, views *out)
{
    memset(out, 0, sizeof(*out));
    uint32_t uint = 0;
    bool a_ok = false, v_ok = false;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 5; i < n;) {
            uint32_t count = word(w, i) >> 16, op = word(w, i) & 0xffff;
            if (count == 0 || count > n - i)
                return false;
            uint32_t ops[4] = {0};
            for (uint32_t k = 0; k < 4 && k + 1 < count; k++)
                ops[k] = word(w, i + 1 + k);
            if (pass == 0 && op == OP_NAME && count >= 3) {
                if (string_is(w + i + 2, count - 2, "kc.view64"))
                    out->a = ops[0];
                if (string_is(w + i + 2, count - 2, "kc.view64x2"))
                    out->v = ops[0];
            }
            if (pass == 1 && op == OP_TYPE_INT && count == 4) {
                if (ops[1] == 32 && ops[2] == 0)
                    uint = ops[0];
                if (ops[0] == out->a)
                    a_ok = ops[1] == 64 && ops[2] == 0 && out->x2 && (out->x4 || !out->v);
            }
            if (pass == 1 && op == OP_TYPE_VECTOR && count == 4) {
                if (uint && ops[1] == uint && ops[2] == 2 && !out->x2)
                    out->x2 = ops[0];
                if (uint && ops[1] == uint && ops[2] == 4 && !out->x4)
                    out->x4 = ops[0];
                if (ops[0] == out->v)
                    v_ok = ops[1] == out->a && ops[2] == 2 && a_ok;
            }
            i += count;
        }
    return out->a && a_ok && (!out->v || v_ok);
}

bool rt_spirv_has_views(const void *blob, size_t size)
{
    views vs;
    return size % 4 == 0 && find_views(blob, size / 4, &vs);
}

static uint32_t renamed(const views *vs, uint32_t id)
{
    return id == vs->a ? vs->x2 : id == vs->v && vs->v ? vs->x4 : id;
}

void *rt_spirv_narrow_views(const void *blob, size_t size, size_t *out_size)
{
    size_t n = size / 4;
    views vs;
    if (size % 4 != 0 || !find_views(blob, n, &vs))
        return NULL;
    uint32_t *out = malloc(size);
    if (!out)
        return NULL;
    const uint32_t *w = blob;
    size_t m = 0;
    for (size_t i = 0; i < 5; i++)
        out[m++] = word(w, i);
    for (size_t i = 5; i < n;) {
        uint32_t count = word(w, i) >> 16, op = word(w, i) & 0xffff;
        uint32_t first = count > 1 ? word(w, i + 1) : 0;
        bool drop = (op == OP_CAPABILITY && count == 2 && first == CAP_INT64) ||
                    (op == OP_NAME && (first == vs.a || (vs.v && first == vs.v))) ||
                    ((op == OP_TYPE_INT || op == OP_TYPE_VECTOR) && (first == vs.a || (vs.v && first == vs.v)));
        if (!drop) {
            for (uint32_t k = 0; k < count; k++)
                out[m + k] = word(w, i + k);
            /* where a type is an operand of what the views are made of */
            switch (op) {
            case OP_TYPE_ARRAY:
            case OP_TYPE_RUNTIME_ARRAY: out[m + 2] = renamed(&vs, out[m + 2]); break;
            case OP_TYPE_STRUCT:
                for (uint32_t k = 2; k < count; k++)
                    out[m + k] = renamed(&vs, out[m + k]);
                break;
            case OP_TYPE_POINTER: out[m + 3] = renamed(&vs, out[m + 3]); break;
            case OP_LOAD:
            case OP_BITCAST: out[m + 1] = renamed(&vs, out[m + 1]); break;
            default: break;
            }
            m += count;
        }
        i += count;
    }
    *out_size = m * 4;
    return out;
}

/* ---- kc's texel reads ------------------------------------------------------------------------------------ */

enum {
    OP_TYPE_IMAGE = 25,
    OP_TYPE_SAMPLED_IMAGE = 27,
    OP_VARIABLE = 59,
    OP_DECORATE = 71,
    DIM_BUFFER = 5,
    DECORATION_BINDING = 33,
    STORAGE_UNIFORM_CONSTANT = 0,
    /* image formats (SPIR-V §3.11) that compiler/spirv/spirv.c declares */
    FORMAT_RGBA32F = 1,
    FORMAT_RGBA16F = 2,
    FORMAT_R32F = 3,
    FORMAT_RGBA32I = 21,
    FORMAT_R32I = 24,
    FORMAT_RGBA32UI = 30,
    FORMAT_R32UI = 33,
};

static rt_texel texel_of_format(uint32_t spv_format)
{
    switch (spv_format) {
    case FORMAT_RGBA32F: return RT_TEXEL_RGBA32F;
    case FORMAT_RGBA16F: return RT_TEXEL_RGBA16F;
    case FORMAT_R32F: return RT_TEXEL_R32F;
    case FORMAT_RGBA32I: return RT_TEXEL_RGBA32I;
    case FORMAT_R32I: return RT_TEXEL_R32I;
    case FORMAT_RGBA32UI: return RT_TEXEL_RGBA32UI;
    case FORMAT_R32UI: return RT_TEXEL_R32UI;
    default: return RT_TEXEL_NONE;
    }
}

/* One walk records, per id, what each declaration says; a variable is a
 * texel binding when its pointer leads to a sampled image of a Buffer
 * image in one of the formats above. */
bool rt_spirv_texel_bindings(const void *blob, size_t size, rt_texel *out, uint32_t nbindings)
{
    memset(out, 0, sizeof(*out) * nbindings);
    size_t n = size / 4;
    if (size % 4 != 0 || n < 5)
        return false;
    const uint32_t *w = blob;
    uint32_t bound = word(w, 3);
    if (bound == 0 || bound > (1u << 22))
        return false;
    /* per id: an image's texel kind, a sampled image's image, a pointer's pointee, a binding + 1 */
    uint32_t *facts = calloc((size_t)bound * 4, sizeof(uint32_t));
    if (!facts)
        return false;
    uint32_t *image = facts, *sampled = facts + bound, *pointee = facts + 2 * (size_t)bound,
             *binding = facts + 3 * (size_t)bound;
    bool ok = true, any = false;
    for (size_t i = 5; i < n && ok;) {
        uint32_t count = word(w, i) >> 16, op = word(w, i) & 0xffff;
        if (count == 0 || count > n - i) {
            ok = false;
            break;
        }
        uint32_t ops[9] = {0};
        for (uint32_t k = 0; k < 9 && k + 1 < count; k++)
            ops[k] = word(w, i + 1 + k);
        if (op == OP_TYPE_IMAGE && count >= 9 && ops[0] < bound && ops[2] == DIM_BUFFER && ops[6] == 1)
            image[ops[0]] = texel_of_format(ops[7]);
        else if (op == OP_TYPE_SAMPLED_IMAGE && count == 3 && ops[0] < bound)
            sampled[ops[0]] = ops[1];
        else if (op == OP_TYPE_POINTER && count == 4 && ops[0] < bound && ops[1] == STORAGE_UNIFORM_CONSTANT)
            pointee[ops[0]] = ops[2];
        else if (op == OP_DECORATE && count == 4 && ops[0] < bound && ops[1] == DECORATION_BINDING)
            binding[ops[0]] = ops[2] + 1;
        else if (op == OP_VARIABLE && count >= 4 && ops[1] < bound && ops[2] == STORAGE_UNIFORM_CONSTANT &&
                 ops[0] < bound) {
            uint32_t s = pointee[ops[0]], img = s < bound ? sampled[s] : 0;
            rt_texel t = img && img < bound ? (rt_texel)image[img] : RT_TEXEL_NONE;
            uint32_t b = binding[ops[1]];
            if (t != RT_TEXEL_NONE && b >= 1 && b - 1 < nbindings) {
                out[b - 1] = t;
                any = true;
            }
        }
        i += count;
    }
    free(facts);
    return ok && any;
}

/* ---- kc's specialisation constants ----------------------------------------------------------------------- */

enum { DECORATION_SPEC_ID = 1 };

int rt_spirv_spec_ids(const void *blob, size_t size, uint32_t *ids, int max)
{
    size_t n = size / 4;
    if (size % 4 != 0 || n < 5)
        return 0;
    const uint32_t *w = blob;
    int found = 0;
    for (size_t i = 5; i < n;) {
        uint32_t count = word(w, i) >> 16, op = word(w, i) & 0xffff;
        if (count == 0 || count > n - i)
            return 0;
        if (op == OP_DECORATE && count == 4 && word(w, i + 2) == DECORATION_SPEC_ID) {
            uint32_t id = word(w, i + 3);
            int at = found < max ? found : max; /* insertion sort into the first max */
            while (at > 0 && ids[at - 1] > id) {
                if (at < max)
                    ids[at] = ids[at - 1];
                at--;
            }
            if (at < max)
                ids[at] = id;
            found++;
        }
        i += count;
    }
    return found;
}

uint32_t rt_texel_bytes(rt_texel t)
{
    if (t == RT_TEXEL_RGBA16F)
        return 8;
    return t == RT_TEXEL_R32F || t == RT_TEXEL_R32I || t == RT_TEXEL_R32UI ? 4 : 16;
}
