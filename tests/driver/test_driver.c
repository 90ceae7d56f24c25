/*
 * test_driver.c — kc build's bundles: atomic writes, the constraints a
 * kernel carries, checksums, kc.yaml errors at their line, kc info and
 * kc export.
 */
#include "kc_test.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kc_build.h"

static char dir[] = "/tmp/kc-driver-test-XXXXXX";

static int build(const char *input, const char *out, FILE *log)
{
    const char *inputs[] = {input};
    kc_build_options o = {.inputs = inputs, .ninputs = 1, .output = out, .log = log, .quiet = true};
    return kc_build(&o);
}

static char *query(const char *bundle, const char *sql)
{
    sqlite3 *db;
    sqlite3_open_v2(bundle, &db, SQLITE_OPEN_READONLY, NULL);
    sqlite3_stmt *st;
    kc_buf out = {0};
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK)
        while (sqlite3_step(st) == SQLITE_ROW)
            kc_buf_printf(&out, "%s|%s\n", sqlite3_column_text(st, 0), sqlite3_column_text(st, 1));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return kc_buf_take(&out);
}

static void constraints_name_only_the_kernels_tunables(void **state)
{
    (void)state;
    char out[256];
    snprintf(out, sizeof(out), "%s/c.kcb", dir);
    assert_int_equal(0, build(KC_SRC("tests/driver/constraint_foreign_tunable.kc"), out, stderr));
    char *rows = query(out, "SELECT k.name, c.expr FROM constraints c JOIN kernels k ON k.id = c.kernel_id "
                            "ORDER BY k.name");
    assert_string_equal("both_ab|A B * 256 <=\nonly_a|A 2 * 256 <=\n", rows);
    free(rows);
}

static void checksums_match_binaries(void **state)
{
    (void)state;
    char out[256];
    snprintf(out, sizeof(out), "%s/s.kcb", dir);
    assert_int_equal(0, build(KC_SRC("tests/ir/golden/saxpy.kc"), out, stderr));
    sqlite3 *db;
    sqlite3_open_v2(out, &db, SQLITE_OPEN_READONLY, NULL);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "SELECT binary, checksum FROM variants", -1, &st, NULL);
    int n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        char sum[65];
        kc_sha256_hex(sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0), sum);
        assert_string_equal(sum, (const char *)sqlite3_column_text(st, 1));
        n++;
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    assert_int_equal(1, n);
}

static void failed_build_keeps_the_old_bundle(void **state)
{
    (void)state;
    char out[256], bad[256];
    snprintf(out, sizeof(out), "%s/keep.kcb", dir);
    snprintf(bad, sizeof(bad), "%s/bad.kc", dir);
    assert_int_equal(0, build(KC_SRC("tests/ir/golden/saxpy.kc"), out, stderr));
    struct stat before, after;
    stat(out, &before);
    FILE *f = fopen(bad, "w");
    fputs("KC_KERNEL void broken(\n", f);
    fclose(f);
    FILE *log = tmpfile();
    assert_int_equal(1, build(bad, out, log));
    stat(out, &after);
    assert_true(before.st_ino == after.st_ino && before.st_size == after.st_size);
    char *rows = query(out, "SELECT name, default_variant FROM kernels");
    assert_string_equal("saxpy|WG=128,TM=4\n", rows);
    free(rows);
    /* and no temporary files are left beside it */
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "ls %s | grep -c tmp", dir);
    FILE *p = popen(cmd, "r");
    int tmp = -1;
    assert_int_equal(1, fscanf(p, "%d", &tmp));
    pclose(p);
    assert_int_equal(0, tmp);
    fclose(log);
}

