/*
 * test_rt_batch.c — what the runtime does behind the API, read from its
 * counters (kcrt_internal.h): launches between two kcrt_finish calls go
 * into one submission, pipelines are made once per variant, descriptor
 * sets are reused, barriers separate only dependent dispatches, transfers
 * wait for the launches before them; and timed launches. Batches, barriers
 * and descriptor sets are the Vulkan backend's: on HIP and CUDA (one
 * stream, a submission per launch) those checks skip, and what every
 * backend must do — results, waits, modules made once — is still checked.
 * Vulkan also makes a pipeline per set of KC_SPECIALIZE values a variant
 * is launched with, up to a bound, then shares the generic one.
 */
#include "rt_test.h"

static kcrt_stats stats(void)
{
    kcrt_stats s;
    kcrt_stats_get(rt_ctx, &s);
    return s;
}

/* x holds eighths, so y + a * x stays exact for many launches */
static kcrt_buffer *eighths(int n, uint64_t seed, float *host)
{
    rt_rng r = {seed};
    for (int i = 0; i < n; i++)
        host[i] = (float)rt_int(&r, -16, 16) / 8.0f;
    return rt_buf_from(host, sizeof(float) * (size_t)n);
}

static void test_thousand_launches_one_submission(void **state)
{
    (void)state;
    enum { N = 256, LAUNCHES = 1000 };
    float x[N], y[N];
    kcrt_buffer *bx = eighths(N, 1, x), *by = eighths(N, 2, y);
    kcrt_kernel *k = rt_kernel("saxpy");
    kcrt_arg args[] = {KCRT_I32(N), KCRT_F32(1.0f), KCRT_BUF(bx), KCRT_BUF(by)};
    ASSERT_OK(kcrt_launch(k, args, 4)); /* the pipeline, outside the count */
    ASSERT_OK(kcrt_finish(rt_ctx));
    kcrt_stats before = stats();
    for (int i = 0; i < LAUNCHES; i++)
        ASSERT_OK(kcrt_launch(k, args, 4));
    if (rt_on_vulkan()) {
        assert_int_equal(LAUNCHES, kcrt_pending_launches(rt_ctx));
        assert_int_equal(before.submissions, stats().submissions); /* nothing submitted yet */
    }
    ASSERT_OK(kcrt_finish(rt_ctx));
    kcrt_stats after = stats();
    assert_int_equal(0, kcrt_pending_launches(rt_ctx));
    assert_int_equal(LAUNCHES, after.dispatches - before.dispatches);
    assert_int_equal(0, after.pipelines_created - before.pipelines_created);
    if (rt_on_vulkan()) {
        assert_int_equal(1, after.submissions - before.submissions);
        assert_true(after.descriptor_sets_allocated - before.descriptor_sets_allocated <= 1);
        assert_true(after.descriptor_sets_reused - before.descriptor_sets_reused >= LAUNCHES - 1);
        assert_true(after.descriptor_pools_created - before.descriptor_pools_created <= 1);
        assert_int_equal(LAUNCHES - 1, after.barriers - before.barriers); /* each reads what the last wrote */
        assert_int_equal(before.command_buffers_allocated, after.command_buffers_allocated);
    }
    float *got = rt_read(by);
    for (int i = 0; i < N; i++)
        if (got[i] != y[i] + (LAUNCHES + 1) * x[i])
            fail_msg("y[%d] = %g after %d launches, expected %g", i, got[i], LAUNCHES + 1,
                     y[i] + (LAUNCHES + 1) * x[i]);
    free(got);
    kcrt_buffer_free(bx), kcrt_buffer_free(by);
}

static void test_independent_launches_need_no_barrier(void **state)
{
    (void)state;
    RT_NEED_VULKAN();
    enum { N = 128, OUTS = 8 };
    float x[N], y[N];
    kcrt_buffer *bx = eighths(N, 3, x), *outs[OUTS];
    for (int i = 0; i < OUTS; i++)
        outs[i] = eighths(N, 10 + (uint64_t)i, y);
    kcrt_kernel *k = rt_kernel("saxpy");
    ASSERT_OK(kcrt_finish(rt_ctx));
    kcrt_stats before = stats();
    for (int i = 0; i < OUTS; i++) { /* all read x, each writes its own y */
        kcrt_arg args[] = {KCRT_I32(N), KCRT_F32(2.0f), KCRT_BUF(bx), KCRT_BUF(outs[i])};
        ASSERT_OK(kcrt_launch(k, args, 4));
    }
    ASSERT_OK(kcrt_finish(rt_ctx));
    kcrt_stats after = stats();
    assert_int_equal(0, after.barriers - before.barriers);
    assert_int_equal(1, after.submissions - before.submissions);
    /* a write after reads of the same buffer does need one */
    kcrt_arg w[] = {KCRT_I32(N), KCRT_F32(2.0f), KCRT_BUF(outs[0]), KCRT_BUF(bx)};
    kcrt_arg r[] = {KCRT_I32(N), KCRT_F32(2.0f), KCRT_BUF(bx), KCRT_BUF(outs[1])};
    ASSERT_OK(kcrt_launch(k, r, 4));
    ASSERT_OK(kcrt_launch(k, w, 4));
    ASSERT_OK(kcrt_finish(rt_ctx));
    assert_int_equal(1, stats().barriers - after.barriers);
    kcrt_buffer_free(bx);
    for (int i = 0; i < OUTS; i++)
        kcrt_buffer_free(outs[i]);
}

