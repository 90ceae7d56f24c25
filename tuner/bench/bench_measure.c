/*
 * bench_measure.c — how kc bench measures: kc's calibration kernels, the
 * reference kernel interleaved with each benchmark, and --calibrate.
 *
 * The calibration kernels (bench/calibrate/, the .kc files) are built into kc as
 * source and compiled when kc bench starts (a few milliseconds), into a
 * temporary bundle that libkcrt loads like any other: so they are kc's own
 * code on every device, and no file has to be found at run time.
 *
 * One benchmark is measured in rounds, with device timestamps
 * (kcrt_time_launch):
 *
 *     R0  K1  R1  K2  R2  …  Kn  Rn
 *
 * Ki is one submission of p launches of the kernel, Ri one of q launches
 * of the reference kernel; each round's sample is the ratio
 *
 *     mean(Ki) / sqrt(mean(R(i-1)) · mean(Ri)),
 *
 * the kernel against the reference measured just before and just after
 * it, so that a change in the machine's speed between rounds (another
 * process, a clock change) cancels to first order. p and q are chosen so
 * that each submission lasts about 50 ms (at least 3 launches, at most
 * 200): long enough to average over many of a busy CPU's scheduler slices
 * (on lavapipe, 10 ms windows let a loaded machine move the ratios by
 * 30-50%, 50 ms ones by 13%), short on a GPU. Fewer rounds and launches
 * are taken when one benchmark would otherwise take longer than its time
 * budget. The reference kernel is sized per benchmark (ref_match).
 */
#include "kc_bench.h"
#include "kc_build.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { MIN_PER = 3, MAX_PER = 200, MIN_ROUNDS = 5 };
#define ROUND_NS 50e6                /* a submission's target length */
#define REF_MAX_N ((int64_t)1 << 22) /* float4s: 64 MiB per buffer */

struct kc_bench_ref {
    kcrt_context *ctx;
    kcrt_bundle *bundle;
    kcrt_kernel *k;
    kcrt_buffer *x, *y; /* cap float4s each */
    int64_t cap, max_n;
};

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* ---- the calibration bundle ------------------------------------------------------ */

/* Writes the built-in sources to a fresh directory, builds every variant
 * for this device's target (spirv on Vulkan, gfxNNNN on HIP, sm_NN on CUDA:
 * the last two need a kc with LLVM) into dir/calibrate.kcb and loads it;
 * the directory is removed again. */
static kcrt_bundle *build_calibration(kcrt_context *ctx, char *err, size_t errlen)
{
    const char *target = kcrt_device_info_get(ctx)->target;
    if (!*target)
        target = "spirv";
    if (!kc_target_find(target)) {
        snprintf(
            err, errlen,
            "this kc cannot compile its calibration kernels for %s (%s): it was built without LLVM; build "
            "them where kc has it (kc build bench/calibrate --all-variants -t %s -o calibrate.kcb) and give "
            "--calibration-bundle calibrate.kcb",
            target, kcrt_device_info_get(ctx)->name, target);
        return NULL;
    }
    char *dir = kc_make_temp_dir("kc-bench");
    if (!dir) {
        snprintf(err, errlen, "cannot make a temporary directory: %s", strerror(errno));
        return NULL;
    }
    char path[KC_PATH_MAX], kcb[KC_PATH_MAX];
    bool ok = true;
    for (const kc_bench_source *s = kc_bench_sources; s->name && ok; s++) {
        snprintf(path, sizeof(path), "%s/%s", dir, s->name);
        ok = kc_write_file_atomic(path, s->text, strlen(s->text)) == 0;
    }
    snprintf(kcb, sizeof(kcb), "%s/calibrate.kcb", dir);
    const char *inputs[] = {dir};
    kc_build_options o = {.inputs = inputs,
                          .ninputs = 1,
                          .targets = &target,
                          .ntargets = 1,
                          .all_variants = true,
                          .output = kcb,
                          .log = stderr,
                          .quiet = true};
    kcrt_bundle *b = NULL;
    if (!ok)
        snprintf(err, errlen, "cannot write the calibration kernels to %s: %s", dir, strerror(errno));
    else if (kc_build(&o) != 0)
        snprintf(err, errlen, "kc's calibration kernels do not compile (a bug in kc: please report it)");
    else if (kcrt_bundle_load(ctx, kcb, &b) != KCRT_OK)
        snprintf(err, errlen, "the calibration bundle: %s", kcrt_error(ctx));
    kc_remove_tree(dir);
    free(dir);
    return b;
}

