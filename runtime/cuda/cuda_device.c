/*
 * cuda_device.c — the CUDA backend's library, devices, variants, modules
 * and ops table.
 *
 * A device is described from cuDeviceGetAttribute (one call per number),
 * cuDeviceGetName, cuDeviceTotalMem, cuDriverGetVersion and its PCI id
 * (cuDeviceGetPCIBusId, then sysfs). Its compute capability names the kc
 * target it runs natively, sm_NN; PTX is compiled by the driver for the
 * device when loaded, and PTX for an older sm_NN runs on a newer device,
 * so every variant for sm_NN with NN <= the device's loads and, of those
 * with the same tunables, the highest NN is used (bundle.c asks `loads`
 * for a preference: the NN itself).
 */
#include "cuda_private.h"

#include <stdlib.h>
#include <string.h>

#include "kc_platform.h"

static const char *const library_names[] = {KC_LIB_CUDA, NULL};

enum { PTX_ISA_CUDA = 11080 }; /* kc's PTX is ISA 7.8: drivers of CUDA 11.8 and newer JIT it */

/* ---- errors ------------------------------------------------------------------------------------------- */

/* "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)" */
static void error_words(const cu_lib *L, cu_result e, char *out, size_t len)
{
    const char *name = NULL, *text = NULL;
    if (!L->cuGetErrorName || L->cuGetErrorName(e, &name) != KCUDA_SUCCESS)
        name = NULL;
    if (!L->cuGetErrorString || L->cuGetErrorString(e, &text) != KCUDA_SUCCESS)
        text = NULL;
    if (name && text)
        rt_printf(out, len, "%s (%s)", name, text);
    else
        rt_printf(out, len, "%s (error %d)", name ? name : "CUresult", (int)e);
}

/* Errors after which the context cannot be used again in this process. */
static bool sticky(cu_result e)
{
    return e == KCUDA_ERROR_ILLEGAL_ADDRESS || e == KCUDA_ERROR_ASSERT ||
           (e >= KCUDA_ERROR_HARDWARE_STACK_ERROR && e <= KCUDA_ERROR_LAUNCH_FAILED);
}

kcrt_status cu_check(cu_dev *d, cu_result e, const char *call)
{
    if (e == KCUDA_SUCCESS)
        return KCRT_OK;
    char words[256];
    error_words(&d->lib, e, words, sizeof(words));
    if (sticky(e) && !d->n.failed)
        d->n.failed = e;
    return rt_fail(
        d->n.ctx, e == KCUDA_ERROR_OUT_OF_MEMORY ? KCRT_ERROR_OUT_OF_MEMORY : KCRT_ERROR_DEVICE_ERROR,
        "%s failed: %s%s", call, words,
        sticky(e) ? " (a kernel launched since the last kcrt_finish faulted; the CUDA context cannot "
                    "be used again in this process)"
                  : "");
}

kcrt_status cu_usable(cu_dev *d)
{
    if (!d->n.failed)
        return KCRT_OK;
    char words[256];
    error_words(&d->lib, d->n.failed, words, sizeof(words));
    return rt_fail(d->n.ctx, KCRT_ERROR_DEVICE_ERROR,
                   "the CUDA device '%s' failed earlier (%s); close the context", d->n.ctx->info.name, words);
}

/* The primary context is current during each call; the thread's own comes
 * back after it (push and pop nest). */
void cu_enter(cu_dev *d)
{
    d->lib.cuCtxPushCurrent(d->primary);
}

void cu_leave(cu_dev *d)
{
    cu_context popped;
    d->lib.cuCtxPopCurrent(&popped);
}

/* ---- the library ------------------------------------------------------------------------------------- */

#define SYMBOL(ret, name, params, ...) {(const char *const[]){__VA_ARGS__, NULL}, offsetof(cu_lib, name)},
static const rt_native_symbol symbols[] = {CU_FNS(SYMBOL)};
#undef SYMBOL

static kcrt_status lib_open(cu_lib *L, char *err, size_t len)
{
    memset(L, 0, sizeof(*L));
    L->so = rt_native_open("KCRT_CUDA_LIBRARY", library_names, "CUDA",
                           "install the NVIDIA driver (it brings " KC_LIB_CUDA ")", &L->path, err, len);
    if (!L->so)
        return KCRT_ERROR_NO_BACKEND;
    if (!rt_native_bind(L->so, L->path, "a CUDA driver", symbols, RT_COUNT(symbols), L, err, len))
        return KCRT_ERROR_NO_BACKEND;
    return KCRT_OK;
}

