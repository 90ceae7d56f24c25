/*
 * vk_instance.c — the Vulkan loader, the instance, the validation layer,
 * and what each physical device is (kcrt_device_info).
 *
 * The loader is dlopen'ed, so a host without Vulkan gets a message, not a
 * failure to start. With KCRT_VALIDATION=1 the instance enables
 * VK_LAYER_KHRONOS_validation and a VK_EXT_debug_utils messenger that
 * counts warnings and errors for the whole process (kcrt_internal.h):
 * kc's tests assert that it stays at zero.
 */
#include "vk_private.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "kc_platform.h"

/* ---- results ------------------------------------------------------------------------------- */

const char *vk_result_name(VkResult r)
{
    switch (r) {
#define R(x)                                                                                                 \
    case x: return #x;
        R(VK_SUCCESS)
        R(VK_NOT_READY) R(VK_TIMEOUT) R(VK_EVENT_SET) R(VK_EVENT_RESET) R(VK_INCOMPLETE)
            R(VK_ERROR_OUT_OF_HOST_MEMORY) R(VK_ERROR_OUT_OF_DEVICE_MEMORY) R(VK_ERROR_INITIALIZATION_FAILED)
                R(VK_ERROR_DEVICE_LOST) R(VK_ERROR_MEMORY_MAP_FAILED) R(VK_ERROR_LAYER_NOT_PRESENT)
                    R(VK_ERROR_EXTENSION_NOT_PRESENT) R(VK_ERROR_FEATURE_NOT_PRESENT)
                        R(VK_ERROR_INCOMPATIBLE_DRIVER) R(VK_ERROR_TOO_MANY_OBJECTS)
                            R(VK_ERROR_FORMAT_NOT_SUPPORTED) R(VK_ERROR_FRAGMENTED_POOL) R(VK_ERROR_UNKNOWN)
                                R(VK_ERROR_OUT_OF_POOL_MEMORY) R(VK_ERROR_INVALID_EXTERNAL_HANDLE)
                                    R(VK_ERROR_FRAGMENTATION) R(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
                                        R(VK_PIPELINE_COMPILE_REQUIRED) R(VK_ERROR_INVALID_SHADER_NV)
#undef R
                                            default : return "VK_ERROR_(unknown)";
    }
}

/* ---- validation messages, for the whole process ------------------------------------------------ */

static atomic_ullong validation_count;
static pthread_mutex_t validation_lock = PTHREAD_MUTEX_INITIALIZER;
static char validation_last[RT_MSG];

uint64_t kcrt_validation_message_count(void)
{
    return atomic_load(&validation_count);
}

const char *kcrt_validation_last_message(void)
{
    return validation_last;
}

void vk_validation_reset(void)
{
    atomic_store(&validation_count, 0);
    pthread_mutex_lock(&validation_lock);
    validation_last[0] = 0;
    pthread_mutex_unlock(&validation_lock);
}

static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                 VkDebugUtilsMessageTypeFlagsEXT types,
                                                 const VkDebugUtilsMessengerCallbackDataEXT *data, void *user)
{
    (void)types;
    (void)user;
    if (severity < VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT)
        return VK_FALSE;
    const char *msg = data && data->pMessage ? data->pMessage : "(no text)";
    atomic_fetch_add(&validation_count, 1);
    pthread_mutex_lock(&validation_lock);
    snprintf(validation_last, sizeof(validation_last), "%s", msg);
    pthread_mutex_unlock(&validation_lock);
    /* a message from the validation layer is a bug in kc: always say it */
    fprintf(stderr, "kcrt: validation %s: %s\n",
            severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error" : "warning", msg);
    return VK_FALSE;
}

/* ---- the loader ------------------------------------------------------------------------------------ */

/* Libraries Vulkan loads stay loaded. The loader unloads drivers and
 * layers with the instance, and Mesa's drivers (LLVM inside) are not made to
 * be unloaded and loaded again: what they allocated is then unreachable, and
 * static state can outlive them. Pinned, a second context also opens
 * faster. Only what appeared while the instance was made is pinned, never
 * the host application's own libraries (kc_libs_pin_new). */

#if defined(_WIN32)
#define INSTALL_VULKAN "install the GPU's driver from its vendor (it brings vulkan-1.dll)"
#else
#define INSTALL_VULKAN "install a Vulkan loader and driver (Debian: libvulkan1 and mesa-vulkan-drivers)"
#endif

static kcrt_status load(vk_lib *L, char *err, size_t errlen)
{
    const char *path = getenv("KCRT_VULKAN_LIBRARY");
    if (!path || !*path)
        path = KC_LIB_VULKAN;
    char why[256];
    L->so = kc_lib_open(path, why, sizeof(why)); /* pinned: see above */
    if (!L->so) {
        rt_printf(err, errlen, "Vulkan is not available: cannot load %s (%s); %s", path, why, INSTALL_VULKAN);
        return KCRT_ERROR_NO_BACKEND;
    }
    /* POSIX lets a function pointer come from dlsym's void *; this copy keeps -Wpedantic quiet */
    void *sym = kc_lib_symbol(L->so, "vkGetInstanceProcAddr");
    memcpy(&L->gipa, &sym, sizeof(sym));
    if (!L->gipa) {
        rt_printf(err, errlen, "%s is not a Vulkan loader: it has no vkGetInstanceProcAddr", path);
        return KCRT_ERROR_NO_BACKEND;
    }
#define X(name) L->name = (PFN_##name)L->gipa(NULL, #name);
    VK_GLOBAL_FNS(X)
#undef X
    if (!L->vkCreateInstance || !L->vkEnumerateInstanceExtensionProperties)
        return rt_printf(err, errlen, "the Vulkan loader %s lacks vkCreateInstance", path),
               KCRT_ERROR_NO_BACKEND;
    PFN_vkEnumerateInstanceVersion version =
        (PFN_vkEnumerateInstanceVersion)L->gipa(NULL, "vkEnumerateInstanceVersion");
    L->api = VK_API_VERSION_1_0;
    if (version)
        version(&L->api);
    if (L->api < VK_API_VERSION_1_1) {
        rt_printf(err, errlen, "the Vulkan loader %s offers Vulkan %u.%u; kc needs 1.1", path,
                  VK_API_VERSION_MAJOR(L->api), VK_API_VERSION_MINOR(L->api));
        return KCRT_ERROR_NO_BACKEND;
    }
    return KCRT_OK;
}

static bool has_layer(vk_lib *L, const char *name)
{
    uint32_t n = 0;
    if (!L->vkEnumerateInstanceLayerProperties ||
        L->vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS)
        return false;
    VkLayerProperties *p = calloc(n ? n : 1, sizeof(*p));
    bool found = false;
    if (p && L->vkEnumerateInstanceLayerProperties(&n, p) >= VK_SUCCESS)
        for (uint32_t i = 0; i < n; i++)
            found |= strcmp(p[i].layerName, name) == 0;
    free(p);
    return found;
}

static bool has_instance_ext(vk_lib *L, const char *name)
{
    uint32_t n = 0;
    if (L->vkEnumerateInstanceExtensionProperties(NULL, &n, NULL) != VK_SUCCESS)
        return false;
    VkExtensionProperties *p = calloc(n ? n : 1, sizeof(*p));
    bool found = false;
    if (p && L->vkEnumerateInstanceExtensionProperties(NULL, &n, p) >= VK_SUCCESS)
        for (uint32_t i = 0; i < n; i++)
            found |= strcmp(p[i].extensionName, name) == 0;
    free(p);
    return found;
}

static VkDebugUtilsMessengerCreateInfoEXT messenger_info(void)
{
    return (VkDebugUtilsMessengerCreateInfoEXT){
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .messageSeverity =
            VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
        .pfnUserCallback = on_message};
}

/* The messenger that counts what the validation layer says after the
 * instance exists (the one in the instance's pNext covers its creation). */
static kcrt_status create_messenger(vk_lib *L, char *err, size_t errlen)
{
    VkDebugUtilsMessengerCreateInfoEXT dbg = messenger_info();
    L->vkCreateDebugUtilsMessengerEXT =
        (PFN_vkCreateDebugUtilsMessengerEXT)L->gipa(L->instance, "vkCreateDebugUtilsMessengerEXT");
    L->vkDestroyDebugUtilsMessengerEXT =
        (PFN_vkDestroyDebugUtilsMessengerEXT)L->gipa(L->instance, "vkDestroyDebugUtilsMessengerEXT");
    if (!L->vkCreateDebugUtilsMessengerEXT || !L->vkDestroyDebugUtilsMessengerEXT ||
        L->vkCreateDebugUtilsMessengerEXT(L->instance, &dbg, NULL, &L->messenger) != VK_SUCCESS)
        return rt_printf(err, errlen,
                         "cannot create a VK_EXT_debug_utils messenger for the validation layer"),
               KCRT_ERROR_NO_BACKEND;
    L->validation = true;
    return KCRT_OK;
}

static kcrt_status load_instance_fns(vk_lib *L, char *err, size_t errlen)
{
#define X(name) L->name = (PFN_##name)L->gipa(L->instance, #name);
    VK_INSTANCE_FNS(X)
#undef X
#define X(name)                                                                                              \
    if (!L->name)                                                                                            \
        return rt_printf(err, errlen, "the Vulkan loader lacks %s", #name), KCRT_ERROR_NO_BACKEND;
    VK_INSTANCE_FNS(X)
#undef X
    return KCRT_OK;
}

static kcrt_status create_instance(vk_lib *L, bool validation, char *err, size_t errlen)
{
    const char *layers[1], *exts[3];
    uint32_t nlayers = 0, nexts = 0;
    VkInstanceCreateFlags flags = 0;
    if (validation) {
        if (!has_layer(L, "VK_LAYER_KHRONOS_validation"))
            return rt_printf(err, errlen,
                             "KCRT_VALIDATION=1 but the layer VK_LAYER_KHRONOS_validation is not "
                             "installed (Debian: vulkan-validationlayers)"),
                   KCRT_ERROR_NO_BACKEND;
        layers[nlayers++] = "VK_LAYER_KHRONOS_validation";
        exts[nexts++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    }
    if (has_instance_ext(L, "VK_KHR_portability_enumeration")) { /* MoltenVK and friends */
        exts[nexts++] = "VK_KHR_portability_enumeration";
        flags |= 0x00000001; /* VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR */
    }
    uint32_t api = L->api < VK_API_VERSION_1_3 ? L->api : VK_API_VERSION_1_3;
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                             .pApplicationName = "kcrt",
                             .pEngineName = "kc",
                             .apiVersion = api};
    VkDebugUtilsMessengerCreateInfoEXT dbg = messenger_info();
    /* synchronization validation too: it checks the barriers between dependent dispatches */
    VkValidationFeatureEnableEXT sync = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
    VkValidationFeaturesEXT features = {.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
                                        .pNext = &dbg,
                                        .enabledValidationFeatureCount = 1,
                                        .pEnabledValidationFeatures = &sync};
    if (validation)
        exts[nexts++] = VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME;
    VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                               .pNext = validation ? (void *)&features : NULL,
                               .flags = flags,
                               .pApplicationInfo = &app,
                               .enabledLayerCount = nlayers,
                               .ppEnabledLayerNames = layers,
                               .enabledExtensionCount = nexts,
                               .ppEnabledExtensionNames = exts};
    VkResult r = L->vkCreateInstance(&ci, NULL, &L->instance);
    if (r != VK_SUCCESS) {
        rt_printf(err, errlen, "vkCreateInstance failed: %s", vk_result_name(r));
        return r == VK_ERROR_INCOMPATIBLE_DRIVER ? KCRT_ERROR_NO_DEVICE : KCRT_ERROR_NO_BACKEND;
    }
    L->api = api;
    kcrt_status s = load_instance_fns(L, err, errlen);
    return s == KCRT_OK && validation ? create_messenger(L, err, errlen) : s;
}

kcrt_status vk_lib_open(vk_lib *L, bool validation, char *err, size_t errlen)
{
    memset(L, 0, sizeof(*L));
    L->debug = rt_env_debug();
    kc_lib_list *before = kc_libs_loaded();
    kcrt_status s = load(L, err, errlen);
    if (s == KCRT_OK)
        s = create_instance(L, validation, err, errlen);
    if (s == KCRT_OK && before)
        kc_libs_pin_new(before);
    kc_libs_free(before);
    if (s != KCRT_OK)
        vk_lib_close(L);
    return s;
}

void vk_lib_close(vk_lib *L)
{
    if (L->messenger)
        L->vkDestroyDebugUtilsMessengerEXT(L->instance, L->messenger, NULL);
    if (L->instance)
        L->vkDestroyInstance(L->instance, NULL);
    kc_lib_close(L->so);
    memset(L, 0, sizeof(*L));
}

kcrt_status vk_physical_devices(vk_lib *L, VkPhysicalDevice *out, uint32_t max, uint32_t *n, char *err,
                                size_t errlen)
{
    uint32_t count = 0;
    VkResult r = L->vkEnumeratePhysicalDevices(L->instance, &count, NULL);
    VkPhysicalDevice *all = calloc(count ? count : 1, sizeof(*all));
    if (!all)
        return rt_printf(err, errlen, "out of memory"), KCRT_ERROR_OUT_OF_MEMORY;
    if (r == VK_SUCCESS)
        r = L->vkEnumeratePhysicalDevices(L->instance, &count, all);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        free(all);
        rt_printf(err, errlen, "vkEnumeratePhysicalDevices failed: %s", vk_result_name(r));
        return KCRT_ERROR_NO_DEVICE;
    }
    *n = 0;
    for (uint32_t i = 0; i < count; i++) {
        VkPhysicalDeviceProperties p;
        L->vkGetPhysicalDeviceProperties(all[i], &p);
        if (p.apiVersion < VK_API_VERSION_1_1) {
            if (L->debug)
                fprintf(stderr, "kcrt: vulkan device '%s' skipped: it offers Vulkan %u.%u, kc needs 1.1\n",
                        p.deviceName, VK_API_VERSION_MAJOR(p.apiVersion), VK_API_VERSION_MINOR(p.apiVersion));
            continue;
        }
        if (*n < max)
            out[*n] = all[i];
        ++*n;
    }
    free(all);
    return KCRT_OK;
}

