/*
 * device_private.h — the parts of on-device tuning, one file each:
 *
 *   space.c     a kernel's variants as a kc_tune_space: KC_REQUIRE and the
 *               device's workgroup limits decide what is valid
 *   workload.c  one kernel at one shape on the device: arguments, random
 *               inputs kept on the host, the reference outputs, the check
 *   measure.c   one configuration: cache, compile, load, verify, time
 *   watchdog.c  a thread that notices a launch that never ends
 *   progress.c  the live line on a terminal, plain lines elsewhere
 *   apply.c     winners into the bundle; the report from the cache
 *   session.c   the whole tune: what to open, the loop, the summary
 */
#ifndef KC_TUNE_DEVICE_PRIVATE_H
#define KC_TUNE_DEVICE_PRIVATE_H

#include <stdarg.h>

#include "kc/kcrt.h"
#include "kc_build.h"
#include "kc_cache.h"
#include "kc_tune.h"
#include "kc_tune_device.h"
#include "kcrt_internal.h"

/* ---- space.c ---------------------------------------------------------------------------- */

/* A kernel of the bundle, rebuilt from the bundle's sources. */
typedef struct td_kernel {
    kc_ctx ctx; /* owns the program */
    const kc_program *prog;
    const kc_func *k;
    const char *name;
    const kcrt_kernel_info *info; /* the runtime's view: params, init, tolerance */
    /* the space: the tunables the kernel uses, in declaration order */
    int ndims;
    const char **names;
    int *nvalues;
    const int64_t **values;
    int *start; /* the default variant */
    kc_tune_space space;
    const kcrt_device_info *dev;
    const char *space_text; /* "WG=64,128;PT=1,2", for the cache */
} td_kernel;

/* Rebuilds the kernel and its space; false with a message. */
bool td_kernel_open(td_kernel *tk, kc_bundle *b, const kcrt_kernel_info *info, const kcrt_device_info *dev,
                    char *err, size_t errlen);
void td_kernel_close(td_kernel *tk);
/* A point as a binding and as text ("WG=64,PT=2"), in arena a. */
kc_ir_binding td_binding(kc_arena *a, const td_kernel *tk, const int *point);
const char *td_variant_text(kc_arena *a, const td_kernel *tk, const int *point);
/* The point of a variant's text; false when it is not in the space. */
bool td_point_of(const td_kernel *tk, const char *variant, int *point);
/* Why the device rules the point out (workgroup limits), or NULL. */
const char *td_device_refusal(const td_kernel *tk, const int *point, char *buf, size_t len);

/* ---- workload.c ------------------------------------------------------------------------- */

typedef struct td_workload {
    kcrt_context *ctx;
    const kcrt_kernel_info *info;
    const char *shape; /* canonical: every integer scalar in parameter order */
    int nargs;
    kcrt_arg *args;
    kcrt_buffer **bufs; /* per parameter, NULL for scalars */
    size_t *bytes;
    void **initial;   /* writable buffers: their random contents, restored before each check */
    void **reference; /* writable buffers: what the reference variant wrote */
    void *scratch;    /* room to read any buffer back */
    double ref_seconds; /* the reference launch's wall time */
} td_workload;

/* Writes the canonical form of a shape for a kernel into out (every
 * integer scalar, parameter order); false with a message when a name is
 * unknown or missing, or a value is not an integer. */
bool td_shape_canonical(const kcrt_kernel_info *info, const char *shape, kc_arena *a, const char **out, char *err,
                        size_t errlen);

/* Allocates and fills every buffer (init per kc.yaml, never zeros) and
 * sets the scalars; false with a message. */
bool td_workload_init(td_workload *w, kcrt_context *ctx, const kcrt_kernel_info *info, const char *shape,
                      uint64_t seed, char *err, size_t errlen);
void td_workload_free(td_workload *w);
/* Writes the initial contents back into the writable buffers. */
bool td_workload_restore(td_workload *w);
/* Keeps the writable buffers' contents as the reference; false with why
 * when they cannot be read or hold a NaN or an infinity. */
bool td_workload_keep_reference(td_workload *w, char *why, size_t len);
/* Compares the writable buffers with the reference: relative L2 over all
 * of them; a NaN or infinity where the reference has none fails. Writes
 * the error and, when it fails, why. */
bool td_workload_check(td_workload *w, double tolerance, double *rel_l2, char *why, size_t len);

/* ---- watchdog.c ------------------------------------------------------------------------- */

typedef struct td_watchdog td_watchdog;

/* What is watched: a launch past its time is a timeout, a compile past
 * its limit a refusal whose detail begins with TD_COMPILE_WHY. */
typedef enum td_watch { TD_WATCH_LAUNCH, TD_WATCH_COMPILE } td_watch;
#define TD_COMPILE_WHY "its compile ran past "

/* Starts the thread; on a hang it records the key in the cache at
 * cache_path (as td_watch says) and calls on_hang with what happened. */
td_watchdog *td_watchdog_start(const char *cache_path, void (*on_hang)(void *, const char *), void *user);
void td_watchdog_stop(td_watchdog *w);
/* Watches a launch or compile of key from now until td_watchdog_disarm,
 * for seconds. */
