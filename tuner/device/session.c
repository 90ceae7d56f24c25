/*
 * session.c — a whole `kc tune BUNDLE`, top to bottom:
 *
 *   open       the cache, the device (libkcrt), the bundle twice: the
 *              runtime's view that launches, and the writable one that
 *              receives the winners
 *   plan       the kernels and, for each, its shapes (kc.yaml's, given, or
 *              recorded by an application: --shapes-from)
 *   search     per kernel and shape: inputs, the reference, a strategy
 *              over the variant space, each point through measure.c
 *   apply      per kernel and shape, right after its search, the winner
 *              into the bundle, so that stopping later loses nothing
 *   report     --report, from the cache
 *
 * A time limit (--time) is shared out as it goes: each search may use what
 * is left divided by the searches left, so an early search that finishes
 * quickly leaves more to the later ones.
 */
#include "device_private.h"
#include "kc_workload.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t interrupted;

void kc_tune_device_interrupt(void)
{
    interrupted = 1;
}

bool td_interrupted(void)
{
    return interrupted != 0;
}

/* kc_tune_device_where's answer: one tune a process, as the interrupt */
static volatile long searches_done;
static double tune_deadline;

kc_tune_device_position kc_tune_device_where(void)
{
    kc_tune_device_position p = {searches_done, 0};
    if (tune_deadline > 0)
        p.seconds_left = fmax(tune_deadline - td_now(), 1e-3);
    return p;
}

/* One kernel's plan. */
typedef struct td_plan {
    const kcrt_kernel_info *info;
    td_kernel tk;
    bool opened;
    const char **shapes;
    int nshapes;
} td_plan;

static int fail(td_session *s, const char *fmt, ...) KC_PRINTF(2, 3);
static int fail(td_session *s, const char *fmt, ...)
{
    td_progress_end_line(&s->progress);
    va_list ap;
    va_start(ap, fmt);
    fprintf(s->o->log, "kc tune: ");
    vfprintf(s->o->log, fmt, ap);
    fputc('\n', s->o->log);
    va_end(ap);
    return 1;
}

/* ---- open ------------------------------------------------------------------------------------ */

/* The target whose binaries this device loads ("spirv", "gfx1100", "sm_90"). */
static const kc_target *target_for(const kcrt_device_info *dev)
{
    return kc_target_find(dev->target);
}

static int open_all(td_session *s)
{
    const kc_tune_device_options *o = s->o;
    char err[1024];
    s->cache_path = o->cache ? kc_arena_strdup(&s->arena, o->cache) : kc_cache_default_path(err, sizeof(err));
    if (!s->cache_path)
        return fail(s, "%s", err);
    if (!(s->cache = kc_cache_open(s->cache_path, err, sizeof(err))))
        return fail(s, "%s", err);
    kcrt_options ko = {o->backend ? o->backend : "auto", o->device};
    if (kcrt_open(&s->ctx, &ko) != KCRT_OK)
        return fail(s, "%s", kcrt_error(s->ctx));
    if (kcrt_bundle_load(s->ctx, o->bundle, &s->rb) != KCRT_OK)
        return fail(s, "%s", kcrt_error(s->ctx));
    if (!(s->b = kc_bundle_open(o->bundle, true, err, sizeof(err))))
        return fail(s, "%s", err);
    if (kc_bundle_meta(s->b, "checked"))
        return fail(s, "'%s' is a checked build (kc build --checked): its bounds checks would be measured too; "
                       "tune the bundle of a plain kc build",
                    o->bundle);
    s->dev = kcrt_device_info_get(s->ctx);
    if (!(s->target = target_for(s->dev)))
        return fail(s, "kc has no compiler target '%s' for %s (%s)%s", s->dev->target, s->dev->name,
                    s->dev->backend, kc_target_find("spirv") ? "; --backend vulkan tunes its SPIR-V" : "");
    if (!o->apply_only)
        s->dog = td_watchdog_start(s->cache_path, o->on_hang, o->on_hang_user);
    return 0;
}

static void close_all(td_session *s)
{
    td_watchdog_stop(s->dog);
    kc_bundle_close(s->b);
    kcrt_close(s->ctx); /* the runtime's bundle with it */
    kc_cache_close(s->cache);
    if (!s->o->cache)
        free((char *)s->cache_path);
}

