/*
 * cmd_tune.c — `kc tune`. For now only `--replay FILE`: a strategy run
 * against a recorded space, to compare strategies on what real GPUs
 * measured. On-device tuning comes with bundles (DESIGN.md §7) and says
 * so rather than pretending.
 */
#include "kc_tools.h"
#include "kc_tune.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_REPEAT = 1000000 };

typedef struct tune_args {
    const char *replay, *strategy;
    const char *bundle; /* a positional argument: on-device tuning */
    long budget;        /* 0: from fraction */
    double fraction;    /* of the space's size */
    long repeat;
    long seed;
    bool has_budget, has_fraction, json, list;
} tune_args;

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
    return end != s && *end == 0 && errno == 0;
}

/* Fills t from argv; returns -1 when all is well, else the exit status. */
static int parse_args(int argc, char **argv, tune_args *t)
{
    static const kc_opt opts[] = {
        {"--replay", true}, {"--strategy", true}, {"--budget", true}, {"--budget-fraction", true},
        {"--repeat", true}, {"--seed", true},     {"--json", false},  {"--list-strategies", false}};
    kc_args a = {"tune", argc, argv, 1, NULL, NULL};
    int r;
    while ((r = kc_next_arg(&a, opts, (int)(sizeof(opts) / sizeof(opts[0])))) != -2) {
        bool ok = true;
        switch (r) {
        case -3: return KC_EXIT_USAGE;
        case -1: t->bundle = a.positional; break;
        case 0: t->replay = a.value; break;
        case 1: t->strategy = a.value; break;
        case 2: ok = parse_long(a.value, &t->budget), t->has_budget = true; break;
        case 3: ok = parse_double(a.value, &t->fraction), t->has_fraction = true; break;
        case 4: ok = parse_long(a.value, &t->repeat); break;
        case 5: ok = parse_long(a.value, &t->seed) && t->seed >= 0; break;
        case 6: t->json = true; break;
        case 7: t->list = true; break;
        }
        if (!ok)
            return kc_usage_error("tune", "%s needs a number%s, not '%s'", opts[r].name,
                                  r == 5 ? " >= 0" : "", a.value);
    }
    if (t->has_budget && t->has_fraction)
        return kc_usage_error("tune", "give --budget or --budget-fraction, not both");
    if (t->replay && t->bundle)
        return kc_usage_error("tune", "unexpected argument '%s' with --replay", t->bundle);
    return -1;
}

/* Returns -1 when the values make sense, else the exit status. */
static int check_args(const tune_args *t)
{
    const char *bad = NULL;
    if (!t->replay) {
        fprintf(stderr,
                "kc tune: on-device tuning%s%s needs a bundle from 'kc build' and is not built "
                "yet in this branch;\nuse 'kc tune --replay FILE' to run a strategy against a "
                "recorded space (see 'kc help tune')\n",
                t->bundle ? " of " : "", t->bundle ? t->bundle : "");
        return KC_EXIT_ERROR;
    }
    if (t->repeat < 1 || t->repeat > MAX_REPEAT)
        bad = "--repeat must be from 1 to 1000000";
    else if (t->has_budget && t->budget < 1)
        bad = "the budget must be at least 1 evaluation";
    else if (t->has_fraction && !(t->fraction > 0 && isfinite(t->fraction)))
        bad = "the budget fraction must be a number above 0";
    if (bad)
        fprintf(stderr, "kc tune: %s\n", bad);
    else if (!kc_tune_find_strategy(t->strategy))
        fprintf(stderr, "kc tune: unknown strategy '%s'; 'kc tune --list-strategies' lists them\n",
                t->strategy);
    else
        return -1;
    return KC_EXIT_ERROR;
}

static void list_strategies(void)
{
    for (const kc_tune_strategy *s = kc_tune_strategies; s->name; s++)
        printf("%-11s %s\n", s->name, s->summary);
}

static json_t *config_json(const kc_tune_replay *r, const int *point)
{
    const kc_tune_space *s = kc_tune_replay_space(r);
    json_t *o = json_object();
    for (int d = 0; d < s->ndims; d++)
        json_object_set_new(o, s->names[d],
                            s->values[d] ? json_integer(s->values[d][point[d]])
                                         : json_string(kc_tune_replay_value_text(r, d, point[d])));
    return o;
}

