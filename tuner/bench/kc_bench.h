/*
 * kc_bench.h — kc bench: benchmarks of a bundle's kernels and the
 * regression check against a baseline (docs/benchmarks.md).
 *
 *   (tuner/stats/)    quantiles, the summary of a sample, the Mann–Whitney U test
 *   bench_inputs.c    a kernel's arguments for a shape: scalars, buffers filled as kc.yaml's
 *                     init says (tuner/workload/)
 *   bench_measure.c   kc's own calibration kernels (compiled at run time), the reference
 *                     kernel interleaved with each benchmark, the ratios, re-measuring
 *   bench_peaks.c     the device's copy bandwidth and FMA throughput (--calibrate), kept
 *                     per device key next to the tuning cache; the roofline
 *   bench_results.c   results as JSON (which is also the baseline format), reading a
 *                     baseline, the comparison and its verdicts
 *   bench_report.c    the text table, JUnit XML and Markdown
 *   bench_host.c      the share of the host's CPU time a hypervisor took during a run
 *   tools/cmd_bench.c the command line
 *
 * The noise model, in short: every benchmark's launches are interleaved
 * with launches of a fixed reference kernel, and what is compared with the
 * baseline is the ratio of the two, round by round; a machine that is
 * slower or busier slows both. A change counts as a regression only when
 * the median ratio grew by more than the threshold AND a one-sided
 * Mann–Whitney U test over the ratio samples says it is not chance — twice:
 * a suspected regression is measured again with fresh samples.
 *
 * With --against, the reference of each benchmark is the same kernel at
 * the same shape from another bundle (the one last accepted), and what is
 * judged is the kernel's time against that bundle's kernel's, both from
 * the same interleaved rounds: nothing recorded on another day, so a
 * change of host or driver moves both sides alike.
 */
#ifndef KC_BENCH_H
#define KC_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kc/kcrt.h"
#include "kc_stats.h"
#include "kc_support.h"

#define KC_BENCH_FORMAT "kc-bench/1" /* the "format" of results and baselines */

/* ---- inputs (bench_inputs.c) ----------------------------------------------------- */

enum { KC_BENCH_MAX_PARAMS = 64 };

/* A kernel's arguments for one shape, with the buffers they need. */
typedef struct kc_bench_args {
    kcrt_arg args[KC_BENCH_MAX_PARAMS];
    kcrt_buffer *bufs[KC_BENCH_MAX_PARAMS];
    int nargs;
    const char *names[KC_BENCH_MAX_PARAMS * 2]; /* integer scalars and the variant's tunables */
    int64_t values[KC_BENCH_MAX_PARAMS * 2];
    int nnames;
    size_t buffer_bytes; /* all buffers together */
} kc_bench_args;

/* Scalars from shape ("n=4096,ks=3"): every integer scalar must be named;
 * a bool not named is false, a float or half 1.0. Buffers from their
 * extents (with the variant's tunables), filled as the kernel's init: says
 * (kc run's rules), from the seed. On failure a message in err and every
 * buffer made so far freed. */
bool kc_bench_args_make(kcrt_kernel *k, const char *shape, uint64_t seed, kc_bench_args *out, char *err,
                        size_t errlen);
void kc_bench_args_free(kc_bench_args *a);
/* An integer expression of the kernel (bytes:, flops:, an extent) with
 * these arguments; -1 when it is absent or cannot be evaluated. */
double kc_bench_args_eval(const kc_bench_args *a, const char *postfix);

/* ---- the roofline (bench_peaks.c) ------------------------------------------------ */

