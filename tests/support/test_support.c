/*
 * test_support.c — the arena, containers, SHA-256 (against FIPS 180-4's
 * published vectors) and integer expressions.
 */
#include "kc_test.h"

#include "kc_binres.h"
#include "kc_iexpr.h"
#include "kc_support.h"

static void sha256_vectors(void **state)
{
    (void)state;
    char hex[65];
    kc_sha256_hex("abc", 3, hex);
    assert_string_equal("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", hex);
    kc_sha256_hex("", 0, hex);
    assert_string_equal("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", hex);
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    kc_sha256_hex(two, strlen(two), hex);
    assert_string_equal("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1", hex);
    /* a million 'a's, fed in uneven pieces */
    kc_sha256 c;
    unsigned char d[32];
    kc_sha256_init(&c);
    char chunk[1001];
    memset(chunk, 'a', sizeof(chunk));
    for (int i = 0; i < 1000; i++)
        kc_sha256_update(&c, chunk, i % 2 ? 999 : 1001);
    kc_sha256_final(&c, d);
    assert_int_equal(0xcd, d[0]);
    assert_int_equal(0xc7, d[1]);
    assert_int_equal(0xd0, d[31]);
}

static void map_grows_and_finds(void **state)
{
    (void)state;
    kc_arena a;
    kc_arena_init(&a);
    kc_map m = {0};
    for (int i = 0; i < 5000; i++)
        kc_map_put(&a, &m, kc_arena_printf(&a, "k%d", i), (void *)(intptr_t)(i + 1));
    for (int i = 0; i < 5000; i += 7) {
        char k[16];
        snprintf(k, sizeof(k), "k%d", i);
        assert_int_equal(i + 1, (intptr_t)kc_map_get(&m, k));
    }
    assert_null(kc_map_get(&m, "absent"));
    kc_map_put(&a, &m, "k3", (void *)99);
    assert_int_equal(99, (intptr_t)kc_map_get(&m, "k3"));
    assert_int_equal(5000, m.len);
    kc_arena_free(&a);
}

static bool lookup(void *user, const char *name, int64_t *v)
{
    (void)user;
    if (strcmp(name, "n") == 0)
        return *v = 1000, true;
    if (strcmp(name, "WG") == 0)
        return *v = 64, true;
    return false;
}

static void iexpr_round_trip(void **state)
{
    (void)state;
    kc_arena a;
    kc_arena_init(&a);
    /* kc_cdiv(n, WG * 4) + (n % 3 ? 1 : 0) */
    kc_iexpr *e = kc_iexpr_make(&a, KC_IX_ADD,
                                kc_iexpr_make(&a, KC_IX_CDIV, kc_iexpr_name(&a, "n"),
                                              kc_iexpr_make(&a, KC_IX_MUL, kc_iexpr_name(&a, "WG"),
                                                            kc_iexpr_const(&a, 4), NULL),
                                              NULL),
                                kc_iexpr_make(&a, KC_IX_SELECT,
                                              kc_iexpr_make(&a, KC_IX_MOD, kc_iexpr_name(&a, "n"),
                                                            kc_iexpr_const(&a, 3), NULL),
                                              kc_iexpr_const(&a, 1), kc_iexpr_const(&a, 0)),
                                NULL);
    kc_buf post = {0}, in = {0};
    kc_iexpr_write_postfix(&post, e);
    kc_iexpr_write_infix(&in, e);
    assert_string_equal("n WG 4 * cdiv n 3 % 1 0 ?: +", post.data);
    assert_string_equal("kc_cdiv(n, WG * 4) + (n % 3 ? 1 : 0)", in.data);
    int64_t v1, v2;
    char err[64];
    assert_true(kc_iexpr_eval(e, lookup, NULL, &v1, err, sizeof(err)));
    assert_true(kc_iexpr_eval_postfix(post.data, lookup, NULL, &v2, err, sizeof(err)));
    assert_int_equal(5, v1); /* cdiv(1000, 256) = 4, 1000 % 3 = 1 -> 5 */
    assert_int_equal(v1, v2);
    kc_iexpr *back = kc_iexpr_parse_postfix(&a, post.data, err, sizeof(err));
    assert_non_null(back);
    kc_buf again = {0};
    kc_iexpr_write_postfix(&again, back);
    assert_string_equal(post.data, again.data);
    kc_buf_free(&post);
    kc_buf_free(&in);
    kc_buf_free(&again);
    kc_arena_free(&a);
}

