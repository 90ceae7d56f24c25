/*
 * bundle.c — a bundle on a device: kcrt_bundle_load reads the file
 * (bundle_read.c, no device), lets the context settle its backend
 * (context.c: the Vulkan fallback), and binds what it read to the device:
 * which variants the backend runs, each kernel's default, and the tuned
 * rows that apply.
 *
 * The tuned table is taken for this context's device only: rows with its
 * device key, and rows of its device family on the same backend (the
 * family fallback of DESIGN.md §6).
 */
#include "rt_private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One binding of a bundle to its context: where we are, for messages. */
typedef struct binder {
    kcrt_bundle *b;
    kcrt_context *ctx;
    rt_arena *a;
    char err[RT_MSG];
} binder;

static bool bad(binder *r, const char *fmt, ...) RT_PRINTF(2, 3);
static bool bad(binder *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, sizeof(r->err), fmt, ap);
    va_end(ap);
    return false;
}

/* ---- the tuned rows that apply --------------------------------------------------------------------- */

/* Maps a tuned row's shape onto the kernel's integer scalars; false when it
 * names other ones (then the row does not apply to this kernel). */
static bool shape_values(binder *r, const rt_kernel *k, const char *text, int64_t *vals)
{
    const char **names;
    int64_t *v;
    char err[256];
    int n = rt_parse_assignments(r->a, text, &names, &v, err, sizeof(err));
    if (n != k->nints)
        return false;
    for (int i = 0; i < k->nints; i++) {
        int j = 0;
        while (j < n && strcmp(names[j], k->params[k->ints[i]].name) != 0)
            j++;
        if (j == n)
            return false;
        vals[i] = v[j];
    }
    return true;
}

/* The variant the backend runs for a variant string, or NULL. */
static rt_variant *variant_for(binder *r, rt_kernel *k, const char *text)
{
    int64_t *tv = rt_alloc(r->a, sizeof(int64_t) * (size_t)(k->info.ntunables + 1));
    char err[256];
    if (!tv || !rt_variant_values(r->a, k, text, tv, err, sizeof(err)))
        return NULL;
    for (int i = 0; i < k->info.nvariants; i++)
        if (k->variants[i].loads &&
            memcmp(k->variants[i].tvals, tv, sizeof(int64_t) * (size_t)k->info.ntunables) == 0)
            return &k->variants[i];
    return NULL;
}

static double logish(int64_t v)
{
    return v < 0 ? -log2(1.0 - (double)v) : log2(1.0 + (double)v);
}

static bool add_tuned(binder *r, rt_kernel *k, bool mine, const kcrt_tuned_row *src)
{
    const kcrt_context *ctx = r->ctx;
    rt_tuned row = {.this_device = mine, .shape_text = src->shape, .variant_text = src->variant,
                    .time_ns = src->time_ns};
    row.shape = rt_alloc(r->a, sizeof(int64_t) * (size_t)(k->nints + 1));
    row.logs = rt_alloc(r->a, sizeof(double) * (size_t)(k->nints + 1));
    if (!row.shape || !row.logs)
        return bad(r, "out of memory");
    if (!shape_values(r, k, src->shape, row.shape)) {
        rt_log(ctx, "%s: tuned row %d ignored: its shape '%s' does not name the kernel's integer parameters",
               k->info.name, src->row, src->shape);
        return true;
    }
    if (!(row.v = variant_for(r, k, src->variant))) {
        rt_log(ctx, "%s: tuned row %d ignored: variant '%s' is not in the bundle for %s", k->info.name,
               src->row, src->variant, ctx->be->name);
        return true;
    }
    for (int i = 0; i < k->nints; i++)
        row.logs[i] = logish(row.shape[i]);
    k->tuned[k->ntuned++] = row;
    return true;
}

/* This device's rows and its family's on the same backend. */
static bool bind_tuned(binder *r, rt_kernel *k)
{
    const kcrt_device_info *d = &r->ctx->info;
    k->tuned = rt_alloc(r->a, sizeof(rt_tuned) * (size_t)(k->nrows + 1));
    if (!k->tuned)
        return bad(r, "out of memory");
    for (int i = 0; i < k->nrows; i++) {
        const kcrt_tuned_row *row = &k->rows[i];
        bool mine = strcmp(row->device, d->key) == 0;
        if (mine && strcmp(row->backend, d->backend) != 0)
            return bad(r, "%s: table tuned, row %d: a row for this device (%s) says backend '%s', not %s",
                       r->b->path, row->row, row->device, row->backend, d->backend);
        bool kin = !mine && strcmp(row->family, d->family) == 0 && strcmp(row->backend, d->backend) == 0;
        if ((mine || kin) && !add_tuned(r, k, mine, row))
            return false;
    }
    return true;
}

/* ---- the variants this backend runs ----------------------------------------------------------------- */

/* A variant the backend loads, for choosing among targets. */
typedef struct loadable {
    const char *tunables;
    int rank, index;
} loadable;

