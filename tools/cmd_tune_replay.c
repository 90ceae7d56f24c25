/*
 * cmd_tune_replay.c — `kc tune --replay FILE`: a strategy run against a
 * recorded space instead of a device, to compare strategies on what real
 * GPUs measured (docs/tuning.md has the figures).
 */
#include "cmd_tune.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void kc_tune_list_strategies(void)
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

int kc_tune_replay_main(tune_args *t)
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

