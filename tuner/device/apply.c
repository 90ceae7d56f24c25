/*
 * apply.c — what a tune leaves behind: the winners in the bundle, and the
 * report.
 *
 * The winner of a kernel at a shape is the fastest ok result the cache
 * holds for this kernel's source, this kc and this device, not only what
 * this run measured: a tune in several sittings, or results imported from
 * another machine with the same device, count as much as today's. Its
 * binary goes into the bundle when the bundle lacks it, and its row into
 * the tuned table, in one transaction, so that a bundle never names a
 * variant it does not carry.
 */
#include "device_private.h"

#include <math.h>
#include <string.h>

#include "kc_tune_report.h"

typedef struct winner_scan {
    const td_session *s;
    const td_kernel *tk;
    kc_arena *a;
    const char *variant;
    double time_ns;
} winner_scan;

/* Is this result one of ours (this source, this kc, timed as this tune
 * times) and in the space? */
static bool current(const td_session *s, const td_kernel *tk, const kc_cache_key *k, int *point)
{
    return strcmp(k->source_hash, tk->prog->source_hash) == 0 && strcmp(k->compiler, s->measured_by) == 0 &&
           td_point_of(tk, k->variant, point);
}

static bool first_ok(void *user, const kc_cache_key *k, const kc_cache_result *r)
{
    winner_scan *w = user;
    int point[65];
    if (r->status != KC_RESULT_OK || !current(w->s, w->tk, k, point) || !w->tk->space.valid(w->tk->space.user, point))
        return true;
    w->variant = kc_arena_strdup(w->a, k->variant);
    w->time_ns = r->time_ns;
    return false; /* fastest first: done */
}

static kc_cache_filter filter_of(const td_search *r)
{
    const td_session *s = r->s;
    return (kc_cache_filter){r->tk->name, s->dev->key, r->shape, s->dev->backend};
}

bool td_winner(td_search *r, kc_arena *a, const char **variant, double *time_ns)
{
    winner_scan w = {r->s, r->tk, a, NULL, 0};
    kc_cache_filter f = filter_of(r);
    kc_cache_each(r->s->cache, &f, first_ok, &w);
    *variant = w.variant;
    *time_ns = w.time_ns;
    return w.variant != NULL;
}

/* The winner's binary, compiled now when the bundle lacks it. */
static bool put_binary(td_search *r, const char *variant, char *err, size_t errlen)
{
    td_session *s = r->s;
    int point[65];
    if (kc_bundle_has_variant(s->b, r->tk->name, variant, s->target->name))
        return true;
    kc_variant_blob blob;
    char why[1024];
    if (!td_point_of(r->tk, variant, point) || !td_compile(r, point, &blob, why, sizeof(why))) {
        snprintf(err, errlen, "variant %s of '%s' no longer compiles: %s", variant, r->tk->name, why);
        return false;
    }
    bool ok = kc_bundle_put_variant(s->b, r->tk->name, variant, s->target->name, &blob, err, errlen);
    kc_variant_blob_free(&blob);
    return ok;
}

bool td_apply(td_search *r, char *err, size_t errlen)
{
    td_session *s = r->s;
    kc_arena a;
    kc_arena_init(&a);
    const char *variant;
    double t;
    bool ok = true;
    if (td_winner(r, &a, &variant, &t)) {
        kc_tuned_row row = {s->dev->key, s->dev->family, s->dev->backend, r->tk->name, r->shape, variant, t};
        ok = kc_bundle_exec(s->b, "BEGIN IMMEDIATE", err, errlen);
        if (ok && !(put_binary(r, variant, err, errlen) && kc_bundle_put_tuned(s->b, &row, err, errlen) &&
                    kc_bundle_exec(s->b, "COMMIT", err, errlen))) {
            char ignored[64];
            kc_bundle_exec(s->b, "ROLLBACK", ignored, sizeof(ignored));
            ok = false;
        }
        s->sum->applied += ok;
    }
    kc_arena_free(&a);
    return ok;
}

/* ---- the report ------------------------------------------------------------------------------ */

typedef struct shape_scan {
    const td_session *s;
    const td_kernel *tk;
    kc_arena *a;
    kc_vec points; /* kc_tune_report_point* */
} shape_scan;

static bool collect(void *user, const kc_cache_key *k, const kc_cache_result *r)
{
    shape_scan *sc = user;
    int point[65];
    if (!current(sc->s, sc->tk, k, point))
        return true;
    kc_tune_report_point *p = KC_NEW(sc->a, kc_tune_report_point);
    int64_t *values = kc_arena_alloc(sc->a, sizeof(int64_t) * (size_t)(sc->tk->ndims + 1));
    for (int d = 0; d < sc->tk->ndims; d++)
        values[d] = sc->tk->values[d][point[d]];
    *p = (kc_tune_report_point){values, kc_arena_strdup(sc->a, k->variant), kc_result_status_name(r->status),
                                r->status == KC_RESULT_OK ? r->time_ns : NAN};
    kc_vec_push(sc->a, &sc->points, p);
    return true;
}

static void report_shape(td_session *s, const td_kernel *tk, const char *shape, kc_tune_report_shape *out)
{
    shape_scan sc = {s, tk, &s->arena, {0}};
    kc_cache_filter f = {tk->name, s->dev->key, shape, s->dev->backend};
    kc_cache_each(s->cache, &f, collect, &sc);
    kc_tune_report_point *points = kc_arena_alloc(&s->arena, sizeof(*points) * (size_t)(sc.points.len + 1));
    const char *def = td_variant_text(&s->arena, tk, tk->start);
    *out = (kc_tune_report_shape){shape, sc.points.len, points, -1, -1};
    for (int i = 0; i < sc.points.len; i++) {
        points[i] = *(kc_tune_report_point *)sc.points.items[i];
        if (out->best < 0 && strcmp(points[i].status, "ok") == 0)
            out->best = i; /* the cache lists the fastest first */
        if (strcmp(points[i].variant, def) == 0)
            out->default_point = i;
    }
}

bool td_write_report(td_session *s, td_kernel *const *kernels, const char *const *const *shapes,
                     const int *nshapes, int nkernels, char *err, size_t errlen)
{
    kc_tune_report_kernel *ks = kc_arena_alloc(&s->arena, sizeof(*ks) * (size_t)(nkernels + 1));
    for (int i = 0; i < nkernels; i++) {
        const td_kernel *tk = kernels[i];
        kc_tune_report_shape *sh = kc_arena_alloc(&s->arena, sizeof(*sh) * (size_t)(nshapes[i] + 1));
        for (int j = 0; j < nshapes[i]; j++)
            report_shape(s, tk, shapes[i][j], &sh[j]);
        ks[i] = (kc_tune_report_kernel){tk->name, tk->ndims, tk->names, tk->nvalues, tk->values, nshapes[i], sh};
    }
    kc_tune_report r = {s->o->bundle, s->dev->name,       s->dev->backend,
                        nkernels,     ks,                 s->o->report_axes[0],
                        s->o->report_axes[1]};
    return kc_tune_report_write(&r, s->o->report, err, errlen);
}
