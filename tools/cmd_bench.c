/*
 * cmd_bench.c — kc bench: benchmark a bundle's kernels, and check them
 * against a baseline.
 *
 *   kc bench BUNDLE [--kernel K]... [--shape n=…]... [--repeat N] [--device N]
 *            [--json F] [--junit F] [--markdown F] [--record F]
 *            [--baseline F [--max-regression 10%] [--alpha A]
 *                          [--allow-other-device | --skip-other-device]]
 *            [--against OLD.kcb [--max-regression 10%] [--alpha A]]
 *   kc bench --calibrate [--device N] [--peaks F]
 *
 * The pipeline, top to bottom (run): open the device; read the baseline
 * and refuse another device's; compile kc's calibration kernels (with the
 * baseline's reference shape when there is one); --calibrate if asked;
 * measure every kernel and shape; compare, measuring a suspected
 * regression again; report; exit 1 when a regression is confirmed or a
 * benchmark failed. With --against, the baseline is another bundle (the
 * one last accepted), loaded beside this one, and each kernel is measured
 * interleaved with its namesake there instead of with the reference
 * kernel: the comparison needs nothing recorded on another day. kc_bench.h
 * tells the noise model; docs/benchmarks.md tells it for users.
 */
#include "kc_bench.h"
#include "kc_tools.h"
#include "kc_workload.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { MAX_LIST = 64 };

typedef struct bench_opts {
    const char *bundle;
    const char *kernels[MAX_LIST];
    int nkernels;
    const char *shapes[MAX_LIST];
    int nshapes;
    int device;
    const char *json, *junit, *markdown, *record, *baseline, *peaks, *calib_bundle, *against;
    const char *shapes_from; /* a KCRT_RECORD_SHAPES file */
    double max_regression, alpha;
    bool allow_other, skip_other, calibrate, verbose, smallest;
    bool tty; /* stderr is a terminal: progress on one line, redrawn */
    kc_bench_opts m;
} bench_opts;

static int fail(const char *fmt, ...) KC_PRINTF(1, 2);
static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "kc bench: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return KC_EXIT_ERROR;
}

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* ---- options --------------------------------------------------------------------- */

static bool parse_num(const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end != s && *end == '%')
        end++;
    if (!*s || *end || errno || !(v >= lo && v <= hi))
        return false;
    *out = v;
    return true;
}

static int option(bench_opts *o, int k, const char *v)
{
    double x;
    switch (k) {
    case 0:
        if (o->nkernels == MAX_LIST)
            return kc_usage_error("bench", "at most %d --kernel options", MAX_LIST);
        o->kernels[o->nkernels++] = v;
        return 0;
    case 1:
        if (!strchr(v, '=') || o->nshapes == MAX_LIST)
            return kc_usage_error("bench", "--shape takes name=value,… (like n=4096,ks=3), not '%s'", v);
        o->shapes[o->nshapes++] = v;
        return 0;
    case 2:
        if (!parse_num(v, 5, 10000, &x) || x != floor(x))
            return kc_usage_error("bench", "--repeat takes a number of rounds from 5 to 10000, not '%s'", v);
        o->m.rounds = (int)x;
        return 0;
    case 3:
        if (!parse_num(v, -1, 1000, &x) || x != floor(x))
            return kc_usage_error("bench", "--device takes a device index (see kc devices), not '%s'", v);
        o->device = (int)x;
        return 0;
    case 4: o->json = v; return 0;
    case 5: o->junit = v; return 0;
    case 6: o->markdown = v; return 0;
    case 7: o->record = v; return 0;
    case 8: o->baseline = v; return 0;
    case 9:
        if (!parse_num(v, 0, 10000, &x))
            return kc_usage_error("bench", "--max-regression takes a percentage like 10%%, not '%s'", v);
        o->max_regression = x / 100;
        return 0;
    case 10:
        if (!parse_num(v, 1e-12, 0.5, &x) || strchr(v, '%'))
            return kc_usage_error("bench",
                                  "--alpha takes a p-value like 0.01 (above 0, at most 0.5), not '%s'", v);
        o->alpha = x;
        return 0;
    case 11: o->allow_other = true; return 0;
    case 12: o->calibrate = true; return 0;
    case 13: o->peaks = v; return 0;
    case 14:
        if (!parse_num(v, 0.1, 86400, &o->m.max_seconds))
            return kc_usage_error("bench", "--max-time takes seconds per benchmark, not '%s'", v);
        return 0;
    case 15:
        if (!parse_num(v, 0, 1e15, &x) || x != floor(x))
            return kc_usage_error("bench", "--seed takes a number, not '%s'", v);
        o->m.seed = (uint64_t)x;
        return 0;
    case 16: o->m.quiet = true; return 0;
    case 17: o->verbose = true; return 0;
    case 18: o->skip_other = true; return 0;
    case 19: o->smallest = true; return 0;
    case 20: o->calib_bundle = v; return 0;
    case 21: o->shapes_from = v; return 0;
    default: o->against = v; return 0; /* the last of opts[] */
    }
}

