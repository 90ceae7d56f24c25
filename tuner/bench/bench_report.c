/*
 * bench_report.c — a run for people (a text table), for CI systems (JUnit
 * XML: one test case per kernel and shape, a failure per regression) and
 * for pull requests and job summaries (Markdown).
 *
 * The text table and the Markdown table are the same cells: one table
 * builder, two printers.
 */
#include "kc_bench.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *kc_bench_duration(double ns, char *buf, size_t len)
{
    if (!isfinite(ns) || ns < 0)
        snprintf(buf, len, "-");
    else if (ns < 1e3)
        snprintf(buf, len, "%.0f ns", ns);
    else if (ns < 1e6)
        snprintf(buf, len, "%.1f us", ns / 1e3);
    else if (ns < 1e9)
        snprintf(buf, len, "%.2f ms", ns / 1e6);
    else
        snprintf(buf, len, "%.2f s", ns / 1e9);
    return buf;
}

/* 1 - p as a percentage, never rounded up to a certainty it is not. */
static const char *confidence(double p, char *buf, size_t len)
{
    if (p < 0.001)
        snprintf(buf, len, ">99.9%%");
    else
        snprintf(buf, len, "%.1f%%", 100 * (1 - p));
    return buf;
}

/* ---- the table ------------------------------------------------------------------- */

enum { MAX_COLS = 14, CELL = 96 };

typedef struct table {
    int ncols, nrows;
    char (*cells)[MAX_COLS][CELL]; /* row 0 is the header */
    bool right[MAX_COLS];
} table;

static void cell(table *t, int row, int col, const char *fmt, ...) KC_PRINTF(4, 5);
static void cell(table *t, int row, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->cells[row][col], CELL, fmt, ap);
    va_end(ap);
}

static void number_cell(table *t, int row, int col, double v, const char *fmt)
{
    if (v >= 0 && isfinite(v))
        cell(t, row, col, fmt, v);
    else
        cell(t, row, col, "-");
}

static bool compared(const kc_bench_run *r)
{
    return r->baseline_path != NULL;
}

static void header(table *t, const kc_bench_run *r, bool verbose)
{
    static const char *const names[] = {"kernel",  "shape", "variant", "median",  "spread",
                                        "samples", "GB/s",  "GFLOP/s", "roofline", "vs copy"};
    static const bool right[] = {false, false, false, true, true, true, true, true, true, true};
    t->ncols = 0;
    for (size_t i = 0; i < KC_COUNT(names); i++)
        t->right[t->ncols] = right[i], cell(t, 0, t->ncols++, "%s", names[i]);
    if (verbose)
        t->right[t->ncols] = true, cell(t, 0, t->ncols++, "reference");
    if (compared(r)) {
        t->right[t->ncols] = true, cell(t, 0, t->ncols++, "vs baseline");
        t->right[t->ncols] = true, cell(t, 0, t->ncols++, "confidence");
        t->right[t->ncols] = false, cell(t, 0, t->ncols++, "verdict");
    }
}

static void row(table *t, int i, const kc_bench_run *r, const kc_bench_result *res, bool verbose)
{
    char a[32];
    int c = 0;
    cell(t, i, c++, "%s", res->kernel);
    cell(t, i, c++, "%s", res->shape);
    if (res->error) {
        cell(t, i, c++, "failed: %.80s", res->error);
        return;
    }
    cell(t, i, c++, "%s", *res->variant ? res->variant : "(none)");
    cell(t, i, c++, "%s", kc_bench_duration(res->time.median, a, sizeof(a)));
    cell(t, i, c++, "%.1f%%", 100 * res->time.spread);
    cell(t, i, c++, "%dx%d", res->rounds, res->per_round);
    number_cell(t, i, c++, res->gb_per_s, "%.2f");
    number_cell(t, i, c++, res->gflop_per_s, "%.2f");
    if (res->roofline >= 0)
        cell(t, i, c++, "%.0f%% %s", 100 * res->roofline, res->bound);
    else
        cell(t, i, c++, "-");
    if (res->vs_copy >= 0)
        cell(t, i, c++, "%.0f%%", 100 * res->vs_copy);
    else
        cell(t, i, c++, "-");
    if (verbose)
        cell(t, i, c++, "%s", kc_bench_duration(res->ref_time.median, a, sizeof(a)));
    if (!compared(r))
        return;
    const kc_bench_check *f = &res->cmp.final;
    if (res->cmp.have) {
        cell(t, i, c++, "%+.1f%%", 100 * f->change);
        cell(t, i, c++, "%s", confidence(f->p, a, sizeof(a)));
    } else {
        cell(t, i, c++, "-");
        cell(t, i, c++, "-");
    }
    cell(t, i, c++, "%s%s", kc_bench_verdict_name(f->verdict),
         res->cmp.remeasured ? " (measured twice)" : "");
}

