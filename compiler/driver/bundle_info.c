/*
 * bundle_info.c — opening a bundle, and `kc info` / `kc export` on it.
 *
 * A bundle is read by libkcrt's one reader (kcrt_bundle_read: the header,
 * SQLite's quick_check, every column's type, every expression and binary
 * checked), so that kc refuses exactly what a host application would. The
 * SQLite handle is kept beside it for kc tune's writes and for tests.
 */
#include "bundle_private.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kc_binres.h"
#include "kcrt_internal.h"
#include "rt_binary.h"

kc_bundle *kc_bundle_open(const char *path, bool writable, char *err, size_t errlen)
{
    kc_bundle *b = calloc(1, sizeof(*b));
    if (!b)
        abort();
    kc_arena_init(&b->arena);
    if (kcrt_bundle_read(path, &b->file, err, errlen) != KCRT_OK) {
        kc_bundle_close(b);
        return NULL;
    }
    int flags = writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY;
    if (sqlite3_open_v2(path, &b->db, flags, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "cannot open '%s': %s", path, sqlite3_errmsg(b->db));
        kc_bundle_close(b);
        return NULL;
    }
    sqlite3_busy_timeout(b->db, 10000); /* as libkcrt's reader: wait out another kc */
    return b;
}

void kc_bundle_close(kc_bundle *b)
{
    if (!b)
        return;
    sqlite3_close(b->db);
    kcrt_bundle_free(b->file);
    kc_arena_free(&b->arena);
    free(b);
}

struct sqlite3 *kc_bundle_db(kc_bundle *b) { return b->db; }

const char *kc_bundle_meta(kc_bundle *b, const char *key) { return kcrt_bundle_meta(b->file, key); }

const char *kc_bundle_default_variant(kc_bundle *b, const char *kernel, const char *device_type, const char **why)
{
    for (int i = 0; i < kcrt_bundle_kernel_count(b->file); i++) {
        const kcrt_kernel_info *k = kcrt_bundle_kernel_info(b->file, i);
        if (strcmp(k->name, kernel))
            continue;
        const char *typed = NULL;
        if (device_type) {
            char key[300];
            snprintf(key, sizeof(key), "default.%s.%s", device_type, kernel);
            typed = kc_bundle_meta(b, key);
        }
        *why = typed ? "kc.yaml's default for the device's type" : "the source's default";
        return typed ? typed : k->default_variant;
    }
    return NULL;
}

/* ---- the description ------------------------------------------------------------ */

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

static const char *kind_name(kcrt_param_kind kind) { return kind == KCRT_PARAM_BUFFER ? "buffer" : "scalar"; }

