/*
 * bench_results.c — a run's results as JSON, baselines, and the verdict of
 * a comparison.
 *
 * One format serves both: `--json FILE` writes the run, `--record FILE`
 * writes the same document as a baseline, and `--baseline FILE` reads any
 * of them back. docs/benchmarks.md lists its keys:
 *
 *   {"format": "kc-bench/1", "kc_version", "created", "bundle", "package",
 *    "device": {"key", "name", "family", "backend"},
 *    "reference": {"kernel", "source_hash"},
 *    "peaks": {"gb_per_s", "gflop_per_s", "source", "detail", "steal"} | null,
 *    "host": {"steal", "others"}  (the shares of CPU time stolen during the run and, on a CPU
 *             device, kept busy by other processes; null unknown),
 *    "settings": {"rounds", "max_regression", "alpha"},
 *    "baseline": {"path", "kc_version", "device_key", "created", "other_device",
 *                 "bundle" (true: --against's bundle, measured in this run)} | null,
 *    "benchmarks": [{"kernel", "shape", "variant", "why", "source_hash",
 *        "rounds", "per_round", "median_ns", "q1_ns", "q3_ns", "spread",
 *        "samples", "ratio_median", "ratio_spread", "reference_shape",
 *        "reference_median_ns",
 *        "bytes", "flops", "gb_per_s", "gflop_per_s", "roofline", "bound",
 *        "copy_ns", "vs_copy",
 *        "times_ns": […], "reference_ns": […], "ratios": […],
 *        "comparison": {…} | absent, "error": "…" | absent}],
 *    "summary": {"regression": n, "unchanged": n, …}}
 *
 * The verdict (kc_bench_judge): change = median ratio now / median ratio
 * in the baseline - 1, and the one-sided Mann–Whitney p-value in the
 * direction of the change. Beyond the threshold and p < alpha: a
 * regression (or faster); beyond the threshold but p >= alpha: noisy;
 * otherwise unchanged. cmd_bench.c measures a regression again before it
 * believes it. With --against (kc_bench_judge_against) the same test runs
 * on the kernel's times against the baseline bundle's, from one run.
 */
#include "kc_bench.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const verdict_names[] = {"new", "unchanged", "noisy", "faster", "regression", "failed"};

const char *kc_bench_verdict_name(kc_bench_verdict v)
{
    return v >= KC_BENCH_NEW && v <= KC_BENCH_FAILED ? verdict_names[v] : "?";
}

void kc_bench_run_init(kc_bench_run *r)
{
    memset(r, 0, sizeof(*r));
    kc_arena_init(&r->arena);
    r->max_regression = 0.10;
    r->alpha = 0.01;
    r->steal = r->peaks.steal = r->others = r->peaks.others = -1;
}

void kc_bench_run_free(kc_bench_run *r)
{
    kc_arena_free(&r->arena);
    memset(r, 0, sizeof(*r));
}

kc_bench_result *kc_bench_run_add(kc_bench_run *r, const char *kernel, const char *shape)
{
    kc_bench_result *res = KC_NEW(&r->arena, kc_bench_result);
    res->kernel = kc_arena_strdup(&r->arena, kernel);
    res->shape = kc_arena_strdup(&r->arena, shape);
    res->bytes = res->flops = res->gb_per_s = res->gflop_per_s = res->roofline = -1;
    res->copy_ns = res->vs_copy = -1;
    kc_vec_push(&r->arena, &r->results, res);
    return res;
}

void kc_bench_count(const kc_bench_run *r, int counts[KC_BENCH_FAILED + 1])
{
    memset(counts, 0, sizeof(int) * (KC_BENCH_FAILED + 1));
    for (int i = 0; i < r->results.len; i++) {
        const kc_bench_result *res = KC_BENCH_RESULT(r, i);
        counts[res->error ? KC_BENCH_FAILED : res->cmp.final.verdict]++;
    }
}

const kc_bench_result *kc_bench_find(const kc_bench_run *b, const char *kernel, const char *shape)
{
    for (int i = 0; i < b->results.len; i++) {
        const kc_bench_result *res = KC_BENCH_RESULT(b, i);
        if (strcmp(res->kernel, kernel) == 0 && strcmp(res->shape, shape) == 0 && !res->error)
            return res;
    }
    return NULL;
}

