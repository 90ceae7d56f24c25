/*
 * kc_cache.h — the tuning cache: every measurement kc tune ever made.
 *
 * One SQLite file, `$XDG_CACHE_HOME/kc/tuning.db` (~/.cache/kc/tuning.db)
 * unless told otherwise, in WAL mode. Each result is committed the moment
 * it is measured, so an interrupted tune (Ctrl-C, kill -9, power loss)
 * loses at most the measurement in flight and the next run resumes; a
 * configuration already measured is never measured again.
 *
 * A result is keyed by what makes it valid: the kernel's source hash, the
 * compiler version, the device (vendor, device id, name, driver version,
 * backend), the problem shape and the variant. A schema version and
 * migrations keep old caches readable by newer kc.
 */
#ifndef KC_CACHE_H
#define KC_CACHE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kc_support.h"

#define KC_CACHE_SCHEMA_VERSION 1

typedef struct kc_cache kc_cache;

/* What happened to one configuration. Only KC_RESULT_OK has a time. */
typedef enum {
    KC_RESULT_OK,
    KC_RESULT_COMPILE_FAILED, /* kc or the driver could not build the variant */
    KC_RESULT_VERIFY_FAILED,  /* its output differs from the default variant's */
    KC_RESULT_TIMEOUT,        /* it ran past the time limit */
    KC_RESULT_REFUSED,        /* the device's limits rule it out */
    KC_RESULT_COUNT
} kc_result_status;

const char *kc_result_status_name(kc_result_status s); /* "ok", "compile_failed", … */
bool kc_result_status_parse(const char *name, kc_result_status *out);

typedef struct kc_cache_key {
    const char *kernel;
    const char *source_hash;
    const char *compiler;   /* kc version, + KC_CACHE_COLD_MARK when timed cold */
    const char *device_key; /* as libkcrt writes it */
    const char *device;     /* the device's name, for people */
    const char *backend;    /* "vulkan", "hip", "cuda" */
    const char *shape;      /* "n=48000,m=3" */
    const char *variant;    /* "WG=64,TM=4", declaration order */
} kc_cache_key;

/* After the version in `compiler`: the launches were timed with cold caches
 * (kc tune --cold), a different measurement from back-to-back launches, so
 * the two never meet in one comparison. */
#define KC_CACHE_COLD_MARK "+cold"

typedef struct kc_cache_result {
    kc_result_status status;
    double time_ns;  /* median per launch */
    int samples;     /* launches timed */
    double spread;   /* relative spread of the samples (IQR / median) */
    const char *detail; /* why it failed, in words; may be NULL */
} kc_cache_result;

/* The default path: $XDG_CACHE_HOME/kc/tuning.db or ~/.cache/kc/tuning.db
 * (the directory is created). NULL with err when there is no home. */
char *kc_cache_default_path(char *err, size_t errlen);
/* Opens (creating or migrating) a cache; NULL with a message. */
kc_cache *kc_cache_open(const char *path, char *err, size_t errlen);
void kc_cache_close(kc_cache *c);
/* `kc cache check`: PRAGMA integrity_check in words, a line per problem;
 * true when the cache is whole. Opens the file read-only, changes nothing. */
bool kc_cache_check(const char *path, kc_buf *report);

typedef struct kc_cache_repair_report {
    long results, spaces; /* rows kept */
    long skips;           /* damaged places the scan had to seek past */
    char aside[4200];     /* where the damaged file now is */
} kc_cache_repair_report;
/* `kc cache repair`: moves the damaged cache (and its -wal, -shm) aside to
 * PATH.damaged-TIME and writes a new cache at path with every row SQLite
 * can still read from it (none from a truncated file). Loses nothing that
 * was readable and deletes nothing. */
bool kc_cache_repair(const char *path, kc_cache_repair_report *out, char *err, size_t errlen);

/* The SQLite handle, for the cache's own files. */
struct sqlite3 *kc_cache_db(kc_cache *c);

