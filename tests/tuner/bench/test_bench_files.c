/*
 * test_bench_files.c — what kc bench writes, from a made-up run (no device
 * needed): the JSON results read back as a baseline unchanged, the JUnit
 * file is well-formed XML (checked here, and by xmllint when it is
 * installed) with one test case per benchmark and a failure per
 * regression, the Markdown table has one header, one separator and rows
 * of the same width; the peaks file keeps one entry per device; and the
 * share of CPU time a hypervisor stole is read from /proc/stat's text and
 * reported where it is large.
 */
#include "kc_test.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <unistd.h>

#include "kc_bench.h"

static char dir[] = "/tmp/kc_bench_files_XXXXXX";

static char *path(const char *name)
{
    static char p[4][512];
    static int next;
    char *s = p[next++ % 4];
    snprintf(s, 512, "%s/%s", dir, name);
    return s;
}

static char *slurp(const char *file)
{
    size_t n;
    char *text = kc_read_file(file, &n);
    assert_non_null(text);
    return text;
}

/* The text report of r, as kc bench prints it. */
static char *report_of(const kc_bench_run *r)
{
    FILE *f = fopen(path("text.txt"), "w");
    assert_non_null(f);
    kc_bench_report_text(r, f, false);
    fclose(f);
    return slurp(path("text.txt"));
}

static double *numbers(kc_arena *a, int n, double base, double step)
{
    double *x = kc_arena_alloc(a, (size_t)n * sizeof(double));
    for (int i = 0; i < n; i++)
        x[i] = base + step * (i % 7);
    return x;
}

/* A run of three benchmarks on a device whose name needs escaping: one
 * unchanged, one regression (measured twice), one that failed. */
static void make_run(kc_bench_run *r)
{
    kc_bench_run_init(r);
    r->kc_version = "0.1.0";
    r->created = "2026-01-02T03:04:05Z";
    r->bundle = "b.kcb";
    r->package = "pkg <&> \"quoted\" 'it'";
    r->device_key = "vulkan:10de:2330:NVIDIA H100 <HBM3> & co:560.35";
    r->device_name = "NVIDIA H100 <HBM3> & co";
    r->device_family = "nvidia:h100";
    r->backend = "vulkan";
    r->ref_kernel = "kc_bench_ref";
    r->ref_hash = "abc123";
    r->peaks = (kc_bench_peaks){.known = true, .gb_per_s = 3350, .gflop_per_s = 66900, .source = "datasheet"};
    r->baseline_path = "base.json";
    r->baseline_version = "0.0.9";
    r->baseline_device = r->device_key;
    r->rounds = 10;
    r->elapsed = 1.5;
    const char *kernels[] = {"saxpy", "conv1d|pipe", "broken"};
    for (int k = 0; k < 3; k++) {
        kc_bench_result *res = kc_bench_run_add(r, kernels[k], k == 1 ? "ch=16,t_out=4096,ks=15" : "n=4096");
        if (k == 2) {
            res->error = "shape 'n=4096' gives no value for the integer scalar 'm'";
            continue;
        }
        res->variant = "WG=128";
        res->why = "default";
        res->source_hash = "ff00";
        res->ref_shape = "n=1024,iters=37";
        res->rounds = 10, res->per_round = 3, res->ntimes = 30;
        res->times = numbers(&r->arena, 30, 1000 * (k + 1), 10);
        res->ref = numbers(&r->arena, 11, 900, 5);
        res->ratios = numbers(&r->arena, 10, 1.0 + k, 0.01);
        kc_stats_summarize(res->times, 30, &res->time);
        kc_stats_summarize(res->ratios, 10, &res->ratio);
        kc_stats_summarize(res->ref, 11, &res->ref_time);
        res->bytes = 12 * 4096, res->flops = k ? -1 : 2 * 4096;
        res->gb_per_s = res->bytes / res->time.median;
        res->gflop_per_s = res->flops >= 0 ? res->flops / res->time.median : -1;
        res->roofline = kc_bench_roofline(&r->peaks, res->bytes, res->flops, res->time.median, &res->bound);
        res->seconds = 0.25;
        res->cmp = (kc_bench_compare){.have = true,
                                      .base_ratio = 1.0,
                                      .base_median_ns = 1000,
                                      .base_ref_ns = 900,
                                      .base_variant = "WG=128"};
        res->cmp.first = res->cmp.final =
            (kc_bench_check){.change = k ? 1.0 : 0.01,
                             .p = k ? 1e-6 : 0.4,
                             .confidence = k ? 1 - 1e-6 : 0.6,
                             .u = 100,
                             .n_now = 10,
                             .n_base = 10,
                             .verdict = k ? KC_BENCH_REGRESSION : KC_BENCH_UNCHANGED};
        res->cmp.remeasured = k == 1;
    }
}

