/*
 * test_report.c — the tune report (tuner/report) on synthetic tunes whose
 * times come fresh from a seeded PRNG (KC_TEST_SEED overrides the seed;
 * a failure prints it): failures of every status, shapes with no points,
 * kernels with one tunable and with none, hostile names, a ~2000-point
 * kernel with eight tunables.
 *
 * Each written file is read back by check_report.py, which parses it as
 * XML (the HTML page is written to parse as XML, and each inline <svg> is
 * parsed alone too) and prints the facts checked here: heat-map sizes and
 * cells, dots per chart, the best and default labels, failure counts.
 */
#include "kc_test.h"

#include "kc_support.h"
#include "kc_tune_report.h"
#include "report_private.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#define PYTHON "/usr/bin/python3"

static uint64_t seed = 1;
/* The files of the last run stay here, in the test's build folder, to be
 * looked at; each run empties it first. */
static const char dir[] = "report-out";

/* ---- PRNG: splitmix64 ------------------------------------------------------ */

static uint64_t rng;

static uint64_t next(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static double uniform(void)
{
    return (double)(next() >> 11) / 9007199254740992.0;
}

/* ---- synthetic tunes --------------------------------------------------------- */

enum { MAXK = 8 };

typedef struct synth {
    kc_arena arena;
    kc_tune_report r;
    kc_tune_report_kernel k[MAXK];
} synth;

static const char *const fail_names[] = {"compile_failed", "verify_failed", "timeout", "refused"};

static synth *synth_new(void)
{
    synth *s = calloc(1, sizeof *s);
    kc_arena_init(&s->arena);
    s->r = (kc_tune_report){"rvc.kcb", "llvmpipe (LLVM 15.0.6, 256 bits)", "vulkan", 0, s->k, NULL, NULL};
    return s;
}

static void synth_free(synth *s)
{
    kc_arena_free(&s->arena);
    free(s);
}

/* Distinct configurations of the product, as mixed-radix numbers: all of
 * them in order when they fit, else a random sample. */
static uint64_t *pick_configs(synth *s, uint64_t product, int n)
{
    uint64_t *c = kc_arena_alloc(&s->arena, sizeof(uint64_t) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        if ((uint64_t)n == product) {
            c[i] = (uint64_t)i;
            continue;
        }
        bool dup;
        do {
            c[i] = next() % product;
            dup = false;
            for (int j = 0; j < i && !dup; j++)
                dup = c[j] == c[i];
        } while (dup);
    }
    return c;
}

/* GPU-like times: a bowl around a per-kernel optimum, times the shape's
 * scale, with a few percent of noise. */
static void make_point(synth *s, const kc_tune_report_kernel *k, kc_tune_report_point *p, uint64_t config,
                       const int *opt, double scale, double fails)
{
    int64_t *v = kc_arena_alloc(&s->arena, sizeof(int64_t) * (size_t)(k->ntunables + 1));
    kc_buf name = {0};
    double t = scale * (1 + 0.05 * uniform());
    for (int d = k->ntunables - 1; d >= 0; d--) {
        int i = (int)(config % (uint64_t)k->nvalues[d]);
        config /= (uint64_t)k->nvalues[d];
        v[d] = k->values[d][i];
        t *= 1 + 0.4 * abs(i - opt[d]);
    }
    for (int d = 0; d < k->ntunables; d++)
        kc_buf_printf(&name, "%s%s=%" PRId64, d ? "," : "", k->tunables[d], v[d]);
    char *text = kc_buf_take(&name);
    p->values = v;
    p->variant = kc_arena_strdup(&s->arena, text);
    free(text);
    bool failed = uniform() < fails;
    p->status = failed ? fail_names[next() % 4] : "ok";
    p->time_ns = failed ? NAN : t;
}

static int fastest(const kc_tune_report_shape *sh)
{
    int best = -1;
    for (int i = 0; i < sh->npoints; i++)
        if (strcmp(sh->points[i].status, "ok") == 0 &&
            (best < 0 || sh->points[i].time_ns < sh->points[best].time_ns))
            best = i;
    return best;
}

/* A kernel with n tunables named names[d] with nvalues[d] candidates
 * (1, 2, 4, …), and nshapes shapes of npoints[j] configurations each
 * (at most the product), of which a fraction `fails` fail. The default
 * is the first point; the best, the fastest ok one. */
static kc_tune_report_kernel *add_kernel(synth *s, const char *name, int n, const char *const *names,
                                         const int *nvalues, int nshapes, const int *npoints, double fails)
{
    assert_true(s->r.nkernels < MAXK);
    kc_tune_report_kernel *k = &s->k[s->r.nkernels++];
    int64_t **values = kc_arena_alloc(&s->arena, sizeof(int64_t *) * (size_t)(n + 1));
    int *opt = kc_arena_alloc(&s->arena, sizeof(int) * (size_t)(n + 1));
    uint64_t product = 1;
    for (int d = 0; d < n; d++) {
        values[d] = kc_arena_alloc(&s->arena, sizeof(int64_t) * (size_t)nvalues[d]);
        for (int i = 0; i < nvalues[d]; i++)
            values[d][i] = (int64_t)1 << i;
        opt[d] = (int)(next() % (uint64_t)nvalues[d]);
        product *= (uint64_t)nvalues[d];
    }
    kc_tune_report_shape *shapes =
        kc_arena_alloc(&s->arena, sizeof(kc_tune_report_shape) * (size_t)(nshapes + 1));
    *k = (kc_tune_report_kernel){name, n, names, nvalues, (const int64_t *const *)values, nshapes, shapes};
    for (int j = 0; j < nshapes; j++) {
        int np = (uint64_t)npoints[j] > product ? (int)product : npoints[j];
        uint64_t *configs = pick_configs(s, product, np);
        kc_tune_report_point *pts =
            kc_arena_alloc(&s->arena, sizeof(kc_tune_report_point) * (size_t)(np + 1));
        double scale = 1e3 * pow(10, 4 * uniform()); /* 1 µs to 10 ms */
        for (int i = 0; i < np; i++)
            make_point(s, k, &pts[i], configs[i], opt, scale, fails);
        shapes[j] = (kc_tune_report_shape){kc_arena_printf(&s->arena, "n=%d", 1000 * (j + 1)), np, pts, -1,
                                           np > 0 ? 0 : -1};
        shapes[j].best = fastest(&shapes[j]);
    }
    return k;
}

/* The report every structural test draws: three shapes of a 3-tunable
 * kernel (one with nothing measured), one tunable, no tunables, a kernel
 * whose every run failed, one with no shapes. */
static synth *mixed(void)
{
    static const char *const gemm[] = {"WG", "TM", "TN"}, *const vec[] = {"VEC"}, *const ab[] = {"A", "B"};
    static const int gemm_n[] = {4, 3, 3}, vec_n[] = {5}, ab_n[] = {2, 2};
    synth *s = synth_new();
    add_kernel(s, "gemm", 3, gemm, gemm_n, 3, (const int[]){36, 0, 10}, 0.15);
    add_kernel(s, "scale", 1, vec, vec_n, 1, (const int[]){5}, 0);
    add_kernel(s, "copy", 0, NULL, NULL, 1, (const int[]){1}, 0);
    add_kernel(s, "broken", 2, ab, ab_n, 1, (const int[]){4}, 1.0);
    add_kernel(s, "unmeasured", 2, ab, ab_n, 0, NULL, 0);
    return s;
}

/* ---- files and the checker ---------------------------------------------------- */

static char *path_of(const char *name)
{
    static char buf[4][256];
    static int turn;
    char *p = buf[turn++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s", dir, name);
    return p;
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void write_ok(const kc_tune_report *r, const char *path)
{
    char err[512] = "";
    unlink(path);
    if (!kc_tune_report_write(r, path, err, sizeof err))
        fail_msg("seed %" PRIu64 ": writing %s failed: %s", seed, path, err);
    assert_true(exists(path));
}

/* The checker's output for a file; fails the test when the file is not
 * well-formed XML. */
static char *facts(const char *path)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, PYTHON " %s %s 2>&1", KC_SRC("tests/tuner/check_report.py"), path);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    kc_buf out = {0};
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        kc_buf_append(&out, chunk, n);
    int rc = pclose(f);
    char *text = kc_buf_take(&out);
    if (rc != 0)
        fail_msg("seed %" PRIu64 ": %s: checker exit %d:\n%s", seed, path, rc, text);
    return text;
}

/* The lines of text that start with prefix, joined (each with its \n). */
static char *lines(const char *text, const char *prefix)
{
    kc_buf b = {0};
    size_t np = strlen(prefix);
    for (const char *p = text; *p;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p + 1) : strlen(p);
        if (strncmp(p, prefix, np) == 0)
            kc_buf_append(&b, p, len);
        p += len;
    }
    return kc_buf_take(&b);
}

