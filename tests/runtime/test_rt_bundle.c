/*
 * test_rt_bundle.c — bundles that are not what they should be, and the
 * tuned table. Every damaged, foreign or edited file must load or fail with
 * a message, never crash: a fuzz pass truncates and flips bytes of a real
 * bundle in many places; edits with SQL break one thing each. The variant
 * choice of DESIGN.md §6 is checked with tuned rows the tests insert
 * themselves (exact shape, nearest in log space, device family, default).
 */
#include "rt_test.h"

#include <pthread.h>
#include <sqlite3.h>
#include <time.h>
#include <unistd.h>
#if !defined(_WIN32)
#include <sys/resource.h>
#endif

/* support/sha256.c, which libkcrt carries: a variant's checksum */
void kc_sha256_hex(const void *data, size_t n, char hex[65]);
/* runtime/fill.c: kc.yaml's init, for kc run, tune and bench */
void kcrt_fill(const kcrt_param_info *p, void *buffer, size_t n, uint64_t *seed);

static char tmpdir[] = "/tmp/kcrt_bundle_XXXXXX";

static char *tmp_path(const char *name)
{
    static char path[4][512];
    static int next;
    char *p = path[next++ % 4];
    snprintf(p, 512, "%s/%s", tmpdir, name);
    return p;
}

static void *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    void *p = malloc(*n + 1);
    assert_int_equal(*n, fread(p, 1, *n, f));
    fclose(f);
    return p;
}

static void spit(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(n, fwrite(p, 1, n, f));
    fclose(f);
}

/* A copy of the test bundle with SQL applied; returns its path. */
static const char *edited(const char *name, const char *sql)
{
    size_t n;
    void *bytes = slurp(RT_BUNDLE, &n);
    const char *path = tmp_path(name);
    spit(path, bytes, n);
    free(bytes);
    sqlite3 *db;
    assert_int_equal(SQLITE_OK, sqlite3_open(path, &db));
    char *err = NULL; /* damage the schema's CHECKs would stop, too */
    sqlite3_exec(db, "PRAGMA ignore_check_constraints = ON", NULL, NULL, NULL);
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
        fail_msg("%s: %s", sql, err);
    sqlite3_close(db);
    return path;
}

/* The test bundle edited by sql, loaded (the file is gone after). */
static kcrt_bundle *load_edited(const char *name, const char *sql)
{
    const char *path = edited(name, sql);
    kcrt_bundle *b;
    ASSERT_OK(kcrt_bundle_load(rt_ctx, path, &b));
    unlink(path);
    return b;
}

/* Loads path; it must fail with status and a message holding each needle. */
static void refused(const char *path, kcrt_status status, const char *needle)
{
    kcrt_bundle *b = (kcrt_bundle *)1;
    ASSERT_STATUS(status, kcrt_bundle_load(rt_ctx, path, &b));
    assert_null(b);
    ASSERT_CONTAINS(kcrt_error(rt_ctx), needle);
}

/* ---- foreign files ---------------------------------------------------------------------------- */

static void test_files_that_are_not_bundles(void **state)
{
    (void)state;
    refused(tmp_path("missing.kcb"), KCRT_ERROR_IO, "cannot open bundle");
    ASSERT_CONTAINS(kcrt_error(rt_ctx), "No such file or directory");
    spit(tmp_path("empty.kcb"), "", 0);
    refused(tmp_path("empty.kcb"), KCRT_ERROR_BAD_BUNDLE, "is not a kc bundle: the file is empty");
    spit(tmp_path("text.kcb"), "#include <kc.h>\nKC_KERNEL void k(void) {}\n", 40);
    refused(tmp_path("text.kcb"), KCRT_ERROR_BAD_BUNDLE, "is not a kc bundle: not a SQLite database");
    spit(tmp_path("short.kcb"), "SQLite", 6);
    refused(tmp_path("short.kcb"), KCRT_ERROR_BAD_BUNDLE, "not a SQLite database");
    refused(tmpdir, KCRT_ERROR_IO, "Is a directory");
}

static void test_sqlite_files_of_other_applications(void **state)
{
    (void)state;
    sqlite3 *db;
    const char *other = tmp_path("other.db");
    assert_int_equal(SQLITE_OK, sqlite3_open(other, &db));
    assert_int_equal(
        SQLITE_OK,
        sqlite3_exec(db, "CREATE TABLE notes(t TEXT); INSERT INTO notes VALUES('hi');", NULL, NULL, NULL));
    sqlite3_close(db);
    refused(other, KCRT_ERROR_BAD_BUNDLE,
            "is not a kc bundle: its application_id is 0x00000000, not 0x6b636231");
    const char *bare = tmp_path("bare.kcb");
    assert_int_equal(SQLITE_OK, sqlite3_open(bare, &db));
    assert_int_equal(SQLITE_OK, sqlite3_exec(db,
                                             "PRAGMA application_id = 1801675313; PRAGMA user_version = 1;"
                                             "CREATE TABLE x(a);",
                                             NULL, NULL, NULL));
    sqlite3_close(db);
    refused(bare, KCRT_ERROR_BAD_BUNDLE, "table meta, row 0: cannot read it: no such table: meta");
}

static void test_newer_format_is_refused(void **state)
{
    (void)state;
    refused(edited("newer.kcb", "PRAGMA user_version = 2"), KCRT_ERROR_BAD_BUNDLE,
            "has bundle format 2, newer than this libkcrt reads (1): update kc, or rebuild the bundle");
    refused(edited("zero.kcb", "PRAGMA user_version = 0"), KCRT_ERROR_BAD_BUNDLE,
            "has no bundle format version");
}

/* ---- rows that break one rule each --------------------------------------------------------------- */

