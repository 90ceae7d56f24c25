/*
 * launch.c — checking a launch against its kernel and packing it for the
 * backend.
 *
 * The order of checks follows what a caller gets wrong first: the count of
 * arguments, each one's kind (buffer or scalar) and scalar type, then the
 * variant (which may depend on the integer scalars), then each buffer's
 * size against its declared extent, aliasing, and the grid. Extents and
 * grids are evaluated with the call's integer scalars and the variant's
 * tunables by the postfix evaluator of support/kc_iexpr.h. Every refusal
 * says which argument, which expression and its value.
 */
#include "rt_private.h"

#include <stdlib.h>
#include <string.h>

#include "kc_checked.h"
#include "kc_iexpr.h"

enum { MAX_PARAMS = 256 }; /* the bundle loader refuses more */
/* with a checked kernel's hidden parameters (support/kc_checked.h) */
enum { MAX_SLOTS = MAX_PARAMS + KC_CHECK_HIDDEN(MAX_PARAMS) };

/* A launch on its way to the backend. */
typedef struct prep {
    kcrt_kernel *k;
    const kcrt_arg *args;
    rt_variant *v;
    const char *why;
    int64_t shape[MAX_PARAMS];
    int64_t extent[MAX_PARAMS]; /* buffers: the declared extent at this launch, -1 if unknown */
    void *buffers[MAX_SLOTS];
    bool writes[MAX_SLOTS];
    unsigned char small[1024];
    unsigned char *packed;
    rt_launch_desc desc;
    bool empty; /* a grid dimension is 0: checked, then nothing to run */
} prep;

static const char *arg_type_name(kcrt_arg_type t)
{
    switch (t) {
    case KCRT_ARG_I32: return "KCRT_I32";
    case KCRT_ARG_U32: return "KCRT_U32";
    case KCRT_ARG_F32: return "KCRT_F32";
    case KCRT_ARG_F16: return "KCRT_F16";
    case KCRT_ARG_BOOL: return "KCRT_BOOL";
    case KCRT_ARG_BUF: return "KCRT_BUF";
    }
    return "an argument of unknown type";
}

static kcrt_arg_type wanted(kcrt_type t)
{
    switch (t) {
    case KCRT_TYPE_INT: return KCRT_ARG_I32;
    case KCRT_TYPE_UINT: return KCRT_ARG_U32;
    case KCRT_TYPE_FLOAT: return KCRT_ARG_F32;
    case KCRT_TYPE_HALF: return KCRT_ARG_F16;
    default: return KCRT_ARG_BOOL;
    }
}

/* "n int, a float, x const float[n], y float[n]" */
static void signature(const rt_kernel *rk, char *out, size_t len)
{
    size_t at = 0;
    out[0] = 0;
    for (int i = 0; i < rk->info.nparams && at < len; i++) {
        const kcrt_param_info *p = &rk->params[i];
        int n =
            p->kind == KCRT_PARAM_SCALAR
                ? snprintf(out + at, len - at, "%s%s %s", i ? ", " : "", p->name, p->type_name)
                : snprintf(out + at, len - at, "%s%s %s%s[%s]", i ? ", " : "", p->name,
                           p->readonly ? "const " : "", p->type_name, p->extent_text ? p->extent_text : "?");
        at += n > 0 ? (size_t)n : 0;
    }
}

/* ---- arguments -------------------------------------------------------------------------------- */

