/*
 * test_kernels_device.c — every variant of every shipped kernel
 * (the .kc files of kernels/, built by CMake with `kc build kernels --all-variants`)
 * run on the device through kc/kcrt.h and compared with the C references
 * of reference.c (which refcheck.py proves against numpy).
 *
 * Each kernel has a few small, awkward cases: sizes that are multiples of
 * no tile and of no 4 (gemm's and gemv's float4 buffers included: their
 * rows then start inside a float4), a single row or element, one past the
 * largest tile, and every scalar option (gemm's bias and activations,
 * conv1d's slopes, dilations and paddings, conv_transpose1d's strides and
 * paddings, layernorm's eps, masked softmax rows). Every case runs in every
 * variant the bundle has of saxpy, gemv and the other small spaces, and in
 * a sample of the hundreds of gemm, conv1d and conv_transpose1d and the
 * 126 and 172 of softmax and layernorm (every value of every tunable, and
 * more picked by the seed: kd_sample_variants says why); then one or two real shapes of kernels/kc.yaml run in the default
 * variant and a few others picked by the seed.
 *
 * Inputs are fresh random numbers each run (never zeros), from a seed the
 * test prints and KC_TEST_SEED replays. Outputs are poisoned with a NaN
 * pattern before every launch and allocated 16 bytes longer than the
 * kernel's extent: the slack must still hold the poison afterwards (no
 * write out of bounds), and float4 inputs are padded with NaN, which must
 * never reach a result (docs/kernels.md, "Buffers").
 *
 * Tolerances. Each output element must be within a bound from the
 * worst-case error analysis of its kernel (below, per kernel), and the
 * relative L2 error of the whole output within kc.yaml's tolerance for the
 * kernel (read from the bundle). kc.yaml derives that tolerance for two
 * variants against each other (each about u sqrt(K / 6) from exact, u =
 * 2^-24); the references accumulate in double and round once, so a
 * variant is compared with (nearly) the exact result and its expected L2
 * error is half the tolerance's basis, a margin of 10-20x. The per-element
 * bounds are the classical ones: a float sum of K products, in any order,
 * fused or not, is within gamma(K) = K u / (1 - K u) times the sum of the
 * products' magnitudes (Higham, "Accuracy and Stability of Numerical
 * Algorithms", 3.1), which the references compute by running on |inputs|.
 * They are loose by sqrt(K) on purpose: they hold for every summation order
 * and catch what L2 cannot see, one wrong element among thousands.
 *
 * The Vulkan validation layer must say nothing (rt_test.h's teardown); that
 * and opening the context are the only uses of anything beyond kc/kcrt.h.
 */
#include "rt_test.h"

#include <fnmatch.h>
#include <time.h>
#include <unistd.h>

#include "reference.h"

/* KD_BUNDLE: kernels/ with every variant (kernels_all.kcb,
 * tests/kernels/CMakeLists.txt). */

#define KD_U 0x1p-24  /* unit roundoff of float */
#define KD_MAXV 2048  /* variants of one kernel (gemm has 1,596) */
#define KD_SAMPLE 32  /* variants of gemm, conv1d and conv_transpose1d run (kd_sample_variants) */
#define KD_MAXSEEN 64 /* tunable values (NAME=VALUE) of one kernel */

static uint64_t kd_seed;
static kcrt_bundle *kd_bundle;

/* A generator for one test, from the run's seed (splitmix64 of seed and
 * salt: never the all-zero state xorshift cannot leave). */
static rt_rng kd_rng(uint64_t salt)
{
    uint64_t z = kd_seed + salt * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (rt_rng){z ? z : 1};
}

/* Higham's gamma(n) = n u / (1 - n u): the relative error bound of n
 * roundings. */
static double gamma_n(double n)
{
    return n * KD_U / (1 - n * KD_U);
}

/* ---- inputs ---------------------------------------------------------------------------------- */

static float *kd_alloc(size_t n)
{
    float *p = malloc(sizeof(float) * (n ? n : 1));
    assert_non_null(p);
    return p;
}

static float *kd_uniform(rt_rng *r, size_t n, float lo, float hi)
{
    float *p = kd_alloc(n);
    rt_fill_f32(p, n, r, lo, hi);
    return p;
}

/* standard normal (Box-Muller), scaled and shifted */
static float *kd_normal(rt_rng *r, size_t n, float mean, float sd)
{
    float *p = kd_alloc(n);
    for (size_t i = 0; i < n; i++) {
        double u1 = ((rt_next(r) >> 11) + 1.0) * 0x1p-53, u2 = (rt_next(r) >> 11) * 0x1p-53;
        p[i] = (float)(mean + sd * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2));
    }
    return p;
}

static float *kd_abs(const float *x, size_t n)
{
    float *p = kd_alloc(n);
    for (size_t i = 0; i < n; i++)
        p[i] = fabsf(x[i]);
    return p;
}

/* a reference's magnitudes (sums of |terms|) as a kd_case's l2norm */
static float *kd_norm_of(const double *mag, size_t n)
{
    float *p = kd_alloc(n);
    for (size_t i = 0; i < n; i++)
        p[i] = (float)mag[i];
    return p;
}

static double *kd_bounds(size_t n)
{
    double *b = calloc(n ? n : 1, sizeof(double));
    assert_non_null(b);
    return b;
}

/* ---- device buffers -------------------------------------------------------------------------- */

/* The float4 padding's NaN: another payload than the outputs' poison
 * (RT_NAN), so that a failure tells a padding lane that reached a result
 * (arithmetic keeps a NaN's payload) from an element never written. */
static const uint32_t kd_pad_nan = 0x7fc0bad4u;

/* A float input of n floats; as a float4 buffer (vec4) rounded up to 16
 * bytes with NaN in the padding, which must never reach a result. */
static kcrt_buffer *kd_in(const float *x, size_t n, bool vec4)
{
    size_t padded = vec4 ? (n + 3) / 4 * 4 : n;
    float *p = kd_alloc(padded);
    memcpy(p, x, sizeof(float) * n);
    for (size_t i = n; i < padded; i++)
        memcpy(&p[i], &kd_pad_nan, 4);
    kcrt_buffer *b = rt_buf_from(p, sizeof(float) * (padded ? padded : 1));
    free(p);
    return b;
}

#define KD_SLACK 4 /* floats after every output, which must keep their poison */

static kcrt_buffer *kd_out(size_t n)
{
    return rt_buf(sizeof(float) * (n + KD_SLACK));
}

/* ---- one case in many variants --------------------------------------------------------------- */

/* A launch and what it must produce. The arguments are in parameter order;
 * out is the output buffer (want.n floats and the slack). inout is the
 * input the output overwrites (saxpy's y), written again before each
 * launch instead of the poison. */
typedef struct kd_case {
    const char *kernel;
    char shape[200];
    kcrt_arg args[24];
    size_t nargs;
    kcrt_buffer *out;
    const float *inout;
    size_t n;
    const float *want;
    const double *bound; /* per element; NaN: the result must be NaN, and not the poison */
    double l2tol;        /* relative L2 error allowed over the whole output */
    /* relative to this vector's norm (n floats); NULL: want's. A sum's
     * cases pass S, the sum of its terms' magnitudes: a sum's rounding
     * scales with S, and a one-element output whose terms nearly cancel
     * (a 1 x 1 x 1 gemm or convolution, drawn now and then) is otherwise
     * judged relative to a result far smaller than its rounding. */
    const float *l2norm;
} kd_case;

/* How close a result came to failing: the largest error / bound of an
 * element, and the relative L2 error. */
typedef struct kd_margin {
    double ratio, l2;
} kd_margin;

/* The largest margins of the kernel under test, for the log. */
static kd_margin kd_worst;
static int kd_ncases; /* cases run since kd_begin */

static void kd_fold(kd_margin *into, kd_margin m)
{
    into->ratio = fmax(into->ratio, m.ratio);
    into->l2 = fmax(into->l2, m.l2);
}

/* What a NaN's bits say about where it came from. */
static const char *kd_nan_origin(uint32_t bits)
{
    return bits == RT_NAN       ? ": the poison, never written"
           : bits == kd_pad_nan ? ": the float4 padding's NaN"
                                : "";
}

/* Checks one variant's output: every element within its bound (NaN where
 * NaN is expected, and a NaN the kernel wrote), the relative L2 error
 * within the case's tolerance, and the slack past the output untouched. */
static kd_margin kd_check(const kd_case *c, const char *variant, const float *got)
{
    double num = 0, den = 0;
    size_t worst = 0;
    double worst_ratio = 0;
    for (size_t i = 0; i < c->n; i++) {
        double w = c->want[i], g = got[i], d = fabs(g - w);
        uint32_t bits;
        memcpy(&bits, &got[i], 4);
        if (isinf(w) && g == w) /* log_softmax's masked entries: exactly -inf */
            continue;
        if (isnan(c->bound[i]) || isnan(w)) {
            if (!isnan(g) || bits == RT_NAN)
                fail_msg(
                    "%s [%s] %s: y[%zu] = %.9g (0x%08x%s), expected a NaN written by the kernel (seed %llu)",
                    c->kernel, variant, c->shape, i, g, bits, kd_nan_origin(bits),
                    (unsigned long long)kd_seed);
            continue;
        }
        if (!(d <= c->bound[i]))
            fail_msg("%s [%s] %s: y[%zu] = %.9g (0x%08x%s), expected %.9g: error %.3g > bound %.3g "
                     "(first bad index; KC_TEST_SEED=%llu replays)",
                     c->kernel, variant, c->shape, i, g, bits, kd_nan_origin(bits), w, d, c->bound[i],
                     (unsigned long long)kd_seed);
        if (c->bound[i] > 0 && d / c->bound[i] > worst_ratio)
            worst_ratio = d / c->bound[i], worst = i;
        double scale = c->l2norm ? c->l2norm[i] : w;
        num += (g - w) * (g - w), den += scale * scale;
    }
    /* relative, but not to a norm below 1e-6 RMS: an output that small
     * (GELU's far negative tail, where 1 + erf cancels in float) is judged
     * by its elements' bounds alone */
    double l2 = sqrt(num / fmax(den, (double)c->n * 1e-12));
    if (!(l2 <= c->l2tol))
        fail_msg("%s [%s] %s: relative L2 error %.3g > %.3g; worst element y[%zu] = %.9g, expected %.9g "
                 "(KC_TEST_SEED=%llu replays)",
                 c->kernel, variant, c->shape, l2, c->l2tol, worst, got[worst], c->want[worst],
                 (unsigned long long)kd_seed);
    for (size_t i = c->n; i < c->n + KD_SLACK; i++) {
        uint32_t bits;
        memcpy(&bits, &got[i], 4);
        if (bits != RT_NAN)
            fail_msg("%s [%s] %s: wrote y[%zu] = %.9g, past the output's %zu floats (seed %llu)", c->kernel,
                     variant, c->shape, i, got[i], c->n, (unsigned long long)kd_seed);
    }
    return (kd_margin){worst_ratio, l2};
}

static kcrt_kernel *kd_variant(const char *name, const char *tunables)
{
    kcrt_kernel *k = NULL;
    ASSERT_OK(kcrt_kernel_get_variant(kd_bundle, name, tunables, &k));
    return k;
}

/* KC_TEST_VARIANTS=N: each case runs in at most N of its list's variants,
 * spread evenly over the list from its first (the default, where the list
 * is a sample). The sanitizer build sets it (tests/kernels/CMakeLists.txt):
 * there lavapipe's LLVM compiling each variant's pipeline under ASan's
 * allocator was nearly all of the suite's time, and what the sanitizers
 * watch (the runtime, this program) does not change with the variant. The
 * default suite runs every variant of each list. */
static int kd_limit;

static int kd_count(int nv)
{
    return kd_limit > 0 && kd_limit < nv ? kd_limit : nv;
}

/* The k-th of the kd_count(nv) variants run from a list of nv. */
static int kd_pick(int k, int nv)
{
    return kd_count(nv) == nv ? k : (int)((long)k * nv / kd_count(nv));
}

/* Runs the case in each of the variants, each launch on a freshly
 * poisoned output, and checks every result. */
static void kd_run(const kd_case *c, const char *const *variants, int nv)
{
    kd_margin m = {0, 0};
    for (int k = 0; k < kd_count(nv); k++) {
        int v = kd_pick(k, nv);
        rt_poison(c->out, RT_NAN);
        if (c->inout)
            ASSERT_OK(kcrt_buffer_write(c->out, 0, c->inout, sizeof(float) * c->n));
        kc_test_at("%s [%s] %s", c->kernel, variants[v][0] ? variants[v] : "default", c->shape);
        kcrt_status s = kcrt_launch(kd_variant(c->kernel, variants[v]), c->args, c->nargs);
        if (s != KCRT_OK)
            fail_msg("%s [%s] %s: kcrt_launch: %s: %s", c->kernel, variants[v], c->shape, kcrt_status_name(s),
                     kcrt_error(rt_ctx));
        float *got = rt_read(c->out);
        kd_fold(&m, kd_check(c, variants[v], got));
        free(got);
    }
    print_message("      %s: largest error %.2f of its bound, relative L2 %.2g (<= %.2g)\n", c->shape,
                  m.ratio, m.l2, c->l2tol);
    kd_fold(&kd_worst, m);
    kd_ncases++;
}

/* ---- variants -------------------------------------------------------------------------------- */

static const kcrt_kernel_info *kd_info(const char *name)
{
    for (int i = 0; i < kcrt_bundle_kernel_count(kd_bundle); i++)
        if (!strcmp(kcrt_bundle_kernel_info(kd_bundle, i)->name, name))
            return kcrt_bundle_kernel_info(kd_bundle, i);
    fail_msg("the bundle has no kernel '%s'", name);
    return NULL;
}

/* Every variant of the kernel (the bundle has SPIR-V only: each tunables
 * once), checked to be all of them. */
static int kd_every_variant(const char *name, const char **out)
{
    const kcrt_kernel_info *k = kd_info(name);
    int n = 0;
    for (int j = 0; j < k->nvariants; j++) {
        assert_true(rt_runs(k->variants[j].target));
        assert_true(n < KD_MAXV);
        out[n++] = k->variants[j].tunables;
    }
    assert_true(n > 0);
    return n;
}

/* Do the variant's tunables ("WG=64,BKV=8") hold `item` ("BKV=8") as one
 * of their comma-separated items? */
static bool kd_has_item(const char *tunables, const char *item)
{
    size_t len = strlen(item);
    for (const char *t = tunables; t; t = strchr(t, ',') ? strchr(t, ',') + 1 : NULL)
        if (strncmp(t, item, len) == 0 && (t[len] == ',' || t[len] == 0))
            return true;
    return false;
}

/* The default variant and `extra` more, chosen by the seed. */
static int kd_some_variants(const char *name, const char **out, int extra, rt_rng *r)
{
    const char *all[KD_MAXV];
    int n = kd_every_variant(name, all), m = 0;
    out[m++] = "";
    for (int i = 0; i < extra && i < n; i++)
        out[m++] = all[rt_int(r, 0, n - 1)];
    return m;
}

/* Does the variant ("BM=64,BN=32,...") have a tunable's value that no
 * variant before it had? Adds its values to seen. */
static bool kd_adds_value(const char *tunables, char seen[][32], int *nseen)
{
    char copy[256], *save = NULL;
    bool added = false;
    snprintf(copy, sizeof copy, "%s", tunables);
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int i = 0;
        while (i < *nseen && strcmp(seen[i], t))
            i++;
        if (i == *nseen) {
            assert_true(*nseen < KD_MAXSEEN && strlen(t) < 32);
            strcpy(seen[(*nseen)++], t);
            added = true;
        }
    }
    return added;
}

/* For the kernels with hundreds of variants: lavapipe compiles each
 * variant's pipeline in about half a second when its shader cache is
 * cold (as in CI, and after any change to kc or kernels/), so running
 * all 2,883 of gemm, conv1d and conv_transpose1d would take 13 minutes.
 * The sample: the default, then, in an order the seed shuffles, each
 * variant with a tunable value not yet taken (so every value of every
 * tunable runs), then the next ones of that order up to max. */
static int kd_sample_variants(const char *name, const char **out, int max, rt_rng *r)
{
    const char *all[KD_MAXV];
    int n = kd_every_variant(name, all), m = 0, nseen = 0;
    for (int i = n - 1; i > 0; i--) {
        int j = rt_int(r, 0, i);
        const char *t = all[i];
        all[i] = all[j], all[j] = t;
    }
    static char seen[KD_MAXSEEN][32];
    bool taken[KD_MAXV] = {false};
    out[m++] = "";
    for (int i = 0; i < n && m < max; i++)
        if (kd_adds_value(all[i], seen, &nseen))
            out[m++] = all[i], taken[i] = true;
    for (int i = 0; i < n && m < max; i++)
        if (!taken[i])
            out[m++] = all[i];
    return m;
}

/* Puts a variant the sample must hold (a design the seed might miss)
 * in place of the sample's last one. */
static void kd_force_variant(const char *name, const char **v, int nv, int slot, const char *tunables)
{
    const char *all[KD_MAXV];
    int n = kd_every_variant(name, all), i = 0;
    while (i < n && strcmp(all[i], tunables))
        i++;
    assert_true(i < n); /* a variant of the kernel: the names went out of date otherwise */
    assert_true(slot >= 1 && slot < nv);
    v[nv - slot] = all[i];
}

static void kd_begin(void)
{
    kd_worst = (kd_margin){0, 0};
    kd_ncases = 0;
}

static void kd_report(const char *what, int nv, double tol)
{
    char of[48] = "";
    if (kd_count(nv) < nv)
        snprintf(of, sizeof of, " of %d (KC_TEST_VARIANTS)", nv);
    print_message("    %s: %d variant(s)%s x %d case(s): largest error %.2f of its bound, relative L2 %.2g "
                  "(tolerance %.0e)\n",
                  what, kd_count(nv), of, kd_ncases, kd_worst.ratio, kd_worst.l2, tol);
}

/* ---- saxpy ----------------------------------------------------------------------------------- */