/* ---- plan -------------------------------------------------------------------------------------- */

static const kcrt_kernel_info *find_kernel(td_session *s, const char *name)
{
    for (int i = 0; i < kcrt_bundle_kernel_count(s->rb); i++)
        if (strcmp(kcrt_bundle_kernel_info(s->rb, i)->name, name) == 0)
            return kcrt_bundle_kernel_info(s->rb, i);
    return NULL;
}

/* The given shapes that fit this kernel, canonical; a named kernel that
 * none fits is an error. used[j] marks the shapes some kernel took. */
static int given_shapes(td_session *s, td_plan *p, bool named, bool *used)
{
    const kc_tune_device_options *o = s->o;
    char err[512], first[512] = "";
    p->shapes = kc_arena_alloc(&s->arena, sizeof(char *) * (size_t)(o->nshapes + 1));
    for (int j = 0; j < o->nshapes; j++) {
        const char *c;
        if (td_shape_canonical(p->info, o->shapes[j], &s->arena, &c, err, sizeof(err)))
            p->shapes[p->nshapes++] = c, used[j] = true;
        else if (!*first)
            snprintf(first, sizeof(first), "%s", err);
    }
    if (!p->nshapes && named)
        return fail(s, "no --shape fits kernel '%s': %s", p->info->name, first);
    return 0;
}

static int kcyaml_shapes(td_session *s, td_plan *p, bool named)
{
    char err[512];
    p->shapes = kc_arena_alloc(&s->arena, sizeof(char *) * (size_t)(p->info->nshapes + 1));
    int first = 0, end = p->info->nshapes;
    if (s->o->smallest && end > 0) /* only the cheapest (--smallest) */
        first = kc_workload_smallest_shape(p->info, 0), end = first + 1;
    for (int j = first; j < end; j++)
        if (!td_shape_canonical(p->info, p->info->shapes[j], &s->arena, &p->shapes[p->nshapes++], err,
                                sizeof(err)))
            return fail(s, "kernel '%s' in the bundle: %s", p->info->name, err);
    if (!p->nshapes && (named || !s->o->quiet))
        td_progress_say(&s->progress, "kc tune: %s: kernel '%s' has no shapes in kc.yaml; give them with "
                        "--shape NAME=VALUE,…", named ? "error" : "note: skipped", p->info->name);
    return !p->nshapes && named;
}

/* --shapes-from: the kernel's recorded shapes, canonical, each once, in
 * the order the application first launched them. used[j] marks the lines
 * taken. */
static int recorded_shapes(td_session *s, td_plan *p, bool named, const kc_recorded *r, bool *used)
{
    char err[512];
    const kc_recorded_shape *rec = r->lines;
    p->shapes = kc_arena_alloc(&s->arena, sizeof(char *) * (size_t)(r->n + 1));
    for (int j = 0; j < r->n; j++) {
        const char *c;
        if (strcmp(rec[j].kernel, p->info->name) != 0)
            continue;
        if (!td_shape_canonical(p->info, rec[j].shape, &s->arena, &c, err, sizeof(err)))
            return fail(s, "%s:%d: %s (recorded from another build of the kernel?)", s->o->shapes_from,
                        rec[j].line, err);
        used[j] = true;
        bool seen = false;
        for (int k = 0; k < p->nshapes && !seen; k++)
            seen = strcmp(p->shapes[k], c) == 0;
        if (!seen)
            p->shapes[p->nshapes++] = c;
    }
    if (!p->nshapes && named)
        return fail(s, "%s records no shape of kernel '%s'", s->o->shapes_from, p->info->name);
    return 0;
}

/* After --shapes-from: a file that gives nothing to tune is an error;
 * lines of other kernels (another bundle's, or not named by --kernel)
 * are only counted. */