static void test_damaged_rows(void **state)
{
    (void)state;
    static const struct {
        const char *sql, *message;
    } cases[] = {
        {"UPDATE params SET type = 'float3' WHERE name = 'x'", "parameter 'x' has unknown type 'float3'"},
        {"UPDATE params SET kind = 'image' WHERE name = 'y'",
         "parameter kind 'image' is neither buffer nor scalar"},
        {"UPDATE params SET type = 'float4' WHERE kind = 'scalar' AND name = 'a'",
         "scalar parameter 'a' has type 'float4', which a scalar cannot have"},
        {"UPDATE params SET idx = 7 WHERE name = 'a' AND kernel_id = (SELECT id FROM kernels WHERE name = "
         "'saxpy')",
         "table params, row 2: parameter index 2 where 1 was expected"},
        {"UPDATE params SET extent = 'n +' WHERE name = 'x'",
         "extent 'n +' is malformed expression: missing operand"},
        {"UPDATE params SET extent = 'n q *' WHERE name = 'x'",
         "names something that is not an integer parameter or "
         "tunable: 'q' has no value"},
        {"UPDATE params SET extent = 'n a *' WHERE name = 'x'",
         "'a' has no value"}, /* a float is no extent */
        {"UPDATE params SET readonly = 'yes'", "column 'readonly' is not an integer"},
        {"UPDATE kernels SET grid = 'n 64 cdiv;1' WHERE name = 'saxpy'",
         "grid 'n 64 cdiv;1' does not have 3 parts"},
        {"UPDATE kernels SET grid = 'n 64 cdiv;1;WG' WHERE name = 'saxpy'", "grid 'WG' names something"},
        {"UPDATE kernels SET wg = 'n;1;1' WHERE name = 'saxpy'",
         "workgroup size 'n' names something that is not a "
         "tunable"},
        {"UPDATE kernels SET name = 'two words' WHERE name = 'saxpy'",
         "kernel name 'two words' is not a name"},
        {"UPDATE kernels SET tolerance = 'small'", "column 'tolerance' is not a number"},
        {"UPDATE kernels SET init = 'x=gaussian' WHERE name = 'saxpy'",
         "init of 'x' is 'gaussian' (expected uniform, normal, positive, ones, index or twiddle)"},
        {"UPDATE kernels SET init = 'n=ones' WHERE name = 'saxpy'",
         "init names 'n', which is not a buffer parameter"},
        {"UPDATE kernels SET default_variant = 'SX_QQ=1' WHERE name = 'saxpy'",
         "default variant 'SX_QQ=1' of 'saxpy': kernel 'saxpy' has no tunable 'SX_QQ'"},
        {"UPDATE tunables SET vals = '32,64' WHERE name = 'SX_TM'",
         "tunable 'SX_TM' has default 2, not among its "
         "values '32,64'"},
        {"UPDATE tunables SET vals = '1,x,2' WHERE name = 'SX_TM'", "tunable 'SX_TM' has bad values '1,x,2'"},
        {"UPDATE constraints SET expr = '* *'", "constraint '* *' is malformed"},
        {"UPDATE shapes SET shape = 'n:1000'", "shape 'n:1000': 'n:1000' is not NAME=VALUE"},
        {"UPDATE variants SET binary = x'000102030405060708090a0b0c0d0e0f10111213' WHERE tunables = "
         "'SX_WG=32,SX_TM=1'",
         "variant 'SX_WG=32,SX_TM=1' of 'saxpy': its binary is not SPIR-V (magic 0x03020100)"},
        {"UPDATE variants SET binary = substr(binary, 1, 37) WHERE tunables = 'SX_WG=32,SX_TM=1'",
         "its SPIR-V is 37 bytes, not a whole number of words"},
        {"UPDATE variants SET binary = substr(binary, 1, 32) WHERE tunables = 'SX_WG=32,SX_TM=1'",
         "its SPIR-V is damaged: an instruction at word"},
        {"UPDATE variants SET binary = x'03022307' WHERE tunables = 'SX_WG=32,SX_TM=1'",
         "its SPIR-V is 4 bytes, shorter than a module header"},
        {"UPDATE variants SET binary = 'text' WHERE tunables = 'SX_WG=32,SX_TM=1'",
         "column 'binary' is not a blob"},
        {"UPDATE variants SET checksum = 'b0a7' WHERE tunables = 'SX_WG=32,SX_TM=1'",
         "the binary of variant 'SX_WG=32,SX_TM=1' (spirv) is damaged: its checksum does not match"},
        {"UPDATE variants SET args = '@0;@1' WHERE tunables = 'SX_WG=32,SX_TM=1'",
         "args '@0;@1' does not have 4 "
         "parts"},
        {"UPDATE variants SET args = '0:4;4:4;@0;@0' WHERE tunables = 'SX_WG=32,SX_TM=1'",
         "args: binding 0 of 'y' is repeated"},
        {"UPDATE variants SET args = '0:4;200:4;@0;@1' WHERE tunables = 'SX_WG=32,SX_TM=1'",
         "args: '200:4' for parameter 'a' is not @BINDING or OFFSET:SIZE within 8 bytes"},
        {"UPDATE variants SET args = '@0;4:4;@1;@2' WHERE tunables = 'SX_WG=32,SX_TM=1'",
         "args: scalar parameter 'n' is given a binding"},
        {"UPDATE variants SET wg_x = 0 WHERE tunables = 'SX_WG=32,SX_TM=1'",
         "column 'wg_x' is 0, outside 1..65536"},
        {"UPDATE variants SET tunables = 'SX_WG=32,BOGUS=1' WHERE tunables = 'SX_WG=32,SX_TM=1'",
         "variant 'SX_WG=32,BOGUS=1': kernel 'saxpy' has no tunable 'BOGUS'"},
        {"INSERT INTO tuned VALUES('k', 'f', 'vulkan', 999, 'n=1', 'SX_WG=32', 1.0)",
         "kernel id 999 does not exist"},
        {"INSERT INTO tuned VALUES('k', 'f', 'vulkan', 1, 'n=1', 'SX_WG=32', 'fast')",
         "column 'time_ns' is not a "
         "number"},
        {"DROP TABLE tuned", "table tuned, row 0: cannot read it: no such table: tuned"},
        {"UPDATE variants SET wg_x = 64 WHERE tunables = 'SX_WG=32,SX_TM=1' AND target = 'spirv'",
         "variant 'SX_WG=32,SX_TM=1' of 'saxpy': its SPIR-V's LocalSize is 32x1x1, but its row says the "
         "workgroup is 64x1x1"},
        {"UPDATE variants SET args = '0:4;0:4;@0;@1' WHERE tunables = 'SX_WG=32,SX_TM=1'",
         "args: 'n' (0:4) and 'a' (0:4) overlap"},
        {"INSERT INTO tuned SELECT 'k', 'f', 'vulkan', id, 'n=1', 'SX_WG=32', -5 FROM kernels LIMIT 1",
         "time_ns -5 is not a time a launch can take"},
        {"INSERT INTO tuned SELECT 'k', 'f', 'vulkan', id, 'n=1', 'SX_WG=32', 0 FROM kernels LIMIT 1",
         "time_ns 0 is not a time a launch can take"},
        {"DELETE FROM kernels", "holds no kernels"},
        {"INSERT INTO meta VALUES('x', x'00')", "column 'value' is not text"},
        /* what parses but is not what kc build wrote: the digest catches it */
        {"UPDATE kernels SET grid = replace(grid, 'n SX_WG', 'n 2 / SX_WG') WHERE name = 'saxpy'",
         "kernel 'saxpy': its workgroup, grid or parameters differ from what kc build wrote"},
        {"UPDATE params SET extent = 'n 2 /' WHERE name = 'x' AND kernel_id = (SELECT id FROM kernels WHERE name = "
         "'saxpy')",
         "kernel 'saxpy': its workgroup, grid or parameters differ"},
        {"UPDATE params SET readonly = 1 - readonly WHERE name = 'y' AND kernel_id = (SELECT id FROM kernels WHERE "
         "name = 'saxpy')",
         "kernel 'saxpy': its workgroup, grid or parameters differ"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        char name[32];
        snprintf(name, sizeof(name), "damaged%zu.kcb", i);
        const char *path = edited(name, cases[i].sql);
        kcrt_bundle *b = NULL;
        kcrt_status s = kcrt_bundle_load(rt_ctx, path, &b);
        if (s != KCRT_ERROR_BAD_BUNDLE || !strstr(kcrt_error(rt_ctx), cases[i].message))
            fail_msg("after %s:\n  expected BAD_BUNDLE with \"%s\"\n  got %s: %s", cases[i].sql,
                     cases[i].message, kcrt_status_name(s), kcrt_error(rt_ctx));
        ASSERT_CONTAINS(kcrt_error(rt_ctx), path);
        unlink(path);
    }
}

/* Variants a device cannot run load, and are refused when used. */
/* Gives saxpy's SPIR-V variant `tunables` the workgroup width x, in its
 * module's LocalSize and its row, with a checksum to match: a variant
 * built for a larger workgroup than the device has. */
static void set_workgroup_x(const char *path, const char *tunables, uint32_t x)
{
    sqlite3 *db;
    assert_int_equal(SQLITE_OK, sqlite3_open(path, &db));
    const char *where = "tunables = ?1 AND target = 'spirv' AND kernel_id = (SELECT id FROM kernels WHERE name = "
                        "'saxpy')";
    char *sql = sqlite3_mprintf("SELECT binary FROM variants WHERE %s", where);
    sqlite3_stmt *st;
    assert_int_equal(SQLITE_OK, sqlite3_prepare_v2(db, sql, -1, &st, NULL));
    sqlite3_free(sql);
    sqlite3_bind_text(st, 1, tunables, -1, SQLITE_STATIC);
    assert_int_equal(SQLITE_ROW, sqlite3_step(st));
    size_t n = (size_t)sqlite3_column_bytes(st, 0);
    uint32_t *w = malloc(n);
    memcpy(w, sqlite3_column_blob(st, 0), n);
    sqlite3_finalize(st);
    bool patched = false;
    for (size_t i = 5; i < n / 4; i += w[i] >> 16)
        if ((w[i] & 0xffff) == 16 && w[i] >> 16 == 6 && w[i + 2] == 17) /* OpExecutionMode LocalSize */
            w[i + 3] = x, patched = true;
    assert_true(patched);
    char sum[65];
    kc_sha256_hex(w, n, sum);
    sql = sqlite3_mprintf("UPDATE variants SET binary = ?2, checksum = ?3, wg_x = ?4 WHERE %s", where);
    assert_int_equal(SQLITE_OK, sqlite3_prepare_v2(db, sql, -1, &st, NULL));
    sqlite3_free(sql);
    sqlite3_bind_text(st, 1, tunables, -1, SQLITE_STATIC);
    sqlite3_bind_blob(st, 2, w, (int)n, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, sum, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 4, (int)x);
    assert_int_equal(SQLITE_DONE, sqlite3_step(st));
    sqlite3_finalize(st);
    /* the same variant for a native target (KC_RT_TEST_TARGETS), which a
     * CUDA or HIP run loads instead: its row's workgroup */
    sql = sqlite3_mprintf("UPDATE variants SET wg_x = ?2 WHERE tunables = ?1 AND target != 'spirv' AND kernel_id = "
                          "(SELECT id FROM kernels WHERE name = 'saxpy')");
    assert_int_equal(SQLITE_OK, sqlite3_prepare_v2(db, sql, -1, &st, NULL));
    sqlite3_free(sql);
    sqlite3_bind_text(st, 1, tunables, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, (int)x);
    assert_int_equal(SQLITE_DONE, sqlite3_step(st));
    sqlite3_finalize(st);
    sqlite3_close(db);
    free(w);
}

static void test_variants_the_device_cannot_run(void **state)
{
    (void)state;
    const char *path = edited(
        "limits.kcb",
        "UPDATE variants SET shared_bytes = 1048576 WHERE tunables = 'SX_WG=32,SX_TM=2';"
        "UPDATE variants SET features = 'subgroups,tensor_cores' WHERE tunables = 'SX_WG=32,SX_TM=4';"
        "UPDATE variants SET spilled = 0 WHERE kernel_id = (SELECT id FROM kernels WHERE name = 'spill');"
        "DELETE FROM variants WHERE target != 'spirv' AND kernel_id = (SELECT id FROM kernels WHERE name = "
        "'matmul');" /* a bundle built for more targets (KC_RT_TEST_TARGETS) */
        "UPDATE variants SET target = 'gfx1100' WHERE kernel_id = (SELECT id FROM kernels WHERE name = "
        "'matmul');");
    set_workgroup_x(path, "SX_WG=32,SX_TM=1", 4096);
    kcrt_bundle *b;
    kcrt_kernel *k;
    ASSERT_OK(kcrt_bundle_load(rt_ctx, path, &b));
    ASSERT_STATUS(KCRT_ERROR_UNSUPPORTED, kcrt_kernel_get_variant(b, "saxpy", "SX_WG=32,SX_TM=1", &k));
    ASSERT_CONTAINS(kcrt_error(rt_ctx), "kernel 'saxpy' variant 'SX_WG=32,SX_TM=1' cannot run on '");
    ASSERT_CONTAINS(kcrt_error(rt_ctx), "its workgroup size 4096 in x exceeds the device's");
    ASSERT_STATUS(KCRT_ERROR_UNSUPPORTED, kcrt_kernel_get_variant(b, "saxpy", "SX_WG=32,SX_TM=2", &k));
    ASSERT_CONTAINS(kcrt_error(rt_ctx), "it uses 1048576 bytes of shared memory, more than the device's");
    ASSERT_STATUS(KCRT_ERROR_UNSUPPORTED, kcrt_kernel_get_variant(b, "saxpy", "SX_WG=32,SX_TM=4", &k));
    ASSERT_CONTAINS(kcrt_error(rt_ctx),
                    "it needs 'tensor_cores', a feature this libkcrt does not know (update kc)");
    if (kcrt_device_info_get(rt_ctx)->max_push_bytes < 160) {
        ASSERT_STATUS(KCRT_ERROR_UNSUPPORTED, kcrt_kernel_get_variant(b, "spill", "", &k));
        ASSERT_CONTAINS(kcrt_error(rt_ctx), "its 160 bytes of scalar arguments exceed the device's");
        ASSERT_CONTAINS(kcrt_error(rt_ctx), "and the compiler did not spill them to a buffer");
    }
    ASSERT_STATUS(KCRT_ERROR_NO_VARIANT, kcrt_kernel_get(b, "matmul", &k));
    if (rt_on_vulkan())
        ASSERT_CONTAINS(kcrt_error(rt_ctx),
                        "kernel 'matmul' has no default variant (TILE=8) for the vulkan backend: the "
                        "bundle has gfx1100 (build it with -t spirv for Vulkan)");
    else { /* run through CUDA or HIP (KC_RT_TEST_BACKEND): the device's own target */
        char want[256];
        snprintf(want, sizeof(want), "for the %s backend: the bundle has gfx1100 (build it with -t %s",
                 kcrt_backend_name(rt_ctx), kcrt_device_info_get(rt_ctx)->target);
        ASSERT_CONTAINS(kcrt_error(rt_ctx), want);
    }
    ASSERT_OK(kcrt_kernel_get_variant(b, "saxpy", "SX_WG=64,SX_TM=2", &k)); /* the others are fine */
    kcrt_bundle_free(b);
}

/* ---- fuzz: truncations and flipped bytes ------------------------------------------------------------ */

/* Loads one damaged image: success or BAD_BUNDLE with a message; a bundle
 * that loads is walked (every kernel, its introspection). */
static int load_damaged(const char *path, const void *bytes, size_t n)
{
    spit(path, bytes, n);
    kcrt_bundle *b = NULL;
    kcrt_status s = kcrt_bundle_load(rt_ctx, path, &b);
    if (s == KCRT_OK) {
        for (int i = 0; i < kcrt_bundle_kernel_count(b); i++) {
            const kcrt_kernel_info *ki = kcrt_bundle_kernel_info(b, i);
            kcrt_kernel *k;
            kcrt_status g = kcrt_kernel_get(b, ki->name, &k);
            if (g != KCRT_OK && g != KCRT_ERROR_NO_VARIANT && g != KCRT_ERROR_NO_KERNEL)
                fail_msg("kcrt_kernel_get(%s) on a damaged bundle: %s", ki->name, kcrt_status_name(g));
            for (int p = 0; p < ki->nparams; p++)
                assert_non_null(ki->params[p].name);
        }
        kcrt_bundle_free(b);
        return 1;
    }
    if (s != KCRT_ERROR_BAD_BUNDLE)
        fail_msg("a damaged bundle gave %s: %s", kcrt_status_name(s), kcrt_error(rt_ctx));
    assert_true(strlen(kcrt_error(rt_ctx)) > 10);
    return 0;
}

static void test_fuzz_truncated_and_flipped(void **state)
{
    (void)state;
    size_t n;
    unsigned char *orig = slurp(KC_BINARY_DIR "/tests/runtime/rt_default.kcb", &n), *img = malloc(n);
    const char *path = tmp_path("fuzz.kcb");
    int loaded = 0, tries = 0;
    size_t cuts[] = {1, 15, 16, 17, 99, 100, 101, 512, 1024, 4095, 4096, 4097, n / 3, n / 2, n - 4096, n - 1};
    for (size_t i = 0; i < sizeof(cuts) / sizeof(*cuts); i++, tries++)
        loaded += load_damaged(path, orig, cuts[i] < n ? cuts[i] : n - 1);
    for (size_t at = 0; at < n; at += 4096 / 4) /* the page headers and more */
        loaded += load_damaged(path, orig, at), tries++;
    rt_rng r = {77};
    for (int i = 0; i < 250; i++, tries++) { /* flips: one to four bytes, anywhere */
        memcpy(img, orig, n);
        int flips = 1 + (int)(rt_next(&r) % 4);
        for (int f = 0; f < flips; f++)
            img[rt_next(&r) % n] ^= (unsigned char)(1 + rt_next(&r) % 255);
        loaded += load_damaged(path, img, n);
    }
    for (size_t at = 0; at < 100; at++, tries++) { /* every byte of the file header */
        memcpy(img, orig, n);
        img[at] ^= 0x5a;
        loaded += load_damaged(path, img, n);
    }
    print_message("fuzz: %d damaged images, %d still loaded (their damage did not matter)\n", tries, loaded);
    free(orig);
    free(img);
    unlink(path);
}

/* ---- the tuned table ------------------------------------------------------------------------------ */

/* A copy of the bundle with tuned rows: each "who|shape|variant|time" where
 * who is "me" (this device), "kin" (another device of its family),
 * "stranger" (another family) or "kin-hip" (the family on another backend:
 * HIP, or Vulkan where the tests run on HIP). */
static kcrt_bundle *with_tuned(const char *kernel, const char *const *rows, int n)
{
    const kcrt_device_info *d = kcrt_device_info_get(rt_ctx);
    const char *other_backend = strcmp(d->backend, "hip") ? "hip" : "vulkan";
    char *sql = calloc(1, 65536);
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        char who[16], shape[128], variant[128];
        double t;
        assert_int_equal(4, sscanf(rows[i], "%15[^|]|%127[^|]|%127[^|]|%lf", who, shape, variant, &t));
        bool me = strcmp(who, "me") == 0, kin = strncmp(who, "kin", 3) == 0;
        const char *other = strcmp(who, "kin") == 0       ? "vulkan:10005:0001:a sibling:1.0"
                            : strcmp(who, "kin2") == 0    ? "vulkan:10005:0002:another sibling:1.0"
                            : strcmp(who, "kin-hip") == 0 ? "hip:10005:0001:a sibling:1.0"
                                                          : "vulkan:1002:744c:AMD Radeon RX 7900 XTX:2.0.279";
        char *key = sqlite3_mprintf("%q", me ? d->key : other);
        char *fam = sqlite3_mprintf("%q", me || kin ? d->family : "amd:navi3x");
        at += (size_t)snprintf(
            sql + at, 65536 - at,
            "INSERT INTO tuned VALUES('%s', '%s', '%s', (SELECT id FROM kernels WHERE name = '%s'), "
            "'%s', '%s', %g);",
            key, fam, strcmp(who, "kin-hip") == 0 ? other_backend : d->backend, kernel, shape, variant, t);
        sqlite3_free(key);
        sqlite3_free(fam);
    }
    kcrt_bundle *b = load_edited("tuned.kcb", sql);
    free(sql);
    return b;
}