static void yaml_errors_are_located(void **state)
{
    (void)state;
    char pkg[256], path[300];
    snprintf(pkg, sizeof(pkg), "%s/pkg", dir);
    mkdir(pkg, 0755);
    snprintf(path, sizeof(path), "%s/saxpy.kc", pkg);
    size_t n;
    char *src = kc_read_file(KC_SRC("tests/ir/golden/saxpy.kc"), &n);
    kc_write_file_atomic(path, src, n);
    free(src);
    snprintf(path, sizeof(path), "%s/kc.yaml", pkg);
    const char *yaml = "package: demo\nkernels:\n  saxpy:\n    shapes: [{n: 100}, {m: 3}]\n    init: {x: wobbly}\n"
                       "    tolerance: loose\n  gone:\n    shapes: [{n: 1}]\n";
    kc_write_file_atomic(path, yaml, strlen(yaml));
    char *text = NULL;
    size_t len = 0;
    FILE *log = open_memstream(&text, &len);
    assert_int_equal(1, build(pkg, NULL, log));
    fclose(log);
    ASSERT_CONTAINS(text, "kc.yaml:6:16: error: tolerance: must be a non-negative number");
    ASSERT_CONTAINS(text, "names 'm', which is not one of its integer parameters");
    ASSERT_CONTAINS(text, "shape 'm=3' of 'saxpy' does not give n: a shape names every integer parameter");
    ASSERT_CONTAINS(text, "'wobbly' is not a known initialisation");
    ASSERT_CONTAINS(text, "kc.yaml:7:3: error: kc.yaml describes kernel 'gone'");
    free(text);
}

/* A package of saxpy with the given kc.yaml; returns kc build's log. */
static char *build_with_yaml(const char *name, const char *yaml, int *status)
{
    char pkg[256], path[300];
    snprintf(pkg, sizeof(pkg), "%s/%s", dir, name);
    mkdir(pkg, 0755);
    snprintf(path, sizeof(path), "%s/saxpy.kc", pkg);
    size_t n;
    char *src = kc_read_file(KC_SRC("tests/ir/golden/saxpy.kc"), &n);
    kc_write_file_atomic(path, src, n);
    free(src);
    snprintf(path, sizeof(path), "%s/kc.yaml", pkg);
    if (yaml)
        kc_write_file_atomic(path, yaml, strlen(yaml));
    else
        assert_int_equal(0, mkdir(path, 0755)); /* a folder where kc.yaml belongs */
    char *text = NULL;
    size_t len = 0;
    FILE *log = open_memstream(&text, &len);
    *status = build(pkg, NULL, log);
    fclose(log);
    return text;
}

/* Each of these once built with exit 0 (and a bundle libkcrt refused, a
 * setting silently lost, or an untuned bundle shipped). */
static void yaml_mistakes_are_refused(void **state)
{
    (void)state;
    static const struct {
        const char *yaml, *message;
    } cases[] = {
        {"kernels:\n  saxpy:\n    shapes: [{n: 100}]\n    bytes: 12 * q\n",
         "kc.yaml:4:12: error: bytes: names 'q', which is not one of the integer parameters of 'saxpy'"},
        {"kernels:\n  saxpy:\n    shapes: [{n: 100}]\n    flops: n / 0\n",
         "kc.yaml:4:12: error: flops: cannot be evaluated at shape 'n=100'"},
        {"kernels:\n  saxpy:\n    shapes: [{n: 100}]\n  saxpy:\n    shapes: [{n: 5}]\n",
         "kc.yaml:4:3: error: 'saxpy' is given twice; the first is at line 2"},
        {"kernels:\n  saxpy:\n    shapes: [{n: 100}]\n    shapes: [{n: 5}]\n",
         "kc.yaml:4:5: error: 'shapes' is given twice; the first is at line 3"},
        {"kernels:\n  saxpy:\n    shape: [{n: 100}]\n", "kc.yaml:3:5: error: unknown key 'shape' for kernel 'saxpy'"},
        {"kernels:\n  saxpy:\n    shapes: [{n: 100}]\n---\nkernels: {}\n",
         "kc.yaml:5:1: error: kc.yaml holds a second document"},
        {"kernels:\n  saxpy:\n    defaults: {gpu: {WG: 64}}\n",
         "kc.yaml:3:16: error: defaults: 'gpu' is not a device type (cpu, integrated, discrete, virtual, other)"},
        {"kernels:\n  saxpy:\n    defaults: {cpu: {WG: 100}}\n",
         "kc.yaml:3:21: error: defaults: cpu of 'saxpy': 100 is not one of the values of WG"},
        {"kernels:\n  saxpy:\n    defaults: {cpu: {BM: 1}}\n",
         "kc.yaml:3:21: error: defaults: cpu of 'saxpy': 'BM' is not a tunable of kernel 'saxpy'"},
        {"kernels:\n  saxpy:\n    defaults: {cpu: 64}\n",
         "kc.yaml:3:21: error: defaults: cpu: must be a mapping of tunables to values, like {WG: 128}"},
        {NULL, "error: cannot read"},
    };
    for (size_t i = 0; i < KC_COUNT(cases); i++) {
        char name[32];
        snprintf(name, sizeof(name), "yaml%zu", i);
        int status;
        char *text = build_with_yaml(name, cases[i].yaml, &status);
        assert_int_equal(1, status);
        ASSERT_CONTAINS(text, cases[i].message);
        free(text);
    }
}