/* One multiply and one add (or an FMA): within gamma(2) (|a x| + |y|); the
 * reference rounds the exact value once (u |want|). The L2 error is
 * relative to those magnitudes too, not to the result's: where a x and y
 * nearly cancel (n = 1 can draw one such element), the rounding of a x
 * is a large part of a small result. */
static void saxpy_case(rt_rng *r, int n, float a, const char *const *v, int nv)
{
    float *x = kd_normal(r, (size_t)n, 0, 1), *y = kd_uniform(r, (size_t)n, -1, 1);
    float *want = kd_alloc((size_t)n), *terms = kd_alloc((size_t)n);
    double *bound = kd_bounds((size_t)n);
    memcpy(want, y, sizeof(float) * (size_t)n);
    kc_ref_saxpy(n, a, x, want);
    for (int i = 0; i < n; i++) {
        double magnitude = fabs((double)a * x[i]) + fabs(y[i]);
        terms[i] = (float)magnitude;
        bound[i] = gamma_n(2) * magnitude + KD_U * fabs(want[i]);
    }
    kcrt_buffer *bx = kd_in(x, (size_t)n, false), *by = kd_out((size_t)n);
    kd_case c = {.kernel = "saxpy",
                 .nargs = 4,
                 .out = by,
                 .inout = y,
                 .n = (size_t)n,
                 .want = want,
                 .bound = bound,
                 .l2tol = kd_info("saxpy")->tolerance,
                 .l2norm = terms};
    snprintf(c.shape, sizeof c.shape, "n=%d a=%g", n, a);
    kcrt_arg args[] = {KCRT_I32(n), KCRT_F32(a), KCRT_BUF(bx), KCRT_BUF(by)};
    memcpy(c.args, args, sizeof args);
    kd_run(&c, v, nv);
    kcrt_buffer_free(bx), kcrt_buffer_free(by);
    free(x), free(y), free(want), free(terms), free(bound);
}

static void test_saxpy(void **state)
{
    (void)state;
    rt_rng r = kd_rng(0x5a);
    const char *v[KD_MAXV];
    int nv = kd_every_variant("saxpy", v);
    kd_begin();
    /* 1; fewer than any workgroup; one past the largest (WG 512 x PT 16) */
    static const struct {
        int n;
        float a;
    } cases[] = {{1, 2.5f}, {7, -0.75f}, {1037, 1.0f}, {8193, 0.3f}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        saxpy_case(&r, cases[i].n, cases[i].a, v, nv);
    kd_report("saxpy", nv, kd_info("saxpy")->tolerance);
}

/* ---- elementwise ---------------------------------------------------------------------------- */

/* The arithmetic ops round two or three times: gamma(3) (|x| + |alpha z|)
 * plus the reference's own rounding. The transcendental ones go through
 * kc's libm (docs/math.md: expf 1.31, tanhf 0.96, erff 1.18 ulp) and a few
 * roundings around it; where 1 + erf or 1 + tanh cancels (GELU at large
 * negative x) the error is absolute, in units of |x|. 16 u (|x| + |want|)
 * covers each with a margin, and a wrong formula misses by 1e-3 or more. */
static void elementwise_case(rt_rng *r, int n, int op, float alpha, const char *const *v, int nv)
{
    float *x = kd_normal(r, (size_t)n, 0, 4), *z = kd_normal(r, (size_t)n, 0, 1);
    float *want = kd_alloc((size_t)n), *terms = kd_alloc((size_t)n);
    double *bound = kd_bounds((size_t)n);
    kc_ref_elementwise(n, op, alpha, x, z, want);
    bool arithmetic = op == KC_REF_EW_RELU || op == KC_REF_EW_LEAKY || (op >= KC_REF_EW_ADD && op <= KC_REF_EW_MUL_SCALAR) ||
                      op >= KC_REF_EW_CLAMP_MIN; /* else kc's libm: sigmoid, tanh, silu, gelu, log, exp */
    for (int i = 0; i < n; i++) {
        double big = fabs(x[i]) + fabs((double)alpha * z[i]) + fabs((double)alpha);
        terms[i] = (float)big;
        bound[i] = arithmetic ? gamma_n(3) * big + KD_U * fabs(want[i])
                              : 16 * KD_U * (fabs(x[i]) + fabs(want[i])) + 0x1p-126;
    }
    kcrt_buffer *bx = kd_in(x, (size_t)n, false), *bz = kd_in(z, (size_t)n, false), *by = kd_out((size_t)n);
    kd_case c = {.kernel = "elementwise",
                 .nargs = 6,
                 .out = by,
                 .n = (size_t)n,
                 .want = want,
                 .bound = bound,
                 .l2tol = kd_info("elementwise")->tolerance,
                 /* GELU's 1 + erf cancels for x < -3: its error is in units of x; an
                  * add's x + alpha z can cancel too (n = 1 may draw such an element):
                  * its rounding is in units of the terms */
                 .l2norm = op == KC_REF_EW_GELU ? x : arithmetic ? terms : NULL};
    snprintf(c.shape, sizeof c.shape, "n=%d op=%d alpha=%g", n, op, alpha);
    kcrt_arg args[] = {KCRT_I32(n), KCRT_I32(op), KCRT_F32(alpha), KCRT_BUF(bx), KCRT_BUF(bz), KCRT_BUF(by)};
    memcpy(c.args, args, sizeof args);
    kd_run(&c, v, nv);
    kcrt_buffer_free(bx), kcrt_buffer_free(bz), kcrt_buffer_free(by);
    free(x), free(z), free(want), free(terms), free(bound);
}

static void test_elementwise(void **state)
{
    (void)state;
    rt_rng r = kd_rng(0xe1);
    const char *v[KD_MAXV];
    int nv = kd_every_variant("elementwise", v);
    kd_begin();
    /* 1; fewer than any workgroup; one past the largest (WG 512 x PT 8) */
    static const int sizes[] = {1, 7, 1037, 4097};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (int op = 0; op <= KC_REF_EW_COUNT; op++) /* KC_REF_EW_COUNT: any other op, a copy */
            elementwise_case(&r, sizes[i], op, op == KC_REF_EW_LEAKY ? 0.01f : -0.75f, v, nv);
    kd_report("elementwise", nv, kd_info("elementwise")->tolerance);
}

/* ---- pad1d ------------------------------------------------------------------------------------ */

/* A copy: every element exact (bound 0). */
static void pad1d_case(rt_rng *r, int rows, int t_in, int left, int right, int mode, const char *const *v, int nv)
{
    int t_out = t_in + left + right;
    size_t n = (size_t)rows * (size_t)t_out;
    float *x = kd_normal(r, (size_t)rows * (size_t)t_in, 0, 1), *want = kd_alloc(n);
    double *bound = kd_bounds(n);
    kc_ref_pad1d(rows, t_in, left, right, mode, -2.5f, x, want);
    kcrt_buffer *bx = kd_in(x, (size_t)rows * (size_t)t_in, false), *by = kd_out(n);
    kd_case c = {.kernel = "pad1d", .nargs = 8, .out = by, .n = n, .want = want, .bound = bound,
                 .l2tol = kd_info("pad1d")->tolerance};
    snprintf(c.shape, sizeof c.shape, "rows=%d t_in=%d left=%d right=%d mode=%d", rows, t_in, left, right, mode);
    kcrt_arg args[] = {KCRT_I32(rows), KCRT_I32(t_in),  KCRT_I32(left), KCRT_I32(right),
                       KCRT_I32(mode), KCRT_F32(-2.5f), KCRT_BUF(bx),   KCRT_BUF(by)};
    memcpy(c.args, args, sizeof args);
    kd_run(&c, v, nv);
    kcrt_buffer_free(bx), kcrt_buffer_free(by);
    free(x), free(want), free(bound);
}

static void test_pad1d(void **state)
{
    (void)state;
    rt_rng r = kd_rng(0xad);
    const char *v[KD_MAXV];
    int nv = kd_every_variant("pad1d", v);
    kd_begin();
    /* one sample; pads as long as the row allows (reflect: < t_in); one past
     * the largest workgroup; several rows */
    static const int shapes[][4] = {{1, 1, 0, 0}, {1, 7, 6, 6}, {3, 17, 16, 1}, {2, 513, 0, 1}, {5, 100, 99, 7}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int mode = 0; mode < 4; mode++)
            if (mode != 1 || (shapes[i][2] < shapes[i][1] && shapes[i][3] < shapes[i][1]))
                pad1d_case(&r, shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], mode, v, nv);
    kd_report("pad1d", nv, kd_info("pad1d")->tolerance);
}

/* ---- interp1d --------------------------------------------------------------------------------- */

/* nearest copies a sample: exact. linear blends two with float weights
 * computed as the reference does: a few roundings of |x_i| + |x_j|; where
 * a position lands on a sample the kernel and the reference may split it
 * differently, but the blend is continuous there, so the bound holds. */
static void interp1d_case(rt_rng *r, int rows, int t_in, int t_out, int mode, int align, const char *const *v,
                          int nv)
{
    size_t n = (size_t)rows * (size_t)t_out;
    float scale = align ? (t_out > 1 ? (float)((double)(t_in - 1) / (t_out - 1)) : 0.0f) : (float)t_in / (float)t_out;
    float *x = kd_normal(r, (size_t)rows * (size_t)t_in, 0, 1), *want = kd_alloc(n);
    double *bound = kd_bounds(n);
    kc_ref_interp1d(rows, t_in, t_out, mode, align, scale, x, want);
    for (int q = 0; q < rows; q++) {
        double big = 0; /* the row's largest: any two neighbours are within it */
        for (int i = 0; i < t_in; i++)
            big = fmax(big, fabs(x[(size_t)q * t_in + i]));
        for (int t = 0; t < t_out; t++)
            bound[(size_t)q * t_out + t] = mode == 0 ? 0 : 8 * KD_U * 2 * big;
    }
    kcrt_buffer *bx = kd_in(x, (size_t)rows * (size_t)t_in, false), *by = kd_out(n);
    kd_case c = {.kernel = "interp1d", .nargs = 8, .out = by, .n = n, .want = want, .bound = bound,
                 .l2tol = kd_info("interp1d")->tolerance};
    snprintf(c.shape, sizeof c.shape, "rows=%d t_in=%d t_out=%d mode=%d align_corners=%d", rows, t_in, t_out, mode,
             align);
    kcrt_arg args[] = {KCRT_I32(rows), KCRT_I32(t_in),  KCRT_I32(t_out), KCRT_I32(mode),
                       KCRT_I32(align), KCRT_F32(scale), KCRT_BUF(bx),    KCRT_BUF(by)};
    memcpy(c.args, args, sizeof args);
    kd_run(&c, v, nv);
    kcrt_buffer_free(bx), kcrt_buffer_free(by);
    free(x), free(want), free(bound);
}

static void test_interp1d(void **state)
{
    (void)state;
    rt_rng r = kd_rng(0x1d);
    const char *v[KD_MAXV];
    int nv = kd_every_variant("interp1d", v);
    kd_begin();
    /* one sample in and out; down and up by awkward ratios; x480 (f0 to
     * 48 kHz); the same size */
    static const int shapes[][3] = {{1, 1, 1}, {1, 1, 9}, {2, 7, 3}, {3, 10, 37}, {1, 11, 5280}, {2, 33, 33}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        interp1d_case(&r, shapes[i][0], shapes[i][1], shapes[i][2], 0, 0, v, nv);
        interp1d_case(&r, shapes[i][0], shapes[i][1], shapes[i][2], 1, 0, v, nv);
        interp1d_case(&r, shapes[i][0], shapes[i][1], shapes[i][2], 1, 1, v, nv);
    }
    kd_report("interp1d", nv, kd_info("interp1d")->tolerance);
}

/* ---- stft ------------------------------------------------------------------------------------ */

typedef struct stft_shape {
    int batch, len, nfft, hop, pad_mode, center, width, power;
} stft_shape;

/* A Stockham FFT's output is a sum of nfft products through log2(nfft)
 * rounded stages, each with a rounded twiddle: every part within
 * gamma(4 log2 N + 8) of the frame's sum |x w| (loose: it holds for any
 * radix and order). |X| inherits that times sqrt 2; |X|^2 is 2 |X| as
 * large plus its square. */
static void stft_case(rt_rng *r, stft_shape sh, const char *const *v, int nv)
{
    int nfft = sh.nfft, half = sh.center ? nfft / 2 : 0;
    int frames = 1 + (sh.len + 2 * half - nfft) / sh.hop, nbins = nfft / 2 + 1;
    size_t n = (size_t)sh.batch * nbins * frames * sh.width;
    float *x = kd_normal(r, (size_t)sh.batch * sh.len, 0, 1), *w = kd_uniform(r, (size_t)nfft, 0.1f, 1.0f);
    float *tw = kd_alloc(2 * (size_t)nfft), *want = kd_alloc(n);
    for (int k = 0; k < nfft; k++)
        tw[2 * k] = (float)cos(2 * M_PI * k / nfft), tw[2 * k + 1] = (float)-sin(2 * M_PI * k / nfft);
    double *mag = kd_bounds((size_t)sh.batch * frames), *bound = kd_bounds(n);
    kc_ref_stft(sh.batch, sh.len, nfft, sh.hop, frames, nbins, sh.pad_mode, sh.center, sh.width, sh.power, x, w,
                want, mag);
    double g = gamma_n(4 * ceil(log2(nfft)) + 8);
    for (int b = 0; b < sh.batch; b++)
        for (int f = 0; f < nbins; f++)
            for (int t = 0; t < frames; t++) {
                size_t o = (((size_t)b * nbins + f) * frames + t) * sh.width;
                double e = g * mag[(size_t)b * frames + t];
                if (sh.width == 2)
                    bound[o] = bound[o + 1] = e;
                else
                    bound[o] = sh.power == 2 ? 2 * sqrt(want[o]) * 1.5 * e + 2 * e * e : 1.5 * e;
            }
    kcrt_buffer *bx = kd_in(x, (size_t)sh.batch * sh.len, false), *bw = kd_in(w, (size_t)nfft, false),
                *bt = kd_in(tw, 2 * (size_t)nfft, false), *by = kd_out(n);
    kd_case c = {.kernel = "stft", .nargs = 14, .out = by, .n = n, .want = want, .bound = bound,
                 .l2tol = kd_info("stft")->tolerance};
    snprintf(c.shape, sizeof c.shape, "batch=%d len=%d nfft=%d hop=%d pad_mode=%d center=%d width=%d power=%d",
             sh.batch, sh.len, nfft, sh.hop, sh.pad_mode, sh.center, sh.width, sh.power);
    kcrt_arg args[] = {KCRT_I32(sh.batch),  KCRT_I32(sh.len),    KCRT_I32(nfft),     KCRT_I32(sh.hop),
                       KCRT_I32(frames),    KCRT_I32(nbins),     KCRT_I32(sh.pad_mode), KCRT_I32(sh.center),
                       KCRT_I32(sh.width),  KCRT_I32(sh.power),  KCRT_BUF(bx),       KCRT_BUF(bw),
                       KCRT_BUF(bt),        KCRT_BUF(by)};
    memcpy(c.args, args, sizeof args);
    kd_run(&c, v, nv);
    kcrt_buffer_free(bx), kcrt_buffer_free(bw), kcrt_buffer_free(bt), kcrt_buffer_free(by);
    free(x), free(w), free(tw), free(want), free(mag), free(bound);
}

