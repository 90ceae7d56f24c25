/*
 * hip_api.h — the part of HIP's C API that libkcrt calls, declared here:
 * Debian has no ROCm headers, and libkcrt must build and run without ROCm
 * (the library is dlopen'ed; see hip_private.h).
 *
 * Source of every declaration: the HIP Runtime API reference in the ROCm
 * documentation (rocm.docs.amd.com, "HIP runtime API": the modules Device
 * management, Error handling, Memory management, Stream management, Event
 * management, Module management) and hip/hip_runtime_api.h, whose values
 * and signatures are the same in ROCm 5.x and 6.x for everything below.
 * Only ROCm's public, documented ABI is used; names keep HIP's spelling so
 * that the reference is easy to find, with kc's `hip_` type names.
 *
 * What is deliberately NOT used: hipDeviceProp_t. Its layout changed in
 * ROCm 6 (hipGetDevicePropertiesR0600 beside the old R0000 one), so the
 * numbers libkcrt needs come from hipDeviceGetAttribute, the name from
 * hipDeviceGetName, and only the architecture name (gcnArchName, which has
 * no attribute) is read from the properties, by a search that does not
 * depend on the layout (hip_device.c, arch_name).
 */
#ifndef KC_HIP_API_H
#define KC_HIP_API_H

#include <stddef.h>

/* hipError_t: an enum of int size. The values libkcrt tests for; every
 * other one reaches the user through hipGetErrorName/hipGetErrorString. */
typedef int hip_error;
enum {
    hipSuccess = 0,
    hipErrorOutOfMemory = 2,
    hipErrorNotInitialized = 3,
    hipErrorInsufficientDriver = 35,
    hipErrorNoDevice = 100,
    hipErrorInvalidDevice = 101,
    hipErrorInvalidImage = 200,
    hipErrorNoBinaryForGpu = 209,
    hipErrorInvalidKernelFile = 218,
    hipErrorSharedObjectInitFailed = 303,
    hipErrorNotFound = 500,
    hipErrorIllegalAddress = 700,
    hipErrorLaunchOutOfResources = 701,
    hipErrorLaunchFailure = 719,
};

/* Opaque handles (hipStream_t, hipEvent_t, hipModule_t, hipFunction_t are
 * pointers to incomplete structs); a device is an int ordinal. */
typedef struct hip_stream_s *hip_stream;
typedef struct hip_event_s *hip_event;
typedef struct hip_module_s *hip_module;
typedef struct hip_function_s *hip_function;

/* hipDeviceAttribute_t: the numbering of ROCm 5.0 and later (the
 * "CudaCompatible" range from 0, the AMD-specific one from 10000). ROCm 6
 * renamed two unused entries and appended new ones but kept every number;
 * ROCm before 5.0 numbered differently and is not supported (the values
 * read are checked for sense in hip_device.c). */
typedef int hip_attribute;
enum {
    hipDeviceAttributeIntegrated = 16,
    hipDeviceAttributeMaxBlockDimX = 26, /* then Y = 27, Z = 28 */
    hipDeviceAttributeMaxGridDimX = 29,  /* then Y = 30, Z = 31 */
    hipDeviceAttributeMaxThreadsPerBlock = 56,
    hipDeviceAttributeMultiprocessorCount = 63,
    hipDeviceAttributeMaxSharedMemoryPerBlock = 74,
    hipDeviceAttributeWarpSize = 87,
};

/* hipMemcpyKind */
enum { hipMemcpyHostToDevice = 1, hipMemcpyDeviceToHost = 2, hipMemcpyDeviceToDevice = 3 };
/* hipStreamCreateWithFlags: a stream that does not wait for the null stream */
enum { hipStreamNonBlocking = 0x01 };

/* hipModuleLaunchKernel's `extra`: the kernel arguments as one buffer. */
#define HIP_LAUNCH_PARAM_BUFFER_POINTER ((void *)0x01)
#define HIP_LAUNCH_PARAM_BUFFER_SIZE ((void *)0x02)
#define HIP_LAUNCH_PARAM_END ((void *)0x03)

