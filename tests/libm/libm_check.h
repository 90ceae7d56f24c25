/*
 * libm_check.h — what the libm tests and the exhaustive checker share:
 * compiler/libm/kc_math.kc compiled as C (through kc_shim.h), the list of
 * its one-argument functions with their double-precision references, and
 * the error measure.
 *
 * The error of a result is |got - exact| in units of the last place of
 * the exact value's float format (2^-149 below 2^-126), with the exact
 * value taken as the double result of glibc (within about 1 ulp of
 * double, 2^-29 of a float ulp). A correctly rounded result is within
 * 0.5. NaN against NaN is no error; NaN against a number, or infinity
 * against a finite exact value that does not round to it, is an error of
 * LIBM_WRONG.
 */
#ifndef LIBM_CHECK_H
#define LIBM_CHECK_H

#include "kc_shim.h"

#include "../../compiler/libm/kc_math.kc"

#define LIBM_WRONG 1e9

static inline double libm_ulp_error(float got, double exact)
{
    if (isnan(exact) || isnan(got))
        return isnan(exact) && isnan(got) ? 0.0 : LIBM_WRONG;
    if (isinf(exact) || isinf(got))
        return got == (float)exact ? 0.0 : LIBM_WRONG;
    int e;
    frexp(exact, &e); /* exact = m 2^e, 1/2 <= |m| < 1 */
    if (e - 1 < -126)
        e = -125;
    if (e - 1 > 127)
        e = 128;
    return fabs((double)got - exact) / ldexp(1.0, e - 1 - 23);
}

static double libm_rsqrt(double x)
{
    return 1.0 / sqrt(x);
}

typedef struct libm_fn {
    const char *name;
    float (*fn)(float);
    double (*ref)(double);
    double bound; /* the largest error the tests accept, in ulp (docs/math.md) */
} libm_fn;

static const libm_fn libm_fns[] = {
    {"sqrtf", __kc_sqrtf, sqrt, 0.5}, {"rsqrtf", __kc_rsqrtf, libm_rsqrt, 1.0},
    {"expf", __kc_expf, exp, 1.5},    {"exp2f", __kc_exp2f, exp2, 1.5},
    {"logf", __kc_logf, log, 1.0},    {"log2f", __kc_log2f, log2, 1.0},
    {"sinf", __kc_sinf, sin, 1.0},    {"cosf", __kc_cosf, cos, 1.0},
    {"tanf", __kc_tanf, tan, 1.5},    {"tanhf", __kc_tanhf, tanh, 1.5},
    {"erff", __kc_erff, erf, 1.5},    {"log10f", __kc_log10f, log10, 1.0},
};
#define LIBM_NFNS ((int)(sizeof libm_fns / sizeof libm_fns[0]))

/* A fixed-seed generator of 32-bit patterns (xorshift32; never 0). */
static inline uint32_t libm_next(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

#endif
