/*
 * test_rt_checked.c — `kc build --checked` bundles on a device: kernels
 * that stay in bounds give the same results as plain C; the first access
 * out of bounds (a load, a store, an atomic, a private or a shared array)
 * is reported once by kcrt_finish or kcrt_buffer_read as
 * KCRT_ERROR_OUT_OF_BOUNDS, naming the kernel, file:line:col, the array
 * and the index; the kernel runs on without touching memory outside its
 * arrays. Inputs are random (fixed seeds), outputs poisoned first.
 */
#include "rt_test.h"

#include <stdlib.h>
#include <string.h>

#define CHECKED_BUNDLE KC_BINARY_DIR "/tests/runtime/rt_checked.kcb"
#define SRC "checked.kc"

enum { N = 1000, M = 777 };

static kcrt_buffer *from_ints(const int *v, size_t n) { return rt_buf_from(v, n * sizeof(int)); }

static kcrt_status run_gather(const int *idx, const float *x, float *y)
{
    kcrt_buffer *bi = from_ints(idx, N), *bx = rt_buf_from(x, M * sizeof(float)), *by = rt_buf(N * sizeof(float));
    rt_poison(by, RT_NAN);
    kcrt_arg args[] = {KCRT_I32(N), KCRT_I32(M), KCRT_BUF(bi), KCRT_BUF(bx), KCRT_BUF(by)};
    ASSERT_OK(kcrt_launch(rt_kernel("gather"), args, 5));
    kcrt_status s = kcrt_finish(rt_ctx);
    ASSERT_OK(kcrt_buffer_read(by, 0, y, N * sizeof(float)));
    kcrt_buffer_free(bi), kcrt_buffer_free(bx), kcrt_buffer_free(by);
    return s;
}

static void gather_inputs(rt_rng *r, int *idx, float *x)
{
    rt_fill_i32(idx, N, r, 0, M - 1);
    rt_fill_f32(x, M, r, -1, 1);
}

static void test_in_bounds_runs_as_c(void **state)
{
    (void)state;
    rt_rng r = {11};
    int idx[N];
    float x[M], y[N];
    gather_inputs(&r, idx, x);
    ASSERT_OK(run_gather(idx, x, y));
    for (int i = 0; i < N; i++)
        assert_float_equal(y[i], x[idx[i]] * 2.0f, 0);
}

static void test_load_out_of_bounds(void **state)
{
    (void)state;
    rt_rng r = {12};
    int idx[N];
    float x[M], y[N];
    gather_inputs(&r, idx, x);
    idx[500] = M + 5;
    ASSERT_STATUS(KCRT_ERROR_OUT_OF_BOUNDS, run_gather(idx, x, y));
    const char *e = kcrt_error(rt_ctx);
    ASSERT_CONTAINS(e, SRC ":11:14: kernel 'gather': index 782 is out of bounds of 'x' (777 elements)");
    for (int i = 0; i < N; i++) /* the kernel ran on; the bad load read element 0 */
        assert_float_equal(y[i], x[i == 500 ? 0 : idx[i]] * 2.0f, 0);
    ASSERT_OK(kcrt_finish(rt_ctx)); /* reported once */

    idx[500] = 3;
    idx[17] = -7;
    ASSERT_STATUS(KCRT_ERROR_OUT_OF_BOUNDS, run_gather(idx, x, y));
    ASSERT_CONTAINS(kcrt_error(rt_ctx), "index -7 is out of bounds of 'x'");
}

/* The bound is the declared extent (x[m]), not the buffer's size. */
static void test_declared_extent_is_the_bound(void **state)
{
    (void)state;
    rt_rng r = {17};
    int idx[N];
    float x[M];
    gather_inputs(&r, idx, x);
    for (int i = 0; i < N; i++)
        idx[i] %= 700;
    idx[42] = 750; /* inside the buffer, past m */
    kcrt_buffer *bi = from_ints(idx, N), *bx = rt_buf_from(x, sizeof(x)), *by = rt_buf(N * sizeof(float));
    kcrt_arg args[] = {KCRT_I32(N), KCRT_I32(700), KCRT_BUF(bi), KCRT_BUF(bx), KCRT_BUF(by)};
    ASSERT_OK(kcrt_launch(rt_kernel("gather"), args, 5));
    ASSERT_STATUS(KCRT_ERROR_OUT_OF_BOUNDS, kcrt_finish(rt_ctx));
    ASSERT_CONTAINS(kcrt_error(rt_ctx), "index 750 is out of bounds of 'x' (700 elements)");
    kcrt_buffer_free(bi), kcrt_buffer_free(bx), kcrt_buffer_free(by);
}

