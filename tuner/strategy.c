/*
 * strategy.c — the strategies by name, and what "default" means.
 *
 * The default is exhaustive search when every valid point fits the
 * evaluation budget (nothing can beat knowing the whole space), and
 * otherwise greedy iterated local search, which found the optimum or
 * within a few percent of it on every recorded GPU space we replayed, at
 * a tenth of the space and less (docs/tuning.md has the figures). A time
 * limit makes exhaustive search a poor bet, since its order finds good
 * points no sooner than any other, so with one the default is always ils.
 */
#include "tune_private.h"

#include <string.h>

const kc_tune_strategy kc_tune_strategies[] = {
    {"default", "exhaustive when every valid point fits the budget, else ils", NULL},
    {"exhaustive", "every valid point, in order", kc_tune_exhaustive},
    {"random", "uniformly random valid points, without replacement", kc_tune_random},
    {"ils", "iterated local search: round values first, single and pair moves, kicks, restarts", kc_tune_ils},
    {"forest", "ils guided by a random-forest model: neighbours by expected improvement", kc_tune_forest},
    {"anneal", "simulated annealing over Hamming-1 moves", kc_tune_anneal},
    {"genetic", "genetic algorithm: tournaments, uniform crossover, mutation", kc_tune_genetic},
    {NULL, NULL, NULL},
};

const kc_tune_strategy *kc_tune_find_strategy(const char *name)
{
    for (const kc_tune_strategy *s = kc_tune_strategies; s->name; s++)
        if (strcmp(s->name, name) == 0)
            return s;
    return NULL;
}

const char *kc_tune_default_choice(kc_tune_ctx *ctx, const kc_tune_options *opt)
{
    long n = kc_tune_valid_count(ctx);
    if (n >= 0 && opt->max_seconds <= 0 && (opt->max_evals == 0 || n <= opt->max_evals))
        return "exhaustive";
    return "ils";
}
