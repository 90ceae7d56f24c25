/*
 * forest.c — iterated local search guided by a random-forest model of
 * log time (the model of SMAC: Hutter, Hoos and Leyton-Brown,
 * "Sequential model-based optimization for general algorithm
 * configuration", 2011), for small budgets.
 *
 * ils (ils.c) spends most of a small budget inside descents: from a random
 * point a first-improvement descent measures neighbours in random order,
 * and on a GPU space with a few dozen neighbours per point one descent
 * costs about 60 measurements. This strategy keeps ils's moves and spends
 * the measurements it has already made to choose the order:
 *
 *   1. Measure the start point (the kernel's default variant, or the best
 *      transfer seed) and random points, a fifth of the budget and at most
 *      INIT_EVALS, so the model has seen something of the whole space.
 *   2. Descend from the fastest point measured: fit the forest to
 *      everything measured so far, score the unmeasured neighbours by
 *      expected improvement (EI) over the best log time, measure them in
 *      that order and move to the first that is faster. A measured
 *      neighbour that is faster is taken for free.
 *   3. At a local optimum, kick the best point 2 to 3 random steps away
 *      and descend again (as ils). After PATIENCE kicks in a row that found
 *      nothing better, restart from the unmeasured point with the greatest
 *      EI among every valid point (when there are at most ALL_CANDIDATES)
 *      or among RANDOM_CANDIDATES random ones plus the neighbours of the
 *      TOP best: the model, not chance, picks the region to try next.
 *
 * Why a forest. Tunables are small sets of discrete values, several of
 * them flags or choices whose order means nothing, and GPU spaces are
 * rugged: a block size that is a power of two is fast and its neighbours
 * slow, a flag flips the whole picture. A regression tree splits on "value
 * index <= c" one tunable at a time, so it learns "shared memory off" or
 * "block_x at most 64" without assuming that nearby values behave alike,
 * which the smooth Gaussian-process models we tried assume (and lost on,
 * docs/tuning.md). TREES trees, each grown on a bootstrap sample with a
 * random FEATURE_SHARE of the tunables tried at each split, give a mean
 * and, from their disagreement plus the spread in their leaves, a
 * variance. The model is of log time, so its errors are relative (times
 * of one kernel span orders of magnitude); a failed point counts as
 * FAIL_PENALTY (a factor e) slower than the slowest success, so the model
 * learns to avoid its region rather than to see it as unknown.
 *
 * Cost: a fit grows each tree on at most MAX_TRAIN samples, so a fit costs
 * the same at any budget; there is one fit per descent step and restart,
 * not per measurement. On a device a measurement (a compile and seconds
 * of launches) costs far more than a fit.
 *
 * Parameters. SMAC's forest settings (5/6 of the tunables tried at each
 * split, splits down to 3 samples); 20 trees; ils's patience and kicks.
 * The random design of a fifth of the budget, at most 20 points, did
 * better than 5 or 10 points on the two recorded convolution spaces at
 * 2% and 5% and worse on kc's small lavapipe spaces, hence a share of
 * the budget. Restarts score every valid point up to 2048 of them, else
 * 1024 random ones: scoring all of a 4362-point space against 1024 of it
 * gave 0.984 against 0.972 of the optimum at 5% (100 runs, about two
 * standard errors apart) for twice the replay time, so the cut-off sits
 * between. docs/tuning.md has the comparison with ils.
 */
#include "kc_tune.h"

#include <math.h>
#include <string.h>

enum {
    TREES = 20,
    MIN_SPLIT = 3, /* a node with fewer samples is a leaf */
    MAX_DEPTH = 32,
    MAX_TRAIN = 256, /* bootstrap draws per tree */
    INIT_EVALS = 20,
    PATIENCE = 5,
    KICK_MIN = 2,
    KICK_MAX = 3,
    ALL_CANDIDATES = 2048,
    RANDOM_CANDIDATES = 1024,
    TOP = 8,
};
#define FEATURE_SHARE (5.0 / 6.0)
#define FAIL_PENALTY 1.0

typedef struct node {
    int dim, cut; /* a leaf has dim < 0; else left when p[dim] <= cut */
    int left, right;
    double mean, var;
} node;

