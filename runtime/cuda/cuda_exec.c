/*
 * cuda_exec.c — the CUDA calls of the common execution path (native_exec.c
 * runs the stream, the buffers and the timing).
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

static kcrt_status usable(void *dev) { return cu_usable(dev); }

static void enter(void *dev) { cu_enter(dev); }

static void leave(void *dev) { cu_leave(dev); }

static kcrt_status alloc(void *dev, size_t bytes, uint64_t *address)
{
    cu_dev *d = dev;
    cu_deviceptr p = 0;
    kcrt_status s = cu_check(d, d->lib.cuMemAlloc(&p, bytes), "cuMemAlloc");
    *address = p;
    return s;
}

static void release(void *dev, uint64_t address)
{
    cu_dev *d = dev;
    d->lib.cuMemFree(address);
}

static kcrt_status zero(void *dev, uint64_t address, size_t bytes)
{
    cu_dev *d = dev;
    return cu_check(d, d->lib.cuMemsetD8Async(address, 0, bytes, d->stream), "cuMemsetD8Async");
}

static kcrt_status to_device(void *dev, uint64_t dst, const void *src, size_t bytes)
{
    cu_dev *d = dev;
    return cu_check(d, d->lib.cuMemcpyHtoDAsync(dst, src, bytes, d->stream), "cuMemcpyHtoDAsync");
}

static kcrt_status to_host(void *dev, void *dst, uint64_t src, size_t bytes)
{
    cu_dev *d = dev;
    return cu_check(d, d->lib.cuMemcpyDtoHAsync(dst, src, bytes, d->stream), "cuMemcpyDtoHAsync");
}

static kcrt_status on_device(void *dev, uint64_t dst, uint64_t src, size_t bytes)
{
    cu_dev *d = dev;
    return cu_check(d, d->lib.cuMemcpyDtoDAsync(dst, src, bytes, d->stream), "cuMemcpyDtoDAsync");
}

static kcrt_status wait(void *dev)
{
    cu_dev *d = dev;
    return cu_check(d, d->lib.cuStreamSynchronize(d->stream), "cuStreamSynchronize");
}

static kcrt_status dispatch(void *dev, rt_native_module *m, const uint32_t grid[3])
{
    cu_dev *d = dev;
    return cu_check(d,
                    d->lib.cuLaunchKernel(m->function, grid[0], grid[1], grid[2], m->wg[0], m->wg[1], m->wg[2], 0,
                                          d->stream, m->nparams ? m->params : NULL, NULL),
                    "cuLaunchKernel");
}

static kcrt_status event_create(void *dev, void **event)
{
    cu_dev *d = dev;
    return cu_check(d, d->lib.cuEventCreate((cu_event *)event, KCU_EVENT_DEFAULT), "cuEventCreate");
}

static void event_destroy(void *dev, void *event)
{
    cu_dev *d = dev;
    d->lib.cuEventDestroy(event);
}

static kcrt_status event_record(void *dev, void *event)
{
    cu_dev *d = dev;
    return cu_check(d, d->lib.cuEventRecord(event, d->stream), "cuEventRecord");
}

static kcrt_status event_wait(void *dev, void *event)
{
    cu_dev *d = dev;
    return cu_check(d, d->lib.cuEventSynchronize(event), "cuEventSynchronize");
}

static kcrt_status event_ms(void *dev, void *from, void *to, float *ms)
{
    cu_dev *d = dev;
    return cu_check(d, d->lib.cuEventElapsedTime(ms, from, to), "cuEventElapsedTime");
}

static void use_stream(void *dev, void *stream)
{
    cu_dev *d = dev;
    d->stream = stream ? (cu_stream)stream : d->own_stream;
}

/* the device's grid limits are CUDA's */
const rt_native_driver cu_driver = RT_NATIVE_DRIVER("CUDA", 0);
