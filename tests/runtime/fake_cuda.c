/*
 * fake_cuda.c — a stand-in for the NVIDIA driver's libcuda.so.1 with the
 * entry points libkcrt's CUDA backend uses, written from the CUDA Driver
 * API reference (not from libkcrt's cuda_api.h). See fake_gpu.h for what it
 * remembers and how a test steers it.
 *
 * Like the real driver it exports the versioned symbols cuda.h maps names
 * to (cuMemAlloc_v2, cuCtxPushCurrent_v2, …) — and, like a driver before
 * CUDA 12.8, only the first cuEventElapsedTime. Calls that need a context
 * fail with CUDA_ERROR_INVALID_CONTEXT when none is current, so a backend
 * that forgets to push its context is caught. A launch gathers
 * kernelParams into the parameter space the module's PTX declares for the
 * function: each .param at its alignment, with its size, as the driver
 * does.
 */
#include "fake_gpu.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* CUresult values (CUDA Driver API reference, "CUresult") */
enum {
    SUCCESS = 0,
    INVALID_VALUE = 1,
    OUT_OF_MEMORY = 2,
    NO_DEVICE = 100,
    INVALID_DEVICE = 101,
    INVALID_CONTEXT = 201,
    INVALID_PTX = 218,
    UNSUPPORTED_PTX_VERSION = 222,
    INVALID_HANDLE = 400,
    NOT_FOUND = 500,
    ILLEGAL_ADDRESS = 700,
    LAUNCH_OUT_OF_RESOURCES = 701,
    SYSTEM_DRIVER_MISMATCH = 803,
};

static const struct {
    int code;
    const char *name, *text;
} errors[] = {
    {SUCCESS, "CUDA_SUCCESS", "no error"},
    {INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     "the provided PTX was compiled with an "
     "unsupported toolchain."},
    {INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "too many resources requested for launch"},
    {SYSTEM_DRIVER_MISMATCH, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
     "system has unsupported display driver / cuda "
     "driver combination"},
};

static fake_state state;
static float clock_ms;
static int primary_refs;
static int primary_context; /* its address is the context handle */

EXPORT fake_state *fake_cuda_state(void)
{
    return &state;
}

EXPORT void fake_cuda_reset(void)
{
    free(state.image);
    int depth = state.context_depth;
    memset(&state, 0, sizeof(state));
    state.context_depth = depth;
}

static void trace(const char *call)
{
    size_t at = strlen(state.trace);
    snprintf(state.trace + at, sizeof(state.trace) - at, "%s%s", at ? " " : "", call);
}

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

static int cc(void)
{
    const char *v = getenv("FAKE_GPU_CC");
    return v && *v ? atoi(v) : 89;
}

static int need_context(void)
{
    return state.context_depth > 0 ? SUCCESS : INVALID_CONTEXT;
}

/* ---- errors, versions, devices ----------------------------------------------------------------------- */

EXPORT int cuGetErrorName(int e, const char **s)
{
    for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
        if (errors[i].code == e)
            return *s = errors[i].name, SUCCESS;
    *s = NULL;
    return INVALID_VALUE;
}

EXPORT int cuGetErrorString(int e, const char **s)
{
    for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
        if (errors[i].code == e)
            return *s = errors[i].text, SUCCESS;
    *s = NULL;
    return INVALID_VALUE;
}

EXPORT int cuInit(unsigned flags)
{
    trace("cuInit");
    if (flags != 0)
        return INVALID_VALUE;
    int e = injected("cuInit", SYSTEM_DRIVER_MISMATCH);
    return e ? e : devices() == 0 ? NO_DEVICE : SUCCESS;
}

EXPORT int cuDriverGetVersion(int *v)
{
    *v = 12040; /* 12.4 */
    return SUCCESS;
}

EXPORT int cuDeviceGetCount(int *n)
{
    *n = devices();
    return SUCCESS;
}

EXPORT int cuDeviceGet(int *dev, int ordinal)
{
    if (ordinal < 0 || ordinal >= devices())
        return INVALID_DEVICE;
    *dev = ordinal;
    return SUCCESS;
}

EXPORT int cuDeviceGetName(char *name, int len, int dev)
{
    if (dev < 0 || dev >= devices())
        return INVALID_DEVICE;
    snprintf(name, (size_t)len, "NVIDIA GeForce RTX 4090 (fake %d)", dev);
    return SUCCESS;
}

