/*
 * context.c — opening a context: which backend, which device (DESIGN.md
 * §6), and the calls that only pass through to the backend.
 *
 * The backends are listed once, in `backends` below, in the order auto
 * prefers them on equal devices: HIP, then CUDA, then Vulkan, so that an
 * AMD GPU is driven through HIP and an NVIDIA GPU through CUDA when their
 * libraries and devices are there, and through Vulkan otherwise. The device
 * index of options and KCRT_DEVICE counts through the devices of the
 * backends in that order. A backend that does not load, or finds no
 * device, is passed over by auto (KCRT_LOG=debug says why) and is an error
 * only when it was named.
 */
#include "rt_private.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const rt_backend *const backends[] = {&rt_hip_backend, &rt_cuda_backend, &rt_vulkan_backend};

static _Thread_local char open_error[RT_MSG];

const char *kcrt_status_name(kcrt_status s)
{
    switch (s) {
    case KCRT_OK: return "KCRT_OK";
    case KCRT_ERROR_BAD_ARGUMENT: return "KCRT_ERROR_BAD_ARGUMENT";
    case KCRT_ERROR_NO_BACKEND: return "KCRT_ERROR_NO_BACKEND";
    case KCRT_ERROR_NO_DEVICE: return "KCRT_ERROR_NO_DEVICE";
    case KCRT_ERROR_IO: return "KCRT_ERROR_IO";
    case KCRT_ERROR_BAD_BUNDLE: return "KCRT_ERROR_BAD_BUNDLE";
    case KCRT_ERROR_NO_KERNEL: return "KCRT_ERROR_NO_KERNEL";
    case KCRT_ERROR_NO_VARIANT: return "KCRT_ERROR_NO_VARIANT";
    case KCRT_ERROR_UNSUPPORTED: return "KCRT_ERROR_UNSUPPORTED";
    case KCRT_ERROR_OUT_OF_MEMORY: return "KCRT_ERROR_OUT_OF_MEMORY";
    case KCRT_ERROR_DEVICE_ERROR: return "KCRT_ERROR_DEVICE_ERROR";
    case KCRT_ERROR_OUT_OF_BOUNDS: return "KCRT_ERROR_OUT_OF_BOUNDS";
    }
    return "KCRT_ERROR_(unknown)";
}

/* ---- choosing the backends -------------------------------------------------------------- */

/* Fills list with the backends `name` means; 0 and a message when none. */
static int backends_for(const char *name, const rt_backend **list, char *err, size_t errlen)
{
    if (!name || !*name || strcmp(name, "auto") == 0) {
        for (size_t i = 0; i < RT_COUNT(backends); i++)
            list[i] = backends[i];
        return (int)RT_COUNT(backends);
    }
    for (size_t i = 0; i < RT_COUNT(backends); i++)
        if (strcmp(backends[i]->name, name) == 0) {
            list[0] = backends[i];
            return 1;
        }
    rt_printf(err, errlen, "unknown backend '%s' (expected auto, vulkan, hip or cuda)", name);
    return 0;
}

/* Adds "name: words" to the account of backends that gave no device. */
static void note(char *notes, size_t len, const char *name, const char *words)
{
    size_t at = strlen(notes);
    if (at < len)
        rt_printf(notes + at, len - at, "%s%s: %s", at ? "; " : "", name, words[0] ? words : "no device");
}

/* kcrt_devices, and in notes why each backend that gave nothing did not. */
static kcrt_status list_devices(const char *backend, kcrt_device_info *out, int max, int *count, char *err,
                                size_t errlen, char *notes, size_t noteslen)
{
    const rt_backend *list[RT_COUNT(backends)];
    notes[0] = 0;
    int nb = backends_for(backend, list, err, errlen);
    if (nb == 0)
        return KCRT_ERROR_NO_BACKEND;
    bool named = nb == 1 && backend && strcmp(backend, "auto") != 0;
    kcrt_status last = KCRT_OK;
    bool loaded = false;
    int total = 0;
    for (int i = 0; i < nb; i++) {
        int n = 0;
        char why[RT_MSG] = "";
        kcrt_status s = list[i]->devices(out ? out + (total < max ? total : max) : NULL,
                                         out ? (max > total ? max - total : 0) : 0, &n, why, sizeof(why));
        if (s != KCRT_OK || n == 0)
            note(notes, noteslen, list[i]->name, why);
        if (s != KCRT_OK) {
            if (named)
                return rt_printf(err, errlen, "%s", why), s;
            last = s;
            continue;
        }
        loaded = true;
        for (int j = 0; out && j < n && total + j < max; j++)
            out[total + j].index = total + j;
        total += n;
    }
    *count = total;
    if (total == 0 && !loaded) /* every backend failed: say why, each */
        return rt_printf(err, errlen, "no backend is available: %s", notes), last;
    return KCRT_OK;
}