static json_t *params_json(kc_bundle *b, const kcrt_kernel_info *k)
{
    json_t *a = json_array();
    for (int i = 0; i < k->nparams; i++) {
        const kcrt_param_info *p = &k->params[i];
        json_t *o = json_pack("{s:s, s:s, s:s, s:b}", "name", p->name, "kind", kind_name(p->kind), "type",
                              p->type_name, "readonly", p->readonly);
        if (p->kind == KCRT_PARAM_BUFFER)
            json_object_set_new(o, "extent", p->extent ? json_string(infix(b, p->extent, NULL)) : json_null());
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *strings_json(const char *const *v, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, json_string(v[i]));
    return a;
}

static json_t *tunables_json(const kcrt_kernel_info *k)
{
    json_t *a = json_array();
    for (int i = 0; i < k->ntunables; i++) {
        const kcrt_tunable_info *t = &k->tunables[i];
        json_t *vals = json_array();
        for (int j = 0; j < t->nvalues; j++)
            json_array_append_new(vals, json_integer(t->values[j]));
        json_array_append_new(a, json_pack("{s:s, s:I, s:o}", "name", t->name, "default", (json_int_t)t->def,
                                           "values", vals));
    }
    return a;
}

/* Variant indices grouped by target, in the bundle's order within one. */
static int *by_target(kc_bundle *b, const kcrt_kernel_info *k)
{
    int *order = kc_arena_alloc(&b->arena, sizeof(int) * (size_t)(k->nvariants + 1));
    int n = 0;
    for (int i = 0; i < k->nvariants; i++) { /* insertion: stable, and bundles hold few targets */
        int j = n++;
        for (; j > 0 && strcmp(k->variants[order[j - 1]].target, k->variants[i].target) > 0; j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
    return order;
}

static json_t *count_json(long v) { return v >= 0 ? json_integer(v) : json_null(); }

/* What the variant's binary says it costs the device (kc_binres.h). For
 * SPIR-V, whose registers the driver decides, only the private arrays it
 * indexes at run time. */
static json_t *resources_json(const char *target, const void *binary, size_t size)
{
    kc_binres r;
    char err[160];
    if (!kc_binres_read(target, binary, size, &r, err, sizeof(err)))
        return json_pack("{s:s}", "error", err);
    if (!r.known)
        return json_null();
    if (r.private_indexed >= 0)
        return json_pack("{s:I}", "private_arrays_indexed", (json_int_t)r.private_indexed);
    json_t *o = json_object();
    json_object_set_new(o, "vgprs", count_json(r.vgprs));
    json_object_set_new(o, "sgprs", count_json(r.sgprs));
    json_object_set_new(o, "vgpr_spills", count_json(r.vgpr_spills));
    json_object_set_new(o, "sgpr_spills", count_json(r.sgpr_spills));
    json_object_set_new(o, "scratch_bytes", count_json(r.scratch_bytes));
    json_object_set_new(o, "shared_bytes", count_json(r.shared_bytes));
    json_object_set_new(o, "spills", json_boolean(kc_binres_spills(&r)));
    return o;
}

static json_t *variants_json(kc_bundle *b, int kernel, const kcrt_kernel_info *k)
{
    json_t *a = json_array();
    int *order = by_target(b, k);
    for (int i = 0; i < k->nvariants; i++) {
        const kcrt_variant_info *v = &k->variants[order[i]];
        size_t size = 0;
        const void *binary = kcrt_bundle_variant_binary(b->file, kernel, order[i], &size, NULL);
        json_t *o = json_pack("{s:s, s:s, s:I, s:[I,I,I], s:s, s:I, s:I}", "variant", v->tunables, "target",
                              v->target, "bytes", (json_int_t)size, "workgroup", (json_int_t)v->wg[0],
                              (json_int_t)v->wg[1], (json_int_t)v->wg[2], "features", v->features, "shared_bytes",
                              (json_int_t)v->shared_bytes, "args_size", (json_int_t)v->args_size);
        json_object_set_new(o, "resources", resources_json(v->target, binary, size));
        json_array_append_new(a, o);
    }
    return a;
}

static int by_device_then_shape(const void *x, const void *y)
{
    const kcrt_tuned_row *a = *(const kcrt_tuned_row *const *)x, *b = *(const kcrt_tuned_row *const *)y;
    int c = strcmp(a->device, b->device);
    c = c ? c : strcmp(a->shape, b->shape);
    return c ? c : a->row - b->row;
}

static json_t *tuned_json(kc_bundle *b, int kernel)
{
    const kcrt_tuned_row *rows;
    int n = kcrt_bundle_tuned_rows(b->file, kernel, &rows);
    const kcrt_tuned_row **order = kc_arena_alloc(&b->arena, sizeof(*order) * (size_t)(n + 1));
    for (int i = 0; i < n; i++)
        order[i] = &rows[i];
    qsort(order, (size_t)n, sizeof(*order), by_device_then_shape);
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s, s:s, s:f}", "device", order[i]->device, "family",
                                           order[i]->family, "backend", order[i]->backend, "shape", order[i]->shape,
                                           "variant", order[i]->variant, "time_ns", order[i]->time_ns));
    return a;
}

/* {"cpu": "WG=128,TQ=4"}: kc.yaml's defaults per device type, from the
 * meta (support/kc_bundle_schema.h). */
static json_t *type_defaults_json(kc_bundle *b, const char *kernel)
{
    json_t *o = json_object();
    for (int i = 0; kc_device_types[i]; i++) {
        char key[300];
        snprintf(key, sizeof(key), "default.%s.%s", kc_device_types[i], kernel);
        const char *v = kc_bundle_meta(b, key);
        if (v)
            json_object_set_new(o, kc_device_types[i], json_string(v));
    }
    return o;
}

