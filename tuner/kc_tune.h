/*
 * kc_tune.h — the autotuner's search: spaces, strategies, the run context
 * they evaluate through, and replay of recorded spaces (DESIGN.md §7).
 *
 *   space      tunables, their candidate values, a validity test
 *   measure    the caller's function that times one point (on a GPU, or
 *              from a recorded file in replay)
 *   ctx        one search: budget, dedup, best so far, PRNG, sampling
 *   strategy   an algorithm that walks the space through a ctx, by name
 *   replay     a space recorded in Kernel Tuner's cache-file format, as a
 *              measure function, and the statistics of repeated searches
 *
 * Strategies know nothing of replay or devices: they see a space and a
 * ctx. Everything here is seeded and reproducible: the same space, options
 * and measurements give the same sequence of points. Nothing exits the
 * process; failures return NULL or -1 and leave a message in err.
 */
#ifndef KC_TUNE_H
#define KC_TUNE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- space and measurement ------------------------------------------- */

/* A point is an index per dimension: point[d] in [0, nvalues[d]). */
typedef struct kc_tune_space {
    int ndims;
    const char *const *names;     /* tunable names, declaration order */
    const int *nvalues;           /* candidates per dimension, each >= 1 */
    const int64_t *const *values; /* candidate values per dimension; values[d]
                                     may be NULL where they are not integers
                                     (a replayed space of strings) */
    /* Constraints and device limits. Must be cheap and pure: strategies
     * call it often, and a point it refuses is never measured. NULL means
     * every point of the product is valid. */
    bool (*valid)(void *user, const int *point);
    void *user;
    const int *start; /* the default point, or NULL */
    /* Transfer: points that were fast in other searches of this kernel
     * (other shapes, other devices of the family), nseeds * ndims ints.
     * With seeds, kc_tune_run measures the start point and then each seed
     * before the strategy runs, and kc_tune_start_point gives the fastest
     * of them, so a local search begins where earlier searches ended. */
    const int *seeds;
    int nseeds;
} kc_tune_space;

/* Returns a time (lower is better, > 0), or a value <= 0, NaN or INFINITY
 * for a failed configuration (compile failed, wrong result, timeout). A
 * failed point costs an evaluation but is never the best. */
typedef double (*kc_tune_measure)(void *user, const int *point);

/* ---- a search -------------------------------------------------------- */

typedef struct kc_tune_options {
    const char *strategy; /* a name from kc_tune_strategies; NULL = "default" */
    long max_evals;       /* measurements allowed; 0 = no limit */
    double max_seconds;   /* wall-clock limit; 0 = no limit */
    uint64_t seed;        /* same seed, same search */
} kc_tune_options;

typedef enum {
    KC_TUNE_RUNNING,
    KC_TUNE_STOP_BUDGET,   /* max_evals measurements made */
    KC_TUNE_STOP_TIME,     /* max_seconds passed */
    KC_TUNE_STOP_FINISHED, /* the strategy ended: space covered or converged */
    KC_TUNE_STOP_STALLED,  /* KC_TUNE_STALL_PROBES probes found nothing new */
    KC_TUNE_STOP_ASKED,    /* kc_tune_stop_now: the user pressed Ctrl-C */
} kc_tune_stop;

typedef struct kc_tune_ctx kc_tune_ctx;

/* Checks the space and options (unknown strategy, empty dimension …);
 * NULL with a message in err when they are wrong. The space must outlive
 * the ctx. */
kc_tune_ctx *kc_tune_new(const kc_tune_space *space, kc_tune_measure measure, void *user,
                         const kc_tune_options *opt, char *err, size_t errlen);
void kc_tune_free(kc_tune_ctx *ctx);
/* Runs the strategy until it stops; returns why. Run once per ctx. */
kc_tune_stop kc_tune_run(kc_tune_ctx *ctx);

/* Asks the strategy to stop before its next measurement (from the measure
 * function, say after Ctrl-C); kc_tune_run then returns KC_TUNE_STOP_ASKED. */
void kc_tune_stop_now(kc_tune_ctx *ctx);

/* Results, also readable while running (from the measure function, for a
 * progress line). */
const int *kc_tune_best(const kc_tune_ctx *ctx, double *time); /* NULL if none succeeded */
long kc_tune_evals(const kc_tune_ctx *ctx);                    /* measurements made */
long kc_tune_failures(const kc_tune_ctx *ctx);                 /* of those, failed */
double kc_tune_seconds(const kc_tune_ctx *ctx);                /* since kc_tune_run */
/* The strategy that runs: "default" resolves to a concrete one. */
const char *kc_tune_strategy_name(const kc_tune_ctx *ctx);
const char *kc_tune_stop_text(kc_tune_stop why);

