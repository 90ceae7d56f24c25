/*
 * kcrt.h — libkcrt, kc's host runtime: load a bundle (.kcb), pick a
 * device, launch kernels. The contract of DESIGN.md §6.
 *
 * The first part of this header is the contract itself: those names and
 * signatures are fixed. The second part holds ADDITIONS (marked so): device
 * enumeration, device keys, timed launches and bundle introspection, which
 * kc's own tools (kc devices, kc run, kc tune, kc bench) use and which a host
 * application may use too.
 *
 * Link: -lkcrt. libkcrt itself needs only libc, libm and SQLite; Vulkan,
 * HIP and CUDA are loaded at run time with dlopen ("libvulkan.so.1",
 * "libamdhip64.so", "libcuda.so.1"), so a program linked with it starts
 * anywhere and kcrt_open says clearly what is missing.
 *
 * Errors: every function that can fail returns a kcrt_status; the words go
 * to the context, read them with kcrt_error(ctx). Nothing prints unless
 * KCRT_LOG=debug is set, and nothing exits the process.
 *
 * Threads: a context, and every bundle, kernel and buffer made from it,
 * must be used by one thread at a time (use one context per thread, or a
 * lock around a shared one). Different contexts are independent and may be
 * used from different threads at once.
 *
 * Environment:
 *   KCRT_BACKEND   "auto" | "vulkan" | "hip" | "cuda": overrides
 *                  kcrt_options.backend ("cuda" is an ADDITION)
 *   KCRT_DEVICE    a device index (see kcrt_devices), or a part of a device
 *                  name ("llvmpipe"): overrides kcrt_options.device
 *   KCRT_LOG       "debug": say on stderr which backend, device and variant
 *                  were chosen and why
 *   KCRT_VALIDATION  "1": enable the Vulkan validation layer (synchronization
 *                  validation included) and count its messages (kc's tests
 *                  run with it; see kcrt_internal.h)
 *   KCRT_VULKAN_LIBRARY  the Vulkan loader to dlopen (default libvulkan.so.1)
 *   KCRT_HIP_LIBRARY     the HIP runtime to dlopen (default: libamdhip64.so,
 *                  then .so.6, .so.5, /opt/rocm/lib/libamdhip64.so)
 *   KCRT_CUDA_LIBRARY    the CUDA driver to dlopen (default libcuda.so.1)
 *   KCRT_RECORD_SHAPES   a file: each kernel and shape launched is appended
 *                  once ("conv1d cin=256,..."), for `kc tune BUNDLE
 *                  --shapes-from FILE` (an ADDITION; kcrt_open fails with
 *                  KCRT_ERROR_IO when it cannot append to the file)
 */
#ifndef KC_KCRT_H
#define KC_KCRT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================
 * The contract (DESIGN.md §6)
 * ====================================================================== */

typedef enum {
    KCRT_OK = 0,
    KCRT_ERROR_BAD_ARGUMENT,  /* a NULL handle, a bad option or string, or launch arguments
                                 that do not fit the kernel (count, kind, type, size, grid) */
    KCRT_ERROR_NO_BACKEND,    /* the backend is unknown, or its library cannot be loaded */
    KCRT_ERROR_NO_DEVICE,     /* no device, or not the one asked for */
    KCRT_ERROR_IO,            /* a file cannot be opened or read */
    KCRT_ERROR_BAD_BUNDLE,    /* not a kc bundle, damaged, or of a newer format */
    KCRT_ERROR_NO_KERNEL,     /* the bundle has no kernel of that name */
    KCRT_ERROR_NO_VARIANT,    /* no such variant, or none for this backend */
    KCRT_ERROR_UNSUPPORTED,   /* the device lacks a feature or a limit the variant needs */
    KCRT_ERROR_OUT_OF_MEMORY, /* host or device memory */
    KCRT_ERROR_DEVICE_ERROR,  /* the backend's API failed (the message names the call and its result) */
    KCRT_ERROR_OUT_OF_BOUNDS, /* ADDITION: a kernel of a `kc build --checked` bundle indexed outside an
                                 array; kcrt_finish or kcrt_buffer_read says which, where, and the index */
} kcrt_status;