/* The variant saxpy(n) would launch with, and why. */
static const char *choice(kcrt_bundle *b, int n, const char **why)
{
    kcrt_kernel *k;
    ASSERT_OK(kcrt_kernel_get(b, "saxpy", &k));
    static kcrt_buffer *x;
    if (!x)
        x = rt_buf(4);
    kcrt_arg args[] = {KCRT_I32(n), KCRT_F32(1), KCRT_BUF(x), KCRT_BUF(x)};
    const char *v;
    ASSERT_OK(kcrt_kernel_choose(k, args, 4, &v, why));
    return v;
}

static void test_tuned_none_gives_the_default(void **state)
{
    (void)state;
    const char *why;
    kcrt_bundle *b = with_tuned("saxpy", NULL, 0);
    assert_string_equal("SX_WG=64,SX_TM=2", choice(b, 1000, &why));
    ASSERT_CONTAINS(why, "the default variant");
    kcrt_bundle_free(b);
}

/* The bundle with kc.yaml's default for a device type (meta
 * default.TYPE.saxpy, as kc build writes it) set to variant, then sql. */
static kcrt_bundle *with_type_default(const char *type, const char *variant, const char *sql)
{
    char *edit = sqlite3_mprintf("INSERT INTO meta VALUES('default.%q.saxpy', '%q'); %s", type, variant, sql);
    kcrt_bundle *b = load_edited("typedef.kcb", edit);
    sqlite3_free(edit);
    return b;
}

