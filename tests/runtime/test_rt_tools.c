/*
 * test_rt_tools.c — kc devices and kc run, driven as a user drives them:
 * through the kc program, checking exit codes, messages and the files
 * --out writes against a C reference.
 */
#include "rt_test.h"

#include <unistd.h>

static char dir[] = "/tmp/kcrt_tools_XXXXXX";

static char *path(const char *name)
{
    static char p[4][512];
    static int next;
    char *s = p[next++ % 4];
    snprintf(s, 512, "%s/%s", dir, name);
    return s;
}

static void write_floats(const char *file, const float *x, size_t n)
{
    FILE *f = fopen(file, "wb");
    assert_non_null(f);
    assert_int_equal(n, fwrite(x, sizeof(float), n, f));
    fclose(f);
}

static float *read_floats(const char *file, size_t *n)
{
    FILE *f = fopen(file, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f) / 4;
    fseek(f, 0, SEEK_SET);
    float *x = malloc(*n * 4 + 4);
    assert_int_equal(*n, fread(x, 4, *n, f));
    fclose(f);
    return x;
}

static void test_devices_lists_this_device(void **state)
{
    (void)state;
    char *out;
    assert_int_equal(0, kc_test_sh(&out, "%s devices", RT_KC));
    /* the suite's context is on the backend it was configured for (a CUDA
     * or HIP run lists that backend's devices first) */
    const kcrt_device_info *mine = kcrt_device_info_get(rt_ctx);
    char want[64];
    ASSERT_CONTAINS(out, "0: ");
    ASSERT_CONTAINS(out, mine->name);
    snprintf(want, sizeof(want), "[%s, ", mine->backend);
    ASSERT_CONTAINS(out, want);
    ASSERT_CONTAINS(out, "subgroup     ");
    snprintf(want, sizeof(want), "key          %s:", mine->backend);
    ASSERT_CONTAINS(out, want);
    free(out);
    assert_int_equal(0, kc_test_sh(&out, "%s devices --json", RT_KC));
    ASSERT_CONTAINS(out, "\"max_workgroup_invocations\": ");
    ASSERT_CONTAINS(out, "\"timestamp_period_ns\": ");
    assert_int_equal('[', out[0]);
    free(out);
    assert_int_equal(1,
                     kc_test_sh(&out, KC_SH_ENV("KCRT_VULKAN_LIBRARY=/nonexistent") "%s devices --backend vulkan", RT_KC));
    ASSERT_CONTAINS(out, "kc devices: Vulkan is not available");
    free(out);
    /* every backend, each with its reason */
    assert_int_equal(1, kc_test_sh(&out,
                                   KC_SH_ENV("KCRT_VULKAN_LIBRARY=/nonexistent")
                                   KC_SH_ENV("KCRT_HIP_LIBRARY=/nonexistent")
                                   KC_SH_ENV("KCRT_CUDA_LIBRARY=/nonexistent") "%s devices",
                                   RT_KC));
    ASSERT_CONTAINS(out, "kc devices: no backend is available: hip: HIP is not available");
    ASSERT_CONTAINS(out, "; cuda: CUDA is not available");
    ASSERT_CONTAINS(out, "; vulkan: Vulkan is not available");
    free(out);
    assert_int_equal(2, kc_test_sh(&out, "%s devices --bogus", RT_KC));
    free(out);
    assert_int_equal(0, kc_test_sh(&out, "%s help devices", RT_KC));
    ASSERT_CONTAINS(out, "usage: kc devices [--json]");
    free(out);
}

