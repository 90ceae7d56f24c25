/*
 * rt_private.h — what libkcrt's files share and nobody else sees: the
 * context, bundle, kernel and buffer structs, the backend ops table, and
 * small helpers (an arena, messages, logging).
 *
 * The split of work: the common layer (context.c, bundle_read.c, bundle.c, choose.c,
 * launch.c, buffer.c) reads bundles, checks arguments, chooses variants and
 * packs arguments; a backend (vulkan/, hip/, cuda/) turns a binary into a
 * module and runs it. A backend is a struct of function pointers
 * (STYLE.md §3), chosen by name in context.c. What the HIP and CUDA
 * backends share (loading a library, kernel-argument blocks, PCI ids, and
 * running buffers, launches and timing over a table of driver calls) is in
 * rt_native.h.
 */
#ifndef KC_RT_PRIVATE_H
#define KC_RT_PRIVATE_H

#include <stdarg.h>
#include <stdio.h>

#include "kc/kcrt.h"
#include "kcrt_internal.h"

#if defined(__MINGW32__) && !defined(__clang__)
/* mingw's gcc reads "printf" as msvcrt's (no %zu); kc uses mingw's C99 stdio */
#define RT_PRINTF(f, a) __attribute__((format(gnu_printf, f, a)))
#elif defined(__GNUC__)
#define RT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define RT_PRINTF(f, a)
#endif

#define RT_COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define RT_MSG 2048 /* bytes of one error message */

/* ---- arena: a bundle's memory, freed at once -------------------------------- */

typedef struct rt_chunk rt_chunk;
typedef struct rt_arena {
    rt_chunk *head;
} rt_arena;

void *rt_alloc(rt_arena *a, size_t size); /* zeroed; NULL when out of memory */
char *rt_strdup(rt_arena *a, const char *s);
void rt_arena_free(rt_arena *a);

/* ---- the backend interface ----------------------------------------------------- */

/* Where one argument goes, from variants.args: a value at a byte offset of
 * the packed arguments ("offset:size"), or a buffer binding ("@binding"). A
 * backend that passes buffers as pointers (HIP, CUDA) has them as values of
 * size 8 and writes the pointer itself. A half scalar is 4 bytes (a float,
 * SPIR-V push constants) or 2 (its IEEE bits, kernel arguments). */
typedef struct rt_slot {
    bool is_binding;
    uint32_t binding;
    uint32_t offset, size;
} rt_slot;

/* Feature bits a variant needs (variants.features and the binary's own
 * declarations). */
enum {
    RT_F_FLOAT16 = 1u << 0,
    RT_F_INT64 = 1u << 1,
    RT_F_STORAGE16 = 1u << 2,
    RT_F_SUBGROUPS = 1u << 3,
    RT_F_FLOAT_ATOMICS = 1u << 4,
    RT_F_SG_ARITH = 1u << 5,
    RT_F_SG_SHUFFLE = 1u << 6,
    RT_F_SG_BALLOT = 1u << 7,
};

/* Everything a backend needs to make a module of one variant. */
typedef struct rt_module_desc {
    const char *kernel;  /* the entry point */
    const char *variant; /* for messages */
    const char *target;
    const void *binary;
    size_t size;
    uint32_t wg[3];
    uint32_t shared_bytes;
    int nparams;
    const rt_slot *slots; /* per parameter */
    int nbindings;        /* storage buffers, with the spilled scalars' one */
    uint32_t args_size;
    bool spilled;
    unsigned features;
    uint32_t spirv_minor;
} rt_module_desc;

/* One launch, checked and packed by the common layer. */
typedef struct rt_launch_desc {
    uint32_t grid[3];
    int nparams;
    void *const *buffers; /* per parameter: the backend's buffer, NULL for a scalar */
    const bool *writes;   /* per parameter: the kernel may write this buffer */
    const void *args;     /* packed scalars, args_size bytes */
    uint32_t args_size;
} rt_launch_desc;