/* Bytes libkcrt gives hipGetDeviceProperties: several times the size of
 * hipDeviceProp_t in any ROCm (under 1.5 KiB in 6.x). */
#define HIP_PROPS_BYTES 16384

/* X(return type, member, parameters, symbols to look for, in order). The
 * properties call is the only one with several symbols: ROCm 6 exports
 * the R0600 and R0000 forms, ROCm 5 only the plain one. */
#define HIP_FNS(X)                                                                                           \
    X(hip_error, hipInit, (unsigned flags), "hipInit")                                                       \
    X(const char *, hipGetErrorName, (hip_error e), "hipGetErrorName")                                       \
    X(const char *, hipGetErrorString, (hip_error e), "hipGetErrorString")                                   \
    X(hip_error, hipDriverGetVersion, (int *version), "hipDriverGetVersion")                                 \
    X(hip_error, hipGetDeviceCount, (int *count), "hipGetDeviceCount")                                       \
    X(hip_error, hipGetDevice, (int *device), "hipGetDevice")                                                \
    X(hip_error, hipSetDevice, (int device), "hipSetDevice")                                                 \
    X(hip_error, hipDeviceGetName, (char *name, int len, int device), "hipDeviceGetName")                    \
    X(hip_error, hipDeviceGetAttribute, (int *value, hip_attribute attr, int device),                        \
      "hipDeviceGetAttribute")                                                                               \
    X(hip_error, hipDeviceTotalMem, (size_t * bytes, int device), "hipDeviceTotalMem")                       \
    X(hip_error, hipDeviceGetPCIBusId, (char *bus_id, int len, int device), "hipDeviceGetPCIBusId")          \
    X(hip_error, hipGetDeviceProperties, (void *props, int device), "hipGetDevicePropertiesR0600",           \
      "hipGetDevicePropertiesR0000", "hipGetDeviceProperties")                                               \
    X(hip_error, hipMalloc, (void **ptr, size_t bytes), "hipMalloc")                                         \
    X(hip_error, hipFree, (void *ptr), "hipFree")                                                            \
    X(hip_error, hipMemcpyAsync, (void *dst, const void *src, size_t bytes, int kind, hip_stream stream),    \
      "hipMemcpyAsync")                                                                                      \
    X(hip_error, hipMemsetAsync, (void *dst, int value, size_t bytes, hip_stream stream), "hipMemsetAsync")  \
    X(hip_error, hipStreamCreateWithFlags, (hip_stream * stream, unsigned flags),                            \
      "hipStreamCreateWithFlags")                                                                            \
    X(hip_error, hipStreamSynchronize, (hip_stream stream), "hipStreamSynchronize")                          \
    X(hip_error, hipStreamDestroy, (hip_stream stream), "hipStreamDestroy")                                  \
    X(hip_error, hipEventCreate, (hip_event * event), "hipEventCreate")                                      \
    X(hip_error, hipEventRecord, (hip_event event, hip_stream stream), "hipEventRecord")                     \
    X(hip_error, hipEventSynchronize, (hip_event event), "hipEventSynchronize")                              \
    X(hip_error, hipEventElapsedTime, (float *ms, hip_event start, hip_event stop), "hipEventElapsedTime")   \
    X(hip_error, hipEventDestroy, (hip_event event), "hipEventDestroy")                                      \
    X(hip_error, hipModuleLoadData, (hip_module * module, const void *image), "hipModuleLoadData")           \
    X(hip_error, hipModuleUnload, (hip_module module), "hipModuleUnload")                                    \
    X(hip_error, hipModuleGetFunction, (hip_function * f, hip_module module, const char *name),              \
      "hipModuleGetFunction")                                                                                \
    X(hip_error, hipModuleLaunchKernel,                                                                      \
      (hip_function f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,         \
       unsigned shared_bytes, hip_stream stream, void **kernel_params, void **extra),                        \
      "hipModuleLaunchKernel")

#endif
