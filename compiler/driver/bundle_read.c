/*
 * bundle_read.c — opening a bundle, and `kc info` / `kc export` on it.
 *
 * A bundle is trusted only after it proves to be one: the application id,
 * a format this kc reads, and SQLite's quick_check. Every column read is
 * checked for its type; a damaged file is an error with a message.
 */
#include "bundle_private.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kc_bundle_schema.h"

static bool query_int(sqlite3 *db, const char *sql, int64_t *out)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return false;
    bool ok = sqlite3_step(st) == SQLITE_ROW;
    if (ok)
        *out = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return ok;
}

kc_bundle *kc_bundle_open(const char *path, bool writable, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    kc_bundle *b = calloc(1, sizeof(*b));
    if (!b)
        abort();
    kc_arena_init(&b->arena);
    int flags = writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY;
    int64_t app = 0, version = 0;
    if (sqlite3_open_v2(path, &b->db, flags, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "cannot open '%s': %s", path, sqlite3_errmsg(b->db));
    } else if (!query_int(b->db, "PRAGMA application_id", &app) || app != KC_BUNDLE_APPLICATION_ID) {
        snprintf(err, errlen, "'%s' is not a kc bundle", path);
    } else if (!query_int(b->db, "PRAGMA user_version", &version) || version > KC_BUNDLE_FORMAT) {
        snprintf(err, errlen, "'%s' has bundle format %lld; this kc reads up to %d (upgrade kc)", path,
                 (long long)version, KC_BUNDLE_FORMAT);
    } else {
        sqlite3_stmt *q;
        bool ok = sqlite3_prepare_v2(b->db, "PRAGMA quick_check", -1, &q, NULL) == SQLITE_OK &&
                  sqlite3_step(q) == SQLITE_ROW && sqlite3_column_text(q, 0) &&
                  strcmp((const char *)sqlite3_column_text(q, 0), "ok") == 0;
        sqlite3_finalize(q);
        if (ok)
            return b;
        snprintf(err, errlen, "'%s' is damaged (SQLite's integrity check failed)", path);
    }
    kc_bundle_close(b);
    return NULL;
}

void kc_bundle_close(kc_bundle *b)
{
    if (!b)
        return;
    sqlite3_close(b->db);
    kc_arena_free(&b->arena);
    free(b);
}

struct sqlite3 *kc_bundle_db(kc_bundle *b) { return b->db; }

