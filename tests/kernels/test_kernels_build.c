/*
 * test_kernels_build.c — the shipped kernel package builds whole: every
 * variant of every kernel in kernels/ compiles to SPIR-V that passes the
 * validator (the bundle kc build --all-variants made holds each one of
 * every kernel's space), every kernel has
 * shapes, bytes and flops in the bundle whose expressions evaluate at
 * every shape, and clang reads every kernel file as C with <kc.h>.
 */
#include "kc_test.h"

#include <dirent.h>
#include <sqlite3.h>

#include "kc_build.h"

/* KD_BUNDLE: kernels/ built with every variant by `kc build --all-variants`
 * (kernels_all.kcb, tests/kernels/CMakeLists.txt), which validates each
 * SPIR-V module and fails on a kernel that does not compile. */
#define BUNDLE KD_BUNDLE

typedef struct counted {
    const char *name;
    long variants;
} counted;

/* The size of each kernel's space, from the package itself. */
static int spaces(counted *out, int max)
{
    kc_package p;
    const char *inputs[] = {KC_SRC("kernels")};
    kc_package_options o = {inputs, 1, NULL, 0};
    assert_true(kc_package_load(&p, &o, stderr));
    int n = 0;
    kc_arena a;
    kc_arena_init(&a);
    for (int f = 0; f < p.files.len; f++) {
        const kc_pkg_file *file = p.files.items[f];
        for (int i = 0; i < file->prog->funcs.len; i++) {
            const kc_func *k = file->prog->funcs.items[i];
            if (k->is_kernel && n < max) {
                out[n].name = strdup(k->name);
                out[n++].variants = kc_ir_each_variant(&a, file->prog, k, NULL, NULL);
            }
        }
    }
    kc_arena_free(&a);
    kc_package_free(&p);
    return n;
}

static void every_variant_compiles(void **state)
{
    (void)state;
    counted k[32];
    int n = spaces(k, 32);
    assert_int_equal(27, n); /* saxpy gemm bmm gemv softmax layernorm group_norm conv1d conv_transpose1d elementwise pad1d interp1d stft
                                attention resample sine_source yin conv2d gru_step gemm_f16 conv1d_f16 attention_f16
                                attention_decode attention_decode_f16 linear linear_f16 gemv_f16 */
    sqlite3 *db;
    assert_int_equal(SQLITE_OK, sqlite3_open_v2(BUNDLE, &db, SQLITE_OPEN_READONLY, NULL));
    for (int i = 0; i < n; i++) {
        sqlite3_stmt *st;
        assert_int_equal(
            SQLITE_OK,
            sqlite3_prepare_v2(db,
                               "SELECT count(*) FROM variants v JOIN kernels k ON v.kernel_id = k.id "
                               "WHERE k.name = ?1 AND v.target = 'spirv'",
                               -1, &st, NULL));
        sqlite3_bind_text(st, 1, k[i].name, -1, SQLITE_STATIC);
        assert_int_equal(SQLITE_ROW, sqlite3_step(st));
        long built = (long)sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        if (built != k[i].variants)
            fail_msg("%s: %ld of its %ld variants are in the bundle", k[i].name, built, k[i].variants);
        /* a space of a few (stft and yin have only their workgroup size to tune) to a few thousand */
        assert_true(k[i].variants >= 3 && k[i].variants <= 5000);
        free((char *)k[i].name);
    }
    sqlite3_close(db);
}

/* Looks names up in "M=140,N=768" and then in "BM=64,BN=64". */
typedef struct names {
    const char *lists[2];
} names;

static bool lookup(void *user, const char *name, int64_t *value)
{
    names *n = user;
    size_t len = strlen(name);
    for (int l = 0; l < 2; l++)
        for (const char *p = n->lists[l]; p && *p;) {
            if (strncmp(p, name, len) == 0 && p[len] == '=') {
                *value = strtoll(p + len + 1, NULL, 10);
                return true;
            }
            p = strchr(p, ',');
            p = p ? p + 1 : NULL;
        }
    return false;
}

