/*
 * vk_device.c — the Vulkan backend's device: creation with the optional
 * features kc's variants use (enabled whenever the device has them: the
 * device is made before any bundle is seen), the check of a variant against
 * the device's features and limits, pipelines, and the ops table.
 *
 * Pipelines are made once per variant and context (the common layer keeps
 * the module in the variant); descriptor set and pipeline layouts are
 * shared by every variant with the same bindings and push-constant size.
 */
#include "vk_private.h"

#include "rt_binary.h"

#include <stdlib.h>
#include <string.h>

kcrt_status vk_check(vk_dev *d, VkResult r, const char *call)
{
    if (r == VK_SUCCESS)
        return KCRT_OK;
    if (r == VK_ERROR_DEVICE_LOST)
        d->lost = true;
    kcrt_status s = r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY
                        ? KCRT_ERROR_OUT_OF_MEMORY
                        : KCRT_ERROR_DEVICE_ERROR;
    return rt_fail(d->ctx, s, "%s failed: %s", call, vk_result_name(r));
}

int vk_memory_type(const vk_dev *d, uint32_t bits, VkMemoryPropertyFlags need, VkMemoryPropertyFlags want)
{
    int best = -1;
    for (uint32_t i = 0; i < d->caps.mem.memoryTypeCount; i++) {
        VkMemoryPropertyFlags f = d->caps.mem.memoryTypes[i].propertyFlags;
        if (!(bits >> i & 1) || (f & need) != need)
            continue;
        if (best < 0 || ((f & want) == want && (d->caps.mem.memoryTypes[best].propertyFlags & want) != want))
            best = (int)i;
    }
    return best;
}

/* ---- enumeration ---------------------------------------------------------------------------- */

static kcrt_status devices(kcrt_device_info *out, int max, int *count, char *err, size_t errlen)
{
    vk_lib L;
    kcrt_status s = vk_lib_open(&L, false, err, errlen);
    if (s != KCRT_OK)
        return s;
    VkPhysicalDevice pds[64];
    uint32_t n = 0;
    s = vk_physical_devices(&L, pds, 64, &n, err, errlen);
    for (uint32_t i = 0; s == KCRT_OK && out && i < n && i < 64 && (int)i < max; i++) {
        vk_caps caps;
        vk_describe(&L, pds[i], &out[i], &caps);
    }
    *count = s == KCRT_OK ? (int)(n < 64 ? n : 64) : 0;
    vk_lib_close(&L);
    return s;
}

/* ---- the logical device ------------------------------------------------------------------------ */

static void load_device_fns(vk_dev *d)
{
#define X(name) d->name = (PFN_##name)d->lib.vkGetDeviceProcAddr(d->dev, #name);
    VK_DEVICE_FNS(X)
#undef X
}

static bool device_fns_complete(vk_dev *d, const char **missing)
{
#define X(name)                                                                                              \
    if (!d->name) {                                                                                          \
        *missing = #name;                                                                                    \
        return false;                                                                                        \
    }
    VK_DEVICE_FNS(X)
#undef X
    return true;
}

