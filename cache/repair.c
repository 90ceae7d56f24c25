/*
 * repair.c — `kc cache check` and `kc cache repair`: what to do with a
 * damaged tuning cache instead of starting over.
 *
 * A repair never deletes: the damaged file (with its -wal and -shm) is
 * renamed to PATH.damaged-TIME, and a new cache is written beside it with
 * every row SQLite can still read. Rows are read in rowid order; where a
 * damaged page stops the scan, the scan seeks past it (a step of 1, then
 * 2, 4, … rowids, reset after each good row), so one bad page loses the
 * rows on it and no others. The work is bounded: each failed seek doubles
 * the step, so a file of garbage ends in at most 64 seeks.
 */
#include "kc_cache.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

bool kc_cache_check(const char *path, kc_buf *report)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        kc_buf_printf(report, "%s: %s\n", path, strerror(errno));
        return false;
    }
    if (st.st_size == 0) {
        kc_buf_printf(report, "%s: empty (0 bytes): truncated; 'kc cache repair' starts a new cache\n", path);
        return false;
    }
    sqlite3 *db = NULL;
    bool ok = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK;
    sqlite3_stmt *st_check = NULL;
    int problems = 0;
    if (ok && sqlite3_prepare_v2(db, "PRAGMA integrity_check(100)", -1, &st_check, NULL) == SQLITE_OK) {
        int rc;
        while ((rc = sqlite3_step(st_check)) == SQLITE_ROW) {
            const char *line = (const char *)sqlite3_column_text(st_check, 0);
            if (line && strcmp(line, "ok") != 0)
                kc_buf_printf(report, "%s: %s\n", path, line), problems++;
        }
        if (rc != SQLITE_DONE)
            kc_buf_printf(report, "%s: %s\n", path, sqlite3_errmsg(db)), problems++;
    } else {
        kc_buf_printf(report, "%s: %s\n", path, db ? sqlite3_errmsg(db) : "out of memory");
        problems++;
    }
    sqlite3_finalize(st_check);
    sqlite3_close(db);
    if (!problems)
        kc_buf_printf(report, "%s: ok\n", path);
    else
        kc_buf_printf(report, "%s: damaged; 'kc cache repair' keeps every result SQLite can still read\n", path);
    return problems == 0;
}

/* ---- repair ------------------------------------------------------------------- */

typedef struct salvage {
    sqlite3 *from, *to;
    const char *table, *cols;
    int ncols;
    long kept, skips;
} salvage;

/* Copies the rows from rowid `next` on until the scan ends or fails;
 * returns SQLITE_DONE, or the error that stopped it with *next past the
 * last good row. */