/* ---- describing a device ------------------------------------------------------------------------------ */

static const char *vendor_name(uint32_t id)
{
    switch (id) {
    case 0x1002:
    case 0x1022: return "amd";
    case 0x10de: return "nvidia";
    case 0x8086: return "intel";
    case 0x13b5: return "arm";
    case 0x5143: return "qualcomm";
    case 0x1010: return "imgtec";
    case 0x106b: return "apple";
    case 0x14e4: return "broadcom";
    case 0x1ae0: return "google";
    case 0x10005: return "mesa";
    default: return NULL;
    }
}

/* Vendors encode driverVersion differently; this is what their tools show. */
static void driver_version(uint32_t vendor, uint32_t v, char *out, size_t len)
{
    if (vendor == 0x10de)
        rt_printf(out, len, "%u.%u.%u.%u", v >> 22 & 0x3ff, v >> 14 & 0xff, v >> 6 & 0xff, v & 0x3f);
    else
        rt_printf(out, len, "%u.%u.%u", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v),
                  VK_API_VERSION_PATCH(v));
}

/* A device family: the vendor and, from the name, the architecture where
 * the driver says it ("(RADV NAVI31)" -> navi3x, "(DG2)" -> dg2), else the
 * product line ("RTX 4090" -> rtx4, the first digit of the model number),
 * else the first word of the name. A heuristic: a tuned row of a sibling
 * device is only the third choice (DESIGN.md §6). */