static void assert_lines(const char *text, const char *prefix, const char *expected)
{
    char *got = lines(text, prefix);
    if (strcmp(got, expected) != 0)
        fail_msg("seed %" PRIu64 ": lines '%s':\nexpected:\n%sgot:\n%s", seed, prefix, expected, got);
    free(got);
}

static int count_lines(const char *text)
{
    int n = 0;
    for (const char *p = text; (p = strchr(p, '\n')); p++)
        n++;
    return n;
}

static char *slurp(const char *path)
{
    char *text = kc_read_file(path, NULL);
    assert_non_null(text);
    return text;
}

/* ---- what the data says the file must show -------------------------------------- */

static int count_ok(const kc_tune_report_shape *sh)
{
    int n = 0;
    for (int i = 0; i < sh->npoints; i++)
        n += strcmp(sh->points[i].status, "ok") == 0;
    return n;
}

/* "chart N" per shape with an ok point */
static char *expected_charts(const kc_tune_report *r)
{
    kc_buf b = {0};
    for (int i = 0; i < r->nkernels; i++)
        for (int j = 0; j < r->kernels[i].nshapes; j++)
            if (count_ok(&r->kernels[i].shapes[j]))
                kc_buf_printf(&b, "chart %d\n", count_ok(&r->kernels[i].shapes[j]));
    return kc_buf_take(&b);
}