static int parse_options(int argc, char **argv, bench_opts *o)
{
    static const kc_opt opts[] = {{"--kernel", true},
                                  {"--shape", true},
                                  {"--repeat", true},
                                  {"--device", true},
                                  {"--json", true},
                                  {"--junit", true},
                                  {"--markdown", true},
                                  {"--record", true},
                                  {"--baseline", true},
                                  {"--max-regression", true},
                                  {"--alpha", true},
                                  {"--allow-other-device", false},
                                  {"--calibrate", false},
                                  {"--peaks", true},
                                  {"--max-time", true},
                                  {"--seed", true},
                                  {"--quiet", false},
                                  {"--verbose", false},
                                  {"--skip-other-device", false},
                                  {"--smallest", false},
                                  {"--calibration-bundle", true},
                                  {"--shapes-from", true},
                                  {"--against", true}};
    kc_args a = {.cmd = "bench", .argc = argc, .argv = argv, .i = 1};
    *o = (bench_opts){.device = -1,
                      .max_regression = 0.10,
                      .alpha = 0.01,
                      .m = {.rounds = 15, .max_seconds = 20, .seed = 1}};
    for (int k; (k = kc_next_arg(&a, opts, (int)KC_COUNT(opts))) != -2;) {
        if (k == -3)
            return KC_EXIT_USAGE;
        if (k == -1) {
            if (o->bundle)
                return kc_usage_error("bench", "one bundle at a time ('%s' and '%s')", o->bundle,
                                      a.positional);
            o->bundle = a.positional;
        } else if (option(o, k, a.value))
            return KC_EXIT_USAGE;
    }
    if (!o->bundle && !o->calibrate)
        return kc_usage_error("bench", "give a bundle (or --calibrate)");
    if (!o->bundle &&
        (o->baseline || o->record || o->json || o->junit || o->markdown || o->nkernels || o->nshapes ||
         o->shapes_from))
        return kc_usage_error(
            "bench", "--calibrate alone takes only --device and --peaks; give a bundle to benchmark");
    if (o->against && (o->baseline || o->record))
        return kc_usage_error("bench", "--against compares with a bundle measured in the same run: it takes "
                                       "neither --baseline nor --record");
    if (o->shapes_from && (o->nshapes || o->smallest))
        return kc_usage_error("bench", "--shapes-from gives the shapes: not with %s",
                              o->nshapes ? "--shape" : "--smallest");
    if (o->allow_other && o->skip_other)
        return kc_usage_error("bench", "--allow-other-device and --skip-other-device contradict each other");
    o->tty = kc_is_terminal(stderr);
    return KC_EXIT_OK;
}

/* ---- the steps ------------------------------------------------------------------- */

typedef struct bench_state {
    kcrt_context *ctx;
    kcrt_bundle *b, *old; /* the bundle benchmarked, and --against's */
    kc_bench_ref *ref;
    kc_bench_run run, base; /* this run, and the baseline when there is one */
    bool have_base, skipped;
    char *peaks_path;
} bench_state;