static bool build(table *t, const kc_bench_run *r, bool verbose)
{
    t->nrows = r->results.len + 1;
    t->cells = calloc((size_t)t->nrows, sizeof(*t->cells));
    if (!t->cells)
        return false;
    header(t, r, verbose);
    for (int i = 0; i < r->results.len; i++)
        row(t, i + 1, r, KC_BENCH_RESULT(r, i), verbose);
    return true;
}

static void print_text_table(const table *t, FILE *out)
{
    int w[MAX_COLS] = {0};
    for (int i = 0; i < t->nrows; i++)
        for (int c = 0; c < t->ncols; c++) {
            int n = (int)strlen(t->cells[i][c]);
            w[c] = n > w[c] ? n : w[c];
        }
    for (int i = 0; i < t->nrows; i++) {
        for (int c = 0; c < t->ncols; c++) {
            bool last = c == t->ncols - 1;
            if (t->right[c])
                fprintf(out, "%*s%s", w[c], t->cells[i][c], last ? "" : "  ");
            else
                fprintf(out, "%-*s%s", last ? 0 : w[c], t->cells[i][c], last ? "" : "  ");
        }
        fputc('\n', out);
    }
}

static void md_escaped(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '|' || *s == '\\' || *s == '*' || *s == '_' || *s == '`')
            fputc('\\', out);
        fputc(*s == '\n' ? ' ' : *s, out);
    }
}

static void print_md_table(const table *t, FILE *out)
{
    for (int i = 0; i < t->nrows; i++) {
        fputc('|', out);
        for (int c = 0; c < t->ncols; c++) {
            fputc(' ', out);
            md_escaped(out, t->cells[i][c]);
            fputs(" |", out);
        }
        fputc('\n', out);
        if (i == 0) {
            fputc('|', out);
            for (int c = 0; c < t->ncols; c++)
                fputs(t->right[c] ? "---:|" : "---|", out);
            fputc('\n', out);
        }
    }
}

/* ---- what goes above and below the table ----------------------------------------- */

static void summary_line(const kc_bench_run *r, char *out, size_t len)
{
    int n[KC_BENCH_FAILED + 1];
    kc_bench_count(r, n);
    size_t at = (size_t)snprintf(out, len, "%d benchmark%s", r->results.len, r->results.len == 1 ? "" : "s");
    for (int v = KC_BENCH_NEW; v <= KC_BENCH_FAILED && at < len; v++)
        if (n[v] && (v != KC_BENCH_NEW || compared(r)))
            at += (size_t)snprintf(out + at, len - at, ", %d %s", n[v],
                                   kc_bench_verdict_name((kc_bench_verdict)v));
    if (at < len)
        snprintf(out + at, len - at, " (%.1f s)", r->elapsed);
}