static void iexpr_errors_not_wraps(void **state)
{
    (void)state;
    int64_t v;
    char err[64];
    assert_false(kc_iexpr_eval_postfix("n 0 /", lookup, NULL, &v, err, sizeof(err)));
    assert_string_equal("division by zero", err);
    assert_false(kc_iexpr_eval_postfix("9223372036854775807 1 +", lookup, NULL, &v, err, sizeof(err)));
    assert_false(kc_iexpr_eval_postfix("1 70 <<", lookup, NULL, &v, err, sizeof(err)));
    assert_false(kc_iexpr_eval_postfix("m 1 +", lookup, NULL, &v, err, sizeof(err)));
    assert_string_equal("'m' has no value", err);
    assert_false(kc_iexpr_eval_postfix("1 +", lookup, NULL, &v, err, sizeof(err)));
    assert_false(kc_iexpr_eval_postfix("1 2", lookup, NULL, &v, err, sizeof(err)));
    assert_false(kc_iexpr_eval_postfix("1 @", lookup, NULL, &v, err, sizeof(err)));
    assert_true(kc_iexpr_eval_postfix("-7 2 cdiv", lookup, NULL, &v, err, sizeof(err)));
    assert_int_equal(-3, v); /* ceiling of -3.5 */
    assert_true(kc_iexpr_eval_postfix("7 2 cdiv", lookup, NULL, &v, err, sizeof(err)));
    assert_int_equal(4, v);
}

static void iexpr_infix(void **state)
{
    (void)state;
    kc_arena a;
    kc_arena_init(&a);
    char err[128];
    static const struct {
        const char *text;
        int64_t value;
    } cases[] = {
        {"4 * n * 3", 12000}, {"n / 3 % 7", 4}, {"kc_cdiv(n, WG) + min(n, 7) - max(1, 2)", 21},
        {"1 << 4 | 1", 17}, {"n > 5 && WG < 64 || 1 == 2", 0}, {"n > 5 && WG <= 64 || 0", 1},
        {"-(3 - 5) * ~0", -2}, {"n ? 1 : 2", 1}, {"(n + 24) >> 3", 128}, {"0x10 & 0x11", 16},
    };
    for (size_t i = 0; i < KC_COUNT(cases); i++) {
        kc_iexpr *e = kc_iexpr_parse_infix(&a, cases[i].text, err, sizeof(err));
        assert_non_null(e);
        int64_t v;
        assert_true(kc_iexpr_eval(e, lookup, NULL, &v, err, sizeof(err)));
        if (v != cases[i].value)
            fail_msg("%s = %lld, expected %lld", cases[i].text, (long long)v, (long long)cases[i].value);
    }
    assert_null(kc_iexpr_parse_infix(&a, "n +", err, sizeof(err)));
    assert_null(kc_iexpr_parse_infix(&a, "pow(n, 2)", err, sizeof(err)));
    assert_null(kc_iexpr_parse_infix(&a, "n n", err, sizeof(err)));
    assert_null(kc_iexpr_parse_infix(&a, "((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((1", err, sizeof(err)));
    kc_arena_free(&a);
}

static void atomic_write_replaces(void **state)
{
    (void)state;
    char path[] = "/tmp/kc-test-atomic-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(0, kc_write_file_atomic(path, "hello", 5));
    size_t n;
    char *s = kc_read_file(path, &n);
    assert_int_equal(5, n);
    assert_string_equal("hello", s);
    free(s);
    remove(path);
}

/* ---- kc_binres: a variant's resources from its binary ---------------------------------------- */

typedef struct bytes {
    unsigned char b[1024];
    size_t n;
} bytes;

static void put(bytes *o, const void *p, size_t n)
{
    assert_true(o->n + n <= sizeof(o->b));
    memcpy(o->b + o->n, p, n);
    o->n += n;
}