typedef struct kc_bench_peaks {
    bool known;
    double gb_per_s;    /* copy bandwidth, 10^9 bytes per second (read + write) */
    double gflop_per_s; /* FMA throughput, 10^9 flops per second (an FMA is 2) */
    char source[32];    /* "measured" (kc bench --calibrate) or "datasheet" */
    char when[32];      /* measured: UTC time, ISO 8601 */
    char detail[320];   /* the variants and sizes that gave them */
    double steal;       /* measured: the host's CPU time stolen meanwhile (bench_host.c), -1 unknown */
    double others;      /* measured: other processes' share of this machine's CPU time meanwhile, -1 unknown
                           (not kept in peaks.json: said when calibrating) */
    bool stale;         /* not known: measured (when) by an older kc's calibration code */
} kc_bench_peaks;

/* $XDG_CACHE_HOME/kc/peaks.json (beside the tuning cache); NULL with err. */
char *kc_bench_peaks_default_path(char *err, size_t errlen);
/* This device's peaks: measured (from the file, when it has the key) or
 * the datasheet's for a few GPUs; known = false otherwise. */
void kc_bench_peaks_find(const char *path, const kcrt_device_info *dev, kc_bench_peaks *out);
/* Records measured peaks for a device key, keeping other devices' entries. */
bool kc_bench_peaks_store(const char *path, const kcrt_device_info *dev, const kc_bench_peaks *p, char *err,
                          size_t errlen);
/* The fraction of the roofline reached, min(peak flops, intensity x peak
 * bandwidth); *bound says which limits ("memory", "compute"). -1 when the
 * peaks or the kernel's bytes are unknown. */
double kc_bench_roofline(const kc_bench_peaks *p, double bytes, double flops, double ns, const char **bound);

/* ---- results, baselines, comparison (bench_results.c) ---------------------------- */

typedef enum {
    KC_BENCH_NEW = 0,    /* no baseline entry (or no baseline) */
    KC_BENCH_UNCHANGED,  /* within the threshold, or not significant */
    KC_BENCH_NOISY,      /* beyond the threshold but not significant: too noisy to say */
    KC_BENCH_FASTER,     /* faster beyond the threshold, significant */
    KC_BENCH_REGRESSION, /* slower beyond the threshold, significant, and again when re-measured */
    KC_BENCH_FAILED,     /* the benchmark did not run */
} kc_bench_verdict;

const char *kc_bench_verdict_name(kc_bench_verdict v); /* "new", "unchanged", … */

/* One verdict's numbers. */
typedef struct kc_bench_check {
    double change;     /* median ratio now / in the baseline - 1 */
    double p;          /* one-sided p-value in the direction of the change */
    double confidence; /* 1 - p */
    double u, z;       /* U of the current ratios against the baseline's */
    int n_now, n_base;
    kc_bench_verdict verdict;
} kc_bench_check;

typedef struct kc_bench_compare {
    bool have; /* the baseline has this kernel and shape */
    double base_ratio, base_median_ns, base_ref_ns;
    const char *base_variant;
    kc_bench_check first; /* the first measurement */
    kc_bench_check final; /* the re-measurement when there was one, else = first */
    bool remeasured;
    const char *note; /* "kernel source changed", "variant changed (was …)"; NULL */
} kc_bench_compare;

/* One kernel at one shape. */
typedef struct kc_bench_result {
    const char *kernel, *shape, *variant, *why, *source_hash;
    const char *ref_shape;   /* the reference kernel's shape it was compared with */
    const char *ref_variant; /* --against: the variant the baseline bundle's kernel chose */
    const char *error;       /* why it could not be measured; NULL when it was */
    int rounds, per_round;   /* ratio samples, and timed launches in each */
    double *times;           /* every timed launch of the kernel, ns: rounds x per_round */
    int ntimes;
    double *ref;    /* the reference kernel's mean launch per submission: rounds + 1 */
    double *ratios; /* per round: the kernel's mean launch / the geometric mean of
                       the reference's just before and just after */
    kc_stats_summary time, ratio, ref_time;
    double bytes, flops;                    /* per launch; -1 when kc.yaml does not say */
    double gb_per_s, gflop_per_s, roofline; /* -1 when unknown */
    const char *bound;                      /* "memory" or "compute" when roofline >= 0 */
    /* A plain copy of the same bytes in one launch (the reference kernel
     * with no multiply-adds), timed just before and just after the rounds:
     * its time, ns, and that time over the kernel's median. Near 1, no
     * kernel moving these bytes in one launch could be much faster on this
     * device, whatever the roofline says. -1 when unknown (no bytes, more
     * than the reference's buffers hold, or --against). */
    double copy_ns, vs_copy;
    double seconds;                         /* wall time spent measuring it */
    kc_bench_compare cmp;
} kc_bench_result;

