/*
 * choose.c — kernels and their variants (DESIGN.md §6).
 *
 * A handle from kcrt_kernel_get chooses a variant at each launch, in this
 * order:
 *   1. the tuned row for this device and exactly this shape (the kernel's
 *      integer scalars by name);
 *   2. else the nearest tuned shape for this device: Euclidean distance of
 *      the shapes in log space (log2(1 + v), negative values mirrored), so
 *      that n=1000 is as near to 2000 as 1e6 is to 2e6; ties go to the
 *      faster row;
 *   3. else a row of the same device family on the same backend, exact
 *      shape first, then nearest;
 *   4. else the kernel's default variant.
 * A tuned row whose variant this device cannot run (a missing feature) is
 * passed over. The last choice is remembered per handle, so a loop of
 * launches with one shape chooses once. kcrt_kernel_get_variant pins one
 * variant and makes its module at once, so that a tuner's first timed
 * launch does not pay for pipeline creation and errors show early.
 */
#include "rt_private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- modules -------------------------------------------------------------------------------- */

void rt_variant_desc(const rt_kernel *rk, const rt_variant *v, rt_module_desc *m)
{
    memset(m, 0, sizeof(*m));
    m->kernel = rk->info.name;
    m->variant = v->info->tunables;
    m->target = v->info->target;
    m->binary = v->binary;
    m->size = v->size;
    memcpy(m->wg, v->info->wg, sizeof(m->wg));
    m->shared_bytes = v->info->shared_bytes;
    m->nparams = rk->info.nparams + rk->nhidden;
    m->slots = v->slots;
    m->nbindings = v->nbuffers + (v->info->spilled ? 1 : 0);
    m->args_size = v->info->args_size;
    m->spilled = v->info->spilled;
    m->features = v->features;
    m->spirv_minor = v->spirv_minor;
}

bool rt_fits_device(const kcrt_device_info *i, const rt_module_desc *m, char *why, size_t len)
{
    uint64_t inv = (uint64_t)m->wg[0] * m->wg[1] * m->wg[2];
    for (int k = 0; k < 3; k++)
        if (m->wg[k] > i->max_workgroup_size[k])
            return rt_printf(why, len, "its workgroup size %u in %c exceeds the device's %u", m->wg[k], "xyz"[k],
                             i->max_workgroup_size[k]),
                   false;
    if (inv > i->max_workgroup_invocations)
        return rt_printf(why, len, "its workgroup of %llu invocations exceeds the device's %u",
                         (unsigned long long)inv, i->max_workgroup_invocations),
               false;
    if (m->shared_bytes > i->max_shared_bytes)
        return rt_printf(why, len, "it uses %u bytes of shared memory, more than the device's %u", m->shared_bytes,
                         i->max_shared_bytes),
               false;
    return true;
}

/* Can this device run v? why says what is missing. */
static bool runnable(kcrt_context *ctx, const rt_kernel *rk, const rt_variant *v, char *why, size_t len)
{
    if (!v->loads)
        return rt_printf(why, len, "its target %s does not run on %s", v->info->target, ctx->be->name), false;
    if (v->bad_feature)
        return rt_printf(why, len, "it needs '%s', a feature this libkcrt does not know (update kc)",
                         v->bad_feature),
               false;
    rt_module_desc m;
    rt_variant_desc(rk, v, &m);
    return ctx->be->check(ctx->dev, &m, why, len);
}

kcrt_status rt_variant_module(kcrt_context *ctx, rt_kernel *rk, rt_variant *v)
{
    if (v->module)
        return KCRT_OK;
    char why[512];
    if (!runnable(ctx, rk, v, why, sizeof(why)))
        return rt_fail(ctx, KCRT_ERROR_UNSUPPORTED, "kernel '%s' variant '%s' cannot run on '%s': %s",
                       rk->info.name, v->info->tunables, ctx->info.name, why);
    rt_module_desc m;
    rt_variant_desc(rk, v, &m);
    return ctx->be->module_create(ctx->dev, &m, &v->module);
}

