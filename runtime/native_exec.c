/*
 * native_exec.c — buffers, launches and timing for the HIP and CUDA
 * backends, once, over their table of driver calls (rt_native.h says how
 * the stream is used).
 */
#include "rt_native.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* A buffer: device memory at a 64-bit address; a wrapped one is the
 * host's (kcrt_buffer_wrap), never freed here. */
typedef struct native_buf {
    uint64_t ptr;
    size_t size;
    bool wrapped;
} native_buf;

/* A freed buffer's memory: rt_size_class bytes at ptr. */
typedef struct rt_native_spare {
    uint64_t ptr;
    size_t size;
} rt_native_spare;

/* ---- spares ------------------------------------------------------------------------------------------ */

static void spare_remove(rt_native_dev *d, int i)
{
    d->stats.spare_bytes -= d->spares[i].size;
    memmove(&d->spares[i], &d->spares[i + 1], sizeof(rt_native_spare) * (size_t)(d->nspares - i - 1));
    d->nspares--;
}

/* Memory for a buffer of `size` (a size class): the newest spare of that
 * size, else new memory; when the device has none left, again after the
 * spares are freed. */
static kcrt_status take_memory(rt_native_dev *d, size_t size, uint64_t *ptr)
{
    for (int i = d->nspares - 1; i >= 0; i--)
        if (d->spares[i].size == size) {
            *ptr = d->spares[i].ptr;
            spare_remove(d, i);
            d->stats.buffers_reused++;
            return KCRT_OK;
        }
    kcrt_status s = d->drv->alloc(d, size, ptr);
    if (s == KCRT_ERROR_OUT_OF_MEMORY && d->nspares) {
        rt_native_drain(d);
        while (d->nspares) {
            d->drv->release(d, d->spares[0].ptr);
            spare_remove(d, 0);
        }
        s = d->drv->alloc(d, size, ptr);
    }
    if (s == KCRT_OK)
        d->stats.buffer_allocations++;
    return s;
}

/* Past the limit the oldest spares are freed, after the queued work (the
 * only time freeing a buffer waits). */
static void give_spare(rt_native_dev *d, uint64_t ptr, size_t size)
{
    if (d->nspares == d->spares_cap) {
        int cap = d->spares_cap ? 2 * d->spares_cap : 64;
        rt_native_spare *grown = realloc(d->spares, sizeof(rt_native_spare) * (size_t)cap);
        if (!grown) {
            rt_native_drain(d);
            d->drv->release(d, ptr);
            return;
        }
        d->spares = grown, d->spares_cap = cap;
    }
    d->spares[d->nspares++] = (rt_native_spare){ptr, size};
    d->stats.spare_bytes += size;
    if (!d->spare_max)
        d->spare_max = rt_spare_limit(d->ctx->info.memory_bytes);
    while (d->nspares && d->stats.spare_bytes > d->spare_max) {
        rt_native_drain(d);
        d->drv->release(d, d->spares[0].ptr);
        spare_remove(d, 0);
    }
}

/* ---- buffers ---------------------------------------------------------------------------------------- */