kcrt_status kcrt_devices(const char *backend, kcrt_device_info *out, int max, int *count, char *err,
                         size_t errlen)
{
    char dummy[8], notes[RT_MSG];
    if (!err)
        err = dummy, errlen = sizeof(dummy);
    err[0] = 0;
    if (!count) {
        rt_printf(err, errlen, "kcrt_devices: count is NULL");
        return KCRT_ERROR_BAD_ARGUMENT;
    }
    *count = 0;
    return list_devices(backend, out, max, count, err, errlen, notes, sizeof(notes));
}

/* ---- choosing the device -------------------------------------------------------------------- */

static int type_rank(kcrt_device_type t)
{
    switch (t) {
    case KCRT_DEVICE_DISCRETE: return 0;
    case KCRT_DEVICE_INTEGRATED: return 1;
    case KCRT_DEVICE_VIRTUAL: return 2;
    case KCRT_DEVICE_CPU: return 3;
    default: return 4;
    }
}

static bool contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0)
            return true;
    return false;
}

/* Which device of list: the one asked for (an index or a part of a name) or
 * the best. -1 and a message when the asked one is not there. */
static int pick(const kcrt_device_info *list, int n, const char *want, int want_index, char *why,
                size_t whylen, char *err, size_t errlen)
{
    if (want) {
        char *end;
        errno = 0;
        long v = strtol(want, &end, 10);
        if (*want && !*end && errno == 0)
            want_index = v < -1 ? -2 : (int)v;
        else {
            for (int i = 0; i < n; i++)
                if (contains_nocase(list[i].name, want)) {
                    rt_printf(why, whylen, "KCRT_DEVICE=%s names it", want);
                    return i;
                }
            rt_printf(err, errlen, "no device's name contains '%s' (KCRT_DEVICE)", want);
            return -1;
        }
    }
    if (want_index >= n || want_index < -1) {
        rt_printf(err, errlen, "there is no device %d: %d device%s found", want_index, n, n == 1 ? "" : "s");
        return -1;
    }
    if (want_index >= 0) {
        rt_printf(why, whylen, "device %d was asked for%s", want_index, want ? " (KCRT_DEVICE)" : "");
        return want_index;
    }
    int best = 0;
    for (int i = 1; i < n; i++)
        if (type_rank(list[i].type) < type_rank(list[best].type))
            best = i;
    rt_printf(why, whylen, "the best of %d device%s (discrete > integrated > virtual > cpu)", n,
              n == 1 ? "" : "s");
    return best;
}

/* ---- open and close --------------------------------------------------------------------------- */

static kcrt_status failed_open(kcrt_context **out, kcrt_context *ctx, kcrt_status s)
{
    snprintf(open_error, sizeof(open_error), "%s", ctx->err);
    if (ctx->dev)
        ctx->be->close(ctx->dev);
    ctx->dev = NULL;
    ctx->be = NULL;
    ctx->failed = s;
    *out = ctx;
    return s;
}

/* For an auto choice that fell on HIP or CUDA: the Vulkan device to move
 * to if the first bundle has only SPIR-V (rt_settle_backend) — the best by type,
 * of the same vendor where there is one. Sets ctx->fallback (-1: none). */
static void choose_fallback(kcrt_context *ctx, const kcrt_device_info *list, int n, int chosen)
{
    int best = -1, k = 0;
    ctx->fallback = ctx->fallback_index = -1;
    if (strcmp(list[chosen].backend, "vulkan") == 0)
        return;
    for (int i = 0; i < n; i++) {
        if (strcmp(list[i].backend, "vulkan") != 0)
            continue;
        bool better =
            best < 0 || type_rank(list[i].type) < type_rank(list[best].type) ||
            (type_rank(list[i].type) == type_rank(list[best].type) &&
             list[i].vendor_id == list[chosen].vendor_id && list[best].vendor_id != list[chosen].vendor_id);
        if (better)
            best = i, ctx->fallback = k;
        k++;
    }
    ctx->fallback_index = best;
}

/* The position of dev among the devices of its own backend. */
static int backend_index(const kcrt_device_info *list, int chosen)
{
    int k = 0;
    for (int i = 0; i < chosen; i++)
        k += strcmp(list[i].backend, list[chosen].backend) == 0;
    return k;
}

