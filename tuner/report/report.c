/*
 * report.c — kc_tune_report_write: checks what it is given (before
 * anything is written, so a mistake leaves no file), picks each kernel's
 * heat-map axes, lays the charts out as an HTML page or one SVG document,
 * and writes the result atomically.
 *
 * The HTML is written as XHTML-compatible markup (every element closed,
 * only the five XML entities, a namespace on <html>), so the whole page
 * parses as XML as well as HTML: the tests check it with an XML parser,
 * and a broken escape cannot hide in it.
 */
#include "report_private.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum { FMT_NONE, FMT_HTML, FMT_SVG } format;

/* Styles the charts' classes; shared by the page and the SVG document.
 * Fills set by the charts as attributes are not overridden here: in SVG a
 * style sheet beats a presentation attribute. */
static const char svg_css[] =
    "text{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;font-size:12px}\n"
    ".small,.heatmap text.v{font-size:10px}\n"
    ".note{fill:#777;font-style:italic}\n"
    ".frame{fill:none;stroke:#999}\n"
    ".grid{stroke:#e6e6e6}\n"
    ".tick{stroke:#555}\n"
    ".points circle{fill:#4a4a4a;fill-opacity:0.7}\n"
    ".default{fill:none;stroke-width:2}\n"
    ".default-line{stroke-dasharray:5 4;stroke-width:1}\n"
    ".heatmap text.v{text-anchor:middle;pointer-events:none}\n"
    ".cell{stroke:#fff;stroke-width:0.5}\n"
    ".map-title,.axis-title,.h2{font-weight:600}\n"
    ".h1{font-size:20px;font-weight:700}\n"
    ".h2{font-size:16px}\n"
    ".summary{font-family:ui-monospace,monospace;font-size:11px}\n";

static const char page_css[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;color:#222;max-width:1100px;"
    "margin:0 auto;padding:0 16px 48px}\n"
    "h1{font-size:1.5em;margin-bottom:0.2em}\n"
    ".meta{color:#555;margin-top:0}\n"
    "nav.toc{background:#f5f5f5;padding:8px 16px;border-radius:4px}\n"
    "nav.toc ul{margin:0.2em 0}\n"
    "section.kernel{border-top:1px solid #ddd;margin-top:28px}\n"
    ".shape{margin:12px 0 36px}\n"
    "p.summary{font-family:ui-monospace,monospace;font-size:0.9em}\n"
    "svg{display:block;margin:6px 0}\n";

static bool fail(char *err, size_t errlen, const char *fmt, ...) KC_PRINTF(3, 4);

static bool fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return false;
}

static const char *or_unknown(const char *s)
{
    return s && *s ? s : "(unknown)";
}

static format format_of(const char *path)
{
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    if (!dot || (slash && dot < slash))
        return FMT_NONE;
    if (strcasecmp(dot, ".html") == 0 || strcasecmp(dot, ".htm") == 0)
        return FMT_HTML;
    return strcasecmp(dot, ".svg") == 0 ? FMT_SVG : FMT_NONE;
}

/* ---- axes --------------------------------------------------------------- */

static int tunable_index(const kc_tune_report_kernel *k, const char *name)
{
    for (int d = 0; d < k->ntunables; d++)
        if (k->tunables[d] && strcmp(k->tunables[d], name) == 0)
            return d;
    return -1;
}

static bool some_kernel_has(const kc_tune_report *r, const char *name)
{
    for (int i = 0; i < r->nkernels; i++)
        if (tunable_index(&r->kernels[i], name) >= 0)
            return true;
    return false;
}

/* The tunable with the most candidates other than `skip`; the first
 * declared wins a tie. -1 when there is none. */
static int most_candidates(const kc_tune_report_kernel *k, int skip)
{
    int best = -1;
    for (int d = 0; d < k->ntunables; d++)
        if (d != skip && (best < 0 || k->nvalues[d] > k->nvalues[best]))
            best = d;
    return best;
}

