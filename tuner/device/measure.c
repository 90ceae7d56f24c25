/*
 * measure.c — one configuration on the device.
 *
 * The order matters for honest numbers and for resuming:
 *   1. the cache: a configuration measured before (by this run or one that
 *      was stopped) is answered from there and never measured again;
 *   2. compile for the device's target (a failure is compile_failed);
 *   3. load it through libkcrt, which creates the pipeline now, outside
 *      any timing (a device that lacks what it needs refuses it);
 *   4. run it once on the search's inputs, restored first, and compare its
 *      outputs with the reference variant's (verify_failed); a launch
 *      slower than the timeout is a timeout when a second one is too
 *      (lavapipe compiles a pipeline's machine code in its first launch:
 *      4-5 s for gemm's most unrolled variants on a busy 2-core machine,
 *      which made them "timeouts" against a 3 s limit);
 *   5. warm up (50 ms of device time back to back, so that a GPU's clocks
 *      are up), then time rounds of launches with device timestamps (with
 *      --cold, each after a write of scratch memory) until
 *      the median is known to within about 1% (the boxplot notch,
 *      1.58 IQR / sqrt(n), at most 1% of the median, with at least ten
 *      samples) or the timing cap is spent; or, racing, until it is clear
 *      the variant cannot win (below);
 *   6. commit the result to the cache before anything else happens.
 * A failure of the host side (a buffer that cannot be written back) is not
 * the variant's fault: it stops the search and records nothing.
 */
#include "device_private.h"
#include "kc_binres.h"
#include "kc_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_SAMPLES = 512, REFERENCE_TRIES = 16 };
#define WARM_NS 5e7 /* device time run back to back before timing (time_rounds) */
#define NOTCH_BOUND 0.01  /* the median's 95% interval, relative */
#define MIN_TIMEOUT_S 1.0 /* seconds; a launch this fast is never a timeout */
#define TIMEOUT_FACTOR 50 /* times the reference's launch */
/* More time for the watchdog at a variant's first launch, which may
 * include the driver's compile (lavapipe compiles a pipeline's machine
 * code there): at least FIRST_LAUNCH_GRACE_S, and COMPILE_FACTOR times
 * what the reference's first launch took beyond its second. Variants of
 * one kernel differ in code size: attention's BKV=16 variants take 65 s to
 * compile on lavapipe on a 2-core machine, its BKV=8 ones 13 s, and a
 * fixed 20 s recorded the first as hangs. */
#define FIRST_LAUNCH_GRACE_S 20.0
#define COMPILE_FACTOR 4.0
/* kc's own compile of a variant (kc IR, then LLVM or the SPIR-V writer)
 * is refused past MIN_COMPILE_LIMIT_S, or COMPILE_LIMIT_FACTOR times the
 * reference's compile if that is longer. The largest shipped variant
 * (gemm, 12,708 statements) compiles in 2.3 s for gfx1100 on a 2-core
 * machine; 4,096 unrolled copies of a loop body with a load and a store
 * took 90 s for gfx1100 and 58 s for sm_90, and an attention variant
 * once took 6 min 25 s. A minute is far past any variant worth having
 * and short against a tune's budget. */
#define MIN_COMPILE_LIMIT_S 60.0
#define COMPILE_LIMIT_FACTOR 10.0
/* Racing: a variant whose fastest launch so far, after at least
 * RACE_MIN_SAMPLES, is slower than RACE_FACTOR times the best median of
 * the search cannot be the winner, so timing it to 1% is wasted: its
 * timing stops there and its median so far is recorded. Every launch of
 * it was more than 1.5 times the best's typical launch, which noise on a
 * busy machine does not do to a variant that is really within a few
 * percent (a loaded machine slows launches by tens of percent, rarely by
 * half, and never every one of them); on a fast kernel the first round
 * alone is dozens of launches. */
#define RACE_FACTOR 1.5
enum { RACE_MIN_SAMPLES = 3 };
/* With --cold a launch costs a write of scratch memory besides (256 MiB:
 * tens of milliseconds on a CPU driver), which the round's size, set from
 * the launch's device time, does not see: smaller rounds keep the timing
 * cap's checks frequent. */
enum { COLD_ROUND = 8 };

/* How many independent figures the samples are. On a CPU Vulkan driver
 * kcrt_time_launch gives each launch of a group bracketed by one timestamp
 * pair (up to 8) the group's mean, so a run of equal neighbours is one
 * figure; elsewhere each launch is its own (a GPU's coarse timer, CUDA's
 * 0.5 us, may well read two launches alike). */
