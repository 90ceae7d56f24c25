/* common.h — small helpers shared by several corpus kernels.
 * Protected by a classic include guard. */
#ifndef CORPUS_COMMON_H
#define CORPUS_COMMON_H

#define CORPUS_PI 3.14159265f
#define CORPUS_TWO_PI 6.28318531f
#define CORPUS_EPS 1e-5f

static float sq(float v) { return v * v; }

static float lerpf(float a, float b, float t) { return a + (b - a) * t; }

/* Index into [0, n) with wrap-around for negative i (reflect-free padding). */
static int wrap_index(int i, int n)
{
    int r = i % n;
    return r < 0 ? r + n : r;
}

#endif /* CORPUS_COMMON_H */
