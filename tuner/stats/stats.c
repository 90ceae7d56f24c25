/*
 * stats.c — the statistics of kc run, kc bench and kc tune: quantiles,
 * the summary of a sample (median, quartiles, spread) and the Mann–Whitney
 * U test.
 *
 * Quantiles interpolate linearly between order statistics (Hyndman and
 * Fan's type 7, numpy's and R's default), so the values can be checked
 * with numpy.
 *
 * The U test follows scipy.stats.mannwhitneyu with method="asymptotic" and
 * use_continuity=True (what Google Benchmark's compare.py calls): ranks
 * with ties at their mean, the normal approximation with the variance
 * corrected for ties,
 *
 *     mu = nx ny / 2,
 *     sigma^2 = nx ny / 12 * ((n + 1) - sum(t^3 - t) / (n (n - 1))),
 *
 * and a continuity correction of 1/2 towards the mean. tests/tuner/bench holds
 * values computed with scipy for comparison.
 */
#include "kc_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void kc_stats_sort(double *x, int n)
{
    if (n > 1)
        qsort(x, (size_t)n, sizeof(double), cmp_double);
}

double kc_stats_quantile(const double *sorted, int n, double q)
{
    if (n <= 0)
        return NAN;
    double h = (n - 1) * q;
    int lo = (int)floor(h);
    if (lo >= n - 1)
        return sorted[n - 1];
    if (lo < 0)
        return sorted[0];
    return sorted[lo] + (h - lo) * (sorted[lo + 1] - sorted[lo]);
}

void kc_stats_summarize(const double *x, int n, kc_stats_summary *out)
{
    *out =
        (kc_stats_summary){.n = n, .median = NAN, .q1 = NAN, .q3 = NAN, .min = NAN, .max = NAN, .spread = NAN};
    if (n <= 0)
        return;
    double *s = malloc((size_t)n * sizeof(double));
    if (!s)
        return;
    memcpy(s, x, (size_t)n * sizeof(double));
    kc_stats_sort(s, n);
    out->min = s[0];
    out->max = s[n - 1];
    out->median = kc_stats_quantile(s, n, 0.5);
    out->q1 = kc_stats_quantile(s, n, 0.25);
    out->q3 = kc_stats_quantile(s, n, 0.75);
    out->spread = out->median > 0 ? (out->q3 - out->q1) / out->median : NAN;
    free(s);
}

/* P(Z > z) for a standard normal Z. */
static double normal_sf(double z)
{
    return 0.5 * erfc(z / sqrt(2.0));
}

typedef struct ranked {
    double v;
    int from_x;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
    return cmp_double(&((const ranked *)a)->v, &((const ranked *)b)->v);
}

/* The rank sum of x among x and y (ties at their mean rank) and the
 * tie term sum(t^3 - t) over groups of equal values. */
static bool rank_sum(const double *x, int nx, const double *y, int ny, double *rx, double *ties)
{
    int n = nx + ny;
    ranked *all = malloc((size_t)n * sizeof(ranked));
    if (!all)
        return false;
    for (int i = 0; i < nx; i++)
        all[i] = (ranked){x[i], 1};
    for (int i = 0; i < ny; i++)
        all[nx + i] = (ranked){y[i], 0};
    qsort(all, (size_t)n, sizeof(ranked), cmp_ranked);
    *rx = 0, *ties = 0;
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && all[j].v == all[i].v)
            j++;
        double t = j - i, mean_rank = (i + 1 + j) / 2.0; /* ranks i+1 .. j */
        for (int k = i; k < j; k++)
            if (all[k].from_x)
                *rx += mean_rank;
        *ties += t * t * t - t;
        i = j;
    }
    free(all);
    return true;
}

bool kc_stats_mann_whitney(const double *x, int nx, const double *y, int ny, kc_stats_mwu *out)
{
    *out = (kc_stats_mwu){.p_two_sided = 1, .p_greater = 1, .p_less = 1};
    if (nx < 1 || ny < 1)
        return false;
    for (int i = 0; i < nx; i++)
        if (isnan(x[i]))
            return false;
    for (int i = 0; i < ny; i++)
        if (isnan(y[i]))
            return false;
    double rx, ties;
    if (!rank_sum(x, nx, y, ny, &rx, &ties))
        return false;
    double n = nx + ny, mu = (double)nx * ny / 2;
    out->u_x = rx - (double)nx * (nx + 1) / 2;
    out->u_y = (double)nx * ny - out->u_x;
    double var = (double)nx * ny / 12 * ((n + 1) - ties / (n * (n - 1)));
    if (!(var > 0)) /* every value equal: no evidence either way */
        return true;
    double sigma = sqrt(var);
    out->z = (out->u_x - mu) / sigma;
    /* one-sided: x greater (large U_x), x less (large U_y); two-sided: the larger U */
    out->p_greater = fmin(1, normal_sf((out->u_x - mu - 0.5) / sigma));
    out->p_less = fmin(1, normal_sf((out->u_y - mu - 0.5) / sigma));
    double u = fmax(out->u_x, out->u_y);
    out->p_two_sided = fmin(1, 2 * normal_sf((u - mu - 0.5) / sigma));
    return true;
}