const char *kc_bundle_meta(kc_bundle *b, const char *key)
{
    sqlite3_stmt *st;
    const char *v = NULL;
    if (sqlite3_prepare_v2(b->db, "SELECT value FROM meta WHERE key = ?1", -1, &st, NULL) != SQLITE_OK)
        return NULL;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_TEXT)
        v = kc_arena_strdup(&b->arena, (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return v;
}

/* ---- rows ----------------------------------------------------------------------- */

static const char *col_text(kc_bundle *b, sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? kc_arena_strdup(&b->arena, (const char *)t) : NULL;
}

/* Postfix text as C-like infix, optionally with tunables substituted. */
static const char *infix(kc_bundle *b, const char *postfix, const char *tunables)
{
    if (!postfix)
        return NULL;
    char err[128];
    kc_iexpr *e = kc_iexpr_parse_postfix(&b->arena, postfix, err, sizeof(err));
    if (!e)
        return kc_arena_printf(&b->arena, "<damaged: %s>", postfix);
    if (tunables && *tunables) { /* substitute NAME=VALUE pairs */
        kc_vec stack = {0};
        kc_vec_push(&b->arena, &stack, e);
        while (stack.len) {
            kc_iexpr *n = stack.items[--stack.len];
            if (n->op == KC_IX_NAME) {
                char key[80];
                snprintf(key, sizeof(key), "%s=", n->name);
                const char *at = strstr(tunables, key);
                while (at && at != tunables && at[-1] != ',')
                    at = strstr(at + 1, key);
                if (at) {
                    n->op = KC_IX_CONST;
                    n->value = strtoll(at + strlen(key), NULL, 10);
                }
            }
            kc_iexpr *kids[3] = {n->a, n->b, n->c};
            for (int i = 0; i < 3; i++)
                if (kids[i])
                    kc_vec_push(&b->arena, &stack, kids[i]);
        }
    }
    kc_buf out = {0};
    kc_iexpr_write_infix(&out, kc_iexpr_fold(&b->arena, e));
    const char *s = kc_arena_strdup(&b->arena, out.data);
    kc_buf_free(&out);
    return s;
}

/* Three ';'-joined postfix expressions as a JSON array of infix strings. */
static json_t *triple(kc_bundle *b, const char *joined, const char *tunables)
{
    json_t *a = json_array();
    char *copy = kc_arena_strdup(&b->arena, joined ? joined : ""), *save = NULL;
    for (char *p = strtok_r(copy, ";", &save); p; p = strtok_r(NULL, ";", &save))
        json_array_append_new(a, json_string(infix(b, p, tunables)));
    return a;
}

static json_t *params_json(kc_bundle *b, int64_t id)
{
    json_t *a = json_array();
    sqlite3_stmt *st;
    sqlite3_prepare_v2(b->db, "SELECT name, kind, type, readonly, extent FROM params WHERE kernel_id = ?1 ORDER BY idx",
                       -1, &st, NULL);
    sqlite3_bind_int64(st, 1, id);
    while (sqlite3_step(st) == SQLITE_ROW) {
        json_t *p = json_pack("{s:s?, s:s?, s:s?, s:b}", "name", col_text(b, st, 0), "kind", col_text(b, st, 1),
                              "type", col_text(b, st, 2), "readonly", sqlite3_column_int(st, 3));
        const char *extent = col_text(b, st, 4);
        if (!strcmp(col_text(b, st, 1) ? col_text(b, st, 1) : "", "buffer"))
            json_object_set_new(p, "extent", extent ? json_string(infix(b, extent, NULL)) : json_null());
        json_array_append_new(a, p);
    }
    sqlite3_finalize(st);
    return a;
}

static json_t *list_json(kc_bundle *b, const char *sql, int64_t id, bool as_infix)
{
    json_t *a = json_array();
    sqlite3_stmt *st;
    sqlite3_prepare_v2(b->db, sql, -1, &st, NULL);
    sqlite3_bind_int64(st, 1, id);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *t = col_text(b, st, 0);
        json_array_append_new(a, json_string(as_infix ? infix(b, t, NULL) : t ? t : ""));
    }
    sqlite3_finalize(st);
    return a;
}

static json_t *tunables_json(kc_bundle *b, int64_t id)
{
    json_t *a = json_array();
    sqlite3_stmt *st;
    sqlite3_prepare_v2(b->db, "SELECT name, def, vals FROM tunables WHERE kernel_id = ?1 ORDER BY idx", -1, &st, NULL);
    sqlite3_bind_int64(st, 1, id);
    while (sqlite3_step(st) == SQLITE_ROW) {
        json_t *vals = json_array();
        char *copy = kc_arena_strdup(&b->arena, col_text(b, st, 2) ? col_text(b, st, 2) : ""), *save = NULL;
        for (char *v = strtok_r(copy, ",", &save); v; v = strtok_r(NULL, ",", &save))
            json_array_append_new(vals, json_integer(strtoll(v, NULL, 10)));
        json_array_append_new(a, json_pack("{s:s?, s:I, s:o}", "name", col_text(b, st, 0), "default",
                                           (json_int_t)sqlite3_column_int64(st, 1), "values", vals));
    }
    sqlite3_finalize(st);
    return a;
}