static int recorded_leftovers(td_session *s, int nrec, const bool *used)
{
    int taken = 0;
    for (int j = 0; j < nrec; j++)
        taken += used[j];
    if (!taken)
        return fail(s,
                    "%s records no shape of a kernel tuned here (%d line%s, none of them of %s's kernels%s)",
                    s->o->shapes_from, nrec, nrec == 1 ? "" : "s", s->o->bundle,
                    s->o->kernels ? " named by --kernel" : "");
    if (taken < nrec && !s->o->quiet)
        td_progress_say(&s->progress,
                        "kc tune: note: %d of the %d lines of %s are shapes of kernels not "
                        "tuned here: skipped",
                        nrec - taken, nrec, s->o->shapes_from);
    return 0;
}

static int plan(td_session *s, td_plan **out, int *nplans)
{
    const kc_tune_device_options *o = s->o;
    int n = o->kernels ? o->nkernels : kcrt_bundle_kernel_count(s->rb), rc = 0;
    kc_recorded rec = {0};
    char err[1024];
    if (o->shapes_from && !kc_workload_read_recorded(o->shapes_from, &rec, err, sizeof(err)))
        return fail(s, "%s", err);
    td_plan *plans = kc_arena_alloc(&s->arena, sizeof(td_plan) * (size_t)(n + 1));
    bool *used = kc_arena_alloc(&s->arena, sizeof(bool) * (size_t)(o->nshapes + rec.n + 1));
    for (int i = 0; i < n && !rc; i++) {
        plans[i].info = o->kernels ? find_kernel(s, o->kernels[i]) : kcrt_bundle_kernel_info(s->rb, i);
        bool named = o->kernels != NULL;
        if (!plans[i].info)
            rc = fail(s, "%s has no kernel '%s'", o->bundle, o->kernels[i]);
        else if (o->shapes_from)
            rc = recorded_shapes(s, &plans[i], named, &rec, used);
        else
            rc = o->shapes ? given_shapes(s, &plans[i], named, used) : kcyaml_shapes(s, &plans[i], named);
    }
    if (o->shapes_from && !rc)
        rc = recorded_leftovers(s, rec.n, used);
    for (int j = 0; j < o->nshapes && !rc; j++)
        if (!used[j])
            rc = fail(s, "shape '%s' fits no kernel tuned here (a shape names every integer parameter of a "
                      "kernel)", o->shapes[j]);
    kc_workload_recorded_free(&rec);
    *out = plans;
    *nplans = n;
    return rc;
}

/* ---- search -------------------------------------------------------------------------------- */

static uint64_t mix(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3u; /* FNV-1a */
    return h;
}

static long budget(const kc_tune_device_options *o)
{
    return o->unlimited ? 0 : o->budget > 0 ? o->budget : KC_TUNE_DEFAULT_BUDGET;
}

/* "best WG=256,PT=4 12.3 us (default 20.1 us, 1.63x faster)". */
static void summarise(td_search *r, kc_tune_stop why, bool measured)
{
    td_session *s = r->s;
    kc_arena a;
    kc_arena_init(&a);
    /* the default is what libkcrt launches untuned here: kc.yaml's for
     * this device's type, else the source's KC_TUNE defaults */
    const char *variant, *def = td_variant_text(&a, r->tk, r->tk->start), *typed = td_type_default(r, &a);
    int *point = kc_arena_alloc(&a, sizeof(int) * (size_t)(r->tk->ndims ? r->tk->ndims : 1));
    if (typed && td_point_of(r->tk, typed, point))
        def = td_variant_text(&a, r->tk, point); /* spelt as the cache keys it */
    double t, tdef = NAN;
    char bt[32], dt[32], fails[320] = "";
    kc_cache_key dk = td_key(&a, r, def);
    kc_cache_result dr;
    if (kc_cache_get(s->cache, &dk, &dr, &a) && dr.status == KC_RESULT_OK)
        tdef = dr.time_ns;
    for (int st = 1; st < KC_RESULT_COUNT; st++)
        if (r->by_status[st])
            snprintf(fails + strlen(fails), sizeof(fails) - strlen(fails), ", %ld %s", r->by_status[st],
                     kc_result_status_name((kc_result_status)st));
    if (r->spill_skipped)
        snprintf(fails + strlen(fails), sizeof(fails) - strlen(fails),
                 ", %ld skipped for spilling registers (--allow-spills measures them)", r->spill_skipped);
    if (r->raced)
        snprintf(fails + strlen(fails), sizeof(fails) - strlen(fails),
                 "; racing cut %ld timing%s short (%.1f samples each, not 10 or more)", r->raced,
                 r->raced == 1 ? "" : "s", (double)r->raced_samples / (double)r->raced);
    if (td_winner(r, &a, &variant, &t)) {
        td_time_text(bt, sizeof(bt), t);
        td_time_text(dt, sizeof(dt), tdef);
        char speedup[64] = "";
        if (!isnan(tdef))
            snprintf(speedup, sizeof(speedup), " (default %s, %.2fx)", dt, tdef / t);
        if (s->o->apply_only || !measured)
            td_progress_say(&s->progress, "%s %s: best %s %s%s, from the cache%s", r->tk->name, r->shape,
                            *variant ? variant : "(no tunables)", bt, speedup,
                            measured ? "" : " (searched before the restart)");
        else
            td_progress_say(&s->progress, "%s %s: best %s %s%s; %ld measured, %ld from the cache%s; %s",
                            r->tk->name, r->shape, *variant ? variant : "(no tunables)", bt, speedup, r->measured,
                            r->cached, fails, kc_tune_stop_text(why));
    } else {
        td_progress_say(&s->progress, "%s %s: %s; %ld measured, %ld from the cache%s", r->tk->name, r->shape,
                        r->measured + r->cached ? "no variant passed" : "nothing measured yet", r->measured,
                        r->cached, fails);
    }
    kc_arena_free(&a);
}

