/*
 * test_rt_api.c — the runtime's API around launching: refused launches
 * (each with the words it must say), kernels and variants by name, buffers
 * out of range, contexts that failed to open, KCRT_BACKEND / KCRT_DEVICE /
 * KCRT_LOG, device information, introspection, and the validation layer's
 * message counting itself.
 */
#include "rt_test.h"

#include <fcntl.h>
#include <unistd.h>

/* ---- helpers ---------------------------------------------------------------------------- */

/* The error of the last failure, asserted to contain every needle. */
#define ASSERT_ERROR(status, expr, ...)                                                                      \
    do {                                                                                                     \
        ASSERT_STATUS(status, expr);                                                                         \
        const char *needles_[] = {__VA_ARGS__};                                                              \
        for (size_t i_ = 0; i_ < sizeof(needles_) / sizeof(*needles_); i_++)                                 \
            ASSERT_CONTAINS(kcrt_error(rt_ctx), needles_[i_]);                                               \
    } while (0)

static kcrt_buffer *floats(int n)
{
    float *x = malloc(sizeof(float) * (size_t)n);
    rt_rng r = {(uint64_t)n + 1};
    rt_fill_f32(x, (size_t)n, &r, -1, 1);
    kcrt_buffer *b = rt_buf_from(x, sizeof(float) * (size_t)n);
    free(x);
    return b;
}

/* Runs fn with stderr going to a file; returns what was written (free it). */
static char *capture_stderr(void (*fn)(void))
{
    char path[] = "/tmp/kcrt_log_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    fn();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    off_t n = lseek(fd, 0, SEEK_END);
    char *text = calloc(1, (size_t)n + 1);
    lseek(fd, 0, SEEK_SET);
    assert_int_equal(n, read(fd, text, (size_t)n));
    close(fd);
    unlink(path);
    return text;
}

/* ---- refused launches ------------------------------------------------------------------------ */

/* Whether Vulkan lists a device: always where the suite runs on Vulkan;
 * a CUDA or HIP run may be on a machine with no Vulkan driver. */
static bool vulkan_has_devices(void)
{
    int n = 0;
    return rt_on_vulkan() || (kcrt_devices("vulkan", NULL, 0, &n, NULL, 0) == KCRT_OK && n > 0);
}

static void test_launch_refuses_wrong_count(void **state)
{
    (void)state;
    kcrt_kernel *k = rt_kernel("saxpy");
    kcrt_buffer *x = floats(100);
    kcrt_arg args[] = {KCRT_I32(100), KCRT_F32(2), KCRT_BUF(x)};
    ASSERT_ERROR(KCRT_ERROR_BAD_ARGUMENT, kcrt_launch(k, args, 3),
                 "saxpy takes 4 arguments (n int, a float, x const float[n], y float[n]), got 3");
    ASSERT_ERROR(KCRT_ERROR_BAD_ARGUMENT, kcrt_launch(k, NULL, 4), "got 0");
    kcrt_buffer_free(x);
}

static void test_launch_refuses_wrong_kinds(void **state)
{
    (void)state;
    kcrt_kernel *k = rt_kernel("saxpy");
    kcrt_buffer *x = floats(100), *y = floats(100);
    kcrt_arg a1[] = {KCRT_BUF(x), KCRT_F32(2), KCRT_BUF(x), KCRT_BUF(y)};
    ASSERT_ERROR(KCRT_ERROR_BAD_ARGUMENT, kcrt_launch(k, a1, 4),
                 "saxpy: argument 0 ('n') is a scalar int: pass KCRT_I32, not a buffer");
    kcrt_arg a2[] = {KCRT_I32(100), KCRT_F32(2), KCRT_F32(1), KCRT_BUF(y)};
    ASSERT_ERROR(KCRT_ERROR_BAD_ARGUMENT, kcrt_launch(k, a2, 4),
                 "saxpy: argument 2 ('x') is a const buffer of float: pass KCRT_BUF(buffer), not KCRT_F32");
    kcrt_arg a3[] = {KCRT_I32(100), KCRT_F32(2), KCRT_BUF(x), KCRT_BUF(NULL)};
    ASSERT_ERROR(KCRT_ERROR_BAD_ARGUMENT, kcrt_launch(k, a3, 4), "argument 3 ('y') is a NULL buffer");
    kcrt_buffer_free(x), kcrt_buffer_free(y);
}

static void test_launch_refuses_wrong_scalar_types(void **state)
{
    (void)state;
    kcrt_kernel *k = rt_kernel("saxpy");
    kcrt_buffer *x = floats(100), *y = floats(100);
    kcrt_arg a1[] = {KCRT_I32(100), KCRT_I32(2), KCRT_BUF(x), KCRT_BUF(y)};
    ASSERT_ERROR(KCRT_ERROR_BAD_ARGUMENT, kcrt_launch(k, a1, 4),
                 "saxpy: argument 1 ('a') is a float: pass KCRT_F32, not KCRT_I32");
    kcrt_arg a2[] = {KCRT_U32(100), KCRT_F32(2), KCRT_BUF(x), KCRT_BUF(y)};
    ASSERT_ERROR(KCRT_ERROR_BAD_ARGUMENT, kcrt_launch(k, a2, 4),
                 "argument 0 ('n') is an int: pass KCRT_I32, not KCRT_U32");
    kcrt_arg a3[] = {KCRT_I32(100), KCRT_F16(0x3c00), KCRT_BUF(x), KCRT_BUF(y)};
    ASSERT_ERROR(KCRT_ERROR_BAD_ARGUMENT, kcrt_launch(k, a3, 4), "pass KCRT_F32, not KCRT_F16");
    kcrt_buffer *in = rt_buf(1000), *pos = rt_buf(1000), *cnt = rt_buf(1000);
    kcrt_arg a4[] = {KCRT_I32(10), KCRT_I32(1), KCRT_BUF(in), KCRT_BUF(pos), KCRT_BUF(cnt)};
    ASSERT_ERROR(KCRT_ERROR_BAD_ARGUMENT, kcrt_launch(rt_kernel("bools"), a4, 5),
                 "bools: argument 1 ('invert') is a bool: pass KCRT_BOOL, not KCRT_I32");
    kcrt_buffer *h = rt_buf(1000), *f = rt_buf(1000);
    kcrt_arg a5[] = {KCRT_I32(10), KCRT_F32(1.5f), KCRT_BUF(in), KCRT_BUF(h), KCRT_BUF(f)};
    ASSERT_ERROR(KCRT_ERROR_BAD_ARGUMENT, kcrt_launch(rt_kernel("half_scale"), a5, 5),
                 "argument 1 ('s') is a half: pass KCRT_F16, not KCRT_F32");
    kcrt_buffer_free(x), kcrt_buffer_free(y), kcrt_buffer_free(in), kcrt_buffer_free(pos),
        kcrt_buffer_free(cnt), kcrt_buffer_free(h), kcrt_buffer_free(f);
}