/* Looks a configuration up; false when it was never measured. */
bool kc_cache_get(kc_cache *c, const kc_cache_key *k, kc_cache_result *out, kc_arena *a);
/* Records a result, committed before this returns. */
bool kc_cache_put(kc_cache *c, const kc_cache_key *k, const kc_cache_result *r, char *err, size_t errlen);
/* Records the search space of a kernel version ("WG=64,128;TM=1,2,4"),
 * for exporting in Kernel Tuner's format. */
bool kc_cache_put_space(kc_cache *c, const char *kernel, const char *source_hash, const char *space, char *err,
                        size_t errlen);

/* Filters for listing, exporting and clearing; NULL fields match all. */
typedef struct kc_cache_filter {
    const char *kernel, *device_key, *shape, *backend;
} kc_cache_filter;

/* `kc cache list`: a table, or one JSON object per result with the keys
 * kernel, device, backend, shape, variant, status, time_ns. */
bool kc_cache_list(kc_cache *c, const kc_cache_filter *f, bool json, kc_buf *out);
/* Every result, as a JSON document that kc_cache_import reads back. */
bool kc_cache_export(kc_cache *c, const kc_cache_filter *f, const char *path, char *err, size_t errlen);
/* Merges another machine's export. For a configuration both have, the
 * better-supported result wins: a time over a failure only when it has at
 * least as many samples; otherwise more samples, then a smaller spread.
 * Counts what was added, replaced and kept. */
bool kc_cache_import(kc_cache *c, const char *path, long *added, long *replaced, long *kept, char *err,
                     size_t errlen);
/* Deletes results (all, or matching the filter); returns how many. */
long kc_cache_clear(kc_cache *c, const kc_cache_filter *f, char *err, size_t errlen);
/* One kernel on one device for one shape in Kernel Tuner's cache-file
 * format, which `kc tune --replay` reads. */
bool kc_cache_export_kernel_tuner(kc_cache *c, const kc_cache_filter *f, const char *path, char *err,
                                  size_t errlen);

/* Every result of a kernel on a device for a shape, fastest first: the
 * tuner's view of what is known. fn returns false to stop. */
typedef bool (*kc_cache_each_fn)(void *user, const kc_cache_key *k, const kc_cache_result *r);
bool kc_cache_each(kc_cache *c, const kc_cache_filter *f, kc_cache_each_fn fn, void *user);

/* `kc cache defaults`: for each kernel on each device (its newest source
 * and kc version, warm timings), the variant closest to every measured
 * shape's winner, a candidate for the kernel's kc.yaml default on that
 * kind of device. */
typedef struct kc_cache_proposal {
    const char *kernel, *device_key, *device, *backend, *source_hash;
    int shapes;           /* shapes compared */
    int shapes_left_out;  /* shapes too few variants were measured at */
    const char *left_out; /* their names, "; " between; NULL when none */
    int candidates;       /* variants that ran correctly at every compared shape */
    const char *variant;  /* the proposal ("WG=64,TM=4"); NULL when no candidate */
    double mean_slowdown; /* geometric mean over the shapes of time / the shape's winner */
    double worst_slowdown;
    const char *worst_shape;
    const char *runner_up; /* the next candidate, or NULL */
    double runner_up_mean;
    /* the variant the caller named for this kernel and device (its current
     * default), scored the same way over the compared shapes it ran at */
    const char *current;  /* NULL when the caller named none */
    double current_mean;  /* NAN when it ran at none of them */
    double current_worst;
    int current_missing;  /* compared shapes it did not run correctly at */
} kc_cache_proposal;
/* The variant to score beside the proposal for a kernel on a device (its
 * current default), or NULL for none. */
typedef const char *(*kc_cache_current_fn)(void *user, const char *kernel, const char *device_key);
/* One proposal per kernel and device matching the filter (its shape is not
 * used), in the arena; current (may be NULL) names a variant to score
 * beside each. Returns how many, or -1 when the query failed. */
int kc_cache_propose_defaults(kc_cache *c, const kc_cache_filter *f, kc_cache_current_fn current, void *user,
                              kc_cache_proposal **out, kc_arena *a);

#endif
