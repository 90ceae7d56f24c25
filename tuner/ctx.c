/*
 * ctx.c — the run context every strategy evaluates through.
 *
 * Strategies stay small because the ctx owns the bookkeeping they would
 * each get subtly wrong: a point is measured once (later evaluations read
 * the record and cost nothing), invalid points are never measured or
 * counted, the budget is checked in one place, and the best point is kept
 * here. It also owns the PRNG, so a seed fixes the whole search, and the
 * sampling of valid points, so that no strategy hunts for them unbounded
 * in a sparse space.
 */
#include "tune_private.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

struct kc_tune_ctx {
    kc_arena arena;
    const kc_tune_space *space;
    kc_tune_measure measure;
    void *user;
    kc_tune_options opt;
    const kc_tune_strategy *strategy; /* resolved when the run starts */
    kc_tune_pset seen;                /* measured points -> time (INFINITY: failed) */
    long evals, failures;
    double best_time;
    int *best; /* NULL until a measurement succeeds */
    uint64_t rng[4];
    double t0;   /* kc_tune_clock() when the run started */
    long probes; /* since the last new measurement */
    kc_tune_stop stop;
    bool ran;
    /* The valid points by linear index (last dimension fastest), when the
     * product is at most KC_TUNE_ENUM_MAX. enumerated: 0 not yet, 1 done,
     * -1 too large. cursor: how far kc_tune_random_point has shuffled. */
    int enumerated;
    uint32_t *valid;
    long nvalid, cursor;
    /* The coarse lattice (kc_tune_set_coarse): coarse_values[d] marks the
     * value indices of dimension d in it, NULL for a dimension it leaves
     * whole; coarse_state: 0 not built yet, 1 built, -1 the space has none.
     * While coarse is on, neighbours and random points stay in it. */
    bool **coarse_values;
    int coarse_state;
    bool coarse;
    bool start_chosen; /* kc_tune_start_point gave the start or a seed */
};

/* ---- PRNG: xoshiro256** (Blackman & Vigna), seeded with splitmix64 ---- */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t kc_tune_rand(kc_tune_ctx *c)
{
    uint64_t *s = c->rng;
    uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0], s[3] ^= s[1], s[1] ^= s[2], s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
}

int kc_tune_rand_below(kc_tune_ctx *c, int n)
{
    assert(n >= 1);
    /* Reject the top sliver so that every residue is equally likely. */
    uint64_t lim = UINT64_MAX - UINT64_MAX % (uint64_t)n, x;
    do
        x = kc_tune_rand(c);
    while (x >= lim);
    return (int)(x % (uint64_t)n);
}

double kc_tune_rand_unit(kc_tune_ctx *c)
{
    return (double)(kc_tune_rand(c) >> 11) * 0x1.0p-53;
}

/* ---- creation ------------------------------------------------------------ */

int kc_tune_fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && errlen)
        vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static int check_space(const kc_tune_space *s, char *err, size_t errlen)
{
    if (!s || s->ndims < 1 || !s->nvalues || !s->names)
        return kc_tune_fail(err, errlen, "the search space has no dimensions");
    for (int d = 0; d < s->ndims; d++) {
        if (s->nvalues[d] < 1)
            return kc_tune_fail(err, errlen, "tunable '%s' has no candidate values", s->names[d]);
        if (s->start && (s->start[d] < 0 || s->start[d] >= s->nvalues[d]))
            return kc_tune_fail(err, errlen, "the start point's value of '%s' is out of range", s->names[d]);
        for (int i = 0; s->seeds && i < s->nseeds; i++)
            if (s->seeds[i * s->ndims + d] < 0 || s->seeds[i * s->ndims + d] >= s->nvalues[d])
                return kc_tune_fail(err, errlen, "seed %d's value of '%s' is out of range", i + 1,
                                    s->names[d]);
    }
    return 0;
}

