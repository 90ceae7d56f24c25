/*
 * heatmap.c — one shape's times over two tunables. Each cell is the best
 * ok time over all the other tunables for its (x, y) pair: the question
 * it answers is "with these two fixed, how fast can the kernel be?",
 * which is what a person choosing defaults or pruning a space asks.
 *
 * Colours are viridis on a log scale from the fastest cell (yellow) to
 * the slowest (dark purple), snapped to the same ticks as the legend, so
 * the legend reads exactly. A cell with no ok time is hatched (every
 * configuration in it failed; its code says the most common status) or
 * plain grey (nothing in it was measured). Sizes are bounded: cells
 * shrink as candidates grow, down to a minimum that keeps them hoverable.
 */
#include "report_private.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

enum { BAR_W = 240, BAR_STEPS = 48, MAX_GRID_W = 640, MAX_GRID_H = 320 };

static const char *const RED = "#d62728";

typedef struct cell {
    double best; /* INFINITY until an ok point lands here */
    int bestpt;  /* that point, -1 */
    int nok, nfailed;
    int nfail[REP_NFAIL];
} cell;

typedef struct map {
    int nx, ny;
    cell *cells; /* row-major, [y * nx + x], y = 0 the first candidate */
    int best;    /* index of the outlined cell, -1 */
    bool any_ok;
    rep_axis axis;
    double cw, ch;    /* cell size */
    double left, top; /* where the grid starts */
    double xlab_h;    /* height of the x labels */
    bool rotate;      /* x labels at -45 degrees */
    int hatch;        /* the pattern's id number */
} map;

static double clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static int candidate(const kc_tune_report_kernel *k, int d, int64_t v)
{
    for (int i = 0; i < k->nvalues[d]; i++)
        if (k->values[d][i] == v)
            return i;
    return -1;
}

/* The cell of a point, or -1 when its values are missing or not among
 * the candidates (a cache row from an older space). */
static int cell_of(const rep_shape *sh, const map *m, const kc_tune_report_point *p)
{
    if (!p->values)
        return -1;
    int x = candidate(sh->k, sh->ax, p->values[sh->ax]);
    int y = sh->ay >= 0 ? candidate(sh->k, sh->ay, p->values[sh->ay]) : 0;
    return x < 0 || y < 0 ? -1 : y * m->nx + x;
}

static void fill(map *m, const rep_shape *sh, rep_writer *w)
{
    m->nx = sh->k->nvalues[sh->ax];
    m->ny = sh->ay >= 0 ? sh->k->nvalues[sh->ay] : 1;
    m->cells = kc_arena_alloc(&w->arena, sizeof(cell) * (size_t)(m->nx * m->ny));
    for (int i = 0; i < m->nx * m->ny; i++)
        m->cells[i] = (cell){.best = INFINITY, .bestpt = -1};
    for (int i = 0; i < sh->s->npoints; i++) {
        const kc_tune_report_point *p = &sh->s->points[i];
        int c = cell_of(sh, m, p);
        if (c < 0)
            continue;
        cell *e = &m->cells[c];
        if (!rep_point_ok(p)) {
            e->nfail[rep_fail_of(p)]++, e->nfailed++;
            continue;
        }
        e->nok++;
        if (p->time_ns < e->best)
            e->best = p->time_ns, e->bestpt = i;
    }
}

/* The outlined cell holds the report's best point; when that point has no
 * cell, the fastest cell. */
static void find_best(map *m, const rep_shape *sh)
{
    double lo = INFINITY, hi = 0;
    m->best = sh->best >= 0 ? cell_of(sh, m, &sh->s->points[sh->best]) : -1;
    int fastest = -1;
    for (int i = 0; i < m->nx * m->ny; i++) {
        if (m->cells[i].nok == 0)
            continue;
        if (m->cells[i].best < lo)
            lo = m->cells[i].best, fastest = i;
        hi = fmax(hi, m->cells[i].best);
    }
    if (m->best < 0 || m->cells[m->best].nok == 0)
        m->best = fastest;
    m->any_ok = fastest >= 0;
    if (m->any_ok)
        rep_log_axis(&m->axis, lo, hi);
}

