/*
 * package.c — reading a kernel package: the .kc files and kc.yaml.
 *
 *   package: rvc
 *   kernels:
 *     saxpy:
 *       shapes: [{n: 48000}, {n: 1048576}]
 *       init: {x: normal, y: uniform}   # uniform in [-1, 1) unless said
 *       tolerance: 1e-5                 # relative L2 against the default variant
 *       bytes: 12 * n                   # per launch, for kc bench
 *       flops: 2 * n
 *       defaults: {cpu: {WG: 256}}      # the untuned variant on a CPU driver (lavapipe)
 *
 * kc.yaml is read with libyaml; every mistake in it is reported at its
 * line and column like a mistake in a kernel.
 */
#include "kc_build.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

static const char *const init_kinds[] = {"uniform", "normal", "positive", "ones", "index", "twiddle",
                                                   NULL};
/* kcrt_device_info.type_name's values (runtime/include/kc/kcrt.h) */
const char *const kc_device_types[] = {"cpu", "integrated", "discrete", "virtual", "other", NULL};

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void add_file(kc_package *p, const char *path, const kc_package_options *o, FILE *out)
{
    kc_pkg_file *f = KC_NEW(&p->arena, kc_pkg_file);
    f->path = kc_arena_strdup(&p->arena, path);
    kc_ctx_init(&f->ctx, out);
    for (int i = 0; i < o->ninclude_dirs; i++)
        kc_ctx_allow_dir(&f->ctx, o->include_dirs[i]); /* checked by kc_package_load */
    f->prog = kc_dsl_parse(&f->ctx, path);
    p->nerrors += f->ctx.diag.nerrors;
    kc_vec_push(&p->arena, &p->files, f);
}

/* The *.kc files directly in a directory, in name order. */
static void add_dir(kc_package *p, const char *dir, const kc_package_options *o, FILE *out)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(out, "kc: cannot read directory '%s': %s\n", dir, strerror(errno));
        p->nerrors++;
        return;
    }
    kc_vec names = {0};
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n > 3 && strcmp(e->d_name + n - 3, ".kc") == 0 && e->d_name[0] != '.')
            kc_vec_push(&p->arena, &names,
                        kc_arena_printf(&p->arena, "%s%s%s", dir, kc_is_separator(dir[strlen(dir) - 1]) ? "" : "/", e->d_name));
    }
    closedir(d);
    qsort(names.items, (size_t)names.len, sizeof(void *), by_name);
    if (!names.len) {
        fprintf(out, "kc: '%s' has no .kc files\n", dir);
        p->nerrors++;
    }
    for (int i = 0; i < names.len; i++)
        add_file(p, names.items[i], o, out);
}

/* ---- kc.yaml ---------------------------------------------------------------------- */

typedef struct yaml_reader {
    kc_package *p;
    yaml_document_t *doc;
    int file; /* kc.yaml in yaml_ctx's source table */
} yaml_reader;

static kc_loc where(const yaml_reader *Y, const yaml_node_t *n)
{
    return (kc_loc){Y->file, (int)n->start_mark.line + 1, (int)n->start_mark.column + 1};
}

static void yerror(yaml_reader *Y, const yaml_node_t *n, const char *fmt, ...) KC_PRINTF(3, 4);
static void yerror(yaml_reader *Y, const yaml_node_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kc_diag_report(&Y->p->yaml_ctx.diag, KC_DIAG_ERROR, where(Y, n), fmt, ap);
    va_end(ap);
    Y->p->nerrors++;
}

static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static yaml_node_t *node(yaml_reader *Y, int id) { return yaml_document_get_node(Y->doc, id); }

