/*
 * kc.h — include this at the top of every kernel file.
 *
 * kc reads kernel files with its own front end and knows every name below
 * already; for kc this header is empty (it defines __KC__). It exists so
 * that an editor, clangd or `clang -fsyntax-only` understands a kernel file
 * as plain C: the types, the KC_ macros and the built-in functions are
 * declared here with the meaning kc gives them. Nothing here is compiled
 * into a kernel.
 */
#ifndef KC_H
#define KC_H
#ifndef __KC__

#include <stdbool.h>

/* ---- types ----------------------------------------------------------- */

typedef unsigned int uint;
typedef unsigned long ulong;
typedef _Float16 half;
typedef float float2 __attribute__((ext_vector_type(2)));
typedef float float4 __attribute__((ext_vector_type(4)));
typedef half half2 __attribute__((ext_vector_type(2)));
typedef half half4 __attribute__((ext_vector_type(4)));
typedef int int2 __attribute__((ext_vector_type(2)));
typedef int int4 __attribute__((ext_vector_type(4)));
typedef uint uint2 __attribute__((ext_vector_type(2)));
typedef uint uint4 __attribute__((ext_vector_type(4)));

/* Overloads, as kc has them: clang's overloadable attribute lets an
 * editor see kc_float4(x) (every component x) beside kc_float4(x, y, z, w),
 * and the math functions on half and on vectors (per component). */
#define KC_OVL __attribute__((overloadable))
#define KC_CTOR(V, T)                                                                              \
    static inline V KC_OVL kc_##V(T x) { return (V)(x); }
float2 KC_OVL kc_float2(float x, float y);
float4 KC_OVL kc_float4(float x, float y, float z, float w);
half2 KC_OVL kc_half2(half x, half y);
half4 KC_OVL kc_half4(half x, half y, half z, half w);
int2 KC_OVL kc_int2(int x, int y);
int4 KC_OVL kc_int4(int x, int y, int z, int w);
uint2 KC_OVL kc_uint2(uint x, uint y);
uint4 KC_OVL kc_uint4(uint x, uint y, uint z, uint w);
KC_CTOR(float2, float)
KC_CTOR(float4, float)
KC_CTOR(half2, half)
KC_CTOR(half4, half)
KC_CTOR(int2, int)
KC_CTOR(int4, int)
KC_CTOR(uint2, uint)
KC_CTOR(uint4, uint)
/* a vector of as many lanes, converted lane by lane: kc_float4(h) of a
 * half4 (of a float4, itself) */
#define KC_CONV(V, F) \
    static inline V KC_OVL kc_##V(F x) { return __builtin_convertvector(x, V); }
KC_CONV(float2, float2)
KC_CONV(float4, float4)
KC_CONV(half2, half2)
KC_CONV(half4, half4)
KC_CONV(int2, int2)
KC_CONV(int4, int4)
KC_CONV(uint2, uint2)
KC_CONV(uint4, uint4)
KC_CONV(float2, half2)
KC_CONV(float2, int2)
KC_CONV(float2, uint2)
KC_CONV(float4, half4)
KC_CONV(float4, int4)
KC_CONV(float4, uint4)
KC_CONV(half2, float2)
KC_CONV(half2, int2)
KC_CONV(half2, uint2)
KC_CONV(half4, float4)
KC_CONV(half4, int4)
KC_CONV(half4, uint4)
KC_CONV(int2, float2)
KC_CONV(int2, half2)
KC_CONV(int2, uint2)
KC_CONV(int4, float4)
KC_CONV(int4, half4)
KC_CONV(int4, uint4)
KC_CONV(uint2, float2)
KC_CONV(uint2, half2)
KC_CONV(uint2, int2)
KC_CONV(uint4, float4)
KC_CONV(uint4, half4)
KC_CONV(uint4, int4)

/* ---- declarations ------------------------------------------------------ */

/* KC_TUNE(NAME, default, values...): an integer compile-time constant. */
#define KC_TUNE(name, def, ...) enum { name = (def) };
/* KC_REQUIRE(expr): a constraint over tunables; kc drops variants breaking it. */
#define KC_REQUIRE(expr) _Static_assert(1, #expr);
#define KC_KERNEL
#define KC_WORKGROUP(x, y, z)
#define KC_GRID(x, y, z)
#define KC_SHARED static
#define KC_MAY_ALIAS
#define KC_TEXEL_READS(cond)
#define KC_SPECIALIZE(...)
#define KC_UNROLL _Pragma("unroll")

/* ---- work-item built-ins ----------------------------------------------- */

int kc_global_id(int dim);
int kc_local_id(int dim);
int kc_group_id(int dim);
int kc_group_size(int dim);
int kc_num_groups(int dim);
int kc_subgroup_size(void);
int kc_subgroup_id(void);
int kc_subgroup_local_id(void);
void kc_barrier(void);

/* ---- subgroups and atomics (overloaded in kc) --------------------------- */