/* The mean of q timed launches (the submission's busy time over q); NAN
 * after a failure (message in ctx). */
static double timed_mean(kcrt_kernel *k, const kcrt_arg *args, size_t nargs, int q, double *each)
{
    if (kcrt_time_launch(k, args, nargs, q, each) != KCRT_OK)
        return NAN;
    double sum = 0;
    for (int i = 0; i < q; i++)
        sum += each[i];
    return sum / q;
}

/* The median of q timed launches; NAN after a failure (message in ctx). */
static double timed_median(kcrt_kernel *k, const kcrt_arg *args, size_t nargs, int q, double *each)
{
    if (kcrt_time_launch(k, args, nargs, q, each) != KCRT_OK)
        return NAN;
    double *s = malloc((size_t)q * sizeof(double));
    if (!s)
        return NAN;
    memcpy(s, each, (size_t)q * sizeof(double));
    kc_stats_sort(s, q);
    double m = kc_stats_quantile(s, q, 0.5);
    free(s);
    return m;
}

/* The largest float4 count a buffer may have on this device. */
static int64_t max_float4s(kcrt_context *ctx)
{
    const kcrt_device_info *d = kcrt_device_info_get(ctx);
    uint64_t cap = d->max_buffer_bytes ? d->max_buffer_bytes : (uint64_t)1 << 28;
    if (d->memory_bytes && cap > d->memory_bytes / 8)
        cap = d->memory_bytes / 8;
    if (cap > (uint64_t)1 << 30)
        cap = (uint64_t)1 << 30;
    return (int64_t)(cap / 16);
}

/* Buffers for n float4s at least (they only grow). */
static bool ref_buffers(kc_bench_ref *r, int64_t n, char *err, size_t errlen)
{
    if (n <= r->cap)
        return true;
    size_t bytes = (size_t)n * 16;
    float *data = malloc(bytes);
    if (!data) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    for (size_t i = 0; i < (size_t)n * 4; i++)
        data[i] = (float)(i % 1000) / 1000.0f;
    if (r->x)
        kcrt_buffer_free(r->x), kcrt_buffer_free(r->y), r->x = r->y = NULL, r->cap = 0;
    bool ok = kcrt_buffer_create(r->ctx, bytes, &r->x) == KCRT_OK &&
              kcrt_buffer_create(r->ctx, bytes, &r->y) == KCRT_OK &&
              kcrt_buffer_write(r->x, 0, data, bytes) == KCRT_OK;
    free(data);
    if (!ok) {
        snprintf(err, errlen, "the reference kernel's buffers: %s", kcrt_error(r->ctx));
        return false;
    }
    r->cap = n;
    return true;
}

/* The reference kernel's arguments for a shape "n=N,iters=I". */
static bool ref_args(kc_bench_ref *r, const char *shape, kcrt_arg args[4], char *err, size_t errlen)
{
    long long n, iters;
    int used = 0;
    if (sscanf(shape, "n=%lld,iters=%lld%n", &n, &iters, &used) != 2 || shape[used] || n < 1 || iters < 0 ||
        n > max_float4s(r->ctx) || iters > 1 << 24) {
        snprintf(err, errlen,
                 "the reference kernel's shape '%s' is not n=N,iters=I (or too large for this device)",
                 shape);
        return false;
    }
    if (!ref_buffers(r, n, err, errlen))
        return false;
    args[0] = KCRT_I32(n);
    args[1] = KCRT_I32(iters);
    args[2] = KCRT_BUF(r->x);
    args[3] = KCRT_BUF(r->y);
    return true;
}

