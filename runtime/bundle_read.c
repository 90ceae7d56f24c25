/*
 * bundle_read.c — a bundle file (support/kc_bundle_schema.h) read into
 * memory, for no device: libkcrt's kcrt_bundle_load binds what this reads
 * to a context (bundle.c), and kc info, export and tune read through
 * kcrt_bundle_read (kcrt_internal.h). There is no other reader.
 *
 * The file is opened read-only, checked (application_id, user_version,
 * PRAGMA quick_check), read whole into the bundle's arena, and closed: a
 * launch never touches SQLite. Every value read is checked (its SQLite type,
 * counts and indices, names, that expressions parse, that a SPIR-V binary
 * is well formed), so that a damaged or foreign file is an error with a
 * message and never a crash. Problems are reported as "TABLE row N: …".
 * The tuned table is kept whole, every device's rows.
 */
#include "rt_binary.h"
#include "kc_support.h"
#include "rt_private.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kc_bundle_schema.h"
#include "kc_bundle_digest.h"
#include "kc_checked.h"
#include "kc_iexpr.h"


/* One reading of a bundle: where we are, for messages. */
typedef struct rd {
    kcrt_bundle *b;
    sqlite3 *db;
    rt_arena *a;
    const char *table;
    int row;
    char err[RT_MSG];
} rd;

static bool bad(rd *r, const char *fmt, ...) RT_PRINTF(2, 3);
static bool bad(rd *r, const char *fmt, ...)
{
    char msg[RT_MSG];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (r->table)
        rt_printf(r->err, sizeof(r->err), "table %s, row %d: %s", r->table, r->row, msg);
    else
        rt_printf(r->err, sizeof(r->err), "%s", msg);
    return false;
}

/* ---- columns, each of the type the schema says --------------------------------------- */

static bool col_text(rd *r, sqlite3_stmt *st, int i, const char **out, bool nullable)
{
    *out = NULL;
    int t = sqlite3_column_type(st, i);
    const char *name = sqlite3_column_name(st, i);
    if (t == SQLITE_NULL && nullable) {
        *out = NULL;
        return true;
    }
    if (t != SQLITE_TEXT)
        return bad(r, "column '%s' is not text", name ? name : "?");
    const char *s = (const char *)sqlite3_column_text(st, i);
    int n = sqlite3_column_bytes(st, i);
    if (!s || (int)strlen(s) != n)
        return bad(r, "column '%s' holds a NUL byte", name ? name : "?");
    *out = rt_strdup(r->a, s);
    return *out || bad(r, "out of memory");
}

static bool col_int(rd *r, sqlite3_stmt *st, int i, int64_t lo, int64_t hi, int64_t *out)
{
    *out = 0;
    const char *name = sqlite3_column_name(st, i);
    if (sqlite3_column_type(st, i) != SQLITE_INTEGER)
        return bad(r, "column '%s' is not an integer", name ? name : "?");
    *out = sqlite3_column_int64(st, i);
    if (*out < lo || *out > hi)
        return bad(r, "column '%s' is %lld, outside %lld..%lld", name ? name : "?", (long long)*out,
                   (long long)lo, (long long)hi);
    return true;
}

static bool col_real(rd *r, sqlite3_stmt *st, int i, double *out)
{
    *out = 0;
    int t = sqlite3_column_type(st, i);
    const char *name = sqlite3_column_name(st, i);
    if (t != SQLITE_FLOAT && t != SQLITE_INTEGER)
        return bad(r, "column '%s' is not a number", name ? name : "?");
    *out = sqlite3_column_double(st, i);
    return isfinite(*out) || bad(r, "column '%s' is not finite", name ? name : "?");
}

static bool col_blob(rd *r, sqlite3_stmt *st, int i, const void **out, size_t *size)
{
    *out = NULL;
    *size = 0;
    if (sqlite3_column_type(st, i) != SQLITE_BLOB)
        return bad(r, "column 'binary' is not a blob");
    int n = sqlite3_column_bytes(st, i);
    const void *p = sqlite3_column_blob(st, i);
    void *copy = rt_alloc(r->a, (size_t)n);
    if (!copy)
        return bad(r, "out of memory");
    if (n > 0)
        memcpy(copy, p, (size_t)n);
    *out = copy;
    *size = (size_t)n;
    return true;
}

/* ---- statements --------------------------------------------------------------------------- */

static sqlite3_stmt *prepare(rd *r, const char *sql)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK) {
        bad(r, "cannot read it: %s", sqlite3_errmsg(r->db));
        sqlite3_finalize(st);
        return NULL;
    }
    return st;
}

/* Steps; 1 for a row, 0 at the end, -1 after an error (message set). */
static int step(rd *r, sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        r->row++;
        return 1;
    }
    if (rc == SQLITE_DONE)
        return 0;
    bad(r, "cannot read it: %s", sqlite3_errmsg(r->db));
    return -1;
}

/* Reads row i (from 0) of a counted query into the array `items`. */
typedef bool (*row_reader)(rd *r, sqlite3_stmt *st, void *items, int i, void *user);

/* Runs a query over `table` whose column count_col counts its rows (a
 * subquery: the array is allocated once, at the first row, with that
 * many items of `size` bytes), binding ?1 to id when id >= 0, and reads
 * each row with `row`. A count outside 1..max, or more rows than it said,
 * is a damaged table. *items is the array (NULL without rows), *n the
 * rows read, as far as they go on failure. */
static bool read_counted(rd *r, const char *table, const char *sql, int64_t id, int count_col, int64_t max,
                         size_t size, void **items, int *n, row_reader row, void *user)
{
    r->table = table;
    r->row = 0;
    *items = NULL;
    *n = 0;
    sqlite3_stmt *st = prepare(r, sql);
    if (!st)
        return false;
    if (id >= 0)
        sqlite3_bind_int64(st, 1, id);
    int rc;
    while ((rc = step(r, st)) == 1) {
        int64_t count;
        if (!col_int(r, st, count_col, 1, max, &count))
            break;
        if (!*items && !(*items = rt_alloc(r->a, size * (size_t)count))) {
            bad(r, "out of memory");
            break;
        }
        if (*n >= count) {
            bad(r, "more rows than counted");
            break;
        }
        if (!row(r, st, *items, *n, user))
            break;
        (*n)++;
    }
    sqlite3_finalize(st);
    return rc == 0;
}

/* ---- names and expressions ---------------------------------------------------------------- */

