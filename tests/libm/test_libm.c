/*
 * test_libm.c — the accuracy of compiler/libm/kc_math.kc, compiled as C
 * on the host (kc_shim.h gives it the kc built-ins), against glibc's
 * double functions:
 *   - sqrtf correctly rounded for every float in [1, 4) (which is every
 *     significand, both exponent parities) and every subnormal; rsqrtf
 *     on [1, 4) within 0.501 ulp;
 *   - each function on a dense sample of bit patterns (all of the float
 *     range, signs and subnormals included) within its bound;
 *   - sinf, cosf, tanf densely on the audio range |x| <= 1e5 and on huge
 *     arguments (the worst case for the reduction included);
 *   - powf on sampled (x, y) of several kinds and the C99 special cases;
 *   - the special values of every function, bit for bit.
 * The bounds are those of docs/math.md. Built twice: plain (float + - *
 * correctly rounded, unfused, as a device does without contraction) and
 * as test_libm_contract with fused multiply-adds wherever the compiler
 * likes, as a Vulkan driver may do; both must pass. Sanitizer and
 * unoptimised builds use a smaller sample to stay within a minute.
 */
#include "kc_test.h"

#include "libm_check.h"

#if defined(__SANITIZE_ADDRESS__) || !defined(__OPTIMIZE__)
#define LIBM_SLOW 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define LIBM_SLOW 1
#endif
#endif
#ifdef LIBM_SLOW
#define SAMPLE (1 << 20)     /* per function */
#define STRIDE 997           /* for the audio range */
#elif defined(LIBM_CONTRACT) /* the second build: a quarter of the work */
#define SAMPLE (4 << 20)
#define STRIDE 241
#else
#define SAMPLE (16 << 20)
#define STRIDE 61
#endif

static bool same_float(float a, float b)
{
    return (isnan(a) && isnan(b)) || kc_as_uint(a) == kc_as_uint(b);
}

/* The largest error over inputs x for which next() is called n times. */
typedef struct worst {
    double err;
    float x;
} worst;

static void account(worst *w, const libm_fn *f, float x)
{
    double e = libm_ulp_error(f->fn(x), f->ref((double)x));
    if (e > w->err) {
        w->err = e;
        w->x = x;
    }
}

static void assert_within(const libm_fn *f, worst w, const char *where)
{
    print_message("%-7s %-22s max %.3f ulp at %a\n", f->name, where, w.err, w.x);
    if (w.err > f->bound)
        fail_msg("%s(%a) = %a, exact %a: %.3f ulp > %.2f (%s)", f->name, w.x, f->fn(w.x), f->ref(w.x), w.err,
                 f->bound, where);
}

static const libm_fn *fn_named(const char *name)
{
    for (int i = 0; i < LIBM_NFNS; i++)
        if (strcmp(libm_fns[i].name, name) == 0)
            return &libm_fns[i];
    return NULL;
}

/* ---- sqrtf ------------------------------------------------------------------- */

static void sqrt_every_float_in_1_4(void **state)
{
    (void)state;
    long wrong = 0;
    uint32_t first = 0;
    for (uint32_t b = 0x3f800000u; b < 0x40800000u; b++) {
        float x = kc_as_float(b);
        if (kc_as_uint(__kc_sqrtf(x)) != kc_as_uint((float)sqrt(x)) && wrong++ == 0)
            first = b;
    }
    if (wrong)
        fail_msg("sqrtf not correctly rounded for %ld inputs, first %a", wrong, kc_as_float(first));
}

static void sqrt_every_subnormal(void **state)
{
    (void)state;
    for (uint32_t b = 1; b < 0x00800000u; b++) {
        float x = kc_as_float(b);
        if (kc_as_uint(__kc_sqrtf(x)) != kc_as_uint((float)sqrt(x)))
            fail_msg("sqrtf(%a) = %a, want %a", x, __kc_sqrtf(x), (float)sqrt(x));
    }
}

/* 1/sqrt(m) for m in [1, 4) is every case (the exponent is scaled exactly):
 * all within a hair of correct rounding. */