/* bytes, flops, the grid and every buffer extent evaluate at every shape. */
static void every_kernel_has_shapes_bytes_flops(void **state)
{
    (void)state;
    sqlite3 *db;
    assert_int_equal(SQLITE_OK, sqlite3_open_v2(BUNDLE, &db, SQLITE_OPEN_READONLY, NULL));
    sqlite3_stmt *st;
    assert_int_equal(
        SQLITE_OK,
        sqlite3_prepare_v2(db,
                           "SELECT k.name, k.bytes, k.flops, k.grid, k.default_variant, k.tolerance, "
                           "s.shape, (SELECT group_concat(extent, ';') FROM params p "
                           "WHERE p.kernel_id = k.id AND p.kind = 'buffer') "
                           "FROM kernels k LEFT JOIN shapes s ON s.kernel_id = k.id",
                           -1, &st, NULL));
    int rows = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        rows++;
        const char *name = (const char *)sqlite3_column_text(st, 0);
        const char *bytes = (const char *)sqlite3_column_text(st, 1);
        const char *flops = (const char *)sqlite3_column_text(st, 2);
        char grid[512], extents[2048];
        snprintf(grid, sizeof(grid), "%s", (const char *)sqlite3_column_text(st, 3));
        const char *def = (const char *)sqlite3_column_text(st, 4);
        double tolerance = sqlite3_column_double(st, 5);
        const char *shape = (const char *)sqlite3_column_text(st, 6);
        snprintf(extents, sizeof(extents), "%s", (const char *)sqlite3_column_text(st, 7));
        if (!shape || !bytes || !*bytes || !flops || !*flops)
            fail_msg("%s: kc.yaml gives it no shapes, bytes or flops", name);
        assert_true(tolerance > 0 && tolerance <= 1e-4);
        names n = {{shape, def}};
        char err[256];
        int64_t v;
        const char *what[] = {bytes, flops};
        for (int i = 0; i < 2; i++) /* flops may be 0: a copy (pad1d) does no arithmetic */
            if (!kc_iexpr_eval_postfix(what[i], lookup, &n, &v, err, sizeof(err)) || v < (i == 0))
                fail_msg("%s at %s: '%s' does not give a %s count: %s", name, shape, what[i],
                         i == 0 ? "positive" : "non-negative", err);
        char *save = NULL;
        for (char *e = strtok_r(grid, ";", &save); e; e = strtok_r(NULL, ";", &save))
            if (!kc_iexpr_eval_postfix(e, lookup, &n, &v, err, sizeof(err)) || v <= 0)
                fail_msg("%s at %s: grid '%s' does not evaluate to a positive count: %s", name, shape, e,
                         err);
        for (char *e = strtok_r(extents, ";", &save); e; e = strtok_r(NULL, ";", &save))
            if (!kc_iexpr_eval_postfix(e, lookup, &n, &v, err, sizeof(err)) || v <= 0)
                fail_msg("%s at %s: extent '%s' does not evaluate to a positive count: %s", name, shape, e,
                         err);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    assert_true(rows >= 7);
}

/* Every kernel file reads as C to clang with <kc.h> (editors, clangd),
 * warning-free but for the include/ helpers a file does not use. */
static void clang_accepts_every_kernel_file(void **state)
{
    (void)state;
    if (system("command -v clang-19 >/dev/null 2>&1") != 0)
        skip();
    DIR *d = opendir(KC_SRC("kernels"));
    assert_non_null(d);
    int n = 0, bad = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".kc") != 0)
            continue;
        char cmd[8192];
        snprintf(cmd, sizeof(cmd),
                 "clang-19 -fsyntax-only -x c -std=c11 -Wall -Wextra -Wno-unused-function -Werror -I %s "
                 "%s/%s 2>&1",
                 KC_SRC("dsl/include"), KC_SRC("kernels"), e->d_name);
        FILE *p = popen(cmd, "r");
        assert_non_null(p);
        char out[4096];
        size_t got = fread(out, 1, sizeof(out) - 1, p);
        out[got] = 0;
        if (pclose(p) != 0) {
            fprintf(stderr, "clang-19 rejects kernels/%s:\n%s\n", e->d_name, out);
            bad++;
        }
        n++;
    }
    closedir(d);
    assert_int_equal(27, n); /* the .kc files of kernels/ */
    assert_int_equal(0, bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_variant_compiles),
        cmocka_unit_test(every_kernel_has_shapes_bytes_flops),
        cmocka_unit_test(clang_accepts_every_kernel_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