/* Untuned, a device of the type gets its default; another type's default
 * changes nothing; a tuned row of the device still wins. */
static void test_type_default_where_untuned(void **state)
{
    (void)state;
    const char *why, *type = kcrt_device_info_get(rt_ctx)->type_name;
    const char *other = strcmp(type, "discrete") ? "discrete" : "integrated";
    kcrt_bundle *b = with_type_default(type, "SX_WG=32,SX_TM=4", "");
    assert_string_equal("SX_WG=32,SX_TM=4", choice(b, 1000, &why));
    ASSERT_CONTAINS(why, "the default for a");
    ASSERT_CONTAINS(why, type);
    kcrt_bundle_free(b);
    b = with_type_default(other, "SX_WG=32,SX_TM=4", "");
    assert_string_equal("SX_WG=64,SX_TM=2", choice(b, 1000, &why));
    ASSERT_CONTAINS(why, "the default variant");
    kcrt_bundle_free(b);
    const kcrt_device_info *d = kcrt_device_info_get(rt_ctx);
    char *row = sqlite3_mprintf("INSERT INTO tuned VALUES('%q', '%q', '%q', (SELECT id FROM kernels WHERE name = "
                                "'saxpy'), 'n=1000', 'SX_WG=128,SX_TM=1', 100);",
                                d->key, d->family, d->backend);
    b = with_type_default(type, "SX_WG=32,SX_TM=4", row);
    sqlite3_free(row);
    assert_string_equal("SX_WG=128,SX_TM=1", choice(b, 1000, &why));
    ASSERT_CONTAINS(why, "tuned for this device");
    kcrt_bundle_free(b);
}