static void put_le(bytes *o, unsigned long long v, int n)
{
    for (int i = 0; i < n; i++)
        o->b[o->n++] = (unsigned char)(v >> (8 * i));
}

static void mp_str(bytes *o, const char *s)
{
    unsigned char h = (unsigned char)(0xa0 | strlen(s));
    put(o, &h, 1);
    put(o, s, strlen(s));
}

/* A key and an unsigned 16-bit value (0xcd), as LLVM writes counts over 127 */
static void mp_key_u16(bytes *o, const char *k, unsigned v)
{
    mp_str(o, k);
    unsigned char u[3] = {0xcd, (unsigned char)(v >> 8), (unsigned char)v};
    put(o, u, 3);
}

/* An ELF64 with one SHT_NOTE section holding an AMDGPU metadata note of
 * one kernel, the way ld.lld lays it out in essence: the header, the
 * note, the section headers (a null one and the note's). */
static void amdgpu_object(bytes *elf)
{
    bytes md = {0};
    unsigned char h;
    h = 0x82, put(&md, &h, 1); /* a map of 2 */
    mp_str(&md, "amdhsa.version");
    unsigned char ver[3] = {0x92, 1, 2};
    put(&md, ver, 3);
    mp_str(&md, "amdhsa.kernels");
    h = 0x91, put(&md, &h, 1); /* an array of 1 */
    h = 0x88, put(&md, &h, 1); /* a map of 8 */
    mp_str(&md, ".name");
    mp_str(&md, "gemm");
    mp_str(&md, ".args"); /* skipped: an array of maps */
    unsigned char args[] = {0x91, 0x81, 0xa5, '.', 's', 'i', 'z', 'e', 0x08};
    put(&md, args, sizeof(args));
    mp_key_u16(&md, ".vgpr_count", 256);
    mp_key_u16(&md, ".sgpr_count", 107);
    mp_key_u16(&md, ".vgpr_spill_count", 68);
    mp_key_u16(&md, ".sgpr_spill_count", 335);
    mp_key_u16(&md, ".private_segment_fixed_size", 160);
    mp_key_u16(&md, ".group_segment_fixed_size", 16384);

    memset(elf, 0, sizeof(*elf));
    unsigned char ident[16] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
    put(elf, ident, 16);
    elf->n = 64;
    size_t note_off = elf->n;
    put_le(elf, 7, 4); /* namesz: "AMDGPU\0" */
    put_le(elf, md.n, 4);
    put_le(elf, 32, 4); /* NT_AMDGPU_METADATA */
    put(elf, "AMDGPU\0\0", 8);
    put(elf, md.b, md.n);
    while (elf->n % 8)
        elf->b[elf->n++] = 0;
    size_t note_size = elf->n - note_off, shoff = elf->n;
    elf->n += 64; /* the null section header */
    put_le(elf, 0, 4), put_le(elf, 7, 4), put_le(elf, 0, 8), put_le(elf, 0, 8); /* name, SHT_NOTE, flags, addr */
    put_le(elf, note_off, 8), put_le(elf, note_size, 8), put_le(elf, 0, 8), put_le(elf, 4, 8), put_le(elf, 0, 8);
    for (int i = 0; i < 8; i++) /* e_shoff at 0x28, e_shentsize at 0x3a, e_shnum at 0x3c */
        elf->b[0x28 + i] = (unsigned char)(shoff >> (8 * i));
    elf->b[0x3a] = 64, elf->b[0x3c] = 2;
}

static void binres_amdgpu_note(void **state)
{
    (void)state;
    bytes elf;
    amdgpu_object(&elf);
    kc_binres r;
    char err[160];
    assert_true(kc_binres_read("gfx1100", elf.b, elf.n, &r, err, sizeof(err)));
    assert_true(r.known);
    assert_int_equal(256, r.vgprs);
    assert_int_equal(107, r.sgprs);
    assert_int_equal(68, r.vgpr_spills);
    assert_int_equal(335, r.sgpr_spills);
    assert_int_equal(160, r.scratch_bytes);
    assert_int_equal(16384, r.shared_bytes);
    assert_true(kc_binres_spills(&r));
}