static kcrt_status check_arg(kcrt_context *ctx, const rt_kernel *rk, int i, const kcrt_arg *a)
{
    const kcrt_param_info *p = &rk->params[i];
    const char *name = rk->info.name;
    if (p->kind == KCRT_PARAM_BUFFER) {
        if (a->type != KCRT_ARG_BUF)
            return rt_fail(ctx, KCRT_ERROR_BAD_ARGUMENT,
                           "%s: argument %d ('%s') is a %sbuffer of %s: pass KCRT_BUF(buffer), not %s", name,
                           i, p->name, p->readonly ? "const " : "", p->type_name, arg_type_name(a->type));
        if (!a->v.buf)
            return rt_fail(ctx, KCRT_ERROR_BAD_ARGUMENT, "%s: argument %d ('%s') is a NULL buffer", name, i,
                           p->name);
        if (a->v.buf->magic == RT_FREED && a->v.buf->ctx == ctx)
            return rt_fail(ctx, KCRT_ERROR_BAD_ARGUMENT,
                           "%s: argument %d ('%s') is a buffer that was freed (kcrt_buffer_free)", name, i,
                           p->name);
        if (a->v.buf->ctx != ctx)
            return rt_fail(ctx, KCRT_ERROR_BAD_ARGUMENT,
                           "%s: argument %d ('%s') is a buffer of another context", name, i, p->name);
        return KCRT_OK;
    }
    if (a->type == KCRT_ARG_BUF)
        return rt_fail(ctx, KCRT_ERROR_BAD_ARGUMENT,
                       "%s: argument %d ('%s') is a scalar %s: pass %s, not a buffer", name, i, p->name,
                       p->type_name, arg_type_name(wanted(p->type)));
    if (a->type != wanted(p->type))
        return rt_fail(ctx, KCRT_ERROR_BAD_ARGUMENT, "%s: argument %d ('%s') is %s %s: pass %s, not %s", name,
                       i, p->name, p->type == KCRT_TYPE_INT ? "an" : "a", p->type_name,
                       arg_type_name(wanted(p->type)), arg_type_name(a->type));
    return KCRT_OK;
}

static kcrt_status check_args(kcrt_context *ctx, const rt_kernel *rk, const kcrt_arg *args, size_t nargs)
{
    if (nargs != (size_t)rk->info.nparams || (nargs && !args)) {
        char sig[RT_MSG / 2];
        signature(rk, sig, sizeof(sig));
        return rt_fail(ctx, KCRT_ERROR_BAD_ARGUMENT, "%s takes %d argument%s (%s), got %zu", rk->info.name,
                       rk->info.nparams, rk->info.nparams == 1 ? "" : "s", sig, args ? nargs : 0);
    }
    for (int i = 0; i < rk->info.nparams; i++) {
        kcrt_status s = check_arg(ctx, rk, i, &args[i]);
        if (s != KCRT_OK)
            return s;
    }
    return KCRT_OK;
}

static int64_t int_value(const kcrt_arg *a)
{
    switch (a->type) {
    case KCRT_ARG_I32: return a->v.i32;
    case KCRT_ARG_U32: return a->v.u32;
    case KCRT_ARG_BOOL: return a->v.b ? 1 : 0;
    default: return 0;
    }
}

/* ---- expressions ------------------------------------------------------------------------------ */

/* Names in a launch's expressions: integer scalars, then the variant's tunables. */
static bool lookup(void *user, const char *name, int64_t *value)
{
    const prep *p = user;
    const rt_kernel *rk = p->k->rk;
    for (int i = 0; i < rk->info.nparams; i++) {
        const kcrt_param_info *q = &rk->params[i];
        if (q->kind == KCRT_PARAM_SCALAR && strcmp(q->name, name) == 0) {
            if (q->type != KCRT_TYPE_INT && q->type != KCRT_TYPE_UINT && q->type != KCRT_TYPE_BOOL)
                return false;
            *value = int_value(&p->args[i]);
            return true;
        }
    }
    for (int i = 0; p->v && i < rk->info.ntunables; i++)
        if (strcmp(rk->tunables[i].name, name) == 0) {
            *value = p->v->tvals[i];
            return true;
        }
    return false;
}

/* "n=20, m=30, WG=64" */
static void values_used(const prep *p, char *out, size_t len)
{
    const rt_kernel *rk = p->k->rk;
    size_t at = 0;
    out[0] = 0;
    for (int i = 0; i < rk->nints && at < len; i++) {
        int n = snprintf(out + at, len - at, "%s%s=%lld", at ? ", " : "", rk->params[rk->ints[i]].name,
                         (long long)p->shape[i]);
        at += n > 0 ? (size_t)n : 0;
    }
    for (int i = 0; p->v && i < rk->info.ntunables && at < len; i++) {
        int n = snprintf(out + at, len - at, "%s%s=%lld", at ? ", " : "", rk->tunables[i].name,
                         (long long)p->v->tvals[i]);
        at += n > 0 ? (size_t)n : 0;
    }
}

