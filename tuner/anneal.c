/*
 * anneal.c — simulated annealing over Hamming-distance-1 moves.
 *
 * Each step proposes one random valid neighbour (one tunable changed) and
 * accepts it when it is faster, or when it is slower with probability
 * exp(-d / T), where d is the relative slow-down (t_new - t) / t, so that
 * the schedule means the same on spaces timed in microseconds or seconds.
 * The temperature falls geometrically from T_START to T_END as the budget
 * is used (kc_tune_progress: evaluations or time, whichever is further):
 * early on it accepts a 10% slow-down about one time in three, at the end
 * practically never, so the search settles into a descent.
 *
 * Proposals that revisit measured points are free, so a cold search can
 * circle a local optimum without spending anything; after STALL proposals
 * in a row that measured nothing it restarts from a random unmeasured
 * point. A failed current point accepts any move.
 *
 * Parameters: T_START = 0.1, T_END = 0.001, STALL = 100. Of five
 * schedules tried on the replayed spaces (T_START from 1 down to 0.05,
 * T_END a hundredth of it or 0.001) the colder ones did a little better
 * at budgets of 2-5% of the space; at 10% all found the optimum.
 */
#include "kc_tune.h"

#include <math.h>
#include <string.h>

#define T_START 0.1
#define T_END 0.001
enum { STALL = 100 };

/* A random valid neighbour: a few cheap random draws, then the full
 * neighbourhood (in a sparse space most single changes are invalid). */
static bool propose(kc_tune_ctx *ctx, const int *p, int *q, int *nbrs)
{
    const kc_tune_space *s = kc_tune_space_of(ctx);
    for (int k = 0; k < 2 * s->ndims; k++) {
        int d = kc_tune_rand_below(ctx, s->ndims);
        if (s->nvalues[d] < 2)
            continue;
        memcpy(q, p, sizeof(int) * (size_t)s->ndims);
        q[d] = kc_tune_rand_below(ctx, s->nvalues[d] - 1);
        q[d] += q[d] >= p[d]; /* any value but the current one */
        if (kc_tune_valid(ctx, q))
            return true;
    }
    if (kc_tune_neighbours(ctx, p, nbrs) == 0)
        return false;
    memcpy(q, nbrs, sizeof(int) * (size_t)s->ndims);
    return true;
}

static bool accept(kc_tune_ctx *ctx, double t, double u)
{
    if (u <= t || isinf(t))
        return true;
    if (isinf(u))
        return false;
    double temp = T_START * pow(T_END / T_START, kc_tune_progress(ctx));
    return kc_tune_rand_unit(ctx) < exp(-((u - t) / t) / temp);
}

void kc_tune_anneal(kc_tune_ctx *ctx)
{
    int nd = kc_tune_space_of(ctx)->ndims;
    int *p = kc_tune_alloc_points(ctx, 1), *q = kc_tune_alloc_points(ctx, 1);
    int *nbrs = kc_tune_alloc_points(ctx, kc_tune_max_neighbours(ctx) + 1);
    if (!kc_tune_start_point(ctx, p))
        return;
    double t = kc_tune_eval(ctx, p);
    int idle = 0;
    while (!kc_tune_done(ctx)) {
        if (idle >= STALL || !propose(ctx, p, q, nbrs)) {
            if (!kc_tune_random_point(ctx, p))
                return;
            t = kc_tune_eval(ctx, p);
            idle = 0;
            continue;
        }
        long before = kc_tune_evals(ctx);
        double u = kc_tune_eval(ctx, q);
        idle = kc_tune_evals(ctx) > before ? 0 : idle + 1;
        if (accept(ctx, t, u)) {
            memcpy(p, q, sizeof(int) * (size_t)nd);
            t = u;
        }
    }
}