static int copy_from(salvage *S, sqlite3_int64 *next)
{
    char sql[512], ins[512], marks[128] = "";
    for (int i = 0; i < S->ncols; i++)
        snprintf(marks + strlen(marks), sizeof(marks) - strlen(marks), "%s?%d", i ? "," : "", i + 1);
    snprintf(sql, sizeof(sql), "SELECT rowid, %s FROM %s WHERE rowid >= ?1 ORDER BY rowid", S->cols, S->table);
    snprintf(ins, sizeof(ins), "INSERT OR IGNORE INTO %s(%s) VALUES(%s)", S->table, S->cols, marks);
    sqlite3_stmt *sel = NULL, *put = NULL;
    if (sqlite3_prepare_v2(S->from, sql, -1, &sel, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(S->to, ins, -1, &put, NULL) != SQLITE_OK) {
        int rc = sqlite3_errcode(S->from);
        sqlite3_finalize(sel);
        sqlite3_finalize(put);
        return rc == SQLITE_OK ? SQLITE_ERROR : rc;
    }
    sqlite3_bind_int64(sel, 1, *next);
    int rc;
    while ((rc = sqlite3_step(sel)) == SQLITE_ROW) {
        *next = sqlite3_column_int64(sel, 0) + 1;
        for (int i = 0; i < S->ncols; i++)
            sqlite3_bind_value(put, i + 1, sqlite3_column_value(sel, i + 1));
        if (sqlite3_step(put) == SQLITE_DONE && sqlite3_changes(S->to) > 0)
            S->kept++;
        sqlite3_reset(put);
    }
    sqlite3_finalize(sel);
    sqlite3_finalize(put);
    return rc;
}

static void salvage_table(salvage *S)
{
    sqlite3_int64 next = INT64_MIN, step = 1;
    for (int seeks = 0; seeks < 64; seeks++) {
        sqlite3_int64 before = next;
        if (copy_from(S, &next) == SQLITE_DONE)
            return;
        S->skips++;
        if (next != before)
            step = 1; /* it read rows before failing: the bad page is just past them */
        if (next > INT64_MAX - step)
            return;
        next += step;
        step *= 2;
    }
}

/* Moves path and its -wal and -shm aside, to PATH.damaged-TIME*. */
static bool set_aside(const char *path, char *aside, size_t len, char *err, size_t errlen)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    char stamp[32];
    strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
    snprintf(aside, len, "%s.damaged-%s", path, stamp);
    static const char *const suffix[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        char from[4200], to[4200];
        snprintf(from, sizeof(from), "%s%s", path, suffix[i]);
        snprintf(to, sizeof(to), "%s%s", aside, suffix[i]);
        if (kc_file_replace(from, to) != 0 && !(i > 0 && errno == ENOENT)) {
            snprintf(err, errlen, "cannot move '%s' aside to '%s': %s", from, to, strerror(errno));
            return false;
        }
    }
    return true;
}

/* The new cache, written next to the old one and closed as one file. */
static sqlite3 *fresh_cache(const char *tmp, char *err, size_t errlen)
{
    kc_cache *c = kc_cache_open(tmp, err, errlen);
    if (!c)
        return NULL;
    kc_cache_close(c);
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(tmp, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "cannot open '%s': %s", tmp, db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    return db;
}

static bool finish_fresh(sqlite3 *db, char *err, size_t errlen)
{
    char *msg = NULL;
    bool ok = sqlite3_exec(db, "COMMIT; PRAGMA journal_mode = DELETE;", NULL, NULL, &msg) == SQLITE_OK;
    if (!ok)
        snprintf(err, errlen, "cannot write the repaired cache: %s", msg ? msg : "?");
    sqlite3_free(msg);
    return sqlite3_close(db) == SQLITE_OK && ok;
}

bool kc_cache_repair(const char *path, kc_cache_repair_report *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.repair-%ld", path, kc_process_id());
    remove(tmp);
    sqlite3 *to = fresh_cache(tmp, err, errlen);
    if (!to)
        return false;
    sqlite3 *from = NULL;
    struct stat st;
    if (stat(path, &st) == 0 && st.st_size > 0 &&
        sqlite3_open_v2(path, &from, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        salvage results = {from, to, "results",
                           "kernel, source_hash, compiler, device_key, device, backend, shape, variant, status, "
                           "time_ns, samples, spread, detail, measured_at",
                           14, 0, 0};
        salvage spaces = {from, to, "spaces", "kernel, source_hash, space", 3, 0, 0};
        salvage_table(&results);
        salvage_table(&spaces);
        out->results = results.kept;
        out->spaces = spaces.kept;
        out->skips = results.skips + spaces.skips;
    }
    sqlite3_close(from);
    if (!finish_fresh(to, err, errlen) || !set_aside(path, out->aside, sizeof(out->aside), err, errlen)) {
        remove(tmp);
        return false;
    }
    if (kc_file_replace(tmp, path) != 0) {
        snprintf(err, errlen, "cannot put the repaired cache at '%s' (it is at '%s'): %s", path, tmp,
                 strerror(errno));
        return false;
    }
    return true;
}