/* "best ● best: VARIANT — TIME" per shape with an ok point */
static char *expected_best(const kc_tune_report *r)
{
    kc_buf b = {0};
    for (int i = 0; i < r->nkernels; i++)
        for (int j = 0; j < r->kernels[i].nshapes; j++) {
            const kc_tune_report_shape *sh = &r->kernels[i].shapes[j];
            if (sh->best < 0)
                continue;
            char t[32];
            rep_time(t, sizeof t, sh->points[sh->best].time_ns);
            kc_buf_printf(&b, "best \xe2\x97\x8f best: %s \xe2\x80\x94 %s\n",
                          rep_variant(&sh->points[sh->best]), t);
        }
    return kc_buf_take(&b);
}

/* "fail STATUS COUNT" for the four statuses of each shape with points */
static char *expected_fails(const kc_tune_report *r)
{
    kc_buf b = {0};
    for (int i = 0; i < r->nkernels; i++)
        for (int j = 0; j < r->kernels[i].nshapes; j++) {
            const kc_tune_report_shape *sh = &r->kernels[i].shapes[j];
            for (int f = 0; f < 4 && sh->npoints; f++) {
                int n = 0;
                for (int p = 0; p < sh->npoints; p++)
                    n += strcmp(sh->points[p].status, fail_names[f]) == 0;
                kc_buf_printf(&b, "fail %s %d\n", fail_names[f], n);
            }
        }
    return kc_buf_take(&b);
}