/* A kernel that lacks a named axis (another kernel has it, or check()
 * would have refused) gets the default pair, not half of each. */
static void pick_axes(const kc_tune_report *r, const kc_tune_report_kernel *k, int *ax, int *ay)
{
    int x = r->axis_x ? tunable_index(k, r->axis_x) : -1;
    int y = r->axis_y ? tunable_index(k, r->axis_y) : -1;
    if ((r->axis_x && x < 0) || (r->axis_y && y < 0))
        x = y = -1;
    if (x < 0)
        x = most_candidates(k, y);
    if (y < 0)
        y = most_candidates(k, x);
    if (x < 0) /* one tunable, named as y: still a one-row map */
        x = y, y = -1;
    *ax = x, *ay = y;
}

/* ---- checks -------------------------------------------------------------- */

/* The interface's invariants: the tuner builds these, a user cannot. */
static void assert_kernel(const kc_tune_report_kernel *k)
{
    assert(k->ntunables == 0 || (k->tunables && k->nvalues && k->values));
    for (int d = 0; d < k->ntunables; d++)
        assert(k->nvalues[d] >= 1 && k->values[d]);
    assert(k->nshapes == 0 || k->shapes);
    (void)k;
}

static bool check(const kc_tune_report *r, const char *path, format *fmt, char *err, size_t errlen)
{
    *fmt = format_of(path);
    if (*fmt == FMT_NONE)
        return fail(err, errlen,
                    "report '%s': unknown file type; the report is written as .html, .htm or .svg", path);
    const char *names[2] = {r->axis_x, r->axis_y};
    for (int i = 0; i < 2; i++)
        if (names[i] && !some_kernel_has(r, names[i]))
            return fail(err, errlen,
                        "report: heat-map axis '%s' is not a tunable of any kernel in the report", names[i]);
    if (r->axis_x && r->axis_y && strcmp(r->axis_x, r->axis_y) == 0)
        return fail(err, errlen, "report: the heat map's two axes are both '%s'; name two different tunables",
                    r->axis_x);
    assert(r->nkernels == 0 || r->kernels);
    for (int i = 0; i < r->nkernels; i++)
        assert_kernel(&r->kernels[i]);
    return true;
}

/* ---- the shapes, measured once for the contents and the body -------------- */

static rep_shape **all_shapes(rep_writer *w, const kc_tune_report *r)
{
    rep_shape **all = kc_arena_alloc(&w->arena, sizeof(rep_shape *) * (size_t)(r->nkernels + 1));
    for (int i = 0; i < r->nkernels; i++) {
        const kc_tune_report_kernel *k = &r->kernels[i];
        int ax, ay;
        pick_axes(r, k, &ax, &ay);
        all[i] = kc_arena_alloc(&w->arena, sizeof(rep_shape) * (size_t)(k->nshapes + 1));
        for (int j = 0; j < k->nshapes; j++)
            rep_shape_init(&all[i][j], w, k, &k->shapes[j], ax, ay);
    }
    return all;
}

static long total_points(const kc_tune_report *r)
{
    long n = 0;
    for (int i = 0; i < r->nkernels; i++)
        for (int j = 0; j < r->kernels[i].nshapes; j++)
            n += r->kernels[i].shapes[j].npoints;
    return n;
}

/* The page's lines of text, unescaped: HTML escapes them into a
 * paragraph, the SVG document wraps them first. */
static char *summary_text(const rep_shape *sh)
{
    kc_buf b = {0};
    rep_summary(&b, sh);
    return kc_buf_take(&b);
}

/* "tunables: WG (4: 32, 64, 128, 256) · TM (3: 1, 2, 4)" */
static char *tunables_text(const kc_tune_report_kernel *k)
{
    kc_buf b = {0};
    kc_buf_puts(&b, k->ntunables ? "tunables: " : "no tunables: one variant");
    for (int d = 0; d < k->ntunables; d++) {
        kc_buf_printf(&b, "%s%s (%d: ", d ? " \xc2\xb7 " : "", or_unknown(k->tunables[d]), k->nvalues[d]);
        for (int i = 0; i < k->nvalues[d]; i++)
            kc_buf_printf(&b, "%s%" PRId64, i ? ", " : "", k->values[d][i]);
        kc_buf_putc(&b, ')');
    }
    if (k->nshapes == 0)
        kc_buf_puts(&b, " \xc2\xb7 no shapes measured");
    return kc_buf_take(&b);
}