static void lib_close(cu_lib *L)
{
    if (L->so)
        kc_lib_close(L->so); /* pinned: it stays */
    memset(L, 0, sizeof(*L));
}

static const char *init_hint(cu_result e)
{
    switch (e) {
    case KCUDA_ERROR_STUB_LIBRARY: return "; this is the CUDA toolkit's stub, not the driver's " KC_LIB_CUDA;
    case KCUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
        return "; libcuda and the nvidia kernel module differ in version";
    case KCUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
        return "; a forward-compatibility libcuda on a device it does "
               "not support";
    default: return "";
    }
}

/* cuInit and the number of devices; 0 devices is no error (err says why). */
static kcrt_status lib_init(cu_lib *L, int *count, char *err, size_t len)
{
    char words[256];
    *count = 0;
    cu_result e = L->cuInit(0);
    if (e == KCUDA_SUCCESS)
        e = L->cuDeviceGetCount(count);
    if (e == KCUDA_ERROR_NO_DEVICE || (e == KCUDA_SUCCESS && *count <= 0)) {
        *count = 0;
        if (e)
            error_words(L, e, words, sizeof(words));
        rt_printf(err, len, "CUDA (%s) finds no device (%s)", L->path, e ? words : "cuDeviceGetCount: 0");
        return KCRT_OK;
    }
    if (e != KCUDA_SUCCESS) {
        error_words(L, e, words, sizeof(words));
        rt_printf(err, len, "CUDA (%s) cannot start: cuInit or cuDeviceGetCount failed: %s%s", L->path, words,
                  init_hint(e));
        return e == KCUDA_ERROR_STUB_LIBRARY ? KCRT_ERROR_NO_BACKEND : KCRT_ERROR_NO_DEVICE;
    }
    return KCRT_OK;
}

/* ---- describing a device ---------------------------------------------------------------------------------
 */

typedef struct attr_query {
    cu_attribute attr;
    const char *name;
    int *value;
} attr_query;

static bool describe_limits(const cu_lib *L, cu_device dev, int ordinal, kcrt_device_info *info, int *cc,
                            char *err, size_t len)
{
    int threads = 0, block[3] = {0}, grid[3] = {0}, shared = 0, warp = 0, integrated = 0, major = 0,
        minor = 0;
    attr_query q[] = {
        {KCU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "MAX_THREADS_PER_BLOCK", &threads},
        {KCU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, "MAX_BLOCK_DIM_X", &block[0]},
        {KCU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, "MAX_BLOCK_DIM_Y", &block[1]},
        {KCU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, "MAX_BLOCK_DIM_Z", &block[2]},
        {KCU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, "MAX_GRID_DIM_X", &grid[0]},
        {KCU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, "MAX_GRID_DIM_Y", &grid[1]},
        {KCU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, "MAX_GRID_DIM_Z", &grid[2]},
        {KCU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, "MAX_SHARED_MEMORY_PER_BLOCK", &shared},
        {KCU_DEVICE_ATTRIBUTE_WARP_SIZE, "WARP_SIZE", &warp},
        {KCU_DEVICE_ATTRIBUTE_INTEGRATED, "INTEGRATED", &integrated},
        {KCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "COMPUTE_CAPABILITY_MAJOR", &major},
        {KCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "COMPUTE_CAPABILITY_MINOR", &minor},
    };
    for (size_t i = 0; i < RT_COUNT(q); i++) {
        cu_result e = L->cuDeviceGetAttribute(q[i].value, q[i].attr, dev);
        if (e != KCUDA_SUCCESS) {
            char words[256];
            error_words(L, e, words, sizeof(words));
            rt_printf(err, len, "cuDeviceGetAttribute(CU_DEVICE_ATTRIBUTE_%s) of CUDA device %d failed: %s",
                      q[i].name, ordinal, words);
            return false;
        }
    }
    info->max_workgroup_invocations = (uint32_t)(threads > 0 ? threads : 1);
    for (int k = 0; k < 3; k++) {
        info->max_workgroup_size[k] = (uint32_t)(block[k] > 0 ? block[k] : 1);
        info->max_workgroup_count[k] = (uint32_t)(grid[k] > 0 ? grid[k] : 1);
    }
    info->max_shared_bytes = (uint32_t)(shared > 0 ? shared : 0);
    info->subgroup_size = info->min_subgroup_size = info->max_subgroup_size = (uint32_t)warp;
    info->type = integrated ? KCRT_DEVICE_INTEGRATED : KCRT_DEVICE_DISCRETE;
    info->type_name = integrated ? "integrated" : "discrete";
    info->unified_memory = integrated != 0;
    *cc = major * 10 + minor;
    return true;
}