static bool is_ident(const char *s)
{
    if (!s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
        return false;
    for (s++; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

/* The names an expression of a kernel may use. */
typedef struct names {
    const rt_kernel *k;
    bool scalars, tunables;
} names;

static bool known_name(void *user, const char *name, int64_t *value)
{
    const names *n = user;
    *value = 1;
    for (int i = 0; n->scalars && i < n->k->info.nparams; i++) {
        const kcrt_param_info *p = &n->k->params[i];
        if (p->kind == KCRT_PARAM_SCALAR && strcmp(p->name, name) == 0)
            return p->type == KCRT_TYPE_INT || p->type == KCRT_TYPE_UINT || p->type == KCRT_TYPE_BOOL;
    }
    for (int i = 0; n->tunables && i < n->k->info.ntunables; i++)
        if (strcmp(n->k->tunables[i].name, name) == 0)
            return true;
    return false;
}

/* Does a postfix expression parse and name only what it may? Arithmetic
 * failures with stand-in values (a division by zero at 1 - 1) are fine. */
static bool check_expr(rd *r, const char *what, const char *text, const rt_kernel *k, bool scalars,
                       bool tunables)
{
    names n = {k, scalars, tunables};
    char err[256];
    int64_t v;
    if (!text || !*text)
        return bad(r, "%s is empty", what);
    if (kc_iexpr_eval_postfix(text, known_name, &n, &v, err, sizeof(err)))
        return true;
    if (strncmp(err, "malformed", 9) == 0)
        return bad(r, "%s '%s' is %s", what, text, err);
    if (strstr(err, "has no value"))
        return bad(r, "%s '%s' names something that is not %s: %s", what, text,
                   scalars && tunables ? "an integer parameter or tunable"
                   : scalars           ? "an integer parameter"
                                       : "a tunable",
                   err);
    return true;
}

static bool any_name(void *user, const char *name, int64_t *value)
{
    (void)user, (void)name;
    *value = 1;
    return true;
}

/* Does a postfix expression parse, whatever its names? */
static bool check_syntax(rd *r, const char *what, const char *text)
{
    char err[256];
    int64_t v;
    if (!text || !*text)
        return bad(r, "%s is empty", what);
    if (!kc_iexpr_eval_postfix(text, any_name, NULL, &v, err, sizeof(err)) &&
        strncmp(err, "malformed", 9) == 0)
        return bad(r, "%s '%s' is %s", what, text, err);
    return true;
}

/* Splits "a;b;c" into exactly n parts in the arena; false on a different count. */
static bool split3(rd *r, const char *text, const char *what, char **parts, int n)
{
    char *copy = rt_strdup(r->a, text);
    if (!copy)
        return bad(r, "out of memory");
    int k = 0;
    for (char *p = copy, *semi;; p = semi + 1) {
        semi = strchr(p, ';');
        if (k == n)
            return bad(r, "%s '%s' does not have %d parts", what, text, n);
        parts[k++] = p;
        if (!semi)
            break;
        *semi = 0;
    }
    return k == n || bad(r, "%s '%s' does not have %d parts", what, text, n);
}

/* ---- assignments: "WG=64,TM=4" and "x=normal" ----------------------------------------------- */

int rt_parse_assignments(rt_arena *a, const char *text, const char ***names, int64_t **values, char *err,
                         size_t errlen)
{
    int n = 0, cap = 1;
    for (const char *p = text; *p; p++)
        cap += *p == ',';
    const char **ns = rt_alloc(a, sizeof(char *) * (size_t)cap);
    int64_t *vs = rt_alloc(a, sizeof(int64_t) * (size_t)cap);
    char *copy = rt_strdup(a, text);
    if (!ns || !vs || !copy)
        return rt_printf(err, errlen, "out of memory"), -1;
    for (char *p = copy, *next; *p; p = next) {
        char *comma = strchr(p, ',');
        next = comma ? comma + 1 : p + strlen(p);
        if (comma)
            *comma = 0;
        while (*p == ' ')
            p++;
        char *eq = strchr(p, '=');
        if (!eq)
            return rt_printf(err, errlen, "'%s' is not NAME=VALUE", p), -1;
        *eq = 0;
        for (char *e = eq - 1; e >= p && *e == ' '; e--)
            *e = 0;
        char *end;
        long long v = strtoll(eq + 1, &end, 10);
        while (*end == ' ')
            end++;
        if (!is_ident(p))
            return rt_printf(err, errlen, "'%s' is not a name", p), -1;
        if (end == eq + 1 || *end)
            return rt_printf(err, errlen, "the value of %s is not an integer", p), -1;
        for (int i = 0; i < n; i++)
            if (strcmp(ns[i], p) == 0)
                return rt_printf(err, errlen, "%s is given twice", p), -1;
        ns[n] = p;
        vs[n++] = v;
        if (!comma)
            break;
    }
    *names = ns;
    *values = vs;
    return n;
}

/* Tunable values for a variant string: each named tunable set, the rest at
 * their defaults. */
static bool variant_values(rt_arena *a, const rt_kernel *k, const char *text, int64_t *tv, char *err,
                           size_t errlen)
{
    const char **ns;
    int64_t *vs;
    int n = rt_parse_assignments(a, text, &ns, &vs, err, errlen);
    if (n < 0)
        return false;
    for (int t = 0; t < k->info.ntunables; t++)
        tv[t] = k->tunables[t].def;
    for (int i = 0; i < n; i++) {
        int t = 0;
        while (t < k->info.ntunables && strcmp(k->tunables[t].name, ns[i]) != 0)
            t++;
        if (t == k->info.ntunables)
            return rt_printf(err, errlen, "kernel '%s' has no tunable '%s'", k->info.name, ns[i]), false;
        tv[t] = vs[i];
    }
    return true;
}

bool rt_variant_values(rt_arena *a, const rt_kernel *k, const char *text, int64_t *tv, char *err,
                       size_t errlen)
{
    return variant_values(a, k, text, tv, err, errlen);
}

/* ---- meta and kernels ---------------------------------------------------------------------- */

static bool read_meta(rd *r)
{
    r->table = "meta";
    r->row = 0;
    sqlite3_stmt *st = prepare(r, "SELECT key, value FROM meta ORDER BY key");
    if (!st)
        return false;
    int cap = 16, n = 0, rc;
    const char **m = rt_alloc(r->a, sizeof(char *) * (size_t)(cap + 1));
    while (m && (rc = step(r, st)) == 1) {
        if (n + 2 > cap) {
            const char **bigger = rt_alloc(r->a, sizeof(char *) * (size_t)(cap * 2 + 1));
            if (!bigger)
                break;
            memcpy(bigger, m, sizeof(char *) * (size_t)n);
            m = bigger, cap *= 2;
        }
        if (!col_text(r, st, 0, &m[n], false) || !col_text(r, st, 1, &m[n + 1], false)) {
            sqlite3_finalize(st);
            return false;
        }
        n += 2;
    }
    sqlite3_finalize(st);
    if (!m)
        return bad(r, "out of memory");
    m[n] = NULL;
    r->b->meta = m;
    return rc == 0;
}

static bool read_kernel_row(rd *r, sqlite3_stmt *st, rt_kernel *k, int64_t *id)
{
    kcrt_kernel_info *i = &k->info;
    int64_t alias;
    if (!col_int(r, st, 0, INT32_MIN, INT32_MAX, id) || !col_text(r, st, 1, &i->name, false) ||
        !col_text(r, st, 2, &i->source_hash, false) || !col_text(r, st, 3, &i->wg, false) ||
        !col_text(r, st, 4, &i->grid, false) || !col_int(r, st, 5, 0, 1, &alias) ||
        !col_text(r, st, 6, &i->default_variant, false) || !col_real(r, st, 7, &i->tolerance) ||
        !col_text(r, st, 8, &i->init, false) || !col_text(r, st, 9, &i->bytes, true) ||
        !col_text(r, st, 10, &i->flops, true) || !col_text(r, st, 12, &k->source, false))
        return false;
    if (!is_ident(i->name))
        return bad(r, "kernel name '%s' is not a name", i->name);
    i->may_alias = alias != 0;
    char g[600] = "", part[200];
    const char *at = i->grid;
    for (int d = 0; d < 3 && at; d++) { /* "a;b;c" written for people: "a, b, c" */
        const char *semi = strchr(at, ';');
        char e[200];
        rt_printf(e, sizeof(e), "%.*s", (int)(semi ? (size_t)(semi - at) : strlen(at)), at);
        rt_infix(e, part, sizeof(part));
        size_t l = strlen(g);
        rt_printf(g + l, sizeof(g) - l, "%s%s", d ? ", " : "", part);
        at = semi ? semi + 1 : NULL;
    }
    i->grid_text = rt_strdup(r->a, g);
    return true;
}

/* ---- params ------------------------------------------------------------------------------------- */

/* dims: "n;m" or "?" per dimension. */
static bool read_dims(rd *r, kcrt_param_info *p, const char *dims)
{
    int nd = 1;
    for (const char *c = dims; *c; c++)
        nd += *c == ';';
    if (nd > 8)
        return bad(r, "buffer parameter '%s' has %d dimensions", p->name, nd);
    char **parts = rt_alloc(r->a, sizeof(char *) * (size_t)nd);
    if (!parts)
        return bad(r, "out of memory");
    if (!split3(r, dims, "dims", parts, nd))
        return false;
    p->ndims = nd;
    p->dims = (const char *const *)parts;
    return true;
}

static bool read_param(rd *r, sqlite3_stmt *st, rt_kernel *k, int64_t expect_idx)
{
    kcrt_param_info *p = &k->params[expect_idx];
    int64_t idx, ro;
    const char *kind, *type;
    if (!col_int(r, st, 0, 0, INT32_MAX, &idx) || !col_text(r, st, 1, &p->name, false) ||
        !col_text(r, st, 2, &kind, false) || !col_text(r, st, 3, &type, false) ||
        !col_int(r, st, 4, 0, 1, &ro) || !col_text(r, st, 5, &p->extent, true))
        return false;
    const char *dims;
    if (!col_text(r, st, 6, &dims, true))
        return false;
    if (idx != expect_idx)
        return bad(r, "parameter index %lld where %lld was expected", (long long)idx, (long long)expect_idx);
    if (!is_ident(p->name))
        return bad(r, "parameter name '%s' is not a name", p->name);
    for (int64_t j = 0; j < expect_idx; j++)
        if (strcmp(k->params[j].name, p->name) == 0)
            return bad(r, "two parameters are called '%s'", p->name);
    bool buffer = strcmp(kind, "buffer") == 0;
    if (!buffer && strcmp(kind, "scalar") != 0)
        return bad(r, "parameter kind '%s' is neither buffer nor scalar", kind);
    p->kind = buffer ? KCRT_PARAM_BUFFER : KCRT_PARAM_SCALAR;
    p->type = rt_type_from_name(type);
    if (p->type == KCRT_NTYPES)
        return bad(r, "parameter '%s' has unknown type '%s'", p->name, type);
    if (!buffer && p->type != KCRT_TYPE_INT && p->type != KCRT_TYPE_UINT && p->type != KCRT_TYPE_FLOAT &&
        p->type != KCRT_TYPE_HALF && p->type != KCRT_TYPE_BOOL)
        return bad(r, "scalar parameter '%s' has type '%s', which a scalar cannot have", p->name, type);
    p->type_name = rt_type_name(p->type);
    p->elem_bytes = buffer ? rt_type_bytes(p->type) : 4;
    p->readonly = ro != 0;
    if (!buffer && (p->extent || dims))
        return bad(r, "scalar parameter '%s' has an extent", p->name);
    if (buffer && !dims)
        return bad(r, "buffer parameter '%s' has no dims", p->name);
    k->info.nparams = (int)expect_idx + 1;
    return !buffer || read_dims(r, p, dims);
}

/* Checks a buffer's extent and dims once every parameter is known. */
static bool check_param_exprs(rd *r, rt_kernel *k)
{
    for (int i = 0; i < k->info.nparams; i++) {
        kcrt_param_info *p = &k->params[i];
        if (p->kind != KCRT_PARAM_BUFFER)
            continue;
        if (p->extent && !check_expr(r, "extent", p->extent, k, true, true))
            return false;
        for (int d = 0; d < p->ndims; d++)
            if (strcmp(p->dims[d], "?") != 0 && !check_expr(r, "dimension", p->dims[d], k, true, true))
                return false;
        char t[256];
        rt_infix(p->extent, t, sizeof(t));
        p->extent_text = p->extent ? rt_strdup(r->a, t) : NULL;
    }
    return true;
}

static bool param_row(rd *r, sqlite3_stmt *st, void *items, int i, void *user)
{
    rt_kernel *k = user;
    k->params = items; /* read_param checks the names before it */
    return read_param(r, st, k, i);
}

static bool read_params(rd *r, rt_kernel *k, int64_t id)
{
    void *items;
    int n;
    bool ok = read_counted(r, "params",
                           "SELECT idx, name, kind, type, readonly, extent, dims, "
                           "(SELECT count(*) FROM params WHERE kernel_id = ?1) FROM params "
                           "WHERE kernel_id = ?1 ORDER BY idx",
                           id, 7, 256, sizeof(kcrt_param_info), &items, &n, param_row, k);
    k->params = items;
    k->info.nparams = n;
    k->info.params = k->params;
    return ok;
}

/* ---- tunables, constraints, shapes -------------------------------------------------------------- */

static bool parse_values(rd *r, kcrt_tunable_info *t, const char *vals)
{
    int n = 1;
    for (const char *c = vals; *c; c++)
        n += *c == ',';
    int64_t *v = rt_alloc(r->a, sizeof(int64_t) * (size_t)n);
    if (!v)
        return bad(r, "out of memory");
    const char *p = vals;
    for (int i = 0; i < n; i++) {
        char *end;
        v[i] = strtoll(p, &end, 10);
        if (end == p || (*end && *end != ','))
            return bad(r, "tunable '%s' has bad values '%s'", t->name, vals);
        p = end + (*end == ',');
    }
    bool has_def = false;
    for (int i = 0; i < n; i++)
        has_def |= v[i] == t->def;
    if (!has_def)
        return bad(r, "tunable '%s' has default %lld, not among its values '%s'", t->name, (long long)t->def,
                   vals);
    t->nvalues = n;
    t->values = v;
    return true;
}

static bool tunable_row(rd *r, sqlite3_stmt *st, void *items, int i, void *user)
{
    (void)user;
    kcrt_tunable_info *t = (kcrt_tunable_info *)items + i;
    int64_t idx;
    const char *vals;
    if (!col_int(r, st, 0, i, i, &idx) || !col_text(r, st, 1, &t->name, false) ||
        !col_int(r, st, 2, INT64_MIN, INT64_MAX, &t->def) || !col_text(r, st, 3, &vals, false))
        return false;
    if (!is_ident(t->name))
        return bad(r, "tunable name '%s' is not a name", t->name);
    return parse_values(r, t, vals);
}

static bool read_tunables(rd *r, rt_kernel *k, int64_t id)
{
    void *items;
    int n;
    bool ok = read_counted(r, "tunables",
                           "SELECT idx, name, def, vals, (SELECT count(*) FROM tunables WHERE kernel_id = ?1) "
                           "FROM tunables WHERE kernel_id = ?1 ORDER BY idx",
                           id, 4, 256, sizeof(kcrt_tunable_info), &items, &n, tunable_row, NULL);
    k->tunables = items;
    k->info.ntunables = n;
    k->info.tunables = k->tunables;
    return ok;
}

/* Reads a list of text rows (constraints, shapes) into a NULL-free array. */
static bool read_texts(rd *r, const char *sql, int64_t id, const char ***out, int *count)
{
    *out = NULL;
    *count = 0;
    sqlite3_stmt *st = prepare(r, sql);
    if (!st)
        return false;
    sqlite3_bind_int64(st, 1, id);
    int rc, n = 0, cap = 4;
    const char **v = rt_alloc(r->a, sizeof(char *) * (size_t)cap * 2);
    while (v && (rc = step(r, st)) == 1) {
        if (n == cap) {
            const char **bigger = rt_alloc(r->a, sizeof(char *) * (size_t)cap * 4);
            if (!bigger || n >= 100000)
                break;
            memcpy(bigger, v, sizeof(char *) * (size_t)n * 2);
            v = bigger, cap *= 2;
        }
        if (!col_text(r, st, 0, &v[n * 2], false) || !col_text(r, st, 1, &v[n * 2 + 1], false)) {
            sqlite3_finalize(st);
            return false;
        }
        n++;
    }
    sqlite3_finalize(st);
    if (!v || rc == 1)
        return bad(r, "out of memory");
    *out = v;
    *count = n;
    return rc == 0;
}

static bool read_constraints(rd *r, rt_kernel *k, int64_t id)
{
    const char **rows;
    int n;
    r->table = "constraints";
    r->row = 0;
    if (!read_texts(r, "SELECT expr, text FROM constraints WHERE kernel_id = ?1 ORDER BY rowid", id, &rows,
                    &n))
        return false;
    const char **texts = rt_alloc(r->a, sizeof(char *) * (size_t)(n + 1));
    if (!texts)
        return bad(r, "out of memory");
    for (int i = 0; i < n; i++) { /* syntax only: kc build writes constraints that name tunables */
        r->row = i + 1;           /* the kernel does not use (compiler_bugs/constraint_foreign_tunable.kc) */
        if (!check_syntax(r, "constraint", rows[2 * i]))
            return false;
        texts[i] = rows[2 * i + 1];
    }
    k->info.constraints = texts;
    k->info.nconstraints = n;
    return true;
}

/* A shape is "n=48000,m=3": assignments of the kernel's integer scalars. */
static bool shape_row(rd *r, sqlite3_stmt *st, void *items, int i, void *user)
{
    (void)user;
    const char **v = items;
    const char **names;
    int64_t *vals;
    char err[256];
    if (!col_text(r, st, 0, &v[i], false))
        return false;
    if (rt_parse_assignments(r->a, v[i], &names, &vals, err, sizeof(err)) < 0)
        return bad(r, "shape '%s': %s", v[i], err);
    return true;
}

/* Shapes are read apart because their idx is an integer. */
static bool read_shapes(rd *r, rt_kernel *k, int64_t id)
{
    void *items;
    int n;
    bool ok = read_counted(r, "shapes",
                           "SELECT shape, (SELECT count(*) FROM shapes WHERE kernel_id = ?1) FROM shapes "
                           "WHERE kernel_id = ?1 ORDER BY idx",
                           id, 1, 100000, sizeof(char *), &items, &n, shape_row, NULL);
    k->info.shapes = items;
    k->info.nshapes = n;
    return ok;
}

/* "x=normal,y=uniform": each name a buffer parameter, each word known. */
static bool read_init(rd *r, rt_kernel *k)
{
    static const char *const kinds[] = {"uniform", "normal", "positive", "ones", "index", "twiddle"};
    char *copy = rt_strdup(r->a, k->info.init);
    if (!copy)
        return bad(r, "out of memory");
    for (char *p = copy, *next; *p; p = next) {
        char *comma = strchr(p, ',');
        next = comma ? comma + 1 : p + strlen(p);
        if (comma)
            *comma = 0;
        char *eq = strchr(p, '=');
        if (!eq)
            return bad(r, "init '%s' is not NAME=KIND,…", k->info.init);
        *eq = 0;
        int i = 0, j = 0;
        while (i < k->info.nparams && strcmp(k->params[i].name, p) != 0)
            i++;
        while (j < (int)RT_COUNT(kinds) && strcmp(kinds[j], eq + 1) != 0)
            j++;
        if (i == k->info.nparams || k->params[i].kind != KCRT_PARAM_BUFFER)
            return bad(r, "init names '%s', which is not a buffer parameter", p);
        if (j == (int)RT_COUNT(kinds))
            return bad(r, "init of '%s' is '%s' (expected uniform, normal, positive, ones, index or twiddle)", p,
                       eq + 1);
        k->params[i].init = (kcrt_init)j;
    }
    return true;
}

/* ---- variants ------------------------------------------------------------------------------------ */

static bool parse_features(rd *r, rt_variant *v, const char *text)
{
    static const struct {
        const char *name;
        unsigned bit;
    } known[] = {{"float16", RT_F_FLOAT16},
                 {"int64", RT_F_INT64},
                 {"storage16", RT_F_STORAGE16},
                 {"subgroups", RT_F_SUBGROUPS},
                 {"float_atomics", RT_F_FLOAT_ATOMICS}};
    char *copy = rt_strdup(r->a, text);
    if (!copy)
        return bad(r, "out of memory");
    for (char *p = copy, *next; *p; p = next) {
        char *comma = strchr(p, ',');
        next = comma ? comma + 1 : p + strlen(p);
        if (comma)
            *comma = 0;
        size_t i = 0;
        while (i < RT_COUNT(known) && strcmp(known[i].name, p) != 0)
            i++;
        if (i < RT_COUNT(known))
            v->features |= known[i].bit;
        else if (!v->bad_feature)
            v->bad_feature = p; /* refused when used, so that older runtimes still load the rest */
    }
    return true;
}

/* Parameter i of variants.args: the kernel's own, then a checked
 * kernel's hidden ones (support/kc_checked.h), uint scalars and the
 * record buffer last. */
static kcrt_param_info slot_param(const rt_kernel *k, int i)
{
    if (i < k->info.nparams)
        return k->params[i];
    bool record = i == k->info.nparams + k->nhidden - 1;
    return (kcrt_param_info){.name = record ? KC_CHECK_RECORD : "checked mode's hidden scalar",
                             .kind = record ? KCRT_PARAM_BUFFER : KCRT_PARAM_SCALAR,
                             .type = KCRT_TYPE_UINT};
}

/* variants.args: per parameter "offset:size" or "@binding". */
static bool parse_slots(rd *r, const rt_kernel *k, rt_variant *v, const char *args)
{
    int np = k->info.nparams + k->nhidden;
    v->slots = rt_alloc(r->a, sizeof(rt_slot) * (size_t)(np ? np : 1));
    if (!v->slots)
        return bad(r, "out of memory");
    char **parts = rt_alloc(r->a, sizeof(char *) * (size_t)(np ? np : 1));
    if (np == 0)
        return *args == 0 || bad(r, "args '%s' for a kernel without parameters", args);
    if (!parts || !split3(r, args, "args", parts, np))
        return false;
    uint64_t seen = 0;
    for (int i = 0; i < np; i++) {
        rt_slot *s = &v->slots[i];
        kcrt_param_info info = slot_param(k, i);
        const kcrt_param_info *p = &info;
        unsigned long a = 0, b = 0;
        int used = 0;
        if (parts[i][0] == '@' && sscanf(parts[i], "@%lu%n", &a, &used) == 1 && !parts[i][used]) {
            if (p->kind != KCRT_PARAM_BUFFER)
                return bad(r, "args: scalar parameter '%s' is given a binding", p->name);
            if (a >= 64 || (seen >> a & 1))
                return bad(r, "args: binding %lu of '%s' is repeated or too large", a, p->name);
            seen |= 1ull << a;
            s->is_binding = true;
            s->binding = (uint32_t)a;
            v->nbuffers++;
        } else if (sscanf(parts[i], "%lu:%lu%n", &a, &b, &used) == 2 && !parts[i][used] && b >= 1 && b <= 8 &&
                   a % b == 0 && a + b <= v->info->args_size) {
            /* kernel arguments carry a half as its 2 bytes, push constants as a float */
            if (p->kind == KCRT_PARAM_BUFFER ? b != 8 : !rt_scalar_slot_ok(p->type, b))
                return bad(r, "args: %s '%s' cannot take %lu bytes", p->kind == KCRT_PARAM_BUFFER ? "buffer pointer" : "scalar",
                           p->name, b);
            s->offset = (uint32_t)a;
            s->size = (uint32_t)b;
        } else
            return bad(r, "args: '%s' for parameter '%s' is not @BINDING or OFFSET:SIZE within %u bytes",
                       parts[i], p->name, v->info->args_size);
    }
    if (seen != (v->nbuffers == 64 ? ~0ull : (1ull << v->nbuffers) - 1))
        return bad(r, "args: the bindings '%s' are not 0..%d", args, v->nbuffers - 1);
    for (int i = 0; i < np; i++) /* two arguments in the same bytes: one would clobber the other */
        for (int j = i + 1; j < np; j++) {
            const rt_slot *a = &v->slots[i], *b = &v->slots[j];
            if (!a->is_binding && !b->is_binding && a->offset < b->offset + b->size &&
                b->offset < a->offset + a->size)
                return bad(r, "args: '%s' (%u:%u) and '%s' (%u:%u) overlap", slot_param(k, i).name, a->offset,
                           a->size, slot_param(k, j).name, b->offset, b->size);
        }
    return true;
}

static bool read_variant_row(rd *r, sqlite3_stmt *st, rt_kernel *k, rt_variant *v)
{
    kcrt_variant_info *i = v->info;
    int64_t wg[3], args_size, spilled, shared;
    const char *args, *features;
    if (!col_text(r, st, 0, &i->tunables, false) || !col_text(r, st, 1, &i->target, false) ||
        !col_blob(r, st, 2, &v->binary, &v->size) || !col_int(r, st, 3, 1, 1 << 16, &wg[0]) ||
        !col_int(r, st, 4, 1, 1 << 16, &wg[1]) || !col_int(r, st, 5, 1, 1 << 16, &wg[2]) ||
        !col_text(r, st, 6, &args, false) || !col_int(r, st, 7, 0, 1 << 16, &args_size) ||
        !col_int(r, st, 8, 0, 1, &spilled) || !col_int(r, st, 9, 0, INT32_MAX, &shared) ||
        !col_text(r, st, 10, &features, false))
        return false;

    for (int d = 0; d < 3; d++)
        i->wg[d] = (uint32_t)wg[d];
    i->args_size = (uint32_t)args_size;
    i->spilled = spilled != 0;
    i->shared_bytes = (uint32_t)shared;
    i->features = features;
    char err[512];
    v->tvals = rt_alloc(r->a, sizeof(int64_t) * (size_t)(k->info.ntunables + 1));
    if (!v->tvals)
        return bad(r, "out of memory");
    if (!variant_values(r->a, k, i->tunables, v->tvals, err, sizeof(err)))
        return bad(r, "variant '%s': %s", i->tunables, err);
    if (!*i->target)
        return bad(r, "variant '%s' has no target", i->tunables);
    if (!parse_slots(r, k, v, args) || !parse_features(r, v, features))
        return false;
    v->args = args;
    if (strcmp(i->target, "spirv") == 0) {
        rt_spirv_facts f;
        if (!rt_check_spirv(v->binary, v->size, k->info.name, &f, err, sizeof(err)))
            return bad(r, "variant '%s' of '%s': %s", i->tunables, k->info.name, err);
        const uint32_t *ls = f.local_size;
        if (ls[0] != i->wg[0] || ls[1] != i->wg[1] || ls[2] != i->wg[2])
            return bad(r, "variant '%s' of '%s': its SPIR-V's LocalSize is %ux%ux%u, but its row says the "
                       "workgroup is %ux%ux%u",
                       i->tunables, k->info.name, ls[0], ls[1], ls[2], i->wg[0], i->wg[1], i->wg[2]);
        v->features |= f.features;
        v->spirv_minor = f.minor;
    }
    /* last: catches a binary damaged in a way that still parses */
    const char *checksum;
    char sum[65];
    if (!col_text(r, st, 12, &checksum, false))
        return false;
    kc_sha256_hex(v->binary, v->size, sum);
    if (strcmp(sum, checksum) != 0)
        return bad(r, "the binary of variant '%s' (%s) is damaged: its checksum does not match", i->tunables,
                   i->target);
    return true;
}

/* Variant i and its public info, the array kcrt_kernel_info.variants
 * points to (allocated with the first row, as many as the count says). */
static bool variant_row(rd *r, sqlite3_stmt *st, void *items, int i, void *user)
{
    rt_kernel *k = user;
    k->variants = items;
    if (i == 0 && !(k->info.variants = rt_alloc(r->a, sizeof(kcrt_variant_info) *
                                                          (size_t)sqlite3_column_int64(st, 11))))
        return bad(r, "out of memory");
    k->variants[i].info = (kcrt_variant_info *)&k->info.variants[i];
    return read_variant_row(r, st, k, &k->variants[i]);
}

static bool read_variants(rd *r, rt_kernel *k, int64_t id)
{
    void *items;
    int n;
    bool ok = read_counted(r, "variants",
                           "SELECT tunables, target, binary, wg_x, wg_y, wg_z, args, args_size, spilled, "
                           "shared_bytes, features, (SELECT count(*) FROM variants WHERE kernel_id = ?1), "
                           "checksum FROM variants WHERE kernel_id = ?1 ORDER BY id",
                           id, 11, 1 << 20, sizeof(rt_variant), &items, &n, variant_row, k);
    k->variants = items;
    k->info.nvariants = n;
    return ok;
}

bool rt_variant_from_desc(const rt_kernel *k, rt_variant *v, const kcrt_binary_desc *d,
                          rt_arena *a, char *err, size_t errlen)
{
    rd r = {NULL, NULL, a, NULL, 0, {0}};
    kcrt_variant_info *i = rt_alloc(a, sizeof(*i));
    void *binary = rt_alloc(a, d->size ? d->size : 1);
    if (!i || !binary)
        return rt_printf(err, errlen, "out of memory"), false;
    memcpy(binary, d->binary, d->size);
    memset(v, 0, sizeof(*v));
    v->info = i;
    v->binary = binary;
    v->size = d->size;
    i->tunables = rt_strdup(a, d->tunables);
    i->target = rt_strdup(a, d->target);
    memcpy(i->wg, d->wg, sizeof(i->wg));
    i->args_size = d->args_size;
    i->spilled = d->spilled;
    i->shared_bytes = d->shared_bytes;
    i->features = rt_strdup(a, d->features ? d->features : "");
    v->tvals = rt_alloc(a, sizeof(int64_t) * (size_t)(k->info.ntunables + 1));
    bool ok = v->tvals && i->tunables && i->target && parse_slots(&r, k, v, d->args ? d->args : "") &&
              parse_features(&r, v, i->features);
    if (ok && !variant_values(a, k, i->tunables, v->tvals, r.err, sizeof(r.err)))
        ok = false;
    if (ok && strcmp(i->target, "spirv") == 0) {
        rt_spirv_facts f;
        ok = rt_check_spirv(v->binary, v->size, k->info.name, &f, r.err, sizeof(r.err));
        v->features |= f.features;
        v->spirv_minor = f.minor;
    }
    if (!ok)
        return rt_printf(err, errlen, "%s", r.err[0] ? r.err : "out of memory"), false;
    return true;
}

static rt_kernel *kernel_by_id(kcrt_bundle *b, const int64_t *ids, int64_t id)
{
    for (int i = 0; i < b->nkernels; i++)
        if (ids[i] == id)
            return &b->kernels[i];
    return NULL;
}

/* Keeps one row for its kernel, whatever its device: a context takes its
 * own and its family's when it loads the bundle (bundle.c). */
static bool keep_row(rd *r, rt_kernel *k, const kcrt_tuned_row *row)
{
    /* doubling: growing by 16 rows made a 40,000-row table cost 2.9 GB in
     * the arena, which keeps every old array */
    if (k->nrows == 0 || (k->nrows >= 16 && (k->nrows & (k->nrows - 1)) == 0)) {
        kcrt_tuned_row *bigger = rt_alloc(r->a, sizeof(*bigger) * (size_t)(k->nrows ? 2 * k->nrows : 16));
        if (!bigger)
            return bad(r, "out of memory");
        if (k->nrows)
            memcpy(bigger, k->rows, sizeof(*bigger) * (size_t)k->nrows);
        k->rows = bigger;
    }
    k->rows[k->nrows++] = *row;
    return true;
}

static bool read_tuned(rd *r, const int64_t *ids)
{
    r->table = "tuned";
    r->row = 0;
    sqlite3_stmt *st =
        prepare(r, "SELECT device_key, device_family, backend, kernel_id, shape, variant, time_ns "
                   "FROM tuned ORDER BY rowid");
    if (!st)
        return false;
    int rc;
    while ((rc = step(r, st)) == 1) {
        kcrt_tuned_row row = {.row = r->row};
        int64_t kid;
        if (!col_text(r, st, 0, &row.device, false) || !col_text(r, st, 1, &row.family, false) ||
            !col_text(r, st, 2, &row.backend, false) || !col_int(r, st, 3, INT64_MIN, INT64_MAX, &kid) ||
            !col_text(r, st, 4, &row.shape, false) || !col_text(r, st, 5, &row.variant, false) ||
            !col_real(r, st, 6, &row.time_ns))
            break;
        rt_kernel *k = kernel_by_id(r->b, ids, kid);
        if (!k) {
            bad(r, "kernel id %lld does not exist", (long long)kid);
            break;
        }
        if (!(row.time_ns > 0)) {
            bad(r, "time_ns %g is not a time a launch can take", row.time_ns);
            break;
        }
        if (!keep_row(r, k, &row))
            break;
    }
    sqlite3_finalize(st);
    return rc == 0;
}

/* The integer scalars (the shape), and that the default variant names
 * the kernel's tunables. */
static bool finish_kernel(rd *r, rt_kernel *k)
{
    k->ints = rt_alloc(r->a, sizeof(int) * (size_t)(k->info.nparams + 1));
    if (!k->ints)
        return bad(r, "out of memory");
    for (int i = 0; i < k->info.nparams; i++)
        if (k->params[i].kind == KCRT_PARAM_SCALAR &&
            (k->params[i].type == KCRT_TYPE_INT || k->params[i].type == KCRT_TYPE_UINT))
            k->ints[k->nints++] = i;
    char err[256];
    r->table = "kernels";
    int64_t *tv = rt_alloc(r->a, sizeof(int64_t) * (size_t)(k->info.ntunables + 1));
    if (!tv || !variant_values(r->a, k, k->info.default_variant, tv, err, sizeof(err)))
        return bad(r, "default variant '%s' of '%s': %s", k->info.default_variant, k->info.name, err);
    return true;
}

static bool check_kernel_exprs(rd *r, rt_kernel *k, int row)
{
    char *wg[3], *grid[3];
    r->table = "kernels";
    r->row = row;
    if (!split3(r, k->info.wg, "wg", wg, 3) || !split3(r, k->info.grid, "grid", grid, 3))
        return false;
    for (int d = 0; d < 3; d++) {
        if (!check_expr(r, "workgroup size", wg[d], k, false, true) ||
            !check_expr(r, "grid", grid[d], k, true, true))
            return false;
        char text[256];
        rt_infix(grid[d], text, sizeof(text));
        k->grid[d] = grid[d];
        if (!(k->grid_text[d] = rt_strdup(r->a, text)))
            return bad(r, "out of memory");
    }
    if ((k->info.bytes && !check_expr(r, "bytes", k->info.bytes, k, true, true)) ||
        (k->info.flops && !check_expr(r, "flops", k->info.flops, k, true, true)))
        return false;
    return read_init(r, k);
}

/* A checked bundle's kernel (support/kc_checked.h): its hidden
 * parameters and the files its records count. */
static bool read_checked(rd *r, rt_kernel *k)
{
    const char *mode = kcrt_bundle_meta(r->b, "checked");
    if (!mode)
        return true;
    r->table = "meta";
    if (strcmp(mode, "bounds") != 0)
        return bad(r, "the bundle is checked for '%s', which this libkcrt does not know (update kc)", mode);
    int nbuffers = 0;
    for (int i = 0; i < k->info.nparams; i++)
        nbuffers += k->params[i].kind == KCRT_PARAM_BUFFER;
    k->nhidden = KC_CHECK_HIDDEN(nbuffers);
    char key[256];
    rt_printf(key, sizeof(key), "checked.files.%s", k->info.name);
    const char *files = kcrt_bundle_meta(r->b, key);
    if (!files)
        return bad(r, "a checked bundle without '%s'", key);
    char *list = rt_strdup(r->a, files);
    if (!list)
        return bad(r, "out of memory");
    int n = 1;
    for (const char *c = list; *c; c++)
        n += *c == '\n';
    k->check_files = rt_alloc(r->a, sizeof(char *) * (size_t)n);
    if (!k->check_files)
        return bad(r, "out of memory");
    for (char *line = list, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        k->check_files[k->ncheck_files++] = line;
    }
    return true;
}

/* The kernel's launch description against the digest kc build stored
 * (support/kc_bundle_digest.h); bundles from before it have none. */
static bool check_digest(rd *r, const rt_kernel *k, int64_t id)
{
    char key[256], hex[65];
    rt_printf(key, sizeof(key), "digest.%s", k->info.name);
    const char *want = kcrt_bundle_meta(r->b, key);
    if (!want)
        return true;
    r->table = "kernels";
    if (!kc_bundle_kernel_digest(r->db, id, hex))
        return bad(r, "cannot read kernel '%s' and its parameters: %s", k->info.name, sqlite3_errmsg(r->db));
    if (strcmp(hex, want) != 0)
        return bad(r, "kernel '%s': its workgroup, grid or parameters differ from what kc build wrote (digest "
                      "mismatch): the bundle is damaged or was edited; rebuild it with kc build",
                   k->info.name);
    return true;
}

const char *const rt_device_types[] = {"cpu", "integrated", "discrete", "virtual", "other", NULL};

/* Each default per device type (meta default.TYPE.KERNEL) names a variant
 * of the kernel's space; whether the bundle holds it is the binder's
 * business, as for tuned rows. */
static bool check_type_defaults(rd *r, const rt_kernel *k)
{
    for (int i = 0; rt_device_types[i]; i++) {
        char key[256], err[256];
        rt_printf(key, sizeof(key), "default.%s.%s", rt_device_types[i], k->info.name);
        const char *text = kcrt_bundle_meta(r->b, key);
        int64_t *tv = rt_alloc(r->a, sizeof(int64_t) * (size_t)(k->info.ntunables + 1));
        r->table = "meta";
        if (!tv)
            return bad(r, "out of memory");
        if (text && !variant_values(r->a, k, text, tv, err, sizeof(err)))
            return bad(r, "%s '%s': %s", key, text, err);
    }
    return true;
}

/* Kernel i, and its id in the other tables (an array allocated with the
 * first row). */
static bool kernel_row(rd *r, sqlite3_stmt *st, void *items, int i, void *user)
{
    int64_t **ids = user;
    if (i == 0 && !(*ids = rt_alloc(r->a, sizeof(int64_t) * (size_t)sqlite3_column_int64(st, 11))))
        return bad(r, "out of memory");
    return read_kernel_row(r, st, (rt_kernel *)items + i, &(*ids)[i]);
}

static bool read_kernels(rd *r, int64_t **ids_out)
{
    void *items;
    int n;
    int64_t *ids = NULL;
    bool ok = read_counted(r, "kernels",
                           "SELECT id, name, source_hash, wg, grid, may_alias, default_variant, tolerance, "
                           "init, bytes, flops, (SELECT count(*) FROM kernels), source_path FROM kernels "
                           "ORDER BY id",
                           -1, 11, 100000, sizeof(rt_kernel), &items, &n, kernel_row, &ids);
    r->b->kernels = items;
    r->b->nkernels = n;
    *ids_out = ids;
    if (!ok)
        return false;
    for (int i = 0; i < n; i++) {
        rt_kernel *k = &r->b->kernels[i];
        int saved = r->row;
        if (!read_params(r, k, ids[i]) || !read_checked(r, k) || !read_tunables(r, k, ids[i]) || !read_constraints(r, k, ids[i]) ||
            !read_shapes(r, k, ids[i]) || !check_param_exprs(r, k) || !check_kernel_exprs(r, k, i + 1) ||
            !read_variants(r, k, ids[i]) || !finish_kernel(r, k) || !check_digest(r, k, ids[i]) ||
            !check_type_defaults(r, k))
            return false;
        r->row = saved;
    }
    return true;
}

/* ---- opening the file --------------------------------------------------------------------------------- */

/* Refuses what is not a SQLite file before SQLite sees it, for a clear message. */
static kcrt_status sniff(rd *r, const char *path)
{
    struct stat st; /* Windows opens a folder with "Permission denied" */
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return bad(r, "cannot open bundle '%s': %s", path, strerror(EISDIR)), KCRT_ERROR_IO;
    FILE *f = kc_fopen(path, "rb");
    if (!f)
        return bad(r, "cannot open bundle '%s': %s", path, strerror(errno)), KCRT_ERROR_IO;
    char head[16];
    size_t n = fread(head, 1, sizeof(head), f);
    int err = ferror(f) ? errno : 0;
    fclose(f);
    if (err)
        return bad(r, "cannot read bundle '%s': %s", path, strerror(err)), KCRT_ERROR_IO;
    if (n == 0)
        return bad(r, "'%s' is not a kc bundle: the file is empty", path), KCRT_ERROR_BAD_BUNDLE;
    if (n < sizeof(head) || memcmp(head, "SQLite format 3", 16) != 0)
        return bad(r, "'%s' is not a kc bundle: not a SQLite database", path), KCRT_ERROR_BAD_BUNDLE;
    return KCRT_OK;
}

static int64_t pragma_int(sqlite3 *db, const char *sql, bool *ok)
{
    sqlite3_stmt *st;
    int64_t v = 0;
    *ok = false;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return 0;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER) {
        v = sqlite3_column_int64(st, 0);
        *ok = true;
    }
    sqlite3_finalize(st);
    return v;
}

static bool check_header(rd *r, const char *path)
{
    bool ok;
    int64_t app = pragma_int(r->db, "PRAGMA application_id", &ok);
    if (!ok)
        return bad(r, "'%s' is not a kc bundle: %s", path, sqlite3_errmsg(r->db));
    if (app != KC_BUNDLE_APPLICATION_ID)
        return bad(r, "'%s' is not a kc bundle: its application_id is 0x%08llx, not 0x%08x ('kcb1')", path,
                   (unsigned long long)(uint32_t)app, KC_BUNDLE_APPLICATION_ID);
    int64_t ver = pragma_int(r->db, "PRAGMA user_version", &ok);
    if (!ok)
        return bad(r, "'%s': cannot read its format version: %s", path, sqlite3_errmsg(r->db));
    if (ver > KC_BUNDLE_FORMAT)
        return bad(r,
                   "'%s' has bundle format %lld, newer than this libkcrt reads (%d): update kc, or rebuild "
                   "the bundle with this version's kc build",
                   path, (long long)ver, KC_BUNDLE_FORMAT);
    if (ver < 1)
        return bad(r, "'%s' has no bundle format version (user_version %lld)", path, (long long)ver);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db, "PRAGMA quick_check", -1, &st, NULL) != SQLITE_OK)
        return bad(r, "'%s' is damaged: %s", path, sqlite3_errmsg(r->db));
    int rc = sqlite3_step(st);
    const char *res = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    ok = res && strcmp(res, "ok") == 0;
    if (!ok)
        bad(r, "'%s' is damaged: %s", path, res ? res : sqlite3_errmsg(r->db));
    sqlite3_finalize(st);
    return ok;
}