typedef struct kcrt_context kcrt_context; /* opaque, like every handle */
typedef struct kcrt_bundle kcrt_bundle;
typedef struct kcrt_kernel kcrt_kernel;
typedef struct kcrt_buffer kcrt_buffer;
typedef struct {
    const char *backend; /* "auto" | "vulkan" | "hip" | "cuda" (ADDITION); NULL = "auto" */
    int device;          /* -1 = best */
} kcrt_options;
typedef struct kcrt_arg kcrt_arg; /* built with the macros below */

/* Opens a context on one device. opts may be NULL (auto, best device).
 * On failure *ctx is still set, to a context that only holds the error:
 * kcrt_error(*ctx) says what went wrong, every other call on it fails with
 * the same status, and kcrt_close frees it. (*ctx is NULL only when even
 * that could not be allocated; kcrt_error(NULL) then still has the words.) */
kcrt_status kcrt_open(kcrt_context **ctx, const kcrt_options *opts);
void kcrt_close(kcrt_context *ctx); /* frees everything made from ctx that is left */
/* The last failure, in words ("" when none). kcrt_error(NULL) gives the last
 * failure of kcrt_open in this thread. */
const char *kcrt_error(const kcrt_context *ctx);
const char *kcrt_device_name(const kcrt_context *ctx);
const char *kcrt_backend_name(const kcrt_context *ctx); /* "vulkan" | "hip" | "cuda" */

kcrt_status kcrt_bundle_load(kcrt_context *ctx, const char *path, kcrt_bundle **out);
void kcrt_bundle_free(kcrt_bundle *b); /* also frees its kernel handles */
/* A kernel that chooses its variant at each launch (tuned for this device
 * and shape, else the nearest tuned shape, else the device family's, else
 * the default). The handle belongs to the bundle. */
kcrt_status kcrt_kernel_get(kcrt_bundle *b, const char *name, kcrt_kernel **out);
/* Exactly one variant: "WG=64,PER=2" in any order; tunables not named take
 * their defaults; "" is the default variant. An error names what is wrong
 * and which variants exist. */
kcrt_status kcrt_kernel_get_variant(kcrt_bundle *b, const char *name, const char *tunables,
                                    kcrt_kernel **out);

/* Device buffers. A new buffer holds zeros. Writes and reads are ordered
 * with the launches before them: a read waits for pending work that uses
 * the buffer; a write waits for it too, or is queued behind it (Vulkan,
 * memory the host cannot map: the bytes are copied before the call
 * returns, so `src` is free again). kcrt_buffer_free does not wait for such work, which still runs:
 * the memory is kept for a later buffer of about its size, and what that
 * buffer does is ordered after the work (docs/runtime.md, "Memory"); a
 * wrapped buffer's free waits, since the memory is the host's. */
kcrt_status kcrt_buffer_create(kcrt_context *ctx, size_t bytes, kcrt_buffer **out);
void kcrt_buffer_free(kcrt_buffer *buf);
kcrt_status kcrt_buffer_write(kcrt_buffer *buf, size_t offset, const void *src, size_t bytes);
kcrt_status kcrt_buffer_read(kcrt_buffer *buf, size_t offset, void *dst, size_t bytes);
/* bytes of src from src_offset to dst at dst_offset, on the device: queued
 * in order with the launches before and after it, as a launch is, without
 * a wait or a trip through the host. Both buffers belong to one context;
 * the ranges lie inside them and, within one buffer, do not overlap. */
kcrt_status kcrt_buffer_copy(kcrt_buffer *dst, size_t dst_offset, kcrt_buffer *src, size_t src_offset,
                             size_t bytes);

/* Queues one launch (args in parameter order) after checking them against
 * the kernel: count, kinds, scalar types, buffer sizes against the declared
 * extents, and the grid. Launches are batched until kcrt_finish (or a
 * buffer transfer that needs their results). */
kcrt_status kcrt_launch(kcrt_kernel *k, const kcrt_arg *args, size_t nargs);
kcrt_status kcrt_finish(kcrt_context *ctx); /* wait for all launches */

/* Arguments. The macros build kcrt_arg values (compound literals), fit
 * for a braced array initialiser:
 *   kcrt_arg args[] = { KCRT_I32(n), KCRT_F32(2.0f), KCRT_BUF(x), KCRT_BUF(y) };
 * KCRT_F16 takes the IEEE binary16 bits of a half. */