/* The words for an extent that does not fit; made only when refusing. */
static kcrt_status bad_extent(prep *p, int i, const char *err, int64_t n)
{
    const rt_kernel *rk = p->k->rk;
    const kcrt_param_info *q = &rk->params[i];
    const kcrt_buffer *buf = p->args[i].v.buf;
    kcrt_context *ctx = p->k->b->ctx;
    char vals[512];
    values_used(p, vals, sizeof(vals));
    if (err)
        return rt_fail(ctx, KCRT_ERROR_BAD_ARGUMENT,
                       "%s: argument %d ('%s'): its extent %s cannot be evaluated: %s (%s)", rk->info.name, i,
                       q->name, q->extent_text, err, vals);
    if (n < 0)
        return rt_fail(ctx, KCRT_ERROR_BAD_ARGUMENT,
                       "%s: argument %d ('%s'): its extent %s is %lld, negative (%s)", rk->info.name, i,
                       q->name, q->extent_text, (long long)n, vals);
    return rt_fail(ctx, KCRT_ERROR_BAD_ARGUMENT,
                   "%s: argument %d ('%s'): the buffer has %zu bytes, but %s[%s] needs %lld elements of %zu "
                   "bytes = %llu bytes (%s)",
                   rk->info.name, i, q->name, buf->size, q->name, q->extent_text, (long long)n, q->elem_bytes,
                   (unsigned long long)n * q->elem_bytes, vals);
}

/* One binding reaches max_buffer_bytes at most (Vulkan's
 * maxStorageBufferRange: 128 MiB on lavapipe, 4 GiB on most GPUs); past it
 * the kernel would read zeros and drop its writes, and the launch would
 * say KCRT_OK. */
static kcrt_status check_reach(prep *p, int i, uint64_t bytes)
{
    kcrt_context *ctx = p->k->b->ctx;
    uint64_t max = ctx->info.max_buffer_bytes;
    if (!max || bytes <= max)
        return KCRT_OK;
    const rt_kernel *rk = p->k->rk;
    return rt_fail(ctx, KCRT_ERROR_UNSUPPORTED,
                   "%s: argument %d ('%s'): %llu bytes of it are used, but one buffer binding on %s reaches %llu "
                   "bytes (%s); split the work into smaller launches",
                   rk->info.name, i, rk->params[i].name, (unsigned long long)bytes, ctx->info.name,
                   (unsigned long long)max, ctx->be->name);
}

static kcrt_status check_extent(prep *p, int i)
{
    const kcrt_param_info *q = &p->k->rk->params[i];
    const kcrt_buffer *buf = p->args[i].v.buf;
    p->buffers[i] = buf->impl;
    p->writes[i] = !q->readonly;
    p->extent[i] = -1;
    if (!q->extent) /* the kernel did not say: all of the buffer may be used */
        return check_reach(p, i, buf->size);
    int64_t n;
    uint64_t bytes;
    char err[256];
    if (!kc_iexpr_eval_postfix(q->extent, lookup, p, &n, err, sizeof(err)))
        return bad_extent(p, i, err, 0);
    if (n < 0 || __builtin_mul_overflow((uint64_t)n, (uint64_t)q->elem_bytes, &bytes) || bytes > buf->size)
        return bad_extent(p, i, NULL, n);
    p->extent[i] = n;
    return check_reach(p, i, bytes);
}

/* Without KC_MAY_ALIAS, one buffer may not be passed twice when either use writes it. */
static kcrt_status check_alias(prep *p)
{
    const rt_kernel *rk = p->k->rk;
    if (rk->info.may_alias)
        return KCRT_OK;
    for (int i = 0; i < rk->info.nparams; i++)
        for (int j = i + 1; j < rk->info.nparams; j++)
            if (p->buffers[i] && p->buffers[i] == p->buffers[j] && (p->writes[i] || p->writes[j]))
                return rt_fail(
                    p->k->b->ctx, KCRT_ERROR_BAD_ARGUMENT,
                    "%s: arguments %d ('%s') and %d ('%s') are the same buffer, and the kernel writes "
                    "it; the kernel would need KC_MAY_ALIAS",
                    rk->info.name, i, rk->params[i].name, j, rk->params[j].name);
    return KCRT_OK;
}