/* The story of one comparison, for regressions and for the verbose. */
static void explain(const kc_bench_result *res, char *out, size_t len)
{
    const kc_bench_compare *c = &res->cmp;
    const kc_bench_check *f = &c->final;
    char conf[16];
    char now[32], base[32];
    size_t at = (size_t)snprintf(out, len, "%s %s: %+.1f%% ", res->kernel, res->shape, 100 * f->change);
    if (res->ref_variant && at < len) /* --against */
        at += (size_t)snprintf(out + at, len - at,
                               "against the baseline bundle's kernel, interleaved (%s vs %s)",
                               kc_bench_duration(res->time.median, now, sizeof(now)),
                               kc_bench_duration(c->base_median_ns, base, sizeof(base)));
    else if (at < len)
        at += (size_t)snprintf(out + at, len - at, "against the reference kernel (ratio %.4g, baseline %.4g)",
                               res->ratio.median, c->base_ratio);
    if (at < len)
        at += (size_t)snprintf(out + at, len - at,
                               ", confidence %s (Mann-Whitney U = %.0f, %d vs %d samples, p = %.2g)",
                               confidence(f->p, conf, sizeof(conf)), f->u, f->n_now, f->n_base, f->p);
    if (c->remeasured && at < len)
        at += (size_t)snprintf(out + at, len - at,
                               "; the first measurement read %+.1f%% (p = %.2g), this is the second",
                               100 * c->first.change, c->first.p);
    if (c->note && at < len)
        snprintf(out + at, len - at, "; %s", c->note);
}

/* A calibration's rounds as its detail keeps them, "best of 3 rounds:
 * 13.5-19.2 GB/s, 37.6-38.6 GFLOP/s", for the peaks line; NULL for a
 * datasheet's or an older kc's peaks. */
static const char *rounds(const kc_bench_peaks *p)
{
    return strstr(p->detail, "best of ");
}

/* ", with 30% of the host's CPU time stolen" and the like: what else had
 * the CPUs while the peaks were measured, where it was enough to lower
 * them ("" otherwise) */
static const char *load_while_calibrating(const kc_bench_peaks *p, char *buf, size_t len)
{
    int n = 0;
    buf[0] = 0;
    if (p->steal >= KC_BENCH_STEAL_NOTE)
        n = snprintf(buf, len, ", with %.0f%% of the host's CPU time stolen", 100 * p->steal);
    if (p->others >= KC_BENCH_OTHERS_NOTE && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, ", with other processes busy for %.0f%% of this machine's CPU time",
                 100 * p->others);
    return buf;
}

static void preamble(const kc_bench_run *r, FILE *out, const char *bullet)
{
    fprintf(out, "%sdevice     %s [%s]\n", bullet, r->device_name, r->backend);
    if (r->against)
        fprintf(out, "%sreference  each kernel's namesake in %s, at the same shape, interleaved\n", bullet,
                r->baseline_path);
    else
        fprintf(out, "%sreference  %s, sized per benchmark to last as long as its kernel\n", bullet,
                r->ref_kernel);
    char load[160];
    if (r->peaks.known)
        fprintf(out, "%speaks      %.2f GB/s copy, %.2f GFLOP/s FMA (%s%s%s%s%s%s)\n", bullet, r->peaks.gb_per_s,
                r->peaks.gflop_per_s, r->peaks.source, *r->peaks.when ? " " : "", r->peaks.when,
                rounds(&r->peaks) ? "; " : "", rounds(&r->peaks) ? rounds(&r->peaks) : "",
                load_while_calibrating(&r->peaks, load, sizeof(load)));
    else if (r->peaks.stale)
        fprintf(out,
                "%speaks      unknown: those measured %s came from an older kc's calibration, which this kc "
                "measures another way; `kc bench --calibrate` measures them again\n",
                bullet, *r->peaks.when ? r->peaks.when : "before");
    else
        fprintf(out, "%speaks      unknown: `kc bench --calibrate` measures them, for the roofline column\n",
                bullet);
    if (r->steal >= KC_BENCH_STEAL_NOTE)
        fprintf(
            out,
            "%shost       %.0f%% of the host's CPU time went to other guests of its hypervisor during this "
            "run: on a CPU device the times run long and GB/s, GFLOP/s and the roofline read low (the ratios "
            "less so)\n",
            bullet, 100 * r->steal);
    if (r->others >= KC_BENCH_OTHERS_NOTE)
        fprintf(out,
                "%shost       other processes kept %.0f%% of this machine's CPU time busy during this run, on "
                "the cores the kernels ran on: raw times run long and GB/s, GFLOP/s and the roofline read low "
                "(the ratios less so)\n",
                bullet, 100 * r->others);
    if (r->against)
        fprintf(out,
                "%sbaseline   the bundle %s (kc %s, built %s), measured in this run; a regression: slower by "
                "more than %.0f%% with p < %g, twice\n",
                bullet, r->baseline_path, r->baseline_version ? r->baseline_version : "?",
                r->baseline_created ? r->baseline_created : "?", 100 * r->max_regression, r->alpha);
    else if (compared(r))
        fprintf(
            out,
            "%sbaseline   %s (kc %s, %s)%s; a regression: slower by more than %.0f%% with p < %g, twice\n",
            bullet, r->baseline_path, r->baseline_version ? r->baseline_version : "?",
            r->baseline_created ? r->baseline_created : "?", r->other_device ? ", ANOTHER DEVICE's" : "",
            100 * r->max_regression, r->alpha);
}