void kc_bench_judge(const double *now, int nnow, const double *base, int nbase, double max_regression,
                    double alpha, kc_bench_check *out)
{
    kc_stats_summary sn, sb;
    kc_stats_mwu m;
    kc_stats_summarize(now, nnow, &sn);
    kc_stats_summarize(base, nbase, &sb);
    kc_stats_mann_whitney(now, nnow, base, nbase, &m);
    *out = (kc_bench_check){.n_now = nnow, .n_base = nbase, .u = m.u_x, .z = m.z};
    out->change = sn.median / sb.median - 1;
    out->p = out->change > 0 ? m.p_greater : m.p_less;
    out->confidence = 1 - out->p;
    bool beyond = fabs(out->change) > max_regression, significant = out->p < alpha;
    if (!(sn.median > 0) || !(sb.median > 0))
        out->verdict = KC_BENCH_NOISY;
    else if (!beyond)
        out->verdict = KC_BENCH_UNCHANGED;
    else if (!significant)
        out->verdict = KC_BENCH_NOISY;
    else
        out->verdict = out->change > 0 ? KC_BENCH_REGRESSION : KC_BENCH_FASTER;
}

void kc_bench_judge_against(const kc_bench_result *res, double max_regression, double alpha,
                            kc_bench_check *out)
{
    double *now = malloc((size_t)res->rounds * sizeof(double));
    if (!now) {
        *out = (kc_bench_check){.verdict = KC_BENCH_NOISY};
        return;
    }
    for (int i = 0; i < res->rounds; i++) {
        double sum = 0;
        for (int j = 0; j < res->per_round; j++)
            sum += res->times[(size_t)i * res->per_round + j];
        now[i] = sum / res->per_round;
    }
    kc_bench_judge(now, res->rounds, res->ref, res->rounds + 1, max_regression, alpha, out);
    free(now);
}

/* ---- writing --------------------------------------------------------------------- */

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

/* A number, or null where it is unknown (negative or NaN). */
static json_t *num_or_null(double v)
{
    return v >= 0 && isfinite(v) ? json_real(v) : json_null();
}

static json_t *array_of(const double *x, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, json_real(x[i]));
    return a;
}

static json_t *check_json(const kc_bench_check *c)
{
    return json_pack("{s:o, s:o, s:o, s:f, s:f, s:i, s:i, s:s}", "change",
                     isfinite(c->change) ? json_real(c->change) : json_null(), "p_value", num_or_null(c->p),
                     "confidence", num_or_null(c->confidence), "u", c->u, "z", c->z, "samples", c->n_now,
                     "baseline_samples", c->n_base, "verdict", kc_bench_verdict_name(c->verdict));
}

static json_t *comparison_json(const kc_bench_compare *c)
{
    json_t *o = check_json(&c->final);
    json_object_set_new(o, "baseline_ratio_median", num_or_null(c->base_ratio));
    json_object_set_new(o, "baseline_median_ns", num_or_null(c->base_median_ns));
    json_object_set_new(o, "baseline_reference_median_ns", num_or_null(c->base_ref_ns));
    json_object_set_new(o, "baseline_variant", str_or_null(c->base_variant));
    json_object_set_new(o, "remeasured", json_boolean(c->remeasured));
    if (c->remeasured)
        json_object_set_new(o, "first", check_json(&c->first));
    if (c->note)
        json_object_set_new(o, "note", json_string(c->note));
    return o;
}

static json_t *result_json(const kc_bench_run *r, const kc_bench_result *res)
{
    json_t *o = json_pack("{s:s, s:s}", "kernel", res->kernel, "shape", res->shape);
    if (res->error) {
        json_object_set_new(o, "error", json_string(res->error));
        json_object_set_new(o, "verdict", json_string("failed"));
        return o;
    }
    json_object_set_new(o, "variant", str_or_null(res->variant));
    json_object_set_new(o, "why", str_or_null(res->why));
    json_object_set_new(o, "source_hash", str_or_null(res->source_hash));
    json_object_set_new(o, "rounds", json_integer(res->rounds));
    json_object_set_new(o, "per_round", json_integer(res->per_round));
    json_object_set_new(o, "samples", json_integer(res->ntimes));
    json_object_set_new(o, "median_ns", num_or_null(res->time.median));
    json_object_set_new(o, "q1_ns", num_or_null(res->time.q1));
    json_object_set_new(o, "q3_ns", num_or_null(res->time.q3));
    json_object_set_new(o, "min_ns", num_or_null(res->time.min));
    json_object_set_new(o, "max_ns", num_or_null(res->time.max));
    json_object_set_new(o, "spread", num_or_null(res->time.spread));
    json_object_set_new(o, "ratio_median", num_or_null(res->ratio.median));
    json_object_set_new(o, "ratio_spread", num_or_null(res->ratio.spread));
    json_object_set_new(o, "reference_shape", str_or_null(res->ref_shape));
    json_object_set_new(o, "reference_median_ns", num_or_null(res->ref_time.median));
    json_object_set_new(o, "bytes", num_or_null(res->bytes));
    json_object_set_new(o, "flops", num_or_null(res->flops));
    json_object_set_new(o, "gb_per_s", num_or_null(res->gb_per_s));
    json_object_set_new(o, "gflop_per_s", num_or_null(res->gflop_per_s));
    json_object_set_new(o, "roofline", num_or_null(res->roofline));
    json_object_set_new(o, "bound", str_or_null(res->bound));
    json_object_set_new(o, "copy_ns", num_or_null(res->copy_ns));
    json_object_set_new(o, "vs_copy", num_or_null(res->vs_copy));
    json_object_set_new(o, "seconds", json_real(res->seconds));
    json_object_set_new(o, "verdict", json_string(kc_bench_verdict_name(res->cmp.final.verdict)));
    if (res->cmp.have)
        json_object_set_new(o, "comparison", comparison_json(&res->cmp));
    json_object_set_new(o, "ratios", array_of(res->ratios, res->rounds));
    json_object_set_new(o, "times_ns", array_of(res->times, res->ntimes));
    json_object_set_new(o, "reference_ns", array_of(res->ref, res->rounds + 1));
    (void)r;
    return o;
}