static kcrt_status open_device(kcrt_context *ctx, const char *backend, int want_index, const char *want)
{
    enum { MAXDEV = 64 };
    kcrt_device_info *list = calloc(MAXDEV, sizeof(*list));
    if (!list)
        return rt_fail(ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    int n = 0;
    char err[RT_MSG] = "", why[256] = "", notes[RT_MSG] = "";
    kcrt_status s = list_devices(backend, list, MAXDEV, &n, err, sizeof(err), notes, sizeof(notes));
    if (s != KCRT_OK) {
        free(list);
        return rt_fail(ctx, s, "%s", err);
    }
    if (notes[0])
        rt_log(ctx, "backends without devices: %s", notes);
    if (n == 0) {
        free(list);
        bool named = strcmp(backend, "auto") != 0;
        return rt_fail(ctx, KCRT_ERROR_NO_DEVICE, "no %s device found (%s)", named ? backend : "GPU or CPU",
                       notes);
    }
    n = n < MAXDEV ? n : MAXDEV;
    for (int i = 0; i < n; i++)
        rt_log(ctx, "device %d: %s (%s, %s)", i, list[i].name, list[i].type_name, list[i].backend);
    int d = pick(list, n, want, want_index, why, sizeof(why), err, sizeof(err));
    if (d < 0) {
        free(list);
        return rt_fail(ctx, KCRT_ERROR_NO_DEVICE, "%s", err);
    }
    for (size_t i = 0; i < RT_COUNT(backends); i++)
        if (strcmp(backends[i]->name, list[d].backend) == 0)
            ctx->be = backends[i];
    rt_log(ctx, "chose device %d '%s' (%s) on %s: %s", d, list[d].name, list[d].type_name, list[d].backend,
           why);
    assert(ctx->be); /* every listed device came from a backend of the table */
    int bi = backend_index(list, d);
    if (strcmp(backend, "auto") == 0 && want_index < 0 && !want)
        choose_fallback(ctx, list, n, d);
    if (ctx->fallback >= 0)
        rt_log(ctx, "if the first bundle has only SPIR-V, this context moves to device %d '%s' on vulkan",
               ctx->fallback_index, list[ctx->fallback_index].name);
    free(list);
    s = ctx->be->open(ctx, bi, &ctx->dev);
    if (s == KCRT_OK)
        ctx->info.index = d;
    return s;
}

kcrt_status kcrt_open(kcrt_context **out, const kcrt_options *opts)
{
    open_error[0] = 0;
    if (!out) {
        snprintf(open_error, sizeof(open_error), "kcrt_open: ctx is NULL");
        return KCRT_ERROR_BAD_ARGUMENT;
    }
    *out = NULL;
    kcrt_context *ctx = calloc(1, sizeof(*ctx));
    if (!ctx) {
        snprintf(open_error, sizeof(open_error), "out of memory");
        return KCRT_ERROR_OUT_OF_MEMORY;
    }
    ctx->debug = rt_env_debug();
    ctx->fallback = ctx->fallback_index = -1;
    const char *backend = opts && opts->backend ? opts->backend : "auto";
    int index = opts ? opts->device : -1;
    const char *env_backend = getenv("KCRT_BACKEND"), *env_device = getenv("KCRT_DEVICE");
    if (env_backend && *env_backend) {
        rt_log(ctx, "KCRT_BACKEND=%s overrides the options (%s)", env_backend, backend);
        backend = env_backend;
    }
    if (env_device && *env_device)
        rt_log(ctx, "KCRT_DEVICE=%s overrides the options (device %d)", env_device, index);
    else
        env_device = NULL;
    rt_log(ctx, "opening: backend %s, device %s", backend,
           env_device  ? env_device
           : index < 0 ? "best"
                       : "as asked");
    kcrt_status s = open_device(ctx, backend, index, env_device);
    if (s == KCRT_OK)
        s = rt_record_open(ctx);
    if (s != KCRT_OK)
        return failed_open(out, ctx, s);
    *out = ctx;
    return KCRT_OK;
}

/* Moves an auto-chosen context, which holds nothing yet, to its fallback
 * Vulkan device (why: for the log). On failure the context is failed, as
 * after a failed kcrt_open. */
static kcrt_status fall_back(kcrt_context *ctx, const char *why)
{
    int local = ctx->fallback, index = ctx->fallback_index;
    assert(local >= 0 && !ctx->buffers && !ctx->bundles);
    rt_log(ctx, "%s: the auto choice moves from %s '%s' to device %d on vulkan", why, ctx->be->name,
           ctx->info.name, index);
    ctx->fallback = ctx->fallback_index = -1;
    ctx->be->close(ctx->dev);
    ctx->dev = NULL;
    ctx->be = &rt_vulkan_backend;
    kcrt_status s = ctx->be->open(ctx, local, &ctx->dev);
    if (s != KCRT_OK) {
        ctx->be = NULL;
        ctx->dev = NULL;
        ctx->failed = s;
        return s;
    }
    ctx->info.index = index;
    return KCRT_OK;
}

/* Does the backend run none of the bundle's variants, which has SPIR-V? */
static bool nothing_but_spirv(const kcrt_context *ctx, const kcrt_bundle *b)
{
    bool spirv = false;
    for (int i = 0; i < b->nkernels; i++)
        for (int j = 0; j < b->kernels[i].info.nvariants; j++) {
            const char *target = b->kernels[i].info.variants[j].target;
            if (ctx->be->loads(ctx->dev, target) > 0)
                return false;
            spirv |= strcmp(target, "spirv") == 0;
        }
    return spirv;
}

kcrt_status rt_settle_backend(kcrt_context *ctx, const kcrt_bundle *b)
{
    if (ctx->fallback < 0)
        return KCRT_OK;
    bool first = !ctx->buffers && !ctx->bundles;
    if (!first || !nothing_but_spirv(ctx, b)) {
        ctx->fallback = -1; /* decided: this backend stays */
        return KCRT_OK;
    }
    char why[RT_MSG];
    rt_printf(why, sizeof(why), "bundle %s has no variant for %s, only SPIR-V", b->path, ctx->be->name);
    return fall_back(ctx, why);
}

void kcrt_close(kcrt_context *ctx)
{
    if (!ctx)
        return;
    while (ctx->bundles)
        kcrt_bundle_free(ctx->bundles);
    while (ctx->buffers)
        kcrt_buffer_free(ctx->buffers);
    for (kcrt_buffer *b = ctx->dead_buffers, *next; b; b = next)
        next = b->next, free(b);
    for (kcrt_kernel *k = ctx->dead_kernels, *next; k; k = next)
        next = k->next, free(k);
    for (kcrt_bundle *b = ctx->dead_bundles, *next; b; b = next)
        next = b->next, free(b);
    rt_checked_free(ctx);
    rt_flush_free(ctx);
    rt_record_close(ctx);
    if (ctx->dev)
        ctx->be->close(ctx->dev);
    free(ctx);
}

const char *kcrt_error(const kcrt_context *ctx)
{
    return ctx ? ctx->err : open_error;
}

const char *kcrt_device_name(const kcrt_context *ctx)
{
    return ctx && !ctx->failed ? ctx->info.name : "";
}

const char *kcrt_backend_name(const kcrt_context *ctx)
{
    return ctx && ctx->be ? ctx->be->name : "";
}

const kcrt_device_info *kcrt_device_info_get(const kcrt_context *ctx)
{
    return ctx && !ctx->failed ? &ctx->info : NULL;
}

kcrt_status kcrt_finish(kcrt_context *ctx)
{
    if (!ctx)
        return KCRT_ERROR_BAD_ARGUMENT;
    if (ctx->failed)
        return ctx->failed;
    kcrt_status s = ctx->be->finish(ctx->dev);
    return s == KCRT_OK ? rt_checked_report(ctx) : s;
}

kcrt_status kcrt_set_stream(kcrt_context *ctx, void *native_stream)
{
    if (!ctx)
        return KCRT_ERROR_BAD_ARGUMENT;
    if (ctx->failed)
        return ctx->failed;
    if (!ctx->be->set_stream)
        return rt_fail(ctx, KCRT_ERROR_UNSUPPORTED,
                       "kcrt_set_stream: %s work goes on the context's own queue; there is no stream to set",
                       ctx->be->name);
    kcrt_status s = ctx->be->set_stream(ctx->dev, native_stream);
    if (s == KCRT_OK)
        rt_log(ctx, "launches go on %s stream %p", native_stream ? "the host's" : "the context's own",
               native_stream);
    return s;
}

kcrt_status kcrt_vulkan_device_get(kcrt_context *ctx, kcrt_vulkan_device *out)
{
    if (!ctx || !out)
        return rt_fail(ctx, KCRT_ERROR_BAD_ARGUMENT, "kcrt_vulkan_device_get: out is NULL");
    memset(out, 0, sizeof(*out));
    if (ctx->failed)
        return ctx->failed;
    if (!ctx->be->vulkan_device)
        return rt_fail(ctx, KCRT_ERROR_UNSUPPORTED, "kcrt_vulkan_device_get: the context is on %s, not Vulkan",
                       ctx->be->name);
    return ctx->be->vulkan_device(ctx->dev, out);
}

void kcrt_stats_get(const kcrt_context *ctx, kcrt_stats *out)
{
    memset(out, 0, sizeof(*out));
    if (ctx && ctx->dev)
        ctx->be->stats(ctx->dev, out);
    for (const kcrt_buffer *b = ctx ? ctx->buffers : NULL; b; b = b->next)
        out->buffers_live++;
    for (const kcrt_bundle *b = ctx ? ctx->bundles : NULL; b; b = b->next)
        out->bundles_live++;
}