static json_t *kernel_json(kc_bundle *b, int i)
{
    const kcrt_kernel_info *k = kcrt_bundle_kernel_info(b->file, i);
    json_t *o = json_pack("{s:s, s:s, s:s, s:o, s:o, s:b, s:s, s:f, s:s}", "name", k->name, "source",
                          kcrt_bundle_kernel_source(b->file, i), "source_hash", k->source_hash, "workgroup",
                          triple(b, k->wg, NULL), "grid", triple(b, k->grid, NULL), "may_alias", k->may_alias,
                          "default_variant", k->default_variant, "tolerance", k->tolerance, "init", k->init);
    json_object_set_new(o, "bytes", k->bytes ? json_string(infix(b, k->bytes, NULL)) : json_null());
    json_object_set_new(o, "flops", k->flops ? json_string(infix(b, k->flops, NULL)) : json_null());
    json_object_set_new(o, "params", params_json(b, k));
    json_object_set_new(o, "tunables", tunables_json(k));
    json_object_set_new(o, "constraints", strings_json(k->constraints, k->nconstraints));
    json_object_set_new(o, "shapes", strings_json(k->shapes, k->nshapes));
    json_object_set_new(o, "variants", variants_json(b, i, k));
    json_object_set_new(o, "tuned", tuned_json(b, i));
    json_object_set_new(o, "type_defaults", type_defaults_json(b, k->name));
    return o;
}