static json_t *run_json(const kc_bench_run *r)
{
    json_t *o = json_pack("{s:s, s:o, s:o, s:o, s:o}", "format", KC_BENCH_FORMAT, "kc_version",
                          str_or_null(r->kc_version), "created", str_or_null(r->created), "bundle",
                          str_or_null(r->bundle), "package", str_or_null(r->package));
    json_object_set_new(o, "device",
                        json_pack("{s:o, s:o, s:o, s:o}", "key", str_or_null(r->device_key), "name",
                                  str_or_null(r->device_name), "family", str_or_null(r->device_family),
                                  "backend", str_or_null(r->backend)));
    json_object_set_new(o, "reference",
                        json_pack("{s:o, s:o}", "kernel", str_or_null(r->ref_kernel), "source_hash",
                                  str_or_null(r->ref_hash)));
    json_object_set_new(o, "peaks",
                        r->peaks.known
                            ? json_pack("{s:f, s:f, s:s, s:s, s:o}", "gb_per_s", r->peaks.gb_per_s,
                                        "gflop_per_s", r->peaks.gflop_per_s, "source", r->peaks.source,
                                        "detail", r->peaks.detail, "steal", num_or_null(r->peaks.steal))
                            : json_null());
    json_object_set_new(o, "host", json_pack("{s:o,s:o}", "steal", num_or_null(r->steal), "others",
                                                  num_or_null(r->others)));
    json_object_set_new(o, "settings",
                        json_pack("{s:i, s:f, s:f}", "rounds", r->rounds, "max_regression", r->max_regression,
                                  "alpha", r->alpha));
    json_object_set_new(o, "baseline",
                        r->baseline_path
                            ? json_pack("{s:s, s:o, s:o, s:o, s:b, s:b}", "path", r->baseline_path,
                                        "kc_version", str_or_null(r->baseline_version), "device_key",
                                        str_or_null(r->baseline_device), "created",
                                        str_or_null(r->baseline_created), "other_device", r->other_device,
                                        "bundle", r->against)
                            : json_null());
    json_t *list = json_array();
    for (int i = 0; i < r->results.len; i++)
        json_array_append_new(list, result_json(r, KC_BENCH_RESULT(r, i)));
    json_object_set_new(o, "benchmarks", list);
    int counts[KC_BENCH_FAILED + 1];
    kc_bench_count(r, counts);
    json_t *summary = json_object();
    for (int v = KC_BENCH_NEW; v <= KC_BENCH_FAILED; v++)
        json_object_set_new(summary, kc_bench_verdict_name((kc_bench_verdict)v), json_integer(counts[v]));
    json_object_set_new(summary, "seconds", json_real(r->elapsed));
    json_object_set_new(o, "summary", summary);
    return o;
}

bool kc_bench_write_json(const kc_bench_run *r, const char *path, char *err, size_t errlen)
{
    json_t *o = run_json(r);
    char *text = json_dumps(o, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(7));
    json_decref(o);
    size_t n = text ? strlen(text) : 0;
    char *withnl = text ? realloc(text, n + 2) : NULL;
    if (withnl)
        withnl[n] = '\n', withnl[n + 1] = 0, text = withnl;
    bool ok = text && kc_write_file_atomic(path, text, n + 1) == 0;
    if (!ok)
        snprintf(err, errlen, "cannot write %s: %s", path, text ? strerror(errno) : "out of memory");
    free(text);
    return ok;
}