kcrt_status rt_native_buffer_create(void *dev, size_t bytes, void **out)
{
    rt_native_dev *d = dev;
    const rt_native_driver *drv = d->drv;
    kcrt_status s = drv->usable(d);
    native_buf *b = s == KCRT_OK ? calloc(1, sizeof(*b)) : NULL;
    if (s != KCRT_OK)
        return s;
    if (!b)
        return rt_fail(d->ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    drv->enter(d);
    s = take_memory(d, rt_size_class(bytes), &b->ptr);
    if (s == KCRT_OK) /* new buffers hold zeros */
        s = drv->zero(d, b->ptr, bytes);
    if (s != KCRT_OK && b->ptr)
        give_spare(d, b->ptr, rt_size_class(bytes));
    drv->leave(d);
    if (s != KCRT_OK) {
        free(b);
        return rt_fail(d->ctx, s, "a buffer of %zu bytes: %s", bytes, d->ctx->err);
    }
    b->size = bytes;
    *out = b;
    return KCRT_OK;
}

kcrt_status rt_native_buffer_wrap(void *dev, void *native, size_t bytes, void **out)
{
    rt_native_dev *d = dev;
    kcrt_status s = d->drv->usable(d);
    if (s != KCRT_OK)
        return s;
    native_buf *b = calloc(1, sizeof(*b));
    if (!b)
        return rt_fail(d->ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    *b = (native_buf){(uint64_t)(uintptr_t)native, bytes, true};
    *out = b;
    return KCRT_OK;
}

kcrt_status rt_native_buffer_native(void *dev, void *buf, void **native, int *device)
{
    const rt_native_dev *d = dev;
    *native = (void *)(uintptr_t)((const native_buf *)buf)->ptr;
    *device = d->ordinal;
    return KCRT_OK;
}

kcrt_status rt_native_set_stream(void *dev, void *stream)
{
    rt_native_dev *d = dev;
    kcrt_status s = d->drv->usable(d);
    if (s != KCRT_OK)
        return s;
    d->drv->enter(d);
    rt_native_drain(d); /* what is queued on the old stream ends before the new one starts */
    d->drv->leave(d);
    if (d->failed)
        return d->drv->usable(d);
    d->drv->use_stream(d, stream);
    return KCRT_OK;
}

void rt_native_drain(rt_native_dev *d)
{
    if (d->pending && !d->failed)
        d->drv->wait(d);
    d->pending = 0;
}

void rt_native_buffer_free(void *dev, void *buf)
{
    rt_native_dev *d = dev;
    native_buf *b = buf;
    d->drv->enter(d);
    if (b->wrapped)
        rt_native_drain(d); /* the host's: it may free it when this returns */
    else
        give_spare(d, b->ptr, rt_size_class(b->size));
    d->drv->leave(d);
    free(b);
}

/* A copy queued on the stream, then waited for. */
static kcrt_status copy(rt_native_dev *d, bool to_device, uint64_t device, void *host, size_t bytes)
{
    const rt_native_driver *drv = d->drv;
    kcrt_status s = drv->usable(d);
    if (s != KCRT_OK)
        return s;
    drv->enter(d);
    s = to_device ? drv->to_device(d, device, host, bytes) : drv->to_host(d, host, device, bytes);
    if (s == KCRT_OK)
        s = drv->wait(d);
    drv->leave(d);
    d->pending = 0;
    d->stats.transfer_submissions++;
    d->stats.waits++;
    return s;
}

kcrt_status rt_native_buffer_write(void *dev, void *buf, size_t offset, const void *src, size_t bytes)
{
    const native_buf *b = buf;
    return copy(dev, true, b->ptr + offset, (void *)src, bytes);
}

kcrt_status rt_native_buffer_read(void *dev, void *buf, size_t offset, void *dst, size_t bytes)
{
    const native_buf *b = buf;
    return copy(dev, false, b->ptr + offset, dst, bytes);
}

/* Queued on the stream like a launch, and counted as one: a later
 * transfer or kcrt_finish waits for it. */
kcrt_status rt_native_buffer_copy(void *dev, void *dst, size_t dst_offset, void *src, size_t src_offset, size_t bytes)
{
    rt_native_dev *d = dev;
    const native_buf *to = dst, *from = src;
    kcrt_status s = d->drv->usable(d);
    if (s != KCRT_OK)
        return s;
    d->drv->enter(d);
    s = d->drv->on_device(d, to->ptr + dst_offset, from->ptr + src_offset, bytes);
    d->drv->leave(d);
    if (s == KCRT_OK)
        d->pending++;
    return s;
}

/* ---- launches ------------------------------------------------------------------------------------------ */

/* m->block for a launch: the packed scalars, then each buffer's 64-bit
 * device address at its slot. */
static void kernargs(rt_native_module *m, const rt_launch_desc *l)
{
    assert(l->args_size == m->args_size && l->nparams == m->nparams);
    if (m->args_size)
        memcpy(m->block, l->args, m->args_size);
    for (int i = 0; i < m->nparams; i++)
        if (l->buffers[i]) {
            assert(m->slots[i].size == 8);
            uint64_t a = ((const native_buf *)l->buffers[i])->ptr;
            memcpy(m->block + m->slots[i].offset, &a, 8); /* little-endian, as the device reads it */
        }
}

static kcrt_status check_grid(rt_native_dev *d, const rt_native_module *m, const rt_launch_desc *l)
{
    uint64_t most = d->drv->max_grid_items;
    for (int k = 0; most && k < 3; k++)
        if ((uint64_t)l->grid[k] * m->wg[k] > most)
            return rt_fail(d->ctx, KCRT_ERROR_UNSUPPORTED,
                           "%s: grid %c of %u workgroups of %u is %llu work-items, more than %s dispatches "
                           "(%llu)",
                           m->name, "xyz"[k], l->grid[k], m->wg[k], (unsigned long long)l->grid[k] * m->wg[k],
                           d->drv->api, (unsigned long long)most);
    return KCRT_OK;
}

/* Queues one launch on the stream (the device is current). */
static kcrt_status enqueue(rt_native_dev *d, rt_native_module *m, const rt_launch_desc *l)
{
    kernargs(m, l);
    kcrt_status s = d->drv->dispatch(d, m, l->grid);
    if (s != KCRT_OK)
        return rt_fail(d->ctx, s, "%s: %s", m->name, d->ctx->err);
    d->pending++;
    d->stats.dispatches++;
    d->stats.submissions++; /* each launch is its own submission to the stream */
    return KCRT_OK;
}

kcrt_status rt_native_launch(void *dev, void *module, const rt_launch_desc *l)
{
    rt_native_dev *d = dev;
    kcrt_status s = d->drv->usable(d);
    if (s == KCRT_OK)
        s = check_grid(d, module, l);
    if (s != KCRT_OK)
        return s;
    d->drv->enter(d);
    s = enqueue(d, module, l);
    d->drv->leave(d);
    if (s == KCRT_OK)
        d->stats.launches++;
    return s;
}

kcrt_status rt_native_finish(void *dev)
{
    rt_native_dev *d = dev;
    kcrt_status s = d->drv->usable(d);
    if (s != KCRT_OK)
        return s;
    d->drv->enter(d);
    s = d->drv->wait(d);
    d->drv->leave(d);
    d->pending = 0;
    d->stats.waits++;
    return s;
}

/* ---- timing -------------------------------------------------------------------------------------------- */

/* At least n events (the device is current). */
static kcrt_status events(rt_native_dev *d, int n)
{
    if (d->nevents >= n)
        return KCRT_OK;
    void **bigger = realloc(d->events, sizeof(void *) * (size_t)n);
    if (!bigger)
        return rt_fail(d->ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    d->events = bigger;
    for (; d->nevents < n; d->nevents++) {
        kcrt_status s = d->drv->event_create(d, &d->events[d->nevents]);
        if (s != KCRT_OK)
            return s;
    }
    return KCRT_OK;
}

void rt_native_release(rt_native_dev *d)
{
    while (d->nspares) {
        d->drv->release(d, d->spares[0].ptr);
        spare_remove(d, 0);
    }
    free(d->spares);
    d->spares = NULL;
    d->spares_cap = 0;
    for (int i = 0; i < d->nevents; i++)
        d->drv->event_destroy(d, d->events[i]);
    free(d->events);
    d->events = NULL;
    d->nevents = 0;
}

/* Launch r runs between events first(r) and first(r) + 1. Back to back,
 * event r before launch r and event r + 1 after it: on one in-order
 * stream, each interval holds exactly one launch. Cold, the flush buffer
 * is written between launches, outside the intervals: events 2r, 2r + 1. */
static int first(bool cold, int r) { return cold ? 2 * r : r; }

static kcrt_status record_timed(rt_native_dev *d, rt_native_module *m, const rt_launch_desc *l, int repeats,
                                const native_buf *flush, size_t flush_bytes)
{
    kcrt_status s = KCRT_OK;
    for (int r = 0; s == KCRT_OK && r < repeats; r++) {
        if (flush)
            s = d->drv->zero(d, flush->ptr, flush_bytes);
        if (s == KCRT_OK && (flush || r == 0))
            s = d->drv->event_record(d, d->events[first(flush != NULL, r)]);
        if (s == KCRT_OK)
            s = enqueue(d, m, l);
        if (s == KCRT_OK)
            s = d->drv->event_record(d, d->events[first(flush != NULL, r) + 1]);
    }
    return s;
}

static kcrt_status elapsed(rt_native_dev *d, int repeats, bool cold, double *ns_each)
{
    kcrt_status s = d->drv->event_wait(d, d->events[first(cold, repeats - 1) + 1]);
    d->pending = 0;
    d->stats.waits++;
    for (int r = 0; s == KCRT_OK && r < repeats; r++) {
        float ms = 0;
        s = d->drv->event_ms(d, d->events[first(cold, r)], d->events[first(cold, r) + 1], &ms);
        ns_each[r] = (double)ms * 1e6;
    }
    return s;
}

kcrt_status rt_native_time(void *dev, void *module, const rt_launch_desc *l, int repeats, void *flush,
                           size_t flush_bytes, double *ns_each)
{
    rt_native_dev *d = dev;
    kcrt_status s = rt_native_finish(d); /* earlier launches are not part of the timing */
    if (s == KCRT_OK)
        s = check_grid(d, module, l);
    if (s != KCRT_OK)
        return s;
    d->drv->enter(d);
    s = events(d, first(flush != NULL, repeats - 1) + 2);
    if (s == KCRT_OK)
        s = record_timed(d, module, l, repeats, flush, flush_bytes);
    if (s == KCRT_OK)
        s = elapsed(d, repeats, flush, ns_each);
    else
        rt_native_drain(d); /* leave nothing half-timed behind */
    d->drv->leave(d);
    d->stats.launches += (uint64_t)repeats;
    return s;
}

void rt_native_stats(void *dev, kcrt_stats *out)
{
    const rt_native_dev *d = dev;
    *out = d->stats;
}
