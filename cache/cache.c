/*
 * cache.c — the tuning cache (kc_cache.h): schema and migrations, lookups
 * and inserts, and the list/export/import/clear of `kc cache`.
 */
#include "kc_cache.h"

#include <errno.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct kc_cache {
    sqlite3 *db;
};

static const char *const status_names[KC_RESULT_COUNT] = {"ok", "compile_failed", "verify_failed", "timeout",
                                                          "refused"};

const char *kc_result_status_name(kc_result_status s)
{
    return s < KC_RESULT_COUNT ? status_names[s] : "?";
}

bool kc_result_status_parse(const char *name, kc_result_status *out)
{
    for (int i = 0; i < KC_RESULT_COUNT; i++)
        if (name && strcmp(name, status_names[i]) == 0) {
            *out = (kc_result_status)i;
            return true;
        }
    return false;
}

/* Migration i takes a cache from schema version i to i + 1. Append, never
 * edit: a user's cache may be at any version. */
static const char *const migrations[] = {
    "CREATE TABLE results(\n"
    "  kernel TEXT NOT NULL, source_hash TEXT NOT NULL, compiler TEXT NOT NULL,\n"
    "  device_key TEXT NOT NULL, device TEXT NOT NULL, backend TEXT NOT NULL,\n"
    "  shape TEXT NOT NULL, variant TEXT NOT NULL,\n"
    "  status TEXT NOT NULL, time_ns REAL, samples INTEGER NOT NULL, spread REAL,\n"
    "  detail TEXT, measured_at TEXT NOT NULL,\n"
    "  PRIMARY KEY(kernel, source_hash, compiler, device_key, shape, variant));\n"
    "CREATE TABLE spaces(kernel TEXT NOT NULL, source_hash TEXT NOT NULL, space TEXT NOT NULL,\n"
    "  PRIMARY KEY(kernel, source_hash));\n",
};

static bool fail_db(sqlite3 *db, char *err, size_t errlen, const char *what)
{
    snprintf(err, errlen, "%s: %s", what, db ? sqlite3_errmsg(db) : "out of memory");
    return false;
}

static int schema_version(sqlite3 *db)
{
    sqlite3_stmt *st;
    int version = 0;
    if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        version = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return version;
}

/* Each step reads the version again inside its own IMMEDIATE transaction,
 * that is under the write lock: two kc processes opening a new cache at
 * once used to both read 0 and the second failed on "table results
 * already exists". Now the second waits, sees 1 and has nothing to do. */
static bool migrate(sqlite3 *db, char *err, size_t errlen)
{
    int latest = (int)KC_COUNT(migrations);
    for (;;) {
        char *msg = NULL;
        if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &msg) != SQLITE_OK) {
            snprintf(err, errlen, "cannot lock the tuning cache to update it: %s", msg ? msg : "?");
            sqlite3_free(msg);
            return false;
        }
        int v = schema_version(db);
        if (v >= latest) {
            sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
            if (v > latest)
                snprintf(err, errlen, "the tuning cache has schema %d, newer than this kc reads (%d); upgrade kc", v,
                         latest);
            return v == latest;
        }
        char bump[64];
        snprintf(bump, sizeof(bump), "PRAGMA user_version = %d;", v + 1);
        if (sqlite3_exec(db, migrations[v], NULL, NULL, &msg) != SQLITE_OK ||
            sqlite3_exec(db, bump, NULL, NULL, &msg) != SQLITE_OK ||
            sqlite3_exec(db, "COMMIT", NULL, NULL, &msg) != SQLITE_OK) {
            snprintf(err, errlen, "cannot update the tuning cache to schema %d: %s", v + 1, msg ? msg : "?");
            sqlite3_free(msg);
            sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
            return false;
        }
    }
}

char *kc_cache_default_path(char *err, size_t errlen)
{
    char *base = kc_user_cache_dir();
    if (!base) {
        snprintf(err, errlen, "%s; give the cache with --cache FILE", KC_USER_CACHE_VARS);
        return NULL;
    }
    kc_buf dir = {0};
    kc_buf_printf(&dir, "%s/kc", base);
    free(base);
    if (kc_make_dirs(dir.data, 0755) != 0) {
        snprintf(err, errlen, "cannot create '%s': %s", dir.data, strerror(errno));
        kc_buf_free(&dir);
        return NULL;
    }
    kc_buf_puts(&dir, "/tuning.db");
    return kc_buf_take(&dir);
}

/* A cache file of 0 bytes (with no write-ahead log holding its pages) was
 * truncated: SQLite would take it for a new database, and every result
 * would silently be measured again. */