/* Enables every optional feature kc's variants may need that the device has. */
static kcrt_status create_device(vk_dev *d)
{
    vk_caps *c = &d->caps;
    const char *exts[4];
    uint32_t nexts = 0;
    if (c->ext_float16_int8)
        exts[nexts++] = "VK_KHR_shader_float16_int8";
    if (c->ext_atomic_float)
        exts[nexts++] = "VK_EXT_shader_atomic_float";
    if (c->ext_portability_subset)
        exts[nexts++] = "VK_KHR_portability_subset";
    VkPhysicalDeviceShaderAtomicFloatFeaturesEXT af = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT,
        .shaderBufferFloat32AtomicAdd = c->float_atomics_buffer,
        .shaderSharedFloat32AtomicAdd = c->float_atomics_shared};
    VkPhysicalDeviceShaderFloat16Int8Features f16 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES,
        .pNext = c->ext_atomic_float ? &af : NULL,
        .shaderFloat16 = c->float16};
    VkPhysicalDevice16BitStorageFeatures s16 = {.sType =
                                                    VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
                                                .storageBuffer16BitAccess = c->storage16};
    bool has_f16 = c->ext_float16_int8 || c->api >= VK_API_VERSION_1_2;
    s16.pNext = has_f16 ? (void *)&f16 : c->ext_atomic_float ? (void *)&af : NULL;
    VkPhysicalDeviceFeatures2 f = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &s16};
    f.features.shaderInt64 = c->int64;
    float prio = 1.0f;
    VkDeviceQueueCreateInfo q = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                 .queueFamilyIndex = c->queue_family,
                                 .queueCount = 1,
                                 .pQueuePriorities = &prio};
    VkDeviceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                             .pNext = &f,
                             .queueCreateInfoCount = 1,
                             .pQueueCreateInfos = &q,
                             .enabledExtensionCount = nexts,
                             .ppEnabledExtensionNames = exts};
    kcrt_status s = vk_check(d, d->lib.vkCreateDevice(d->pd, &ci, NULL, &d->dev), "vkCreateDevice");
    if (s != KCRT_OK)
        return s;
    load_device_fns(d);
    const char *missing;
    if (!device_fns_complete(d, &missing))
        return rt_fail(d->ctx, KCRT_ERROR_NO_BACKEND, "the Vulkan driver lacks %s", missing);
    d->vkGetDeviceQueue(d->dev, c->queue_family, 0, &d->queue);
    return KCRT_OK;
}

static kcrt_status create_pools(vk_dev *d)
{
    VkCommandPoolCreateInfo pi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                  .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                  .queueFamilyIndex = d->caps.queue_family};
    kcrt_status s =
        vk_check(d, d->vkCreateCommandPool(d->dev, &pi, NULL, &d->cmd_pool), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = d->cmd_pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    for (int i = 0; s == KCRT_OK && i < VK_BATCHES; i++) {
        s = vk_check(d, d->vkAllocateCommandBuffers(d->dev, &ai, &d->batches[i].cmd),
                     "vkAllocateCommandBuffers");
        if (s == KCRT_OK)
            s = vk_check(d, d->vkCreateFence(d->dev, &fi, NULL, &d->batches[i].fence), "vkCreateFence");
        d->stats.command_buffers_allocated++;
    }
    if (s == KCRT_OK)
        s = vk_check(d, d->vkAllocateCommandBuffers(d->dev, &ai, &d->xfer_cmd), "vkAllocateCommandBuffers");
    if (s == KCRT_OK)
        s = vk_check(d, d->vkCreateFence(d->dev, &fi, NULL, &d->xfer_fence), "vkCreateFence");
    d->stats.command_buffers_allocated++;
    return s;
}

static void close_device(void *dev);

