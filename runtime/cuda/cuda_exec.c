/*
 * cuda_exec.c — the CUDA backend's buffers, launches and timing.
 *
 * As in the HIP backend, everything goes through the context's one stream
 * in order: launches are queued and return (kcrt_finish waits), a transfer
 * is queued behind the launches before it and waited for, a new buffer is
 * zeroed by a memset on the stream.
 *
 * Arguments: cuLaunchKernel takes `kernelParams`, one pointer per kernel
 * parameter, each pointing at that parameter's value in the block built
 * from variants.args (its "offset:size" slot), and `extra` NULL. The
 * driver reads each value with the size the PTX declares for it (.u32,
 * .u64, .f32, .align 2 .b8 [2]), so nothing depends on how the block is
 * padded; docs/backends.md's layout is the same one the PTX parameter
 * space has, which tests/runtime/test_rt_gpu_fake.c checks against the
 * .param list of every variant it launches.
 */
#include "cuda_private.h"

#include <stdlib.h>
#include <string.h>

/* ---- buffers ---------------------------------------------------------------------------------------------
 */

kcrt_status cu_buffer_create(void *dev, size_t bytes, void **out)
{
    cu_dev *d = dev;
    kcrt_status s = cu_usable(d);
    cu_buf *b = s == KCRT_OK ? calloc(1, sizeof(*b)) : NULL;
    if (s != KCRT_OK)
        return s;
    if (!b)
        return rt_fail(d->ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    cu_enter(d);
    s = cu_check(d, d->lib.cuMemAlloc(&b->ptr, bytes), "cuMemAlloc");
    if (s == KCRT_OK) /* new buffers hold zeros */
        s = cu_check(d, d->lib.cuMemsetD8Async(b->ptr, 0, bytes, d->stream), "cuMemsetD8Async");
    if (s != KCRT_OK && b->ptr)
        d->lib.cuMemFree(b->ptr);
    cu_leave(d);
    if (s != KCRT_OK) {
        free(b);
        return rt_fail(d->ctx, s, "a buffer of %zu bytes: %s", bytes, d->ctx->err);
    }
    b->size = bytes;
    *out = b;
    return KCRT_OK;
}

void cu_buffer_free(void *dev, void *buf)
{
    cu_dev *d = dev;
    cu_buf *b = buf;
    cu_enter(d);
    if (d->pending && !d->failed) /* a queued launch may still use it */
        d->lib.cuStreamSynchronize(d->stream);
    d->pending = 0;
    d->lib.cuMemFree(b->ptr);
    cu_leave(d);
    free(b);
}

/* Waits for the stream after a copy was queued on it. */
static kcrt_status copied(cu_dev *d, kcrt_status s)
{
    if (s == KCRT_OK)
        s = cu_check(d, d->lib.cuStreamSynchronize(d->stream), "cuStreamSynchronize");
    d->pending = 0;
    d->stats.transfer_submissions++;
    d->stats.waits++;
    return s;
}

kcrt_status cu_buffer_write(void *dev, void *buf, size_t offset, const void *src, size_t bytes)
{
    cu_dev *d = dev;
    cu_buf *b = buf;
    kcrt_status s = cu_usable(d);
    if (s != KCRT_OK)
        return s;
    cu_enter(d);
    s = cu_check(d, d->lib.cuMemcpyHtoDAsync(b->ptr + offset, src, bytes, d->stream), "cuMemcpyHtoDAsync");
    s = copied(d, s);
    cu_leave(d);
    return s;
}

kcrt_status cu_buffer_read(void *dev, void *buf, size_t offset, void *dst, size_t bytes)
{
    cu_dev *d = dev;
    cu_buf *b = buf;
    kcrt_status s = cu_usable(d);
    if (s != KCRT_OK)
        return s;
    cu_enter(d);
    s = cu_check(d, d->lib.cuMemcpyDtoHAsync(dst, b->ptr + offset, bytes, d->stream), "cuMemcpyDtoHAsync");
    s = copied(d, s);
    cu_leave(d);
    return s;
}

/* ---- launches
 * ---------------------------------------------------------------------------------------------- */

static uint64_t address(const void *buf)
{
    return ((const cu_buf *)buf)->ptr;
}

/* Queues one launch on the stream (the context is current). */
static kcrt_status enqueue(cu_dev *d, rt_native_module *m, const rt_launch_desc *l)
{
    rt_native_kernargs(m, l, address);
    cu_result e = d->lib.cuLaunchKernel(m->function, l->grid[0], l->grid[1], l->grid[2], m->wg[0], m->wg[1],
                                        m->wg[2], 0, d->stream, m->nparams ? m->params : NULL, NULL);
    kcrt_status s = cu_check(d, e, "cuLaunchKernel");
    if (s != KCRT_OK)
        return rt_fail(d->ctx, s, "%s: %s", m->name, d->ctx->err);
    d->pending++;
    d->stats.dispatches++;
    d->stats.submissions++; /* each launch is its own submission to the stream */
    return KCRT_OK;
}

kcrt_status cu_launch(void *dev, void *module, const rt_launch_desc *l)
{
    cu_dev *d = dev;
    kcrt_status s = cu_usable(d);
    if (s != KCRT_OK)
        return s;
    cu_enter(d);
    s = enqueue(d, module, l);
    cu_leave(d);
    if (s == KCRT_OK)
        d->stats.launches++;
    return s;
}

kcrt_status cu_finish(void *dev)
{
    cu_dev *d = dev;
    kcrt_status s = cu_usable(d);
    if (s != KCRT_OK)
        return s;
    cu_enter(d);
    s = cu_check(d, d->lib.cuStreamSynchronize(d->stream), "cuStreamSynchronize");
    cu_leave(d);
    d->pending = 0;
    d->stats.waits++;
    return s;
}

/* ---- timing -----------------------------------------------------------------------------------------------
 */

/* At least n events (the context is current). */
static kcrt_status events(cu_dev *d, int n)
{
    if (d->nevents >= n)
        return KCRT_OK;
    cu_event *bigger = realloc(d->events, sizeof(cu_event) * (size_t)n);
    if (!bigger)
        return rt_fail(d->ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    d->events = bigger;
    for (; d->nevents < n; d->nevents++) {
        kcrt_status s =
            cu_check(d, d->lib.cuEventCreate(&d->events[d->nevents], KCU_EVENT_DEFAULT), "cuEventCreate");
        if (s != KCRT_OK)
            return s;
    }
    return KCRT_OK;
}

/* Event r before launch r and event r + 1 after it: on one in-order
 * stream, each interval holds exactly one launch. */
static kcrt_status record_timed(cu_dev *d, rt_native_module *m, const rt_launch_desc *l, int repeats)
{
    kcrt_status s = cu_check(d, d->lib.cuEventRecord(d->events[0], d->stream), "cuEventRecord");
    for (int r = 0; s == KCRT_OK && r < repeats; r++) {
        s = enqueue(d, m, l);
        if (s == KCRT_OK)
            s = cu_check(d, d->lib.cuEventRecord(d->events[r + 1], d->stream), "cuEventRecord");
    }
    return s;
}

static kcrt_status elapsed(cu_dev *d, int repeats, double *ns_each)
{
    kcrt_status s = cu_check(d, d->lib.cuEventSynchronize(d->events[repeats]), "cuEventSynchronize");
    d->pending = 0;
    d->stats.waits++;
    for (int r = 0; s == KCRT_OK && r < repeats; r++) {
        float ms = 0;
        s = cu_check(d, d->lib.cuEventElapsedTime(&ms, d->events[r], d->events[r + 1]), "cuEventElapsedTime");
        ns_each[r] = (double)ms * 1e6;
    }
    return s;
}

kcrt_status cu_time(void *dev, void *module, const rt_launch_desc *l, int repeats, double *ns_each)
{
    cu_dev *d = dev;
    kcrt_status s = cu_finish(d); /* earlier launches are not part of the timing */
    if (s != KCRT_OK)
        return s;
    cu_enter(d);
    s = events(d, repeats + 1);
    if (s == KCRT_OK)
        s = record_timed(d, module, l, repeats);
    if (s == KCRT_OK)
        s = elapsed(d, repeats, ns_each);
    else if (d->pending && !d->failed)
        d->lib.cuStreamSynchronize(d->stream); /* leave nothing half-timed behind */
    cu_leave(d);
    d->stats.launches += (uint64_t)repeats;
    return s;
}
