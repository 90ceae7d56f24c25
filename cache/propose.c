/*
 * propose.c — `kc cache defaults`: one variant per kernel and device that
 * is close to every shape's winner, a candidate for the kernel's kc.yaml
 * default on that kind of device (kernels.md, "kc.yaml").
 *
 * A default runs at shapes nobody tuned, so the measure is how much slower
 * than each measured shape's winner a variant is, not how fast it is at one
 * shape: the geometric mean of time / winner over the shapes, so that a
 * small shape counts as much as a large one. Only variants that ran
 * correctly at every compared shape qualify: a default must not fail.
 * A variant the caller names (the kernel's current default) is scored
 * beside the proposal, over the compared shapes it ran at.
 */
#include "kc_cache.h"

#include <math.h>
#include <sqlite3.h>
#include <string.h>

typedef struct shape_stat {
    const char *name;
    double best;  /* the winner's time here, over every variant */
    int measured; /* variants that ran correctly here */
    bool compared;
} shape_stat;

typedef struct row {
    const char *variant;
    shape_stat *shape;
    double time_ns;
} row;

/* One kernel on one device: its newest source and kc version only, since a
 * changed kernel has another space, and cold timings another measure. */
typedef struct group {
    kc_cache_proposal p;
    kc_vec rows; /* row *, by variant then shape */
    kc_map shapes;
    kc_vec shape_list; /* shape_stat *, first seen first */
} group;

/* The newest source and kc version of each kernel on each device: SQLite
 * takes the bare columns of an aggregate query from the row max() chose. */
static const char *SQL =
    "WITH newest AS (SELECT kernel, device_key, source_hash, compiler, max(measured_at) FROM results "
    "WHERE compiler NOT LIKE '%" KC_CACHE_COLD_MARK "' GROUP BY kernel, device_key) "
    "SELECT r.kernel, r.device_key, device, backend, r.source_hash, shape, variant, time_ns "
    "FROM results r JOIN newest n ON r.kernel = n.kernel AND r.device_key = n.device_key "
    "AND r.source_hash = n.source_hash AND r.compiler = n.compiler "
    "WHERE status = 'ok' AND time_ns > 0 "
    "AND (?1 IS NULL OR r.kernel = ?1) AND (?2 IS NULL OR r.device_key = ?2) AND (?3 IS NULL OR backend = ?3) "
    "ORDER BY r.kernel, r.device_key, variant, shape";

static group *start_group(kc_arena *a, sqlite3_stmt *st)
{
    group *g = KC_NEW(a, group);
    const char **f[5] = {&g->p.kernel, &g->p.device_key, &g->p.device, &g->p.backend, &g->p.source_hash};
    for (int i = 0; i < 5; i++)
        *f[i] = kc_arena_strdup(a, (const char *)sqlite3_column_text(st, i));
    return g;
}

static void add_row(kc_arena *a, group *g, sqlite3_stmt *st)
{
    const char *shape = (const char *)sqlite3_column_text(st, 5);
    shape_stat *s = kc_map_get(&g->shapes, shape);
    if (!s) {
        s = KC_NEW(a, shape_stat);
        s->name = kc_arena_strdup(a, shape);
        kc_map_put(a, &g->shapes, s->name, s);
        kc_vec_push(a, &g->shape_list, s);
    }
    row *r = KC_NEW(a, row);
    const char *variant = (const char *)sqlite3_column_text(st, 6);
    row *prev = g->rows.len ? KC_VEC_AT(g->rows, row, g->rows.len - 1) : NULL;
    r->variant = prev && !strcmp(prev->variant, variant) ? prev->variant : kc_arena_strdup(a, variant);
    r->shape = s;
    r->time_ns = sqlite3_column_double(st, 7);
    if (!s->measured++ || r->time_ns < s->best)
        s->best = r->time_ns;
    kc_vec_push(a, &g->rows, r);
}

/* A shape where under half as many variants ran as at the best-covered
 * one was barely tuned: requiring every variant to have run there would
 * leave little to choose from, so it is left out of the comparison. */
static void choose_shapes(group *g)
{
    int most = 0;
    for (int i = 0; i < g->shape_list.len; i++) {
        shape_stat *s = KC_VEC_AT(g->shape_list, shape_stat, i);
        most = s->measured > most ? s->measured : most;
    }
    for (int i = 0; i < g->shape_list.len; i++) {
        shape_stat *s = KC_VEC_AT(g->shape_list, shape_stat, i);
        s->compared = 2 * s->measured >= most;
    }
}

