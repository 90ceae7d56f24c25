/*
 * bundle_write.c — writing a bundle (support/kc_bundle_schema.h).
 *
 * The bundle is built in a temporary file next to the destination, in one
 * transaction, synced, then renamed over the destination: an interrupted
 * build leaves the old bundle (or none), never half of a new one.
 */
#include "bundle_private.h"
#include "kc_bundle_digest.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kc_bundle_schema.h"

static bool exec(sqlite3 *db, const char *sql, kc_buf *err)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
        return true;
    kc_buf_printf(err, "%s", msg ? msg : sqlite3_errmsg(db));
    sqlite3_free(msg);
    return false;
}

/* Binds ?1, ?2, … from a format: 't' text, 'i' int64, 'd' double, 'b'
 * blob (pointer, size_t), 'n' null. */
static bool run(sqlite3 *db, kc_buf *err, const char *sql, const char *fmt, ...)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        kc_buf_printf(err, "%s", sqlite3_errmsg(db));
        return false;
    }
    va_list ap;
    va_start(ap, fmt);
    for (int i = 1; *fmt; fmt++, i++) {
        switch (*fmt) {
        case 't': sqlite3_bind_text(st, i, va_arg(ap, const char *), -1, SQLITE_TRANSIENT); break;
        case 'i': sqlite3_bind_int64(st, i, va_arg(ap, int64_t)); break;
        case 'd': sqlite3_bind_double(st, i, va_arg(ap, double)); break;
        case 'b': {
            const void *p = va_arg(ap, const void *);
            size_t n = va_arg(ap, size_t);
            sqlite3_bind_blob64(st, i, p, n, SQLITE_TRANSIENT);
            break;
        }
        default: sqlite3_bind_null(st, i); break;
        }
    }
    va_end(ap);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_DONE)
        kc_buf_printf(err, "%s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return rc == SQLITE_DONE;
}

static const char *postfix(kc_arena *a, const kc_iexpr *e)
{
    if (!e)
        return NULL;
    kc_buf b = {0};
    kc_iexpr_write_postfix(&b, e);
    const char *s = kc_arena_strdup(a, b.data);
    kc_buf_free(&b);
    return s;
}

static const char *postfix3(kc_arena *a, kc_iexpr *const e[3])
{
    return kc_arena_printf(a, "%s;%s;%s", postfix(a, e[0]), postfix(a, e[1]), postfix(a, e[2]));
}

static bool write_sources(sqlite3 *db, const kc_package *p, kc_buf *err)
{
    for (int i = 0; i < p->files.len; i++) {
        const kc_pkg_file *f = p->files.items[i];
        for (int s = 0; s < f->ctx.src.nfiles; s++) {
            const kc_src_file *sf = f->ctx.src.files[s];
            if (!sf->builtin &&
                !run(db, err, "INSERT OR IGNORE INTO sources(path, text) VALUES(?1, ?2)", "tt", sf->path, sf->text))
                return false;
        }
    }
    return true;
}

static bool write_params(sqlite3 *db, kc_arena *a, int64_t id, const kc_func *k, kc_buf *err)
{
    for (int i = 0; i < k->params.len; i++) {
        const kc_sym *s = k->params.items[i];
        const char *type = kc_type_name(a, kc_type_base(s->type));
        const char *extent = NULL, *dims = NULL;
        if (s->is_buffer) {
            kc_iexpr *n = NULL;
            kc_buf d = {0};
            bool known = true;
            for (int j = 0; j < s->dims.len; j++) {
                kc_iexpr *e = s->dims.items[j];
                kc_buf_printf(&d, "%s%s", j ? ";" : "", e ? postfix(a, e) : "?");
                known &= e != NULL;
                n = !e ? n : n ? kc_iexpr_make(a, KC_IX_MUL, n, e, NULL) : e;
            }
            extent = known && n ? postfix(a, n) : NULL;
            dims = kc_arena_strdup(a, d.data ? d.data : "?");
            kc_buf_free(&d);
        }
        if (!run(db, err,
                 "INSERT INTO params(kernel_id, idx, name, kind, type, readonly, extent, dims) "
                 "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                 "iitttitt", id, (int64_t)i, s->name, s->is_buffer ? "buffer" : "scalar", type,
                 (int64_t)s->is_const, extent, dims))
            return false;
    }
    return true;
}

