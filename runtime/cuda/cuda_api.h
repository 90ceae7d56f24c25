/*
 * cuda_api.h — the part of the CUDA driver API that libkcrt calls,
 * declared here so that libkcrt builds without the CUDA toolkit (the
 * driver, libcuda.so.1, is dlopen'ed; see cuda_private.h).
 *
 * Source of every declaration: the CUDA Driver API reference
 * (docs.nvidia.com/cuda/cuda-driver-api: Error Handling, Initialization,
 * Version Management, Device Management, Primary Context Management,
 * Context Management, Module Management, Memory Management, Stream
 * Management, Event Management, Execution Control) and its header cuda.h.
 * Types get kc's `cu_` names; constants keep the API's spelling with a K
 * in front, so that the reference is easy to find and cuda.h can be
 * included beside this file.
 *
 * Symbols: cuda.h maps several calls to versioned symbols (cuMemAlloc is
 * cuMemAlloc_v2 since CUDA 3.2, cuEventElapsedTime is _v2 since 12.8);
 * the table below names the symbols to look up, newest first. The test
 * tests/runtime/test_rt_cuda_decls.c, built only where cuda.h is
 * installed, checks every constant, every signature and every first
 * symbol here against cuda.h (with KCU_TYPES_FROM_CUDA_H, this file takes
 * cuda.h's types so that the compiler compares the signatures).
 */
#ifndef KC_CUDA_API_H
#define KC_CUDA_API_H

#include <stddef.h>

#ifdef KCU_TYPES_FROM_CUDA_H /* only in the test against cuda.h */
typedef CUresult cu_result;
typedef CUdevice cu_device;
typedef CUdeviceptr cu_deviceptr;
typedef CUcontext cu_context;
typedef CUmodule cu_module;
typedef CUfunction cu_function;
typedef CUstream cu_stream;
typedef CUevent cu_event;
typedef CUdevice_attribute cu_attribute;
typedef CUfunction_attribute cu_func_attribute;
typedef CUjit_option cu_jit_option;
#else
typedef int cu_result;                   /* CUresult: an enum of int size */
typedef int cu_device;                   /* CUdevice: an ordinal-like int handle */
typedef unsigned long long cu_deviceptr; /* CUdeviceptr: 64 bits on every 64-bit platform */
typedef struct cu_context_s *cu_context; /* CUcontext, CUmodule, …: pointers to opaque structs */
typedef struct cu_module_s *cu_module;
typedef struct cu_function_s *cu_function;
typedef struct cu_stream_s *cu_stream;
typedef struct cu_event_s *cu_event;
typedef int cu_attribute;      /* CUdevice_attribute */
typedef int cu_func_attribute; /* CUfunction_attribute */
typedef int cu_jit_option;     /* CUjit_option (passed as an array: int-sized) */
#endif

/* X(name, value): the constants libkcrt uses, each `K` + name here. */
#define CU_CONSTANTS(X)                                                                                      \
    X(CUDA_SUCCESS, 0)                                                                                       \
    X(CUDA_ERROR_OUT_OF_MEMORY, 2)                                                                           \
    X(CUDA_ERROR_NOT_INITIALIZED, 3)                                                                         \
    X(CUDA_ERROR_STUB_LIBRARY, 34)                                                                           \
    X(CUDA_ERROR_NO_DEVICE, 100)                                                                             \
    X(CUDA_ERROR_INVALID_DEVICE, 101)                                                                        \
    X(CUDA_ERROR_INVALID_IMAGE, 200)                                                                         \
    X(CUDA_ERROR_NO_BINARY_FOR_GPU, 209)                                                                     \
    X(CUDA_ERROR_INVALID_PTX, 218)                                                                           \
    X(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, 222)                                                               \
    X(CUDA_ERROR_NOT_FOUND, 500)                                                                             \
    X(CUDA_ERROR_ILLEGAL_ADDRESS, 700)                                                                       \
    X(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 701)                                                               \
    X(CUDA_ERROR_ASSERT, 710)                                                                                \
    X(CUDA_ERROR_HARDWARE_STACK_ERROR, 714)                                                                  \
    X(CUDA_ERROR_ILLEGAL_INSTRUCTION, 715)                                                                   \
    X(CUDA_ERROR_MISALIGNED_ADDRESS, 716)                                                                    \
    X(CUDA_ERROR_INVALID_ADDRESS_SPACE, 717)                                                                 \
    X(CUDA_ERROR_INVALID_PC, 718)                                                                            \
    X(CUDA_ERROR_LAUNCH_FAILED, 719)                                                                         \
    X(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, 803)                                                                \
    X(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, 804)                                                        \
    X(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1)                                                          \
    X(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, 2)                                                                \
    X(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, 3)                                                                \
    X(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, 4)                                                                \
    X(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, 5)                                                                 \
    X(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, 6)                                                                 \
    X(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, 7)                                                                 \
    X(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 8)                                                    \
    X(CU_DEVICE_ATTRIBUTE_WARP_SIZE, 10)                                                                     \
    X(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 16)                                                          \
    X(CU_DEVICE_ATTRIBUTE_INTEGRATED, 18)                                                                    \
    X(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 75)                                                      \
    X(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 76)                                                      \
    X(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0)                                                            \
    X(CU_FUNC_ATTRIBUTE_NUM_REGS, 4)                                                                         \
    X(CU_JIT_INFO_LOG_BUFFER, 3)                                                                             \
    X(CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, 4)                                                                  \
    X(CU_JIT_ERROR_LOG_BUFFER, 5)                                                                            \
    X(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, 6)                                                                 \
    X(CU_STREAM_NON_BLOCKING, 0x1)                                                                           \
    X(CU_EVENT_DEFAULT, 0x0)