static json_t *variants_json(kc_bundle *b, int64_t id)
{
    json_t *a = json_array();
    sqlite3_stmt *st;
    sqlite3_prepare_v2(b->db,
                       "SELECT tunables, target, length(binary), wg_x, wg_y, wg_z, features, shared_bytes, args_size "
                       "FROM variants WHERE kernel_id = ?1 ORDER BY target, id",
                       -1, &st, NULL);
    sqlite3_bind_int64(st, 1, id);
    while (sqlite3_step(st) == SQLITE_ROW)
        json_array_append_new(
            a, json_pack("{s:s?, s:s?, s:I, s:[I,I,I], s:s?, s:I, s:I}", "variant", col_text(b, st, 0), "target",
                         col_text(b, st, 1), "bytes", (json_int_t)sqlite3_column_int64(st, 2), "workgroup",
                         (json_int_t)sqlite3_column_int64(st, 3), (json_int_t)sqlite3_column_int64(st, 4),
                         (json_int_t)sqlite3_column_int64(st, 5), "features", col_text(b, st, 6), "shared_bytes",
                         (json_int_t)sqlite3_column_int64(st, 7), "args_size", (json_int_t)sqlite3_column_int64(st, 8)));
    sqlite3_finalize(st);
    return a;
}

static json_t *tuned_json(kc_bundle *b, int64_t id)
{
    json_t *a = json_array();
    sqlite3_stmt *st;
    sqlite3_prepare_v2(b->db,
                       "SELECT device_key, device_family, backend, shape, variant, time_ns FROM tuned "
                       "WHERE kernel_id = ?1 ORDER BY device_key, shape",
                       -1, &st, NULL);
    sqlite3_bind_int64(st, 1, id);
    while (sqlite3_step(st) == SQLITE_ROW)
        json_array_append_new(a, json_pack("{s:s?, s:s?, s:s?, s:s?, s:s?, s:f}", "device", col_text(b, st, 0), "family",
                                           col_text(b, st, 1), "backend", col_text(b, st, 2), "shape", col_text(b, st, 3),
                                           "variant", col_text(b, st, 4), "time_ns", sqlite3_column_double(st, 5)));
    sqlite3_finalize(st);
    return a;
}

static json_t *describe_json(kc_bundle *b)
{
    json_t *kernels = json_array();
    sqlite3_stmt *st;
    sqlite3_prepare_v2(b->db,
                       "SELECT id, name, source_path, source_hash, wg, grid, may_alias, default_variant, tolerance, "
                       "init, bytes, flops FROM kernels ORDER BY id",
                       -1, &st, NULL);
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        json_t *k = json_pack("{s:s?, s:s?, s:s?, s:o, s:o, s:b, s:s?, s:f, s:s?}", "name", col_text(b, st, 1), "source",
                              col_text(b, st, 2), "source_hash", col_text(b, st, 3), "workgroup",
                              triple(b, col_text(b, st, 4), NULL), "grid", triple(b, col_text(b, st, 5), NULL),
                              "may_alias", sqlite3_column_int(st, 6), "default_variant", col_text(b, st, 7),
                              "tolerance", sqlite3_column_double(st, 8), "init", col_text(b, st, 9));
        json_object_set_new(k, "bytes", col_text(b, st, 10) ? json_string(infix(b, col_text(b, st, 10), NULL)) : json_null());
        json_object_set_new(k, "flops", col_text(b, st, 11) ? json_string(infix(b, col_text(b, st, 11), NULL)) : json_null());
        json_object_set_new(k, "params", params_json(b, id));
        json_object_set_new(k, "tunables", tunables_json(b, id));
        json_object_set_new(k, "constraints",
                            list_json(b, "SELECT text FROM constraints WHERE kernel_id = ?1", id, false));
        json_object_set_new(k, "shapes",
                            list_json(b, "SELECT shape FROM shapes WHERE kernel_id = ?1 ORDER BY idx", id, false));
        json_object_set_new(k, "variants", variants_json(b, id));
        json_object_set_new(k, "tuned", tuned_json(b, id));
        json_array_append_new(kernels, k);
    }
    sqlite3_finalize(st);
    return json_pack("{s:s?, s:s?, s:s?, s:s?, s:s?, s:o}", "package", kc_bundle_meta(b, "package"), "format",
                     kc_bundle_meta(b, "format"), "kc_version", kc_bundle_meta(b, "kc_version"), "created",
                     kc_bundle_meta(b, "created"), "checked", kc_bundle_meta(b, "checked"), "kernels", kernels);
}

/* ---- the text form ----------------------------------------------------------------- */