/* ---- the choice ------------------------------------------------------------------------------ */

static double distance(const rt_kernel *rk, const rt_tuned *t, const double *logs)
{
    double d = 0;
    for (int i = 0; i < rk->nints; i++)
        d += (t->logs[i] - logs[i]) * (t->logs[i] - logs[i]);
    return sqrt(d);
}

/* The best row of one kind (this device, or its family): exact shape, or
 * else nearest. */
static const rt_tuned *best_row(kcrt_context *ctx, const rt_kernel *rk, bool mine, const int64_t *shape,
                                const double *logs, double *dist)
{
    const rt_tuned *best = NULL;
    char why[256];
    for (int i = 0; i < rk->ntuned; i++) {
        const rt_tuned *t = &rk->tuned[i];
        if (t->this_device != mine)
            continue;
        double d =
            memcmp(t->shape, shape, sizeof(int64_t) * (size_t)rk->nints) == 0 ? 0 : distance(rk, t, logs);
        if (d > 0 && d < 1e-12)
            d = 1e-12; /* not the same shape, however near */
        if (best && (d > *dist || (d == *dist && t->time_ns >= best->time_ns)))
            continue;
        if (!runnable(ctx, rk, t->v, why, sizeof(why)))
            continue;
        best = t;
        *dist = d;
    }
    return best;
}

/* "n=48000,m=3"; false when it did not fit in len. */
static bool say_shape(const rt_kernel *rk, const int64_t *shape, char *out, size_t len)
{
    size_t at = 0;
    out[0] = 0;
    for (int i = 0; i < rk->nints && at < len; i++) {
        int n = snprintf(out + at, len - at, "%s%s=%lld", i ? "," : "", rk->params[rk->ints[i]].name,
                         (long long)shape[i]);
        at += n > 0 ? (size_t)n : 0;
    }
    return at < len;
}

static rt_variant *choose(kcrt_context *ctx, const rt_kernel *rk, const int64_t *shape, char *why, size_t len)
{
    double logs[64] = {0}, d = 0;
    for (int i = 0; i < rk->nints && i < 64; i++)
        logs[i] = shape[i] < 0 ? -log2(1.0 - (double)shape[i]) : log2(1.0 + (double)shape[i]);
    for (int pass = 0; pass < 2; pass++) {
        bool mine = pass == 0;
        const rt_tuned *t = best_row(ctx, rk, mine, shape, logs, &d);
        if (!t)
            continue;
        if (d == 0)
            rt_printf(why, len, "tuned for %s at exactly this shape (%.0f ns)",
                      mine ? "this device" : "another device of its family", t->time_ns);
        else
            rt_printf(why, len, "tuned for %s at the nearest shape %s (log2 distance %.3g)",
                      mine ? "this device" : "another device of its family", t->shape_text, d);
        return t->v;
    }
    char unused[256];
    if (rk->type_def && runnable(ctx, rk, rk->type_def, unused, sizeof(unused))) {
        rt_printf(why, len, "the default for a %s device (kc.yaml's defaults): no tuned row for this device (%d for "
                  "its family) fits", ctx->info.type_name, rk->ntuned);
        return rk->type_def;
    }
    rt_printf(why, len, "the default variant: no tuned row for this device (%d for its family) fits",
              rk->ntuned);
    return rk->def;
}

rt_variant *rt_choose(kcrt_kernel *k, const int64_t *shape, const char **why)
{
    rt_kernel *rk = k->rk;
    if (k->fixed) {
        *why = "the variant asked for (kcrt_kernel_get_variant)";
        return k->fixed;
    }
    size_t bytes = sizeof(int64_t) * (size_t)rk->nints;
    if (k->memo_valid && memcmp(k->memo_shape, shape, bytes) == 0) {
        *why = k->memo_why;
        return k->memo_v;
    }
    kcrt_context *ctx = k->b->ctx;
    rt_variant *v = choose(ctx, rk, shape, k->memo_why, sizeof(k->memo_why));
    if (k->memo_shape || (k->memo_shape = malloc(bytes ? bytes : 1))) {
        memcpy(k->memo_shape, shape, bytes);
        k->memo_v = v;
        k->memo_valid = true;
    }
    char s[768];
    bool whole = say_shape(rk, shape, s, sizeof(s));
    rt_log(ctx, "%s(%s): variant '%s': %s", rk->info.name, s, v ? v->info->tunables : "(none)", k->memo_why);
    if (whole)
        rt_record_shape(ctx, rk->info.name, s);
    *why = k->memo_why;
    return v;
}

