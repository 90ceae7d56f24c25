/*
 * test_llvm_build.c — the LLVM targets in the driver: -t names and
 * families (all-amd, all-nvidia); `kc build -t gfx1100 -t sm_90 -t spirv`
 * puts a variant per target in the bundle, each with its argument layout;
 * --amdgpu-cov reaches the code object; `kc export` writes .hsaco and .ptx
 * files and a manifest that gives every argument's offset and size; `kc
 * info` reports each AMDGPU and PTX variant's registers, spills, scratch
 * and shared memory (none for SPIR-V).
 * Skips (77) without ld.lld.
 */
#include "llvm_test.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kc_build.h"

static void target_families(void **state)
{
    (void)state;
    const kc_target *t[64];
    assert_int_equal(9, kc_target_expand("all-amd", t, 64));
    assert_string_equal("gfx1100", t[0]->name);
    assert_string_equal("hip", t[0]->backend);
    assert_string_equal("gfx906", t[8]->name);
    assert_int_equal(5, kc_target_expand("all-nvidia", t, 64));
    assert_string_equal("sm_75", t[0]->name);
    assert_string_equal("cuda", t[4]->backend);
    assert_int_equal(1, kc_target_expand("gfx942", t, 64));
    assert_int_equal(1, kc_target_expand("spirv", t, 64));
    assert_int_equal(-1, kc_target_expand("gfx9000", t, 64));
    assert_int_equal(-1, kc_target_expand("all-amd", t, 4)); /* does not fit */
    ASSERT_CONTAINS(kc_target_names(), "gfx1032");
    ASSERT_CONTAINS(kc_target_names(), "all-nvidia");
}

typedef struct built {
    char dir[4096], bundle[4200];
    kc_bundle *b;
} built;

static void build(built *out, const char *const *targets, int ntargets, int cov)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(out->dir, sizeof(out->dir), "%s/kc-llvm-build-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    assert_non_null(mkdtemp(out->dir));
    snprintf(out->bundle, sizeof(out->bundle), "%s/k.kcb", out->dir);
    const char *inputs[] = {KC_SOURCE_DIR "/tests/llvm/kernels"};
    kc_build_options o = {.inputs = inputs,
                          .ninputs = 1,
                          .targets = targets,
                          .ntargets = ntargets,
                          .output = out->bundle,
                          .log = stderr,
                          .quiet = true,
                          .target = {cov}};
    assert_int_equal(0, kc_build(&o));
    char err[256];
    out->b = kc_bundle_open(out->bundle, false, err, sizeof(err));
    assert_non_null(out->b);
}

static void remove_built(built *b)
{
    kc_bundle_close(b->b);
    char cmd[8400];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", b->dir);
    assert_int_equal(0, system(cmd));
}

/* One variant's row: args, args_size and the binary's first bytes. */
static void variant(kc_bundle *b, const char *kernel, const char *target, char *args, size_t n,
                    int *args_size, unsigned char head[16])
{
    sqlite3_stmt *st;
    sqlite3_prepare_v2(
        kc_bundle_db(b),
        "SELECT v.args, v.args_size, v.binary FROM variants v JOIN kernels k ON k.id = v.kernel_id "
        "WHERE k.name = ?1 AND v.target = ?2",
        -1, &st, NULL);
    sqlite3_bind_text(st, 1, kernel, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, target, -1, SQLITE_STATIC);
    assert_int_equal(SQLITE_ROW, sqlite3_step(st));
    snprintf(args, n, "%s", (const char *)sqlite3_column_text(st, 0));
    *args_size = sqlite3_column_int(st, 1);
    assert_true(sqlite3_column_bytes(st, 2) >= 16);
    memcpy(head, sqlite3_column_blob(st, 2), 16);
    sqlite3_finalize(st);
}

static void bundle_has_every_target(void **state)
{
    (void)state;
    const char *targets[] = {"gfx1100", "sm_90", "spirv", "all-amd"};
    built b;
    build(&b, targets, 4, 0);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(kc_bundle_db(b.b), "SELECT count(*), count(DISTINCT target) FROM variants", -1, &st,
                       NULL);
    assert_int_equal(SQLITE_ROW, sqlite3_step(st));
    assert_int_equal(3 * 11, sqlite3_column_int(st, 0)); /* 3 kernels, 11 targets (gfx1100 once) */
    assert_int_equal(11, sqlite3_column_int(st, 1));
    sqlite3_finalize(st);
    char args[256];
    int size;
    unsigned char head[16];
    static const char layout[] = "0:4;4:2;8:4;16:8;24:4;32:8;40:4;44:2;48:8";
    variant(b.b, "mix", "gfx1100", args, sizeof(args), &size, head);
    assert_string_equal(layout, args);
    assert_int_equal(56, size);
    assert_memory_equal("\177ELF", head, 4);
    assert_int_equal(3, head[8]); /* EI_ABIVERSION: code object v5 */
    variant(b.b, "mix", "sm_90", args, sizeof(args), &size, head);
    assert_string_equal(layout, args);
    assert_int_equal(56, size);
    assert_memory_equal("//", head, 2);
    variant(b.b, "mix", "spirv", args, sizeof(args), &size, head);
    assert_string_equal("0:4;4:4;8:4;@0;12:4;@1;16:4;20:4;@2", args);
    variant(b.b, "nothing", "gfx942", args, sizeof(args), &size, head);
    assert_string_equal("", args);
    assert_int_equal(0, size);
    remove_built(&b);
}