static void test_launch_refuses_short_buffers(void **state)
{
    (void)state;
    kcrt_buffer *x = floats(100), *y = floats(99);
    kcrt_arg args[] = {KCRT_I32(100), KCRT_F32(2), KCRT_BUF(x), KCRT_BUF(y)};
    ASSERT_ERROR(
        KCRT_ERROR_BAD_ARGUMENT, kcrt_launch(rt_kernel("saxpy"), args, 4),
        "saxpy: argument 3 ('y'): the buffer has 396 bytes, but y[n] needs 100 elements of 4 bytes = 400 "
        "bytes (n=100, SX_WG=64, SX_TM=2)");
    /* an extent with tunables: partial[cdiv(n, RD_WG * RD_PER)] */
    kcrt_buffer *in = rt_buf(4 * 1000), *part = rt_buf(4 * 7);
    kcrt_arg a2[] = {KCRT_I32(1000), KCRT_BUF(in), KCRT_BUF(part)};
    ASSERT_ERROR(
        KCRT_ERROR_BAD_ARGUMENT, kcrt_launch(rt_variant("reduce_sum", "RD_WG=64,RD_PER=2"), a2, 3),
        "argument 2 ('partial'): the buffer has 28 bytes, but partial[cdiv(n, RD_WG * RD_PER)] needs 8 "
        "elements of 4 bytes = 32 bytes (n=1000, RD_WG=64, RD_PER=2)");
    ASSERT_OK(kcrt_launch(rt_variant("reduce_sum", "RD_WG=128,RD_PER=2"), a2, 3)); /* 4 elements there */
    /* float4 elements are 16 bytes; multi-dimensional extents multiply */
    kcrt_buffer *v4 = rt_buf(16 * 9);
    kcrt_arg a3[] = {KCRT_I32(10), KCRT_F32(1), KCRT_BUF(v4), KCRT_BUF(v4)};
    ASSERT_ERROR(
        KCRT_ERROR_BAD_ARGUMENT, kcrt_launch(rt_kernel("axpy4"), a3, 4),
        "argument 2 ('x'): the buffer has 144 bytes, but x[n] needs 10 elements of 16 bytes = 160 bytes");
    kcrt_buffer *vol = rt_buf(4 * 2 * 3 * 4), *plane = rt_buf(4 * 12);
    kcrt_arg a4[] = {KCRT_I32(2), KCRT_I32(3), KCRT_I32(5), KCRT_BUF(vol), KCRT_BUF(vol), KCRT_BUF(plane)};
    ASSERT_ERROR(KCRT_ERROR_BAD_ARGUMENT, kcrt_launch(rt_kernel("volume"), a4, 6),
                 "in[d * h * w] needs 30 elements of 4 bytes = 120 bytes (d=2, h=3, w=5)");
    kcrt_arg a5[] = {KCRT_I32(-5), KCRT_F32(2), KCRT_BUF(x), KCRT_BUF(y)};
    ASSERT_ERROR(KCRT_ERROR_BAD_ARGUMENT, kcrt_launch(rt_kernel("saxpy"), a5, 4),
                 "its extent n is -5, negative");
    ASSERT_OK(kcrt_finish(rt_ctx));
    kcrt_buffer_free(x), kcrt_buffer_free(y), kcrt_buffer_free(in), kcrt_buffer_free(part),
        kcrt_buffer_free(v4), kcrt_buffer_free(vol), kcrt_buffer_free(plane);
}

/* Sizes no device has are refused before a backend rounds them (SIZE_MAX
 * once wrapped to 0 and crashed in the driver), and a buffer past what one
 * binding reaches is refused at launch rather than half computed. */
static void test_sizes_past_the_device(void **state)
{
    (void)state;
    kcrt_buffer *b = NULL;
    ASSERT_ERROR(KCRT_ERROR_OUT_OF_MEMORY, kcrt_buffer_create(rt_ctx, SIZE_MAX, &b), "kcrt_buffer_create:");
    assert_null(b);
    ASSERT_ERROR(KCRT_ERROR_OUT_OF_MEMORY, kcrt_buffer_create(rt_ctx, SIZE_MAX - 2, &b), "kcrt_buffer_create:");
    uint64_t reach = kcrt_device_info_get(rt_ctx)->max_buffer_bytes;
    if (!reach || reach > ((uint64_t)1 << 28)) {
        fprintf(stderr, "    (the binding limit is %llu bytes: too large to exceed in a test)\n",
                (unsigned long long)reach);
        return;
    }
    size_t n = (size_t)(reach / 4 + 16);
    kcrt_buffer *x = rt_buf(n * 4), *y = rt_buf(n * 4);
    kcrt_arg a[] = {KCRT_I32((int32_t)n), KCRT_F32(2), KCRT_BUF(x), KCRT_BUF(y)};
    ASSERT_ERROR(KCRT_ERROR_UNSUPPORTED, kcrt_launch(rt_kernel("saxpy"), a, 4), "one buffer binding on",
                 "split the work into smaller launches");
    kcrt_buffer_free(x), kcrt_buffer_free(y);
}

/* Handles used after they were freed are reported in words: these once
 * crashed, or said "buffer of another context". */
static void test_use_after_free_is_reported(void **state)
{
    (void)state;
    kcrt_buffer *x = floats(10), *y = floats(10);
    kcrt_buffer_free(y);
    kcrt_buffer_free(y);
    ASSERT_CONTAINS(kcrt_error(rt_ctx), "kcrt_buffer_free: the buffer was already freed");
    float v[10] = {0};
    ASSERT_ERROR(KCRT_ERROR_BAD_ARGUMENT, kcrt_buffer_write(y, 0, v, sizeof(v)),
                 "kcrt_buffer_write: the buffer was freed");
    ASSERT_ERROR(KCRT_ERROR_BAD_ARGUMENT, kcrt_buffer_read(y, 0, v, sizeof(v)),
                 "kcrt_buffer_read: the buffer was freed");
    kcrt_arg a[] = {KCRT_I32(10), KCRT_F32(2), KCRT_BUF(x), KCRT_BUF(y)};
    ASSERT_ERROR(KCRT_ERROR_BAD_ARGUMENT, kcrt_launch(rt_kernel("saxpy"), a, 4),
                 "saxpy: argument 3 ('y') is a buffer that was freed");
    kcrt_bundle *b;
    kcrt_kernel *k;
    ASSERT_OK(kcrt_bundle_load(rt_ctx, RT_BUNDLE, &b));
    ASSERT_OK(kcrt_kernel_get(b, "saxpy", &k));
    kcrt_bundle_free(b);
    kcrt_buffer *y2 = floats(10);
    kcrt_arg a2[] = {KCRT_I32(10), KCRT_F32(2), KCRT_BUF(x), KCRT_BUF(y2)};
    ASSERT_ERROR(KCRT_ERROR_BAD_ARGUMENT, kcrt_launch(k, a2, 4), "the kernel handle was freed with its bundle");
    assert_null(kcrt_kernel_info_get(k));
    ASSERT_ERROR(KCRT_ERROR_BAD_ARGUMENT, kcrt_kernel_get(b, "saxpy", &k), "the bundle was freed");
    assert_int_equal(0, kcrt_bundle_kernel_count(b));
    kcrt_bundle_free(b);
    ASSERT_CONTAINS(kcrt_error(rt_ctx), "kcrt_bundle_free: the bundle was already freed");
    /* freed shells are reused: a create/free loop keeps memory flat */
    kcrt_buffer *first = rt_buf(64);
    kcrt_buffer_free(first);
    for (int i = 0; i < 1000; i++) {
        kcrt_buffer *t = rt_buf(64);
        assert_ptr_equal(first, t);
        kcrt_buffer_free(t);
    }
    kcrt_buffer_free(x), kcrt_buffer_free(y2);
}

