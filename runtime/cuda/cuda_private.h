/*
 * cuda_private.h — the CUDA backend's shared state.
 *
 * The CUDA driver is loaded with dlopen: KCRT_CUDA_LIBRARY, else
 * libcuda.so.1 (the driver's own library; the toolkit's stubs/libcuda.so
 * is not a driver and says so at cuInit). Its entry points are declared in
 * cuda_api.h from the CUDA Driver API reference, so libkcrt builds
 * without the CUDA toolkit.
 *
 * One context drives one device through its primary context (shared with
 * the CUDA runtime and other libraries in the process, as NVIDIA
 * recommends) and one non-blocking stream. Every call pushes the primary
 * context and pops it after, leaving the thread's own current context as
 * it was. Launches (cuLaunchKernel with kernelParams) are queued on the
 * stream; kcrt_finish, transfers and timed launches wait for it.
 *
 * Files: cuda_device.c (the library, devices, open/close, variants and
 * modules, the ops table), cuda_exec.c (the driver calls under
 * native_exec.c's buffers, launches and timing).
 */
#ifndef KC_CUDA_PRIVATE_H
#define KC_CUDA_PRIVATE_H

#include "../rt_native.h"
#include "cuda_api.h"

#define CU_DECLARE(ret, name, params, ...) ret(*name) params;

typedef struct cu_lib {
    void *so;
    const char *path;
    CU_FNS(CU_DECLARE)
} cu_lib;

typedef struct cu_dev {
    rt_native_dev n; /* first: the state of the common execution path */
    cu_lib lib;
    cu_device device;
    cu_context primary; /* retained in open, released in close */
    int cc;             /* compute capability, major * 10 + minor: 86 */
    cu_stream stream;     /* where work goes: own_stream, or the host's (kcrt_set_stream) */
    cu_stream own_stream; /* made in open, destroyed in close */
} cu_dev;

/* cuda_device.c */
kcrt_status cu_check(cu_dev *d, cu_result e, const char *call);
kcrt_status cu_usable(cu_dev *d);
void cu_enter(cu_dev *d);
void cu_leave(cu_dev *d);

/* cuda_exec.c: the driver calls of the common execution path */
extern const rt_native_driver cu_driver;

#endif