void kc_bench_report_text(const kc_bench_run *r, FILE *out, bool verbose)
{
    fprintf(out, "kc bench %s (package %s), kc %s\n", r->bundle, r->package ? r->package : "?",
            r->kc_version);
    preamble(r, out, "  ");
    fputc('\n', out);
    table t;
    if (build(&t, r, verbose)) {
        print_text_table(&t, out);
        free(t.cells);
    }
    char line[1024];
    fputc('\n', out);
    for (int i = 0; i < r->results.len; i++) {
        const kc_bench_result *res = KC_BENCH_RESULT(r, i);
        bool tell = res->cmp.have && (res->cmp.final.verdict == KC_BENCH_REGRESSION || verbose ||
                                      res->cmp.remeasured || res->cmp.final.verdict == KC_BENCH_FASTER);
        if (res->error)
            fprintf(out, "FAILED %s %s: %s\n", res->kernel, res->shape, res->error);
        else if (tell) {
            explain(res, line, sizeof(line));
            fprintf(out, "%s %s\n",
                    res->cmp.final.verdict == KC_BENCH_REGRESSION ? "REGRESSION" : "note:", line);
        } else if (res->cmp.note)
            fprintf(out, "note: %s %s: %s\n", res->kernel, res->shape, res->cmp.note);
    }
    summary_line(r, line, sizeof(line));
    fprintf(out, "%s\n", line);
}

bool kc_bench_write_markdown(const kc_bench_run *r, const char *path, char *err, size_t errlen)
{
    FILE *out = fopen(path, "w");
    if (!out) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return false;
    }
    char line[1024];
    summary_line(r, line, sizeof(line));
    fprintf(out, "## kc bench: %s\n\n%s\n\n", r->package ? r->package : r->bundle, line);
    preamble(r, out, "- ");
    fputc('\n', out);
    table t;
    if (build(&t, r, false)) {
        print_md_table(&t, out);
        free(t.cells);
    }
    for (int i = 0; i < r->results.len; i++) {
        const kc_bench_result *res = KC_BENCH_RESULT(r, i);
        if (res->cmp.have && res->cmp.final.verdict == KC_BENCH_REGRESSION) {
            explain(res, line, sizeof(line));
            fprintf(out, "\n**Regression**: %s\n", line);
        }
    }
    bool ok = fclose(out) == 0;
    if (!ok)
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
    return ok;
}

/* ---- JUnit XML ------------------------------------------------------------------- */