typedef struct forest {
    kc_tune_ctx *ctx;
    const kc_tune_space *space;
    int nd, maxv;
    /* the measured points and log times */
    int *x;
    double *y, *ylog; /* times (INFINITY: failed); log times for the fit */
    int n, cap;
    /* the trees, all in one array */
    node *nodes;
    int nnodes, node_cap;
    int fitted; /* points measured at the last fit */
    int root[TREES];
    /* scratch */
    int *sample, *dims;
    int *hist_n;
    double *hist_sum;
    int *cand, ncand, cand_cap;
} forest;

static void *grow(forest *f, void *old, size_t used, size_t want)
{
    void *p = kc_tune_alloc(f->ctx, want);
    if (old && used)
        memcpy(p, old, used);
    return p;
}

static void remember(forest *f, const int *p, double t)
{
    if (f->n == f->cap) {
        int cap = f->cap ? 2 * f->cap : 64;
        f->x = grow(f, f->x, sizeof(int) * (size_t)f->n * (size_t)f->nd,
                    sizeof(int) * (size_t)cap * (size_t)f->nd);
        f->y = grow(f, f->y, sizeof(double) * (size_t)f->n, sizeof(double) * (size_t)cap);
        f->sample = kc_tune_alloc(f->ctx, sizeof(int) * (size_t)cap);
        f->ylog = kc_tune_alloc(f->ctx, sizeof(double) * (size_t)cap);
        f->cap = cap;
    }
    memcpy(f->x + (size_t)f->n * (size_t)f->nd, p, sizeof(int) * (size_t)f->nd);
    f->y[f->n++] = t;
}

/* Measures p and remembers it; false when nothing was measured. */
static bool measure(forest *f, const int *p)
{
    if (kc_tune_done(f->ctx) || kc_tune_measured(f->ctx, p))
        return false;
    remember(f, p, kc_tune_eval(f->ctx, p));
    return true;
}

/* With transfer, kc_tune_run measured the start point and the seeds
 * before the search: the model learns from them too (reading them is
 * free). */
static void remember_known(forest *f)
{
    const kc_tune_space *s = f->space;
    if (s->start && kc_tune_measured(f->ctx, s->start))
        remember(f, s->start, kc_tune_eval(f->ctx, s->start));
    for (int i = 0; s->seeds && i < s->nseeds; i++) {
        const int *q = s->seeds + (size_t)i * (size_t)f->nd;
        bool twice = s->start && memcmp(q, s->start, sizeof(int) * (size_t)f->nd) == 0;
        for (int j = 0; j < i && !twice; j++)
            twice = memcmp(q, s->seeds + (size_t)j * (size_t)f->nd, sizeof(int) * (size_t)f->nd) == 0;
        if (!twice && kc_tune_measured(f->ctx, q))
            remember(f, q, kc_tune_eval(f->ctx, q));
    }
}

/* ---- the trees ---------------------------------------------------------- */

static int new_node(forest *f)
{
    if (f->nnodes == f->node_cap) {
        int cap = f->node_cap ? 2 * f->node_cap : 1024;
        f->nodes = grow(f, f->nodes, sizeof(node) * (size_t)f->nnodes, sizeof(node) * (size_t)cap);
        f->node_cap = cap;
    }
    return f->nnodes++;
}

static void leaf(node *nd, const double *y, const int *s, int m)
{
    double sum = 0, sq = 0;
    for (int i = 0; i < m; i++)
        sum += y[s[i]], sq += y[s[i]] * y[s[i]];
    nd->dim = -1;
    nd->mean = sum / m;
    nd->var = fmax(sq / m - nd->mean * nd->mean, 0);
}

/* The split of samples s[0..m) that most reduces the squared error, over
 * a random FEATURE_SHARE of the tunables; false when none does. */