/* {name: value, …} -> "name=value,…", every value a scalar */
static const char *flat_map(yaml_reader *Y, yaml_node_t *m, const char *what)
{
    if (m->type != YAML_MAPPING_NODE) {
        yerror(Y, m, "%s must be a mapping like {n: 48000}", what);
        return NULL;
    }
    kc_buf b = {0};
    for (yaml_node_pair_t *pr = m->data.mapping.pairs.start; pr < m->data.mapping.pairs.top; pr++) {
        const char *k = scalar(node(Y, pr->key)), *v = scalar(node(Y, pr->value));
        if (!k || !v) {
            yerror(Y, node(Y, pr->value), "%s takes names and plain values", what);
            kc_buf_free(&b);
            return NULL;
        }
        kc_buf_printf(&b, "%s%s=%s", b.len ? "," : "", k, v);
    }
    const char *s = kc_arena_strdup(&Y->p->arena, b.data ? b.data : "");
    kc_buf_free(&b);
    return s;
}

static kc_iexpr *yaml_iexpr(yaml_reader *Y, yaml_node_t *n, const char *what)
{
    const char *s = scalar(n);
    char err[128];
    kc_iexpr *e = s ? kc_iexpr_parse_infix(&Y->p->arena, s, err, sizeof(err)) : NULL;
    if (!e)
        yerror(Y, n, "%s must be an integer expression over the kernel's scalars%s%s", what, s ? ": " : "",
               s ? err : "");
    return e;
}

/* YAML says a mapping's keys are unique; libyaml does not check. A second
 * "shapes:" or a kernel described twice would silently win over the first. */
static bool repeated_key(yaml_reader *Y, yaml_node_t *map, yaml_node_pair_t *pr)
{
    const char *ks = scalar(node(Y, pr->key));
    for (yaml_node_pair_t *q = map->data.mapping.pairs.start; ks && q < pr; q++) {
        const char *qs = scalar(node(Y, q->key));
        if (qs && strcmp(qs, ks) == 0) {
            yerror(Y, node(Y, pr->key), "'%s' is given twice; the first is at line %d", ks,
                   (int)node(Y, q->key)->start_mark.line + 1);
            return true;
        }
    }
    return false;
}

/* defaults: {cpu: {WG: 128, TQ: 4}, integrated: {...}} */
static void read_defaults(yaml_reader *Y, kc_kernel_cfg *c, yaml_node_t *n)
{
    if (n->type != YAML_MAPPING_NODE) {
        yerror(Y, n, "defaults: must be a mapping of device types to tunables, like {cpu: {WG: 128}}");
        return;
    }
    for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = node(Y, pr->key);
        const char *type = scalar(k);
        bool known = false;
        for (int i = 0; type && kc_device_types[i]; i++)
            known |= strcmp(type, kc_device_types[i]) == 0;
        if (!known) {
            yerror(Y, k, "defaults: '%s' is not a device type (cpu, integrated, discrete, virtual, other)",
                   type ? type : "?");
            continue;
        }
        if (repeated_key(Y, n, pr))
            continue;
        yaml_node_t *v = node(Y, pr->value);
        if (v->type != YAML_MAPPING_NODE) {
            yerror(Y, v, "defaults: %s: must be a mapping of tunables to values, like {WG: 128}", type);
            continue;
        }
        const char *t = flat_map(Y, v, "a default");
        if (!t)
            continue;
        kc_type_default *d = KC_NEW(&Y->p->arena, kc_type_default);
        d->type = kc_arena_strdup(&Y->p->arena, type);
        d->tunables = t;
        d->loc = where(Y, v);
        kc_vec_push(&Y->p->arena, &c->defaults, d);
    }
}

