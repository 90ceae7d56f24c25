/*
 * cmd_tune.c — `kc tune`: on the user's device (tuner/device), or against
 * a recorded space with --replay (cmd_tune_replay.c).
 *
 * On a device, Ctrl-C stops after the measurement in flight and still
 * writes the winners found so far to the bundle; a second Ctrl-C kills at
 * once, which loses nothing either (the cache commits each result). A
 * variant that hangs the device cannot be stopped from the host: the
 * watchdog records it and kc re-executes itself to go on from the cache,
 * at most MAX_RESTARTS times.
 */
#include "cmd_tune.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kc/kcrt.h"
#include "kc_bench.h"

enum { MAX_REPEAT = 1000000, MAX_RESTARTS = 20 };

static bool parse_long(const char *s, long *v)
{
    char *end;
    errno = 0;
    *v = strtol(s, &end, 10);
    return end != s && *end == 0 && errno == 0;
}

static bool parse_double(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return end != s && *end == 0 && errno == 0 && isfinite(*v);
}

/* "90", "90s", "10m", "1h30m", "2.5h": seconds, > 0. */
static bool parse_duration(const char *s, double *out)
{
    double total = 0;
    const char *at = s;
    while (*at) {
        char *end;
        errno = 0;
        double v = strtod(at, &end);
        if (end == at || errno || !isfinite(v) || v < 0)
            return false;
        double unit = *end == 'h' ? 3600 : *end == 'm' ? 60 : 1;
        total += v * unit;
        at = end + (*end == 'h' || *end == 'm' || *end == 's');
        if (end == at && *at) /* a number without a unit must be the last */
            return false;
    }
    *out = total;
    return total > 0 && at != s;
}

static const kc_opt opts[] = {
    {"--replay", true},    {"--strategy", true}, {"--budget", true},     {"--budget-fraction", true},
    {"--repeat", true},    {"--seed", true},     {"--json", false},      {"--list-strategies", false},
    {"--kernel", true},    {"--shape", true},    {"--device", true},     {"--backend", true},
    {"--time", true},      {"--cache", true},    {"--apply-only", false}, {"--report", true},
    {"--report-axes", true}, {"--input-seed", true}, {"--timeout", true}, {"--timing-cap", true},
    {"--quiet", false},    {"--no-racing", false}, {"--no-transfer", false}, {"--smallest", false},
    {"--allow-spills", false}, {"--compile-limit", true}, {"--cold", true}, {"--shapes-from", true},
};
enum { NOPTS = sizeof(opts) / sizeof(opts[0]) };

static bool push(const char **list, int *n, const char *v)
{
    if (*n == TUNE_MAX_LIST)
        return false;
    list[(*n)++] = v;
    return true;
}

/* "WG,TM" into the report's two axes. */
static bool parse_axes(tune_args *t, const char *v)
{
    const char *comma = strchr(v, ',');
    if (!comma || comma == v || !comma[1] || strchr(comma + 1, ','))
        return false;
    size_t n = (size_t)(comma - v);
    char *first = malloc(n + 1); /* lives as long as the command */
    if (!first)
        abort();
    memcpy(first, v, n);
    first[n] = 0;
    t->dev.report_axes[0] = first;
    t->dev.report_axes[1] = comma + 1;
    return true;
}

static bool parse_budget(tune_args *t, const char *v)
{
    t->has_budget = true;
    if (strcmp(v, "all") == 0)
        return t->dev.unlimited = true;
    return parse_long(v, &t->budget) && t->budget >= 1;
}

/* One option; false when its value is bad. */
static bool take(tune_args *t, int k, const char *v)
{
    kc_tune_device_options *d = &t->dev;
    long l;
    switch (k) {
    case 0: t->replay = v; return true;
    case 1: t->strategy = v; return true;
    case 2: return parse_budget(t, v);
    case 3: t->has_fraction = true; return parse_double(v, &t->fraction);
    case 4: return parse_long(v, &t->repeat);
    case 5: return parse_long(v, &t->seed) && t->seed >= 0;
    case 6: t->json = true; return true;
    case 7: t->list = true; return true;
    case 8: return push(t->kernels, &d->nkernels, v);
    case 9: return push(t->shapes, &d->nshapes, v);
    case 10: return parse_long(v, &l) && l >= 0 && l <= 1000 && ((d->device = (int)l), true);
    case 11: d->backend = v; return true;
    case 12: return parse_duration(v, &d->seconds);
    case 13: d->cache = v; return true;
    case 14: d->apply_only = true; return true;
    case 15: d->report = v; return true;
    case 16: return parse_axes(t, v);
    case 17: return parse_long(v, &l) && l > 0 && ((d->input_seed = (uint64_t)l), true);
    case 18: return parse_duration(v, &d->timeout_s);
    case 19: return parse_duration(v, &d->timing_cap_s);
    case 20: d->quiet = true; return true;
    case 21: d->no_racing = true; return true;
    case 22: d->no_transfer = true; return true;
    case 23: d->smallest = true; return true;
    case 24: d->allow_spills = true; return true;
    case 25: return parse_duration(v, &d->compile_limit_s);
    case 26:
        d->cold = true;
        return parse_long(v, &d->cold_mib) && d->cold_mib >= 0 && d->cold_mib <= (long)(KCRT_FLUSH_MAX_BYTES >> 20);
    default: d->shapes_from = v; return true;
    }
}