static void xml_escaped(FILE *out, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '&')
            fputs("&amp;", out);
        else if (c == '<')
            fputs("&lt;", out);
        else if (c == '>')
            fputs("&gt;", out);
        else if (c == '"')
            fputs("&quot;", out);
        else if (c == '\'')
            fputs("&apos;", out);
        else if (c < 0x20 && c != '\n' && c != '\t')
            fputc(' ', out); /* not allowed in XML 1.0 */
        else
            fputc(c, out);
    }
}

static void junit_case(FILE *out, const kc_bench_run *r, const kc_bench_result *res)
{
    char line[1024], a[32];
    fputs("    <testcase classname=\"kc.bench.", out);
    xml_escaped(out, res->kernel);
    fputs("\" name=\"", out);
    xml_escaped(out, res->shape);
    fprintf(out, "\" time=\"%.6f\">\n", res->error ? 0.0 : res->seconds);
    if (res->error) {
        fputs("      <error type=\"failed\" message=\"", out);
        xml_escaped(out, res->error);
        fputs("\"/>\n", out);
    } else if (res->cmp.have && res->cmp.final.verdict == KC_BENCH_REGRESSION) {
        explain(res, line, sizeof(line));
        fputs("      <failure type=\"regression\" message=\"", out);
        xml_escaped(out, line);
        fputs("\"/>\n", out);
    }
    if (!res->error) {
        fputs("      <system-out>", out);
        snprintf(line, sizeof(line), "variant %s; median %s per launch, spread %.1f%%, %d samples",
                 res->variant, kc_bench_duration(res->time.median, a, sizeof(a)), 100 * res->time.spread,
                 res->ntimes);
        xml_escaped(out, line);
        if (res->gb_per_s >= 0)
            fprintf(out, "; %.2f GB/s", res->gb_per_s);
        if (res->gflop_per_s >= 0)
            fprintf(out, "; %.2f GFLOP/s", res->gflop_per_s);
        if (res->cmp.have) {
            explain(res, line, sizeof(line));
            fputs("; ", out);
            xml_escaped(out, line);
            fprintf(out, "; verdict %s", kc_bench_verdict_name(res->cmp.final.verdict));
        }
        fputs("</system-out>\n", out);
    }
    (void)r;
    fputs("    </testcase>\n", out);
}

bool kc_bench_write_junit(const kc_bench_run *r, const char *path, char *err, size_t errlen)
{
    FILE *out = fopen(path, "w");
    if (!out) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return false;
    }
    int n[KC_BENCH_FAILED + 1];
    kc_bench_count(r, n);
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
    fprintf(out, "<testsuites name=\"kc bench\" tests=\"%d\" failures=\"%d\" errors=\"%d\" time=\"%.3f\">\n",
            r->results.len, n[KC_BENCH_REGRESSION], n[KC_BENCH_FAILED], r->elapsed);
    fputs("  <testsuite name=\"kc bench ", out);
    xml_escaped(out, r->package ? r->package : r->bundle);
    fprintf(out, "\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"0\" time=\"%.3f\" timestamp=\"",
            r->results.len, n[KC_BENCH_REGRESSION], n[KC_BENCH_FAILED], r->elapsed);
    xml_escaped(out, r->created ? r->created : "");
    fputs("\">\n    <properties>\n", out);
    const char *props[][2] = {{"device", r->device_name},
                              {"device_key", r->device_key},
                              {"backend", r->backend},
                              {"kc_version", r->kc_version},
                              {"reference_kernel_hash", r->ref_hash},
                              {"baseline", r->baseline_path}};
    for (size_t i = 0; i < KC_COUNT(props); i++) {
        if (!props[i][1])
            continue;
        fprintf(out, "      <property name=\"%s\" value=\"", props[i][0]);
        xml_escaped(out, props[i][1]);
        fputs("\"/>\n", out);
    }
    fputs("    </properties>\n", out);
    for (int i = 0; i < r->results.len; i++)
        junit_case(out, r, KC_BENCH_RESULT(r, i));
    fputs("  </testsuite>\n</testsuites>\n", out);
    bool ok = fclose(out) == 0;
    if (!ok)
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
    return ok;
}