static void check_mixed(const kc_tune_report *r, const char *text)
{
    /* gemm: WG has the most candidates, TM and TN tie and TM is declared
     * first; its second shape has no points and so no map. */
    assert_lines(text, "map ",
                 "map 4 3 12 1 WG TM\n"
                 "map 4 3 12 1 WG TM\n"
                 "map 5 1 5 1 VEC -\n"
                 "map 2 2 4 0 A B\n");
    char *e = expected_charts(r);
    assert_lines(text, "chart ", e);
    free(e);
    e = expected_best(r);
    assert_lines(text, "best ", e);
    free(e);
    e = expected_fails(r);
    assert_lines(text, "fail ", e);
    free(e);
    ASSERT_CONTAINS(text, "note nothing measured\n");
    ASSERT_CONTAINS(text, "note no configuration ran successfully\n");
    /* broken: every run failed, so every cell is hatched */
    ASSERT_CONTAINS(text, "cellkinds 0 4 0\n");
}

/* ---- tests ------------------------------------------------------------------- */

static void test_time_words(void **state)
{
    (void)state;
    static const struct {
        double ns;
        const char *text;
    } cases[] = {
        {850, "850 ns"},          {999.96, "1 \xc2\xb5s"}, {1000, "1 \xc2\xb5s"},   {12345, "12.3 \xc2\xb5s"},
        {99960, "100 \xc2\xb5s"}, {1e6, "1 ms"},           {2.05e9, "2.05 s"},      {0.5, "0.5 ns"},
        {123456789, "123 ms"},    {4e12, "4000 s"},        {1500, "1.5 \xc2\xb5s"}, {10, "10 ns"},
    };
    for (size_t i = 0; i < KC_COUNT(cases); i++) {
        char t[32];
        rep_time(t, sizeof t, cases[i].ns);
        assert_string_equal(cases[i].text, t);
    }
}

static bool is_nice(double t)
{
    double m = t / pow(10, floor(log10(t) + 1e-9));
    static const double ok[] = {1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10};
    for (size_t i = 0; i < KC_COUNT(ok); i++)
        if (fabs(m - ok[i]) < 1e-6)
            return true;
    return false;
}

static void test_log_axis(void **state)
{
    (void)state;
    rng = seed;
    for (int i = 0; i < 2000; i++) {
        double lo = pow(10, 12 * uniform() - 1), hi = lo * pow(10, i % 4 ? 3 * uniform() : 12 * uniform());
        if (i % 7 == 0)
            hi = lo;
        rep_axis a;
        rep_log_axis(&a, lo, hi);
        if (a.nticks < 2 || a.nticks > 12)
            fail_msg("%g..%g: %d ticks", lo, hi, a.nticks);
        assert_true(a.lo < lo && a.hi > hi);
        for (int t = 0; t < a.nticks; t++) {
            assert_true(is_nice(a.ticks[t]));
            assert_true(a.ticks[t] >= a.lo * (1 - 1e-9) && a.ticks[t] <= a.hi * (1 + 1e-9));
            assert_true(t == 0 || a.ticks[t] > a.ticks[t - 1]);
        }
        assert_true(rep_axis_frac(&a, lo) > 0 && rep_axis_frac(&a, hi) < 1);
    }
}

static void test_escape(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"A<B & \"C\"", "A&lt;B &amp; &quot;C&quot;"},
        {"it's > 2", "it&#39;s &gt; 2"},
        {"\xc2\xb5s \xe2\x80\x94 ok", "\xc2\xb5s \xe2\x80\x94 ok"},     /* valid UTF-8 stays */
        {"bell\x07tab\t", "bell\xef\xbf\xbdtab\t"},                     /* XML forbids C0 controls */
        {"bad\xff\xc0\x80", "bad\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* not UTF-8, overlong */
        {"cut\xe2\x80", "cut\xef\xbf\xbd\xef\xbf\xbd"},                 /* a sequence cut short */
        {"sur\xed\xa0\x80", "sur\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* a surrogate */
        {"", ""},
    };
    for (size_t i = 0; i < KC_COUNT(cases); i++) {
        kc_buf b = {0};
        rep_esc(&b, cases[i].in);
        char *got = kc_buf_take(&b);
        assert_string_equal(cases[i].out, got);
        free(got);
    }
}

