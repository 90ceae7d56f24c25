/*
 * rt_test.h — what the runtime tests share: opening a context (or skipping
 * with 77 when there is no device), the test bundle, random inputs with
 * fixed seeds, poisoned outputs, comparisons, and the check that the
 * Vulkan validation layer (KCRT_VALIDATION=1, set by CMake) said nothing.
 *
 * The backend: CMake hides the HIP and CUDA libraries unless
 * KC_RT_TEST_BACKEND names one (cmake/runtime_tests.cmake), and says which
 * backend it expects in KC_RT_EXPECT_BACKEND; a context that opened on
 * another is an error, not a quiet fallback. Checks of what only the
 * Vulkan backend does (its counters, pretend devices, the validation
 * layer) skip elsewhere with RT_NEED_VULKAN().
 */
#ifndef KC_RT_TEST_H
#define KC_RT_TEST_H

#include "kc_test.h"

#include <math.h>
#include <stdbool.h>

#include "kc/kcrt.h"
#include "kcrt_internal.h"

/* The bundle CMake builds from tests/runtime/kernels with --all-variants. */
#define RT_BUNDLE KC_BINARY_DIR "/tests/runtime/rt_kernels.kcb"
#ifndef KC_PROGRAM /* the kc that built the bundles (tests/runtime/CMakeLists.txt) */
#define KC_PROGRAM KC_BINARY_DIR "/tools/kc"
#endif
#define RT_KC KC_PROGRAM

static kcrt_context *rt_ctx;
static kcrt_bundle *rt_bundle;

