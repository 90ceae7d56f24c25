/*
 * test_rt_gpu_fake.c — libkcrt's HIP and CUDA backends without a GPU:
 * with their libraries missing or not what they claim, and through fake
 * drivers (fake_hip.c, fake_cuda.c; fake_gpu.h says what they do) that
 * record what the backends hand them.
 *
 * What it shows:
 *   - a missing library, a library that is not HIP or CUDA, the CUDA
 *     toolkit's stub libcuda, and a driver with no device each give their
 *     own status and words, and auto falls back to Vulkan;
 *   - devices are listed HIP, CUDA, Vulkan, with keys, families and targets,
 *     and auto prefers HIP, then CUDA, on equal devices;
 *   - the variant loaded is the device's gfx code object (ROCm 6 and 5
 *     property layouts alike) and the highest sm_NN PTX not newer than the
 *     device;
 *   - the kernel-argument block is what the code object's metadata
 *     (llvm-readelf --notes) and the PTX's .param list declare, value by
 *     value, with buffers as their device pointers; HIP gets it through
 *     `extra` with kernelParams NULL, CUDA through kernelParams;
 *   - launches are queued without waiting, kcrt_finish waits, transfers
 *     wait, timing brackets each launch with events; contexts and current
 *     devices are left as they were found;
 *   - failures of the driver reach kcrt_error with the call's name and the
 *     driver's words (the CUDA JIT's log too);
 *   - a context auto put on HIP moves to Vulkan when its first bundle has
 *     only SPIR-V, and only then.
 *
 * The fakes cannot run kernels: whether the kernels compute the right
 * thing on a real GPU is docs/gpu-validation.md's business.
 */
#include "kc_test.h"

#if !defined(_WIN32)
#include <dlfcn.h> /* kc_test_win.h has it on Windows */
#endif
#include <sqlite3.h>
#include <unistd.h>

#include "fake_gpu.h"
#include "kc/kcrt.h"
#include "kcrt_internal.h"

#ifdef RT_GPU_BUNDLE_PATH
#define RT_GPU_BUNDLE RT_GPU_BUNDLE_PATH
#else
#define RT_GPU_BUNDLE NULL /* no LLVM backend in this build: no code objects or PTX to load */
#endif

static fake_state *hip, *cuda;

/* The two fake drivers, and what their calls are named in a trace. */
typedef struct gpu_api {
    const char *backend;
    fake_state **fake;
    const char *launch, *sync, *alloc, *release, *memset, *record, *wait, *elapsed;
} gpu_api;

static const gpu_api apis[] = {
    {"hip", &hip, "hipModuleLaunchKernel", "hipStreamSynchronize", "hipMalloc", "hipFree", "hipMemsetAsync",
     "hipEventRecord", "hipEventSynchronize", "hipEventElapsedTime"},
    {"cuda", &cuda, "cuLaunchKernel", "cuStreamSynchronize", "cuMemAlloc", "cuMemFree", "cuMemsetD8Async",
     "cuEventRecord", "cuEventSynchronize", "cuEventElapsedTime"},
};
static void (*hip_reset)(void), (*cuda_reset)(void);
static bool have_vulkan;

/* ---- helpers ----------------------------------------------------------------------------------- */

#define ASSERT_STATUS(expected, expr, ctx)                                                                   \
    do {                                                                                                     \
        kcrt_status s_ = (expr);                                                                             \
        if (s_ != (expected))                                                                                \
            fail_msg("%s: expected %s, got %s: %s", #expr, kcrt_status_name(expected), kcrt_status_name(s_), \
                     kcrt_error(ctx));                                                                       \
    } while (0)
#define ASSERT_OK(expr, ctx) ASSERT_STATUS(KCRT_OK, expr, ctx)

static void *must_sym(void *so, const char *name)
{
    void *p = dlsym(so, name);
    if (!p)
        fail_msg("the fake has no %s", name);
    return p;
}

/* The fakes' state, from the libraries libkcrt loads (the same copy). */
static void load_fakes(void)
{
    void *h = dlopen(FAKE_HIP, RTLD_NOW), *c = dlopen(FAKE_CUDA, RTLD_NOW);
    if (!h || !c)
        fail_msg("cannot load the fakes: %s", dlerror());
    fake_state_fn hs, cs;
    void *p = must_sym(h, "fake_hip_state");
    memcpy(&hs, &p, sizeof(p));
    p = must_sym(c, "fake_cuda_state");
    memcpy(&cs, &p, sizeof(p));
    p = must_sym(h, "fake_hip_reset");
    memcpy(&hip_reset, &p, sizeof(p));
    p = must_sym(c, "fake_cuda_reset");
    memcpy(&cuda_reset, &p, sizeof(p));
    hip = hs();
    cuda = cs();
}

/* Each test starts from the default fakes: one device each. */
static int fresh(void **state)
{
    (void)state;
    setenv("KCRT_HIP_LIBRARY", FAKE_HIP, 1);
    setenv("KCRT_CUDA_LIBRARY", FAKE_CUDA, 1);
    unsetenv("FAKE_GPU_DEVICES");
    unsetenv("FAKE_GPU_ARCH");
    unsetenv("FAKE_GPU_CC");
    unsetenv("FAKE_GPU_FAIL");
    unsetenv("KCRT_BACKEND");
    unsetenv("KCRT_DEVICE");
    hip_reset();
    cuda_reset();
    return 0;
}

static kcrt_context *open_on(const char *backend)
{
    kcrt_context *c = NULL;
    kcrt_options o = {backend, -1};
    kcrt_status s = kcrt_open(&c, &o);
    if (s != KCRT_OK)
        fail_msg("kcrt_open(%s): %s: %s", backend ? backend : "auto", kcrt_status_name(s), kcrt_error(c));
    return c;
}

static bool need_bundle(void)
{
    if (RT_GPU_BUNDLE)
        return true;
    fprintf(stderr, "    (skipped: this build has no LLVM backend, so no code objects or PTX)\n");
    return false;
}

static kcrt_bundle *load_bundle_at(kcrt_context *c, const char *path)
{
    kcrt_bundle *b = NULL;
    ASSERT_OK(kcrt_bundle_load(c, path, &b), c);
    return b;
}

static kcrt_bundle *load_bundle(kcrt_context *c)
{
    return load_bundle_at(c, RT_GPU_BUNDLE);
}