static bool read_all(rd *r, const char *path)
{
    int64_t *ids;
    if (!check_header(r, path) || !read_meta(r) || !read_kernels(r, &ids) || !read_tuned(r, ids))
        return false;
    r->table = NULL;
    if (r->b->nkernels == 0)
        return bad(r, "'%s' holds no kernels", path);
    return true;
}

kcrt_status rt_bundle_read(kcrt_bundle *b, const char *path, char *err, size_t errlen)
{
    rd r = {.b = b, .a = &b->arena};
    kcrt_status s = sniff(&r, path);
    if (s != KCRT_OK)
        return rt_printf(err, errlen, "%s", r.err), s;
    b->path = rt_strdup(&b->arena, path);
    int rc = sqlite3_open_v2(path, &r.db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
    bool ok = rc == SQLITE_OK && b->path;
    if (!ok)
        bad(&r, "cannot open bundle '%s': %s", path, r.db ? sqlite3_errmsg(r.db) : "out of memory");
    /* a reader waits out a writer (kc tune adding tuned rows) rather than
     * failing; on Windows two readers' locks also briefly collide */
    if (r.db)
        sqlite3_busy_timeout(r.db, 10000);
    ok = ok && read_all(&r, path);
    sqlite3_close(r.db);
    if (ok)
        return KCRT_OK;
    rt_printf(err, errlen, "%s%s%s", r.table ? path : "", r.table ? ": " : "", r.err);
    return KCRT_ERROR_BAD_BUNDLE;
}