static int read_baseline(bench_state *st, const bench_opts *o)
{
    char err[1024];
    kc_bench_run_init(&st->base);
    st->have_base = true;
    if (!kc_bench_read_json(&st->base, o->baseline, err, sizeof(err)))
        return fail("baseline: %s", err);
    const kcrt_device_info *d = kcrt_device_info_get(st->ctx);
    st->run.baseline_path = o->baseline;
    st->run.baseline_version = st->base.kc_version;
    st->run.baseline_created = st->base.created;
    st->run.baseline_device = st->base.device_key;
    if (strcmp(st->base.device_key, d->key) == 0)
        return KC_EXIT_OK;
    if (o->skip_other) {
        printf("kc bench: skipped: the baseline %s was recorded on another device\n  baseline: %s\n  this "
               "one: %s\n"
               "(--skip-other-device; record a baseline for this device with `kc bench %s --record FILE`)\n",
               o->baseline, st->base.device_key, d->key, o->bundle);
        st->skipped = true;
        return KC_EXIT_OK;
    }
    if (!o->allow_other)
        return fail("the baseline %s was recorded on another device:\n"
                    "  baseline: %s\n  this one: %s\n"
                    "Times and ratios from another device, or another driver version, do not compare: "
                    "record a baseline here with `kc bench %s --record FILE`, or compare anyway with "
                    "--allow-other-device.",
                    o->baseline, st->base.device_key, d->key, o->bundle);
    st->run.other_device = true;
    fprintf(stderr,
            "kc bench: warning: comparing with a baseline from another device (%s), as --allow-other-device "
            "asks\n",
            st->base.device_key);
    return KC_EXIT_OK;
}

static int open_all(bench_state *st, const bench_opts *o)
{
    char err[1024];
    kcrt_options ko = {"auto", o->device};
    if (kcrt_open(&st->ctx, &ko) != KCRT_OK)
        return fail("%s", kcrt_error(st->ctx));
    /* the benchmarked bundle first: where auto chose HIP or CUDA and the bundle
     * has only SPIR-V, the context moves to the GPU's Vulkan device now, and the
     * calibration kernels are then built for where the benchmarks run */
    if (o->bundle && kcrt_bundle_load(st->ctx, o->bundle, &st->b) != KCRT_OK)
        return fail("%s", kcrt_error(st->ctx));
    const kcrt_device_info *d = kcrt_device_info_get(st->ctx);
    if (!d->timestamp_valid_bits)
        return fail("'%s' has no timestamps on its compute queue, so kc bench cannot time launches on it",
                    d->name);
    int rc = o->baseline ? read_baseline(st, o) : KC_EXIT_OK;
    if (rc)
        return rc;
    if (o->against && kcrt_bundle_load(st->ctx, o->against, &st->old) != KCRT_OK)
        return fail("--against: %s", kcrt_error(st->ctx));
    if (!(st->ref = kc_bench_ref_open(st->ctx, o->calib_bundle, err, sizeof(err))))
        return fail("%s", err);
    if (st->have_base && st->base.ref_hash && strcmp(st->base.ref_hash, kc_bench_ref_hash(st->ref)) != 0)
        fprintf(
            stderr,
            "kc bench: warning: the reference kernel has changed since the baseline was recorded (kc %s): "
            "ratios may have moved for that reason alone; record the baseline again\n",
            st->base.kc_version ? st->base.kc_version : "?");
    if (!(st->peaks_path = o->peaks ? strdup(o->peaks) : kc_bench_peaks_default_path(err, sizeof(err))))
        fprintf(stderr, "kc bench: warning: %s\n", err);
    return KC_EXIT_OK;
}