typedef struct rt_backend {
    const char *name;
    /* Lists devices (out may be NULL to count). */
    kcrt_status (*devices)(kcrt_device_info *out, int max, int *count, char *err, size_t errlen);
    /* Opens device `index` for ctx; fills ctx->info. */
    kcrt_status (*open)(kcrt_context *ctx, int index, void **dev);
    void (*close)(void *dev);
    /* Does this device run binaries of this variants.target? 0: no; else a
     * preference, higher is better: of variants with the same tunables for
     * several targets, only the most preferred is used (CUDA: the highest
     * sm_NN that is not newer than the device). */
    int (*loads)(void *dev, const char *target);
    /* Can the device run the variant (features, limits)? No work, no message
     * unless why is given. */
    bool (*check)(void *dev, const rt_module_desc *m, char *why, size_t whylen);
    kcrt_status (*module_create)(void *dev, const rt_module_desc *m, void **module);
    void (*module_free)(void *dev, void *module);
    kcrt_status (*buffer_create)(void *dev, size_t bytes, void **buf);
    /* the host's memory (kcrt_buffer_wrap); buffer_free forgets it */
    kcrt_status (*buffer_wrap)(void *dev, void *native, size_t bytes, void **buf);
    /* work goes on the host's stream from now on; NULL: the device's own */
    kcrt_status (*set_stream)(void *dev, void *stream);
    /* the buffer's own handle (a device pointer, a VkBuffer) and the
     * device's number in the backend's API */
    kcrt_status (*buffer_native)(void *dev, void *buf, void **native, int *device);
    /* Vulkan: its objects (NULL elsewhere) */
    kcrt_status (*vulkan_device)(void *dev, kcrt_vulkan_device *out);
    void (*buffer_free)(void *dev, void *buf);
    kcrt_status (*buffer_write)(void *dev, void *buf, size_t offset, const void *src, size_t bytes);
    kcrt_status (*buffer_read)(void *dev, void *buf, size_t offset, void *dst, size_t bytes);
    /* queued with the launches; the ranges are checked (kcrt_buffer_copy) */
    kcrt_status (*buffer_copy)(void *dev, void *dst, size_t dst_offset, void *src, size_t src_offset, size_t bytes);
    kcrt_status (*launch)(void *dev, void *module, const rt_launch_desc *l);
    kcrt_status (*finish)(void *dev);
    /* flush NULL: launches back to back; else before each launch (outside
     * its timing) the first flush_bytes of that buffer are written */
    kcrt_status (*time)(void *dev, void *module, const rt_launch_desc *l, int repeats, void *flush,
                        size_t flush_bytes, double *ns_each);
    void (*stats)(void *dev, kcrt_stats *out);
} rt_backend;

extern const rt_backend rt_vulkan_backend;
extern const rt_backend rt_hip_backend;
extern const rt_backend rt_cuda_backend;

/* ---- the objects ----------------------------------------------------------------- */

/*
 * Handles outlive kcrt_buffer_free and kcrt_bundle_free until kcrt_close,
 * marked RT_FREED, so that a use after free (a launch after its bundle was
 * freed, a buffer freed twice) is reported in words instead of crashing.
 * Freed buffer shells are reused by kcrt_buffer_create, which keeps memory
 * flat in a create/free loop: a stale pointer may then reach a live buffer
 * of the same context — memory-safe, but not detected. A handle used after
 * kcrt_close is beyond help.
 */
enum {
    RT_LIVE_BUFFER = 0x6b636275, /* "kcbu" */
    RT_LIVE_BUNDLE = 0x6b636262,
    RT_LIVE_KERNEL = 0x6b63626b,
    RT_FREED = 0x66726565,
};

struct kcrt_context {
    kcrt_status failed; /* KCRT_OK, or why kcrt_open failed */
    char err[RT_MSG];
    bool debug; /* KCRT_LOG=debug */
    const rt_backend *be;
    void *dev;
    kcrt_device_info info;
    kcrt_bundle *bundles; /* what kcrt_close frees */
    kcrt_buffer *buffers;
    /* freed handles, kept until kcrt_close (see RT_FREED) */
    kcrt_buffer *dead_buffers;
    kcrt_bundle *dead_bundles;
    kcrt_kernel *dead_kernels;
    /* Auto choice on HIP or CUDA: the Vulkan device to move to when the
     * first bundle has nothing for this backend but SPIR-V (its index among
     * Vulkan's devices, and in the whole list); -1 when there is none or the
     * first bundle has decided. See rt_settle_backend. */
    int fallback, fallback_index;
    /* checked mode (checked.c): the record every checked launch shares,
     * and the kernels its KC_CHECK_KERNEL word names */
    void *check_record;
    struct rt_checked_kernel *checked;
    int nchecked, capchecked;
    /* kcrt_time_launch_cold's scratch buffer (the backend's), and its size */
    void *flush;
    size_t flush_bytes;
    struct rt_record *record; /* KCRT_RECORD_SHAPES (record.c), or NULL */
};