static void test_pipelines_made_once_per_variant(void **state)
{
    (void)state;
    float x[64];
    kcrt_buffer *bx = eighths(64, 4, x), *by = eighths(64, 5, x);
    kcrt_arg args[] = {KCRT_I32(64), KCRT_F32(1.0f), KCRT_BUF(bx), KCRT_BUF(by)};
    kcrt_stats s0 = stats();
    kcrt_kernel *a = rt_variant("saxpy", "SX_WG=32,SX_TM=1"); /* made here, before any launch */
    assert_int_equal(1, stats().pipelines_created - s0.pipelines_created);
    kcrt_kernel *b = rt_variant("saxpy", "SX_WG=128,SX_TM=1");
    assert_int_equal(2, stats().pipelines_created - s0.pipelines_created);
    for (int i = 0; i < 20; i++) {
        ASSERT_OK(kcrt_launch(a, args, 4));
        ASSERT_OK(kcrt_launch(b, args, 4));
    }
    assert_ptr_equal(a, rt_variant("saxpy", "SX_TM=1,SX_WG=32"));
    ASSERT_OK(kcrt_finish(rt_ctx));
    assert_int_equal(2, stats().pipelines_created - s0.pipelines_created);
    kcrt_buffer_free(bx), kcrt_buffer_free(by);
}

/* ---- KC_SPECIALIZE ---- */

enum { SPEC_N = 200 };

static float spec_expected(int op, unsigned add, bool neg, float x)
{
    float v = op == 0 ? x + 1.0f : op == 1 ? x * 2.0f : op == 2 ? x - 3.0f : x + (float)op;
    v = v + (float)add;
    return neg ? -v : v;
}

/* One launch of specialize.kc on fresh inputs, its output poisoned first,
 * checked against the C above. */
static void spec_launch(kcrt_kernel *k, int op, unsigned add, bool neg, uint64_t seed)
{
    float x[SPEC_N];
    rt_rng r = {seed};
    for (int i = 0; i < SPEC_N; i++)
        x[i] = (float)rt_int(&r, -64, 64) / 4.0f;
    kcrt_buffer *bx = rt_buf_from(x, sizeof(x)), *by = rt_buf(sizeof(x));
    rt_poison(by, RT_NAN);
    kcrt_arg args[] = {KCRT_I32(SPEC_N), KCRT_I32(op), KCRT_U32(add), KCRT_BOOL(neg), KCRT_BUF(bx), KCRT_BUF(by)};
    ASSERT_OK(kcrt_launch(k, args, 6));
    float *got = rt_read(by);
    for (int i = 0; i < SPEC_N; i++)
        if (got[i] != spec_expected(op, add, neg, x[i]))
            fail_msg("op %d, add %u, neg %d: y[%d] = %g, expected %g", op, add, neg, i, got[i],
                     spec_expected(op, add, neg, x[i]));
    free(got);
    kcrt_buffer_free(bx), kcrt_buffer_free(by);
}

static void test_specialized_pipelines(void **state)
{
    (void)state;
    kcrt_kernel *k = rt_kernel("specialize");
    kcrt_stats s0 = stats();
    /* INT_MIN is the constant's default (kc_spirv.h): the push constant then, still right */
    static const int ops[] = {0, 1, 2, 3, INT32_MIN};
    uint64_t seed = 40;
    for (int round = 0; round < 2; round++) /* the second round makes nothing */
        for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++)
            for (int neg = 0; neg < 2; neg++)
                spec_launch(k, ops[o], (unsigned)(seed % 10), neg != 0, seed), seed++;
    if (rt_on_vulkan())
        assert_int_equal(10, stats().pipelines_created - s0.pipelines_created);
    /* past 16 sets of values the launches share the generic pipeline */
    for (int op = 4; op < 14; op++)
        spec_launch(k, op, 7, false, seed++);
    if (rt_on_vulkan())
        assert_int_equal(17, stats().pipelines_created - s0.pipelines_created);
    for (int op = 100; op < 103; op++)
        spec_launch(k, op, 1, true, seed++);
    if (rt_on_vulkan())
        assert_int_equal(17, stats().pipelines_created - s0.pipelines_created);
}