static char *meta_text(const kc_tune_report *r)
{
    kc_buf b = {0};
    kc_buf_printf(&b, "device: %s \xc2\xb7 backend: %s \xc2\xb7 %d kernel%s, %ld configurations measured",
                  or_unknown(r->device), or_unknown(r->backend), r->nkernels, r->nkernels == 1 ? "" : "s",
                  total_points(r));
    return kc_buf_take(&b);
}

/* Escapes a text from the functions above and frees it. */
static void put_text(kc_buf *o, char *text)
{
    rep_esc(o, text);
    free(text);
}

typedef double (*draw_fn)(rep_writer *w, const rep_shape *sh, double *width);

/* ---- HTML ---------------------------------------------------------------- */

/* A chart as its own inline <svg>: drawn into a fresh buffer first, since
 * the <svg> tag needs the size the chart comes out at. */
static void html_svg(rep_writer *w, draw_fn draw, const rep_shape *sh, const char *cls)
{
    kc_buf page = w->out;
    w->out = (kc_buf){0};
    double width, height = draw(w, sh, &width);
    kc_buf chart = w->out;
    w->out = page;
    kc_buf_printf(&w->out,
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"%s\" width=\"%.0f\" height=\"%.0f\" "
                  "viewBox=\"0 0 %.0f %.0f\">\n",
                  cls, ceil(width), ceil(height), ceil(width), ceil(height));
    kc_buf_append(&w->out, chart.data ? chart.data : "", chart.len);
    kc_buf_puts(&w->out, "</svg>\n");
    kc_buf_free(&chart);
}

static void html_head(kc_buf *o, const kc_tune_report *r)
{
    kc_buf_puts(o, "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n"
                   "<meta charset=\"utf-8\"/>\n<title>kc tune report: ");
    rep_esc(o, or_unknown(r->title));
    kc_buf_printf(o, "</title>\n<style>\n%s%s</style>\n</head>\n<body>\n<header>\n<h1>kc tune report: ",
                  page_css, svg_css);
    rep_esc(o, or_unknown(r->title));
    kc_buf_puts(o, "</h1>\n<p class=\"meta\">");
    put_text(o, meta_text(r));
    kc_buf_puts(o, "</p>\n<p class=\"meta\">Per kernel and shape: every configuration that ran, fastest "
                   "first, on a log time scale (hover a dot for its variant), the best in red, the default "
                   "in blue, the failures counted by status under it; then the best time over two tunables, "
                   "each cell the fastest configuration with those two values.</p>\n</header>\n");
}

static void html_toc(kc_buf *o, const kc_tune_report *r, rep_shape **all)
{
    kc_buf_puts(o, "<nav class=\"toc\">\n<h2>Kernels</h2>\n<ul>\n");
    for (int i = 0; i < r->nkernels; i++) {
        const kc_tune_report_kernel *k = &r->kernels[i];
        kc_buf_printf(o, "<li><a href=\"#k%d\">", i);
        rep_esc(o, or_unknown(k->name));
        kc_buf_printf(o, "</a> (%d shape%s)\n<ul>\n", k->nshapes, k->nshapes == 1 ? "" : "s");
        for (int j = 0; j < k->nshapes; j++) {
            kc_buf_printf(o, "<li><a href=\"#k%d-s%d\">", i, j);
            rep_esc(o, or_unknown(k->shapes[j].shape));
            kc_buf_puts(o, "</a>: ");
            put_text(o, summary_text(&all[i][j]));
            kc_buf_puts(o, "</li>\n");
        }
        kc_buf_puts(o, "</ul></li>\n");
    }
    kc_buf_puts(o, r->nkernels ? "</ul>\n</nav>\n" : "<li>no kernels</li></ul>\n</nav>\n");
}