/* The final line's word on variants skipped for spilling, or "". */
static const char *spill_note(long skipped)
{
    static char text[96];
    if (!skipped)
        return "";
    snprintf(text, sizeof(text), ", %ld skipped for spilling registers", skipped);
    return text;
}

/* The final line's word on racing, or "" when it stopped nothing. */
static const char *racing_note(long raced)
{
    static char text[96];
    if (!raced)
        return "";
    snprintf(text, sizeof(text), "; racing cut %ld timing%s short", raced, raced == 1 ? "" : "s");
    return text;
}

static double seconds_for(double deadline, long pairs_left)
{
    if (deadline <= 0)
        return 0;
    double left = deadline - td_now();
    return left > 0 ? left / (double)pairs_left : -1;
}

/* Sets the progress line's plan: the budget, or the valid variants when
 * fewer (or when there is no budget). false when there are none. */
static bool planned(td_session *s, td_search *r)
{
    long n = kc_tune_valid_count(r->tctx), b = budget(s->o);
    if (n == 0)
        return false;
    s->progress.budget = n > 0 && (b == 0 || n < b) ? n : b;
    return true;
}

/* Transfer: the search's space is the kernel's, seeded with what earlier
 * searches of it found (transfer.c), unless --no-transfer. */
static void start_from_earlier_winners(td_session *s, td_search *r, kc_arena *a)
{
    r->space = r->tk->space;
    if (s->o->no_transfer)
        return;
    int *seeds = kc_arena_alloc(a, sizeof(int) * (size_t)(TRANSFER_MAX * r->tk->ndims + 1));
    kc_buf note = {0};
    int n = td_transfer_seeds(r, a, seeds, TRANSFER_MAX, &note);
    if (n > 0) {
        r->space.seeds = seeds, r->space.nseeds = n;
        if (!s->o->quiet)
            td_progress_say(&s->progress, "%s %s: starting from the default and %d seed%s: %s",
                            r->tk->name, r->shape, n, n == 1 ? "" : "s", note.data);
    }
    kc_buf_free(&note);
}