/* specialize8.kc: eight specialised scalars, as many as a kernel may name.
 * Sets of values that differ in the first or only in the last make
 * pipelines of their own, and each launch adds its own values. */
static void test_specialized_eight(void **state)
{
    (void)state;
    enum { N = 100 };
    static const int sets[][8] = {{1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 3, 4, 5, 6, 7, 9}, {-1, 2, 3, 4, 5, 6, 7, 8}};
    kcrt_kernel *k = rt_kernel("specialize8");
    kcrt_stats s0 = stats();
    for (int round = 0; round < 2; round++)
        for (int v = 0; v < 3; v++) {
            float x[N];
            rt_rng r = {70 + (uint64_t)(round * 3 + v)};
            for (int i = 0; i < N; i++)
                x[i] = (float)rt_int(&r, -64, 64) / 4.0f;
            kcrt_buffer *bx = rt_buf_from(x, sizeof(x)), *by = rt_buf(sizeof(x));
            rt_poison(by, RT_NAN);
            kcrt_arg args[11] = {KCRT_I32(N)};
            int sum = 0;
            for (int j = 0; j < 8; j++)
                args[1 + j] = KCRT_I32(sets[v][j]), sum += (j + 1) * sets[v][j];
            args[9] = KCRT_BUF(bx), args[10] = KCRT_BUF(by);
            ASSERT_OK(kcrt_launch(k, args, 11));
            float *got = rt_read(by);
            for (int i = 0; i < N; i++)
                if (got[i] != x[i] + (float)sum)
                    fail_msg("set %d: y[%d] = %g, expected %g", v, i, got[i], x[i] + (float)sum);
            free(got);
            kcrt_buffer_free(bx), kcrt_buffer_free(by);
        }
    if (rt_on_vulkan())
        assert_int_equal(3, stats().pipelines_created - s0.pipelines_created);
}

/* Launches specialize.kc with six ops in a context opened with
 * KCRT_SPECIALIZE=env (read when a device opens) and returns the pipelines
 * they made. */
static uint64_t pipelines_with_cap(const char *env)
{
    kcrt_context *ctx = rt_ctx;
    kcrt_bundle *bundle = rt_bundle;
    setenv("KCRT_SPECIALIZE", env, 1);
    kcrt_status s = kcrt_open(&rt_ctx, NULL);
    unsetenv("KCRT_SPECIALIZE");
    if (s != KCRT_OK) {
        rt_ctx = ctx;
        fail_msg("kcrt_open: %s", kcrt_status_name(s));
    }
    assert_int_equal(0, rt_load_bundle());
    kcrt_kernel *k = rt_kernel("specialize");
    kcrt_stats s0 = stats();
    for (int round = 0; round < 2; round++)
        for (int op = -2; op < 4; op++)
            spec_launch(k, op, 3, op % 2 != 0, 60 + (uint64_t)op);
    uint64_t made = stats().pipelines_created - s0.pipelines_created;
    kcrt_bundle_free(rt_bundle);
    kcrt_close(rt_ctx);
    rt_ctx = ctx, rt_bundle = bundle;
    return made;
}

/* KCRT_SPECIALIZE=0: one generic pipeline; =N: N specialised ones, then
 * the generic one for the values that come later (the tests' setting). */
static void test_specialize_cap(void **state)
{
    (void)state;
    RT_NEED_VULKAN();
    assert_int_equal(1, pipelines_with_cap("0"));
    assert_int_equal(3, pipelines_with_cap("2"));
    assert_int_equal(6, pipelines_with_cap("99")); /* more than 16 is 16: one a set of values */
}

/* A KCRT_SPECIALIZE that is not a count fails kcrt_open and says so. */
static void test_specialize_bad_env(void **state)
{
    (void)state;
    RT_NEED_VULKAN();
    static const char *bad[] = {"two", "-1", "2x"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        kcrt_context *ctx = NULL;
        setenv("KCRT_SPECIALIZE", bad[i], 1);
        kcrt_status s = kcrt_open(&ctx, NULL);
        unsetenv("KCRT_SPECIALIZE");
        if (s == KCRT_OK) {
            kcrt_close(ctx);
            fail_msg("KCRT_SPECIALIZE=%s: kcrt_open succeeded", bad[i]);
        }
        assert_int_equal(KCRT_ERROR_BAD_ARGUMENT, s);
        assert_non_null(strstr(kcrt_error(NULL), "KCRT_SPECIALIZE"));
        kcrt_close(ctx); /* a failed open hands out a failed context */
    }
}

