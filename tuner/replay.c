/*
 * replay.c — a recorded tuning space as a measure function.
 *
 * Kernel Tuner's cache files (the AutoTuningAssociation's benchmark_hub
 * publishes many, measured on real GPUs) hold every configuration a tuner
 * tried and its time. Replaying one lets us compare strategies on the
 * spaces GPUs really produce, without a GPU, in milliseconds per search.
 *
 * The file is JSON, gzip or plain (zlib's gzread reads both), read with
 * jansson after kc_tune_json_repair has closed what an interrupted tuner
 * left open. The tunables are tune_params in tune_params_keys order. A
 * cache record is matched to candidate values through its own parameter
 * fields, or, where it lacks them, through its key (the values joined
 * with commas); values match by meaning, so 1, 1.0 and "1" are the same
 * candidate. Records whose time is not a positive number (the strings
 * InvalidConfig, CompilationFailedConfig, RuntimeFailedConfig …) are valid
 * points that fail; records without a time, or that match no candidate,
 * are ignored and counted.
 */
#include "tune_private.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

struct kc_tune_replay {
    kc_arena arena;
    kc_tune_space space; /* points at the arrays below */
    const char **names;
    int *nvalues;
    const int64_t **values;
    const char ***texts; /* per dimension, per candidate */
    kc_tune_pset table;  /* recorded point -> time (INFINITY: failed) */
    kc_tune_replay_info info;
};

/* ---- reading --------------------------------------------------------- */

static int read_text(const char *path, kc_buf *out, char *err, size_t errlen)
{
    errno = 0;
    gzFile f = gzopen(path, "rb");
    if (!f)
        return kc_tune_fail(err, errlen, "cannot open %s: %s", path,
                            errno ? strerror(errno) : "out of memory");
    int n, code = Z_OK;
    do {
        kc_buf_reserve(out, 1 << 16);
        n = gzread(f, out->data + out->len, 1 << 16);
        out->len += n > 0 ? (size_t)n : 0;
    } while (n > 0);
    int status = 0;
    if (n < 0) {
        const char *msg = gzerror(f, &code);
        /* A gzip stream cut short (Z_BUF_ERROR) is an interrupted writer
         * too: keep what came out and let the JSON repair do the rest. */
        if (code != Z_BUF_ERROR)
            status = kc_tune_fail(err, errlen, "cannot read %s: %s", path,
                                  code == Z_ERRNO ? strerror(errno) : msg);
    }
    gzclose(f);
    kc_buf_putc(out, 0);
    out->len--;
    return status;
}

/* ---- values --------------------------------------------------------- */

static bool parse_number(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return end != s && *end == 0 && errno == 0;
}

static bool truth_text(const char *s, bool *v)
{
    if (strcmp(s, "True") == 0 || strcmp(s, "true") == 0)
        return *v = true, true;
    if (strcmp(s, "False") == 0 || strcmp(s, "false") == 0)
        return *v = false, true;
    return false;
}

/* A JSON value as a number, where it means one: numbers, booleans (as
 * Python, which wrote the files, has True == 1), numeric strings. */
static bool as_number(const json_t *v, double *x)
{
    bool b;
    if (json_is_number(v))
        return *x = json_number_value(v), true;
    if (json_is_boolean(v))
        return *x = json_is_true(v), true;
    if (json_is_string(v) && truth_text(json_string_value(v), &b))
        return *x = b, true;
    return json_is_string(v) && parse_number(json_string_value(v), x);
}

static bool same_value(const json_t *a, const json_t *b)
{
    double x, y;
    if (json_is_string(a) && json_is_string(b))
        return strcmp(json_string_value(a), json_string_value(b)) == 0;
    if (as_number(a, &x) && as_number(b, &y))
        return x == y;
    return json_is_null(a) && json_is_null(b);
}

static const char *value_text(kc_arena *a, const json_t *v)
{
    if (json_is_integer(v))
        return kc_arena_printf(a, "%lld", (long long)json_integer_value(v));
    if (json_is_real(v)) {
        double x = json_real_value(v), back;
        /* Short unless it would not read back; a real keeps its point. */
        char *s = kc_arena_printf(a, "%.15g", x);
        if (!parse_number(s, &back) || back != x)
            s = kc_arena_printf(a, "%.17g", x);
        return strpbrk(s, ".eEn") ? s : kc_arena_printf(a, "%s.0", s);
    }
    if (json_is_string(v))
        return kc_arena_strdup(a, json_string_value(v));
    return json_is_true(v) ? "true" : json_is_false(v) ? "false" : "null";
}

/* ---- the dimensions ---------------------------------------------------- */

