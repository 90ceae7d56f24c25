/*
 * test_variants.c — a kernel's search space: the product of the tunables
 * it uses (through helpers too), filtered by KC_REQUIRE, in a fixed order.
 */
#include "kc_test.h"

#include "kc_dsl.h"
#include "kc_ir.h"

static const char *src =
    "KC_TUNE(WG, 64, 32, 64, 128, 256)\n"
    "KC_TUNE(TM, 2, 1, 2, 4)\n"
    "KC_TUNE(UNUSED, 3, 3, 5)\n"
    "KC_TUNE(H, 1, 1, 2)\n"
    "KC_REQUIRE(WG * TM <= 256)\n"
    "KC_REQUIRE(UNUSED != 5 || WG > 1000)\n" /* mentions WG: applies, UNUSED at its default */
    "static int helper(int x) { return x * H; }\n"
    "KC_KERNEL KC_WORKGROUP(WG, 1, 1) KC_GRID(kc_cdiv(n, WG * TM), 1, 1)\n"
    "void k(int n, float y[n]) { y[kc_global_id(0)] = (float)helper(TM); }\n"
    "KC_KERNEL KC_WORKGROUP(64, 1, 1) KC_GRID(1, 1, 1)\n"
    "void plain(float y[1]) { y[0] = 1.0f; }\n";

typedef struct collect {
    kc_arena *a;
    char lines[64][64];
    int n;
} collect;

static void add(void *user, const kc_ir_binding *b)
{
    collect *c = user;
    snprintf(c->lines[c->n++], 64, "%s", kc_ir_binding_text(c->a, b));
}

static kc_program *parse(kc_ctx *c)
{
    kc_ctx_init(c, stderr);
    kc_program *p = kc_dsl_parse_text(c, "space.kc", src, strlen(src));
    assert_non_null(p);
    return p;
}

static void space_with_constraints(void **state)
{
    (void)state;
    kc_ctx c;
    kc_program *p = parse(&c);
    const kc_func *k = kc_program_func(p, "k");
    const kc_tunable *ts[8];
    assert_int_equal(3, kc_ir_kernel_tunables(p, k, ts, 8)); /* WG, TM, and H through the helper */
    assert_string_equal("H", ts[2]->name);
    collect col = {&c.arena, {{0}}, 0};
    /* 4 * 3 * 2 = 24 points; WG*TM <= 256 removes (128,4), (256,2), (256,4) */
    assert_int_equal(18, kc_ir_each_variant(&c.arena, p, k, add, &col));
    assert_int_equal(18, col.n);
    assert_string_equal("WG=32,TM=1,H=1", col.lines[0]);
    assert_string_equal("WG=32,TM=1,H=2", col.lines[1]);
    assert_string_equal("WG=256,TM=1,H=2", col.lines[17]);
    kc_ir_binding def = kc_ir_default_binding(&c.arena, p, k);
    assert_string_equal("WG=64,TM=2,H=1", kc_ir_binding_text(&c.arena, &def));
    const kc_func *plain = kc_program_func(p, "plain");
    assert_int_equal(1, kc_ir_each_variant(&c.arena, p, plain, NULL, NULL));
    kc_ctx_free(&c);
}

static void parse_bindings(void **state)
{
    (void)state;
    kc_ctx c;
    kc_program *p = parse(&c);
    const kc_func *k = kc_program_func(p, "k");
    kc_ir_binding b;
    char err[256];
    assert_true(kc_ir_parse_binding(&c.arena, p, k, "TM=4", &b, err, sizeof(err)));
    assert_string_equal("WG=64,TM=4,H=1", kc_ir_binding_text(&c.arena, &b));
    assert_false(kc_ir_parse_binding(&c.arena, p, k, "TM=3", &b, err, sizeof(err)));
    assert_string_equal("3 is not one of the values of TM", err);
    assert_false(kc_ir_parse_binding(&c.arena, p, k, "XX=3", &b, err, sizeof(err)));
    ASSERT_CONTAINS(err, "not a tunable");
    assert_false(kc_ir_parse_binding(&c.arena, p, k, "WG=256,TM=4", &b, err, sizeof(err)));
    ASSERT_CONTAINS(err, "KC_REQUIRE");
    assert_false(kc_ir_parse_binding(&c.arena, p, k, "WG", &b, err, sizeof(err)));
    kc_ctx_free(&c);
}

static void every_variant_compiles(void **state)
{
    (void)state;
    kc_ctx c;
    kc_program *p = parse(&c);
    const kc_func *k = kc_program_func(p, "k");
    collect col = {&c.arena, {{0}}, 0};
    kc_ir_each_variant(&c.arena, p, k, add, &col);
    for (int i = 0; i < col.n; i++) {
        kc_ir_binding b;
        char err[128];
        assert_true(kc_ir_parse_binding(&c.arena, p, k, col.lines[i], &b, err, sizeof(err)));
        kc_ir_module *m = kc_ir_compile(&c.arena, &c.diag, p, k, &b, NULL);
        assert_non_null(m);
        assert_int_equal(b.values[0], m->kernel->wg_size[0]);
    }
    kc_ctx_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(space_with_constraints),
        cmocka_unit_test(parse_bindings),
        cmocka_unit_test(every_variant_compiles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