static void test_pools_are_recycled(void **state)
{
    (void)state;
    RT_NEED_VULKAN();
    enum { N = 64, BUFS = 300 };
    float x[N];
    kcrt_buffer *bx = eighths(N, 6, x), *ys[BUFS];
    for (int i = 0; i < BUFS; i++)
        ys[i] = eighths(N, 100 + (uint64_t)i, x);
    kcrt_kernel *k = rt_kernel("saxpy");
    kcrt_stats s0 = stats();
    for (int round = 0; round < 4; round++) { /* 300 different sets per batch: more than one pool holds */
        for (int i = 0; i < BUFS; i++) {
            kcrt_arg args[] = {KCRT_I32(N), KCRT_F32(1.0f), KCRT_BUF(bx), KCRT_BUF(ys[i])};
            ASSERT_OK(kcrt_launch(k, args, 4));
        }
        ASSERT_OK(kcrt_finish(rt_ctx));
    }
    kcrt_stats s1 = stats();
    assert_int_equal(4 * BUFS, s1.descriptor_sets_allocated - s0.descriptor_sets_allocated);
    /* the pools one batch needed are reset and used again: no new ones after the first rounds */
    assert_true(s1.descriptor_pools_created - s0.descriptor_pools_created <= 3 * 3);
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < BUFS; i++) {
            kcrt_arg args[] = {KCRT_I32(N), KCRT_F32(1.0f), KCRT_BUF(bx), KCRT_BUF(ys[i])};
            ASSERT_OK(kcrt_launch(k, args, 4));
        }
        ASSERT_OK(kcrt_finish(rt_ctx));
    }
    assert_int_equal(s1.descriptor_pools_created, stats().descriptor_pools_created);
    kcrt_buffer_free(bx);
    for (int i = 0; i < BUFS; i++)
        kcrt_buffer_free(ys[i]);
}

static void test_long_runs_submit_on_their_own(void **state)
{
    (void)state;
    RT_NEED_VULKAN();
    float x[32];
    kcrt_buffer *bx = eighths(32, 7, x), *by = eighths(32, 8, x);
    kcrt_arg args[] = {KCRT_I32(32), KCRT_F32(0.0f), KCRT_BUF(bx), KCRT_BUF(by)};
    kcrt_kernel *k = rt_kernel("saxpy");
    ASSERT_OK(kcrt_finish(rt_ctx));
    kcrt_stats s0 = stats();
    for (int i = 0; i < 5000; i++) /* past 4096 a batch is submitted without waiting for kcrt_finish */
        ASSERT_OK(kcrt_launch(k, args, 4));
    assert_int_equal(1, stats().submissions - s0.submissions);
    assert_int_equal(5000 - 4096, kcrt_pending_launches(rt_ctx));
    ASSERT_OK(kcrt_finish(rt_ctx));
    assert_int_equal(2, stats().submissions - s0.submissions);
    kcrt_buffer_free(bx), kcrt_buffer_free(by);
}

/* ---- transfers and pending launches ----------------------------------------------------------- */

/* Vulkan with memory the host cannot map (a discrete GPU; KCRT_VULKAN_STAGING=1
 * on lavapipe): a write is a copy recorded in the batch, not a wait. */
static bool writes_are_queued(void)
{
    const char *staged = getenv("KCRT_VULKAN_STAGING");
    return rt_on_vulkan() && (!kcrt_device_info_get(rt_ctx)->unified_memory || (staged && !strcmp(staged, "1")));
}

/* A write is ordered after the launches before it: it waits for them where
 * the host writes the memory itself, and is queued behind them where a
 * copy command does it (the launch still sees the old bytes). */
