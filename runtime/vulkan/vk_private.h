/*
 * vk_private.h — the Vulkan backend's shared state.
 *
 * Vulkan is loaded with dlopen (KCRT_VULKAN_LIBRARY or libvulkan.so.1) and
 * every entry point comes from vkGetInstanceProcAddr/vkGetDeviceProcAddr
 * into the tables below; the Vulkan headers give only types
 * (VK_NO_PROTOTYPES), so libkcrt has no link-time dependency on Vulkan.
 *
 * Files: vk_instance.c (the loader, the instance, the validation layer,
 * describing devices), vk_device.c (the logical device, feature and limit
 * checks, pipelines, the ops table), vk_exec.c (batches of dispatches,
 * descriptor sets, barriers, timing), vk_memory.c (buffers, staging).
 */
#ifndef KC_VK_PRIVATE_H
#define KC_VK_PRIVATE_H

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include "../rt_binary.h"
#include "../rt_private.h"

/* X(name): entry points, by where they are looked up. */
#define VK_GLOBAL_FNS(X)                                                                                     \
    X(vkCreateInstance)                                                                                      \
    X(vkEnumerateInstanceExtensionProperties)                                                                \
    X(vkEnumerateInstanceLayerProperties)

#define VK_INSTANCE_FNS(X)                                                                                   \
    X(vkDestroyInstance)                                                                                     \
    X(vkEnumeratePhysicalDevices)                                                                            \
    X(vkGetPhysicalDeviceProperties)                                                                         \
    X(vkGetPhysicalDeviceProperties2)                                                                        \
    X(vkGetPhysicalDeviceFeatures2)                                                                          \
    X(vkGetPhysicalDeviceQueueFamilyProperties)                                                              \
    X(vkGetPhysicalDeviceMemoryProperties)                                                                   \
    X(vkEnumerateDeviceExtensionProperties)                                                                  \
    X(vkCreateDevice)                                                                                        \
    X(vkGetDeviceProcAddr)

#define VK_DEVICE_FNS(X)                                                                                     \
    X(vkDestroyDevice)                                                                                       \
    X(vkGetDeviceQueue)                                                                                      \
    X(vkDeviceWaitIdle)                                                                                      \
    X(vkCreateBuffer)                                                                                        \
    X(vkDestroyBuffer)                                                                                       \
    X(vkCreateBufferView)                                                                                    \
    X(vkDestroyBufferView)                                                                                   \
    X(vkGetBufferMemoryRequirements)                                                                         \
    X(vkAllocateMemory)                                                                                      \
    X(vkFreeMemory)                                                                                          \
    X(vkBindBufferMemory)                                                                                    \
    X(vkMapMemory)                                                                                           \
    X(vkUnmapMemory)                                                                                         \
    X(vkCreateShaderModule)                                                                                  \
    X(vkDestroyShaderModule)                                                                                 \
    X(vkCreateDescriptorSetLayout)                                                                           \
    X(vkDestroyDescriptorSetLayout)                                                                          \
    X(vkCreatePipelineLayout)                                                                                \
    X(vkDestroyPipelineLayout)                                                                               \
    X(vkCreateComputePipelines)                                                                              \
    X(vkDestroyPipeline)                                                                                     \
    X(vkCreateDescriptorPool)                                                                                \
    X(vkDestroyDescriptorPool)                                                                               \
    X(vkResetDescriptorPool)                                                                                 \
    X(vkAllocateDescriptorSets)                                                                              \
    X(vkUpdateDescriptorSets)                                                                                \
    X(vkCreateCommandPool)                                                                                   \
    X(vkDestroyCommandPool)                                                                                  \
    X(vkAllocateCommandBuffers)                                                                              \
    X(vkFreeCommandBuffers)                                                                                  \
    X(vkResetCommandBuffer)                                                                                  \
    X(vkBeginCommandBuffer)                                                                                  \
    X(vkEndCommandBuffer)                                                                                    \
    X(vkCmdBindPipeline)                                                                                     \
    X(vkCmdBindDescriptorSets)                                                                               \
    X(vkCmdPushConstants)                                                                                    \
    X(vkCmdDispatch)                                                                                         \
    X(vkCmdPipelineBarrier)                                                                                  \
    X(vkCmdCopyBuffer)                                                                                       \
    X(vkCmdFillBuffer)                                                                                       \
    X(vkCmdResetQueryPool)                                                                                   \
    X(vkCmdWriteTimestamp)                                                                                   \
    X(vkCreateQueryPool)                                                                                     \
    X(vkDestroyQueryPool)                                                                                    \
    X(vkGetQueryPoolResults)                                                                                 \
    X(vkCreateFence)                                                                                         \
    X(vkDestroyFence)                                                                                        \
    X(vkResetFences)                                                                                         \
    X(vkWaitForFences)                                                                                       \
    X(vkGetFenceStatus)                                                                                      \
    X(vkQueueSubmit)