/* The reference's median launch time at (n, iters); NAN after a failure. */
static double ref_probe(kc_bench_ref *r, int64_t n, int64_t iters, char *err, size_t errlen)
{
    char shape[64];
    kcrt_arg args[4];
    double each[3];
    snprintf(shape, sizeof(shape), "n=%lld,iters=%lld", (long long)n, (long long)iters);
    if (!ref_args(r, shape, args, err, errlen))
        return NAN;
    double t = timed_median(r->k, args, 4, 3, each);
    if (isnan(t))
        snprintf(err, errlen, "timing the reference kernel: %s", kcrt_error(r->ctx));
    return t;
}

/* The reference's shape for a kernel that moves `bytes` per launch in
 * t_k ns: as many bytes (n = bytes / 32: a float4 read and one written),
 * and as many multiply-adds between as make its launch last as long.
 * So it is memory-bound where the kernel is and compute-bound where the
 * kernel is, and under contention — another process, a neighbour on the
 * same host thrashing the cache, scheduler slices, the fixed cost of a
 * dispatch — it suffers what the kernel suffers. The launch time is
 * nearly linear in iters: a few secant steps find it. */
static bool ref_match(kc_bench_ref *r, double bytes, double t_k, char *shape, size_t len, char *err,
                      size_t errlen)
{
    int64_t n = (int64_t)(bytes / 32), iters = 0;
    n = n < 64 ? 64 : n > r->max_n ? r->max_n : n;
    double t0 = ref_probe(r, n, 0, err, errlen);
    while (!isnan(t0) && t0 > t_k * 1.05 &&
           n > 64) /* faster than a copy of its bytes: cached, or fewer bytes */
        t0 = ref_probe(r, n /= 2, 0, err, errlen);
    double best_t = t0, t1 = NAN;
    int64_t best_i = 0, i0 = 0, i1 = 16;
    for (int step = 0; step < 8 && !isnan(t0) && fabs(log(best_t / t_k)) > 0.03; step++) {
        if (isnan(t1 = ref_probe(r, n, i1, err, errlen)))
            return false;
        if (fabs(log(t1 / t_k)) < fabs(log(best_t / t_k)))
            best_t = t1, best_i = i1;
        double slope = (t1 - t0) / (double)(i1 - i0), next = slope > 0 ? i1 + (t_k - t1) / slope : 2.0 * i1;
        next = fmin(fmax(next, i1 / 4.0), i1 * 16.0); /* a steady walk when the timing is noisy */
        i0 = i1, t0 = t1, i1 = (int64_t)fmin(fmax(round(next), 0), 1 << 24);
        if (i1 == i0)
            break;
    }
    if (isnan(t0))
        return false;
    iters = best_i;
    snprintf(shape, len, "n=%lld,iters=%lld", (long long)n, (long long)iters);
    return true;
}

kc_bench_ref *kc_bench_ref_open(kcrt_context *ctx, const char *bundle, char *err, size_t errlen)
{
    kc_bench_ref *r = calloc(1, sizeof(*r));
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    r->ctx = ctx;
    r->max_n = max_float4s(ctx) < REF_MAX_N ? max_float4s(ctx) : REF_MAX_N;
    bool ok;
    if (bundle) {
        ok = kcrt_bundle_load(ctx, bundle, &r->bundle) == KCRT_OK;
        if (!ok)
            snprintf(err, errlen, "the calibration bundle: %s", kcrt_error(ctx));
    } else
        ok = (r->bundle = build_calibration(ctx, err, errlen)) != NULL;
    if (ok && kcrt_kernel_get_variant(r->bundle, "kc_bench_ref", "", &r->k) != KCRT_OK) {
        snprintf(err, errlen, "the reference kernel: %s", kcrt_error(ctx));
        ok = false;
    }
    if (!ok) {
        kc_bench_ref_close(r);
        return NULL;
    }
    return r;
}

void kc_bench_ref_close(kc_bench_ref *r)
{
    if (!r)
        return;
    if (r->x)
        kcrt_buffer_free(r->x);
    if (r->y)
        kcrt_buffer_free(r->y);
    if (r->bundle)
        kcrt_bundle_free(r->bundle);
    free(r);
}