static int check_options(const kc_tune_options *o, char *err, size_t errlen)
{
    if (o->max_evals < 0)
        return kc_tune_fail(err, errlen, "the evaluation budget is negative");
    if (!(o->max_seconds >= 0) || isinf(o->max_seconds))
        return kc_tune_fail(err, errlen, "the time limit must be a number of seconds >= 0");
    if (!kc_tune_find_strategy(o->strategy ? o->strategy : "default")) {
        char names[256] = "";
        for (const kc_tune_strategy *s = kc_tune_strategies; s->name; s++)
            snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
                     s == kc_tune_strategies ? "" : ", ", s->name);
        return kc_tune_fail(err, errlen, "unknown strategy '%s' (there are: %s)", o->strategy, names);
    }
    return 0;
}

kc_tune_ctx *kc_tune_new(const kc_tune_space *space, kc_tune_measure measure, void *user,
                         const kc_tune_options *opt, char *err, size_t errlen)
{
    kc_tune_options none = {0};
    if (!opt)
        opt = &none;
    if (check_space(space, err, errlen) || check_options(opt, err, errlen))
        return NULL;
    if (!measure) {
        kc_tune_fail(err, errlen, "no measure function");
        return NULL;
    }
    kc_arena a;
    kc_arena_init(&a);
    kc_tune_ctx *c = KC_NEW(&a, kc_tune_ctx);
    c->arena = a;
    c->space = space, c->measure = measure, c->user = user, c->opt = *opt;
    c->strategy = kc_tune_find_strategy(opt->strategy ? opt->strategy : "default");
    kc_tune_pset_init(&c->seen, &c->arena, space->ndims);
    c->best_time = INFINITY;
    uint64_t x = opt->seed;
    for (int i = 0; i < 4; i++)
        c->rng[i] = splitmix64(&x);
    return c;
}

void kc_tune_free(kc_tune_ctx *c)
{
    if (c) {
        kc_arena a = c->arena; /* c lives in its own arena */
        kc_arena_free(&a);
    }
}

void *kc_tune_alloc(kc_tune_ctx *c, size_t bytes)
{
    return kc_arena_alloc(&c->arena, bytes);
}

int *kc_tune_alloc_points(kc_tune_ctx *c, int npoints)
{
    return kc_arena_alloc(&c->arena, sizeof(int) * (size_t)npoints * (size_t)c->space->ndims);
}