static void test_write_waits_for_the_launch_before_it(void **state)
{
    (void)state;
    enum { N = 200 };
    float x[N], y[N], x2[N];
    kcrt_buffer *bx = eighths(N, 9, x), *by = eighths(N, 10, y);
    kcrt_arg args[] = {KCRT_I32(N), KCRT_F32(1.0f), KCRT_BUF(bx), KCRT_BUF(by)};
    ASSERT_OK(kcrt_launch(rt_kernel("saxpy"), args, 4));
    for (int i = 0; i < N; i++)
        x2[i] = 1000.0f;
    kcrt_stats w0 = stats();
    ASSERT_OK(kcrt_buffer_write(bx, 0, x2, sizeof(x2))); /* the launch above must see the old x */
    if (writes_are_queued()) {
        assert_int_equal(1, kcrt_pending_launches(rt_ctx));
        assert_int_equal(w0.waits, stats().waits);
    } else {
        assert_int_equal(0, kcrt_pending_launches(rt_ctx));
    }
    float *got = rt_read(by);
    for (int i = 0; i < N; i++)
        if (got[i] != y[i] + x[i])
            fail_msg("y[%d] = %g: the launch saw the later write", i, got[i]);
    free(got);
    /* a read waits too, without kcrt_finish */
    ASSERT_OK(kcrt_launch(rt_kernel("saxpy"), args, 4));
    got = rt_read(by);
    for (int i = 0; i < N; i++)
        assert_true(got[i] == y[i] + x[i] + 1000.0f);
    free(got);
    /* a buffer no pending launch uses is written at once (Vulkan; HIP and CUDA's one stream waits) */
    kcrt_buffer *other = rt_buf(64);
    ASSERT_OK(kcrt_launch(rt_kernel("saxpy"), args, 4));
    kcrt_stats s0 = stats();
    ASSERT_OK(kcrt_buffer_write(other, 0, x2, 64));
    if (rt_on_vulkan()) {
        assert_int_equal(1, kcrt_pending_launches(rt_ctx));
        assert_int_equal(s0.submissions, stats().submissions);
    }
    ASSERT_OK(kcrt_finish(rt_ctx));
    kcrt_buffer_free(bx), kcrt_buffer_free(by), kcrt_buffer_free(other);
}

/* kcrt_buffer_copy sits between the launches like one more: it sees what
 * the launch before it wrote, the launch after it sees its bytes, a later
 * write to its source does not reach the copy, and nothing waits (Vulkan:
 * one batch, no submission). Then its checks: ranges, overlap, NULL. */
static void test_copy_between_buffers_in_order(void **state)
{
    (void)state;
    enum { N = 200, SHIFT = 3 };
    float x[N], y[N], z[N + 3];
    kcrt_buffer *bx = eighths(N, 21, x), *by = eighths(N, 22, y), *bz = eighths(N + 3, 23, z);
    kcrt_arg xy[] = {KCRT_I32(N), KCRT_F32(1.0f), KCRT_BUF(bx), KCRT_BUF(by)};
    kcrt_arg xz[] = {KCRT_I32(N), KCRT_F32(1.0f), KCRT_BUF(bx), KCRT_BUF(bz)};
    kcrt_kernel *k = rt_kernel("saxpy");
    ASSERT_OK(kcrt_launch(k, xy, 4));
    ASSERT_OK(kcrt_finish(rt_ctx)); /* the pipeline, outside the count */
    kcrt_stats s0 = stats();
    ASSERT_OK(kcrt_launch(k, xy, 4)); /* y + 2x */
    /* floats 2 .. N - 1 of y to z from float SHIFT: offsets 8 and 12 bytes */
    ASSERT_OK(kcrt_buffer_copy(bz, 4 * SHIFT, by, 8, 4 * (N - 2)));
    ASSERT_OK(kcrt_launch(k, xy, 4)); /* y + 3x: after the copy, not in z */
    ASSERT_OK(kcrt_launch(k, xz, 4)); /* reads the copied z */
    if (rt_on_vulkan()) {
        assert_int_equal(3, kcrt_pending_launches(rt_ctx));
        assert_int_equal(s0.submissions, stats().submissions);
    }
    float *gy = rt_read(by), *gz = rt_read(bz);
    for (int i = 0; i < N; i++)
        if (gy[i] != y[i] + 3 * x[i])
            fail_msg("y[%d] = %g, expected %g", i, gy[i], y[i] + 3 * x[i]);
    for (int i = 0; i < N + 3; i++) {
        float copied = i >= SHIFT && i < SHIFT + N - 2 ? y[i - 1] + 2 * x[i - 1] : z[i];
        float want = i < N ? copied + x[i] : copied;
        if (gz[i] != want)
            fail_msg("z[%d] = %g, expected %g", i, gz[i], want);
    }
    free(gy), free(gz);
    /* within one buffer, apart */
    ASSERT_OK(kcrt_buffer_copy(by, 0, by, 400, 400));
    gy = rt_read(by);
    assert_memory_equal(gy, gy + 100, 400);
    free(gy);
    /* what it refuses, saying why */
    assert_int_equal(KCRT_ERROR_BAD_ARGUMENT, kcrt_buffer_copy(by, 0, by, 100, 200));
    assert_non_null(strstr(kcrt_error(rt_ctx), "overlap"));
    assert_int_equal(KCRT_ERROR_BAD_ARGUMENT, kcrt_buffer_copy(bz, 0, by, 4, 4 * N));
    assert_non_null(strstr(kcrt_error(rt_ctx), "do not fit"));
    assert_int_equal(KCRT_ERROR_BAD_ARGUMENT, kcrt_buffer_copy(bz, 4 * N + 8, by, 0, 8));
    assert_non_null(strstr(kcrt_error(rt_ctx), "destination"));
    assert_int_equal(KCRT_ERROR_BAD_ARGUMENT, kcrt_buffer_copy(NULL, 0, by, 0, 4));
    ASSERT_OK(kcrt_buffer_copy(bz, 0, by, 0, 0));
    kcrt_buffer_free(bx), kcrt_buffer_free(by), kcrt_buffer_free(bz);
}