#define VK_DECLARE(name) PFN_##name name;

/* The loader and one instance. */
typedef struct vk_lib {
    void *so;
    PFN_vkGetInstanceProcAddr gipa;
    VK_GLOBAL_FNS(VK_DECLARE)
    VkInstance instance;
    uint32_t api; /* the instance's API version */
    VK_INSTANCE_FNS(VK_DECLARE)
    PFN_vkCreateDebugUtilsMessengerEXT vkCreateDebugUtilsMessengerEXT;
    PFN_vkDestroyDebugUtilsMessengerEXT vkDestroyDebugUtilsMessengerEXT;
    VkDebugUtilsMessengerEXT messenger;
    bool validation; /* the validation layer is on */
    bool debug;      /* KCRT_LOG=debug */
} vk_lib;

/* What kc needs to know of a physical device beyond kcrt_device_info. */
typedef struct vk_caps {
    VkPhysicalDeviceLimits limits;
    VkPhysicalDeviceMemoryProperties mem;
    uint32_t api;
    uint32_t queue_family; /* a family with compute (and, preferably, timestamps) */
    uint32_t subgroup_ops; /* VkSubgroupFeatureFlags in compute */
    bool float16, int64, storage16, float_atomics_buffer, float_atomics_shared;
    bool ext_float16_int8, ext_atomic_float, ext_portability_subset;
} vk_caps;

kcrt_status vk_lib_open(vk_lib *L, bool validation, char *err, size_t errlen);
void vk_lib_close(vk_lib *L);
/* Physical devices kc can use (Vulkan 1.1 or newer); *n of them. */
kcrt_status vk_physical_devices(vk_lib *L, VkPhysicalDevice *out, uint32_t max, uint32_t *n, char *err,
                                size_t errlen);
void vk_describe(vk_lib *L, VkPhysicalDevice pd, kcrt_device_info *info, vk_caps *caps);
const char *vk_result_name(VkResult r);
void vk_validation_reset(void);

/* ---- the device ------------------------------------------------------------------------------- */

typedef struct vk_mem {
    VkBuffer buf;
    VkDeviceMemory mem;
    void *map; /* host address when mapped, else NULL */
    VkDeviceSize size;
    VkBufferView views[RT_TEXEL_KINDS]; /* texel views of buf, made on first use (KC_TEXEL_READS) */
} vk_mem;

/* A buffer of the API. Its memory may be larger than asked for (a size
 * class, so that freed memory fits later buffers) and may be memory a freed
 * buffer held, still in use by queued work (last_serial says until when). */
typedef struct vk_buf {
    vk_mem m;
    size_t bytes;         /* as asked for */
    uint64_t last_serial; /* the last batch whose work uses its memory */
    bool wrapped;         /* the host's VkBuffer (kcrt_buffer_wrap): never destroyed here */
    bool zero_pending;    /* holds zeros for the API, not yet in memory: filled before its first use */
} vk_buf;

/* The memory of a freed buffer, kept for a later one of its size class. */
typedef struct vk_spare {
    vk_mem m;
    uint64_t serial; /* the last batch that uses it */
} vk_spare;