static void family(const kcrt_device_info *info, char *out, size_t len)
{
    char arch[64] = "";
    const char *paren = strrchr(info->name, '(');
    const char *name = info->name;
    if (paren && strncmp(paren, "(LLVM", 5) != 0) {
        const char *w = paren + 1;
        if (strncmp(w, "RADV ", 5) == 0)
            w += 5;
        size_t n = strcspn(w, " ,)");
        snprintf(arch, sizeof(arch), "%.*s", (int)(n < 40 ? n : 40), w);
        size_t l = strlen(arch);
        if (strncasecmp(arch, "navi", 4) == 0 && l >= 6) /* navi31, navi32 -> navi3x */
            arch[l - 1] = 'x';
    } else {
        size_t end = strcspn(name, "("); /* "llvmpipe (LLVM 15.0.6, 256 bits)": only "llvmpipe " */
        for (const char *p = name; p < name + end && !arch[0]; p++) {
            if (*p < '0' || *p > '9' || (p > name && p[-1] >= '0' && p[-1] <= '9'))
                continue;
            if (strspn(p, "0123456789") < 3)
                continue;
            const char *start = p; /* the letters just before: "RTX 4090" -> "rtx" */
            if (start > name && start[-1] == ' ')
                start--;
            const char *word = start;
            while (word > name &&
                   ((word[-1] >= 'a' && word[-1] <= 'z') || (word[-1] >= 'A' && word[-1] <= 'Z')))
                word--;
            if (word > name && word[-1] != ' ')
                continue; /* part of something else ("Intel(R)") */
            snprintf(arch, sizeof(arch), "%.*s%c", (int)(start - word < 20 ? start - word : 20), word, *p);
        }
        if (!arch[0])
            snprintf(arch, sizeof(arch), "%.*s", (int)strcspn(name, " ("), name);
    }
    for (char *p = arch; *p; p++)
        *p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
    rt_printf(out, len, "%s:%s", info->vendor, arch);
}