/* A default naming what the kernel lacks is damage; one whose variant the
 * bundle does not hold is passed over, as a tuned row's would be. */
static void test_type_default_damaged(void **state)
{
    (void)state;
    refused(edited("typedef-bad.kcb", "INSERT INTO meta VALUES('default.cpu.saxpy', 'SX_XX=7')"),
            KCRT_ERROR_BAD_BUNDLE, "default.cpu.saxpy 'SX_XX=7'");
    const char *why;
    kcrt_bundle *b = with_type_default(kcrt_device_info_get(rt_ctx)->type_name, "SX_WG=7", "");
    assert_string_equal("SX_WG=64,SX_TM=2", choice(b, 1000, &why));
    ASSERT_CONTAINS(why, "the default variant");
    kcrt_bundle_free(b);
}

static void test_tuned_exact_shape_for_this_device(void **state)
{
    (void)state;
    const char *rows[] = {"me|n=1000|SX_WG=32,SX_TM=4|500", "me|n=100000|SX_WG=128,SX_TM=4|9000",
                          "kin|n=1000|SX_WG=128,SX_TM=1|100"};
    const char *why;
    kcrt_bundle *b = with_tuned("saxpy", rows, 3);
    assert_string_equal("SX_WG=32,SX_TM=4", choice(b, 1000, &why)); /* this device's row beats the family's */
    ASSERT_CONTAINS(why, "tuned for this device at exactly this shape (500 ns)");
    assert_string_equal("SX_WG=128,SX_TM=4", choice(b, 100000, &why));
    assert_string_equal("SX_WG=32,SX_TM=4",
                        choice(b, 1000, &why)); /* the remembered choice follows the shape */
    /* and a launch runs the chosen variant */
    kcrt_kernel *k;
    ASSERT_OK(kcrt_kernel_get(b, "saxpy", &k));
    float x[1000], y[1000];
    rt_rng r = {5};
    rt_fill_f32(x, 1000, &r, -1, 1);
    rt_fill_f32(y, 1000, &r, -1, 1);
    kcrt_buffer *bx = rt_buf_from(x, sizeof(x)), *by = rt_buf_from(y, sizeof(y));
    kcrt_arg args[] = {KCRT_I32(1000), KCRT_F32(2), KCRT_BUF(bx), KCRT_BUF(by)};
    ASSERT_OK(kcrt_launch(k, args, 4));
    float *got = rt_read(by);
    for (int i = 0; i < 1000; i++)
        assert_true(fabsf(got[i] - (2 * x[i] + y[i])) <= 1e-6f);
    free(got);
    kcrt_buffer_free(bx), kcrt_buffer_free(by);
    kcrt_bundle_free(b);
}

