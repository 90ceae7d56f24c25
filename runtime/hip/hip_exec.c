/*
 * hip_exec.c — the HIP calls of the common execution path (native_exec.c
 * runs the stream, the buffers and the timing).
 *
 * Arguments: hipModuleLaunchKernel takes the kernel-argument block through
 * `extra` (HIP_LAUNCH_PARAM_BUFFER_POINTER / _SIZE / _END) and kernelParams
 * NULL — the block is the code object's explicit kernarg segment, laid out
 * as its metadata says (docs/backends.md), which is what variants.args
 * records. kc's code objects have no hidden arguments, so the block is the
 * whole segment.
 */
#include "hip_private.h"

static void *ptr(uint64_t address) { return (void *)(uintptr_t)address; }

static kcrt_status usable(void *dev) { return hip_usable(dev); }

static void enter(void *dev) { hip_enter(dev); }

static void leave(void *dev) { hip_leave(dev); }

static kcrt_status alloc(void *dev, size_t bytes, uint64_t *address)
{
    hip_dev *d = dev;
    void *p = NULL;
    kcrt_status s = hip_check(d, d->lib.hipMalloc(&p, bytes), "hipMalloc");
    *address = (uint64_t)(uintptr_t)p;
    return s;
}

static void release(void *dev, uint64_t address)
{
    hip_dev *d = dev;
    d->lib.hipFree(ptr(address));
}

static kcrt_status zero(void *dev, uint64_t address, size_t bytes)
{
    hip_dev *d = dev;
    return hip_check(d, d->lib.hipMemsetAsync(ptr(address), 0, bytes, d->stream), "hipMemsetAsync");
}

static kcrt_status to_device(void *dev, uint64_t dst, const void *src, size_t bytes)
{
    hip_dev *d = dev;
    return hip_check(d, d->lib.hipMemcpyAsync(ptr(dst), src, bytes, hipMemcpyHostToDevice, d->stream),
                     "hipMemcpyAsync");
}

static kcrt_status to_host(void *dev, void *dst, uint64_t src, size_t bytes)
{
    hip_dev *d = dev;
    return hip_check(d, d->lib.hipMemcpyAsync(dst, ptr(src), bytes, hipMemcpyDeviceToHost, d->stream),
                     "hipMemcpyAsync");
}

static kcrt_status on_device(void *dev, uint64_t dst, uint64_t src, size_t bytes)
{
    hip_dev *d = dev;
    return hip_check(d, d->lib.hipMemcpyAsync(ptr(dst), ptr(src), bytes, hipMemcpyDeviceToDevice, d->stream),
                     "hipMemcpyAsync");
}

static kcrt_status wait(void *dev)
{
    hip_dev *d = dev;
    return hip_check(d, d->lib.hipStreamSynchronize(d->stream), "hipStreamSynchronize");
}

static kcrt_status dispatch(void *dev, rt_native_module *m, const uint32_t grid[3])
{
    hip_dev *d = dev;
    size_t size = m->args_size;
    void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, m->block, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     HIP_LAUNCH_PARAM_END};
    return hip_check(d,
                     d->lib.hipModuleLaunchKernel(m->function, grid[0], grid[1], grid[2], m->wg[0], m->wg[1],
                                                  m->wg[2], 0, d->stream, NULL, size ? extra : NULL),
                     "hipModuleLaunchKernel");
}

static kcrt_status event_create(void *dev, void **event)
{
    hip_dev *d = dev;
    return hip_check(d, d->lib.hipEventCreate((hip_event *)event), "hipEventCreate");
}

static void event_destroy(void *dev, void *event)
{
    hip_dev *d = dev;
    d->lib.hipEventDestroy(event);
}

static kcrt_status event_record(void *dev, void *event)
{
    hip_dev *d = dev;
    return hip_check(d, d->lib.hipEventRecord(event, d->stream), "hipEventRecord");
}

static kcrt_status event_wait(void *dev, void *event)
{
    hip_dev *d = dev;
    return hip_check(d, d->lib.hipEventSynchronize(event), "hipEventSynchronize");
}

static kcrt_status event_ms(void *dev, void *from, void *to, float *ms)
{
    hip_dev *d = dev;
    return hip_check(d, d->lib.hipEventElapsedTime(ms, from, to), "hipEventElapsedTime");
}

static void use_stream(void *dev, void *stream)
{
    hip_dev *d = dev;
    d->stream = stream ? (hip_stream)stream : d->own_stream;
}

/* HSA dispatches count work-items in 32 bits per dimension */
const rt_native_driver hip_driver = RT_NATIVE_DRIVER("HIP", UINT32_MAX);
