/*
 * test_bench_stats.c — the statistics of tuner/stats (kc bench's, kc run's
 * and kc tune's) against values computed
 * independently: the Mann–Whitney U test and quantiles against scipy and
 * numpy (data/stats_cases.txt, written by mwu_reference.py), a few by
 * hand; then the verdicts (threshold, significance, direction) and the
 * roofline. No device needed.
 */
#include "kc_test.h"

#include <math.h>

#include "kc_bench.h"

#define CASES KC_SRC("tests/tuner/bench/data/stats_cases.txt")

/* |got - want| within 1e-9 relative (or 1e-12 absolute near 0). */
static void assert_close(double want, double got, const char *what, int line)
{
    if (!(fabs(got - want) <= 1e-9 * fabs(want) + 1e-12))
        fail_msg("%s (case at line %d): expected %.17g, got %.17g", what, line, want, got);
}

/* Parses "a b c" into x; returns the count. */
static int numbers(char *s, double *x, int max)
{
    int n = 0;
    for (char *tok = strtok(s, " \t\n"); tok && n < max; tok = strtok(NULL, " \t\n"))
        x[n++] = strtod(tok, NULL);
    return n;
}

typedef struct stats_case {
    char kind[16];
    double x[64], y[64], want[8];
    int nx, ny, nwant, line;
} stats_case;

/* Reads the next case; false at the end. */
static bool next_case(FILE *f, stats_case *c, int *line)
{
    char buf[8192];
    while (fgets(buf, sizeof(buf), f)) {
        ++*line;
        char *parts[4], *save = NULL;
        int n = 0;
        for (char *p = strtok_r(buf, "|", &save); p && n < 4; p = strtok_r(NULL, "|", &save))
            parts[n++] = p;
        if (n != 4)
            continue;
        memset(c, 0, sizeof(*c));
        sscanf(parts[0], "%15s", c->kind);
        c->nx = numbers(parts[1], c->x, 64);
        c->ny = numbers(parts[2], c->y, 64);
        c->nwant = numbers(parts[3], c->want, 8);
        c->line = *line;
        return true;
    }
    return false;
}

static void against_scipy(void **state)
{
    (void)state;
    FILE *f = fopen(CASES, "r");
    assert_non_null(f);
    stats_case c;
    int line = 0, nmwu = 0, nq = 0;
    while (next_case(f, &c, &line)) {
        if (strcmp(c.kind, "mwu") == 0) {
            kc_stats_mwu m;
            assert_true(kc_stats_mann_whitney(c.x, c.nx, c.y, c.ny, &m));
            assert_close(c.want[0], m.u_x, "U", c.line);
            assert_close((double)c.nx * c.ny - c.want[0], m.u_y, "U of y", c.line);
            assert_close(c.want[1], m.p_two_sided, "two-sided p", c.line);
            assert_close(c.want[2], m.p_greater, "p greater", c.line);
            assert_close(c.want[3], m.p_less, "p less", c.line);
            nmwu++;
        } else if (strcmp(c.kind, "quantiles") == 0) {
            kc_stats_summary s;
            kc_stats_summarize(c.x, c.nx, &s);
            assert_close(c.want[0], s.median, "median", c.line);
            assert_close(c.want[1], s.q1, "first quartile", c.line);
            assert_close(c.want[2], s.q3, "third quartile", c.line);
            assert_close((c.want[2] - c.want[1]) / c.want[0], s.spread, "spread", c.line);
            nq++;
        }
    }
    fclose(f);
    assert_true(nmwu >= 12);
    assert_true(nq >= 5);
}

/* Worked by hand: x = {1, 2, 3}, y = {4, 5, 6}. U_x = 0, mu = 4.5,
 * sigma^2 = 9/12 * 7 = 5.25 (no ties); one-sided (x greater):
 * z = (0 - 4.5 - 0.5) / sqrt(5.25) = -2.1822, p = 0.98545. With ties:
 * x = {1, 2}, y = {2, 3}: ranks 1, 2.5 | 2.5, 4; U_x = 3.5 - 3 = 0.5;
 * tie term 2^3 - 2 = 6, sigma^2 = 4/12 * (5 - 6/12) = 1.5. */
static void by_hand(void **state)
{
    (void)state;
    kc_stats_mwu m;
    double x[] = {1, 2, 3}, y[] = {4, 5, 6};
    assert_true(kc_stats_mann_whitney(x, 3, y, 3, &m));
    assert_close(0, m.u_x, "U", __LINE__);
    assert_close(0.5 * erfc(-2.1821789023599236 / sqrt(2)), m.p_greater, "p", __LINE__);
    double a[] = {1, 2}, b[] = {2, 3};
    assert_true(kc_stats_mann_whitney(a, 2, b, 2, &m));
    assert_close(0.5, m.u_x, "U with ties", __LINE__);
    assert_close((0.5 - 2) / sqrt(1.5), m.z, "z with ties", __LINE__);
    /* empty or NaN: no test, p = 1 */
    assert_false(kc_stats_mann_whitney(a, 0, b, 2, &m));
    assert_close(1, m.p_two_sided, "p of nothing", __LINE__);
    double nan[] = {1, NAN};
    assert_false(kc_stats_mann_whitney(nan, 2, b, 2, &m));
}