static bool best_split(forest *f, const double *y, const int *s, int m, int *dim, int *cut)
{
    int nd = f->nd, ntry = (int)ceil(FEATURE_SHARE * nd);
    for (int i = 0; i < nd; i++)
        f->dims[i] = i;
    double total = 0;
    for (int i = 0; i < m; i++)
        total += y[s[i]];
    double base = total * total / m, gain = 1e-12;
    bool found = false;
    for (int k = 0; k < ntry; k++) {
        int j = k + kc_tune_rand_below(f->ctx, nd - k), d = f->dims[j];
        f->dims[j] = f->dims[k], f->dims[k] = d;
        int nv = f->space->nvalues[d];
        if (nv < 2)
            continue;
        memset(f->hist_n, 0, sizeof(int) * (size_t)nv);
        memset(f->hist_sum, 0, sizeof(double) * (size_t)nv);
        for (int i = 0; i < m; i++) {
            int v = f->x[(size_t)s[i] * (size_t)nd + (size_t)d];
            f->hist_n[v]++, f->hist_sum[v] += y[s[i]];
        }
        int nl = 0;
        double sl = 0;
        for (int c = 0; c < nv - 1; c++) {
            nl += f->hist_n[c], sl += f->hist_sum[c];
            int nr = m - nl;
            if (nl == 0 || nr == 0 || f->hist_n[c + 1] == 0)
                continue;
            double sr = total - sl, g = sl * sl / nl + sr * sr / nr - base;
            if (g > gain)
                gain = g, *dim = d, *cut = c, found = true;
        }
    }
    return found;
}

static int build(forest *f, const double *y, int *s, int m, int depth)
{
    int id = new_node(f), dim = 0, cut = 0;
    if (m < MIN_SPLIT || depth >= MAX_DEPTH || !best_split(f, y, s, m, &dim, &cut)) {
        leaf(&f->nodes[id], y, s, m);
        return id;
    }
    int l = 0; /* partition: p[dim] <= cut first */
    for (int i = 0; i < m; i++)
        if (f->x[(size_t)s[i] * (size_t)f->nd + (size_t)dim] <= cut) {
            int t = s[i];
            s[i] = s[l], s[l++] = t;
        }
    int left = build(f, y, s, l, depth + 1), right = build(f, y, s + l, m - l, depth + 1);
    node *nd = &f->nodes[id]; /* after the children: nodes may have moved */
    *nd = (node){.dim = dim, .cut = cut, .left = left, .right = right};
    return id;
}

/* Fits the forest to the measured points; y holds log times, failures
 * replaced by the penalty. */
static void fit(forest *f, double *y)
{
    double worst = -INFINITY;
    for (int i = 0; i < f->n; i++)
        if (isfinite(f->y[i]))
            worst = fmax(worst, log(f->y[i]));
    for (int i = 0; i < f->n; i++)
        y[i] = isfinite(f->y[i]) ? log(f->y[i]) : (isfinite(worst) ? worst + FAIL_PENALTY : 0);
    f->nnodes = 0;
    int m = f->n < MAX_TRAIN ? f->n : MAX_TRAIN;
    for (int t = 0; t < TREES; t++) {
        for (int i = 0; i < m; i++) /* bootstrap */
            f->sample[i] = kc_tune_rand_below(f->ctx, f->n);
        f->root[t] = build(f, y, f->sample, m, 0);
    }
}

/* Fits the forest when a tenth more points were measured since the last
 * fit (a fit per measurement would cost O(n^2 log n) over a search, and a
 * model a few points old orders neighbours as well); returns the best log
 * time measured (INFINITY if none). */
static double fit_best(forest *f)
{
    if (f->nnodes == 0 || f->n >= f->fitted + 1 + f->fitted / 10) {
        fit(f, f->ylog);
        f->fitted = f->n;
    }
    double best = INFINITY;
    for (int i = 0; i < f->n; i++)
        if (isfinite(f->y[i]))
            best = fmin(best, log(f->y[i]));
    return best;
}

/* Mean and variance of the forest's prediction at p: across trees, plus
 * the spread within the leaves (the law of total variance). */
static void predict(const forest *f, const int *p, double *mean, double *var)
{
    double s = 0, sq = 0;
    for (int t = 0; t < TREES; t++) {
        const node *nd = &f->nodes[f->root[t]];
        while (nd->dim >= 0)
            nd = &f->nodes[p[nd->dim] <= nd->cut ? nd->left : nd->right];
        s += nd->mean, sq += nd->mean * nd->mean + nd->var;
    }
    *mean = s / TREES;
    *var = fmax(sq / TREES - *mean * *mean, 0);
}

/* Expected improvement below best (minimising). */
static double expected_improvement(double mean, double var, double best)
{
    double sd = sqrt(var);
    if (sd < 1e-9)
        return fmax(best - mean, 0);
    double z = (best - mean) / sd;
    return sd * (z * 0.5 * erfc(-z / sqrt(2)) + exp(-0.5 * z * z) / sqrt(2 * M_PI));
}

