/*
 * test_rt_interop.c — memory the host owns, on Vulkan (lavapipe in CI):
 * the test makes its own VkBuffers on libkcrt's VkDevice
 * (kcrt_vulkan_device_get) with its own Vulkan calls, fills them through
 * its own mapping, wraps them (kcrt_buffer_wrap), runs saxpy on them and
 * reads the result through its mapping again: the kernel worked in place.
 * The validation layer watches all of it. The HIP and CUDA sides of
 * kcrt_buffer_wrap and kcrt_set_stream are in test_rt_gpu_fake.c.
 */
#include "rt_test.h"

#if !defined(_WIN32)
#include <dlfcn.h> /* kc_test_win.h has it on Windows */
#endif
#include <time.h>
#include <vulkan/vulkan.h>

/* The test's own Vulkan: the loader libkcrt uses (one copy per process). */
static struct {
    PFN_vkCreateBuffer CreateBuffer;
    PFN_vkDestroyBuffer DestroyBuffer;
    PFN_vkGetBufferMemoryRequirements GetBufferMemoryRequirements;
    PFN_vkAllocateMemory AllocateMemory;
    PFN_vkFreeMemory FreeMemory;
    PFN_vkBindBufferMemory BindBufferMemory;
    PFN_vkMapMemory MapMemory;
    PFN_vkUnmapMemory UnmapMemory;
    PFN_vkGetPhysicalDeviceMemoryProperties GetPhysicalDeviceMemoryProperties;
} vk;

static kcrt_vulkan_device dev;

static void *must(void *p, const char *name)
{
    if (!p)
        fail_msg("no %s", name);
    return p;
}

static void load_vulkan(void)
{
#if defined(_WIN32)
    void *so = must(dlopen("vulkan-1.dll", RTLD_NOW), "vulkan-1.dll");
#else
    void *so = must(dlopen("libvulkan.so.1", RTLD_NOW), "libvulkan.so.1");
#endif
    PFN_vkGetInstanceProcAddr gipa;
    void *p = must(dlsym(so, "vkGetInstanceProcAddr"), "vkGetInstanceProcAddr");
    memcpy(&gipa, &p, sizeof(p));
    PFN_vkGetDeviceProcAddr gdpa = (PFN_vkGetDeviceProcAddr)must(
        (void *)gipa((VkInstance)dev.instance, "vkGetDeviceProcAddr"), "vkGetDeviceProcAddr");
    VkDevice d = (VkDevice)dev.device;
#define DEVICE_FN(name) vk.name = (PFN_vk##name)must((void *)gdpa(d, "vk" #name), "vk" #name)
    DEVICE_FN(CreateBuffer);
    DEVICE_FN(DestroyBuffer);
    DEVICE_FN(GetBufferMemoryRequirements);
    DEVICE_FN(AllocateMemory);
    DEVICE_FN(FreeMemory);
    DEVICE_FN(BindBufferMemory);
    DEVICE_FN(MapMemory);
    DEVICE_FN(UnmapMemory);
#undef DEVICE_FN
    vk.GetPhysicalDeviceMemoryProperties = (PFN_vkGetPhysicalDeviceMemoryProperties)must(
        (void *)gipa((VkInstance)dev.instance, "vkGetPhysicalDeviceMemoryProperties"),
        "vkGetPhysicalDeviceMemoryProperties");
}

/* A buffer as an app would make it: host-visible so the test can look. */
typedef struct app_buffer {
    VkBuffer buf;
    VkDeviceMemory mem;
    float *map;
} app_buffer;

static app_buffer app_buffer_new(size_t bytes)
{
    VkDevice d = (VkDevice)dev.device;
    app_buffer a = {0};
    VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                             .size = bytes,
                             .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                      VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                             .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    assert_int_equal(VK_SUCCESS, vk.CreateBuffer(d, &bi, NULL, &a.buf));
    VkMemoryRequirements req;
    vk.GetBufferMemoryRequirements(d, a.buf, &req);
    VkPhysicalDeviceMemoryProperties mp;
    vk.GetPhysicalDeviceMemoryProperties((VkPhysicalDevice)dev.physical_device, &mp);
    VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    uint32_t type = UINT32_MAX;
    for (uint32_t i = 0; i < mp.memoryTypeCount && type == UINT32_MAX; i++)
        if ((req.memoryTypeBits >> i & 1) && (mp.memoryTypes[i].propertyFlags & want) == want)
            type = i;
    if (type == UINT32_MAX)
        skip(); /* a device with no host-visible memory: the test cannot look */
    VkMemoryAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req.size, .memoryTypeIndex = type};
    assert_int_equal(VK_SUCCESS, vk.AllocateMemory(d, &ai, NULL, &a.mem));
    assert_int_equal(VK_SUCCESS, vk.BindBufferMemory(d, a.buf, a.mem, 0));
    void *p;
    assert_int_equal(VK_SUCCESS, vk.MapMemory(d, a.mem, 0, VK_WHOLE_SIZE, 0, &p));
    a.map = p;
    return a;
}