/* Searches one kernel at one shape; the winner goes to the bundle. */
static int search(td_session *s, td_kernel *tk, const char *shape, bool measure, double seconds,
                  uint64_t input_seed)
{
    const kc_tune_device_options *o = s->o;
    td_search r = {.s = s, .tk = tk, .shape = shape};
    kc_arena seed_arena;
    kc_arena_init(&seed_arena);
    char err[1024];
    int rc = 0;
    kc_tune_stop why = KC_TUNE_STOP_TIME;
    td_progress_pair(&s->progress, tk->name, shape, budget(o));
    bool run = measure && !o->apply_only && seconds >= 0 && !td_interrupted();
    if (run && !td_workload_init(&r.w, s->ctx, tk->info, shape, mix(mix(input_seed, tk->name), shape), err,
                                 sizeof(err)))
        rc = fail(s, "%s %s: %s", tk->name, shape, err);
    else if (run && !td_reference(&r, err, sizeof(err)))
        rc = fail(s, "%s %s: %s", tk->name, shape, err);
    else if (run) {
        kc_tune_options to = {o->strategy, budget(o), seconds, o->seed};
        start_from_earlier_winners(s, &r, &seed_arena);
        if (!(r.tctx = kc_tune_new(&r.space, td_measure, &r, &to, err, sizeof(err))))
            rc = fail(s, "%s: %s", tk->name, err);
        else if (!planned(s, &r))
            rc = fail(s, "%s: no variant fits %s (KC_REQUIRE and the device's workgroup limits rule out "
                      "every one)", tk->name, s->dev->name);
        else if (kc_cache_put_space(s->cache, tk->name, tk->prog->source_hash, tk->space_text, err, sizeof(err))) {
            why = kc_tune_run(r.tctx);
            if (r.stop)
                rc = fail(s, "%s %s: %s", tk->name, shape, r.error);
        } else
            rc = fail(s, "%s", err);
    }
    s->sum->pairs += run;
    s->sum->measured += r.measured;
    s->sum->cached += r.cached;
    s->sum->raced += r.raced;
    s->sum->spill_skipped += r.spill_skipped;
    for (int st = 1; st < KC_RESULT_COUNT; st++)
        s->sum->failed += r.by_status[st];
    if (!td_apply(&r, err, sizeof(err)))
        rc = fail(s, "writing the winner of %s %s to %s: %s", tk->name, shape, o->bundle, err);
    else if (!o->quiet)
        summarise(&r, run ? why : KC_TUNE_STOP_FINISHED, measure);
    /* cut short: by Ctrl-C or the time limit, or not run when it was to be */
    bool cut = run ? why == KC_TUNE_STOP_ASKED || (o->seconds > 0 && why == KC_TUNE_STOP_TIME) : measure;
    if (cut)
        s->sum->interrupted |= !o->apply_only;
    kc_tune_free(r.tctx);
    td_workload_free(&r.w);
    kc_arena_free(&seed_arena);
    return rc;
}

/* ---- the whole tune ------------------------------------------------------------------------- */

static uint64_t fresh_seed(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return ((uint64_t)t.tv_sec * 1000000007u) ^ (uint64_t)t.tv_nsec ^ ((uint64_t)kc_process_id() << 32);
}

static void header(td_session *s, long pairs, uint64_t input_seed)
{
    const kc_tune_device_options *o = s->o;
    if (o->quiet)
        return;
    fprintf(o->log, "kc tune: %s on %s (%s, target %s)\n", o->bundle, s->dev->name, s->dev->backend,
            s->target->name);
    if (o->apply_only)
        fprintf(o->log, "kc tune: applying the cache's winners for %ld kernel and shape pair%s, measuring "
                "nothing\n", pairs, pairs == 1 ? "" : "s");
    else
        fprintf(o->log, "kc tune: %ld search%s, strategy %s, cache %s, inputs seed %llu\n", pairs,
                pairs == 1 ? "" : "es", o->strategy ? o->strategy : "default", s->cache_path,
                (unsigned long long)input_seed);
    if (!o->apply_only && budget(o))
        fprintf(o->log, "kc tune: at most %ld evaluations per search%s\n", budget(o),
                o->seconds > 0 ? ", within the time limit" : "");
    else if (!o->apply_only)
        fprintf(o->log, "kc tune: no evaluation limit%s\n", o->seconds > 0 ? "; the time limit" : "");
    if (o->cold)
        fprintf(o->log, "kc tune: cold caches: %ld MiB of scratch written before each timed launch; "
                "results kept apart from warm ones\n", o->cold_mib ? o->cold_mib : (long)(KCRT_FLUSH_BYTES >> 20));
}