static void test_stft(void **state)
{
    (void)state;
    rt_rng r = kd_rng(0xff7);
    const char *v[KD_MAXV];
    int nv = kd_every_variant("stft", v);
    kd_begin();
    /* every radix (4 2 3 5 7 and their mixes), sizes 1 and 2, a signal
     * shorter than a frame (reflected many times), every padding and
     * output form, batch > 1, the largest transform (D = 1 with P = 32
     * leaves it to the Stockham design, P = 64 takes it) */
    static const stft_shape shapes[] = {
        {1, 9, 1, 1, 1, 1, 2, 0},      {1, 5, 2, 1, 1, 1, 1, 2},      {2, 97, 12, 5, 0, 1, 2, 0},
        {1, 300, 105, 31, 2, 1, 1, 1}, {1, 50, 16, 4, 1, 1, 1, 2},    {3, 401, 400, 160, 1, 0, 2, 0},
        {1, 1000, 49, 17, 1, 1, 1, 1}, {2, 3000, 1024, 256, 1, 1, 1, 2}, {1, 5000, 2048, 1001, 0, 1, 2, 0},
        {1, 7, 60, 3, 1, 1, 2, 0},
        /* D = 1's register FFTs: every N1 x N2 split from 2 x 2 to 32 x 64,
         * frames inside the signal and past both ends */
        {1, 12, 4, 1, 2, 1, 2, 0},     {1, 200, 8, 3, 1, 1, 2, 0},    {1, 100, 32, 7, 1, 1, 2, 0},
        {1, 40, 64, 5, 0, 1, 1, 2},    {2, 900, 128, 50, 1, 1, 1, 1}, {1, 3000, 256, 100, 2, 0, 1, 1},
        {2, 2000, 512, 128, 1, 1, 2, 0},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        stft_case(&r, shapes[i], v, nv);
    kd_report("stft", nv, kd_info("stft")->tolerance);
}

/* ---- resample -------------------------------------------------------------------------------- */

typedef struct rs_shape {
    int batch, len, orig, new_rate, width;
} rs_shape;

/* Each output is a float sum of at most taps products: gamma(taps) of
 * the sum of their magnitudes (the reference's mag). */
static void resample_case(rt_rng *r, rs_shape sh, const char *const *v, int nv)
{
    int taps = 2 * sh.width + sh.orig;
    int t_out = (int)(((long)sh.new_rate * sh.len + sh.orig - 1) / sh.orig);
    size_t n = (size_t)sh.batch * t_out;
    float *x = kd_normal(r, (size_t)sh.batch * sh.len, 0, 1), *h = kd_uniform(r, (size_t)sh.new_rate * taps, -1, 1);
    float *want = kd_alloc(n);
    double *mag = kd_bounds(n), *bound = kd_bounds(n);
    kc_ref_resample(sh.batch, sh.len, t_out, sh.orig, sh.new_rate, sh.width, taps, x, h, want, mag);
    float *S = kd_norm_of(mag, n);
    for (size_t i = 0; i < n; i++)
        bound[i] = 2 * gamma_n(taps + 2) * mag[i];
    kcrt_buffer *bx = kd_in(x, (size_t)sh.batch * sh.len, false), *bh = kd_in(h, (size_t)sh.new_rate * taps, false),
                *by = kd_out(n);
    kd_case c = {.kernel = "resample", .nargs = 10, .out = by, .n = n, .want = want, .bound = bound,
                 .l2tol = kd_info("resample")->tolerance, .l2norm = S};
    snprintf(c.shape, sizeof c.shape, "batch=%d len=%d orig=%d new=%d width=%d", sh.batch, sh.len, sh.orig,
             sh.new_rate, sh.width);
    kcrt_arg args[] = {KCRT_I32(sh.batch), KCRT_I32(sh.len),   KCRT_I32(t_out), KCRT_I32(sh.orig), KCRT_I32(sh.new_rate),
                       KCRT_I32(sh.width), KCRT_I32(taps),     KCRT_BUF(bx),    KCRT_BUF(bh),      KCRT_BUF(by)};
    memcpy(c.args, args, sizeof args);
    kd_run(&c, v, nv);
    kcrt_buffer_free(bx), kcrt_buffer_free(bh), kcrt_buffer_free(by);
    free(x), free(h), free(want), free(mag), free(bound), free(S);
}

static void test_resample(void **state)
{
    (void)state;
    rt_rng r = kd_rng(0x5e5);
    const char *v[KD_MAXV];
    int nv = kd_every_variant("resample", v);
    kd_begin();
    /* one sample; down by 3 (48 -> 16 kHz), 441/160 (44.1 -> 16 kHz), up
     * by 6/5 (40 -> 48 kHz) and 3/2; a signal shorter than the filter;
     * batch > 1 */
    static const rs_shape shapes[] = {{1, 1, 1, 1, 1},     {2, 1000, 3, 1, 19}, {1, 2000, 441, 160, 17},
                                      {1, 997, 5, 6, 7},   {3, 31, 2, 3, 4},    {1, 5, 3, 1, 19}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        resample_case(&r, shapes[i], v, nv);
    kd_report("resample", nv, kd_info("resample")->tolerance);
}

/* ---- sine_source ----------------------------------------------------------------------------- */

typedef struct ss_shape {
    int batch, frames, upp, dim;
} ss_shape;

/* The phase of sample t is a sum mod 1 of up to frames + 1 steps, each
 * exact but for one rounding of a value below 2 (u each), and the
 * tree's roundings of values below the subgroup size: within
 * (2 frames + 64 + 16) u turns, times 2 pi amp in the sine, plus sinf's
 * 1 ulp and the mix. nz and uv are checked exactly (a product, a copy). */
static void sine_source_case(rt_rng *r, ss_shape sh, const char *const *v, int nv)
{
    long t_out = (long)sh.frames * sh.upp;
    size_t nf = (size_t)sh.batch * sh.frames, n = (size_t)sh.batch * t_out * sh.dim;
    float amp = 0.1f, nstd = 0.003f;
    float *rad = kd_uniform(r, nf * sh.dim, 0, 0.05f), *uvf = kd_alloc(nf), *noise = kd_normal(r, n, 0, 1);
    for (size_t i = 0; i < nf; i++)
        uvf[i] = rt_int(r, 0, 3) ? 1.0f : 0.0f; /* mostly voiced */
    for (int b = 0; b < sh.batch; b++) /* RVC's random initial phase in frame 0 (not of the fundamental) */
        for (int h = 1; h < sh.dim; h++)
            rad[(size_t)b * sh.frames * sh.dim + h] += rt_uniform(r, 0, 1);
    float *sine = kd_alloc(n), *nz = kd_alloc(n), *uv = kd_alloc((size_t)sh.batch * t_out);
    kc_ref_sine_source(sh.batch, sh.frames, sh.upp, sh.dim, amp, nstd, rad, uvf, noise, sine, nz, uv);
    double *bound = kd_bounds(n);
    double phase = (2.0 * sh.frames + 96) * KD_U;
    for (size_t i = 0; i < n; i++)
        bound[i] = 2 * M_PI * amp * phase + 4 * KD_U * (amp + fabs(sine[i])) + 1e-30;
    kcrt_buffer *brad = kd_in(rad, nf * sh.dim, false), *buvf = kd_in(uvf, nf, false), *bn = kd_in(noise, n, false);
    kcrt_buffer *bs = kd_out(n), *bnz = kd_out(n), *buv = kd_out((size_t)sh.batch * t_out);
    kd_case c = {.kernel = "sine_source", .nargs = 12, .out = bs, .n = n, .want = sine, .bound = bound,
                 .l2tol = kd_info("sine_source")->tolerance};
    snprintf(c.shape, sizeof c.shape, "batch=%d frames=%d upp=%d dim=%d", sh.batch, sh.frames, sh.upp, sh.dim);
    kcrt_arg args[] = {KCRT_I32(sh.batch), KCRT_I32(sh.frames), KCRT_I32(sh.upp), KCRT_I32(sh.dim),
                       KCRT_F32(amp),      KCRT_F32(nstd),      KCRT_BUF(brad),   KCRT_BUF(buvf),
                       KCRT_BUF(bn),       KCRT_BUF(bs),        KCRT_BUF(bnz),    KCRT_BUF(buv)};
    memcpy(c.args, args, sizeof args);
    kd_run(&c, v, nv); /* each variant: its sine checked; nz and uv after the last */
    float *gnz = rt_read(bnz), *guv = rt_read(buv);
    for (size_t i = 0; i < n; i++)
        if (fabsf(gnz[i] - nz[i]) > 2 * KD_U * fabsf(nz[i]))
            fail_msg("sine_source %s: nz[%zu] = %.9g, expected %.9g", c.shape, i, gnz[i], nz[i]);
    for (size_t i = 0; i < (size_t)sh.batch * t_out; i++)
        if (guv[i] != uv[i])
            fail_msg("sine_source %s: uv[%zu] = %g, expected %g", c.shape, i, guv[i], uv[i]);
    free(gnz), free(guv);
    kcrt_buffer_free(brad), kcrt_buffer_free(buvf), kcrt_buffer_free(bn), kcrt_buffer_free(bs), kcrt_buffer_free(bnz),
        kcrt_buffer_free(buv);
    free(rad), free(uvf), free(noise), free(sine), free(nz), free(uv), free(bound);
}

static void test_sine_source(void **state)
{
    (void)state;
    rt_rng r = kd_rng(0x515e);
    const char *v[KD_MAXV];
    int nv = kd_every_variant("sine_source", v);
    kd_begin();
    /* one sample; RVC's x400 with harmonics and batch; x1 (a frame per
     * sample: the scan over the chunk's frames does it all); the largest
     * factor; a long run of frames before the last workgroup */
    static const ss_shape shapes[] = {{1, 1, 1, 1}, {2, 37, 400, 3}, {1, 300, 1, 2}, {1, 5, 4095, 1}, {1, 2000, 32, 1}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        sine_source_case(&r, shapes[i], v, nv);
    kd_report("sine_source", nv, kd_info("sine_source")->tolerance);
}

/* ---- yin ------------------------------------------------------------------------------------- */

typedef struct yin_shape {
    int batch, len, frame_length, hop, center, tau_min, tau_max;
    double f; /* the test signal's fundamental (Hz at 16 kHz); 0: noise */
} yin_shape;

/* YIN picks a lag by comparisons (a threshold crossing, a dip's bottom),
 * which rounding could flip only where two values nearly tie; the test
 * signals are clearly periodic (two harmonics and 1 % noise, with a glide
 * and a silent stretch) so that the kernel and the double reference pick
 * the same lag. Then f0 differs by the parabola's rounding: relative
 * gamma(4 W) amplified by the parabola's curvature, bounded here by 1e-4
 * of f0; the aperiodicity (a ratio of W-term sums) by 1e-4 absolute. */
static void yin_case(rt_rng *r, yin_shape sh, const char *const *v, int nv)
{
    int frames = 1 + (sh.len - (sh.center ? 0 : sh.frame_length)) / sh.hop;
    size_t n = 2 * (size_t)sh.batch * frames;
    float *x = kd_alloc((size_t)sh.batch * sh.len), *want = kd_alloc(n);
    for (int b = 0; b < sh.batch; b++) {
        double ph = rt_uniform(r, 0, 1), f = sh.f * (1 + 0.2 * b);
        for (int i = 0; i < sh.len; i++) {
            double glide = f * (1 + 0.1 * sin(2 * M_PI * i / (double)sh.len));
            ph += glide / 16000;
            double silent = i > sh.len / 3 && i < sh.len / 3 + sh.frame_length ? 0 : 1;
            x[(size_t)b * sh.len + i] =
                (float)(silent * (sin(2 * M_PI * ph) + 0.4 * sin(4 * M_PI * ph + 1)) + 0.01 * rt_uniform(r, -1, 1));
        }
    }
    kc_ref_yin(sh.batch, sh.len, sh.frame_length, sh.hop, frames, sh.center, sh.tau_min, sh.tau_max, 0.1f, 16000.0f,
               x, want, want + (size_t)sh.batch * frames);
    double *bound = kd_bounds(n);
    for (size_t i = 0; i < n; i++)
        bound[i] = i < n / 2 ? 1e-4 * want[i] : 1e-4;
    kcrt_buffer *bx = kd_in(x, (size_t)sh.batch * sh.len, false), *bf = kd_out(n / 2);
    kd_case c = {.kernel = "yin", .nargs = 13, .out = bf, .n = n, .want = want, .bound = bound,
                 .l2tol = kd_info("yin")->tolerance};
    snprintf(c.shape, sizeof c.shape, "batch=%d len=%d frame_length=%d hop=%d center=%d tau=%d..%d f=%g", sh.batch,
             sh.len, sh.frame_length, sh.hop, sh.center, sh.tau_min, sh.tau_max, sh.f);
    /* f0 and the aperiodicity in one buffer: the second starts at its half */
    size_t half = (size_t)sh.batch * frames;
    kcrt_buffer *ba = kd_out(half);
    kcrt_arg args[] = {KCRT_I32(sh.batch),   KCRT_I32(sh.len),     KCRT_I32(sh.frame_length), KCRT_I32(sh.hop),
                       KCRT_I32(frames),     KCRT_I32(sh.center),  KCRT_I32(sh.tau_min),      KCRT_I32(sh.tau_max),
                       KCRT_F32(0.1f),       KCRT_F32(16000.0f),   KCRT_BUF(bx),              KCRT_BUF(bf),
                       KCRT_BUF(ba)};
    memcpy(c.args, args, sizeof args);
    c.n = half; /* f0 is checked by kd_run; the aperiodicity below, from the last variant */
    kd_run(&c, v, nv);
    float *ap = rt_read(ba);
    for (size_t i = 0; i < half; i++)
        if (!(fabsf(ap[i] - want[half + i]) <= 1e-4f))
            fail_msg("yin %s: aperiodicity[%zu] = %.9g, expected %.9g", c.shape, i, ap[i], want[half + i]);
    free(ap);
    kcrt_buffer_free(bx), kcrt_buffer_free(bf), kcrt_buffer_free(ba);
    free(x), free(want), free(bound);
}

static void test_yin(void **state)
{
    (void)state;
    rt_rng r = kd_rng(0x714);
    const char *v[KD_MAXV];
    int nv = kd_every_variant("yin", v);
    kd_begin();
    /* RVC's 16 kHz framing; a low voice, a high one; no centring; frames
     * of 2,048 (lags to 1,024: every thread a long run of lags); batch */
    static const yin_shape shapes[] = {
        {1, 8000, 1024, 160, 1, 8, 512, 150},  {2, 4001, 512, 80, 1, 16, 256, 220}, {1, 3000, 256, 64, 0, 8, 128, 1000},
        {1, 9000, 2048, 480, 1, 16, 1024, 90},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        yin_case(&r, shapes[i], v, nv);
    kd_report("yin", nv, kd_info("yin")->tolerance);
}

/* ---- conv2d ---------------------------------------------------------------------------------- */

/* A sum of cin / groups x kh x kw products and the bias: gamma(K + 1) of
 * the sum of their magnitudes (the reference's mag), for any order. */
static void conv2d_case(rt_rng *r, kc_conv2d_shape sh, const char *const *v, int nv)
{
    sh.oh = (sh.h + 2 * sh.ph - sh.dh * (sh.kh - 1) - 1) / sh.sh + 1;
    sh.ow = (sh.w + 2 * sh.pw - sh.dw * (sh.kw - 1) - 1) / sh.sw + 1;
    size_t nx = (size_t)sh.batch * sh.cin * sh.h * sh.w, nw = (size_t)sh.cout * (sh.cin / sh.groups) * sh.kh * sh.kw;
    size_t n = (size_t)sh.batch * sh.cout * sh.oh * sh.ow;
    float *x = kd_normal(r, nx, 0, 1), *wt = kd_normal(r, nw, 0, 0.3f), *b = kd_uniform(r, (size_t)sh.cout, -1, 1);
    float *want = kd_alloc(n);
    double *mag = kd_bounds(n), *bound = kd_bounds(n);
    kc_ref_conv2d(&sh, x, wt, b, want, mag);
    int k = sh.cin / sh.groups * sh.kh * sh.kw;
    float *S = kd_norm_of(mag, n);
    for (size_t i = 0; i < n; i++)
        bound[i] = 2 * gamma_n(k + 2) * mag[i];
    kcrt_buffer *bx = kd_in(x, nx, true), *bw = kd_in(wt, nw, true), *bb = kd_in(b, (size_t)sh.cout, false),
                *by = kd_out(n);
    kd_case c = {.kernel = "conv2d", .nargs = 20, .out = by, .n = n, .want = want, .bound = bound,
                 .l2tol = kd_info("conv2d")->tolerance, .l2norm = S};
    snprintf(c.shape, sizeof c.shape,
             "batch=%d cin=%d h=%d w=%d cout=%d k=%dx%d stride=%d,%d pad=%d,%d dil=%d,%d groups=%d", sh.batch, sh.cin,
             sh.h, sh.w, sh.cout, sh.kh, sh.kw, sh.sh, sh.sw, sh.ph, sh.pw, sh.dh, sh.dw, sh.groups);
    kcrt_arg args[] = {KCRT_I32(sh.batch), KCRT_I32(sh.cin), KCRT_I32(sh.h),  KCRT_I32(sh.w),    KCRT_I32(sh.cout),
                       KCRT_I32(sh.kh),    KCRT_I32(sh.kw),  KCRT_I32(sh.oh), KCRT_I32(sh.ow),   KCRT_I32(sh.sh),
                       KCRT_I32(sh.sw),    KCRT_I32(sh.ph),  KCRT_I32(sh.pw), KCRT_I32(sh.dh),   KCRT_I32(sh.dw),
                       KCRT_I32(sh.groups), KCRT_BUF(bx),    KCRT_BUF(bw),    KCRT_BUF(bb),      KCRT_BUF(by)};
    memcpy(c.args, args, sizeof args);
    kd_run(&c, v, nv);
    kcrt_buffer_free(bx), kcrt_buffer_free(bw), kcrt_buffer_free(bb), kcrt_buffer_free(by);
    free(x), free(wt), free(b), free(want), free(mag), free(bound), free(S);
}

/* conv2d's variants: WG only numbers the threads (a thread's pixels are
 * its flat index), while COB x TN sizes the unrolled body, and lavapipe's
 * compile of it with a cold shader cache grows faster than that: 20 s at
 * COB 32, TN 16, under a second at COB 8, TN 8 (kc run, 2026-12-07); all
 * 66 took this case 277 s. So every design (COB, VEC, TN) at WG 128, the
 * other WGs with COB 1 and 2, and kc.yaml's CPU default (WG 64, COB 16,
 * TN 16): 39 of 66. */
static bool kd_conv2d_sampled(const char *v)
{
    return kd_has_item(v, "WG=128") || kd_has_item(v, "COB=1") || kd_has_item(v, "COB=2") ||
           strcmp(v, "WG=64,COB=16,VEC=1,TN=16") == 0;
}

static void test_conv2d(void **state)
{
    (void)state;
    rt_rng r = kd_rng(0xc2d);
    const char *all[KD_MAXV], *v[KD_MAXV];
    int n = kd_every_variant("conv2d", all), nv = 0;
    for (int i = 0; i < n; i++)
        if (kd_conv2d_sampled(all[i]))
            v[nv++] = all[i];
    assert_int_equal(nv, 39); /* the space changed: choose the sample again */
    kd_begin();
    /* 1 x 1 of one pixel; RMVPE-like 3 x 3 and 1 x 1; strides, paddings and
     * dilations that differ by axis; groups of 2; depthwise (groups = cin,
     * a thread's channels spanning groups); cout not a multiple of COB;
     * for VEC = 1's row tiles: rows not a multiple of TN, windows reaching
     * into the padding on both sides, dilated columns, a padding wider
     * than the row, groups of 4 channels at stride 1 (COB 8 and 16 span
     * them), channels x taps not a multiple of 4; strided row tiles:
     * ContentVec's first layer (one row, kernel 10, stride 5), stride 2
     * with padding and dilated columns, stride 3 in groups of 4 */
    static const kc_conv2d_shape shapes[] = {
        {1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 1},    {2, 3, 17, 9, 5, 3, 3, 0, 0, 1, 1, 1, 1, 1, 1, 1},
        {1, 4, 11, 6, 6, 3, 2, 0, 0, 2, 1, 0, 1, 1, 2, 2},   {1, 6, 8, 8, 6, 3, 3, 0, 0, 1, 2, 2, 1, 2, 1, 6},
        {1, 16, 40, 32, 16, 3, 3, 0, 0, 1, 1, 1, 1, 1, 1, 1}, {1, 32, 20, 16, 7, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 1},
        {1, 5, 9, 21, 6, 2, 3, 0, 0, 2, 1, 1, 2, 2, 2, 1},   {2, 3, 6, 3, 17, 3, 5, 0, 0, 1, 1, 1, 4, 1, 1, 1},
        {1, 8, 7, 26, 16, 3, 3, 0, 0, 1, 1, 1, 1, 1, 1, 2},  {1, 1, 1, 103, 8, 1, 10, 0, 0, 1, 5, 0, 0, 1, 1, 1},
        {1, 6, 3, 37, 20, 2, 3, 0, 0, 1, 2, 1, 1, 1, 2, 1},  {1, 8, 2, 30, 8, 1, 4, 0, 0, 1, 3, 0, 2, 1, 1, 2},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        conv2d_case(&r, shapes[i], v, nv);
    kd_report("conv2d", nv, kd_info("conv2d")->tolerance);
}

/* ---- gru_step -------------------------------------------------------------------------------- */

/* Each gate's argument is a dot product of hidden terms plus a bias and
 * gi: off by gamma(hidden + 4) of its terms' magnitudes (the reference's
 * mag), which sigmoid (slope <= 1/4) and tanh (<= 1) pass on at most; h'
 * mixes them with weights in [0, 1]: 4 times that, plus the gates' own
 * few ulp (expf, tanhf, a division). out[t] must equal h_out. The
 * relative L2 error is taken to the state's full scale, 1 (h' mixes n in
 * (-1, 1) and h in [-1, 1]): an h' near 0 is a cancellation of the two,
 * and relative to itself it holds no fixed number of digits. */
static void gru_step_case(rt_rng *r, int batch, int hidden, int steps, int t, const char *const *v, int nv)
{
    size_t ng = (size_t)steps * batch * 3 * hidden, nh = (size_t)batch * hidden;
    float *gi = kd_normal(r, ng, 0, 1), *whh = kd_normal(r, 3 * (size_t)hidden * hidden, 0, 1 / sqrtf((float)hidden));
    float *bhh = kd_uniform(r, 3 * (size_t)hidden, -0.5f, 0.5f), *h = kd_uniform(r, nh, -1, 1), *want = kd_alloc(nh);
    double *mag = kd_bounds(nh), *bound = kd_bounds(nh);
    float *unit = kd_alloc(nh);
    for (size_t i = 0; i < nh; i++)
        unit[i] = 1;
    kc_ref_gru_step(batch, hidden, t, gi, whh, bhh, h, want, mag);
    for (size_t i = 0; i < nh; i++)
        bound[i] = 4 * gamma_n(hidden + 4) * mag[i] + 32 * KD_U;
    kcrt_buffer *bg = kd_in(gi, ng, false), *bw = kd_in(whh, 3 * (size_t)hidden * hidden, false),
                *bb = kd_in(bhh, 3 * (size_t)hidden, false), *bh = kd_in(h, nh, false), *by = kd_out(nh),
                *bo = kd_out((size_t)steps * nh);
    kd_case c = {.kernel = "gru_step", .nargs = 10, .out = by, .n = nh, .want = want, .bound = bound,
                 .l2tol = kd_info("gru_step")->tolerance, .l2norm = unit};
    snprintf(c.shape, sizeof c.shape, "batch=%d hidden=%d steps=%d t=%d", batch, hidden, steps, t);
    kcrt_arg args[] = {KCRT_I32(batch), KCRT_I32(hidden), KCRT_I32(t),  KCRT_I32(steps), KCRT_BUF(bg),
                       KCRT_BUF(bw),    KCRT_BUF(bb),     KCRT_BUF(bh), KCRT_BUF(by),    KCRT_BUF(bo)};
    memcpy(c.args, args, sizeof args);
    kd_run(&c, v, nv);
    float *got = rt_read(by), *out = rt_read(bo);
    if (memcmp(got, out + (size_t)t * nh, sizeof(float) * nh) != 0)
        fail_msg("gru_step %s: out[t] differs from h_out", c.shape);
    free(got), free(out);
    kcrt_buffer_free(bg), kcrt_buffer_free(bw), kcrt_buffer_free(bb), kcrt_buffer_free(bh), kcrt_buffer_free(by),
        kcrt_buffer_free(bo);
    free(gi), free(whh), free(bhh), free(h), free(want), free(mag), free(bound), free(unit);
}

static void test_gru_step(void **state)
{
    (void)state;
    rt_rng r = kd_rng(0x6e0);
    const char *v[KD_MAXV];
    int nv = kd_every_variant("gru_step", v);
    kd_begin();
    /* one unit; hidden not a multiple of 4 (the scalar tail); RMVPE's 256;
     * more units than a workgroup; batch; the last step */
    static const int shapes[][4] = {{1, 1, 1, 0}, {2, 5, 3, 1}, {1, 256, 4, 2}, {3, 130, 2, 1}, {4, 64, 7, 6}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        gru_step_case(&r, shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], v, nv);
    kd_report("gru_step", nv, kd_info("gru_step")->tolerance);
}

/* ---- gemm_f16, and the half storage of conv1d_f16 and attention_f16 -------------------------- */

/* x rounded to half in place (the reference then sees exactly what the
 * kernel reads), and its half bits (one spare element: buffers of an odd
 * count of halves are whole words). */
static uint16_t *kd_halves(float *x, size_t n)
{
    uint16_t *h = malloc(2 * n + 2);
    assert_non_null(h);
    for (size_t i = 0; i < n; i++) {
        h[i] = kc_ref_float_to_half(x[i]);
        x[i] = kc_ref_half_to_float(h[i]);
    }
    h[n] = 0;
    return h;
}

/* The spacing of halves at v: 2^(e - 10) in the binade [2^e, 2^(e+1)), 2^-24
 * among the subnormals (below 2^-14). */
static double kd_half_ulp(double v)
{
    return v >= 0x1p-14 ? ldexp(1.0, ilogb(v) - 10) : 0x1p-24;
}

/* n halves in a buffer padded with NaN halves to a whole half4 (and one
 * more half): gemm_f16 and attention_decode_f16 read half4 views */
static kcrt_buffer *kd_buf_halves(const uint16_t *h, size_t n)
{
    size_t padded = (n + 4) / 4 * 4;
    uint16_t *p = calloc(padded, 2);
    memcpy(p, h, 2 * n);
    for (size_t i = n; i < padded; i++)
        p[i] = 0x7e00; /* NaN */
    kcrt_buffer *b = rt_buf_from(p, 2 * padded);
    free(p);
    return b;
}

/* x as halves (x itself rounded to them), in a padded buffer */
static kcrt_buffer *kd_in_half(float *x, size_t n)
{
    uint16_t *h = kd_halves(x, n);
    kcrt_buffer *b = kd_buf_halves(h, n);
    free(h);
    return b;
}

/* The kernels with half storage compute in float and round to half once;
 * the reference rounds its exact result once too: a float result within
 * `bound` of exact rounds to a half within bound + one half ulp of the
 * reference's (2^-10 relative, 2^-24 subnormal). want: the reference's
 * halves; bound: the float computation's, per element. Each variant's
 * output is poisoned first; the slack past the output's halves must keep
 * the poison; the relative L2 error beyond that ulp per element must be
 * within kc.yaml's tolerance. */
static void kd_run_f16(const kd_case *c, const uint16_t *want, const char *const *v, int nv)
{
    kd_margin m = {0, 0};
    for (int k = 0; k < kd_count(nv); k++) {
        int vi = kd_pick(k, nv);
        rt_poison(c->out, RT_NAN);
        kc_test_at("%s [%s] %s", c->kernel, v[vi][0] ? v[vi] : "default", c->shape);
        kcrt_status st = kcrt_launch(kd_variant(c->kernel, v[vi]), c->args, c->nargs);
        if (st != KCRT_OK)
            fail_msg("%s [%s] %s: kcrt_launch: %s: %s", c->kernel, v[vi], c->shape, kcrt_status_name(st),
                     kcrt_error(rt_ctx));
        uint16_t *got = rt_read(c->out);
        double e2 = 0, w2 = 0;
        for (size_t i = 0; i < c->n; i++) {
            double g = kc_ref_half_to_float(got[i]), w = kc_ref_half_to_float(want[i]);
            if (isnan(w)) { /* NaN expected (a fully masked row): a NaN the kernel wrote, not the poison's */
                if (!isnan(g) || got[i] == (uint16_t)(RT_NAN >> 16))
                    fail_msg("%s [%s] %s: y[%zu] = %.6g (0x%04x), expected a NaN the kernel wrote", c->kernel,
                             v[vi], c->shape, i, g, got[i]);
                continue;
            }
            /* round(f) and round(x) for |f - x| <= bound: at most bound + half an ulp of each, and
             * rounding never leaves a binade downwards, so one ulp of the larger of the two halves */
            double ulp = kd_half_ulp(isfinite(g) ? fmax(fabs(g), fabs(w)) : fabs(w));
            double bound = c->bound[i] + ulp;
            m.ratio = fmax(m.ratio, fabs(g - w) / bound);
            /* the L2 check is of the error beyond that ulp: two roundings to half may land on neighbours
             * (a 64-element decode row read 1.3e-4 from two such flips), which says nothing of the float
             * computation before them */
            double excess = fmax(0, fabs(g - w) - ulp), scale = c->l2norm ? c->l2norm[i] : w;
            e2 += excess * excess, w2 += scale * scale;
            if (!(fabs(g - w) <= bound))
                fail_msg("%s [%s] %s: y[%zu] = %.6g (0x%04x), expected %.6g: error %.3g > %.3g (seed %llu)",
                         c->kernel, v[vi], c->shape, i, g, got[i], w, fabs(g - w), bound,
                         (unsigned long long)kd_seed);
        }
        double l2 = w2 > 0 ? sqrt(e2 / w2) : sqrt(e2);
        m.l2 = fmax(m.l2, l2);
        if (l2 > c->l2tol)
            fail_msg("%s [%s] %s: relative L2 error %.3g > %.3g (seed %llu)", c->kernel, v[vi], c->shape, l2,
                     c->l2tol, (unsigned long long)kd_seed);
        uint32_t tail;
        memcpy(&tail, (const char *)got + ((2 * c->n + 3) / 4) * 4, 4);
        if (tail != RT_NAN)
            fail_msg("%s [%s] %s: wrote past y's %zu halves", c->kernel, v[vi], c->shape, c->n);
        free(got);
    }
    print_message("      %s: largest error %.2f of its bound, relative L2 %.2g (<= %.2g)\n", c->shape, m.ratio, m.l2,
                  c->l2tol);
    kd_fold(&kd_worst, m);
    kd_ncases++;
}

static kcrt_buffer *kd_out_half(size_t n)
{
    return rt_buf(2 * n + 16);
}

/* Half inputs, float sums (gamma(K + 2) of |bias| + sum |a b|, the
 * reference's mag), one rounding to half (kd_run_f16). */
static void *kd_transpose(const void *b, int K, int N, size_t size);

/* Which kernel gemm_f16_case runs: gemm_f16 (B: K x N), linear_f16 (B
 * given as W = B^T) or gemv_f16 (W and x for M = 1) */
typedef enum { KD_GEMM_F16, KD_LINEAR_F16, KD_GEMV_F16 } kd_f16_product;

static void gemm_f16_case(rt_rng *r, int M, int N, int K, bool has_bias, kd_f16_product kind, const char *const *v,
                          int nv)
{
    static const char *const names[] = {"gemm_f16", "linear_f16", "gemv_f16"};
    const char *kernel = names[kind];
    bool linear = kind != KD_GEMM_F16;
    size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
    float *fa = kd_normal(r, na, 0, 1), *fb = kd_normal(r, nb, 0, 1), *bias = kd_uniform(r, (size_t)N, -1, 1);
    uint16_t *A = kd_halves(fa, na), *B = kd_halves(fb, nb), *C = malloc(2 * nc + 2);
    double *mag = kd_bounds(nc);
    kc_ref_gemm_f16(M, N, K, has_bias, A, B, bias, C, mag);
    for (size_t i = 0; i < nc; i++)
        mag[i] *= 2 * gamma_n(K + 2);
    uint16_t *W = linear ? kd_transpose(B, K, N, sizeof *B) : NULL;
    kcrt_buffer *ba = kd_buf_halves(A, na), *bb = kd_buf_halves(linear ? W : B, nb),
                *bbias = kd_in(bias, (size_t)N, false), *bc = kd_out_half(nc);
    kd_case c = {.kernel = kernel, .nargs = 8, .out = bc, .n = nc, .bound = mag,
                 .l2tol = kd_info(kernel)->tolerance};
    snprintf(c.shape, sizeof c.shape, "M=%d N=%d K=%d has_bias=%d", M, N, K, has_bias);
    kcrt_arg args[] = {KCRT_I32(M),   KCRT_I32(N),   KCRT_I32(K),      KCRT_BOOL(has_bias),
                       KCRT_BUF(ba),  KCRT_BUF(bb),  KCRT_BUF(bbias), KCRT_BUF(bc)};
    kcrt_arg gemv[] = {KCRT_I32(N), KCRT_I32(K), KCRT_BOOL(has_bias), KCRT_BUF(bb), KCRT_BUF(ba), KCRT_BUF(bbias),
                       KCRT_BUF(bc)};
    assert_true(kind != KD_GEMV_F16 || M == 1);
    if (kind == KD_GEMV_F16)
        memcpy(c.args, gemv, sizeof gemv), c.nargs = 7;
    else
        memcpy(c.args, args, sizeof args);
    kd_run_f16(&c, C, v, nv);
    kcrt_buffer_free(ba), kcrt_buffer_free(bb), kcrt_buffer_free(bbias), kcrt_buffer_free(bc);
    free(A), free(B), free(W), free(C), free(fa), free(fb), free(bias), free(mag);
}

/* want as halves (the reference's float results rounded once) */
static uint16_t *kd_want_halves(const float *want, size_t n)
{
    uint16_t *h = malloc(2 * n + 2);
    assert_non_null(h);
    for (size_t i = 0; i < n; i++)
        h[i] = kc_ref_float_to_half(want[i]);
    return h;
}

/* The f16 path runs where the device has 16-bit storage; elsewhere it is
 * skipped, saying why. */
static bool kd_has_storage16(void)
{
    if (kcrt_device_info_get(rt_ctx)->storage16)
        return true;
    print_message("    skipped: %s has no 16-bit storage (storageBuffer16BitAccess)\n",
                  kcrt_device_info_get(rt_ctx)->name);
    return false;
}

static void test_gemm_f16(void **state)
{
    (void)state;
    if (!kd_has_storage16())
        skip();
    rt_rng r = kd_rng(0xf16);
    const char *v[KD_SAMPLE];
    int nv = kd_sample_variants("gemm_f16", v, KD_SAMPLE, &r);
    /* gemm's body: the broadcast designs, and a BK = 4 slab of a TM = 1 tile */
    kd_force_variant("gemm_f16", v, nv, 1, "BM=64,BN=128,BK=16,TM=8,TN=8,PF=1,BC=8");
    kd_force_variant("gemm_f16", v, nv, 2, "BM=32,BN=128,BK=16,TM=4,TN=4,PF=1,BC=16");
    kd_force_variant("gemm_f16", v, nv, 3, "BM=16,BN=64,BK=4,TM=1,TN=4,PF=0,BC=0");
    kd_begin();
    /* one element; sizes multiples of no tile; an odd count of halves (the
     * output's last word half written); ContentVec's FFN row block */
    static const int shapes[][4] = {{1, 1, 1, 1}, {3, 5, 7, 0}, {17, 33, 13, 1}, {67, 130, 45, 1}, {65, 63, 257, 1},
                                    {140, 96, 768, 1}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        gemm_f16_case(&r, shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], KD_GEMM_F16, v, nv);
    kd_report("gemm_f16 (a sample of its variants)", nv, kd_info("gemm_f16")->tolerance);
}

/* linear_f16: linear.kc's reading of W with gemm_f16's half views */
static void test_linear_f16(void **state)
{
    (void)state;
    if (!kd_has_storage16())
        skip();
    rt_rng r = kd_rng(0x11f16);
    const char *v[KD_SAMPLE];
    int nv = kd_sample_variants("linear_f16", v, KD_SAMPLE / 2, &r);
    kd_force_variant("linear_f16", v, nv, 1, "BM=64,BN=128,BK=16,TM=8,TN=8,PF=1,BC=8");
    kd_force_variant("linear_f16", v, nv, 2, "BM=32,BN=32,BK=8,TM=2,TN=4,PF=0,BC=0");
    kd_begin();
    /* one element; W's rows off half4s (odd K) and on them; edge tiles */
    static const int shapes[][4] = {{1, 1, 1, 1}, {3, 5, 7, 0}, {17, 33, 13, 1}, {67, 130, 44, 1}, {65, 63, 257, 1}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        gemm_f16_case(&r, shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], KD_LINEAR_F16, v, nv);
    kd_report("linear_f16 (a sample of its variants)", nv, kd_info("linear_f16")->tolerance);
}

/* gemv_f16: gemv's body with half4 views, every variant; test_gemv's
 * cases (W's rows at every lane of a half4, K past the widest step,
 * SG = 1's several rows a subgroup) */
static void test_gemv_f16(void **state)
{
    (void)state;
    if (!kd_has_storage16())
        skip();
    rt_rng r = kd_rng(0x76f16);
    const char *v[KD_MAXV];
    int nv = kd_every_variant("gemv_f16", v);
    kd_begin();
    static const int cases[][3] = {{1, 1, 0}, {13, 37, 1}, {70, 258, 0}, {9, 4133, 1}, {3, 6, 1}, {70, 1028, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        gemm_f16_case(&r, 1, cases[i][0], cases[i][1], cases[i][2], KD_GEMV_F16, v, nv);
    kd_report("gemv_f16", nv, kd_info("gemv_f16")->tolerance);
}

/* ---- attention ------------------------------------------------------------------------------- */

typedef struct att_shape {
    int bh, lq, lk, d, dv, mask_mode, causal;
} att_shape;

/* A score is a d-term dot product (scaled to log2 units and shifted by the
 * block maximum): off by about gamma(d + 16) of its row's largest sum
 * |q| |k| scale, which exp turns into that relative error in each weight;
 * the output, a weighted mean of the v_j, is then off by twice that times
 * sum p_j |v_j|, plus the rounding of its lk-term sums. A row whose every
 * key is masked (a -inf mask row, tested here) must be NaN, as torch's. */
static void attention_case(rt_rng *r, att_shape sh, bool dead_row, const char *kernel, const char *const *v, int nv)
{
    bool half = strstr(kernel, "_f16") != NULL; /* q, k, v and out in half */
    size_t nq = (size_t)sh.bh * sh.lq * sh.d, nk = (size_t)sh.bh * sh.lk * sh.d, nv_ = (size_t)sh.bh * sh.lk * sh.dv;
    size_t nm = sh.mask_mode == 2 ? (size_t)sh.bh * sh.lq * sh.lk : sh.mask_mode == 1 ? (size_t)sh.lq * sh.lk : 1;
    size_t n = (size_t)sh.bh * sh.lq * sh.dv;
    float scale = (float)(1 / sqrt(sh.d));
    float *q = kd_normal(r, nq, 0, 1), *k = kd_normal(r, nk, 0, 1), *vv = kd_normal(r, nv_, 0, 1);
    float *mask = kd_uniform(r, nm, -2, 2), *want = kd_alloc(n);
    if (dead_row)
        for (int j = 0; j < sh.lk; j++)
            mask[j] = -INFINITY;
    /* attention_f16: q, k, v as halves (rounded here, so that the reference reads the same values) */
    kcrt_buffer *bq = half ? kd_in_half(q, nq) : kd_in(q, nq, true), /* attention_decode's float4 views */
                *bk = half ? kd_in_half(k, nk) : kd_in(k, nk, true),
                *bv = half ? kd_in_half(vv, nv_) : kd_in(vv, nv_, true), *bm = kd_in(mask, nm, false),
                *by = half ? kd_out_half(n) : kd_out(n);
    double *mag = kd_bounds(n), *rows = kd_bounds((size_t)sh.bh * sh.lq), *bound = kd_bounds(n);
    kc_ref_attention(sh.bh, sh.lq, sh.lk, sh.d, sh.dv, scale, sh.mask_mode, sh.causal, q, k, vv, mask, want, mag,
                     rows);
    for (size_t e = 0; e < n; e++) {
        double es = gamma_n(sh.d + 16) * 4 * rows[e / (size_t)sh.dv];
        bound[e] = isnan(want[e]) ? NAN : mag[e] * (2 * es + 2 * gamma_n(sh.lk + 16)) + 1e-30;
    }
    float *S = kd_norm_of(mag, n); /* sum p_j |v_j|: a mean of v's that cancel is small, its rounding not */
    kd_case c = {.kernel = kernel, .nargs = 13, .out = by, .n = n, .want = want, .bound = bound,
                 .l2tol = kd_info(kernel)->tolerance, .l2norm = S};
    snprintf(c.shape, sizeof c.shape, "bh=%d lq=%d lk=%d d=%d dv=%d mask_mode=%d causal=%d%s", sh.bh, sh.lq, sh.lk,
             sh.d, sh.dv, sh.mask_mode, sh.causal, dead_row ? " (a row fully masked)" : "");
    kcrt_arg args[] = {KCRT_I32(sh.bh),        KCRT_I32(sh.lq),     KCRT_I32(sh.lk), KCRT_I32(sh.d),
                       KCRT_I32(sh.dv),        KCRT_F32(scale),     KCRT_I32(sh.mask_mode),
                       KCRT_I32(sh.causal),    KCRT_BUF(bq),        KCRT_BUF(bk),    KCRT_BUF(bv),
                       KCRT_BUF(bm),           KCRT_BUF(by)};
    memcpy(c.args, args, sizeof args);
    if (half) {
        uint16_t *wh = kd_want_halves(want, n);
        kd_run_f16(&c, wh, v, nv);
        free(wh);
    } else {
        kd_run(&c, v, nv);
    }
    kcrt_buffer_free(bq), kcrt_buffer_free(bk), kcrt_buffer_free(bv), kcrt_buffer_free(bm), kcrt_buffer_free(by);
    free(q), free(k), free(vv), free(mask), free(want), free(mag), free(rows), free(bound), free(S);
}

/* Attention's variants, in two cases (BKV 16, with the default, and BKV 8)
 * that ctest runs side by side. lavapipe compiles each variant's generic
 * pipeline (d and dv unknown, KCRT_SPECIALIZE=0) when its shader cache is
 * cold, and the time grows faster than the unrolled block: at DL = 1 a
 * lane holds all 32 float4 chunks of a row, and BKV 16 took 105-110 s
 * to compile here, TQ 4 95-100 s, TQ 2 45-55 s, BKV 8 30-40 s, DL 2 10-25
 * s, DL 4 and 8 6-10 s (kc run, a cold cache, 2026-12-07, less its 8 s
 * bundle load). The unrolled block does not
 * depend on WG, which only sets the rows a workgroup holds: so every
 * design (BKV, TQ, DL) is taken once, at WG 128 with TQ 1, and where the
 * rows a thread holds map differently, at a smaller WG: TQ 4 at WG 32 (a
 * thread's 4 rows, 32 apart, all live at the shapes' lq up to 129, where
 * WG 128 leaves two of them past lq), TQ 2 at WG 64; DL 8 at every WG (4
 * rows a workgroup at WG 32, the fewest). 14 of 30: kc run took 200 s
 * over BKV 16's six and 285 s over BKV 8's eight, 430 and 700 s over the
 * 22 of the sample before (WG 128, and DL 1 or 8 at every WG).
 * test_attention_specialized runs lavapipe's default (WG 128, TQ 4) at
 * the models' head sizes. */
static bool kd_attention_sampled(const char *v)
{
    bool tq1 = kd_has_item(v, "TQ=1");
    return (kd_has_item(v, "WG=128") && tq1) || kd_has_item(v, "DL=8") ||
           (kd_has_item(v, "WG=64") && kd_has_item(v, "TQ=2")) || (kd_has_item(v, "WG=32") && kd_has_item(v, "TQ=4"));
}

static int kd_attention_variants(const char *bkv, const char **out)
{
    const char *all[KD_MAXV];
    int n = kd_every_variant("attention", all), m = 0;
    for (int i = 0; i < n; i++)
        if (kd_has_item(all[i], bkv) && kd_attention_sampled(all[i]))
            out[m++] = all[i];
    assert_true(m > 0);
    return m;
}

static void attention_cases(const char *bkv, uint64_t seed)
{
    rt_rng r = kd_rng(seed);
    const char *v[KD_MAXV];
    int nv = kd_attention_variants(bkv, v);
    kd_begin();
    /* one of everything; head sizes not multiples of 4, the largest (128),
     * dv != d; more rows than a workgroup, keys not a multiple of a
     * block; causal with lq < lk and lq > lk; both mask forms; a decode
     * step (lq 1) over a long cache (loop counts lavapipe would cut) */
    static const att_shape shapes[] = {
        {1, 1, 1, 1, 1, 0, 0},    {2, 5, 7, 3, 4, 1, 0},     {3, 33, 17, 64, 64, 2, 0}, {2, 70, 70, 64, 32, 0, 1},
        {1, 1, 300, 128, 128, 2, 0}, {4, 129, 129, 80, 80, 0, 1}, {1, 9, 40, 7, 9, 0, 1},  {1, 45, 12, 5, 5, 0, 1},
        {1, 1, 3000, 64, 64, 0, 0},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        attention_case(&r, shapes[i], false, "attention", v, nv);
    attention_case(&r, (att_shape){2, 6, 10, 16, 16, 1, 0}, true, "attention", v, nv);
    kd_report("attention", nv, kd_info("attention")->tolerance);
}

static void test_attention(void **state)
{
    (void)state;
    attention_cases("BKV=16", 0xa77);
}

static void test_attention_bkv8(void **state)
{
    (void)state;
    attention_cases("BKV=8", 0xa78);
}

/* The two cases above run with KCRT_SPECIALIZE=0 (tests/kernels/
 * CMakeLists.txt): d and dv are specialised (KC_SPECIALIZE), so each of
 * their nine head sizes would be a pipeline of its own in every variant,
 * about 25 s of lavapipe's compiling each (701 s for test_attention where
 * its generic pipelines take 370-450 s). The specialised pipelines, the
 * ones a model runs, are checked here at the models' head sizes and two
 * odd ones, in the default variant and lavapipe's (TQ = 4), and in every
 * variant of attention_f16, which shares the body. */
static void test_attention_specialized(void **state)
{
    (void)state;
    rt_rng r = kd_rng(0xa7a);
    const char *v[] = {"", "WG=64,BKV=8,TQ=4,DL=1"}; /* the default, lavapipe's */
    kd_begin();
    static const att_shape shapes[] = {
        {3, 33, 17, 64, 64, 2, 0}, {2, 70, 70, 64, 32, 0, 1}, {4, 129, 129, 80, 80, 0, 1}, {1, 9, 40, 7, 9, 0, 1},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        attention_case(&r, shapes[i], false, "attention", v, 2);
    kd_report("attention", 2, kd_info("attention")->tolerance);
}

/* attention_f16: the same body with half q, k, v and out (kd_run_f16),
 * where the device has 16-bit storage, in six variants that hold every
 * value of WG, BKV and TQ (the default has three of the eight values and
 * each variant the sample adds after it at least one more): a CPU Vulkan driver
 * compiles each for up to a minute (all six of WG x BKV took 5 minutes on
 * lavapipe), and the float kernel's test runs the shared body in every
 * variant. */
static void test_attention_f16(void **state)
{
    (void)state;
    if (!kd_has_storage16())
        skip();
    rt_rng r = kd_rng(0xa716);
    const char *v[6];
    int nv = kd_sample_variants("attention_f16", v, 6, &r); /* the default, and every WG, BKV and TQ */
    kd_begin();
    static const att_shape shapes[] = {
        {1, 1, 1, 1, 1, 0, 0}, {2, 5, 7, 3, 4, 1, 0}, {3, 33, 17, 64, 64, 2, 0}, {4, 129, 129, 80, 80, 0, 1},
        {1, 1, 300, 128, 128, 2, 0},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        attention_case(&r, shapes[i], false, "attention_f16", v, nv);
    attention_case(&r, (att_shape){2, 6, 10, 16, 16, 1, 0}, true, "attention_f16", v, nv);
    kd_report("attention_f16", nv, kd_info("attention_f16")->tolerance);
}

/* attention_decode and its half twin: a workgroup per query row. Every
 * variant (WG 32 to 256: keys per block, channels per thread); decode
 * steps over caches not a multiple of a block, up to 3,000 keys (the
 * loop-count limit of lavapipe), head sizes up to 128 and not multiples of
 * 4, both mask forms, causal (a row sees keys 0..i only), several rows,
 * and a fully masked row (NaN). */
static void attention_decode_cases(const char *kernel, uint64_t salt)
{
    bool half = strstr(kernel, "_f16") != NULL;
    if (half && !kd_has_storage16())
        skip();
    rt_rng r = kd_rng(salt);
    const char *v[KD_MAXV];
    int nv = kd_every_variant(kernel, v);
    kd_begin();
    static const att_shape shapes[] = {
        {1, 1, 1, 1, 1, 0, 0},        {2, 1, 7, 3, 4, 1, 0},        {3, 2, 65, 64, 64, 2, 0}, {16, 1, 400, 64, 64, 0, 0},
        {1, 1, 300, 128, 128, 2, 0}, {2, 4, 129, 80, 33, 0, 1},    {1, 1, 3000, 64, 64, 0, 0},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        attention_case(&r, shapes[i], false, kernel, v, nv);
    attention_case(&r, (att_shape){2, 3, 10, 16, 16, 1, 0}, true, kernel, v, nv);
    kd_report(kernel, nv, kd_info(kernel)->tolerance);
}

static void test_attention_decode(void **state)
{
    (void)state;
    attention_decode_cases("attention_decode", 0xad);
}

static void test_attention_decode_f16(void **state)
{
    (void)state;
    attention_decode_cases("attention_decode_f16", 0xad16);
}

/* ---- gemm ------------------------------------------------------------------------------------ */

/* C = act(A B + bias). The pre-activation sum of K products and a bias is
 * within gamma(K + 1) S, S = |bias| + sum |A||B| (the reference on |A|,
 * |B|, |bias|). The activations are Lipschitz (ReLU 1, leaky max(1,
 * |alpha|), GELU tanh 1.13) and their float evaluation adds a few
 * roundings of |x| <= S and of the result: 4 u (S + |want|) covers
 * GELU's (x / (1 + e^-2u): the cubic, exp2f's product and its ulp, the
 * sum and the division; include/act.kch), and leaky's and ReLU's with
 * room. */
typedef struct gemm_shape {
    int M, N, K;
    bool has_bias;
    int act;
    float alpha;
} gemm_shape;

/* W = B^T (N x K), what linear.kc and linear_f16.kc read */
static void *kd_transpose(const void *b, int K, int N, size_t size)
{
    char *w = malloc((size_t)K * N * size + size);
    assert_non_null(w);
    for (int k = 0; k < K; k++)
        for (int n = 0; n < N; n++)
            memcpy(w + ((size_t)n * K + k) * size, (const char *)b + ((size_t)k * N + n) * size, size);
    return w;
}

/* gemm, or with `linear` linear.kc: the same product with B given as W =
 * B^T, torch's weight */
static void gemm_case(rt_rng *r, gemm_shape s, bool linear, const char *const *v, int nv)
{
    const char *kernel = linear ? "linear" : "gemm";
    size_t na = (size_t)s.M * s.K, nb = (size_t)s.K * s.N, nc = (size_t)s.M * s.N;
    float *A = kd_uniform(r, na, -1, 1), *B = kd_uniform(r, nb, -1, 1),
          *bias = kd_uniform(r, (size_t)s.N, -1, 1);
    float *want = kd_alloc(nc), *S = kd_alloc(nc);
    double *bound = kd_bounds(nc);
    kc_ref_gemm(s.M, s.N, s.K, s.has_bias, s.act, s.alpha, A, B, bias, want);
    float *aA = kd_abs(A, na), *aB = kd_abs(B, nb), *abias = kd_abs(bias, (size_t)s.N);
    kc_ref_gemm(s.M, s.N, s.K, s.has_bias, KC_REF_ACT_NONE, 0, aA, aB, abias, S);
    double lip = s.act == KC_REF_ACT_GELU ? 1.13 : s.act == KC_REF_ACT_LEAKY ? fmax(1, fabs(s.alpha)) : 1;
    for (size_t i = 0; i < nc; i++)
        bound[i] = lip * gamma_n(s.K + 2) * S[i] + 4 * KD_U * (S[i] + fabs(want[i]));
    float *W = linear ? kd_transpose(B, s.K, s.N, sizeof *B) : NULL;
    kcrt_buffer *bA = kd_in(A, na, true), *bB = kd_in(linear ? W : B, nb, true),
                *bbias = kd_in(bias, (size_t)s.N, false);
    kcrt_buffer *bC = kd_out(nc);
    kd_case c = {.kernel = kernel,
                 .nargs = 10,
                 .out = bC,
                 .n = nc,
                 .want = want,
                 .bound = bound,
                 .l2tol = kd_info(kernel)->tolerance,
                 .l2norm = S};
    snprintf(c.shape, sizeof c.shape, "M=%d N=%d K=%d has_bias=%d act=%d alpha=%g", s.M, s.N, s.K, s.has_bias,
             s.act, s.alpha);
    kcrt_arg args[] = {KCRT_I32(s.M),   KCRT_I32(s.N),     KCRT_I32(s.K), KCRT_BOOL(s.has_bias),
                       KCRT_I32(s.act), KCRT_F32(s.alpha), KCRT_BUF(bA),  KCRT_BUF(bB),
                       KCRT_BUF(bbias), KCRT_BUF(bC)};
    memcpy(c.args, args, sizeof args);
    kd_run(&c, v, nv);
    kcrt_buffer_free(bA), kcrt_buffer_free(bB), kcrt_buffer_free(bbias), kcrt_buffer_free(bC);
    free(A), free(B), free(W), free(bias), free(want), free(S), free(bound), free(aA), free(aB), free(abias);
}

/* A single element; rows and columns no multiple of 4 (A's and B's rows
 * start inside float4s) nor of any tile; one past the largest tiles (BM
 * 128 and 112, BN 128 and 256), two past BM 48, and past two slabs of the
 * deepest (BK 32); every activation with and without bias, a negative
 * leaky slope, and an unknown act (none). */
static const gemm_shape gemm_cases[] = {
    {1, 1, 1, false, 0, 0},       {37, 29, 41, true, 1, 0},   {5, 131, 7, true, 2, 0},
    {130, 6, 67, false, 3, 0.1f}, {3, 10, 2, true, 3, -1.5f}, {9, 4, 12, false, 2, 0},
    {2, 17, 33, false, 1, 0},     {11, 3, 5, true, 9, 0},     {50, 257, 19, true, 0, 0},
    {113, 22, 9, true, 1, 0},
    /* rows on float4s (K, N multiples of 4): BC's broadcast path, several
     * chunks of K and a part one, edge tiles both ways */
    {70, 136, 100, true, 2, 0},   {64, 256, 64, false, 0, 0},
    /* rows of B off float4s with A's on them (BC broadcasts A and loads
     * B's TN columns shifted): N = 4n + 2 (shifts 0, 2, 0, 2, RMVPE's
     * N = 1026) and odd N (every shift) */
    {70, 138, 100, false, 0, 0},  {33, 1026, 24, true, 1, 0}, {45, 131, 68, false, 0, 0},
    {9, 65, 40, true, 2, 0},
    /* RMVPE's M and N (101 rows: one tile of BM 112, 11 rows past M) */
    {101, 1026, 20, false, 0, 0},
};

static void test_gemm(void **state)
{
    (void)state;
    rt_rng r = kd_rng(0x6e);
    const char *v[KD_SAMPLE];
    int nv = kd_sample_variants("gemm", v, KD_SAMPLE, &r);
    /* BC's broadcast path needs rows of whole subgroups (BN / TN a
     * multiple of the subgroup size): 16 and 32 threads a row */
    kd_force_variant("gemm", v, nv, 1, "BM=64,BN=128,BK=16,TM=8,TN=8,PF=1,BC=8");
    kd_force_variant("gemm", v, nv, 2, "BM=32,BN=128,BK=16,TM=4,TN=4,PF=1,BC=16");
    /* the widest, shallowest shared tiles, with rows of 6 threads */
    kd_force_variant("gemm", v, nv, 3, "BM=48,BN=256,BK=4,TM=8,TN=8,PF=1,BC=0");
    /* RMVPE's tuned tile on lavapipe: rows of 14 threads */
    kd_force_variant("gemm", v, nv, 4, "BM=112,BN=64,BK=4,TM=8,TN=8,PF=1,BC=0");
    /* 16 rows a thread: 7 row threads, 8 column threads */
    kd_force_variant("gemm", v, nv, 5, "BM=112,BN=64,BK=4,TM=16,TN=8,PF=1,BC=0");
    /* BN = 176, RMVPE's N in 6 tiles: rows of 22 and of 44 threads */
    kd_force_variant("gemm", v, nv, 6, "BM=112,BN=176,BK=4,TM=16,TN=8,PF=0,BC=0");
    kd_force_variant("gemm", v, nv, 7, "BM=32,BN=176,BK=8,TM=4,TN=4,PF=1,BC=0");
    int n = (int)(sizeof gemm_cases / sizeof gemm_cases[0]);
    kd_begin();
    for (int i = 0; i < n; i++)
        gemm_case(&r, gemm_cases[i], false, v, nv);
    kd_report("gemm (a sample of its variants)", nv, kd_info("gemm")->tolerance);
}

/* linear.kc: gemm's body reading W = B^T along its rows, a sample of
 * its variants over gemm's cases (W's rows off float4s where K is odd:
 * kc_load4's shifts in both designs; K a multiple of 4: the BC design's
 * one load a float4), with the broadcast designs forced in. */
static void test_linear(void **state)
{
    (void)state;
    rt_rng r = kd_rng(0x11e);
    const char *v[KD_SAMPLE];
    int nv = kd_sample_variants("linear", v, KD_SAMPLE / 2, &r);
    kd_force_variant("linear", v, nv, 1, "BM=64,BN=128,BK=16,TM=8,TN=8,PF=1,BC=8");
    kd_force_variant("linear", v, nv, 2, "BM=32,BN=256,BK=4,TM=16,TN=8,PF=1,BC=0");
    int n = (int)(sizeof gemm_cases / sizeof gemm_cases[0]);
    kd_begin();
    for (int i = 0; i < n; i++)
        gemm_case(&r, gemm_cases[i], true, v, nv);
    kd_report("linear (a sample of its variants)", nv, kd_info("linear")->tolerance);
}

/* ---- bmm ------------------------------------------------------------------------------------- */

/* gemm's bound per batch item. A and B are drawn whole (a broadcast
 * operand once), so an item that read another's matrix, or a matrix
 * shifted by a float, is far off. */
typedef struct bmm_shape {
    int batch, M, N, K;
    bool bcast_a, bcast_b, has_bias;
    int act;
} bmm_shape;

static void bmm_case(rt_rng *r, bmm_shape s, const char *const *v, int nv)
{
    int sa = s.bcast_a ? 0 : s.M * s.K, sb = s.bcast_b ? 0 : s.K * s.N;
    size_t na = (size_t)(s.batch - 1) * sa + (size_t)s.M * s.K, nb = (size_t)(s.batch - 1) * sb + (size_t)s.K * s.N;
    size_t nc = (size_t)s.batch * s.M * s.N;
    float *A = kd_uniform(r, na, -1, 1), *B = kd_uniform(r, nb, -1, 1), *bias = kd_uniform(r, (size_t)s.N, -1, 1);
    float *want = kd_alloc(nc), *S = kd_alloc(nc);
    double *bound = kd_bounds(nc);
    kc_ref_bmm(s.batch, s.M, s.N, s.K, sa, sb, s.has_bias, s.act, 0.1f, A, B, bias, want);
    float *aA = kd_abs(A, na), *aB = kd_abs(B, nb), *abias = kd_abs(bias, (size_t)s.N);
    kc_ref_bmm(s.batch, s.M, s.N, s.K, sa, sb, s.has_bias, KC_REF_ACT_NONE, 0, aA, aB, abias, S);
    double lip = s.act == KC_REF_ACT_GELU ? 1.13 : 1;
    for (size_t i = 0; i < nc; i++)
        bound[i] = lip * gamma_n(s.K + 2) * S[i] + 4 * KD_U * (S[i] + fabs(want[i]));
    kcrt_buffer *bA = kd_in(A, na, true), *bB = kd_in(B, nb, true), *bbias = kd_in(bias, (size_t)s.N, false);
    kcrt_buffer *bC = kd_out(nc);
    kd_case c = {.kernel = "bmm", .nargs = 13, .out = bC, .n = nc, .want = want, .bound = bound,
                 .l2tol = kd_info("bmm")->tolerance, .l2norm = S};
    snprintf(c.shape, sizeof c.shape, "batch=%d M=%d N=%d K=%d sa=%d sb=%d has_bias=%d act=%d", s.batch, s.M, s.N,
             s.K, sa, sb, s.has_bias, s.act);
    kcrt_arg args[] = {KCRT_I32(s.batch), KCRT_I32(s.M),  KCRT_I32(s.N),    KCRT_I32(s.K),     KCRT_I32(sa),
                       KCRT_I32(sb),      KCRT_BOOL(s.has_bias), KCRT_I32(s.act), KCRT_F32(0.1f), KCRT_BUF(bA),
                       KCRT_BUF(bB),      KCRT_BUF(bbias), KCRT_BUF(bC)};
    memcpy(c.args, args, sizeof args);
    kd_run(&c, v, nv);
    kcrt_buffer_free(bA), kcrt_buffer_free(bB), kcrt_buffer_free(bbias), kcrt_buffer_free(bC);
    free(A), free(B), free(bias), free(want), free(S), free(bound), free(aA), free(aB), free(abias);
}

/* One item of one element; items that start inside float4s (M K and K N
 * odd); either operand broadcast; more items than rows (M = 1, decode);
 * past the largest tile in a batch of 2; bias and every activation. */
static const bmm_shape bmm_cases[] = {
    {1, 1, 1, 1, false, false, false, 0}, {3, 5, 7, 9, false, false, true, 1}, {4, 17, 6, 33, true, false, false, 2},
    {2, 9, 131, 5, false, true, true, 3}, {7, 1, 3, 2, false, false, false, 0}, {2, 130, 6, 67, false, false, true, 0},
    /* items on float4s (BC's broadcast path), B broadcast or not */
    {3, 40, 72, 36, false, true, true, 2}, {2, 33, 64, 20, false, false, false, 0},
    /* A's items and rows on float4s, B's rows not: N = 4n + 2, odd N */
    {3, 20, 66, 36, false, false, true, 0}, {2, 20, 67, 36, true, false, false, 1},
};

static void test_bmm(void **state)
{
    (void)state;
    rt_rng r = kd_rng(0x6f);
    const char *v[KD_SAMPLE];
    int nv = kd_sample_variants("bmm", v, KD_SAMPLE, &r);
    kd_force_variant("bmm", v, nv, 1, "BM=64,BN=64,BK=16,TM=4,TN=4,PF=1,BC=8");
    kd_begin();
    for (size_t i = 0; i < sizeof bmm_cases / sizeof bmm_cases[0]; i++)
        bmm_case(&r, bmm_cases[i], v, nv);
    kd_report("bmm (a sample of its variants)", nv, kd_info("bmm")->tolerance);
}

/* ---- gemv ------------------------------------------------------------------------------------ */

/* y = W x + bias: K products and a bias, within gamma(K + 1) S, S = |bias|
 * + sum |W||x|, plus the reference's rounding. */
static void gemv_case(rt_rng *r, int N, int K, bool has_bias, const char *const *v, int nv)
{
    size_t nw = (size_t)N * K;
    float *W = kd_uniform(r, nw, -1, 1), *x = kd_uniform(r, (size_t)K, -1, 1),
          *bias = kd_uniform(r, (size_t)N, -1, 1);
    float *want = kd_alloc((size_t)N), *S = kd_alloc((size_t)N);
    double *bound = kd_bounds((size_t)N);
    kc_ref_gemv(N, K, has_bias, W, x, bias, want);
    float *aW = kd_abs(W, nw), *ax = kd_abs(x, (size_t)K), *abias = kd_abs(bias, (size_t)N);
    kc_ref_gemv(N, K, has_bias, aW, ax, abias, S);
    for (int i = 0; i < N; i++)
        bound[i] = gamma_n(K + 2) * S[i] + KD_U * fabs(want[i]);
    kcrt_buffer *bW = kd_in(W, nw, true), *bx = kd_in(x, (size_t)K, true),
                *bb = kd_in(bias, (size_t)N, false);
    kcrt_buffer *by = kd_out((size_t)N);
    kd_case c = {.kernel = "gemv",
                 .nargs = 7,
                 .out = by,
                 .n = (size_t)N,
                 .want = want,
                 .bound = bound,
                 .l2tol = kd_info("gemv")->tolerance,
                 .l2norm = S};
    snprintf(c.shape, sizeof c.shape, "N=%d K=%d has_bias=%d", N, K, has_bias);
    kcrt_arg args[] = {KCRT_I32(N),  KCRT_I32(K),  KCRT_BOOL(has_bias), KCRT_BUF(bW),
                       KCRT_BUF(bx), KCRT_BUF(bb), KCRT_BUF(by)};
    memcpy(c.args, args, sizeof args);
    kd_run(&c, v, nv);
    kcrt_buffer_free(bW), kcrt_buffer_free(bx), kcrt_buffer_free(bb), kcrt_buffer_free(by);
    free(W), free(x), free(bias), free(want), free(S), free(bound), free(aW), free(ax), free(abias);
}

static void test_gemv(void **state)
{
    (void)state;
    rt_rng r = kd_rng(0x76);
    const char *v[KD_MAXV];
    int nv = kd_every_variant("gemv", v);
    kd_begin();
    /* one element; K no multiple of 4 (every row of W starts at another
     * lane); N no multiple of R = 8, or of the workgroup; K past several
     * steps of the widest (WG 256 x U 4 float4s = 4096 floats); K a
     * multiple of 4 (SG's unshifted loads), with more rows than SG = 1's
     * subgroups (several rows each) */
    static const struct {
        int N, K;
        bool bias;
    } cases[] = {{1, 1, false},    {13, 37, true}, {70, 258, false}, {9, 4133, true},
                 {3, 6, true},     {70, 1028, true}, {5, 64, false}};
    int n = (int)(sizeof cases / sizeof cases[0]);
    for (int i = 0; i < n; i++)
        gemv_case(&r, cases[i].N, cases[i].K, cases[i].bias, v, nv);
    kd_report("gemv", nv, kd_info("gemv")->tolerance);
}

/* ---- softmax --------------------------------------------------------------------------------- */

/* y_i = e_i / s, e_i = exp(x_i - m), m the row maximum (exact: a maximum
 * of floats). With D = max |x - m| over the row, every argument of an exp
 * (x - m, and m_old - m_new when the online sum rescales) is within D and
 * is rounded by u D at most; expf is within 1.31 ulp (2.62 u, docs/math.md);
 * so each e carries a relative error of (3 + D) u per exp it passes
 * through: its own and one per rescale, of which a thread does at most
 * ceil(n / 8) in its pass (>= 8 threads a row) and log2(256) = 8 in the
 * merge tree. The sum adds gamma(n), 1/s (OpFDiv, 2.5 ulp) 5 u and the
 * last product u. Masked (-inf) entries give exactly 0, a row of only
 * -inf gives NaN. With log_out, y = (x - m) - log s: the subtraction's u
 * |x - m|, log s off by the sum's relative error (as above) plus logf's
 * 2 u |log s|, and the last subtraction's u |y|; masked entries are -inf. */
static void softmax_case(rt_rng *r, int rows, int n, int masked, bool nan_row, int log_out, const char *const *v,
                         int nv)
{
    size_t len = (size_t)rows * n;
    float *x = kd_normal(r, len, 0, 2);
    for (int k = 0; k < masked; k++) /* masked positions, never a whole row */
        x[(size_t)rt_int(r, 0, rows - 1) * n + (size_t)rt_int(r, 1, n - 1)] = -INFINITY;
    if (nan_row)
        for (int i = 0; i < n; i++)
            x[(size_t)(rows - 1) * n + i] = -INFINITY;
    float *want = kd_alloc(len);
    double *bound = kd_bounds(len);
    kc_ref_softmax(rows, n, log_out, x, want);
    double rescales = ceil(n / 8.0) + 8;
    for (int row = 0; row < rows; row++) {
        const float *xr = x + (size_t)row * n;
        double m = -INFINITY, lo = INFINITY;
        for (int i = 0; i < n; i++)
            m = fmax(m, xr[i]), lo = isinf(xr[i]) ? lo : fmin(lo, xr[i]);
        double D = m - lo, rel = (3 + D) * KD_U * (1 + rescales) + gamma_n(n) + 6 * KD_U;
        double s = 0;
        for (int i = 0; i < n; i++)
            s += exp((double)xr[i] - m);
        for (int i = 0; i < n; i++) {
            size_t at = (size_t)row * n + i;
            double diff = fabs((double)xr[i] - m);
            bound[at] = isinf(m)   ? NAN
                        : log_out ? KD_U * diff + rel + 2 * KD_U * fabs(log(s)) + KD_U * fabs(want[at])
                                  : rel * fabs(want[at]) + KD_U * fabs(want[at]);
        }
    }
    kcrt_buffer *bx = kd_in(x, len, true), *by = kd_out(len); /* float4 views: x rounded up to 16 bytes */
    kd_case c = {.kernel = "softmax",
                 .nargs = 5,
                 .out = by,
                 .n = len,
                 .want = want,
                 .bound = bound,
                 .l2tol = kd_info("softmax")->tolerance};
    snprintf(c.shape, sizeof c.shape, "rows=%d n=%d log_out=%d (%d masked%s)", rows, n, log_out, masked,
             nan_row ? ", the last row all -inf" : "");
    kcrt_arg args[] = {KCRT_I32(rows), KCRT_I32(n), KCRT_I32(log_out), KCRT_BUF(bx), KCRT_BUF(by)};
    memcpy(c.args, args, sizeof args);
    kd_run(&c, v, nv);
    kcrt_buffer_free(bx), kcrt_buffer_free(by);
    free(x), free(want), free(bound);
}

static void test_softmax(void **state)
{
    (void)state;
    rt_rng r = kd_rng(0x50);
    const char *v[KD_SAMPLE];
    int nv = kd_sample_variants("softmax", v, KD_SAMPLE, &r);
    /* the held rows that the cases below fill exactly (32 and 256 floats) */
    kd_force_variant("softmax", v, nv, 1, "WG=32,R=1,SG=2,V=8,TX=1");
    kd_force_variant("softmax", v, nv, 2, "WG=64,R=1,SG=2,V=64,TX=0");
    kd_begin();
    /* a single element (y = 1); rows no multiple of R = 8 and shorter
     * than a row's threads; a HuBERT-like row of 140; rows longer than
     * every workgroup with masked entries; a fully masked row (NaN) */
    for (int log_out = 0; log_out <= 1; log_out++) {
        softmax_case(&r, 1, 1, 0, false, log_out, v, nv);
        softmax_case(&r, 3, 7, 0, false, log_out, v, nv);
        softmax_case(&r, 13, 140, 0, false, log_out, v, nv);
        softmax_case(&r, 5, 1030, 40, false, log_out, v, nv);
        softmax_case(&r, 3, 33, 5, true, log_out, v, nv);
        /* rows a multiple of 4 long: float4 rows, in registers (36) and past them (1032);
         * SG = 2's held rows filled exactly (32: V = 8, 256: V = 64) */
        softmax_case(&r, 4, 36, 6, true, log_out, v, nv);
        softmax_case(&r, 9, 32, 3, false, log_out, v, nv);
        softmax_case(&r, 6, 256, 11, false, log_out, v, nv);
        softmax_case(&r, 3, 1032, 30, false, log_out, v, nv);
    }
    kd_report("softmax (a sample of its variants)", nv, kd_info("softmax")->tolerance);
}

/* ---- layernorm ------------------------------------------------------------------------------- */

/* y = (x - mean) rstd gamma + beta over each of rows segments of n
 * values (gamma and beta given per element). The float mean is off by
 * dmu <= (gamma(n) + 5 u) mean|x| (a sum of n terms, then OpFDiv); the
 * sum of squares of the centred values is the exact n var + n dmu^2
 * within gamma(n + 2); rsqrtf (about 1 ulp), the division by n (2.5 ulp)
 * and + eps add 8 u, and the square root halves the relative error: rstd
 * is within e_r = (gamma(n + 2) + dmu^2 rstd^2) / 2 + 8 u relatively.
 * Then y's error is |gamma| rstd ((|x - mean| + dmu)(e_r + 3 u) + dmu)
 * plus the roundings of the last multiply-add. dmu rstd is the kernel's
 * condition: segments with a large mean (mean|x| / std = 100 here) lose
 * that many times more, so their L2 tolerance is kc.yaml's times mean|x|
 * rstd, which this returns. */
static double norm_bounds(int rows, int n, float eps, const float *x, const float *g, const float *be,
                          const float *want, double *bound)
{
    double cond = 1;
    for (int row = 0; row < rows; row++) {
        const float *xr = x + (size_t)row * n;
        double mu = 0, absmean = 0, var = 0;
        for (int i = 0; i < n; i++)
            mu += xr[i], absmean += fabs(xr[i]);
        mu /= n, absmean /= n;
        for (int i = 0; i < n; i++)
            var += (xr[i] - mu) * (xr[i] - mu);
        double rstd = 1 / sqrt(var / n + eps), dmu = (gamma_n(n) + 5 * KD_U) * absmean;
        double er = (gamma_n(n + 2) + dmu * dmu * rstd * rstd) / 2 + 8 * KD_U;
        cond = fmax(cond, absmean * rstd);
        for (int i = 0; i < n; i++) {
            size_t at = (size_t)row * n + i;
            bound[at] = fabs(g[at]) * rstd * ((fabs(xr[i] - mu) + dmu) * (er + 3 * KD_U) + dmu) +
                        2 * KD_U * (fabs(want[at]) + fabs(be[at]));
        }
    }
    return cond;
}

static void layernorm_case(rt_rng *r, int rows, int n, float eps, float mean, bool const_row,
                           const char *const *v, int nv)
{
    size_t len = (size_t)rows * n;
    float *x = kd_normal(r, len, mean, 1), *g = kd_normal(r, (size_t)n, 1, 0.5f),
          *be = kd_uniform(r, (size_t)n, -1, 1);
    if (const_row)
        for (int i = 0; i < n; i++)
            x[i] = x[0];
    float *want = kd_alloc(len), *gfull = kd_alloc(len), *bfull = kd_alloc(len);
    for (size_t i = 0; i < len; i++)
        gfull[i] = g[i % n], bfull[i] = be[i % n];
    double *bound = kd_bounds(len);
    kc_ref_layernorm(rows, n, eps, x, g, be, want);
    double cond = norm_bounds(rows, n, eps, x, gfull, bfull, want, bound);
    kcrt_buffer *bx = kd_in(x, len, true), *bg = kd_in(g, (size_t)n, true),
                *bb = kd_in(be, (size_t)n, true);
    kcrt_buffer *by = kd_out(len);
    kd_case c = {.kernel = "layernorm",
                 .nargs = 7,
                 .out = by,
                 .n = len,
                 .want = want,
                 .bound = bound,
                 .l2tol = kd_info("layernorm")->tolerance * cond};
    snprintf(c.shape, sizeof c.shape, "rows=%d n=%d eps=%g (row mean %g%s)", rows, n, eps, mean,
             const_row ? ", the first row constant" : "");
    kcrt_arg args[] = {KCRT_I32(rows), KCRT_I32(n),  KCRT_F32(eps), KCRT_BUF(bx),
                       KCRT_BUF(bg),   KCRT_BUF(bb), KCRT_BUF(by)};
    memcpy(c.args, args, sizeof args);
    kd_run(&c, v, nv);
    kcrt_buffer_free(bx), kcrt_buffer_free(bg), kcrt_buffer_free(bb), kcrt_buffer_free(by);
    free(x), free(g), free(be), free(want), free(gfull), free(bfull), free(bound);
}

static void test_layernorm(void **state)
{
    (void)state;
    rt_rng r = kd_rng(0x4c);
    const char *v[KD_SAMPLE];
    int nv = kd_sample_variants("layernorm", v, KD_SAMPLE, &r);
    kd_begin();
    /* a single element (y = beta); rows no multiple of R and shorter than
     * a row's threads; longer than every workgroup; a large mean (where a
     * one-pass variance cancels); a constant row (variance 0: eps alone) */
    layernorm_case(&r, 1, 1, 1e-5f, 0, false, v, nv);
    layernorm_case(&r, 3, 7, 1e-5f, 0, false, v, nv);
    layernorm_case(&r, 5, 300, 1e-3f, 0, false, v, nv);
    layernorm_case(&r, 9, 37, 1e-5f, 100, false, v, nv);
    layernorm_case(&r, 2, 33, 0.1f, 0, true, v, nv);
    layernorm_case(&r, 2, 1030, 0, 0, false, v, nv);
    /* rows of whole float4s: held in registers at V >= 2 on lavapipe's
     * 8-lane subgroups (16 float4s; a large mean; a constant row), past
     * V = 8 and held at V >= 16 (65 float4s), held at V = 32 exactly
     * (XTTS's 1,024: 256 float4s = 8 x 32), and past the registers at
     * every V (257 float4s) */
    layernorm_case(&r, 7, 64, 1e-5f, 50, false, v, nv);
    layernorm_case(&r, 3, 32, 0.1f, 0, true, v, nv);
    layernorm_case(&r, 3, 260, 1e-5f, 0, false, v, nv);
    layernorm_case(&r, 3, 1024, 1e-5f, 20, false, v, nv);
    layernorm_case(&r, 2, 1028, 1e-5f, 0, false, v, nv);
    kd_report("layernorm (a sample of its variants)", nv, kd_info("layernorm")->tolerance);
}

/* ---- group_norm ------------------------------------------------------------------------------ */

/* layernorm's bounds (norm_bounds) over each (batch, group) segment of
 * c / groups x s values, gamma and beta expanded per channel. */
static void group_norm_case(rt_rng *r, int n, int c, int groups, int s, float eps, float mean,
                            const char *const *v, int nv)
{
    size_t len = (size_t)n * c * s;
    int per = c / groups, seglen = per * s;
    float *x = kd_normal(r, len, mean, 1), *g = kd_normal(r, (size_t)c, 1, 0.5f),
          *be = kd_uniform(r, (size_t)c, -1, 1);
    float *want = kd_alloc(len), *gfull = kd_alloc(len), *bfull = kd_alloc(len);
    for (size_t i = 0; i < len; i++) {
        size_t ch = i / (size_t)s % (size_t)c;
        gfull[i] = g[ch], bfull[i] = be[ch];
    }
    double *bound = kd_bounds(len);
    kc_ref_group_norm(n, c, groups, s, eps, x, g, be, want);
    double cond = norm_bounds(n * groups, seglen, eps, x, gfull, bfull, want, bound);
    kcrt_buffer *bx = kd_in(x, len, true), *bg = kd_in(g, (size_t)c, false), /* x: a float4 view */
                *bb = kd_in(be, (size_t)c, false);
    kcrt_buffer *by = kd_out(len);
    kd_case cs = {.kernel = "group_norm",
                  .nargs = 9,
                  .out = by,
                  .n = len,
                  .want = want,
                  .bound = bound,
                  .l2tol = kd_info("group_norm")->tolerance * cond};
    snprintf(cs.shape, sizeof cs.shape, "n=%d c=%d groups=%d s=%d eps=%g (mean %g)", n, c, groups, s, eps, mean);
    kcrt_arg args[] = {KCRT_I32(n),  KCRT_I32(c),  KCRT_I32(groups), KCRT_I32(s), KCRT_F32(eps),
                       KCRT_BUF(bx), KCRT_BUF(bg), KCRT_BUF(bb),     KCRT_BUF(by)};
    memcpy(cs.args, args, sizeof args);
    kd_run(&cs, v, nv);
    kcrt_buffer_free(bx), kcrt_buffer_free(bg), kcrt_buffer_free(bb), kcrt_buffer_free(by);
    free(x), free(g), free(be), free(want), free(gfull), free(bfull), free(bound);
}

static void test_group_norm(void **state)
{
    (void)state;
    rt_rng r = kd_rng(0x6a);
    const char *v[KD_MAXV];
    int nv = kd_every_variant("group_norm", v);
    kd_begin();
    /* one value (y = beta); groups of several channels, batch > 1; one
     * channel per group as ContentVec (a segment longer than every
     * workgroup); one group (layernorm over all); a large mean; s = 1 */
    group_norm_case(&r, 1, 1, 1, 1, 1e-5f, 0, v, nv);
    group_norm_case(&r, 2, 6, 3, 7, 1e-5f, 0, v, nv);
    group_norm_case(&r, 1, 8, 8, 1301, 1e-5f, 0, v, nv);
    group_norm_case(&r, 2, 4, 1, 300, 1e-3f, 0, v, nv);
    group_norm_case(&r, 3, 12, 4, 37, 1e-5f, 100, v, nv);
    group_norm_case(&r, 2, 16, 4, 1, 0.1f, 0, v, nv);
    /* segments of 3 floats straddling float4s (edges only), and of 2,
     * several to a float4 */
    group_norm_case(&r, 1, 5, 5, 3, 1e-5f, 0, v, nv);
    group_norm_case(&r, 3, 6, 6, 2, 1e-5f, 0, v, nv);
    kd_report("group_norm", nv, kd_info("group_norm")->tolerance);
}

/* ---- conv1d ---------------------------------------------------------------------------------- */

/* cin ks products and a bias per output (taps outside x add exact zeros):
 * within gamma(cin ks + 1) S, S = |bias| + sum |w||x| (the reference on
 * absolute values, slope 1), times max(1, |slope|) for the leaky ReLU,
 * plus its rounding and the reference's. */
typedef struct conv_shape {
    int cin, cout, t_in, ks, a, b, c; /* conv1d: dil, pad, -; conv_transpose1d: stride, pad, out_pad */
    float slope;
    int groups; /* conv_transpose1d; 0 reads as 1 */
} conv_shape;

static void conv1d_case(rt_rng *r, conv_shape s, bool half, const char *const *v, int nv)
{
    int dil = s.a, pad = s.b, t_out = kc_ref_conv1d_len(s.t_in, s.ks, dil, pad);
    size_t nx = (size_t)s.cin * s.t_in, nw = (size_t)s.cout * s.cin * s.ks, ny = (size_t)s.cout * t_out;
    float *x = kd_uniform(r, nx, -1, 1), *w = kd_uniform(r, nw, -1, 1),
          *bias = kd_uniform(r, (size_t)s.cout, -1, 1);
    /* conv1d_f16: x and w as halves (rounded here, so that the reference reads the same values) */
    kcrt_buffer *bx = half ? kd_in_half(x, nx) : kd_in(x, nx, true), /* conv1d: float4 views */
                *bw = half ? kd_in_half(w, nw) : kd_in(w, nw, true), *bb = kd_in(bias, (size_t)s.cout, false),
                *by = half ? kd_out_half(ny) : kd_out(ny);
    float *want = kd_alloc(ny), *S = kd_alloc(ny);
    double *bound = kd_bounds(ny);
    kc_ref_conv1d(s.cin, s.cout, s.t_in, s.ks, dil, pad, s.slope, x, w, bias, want);
    float *ax = kd_abs(x, nx), *aw = kd_abs(w, nw), *ab = kd_abs(bias, (size_t)s.cout);
    kc_ref_conv1d(s.cin, s.cout, s.t_in, s.ks, dil, pad, 1.0f, ax, aw, ab, S);
    for (size_t i = 0; i < ny; i++)
        bound[i] = fmax(1, fabs(s.slope)) * gamma_n(s.cin * s.ks + 2) * S[i] + 2 * KD_U * fabs(want[i]);
    const char *kernel = half ? "conv1d_f16" : "conv1d";
    kd_case c = {.kernel = kernel,
                 .nargs = 11,
                 .out = by,
                 .n = ny,
                 .want = want,
                 .bound = bound,
                 .l2tol = kd_info(kernel)->tolerance,
                 .l2norm = S};
    snprintf(c.shape, sizeof c.shape, "cin=%d cout=%d t_in=%d ks=%d dil=%d pad=%d slope=%g (t_out %d)", s.cin,
             s.cout, s.t_in, s.ks, dil, pad, s.slope, t_out);
    kcrt_arg args[] = {KCRT_I32(s.cin), KCRT_I32(s.cout), KCRT_I32(s.t_in),  KCRT_I32(s.ks),
                       KCRT_I32(dil),   KCRT_I32(pad),    KCRT_F32(s.slope), KCRT_BUF(bx),
                       KCRT_BUF(bw),    KCRT_BUF(bb),     KCRT_BUF(by)};
    memcpy(c.args, args, sizeof args);
    if (half) {
        uint16_t *wh = kd_want_halves(want, ny);
        kd_run_f16(&c, wh, v, nv);
        free(wh);
    } else {
        kd_run(&c, v, nv);
    }
    kcrt_buffer_free(bx), kcrt_buffer_free(bw), kcrt_buffer_free(bb), kcrt_buffer_free(by);
    free(x), free(w), free(bias), free(want), free(S), free(bound), free(ax), free(aw), free(ab);
}

/* a single tap; "same" padding with a leaky slope; a dilated kernel 7
 * with channels one past a tile; no padding (valid); an even kernel,
 * padding beyond its reach and a negative slope; a kernel longer than the
 * signal; channels and steps one past the largest tiles (BM 128, BN 256,
 * BK 16); padding 4 with dilation 1, so that the taps past either end of
 * x fall in each of a float4 chunk's four lanes */
static const conv_shape conv1d_cases[] = {
    {1, 1, 1, 1, 1, 0, 0, 1.0f},      {5, 19, 67, 3, 1, 1, 0, 0.1f}, {13, 33, 131, 7, 3, 9, 0, 1.0f},
    {3, 6, 40, 5, 2, 0, 0, 0.2f},     {4, 7, 23, 2, 4, 6, 0, -0.5f}, {2, 3, 3, 5, 1, 2, 0, 0.01f},
    {17, 129, 257, 3, 1, 1, 0, 1.0f}, {3, 5, 29, 9, 1, 4, 0, 0.1f},
};

/* conv1d's cases in a sample of a kernel's variants: conv1d, or
 * conv1d_f16 (its body with half x, w and y: kd_run_f16) where the device
 * has 16-bit storage. */
static void conv1d_test(const char *kernel, uint64_t salt)
{
    bool half = strstr(kernel, "_f16") != NULL;
    if (half && !kd_has_storage16())
        skip();
    rt_rng r = kd_rng(salt);
    const char *v[KD_SAMPLE];
    int nv = kd_sample_variants(kernel, v, KD_SAMPLE, &r);
    if (!half) { /* conv1d's VEC = 1 design: the CPU default, and small tiles (several along t and o) */
        kd_force_variant(kernel, v, nv, 1, "BM=64,BN=128,BK=8,TM=16,TN=16,PF=1,SMEM=0,VEC=1");
        kd_force_variant(kernel, v, nv, 2, "BM=32,BN=64,BK=8,TM=8,TN=8,PF=1,SMEM=0,VEC=1");
    }
    kd_begin();
    for (size_t i = 0; i < sizeof conv1d_cases / sizeof conv1d_cases[0]; i++)
        conv1d_case(&r, conv1d_cases[i], half, v, nv);
    char what[64];
    snprintf(what, sizeof what, "%s (a sample of its variants)", kernel);
    kd_report(what, nv, kd_info(kernel)->tolerance);
}

static void test_conv1d(void **state)
{
    (void)state;
    conv1d_test("conv1d", 0xc1);
}

static void test_conv1d_f16(void **state)
{
    (void)state;
    conv1d_test("conv1d_f16", 0xc116);
}

/* ---- conv_transpose1d ------------------------------------------------------------------------ */

/* An output takes ceil(ks / stride) taps of each input channel of its
 * group at most: within gamma(cin_g ceil(ks / stride) + 1) S, S from the
 * reference on absolute values; outputs no tap reaches are the bias,
 * exactly. */
static void convt_case(rt_rng *r, conv_shape s, const char *const *v, int nv)
{
    int stride = s.a, pad = s.b, out_pad = s.c, groups = s.groups ? s.groups : 1,
        t_out = kc_ref_conv_transpose1d_len(s.t_in, s.ks, stride, pad, out_pad);
    size_t nx = (size_t)s.cin * s.t_in, nw = (size_t)s.cin * (s.cout / groups) * s.ks, ny = (size_t)s.cout * t_out;
    float *x = kd_uniform(r, nx, -1, 1), *w = kd_uniform(r, nw, -1, 1),
          *bias = kd_uniform(r, (size_t)s.cout, -1, 1);
    float *want = kd_alloc(ny), *S = kd_alloc(ny);
    double *bound = kd_bounds(ny);
    kc_ref_conv_transpose1d(s.cin, s.cout, s.t_in, s.ks, stride, pad, out_pad, groups, x, w, bias, want);
    float *ax = kd_abs(x, nx), *aw = kd_abs(w, nw), *ab = kd_abs(bias, (size_t)s.cout);
    kc_ref_conv_transpose1d(s.cin, s.cout, s.t_in, s.ks, stride, pad, out_pad, groups, ax, aw, ab, S);
    int taps = s.cin / groups * ((s.ks + stride - 1) / stride);
    for (size_t i = 0; i < ny; i++)
        bound[i] = gamma_n(taps + 2) * S[i] + KD_U * fabs(want[i]);
    kcrt_buffer *bx = kd_in(x, nx, true), *bw = kd_in(w, nw, false), /* x: a float4 view */
                *bb = kd_in(bias, (size_t)s.cout, false);
    kcrt_buffer *by = kd_out(ny);
    kd_case c = {.kernel = "conv_transpose1d",
                 .nargs = 12,
                 .out = by,
                 .n = ny,
                 .want = want,
                 .bound = bound,
                 .l2tol = kd_info("conv_transpose1d")->tolerance,
                 .l2norm = S};
    snprintf(c.shape, sizeof c.shape,
             "cin=%d cout=%d t_in=%d ks=%d stride=%d pad=%d out_pad=%d groups=%d (t_out %d)", s.cin, s.cout, s.t_in,
             s.ks, stride, pad, out_pad, groups, t_out);
    kcrt_arg args[] = {KCRT_I32(s.cin),  KCRT_I32(s.cout), KCRT_I32(s.t_in),  KCRT_I32(s.ks),
                       KCRT_I32(stride), KCRT_I32(pad),    KCRT_I32(out_pad), KCRT_I32(groups),
                       KCRT_BUF(bx),     KCRT_BUF(bw),     KCRT_BUF(bb),      KCRT_BUF(by)};
    memcpy(c.args, args, sizeof args);
    kd_run(&c, v, nv);
    kcrt_buffer_free(bx), kcrt_buffer_free(bw), kcrt_buffer_free(bb), kcrt_buffer_free(by);
    free(x), free(w), free(bias), free(want), free(S), free(bound), free(ax), free(aw), free(ab);
}

static void test_conv_transpose1d(void **state)
{
    (void)state;
    rt_rng r = kd_rng(0xc7);
    const char *v[KD_SAMPLE];
    int nv = kd_sample_variants("conv_transpose1d", v, KD_SAMPLE, &r);
    /* the direct design, whose workgroups run in the order phases
     * fastest: the CPU default, and small tiles, so that the cases below
     * have several tiles along q and the outputs as well as the phases */
    kd_force_variant("conv_transpose1d", v, nv, 1, "BM=64,BN=128,BK=8,TM=16,TN=16,PF=1,SMEM=0");
    kd_force_variant("conv_transpose1d", v, nv, 2, "BM=16,BN=128,BK=8,TM=8,TN=8,PF=1,SMEM=0");
    kd_begin();
    /* a single tap; HiFi-GAN's ks 16, stride 10, pad 3; output padding;
     * a stride longer than the kernel (phases no tap reaches: bias only)
     * and out_pad > pad (samples past the full result); channels and
     * steps one past the largest tiles; groups: two, depthwise (one
     * channel each: three quarters of every 4-channel chunk past the
     * group), and groups of more outputs than the largest tile; rows
     * long enough for whole windows inside them (the direct design's
     * float4 loads), at every offset of a row in its float4s (t_in 70
     * and 53), for two taps a phase and for one */
    static const conv_shape cases[] = {
        {1, 1, 1, 1, 1, 0, 0, 0, 1},       {5, 7, 13, 16, 10, 3, 0, 0, 1}, {9, 35, 29, 4, 2, 1, 1, 0, 1},
        {3, 4, 10, 3, 5, 0, 2, 0, 1},      {6, 5, 11, 7, 3, 4, 2, 0, 1},   {17, 129, 30, 16, 10, 3, 0, 0, 1},
        {4, 3, 260, 5, 1, 2, 0, 0, 1},     {6, 4, 9, 4, 2, 1, 0, 0, 2},    {7, 7, 12, 3, 3, 0, 1, 0, 7},
        {10, 260, 6, 16, 10, 3, 0, 0, 2},  {5, 6, 70, 16, 10, 3, 0, 0, 1}, {7, 9, 53, 4, 2, 1, 0, 0, 1},
    };
    int n = (int)(sizeof cases / sizeof cases[0]);
    for (int i = 0; i < n; i++)
        convt_case(&r, cases[i], v, nv);
    kd_report("conv_transpose1d (a sample of its variants)", nv, kd_info("conv_transpose1d")->tolerance);
}

/* ---- real shapes ----------------------------------------------------------------------------- */

/* The value of `name` in a shape of the bundle ("M=140,N=768,K=768,act=0"),
 * or def. */
static int kd_shape_int(const char *shape, const char *name, int def)
{
    size_t len = strlen(name);
    for (const char *p = shape; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (!strncmp(p, name, len) && p[len] == '=')
            return atoi(p + len + 1);
    return def;
}

/* The flops of a kernel at one of its shapes, from the bundle's formula. */
static double kd_shape_flops(const kcrt_kernel_info *k, const char *shape)
{
    const char *names[16];
    int64_t values[16];
    int n = 0;
    char copy[256], *save = NULL;
    snprintf(copy, sizeof copy, "%s", shape);
    for (char *t = strtok_r(copy, ",", &save); t && n < 16; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        assert_non_null(eq);
        *eq = 0;
        names[n] = NULL; /* the parameter's own name, which outlives copy */
        for (int i = 0; i < k->nparams; i++)
            if (!strcmp(k->params[i].name, t))
                names[n] = k->params[i].name;
        if (!names[n])
            fail_msg("%s: shape %s names '%s', not a parameter", k->name, shape, t);
        values[n++] = atoll(eq + 1);
    }
    int64_t flops = 0;
    char err[256];
    if (!k->flops || kcrt_eval(k->flops, names, values, n, &flops, err, sizeof err) != KCRT_OK)
        fail_msg("%s: the flops of shape %s do not evaluate", k->name, shape);
    return (double)flops;
}

/* Up to two of the kernel's kc.yaml shapes that stay fast on lavapipe (at
 * most 5e8 flops; the cheapest one in any case), cheapest first. */
static int kd_fast_shapes(const kcrt_kernel_info *k, const char **out)
{
    int n = 0;
    for (int round = 0; round < 2; round++) {
        int best = -1;
        double best_flops = 0;
        for (int i = 0; i < k->nshapes; i++) {
            double f = kd_shape_flops(k, k->shapes[i]);
            bool taken = n > 0 && out[0] == k->shapes[i];
            if (!taken && (best < 0 || f < best_flops))
                best = i, best_flops = f;
        }
        if (best < 0 || (n > 0 && best_flops > 5e8))
            break;
        out[n++] = k->shapes[best];
    }
    return n;
}

/* Each kernel at its fast kc.yaml shapes, in the default variant and three
 * more chosen by the seed. Scalars a shape leaves out take typical values
 * (bias on, a leaky slope of 0.1, eps 1e-5). */
static void test_real_shapes(void **state)
{
    (void)state;
    rt_rng r = kd_rng(0x7e);
    static const char *kernels[] = {"saxpy",  "gemm",   "bmm", "gemv",
                                    "softmax", "layernorm", "group_norm", "conv1d", "conv_transpose1d", "elementwise", "pad1d", "interp1d", "stft", "attention", "resample", "sine_source", "yin", "conv2d", "gru_step", "gemm_f16", "conv1d_f16", "attention_f16", "attention_decode", "attention_decode_f16", "linear", "linear_f16", "gemv_f16"};
    for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; k++) {
        const kcrt_kernel_info *info = kd_info(kernels[k]);
        const char *shapes[2], *v[8];
        int ns = kd_fast_shapes(info, shapes), nv = kd_some_variants(kernels[k], v, 3, &r);
        kd_begin();
        for (int i = 0; i < ns; i++) {
            const char *sh = shapes[i];
#define I(name, def) kd_shape_int(sh, name, def)
            if (!strcmp(kernels[k], "saxpy"))
                saxpy_case(&r, I("n", 0), 1.5f, v, nv);
            else if (!strcmp(kernels[k], "elementwise"))
                elementwise_case(&r, I("n", 0), I("op", 0), 0.1f, v, nv);
            else if (!strcmp(kernels[k], "interp1d"))
                interp1d_case(&r, I("rows", 1), I("t_in", 0), I("t_out", 0), I("mode", 0), I("align_corners", 0),
                              v, nv);
            else if (!strcmp(kernels[k], "gemm_f16") || !strcmp(kernels[k], "linear_f16")) {
                if (kd_has_storage16())
                    gemm_f16_case(&r, I("M", 1), I("N", 1), I("K", 1), true,
                                  kernels[k][0] == 'l' ? KD_LINEAR_F16 : KD_GEMM_F16, v, nv);
            } else if (!strcmp(kernels[k], "gemv_f16")) {
                if (kd_has_storage16())
                    gemm_f16_case(&r, 1, I("N", 1), I("K", 1), true, KD_GEMV_F16, v, nv);
            } else if (!strcmp(kernels[k], "gru_step"))
                gru_step_case(&r, I("batch", 1), I("hidden", 1), I("steps", 1), I("t", 0), v, nv);
            else if (!strcmp(kernels[k], "conv2d"))
                conv2d_case(&r,
                            (kc_conv2d_shape){I("batch", 1), I("cin", 1), I("h", 1), I("w", 1), I("cout", 1),
                                              I("kh", 1), I("kw", 1), 0, 0, I("sh", 1), I("sw", 1), I("ph", 0),
                                              I("pw", 0), I("dh", 1), I("dw", 1), I("groups", 1)},
                            v, nv);
            else if (!strcmp(kernels[k], "yin"))
                yin_case(&r,
                         (yin_shape){1, I("len", 0) / 10, I("frame_length", 1024), I("hop", 160), I("center", 1),
                                     I("tau_min", 16), I("tau_max", 512), 140},
                         v, nv);
            else if (!strcmp(kernels[k], "sine_source"))
                sine_source_case(&r, (ss_shape){I("batch", 1), I("frames", 1), I("upp", 1), I("dim", 1)}, v, nv);
            else if (!strcmp(kernels[k], "resample"))
                resample_case(&r, (rs_shape){I("batch", 1), I("len", 0), I("orig", 1), I("new_rate", 1), I("width", 1)},
                              v, nv);
            else if (!strcmp(kernels[k], "attention"))
                attention_case(&r,
                               (att_shape){I("bh", 1), I("lq", 1), I("lk", 1), I("d", 64), I("dv", 64),
                                           I("mask_mode", 0), I("causal", 0)},
                               false, kernels[k], v, nv);
            else if (!strncmp(kernels[k], "attention", 9)) { /* _f16, _decode, _decode_f16 */
                if (!strstr(kernels[k], "_f16") || kd_has_storage16())
                    attention_case(&r,
                                   (att_shape){I("bh", 1), I("lq", 1), I("lk", 1), I("d", 64), I("dv", 64),
                                               I("mask_mode", 0), I("causal", 0)},
                                   false, kernels[k], v, nv);
            }
            else if (!strcmp(kernels[k], "stft"))
                stft_case(&r,
                          (stft_shape){I("batch", 1), I("len", 0), I("nfft", 0), I("hop", 1), I("pad_mode", 1),
                                       I("center", 1), I("width", 1), I("power", 2)},
                          v, nv);
            else if (!strcmp(kernels[k], "pad1d"))
                pad1d_case(&r, I("rows", 1), I("t_in", 0), I("left", 0), I("right", 0), I("mode", 0), v, nv);
            else if (!strcmp(kernels[k], "gemm"))
                gemm_case(&r, (gemm_shape){I("M", 0), I("N", 0), I("K", 0), true, I("act", 0), 0.1f}, false, v, nv);
            else if (!strcmp(kernels[k], "linear"))
                gemm_case(&r, (gemm_shape){I("M", 0), I("N", 0), I("K", 0), true, I("act", 0), 0.1f}, true, v, nv);
            else if (!strcmp(kernels[k], "bmm"))
                bmm_case(&r,
                         (bmm_shape){I("batch", 1), I("M", 0), I("N", 0), I("K", 0), I("sa", 1) == 0, I("sb", 1) == 0,
                                     true, I("act", 0)},
                         v, nv);
            else if (!strcmp(kernels[k], "gemv"))
                gemv_case(&r, I("N", 0), I("K", 0), true, v, nv);
            else if (!strcmp(kernels[k], "softmax"))
                softmax_case(&r, I("rows", 0), I("n", 0), 0, false, I("log_out", 0), v, nv);
            else if (!strcmp(kernels[k], "layernorm"))
                layernorm_case(&r, I("rows", 0), I("n", 0), 1e-5f, 0, false, v, nv);
            else if (!strcmp(kernels[k], "group_norm"))
                group_norm_case(&r, I("n", 1), I("c", 1), I("groups", 1), I("s", 1), 1e-5f, 0, v, nv);
            else if (!strcmp(kernels[k], "conv1d") || !strcmp(kernels[k], "conv1d_f16")) {
                bool half = !strcmp(kernels[k], "conv1d_f16");
                if (!half || kd_has_storage16())
                    conv1d_case(&r,
                                (conv_shape){I("cin", 0), I("cout", 0), I("t_in", 0), I("ks", 0), I("dil", 1),
                                             I("pad", 0), 0, 0.1f},
                                half, v, nv);
            }
            else
                convt_case(&r,
                           (conv_shape){I("cin", 0), I("cout", 0), I("t_in", 0), I("ks", 0), I("stride", 1),
                                        I("pad", 0), I("out_pad", 0), 0, I("groups", 1)},
                           v, nv);
#undef I
        }
        char what[96];
        snprintf(what, sizeof what, "%s at kc.yaml's shapes", kernels[k]);
        kd_report(what, nv, info->tolerance);
    }
}

/* The bundle holds the kernels this file tests and no other: a kernel
 * added to kernels/ fails here until it has its cases. */
static void test_bundle_has_every_kernel(void **state)
{
    (void)state;
    static const char *tested[] = {"saxpy",  "gemm",   "bmm", "gemv",
                                   "softmax", "layernorm", "group_norm", "conv1d", "conv_transpose1d", "elementwise", "pad1d", "interp1d", "stft", "attention", "resample", "sine_source", "yin", "conv2d", "gru_step", "gemm_f16", "conv1d_f16", "attention_f16", "attention_decode", "attention_decode_f16", "linear", "linear_f16", "gemv_f16"};
    int n = kcrt_bundle_kernel_count(kd_bundle), total = 0;
    for (int i = 0; i < n; i++) {
        const kcrt_kernel_info *k = kcrt_bundle_kernel_info(kd_bundle, i);
        bool known = false;
        for (size_t j = 0; j < sizeof tested / sizeof tested[0]; j++)
            known |= !strcmp(tested[j], k->name);
        if (!known)
            fail_msg("kernels/ has a kernel '%s' that test_kernels_device.c does not test", k->name);
        total += k->nvariants;
    }
    assert_int_equal((int)(sizeof tested / sizeof tested[0]), n);
    print_message("    %d kernels, %d variants\n", n, total);
}

/* ---- main ------------------------------------------------------------------------------------ */

/* Before each test: the bundle, unless the test before it kept it.
 * Loading it is most of a light test's time: libkcrt reads and checks
 * all 700 MB of its variants (SHA-256, each SPIR-V module's header). */
static int kd_load(void **state)
{
    (void)state;
    if (kd_bundle)
        return 0;
    if (kcrt_bundle_load(rt_ctx, KD_BUNDLE, &kd_bundle) != KCRT_OK) {
        fprintf(stderr, "cannot load %s: %s\n", KD_BUNDLE, kcrt_error(rt_ctx));
        return 1;
    }
    return 0;
}

/* After a heavy test: free the pipelines it made (lavapipe keeps each
 * one, megabytes for gemm's, until its bundle goes) with the bundle, which
 * the next test loads again. Freed first, so that a failing check below
 * (which leaves by longjmp) cannot keep them; rt_teardown's count of
 * validation messages is cumulative, so its one check covers the test's
 * launches and the freeing (kcrt_bundle_free waits for the launches
 * first). */
static int kd_unload(void **state)
{
    kcrt_bundle_free(kd_bundle);
    kd_bundle = NULL;
    return rt_teardown(state);
}

/* After a light test (a few small pipelines): the bundle stays for the
 * next test; its launches are checked as above, and the pipelines freed
 * with the bundle by a heavy test's kd_unload or at the end of main. */
static int kd_keep(void **state)
{
    return rt_teardown(state);
}

/* The seed: KC_TEST_SEED, or a fresh one from the clock and the process. */
static uint64_t kd_pick_seed(void)
{
    const char *s = getenv("KC_TEST_SEED");
    if (s && *s)
        return strtoull(s, NULL, 0);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = ((uint64_t)ts.tv_sec * 1000000007u) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 40);
    return x ? x : 1;
}

/* test_kernels_device [PATTERN...]: the tests whose names match one of the
 * patterns (fnmatch: "test_conv*"), or all (kc_test_run). */
int main(int argc, char **argv)
{
    static const struct CMUnitTest all[] = {
        cmocka_unit_test_setup_teardown(test_bundle_has_every_kernel, kd_load, kd_keep),
        cmocka_unit_test_setup_teardown(test_saxpy, kd_load, kd_keep),
        cmocka_unit_test_setup_teardown(test_elementwise, kd_load, kd_keep),
        cmocka_unit_test_setup_teardown(test_pad1d, kd_load, kd_keep),
        cmocka_unit_test_setup_teardown(test_interp1d, kd_load, kd_keep),
        cmocka_unit_test_setup_teardown(test_stft, kd_load, kd_unload),
        cmocka_unit_test_setup_teardown(test_attention, kd_load, kd_unload),
        cmocka_unit_test_setup_teardown(test_attention_bkv8, kd_load, kd_unload),
        cmocka_unit_test_setup_teardown(test_attention_specialized, kd_load, kd_unload),
        cmocka_unit_test_setup_teardown(test_attention_f16, kd_load, kd_unload),
        cmocka_unit_test_setup_teardown(test_attention_decode, kd_load, kd_keep),
        cmocka_unit_test_setup_teardown(test_attention_decode_f16, kd_load, kd_keep),
        cmocka_unit_test_setup_teardown(test_resample, kd_load, kd_keep),
        cmocka_unit_test_setup_teardown(test_sine_source, kd_load, kd_keep),
        cmocka_unit_test_setup_teardown(test_yin, kd_load, kd_keep),
        cmocka_unit_test_setup_teardown(test_conv2d, kd_load, kd_keep),
        cmocka_unit_test_setup_teardown(test_gru_step, kd_load, kd_keep),
        cmocka_unit_test_setup_teardown(test_gemm_f16, kd_load, kd_keep),
        cmocka_unit_test_setup_teardown(test_linear_f16, kd_load, kd_keep),
        cmocka_unit_test_setup_teardown(test_gemv_f16, kd_load, kd_keep),
        cmocka_unit_test_setup_teardown(test_gemv, kd_load, kd_unload),
        cmocka_unit_test_setup_teardown(test_softmax, kd_load, kd_unload),
        cmocka_unit_test_setup_teardown(test_layernorm, kd_load, kd_unload),
        cmocka_unit_test_setup_teardown(test_group_norm, kd_load, kd_keep),
        cmocka_unit_test_setup_teardown(test_real_shapes, kd_load, kd_unload),
        cmocka_unit_test_setup_teardown(test_conv1d, kd_load, kd_unload),
        cmocka_unit_test_setup_teardown(test_conv1d_f16, kd_load, kd_unload),
        cmocka_unit_test_setup_teardown(test_conv_transpose1d, kd_load, kd_unload),
        cmocka_unit_test_setup_teardown(test_gemm, kd_load, kd_unload),
        cmocka_unit_test_setup_teardown(test_linear, kd_load, kd_unload),
        cmocka_unit_test_setup_teardown(test_bmm, kd_load, kd_unload),
    };
    kd_seed = kd_pick_seed();
    fprintf(stderr, "test_kernels_device: seed %llu (KC_TEST_SEED=%llu replays this run)\n",
            (unsigned long long)kd_seed, (unsigned long long)kd_seed);
    const char *limit = getenv("KC_TEST_VARIANTS");
    kd_limit = limit && *limit ? atoi(limit) : 0;
    if (kd_limit > 0)
        fprintf(stderr, "test_kernels_device: at most %d variants a case (KC_TEST_VARIANTS)\n", kd_limit);
    int rc = rt_open_or_skip("test_kernels_device");
    if (rc)
        return rc;
    int failed = kc_test_run("test_kernels_device", all, sizeof all / sizeof all[0], argc, argv, NULL, NULL);
    kcrt_bundle_free(kd_bundle); /* a light test's, kept */
    kd_bundle = NULL;
    if (failed)
        fprintf(stderr, "test_kernels_device: failed with seed %llu: KC_TEST_SEED=%llu replays it\n",
                (unsigned long long)kd_seed, (unsigned long long)kd_seed);
    return rt_close_all(failed);
}