/* A store out of bounds is skipped, and kcrt_buffer_read reports it. */
static void test_store_out_of_bounds(void **state)
{
    (void)state;
    rt_rng r = {13};
    int idx[M];
    float x[M], y[M];
    for (int i = 0; i < M; i++)
        idx[i] = i;
    for (int i = M - 1; i > 0; i--) { /* a permutation */
        int j = rt_int(&r, 0, i), t = idx[i];
        idx[i] = idx[j], idx[j] = t;
    }
    rt_fill_f32(x, M, &r, -1, 1);
    int lost = idx[100];
    idx[100] = M + 1000;
    kcrt_buffer *bi = from_ints(idx, M), *bx = rt_buf_from(x, sizeof(x)), *by = rt_buf(sizeof(y));
    rt_poison(by, RT_NAN);
    kcrt_arg args[] = {KCRT_I32(M), KCRT_I32(M), KCRT_BUF(bi), KCRT_BUF(bx), KCRT_BUF(by)};
    ASSERT_OK(kcrt_launch(rt_kernel("scatter"), args, 5));
    ASSERT_STATUS(KCRT_ERROR_OUT_OF_BOUNDS, kcrt_buffer_read(by, 0, y, sizeof(y)));
    ASSERT_CONTAINS(kcrt_error(rt_ctx), SRC ":20:19: kernel 'scatter': index 1777 is out of bounds of 'y' (777 elements)");
    for (int i = 0; i < M; i++)
        if (i != 100)
            assert_float_equal(y[idx[i]], x[i], 0);
    uint32_t bits;
    memcpy(&bits, &y[lost], 4);
    assert_int_equal(bits, RT_NAN); /* nobody wrote it */
    kcrt_buffer_free(bi), kcrt_buffer_free(bx), kcrt_buffer_free(by);
}

static void test_atomic_out_of_bounds(void **state)
{
    (void)state;
    enum { BINS = 16 };
    rt_rng r = {14};
    int bin[N];
    uint32_t want[BINS] = {0}, got[BINS];
    rt_fill_i32(bin, N, &r, 0, BINS - 1);
    bin[999] = BINS; /* one past the end */
    for (int i = 0; i < N - 1; i++)
        want[bin[i]]++;
    kcrt_buffer *bb = from_ints(bin, N), *bc = rt_buf(sizeof(got));
    kcrt_arg args[] = {KCRT_I32(N), KCRT_I32(BINS), KCRT_BUF(bb), KCRT_BUF(bc)};
    ASSERT_OK(kcrt_launch(rt_kernel("histogram"), args, 4));
    ASSERT_STATUS(KCRT_ERROR_OUT_OF_BOUNDS, kcrt_finish(rt_ctx));
    ASSERT_CONTAINS(kcrt_error(rt_ctx), SRC ":29:9: kernel 'histogram': index 16 is out of bounds of 'counts' (16 elements)");
    ASSERT_OK(kcrt_buffer_read(bc, 0, got, sizeof(got)));
    assert_memory_equal(got, want, sizeof(got));
    kcrt_buffer_free(bb), kcrt_buffer_free(bc);
}

static kcrt_status run_local(int k, const int *at, float *y)
{
    kcrt_buffer *ba = from_ints(at, N), *by = rt_buf(N * sizeof(float));
    rt_poison(by, RT_NAN);
    kcrt_arg args[] = {KCRT_I32(N), KCRT_I32(k), KCRT_BUF(ba), KCRT_BUF(by)};
    ASSERT_OK(kcrt_launch(rt_kernel("local_arrays"), args, 4));
    kcrt_status s = kcrt_finish(rt_ctx);
    ASSERT_OK(kcrt_buffer_read(by, 0, y, N * sizeof(float)));
    kcrt_buffer_free(ba), kcrt_buffer_free(by);
    return s;
}

static void test_local_arrays(void **state)
{
    (void)state;
    rt_rng r = {15};
    int at[N];
    float y[N];
    rt_fill_i32(at, N, &r, 0, 63);
    ASSERT_OK(run_local(2, at, y));
    for (int i = 0; i < N; i++)
        assert_float_equal(y[i], 3.0f + (float)at[i], 0);

    ASSERT_STATUS(KCRT_ERROR_OUT_OF_BOUNDS, run_local(4, at, y));
    ASSERT_CONTAINS(kcrt_error(rt_ctx), SRC ":45:14: kernel 'local_arrays': index 4 is out of bounds of a private "
                                        "array of 4 elements");
    for (int i = 0; i < N; i++) /* t[0] instead */
        assert_float_equal(y[i], 1.0f + (float)at[i], 0);

    at[300] = 64;
    ASSERT_STATUS(KCRT_ERROR_OUT_OF_BOUNDS, run_local(0, at, y));
    ASSERT_CONTAINS(kcrt_error(rt_ctx), "index 64 is out of bounds of a shared array of 64 elements");
}

