/*
 * transfer.c — where a search starts: what earlier searches of the same
 * kernel found.
 *
 * A kernel's fast variants move little between nearby shapes and between
 * devices of one family (the same tile sizes suit an H100 and an H200;
 * the same workgroup suits 48,000 and 60,000 elements), so a search that
 * starts from them needs fewer evaluations than one that starts from the
 * default. Two sources, both of this kernel's source and this kc:
 *
 *   - the cache: the winners on this device at other shapes, the
 *     TRANSFER_SHAPES nearest to this one (distance: the sum over the
 *     shape's parameters of |log a - log b|, as libkcrt's nearest-shape
 *     rule, DESIGN.md §6);
 *   - the bundle's tuned table: the winner of another device of this
 *     device's family on the same backend, at this shape or else the
 *     nearest one;
 *   - kc.yaml's default for this device's type (`defaults: {cpu: ...}`),
 *     the variant libkcrt launches here untuned.
 *
 * The seeds are measured right after the default variant, before the
 * strategy runs, and the smart strategies start from the fastest of them
 * (kc_tune_space.seeds). A seed that is not valid on this device is
 * skipped. The search then goes on as always, so a bad seed costs one
 * evaluation and nothing else.
 */
#include "device_private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

typedef struct candidate {
    const char *shape, *variant, *from; /* from: "" for this device, else its name */
    double distance;
} candidate;

typedef struct gather {
    td_search *r;
    kc_arena *a;
    candidate *c;
    int n, cap;
} gather;

/* The distance between two shapes ("M=140,N=768"), INFINITY when they do
 * not name the same parameters. */
static double shape_distance(const char *x, const char *y)
{
    double d = 0;
    int nx = 0, ny = 0;
    for (const char *p = x; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL, nx++) {
        const char *eq = strchr(p, '=');
        if (!eq)
            return INFINITY;
        size_t len = (size_t)(eq - p);
        const char *q = y;
        bool found = false;
        for (; q && *q; q = strchr(q, ',') ? strchr(q, ',') + 1 : NULL)
            if (strncmp(q, p, len) == 0 && q[len] == '=') {
                double a = strtod(eq + 1, NULL), b = strtod(q + len + 1, NULL);
                d += a > 0 && b > 0 ? fabs(log(a) - log(b)) : (a == b ? 0 : 1);
                found = true;
                break;
            }
        if (!found)
            return INFINITY;
    }
    for (const char *q = y; q && *q; q = strchr(q, ',') ? strchr(q, ',') + 1 : NULL)
        ny++;
    return nx == ny ? d : INFINITY;
}

/* shape NULL: a seed for every shape (a default per device type). */
static void add(gather *g, const char *shape, const char *variant, const char *from)
{
    int point[65];
    const td_kernel *tk = g->r->tk;
    double d = shape ? shape_distance(g->r->shape, shape) : 0;
    if (isinf(d) || !td_point_of(tk, variant, point) || !tk->space.valid(tk->space.user, point) ||
        memcmp(point, tk->start, sizeof(int) * (size_t)tk->ndims) == 0)
        return;
    for (int i = 0; i < g->n; i++)
        if (strcmp(g->c[i].variant, variant) == 0)
            return;
    if (g->n == g->cap) {
        int cap = g->cap ? 2 * g->cap : 16;
        candidate *c = kc_arena_alloc(g->a, sizeof(candidate) * (size_t)cap);
        if (g->n)
            memcpy(c, g->c, sizeof(candidate) * (size_t)g->n);
        g->c = c, g->cap = cap;
    }
    g->c[g->n++] = (candidate){kc_arena_strdup(g->a, shape ? shape : ""), kc_arena_strdup(g->a, variant),
                               kc_arena_strdup(g->a, from), d};
}

/* The cache's results of this kernel on this device, fastest first: the
 * first ok one of each other shape is that shape's winner. */
