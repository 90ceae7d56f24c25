/*
 * kcrt_internal.h — libkcrt's interface for kc's own tools and tests, on
 * top of the public kc/kcrt.h: counters that show what the runtime did
 * (submissions, pipelines, descriptor sets), the validation layer's
 * message count, and the bundle's variant choice in detail.
 *
 * Not installed and not part of the contract: it may change with kc.
 * Only the static library (kcrt_static) is meant to be used with it; the
 * shared libkcrt.so exports these names too (kcrt_ prefix) so that the
 * same tests run against either.
 */
#ifndef KC_KCRT_INTERNAL_H
#define KC_KCRT_INTERNAL_H

#include "kc/kcrt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a context's backend has done since kcrt_open. */
typedef struct kcrt_stats {
    uint64_t launches;                  /* kcrt_launch calls that queued work */
    uint64_t dispatches;                /* dispatches recorded (timed ones included) */
    uint64_t submissions;               /* queue submissions of launches (vkQueueSubmit of a batch) */
    uint64_t transfer_submissions;      /* submissions that only copy (staging) */
    uint64_t waits;                     /* host waits for the device (fences) */
    uint64_t barriers;                  /* compute-to-compute barriers between dependent dispatches */
    uint64_t pipelines_created;         /* modules made: once per variant and context */
    uint64_t descriptor_sets_allocated; /* fresh sets (not reused from the batch's cache) */
    uint64_t descriptor_sets_reused;
    uint64_t descriptor_pools_created;
    uint64_t command_buffers_allocated;
    uint64_t staging_bytes; /* the staging buffer's size (0 when not needed) */
    uint64_t staging_resizes;
    uint64_t buffers_live; /* kcrt_buffer handles not freed (what a leak check counts) */
    uint64_t bundles_live; /* bundles not freed */
    uint64_t buffer_allocations; /* device memory allocated for buffers (not taken from the spares) */
    uint64_t buffers_reused;     /* buffers given memory a freed buffer held */
    uint64_t spare_bytes;        /* memory freed buffers hold for reuse, in use by queued work or idle */
} kcrt_stats;

void kcrt_stats_get(const kcrt_context *ctx, kcrt_stats *out);

/* Messages the Vulkan validation layer (KCRT_VALIDATION=1) reported, in
 * this process, over every context; and the last one's text. Warnings and
 * errors count; information does not. */
uint64_t kcrt_validation_message_count(void);
const char *kcrt_validation_last_message(void); /* "" when none; static storage */
/* Whether the validation layer is on in this context (KCRT_VALIDATION=1 and the layer found). */
bool kcrt_validation_enabled(const kcrt_context *ctx);

/* For the test of the counting itself: makes one invalid Vulkan call that
 * the layer reports (a buffer with no usage), and zeroes the count. The
 * self-test returns false when the layer is off. */
bool kcrt_validation_selftest(kcrt_context *ctx);
void kcrt_validation_reset(void);

/* Environment variables for tests, read when a context opens:
 *   KCRT_VULKAN_STAGING=1   buffers in device memory with staging copies,
 *                           as on a discrete GPU, even where memory is unified
 *   KCRT_VULKAN_PRETEND=…   a device with less than it has, to test refusals:
 *                           "no-float16,no-int64,no-storage16,no-subgroups,
 *                           no-float-atomics,push=N,texels=N" (N bytes of push
 *                           constants; N texels a texel buffer view holds) */

/* Launches recorded but not yet submitted, in ctx. */
int kcrt_pending_launches(const kcrt_context *ctx);

/* Fills n elements of a buffer for parameter p as its init says (uniform
 * in [-1, 1) by default; normal, positive, ones, index), from *seed, which
 * advances: the same seed gives the same contents. */
void kcrt_fill(const kcrt_param_info *p, void *buffer, size_t n, uint64_t *seed);

/* A variant compiled outside the bundle, for kc tune: the same fields as
 * a row of the bundle's variants table (support/kc_bundle_schema.h). */
typedef struct kcrt_binary_desc {
    const char *tunables; /* "WG=64,TM=4" */
    const char *target;   /* "spirv", "gfx1100", "sm_90" */
    const void *binary;
    size_t size;
    uint32_t wg[3];
    const char *args;     /* per parameter "offset:size" or "@binding" */
    uint32_t args_size;
    bool spilled;
    uint32_t shared_bytes;
    const char *features; /* "float16,subgroups,…" */
} kcrt_binary_desc;

/* A handle that launches exactly that variant of the bundle's kernel
 * `name` (whose signature it shares); the binary is copied and checked as
 * a bundle's would be, and its pipeline is made now, so that timing does
 * not pay for it and a driver that refuses it says so here. The variant is
 * not added to the bundle's choice. */
kcrt_status kcrt_kernel_from_binary(kcrt_bundle *b, const char *name, const kcrt_binary_desc *d, kcrt_kernel **out);
/* Frees such a handle, its pipeline and its copy of the binary (a tune
 * tries hundreds of variants); other handles are not freed this way. */
void kcrt_kernel_release(kcrt_kernel *k);

/* A bundle read and checked as kcrt_bundle_load reads it, for no device:
 * kc info, kc export and kc tune read bundles through this and nothing
 * else. kcrt_bundle_kernel_count, kcrt_bundle_kernel_info and
 * kcrt_bundle_meta work on it, kcrt_bundle_free frees it; it launches
 * nothing (kcrt_kernel_get refuses it). The message in err on failure. */
kcrt_status kcrt_bundle_read(const char *path, kcrt_bundle **out, char *err, size_t errlen);

/* One row of the bundle's tuned table, whichever device measured it. */
typedef struct kcrt_tuned_row {
    const char *device, *family, *backend; /* the device's key and family, the backend */
    const char *shape, *variant;           /* "n=48000", "WG=64,TM=4" */
    double time_ns;
    int row; /* in the table, from 1 */
} kcrt_tuned_row;

/* Kernel i's file in its package. */
const char *kcrt_bundle_kernel_source(const kcrt_bundle *b, int kernel);
/* Kernel i's tuned rows, every device's, in the table's order. */
int kcrt_bundle_tuned_rows(const kcrt_bundle *b, int kernel, const kcrt_tuned_row **rows);
/* The binary of variant j (as in kcrt_kernel_info.variants) of kernel i,
 * and where each argument goes (variants.args: per parameter
 * "offset:size" or "@binding"); NULL out of range. */
const void *kcrt_bundle_variant_binary(const kcrt_bundle *b, int kernel, int variant, size_t *size,
                                       const char **args);

#ifdef __cplusplus
}
#endif

#endif
