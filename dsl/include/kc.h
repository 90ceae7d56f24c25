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

static inline float2 kc_float2(float x, float y) { return (float2){x, y}; }
static inline float4 kc_float4(float x, float y, float z, float w) { return (float4){x, y, z, w}; }
static inline half2 kc_half2(half x, half y) { return (half2){x, y}; }
static inline half4 kc_half4(half x, half y, half z, half w) { return (half4){x, y, z, w}; }
static inline int2 kc_int2(int x, int y) { return (int2){x, y}; }
static inline int4 kc_int4(int x, int y, int z, int w) { return (int4){x, y, z, w}; }
static inline uint2 kc_uint2(uint x, uint y) { return (uint2){x, y}; }
static inline uint4 kc_uint4(uint x, uint y, uint z, uint w) { return (uint4){x, y, z, w}; }

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
#define kc_atomic_add(p, v) (*(p) += (v))
#define kc_atomic_min(p, v) (*(p) = *(p) < (v) ? *(p) : (v))
#define kc_atomic_max(p, v) (*(p) = *(p) > (v) ? *(p) : (v))
#define kc_atomic_xchg(p, v) (*(p) = (v))
#define kc_atomic_cas(p, cmp, v) (*(p) == (cmp) ? (*(p) = (v)) : *(p))

/* ---- math: accurate (within 4 ulp; sqrtf correctly rounded) -------------- */

float sqrtf(float);
float rsqrtf(float);
float expf(float);
float exp2f(float);
float logf(float);
float log2f(float);
float powf(float, float);
float sinf(float);
float cosf(float);
float tanf(float);
float tanhf(float);
float erff(float);
float fabsf(float);
float floorf(float);
float ceilf(float);
float roundf(float);
float fminf(float, float);
float fmaxf(float, float);
float fmaf(float, float, float);
float copysignf(float, float);
#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))
#define clamp(x, lo, hi) min(max((x), (lo)), (hi))
static inline int kc_cdiv(int a, int b) { return (a + b - 1) / b; }

/* ---- math: fast (the device's native instructions) ------------------------ */

float kc_fast_sqrtf(float);
float kc_fast_rsqrtf(float);
float kc_fast_expf(float);
float kc_fast_exp2f(float);
float kc_fast_logf(float);
float kc_fast_log2f(float);
float kc_fast_powf(float, float);
float kc_fast_sinf(float);
float kc_fast_cosf(float);
float kc_fast_tanf(float);
float kc_fast_tanhf(float);
float kc_fast_divf(float, float);

/* ---- bits ---------------------------------------------------------------- */

uint kc_as_uint(float);
int kc_as_int(float);
float kc_as_float(uint);
uint kc_mul_hi(uint, uint);

#endif /* __KC__ */
#endif /* KC_H */
