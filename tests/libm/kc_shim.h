/*
 * kc_shim.h — the kc built-ins that compiler/libm/kc_math.kc uses, as C,
 * so that the library can be compiled and measured on the host:
 *
 *   #include "kc_shim.h"
 *   #include "../../compiler/libm/kc_math.kc"
 *
 * Each is what the device does: bit reinterpretation, the high half of a
 * 32x32-bit product, and the exact libm functions (fabsf floorf copysignf
 * fminf fmaxf). Build with -ffp-contract=off (the project default) so
 * that float arithmetic is plain correctly rounded +, -, *; the
 * _contract variant of the tests builds with fused multiply-adds instead,
 * to show the results stay within bounds either way.
 */
#ifndef KC_SHIM_H
#define KC_SHIM_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

typedef unsigned int uint;

static inline uint kc_as_uint(float x)
{
    uint u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline int kc_as_int(float x)
{
    int i;
    memcpy(&i, &x, sizeof i);
    return i;
}

static inline float kc_as_float(uint u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

static inline uint kc_mul_hi(uint a, uint b)
{
    return (uint)(((uint64_t)a * b) >> 32);
}

#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))

#endif