static int independent(const td_search *r, const double *ns, int n)
{
    if (r->s->dev->type != KCRT_DEVICE_CPU || strcmp(r->s->dev->backend, "vulkan"))
        return n;
    int runs = n > 0;
    for (int i = 1; i < n; i++)
        runs += ns[i] != ns[i - 1];
    return runs;
}

/* m timed launches, back to back or (kc tune --cold) each after a write
 * of scratch memory that pushes the inputs out of the caches. The warm-up
 * launches stay back to back: they are there to raise the clocks. */
static bool timed(const td_search *r, kcrt_kernel *k, int m, double *ns)
{
    const kc_tune_device_options *o = r->s->o;
    size_t n = (size_t)r->w.nargs;
    return (o->cold ? kcrt_time_launch_cold(k, r->w.args, n, m, (size_t)o->cold_mib << 20, ns)
                    : kcrt_time_launch(k, r->w.args, n, m, ns)) == KCRT_OK;
}

/* Racing's rule (above) for a sample summary against the best median so
 * far (ns; 0 or less: no best yet). */
static bool cannot_win(const kc_stats_summary *sum, double best_ns)
{
    return best_ns > 0 && sum->n >= RACE_MIN_SAMPLES && sum->min > RACE_FACTOR * best_ns;
}

kc_cache_key td_key(kc_arena *a, const td_search *r, const char *variant)
{
    const td_session *s = r->s;
    return (kc_cache_key){r->tk->name,   r->tk->prog->source_hash, s->measured_by, s->dev->key, s->dev->name,
                          s->dev->backend, r->shape,                 kc_arena_strdup(a, variant)};
}

/* The first line of a compiler message, without the temporary directory
 * the bundle's sources were written to. */
static void first_line(const char *text, char *why, size_t len)
{
    if (!text)
        text = "the compiler gave no reason";
    const char *tmp = strstr(text, "kc-tune-src-");
    if (tmp && strchr(tmp, '/') && (!strchr(text, '\n') || strchr(tmp, '/') < strchr(text, '\n')))
        text = strchr(tmp, '/') + 1;
    const char *nl = strchr(text, '\n');
    snprintf(why, len, "%.*s", (int)(nl ? (size_t)(nl - text) : strlen(text)), text);
}

bool td_compile(const td_search *r, const int *point, kc_variant_blob *blob, char *why, size_t len)
{
    kc_arena a;
    kc_arena_init(&a);
    kc_ir_binding b = td_binding(&a, r->tk, point);
    kc_diag d;
    kc_diag_init(&d, &r->tk->ctx.src, NULL);
    memset(blob, 0, sizeof(*blob));
    bool ok = kc_build_variant(r->tk->prog, r->tk->k, &b, r->s->target, blob, &d);
    if (!ok)
        first_line(d.text.data, why, len);
    kc_diag_free(&d);
    kc_arena_free(&a);
    return ok;
}

/* The compile of a point, watched: past the search's compile limit the
 * watchdog records it as refused and kc tune restarts (watchdog.c). */
static bool watched_compile(const td_search *r, const int *point, const kc_cache_key *key, kc_variant_blob *blob,
                            char *why, size_t len)
{
    if (r->compile_limit_s > 0) /* 0 before the reference set it */
        td_watchdog_arm(r->s->dog, key, r->compile_limit_s, TD_WATCH_COMPILE);
    bool ok = td_compile(r, point, blob, why, len);
    td_watchdog_disarm(r->s->dog);
    return ok;
}

/* The limit a cached refusal for a long compile was made under; 0 when
 * the refusal is not one. */
static double compile_refusal(const kc_cache_result *res)
{
    double limit = 0;
    if (res->status == KC_RESULT_REFUSED && res->detail &&
        strncmp(res->detail, TD_COMPILE_WHY, strlen(TD_COMPILE_WHY)) == 0)
        limit = strtod(res->detail + strlen(TD_COMPILE_WHY), NULL);
    return limit;
}

/* A refusal for a long compile of the same variant at another shape:
 * the compile does not depend on the shape, so it is not tried again
 * (a kernel with five shapes would spend five minutes on it). */
typedef struct shape_refusal {
    const kc_cache_key *key;
    double limit; /* 0: none found */
    char detail[256];
} shape_refusal;

