/*
 * hip_exec.c — the HIP backend's buffers, launches and timing.
 *
 * Everything goes through the context's one stream, in order: a launch is
 * queued and returns (kcrt_finish waits for the stream); a transfer is
 * queued behind the launches before it and waited for, so a write never
 * races them and a read sees their results (as on Vulkan, transfers are
 * synchronous); a new buffer is zeroed by a memset on the stream.
 *
 * Arguments: hipModuleLaunchKernel takes the kernel-argument block through
 * `extra` (HIP_LAUNCH_PARAM_BUFFER_POINTER / _SIZE / _END) and kernelParams
 * NULL — the block is the code object's explicit kernarg segment, laid out
 * as its metadata says (docs/backends.md), which is what variants.args
 * records. kc's code objects have no hidden arguments, so the block is the
 * whole segment.
 */
#include "hip_private.h"

#include <stdlib.h>
#include <string.h>

/* ---- buffers ---------------------------------------------------------------------------------------- */

kcrt_status hip_buffer_create(void *dev, size_t bytes, void **out)
{
    hip_dev *d = dev;
    kcrt_status s = hip_usable(d);
    hip_buf *b = s == KCRT_OK ? calloc(1, sizeof(*b)) : NULL;
    if (s != KCRT_OK)
        return s;
    if (!b)
        return rt_fail(d->ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    hip_enter(d);
    s = hip_check(d, d->lib.hipMalloc(&b->ptr, bytes), "hipMalloc");
    if (s == KCRT_OK) /* new buffers hold zeros */
        s = hip_check(d, d->lib.hipMemsetAsync(b->ptr, 0, bytes, d->stream), "hipMemsetAsync");
    if (s != KCRT_OK && b->ptr)
        d->lib.hipFree(b->ptr);
    hip_leave(d);
    if (s != KCRT_OK) {
        free(b);
        return rt_fail(d->ctx, s, "a buffer of %zu bytes: %s", bytes, d->ctx->err);
    }
    b->size = bytes;
    *out = b;
    return KCRT_OK;
}

void hip_buffer_free(void *dev, void *buf)
{
    hip_dev *d = dev;
    hip_buf *b = buf;
    hip_enter(d);
    if (d->pending && !d->failed) /* a queued launch may still use it */
        d->lib.hipStreamSynchronize(d->stream);
    d->pending = 0;
    d->lib.hipFree(b->ptr);
    hip_leave(d);
    free(b);
}

/* One copy on the stream, waited for. */
static kcrt_status copy(hip_dev *d, void *dst, const void *src, size_t bytes, int kind)
{
    kcrt_status s = hip_usable(d);
    if (s != KCRT_OK)
        return s;
    hip_enter(d);
    s = hip_check(d, d->lib.hipMemcpyAsync(dst, src, bytes, kind, d->stream), "hipMemcpyAsync");
    if (s == KCRT_OK)
        s = hip_check(d, d->lib.hipStreamSynchronize(d->stream), "hipStreamSynchronize");
    hip_leave(d);
    d->pending = 0;
    d->stats.transfer_submissions++;
    d->stats.waits++;
    return s;
}

kcrt_status hip_buffer_write(void *dev, void *buf, size_t offset, const void *src, size_t bytes)
{
    hip_buf *b = buf;
    return copy(dev, (char *)b->ptr + offset, src, bytes, hipMemcpyHostToDevice);
}

kcrt_status hip_buffer_read(void *dev, void *buf, size_t offset, void *dst, size_t bytes)
{
    hip_buf *b = buf;
    return copy(dev, dst, (const char *)b->ptr + offset, bytes, hipMemcpyDeviceToHost);
}

/* ---- launches ------------------------------------------------------------------------------------------ */

static uint64_t address(const void *buf)
{
    return (uint64_t)(uintptr_t)((const hip_buf *)buf)->ptr;
}

/* HSA dispatches count work-items in 32 bits per dimension. */
static kcrt_status check_grid(hip_dev *d, const rt_native_module *m, const rt_launch_desc *l)
{
    for (int k = 0; k < 3; k++)
        if ((uint64_t)l->grid[k] * m->wg[k] > UINT32_MAX)
            return rt_fail(d->ctx, KCRT_ERROR_UNSUPPORTED,
                           "%s: grid %c of %u workgroups of %u is %llu work-items, more than HIP dispatches "
                           "(2^32 - 1)",
                           m->name, "xyz"[k], l -> grid[k], m -> wg[k],
                           (unsigned long long)l -> grid[k] * m -> wg[k]);
    return KCRT_OK;
}

/* Queues one launch on the stream (the device is current). */
static kcrt_status enqueue(hip_dev *d, rt_native_module *m, const rt_launch_desc *l)
{
    rt_native_kernargs(m, l, address);
    size_t size = m->args_size;
    void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, m->block, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     HIP_LAUNCH_PARAM_END};
    hip_error e = d->lib.hipModuleLaunchKernel(m->function, l->grid[0], l->grid[1], l->grid[2], m->wg[0],
                                               m->wg[1], m->wg[2], 0, d->stream, NULL, size ? extra : NULL);
    kcrt_status s = hip_check(d, e, "hipModuleLaunchKernel");
    if (s != KCRT_OK)
        return rt_fail(d->ctx, s, "%s: %s", m->name, d->ctx->err);
    d->pending++;
    d->stats.dispatches++;
    d->stats.submissions++; /* each launch is its own submission to the stream */
    return KCRT_OK;
}