static bool truncated(const char *path)
{
    struct stat st, wal;
    char walpath[4200];
    snprintf(walpath, sizeof(walpath), "%s-wal", path);
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0 &&
           (stat(walpath, &wal) != 0 || wal.st_size == 0);
}

/* PRAGMA quick_check: a damaged page is found at open, with what to do,
 * not halfway through a tune as "no variant passed". */
static bool intact(sqlite3 *db, const char *path, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    const char *first = NULL;
    bool ok = sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &st, NULL) == SQLITE_OK &&
              sqlite3_step(st) == SQLITE_ROW && (first = (const char *)sqlite3_column_text(st, 0)) &&
              strcmp(first, "ok") == 0;
    if (!ok)
        snprintf(err, errlen,
                 "the tuning cache '%s' is damaged (%s); 'kc cache check --cache %s' says more, 'kc cache repair "
                 "--cache %s' keeps every result SQLite can still read",
                 path, first ? first : sqlite3_errmsg(db), path, path);
    sqlite3_finalize(st);
    return ok;
}

/* Another program's SQLite database (a kc bundle given as --cache, say):
 * tables, but not the cache's. Asked before anything is written, so that
 * such a file is left exactly as it was. */
static bool foreign(sqlite3 *db)
{
    sqlite3_stmt *st;
    int tables = 0, ours = 0;
    if (sqlite3_prepare_v2(db, "SELECT count(*), count(CASE WHEN name = 'results' THEN 1 END) FROM sqlite_master "
                               "WHERE type = 'table'",
                           -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        tables = sqlite3_column_int(st, 0), ours = sqlite3_column_int(st, 1);
    sqlite3_finalize(st);
    return tables > 0 && ours == 0;
}

/* A new cache is made whole under another name and linked into place, so
 * a cache file of 0 bytes is never one kc is creating (which truncated()
 * would take for a damaged one), and of two kc processes creating it at
 * once one wins and the other opens its file. */
static bool create_new(const char *path, char *err, size_t errlen)
{
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.new-%ld", path, kc_process_id());
    remove(tmp);
    sqlite3 *db = NULL;
    char *msg = NULL;
    bool ok = sqlite3_open_v2(tmp, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) == SQLITE_OK;
    if (!ok)
        fail_db(db, err, errlen, "cannot create the tuning cache");
    else if (sqlite3_exec(db, "PRAGMA journal_mode = WAL;", NULL, NULL, &msg) != SQLITE_OK)
        ok = false, snprintf(err, errlen, "cannot create the tuning cache: %s", msg ? msg : "?");
    else
        ok = migrate(db, err, errlen);
    sqlite3_free(msg);
    sqlite3_close(db);
    if (ok && kc_file_link(tmp, path) != 0 && errno != EEXIST && kc_file_replace(tmp, path) != 0) {
        snprintf(err, errlen, "cannot create the tuning cache '%s': %s", path, strerror(errno));
        ok = false;
    }
    remove(tmp);
    return ok;
}

kc_cache *kc_cache_open(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT && !create_new(path, err, errlen))
        return NULL;
    if (truncated(path)) {
        snprintf(err, errlen,
                 "the tuning cache '%s' is empty (0 bytes): it was truncated, and kc will not start over "
                 "silently; 'kc cache repair --cache %s' sets it aside and starts a new one",
                 path, path);
        return NULL;
    }
    kc_cache *c = calloc(1, sizeof(*c));
    if (!c)
        abort();
    if (sqlite3_open_v2(path, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        fail_db(c->db, err, errlen, "cannot open the tuning cache");
    } else {
        /* WAL: readers never block the tuner, and each commit is durable
         * at once; a few seconds of patience for a second kc at work */
        sqlite3_busy_timeout(c->db, 10000);
        char *msg = NULL;
        if (foreign(c->db)) {
            snprintf(err, errlen,
                     "'%s' is not a tuning cache: an SQLite database without kc's results table (a bundle? a "
                     "bundle is kc tune's first argument; --cache names the cache); it was left as it was",
                     path);
        } else if (sqlite3_exec(c->db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;", NULL, NULL, &msg) !=
            SQLITE_OK) {
            snprintf(err, errlen,
                     "'%s' is not a tuning cache: %s ('kc cache repair --cache %s' sets it aside and keeps what "
                     "can be read)",
                     path, msg ? msg : "?", path);
            sqlite3_free(msg);
        } else if (intact(c->db, path, err, errlen) && migrate(c->db, err, errlen)) {
            return c;
        }
    }
    kc_cache_close(c);
    return NULL;
}

struct sqlite3 *kc_cache_db(kc_cache *c) { return c->db; }

void kc_cache_close(kc_cache *c)
{
    if (!c)
        return;
    sqlite3_close(c->db);
    free(c);
}

/* ---- one result ---------------------------------------------------------------- */

static const char *KEY_WHERE = "kernel = ?1 AND source_hash = ?2 AND compiler = ?3 AND device_key = ?4 AND shape = ?5 "
                               "AND variant = ?6";

static void bind_key(sqlite3_stmt *st, const kc_cache_key *k)
{
    const char *v[6] = {k->kernel, k->source_hash, k->compiler, k->device_key, k->shape, k->variant};
    for (int i = 0; i < 6; i++)
        sqlite3_bind_text(st, i + 1, v[i] ? v[i] : "", -1, SQLITE_STATIC);
}

static void read_result(sqlite3_stmt *st, int col, kc_cache_result *r, kc_arena *a)
{
    kc_result_status s = KC_RESULT_COMPILE_FAILED;
    kc_result_status_parse((const char *)sqlite3_column_text(st, col), &s);
    r->status = s;
    r->time_ns = sqlite3_column_double(st, col + 1);
    r->samples = sqlite3_column_int(st, col + 2);
    r->spread = sqlite3_column_double(st, col + 3);
    const unsigned char *d = sqlite3_column_text(st, col + 4);
    r->detail = d && a ? kc_arena_strdup(a, (const char *)d) : NULL;
}

bool kc_cache_get(kc_cache *c, const kc_cache_key *k, kc_cache_result *out, kc_arena *a)
{
    char sql[512];
    snprintf(sql, sizeof(sql), "SELECT status, time_ns, samples, spread, detail FROM results WHERE %s", KEY_WHERE);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) != SQLITE_OK)
        return false;
    bind_key(st, k);
    bool found = sqlite3_step(st) == SQLITE_ROW;
    if (found)
        read_result(st, 0, out, a);
    sqlite3_finalize(st);
    return found;
}

static void now_iso(char out[32])
{
    time_t t = time(NULL);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
}

static bool put_row(sqlite3 *db, const kc_cache_key *k, const kc_cache_result *r, const char *when, char *err,
                    size_t errlen)
{
    sqlite3_stmt *st;
    const char *sql = "INSERT OR REPLACE INTO results(kernel, source_hash, compiler, device_key, shape, variant, "
                      "device, backend, status, time_ns, samples, spread, detail, measured_at) "
                      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)";
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return fail_db(db, err, errlen, "cannot record a result");
    bind_key(st, k);
    sqlite3_bind_text(st, 7, k->device ? k->device : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 8, k->backend ? k->backend : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 9, kc_result_status_name(r->status), -1, SQLITE_STATIC);
    if (r->status == KC_RESULT_OK)
        sqlite3_bind_double(st, 10, r->time_ns);
    sqlite3_bind_int(st, 11, r->samples);
    sqlite3_bind_double(st, 12, r->spread);
    if (r->detail)
        sqlite3_bind_text(st, 13, r->detail, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 14, when, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE || fail_db(db, err, errlen, "cannot record a result");
}

bool kc_cache_put(kc_cache *c, const kc_cache_key *k, const kc_cache_result *r, char *err, size_t errlen)
{
    char when[32];
    now_iso(when);
    return put_row(c->db, k, r, when, err, errlen); /* autocommit: durable now */
}

bool kc_cache_put_space(kc_cache *c, const char *kernel, const char *source_hash, const char *space, char *err,
                        size_t errlen)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c->db, "INSERT OR REPLACE INTO spaces(kernel, source_hash, space) VALUES(?1, ?2, ?3)", -1,
                           &st, NULL) != SQLITE_OK)
        return fail_db(c->db, err, errlen, "cannot record a space");
    sqlite3_bind_text(st, 1, kernel, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, source_hash, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, space, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE || fail_db(c->db, err, errlen, "cannot record a space");
}