static void test_launch_refuses_bad_grids(void **state)
{
    (void)state;
    kcrt_buffer *x = floats(10), *y = floats(10), *o = rt_buf(4);
    /* an empty grid (an empty audio chunk) is no work, not an error: it
     * runs nothing and leaves the outputs as they were */
    kcrt_arg a1[] = {KCRT_I32(0), KCRT_F32(2), KCRT_BUF(x), KCRT_BUF(y)};
    rt_poison(y, RT_NAN);
    ASSERT_OK(kcrt_launch(rt_kernel("saxpy"), a1, 4));
    ASSERT_OK(kcrt_finish(rt_ctx));
    uint32_t *after = rt_read(y);
    for (int i = 0; i < 10; i++)
        assert_int_equal(RT_NAN, after[i]);
    free(after);
    double ns;
    ASSERT_ERROR(KCRT_ERROR_BAD_ARGUMENT, kcrt_time_launch(rt_kernel("saxpy"), a1, 4, 1, &ns),
                 "saxpy: the grid is empty at this shape: nothing to time");
    kcrt_kernel *g = rt_kernel("grid_test");
    kcrt_arg a2[] = {KCRT_I32(-3), KCRT_I32(1), KCRT_I32(1), KCRT_BUF(o)};
    ASSERT_ERROR(KCRT_ERROR_BAD_ARGUMENT, kcrt_launch(g, a2, 4),
                 "grid x = a * b * c = -3, negative (a=-3, b=1, c=1)");
    kcrt_arg a3[] = {KCRT_I32(1 << 21), KCRT_I32(1 << 21), KCRT_I32(1 << 21), KCRT_BUF(o)};
    ASSERT_ERROR(KCRT_ERROR_BAD_ARGUMENT, kcrt_launch(g, a3, 4),
                 "grid x = a * b * c cannot be evaluated: integer overflow in '*'");
    uint32_t max = kcrt_device_info_get(rt_ctx)->max_workgroup_count[0];
    kcrt_arg a4[] = {KCRT_I32(1000), KCRT_I32(1000), KCRT_I32(1000), KCRT_BUF(o)};
    char want[128];
    snprintf(want, sizeof(want), "grid x = a * b * c = 1000000000 workgroups, more than the device's %u",
             max);
    if (max < 1000000000u) /* CUDA and HIP devices take 2^31 - 1 */
        ASSERT_ERROR(KCRT_ERROR_UNSUPPORTED, kcrt_launch(g, a4, 4), want);
    kcrt_arg a5[] = {KCRT_I32(2), KCRT_I32(3), KCRT_I32(4), KCRT_BUF(o)};
    ASSERT_OK(kcrt_launch(g, a5, 4));
    int *got = rt_read(o);
    assert_int_equal(9, got[0]);
    free(got);
    kcrt_buffer_free(x), kcrt_buffer_free(y), kcrt_buffer_free(o);
}

static void test_launch_refuses_aliasing_without_may_alias(void **state)
{
    (void)state;
    kcrt_buffer *b = floats(64), *c = floats(64);
    /* matmul's a and b are const: one buffer for both is fine */
    kcrt_arg args[] = {KCRT_I32(64), KCRT_F32(2), KCRT_BUF(b), KCRT_BUF(b)};
    ASSERT_ERROR(
        KCRT_ERROR_BAD_ARGUMENT, kcrt_launch(rt_kernel("scale_noalias"), args, 4),
        "scale_noalias: arguments 2 ('x') and 3 ('y') are the same buffer, and the kernel writes it; the "
        "kernel would need KC_MAY_ALIAS");
    ASSERT_OK(kcrt_launch(rt_kernel("scale_alias"), args, 4));
    kcrt_arg a2[] = {KCRT_I32(8), KCRT_I32(8), KCRT_I32(8), KCRT_BUF(b), KCRT_BUF(b), KCRT_BUF(c)};
    ASSERT_OK(kcrt_launch(rt_kernel("matmul"), a2, 6));
    ASSERT_OK(kcrt_finish(rt_ctx));
    kcrt_buffer_free(b), kcrt_buffer_free(c);
}

static void test_launch_refuses_buffer_of_other_context(void **state)
{
    (void)state;
    kcrt_context *other;
    ASSERT_OK(kcrt_open(&other, NULL));
    kcrt_buffer *theirs, *x = floats(10);
    ASSERT_OK(kcrt_buffer_create(other, 40, &theirs));
    kcrt_arg args[] = {KCRT_I32(10), KCRT_F32(2), KCRT_BUF(x), KCRT_BUF(theirs)};
    ASSERT_ERROR(KCRT_ERROR_BAD_ARGUMENT, kcrt_launch(rt_kernel("saxpy"), args, 4),
                 "argument 3 ('y') is a buffer of another context");
    kcrt_close(other); /* frees `theirs` too */
    kcrt_buffer_free(x);
}

/* ---- kernels and variants by name ----------------------------------------------------------------- */

static void test_kernel_get_unknown_names_the_kernels(void **state)
{
    (void)state;
    kcrt_kernel *k = (kcrt_kernel *)1;
    ASSERT_ERROR(KCRT_ERROR_NO_KERNEL, kcrt_kernel_get(rt_bundle, "saxpie", &k),
                 "has no kernel 'saxpie' (it has: ", "saxpy", "matmul");
    assert_null(k);
    kcrt_kernel *a = rt_kernel("saxpy"), *b = rt_kernel("saxpy");
    assert_ptr_equal(a, b); /* one handle per kernel */
}