static int widest_value(const kc_tune_report_kernel *k, int d)
{
    int n = 0;
    for (int i = 0; d >= 0 && i < k->nvalues[d]; i++) {
        char v[32];
        snprintf(v, sizeof v, "%" PRId64, k->values[d][i]);
        n = n > (int)strlen(v) ? n : (int)strlen(v);
    }
    return n;
}

static void layout(map *m, const rep_shape *sh)
{
    m->cw = clamp((double)MAX_GRID_W / m->nx, 14, 60);
    m->ch = sh->ay < 0 ? 30 : clamp((double)MAX_GRID_H / m->ny, 14, 30);
    double ylab = sh->ay >= 0 ? rep_text_w(widest_value(sh->k, sh->ay), 11) + 8 : 0;
    double ytitle = sh->ay >= 0 ? 22 : 0;
    m->left = fmax(76, ylab + ytitle + 8); /* lines up with the chart's plot */
    m->top = 28;
    double xw = rep_text_w(widest_value(sh->k, sh->ax), 11);
    m->rotate = xw > m->cw - 4;
    m->xlab_h = m->rotate ? xw * 0.71 + 14 : 16;
}

/* ---- cells --------------------------------------------------------------- */

static void cell_name(kc_buf *o, const rep_shape *sh, int x, int y)
{
    rep_esc(o, sh->k->tunables[sh->ax]);
    kc_buf_printf(o, "=%" PRId64, sh->k->values[sh->ax][x]);
    if (sh->ay >= 0) {
        kc_buf_puts(o, ", ");
        rep_esc(o, sh->k->tunables[sh->ay]);
        kc_buf_printf(o, "=%" PRId64, sh->k->values[sh->ay][y]);
    }
}

static rep_fail commonest(const cell *e)
{
    int f = 0;
    for (int i = 1; i < REP_NFAIL; i++)
        if (e->nfail[i] > e->nfail[f])
            f = i;
    return (rep_fail)f;
}

/* The reason a cell has no time, or what its time is, for its tooltip. */
static void cell_title(kc_buf *o, const rep_shape *sh, const cell *e, int x, int y)
{
    kc_buf_puts(o, "<title>");
    cell_name(o, sh, x, y);
    if (e->nok > 0) {
        char t[32];
        rep_time(t, sizeof t, e->best);
        kc_buf_printf(o, ": %s \xe2\x80\x94 best of %d ok: ", t, e->nok);
        rep_esc(o, rep_variant(&sh->s->points[e->bestpt]));
    } else if (e->nfailed > 0) {
        kc_buf_puts(o, ": no ok run \xe2\x80\x94");
    } else {
        kc_buf_puts(o, ": not measured");
    }
    const char *sep = e->nok > 0 ? "; failed: " : " failed: ";
    for (int f = 0; f < REP_NFAIL; f++)
        if (e->nfail[f]) {
            kc_buf_printf(o, "%s%s %d", sep, rep_fails[f].name, e->nfail[f]);
            sep = ", ";
        }
    kc_buf_puts(o, "</title>");
}

