/*
 * fake_hip.c — a stand-in for ROCm's libamdhip64 with the entry points
 * libkcrt's HIP backend uses, written from the HIP runtime API reference
 * (not from libkcrt's hip_api.h, so that the two are independent
 * statements of the same ABI). See fake_gpu.h for what it remembers and
 * how a test steers it.
 *
 * Built twice: as ROCm 6 (hipGetDevicePropertiesR0600 and R0000, with
 * gcnArchName where the new layout has it) and, with FAKE_ROCM5, as ROCm 5
 * (only hipGetDeviceProperties, the old layout), so that the backend is
 * seen to find the architecture in both.
 */
#include "fake_gpu.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* hipError_t values (HIP runtime API reference, "hipError_t") */
enum {
    SUCCESS = 0,
    INVALID_VALUE = 1,
    OUT_OF_MEMORY = 2,
    INSUFFICIENT_DRIVER = 35,
    NO_DEVICE = 100,
    INVALID_DEVICE = 101,
    INVALID_IMAGE = 200,
    NO_BINARY_FOR_GPU = 209,
    INVALID_HANDLE = 400,
    NOT_FOUND = 500,
    ILLEGAL_ADDRESS = 700,
    LAUNCH_OUT_OF_RESOURCES = 701,
};

static const struct {
    int code;
    const char *name, *text;
} errors[] = {
    {SUCCESS, "hipSuccess", "no error"},
    {INVALID_VALUE, "hipErrorInvalidValue", "invalid argument"},
    {OUT_OF_MEMORY, "hipErrorOutOfMemory", "out of memory"},
    {INSUFFICIENT_DRIVER, "hipErrorInsufficientDriver", "driver version is insufficient for runtime version"},
    {NO_DEVICE, "hipErrorNoDevice", "no ROCm-capable device is detected"},
    {INVALID_DEVICE, "hipErrorInvalidDevice", "invalid device ordinal"},
    {INVALID_IMAGE, "hipErrorInvalidImage", "device kernel image is invalid"},
    {NO_BINARY_FOR_GPU, "hipErrorNoBinaryForGpu", "no kernel image is available for execution on the device"},
    {INVALID_HANDLE, "hipErrorInvalidHandle", "invalid resource handle"},
    {NOT_FOUND, "hipErrorNotFound", "named symbol not found"},
    {ILLEGAL_ADDRESS, "hipErrorIllegalAddress", "an illegal memory access was encountered"},
    {LAUNCH_OUT_OF_RESOURCES, "hipErrorLaunchOutOfResources", "too many resources requested for launch"},
};

static fake_state state;
static float clock_ms; /* advanced by each launch; what events record */

EXPORT fake_state *fake_hip_state(void)
{
    return &state;
}

EXPORT void fake_hip_reset(void)
{
    free(state.image);
    int keep_device = state.current_device;
    memset(&state, 0, sizeof(state));
    state.current_device = keep_device;
}

static void trace(const char *call)
{
    size_t at = strlen(state.trace);
    snprintf(state.trace + at, sizeof(state.trace) - at, "%s%s", at ? " " : "", call);
}

/* The error FAKE_GPU_FAIL asks this call for ("name" or "name:code"), or 0. */
static int injected(const char *call, int typical)
{
    const char *f = getenv("FAKE_GPU_FAIL");
    size_t n = strlen(call);
    if (!f || strncmp(f, call, n) != 0 || (f[n] && f[n] != ':'))
        return SUCCESS;
    return f[n] == ':' ? atoi(f + n + 1) : typical;
}

static int devices(void)
{
    const char *v = getenv("FAKE_GPU_DEVICES");
    return v && *v ? atoi(v) : 1;
}

static const char *arch(void)
{
    const char *a = getenv("FAKE_GPU_ARCH");
    return a && *a ? a : "gfx90a:sramecc+:xnack-";
}

static bool wave64(void) /* gfx9 (GCN, CDNA) runs wave64; gfx10 and later wave32 */
{
    return strncmp(arch(), "gfx9", 4) == 0;
}