typedef enum {
    KCRT_ARG_I32 = 1, /* int */
    KCRT_ARG_U32,     /* uint */
    KCRT_ARG_F32,     /* float */
    KCRT_ARG_F16,     /* half, as its 16 bits */
    KCRT_ARG_BOOL,    /* bool */
    KCRT_ARG_BUF,     /* a buffer parameter */
} kcrt_arg_type;

struct kcrt_arg {
    kcrt_arg_type type;
    union {
        int32_t i32;
        uint32_t u32;
        float f32;
        uint16_t f16;
        bool b;
        kcrt_buffer *buf;
    } v;
};

#define KCRT_I32(x) ((kcrt_arg){.type = KCRT_ARG_I32, .v = {.i32 = (int32_t)(x)}})
#define KCRT_U32(x) ((kcrt_arg){.type = KCRT_ARG_U32, .v = {.u32 = (uint32_t)(x)}})
#define KCRT_F32(x) ((kcrt_arg){.type = KCRT_ARG_F32, .v = {.f32 = (float)(x)}})
#define KCRT_F16(bits) ((kcrt_arg){.type = KCRT_ARG_F16, .v = {.f16 = (uint16_t)(bits)}})
#define KCRT_BOOL(x) ((kcrt_arg){.type = KCRT_ARG_BOOL, .v = {.b = (x) ? true : false}})
#define KCRT_BUF(buffer) ((kcrt_arg){.type = KCRT_ARG_BUF, .v = {.buf = (buffer)}})

/* ======================================================================
 * ADDITIONS: beyond DESIGN.md §6, for kc's tools and for hosts that want
 * more than launching.
 * ====================================================================== */

/* ADDITION: the name of a status ("KCRT_ERROR_NO_DEVICE"). */
const char *kcrt_status_name(kcrt_status s);

/* ---- devices -------------------------------------------------------- */

typedef enum {
    KCRT_DEVICE_OTHER = 0,
    KCRT_DEVICE_DISCRETE,
    KCRT_DEVICE_INTEGRATED,
    KCRT_DEVICE_VIRTUAL,
    KCRT_DEVICE_CPU,
} kcrt_device_type;

/* ADDITION: what a device is and the limits that matter for tuning. Some
 * fields mean a little different things per backend, as noted. */
typedef struct kcrt_device_info {
    int index;        /* the index kcrt_options.device and KCRT_DEVICE take */
    char backend[16]; /* "vulkan", "hip", "cuda" */
    char name[256];
    kcrt_device_type type;
    const char *type_name; /* "discrete", "integrated", "virtual", "cpu", "other" */
    uint32_t vendor_id, device_id;
    char vendor[32];         /* "amd", "nvidia", "intel", "mesa", … or the id in hex */
    uint32_t driver_version; /* as the backend reports it */
    char driver[256];        /* decoded version and the driver's own words */
    uint32_t api_version;    /* Vulkan: the device's apiVersion; HIP: hipDriverGetVersion
                                (60200000 = 6.2.0); CUDA: cuDriverGetVersion (12040 = 12.4) */
    uint32_t subgroup_size;  /* the default; min and max when it can vary */
    uint32_t min_subgroup_size, max_subgroup_size;
    uint32_t max_workgroup_invocations;
    uint32_t max_workgroup_size[3];
    uint32_t max_workgroup_count[3];
    uint32_t max_shared_bytes;
    uint32_t max_push_bytes;      /* push constants (Vulkan); kernel-argument bytes (HIP, CUDA) */
    uint32_t max_storage_buffers; /* per shader stage (Vulkan); HIP, CUDA: argument bytes / 8 */
    uint64_t max_buffer_bytes;    /* the largest range one buffer binding may have */
    uint64_t memory_bytes;        /* the largest device-local heap */
    bool unified_memory;          /* the host sees device memory directly */
    double timestamp_period_ns;   /* nanoseconds per timestamp tick; 0: no timestamps
                                     (HIP, CUDA: the documented resolution of their events) */
    uint32_t timestamp_valid_bits;
    /* optional features, as kc's variants name them */
    bool float16, int64, storage16, subgroups, subgroup_arithmetic, subgroup_shuffle, subgroup_ballot,
        float_atomics;
    char key[600];   /* the tuned table's device key: backend:vendor:device:name:driver */
    char family[96]; /* vendor and architecture, for the family fallback: "amd:navi3x" */
    char target[32]; /* ADDITION: the kc build target (-t) of this device: "spirv" on Vulkan,
                        its gfx name on HIP ("gfx90a"), "sm_NN" from its compute capability
                        on CUDA (where PTX for an older sm_NN also runs) */
} kcrt_device_info;