static bool env_on(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

/* KCRT_SPECIALIZE: how many pipelines specialised to KC_SPECIALIZE values a
 * variant may make (0: none; unset: VK_SPEC_PIPES). A test sets 2 to check
 * both kinds of pipeline without a compile per size it runs. */
static kcrt_status spec_pipes_from_env(kcrt_context *ctx, int *out)
{
    const char *v = getenv("KCRT_SPECIALIZE");
    *out = VK_SPEC_PIPES;
    if (!v || !*v)
        return KCRT_OK;
    char *end;
    long n = strtol(v, &end, 10);
    if (*end || n < 0)
        return rt_fail(ctx, KCRT_ERROR_BAD_ARGUMENT,
                       "KCRT_SPECIALIZE='%s': give the specialised pipelines a variant may make, 0 (none) to %d", v,
                       VK_SPEC_PIPES);
    *out = n < VK_SPEC_PIPES ? (int)n : VK_SPEC_PIPES;
    return KCRT_OK;
}

static kcrt_status open_device(kcrt_context *ctx, int index, void **out)
{
    int spec_pipes;
    kcrt_status s = spec_pipes_from_env(ctx, &spec_pipes);
    if (s != KCRT_OK)
        return s;
    vk_dev *d = calloc(1, sizeof(*d));
    if (!d)
        return rt_fail(ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    d->ctx = ctx;
    d->spec_pipes = spec_pipes;
    d->recording = -1;
    d->index = index;
    char err[RT_MSG];
    s = vk_lib_open(&d->lib, env_on("KCRT_VALIDATION"), err, sizeof(err));
    if (s != KCRT_OK) {
        free(d);
        return rt_fail(ctx, s, "%s", err);
    }
    VkPhysicalDevice pds[64];
    uint32_t n = 0;
    s = vk_physical_devices(&d->lib, pds, 64, &n, err, sizeof(err));
    if (s == KCRT_OK && (uint32_t)index >= n)
        s = KCRT_ERROR_NO_DEVICE, rt_printf(err, sizeof(err), "vulkan device %d is gone", index);
    if (s != KCRT_OK) {
        close_device(d);
        return rt_fail(ctx, s, "%s", err);
    }
    d->pd = pds[index];
    vk_describe(&d->lib, d->pd, &ctx->info, &d->caps);
    if (d->caps.queue_family == UINT32_MAX) {
        close_device(d);
        return rt_fail(ctx, KCRT_ERROR_NO_DEVICE, "vulkan device '%s' has no compute queue", ctx->info.name);
    }
    d->unified = ctx->info.unified_memory && !env_on("KCRT_VULKAN_STAGING");
    if ((s = create_device(d)) != KCRT_OK || (s = create_pools(d)) != KCRT_OK) {
        close_device(d);
        return s;
    }
    rt_log(ctx, "vulkan: '%s' (%s), driver %s, Vulkan %u.%u, %s memory%s, subgroup %u, key '%s', family '%s'",
           ctx->info.name, ctx->info.type_name, ctx->info.driver, VK_API_VERSION_MAJOR(d->caps.api),
           VK_API_VERSION_MINOR(d->caps.api), d->unified ? "unified" : "staged",
           d->lib.validation ? ", validation layer on" : "", ctx->info.subgroup_size, ctx->info.key,
           ctx->info.family);
    *out = d;
    return KCRT_OK;
}

static void close_device(void *dev)
{
    vk_dev *d = dev;
    if (d->dev) {
        d->vkDeviceWaitIdle(d->dev);
        vk_spares_free(d);
        vk_batches_free(d);
        vk_mem_free(d, &d->staging);
        if (d->queries)
            d->vkDestroyQueryPool(d->dev, d->queries, NULL);
        if (d->xfer_fence)
            d->vkDestroyFence(d->dev, d->xfer_fence, NULL);
        for (int i = 0; i < d->nlayouts; i++) {
            d->vkDestroyPipelineLayout(d->dev, d->layouts[i].pipe, NULL);
            d->vkDestroyDescriptorSetLayout(d->dev, d->layouts[i].set, NULL);
        }
        if (d->cmd_pool)
            d->vkDestroyCommandPool(d->dev, d->cmd_pool, NULL);
        d->vkDestroyDevice(d->dev, NULL);
    }
    vk_lib_close(&d->lib);
    free(d);
}

/* ---- variants against the device ---------------------------------------------------------------- */

static int loads(void *dev, const char *target)
{
    (void)dev;
    return strcmp(target, "spirv") == 0;
}

/* The newest SPIR-V 1.x a Vulkan version must accept. */
static uint32_t spirv_minor_for(uint32_t api)
{
    return api >= VK_API_VERSION_1_3 ? 6 : api >= VK_API_VERSION_1_2 ? 5 : api >= VK_API_VERSION_1_1 ? 3 : 0;
}

/* Does the device lack shaderInt64 for a module that uses 64-bit integers
 * only as kc's views (rt_binary.h)? Then it runs the narrowed module. */
static bool narrows_views(const vk_dev *d, const rt_module_desc *m)
{
    return !d->caps.int64 && (m->features & RT_F_INT64) && rt_spirv_has_views(m->binary, m->size);
}

static bool check_features(const vk_dev *d, const rt_module_desc *m, char *why, size_t len)
{
    const vk_caps *c = &d->caps;
    unsigned f = m->features;
    if (narrows_views(d, m))
        f &= ~(unsigned)RT_F_INT64;
    const struct {
        unsigned bit;
        bool have;
        const char *what;
    } need[] = {
        {RT_F_FLOAT16, c->float16, "16-bit float arithmetic (shaderFloat16)"},
        {RT_F_INT64, c->int64, "64-bit integers (shaderInt64)"},
        {RT_F_STORAGE16, c->storage16, "16-bit storage buffers (storageBuffer16BitAccess)"},
        {RT_F_SUBGROUPS, (c->subgroup_ops & VK_SUBGROUP_FEATURE_BASIC_BIT) != 0,
         "subgroup operations in compute shaders"},
        {RT_F_SG_ARITH, (c->subgroup_ops & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) != 0, "subgroup arithmetic"},
        {RT_F_SG_SHUFFLE, (c->subgroup_ops & VK_SUBGROUP_FEATURE_SHUFFLE_BIT) != 0, "subgroup shuffles"},
        {RT_F_SG_BALLOT, (c->subgroup_ops & VK_SUBGROUP_FEATURE_BALLOT_BIT) != 0, "subgroup ballots"},
        {RT_F_FLOAT_ATOMICS, c->float_atomics_buffer, "float atomic add (VK_EXT_shader_atomic_float)"},
    };
    for (size_t i = 0; i < RT_COUNT(need); i++)
        if ((f & need[i].bit) && !need[i].have)
            return rt_printf(why, len, "it needs %s, which the device does not offer", need[i].what), false;
    return true;
}

static bool check_limits(const vk_dev *d, const rt_module_desc *m, char *why, size_t len)
{
    const kcrt_device_info *i = &d->ctx->info;
    if (!rt_fits_device(i, m, why, len))
        return false;
    if ((uint32_t)m->nbindings > i->max_storage_buffers)
        return rt_printf(why, len, "it binds %d storage buffers, more than the device's %u per stage",
                         m->nbindings, i->max_storage_buffers),
               false;
    if (!m->spilled && m->args_size > i->max_push_bytes)
        return rt_printf(why, len,
                         "its %u bytes of scalar arguments exceed the device's %u bytes of push constants, "
                         "and the compiler did not spill them to a buffer (it spills past 128 bytes)",
                         m->args_size, i->max_push_bytes),
               false;
    return true;
}

static bool check(void *dev, const rt_module_desc *m, char *why, size_t len)
{
    const vk_dev *d = dev;
    if (strcmp(m->target, "spirv") != 0)
        return rt_printf(why, len, "its target is %s, not spirv", m->target), false;
    if (m->spirv_minor > spirv_minor_for(d->caps.api))
        return rt_printf(why, len, "it is SPIR-V 1.%u, newer than Vulkan %u.%u accepts", m->spirv_minor,
                         VK_API_VERSION_MAJOR(d->caps.api), VK_API_VERSION_MINOR(d->caps.api)),
               false;
    return check_features(d, m, why, len) && check_limits(d, m, why, len);
}

/* ---- pipelines ----------------------------------------------------------------------------------------- */

static bool is_texel(const uint64_t mask[4], uint32_t b)
{
    return b < 256 && (mask[b / 64] >> (b % 64) & 1);
}

/* A layout per number of bindings, push-constant bytes and which bindings
 * are uniform texel buffers (texel: NULL where none is). */
static kcrt_status get_layout(vk_dev *d, uint32_t nbindings, uint32_t push, const rt_texel *texel,
                              const vk_layout **out)
{
    uint64_t mask[4] = {0};
    for (uint32_t b = 0; texel && b < nbindings && b < 256; b++)
        if (texel[b] != RT_TEXEL_NONE)
            mask[b / 64] |= 1ull << (b % 64);
    for (int i = 0; i < d->nlayouts; i++)
        if (d->layouts[i].nbindings == nbindings && d->layouts[i].push_size == push &&
            memcmp(d->layouts[i].texel, mask, sizeof(mask)) == 0) {
            *out = &d->layouts[i];
            return KCRT_OK;
        }
    if (d->nlayouts == (int)RT_COUNT(d->layouts))
        return rt_fail(d->ctx, KCRT_ERROR_OUT_OF_MEMORY, "too many different pipeline layouts (%d)",
                       d->nlayouts);
    vk_layout *l = &d->layouts[d->nlayouts];
    VkDescriptorSetLayoutBinding b[256];
    for (uint32_t i = 0; i < nbindings && i < 256; i++)
        b[i] = (VkDescriptorSetLayoutBinding){.binding = i,
                                              .descriptorType = is_texel(mask, i)
                                                                    ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER
                                                                    : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                              .descriptorCount = 1,
                                              .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
    VkDescriptorSetLayoutCreateInfo si = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                          .bindingCount = nbindings,
                                          .pBindings = b};
    kcrt_status s = vk_check(d, d->vkCreateDescriptorSetLayout(d->dev, &si, NULL, &l->set),
                             "vkCreateDescriptorSetLayout");
    if (s != KCRT_OK)
        return s;
    VkPushConstantRange range = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = push};
    VkPipelineLayoutCreateInfo pi = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                     .setLayoutCount = 1,
                                     .pSetLayouts = &l->set,
                                     .pushConstantRangeCount = push ? 1 : 0,
                                     .pPushConstantRanges = &range};
    s = vk_check(d, d->vkCreatePipelineLayout(d->dev, &pi, NULL, &l->pipe), "vkCreatePipelineLayout");
    if (s != KCRT_OK) {
        d->vkDestroyDescriptorSetLayout(d->dev, l->set, NULL);
        return s;
    }
    l->nbindings = nbindings;
    l->push_size = push;
    memcpy(l->texel, mask, sizeof(mask));
    d->nlayouts++;
    *out = l;
    return KCRT_OK;
}

