/*
 * rt_native.h — what the HIP and CUDA backends share: loading their
 * driver library with dlopen, the module of a kernel-argument variant, the
 * argument block of a launch and describing a device by its PCI ids
 * (native.c); buffers, launches and timing on one in-order stream
 * (native_exec.c), over the table of driver calls each backend gives.
 *
 * Both backends take one kernel-argument block per launch, laid out as
 * docs/backends.md says and as variants.args records it ("offset:size" per
 * parameter). The common layer has already packed the scalars at their
 * offsets (launch.c); a backend copies that block and writes each buffer's
 * 64-bit device address into the buffer's 8-byte slot.
 */
#ifndef KC_RT_NATIVE_H
#define KC_RT_NATIVE_H

#include "rt_private.h"

/* ---- the library ------------------------------------------------------------------------------ */

/* dlopens the library the environment variable `env` names, or else the
 * first of `names` (NULL-terminated) that loads. The library stays loaded
 * for the life of the process (RTLD_NODELETE): drivers are not made to be
 * unloaded and loaded again. On failure: NULL, and err says which names
 * were tried and why the last failed, with `what` ("HIP") and `install`
 * (what to install). *path gets the name that loaded. */
void *rt_native_open(const char *env, const char *const *names, const char *what, const char *install,
                     const char **path, char *err, size_t errlen);

/* One entry point of a driver's function table: the names it may have
 * (NULL-terminated, the first that the library has wins) and where in the
 * table its pointer goes. */
typedef struct rt_native_symbol {
    const char *const *names;
    size_t offset;
} rt_native_symbol;

/* Fills the function table at `table` from the library; false, with err
 * saying "PATH is not WHAT: it has no NAME", when an entry point is
 * missing. */
bool rt_native_bind(void *so, const char *path, const char *what, const rt_native_symbol *syms, size_t nsyms,
                    void *table, char *err, size_t errlen);

/* ---- modules and arguments ----------------------------------------------------------------------- */

/* One variant, loaded. */
typedef struct rt_native_module {
    void *module;   /* hipModule_t, CUmodule */
    void *function; /* hipFunction_t, CUfunction */
    int nparams;
    rt_slot *slots; /* a copy of the variant's */
    uint32_t args_size;
    uint32_t wg[3];
    unsigned char *block; /* args_size bytes (at least 8): the launch's arguments, rebuilt per launch */
    void **params;        /* CUDA: a pointer into block per parameter */
    char name[160];       /* kernel[variant], for messages */
} rt_native_module;

/* A module with the variant's layout and no driver objects yet. */
kcrt_status rt_native_module_new(kcrt_context *ctx, const rt_module_desc *m, rt_native_module **out);
void rt_native_module_free(rt_native_module *m);

/* ---- running work (native_exec.c) ---------------------------------------------------------------- */

/*
 * Everything goes through the context's one stream, in order: a launch is
 * queued and returns (kcrt_finish waits for the stream); a transfer is
 * queued behind the launches before it and waited for, so a write never
 * races them and a read sees their results (as on Vulkan, transfers are
 * synchronous); a new buffer is zeroed on the stream. A freed buffer's
 * memory is kept for a later buffer of its size class (rt_size_class) and
 * given to it at once: whatever the new buffer does is queued on the
 * stream after the work that used the memory, so neither the free nor the
 * reuse waits. A timed launch has
 * event r before repeat r and event r + 1 after it (cold: a write of the
 * flush buffer, then events 2r and 2r + 1).
 *
 * What differs between HIP and CUDA is a table of calls. Each runs with
 * the device current (between enter and leave), returns KCRT_OK or the
 * failure with its message set (naming the driver call), and queues on the
 * stream where it says so.
 */
typedef struct rt_native_driver {
    /* work-items one dispatch counts per dimension (HSA: 2^32 - 1); 0: the
     * device's grid limits say it all */
    uint64_t max_grid_items;
    const char *api; /* "HIP": in messages */
    kcrt_status (*usable)(void *dev); /* not after a fault */
    void (*enter)(void *dev);
    void (*leave)(void *dev);
    kcrt_status (*alloc)(void *dev, size_t bytes, uint64_t *ptr);
    void (*release)(void *dev, uint64_t ptr);
    kcrt_status (*zero)(void *dev, uint64_t ptr, size_t bytes);                     /* queued */
    kcrt_status (*to_device)(void *dev, uint64_t dst, const void *src, size_t bytes); /* queued */
    kcrt_status (*to_host)(void *dev, void *dst, uint64_t src, size_t bytes);         /* queued */
    kcrt_status (*on_device)(void *dev, uint64_t dst, uint64_t src, size_t bytes);    /* queued */
    kcrt_status (*wait)(void *dev);                                                   /* for the stream */
    /* queues m with the arguments in m->block (and m->params) */
    kcrt_status (*dispatch)(void *dev, rt_native_module *m, const uint32_t grid[3]);
    kcrt_status (*event_create)(void *dev, void **event);
    void (*event_destroy)(void *dev, void *event);
    kcrt_status (*event_record)(void *dev, void *event); /* queued */
    kcrt_status (*event_wait)(void *dev, void *event);
    kcrt_status (*event_ms)(void *dev, void *from, void *to, float *ms);
    /* work goes on this stream from now on (kcrt_set_stream); NULL: the
     * device's own again */
    void (*use_stream)(void *dev, void *stream);
} rt_native_driver;

