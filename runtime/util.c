/*
 * util.c — the runtime's small helpers: an arena for a bundle's memory,
 * messages and logging, the type table, the postfix-to-infix printer used in
 * messages, half-float conversions.
 */
#include "rt_private.h"

#include "kc_iexpr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena ---------------------------------------------------------------------------- */

struct rt_chunk {
    rt_chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

void *rt_alloc(rt_arena *a, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    if (size == 0)
        size = 16;
    rt_chunk *c = a->head;
    if (!c || c->cap - c->used < size) {
        size_t cap = size > 16384 ? size : 16384;
        c = calloc(1, sizeof(rt_chunk) + cap);
        if (!c)
            return NULL;
        c->cap = cap;
        c->next = a->head;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += size;
    return p;
}

char *rt_strdup(rt_arena *a, const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *p = rt_alloc(a, n);
    if (p)
        memcpy(p, s, n);
    return p;
}

void rt_arena_free(rt_arena *a)
{
    for (rt_chunk *c = a->head, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    a->head = NULL;
}

/* ---- buffer memory ------------------------------------------------------------------------ */

size_t rt_size_class(size_t bytes)
{
    size_t n = bytes ? bytes : 1;
    if (n <= 4096)
        return (n + 255) & ~(size_t)255;
    size_t step = 512;
    while (step * 8 <= n)
        step *= 2;
    return (n + step - 1) / step * step;
}

uint64_t rt_spare_limit(uint64_t device_bytes)
{
    const char *env = getenv("KCRT_BUFFER_SPARE_MB");
    if (env && *env)
        return (uint64_t)strtoull(env, NULL, 10) << 20;
    uint64_t lim = device_bytes / 8;
    return lim < (64u << 20) ? 64u << 20 : lim > (1u << 30) ? 1u << 30 : lim;
}

/* ---- messages --------------------------------------------------------------------------- */

bool rt_printf(char *dst, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(dst, len, fmt, ap);
    va_end(ap);
    return n >= 0 && (size_t)n < len;
}

kcrt_status rt_fail(kcrt_context *ctx, kcrt_status s, const char *fmt, ...)
{
    if (!ctx)
        return s;
    char msg[RT_MSG];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    memcpy(ctx->err, msg, sizeof(msg));
    rt_log(ctx, "error: %s", msg);
    return s;
}

bool rt_env_debug(void)
{
    const char *l = getenv("KCRT_LOG");
    return l && (strcmp(l, "debug") == 0 || strcmp(l, "DEBUG") == 0);
}

void rt_vlogf(const char *fmt, va_list ap)
{
    char line[RT_MSG + 64];
    vsnprintf(line, sizeof(line), fmt, ap);
    fprintf(stderr, "kcrt: %s\n", line); /* one call, so lines from threads do not mix */
}

void rt_log(const kcrt_context *ctx, const char *fmt, ...)
{
    if (!ctx || !ctx->debug)
        return;
    va_list ap;
    va_start(ap, fmt);
    rt_vlogf(fmt, ap);
    va_end(ap);
}

/* ---- types --------------------------------------------------------------------------------- */

static const struct {
    const char *name;
    size_t bytes;
    char kind;
} types[KCRT_NTYPES] = {
#define X(name, text, bytes, lanes, kind) [KCRT_TYPE_##name] = {text, bytes, kind},
    KCRT_TYPES(X)
#undef X
};

/* kc_lang.h's scalar ABI, by the spelling kcrt_type shares with it. */
static const struct {
    const char *name;
    int arg_bytes, push_bytes;
} abi[] = {
#define X(n, s, b, f, sg, by, ab, pb) {s, ab, pb},
    KC_SCALARS(X)
#undef X
};

bool rt_scalar_slot_ok(kcrt_type t, size_t bytes)
{
    for (size_t i = 0; i < RT_COUNT(abi); i++)
        if (strcmp(abi[i].name, rt_type_name(t)) == 0)
            return abi[i].arg_bytes > 0 && (bytes == (size_t)abi[i].arg_bytes || bytes == (size_t)abi[i].push_bytes);
    return false;
}

kcrt_type rt_type_from_name(const char *name)
{
    for (int t = 0; t < KCRT_NTYPES; t++)
        if (name && strcmp(types[t].name, name) == 0)
            return (kcrt_type)t;
    return KCRT_NTYPES;
}

size_t rt_type_bytes(kcrt_type t)
{
    return t < KCRT_NTYPES ? types[t].bytes : 0;
}

char rt_type_kind(kcrt_type t)
{
    return t < KCRT_NTYPES ? types[t].kind : '?';
}

const char *rt_type_name(kcrt_type t)
{
    return t < KCRT_NTYPES ? types[t].name : "?";
}

/* ---- postfix to infix, for messages ----------------------------------------------------------- */

void rt_infix(const char *postfix, char *out, size_t len)
{
    kc_iexpr_postfix_to_infix(postfix, false, out, len);
}

/* ---- half floats ------------------------------------------------------------------------------- */

float kcrt_f16_to_f32(uint16_t h)
{
    int sign = h >> 15, exp = (h >> 10) & 31, man = h & 1023;
    float v;
    if (exp == 0)
        v = ldexpf((float)man, -24);
    else if (exp == 31)
        v = man ? NAN : INFINITY;
    else
        v = ldexpf((float)(man | 1024), exp - 25);
    return sign ? -v : v;
}

uint16_t kcrt_f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t ax = x & 0x7fffffff;
    if (ax > 0x7f800000)
        return sign | 0x7e00; /* NaN */
    if (ax >= 0x477ff000)     /* rounds to 65520 or more: infinity */
        return sign | 0x7c00;
    if (ax < 0x38800000) { /* a subnormal half (or zero): units of 2^-24 */
        float a;
        memcpy(&a, &ax, 4);
        return sign | (uint16_t)lrintf(a * 16777216.0f); /* exact scale; rint rounds to even */
    }
    /* normal: drop 13 mantissa bits, rounding to nearest even */
    uint32_t r = ax - 0x38000000; /* rebias the exponent: 127 -> 15 */
    uint32_t keep = r >> 13, rest = r & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (keep & 1)))
        keep++;
    return sign | (uint16_t)keep;
}
