/*
 * chart.c — time per variant for one shape: every ok configuration as a
 * dot, fastest left, on a log time axis, with the best and the default
 * marked, and a strip under it that counts the failures by status.
 *
 * Dots rather than bars, and a rank rather than a variant per x position:
 * a kernel may have thousands of variants, and the shape of the sorted
 * curve (how many variants are near the best, how far the default is from
 * it) is what the chart is for. Each dot's tooltip names its variant. The
 * labels of the best and default go in two lines above the plot, where a
 * long variant text cannot cover the data.
 */
#include "report_private.h"

#include <math.h>

enum {
    CHART_W = 800, /* the whole chart, px */
    ML = 76,       /* left of the plot: tick labels and the axis title */
    MR = 24,
    TOP = 46, /* above the plot: the best and default lines */
    PW = CHART_W - ML - MR,
    PH = 220,
    STRIP = 24,   /* the failures strip */
    MAX_LIST = 10 /* failed variants named in a strip tooltip */
};

static const char *const RED = "#d62728", *const BLUE = "#1f77b4";

typedef struct plot {
    rep_axis axis;
    int n; /* dots */
} plot;

static double px_x(const plot *p, int rank)
{
    return ML + (rank + 0.5) * PW / p->n;
}

static double px_y(const plot *p, double t)
{
    return TOP + PH * (1 - rep_axis_frac(&p->axis, t));
}

static double dot_radius(int n)
{
    return n <= 40 ? 4 : n <= 200 ? 3 : n <= 800 ? 2 : 1.4;
}

static int rank_of(const rep_shape *sh, int point)
{
    for (int r = 0; r < sh->nok; r++)
        if (sh->order[r] == point)
            return r;
    return -1;
}

/* ---- the two lines above the plot -------------------------------------- */

/* Writes a label line and returns where it ends, so that a long variant
 * widens the chart rather than running off it. */
static double label(kc_buf *o, const char *cls, int y, const char *colour, kc_buf *text)
{
    kc_buf_printf(o, "<text class=\"%s\" x=\"%d\" y=\"%d\" fill=\"%s\">", cls, ML, y, colour);
    rep_esc(o, text->data);
    kc_buf_puts(o, "</text>\n");
    double end = ML + rep_text_w(rep_text_len(text->data), 12);
    kc_buf_free(text);
    return end;
}

static double best_line(kc_buf *o, const rep_shape *sh)
{
    const kc_tune_report_point *b = &sh->s->points[sh->best];
    char t[32];
    rep_time(t, sizeof t, b->time_ns);
    kc_buf text = {0};
    kc_buf_printf(&text, "\xe2\x97\x8f best: %s \xe2\x80\x94 %s", rep_variant(b), t);
    return label(o, "best-label", 16, RED, &text);
}

static double default_line(kc_buf *o, const rep_shape *sh)
{
    kc_buf text = {0};
    kc_buf_puts(&text, "\xe2\x97\x8b default: ");
    const kc_tune_report_point *d = sh->def >= 0 ? &sh->s->points[sh->def] : NULL;
    if (!d) {
        kc_buf_puts(&text, "not measured");
    } else if (!rep_point_ok(d)) {
        kc_buf_printf(&text, "%s \xe2\x80\x94 %s", rep_variant(d), rep_fails[rep_fail_of(d)].name);
    } else {
        char t[32];
        rep_time(t, sizeof t, d->time_ns);
        kc_buf_printf(&text, "%s \xe2\x80\x94 %s", rep_variant(d), t);
        if (sh->best >= 0)
            kc_buf_printf(&text, " (%.2f\xc3\x97 the best)", d->time_ns / sh->s->points[sh->best].time_ns);
    }
    return label(o, "default-label", 34, BLUE, &text);
}

/* ---- the plot ------------------------------------------------------------ */