static const char *str(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static void text_kernel(kc_buf *out, json_t *k)
{
    kc_buf_printf(out, "\nkernel %s  (%s, source %.12s…)\n  signature  %s(", str(k, "name"), str(k, "source"),
                  str(k, "source_hash"), str(k, "name"));
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(k, "params"), i, v)
    {
        bool buf = !strcmp(str(v, "kind"), "buffer");
        kc_buf_printf(out, "%s%s%s %s", i ? ", " : "", json_is_true(json_object_get(v, "readonly")) ? "const " : "",
                      str(v, "type"), str(v, "name"));
        if (buf)
            kc_buf_printf(out, "[%s]", json_is_string(json_object_get(v, "extent")) ? str(v, "extent") : "");
    }
    json_t *wg = json_object_get(k, "workgroup"), *grid = json_object_get(k, "grid");
    kc_buf_printf(out, ")\n  workgroup  (%s, %s, %s)\n  grid       (%s, %s, %s)\n", json_string_value(json_array_get(wg, 0)),
                  json_string_value(json_array_get(wg, 1)), json_string_value(json_array_get(wg, 2)),
                  json_string_value(json_array_get(grid, 0)), json_string_value(json_array_get(grid, 1)),
                  json_string_value(json_array_get(grid, 2)));
    json_t *ts = json_object_get(k, "tunables");
    if (json_array_size(ts)) {
        kc_buf_puts(out, "  tunables  ");
        json_array_foreach(ts, i, v)
        {
            kc_buf_printf(out, " %s ∈ {", str(v, "name"));
            size_t j;
            json_t *x;
            json_array_foreach(json_object_get(v, "values"), j, x)
            {
                json_int_t n = json_integer_value(x);
                kc_buf_printf(out, "%s%lld%s", j ? ", " : "", (long long)n,
                              n == json_integer_value(json_object_get(v, "default")) ? "*" : "");
            }
            kc_buf_putc(out, '}');
        }
        kc_buf_puts(out, "   (* default)\n");
    }
    json_array_foreach(json_object_get(k, "constraints"), i, v) kc_buf_printf(out, "  require    %s\n", json_string_value(v));
    json_t *shapes = json_object_get(k, "shapes");
    if (json_array_size(shapes)) {
        kc_buf_puts(out, "  shapes    ");
        json_array_foreach(shapes, i, v) kc_buf_printf(out, "%s %s", i ? ";" : "", json_string_value(v));
        kc_buf_putc(out, '\n');
    }
    kc_buf_printf(out, "  init       %s   tolerance %g", *str(k, "init") ? str(k, "init") : "uniform",
                  json_real_value(json_object_get(k, "tolerance")));
    if (json_is_string(json_object_get(k, "bytes")))
        kc_buf_printf(out, "   bytes %s", str(k, "bytes"));
    if (json_is_string(json_object_get(k, "flops")))
        kc_buf_printf(out, "   flops %s", str(k, "flops"));
    json_t *vs = json_object_get(k, "variants");
    kc_buf_printf(out, "\n  variants   %zu built (default %s):", json_array_size(vs),
                  *str(k, "default_variant") ? str(k, "default_variant") : "-");
    const char *last = "";
    int count = 0;
    json_array_foreach(vs, i, v)
    {
        if (strcmp(last, str(v, "target")) != 0) {
            if (count)
                kc_buf_printf(out, " %d", count);
            kc_buf_printf(out, " %s", str(v, "target"));
            last = str(v, "target");
            count = 0;
        }
        count++;
    }
    if (count)
        kc_buf_printf(out, " %d", count);
    kc_buf_putc(out, '\n');
    json_t *tuned = json_object_get(k, "tuned");
    if (!json_array_size(tuned))
        kc_buf_puts(out, "  tuned      none (kc tune BUNDLE measures on your device)\n");
    json_array_foreach(tuned, i, v) kc_buf_printf(out, "  tuned      %s  %s  %s  %.1f us\n", str(v, "device"),
                                                  str(v, "shape"), str(v, "variant"),
                                                  json_real_value(json_object_get(v, "time_ns")) / 1e3);
}

