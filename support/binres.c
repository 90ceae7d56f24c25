/*
 * binres.c — a variant's registers, spills, scratch and shared memory from
 * its binary (kc_binres.h): an ELF64 note walk and a MessagePack reader for
 * AMDGPU code objects, a line scan for PTX. Every read is bounds-checked
 * against the bytes given.
 */
#include "kc_binres.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NT_AMDGPU_METADATA 32
#define SHT_NOTE 7
#define MP_MAX_DEPTH 32

static bool fail(char *err, size_t errlen, const char *msg)
{
    snprintf(err, errlen, "%s", msg);
    return false;
}

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint64_t be(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

/* ---- MessagePack: just enough to walk a map of maps and arrays ----------------------------- */

enum { MP_NIL, MP_BOOL, MP_INT, MP_FLOAT, MP_STR, MP_BIN, MP_EXT, MP_ARRAY, MP_MAP };

typedef struct mp {
    const uint8_t *p, *end;
} mp;

typedef struct mp_item {
    int kind;
    long long i;        /* MP_INT's value */
    const uint8_t *s;   /* MP_STR's bytes */
    uint64_t n;         /* MP_STR's length, MP_ARRAY's and MP_MAP's count */
} mp_item;

static bool mp_take(mp *m, uint64_t n, const uint8_t **at)
{
    if ((uint64_t)(m->end - m->p) < n)
        return false;
    *at = m->p;
    m->p += n;
    return true;
}

static bool mp_uint(mp *m, int bytes, uint64_t *v)
{
    const uint8_t *at;
    if (!mp_take(m, (uint64_t)bytes, &at))
        return false;
    *v = be(at, bytes);
    return true;
}

/* A payload of n bytes (strings, binaries, extensions) */
static bool mp_payload(mp *m, mp_item *it, int kind, uint64_t n)
{
    it->kind = kind;
    it->n = n;
    return mp_take(m, n + (kind == MP_EXT), &it->s); /* an extension's type byte comes first */
}

static bool mp_next(mp *m, mp_item *it)
{
    const uint8_t *at;
    if (!mp_take(m, 1, &at))
        return false;
    uint8_t c = *at;
    uint64_t v;
    memset(it, 0, sizeof(*it));
    if (c <= 0x7f || c >= 0xe0) {
        it->kind = MP_INT;
        it->i = (int8_t)c;
        return true;
    }
    if (c >= 0x80 && c <= 0x8f)
        return it->kind = MP_MAP, it->n = c & 0x0f, true;
    if (c >= 0x90 && c <= 0x9f)
        return it->kind = MP_ARRAY, it->n = c & 0x0f, true;
    if (c >= 0xa0 && c <= 0xbf)
        return mp_payload(m, it, MP_STR, c & 0x1f);
    switch (c) {
    case 0xc0: return it->kind = MP_NIL, true;
    case 0xc2:
    case 0xc3: return it->kind = MP_BOOL, it->i = c & 1, true;
    case 0xc4: return mp_uint(m, 1, &v) && mp_payload(m, it, MP_BIN, v);
    case 0xc5: return mp_uint(m, 2, &v) && mp_payload(m, it, MP_BIN, v);
    case 0xc6: return mp_uint(m, 4, &v) && mp_payload(m, it, MP_BIN, v);
    case 0xc7: return mp_uint(m, 1, &v) && mp_payload(m, it, MP_EXT, v);
    case 0xc8: return mp_uint(m, 2, &v) && mp_payload(m, it, MP_EXT, v);
    case 0xc9: return mp_uint(m, 4, &v) && mp_payload(m, it, MP_EXT, v);
    case 0xca: return it->kind = MP_FLOAT, mp_uint(m, 4, &v);
    case 0xcb: return it->kind = MP_FLOAT, mp_uint(m, 8, &v);
    case 0xcc:
    case 0xcd:
    case 0xce:
    case 0xcf:
        if (!mp_uint(m, 1 << (c - 0xcc), &v) || v > INT64_MAX)
            return false;
        return it->kind = MP_INT, it->i = (long long)v, true;
    case 0xd0:
    case 0xd1:
    case 0xd2:
    case 0xd3: {
        int bytes = 1 << (c - 0xd0);
        if (!mp_uint(m, bytes, &v))
            return false;
        if (bytes < 8 && v >> (8 * bytes - 1)) /* sign-extend */
            v |= ~(uint64_t)0 << (8 * bytes);
        return it->kind = MP_INT, it->i = (long long)v, true;
    }
    case 0xd4:
    case 0xd5:
    case 0xd6:
    case 0xd7:
    case 0xd8: return mp_payload(m, it, MP_EXT, (uint64_t)1 << (c - 0xd4));
    case 0xd9: return mp_uint(m, 1, &v) && mp_payload(m, it, MP_STR, v);
    case 0xda: return mp_uint(m, 2, &v) && mp_payload(m, it, MP_STR, v);
    case 0xdb: return mp_uint(m, 4, &v) && mp_payload(m, it, MP_STR, v);
    case 0xdc: return it->kind = MP_ARRAY, mp_uint(m, 2, &it->n);
    case 0xdd: return it->kind = MP_ARRAY, mp_uint(m, 4, &it->n);
    case 0xde: return it->kind = MP_MAP, mp_uint(m, 2, &it->n);
    case 0xdf: return it->kind = MP_MAP, mp_uint(m, 4, &it->n);
    default: return false; /* 0xc1: never used */
    }
}

/* Skips the rest of a value whose header is it: its elements, recursively. */
static bool mp_skip_body(mp *m, const mp_item *it, int depth)
{
    if (it->kind != MP_ARRAY && it->kind != MP_MAP)
        return true;
    if (depth > MP_MAX_DEPTH)
        return false;
    uint64_t n = it->kind == MP_MAP ? 2 * it->n : it->n;
    for (uint64_t i = 0; i < n; i++) {
        mp_item e;
        if (!mp_next(m, &e) || !mp_skip_body(m, &e, depth + 1))
            return false;
    }
    return true;
}

static bool mp_is(const mp_item *it, const char *s)
{
    return it->kind == MP_STR && it->n == strlen(s) && memcmp(it->s, s, it->n) == 0;
}

/* The kernel's map: the six counts, each -1 until seen. */
static bool read_kernel(mp *m, uint64_t pairs, kc_binres *r)
{
    static const char *const keys[] = {".vgpr_count", ".sgpr_count", ".vgpr_spill_count", ".sgpr_spill_count",
                                       ".private_segment_fixed_size", ".group_segment_fixed_size"};
    long *dst[] = {&r->vgprs, &r->sgprs, &r->vgpr_spills, &r->sgpr_spills, &r->scratch_bytes, &r->shared_bytes};
    for (uint64_t i = 0; i < pairs; i++) {
        mp_item k, v;
        if (!mp_next(m, &k) || !mp_next(m, &v))
            return false;
        int which = -1;
        for (int j = 0; j < 6; j++)
            if (mp_is(&k, keys[j]))
                which = j;
        if (which >= 0 && v.kind == MP_INT && v.i >= 0 && v.i <= INT32_MAX)
            *dst[which] = (long)v.i;
        else if (!mp_skip_body(m, &v, 1))
            return false;
    }
    return true;
}

/* The note's top map: amdhsa.kernels, an array of one kernel map. */
static bool read_metadata(const uint8_t *p, size_t n, kc_binres *r, char *err, size_t errlen)
{
    mp m = {p, p + n};
    mp_item top;
    if (!mp_next(&m, &top) || top.kind != MP_MAP)
        return fail(err, errlen, "the AMDGPU metadata note is not a MessagePack map");
    bool kernel = false;
    for (uint64_t i = 0; i < top.n; i++) {
        mp_item k, v;
        if (!mp_next(&m, &k) || !mp_next(&m, &v))
            return fail(err, errlen, "the AMDGPU metadata note is cut short");
        if (mp_is(&k, "amdhsa.kernels") && v.kind == MP_ARRAY && v.n >= 1 && !kernel) {
            for (uint64_t j = 0; j < v.n; j++) {
                mp_item km;
                if (!mp_next(&m, &km))
                    return fail(err, errlen, "the AMDGPU metadata note is cut short");
                bool ok = j == 0 && km.kind == MP_MAP ? read_kernel(&m, km.n, r) : mp_skip_body(&m, &km, 2);
                if (!ok)
                    return fail(err, errlen, "the AMDGPU metadata note's kernel entry is damaged");
            }
            kernel = true;
        } else if (!mp_skip_body(&m, &v, 1)) {
            return fail(err, errlen, "the AMDGPU metadata note is damaged");
        }
    }
    if (!kernel)
        return fail(err, errlen, "the AMDGPU metadata note has no amdhsa.kernels entry");
    if (r->vgprs < 0 || r->sgprs < 0 || r->scratch_bytes < 0 || r->shared_bytes < 0)
        return fail(err, errlen, "the AMDGPU metadata note lacks a register or segment count");
    return true;
}

/* ---- ELF: the note section ------------------------------------------------------------------ */

/* Finds the AMDGPU metadata note's descriptor in the SHT_NOTE sections. */
static bool find_note(const uint8_t *p, size_t n, const uint8_t **desc, size_t *dsize)
{
    if (n < 64 || memcmp(p, "\x7f" "ELF", 4) != 0 || p[4] != 2 || p[5] != 1)
        return false;
    uint64_t shoff = le(p + 0x28, 8), shentsize = le(p + 0x3a, 2), shnum = le(p + 0x3c, 2);
    if (shentsize < 64 || shoff > n || shnum > (n - shoff) / shentsize)
        return false;
    for (uint64_t s = 0; s < shnum; s++) {
        const uint8_t *sh = p + shoff + s * shentsize;
        uint64_t off = le(sh + 0x18, 8), size = le(sh + 0x20, 8);
        if (le(sh + 4, 4) != SHT_NOTE || off > n || size > n - off)
            continue;
        for (uint64_t at = 0; size - at >= 12;) {
            const uint8_t *h = p + off + at;
            uint64_t namesz = le(h, 4), descsz = le(h + 4, 4), type = le(h + 8, 4);
            uint64_t name_pad = (namesz + 3) & ~(uint64_t)3, desc_pad = (descsz + 3) & ~(uint64_t)3;
            if (name_pad > size - at - 12 || desc_pad > size - at - 12 - name_pad)
                break;
            if (type == NT_AMDGPU_METADATA && namesz == 7 && memcmp(h + 12, "AMDGPU", 7) == 0) {
                *desc = h + 12 + name_pad;
                *dsize = (size_t)descsz;
                return true;
            }
            at += 12 + name_pad + desc_pad;
        }
    }
    return false;
}

static bool read_amdgpu(const uint8_t *p, size_t n, kc_binres *r, char *err, size_t errlen)
{
    const uint8_t *desc;
    size_t dsize;
    if (!find_note(p, n, &desc, &dsize))
        return fail(err, errlen, "not an AMDGPU code object with a metadata note");
    r->vgpr_spills = r->sgpr_spills = -1;
    r->vgprs = r->sgprs = r->scratch_bytes = r->shared_bytes = -1;
    return read_metadata(desc, dsize, r, err, errlen);
}

/* ---- PTX: the state-space declarations ------------------------------------------------------ */

/* ".local .align 8 .b8 __local_depot0[192];" -> 192 bytes aligned to 8;
 * a scalar -> its size; -1 when the line is not a declaration kc can
 * size. */
static long ptx_decl_bytes(const char *s, const char *end, long *align)
{
    const char *t = NULL, *al = NULL;
    for (const char *q = s; q + 2 < end; q++) {
        if (!al && q + 7 < end && memcmp(q, ".align ", 7) == 0)
            al = q + 7;
        if (q[0] == '.' && (q[1] == 'b' || q[1] == 'u' || q[1] == 's' || q[1] == 'f') && q[2] >= '1' &&
            q[2] <= '8') {
            t = q;
            break;
        }
    }
    if (!t)
        return -1;
    long elem = strtol(t + 2, NULL, 10) / 8;
    *align = al && *al >= '1' && *al <= '9' ? strtol(al, NULL, 10) : elem;
    if (*align < 1 || *align > 4096)
        *align = 1;
    const char *br = memchr(t, '[', (size_t)(end - t));
    if (!br)
        return elem;
    char num[24];
    size_t len = 0;
    for (const char *q = br + 1; q < end && *q >= '0' && *q <= '9' && len < sizeof(num) - 1; q++)
        num[len++] = *q;
    num[len] = 0;
    long count = len ? strtol(num, NULL, 10) : -1;
    return count >= 0 && elem > 0 && count <= INT32_MAX / elem ? count * elem : -1;
}

/* Where a variable of bytes at align goes after used bytes: ptxas lays a
 * state space's variables out in order, each at its alignment (two 4,100
 * byte arrays aligned to 16 take 8,224). */
static long place(long used, long bytes, long align)
{
    if (used > INT32_MAX - align)
        return INT32_MAX;
    long at = (used + align - 1) / align * align;
    return at > INT32_MAX - bytes ? INT32_MAX : at + bytes;
}

static bool contains(const char *p, size_t n, const char *what)
{
    size_t w = strlen(what);
    for (size_t i = 0; i + w <= n; i++)
        if (memcmp(p + i, what, w) == 0)
            return true;
    return false;
}

static bool read_ptx(const char *p, size_t n, kc_binres *r, char *err, size_t errlen)
{
    if (!contains(p, n, ".version"))
        return fail(err, errlen, "not PTX text (no .version directive)");
    r->vgprs = r->sgprs = r->vgpr_spills = r->sgpr_spills = -1; /* ptxas decides */
    r->scratch_bytes = r->shared_bytes = 0;
    for (const char *line = p, *end = p + n; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        const char *eol = nl ? nl : end;
        const char *s = line;
        while (s < eol && (*s == ' ' || *s == '\t'))
            s++;
        bool local = eol - s > 7 && memcmp(s, ".local ", 7) == 0;
        bool shared = eol - s > 8 && memcmp(s, ".shared ", 8) == 0;
        long align = 1, bytes = local || shared ? ptx_decl_bytes(s, eol, &align) : -1;
        if (bytes > 0 && local)
            r->scratch_bytes = place(r->scratch_bytes, bytes, align);
        else if (bytes > 0 && shared)
            r->shared_bytes = place(r->shared_bytes, bytes, align);
        line = eol + 1;
    }
    return true;
}

/* ---- SPIR-V: private arrays indexed at run time ----------------------------------------------- */

enum {
    SPV_TYPE_ARRAY = 28,
    SPV_TYPE_POINTER = 32,
    SPV_CONSTANT = 43,
    SPV_SPEC_CONSTANT = 50,
    SPV_VARIABLE = 59,
    SPV_ACCESS_CHAIN = 65,
    SPV_IN_BOUNDS_ACCESS_CHAIN = 66,
    SPV_PTR_ACCESS_CHAIN = 67,
    SPV_STORAGE_FUNCTION = 7,
};

/* What an id is, as far as the scan needs: a constant, an array type, a
 * pointer to a private array, or a pointer into one (root[] names the
 * variable). */
enum { ID_CONSTANT = 1, ID_ARRAY = 2, ID_PRIVATE_ARRAY_PTR = 4, ID_INTO_PRIVATE = 8, ID_COUNTED = 16 };

typedef struct spv_scan {
    uint8_t *is;
    uint32_t *root;
    uint32_t bound;
    long indexed;
} spv_scan;

static bool spv_id(const spv_scan *s, uint32_t id) { return id > 0 && id < s->bound; }

/* An access chain into a private array: does an index come from a value
 * rather than a constant? Then the array cannot live in registers. */
static void spv_access(spv_scan *s, const uint32_t *w, uint32_t n)
{
    uint32_t result = w[2], base = w[3];
    if (!spv_id(s, result) || !spv_id(s, base) || !(s->is[base] & ID_INTO_PRIVATE))
        return;
    s->is[result] |= ID_INTO_PRIVATE;
    s->root[result] = s->root[base];
    bool dynamic = false;
    for (uint32_t i = 4; i < n; i++)
        dynamic |= !spv_id(s, w[i]) || !(s->is[w[i]] & ID_CONSTANT);
    uint32_t var = s->root[base];
    if (dynamic && spv_id(s, var) && !(s->is[var] & ID_COUNTED)) {
        s->is[var] |= ID_COUNTED;
        s->indexed++;
    }
}

static void spv_instruction(spv_scan *s, const uint32_t *w, uint32_t n)
{
    switch (w[0] & 0xffff) {
    case SPV_TYPE_ARRAY:
        if (n >= 2 && spv_id(s, w[1]))
            s->is[w[1]] |= ID_ARRAY;
        break;
    case SPV_TYPE_POINTER: /* result, storage class, pointee */
        if (n >= 4 && spv_id(s, w[1]) && w[2] == SPV_STORAGE_FUNCTION && spv_id(s, w[3]) && (s->is[w[3]] & ID_ARRAY))
            s->is[w[1]] |= ID_PRIVATE_ARRAY_PTR;
        break;
    case SPV_CONSTANT:
    case SPV_SPEC_CONSTANT:
        if (n >= 3 && spv_id(s, w[2]))
            s->is[w[2]] |= ID_CONSTANT;
        break;
    case SPV_VARIABLE: /* type, result, storage class */
        if (n >= 4 && spv_id(s, w[1]) && spv_id(s, w[2]) && (s->is[w[1]] & ID_PRIVATE_ARRAY_PTR)) {
            s->is[w[2]] |= ID_INTO_PRIVATE;
            s->root[w[2]] = w[2];
        }
        break;
    case SPV_ACCESS_CHAIN:
    case SPV_IN_BOUNDS_ACCESS_CHAIN:
    case SPV_PTR_ACCESS_CHAIN:
        if (n >= 4)
            spv_access(s, w, n);
        break;
    }
}

/* The private (Function-storage) arrays that some access indexes with a
 * value known only at run time. Constant indices let the driver keep an
 * array in registers; a run-time index sends it to scratch on most
 * drivers (lavapipe: a scratch access costs about what a buffer access
 * does, docs/kernels.md). Words are little-endian, as kc writes them. */
static bool read_spirv(const uint8_t *p, size_t n, kc_binres *r, char *err, size_t errlen)
{
    if (n < 20 || n % 4 || le(p, 4) != 0x07230203)
        return fail(err, errlen, "not a SPIR-V module (no magic number, or not whole words)");
    size_t nwords = n / 4;
    uint64_t bound = le(p + 12, 4);
    /* every id is some instruction's result, and an instruction has at
     * least two words: a bigger bound is a damaged header */
    if (bound == 0 || bound > nwords)
        return fail(err, errlen, "SPIR-V header: id bound past what the module could define");
    uint32_t *words = malloc(nwords * sizeof(uint32_t));
    spv_scan s = {.is = calloc(bound, 1), .root = calloc(bound, sizeof(uint32_t)), .bound = (uint32_t)bound};
    if (!words || !s.is || !s.root)
        abort();
    for (size_t i = 0; i < nwords; i++)
        words[i] = (uint32_t)le(p + 4 * i, 4);
    bool ok = true;
    for (size_t i = 5; i < nwords;) {
        uint32_t count = words[i] >> 16;
        if (count == 0 || count > nwords - i) {
            ok = fail(err, errlen, "SPIR-V instruction runs past the module (damaged word count)");
            break;
        }
        spv_instruction(&s, words + i, count);
        i += count;
    }
    r->private_indexed = s.indexed;
    free(words), free(s.is), free(s.root);
    return ok;
}

bool kc_binres_read(const char *target, const void *data, size_t size, kc_binres *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    out->vgprs = out->sgprs = out->vgpr_spills = out->sgpr_spills = out->scratch_bytes = out->shared_bytes = -1;
    out->private_indexed = -1;
    bool ok = true;
    if (!strncmp(target, "gfx", 3))
        ok = read_amdgpu(data, size, out, err, errlen);
    else if (!strncmp(target, "sm_", 3))
        ok = read_ptx(data, size, out, err, errlen);
    else if (!strcmp(target, "spirv"))
        ok = read_spirv(data, size, out, err, errlen);
    else
        return true; /* host objects: the compiler's business */
    out->known = ok;
    return ok;
}

bool kc_binres_spills(const kc_binres *r)
{
    return r->known && (r->vgpr_spills > 0 || r->sgpr_spills > 0 || r->scratch_bytes > 0);
}