static int by_tunables_then_rank(const void *a, const void *b)
{
    const loadable *x = a, *y = b;
    int c = strcmp(x->tunables, y->tunables);
    if (c)
        return c;
    if (x->rank != y->rank)
        return x->rank > y->rank ? -1 : 1; /* the preferred first */
    return x->index - y->index;
}

/* Which variants this backend runs: of the variants with the same tunables
 * (one per target), the one the backend prefers (CUDA: the highest sm_NN
 * not newer than the device; HIP: the one gfx name that matches). */
static bool mark_loadable(binder *r, rt_kernel *k)
{
    const kcrt_context *ctx = r->ctx;
    loadable *l = rt_alloc(r->a, sizeof(loadable) * (size_t)(k->info.nvariants + 1));
    if (!l)
        return bad(r, "out of memory");
    int n = 0;
    for (int i = 0; i < k->info.nvariants; i++) {
        int rank = ctx->be->loads(ctx->dev, k->variants[i].info->target);
        if (rank > 0)
            l[n++] = (loadable){k->variants[i].info->tunables, rank, i};
    }
    qsort(l, (size_t)n, sizeof(*l), by_tunables_then_rank);
    for (int i = 0; i < n; i++)
        k->variants[l[i].index].loads = i == 0 || strcmp(l[i].tunables, l[i - 1].tunables) != 0;
    return true;
}

static bool bind(binder *r)
{
    for (int i = 0; i < r->b->nkernels; i++) {
        rt_kernel *k = &r->b->kernels[i];
        if (!mark_loadable(r, k))
            return false;
        k->def = variant_for(r, k, k->info.default_variant);
        char key[256];
        rt_printf(key, sizeof(key), "default.%s.%s", r->ctx->info.type_name, k->info.name);
        const char *off = getenv("KCRT_TYPE_DEFAULTS");
        const char *type_def = off && strcmp(off, "0") == 0 ? NULL : kcrt_bundle_meta(r->b, key);
        k->type_def = type_def ? variant_for(r, k, type_def) : NULL;
        if (type_def && !k->type_def)
            rt_log(r->ctx, "kernel %s: its default on a %s device, %s, is not in the bundle for %s; passed over",
                   k->info.name, r->ctx->info.type_name, type_def, r->ctx->be->name);
        if (!bind_tuned(r, k))
            return false;
    }
    return true;
}

/* ---- loading and freeing ---------------------------------------------------------------------------- */

static void link_bundle(kcrt_bundle *b)
{
    kcrt_context *ctx = b->ctx;
    b->next = ctx->bundles;
    if (ctx->bundles)
        ctx->bundles->prev = b;
    ctx->bundles = b;
}

static void log_loaded(const kcrt_bundle *b)
{
    for (int i = 0; i < b->nkernels; i++) {
        const rt_kernel *k = &b->kernels[i];
        int mine = 0;
        for (int j = 0; j < k->ntuned; j++)
            mine += k->tuned[j].this_device;
        char type_def[300] = "";
        if (k->type_def)
            rt_printf(type_def, sizeof(type_def), " (on a %s device: %s)", b->ctx->info.type_name,
                      k->type_def->info->tunables);
        rt_log(b->ctx,
               "bundle %s: kernel %s: %d variant%s, default %s%s%s, %d tuned row%s for this device, %d for "
               "its family (%s)",
               b->path, k->info.name, k->info.nvariants, k->info.nvariants == 1 ? "" : "s",
               k->info.default_variant, k->def ? "" : " (not for this backend)", type_def, mine, mine == 1 ? "" : "s",
               k->ntuned - mine, b->ctx->info.family);
    }
}