/* CUdevice_attribute numbers (cuda.h) */
EXPORT int cuDeviceGetAttribute(int *v, int attr, int dev)
{
    if (dev < 0 || dev >= devices())
        return INVALID_DEVICE;
    switch (attr) {
    case 1: *v = 1024; break; /* MAX_THREADS_PER_BLOCK */
    case 2:
    case 3: *v = 1024; break;       /* MAX_BLOCK_DIM_X, Y */
    case 4: *v = 64; break;         /* MAX_BLOCK_DIM_Z */
    case 5: *v = 2147483647; break; /* MAX_GRID_DIM_X */
    case 6:
    case 7: *v = 65535; break;      /* MAX_GRID_DIM_Y, Z */
    case 8: *v = 49152; break;      /* MAX_SHARED_MEMORY_PER_BLOCK */
    case 10: *v = 32; break;        /* WARP_SIZE */
    case 16: *v = 128; break;       /* MULTIPROCESSOR_COUNT */
    case 18: *v = 0; break;         /* INTEGRATED */
    case 75: *v = cc() / 10; break; /* COMPUTE_CAPABILITY_MAJOR */
    case 76: *v = cc() % 10; break; /* COMPUTE_CAPABILITY_MINOR */
    default: return INVALID_VALUE;
    }
    return SUCCESS;
}

EXPORT int cuDeviceTotalMem_v2(size_t *bytes, int dev)
{
    *bytes = (size_t)24 << 30;
    return dev >= 0 && dev < devices() ? SUCCESS : INVALID_DEVICE;
}

EXPORT int cuDeviceGetPCIBusId(char *id, int len, int dev)
{
    snprintf(id, (size_t)len, "0000:FB:%02X.0", dev);
    return dev >= 0 && dev < devices() ? SUCCESS : INVALID_DEVICE;
}

/* ---- contexts ------------------------------------------------------------------------------------------ */

EXPORT int cuDevicePrimaryCtxRetain(void **ctx, int dev)
{
    trace("cuDevicePrimaryCtxRetain");
    if (dev < 0 || dev >= devices())
        return INVALID_DEVICE;
    primary_refs++;
    *ctx = &primary_context;
    return SUCCESS;
}

EXPORT int cuDevicePrimaryCtxRelease_v2(int dev)
{
    trace("cuDevicePrimaryCtxRelease");
    (void)dev;
    return primary_refs-- > 0 ? SUCCESS : INVALID_CONTEXT;
}

EXPORT int cuCtxPushCurrent_v2(void *ctx)
{
    if (ctx != &primary_context)
        return INVALID_CONTEXT;
    state.context_depth++;
    return SUCCESS;
}

EXPORT int cuCtxPopCurrent_v2(void **ctx)
{
    if (state.context_depth <= 0)
        return INVALID_CONTEXT;
    state.context_depth--;
    if (ctx)
        *ctx = &primary_context;
    return SUCCESS;
}

/* ---- memory ----------------------------------------------------------------------------------------------
 */

typedef unsigned long long devptr;

EXPORT int cuMemAlloc_v2(devptr *p, size_t bytes)
{
    trace("cuMemAlloc");
    int e = need_context();
    if (!e)
        e = injected("cuMemAlloc", OUT_OF_MEMORY);
    if (e)
        return e;
    void *m = malloc(bytes);
    if (m)
        memset(m, 0xa5, bytes); /* garbage, as fresh device memory holds */
    *p = (devptr)(uintptr_t)m;
    state.live_allocations += m != NULL;
    return m ? SUCCESS : OUT_OF_MEMORY;
}

EXPORT int cuMemFree_v2(devptr p)
{
    trace("cuMemFree");
    int e = need_context();
    if (e)
        return e;
    state.live_allocations -= p != 0;
    free((void *)(uintptr_t)p);
    return SUCCESS;
}

EXPORT int cuMemcpyHtoDAsync_v2(devptr dst, const void *src, size_t n, void *stream)
{
    trace("cuMemcpyHtoDAsync");
    int e = need_context();
    if (e || !stream)
        return e ? e : INVALID_HANDLE;
    memcpy((void *)(uintptr_t)dst, src, n);
    return SUCCESS;
}

EXPORT int cuMemcpyDtoHAsync_v2(void *dst, devptr src, size_t n, void *stream)
{
    trace("cuMemcpyDtoHAsync");
    int e = need_context();
    if (e || !stream)
        return e ? e : INVALID_HANDLE;
    memcpy(dst, (const void *)(uintptr_t)src, n);
    return SUCCESS;
}

EXPORT int cuMemcpyDtoDAsync_v2(devptr dst, devptr src, size_t n, void *stream)
{
    trace("cuMemcpyDtoDAsync");
    int e = need_context();
    if (e || !stream)
        return e ? e : INVALID_HANDLE;
    memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
    return SUCCESS;
}

EXPORT int cuMemsetD8Async(devptr dst, unsigned char value, size_t n, void *stream)
{
    trace("cuMemsetD8Async");
    int e = need_context();
    if (e || !stream)
        return e ? e : INVALID_HANDLE;
    memset((void *)(uintptr_t)dst, value, n);
    clock_ms += FAKE_MEMSET_MS;
    return SUCCESS;
}