const char *kc_bench_ref_kernel(const kc_bench_ref *r)
{
    return kcrt_kernel_info_get(r->k)->name;
}
const char *kc_bench_ref_hash(const kc_bench_ref *r)
{
    return kcrt_kernel_info_get(r->k)->source_hash;
}

/* ---- one benchmark --------------------------------------------------------------- */

static int per_submission(double t_ns)
{
    double p = t_ns > 0 ? ceil(ROUND_NS / t_ns) : MAX_PER;
    return p < MIN_PER ? MIN_PER : p > MAX_PER ? MAX_PER : (int)p;
}

/* Rounds and launches per submission within the time budget. */
static void plan(const kc_bench_opts *o, double t_k, double t_r, int *rounds, int *pk, int *pr)
{
    *rounds = o->rounds, *pk = per_submission(t_k), *pr = per_submission(t_r);
    double budget = o->max_seconds * 1e9;
    for (;;) {
        double cost = *rounds * (*pk * t_k + *pr * t_r) + *pr * t_r;
        if (cost <= budget)
            return;
        if (*pk > 1 || *pr > 1)
            *pk = *pk > 1 ? *pk - 1 : 1, *pr = *pr > 1 ? *pr - 1 : 1;
        else if (*rounds > MIN_ROUNDS)
            (*rounds)--;
        else
            return;
    }
}

/* ---- a copy of the same bytes ---------------------------------------------------- */

/* kc's copy kernel (the calibration's) at a benchmark's bytes: the
 * variant fastest at that size, and its buffers. */
typedef struct copy_roof {
    kcrt_kernel *k; /* NULL: no copy for this benchmark */
    kcrt_buffer *x, *y;
    kcrt_arg args[3];
    int q; /* launches per timed submission */
} copy_roof;

static void copy_close(copy_roof *c)
{
    if (c->x)
        kcrt_buffer_free(c->x);
    if (c->y)
        kcrt_buffer_free(c->y);
    memset(c, 0, sizeof(*c));
}

/* Buffers for a copy of `bytes` (n = bytes / 32 float4s, one read and one
 * written each), then every variant of the copy kernel timed at that size
 * and the fastest kept: so the copy is held to what kc's code does best
 * at this size, as the calibration is at 64 MiB. False (and no copy) when
 * the bytes are unknown or beyond the buffers kc bench allocates. */
static bool copy_open(kc_bench_ref *r, double bytes, copy_roof *c)
{
    memset(c, 0, sizeof(*c));
    int64_t n = bytes > 0 ? (int64_t)(bytes / 32) : 0;
    kcrt_kernel *def;
    if (n < 1 || n > r->max_n || kcrt_kernel_get_variant(r->bundle, "kc_bench_copy", "", &def) != KCRT_OK ||
        kcrt_buffer_create(r->ctx, (size_t)n * 16, &c->x) != KCRT_OK ||
        kcrt_buffer_create(r->ctx, (size_t)n * 16, &c->y) != KCRT_OK) {
        copy_close(c);
        return false;
    }
    c->args[0] = KCRT_I32(n), c->args[1] = KCRT_BUF(c->x), c->args[2] = KCRT_BUF(c->y);
    const kcrt_kernel_info *ki = kcrt_kernel_info_get(def);
    double each[MIN_PER], best = INFINITY;
    kcrt_kernel *fastest = NULL;
    for (int v = 0; v < ki->nvariants; v++) {
        kcrt_kernel *k;
        if (kcrt_kernel_get_variant(r->bundle, "kc_bench_copy", ki->variants[v].tunables, &k) != KCRT_OK)
            continue; /* not for this backend, or beyond this device's limits */
        double t = timed_median(k, c->args, 3, MIN_PER, each);
        if (t < best)
            best = t, fastest = k;
    }
    if (!fastest) {
        copy_close(c);
        return false;
    }
    c->k = fastest;
    c->q = per_submission(best);
    return true;
}

/* The copy's median launch over one submission; NAN without a copy or
 * after a failure. */
static double copy_time(copy_roof *c)
{
    double each[MAX_PER];
    return c->k ? timed_median(c->k, c->args, 3, c->q, each) : NAN;
}

