/*
 * cmd_check.c — `kc check FILE…`: the front end alone.
 */
#include "kc_dsl.h"
#include "kc_ir.h"
#include "kc_tools.h"

/* The front end accepts what only kir can refuse once tunables are bound
 * (a KC_UNROLL whose trip count is not constant, a body too large to
 * unroll): each kernel's default variant goes through kir too, so kc
 * check does not pass what kc build then refuses. */
static bool compiles(kc_ctx *c, const kc_program *p)
{
    bool ok = true;
    for (int i = 0; i < p->funcs.len; i++) {
        const kc_func *f = p->funcs.items[i];
        if (!f->is_kernel)
            continue;
        kc_ir_binding b = kc_ir_default_binding(&c->arena, p, f);
        ok &= kc_ir_compile(&c->arena, &c->diag, p, f, &b, NULL) != NULL;
    }
    return ok;
}

static void report(const char *file, kc_ctx *c, const kc_program *p)
{
    int kernels = 0;
    long variants = 0;
    for (int i = 0; i < p->funcs.len; i++) {
        const kc_func *f = p->funcs.items[i];
        if (!f->is_kernel)
            continue;
        kernels++;
        variants += kc_ir_each_variant(&c->arena, p, f, NULL, NULL);
    }
    printf("%s: ok (%d kernel%s, %d tunable%s, %ld variant%s)\n", file, kernels, kernels == 1 ? "" : "s",
           p->tunables.len, p->tunables.len == 1 ? "" : "s", variants, variants == 1 ? "" : "s");
}

int kc_cmd_check(int argc, char **argv)
{
    static const kc_opt opts[] = {{"-I", true}};
    kc_args a = {"check", argc, argv, 1, NULL, NULL};
    const char *files[256];
    kc_includes inc = {0};
    int nfiles = 0, bad = 0, r;
    while ((r = kc_next_arg(&a, opts, 1)) != -2) {
        if (r == -3 || (r == 0 && kc_includes_add(&inc, "check", a.value) != KC_EXIT_OK))
            return KC_EXIT_USAGE;
        if (r == -1 && nfiles == 256)
            return kc_usage_error("check", "too many files");
        if (r == -1)
            files[nfiles++] = a.positional;
    }
    if (!nfiles)
        return kc_usage_error("check", "no files given");
    for (int i = 0; i < nfiles; i++) {
        kc_ctx c;
        kc_ctx_init(&c, stderr);
        if (!kc_includes_apply(&inc, &c, "check")) {
            kc_ctx_free(&c);
            return KC_EXIT_ERROR;
        }
        kc_program *p = kc_dsl_parse(&c, files[i]);
        if (p && !compiles(&c, p))
            p = NULL;
        if (!p) {
            fprintf(stderr, "%s: %d error%s\n", files[i], c.diag.nerrors, c.diag.nerrors == 1 ? "" : "s");
            bad++;
        } else {
            report(files[i], &c, p);
        }
        kc_ctx_free(&c);
    }
    return bad ? KC_EXIT_ERROR : KC_EXIT_OK;
}