static int load_dim(kc_tune_replay *r, int d, const char *name, const json_t *vals, char *err, size_t errlen)
{
    int n = (int)json_array_size(vals);
    if (!json_is_array(vals) || n < 1)
        return kc_tune_fail(err, errlen, "tune_params: '%s' is not a non-empty list of values", name);
    r->texts[d] = kc_arena_alloc(&r->arena, sizeof(char *) * (size_t)n);
    int64_t *ints = kc_arena_alloc(&r->arena, sizeof(int64_t) * (size_t)n);
    bool all_ints = true;
    for (int i = 0; i < n; i++) {
        const json_t *v = json_array_get(vals, (size_t)i);
        r->texts[d][i] = value_text(&r->arena, v);
        all_ints &= json_is_integer(v);
        ints[i] = all_ints ? json_integer_value(v) : 0;
    }
    r->nvalues[d] = n;
    r->names[d] = kc_arena_strdup(&r->arena, name);
    r->values[d] = all_ints ? ints : NULL;
    return 0;
}

/* tune_params in tune_params_keys order (or the object's, without keys). */
static int load_dims(kc_tune_replay *r, const json_t *root, char *err, size_t errlen)
{
    const json_t *params = json_object_get(root, "tune_params");
    const json_t *keys = json_object_get(root, "tune_params_keys");
    if (!json_is_object(params) || json_object_size(params) == 0)
        return kc_tune_fail(err, errlen, "no tune_params object: not a Kernel Tuner cache file");
    int nd = keys ? (int)json_array_size(keys) : (int)json_object_size(params);
    if (keys && (!json_is_array(keys) || nd == 0))
        return kc_tune_fail(err, errlen, "tune_params_keys is not a non-empty list");
    r->space.ndims = nd;
    r->space.names = r->names = kc_arena_alloc(&r->arena, sizeof(char *) * (size_t)nd);
    r->space.nvalues = r->nvalues = kc_arena_alloc(&r->arena, sizeof(int) * (size_t)nd);
    r->space.values = r->values = kc_arena_alloc(&r->arena, sizeof(int64_t *) * (size_t)nd);
    r->texts = kc_arena_alloc(&r->arena, sizeof(char **) * (size_t)nd);
    void *it = json_object_iter((json_t *)params);
    for (int d = 0; d < nd; d++, it = json_object_iter_next((json_t *)params, it)) {
        const char *name =
            keys ? json_string_value(json_array_get(keys, (size_t)d)) : json_object_iter_key(it);
        if (!name)
            return kc_tune_fail(err, errlen, "tune_params_keys[%d] is not a string", d);
        const json_t *vals = json_object_get(params, name);
        if (!vals)
            return kc_tune_fail(err, errlen, "tune_params has no '%s' (named in tune_params_keys)", name);
        if (load_dim(r, d, name, vals, err, errlen))
            return -1;
    }
    return 0;
}

/* ---- the cache ------------------------------------------------------- */

static int candidate(const kc_tune_replay *r, int d, const json_t *params, const json_t *v)
{
    const json_t *vals = json_object_get(params, r->space.names[d]);
    for (int i = 0; v && i < r->space.nvalues[d]; i++)
        if (same_value(json_array_get(vals, (size_t)i), v))
            return i;
    return -1;
}

/* The record's point from its fields, else from its key; false if some
 * value is not a candidate. */
static bool record_point(const kc_tune_replay *r, const json_t *params, const char *key, const json_t *rec,
                         int *point)
{
    int d = 0;
    for (; d < r->space.ndims; d++)
        if ((point[d] = candidate(r, d, params, json_object_get(rec, r->space.names[d]))) < 0)
            break;
    if (d == r->space.ndims)
        return true;
    const char *s = key;
    for (d = 0; d < r->space.ndims; d++) {
        size_t len = strcspn(s, ",");
        json_t *piece = json_stringn(s, len);
        point[d] = candidate(r, d, params, piece);
        json_decref(piece);
        if (point[d] < 0 || (s[len] == 0) != (d == r->space.ndims - 1))
            return false;
        s += len + (s[len] != 0);
    }
    return true;
}

static int load_cache(kc_tune_replay *r, const json_t *root, char *err, size_t errlen)
{
    const json_t *cache = json_object_get(root, "cache");
    const json_t *params = json_object_get(root, "tune_params");
    if (!json_is_object(cache))
        return kc_tune_fail(err, errlen, "no cache object: the file records no configurations");
    kc_tune_pset_init(&r->table, &r->arena, r->space.ndims);
    int *point = kc_arena_alloc(&r->arena, sizeof(int) * (size_t)r->space.ndims);
    for (void *it = json_object_iter((json_t *)cache); it; it = json_object_iter_next((json_t *)cache, it)) {
        const char *key = json_object_iter_key(it);
        const json_t *rec = json_object_iter_value(it), *time = json_object_get(rec, "time");
        if (!time || !record_point(r, params, key, rec, point) || kc_tune_pset_find(&r->table, point) >= 0) {
            r->info.ignored++;
            continue;
        }
        double t = json_is_number(time) ? json_number_value(time) : INFINITY;
        if (!(t > 0) || isinf(t))
            t = INFINITY, r->info.failed++;
        kc_tune_pset_add(&r->table, point, t);
    }
    r->info.size = r->table.len;
    if (r->info.size == r->info.failed)
        return kc_tune_fail(err, errlen, "no configuration in the cache has a numeric time");
    return 0;
}

