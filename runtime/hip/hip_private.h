/*
 * hip_private.h — the HIP backend's shared state.
 *
 * HIP (ROCm's libamdhip64) is loaded with dlopen: KCRT_HIP_LIBRARY, else
 * libamdhip64.so, .so.6, .so.5, /opt/rocm/lib/libamdhip64.so. Its entry
 * points are declared in hip_api.h from the HIP API reference, so libkcrt
 * builds without ROCm.
 *
 * One context drives one HIP device through one non-blocking stream:
 * launches (hipModuleLaunchKernel with the kernel arguments in `extra`),
 * copies and memsets are queued on it in order; kcrt_finish, a transfer
 * and a timed launch wait for it. Every call first makes the context's
 * device current and gives the thread back the device it had.
 *
 * Files: hip_device.c (the library, devices, open/close, variants, the ops
 * table), hip_exec.c (buffers, launches, timing).
 */
#ifndef KC_HIP_PRIVATE_H
#define KC_HIP_PRIVATE_H

#include "../rt_native.h"
#include "hip_api.h"

#define HIP_DECLARE(ret, name, params, ...) ret(*name) params;

typedef struct hip_lib {
    void *so;
    const char *path;
    HIP_FNS(HIP_DECLARE)
} hip_lib;

typedef struct hip_buf {
    void *ptr; /* device memory */
    size_t size;
} hip_buf;

typedef struct hip_dev {
    kcrt_context *ctx;
    hip_lib lib;
    int device;    /* HIP's ordinal */
    int saved;     /* the thread's device before the call, given back after */
    int depth;     /* of nested calls (hip_enter) */
    char arch[64]; /* gcnArchName as HIP says it: "gfx90a:sramecc+:xnack-" */
    hip_stream stream;
    hip_event *events; /* for timing, grown on demand */
    int nevents;
    uint64_t pending; /* launches queued since the stream was last waited for */
    hip_error failed; /* a launch faulted: the device is unusable (0 when not) */
    kcrt_stats stats;
} hip_dev;

/* hip_device.c */
kcrt_status hip_check(hip_dev *d, hip_error e, const char *call);
void hip_enter(hip_dev *d);
void hip_leave(hip_dev *d);
kcrt_status hip_usable(hip_dev *d);

/* hip_exec.c */
kcrt_status hip_buffer_create(void *dev, size_t bytes, void **buf);
void hip_buffer_free(void *dev, void *buf);
kcrt_status hip_buffer_write(void *dev, void *buf, size_t offset, const void *src, size_t bytes);
kcrt_status hip_buffer_read(void *dev, void *buf, size_t offset, void *dst, size_t bytes);
kcrt_status hip_launch(void *dev, void *module, const rt_launch_desc *l);
kcrt_status hip_finish(void *dev);
kcrt_status hip_time(void *dev, void *module, const rt_launch_desc *l, int repeats, double *ns_each);

#endif
