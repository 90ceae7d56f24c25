/*
 * test_rt_kernels.c — the kernels of tests/runtime/kernels, compiled by kc
 * into one bundle with every variant, run on the device and compared with C
 * references. Inputs are random with fixed seeds (never zeros), outputs are
 * poisoned before each launch. A kernel with tunables runs in every
 * variant (kcrt_kernel_get_variant). Run with KCRT_VALIDATION=1; a second
 * run forces the staged-memory path (KCRT_VULKAN_STAGING=1).
 */
#include "rt_test.h"

#include "kernels/control_body.h"
#include <float.h>

#define MAXV 16

/* ---- saxpy --------------------------------------------------------------------------------- */

static void run_saxpy(kcrt_kernel *k, int n, uint64_t seed)
{
    rt_rng r = {seed};
    float *x = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)n);
    double *want = malloc(sizeof(double) * (size_t)n);
    rt_fill_f32(x, (size_t)n, &r, -1, 1);
    rt_fill_f32(y, (size_t)n, &r, -1, 1);
    float a = rt_uniform(&r, 0.5f, 3);
    for (int i = 0; i < n; i++)
        want[i] = (double)(a * x[i] + y[i]);
    kcrt_buffer *bx = rt_buf_from(x, sizeof(float) * (size_t)n),
                *by = rt_buf_from(y, sizeof(float) * (size_t)n);
    kcrt_arg args[] = {KCRT_I32(n), KCRT_F32(a), KCRT_BUF(bx), KCRT_BUF(by)};
    ASSERT_OK(kcrt_launch(k, args, 4));
    ASSERT_OK(kcrt_finish(rt_ctx));
    float *got = rt_read(by);
    rt_check_f32("y", got, want, (size_t)n, 1e-6, 1e-7);
    free(got), free(x), free(y), free(want);
    kcrt_buffer_free(bx), kcrt_buffer_free(by);
}

static void test_saxpy_every_variant(void **state)
{
    (void)state;
    const char *v[MAXV];
    int nv = rt_variants("saxpy", v, MAXV);
    assert_int_equal(9, nv);
    for (int i = 0; i < nv; i++)
        run_saxpy(rt_variant("saxpy", v[i]), 1000 + 37 * i, 100 + (uint64_t)i);
    run_saxpy(rt_kernel("saxpy"), 5, 7); /* smaller than one workgroup */
}

/* ---- reductions --------------------------------------------------------------------------------- */

static void test_reduce_sum_every_variant(void **state)
{
    (void)state;
    const char *v[MAXV];
    int nv = rt_variants("reduce_sum", v, MAXV), n = 3001;
    assert_int_equal(6, nv);
    rt_rng r = {11};
    int *x = malloc(sizeof(int) * (size_t)n);
    rt_fill_i32(x, (size_t)n, &r, -1000, 1000);
    kcrt_buffer *bx = rt_buf_from(x, sizeof(int) * (size_t)n);
    for (int vi = 0; vi < nv; vi++) {
        int wg, per;
        assert_int_equal(2, sscanf(v[vi], "RD_WG=%d,RD_PER=%d", &wg, &per));
        int groups = (n + wg * per - 1) / (wg * per);
        kcrt_buffer *bp = rt_buf(sizeof(int) * (size_t)groups);
        rt_poison(bp, RT_BEEF);
        kcrt_arg args[] = {KCRT_I32(n), KCRT_BUF(bx), KCRT_BUF(bp)};
        ASSERT_OK(kcrt_launch(rt_variant("reduce_sum", v[vi]), args, 3));
        int *got = rt_read(bp), *want = calloc((size_t)groups, sizeof(int));
        for (int i = 0; i < n; i++)
            want[i / (wg * per)] += x[i];
        rt_check_i32(v[vi], got, want, (size_t)groups);
        free(got), free(want);
        kcrt_buffer_free(bp);
    }
    kcrt_buffer_free(bx);
    free(x);
}

static void test_reduce_max_every_variant(void **state)
{
    (void)state;
    const char *v[MAXV];
    int nv = rt_variants("reduce_max", v, MAXV), n = 777;
    assert_int_equal(3, nv);
    rt_rng r = {12};
    float *x = malloc(sizeof(float) * (size_t)n);
    rt_fill_f32(x, (size_t)n, &r, -50, 50);
    kcrt_buffer *bx = rt_buf_from(x, sizeof(float) * (size_t)n);
    for (int vi = 0; vi < nv; vi++) {
        int wg;
        assert_int_equal(1, sscanf(v[vi], "RD_WG=%d", &wg));
        int groups = (n + wg - 1) / wg;
        kcrt_buffer *bp = rt_buf(sizeof(float) * (size_t)groups);
        rt_poison(bp, RT_NAN);
        kcrt_arg args[] = {KCRT_I32(n), KCRT_BUF(bx), KCRT_BUF(bp)};
        ASSERT_OK(kcrt_launch(rt_variant("reduce_max", v[vi]), args, 3));
        float *got = rt_read(bp);
        double *want = malloc(sizeof(double) * (size_t)groups);
        for (int g = 0; g < groups; g++)
            want[g] = -1e30;
        for (int i = 0; i < n; i++)
            want[i / wg] = x[i] > want[i / wg] ? x[i] : want[i / wg];
        rt_check_f32(v[vi], got, want, (size_t)groups, 0, 0);
        free(got), free(want);
        kcrt_buffer_free(bp);
    }
    kcrt_buffer_free(bx);
    free(x);
}

/* ---- 2-D tiles ------------------------------------------------------------------------------------ */

static void test_matmul_every_variant(void **state)
{
    (void)state;
    const char *v[MAXV];
    int nv = rt_variants("matmul", v, MAXV);
    assert_int_equal(3, nv);
    int m = 37, n = 29, k = 41;
    rt_rng r = {13};
    float *a = malloc(sizeof(float) * (size_t)(m * k)), *b = malloc(sizeof(float) * (size_t)(k * n));
    rt_fill_f32(a, (size_t)(m * k), &r, -1, 1);
    rt_fill_f32(b, (size_t)(k * n), &r, -1, 1);
    double *want = malloc(sizeof(double) * (size_t)(m * n));
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int t = 0; t < k; t++)
                s += (double)a[i * k + t] * b[t * n + j];
            want[i * n + j] = s;
        }
    kcrt_buffer *ba = rt_buf_from(a, sizeof(float) * (size_t)(m * k));
    kcrt_buffer *bb = rt_buf_from(b, sizeof(float) * (size_t)(k * n));
    kcrt_buffer *bc = rt_buf(sizeof(float) * (size_t)(m * n));
    for (int vi = 0; vi < nv; vi++) {
        rt_poison(bc, RT_NAN);
        kcrt_arg args[] = {KCRT_I32(m), KCRT_I32(n), KCRT_I32(k), KCRT_BUF(ba), KCRT_BUF(bb), KCRT_BUF(bc)};
        ASSERT_OK(kcrt_launch(rt_variant("matmul", v[vi]), args, 6));
        float *got = rt_read(bc);
        rt_check_f32(v[vi], got, want, (size_t)(m * n), 1e-5, 1e-5);
        free(got);
    }
    kcrt_buffer_free(ba), kcrt_buffer_free(bb), kcrt_buffer_free(bc);
    free(a), free(b), free(want);
}

/* ---- scans: three dependent launches in one batch ------------------------------------------------- */