static void test_kernel_get_variant_parses_any_order(void **state)
{
    (void)state;
    kcrt_kernel *k1 = rt_variant("saxpy", "SX_TM=4, SX_WG=128"),
                *k2 = rt_variant("saxpy", "SX_WG=128,SX_TM=4");
    assert_ptr_equal(k1, k2);
    const char *v, *why;
    kcrt_buffer *x = floats(8), *y = floats(8);
    kcrt_arg args[] = {KCRT_I32(8), KCRT_F32(1), KCRT_BUF(x), KCRT_BUF(y)};
    ASSERT_OK(kcrt_kernel_choose(k1, args, 4, &v, &why));
    assert_string_equal("SX_WG=128,SX_TM=4", v);
    ASSERT_CONTAINS(why, "kcrt_kernel_get_variant");
    ASSERT_OK(
        kcrt_kernel_choose(rt_variant("saxpy", "SX_WG=32"), args, 4, &v, &why)); /* SX_TM: its default */
    assert_string_equal("SX_WG=32,SX_TM=2", v);
    ASSERT_OK(kcrt_kernel_choose(rt_variant("saxpy", ""), args, 4, &v, &why)); /* the default variant */
    assert_string_equal("SX_WG=64,SX_TM=2", v);
    kcrt_buffer_free(x), kcrt_buffer_free(y);
}

static void test_kernel_get_variant_errors(void **state)
{
    (void)state;
    kcrt_kernel *k;
    ASSERT_ERROR(
        KCRT_ERROR_NO_VARIANT, kcrt_kernel_get_variant(rt_bundle, "saxpy", "SX_WG=48", &k),
        "bad variant 'SX_WG=48' for kernel 'saxpy': SX_WG=48 is not one of SX_WG's values; its tunables are "
        "SX_WG (32,64,128), SX_TM (1,2,4)");
    ASSERT_ERROR(KCRT_ERROR_NO_VARIANT, kcrt_kernel_get_variant(rt_bundle, "saxpy", "FOO=1", &k),
                 "kernel 'saxpy' has no tunable 'FOO'");
    ASSERT_ERROR(KCRT_ERROR_NO_VARIANT, kcrt_kernel_get_variant(rt_bundle, "saxpy", "SX_WG", &k),
                 "'SX_WG' is not NAME=VALUE");
    ASSERT_ERROR(KCRT_ERROR_NO_VARIANT, kcrt_kernel_get_variant(rt_bundle, "saxpy", "SX_WG=32,SX_WG=64", &k),
                 "SX_WG is given twice");
    ASSERT_ERROR(KCRT_ERROR_NO_VARIANT, kcrt_kernel_get_variant(rt_bundle, "saxpy", "SX_WG=x", &k),
                 "the value of SX_WG is not an integer");
    ASSERT_ERROR(KCRT_ERROR_NO_KERNEL, kcrt_kernel_get_variant(rt_bundle, "nope", "", &k),
                 "no kernel 'nope'");
    ASSERT_ERROR(KCRT_ERROR_BAD_ARGUMENT, kcrt_kernel_get_variant(rt_bundle, "saxpy", NULL, &k), "NULL");
}

static void test_kernel_get_variant_not_built(void **state)
{
    (void)state;
    kcrt_bundle *b;
    ASSERT_OK(kcrt_bundle_load(rt_ctx, KC_BINARY_DIR "/tests/runtime/rt_default.kcb", &b));
    kcrt_kernel *k;
    char want[128];
    snprintf(want, sizeof(want), "kernel 'saxpy' has no variant 'SX_WG=32' for %s",
             kcrt_backend_name(rt_ctx));
    ASSERT_ERROR(KCRT_ERROR_NO_VARIANT, kcrt_kernel_get_variant(b, "saxpy", "SX_WG=32", &k), want,
                 "(build it with --all-variants); its variants "
                 "are: SX_WG=64,SX_TM=2");
    ASSERT_OK(kcrt_kernel_get_variant(b, "saxpy", "SX_TM=2", &k));
    kcrt_bundle_free(b);
}

/* ---- buffers ------------------------------------------------------------------------------------------ */

static void test_buffer_ranges(void **state)
{
    (void)state;
    kcrt_buffer *b = rt_buf(1003);
    char data[16] = "0123456789abcde";
    ASSERT_ERROR(KCRT_ERROR_BAD_ARGUMENT, kcrt_buffer_write(b, 1000, data, 8),
                 "kcrt_buffer_write: 8 bytes at offset 1000 do not fit in a buffer of 1003 bytes");
    ASSERT_ERROR(KCRT_ERROR_BAD_ARGUMENT, kcrt_buffer_read(b, SIZE_MAX, data, 2), "do not fit");
    ASSERT_ERROR(KCRT_ERROR_BAD_ARGUMENT, kcrt_buffer_write(b, 0, NULL, 2), "the host pointer is NULL");
    ASSERT_OK(kcrt_buffer_write(b, 999, data, 4)); /* up to the last byte, unaligned */
    char back[8] = {0};
    ASSERT_OK(kcrt_buffer_read(b, 998, back, 5));
    assert_memory_equal("\0"
                        "0123",
                        back, 5); /* a new buffer holds zeros */
    ASSERT_OK(kcrt_buffer_write(b, 1, data, 3));
    ASSERT_OK(kcrt_buffer_read(b, 0, back, 6));
    assert_memory_equal("\0"
                        "012\0\0",
                        back, 6);
    kcrt_buffer *none = (kcrt_buffer *)1;
    ASSERT_ERROR(KCRT_ERROR_BAD_ARGUMENT, kcrt_buffer_create(rt_ctx, 0, &none), "at least one byte");
    assert_null(none);
    assert_int_equal(1003, kcrt_buffer_size(b));
    assert_ptr_equal(rt_ctx, kcrt_buffer_context(b));
    kcrt_buffer_free(b);
    kcrt_buffer_free(NULL);
}

/* ---- contexts and the environment --------------------------------------------------------------------- */

static void test_failed_open_keeps_the_message(void **state)
{
    (void)state;
    kcrt_context *c = NULL;
    kcrt_options o = {"metal", -1};
    assert_int_equal(KCRT_ERROR_NO_BACKEND, kcrt_open(&c, &o));
    assert_non_null(c);
    ASSERT_CONTAINS(kcrt_error(c), "unknown backend 'metal' (expected auto, vulkan, hip or cuda)");
    ASSERT_CONTAINS(kcrt_error(NULL), "unknown backend 'metal'");
    kcrt_bundle *b;
    assert_int_equal(KCRT_ERROR_NO_BACKEND, kcrt_bundle_load(c, RT_BUNDLE, &b));
    assert_int_equal(KCRT_ERROR_NO_BACKEND, kcrt_finish(c));
    kcrt_buffer *buf;
    assert_int_equal(KCRT_ERROR_NO_BACKEND, kcrt_buffer_create(c, 4, &buf));
    ASSERT_CONTAINS(kcrt_error(c), "unknown backend 'metal'");
    assert_string_equal("", kcrt_device_name(c));
    assert_null(kcrt_device_info_get(c));
    kcrt_close(c);
    /* HIP and CUDA, where CMake hid their libraries (KC_RT_TEST_BACKEND=vulkan) */
    const char *native[][3] = {{"hip", "HIP", "KCRT_HIP_LIBRARY"}, {"cuda", "CUDA", "KCRT_CUDA_LIBRARY"}};
    for (int i = 0; i < 2; i++) {
        const char *lib = getenv(native[i][2]);
        if (!lib || strcmp(lib, "/nonexistent") != 0)
            continue;
        o.backend = native[i][0];
        assert_int_equal(KCRT_ERROR_NO_BACKEND, kcrt_open(&c, &o));
        char want[128];
        snprintf(want, sizeof(want), "%s is not available: cannot load /nonexistent", native[i][1]);
        ASSERT_CONTAINS(kcrt_error(c), want);
        snprintf(want, sizeof(want), "%s=/nonexistent names it", native[i][2]);
        ASSERT_CONTAINS(kcrt_error(c), want);
        kcrt_close(c);
    }
    if (!vulkan_has_devices()) /* a CUDA or HIP run on a machine without a Vulkan driver */
        return;
    o = (kcrt_options){"vulkan", 99};
    assert_int_equal(KCRT_ERROR_NO_DEVICE, kcrt_open(&c, &o));
    ASSERT_CONTAINS(kcrt_error(c), "there is no device 99");
    kcrt_close(c);
}