/* y = x + y over 64 floats, queued */
static void add_into(kcrt_buffer *bx, kcrt_buffer *by)
{
    kcrt_arg args[] = {KCRT_I32(64), KCRT_F32(1.0f), KCRT_BUF(bx), KCRT_BUF(by)};
    ASSERT_OK(kcrt_launch(rt_kernel("saxpy"), args, 4));
}

static void assert_floats(kcrt_buffer *b, const float *want)
{
    float *got = rt_read(b);
    assert_memory_equal(want, got, 64 * sizeof(float));
    free(got);
}

/* Freeing a buffer that queued work uses does not wait for it: its memory
 * goes to the spares, and the next buffer of its size takes it, holding
 * zeros before anything uses it (a fill in the batch, after the old work),
 * with no new allocation and still no wait. */
static void test_free_does_not_wait_and_memory_is_reused(void **state)
{
    (void)state;
    float x[64], y[64];
    kcrt_buffer *bx = eighths(64, 11, x), *by = eighths(64, 12, y);
    ASSERT_OK(kcrt_finish(rt_ctx));
    kcrt_stats before = stats();
    add_into(bx, by);
    kcrt_buffer_free(by);                  /* pending: not waited for */
    kcrt_buffer *bz = rt_buf(64 * 4);
    float zeros[64] = {0};
    assert_floats(bz, zeros);              /* not used yet: zeros, from the host */
    add_into(bx, bz);                      /* after the fill: bz = x, not x + x + y */
    kcrt_stats mid = stats();
    assert_int_equal(before.waits, mid.waits);
    assert_int_equal(before.buffer_allocations, mid.buffer_allocations);
    assert_int_equal(1, mid.buffers_reused - before.buffers_reused);
    if (rt_on_vulkan())
        assert_int_equal(2, kcrt_pending_launches(rt_ctx));
    assert_floats(bz, x);

    /* the host's first write into memory queued work still uses takes other
     * memory instead of waiting: the pending launch is left alone */
    add_into(bx, bz);
    kcrt_buffer_free(bz);
    kcrt_buffer *bw = rt_buf(64 * 4);
    float w[64];
    for (int i = 0; i < 64; i++)
        w[i] = (float)i - 7.5f;
    kcrt_stats b2 = stats();
    ASSERT_OK(kcrt_buffer_write(bw, 0, w, sizeof w));
    kcrt_stats a2 = stats(); /* the only waits: the write's own copies where memory is not mapped */
    assert_int_equal(a2.transfer_submissions - b2.transfer_submissions, a2.waits - b2.waits);
    if (rt_on_vulkan())
        assert_int_equal(1, kcrt_pending_launches(rt_ctx));
    assert_floats(bw, w);

    /* a part written into a new buffer on busy memory: the rest reads zeros */
    add_into(bx, bw);
    kcrt_buffer_free(bw);
    kcrt_buffer *bp = rt_buf(64 * 4);
    ASSERT_OK(kcrt_buffer_write(bp, 10, w, 13));
    float part[64] = {0};
    memcpy((char *)part + 10, w, 13);
    assert_floats(bp, part);
    kcrt_buffer_free(bx), kcrt_buffer_free(bp);
}

/* The spares hold at most KCRT_BUFFER_SPARE_MB (8 here: main): past it
 * the oldest are freed, after the work that used them. */
