/*
 * bundle_tune.c — what kc tune needs from a bundle: the kernel's program
 * rebuilt from the sources the bundle carries, and the winners written
 * back (their binaries, and a row of the tuned table per device and
 * shape).
 */
#include "bundle_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A source's path as built, relative: absolute ones lose their root ("/",
 * or "C:/" when the bundle was built on Windows), so the copy lands under
 * the temporary folder wherever the bundle came from. */
static const char *below_root(const char *path)
{
    if (((path[0] | 32) >= 'a' && (path[0] | 32) <= 'z') && path[1] == ':')
        path += 2;
    while (*path == '/' || *path == '\\')
        path++;
    return path;
}

/* Makes the folders above path. */
static bool mkdirs(char *path)
{
    char *slash = (char *)kc_last_separator(path);
    if (!slash)
        return true;
    char sep = *slash;
    *slash = 0;
    bool ok = kc_make_dirs(path, 0700) == 0;
    *slash = sep;
    return ok;
}

/* Writes every source of the bundle under dir, at its path as built
 * (relative paths stay relative; absolute ones lose their root). */
static bool write_sources(kc_bundle *b, const char *dir, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(b->db, "SELECT path, text FROM sources", -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "the bundle has no sources: %s", sqlite3_errmsg(b->db));
        return false;
    }
    bool ok = true;
    while (ok && sqlite3_step(st) == SQLITE_ROW) {
        const char *path = (const char *)sqlite3_column_text(st, 0), *text = (const char *)sqlite3_column_text(st, 1);
        if (!path || !text || strstr(path, "..")) {
            snprintf(err, errlen, "the bundle's sources are damaged");
            ok = false;
            break;
        }
        char *full = kc_arena_printf(&b->arena, "%s/%s", dir, below_root(path));
        ok = mkdirs(full) && kc_write_file_atomic(full, text, strlen(text)) == 0;
        if (!ok)
            snprintf(err, errlen, "cannot write '%s': %s", full, strerror(errno));
    }
    sqlite3_finalize(st);
    return ok;
}

bool kc_bundle_program(kc_bundle *b, const char *kernel, kc_ctx *ctx, kc_program **prog, const kc_func **k,
                       char *err, size_t errlen)
{
    sqlite3_stmt *st;
    const char *sql = "SELECT source_path, source_hash FROM kernels WHERE name = ?1";
    if (sqlite3_prepare_v2(b->db, sql, -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s", sqlite3_errmsg(b->db));
        return false;
    }
    sqlite3_bind_text(st, 1, kernel, -1, SQLITE_STATIC);
    char *path = NULL, *hash = NULL;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) && sqlite3_column_text(st, 1)) {
        path = kc_arena_strdup(&b->arena, (const char *)sqlite3_column_text(st, 0));
        hash = kc_arena_strdup(&b->arena, (const char *)sqlite3_column_text(st, 1));
    }
    sqlite3_finalize(st);
    if (!path) {
        snprintf(err, errlen, "the bundle has no kernel '%s'", kernel);
        return false;
    }
    char *dir = kc_make_temp_dir("kc-tune-src");
    if (!dir) {
        snprintf(err, errlen, "cannot make a temporary directory: %s", strerror(errno));
        return false;
    }
    bool ok = write_sources(b, dir, err, errlen);
    path = (char *)below_root(path);
    if (ok) {
        /* the sources were confined when the bundle was built, -I folders
         * included: their copy here may read one another */
        kc_ctx_allow_dir(ctx, dir);
        *prog = kc_dsl_parse(ctx, kc_arena_printf(&ctx->arena, "%s/%s", dir, path));
        *k = *prog ? kc_program_func(*prog, kernel) : NULL;
        if (!*k) {
            snprintf(err, errlen, "the sources in the bundle do not build kernel '%s'%s%s", kernel,
                     ctx->diag.text.data ? ":\n" : "", ctx->diag.text.data ? ctx->diag.text.data : "");
            ok = false;
        } else if (strcmp((*prog)->source_hash, hash) != 0) {
            snprintf(err, errlen,
                     "the sources in the bundle no longer give kernel '%s' as built (another kc version?); "
                     "rebuild the bundle with this kc",
                     kernel);
            ok = false;
        }
    }
    kc_remove_tree(dir);
    free(dir);
    return ok;
}

static int64_t kernel_id(kc_bundle *b, const char *kernel)
{
    sqlite3_stmt *st;
    int64_t id = -1;
    if (sqlite3_prepare_v2(b->db, "SELECT id FROM kernels WHERE name = ?1", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, kernel, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW)
            id = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    return id;
}

bool kc_bundle_has_variant(kc_bundle *b, const char *kernel, const char *tunables, const char *target)
{
    sqlite3_stmt *st;
    bool found = false;
    if (sqlite3_prepare_v2(b->db,
                           "SELECT 1 FROM variants v JOIN kernels k ON k.id = v.kernel_id "
                           "WHERE k.name = ?1 AND v.tunables = ?2 AND v.target = ?3",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, kernel, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, tunables, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, target, -1, SQLITE_STATIC);
        found = sqlite3_step(st) == SQLITE_ROW;
    }
    sqlite3_finalize(st);
    return found;
}

bool kc_bundle_put_variant(kc_bundle *b, const char *kernel, const char *tunables, const char *target,
                           const kc_variant_blob *blob, char *err, size_t errlen)
{
    int64_t id = kernel_id(b, kernel);
    kc_buf e = {0};
    bool ok = id > 0 && kc_bundle_write_variant(b->db, id, tunables, target, blob, &e);
    if (!ok)
        snprintf(err, errlen, "cannot add variant %s of '%s': %s", tunables, kernel, id > 0 ? e.data : "no such kernel");
    kc_buf_free(&e);
    return ok;
}

bool kc_bundle_put_tuned(kc_bundle *b, const kc_tuned_row *r, char *err, size_t errlen)
{
    int64_t id = kernel_id(b, r->kernel);
    sqlite3_stmt *st;
    if (id < 0 || sqlite3_prepare_v2(b->db,
                                     "INSERT OR REPLACE INTO tuned(device_key, device_family, backend, kernel_id, "
                                     "shape, variant, time_ns) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                                     -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "cannot record the tuned variant of '%s': %s", r->kernel,
                 id < 0 ? "no such kernel" : sqlite3_errmsg(b->db));
        return false;
    }
    sqlite3_bind_text(st, 1, r->device_key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, r->device_family, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, r->backend, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, id);
    sqlite3_bind_text(st, 5, r->shape, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, r->variant, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 7, r->time_ns);
    bool ok = sqlite3_step(st) == SQLITE_DONE;
    if (!ok)
        snprintf(err, errlen, "cannot record the tuned variant of '%s': %s", r->kernel, sqlite3_errmsg(b->db));
    sqlite3_finalize(st);
    return ok;
}

bool kc_bundle_exec(kc_bundle *b, const char *sql, char *err, size_t errlen)
{
    char *msg = NULL;
    if (sqlite3_exec(b->db, sql, NULL, NULL, &msg) == SQLITE_OK)
        return true;
    snprintf(err, errlen, "%s", msg ? msg : sqlite3_errmsg(b->db));
    sqlite3_free(msg);
    return false;
}