static const char *const expected[NOPTS] = {
    [2] = "a number >= 1 or 'all'", [3] = "a number",      [4] = "a number",
    [5] = "a number >= 0",          [8] = "at most 256",   [9] = "at most 256",
    [10] = "a device index (kc devices lists them)", [12] = "a duration such as 90s, 10m or 1h30m",
    [16] = "two tunables, as WG,TM", [17] = "a number >= 1", [18] = "a duration such as 5s",
    [19] = "a duration such as 0.5s", [25] = "a duration such as 2m", [26] = "MiB from 0 to 4096 (0: 256)",
};

/* Fills t from argv; returns -1 when all is well, else the exit status. */
static int parse_args(int argc, char **argv, tune_args *t)
{
    kc_args a = {"tune", argc, argv, 1, NULL, NULL};
    for (int k; (k = kc_next_arg(&a, opts, NOPTS)) != -2;) {
        if (k == -3)
            return KC_EXIT_USAGE;
        if (k == -1 && t->dev.bundle)
            return kc_usage_error("tune", "one bundle at a time ('%s' and '%s')", t->dev.bundle, a.positional);
        if (k == -1)
            t->dev.bundle = a.positional;
        else if (!take(t, k, a.value))
            return kc_usage_error("tune", "%s takes %s, not '%s'", opts[k].name, expected[k] ? expected[k] : "a value",
                                  a.value);
    }
    if (t->has_budget && t->has_fraction)
        return kc_usage_error("tune", "give --budget or --budget-fraction, not both");
    if (t->replay && t->dev.bundle)
        return kc_usage_error("tune", "unexpected argument '%s' with --replay", t->dev.bundle);
    if (!t->replay && !t->dev.bundle && !t->list)
        return kc_usage_error("tune", "give a bundle (kc tune BUNDLE) or --replay FILE");
    if (t->dev.smallest && (t->dev.nshapes || t->replay || t->dev.shapes_from))
        return kc_usage_error("tune", "--smallest picks among kc.yaml's shapes: not with %s",
                              t->replay ? "--replay" : t->dev.nshapes ? "--shape" : "--shapes-from");
    if (t->dev.shapes_from && (t->dev.nshapes || t->replay))
        return kc_usage_error("tune", "--shapes-from gives the shapes: not with %s",
                              t->replay ? "--replay" : "--shape");
    if (!t->replay && (t->has_fraction || t->json || t->repeat != 1))
        return kc_usage_error("tune", "--budget-fraction, --repeat and --json go with --replay");
    return -1;
}

/* ---- replay ------------------------------------------------------------------------------------ */

static int replay(tune_args *t)
{
    const char *bad = NULL;
    if (t->repeat < 1 || t->repeat > MAX_REPEAT)
        bad = "--repeat must be from 1 to 1000000";
    else if (t->dev.unlimited)
        bad = "--budget all makes no sense in a replay: use --budget-fraction 1";
    else if (t->has_fraction && !(t->fraction > 0))
        bad = "the budget fraction must be a number above 0";
    if (bad) {
        fprintf(stderr, "kc tune: %s\n", bad);
        return KC_EXIT_ERROR;
    }
    if (!kc_tune_find_strategy(t->strategy)) {
        fprintf(stderr, "kc tune: unknown strategy '%s'; 'kc tune --list-strategies' lists them\n", t->strategy);
        return KC_EXIT_ERROR;
    }
    if (!t->has_budget && !t->has_fraction)
        t->fraction = 0.1;
    return kc_tune_replay_main(t);
}

/* ---- on a device --------------------------------------------------------------------------------- */

static char **restart_argv;