/* ---- streams and events ------------------------------------------------------------------------------- */

typedef struct fake_event {
    bool recorded;
    float t;
} fake_event;

EXPORT int cuStreamCreate(void **s, unsigned flags)
{
    trace("cuStreamCreate");
    int e = need_context();
    if (e)
        return e;
    unsigned *st = malloc(sizeof(unsigned));
    *st = flags;
    *s = st;
    state.live_streams++;
    return SUCCESS;
}

EXPORT int cuStreamSynchronize(void *s)
{
    trace("cuStreamSynchronize");
    int e = need_context();
    if (e || !s)
        return e ? e : INVALID_HANDLE;
    return injected("cuStreamSynchronize", ILLEGAL_ADDRESS);
}

EXPORT int cuStreamDestroy_v2(void *s)
{
    trace("cuStreamDestroy");
    state.live_streams--;
    free(s);
    return SUCCESS;
}

EXPORT int cuEventCreate(void **e, unsigned flags)
{
    int r = need_context();
    if (r || flags != 0) /* CU_EVENT_DEFAULT: with timing */
        return r ? r : INVALID_VALUE;
    *e = calloc(1, sizeof(fake_event));
    state.live_events++;
    return SUCCESS;
}

EXPORT int cuEventRecord(void *e, void *s)
{
    trace("cuEventRecord");
    if (!e || !s)
        return INVALID_HANDLE;
    ((fake_event *)e)->recorded = true;
    ((fake_event *)e)->t = clock_ms;
    return SUCCESS;
}

EXPORT int cuEventSynchronize(void *e)
{
    trace("cuEventSynchronize");
    return e && ((fake_event *)e)->recorded ? SUCCESS : INVALID_HANDLE;
}

EXPORT int cuEventElapsedTime(float *ms, void *a, void *b) /* a driver before 12.8: no _v2 */
{
    trace("cuEventElapsedTime");
    const fake_event *x = a, *y = b;
    if (!x || !y || !x->recorded || !y->recorded)
        return INVALID_HANDLE;
    *ms = y->t - x->t;
    return SUCCESS;
}

EXPORT int cuEventDestroy_v2(void *e)
{
    state.live_events--;
    free(e);
    return SUCCESS;
}

/* ---- modules: PTX, its entries and their parameters
 * --------------------------------------------------------- */

typedef struct fake_param {
    unsigned size, align;
} fake_param;

typedef struct fake_function {
    char name[128];
    int nparams;
    fake_param params[64];
} fake_function;

typedef struct fake_module {
    char *ptx;
    fake_function fns[8];
    int nfns;
} fake_module;

/* The size and alignment of one ".param" declaration: ".param .u32 x",
 * ".param .align 2 .b8 x[2]". */
static bool param_of(const char *line, fake_param *p)
{
    static const struct {
        const char *type;
        unsigned size;
    } types[] = {{".u64", 8}, {".s64", 8}, {".b64", 8}, {".f64", 8}, {".u32", 4}, {".s32", 4}, {".b32", 4},
                 {".f32", 4}, {".u16", 2}, {".s16", 2}, {".b16", 2}, {".f16", 2}, {".u8", 1},  {".b8", 1}};
    const char *al = strstr(line, ".align");
    const char *br = strchr(line, '[');
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (strstr(line, types[i].type)) {
            p->size = types[i].size * (br ? (unsigned)atoi(br + 1) : 1);
            p->align = al ? (unsigned)atoi(al + 6) : types[i].size;
            return p->size > 0 && p->align > 0;
        }
    return false;
}

/* The .entry `name` of the PTX and its parameters. */
static bool parse_entry(const char *ptx, const char *name, fake_function *f)
{
    char head[160];
    snprintf(head, sizeof(head), ".entry %s(", name);
    const char *e = strstr(ptx, head);
    if (!e)
        return false;
    const char *end = strchr(e, ')');
    memset(f, 0, sizeof(*f));
    snprintf(f->name, sizeof(f->name), "%s", name);
    for (const char *p = strstr(e, ".param"); p && p < end && f->nparams < 64; p = strstr(p + 1, ".param")) {
        char line[160];
        size_t n = strcspn(p, ",\n)");
        snprintf(line, sizeof(line), "%.*s", (int)(n < 159 ? n : 159), p);
        if (!param_of(line, &f->params[f->nparams++]))
            return false;
    }
    return true;
}

