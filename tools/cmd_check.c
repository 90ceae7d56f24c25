/*
 * cmd_check.c — `kc check FILE…`: the front end alone.
 */
#include "kc_dsl.h"
#include "kc_ir.h"
#include "kc_tools.h"

int kc_cmd_check(int argc, char **argv)
{
    kc_args a = {"check", argc, argv, 1, NULL, NULL};
    int nfiles = 0, bad = 0, r;
    while ((r = kc_next_arg(&a, NULL, 0)) != -2) {
        if (r == -3)
            return KC_EXIT_USAGE;
        nfiles++;
        kc_ctx c;
        kc_ctx_init(&c, stderr);
        kc_program *p = kc_dsl_parse(&c, a.positional);
        if (!p) {
            fprintf(stderr, "%s: %d error%s\n", a.positional, c.diag.nerrors, c.diag.nerrors == 1 ? "" : "s");
            bad++;
        } else {
            int kernels = 0;
            long variants = 0;
            for (int i = 0; i < p->funcs.len; i++) {
                const kc_func *f = p->funcs.items[i];
                if (!f->is_kernel)
                    continue;
                kernels++;
                variants += kc_ir_each_variant(&c.arena, p, f, NULL, NULL);
            }
            printf("%s: ok (%d kernel%s, %d tunable%s, %ld variant%s)\n", a.positional, kernels,
                   kernels == 1 ? "" : "s", p->tunables.len, p->tunables.len == 1 ? "" : "s", variants,
                   variants == 1 ? "" : "s");
        }
        kc_ctx_free(&c);
    }
    if (!nfiles)
        return kc_usage_error("check", "no files given");
    return bad ? KC_EXIT_ERROR : KC_EXIT_OK;
}