static kcrt_status create_shader(vk_dev *d, const rt_module_desc *m, vk_module *mod)
{
    VkShaderModuleCreateInfo si = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = m->size};
    uint32_t *words; /* aligned, as pCode must be */
    if (narrows_views(d, m)) {
        words = rt_spirv_narrow_views(m->binary, m->size, &si.codeSize);
        rt_log(d->ctx, "%s: its 64-bit views narrowed to uint2/uint4 (the device has no shaderInt64)", mod->name);
    } else if ((words = malloc(m->size)) != NULL) {
        memcpy(words, m->binary, m->size);
    }
    if (!words)
        return rt_fail(d->ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    si.pCode = words;
    kcrt_status s = vk_check(d, d->vkCreateShaderModule(d->dev, &si, NULL, &mod->shader), "vkCreateShaderModule");
    free(words);
    return s;
}

/* A pipeline of mod's shader, specialised to values (one per KC_SPECIALIZE
 * scalar) or, with values NULL, the generic one. */
static kcrt_status create_pipeline(vk_dev *d, const vk_module *mod, const uint32_t *values, VkPipeline *out)
{
    VkSpecializationMapEntry map[VK_SPEC_PARAMS];
    for (int i = 0; i < mod->nspec; i++)
        map[i] = (VkSpecializationMapEntry){.constantID = mod->spec_id[i], .offset = (uint32_t)i * 4, .size = 4};
    VkSpecializationInfo spec = {.mapEntryCount = (uint32_t)mod->nspec,
                                 .pMapEntries = map,
                                 .dataSize = (size_t)mod->nspec * 4,
                                 .pData = values};
    VkComputePipelineCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
                                      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                                                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                                                .module = mod->shader,
                                                .pName = mod->entry,
                                                .pSpecializationInfo = values ? &spec : NULL},
                                      .layout = mod->layout->pipe};
    kcrt_status s = vk_check(d, d->vkCreateComputePipelines(d->dev, VK_NULL_HANDLE, 1, &ci, NULL, out),
                             "vkCreateComputePipelines");
    if (s == KCRT_OK)
        d->stats.pipelines_created++;
    return s;
}