static int calibrate(bench_state *st, const bench_opts *o)
{
    char err[1024];
    kc_bench_peaks p;
    const kcrt_device_info *d = kcrt_device_info_get(st->ctx);
    if (!o->m.quiet || !o->bundle)
        fprintf(stderr, "kc bench: calibrating %s with kc's copy and FMA kernels, every variant:\n", d->name);
    if (!kc_bench_calibrate(st->ref, o->m.quiet && o->bundle, &p, err, sizeof(err)))
        return fail("calibration: %s", err);
    printf("device     %s\nkey        %s\ncopy       %.2f GB/s\nfma        %.2f GFLOP/s\nhow        %s\n",
           d->name, d->key, p.gb_per_s, p.gflop_per_s, p.detail);
    if (p.steal >= KC_BENCH_STEAL_NOTE)
        printf(
            "stolen     %.0f%% of the host's CPU time went to other guests of its hypervisor meanwhile%s\n",
            100 * p.steal,
            d->type == KCRT_DEVICE_CPU ? ": these peaks read low; calibrate again when it is idle" : "");
    if (p.others >= KC_BENCH_OTHERS_NOTE)
        printf("busy       other processes kept %.0f%% of this machine's CPU time busy meanwhile: these peaks "
               "read low; calibrate again when it is idle\n",
               100 * p.others);
    if (!st->peaks_path)
        return fail("nowhere to store the peaks: give --peaks FILE");
    if (!kc_bench_peaks_store(st->peaks_path, d, &p, err, sizeof(err)))
        return fail("%s", err);
    printf("stored in  %s\n", st->peaks_path);
    return KC_EXIT_OK;
}

static void describe_run(bench_state *st, const bench_opts *o)
{
    kc_bench_run *r = &st->run;
    const kcrt_device_info *d = kcrt_device_info_get(st->ctx);
    char when[32];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
    r->kc_version = KC_VERSION;
    r->created = kc_arena_strdup(&r->arena, when);
    r->bundle = o->bundle;
    r->package = kcrt_bundle_meta(st->b, "package");
    r->device_key = d->key;
    r->device_name = d->name;
    r->device_family = d->family;
    r->backend = kcrt_backend_name(st->ctx);
    r->ref_kernel = kc_bench_ref_kernel(st->ref);
    r->ref_hash = kc_bench_ref_hash(st->ref);
    r->max_regression = o->max_regression;
    r->alpha = o->alpha;
    r->rounds = o->m.rounds;
    kc_bench_peaks_find(st->peaks_path, d, &r->peaks);
    if (st->old) {
        r->against = true;
        r->baseline_path = o->against;
        r->baseline_version = kcrt_bundle_meta(st->old, "kc_version");
        r->baseline_created = kcrt_bundle_meta(st->old, "created");
        r->baseline_device = d->key;
    }
}

static bool wanted(const bench_opts *o, const char *kernel)
{
    if (!o->nkernels)
        return true;
    for (int i = 0; i < o->nkernels; i++)
        if (strcmp(o->kernels[i], kernel) == 0)
            return true;
    return false;
}

/* --shapes-from: each wanted kernel at each shape the file records for it,
 * once, in the file's order; lines of other kernels are noted. */
static int plan_recorded(bench_state *st, const bench_opts *o)
{
    kc_recorded rec;
    char err[1024];
    if (!kc_workload_read_recorded(o->shapes_from, &rec, err, sizeof(err)))
        return fail("%s", err);
    int taken = 0;
    for (int i = 0; i < rec.n; i++) {
        const kc_recorded_shape *r = &rec.lines[i];
        bool known = false, seen = false;
        for (int j = 0; j < kcrt_bundle_kernel_count(st->b) && !known; j++)
            known = strcmp(kcrt_bundle_kernel_info(st->b, j)->name, r->kernel) == 0;
        if (!known || !wanted(o, r->kernel))
            continue;
        taken++;
        for (int k = 0; k < i && !seen; k++)
            seen = strcmp(rec.lines[k].kernel, r->kernel) == 0 && strcmp(rec.lines[k].shape, r->shape) == 0;
        if (!seen)
            kc_bench_run_add(&st->run, r->kernel, r->shape);
    }
    if (taken < rec.n && !o->m.quiet)
        fprintf(stderr, "kc bench: note: %d of the %d lines of %s are shapes of kernels not measured here: "
                "skipped\n", rec.n - taken, rec.n, o->shapes_from);
    kc_workload_recorded_free(&rec);
    if (!st->run.results.len)
        return fail("nothing to measure: %s records no shape of a kernel of %s%s", o->shapes_from, o->bundle,
                    o->nkernels ? " named by --kernel" : "");
    return KC_EXIT_OK;
}