/* Descriptor set and pipeline layouts, shared by variants of one shape. */
typedef struct vk_layout {
    uint32_t nbindings, push_size;
    uint64_t texel[4]; /* bindings (of the first 256) that are uniform texel buffers */
    VkDescriptorSetLayout set;
    VkPipelineLayout pipe;
} vk_layout;

/* VK_SPEC_PARAMS: the KC_SPECIALIZE scalars a variant's pipelines are keyed
 * by (the language allows as many, KC_MAX_SPECIALIZE in dsl/kc_dsl.h);
 * VK_SPEC_PIPES: the specialised pipelines a variant may make. */
enum { VK_SPEC_PARAMS = 8, VK_SPEC_PIPES = 16 };

/* A pipeline made for one set of values of the kernel's KC_SPECIALIZE
 * scalars. */
typedef struct vk_spec_pipe {
    uint32_t values[VK_SPEC_PARAMS];
    VkPipeline pipe;
} vk_spec_pipe;

/* A variant on the device. A kernel without KC_SPECIALIZE scalars has one
 * pipeline, made with the module. One with them gets a pipeline per set of
 * values its launches pass, made on first use, up to VK_SPEC_PIPES (or
 * KCRT_SPECIALIZE); past that, launches share the generic pipeline,
 * which reads the scalars from the push constants like any other. */
typedef struct vk_module {
    VkPipeline pipe; /* the generic pipeline (VK_NULL_HANDLE until needed) */
    VkShaderModule shader; /* kept while specialised pipelines may be made from it */
    int nspec;             /* KC_SPECIALIZE scalars (0: none, or specialisation is off) */
    uint32_t spec_id[VK_SPEC_PARAMS], spec_offset[VK_SPEC_PARAMS]; /* SpecId, byte offset in the args */
    vk_spec_pipe spec[VK_SPEC_PIPES];
    int nspec_pipes;
    const vk_layout *layout;
    int nparams;
    rt_slot *slots;    /* a copy of the variant's */
    uint32_t nbuffers; /* bindings of buffer parameters */
    rt_texel *texel;   /* per binding: read as a uniform texel buffer (NULL: none is) */
    bool spilled;
    uint32_t args_size;
    char *entry;    /* the entry point: the kernel's name */
    char name[128]; /* kernel[variant], for messages */
} vk_module;

enum { VK_MEMO = 64, VK_MEMO_BINDINGS = 32, VK_BATCHES = 3, VK_HAZARDS = 64 };

/* A descriptor set the batch made, to reuse for the same buffers. */
typedef struct vk_memo {
    bool used;
    VkDescriptorSetLayout layout;
    uint32_t n;
    VkBuffer bufs[VK_MEMO_BINDINGS];
    VkDescriptorSet set;
} vk_memo;

/* Host-visible memory a batch hands out in pieces, all taken back when
 * the batch is recycled; chunks are kept for the next time. */
typedef struct vk_arena {
    vk_mem *chunks;
    int nchunks, cur;
    VkDeviceSize used;  /* of chunks[cur] */
    VkDeviceSize given; /* bytes handed out since the batch began */
} vk_arena;

/* One command buffer of launches, recorded until it is submitted, then
 * in flight until its fence is waited for; its descriptor pools, memo and
 * argument memory are recycled with it. */
typedef struct vk_batch {
    enum { VK_FREE, VK_RECORDING, VK_SUBMITTED } state;
    VkCommandBuffer cmd;
    VkFence fence;
    uint64_t serial;
    uint32_t dispatches;
    VkDescriptorPool *pools;
    int npools, cur_pool;
    vk_memo memo[VK_MEMO];
    vk_arena args;    /* spilled scalars */
    vk_arena uploads; /* the host's writes, copied in the batch */
    VkBuffer written[VK_HAZARDS], read[VK_HAZARDS]; /* since the last barrier */
    int nwritten, nread;
    VkPipeline bound;
} vk_batch;