/* ---- candidates ------------------------------------------------------------ */

static void add_candidate(forest *f, const int *p)
{
    if (kc_tune_measured(f->ctx, p))
        return;
    if (f->ncand == f->cand_cap) {
        int cap = f->cand_cap ? 2 * f->cand_cap : 1024;
        f->cand = grow(f, f->cand, sizeof(int) * (size_t)f->ncand * (size_t)f->nd,
                       sizeof(int) * (size_t)cap * (size_t)f->nd);
        f->cand_cap = cap;
    }
    memcpy(f->cand + (size_t)f->ncand++ * (size_t)f->nd, p, sizeof(int) * (size_t)f->nd);
}

/* Indices of the k best measured points, fastest first. */
static int top_points(const forest *f, int *out, int k)
{
    int m = 0;
    for (int i = 0; i < f->n; i++) {
        if (!isfinite(f->y[i]))
            continue;
        int j = m < k ? m++ : k;
        if (j == k && f->y[i] >= f->y[out[k - 1]])
            continue;
        for (j = j == k ? k - 1 : j; j > 0 && f->y[out[j - 1]] > f->y[i]; j--)
            out[j] = out[j - 1];
        out[j] = i;
    }
    return m;
}

static void gather_candidates(forest *f, int *p, int *nbrs)
{
    f->ncand = 0;
    long nvalid = kc_tune_valid_count(f->ctx);
    if (nvalid >= 0 && nvalid <= ALL_CANDIDATES) {
        for (long i = 0; i < nvalid; i++)
            if (kc_tune_valid_point(f->ctx, i, p))
                add_candidate(f, p);
        return;
    }
    for (int k = 0; k < RANDOM_CANDIDATES; k++) {
        if (nvalid > 0) {
            long i = (long)(kc_tune_rand(f->ctx) % (uint64_t)nvalid);
            if (kc_tune_valid_point(f->ctx, i, p))
                add_candidate(f, p);
        } else {
            for (int d = 0; d < f->nd; d++)
                p[d] = kc_tune_rand_below(f->ctx, f->space->nvalues[d]);
            if (kc_tune_valid(f->ctx, p))
                add_candidate(f, p);
        }
    }
    int top[TOP], ntop = top_points(f, top, TOP);
    for (int i = 0; i < ntop; i++) {
        int nn = kc_tune_neighbours(f->ctx, f->x + (size_t)top[i] * (size_t)f->nd, nbrs);
        for (int j = 0; j < nn; j++)
            add_candidate(f, nbrs + (size_t)j * (size_t)f->nd);
    }
}

/* The unmeasured candidate with the greatest expected improvement; false
 * when there is none. */
static bool restart_point(forest *f, int *p, int *nbrs)
{
    double best = fit_best(f);
    gather_candidates(f, p, nbrs);
    double top = -1;
    int pick = -1;
    for (int i = 0; i < f->ncand; i++) {
        double mean, var;
        predict(f, f->cand + (size_t)i * (size_t)f->nd, &mean, &var);
        double ei = isfinite(best) ? expected_improvement(mean, var, best) : var;
        if (ei > top)
            top = ei, pick = i;
    }
    if (pick < 0)
        return false;
    memcpy(p, f->cand + (size_t)pick * (size_t)f->nd, sizeof(int) * (size_t)f->nd);
    return true;
}

/* ---- the search ------------------------------------------------------------ */

typedef struct ranked {
    double score;
    int index;
} ranked;

/* Measures the unmeasured points pts[0..n) in order of expected
 * improvement until one beats t; returns its index, or -1. */
static int first_better(forest *f, const int *pts, int n, double t, ranked *order)
{
    double best = fit_best(f);
    for (int i = 0; i < n; i++) {
        double mean, var;
        predict(f, pts + (size_t)i * (size_t)f->nd, &mean, &var);
        ranked r = {isfinite(best) ? expected_improvement(mean, var, best) : var, i};
        int j = i; /* insertion sort, greatest score first */
        for (; j > 0 && order[j - 1].score < r.score; j--)
            order[j] = order[j - 1];
        order[j] = r;
    }
    for (int i = 0; i < n; i++) {
        if (!measure(f, pts + (size_t)order[i].index * (size_t)f->nd))
            return -1; /* the budget ran out */
        if (f->y[f->n - 1] < t)
            return order[i].index;
    }
    return -1;
}