static bool from_cache(void *user, const kc_cache_key *k, const kc_cache_result *res)
{
    gather *g = user;
    const td_kernel *tk = g->r->tk;
    if (res->status != KC_RESULT_OK || strcmp(k->shape, g->r->shape) == 0 ||
        strcmp(k->source_hash, tk->prog->source_hash) != 0 || strcmp(k->compiler, g->r->s->measured_by) != 0)
        return true;
    for (int i = 0; i < g->n; i++)
        if (strcmp(g->c[i].shape, k->shape) == 0 && !*g->c[i].from)
            return true; /* that shape's winner is in already */
    add(g, k->shape, k->variant, "");
    return true;
}

static int by_distance(const void *x, const void *y)
{
    const candidate *a = x, *b = y;
    return a->distance < b->distance ? -1 : a->distance > b->distance;
}

/* The device's name in its key ("vulkan:10de:2335:NVIDIA H200:driver"). */
static const char *device_name(kc_arena *a, const char *key)
{
    const char *p = key;
    for (int i = 0; i < 3 && p; i++)
        p = strchr(p, ':') ? strchr(p, ':') + 1 : NULL;
    const char *end = p ? strchr(p, ':') : NULL;
    if (!p || !end)
        return key;
    char *name = kc_arena_alloc(a, (size_t)(end - p) + 1);
    memcpy(name, p, (size_t)(end - p));
    return name;
}

/* The nearest family row of the bundle's tuned table, if any. */
static void from_family(gather *g)
{
    const td_session *s = g->r->s;
    sqlite3 *db = kc_bundle_db(s->b);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "SELECT t.shape, t.variant, t.device_key FROM tuned t JOIN kernels k ON k.id = t.kernel_id "
                           "WHERE k.name = ?1 AND t.device_family = ?2 AND t.backend = ?3 AND t.device_key <> ?4",
                           -1, &st, NULL) != SQLITE_OK)
        return;
    sqlite3_bind_text(st, 1, g->r->tk->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, s->dev->family, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, s->dev->backend, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, s->dev->key, -1, SQLITE_STATIC);
    gather fam = {g->r, g->a, NULL, 0, 0};
    while (sqlite3_step(st) == SQLITE_ROW)
        add(&fam, (const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1),
            (const char *)sqlite3_column_text(st, 2));
    sqlite3_finalize(st);
    if (!fam.n)
        return;
    qsort(fam.c, (size_t)fam.n, sizeof(candidate), by_distance);
    add(g, fam.c[0].shape, fam.c[0].variant, device_name(g->a, fam.c[0].from));
}

/* kc.yaml's default for this device's type, which the bundle keeps in its
 * meta (support/kc_bundle_schema.h). */
const char *td_type_default(const td_search *r, kc_arena *a)
{
    const td_session *s = r->s;
    return kc_bundle_meta(s->b, kc_arena_printf(a, "default.%s.%s", s->dev->type_name, r->tk->name));
}

static void from_type_default(gather *g)
{
    const char *variant = td_type_default(g->r, g->a);
    if (variant)
        add(g, NULL, variant, kc_arena_printf(g->a, "kc.yaml's default for a %s device", g->r->s->dev->type_name));
}

int td_transfer_seeds(td_search *r, kc_arena *a, int *seeds, int max, kc_buf *note)
{
    gather g = {r, a, NULL, 0, 0};
    const td_session *s = r->s;
    kc_cache_filter f = {r->tk->name, s->dev->key, NULL, s->dev->backend};
    kc_cache_each(s->cache, &f, from_cache, &g);
    if (g.n)
        qsort(g.c, (size_t)g.n, sizeof(candidate), by_distance);
    if (g.n > TRANSFER_SHAPES)
        g.n = TRANSFER_SHAPES;
    from_family(&g);
    from_type_default(&g);
    int n = 0;
    for (int i = 0; i < g.n && n < max; i++) {
        if (!td_point_of(r->tk, g.c[i].variant, seeds + n * r->tk->ndims))
            continue;
        if (*g.c[i].shape)
            kc_buf_printf(note, "%s%s (%s%s%s)", n ? ", " : "", g.c[i].variant, g.c[i].shape,
                          *g.c[i].from ? " on " : "", g.c[i].from);
        else
            kc_buf_printf(note, "%s%s (%s)", n ? ", " : "", g.c[i].variant, g.c[i].from);
        n++;
    }
    return n;
}