static void test_scan_every_variant(void **state)
{
    (void)state;
    const char *v[MAXV];
    int nv = rt_variants("scan_blocks", v, MAXV);
    assert_int_equal(3, nv);
    rt_rng r = {14};
    for (int vi = 0; vi < nv; vi++) {
        int wg;
        assert_int_equal(1, sscanf(v[vi], "SC_WG=%d", &wg));
        int n = wg * wg - 5, nb = (n + wg - 1) / wg; /* the block sums fit one block */
        int *x = malloc(sizeof(int) * (size_t)n), *want = malloc(sizeof(int) * (size_t)n);
        rt_fill_i32(x, (size_t)n, &r, -100, 100);
        for (int i = 0, s = 0; i < n; i++)
            want[i] = s += x[i];
        kcrt_buffer *bx = rt_buf_from(x, sizeof(int) * (size_t)n), *by = rt_buf(sizeof(int) * (size_t)n);
        kcrt_buffer *sums = rt_buf(sizeof(int) * (size_t)nb), *offs = rt_buf(sizeof(int) * (size_t)nb);
        kcrt_buffer *top = rt_buf(sizeof(int));
        rt_poison(by, RT_BEEF), rt_poison(sums, RT_BEEF), rt_poison(offs, RT_BEEF), rt_poison(top, RT_BEEF);
        kcrt_kernel *blocks = rt_variant("scan_blocks", v[vi]), *add = rt_variant("scan_add", v[vi]);
        kcrt_arg a1[] = {KCRT_I32(n), KCRT_BUF(bx), KCRT_BUF(by), KCRT_BUF(sums)};
        kcrt_arg a2[] = {KCRT_I32(nb), KCRT_BUF(sums), KCRT_BUF(offs), KCRT_BUF(top)};
        kcrt_arg a3[] = {KCRT_I32(n), KCRT_BUF(offs), KCRT_BUF(by)};
        ASSERT_OK(kcrt_launch(blocks, a1, 4));
        ASSERT_OK(kcrt_launch(blocks, a2, 4));
        ASSERT_OK(kcrt_launch(add, a3, 3));
        ASSERT_OK(kcrt_finish(rt_ctx));
        int *got = rt_read(by);
        rt_check_i32(v[vi], got, want, (size_t)n);
        free(got), free(x), free(want);
        kcrt_buffer_free(bx), kcrt_buffer_free(by), kcrt_buffer_free(sums), kcrt_buffer_free(offs),
            kcrt_buffer_free(top);
    }
}

/* ---- control flow --------------------------------------------------------------------------------- */

static void test_control_flow_every_variant(void **state)
{
    (void)state;
    const char *v[MAXV];
    int nv = rt_variants("control", v, MAXV), n = 1500;
    assert_int_equal(3, nv);
    rt_rng r = {15};
    int *x = malloc(sizeof(int) * (size_t)n), *want = malloc(sizeof(int) * (size_t)n * 4);
    rt_fill_i32(x, (size_t)n, &r, -2000, 2000);
    for (int i = 0; i < 64; i++) /* every switch case and small products */
        x[i] = i;
    for (int i = 0; i < n; i++) {
        want[4 * i + 0] = ctl_loops(x[i]);
        want[4 * i + 1] = ctl_switch(x[i]);
        want[4 * i + 2] = ctl_find(x[i]);
        want[4 * i + 3] = ctl_logic(x[i]);
    }
    kcrt_buffer *bx = rt_buf_from(x, sizeof(int) * (size_t)n), *bo = rt_buf(sizeof(int) * (size_t)n * 4 + 64);
    for (int vi = 0; vi < nv; vi++) {
        rt_poison(bo, RT_BEEF);
        kcrt_arg args[] = {KCRT_I32(n), KCRT_BUF(bx), KCRT_BUF(bo)};
        ASSERT_OK(kcrt_launch(rt_variant("control", v[vi]), args, 3));
        int *got = rt_read(bo);
        rt_check_i32(v[vi], got, want, (size_t)n * 4);
        assert_int_equal((int)RT_BEEF, got[n * 4]); /* nothing written past the end */
        free(got);
    }
    kcrt_buffer_free(bx), kcrt_buffer_free(bo);
    free(x), free(want);
}

/* ---- vectors, half, bool ------------------------------------------------------------------------------ */

static void test_float4_buffers(void **state)
{
    (void)state;
    int n = 300;
    rt_rng r = {16};
    float *x = malloc(sizeof(float) * 4 * (size_t)n), *y = malloc(sizeof(float) * 4 * (size_t)n);
    rt_fill_f32(x, 4 * (size_t)n, &r, -2, 2);
    rt_fill_f32(y, 4 * (size_t)n, &r, -2, 2);
    float a = 1.75f;
    double *want = malloc(sizeof(double) * 4 * (size_t)n);
    for (int i = 0; i < n; i++) {
        float v[4];
        for (int c = 0; c < 4; c++)
            v[c] = x[4 * i + c] * a + y[4 * i + c];
        v[3] = v[0] - v[1];
        for (int c = 0; c < 4; c++)
            want[4 * i + c] = v[c];
    }
    kcrt_buffer *bx = rt_buf_from(x, 16 * (size_t)n), *by = rt_buf_from(y, 16 * (size_t)n);
    kcrt_arg args[] = {KCRT_I32(n), KCRT_F32(a), KCRT_BUF(bx), KCRT_BUF(by)};
    ASSERT_OK(kcrt_launch(rt_kernel("axpy4"), args, 4));
    float *got = rt_read(by);
    rt_check_f32("y", got, want, 4 * (size_t)n, 1e-6, 1e-6);
    free(got), free(x), free(y), free(want);
    kcrt_buffer_free(bx), kcrt_buffer_free(by);
}

static void test_half_buffers_and_scalar(void **state)
{
    (void)state;
    int n = 500;
    rt_rng r = {17};
    uint16_t *x = malloc(2 * (size_t)n);
    for (int i = 0; i < n; i++)
        x[i] = kcrt_f32_to_f16(rt_uniform(&r, -40, 40));
    uint16_t s = kcrt_f32_to_f16(1.5f);
    kcrt_buffer *bx = rt_buf_from(x, 2 * (size_t)n), *by = rt_buf(2 * (size_t)n), *bf = rt_buf(4 * (size_t)n);
    rt_poison(by, RT_BEEF), rt_poison(bf, RT_NAN);
    kcrt_arg args[] = {KCRT_I32(n), KCRT_F16(s), KCRT_BUF(bx), KCRT_BUF(by), KCRT_BUF(bf)};
    ASSERT_OK(kcrt_launch(rt_kernel("half_scale"), args, 5));
    uint16_t *y = rt_read(by);
    float *f = rt_read(bf);
    for (int i = 0; i < n; i++) {
        float v = kcrt_f16_to_f32(x[i]) * 1.5f; /* exact: 11 + 2 significant bits */
        if (f[i] != v)
            fail_msg("f[%d] = %g, expected %g", i, f[i], v);
        if (y[i] != kcrt_f32_to_f16(v))
            fail_msg("y[%d] = 0x%04x (%g), expected 0x%04x (%g)", i, y[i], kcrt_f16_to_f32(y[i]),
                     kcrt_f32_to_f16(v), v);
    }
    free(x), free(y), free(f);
    kcrt_buffer_free(bx), kcrt_buffer_free(by), kcrt_buffer_free(bf);
}

