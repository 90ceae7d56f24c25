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
