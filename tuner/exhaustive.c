/*
 * exhaustive.c — every valid point, in lexicographic order (the last
 * tunable varies fastest, as Kernel Tuner and `kc variants` list them).
 *
 * The reference: with a budget of at least the valid space it finds the
 * true optimum, and the default strategy picks it then. With a smaller
 * budget it only ever sees one corner of the space, so it is a poor
 * choice there. A space too large to enumerate is walked point by point
 * through the product, which the ctx stops if it stalls in a long run of
 * invalid points.
 */
#include "kc_tune.h"

#include <string.h>

static void walk_product(kc_tune_ctx *ctx, int *p)
{
    const kc_tune_space *s = kc_tune_space_of(ctx);
    memset(p, 0, sizeof(int) * (size_t)s->ndims);
    while (!kc_tune_done(ctx)) {
        kc_tune_eval(ctx, p);
        int d = s->ndims - 1; /* odometer step */
        while (d >= 0 && ++p[d] == s->nvalues[d])
            p[d--] = 0;
        if (d < 0)
            return;
    }
}

void kc_tune_exhaustive(kc_tune_ctx *ctx)
{
    int *p = kc_tune_alloc_points(ctx, 1);
    if (kc_tune_valid_count(ctx) < 0) {
        walk_product(ctx, p);
        return;
    }
    for (long i = 0; !kc_tune_done(ctx) && kc_tune_valid_point(ctx, i, p); i++)
        kc_tune_eval(ctx, p);
}