/* Damaged code objects: every cut and every flipped bit is an answer or
 * an error, never a read past the bytes (the sanitizer build watches). */
static void binres_damaged(void **state)
{
    (void)state;
    bytes elf;
    amdgpu_object(&elf);
    kc_binres r;
    char err[160];
    for (size_t n = 0; n < elf.n; n++) {
        unsigned char *cut = malloc(n ? n : 1); /* exactly n bytes: ASan sees one past */
        memcpy(cut, elf.b, n);
        bool ok = kc_binres_read("gfx1100", cut, n, &r, err, sizeof(err));
        assert_true(ok == false || n >= 64); /* the note and headers are needed */
        free(cut);
    }
    assert_false(kc_binres_read("gfx1100", elf.b, 200, &r, err, sizeof(err)));
    for (size_t i = 0; i < elf.n; i++)
        for (int bit = 0; bit < 8; bit++) {
            unsigned char *bad = malloc(elf.n);
            memcpy(bad, elf.b, elf.n);
            bad[i] ^= (unsigned char)(1 << bit);
            (void)kc_binres_read("gfx1100", bad, elf.n, &r, err, sizeof(err));
            free(bad);
        }
    assert_false(kc_binres_read("gfx1100", "PTX?", 4, &r, err, sizeof(err)));
    assert_non_null(strstr(err, "not an AMDGPU code object"));
}

static void binres_ptx_and_spirv(void **state)
{
    (void)state;
    const char *ptx = "//\n.version 8.5\n.target sm_90\n.visible .entry k(\n)\n{\n"
                      "\t.local .align 8 .b8 \t__local_depot0[192];\n"
                      "\t.shared .align 16 .b8 As[4100];\n\t.shared .align 16 .b32 red[64];\n"
                      "\t.reg .f32 %f<120>;\n}\n";
    kc_binres r;
    char err[160];
    assert_true(kc_binres_read("sm_90", ptx, strlen(ptx), &r, err, sizeof(err)));
    assert_true(r.known);
    assert_int_equal(192, r.scratch_bytes);
    assert_int_equal(4112 + 256, r.shared_bytes); /* red starts at the next 16 bytes, as ptxas puts it */
    assert_int_equal(-1, r.vgprs); /* ptxas decides */
    assert_true(kc_binres_spills(&r));
    assert_false(kc_binres_read("sm_90", "\x7f" "ELF", 4, &r, err, sizeof(err)));
    assert_false(kc_binres_read("spirv", "\x03\x02\x23\x07", 4, &r, err, sizeof(err))); /* a header cut short */
    assert_true(kc_binres_read("host", "", 0, &r, err, sizeof(err)));
    assert_false(r.known);
}

/* A SPIR-V module of words: a header of bound ids, then instructions
 * (opcode, operands...), each a count in words and the words. */
enum { SPV_MAX = 128 };
typedef struct spv {
    uint32_t w[SPV_MAX];
    int n;
} spv;

static void spv_op(spv *m, uint32_t op, int nops, const uint32_t *ops)
{
    m->w[m->n++] = (uint32_t)(nops + 1) << 16 | op;
    for (int i = 0; i < nops; i++)
        m->w[m->n++] = ops[i];
}

#define SPV_OP(m, op, ...) spv_op(m, op, (int)(sizeof((uint32_t[]){__VA_ARGS__}) / 4), (uint32_t[]){__VA_ARGS__})

/* float a[4] (Function storage) indexed by constant 1 and, when dynamic,
 * by id 20 (no constant: a value of the program); a second array b only
 * by constants, through a chain of two access chains. */