static int tune_plans(td_session *s, td_plan *plans, int n, uint64_t input_seed, double deadline)
{
    long total = 0, done = 0;
    int rc = 0;
    for (int i = 0; i < n; i++)
        total += plans[i].nshapes;
    if (!total) /* exit 0 here would let CI ship an untuned bundle */
        return fail(s, "nothing to tune: no kernel of %s has a shape in kc.yaml; give shapes there or with "
                    "--shape NAME=VALUE,…", s->o->bundle);
    header(s, total, input_seed);
    td_progress_init(&s->progress, s->o->log, s->o->quiet, total, deadline);
    for (int i = 0; i < n && !rc; i++) {
        char err[1024];
        if (!plans[i].nshapes)
            continue;
        if (!td_kernel_open(&plans[i].tk, s->b, plans[i].info, s->dev, err, sizeof(err))) {
            rc = fail(s, "%s", err);
            break;
        }
        plans[i].opened = true;
        for (int j = 0; j < plans[i].nshapes && !rc; j++, done++) {
            bool again = done >= s->o->resume_after; /* not finished before a restart */
            rc = search(s, &plans[i].tk, plans[i].shapes[j], again, seconds_for(deadline, total - done), input_seed);
            searches_done = done + 1;
        }
    }
    return rc;
}

static int report(td_session *s, td_plan *plans, int n)
{
    td_kernel **ks = kc_arena_alloc(&s->arena, sizeof(td_kernel *) * (size_t)(n + 1));
    const char *const **shapes = kc_arena_alloc(&s->arena, sizeof(char **) * (size_t)(n + 1));
    int *nshapes = kc_arena_alloc(&s->arena, sizeof(int) * (size_t)(n + 1)), m = 0;
    for (int i = 0; i < n; i++)
        if (plans[i].opened)
            ks[m] = &plans[i].tk, shapes[m] = plans[i].shapes, nshapes[m++] = plans[i].nshapes;
    char err[1024];
    if (!td_write_report(s, ks, shapes, nshapes, m, err, sizeof(err)))
        return fail(s, "the report: %s", err);
    fprintf(s->o->log, "kc tune: wrote %s\n", s->o->report);
    return 0;
}

int kc_tune_device(const kc_tune_device_options *o, kc_tune_device_summary *summary)
{
    kc_tune_device_summary ignored;
    td_session s = {.o = o, .sum = summary ? summary : &ignored, .measured_by = o->cold ? KC_VERSION KC_CACHE_COLD_MARK : KC_VERSION};
    memset(s.sum, 0, sizeof(*s.sum));
    kc_arena_init(&s.arena);
    td_progress_init(&s.progress, o->log, o->quiet, 0, 0);
    double deadline = o->seconds > 0 ? td_now() + o->seconds : 0;
    tune_deadline = deadline;
    searches_done = o->resume_after;
    uint64_t input_seed = o->input_seed ? o->input_seed : fresh_seed();
    td_plan *plans = NULL;
    int n = 0;
    int rc = open_all(&s);
    if (!rc)
        s.sum->cpu_device = s.dev->type == KCRT_DEVICE_CPU;
    if (!rc)
        rc = plan(&s, &plans, &n);
    if (!rc)
        rc = tune_plans(&s, plans, n, input_seed, deadline);
    if (o->report && plans && (!rc || s.sum->measured))
        rc |= report(&s, plans, n);
    if (!rc && !o->quiet && o->apply_only)
        fprintf(o->log, "kc tune: %ld tuned row%s in %s, from the cache\n", s.sum->applied,
                s.sum->applied == 1 ? "" : "s", o->bundle);
    else if (!rc && !o->quiet)
        fprintf(o->log, "kc tune: %ld measured, %ld from the cache, %ld failed%s; %ld tuned row%s in %s%s%s\n",
                s.sum->measured, s.sum->cached, s.sum->failed, spill_note(s.sum->spill_skipped), s.sum->applied,
                s.sum->applied == 1 ? "" : "s",
                o->bundle, s.sum->interrupted ? " (stopped early: run kc tune again to go on)" : "",
                racing_note(s.sum->raced));
    for (int i = 0; i < n; i++)
        if (plans[i].opened)
            td_kernel_close(&plans[i].tk);
    close_all(&s);
    kc_arena_free(&s.arena);
    return rc;
}