#define KCU_CONSTANT(name, value) K##name = value,
enum { CU_CONSTANTS(KCU_CONSTANT) };
#undef KCU_CONSTANT

/* X(return type, name in the API, parameters, symbols to look up, newest
 * first; the first is what cuda.h's name expands to). */
#define CU_FNS(X)                                                                                            \
    X(cu_result, cuInit, (unsigned flags), "cuInit")                                                         \
    X(cu_result, cuGetErrorName, (cu_result e, const char **name), "cuGetErrorName")                         \
    X(cu_result, cuGetErrorString, (cu_result e, const char **text), "cuGetErrorString")                     \
    X(cu_result, cuDriverGetVersion, (int *version), "cuDriverGetVersion")                                   \
    X(cu_result, cuDeviceGetCount, (int *count), "cuDeviceGetCount")                                         \
    X(cu_result, cuDeviceGet, (cu_device * device, int ordinal), "cuDeviceGet")                              \
    X(cu_result, cuDeviceGetName, (char *name, int len, cu_device dev), "cuDeviceGetName")                   \
    X(cu_result, cuDeviceGetAttribute, (int *value, cu_attribute attr, cu_device dev),                       \
      "cuDeviceGetAttribute")                                                                                \
    X(cu_result, cuDeviceTotalMem, (size_t * bytes, cu_device dev), "cuDeviceTotalMem_v2")                   \
    X(cu_result, cuDeviceGetPCIBusId, (char *bus_id, int len, cu_device dev), "cuDeviceGetPCIBusId")         \
    X(cu_result, cuDevicePrimaryCtxRetain, (cu_context * ctx, cu_device dev), "cuDevicePrimaryCtxRetain")    \
    X(cu_result, cuDevicePrimaryCtxRelease, (cu_device dev), "cuDevicePrimaryCtxRelease_v2",                 \
      "cuDevicePrimaryCtxRelease")                                                                           \
    X(cu_result, cuCtxPushCurrent, (cu_context ctx), "cuCtxPushCurrent_v2")                                  \
    X(cu_result, cuCtxPopCurrent, (cu_context * ctx), "cuCtxPopCurrent_v2")                                  \
    X(cu_result, cuModuleLoadDataEx,                                                                         \
      (cu_module * module, const void *image, unsigned n, cu_jit_option *options, void **values),            \
      "cuModuleLoadDataEx")                                                                                  \
    X(cu_result, cuModuleUnload, (cu_module module), "cuModuleUnload")                                       \
    X(cu_result, cuModuleGetFunction, (cu_function * f, cu_module module, const char *name),                 \
      "cuModuleGetFunction")                                                                                 \
    X(cu_result, cuFuncGetAttribute, (int *value, cu_func_attribute attr, cu_function f),                    \
      "cuFuncGetAttribute")                                                                                  \
    X(cu_result, cuLaunchKernel,                                                                             \
      (cu_function f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,          \
       unsigned shared_bytes, cu_stream stream, void **kernel_params, void **extra),                         \
      "cuLaunchKernel")                                                                                      \
    X(cu_result, cuMemAlloc, (cu_deviceptr * ptr, size_t bytes), "cuMemAlloc_v2")                            \
    X(cu_result, cuMemFree, (cu_deviceptr ptr), "cuMemFree_v2")                                              \
    X(cu_result, cuMemcpyHtoDAsync, (cu_deviceptr dst, const void *src, size_t bytes, cu_stream stream),     \
      "cuMemcpyHtoDAsync_v2")                                                                                \
    X(cu_result, cuMemcpyDtoHAsync, (void *dst, cu_deviceptr src, size_t bytes, cu_stream stream),           \
      "cuMemcpyDtoHAsync_v2")                                                                                \
    X(cu_result, cuMemcpyDtoDAsync, (cu_deviceptr dst, cu_deviceptr src, size_t bytes, cu_stream stream),    \
      "cuMemcpyDtoDAsync_v2")                                                                                \
    X(cu_result, cuMemsetD8Async, (cu_deviceptr dst, unsigned char value, size_t n, cu_stream stream),       \
      "cuMemsetD8Async")                                                                                     \
    X(cu_result, cuStreamCreate, (cu_stream * stream, unsigned flags), "cuStreamCreate")                     \
    X(cu_result, cuStreamSynchronize, (cu_stream stream), "cuStreamSynchronize")                             \
    X(cu_result, cuStreamDestroy, (cu_stream stream), "cuStreamDestroy_v2")                                  \
    X(cu_result, cuEventCreate, (cu_event * event, unsigned flags), "cuEventCreate")                         \
    X(cu_result, cuEventRecord, (cu_event event, cu_stream stream), "cuEventRecord")                         \
    X(cu_result, cuEventSynchronize, (cu_event event), "cuEventSynchronize")                                 \
    X(cu_result, cuEventElapsedTime, (float *ms, cu_event start, cu_event end), "cuEventElapsedTime_v2",     \
      "cuEventElapsedTime")                                                                                  \
    X(cu_result, cuEventDestroy, (cu_event event), "cuEventDestroy_v2")

#endif