kcrt_status vk_pipeline_for(vk_dev *d, vk_module *m, const rt_launch_desc *l, VkPipeline *out)
{
    uint32_t values[VK_SPEC_PARAMS] = {0};
    for (int i = 0; i < m->nspec; i++)
        if (m->spec_offset[i] + 4 <= l->args_size)
            memcpy(&values[i], (const unsigned char *)l->args + m->spec_offset[i], 4);
    for (int i = 0; i < m->nspec_pipes; i++)
        if (!memcmp(m->spec[i].values, values, sizeof(values))) {
            *out = m->spec[i].pipe;
            return KCRT_OK;
        }
    kcrt_status s = KCRT_OK;
    if (m->nspec && m->nspec_pipes < d->spec_pipes) {
        vk_spec_pipe *p = &m->spec[m->nspec_pipes];
        memcpy(p->values, values, sizeof(values));
        if ((s = create_pipeline(d, m, values, &p->pipe)) != KCRT_OK)
            return rt_fail(d->ctx, s, "%s: %s", m->name, d->ctx->err);
        rt_log(d->ctx, "pipeline %d of %s made for its KC_SPECIALIZE values", m->nspec_pipes + 1, m->name);
        m->nspec_pipes++;
        *out = p->pipe;
        return KCRT_OK;
    }
    if (!m->pipe && (s = create_pipeline(d, m, NULL, &m->pipe)) != KCRT_OK)
        return rt_fail(d->ctx, s, "%s: %s", m->name, d->ctx->err);
    *out = m->pipe;
    return KCRT_OK;
}