void td_watchdog_arm(td_watchdog *w, const kc_cache_key *key, double seconds, td_watch what);
void td_watchdog_disarm(td_watchdog *w);

/* ---- progress.c ------------------------------------------------------------------------- */

typedef struct td_progress {
    FILE *out;
    bool tty, quiet, line_open;
    double t0, last_draw;
    long pairs_total, pair_index; /* 1-based */
    const char *kernel, *shape;
    long budget; /* evaluations planned for this pair */
    double deadline; /* of the whole tune, 0: none */
    double per_eval; /* seconds per measured configuration so far */
    long measured_all;
    double measuring_seconds;
} td_progress;

void td_progress_init(td_progress *p, FILE *out, bool quiet, long pairs, double deadline);
void td_progress_pair(td_progress *p, const char *kernel, const char *shape, long budget);
/* After each evaluation: done, best time and variant (NULL: none yet), failures. */
void td_progress_update(td_progress *p, long done, double best_ns, const char *best, long failures,
                        bool measured, double seconds);
/* A line that stays (notes, a pair's summary). */
void td_progress_say(td_progress *p, const char *fmt, ...) KC_PRINTF(2, 3);
void td_progress_end_line(td_progress *p);
/* A time for people: "850 ns", "12.3 us", "4.56 ms". */
void td_time_text(char *buf, size_t len, double ns);

/* ---- the session (session.c, measure.c, apply.c) ------------------------------------------ */

typedef struct td_session {
    const kc_tune_device_options *o;
    kc_tune_device_summary *sum;
    kcrt_context *ctx;
    kcrt_bundle *rb; /* the runtime's view of the bundle */
    kc_bundle *b;    /* the writable one */
    kc_cache *cache;
    const char *cache_path;
    const kcrt_device_info *dev;
    const kc_target *target;
    td_watchdog *dog;
    td_progress progress;
    kc_arena arena;
    /* the cache's "compiler" of this tune's results: KC_VERSION, and
     * KC_CACHE_COLD_MARK after it when timed with cold caches, so that warm
     * and cold times are never compared or mixed */
    const char *measured_by;
} td_session;

/* One search: a kernel at a shape. */
typedef struct td_search {
    td_session *s;
    td_kernel *tk;
    td_workload w;
    const char *shape;
    const char *reference; /* the variant whose outputs are the reference */
    double timeout_s;
    double first_grace_s; /* the watchdog's extra time for a variant's first launch */
    double compile_limit_s; /* kc's compile of a variant past this is refused */
    kc_tune_ctx *tctx;
    long measured, cached;
    long by_status[KC_RESULT_COUNT]; /* of the measured */
    long raced, raced_samples;       /* timings racing stopped early, and their samples */
    long spill_skipped;              /* variants not measured because they spill (not cached) */
    kc_tune_space space;             /* the kernel's, with this search's transfer seeds */
    bool last_measured;              /* the last evaluation ran on the device */
    double last_seconds;             /* and took this long, compile to commit */
    bool stop;                       /* a failure that is not a variant's: error says */
    char error[1024];
} td_search;

/* Set by kc_tune_device_interrupt. */
bool td_interrupted(void);
double td_now(void);
/* The cache key of a point of a search (strings in a). */
kc_cache_key td_key(kc_arena *a, const td_search *r, const char *variant);
/* kc_tune_measure for a td_search. */
double td_measure(void *search, const int *point);
/* Measures (or finds in the cache) one variant; false when it failed. */
bool td_evaluate(td_search *r, const int *point, kc_cache_result *res, kc_arena *a);
/* Runs the reference variant once, keeps its outputs, sets the timeout;
 * false with a message when no variant can serve. */
bool td_reference(td_search *r, char *err, size_t errlen);
/* Compiles a point for the session's target; false with the reason. */
bool td_compile(const td_search *r, const int *point, kc_variant_blob *blob, char *why, size_t len);

/* The cache's fastest ok variant for this search's kernel version,
 * device and shape; false when there is none. */
bool td_winner(td_search *r, kc_arena *a, const char **variant, double *time_ns);
/* Transfer (transfer.c): up to max points (ndims ints each) that won
 * earlier searches of this kernel, nearest shapes first, to start from;
 * says which in note ("BM=64,BN=128 (M=140,N=768,K=768), ..."). */
enum { TRANSFER_SHAPES = 2, TRANSFER_MAX = TRANSFER_SHAPES + 2 }; /* and a family row, a type default */
int td_transfer_seeds(td_search *r, kc_arena *a, int *seeds, int max, kc_buf *note);
/* kc.yaml's default variant for this device's type and the kernel, as the
 * bundle keeps it; NULL where kc.yaml gave none. */
const char *td_type_default(const td_search *r, kc_arena *a);

/* Writes the winner (binary if missing, tuned row) to the bundle. */
bool td_apply(td_search *r, char *err, size_t errlen);
/* Writes --report from the cache for the kernels and shapes tuned. */
bool td_write_report(td_session *s, td_kernel *const *kernels, const char *const *const *shapes,
                     const int *nshapes, int nkernels, char *err, size_t errlen);

#endif