double kc_tune_clock(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- running ------------------------------------------------------------- */

double kc_tune_seconds(const kc_tune_ctx *c)
{
    if (!c->ran)
        return 0;
    return kc_tune_clock() - c->t0;
}

/* Transfer: the start point, then each seed, before the strategy. */
static void measure_seeds(kc_tune_ctx *c)
{
    const kc_tune_space *s = c->space;
    if (s->nseeds <= 0 || !s->seeds)
        return;
    if (s->start && kc_tune_valid(c, s->start))
        kc_tune_eval(c, s->start);
    for (int i = 0; i < s->nseeds && !kc_tune_done(c); i++)
        if (kc_tune_valid(c, s->seeds + i * s->ndims))
            kc_tune_eval(c, s->seeds + i * s->ndims);
}

kc_tune_stop kc_tune_run(kc_tune_ctx *c)
{
    if (c->ran)
        return c->stop;
    c->ran = true;
    c->t0 = kc_tune_clock();
    if (!c->strategy->search)
        c->strategy = kc_tune_find_strategy(kc_tune_default_choice(c, &c->opt));
    measure_seeds(c);
    c->strategy->search(c);
    if (c->stop == KC_TUNE_RUNNING)
        c->stop = KC_TUNE_STOP_FINISHED;
    return c->stop;
}

bool kc_tune_done(kc_tune_ctx *c)
{
    if (c->stop != KC_TUNE_RUNNING)
        return true;
    if (c->opt.max_evals && c->evals >= c->opt.max_evals)
        c->stop = KC_TUNE_STOP_BUDGET;
    else if (c->opt.max_seconds > 0 && kc_tune_seconds(c) >= c->opt.max_seconds)
        c->stop = KC_TUNE_STOP_TIME;
    else if (c->probes >= KC_TUNE_STALL_PROBES)
        c->stop = KC_TUNE_STOP_STALLED;
    return c->stop != KC_TUNE_RUNNING;
}

void kc_tune_stop_now(kc_tune_ctx *c)
{
    if (c->stop == KC_TUNE_RUNNING)
        c->stop = KC_TUNE_STOP_ASKED;
}

long kc_tune_max_evals(const kc_tune_ctx *c)
{
    return c->opt.max_evals;
}

double kc_tune_progress(const kc_tune_ctx *c)
{
    double p = 0;
    if (c->opt.max_evals)
        p = (double)c->evals / (double)c->opt.max_evals;
    if (c->opt.max_seconds > 0)
        p = fmax(p, kc_tune_seconds(c) / c->opt.max_seconds);
    if (!c->opt.max_evals && c->opt.max_seconds <= 0) /* no limit: the space is the horizon */
        p = (double)c->evals / (c->nvalid > 0 ? (double)c->nvalid : 1000.0);
    return fmin(p, 1.0);
}

bool kc_tune_valid(kc_tune_ctx *c, const int *point)
{
    c->probes++;
    return !c->space->valid || c->space->valid(c->space->user, point);
}

bool kc_tune_measured(const kc_tune_ctx *c, const int *point)
{
    return kc_tune_pset_find(&c->seen, point) >= 0;
}

double kc_tune_eval(kc_tune_ctx *c, const int *point)
{
    for (int d = 0; d < c->space->ndims; d++)
        assert(point[d] >= 0 && point[d] < c->space->nvalues[d]);
    long e = kc_tune_pset_find(&c->seen, point);
    if (e >= 0) {
        c->probes++;
        return c->seen.vals[e];
    }
    if (!kc_tune_valid(c, point) || kc_tune_done(c))
        return INFINITY;
    double t = c->measure(c->user, point);
    if (!(t > 0) || isinf(t)) { /* also NaN */
        t = INFINITY;
        c->failures++;
    }
    kc_tune_pset_add(&c->seen, point, t);
    c->evals++;
    c->probes = 0;
    if (t < c->best_time) {
        if (!c->best)
            c->best = kc_arena_alloc(&c->arena, sizeof(int) * (size_t)c->space->ndims);
        memcpy(c->best, point, sizeof(int) * (size_t)c->space->ndims);
        c->best_time = t;
    }
    return t;
}

/* ---- results ------------------------------------------------------------- */

const kc_tune_space *kc_tune_space_of(const kc_tune_ctx *c)
{
    return c->space;
}

const int *kc_tune_best(const kc_tune_ctx *c, double *time)
{
    if (time)
        *time = c->best_time;
    return c->best;
}

long kc_tune_evals(const kc_tune_ctx *c)
{
    return c->evals;
}

long kc_tune_failures(const kc_tune_ctx *c)
{
    return c->failures;
}

const char *kc_tune_strategy_name(const kc_tune_ctx *c)
{
    return c->strategy->name;
}

const char *kc_tune_stop_text(kc_tune_stop why)
{
    switch (why) {
    case KC_TUNE_RUNNING: return "running";
    case KC_TUNE_STOP_BUDGET: return "evaluation budget spent";
    case KC_TUNE_STOP_TIME: return "time limit reached";
    case KC_TUNE_STOP_FINISHED: return "search finished";
    case KC_TUNE_STOP_STALLED: return "stalled: nothing new to measure";
    case KC_TUNE_STOP_ASKED: return "stopped on request";
    }
    return "?";
}

/* ---- the valid points ---------------------------------------------------- */

static void decode(const kc_tune_space *s, uint64_t idx, int *point)
{
    for (int d = s->ndims - 1; d >= 0; d--) {
        point[d] = (int)(idx % (uint64_t)s->nvalues[d]);
        idx /= (uint64_t)s->nvalues[d];
    }
}

static double product(const kc_tune_space *s)
{
    double n = 1;
    for (int d = 0; d < s->ndims; d++)
        n *= s->nvalues[d];
    return n;
}

/* Lists the valid points once, calling valid() directly: this is setup,
 * bounded by KC_TUNE_ENUM_MAX, not a search that could stall. */
static bool enumerate(kc_tune_ctx *c)
{
    if (c->enumerated)
        return c->enumerated > 0;
    double n = product(c->space);
    c->enumerated = n <= (double)KC_TUNE_ENUM_MAX ? 1 : -1;
    if (c->enumerated < 0)
        return false;
    c->valid = kc_arena_alloc(&c->arena, sizeof(uint32_t) * (size_t)n);
    int *p = kc_arena_alloc(&c->arena, sizeof(int) * (size_t)c->space->ndims);
    for (uint32_t i = 0; i < (uint32_t)n; i++) {
        decode(c->space, i, p);
        if (!c->space->valid || c->space->valid(c->space->user, p))
            c->valid[c->nvalid++] = i;
    }
    return true;
}

long kc_tune_valid_count(kc_tune_ctx *c)
{
    return enumerate(c) ? c->nvalid : -1;
}

bool kc_tune_valid_point(kc_tune_ctx *c, long i, int *point)
{
    if (!enumerate(c) || i < 0 || i >= c->nvalid)
        return false;
    decode(c->space, c->valid[i], point);
    return true;
}

/* ---- the coarse lattice ---------------------------------------------- */

/* A size a GPU likes: zero (a tunable's "off" or "automatic") or a power
 * of two. */
static bool round_value(int64_t v)
{
    return v == 0 || (v > 0 && (v & (v - 1)) == 0);
}

/* Marks, for each integer dimension of more than two values that holds at
 * least two round values and at least one other, its round values. */
static void build_coarse(kc_tune_ctx *c)
{
    const kc_tune_space *s = c->space;
    c->coarse_state = -1;
    c->coarse_values = kc_arena_alloc(&c->arena, sizeof(bool *) * (size_t)s->ndims);
    for (int d = 0; d < s->ndims; d++) {
        if (!s->values || !s->values[d] || s->nvalues[d] <= 2)
            continue;
        int round = 0;
        for (int v = 0; v < s->nvalues[d]; v++)
            round += round_value(s->values[d][v]);
        if (round < 2 || round == s->nvalues[d])
            continue;
        c->coarse_values[d] = kc_arena_alloc(&c->arena, sizeof(bool) * (size_t)s->nvalues[d]);
        for (int v = 0; v < s->nvalues[d]; v++)
            c->coarse_values[d][v] = round_value(s->values[d][v]);
        c->coarse_state = 1;
    }
}

bool kc_tune_set_coarse(kc_tune_ctx *c, bool on)
{
    if (!c->coarse_state)
        build_coarse(c);
    c->coarse = on && c->coarse_state > 0;
    return c->coarse;
}

/* Whether value v of dimension d is in the lattice being searched. */
static bool in_lattice(const kc_tune_ctx *c, int d, int v)
{
    return !c->coarse || !c->coarse_values[d] || c->coarse_values[d][v];
}

static bool on_lattice(const kc_tune_ctx *c, const int *point)
{
    for (int d = 0; d < c->space->ndims; d++)
        if (!in_lattice(c, d, point[d]))
            return false;
    return true;
}

/* One step of a Fisher-Yates shuffle per draw, so drawing k points costs
 * O(k) and no point comes twice. */
static bool draw_listed(kc_tune_ctx *c, int *point)
{
    while (c->cursor < c->nvalid) {
        long j = c->cursor + kc_tune_rand_below(c, (int)(c->nvalid - c->cursor));
        uint32_t t = c->valid[j];
        c->valid[j] = c->valid[c->cursor];
        c->valid[c->cursor++] = t;
        decode(c->space, t, point);
        if (!kc_tune_measured(c, point))
            return true;
    }
    return false;
}

static bool draw_rejecting(kc_tune_ctx *c, int *point)
{
    for (long k = 0; k < KC_TUNE_SAMPLE_TRIES && !kc_tune_done(c); k++) {
        for (int d = 0; d < c->space->ndims; d++)
            do
                point[d] = kc_tune_rand_below(c, c->space->nvalues[d]);
            while (!in_lattice(c, d, point[d]));
        if (kc_tune_valid(c, point) && !kc_tune_measured(c, point))
            return true;
    }
    return false;
}

/* A random unmeasured point of the coarse lattice, drawn from the valid
 * ones not yet shuffled out without consuming them (the full lattice's
 * sampling without replacement must still reach every point later); false
 * when KC_TUNE_SAMPLE_TRIES draws find none. */
static bool draw_coarse(kc_tune_ctx *c, int *point)
{
    for (long k = 0; k < KC_TUNE_SAMPLE_TRIES && c->cursor < c->nvalid; k++) {
        long j = c->cursor + (long)(kc_tune_rand(c) % (uint64_t)(c->nvalid - c->cursor));
        decode(c->space, c->valid[j], point);
        if (on_lattice(c, point) && !kc_tune_measured(c, point))
            return true;
    }
    return false;
}

bool kc_tune_random_point(kc_tune_ctx *c, int *point)
{
    bool listed = enumerate(c);
    if (c->coarse && (listed ? draw_coarse(c, point) : draw_rejecting(c, point)))
        return true;
    bool coarse = c->coarse; /* none left there: any point will do */
    c->coarse = false;
    bool found = listed ? draw_listed(c, point) : draw_rejecting(c, point);
    c->coarse = coarse;
    return found;
}

bool kc_tune_start_point(kc_tune_ctx *c, int *point)
{
    const kc_tune_space *s = c->space;
    c->start_chosen = true;
    if (s->nseeds > 0 && s->seeds && c->best) {
        memcpy(point, c->best, sizeof(int) * (size_t)s->ndims);
        return true;
    }
    if (s->start && kc_tune_valid(c, s->start) && !kc_tune_measured(c, s->start)) {
        memcpy(point, s->start, sizeof(int) * (size_t)s->ndims);
        return true;
    }
    c->start_chosen = false;
    return kc_tune_random_point(c, point);
}

bool kc_tune_start_chosen(const kc_tune_ctx *c)
{
    return c->start_chosen;
}

int kc_tune_max_neighbours(const kc_tune_ctx *c)
{
    int n = 0;
    for (int d = 0; d < c->space->ndims; d++)
        n += c->space->nvalues[d] - 1;
    return n;
}

static void shuffle_points(kc_tune_ctx *c, int *pts, int n)
{
    int nd = c->space->ndims;
    for (int i = n - 1; i > 0; i--) {
        int j = kc_tune_rand_below(c, i + 1);
        for (int d = 0; d < nd; d++) {
            int t = pts[i * nd + d];
            pts[i * nd + d] = pts[j * nd + d];
            pts[j * nd + d] = t;
        }
    }
}

int kc_tune_neighbours(kc_tune_ctx *c, const int *point, int *out)
{
    int nd = c->space->ndims, n = 0;
    for (int d = 0; d < nd; d++)
        for (int v = 0; v < c->space->nvalues[d]; v++) {
            if (v == point[d] || !in_lattice(c, d, v))
                continue;
            int *q = out + n * nd;
            memcpy(q, point, sizeof(int) * (size_t)nd);
            q[d] = v;
            n += kc_tune_valid(c, q);
        }
    shuffle_points(c, out, n);
    return n;
}

int kc_tune_max_pair_neighbours(const kc_tune_ctx *c)
{
    int nd = c->space->ndims;
    return 2 * nd * (nd - 1); /* 4 per pair of dimensions at most */
}

/* The values of dimension d adjacent to v in the lattice searched (the
 * nearest one below and above): at most two, written to adj. */
static int adjacent(const kc_tune_ctx *c, int d, int v, int adj[2])
{
    int n = c->space->nvalues[d], k = 0;
    if (n == 2) {
        adj[k++] = 1 - v;
        return k;
    }
    for (int u = v - 1; u >= 0; u--)
        if (in_lattice(c, d, u)) {
            adj[k++] = u;
            break;
        }
    for (int u = v + 1; u < n; u++)
        if (in_lattice(c, d, u)) {
            adj[k++] = u;
            break;
        }
    return k;
}

int kc_tune_pair_neighbours(kc_tune_ctx *c, const int *point, int *out)
{
    int nd = c->space->ndims, n = 0;
    for (int d = 0; d < nd; d++) {
        int ad[2], nad = adjacent(c, d, point[d], ad);
        for (int e = d + 1; e < nd; e++) {
            int ae[2], nae = adjacent(c, e, point[e], ae);
            for (int i = 0; i < nad; i++)
                for (int j = 0; j < nae; j++) {
                    int *q = out + n * nd;
                    memcpy(q, point, sizeof(int) * (size_t)nd);
                    q[d] = ad[i], q[e] = ae[j];
                    n += kc_tune_valid(c, q);
                }
        }
    }
    shuffle_points(c, out, n);
    return n;
}

/* How far q is from p: the tunables changed first, then the value steps
 * summed over them (a tile of 32 is nearer 64 than 128 is). */
static long distance(int nd, const int *p, const int *q)
{
    long changed = 0, steps = 0;
    for (int d = 0; d < nd; d++) {
        changed += p[d] != q[d];
        steps += p[d] > q[d] ? p[d] - q[d] : q[d] - p[d];
    }
    return changed * 1000000 + steps;
}

/* The valid point nearest from with value v in dimension d, written to
 * out (ties broken at random; q is scratch); false when none is left to measure. */
static bool nearest_with(kc_tune_ctx *c, const int *from, int d, int v, int *q, int *out)
{
    int nd = c->space->ndims;
    long best = -1, ties = 0;
    for (long i = 0; i < c->nvalid; i++) {
        decode(c->space, c->valid[i], q);
        if (q[d] != v || !on_lattice(c, q) || kc_tune_measured(c, q))
            continue;
        long dist = distance(nd, from, q);
        if (best >= 0 && dist > best)
            continue;
        ties = best == dist ? ties + 1 : 1;
        best = dist;
        if (kc_tune_rand_below(c, (int)ties) == 0)
            memcpy(out, q, sizeof(int) * (size_t)nd);
    }
    return best >= 0;
}

int kc_tune_switch_probes(kc_tune_ctx *c, const int *from, int *out)
{
    const kc_tune_space *s = c->space;
    int nd = s->ndims, n = 0;
    if (!enumerate(c))
        return 0;
    /* Each switch's candidate, then the farthest first: a probe that
     * changes more tunables flips more switches (conv1d's VEC = 1 probe
     * also turns SMEM off), and a switch it flips needs no probe of its
     * own. */
    int *cand = kc_tune_alloc_points(c, nd + 1), *scratch = cand + nd * nd;
    long *dist = kc_tune_alloc(c, sizeof(long) * (size_t)nd);
    for (int d = 0; d < nd; d++)
        dist[d] = s->nvalues[d] == 2 && nearest_with(c, from, d, 1 - from[d], scratch, cand + d * nd)
                      ? distance(nd, from, cand + d * nd)
                      : -1;
    for (;;) {
        int far = -1;
        for (int d = 0; d < nd; d++) {
            bool covered = false; /* the other value, by a probe already taken */
            for (int i = 0; i < n && !covered; i++)
                covered = out[i * nd + d] != from[d];
            if (dist[d] >= 0 && !covered && (far < 0 || dist[d] > dist[far]))
                far = d;
        }
        if (far < 0)
            return n;
        memcpy(out + n++ * nd, cand + far * nd, sizeof(int) * (size_t)nd);
        dist[far] = -1;
    }
}