static void test_run_computes_from_files(void **state)
{
    (void)state;
    enum { N = 3000 };
    float x[N], y[N];
    rt_rng r = {3};
    rt_fill_f32(x, N, &r, -1, 1);
    rt_fill_f32(y, N, &r, -1, 1);
    write_floats(path("x.f32"), x, N);
    write_floats(path("y.f32"), y, N);
    char *out;
    int rc = kc_test_sh(&out, "%s run %s saxpy n=%d a=0.5 x=@%s y=@%s --out y=%s --out x=%s --repeat 3",
                        RT_KC, RT_BUNDLE, N, path("x.f32"), path("y.f32"), path("out.f32"), path("xout.f32"));
    if (rc != 0)
        fail_msg("kc run failed (%d):\n%s", rc, out);
    ASSERT_CONTAINS(out, "kernel   saxpy\nvariant  SX_WG=64,SX_TM=2 (the default variant");
    ASSERT_CONTAINS(out, "time     ");
    ASSERT_CONTAINS(out, "median of 3");
    free(out);
    size_t n;
    float *got = read_floats(path("out.f32"), &n), *xs = read_floats(path("xout.f32"), &n);
    assert_int_equal(N, n);
    for (int i = 0; i < N; i++) {
        assert_true(fabsf(got[i] - (0.5f * x[i] + y[i])) <=
                    1e-6f); /* one launch's worth: before the timed ones */
        assert_true(xs[i] == x[i]);
    }
    free(got), free(xs);
}

static void test_run_fills_buffers_as_init_says(void **state)
{
    (void)state;
    char *out;
    /* reduce_sum's kc.yaml says x: index */
    int rc = kc_test_sh(&out,
                        "%s run %s reduce_sum n=1000 --variant RD_WG=32,RD_PER=1 --out x=%s --out partial=%s "
                        "--repeat 0 --json",
                        RT_KC, RT_BUNDLE, path("rx"), path("rp"));
    if (rc != 0)
        fail_msg("kc run failed (%d):\n%s", rc, out);
    ASSERT_CONTAINS(out, "{\"kernel\": \"reduce_sum\", \"variant\": \"RD_WG=32,RD_PER=1\"");
    ASSERT_CONTAINS(out, "\"grid\": [32, 1, 1]");
    free(out);
    size_t n, np;
    int *x = (int *)read_floats(path("rx"), &n), *p = (int *)read_floats(path("rp"), &np);
    assert_int_equal(1000, n);
    assert_int_equal(32, np); /* partial[cdiv(n, RD_WG * RD_PER)] */
    for (int i = 0; i < 1000; i++)
        assert_int_equal(i, x[i]);
    for (int g = 0; g < 32; g++) {
        int want = 0;
        for (int i = g * 32; i < (g + 1) * 32 && i < 1000; i++)
            want += i;
        assert_int_equal(want, p[g]);
    }
    free(x), free(p);
    /* saxpy's x is normal, y uniform in [-1, 1): random, never all zeros, and the seed repeats them */
    assert_int_equal(0, kc_test_sh(NULL, "%s run %s saxpy n=4000 a=0 --out x=%s --out y=%s --repeat 0", RT_KC,
                                   RT_BUNDLE, path("nx"), path("ny")));
    float *nx = read_floats(path("nx"), &n), *ny = read_floats(path("ny"), &n);
    double m = 0, v = 0;
    int outside = 0, zeros = 0;
    for (int i = 0; i < 4000; i++) {
        m += nx[i] / 4000, v += nx[i] * nx[i] / 4000;
        outside += ny[i] < -1 || ny[i] >= 1;
        zeros += ny[i] == 0;
    }
    assert_true(fabs(m) < 0.1 && fabs(v - 1) < 0.15); /* standard normal */
    assert_int_equal(0, outside);
    assert_true(zeros < 3);
    assert_int_equal(0, kc_test_sh(NULL, "%s run %s saxpy n=4000 a=0 --out x=%s --repeat 0 --seed 1", RT_KC,
                                   RT_BUNDLE, path("nx2")));
    float *nx2 = read_floats(path("nx2"), &n);
    assert_memory_equal(nx, nx2, 4000 * 4);
    free(nx), free(ny), free(nx2);
    /* --cold: timed after a write of a scratch buffer, said in the report */
    rc = kc_test_sh(&out, "%s run %s saxpy n=4000 a=1 --repeat 3 --cold 1", RT_KC, RT_BUNDLE);
    if (rc != 0 || !strstr(out, "median of 3") || !strstr(out, "device timestamps, cold caches"))
        fail_msg("kc run --cold: expected a cold timing, got %d:\n%s", rc, out);
    free(out);
    rc = kc_test_sh(&out, "%s run %s saxpy n=4000 a=1 --repeat 2 --cold 1 --json", RT_KC, RT_BUNDLE);
    if (rc != 0 || !strstr(out, "\"cold\": true"))
        fail_msg("kc run --cold --json: got %d:\n%s", rc, out);
    free(out);
}

