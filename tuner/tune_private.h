/*
 * tune_private.h — what the tuner's files share and its users need not
 * see: a hash set of points, and the repair of truncated JSON.
 */
#ifndef KC_TUNE_PRIVATE_H
#define KC_TUNE_PRIVATE_H

#include "kc_support.h"
#include "kc_tune.h"

/* ---- pset: points (ndims ints) to doubles, in an arena ------------------ */

/* Open addressing with linear probing; grows at half load. Entries are
 * numbered 0, 1, … in insertion order and never removed. */
typedef struct kc_tune_pset {
    kc_arena *arena;
    int ndims;
    int *points;  /* len * ndims */
    double *vals; /* len */
    long len, cap;
    long *slots; /* entry + 1, or 0 for empty */
    long nslots; /* a power of two */
} kc_tune_pset;

void kc_tune_pset_init(kc_tune_pset *s, kc_arena *a, int ndims);
long kc_tune_pset_find(const kc_tune_pset *s, const int *point); /* entry or -1 */
/* Adds point (which must be absent) with val; returns its entry. */
long kc_tune_pset_add(kc_tune_pset *s, const int *point, double val);

/* ---- JSON repair ---------------------------------------------------------- */

typedef struct kc_tune_repair {
    long dropped; /* bytes cut from the end */
    int closers;  /* brackets appended */
} kc_tune_repair;

/* Makes a JSON text that an interrupted writer left unfinished whole
 * again: cuts it back to the last point where a value was complete (so no
 * half-written number or key survives), drops a trailing comma, and
 * appends the missing closing brackets. A complete text is left alone.
 * Returns what it did. */
kc_tune_repair kc_tune_json_repair(kc_buf *text);

/* ---- time ------------------------------------------------------------------ */

/* Seconds on the monotonic clock, for budgets and reports. */
double kc_tune_clock(void);

/* ---- errors --------------------------------------------------------------- */

/* Writes the message to err (when there is one) and returns -1. */
int kc_tune_fail(char *err, size_t errlen, const char *fmt, ...) KC_PRINTF(3, 4);

/* ---- the default strategy --------------------------------------------------- */

/* The name of the strategy that "default" stands for in this ctx. */
const char *kc_tune_default_choice(kc_tune_ctx *ctx, const kc_tune_options *opt);

#endif