static void failed(kc_bench_result *res, kc_arena *a, const char *fmt, const char *what)
{
    res->error = kc_arena_printf(a, fmt, what);
}

/* The rounds themselves: fills times, ref and ratios. The reference is
 * kc's reference kernel or, for --against, the baseline bundle's kernel. */
typedef struct launch {
    kcrt_kernel *k;
    const kcrt_arg *args;
    size_t nargs;
} launch;

static bool run_rounds(launch r, launch k, int pk, int pr, kc_bench_result *res)
{
    double *each = malloc((size_t)(pk > pr ? pk : pr) * sizeof(double));
    if (!each)
        return false;
    bool ok = !isnan(res->ref[0] = timed_mean(r.k, r.args, r.nargs, pr, each));
    for (int i = 0; ok && i < res->rounds; i++) {
        double tk = timed_mean(k.k, k.args, k.nargs, pk, each);
        memcpy(res->times + (size_t)i * pk, each, (size_t)pk * sizeof(double));
        ok = !isnan(tk) && !isnan(res->ref[i + 1] = timed_mean(r.k, r.args, r.nargs, pr, each));
        if (ok)
            res->ratios[i] = tk / sqrt(res->ref[i] * res->ref[i + 1]);
    }
    free(each);
    return ok;
}

/* Room for the samples of the planned rounds, then the rounds, with the
 * copy (when there is one) timed just before and just after: their
 * geometric mean goes to res->copy_ns, so that a change in the machine's
 * speed during the rounds cancels to first order. */
static bool sample(launch r, launch k, int pr, copy_roof *copy, kc_arena *a, kc_bench_result *res)
{
    res->ntimes = res->rounds * res->per_round;
    res->times = kc_arena_alloc(a, (size_t)res->ntimes * sizeof(double));
    res->ref = kc_arena_alloc(a, (size_t)(res->rounds + 1) * sizeof(double));
    res->ratios = kc_arena_alloc(a, (size_t)res->rounds * sizeof(double));
    double before = copy ? copy_time(copy) : NAN;
    if (!run_rounds(r, k, res->per_round, pr, res))
        return false;
    double after = isnan(before) ? NAN : copy_time(copy);
    if (!isnan(after))
        res->copy_ns = sqrt(before * after);
    return true;
}

static void derived(kc_bench_result *res, const kc_bench_args *args, const kcrt_kernel_info *ki)
{
    kc_stats_summarize(res->times, res->ntimes, &res->time);
    kc_stats_summarize(res->ratios, res->rounds, &res->ratio);
    kc_stats_summarize(res->ref, res->rounds + 1, &res->ref_time);
    res->bytes = kc_bench_args_eval(args, ki->bytes);
    res->flops = kc_bench_args_eval(args, ki->flops);
    res->gb_per_s = res->bytes >= 0 ? res->bytes / res->time.median : -1;
    res->gflop_per_s = res->flops >= 0 ? res->flops / res->time.median : -1;
    res->roofline = -1;
    res->vs_copy = res->copy_ns > 0 ? res->copy_ns / res->time.median : -1;
}

/* A kernel's first launch (which makes its pipeline) and a first estimate
 * of its time; the variant it chose, in the arena. */
static bool first_launch(kcrt_kernel *k, const kc_bench_args *args, double *t, const char **variant,
                         const char **why, kc_arena *a, kc_bench_result *res)
{
    kcrt_context *ctx = kcrt_kernel_context(k);
    const char *v = NULL, *w = NULL;
    double each[5];
    if (kcrt_kernel_choose(k, args->args, (size_t)args->nargs, &v, &w) != KCRT_OK ||
        kcrt_launch(k, args->args, (size_t)args->nargs) != KCRT_OK || kcrt_finish(ctx) != KCRT_OK ||
        isnan(*t = timed_median(k, args->args, (size_t)args->nargs, 5, each))) {
        failed(res, a, "%s", kcrt_error(ctx));
        return false;
    }
    *variant = kc_arena_strdup(a, v);
    if (why)
        *why = kc_arena_strdup(a, w);
    return true;
}

