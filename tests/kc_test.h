/*
 * kc_test.h — what kc's cmocka tests share: the includes cmocka needs,
 * paths into the source tree, and ASSERT-style helpers.
 */
#ifndef KC_TEST_H
#define KC_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(_WIN32)
#include "kc_test_win.h"
#else
#include <fnmatch.h>
#include <sys/wait.h>
#endif

#include <cmocka.h>

/* A test that cannot run here (no device, no tool) exits with this. */
#define KC_TEST_SKIP 77

/* Path of a file in the source tree, in a static buffer per call site. */
#define KC_SRC(rel) (KC_SOURCE_DIR "/" rel)

#define ASSERT_CONTAINS(haystack, needle)                                                                    \
    do {                                                                                                     \
        const char *h_ = (haystack), *n_ = (needle);                                                         \
        if (!h_ || !strstr(h_, n_))                                                                          \
            fail_msg("expected to find \"%s\" in:\n%s", n_, h_ ? h_ : "(null)");                             \
    } while (0)

/* Runs the cases of all[] whose names match a pattern of argv[1..]
 * (fnmatch: "test_conv*"), or every case without patterns; a pattern that
 * matches none is an error, so a renamed case cannot silently stop
 * running. This is how ctest runs one case per test (kc_add_test CASES):
 * the cases of a long program run in parallel, each under its own
 * timeout, and slow ones carry the "exhaustive" label. */
static inline int kc_test_run(const char *group, const struct CMUnitTest *all, size_t n, int argc, char **argv,
                              CMFixtureFunction setup, CMFixtureFunction teardown)
{
    struct CMUnitTest *chosen = calloc(n ? n : 1, sizeof(*chosen));
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool match = argc < 2;
        for (int a = 1; a < argc; a++)
            match |= fnmatch(argv[a], all[i].name, 0) == 0;
        if (match)
            chosen[k++] = all[i];
    }
    for (int a = 1; a < argc; a++) {
        bool any = false;
        for (size_t i = 0; i < n; i++)
            any |= fnmatch(argv[a], all[i].name, 0) == 0;
        if (!any) {
            fprintf(stderr, "%s: no test case matches '%s'\n", group, argv[a]);
            free(chosen);
            return 1;
        }
    }
    int failed = _cmocka_run_group_tests(group, chosen, k, setup, teardown);
    free(chosen);
    return failed;
}

#if !defined(_WIN32)
/* Removes a folder and all in it (rm -rf); 0 on success. */
static inline int kc_test_remove_tree(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd);
}
#endif

/* A variable set for one command of kc_test_sh: KC_SH_ENV("A=1") "%s x"
 * ("A=1 x" in sh; cmd.exe, which runs it on Windows, needs set). */
#if defined(_WIN32)
#define KC_SH_ENV(assignment) "set \"" assignment "\" && "
#else
#define KC_SH_ENV(assignment) assignment " "
#endif

/* Runs a shell command with stderr joined to stdout; returns its exit
 * status (-1 if a signal ended it) and, in *out (free it) unless out is
 * NULL, all it wrote. Fails the test if the Vulkan validation layer or a
 * sanitizer said anything: kc's subprocesses are checked as the test is. */
#if defined(__MINGW32__)
static inline int kc_test_sh(char **out, const char *fmt, ...) __attribute__((format(gnu_printf, 2, 3)));
#else
static inline int kc_test_sh(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#endif
static inline int kc_test_sh(char **out, const char *fmt, ...)
{
    char cmd[4096], full[4200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    snprintf(full, sizeof(full), "%s 2>&1", cmd);
    FILE *p = popen(full, "r");
    assert_non_null(p);
    size_t cap = 1 << 16, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    for (size_t got; (got = fread(text + len, 1, cap - 1 - len, p)) > 0;) {
        len += got;
        if (len == cap - 1) {
            text = realloc(text, cap *= 2);
            assert_non_null(text);
        }
    }
    text[len] = 0;
    int status = pclose(p);
    if (strstr(text, "kcrt: validation") || strstr(text, "Sanitizer")) {
        fprintf(stderr, "%s\n", text);
        free(text);
        fail_msg("the validation layer or a sanitizer spoke in `%s`", cmd);
    }
    if (out)
        *out = text;
    else
        free(text);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

#endif