/* The words for a grid that cannot be launched; made only when refusing. */
static kcrt_status bad_grid(prep *p, int d, const char *err, int64_t g)
{
    kcrt_context *ctx = p->k->b->ctx;
    const rt_kernel *rk = p->k->rk;
    char vals[512];
    values_used(p, vals, sizeof(vals));
    const char *text = rk->grid_text[d], *name = rk->info.name;
    char dim = "xyz"[d];
    if (err)
        return rt_fail(ctx, KCRT_ERROR_BAD_ARGUMENT, "%s: grid %c = %s cannot be evaluated: %s (%s)", name, dim,
                       text, err, vals);
    if (g < 0)
        return rt_fail(ctx, KCRT_ERROR_BAD_ARGUMENT, "%s: grid %c = %s = %lld, negative (%s)", name, dim, text,
                       (long long)g, vals);
    return rt_fail(ctx, KCRT_ERROR_UNSUPPORTED, "%s: grid %c = %s = %lld workgroups, more than the device's %u (%s)",
                   name, dim, text, (long long)g, ctx->info.max_workgroup_count[d], vals);
}

static kcrt_status check_grid(prep *p)
{
    const rt_kernel *rk = p->k->rk;
    const uint32_t *max = p->k->b->ctx->info.max_workgroup_count;
    for (int d = 0; d < 3; d++) {
        int64_t g;
        char err[256];
        if (!kc_iexpr_eval_postfix(rk->grid[d], lookup, p, &g, err, sizeof(err)))
            return bad_grid(p, d, err, 0);
        if (g < 0 || (uint64_t)g > max[d])
            return bad_grid(p, d, NULL, g);
        p->empty |= g == 0; /* an empty audio chunk: no work, not an error */
        p->desc.grid[d] = (uint32_t)g;
    }
    return KCRT_OK;
}

/* ---- packing --------------------------------------------------------------------------------------- */

/* Scalars at the offsets of variants.args: 4 bytes each, bool as a uint
 * 0/1 (compiler/spirv/kc_spirv.h and docs/backends.md agree on these); a
 * half is a 32-bit float that the kernel converts in push constants
 * (a 4-byte slot) and its IEEE bits in kernel arguments (a 2-byte slot). */
static void pack(prep *p)
{
    const rt_kernel *rk = p->k->rk;
    for (int i = 0; i < rk->info.nparams; i++) {
        const kcrt_arg *a = &p->args[i];
        const rt_slot *s = &p->v->slots[i];
        if (rk->params[i].kind != KCRT_PARAM_SCALAR)
            continue;
        uint32_t w = 0;
        float f;
        if (a->type == KCRT_ARG_F16 && s->size == 2) {
            memcpy(p->packed + s->offset, &a->v.f16, 2);
            continue;
        }
        switch (a->type) {
        case KCRT_ARG_I32: memcpy(&w, &a->v.i32, 4); break;
        case KCRT_ARG_U32: w = a->v.u32; break;
        case KCRT_ARG_F32: memcpy(&w, &a->v.f32, 4); break;
        case KCRT_ARG_F16: f = kcrt_f16_to_f32(a->v.f16), memcpy(&w, &f, 4); break;
        case KCRT_ARG_BOOL: w = a->v.b ? 1 : 0; break;
        case KCRT_ARG_BUF: break;
        }
        memcpy(p->packed + s->offset, &w, 4);
    }
}

/* A checked kernel's hidden arguments: each buffer's length in elements
 * (its declared extent, else as far as the buffer and one binding reach),
 * the kernel's number, the record. */
static kcrt_status pack_checked(prep *p)
{
    kcrt_context *ctx = p->k->b->ctx;
    rt_kernel *rk = p->k->rk;
    uint32_t id;
    void *record;
    kcrt_status s = rt_checked_launch(ctx, rk, &id, &record);
    if (s != KCRT_OK)
        return s;
    int h = rk->info.nparams;
    for (int i = 0; i < rk->info.nparams; i++) {
        const kcrt_param_info *q = &rk->params[i];
        if (q->kind != KCRT_PARAM_BUFFER)
            continue;
        uint64_t bytes = p->args[i].v.buf->size, max = ctx->info.max_buffer_bytes;
        uint64_t n = p->extent[i] >= 0 ? (uint64_t)p->extent[i] : (max && bytes > max ? max : bytes) / q->elem_bytes;
        uint32_t len = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
        memcpy(p->packed + p->v->slots[h++].offset, &len, 4);
    }
    memcpy(p->packed + p->v->slots[h++].offset, &id, 4);
    p->buffers[h] = record;
    p->writes[h] = true;
    return KCRT_OK;
}