/* The state of a native device that the common path keeps: the first
 * member of hip_dev and cu_dev, so a device is also an rt_native_dev. */
typedef struct rt_native_dev {
    kcrt_context *ctx;
    const rt_native_driver *drv;
    int ordinal;   /* the driver's number of the device */
    void **events; /* for timing, grown on demand */
    int nevents;
    uint64_t pending; /* launches queued since the stream was last waited for */
    struct rt_native_spare *spares; /* freed buffers' memory, oldest first */
    int nspares, spares_cap;
    uint64_t spare_max;
    int failed;       /* the driver's error after which the device is unusable (0 when none) */
    kcrt_stats stats;
} rt_native_dev;

/* A native backend's rt_backend: its own device and module functions,
 * which a backend names as these static functions do, and the common
 * path's buffers, launches and timing. */
#define RT_NATIVE_BACKEND(NAME)                                                                          \
    {                                                                                                    \
        .name = NAME, .devices = devices, .open = open_device, .close = close_device, .loads = loads,    \
        .check = check, .module_create = module_create, .module_free = module_free,                      \
        .buffer_create = rt_native_buffer_create, .buffer_wrap = rt_native_buffer_wrap,                  \
        .buffer_free = rt_native_buffer_free, .set_stream = rt_native_set_stream,                        \
        .buffer_native = rt_native_buffer_native,                                                        \
        .buffer_write = rt_native_buffer_write, .buffer_read = rt_native_buffer_read,                    \
        .buffer_copy = rt_native_buffer_copy,                                                            \
        .launch = rt_native_launch, .finish = rt_native_finish, .time = rt_native_time,                  \
        .stats = rt_native_stats,                                                                        \
    }

/* A backend's driver table, from static functions named as its members. */
#define RT_NATIVE_DRIVER(API, MAX_GRID_ITEMS)                                                            \
    {                                                                                                    \
        .max_grid_items = MAX_GRID_ITEMS, .api = API, .usable = usable, .enter = enter, .leave = leave,  \
        .alloc = alloc, .release = release, .zero = zero, .to_device = to_device, .to_host = to_host,    \
        .on_device = on_device, .wait = wait, .dispatch = dispatch, .event_create = event_create,                                \
        .event_destroy = event_destroy, .event_record = event_record, .event_wait = event_wait,          \
        .event_ms = event_ms, .use_stream = use_stream,                                                  \
    }

/* The rt_backend entries; `dev` is the backend's device. */
kcrt_status rt_native_buffer_create(void *dev, size_t bytes, void **buf);
kcrt_status rt_native_buffer_wrap(void *dev, void *native, size_t bytes, void **buf);
kcrt_status rt_native_set_stream(void *dev, void *stream);
kcrt_status rt_native_buffer_native(void *dev, void *buf, void **native, int *device);
void rt_native_buffer_free(void *dev, void *buf);
kcrt_status rt_native_buffer_write(void *dev, void *buf, size_t offset, const void *src, size_t bytes);
kcrt_status rt_native_buffer_read(void *dev, void *buf, size_t offset, void *dst, size_t bytes);
kcrt_status rt_native_buffer_copy(void *dev, void *dst, size_t dst_offset, void *src, size_t src_offset, size_t bytes);
kcrt_status rt_native_launch(void *dev, void *module, const rt_launch_desc *l);
kcrt_status rt_native_finish(void *dev);
kcrt_status rt_native_time(void *dev, void *module, const rt_launch_desc *l, int repeats, void *flush,
                           size_t flush_bytes, double *ns_each);
void rt_native_stats(void *dev, kcrt_stats *out);

/* Waits, quietly, for what is queued (the device is current): before
 * memory or a module that a queued launch may use goes away. */
void rt_native_drain(rt_native_dev *d);

/* Destroys the timing events and frees the spares (the device is
 * current, its work done). */
void rt_native_release(rt_native_dev *d);

/* ---- describing a device --------------------------------------------------------------------------- */

/* The PCI device id (0x744c) of the device at bus id "0000:03:00.0", from
 * Linux's sysfs; 0 when it cannot be read. (The HIP and CUDA APIs give the
 * bus position, not the id that Vulkan reports and device keys use.) */
uint32_t rt_pci_device_id(const char *bus_id);

/* The first line of a small text file (sysfs, /proc), without its newline;
 * false when it cannot be read. */
bool rt_read_line(const char *path, char *out, size_t len);

/* info->key from its backend, ids, name and driver, in the shape of the
 * Vulkan keys: backend:vendor:device:name:driver. */
void rt_native_key(kcrt_device_info *info);

/* Every feature kc's LLVM targets lower: the compiler refuses what a
 * target cannot do, so a HIP or CUDA device has them all. */
void rt_native_features(kcrt_device_info *info);

#endif
