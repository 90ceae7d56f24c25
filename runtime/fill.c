/*
 * fill.c — random buffer contents as a kernel's `init` says (kc.yaml):
 * uniform in [-1, 1) unless told otherwise, never zeros, reproducible from
 * a seed. kc run, kc tune and kc bench all fill inputs this way.
 */
#include "rt_private.h"

#include <math.h>
#include <string.h>

/* xorshift64*: seeded by the caller, so inputs are reproducible */
static uint64_t next(uint64_t *s)
{
    *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

static double unit(uint64_t *r) /* [0, 1) */
{
    return (double)(next(r) >> 11) / 9007199254740992.0;
}

static double normal(uint64_t *r)
{
    double u = unit(r), v = unit(r);
    return sqrt(-2 * log(1 - u)) * cos(6.283185307179586 * v);
}

/* Lane c of element i of n, for float-like types. */
static double float_value(kcrt_init init, size_t i, size_t n, size_t c, uint64_t *r)
{
    /* An FFT's twiddle table, computed in double and rounded once as a
     * host computes it: variants that use it differently agree only on
     * the true table, not on random numbers. */
    double angle = 6.283185307179586 * (double)(i % n) / (double)n;
    switch (init) {
    case KCRT_INIT_TWIDDLE: return c % 2 ? -sin(angle) : cos(angle);
    case KCRT_INIT_NORMAL: return normal(r);
    case KCRT_INIT_POSITIVE: return 1 - unit(r); /* (0, 1] */
    case KCRT_INIT_ONES: return 1;
    case KCRT_INIT_INDEX: return (double)i;
    default: return 2 * unit(r) - 1;
    }
}

static int64_t int_value(kcrt_init init, size_t i, uint64_t *r, bool is_unsigned)
{
    switch (init) {
    case KCRT_INIT_NORMAL: {
        double v = llround(100 * normal(r));
        return is_unsigned ? (int64_t)fabs(v) : (int64_t)v;
    }
    case KCRT_INIT_POSITIVE: return 1 + (int64_t)(next(r) % 1000);
    case KCRT_INIT_ONES: return 1;
    case KCRT_INIT_INDEX: return (int64_t)i;
    default: return is_unsigned ? (int64_t)(next(r) % 1000) : (int64_t)(next(r) % 2000) - 1000;
    }
}

void kcrt_fill(const kcrt_param_info *p, void *buffer, size_t n, uint64_t *r)
{
    unsigned char *data = buffer;
    if (!*r)
        *r = 0x9e3779b97f4a7c15ull; /* xorshift must not start at 0 */
    size_t lanes = 1;
    char kind = 'f';
#define X(name, text, bytes, ln, k)                                                                          \
    if (p->type == KCRT_TYPE_##name)                                                                         \
        lanes = ln, kind = k;
    KCRT_TYPES(X)
#undef X
    size_t comp = p->elem_bytes / lanes;
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < lanes; c++) {
            unsigned char *at = data + (i * lanes + c) * comp;
            if (kind == 'f') {
                float f = (float)float_value(p->init, i, n, c, r);
                memcpy(at, &f, 4);
            } else if (kind == 'h') {
                uint16_t h = kcrt_f32_to_f16((float)float_value(p->init, i, n, c, r));
                memcpy(at, &h, 2);
            } else if (kind == 'b') {
                uint32_t b = p->init == KCRT_INIT_ONES || p->init == KCRT_INIT_POSITIVE ? 1
                             : p->init == KCRT_INIT_INDEX                               ? (uint32_t)(i & 1)
                                                          : (uint32_t)(next(r) & 1);
                memcpy(at, &b, 4);
            } else {
                int64_t v = int_value(p->init, i, r, kind == 'u');
                if (comp == 8)
                    memcpy(at, &v, 8);
                else {
                    int32_t w = (int32_t)v;
                    memcpy(at, &w, 4);
                }
            }
        }
}

