/*
 * hip_device.c — the HIP backend's library, devices, variants and ops
 * table.
 *
 * A device is described from hipDeviceGetAttribute (one call per number),
 * hipDeviceGetName, hipDeviceTotalMem, hipDriverGetVersion and its PCI id
 * (hipDeviceGetPCIBusId, then sysfs); its architecture (gcnArchName, e.g.
 * "gfx90a:sramecc+:xnack-") from hipGetDeviceProperties read without
 * relying on the struct's layout (arch_name). The part before the first
 * ':' is the kc target the device runs: a variant loads when its target is
 * exactly that name (a code object is built for one processor; kc builds
 * them without xnack/sramecc settings, so they run in either mode).
 */
#include "hip_private.h"

#include <stdlib.h>
#include <string.h>

#include "kc_platform.h"

#if defined(_WIN32)
/* the HIP SDK for Windows names its runtime by major version */
static const char *const library_names[] = {"amdhip64_6.dll", "amdhip64.dll", NULL};
#else
static const char *const library_names[] = {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5",
                                            "/opt/rocm/lib/libamdhip64.so", NULL};
#endif

/* ---- errors ------------------------------------------------------------------------------------- */

/* "hipErrorNoDevice (no ROCm-capable device is detected)" */
static void error_words(const hip_lib *L, hip_error e, char *out, size_t len)
{
    const char *name = L->hipGetErrorName ? L->hipGetErrorName(e) : NULL;
    const char *text = L->hipGetErrorString ? L->hipGetErrorString(e) : NULL;
    if (name && text && strcmp(name, text) != 0)
        rt_printf(out, len, "%s (%s)", name, text);
    else
        rt_printf(out, len, "%s (error %d)", name ? name : "hipError", e);
}

/* Errors after which the device cannot be used again in this process. */
static bool sticky(hip_error e)
{
    return e == hipErrorIllegalAddress || e == hipErrorLaunchFailure;
}

kcrt_status hip_check(hip_dev *d, hip_error e, const char *call)
{
    if (e == hipSuccess)
        return KCRT_OK;
    char words[256];
    error_words(&d->lib, e, words, sizeof(words));
    if (sticky(e) && !d->n.failed)
        d->n.failed = e;
    return rt_fail(d->n.ctx, e == hipErrorOutOfMemory ? KCRT_ERROR_OUT_OF_MEMORY : KCRT_ERROR_DEVICE_ERROR,
                   "%s failed: %s%s", call, words,
                   sticky(e) ? " (a kernel launched since the last kcrt_finish faulted; the device cannot be "
                               "used again in this process)"
                             : "");
}

kcrt_status hip_usable(hip_dev *d)
{
    if (!d->n.failed)
        return KCRT_OK;
    char words[256];
    error_words(&d->lib, d->n.failed, words, sizeof(words));
    return rt_fail(d->n.ctx, KCRT_ERROR_DEVICE_ERROR,
                   "the HIP device '%s' failed earlier (%s); close the context", d->n.ctx->info.name, words);
}

/* The context's device is current during each call; the thread gets its
 * own back after it (calls nest: a timed launch finishes first). */
void hip_enter(hip_dev *d)
{
    if (d->depth++ > 0)
        return;
    if (d->lib.hipGetDevice(&d->saved) != hipSuccess)
        d->saved = -1;
    if (d->saved != d->device)
        d->lib.hipSetDevice(d->device);
}

void hip_leave(hip_dev *d)
{
    if (--d->depth > 0)
        return;
    if (d->saved >= 0 && d->saved != d->device)
        d->lib.hipSetDevice(d->saved);
}

/* ---- the library ---------------------------------------------------------------------------------- */

#define SYMBOL(ret, name, params, ...) {(const char *const[]){__VA_ARGS__, NULL}, offsetof(hip_lib, name)},
static const rt_native_symbol symbols[] = {HIP_FNS(SYMBOL)};
#undef SYMBOL

static kcrt_status lib_open(hip_lib *L, char *err, size_t len)
{
    memset(L, 0, sizeof(*L));
    L->so = rt_native_open("KCRT_HIP_LIBRARY", library_names, "HIP",
                           "install ROCm's HIP runtime (libamdhip64)", &L->path, err, len);
    if (!L->so)
        return KCRT_ERROR_NO_BACKEND;
    if (!rt_native_bind(L->so, L->path, "a HIP runtime", symbols, RT_COUNT(symbols), L, err, len))
        return KCRT_ERROR_NO_BACKEND;
    return KCRT_OK;
}