/* The JIT options libkcrt may pass (CUjit_option numbers, cuda.h). */
static void jit_logs(unsigned n, const int *opt, void **val, const char *info, const char *error)
{
    char *info_buf = NULL, *error_buf = NULL;
    size_t info_len = 0, error_len = 0;
    for (unsigned i = 0; i < n; i++)
        switch (opt[i]) {
        case 3: info_buf = val[i]; break;                     /* CU_JIT_INFO_LOG_BUFFER */
        case 4: info_len = (size_t)(uintptr_t)val[i]; break;  /* …_SIZE_BYTES */
        case 5: error_buf = val[i]; break;                    /* CU_JIT_ERROR_LOG_BUFFER */
        case 6: error_len = (size_t)(uintptr_t)val[i]; break; /* …_SIZE_BYTES */
        }
    if (info_buf && info_len)
        snprintf(info_buf, info_len, "%s", info);
    if (error_buf && error_len)
        snprintf(error_buf, error_len, "%s", error);
}

EXPORT int cuModuleLoadDataEx(void **module, const void *image, unsigned n, int *opt, void **val)
{
    trace("cuModuleLoadDataEx");
    int e = need_context();
    if (e)
        return e;
    const char *ptx = image; /* NUL-terminated text, as the API requires of PTX */
    const char *target = strstr(ptx, ".target sm_");
    int sm = target ? atoi(target + 11) : 0;
    if ((e = injected("cuModuleLoadDataEx", INVALID_PTX)) != SUCCESS) {
        jit_logs(n, opt, val, "", "ptxas fatal   : fake JIT failure for the test");
        return e;
    }
    if (!strstr(ptx, ".version") || sm == 0 || sm > cc()) {
        jit_logs(n, opt, val, "",
                 "ptxas fatal   : SM version specified by .target is higher than the device's");
        return INVALID_PTX;
    }
    char info[128];
    snprintf(info, sizeof(info), "fake JIT: sm_%d PTX compiled for sm_%d", sm, cc());
    jit_logs(n, opt, val, info, "");
    fake_module *m = calloc(1, sizeof(*m));
    m->ptx = strdup(ptx);
    free(state.image);
    state.image = (unsigned char *)strdup(ptx);
    state.image_size = strlen(ptx);
    state.live_modules++;
    *module = m;
    return SUCCESS;
}

EXPORT int cuModuleUnload(void *module)
{
    trace("cuModuleUnload");
    int e = need_context();
    if (e)
        return e;
    fake_module *m = module;
    free(m->ptx);
    free(m);
    state.live_modules--;
    return SUCCESS;
}

EXPORT int cuModuleGetFunction(void **f, void *module, const char *name)
{
    trace("cuModuleGetFunction");
    int e = need_context();
    if (e)
        return e;
    fake_module *m = module;
    fake_function *fn = &m->fns[m->nfns++ % 8];
    if (!parse_entry(m->ptx, name, fn))
        return NOT_FOUND;
    *f = fn;
    return SUCCESS;
}

EXPORT int cuFuncGetAttribute(int *v, int attr, void *f)
{
    if (!f)
        return INVALID_HANDLE;
    switch (attr) {
    case 0: *v = 1024; break; /* CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK */
    case 4: *v = 16; break;   /* CU_FUNC_ATTRIBUTE_NUM_REGS */
    default: return INVALID_VALUE;
    }
    return SUCCESS;
}

/* The parameter space as the kernel sees it: kernelParams[i] gathered at
 * the offsets the PTX's parameter list implies. */
static int gather(const fake_function *fn, void **params, fake_launch *l)
{
    size_t at = 0;
    for (int i = 0; i < fn->nparams; i++) {
        const fake_param *p = &fn->params[i];
        at = (at + p->align - 1) / p->align * p->align;
        if (!params || !params[i] || at + p->size > sizeof(l->args))
            return INVALID_VALUE;
        memcpy(l->args + at, params[i], p->size);
        at += p->size;
    }
    l->size = at;
    return SUCCESS;
}

EXPORT int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                          unsigned bz, unsigned shared, void *stream, void **params, void **extra)
{
    trace("cuLaunchKernel");
    int e = need_context();
    if (!e)
        e = injected("cuLaunchKernel", LAUNCH_OUT_OF_RESOURCES);
    if (e)
        return e;
    if (!f || !stream)
        return INVALID_HANDLE;
    const fake_function *fn = f;
    fake_launch *l = &state.last;
    memset(l, 0, sizeof(*l));
    unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
    memcpy(l->grid, g, sizeof(g));
    memcpy(l->block, b, sizeof(b));
    l->shared = shared;
    l->stream = stream;
    l->kernel_params_null = params == NULL;
    l->extra_null = extra == NULL;
    snprintf(l->function, sizeof(l->function), "%s", fn->name);
    if (extra) /* this fake takes only kernelParams, which is what libkcrt uses */
        return INVALID_VALUE;
    if ((e = gather(fn, params, l)) != SUCCESS)
        return e;
    state.launches++;
    clock_ms += FAKE_LAUNCH_MS;
    return SUCCESS;
}