static void test_half4_buffers(void **state)
{
    (void)state;
    int n = 256;
    rt_rng r = {18};
    uint16_t *x = malloc(8 * (size_t)n);
    double *want = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < 4 * n; i++)
        x[i] = kcrt_f32_to_f16(rt_uniform(&r, -8, 8));
    for (int i = 0; i < n; i++)
        want[i] =
            ((kcrt_f16_to_f32(x[4 * i]) + kcrt_f16_to_f32(x[4 * i + 1])) + kcrt_f16_to_f32(x[4 * i + 2])) +
            kcrt_f16_to_f32(x[4 * i + 3]);
    kcrt_buffer *bx = rt_buf_from(x, 8 * (size_t)n), *bo = rt_buf(4 * (size_t)n);
    rt_poison(bo, RT_NAN);
    kcrt_arg args[] = {KCRT_I32(n), KCRT_BUF(bx), KCRT_BUF(bo)};
    ASSERT_OK(kcrt_launch(rt_kernel("half4_sum"), args, 3));
    float *got = rt_read(bo);
    rt_check_f32("out", got, want, (size_t)n, 0, 0);
    free(got), free(x), free(want);
    kcrt_buffer_free(bx), kcrt_buffer_free(bo);
}

/* One launch of texels (kernels/texels.kc) in variant TX=<tx> over n
 * random elements, against C; the buffers are freed after it, so that
 * the next launch reuses their memory (and its texel views) as spares. */
static void run_texels(int tx, int n, uint64_t seed)
{
    rt_rng r = {seed};
    float *x = malloc(16 * (size_t)n), *w = malloc(4 * (size_t)n);
    int *k = malloc(4 * (size_t)n);
    uint32_t *u = malloc(16 * (size_t)n), *m = malloc(4 * (size_t)n);
    uint16_t *h = malloc(8 * (size_t)n);
    rt_fill_f32(x, 4 * (size_t)n, &r, -2, 2);
    rt_fill_f32(w, (size_t)n, &r, -2, 2);
    rt_fill_i32(k, (size_t)n, &r, -1000, 1000);
    for (int i = 0; i < 4 * n; i++)
        u[i] = (uint32_t)rt_next(&r);
    for (int i = 0; i < n; i++)
        m[i] = (uint32_t)rt_next(&r);
    for (int i = 0; i < 4 * n; i++)
        h[i] = kcrt_f32_to_f16(ldexpf((float)(rt_next(&r) % 2001) - 1000, -9)); /* [-1.95, 1.95] */
    kcrt_buffer *bx = rt_buf_from(x, 16 * (size_t)n), *bw = rt_buf_from(w, 4 * (size_t)n),
                *bk = rt_buf_from(k, 4 * (size_t)n), *bu = rt_buf_from(u, 16 * (size_t)n),
                *bm = rt_buf_from(m, 4 * (size_t)n), *bh = rt_buf_from(h, 8 * (size_t)n), *by = rt_buf(16 * (size_t)n),
                *bz = rt_buf(4 * (size_t)n);
    rt_poison(by, RT_BEEF), rt_poison(bz, RT_BEEF);
    kcrt_kernel *kernel;
    ASSERT_OK(kcrt_kernel_get_variant(rt_bundle, "texels", tx ? "TX=1" : "TX=0", &kernel));
    kcrt_arg args[] = {KCRT_I32(n),  KCRT_BUF(bx), KCRT_BUF(bw), KCRT_BUF(bk), KCRT_BUF(bu),
                       KCRT_BUF(bm), KCRT_BUF(bh), KCRT_BUF(by), KCRT_BUF(bz)};
    ASSERT_OK(kcrt_launch(kernel, args, 9));
    float *y = rt_read(by);
    int *z = rt_read(bz);
    for (int i = 0; i < n; i++) {
        float want[4] = {x[4 * i], x[4 * i + 1] * w[i] + (float)k[i], x[4 * i + 2] + kcrt_f16_to_f32(h[4 * i + 2]),
                         x[4 * i + 3] - kcrt_f16_to_f32(h[4 * i])};
        int wz = (int)((u[4 * i] ^ u[4 * i + 3]) + m[i]) - k[n - 1 - i];
        if (memcmp(&y[4 * i], want, 16) != 0 || z[i] != wz)
            fail_msg("TX=%d, n=%d: element %d: y (%g %g %g %g), z %d; want (%g %g %g %g), %d", tx, n, i, y[4 * i],
                     y[4 * i + 1], y[4 * i + 2], y[4 * i + 3], z[i], want[0], want[1], want[2], want[3], wz);
    }
    free(x), free(w), free(k), free(u), free(m), free(h), free(y), free(z);
    kcrt_buffer *all[] = {bx, bw, bk, bu, bm, bh, by, bz};
    for (int i = 0; i < 8; i++)
        kcrt_buffer_free(all[i]);
}

/* Texel reads give the storage buffers' bits (both variants against the
 * same C), at sizes that reuse freed memory with its views and at one
 * past the sizes a view was first made for. */
static void test_texel_reads(void **state)
{
    (void)state;
    const int sizes[] = {1, 63, 300, 4097, 300, 20000};
    for (size_t s = 0; s < sizeof(sizes) / sizeof(*sizes); s++)
        for (int tx = 0; tx <= 1; tx++)
            run_texels(tx, sizes[s], 40 + s);
}

static void test_int_vector_buffers(void **state)
{
    (void)state;
    int n = 200;
    rt_rng r = {19};
    int *a = malloc(8 * (size_t)n);
    uint32_t *b = malloc(16 * (size_t)n);
    rt_fill_i32(a, 2 * (size_t)n, &r, -100000, 100000);
    for (int i = 0; i < 4 * n; i++)
        b[i] = (uint32_t)rt_next(&r);
    kcrt_buffer *ba = rt_buf_from(a, 8 * (size_t)n), *bb = rt_buf_from(b, 16 * (size_t)n);
    kcrt_buffer *bc = rt_buf(8 * (size_t)n), *bd = rt_buf(16 * (size_t)n);
    rt_poison(bc, RT_BEEF), rt_poison(bd, RT_BEEF);
    kcrt_arg args[] = {KCRT_I32(n), KCRT_BUF(ba), KCRT_BUF(bb), KCRT_BUF(bc), KCRT_BUF(bd)};
    ASSERT_OK(kcrt_launch(rt_kernel("ints"), args, 5));
    int *c = rt_read(bc);
    uint32_t *d = rt_read(bd);
    for (int i = 0; i < n; i++) {
        const uint32_t *q = &b[4 * i];
        int wc[2] = {a[2 * i] + a[2 * i + 1], a[2 * i] * 3 - a[2 * i + 1]};
        uint32_t wd[4] = {q[3], q[2] ^ q[1], q[0] >> 3, q[0] + q[1] + q[2] + q[3]};
        rt_check_i32("c", &c[2 * i], wc, 2);
        if (memcmp(&d[4 * i], wd, 16) != 0)
            fail_msg("d[%d] differs", i);
    }
    free(a), free(b), free(c), free(d);
    kcrt_buffer_free(ba), kcrt_buffer_free(bb), kcrt_buffer_free(bc), kcrt_buffer_free(bd);
}