/* The kernel's first launch; the reference's size, matched to it unless given. */
static bool prepare(kc_bench_ref *ref, kcrt_kernel *k, const kc_bench_args *args, const char *ref_shape,
                    kcrt_arg rargs[4], double *t_k, double *t_r, kc_arena *a, kc_bench_result *res)
{
    double each[3];
    char err[512], shape[64];
    if (!first_launch(k, args, t_k, &res->variant, &res->why, a, res))
        return false;
    double bytes = kc_bench_args_eval(args, kcrt_kernel_info_get(k)->bytes);
    if (!ref_shape && !ref_match(ref, bytes > 0 ? bytes : (double)args->buffer_bytes, *t_k, shape,
                                 sizeof(shape), err, sizeof(err))) {
        failed(res, a, "%s", err);
        return false;
    }
    res->ref_shape = kc_arena_strdup(a, ref_shape ? ref_shape : shape);
    if (!ref_args(ref, res->ref_shape, rargs, err, sizeof(err)) ||
        isnan(*t_r = timed_median(ref->k, rargs, 4, 3, each))) {
        failed(res, a, "%s", isnan(*t_r) ? kcrt_error(ref->ctx) : err);
        return false;
    }
    return true;
}

void kc_bench_measure(kc_bench_ref *ref, kcrt_kernel *k, const char *ref_shape, const kc_bench_opts *o,
                      kc_arena *a, kc_bench_result *res)
{
    double start = now_seconds();
    const kcrt_kernel_info *ki = kcrt_kernel_info_get(k);
    kc_bench_args args;
    kcrt_arg rargs[4];
    char err[1024];
    double t_k, t_r = NAN;
    res->source_hash = kc_arena_strdup(a, ki->source_hash);
    if (!kc_bench_args_make(k, res->shape, o->seed, &args, err, sizeof(err))) {
        failed(res, a, "%s", err);
        return;
    }
    if (prepare(ref, k, &args, ref_shape, rargs, &t_k, &t_r, a, res)) {
        int pr;
        plan(o, t_k, t_r, &res->rounds, &res->per_round, &pr);
        launch r = {ref->k, rargs, 4}, kl = {k, args.args, (size_t)args.nargs};
        copy_roof copy;
        copy_open(ref, kc_bench_args_eval(&args, ki->bytes), &copy);
        bool sampled = sample(r, kl, pr, &copy, a, res);
        copy_close(&copy);
        if (!sampled)
            failed(res, a, "timing: %s", kcrt_error(kcrt_kernel_context(k)));
        else
            derived(res, &args, ki);
    }
    kc_bench_args_free(&args);
    res->seconds = now_seconds() - start;
}

void kc_bench_measure_against(kcrt_kernel *k, kcrt_kernel *base, const kc_bench_opts *o, kc_arena *a,
                              kc_bench_result *res)
{
    double start = now_seconds();
    const kcrt_kernel_info *ki = kcrt_kernel_info_get(k);
    kc_bench_args args, bargs;
    char err[1024];
    double t_k, t_b;
    res->source_hash = kc_arena_strdup(a, ki->source_hash);
    res->ref_shape = res->shape;
    if (!kc_bench_args_make(k, res->shape, o->seed, &args, err, sizeof(err))) {
        failed(res, a, "%s", err);
        res->seconds = now_seconds() - start;
        return;
    }
    if (!kc_bench_args_make(base, res->shape, o->seed, &bargs, err, sizeof(err))) {
        failed(
            res, a,
            "the baseline bundle's kernel of that name takes other arguments (%s): if the change is meant, "
            "build the baseline bundle again",
            err);
    } else {
        if (first_launch(k, &args, &t_k, &res->variant, &res->why, a, res) &&
            first_launch(base, &bargs, &t_b, &res->ref_variant, NULL, a, res)) {
            int pb;
            plan(o, t_k, t_b, &res->rounds, &res->per_round, &pb);
            launch r = {base, bargs.args, (size_t)bargs.nargs}, kl = {k, args.args, (size_t)args.nargs};
            if (!sample(r, kl, pb, NULL, a, res))
                failed(res, a, "timing: %s", kcrt_error(kcrt_kernel_context(k)));
            else
                derived(res, &args, ki);
        }
        kc_bench_args_free(&bargs);
    }
    kc_bench_args_free(&args);
    res->seconds = now_seconds() - start;
}