/* ---- handles -------------------------------------------------------------------------------------- */

static kcrt_status find_kernel(kcrt_bundle *b, const char *name, rt_kernel **out)
{
    *out = NULL;
    if (b->magic == RT_FREED)
        return rt_fail(b->ctx, KCRT_ERROR_BAD_ARGUMENT, "kernel '%s': the bundle was freed (kcrt_bundle_free)",
                       name);
    if (!b->ctx)
        return rt_fail(NULL, KCRT_ERROR_BAD_ARGUMENT,
                       "kernel '%s': bundle '%s' was read without a device (kcrt_bundle_read); "
                       "kcrt_bundle_load it to launch",
                       name, b->path);
    for (int i = 0; i < b->nkernels; i++)
        if (strcmp(b->kernels[i].info.name, name) == 0) {
            *out = &b->kernels[i];
            return KCRT_OK;
        }
    char list[RT_MSG / 2];
    size_t at = 0;
    list[0] = 0;
    for (int i = 0; i < b->nkernels && at < sizeof(list); i++) {
        int n = snprintf(list + at, sizeof(list) - at, "%s%s", i ? ", " : "", b->kernels[i].info.name);
        at += n > 0 ? (size_t)n : 0;
    }
    return rt_fail(b->ctx, KCRT_ERROR_NO_KERNEL, "bundle '%s' has no kernel '%s' (it has: %s)", b->path, name,
                   list);
}

static kcrt_kernel *new_handle(kcrt_bundle *b, rt_kernel *rk, rt_variant *fixed)
{
    for (kcrt_kernel *h = rk->handles; h; h = h->next)
        if (h->fixed == fixed)
            return h;
    kcrt_kernel *h = calloc(1, sizeof(*h));
    if (!h)
        return NULL;
    h->magic = RT_LIVE_KERNEL;
    h->b = b;
    h->rk = rk;
    h->fixed = fixed;
    h->next = rk->handles;
    rk->handles = h;
    return h;
}

/* The targets a kernel has variants for, for messages. */
static void targets_of(const rt_kernel *rk, char *out, size_t len)
{
    size_t at = 0;
    out[0] = 0;
    for (int i = 0; i < rk->info.nvariants; i++) {
        const char *t = rk->info.variants[i].target;
        bool seen = false;
        for (int j = 0; j < i; j++)
            seen |= strcmp(rk->info.variants[j].target, t) == 0;
        if (!seen && at < len) {
            int n = snprintf(out + at, len - at, "%s%s", at ? ", " : "", t);
            at += n > 0 ? (size_t)n : 0;
        }
    }
}