/* ---- the replay ------------------------------------------------------ */

static bool replay_valid(void *user, const int *point)
{
    return kc_tune_pset_find(&((kc_tune_replay *)user)->table, point) >= 0;
}

double kc_tune_replay_measure(void *user, const int *point)
{
    const kc_tune_replay *r = user;
    long e = kc_tune_pset_find(&r->table, point);
    return e >= 0 ? r->table.vals[e] : NAN;
}

static void summarise(kc_tune_replay *r, const json_t *root)
{
    kc_tune_replay_info *in = &r->info;
    const char *kernel = json_string_value(json_object_get(root, "kernel_name"));
    const char *device = json_string_value(json_object_get(root, "device_name"));
    in->kernel = kc_arena_strdup(&r->arena, kernel ? kernel : "");
    in->device = kc_arena_strdup(&r->arena, device ? device : "");
    in->product = 1;
    for (int d = 0; d < r->space.ndims; d++)
        in->product *= r->space.nvalues[d];
    in->optimum = INFINITY;
    for (long e = 0; e < r->table.len; e++)
        if (r->table.vals[e] < in->optimum) {
            in->optimum = r->table.vals[e];
            in->optimum_point = r->table.points + e * r->space.ndims;
        }
}

static int parse(kc_tune_replay *r, const char *path, char *err, size_t errlen)
{
    kc_buf text = {0};
    if (read_text(path, &text, err, errlen)) {
        kc_buf_free(&text);
        return -1;
    }
    kc_tune_repair fix = kc_tune_json_repair(&text);
    r->info.repaired_bytes = fix.dropped, r->info.repaired_closers = fix.closers;
    json_error_t jerr;
    json_t *root = json_loadb(text.data ? text.data : "", text.len, 0, &jerr);
    kc_buf_free(&text);
    if (!root)
        return kc_tune_fail(err, errlen, "%s:%d:%d: not valid JSON: %s", path, jerr.line, jerr.column,
                            jerr.text);
    int status = -1;
    if (!json_is_object(root))
        kc_tune_fail(err, errlen, "%s: not a JSON object", path);
    else if (load_dims(r, root, err, errlen) == 0 && load_cache(r, root, err, errlen) == 0)
        status = 0, summarise(r, root);
    json_decref(root); /* everything kept is copied into the arena */
    return status;
}

kc_tune_replay *kc_tune_replay_load(const char *path, char *err, size_t errlen)
{
    kc_arena a;
    kc_arena_init(&a);
    kc_tune_replay *r = KC_NEW(&a, kc_tune_replay);
    r->arena = a;
    if (parse(r, path, err, errlen)) {
        kc_tune_replay_free(r);
        return NULL;
    }
    r->space.valid = replay_valid;
    r->space.user = r;
    return r;
}

void kc_tune_replay_free(kc_tune_replay *r)
{
    if (r) {
        kc_arena a = r->arena; /* r lives in its own arena */
        kc_arena_free(&a);
    }
}

const kc_tune_space *kc_tune_replay_space(const kc_tune_replay *r)
{
    return &r->space;
}

void kc_tune_replay_get_info(const kc_tune_replay *r, kc_tune_replay_info *info)
{
    *info = r->info;
}

const char *kc_tune_replay_value_text(const kc_tune_replay *r, int dim, int index)
{
    return r->texts[dim][index];
}

/* ---- repeated searches ------------------------------------------------- */

int kc_tune_replay_run(kc_tune_replay *r, const kc_tune_options *opt, int repeats, kc_tune_replay_stats *st,
                       double *fractions, long *evals, char *err, size_t errlen)
{
    if (repeats < 1)
        return kc_tune_fail(err, errlen, "the number of repeats must be at least 1");
    memset(st, 0, sizeof(*st));
    st->min_fraction = INFINITY;
    double t0 = kc_tune_clock();
    for (int i = 0; i < repeats; i++) {
        kc_tune_options o = *opt;
        o.seed = opt->seed + (uint64_t)i;
        kc_tune_ctx *ctx = kc_tune_new(&r->space, kc_tune_replay_measure, r, &o, err, errlen);
        if (!ctx)
            return -1;
        kc_tune_run(ctx);
        double best;
        double f = kc_tune_best(ctx, &best) ? r->info.optimum / best : 0;
        st->strategy = kc_tune_strategy_name(ctx); /* a literal in the table */
        st->mean_fraction += f / repeats;
        st->mean_evals += (double)kc_tune_evals(ctx) / repeats;
        st->min_fraction = fmin(st->min_fraction, f);
        st->max_fraction = fmax(st->max_fraction, f);
        if (fractions)
            fractions[i] = f;
        if (evals)
            evals[i] = kc_tune_evals(ctx);
        kc_tune_free(ctx);
    }
    st->seconds = kc_tune_clock() - t0;
    return 0;
}