/* The benchmark list: each wanted kernel at each of its shapes (or
 * --shape's, or --shapes-from's; its cheapest alone with --smallest). */
static int plan_run(bench_state *st, const bench_opts *o)
{
    int n = kcrt_bundle_kernel_count(st->b);
    for (int i = 0; i < o->nkernels; i++) {
        bool found = false;
        for (int j = 0; j < n && !found; j++)
            found = strcmp(kcrt_bundle_kernel_info(st->b, j)->name, o->kernels[i]) == 0;
        if (!found)
            return fail("the bundle %s has no kernel '%s' (see kc info %s)", o->bundle, o->kernels[i],
                        o->bundle);
    }
    if (o->shapes_from)
        return plan_recorded(st, o);
    for (int j = 0; j < n; j++) {
        const kcrt_kernel_info *ki = kcrt_bundle_kernel_info(st->b, j);
        if (!wanted(o, ki->name))
            continue;
        if (!o->nshapes && !ki->nshapes)
            fprintf(stderr,
                    "kc bench: note: %s has no shapes in kc.yaml; give --kernel %s --shape … to measure it\n",
                    ki->name, ki->name);
        if (o->smallest && !o->nshapes && ki->nshapes) {
            kc_bench_run_add(&st->run, ki->name,
                             ki->shapes[kc_workload_smallest_shape(ki, KC_WORKLOAD_BENCH_MIN_WORK)]);
            continue;
        }
        for (int s = 0; s < (o->nshapes ? o->nshapes : ki->nshapes); s++)
            kc_bench_run_add(&st->run, ki->name, o->nshapes ? o->shapes[s] : ki->shapes[s]);
    }
    if (!st->run.results.len)
        return fail("nothing to measure: no kernel of %s has shapes in kc.yaml (give --kernel K --shape …)",
                    o->bundle);
    return KC_EXIT_OK;
}

static void progress(const bench_opts *o, int i, int n, const kc_bench_result *res, const char *what)
{
    if (o->m.quiet)
        return;
    if (o->tty)
        fprintf(stderr, "\r[%d/%d] %s %s %s\033[K", i + 1, n, what, res->kernel, res->shape);
    else /* a log (CI): a line per step, so that a long run shows where it is */
        fprintf(stderr, "kc bench: [%d/%d] %s %s %s\n", i + 1, n, what, res->kernel, res->shape);
}

/* Compares one result with the baseline; a suspected regression is
 * measured again with fresh samples and only believed when those agree. */
static void compare(bench_state *st, const bench_opts *o, kcrt_kernel *k, kc_bench_result *res, int i)
{
    const kc_bench_result *b = kc_bench_find(&st->base, res->kernel, res->shape);
    kc_bench_compare *c = &res->cmp;
    if (!b || res->error)
        return;
    *c = (kc_bench_compare){.have = true,
                            .base_ratio = b->ratio.median,
                            .base_median_ns = b->time.median,
                            .base_ref_ns = b->ref_time.median,
                            .base_variant = b->variant};
    kc_bench_judge(res->ratios, res->rounds, b->ratios, b->rounds, o->max_regression, o->alpha, &c->first);
    c->final = c->first;
    if (b->variant && res->variant && strcmp(b->variant, res->variant) != 0)
        c->note = kc_arena_printf(&st->run.arena, "the variant changed (baseline: %s)", b->variant);
    else if (b->source_hash && res->source_hash && strcmp(b->source_hash, res->source_hash) != 0)
        c->note = "the kernel's source changed since the baseline";
    if (c->first.verdict != KC_BENCH_REGRESSION)
        return;
    progress(o, i, st->run.results.len, res, "measuring again");
    kc_bench_result again = *res;
    again.error = NULL;
    kc_bench_measure(st->ref, k, res->ref_shape, &o->m, &st->run.arena, &again);
    if (again.error)
        return; /* keep the first verdict */
    double seconds = res->seconds + again.seconds;
    again.cmp = *c;
    *res = again;
    res->seconds = seconds;
    c = &res->cmp;
    c->remeasured = true;
    kc_bench_judge(res->ratios, res->rounds, b->ratios, b->rounds, o->max_regression, o->alpha, &c->final);
}