static void test_svg_mixed(void **state)
{
    (void)state;
    rng = seed;
    synth *s = mixed();
    write_ok(&s->r, path_of("mixed.svg"));
    char *text = facts(path_of("mixed.svg"));
    char *svgs = lines(text, "svg ");
    assert_int_equal(1, count_lines(svgs)); /* one document, nothing nested */
    free(svgs);
    check_mixed(&s->r, text);
    char *file = slurp(path_of("mixed.svg"));
    assert_true(strncmp(file, "<?xml", 5) == 0);
    ASSERT_CONTAINS(file, "kc tune report: rvc.kcb");
    ASSERT_CONTAINS(file, "llvmpipe (LLVM 15.0.6, 256 bits)");
    free(file);
    free(text);
    synth_free(s);
}

static void test_html_mixed(void **state)
{
    (void)state;
    rng = seed;
    synth *s = mixed();
    write_ok(&s->r, path_of("mixed.html"));
    char *text = facts(path_of("mixed.html"));
    check_mixed(&s->r, text);
    char *file = slurp(path_of("mixed.html"));
    ASSERT_CONTAINS(file, "<!DOCTYPE html>");
    ASSERT_CONTAINS(file, "<nav class=\"toc\">");
    for (int i = 0; i < s->r.nkernels; i++) { /* the contents link every kernel */
        char link[64];
        snprintf(link, sizeof link, "<a href=\"#k%d\">%s</a>", i, s->k[i].name);
        ASSERT_CONTAINS(file, link);
    }
    assert_null(strstr(file, "<script"));
    assert_null(strstr(file, "http://www.w3.org/1999/xlink")); /* nothing linked or fetched */
    assert_null(strstr(file, "href=\"http"));
    free(file);
    free(text);
    synth_free(s);
}

/* The best dot's tooltip and the summary name the best variant and time;
 * a winner the tuner names is marked even when it is not the fastest. */
static void test_best_marked(void **state)
{
    (void)state;
    static const char *const names[] = {"WG", "TM"};
    static const int nvalues[] = {4, 4};
    rng = seed + 1;
    synth *s = synth_new();
    kc_tune_report_kernel *k = add_kernel(s, "k", 2, names, nvalues, 2, (const int[]){16, 16}, 0.2);
    kc_tune_report_shape *sh = (kc_tune_report_shape *)&k->shapes[1];
    int second = -1; /* the second fastest ok point, named the winner */
    for (int i = 0; i < sh->npoints; i++)
        if (i != sh->best && strcmp(sh->points[i].status, "ok") == 0 &&
            (second < 0 || sh->points[i].time_ns < sh->points[second].time_ns))
            second = i;
    assert_true(second >= 0);
    sh->best = second;
    write_ok(&s->r, path_of("best.svg"));
    char *text = facts(path_of("best.svg"));
    char *e = expected_best(&s->r);
    assert_lines(text, "best ", e);
    free(e);
    kc_buf want = {0};
    for (int j = 0; j < 2; j++) {
        const kc_tune_report_point *b = &k->shapes[j].points[k->shapes[j].best];
        char t[32];
        rep_time(t, sizeof t, b->time_ns);
        kc_buf_printf(&want, "besttitle %d. %s: %s\n", j == 0 ? 1 : 2, b->variant, t);
        char summary[256];
        snprintf(summary, sizeof summary, "summary best %s at %s \xc2\xb7 default ", b->variant, t);
        ASSERT_CONTAINS(text, summary);
    }
    char *w = kc_buf_take(&want);
    assert_lines(text, "besttitle ", w);
    free(w);
    assert_lines(text, "map ", "map 4 4 16 1 WG TM\nmap 4 4 16 1 WG TM\n");
    free(text);
    synth_free(s);
}