/* The KC_SPECIALIZE scalars of the module, from its SpecIds: each must be
 * a scalar parameter of 4 bytes in the push constants or the spilled
 * block (kc's own modules always are; others keep their defaults). */
static void find_spec_params(vk_dev *d, const rt_module_desc *m, vk_module *mod)
{
    uint32_t ids[VK_SPEC_PARAMS];
    int n = rt_spirv_spec_ids(m->binary, m->size, ids, VK_SPEC_PARAMS);
    if (!d->spec_pipes || n <= 0)
        return;
    if (n > VK_SPEC_PARAMS) { /* not kc's (sema refuses more): the module's defaults stand */
        rt_log(d->ctx, "%s (%s): %d specialisation constants, more than the %d libkcrt sets; its generic pipeline runs",
               m->kernel, m->variant, n, VK_SPEC_PARAMS);
        return;
    }
    for (int i = 0; i < n; i++) {
        const rt_slot *slot = ids[i] < (uint32_t)m->nparams ? &m->slots[ids[i]] : NULL;
        if (!slot || slot->is_binding || slot->size != 4)
            return;
        mod->spec_id[i] = ids[i];
        mod->spec_offset[i] = slot->offset;
    }
    mod->nspec = n;
}

static void module_destroy(vk_dev *d, vk_module *mod)
{
    for (int i = 0; i < VK_BATCHES; i++)
        for (int p = -1; p < mod->nspec_pipes; p++)
            if (d->batches[i].bound == (p < 0 ? mod->pipe : mod->spec[p].pipe))
                d->batches[i].bound = VK_NULL_HANDLE;
    for (int p = 0; p < mod->nspec_pipes; p++)
        d->vkDestroyPipeline(d->dev, mod->spec[p].pipe, NULL);
    if (mod->pipe)
        d->vkDestroyPipeline(d->dev, mod->pipe, NULL);
    if (mod->shader)
        d->vkDestroyShaderModule(d->dev, mod->shader, NULL);
    free(mod->slots);
    free(mod->texel);
    free(mod->entry);
    free(mod);
}