/* --against: the verdict of one result's interleaved rounds; a suspected
 * regression is measured again, as above. */
static void compare_against(bench_state *st, const bench_opts *o, kcrt_kernel *k, kcrt_kernel *old,
                            kc_bench_result *res, int i)
{
    kc_bench_compare *c = &res->cmp;
    if (res->error)
        return;
    *c = (kc_bench_compare){.have = true, .base_variant = res->ref_variant};
    kc_bench_judge_against(res, o->max_regression, o->alpha, &c->first);
    c->final = c->first;
    if (c->first.verdict == KC_BENCH_REGRESSION) {
        progress(o, i, st->run.results.len, res, "measuring again");
        kc_bench_result again = *res;
        again.error = NULL;
        kc_bench_measure_against(k, old, &o->m, &st->run.arena, &again);
        if (!again.error) {
            again.seconds += res->seconds;
            again.cmp = *c;
            *res = again;
            c = &res->cmp;
            c->remeasured = true;
            kc_bench_judge_against(res, o->max_regression, o->alpha, &c->final);
        }
    }
    c->base_ratio = 1;
    c->base_median_ns = res->ref_time.median;
    c->base_variant = res->ref_variant;
    if (res->ref_variant && res->variant && strcmp(res->ref_variant, res->variant) != 0)
        c->note =
            kc_arena_printf(&st->run.arena, "the variant differs (baseline bundle: %s)", res->ref_variant);
}

static bool has_kernel(const kcrt_bundle *b, const char *name)
{
    for (int j = 0; j < kcrt_bundle_kernel_count(b); j++)
        if (strcmp(kcrt_bundle_kernel_info(b, j)->name, name) == 0)
            return true;
    return false;
}

/* One benchmark with --against: interleaved with the baseline bundle's
 * kernel of that name, or with the reference kernel when it has none. */
static void measure_against(bench_state *st, const bench_opts *o, kcrt_kernel *k, kc_bench_result *res, int i)
{
    kcrt_kernel *old = NULL;
    if (has_kernel(st->old, res->kernel) && kcrt_kernel_get(st->old, res->kernel, &old) != KCRT_OK)
        old = NULL;
    if (!old) {
        kc_bench_measure(st->ref, k, NULL, &o->m, &st->run.arena, res);
        return; /* "new": nothing to compare with */
    }
    kc_bench_measure_against(k, old, &o->m, &st->run.arena, res);
    compare_against(st, o, k, old, res, i);
}

static void measure_all(bench_state *st, const bench_opts *o)
{
    kc_bench_run *r = &st->run;
    for (int i = 0; i < r->results.len; i++) {
        kc_bench_result *res = KC_BENCH_RESULT(r, i);
        kcrt_kernel *k;
        progress(o, i, r->results.len, res, "measuring");
        if (kcrt_kernel_get(st->b, res->kernel, &k) != KCRT_OK) {
            res->error = kc_arena_strdup(&r->arena, kcrt_error(st->ctx));
            continue;
        }
        if (st->old) {
            measure_against(st, o, k, res, i);
        } else {
            /* against the reference at the baseline's size, so that the ratios compare */
            const kc_bench_result *b =
                st->have_base ? kc_bench_find(&st->base, res->kernel, res->shape) : NULL;
            kc_bench_measure(st->ref, k, b ? b->ref_shape : NULL, &o->m, &r->arena, res);
            if (st->have_base)
                compare(st, o, k, res, i);
        }
        if (!res->error)
            res->roofline =
                kc_bench_roofline(&r->peaks, res->bytes, res->flops, res->time.median, &res->bound);
    }
    if (!o->m.quiet && o->tty)
        fprintf(stderr, "\r\033[K");
}