kcrt_status kcrt_kernel_get(kcrt_bundle *b, const char *name, kcrt_kernel **out)
{
    if (!b || !name || !out)
        return rt_fail(b ? b->ctx : NULL, KCRT_ERROR_BAD_ARGUMENT, "kcrt_kernel_get: an argument is NULL");
    *out = NULL;
    rt_kernel *rk;
    kcrt_status s = find_kernel(b, name, &rk);
    if (s != KCRT_OK)
        return s;
    if (!rk->def) {
        char t[256];
        targets_of(rk, t, sizeof(t));
        const kcrt_device_info *d = &b->ctx->info;
        bool vk = strcmp(d->backend, "vulkan") == 0, cuda = strcmp(d->backend, "cuda") == 0;
        return rt_fail(b->ctx, KCRT_ERROR_NO_VARIANT,
                       "kernel '%s' has no default variant (%s) for the %s backend: the bundle has %s "
                       "(build it with -t %s%s for %s)",
                       name, rk->info.default_variant, b->ctx->be->name, t, d->target,
                       cuda ? " or an older sm_NN" : "", vk ? "Vulkan" : d->name);
    }
    if (!(*out = new_handle(b, rk, NULL)))
        return rt_fail(b->ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    return KCRT_OK;
}

/* "WG (64,128,256), TM (1,2,4,8)" */
static void tunables_of(const rt_kernel *rk, char *out, size_t len)
{
    size_t at = 0;
    out[0] = 0;
    for (int i = 0; i < rk->info.ntunables && at < len; i++) {
        const kcrt_tunable_info *t = &rk->tunables[i];
        int n = snprintf(out + at, len - at, "%s%s (", i ? ", " : "", t->name);
        at += n > 0 ? (size_t)n : 0;
        for (int j = 0; j < t->nvalues && at < len; j++) {
            n = snprintf(out + at, len - at, "%s%lld", j ? "," : "", (long long)t->values[j]);
            at += n > 0 ? (size_t)n : 0;
        }
        if (at < len)
            at += (size_t)snprintf(out + at, len - at, ")");
    }
    if (!rk->info.ntunables)
        snprintf(out, len, "none");
}

static void variants_of(const rt_kernel *rk, char *out, size_t len)
{
    size_t at = 0;
    out[0] = 0;
    int shown = 0;
    for (int i = 0; i < rk->info.nvariants && at < len; i++) {
        if (!rk->variants[i].loads)
            continue;
        int n = snprintf(out + at, len - at, "%s%s", shown++ ? " " : "",
                         *rk->info.variants[i].tunables ? rk->info.variants[i].tunables : "(default)");
        at += n > 0 ? (size_t)n : 0;
    }
    if (!shown)
        snprintf(out, len, "none");
}

/* Every value of a variant string must be one of its tunable's values. */
static bool values_known(const rt_kernel *rk, const int64_t *tv, char *err, size_t len)
{
    for (int i = 0; i < rk->info.ntunables; i++) {
        const kcrt_tunable_info *t = &rk->tunables[i];
        bool ok = false;
        for (int j = 0; j < t->nvalues; j++)
            ok |= t->values[j] == tv[i];
        if (!ok)
            return rt_printf(err, len, "%s=%lld is not one of %s's values", t->name, (long long)tv[i],
                             t->name),
                   false;
    }
    return true;
}

static rt_variant *variant_with(rt_kernel *rk, const int64_t *tv)
{
    for (int i = 0; i < rk->info.nvariants; i++)
        if (rk->variants[i].loads &&
            memcmp(rk->variants[i].tvals, tv, sizeof(int64_t) * (size_t)rk->info.ntunables) == 0)
            return &rk->variants[i];
    return NULL;
}

kcrt_status rt_find_variant(kcrt_bundle *b, rt_kernel *rk, const char *tunables, rt_variant **out)
{
    rt_arena scratch = {0};
    *out = NULL;
    int64_t *tv = rt_alloc(&scratch, sizeof(int64_t) * (size_t)(rk->info.ntunables + 1));
    char err[512], list[RT_MSG / 2];
    kcrt_status s = KCRT_OK;
    if (!tv)
        s = rt_fail(b->ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    else if (!rt_variant_values(&scratch, rk, tunables, tv, err, sizeof(err)) ||
             !values_known(rk, tv, err, sizeof(err))) {
        tunables_of(rk, list, sizeof(list));
        s = rt_fail(b->ctx, KCRT_ERROR_NO_VARIANT,
                    "bad variant '%s' for kernel '%s': %s; its tunables are %s", tunables, rk->info.name, err,
                    list);
    } else if (!(*out = variant_with(rk, tv))) {
        variants_of(rk, list, sizeof(list));
        s = rt_fail(b->ctx, KCRT_ERROR_NO_VARIANT,
                    "kernel '%s' has no variant '%s' for %s in bundle '%s' (build it with --all-variants); "
                    "its variants are: %s",
                    rk->info.name, tunables, b->ctx->be->name, b->path, list);
    }
    rt_arena_free(&scratch);
    return s;
}

kcrt_status kcrt_kernel_get_variant(kcrt_bundle *b, const char *name, const char *tunables, kcrt_kernel **out)
{
    if (!b || !name || !tunables || !out)
        return rt_fail(b ? b->ctx : NULL, KCRT_ERROR_BAD_ARGUMENT,
                       "kcrt_kernel_get_variant: an argument is NULL");
    *out = NULL;
    rt_kernel *rk;
    rt_variant *v;
    kcrt_status s = find_kernel(b, name, &rk);
    if (s == KCRT_OK)
        s = rt_find_variant(b, rk, tunables, &v);
    if (s == KCRT_OK)
        s = rt_variant_module(b->ctx, rk, v);
    if (s != KCRT_OK)
        return s;
    rt_log(b->ctx, "%s: variant '%s' pinned by kcrt_kernel_get_variant(\"%s\")", name, v->info->tunables,
           tunables);
    if (!(*out = new_handle(b, rk, v)))
        return rt_fail(b->ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    return KCRT_OK;
}

kcrt_status kcrt_kernel_from_binary(kcrt_bundle *b, const char *name, const kcrt_binary_desc *d, kcrt_kernel **out)
{
    if (!b || !name || !d || !d->binary || !d->tunables || !d->target || !out)
        return rt_fail(b ? b->ctx : NULL, KCRT_ERROR_BAD_ARGUMENT, "kcrt_kernel_from_binary: an argument is NULL");
    *out = NULL;
    rt_kernel *rk;
    kcrt_status s = find_kernel(b, name, &rk);
    if (s != KCRT_OK)
        return s;
    kcrt_kernel *h = calloc(1, sizeof(*h));
    rt_variant *v = h ? rt_alloc(&h->own, sizeof(*v)) : NULL;
    char err[RT_MSG];
    if (!v) {
        free(h);
        return rt_fail(b->ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    }
    if (!rt_variant_from_desc(rk, v, d, &h->own, err, sizeof(err))) {
        rt_arena_free(&h->own);
        free(h);
        return rt_fail(b->ctx, KCRT_ERROR_BAD_ARGUMENT, "variant '%s' of '%s': %s", d->tunables, name, err);
    }
    v->loads = b->ctx->be->loads(b->ctx->dev, v->info->target) > 0;
    h->magic = RT_LIVE_KERNEL;
    h->b = b;
    h->rk = rk;
    h->fixed = v;
    h->owns_fixed = true;
    if ((s = rt_variant_module(b->ctx, rk, v)) != KCRT_OK) {
        rt_arena_free(&h->own);
        free(h);
        return s;
    }
    h->next = rk->handles;
    rk->handles = h;
    *out = h;
    return KCRT_OK;
}

void kcrt_kernel_release(kcrt_kernel *k)
{
    if (!k || k->magic != RT_LIVE_KERNEL || !k->owns_fixed)
        return;
    kcrt_context *ctx = k->b->ctx;
    for (kcrt_kernel **p = &k->rk->handles; *p; p = &(*p)->next)
        if (*p == k) {
            *p = k->next;
            break;
        }
    if (k->fixed->module) {
        ctx->be->finish(ctx->dev); /* launches of it may still run */
        ctx->be->module_free(ctx->dev, k->fixed->module);
    }
    rt_arena_free(&k->own);
    free(k->memo_shape);
    free(k);
}

const kcrt_kernel_info *kcrt_kernel_info_get(const kcrt_kernel *k)
{
    return k && k->magic == RT_LIVE_KERNEL ? &k->rk->info : NULL;
}

kcrt_context *kcrt_kernel_context(const kcrt_kernel *k)
{
    return k ? k->b->ctx : NULL;
}