/* ADDITION: lists every device of a backend ("auto"/NULL: of every backend
 * that loads, HIP's first, then CUDA's, then Vulkan's), without opening
 * one. Writes up to max entries to out (out may be NULL to count) and the
 * total to *count. On failure writes a message to err. A backend whose
 * library is missing is KCRT_ERROR_NO_BACKEND when it was named; with
 * "auto" the backends that load are listed, and only when none loads is it
 * an error (the last one's status; err says why, backend by backend). */
kcrt_status kcrt_devices(const char *backend, kcrt_device_info *out, int max, int *count, char *err,
                         size_t errlen);
/* ADDITION: the open context's device. */
const kcrt_device_info *kcrt_device_info_get(const kcrt_context *ctx);

/* ---- timing --------------------------------------------------------- */

/* ADDITION: launches k `repeats` times in one submission, each bracketed by
 * device timestamps (Vulkan timestamp queries, HIP and CUDA events), waits, and
 * writes each launch's device time in nanoseconds to ns_each[0..repeats-1].
 * Pending launches are finished first so that they are not timed. The
 * launches are serialised (a barrier between them), as dependent launches
 * in an application are. On a CPU Vulkan driver (lavapipe), where a pair of
 * timestamps costs the launch between them tens of microseconds, a pair
 * brackets up to 8 consecutive launches and each of them gets the pair's
 * time over their number (kcrt_time_launch_cold still brackets each). */
kcrt_status kcrt_time_launch(kcrt_kernel *k, const kcrt_arg *args, size_t nargs, int repeats,
                             double *ns_each);
/* ADDITION: kcrt_time_launch with cold caches. Before each launch, outside
 * its timestamps, the device writes flush_bytes of a scratch buffer the
 * context keeps (0: KCRT_FLUSH_BYTES), ordered before the launch, so that
 * the launch finds its inputs out of the caches, as a launch between other
 * layers of a model does (back to back, an input that fits the last-level
 * cache is read from there). flush_bytes should be at least the device's
 * last-level cache (H100/H200 L2: 50 MB; an AMD GPU's Infinity Cache: up
 * to 256 MB; a CPU's L3 for lavapipe), and each launch costs a write of it
 * besides: tens of microseconds on a GPU, tens of milliseconds on a CPU
 * driver. The scratch buffer is kept until kcrt_close (or a larger one is
 * asked for). flush_bytes is at most KCRT_FLUSH_MAX_BYTES. */
#define KCRT_FLUSH_BYTES ((size_t)256 << 20)
#define KCRT_FLUSH_MAX_BYTES ((size_t)4 << 30)
kcrt_status kcrt_time_launch_cold(kcrt_kernel *k, const kcrt_arg *args, size_t nargs, int repeats,
                                  size_t flush_bytes, double *ns_each);

/* ---- bundle introspection ------------------------------------------- */

typedef enum { KCRT_PARAM_BUFFER, KCRT_PARAM_SCALAR } kcrt_param_kind;

/* Element and scalar types, in one table: X(NAME, "spelling", bytes,
 * lanes, scalar kind). Buffers of bool hold 4 bytes per element. */