static void test_bool_buffers_and_scalar(void **state)
{
    (void)state;
    int n = 333;
    rt_rng r = {20};
    int *x = malloc(4 * (size_t)n);
    rt_fill_i32(x, (size_t)n, &r, -50, 50);
    kcrt_buffer *bx = rt_buf_from(x, 4 * (size_t)n), *bp = rt_buf(4 * (size_t)n), *bc = rt_buf(4 * (size_t)n);
    for (int invert = 0; invert < 2; invert++) {
        rt_poison(bp, RT_BEEF), rt_poison(bc, RT_BEEF);
        kcrt_arg args[] = {KCRT_I32(n), KCRT_BOOL(invert), KCRT_BUF(bx), KCRT_BUF(bp), KCRT_BUF(bc)};
        ASSERT_OK(kcrt_launch(rt_kernel("bools"), args, 5));
        uint32_t *p = rt_read(bp);
        int *c = rt_read(bc);
        for (int i = 0; i < n; i++) {
            int want = (x[i] > 0) != invert;
            if (p[i] != (uint32_t)want || c[i] != want)
                fail_msg("invert=%d: pos[%d] = %u, count[%d] = %d, expected %d", invert, i, p[i], i, c[i],
                         want);
        }
        free(p), free(c);
    }
    free(x);
    kcrt_buffer_free(bx), kcrt_buffer_free(bp), kcrt_buffer_free(bc);
}

/* ---- atomics ---------------------------------------------------------------------------------------- */

