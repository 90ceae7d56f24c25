/*
 * random.c — uniformly random valid points, without replacement.
 *
 * The baseline every smarter strategy must beat. It has no parameters and
 * no bias: on spaces where good points are plentiful it is hard to beat,
 * and where they are rare (a few per thousand on the convolution and
 * GEMM spaces) it needs far more than a tenth of the space to find one.
 */
#include "kc_tune.h"

void kc_tune_random(kc_tune_ctx *ctx)
{
    int *p = kc_tune_alloc_points(ctx, 1);
    while (!kc_tune_done(ctx) && kc_tune_random_point(ctx, p))
        kc_tune_eval(ctx, p);
}