/* ---- --calibrate ----------------------------------------------------------------- */

/* Rounds of every variant, the copy's and the FMA's interleaved: a CPU
 * driver's copy over 64 MiB is the host's memory bandwidth, which other
 * guests of a hypervisor share; on the CI machine one pass read 12.0 to
 * 21.9 GB/s over a day and 12.0 to 15.0 within the hour. The best of
 * three rounds minutes apart is steadier than one, and the rounds' spread
 * is stored with the peaks so that a reader sees how far to trust them. */
enum { CALIB_ROUNDS = 3 };

/* One calibration kernel: grows the problem until a launch takes 2 ms (and
 * a copy's buffers are 64 MiB, beyond the caches) or reaches the device's
 * buffer limit, then times every variant at that size in each round and
 * keeps the best rate (work / ns), and each round's best. */
typedef struct calib {
    const char *kernel;
    int64_t n, iters;     /* iters < 0: the kernel has no iters */
    double work_per_elem; /* bytes or flops per element */
    const char *unit;
    double best;          /* work per ns */
    char variant[128];
    double round_best[CALIB_ROUNDS];
    /* between rounds */
    kcrt_kernel *def;
    kcrt_buffer *x, *y;
    kcrt_arg args[4];
    int nargs;
} calib;

static bool calib_args(kc_bench_ref *r, calib *c)
{
    size_t bytes = (size_t)c->n * (c->iters < 0 ? 16 : 4);
    c->x = c->y = NULL;
    if (kcrt_buffer_create(r->ctx, bytes, &c->x) != KCRT_OK ||
        (c->iters < 0 && kcrt_buffer_create(r->ctx, bytes, &c->y) != KCRT_OK))
        return false;
    int i = 0;
    c->args[i++] = KCRT_I32(c->n);
    if (c->iters >= 0)
        c->args[i++] = KCRT_I32(c->iters);
    c->args[i++] = KCRT_BUF(c->x);
    if (c->iters < 0)
        c->args[i++] = KCRT_BUF(c->y);
    c->nargs = i;
    return true;
}

static void calib_free(calib *c)
{
    if (c->x)
        kcrt_buffer_free(c->x);
    if (c->y)
        kcrt_buffer_free(c->y);
    c->x = c->y = NULL;
}

static bool calib_size(kc_bench_ref *r, calib *c, char *err, size_t errlen)
{
    int64_t cap = max_float4s(r->ctx) * (c->iters < 0 ? 1 : 4);
    for (;; c->n *= 4) {
        double each[3], t = NAN;
        if (calib_args(r, c))
            t = timed_median(c->def, c->args, (size_t)c->nargs, 3, each);
        calib_free(c);
        if (isnan(t)) {
            snprintf(err, errlen, "%s: %s", c->kernel, kcrt_error(r->ctx));
            return false;
        }
        /* a copy needs buffers well beyond the caches to see the memory (64 MiB) */
        bool big = c->iters >= 0 || c->n * 16 >= (int64_t)64 << 20;
        if ((t >= 2e6 && big) || c->n * 4 > cap)
            return true;
    }
}

/* The size, then the buffers for the rounds. */
static bool calib_prepare(kc_bench_ref *r, calib *c, char *err, size_t errlen)
{
    if (kcrt_kernel_get_variant(r->bundle, c->kernel, "", &c->def) != KCRT_OK || !calib_size(r, c, err, errlen) ||
        !calib_args(r, c)) {
        if (!*err)
            snprintf(err, errlen, "%s: %s", c->kernel, kcrt_error(r->ctx));
        return false;
    }
    return true;
}