static void rsqrt_every_float_in_1_4(void **state)
{
    (void)state;
    double worst = 0;
    float at = 0;
    for (uint32_t b = 0x3f800000u; b < 0x40800000u; b++) {
        float x = kc_as_float(b);
        double e = libm_ulp_error(__kc_rsqrtf(x), 1.0 / sqrt((double)x));
        if (e > worst)
            worst = e, at = x;
    }
    print_message("rsqrtf  [1, 4)                 max %.6f ulp at %a\n", worst, at);
    if (worst > 0.501)
        fail_msg("rsqrtf(%a) = %a: %.6f ulp", at, __kc_rsqrtf(at), worst);
}

/* ---- every function, sampled --------------------------------------------------- */

static void sampled(void **state)
{
    const libm_fn *f = *state;
    uint32_t s = 0x9e3779b9u ^ (uint32_t)(f - libm_fns);
    worst w = {0, 0};
    for (long i = 0; i < SAMPLE; i++)
        account(&w, f, kc_as_float(libm_next(&s)));
    assert_within(f, w, "all bit patterns");
}

/* Where results go from normal to subnormal to zero, and to infinity. */
static void edges(void **state)
{
    (void)state;
    static const struct {
        const char *fn;
        float lo, hi;
    } ranges[] = {
        {"expf", 88.0f, 89.0f},      {"expf", -104.0f, -87.0f}, {"exp2f", 127.0f, 129.0f},
        {"exp2f", -151.0f, -125.0f}, {"tanhf", 8.0f, 10.0f},    {"erff", 3.5f, 4.5f},
        {"logf", 0.99f, 1.01f},      {"log2f", 0.99f, 1.01f},   {"tanhf", 0.5f, 0.6f},
        {"erff", 0.8f, 0.9f},        {"sinf", 0.7f, 0.9f},      {"cosf", 0.7f, 0.9f},
    };
    for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
        const libm_fn *f = fn_named(ranges[r].fn);
        worst w = {0, 0};
        for (float x = ranges[r].lo; x <= ranges[r].hi; x = nextafterf(x, INFINITY)) {
            account(&w, f, x);
            account(&w, f, -x);
        }
        assert_within(f, w, "edge range");
    }
}

/* ---- sin, cos, tan: audio phases and huge arguments ------------------------------- */

static void trig_audio_range(void **state)
{
    (void)state;
    const char *names[] = {"sinf", "cosf", "tanf"};
    for (int n = 0; n < 3; n++) {
        const libm_fn *f = fn_named(names[n]);
        worst w = {0, 0};
        for (uint32_t b = 0; b <= kc_as_uint(1e5f); b += STRIDE)
            account(&w, f, kc_as_float(b | ((b & 1u) << 31)));
        assert_within(f, w, "|x| <= 1e5");
    }
}

static void trig_huge_arguments(void **state)
{
    (void)state;
    static const float special[] = {
        16367173.0f * 0x1p72f, /* the float nearest a multiple of pi/2 */
        0x1.fffffep127f,
        1e38f,
        1e30f,
        1e20f,
        0x1p24f,
        0x1p23f,
        105414350.0f,
        1e6f,
        3.14159274f,
        1.57079637f,
        6.28318548f,
        0.785398185f,
        0.785398126f,
        2.35619450f,
        1e5f,
        48000.0f * 6.28318548f,
    };
    const char *names[] = {"sinf", "cosf", "tanf"};
    for (int n = 0; n < 3; n++) {
        const libm_fn *f = fn_named(names[n]);
        worst w = {0, 0};
        for (size_t i = 0; i < sizeof special / sizeof special[0]; i++) {
            account(&w, f, special[i]);
            account(&w, f, -special[i]);
        }
        uint32_t s = 12345u + (uint32_t)n;
        for (long i = 0; i < SAMPLE / 8; i++) /* exponents 2^17 .. 2^127 */
            account(&w, f, kc_as_float(0x48000000u + libm_next(&s) % (0x7f800000u - 0x48000000u)));
        assert_within(f, w, "huge arguments");
    }
}