/* ---- many results ------------------------------------------------------------------ */

static const char *COLUMNS = "kernel, source_hash, compiler, device_key, shape, variant, device, backend, status, "
                             "time_ns, samples, spread, detail, measured_at";

static sqlite3_stmt *select_filtered(kc_cache *c, const kc_cache_filter *f, const char *order)
{
    char sql[768];
    snprintf(sql, sizeof(sql),
             "SELECT %s FROM results WHERE (?1 IS NULL OR kernel = ?1) AND (?2 IS NULL OR device_key = ?2) "
             "AND (?3 IS NULL OR shape = ?3) AND (?4 IS NULL OR backend = ?4) ORDER BY %s",
             COLUMNS, order);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) != SQLITE_OK)
        return NULL;
    const char *v[4] = {f ? f->kernel : NULL, f ? f->device_key : NULL, f ? f->shape : NULL, f ? f->backend : NULL};
    for (int i = 0; i < 4; i++)
        if (v[i])
            sqlite3_bind_text(st, i + 1, v[i], -1, SQLITE_STATIC);
    return st;
}

static void row_key(sqlite3_stmt *st, kc_cache_key *k)
{
    const char **f[8] = {&k->kernel, &k->source_hash, &k->compiler, &k->device_key,
                         &k->shape,  &k->variant,     &k->device,   &k->backend};
    for (int i = 0; i < 8; i++)
        *f[i] = (const char *)sqlite3_column_text(st, i);
}

