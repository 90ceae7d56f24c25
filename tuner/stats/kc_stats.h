/*
 * kc_stats.h — the statistics kc run, kc bench and kc tune share: order
 * statistics of a sample (quantiles interpolated as numpy's default does,
 * the median, quartiles and spread) and the Mann–Whitney U test as scipy
 * computes it. stats.c says how.
 */
#ifndef KC_STATS_H
#define KC_STATS_H

#include <stdbool.h>

/* A sample's order statistics. spread = (q3 - q1) / median. */
typedef struct kc_stats_summary {
    int n;
    double median, q1, q3, min, max, spread;
} kc_stats_summary;

void kc_stats_sort(double *x, int n);
/* The q-quantile of sorted[0..n-1], interpolated linearly (numpy's default);
 * NaN when n is 0. */
double kc_stats_quantile(const double *sorted, int n, double q);
/* Fills out from x (left as it is); NaNs in out when n is 0. */
void kc_stats_summarize(const double *x, int n, kc_stats_summary *out);

/* The Mann–Whitney U test of x against y, normal approximation with tie
 * and continuity corrections (scipy's method="asymptotic"). */
typedef struct kc_stats_mwu {
    double u_x, u_y;  /* U of x (scipy's statistic) and of y; u_x + u_y = nx ny */
    double z;         /* (u_x - nx ny / 2) / sigma, without the continuity correction */
    double p_greater; /* one-sided: x tends to be greater than y */
    double p_less;    /* one-sided: x tends to be less */
    double p_two_sided;
} kc_stats_mwu;

/* False (with p-values of 1) when a sample is empty or holds a NaN. */
bool kc_stats_mann_whitney(const double *x, int nx, const double *y, int ny, kc_stats_mwu *out);

#endif