static void read_kernel(yaml_reader *Y, const char *name, yaml_node_t *n, yaml_node_t *key)
{
    kc_kernel_cfg *c = KC_NEW(&Y->p->arena, kc_kernel_cfg);
    c->name = kc_arena_strdup(&Y->p->arena, name);
    c->loc = where(Y, key);
    c->init = "";
    c->tolerance = KC_DEFAULT_TOLERANCE;
    kc_vec_push(&Y->p->arena, &Y->p->cfgs, c);
    if (n->type == YAML_SCALAR_NODE && !*scalar(n))
        return; /* "saxpy:" with nothing under it */
    if (n->type != YAML_MAPPING_NODE) {
        yerror(Y, n, "the entry for kernel '%s' must be a mapping (shapes:, init:, tolerance:, bytes:, flops:, defaults:)", name);
        return;
    }
    for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = node(Y, pr->key), *v = node(Y, pr->value);
        const char *ks = scalar(k);
        if (!ks) {
            yerror(Y, k, "expected a key");
        } else if (repeated_key(Y, n, pr)) {
            continue;
        } else if (strcmp(ks, "shapes") == 0) {
            if (v->type != YAML_SEQUENCE_NODE) {
                yerror(Y, v, "shapes: must be a list like [{n: 48000}, {n: 1048576}]");
                continue;
            }
            for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
                const char *s = flat_map(Y, node(Y, *it), "a shape");
                if (s)
                    kc_vec_push(&Y->p->arena, &c->shapes, (void *)s);
            }
        } else if (strcmp(ks, "init") == 0) {
            const char *s = flat_map(Y, v, "init:");
            if (s)
                c->init = s;
        } else if (strcmp(ks, "tolerance") == 0) {
            const char *s = scalar(v);
            char *end = NULL;
            double t = s ? strtod(s, &end) : 0;
            if (!s || *end || !(t >= 0))
                yerror(Y, v, "tolerance: must be a non-negative number, such as 1e-5");
            else
                c->tolerance = t;
        } else if (strcmp(ks, "bytes") == 0) {
            c->bytes = yaml_iexpr(Y, v, "bytes:");
            c->bytes_loc = where(Y, v);
        } else if (strcmp(ks, "flops") == 0) {
            c->flops = yaml_iexpr(Y, v, "flops:");
            c->flops_loc = where(Y, v);
        } else if (strcmp(ks, "defaults") == 0) {
            read_defaults(Y, c, v);
        } else {
            /* an error, not a warning: "shape:" for "shapes:" would build, then tune nothing */
            yerror(Y, k, "unknown key '%s' for kernel '%s' (kc.yaml knows shapes, init, tolerance, bytes, flops, defaults)", ks,
                   name);
        }
    }
}

/* "---" and a second document would be ignored: whatever it says (a fix
 * pasted below the first one) must not be lost silently. */
static void refuse_more_documents(kc_package *p, yaml_parser_t *parser, int file)
{
    yaml_document_t doc;
    if (!yaml_parser_load(parser, &doc))
        return; /* the first document was whole; an error after it is the next one's */
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root) {
        kc_error_at(&p->yaml_ctx.diag, (kc_loc){file, (int)root->start_mark.line + 1, (int)root->start_mark.column + 1},
                    "kc.yaml holds a second document; kc reads one: put everything in the first");
        p->nerrors++;
    }
    yaml_document_delete(&doc);
}

static void read_yaml(kc_package *p, const char *path)
{
    size_t len;
    char *text = kc_read_file_max(path, KC_MAX_SOURCE_BYTES, &len);
    if (!text) {
        kc_error_at(&p->yaml_ctx.diag, KC_NO_LOC, "cannot read '%s': %s", path,
                    errno == EFBIG ? "too large (kc.yaml may be up to 16 MiB)" : kc_read_error(errno));
        p->nerrors++;
        return;
    }
    yaml_reader Y = {p, NULL, kc_src_add(&p->yaml_ctx.src, path, text, len, false)};
    free(text);
    yaml_parser_t parser;
    yaml_document_t doc;
    yaml_parser_initialize(&parser);
    const kc_src_file *f = p->yaml_ctx.src.files[Y.file];
    yaml_parser_set_input_string(&parser, (const unsigned char *)f->text, f->len);
    if (!yaml_parser_load(&parser, &doc)) {
        kc_error_at(&p->yaml_ctx.diag, (kc_loc){Y.file, (int)parser.problem_mark.line + 1, (int)parser.problem_mark.column + 1},
                    "kc.yaml is not valid YAML: %s", parser.problem ? parser.problem : "parse error");
        p->nerrors++;
        yaml_parser_delete(&parser);
        return;
    }
    Y.doc = &doc;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root && root->type != YAML_MAPPING_NODE)
        yerror(&Y, root, "kc.yaml must be a mapping with package: and kernels:");
    for (yaml_node_pair_t *pr = root && root->type == YAML_MAPPING_NODE ? root->data.mapping.pairs.start : NULL;
         pr && pr < root->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = node(&Y, pr->key), *v = node(&Y, pr->value);
        const char *ks = scalar(k);
        if (repeated_key(&Y, root, pr))
            continue;
        if (ks && strcmp(ks, "package") == 0 && scalar(v)) {
            p->name = kc_arena_strdup(&p->arena, scalar(v));
        } else if (ks && strcmp(ks, "kernels") == 0 && v->type == YAML_MAPPING_NODE) {
            for (yaml_node_pair_t *q = v->data.mapping.pairs.start; q < v->data.mapping.pairs.top; q++)
                if (scalar(node(&Y, q->key)) && !repeated_key(&Y, v, q))
                    read_kernel(&Y, scalar(node(&Y, q->key)), node(&Y, q->value), node(&Y, q->key));
        } else if (ks && strcmp(ks, "kernels") == 0) {
            yerror(&Y, v, "kernels: must map kernel names to their settings");
        } else if (ks) {
            yerror(&Y, k, "unknown key '%s' in kc.yaml (it knows package and kernels)", ks);
        }
    }
    yaml_document_delete(&doc);
    refuse_more_documents(p, &parser, Y.file);
    yaml_parser_delete(&parser);
}