static void test_environment_overrides_options(void **state)
{
    (void)state;
    kcrt_context *c;
    kcrt_options o = {"vulkan", -1};
    setenv("KCRT_BACKEND", "metal", 1);
    assert_int_equal(KCRT_ERROR_NO_BACKEND, kcrt_open(&c, &o));
    ASSERT_CONTAINS(kcrt_error(c), "unknown backend 'metal'");
    kcrt_close(c);
    unsetenv("KCRT_BACKEND");
    setenv("KCRT_DEVICE", "7", 1);
    assert_int_equal(KCRT_ERROR_NO_DEVICE, kcrt_open(&c, NULL));
    ASSERT_CONTAINS(kcrt_error(c), "there is no device 7");
    kcrt_close(c);
    setenv("KCRT_DEVICE", "no such gpu", 1);
    assert_int_equal(KCRT_ERROR_NO_DEVICE, kcrt_open(&c, NULL));
    ASSERT_CONTAINS(kcrt_error(c), "no device's name contains 'no such gpu' (KCRT_DEVICE)");
    kcrt_close(c);
    /* a part of the name, in any case, on the tests' backend */
    o.backend = kcrt_backend_name(rt_ctx);
    char part[8];
    snprintf(part, sizeof(part), "%.3s", kcrt_device_name(rt_ctx) + 1);
    for (char *p = part; *p; p++)
        *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
    setenv("KCRT_DEVICE", part, 1);
    o.device = 5; /* overridden */
    ASSERT_OK(kcrt_open(&c, &o));
    assert_string_equal(kcrt_device_name(rt_ctx), kcrt_device_name(c));
    kcrt_close(c);
    setenv("KCRT_DEVICE", "0", 1); /* the tests' backend's first device: CMake hides the others */
    ASSERT_OK(kcrt_open(&c, &o));
    assert_string_equal(kcrt_backend_name(rt_ctx), kcrt_backend_name(c));
    kcrt_close(c);
    unsetenv("KCRT_DEVICE");
}

static bool log_on;

/* A context's life, logged when log_on. */
static void logged_work(void)
{
    kcrt_context *c;
    kcrt_bundle *logged_bundle;
    kcrt_kernel *k;
    kcrt_buffer *x, *y;
    if (log_on)
        setenv("KCRT_LOG", "debug", 1);
    kcrt_open(&c, NULL);
    unsetenv("KCRT_LOG");
    kcrt_bundle_load(c, RT_BUNDLE, &logged_bundle);
    kcrt_kernel_get(logged_bundle, "saxpy", &k);
    kcrt_buffer_create(c, 400, &x);
    kcrt_buffer_create(c, 400, &y);
    kcrt_arg args[] = {KCRT_I32(100), KCRT_F32(2), KCRT_BUF(x), KCRT_BUF(y)};
    kcrt_launch(k, args, 4);
    kcrt_launch(k, args, 4); /* the same shape: no second line about the choice */
    kcrt_arg bad[] = {KCRT_I32(100), KCRT_F32(2), KCRT_BUF(x)};
    kcrt_launch(k, bad, 3);
    kcrt_finish(c);
    kcrt_close(c);
}

static void test_debug_log_says_what_was_chosen(void **state)
{
    (void)state;
    log_on = true;
    char *log = capture_stderr(logged_work);
    const char *be = kcrt_backend_name(rt_ctx);
    char want[256];
    int variants = 0; /* 9 per target the bundle was built for */
    for (int i = 0; i < kcrt_bundle_kernel_count(rt_bundle); i++)
        if (!strcmp(kcrt_bundle_kernel_info(rt_bundle, i)->name, "saxpy"))
            variants = kcrt_bundle_kernel_info(rt_bundle, i)->nvariants;
    ASSERT_CONTAINS(log, "kcrt: chose device 0 '");
    ASSERT_CONTAINS(log, "the best of");
    snprintf(want, sizeof(want), "kcrt: %s: '", be);
    ASSERT_CONTAINS(log, want);
    snprintf(want, sizeof(want), "key '%s:", be);
    ASSERT_CONTAINS(log, want);
    snprintf(want, sizeof(want),
             "kcrt: bundle " RT_BUNDLE ": kernel saxpy: %d variants, default SX_WG=64,SX_TM=2", variants);
    ASSERT_CONTAINS(log, want);
    ASSERT_CONTAINS(log, "kcrt: saxpy(n=100): variant 'SX_WG=64,SX_TM=2': the default variant");
    ASSERT_CONTAINS(log, rt_on_vulkan() ? "kcrt: pipeline made for saxpy[SX_WG=64,SX_TM=2]"
                                        : "kcrt: module loaded for saxpy[SX_WG=64,SX_TM=2]");
    ASSERT_CONTAINS(log, "kcrt: error: saxpy takes 4 arguments");
    const char *first = strstr(log, "saxpy(n=100)");
    assert_null(strstr(first + 1, "saxpy(n=100)"));
    free(log);
    /* and nothing without KCRT_LOG */
    log_on = false;
    char *quiet = capture_stderr(logged_work);
    assert_string_equal("", quiet);
    free(quiet);
}

/* ---- a device without features (KCRT_VULKAN_PRETEND) ------------------------------------------------ */

