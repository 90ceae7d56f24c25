/*
 * test_fuzz_regressions.c — replays every input a fuzzer ever found a bug
 * with and its seed corpus through the fuzz target, in the ordinary test
 * build (and so under the sanitizers). Built once per target:
 * KC_FUZZ_TARGET "frontend" (tests/fuzz/regressions/, kernel seeds) or
 * "kcyaml" (tests/fuzz/regressions_kcyaml/, every kc.yaml of the project).
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

#ifndef KC_FUZZ_TARGET
#define KC_FUZZ_TARGET "frontend"
#endif
#define IS_KCYAML (strcmp(KC_FUZZ_TARGET, "kcyaml") == 0)

static int run_file(const char *path)
{
    size_t len;
    char *text = kc_read_file(path, &len);
    if (!text)
        return 0;
    LLVMFuzzerTestOneInput((const uint8_t *)text, len);
    free(text);
    return 1;
}

static void regressions(void **state)
{
    (void)state;
    int n = run_dir(IS_KCYAML ? KC_SRC("tests/fuzz/regressions_kcyaml") : KC_SRC("tests/fuzz/regressions"));
    assert_true(n > 0);
}

static void seeds(void **state)
{
    (void)state;
    if (IS_KCYAML) {
        assert_int_equal(3, run_file(KC_SRC("kernels/kc.yaml")) + run_file(KC_SRC("tests/runtime/kernels/kc.yaml")) +
                                run_file(KC_SRC("bench/kernels/kc.yaml")));
        return;
    }
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