#define kc_subgroup_add(x) (x)
#define kc_subgroup_min(x) (x)
#define kc_subgroup_max(x) (x)
#define kc_subgroup_shuffle(x, lane) ((void)(lane), (x))
#define kc_subgroup_broadcast(x, lane) ((void)(lane), (x))
#define kc_subgroup_shuffle_up(x, delta) ((void)(delta), (x))
#define kc_subgroup_shuffle_down(x, delta) ((void)(delta), (x))
#define kc_subgroup_shuffle_xor(x, mask) ((void)(mask), (x))
#define kc_subgroup_inclusive_add(x) (x)
#define kc_subgroup_exclusive_add(x) ((x) - (x))
#define kc_atomic_add(p, v) (*(p) += (v))
#define kc_atomic_min(p, v) (*(p) = *(p) < (v) ? *(p) : (v))
#define kc_atomic_max(p, v) (*(p) = *(p) > (v) ? *(p) : (v))
#define kc_atomic_xchg(p, v) (*(p) = (v))
#define kc_atomic_cas(p, cmp, v) (*(p) == (cmp) ? (*(p) = (v)) : *(p))

/* ---- math: accurate (within 4 ulp; sqrtf correctly rounded) -------------- */

/* Each on float and on vectors (per component); kc also takes half, which
 * an editor sees converted to float. */
#define KC_MATH1(f)                                                                                \
    float KC_OVL f(float);                                                                         \
    float2 KC_OVL f(float2);                                                                       \
    float4 KC_OVL f(float4);                                                                       \
    half2 KC_OVL f(half2);                                                                         \
    half4 KC_OVL f(half4);
#define KC_MATH2(f)                                                                                \
    float KC_OVL f(float, float);                                                                  \
    float2 KC_OVL f(float2, float2);                                                               \
    float4 KC_OVL f(float4, float4);                                                               \
    half2 KC_OVL f(half2, half2);                                                                  \
    half4 KC_OVL f(half4, half4);
KC_MATH1(sqrtf)
KC_MATH1(rsqrtf)
KC_MATH1(expf)
KC_MATH1(exp2f)
KC_MATH1(logf)
KC_MATH1(log2f)
KC_MATH1(log10f)
KC_MATH2(powf)
KC_MATH2(fmodf)
KC_MATH2(atan2f)
KC_MATH1(sinf)
KC_MATH1(cosf)
KC_MATH1(tanf)
KC_MATH1(tanhf)
KC_MATH1(erff)
KC_MATH1(fabsf)
KC_MATH1(floorf)
KC_MATH1(ceilf)
KC_MATH1(roundf)
KC_MATH2(fminf)
KC_MATH2(fmaxf)
KC_MATH2(copysignf)
float KC_OVL fmaf(float, float, float);
float2 KC_OVL fmaf(float2, float2, float2);
float4 KC_OVL fmaf(float4, float4, float4);
#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))
#define clamp(x, lo, hi) min(max((x), (lo)), (hi))
static inline int kc_cdiv(int a, int b) { return (a + b - 1) / b; }

/* ---- math: fast (the device's native instructions) ------------------------ */

KC_MATH1(kc_fast_sqrtf)
KC_MATH1(kc_fast_rsqrtf)
KC_MATH1(kc_fast_expf)
KC_MATH1(kc_fast_exp2f)
KC_MATH1(kc_fast_logf)
KC_MATH1(kc_fast_log2f)
KC_MATH2(kc_fast_powf)
KC_MATH1(kc_fast_sinf)
KC_MATH1(kc_fast_cosf)
KC_MATH1(kc_fast_tanf)
KC_MATH1(kc_fast_tanhf)
KC_MATH2(kc_fast_divf)

/* kc_no_contract(e) is e, with each float +, - and * written in it
 * rounded as written: none is fused into an FMA, by kc or by a driver
 * (docs/language.md, "Semantics where GPUs differ from C"). */
KC_MATH1(kc_no_contract)

/* ---- bits ---------------------------------------------------------------- */

/* kc additions: bit reinterpretation and the high half of a product */
uint KC_OVL kc_as_uint(float);
uint2 KC_OVL kc_as_uint(float2);
uint4 KC_OVL kc_as_uint(float4);
int KC_OVL kc_as_int(float);
int2 KC_OVL kc_as_int(float2);
int4 KC_OVL kc_as_int(float4);
int KC_OVL kc_popcount(int);
uint KC_OVL kc_popcount(uint);
int4 KC_OVL kc_popcount(int4);
uint4 KC_OVL kc_popcount(uint4);
int KC_OVL kc_bitreverse(int);
uint KC_OVL kc_bitreverse(uint);
int4 KC_OVL kc_bitreverse(int4);
uint4 KC_OVL kc_bitreverse(uint4);
float KC_OVL kc_as_float(uint);
float KC_OVL kc_as_float(int);
float2 KC_OVL kc_as_float(uint2);
float4 KC_OVL kc_as_float(uint4);
uint kc_mul_hi(uint, uint);

#endif /* __KC__ */

/* ---- constants (kc and C alike): float literals, as C's are double ------ */

#define M_E 2.71828183f
#define M_LOG2E 1.44269504f
#define M_LOG10E 0.434294482f
#define M_LN2 0.693147181f
#define M_LN10 2.30258509f
#define M_PI 3.14159265f
#define M_PI_2 1.57079633f
#define M_PI_4 0.785398163f
#define M_1_PI 0.318309886f
#define M_2_PI 0.636619772f
#define M_SQRT2 1.41421356f
#define M_SQRT1_2 0.707106781f

#endif /* KC_H */
