/*
 * llvm_test.c — helpers of the LLVM backend's tests (llvm_test.h).
 */
#include "llvm_test.h"

#include <dirent.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const lt_kernel_dirs[] = {"tests/llvm/kernels",
                                      "tests/llvm/exec",
                                      "tests/spirv/kernels",
                                      "tests/ir/golden",
                                      "tests/dsl/corpus/ok",
                                      "kernels",
                                      NULL};

static bool executable(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

static bool find_in(const char *dir, size_t len, const char *name, char *out, size_t n)
{
    snprintf(out, n, "%.*s/%s", (int)len, dir, name);
    return len && executable(out);
}

const char *lt_tool(const char *const *names)
{
    static char found[8][4096];
    static int next;
    char *out = found[next++ % 8];
    const char *cuda = getenv("CUDA_PATH");
    for (; *names; names++) {
        if ((*names)[0] == '/') {
            if (executable(*names))
                return strcpy(out, *names);
            continue;
        }
        const char *path = getenv("PATH");
        while (path && *path) {
            size_t len = strcspn(path, ":");
            if (find_in(path, len, *names, out, 4096))
                return out;
            path += len + (path[len] == ':');
        }
        const char *dirs[] = {"/usr/lib/llvm-19/bin", "/usr/local/cuda/bin", cuda};
        for (size_t i = 0; i < KC_COUNT(dirs); i++)
            if (dirs[i] && find_in(dirs[i], strlen(dirs[i]), *names, out, 4096))
                return out;
    }
    return NULL;
}

void lt_need(const char *tool, const char *what)
{
    if (tool)
        return;
    printf("skipped: %s not found\n", what);
    exit(KC_TEST_SKIP);
}

char *lt_run(int *status, const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    FILE *p = popen(cmd, "r");
    if (!p) {
        *status = -1;
        return strdup("");
    }
    size_t len = 0, cap = 4096;
    char *buf = malloc(cap);
    size_t n;
    while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += n;
        if (cap - len < 2)
            buf = realloc(buf, cap *= 2);
    }
    buf[len] = 0;
    int rc = pclose(p);
    *status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    return buf;
}

char *lt_temp_file(const char *suffix, const void *data, size_t size)
{
    const char *tmp = getenv("TMPDIR");
    char *path = malloc(4096);
    snprintf(path, 4096, "%s/kc-llvm-test-XXXXXX%s", tmp && *tmp ? tmp : "/tmp", suffix);
    int fd = mkstemps(path, (int)strlen(suffix));
    assert_true(fd >= 0);
    assert_int_equal((ssize_t)size, write(fd, data, size));
    close(fd);
    return path;
}

/* ---- what a kernel does ---------------------------------------------------------- */

typedef struct scan {
    bool barrier, shared_read, shared_write;
} scan;

static bool is_shared(const kc_ir_root *r)
{
    return r->var && r->var->mem == KIR_MEM_SHARED;
}

static void scan_expr(scan *s, const kc_ir_expr *e)
{
    if (!e)
        return;
    if ((e->kind == KIR_LOAD && is_shared(&e->root)) || (e->kind == KIR_VAR && e->var->mem == KIR_MEM_SHARED))
        s->shared_read = true;
    scan_expr(s, e->a);
    scan_expr(s, e->b);
    scan_expr(s, e->c);
    for (int i = 0; i < e->nargs; i++)
        scan_expr(s, e->args[i]);
}

static void scan_stmt(void *user, kc_ir_stmt *st)
{
    scan *s = user;
    s->barrier |= st->kind == KIR_BARRIER;
    if ((st->kind == KIR_STORE || st->kind == KIR_ATOMIC) && is_shared(&st->root))
        s->shared_write = true;
    if (st->kind == KIR_ASSIGN && st->var->mem == KIR_MEM_SHARED)
        s->shared_write = true;
    const kc_ir_expr *es[] = {st->index, st->value, st->cmp, st->cond, st->post};
    for (size_t i = 0; i < KC_COUNT(es); i++)
        scan_expr(s, es[i]);
}

static scan scan_module(const kc_ir_module *m)
{
    scan s = {false, false, false};
    kc_ir_walk((kc_ir_block *)&m->kernel->body, scan_stmt, &s);
    return s;
}

bool lt_has_barrier(const kc_ir_module *m)
{
    return scan_module(m).barrier;
}

bool lt_uses_shared(const kc_ir_module *m)
{
    scan s = scan_module(m);
    return s.shared_read && s.shared_write;
}

bool lt_has_private_array(const kc_ir_module *m)
{
    for (int i = 0; i < m->kernel->vars.len; i++) {
        const kc_ir_var *v = m->kernel->vars.items[i];
        if (v->mem == KIR_MEM_PRIVATE && v->is_array)
            return true;
    }
    return false;
}

/* ---- sweeping ------------------------------------------------------------------- */

typedef struct variant_pick {
    long seen, stride;
    int left;
    kc_arena *arena;
    kc_vec picked; /* kc_ir_binding* */
    const char *def;
} variant_pick;

