/*
 * buffer.c — device buffers: the common checks (ranges, NULLs, the
 * context), then the backend. Ordering with pending launches is the
 * backend's job: it waits for the work that uses a buffer before a
 * transfer touches it.
 */
#include "rt_private.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A handle (a freed one's shell reused) over a new backend buffer, or
 * over the host's memory when native is given. */
static kcrt_status new_buffer(kcrt_context *ctx, size_t bytes, void *native, kcrt_buffer **out)
{
    kcrt_buffer *b = ctx->dead_buffers;
    if (b) {
        ctx->dead_buffers = b->next;
        memset(b, 0, sizeof(*b));
    } else if (!(b = calloc(1, sizeof(*b)))) {
        return rt_fail(ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    }
    kcrt_status s = native ? ctx->be->buffer_wrap(ctx->dev, native, bytes, &b->impl)
                           : ctx->be->buffer_create(ctx->dev, bytes, &b->impl);
    if (s != KCRT_OK) {
        free(b);
        return s;
    }
    b->magic = RT_LIVE_BUFFER;
    b->ctx = ctx;
    b->size = bytes;
    b->next = ctx->buffers;
    if (ctx->buffers)
        ctx->buffers->prev = b;
    ctx->buffers = b;
    *out = b;
    return KCRT_OK;
}

kcrt_status kcrt_buffer_create(kcrt_context *ctx, size_t bytes, kcrt_buffer **out)
{
    if (!ctx || !out)
        return rt_fail(ctx, KCRT_ERROR_BAD_ARGUMENT, "kcrt_buffer_create: out is NULL");
    *out = NULL;
    if (ctx->failed)
        return ctx->failed;
    if (bytes == 0)
        return rt_fail(ctx, KCRT_ERROR_BAD_ARGUMENT, "kcrt_buffer_create: a buffer needs at least one byte");
    /* backends round sizes up (to words, to pages): near SIZE_MAX that
     * wrapped to 0 and crashed in the driver */
    if (bytes > ctx->info.memory_bytes && ctx->info.memory_bytes)
        return rt_fail(ctx, KCRT_ERROR_OUT_OF_MEMORY,
                       "kcrt_buffer_create: %zu bytes is more than all of %s's memory (%llu bytes)", bytes,
                       ctx->info.name, (unsigned long long)ctx->info.memory_bytes);
    if (bytes > SIZE_MAX / 2)
        return rt_fail(ctx, KCRT_ERROR_OUT_OF_MEMORY, "kcrt_buffer_create: %zu bytes is not a size any device has",
                       bytes);
    return new_buffer(ctx, bytes, NULL, out);
}

kcrt_status kcrt_buffer_wrap(kcrt_context *ctx, void *native, size_t bytes, kcrt_buffer **out)
{
    if (!ctx || !out || !native)
        return rt_fail(ctx, KCRT_ERROR_BAD_ARGUMENT, "kcrt_buffer_wrap: %s is NULL", !out ? "out" : "native");
    *out = NULL;
    if (ctx->failed)
        return ctx->failed;
    if (bytes == 0)
        return rt_fail(ctx, KCRT_ERROR_BAD_ARGUMENT, "kcrt_buffer_wrap: a buffer needs at least one byte");
    return new_buffer(ctx, bytes, native, out);
}

void kcrt_buffer_free(kcrt_buffer *b)
{
    if (!b)
        return;
    kcrt_context *ctx = b->ctx;
    if (b->magic == RT_FREED) {
        rt_fail(ctx, KCRT_ERROR_BAD_ARGUMENT, "kcrt_buffer_free: the buffer was already freed");
        return;
    }
    ctx->be->buffer_free(ctx->dev, b->impl);
    if (b->prev)
        b->prev->next = b->next;
    else
        ctx->buffers = b->next;
    if (b->next)
        b->next->prev = b->prev;
    memset(b, 0, sizeof(*b));
    b->magic = RT_FREED;
    b->ctx = ctx;
    b->next = ctx->dead_buffers;
    ctx->dead_buffers = b;
}

kcrt_status kcrt_buffer_native(kcrt_buffer *b, void **native, int *device)
{
    if (!b || !native || !device)
        return rt_fail(b ? b->ctx : NULL, KCRT_ERROR_BAD_ARGUMENT, "kcrt_buffer_native: an argument is NULL");
    kcrt_status s = rt_buffer_usable(b, "kcrt_buffer_native");
    if (s != KCRT_OK)
        return s;
    return b->ctx->be->buffer_native(b->ctx->dev, b->impl, native, device);
}

kcrt_status rt_buffer_usable(const kcrt_buffer *b, const char *fn)
{
    if (b && b->magic == RT_FREED)
        return rt_fail(b->ctx, KCRT_ERROR_BAD_ARGUMENT, "%s: the buffer was freed (kcrt_buffer_free)", fn);
    return KCRT_OK;
}

/* b is live and bytes at offset lie inside it */
static kcrt_status check_fits(const kcrt_buffer *b, size_t offset, size_t bytes, const char *fn)
{
    if (b->magic == RT_FREED)
        return rt_buffer_usable(b, fn);
    if (offset > b->size || bytes > b->size - offset)
        return rt_fail(b->ctx, KCRT_ERROR_BAD_ARGUMENT,
                       "%s: %zu bytes at offset %zu do not fit in a buffer of %zu bytes", fn, bytes, offset,
                       b->size);
    return KCRT_OK;
}

static kcrt_status check_range(const kcrt_buffer *b, size_t offset, const void *p, size_t bytes,
                               const char *fn)
{
    if (b->magic != RT_FREED && !p && bytes)
        return rt_fail(b->ctx, KCRT_ERROR_BAD_ARGUMENT, "%s: the host pointer is NULL", fn);
    return check_fits(b, offset, bytes, fn);
}

kcrt_status kcrt_buffer_write(kcrt_buffer *b, size_t offset, const void *src, size_t bytes)
{
    if (!b)
        return KCRT_ERROR_BAD_ARGUMENT;
    kcrt_status s = check_range(b, offset, src, bytes, "kcrt_buffer_write");
    if (s != KCRT_OK || bytes == 0)
        return s;
    return b->ctx->be->buffer_write(b->ctx->dev, b->impl, offset, src, bytes);
}

kcrt_status kcrt_buffer_read(kcrt_buffer *b, size_t offset, void *dst, size_t bytes)
{
    if (!b)
        return KCRT_ERROR_BAD_ARGUMENT;
    kcrt_status s = check_range(b, offset, dst, bytes, "kcrt_buffer_read");
    if (s != KCRT_OK || bytes == 0)
        return s;
    s = b->ctx->be->buffer_read(b->ctx->dev, b->impl, offset, dst, bytes);
    return s == KCRT_OK ? rt_checked_report(b->ctx) : s;
}

kcrt_status kcrt_buffer_copy(kcrt_buffer *dst, size_t dst_offset, kcrt_buffer *src, size_t src_offset,
                             size_t bytes)
{
    if (!dst || !src)
        return rt_fail(dst ? dst->ctx : src ? src->ctx : NULL, KCRT_ERROR_BAD_ARGUMENT,
                       "kcrt_buffer_copy: a buffer is NULL");
    kcrt_status s = check_fits(src, src_offset, bytes, "kcrt_buffer_copy (the source)");
    if (s == KCRT_OK)
        s = check_fits(dst, dst_offset, bytes, "kcrt_buffer_copy (the destination)");
    if (s != KCRT_OK)
        return s;
    if (src->ctx != dst->ctx)
        return rt_fail(dst->ctx, KCRT_ERROR_BAD_ARGUMENT, "kcrt_buffer_copy: the buffers belong to two contexts");
    if (src == dst && src_offset < dst_offset + bytes && dst_offset < src_offset + bytes)
        return rt_fail(dst->ctx, KCRT_ERROR_BAD_ARGUMENT,
                       "kcrt_buffer_copy: bytes %zu..%zu and %zu..%zu of one buffer overlap", src_offset,
                       src_offset + bytes - 1, dst_offset, dst_offset + bytes - 1);
    if (bytes == 0)
        return KCRT_OK;
    return dst->ctx->be->buffer_copy(dst->ctx->dev, dst->impl, dst_offset, src->impl, src_offset, bytes);
}

kcrt_context *kcrt_buffer_context(const kcrt_buffer *b)
{
    return b ? b->ctx : NULL;
}

size_t kcrt_buffer_size(const kcrt_buffer *b)
{
    return b ? b->size : 0;
}