static bool find_shape_refusal(void *user, const kc_cache_key *k, const kc_cache_result *r)
{
    shape_refusal *f = user;
    if (compile_refusal(r) > f->limit && strcmp(k->variant, f->key->variant) == 0 &&
        strcmp(k->shape, f->key->shape) != 0 && strcmp(k->source_hash, f->key->source_hash) == 0 &&
        strcmp(k->compiler, f->key->compiler) == 0) {
        f->limit = compile_refusal(r); /* the highest limit it was refused under */
        snprintf(f->detail, sizeof(f->detail), "%s", r->detail);
    }
    return true;
}

static bool refused_at_another_shape(const td_search *r, const kc_cache_key *key, char *why, size_t len)
{
    shape_refusal f = {key, 0, ""};
    kc_cache_filter filter = {key->kernel, key->device_key, NULL, key->backend};
    kc_cache_each(r->s->cache, &filter, find_shape_refusal, &f);
    if (f.limit <= 0 || f.limit < r->compile_limit_s)
        return false; /* none, or made under a lower limit than this run's */
    snprintf(why, len, "%s", f.detail);
    return true;
}

/* A variant whose code spills vector registers to scratch memory on
 * AMDGPU is skipped, unless --allow-spills or it is the default: scratch
 * traffic makes it slow on every AMD GPU, and one over-unrolled variant
 * can spill thousands of registers. SGPR spills go to VGPR lanes, not
 * memory, and PTX's registers are assigned by the driver: neither is
 * read here. True with why when the variant is skipped. The refusal is
 * cached (a resumed tune does not compile the variant again) and
 * --allow-spills measures a variant the cache holds as refused for it. */
#define SPILL_WHY "it spills "

static bool spills(const td_search *r, const int *point, const kc_variant_blob *blob, char *why, size_t len)
{
    kc_binres res;
    char err[256];
    if (r->s->o->allow_spills || !kc_binres_read(r->s->target->name, blob->data, blob->size, &res, err, sizeof(err)) ||
        !res.known || res.vgpr_spills <= 0)
        return false;
    if (memcmp(point, r->tk->start, sizeof(int) * (size_t)r->tk->ndims) == 0)
        return false;
    snprintf(why, len, SPILL_WHY "%ld VGPRs to %ld bytes of scratch per lane (--allow-spills measures it)",
             res.vgpr_spills, res.scratch_bytes);
    return true;
}

static kc_result_status load(td_search *r, const char *variant, const kc_variant_blob *blob, kcrt_kernel **k,
                             char *why, size_t len)
{
    const kcrt_device_info *dev = r->s->dev;
    if (blob->shared_bytes > dev->max_shared_bytes) {
        snprintf(why, len, "it uses %u bytes of shared memory; the device has %u", blob->shared_bytes,
                 dev->max_shared_bytes);
        return KC_RESULT_REFUSED;
    }
    kcrt_binary_desc d = {variant,       r->s->target->name, blob->data,    blob->size,
                          {blob->wg[0], blob->wg[1], blob->wg[2]}, blob->args,  blob->args_size,
                          blob->spilled, blob->shared_bytes, blob->features};
    kcrt_status st = kcrt_kernel_from_binary(r->s->rb, r->tk->name, &d, k);
    if (st == KCRT_OK)
        return KC_RESULT_OK;
    snprintf(why, len, "%s", kcrt_error(r->s->ctx));
    return st == KCRT_ERROR_UNSUPPORTED ? KC_RESULT_REFUSED : KC_RESULT_COMPILE_FAILED;
}

static void stop_search(td_search *r)
{
    r->stop = true;
    if (r->tctx)
        kc_tune_stop_now(r->tctx);
}

/* Stops the search for a reason that is not the variant's. */
static void host_failure(td_search *r, const char *what)
{
    snprintf(r->error, sizeof(r->error), "%s: %s", what, kcrt_error(r->s->ctx));
    stop_search(r);
}

/* One launch on restored inputs, watched (grace_s more than usual before
 * the watchdog calls it a hang); its wall time in *wall. */