static void pick(void *user, const kc_ir_binding *b)
{
    variant_pick *v = user;
    if (v->seen++ % v->stride || !v->left || !strcmp(kc_ir_binding_text(v->arena, b), v->def))
        return;
    kc_ir_binding *copy = KC_NEW(v->arena, kc_ir_binding);
    copy->n = b->n;
    copy->names = kc_arena_alloc(v->arena, sizeof(char *) * (size_t)(b->n + 1));
    copy->values = kc_arena_alloc(v->arena, sizeof(int64_t) * (size_t)(b->n + 1));
    memcpy(copy->names, b->names, sizeof(char *) * (size_t)b->n);
    memcpy(copy->values, b->values, sizeof(int64_t) * (size_t)b->n);
    kc_vec_push(v->arena, &v->picked, copy);
    v->left--;
}

/* What the LLVM targets do natively: their sqrt is correctly rounded. */
static const kc_ir_options lt_ir_options = {.native_sqrt = true};
bool lt_checked;

static void one(kc_ctx *c, const char *path, const kc_program *p, const kc_func *k, const kc_ir_binding *b,
                lt_fn fn, void *user, lt_sweep *out)
{
    kc_arena a; /* one variant's kir, freed at once */
    kc_arena_init(&a);
    kc_ir_options o = lt_ir_options;
    o.bounds_checks = lt_checked;
    kc_ir_module *m = kc_ir_compile_with(&a, &c->diag, p, k, b, NULL, &o);
    if (!m) {
        fprintf(stderr, "%s: %s does not lower:\n%s\n", path, k->name,
                c->diag.text.data ? c->diag.text.data : "");
        out->failures++;
    } else {
        lt_case lc = {path, k, b, kc_ir_binding_text(&a, b), m, &c->diag};
        fn(user, &lc);
        out->variants++;
    }
    kc_arena_free(&a);
}

static void sweep_file(const char *path, int extra, lt_fn fn, void *user, lt_sweep *out)
{
    kc_ctx c;
    kc_ctx_init(&c, stderr);
    kc_program *p = kc_dsl_parse(&c, path);
    out->files++;
    if (!p)
        out->failures++;
    for (int i = 0; p && i < p->funcs.len; i++) {
        const kc_func *k = p->funcs.items[i];
        if (!k->is_kernel)
            continue;
        out->kernels++;
        kc_ir_binding def = kc_ir_default_binding(&c.arena, p, k);
        long n = kc_ir_each_variant(&c.arena, p, k, NULL, NULL);
        variant_pick v = {0,   extra && n > extra ? n / extra : 1, extra, &c.arena,
                          {0}, kc_ir_binding_text(&c.arena, &def)};
        if (extra)
            kc_ir_each_variant(&c.arena, p, k, pick, &v);
        one(&c, path, p, k, &def, fn, user, out);
        for (int j = 0; j < v.picked.len; j++)
            one(&c, path, p, k, v.picked.items[j], fn, user, out);
    }
    kc_ctx_free(&c);
}

void lt_sweep_dirs(const char *const *dirs, int extra, lt_fn fn, void *user, lt_sweep *out)
{
    memset(out, 0, sizeof(*out));
    for (; *dirs; dirs++) {
        char dir[4096];
        snprintf(dir, sizeof(dir), "%s/%s", KC_SOURCE_DIR, *dirs);
        DIR *d = opendir(dir);
        if (!d)
            continue; /* kernels/ may not exist in every branch */
        struct dirent *e;
        while ((e = readdir(d))) {
            size_t n = strlen(e->d_name);
            if (n < 4 || strcmp(e->d_name + n - 3, ".kc") != 0)
                continue;
            char path[8192];
            snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
            sweep_file(path, extra, fn, user, out);
        }
        closedir(d);
    }
}

/* ---- compiling ------------------------------------------------------------------------ */

static void options(kc_llvm_options *o, const char *target, int cov)
{
    kc_llvm_default_options(o);
    o->target = target;
    if (cov)
        o->amdgpu_cov = cov;
}

bool lt_emit(const lt_case *c, const char *target, int cov, kc_llvm_output what, kc_llvm_module *out)
{
    kc_llvm_options o;
    options(&o, target, cov);
    if (kc_llvm_emit(c->m, &o, what, out, c->diag))
        return true;
    fprintf(stderr, "%s: %s %s for %s failed:\n%s\n", c->path, c->k->name, c->variant, target,
            c->diag->text.data ? c->diag->text.data : "");
    return false;
}

void lt_compile(lt_compiled *out, const char *rel, const char *kernel, const char *target, int cov,
                kc_llvm_output what, bool optimize)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", KC_SOURCE_DIR, rel);
    kc_ctx_init(&out->ctx, stderr);
    kc_program *p = kc_dsl_parse(&out->ctx, path);
    assert_non_null(p);
    const kc_func *k = NULL;
    for (int i = 0; i < p->funcs.len && !k; i++) {
        const kc_func *f = p->funcs.items[i];
        if (f->is_kernel && (!kernel || !strcmp(kernel, f->name)))
            k = f;
    }
    assert_non_null(k);
    kc_ir_binding b = kc_ir_default_binding(&out->ctx.arena, p, k);
    kc_ir_module *m = kc_ir_compile_with(&out->ctx.arena, &out->ctx.diag, p, k, &b, NULL, &lt_ir_options);
    assert_non_null(m);
    kc_llvm_options o;
    options(&o, target, cov);
    o.optimize = optimize;
    out->ok = kc_llvm_emit(m, &o, what, &out->mod, &out->ctx.diag);
}

void lt_compiled_free(lt_compiled *c)
{
    kc_llvm_module_free(&c->mod);
    kc_ctx_free(&c->ctx);
}