bool kc_bundle_describe(kc_bundle *b, kc_buf *out, bool as_json, char *err, size_t errlen)
{
    json_t *d = describe_json(b);
    if (!d) {
        snprintf(err, errlen, "the bundle's tables are damaged");
        return false;
    }
    if (as_json) {
        char *s = json_dumps(d, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        kc_buf_puts(out, s);
        kc_buf_putc(out, '\n');
        free(s);
    } else {
        kc_buf_printf(out, "bundle  package %s, format %s, built by kc %s on %s\n", str(d, "package"), str(d, "format"),
                      str(d, "kc_version"), str(d, "created"));
        if (*str(d, "checked"))
            kc_buf_printf(out, "        checked build (%s): for finding bugs, not for speed or for kc tune\n",
                          str(d, "checked"));
        size_t i;
        json_t *k;
        json_array_foreach(json_object_get(d, "kernels"), i, k) text_kernel(out, k);
    }
    json_decref(d);
    return true;
}

/* ---- export ---------------------------------------------------------------------- */

static const char *extension(const char *target)
{
    if (!strcmp(target, "spirv"))
        return "spv";
    if (!strncmp(target, "sm_", 3))
        return "ptx";
    return "hsaco";
}

/* The manifest entry of one variant: where each argument goes. */
static void manifest_variant(kc_bundle *b, kc_buf *m, sqlite3_stmt *v, int64_t kernel_id, const char *file,
                             const char *grid)
{
    const char *tunables = col_text(b, v, 0), *target = col_text(b, v, 1), *args = col_text(b, v, 6);
    kc_buf_printf(m, "      - variant: \"%s\"\n        target: %s\n        file: %s\n", tunables, target, file);
    kc_buf_printf(m, "        entry_point: %s\n", col_text(b, v, 9));
    kc_buf_printf(m, "        workgroup_size: [%lld, %lld, %lld]\n", (long long)sqlite3_column_int64(v, 3),
                  (long long)sqlite3_column_int64(v, 4), (long long)sqlite3_column_int64(v, 5));
    kc_buf_printf(m, "        grid: [");
    char *copy = kc_arena_strdup(&b->arena, grid), *save = NULL;
    int i = 0;
    for (char *g = strtok_r(copy, ";", &save); g; g = strtok_r(NULL, ";", &save))
        kc_buf_printf(m, "%s\"%s\"", i++ ? ", " : "", infix(b, g, tunables));
    kc_buf_printf(m, "]\n        %s: %lld\n", strcmp(target, "spirv") ? "kernarg_bytes" : "push_constant_bytes",
                  (long long)sqlite3_column_int64(v, 7));
    if (!strcmp(target, "spirv"))
        kc_buf_printf(m, "        scalars_in_storage_buffer: %s\n", sqlite3_column_int(v, 8) ? "true" : "false");
    kc_buf_printf(m, "        features: [%s]\n        args:\n", col_text(b, v, 10) ? col_text(b, v, 10) : "");
    sqlite3_stmt *p;
    sqlite3_prepare_v2(b->db, "SELECT name, kind, type FROM params WHERE kernel_id = ?1 ORDER BY idx", -1, &p, NULL);
    sqlite3_bind_int64(p, 1, kernel_id);
    char *acopy = kc_arena_strdup(&b->arena, args ? args : ""), *asave = NULL;
    char *arg = strtok_r(acopy, ";", &asave);
    while (sqlite3_step(p) == SQLITE_ROW) {
        kc_buf_printf(m, "          - {name: %s, kind: %s, type: %s", col_text(b, p, 0), col_text(b, p, 1),
                      col_text(b, p, 2));
        if (arg && arg[0] == '@')
            kc_buf_printf(m, ", set: 0, binding: %s}\n", arg + 1);
        else if (arg)
            kc_buf_printf(m, ", offset: %.*s, size: %s}\n", (int)strcspn(arg, ":"), arg, strchr(arg, ':') ? strchr(arg, ':') + 1 : "?");
        else
            kc_buf_puts(m, "}\n");
        arg = strtok_r(NULL, ";", &asave);
    }
    sqlite3_finalize(p);
}

/* A piece of an exported file's name, as kc build writes them: a kernel
 * name (an identifier), tunables ("WG=64,TM=2") or a target. Anything else
 * ("../pwned", "a/b", a newline that would break the manifest) comes from a
 * damaged or hostile bundle and must not reach a path. */
static bool safe_name_part(const char *s)
{
    if (!*s || *s == '.' || *s == '-')
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("_=,-", *s))
            return false;
    return true;
}

