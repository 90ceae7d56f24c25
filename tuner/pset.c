/*
 * pset.c — a hash set of points with a double each: the run context's
 * record of what it measured (dedup), and replay's table of recorded
 * configurations. Memory comes from the owner's arena; growing leaves the
 * old arrays there, which at most doubles what the set uses.
 */
#include "tune_private.h"

#include <assert.h>
#include <string.h>

static uint64_t hash(const int *p, int n)
{
    uint64_t h = 0x9e3779b97f4a7c15u;
    for (int i = 0; i < n; i++) {
        h ^= (uint32_t)p[i];
        h *= 0xff51afd7ed558ccdu; /* murmur3's finaliser constants mix well */
        h ^= h >> 33;
    }
    return h;
}

void kc_tune_pset_init(kc_tune_pset *s, kc_arena *a, int ndims)
{
    memset(s, 0, sizeof(*s));
    s->arena = a;
    s->ndims = ndims;
}

long kc_tune_pset_find(const kc_tune_pset *s, const int *point)
{
    if (!s->nslots)
        return -1;
    size_t bytes = sizeof(int) * (size_t)s->ndims;
    for (uint64_t i = hash(point, s->ndims);; i++) {
        long e = s->slots[i & (uint64_t)(s->nslots - 1)] - 1;
        if (e < 0)
            return -1;
        if (memcmp(s->points + e * s->ndims, point, bytes) == 0)
            return e;
    }
}

static void place(kc_tune_pset *s, long e)
{
    uint64_t i = hash(s->points + e * s->ndims, s->ndims);
    while (s->slots[i & (uint64_t)(s->nslots - 1)])
        i++;
    s->slots[i & (uint64_t)(s->nslots - 1)] = e + 1;
}

static void grow(kc_tune_pset *s)
{
    long cap = s->cap ? s->cap * 2 : 64;
    int *points = kc_arena_alloc(s->arena, sizeof(int) * (size_t)(cap * s->ndims));
    double *vals = kc_arena_alloc(s->arena, sizeof(double) * (size_t)cap);
    if (s->len) {
        memcpy(points, s->points, sizeof(int) * (size_t)(s->len * s->ndims));
        memcpy(vals, s->vals, sizeof(double) * (size_t)s->len);
    }
    s->points = points, s->vals = vals, s->cap = cap;
    s->nslots = cap * 2; /* load stays at most one half */
    s->slots = kc_arena_alloc(s->arena, sizeof(long) * (size_t)s->nslots);
    for (long e = 0; e < s->len; e++)
        place(s, e);
}

long kc_tune_pset_add(kc_tune_pset *s, const int *point, double val)
{
    assert(kc_tune_pset_find(s, point) < 0);
    if (s->len == s->cap)
        grow(s);
    long e = s->len++;
    memcpy(s->points + e * s->ndims, point, sizeof(int) * (size_t)s->ndims);
    s->vals[e] = val;
    place(s, e);
    return e;
}