/* Launches saxpy at each n in c, through a chosen variant and a fixed one. */
static void launch_saxpy_at(kcrt_context *c, const int *ns, int count)
{
    kcrt_bundle *b;
    kcrt_kernel *k, *fixed;
    kcrt_buffer *x, *y;
    ASSERT_OK(kcrt_bundle_load(c, RT_BUNDLE, &b));
    ASSERT_OK(kcrt_kernel_get(b, "saxpy", &k));
    ASSERT_OK(kcrt_kernel_get_variant(b, "saxpy", "SX_WG=64,SX_TM=2", &fixed));
    ASSERT_OK(kcrt_buffer_create(c, 4000, &x));
    ASSERT_OK(kcrt_buffer_create(c, 4000, &y));
    for (int i = 0; i < count; i++) {
        kcrt_arg args[] = {KCRT_I32(ns[i]), KCRT_F32(2), KCRT_BUF(x), KCRT_BUF(y)};
        ASSERT_OK(kcrt_launch(k, args, 4));
    }
    kcrt_arg pinned[] = {KCRT_I32(999), KCRT_F32(2), KCRT_BUF(x), KCRT_BUF(y)};
    ASSERT_OK(kcrt_launch(fixed, pinned, 4)); /* a tuner's launch: not the application's shape */
    ASSERT_OK(kcrt_finish(c));
}

/* KCRT_RECORD_SHAPES: each shape a context launches, once, appended to the
 * file as "KERNEL SHAPE" for kc tune --shapes-from; a file that cannot be
 * appended to fails kcrt_open and says why. */
static void test_record_shapes_appends_each_shape_once(void **state)
{
    (void)state;
    const char *path = "test_rt_api_shapes.txt"; /* in the test's folder */
    remove(path);
    static const int first[] = {100, 100, 250, 100, 250}, second[] = {100, 300};
    for (int run = 0; run < 2; run++) {
        kcrt_context *c;
        setenv("KCRT_RECORD_SHAPES", path, 1);
        ASSERT_OK(kcrt_open(&c, NULL));
        unsetenv("KCRT_RECORD_SHAPES");
        launch_saxpy_at(c, run ? second : first, run ? 2 : 5);
        kcrt_close(c);
    }
    FILE *f = fopen(path, "r");
    char got[256] = "";
    size_t n = fread(got, 1, sizeof(got) - 1, f);
    got[n] = 0;
    fclose(f);
    remove(path);
    assert_string_equal("saxpy n=100\nsaxpy n=250\nsaxpy n=100\nsaxpy n=300\n", got);

    kcrt_context *c;
    setenv("KCRT_RECORD_SHAPES", "/nonexistent/kc/shapes.txt", 1);
    assert_int_equal(KCRT_ERROR_IO, kcrt_open(&c, NULL));
    unsetenv("KCRT_RECORD_SHAPES");
    ASSERT_CONTAINS(kcrt_error(c),
                    "KCRT_RECORD_SHAPES=/nonexistent/kc/shapes.txt: cannot append to it: No such file");
    kcrt_close(c);
}

