/*
 * test_libm_dsl.c — compiler/libm/kc_math.kc as kc's own front end sees
 * it, where every program sees it: built into kc and read before the
 * user's file (here, an empty one). The library is accepted, every __kc_ entry point exists with the
 * signature the compiler will call, and the whole file keeps the rules of
 * the library (docs/math.md): no float division, no fmaf, no math
 * built-in but the exact ones, no 64-bit or half types, and every
 * function and constant named with the reserved __kc_ prefix.
 */
#include "kc_test.h"

#include "kc_dsl.h"

static kc_ctx ctx;
static kc_program *prog;

static int parse(void **state)
{
    (void)state;
    kc_ctx_init(&ctx, stderr);
    prog = kc_dsl_parse_text(&ctx, "empty.kc", "", 0);
    return 0;
}

static int release(void **state)
{
    (void)state;
    kc_ctx_free(&ctx);
    return 0;
}

static void accepted(void **state)
{
    (void)state;
    assert_non_null(prog);
}

static void entry_points(void **state)
{
    (void)state;
    static const char *unary[] = {"sqrtf", "rsqrtf", "expf", "exp2f", "logf", "log2f",
                                  "sinf",  "cosf",   "tanf", "tanhf", "erff", "log10f"};
    const kc_type *f32 = kc_type_scalar(KC_S_FLOAT);
    assert_non_null(prog);
    for (size_t i = 0; i <= sizeof unary / sizeof unary[0]; i++) {
        const char *base = i < sizeof unary / sizeof unary[0] ? unary[i] : "powf";
        char name[32];
        snprintf(name, sizeof name, "__kc_%s", base);
        const kc_func *f = kc_program_func(prog, name);
        if (!f)
            fail_msg("%s is missing", name);
        int want_params = strcmp(base, "powf") == 0 ? 2 : 1;
        if (!f->is_static || f->is_kernel || !f->defined || !kc_type_equal(f->ret, f32) ||
            f->params.len != want_params)
            fail_msg("%s must be 'static float %s(float%s)'", name, name, want_params == 2 ? ", float" : "");
        for (int p = 0; p < f->params.len; p++)
            if (!kc_type_equal(KC_VEC_AT(f->params, kc_sym, p)->type, f32))
                fail_msg("parameter %d of %s is not a float", p + 1, name);
        /* the built-in it stands for exists and has the same arity */
        int b = kc_builtin_lookup(base);
        assert_true(b >= 0);
        assert_int_equal(kc_builtins[b].nargs, want_params);
    }
}

/* ---- the rules, checked on the typed AST --------------------------------------- */

static bool allowed_builtin(int b)
{
    switch (b) {
    case KC_B_FABS:
    case KC_B_FLOOR:
    case KC_B_CEIL:
    case KC_B_COPYSIGN:
    case KC_B_FMIN:
    case KC_B_FMAX:
    case KC_B_MIN:
    case KC_B_MAX:
    case KC_B_AS_UINT:
    case KC_B_AS_INT:
    case KC_B_AS_FLOAT:
    case KC_B_MUL_HI: return true;
    default: return false;
    }
}

static void check_type(const kc_type *t, const char *where)
{
    if (!t)
        return;
    t = kc_type_base(t);
    if (t->scalar == KC_S_LONG || t->scalar == KC_S_ULONG || t->scalar == KC_S_HALF)
        fail_msg("%s: type '%s' is not allowed in the library", where, kc_scalar_name(t->scalar));
}

static void check_expr(const kc_expr *e, const char *fn)
{
    if (!e)
        return;
    char where[160];
    snprintf(where, sizeof where, "%s, line %d", fn, e->loc.line);
    check_type(e->type, where);
    if (e->kind == KC_E_BINARY && e->op == KC_OP_DIV && kc_type_is_float(e->type))
        fail_msg("%s: float division (OpFDiv is 2.5 ulp on Vulkan)", where);
    if (e->kind == KC_E_ASSIGN && e->has_op && e->op == KC_OP_DIV && kc_type_is_float(e->type))
        fail_msg("%s: float division (/=)", where);
    if (e->kind == KC_E_CALL && e->builtin >= 0 && !allowed_builtin(e->builtin))
        fail_msg("%s: built-in '%s' is not allowed in the library", where, kc_builtins[e->builtin].name);
    if (e->kind == KC_E_CALL && e->builtin < 0 && e->func && strncmp(e->func->name, "__kc_", 5) != 0)
        fail_msg("%s: calls '%s', which is not a library function", where, e->func->name);
    check_expr(e->a, fn);
    check_expr(e->b, fn);
    check_expr(e->c, fn);
    for (int i = 0; i < e->args.len; i++)
        check_expr(e->args.items[i], fn);
}

static void check_stmt(const kc_stmt *s, const char *fn)
{
    if (!s)
        return;
    check_expr(s->expr, fn);
    check_expr(s->step, fn);
    check_stmt(s->init, fn);
    check_stmt(s->then, fn);
    check_stmt(s->els, fn);
    for (int i = 0; i < s->body.len; i++) {
        if (s->kind == KC_S_DECL) {
            const kc_sym *v = s->body.items[i];
            check_type(v->type, fn);
            check_expr(v->init, fn);
        } else {
            check_stmt(s->body.items[i], fn);
        }
    }
}

static void rules(void **state)
{
    (void)state;
    assert_non_null(prog);
    for (int i = 0; i < prog->funcs.len; i++) {
        const kc_func *f = prog->funcs.items[i];
        if (strncmp(f->name, "__kc_", 5) != 0)
            fail_msg("function '%s' lacks the reserved __kc_ prefix", f->name);
        if (!f->is_static || f->is_kernel)
            fail_msg("'%s' must be a static helper", f->name);
        check_type(f->ret, f->name);
        for (int p = 0; p < f->params.len; p++)
            check_type(KC_VEC_AT(f->params, kc_sym, p)->type, f->name);
        check_stmt(f->body, f->name);
    }
    for (int i = 0; i < prog->consts.len; i++) {
        const kc_sym *c = prog->consts.items[i];
        if (strncmp(c->name, "__kc_", 5) != 0)
            fail_msg("constant '%s' lacks the reserved __kc_ prefix", c->name);
        check_type(c->type, c->name);
    }
    assert_int_equal(prog->tunables.len, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(accepted),
        cmocka_unit_test(entry_points),
        cmocka_unit_test(rules),
    };
    return cmocka_run_group_tests(tests, parse, release);
}