static kc_result_status launch_once(td_search *r, kcrt_kernel *k, const kc_cache_key *key, double grace_s,
                                    double *wall, char *why, size_t len)
{
    if (!td_workload_restore(&r->w)) {
        host_failure(r, "writing the inputs back");
        return KC_RESULT_COUNT;
    }
    td_watchdog_arm(r->s->dog, key, 2 * r->timeout_s + 5 + grace_s, TD_WATCH_LAUNCH);
    double t0 = td_now();
    kcrt_status st = kcrt_launch(k, r->w.args, (size_t)r->w.nargs);
    kcrt_status fin = st == KCRT_OK ? kcrt_finish(r->s->ctx) : KCRT_OK;
    *wall = td_now() - t0;
    td_watchdog_disarm(r->s->dog);
    if (st != KCRT_OK) { /* the launch's own checks: a grid past the device's limits */
        snprintf(why, len, "%s", kcrt_error(r->s->ctx));
        return st == KCRT_ERROR_BAD_ARGUMENT || st == KCRT_ERROR_UNSUPPORTED ? KC_RESULT_REFUSED
                                                                             : KC_RESULT_COMPILE_FAILED;
    }
    if (fin != KCRT_OK) { /* the device failed under it: nothing after it can be trusted */
        snprintf(why, len, "the device failed while running it: %s", kcrt_error(r->s->ctx));
        snprintf(r->error, sizeof(r->error), "the device failed while running variant %s: %s; its results so far "
                 "are kept, run kc tune again to go on", key->variant, kcrt_error(r->s->ctx));
        stop_search(r);
        return KC_RESULT_TIMEOUT;
    }
    return KC_RESULT_OK;
}

static kc_result_status check(td_search *r, kcrt_kernel *k, const kc_cache_key *key, double *wall, char *why,
                              size_t len)
{
    kc_result_status st = launch_once(r, k, key, fmax(r->first_grace_s, FIRST_LAUNCH_GRACE_S), wall, why, len);
    if (st == KC_RESULT_OK && *wall > r->timeout_s) /* perhaps the driver compiling: once more */
        st = launch_once(r, k, key, 0, wall, why, len);
    if (st != KC_RESULT_OK)
        return st;
    if (*wall > r->timeout_s) {
        snprintf(why, len, "one launch took %.2f s; the limit is %.2f s", *wall, r->timeout_s);
        return KC_RESULT_TIMEOUT;
    }
    double rel;
    return td_workload_check(&r->w, r->tk->info->tolerance, &rel, why, len) ? KC_RESULT_OK
                                                                            : KC_RESULT_VERIFY_FAILED;
}

static bool time_rounds(td_search *r, kcrt_kernel *k, const kc_cache_key *key, double wall, kc_cache_result *res,
                        char *why, size_t len)
{
    double cap = r->s->o->timing_cap_s > 0 ? r->s->o->timing_cap_s : 1.0;
    double samples[MAX_SAMPLES], warm[2], median = 0, iqr = 0, t0 = td_now(), best_ns = 0;
    if (!r->s->o->no_racing && r->tctx)
        kc_tune_best(r->tctx, &best_ns); /* 0 when nothing succeeded yet */
    bool raced = false;
    int n = 0;
    td_watchdog_arm(r->s->dog, key, 2 * (2 + MAX_SAMPLES) * r->timeout_s + 5, TD_WATCH_LAUNCH);
    bool ok = kcrt_time_launch(k, r->w.args, (size_t)r->w.nargs, 2, warm) == KCRT_OK;
    /* rounds of about 20 ms of device time (the launch's wall time if the
     * device reported none) */
    double launch_s = ok && warm[1] > 0 ? warm[1] * 1e-9 : wall;
    int round = (int)fmin(fmax(0.02 / fmax(launch_s, 1e-7), 3), r->s->o->cold ? COLD_ROUND : 64);
    /* Then WARM_NS of launches back to back before the first timed round: a
     * GPU left idle between the tuner's launches runs at its lowest clocks.
     * On an H100 the tuner read conv1d's default variant at 407 us where kc
     * bench, which keeps the device busy, read 74 us: SMs at 345 of 1,980
     * MHz. A kernel slower than WARM_NS / 2 has warmed the device already. */
    for (double busy = ok ? warm[0] + warm[1] : WARM_NS; ok && busy < WARM_NS && td_now() - t0 < cap / 4;) {
        ok = kcrt_time_launch(k, r->w.args, (size_t)r->w.nargs, round, samples) == KCRT_OK;
        for (int i = 0; ok && i < round; i++)
            busy += samples[i];
    }
    while (ok && n < MAX_SAMPLES) {
        int m = round < MAX_SAMPLES - n ? round : MAX_SAMPLES - n;
        if (!(ok = timed(r, k, m, samples + n)))
            break;
        n += m;
        kc_stats_summary sum;
        kc_stats_summarize(samples, n, &sum);
        median = sum.median, iqr = sum.q3 - sum.q1;
        /* racing first: a variant that cannot win is said to have been cut
         * short even where the timing cap ran out in the same round (a slow
         * variant on a busy machine spends the cap in its first rounds) */
        if ((raced = cannot_win(&sum, best_ns)))
            break;
        if ((n >= 10 && 1.58 * iqr / sqrt(independent(r, samples, n)) <= NOTCH_BOUND * median) ||
            td_now() - t0 >= cap)
            break;
    }
    td_watchdog_disarm(r->s->dog);
    if (!ok) {
        snprintf(why, len, "timing it failed: %s", kcrt_error(r->s->ctx));
        return false;
    }
    res->time_ns = fmax(median, 0.5); /* a launch below the timestamp's resolution */
    res->samples = n;
    res->spread = median > 0 ? iqr / median : 0;
    if (raced)
        r->raced++, r->raced_samples += n;
    return true;
}