static void html_shape(rep_writer *w, const rep_shape *sh, int i, int j)
{
    kc_buf *o = &w->out;
    kc_buf_printf(o, "<div class=\"shape\" id=\"k%d-s%d\">\n<h3>", i, j);
    rep_esc(o, or_unknown(sh->k->name));
    kc_buf_puts(o, " \xc2\xb7 ");
    rep_esc(o, or_unknown(sh->s->shape));
    kc_buf_puts(o, "</h3>\n<p class=\"summary\">");
    put_text(o, summary_text(sh));
    kc_buf_puts(o, "</p>\n");
    html_svg(w, rep_chart, sh, "chart");
    if (sh->ax >= 0 && sh->s->npoints > 0)
        html_svg(w, rep_heatmap, sh, "map");
    kc_buf_puts(o, "</div>\n");
}

static void write_html(rep_writer *w, const kc_tune_report *r, rep_shape **all)
{
    kc_buf *o = &w->out;
    html_head(o, r);
    html_toc(o, r, all);
    kc_buf_puts(o, "<main>\n");
    for (int i = 0; i < r->nkernels; i++) {
        const kc_tune_report_kernel *k = &r->kernels[i];
        kc_buf_printf(o, "<section class=\"kernel\" id=\"k%d\">\n<h2>", i);
        rep_esc(o, or_unknown(k->name));
        kc_buf_puts(o, "</h2>\n<p>");
        put_text(o, tunables_text(k));
        kc_buf_puts(o, "</p>\n");
        for (int j = 0; j < k->nshapes; j++)
            html_shape(w, &all[i][j], i, j);
        kc_buf_puts(o, "</section>\n");
    }
    kc_buf_puts(o, "</main>\n</body>\n</html>\n");
}

/* ---- SVG ----------------------------------------------------------------- */

enum { SVG_MARGIN = 16 };

static double svg_block(rep_writer *w, draw_fn draw, const rep_shape *sh, double y, double *maxw)
{
    kc_buf_printf(&w->out, "<g transform=\"translate(%d,%.1f)\">\n", SVG_MARGIN, y);
    double width, height = draw(w, sh, &width);
    kc_buf_puts(&w->out, "</g>\n");
    *maxw = fmax(*maxw, width + 2 * SVG_MARGIN);
    return height;
}

/* Code points in [p, end), for line lengths. */
static int chars(const char *p, const char *end)
{
    int n = 0;
    for (; p < end; p++)
        n += (*p & 0xc0) != 0x80;
    return n;
}

/* The end of the words from p that fit in max_chars (at least one word). */
static const char *line_end(const char *p, int max_chars)
{
    const char *end = NULL, *q = p;
    int n = 0;
    while (*q) {
        const char *word = q;
        while (*q && *q != ' ')
            q++;
        int wn = chars(word, q);
        if (end && n + wn > max_chars)
            break;
        n += wn, end = q;
        while (*q == ' ')
            q++, n++;
    }
    return end ? end : q;
}

/* A line of the document's text, wrapped at spaces to about max_w px: the
 * SVG document has no text flow of its own. A line does not end with a
 * " · " separator. Returns the baseline of the next line. */
static double svg_lines(kc_buf *o, const char *cls, double y, const char *text, double px, double max_w)
{
    static const char dot[] = " \xc2\xb7";
    int max_chars = (int)(max_w / rep_text_w(1, px));
    const char *p = text;
    while (*p == ' ')
        p++;
    while (*p) {
        const char *end = line_end(p, max_chars), *next = end;
        if (*end && end - p >= 3 && strncmp(end - 3, dot, 3) == 0)
            end -= 3;
        kc_buf_printf(o, "<text class=\"%s\" x=\"%d\" y=\"%.1f\">", cls, SVG_MARGIN, y);
        rep_escn(o, p, (size_t)(end - p));
        kc_buf_puts(o, "</text>\n");
        y += px * 1.35;
        for (p = next; *p == ' ';)
            p++;
    }
    return y;
}