/* ---- reading --------------------------------------------------------------------- */

static const char *get_str(kc_bench_run *b, json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? kc_arena_strdup(&b->arena, s) : NULL;
}

static double get_num(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : -1;
}

/* A JSON array of numbers into the arena; -1 when it is not one. */
static int get_array(kc_bench_run *b, json_t *o, const char *key, double **out)
{
    json_t *a = json_object_get(o, key);
    if (!json_is_array(a))
        return -1;
    int n = (int)json_array_size(a);
    *out = kc_arena_alloc(&b->arena, (size_t)(n ? n : 1) * sizeof(double));
    for (int i = 0; i < n; i++) {
        if (!json_is_number(json_array_get(a, (size_t)i)))
            return -1;
        (*out)[i] = json_number_value(json_array_get(a, (size_t)i));
    }
    return n;
}

static bool read_result(kc_bench_run *b, json_t *o, int index, char *err, size_t errlen)
{
    const char *kernel = json_string_value(json_object_get(o, "kernel")),
               *shape = json_string_value(json_object_get(o, "shape"));
    if (!kernel || !shape) {
        snprintf(err, errlen, "benchmarks[%d] has no kernel or shape", index);
        return false;
    }
    kc_bench_result *res = kc_bench_run_add(b, kernel, shape);
    if ((res->error = get_str(b, o, "error")))
        return true;
    res->variant = get_str(b, o, "variant");
    res->source_hash = get_str(b, o, "source_hash");
    res->ref_shape = get_str(b, o, "reference_shape");
    res->rounds = get_array(b, o, "ratios", &res->ratios);
    res->ntimes = get_array(b, o, "times_ns", &res->times);
    int nref = get_array(b, o, "reference_ns", &res->ref);
    if (res->rounds < 1 || res->ntimes < 0 || nref < 0) {
        snprintf(err, errlen,
                 "benchmarks[%d] (%s %s) needs the arrays ratios (not empty), times_ns and reference_ns",
                 index, kernel, shape);
        return false;
    }
    for (int i = 0; i < res->rounds; i++)
        if (!(res->ratios[i] > 0)) {
            snprintf(err, errlen, "benchmarks[%d] (%s %s): ratios[%d] is not a positive number", index,
                     kernel, shape, i);
            return false;
        }
    res->per_round = (int)get_num(o, "per_round");
    kc_stats_summarize(res->ratios, res->rounds, &res->ratio);
    kc_stats_summarize(res->times, res->ntimes, &res->time);
    kc_stats_summarize(res->ref, nref, &res->ref_time);
    return true;
}

bool kc_bench_read_json(kc_bench_run *b, const char *path, char *err, size_t errlen)
{
    json_error_t e;
    json_t *root = json_load_file(path, 0, &e);
    if (!root) {
        snprintf(err, errlen, "%s:%d:%d: %s", path, e.line, e.column, e.text);
        return false;
    }
    const char *fmt = json_string_value(json_object_get(root, "format"));
    json_t *dev = json_object_get(root, "device"), *ref = json_object_get(root, "reference"),
           *list = json_object_get(root, "benchmarks");
    bool ok = fmt && strcmp(fmt, KC_BENCH_FORMAT) == 0 && json_is_object(dev) && json_is_array(list);
    if (!ok)
        snprintf(err, errlen, "%s is not a kc bench results file (format \"%s\" with device and benchmarks)",
                 path, KC_BENCH_FORMAT);
    if (ok) {
        b->kc_version = get_str(b, root, "kc_version");
        b->created = get_str(b, root, "created");
        b->device_key = get_str(b, dev, "key");
        b->device_name = get_str(b, dev, "name");
        b->ref_kernel = get_str(b, ref, "kernel");
        b->ref_hash = get_str(b, ref, "source_hash");
        b->steal = get_num(json_object_get(root, "host"), "steal");
        b->others = get_num(json_object_get(root, "host"), "others");
        if (!b->device_key) {
            snprintf(err, errlen, "%s has no device key", path);
            ok = false;
        }
    }
    for (size_t i = 0; ok && i < json_array_size(list); i++) {
        ok = read_result(b, json_array_get(list, i), (int)i, err, errlen);
        if (!ok) {
            size_t used = strlen(err);
            snprintf(err + used, errlen - used, " in %s", path);
        }
    }
    json_decref(root);
    return ok;
}