static void lib_close(hip_lib *L)
{
    if (L->so)
        kc_lib_close(L->so); /* pinned: it stays */
    memset(L, 0, sizeof(*L));
}

/* hipInit and the number of devices; 0 devices is no error (err says why). */
static kcrt_status lib_init(hip_lib *L, int *count, char *err, size_t len)
{
    char words[256];
    *count = 0;
    hip_error e = L->hipInit(0);
    if (e == hipSuccess)
        e = L->hipGetDeviceCount(count);
    if (e == hipErrorNoDevice || (e == hipSuccess && *count <= 0)) {
        *count = 0;
        if (e == hipErrorNoDevice)
            error_words(L, e, words, sizeof(words));
        rt_printf(err, len, "HIP (%s) finds no device (%s)", L->path, e ? words : "hipGetDeviceCount: 0");
        return KCRT_OK;
    }
    if (e != hipSuccess) {
        error_words(L, e, words, sizeof(words));
        rt_printf(
            err, len, "HIP (%s) cannot start: hipInit or hipGetDeviceCount failed: %s%s", L->path, words,
            e == hipErrorInsufficientDriver ? "; the amdgpu kernel driver is missing or older than ROCm needs"
                                            : "");
        return KCRT_ERROR_NO_DEVICE;
    }
    return KCRT_OK;
}

/* ---- describing a device ------------------------------------------------------------------------------ */

/* Is s[0..] an architecture name: "gfx", 3 or 4 of [0-9a-f], then the end
 * or ":feature+:feature-"? Its length, or 0. */