static void test_tuned_nearest_shape_in_log_space(void **state)
{
    (void)state;
    const char *rows[] = {"me|n=1000|SX_WG=32,SX_TM=1|10", "me|n=100000|SX_WG=128,SX_TM=4|900",
                          "me|n=10000|SX_WG=64,SX_TM=4|90"};
    const char *why;
    kcrt_bundle *b = with_tuned("saxpy", rows, 3);
    assert_string_equal("SX_WG=32,SX_TM=1", choice(b, 2000, &why)); /* log2 distance 1 vs 2.3 */
    ASSERT_CONTAINS(why, "tuned for this device at the nearest shape n=1000 (log2 distance 0.999");
    assert_string_equal("SX_WG=64,SX_TM=4", choice(b, 4000, &why));   /* 1.3 from 10000, 2 from 1000 */
    assert_string_equal("SX_WG=128,SX_TM=4", choice(b, 50000, &why)); /* linear distance would say 10000 */
    assert_string_equal("SX_WG=128,SX_TM=4", choice(b, 100000000, &why));
    assert_string_equal("SX_WG=32,SX_TM=1", choice(b, 1, &why));
    kcrt_bundle_free(b);
}

static void test_tuned_nearest_in_several_dimensions(void **state)
{
    (void)state;
    const char *rows[] = {"me|m=64,n=64,k=64|TILE=4|10", "me|k=1024,m=1024,n=1024|TILE=16|10",
                          "me|m=16,n=4096,k=16|TILE=8|10"};
    kcrt_bundle *b = with_tuned("matmul", rows, 3);
    kcrt_kernel *k;
    ASSERT_OK(kcrt_kernel_get(b, "matmul", &k));
    kcrt_buffer *x = rt_buf(4);
    const char *v, *why;
    kcrt_arg a1[] = {KCRT_I32(900), KCRT_I32(1000), KCRT_I32(1100), KCRT_BUF(x), KCRT_BUF(x), KCRT_BUF(x)};
    ASSERT_OK(kcrt_kernel_choose(k, a1, 6, &v, &why));
    assert_string_equal("TILE=16", v);
    kcrt_arg a2[] = {KCRT_I32(20), KCRT_I32(3000), KCRT_I32(20), KCRT_BUF(x), KCRT_BUF(x), KCRT_BUF(x)};
    ASSERT_OK(kcrt_kernel_choose(k, a2, 6, &v, &why));
    assert_string_equal("TILE=8", v);
    kcrt_arg a3[] = {KCRT_I32(64), KCRT_I32(64), KCRT_I32(64), KCRT_BUF(x), KCRT_BUF(x), KCRT_BUF(x)};
    ASSERT_OK(kcrt_kernel_choose(k, a3, 6, &v, &why));
    assert_string_equal("TILE=4", v);
    ASSERT_CONTAINS(why, "exactly this shape");
    kcrt_buffer_free(x);
    kcrt_bundle_free(b);
}

static void test_tuned_device_family_fallback(void **state)
{
    (void)state;
    const char *rows[] = {"kin|n=1000|SX_WG=128,SX_TM=1|100", "kin|n=100000|SX_WG=32,SX_TM=2|1000",
                          "kin2|n=1000|SX_WG=64,SX_TM=1|300", "stranger|n=1000|SX_WG=32,SX_TM=4|1",
                          "kin-hip|n=1000|SX_WG=32,SX_TM=1|1"};
    const char *why;
    kcrt_bundle *b = with_tuned("saxpy", rows, 5);
    /* not the other family's, nor hip's; of two siblings' rows for this shape, the faster */
    assert_string_equal("SX_WG=128,SX_TM=1", choice(b, 1000, &why));
    ASSERT_CONTAINS(why, "tuned for another device of its family at exactly this shape");
    assert_string_equal("SX_WG=32,SX_TM=2", choice(b, 70000, &why));
    ASSERT_CONTAINS(why, "tuned for another device of its family at the nearest shape n=100000");
    kcrt_bundle_free(b);
    /* only strangers: the default */
    const char *strangers[] = {"stranger|n=1000|SX_WG=32,SX_TM=4|1"};
    b = with_tuned("saxpy", strangers, 1);
    assert_string_equal("SX_WG=64,SX_TM=2", choice(b, 1000, &why));
    kcrt_bundle_free(b);
}