/* Scores the variants measured at every compared shape; the best and the
 * runner-up go into the proposal. */
static void score(group *g)
{
    kc_cache_proposal *p = &g->p;
    int compared = 0;
    for (int i = 0; i < g->shape_list.len; i++)
        compared += KC_VEC_AT(g->shape_list, shape_stat, i)->compared;
    p->candidates = 0;
    p->variant = p->runner_up = NULL;
    p->current_mean = NAN, p->current_worst = 0, p->current_missing = compared;
    for (int i = 0; i < g->rows.len;) {
        const char *variant = KC_VEC_AT(g->rows, row, i)->variant;
        double log_sum = 0, worst = 0;
        const char *worst_shape = NULL;
        int seen = 0;
        for (; i < g->rows.len && KC_VEC_AT(g->rows, row, i)->variant == variant; i++) {
            row *r = KC_VEC_AT(g->rows, row, i);
            if (!r->shape->compared)
                continue;
            double slowdown = r->time_ns / r->shape->best;
            log_sum += log(slowdown);
            if (slowdown > worst)
                worst = slowdown, worst_shape = r->shape->name;
            seen++;
        }
        if (p->current && !strcmp(variant, p->current)) {
            p->current_mean = seen ? exp(log_sum / seen) : NAN;
            p->current_worst = worst;
            p->current_missing = compared - seen;
        }
        if (seen != compared)
            continue;
        double mean = exp(log_sum / compared);
        p->candidates++;
        if (!p->variant || mean < p->mean_slowdown) {
            p->runner_up = p->variant, p->runner_up_mean = p->mean_slowdown;
            p->variant = variant, p->mean_slowdown = mean;
            p->worst_slowdown = worst, p->worst_shape = worst_shape;
        } else if (!p->runner_up || mean < p->runner_up_mean) {
            p->runner_up = variant, p->runner_up_mean = mean;
        }
    }
}

/* Scores, leaving out the least-measured shape while no variant ran at
 * every one, and records which shapes were compared and which were not. */
static void finish_group(kc_arena *a, group *g)
{
    choose_shapes(g);
    for (;;) {
        score(g);
        shape_stat *fewest = NULL;
        int compared = 0;
        for (int i = 0; i < g->shape_list.len; i++) {
            shape_stat *s = KC_VEC_AT(g->shape_list, shape_stat, i);
            compared += s->compared;
            if (s->compared && (!fewest || s->measured < fewest->measured))
                fewest = s;
        }
        if (g->p.candidates || compared <= 1)
            break;
        fewest->compared = false;
    }
    kc_buf left = {0};
    for (int i = 0; i < g->shape_list.len; i++) {
        shape_stat *s = KC_VEC_AT(g->shape_list, shape_stat, i);
        if (s->compared) {
            g->p.shapes++;
        } else {
            kc_buf_printf(&left, "%s%s", left.len ? "; " : "", s->name);
            g->p.shapes_left_out++;
        }
    }
    g->p.left_out = left.data ? kc_arena_strdup(a, left.data) : NULL;
    kc_buf_free(&left);
}

int kc_cache_propose_defaults(kc_cache *c, const kc_cache_filter *f, kc_cache_current_fn current, void *user,
                              kc_cache_proposal **out, kc_arena *a)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(kc_cache_db(c), SQL, -1, &st, NULL) != SQLITE_OK)
        return -1;
    const char *v[3] = {f ? f->kernel : NULL, f ? f->device_key : NULL, f ? f->backend : NULL};
    for (int i = 0; i < 3; i++)
        if (v[i])
            sqlite3_bind_text(st, i + 1, v[i], -1, SQLITE_STATIC);
    kc_vec groups = {0};
    group *g = NULL;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (!g || strcmp(g->p.kernel, (const char *)sqlite3_column_text(st, 0)) ||
            strcmp(g->p.device_key, (const char *)sqlite3_column_text(st, 1))) {
            g = start_group(a, st);
            const char *named = current ? current(user, g->p.kernel, g->p.device_key) : NULL;
            g->p.current = named ? kc_arena_strdup(a, named) : NULL;
            kc_vec_push(a, &groups, g);
        }
        add_row(a, g, st);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return -1;
    *out = kc_arena_alloc(a, sizeof(**out) * (size_t)(groups.len ? groups.len : 1));
    for (int i = 0; i < groups.len; i++) {
        group *gi = KC_VEC_AT(groups, group, i);
        finish_group(a, gi);
        (*out)[i] = gi->p;
    }
    return groups.len;
}