/* ---- errors, versions, devices ---------------------------------------------------------------- */

EXPORT const char *hipGetErrorName(int e)
{
    for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
        if (errors[i].code == e)
            return errors[i].name;
    return "hipErrorUnknown";
}

EXPORT const char *hipGetErrorString(int e)
{
    for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
        if (errors[i].code == e)
            return errors[i].text;
    return "unknown error";
}

EXPORT int hipInit(unsigned flags)
{
    trace("hipInit");
    if (flags != 0)
        return INVALID_VALUE;
    int e = injected("hipInit", INSUFFICIENT_DRIVER);
    return e ? e : devices() == 0 ? NO_DEVICE : SUCCESS;
}

EXPORT int hipDriverGetVersion(int *v)
{
    *v = 60241133; /* 6.2.41133: major * 10^7 + minor * 10^5 + patch */
    return SUCCESS;
}

EXPORT int hipGetDeviceCount(int *n)
{
    *n = devices();
    return *n ? SUCCESS : NO_DEVICE;
}

EXPORT int hipGetDevice(int *d)
{
    *d = state.current_device;
    return SUCCESS;
}

EXPORT int hipSetDevice(int d)
{
    if (d < 0 || d >= devices())
        return INVALID_DEVICE;
    state.current_device = d;
    state.set_device_calls++;
    return SUCCESS;
}

EXPORT int hipDeviceGetName(char *name, int len, int d)
{
    if (d < 0 || d >= devices())
        return INVALID_DEVICE;
    snprintf(name, (size_t)len, "AMD Instinct MI210 (fake %d)", d);
    return SUCCESS;
}

/* hipDeviceAttribute_t numbers of ROCm 5 and 6 (hip_runtime_api.h) */
EXPORT int hipDeviceGetAttribute(int *v, int attr, int d)
{
    if (d < 0 || d >= devices())
        return INVALID_DEVICE;
    switch (attr) {
    case 16: *v = 0; break; /* Integrated */
    case 26:
    case 27:
    case 28: *v = 1024; break;       /* MaxBlockDimX, Y, Z */
    case 29: *v = 2147483647; break; /* MaxGridDimX */
    case 30:
    case 31: *v = 65536; break;              /* MaxGridDimY, Z */
    case 56: *v = 1024; break;               /* MaxThreadsPerBlock */
    case 63: *v = 104; break;                /* MultiprocessorCount */
    case 74: *v = 65536; break;              /* MaxSharedMemoryPerBlock */
    case 87: *v = wave64() ? 64 : 32; break; /* WarpSize */
    default: return INVALID_VALUE;
    }
    return SUCCESS;
}

EXPORT int hipDeviceTotalMem(size_t *bytes, int d)
{
    *bytes = (size_t)64 << 30;
    return d >= 0 && d < devices() ? SUCCESS : INVALID_DEVICE;
}

EXPORT int hipDeviceGetPCIBusId(char *id, int len, int d)
{
    snprintf(id, (size_t)len, "0000:fa:%02x.0", d); /* no such device in sysfs: the id stays unknown */
    return d >= 0 && d < devices() ? SUCCESS : INVALID_DEVICE;
}

/* The properties: name first (as in every ROCm), gcnArchName where the
 * layout of that version puts it, and numbers around it. */
static int properties(unsigned char *p, int d, size_t arch_at, size_t size)
{
    if (d < 0 || d >= devices())
        return INVALID_DEVICE;
    memset(p, 0, size);
    hipDeviceGetName((char *)p, 256, d);
    for (size_t i = 256; i + 4 <= arch_at; i += 4) { /* some numbers, as the real struct has */
        uint32_t w = (uint32_t)(i * 2654435761u);
        memcpy(p + i, &w, 4);
    }
    memset(p + arch_at - 4, 0, 4);
    snprintf((char *)p + arch_at, 256, "%s", arch());
    return SUCCESS;
}

