/*
 * launch_c.c BUNDLE KERNEL — host time per kcrt_launch from C: saxpy-shaped
 * launches (n, a, x, y) of a small problem, finished every 100, in rounds;
 * prints the median round's microseconds per launch. launch_py.py does the
 * same through the kcrt Python package; run.sh runs both, interleaved.
 */
#include <kc/kcrt.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { N = 256, LAUNCHES = 1000, ROUNDS = 9 };

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: launch_c BUNDLE KERNEL\n");
        return 2;
    }
    kcrt_context *ctx;
    kcrt_bundle *b;
    kcrt_kernel *k;
    kcrt_buffer *x, *y;
    if (kcrt_open(&ctx, NULL) != KCRT_OK || kcrt_bundle_load(ctx, argv[1], &b) != KCRT_OK ||
        kcrt_kernel_get(b, argv[2], &k) != KCRT_OK || kcrt_buffer_create(ctx, N * 4, &x) != KCRT_OK ||
        kcrt_buffer_create(ctx, N * 4, &y) != KCRT_OK) {
        fprintf(stderr, "launch_c: %s\n", kcrt_error(ctx));
        return 1;
    }
    kcrt_arg args[] = {KCRT_I32(N), KCRT_F32(1.0f), KCRT_BUF(x), KCRT_BUF(y)};
    double per[ROUNDS];
    for (int r = -1; r < ROUNDS; r++) { /* round -1 warms up */
        double t0 = now_us();
        for (int i = 0; i < LAUNCHES; i++) {
            if (kcrt_launch(k, args, 4) != KCRT_OK) {
                fprintf(stderr, "launch_c: %s\n", kcrt_error(ctx));
                return 1;
            }
            if (i % 100 == 99)
                kcrt_finish(ctx);
        }
        kcrt_finish(ctx);
        if (r >= 0)
            per[r] = (now_us() - t0) / LAUNCHES;
    }
    qsort(per, ROUNDS, sizeof(double), by_value);
    printf("%.3f\n", per[ROUNDS / 2]);
    kcrt_close(ctx);
    return 0;
}