/* svg_lines for a text made here, freed after. */
static double svg_own_lines(kc_buf *o, const char *cls, double y, char *text, double px, double max_w)
{
    y = svg_lines(o, cls, y, text, px, max_w);
    free(text);
    return y;
}

static double svg_shape(rep_writer *w, const rep_shape *sh, double y, double *maxw)
{
    kc_buf head = {0};
    kc_buf_printf(&head, "%s \xc2\xb7 %s", or_unknown(sh->k->name), or_unknown(sh->s->shape));
    y = svg_own_lines(&w->out, "h2", y + 16, kc_buf_take(&head), 16, 800);
    y = svg_own_lines(&w->out, "summary", y, summary_text(sh), 11, 800) - 4;
    y += svg_block(w, rep_chart, sh, y, maxw) + 12;
    if (sh->ax >= 0 && sh->s->npoints > 0)
        y += svg_block(w, rep_heatmap, sh, y, maxw) + 12;
    return y + 20;
}

static double svg_kernel(rep_writer *w, const kc_tune_report_kernel *k, rep_shape *shapes, double y,
                         double *maxw)
{
    kc_buf_printf(&w->out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ccc\"/>\n",
                  SVG_MARGIN, y, SVG_MARGIN + 800, y);
    y = svg_lines(&w->out, "h1", y + 26, or_unknown(k->name), 20, 800);
    y = svg_own_lines(&w->out, "tunables", y, tunables_text(k), 12, 800) + 6;
    for (int j = 0; j < k->nshapes; j++)
        y = svg_shape(w, &shapes[j], y, maxw);
    return y;
}

/* The body first, into the writer; the root tag needs its final size. */
static void write_svg(rep_writer *w, const kc_tune_report *r, rep_shape **all)
{
    kc_buf *o = &w->out;
    kc_buf title = {0};
    kc_buf_printf(&title, "kc tune report: %s", or_unknown(r->title));
    double y = svg_own_lines(o, "h1", 30, kc_buf_take(&title), 20, 800);
    y = svg_own_lines(o, "meta", y, meta_text(r), 12, 800) + 8;
    double maxw = 800 + 2 * SVG_MARGIN;
    for (int i = 0; i < r->nkernels; i++)
        y = svg_kernel(w, &r->kernels[i], all[i], y, &maxw);
    kc_buf body = w->out;
    w->out = (kc_buf){0};
    kc_buf_printf(o,
                  "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                  "viewBox=\"0 0 %.0f %.0f\">\n<title>kc tune report: ",
                  ceil(maxw), ceil(y), ceil(maxw), ceil(y));
    rep_esc(o, or_unknown(r->title));
    kc_buf_printf(o,
                  "</title>\n<style>\n%s</style>\n<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
                  svg_css);
    kc_buf_append(o, body.data ? body.data : "", body.len);
    kc_buf_puts(o, "</svg>\n");
    kc_buf_free(&body);
}

/* ---- the write ------------------------------------------------------------ */

bool kc_tune_report_write(const kc_tune_report *r, const char *path, char *err, size_t errlen)
{
    assert(r && path);
    format fmt;
    if (!check(r, path, &fmt, err, errlen))
        return false;
    rep_writer w = {0};
    kc_arena_init(&w.arena);
    rep_shape **all = all_shapes(&w, r);
    if (fmt == FMT_SVG)
        write_svg(&w, r, all);
    else
        write_html(&w, r, all);
    bool ok = kc_write_file_atomic(path, w.out.data, w.out.len) == 0;
    int saved = errno;
    kc_buf_free(&w.out);
    kc_arena_free(&w.arena);
    if (!ok)
        return fail(err, errlen, "cannot write report '%s': %s", path, strerror(saved));
    return true;
}