#ifdef FAKE_ROCM5
EXPORT int hipGetDeviceProperties(void *p, int d)
{
    return properties(p, d, 396, 792);
}
#else
EXPORT int hipGetDevicePropertiesR0600(void *p, int d)
{
    return properties(p, d, 1160, 1472);
}

EXPORT int hipGetDevicePropertiesR0000(void *p, int d)
{
    return properties(p, d, 396, 792);
}
#endif

/* ---- memory ------------------------------------------------------------------------------------- */

EXPORT int hipMalloc(void **p, size_t bytes)
{
    trace("hipMalloc");
    int e = injected("hipMalloc", OUT_OF_MEMORY);
    if (e)
        return e;
    *p = malloc(bytes);
    /* fresh memory holds garbage, as a device's does: libkcrt must clear it */
    if (*p)
        memset(*p, 0xa5, bytes);
    state.live_allocations += *p != NULL;
    return *p ? SUCCESS : OUT_OF_MEMORY;
}

EXPORT int hipFree(void *p)
{
    trace("hipFree");
    state.live_allocations -= p != NULL;
    free(p);
    return SUCCESS;
}

EXPORT int hipMemcpyAsync(void *dst, const void *src, size_t bytes, int kind, void *stream)
{
    trace(kind == 1   ? "hipMemcpyAsync(HtoD)"
          : kind == 2 ? "hipMemcpyAsync(DtoH)"
          : kind == 3 ? "hipMemcpyAsync(DtoD)"
                      : "hipMemcpyAsync(?)");
    if (!stream || kind < 1 || kind > 3)
        return INVALID_VALUE;
    memcpy(dst, src, bytes);
    return SUCCESS;
}

EXPORT int hipMemsetAsync(void *dst, int value, size_t bytes, void *stream)
{
    trace("hipMemsetAsync");
    if (!stream)
        return INVALID_VALUE;
    memset(dst, value, bytes);
    clock_ms += FAKE_MEMSET_MS;
    return SUCCESS;
}

/* ---- streams and events --------------------------------------------------------------------------- */

typedef struct fake_stream {
    unsigned flags;
} fake_stream;

typedef struct fake_event {
    bool recorded;
    float t;
} fake_event;

EXPORT int hipStreamCreateWithFlags(void **s, unsigned flags)
{
    trace("hipStreamCreateWithFlags");
    fake_stream *st = calloc(1, sizeof(*st));
    st->flags = flags;
    *s = st;
    state.live_streams++;
    return SUCCESS;
}

EXPORT int hipStreamSynchronize(void *s)
{
    trace("hipStreamSynchronize");
    if (!s)
        return INVALID_HANDLE;
    return injected("hipStreamSynchronize", ILLEGAL_ADDRESS);
}

EXPORT int hipStreamDestroy(void *s)
{
    trace("hipStreamDestroy");
    state.live_streams--;
    free(s);
    return SUCCESS;
}

EXPORT int hipEventCreate(void **e)
{
    *e = calloc(1, sizeof(fake_event));
    state.live_events++;
    return SUCCESS;
}

EXPORT int hipEventRecord(void *e, void *s)
{
    trace("hipEventRecord");
    if (!e || !s)
        return INVALID_HANDLE;
    ((fake_event *)e)->recorded = true;
    ((fake_event *)e)->t = clock_ms;
    return SUCCESS;
}

EXPORT int hipEventSynchronize(void *e)
{
    trace("hipEventSynchronize");
    return e && ((fake_event *)e)->recorded ? SUCCESS : INVALID_HANDLE;
}

EXPORT int hipEventElapsedTime(float *ms, void *a, void *b)
{
    trace("hipEventElapsedTime");
    const fake_event *x = a, *y = b;
    if (!x || !y || !x->recorded || !y->recorded)
        return INVALID_HANDLE;
    *ms = y->t - x->t;
    return SUCCESS;
}

EXPORT int hipEventDestroy(void *e)
{
    state.live_events--;
    free(e);
    return SUCCESS;
}

/* ---- modules and launches --------------------------------------------------------------------------- */