static void draw_cell(kc_buf *o, const rep_shape *sh, const map *m, int x, int y)
{
    const cell *e = &m->cells[y * m->nx + x];
    double px = m->left + x * m->cw,
           py = m->top + (m->ny - 1 - y) * m->ch; /* first candidate at the bottom */
    double t = e->nok ? 1 - rep_axis_frac(&m->axis, e->best) : 0;
    char colour[8], fillv[32];
    rep_viridis(t, colour);
    if (e->nok)
        snprintf(fillv, sizeof fillv, "%s", colour);
    else if (e->nfailed)
        snprintf(fillv, sizeof fillv, "url(#kc-hatch-%d)", m->hatch);
    else
        snprintf(fillv, sizeof fillv, "#e6e6e6");
    kc_buf_printf(o,
                  "<rect class=\"cell %s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">",
                  e->nok       ? "ok"
                  : e->nfailed ? "failed"
                               : "none",
                  px, py, m->cw, m->ch, fillv);
    cell_title(o, sh, e, x, y);
    kc_buf_puts(o, "</rect>");
    double cx = px + m->cw / 2, cy = py + m->ch / 2 + 3.5;
    if (e->nok && m->cw >= 44 && m->ch >= 16) {
        char tv[32];
        rep_time(tv, sizeof tv, e->best);
        kc_buf_printf(o, "<text class=\"v\" x=\"%.1f\" y=\"%.1f\" fill=\"%s\">%s</text>", cx, cy,
                      rep_viridis_dark(t) ? "#fff" : "#000", tv);
    } else if (!e->nok && e->nfailed && m->cw >= 18 && m->ch >= 14) {
        kc_buf_printf(o, "<text class=\"v\" x=\"%.1f\" y=\"%.1f\">%s</text>", cx, cy,
                      rep_fails[commonest(e)].code);
    }
    kc_buf_putc(o, '\n');
}

static void outline_best(kc_buf *o, const map *m)
{
    if (m->best < 0)
        return;
    int x = m->best % m->nx, y = m->best / m->nx;
    kc_buf_printf(
        o,
        "<rect class=\"best-cell\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
        "stroke=\"%s\" stroke-width=\"3\"/>\n",
        m->left + x * m->cw, m->top + (m->ny - 1 - y) * m->ch, m->cw, m->ch, RED);
}

/* ---- axes and legend -------------------------------------------------------- */

static void axes(kc_buf *o, const rep_shape *sh, const map *m)
{
    double bottom = m->top + m->ny * m->ch;
    for (int x = 0; x < m->nx; x++) {
        double cx = m->left + (x + 0.5) * m->cw, y = bottom + 14;
        if (m->rotate)
            kc_buf_printf(o,
                          "<text class=\"small\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
                          "transform=\"rotate(-45 %.1f %.1f)\">%" PRId64 "</text>",
                          cx + 3, y - 4, cx + 3, y - 4, sh->k->values[sh->ax][x]);
        else
            kc_buf_printf(
                o, "<text class=\"small\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%" PRId64 "</text>",
                cx, y, sh->k->values[sh->ax][x]);
    }
    kc_buf_printf(o, "\n<text class=\"axis-title\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
                  m->left + m->nx * m->cw / 2, bottom + m->xlab_h + 12);
    rep_esc(o, sh->k->tunables[sh->ax]);
    kc_buf_puts(o, "</text>\n");
    if (sh->ay < 0)
        return;
    for (int y = 0; y < m->ny; y++)
        kc_buf_printf(o, "<text class=\"small\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%" PRId64 "</text>",
                      m->left - 5, m->top + (m->ny - 1 - y + 0.5) * m->ch + 4, sh->k->values[sh->ay][y]);
    double my = m->top + m->ny * m->ch / 2;
    kc_buf_printf(o,
                  "\n<text class=\"axis-title\" x=\"14\" y=\"%.1f\" text-anchor=\"middle\" "
                  "transform=\"rotate(-90 14 %.1f)\">",
                  my, my);
    rep_esc(o, sh->k->tunables[sh->ay]);
    kc_buf_puts(o, "</text>\n");
}

/* The colour bar, its time ticks (labels that would overlap are left
 * out, the ends always kept), then the keys for the cells without time. */