static void json_round_trip(void **state)
{
    (void)state;
    kc_bench_run r, b;
    char err[512];
    make_run(&r);
    assert_true(kc_bench_write_json(&r, path("run.json"), err, sizeof(err)));
    /* valid JSON with the documented keys */
    json_error_t e;
    json_t *root = json_load_file(path("run.json"), 0, &e);
    if (!root)
        fail_msg("not JSON: %s at line %d", e.text, e.line);
    assert_string_equal(KC_BENCH_FORMAT, json_string_value(json_object_get(root, "format")));
    json_t *list = json_object_get(root, "benchmarks");
    assert_int_equal(3, json_array_size(list));
    json_t *second = json_array_get(list, 1);
    assert_string_equal("regression", json_string_value(json_object_get(second, "verdict")));
    json_t *cmp = json_object_get(second, "comparison");
    assert_true(json_is_true(json_object_get(cmp, "remeasured")));
    assert_non_null(json_object_get(cmp, "first"));
    assert_true(json_is_null(json_object_get(second, "gflop_per_s"))); /* no flops: null, not -1 */
    assert_string_equal("failed", json_string_value(json_object_get(json_array_get(list, 2), "verdict")));
    assert_int_equal(1, json_integer_value(json_object_get(json_object_get(root, "summary"), "regression")));
    json_decref(root);
    /* read back as a baseline: the same samples and identities */
    kc_bench_run_init(&b);
    if (!kc_bench_read_json(&b, path("run.json"), err, sizeof(err)))
        fail_msg("%s", err);
    assert_string_equal(r.device_key, b.device_key);
    assert_string_equal("0.1.0", b.kc_version);
    assert_string_equal("abc123", b.ref_hash);
    assert_true(b.steal == -1); /* unknown in make_run: null, read back as unknown */
    assert_int_equal(3, b.results.len);
    const kc_bench_result *x = kc_bench_find(&b, "conv1d|pipe", "ch=16,t_out=4096,ks=15");
    assert_non_null(x);
    assert_string_equal("WG=128", x->variant);
    assert_string_equal("n=1024,iters=37", x->ref_shape);
    assert_int_equal(10, x->rounds);
    for (int i = 0; i < 10; i++)
        assert_true(fabs(x->ratios[i] - KC_BENCH_RESULT(&r, 1)->ratios[i]) <= 1e-6 * x->ratios[i]);
    assert_true(fabs(x->ratio.median - KC_BENCH_RESULT(&r, 1)->ratio.median) < 1e-6);
    assert_int_equal(30, x->ntimes);
    assert_null(kc_bench_find(&b, "broken", "n=4096")); /* a failed benchmark is no baseline */
    assert_null(kc_bench_find(&b, "saxpy", "n=1"));
    kc_bench_run_free(&b);
    kc_bench_run_free(&r);
}

static void json_errors(void **state)
{
    (void)state;
    kc_bench_run b;
    char err[512];
    FILE *f = fopen(path("bad.json"), "w");
    fputs("{\"format\": \"kc-bench/1\", \"device\": {\"key\": \"k\"}, \"benchmarks\": [{\"kernel\": \"a\", "
          "\"shape\": "
          "\"n=1\", \"ratios\": [1, -2], \"times_ns\": [], \"reference_ns\": []}]}",
          f);
    fclose(f);
    kc_bench_run_init(&b);
    assert_false(kc_bench_read_json(&b, path("bad.json"), err, sizeof(err)));
    ASSERT_CONTAINS(err, "ratios[1] is not a positive number");
    kc_bench_run_free(&b);
    f = fopen(path("other.json"), "w");
    fputs("{\"format\": \"something else\"}", f);
    fclose(f);
    kc_bench_run_init(&b);
    assert_false(kc_bench_read_json(&b, path("other.json"), err, sizeof(err)));
    ASSERT_CONTAINS(err, "is not a kc bench results file");
    kc_bench_run_free(&b);
    kc_bench_run_init(&b);
    assert_false(kc_bench_read_json(&b, path("missing.json"), err, sizeof(err)));
    kc_bench_run_free(&b);
}