static void test_spares_are_bounded(void **state)
{
    (void)state;
    enum { MB = 1 << 20, N = 6 };
    kcrt_buffer *big[N];
    float x[64], y[64];
    kcrt_buffer *bx = eighths(64, 21, x), *by = eighths(64, 22, y);
    for (int i = 0; i < N; i++)
        big[i] = rt_buf((size_t)(3 + i) * MB); /* each its own size class */
    add_into(bx, by);
    for (int i = 0; i < N; i++)
        kcrt_buffer_free(big[i]);
    assert_true(stats().spare_bytes <= 8 * MB);
    ASSERT_OK(kcrt_finish(rt_ctx));
    float want[64];
    for (int i = 0; i < 64; i++)
        want[i] = x[i] + y[i];
    assert_floats(by, want);
    kcrt_buffer_free(bx), kcrt_buffer_free(by);
}

static void test_bundle_free_with_pending_launches(void **state)
{
    (void)state;
    kcrt_bundle *b;
    kcrt_kernel *k;
    ASSERT_OK(kcrt_bundle_load(rt_ctx, RT_BUNDLE, &b));
    ASSERT_OK(kcrt_kernel_get(b, "saxpy", &k));
    float x[64];
    kcrt_buffer *bx = eighths(64, 13, x), *by = eighths(64, 14, x);
    kcrt_arg args[] = {KCRT_I32(64), KCRT_F32(1.0f), KCRT_BUF(bx), KCRT_BUF(by)};
    ASSERT_OK(kcrt_launch(k, args, 4));
    kcrt_bundle_free(b); /* its pipeline is in use: finished first */
    assert_int_equal(0, kcrt_pending_launches(rt_ctx));
    kcrt_buffer_free(bx), kcrt_buffer_free(by);
}

static void test_large_transfers_in_pieces(void **state)
{
    (void)state;
    size_t n = (size_t)(20 << 20) / 4 + 3; /* past the 16 MiB staging piece, an odd size */
    uint32_t *w = malloc(n * 4), *back = malloc(n * 4);
    for (size_t i = 0; i < n; i++)
        w[i] = (uint32_t)(i * 2654435761u);
    kcrt_buffer *b = rt_buf(n * 4 + 2);
    ASSERT_OK(kcrt_buffer_write(b, 2, w, n * 4)); /* an unaligned offset, too */
    ASSERT_OK(kcrt_buffer_read(b, 2, back, n * 4));
    assert_memory_equal(w, back, n * 4);
    free(w), free(back);
    kcrt_buffer_free(b);
}

/* ---- timing --------------------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void test_timed_launches(void **state)
{
    (void)state;
    enum { N = 1 << 16, R = 10 };
    float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N);
    kcrt_buffer *bx = eighths(N, 15, x), *by = eighths(N, 16, y);
    kcrt_arg args[] = {KCRT_I32(N), KCRT_F32(1.0f), KCRT_BUF(bx), KCRT_BUF(by)};
    double ns[R];
    for (int i = 0; i < R; i++)
        ns[i] = -1;
    kcrt_kernel *k = rt_variant("saxpy", "SX_WG=128,SX_TM=4");
    ASSERT_OK(kcrt_launch(k, args, 4)); /* pending work is finished first, not timed */
    kcrt_stats s0 = stats();
    ASSERT_OK(kcrt_time_launch(k, args, 4, R, ns));
    kcrt_stats s1 = stats();
    assert_int_equal(R, s1.dispatches - s0.dispatches);
    if (rt_on_vulkan()) {
        assert_int_equal(2, s1.submissions - s0.submissions);
        assert_int_equal(R - 1, s1.barriers - s0.barriers); /* serialised */
    }
    /* a CPU driver's timestamps bracket launches in even groups of up to
     * 8 (10 = 5 + 5), each launch timed as its group's mean */
    if (rt_on_vulkan() && kcrt_device_info_get(rt_ctx)->type == KCRT_DEVICE_CPU) {
        for (int i = 1; i < R; i++)
            if (ns[i] != ns[i < 5 ? 0 : 5])
                fail_msg("ns[%d] = %g is not its group's %g", i, ns[i], ns[i < 5 ? 0 : 5]);
    }
    qsort(ns, R, sizeof(double), cmp_double);
    assert_true(ns[0] > 0);
    assert_true(ns[R - 1] < 10e9);
    float *got = rt_read(by); /* the timed launches ran: y = y0 + (1 + R) x */
    for (int i = 0; i < N; i++)
        if (got[i] != y[i] + (1 + R) * x[i])
            fail_msg("y[%d] = %g, expected %g", i, got[i], y[i] + (1 + R) * x[i]);
    free(got);
    assert_int_equal(KCRT_ERROR_BAD_ARGUMENT, kcrt_time_launch(k, args, 4, 0, ns));
    ASSERT_CONTAINS(kcrt_error(rt_ctx), "repeats must be 1..100000");
    kcrt_arg bad[] = {KCRT_I32(N), KCRT_F32(1.0f), KCRT_BUF(bx)};
    assert_int_equal(KCRT_ERROR_BAD_ARGUMENT, kcrt_time_launch(k, bad, 3, 3, ns));
    free(x), free(y);
    kcrt_buffer_free(bx), kcrt_buffer_free(by);
}