/* Moves p to a local optimum; returns its time. nbrs has a spare row past
 * the neighbours for the fastest one measured already. */
static double descend(forest *f, int *p, double t, int *nbrs, int spare, ranked *order)
{
    size_t row = sizeof(int) * (size_t)f->nd;
    int *known = nbrs + (size_t)spare * (size_t)f->nd;
    while (!kc_tune_done(f->ctx)) {
        int n = kc_tune_neighbours(f->ctx, p, nbrs), m = 0;
        double tknown = t;
        for (int i = 0; i < n; i++) {
            int *q = nbrs + (size_t)i * (size_t)f->nd;
            if (!kc_tune_measured(f->ctx, q)) {
                memmove(nbrs + (size_t)m++ * (size_t)f->nd, q, row);
                continue;
            }
            double u = kc_tune_eval(f->ctx, q); /* recorded: free */
            if (u < tknown)
                tknown = u, memcpy(known, q, row);
        }
        if (tknown < t) { /* a faster neighbour is known: move for free */
            memcpy(p, known, row);
            t = tknown;
            continue;
        }
        int k = m ? first_better(f, nbrs, m, t, order) : -1;
        if (k < 0)
            return t;
        memcpy(p, nbrs + (size_t)k * (size_t)f->nd, row);
        t = f->y[f->n - 1];
    }
    return t;
}

static void kick(forest *f, int *p, int *nbrs)
{
    int steps = KICK_MIN + kc_tune_rand_below(f->ctx, KICK_MAX - KICK_MIN + 1);
    for (int k = 0; k < steps; k++) {
        if (kc_tune_neighbours(f->ctx, p, nbrs) == 0)
            return;
        memcpy(p, nbrs, sizeof(int) * (size_t)f->nd);
    }
}

void kc_tune_forest(kc_tune_ctx *ctx)
{
    forest f = {.ctx = ctx, .space = kc_tune_space_of(ctx)};
    f.nd = f.space->ndims;
    for (int d = 0; d < f.nd; d++)
        f.maxv = f.space->nvalues[d] > f.maxv ? f.space->nvalues[d] : f.maxv;
    f.dims = kc_tune_alloc(ctx, sizeof(int) * (size_t)f.nd);
    f.hist_n = kc_tune_alloc(ctx, sizeof(int) * (size_t)f.maxv);
    f.hist_sum = kc_tune_alloc(ctx, sizeof(double) * (size_t)f.maxv);
    int maxn = kc_tune_max_neighbours(ctx) + 1;
    int *p = kc_tune_alloc_points(ctx, 1), *best = kc_tune_alloc_points(ctx, 1);
    int *nbrs = kc_tune_alloc_points(ctx, maxn);
    ranked *order = kc_tune_alloc(ctx, sizeof(ranked) * (size_t)maxn);
    size_t row = sizeof(int) * (size_t)f.nd;

    remember_known(&f);
    if (!kc_tune_start_point(ctx, p))
        return;
    if (!kc_tune_measured(ctx, p) && !measure(&f, p))
        return;
    long budget = kc_tune_max_evals(ctx), init = INIT_EVALS;
    if (budget > 0 && budget / 5 < init)
        init = budget / 5;
    while (f.n < init && kc_tune_random_point(ctx, p))
        if (!measure(&f, p))
            return;
    int top;
    if (top_points(&f, &top, 1) == 0 && !kc_tune_random_point(ctx, p))
        return;
    if (top_points(&f, &top, 1) > 0)
        memcpy(p, f.x + (size_t)top * (size_t)f.nd, row);
    double tbest = descend(&f, p, kc_tune_eval(ctx, p), nbrs, maxn - 1, order);
    memcpy(best, p, row);
    for (int fails = 0; !kc_tune_done(ctx);) {
        if (fails < PATIENCE) {
            memcpy(p, best, row);
            kick(&f, p, nbrs);
            if (!kc_tune_measured(ctx, p) && !measure(&f, p))
                return;
        } else {
            if (!restart_point(&f, p, nbrs) || !measure(&f, p))
                return;
            fails = 0;
        }
        double t = descend(&f, p, kc_tune_eval(ctx, p), nbrs, maxn - 1, order);
        if (t < tbest) {
            memcpy(best, p, row);
            tbest = t, fails = 0;
        } else {
            fails++;
        }
    }
}