struct kcrt_buffer {
    uint32_t magic; /* RT_LIVE_BUFFER or RT_FREED */
    kcrt_context *ctx;
    size_t size;
    void *impl;
    kcrt_buffer *prev, *next;
};

typedef struct rt_variant {
    kcrt_variant_info *info;
    const void *binary;
    size_t size;
    int nbuffers;
    rt_slot *slots;
    int64_t *tvals; /* per tunable of the kernel, in order */
    unsigned features;
    uint32_t spirv_minor;    /* SPIR-V 1.x of a spirv binary */
    const char *args;        /* as stored: per parameter "offset:size" or "@binding" */
    const char *bad_feature; /* a feature this runtime does not know, or NULL */
    bool loads;              /* the backend runs this target */
    void *module;            /* created on first use, kept until the bundle goes */
} rt_variant;

typedef struct rt_tuned {
    bool this_device; /* else: same family */
    int64_t *shape;   /* per integer scalar of the kernel */
    double *logs;     /* the same, in log space */
    const char *shape_text, *variant_text;
    rt_variant *v;
    double time_ns;
} rt_tuned;

typedef struct rt_kernel {
    kcrt_kernel_info info;
    kcrt_param_info *params;
    kcrt_tunable_info *tunables;
    const char *source;   /* its file in the package */
    rt_variant *variants; /* parallel to info.variants */
    rt_variant *def;      /* the default variant for this backend, or NULL */
    rt_variant *type_def; /* kc.yaml's default for this device's type (meta default.TYPE.KERNEL), or NULL */
    const char *grid[3];      /* KC_GRID's three postfix expressions */
    const char *grid_text[3]; /* and the same for people ("cdiv(n, WG * TM)") */
    int nints;            /* integer scalars: the shape */
    int *ints;            /* their parameter indices */
    kcrt_tuned_row *rows; /* the tuned table's rows for it, every device's */
    int nrows;
    rt_tuned *tuned;      /* the rows that apply to the context's device */
    int ntuned;
    kcrt_kernel *handles; /* every handle given out */
    /* checked mode: hidden parameters after the kernel's own (0 if not
     * checked), its source files for reports, and its number in
     * ctx->checked plus one (0 until its first launch) */
    int nhidden;
    const char **check_files;
    int ncheck_files;
    int check_id;
} rt_kernel;

/* The device types a bundle may name a default for (meta
 * default.TYPE.KERNEL, from kc.yaml's defaults:), NULL-terminated. */
extern const char *const rt_device_types[];

struct kcrt_bundle {
    uint32_t magic; /* RT_LIVE_BUNDLE or RT_FREED */
    kcrt_context *ctx; /* NULL for kcrt_bundle_read's */
    char *path;
    rt_arena arena;
    rt_kernel *kernels;
    int nkernels;
    const char **meta; /* key, value, key, value, …, NULL */
    kcrt_bundle *prev, *next;
};

struct kcrt_kernel {
    uint32_t magic; /* RT_LIVE_KERNEL or RT_FREED; b stays valid either way */
    kcrt_bundle *b;
    rt_kernel *rk;
    rt_variant *fixed; /* kcrt_kernel_get_variant's, or NULL: choose per launch */
    bool owns_fixed;   /* kcrt_kernel_from_binary's: the variant lives in own */
    rt_arena own;
    /* the last choice, so that repeated launches of a shape do not choose again */
    bool memo_valid;
    int64_t *memo_shape;
    rt_variant *memo_v;
    char memo_why[256];
    kcrt_kernel *next;
};

/* checked.c — `kc build --checked` kernels (support/kc_checked.h): the
 * record buffer and this kernel's number for its hidden arguments; the
 * report after work completes (KCRT_ERROR_OUT_OF_BOUNDS, and a line on
 * stderr); freeing at kcrt_close. */
kcrt_status rt_checked_launch(kcrt_context *ctx, rt_kernel *rk, uint32_t *kernel_id, void **record);
kcrt_status rt_checked_report(kcrt_context *ctx);
void rt_checked_free(kcrt_context *ctx);
/* frees kcrt_time_launch_cold's scratch buffer (launch.c) */
void rt_flush_free(kcrt_context *ctx);

/* record.c — KCRT_RECORD_SHAPES: opening the file at kcrt_open (an error
 * when it cannot be appended to), a kernel's shape written the first time
 * a variant is chosen for it, closing at kcrt_close. */
typedef struct rt_record rt_record;
kcrt_status rt_record_open(kcrt_context *ctx);
void rt_record_shape(kcrt_context *ctx, const char *kernel, const char *shape);
void rt_record_close(kcrt_context *ctx);

