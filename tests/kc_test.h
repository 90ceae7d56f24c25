/*
 * kc_test.h — what kc's cmocka tests share: the includes cmocka needs,
 * paths into the source tree, and ASSERT-style helpers.
 */
#ifndef KC_TEST_H
#define KC_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* A test that cannot run here (no device, no tool) exits with this. */
#define KC_TEST_SKIP 77

/* Path of a file in the source tree, in a static buffer per call site. */
#define KC_SRC(rel) (KC_SOURCE_DIR "/" rel)

#define ASSERT_CONTAINS(haystack, needle)                                                          \
    do {                                                                                           \
        const char *h_ = (haystack), *n_ = (needle);                                               \
        if (!h_ || !strstr(h_, n_))                                                                \
            fail_msg("expected to find \"%s\" in:\n%s", n_, h_ ? h_ : "(null)");                  \
    } while (0)

#endif