static bool has_device_ext(vk_lib *L, VkPhysicalDevice pd, const char *name)
{
    uint32_t n = 0;
    if (L->vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS)
        return false;
    VkExtensionProperties *p = calloc(n ? n : 1, sizeof(*p));
    bool found = false;
    if (p && L->vkEnumerateDeviceExtensionProperties(pd, NULL, &n, p) >= VK_SUCCESS)
        for (uint32_t i = 0; i < n; i++)
            found |= strcmp(p[i].extensionName, name) == 0;
    free(p);
    return found;
}

/* A queue family with compute; one that also has timestamps first, and a
 * compute-only one (an asynchronous compute queue) among those. */
static uint32_t compute_family(vk_lib *L, VkPhysicalDevice pd, uint32_t *ts_bits)
{
    uint32_t n = 0, best = UINT32_MAX;
    int best_score = -1;
    L->vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
    VkQueueFamilyProperties *q = calloc(n ? n : 1, sizeof(*q));
    if (!q)
        return UINT32_MAX;
    L->vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, q);
    for (uint32_t i = 0; i < n; i++) {
        if (!(q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) || q[i].queueCount == 0)
            continue;
        int score = (q[i].timestampValidBits ? 2 : 0) + !(q[i].queueFlags & VK_QUEUE_GRAPHICS_BIT);
        if (score > best_score) {
            best = i, best_score = score;
            *ts_bits = q[i].timestampValidBits;
        }
    }
    free(q);
    return best;
}