/* ---- strategies ------------------------------------------------------ */

/* A strategy walks the space through its ctx, calling kc_tune_eval until
 * kc_tune_done says stop (or it has nothing left to try), then returns.
 * It must bound every loop that does not measure: the ctx gives up after
 * KC_TUNE_STALL_PROBES probes in a row that find nothing new. */
typedef struct kc_tune_strategy {
    const char *name;
    const char *summary; /* one line for `kc tune --list-strategies` */
    void (*search)(kc_tune_ctx *ctx);
} kc_tune_strategy;

extern const kc_tune_strategy kc_tune_strategies[]; /* ends with a NULL name */
const kc_tune_strategy *kc_tune_find_strategy(const char *name);

/* The strategies; each file explains its algorithm and parameters. */
void kc_tune_exhaustive(kc_tune_ctx *ctx);
void kc_tune_random(kc_tune_ctx *ctx);
void kc_tune_ils(kc_tune_ctx *ctx);
void kc_tune_anneal(kc_tune_ctx *ctx);
void kc_tune_genetic(kc_tune_ctx *ctx);
void kc_tune_forest(kc_tune_ctx *ctx);

/* ---- what a strategy may call ------------------------------------------ */

/* Spaces up to this many points (the whole product) are enumerated once
 * up front, so that sampling without replacement is exact and the default
 * strategy knows the number of valid points; larger ones are sampled by
 * rejection. */
#define KC_TUNE_ENUM_MAX (1L << 22)
/* Rejection sampling in a large space gives up after this many draws. */
#define KC_TUNE_SAMPLE_TRIES (1L << 16)
/* A search stops when this many probes in a row (validity checks and
 * evaluations of points already measured) have found nothing to measure. */
#define KC_TUNE_STALL_PROBES (1L << 20)

const kc_tune_space *kc_tune_space_of(const kc_tune_ctx *ctx);
/* Measures point once: returns its time, the recorded time for a point
 * already measured (free, not counted again), or INFINITY when it failed,
 * is invalid (never measured, never counted) or the budget is spent. */
double kc_tune_eval(kc_tune_ctx *ctx, const int *point);
/* True when the strategy must return: budget, time, or stalled. */
bool kc_tune_done(kc_tune_ctx *ctx);
/* How far the budget is used, 0 to 1 (schedules such as annealing's). */
double kc_tune_progress(const kc_tune_ctx *ctx);
long kc_tune_max_evals(const kc_tune_ctx *ctx);         /* the evaluation budget; 0 = none */
bool kc_tune_valid(kc_tune_ctx *ctx, const int *point); /* counts as a probe */
bool kc_tune_measured(const kc_tune_ctx *ctx, const int *point);

/* Number of valid points, or -1 when the space is too large to count. */
long kc_tune_valid_count(kc_tune_ctx *ctx);
/* The i-th valid point in lexicographic order (last dimension fastest);
 * false past the end, or when the space cannot be counted. */
bool kc_tune_valid_point(kc_tune_ctx *ctx, long i, int *point);
/* A uniformly random valid point not measured yet; false when none is
 * left or none can be found. In a space that can be counted it never
 * returns the same point twice (sampling without replacement); in a
 * larger one it may repeat a point the strategy did not measure. */
bool kc_tune_random_point(kc_tune_ctx *ctx, int *point);
/* The space's start point if valid and not measured, else a random one.
 * When the space has seeds (transfer), the fastest point measured so far
 * (kc_tune_run measured the start point and the seeds first). */
bool kc_tune_start_point(kc_tune_ctx *ctx, int *point);
/* Whether kc_tune_start_point's last point was the space's start or a
 * seed's winner (a point someone chose) rather than a random one. */
bool kc_tune_start_chosen(const kc_tune_ctx *ctx);
/* The valid points at Hamming distance 1 from point (one dimension
 * changed), in random order, written ndims ints each to out (room for
 * sum(nvalues - 1) points). Returns how many. */
int kc_tune_neighbours(kc_tune_ctx *ctx, const int *point, int *out);
int kc_tune_max_neighbours(const kc_tune_ctx *ctx);
/* The valid points that change two dimensions of point, each to an
 * adjacent value (one index up or down; a two-valued dimension flips), in
 * random order, ndims ints each to out (room for
 * kc_tune_max_pair_neighbours points). Returns how many. */