static void test_variants_needing_missing_features_are_refused(void **state)
{
    (void)state;
    RT_NEED_VULKAN(); /* KCRT_VULKAN_PRETEND */
    setenv("KCRT_VULKAN_PRETEND", "no-float16,no-int64,no-storage16,no-subgroups,push=64", 1);
    kcrt_context *c;
    kcrt_status s = kcrt_open(&c, NULL);
    unsetenv("KCRT_VULKAN_PRETEND");
    ASSERT_OK(s);
    const kcrt_device_info *d = kcrt_device_info_get(c);
    assert_false(d->float16 || d->int64 || d->storage16 || d->subgroups);
    assert_int_equal(64, d->max_push_bytes);
    kcrt_bundle *b;
    kcrt_kernel *k;
    assert_int_equal(KCRT_OK, kcrt_bundle_load(c, RT_BUNDLE, &b));
    static const struct {
        const char *kernel, *variant, *message;
    } cases[] = {
        {"subgroup_ops", "SG_WG=64",
         "it needs subgroup operations in compute shaders, which the device does not offer"},
        {"half4_sum", "", "it needs 16-bit float arithmetic (shaderFloat16)"},
        {"half_scale", "", "it needs 16-bit storage buffers (storageBuffer16BitAccess)"},
        {"convert", "", "it needs 64-bit integers (shaderInt64)"},
        {"many_scalars", "",
         "its 80 bytes of scalar arguments exceed the device's 64 bytes of push constants, and "
         "the compiler did not spill them to a buffer"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        assert_int_equal(KCRT_ERROR_UNSUPPORTED,
                         kcrt_kernel_get_variant(b, cases[i].kernel, cases[i].variant, &k));
        ASSERT_CONTAINS(kcrt_error(c), cases[i].kernel);
        ASSERT_CONTAINS(kcrt_error(c), cases[i].message);
    }
    /* a handle that chooses per launch refuses at the launch */
    ASSERT_OK(kcrt_kernel_get(b, "subgroup_ops", &k));
    kcrt_buffer *buf;
    assert_int_equal(KCRT_OK, kcrt_buffer_create(c, 4096, &buf));
    kcrt_arg args[] = {KCRT_I32(64),  KCRT_BUF(buf), KCRT_BUF(buf),
                       KCRT_BUF(buf), KCRT_BUF(buf), KCRT_BUF(buf)};
    assert_int_equal(KCRT_ERROR_UNSUPPORTED, kcrt_launch(k, args, 6));
    ASSERT_CONTAINS(kcrt_error(c), "kernel 'subgroup_ops' variant 'SG_WG=64' cannot run on '");
    /* the spilled kernel does not need push constants: it runs */
    kcrt_arg sp[41];
    for (int i = 0; i < 40; i++)
        sp[i] = i % 4 == 0 ? KCRT_I32(i) : i % 4 == 1 ? KCRT_F32(i) : i % 4 == 2 ? KCRT_U32(i) : KCRT_BOOL(1);
    sp[40] = KCRT_BUF(buf);
    assert_int_equal(KCRT_OK, kcrt_kernel_get(b, "spill", &k));
    assert_int_equal(KCRT_OK, kcrt_launch(k, sp, 41));
    float out[40];
    assert_int_equal(KCRT_OK, kcrt_buffer_read(buf, 0, out, sizeof(out)));
    for (int i = 0; i < 40; i++)
        assert_true(out[i] == (i % 4 == 3 ? 1.0f : (float)i));
    kcrt_close(c);
}

/* A texel view holds at most maxTexelBufferElements texels: a launch whose
 * buffer holds more is refused, naming the variant and the parameter, and
 * the context goes on (a launch that fits runs). */
static void test_texel_reads_past_the_device_limit_are_refused(void **state)
{
    (void)state;
    RT_NEED_VULKAN(); /* KCRT_VULKAN_PRETEND */
    setenv("KCRT_VULKAN_PRETEND", "texels=500", 1);
    kcrt_context *c;
    kcrt_status s = kcrt_open(&c, NULL);
    unsetenv("KCRT_VULKAN_PRETEND");
    ASSERT_OK(s);
    kcrt_bundle *b;
    kcrt_kernel *k;
    ASSERT_OK(kcrt_bundle_load(c, RT_BUNDLE, &b));
    ASSERT_OK(kcrt_kernel_get_variant(b, "texels", "TX=1", &k));
    kcrt_buffer *big, *small[8];
    ASSERT_OK(kcrt_buffer_create(c, 16 * 1000, &big));
    for (int i = 0; i < 8; i++)
        ASSERT_OK(kcrt_buffer_create(c, 16 * 100, &small[i]));
    kcrt_arg args[] = {KCRT_I32(100),      KCRT_BUF(big),      KCRT_BUF(small[1]), KCRT_BUF(small[2]), KCRT_BUF(small[3]),
                       KCRT_BUF(small[4]), KCRT_BUF(small[5]), KCRT_BUF(small[6]), KCRT_BUF(small[7])};
    assert_int_equal(KCRT_ERROR_BAD_ARGUMENT, kcrt_launch(k, args, 9));
    ASSERT_CONTAINS(kcrt_error(c), "texels[TX=1] reads parameter 1 as texels, and its buffer holds 1000 of them, "
                                   "more than the device's maxTexelBufferElements (500)");
    args[1] = KCRT_BUF(small[0]);
    ASSERT_OK(kcrt_launch(k, args, 9));
    ASSERT_OK(kcrt_finish(c));
    kcrt_buffer_free(big);
    for (int i = 0; i < 8; i++)
        kcrt_buffer_free(small[i]);
    kcrt_close(c);
}

/* ---- devices ------------------------------------------------------------------------------------------- */

static void test_devices_describe_themselves(void **state)
{
    (void)state;
    int n = 0;
    ASSERT_OK(kcrt_devices(NULL, NULL, 0, &n, NULL, 0));
    assert_true(n >= 1);
    kcrt_device_info *list = calloc((size_t)n, sizeof(*list));
    char err[256];
    ASSERT_OK(kcrt_devices(NULL, list, n, &n, err, sizeof(err)));
    const kcrt_device_info *mine = kcrt_device_info_get(rt_ctx);
    assert_non_null(mine);
    assert_string_equal(list[mine->index].key, mine->key);
    if (!vulkan_has_devices()) { /* a CUDA or HIP run on a machine without a Vulkan driver */
        free(list);
        return;
    }
    ASSERT_OK(kcrt_devices("vulkan", list, n, &n, err, sizeof(err)));
    for (int i = 0; i < n; i++) {
        const kcrt_device_info *d = &list[i];
        assert_int_equal(i, d->index);
        assert_string_equal("vulkan", d->backend);
        assert_true(d->name[0] != 0);
        assert_true(d->subgroup_size >= 1 && d->min_subgroup_size <= d->subgroup_size &&
                    d->subgroup_size <= d->max_subgroup_size);
        assert_true(d->max_workgroup_invocations >= 128); /* Vulkan's minimum */
        assert_true(d->max_workgroup_size[0] >= 128 && d->max_workgroup_count[0] >= 65535);
        assert_true(d->max_shared_bytes >= 16384 && d->max_push_bytes >= 128 && d->max_storage_buffers >= 4);
        char key[64];
        snprintf(key, sizeof(key), "vulkan:%04x:%04x:", d->vendor_id, d->device_id);
        assert_int_equal(0, strncmp(d->key, key, strlen(key)));
        assert_non_null(strstr(d->key, d->name));
        assert_int_equal(0, strncmp(d->family, d->vendor, strlen(d->vendor)));
        if (strncmp(d->name, "llvmpipe", 8) == 0) { /* lavapipe, as in CI */
            assert_string_equal("cpu", d->type_name);
            assert_string_equal("mesa:llvmpipe", d->family);
            assert_true(d->unified_memory && d->subgroup_size == 8 && d->subgroups &&
                        d->subgroup_arithmetic && d->subgroup_shuffle && d->subgroup_ballot && d->int64 &&
                        d->storage16);
            assert_true(d->timestamp_valid_bits > 0 && d->timestamp_period_ns > 0);
        }
    }
    free(list);
    assert_int_equal(KCRT_ERROR_NO_BACKEND, kcrt_devices("metal", NULL, 0, &n, err, sizeof(err)));
    ASSERT_CONTAINS(err, "unknown backend 'metal'");
    assert_int_equal(KCRT_ERROR_BAD_ARGUMENT, kcrt_devices(NULL, NULL, 0, NULL, err, sizeof(err)));
}

/* ---- introspection
 * ------------------------------------------------------------------------------------------ */

static void test_bundle_introspection(void **state)
{
    (void)state;
    assert_string_equal("rt_kernels", kcrt_bundle_meta(rt_bundle, "package"));
    assert_null(kcrt_bundle_meta(rt_bundle, "nothing"));
    const kcrt_kernel_info *k = kcrt_kernel_info_get(rt_kernel("saxpy"));
    assert_string_equal("saxpy", k->name);
    assert_int_equal(4, k->nparams);
    assert_int_equal(KCRT_PARAM_SCALAR, k->params[0].kind);
    assert_int_equal(KCRT_TYPE_INT, k->params[0].type);
    assert_int_equal(KCRT_PARAM_BUFFER, k->params[2].kind);
    assert_true(k->params[2].readonly && !k->params[3].readonly);
    assert_string_equal("n", k->params[2].extent);
    assert_int_equal(KCRT_INIT_NORMAL, k->params[2].init);
    assert_int_equal(KCRT_INIT_UNIFORM, k->params[3].init);
    assert_int_equal(2, k->ntunables);
    assert_string_equal("SX_WG", k->tunables[0].name);
    assert_int_equal(64, k->tunables[0].def);
    assert_int_equal(3, k->tunables[0].nvalues);
    assert_int_equal(2, k->nshapes);
    assert_string_equal("n=1000", k->shapes[0]);
    assert_string_equal("cdiv(n, SX_WG * SX_TM), 1, 1", k->grid_text);
    assert_string_equal("SX_WG=64,SX_TM=2", k->default_variant);
    int first = 0, ntargets = 0; /* 9 variants per target the bundle was built for (KC_RT_TEST_TARGETS) */
    for (int i = 0; i < k->nvariants; i++) {
        bool seen = false;
        for (int j = 0; j < i; j++)
            seen |= strcmp(k->variants[j].target, k->variants[i].target) == 0;
        ntargets += !seen;
        first += strcmp(k->variants[i].target, k->variants[0].target) == 0;
    }
    assert_int_equal(9, first);
    assert_int_equal(9 * ntargets, k->nvariants);
    assert_true(k->tolerance > 0);
    const kcrt_kernel_info *v = kcrt_kernel_info_get(rt_kernel("ints"));
    assert_int_equal(KCRT_TYPE_INT2, v->params[1].type);
    assert_int_equal(8, v->params[1].elem_bytes);
    assert_int_equal(16, v->params[2].elem_bytes);
    const kcrt_kernel_info *h = kcrt_kernel_info_get(rt_kernel("half_scale"));
    assert_int_equal(2, h->params[2].elem_bytes);
    ASSERT_CONTAINS(h->variants[0].features, "storage16");
    int found = 0;
    for (int i = 0; i < kcrt_bundle_kernel_count(rt_bundle); i++)
        found += strcmp(kcrt_bundle_kernel_info(rt_bundle, i)->name, "matmul") == 0;
    assert_int_equal(1, found);
    assert_null(kcrt_bundle_kernel_info(rt_bundle, -1));
    assert_null(kcrt_bundle_kernel_info(rt_bundle, 1000));
}

static void test_eval_expressions(void **state)
{
    (void)state;
    const char *names[] = {"n", "WG", "TM"};
    int64_t vals[] = {1000, 64, 4}, out = 0;
    char err[256];
    ASSERT_OK(kcrt_eval("n WG TM * cdiv", names, vals, 3, &out, err, sizeof(err)));
    assert_int_equal(4, out);
    assert_int_equal(KCRT_ERROR_BAD_ARGUMENT, kcrt_eval("n m *", names, vals, 3, &out, err, sizeof(err)));
    assert_string_equal("n * m: 'm' has no value", err);
    assert_int_equal(KCRT_ERROR_BAD_ARGUMENT, kcrt_eval("n 0 /", names, vals, 3, &out, err, sizeof(err)));
    ASSERT_CONTAINS(err, "division by zero");
    assert_int_equal(KCRT_ERROR_BAD_ARGUMENT, kcrt_eval("n +", names, vals, 3, &out, err, sizeof(err)));
    ASSERT_CONTAINS(err, "malformed");
}

static void test_status_names_and_halves(void **state)
{
    (void)state;
    assert_string_equal("KCRT_OK", kcrt_status_name(KCRT_OK));
    assert_string_equal("KCRT_ERROR_NO_DEVICE", kcrt_status_name(KCRT_ERROR_NO_DEVICE));
    assert_string_equal("KCRT_ERROR_DEVICE_ERROR", kcrt_status_name(KCRT_ERROR_DEVICE_ERROR));
    const struct {
        float f;
        uint16_t h;
        bool exact; /* f is a half */
    } cases[] = {{0.0f, 0x0000, 1},
                 {-0.0f, 0x8000, 1},
                 {1.0f, 0x3c00, 1},
                 {-2.0f, 0xc000, 1},
                 {65504.0f, 0x7bff, 1},
                 {65520.0f, 0x7c00, 0},
                 {1e9f, 0x7c00, 0},
                 {5.9604645e-8f, 0x0001, 1},
                 {6.1035156e-5f, 0x0400, 1},
                 {1.0009765625f, 0x3c01, 1},
                 {1.00048828125f, 0x3c00, 0} /* a tie: to even */,
                 {1.00146484375f, 0x3c02, 0} /* a tie: to even, upwards */,
                 {2.9802322e-8f, 0x0000, 0} /* a tie below the smallest subnormal: to even (zero) */};
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        if (kcrt_f32_to_f16(cases[i].f) != cases[i].h)
            fail_msg("f32_to_f16(%g) = 0x%04x, expected 0x%04x", cases[i].f, kcrt_f32_to_f16(cases[i].f),
                     cases[i].h);
        if (cases[i].exact && kcrt_f16_to_f32(cases[i].h) != cases[i].f)
            fail_msg("f16_to_f32(0x%04x) = %g, expected %g", cases[i].h, kcrt_f16_to_f32(cases[i].h),
                     cases[i].f);
    }
    assert_true(isnan(kcrt_f16_to_f32(kcrt_f32_to_f16(NAN))));
    for (uint32_t h = 0; h < 0x7c00; h++) /* every finite half survives the round trip */
        if (kcrt_f32_to_f16(kcrt_f16_to_f32((uint16_t)h)) != h)
            fail_msg("0x%04x does not survive a round trip", h);
}