static void query_features(vk_lib *L, VkPhysicalDevice pd, vk_caps *c)
{
    VkPhysicalDeviceShaderAtomicFloatFeaturesEXT af = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
    VkPhysicalDeviceShaderFloat16Int8Features f16 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES,
        .pNext = c->ext_atomic_float ? &af : NULL};
    VkPhysicalDevice16BitStorageFeatures s16 = {.sType =
                                                    VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
    bool has_f16 = c->ext_float16_int8 || c->api >= VK_API_VERSION_1_2;
    s16.pNext = has_f16 ? (void *)&f16 : c->ext_atomic_float ? (void *)&af : NULL;
    VkPhysicalDeviceFeatures2 f = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &s16};
    L->vkGetPhysicalDeviceFeatures2(pd, &f);
    c->int64 = f.features.shaderInt64;
    c->storage16 = s16.storageBuffer16BitAccess;
    c->float16 = has_f16 && f16.shaderFloat16;
    c->float_atomics_buffer = c->ext_atomic_float && af.shaderBufferFloat32AtomicAdd;
    c->float_atomics_shared = c->ext_atomic_float && af.shaderSharedFloat32AtomicAdd;
}

static void query_properties(vk_lib *L, VkPhysicalDevice pd, kcrt_device_info *info, vk_caps *c,
                             char *driver_info, size_t len)
{
    VkPhysicalDeviceSubgroupSizeControlProperties ssc = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
    VkPhysicalDeviceDriverProperties drv = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceSubgroupProperties sg = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    bool has_drv = c->api >= VK_API_VERSION_1_2 || has_device_ext(L, pd, "VK_KHR_driver_properties");
    bool has_ssc = c->api >= VK_API_VERSION_1_3 || has_device_ext(L, pd, "VK_EXT_subgroup_size_control");
    void *chain = NULL;
    if (has_ssc)
        ssc.pNext = chain, chain = &ssc;
    if (has_drv)
        drv.pNext = chain, chain = &drv;
    sg.pNext = chain;
    VkPhysicalDeviceProperties2 p = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &sg};
    L->vkGetPhysicalDeviceProperties2(pd, &p);
    info->subgroup_size = sg.subgroupSize;
    info->min_subgroup_size = has_ssc && ssc.minSubgroupSize ? ssc.minSubgroupSize : sg.subgroupSize;
    info->max_subgroup_size = has_ssc && ssc.maxSubgroupSize ? ssc.maxSubgroupSize : sg.subgroupSize;
    c->subgroup_ops = (sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) ? sg.supportedOperations : 0;
    rt_printf(driver_info, len, "%s%s%s", has_drv ? drv.driverName : "",
              has_drv && drv.driverInfo[0] ? " " : "", has_drv ? drv.driverInfo : "");
}

