/*
 * cmd_variants.c — `kc variants FILE [--kernel K]`: the search space.
 */
#include "kc_dsl.h"
#include "kc_ir.h"
#include "kc_tools.h"

#include <string.h>

typedef struct listing {
    kc_arena *arena;
    const char *kernel;
    const char *def;
} listing;

static void print_variant(void *user, const kc_ir_binding *b)
{
    listing *l = user;
    const char *text = kc_ir_binding_text(l->arena, b);
    printf("%s %s%s\n", l->kernel, *text ? text : "-", strcmp(text, l->def) == 0 ? " *" : "");
}

int kc_cmd_variants(int argc, char **argv)
{
    static const kc_opt opts[] = {{"--kernel", true}, {"-I", true}};
    kc_args a = {"variants", argc, argv, 1, NULL, NULL};
    const char *file = NULL, *only = NULL;
    kc_includes inc = {0};
    int r;
    while ((r = kc_next_arg(&a, opts, 2)) != -2) {
        if (r == -3 || (r == 1 && kc_includes_add(&inc, "variants", a.value) != KC_EXIT_OK))
            return KC_EXIT_USAGE;
        if (r == 1)
            continue;
        if (r == 0)
            only = a.value;
        else if (file)
            return kc_usage_error("variants", "one file at a time");
        else
            file = a.positional;
    }
    if (!file)
        return kc_usage_error("variants", "no file given");
    kc_ctx c;
    kc_ctx_init(&c, stderr);
    if (!kc_includes_apply(&inc, &c, "variants")) {
        kc_ctx_free(&c);
        return KC_EXIT_ERROR;
    }
    kc_program *p = kc_dsl_parse(&c, file);
    int status = KC_EXIT_OK, shown = 0;
    for (int i = 0; p && i < p->funcs.len; i++) {
        const kc_func *f = p->funcs.items[i];
        if (!f->is_kernel || (only && strcmp(only, f->name) != 0))
            continue;
        shown++;
        kc_ir_binding def = kc_ir_default_binding(&c.arena, p, f);
        listing l = {&c.arena, f->name, kc_ir_binding_text(&c.arena, &def)};
        long n = kc_ir_each_variant(&c.arena, p, f, print_variant, &l);
        const kc_tunable *ts[256];
        int nt = kc_ir_kernel_tunables(p, f, ts, 256);
        long all = 1;
        for (int k = 0; k < nt; k++)
            all *= ts[k]->nvalues;
        fprintf(stderr, "%s: %ld variant%s", f->name, n, n == 1 ? "" : "s");
        if (all != n)
            fprintf(stderr, " (of %ld; %ld break a KC_REQUIRE)", all, all - n);
        fputc('\n', stderr);
        if (!kc_ir_binding_allowed(p, f, &def))
            fprintf(stderr, "%s: warning: the default variant %s breaks a KC_REQUIRE\n", f->name, l.def);
    }
    if (!p)
        status = KC_EXIT_ERROR;
    else if (only && !shown) {
        fprintf(stderr, "kc variants: %s has no kernel '%s'\n", file, only);
        status = KC_EXIT_ERROR;
    }
    kc_ctx_free(&c);
    return status;
}
