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
#include <errno.h> /* program_invocation_short_name */
#include <fnmatch.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif
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

#if !defined(_WIN32)
/* What the test is doing now (kc_test_at), for the watchdog's report. */
static char kc_test_where[512] = "(the test did not say: kc_test_at)";

static inline void kc_test_at(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void kc_test_at(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(kc_test_where, sizeof(kc_test_where), fmt, ap);
    va_end(ap);
}

static void *kc_test_watchdog_main(void *arg)
{
    unsigned left = (unsigned)(uintptr_t)arg;
    while (left > 0)
        left = sleep(left);
    fprintf(stderr, "\n%s: still running after %u s (KC_TEST_WATCHDOG); last at: %s\nevery thread's stack:\n",
            program_invocation_short_name, (unsigned)(uintptr_t)arg, kc_test_where);
#if defined(__linux__)
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0); /* where Yama lets only ancestors attach */
#endif
    char cmd[256];
    snprintf(cmd, sizeof(cmd),
             "if command -v gdb >/dev/null; then timeout 120 gdb -p %d -batch -nx -ex 'info threads' "
             "-ex 'thread apply all bt' </dev/null 1>&2; else echo '(no gdb here: no stacks)' 1>&2; fi",
             (int)getpid());
    if (system(cmd) != 0)
        fprintf(stderr, "(gdb could not read the stacks)\n");
    fprintf(stderr, "%s: left to run into ctest's timeout\n", program_invocation_short_name);
    return NULL;
}

/* KC_TEST_WATCHDOG=SECONDS (kc_add_test sets it a minute inside ctest's
 * TIMEOUT): a program still running after that long prints where it is
 * and every thread's stack, so that a hang leaves its cause in the log
 * instead of ctest's bare "Timeout" (a sanitizer run of
 * test_kernels_device hung once in CI and never again in 5 x 3 runs by
 * hand). It does not end the program: the timeout does, and
 * scripts/test.sh has ctest run a timed-out test once more. */
static inline void kc_test_watchdog_start(void)
{
    const char *s = getenv("KC_TEST_WATCHDOG");
    long seconds = s ? strtol(s, NULL, 10) : 0;
    pthread_t t;
    if (seconds > 0 && pthread_create(&t, NULL, kc_test_watchdog_main, (void *)(uintptr_t)seconds) == 0)
        pthread_detach(t);
}
#else
static inline void kc_test_at(const char *fmt, ...)
{
    (void)fmt;
}

static inline void kc_test_watchdog_start(void)
{
}
#endif

/* Runs the cases of all[] whose names match a pattern of argv[1..]
 * (fnmatch: "test_conv*"), or every case without patterns; a pattern that
 * matches none is an error, so a renamed case cannot silently stop
 * running. This is how ctest runs one case per test (kc_add_test CASES):
 * the cases of a long program run in parallel, each under its own
 * timeout, and slow ones carry the "exhaustive" label. */
static inline int kc_test_run(const char *group, const struct CMUnitTest *all, size_t n, int argc, char **argv,
                              CMFixtureFunction setup, CMFixtureFunction teardown)
{
    kc_test_watchdog_start();
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
/* Runs one command through popen; its status, and in *text all it wrote. */
static inline int kc_test_popen(const char *command, char **text_out)
{
    FILE *p = popen(command, "r");
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
    *text_out = text;
    return pclose(p);
}

/* Wine's cmd.exe reports a CreateProcess that failed for a moment (seen once
 * in CI, on a busy wineserver) as "Can't recognize '<the whole command>' as
 * an internal or external command" with exit 9009. kc never exits 9009, so
 * such a run says nothing about kc: it is started again, up to three times. */
static inline bool kc_test_launch_failed(int status, const char *text)
{
#if defined(_WIN32)
    return status == 9009 && strstr(text, "as an internal or external command");
#else
    (void)status;
    (void)text;
    return false;
#endif
}

static inline int kc_test_sh(char **out, const char *fmt, ...)
{
    char cmd[4096], full[4200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    snprintf(full, sizeof(full), "%s 2>&1", cmd);
    char *text;
    int status = kc_test_popen(full, &text);
    for (int again = 0; again < 3 && kc_test_launch_failed(status, text); again++) {
        fprintf(stderr, "kc_test_sh: the shell could not start `%s` (exit 9009); starting it again\n", cmd);
        free(text);
        status = kc_test_popen(full, &text);
    }
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