bool kc_cache_each(kc_cache *c, const kc_cache_filter *f, kc_cache_each_fn fn, void *user)
{
    sqlite3_stmt *st = select_filtered(c, f, "kernel, device_key, shape, status != 'ok', time_ns");
    if (!st)
        return false;
    while (sqlite3_step(st) == SQLITE_ROW) {
        kc_cache_key k;
        kc_cache_result r;
        row_key(st, &k);
        read_result(st, 8, &r, NULL);
        r.detail = (const char *)sqlite3_column_text(st, 12);
        if (!fn(user, &k, &r))
            break;
    }
    sqlite3_finalize(st);
    return true;
}

static json_t *row_json(sqlite3_stmt *st, bool full)
{
    kc_cache_key k;
    row_key(st, &k);
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "kernel", k.kernel, "device", k.device, "backend",
                          k.backend, "shape", k.shape, "variant", k.variant, "status", sqlite3_column_text(st, 8));
    json_object_set_new(o, "time_ns",
                        sqlite3_column_type(st, 9) == SQLITE_NULL ? json_null() : json_real(sqlite3_column_double(st, 9)));
    json_object_set_new(o, "compiler", json_string(k.compiler));
    if (full) {
        json_object_set_new(o, "device_key", json_string(k.device_key));
        json_object_set_new(o, "source_hash", json_string(k.source_hash));
        json_object_set_new(o, "samples", json_integer(sqlite3_column_int(st, 10)));
        json_object_set_new(o, "spread", json_real(sqlite3_column_double(st, 11)));
        const unsigned char *d = sqlite3_column_text(st, 12);
        json_object_set_new(o, "detail", d ? json_string((const char *)d) : json_null());
        json_object_set_new(o, "measured_at", json_string((const char *)sqlite3_column_text(st, 13)));
    }
    return o;
}

bool kc_cache_list(kc_cache *c, const kc_cache_filter *f, bool json, kc_buf *out)
{
    sqlite3_stmt *st = select_filtered(c, f, "kernel, device, shape, status != 'ok', time_ns, variant");
    if (!st)
        return false;
    if (!json)
        kc_buf_printf(out, "%-16s %-28s %-8s %-18s %-24s %-15s %12s\n", "kernel", "device", "backend", "shape",
                      "variant", "status", "time");
    long n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        n++;
        if (json) {
            json_t *row = row_json(st, false);
            char *s = json_dumps(row, JSON_COMPACT | JSON_PRESERVE_ORDER);
            kc_buf_printf(out, "%s\n", s);
            free(s);
            json_decref(row);
            continue;
        }
        kc_cache_key k;
        row_key(st, &k);
        kc_buf_printf(out, "%-16s %-28.28s %-8s %-18s %-24s %-15s", k.kernel, k.device, k.backend, k.shape,
                      *k.variant ? k.variant : "-", sqlite3_column_text(st, 8));
        if (sqlite3_column_type(st, 9) != SQLITE_NULL)
            kc_buf_printf(out, " %9.2f us%s\n", sqlite3_column_double(st, 9) / 1e3,
                          strstr(k.compiler, KC_CACHE_COLD_MARK) ? " cold" : "");
        else
            kc_buf_puts(out, "            -\n");
    }
    if (!json)
        kc_buf_printf(out, "%ld result%s\n", n, n == 1 ? "" : "s");
    sqlite3_finalize(st);
    return true;
}