/* ---- powf ----------------------------------------------------------------------- */

static double pow_error(float x, float y)
{
    return libm_ulp_error(__kc_powf(x, y), pow((double)x, (double)y));
}

static void pow_sampled(void **state)
{
    (void)state;
    const char *kinds[] = {"any bit patterns", "finite results", "integer powers", "x near 1"};
    for (int kind = 0; kind < 4; kind++) {
        uint32_t s = 4242u + (uint32_t)kind;
        double worst_err = 0;
        float wx = 0, wy = 0;
        for (long i = 0; i < SAMPLE / 4; i++) {
            float x = kc_as_float(libm_next(&s)), y;
            float r = (float)(int32_t)libm_next(&s) * 0x1p-31f; /* [-1, 1) */
            if (kind == 0) {
                y = kc_as_float(libm_next(&s));
            } else if (kind == 1) { /* |y log2 x| up to 160: over/underflow edges included */
                x = fabsf(x);
                double l = fabs(log2((double)x));
                y = (float)(r * 160.0 / (l < 1e-30 ? 1.0 : l));
            } else if (kind == 2) {
                y = (float)((int)(libm_next(&s) % 81u) - 40);
            } else {
                x = 1.0f + r * 0x1p-10f;
                y = (float)(int32_t)libm_next(&s) * 0x1p-13f;
            }
            double e = pow_error(x, y);
            if (e > worst_err) {
                worst_err = e, wx = x, wy = y;
            }
        }
        print_message("powf    %-22s max %.3f ulp at (%a, %a)\n", kinds[kind], worst_err, wx, wy);
        if (worst_err > 1.5)
            fail_msg("powf(%a, %a) = %a, exact %a: %.3f ulp (%s)", wx, wy, __kc_powf(wx, wy), pow(wx, wy),
                     worst_err, kinds[kind]);
    }
}

/* C99 F.9.4.4, and a few exact cases. */
static void pow_special_cases(void **state)
{
    (void)state;
    static const struct {
        float x, y, want;
    } cases[] = {
        {NAN, 0.0f, 1.0f},
        {NAN, -0.0f, 1.0f},
        {-3.0f, 0.0f, 1.0f},
        {1.0f, NAN, 1.0f},
        {1.0f, INFINITY, 1.0f},
        {1.0f, -INFINITY, 1.0f},
        {-1.0f, INFINITY, 1.0f},
        {-1.0f, -INFINITY, 1.0f},
        {NAN, 1.0f, NAN},
        {2.0f, NAN, NAN},
        {-2.0f, 0.5f, NAN},
        {-8.0f, 1.0f / 3, NAN},
        {0.0f, -3.0f, INFINITY},
        {-0.0f, -3.0f, -INFINITY},
        {0.0f, -2.0f, INFINITY},
        {-0.0f, -2.5f, INFINITY},
        {0.0f, -INFINITY, INFINITY},
        {-0.0f, -INFINITY, INFINITY},
        {0.0f, 3.0f, 0.0f},
        {-0.0f, 3.0f, -0.0f},
        {-0.0f, 2.0f, 0.0f},
        {-0.0f, 0.5f, 0.0f},
        {0.0f, INFINITY, 0.0f},
        {0.5f, -INFINITY, INFINITY},
        {-0.5f, -INFINITY, INFINITY},
        {2.0f, -INFINITY, 0.0f},
        {-2.0f, -INFINITY, 0.0f},
        {0.5f, INFINITY, 0.0f},
        {2.0f, INFINITY, INFINITY},
        {-2.0f, INFINITY, INFINITY},
        {-INFINITY, -3.0f, -0.0f},
        {-INFINITY, -2.0f, 0.0f},
        {-INFINITY, -0.5f, 0.0f},
        {-INFINITY, 3.0f, -INFINITY},
        {-INFINITY, 2.0f, INFINITY},
        {-INFINITY, 0.5f, INFINITY},
        {INFINITY, -1.0f, 0.0f},
        {INFINITY, 0.5f, INFINITY},
        {2.0f, 10.0f, 1024.0f},
        {-2.0f, 3.0f, -8.0f},
        {-2.0f, -3.0f, -0.125f},
        {4.0f, 0.5f, 2.0f},
        {10.0f, 2.0f, 100.0f},
        {-1.0f, 0x1p25f, 1.0f},
        {-1.0f, 3.0f, -1.0f},
        {2.0f, 128.0f, INFINITY},
        {2.0f, -150.0f, 0.0f},
        {2.0f, -149.0f, 0x1p-149f},
        {-2.0f, -149.0f, -0x1p-149f},
        {0x1p-149f, 1.0f, 0x1p-149f},
        {0.5f, 0x1p40f, 0.0f},
        {3.0f, 0x1p40f, INFINITY},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        float got = __kc_powf(cases[i].x, cases[i].y);
        if (!same_float(got, cases[i].want))
            fail_msg("powf(%a, %a) = %a, want %a", cases[i].x, cases[i].y, got, cases[i].want);
    }
}