static void print_json(const tune_args *t, const kc_tune_replay *r, const kc_tune_replay_info *in,
                       const kc_tune_replay_stats *st, const double *fr, const long *ev)
{
    json_t *o = json_object(), *fractions = json_array(), *evals = json_array();
    for (long i = 0; i < t->repeat; i++) {
        json_array_append_new(fractions, json_real(fr[i]));
        json_array_append_new(evals, json_integer(ev[i]));
    }
    json_object_set_new(o, "file", json_string(t->replay));
    json_object_set_new(o, "kernel", json_string(in->kernel));
    json_object_set_new(o, "device", json_string(in->device));
    json_object_set_new(o, "space_size", json_integer(in->size));
    json_object_set_new(o, "failed_configs", json_integer(in->failed));
    json_object_set_new(o, "ignored_entries", json_integer(in->ignored));
    json_object_set_new(o, "repaired", json_boolean(in->repaired_closers > 0));
    json_object_set_new(o, "product", json_real(in->product));
    json_object_set_new(o, "optimum", json_real(in->optimum));
    json_object_set_new(o, "optimum_config", config_json(r, in->optimum_point));
    json_object_set_new(o, "strategy", json_string(t->strategy));
    json_object_set_new(o, "resolved_strategy", json_string(st->strategy));
    json_object_set_new(o, "budget", json_integer(t->budget));
    json_object_set_new(o, "runs", json_integer(t->repeat));
    json_object_set_new(
        o, "seeds",
        json_pack("[I,I]", (json_int_t)t->seed, (json_int_t)((uint64_t)t->seed + (uint64_t)t->repeat - 1)));
    json_object_set_new(o, "mean_fraction_of_optimum", json_real(st->mean_fraction));
    json_object_set_new(o, "min_fraction_of_optimum", json_real(st->min_fraction));
    json_object_set_new(o, "max_fraction_of_optimum", json_real(st->max_fraction));
    json_object_set_new(o, "mean_evaluations", json_real(st->mean_evals));
    json_object_set_new(o, "fractions", fractions);
    json_object_set_new(o, "evaluations", evals);
    json_object_set_new(o, "seconds", json_real(st->seconds));
    json_dumpf(o, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    fputc('\n', stdout);
    json_decref(o);
}

static void print_text(const tune_args *t, const kc_tune_replay *r, const kc_tune_replay_info *in,
                       const kc_tune_replay_stats *st)
{
    const kc_tune_space *s = kc_tune_replay_space(r);
    printf("replay      %s", t->replay);
    if (*in->kernel || *in->device)
        printf(" (%s on %s)", *in->kernel ? in->kernel : "?", *in->device ? in->device : "?");
    printf("\nspace       %ld configurations (%ld failed) of %.0f in the product of %d tunables\n", in->size,
           in->failed, in->product, s->ndims);
    printf("optimum     %.6g:", in->optimum);
    for (int d = 0; d < s->ndims; d++)
        printf(" %s=%s", s->names[d], kc_tune_replay_value_text(r, d, in->optimum_point[d]));
    printf("\nstrategy    %s", t->strategy);
    if (strcmp(t->strategy, st->strategy) != 0)
        printf(" (%s)", st->strategy);
    printf("\nbudget      %ld evaluations", t->budget);
    if (t->fraction > 0)
        printf(" (ceil(%g x %ld))", t->fraction, in->size);
    printf("\nruns        %ld, seeds %llu..%llu, %.2f s\n", t->repeat, (unsigned long long)t->seed,
           (unsigned long long)((uint64_t)t->seed + (uint64_t)t->repeat - 1), st->seconds);
    printf("mean fraction of optimum  %.4f (min %.4f, max %.4f)\n", st->mean_fraction, st->min_fraction,
           st->max_fraction);
    printf("mean evaluations          %.1f\n", st->mean_evals);
}

static void print_notes(const char *path, const kc_tune_replay_info *in)
{
    if (in->repaired_closers > 0)
        fprintf(stderr, "kc tune: note: %s was cut short; dropped %ld bytes and closed %d brackets\n", path,
                in->repaired_bytes, in->repaired_closers);
    if (in->ignored > 0)
        fprintf(stderr,
                "kc tune: note: %s: ignored %ld cache entries (no time, a duplicate, or a value "
                "not in tune_params)\n",
                path, in->ignored);
}

static int replay(tune_args *t)
{
    char err[512];
    kc_tune_replay *r = kc_tune_replay_load(t->replay, err, sizeof(err));
    if (!r) {
        fprintf(stderr, "kc tune: %s\n", err);
        return KC_EXIT_ERROR;
    }
    kc_tune_replay_info in;
    kc_tune_replay_get_info(r, &in);
    print_notes(t->replay, &in);
    if (!t->budget) /* the small slack keeps 0.1 x 11130 from becoming 1114 */
        t->budget = (long)ceil(t->fraction * (double)in.size - 1e-9);
    kc_tune_options opt = {t->strategy, t->budget, 0, (uint64_t)t->seed};
    kc_tune_replay_stats st;
    double *fr = calloc((size_t)t->repeat, sizeof(double));
    long *ev = calloc((size_t)t->repeat, sizeof(long));
    int status = KC_EXIT_OK;
    if (!fr || !ev || kc_tune_replay_run(r, &opt, (int)t->repeat, &st, fr, ev, err, sizeof(err))) {
        fprintf(stderr, "kc tune: %s\n", fr && ev ? err : "out of memory");
        status = KC_EXIT_ERROR;
    } else if (t->json) {
        print_json(t, r, &in, &st, fr, ev);
    } else {
        print_text(t, r, &in, &st);
    }
    free(fr);
    free(ev);
    kc_tune_replay_free(r);
    return status;
}

int kc_cmd_tune(int argc, char **argv)
{
    tune_args t = {.strategy = "default", .repeat = 1, .seed = 1};
    int status = parse_args(argc, argv, &t);
    if (status >= 0)
        return status;
    if (t.list) {
        list_strategies();
        return KC_EXIT_OK;
    }
    if ((status = check_args(&t)) >= 0)
        return status;
    if (!t.has_budget && !t.has_fraction)
        t.fraction = 0.1;
    return replay(&t);
}