static json_t *describe_json(kc_bundle *b)
{
    json_t *kernels = json_array();
    for (int i = 0; i < kcrt_bundle_kernel_count(b->file); i++)
        json_array_append_new(kernels, kernel_json(b, i));
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

static long field(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (long)json_integer_value(v) : -1;
}

static void bytes_text(kc_buf *out, long n)
{
    if (n >= 1024 && n % 1024 == 0)
        kc_buf_printf(out, "%ld KiB", n / 1024);
    else
        kc_buf_printf(out, "%ld B", n);
}

/* "  resources  TARGET (N variants)", the start of a resources line. */
static void resources_head(kc_buf *out, const char *target, size_t n)
{
    kc_buf_printf(out, "  resources  %s", target);
    if (n > 1)
        kc_buf_printf(out, " (%zu variants)", n);
}

/* The end of a resources line: the first three of the `count` variants it
 * counted (first[], "" for the default), then the unreadable ones. */
static void resources_tail(kc_buf *out, const char *const first[3], size_t count, size_t errors, const char *error)
{
    for (size_t i = 0; i < count && i < 3; i++)
        kc_buf_printf(out, "%s %s", i ? "," : "", *first[i] ? first[i] : "default");
    if (count > 3)
        kc_buf_puts(out, ", …");
    if (errors)
        kc_buf_printf(out, "; %zu unreadable (%s)", errors, error);
    kc_buf_putc(out, '\n');
}

/* One target's variants [from, to) of vs: their registers (a range), LDS
 * and scratch (the most), and which spill. */
static void text_target_resources(kc_buf *out, json_t *vs, size_t from, size_t to)
{
    long lo = -1, hi = -1, shared = 0, scratch = 0, vspill = 0, sspill = 0;
    size_t spilling = 0, errors = 0;
    const char *first_spilling[3] = {0}, *error = NULL;
    for (size_t i = from; i < to; i++) {
        json_t *r = json_object_get(json_array_get(vs, i), "resources");
        if (json_object_get(r, "error")) {
            errors++, error = str(r, "error");
            continue;
        }
        long v = field(r, "vgprs");
        if (v >= 0)
            lo = lo < 0 || v < lo ? v : lo, hi = v > hi ? v : hi;
        shared = field(r, "shared_bytes") > shared ? field(r, "shared_bytes") : shared;
        scratch = field(r, "scratch_bytes") > scratch ? field(r, "scratch_bytes") : scratch;
        vspill = field(r, "vgpr_spills") > vspill ? field(r, "vgpr_spills") : vspill;
        sspill = field(r, "sgpr_spills") > sspill ? field(r, "sgpr_spills") : sspill;
        if (json_is_true(json_object_get(r, "spills")) && spilling++ < 3)
            first_spilling[spilling - 1] = str(json_array_get(vs, i), "variant");
    }
    size_t n = to - from;
    resources_head(out, str(json_array_get(vs, from), "target"), n);
    kc_buf_puts(out, ":");
    if (lo >= 0 && lo == hi)
        kc_buf_printf(out, " %ld VGPRs,", lo);
    else if (lo >= 0)
        kc_buf_printf(out, " %ld-%ld VGPRs,", lo, hi);
    else
        kc_buf_puts(out, " registers chosen by ptxas at load,");
    kc_buf_puts(out, n > 1 ? " shared up to " : " shared ");
    bytes_text(out, shared);
    if (!spilling)
        kc_buf_puts(out, ", no spills or scratch");
    else {
        if (lo < 0) /* PTX: a local stack, what ptxas adds at load is unknown here */
            kc_buf_printf(out, "; %zu with a local stack (up to ", spilling);
        else
            kc_buf_printf(out, "; %zu with spills or scratch (up to %ld VGPRs and %ld SGPRs spilled, ", spilling,
                          vspill, sspill);
        bytes_text(out, scratch);
        kc_buf_puts(out, lo < 0 ? " a thread):" : " scratch a lane):");
    }
    resources_tail(out, first_spilling, spilling, errors, error);
}

/* SPIR-V's line: the variants with private arrays indexed at run time,
 * which most drivers keep in scratch memory (kc_binres.h). */
static void text_spirv_resources(kc_buf *out, json_t *vs, size_t from, size_t to)
{
    size_t indexed = 0, errors = 0;
    const char *first[3] = {0}, *error = NULL;
    for (size_t i = from; i < to; i++) {
        json_t *r = json_object_get(json_array_get(vs, i), "resources");
        if (json_object_get(r, "error"))
            errors++, error = str(r, "error");
        else if (field(r, "private_arrays_indexed") > 0 && indexed++ < 3)
            first[indexed - 1] = str(json_array_get(vs, i), "variant");
    }
    resources_head(out, "spirv", to - from);
    if (!indexed)
        kc_buf_puts(out, ": no private arrays indexed at run time");
    else
        kc_buf_printf(out, ": %zu with private arrays indexed at run time (scratch memory on most drivers, lavapipe's "
                           "included):",
                      indexed);
    resources_tail(out, first, indexed, errors, error);
}

/* A resources line per target whose binaries say what they cost: AMDGPU
 * and PTX their registers, spills and memory, SPIR-V its run-time-indexed
 * private arrays. vs is sorted by target. */
static void text_resources(kc_buf *out, json_t *vs)
{
    size_t n = json_array_size(vs);
    for (size_t from = 0, to; from < n; from = to) {
        const char *t = str(json_array_get(vs, from), "target");
        for (to = from + 1; to < n && !strcmp(str(json_array_get(vs, to), "target"), t); to++)
            ;
        if (!strcmp(t, "spirv"))
            text_spirv_resources(out, vs, from, to);
        else if (!json_is_null(json_object_get(json_array_get(vs, from), "resources")))
            text_target_resources(out, vs, from, to);
    }
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
    const char *type;
    json_t *d;
    json_object_foreach(json_object_get(k, "type_defaults"), type, d)
        kc_buf_printf(out, "  default    on a %s device: %s (kc.yaml's defaults, where no tuned row fits)\n", type,
                      json_string_value(d));
    text_resources(out, vs);
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

/* A SPIR-V binding read as texels (KC_TEXEL_READS): what a runtime must
 * bind there instead of a storage buffer. */
static const char *texel_binding(const rt_texel *texel, int nbindings, const char *binding)
{
    static const char *const formats[RT_TEXEL_KINDS] = {
        [RT_TEXEL_R32F] = "VK_FORMAT_R32_SFLOAT",   [RT_TEXEL_RGBA32F] = "VK_FORMAT_R32G32B32A32_SFLOAT",
        [RT_TEXEL_R32I] = "VK_FORMAT_R32_SINT",     [RT_TEXEL_RGBA32I] = "VK_FORMAT_R32G32B32A32_SINT",
        [RT_TEXEL_R32UI] = "VK_FORMAT_R32_UINT",    [RT_TEXEL_RGBA32UI] = "VK_FORMAT_R32G32B32A32_UINT",
        [RT_TEXEL_RGBA16F] = "VK_FORMAT_R16G16B16A16_SFLOAT",
    };
    int i = atoi(binding);
    return texel && i >= 0 && i < nbindings && texel[i] != RT_TEXEL_NONE ? formats[texel[i]] : NULL;
}

/* Is the scalar also a specialisation constant (KC_SPECIALIZE), whose
 * SpecId a runtime may set to the value it pushes, or leave alone? */
static bool is_spec(const uint32_t *spec, int nspec, int param)
{
    for (int i = 0; i < nspec && i < 8; i++)
        if (spec[i] == (uint32_t)param)
            return true;
    return false;
}

/* The manifest entry of one variant: where each argument goes. */
static void manifest_variant(kc_bundle *b, kc_buf *m, const kcrt_kernel_info *k, const kcrt_variant_info *v,
                             const char *args, const char *file, const void *binary, size_t size)
{
    bool spirv = !strcmp(v->target, "spirv");
    rt_texel texel[256];
    bool texels = spirv && rt_spirv_texel_bindings(binary, size, texel, 256);
    uint32_t spec[8]; /* KC_SPECIALIZE scalars: SpecId = parameter index (docs/backends.md) */
    int nspec = spirv ? rt_spirv_spec_ids(binary, size, spec, 8) : 0;
    kc_buf_printf(m, "      - variant: \"%s\"\n        target: %s\n        file: %s\n", v->tunables, v->target, file);
    kc_buf_printf(m, "        entry_point: %s\n", k->name);
    kc_buf_printf(m, "        workgroup_size: [%u, %u, %u]\n", v->wg[0], v->wg[1], v->wg[2]);
    kc_buf_printf(m, "        grid: [");
    char *copy = kc_arena_strdup(&b->arena, k->grid), *save = NULL;
    int i = 0;
    for (char *g = strtok_r(copy, ";", &save); g; g = strtok_r(NULL, ";", &save))
        kc_buf_printf(m, "%s\"%s\"", i++ ? ", " : "", infix(b, g, v->tunables));
    kc_buf_printf(m, "]\n        %s: %u\n", spirv ? "push_constant_bytes" : "kernarg_bytes", v->args_size);
    if (spirv)
        kc_buf_printf(m, "        scalars_in_storage_buffer: %s\n", v->spilled ? "true" : "false");
    kc_buf_printf(m, "        features: [%s]\n        args:\n", v->features);
    char *acopy = kc_arena_strdup(&b->arena, args ? args : ""), *asave = NULL;
    char *arg = strtok_r(acopy, ";", &asave);
    for (int p = 0; p < k->nparams; p++) {
        const kcrt_param_info *pi = &k->params[p];
        kc_buf_printf(m, "          - {name: %s, kind: %s, type: %s", pi->name, kind_name(pi->kind), pi->type_name);
        const char *format = arg && arg[0] == '@' ? texel_binding(texels ? texel : NULL, 256, arg + 1) : NULL;
        if (format)
            kc_buf_printf(m, ", set: 0, binding: %s, descriptor: uniform_texel_buffer, format: %s}\n", arg + 1,
                          format);
        else if (arg && arg[0] == '@')
            kc_buf_printf(m, ", set: 0, binding: %s}\n", arg + 1);
        else if (arg)
            kc_buf_printf(m, ", offset: %.*s, size: %s%s}\n", (int)strcspn(arg, ":"), arg,
                          strchr(arg, ':') ? strchr(arg, ':') + 1 : "?",
                          is_spec(spec, nspec, p) ? kc_arena_printf(&b->arena, ", spec_id: %d", p) : "");
        else
            kc_buf_puts(m, "}\n");
        arg = strtok_r(NULL, ";", &asave);
    }
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

/* Writes one variant's binary under dir; false with a message. */
static bool export_variant(kc_bundle *b, const char *dir, kc_buf *m, int kernel, int variant, char *err,
                           size_t errlen)
{
    const kcrt_kernel_info *k = kcrt_bundle_kernel_info(b->file, kernel);
    const kcrt_variant_info *v = &k->variants[variant];
    const char *bad = !safe_name_part(k->name)                       ? k->name
                      : *v->tunables && !safe_name_part(v->tunables) ? v->tunables
                      : !safe_name_part(v->target)                   ? v->target
                                                                     : NULL;
    if (bad) {
        snprintf(err, errlen,
                 "the bundle is damaged: '%.64s' cannot be part of a file name (kc build writes "
                 "identifiers, tunables and target names); nothing is written for it",
                 bad);
        return false;
    }
    size_t size;
    const char *args;
    const void *binary = kcrt_bundle_variant_binary(b->file, kernel, variant, &size, &args);
    const char *file = kc_arena_printf(&b->arena, "%s.%s.%s.%s", k->name, *v->tunables ? v->tunables : "default",
                                       v->target, extension(v->target));
    const char *path = kc_arena_printf(&b->arena, "%s/%s", dir, file);
    if (kc_write_file_atomic(path, binary, size) != 0) {
        snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
        return false;
    }
    manifest_variant(b, m, k, v, args, file, binary, size);
    return true;
}

bool kc_bundle_export(kc_bundle *b, const char *dir, FILE *log, char *err, size_t errlen)
{
    if (kc_make_dir(dir, 0755) != 0 && errno != EEXIST) {
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
    bool ok = true;
    int files = 0;
    for (int i = 0; ok && i < kcrt_bundle_kernel_count(b->file); i++) {
        const kcrt_kernel_info *k = kcrt_bundle_kernel_info(b->file, i);
        kc_buf_printf(&m, "  - name: %s\n    variants:\n", k->name);
        int *order = by_target(b, k);
        for (int j = 0; ok && j < k->nvariants; j++, files++)
            ok = export_variant(b, dir, &m, i, order[j], err, errlen);
    }
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
