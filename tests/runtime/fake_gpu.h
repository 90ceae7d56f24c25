/*
 * fake_gpu.h — what the fake HIP and CUDA drivers (fake_hip.c,
 * fake_cuda.c) remember for the test that inspects them
 * (test_rt_gpu_fake.c), and how the test steers them.
 *
 * The fakes are small shared libraries with the entry points libkcrt's
 * HIP and CUDA backends dlopen, behaving as the documented APIs say where
 * libkcrt can tell: device memory is host memory, modules keep a copy of
 * the image they were given, a launch records its grid, its block and its
 * kernel arguments — as the device would see them: HIP's `extra` buffer
 * as given, CUDA's kernelParams gathered into the parameter space the PTX
 * declares (each parameter at its natural alignment, read with the size
 * the PTX gives it). Each launch advances a fake clock by FAKE_LAUNCH_MS
 * and each memset by FAKE_MEMSET_MS, which events record.
 *
 * Steering, read at each call from the environment:
 *   FAKE_GPU_DEVICES  how many devices (default 1; 0: hipInit/cuInit say
 *                     there is none, as the real drivers do)
 *   FAKE_GPU_ARCH     HIP: gcnArchName (default "gfx90a:sramecc+:xnack-")
 *   FAKE_GPU_CC       CUDA: compute capability as NN (default 89)
 *   FAKE_GPU_FAIL     the name of one entry point that fails, with an
 *                     error typical of it (see each fake)
 */
#ifndef KC_FAKE_GPU_H
#define KC_FAKE_GPU_H

#include <stdbool.h>
#include <stddef.h>

#define FAKE_LAUNCH_MS 0.25f
#define FAKE_MEMSET_MS 4.0f /* so that a timing that counted one would show it */

typedef struct fake_launch {
    unsigned grid[3], block[3], shared;
    void *stream;
    bool kernel_params_null, extra_null;
    bool extra_well_formed; /* HIP: BUFFER_POINTER, p, BUFFER_SIZE, &size, END */
    size_t size;            /* bytes of the argument block */
    unsigned char args[4096];
    char function[128];
} fake_launch;

typedef struct fake_state {
    char trace[65536]; /* the calls that matter, in order, space-separated */
    int launches;
    fake_launch last;     /* the last launch */
    unsigned char *image; /* a copy of the last module image (HIP: the ELF; CUDA: the PTX) */
    size_t image_size;
    int live_allocations, live_modules, live_events, live_streams;
    int context_depth;  /* CUDA: pushes minus pops */
    int current_device; /* HIP: the thread's device, as hipSetDevice left it */
    int set_device_calls;
} fake_state;

/* Each fake exports its state and a reset (it frees the image copy). */
typedef fake_state *(*fake_state_fn)(void);
typedef void (*fake_reset_fn)(void);

#endif