typedef struct vk_dev {
    kcrt_context *ctx;
    vk_lib lib;
    VkPhysicalDevice pd;
    vk_caps caps;
    VkDevice dev;
    VK_DEVICE_FNS(VK_DECLARE)
    VkQueue queue;
    VkCommandPool cmd_pool;
    vk_layout layouts[32];
    int nlayouts;
    vk_batch batches[VK_BATCHES];
    int recording;   /* the batch being recorded, or -1 */
    uint64_t serial; /* of the newest batch */
    VkCommandBuffer xfer_cmd;
    VkFence xfer_fence;
    vk_mem staging;
    vk_spare *spares; /* oldest first */
    int nspares, spares_cap;
    VkDeviceSize spare_max; /* bytes the spares may hold */
    VkQueryPool queries;
    uint32_t nqueries;
    bool unified; /* buffers live in host-visible device memory */
    int index;    /* among the loader's physical devices (kcrt_buffer_native) */
    bool lost;    /* the device was lost: everything fails */
    int spec_pipes; /* pipelines a variant may specialise to KC_SPECIALIZE values (KCRT_SPECIALIZE) */
    kcrt_stats stats;
} vk_dev;

/* vk_device.c */
kcrt_status vk_check(vk_dev *d, VkResult r, const char *call);
/* The pipeline that runs launch l of module m (KC_SPECIALIZE: made now
 * when its values are new). */
kcrt_status vk_pipeline_for(vk_dev *d, vk_module *m, const rt_launch_desc *l, VkPipeline *out);
int vk_memory_type(const vk_dev *d, uint32_t bits, VkMemoryPropertyFlags need, VkMemoryPropertyFlags want);

/* vk_memory.c */
kcrt_status vk_mem_create(vk_dev *d, VkDeviceSize size, VkBufferUsageFlags usage, bool host, vk_mem *m);
/* m's view as texels of kind t, made once and kept until m is freed. */
kcrt_status vk_texel_view(vk_dev *d, vk_mem *m, rt_texel t, VkBufferView *out);
void vk_mem_free(vk_dev *d, vk_mem *m);
kcrt_status vk_buffer_create(void *dev, size_t bytes, void **buf);
kcrt_status vk_buffer_wrap(void *dev, void *native, size_t bytes, void **buf);
void vk_buffer_free(void *dev, void *buf);
kcrt_status vk_buffer_write(void *dev, void *buf, size_t offset, const void *src, size_t bytes);
kcrt_status vk_buffer_read(void *dev, void *buf, size_t offset, void *dst, size_t bytes);
kcrt_status vk_buffer_copy(void *dev, void *dst, size_t dst_offset, void *src, size_t src_offset, size_t bytes);
kcrt_status vk_buffer_native(void *dev, void *buf, void **native, int *device);
void vk_spares_free(vk_dev *d);
/* Into batch b (being recorded): the zeros a new buffer holds, before its
 * first use there, and a barrier that makes later commands see them. */
void vk_zero_in_batch(vk_dev *d, vk_batch *b, vk_buf *vb);

/* vk_exec.c */
kcrt_status vk_launch(void *dev, void *module, const rt_launch_desc *l);
kcrt_status vk_finish(void *dev);
kcrt_status vk_time(void *dev, void *module, const rt_launch_desc *l, int repeats, void *flush, size_t flush_bytes,
                    double *ns_each);
/* Waits until the work of batch `serial` (and every earlier one) is done,
 * submitting it first if it is still being recorded. */
kcrt_status vk_wait_serial(vk_dev *d, uint64_t serial);
/* The newest batch whose work, and every earlier batch's, is done; without
 * waiting (batches found done are recycled). */
uint64_t vk_completed(vk_dev *d);
/* `size` bytes at *offset in *chunk, aligned to `align`, from a's
 * chunks (made with `usage`, at least 64 KiB). */
kcrt_status vk_arena_space(vk_dev *d, vk_arena *a, VkDeviceSize size, VkDeviceSize align, VkBufferUsageFlags usage,
                           vk_mem **chunk, VkDeviceSize *offset);
/* The batch being recorded, or a free one begun now. */
kcrt_status vk_recording(vk_dev *d, vk_batch **out);
void vk_batches_free(vk_dev *d);

#endif