/* Entries of the baseline this run did not measure, when it measured everything. */
static void unmeasured(const bench_state *st, const bench_opts *o)
{
    if (o->nkernels)
        return;
    /* --against: kernels of the baseline bundle that this one lacks (removed, renamed) */
    for (int j = 0; st->old && j < kcrt_bundle_kernel_count(st->old); j++) {
        const char *name = kcrt_bundle_kernel_info(st->old, j)->name;
        if (!has_kernel(st->b, name))
            fprintf(stderr,
                    "kc bench: note: the baseline bundle %s has a kernel %s, which this bundle lacks\n",
                    o->against, name);
    }
    if (!st->have_base || o->nshapes || o->smallest)
        return;
    for (int i = 0; i < st->base.results.len; i++) {
        const kc_bench_result *b = KC_BENCH_RESULT(&st->base, i);
        if (!kc_bench_find(&st->run, b->kernel, b->shape))
            fprintf(stderr,
                    "kc bench: note: the baseline has %s %s, which this bundle no longer benchmarks\n",
                    b->kernel, b->shape);
    }
}

static int write_files(bench_state *st, const bench_opts *o)
{
    char err[1024];
    int rc = KC_EXIT_OK;
    if (o->json && !kc_bench_write_json(&st->run, o->json, err, sizeof(err)))
        rc = fail("%s", err);
    if (o->record && !kc_bench_write_json(&st->run, o->record, err, sizeof(err)))
        rc = fail("%s", err);
    if (o->junit && !kc_bench_write_junit(&st->run, o->junit, err, sizeof(err)))
        rc = fail("%s", err);
    if (o->markdown && !kc_bench_write_markdown(&st->run, o->markdown, err, sizeof(err)))
        rc = fail("%s", err);
    if (o->record && rc == KC_EXIT_OK)
        fprintf(stderr, "kc bench: recorded the baseline %s\n", o->record);
    return rc;
}

static int run(bench_state *st, const bench_opts *o)
{
    double start = now_seconds();
    int rc = open_all(st, o);
    if (!rc && st->skipped)
        return KC_EXIT_OK;
    if (!rc && o->calibrate)
        rc = calibrate(st, o);
    if (rc || !o->bundle)
        return rc;
    describe_run(st, o);
    if ((rc = plan_run(st, o)))
        return rc;
    kc_bench_cpu before, after;
    bool host = kc_bench_cpu_now(&before);
    measure_all(st, o);
    st->run.elapsed = now_seconds() - start;
    if (host && kc_bench_cpu_now(&after)) {
        st->run.steal = kc_bench_cpu_steal(&before, &after);
        if (kcrt_device_info_get(st->ctx)->type == KCRT_DEVICE_CPU)
            st->run.others = kc_bench_cpu_others(&before, &after);
    }
    kc_bench_report_text(&st->run, stdout, o->verbose);
    unmeasured(st, o);
    rc = write_files(st, o);
    int n[KC_BENCH_FAILED + 1];
    kc_bench_count(&st->run, n);
    if (n[KC_BENCH_REGRESSION] || n[KC_BENCH_FAILED])
        rc = KC_EXIT_ERROR;
    return rc;
}

int kc_cmd_bench(int argc, char **argv)
{
    bench_opts o;
    bench_state st = {0};
    kc_bench_run_init(&st.run);
    int rc = parse_options(argc, argv, &o);
    if (rc == KC_EXIT_OK)
        rc = run(&st, &o);
    kc_bench_ref_close(st.ref);
    if (st.b)
        kcrt_bundle_free(st.b);
    if (st.old)
        kcrt_bundle_free(st.old);
    kcrt_close(st.ctx);
    kc_bench_run_free(&st.run);
    if (st.have_base)
        kc_bench_run_free(&st.base);
    free(st.peaks_path);
    return rc;
}
