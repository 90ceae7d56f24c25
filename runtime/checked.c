/*
 * checked.c — kernels of a `kc build --checked` bundle: each launch gets
 * its buffers' lengths, a number naming the kernel, and the record that
 * the kernel's first out-of-bounds access fills (support/kc_checked.h).
 *
 * One record per context, shared by every checked launch: the first
 * violation wins, whichever launch made it. It is read when work
 * completes (kcrt_finish, kcrt_buffer_read) and cleared after a report,
 * so each violation is reported once. The report is the call's status
 * (KCRT_ERROR_OUT_OF_BOUNDS) with the words in kcrt_error, and the same
 * words on stderr: a checked build exists to be seen, and hosts often
 * drop kcrt_finish's status.
 *
 * The kernels' names, files and parameter names are copied into the
 * context, because the record may be read after the bundle is freed.
 */
#include "rt_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kc_checked.h"

typedef struct rt_checked_kernel {
    char *name;
    char **files;  /* the record's file index */
    int nfiles;
    char **params; /* parameter names, for a buffer's index */
    int nparams;
} rt_checked_kernel;

static char *copy(const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    return c ? memcpy(c, s, n) : NULL;
}

static char **copy_all(const char *const *s, int n)
{
    char **c = calloc((size_t)(n ? n : 1), sizeof(char *));
    for (int i = 0; c && i < n; i++)
        if (!(c[i] = copy(s[i])))
            return NULL; /* leaks the rest: only on out of memory, and the caller fails */
    return c;
}

/* ctx->checked grows by doubling; an entry lives until kcrt_close. */
static kcrt_status add_kernel(kcrt_context *ctx, rt_kernel *rk)
{
    if (ctx->nchecked == ctx->capchecked) {
        int cap = ctx->capchecked ? ctx->capchecked * 2 : 8;
        rt_checked_kernel *grown = realloc(ctx->checked, sizeof(*grown) * (size_t)cap);
        if (!grown)
            return rt_fail(ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
        ctx->checked = grown;
        ctx->capchecked = cap;
    }
    const char *names[512];
    int np = rk->info.nparams < 512 ? rk->info.nparams : 512;
    for (int i = 0; i < np; i++)
        names[i] = rk->params[i].name;
    rt_checked_kernel *c = &ctx->checked[ctx->nchecked];
    *c = (rt_checked_kernel){copy(rk->info.name), copy_all(rk->check_files, rk->ncheck_files), rk->ncheck_files,
                             copy_all(names, np), np};
    if (!c->name || !c->files || !c->params)
        return rt_fail(ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    rk->check_id = ++ctx->nchecked;
    return KCRT_OK;
}

kcrt_status rt_checked_launch(kcrt_context *ctx, rt_kernel *rk, uint32_t *kernel_id, void **record)
{
    kcrt_status s;
    if (!ctx->check_record &&
        (s = ctx->be->buffer_create(ctx->dev, KC_CHECK_WORDS * sizeof(uint32_t), &ctx->check_record)) != KCRT_OK)
        return s; /* a new buffer holds zeros: no violation yet */
    if (!rk->check_id && (s = add_kernel(ctx, rk)) != KCRT_OK)
        return s;
    *kernel_id = (uint32_t)(rk->check_id - 1);
    *record = ctx->check_record;
    return KCRT_OK;
}

/* "'x' (1000 elements)" or "a shared array of 64 elements" */
static void describe_array(const rt_checked_kernel *k, const uint32_t *w, char *out, size_t len)
{
    static const char *const local[] = {"a private array", "a shared array", "a constant array"};
    uint32_t what = w[KC_CHECK_WHAT];
    if (what & KC_CHECK_LOCAL) {
        uint32_t kind = what & ~KC_CHECK_LOCAL;
        rt_printf(out, len, "%s of %u elements", kind < 3 ? local[kind] : "an array", w[KC_CHECK_LEN]);
    } else if (k && (int)what < k->nparams) {
        rt_printf(out, len, "'%s' (%u elements)", k->params[what], w[KC_CHECK_LEN]);
    } else {
        rt_printf(out, len, "buffer parameter %u (%u elements)", what, w[KC_CHECK_LEN]);
    }
}

kcrt_status rt_checked_report(kcrt_context *ctx)
{
    if (!ctx->check_record)
        return KCRT_OK;
    uint32_t w[KC_CHECK_WORDS];
    kcrt_status s = ctx->be->buffer_read(ctx->dev, ctx->check_record, 0, w, sizeof(w));
    if (s != KCRT_OK || !w[KC_CHECK_HIT])
        return s;
    static const uint32_t zeros[KC_CHECK_WORDS];
    if ((s = ctx->be->buffer_write(ctx->dev, ctx->check_record, 0, zeros, sizeof(zeros))) != KCRT_OK)
        return s;
    const rt_checked_kernel *k = w[KC_CHECK_KERNEL] < (uint32_t)ctx->nchecked ? &ctx->checked[w[KC_CHECK_KERNEL]] : NULL;
    const char *file = k && w[KC_CHECK_FILE] < (uint32_t)k->nfiles ? k->files[w[KC_CHECK_FILE]] : "?";
    int64_t index = (int64_t)((uint64_t)w[KC_CHECK_INDEX_HI] << 32 | w[KC_CHECK_INDEX_LO]);
    char array[256];
    describe_array(k, w, array, sizeof(array));
    rt_fail(ctx, KCRT_ERROR_OUT_OF_BOUNDS, "%s:%u:%u: kernel '%s': index %lld is out of bounds of %s (checked build)",
            file, w[KC_CHECK_LINE], w[KC_CHECK_COL], k ? k->name : "?", (long long)index, array);
    fprintf(stderr, "kcrt: %s\n", ctx->err);
    return KCRT_ERROR_OUT_OF_BOUNDS;
}

void rt_checked_free(kcrt_context *ctx)
{
    if (ctx->check_record)
        ctx->be->buffer_free(ctx->dev, ctx->check_record);
    for (int i = 0; i < ctx->nchecked; i++) {
        rt_checked_kernel *k = &ctx->checked[i];
        for (int f = 0; f < k->nfiles; f++)
            free(k->files[f]);
        for (int p = 0; p < k->nparams; p++)
            free(k->params[p]);
        free(k->files);
        free(k->params);
        free(k->name);
    }
    free(ctx->checked);
    ctx->check_record = NULL;
    ctx->checked = NULL;
    ctx->nchecked = ctx->capchecked = 0;
}