static void on_hang(void *user, const char *message)
{
    (void)user;
    const char *env = getenv("KC_TUNE_RESTARTS");
    int n = env ? atoi(env) : 0;
    fprintf(stderr, "\nkc tune: %s\n", message);
    if (n >= MAX_RESTARTS) {
        fprintf(stderr, "kc tune: %d restarts already; giving up (run kc tune again to go on)\n", n);
        _exit(KC_EXIT_ERROR);
    }
    char num[16], resume[64];
    snprintf(num, sizeof(num), "%d", n + 1);
    kc_set_env("KC_TUNE_RESTARTS", num);
    kc_tune_device_position at = kc_tune_device_where();
    snprintf(resume, sizeof(resume), "%ld %.3f", at.searches_done, at.seconds_left);
    kc_set_env("KC_TUNE_RESUME", resume);
    fprintf(stderr, "kc tune: restarting to go on from the cache (%d of at most %d)\n", n + 1, MAX_RESTARTS);
    fflush(stderr);
    kc_restart_self(restart_argv);
    fprintf(stderr, "kc tune: cannot restart: %s\n", strerror(errno));
    _exit(KC_EXIT_ERROR);
}

/* After a restart (on_hang): the searches the hang's run finished are
 * not searched again, and the time limit is what was left of it, so that
 * `--time 10m` means ten minutes however often a launch hangs. */
static void resume(kc_tune_device_options *d)
{
    const char *restarts = getenv("KC_TUNE_RESTARTS"), *at = getenv("KC_TUNE_RESUME");
    long done;
    double left;
    if (!restarts || !at || sscanf(at, "%ld %lf", &done, &left) != 2 || done < 0)
        return;
    d->resume_after = done;
    if (d->seconds > 0 && left > 0)
        d->seconds = left;
}

static void on_interrupt(void)
{
    kc_tune_device_interrupt();
    kc_write_stderr("\nkc tune: stopping after this measurement (Ctrl-C again to stop now)\n");
}

/* On a CPU device the variants run on the host's CPUs, so what else
 * takes them lengthens the timings: time a hypervisor gives to other
 * guests, and other processes of this machine (a build, a browser). As
 * the variants are timed one after another, a share that changes during
 * the tune favours those timed in its quieter minutes (docs/tuning.md). */
static void note_host_load(const kc_bench_cpu *before, const kc_bench_cpu *after,
                           const kc_tune_device_summary *sum, bool quiet)
{
    if (quiet || !sum->measured || !sum->cpu_device)
        return;
    static const char again[] = "close winners are less certain (to measure again on a quiet machine, tune with "
                                "a new --cache FILE: this cache keeps them)";
    double steal = kc_bench_cpu_steal(before, after), others = kc_bench_cpu_others(before, after);
    if (steal >= KC_BENCH_STEAL_NOTE)
        fprintf(stderr,
                "kc tune: %.0f%% of the host's CPU time went to other guests of its hypervisor during this "
                "tune: its timings ran long and %s\n",
                100 * steal, again);
    if (others >= KC_BENCH_OTHERS_NOTE)
        fprintf(stderr,
                "kc tune: other processes kept %.0f%% of this machine's CPU time busy during this tune, on the "
                "cores the variants ran on: timings taken while they ran read slow and %s\n",
                100 * others, again);
}

static int on_device(tune_args *t)
{
    kc_tune_device_options *d = &t->dev;
    if (t->strategy && !kc_tune_find_strategy(t->strategy)) {
        fprintf(stderr, "kc tune: unknown strategy '%s'; 'kc tune --list-strategies' lists them\n", t->strategy);
        return KC_EXIT_ERROR;
    }
    d->strategy = t->strategy;
    d->budget = t->budget;
    d->unlimited |= d->seconds > 0 && !t->has_budget; /* --time alone: as many as fit */
    resume(d);
    d->seed = (uint64_t)t->seed;
    d->kernels = d->nkernels ? t->kernels : NULL;
    d->shapes = d->nshapes ? t->shapes : NULL;
    d->log = stderr;
    d->on_hang = on_hang;
    restart_argv = kc_main_argv;
    kc_on_interrupt(on_interrupt); /* a second Ctrl-C ends it at once */
    kc_tune_device_summary sum;
    kc_bench_cpu before, after;
    bool host = kc_bench_cpu_now(&before);
    int rc = kc_tune_device(d, &sum);
    kc_on_interrupt(NULL);
    if (host && kc_bench_cpu_now(&after))
        note_host_load(&before, &after, &sum, d->quiet);
    return rc ? KC_EXIT_ERROR : KC_EXIT_OK;
}

int kc_cmd_tune(int argc, char **argv)
{
    tune_args t = {.repeat = 1, .seed = 1, .dev = {.device = -1}};
    int status = parse_args(argc, argv, &t);
    if (status < 0 && t.list)
        kc_tune_list_strategies(), status = KC_EXIT_OK;
    else if (status < 0 && t.replay)
        t.strategy = t.strategy ? t.strategy : "default", status = replay(&t);
    else if (status < 0)
        status = on_device(&t);
    free((char *)t.dev.report_axes[0]);
    return status;
}