static void frame(kc_buf *o, const char *message)
{
    kc_buf_printf(o, "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>\n", ML, TOP, PW,
                  PH);
    if (message)
        kc_buf_printf(o, "<text class=\"note\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                      ML + PW / 2, TOP + PH / 2, message);
}

static void time_axis(kc_buf *o, const plot *p)
{
    char t[32];
    for (int i = 0; i < p->axis.nticks; i++) {
        double y = px_y(p, p->axis.ticks[i]);
        rep_time(t, sizeof t, p->axis.ticks[i]);
        kc_buf_printf(o, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>", ML, y, ML + PW,
                      y);
        kc_buf_printf(o, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", ML - 6, y + 4, t);
    }
    kc_buf_printf(o,
                  "<text x=\"14\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 14 %d)\">"
                  "time per launch (log)</text>\n",
                  TOP + PH / 2, TOP + PH / 2);
    kc_buf_printf(o, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%d ok variant%s, fastest first</text>\n",
                  ML + PW / 2, TOP + PH + 18, p->n, p->n == 1 ? "" : "s");
    kc_buf_printf(o, "<text class=\"small\" x=\"%d\" y=\"%d\">1</text>", ML, TOP + PH + 14);
    if (p->n > 1)
        kc_buf_printf(o, "<text class=\"small\" x=\"%d\" y=\"%d\" text-anchor=\"end\">%d</text>\n", ML + PW,
                      TOP + PH + 14, p->n);
}

static void dot_title(kc_buf *o, const kc_tune_report_point *pt, int rank)
{
    char t[32];
    rep_time(t, sizeof t, pt->time_ns);
    kc_buf_printf(o, "<title>%d. ", rank + 1);
    rep_esc(o, rep_variant(pt));
    kc_buf_printf(o, ": %s</title>", t);
}

static void dots(kc_buf *o, const rep_shape *sh, const plot *p)
{
    double r = dot_radius(p->n);
    kc_buf_puts(o, "<g class=\"points\">\n");
    for (int i = 0; i < p->n; i++) {
        const kc_tune_report_point *pt = &sh->s->points[sh->order[i]];
        kc_buf_printf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\">", px_x(p, i), px_y(p, pt->time_ns), r);
        dot_title(o, pt, i);
        kc_buf_puts(o, "</circle>\n");
    }
    kc_buf_puts(o, "</g>\n");
}

/* The default as a dashed line at its time (every dot under it beats the
 * default) and a ring; the best as a larger red dot, drawn last. */
static void marks(kc_buf *o, const rep_shape *sh, const plot *p)
{
    double r = dot_radius(p->n);
    int dr = sh->def >= 0 ? rank_of(sh, sh->def) : -1;
    if (dr >= 0) {
        const kc_tune_report_point *d = &sh->s->points[sh->def];
        double y = px_y(p, d->time_ns);
        kc_buf_printf(
            o, "<line class=\"default-line\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"/>\n",
            ML, y, ML + PW, y, BLUE);
        kc_buf_printf(o, "<circle class=\"default\" cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" stroke=\"%s\">",
                      px_x(p, dr), y, r + 3.5, BLUE);
        dot_title(o, d, dr);
        kc_buf_printf(o, "</circle><text class=\"small\" x=\"%.1f\" y=\"%.1f\" fill=\"%s\">default</text>\n",
                      px_x(p, dr) + r + 5, y + r + 12, BLUE);
    }
    int br = rank_of(sh, sh->best);
    const kc_tune_report_point *b = &sh->s->points[sh->best];
    double x = px_x(p, br), y = px_y(p, b->time_ns);
    kc_buf_printf(o, "<circle class=\"best\" cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\">", x, y, r + 2,
                  RED);
    dot_title(o, b, br);
    kc_buf_printf(o, "</circle><text class=\"small\" x=\"%.1f\" y=\"%.1f\" fill=\"%s\">best</text>\n",
                  x + r + 4, y - r - 4, RED);
}

/* ---- the failures strip -------------------------------------------------- */

static void fail_title(kc_buf *o, const rep_shape *sh, rep_fail f)
{
    kc_buf_printf(o, "<title>%s: %d", rep_fails[f].name, sh->nfail[f]);
    int listed = 0;
    for (int i = 0; i < sh->s->npoints && listed < MAX_LIST; i++) {
        const kc_tune_report_point *pt = &sh->s->points[i];
        if (rep_point_ok(pt) || rep_fail_of(pt) != f)
            continue;
        kc_buf_puts(o, listed++ ? "; " : " \xe2\x80\x94 ");
        rep_esc(o, rep_variant(pt));
    }
    if (sh->nfail[f] > listed)
        kc_buf_printf(o, "; \xe2\x80\xa6 and %d more", sh->nfail[f] - listed);
    kc_buf_puts(o, "</title>");
}

/* One item per status, the four the cache knows always (a zero says the
 * status was looked for), other only when it occurs. */
static void fail_strip(kc_buf *o, const rep_shape *sh, double y)
{
    double x = ML;
    kc_buf_printf(o, "<g class=\"failures\"><text x=\"%.1f\" y=\"%.1f\">failed %d:</text>\n", x, y + 12,
                  sh->nfailed);
    x += rep_text_w(12, 12);
    for (int f = 0; f < REP_NFAIL; f++) {
        if (f == REP_OTHER && sh->nfail[f] == 0)
            continue;
        kc_buf_printf(o, "<g class=\"fail\" data-status=\"%s\" data-count=\"%d\">", rep_fails[f].name,
                      sh->nfail[f]);
        fail_title(o, sh, (rep_fail)f);
        kc_buf_printf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/>", x, y + 3,
                      sh->nfail[f] ? "#9a9a9a" : "#ececec");
        char item[64];
        snprintf(item, sizeof item, "%s %d", rep_fails[f].name, sh->nfail[f]);
        kc_buf_printf(o, "<text x=\"%.1f\" y=\"%.1f\">%s</text></g>\n", x + 14, y + 12, item);
        x += 14 + rep_text_w(rep_text_len(item), 12) + 18;
    }
    kc_buf_puts(o, "</g>\n");
}

/* ---- the chart ------------------------------------------------------------ */

double rep_chart(rep_writer *w, const rep_shape *sh, double *width)
{
    kc_buf *o = &w->out;
    *width = CHART_W;
    if (sh->s->npoints == 0) {
        kc_buf_printf(o, "<rect class=\"frame\" x=\"%d\" y=\"4\" width=\"%d\" height=\"48\"/>", ML, PW);
        kc_buf_printf(
            o, "<text class=\"note\" x=\"%d\" y=\"33\" text-anchor=\"middle\">nothing measured</text>\n",
            ML + PW / 2);
        return 60;
    }
    double right = default_line(o, sh);
    if (sh->nok == 0) {
        frame(o, "no configuration ran successfully");
    } else {
        plot p = {.n = sh->nok};
        rep_log_axis(&p.axis, sh->lo, sh->hi);
        right = fmax(right, best_line(o, sh));
        frame(o, NULL);
        time_axis(o, &p);
        dots(o, sh, &p);
        marks(o, sh, &p);
    }
    fail_strip(o, sh, TOP + PH + 28);
    *width = fmax(CHART_W, right + 16);
    return TOP + PH + 28 + STRIP;
}