static spv spv_module(bool dynamic)
{
    spv m = {.w = {0x07230203, 0x00010300, 0, 32, 0}, .n = 5};
    SPV_OP(&m, 22, 1, 32);         /* %1 = OpTypeFloat 32 */
    SPV_OP(&m, 21, 2, 32, 0);      /* %2 = OpTypeInt 32 0 */
    SPV_OP(&m, 43, 2, 3, 4);       /* %3 = OpConstant %2 4 */
    SPV_OP(&m, 43, 2, 4, 1);       /* %4 = OpConstant %2 1 */
    SPV_OP(&m, 28, 5, 1, 3);       /* %5 = OpTypeArray %1 %3 */
    SPV_OP(&m, 28, 6, 5, 3);       /* %6 = OpTypeArray %5 %3 */
    SPV_OP(&m, 32, 7, 7, 5);       /* %7 = OpTypePointer Function %5 */
    SPV_OP(&m, 32, 8, 7, 6);       /* %8 = OpTypePointer Function %6 */
    SPV_OP(&m, 32, 9, 7, 1);       /* %9 = OpTypePointer Function %1 */
    SPV_OP(&m, 59, 7, 10, 7);      /* %10 = OpVariable %7 Function: a */
    SPV_OP(&m, 59, 8, 11, 7);      /* %11 = OpVariable %8 Function: b */
    SPV_OP(&m, 65, 9, 12, 10, 4);  /* a[1] */
    SPV_OP(&m, 65, 7, 13, 11, 4);  /* b[1] */
    SPV_OP(&m, 65, 9, 14, 13, 4);  /* b[1][1] */
    if (dynamic) {
        SPV_OP(&m, 65, 9, 15, 10, 20); /* a[%20] */
        SPV_OP(&m, 65, 9, 16, 10, 20); /* again: one array, counted once */
    }
    return m;
}

static void binres_spirv_private_arrays(void **state)
{
    (void)state;
    kc_binres r;
    char err[160];
    spv m = spv_module(false);
    assert_true(kc_binres_read("spirv", m.w, (size_t)m.n * 4, &r, err, sizeof(err)));
    assert_true(r.known);
    assert_int_equal(0, r.private_indexed);
    assert_false(kc_binres_spills(&r)); /* not a spill: the tuner measures it */
    m = spv_module(true);
    assert_true(kc_binres_read("spirv", m.w, (size_t)m.n * 4, &r, err, sizeof(err)));
    assert_int_equal(1, r.private_indexed);
    assert_false(kc_binres_spills(&r));
    /* b[%20][1] through the chain counts b */
    SPV_OP(&m, 65, 9, 17, 11, 20, 4);
    assert_true(kc_binres_read("spirv", m.w, (size_t)m.n * 4, &r, err, sizeof(err)));
    assert_int_equal(2, r.private_indexed);

    /* damaged: an error, never a read past the words */
    spv bad = m;
    bad.w[3] = 1000; /* more ids than the module could define */
    assert_false(kc_binres_read("spirv", bad.w, (size_t)bad.n * 4, &r, err, sizeof(err)));
    ASSERT_CONTAINS(err, "id bound");
    bad = m;
    bad.w[5] = 0x00ff0016; /* the first instruction runs past the end */
    assert_false(kc_binres_read("spirv", bad.w, (size_t)bad.n * 4, &r, err, sizeof(err)));
    ASSERT_CONTAINS(err, "runs past");
    bad.w[5] = 0x00000016; /* a count of 0 */
    assert_false(kc_binres_read("spirv", bad.w, (size_t)bad.n * 4, &r, err, sizeof(err)));
    assert_false(kc_binres_read("spirv", m.w, (size_t)m.n * 4 - 2, &r, err, sizeof(err))); /* not whole words */
    for (int n = 0; n < m.n * 4; n += 4) /* every cut: a whole module or an error */
        (void)kc_binres_read("spirv", m.w, (size_t)n, &r, err, sizeof(err));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sha256_vectors),
        cmocka_unit_test(map_grows_and_finds),
        cmocka_unit_test(iexpr_round_trip),
        cmocka_unit_test(iexpr_errors_not_wraps),
        cmocka_unit_test(iexpr_infix),
        cmocka_unit_test(atomic_write_replaces),
        cmocka_unit_test(binres_amdgpu_note),
        cmocka_unit_test(binres_damaged),
        cmocka_unit_test(binres_ptx_and_spirv),
        cmocka_unit_test(binres_spirv_private_arrays),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