static void test_tuned_rows_that_cannot_apply(void **state)
{
    (void)state;
    const char *rows[] = {"me|m=1000|SX_WG=32,SX_TM=4|1",    /* not saxpy's scalars */
                          "me|n=1000|SX_WG=512,SX_TM=4|1",   /* no such variant */
                          "me|n=2000|SX_WG=128,SX_TM=2|10"}; /* fine, but not exact */
    const char *why;
    kcrt_bundle *b = with_tuned("saxpy", rows, 3);
    assert_string_equal("SX_WG=128,SX_TM=2", choice(b, 1000, &why));
    ASSERT_CONTAINS(why, "nearest shape n=2000");
    kcrt_bundle_free(b);
    /* a tuned variant this device cannot run is passed over */
    const char *path =
        edited("tuned_unusable.kcb",
               "UPDATE variants SET features = 'tensor_cores' WHERE tunables = 'SX_WG=32,SX_TM=4';"
               "INSERT INTO tuned SELECT 'x', 'y', 'vulkan', id, 'n=1000', 'SX_WG=32,SX_TM=4', 1 "
               "FROM kernels WHERE name = 'saxpy';"
               "INSERT INTO tuned SELECT 'x', 'y', 'vulkan', id, 'n=3000', 'SX_WG=32,SX_TM=2', 1 "
               "FROM kernels WHERE name = 'saxpy';");
    sqlite3 *db; /* the rows as this device's: its key is only known here */
    assert_int_equal(SQLITE_OK, sqlite3_open(path, &db));
    char *sql = sqlite3_mprintf("UPDATE tuned SET device_key = %Q, device_family = %Q, backend = %Q",
                                kcrt_device_info_get(rt_ctx)->key, kcrt_device_info_get(rt_ctx)->family,
                                kcrt_backend_name(rt_ctx));
    assert_int_equal(SQLITE_OK, sqlite3_exec(db, sql, NULL, NULL, NULL));
    sqlite3_free(sql);
    sqlite3_close(db);
    kcrt_bundle *c;
    ASSERT_OK(kcrt_bundle_load(rt_ctx, path, &c));
    assert_string_equal("SX_WG=32,SX_TM=2", choice(c, 1000, &why)); /* the exact row's variant cannot run */
    ASSERT_CONTAINS(why, "nearest shape n=3000");
    kcrt_bundle_free(c);
}

/* A row for this device that names another backend cannot be: the
 * device key is the backend's. */
static void test_tuned_row_of_another_backend(void **state)
{
    (void)state;
    const kcrt_device_info *d = kcrt_device_info_get(rt_ctx);
    char *sql = sqlite3_mprintf("INSERT INTO tuned SELECT %Q, %Q, %Q, id, 'n=1000', 'SX_WG=32,SX_TM=1', 10 "
                                "FROM kernels WHERE name = 'saxpy'",
                                d->key, d->family, strcmp(d->backend, "hip") ? "hip" : "vulkan");
    const char *path = edited("other_backend.kcb", sql);
    sqlite3_free(sql);
    refused(path, KCRT_ERROR_BAD_BUNDLE, "says backend");
    unlink(path);
}

/* kcrt_bundle_read, what kc info, export and tune read through: the same
 * checks as a load, every device's tuned rows, and no launching. */
/* init: twiddle is an FFT's table, exp(-2 pi i t / n), in float and half
 * lanes alike: variants that read it differently agree only on it. */
static void test_twiddle_init(void **state)
{
    (void)state;
    float tw[16];
    uint64_t seed = 7;
    kcrt_param_info p = {.name = "tw", .kind = KCRT_PARAM_BUFFER, .type = KCRT_TYPE_FLOAT2, .elem_bytes = 8,
                         .init = KCRT_INIT_TWIDDLE};
    kcrt_fill(&p, tw, 8, &seed);
    for (int t = 0; t < 8; t++) {
        assert_true(fabs(tw[2 * t] - cos(6.283185307179586 * t / 8)) < 1e-7);
        assert_true(fabs(tw[2 * t + 1] + sin(6.283185307179586 * t / 8)) < 1e-7);
    }
    assert_true(tw[5] == -1.0f); /* t = 2: exp(-i pi / 2) = -i */
    uint16_t h[8];
    p.type = KCRT_TYPE_HALF2, p.elem_bytes = 4;
    kcrt_fill(&p, h, 4, &seed);
    assert_int_equal(0x3c00, h[0]); /* 1 */
    assert_int_equal(0xbc00, h[3]); /* t = 1 of 4: -i */
    assert_int_equal(0xbc00, h[4]); /* t = 2: -1 */
}

static void test_read_without_a_device(void **state)
{
    (void)state;
    const char *path = edited("read.kcb", "INSERT INTO tuned SELECT 'far:1', 'far', 'cuda', id, 'n=1000', "
                                          "'SX_WG=32,SX_TM=1', 10 FROM kernels WHERE name = 'saxpy';"
                                          "INSERT INTO tuned SELECT 'near:2', 'near', 'hip', id, 'n=77', "
                                          "'SX_WG=32,SX_TM=2', 2.5 FROM kernels WHERE name = 'saxpy';");
    char err[512];
    kcrt_bundle *b = NULL;
    ASSERT_OK(kcrt_bundle_read(path, &b, err, sizeof(err)));
    assert_null(kcrt_bundle_context(b));
    int saxpy = -1;
    for (int i = 0; i < kcrt_bundle_kernel_count(b); i++)
        if (strcmp(kcrt_bundle_kernel_info(b, i)->name, "saxpy") == 0)
            saxpy = i;
    assert_true(saxpy >= 0);
    const kcrt_tuned_row *rows;
    assert_int_equal(2, kcrt_bundle_tuned_rows(b, saxpy, &rows));
    assert_string_equal("far:1", rows[0].device);
    assert_string_equal("cuda", rows[0].backend);
    assert_string_equal("SX_WG=32,SX_TM=2", rows[1].variant);
    assert_true(rows[1].time_ns == 2.5);
    ASSERT_CONTAINS(kcrt_bundle_kernel_source(b, saxpy), ".kc");
    const kcrt_kernel_info *k = kcrt_bundle_kernel_info(b, saxpy);
    size_t size = 0;
    const char *args = NULL;
    const unsigned char *bin = kcrt_bundle_variant_binary(b, saxpy, 0, &size, &args);
    assert_non_null(bin);
    assert_true(size > 20 && bin[0] == 0x03 && bin[3] == 0x07); /* SPIR-V's magic, little-endian */
    assert_non_null(strchr(args, '@'));
    assert_null(kcrt_bundle_variant_binary(b, saxpy, k->nvariants, &size, &args));
    kcrt_kernel *h = (kcrt_kernel *)1;
    assert_int_equal(KCRT_ERROR_BAD_ARGUMENT, kcrt_kernel_get(b, "saxpy", &h));
    kcrt_bundle_free(b);
    /* refused as a load refuses it, with the same words */
    path = edited("read_bad.kcb", "UPDATE variants SET checksum = 'x' WHERE rowid = 1");
    assert_int_equal(KCRT_ERROR_BAD_BUNDLE, kcrt_bundle_read(path, &b, err, sizeof(err)));
    assert_null(b);
    ASSERT_CONTAINS(err, "its checksum does not match");
    refused(path, KCRT_ERROR_BAD_BUNDLE, "its checksum does not match");
    assert_int_equal(KCRT_ERROR_IO, kcrt_bundle_read(tmp_path("none.kcb"), &b, err, sizeof(err)));
    ASSERT_CONTAINS(err, "cannot open bundle");
}

