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
 * table), hip_exec.c (the driver calls under native_exec.c's buffers,
 * launches and timing).
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

typedef struct hip_dev {
    rt_native_dev n; /* first: the state of the common execution path */
    hip_lib lib;
    int device;    /* HIP's ordinal */
    int saved;     /* the thread's device before the call, given back after */
    int depth;     /* of nested calls (hip_enter) */
    char arch[64]; /* gcnArchName as HIP says it: "gfx90a:sramecc+:xnack-" */
    hip_stream stream;     /* where work goes: own_stream, or the host's (kcrt_set_stream) */
    hip_stream own_stream; /* made in open, destroyed in close */
} hip_dev;

/* hip_device.c */
kcrt_status hip_check(hip_dev *d, hip_error e, const char *call);
void hip_enter(hip_dev *d);
void hip_leave(hip_dev *d);
kcrt_status hip_usable(hip_dev *d);

/* hip_exec.c: the driver calls of the common execution path */
extern const rt_native_driver hip_driver;

#endif