static void test_escaping(void **state)
{
    (void)state;
    static const char *const names[] = {"W<G>", "T&M"};
    static const int nvalues[] = {3, 2};
    rng = seed + 2;
    synth *s = synth_new();
    s->r.title = "a&b<c>.kcb";
    s->r.device = "A<B & \"C\"";
    s->r.backend = "vulkan'); </svg><script>";
    kc_tune_report_kernel *k = add_kernel(s, "k<1>&'x'", 2, names, nvalues, 1, (const int[]){6}, 0);
    ((kc_tune_report_shape *)k->shapes)[0].shape = "n=<1&2>\x01\xff";
    for (const char *const *ext = (const char *const[]){"html", "svg", NULL}; *ext; ext++) {
        char name[32];
        snprintf(name, sizeof name, "hostile.%s", *ext);
        write_ok(&s->r, path_of(name));
        char *text = facts(path_of(name));               /* parses */
        ASSERT_CONTAINS(text, "map 3 2 6 1 W<G> T&M\n"); /* the parser decoded them */
        char *file = slurp(path_of(name));
        ASSERT_CONTAINS(file, "A&lt;B &amp; &quot;C&quot;");
        ASSERT_CONTAINS(file, "k&lt;1&gt;&amp;&#39;x&#39;");
        ASSERT_CONTAINS(file, "W&lt;G&gt;=1,T&amp;M=1");
        ASSERT_CONTAINS(file, "n=&lt;1&amp;2&gt;\xef\xbf\xbd\xef\xbf\xbd");
        assert_null(strstr(file, "A<B"));
        assert_null(strstr(file, "<script"));
        free(file);
        free(text);
    }
    synth_free(s);
}

/* ~2000 measured variants of eight tunables with up to 16 candidates: the
 * file stays small, every variant is a dot, the map is 16 x 16. */
static void test_big(void **state)
{
    (void)state;
    static const char *const names[] = {"WG", "TM", "TN", "VEC", "UNROLL", "LDS", "SPLIT", "PAD"};
    static const int nvalues[] = {8, 16, 4, 16, 8, 2, 4, 2};
    rng = seed + 3;
    synth *s = synth_new();
    add_kernel(s, "big", 8, names, nvalues, 2, (const int[]){2000, 1500}, 0.1);
    write_ok(&s->r, path_of("big.svg"));
    write_ok(&s->r, path_of("big.html"));
    for (const char *const *f = (const char *const[]){"big.svg", "big.html", NULL}; *f; f++) {
        char *text = facts(path_of(*f));
        char *e = expected_charts(&s->r);
        assert_lines(text, "chart ", e);
        free(e);
        /* TM and VEC tie at 16: TM is declared first */
        assert_lines(text, "map ", "map 16 16 256 1 TM VEC\nmap 16 16 256 1 TM VEC\n");
        for (const char *p = strstr(text, "svg "); p; p = strstr(p + 1, "\nsvg ")) {
            double w, h;
            assert_int_equal(2, sscanf(p + (*p == '\n') + 4, "%lf %lf", &w, &h));
            assert_true(w <= 1200 && h <= 5000);
        }
        struct stat st;
        assert_int_equal(0, stat(path_of(*f), &st));
        if (st.st_size > 2 * 1024 * 1024)
            fail_msg("%s is %ld bytes", *f, (long)st.st_size);
        free(text);
    }
    synth_free(s);
}

/* Named axes; a kernel without them falls back to its own default pair;
 * one named axis keeps the other default. */