/* Does the trace hold these calls in this order (others may come between)? */
static void assert_in_order(const char *trace, const char *const *calls, int n)
{
    const char *at = trace;
    for (int i = 0; i < n; i++) {
        const char *next = strstr(at, calls[i]);
        if (!next)
            fail_msg("expected '%s' (call %d of the sequence) after position %d of the trace:\n%s", calls[i],
                     i, (int)(at - trace), trace);
        at = next + strlen(calls[i]);
    }
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* A value in the bundle, for comparing with what the drivers got. */
static char *bundle_args(const char *kernel, const char *target, int *args_size)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    char *out = NULL;
    assert_int_equal(SQLITE_OK, sqlite3_open_v2(RT_GPU_BUNDLE, &db, SQLITE_OPEN_READONLY, NULL));
    assert_int_equal(SQLITE_OK, sqlite3_prepare_v2(db,
                                                   "SELECT args, args_size FROM variants v JOIN kernels k ON "
                                                   "k.id = v.kernel_id WHERE k.name = ?1 AND v.target = ?2",
                                                   -1, &st, NULL));
    sqlite3_bind_text(st, 1, kernel, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, target, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) {
        out = strdup((const char *)sqlite3_column_text(st, 0));
        *args_size = sqlite3_column_int(st, 1);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    if (!out)
        fail_msg("the bundle has no %s variant of %s", target, kernel);
    return out;
}

/* ---- mix: every kind of argument ---------------------------------------------------------------------- */

enum { MIX_N = 100 };
#define MIX_H 0x4248u  /* 3.140625 */
#define MIX_H2 0xc000u /* -2 */
#define MIX_A 2.5f
#define MIX_U 7u

typedef struct mix_run {
    kcrt_buffer *x, *y, *z;
    float hx[MIX_N], hy[MIX_N];
    int hz[MIX_N];
} mix_run;

static void mix_buffers(kcrt_context *c, mix_run *r)
{
    for (int i = 0; i < MIX_N; i++)
        r->hx[i] = (float)i * 0.5f, r->hy[i] = 1000.0f + (float)i, r->hz[i] = -i;
    ASSERT_OK(kcrt_buffer_create(c, sizeof(r->hx), &r->x), c);
    ASSERT_OK(kcrt_buffer_create(c, sizeof(r->hy), &r->y), c);
    ASSERT_OK(kcrt_buffer_create(c, sizeof(r->hz), &r->z), c);
    ASSERT_OK(kcrt_buffer_write(r->x, 0, r->hx, sizeof(r->hx)), c);
    ASSERT_OK(kcrt_buffer_write(r->y, 0, r->hy, sizeof(r->hy)), c);
    ASSERT_OK(kcrt_buffer_write(r->z, 0, r->hz, sizeof(r->hz)), c);
}

static void mix_args(const mix_run *r, kcrt_arg *a)
{
    kcrt_arg args[] = {KCRT_I32(MIX_N), KCRT_F16(MIX_H), KCRT_BOOL(true),  KCRT_BUF(r->x), KCRT_F32(MIX_A),
                       KCRT_BUF(r->y),  KCRT_U32(MIX_U), KCRT_F16(MIX_H2), KCRT_BUF(r->z)};
    memcpy(a, args, sizeof(args));
}

/* The bytes parameter `name` must have in the block, or for a buffer the
 * host data its pointer must point at. */
static void check_mix_value(const char *name, const unsigned char *at, long size, const mix_run *r)
{
    uint32_t w = 0;
    uint16_t h = 0;
    float f;
    if (!strcmp(name, "x") || !strcmp(name, "y") || !strcmp(name, "z")) {
        assert_int_equal(8, size);
        uint64_t p;
        memcpy(&p, at, 8);
        const void *want = !strcmp(name, "x")   ? (const void *)r->hx
                           : !strcmp(name, "y") ? (const void *)r->hy
                                                : r->hz;
        /* the fakes' device memory is host memory: the pointer shows which buffer it is */
        assert_memory_equal(want, (const void *)(uintptr_t)p, sizeof(r->hx));
        return;
    }
    if (!strcmp(name, "h") || !strcmp(name, "h2")) {
        assert_int_equal(2, size);
        memcpy(&h, at, 2);
        assert_int_equal(!strcmp(name, "h") ? MIX_H : MIX_H2, h);
        return;
    }
    assert_int_equal(4, size);
    memcpy(&w, at, 4);
    memcpy(&f, at, 4);
    if (!strcmp(name, "n"))
        assert_int_equal(MIX_N, (int32_t)w);
    else if (!strcmp(name, "on"))
        assert_int_equal(1, w);
    else if (!strcmp(name, "a"))
        assert_true(f == MIX_A);
    else if (!strcmp(name, "u"))
        assert_int_equal(MIX_U, w);
    else
        fail_msg("unexpected parameter '%s'", name);
}

/* ---- AMDHSA metadata, from llvm-readelf --notes ----------------------------------------------------- */

typedef struct note_arg {
    char name[64], kind[32];
    long offset, size;
} note_arg;

typedef struct notes {
    note_arg args[32];
    int nargs;
    long kernarg_size;
    char target[96];
} notes;

static const char *readelf(void)
{
    static const char *const tools[] = {"/usr/bin/llvm-readelf-19", "/usr/lib/llvm-19/bin/llvm-readelf",
                                        "/usr/bin/llvm-readelf"};
    for (size_t i = 0; i < sizeof(tools) / sizeof(*tools); i++)
        if (access(tools[i], X_OK) == 0)
            return tools[i];
    return NULL;
}

/* "  .key:   value" (without a YAML !str tag); the key's indent */
static int key_value(char *line, char **key, char **value)
{
    int indent = (int)strspn(line, " ");
    char *s = line + indent;
    if (!strncmp(s, "- ", 2))
        s += 2, indent += 2;
    char *colon = strchr(s, ':');
    *key = s;
    *value = "";
    if (colon) {
        *colon = 0;
        char *v = colon + 1 + strspn(colon + 1, " ");
        if (!strncmp(v, "!str ", 5))
            v += 5;
        v[strcspn(v, "\n")] = 0;
        *value = v;
    }
    return indent;
}

/* The kernel's arguments (indent 8: one per "- ." item) and sizes. */
static void read_notes(const unsigned char *image, size_t size, notes *n)
{
    char path[] = "/tmp/kcrt_fake_XXXXXX", cmd[512], line[512];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal((ssize_t)size, write(fd, image, size));
    close(fd);
    snprintf(cmd, sizeof(cmd), "'%s' --notes '%s'", readelf(), path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    memset(n, 0, sizeof(*n));
    while (fgets(line, sizeof(line), p)) {
        bool item = strstr(line, "- .") != NULL;
        char *key, *v;
        int indent = key_value(line, &key, &v);
        if (!strcmp(key, "amdhsa.target"))
            snprintf(n->target, sizeof(n->target), "%s", v);
        if (indent == 4 && !strcmp(key, ".kernarg_segment_size"))
            n->kernarg_size = atol(v);
        if (indent != 8 || key[0] != '.')
            continue;
        if (item && n->nargs < 32)
            n->nargs++;
        note_arg *a = &n->args[n->nargs ? n->nargs - 1 : 0];
        if (!strcmp(key, ".name"))
            snprintf(a->name, sizeof(a->name), "%s", v);
        else if (!strcmp(key, ".value_kind"))
            snprintf(a->kind, sizeof(a->kind), "%s", v);
        else if (!strcmp(key, ".offset"))
            a->offset = atol(v);
        else if (!strcmp(key, ".size"))
            a->size = atol(v);
    }
    assert_int_equal(0, pclose(p));
    unlink(path);
}

/* ---- PTX parameters, independently of the fake ------------------------------------------------------- */

typedef struct ptx_param {
    long offset, size;
} ptx_param;

/* The entry's parameters at their natural alignment (PTX ISA, "Kernel
 * Function Parameters": the parameter space is laid out in order, each
 * parameter aligned to its type's size or to its .align). */
static int ptx_params(const char *ptx, const char *entry, ptx_param *out, int max, long *end)
{
    char head[128];
    snprintf(head, sizeof(head), ".entry %s(", entry);
    const char *e = strstr(ptx, head);
    assert_non_null(e);
    const char *close = strchr(e, ')');
    int n = 0;
    long at = 0;
    for (const char *p = strstr(e, ".param"); p && p < close && n < max; p = strstr(p + 1, ".param")) {
        long size = strstr(p, ".u64") && strstr(p, ".u64") < strchr(p, '\n') ? 8
                    : strstr(p, ".b8") && strstr(p, ".b8") < strchr(p, '\n') ? atol(strchr(p, '[') + 1)
                                                                             : 4;
        const char *al = strstr(p, ".align");
        long align = al && al < strchr(p, '\n') ? atol(al + 6) : size;
        at = (at + align - 1) / align * align;
        out[n++] = (ptx_param){at, size};
        at += size;
    }
    *end = at;
    return n;
}

/* "0:4;4:2;…" against offsets and sizes */
static void assert_slots(const char *args, const long *offsets, const long *sizes, int n)
{
    const char *p = args;
    for (int i = 0; i < n; i++) {
        long o = strtol(p, (char **)&p, 10);
        assert_int_equal(':', *p);
        long s = strtol(p + 1, (char **)&p, 10);
        if (o != offsets[i] || s != sizes[i])
            fail_msg("parameter %d: the bundle says %ld:%ld, the binary %ld:%ld", i, o, s, offsets[i],
                     sizes[i]);
        p += *p == ';';
    }
    assert_int_equal(0, *p);
}

/* ---- no library, not a library, no device
 * ------------------------------------------------------------------ */

static void expect_open_fails(const char *backend, kcrt_status want, const char *words)
{
    kcrt_context *c = NULL;
    kcrt_options o = {backend, -1};
    ASSERT_STATUS(want, kcrt_open(&c, &o), c);
    ASSERT_CONTAINS(kcrt_error(c), words);
    kcrt_buffer *b;
    ASSERT_STATUS(want, kcrt_buffer_create(c, 16, &b), c); /* the failed context stays failed */
    kcrt_close(c);
}

/* Auto without HIP and CUDA: Vulkan's devices, or (no Vulkan either) every reason. */
static void expect_auto_is_vulkan(void)
{
    kcrt_context *c = NULL;
    kcrt_status s = kcrt_open(&c, NULL);
    if (have_vulkan) {
        ASSERT_OK(s, c);
        assert_string_equal("vulkan", kcrt_backend_name(c));
    } else {
        ASSERT_CONTAINS(kcrt_error(c), "hip: ");
        ASSERT_CONTAINS(kcrt_error(c), "cuda: ");
    }
    kcrt_close(c);
}

#if defined(_WIN32)
#define HIP_DEFAULT_NAMES "amdhip64_6.dll, amdhip64.dll"
#define NOT_A_DRIVER "kernel32.dll" /* loads everywhere, exports neither API */
#else
#define HIP_DEFAULT_NAMES "libamdhip64.so, libamdhip64.so.6, libamdhip64.so.5"
#define NOT_A_DRIVER "libm.so.6"
#endif

static void test_missing_libraries(void **state)
{
    (void)state;
    setenv("KCRT_HIP_LIBRARY", "/nonexistent/libamdhip64.so", 1);
    setenv("KCRT_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
    expect_open_fails("hip", KCRT_ERROR_NO_BACKEND,
                      "HIP is not available: cannot load /nonexistent/libamdhip64.so (");
    expect_open_fails("cuda", KCRT_ERROR_NO_BACKEND,
                      "CUDA is not available: cannot load /nonexistent/libcuda.so.1");
    expect_open_fails("hip", KCRT_ERROR_NO_BACKEND, "KCRT_HIP_LIBRARY=/nonexistent/libamdhip64.so names it");
    int n = -1;
    char err[1024];
    ASSERT_STATUS(KCRT_ERROR_NO_BACKEND, kcrt_devices("hip", NULL, 0, &n, err, sizeof(err)), NULL);
    assert_int_equal(0, n);
    ASSERT_CONTAINS(err, "HIP is not available");
    ASSERT_STATUS(KCRT_ERROR_NO_BACKEND, kcrt_devices("cuda", NULL, 0, &n, err, sizeof(err)), NULL);
    ASSERT_CONTAINS(err, "CUDA is not available");
    expect_auto_is_vulkan();
    /* and without any override, the default names are tried and named */
    unsetenv("KCRT_HIP_LIBRARY");
    kcrt_context *c = NULL;
    kcrt_options o = {"hip", -1};
    if (kcrt_open(&c, &o) == KCRT_ERROR_NO_BACKEND) /* unless this machine has ROCm */
        ASSERT_CONTAINS(kcrt_error(c), HIP_DEFAULT_NAMES);
    kcrt_close(c);
}

static void test_libraries_that_are_not_drivers(void **state)
{
    (void)state;
    setenv("KCRT_HIP_LIBRARY", NOT_A_DRIVER, 1);
    setenv("KCRT_CUDA_LIBRARY", NOT_A_DRIVER, 1);
    expect_open_fails("hip", KCRT_ERROR_NO_BACKEND, NOT_A_DRIVER " is not a HIP runtime: it has no hipInit");
    expect_open_fails("cuda", KCRT_ERROR_NO_BACKEND, NOT_A_DRIVER " is not a CUDA driver: it has no cuInit");
    expect_auto_is_vulkan();
}

/* The CUDA toolkit's stub libcuda exports every driver entry point (so the
 * backend's symbol names are the driver's) and fails cuInit. */
static void test_cuda_toolkit_stub(void **state)
{
    (void)state;
    static const char *const stubs[] = {"/usr/local/cuda/lib64/stubs/libcuda.so",
                                        "/usr/local/cuda/targets/x86_64-linux/lib/stubs/libcuda.so"};
    size_t stubs_checked = sizeof(stubs) / sizeof(*stubs);
    const char *stub = NULL;
#if defined(_WIN32)
    stubs_checked = 0; /* the toolkit's stub is a Linux .so */
#endif
    for (size_t i = 0; i < stubs_checked && !stub; i++)
        if (access(stubs[i], R_OK) == 0)
            stub = stubs[i];
    if (!stub) {
        fprintf(stderr, "    (skipped: no CUDA toolkit stub libcuda.so here)\n");
        return;
    }
    setenv("KCRT_CUDA_LIBRARY", stub, 1);
    expect_open_fails("cuda", KCRT_ERROR_NO_BACKEND,
                      "this is the CUDA toolkit's stub, not the driver's libcuda.so.1");
    setenv("FAKE_GPU_DEVICES", "0", 1); /* HIP: none either */
    expect_auto_is_vulkan();
}

static void test_drivers_without_devices(void **state)
{
    (void)state;
    setenv("FAKE_GPU_DEVICES", "0", 1);
    expect_open_fails("hip", KCRT_ERROR_NO_DEVICE,
                      "no hip device found (hip: HIP (" FAKE_HIP ") finds no device (hipErrorNoDevice (no "
                      "ROCm-capable device is detected)))");
    expect_open_fails("cuda", KCRT_ERROR_NO_DEVICE,
                      "finds no device (CUDA_ERROR_NO_DEVICE (no CUDA-capable device");
    int n = -1;
    char err[256];
    ASSERT_OK(kcrt_devices("hip", NULL, 0, &n, err, sizeof(err)), NULL);
    assert_int_equal(0, n);
    expect_auto_is_vulkan();
}

static void test_drivers_that_fail_to_start(void **state)
{
    (void)state;
    setenv("FAKE_GPU_FAIL", "hipInit", 1);
    expect_open_fails("hip", KCRT_ERROR_NO_DEVICE,
                      "hipInit or hipGetDeviceCount failed: hipErrorInsufficientDriver (driver version is "
                      "insufficient for runtime version); the amdgpu kernel driver is missing");
    setenv("FAKE_GPU_FAIL", "cuInit", 1);
    expect_open_fails("cuda", KCRT_ERROR_NO_DEVICE,
                      "cuInit or cuDeviceGetCount failed: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH");
    expect_open_fails("cuda", KCRT_ERROR_NO_DEVICE, "libcuda and the nvidia kernel module differ in version");
    unsetenv("FAKE_GPU_FAIL");
}

/* ---- devices ---------------------------------------------------------------------------------------------
 */

static void test_devices_and_auto_choice(void **state)
{
    (void)state;
    kcrt_device_info list[16];
    int n = 0;
    char err[256];
    ASSERT_OK(kcrt_devices(NULL, list, 16, &n, err, sizeof(err)), NULL);
    assert_true(n >= 2);
    const kcrt_device_info *h = &list[0], *c = &list[1];
    assert_string_equal("hip", h->backend);
    assert_string_equal("AMD Instinct MI210 (fake 0)", h->name);
    assert_string_equal("gfx90a", h->target);
    assert_string_equal("amd:gfx90a", h->family);
    assert_string_equal("hip:1002:0000:AMD Instinct MI210 (fake 0):HIP 6.2.41133", h->key);
    assert_string_equal("discrete", h->type_name);
    assert_int_equal(64, h->subgroup_size);
    assert_int_equal(1024, h->max_workgroup_invocations);
    assert_int_equal(65536, h->max_shared_bytes);
    assert_int_equal(60241133, h->api_version);
    assert_true(h->float16 && h->subgroups && h->subgroup_shuffle && h->float_atomics);
    assert_true(h->timestamp_period_ns > 0 && h->timestamp_valid_bits == 64);
    assert_string_equal("cuda", c->backend);
    assert_string_equal("sm_89", c->target);
    assert_string_equal("nvidia:sm_89", c->family);
    const char *key =
        "cuda:10de:0000:NVIDIA GeForce RTX 4090 (fake 0):CUDA 12.4"; /* then the module's version */
    assert_int_equal(0, strncmp(c->key, key, strlen(key)));
    assert_int_equal(32, c->subgroup_size);
    assert_int_equal(32764, c->max_push_bytes); /* CUDA 12.1 and newer on sm_70 and newer */
    assert_int_equal(49152, c->max_shared_bytes);
    assert_int_equal(64, c->max_workgroup_size[2]);
    for (int i = 2; i < n; i++)
        assert_string_equal("vulkan", list[i].backend);
    for (int i = 0; i < n; i++)
        assert_int_equal(i, list[i].index);

    /* auto: HIP first of equal devices, then CUDA */
    kcrt_context *ctx = open_on("auto");
    assert_string_equal("hip", kcrt_backend_name(ctx));
    assert_int_equal(0, kcrt_device_info_get(ctx)->index);
    kcrt_close(ctx);
    setenv("FAKE_GPU_ARCH", "gfx1100", 1);
    ASSERT_OK(kcrt_devices("hip", list, 16, &n, err, sizeof(err)), NULL);
    assert_string_equal("amd:gfx11-generic", list[0].family);
    assert_int_equal(32, list[0].subgroup_size);
    unsetenv("FAKE_GPU_ARCH");
    setenv("KCRT_HIP_LIBRARY", "/nonexistent", 1);
    ctx = open_on("auto");
    assert_string_equal("cuda", kcrt_backend_name(ctx));
    kcrt_close(ctx);
    /* KCRT_BACKEND and KCRT_DEVICE still choose */
    setenv("KCRT_HIP_LIBRARY", FAKE_HIP, 1);
    setenv("KCRT_BACKEND", "cuda", 1);
    ctx = open_on("hip");
    assert_string_equal("cuda", kcrt_backend_name(ctx));
    kcrt_close(ctx);
    unsetenv("KCRT_BACKEND");
    setenv("KCRT_DEVICE", "rtx 4090", 1);
    ctx = open_on(NULL);
    assert_string_equal("cuda", kcrt_backend_name(ctx));
    assert_int_equal(1, kcrt_device_info_get(ctx)->index);
    kcrt_close(ctx);
    unsetenv("KCRT_DEVICE");
}

/* Two devices of one backend: the index counts through the backends. */
static void test_device_indices(void **state)
{
    (void)state;
    setenv("FAKE_GPU_DEVICES", "2", 1);
    kcrt_context *c = NULL;
    kcrt_options o = {NULL, 3}; /* hip 0, hip 1, cuda 0, cuda 1 */
    ASSERT_OK(kcrt_open(&c, &o), c);
    assert_string_equal("cuda", kcrt_backend_name(c));
    assert_string_equal("NVIDIA GeForce RTX 4090 (fake 1)", kcrt_device_name(c));
    kcrt_close(c);
    o = (kcrt_options){"hip", 1};
    ASSERT_OK(kcrt_open(&c, &o), c);
    assert_string_equal("AMD Instinct MI210 (fake 1)", kcrt_device_name(c));
    assert_int_equal(0, hip->current_device); /* the thread's device was given back */
    assert_true(hip->set_device_calls >= 2);
    kcrt_close(c);
}

/* The ROCm 5 layout of hipDeviceProp_t has gcnArchName elsewhere. */
static void test_hip_architecture_from_rocm5(void **state)
{
    (void)state;
    setenv("KCRT_HIP_LIBRARY", FAKE_HIP5, 1);
    setenv("FAKE_GPU_ARCH", "gfx1030", 1);
    kcrt_context *c = open_on("hip");
    assert_string_equal("gfx1030", kcrt_device_info_get(c)->target);
    assert_string_equal("amd:gfx10-3-generic", kcrt_device_info_get(c)->family);
    kcrt_close(c);
}

/* ---- variants --------------------------------------------------------------------------------------------
 */

static void expect_image_target(const char *arch, const char *want_in_image)
{
    setenv("FAKE_GPU_ARCH", arch, 1);
    hip_reset();
    kcrt_context *h = open_on("hip");
    kcrt_bundle *b = load_bundle(h);
    kcrt_kernel *k;
    ASSERT_OK(kcrt_kernel_get_variant(b, "scale", "SC_WG=128", &k), h);
    assert_non_null(hip->image);
    assert_non_null(memmem(hip->image, hip->image_size, want_in_image, strlen(want_in_image)));
    kcrt_bundle_free(b);
    kcrt_close(h);
}

static void test_hip_loads_the_devices_code_object(void **state)
{
    (void)state;
    if (!need_bundle())
        return;
    expect_image_target("gfx90a:sramecc+:xnack-", "amdgcn-amd-amdhsa--gfx90a");
    expect_image_target("gfx1100", "amdgcn-amd-amdhsa--gfx1100");
    /* a device the bundle has no code object for */
    setenv("FAKE_GPU_ARCH", "gfx1030", 1);
    kcrt_context *h = open_on("hip");
    kcrt_bundle *b = load_bundle(h);
    kcrt_kernel *k;
    ASSERT_STATUS(KCRT_ERROR_NO_VARIANT, kcrt_kernel_get(b, "mix", &k), h);
    ASSERT_CONTAINS(kcrt_error(h),
                    "kernel 'mix' has no default variant () for the hip backend: the bundle has "
                    "spirv, gfx1100, gfx90a, sm_75, sm_86, sm_90 (build it with -t gfx1030 for "
                    "AMD Instinct MI210 (fake 0))");
    kcrt_bundle_free(b);
    kcrt_close(h);
}

static void expect_ptx_target(int cc, const char *want)
{
    char v[8];
    snprintf(v, sizeof(v), "%d", cc);
    setenv("FAKE_GPU_CC", v, 1);
    cuda_reset();
    kcrt_context *c = open_on("cuda");
    kcrt_bundle *b = load_bundle(c);
    kcrt_kernel *k;
    ASSERT_OK(kcrt_kernel_get_variant(b, "scale", "SC_WG=32", &k), c);
    assert_non_null(strstr((const char *)cuda->image, want));
    kcrt_bundle_free(b);
    kcrt_close(c);
}

static void test_cuda_loads_the_highest_sm_not_newer(void **state)
{
    (void)state;
    if (!need_bundle())
        return;
    expect_ptx_target(89, ".target sm_86");
    expect_ptx_target(86, ".target sm_86");
    expect_ptx_target(80, ".target sm_75");
    expect_ptx_target(90, ".target sm_90");
    expect_ptx_target(120, ".target sm_90");
    setenv("FAKE_GPU_CC", "70", 1);
    kcrt_context *c = open_on("cuda");
    kcrt_bundle *b = load_bundle(c);
    kcrt_kernel *k;
    ASSERT_STATUS(KCRT_ERROR_NO_VARIANT, kcrt_kernel_get(b, "scale", &k), c);
    ASSERT_CONTAINS(kcrt_error(c),
                    "the bundle has spirv, gfx1100, gfx90a, sm_75, sm_86, sm_90 (build it with "
                    "-t sm_70 or an older sm_NN for NVIDIA GeForce RTX 4090 (fake 0))");
    kcrt_bundle_free(b);
    kcrt_close(c);
}

/* ---- the argument block ----------------------------------------------------------------------------------
 */

static void test_hip_kernargs_match_the_code_object(void **state)
{
    (void)state;
    if (!need_bundle())
        return;
    if (!readelf()) {
        fprintf(stderr, "    (skipped: no llvm-readelf-19 to read the code object's metadata)\n");
        return;
    }
    kcrt_context *c = open_on("hip");
    kcrt_bundle *b = load_bundle(c);
    kcrt_kernel *k;
    ASSERT_OK(kcrt_kernel_get(b, "mix", &k), c);
    mix_run r;
    kcrt_arg args[9];
    mix_buffers(c, &r);
    mix_args(&r, args);
    ASSERT_OK(kcrt_launch(k, args, 9), c);
    const fake_launch *l = &hip->last;
    assert_string_equal("mix", l->function);
    assert_true(l->kernel_params_null); /* never both */
    assert_true(l->extra_well_formed);  /* BUFFER_POINTER, p, BUFFER_SIZE, &size, END */
    assert_int_equal(2, l->grid[0]);    /* cdiv(100, 64) */
    assert_int_equal(64, l->block[0]);
    assert_int_equal(1, l->block[1] * l->block[2] * l->grid[1] * l->grid[2]);
    assert_int_equal(0, l->shared);

    notes n;
    read_notes(hip->image, hip->image_size, &n);
    assert_string_equal("amdgcn-amd-amdhsa--gfx90a", n.target);
    assert_int_equal(9, n.nargs);
    assert_int_equal(n.kernarg_size, (long)l->size); /* the whole segment: kc declares no hidden arguments */
    long offsets[9], sizes[9];
    for (int i = 0; i < n.nargs; i++) {
        const note_arg *a = &n.args[i];
        assert_true(!strcmp(a->kind, "by_value") || !strcmp(a->kind, "global_buffer"));
        check_mix_value(a->name, l->args + a->offset, a->size, &r);
        offsets[i] = a->offset, sizes[i] = a->size;
    }
    int args_size = 0;
    char *slots = bundle_args("mix", "gfx90a", &args_size);
    assert_slots(slots, offsets, sizes, 9);
    assert_int_equal(n.kernarg_size, args_size);
    free(slots);
    kcrt_bundle_free(b);
    kcrt_close(c);
}

static void test_cuda_params_match_the_ptx(void **state)
{
    (void)state;
    if (!need_bundle())
        return;
    kcrt_context *c = open_on("cuda");
    kcrt_bundle *b = load_bundle(c);
    kcrt_kernel *k;
    ASSERT_OK(kcrt_kernel_get(b, "mix", &k), c);
    mix_run r;
    kcrt_arg args[9];
    mix_buffers(c, &r);
    mix_args(&r, args);
    ASSERT_OK(kcrt_launch(k, args, 9), c);
    const fake_launch *l = &cuda->last;
    assert_true(l->extra_null);
    assert_false(l->kernel_params_null);
    assert_int_equal(2, l->grid[0]);
    assert_int_equal(64, l->block[0]);

    ptx_param p[16];
    long end;
    int np = ptx_params((const char *)cuda->image, "mix", p, 16, &end);
    assert_int_equal(9, np);
    assert_int_equal(end, (long)l->size);
    static const char *const names[] = {"n", "h", "on", "x", "a", "y", "u", "h2", "z"};
    long offsets[9], sizes[9];
    for (int i = 0; i < np; i++) {
        check_mix_value(names[i], l->args + p[i].offset, p[i].size, &r);
        offsets[i] = p[i].offset, sizes[i] = p[i].size;
    }
    int args_size = 0;
    char *slots = bundle_args("mix", "sm_86", &args_size);
    assert_slots(slots, offsets, sizes, 9);
    assert_int_equal(end, args_size);
    free(slots);
    assert_int_equal(0, cuda->context_depth); /* every push popped */
    kcrt_bundle_free(b);
    kcrt_close(c);
}

static void test_kernel_without_arguments(void **state)
{
    (void)state;
    if (!need_bundle())
        return;
    for (int i = 0; i < 2; i++) {
        const gpu_api *a = &apis[i];
        fake_state *fake = *a->fake;
        kcrt_context *c = open_on(a->backend);
        kcrt_bundle *b = load_bundle(c);
        kcrt_kernel *k;
        ASSERT_OK(kcrt_kernel_get(b, "nothing", &k), c);
        ASSERT_OK(kcrt_launch(k, NULL, 0), c);
        assert_true(fake->last.kernel_params_null && fake->last.extra_null);
        assert_int_equal(32, fake->last.block[0]);
        assert_int_equal(2, fake->last.block[1]);
        kcrt_bundle_free(b);
        kcrt_close(c);
    }
}

/* ---- order: queued launches, waits, transfers, timing
 * ------------------------------------------------------- */

static void run_saxpy_like(kcrt_context *c, kcrt_bundle *b, kcrt_buffer **x)
{
    kcrt_kernel *k;
    ASSERT_OK(kcrt_kernel_get(b, "scale", &k), c);
    float host[256];
    for (int i = 0; i < 256; i++)
        host[i] = (float)i;
    ASSERT_OK(kcrt_buffer_create(c, sizeof(host), x), c);
    float zero[256];
    ASSERT_OK(kcrt_buffer_read(*x, 0, zero, sizeof(zero)), c);
    for (int i = 0; i < 256; i++)
        assert_true(zero[i] == 0.0f); /* new buffers hold zeros */
    ASSERT_OK(kcrt_buffer_write(*x, 0, host, sizeof(host)), c);
    kcrt_arg args[] = {KCRT_I32(256), KCRT_F32(2.0f), KCRT_BUF(*x)};
    for (int i = 0; i < 5; i++)
        ASSERT_OK(kcrt_launch(k, args, 3), c);
}

static void test_launches_are_queued_and_transfers_wait(void **state)
{
    (void)state;
    if (!need_bundle())
        return;
    const char *read[] = {"hipMemcpyAsync(DtoH)", "cuMemcpyDtoHAsync"};
    const char *write[] = {"hipMemcpyAsync(HtoD)", "cuMemcpyHtoDAsync"};
    for (int i = 0; i < 2; i++) {
        const gpu_api *a = &apis[i];
        fake_state *fake = *a->fake;
        kcrt_context *c = open_on(a->backend);
        kcrt_bundle *b = load_bundle(c);
        kcrt_buffer *x;
        fake->trace[0] = 0;
        run_saxpy_like(c, b, &x);
        const char *t = fake->trace;
        /* the write waited; the five launches did not */
        const char *after_write = strstr(t, write[i]);
        assert_non_null(after_write);
        assert_int_equal(5, count(after_write, a->launch));
        assert_int_equal(1, count(after_write, a->sync)); /* the write's own wait, before the launches */
        kcrt_stats st;
        kcrt_stats_get(c, &st);
        assert_int_equal(5, st.launches);
        assert_int_equal(1, st.pipelines_created);
        /* a read waits for them */
        float back[4];
        ASSERT_OK(kcrt_buffer_read(x, 0, back, sizeof(back)), c);
        const char *seq[] = {a->launch, a->launch, a->launch, a->launch, a->launch, read[i], a->sync};
        assert_in_order(after_write, seq, 7);
        ASSERT_OK(kcrt_finish(c), c);
        assert_int_equal(3, count(after_write, a->sync));
        kcrt_buffer_free(x);
        kcrt_bundle_free(b);
        kcrt_close(c);
        assert_int_equal(0, fake->live_allocations);
        assert_int_equal(0, fake->live_modules);
        assert_int_equal(0, fake->live_streams);
        assert_int_equal(0, fake->live_events);
    }
    assert_int_equal(0, cuda->context_depth);
    assert_int_equal(0, hip->current_device);
}

/* kcrt_buffer_copy: one device-to-device copy queued on the stream
 * between the launches, no wait of its own; the bytes arrive */
static void test_copies_are_queued_on_the_stream(void **state)
{
    (void)state;
    if (!need_bundle())
        return;
    const char *copy[] = {"hipMemcpyAsync(DtoD)", "cuMemcpyDtoDAsync"};
    for (int i = 0; i < 2; i++) {
        const gpu_api *a = &apis[i];
        fake_state *fake = *a->fake;
        kcrt_context *c = open_on(a->backend);
        kcrt_bundle *b = load_bundle(c);
        kcrt_buffer *x, *y;
        run_saxpy_like(c, b, &x); /* x = i (a fake runs no kernel), five launches queued */
        ASSERT_OK(kcrt_buffer_create(c, 64, &y), c);
        fake->trace[0] = 0;
        ASSERT_OK(kcrt_buffer_copy(y, 16, x, 4, 32), c);
        const char *t = fake->trace;
        assert_int_equal(1, count(t, copy[i]));
        assert_int_equal(0, count(t, a->sync));
        assert_int_equal(0, count(t, a->launch));
        float back[16];
        ASSERT_OK(kcrt_buffer_read(y, 0, back, sizeof(back)), c);
        for (int j = 0; j < 16; j++)
            assert_true(back[j] == (j >= 4 && j < 12 ? (float)(j - 3) : 0.0f));
        kcrt_buffer_free(x), kcrt_buffer_free(y);
        kcrt_bundle_free(b);
        kcrt_close(c);
        assert_int_equal(0, fake->live_allocations);
    }
}

/* Freeing a buffer while launches that use it are queued does not wait:
 * its memory is kept, and the next buffer of its size class gets it,
 * zeroed on the stream behind those launches; no allocation, no wait.
 * Past KCRT_BUFFER_SPARE_MB the oldest memory is freed, after the stream. */
static void test_freed_memory_is_reused_without_waiting(void **state)
{
    (void)state;
    if (!need_bundle())
        return;
    setenv("KCRT_BUFFER_SPARE_MB", "1", 1);
    for (int i = 0; i < 2; i++) {
        const gpu_api *a = &apis[i];
        fake_state *fake = *a->fake;
        kcrt_context *c = open_on(a->backend);
        kcrt_bundle *b = load_bundle(c);
        kcrt_buffer *x, *y, *big[2];
        run_saxpy_like(c, b, &x); /* five launches queued on x */
        fake->trace[0] = 0;
        kcrt_buffer_free(x);
        ASSERT_OK(kcrt_buffer_create(c, 1000, &y), c); /* 1024 bytes: x's size class */
        const char *t = fake->trace;
        assert_int_equal(0, count(t, a->sync));
        assert_int_equal(0, count(t, a->alloc));
        assert_int_equal(0, count(t, a->release));
        assert_int_equal(1, count(t, a->memset));
        float back[250];
        ASSERT_OK(kcrt_buffer_read(y, 0, back, sizeof(back)), c);
        for (int j = 0; j < 250; j++)
            assert_true(back[j] == 0.0f);
        for (int j = 0; j < 2; j++)
            ASSERT_OK(kcrt_buffer_create(c, 600 << 10, &big[j]), c);
        fake->trace[0] = 0;
        kcrt_buffer_free(big[0]); /* 600 KiB kept */
        assert_int_equal(0, count(t, a->release));
        kcrt_buffer_free(big[1]); /* past 1 MiB: the older is freed */
        assert_int_equal(1, count(t, a->release));
        kcrt_stats st;
        kcrt_stats_get(c, &st);
        assert_true(st.spare_bytes <= 1 << 20);
        assert_true(st.buffers_reused >= 1);
        kcrt_buffer_free(y);
        kcrt_bundle_free(b);
        kcrt_close(c);
        assert_int_equal(0, fake->live_allocations); /* the spares freed with the context */
    }
    unsetenv("KCRT_BUFFER_SPARE_MB");
}

static void test_timing_uses_events(void **state)
{
    (void)state;
    if (!need_bundle())
        return;
    for (int i = 0; i < 2; i++) {
        const gpu_api *a = &apis[i];
        fake_state *fake = *a->fake;
        kcrt_context *c = open_on(a->backend);
        kcrt_bundle *b = load_bundle(c);
        kcrt_buffer *x;
        run_saxpy_like(c, b, &x); /* pending launches: finished first, not timed */
        kcrt_kernel *k;
        ASSERT_OK(kcrt_kernel_get(b, "scale", &k), c);
        kcrt_arg args[] = {KCRT_I32(256), KCRT_F32(2.0f), KCRT_BUF(x)};
        fake->trace[0] = 0;
        double ns[3];
        ASSERT_OK(kcrt_time_launch(k, args, 3, 3, ns), c);
        for (int r = 0; r < 3; r++) /* each fake launch takes FAKE_LAUNCH_MS */
            assert_true(ns[r] == FAKE_LAUNCH_MS * 1e6);
        const char *seq[] = {a->sync,   a->record, a->launch, a->record,  a->launch,  a->record,
                             a->launch, a->record, a->wait,   a->elapsed, a->elapsed, a->elapsed};
        assert_in_order(fake->trace, seq, 12);
        assert_int_equal(4, count(fake->trace, a->record));
        assert_int_equal(3, count(fake->trace, a->launch));
        kcrt_buffer_free(x);
        kcrt_bundle_free(b);
        kcrt_close(c);
    }
}

/* Cold timing: a memset of the scratch buffer before each launch, outside
 * the launch's two events (the fake memset advances the clock, so a
 * timing that counted it would read FAKE_MEMSET_MS more). */
static void test_cold_timing_flushes_between_events(void **state)
{
    (void)state;
    if (!need_bundle())
        return;
    for (int i = 0; i < 2; i++) {
        const gpu_api *a = &apis[i];
        fake_state *fake = *a->fake;
        kcrt_context *c = open_on(a->backend);
        kcrt_bundle *b = load_bundle(c);
        kcrt_buffer *x;
        run_saxpy_like(c, b, &x);
        kcrt_kernel *k;
        ASSERT_OK(kcrt_kernel_get(b, "scale", &k), c);
        kcrt_arg args[] = {KCRT_I32(256), KCRT_F32(2.0f), KCRT_BUF(x)};
        double ns[3];
        /* the first call makes the scratch buffer (zeroed when made) */
        ASSERT_OK(kcrt_time_launch_cold(k, args, 3, 1, 1 << 20, ns), c);
        fake->trace[0] = 0;
        ASSERT_OK(kcrt_time_launch_cold(k, args, 3, 3, 1 << 20, ns), c);
        for (int r = 0; r < 3; r++)
            assert_true(ns[r] == FAKE_LAUNCH_MS * 1e6);
        const char *seq[] = {a->memset, a->record, a->launch, a->record, a->memset, a->record, a->launch,
                             a->record,  a->memset, a->record, a->launch, a->record};
        assert_in_order(fake->trace, seq, 12);
        assert_int_equal(3, count(fake->trace, a->memset));
        assert_int_equal(6, count(fake->trace, a->record));
        assert_int_equal(KCRT_ERROR_BAD_ARGUMENT,
                         kcrt_time_launch_cold(k, args, 3, 3, KCRT_FLUSH_MAX_BYTES + 4, ns));
        ASSERT_CONTAINS(kcrt_error(c), "kcrt_time_launch_cold: flush_bytes");
        kcrt_buffer_free(x);
        kcrt_bundle_free(b);
        kcrt_close(c);
    }
}

/* ---- failures name the call
 * --------------------------------------------------------------------------------- */

/* Opens, loads, and launches mix with FAKE_GPU_FAIL=fail; the status and
 * words of the step that fails. */
static void expect_failure(const char *backend, const char *fail, kcrt_status want, const char *words)
{
    kcrt_context *c = open_on(backend);
    kcrt_bundle *b = load_bundle(c);
    kcrt_kernel *k;
    mix_run r;
    kcrt_arg args[9];
    setenv("FAKE_GPU_FAIL", fail, 1);
    kcrt_status s = kcrt_buffer_create(c, 64, &r.x);
    if (s == KCRT_OK) {
        kcrt_buffer_free(r.x);
        unsetenv("FAKE_GPU_FAIL");
        mix_buffers(c, &r);
        mix_args(&r, args);
        setenv("FAKE_GPU_FAIL", fail, 1);
        s = kcrt_kernel_get(b, "mix", &k);
        if (s == KCRT_OK)
            s = kcrt_launch(k, args, 9);
        if (s == KCRT_OK)
            s = kcrt_finish(c);
    }
    if (s != want)
        fail_msg("%s with %s failing: expected %s, got %s: %s", backend, fail, kcrt_status_name(want),
                 kcrt_status_name(s), kcrt_error(c));
    ASSERT_CONTAINS(kcrt_error(c), words);
    unsetenv("FAKE_GPU_FAIL");
    kcrt_bundle_free(b);
    kcrt_close(c);
}

static void test_driver_errors_name_the_call(void **state)
{
    (void)state;
    if (!need_bundle())
        return;
    expect_failure("hip", "hipMalloc", KCRT_ERROR_OUT_OF_MEMORY,
                   "a buffer of 64 bytes: hipMalloc failed: hipErrorOutOfMemory (out of memory)");
    expect_failure("hip", "hipModuleLoadData", KCRT_ERROR_DEVICE_ERROR,
                   "kernel 'mix' variant '' (gfx90a): hipModuleLoadData failed: hipErrorInvalidImage (device "
                   "kernel image is invalid)");
    expect_failure("hip", "hipModuleLaunchKernel", KCRT_ERROR_DEVICE_ERROR,
                   "mix[]: hipModuleLaunchKernel failed: hipErrorLaunchOutOfResources");
    expect_failure("hip", "hipStreamSynchronize", KCRT_ERROR_DEVICE_ERROR,
                   "hipStreamSynchronize failed: hipErrorIllegalAddress (an illegal memory access was "
                   "encountered) (a kernel launched since the last kcrt_finish faulted");
    expect_failure("cuda", "cuMemAlloc", KCRT_ERROR_OUT_OF_MEMORY,
                   "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
    expect_failure(
        "cuda", "cuModuleLoadDataEx", KCRT_ERROR_DEVICE_ERROR,
        "kernel 'mix' variant '' (sm_86 on sm_89): cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (a "
        "PTX JIT compilation failed); the JIT says: ptxas fatal   : fake JIT failure for the test");
    expect_failure("cuda", "cuModuleLoadDataEx:222", KCRT_ERROR_DEVICE_ERROR,
                   "CUDA_ERROR_UNSUPPORTED_PTX_VERSION (the provided PTX was compiled with an unsupported "
                   "toolchain.); kc emits PTX ISA 7.8, which needs a driver of CUDA 11.8 or newer");
    expect_failure("cuda", "cuLaunchKernel", KCRT_ERROR_DEVICE_ERROR,
                   "mix[]: cuLaunchKernel failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
    expect_failure("cuda", "cuStreamSynchronize", KCRT_ERROR_DEVICE_ERROR,
                   "cuStreamSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS");
}

/* After a kernel faulted, the context refuses everything, and says why. */
static void test_fault_is_sticky(void **state)
{
    (void)state;
    if (!need_bundle())
        return;
    const char *why[] = {
        "the HIP device 'AMD Instinct MI210 (fake 0)' failed earlier (hipErrorIllegalAddress",
        "the CUDA device 'NVIDIA GeForce RTX 4090 (fake 0)' failed earlier "
        "(CUDA_ERROR_ILLEGAL_ADDRESS"};
    for (int i = 0; i < 2; i++) {
        const gpu_api *a = &apis[i];
        kcrt_context *c = open_on(a->backend);
        kcrt_bundle *b = load_bundle(c);
        kcrt_buffer *x;
        run_saxpy_like(c, b, &x);
        setenv("FAKE_GPU_FAIL", a->sync, 1);
        ASSERT_STATUS(KCRT_ERROR_DEVICE_ERROR, kcrt_finish(c), c);
        unsetenv("FAKE_GPU_FAIL");
        float back[4];
        ASSERT_STATUS(KCRT_ERROR_DEVICE_ERROR, kcrt_buffer_read(x, 0, back, sizeof(back)), c);
        ASSERT_CONTAINS(kcrt_error(c), why[i]);
        kcrt_bundle_free(b);
        kcrt_close(c); /* still closes cleanly */
    }
}

/* ---- auto's fallback to Vulkan for a SPIR-V-only bundle -------------------------------------------------
 */

static void test_auto_moves_to_vulkan_for_spirv_only_bundles(void **state)
{
    (void)state;
    if (!have_vulkan) {
        fprintf(stderr, "    (skipped: no Vulkan device to move to)\n");
        return;
    }
    /* auto chose HIP; the first bundle has only SPIR-V, nothing lives on the context yet: Vulkan */
    kcrt_context *c = open_on(NULL);
    assert_string_equal("hip", kcrt_backend_name(c));
    kcrt_bundle *b = load_bundle_at(c, RT_GPU_SPIRV_BUNDLE);
    assert_string_equal("vulkan", kcrt_backend_name(c));
    assert_string_equal("vulkan", kcrt_device_info_get(c)->backend);
    assert_int_equal(0, hip->live_streams); /* the HIP device was closed */
    kcrt_kernel *k;
    ASSERT_OK(kcrt_kernel_get(b, "scale", &k), c);
    kcrt_buffer *x;
    ASSERT_OK(kcrt_buffer_create(c, 64 * 4, &x), c);
    kcrt_arg args[] = {KCRT_I32(64), KCRT_F32(2.0f), KCRT_BUF(x)};
    ASSERT_OK(kcrt_launch(k, args, 3), c);
    ASSERT_OK(kcrt_finish(c), c);
    kcrt_close(c);
    /* a context already holding a buffer stays, and says what to build */
    c = open_on(NULL);
    ASSERT_OK(kcrt_buffer_create(c, 64, &x), c);
    b = load_bundle_at(c, RT_GPU_SPIRV_BUNDLE);
    assert_string_equal("hip", kcrt_backend_name(c));
    ASSERT_STATUS(KCRT_ERROR_NO_VARIANT, kcrt_kernel_get(b, "scale", &k), c);
    ASSERT_CONTAINS(kcrt_error(c), "the bundle has spirv (build it with -t gfx90a for");
    kcrt_close(c);
    /* a backend that was asked for stays */
    c = open_on("cuda");
    b = load_bundle_at(c, RT_GPU_SPIRV_BUNDLE);
    assert_string_equal("cuda", kcrt_backend_name(c));
    kcrt_close(c);
    if (!RT_GPU_BUNDLE)
        return;
    /* a first bundle with something for the backend settles it: a later SPIR-V-only one does not move it */
    c = open_on(NULL);
    b = load_bundle_at(c, RT_GPU_BUNDLE);
    kcrt_bundle_free(b);
    b = load_bundle_at(c, RT_GPU_SPIRV_BUNDLE);
    assert_string_equal("hip", kcrt_backend_name(c));
    kcrt_close(c);
}

/* kcrt_buffer_wrap and kcrt_set_stream: the host's memory is used in
 * place (the fakes' device memory is host memory, so the test sees it),
 * freed by nobody but the host, and work goes on the host's stream until
 * it is set back. */
static void test_host_memory_and_streams(void **state)
{
    (void)state;
    if (!need_bundle())
        return;
    for (int i = 0; i < 2; i++) {
        const gpu_api *a = &apis[i];
        fake_state *fake = *a->fake;
        kcrt_context *c = open_on(a->backend);
        kcrt_bundle *b = load_bundle(c);
        kcrt_kernel *k;
        ASSERT_OK(kcrt_kernel_get(b, "scale", &k), c);
        float *mine = malloc(256 * sizeof(float)); /* "device memory" the host owns */
        for (int j = 0; j < 256; j++)
            mine[j] = -1.0f;
        kcrt_buffer *x;
        int allocations = fake->live_allocations;
        ASSERT_OK(kcrt_buffer_wrap(c, mine, 256 * sizeof(float), &x), c);
        assert_int_equal(allocations, fake->live_allocations); /* nothing allocated */
        assert_int_equal(256 * sizeof(float), kcrt_buffer_size(x));
        float host[256];
        for (int j = 0; j < 256; j++)
            host[j] = (float)j + 0.5f;
        ASSERT_OK(kcrt_buffer_write(x, 0, host, sizeof(host)), c);
        assert_memory_equal(mine, host, sizeof(host)); /* written in place */
        mine[3] = 42.0f;
        float back[4];
        ASSERT_OK(kcrt_buffer_read(x, 0, back, sizeof(back)), c);
        assert_true(back[3] == 42.0f);
        /* the launch gets the host's pointer */
        kcrt_arg args[] = {KCRT_I32(256), KCRT_F32(2.0f), KCRT_BUF(x)};
        ASSERT_OK(kcrt_launch(k, args, 3), c);
        uint64_t want = (uint64_t)(uintptr_t)mine;
        assert_non_null(memmem(fake->last.args, fake->last.size, &want, 8));
        void *own = fake->last.stream;
        /* the host's stream, then back to the context's own */
        unsigned *theirs = calloc(4, sizeof(unsigned));
        ASSERT_OK(kcrt_set_stream(c, theirs), c);
        ASSERT_OK(kcrt_launch(k, args, 3), c);
        assert_ptr_equal(theirs, fake->last.stream);
        fake->trace[0] = 0;
        ASSERT_OK(kcrt_set_stream(c, NULL), c); /* waits for the host's stream first */
        ASSERT_CONTAINS(fake->trace, i == 0 ? "hipStreamSynchronize" : "cuStreamSynchronize");
        ASSERT_OK(kcrt_launch(k, args, 3), c);
        assert_ptr_equal(own, fake->last.stream);
        ASSERT_OK(kcrt_set_stream(c, theirs), c);
        /* freeing the buffer and closing frees nothing of the host's */
        fake->trace[0] = 0;
        kcrt_buffer_free(x);
        assert_null(strstr(fake->trace, a->release));
        ASSERT_STATUS(KCRT_ERROR_BAD_ARGUMENT, kcrt_buffer_wrap(c, NULL, 16, &x), c);
        ASSERT_STATUS(KCRT_ERROR_BAD_ARGUMENT, kcrt_buffer_wrap(c, mine, 0, &x), c);
        kcrt_vulkan_device vd;
        ASSERT_STATUS(KCRT_ERROR_UNSUPPORTED, kcrt_vulkan_device_get(c, &vd), c);
        kcrt_bundle_free(b);
        kcrt_close(c);
        assert_int_equal(0, fake->live_streams); /* its own destroyed, the host's left alone */
        assert_int_equal(0, fake->live_allocations);
        free(theirs);
        free(mine);
    }
}

/* kc devices lists the fakes beside Vulkan. */
static void test_kc_devices(void **state)
{
    (void)state;
    char *out;
    assert_int_equal(0, kc_test_sh(&out, "%s devices", KC_PROGRAM));
    ASSERT_CONTAINS(out, "0: AMD Instinct MI210 (fake 0) [hip, discrete]");
    ASSERT_CONTAINS(out, "   target       gfx90a");
    ASSERT_CONTAINS(out, "   driver       HIP 6.2.41133\n");
    ASSERT_CONTAINS(out, "   key          hip:1002:0000:AMD Instinct MI210 (fake 0):HIP 6.2.41133");
    ASSERT_CONTAINS(out, "1: NVIDIA GeForce RTX 4090 (fake 0) [cuda, discrete]");
    ASSERT_CONTAINS(out, "   target       sm_89");
    ASSERT_CONTAINS(out, "   arguments    32764 bytes of kernel arguments");
    if (have_vulkan)
        ASSERT_CONTAINS(out, "2: ");
    free(out);
}

int main(void)
{
    load_fakes();
    int n = 0;
    setenv("KCRT_HIP_LIBRARY", "/nonexistent", 1);
    setenv("KCRT_CUDA_LIBRARY", "/nonexistent", 1);
    have_vulkan = kcrt_devices("vulkan", NULL, 0, &n, NULL, 0) == KCRT_OK && n > 0;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_missing_libraries, fresh),
        cmocka_unit_test_setup(test_libraries_that_are_not_drivers, fresh),
        cmocka_unit_test_setup(test_cuda_toolkit_stub, fresh),
        cmocka_unit_test_setup(test_drivers_without_devices, fresh),
        cmocka_unit_test_setup(test_drivers_that_fail_to_start, fresh),
        cmocka_unit_test_setup(test_devices_and_auto_choice, fresh),
        cmocka_unit_test_setup(test_device_indices, fresh),
        cmocka_unit_test_setup(test_hip_architecture_from_rocm5, fresh),
        cmocka_unit_test_setup(test_hip_loads_the_devices_code_object, fresh),
        cmocka_unit_test_setup(test_cuda_loads_the_highest_sm_not_newer, fresh),
        cmocka_unit_test_setup(test_hip_kernargs_match_the_code_object, fresh),
        cmocka_unit_test_setup(test_cuda_params_match_the_ptx, fresh),
        cmocka_unit_test_setup(test_kernel_without_arguments, fresh),
        cmocka_unit_test_setup(test_launches_are_queued_and_transfers_wait, fresh),
        cmocka_unit_test_setup(test_copies_are_queued_on_the_stream, fresh),
        cmocka_unit_test_setup(test_freed_memory_is_reused_without_waiting, fresh),
        cmocka_unit_test_setup(test_timing_uses_events, fresh),
        cmocka_unit_test_setup(test_cold_timing_flushes_between_events, fresh),
        cmocka_unit_test_setup(test_driver_errors_name_the_call, fresh),
        cmocka_unit_test_setup(test_fault_is_sticky, fresh),
        cmocka_unit_test_setup(test_auto_moves_to_vulkan_for_spirv_only_bundles, fresh),
        cmocka_unit_test_setup(test_host_memory_and_streams, fresh),
        cmocka_unit_test_setup(test_kc_devices, fresh),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    hip_reset();
    cuda_reset();
    return failed;
}