static kc_iexpr *with_defaults(kc_arena *a, const kc_program *prog, const kc_tunable **ts, int n, const kc_iexpr *e)
{
    if (!e)
        return NULL;
    if (e->op == KC_IX_NAME) {
        for (int i = 0; i < n; i++)
            if (strcmp(ts[i]->name, e->name) == 0)
                return kc_iexpr_name(a, e->name);
        for (int i = 0; i < prog->tunables.len; i++) {
            const kc_tunable *t = prog->tunables.items[i];
            if (strcmp(t->name, e->name) == 0)
                return kc_iexpr_const(a, t->def);
        }
        return kc_iexpr_name(a, e->name);
    }
    if (e->op == KC_IX_CONST)
        return kc_iexpr_const(a, e->value);
    return kc_iexpr_fold(a, kc_iexpr_make(a, e->op, with_defaults(a, prog, ts, n, e->a),
                                          with_defaults(a, prog, ts, n, e->b), with_defaults(a, prog, ts, n, e->c)));
}

static bool write_space(sqlite3 *db, kc_arena *a, int64_t id, const kc_program *prog, const kc_func *k, kc_buf *err)
{
    const kc_tunable *ts[256];
    int n = kc_ir_kernel_tunables(prog, k, ts, 256);
    for (int i = 0; i < n; i++) {
        kc_buf v = {0};
        for (int j = 0; j < ts[i]->nvalues; j++)
            kc_buf_printf(&v, "%s%lld", j ? "," : "", (long long)ts[i]->values[j]);
        bool ok = run(db, err, "INSERT INTO tunables(kernel_id, idx, name, def, vals) VALUES(?1, ?2, ?3, ?4, ?5)",
                      "iitit", id, (int64_t)i, ts[i]->name, ts[i]->def, v.data);
        kc_buf_free(&v);
        if (!ok)
            return false;
    }
    for (int i = 0; i < prog->requires.len; i++) {
        const kc_require *r = prog->requires.items[i];
        bool mine = false;
        for (int j = 0; r->cond && j < n; j++) {
            kc_buf t = {0};
            kc_iexpr_write_postfix(&t, r->cond);
            char *hit = strstr(t.data, ts[j]->name);
            size_t len = strlen(ts[j]->name);
            mine |= hit && (hit == t.data || hit[-1] == ' ') && (hit[len] == ' ' || !hit[len]);
            kc_buf_free(&t);
        }
        if (!mine)
            continue;
        /* tunables the kernel does not use are fixed at their defaults, so
         * the constraint names only the kernel's own (the runtime and the
         * tuner can evaluate it) */
        kc_iexpr *cond = with_defaults(a, prog, ts, n, r->cond);
        kc_buf text = {0};
        kc_iexpr_write_infix(&text, cond);
        bool ok = run(db, err, "INSERT INTO constraints(kernel_id, expr, text) VALUES(?1, ?2, ?3)", "itt", id,
                      postfix(a, cond), text.data);
        kc_buf_free(&text);
        if (!ok)
            return false;
    }
    return true;
}

static bool write_kernel(sqlite3 *db, kc_arena *a, const kc_bundle_kernel *bk, kc_buf *err)
{
    const kc_func *k = bk->kernel;
    const kc_kernel_cfg *c = bk->cfg;
    if (!run(db, err,
             "INSERT INTO kernels(id, name, source_path, source_hash, wg, grid, may_alias, default_variant, "
             "tolerance, init, bytes, flops) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
             "itttttitdttt", bk->id, k->name, bk->file->path, bk->file->prog->source_hash, postfix3(a, k->wg_size),
             postfix3(a, k->grid_size), (int64_t)k->may_alias, bk->default_variant, c->tolerance, c->init,
             postfix(a, c->bytes), postfix(a, c->flops)))
        return false;
    char digest[65];
    if (!write_params(db, a, bk->id, k, err) || !write_space(db, a, bk->id, bk->file->prog, k, err))
        return false;
    if (!kc_bundle_kernel_digest(db, bk->id, digest)) {
        kc_buf_printf(err, "%s", sqlite3_errmsg(db));
        return false;
    }
    if (!run(db, err, "INSERT INTO meta VALUES('digest.' || ?1, ?2)", "tt", k->name, digest))
        return false;
    for (int i = 0; i < c->defaults.len; i++) {
        const kc_type_default *d = c->defaults.items[i];
        if (!run(db, err, "INSERT INTO meta VALUES('default.' || ?1 || '.' || ?2, ?3)", "ttt", d->type, k->name,
                 d->tunables))
            return false;
    }
    for (int i = 0; i < c->shapes.len; i++)
        if (!run(db, err, "INSERT INTO shapes(kernel_id, idx, shape) VALUES(?1, ?2, ?3)", "iit", bk->id, (int64_t)i,
                 (const char *)c->shapes.items[i]))
            return false;
    return true;
}