#define KCRT_TYPES(X)                                                                                        \
    X(BOOL, "bool", 4, 1, 'b')                                                                               \
    X(INT, "int", 4, 1, 'i')                                                                                 \
    X(UINT, "uint", 4, 1, 'u')                                                                               \
    X(FLOAT, "float", 4, 1, 'f')                                                                             \
    X(HALF, "half", 2, 1, 'h')                                                                               \
    X(LONG, "long", 8, 1, 'i')                                                                               \
    X(ULONG, "ulong", 8, 1, 'u')                                                                             \
    X(FLOAT2, "float2", 8, 2, 'f')                                                                           \
    X(FLOAT4, "float4", 16, 4, 'f')                                                                          \
    X(HALF2, "half2", 4, 2, 'h')                                                                             \
    X(HALF4, "half4", 8, 4, 'h')                                                                             \
    X(INT2, "int2", 8, 2, 'i')                                                                               \
    X(INT4, "int4", 16, 4, 'i')                                                                              \
    X(UINT2, "uint2", 8, 2, 'u')                                                                             \
    X(UINT4, "uint4", 16, 4, 'u')

typedef enum {
#define X(name, text, bytes, lanes, kind) KCRT_TYPE_##name,
    KCRT_TYPES(X)
#undef X
        KCRT_NTYPES
} kcrt_type;

/* Initialisation of a buffer's random inputs (kc.yaml's init:). */
typedef enum {
    KCRT_INIT_UNIFORM = 0, /* uniform in [-1, 1) (the default) */
    KCRT_INIT_NORMAL,      /* standard normal */
    KCRT_INIT_POSITIVE,    /* uniform in (0, 1] */
    KCRT_INIT_ONES,
    KCRT_INIT_INDEX,   /* element i holds i */
    KCRT_INIT_TWIDDLE, /* element i of n holds exp(-2 pi i i / n): cos, -sin, cos, ... in its lanes */
} kcrt_init;

typedef struct kcrt_param_info {
    const char *name;
    kcrt_param_kind kind;
    kcrt_type type;          /* the element type of a buffer */
    const char *type_name;   /* "float4" */
    size_t elem_bytes;       /* bytes per element (buffers) or 4 (scalars) */
    bool readonly;           /* a const buffer */
    const char *extent;      /* elements, postfix over integer scalars (kc_iexpr.h); NULL = unknown */
    const char *extent_text; /* the same, written for people ("n * m") */
    int ndims;
    const char *const *dims; /* each dimension, postfix, or "?" */
    kcrt_init init;
} kcrt_param_info;

typedef struct kcrt_tunable_info {
    const char *name;
    int64_t def;
    int nvalues;
    const int64_t *values;
} kcrt_tunable_info;

typedef struct kcrt_variant_info {
    const char *tunables; /* "WG=64,TM=4" */
    const char *target;   /* "spirv" */
    uint32_t wg[3];
    uint32_t shared_bytes;
    uint32_t args_size;
    bool spilled;
    const char *features; /* "float16,subgroups" */
} kcrt_variant_info;

typedef struct kcrt_kernel_info {
    const char *name;
    const char *source_hash;
    int nparams;
    const kcrt_param_info *params;
    int ntunables;
    const kcrt_tunable_info *tunables;
    int nconstraints;
    const char *const *constraints; /* as written ("WG * TM <= 2048") */
    int nshapes;
    const char *const *shapes; /* "n=48000,m=3" */
    const char *wg;            /* three postfix expressions, ';'-joined */
    const char *grid;          /* the same, over scalars and tunables */
    const char *grid_text;     /* for people: "cdiv(n, WG * TM), 1, 1" */
    bool may_alias;
    const char *default_variant;
    double tolerance;          /* relative L2 against the default variant */
    const char *init;          /* as stored: "x=normal,y=uniform" */
    const char *bytes, *flops; /* per launch, postfix over scalars; NULL when not given */
    int nvariants;             /* every variant, every target */
    const kcrt_variant_info *variants;
} kcrt_kernel_info;

/* ADDITION: the kernels of a loaded bundle, in the bundle's order. The
 * pointers live as long as the bundle. */
int kcrt_bundle_kernel_count(const kcrt_bundle *b);
const kcrt_kernel_info *kcrt_bundle_kernel_info(const kcrt_bundle *b, int i); /* NULL out of range */
const kcrt_kernel_info *kcrt_kernel_info_get(const kcrt_kernel *k);
/* ADDITION: a value from the bundle's meta table ("package", "kc_version"),
 * or NULL. */
const char *kcrt_bundle_meta(const kcrt_bundle *b, const char *key);

/* ADDITION: evaluates one of the bundle's integer expressions (an extent,
 * grid or bytes/flops, postfix form) with named values. */