static size_t arch_at(const unsigned char *s, size_t room)
{
    if (room < 7 || memcmp(s, "gfx", 3) != 0)
        return 0;
    size_t n = 3;
    while (n < room && n < 7 && ((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
        n++;
    if (n < 6 || n >= room || (s[n] != 0 && s[n] != ':'))
        return 0;
    while (n < room && n < 63 && s[n] &&
           (strchr(":+-", s[n]) || (s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9')))
        n++;
    return n < room && s[n] == 0 ? n : 0;
}

/* gcnArchName without relying on hipDeviceProp_t's layout, which ROCm 6
 * changed: the properties are written into a zeroed buffer far larger than
 * any version of the struct, and the architecture is the one string in it
 * of the form arch_at accepts. `name` (char[256]), the first member in
 * every version, is skipped; the rest of the struct holds numbers, which
 * do not spell "gfx" and a NUL-terminated run of hex digits by chance. */
static hip_error arch_name(const hip_lib *L, int device, char *out, size_t len)
{
    unsigned char *p = calloc(1, HIP_PROPS_BYTES);
    if (!p)
        return hipErrorOutOfMemory;
    hip_error e = L->hipGetDeviceProperties(p, device);
    out[0] = 0;
    for (size_t i = 256; e == hipSuccess && i < HIP_PROPS_BYTES && !out[0]; i++) {
        size_t n = arch_at(p + i, HIP_PROPS_BYTES - i);
        if (n)
            rt_printf(out, len, "%.*s", (int)n, (const char *)p + i);
    }
    free(p);
    return e == hipSuccess && !out[0] ? hipErrorNotFound : e;
}

/* The device family: LLVM's generic processor for the architecture where
 * there is one (gfx1100 and gfx1101 are both gfx11-generic), else the
 * architecture itself. A heuristic, as the Vulkan one: a sibling's tuned
 * row is only the third choice. */
static void family(const char *gfx, char *out, size_t len)
{
    static const struct {
        const char *prefix, *family;
    } generic[] = {{"gfx110", "gfx11-generic"},   {"gfx115", "gfx11-generic"},   {"gfx120", "gfx12-generic"},
                   {"gfx103", "gfx10-3-generic"}, {"gfx101", "gfx10-1-generic"}, {"gfx94", "gfx9-4-generic"},
                   {"gfx90a", "gfx90a"},          {"gfx908", "gfx908"},          {"gfx90", "gfx9-generic"}};
    for (size_t i = 0; i < RT_COUNT(generic); i++)
        if (strncmp(gfx, generic[i].prefix, strlen(generic[i].prefix)) == 0) {
            rt_printf(out, len, "amd:%s", generic[i].family);
            return;
        }
    rt_printf(out, len, "amd:%s", gfx);
}

typedef struct attr_query {
    hip_attribute attr;
    const char *name;
    int *value;
} attr_query;

static kcrt_status query_attributes(const hip_lib *L, int dev, attr_query *q, size_t n, char *err, size_t len)
{
    for (size_t i = 0; i < n; i++) {
        hip_error e = L->hipDeviceGetAttribute(q[i].value, q[i].attr, dev);
        if (e != hipSuccess) {
            char words[256];
            error_words(L, e, words, sizeof(words));
            rt_printf(err, len, "hipDeviceGetAttribute(%s) of HIP device %d failed: %s", q[i].name, dev,
                      words);
            return KCRT_ERROR_NO_DEVICE;
        }
    }
    return KCRT_OK;
}

/* Limits from the attributes; false when they make no sense, which is what
 * a HIP older than ROCm 5 (another numbering of the attributes) gives. */
static bool describe_limits(const hip_lib *L, int dev, kcrt_device_info *info, char *err, size_t len)
{
    int threads = 0, block[3] = {0}, grid[3] = {0}, shared = 0, warp = 0, integrated = 0;
    attr_query q[] = {
        {hipDeviceAttributeMaxThreadsPerBlock, "hipDeviceAttributeMaxThreadsPerBlock", &threads},
        {hipDeviceAttributeMaxBlockDimX, "hipDeviceAttributeMaxBlockDimX", &block[0]},
        {hipDeviceAttributeMaxBlockDimX + 1, "hipDeviceAttributeMaxBlockDimY", &block[1]},
        {hipDeviceAttributeMaxBlockDimX + 2, "hipDeviceAttributeMaxBlockDimZ", &block[2]},
        {hipDeviceAttributeMaxGridDimX, "hipDeviceAttributeMaxGridDimX", &grid[0]},
        {hipDeviceAttributeMaxGridDimX + 1, "hipDeviceAttributeMaxGridDimY", &grid[1]},
        {hipDeviceAttributeMaxGridDimX + 2, "hipDeviceAttributeMaxGridDimZ", &grid[2]},
        {hipDeviceAttributeMaxSharedMemoryPerBlock, "hipDeviceAttributeMaxSharedMemoryPerBlock", &shared},
        {hipDeviceAttributeWarpSize, "hipDeviceAttributeWarpSize", &warp},
        {hipDeviceAttributeIntegrated, "hipDeviceAttributeIntegrated", &integrated},
    };
    if (query_attributes(L, dev, q, RT_COUNT(q), err, len) != KCRT_OK)
        return false;
    if ((warp != 32 && warp != 64) || threads < 64 || threads > 4096 || block[0] < 64 || grid[0] < 1 ||
        shared < 1024) {
        rt_printf(
            err, len,
            "HIP device %d's attributes make no sense (warp size %d, %d threads per block, %d bytes of "
            "shared memory): %s numbers hipDeviceAttribute_t differently from ROCm 5 and 6, which libkcrt "
            "knows",
            dev, warp, threads, shared, L->path);
        return false;
    }
    info->max_workgroup_invocations = (uint32_t)threads;
    for (int k = 0; k < 3; k++) {
        info->max_workgroup_size[k] = (uint32_t)(block[k] > 0 ? block[k] : 1);
        info->max_workgroup_count[k] = (uint32_t)(grid[k] > 0 ? grid[k] : 1);
    }
    info->max_shared_bytes = (uint32_t)shared;
    info->subgroup_size = info->min_subgroup_size = info->max_subgroup_size = (uint32_t)warp;
    info->type = integrated ? KCRT_DEVICE_INTEGRATED : KCRT_DEVICE_DISCRETE;
    info->type_name = integrated ? "integrated" : "discrete";
    info->unified_memory = integrated != 0;
    return true;
}

/* "6.2.41133" from hipDriverGetVersion's major * 10^7 + minor * 10^5 + patch */
static void driver_words(const hip_lib *L, kcrt_device_info *info)
{
    int v = 0;
    if (L->hipDriverGetVersion(&v) != hipSuccess)
        v = 0;
    info->driver_version = info->api_version = (uint32_t)v;
    rt_printf(info->driver, sizeof(info->driver), "HIP %d.%d.%d", v / 10000000, v / 100000 % 100, v % 100000);
}

enum { HIP_ARG_BYTES = 4096 }; /* what libkcrt lets a launch pass; kc's kernels need a few dozen */

static kcrt_status describe(const hip_lib *L, int dev, kcrt_device_info *info, char *arch, size_t archlen,
                            char *err, size_t len)
{
    memset(info, 0, sizeof(*info));
    snprintf(info->backend, sizeof(info->backend), "hip");
    snprintf(info->vendor, sizeof(info->vendor), "amd");
    info->vendor_id = 0x1002;
    if (!describe_limits(L, dev, info, err, len))
        return KCRT_ERROR_NO_DEVICE;
    char words[256], bus[64];
    hip_error e = arch_name(L, dev, arch, archlen);
    if (e != hipSuccess) {
        error_words(L, e, words, sizeof(words));
        rt_printf(err, len,
                  "HIP device %d: hipGetDeviceProperties gives no architecture name (gcnArchName): %s", dev,
                  words);
        return KCRT_ERROR_NO_DEVICE;
    }
    rt_printf(info->target, sizeof(info->target), "%.*s", (int)strcspn(arch, ":"), arch);
    if (L->hipDeviceGetName(info->name, (int)sizeof(info->name), dev) != hipSuccess || !info->name[0])
        rt_printf(info->name, sizeof(info->name), "AMD %s", info->target);
    size_t mem = 0;
    if (L->hipDeviceTotalMem(&mem, dev) == hipSuccess)
        info->memory_bytes = info->max_buffer_bytes = mem;
    if (L->hipDeviceGetPCIBusId(bus, (int)sizeof(bus), dev) == hipSuccess)
        info->device_id = rt_pci_device_id(bus);
    driver_words(L, info);
    info->max_push_bytes = HIP_ARG_BYTES;
    info->max_storage_buffers = HIP_ARG_BYTES / 8;
    info->timestamp_period_ns = 1000; /* hipEventElapsedTime: "a resolution of approximately 1 us" */
    info->timestamp_valid_bits = 64;
    rt_native_features(info);
    rt_native_key(info);
    family(info->target, info->family, sizeof(info->family));
    return KCRT_OK;
}

static kcrt_status devices(kcrt_device_info *out, int max, int *count, char *err, size_t errlen)
{
    hip_lib L;
    int n = 0;
    kcrt_status s = lib_open(&L, err, errlen);
    if (s == KCRT_OK)
        s = lib_init(&L, &n, err, errlen);
    for (int i = 0; s == KCRT_OK && out && i < n && i < max; i++) {
        char arch[64];
        s = describe(&L, i, &out[i], arch, sizeof(arch), err, errlen);
    }
    *count = s == KCRT_OK ? n : 0;
    lib_close(&L);
    return s;
}

/* ---- open and close ------------------------------------------------------------------------------------ */

static void close_device(void *dev)
{
    hip_dev *d = dev;
    if (d->own_stream) {
        hip_enter(d);
        if (d->stream != d->own_stream)
            d->lib.hipStreamSynchronize(d->stream); /* the host's: our work on it ends */
        d->lib.hipStreamSynchronize(d->own_stream);
        rt_native_release(&d->n);
        d->lib.hipStreamDestroy(d->own_stream);
        hip_leave(d);
    }
    lib_close(&d->lib);
    free(d);
}

static kcrt_status open_device(kcrt_context *ctx, int index, void **out)
{
    hip_dev *d = calloc(1, sizeof(*d));
    if (!d)
        return rt_fail(ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    d->n.ctx = ctx;
    d->n.drv = &hip_driver;
    d->n.ordinal = index;
    d->device = index;
    char err[RT_MSG];
    int n = 0;
    kcrt_status s = lib_open(&d->lib, err, sizeof(err));
    if (s == KCRT_OK)
        s = lib_init(&d->lib, &n, err, sizeof(err));
    if (s == KCRT_OK && index >= n)
        s = KCRT_ERROR_NO_DEVICE, rt_printf(err, sizeof(err), "HIP device %d is gone", index);
    if (s == KCRT_OK)
        s = describe(&d->lib, index, &ctx->info, d->arch, sizeof(d->arch), err, sizeof(err));
    if (s != KCRT_OK) {
        close_device(d);
        return rt_fail(ctx, s, "%s", err);
    }
    hip_enter(d);
    s = hip_check(d, d->lib.hipStreamCreateWithFlags(&d->own_stream, hipStreamNonBlocking),
                  "hipStreamCreateWithFlags");
    d->stream = d->own_stream;
    hip_leave(d);
    if (s != KCRT_OK) {
        close_device(d);
        return s;
    }
    rt_log(ctx, "hip: '%s' (%s, %s), %s from %s, wave %u, key '%s', family '%s'", ctx->info.name, d->arch,
           ctx->info.type_name, ctx->info.driver, d->lib.path, ctx->info.subgroup_size, ctx->info.key,
           ctx->info.family);
    *out = d;
    return KCRT_OK;
}

/* ---- variants ------------------------------------------------------------------------------------------ */

static int loads(void *dev, const char *target)
{
    const hip_dev *d = dev;
    return strcmp(target, d->n.ctx->info.target) == 0;
}

static bool check(void *dev, const rt_module_desc *m, char *why, size_t len)
{
    const hip_dev *d = dev;
    const kcrt_device_info *i = &d->n.ctx->info;
    if (strcmp(m->target, i->target) != 0)
        return rt_printf(why, len, "its target is %s, the device is %s", m->target, i->target), false;
    if (!rt_fits_device(i, m, why, len))
        return false;
    if (m->args_size > i->max_push_bytes)
        return rt_printf(why, len, "its %u bytes of kernel arguments exceed the %u libkcrt passes",
                         m->args_size, i->max_push_bytes),
               false;
    return true;
}

/* An AMDGPU code object is a 64-bit little-endian ELF for EM_AMDGPU (224). */
static bool is_code_object(const unsigned char *b, size_t n)
{
    return n >= 64 && memcmp(b, "\177ELF", 4) == 0 && b[4] == 2 && b[5] == 1 && (b[18] | b[19] << 8) == 224;
}

static void module_free(void *dev, void *module)
{
    hip_dev *d = dev;
    rt_native_module *m = module;
    if (m->module) {
        hip_enter(d);
        rt_native_drain(&d->n); /* a queued launch may still use it */
        d->lib.hipModuleUnload(m->module);
        hip_leave(d);
    }
    rt_native_module_free(m);
}

static kcrt_status module_create(void *dev, const rt_module_desc *desc, void **out)
{
    hip_dev *d = dev;
    rt_native_module *m;
    if (!is_code_object(desc->binary, desc->size))
        return rt_fail(d->n.ctx, KCRT_ERROR_BAD_BUNDLE,
                       "kernel '%s' variant '%s': its %s binary is not an AMDGPU "
                       "code object",
                       desc->kernel, desc->variant, desc->target);
    kcrt_status s = hip_usable(d);
    if (s == KCRT_OK)
        s = rt_native_module_new(d->n.ctx, desc, &m);
    if (s != KCRT_OK)
        return s;
    hip_enter(d);
    s = hip_check(d, d->lib.hipModuleLoadData((hip_module *)&m->module, desc->binary), "hipModuleLoadData");
    if (s == KCRT_OK)
        s = hip_check(d, d->lib.hipModuleGetFunction((hip_function *)&m->function, m->module, desc->kernel),
                      "hipModuleGetFunction");
    hip_leave(d);
    if (s != KCRT_OK) {
        rt_fail(d->n.ctx, s, "kernel '%s' variant '%s' (%s): %s", desc->kernel, desc->variant, desc->target,
                d->n.ctx->err);
        module_free(d, m);
        return s;
    }
    d->n.stats.pipelines_created++;
    rt_log(d->n.ctx, "module loaded for %s (%s, %u bytes of arguments)", m->name, desc->target, m->args_size);
    *out = m;
    return KCRT_OK;
}

const rt_backend rt_hip_backend = RT_NATIVE_BACKEND("hip");
