/*
 * ils.c — greedy iterated local search, the default smart strategy.
 *
 * GPU tuning spaces are rugged but strongly local: changing one tunable
 * (a tile size, a flag) usually moves the time a little, and the fast
 * configurations share most of their values. So:
 *
 *   1. Descend: from the current point, visit its Hamming-distance-1
 *      neighbours (one tunable changed, valid ones only) in random order
 *      and move to the first that is faster (first improvement: cheaper
 *      per step than scanning the whole neighbourhood, and the random
 *      order keeps runs with different seeds apart). Stop at a point no
 *      neighbour beats: a local optimum.
 *   2. Kick: from the best local optimum so far, take KICK_MIN to
 *      KICK_MAX random valid Hamming-1 steps and descend again; keep the
 *      result when it is better. A small kick explores a neighbouring
 *      basin for much less than a restart costs.
 *   3. Restart: after PATIENCE kicks in a row that found nothing better,
 *      descend from a fresh random unmeasured point, so that a run is
 *      not stuck in one region for good.
 *
 * Points already measured cost nothing (the ctx remembers them), so the
 * descents that retrace known ground are free. Failed measurements count
 * as infinitely slow: a descent from one moves to any neighbour that
 * works.
 *
 * Parameters: PATIENCE = 5 and kicks of 2 to 3 steps. In a small trial
 * on the four replayed spaces (PATIENCE 2, 5, 10, 20; with and without
 * kicks) the results moved by less than the run-to-run spread; kicks
 * helped most on the GEMM space. ils has no schedule, so it behaves the
 * same under an evaluation budget, a time limit or none.
 */
#include "kc_tune.h"

#include <string.h>

enum { PATIENCE = 5, KICK_MIN = 2, KICK_MAX = 3 };

typedef struct ils {
    kc_tune_ctx *ctx;
    int nd;
    int *nbrs; /* room for every neighbour of one point */
} ils;

static void copy(const ils *s, int *dst, const int *src)
{
    memcpy(dst, src, sizeof(int) * (size_t)s->nd);
}

/* Moves p to a local optimum by first improvement; returns its time. */
static double descend(ils *s, int *p, double t)
{
    for (;;) {
        int n = kc_tune_neighbours(s->ctx, p, s->nbrs);
        int i = 0;
        for (; i < n && !kc_tune_done(s->ctx); i++) {
            double u = kc_tune_eval(s->ctx, s->nbrs + i * s->nd);
            if (u < t) {
                copy(s, p, s->nbrs + i * s->nd);
                t = u;
                break;
            }
        }
        if (i >= n || kc_tune_done(s->ctx))
            return t;
    }
}

/* A random walk of a few valid steps (the neighbours come shuffled). */
static void kick(ils *s, int *p)
{
    int steps = KICK_MIN + kc_tune_rand_below(s->ctx, KICK_MAX - KICK_MIN + 1);
    for (int k = 0; k < steps; k++) {
        if (kc_tune_neighbours(s->ctx, p, s->nbrs) == 0)
            return;
        copy(s, p, s->nbrs);
    }
}

void kc_tune_ils(kc_tune_ctx *ctx)
{
    ils s = {ctx, kc_tune_space_of(ctx)->ndims, NULL};
    s.nbrs = kc_tune_alloc_points(ctx, kc_tune_max_neighbours(ctx) + 1);
    int *p = kc_tune_alloc_points(ctx, 1), *best = kc_tune_alloc_points(ctx, 1);
    if (!kc_tune_start_point(ctx, p))
        return;
    double tbest = descend(&s, p, kc_tune_eval(ctx, p));
    copy(&s, best, p);
    int fails = 0;
    while (!kc_tune_done(ctx)) {
        if (fails < PATIENCE) {
            copy(&s, p, best);
            kick(&s, p);
        } else if (kc_tune_random_point(ctx, p)) {
            fails = 0;
        } else {
            return; /* every valid point is measured */
        }
        double t = descend(&s, p, kc_tune_eval(ctx, p));
        if (t < tbest) {
            copy(&s, best, p);
            tbest = t, fails = 0;
        } else {
            fails++;
        }
    }
}