static void describe_memory(kcrt_device_info *info, vk_caps *c)
{
    info->memory_bytes = 0;
    for (uint32_t i = 0; i < c->mem.memoryHeapCount; i++)
        if (c->mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT &&
            c->mem.memoryHeaps[i].size > info->memory_bytes)
            info->memory_bytes = c->mem.memoryHeaps[i].size;
    VkMemoryPropertyFlags all = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    bool direct = false;
    for (uint32_t i = 0; i < c->mem.memoryTypeCount; i++)
        direct |= (c->mem.memoryTypes[i].propertyFlags & all) == all;
    /* a discrete GPU's host-visible device memory is a window over PCIe, not shared memory */
    info->unified_memory = direct && (info->type == KCRT_DEVICE_INTEGRATED || info->type == KCRT_DEVICE_CPU);
}

static kcrt_device_type device_type(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return KCRT_DEVICE_DISCRETE;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return KCRT_DEVICE_INTEGRATED;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return KCRT_DEVICE_VIRTUAL;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return KCRT_DEVICE_CPU;
    default: return KCRT_DEVICE_OTHER;
    }
}

static const char *type_name(kcrt_device_type t)
{
    static const char *const names[] = {"other", "discrete", "integrated", "virtual", "cpu"};
    return names[t];
}

static void describe_limits(kcrt_device_info *info, const VkPhysicalDeviceLimits *l)
{
    info->max_workgroup_invocations = l->maxComputeWorkGroupInvocations;
    for (int d = 0; d < 3; d++) {
        info->max_workgroup_size[d] = l->maxComputeWorkGroupSize[d];
        info->max_workgroup_count[d] = l->maxComputeWorkGroupCount[d];
    }
    info->max_shared_bytes = l->maxComputeSharedMemorySize;
    info->max_push_bytes = l->maxPushConstantsSize;
    info->max_storage_buffers = l->maxPerStageDescriptorStorageBuffers < l->maxDescriptorSetStorageBuffers
                                    ? l->maxPerStageDescriptorStorageBuffers
                                    : l->maxDescriptorSetStorageBuffers;
    info->max_buffer_bytes = l->maxStorageBufferRange;
}

/* KCRT_VULKAN_PRETEND (tests only, kcrt_internal.h): a device with less
 * than it has, "no-float16,no-int64,no-storage16,no-subgroups,
 * no-float-atomics,push=N,texels=N", to test how variants it cannot run,
 * and launches it cannot make, are refused. */