static void code_object_version_reaches_the_binary(void **state)
{
    (void)state;
    const char *targets[] = {"gfx1030", "gfx90a"};
    built b;
    build(&b, targets, 2, 4);
    char args[256];
    int size;
    unsigned char head[16];
    variant(b.b, "mix", "gfx1030", args, sizeof(args), &size, head);
    assert_int_equal(2, head[8]); /* EI_ABIVERSION: code object v4 */
    variant(b.b, "sg2d", "gfx90a", args, sizeof(args), &size, head);
    assert_int_equal(2, head[8]);
    remove_built(&b);
}

static void export_writes_binaries_and_layout(void **state)
{
    (void)state;
    const char *targets[] = {"gfx1100", "sm_90"};
    built b;
    build(&b, targets, 2, 0);
    char dir[4200], err[256];
    snprintf(dir, sizeof(dir), "%s/out", b.dir);
    assert_true(kc_bundle_export(b.b, dir, NULL, err, sizeof(err)));
    const char *files[] = {"mix.default.gfx1100.hsaco", "mix.default.sm_90.ptx", "sg2d.WX=16.gfx1100.hsaco"};
    for (size_t i = 0; i < KC_COUNT(files); i++) {
        char path[4400];
        snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
        struct stat st;
        assert_int_equal(0, stat(path, &st));
        assert_true(st.st_size > 100);
    }
    char path[4400];
    snprintf(path, sizeof(path), "%s/manifest.yaml", dir);
    size_t len;
    char *m = kc_read_file(path, &len);
    assert_non_null(m);
    ASSERT_CONTAINS(m, "target: gfx1100");
    ASSERT_CONTAINS(m, "target: sm_90");
    ASSERT_CONTAINS(m, "kernarg_bytes: 56");
    ASSERT_CONTAINS(m, "{name: h, kind: scalar, type: half, offset: 4, size: 2}");
    ASSERT_CONTAINS(m, "{name: on, kind: scalar, type: bool, offset: 8, size: 4}");
    ASSERT_CONTAINS(m, "{name: x, kind: buffer, type: float, offset: 16, size: 8}");
    ASSERT_CONTAINS(m, "{name: z, kind: buffer, type: int, offset: 48, size: 8}");
    free(m);
    remove_built(&b);
}

/* kc info: each AMDGPU and PTX variant's resources from its binary, for
 * SPIR-V its private arrays indexed at run time; in the text, a resources
 * line per target. */
static void info_reports_resources(void **state)
{
    (void)state;
    const char *targets[] = {"gfx1100", "sm_90", "spirv"};
    built b;
    build(&b, targets, 3, 0);
    kc_buf out = {0};
    char err[256];
    assert_true(kc_bundle_describe(b.b, &out, true, err, sizeof(err)));
    int amd = 0, ptx = 0, spirv = 0, most_vgprs = 0;
    for (const char *p = out.data; (p = strstr(p, "\"target\": \"")); p++) {
        const char *t = p + 11, *r = strstr(p, "\"resources\": ");
        assert_non_null(r);
        r += 13;
        if (!strncmp(t, "gfx1100", 7)) {
            amd++;
            assert_true(r[0] == '{' && strstr(r, "\"vgprs\": ") < strchr(r, '}'));
            int v = atoi(strstr(r, "\"vgprs\": ") + 9);
            most_vgprs = v > most_vgprs ? v : most_vgprs;
        } else if (!strncmp(t, "sm_90", 5)) {
            ptx++;
            assert_true(r[0] == '{' && !strncmp(strstr(r, "\"vgprs\": ") + 9, "null", 4));
        } else if (!strncmp(t, "spirv", 5)) {
            spirv++;
            const char *pa = strstr(r, "\"private_arrays_indexed\": 0");
            assert_true(r[0] == '{' && pa && pa < strchr(r, '}'));
        }
    }
    assert_int_equal(3, amd);
    assert_true(most_vgprs > 0); /* "nothing" needs none */
    assert_int_equal(3, ptx);
    assert_int_equal(3, spirv);
    kc_buf_free(&out);
    assert_true(kc_bundle_describe(b.b, &out, false, err, sizeof(err)));
    ASSERT_CONTAINS(out.data, "  resources  gfx1100: ");
    ASSERT_CONTAINS(out.data, "  resources  sm_90: registers chosen by ptxas at load, shared ");
    ASSERT_CONTAINS(out.data, "  resources  spirv: no private arrays indexed at run time\n");
    kc_buf_free(&out);
    remove_built(&b);
}

int main(void)
{
    lt_need(kc_llvm_lld_path(), "ld.lld (lld-19)");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(target_families),
        cmocka_unit_test(bundle_has_every_target),
        cmocka_unit_test(code_object_version_reaches_the_binary),
        cmocka_unit_test(export_writes_binaries_and_layout),
        cmocka_unit_test(info_reports_resources),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
