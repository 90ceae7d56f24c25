/*
 * report_private.h — what the report's files share (kc_tune_report.h is
 * the interface).
 *
 *   report.c   checks, the choice of heat-map axes, the HTML page and the
 *              SVG document around the charts, the atomic write
 *   draw.c     escaping, times in words, log axes, the palette, the
 *              statistics of one shape that every chart reads
 *   chart.c    time per variant, the failures strip
 *   heatmap.c  the heat map over two tunables
 *
 * A chart draws itself at the origin into w->out and returns its size;
 * the document places it (its own <svg> in HTML, a translated <g> in the
 * standalone SVG). Everything is computed, nothing is random or timed, so
 * the same report gives the same bytes.
 */
#ifndef KC_REPORT_PRIVATE_H
#define KC_REPORT_PRIVATE_H

#include "kc_support.h"
#include "kc_tune_report.h"

/* Why a configuration has no time. The cache's status words; anything
 * else (a newer cache, a bad row, "ok" without a positive time) is
 * counted as other rather than dropped. */
typedef enum {
    REP_COMPILE_FAILED,
    REP_VERIFY_FAILED,
    REP_TIMEOUT,
    REP_REFUSED,
    REP_OTHER,
    REP_NFAIL
} rep_fail;

typedef struct rep_fail_info {
    const char *name; /* the cache's word */
    const char *code; /* two letters for a heat-map cell */
} rep_fail_info;

extern const rep_fail_info rep_fails[REP_NFAIL];

/* The writer: the text so far, an arena for everything temporary, and a
 * counter that keeps ids (the hatch patterns) unique in one HTML page. */
typedef struct rep_writer {
    kc_buf out;
    kc_arena arena;
    int nextid;
} rep_writer;

/* One shape of one kernel, as the charts see it. */
typedef struct rep_shape {
    const kc_tune_report_kernel *k;
    const kc_tune_report_shape *s;
    int nok, nfail[REP_NFAIL], nfailed;
    int *order;    /* the ok points, fastest first (ties: input order) */
    int best;      /* the winner: s->best when it is an ok point, else the fastest */
    int def;       /* s->default_point when in range, else -1 */
    double lo, hi; /* fastest and slowest ok time (ns) */
    int ax, ay;    /* heat-map tunables; ay -1: one row; ax -1: no map */
} rep_shape;

/* ---- draw.c -------------------------------------------------------------- */

/* Appends s escaped for XML text and attribute values. Bytes that are not
 * valid UTF-8 and control characters XML forbids become U+FFFD, so no
 * name from the cache can break the file. NULL writes nothing. */
void rep_esc(kc_buf *b, const char *s);
void rep_escn(kc_buf *b, const char *s, size_t len);
/* Characters s shows as (code points), to estimate text widths. */
int rep_text_len(const char *s);
/* Approximate width in px of n characters at font size px (sans-serif). */
double rep_text_w(int n, double px);

/* A time in ns in words, three significant digits at most and no trailing
 * zeros: "850 ns", "12.3 µs", "1 ms", "2.05 s". */
void rep_time(char *out, size_t n, double ns);

/* A log axis over [lo, hi] ns (lo > 0), padded a little, with at least
 * two nice ticks in it: decades over a wide range, 1-2-5 over a middle
 * one, 1-1.2-1.5-2-2.5-3-4-5-6-8 over a narrow one. */
enum { REP_MAX_TICKS = 32 };
typedef struct rep_axis {
    double lo, hi;
    int nticks;
    double ticks[REP_MAX_TICKS];
} rep_axis;

void rep_log_axis(rep_axis *a, double lo, double hi);
double rep_axis_frac(const rep_axis *a, double t); /* 0 at lo, 1 at hi */

/* Viridis at t in [0, 1] (dark purple to yellow) as "#rrggbb", and
 * whether text on it should be white. */
void rep_viridis(double t, char out[8]);
bool rep_viridis_dark(double t);

/* The ok test: status "ok" with a finite positive time. */
bool rep_point_ok(const kc_tune_report_point *p);
rep_fail rep_fail_of(const kc_tune_report_point *p);
/* The variant's text, or a word for a kernel without tunables. */
const char *rep_variant(const kc_tune_report_point *p);

void rep_shape_init(rep_shape *sh, rep_writer *w, const kc_tune_report_kernel *k,
                    const kc_tune_report_shape *s, int ax, int ay);
/* The one-line summary, unescaped. */
void rep_summary(kc_buf *b, const rep_shape *sh);

/* ---- chart.c, heatmap.c ------------------------------------------------- */

/* Each draws at the origin and returns its height; *width gets its width. */
double rep_chart(rep_writer *w, const rep_shape *sh, double *width);
double rep_heatmap(rep_writer *w, const rep_shape *sh, double *width);

#endif