static void test_run_errors(void **state)
{
    (void)state;
    static const struct {
        int rc;
        const char *args, *message;
    } cases[] = {
        {1, "saxpie n=1", "has no kernel 'saxpie' (it has: "},
        {1, "saxpy a=1", "kc run: missing scalar 'n' (int): give n=VALUE"},
        {1, "saxpy n=10 a=1 z=3", "kernel 'saxpy' has no parameter 'z' (its parameters: n, a, x, y)"},
        {1, "saxpy n=10 a=1 x=3", "x is a buffer: give x=@FILE, or nothing for random data"},
        {1, "saxpy n=1000 a=1 x=@" KC_SOURCE_DIR "/tests/runtime/kernels/kc.yaml",
         "bytes, but x needs 4000 (1000 "
         "elements of float)"},
        {1, "saxpy n=10 a=1 x=@/nonexistent", "cannot read /nonexistent for x"},
        {1, "saxpy n=ten a=1", "n is an int: 'ten' is not one"},
        {1, "bools n=10 invert=maybe", "invert is a bool: give 0, 1, true or false, not 'maybe'"},
        {1, "saxpy n=10 a=1 n=20", "n is given twice ('n=10' and 'n=20')"},
        {1, "half_scale n=10 s=70000", "s is a half: 70000 is past its largest value, 65504"},
        {1, "half_scale n=10 s=1e-9", "s is a half: 1e-9 is below its smallest value"},
        {1, "saxpy n=0 a=1", "saxpy: the grid is empty at this shape: nothing to time"},
        {1, "saxpy n=10 a=1 --variant SX_WG=7", "SX_WG=7 is not one of SX_WG's values"},
        {1, "saxpy n=10 a=1 --out n=/tmp/n", "'n' is not a buffer parameter of saxpy"},
        {1, "saxpy n=10 a=1 --device 9", "there is no device 9"},
        {2, "saxpy n=10 a=1 --repeat -1", "--repeat takes a count"},
        {2, "saxpy n=10 a=1 --cold 5000", "--cold takes the MiB to write before each launch, 0 to 4096"},
        {2, "saxpy n=10 a=1 --out y", "--out takes buffer=file"},
        {2, "saxpy n=10 a=1 stray", "'stray' is not name=value"},
        {2, "saxpy n=10 a=1 --frobnicate", "unknown option '--frobnicate'"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        char *out;
        int rc = kc_test_sh(&out, "%s run %s %s", RT_KC, RT_BUNDLE, cases[i].args);
        if (rc != cases[i].rc || !strstr(out, cases[i].message))
            fail_msg("kc run ... %s: expected exit %d and \"%s\", got %d:\n%s", cases[i].args, cases[i].rc,
                     cases[i].message, rc, out);
        free(out);
    }
    char *out;
    assert_int_equal(1, kc_test_sh(&out, "%s run /nonexistent.kcb saxpy n=1", RT_KC));
    ASSERT_CONTAINS(out, "cannot open bundle '/nonexistent.kcb'");
    free(out);
    assert_int_equal(2, kc_test_sh(&out, "%s run", RT_KC));
    ASSERT_CONTAINS(out, "give a bundle and a kernel");
    free(out);
    assert_int_equal(0, kc_test_sh(&out, "%s help run", RT_KC));
    ASSERT_CONTAINS(out, "usage: kc run BUNDLE KERNEL name=value...");
    free(out);
}

int main(void)
{
    int rc = rt_open_or_skip("test_rt_tools");
    if (rc)
        return rc;
    if (!mkdtemp(dir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_devices_lists_this_device),
        cmocka_unit_test(test_run_computes_from_files),
        cmocka_unit_test(test_run_fills_buffers_as_init_says),
        cmocka_unit_test(test_run_errors),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    if (kc_test_remove_tree(dir) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return rt_close_all(failed);
}
