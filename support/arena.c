/*
 * arena.c — bump allocation for one compilation, plus the growable vec and
 * buf containers. An arena hands out zeroed, 16-byte aligned memory from
 * chunks that double in size; nothing is freed until kc_arena_free.
 */
#include "kc_support.h"

#include <stdlib.h>
#include <string.h>

struct kc_arena_chunk {
    kc_arena_chunk *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
};

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        /* Out of memory is not a user error we can report in place: the
         * compiler's memory is bounded by its input, so this is fatal. */
        fputs("kc: out of memory\n", stderr);
        abort();
    }
    return p;
}

void kc_arena_init(kc_arena *a)
{
    a->head = NULL;
    a->used_total = 0;
}

void kc_arena_free(kc_arena *a)
{
    kc_arena_chunk *c = a->head;
    while (c) {
        kc_arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
    a->used_total = 0;
}

void *kc_arena_alloc(kc_arena *a, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    kc_arena_chunk *c = a->head;
    if (!c || c->size - c->used < size) {
        size_t want = c ? c->size * 2 : 64 * 1024;
        if (want > 64u << 20)
            want = 64u << 20;
        if (want < size)
            want = size;
        c = xmalloc(sizeof(*c) + want);
        c->size = want;
        c->used = 0;
        c->next = a->head;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += size;
    a->used_total += size;
    memset(p, 0, size);
    return p;
}

char *kc_arena_strndup(kc_arena *a, const char *s, size_t n)
{
    char *p = kc_arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *kc_arena_strdup(kc_arena *a, const char *s)
{
    return kc_arena_strndup(a, s, strlen(s));
}

char *kc_arena_printf(kc_arena *a, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = kc_arena_alloc(a, (size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}

void kc_vec_push(kc_arena *a, kc_vec *v, void *item)
{
    if (v->len == v->cap) {
        int cap = v->cap ? v->cap * 2 : 8;
        void **items = kc_arena_alloc(a, sizeof(void *) * (size_t)cap);
        if (v->len)
            memcpy(items, v->items, sizeof(void *) * (size_t)v->len);
        v->items = items;
        v->cap = cap;
    }
    v->items[v->len++] = item;
}

void kc_buf_reserve(kc_buf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
        fputs("kc: out of memory\n", stderr);
        abort();
    }
    b->data = p;
    b->cap = cap;
}

void kc_buf_append(kc_buf *b, const void *data, size_t n)
{
    kc_buf_reserve(b, n);
    if (n)
        memcpy(b->data + b->len, data, n);
    b->len += n;
    b->data[b->len] = 0;
}

void kc_buf_puts(kc_buf *b, const char *s)
{
    kc_buf_append(b, s, strlen(s));
}

void kc_buf_putc(kc_buf *b, char c)
{
    kc_buf_append(b, &c, 1);
}

void kc_buf_vprintf(kc_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    kc_buf_reserve(b, (size_t)n);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    b->len += (size_t)n;
}

void kc_buf_printf(kc_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kc_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

void kc_buf_free(kc_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

char *kc_buf_take(kc_buf *b)
{
    if (!b->data)
        kc_buf_reserve(b, 0), b->data[0] = 0;
    char *p = b->data;
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}

static uint64_t hash_key(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

static int map_slot(const kc_map *m, const char *key, size_t n)
{
    int mask = m->cap - 1;
    int i = (int)(hash_key(key, n) & (uint64_t)mask);
    while (m->keys[i] && !(strncmp(m->keys[i], key, n) == 0 && m->keys[i][n] == 0))
        i = (i + 1) & mask;
    return i;
}

void *kc_map_getn(const kc_map *m, const char *key, size_t n)
{
    if (!m->cap)
        return NULL;
    int i = map_slot(m, key, n);
    return m->keys[i] ? m->vals[i] : NULL;
}

void *kc_map_get(const kc_map *m, const char *key)
{
    return kc_map_getn(m, key, strlen(key));
}

void kc_map_put(kc_arena *a, kc_map *m, const char *key, void *val)
{
    if ((m->len + 1) * 2 > m->cap) {
        kc_map old = *m;
        m->cap = old.cap ? old.cap * 2 : 16;
        m->len = 0;
        m->keys = kc_arena_alloc(a, sizeof(char *) * (size_t)m->cap);
        m->vals = kc_arena_alloc(a, sizeof(void *) * (size_t)m->cap);
        for (int i = 0; i < old.cap; i++)
            if (old.keys[i])
                kc_map_put(a, m, old.keys[i], old.vals[i]);
    }
    size_t n = strlen(key);
    int i = map_slot(m, key, n);
    if (!m->keys[i]) {
        m->keys[i] = key;
        m->len++;
    }
    m->vals[i] = val;
}