static kcrt_status module_create(void *dev, const rt_module_desc *m, void **out)
{
    vk_dev *d = dev;
    if (d->lost)
        return rt_fail(d->ctx, KCRT_ERROR_DEVICE_ERROR, "the Vulkan device was lost earlier");
    vk_module *mod = calloc(1, sizeof(*mod));
    if (!mod)
        return rt_fail(d->ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    mod->slots = calloc((size_t)(m->nparams ? m->nparams : 1), sizeof(rt_slot));
    mod->entry = strdup(m->kernel);
    if (!mod->slots || !mod->entry) {
        module_destroy(d, mod);
        return rt_fail(d->ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    }
    memcpy(mod->slots, m->slots, sizeof(rt_slot) * (size_t)m->nparams);
    mod->nparams = m->nparams;
    mod->spilled = m->spilled;
    mod->args_size = m->args_size;
    mod->nbuffers = (uint32_t)m->nbindings - (m->spilled ? 1 : 0);
    snprintf(mod->name, sizeof(mod->name), "%s[%s]", m->kernel, m->variant);
    mod->texel = calloc((size_t)(m->nbindings ? m->nbindings : 1), sizeof(rt_texel));
    if (mod->texel && !rt_spirv_texel_bindings(m->binary, m->size, mod->texel, (uint32_t)m->nbindings)) {
        free(mod->texel);
        mod->texel = NULL; /* storage buffers only */
    }
    find_spec_params(d, m, mod);
    kcrt_status s = get_layout(d, (uint32_t)m->nbindings, m->spilled ? 0 : m->args_size, mod->texel, &mod->layout);
    if (s == KCRT_OK)
        s = create_shader(d, m, mod);
    /* specialised pipelines wait for their launches' values */
    if (s == KCRT_OK && !mod->nspec)
        s = create_pipeline(d, mod, NULL, &mod->pipe);
    if (s == KCRT_OK && !mod->nspec) { /* its one pipeline holds what it needs */
        d->vkDestroyShaderModule(d->dev, mod->shader, NULL);
        mod->shader = VK_NULL_HANDLE;
    }
    if (s != KCRT_OK) {
        rt_fail(d->ctx, s, "kernel '%s' variant '%s': %s", m->kernel, m->variant, d->ctx->err);
        module_destroy(d, mod);
        return s;
    }
    rt_log(d->ctx, "%s for %s (workgroup %ux%ux%u, %d binding%s, %u bytes of %s)",
           mod->nspec ? "shader made, its pipelines to come with their KC_SPECIALIZE values," : "pipeline made",
           mod->name, m->wg[0], m->wg[1], m->wg[2], m->nbindings, m->nbindings == 1 ? "" : "s", m->args_size,
           m->spilled ? "spilled scalars" : "push constants");
    *out = mod;
    return KCRT_OK;
}

static void module_free(void *dev, void *module)
{
    module_destroy(dev, module);
}

static void stats(void *dev, kcrt_stats *out)
{
    const vk_dev *d = dev;
    *out = d->stats;
}

bool kcrt_validation_enabled(const kcrt_context *ctx)
{
    return ctx && ctx->dev && ctx->be == &rt_vulkan_backend && ((const vk_dev *)ctx->dev)->lib.validation;
}

bool kcrt_validation_selftest(kcrt_context *ctx)
{
    if (!kcrt_validation_enabled(ctx))
        return false;
    vk_dev *d = ctx->dev;
    /* usage 0 breaks VUID-VkBufferCreateInfo-usage-requiredbitmask; drivers create it all the same */
    VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                             .size = 16,
                             .usage = 0,
                             .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    VkBuffer b = VK_NULL_HANDLE;
    if (d->vkCreateBuffer(d->dev, &bi, NULL, &b) == VK_SUCCESS && b)
        d->vkDestroyBuffer(d->dev, b, NULL);
    return true;
}

void kcrt_validation_reset(void)
{
    vk_validation_reset();
}

int kcrt_pending_launches(const kcrt_context *ctx)
{
    if (!ctx || !ctx->dev || ctx->be != &rt_vulkan_backend)
        return 0;
    const vk_dev *d = ctx->dev;
    return d->recording >= 0 ? (int)d->batches[d->recording].dispatches : 0;
}

static kcrt_status vulkan_device(void *dev, kcrt_vulkan_device *out)
{
    const vk_dev *d = dev;
    *out = (kcrt_vulkan_device){.instance = d->lib.instance,
                                .physical_device = d->pd,
                                .device = d->dev,
                                .queue_family = d->caps.queue_family,
                                .queue = d->queue};
    return KCRT_OK;
}

const rt_backend rt_vulkan_backend = {
    .name = "vulkan",
    .devices = devices,
    .open = open_device,
    .close = close_device,
    .loads = loads,
    .check = check,
    .module_create = module_create,
    .module_free = module_free,
    .buffer_create = vk_buffer_create,
    .buffer_wrap = vk_buffer_wrap,
    .vulkan_device = vulkan_device,
    .buffer_native = vk_buffer_native,
    .buffer_free = vk_buffer_free,
    .buffer_write = vk_buffer_write,
    .buffer_read = vk_buffer_read,
    .buffer_copy = vk_buffer_copy,
    .launch = vk_launch,
    .finish = vk_finish,
    .time = vk_time,
    .stats = stats,
};
