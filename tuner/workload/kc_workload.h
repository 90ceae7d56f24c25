/*
 * kc_workload.h — a kernel's launch at one shape, on the device, as kc run,
 * kc bench and kc tune build it: the names its integer expressions may use,
 * the elements each buffer needs, and the buffers, filled as kc.yaml's
 * init says (kcrt_fill) from a seed, never with zeros.
 *
 * What differs between the three stays with them: where scalar values come
 * from (the command line, a shape), what a buffer without a declared
 * extent means (kc run reads it from a file; the others refuse it), and
 * what is kept on the host (kc tune keeps the first contents to restore
 * and compare).
 */
#ifndef KC_WORKLOAD_H
#define KC_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kc/kcrt.h"

/* A float or half scalar that a shape does not give: not an identity (0,
 * 1), so that a kernel's arithmetic shows in its results. A bool that a
 * shape does not give is true (the branch with more work). */
#define KC_WORKLOAD_FLOAT_SCALAR 0.75f

/* The text a shape ("n=1000,m=64") gives name, copied to buf; NULL when
 * it gives none. */
const char *kc_workload_shape_value(const char *shape, const char *name, char *buf, size_t len);

/* Buffers larger than this are refused before anything is allocated. */
#define KC_WORKLOAD_MAX_BYTES (UINT64_C(1) << 40)

/* The names a launch's integer expressions (extents, grids) may use: the
 * kernel's integer and bool scalars from args, then the tunables of
 * `variant` ("WG=64,TM=4"; NULL for none) that the kernel declares. How
 * many, at most max. */
int kc_workload_names(const kcrt_kernel_info *ki, const kcrt_arg *args, const char *variant, const char **names,
                      int64_t *values, int max);

/* The elements buffer parameter p needs with those names: -1 when it
 * declares no extent. False, with err, when the extent cannot be
 * evaluated, is negative, or is more than KC_WORKLOAD_MAX_BYTES. */
bool kc_workload_elements(const kcrt_param_info *p, const char *const *names, const int64_t *values, int nnames,
                          int64_t *elements, char *err, size_t errlen);

/* A device buffer of n elements of p's type, filled by kcrt_fill from
 * *seed (which it advances). *data gets the host copy when data is not
 * NULL (the caller frees it). False, with err, when host or device memory
 * runs out. */
bool kc_workload_buffer(kcrt_context *ctx, const kcrt_param_info *p, int64_t n, uint64_t *seed, kcrt_buffer **buf,
                        void **data, char *err, size_t errlen);

/* The work of one launch at shape ("cin=256,t_in=1000,..."): kc.yaml's
 * flops: plus bytes: there, or the product of the shape's values where it
 * gives neither. */
double kc_workload_shape_work(const kcrt_kernel_info *ki, const char *shape);
/* The index of the kernel's cheapest kc.yaml shape by that measure whose
 * work is at least min_work, or of its costliest when none is (0 when it
 * has no shapes): `kc tune --smallest` (min_work 0) and `kc bench
 * --smallest` (KC_WORKLOAD_BENCH_MIN_WORK). */
int kc_workload_smallest_shape(const kcrt_kernel_info *ki, double min_work);
/* kc bench --smallest's floor: 1 Mi of bytes + flops. A smaller launch is
 * mostly its dispatch on lavapipe (~100 us, when 1 MB moves in ~150 us),
 * so a slower kernel would hardly show in its time (softmax over one row
 * of 1,026 read four times the work at +14%). */
#define KC_WORKLOAD_BENCH_MIN_WORK 1048576.0

/* The lines of a KCRT_RECORD_SHAPES file (runtime/record.c): each a kernel
 * and a shape ("n=1000,m=64") as an application launched them, and the
 * line they are on; in the file's order, repeats included. */
typedef struct kc_recorded_shape {
    char *kernel, *shape;
    int line;
} kc_recorded_shape;

typedef struct kc_recorded {
    kc_recorded_shape *lines;
    int n;
} kc_recorded;

/* Reads path; false with err saying where and what (a file that cannot be
 * read, a line that is not "KERNEL SHAPE"). Free with
 * kc_workload_recorded_free. */
bool kc_workload_read_recorded(const char *path, kc_recorded *out, char *err, size_t errlen);
void kc_workload_recorded_free(kc_recorded *r);

#endif