/* A whole run: what the JSON file and the baseline hold. */
typedef struct kc_bench_run {
    kc_arena arena; /* everything below lives here */
    const char *kc_version, *created, *bundle, *package;
    const char *device_key, *device_name, *device_family, *backend;
    const char *ref_kernel, *ref_hash;
    kc_bench_peaks peaks;
    double max_regression, alpha; /* 0.10 = 10%; the p-value needed */
    int rounds;
    kc_vec results; /* kc_bench_result* */
    /* the baseline compared with, when there was one */
    const char *baseline_path, *baseline_version, *baseline_created, *baseline_device;
    bool other_device; /* compared with another device's baseline (--allow-other-device) */
    bool against;      /* the baseline is a bundle measured in this run (--against) */
    double elapsed;    /* seconds, the whole run */
    double steal;      /* the host's CPU time stolen during the run (bench_host.c), -1 unknown */
    double others;     /* on a CPU device, the share of this machine's CPU time other processes kept busy
                          during the run (bench_host.c); -1 unknown or not a CPU device */
} kc_bench_run;

void kc_bench_run_init(kc_bench_run *r);
void kc_bench_run_free(kc_bench_run *r);
kc_bench_result *kc_bench_run_add(kc_bench_run *r, const char *kernel, const char *shape);
#define KC_BENCH_RESULT(run, i) KC_VEC_AT((run)->results, kc_bench_result, i)

/* Counts per verdict over the run. */
void kc_bench_count(const kc_bench_run *r, int counts[KC_BENCH_FAILED + 1]);

/* The run as a JSON document (KC_BENCH_FORMAT), written atomically. */
bool kc_bench_write_json(const kc_bench_run *r, const char *path, char *err, size_t errlen);
/* Reads a results file or baseline into b (initialised by the caller):
 * device, version, reference, and per result the kernel, shape, variant,
 * source hash, the ratios and the medians. */
bool kc_bench_read_json(kc_bench_run *b, const char *path, char *err, size_t errlen);
/* The baseline's entry for a kernel and shape, or NULL. */
const kc_bench_result *kc_bench_find(const kc_bench_run *b, const char *kernel, const char *shape);
/* --against: the verdict of the kernel's times (each round's mean) against
 * the baseline bundle's kernel's (each submission's mean), from res's
 * interleaved rounds. */
void kc_bench_judge_against(const kc_bench_result *res, double max_regression, double alpha,
                            kc_bench_check *out);
/* The verdict of ratios now against the baseline's. */
void kc_bench_judge(const double *now, int nnow, const double *base, int nbase, double max_regression,
                    double alpha, kc_bench_check *out);

/* ---- the host (bench_host.c) ---------------------------------------------------- */

/* CPU time since boot over every CPU, in ticks. */
typedef struct kc_bench_cpu {
    unsigned long long busy, idle, steal; /* steal: time a hypervisor gave to other guests */
    unsigned long long self;              /* of busy, this process's (its threads', the driver's too) */
} kc_bench_cpu;

/* From /proc/stat's text (its first line); false if it is not that.
 * Leaves self at 0. */
bool kc_bench_cpu_parse(const char *text, kc_bench_cpu *out);
/* Now; false where the system does not count stolen time (not Linux). */
bool kc_bench_cpu_now(kc_bench_cpu *out);
/* The share of the CPU time between two samples that was stolen, 0..1;
 * -1 when the samples are too close or not of one machine. */