static void calib_round(kc_bench_ref *r, calib *c, int round, bool quiet)
{
    const kcrt_kernel_info *ki = kcrt_kernel_info_get(c->def);
    double each[10], best = 0;
    const char *best_variant = "";
    for (int v = 0; v < ki->nvariants; v++) {
        kcrt_kernel *k;
        if (kcrt_kernel_get_variant(r->bundle, c->kernel, ki->variants[v].tunables, &k) != KCRT_OK)
            continue; /* not for this backend, or beyond this device's limits */
        double t = timed_median(k, c->args, (size_t)c->nargs, 10, each);
        double rate = c->work_per_elem * (double)c->n / t;
        if (!quiet && isnan(t) && round == 0) /* e.g. more workgroups than the device takes at this size */
            fprintf(stderr, "  %-14s %-12s did not run: %s\n", c->kernel, ki->variants[v].tunables,
                    kcrt_error(r->ctx));
        else if (!quiet && round == 0)
            fprintf(stderr, "  %-14s %-12s %10.2f %s\n", c->kernel, ki->variants[v].tunables, rate, c->unit);
        if (!isnan(t) && rate > best) {
            best = rate;
            best_variant = ki->variants[v].tunables;
        }
    }
    c->round_best[round] = best;
    if (best > c->best) {
        c->best = best;
        snprintf(c->variant, sizeof(c->variant), "%s", best_variant);
    }
    if (!quiet)
        fprintf(stderr, "  %-14s round %d of %d: best %.2f %s (%s)\n", c->kernel, round + 1, CALIB_ROUNDS, best,
                c->unit, *best_variant ? best_variant : "none ran");
}

/* "12.0-12.3 GB/s": the rounds' best rates, least to most */
static void calib_spread(const calib *c, char *out, size_t outlen)
{
    double lo = c->round_best[0], hi = c->round_best[0];
    for (int i = 1; i < CALIB_ROUNDS; i++) {
        lo = fmin(lo, c->round_best[i]);
        hi = fmax(hi, c->round_best[i]);
    }
    snprintf(out, outlen, "%.1f-%.1f %s", lo, hi, c->unit);
}

bool kc_bench_calibrate(kc_bench_ref *r, bool quiet, kc_bench_peaks *out, char *err, size_t errlen)
{
    calib copy = {.kernel = "kc_bench_copy", .n = 1 << 16, .iters = -1, .work_per_elem = 32, .unit = "GB/s"};
    calib fma = {.kernel = "kc_bench_fma", .n = 1 << 14, .iters = 256, .work_per_elem = 16 * 256, .unit = "GFLOP/s"};
    kc_bench_cpu before, after;
    bool host = kc_bench_cpu_now(&before);
    *err = 0;
    bool ok = calib_prepare(r, &copy, err, errlen) && calib_prepare(r, &fma, err, errlen);
    for (int round = 0; ok && round < CALIB_ROUNDS; round++) {
        calib_round(r, &copy, round, quiet);
        calib_round(r, &fma, round, quiet);
    }
    calib_free(&copy);
    calib_free(&fma);
    if (ok && !(copy.best > 0 && fma.best > 0))
        snprintf(err, errlen, "%s: no variant ran: %s", copy.best > 0 ? fma.kernel : copy.kernel,
                 kcrt_error(r->ctx));
    if (!ok || *err)
        return false;
    *out = (kc_bench_peaks){
        .known = true, .gb_per_s = copy.best, .gflop_per_s = fma.best, .steal = -1, .others = -1};
    if (host && kc_bench_cpu_now(&after)) {
        out->steal = kc_bench_cpu_steal(&before, &after);
        if (kcrt_device_info_get(r->ctx)->type == KCRT_DEVICE_CPU)
            out->others = kc_bench_cpu_others(&before, &after);
    }
    snprintf(out->source, sizeof(out->source), "measured");
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out->when, sizeof(out->when), "%Y-%m-%dT%H:%M:%SZ", &tm);
    char copy_spread[64], fma_spread[64];
    calib_spread(&copy, copy_spread, sizeof(copy_spread));
    calib_spread(&fma, fma_spread, sizeof(fma_spread));
    snprintf(out->detail, sizeof(out->detail),
             "copy %.48s over %lld MiB; fma %.48s over %lld threads; best of %d rounds: %s, %s", copy.variant,
             (long long)(copy.n * 16 >> 20), fma.variant, (long long)fma.n, CALIB_ROUNDS, copy_spread, fma_spread);
    return true;
}