/* Steps 2 to 5 for a configuration not in the cache. */
static void measure_new(td_search *r, const int *point, const kc_cache_key *key, kc_cache_result *res, char *why,
                        size_t len)
{
    kc_variant_blob blob;
    kcrt_kernel *k = NULL;
    double wall = 0;
    *res = (kc_cache_result){.status = KC_RESULT_OK};
    memset(&blob, 0, sizeof(blob));
    if (refused_at_another_shape(r, key, why, len))
        res->status = KC_RESULT_REFUSED;
    else if (!watched_compile(r, point, key, &blob, why, len))
        res->status = KC_RESULT_COMPILE_FAILED;
    else if (spills(r, point, &blob, why, len))
        res->status = KC_RESULT_REFUSED;
    else
        res->status = load(r, key->variant, &blob, &k, why, len);
    if (res->status == KC_RESULT_OK)
        res->status = check(r, k, key, &wall, why, len);
    if (res->status == KC_RESULT_OK && !time_rounds(r, k, key, wall, res, why, len))
        res->status = KC_RESULT_COMPILE_FAILED;
    if (res->status != KC_RESULT_OK)
        res->detail = why;
    kcrt_kernel_release(k);
    kc_variant_blob_free(&blob);
}

static bool spill_refusal(const kc_cache_result *res)
{
    return res->status == KC_RESULT_REFUSED && res->detail && strncmp(res->detail, SPILL_WHY, strlen(SPILL_WHY)) == 0;
}

bool td_evaluate(td_search *r, const int *point, kc_cache_result *res, kc_arena *a)
{
    const char *variant = td_variant_text(a, r->tk, point);
    kc_cache_key key = td_key(a, r, variant);
    r->last_measured = false;
    /* a cached refusal for spilling is measured when --allow-spills asks,
     * one for a long compile when the limit is now higher */
    if (kc_cache_get(r->s->cache, &key, res, a) && !(r->s->o->allow_spills && spill_refusal(res)) &&
        !(compile_refusal(res) > 0 && compile_refusal(res) < r->compile_limit_s)) {
        r->cached++;
        return res->status == KC_RESULT_OK;
    }
    char why[1024] = "", err[512];
    double t0 = td_now();
    measure_new(r, point, &key, res, why, sizeof(why));
    if (r->stop && res->status == KC_RESULT_COUNT)
        return false;
    if (!kc_cache_put(r->s->cache, &key, res, err, sizeof(err))) {
        snprintf(r->error, sizeof(r->error), "recording a result in the cache: %s", err);
        stop_search(r);
        return false;
    }
    r->measured++;
    if (spill_refusal(res))
        r->spill_skipped++; /* not a failure: a variant left out on purpose */
    else
        r->by_status[res->status]++;
    r->last_measured = true;
    r->last_seconds = td_now() - t0;
    return res->status == KC_RESULT_OK;
}

double td_measure(void *search, const int *point)
{
    td_search *r = search;
    if (r->stop || td_interrupted()) {
        kc_tune_stop_now(r->tctx);
        return INFINITY;
    }
    kc_arena a;
    kc_arena_init(&a);
    kc_cache_result res;
    bool ok = td_evaluate(r, point, &res, &a);
    double t = ok ? res.time_ns : INFINITY;
    /* the ctx counts this evaluation after we return */
    double best_ns = 0;
    const int *best = kc_tune_best(r->tctx, &best_ns);
    const char *best_text = best ? td_variant_text(&a, r->tk, best) : NULL;
    if (ok && (!best || t < best_ns))
        best_ns = t, best_text = td_variant_text(&a, r->tk, point);
    td_progress_update(&r->s->progress, kc_tune_evals(r->tctx) + 1, best_ns, best_text,
                       kc_tune_failures(r->tctx) + !ok, r->last_measured, r->last_seconds);
    kc_arena_free(&a);
    return t;
}