/* "CUDA 12.4, driver 550.54.15": the driver API's version and, where the
 * kernel module says it, the driver's own. */
static void driver_words(const cu_lib *L, kcrt_device_info *info)
{
    int v = 0;
    char module[64];
    if (L->cuDriverGetVersion(&v) != KCUDA_SUCCESS)
        v = 0;
    info->driver_version = info->api_version = (uint32_t)v;
    if (rt_read_line("/sys/module/nvidia/version", module, sizeof(module)))
        rt_printf(info->driver, sizeof(info->driver), "CUDA %d.%d, driver %s", v / 1000, v % 1000 / 10,
                  module);
    else
        rt_printf(info->driver, sizeof(info->driver), "CUDA %d.%d", v / 1000, v % 1000 / 10);
}

static kcrt_status describe(const cu_lib *L, int ordinal, kcrt_device_info *info, cu_device *dev, int *cc,
                            char *err, size_t len)
{
    memset(info, 0, sizeof(*info));
    snprintf(info->backend, sizeof(info->backend), "cuda");
    snprintf(info->vendor, sizeof(info->vendor), "nvidia");
    info->vendor_id = 0x10de;
    char words[256], bus[64];
    cu_result e = L->cuDeviceGet(dev, ordinal);
    if (e != KCUDA_SUCCESS) {
        error_words(L, e, words, sizeof(words));
        rt_printf(err, len, "cuDeviceGet(%d) failed: %s", ordinal, words);
        return KCRT_ERROR_NO_DEVICE;
    }
    if (!describe_limits(L, *dev, ordinal, info, cc, err, len))
        return KCRT_ERROR_NO_DEVICE;
    if (L->cuDeviceGetName(info->name, (int)sizeof(info->name), *dev) != KCUDA_SUCCESS || !info->name[0])
        rt_printf(info->name, sizeof(info->name), "NVIDIA sm_%d", *cc);
    size_t mem = 0;
    if (L->cuDeviceTotalMem(&mem, *dev) == KCUDA_SUCCESS)
        info->memory_bytes = info->max_buffer_bytes = mem;
    if (L->cuDeviceGetPCIBusId(bus, (int)sizeof(bus), *dev) == KCUDA_SUCCESS)
        info->device_id = rt_pci_device_id(bus);
    driver_words(L, info);
    /* kernel parameters: 4 KiB, or 32764 bytes from CUDA 12.1 on Volta and newer */
    info->max_push_bytes = info->api_version >= 12010 && *cc >= 70 ? 32764 : 4096;
    info->max_storage_buffers = info->max_push_bytes / 8;
    info->timestamp_period_ns = 500; /* cuEventElapsedTime: "a resolution of around 0.5 microseconds" */
    info->timestamp_valid_bits = 64;
    rt_native_features(info);
    rt_native_key(info);
    rt_printf(info->target, sizeof(info->target), "sm_%d", *cc);
    rt_printf(info->family, sizeof(info->family), "nvidia:sm_%d", *cc);
    return KCRT_OK;
}

static kcrt_status devices(kcrt_device_info *out, int max, int *count, char *err, size_t errlen)
{
    cu_lib L;
    int n = 0;
    kcrt_status s = lib_open(&L, err, errlen);
    if (s == KCRT_OK)
        s = lib_init(&L, &n, err, errlen);
    for (int i = 0; s == KCRT_OK && out && i < n && i < max; i++) {
        cu_device dev;
        int cc;
        s = describe(&L, i, &out[i], &dev, &cc, err, errlen);
    }
    *count = s == KCRT_OK ? n : 0;
    lib_close(&L);
    return s;
}

/* ---- open and close
 * ------------------------------------------------------------------------------------------ */