/* ---- special values, bit for bit ----------------------------------------------------- */

static void special_values(void **state)
{
    (void)state;
    static const struct {
        const char *fn;
        float x, want;
    } cases[] = {
        {"sqrtf", 0.0f, 0.0f},
        {"sqrtf", -0.0f, -0.0f},
        {"sqrtf", INFINITY, INFINITY},
        {"sqrtf", -INFINITY, NAN},
        {"sqrtf", -1.0f, NAN},
        {"sqrtf", -0x1p-149f, NAN},
        {"sqrtf", NAN, NAN},
        {"sqrtf", 4.0f, 2.0f},
        {"sqrtf", 0x1p-148f, 0x1p-74f},
        {"sqrtf", 0x1.fffffep127f, 0x1.fffffep63f},
        {"rsqrtf", 0.0f, INFINITY},
        {"rsqrtf", -0.0f, -INFINITY},
        {"rsqrtf", INFINITY, 0.0f},
        {"rsqrtf", -1.0f, NAN},
        {"rsqrtf", NAN, NAN},
        {"rsqrtf", 4.0f, 0.5f},
        {"rsqrtf", 0x1p-148f, 0x1p74f},
        {"expf", 0.0f, 1.0f},
        {"expf", -0.0f, 1.0f},
        {"expf", INFINITY, INFINITY},
        {"expf", -INFINITY, 0.0f},
        {"expf", NAN, NAN},
        {"expf", 89.0f, INFINITY},
        {"expf", -104.0f, 0.0f},
        {"expf", 0x1p-149f, 1.0f},
        {"exp2f", 0.0f, 1.0f},
        {"exp2f", 3.0f, 8.0f},
        {"exp2f", -149.0f, 0x1p-149f},
        {"exp2f", -150.0f, 0.0f},
        {"exp2f", 127.0f, 0x1p127f},
        {"exp2f", 128.0f, INFINITY},
        {"exp2f", -INFINITY, 0.0f},
        {"exp2f", NAN, NAN},
        {"logf", 1.0f, 0.0f},
        {"logf", 0.0f, -INFINITY},
        {"logf", -0.0f, -INFINITY},
        {"logf", -1.0f, NAN},
        {"logf", -INFINITY, NAN},
        {"logf", INFINITY, INFINITY},
        {"logf", NAN, NAN},
        {"log2f", 1.0f, 0.0f},
        {"log2f", 8.0f, 3.0f},
        {"log2f", 0x1p-149f, -149.0f},
        {"log2f", 0x1p127f, 127.0f},
        {"log2f", 0.0f, -INFINITY},
        {"log2f", -2.0f, NAN},
        {"log2f", INFINITY, INFINITY},
        {"log2f", NAN, NAN},
        {"sinf", 0.0f, 0.0f},
        {"sinf", -0.0f, -0.0f},
        {"sinf", 0x1p-149f, 0x1p-149f},
        {"sinf", -0x1p-149f, -0x1p-149f},
        {"sinf", INFINITY, NAN},
        {"sinf", -INFINITY, NAN},
        {"sinf", NAN, NAN},
        {"cosf", 0.0f, 1.0f},
        {"cosf", -0.0f, 1.0f},
        {"cosf", 0x1p-149f, 1.0f},
        {"cosf", INFINITY, NAN},
        {"cosf", NAN, NAN},
        {"tanf", 0.0f, 0.0f},
        {"tanf", -0.0f, -0.0f},
        {"tanf", 0x1p-149f, 0x1p-149f},
        {"tanf", INFINITY, NAN},
        {"tanf", NAN, NAN},
        {"tanhf", 0.0f, 0.0f},
        {"tanhf", -0.0f, -0.0f},
        {"tanhf", 0x1p-149f, 0x1p-149f},
        {"tanhf", INFINITY, 1.0f},
        {"tanhf", -INFINITY, -1.0f},
        {"tanhf", 20.0f, 1.0f},
        {"tanhf", NAN, NAN},
        {"erff", 0.0f, 0.0f},
        {"erff", -0.0f, -0.0f},
        {"erff", INFINITY, 1.0f},
        {"erff", -INFINITY, -1.0f},
        {"erff", 5.0f, 1.0f},
        {"erff", NAN, NAN},
        {"log10f", 1.0f, 0.0f},
        {"log10f", 1000.0f, 3.0f},
        {"log10f", 1e-30f, -30.0f},
        {"log10f", 0.0f, -INFINITY},
        {"log10f", -1.0f, NAN},
        {"log10f", INFINITY, INFINITY},
        {"log10f", NAN, NAN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const libm_fn *f = fn_named(cases[i].fn);
        float got = f->fn(cases[i].x);
        if (!same_float(got, cases[i].want))
            fail_msg("%s(%a) = %a, want %a", cases[i].fn, cases[i].x, got, cases[i].want);
    }
    /* erf and sin of subnormals are x (2/sqrt(pi)) and x, rounded once */
    for (uint32_t b = 1; b < 0x00800000u; b += 4099) {
        float x = kc_as_float(b);
        if (libm_ulp_error(__kc_erff(x), erf((double)x)) > 1.0 || __kc_sinf(x) != x || __kc_tanf(-x) != -x)
            fail_msg("subnormal %a: erff %a sinf %a tanf(-x) %a", x, __kc_erff(x), __kc_sinf(x),
                     __kc_tanf(-x));
    }
}

/* fmodf is exact, so it must equal glibc's bit for bit: random patterns
 * (every exponent distance, subnormals, NaN, infinities), then the cases
 * C99 F.9.7.1 names. */
static void fmod_exact(void **state)
{
    (void)state;
    uint32_t s = 0x2545f491u;
    for (long i = 0; i < SAMPLE / 4; i++) {
        float x = kc_as_float(libm_next(&s)), y = kc_as_float(libm_next(&s));
        if (i % 3 == 1) /* near each other too, where most remainders are */
            y = kc_as_float((kc_as_uint(x) & 0x80000000u) | ((kc_as_uint(y) & 0x7fffffffu) % 0x0c000000u +
                                                             (kc_as_uint(x) & 0x7fffffffu) / 2));
        float got = __kc_fmodf(x, y), want = fmodf(x, y);
        if (!same_float(got, want))
            fail_msg("fmodf(%a, %a) = %a, want %a", x, y, got, want);
    }
    static const float cases[][3] = {
        {0.0f, 1.0f, 0.0f},         {-0.0f, 1.0f, -0.0f},   {5.5f, 2.0f, 1.5f},  {-5.5f, 2.0f, -1.5f},
        {5.5f, -2.0f, 1.5f},        {1.0f, INFINITY, 1.0f}, {INFINITY, 1.0f, NAN}, {1.0f, 0.0f, NAN},
        {1.0f, NAN, NAN},           {NAN, 1.0f, NAN},       {6.0f, 3.0f, 0.0f},  {-6.0f, 3.0f, -0.0f},
        {0x1p127f, 0x1p-149f, 0.0f}, {0x1.fffffep127f, 3.0f, 0.0f}, {0x1.fffffep127f, 11.0f, 9.0f},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        float got = __kc_fmodf(cases[i][0], cases[i][1]);
        if (!same_float(got, cases[i][2]))
            fail_msg("fmodf(%a, %a) = %a, want %a", cases[i][0], cases[i][1], got, cases[i][2]);
    }
}

/* atan2f over the whole plane (random bit patterns for x and y, and pairs
 * with a small exponent difference, where most angles are), against
 * glibc's atan2 in double; then C99 F.9.1.4's special cases. */
static void atan2_sampled(void **state)
{
    (void)state;
    uint32_t s = 0x1234567u;
    worst w = {0, 0};
    float wx = 0, wy = 0;
    for (long i = 0; i < SAMPLE / 2; i++) {
        float y = kc_as_float(libm_next(&s)), x = kc_as_float(libm_next(&s));
        if (i % 2) /* exponents within 8 of each other */
            x = kc_as_float((kc_as_uint(x) & 0x807fffffu) | ((kc_as_uint(y) & 0x7f800000u) ^ ((i & 7u) << 23)));
        double e = libm_ulp_error(__kc_atan2f(y, x), atan2((double)y, (double)x));
        if (e > w.err)
            w.err = e, wx = x, wy = y;
    }
    print_message("atan2f  sampled pairs           max %.3f ulp at (%a, %a)\n", w.err, wy, wx);
    if (w.err > 2.0)
        fail_msg("atan2f(%a, %a) = %a: %.3f ulp", wy, wx, __kc_atan2f(wy, wx), w.err);
    static const float cases[][3] = {
        {0.0f, 1.0f, 0.0f},          {-0.0f, 1.0f, -0.0f},         {0.0f, -0.0f, 0x1.921fb6p+1f},
        {-0.0f, -0.0f, -0x1.921fb6p+1f}, {0.0f, 0.0f, 0.0f},       {1.0f, 0.0f, 0x1.921fb6p+0f},
        {-1.0f, -0.0f, -0x1.921fb6p+0f}, {1.0f, INFINITY, 0.0f},   {1.0f, -INFINITY, 0x1.921fb6p+1f},
        {INFINITY, INFINITY, 0x1.921fb6p-1f}, {-INFINITY, -INFINITY, -0x1.2d97c8p+1f},
        {INFINITY, 3.0f, 0x1.921fb6p+0f}, {1.0f, 1.0f, 0x1.921fb6p-1f}, {NAN, 1.0f, NAN}, {1.0f, NAN, NAN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        float got = __kc_atan2f(cases[i][0], cases[i][1]);
        if (!same_float(got, cases[i][2]))
            fail_msg("atan2f(%a, %a) = %a, want %a", cases[i][0], cases[i][1], got, cases[i][2]);
    }
}

int main(void)
{
#ifdef LIBM_CONTRACT
    if (!__builtin_cpu_supports("fma")) {
        fprintf(stderr, "skipped: this CPU has no fused multiply-add\n");
        return KC_TEST_SKIP;
    }
#endif
    struct CMUnitTest tests[LIBM_NFNS + 12];
    int n = 0;
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(sqrt_every_float_in_1_4);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(sqrt_every_subnormal);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(rsqrt_every_float_in_1_4);
    static char names[LIBM_NFNS][32];
    for (int i = 0; i < LIBM_NFNS; i++) {
        snprintf(names[i], sizeof names[i], "sampled_%s", libm_fns[i].name);
        tests[n++] = (struct CMUnitTest){names[i], sampled, NULL, NULL, (void *)&libm_fns[i]};
    }
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(edges);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(trig_audio_range);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(trig_huge_arguments);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(pow_sampled);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(pow_special_cases);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(special_values);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(fmod_exact);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(atan2_sampled);
    return _cmocka_run_group_tests("libm", tests, (size_t)n, NULL, NULL);
}