/* ---- a small XML well-formedness check -------------------------------------------------------------------
 */

/* Text and attribute values: no raw '<', every '&' starts a known entity. */
static bool xml_text_ok(const char *s, const char *end)
{
    for (; s < end; s++) {
        if (*s == '<')
            return false;
        if (*s == '&') {
            static const char *const ents[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
            bool ok = false;
            for (size_t i = 0; i < KC_COUNT(ents); i++)
                ok |= strncmp(s, ents[i], strlen(ents[i])) == 0;
            if (!ok)
                return false;
        }
    }
    return true;
}

/* Tags nest and close, attributes are name="value", one root element:
 * NULL, or what is wrong. */
static const char *xml_error(const char *x)
{
    const char *stack[64];
    size_t lens[64];
    int depth = 0, roots = 0;
    if (strncmp(x, "<?xml ", 6) == 0)
        x = strstr(x, "?>") + 2;
    while (*x) {
        const char *lt = strchr(x, '<');
        if (!lt) {
            for (; *x; x++)
                if (!isspace((unsigned char)*x))
                    return "text after the root element";
            break;
        }
        if (!xml_text_ok(x, lt))
            return "a raw '<' or '&' in text";
        if (depth == 0)
            for (const char *t = x; t < lt; t++)
                if (!isspace((unsigned char)*t))
                    return "text outside the root element";
        const char *gt = strchr(lt, '>');
        if (!gt)
            return "an unclosed tag";
        if (lt[1] == '/') {
            size_t n = strcspn(lt + 2, " >");
            if (depth == 0 || n != lens[depth - 1] || strncmp(lt + 2, stack[depth - 1], n) != 0)
                return "a closing tag that does not match the open element";
            depth--;
        } else {
            const char *name = lt + 1;
            size_t n = strcspn(name, " />");
            if (n == 0 || !(isalpha((unsigned char)name[0]) || name[0] == '_'))
                return "a bad element name";
            for (const char *a = name + n; a < gt;) { /* attributes: name="value" */
                while (a < gt && isspace((unsigned char)*a))
                    a++;
                if (a >= gt || *a == '/')
                    break;
                const char *eq = strchr(a, '='), *close = eq ? strchr(eq + 2, '"') : NULL;
                if (!eq || eq > gt || eq[1] != '"' || !close)
                    return "an attribute that is not name=\"value\"";
                if (!xml_text_ok(eq + 2, close))
                    return "a raw '<' or '&' in an attribute";
                gt = strchr(close, '>'); /* a '>' inside the value moved it */
                a = close + 1;
            }
            if (depth == 0)
                roots++;
            if (gt[-1] != '/') {
                if (depth == 64)
                    return "too deep";
                stack[depth] = name, lens[depth++] = n;
            }
        }
        x = gt + 1;
    }
    return depth ? "an element left open" : roots != 1 ? "not one root element" : NULL;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

static void junit_is_well_formed(void **state)
{
    (void)state;
    kc_bench_run r;
    char err[512];
    make_run(&r);
    assert_true(kc_bench_write_junit(&r, path("junit.xml"), err, sizeof(err)));
    char *x = slurp(path("junit.xml"));
    const char *bad = xml_error(x);
    if (bad)
        fail_msg("junit.xml is not well-formed: %s:\n%s", bad, x);
    assert_int_equal(3, count(x, "<testcase "));
    assert_int_equal(1, count(x, "<failure "));
    assert_int_equal(1, count(x, "<error "));
    ASSERT_CONTAINS(x, "tests=\"3\" failures=\"1\" errors=\"1\"");
    ASSERT_CONTAINS(x, "NVIDIA H100 &lt;HBM3&gt; &amp; co");
    ASSERT_CONTAINS(x, "&quot;quoted&quot; &apos;it&apos;");
    free(x);
    /* the checker itself catches what it should */
    assert_non_null(xml_error("<a><b></a></b>"));
    assert_non_null(xml_error("<a x=\"1 & 2\"/>"));
    assert_non_null(xml_error("<a>1 < 2</a>"));
    assert_non_null(xml_error("<a/><b/>"));
    assert_null(xml_error("<?xml version=\"1.0\"?>\n<a x=\"&lt;\"><b/>t &amp; u</a>\n"));
    if (system("command -v xmllint >/dev/null 2>&1") == 0) {
        char cmd[700];
        snprintf(cmd, sizeof(cmd), "xmllint --noout %s", path("junit.xml"));
        assert_int_equal(0, system(cmd));
    } else
        fprintf(stderr, "note: no xmllint (libxml2-utils): only kc's own XML check ran\n");
    kc_bench_run_free(&r);
}

/* Cells of a Markdown table row, counting unescaped '|'. */
static int cells(const char *line, size_t len)
{
    int bars = 0;
    for (size_t i = 0; i < len; i++)
        if (line[i] == '|' && (i == 0 || line[i - 1] != '\\'))
            bars++;
    return bars - 1;
}

static void markdown_table_shape(void **state)
{
    (void)state;
    kc_bench_run r;
    char err[512];
    make_run(&r);
    assert_true(kc_bench_write_markdown(&r, path("summary.md"), err, sizeof(err)));
    char *md = slurp(path("summary.md"));
    int rows = 0, width = -1;
    bool separator = false;
    for (char *line = md; line && *line;) {
        char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        if (len && line[0] == '|') {
            assert_true(line[len - 1] == '|');
            int n = cells(line, len);
            if (width < 0)
                width = n;
            assert_int_equal(width, n);
            if (rows == 1) { /* the separator: only dashes and colons */
                for (size_t i = 0; i < len; i++)
                    assert_non_null(strchr("|-: ", line[i]));
                separator = true;
            }
            rows++;
        }
        line = nl ? nl + 1 : NULL;
    }
    assert_true(separator);
    assert_int_equal(2 + 3, rows); /* header, separator, three benchmarks */
    assert_int_equal(13, width);   /* with the baseline's three columns */
    ASSERT_CONTAINS(md, "conv1d\\|pipe");
    ASSERT_CONTAINS(md, "**Regression**");
    free(md);
    kc_bench_run_free(&r);
}

static void text_report(void **state)
{
    (void)state;
    kc_bench_run r;
    make_run(&r);
    char *t = report_of(&r);
    ASSERT_CONTAINS(t, "REGRESSION conv1d|pipe ch=16,t_out=4096,ks=15: +100.0%");
    ASSERT_CONTAINS(t, "confidence >99.9%");
    ASSERT_CONTAINS(t, "FAILED broken n=4096");
    ASSERT_CONTAINS(t, "3 benchmarks, 1 unchanged, 1 regression, 1 failed");
    free(t);
    char buf[32];
    assert_string_equal("812.3 us", kc_bench_duration(812.3e3, buf, sizeof(buf)));
    assert_string_equal("1.23 ms", kc_bench_duration(1.234e6, buf, sizeof(buf)));
    assert_string_equal("-", kc_bench_duration(NAN, buf, sizeof(buf)));
    kc_bench_run_free(&r);
}

/* r written as JSON and read into b (to be freed) */
static void read_back(const kc_bench_run *r, kc_bench_run *b)
{
    char err[512];
    assert_true(kc_bench_write_json(r, path("steal.json"), err, sizeof(err)));
    kc_bench_run_init(b);
    if (!kc_bench_read_json(b, path("steal.json"), err, sizeof(err)))
        fail_msg("%s", err);
}

/* The stolen share and other processes' share: in the text report (and
 * so the Markdown's preamble) only when they are large, in the JSON
 * always. */
static void steal_reported(void **state)
{
    (void)state;
    kc_bench_run r, b;
    make_run(&r);
    r.steal = 0.42;
    r.peaks.steal = 0.3;
    snprintf(r.peaks.source, sizeof(r.peaks.source), "measured");
    char *t = report_of(&r);
    ASSERT_CONTAINS(t, "host       42% of the host's CPU time went to other guests of its hypervisor");
    ASSERT_CONTAINS(t, "(measured, with 30% of the host's CPU time stolen)");
    free(t);
    read_back(&r, &b);
    assert_true(fabs(b.steal - 0.42) < 1e-6);
    assert_true(b.others == -1); /* not a CPU device's run: null */
    kc_bench_run_free(&b);
    /* other processes' share, on a CPU device, the same way */
    r.others = 0.37;
    r.peaks.others = 0.2;
    t = report_of(&r);
    ASSERT_CONTAINS(t, "host       other processes kept 37% of this machine's CPU time busy during this run");
    ASSERT_CONTAINS(t, "(measured, with 30% of the host's CPU time stolen, with other processes busy for 20% of "
                       "this machine's CPU time)");
    free(t);
    read_back(&r, &b);
    assert_true(fabs(b.others - 0.37) < 1e-6);
    kc_bench_run_free(&b);
    /* below the notes' thresholds: nothing said */
    r.steal = r.peaks.steal = KC_BENCH_STEAL_NOTE / 2;
    r.others = r.peaks.others = KC_BENCH_OTHERS_NOTE / 2;
    t = report_of(&r);
    assert_null(strstr(t, "stolen"));
    assert_null(strstr(t, "hypervisor"));
    assert_null(strstr(t, "other processes"));
    free(t);
    kc_bench_run_free(&r);
}

/* /proc/stat's first line, and the share of stolen time between two */
static void cpu_steal(void **state)
{
    (void)state;
    kc_bench_cpu a, b;
    /* user nice system idle iowait irq softirq steal guest guest_nice */
    assert_true(kc_bench_cpu_parse(
        "cpu  1000 10 200 5000 40 0 50 700 0 0\ncpu0 500 5 100 2500 20 0 25 350 0 0\n", &a));
    assert_true(a.busy == 1000 + 10 + 200 + 0 + 50 && a.idle == 5040 && a.steal == 700);
    assert_true(kc_bench_cpu_parse("cpu  1600 10 260 5300 40 0 60 1130 0 0\n", &b));
    /* 600 + 60 + 10 busy, 300 idle, 430 stolen: 430 of 1400 */
    assert_true(fabs(kc_bench_cpu_steal(&a, &b) - 430.0 / 1400.0) < 1e-12);
    assert_true(kc_bench_cpu_steal(&a, &a) == -1); /* no time between them */
    assert_true(kc_bench_cpu_steal(&b, &a) == -1); /* backwards: not one machine's */
    /* other processes' share: the busy time that was not this process's */
    a.self = 300, b.self = 520;
    assert_true(fabs(kc_bench_cpu_others(&a, &b) - (670.0 - 220.0) / 1400.0) < 1e-12);
    b.self = a.self + 675; /* the clocks round apart: never below 0 */
    assert_true(kc_bench_cpu_others(&a, &b) == 0);
    b.self = a.self - 1; /* not one process's */
    assert_true(kc_bench_cpu_others(&a, &b) == -1);
    assert_true(kc_bench_cpu_others(&a, &a) == -1);
    /* and now, read back: this process is part of the machine's busy time */
    kc_bench_cpu n0, n1;
    if (kc_bench_cpu_now(&n0)) {
        for (volatile unsigned long i = 0; i < 50000000ul; i++) /* about 0.1 s of CPU time */
            ;
        assert_true(kc_bench_cpu_now(&n1));
        assert_true(n1.self > n0.self);
    }
    /* not the summary line, or too few columns (kernels before 2.6.11) */
    assert_false(kc_bench_cpu_parse("cpu0 1 2 3 4 5 6 7 8\n", &a));
    assert_false(kc_bench_cpu_parse("cpu  1 2 3 4 5 6 7\n", &a));
    assert_false(kc_bench_cpu_parse("cpu  1 2 3 x 5 6 7 8\n", &a));
    assert_false(kc_bench_cpu_parse("", &a));
    assert_false(kc_bench_cpu_parse(NULL, &a));
#if defined(__linux__)
    assert_true(kc_bench_cpu_now(&a)); /* Linux counts stolen time */
#endif
}

static void peaks_file(void **state)
{
    (void)state;
    kcrt_device_info a = {0}, b = {0};
    snprintf(a.key, sizeof(a.key), "vulkan:10005:0000:llvmpipe:1");
    snprintf(a.name, sizeof(a.name), "llvmpipe (LLVM 15.0.6, 256 bits)");
    snprintf(b.key, sizeof(b.key), "vulkan:10de:2335:NVIDIA H200:560");
    snprintf(b.name, sizeof(b.name), "NVIDIA H200");
    kc_bench_peaks p, got;
    char err[256];
    /* nothing measured: lavapipe unknown, the H200 from its datasheet */
    kc_bench_peaks_find(path("peaks.json"), &a, &got);
    assert_false(got.known);
    kc_bench_peaks_find(path("peaks.json"), &b, &got);
    assert_true(got.known);
    assert_string_equal("datasheet", got.source);
    assert_true(got.gb_per_s == 4800);
    snprintf(b.name, sizeof(b.name), "NVIDIA H100 PCIe");
    kc_bench_peaks_find(NULL, &b, &got);
    assert_true(got.gb_per_s == 2000);
    /* measured: stored per key, both kept, and a measurement beats the datasheet */
    p = (kc_bench_peaks){.known = true, .gb_per_s = 9.5, .gflop_per_s = 47.25, .when = "now", .detail = "d"};
    assert_true(kc_bench_peaks_store(path("peaks.json"), &a, &p, err, sizeof(err)));
    p.gb_per_s = 3000;
    assert_true(kc_bench_peaks_store(path("peaks.json"), &b, &p, err, sizeof(err)));
    kc_bench_peaks_find(path("peaks.json"), &a, &got);
    assert_true(got.known && got.gb_per_s == 9.5 && got.gflop_per_s == 47.25);
    assert_string_equal("measured", got.source);
    kc_bench_peaks_find(path("peaks.json"), &b, &got);
    assert_true(got.gb_per_s == 3000);
    assert_string_equal("measured", got.source);
    /* the share stolen while calibrating: kept when known, else unknown */
    assert_true(got.steal == 0);
    p.steal = 0.25;
    p.others = 0.125; /* and other processes' share, the same way */
    assert_true(kc_bench_peaks_store(path("peaks.json"), &a, &p, err, sizeof(err)));
    kc_bench_peaks_find(path("peaks.json"), &a, &got);
    assert_true(fabs(got.steal - 0.25) < 1e-6 && fabs(got.others - 0.125) < 1e-6);
    p.steal = p.others = -1;
    assert_true(kc_bench_peaks_store(path("peaks.json"), &a, &p, err, sizeof(err)));
    kc_bench_peaks_find(path("peaks.json"), &a, &got);
    assert_true(got.steal == -1 && got.others == -1);
    snprintf(b.name, sizeof(b.name), "NVIDIA H200");
    snprintf(b.key, sizeof(b.key), "vulkan:10de:2335:NVIDIA H200:other");
    kc_bench_peaks_find(path("peaks.json"), &b, &got);
    assert_string_equal("datasheet", got.source);
    assert_true(got.steal == -1 && got.others == -1);
    /* an entry from an older kc's calibration code (no revision) is not used */
    FILE *f = fopen(path("old.json"), "w");
    assert_non_null(f);
    fprintf(f, "{\"format\": \"kc-peaks/1\", \"devices\": {\"%s\": {\"gb_per_s\": 9.5, \"gflop_per_s\": 47,"
               " \"when\": \"2026-12-01T10:00:00Z\"}}}",
            a.key);
    fclose(f);
    kc_bench_peaks_find(path("old.json"), &a, &got);
    assert_false(got.known);
    assert_true(got.stale);
    assert_string_equal("2026-12-01T10:00:00Z", got.when);
    assert_true(kc_bench_peaks_store(path("old.json"), &a, &p, err, sizeof(err)));
    kc_bench_peaks_find(path("old.json"), &a, &got);
    assert_true(got.known && !got.stale);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(json_round_trip),      cmocka_unit_test(json_errors),
        cmocka_unit_test(junit_is_well_formed), cmocka_unit_test(markdown_table_shape),
        cmocka_unit_test(text_report),          cmocka_unit_test(peaks_file),
        cmocka_unit_test(steal_reported),       cmocka_unit_test(cpu_steal),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