static void close_device(void *dev)
{
    cu_dev *d = dev;
    if (d->primary) {
        cu_enter(d);
        if (d->stream && d->stream != d->own_stream)
            d->lib.cuStreamSynchronize(d->stream); /* the host's: our work on it ends */
        if (d->own_stream) {
            d->lib.cuStreamSynchronize(d->own_stream);
            d->lib.cuStreamDestroy(d->own_stream);
        }
        rt_native_release(&d->n);
        cu_leave(d);
        d->lib.cuDevicePrimaryCtxRelease(d->device);
    }
    lib_close(&d->lib);
    free(d);
}

static kcrt_status open_device(kcrt_context *ctx, int index, void **out)
{
    cu_dev *d = calloc(1, sizeof(*d));
    if (!d)
        return rt_fail(ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    d->n.ctx = ctx;
    d->n.drv = &cu_driver;
    d->n.ordinal = index;
    char err[RT_MSG];
    int n = 0;
    kcrt_status s = lib_open(&d->lib, err, sizeof(err));
    if (s == KCRT_OK)
        s = lib_init(&d->lib, &n, err, sizeof(err));
    if (s == KCRT_OK && index >= n)
        s = KCRT_ERROR_NO_DEVICE, rt_printf(err, sizeof(err), "CUDA device %d is gone", index);
    if (s == KCRT_OK)
        s = describe(&d->lib, index, &ctx->info, &d->device, &d->cc, err, sizeof(err));
    if (s != KCRT_OK) {
        close_device(d);
        return rt_fail(ctx, s, "%s", err);
    }
    s = cu_check(d, d->lib.cuDevicePrimaryCtxRetain(&d->primary, d->device), "cuDevicePrimaryCtxRetain");
    if (s == KCRT_OK) {
        cu_enter(d);
        s = cu_check(d, d->lib.cuStreamCreate(&d->own_stream, KCU_STREAM_NON_BLOCKING), "cuStreamCreate");
        d->stream = d->own_stream;
        cu_leave(d);
    }
    if (s != KCRT_OK) {
        close_device(d);
        return s;
    }
    rt_log(ctx, "cuda: '%s' (sm_%d, %s), %s from %s, key '%s', family '%s'", ctx->info.name, d->cc,
           ctx->info.type_name, ctx->info.driver, d->lib.path, ctx->info.key, ctx->info.family);
    *out = d;
    return KCRT_OK;
}

/* ---- variants
 * ---------------------------------------------------------------------------------------------------- */

/* NN of "sm_NN", or 0 (other targets, and arch-specific ones like sm_90a,
 * which kc does not build). */
static int sm_of(const char *target)
{
    if (strncmp(target, "sm_", 3) != 0 || strspn(target + 3, "0123456789") != strlen(target + 3) ||
        strlen(target + 3) < 2 || strlen(target + 3) > 4)
        return 0;
    return atoi(target + 3);
}

static int loads(void *dev, const char *target)
{
    const cu_dev *d = dev;
    int sm = sm_of(target);
    return sm > 0 && sm <= d->cc ? sm : 0;
}

static bool check(void *dev, const rt_module_desc *m, char *why, size_t len)
{
    const cu_dev *d = dev;
    const kcrt_device_info *i = &d->n.ctx->info;
    int sm = sm_of(m->target);
    if (sm == 0 || sm > d->cc)
        return rt_printf(why, len, "its target is %s, and the device is sm_%d", m->target, d->cc), false;
    if (!rt_fits_device(i, m, why, len))
        return false;
    if (m->args_size > i->max_push_bytes)
        return rt_printf(why, len, "its %u bytes of kernel parameters exceed the device's %u", m->args_size,
                         i->max_push_bytes),
               false;
    return true;
}

/* The driver wants PTX as a NUL-terminated string; the bundle holds the
 * text without one. */
static char *ptx_text(const rt_module_desc *m)
{
    char *t = malloc(m->size + 1);
    if (t) {
        memcpy(t, m->binary, m->size);
        t[m->size] = 0;
    }
    return t;
}

static const char *jit_hint(cu_result e)
{
    if (e == KCUDA_ERROR_UNSUPPORTED_PTX_VERSION)
        return "; kc emits PTX ISA 7.8, which needs a driver of CUDA 11.8 or newer: update the NVIDIA driver";
    return "";
}

/* cuModuleLoadDataEx with the JIT's logs: its error log goes into the
 * message, its information log to KCRT_LOG=debug. */
static kcrt_status load_ptx(cu_dev *d, rt_native_module *m, const char *ptx)
{
    char info[4096] = "", errors[8192] = "";
    cu_jit_option opt[] = {KCU_JIT_INFO_LOG_BUFFER, KCU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                           KCU_JIT_ERROR_LOG_BUFFER, KCU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *val[] = {info, (void *)(uintptr_t)sizeof(info), errors, (void *)(uintptr_t)sizeof(errors)};
    cu_result e = d->lib.cuModuleLoadDataEx((cu_module *)&m->module, ptx, 4, opt, val);
    info[sizeof(info) - 1] = errors[sizeof(errors) - 1] = 0;
    if (info[0])
        rt_log(d->n.ctx, "the CUDA JIT on %s: %s", m->name, info);
    kcrt_status s = cu_check(d, e, "cuModuleLoadDataEx");
    if (s != KCRT_OK)
        rt_fail(d->n.ctx, s, "%s%s%s%s", d->n.ctx->err, jit_hint(e), errors[0] ? "; the JIT says: " : "", errors);
    return s;
}

static void module_free(void *dev, void *module)
{
    cu_dev *d = dev;
    rt_native_module *m = module;
    if (m->module) {
        cu_enter(d);
        rt_native_drain(&d->n); /* a queued launch may still use it */
        d->lib.cuModuleUnload(m->module);
        cu_leave(d);
    }
    rt_native_module_free(m);
}

/* Loads the PTX and finds the kernel; a kernel that cannot run its
 * workgroup (too many registers) is refused here rather than at launch. */
static kcrt_status load_module(cu_dev *d, const rt_module_desc *desc, rt_native_module *m)
{
    char *ptx = ptx_text(desc);
    if (!ptx)
        return rt_fail(d->n.ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    cu_enter(d);
    kcrt_status s = load_ptx(d, m, ptx);
    free(ptx);
    if (s == KCRT_OK)
        s = cu_check(d, d->lib.cuModuleGetFunction((cu_function *)&m->function, m->module, desc->kernel),
                     "cuModuleGetFunction");
    int most = 0;
    if (s == KCRT_OK)
        s = cu_check(d,
                     d->lib.cuFuncGetAttribute(&most, KCU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, m->function),
                     "cuFuncGetAttribute");
    cu_leave(d);
    uint64_t inv = (uint64_t)desc->wg[0] * desc->wg[1] * desc->wg[2];
    if (s == KCRT_OK && inv > (uint64_t)most)
        s = rt_fail(
            d->n.ctx, KCRT_ERROR_UNSUPPORTED,
            "its workgroup of %llu threads is more than the %d the driver can run of this kernel (registers)",
            (unsigned long long)inv, most);
    return s;
}

static kcrt_status module_create(void *dev, const rt_module_desc *desc, void **out)
{
    cu_dev *d = dev;
    rt_native_module *m;
    if (desc->size < 8 || !memchr(desc->binary, '.', desc->size < 256 ? desc->size : 256) ||
        memchr(desc->binary, 0, desc->size))
        return rt_fail(d->n.ctx, KCRT_ERROR_BAD_BUNDLE,
                       "kernel '%s' variant '%s': its %s binary is not PTX text", desc->kernel, desc->variant,
                       desc->target);
    kcrt_status s = cu_usable(d);
    if (s == KCRT_OK)
        s = rt_native_module_new(d->n.ctx, desc, &m);
    if (s != KCRT_OK)
        return s;
    if ((s = load_module(d, desc, m)) != KCRT_OK) {
        rt_fail(d->n.ctx, s, "kernel '%s' variant '%s' (%s on sm_%d): %s", desc->kernel, desc->variant,
                desc->target, d->cc, d->n.ctx->err);
        module_free(d, m);
        return s;
    }
    d->n.stats.pipelines_created++;
    rt_log(d->n.ctx, "module loaded for %s (%s JIT-compiled for sm_%d, %u bytes of parameters)", m->name,
           desc->target, d->cc, m->args_size);
    *out = m;
    return KCRT_OK;
}

const rt_backend rt_cuda_backend = RT_NATIVE_BACKEND("cuda");
