/*
 * draw.c — the small pieces every chart of the report uses: escaping,
 * times in words, log axes, the viridis palette, and the statistics of
 * one shape (its ok points in time order, failures by status, the best
 * and default points).
 */
#include "report_private.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const rep_fail_info rep_fails[REP_NFAIL] = {
    [REP_COMPILE_FAILED] = {"compile_failed", "CF"},
    [REP_VERIFY_FAILED] = {"verify_failed", "VF"},
    [REP_TIMEOUT] = {"timeout", "TO"},
    [REP_REFUSED] = {"refused", "RF"},
    [REP_OTHER] = {"other", "?"},
};

/* ---- text -------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (left bytes remain) that XML
 * 1.0 allows as a character, or 0. Strict: no overlong forms, surrogates,
 * U+FFFE/U+FFFF, and no C0 controls but tab, newline and carriage return. */
static int xml_char_len(const unsigned char *s, size_t left)
{
    unsigned c = s[0];
    if (c < 0x80)
        return c >= 0x20 || c == '\t' || c == '\n' || c == '\r';
    int n;
    unsigned cp;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, cp = c & 0x07;
    else
        return 0;
    if ((size_t)n > left)
        return 0;
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    if ((cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
        return 0;
    return n;
}

void rep_escn(kc_buf *b, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    while (p < end) {
        switch (*p) {
        case '<': kc_buf_puts(b, "&lt;"), p++; continue;
        case '>': kc_buf_puts(b, "&gt;"), p++; continue;
        case '&': kc_buf_puts(b, "&amp;"), p++; continue;
        case '"': kc_buf_puts(b, "&quot;"), p++; continue;
        case '\'': kc_buf_puts(b, "&#39;"), p++; continue;
        default: break;
        }
        int n = xml_char_len(p, (size_t)(end - p));
        if (n == 0) {
            kc_buf_puts(b, "\xef\xbf\xbd"); /* U+FFFD, one per bad byte */
            p++;
            continue;
        }
        kc_buf_append(b, p, (size_t)n);
        p += n;
    }
}

void rep_esc(kc_buf *b, const char *s)
{
    if (s)
        rep_escn(b, s, strlen(s));
}

int rep_text_len(const char *s)
{
    int n = 0;
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++)
        n += (*p & 0xc0) != 0x80;
    return n;
}

double rep_text_w(int n, double px)
{
    return n * px * 0.6; /* an average sans-serif glyph, digits included */
}

/* ---- times ------------------------------------------------------------- */

static void trim_zeros(char *s)
{
    char *dot = strchr(s, '.');
    if (!dot)
        return;
    char *end = s + strlen(s);
    while (end > dot + 1 && end[-1] == '0')
        end--;
    if (end == dot + 1)
        end = dot;
    *end = 0;
}

void rep_time(char *out, size_t n, double ns)
{
    static const struct {
        double scale;
        const char *unit;
    } units[] = {{1, "ns"}, {1e3, "\xc2\xb5s"}, {1e6, "ms"}, {1e9, "s"}};
    int u = (int)KC_COUNT(units) - 1;
    /* 999.96 ns prints as 1 µs, not 1000 ns: compare after rounding */
    while (u > 0 && ns < units[u].scale * 0.9995)
        u--;
    double v = ns / units[u].scale;
    int decimals = v < 9.995 ? 2 : v < 99.95 ? 1 : 0;
    char num[32];
    snprintf(num, sizeof num, "%.*f", decimals, v);
    trim_zeros(num);
    snprintf(out, n, "%s %s", num, units[u].unit);
}

/* ---- log axes ---------------------------------------------------------- */

/* Tick mantissas, coarse to fine. */
static const double decade[] = {1};
static const double one_two_five[] = {1, 2, 5};
static const double fine[] = {1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8};

static bool keep_decade(int d, int step)
{
    return ((d % step) + step) % step == 0;
}

/* The ticks m * 10^d in [lo, hi], ascending, decades a multiple of step. */
static int ticks_in(const double *m, int nm, int step, double lo, double hi, double *out)
{
    int n = 0;
    for (int d = (int)floor(log10(lo)) - 1; d <= (int)ceil(log10(hi)); d++)
        for (int j = 0; j < nm && keep_decade(d, step); j++) {
            double t = m[j] * pow(10, d);
            if (t >= lo * (1 - 1e-9) && t <= hi * (1 + 1e-9) && n < REP_MAX_TICKS)
                out[n++] = t;
        }
    return n;
}

/* The tick around x on the fine grid: the last at or below it (up) or the
 * first at or above it. */
static double fine_tick(double x, bool up)
{
    double ticks[REP_MAX_TICKS];
    double d = pow(10, floor(log10(x)));
    int n = ticks_in(fine, (int)KC_COUNT(fine), 1, d, d * 10, ticks);
    for (int i = 0; i < n; i++)
        if (up ? ticks[n - 1 - i] <= x : ticks[i] >= x)
            return up ? ticks[n - 1 - i] : ticks[i];
    return up ? d : d * 10;
}

/* The axis is the data's range padded a little, so that it uses the
 * plot's height; the ticks are the coarsest set that puts at least three
 * in it. A range too narrow even for the fine set is widened to the fine
 * ticks around it. */
void rep_log_axis(rep_axis *a, double lo, double hi)
{
    assert(lo > 0 && hi >= lo);
    double pad = pow(10, 0.05 * log10(hi / lo) + 0.015); /* a dot's radius clear of the frame */
    a->lo = lo / pad;
    a->hi = hi * pad;
    double span = log10(a->hi / a->lo);
    int step = span > 7 ? (int)ceil(span / 7) : 1;
    a->nticks = ticks_in(decade, 1, step, a->lo, a->hi, a->ticks);
    if (a->nticks < 3)
        a->nticks = ticks_in(one_two_five, 3, 1, a->lo, a->hi, a->ticks);
    if (a->nticks < 3)
        a->nticks = ticks_in(fine, (int)KC_COUNT(fine), 1, a->lo, a->hi, a->ticks);
    if (a->nticks < 2) {
        a->lo = fine_tick(a->lo, true);
        a->hi = fine_tick(a->hi, false);
        a->nticks = ticks_in(fine, (int)KC_COUNT(fine), 1, a->lo, a->hi, a->ticks);
    }
    assert(a->nticks >= 2);
}

double rep_axis_frac(const rep_axis *a, double t)
{
    double f = log(t / a->lo) / log(a->hi / a->lo);
    return f < 0 ? 0 : f > 1 ? 1 : f;
}

/* ---- palette ----------------------------------------------------------- */

/* Viridis (van der Walt and Smith, matplotlib's default map) at ten even
 * stops, as viridisLite::viridis(10) lists it; between stops it is
 * interpolated in sRGB, which is close enough at this spacing to keep it
 * perceptually even and readable in grey and by colour-blind readers. */
static const unsigned char viridis[10][3] = {
    {0x44, 0x01, 0x54}, {0x48, 0x28, 0x78}, {0x3e, 0x4a, 0x89}, {0x31, 0x68, 0x8e}, {0x26, 0x82, 0x8e},
    {0x1f, 0x9e, 0x89}, {0x35, 0xb7, 0x79}, {0x6d, 0xcd, 0x59}, {0xb4, 0xde, 0x2c}, {0xfd, 0xe7, 0x25},
};

void rep_viridis(double t, char out[8])
{
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    double x = t * 9;
    int i = x >= 9 ? 8 : (int)x;
    double f = x - i;
    int rgb[3];
    for (int c = 0; c < 3; c++)
        rgb[c] = (int)lround(viridis[i][c] + (viridis[i + 1][c] - viridis[i][c]) * f);
    snprintf(out, 8, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

bool rep_viridis_dark(double t)
{
    return t < 0.55; /* up to the teal-green, white text reads better */
}

/* ---- one shape --------------------------------------------------------- */

bool rep_point_ok(const kc_tune_report_point *p)
{
    return p->status && strcmp(p->status, "ok") == 0 && isfinite(p->time_ns) && p->time_ns > 0;
}

rep_fail rep_fail_of(const kc_tune_report_point *p)
{
    for (int f = 0; f < REP_OTHER; f++)
        if (p->status && strcmp(p->status, rep_fails[f].name) == 0)
            return (rep_fail)f;
    return REP_OTHER;
}

const char *rep_variant(const kc_tune_report_point *p)
{
    return p->variant && *p->variant ? p->variant : "(no tunables)";
}

typedef struct timed {
    double t;
    int i;
} timed;

static int by_time(const void *a, const void *b)
{
    const timed *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

static void sort_ok(rep_shape *sh, rep_writer *w)
{
    const kc_tune_report_shape *s = sh->s;
    timed *v = kc_arena_alloc(&w->arena, sizeof(timed) * (size_t)(sh->nok + 1));
    int n = 0;
    for (int i = 0; i < s->npoints; i++)
        if (rep_point_ok(&s->points[i]))
            v[n++] = (timed){s->points[i].time_ns, i};
    qsort(v, (size_t)n, sizeof(timed), by_time);
    sh->order = kc_arena_alloc(&w->arena, sizeof(int) * (size_t)(n + 1));
    for (int i = 0; i < n; i++)
        sh->order[i] = v[i].i;
    if (n > 0)
        sh->lo = v[0].t, sh->hi = v[n - 1].t;
}

void rep_shape_init(rep_shape *sh, rep_writer *w, const kc_tune_report_kernel *k,
                    const kc_tune_report_shape *s, int ax, int ay)
{
    memset(sh, 0, sizeof *sh);
    sh->k = k, sh->s = s, sh->ax = ax, sh->ay = ay;
    assert(s->npoints == 0 || s->points);
    for (int i = 0; i < s->npoints; i++) {
        if (rep_point_ok(&s->points[i])) {
            sh->nok++;
        } else {
            sh->nfail[rep_fail_of(&s->points[i])]++;
            sh->nfailed++;
        }
    }
    sort_ok(sh, w);
    /* The tuner names the winner; trust it only when it is an ok point,
     * else the fastest ok point is the best there is. */
    bool given = s->best >= 0 && s->best < s->npoints && rep_point_ok(&s->points[s->best]);
    sh->best = given ? s->best : sh->nok > 0 ? sh->order[0] : -1;
    sh->def = s->default_point >= 0 && s->default_point < s->npoints ? s->default_point : -1;
}

void rep_summary(kc_buf *b, const rep_shape *sh)
{
    const kc_tune_report_point *pts = sh->s->points;
    char t[32];
    if (sh->s->npoints == 0) {
        kc_buf_puts(b, "nothing measured");
        return;
    }
    if (sh->best >= 0) {
        rep_time(t, sizeof t, pts[sh->best].time_ns);
        kc_buf_printf(b, "best %s at %s", rep_variant(&pts[sh->best]), t);
    } else {
        kc_buf_puts(b, "no configuration ran successfully");
    }
    if (sh->def < 0) {
        kc_buf_puts(b, " \xc2\xb7 default not measured");
    } else if (!rep_point_ok(&pts[sh->def])) {
        kc_buf_printf(b, " \xc2\xb7 default %s", rep_fails[rep_fail_of(&pts[sh->def])].name);
    } else {
        rep_time(t, sizeof t, pts[sh->def].time_ns);
        kc_buf_printf(b, " \xc2\xb7 default %s", t);
        if (sh->best >= 0)
            kc_buf_printf(b, " \xc2\xb7 %.2f\xc3\x97 over default",
                          pts[sh->def].time_ns / pts[sh->best].time_ns);
    }
    kc_buf_printf(b, " \xc2\xb7 %d measured (%d ok, %d failed)", sh->s->npoints, sh->nok, sh->nfailed);
}