static void test_axes(void **state)
{
    (void)state;
    static const char *const abc[] = {"a", "b", "c"}, *const ab[] = {"a", "b"}, *const x[] = {"x"};
    static const int abc_n[] = {2, 4, 3}, ab_n[] = {3, 5}, x_n[] = {3};
    rng = seed + 4;
    synth *s = synth_new();
    add_kernel(s, "k1", 3, abc, abc_n, 1, (const int[]){24}, 0);
    add_kernel(s, "k2", 2, ab, ab_n, 1, (const int[]){15}, 0);
    add_kernel(s, "k3", 1, x, x_n, 1, (const int[]){3}, 0);
    s->r.axis_x = "c", s->r.axis_y = "a";
    write_ok(&s->r, path_of("axes.svg"));
    char *text = facts(path_of("axes.svg"));
    assert_lines(text, "map ", "map 3 2 6 1 c a\nmap 5 3 15 1 b a\nmap 3 1 3 1 x -\n");
    free(text);
    s->r.axis_x = NULL, s->r.axis_y = "a";
    write_ok(&s->r, path_of("axes.svg"));
    text = facts(path_of("axes.svg"));
    assert_lines(text, "map ", "map 4 2 8 1 b a\nmap 5 3 15 1 b a\nmap 3 1 3 1 x -\n");
    free(text);
    s->r.axis_x = "x", s->r.axis_y = NULL; /* only k3 has it */
    write_ok(&s->r, path_of("axes.svg"));
    text = facts(path_of("axes.svg"));
    assert_lines(text, "map ", "map 4 3 12 1 b c\nmap 5 3 15 1 b a\nmap 3 1 3 1 x -\n");
    free(text);
    synth_free(s);
}

static void test_errors(void **state)
{
    (void)state;
    rng = seed;
    synth *s = mixed();
    char err[512];
    for (const char *const *p = (const char *const[]){"r.pdf", "report", "r.html.bak", "dir.svg/r", NULL}; *p;
         p++) {
        err[0] = 0;
        assert_false(kc_tune_report_write(&s->r, path_of(*p), err, sizeof err));
        ASSERT_CONTAINS(err, ".html");
        ASSERT_CONTAINS(err, ".svg");
        assert_false(exists(path_of(*p)));
    }
    s->r.axis_x = "NOPE";
    assert_false(kc_tune_report_write(&s->r, path_of("axis.html"), err, sizeof err));
    ASSERT_CONTAINS(err, "'NOPE'");
    assert_false(exists(path_of("axis.html")));
    s->r.axis_x = "WG", s->r.axis_y = "NOPE_Y";
    assert_false(kc_tune_report_write(&s->r, path_of("axis.svg"), err, sizeof err));
    ASSERT_CONTAINS(err, "'NOPE_Y'");
    assert_false(exists(path_of("axis.svg")));
    s->r.axis_y = "WG";
    assert_false(kc_tune_report_write(&s->r, path_of("axis.svg"), err, sizeof err));
    ASSERT_CONTAINS(err, "'WG'");
    assert_false(exists(path_of("axis.svg")));
    s->r.axis_x = s->r.axis_y = NULL;
    assert_false(kc_tune_report_write(&s->r, path_of("no/such/dir/r.html"), err, sizeof err));
    ASSERT_CONTAINS(err, "cannot write report");
    ASSERT_CONTAINS(err, strerror(ENOENT));
    synth_free(s);
}

/* The same report gives the same bytes, and the atomic write leaves no
 * temporary file beside it. */
static void test_stable_and_clean(void **state)
{
    (void)state;
    rng = seed;
    synth *s = mixed();
    write_ok(&s->r, path_of("again.html"));
    char *a = slurp(path_of("again.html"));
    write_ok(&s->r, path_of("again.html"));
    char *b = slurp(path_of("again.html"));
    assert_string_equal(a, b);
    free(a);
    free(b);
    DIR *d = opendir(dir);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));)
        if (strstr(e->d_name, ".tmp"))
            fail_msg("temporary file left: %s", e->d_name);
    closedir(d);
    synth_free(s);
}