static double legend(kc_buf *o, const map *m, double x0, double y)
{
    if (m->any_ok) {
        kc_buf_printf(o, "<text x=\"%.1f\" y=\"%.1f\">best time, fast \xe2\x86\x92 slow</text>\n", x0,
                      y + 10);
        kc_buf_puts(o, "<g class=\"colour-bar\">");
        for (int i = 0; i < BAR_STEPS; i++) {
            char c[8];
            rep_viridis(1 - (i + 0.5) / BAR_STEPS, c);
            kc_buf_printf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"12\" fill=\"%s\"/>",
                          x0 + i * (double)BAR_W / BAR_STEPS, y + 16, (double)BAR_W / BAR_STEPS + 0.3, c);
        }
        kc_buf_puts(o, "</g>\n");
        double last = -1e9;
        for (int i = 0; i < m->axis.nticks; i++) {
            char t[32];
            rep_time(t, sizeof t, m->axis.ticks[i]);
            double x = x0 + BAR_W * rep_axis_frac(&m->axis, m->axis.ticks[i]);
            double half = rep_text_w(rep_text_len(t), 10) / 2;
            bool end = i == m->axis.nticks - 1;
            if (x - half < last + 4 && !end)
                continue;
            kc_buf_printf(o, "<line class=\"tick\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x,
                          y + 28, x, y + 32);
            kc_buf_printf(o, "<text class=\"small\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                          x, y + 42, t);
            last = x + half;
        }
        y += 52;
    }
    kc_buf_printf(o,
                  "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"url(#kc-hatch-%d)\"/>"
                  "<text x=\"%.1f\" y=\"%.1f\">no ok run (CF compile_failed, VF verify_failed, TO timeout, "
                  "RF refused, ? other)</text>\n",
                  x0, y, m->hatch, x0 + 18, y + 10);
    kc_buf_printf(o,
                  "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"#e6e6e6\"/>"
                  "<text x=\"%.1f\" y=\"%.1f\">not measured</text>"
                  "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"none\" stroke=\"%s\" "
                  "stroke-width=\"2\"/><text x=\"%.1f\" y=\"%.1f\">best</text>\n",
                  x0, y + 18, x0 + 18, y + 28, x0 + 130, y + 18, RED, x0 + 148, y + 28);
    return y + 36;
}

static void title(kc_buf *o, const rep_shape *sh)
{
    kc_buf_puts(o, "<text class=\"map-title\" x=\"76\" y=\"16\">best time per ");
    rep_esc(o, sh->k->tunables[sh->ax]);
    if (sh->ay >= 0) {
        kc_buf_puts(o, " \xc3\x97 ");
        rep_esc(o, sh->k->tunables[sh->ay]);
    }
    int others = sh->k->ntunables - 1 - (sh->ay >= 0);
    kc_buf_puts(o, others > 0 ? ", over the other tunables</text>\n" : "</text>\n");
}

static void hatch_pattern(kc_buf *o, int id)
{
    kc_buf_printf(
        o,
        "<defs><pattern id=\"kc-hatch-%d\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
        "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#d9d9d9\"/>"
        "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#8c8c8c\" stroke-width=\"2\"/>"
        "</pattern></defs>\n",
        id);
}

double rep_heatmap(rep_writer *w, const rep_shape *sh, double *width)
{
    assert(sh->ax >= 0 && sh->ax < sh->k->ntunables && sh->ay < sh->k->ntunables && sh->ax != sh->ay);
    kc_buf *o = &w->out;
    map m = {.hatch = w->nextid++};
    fill(&m, sh, w);
    find_best(&m, sh);
    layout(&m, sh);
    hatch_pattern(o, m.hatch);
    kc_buf_printf(o, "<g class=\"heatmap\" data-nx=\"%d\" data-ny=\"%d\" data-x=\"", m.nx, m.ny);
    rep_esc(o, sh->k->tunables[sh->ax]);
    kc_buf_puts(o, "\" data-y=\"");
    rep_esc(o, sh->ay >= 0 ? sh->k->tunables[sh->ay] : "");
    kc_buf_puts(o, "\">\n");
    title(o, sh);
    for (int y = 0; y < m.ny; y++)
        for (int x = 0; x < m.nx; x++)
            draw_cell(o, sh, &m, x, y);
    outline_best(o, &m);
    axes(o, sh, &m);
    double h = legend(o, &m, m.left, m.top + m.ny * m.ch + m.xlab_h + 24);
    kc_buf_puts(o, "</g>\n");
    *width = fmax(800, m.left + m.nx * m.cw + 24);
    return h;
}