kcrt_status kcrt_bundle_load(kcrt_context *ctx, const char *path, kcrt_bundle **out)
{
    if (!ctx || !path || !out)
        return rt_fail(ctx, KCRT_ERROR_BAD_ARGUMENT, "kcrt_bundle_load: %s is NULL", !path ? "path" : "out");
    *out = NULL;
    if (ctx->failed)
        return ctx->failed;
    kcrt_bundle *b = calloc(1, sizeof(*b));
    if (!b)
        return rt_fail(ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    b->magic = RT_LIVE_BUNDLE;
    binder r = {.b = b, .a = &b->arena};
    kcrt_status s = rt_bundle_read(b, path, r.err, sizeof(r.err));
    if (s == KCRT_OK)
        s = rt_settle_backend(ctx, b);
    if (s == KCRT_OK) {
        b->ctx = r.ctx = ctx;
        if (!bind(&r))
            s = KCRT_ERROR_BAD_BUNDLE;
    }
    if (s != KCRT_OK) {
        rt_arena_free(&b->arena);
        free(b);
        return ctx->failed ? ctx->failed : rt_fail(ctx, s, "%s", r.err);
    }
    link_bundle(b);
    log_loaded(b);
    *out = b;
    return KCRT_OK;
}

kcrt_status kcrt_bundle_read(const char *path, kcrt_bundle **out, char *err, size_t errlen)
{
    if (!path || !out)
        return rt_printf(err, errlen, "kcrt_bundle_read: %s is NULL", !path ? "path" : "out"),
               KCRT_ERROR_BAD_ARGUMENT;
    *out = NULL;
    kcrt_bundle *b = calloc(1, sizeof(*b));
    if (!b)
        return rt_printf(err, errlen, "out of memory"), KCRT_ERROR_OUT_OF_MEMORY;
    b->magic = RT_LIVE_BUNDLE;
    kcrt_status s = rt_bundle_read(b, path, err, errlen);
    if (s != KCRT_OK) {
        rt_arena_free(&b->arena);
        free(b);
        return s;
    }
    *out = b;
    return KCRT_OK;
}

void kcrt_bundle_free(kcrt_bundle *b)
{
    if (!b)
        return;
    kcrt_context *ctx = b->ctx;
    if (b->magic == RT_FREED) {
        rt_fail(ctx, KCRT_ERROR_BAD_ARGUMENT, "kcrt_bundle_free: the bundle was already freed");
        return;
    }
    if (!ctx) { /* kcrt_bundle_read's: no device, no handles */
        rt_arena_free(&b->arena);
        free(b);
        return;
    }
    bool any = false;
    for (int i = 0; i < b->nkernels; i++) {
        for (int j = 0; j < b->kernels[i].info.nvariants; j++)
            any |= b->kernels[i].variants[j].module != NULL;
        for (kcrt_kernel *h = b->kernels[i].handles; h; h = h->next)
            any |= h->owns_fixed;
    }
    if (any) /* a module may be in use by launches not finished yet */
        ctx->be->finish(ctx->dev);
    for (int i = 0; i < b->nkernels; i++) {
        rt_kernel *k = &b->kernels[i];
        for (int j = 0; j < k->info.nvariants; j++)
            if (k->variants[j].module)
                ctx->be->module_free(ctx->dev, k->variants[j].module);
        for (kcrt_kernel *h = k->handles, *next; h; h = next) {
            next = h->next;
            if (h->owns_fixed && h->fixed->module)
                ctx->be->module_free(ctx->dev, h->fixed->module);
            if (h->owns_fixed)
                rt_arena_free(&h->own);
            free(h->memo_shape);
            memset(h, 0, sizeof(*h)); /* kept until kcrt_close: a launch with it is reported */
            h->magic = RT_FREED;
            h->b = b;
            h->next = ctx->dead_kernels;
            ctx->dead_kernels = h;
        }
    }
    if (b->prev)
        b->prev->next = b->next;
    else
        ctx->bundles = b->next;
    if (b->next)
        b->next->prev = b->prev;
    rt_arena_free(&b->arena);
    memset(b, 0, sizeof(*b)); /* kept until kcrt_close, as its kernels' handles are */
    b->magic = RT_FREED;
    b->ctx = ctx;
    b->next = ctx->dead_bundles;
    ctx->dead_bundles = b;
}

/* ---- introspection --------------------------------------------------------------------------------------
 */

int kcrt_bundle_kernel_count(const kcrt_bundle *b)
{
    return b ? b->nkernels : 0;
}

const kcrt_kernel_info *kcrt_bundle_kernel_info(const kcrt_bundle *b, int i)
{
    return b && i >= 0 && i < b->nkernels ? &b->kernels[i].info : NULL;
}

const char *kcrt_bundle_meta(const kcrt_bundle *b, const char *key)
{
    for (int i = 0; b && key && b->meta && b->meta[i]; i += 2)
        if (strcmp(b->meta[i], key) == 0)
            return b->meta[i + 1];
    return NULL;
}

kcrt_context *kcrt_bundle_context(const kcrt_bundle *b)
{
    return b ? b->ctx : NULL;
}

/* ---- what kc's tools read of a bundle (kcrt_internal.h) ------------------------------------------------ */

static const rt_kernel *kernel_at(const kcrt_bundle *b, int i)
{
    return b && i >= 0 && i < b->nkernels ? &b->kernels[i] : NULL;
}

const char *kcrt_bundle_kernel_source(const kcrt_bundle *b, int kernel)
{
    const rt_kernel *k = kernel_at(b, kernel);
    return k ? k->source : NULL;
}

int kcrt_bundle_tuned_rows(const kcrt_bundle *b, int kernel, const kcrt_tuned_row **rows)
{
    const rt_kernel *k = kernel_at(b, kernel);
    *rows = k ? k->rows : NULL;
    return k ? k->nrows : 0;
}

const void *kcrt_bundle_variant_binary(const kcrt_bundle *b, int kernel, int variant, size_t *size,
                                       const char **args)
{
    const rt_kernel *k = kernel_at(b, kernel);
    if (!k || variant < 0 || variant >= k->info.nvariants)
        return NULL;
    *size = k->variants[variant].size;
    if (args)
        *args = k->variants[variant].args;
    return k->variants[variant].binary;
}
