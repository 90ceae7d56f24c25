/*
 * test_rt_novulkan.c — a program linked with libkcrt.so starts where
 * Vulkan is missing and is told so clearly. CMake runs it with
 * KCRT_VULKAN_LIBRARY=/nonexistent; the test also points it at a library
 * that is not a Vulkan loader. Needs no device, so it never skips.
 */
#include "kc_test.h"

#include "kc/kcrt.h"

#if defined(_WIN32)
#define INSTALL_HINT "install the GPU's driver from its vendor"
#define NOT_A_LOADER "kernel32.dll" /* always there, and no Vulkan loader */
#else
#define INSTALL_HINT "install a Vulkan loader and driver"
#define NOT_A_LOADER "libm.so.6"
#endif

static bool mapped(const char *name)
{
#if defined(_WIN32)
    return GetModuleHandleA(strcmp(name, "libvulkan") == 0 ? "vulkan-1.dll" : name) != NULL;
#else
    FILE *f = fopen("/proc/self/maps", "r");
    char line[1024];
    bool found = false;
    while (f && fgets(line, sizeof(line), f))
        found |= strstr(line, name) != NULL;
    if (f)
        fclose(f);
    return found;
#endif
}

static void test_no_loader(void **state)
{
    (void)state;
    assert_false(mapped("libvulkan")); /* nothing loaded it at start-up */
    kcrt_context *ctx = NULL;
    assert_int_equal(KCRT_ERROR_NO_BACKEND, kcrt_open(&ctx, NULL));
    assert_non_null(ctx);
    ASSERT_CONTAINS(kcrt_error(ctx), "Vulkan is not available: cannot load /nonexistent");
    ASSERT_CONTAINS(kcrt_error(ctx), INSTALL_HINT);
    ASSERT_CONTAINS(kcrt_error(NULL), "Vulkan is not available");
    kcrt_bundle *b;
    assert_int_equal(KCRT_ERROR_NO_BACKEND, kcrt_bundle_load(ctx, "whatever.kcb", &b));
    kcrt_close(ctx);
    kcrt_options o = {"vulkan", 0};
    assert_int_equal(KCRT_ERROR_NO_BACKEND, kcrt_open(&ctx, &o));
    kcrt_close(ctx);
    assert_false(mapped("libvulkan"));
}

static void test_no_devices_listed(void **state)
{
    (void)state;
    int n = -1;
    char err[512];
    assert_int_equal(KCRT_ERROR_NO_BACKEND, kcrt_devices("vulkan", NULL, 0, &n, err, sizeof(err)));
    assert_int_equal(0, n);
    ASSERT_CONTAINS(err, "cannot load /nonexistent");
    assert_int_equal(KCRT_ERROR_NO_BACKEND, kcrt_devices(NULL, NULL, 0, &n, err, sizeof(err)));
    assert_int_equal(0, n);
}

static void test_library_that_is_not_a_loader(void **state)
{
    (void)state;
    setenv("KCRT_VULKAN_LIBRARY", NOT_A_LOADER, 1);
    kcrt_context *ctx;
    assert_int_equal(KCRT_ERROR_NO_BACKEND, kcrt_open(&ctx, NULL));
    ASSERT_CONTAINS(kcrt_error(ctx), NOT_A_LOADER " is not a Vulkan loader: it has no vkGetInstanceProcAddr");
    kcrt_close(ctx);
    setenv("KCRT_VULKAN_LIBRARY", "/nonexistent", 1);
}

int main(void)
{
    const char *lib = getenv("KCRT_VULKAN_LIBRARY");
    if (!lib || strcmp(lib, "/nonexistent") != 0) {
        fprintf(stderr, "run with KCRT_VULKAN_LIBRARY=/nonexistent\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_loader),
        cmocka_unit_test(test_no_devices_listed),
        cmocka_unit_test(test_library_that_is_not_a_loader),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
