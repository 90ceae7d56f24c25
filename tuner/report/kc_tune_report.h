/*
 * kc_tune_report.h — the picture of a tune: `kc tune … --report FILE.html`
 * (or FILE.svg) draws every measured configuration of each kernel, per
 * shape: time per variant with the best marked, and a heat map over two
 * tunables (each cell the best time over the other tunables).
 *
 * The tuner fills a kc_tune_report from the cache and hands it over; the
 * writer knows nothing of devices, bundles or SQLite. The HTML file is one
 * self-contained page (inline SVG and CSS, no script, no network); the SVG
 * file is the same charts stacked in one image.
 */
#ifndef KC_TUNE_REPORT_H
#define KC_TUNE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One measured configuration. status is the cache's word: "ok",
 * "compile_failed", "verify_failed", "timeout", "refused"; only "ok" has a
 * time. The report counts any other word, and an "ok" without a finite
 * positive time, as a failure of status "other". A point whose values are
 * not among the kernel's candidates is drawn in the time chart but in no
 * heat-map cell. */
typedef struct kc_tune_report_point {
    const int64_t *values; /* one per tunable, in the kernel's order */
    const char *variant;   /* "WG=64,TM=4" */
    const char *status;
    double time_ns;
} kc_tune_report_point;

typedef struct kc_tune_report_shape {
    const char *shape; /* "n=48000" */
    int npoints;
    const kc_tune_report_point *points;
    int best;          /* index into points of the winner, -1 if none; a
                          winner that is not an ok point is ignored, and
                          then the fastest ok point is marked */
    int default_point; /* index of the default variant, -1 if not measured */
} kc_tune_report_shape;

typedef struct kc_tune_report_kernel {
    const char *name;
    int ntunables;
    const char *const *tunables;   /* names, declaration order */
    const int *nvalues;            /* candidates per tunable */
    const int64_t *const *values;  /* the candidates */
    int nshapes;
    const kc_tune_report_shape *shapes;
} kc_tune_report_kernel;

typedef struct kc_tune_report {
    const char *title;   /* "rvc.kcb" */
    const char *device;  /* "llvmpipe (LLVM 15.0.6, 256 bits)" */
    const char *backend; /* "vulkan" */
    int nkernels;
    const kc_tune_report_kernel *kernels;
    /* The heat map's axes, by tunable name; NULL: the two tunables with
     * the most candidates (ties: declaration order; the first is x). With
     * one named, the other is the default among the rest. A kernel that
     * lacks a named axis gets its own default pair. A kernel with one
     * tunable gets a one-row map; one without tunables gets none. */
    const char *axis_x, *axis_y;
} kc_tune_report;

/* Writes the report as HTML (path ends in .html or .htm) or SVG (.svg),
 * atomically. false with a message in err (an unknown extension, an axis
 * no kernel has, both axes the same tunable, a file that cannot be
 * written); nothing is written then. The same report gives the same
 * bytes. */
bool kc_tune_report_write(const kc_tune_report *r, const char *path, char *err, size_t errlen);

#endif