kcrt_status hip_launch(void *dev, void *module, const rt_launch_desc *l)
{
    hip_dev *d = dev;
    kcrt_status s = hip_usable(d);
    if (s == KCRT_OK)
        s = check_grid(d, module, l);
    if (s != KCRT_OK)
        return s;
    hip_enter(d);
    s = enqueue(d, module, l);
    hip_leave(d);
    if (s == KCRT_OK)
        d->stats.launches++;
    return s;
}

kcrt_status hip_finish(void *dev)
{
    hip_dev *d = dev;
    kcrt_status s = hip_usable(d);
    if (s != KCRT_OK)
        return s;
    hip_enter(d);
    s = hip_check(d, d->lib.hipStreamSynchronize(d->stream), "hipStreamSynchronize");
    hip_leave(d);
    d->pending = 0;
    d->stats.waits++;
    return s;
}

/* ---- timing ----------------------------------------------------------------------------------------------
 */

/* At least n events (the device is current). */
static kcrt_status events(hip_dev *d, int n)
{
    if (d->nevents >= n)
        return KCRT_OK;
    hip_event *bigger = realloc(d->events, sizeof(hip_event) * (size_t)n);
    if (!bigger)
        return rt_fail(d->ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    d->events = bigger;
    for (; d->nevents < n; d->nevents++) {
        kcrt_status s = hip_check(d, d->lib.hipEventCreate(&d->events[d->nevents]), "hipEventCreate");
        if (s != KCRT_OK)
            return s;
    }
    return KCRT_OK;
}

/* Event r before launch r and event r + 1 after it: on one in-order
 * stream, each interval holds exactly one launch. */
static kcrt_status record_timed(hip_dev *d, rt_native_module *m, const rt_launch_desc *l, int repeats)
{
    kcrt_status s = hip_check(d, d->lib.hipEventRecord(d->events[0], d->stream), "hipEventRecord");
    for (int r = 0; s == KCRT_OK && r < repeats; r++) {
        s = enqueue(d, m, l);
        if (s == KCRT_OK)
            s = hip_check(d, d->lib.hipEventRecord(d->events[r + 1], d->stream), "hipEventRecord");
    }
    return s;
}

static kcrt_status elapsed(hip_dev *d, int repeats, double *ns_each)
{
    kcrt_status s = hip_check(d, d->lib.hipEventSynchronize(d->events[repeats]), "hipEventSynchronize");
    d->pending = 0;
    d->stats.waits++;
    for (int r = 0; s == KCRT_OK && r < repeats; r++) {
        float ms = 0;
        s = hip_check(d, d->lib.hipEventElapsedTime(&ms, d->events[r], d->events[r + 1]),
                      "hipEventElapsedTime");
        ns_each[r] = (double)ms * 1e6;
    }
    return s;
}

kcrt_status hip_time(void *dev, void *module, const rt_launch_desc *l, int repeats, double *ns_each)
{
    hip_dev *d = dev;
    kcrt_status s = hip_finish(d); /* earlier launches are not part of the timing */
    if (s == KCRT_OK)
        s = check_grid(d, module, l);
    if (s != KCRT_OK)
        return s;
    hip_enter(d);
    s = events(d, repeats + 1);
    if (s == KCRT_OK)
        s = record_timed(d, module, l, repeats);
    if (s == KCRT_OK)
        s = elapsed(d, repeats, ns_each);
    else if (d->pending && !d->failed)
        d->lib.hipStreamSynchronize(d->stream); /* leave nothing half-timed behind */
    hip_leave(d);
    d->stats.launches += (uint64_t)repeats;
    return s;
}