bool kc_bundle_write_variant(sqlite3 *db, int64_t kernel_id, const char *tunables, const char *target,
                             const kc_variant_blob *b, kc_buf *err)
{
    char sum[65];
    kc_sha256_hex(b->data, b->size, sum);
    return run(db, err,
               "INSERT OR REPLACE INTO variants(kernel_id, tunables, target, binary, wg_x, wg_y, wg_z, args, "
               "args_size, spilled, shared_bytes, features, checksum) "
               "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
               "ittbiiitiiitt", kernel_id, tunables, target, b->data, b->size, (int64_t)b->wg[0], (int64_t)b->wg[1],
               (int64_t)b->wg[2], b->args, (int64_t)b->args_size, (int64_t)b->spilled, (int64_t)b->shared_bytes,
               b->features, sum);
}

/* A checked build (support/kc_checked.h): the mark, and each kernel's
 * source files in the order its bounds records count them. */
static bool write_checked(sqlite3 *db, const kc_vec *kernels, kc_buf *err)
{
    if (!run(db, err, "INSERT INTO meta VALUES('checked', 'bounds')", ""))
        return false;
    for (int i = 0; i < kernels->len; i++) {
        const kc_bundle_kernel *bk = kernels->items[i];
        kc_buf files = {0};
        for (int f = 0; f < bk->file->ctx.src.nfiles; f++)
            kc_buf_printf(&files, "%s%s", f ? "\n" : "", bk->file->ctx.src.files[f]->path);
        bool ok = run(db, err, "INSERT INTO meta VALUES('checked.files.' || ?1, ?2)", "tt", bk->kernel->name,
                      files.data ? files.data : "");
        kc_buf_free(&files);
        if (!ok)
            return false;
    }
    return true;
}

static bool write_all(sqlite3 *db, const kc_package *p, const kc_vec *kernels, const kc_vec *variants, bool checked,
                      kc_buf *err)
{
    kc_arena a;
    kc_arena_init(&a);
    char sql[256], created[64];
    time_t now = time(NULL);
    strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    snprintf(sql, sizeof(sql), "PRAGMA application_id = %d; PRAGMA user_version = %d;", KC_BUNDLE_APPLICATION_ID,
             KC_BUNDLE_FORMAT);
    bool ok = exec(db, sql, err) && exec(db, "BEGIN", err) && exec(db, KC_BUNDLE_SCHEMA, err) &&
              run(db, err, "INSERT INTO meta VALUES('format', ?1)", "i", (int64_t)KC_BUNDLE_FORMAT) &&
              run(db, err, "INSERT INTO meta VALUES('kc_version', ?1)", "t", KC_VERSION) &&
              run(db, err, "INSERT INTO meta VALUES('package', ?1)", "t", p->name) &&
              run(db, err, "INSERT INTO meta VALUES('created', ?1)", "t", created) && write_sources(db, p, err);
    ok = ok && (!checked || write_checked(db, kernels, err));
    for (int i = 0; ok && i < kernels->len; i++)
        ok = write_kernel(db, &a, kernels->items[i], err);
    for (int i = 0; ok && i < variants->len; i++) {
        const kc_bundle_variant *v = variants->items[i];
        ok = kc_bundle_write_variant(db, v->kernel->id, v->tunables, v->target, &v->blob, err);
    }
    ok = ok && exec(db, "COMMIT", err);
    kc_arena_free(&a);
    return ok;
}

bool kc_bundle_write(const char *path, const kc_package *p, const kc_vec *kernels, const kc_vec *variants, bool checked,
                     kc_buf *err)
{
    char *tmp = malloc(strlen(path) + 16);
    if (!tmp)
        abort();
    sprintf(tmp, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        kc_buf_printf(err, "cannot create a file next to '%s': %s", path, strerror(errno));
        free(tmp);
        return false;
    }
    bool moded = kc_file_set_new_mode(fd) == 0; /* not mkstemp's 0600 */
    if (!moded)
        kc_buf_printf(err, "cannot set the mode of '%s': %s", tmp, strerror(errno));
    close(fd);
    sqlite3 *db = NULL;
    bool ok = moded && sqlite3_open_v2(tmp, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK;
    if (!ok)
        kc_buf_printf(err, "cannot open '%s': %s", tmp, db ? sqlite3_errmsg(db) : "out of memory");
    ok = ok && exec(db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = FULL;", err) && write_all(db, p, kernels, variants, checked, err);
    if (db && sqlite3_close(db) != SQLITE_OK && ok) {
        kc_buf_printf(err, "cannot close '%s'", tmp);
        ok = false;
    }
    if (ok) { /* the data is on disk: now make it the bundle in one step */
        ok = kc_file_sync_path(tmp) == 0;
        if (!ok)
            kc_buf_printf(err, "cannot write '%s' to disk: %s", tmp, strerror(errno));
        if (ok && kc_file_replace(tmp, path) != 0) {
            kc_buf_printf(err, "cannot write '%s': %s", path, strerror(errno));
            ok = false;
        }
    }
    if (!ok)
        unlink(tmp);
    free(tmp);
    return ok;
}
