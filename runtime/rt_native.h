/*
 * rt_native.h — what the HIP and CUDA backends share (native.c): loading
 * their driver library with dlopen, the module of a kernel-argument
 * variant, the argument block of a launch, and describing a device by its
 * PCI ids.
 *
 * Both backends take one kernel-argument block per launch, laid out as
 * docs/backends.md says and as variants.args records it ("offset:size" per
 * parameter). The common layer has already packed the scalars at their
 * offsets (launch.c); a backend copies that block and writes each buffer's
 * 64-bit device address into the buffer's 8-byte slot.
 */
#ifndef KC_RT_NATIVE_H
#define KC_RT_NATIVE_H

#include "rt_private.h"

/* ---- the library ------------------------------------------------------------------------------ */

/* dlopens the library the environment variable `env` names, or else the
 * first of `names` (NULL-terminated) that loads. The library stays loaded
 * for the life of the process (RTLD_NODELETE): drivers are not made to be
 * unloaded and loaded again. On failure: NULL, and err says which names
 * were tried and why the last failed, with `what` ("HIP") and `install`
 * (what to install). *path gets the name that loaded. */
void *rt_native_open(const char *env, const char *const *names, const char *what, const char *install,
                     const char **path, char *err, size_t errlen);

/* The first of `names` (NULL-terminated) that the library has, written to
 * the function pointer at fn; false when it has none of them. */
bool rt_native_sym(void *so, const char *const *names, void *fn);

/* ---- modules and arguments ----------------------------------------------------------------------- */

/* One variant, loaded. */
typedef struct rt_native_module {
    void *module;   /* hipModule_t, CUmodule */
    void *function; /* hipFunction_t, CUfunction */
    int nparams;
    rt_slot *slots; /* a copy of the variant's */
    uint32_t args_size;
    uint32_t wg[3];
    unsigned char *block; /* args_size bytes (at least 8): the launch's arguments, rebuilt per launch */
    void **params;        /* CUDA: a pointer into block per parameter */
    char name[160];       /* kernel[variant], for messages */
} rt_native_module;

/* A module with the variant's layout and no driver objects yet. */
kcrt_status rt_native_module_new(kcrt_context *ctx, const rt_module_desc *m, rt_native_module **out);
void rt_native_module_free(rt_native_module *m);

/* Fills m->block for a launch: the packed scalars, then at each buffer's
 * slot the 64-bit device address `address` gives for the backend's buffer. */
void rt_native_kernargs(rt_native_module *m, const rt_launch_desc *l, uint64_t (*address)(const void *buf));

/* ---- describing a device --------------------------------------------------------------------------- */

/* The PCI device id (0x744c) of the device at bus id "0000:03:00.0", from
 * Linux's sysfs; 0 when it cannot be read. (The HIP and CUDA APIs give the
 * bus position, not the id that Vulkan reports and device keys use.) */
uint32_t rt_pci_device_id(const char *bus_id);

/* The first line of a small text file (sysfs, /proc), without its newline;
 * false when it cannot be read. */
bool rt_read_line(const char *path, char *out, size_t len);

/* info->key from its backend, ids, name and driver, in the shape of the
 * Vulkan keys: backend:vendor:device:name:driver. */
void rt_native_key(kcrt_device_info *info);

/* Every feature kc's LLVM targets lower: the compiler refuses what a
 * target cannot do, so a HIP or CUDA device has them all. */
void rt_native_features(kcrt_device_info *info);

#endif