/* ---- the validation layer's counting
 * ------------------------------------------------------------------------- */

static void test_validation_layer_messages_are_counted(void **state)
{
    (void)state;
    if (!kcrt_validation_enabled(rt_ctx))
        skip();
    uint64_t before = kcrt_validation_message_count();
    assert_int_equal(0, before);
    assert_true(kcrt_validation_selftest(rt_ctx));
    assert_true(kcrt_validation_message_count() >= 1);
    ASSERT_CONTAINS(kcrt_validation_last_message(), "usage");
    kcrt_validation_reset();
    assert_int_equal(0, kcrt_validation_message_count());
}

int main(void)
{
    int rc = rt_open_or_skip("test_rt_api");
    if (rc)
        return rc;
    if (rt_load_bundle())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_validation_layer_messages_are_counted, rt_teardown),
        cmocka_unit_test_teardown(test_launch_refuses_wrong_count, rt_teardown),
        cmocka_unit_test_teardown(test_launch_refuses_wrong_kinds, rt_teardown),
        cmocka_unit_test_teardown(test_launch_refuses_wrong_scalar_types, rt_teardown),
        cmocka_unit_test_teardown(test_launch_refuses_short_buffers, rt_teardown),
        cmocka_unit_test_teardown(test_launch_refuses_bad_grids, rt_teardown),
        cmocka_unit_test_teardown(test_sizes_past_the_device, rt_teardown),
        cmocka_unit_test_teardown(test_use_after_free_is_reported, rt_teardown),
        cmocka_unit_test_teardown(test_launch_refuses_aliasing_without_may_alias, rt_teardown),
        cmocka_unit_test_teardown(test_launch_refuses_buffer_of_other_context, rt_teardown),
        cmocka_unit_test_teardown(test_kernel_get_unknown_names_the_kernels, rt_teardown),
        cmocka_unit_test_teardown(test_kernel_get_variant_parses_any_order, rt_teardown),
        cmocka_unit_test_teardown(test_kernel_get_variant_errors, rt_teardown),
        cmocka_unit_test_teardown(test_kernel_get_variant_not_built, rt_teardown),
        cmocka_unit_test_teardown(test_buffer_ranges, rt_teardown),
        cmocka_unit_test_teardown(test_failed_open_keeps_the_message, rt_teardown),
        cmocka_unit_test_teardown(test_environment_overrides_options, rt_teardown),
        cmocka_unit_test_teardown(test_debug_log_says_what_was_chosen, rt_teardown),
        cmocka_unit_test_teardown(test_record_shapes_appends_each_shape_once, rt_teardown),
        cmocka_unit_test_teardown(test_variants_needing_missing_features_are_refused, rt_teardown),
        cmocka_unit_test_teardown(test_texel_reads_past_the_device_limit_are_refused, rt_teardown),
        cmocka_unit_test_teardown(test_devices_describe_themselves, rt_teardown),
        cmocka_unit_test_teardown(test_bundle_introspection, rt_teardown),
        cmocka_unit_test_teardown(test_eval_expressions, rt_teardown),
        cmocka_unit_test_teardown(test_status_names_and_halves, rt_teardown),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    return rt_close_all(failed);
}