bool kc_bundle_export(kc_bundle *b, const char *dir, FILE *log, char *err, size_t errlen)
{
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create '%s': %s", dir, strerror(errno));
        return false;
    }
    kc_buf m = {0};
    kc_buf_printf(&m, "# written by kc export; how to load each binary with your own runtime\n"
                      "# SPIR-V: descriptor set 0, storage buffers at the bindings given; scalars in one\n"
                      "# push-constant block at the offsets given (bool as uint 0/1, half as float).\n"
                      "# AMDGPU code objects (.hsaco) and PTX: one kernel-argument buffer, each argument at\n"
                      "# the offset given (buffers as 8-byte device pointers, bool a 4-byte 0/1, half 2\n"
                      "# bytes); kernarg_bytes is its size, and there are no hidden arguments.\n"
                      "package: %s\nkernels:\n", kc_bundle_meta(b, "package") ? kc_bundle_meta(b, "package") : "");
    sqlite3_stmt *k, *v;
    sqlite3_prepare_v2(b->db, "SELECT id, name, grid FROM kernels ORDER BY id", -1, &k, NULL);
    bool ok = true;
    int files = 0;
    while (ok && sqlite3_step(k) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(k, 0);
        const char *name = col_text(b, k, 1), *grid = col_text(b, k, 2);
        kc_buf_printf(&m, "  - name: %s\n    variants:\n", name);
        sqlite3_prepare_v2(b->db,
                           "SELECT tunables, target, binary, wg_x, wg_y, wg_z, args, args_size, spilled, ?2, features "
                           "FROM variants WHERE kernel_id = ?1 ORDER BY target, id",
                           -1, &v, NULL);
        sqlite3_bind_int64(v, 1, id);
        sqlite3_bind_text(v, 2, name, -1, SQLITE_STATIC);
        while (ok && sqlite3_step(v) == SQLITE_ROW) {
            const char *tunables = col_text(b, v, 0), *target = col_text(b, v, 1);
            const char *bad = !safe_name_part(name) ? name : *tunables && !safe_name_part(tunables) ? tunables
                              : !safe_name_part(target)                                           ? target
                                                                                                  : NULL;
            if (bad) {
                snprintf(err, errlen,
                         "the bundle is damaged: '%.64s' cannot be part of a file name (kc build writes "
                         "identifiers, tunables and target names); nothing is written for it",
                         bad);
                ok = false;
                break;
            }
            const char *file = kc_arena_printf(&b->arena, "%s.%s.%s.%s", name, *tunables ? tunables : "default",
                                               target, extension(target));
            const char *path = kc_arena_printf(&b->arena, "%s/%s", dir, file);
            if (kc_write_file_atomic(path, sqlite3_column_blob(v, 2), (size_t)sqlite3_column_bytes(v, 2)) != 0) {
                snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
                ok = false;
            }
            manifest_variant(b, &m, v, id, file, grid);
            files++;
        }
        sqlite3_finalize(v);
    }
    sqlite3_finalize(k);
    const char *mpath = kc_arena_printf(&b->arena, "%s/manifest.yaml", dir);
    if (ok && kc_write_file_atomic(mpath, m.data, m.len) != 0) {
        snprintf(err, errlen, "cannot write '%s': %s", mpath, strerror(errno));
        ok = false;
    }
    if (ok && log)
        fprintf(log, "kc export: wrote %d binar%s and manifest.yaml to %s\n", files, files == 1 ? "y" : "ies", dir);
    kc_buf_free(&m);
    return ok;
}