static void app_buffer_free(app_buffer *a)
{
    VkDevice d = (VkDevice)dev.device;
    vk.UnmapMemory(d, a->mem);
    vk.DestroyBuffer(d, a->buf, NULL);
    vk.FreeMemory(d, a->mem, NULL);
}

static kcrt_buffer *wrap(const app_buffer *a, size_t bytes)
{
    kcrt_vulkan_buffer h = {(uint64_t)(uintptr_t)a->buf, (uint64_t)(uintptr_t)a->mem};
    kcrt_buffer *b;
    ASSERT_OK(kcrt_buffer_wrap(rt_ctx, &h, bytes, &b));
    return b;
}

static void test_a_kernel_works_in_the_hosts_buffers(void **state)
{
    (void)state;
    enum { N = 10007 };
    rt_rng r = {0x5eed ^ (uint64_t)time(NULL)};
    app_buffer x = app_buffer_new(N * sizeof(float)), y = app_buffer_new(N * sizeof(float));
    float *want = malloc(N * sizeof(float));
    rt_fill_f32(x.map, N, &r, -1, 1);
    rt_fill_f32(y.map, N, &r, -1, 1);
    float *want_y = malloc(N * sizeof(float));
    memcpy(want_y, y.map, N * sizeof(float));
    for (int i = 0; i < N; i++)
        want[i] = 1.5f * x.map[i] + y.map[i];
    kcrt_buffer *bx = wrap(&x, N * sizeof(float)), *by = wrap(&y, N * sizeof(float));
    kcrt_kernel *k;
    ASSERT_OK(kcrt_kernel_get(rt_bundle, "saxpy", &k));
    kcrt_arg args[] = {KCRT_I32(N), KCRT_F32(1.5f), KCRT_BUF(bx), KCRT_BUF(by)};
    ASSERT_OK(kcrt_launch(k, args, 4));
    ASSERT_OK(kcrt_finish(rt_ctx));
    for (int i = 0; i < N; i++) /* read through the app's own mapping; a driver may fuse a x + y */
        if (y.map[i] != want[i] && y.map[i] != fmaf(1.5f, x.map[i], want_y[i]))
            fail_msg("y[%d] = %a, want %a (or fused, %a)", i, y.map[i], want[i], fmaf(1.5f, x.map[i], want_y[i]));
    /* kcrt's transfers reach the app's buffer too (its staged path) */
    float part[3] = {7.0f, 8.0f, 9.0f}, back[3];
    ASSERT_OK(kcrt_buffer_write(by, 4 * sizeof(float), part, sizeof(part)));
    assert_true(y.map[4] == 7.0f && y.map[6] == 9.0f);
    y.map[5] = -3.0f;
    ASSERT_OK(kcrt_buffer_read(by, 4 * sizeof(float), back, sizeof(back)));
    assert_true(back[0] == 7.0f && back[1] == -3.0f && back[2] == 9.0f);
    /* sizes are checked against what the host said */
    kcrt_buffer *small = wrap(&y, 100 * sizeof(float));
    kcrt_arg too_small[] = {KCRT_I32(N), KCRT_F32(1.5f), KCRT_BUF(bx), KCRT_BUF(small)};
    ASSERT_STATUS(KCRT_ERROR_BAD_ARGUMENT, kcrt_launch(k, too_small, 4));
    /* kcrt frees nothing of the host's: the app frees its buffers after ours,
     * and the validation layer would report a double destroy */
    kcrt_buffer_free(small);
    kcrt_buffer_free(bx);
    kcrt_buffer_free(by);
    app_buffer_free(&x);
    app_buffer_free(&y);
    free(want), free(want_y);
}

static void test_refusals(void **state)
{
    (void)state;
    kcrt_buffer *b = (kcrt_buffer *)1;
    kcrt_vulkan_buffer none = {0, 0};
    ASSERT_STATUS(KCRT_ERROR_BAD_ARGUMENT, kcrt_buffer_wrap(rt_ctx, &none, 64, &b));
    ASSERT_CONTAINS(kcrt_error(rt_ctx), "no VkBuffer");
    ASSERT_STATUS(KCRT_ERROR_BAD_ARGUMENT, kcrt_buffer_wrap(rt_ctx, NULL, 64, &b));
    ASSERT_STATUS(KCRT_ERROR_UNSUPPORTED, kcrt_set_stream(rt_ctx, &none));
    ASSERT_CONTAINS(kcrt_error(rt_ctx), "own queue");
}

int main(void)
{
    int rc = rt_open_or_skip("test_rt_interop");
    if (rc)
        return rc;
    if (!rt_on_vulkan()) {
        fprintf(stderr, "test_rt_interop: skipped: the context is on %s (HIP and CUDA: test_rt_gpu_fake)\n",
                kcrt_backend_name(rt_ctx));
        kcrt_close(rt_ctx);
        return KC_TEST_SKIP;
    }
    if (rt_load_bundle())
        return 1;
    ASSERT_OK(kcrt_vulkan_device_get(rt_ctx, &dev));
    load_vulkan();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_a_kernel_works_in_the_hosts_buffers, rt_teardown),
        cmocka_unit_test_teardown(test_refusals, rt_teardown),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    return rt_close_all(failed);
}