/* A shape gives every integer scalar: it is how kc tune sizes the buffers
 * and how the runtime matches a launch to a tuned row. */
static void check_shape_complete(kc_package *p, const kc_kernel_cfg *c, const kc_func *k, const char *shape)
{
    for (int i = 0; i < k->params.len; i++) {
        const kc_sym *param = k->params.items[i];
        if (param->is_buffer || !kc_type_is_int(param->type) || kc_scalar_bits(param->type->scalar) != 32)
            continue; /* the runtime's shapes are its int and uint scalars */
        size_t n = strlen(param->name);
        bool found = false;
        for (const char *at = shape; *at && !found; at += strcspn(at, ","), at += *at == ',')
            found = strncmp(at, param->name, n) == 0 && at[n] == '=';
        if (!found) {
            kc_error_at(&p->yaml_ctx.diag, c->loc, "shape '%s' of '%s' does not give %s: a shape names every "
                        "integer parameter", shape, c->name, param->name);
            p->nerrors++;
        }
    }
}

typedef struct size_check {
    kc_package *p;
    const kc_kernel_cfg *c;
    const kc_func *k;
    kc_loc at;
    const char *what;
} size_check;

static void size_name_known(void *user, const char *name)
{
    size_check *sc = user;
    for (int i = 0; i < sc->k->params.len; i++) {
        const kc_sym *s = sc->k->params.items[i];
        if (!s->is_buffer && kc_type_is_int(s->type) && strcmp(s->name, name) == 0)
            return;
    }
    kc_error_at(&sc->p->yaml_ctx.diag, sc->at, "%s names '%s', which is not one of the integer parameters of '%s'",
                sc->what, name, sc->c->name);
    sc->p->nerrors++;
}

static bool shape_value(void *user, const char *name, int64_t *value)
{
    size_t n = strlen(name);
    for (const char *at = user; *at; at += strcspn(at, ","), at += *at == ',')
        if (strncmp(at, name, n) == 0 && at[n] == '=') {
            *value = strtoll(at + n + 1, NULL, 10);
            return true;
        }
    return false;
}

/* bytes: and flops: name only the kernel's integer scalars and evaluate at
 * every shape: "12 * q" or "n / 0" is an error here, with its line, not a
 * bundle libkcrt refuses later or a NaN in kc bench's report. */
static void check_size_expr(kc_package *p, const kc_kernel_cfg *c, const kc_func *k, const kc_iexpr *e, kc_loc at,
                            const char *what)
{
    if (!e)
        return;
    size_check sc = {p, c, k, at, what};
    int before = p->nerrors;
    kc_iexpr_each_name(e, size_name_known, &sc);
    for (int s = 0; s < c->shapes.len && p->nerrors == before; s++) {
        int64_t v;
        char err[128];
        if (!kc_iexpr_eval(e, shape_value, c->shapes.items[s], &v, err, sizeof(err))) {
            kc_error_at(&p->yaml_ctx.diag, at, "%s cannot be evaluated at shape '%s': %s", what,
                        (const char *)c->shapes.items[s], err);
            p->nerrors++;
        } else if (v < 0) {
            kc_error_at(&p->yaml_ctx.diag, at, "%s is %lld at shape '%s'; it must not be negative", what, (long long)v,
                        (const char *)c->shapes.items[s]);
            p->nerrors++;
        }
    }
}