kcrt_status kcrt_eval(const char *postfix, const char *const *names, const int64_t *values, int n,
                      int64_t *out, char *err, size_t errlen);

/* ADDITION: the variant a launch of k with these arguments would use, and
 * why ("tuned for this device, exact shape"), without launching. For
 * a kernel from kcrt_kernel_get_variant, always that variant. */
kcrt_status kcrt_kernel_choose(kcrt_kernel *k, const kcrt_arg *args, size_t nargs, const char **variant,
                               const char **why);

/* ADDITION: the context a bundle, kernel or buffer belongs to. */
kcrt_context *kcrt_bundle_context(const kcrt_bundle *b);
kcrt_context *kcrt_kernel_context(const kcrt_kernel *k);
kcrt_context *kcrt_buffer_context(const kcrt_buffer *buf);
size_t kcrt_buffer_size(const kcrt_buffer *buf);

/* ADDITION: memory and streams the host already owns (DESIGN.md §10),
 * so that a PyTorch tensor or an app's own buffer is used in place.
 *
 * kcrt_buffer_wrap makes a buffer of `bytes` bytes over device memory the
 * host owns, without a copy: on HIP and CUDA `native` is the device
 * pointer (hipDeviceptr_t, CUdeviceptr) of this context's device; on
 * Vulkan it points to a kcrt_vulkan_buffer whose VkBuffer was made on this
 * context's VkDevice (kcrt_vulkan_device) with storage-buffer and
 * transfer-source/destination usage (and uniform-texel-buffer usage where
 * a variant built with KC_TEXEL_READS may read it), bound to memory, at
 * least `bytes` long. The buffer is used as any other (write, read, launch);
 * kcrt_buffer_free forgets it and frees nothing of the host's. The memory
 * must outlive the buffer and every launch queued with it (kcrt_finish).
 * libkcrt cannot check that a pointer or handle is valid: a wrong one is
 * the host's bug, as with the native APIs.
 *
 * kcrt_set_stream makes launches, transfers and kcrt_finish go on the
 * host's stream (hipStream_t, CUstream) from now on, after waiting for
 * what is queued on the one used so far; NULL goes back to the context's
 * own. The stream must outlive its use (until the next kcrt_set_stream or
 * kcrt_close, which waits for it). Vulkan: KCRT_ERROR_UNSUPPORTED (work
 * goes on the context's own queue). */
typedef struct kcrt_vulkan_buffer {
    uint64_t buffer; /* VkBuffer */
    uint64_t memory; /* VkDeviceMemory it is bound to (recorded; libkcrt never maps or frees it) */
} kcrt_vulkan_buffer;
kcrt_status kcrt_buffer_wrap(kcrt_context *ctx, void *native, size_t bytes, kcrt_buffer **out);
kcrt_status kcrt_set_stream(kcrt_context *ctx, void *native_stream);
/* ADDITION: a buffer's own handle, for handing it to another framework
 * (DLPack): HIP and CUDA, its device pointer; Vulkan, its VkBuffer (as a
 * pointer-sized value). *device is the device's number in that API (the
 * CUDA or HIP ordinal; Vulkan, the physical device's index). The handle
 * lives as long as the buffer. */
kcrt_status kcrt_buffer_native(kcrt_buffer *buf, void **native, int *device);
/* ADDITION: the Vulkan objects of a Vulkan context, for making buffers to
 * wrap (KCRT_ERROR_UNSUPPORTED on HIP and CUDA). */
typedef struct kcrt_vulkan_device {
    void *instance;        /* VkInstance */
    void *physical_device; /* VkPhysicalDevice */
    void *device;          /* VkDevice */
    uint32_t queue_family;
    void *queue; /* VkQueue: kcrt submits to it; the host must not use it from another thread at the same time */
} kcrt_vulkan_device;
kcrt_status kcrt_vulkan_device_get(kcrt_context *ctx, kcrt_vulkan_device *out);

/* ADDITION: IEEE binary16 conversions, for KCRT_F16 and half buffers
 * (round to nearest even; NaN stays NaN). */
uint16_t kcrt_f32_to_f16(float f);
float kcrt_f16_to_f32(uint16_t h);

#ifdef __cplusplus
}
#endif

#endif
