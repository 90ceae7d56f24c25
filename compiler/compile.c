/*
 * compile.c — the kir pipeline, top to bottom (STYLE.md §8).
 */
#include "ir_private.h"

#include "kc_dsl.h"

#include <string.h>

const char *const kc_ir_pass_names[] = {"lower", "specialize", "inline", "fold", "unroll", "dce", "bounds", NULL};

#ifndef NDEBUG
#define KC_IR_VALIDATE 1
#else
#define KC_IR_VALIDATE 0
#endif

kc_ir_module *kc_ir_compile(kc_arena *a, kc_diag *diag, const kc_program *prog, const kc_func *kernel,
                            const kc_ir_binding *b, const char *stop_after)
{
    return kc_ir_compile_with(a, diag, prog, kernel, b, stop_after, NULL);
}

kc_ir_module *kc_ir_compile_with(kc_arena *a, kc_diag *diag, const kc_program *prog, const kc_func *kernel,
                                 const kc_ir_binding *b, const char *stop_after, const kc_ir_options *o)
{
    kc_ir_module *m = kc_ir_lower(a, diag, prog, kernel, o);
    if (!m)
        return NULL;
#define PASS(name, call)                                                                          \
    do {                                                                                          \
        if (!(call))                                                                              \
            return NULL;                                                                          \
        if (KC_IR_VALIDATE && !kc_ir_validate(m, name))                                           \
            return NULL;                                                                          \
        if (stop_after && strcmp(stop_after, name) == 0)                                          \
            return m;                                                                             \
    } while (0)
    PASS("lower", true);
    PASS("specialize", kc_ir_specialize(m, b));
    PASS("inline", kc_ir_inline(m));
    PASS("fold", kc_ir_fold(m));
    PASS("unroll", kc_ir_unroll(m));
    PASS("dce", kc_ir_fold(m) && kc_ir_dce(m));
    if (o && o->bounds_checks)
        PASS("bounds", kc_ir_check_bounds(m));
#undef PASS
    return m;
}