static void test_atomics_every_variant(void **state)
{
    (void)state;
    const char *v[MAXV];
    int nv = rt_variants("histogram", v, MAXV), n = 2000, bins = 13;
    assert_int_equal(3, nv);
    rt_rng r = {21};
    int *x = malloc(4 * (size_t)n), hist[13] = {0};
    rt_fill_i32(x, (size_t)n, &r, -5000, 5000);
    x[1234] = 12345;
    double fsum = 0;
    uint32_t usum = 0;
    int lo = x[0], hi = x[0];
    for (int i = 0; i < n; i++) {
        hist[((x[i] % bins) + bins) % bins]++;
        fsum += (x[i] & 255) * 0.5;
        usum += (uint32_t)(x[i] & 1023);
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    kcrt_buffer *bx = rt_buf_from(x, 4 * (size_t)n), *bh = rt_buf(4 * bins), *bf = rt_buf(4), *bu = rt_buf(4);
    kcrt_buffer *bm = rt_buf(16);
    for (int vi = 0; vi < nv; vi++) {
        int zero[13] = {0}, mm0[4] = {2147483647, -2147483647 - 1, -1, 0};
        ASSERT_OK(kcrt_buffer_write(bh, 0, zero, sizeof(zero)));
        ASSERT_OK(kcrt_buffer_write(bf, 0, zero, 4));
        ASSERT_OK(kcrt_buffer_write(bu, 0, zero, 4));
        ASSERT_OK(kcrt_buffer_write(bm, 0, mm0, 16));
        kcrt_arg a1[] = {KCRT_I32(n), KCRT_I32(bins), KCRT_BUF(bx), KCRT_BUF(bh), KCRT_BUF(bf), KCRT_BUF(bu)};
        kcrt_arg a2[] = {KCRT_I32(n), KCRT_BUF(bx), KCRT_BUF(bm)};
        ASSERT_OK(kcrt_launch(rt_variant("histogram", v[vi]), a1, 6));
        ASSERT_OK(kcrt_launch(rt_variant("minmax", v[vi]), a2, 3));
        int *gh = rt_read(bh), *gm = rt_read(bm);
        float *gf = rt_read(bf);
        uint32_t *gu = rt_read(bu);
        rt_check_i32("hist", gh, hist, (size_t)bins);
        rt_check_f32("fsum", gf, &fsum, 1, 0, 0); /* multiples of 0.5 below 2^23: exact in any order */
        assert_int_equal(usum, gu[0]);
        int wm[4] = {lo, hi, 1234, 1};
        rt_check_i32("minmax", gm, wm, 4);
        free(gh), free(gm), free(gf), free(gu);
    }
    free(x);
    kcrt_buffer_free(bx), kcrt_buffer_free(bh), kcrt_buffer_free(bf), kcrt_buffer_free(bu),
        kcrt_buffer_free(bm);
}

static void test_float_atomics_in_shared_memory(void **state)
{
    (void)state;
    int n = 1000;
    rt_rng r = {22};
    float *x = malloc(4 * (size_t)n);
    double want = 0;
    for (int i = 0; i < n; i++) { /* eighths: every partial sum exact */
        x[i] = (float)rt_int(&r, -80, 80) / 8.0f;
        want += x[i];
    }
    kcrt_buffer *bx = rt_buf_from(x, 4 * (size_t)n), *bt = rt_buf(4);
    const char *v[MAXV];
    int nv = rt_variants("fsum_shared", v, MAXV);
    for (int vi = 0; vi < nv; vi++) {
        float zero = 0;
        ASSERT_OK(kcrt_buffer_write(bt, 0, &zero, 4));
        kcrt_arg args[] = {KCRT_I32(n), KCRT_BUF(bx), KCRT_BUF(bt)};
        ASSERT_OK(kcrt_launch(rt_variant("fsum_shared", v[vi]), args, 3));
        float *got = rt_read(bt);
        rt_check_f32(v[vi], got, &want, 1, 0, 0);
        free(got);
    }
    free(x);
    kcrt_buffer_free(bx), kcrt_buffer_free(bt);
}

/* ---- subgroups ------------------------------------------------------------------------------------------
 */

/* Checks one subgroup (the lanes in idx) of subgroup_ops' output. */
static void check_subgroup(const int *x, const float *f, const int *out, const float *fout, const int *idx,
                           int cnt)
{
    int sum = 0, lo = x[idx[0]], hi = x[idx[0]];
    double fs = 0;
    for (int j = 0; j < cnt; j++) {
        int v = x[idx[j]];
        sum += v, fs += f[idx[j]];
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    for (int j = 0; j < cnt; j++) {
        const int *o = &out[6 * idx[j]];
        int want[5] = {sum, lo, hi, x[idx[(j + 1) % cnt]], x[idx[0]]};
        rt_check_i32("subgroup", o, want, 5);
        double d = fabs(fout[idx[j]] - fs);
        if (d > 1e-4 * (1 + fabs(fs)))
            fail_msg("subgroup float sum %g, expected %g", fout[idx[j]], fs);
    }
}

static void test_subgroups_every_variant(void **state)
{
    (void)state;
    const char *v[MAXV];
    int nv = rt_variants("subgroup_ops", v, MAXV), n = 512;
    assert_int_equal(3, nv);
    rt_rng r = {23};
    int *x = malloc(4 * (size_t)n);
    float *f = malloc(4 * (size_t)n);
    rt_fill_i32(x, (size_t)n, &r, -1000, 1000);
    rt_fill_f32(f, (size_t)n, &r, -1, 1);
    kcrt_buffer *bx = rt_buf_from(x, 4 * (size_t)n), *bf = rt_buf_from(f, 4 * (size_t)n);
    kcrt_buffer *bo = rt_buf(24 * (size_t)n), *bfo = rt_buf(4 * (size_t)n), *bi = rt_buf(16);
    for (int vi = 0; vi < nv; vi++) {
        rt_poison(bo, RT_BEEF), rt_poison(bfo, RT_NAN), rt_poison(bi, RT_BEEF);
        kcrt_arg args[] = {KCRT_I32(n),  KCRT_BUF(bx),  KCRT_BUF(bf),
                           KCRT_BUF(bo), KCRT_BUF(bfo), KCRT_BUF(bi)};
        ASSERT_OK(kcrt_launch(rt_variant("subgroup_ops", v[vi]), args, 6));
        int *out = rt_read(bo), *info = rt_read(bi);
        float *fout = rt_read(bfo);
        int size = info[0], wg = info[1];
        assert_true(size >= 1 && size <= 128);
        assert_int_equal((int)kcrt_device_info_get(rt_ctx)->subgroup_size, size);
        /* which lanes form a subgroup: the kernel reports subgroup id and lane */
        for (int g = 0; g < n / wg; g++)
            for (int sg = 0; sg * size < wg; sg++) {
                int idx[128], cnt = 0;
                for (int l = 0; l < size; l++)
                    for (int i = g * wg; i < (g + 1) * wg; i++)
                        if (out[6 * i + 5] == sg * 1000 + l)
                            idx[cnt++] = i;
                assert_int_equal(size < wg ? size : wg, cnt);
                check_subgroup(x, f, out, fout, idx, cnt);
            }
        free(out), free(info), free(fout);
    }
    free(x), free(f);
    kcrt_buffer_free(bx), kcrt_buffer_free(bf), kcrt_buffer_free(bo), kcrt_buffer_free(bfo),
        kcrt_buffer_free(bi);
}

/* ---- scans, relative shuffles, bits, log10f, fmodf -------------------------------------------------------
 */

/* A float ulp at v (2^-149 below 2^-126). */
static double ulp_at(double v)
{
    int e;
    frexp(v, &e);
    return ldexp(1.0, (e - 1 < -126 ? -126 : e - 1) - 23);
}

/* x as a device that flushes float subnormals sees it (NVIDIA's Vulkan
 * driver does; lavapipe does not): kc asks for no DenormPreserve mode, so
 * either is right (docs/math.md). */
static float ftzf(float x)
{
    return x != 0 && fabsf(x) < FLT_MIN ? copysignf(0.0f, x) : x;
}

static bool same_float(float a, float b)
{
    return !memcmp(&a, &b, 4) || (isnan(a) && isnan(b)); /* a NaN's sign is unspecified */
}

/* fmodf(p, q) as kc computes it exactly: bit for bit, with or without
 * subnormals flushed (pf: p as the device computed it from flushed
 * operands). */
static bool fmod_ok(float got, float p, float pf, float q)
{
    float m = fmodf(p, q);
    return same_float(got, m) || same_float(got, ftzf(m)) || same_float(got, ftzf(fmodf(ftzf(pf), ftzf(q))));
}

typedef struct scan_case {
    const int *x;
    const float *f;
    const int *out;
    const float *fout;
} scan_case;

/* One subgroup of scans_bits' output: idx lists its lanes in lane order. */
static void check_scan_subgroup(const scan_case *c, const int *idx, int cnt)
{
    int inc = 0, some = 0;
    double finc = 0;
    for (int j = 0; j < cnt; j++) {
        const int *o = &c->out[10 * idx[j]];
        int v = c->x[idx[j]];
        int want[2] = {inc + v, inc};
        rt_check_i32("subgroup scan", o, want, 2);
        inc += v;
        finc += c->f[idx[j]];
        if (fabs(c->fout[5 * idx[j]] - finc) > 1e-5 * (j + 1))
            fail_msg("float inclusive scan at lane %d: %g, expected %g", j, c->fout[5 * idx[j]], finc);
        if (j >= 1 && o[2] != c->x[idx[j - 1]])
            fail_msg("shuffle_up at lane %d: %d, expected %d", j, o[2], c->x[idx[j - 1]]);
        if (j + 2 < cnt && o[3] != c->x[idx[j + 2]])
            fail_msg("shuffle_down at lane %d: %d, expected %d", j, o[3], c->x[idx[j + 2]]);
        if ((j ^ 1) < cnt && o[4] != c->x[idx[j ^ 1]])
            fail_msg("shuffle_xor 1 at lane %d: %d, expected %d", j, o[4], c->x[idx[j ^ 1]]);
        if ((j ^ 3) < cnt && o[5] != c->x[idx[j ^ 3]])
            fail_msg("shuffle_xor 3 at lane %d: %d, expected %d", j, o[5], c->x[idx[j ^ 3]]);
        int want_some[2] = {-7, -7};
        if (j % 3 != 0)
            want_some[0] = some + v, want_some[1] = some, some += v;
        rt_check_i32("scan over the active lanes", o + 6, want_some, 2);
        if (o[9] != __builtin_popcount((unsigned)v))
            fail_msg("kc_popcount(%d) = %d", v, o[9]);
    }
}

static void test_scans_and_bits_every_variant(void **state)
{
    (void)state;
    const char *v[MAXV];
    int nv = rt_variants("scans_bits", v, MAXV), n = 384;
    assert_int_equal(3, nv);
    rt_rng r = {29};
    int *x = malloc(4 * (size_t)n);
    float *f = malloc(4 * (size_t)n), *p = malloc(4 * (size_t)n), *q = malloc(4 * (size_t)n);
    uint32_t *u = malloc(4 * (size_t)n);
    rt_fill_i32(x, (size_t)n, &r, -100000, 100000);
    rt_fill_f32(f, (size_t)n, &r, -1, 1);
    for (int i = 0; i < n; i++) {
        u[i] = (uint32_t)rt_next(&r);
        p[i] = ldexpf(rt_uniform(&r, 1, 2), rt_int(&r, -140, 120)); /* subnormal to huge */
        q[i] = ldexpf(rt_uniform(&r, 1, 2), rt_int(&r, -149, 20)) * (i % 2 ? 1 : -1);
    }
    kcrt_buffer *bx = rt_buf_from(x, 4 * (size_t)n), *bf = rt_buf_from(f, 4 * (size_t)n),
                *bu = rt_buf_from(u, 4 * (size_t)n), *bp = rt_buf_from(p, 4 * (size_t)n),
                *bq = rt_buf_from(q, 4 * (size_t)n);
    kcrt_buffer *bo = rt_buf(40 * (size_t)n), *bfo = rt_buf(20 * (size_t)n), *buo = rt_buf(8 * (size_t)n);
    for (int vi = 0; vi < nv; vi++) {
        rt_poison(bo, RT_BEEF), rt_poison(bfo, RT_NAN), rt_poison(buo, RT_BEEF);
        kcrt_arg args[] = {KCRT_I32(n),  KCRT_BUF(bx), KCRT_BUF(bf),  KCRT_BUF(bu),
                           KCRT_BUF(bp), KCRT_BUF(bq), KCRT_BUF(bo), KCRT_BUF(bfo), KCRT_BUF(buo)};
        ASSERT_OK(kcrt_launch(rt_variant("scans_bits", v[vi]), args, 9));
        int *out = rt_read(bo);
        float *fout = rt_read(bfo);
        uint32_t *uout = rt_read(buo);
        int size = (int)kcrt_device_info_get(rt_ctx)->subgroup_size, wg = 32 << vi;
        scan_case c = {x, f, out, fout};
        for (int g = 0; g < n / wg; g++)
            for (int sg = 0; sg * size < wg; sg++) {
                int idx[128], cnt = 0;
                for (int l = 0; l < size; l++)
                    for (int i = g * wg; i < (g + 1) * wg; i++)
                        if (out[10 * i + 8] == sg * 1000 + l)
                            idx[cnt++] = i;
                assert_int_equal(size < wg ? size : wg, cnt);
                check_scan_subgroup(&c, idx, cnt);
            }
        for (int i = 0; i < n; i++) {
            uint32_t rev = 0;
            for (int b = 0; b < 32; b++)
                rev |= (u[i] >> b & 1u) << (31 - b);
            uint32_t counts = (uint32_t)__builtin_popcount(u[i]) + ((uint32_t)__builtin_popcount(~u[i]) << 8);
            if (uout[2 * i] != rev || uout[2 * i + 1] != counts)
                fail_msg("bits of 0x%08x: reversed 0x%08x (0x%08x), counts 0x%x (0x%x)", u[i], uout[2 * i], rev,
                         uout[2 * i + 1], counts);
            double l = log10((double)p[i]), lf = log10((double)ftzf(p[i]));
            if (!(fabs(fout[5 * i + 1] - l) <= ulp_at(l) || fout[5 * i + 1] == lf))
                fail_msg("log10f(%a) = %a, expected %a", p[i], fout[5 * i + 1], l);
            if (!fmod_ok(fout[5 * i + 2], p[i], p[i], q[i]) ||
                !fmod_ok(fout[5 * i + 3], -p[i] * 1e6f, -ftzf(p[i]) * 1e6f, q[i]))
                fail_msg("fmodf(%a, %a) = %a (%a), fmodf(%a, %a) = %a (%a)", p[i], q[i], fout[5 * i + 2],
                         fmodf(p[i], q[i]), -p[i] * 1e6f, q[i], fout[5 * i + 3], fmodf(-p[i] * 1e6f, q[i]));
            /* docs/math.md: within 2 ulp; where subnormals flush, of the
             * flushed arguments' atan2, and 0 for a result below 2^-125 */
            double a = atan2((double)q[i], (double)f[i]), af = atan2((double)ftzf(q[i]), (double)ftzf(f[i]));
            float g = fout[5 * i + 4];
            if (!(fabs(g - a) <= 2 * ulp_at(a) || fabs(g - af) <= 2 * ulp_at(af) || (g == 0 && fabs(a) < 0x1p-125)))
                fail_msg("atan2f(%a, %a) = %a, expected %a", q[i], f[i], g, a);
        }
        free(out), free(fout), free(uout);
    }
    free(x), free(f), free(p), free(q), free(u);
    kcrt_buffer_free(bx), kcrt_buffer_free(bf), kcrt_buffer_free(bu), kcrt_buffer_free(bp),
        kcrt_buffer_free(bq), kcrt_buffer_free(bo), kcrt_buffer_free(bfo), kcrt_buffer_free(buo);
}

/* ---- kc_fast_* -------------------------------------------------------------------------------------------
 */

static void test_fast_math(void **state)
{
    (void)state;
    int n = 400;
    rt_rng r = {24};
    float *x = malloc(4 * (size_t)n), *p = malloc(4 * (size_t)n);
    rt_fill_f32(x, (size_t)n, &r, -3, 3);
    rt_fill_f32(p, (size_t)n, &r, 0.1f, 4);
    kcrt_buffer *bx = rt_buf_from(x, 4 * (size_t)n), *bp = rt_buf_from(p, 4 * (size_t)n);
    kcrt_buffer *bo = rt_buf(48 * (size_t)n);
    rt_poison(bo, RT_NAN);
    kcrt_arg args[] = {KCRT_I32(n), KCRT_BUF(bx), KCRT_BUF(bp), KCRT_BUF(bo)};
    ASSERT_OK(kcrt_launch(rt_kernel("fast_math"), args, 4));
    float *o = rt_read(bo);
    /* Vulkan's precision for these (SPIR-V GLSL.std.450 in the Vulkan spec), rounded up */
    static const struct {
        const char *name;
        double rtol, atol;
    } tol[12] = {{"sin", 0, 1e-3},    {"cos", 0, 1e-3},     {"exp", 1e-4, 1e-6},  {"exp2", 1e-4, 1e-6},
                 {"log", 1e-4, 1e-4}, {"log2", 1e-4, 1e-4}, {"sqrt", 1e-5, 1e-6}, {"rsqrt", 1e-5, 1e-6},
                 {"pow", 1e-3, 1e-4}, {"tanh", 1e-3, 1e-3}, {"div", 1e-5, 1e-7},  {"tan", 2e-3, 2e-3}};
    for (int i = 0; i < n; i++) {
        double v = x[i], q = p[i];
        double want[12] = {sin(v),  cos(v),      exp(v),    exp2(v), log(q), log2(q),
                           sqrt(q), 1 / sqrt(q), pow(q, v), tanh(v), v / q,  tan((double)(x[i] * 0.4f))};
        for (int j = 0; j < 12; j++) {
            double d = fabs(o[12 * i + j] - want[j]);
            if (!(d <= tol[j].atol + tol[j].rtol * fabs(want[j])))
                fail_msg("kc_fast_%sf at x=%g p=%g: %.9g, expected %.9g", tol[j].name, v, q, o[12 * i + j],
                         want[j]);
        }
    }
    free(o), free(x), free(p);
    kcrt_buffer_free(bx), kcrt_buffer_free(bp), kcrt_buffer_free(bo);
}

/* ---- conversions ------------------------------------------------------------------------------------------
 */

static void test_conversions(void **state)
{
    (void)state;
    int n = 500;
    rt_rng r = {25};
    float *f = malloc(4 * (size_t)n);
    int *k = malloc(4 * (size_t)n);
    uint32_t *u = malloc(4 * (size_t)n);
    rt_fill_f32(f, (size_t)n, &r, -1000, 1000);
    rt_fill_i32(k, (size_t)n, &r, -(1 << 30), 1 << 30);
    for (int i = 0; i < n; i++)
        u[i] = (uint32_t)rt_next(&r);
    f[0] = -2.5f, f[1] = 2.5f, f[2] = -0.75f, f[3] = 999.999f;
    kcrt_buffer *bf = rt_buf_from(f, 4 * (size_t)n), *bk = rt_buf_from(k, 4 * (size_t)n),
                *bu = rt_buf_from(u, 4 * (size_t)n);
    kcrt_buffer *oi = rt_buf(16 * (size_t)n), *ou = rt_buf(12 * (size_t)n), *of = rt_buf(16 * (size_t)n);
    kcrt_buffer *oh = rt_buf(2 * (size_t)n);
    rt_poison(oi, RT_BEEF), rt_poison(ou, RT_BEEF), rt_poison(of, RT_NAN), rt_poison(oh, RT_BEEF);
    kcrt_arg args[] = {KCRT_I32(n),  KCRT_BUF(bf), KCRT_BUF(bk), KCRT_BUF(bu),
                       KCRT_BUF(oi), KCRT_BUF(ou), KCRT_BUF(of), KCRT_BUF(oh)};
    ASSERT_OK(kcrt_launch(rt_kernel("convert"), args, 8));
    int *gi = rt_read(oi);
    uint32_t *gu = rt_read(ou), *gf = rt_read(of);
    uint16_t *gh = rt_read(oh);
    /* NVIDIA's Vulkan driver (580) folds (float)(half)x to x: a known
     * deviation, counted and printed, not hidden */
    const kcrt_device_info *dev = kcrt_device_info_get(rt_ctx);
    bool nvidia_vulkan = rt_on_vulkan() && strcmp(dev->vendor, "nvidia") == 0;
    int dropped_round_trips = 0;
    for (int i = 0; i < n; i++) {
        float x = f[i], a = x < 0 ? -x : x, fu, fk = (float)k[i], fuu = (float)u[i],
              fh = kcrt_f16_to_f32(kcrt_f32_to_f16(x));
        uint32_t xb, masked = u[i] & 0x7f7fffffu;
        memcpy(&xb, &x, 4);
        memcpy(&fu, &masked, 4);
        int32_t wrapped = (int32_t)((uint32_t)k[i] * 7u); /* the device's int multiply wraps */
        int wi[4] = {(int)x, (int)xb, wrapped / 3, (int)((int64_t)k[i] * 100003 % 65521)};
        uint32_t wu[3] = {(uint32_t)a, xb, (uint32_t)(((uint64_t)u[i] * 2654435761u) >> 32)};
        float wf[4] = {fk, fuu, fu, fh};
        float g3;
        memcpy(&g3, &gf[4 * i + 3], 4);
        if (nvidia_vulkan && g3 == x && fh != x) /* docs/gpu-validation.md: its compiler drops the round trip */
            wf[3] = x, dropped_round_trips++;
        rt_check_i32("oi", &gi[4 * i], wi, 4);
        if (memcmp(&gu[3 * i], wu, 12) != 0)
            fail_msg("ou[%d]: %u %u %u, expected %u %u %u", i, gu[3 * i], gu[3 * i + 1], gu[3 * i + 2], wu[0],
                     wu[1], wu[2]);
        if (memcmp(&gf[4 * i], wf, 16) != 0)
            fail_msg("of[%d] differs: %a %a %a %a, expected %a %a %a %a", i, ((float *)gf)[4 * i],
                     ((float *)gf)[4 * i + 1], ((float *)gf)[4 * i + 2], ((float *)gf)[4 * i + 3], wf[0],
                     wf[1], wf[2], wf[3]);
        if (gh[i] != kcrt_f32_to_f16(x * 0.01f))
            fail_msg("oh[%d] = 0x%04x, expected 0x%04x", i, gh[i], kcrt_f32_to_f16(x * 0.01f));
    }
    if (dropped_round_trips)
        print_message("    %s: (float)(half)x came back unrounded in %d of %d elements (a known driver deviation)\n",
                      dev->name, dropped_round_trips, n);
    free(f), free(k), free(u), free(gi), free(gu), free(gf), free(gh);
    kcrt_buffer_free(bf), kcrt_buffer_free(bk), kcrt_buffer_free(bu), kcrt_buffer_free(oi),
        kcrt_buffer_free(ou), kcrt_buffer_free(of), kcrt_buffer_free(oh);
}

/* half from and to integers and bools, against the C compiler's own
 * _Float16 conversions. The integers reach past what a half holds (65504)
 * and past what a float holds exactly (2^24), where a half is infinite. */
static void test_half_integer_conversions(void **state)
{
    (void)state;
    int n = 700;
    rt_rng r = {26};
    int *k = malloc(4 * (size_t)n);
    uint32_t *u = malloc(4 * (size_t)n);
    _Float16 *h = malloc(2 * (size_t)n);
    for (int i = 0; i < n; i++) {
        int range = i % 3 == 0 ? 3000 : i % 3 == 1 ? 70000 : 1 << 30;
        k[i] = (int)rt_uniform(&r, (float)-range, (float)range);
        u[i] = (uint32_t)rt_next(&r) >> (i % 20);
        h[i] = (_Float16)rt_uniform(&r, i & 1 ? 0 : -30000, 30000);
    }
    int edges[] = {2049, 2051, -2049, 65504, 65519, 65520, -65520, 16777217, INT32_MIN, INT32_MAX, 0};
    memcpy(k, edges, sizeof edges);
    h[0] = (_Float16)-0.0f, h[1] = (_Float16)0.75f, h[2] = (_Float16)-1.5f, h[3] = (_Float16)65504.0f;
    h[5] = (_Float16)65504.0f, h[7] = (_Float16)0.999f;
    kcrt_buffer *bk = rt_buf_from(k, 4 * (size_t)n), *bu = rt_buf_from(u, 4 * (size_t)n),
                *bh = rt_buf_from(h, 2 * (size_t)n);
    kcrt_buffer *oh = rt_buf(8 * (size_t)n), *oi = rt_buf(16 * (size_t)n), *o4 = rt_buf(8 * (size_t)n);
    rt_poison(oh, RT_BEEF), rt_poison(oi, RT_BEEF), rt_poison(o4, RT_BEEF);
    kcrt_arg args[] = {KCRT_I32(n), KCRT_BUF(bk), KCRT_BUF(bu), KCRT_BUF(bh),
                       KCRT_BUF(oh), KCRT_BUF(oi), KCRT_BUF(o4)};
    ASSERT_OK(kcrt_launch(rt_kernel("half_ints"), args, 7));
    _Float16 *gh = rt_read(oh), *g4 = rt_read(o4);
    int *gi = rt_read(oi);
    for (int i = 0; i < n; i++) {
        _Float16 wh[4] = {(_Float16)k[i], (_Float16)u[i], (_Float16)(k[i] > 0), (_Float16)(long long)k[i]};
        _Float16 w4[4] = {(_Float16)k[i], (_Float16)(int)(0u - (uint32_t)k[i]), (_Float16)(k[i] / 3), (_Float16)7};
        int wi[4] = {(int)h[i], i & 1 ? (int)(uint32_t)h[i] : -1, h[i] != 0, h[i] != 0 ? 3 : 4};
        if (memcmp(&gh[4 * i], wh, 8) != 0 || memcmp(&g4[4 * i], w4, 8) != 0)
            fail_msg("element %d (k = %d, u = %u): oh %g %g %g %g o4 %g %g %g %g, expected %g %g %g %g and %g %g %g %g",
                     i, k[i], u[i], (double)gh[4 * i], (double)gh[4 * i + 1], (double)gh[4 * i + 2],
                     (double)gh[4 * i + 3], (double)g4[4 * i], (double)g4[4 * i + 1], (double)g4[4 * i + 2],
                     (double)g4[4 * i + 3], (double)wh[0], (double)wh[1], (double)wh[2], (double)wh[3],
                     (double)w4[0], (double)w4[1], (double)w4[2], (double)w4[3]);
        rt_check_i32("oi", &gi[4 * i], wi, 4);
    }
    free(k), free(u), free(h), free(gh), free(g4), free(gi);
    kcrt_buffer_free(bk), kcrt_buffer_free(bu), kcrt_buffer_free(bh), kcrt_buffer_free(oh), kcrt_buffer_free(oi),
        kcrt_buffer_free(o4);
}

/* ---- multi-dimensional buffers, aliasing, spilled scalars, built-ins
 * ----------------------------------------- */

static void test_multidimensional_buffers(void **state)
{
    (void)state;
    int d = 3, h = 13, w = 21, n = d * h * w;
    rt_rng r = {26};
    float *in = malloc(4 * (size_t)n);
    rt_fill_f32(in, (size_t)n, &r, -5, 5);
    kcrt_buffer *bi = rt_buf_from(in, 4 * (size_t)n), *bo = rt_buf(4 * (size_t)n),
                *bp = rt_buf(4 * (size_t)(h * w));
    rt_poison(bo, RT_NAN), rt_poison(bp, RT_NAN);
    kcrt_arg args[] = {KCRT_I32(d), KCRT_I32(h), KCRT_I32(w), KCRT_BUF(bi), KCRT_BUF(bo), KCRT_BUF(bp)};
    ASSERT_OK(kcrt_launch(rt_kernel("volume"), args, 6));
    float *o = rt_read(bo), *p = rt_read(bp);
    double *wo = malloc(sizeof(double) * (size_t)n), *wp = malloc(sizeof(double) * (size_t)(h * w));
    for (int z = 0; z < d; z++)
        for (int i = 0; i < h * w; i++)
            wo[z * h * w + i] = in[z * h * w + i] * 2.0f + (float)z;
    for (int i = 0; i < h * w; i++)
        wp[i] = in[i] + in[(d - 1) * h * w + i];
    rt_check_f32("out", o, wo, (size_t)n, 0, 0);
    rt_check_f32("plane", p, wp, (size_t)(h * w), 0, 0);
    const kcrt_kernel_info *ki = kcrt_kernel_info_get(rt_kernel("volume"));
    assert_int_equal(3, ki->params[3].ndims);
    assert_string_equal("d h * w *", ki->params[3].extent);
    free(in), free(o), free(p), free(wo), free(wp);
    kcrt_buffer_free(bi), kcrt_buffer_free(bo), kcrt_buffer_free(bp);
}

static void test_may_alias_runs_in_place(void **state)
{
    (void)state;
    int n = 100;
    float x[100];
    double want[100];
    rt_rng r = {27};
    rt_fill_f32(x, 100, &r, -3, 3);
    for (int i = 0; i < n; i++)
        want[i] = x[i] * 1.5f;
    kcrt_buffer *b = rt_buf_from(x, sizeof(x));
    kcrt_arg args[] = {KCRT_I32(n), KCRT_F32(1.5f), KCRT_BUF(b), KCRT_BUF(b)};
    ASSERT_OK(kcrt_launch(rt_kernel("scale_alias"), args, 4));
    float *got = rt_read(b);
    rt_check_f32("x", got, want, 100, 0, 0);
    free(got);
    kcrt_buffer_free(b);
}

static void test_spilled_scalars(void **state)
{
    (void)state;
    kcrt_arg args[41];
    double want[40];
    for (int i = 0; i < 40; i++) {
        switch (i % 4) {
        case 0: args[i] = KCRT_I32(-1000 * i - 7), want[i] = -1000 * i - 7; break;
        case 1: args[i] = KCRT_F32(0.25f * i + 0.5f), want[i] = 0.25 * i + 0.5; break;
        case 2:
            args[i] = KCRT_U32(3000000000u + (unsigned)i), want[i] = (float)(3000000000u + (unsigned)i);
            break;
        default: args[i] = KCRT_BOOL(i % 8 == 3), want[i] = i % 8 == 3; break;
        }
    }
    kcrt_buffer *bo = rt_buf(160);
    args[40] = KCRT_BUF(bo);
    const kcrt_kernel_info *ki = kcrt_kernel_info_get(rt_kernel("spill"));
    assert_true(ki->variants[0].spilled);
    for (int round = 0; round < 3; round++) { /* several launches in one batch, each its own scalars */
        rt_poison(bo, RT_NAN);
        args[1] = KCRT_F32(round + 0.5f), want[1] = round + 0.5;
        ASSERT_OK(kcrt_launch(rt_kernel("spill"), args, 41));
        float *got = rt_read(bo);
        rt_check_f32("out", got, want, 40, 0, 0);
        free(got);
    }
    /* twenty scalars, 80 bytes: push constants, not spilled */
    kcrt_arg many[21];
    int want_sum = 0;
    for (int i = 0; i < 20; i++)
        many[i] = KCRT_I32(i * 1009 - 7000), want_sum += i * 1009 - 7000;
    many[20] = KCRT_BUF(bo);
    rt_poison(bo, RT_BEEF);
    assert_false(kcrt_kernel_info_get(rt_kernel("many_scalars"))->variants[0].spilled);
    ASSERT_OK(kcrt_launch(rt_kernel("many_scalars"), many, 21));
    int *sum = rt_read(bo);
    assert_int_equal(want_sum, sum[0]);
    free(sum);
    kcrt_buffer_free(bo);
}

static void test_scalars_and_builtins_2d(void **state)
{
    (void)state;
    int gx = 3, gy = 2, items = gx * 4 * gy * 2;
    kcrt_buffer *bo = rt_buf(32), *bi = rt_buf(4 * (size_t)(gx * gy * 64) + 16);
    rt_poison(bo, RT_NAN), rt_poison(bi, RT_BEEF);
    kcrt_arg args[] = {KCRT_I32(gx),     KCRT_I32(gy),    KCRT_I32(-42), KCRT_U32(4000000000u),
                       KCRT_F32(0.375f), KCRT_BOOL(true), KCRT_BUF(bo),  KCRT_BUF(bi)};
    ASSERT_OK(kcrt_launch(rt_kernel("scalars"), args, 8));
    float *o = rt_read(bo);
    int *ids = rt_read(bi);
    double want[8] = {-42, (float)4000000000u, 0.375, 0.75, 1, gx, gy, 42};
    rt_check_f32("out", o, want, 8, 0, 0);
    for (int y = 0; y < gy * 2; y++)
        for (int x = 0; x < gx * 4; x++) {
            int lin = y * gx * 4 + x;
            int w[8] = {x, y, x % 4, y % 2, x / 4, y / 2, 0, 1};
            rt_check_i32("ids", &ids[8 * lin], w, 8);
        }
    assert_int_equal((int)RT_BEEF, ids[8 * items]); /* the rest untouched */
    free(o), free(ids);
    kcrt_buffer_free(bo), kcrt_buffer_free(bi);
}

int main(void)
{
    int rc = rt_open_or_skip("test_rt_kernels");
    if (rc)
        return rc;
    if (rt_load_bundle())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_saxpy_every_variant, rt_teardown),
        cmocka_unit_test_teardown(test_reduce_sum_every_variant, rt_teardown),
        cmocka_unit_test_teardown(test_reduce_max_every_variant, rt_teardown),
        cmocka_unit_test_teardown(test_matmul_every_variant, rt_teardown),
        cmocka_unit_test_teardown(test_scan_every_variant, rt_teardown),
        cmocka_unit_test_teardown(test_control_flow_every_variant, rt_teardown),
        cmocka_unit_test_teardown(test_float4_buffers, rt_teardown),
        cmocka_unit_test_teardown(test_half_buffers_and_scalar, rt_teardown),
        cmocka_unit_test_teardown(test_half4_buffers, rt_teardown),
        cmocka_unit_test_teardown(test_int_vector_buffers, rt_teardown),
        cmocka_unit_test_teardown(test_texel_reads, rt_teardown),
        cmocka_unit_test_teardown(test_bool_buffers_and_scalar, rt_teardown),
        cmocka_unit_test_teardown(test_atomics_every_variant, rt_teardown),
        cmocka_unit_test_teardown(test_float_atomics_in_shared_memory, rt_teardown),
        cmocka_unit_test_teardown(test_subgroups_every_variant, rt_teardown),
        cmocka_unit_test_teardown(test_scans_and_bits_every_variant, rt_teardown),
        cmocka_unit_test_teardown(test_fast_math, rt_teardown),
        cmocka_unit_test_teardown(test_conversions, rt_teardown),
        cmocka_unit_test_teardown(test_half_integer_conversions, rt_teardown),
        cmocka_unit_test_teardown(test_multidimensional_buffers, rt_teardown),
        cmocka_unit_test_teardown(test_may_alias_runs_in_place, rt_teardown),
        cmocka_unit_test_teardown(test_spilled_scalars, rt_teardown),
        cmocka_unit_test_teardown(test_scalars_and_builtins_2d, rt_teardown),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    return rt_close_all(failed);
}