static kcrt_status check_common(kcrt_kernel *k, const kcrt_arg *args, size_t nargs, prep *p)
{
    if (!k)
        return KCRT_ERROR_BAD_ARGUMENT;
    if (k->magic == RT_FREED)
        return rt_fail(k->b->ctx, KCRT_ERROR_BAD_ARGUMENT,
                       "the kernel handle was freed with its bundle (kcrt_bundle_free); get it again from a loaded "
                       "bundle");
    kcrt_context *ctx = k->b->ctx;
    const rt_kernel *rk = k->rk;
    if (ctx->failed)
        return ctx->failed;
    p->k = k;
    p->args = args;
    kcrt_status s = check_args(ctx, rk, args, nargs);
    if (s != KCRT_OK)
        return s;
    for (int i = 0; i < rk->nints; i++)
        p->shape[i] = int_value(&args[rk->ints[i]]);
    p->v = rt_choose(k, p->shape, &p->why);
    if (!p->v)
        return rt_fail(ctx, KCRT_ERROR_NO_VARIANT, "%s: no variant to launch", rk->info.name);
    return KCRT_OK;
}

static kcrt_status prepare(kcrt_kernel *k, const kcrt_arg *args, size_t nargs, prep *p)
{
    kcrt_status s = check_common(k, args, nargs, p);
    if (s != KCRT_OK)
        return s;
    kcrt_context *ctx = k->b->ctx;
    rt_kernel *rk = k->rk;
    if ((s = rt_variant_module(ctx, rk, p->v)) != KCRT_OK)
        return s;
    for (int i = 0; i < rk->info.nparams; i++)
        if (rk->params[i].kind == KCRT_PARAM_BUFFER && (s = check_extent(p, i)) != KCRT_OK)
            return s;
    if ((s = check_alias(p)) != KCRT_OK || (s = check_grid(p)) != KCRT_OK)
        return s;
    uint32_t size = p->v->info->args_size;
    p->packed = size <= sizeof(p->small) ? p->small : calloc(1, size);
    if (!p->packed)
        return rt_fail(ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    memset(p->packed, 0, size);
    pack(p);
    if (rk->nhidden && (s = pack_checked(p)) != KCRT_OK)
        return s;
    p->desc.nparams = rk->info.nparams + rk->nhidden;
    p->desc.buffers = p->buffers;
    p->desc.writes = p->writes;
    p->desc.args = p->packed;
    p->desc.args_size = size;
    return KCRT_OK;
}

static void release(prep *p)
{
    if (p->packed && p->packed != p->small)
        free(p->packed);
}

/* The prep is large (per-parameter arrays): on the heap, not the stack. */
static prep *new_prep(kcrt_kernel *k)
{
    prep *p = calloc(1, sizeof(prep));
    if (!p && k)
        rt_fail(k->b->ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    return p;
}

kcrt_status kcrt_launch(kcrt_kernel *k, const kcrt_arg *args, size_t nargs)
{
    prep *p = new_prep(k);
    if (!p)
        return k ? KCRT_ERROR_OUT_OF_MEMORY : KCRT_ERROR_BAD_ARGUMENT;
    kcrt_status s = prepare(k, args, nargs, p);
    if (s == KCRT_OK && !p->empty) {
        kcrt_context *ctx = k->b->ctx;
        s = ctx->be->launch(ctx->dev, p->v->module, &p->desc);
    }
    release(p);
    free(p);
    return s;
}

/* The context's scratch buffer for cold timing, at least `bytes` big. */
static kcrt_status flush_buffer(kcrt_context *ctx, size_t bytes)
{
    if (ctx->flush && ctx->flush_bytes >= bytes)
        return KCRT_OK;
    if (ctx->flush)
        ctx->be->buffer_free(ctx->dev, ctx->flush);
    ctx->flush = NULL;
    ctx->flush_bytes = 0;
    kcrt_status s = ctx->be->buffer_create(ctx->dev, bytes, &ctx->flush);
    if (s != KCRT_OK) {
        char why[RT_MSG];
        rt_printf(why, sizeof(why), "%s", ctx->err);
        ctx->flush = NULL;
        return rt_fail(ctx, s, "kcrt_time_launch_cold: a scratch buffer of %zu MiB to clear the caches with: %s",
                       bytes >> 20, why);
    }
    ctx->flush_bytes = bytes;
    return KCRT_OK;
}

void rt_flush_free(kcrt_context *ctx)
{
    if (ctx->flush)
        ctx->be->buffer_free(ctx->dev, ctx->flush);
    ctx->flush = NULL;
    ctx->flush_bytes = 0;
}

/* kcrt_time_launch, with flush_bytes of scratch written before each launch
 * when cold. */
static kcrt_status time_launch(kcrt_kernel *k, const kcrt_arg *args, size_t nargs, int repeats, bool cold,
                               size_t flush_bytes, double *ns_each)
{
    const char *fn = cold ? "kcrt_time_launch_cold" : "kcrt_time_launch";
    if (k && (repeats < 1 || repeats > 100000 || !ns_each))
        return rt_fail(k->b->ctx, KCRT_ERROR_BAD_ARGUMENT, "%s: repeats must be 1..100000 and ns_each not NULL", fn);
    if (k && cold && flush_bytes > KCRT_FLUSH_MAX_BYTES)
        return rt_fail(k->b->ctx, KCRT_ERROR_BAD_ARGUMENT, "%s: flush_bytes is %zu MiB, past the most, %zu MiB", fn,
                       flush_bytes >> 20, KCRT_FLUSH_MAX_BYTES >> 20);
    prep *p = new_prep(k);
    if (!p)
        return k ? KCRT_ERROR_OUT_OF_MEMORY : KCRT_ERROR_BAD_ARGUMENT;
    kcrt_status s = prepare(k, args, nargs, p);
    if (s == KCRT_OK && p->empty)
        s = rt_fail(k->b->ctx, KCRT_ERROR_BAD_ARGUMENT, "%s: the grid is empty at this shape: nothing to time",
                    k->rk->info.name);
    else if (s == KCRT_OK) {
        kcrt_context *ctx = k->b->ctx;
        /* whole 4-byte words: Vulkan fills no less */
        size_t bytes = cold ? ((flush_bytes ? flush_bytes : KCRT_FLUSH_BYTES) + 3) & ~(size_t)3 : 0;
        if (cold)
            s = flush_buffer(ctx, bytes);
        if (s == KCRT_OK)
            s = ctx->be->time(ctx->dev, p->v->module, &p->desc, repeats, cold ? ctx->flush : NULL, bytes, ns_each);
    }
    release(p);
    free(p);
    return s;
}

kcrt_status kcrt_time_launch(kcrt_kernel *k, const kcrt_arg *args, size_t nargs, int repeats, double *ns_each)
{
    return time_launch(k, args, nargs, repeats, false, 0, ns_each);
}

kcrt_status kcrt_time_launch_cold(kcrt_kernel *k, const kcrt_arg *args, size_t nargs, int repeats,
                                  size_t flush_bytes, double *ns_each)
{
    return time_launch(k, args, nargs, repeats, true, flush_bytes, ns_each);
}

kcrt_status kcrt_kernel_choose(kcrt_kernel *k, const kcrt_arg *args, size_t nargs, const char **variant,
                               const char **why)
{
    prep *p = new_prep(k);
    if (!p)
        return k ? KCRT_ERROR_OUT_OF_MEMORY : KCRT_ERROR_BAD_ARGUMENT;
    kcrt_status s = check_common(k, args, nargs, p);
    if (s == KCRT_OK) {
        if (variant)
            *variant = p->v->info->tunables;
        if (why)
            *why = p->why;
    }
    free(p);
    return s;
}

/* kcrt_eval's names: the caller's two arrays. */
typedef struct named {
    const char *const *names;
    const int64_t *values;
    int n;
} named;

static bool named_lookup(void *user, const char *name, int64_t *value)
{
    const named *t = user;
    for (int i = 0; i < t->n; i++)
        if (t->names[i] && strcmp(t->names[i], name) == 0) {
            *value = t->values[i];
            return true;
        }
    return false;
}

kcrt_status kcrt_eval(const char *postfix, const char *const *names, const int64_t *values, int n,
                      int64_t *out, char *err, size_t errlen)
{
    named t = {names, values, n < 0 || !names || !values ? 0 : n};
    char msg[256];
    if (!postfix || !out) {
        if (err && errlen)
            snprintf(err, errlen, "kcrt_eval: %s is NULL", !postfix ? "the expression" : "out");
        return KCRT_ERROR_BAD_ARGUMENT;
    }
    if (kc_iexpr_eval_postfix(postfix, named_lookup, &t, out, msg, sizeof(msg)))
        return KCRT_OK;
    if (err && errlen) {
        char text[512];
        rt_infix(postfix, text, sizeof(text));
        snprintf(err, errlen, "%s: %s", text, msg);
    }
    return KCRT_ERROR_BAD_ARGUMENT;
}
