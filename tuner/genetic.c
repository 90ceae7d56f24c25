/*
 * genetic.c — a genetic algorithm over whole configurations.
 *
 * A population of POP measured points evolves by generations. Each child
 * takes every tunable from one of two parents (uniform crossover, since
 * tunables have no order that would make one-point crossover meaningful),
 * parents picked by binary tournaments (the faster of two random members:
 * gentle selection pressure that keeps diversity), and then each tunable
 * is redrawn with probability MUTATION. The ELITE best members survive
 * unchanged, so the best point never leaves the population.
 *
 * In sparse spaces many children are invalid or already measured; they
 * are redrawn, at most TRIES times per member, and a generation that
 * cannot fill up takes random unmeasured points instead ("immigrants"),
 * which also rescues a population that has converged on one point.
 * Failed measurements rank last.
 *
 * Parameters: POP = 20, ELITE = 2, MUTATION = 0.2 per tunable. In a small
 * trial on the replayed spaces (population 10 or 20, mutation 0.1 or 0.2)
 * the differences were within the run-to-run spread. The GA needs several
 * generations to pay off, so it trails ils and anneal at small budgets.
 */
#include "kc_tune.h"

#include <stdlib.h>
#include <string.h>

#define MUTATION 0.2
enum { POP = 20, ELITE = 2, TRIES = 50 };

typedef struct member {
    double t;
    int *p;
} member;

static int by_time(const void *a, const void *b)
{
    double x = ((const member *)a)->t, y = ((const member *)b)->t;
    return (x > y) - (x < y);
}

static const member *tournament(kc_tune_ctx *ctx, const member *pop, int n)
{
    const member *a = &pop[kc_tune_rand_below(ctx, n)], *b = &pop[kc_tune_rand_below(ctx, n)];
    return b->t < a->t ? b : a;
}

/* A new valid unmeasured child of two tournament winners, or false. */
static bool breed(kc_tune_ctx *ctx, const member *pop, int n, int *child)
{
    const kc_tune_space *s = kc_tune_space_of(ctx);
    for (int k = 0; k < TRIES; k++) {
        const member *a = tournament(ctx, pop, n), *b = tournament(ctx, pop, n);
        for (int d = 0; d < s->ndims; d++) {
            child[d] = (kc_tune_rand(ctx) & 1 ? a : b)->p[d];
            if (kc_tune_rand_unit(ctx) < MUTATION)
                child[d] = kc_tune_rand_below(ctx, s->nvalues[d]);
        }
        if (kc_tune_valid(ctx, child) && !kc_tune_measured(ctx, child))
            return true;
    }
    return false;
}

/* Fills next[from..POP) with children or immigrants; returns the count. */
static int generation(kc_tune_ctx *ctx, const member *pop, int n, member *next, int from)
{
    int m = from;
    while (m < POP && !kc_tune_done(ctx)) {
        if (!breed(ctx, pop, n, next[m].p) && !kc_tune_random_point(ctx, next[m].p))
            break; /* nothing new is left to find */
        next[m].t = kc_tune_eval(ctx, next[m].p);
        m++;
    }
    return m;
}

void kc_tune_genetic(kc_tune_ctx *ctx)
{
    int nd = kc_tune_space_of(ctx)->ndims;
    member *pop = kc_tune_alloc(ctx, sizeof(member) * POP);
    member *next = kc_tune_alloc(ctx, sizeof(member) * POP);
    for (int i = 0; i < POP; i++)
        pop[i].p = kc_tune_alloc_points(ctx, 1), next[i].p = kc_tune_alloc_points(ctx, 1);
    int n = 0;
    for (; n < POP && !kc_tune_done(ctx); n++) {
        if (!(n == 0 ? kc_tune_start_point(ctx, pop[n].p) : kc_tune_random_point(ctx, pop[n].p)))
            break;
        pop[n].t = kc_tune_eval(ctx, pop[n].p);
    }
    while (n > 0 && !kc_tune_done(ctx)) {
        qsort(pop, (size_t)n, sizeof(member), by_time);
        int keep = n < ELITE ? n : ELITE;
        for (int i = 0; i < keep; i++) {
            next[i].t = pop[i].t;
            memcpy(next[i].p, pop[i].p, sizeof(int) * (size_t)nd);
        }
        int m = generation(ctx, pop, n, next, keep);
        if (m == keep)
            return; /* no new point in a whole generation */
        member *swap = pop;
        pop = next, next = swap, n = m;
    }
}