/* KCRT_OK, or an error saying fn was given a freed buffer (RT_FREED). */
kcrt_status rt_buffer_usable(const kcrt_buffer *b, const char *fn);

/* ---- helpers ----------------------------------------------------------------------- */

/* Freed buffers' memory is kept for later buffers ("spares", docs/runtime.md).
 * A buffer's memory comes in size classes, multiples of 256 bytes up to 4
 * KiB and then four an octave (at most 25% over what was asked), so that
 * freed memory fits later buffers of about its size: a model's temporaries
 * come back with the same shapes, or nearly, on every call. */
size_t rt_size_class(size_t bytes);
/* What the spares may hold: KCRT_BUFFER_SPARE_MB, else an eighth of the
 * device's memory, between 64 MiB and 1 GiB. */
uint64_t rt_spare_limit(uint64_t device_bytes);

/* Leaves a message in ctx and returns s. */
kcrt_status rt_fail(kcrt_context *ctx, kcrt_status s, const char *fmt, ...) RT_PRINTF(3, 4);
/* Prints "kcrt: …" on stderr when KCRT_LOG=debug. */
void rt_log(const kcrt_context *ctx, const char *fmt, ...) RT_PRINTF(2, 3);
void rt_vlogf(const char *fmt, va_list ap);
bool rt_env_debug(void);
/* snprintf that never overflows and says whether it fitted */
bool rt_printf(char *dst, size_t len, const char *fmt, ...) RT_PRINTF(3, 4);
/* The postfix form written for people ("cdiv(n, WG * TM)"). */
void rt_infix(const char *postfix, char *out, size_t len);
/* A type by its spelling, KCRT_NTYPES when unknown. */
kcrt_type rt_type_from_name(const char *name);
size_t rt_type_bytes(kcrt_type t);
char rt_type_kind(kcrt_type t); /* 'b' 'i' 'u' 'f' 'h' */
const char *rt_type_name(kcrt_type t);
/* May a scalar of type t take `bytes` in an argument block (kc_lang.h's
 * scalar ABI: its kernel-argument or its push-constant size)? */
bool rt_scalar_slot_ok(kcrt_type t, size_t bytes);

/* bundle_read.c: reads and checks a whole bundle file into b (its path,
 * meta, kernels; every device's tuned rows), for no device; the message in
 * err on failure. */
kcrt_status rt_bundle_read(kcrt_bundle *b, const char *path, char *err, size_t errlen);

/* context.c: the device policy when a bundle is loaded. A context that
 * auto put on HIP or CUDA stays there unless its first bundle has nothing
 * for the backend but SPIR-V: then it moves to its fallback Vulkan device
 * (a failure there fails the context, as a failed kcrt_open). */
kcrt_status rt_settle_backend(kcrt_context *ctx, const kcrt_bundle *b);

/* choose.c: the variant of a launch, and variant strings */
rt_variant *rt_choose(kcrt_kernel *k, const int64_t *shape, const char **why);
kcrt_status rt_find_variant(kcrt_bundle *b, rt_kernel *rk, const char *tunables, rt_variant **out);
/* Makes the variant's module if there is none yet. */
kcrt_status rt_variant_module(kcrt_context *ctx, rt_kernel *rk, rt_variant *v);
void rt_variant_desc(const rt_kernel *rk, const rt_variant *v, rt_module_desc *m);
/* The limits every backend's `check` starts with: the variant's workgroup
 * (per dimension and in all) and shared memory against the device's;
 * false with why filled (when given) past one. */
bool rt_fits_device(const kcrt_device_info *info, const rt_module_desc *m, char *why, size_t whylen);

/* Tunable values of a variant string, in the kernel's order; unnamed ones
 * take their defaults. */
/* Fills a variant from a description (kcrt_kernel_from_binary), with the
 * checks a bundle row gets; memory from a. */
bool rt_variant_from_desc(const rt_kernel *k, rt_variant *v, const struct kcrt_binary_desc *d, rt_arena *a,
                          char *err, size_t errlen);
bool rt_variant_values(rt_arena *a, const rt_kernel *k, const char *text, int64_t *tv, char *err,
                       size_t errlen);
/* Parses "a=1,b=2" into names and values (names point into a copy owned by
 * the caller's arena); false on bad text. */
int rt_parse_assignments(rt_arena *a, const char *text, const char ***names, int64_t **values, char *err,
                         size_t errlen);

#endif