/* ---- the reference ------------------------------------------------------------------------ */

/* The next point in lexicographic order (last dimension fastest); false
 * after the last. */
static bool next_point(const td_kernel *tk, int *point)
{
    for (int d = tk->ndims - 1; d >= 0; d--) {
        if (++point[d] < tk->nvalues[d])
            return true;
        point[d] = 0;
    }
    return false;
}

/* Compiles, loads and runs a candidate reference twice (the second run's
 * wall time sets the timeout); keeps its outputs. */
static bool try_reference(td_search *r, const int *point, char *why, size_t len)
{
    kc_arena a;
    kc_arena_init(&a);
    const char *variant = td_variant_text(&a, r->tk, point);
    kc_cache_key key = td_key(&a, r, variant);
    kc_variant_blob blob;
    kcrt_kernel *k = NULL;
    double wall = 0, first = 0;
    r->timeout_s = r->s->o->timeout_s > 0 ? r->s->o->timeout_s : 3600; /* the reference may take its time */
    double t0 = td_now();
    bool compiled = td_compile(r, point, &blob, why, len);
    double compile_s = td_now() - t0;
    bool ok = compiled && load(r, variant, &blob, &k, why, len) == KC_RESULT_OK &&
              launch_once(r, k, &key, FIRST_LAUNCH_GRACE_S, &first, why, len) == KC_RESULT_OK &&
              launch_once(r, k, &key, 0, &wall, why, len) == KC_RESULT_OK;
    if (ok && !td_workload_keep_reference(&r->w, why, len)) {
        r->stop = true; /* the inputs, not the variant: no other variant would do better */
        snprintf(r->error, sizeof(r->error), "variant %s: %s", *variant ? variant : "(default)", why);
        ok = false;
    }
    if (ok) {
        r->w.ref_seconds = wall;
        r->first_grace_s = fmax(FIRST_LAUNCH_GRACE_S, COMPILE_FACTOR * (first - wall));
        r->compile_limit_s = r->s->o->compile_limit_s > 0 ? r->s->o->compile_limit_s
                                                          : fmax(MIN_COMPILE_LIMIT_S, COMPILE_LIMIT_FACTOR * compile_s);
        r->timeout_s = r->s->o->timeout_s > 0 ? r->s->o->timeout_s : fmax(MIN_TIMEOUT_S, TIMEOUT_FACTOR * wall);
        r->reference = kc_arena_strdup(&r->s->arena, variant);
    }
    kcrt_kernel_release(k);
    kc_variant_blob_free(&blob);
    kc_arena_free(&a);
    return ok;
}

bool td_reference(td_search *r, char *err, size_t errlen)
{
    const td_kernel *tk = r->tk;
    int *point = kc_arena_alloc(&r->s->arena, sizeof(int) * (size_t)(tk->ndims + 1));
    char why[1024] = "", first[1024] = "";
    memcpy(point, tk->start, sizeof(int) * (size_t)tk->ndims);
    if (tk->space.valid(tk->space.user, point) && try_reference(r, point, first, sizeof(first)))
        return true;
    if (r->stop)
        return snprintf(err, errlen, "%s", r->error), false;
    if (!*first)
        snprintf(first, sizeof(first), "the device's limits rule it out");
    memset(point, 0, sizeof(int) * (size_t)tk->ndims);
    int tries = 0;
    long probes = 0;
    do {
        if (probes++ > 1000000 || tries >= REFERENCE_TRIES)
            break;
        if (!tk->space.valid(tk->space.user, point) || memcmp(point, tk->start, sizeof(int) * (size_t)tk->ndims) == 0)
            continue;
        tries++;
        if (try_reference(r, point, why, sizeof(why))) {
            td_progress_say(&r->s->progress, "kc tune: note: %s: the default variant cannot serve as the reference "
                            "(%s); variant %s does", tk->name, first, r->reference);
            return true;
        }
        if (r->stop)
            return snprintf(err, errlen, "%s", r->error), false;
    } while (tk->ndims > 0 && next_point(tk, point));
    snprintf(err, errlen, "no variant of '%s' runs at %s on this device to serve as the reference; the default: %s",
             tk->name, r->shape, first);
    return false;
}