int kc_tune_pair_neighbours(kc_tune_ctx *ctx, const int *point, int *out);
int kc_tune_max_pair_neighbours(const kc_tune_ctx *ctx);
/* The designs a local search cannot walk between. For each switch (a
 * tunable of two values) whose other value neither from nor an earlier
 * probe has, the valid unmeasured point nearest from that has it: fewest
 * tunables changed, then fewest value steps, ties at random. Where the
 * switch alone cannot flip (SMEM=0 also wants BK=8), the probe changes
 * what the constraints force and nothing else. Written ndims ints each to
 * out (room for ndims points); returns how many, 0 when the space is too
 * large to enumerate. Stays on the coarse lattice while it is on. */
int kc_tune_switch_probes(kc_tune_ctx *ctx, const int *from, int *out);
/* The coarse lattice: in a dimension of integer values that mixes round
 * ones (0 and powers of two, at least two of them) with others (48, 3),
 * only the round ones. While it is on, kc_tune_neighbours,
 * kc_tune_pair_neighbours (adjacent = the nearest round value) and
 * kc_tune_random_point stay in it; kc_tune_eval still measures any point.
 * Returns whether it is on: false when turned off or when the space has
 * no such dimension. Off when a search starts. */
bool kc_tune_set_coarse(kc_tune_ctx *ctx, bool on);

/* Zeroed memory that lives as long as the ctx (a strategy's points). */
void *kc_tune_alloc(kc_tune_ctx *ctx, size_t bytes);
int *kc_tune_alloc_points(kc_tune_ctx *ctx, int npoints);

/* The ctx's PRNG (xoshiro256**, seeded through splitmix64). */
uint64_t kc_tune_rand(kc_tune_ctx *ctx);
int kc_tune_rand_below(kc_tune_ctx *ctx, int n); /* uniform in [0, n), n >= 1 */
double kc_tune_rand_unit(kc_tune_ctx *ctx);      /* uniform in [0, 1) */

/* ---- replay ------------------------------------------------------------ */

/* A space recorded by a tuner in Kernel Tuner's cache-file format (JSON,
 * plain or gzip, possibly truncated by an interrupted run): dimensions are
 * tune_params in tune_params_keys order, valid points are the
 * configurations in cache, and a configuration whose time is not a number
 * is a valid point whose measurement fails. */
typedef struct kc_tune_replay kc_tune_replay;

kc_tune_replay *kc_tune_replay_load(const char *path, char *err, size_t errlen);
void kc_tune_replay_free(kc_tune_replay *r);
const kc_tune_space *kc_tune_replay_space(const kc_tune_replay *r);
/* The kc_tune_measure of a replay: the recorded time, user = the replay. */
double kc_tune_replay_measure(void *replay, const int *point);

typedef struct kc_tune_replay_info {
    const char *kernel, *device; /* "" when the file does not say */
    long size;                   /* configurations in the file */
    long failed;                 /* of those, without a numeric time */
    long ignored;   /* cache entries without a time, duplicates, or with a value not in tune_params */
    double product; /* points in the Cartesian product */
    double optimum; /* the least numeric time */
    const int *optimum_point;
    long repaired_bytes;  /* > 0: the file was truncated; bytes dropped */
    int repaired_closers; /* brackets appended to close it */
} kc_tune_replay_info;

void kc_tune_replay_get_info(const kc_tune_replay *r, kc_tune_replay_info *info);
/* Text of a dimension's candidate value, as the file writes it. */
const char *kc_tune_replay_value_text(const kc_tune_replay *r, int dim, int index);

/* The outcome of repeated searches on one replayed space. */
typedef struct kc_tune_replay_stats {
    const char *strategy; /* resolved, as kc_tune_strategy_name */
    double mean_fraction; /* of optimum: optimum / best found, 0 if none */
    double min_fraction, max_fraction;
    double mean_evals;
    double seconds; /* all runs together */
} kc_tune_replay_stats;

/* Runs opt's strategy `repeats` times with seeds opt->seed, opt->seed + 1
 * …; fractions and evals, when not NULL, get one entry per run. Returns 0,
 * or -1 with a message in err. */
int kc_tune_replay_run(kc_tune_replay *r, const kc_tune_options *opt, int repeats,
                       kc_tune_replay_stats *stats, double *fractions, long *evals, char *err, size_t errlen);

#endif
