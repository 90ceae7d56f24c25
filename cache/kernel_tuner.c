/*
 * kernel_tuner.c — one kernel's measured space in Kernel Tuner's
 * cache-file format (a public format: tune_params and a cache keyed by the
 * comma-joined values), which `kc tune --replay` reads back. Failures map
 * to Kernel Tuner's strings: a variant that did not build is
 * CompilationFailedConfig, one that ran wrong or too long
 * RuntimeFailedConfig, one the device refused InvalidConfig.
 */
#include "kc_cache.h"

#include <errno.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

static const char *failure_name(kc_result_status s)
{
    switch (s) {
    case KC_RESULT_COMPILE_FAILED: return "CompilationFailedConfig";
    case KC_RESULT_REFUSED: return "InvalidConfig";
    default: return "RuntimeFailedConfig";
    }
}

typedef struct kt_export {
    const kc_cache_key *first; /* the newest source hash, device and shape seen */
    char kernel[256], hash[80], device_key[512], device[256], shape[256];
    json_t *cache;
    long n;
    bool ambiguous;
    char other[512];
} kt_export;

/* "WG=64,TM=4" -> key "64,4" and the parameters as JSON */
static void variant_entry(const char *variant, json_t **params, char *key, size_t keylen)
{
    *params = json_object();
    key[0] = 0;
    char *copy = strdup(variant), *save = NULL;
    for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq)
            continue;
        *eq = 0;
        json_object_set_new(*params, kv, json_integer(strtoll(eq + 1, NULL, 10)));
        size_t n = strlen(key);
        snprintf(key + n, keylen - n, "%s%s", n ? "," : "", eq + 1);
    }
    free(copy);
}

static bool collect(void *user, const kc_cache_key *k, const kc_cache_result *r)
{
    kt_export *x = user;
    if (!x->n) {
        snprintf(x->kernel, sizeof(x->kernel), "%s", k->kernel);
        snprintf(x->hash, sizeof(x->hash), "%s", k->source_hash);
        snprintf(x->device_key, sizeof(x->device_key), "%s", k->device_key);
        snprintf(x->device, sizeof(x->device), "%s", k->device);
        snprintf(x->shape, sizeof(x->shape), "%s", k->shape);
    } else if (strcmp(x->kernel, k->kernel) || strcmp(x->device_key, k->device_key) || strcmp(x->shape, k->shape) ||
               strcmp(x->hash, k->source_hash)) {
        if (!x->ambiguous)
            snprintf(x->other, sizeof(x->other), "%s on %s for %s", k->kernel, k->device, k->shape);
        x->ambiguous = true;
        return true;
    }
    json_t *entry;
    char key[512];
    variant_entry(k->variant, &entry, key, sizeof(key));
    if (r->status == KC_RESULT_OK) {
        json_object_set_new(entry, "time", json_real(r->time_ns / 1e6)); /* milliseconds, as Kernel Tuner writes */
        json_object_set_new(entry, "samples", json_integer(r->samples));
    } else {
        json_object_set_new(entry, "time", json_string(failure_name(r->status)));
    }
    json_object_set_new(x->cache, key, entry);
    x->n++;
    return true;
}

/* "WG=64,128,256;TM=1,2,4" -> keys and lists */
static void space_json(const char *space, json_t *keys, json_t *params)
{
    char *copy = strdup(space), *save = NULL;
    for (char *dim = strtok_r(copy, ";", &save); dim; dim = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(dim, '=');
        if (!eq)
            continue;
        *eq = 0;
        json_array_append_new(keys, json_string(dim));
        json_t *vals = json_array();
        char *vsave = NULL;
        for (char *v = strtok_r(eq + 1, ",", &vsave); v; v = strtok_r(NULL, ",", &vsave))
            json_array_append_new(vals, json_integer(strtoll(v, NULL, 10)));
        json_object_set_new(params, dim, vals);
    }
    free(copy);
}

bool kc_cache_export_kernel_tuner(kc_cache *c, const kc_cache_filter *f, const char *path, char *err, size_t errlen)
{
    kt_export x = {0};
    x.cache = json_object();
    kc_cache_each(c, f, collect, &x);
    if (!x.n || x.ambiguous) {
        snprintf(err, errlen,
                 !x.n ? "no results match; see kc cache list"
                      : "the results span more than one kernel, device, shape or source (%s, and %s); narrow with "
                        "--kernel, --device and --shape",
                 x.n ? x.kernel : "", x.other);
        json_decref(x.cache);
        return false;
    }
    json_t *keys = json_array(), *params = json_object();
    sqlite3_stmt *st = NULL; /* the space kc tune recorded for this source */
    const char *sql = "SELECT space FROM spaces WHERE kernel = ?1 AND source_hash = ?2";
    if (sqlite3_prepare_v2(kc_cache_db(c), sql, -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, x.kernel, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, x.hash, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW)
            space_json((const char *)sqlite3_column_text(st, 0), keys, params);
    }
    sqlite3_finalize(st);
    json_t *doc = json_pack("{s:s, s:s, s:s, s:o, s:o, s:s, s:o}", "device_name", x.device, "kernel_name", x.kernel,
                            "problem_size", x.shape, "tune_params_keys", keys, "tune_params", params, "objective",
                            "time", "cache", x.cache);
    char *text = json_dumps(doc, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_decref(doc);
    bool ok = text && kc_write_file_atomic(path, text, strlen(text)) == 0;
    if (!ok)
        snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
    free(text);
    return ok;
}