static void pretend(kcrt_device_info *info, vk_caps *c)
{
    const char *p = getenv("KCRT_VULKAN_PRETEND");
    if (!p || !*p)
        return;
    if (strstr(p, "no-float16"))
        c->float16 = false;
    if (strstr(p, "no-int64"))
        c->int64 = false;
    if (strstr(p, "no-storage16"))
        c->storage16 = false;
    if (strstr(p, "no-subgroups"))
        c->subgroup_ops = 0;
    if (strstr(p, "no-float-atomics"))
        c->float_atomics_buffer = c->float_atomics_shared = false;
    const char *push = strstr(p, "push=");
    if (push && atoi(push + 5) > 0)
        c->limits.maxPushConstantsSize = (uint32_t)atoi(push + 5);
    const char *texels = strstr(p, "texels=");
    if (texels && atoi(texels + 7) > 0)
        c->limits.maxTexelBufferElements = (uint32_t)atoi(texels + 7);
    (void)info;
}

static void describe_features(kcrt_device_info *info, const vk_caps *c)
{
    info->float16 = c->float16;
    info->int64 = c->int64;
    info->storage16 = c->storage16;
    info->subgroups = c->subgroup_ops & VK_SUBGROUP_FEATURE_BASIC_BIT;
    info->subgroup_arithmetic = c->subgroup_ops & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
    info->subgroup_shuffle = c->subgroup_ops & VK_SUBGROUP_FEATURE_SHUFFLE_BIT;
    info->subgroup_ballot = c->subgroup_ops & VK_SUBGROUP_FEATURE_BALLOT_BIT;
    info->float_atomics = c->float_atomics_buffer;
}

void vk_describe(vk_lib *L, VkPhysicalDevice pd, kcrt_device_info *info, vk_caps *c)
{
    VkPhysicalDeviceProperties p;
    L->vkGetPhysicalDeviceProperties(pd, &p);
    memset(info, 0, sizeof(*info));
    memset(c, 0, sizeof(*c));
    c->limits = p.limits;
    c->api = p.apiVersion < L->api ? p.apiVersion : L->api;
    c->ext_float16_int8 = has_device_ext(L, pd, "VK_KHR_shader_float16_int8");
    c->ext_atomic_float = has_device_ext(L, pd, "VK_EXT_shader_atomic_float");
    c->ext_portability_subset = has_device_ext(L, pd, "VK_KHR_portability_subset");
    L->vkGetPhysicalDeviceMemoryProperties(pd, &c->mem);
    snprintf(info->backend, sizeof(info->backend), "vulkan");
    snprintf(info->target, sizeof(info->target), "spirv");
    snprintf(info->name, sizeof(info->name), "%s", p.deviceName);
    info->type = device_type(p.deviceType);
    info->type_name = type_name(info->type);
    info->vendor_id = p.vendorID;
    info->device_id = p.deviceID;
    const char *v = vendor_name(p.vendorID);
    if (v)
        snprintf(info->vendor, sizeof(info->vendor), "%s", v);
    else
        snprintf(info->vendor, sizeof(info->vendor), "%04x", p.vendorID);
    info->driver_version = p.driverVersion;
    info->api_version = p.apiVersion;
    char version[32], words[200];
    driver_version(p.vendorID, p.driverVersion, version, sizeof(version));
    query_properties(L, pd, info, c, words, sizeof(words));
    rt_printf(info->driver, sizeof(info->driver), "%s%s%s", version, words[0] ? " " : "", words);
    query_features(L, pd, c);
    pretend(info, c);
    describe_limits(info, &c->limits);
    describe_memory(info, c);
    uint32_t ts_bits = 0;
    c->queue_family = compute_family(L, pd, &ts_bits);
    info->timestamp_valid_bits = ts_bits;
    info->timestamp_period_ns = ts_bits ? p.limits.timestampPeriod : 0;
    describe_features(info, c);
    rt_printf(info->key, sizeof(info->key), "vulkan:%04x:%04x:%s:%s", p.vendorID, p.deviceID, p.deviceName,
              info->driver);
    family(info, info->family, sizeof(info->family));
}
