/*
 * test_fuzz_regressions.c — replays every input the fuzzer ever found a
 * bug with (tests/fuzz/regressions/) and the seed corpus through the
 * fuzz target, in the ordinary test build (and so under the sanitizers).
 */
#include "kc_test.h"

#include <dirent.h>

#include "kc_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        size_t len;
        char *text = kc_read_file(path, &len);
        if (!text)
            continue;
        LLVMFuzzerTestOneInput((const uint8_t *)text, len);
        free(text);
        n++;
    }
    closedir(d);
    return n;
}

static void regressions(void **state)
{
    (void)state;
    int n = run_dir(KC_SRC("tests/fuzz/regressions"));
    assert_true(n > 0);
}

static void seeds(void **state)
{
    (void)state;
    run_dir(KC_SRC("tests/fuzz/seeds"));
    run_dir(KC_SRC("kernels"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(regressions),
        cmocka_unit_test(seeds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