/* Launches in one batch: the report is the first violation's. */
static void test_first_violation_wins(void **state)
{
    (void)state;
    rt_rng r = {16};
    int bin[N], idx[N];
    float x[M];
    rt_fill_i32(bin, N, &r, 0, 7);
    bin[5] = 8;
    gather_inputs(&r, idx, x);
    idx[6] = M;
    kcrt_buffer *bb = from_ints(bin, N), *bc = rt_buf(8 * 4), *bi = from_ints(idx, N),
                *bx = rt_buf_from(x, sizeof(x)), *by = rt_buf(N * 4);
    kcrt_arg h[] = {KCRT_I32(N), KCRT_I32(8), KCRT_BUF(bb), KCRT_BUF(bc)};
    kcrt_arg g[] = {KCRT_I32(N), KCRT_I32(M), KCRT_BUF(bi), KCRT_BUF(bx), KCRT_BUF(by)};
    ASSERT_OK(kcrt_launch(rt_kernel("histogram"), h, 4));
    ASSERT_OK(kcrt_launch(rt_kernel("gather"), g, 5));
    ASSERT_STATUS(KCRT_ERROR_OUT_OF_BOUNDS, kcrt_finish(rt_ctx));
    ASSERT_CONTAINS(kcrt_error(rt_ctx), "kernel 'histogram': index 8 is out of bounds of 'counts' (8 elements)");
    ASSERT_OK(kcrt_finish(rt_ctx));
    ASSERT_OK(kcrt_launch(rt_kernel("gather"), g, 5));
    ASSERT_STATUS(KCRT_ERROR_OUT_OF_BOUNDS, kcrt_finish(rt_ctx));
    ASSERT_CONTAINS(kcrt_error(rt_ctx), "kernel 'gather': index 777 is out of bounds of 'x' (777 elements)");
    kcrt_buffer_free(bb), kcrt_buffer_free(bc), kcrt_buffer_free(bi), kcrt_buffer_free(bx), kcrt_buffer_free(by);
}

/* The report survives the bundle: names are the context's copies. */
static void test_report_after_bundle_free(void **state)
{
    (void)state;
    kcrt_bundle *b;
    kcrt_kernel *k;
    ASSERT_OK(kcrt_bundle_load(rt_ctx, CHECKED_BUNDLE, &b));
    ASSERT_OK(kcrt_kernel_get(b, "histogram", &k));
    int bin[N];
    for (int i = 0; i < N; i++)
        bin[i] = i % 4;
    bin[0] = -1;
    kcrt_buffer *bb = from_ints(bin, N), *bc = rt_buf(16);
    kcrt_arg h[] = {KCRT_I32(N), KCRT_I32(4), KCRT_BUF(bb), KCRT_BUF(bc)};
    ASSERT_OK(kcrt_launch(k, h, 4));
    kcrt_bundle_free(b); /* waits for its launches */
    ASSERT_STATUS(KCRT_ERROR_OUT_OF_BOUNDS, kcrt_finish(rt_ctx));
    ASSERT_CONTAINS(kcrt_error(rt_ctx), SRC ":29:9: kernel 'histogram': index -1 is out of bounds of 'counts'");
    kcrt_buffer_free(bb), kcrt_buffer_free(bc);
}

/* kc info says so; kc tune refuses: it would measure the checks. */
static void test_tools_know_a_checked_bundle(void **state)
{
    (void)state;
    char cmd[4096], *out;
    assert_int_equal(0, kc_test_sh(&out, "%s info %s", RT_KC, CHECKED_BUNDLE));
    ASSERT_CONTAINS(out, "checked build (bounds)");
    free(out);
    assert_int_not_equal(0, kc_test_sh(&out, "%s tune %s --cache /tmp/kc-test-checked-%d.db", RT_KC, CHECKED_BUNDLE,
                                       (int)getpid()));
    ASSERT_CONTAINS(out, "is a checked build (kc build --checked)");
    free(out);
    snprintf(cmd, sizeof(cmd), "/tmp/kc-test-checked-%d.db", (int)getpid());
    unlink(cmd);
}

int main(void)
{
    int rc = rt_open_or_skip("test_rt_checked");
    if (rc)
        return rc;
    if (kcrt_bundle_load(rt_ctx, CHECKED_BUNDLE, &rt_bundle) != KCRT_OK) {
        fprintf(stderr, "cannot load %s: %s\n", CHECKED_BUNDLE, kcrt_error(rt_ctx));
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_in_bounds_runs_as_c, rt_teardown),
        cmocka_unit_test_teardown(test_load_out_of_bounds, rt_teardown),
        cmocka_unit_test_teardown(test_declared_extent_is_the_bound, rt_teardown),
        cmocka_unit_test_teardown(test_store_out_of_bounds, rt_teardown),
        cmocka_unit_test_teardown(test_atomic_out_of_bounds, rt_teardown),
        cmocka_unit_test_teardown(test_local_arrays, rt_teardown),
        cmocka_unit_test_teardown(test_first_violation_wins, rt_teardown),
        cmocka_unit_test_teardown(test_report_after_bundle_free, rt_teardown),
        cmocka_unit_test_teardown(test_tools_know_a_checked_bundle, rt_teardown),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    return rt_close_all(failed);
}
