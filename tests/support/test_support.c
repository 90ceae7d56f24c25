/*
 * test_support.c — the arena, containers, SHA-256 (against FIPS 180-4's
 * published vectors) and integer expressions.
 */
#include "kc_test.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sha256_vectors),
        cmocka_unit_test(map_grows_and_finds),
        cmocka_unit_test(iexpr_round_trip),
        cmocka_unit_test(iexpr_errors_not_wraps),
        cmocka_unit_test(iexpr_infix),
        cmocka_unit_test(atomic_write_replaces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
