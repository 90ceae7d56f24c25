/*
 * kc_tune_device.h — `kc tune BUNDLE`: tuning on the user's own GPU
 * (DESIGN.md §7).
 *
 * For each kernel of a bundle and each problem shape (kc.yaml's, or
 * given), a search strategy (tuner/kc_tune.h) walks the kernel's variants
 * that pass KC_REQUIRE and the device's limits. Each variant is compiled
 * for the device's target, loaded through libkcrt (pipeline creation is
 * not timed), run once on fresh random inputs and compared with the
 * default variant's outputs, then timed with device timestamps until the
 * median is stable. Every result goes to the cache (cache/kc_cache.h) the
 * moment it is known, so a tune stopped in any way resumes where it was;
 * a configuration in the cache is never measured again. At the end of each
 * kernel and shape the winner, taken from everything the cache knows for
 * this device, goes into the bundle: its binary (compiled now if the
 * bundle lacks it) and a row of the tuned table.
 *
 * Everything here returns a status and leaves messages on the log; nothing
 * exits. A variant that hangs the device cannot be stopped from the host,
 * so the watchdog records it as a timeout and calls the caller's on_hang,
 * which must end or replace the process (kc re-executes itself).
 */
#ifndef KC_TUNE_DEVICE_H
#define KC_TUNE_DEVICE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct kc_tune_device_options {
    const char *bundle;            /* rewritten in place with the winners */
    const char *cache;             /* NULL: kc_cache_default_path() */
    const char *const *kernels;    /* NULL: every kernel of the bundle */
    int nkernels;
    const char *const *shapes;     /* "n=48000,m=3"; NULL: each kernel's shapes from kc.yaml */
    int nshapes;
    const char *shapes_from;       /* a KCRT_RECORD_SHAPES file: each kernel at the shapes it records */
    bool smallest;                 /* of kc.yaml's shapes, only each kernel's cheapest (flops + bytes) */
    const char *backend;           /* "vulkan", "hip", "cuda"; NULL: the runtime's choice */
    int device;                    /* -1: the runtime's choice */
    const char *strategy;          /* NULL: "default" (exhaustive when it fits the budget) */
    long budget;                   /* evaluations per kernel and shape; 0: KC_TUNE_DEFAULT_BUDGET */
    bool unlimited;                /* no evaluation budget (--budget all) */
    double seconds;                /* the whole tune's wall-clock limit; 0: none */
    uint64_t seed;                 /* the search's; the same seed walks the same points */
    uint64_t input_seed;           /* random inputs; 0: fresh each run */
    double timeout_s;              /* a launch slower than this is a timeout; 0: automatic */
    double timing_cap_s;           /* time spent timing one variant at most; 0: 1 s */
    bool no_racing;                /* time every variant to 1% even when it is clearly slow */
    bool no_transfer;              /* start from the default only, not from earlier winners */
    bool allow_spills;             /* measure AMDGPU variants that spill VGPRs (skipped otherwise) */
    bool cold;                     /* time each launch after writing cold_mib MiB of scratch */
    long cold_mib;                 /* (kcrt_time_launch_cold; 0: libkcrt's default, 256) */
    double compile_limit_s;        /* refuse a variant whose compile takes longer; 0: automatic */
    bool apply_only;               /* measure nothing: write the cache's winners to the bundle */
    const char *report;            /* FILE.html or FILE.svg, or NULL */
    const char *report_axes[2];    /* tunables for the heat map, or NULL */
    FILE *log;                     /* progress and messages (stderr) */
    bool quiet;                    /* only errors and the summary */
    /* Called from the watchdog's thread when a launch hangs past twice
     * the timeout or a compile runs past the compile limit, after the
     * cache records it, with a sentence that says so; must not return
     * (kc re-executes itself to go on). */
    void (*on_hang)(void *user, const char *message);
    void *on_hang_user;
    /* The searches an earlier run of this tune finished before a hang
     * ended it (kc_tune_device_where): their winners are taken from the
     * cache, nothing measured, so that a restart goes on where the hang
     * was instead of searching them again along another path. */
    long resume_after;
} kc_tune_device_options;

/* Evaluations per kernel and shape unless told otherwise: enough for the
 * default strategy to cover small spaces and converge in large ones. */
#define KC_TUNE_DEFAULT_BUDGET 100

/* What the tune did, for the caller's exit status and tests. */
typedef struct kc_tune_device_summary {
    long pairs;        /* kernel x shape searches run */
    long measured;     /* configurations measured on the device now */
    long cached;       /* evaluations answered by the cache */
    long failed;       /* of those measured, failed (any status) */
    long spill_skipped; /* of those measured, skipped for spilling registers (not failed) */
    long raced;        /* of those measured, timings racing stopped early */
    long applied;      /* tuned rows written to the bundle */
    bool interrupted;  /* Ctrl-C or the time limit cut it short */
    bool cpu_device;   /* the device runs on the host's CPUs (lavapipe) */
} kc_tune_device_summary;

/* Runs a tune. Returns 0, or 1 after printing what went wrong (the bundle
 * and the cache keep everything done until then). */
int kc_tune_device(const kc_tune_device_options *o, kc_tune_device_summary *summary);

/* Asks a running tune to stop after the measurement in flight and to
 * apply what it has (safe from a signal handler). */
void kc_tune_device_interrupt(void);

/* Where a running tune stands, for a restart that goes on from it: the
 * searches finished (resume_after's included) and the seconds left of
 * the time limit (0: there is none). Safe from the watchdog's thread. */
typedef struct kc_tune_device_position {
    long searches_done;
    double seconds_left;
} kc_tune_device_position;

kc_tune_device_position kc_tune_device_where(void);

#endif