/* Each default is a variant of the kernel's space (named tunables, values
 * among theirs, KC_REQUIRE holds), written in declaration order after. */
static void check_defaults(kc_package *p, kc_kernel_cfg *c, const kc_pkg_file *file, const kc_func *k)
{
    for (int i = 0; i < c->defaults.len && file->prog; i++) {
        kc_type_default *d = c->defaults.items[i];
        kc_ir_binding b;
        char err[256];
        if (!kc_ir_parse_binding(&p->arena, file->prog, k, d->tunables, &b, err, sizeof(err))) {
            kc_error_at(&p->yaml_ctx.diag, d->loc, "defaults: %s of '%s': %s", d->type, c->name, err);
            p->nerrors++;
        } else {
            d->tunables = kc_ir_binding_text(&p->arena, &b);
        }
    }
}

/* Every kc.yaml entry must match a kernel: the shape names its integer
 * scalars, init names its buffers with a known kind, defaults are
 * variants of it. */
static void check_cfg(kc_package *p, kc_kernel_cfg *c)
{
    kc_diag *d = &p->yaml_ctx.diag;
    const kc_pkg_file *file;
    const kc_func *k = kc_package_kernel(p, c->name, &file);
    if (!k) {
        kc_error_at(d, c->loc, "kc.yaml describes kernel '%s', which no .kc file of the package defines", c->name);
        p->nerrors++;
        return;
    }
    for (int s = 0; s < c->shapes.len; s++) {
        char *copy = kc_arena_strdup(&p->arena, c->shapes.items[s]), *save = NULL;
        for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
            char *eq = strchr(kv, '=');
            *eq = 0;
            const kc_sym *param = NULL;
            for (int i = 0; i < k->params.len; i++)
                if (strcmp(((const kc_sym *)k->params.items[i])->name, kv) == 0)
                    param = k->params.items[i];
            char *end;
            strtoll(eq + 1, &end, 10);
            if (!param || param->is_buffer || !kc_type_is_int(param->type))
                kc_error_at(d, c->loc, "a shape of '%s' names '%s', which is not one of its integer parameters",
                            c->name, kv), p->nerrors++;
            else if (*end || end == eq + 1)
                kc_error_at(d, c->loc, "shape value %s=%s of '%s' is not an integer", kv, eq + 1, c->name),
                    p->nerrors++;
        }
    }
    for (int s = 0; s < c->shapes.len; s++)
        check_shape_complete(p, c, k, c->shapes.items[s]);
    check_size_expr(p, c, k, c->bytes, c->bytes_loc, "bytes:");
    check_size_expr(p, c, k, c->flops, c->flops_loc, "flops:");
    check_defaults(p, c, file, k);
    char *copy = kc_arena_strdup(&p->arena, c->init), *save = NULL;
    for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        *eq = 0;
        bool known = false, buffer = false;
        for (int i = 0; init_kinds[i]; i++)
            known |= strcmp(init_kinds[i], eq + 1) == 0;
        for (int i = 0; i < k->params.len; i++) {
            const kc_sym *s = k->params.items[i];
            buffer |= s->is_buffer && strcmp(s->name, kv) == 0;
        }
        if (!buffer)
            kc_error_at(d, c->loc, "init: names '%s', which is not a buffer of '%s'", kv, c->name), p->nerrors++;
        if (!known)
            kc_error_at(d, c->loc, "init: '%s' is not a known initialisation (uniform, normal, positive, ones, index, twiddle)",
                        eq + 1), p->nerrors++;
    }
}