/* A bundle that another process is writing (kc tune holds a write lock
 * while it adds tuned rows) is waited for, not refused as "database is
 * locked": the writer here commits 0.3 s after the load starts. */
static void *commit_later(void *db)
{
    struct timespec pause = {0, 300 * 1000 * 1000};
    nanosleep(&pause, NULL);
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    return NULL;
}

static void test_waits_out_a_writer(void **state)
{
    (void)state;
    const char *path = edited("locked.kcb", "SELECT 1");
    sqlite3 *db;
    assert_int_equal(SQLITE_OK, sqlite3_open(path, &db));
    assert_int_equal(SQLITE_OK, sqlite3_exec(db, "BEGIN EXCLUSIVE", NULL, NULL, NULL));
    pthread_t writer;
    assert_int_equal(0, pthread_create(&writer, NULL, commit_later, db));
    kcrt_bundle *b = NULL;
    ASSERT_OK(kcrt_bundle_load(rt_ctx, path, &b));
    pthread_join(writer, NULL);
    kcrt_bundle_free(b);
    sqlite3_close(db);
}

static long max_rss_kib(void)
{
#if defined(_WIN32)
    PROCESS_MEMORY_COUNTERS m = {.cb = sizeof(m)};
    GetProcessMemoryInfo(GetCurrentProcess(), &m, sizeof(m));
    return (long)(m.PeakWorkingSetSize / 1024);
#else
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
#endif
}

/* A large tuned table loads in memory proportional to it: growing its
 * array 16 rows at a time made 40,000 rows cost 2.9 GB. */
static void test_large_tuned_table(void **state)
{
    (void)state;
    enum { ROWS = 40000 };
    const kcrt_device_info *d = kcrt_device_info_get(rt_ctx);
    char *sql = sqlite3_mprintf(
        "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < %d) "
        "INSERT INTO tuned SELECT %Q, %Q, %Q, (SELECT id FROM kernels WHERE name = 'saxpy'), 'n=' || i, "
        "CASE i %% 2 WHEN 0 THEN 'SX_WG=32,SX_TM=1' ELSE 'SX_WG=128,SX_TM=4' END, 100.0 + i FROM c",
        ROWS, d->key, d->family, d->backend);
    const char *path = edited("large_tuned.kcb", sql);
    sqlite3_free(sql);
    long before = max_rss_kib();
    kcrt_bundle *b;
    ASSERT_OK(kcrt_bundle_load(rt_ctx, path, &b));
    long grew = max_rss_kib() - before;
    fprintf(stderr, "    %d tuned rows: the peak resident size grew %ld KiB\n", ROWS, grew);
    assert_true(grew < 200 * 1024);
    const char *why;
    assert_string_equal("SX_WG=32,SX_TM=1", choice(b, 30000, &why));
    ASSERT_CONTAINS(why, "exactly this shape");
    kcrt_bundle_free(b);
    unlink(path);
}

int main(void)
{
    int rc = rt_open_or_skip("test_rt_bundle");
    if (rc)
        return rc;
    if (!mkdtemp(tmpdir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_files_that_are_not_bundles, rt_teardown),
        cmocka_unit_test_teardown(test_sqlite_files_of_other_applications, rt_teardown),
        cmocka_unit_test_teardown(test_newer_format_is_refused, rt_teardown),
        cmocka_unit_test_teardown(test_damaged_rows, rt_teardown),
        cmocka_unit_test_teardown(test_variants_the_device_cannot_run, rt_teardown),
        cmocka_unit_test_teardown(test_fuzz_truncated_and_flipped, rt_teardown),
        cmocka_unit_test_teardown(test_tuned_none_gives_the_default, rt_teardown),
        cmocka_unit_test_teardown(test_type_default_where_untuned, rt_teardown),
        cmocka_unit_test_teardown(test_type_default_damaged, rt_teardown),
        cmocka_unit_test_teardown(test_tuned_exact_shape_for_this_device, rt_teardown),
        cmocka_unit_test_teardown(test_tuned_nearest_shape_in_log_space, rt_teardown),
        cmocka_unit_test_teardown(test_tuned_nearest_in_several_dimensions, rt_teardown),
        cmocka_unit_test_teardown(test_tuned_device_family_fallback, rt_teardown),
        cmocka_unit_test_teardown(test_tuned_rows_that_cannot_apply, rt_teardown),
        cmocka_unit_test_teardown(test_tuned_row_of_another_backend, rt_teardown),
        cmocka_unit_test_teardown(test_large_tuned_table, rt_teardown),
        cmocka_unit_test_teardown(test_read_without_a_device, rt_teardown),
        cmocka_unit_test(test_twiddle_init),
        cmocka_unit_test_teardown(test_waits_out_a_writer, rt_teardown),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    if (kc_test_remove_tree(tmpdir) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return rt_close_all(failed);
}