static void quantiles_and_summary(void **state)
{
    (void)state;
    double s[] = {1, 2, 3, 4};
    assert_close(2.5, kc_stats_quantile(s, 4, 0.5), "median", __LINE__);
    assert_close(1.75, kc_stats_quantile(s, 4, 0.25), "q1", __LINE__);
    assert_close(1, kc_stats_quantile(s, 4, 0), "min", __LINE__);
    assert_close(4, kc_stats_quantile(s, 4, 1), "max", __LINE__);
    assert_true(isnan(kc_stats_quantile(s, 0, 0.5)));
    double x[] = {10, 30, 20, 40, 1000}; /* an outlier moves neither the median nor the IQR much */
    kc_stats_summary st;
    kc_stats_summarize(x, 5, &st);
    assert_close(30, st.median, "median", __LINE__);
    assert_close(20, st.q1, "q1", __LINE__);
    assert_close(40, st.q3, "q3", __LINE__);
    assert_close(10, st.min, "min", __LINE__);
    assert_close(1000, st.max, "max", __LINE__);
    assert_close(20.0 / 30, st.spread, "spread", __LINE__);
    assert_close(30, x[1], "the input is left as it was", __LINE__);
    kc_stats_summarize(x, 0, &st);
    assert_true(isnan(st.median));
}

/* Ratio samples around m with a deterministic spread of +-s. */
static void samples(double *x, int n, double m, double s, unsigned seed)
{
    for (int i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        x[i] = m * (1 + s * ((double)(seed >> 16 & 0x7fff) / 0x7fff * 2 - 1));
    }
}

static void verdicts(void **state)
{
    (void)state;
    double base[20], now[20];
    kc_bench_check c;
    samples(base, 20, 1.0, 0.05, 1);
    /* the same distribution: unchanged */
    samples(now, 20, 1.0, 0.05, 2);
    kc_bench_judge(now, 20, base, 20, 0.10, 0.01, &c);
    assert_int_equal(KC_BENCH_UNCHANGED, c.verdict);
    assert_true(fabs(c.change) < 0.05);
    /* twice as slow: a regression, with near certainty */
    samples(now, 20, 2.0, 0.05, 3);
    kc_bench_judge(now, 20, base, 20, 0.10, 0.01, &c);
    assert_int_equal(KC_BENCH_REGRESSION, c.verdict);
    assert_true(c.change > 0.9 && c.change < 1.1);
    assert_true(c.p < 1e-6 && c.confidence > 0.999999);
    assert_int_equal(20, c.n_now);
    /* 5% slower, significant, but within a 10% threshold: unchanged */
    samples(now, 20, 1.05, 0.005, 4);
    samples(base, 20, 1.0, 0.005, 5);
    kc_bench_judge(now, 20, base, 20, 0.10, 0.01, &c);
    assert_int_equal(KC_BENCH_UNCHANGED, c.verdict);
    assert_true(c.p < 1e-6);
    /* 30% slower on the median, but so noisy that U cannot tell: noisy */
    double wild_now[] = {0.5, 1.3, 2.5, 0.6, 1.31, 2.4}, wild_base[] = {0.55, 1.0, 2.6, 0.58, 1.02, 2.45};
    kc_bench_judge(wild_now, 6, wild_base, 6, 0.10, 0.01, &c);
    assert_int_equal(KC_BENCH_NOISY, c.verdict);
    assert_true(c.change > 0.10 && c.p > 0.01);
    /* twice as fast: faster, with the p-value of that direction */
    samples(now, 20, 0.5, 0.05, 6);
    kc_bench_judge(now, 20, base, 20, 0.10, 0.01, &c);
    assert_int_equal(KC_BENCH_FASTER, c.verdict);
    assert_true(c.change < -0.4 && c.p < 1e-6);
    assert_string_equal("regression", kc_bench_verdict_name(KC_BENCH_REGRESSION));
    assert_string_equal("unchanged", kc_bench_verdict_name(KC_BENCH_UNCHANGED));
}

static void roofline(void **state)
{
    (void)state;
    kc_bench_peaks p = {.known = true, .gb_per_s = 100, .gflop_per_s = 1000};
    const char *bound;
    /* 1e6 bytes, 1e6 flops in 20 us: intensity 1 flop/byte, attainable
     * min(1000, 1 * 100) = 100 GFLOP/s; achieved 50: half, memory-bound */
    assert_close(0.5, kc_bench_roofline(&p, 1e6, 1e6, 20e3, &bound), "memory-bound", __LINE__);
    assert_string_equal("memory", bound);
    /* intensity 100: attainable 1000; 1e8 flops in 1 ms = 100 GFLOP/s: 10% */
    assert_close(0.1, kc_bench_roofline(&p, 1e6, 1e8, 1e6, &bound), "compute-bound", __LINE__);
    assert_string_equal("compute", bound);
    /* bytes only: the bandwidth's share */
    assert_close(0.25, kc_bench_roofline(&p, 25e3, -1, 1e3, &bound), "bytes only", __LINE__);
    p.known = false;
    assert_true(kc_bench_roofline(&p, 1e6, 1e6, 1e3, &bound) < 0);
    assert_null(bound);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(against_scipy), cmocka_unit_test(by_hand),  cmocka_unit_test(quantiles_and_summary),
        cmocka_unit_test(verdicts),      cmocka_unit_test(roofline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