/* Points the cache may hold but the space does not: a value that is not a
 * candidate (drawn in the chart, in no cell), a status this kc does not
 * know and an ok row without a time (both counted as other), and a
 * default that was never measured. */
static void test_odd_points(void **state)
{
    (void)state;
    static const char *const names[] = {"A", "B"};
    static const int nvalues[] = {2, 2};
    static const int64_t a[] = {1, 2}, b[] = {1, 2}, *const values[] = {a, b};
    static const int64_t v11[] = {1, 1}, v12[] = {1, 2}, v31[] = {3, 1}, v22[] = {2, 2}, v21[] = {2, 1};
    static const kc_tune_report_point pts[] = {
        {v11, "A=1,B=1", "ok", 100},       {v12, "A=1,B=2", "ok", 50}, {v31, "A=3,B=1", "ok", 10},
        {v22, "A=2,B=2", "exploded", NAN}, {v21, "A=2,B=1", "ok", 0},
    };
    static const kc_tune_report_shape shape = {"n=1", 5, pts, 2, -1};
    static const kc_tune_report_kernel k = {"odd", 2, names, nvalues, values, 1, &shape};
    kc_tune_report r = {"odd.kcb", "dev", "vulkan", 1, &k, NULL, NULL};
    write_ok(&r, path_of("odd.svg"));
    char *text = facts(path_of("odd.svg"));
    assert_lines(text, "chart ", "chart 3\n");
    assert_lines(text, "best ", "best \xe2\x97\x8f best: A=3,B=1 \xe2\x80\x94 10 ns\n");
    assert_lines(text, "default ", "default \xe2\x97\x8b default: not measured\n");
    assert_lines(
        text, "fail ",
        "fail compile_failed 0\nfail verify_failed 0\nfail timeout 0\nfail refused 0\nfail other 2\n");
    assert_lines(text, "map ", "map 2 2 4 1 A B\n");
    assert_lines(text, "cellkinds ", "cellkinds 2 2 0\n");
    ASSERT_CONTAINS(text,
                    "summary best A=3,B=1 at 10 ns \xc2\xb7 default not measured \xc2\xb7 5 measured (3 ok, "
                    "2 failed)\n");
    free(text);
}

/* No kernels, and a report with every text NULL: still a valid page. */
static void test_empty(void **state)
{
    (void)state;
    kc_tune_report r = {0};
    write_ok(&r, path_of("empty.html"));
    free(facts(path_of("empty.html")));
    write_ok(&r, path_of("empty.svg"));
    free(facts(path_of("empty.svg")));
}

static bool empty_dir(const char *path)
{
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        return false;
    DIR *d = opendir(path);
    if (!d)
        return false;
    for (struct dirent *e; (e = readdir(d));) {
        char file[512];
        snprintf(file, sizeof file, "%s/%s", path, e->d_name);
        if (e->d_name[0] != '.' || strstr(e->d_name, ".tmp"))
            unlink(file);
    }
    closedir(d);
    return true;
}

int main(void)
{
    if (access(PYTHON, X_OK) != 0) {
        printf("skipped: %s is needed to check the report's XML\n", PYTHON);
        return KC_TEST_SKIP;
    }
    const char *env = getenv("KC_TEST_SEED");
    if (env)
        seed = strtoull(env, NULL, 0);
    printf("seed %" PRIu64 " (KC_TEST_SEED to change)\n", seed);
    if (!empty_dir(dir)) {
        perror(dir);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time_words),
        cmocka_unit_test(test_log_axis),
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_svg_mixed),
        cmocka_unit_test(test_html_mixed),
        cmocka_unit_test(test_best_marked),
        cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_big),
        cmocka_unit_test(test_axes),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_stable_and_clean),
        cmocka_unit_test(test_odd_points),
        cmocka_unit_test(test_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