/* Cold timing: the same launches, serialised, each after a write of the
 * scratch buffer (on Vulkan a fill and two barriers, in the one
 * submission); outputs as if timed warm. */
static void test_cold_timed_launches(void **state)
{
    (void)state;
    enum { N = 1 << 16, R = 5 };
    float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N);
    kcrt_buffer *bx = eighths(N, 17, x), *by = eighths(N, 18, y);
    kcrt_arg args[] = {KCRT_I32(N), KCRT_F32(1.0f), KCRT_BUF(bx), KCRT_BUF(by)};
    double ns[R];
    for (int i = 0; i < R; i++)
        ns[i] = -1;
    kcrt_kernel *k = rt_variant("saxpy", "SX_WG=128,SX_TM=4");
    kcrt_stats s0 = stats();
    ASSERT_OK(kcrt_time_launch_cold(k, args, 4, R, 1 << 20, ns));
    kcrt_stats s1 = stats();
    assert_int_equal(R, s1.dispatches - s0.dispatches);
    if (rt_on_vulkan())
        assert_int_equal(R - 1 + 2 * R, s1.barriers - s0.barriers); /* serialised, and two per fill */
    for (int i = 0; i < R; i++)
        assert_true(ns[i] > 0 && ns[i] < 10e9);
    /* a bigger scratch buffer replaces the first */
    ASSERT_OK(kcrt_time_launch_cold(k, args, 4, 1, 3 << 20, ns));
    assert_true(ns[0] > 0);
    float *got = rt_read(by); /* y = y0 + (R + 1) x */
    for (int i = 0; i < N; i++)
        if (got[i] != y[i] + (R + 1) * x[i])
            fail_msg("y[%d] = %g, expected %g", i, got[i], y[i] + (R + 1) * x[i]);
    free(got);
    assert_int_equal(KCRT_ERROR_BAD_ARGUMENT, kcrt_time_launch_cold(k, args, 4, 0, 0, ns));
    ASSERT_CONTAINS(kcrt_error(rt_ctx), "kcrt_time_launch_cold: repeats must be 1..100000");
    assert_int_equal(KCRT_ERROR_BAD_ARGUMENT, kcrt_time_launch_cold(k, args, 4, 1, KCRT_FLUSH_MAX_BYTES + 1, ns));
    ASSERT_CONTAINS(kcrt_error(rt_ctx), "past the most, 4096 MiB");
    free(x), free(y);
    kcrt_buffer_free(bx), kcrt_buffer_free(by);
}

int main(void)
{
    setenv("KCRT_BUFFER_SPARE_MB", "8", 0); /* test_spares_are_bounded */
    int rc = rt_open_or_skip("test_rt_batch");
    if (rc)
        return rc;
    if (rt_load_bundle())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_thousand_launches_one_submission, rt_teardown),
        cmocka_unit_test_teardown(test_independent_launches_need_no_barrier, rt_teardown),
        cmocka_unit_test_teardown(test_pipelines_made_once_per_variant, rt_teardown),
        cmocka_unit_test_teardown(test_specialized_pipelines, rt_teardown),
        cmocka_unit_test_teardown(test_specialized_eight, rt_teardown),
        cmocka_unit_test_teardown(test_specialize_cap, rt_teardown),
        cmocka_unit_test_teardown(test_specialize_bad_env, rt_teardown),
        cmocka_unit_test_teardown(test_pools_are_recycled, rt_teardown),
        cmocka_unit_test_teardown(test_long_runs_submit_on_their_own, rt_teardown),
        cmocka_unit_test_teardown(test_write_waits_for_the_launch_before_it, rt_teardown),
        cmocka_unit_test_teardown(test_copy_between_buffers_in_order, rt_teardown),
        cmocka_unit_test_teardown(test_free_does_not_wait_and_memory_is_reused, rt_teardown),
        cmocka_unit_test_teardown(test_spares_are_bounded, rt_teardown),
        cmocka_unit_test_teardown(test_bundle_free_with_pending_launches, rt_teardown),
        cmocka_unit_test_teardown(test_large_transfers_in_pieces, rt_teardown),
        cmocka_unit_test_teardown(test_timed_launches, rt_teardown),
        cmocka_unit_test_teardown(test_cold_timed_launches, rt_teardown),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    return rt_close_all(failed);
}