bool kc_cache_export(kc_cache *c, const kc_cache_filter *f, const char *path, char *err, size_t errlen)
{
    sqlite3_stmt *st = select_filtered(c, f, "kernel, device_key, shape, variant");
    if (!st)
        return fail_db(c->db, err, errlen, "cannot read the cache");
    json_t *results = json_array(), *spaces = json_array();
    while (sqlite3_step(st) == SQLITE_ROW)
        json_array_append_new(results, row_json(st, true));
    sqlite3_finalize(st);
    sqlite3_prepare_v2(c->db, "SELECT kernel, source_hash, space FROM spaces", -1, &st, NULL);
    while (sqlite3_step(st) == SQLITE_ROW)
        json_array_append_new(spaces, json_pack("{s:s, s:s, s:s}", "kernel", sqlite3_column_text(st, 0), "source_hash",
                                                sqlite3_column_text(st, 1), "space", sqlite3_column_text(st, 2)));
    sqlite3_finalize(st);
    json_t *doc = json_pack("{s:s, s:i, s:o, s:o}", "format", "kc-tuning-cache", "schema", KC_CACHE_SCHEMA_VERSION,
                            "results", results, "spaces", spaces);
    char *text = json_dumps(doc, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_decref(doc);
    bool ok = text && kc_write_file_atomic(path, text, strlen(text)) == 0;
    if (!ok)
        snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
    free(text);
    return ok;
}

/* Is the incoming result better supported than the one we have? */
static bool better(const kc_cache_result *in, const kc_cache_result *have)
{
    if (in->samples != have->samples)
        return in->samples > have->samples;
    if ((in->status == KC_RESULT_OK) != (have->status == KC_RESULT_OK))
        return in->status == KC_RESULT_OK;
    return in->status == KC_RESULT_OK && in->spread < have->spread;
}

static const char *jstr(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static bool import_row(kc_cache *c, json_t *o, long *added, long *replaced, long *kept, char *err, size_t errlen)
{
    kc_cache_key k = {jstr(o, "kernel"), jstr(o, "source_hash"), jstr(o, "compiler"), jstr(o, "device_key"),
                      jstr(o, "device"), jstr(o, "backend"), jstr(o, "shape"), jstr(o, "variant")};
    kc_cache_result in = {0}, have;
    if (!*k.kernel || !*k.device_key || !kc_result_status_parse(jstr(o, "status"), &in.status)) {
        snprintf(err, errlen, "a result without kernel, device_key or a known status");
        return false;
    }
    in.time_ns = json_number_value(json_object_get(o, "time_ns"));
    in.samples = (int)json_integer_value(json_object_get(o, "samples"));
    in.spread = json_number_value(json_object_get(o, "spread"));
    in.detail = json_string_value(json_object_get(o, "detail"));
    bool exists = kc_cache_get(c, &k, &have, NULL);
    if (exists && !better(&in, &have)) {
        (*kept)++;
        return true;
    }
    (*(exists ? replaced : added))++;
    const char *when = jstr(o, "measured_at");
    return put_row(c->db, &k, &in, *when ? when : "1970-01-01T00:00:00Z", err, errlen);
}

bool kc_cache_import(kc_cache *c, const char *path, long *added, long *replaced, long *kept, char *err, size_t errlen)
{
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    *added = *replaced = *kept = 0;
    if (!doc) {
        snprintf(err, errlen, "%s:%d: %s", path, je.line, je.text);
        return false;
    }
    bool ok = !strcmp(jstr(doc, "format"), "kc-tuning-cache") && json_is_array(json_object_get(doc, "results"));
    if (!ok)
        snprintf(err, errlen, "'%s' is not an export of a kc tuning cache", path);
    ok = ok && sqlite3_exec(c->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK;
    size_t i;
    json_t *o;
    json_array_foreach(json_object_get(doc, "results"), i, o) if (ok) ok = import_row(c, o, added, replaced, kept, err, errlen);
    json_array_foreach(json_object_get(doc, "spaces"), i, o) if (ok) ok = kc_cache_put_space(
        c, jstr(o, "kernel"), jstr(o, "source_hash"), jstr(o, "space"), err, errlen);
    sqlite3_exec(c->db, ok ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL);
    json_decref(doc);
    return ok;
}

long kc_cache_clear(kc_cache *c, const kc_cache_filter *f, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c->db,
                           "DELETE FROM results WHERE (?1 IS NULL OR kernel = ?1) AND (?2 IS NULL OR device_key = ?2) "
                           "AND (?3 IS NULL OR shape = ?3) AND (?4 IS NULL OR backend = ?4)",
                           -1, &st, NULL) != SQLITE_OK) {
        fail_db(c->db, err, errlen, "cannot clear the cache");
        return -1;
    }
    const char *v[4] = {f ? f->kernel : NULL, f ? f->device_key : NULL, f ? f->shape : NULL, f ? f->backend : NULL};
    for (int i = 0; i < 4; i++)
        if (v[i])
            sqlite3_bind_text(st, i + 1, v[i], -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        fail_db(c->db, err, errlen, "cannot clear the cache");
        return -1;
    }
    return sqlite3_changes(c->db);
}