double kc_bench_cpu_steal(const kc_bench_cpu *before, const kc_bench_cpu *after);
/* The share of it that other processes of this machine kept busy, 0..1
 * (-1 as for steal): on a CPU device, cores the variants did not have. */
double kc_bench_cpu_others(const kc_bench_cpu *before, const kc_bench_cpu *after);
/* Above this share kc bench says that raw times read low. */
#define KC_BENCH_STEAL_NOTE 0.05
/* Above this share of other processes' load kc tune says its timings are
 * less certain, and kc bench that its times on a CPU device read long: a core's worth on a 10-core machine, a fifth of one on 2. */
#define KC_BENCH_OTHERS_NOTE 0.10

/* ---- reports (bench_report.c) ---------------------------------------------------- */

/* The table for people; verbose adds the reference kernel's time per row. */
void kc_bench_report_text(const kc_bench_run *r, FILE *out, bool verbose);
bool kc_bench_write_junit(const kc_bench_run *r, const char *path, char *err, size_t errlen);
bool kc_bench_write_markdown(const kc_bench_run *r, const char *path, char *err, size_t errlen);
/* "812 us", "1.23 ms", "4.5 s": a duration in ns for people. */
const char *kc_bench_duration(double ns, char *buf, size_t len);

/* ---- measuring (bench_measure.c) ------------------------------------------------- */

typedef struct kc_bench_opts {
    int rounds;         /* ratio samples per benchmark (default 15) */
    double max_seconds; /* a benchmark's time budget: fewer rounds and launches when one is slow */
    bool quiet;         /* no progress on stderr */
    uint64_t seed;
} kc_bench_opts;

/* The reference kernel and the calibration kernels, compiled from the
 * sources built into kc, loaded into ctx. */
typedef struct kc_bench_ref kc_bench_ref;

/* Compiles kc's calibration kernels (bench/calibrate/, the .kc files, built
 * into kc) for the device's target and loads them; or, when bundle is not
 * NULL, loads them from that bundle (built by a kc that has the target's
 * compiler, for a kc that does not). */
kc_bench_ref *kc_bench_ref_open(kcrt_context *ctx, const char *bundle, char *err, size_t errlen);
void kc_bench_ref_close(kc_bench_ref *ref);
const char *kc_bench_ref_hash(const kc_bench_ref *ref);
const char *kc_bench_ref_kernel(const kc_bench_ref *ref);

/* Measures kernel k (from kcrt_kernel_get) at res->shape, interleaved with
 * the reference kernel at ref_shape ("n=…,iters=…", a baseline's), or when
 * NULL at the size whose launch lasts about as long as the kernel's: fills
 * res (variant, ref_shape, times, ratios, summaries, bytes, flops); on
 * failure res->error. Results live in arena a. */
void kc_bench_measure(kc_bench_ref *ref, kcrt_kernel *k, const char *ref_shape, const kc_bench_opts *o,
                      kc_arena *a, kc_bench_result *res);

/* --against: measures kernel k at res->shape interleaved with base, the
 * same kernel from the baseline bundle, at the same shape (its own
 * buffers, the same inputs): res->ref holds base's times, res->ratios
 * k's against them, res->ref_variant base's variant. */
void kc_bench_measure_against(kcrt_kernel *k, kcrt_kernel *base, const kc_bench_opts *o, kc_arena *a,
                              kc_bench_result *res);

/* --calibrate: the device's copy bandwidth and FMA throughput with kc's
 * calibration kernels, the best variant of each. */
bool kc_bench_calibrate(kc_bench_ref *ref, bool quiet, kc_bench_peaks *out, char *err, size_t errlen);

/* The calibration kernels' sources, generated from bench/calibrate/ at build time. */
typedef struct kc_bench_source {
    const char *name; /* "ref.kc" */
    const char *text;
} kc_bench_source;
extern const kc_bench_source kc_bench_sources[]; /* ends with {NULL, NULL} */

#endif
