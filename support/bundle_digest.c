/*
 * bundle_digest.c — kc_bundle_digest.h: one function, compiled into both
 * the bundle writer and libkcrt, so that both hash the same bytes.
 */
#include "kc_bundle_digest.h"

#include <stdio.h>

#include "kc_support.h"

/* Each value, then a unit separator; NULL is its own byte. */
static void hash_row(kc_sha256 *h, sqlite3_stmt *st)
{
    for (int c = 0; c < sqlite3_column_count(st); c++) {
        const unsigned char *v = sqlite3_column_text(st, c);
        if (v)
            kc_sha256_update(h, v, (size_t)sqlite3_column_bytes(st, c));
        else
            kc_sha256_update(h, "\x01", 1);
        kc_sha256_update(h, "\x1f", 1);
    }
    kc_sha256_update(h, "\x1e", 1);
}

static bool hash_query(kc_sha256 *h, sqlite3 *db, const char *sql, int64_t id)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return false;
    sqlite3_bind_int64(st, 1, id);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        hash_row(h, st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE;
}

bool kc_bundle_kernel_digest(sqlite3 *db, int64_t kernel_id, char hex[65])
{
    kc_sha256 h;
    kc_sha256_init(&h);
    if (!hash_query(&h, db, "SELECT name, wg, grid, may_alias FROM kernels WHERE id = ?1", kernel_id) ||
        !hash_query(&h, db,
                    "SELECT idx, name, kind, type, readonly, extent, dims FROM params WHERE kernel_id = ?1 "
                    "ORDER BY idx",
                    kernel_id))
        return false;
    unsigned char sum[32];
    kc_sha256_final(&h, sum);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", sum[i]);
    return true;
}
