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
 *      order keeps runs with different seeds apart). At a point no
 *      neighbour beats, try unmeasured pair moves (two tunables changed
 *      together, each to an adjacent value) in random order, at most as
 *      many as the point has Hamming-1 neighbours; on the first that is
 *      faster, move there and descend again. Stop where neither beats
 *      it: a local optimum.
 *   2. Kick: from the best local optimum so far, take KICK_MIN to
 *      KICK_MAX random valid Hamming-1 steps and descend again; keep the
 *      result when it is better. A small kick explores a neighbouring
 *      basin for much less than a restart costs.
 *   3. Restart: after PATIENCE kicks in a row that found nothing better,
 *      descend from a fresh random unmeasured point, so that a run is
 *      not stuck in one region for good.
 *
 * Designs, by probes. A kernel often holds two designs behind a switch
 * (a tunable of two values: shared-memory tiles or not, texel reads or
 * not), and its constraints tie other tunables to each: conv1d's direct
 * design (VEC = 1) wants SMEM = 0, and SMEM = 0 wants BK = 8. A descent
 * cannot cross from one design to the other when every point between is
 * slow or invalid, and on lavapipe a tune of a dozen evaluations per
 * shape never left the shared-tile design although the direct one ran
 * twice as fast (docs/rvc.md). So ils measures, for each switch value not
 * yet seen, the valid point nearest its start that has it
 * (kc_tune_switch_probes: the fewest tunables changed, so the sizes stay
 * the start's), and descends from the fastest. When the start was chosen
 * (the kernel's default, a transfer winner) the probes come first, since
 * its sizes are good ones and a small budget may not outlast one descent;
 * from a random start (a replay) they come after the first descent, from
 * the local optimum it reached: probes around a random point are random
 * points. The probes cost one evaluation per switch at most (two or
 * three on the replay spaces), fewer where one probe flips several:
 * conv1d's VEC = 1 probe turns SMEM off too, so it stands for both. A
 * probe that loses at the start's sizes may still lead to the best
 * design (conv1d's direct one wants taller tiles), so the restarts go to
 * the probes not yet descended from, fastest first, before random
 * points.
 *
 * Round values first. Where a tunable mixes round values (0 and powers of
 * two) with others (block sizes 16, 32, 48, ... 256; tiles 1 to 4), the
 * search starts on the coarse lattice of the round ones (kc_tune_set_coarse)
 * and leaves it, descending from its best point through every value, at
 * its first restart or after COARSE_SHARE of the budget, whichever comes
 * first. Why: a GPU's warps, wavefronts, memory transactions and banks
 * come in powers of two, so a size between two of them rarely beats both,
 * and a space that lists every multiple of 16 spends most of its points
 * between them. The coarse lattice of the convolution spaces is a fifth
 * of the space, so a 2% budget covers a tenth of it; the values between
 * are then one step from the best round point, where a descent finds
 * them when they win (dedispersion's optimum has block_size_y 96 and
 * tile 6). It is a prior, so it gets a minority of the budget: on spaces
 * whose round values are relabelled at random the coarse phase costs up
 * to 0.1 of the optimum at 2% and little at 10% (docs/tuning.md).
 *
 * A random start is a sample of one. Where the search has no chosen start
 * (a replay; a space whose default is not valid), it first measures a
 * fifth of its budget in random points, at most SAMPLE_MAX, and descends
 * from the fastest: the best of k random points lies in the fastest
 * 1 / (k + 1) of the space on average, so the first descent starts near
 * a fast region instead of walking to one, which is where a small budget
 * went (gemv's 180-point lavapipe space at a tenth: 18 evaluations, 0.72
 * of the optimum from one random start, 0.91 from the best of four). The
 * share is the forest's (a fifth of the budget for its first design).
 * SAMPLE_MAX keeps it a small part of a large budget, where descents and
 * kicks find more than sampling: at 10 the real spaces gained a little
 * more, but the smooth synthetic ones of tests/tuner/test_tune.c lost
 * 0.02 at 2%; at 5 every space is as good or better (docs/tuning.md, "A
 * sampled start"). A chosen start (the kernel's default, a transfer
 * winner) is a better point than a sample's best and is descended from
 * as it is.
 *
 * Points already measured cost nothing (the ctx remembers them), so the
 * descents that retrace known ground are free. Failed measurements count
 * as infinitely slow: a descent from one moves to any neighbour that
 * works.
 *
 * Why pairs: tunables interact. A bigger tile wants shared memory, a
 * thinner block another tile shape: on the A4000 convolution space the
 * Hamming-1 local optimum at 0.81 of the best (block_size_y 2, shared
 * memory on) is left only by turning shared memory off and halving
 * block_size_y together, and with pair moves that space has 2 local
 * optima instead of 10. Adjacent values only, because an ordered tunable
 * (a size) pays most one step away and the pairs stay few (4 per pair
 * of tunables at most: 84 on the convolution spaces). A round of pairs
 * costs at most what a round of single moves does (the sum over the
 * tunables of their values less one: 28 there), so a descent spends no
 * more than twice what it did; 16, 32 or every pair gave the same means
 * on the hub spaces within the noise (docs/tuning.md, issue 14).
 *
 * Parameters: PATIENCE = 5 and kicks of 2 to 3 steps. In a small trial
 * on the four replayed spaces (PATIENCE 2, 5, 10, 20; with and without
 * kicks) the results moved by less than the run-to-run spread; kicks
 * helped most on the GEMM space. ils has no schedule, so it behaves the
 * same under an evaluation budget, a time limit or none.
 */
#include "kc_tune.h"

#include <math.h>
#include <string.h>

enum { PATIENCE = 5, KICK_MIN = 2, KICK_MAX = 3 };
#define COARSE_SHARE 0.25 /* of the budget, at most, on the coarse lattice */
#define SAMPLE_SHARE 0.2 /* of the budget, at most SAMPLE_MAX points, sampled before a random start's descent */
enum { SAMPLE_MAX = 5 };

typedef struct ils {
    kc_tune_ctx *ctx;
    int nd;
    int *nbrs;  /* room for every neighbour of one point */
    int *pairs; /* room for every pair move from one point */
    int pair_tries; /* unmeasured pair moves a round may try */
    int *probes;    /* the switch probes not descended from yet */
    double *probe_times;
    int nprobes;
} ils;

static void copy(const ils *s, int *dst, const int *src)
{
    memcpy(dst, src, sizeof(int) * (size_t)s->nd);
}

/* Moves p to the first of the n points at pts that is faster than t, at
 * most tries of them unmeasured (the measured ones are free); returns
 * whether it moved, *t its time. */
static bool first_better(ils *s, int *p, double *t, const int *pts, int n, int tries)
{
    for (int i = 0; i < n && tries > 0 && !kc_tune_done(s->ctx); i++) {
        const int *q = pts + i * s->nd;
        tries -= !kc_tune_measured(s->ctx, q);
        double u = kc_tune_eval(s->ctx, q);
        if (u < *t) {
            copy(s, p, q);
            *t = u;
            return true;
        }
    }
    return false;
}

/* Moves p to a local optimum of single and pair moves by first
 * improvement; returns its time. */
static double descend(ils *s, int *p, double t)
{
    while (!kc_tune_done(s->ctx)) {
        int n = kc_tune_neighbours(s->ctx, p, s->nbrs);
        if (first_better(s, p, &t, s->nbrs, n, n))
            continue;
        n = kc_tune_pair_neighbours(s->ctx, p, s->pairs);
        if (!first_better(s, p, &t, s->pairs, n, s->pair_tries))
            break;
    }
    return t;
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

/* Measures the switch probes around p (kc_tune_switch_probes) and moves p
 * to the fastest of them and itself; returns its time. */
static double probe_switches(ils *s, int *p, double t)
{
    int n = kc_tune_switch_probes(s->ctx, p, s->probes);
    int fastest = -1;
    for (int i = 0; i < n && !kc_tune_done(s->ctx); i++) {
        double u = s->probe_times[i] = kc_tune_eval(s->ctx, s->probes + i * s->nd);
        if (u < t)
            t = u, fastest = i;
        s->nprobes = i + 1;
    }
    if (fastest >= 0) {
        copy(s, p, s->probes + fastest * s->nd);
        s->probe_times[fastest] = INFINITY; /* descended from now */
    }
    return t;
}

/* The restarts go to the probes first, fastest first: a design a probe
 * reached at the start's sizes may win at others, and a descent inside
 * it is the way to find them (conv1d's direct design wants taller tiles
 * than the shared-memory one). False when none is left that ran. */
static bool next_probe(ils *s, int *p)
{
    int fastest = -1;
    for (int i = 0; i < s->nprobes; i++)
        if (isfinite(s->probe_times[i]) && (fastest < 0 || s->probe_times[i] < s->probe_times[fastest]))
            fastest = i;
    if (fastest < 0)
        return false;
    copy(s, p, s->probes + fastest * s->nd);
    s->probe_times[fastest] = INFINITY;
    return true;
}

/* From a random start, the fastest of it and a few more random points
 * (a fifth of the budget, rounded up, at most SAMPLE_MAX; SAMPLE_MAX
 * without a budget); q is room for one point. */
static double sample_start(ils *s, int *p, double t, int *q)
{
    long budget = kc_tune_max_evals(s->ctx);
    long n = budget > 0 ? (long)ceil(SAMPLE_SHARE * (double)budget) : SAMPLE_MAX;
    n = n < SAMPLE_MAX ? n : SAMPLE_MAX;
    for (long i = 1; i < n && !kc_tune_done(s->ctx) && kc_tune_random_point(s->ctx, q); i++) {
        double u = kc_tune_eval(s->ctx, q);
        if (u < t)
            copy(s, p, q), t = u;
    }
    return t;
}

/* Leaves the coarse lattice: descends from the best point in the whole
 * space, where the values between the round ones are now neighbours. */
static double refine(ils *s, int *p, int *best, double tbest)
{
    kc_tune_set_coarse(s->ctx, false);
    copy(s, p, best);
    double t = descend(s, p, tbest);
    if (t < tbest)
        copy(s, best, p);
    return t < tbest ? t : tbest;
}

void kc_tune_ils(kc_tune_ctx *ctx)
{
    ils s = {ctx, kc_tune_space_of(ctx)->ndims, NULL, NULL, kc_tune_max_neighbours(ctx)};
    s.nbrs = kc_tune_alloc_points(ctx, kc_tune_max_neighbours(ctx) + 1);
    s.pairs = kc_tune_alloc_points(ctx, kc_tune_max_pair_neighbours(ctx) + 1);
    s.probes = kc_tune_alloc_points(ctx, s.nd);
    s.probe_times = kc_tune_alloc(ctx, sizeof(double) * (size_t)s.nd);
    int *p = kc_tune_alloc_points(ctx, 1), *best = kc_tune_alloc_points(ctx, 1);
    if (!kc_tune_start_point(ctx, p))
        return;
    bool coarse = kc_tune_set_coarse(ctx, true);
    bool chosen = kc_tune_start_chosen(ctx);
    double tbest = kc_tune_eval(ctx, p);
    if (!chosen)
        tbest = sample_start(&s, p, tbest, best);
    if (chosen)
        tbest = probe_switches(&s, p, tbest);
    tbest = descend(&s, p, tbest);
    if (!chosen)
        tbest = descend(&s, p, probe_switches(&s, p, tbest));
    copy(&s, best, p);
    int fails = 0;
    while (!kc_tune_done(ctx)) {
        if (coarse && (fails >= PATIENCE || kc_tune_progress(ctx) >= COARSE_SHARE)) {
            tbest = refine(&s, p, best, tbest);
            coarse = false, fails = 0;
            continue;
        }
        if (fails < PATIENCE) {
            copy(&s, p, best);
            kick(&s, p);
        } else if (next_probe(&s, p) || kc_tune_random_point(ctx, p)) {
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