bool kc_package_load(kc_package *p, const kc_package_options *o, FILE *out)
{
    int ninputs = o->ninputs;
    memset(p, 0, sizeof(*p));
    kc_arena_init(&p->arena);
    /* "kernels\gemm.kc" on Windows: recorded as kernels/gemm.kc, as on Linux */
    const char **inputs = kc_arena_alloc(&p->arena, sizeof(char *) * (size_t)(ninputs ? ninputs : 1));
    for (int i = 0; i < ninputs; i++) {
        char *copy = kc_arena_strdup(&p->arena, o->inputs[i]);
        kc_path_normalize(copy);
        inputs[i] = copy;
    }
    kc_ctx_init(&p->yaml_ctx, out);
    for (int i = 0; i < o->ninclude_dirs; i++)
        if (!is_dir(o->include_dirs[i])) {
            fprintf(out, "kc: -I '%s' is not a folder\n", o->include_dirs[i]);
            p->nerrors++;
        }
    if (p->nerrors)
        return false;
    for (int i = 0; i < ninputs; i++) {
        if (is_dir(inputs[i])) {
            add_dir(p, inputs[i], o, out);
            char *yaml = kc_arena_printf(&p->arena, "%s/kc.yaml", inputs[i]);
            struct stat st;
            if (stat(yaml, &st) == 0) {
                p->yaml_path = yaml;
                read_yaml(p, yaml);
            }
            if (!p->name) {
                char *copy = kc_arena_strdup(&p->arena, inputs[i]);
                size_t n = strlen(copy);
                while (n > 1 && kc_is_separator(copy[n - 1]))
                    copy[--n] = 0;
                const char *slash = kc_last_separator(copy);
                p->name = slash ? slash + 1 : copy;
            }
        } else {
            add_file(p, inputs[i], o, out);
        }
    }
    if (!p->name) {
        const char *first = ninputs ? inputs[0] : "kernels";
        const char *slash = kc_last_separator(first);
        char *base = kc_arena_strdup(&p->arena, slash ? slash + 1 : first);
        char *dot = strrchr(base, '.');
        if (dot)
            *dot = 0;
        p->name = base;
    }
    /* a kernel name is unique in a package */
    for (int i = 0; i < p->files.len; i++) {
        const kc_pkg_file *f = p->files.items[i];
        for (int j = 0; f->prog && j < f->prog->funcs.len; j++) {
            const kc_func *k = f->prog->funcs.items[j];
            const kc_pkg_file *other;
            if (k->is_kernel && kc_package_kernel(p, k->name, &other) != k) {
                fprintf(out, "%s: error: kernel '%s' is also defined in %s\n", f->path, k->name, other->path);
                p->nerrors++;
            }
        }
    }
    for (int i = 0; i < p->cfgs.len; i++)
        check_cfg(p, p->cfgs.items[i]);
    return p->nerrors == 0;
}

void kc_package_free(kc_package *p)
{
    for (int i = 0; i < p->files.len; i++)
        kc_ctx_free(&((kc_pkg_file *)p->files.items[i])->ctx);
    kc_ctx_free(&p->yaml_ctx);
    kc_arena_free(&p->arena);
}

const kc_func *kc_package_kernel(const kc_package *p, const char *name, const kc_pkg_file **file)
{
    for (int i = 0; i < p->files.len; i++) {
        const kc_pkg_file *f = p->files.items[i];
        for (int j = 0; f->prog && j < f->prog->funcs.len; j++) {
            const kc_func *k = f->prog->funcs.items[j];
            if (k->is_kernel && strcmp(k->name, name) == 0) {
                if (file)
                    *file = f;
                return k;
            }
        }
    }
    return NULL;
}

const kc_kernel_cfg *kc_package_cfg(kc_package *p, const char *kernel)
{
    for (int i = 0; i < p->cfgs.len; i++)
        if (strcmp(((kc_kernel_cfg *)p->cfgs.items[i])->name, kernel) == 0)
            return p->cfgs.items[i];
    kc_kernel_cfg *c = KC_NEW(&p->arena, kc_kernel_cfg);
    c->name = kernel;
    c->init = "";
    c->tolerance = KC_DEFAULT_TOLERANCE;
    c->loc = KC_NO_LOC;
    kc_vec_push(&p->arena, &p->cfgs, c);
    return c;
}