typedef struct fake_function {
    char name[128];
} fake_function;

typedef struct fake_module {
    unsigned char *image;
    size_t size;
    fake_function fns[8]; /* live as long as the module, as HIP's do */
    int nfns;
} fake_module;

static uint64_t u64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* An ELF's size from its header: the section headers come last in the
 * objects ld.lld writes. */
static size_t elf_size(const unsigned char *p)
{
    uint64_t shoff = u64(p + 0x28);
    unsigned shentsize = p[0x3a] | p[0x3b] << 8, shnum = p[0x3c] | p[0x3d] << 8;
    return (size_t)(shoff + (uint64_t)shentsize * shnum);
}

static bool contains(const unsigned char *hay, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(hay + i, needle, k) == 0)
            return true;
    return false;
}

EXPORT int hipModuleLoadData(void **module, const void *image)
{
    trace("hipModuleLoadData");
    int e = injected("hipModuleLoadData", INVALID_IMAGE);
    const unsigned char *p = image;
    if (e)
        return e;
    if (memcmp(p, "\177ELF", 4) != 0 || p[4] != 2 || (p[18] | p[19] << 8) != 224)
        return INVALID_IMAGE;
    char want[96];
    snprintf(want, sizeof(want), "amdgcn-amd-amdhsa--%.*s", (int)strcspn(arch(), ":"), arch());
    fake_module *m = calloc(1, sizeof(*m));
    m->size = elf_size(p);
    m->image = malloc(m->size);
    memcpy(m->image, p, m->size);
    if (!contains(m->image, m->size, want)) { /* a code object for another processor */
        free(m->image);
        free(m);
        return NO_BINARY_FOR_GPU;
    }
    free(state.image);
    state.image = malloc(m->size);
    memcpy(state.image, m->image, m->size);
    state.image_size = m->size;
    state.live_modules++;
    *module = m;
    return SUCCESS;
}

EXPORT int hipModuleUnload(void *module)
{
    trace("hipModuleUnload");
    fake_module *m = module;
    free(m->image);
    free(m);
    state.live_modules--;
    return SUCCESS;
}

EXPORT int hipModuleGetFunction(void **f, void *module, const char *name)
{
    trace("hipModuleGetFunction");
    fake_module *m = module;
    char symbol[160];
    snprintf(symbol, sizeof(symbol), "%s.kd", name); /* the kernel descriptor's symbol */
    if (!contains(m->image, m->size, symbol))
        return NOT_FOUND;
    fake_function *fn = &m->fns[m->nfns++ % 8];
    snprintf(fn->name, sizeof(fn->name), "%s", name);
    *f = fn;
    return SUCCESS;
}

EXPORT int hipModuleLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                 unsigned bz, unsigned shared, void *stream, void **params, void **extra)
{
    trace("hipModuleLaunchKernel");
    int e = injected("hipModuleLaunchKernel", LAUNCH_OUT_OF_RESOURCES);
    if (e)
        return e;
    if (!f || !stream || (params && extra))
        return INVALID_VALUE;
    fake_launch *l = &state.last;
    memset(l, 0, sizeof(*l));
    unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
    memcpy(l->grid, g, sizeof(g));
    memcpy(l->block, b, sizeof(b));
    l->shared = shared;
    l->stream = stream;
    l->kernel_params_null = params == NULL;
    l->extra_null = extra == NULL;
    snprintf(l->function, sizeof(l->function), "%s", ((fake_function *)f)->name);
    if (extra) {
        l->extra_well_formed =
            extra[0] == (void *)0x01 && extra[2] == (void *)0x02 && extra[4] == (void *)0x03;
        if (!l->extra_well_formed)
            return INVALID_VALUE;
        l->size = *(size_t *)extra[3];
        if (l->size > sizeof(l->args))
            return INVALID_VALUE;
        memcpy(l->args, extra[1], l->size);
    }
    state.launches++;
    clock_ms += FAKE_LAUNCH_MS;
    return SUCCESS;
}