/* kc.yaml's default per device type is built beside the default variant
 * and named in the meta, its tunables in declaration order. */
static void type_defaults_are_built(void **state)
{
    (void)state;
    int status;
    char *text = build_with_yaml("typedef", "kernels:\n  saxpy:\n    defaults: {cpu: {TM: 1, WG: 64}, "
                                            "integrated: {WG: 128}}\n", &status);
    assert_int_equal(0, status);
    free(text);
    const char *path = "typedef.kcb"; /* the package's name, in the working directory */
    sqlite3 *db;
    assert_int_equal(SQLITE_OK, sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL));
    sqlite3_stmt *st;
    assert_int_equal(SQLITE_OK, sqlite3_prepare_v2(db, "SELECT group_concat(key || '=' || value, ' ') FROM (SELECT * "
                                                   "FROM meta WHERE key LIKE 'default.%' ORDER BY key)", -1, &st, NULL));
    assert_int_equal(SQLITE_ROW, sqlite3_step(st));
    assert_string_equal("default.cpu.saxpy=WG=64,TM=1 default.integrated.saxpy=WG=128,TM=4",
                        (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    assert_int_equal(SQLITE_OK, sqlite3_prepare_v2(db, "SELECT group_concat(tunables, ' ') FROM (SELECT tunables FROM "
                                                   "variants ORDER BY tunables)", -1, &st, NULL));
    assert_int_equal(SQLITE_ROW, sqlite3_step(st)); /* the integrated one is the default itself: built once */
    assert_string_equal("WG=128,TM=4 WG=64,TM=1", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
    unlink(path);
}

/* Bundles are files to ship: the mode follows the umask like any file the
 * user writes (mkstemp's 0600 once made every bundle unreadable to others). */
static void bundles_follow_the_umask(void **state)
{
    (void)state;
    char out[256];
    snprintf(out, sizeof(out), "%s/mode.kcb", dir);
    mode_t old = umask(022);
    assert_int_equal(0, build(KC_SRC("tests/ir/golden/saxpy.kc"), out, stderr));
    struct stat st;
    assert_int_equal(0, stat(out, &st));
    assert_int_equal(0644, st.st_mode & 0777);
    umask(027);
    assert_int_equal(0, build(KC_SRC("tests/ir/golden/saxpy.kc"), out, stderr));
    assert_int_equal(0, stat(out, &st));
    assert_int_equal(0640, st.st_mode & 0777);
    umask(old);
}

/* kc export writes only under -o: a kernel name from a hostile bundle
 * cannot climb out of it. */
static void export_stays_in_its_folder(void **state)
{
    (void)state;
    char kcb[256], out[256];
    snprintf(kcb, sizeof(kcb), "%s/pwn.kcb", dir);
    snprintf(out, sizeof(out), "%s/export", dir);
    assert_int_equal(0, build(KC_SRC("tests/ir/golden/saxpy.kc"), kcb, stderr));
    sqlite3 *db;
    assert_int_equal(SQLITE_OK, sqlite3_open(kcb, &db));
    assert_int_equal(SQLITE_OK, sqlite3_exec(db, "UPDATE kernels SET name = '../pwned'", NULL, NULL, NULL));
    sqlite3_close(db);
    char err[512];
    kc_bundle *b = kc_bundle_open(kcb, false, err, sizeof(err));
    if (!b) { /* refused when opened: as good */
        ASSERT_CONTAINS(err, "pwned");
        return;
    }
    assert_false(kc_bundle_export(b, out, NULL, err, sizeof(err)));
    ASSERT_CONTAINS(err, "'../pwned' cannot be part of a file name");
    kc_bundle_close(b);
    char outside[300];
    snprintf(outside, sizeof(outside), "%s/pwned.saxpy.default.spirv.spv", dir);
    assert_int_not_equal(0, access(outside, F_OK));
    snprintf(outside, sizeof(outside), "%s/pwned.default.spirv.spv", dir);
    assert_int_not_equal(0, access(outside, F_OK));
}

/* kc check runs each kernel's default variant through kir: it once passed
 * what kc build then refused (a KC_UNROLL over a runtime bound), nested
 * unrolled loops that grew kc emit past 5 GB, and a file with CR-only
 * line endings as "ok (0 kernels)". */
static void check_refuses_what_build_would(void **state)
{
    (void)state;
    char *out;
    assert_int_equal(1, kc_test_sh(&out, "%s/tools/kc check %s", KC_BINARY_DIR,
                                   KC_SRC("tests/dsl/corpus/bad/unroll_nonconst.kc")));
    ASSERT_CONTAINS(out, "unroll_nonconst.kc:9:15: error: KC_UNROLL cannot unroll this loop: its trip count is not");
    free(out);
    char path[300];
    snprintf(path, sizeof(path), "%s/nested.kc", dir);
    const char *nested = "#include <kc.h>\nKC_KERNEL KC_WORKGROUP(64, 1, 1) KC_GRID(1, 1, 1)\n"
                         "void k(int n, float y[n]) {\n  float a = 0.0f;\n"
                         "  KC_UNROLL for (int i = 0; i < 4096; i++)\n"
                         "    KC_UNROLL for (int j = 0; j < 4096; j++) a += (float)(i ^ j);\n  y[0] = a;\n}\n";
    kc_write_file_atomic(path, nested, strlen(nested));
    assert_int_equal(1, kc_test_sh(&out, "%s/tools/kc check %s", KC_BINARY_DIR, path));
    ASSERT_CONTAINS(out, "nested.kc:6:15: error: KC_UNROLL cannot unroll this loop: 4096 copies");
    ASSERT_CONTAINS(out, "(nested unrolled loops multiply)");
    free(out);
    snprintf(path, sizeof(path), "%s/cr.kc", dir);
    const char *cr = "#include <kc.h>\r// a comment\rKC_KERNEL KC_WORKGROUP(64, 1, 1) KC_GRID(1, 1, 1)\r"
                     "void k(int n, float y[n]) {\r  y[0] = 1.0f;\r}\r";
    kc_write_file_atomic(path, cr, strlen(cr));
    assert_int_equal(0, kc_test_sh(&out, "%s/tools/kc check %s", KC_BINARY_DIR, path));
    ASSERT_CONTAINS(out, "cr.kc: ok (1 kernel, 0 tunables, 1 variant)");
    free(out);
}

/* In a log (not a terminal), --all-variants says how far it got kernel by
 * kernel: a CI log once showed nothing for 28 minutes. */
static void all_variants_progress_in_a_log(void **state)
{
    (void)state;
    char out[256];
    snprintf(out, sizeof(out), "%s/all.kcb", dir);
    const char *inputs[] = {KC_SRC("tests/ir/golden/saxpy.kc")};
    char *text = NULL;
    size_t len = 0;
    FILE *log = open_memstream(&text, &len);
    kc_build_options o = {.inputs = inputs, .ninputs = 1, .output = out, .log = log, .all_variants = true};
    assert_int_equal(0, kc_build(&o));
    fclose(log);
    ASSERT_CONTAINS(text, "kc build: saxpy: ");
    ASSERT_CONTAINS(text, " variants compiled (");
    ASSERT_CONTAINS(text, "kc build: wrote ");
    assert_null(strchr(text, '\r')); /* no terminal redraws in a log */
    free(text);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(constraints_name_only_the_kernels_tunables),
        cmocka_unit_test(checksums_match_binaries),
        cmocka_unit_test(failed_build_keeps_the_old_bundle),
        cmocka_unit_test(yaml_errors_are_located),
        cmocka_unit_test(yaml_mistakes_are_refused),
        cmocka_unit_test(type_defaults_are_built),
        cmocka_unit_test(bundles_follow_the_umask),
        cmocka_unit_test(export_stays_in_its_folder),
        cmocka_unit_test(check_refuses_what_build_would),
        cmocka_unit_test(all_variants_progress_in_a_log),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
