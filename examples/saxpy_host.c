/*
 * saxpy_host.c — a host program that uses libkcrt through its public
 * header alone: load a bundle, run saxpy on the best device, check the
 * result against a plain C loop.
 *
 *   kc build examples/saxpy -o saxpy.kcb
 *   saxpy_host saxpy.kcb [n]
 *
 * Exit status: 0 when the device's result matches, 1 when it does not or
 * something failed, 77 when there is no device to run on (what test
 * harnesses read as "skipped").
 */
#include <kc/kcrt.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(kcrt_context *ctx, const char *what)
{
    fprintf(stderr, "saxpy_host: %s: %s\n", what, kcrt_error(ctx));
    kcrt_close(ctx);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: saxpy_host BUNDLE.kcb [n]\n");
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 100000;
    if (n <= 0) {
        fprintf(stderr, "saxpy_host: n must be positive\n");
        return 2;
    }
    const float a = 2.5f;

    kcrt_context *ctx;
    kcrt_status s = kcrt_open(&ctx, NULL);
    if (s == KCRT_ERROR_NO_DEVICE || s == KCRT_ERROR_NO_BACKEND) {
        fprintf(stderr, "saxpy_host: skipped: %s\n", kcrt_error(ctx));
        kcrt_close(ctx);
        return 77;
    }
    if (s != KCRT_OK)
        return fail(ctx, "kcrt_open");
    printf("device: %s (%s)\n", kcrt_device_name(ctx), kcrt_backend_name(ctx));

    kcrt_bundle *b;
    kcrt_kernel *k;
    if (kcrt_bundle_load(ctx, argv[1], &b) != KCRT_OK)
        return fail(ctx, "kcrt_bundle_load");
    if (kcrt_kernel_get(b, "saxpy", &k) != KCRT_OK)
        return fail(ctx, "kcrt_kernel_get");

    float *x = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)n);
    float *out = malloc(sizeof(float) * (size_t)n);
    if (!x || !y || !out)
        return fail(ctx, "out of memory");
    srand(1);
    for (int i = 0; i < n; i++) {
        x[i] = (float)((double)rand() / RAND_MAX * 2 - 1);
        y[i] = (float)((double)rand() / RAND_MAX * 2 - 1);
    }

    kcrt_buffer *bx, *by;
    size_t bytes = sizeof(float) * (size_t)n;
    if (kcrt_buffer_create(ctx, bytes, &bx) != KCRT_OK || kcrt_buffer_create(ctx, bytes, &by) != KCRT_OK)
        return fail(ctx, "kcrt_buffer_create");
    if (kcrt_buffer_write(bx, 0, x, bytes) != KCRT_OK || kcrt_buffer_write(by, 0, y, bytes) != KCRT_OK)
        return fail(ctx, "kcrt_buffer_write");

    kcrt_arg args[] = {KCRT_I32(n), KCRT_F32(a), KCRT_BUF(bx), KCRT_BUF(by)};
    const char *variant, *why; /* what libkcrt will launch, and why: tuned or the default */
    if (kcrt_kernel_choose(k, args, 4, &variant, &why) == KCRT_OK)
        printf("variant: %s (%s)\n", *variant ? variant : "(no tunables)", why);
    if (kcrt_launch(k, args, 4) != KCRT_OK)
        return fail(ctx, "kcrt_launch");
    if (kcrt_finish(ctx) != KCRT_OK)
        return fail(ctx, "kcrt_finish");
    if (kcrt_buffer_read(by, 0, out, bytes) != KCRT_OK)
        return fail(ctx, "kcrt_buffer_read");

    int bad = 0;
    for (int i = 0; i < n; i++) {
        /* a device may fuse a * x + y into one rounding: allow that much */
        float want = a * x[i] + y[i];
        if (!(fabsf(out[i] - want) <= 1e-6f * (fabsf(want) + 1.0f)) && bad++ < 5)
            fprintf(stderr, "saxpy_host: y[%d] = %.9g, expected %.9g\n", i, out[i], want);
    }
    printf("saxpy of %d elements: %s (y[0] = %.6f, y[%d] = %.6f)\n", n, bad ? "WRONG" : "correct", out[0],
           n - 1, out[n - 1]);

    free(x);
    free(y);
    free(out);
    kcrt_close(ctx); /* frees the bundle and the buffers too */
    return bad ? 1 : 0;
}