#define ASSERT_OK(expr)                                                                                      \
    do {                                                                                                     \
        kcrt_status s_ = (expr);                                                                             \
        if (s_ != KCRT_OK)                                                                                   \
            fail_msg("%s: %s: %s", #expr, kcrt_status_name(s_), kcrt_error(rt_ctx));                         \
    } while (0)

#define ASSERT_STATUS(expected, expr)                                                                        \
    do {                                                                                                     \
        kcrt_status s_ = (expr);                                                                             \
        if (s_ != (expected))                                                                                \
            fail_msg("%s: expected %s, got %s: %s", #expr, kcrt_status_name(expected), kcrt_status_name(s_), \
                     kcrt_error(rt_ctx));                                                                    \
    } while (0)

/* Opens the context every test of a program uses, or says why not and
 * returns 77 (ctest's "skipped"). Call from main before cmocka. */
static inline int rt_open_or_skip(const char *prog)
{
    kcrt_status s = kcrt_open(&rt_ctx, NULL);
    const char *expect = getenv("KC_RT_EXPECT_BACKEND");
    if ((s == KCRT_ERROR_NO_DEVICE || s == KCRT_ERROR_NO_BACKEND) && (!expect || !strcmp(expect, "vulkan"))) {
        fprintf(stderr, "%s: skipped: no device: %s\n", prog, kcrt_error(rt_ctx));
        kcrt_close(rt_ctx);
        return KC_TEST_SKIP;
    }
    if (s != KCRT_OK) {
        fprintf(stderr, "%s: kcrt_open: %s\n", prog, kcrt_error(rt_ctx));
        return 1;
    }
    if (expect && strcmp(expect, kcrt_backend_name(rt_ctx)) != 0) {
        fprintf(stderr, "%s: the tests should run on %s (KC_RT_TEST_BACKEND), but auto chose %s ('%s')\n",
                prog, expect, kcrt_backend_name(rt_ctx), kcrt_device_name(rt_ctx));
        return 1;
    }
    const char *v = getenv("KCRT_VALIDATION");
    if (v && strcmp(v, "1") == 0 && !strcmp(kcrt_backend_name(rt_ctx), "vulkan") &&
        !kcrt_validation_enabled(rt_ctx)) {
        fprintf(stderr, "%s: KCRT_VALIDATION=1 but the validation layer is off\n", prog);
        return 1;
    }
    return 0;
}

/* Is the tests' context on Vulkan? */
static inline bool rt_on_vulkan(void)
{
    return strcmp(kcrt_backend_name(rt_ctx), "vulkan") == 0;
}

/* In a test of what only the Vulkan backend does: skip it elsewhere. */
#define RT_NEED_VULKAN()                                                                                     \
    do {                                                                                                     \
        if (!rt_on_vulkan()) {                                                                               \
            print_message("    (a check of the Vulkan backend: skipped on %s)\n",                            \
                          kcrt_backend_name(rt_ctx));                                                        \
            skip();                                                                                          \
        }                                                                                                    \
    } while (0)

static inline int rt_load_bundle(void)
{
    if (kcrt_bundle_load(rt_ctx, RT_BUNDLE, &rt_bundle) != KCRT_OK) {
        fprintf(stderr, "cannot load %s: %s\n", RT_BUNDLE, kcrt_error(rt_ctx));
        return 1;
    }
    return 0;
}

/* After every test: the validation layer said nothing, nothing is left
 * pending. */
static inline int rt_teardown(void **state)
{
    (void)state;
    if (rt_ctx)
        kcrt_finish(rt_ctx);
    if (kcrt_validation_message_count() != 0)
        fail_msg("the validation layer reported %llu message(s); the last: %s",
                 (unsigned long long)kcrt_validation_message_count(), kcrt_validation_last_message());
    return 0;
}

/* Closes everything and checks the validation layer once more (object
 * leaks are reported when the device goes). Returns main's exit code. */
static inline int rt_close_all(int failed)
{
    kcrt_close(rt_ctx);
    rt_ctx = NULL;
    if (kcrt_validation_message_count() != 0) {
        fprintf(stderr, "the validation layer reported %llu message(s); the last: %s\n",
                (unsigned long long)kcrt_validation_message_count(), kcrt_validation_last_message());
        return 1;
    }
    return failed ? 1 : 0;
}

/* ---- random inputs (xorshift64*, fixed seeds) ------------------------------------------ */

typedef struct rt_rng {
    uint64_t s;
} rt_rng;

static inline uint64_t rt_next(rt_rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545F4914F6CDD1Dull;
}

static inline float rt_uniform(rt_rng *r, float lo, float hi)
{
    return lo + (hi - lo) * (float)((rt_next(r) >> 40) / 16777216.0);
}

static inline int rt_int(rt_rng *r, int lo, int hi) /* [lo, hi] */
{
    return lo + (int)(rt_next(r) % (uint64_t)((int64_t)hi - lo + 1));
}

static inline void rt_fill_f32(float *x, size_t n, rt_rng *r, float lo, float hi)
{
    for (size_t i = 0; i < n; i++)
        x[i] = rt_uniform(r, lo, hi);
}

static inline void rt_fill_i32(int *x, size_t n, rt_rng *r, int lo, int hi)
{
    for (size_t i = 0; i < n; i++)
        x[i] = rt_int(r, lo, hi);
}

/* ---- buffers ------------------------------------------------------------------------------ */

static inline kcrt_buffer *rt_buf(size_t bytes)
{
    kcrt_buffer *b = NULL;
    ASSERT_OK(kcrt_buffer_create(rt_ctx, bytes, &b));
    return b;
}

static inline kcrt_buffer *rt_buf_from(const void *data, size_t bytes)
{
    kcrt_buffer *b = rt_buf(bytes);
    ASSERT_OK(kcrt_buffer_write(b, 0, data, bytes));
    return b;
}

/* Fills an output with a pattern no kernel writes by chance: NaN for
 * floats (0x7fc0dead), 0xdeadbeef for the rest. */
static inline void rt_poison(kcrt_buffer *b, uint32_t word)
{
    size_t n = kcrt_buffer_size(b);
    uint32_t *w = malloc(n + 4);
    for (size_t i = 0; i < n / 4 + 1; i++)
        w[i] = word;
    ASSERT_OK(kcrt_buffer_write(b, 0, w, n));
    free(w);
}

#define RT_NAN 0x7fc0deadu
#define RT_BEEF 0xdeadbeefu

static inline void *rt_read(kcrt_buffer *b)
{
    size_t n = kcrt_buffer_size(b);
    void *p = malloc(n);
    ASSERT_OK(kcrt_buffer_read(b, 0, p, n));
    return p;
}

static inline kcrt_kernel *rt_kernel(const char *name)
{
    kcrt_kernel *k = NULL;
    ASSERT_OK(kcrt_kernel_get(rt_bundle, name, &k));
    return k;
}

static inline kcrt_kernel *rt_variant(const char *name, const char *tunables)
{
    kcrt_kernel *k = NULL;
    ASSERT_OK(kcrt_kernel_get_variant(rt_bundle, name, tunables, &k));
    return k;
}

/* Does the tests' context run variants of this target? Vulkan: spirv;
 * HIP: the device's gfx name; CUDA: sm_NN not newer than the device's. */
static inline bool rt_runs(const char *target)
{
    const char *mine = kcrt_device_info_get(rt_ctx)->target;
    if (!strncmp(mine, "sm_", 3) && !strncmp(target, "sm_", 3))
        return atoi(target + 3) <= atoi(mine + 3);
    return strcmp(target, mine) == 0;
}

/* Every variant of a kernel this context runs (each tunables once), for
 * tests that run them all. */
static inline int rt_variants(const char *name, const char **out, int max)
{
    int n = 0;
    for (int i = 0; i < kcrt_bundle_kernel_count(rt_bundle); i++) {
        const kcrt_kernel_info *k = kcrt_bundle_kernel_info(rt_bundle, i);
        if (strcmp(k->name, name) != 0)
            continue;
        for (int j = 0; j < k->nvariants && n < max; j++) {
            bool seen = false;
            for (int m = 0; m < n; m++)
                seen |= strcmp(out[m], k->variants[j].tunables) == 0;
            if (!seen && rt_runs(k->variants[j].target))
                out[n++] = k->variants[j].tunables;
        }
    }
    return n;
}

/* ---- comparisons -------------------------------------------------------------------------- */

/* |got - want| <= atol + rtol * |want|, NaN never passes. */
static inline void rt_check_f32(const char *what, const float *got, const double *want, size_t n, double rtol,
                                double atol)
{
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - want[i]);
        if (!(d <= atol + rtol * fabs(want[i])))
            fail_msg("%s[%zu] = %.9g, expected %.9g (error %.3g)", what, i, got[i], want[i], d);
    }
}

static inline void rt_check_i32(const char *what, const int *got, const int *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i])
            fail_msg("%s[%zu] = %d (0x%08x), expected %d", what, i, got[i], (unsigned)got[i], want[i]);
}

#endif
