/*
 * fuzz_bundle.c — the libFuzzer target for libkcrt's bundle loader.
 *
 * Each input is a SQLite image: it is written to a file and loaded with
 * kcrt_bundle_load on a Vulkan context (lavapipe in CI), and a bundle that
 * loads is walked: every kernel's description, its handle and the variant
 * a launch at a middling shape would choose. Nothing is compiled or run on
 * the device, so an input costs what the loader costs. The fuzzer looks
 * for crashes, hangs, leaks and sanitizer reports; KCRT_ERROR_BAD_BUNDLE
 * with a message is a fine answer, and no other status may come back.
 * Seeds: the bundles kc builds (tests/fuzz/run_bundle.sh makes them).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kc/kcrt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static kcrt_context *ctx;
static kcrt_buffer *buf;
static char path[64];

static void close_all(void)
{
    unlink(path);
    kcrt_close(ctx); /* the buffer with it */
}

static bool setup(void)
{
    if (ctx)
        return true;
    atexit(close_all);
    if (kcrt_open(&ctx, NULL) != KCRT_OK) {
        fprintf(stderr, "fuzz_bundle: no device: %s\n", kcrt_error(ctx));
        abort();
    }
    if (kcrt_buffer_create(ctx, 4096, &buf) != KCRT_OK)
        abort();
    snprintf(path, sizeof(path), "/tmp/kc-fuzz-bundle-%ld.kcb", (long)getpid());
    return true;
}

/* What a launch of k would choose at a shape of 1000 in every integer. */
static void choose(kcrt_kernel *k, const kcrt_kernel_info *ki)
{
    kcrt_arg args[64];
    int n = ki->nparams < 64 ? ki->nparams : 64;
    for (int i = 0; i < n; i++) {
        const kcrt_param_info *p = &ki->params[i];
        if (p->kind == KCRT_PARAM_BUFFER)
            args[i] = KCRT_BUF(buf);
        else if (p->type == KCRT_TYPE_INT)
            args[i] = KCRT_I32(1000);
        else if (p->type == KCRT_TYPE_UINT)
            args[i] = KCRT_U32(1000);
        else if (p->type == KCRT_TYPE_BOOL)
            args[i] = KCRT_BOOL(true);
        else if (p->type == KCRT_TYPE_HALF)
            args[i] = KCRT_F16(0x3c00);
        else
            args[i] = KCRT_F32(1.0f);
    }
    const char *variant, *why;
    kcrt_kernel_choose(k, args, (size_t)n, &variant, &why);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size)
        abort();
    fclose(f);
    kcrt_bundle *b = NULL;
    kcrt_status s = kcrt_bundle_load(ctx, path, &b);
    if (s != KCRT_OK && s != KCRT_ERROR_BAD_BUNDLE) {
        fprintf(stderr, "fuzz_bundle: a damaged bundle gave %s: %s\n", kcrt_status_name(s), kcrt_error(ctx));
        abort();
    }
    if (s != KCRT_OK && !kcrt_error(ctx)[0])
        abort(); /* refused without saying why */
    for (int i = 0; b && i < kcrt_bundle_kernel_count(b); i++) {
        const kcrt_kernel_info *ki = kcrt_bundle_kernel_info(b, i);
        kcrt_kernel *k;
        if (kcrt_kernel_get(b, ki->name, &k) == KCRT_OK)
            choose(k, ki);
    }
    kcrt_bundle_free(b);
    unlink(path);
    return 0;
}
