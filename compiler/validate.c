/*
 * validate.c — kir's invariants, checked after every pass in debug builds
 * (and always by the tests). A failure is a bug in kc, never in the
 * user's kernel, and the message says which pass broke what.
 */
#include "ir_private.h"

typedef struct validator {
    kc_ir_module *m;
    kc_ir_func *fn;
    const char *pass;
    int loops, breakables;
    bool ok;
} validator;

#define BAD(V, loc, ...)                                                                          \
    do {                                                                                          \
        if ((V)->ok)                                                                              \
            kc_error_at((V)->m->diag, loc, "internal compiler error after kir pass '%s': %s",   \
                        (V)->pass, kc_arena_printf((V)->m->arena, __VA_ARGS__));                  \
        (V)->ok = false;                                                                          \
    } while (0)

static bool scalar_or_vector(const kc_type *t)
{
    return t && (t->kind == KC_TY_SCALAR || t->kind == KC_TY_VECTOR);
}

static void check_expr(validator *V, const kc_ir_expr *e, kc_loc loc)
{
    if (!e) {
        BAD(V, loc, "a missing expression");
        return;
    }
    if (!scalar_or_vector(e->type)) {
        BAD(V, loc, "an expression without a scalar or vector type");
        return;
    }
    if (e->a) check_expr(V, e->a, loc);
    if (e->b) check_expr(V, e->b, loc);
    if (e->c) check_expr(V, e->c, loc);
    for (int i = 0; i < e->nargs; i++)
        check_expr(V, e->args[i], loc);
    switch (e->kind) {
    case KIR_TUNABLE:
        if (V->m->specialized)
            BAD(V, loc, "tunable '%s' left after specialisation", e->name);
        break;
    case KIR_BINARY: {
        bool cmp = e->op >= KC_OP_LT && e->op <= KC_OP_NE;
        bool logic = e->op == KC_OP_LAND || e->op == KC_OP_LOR;
        if (!kc_type_equal(e->a->type, e->b->type))
            BAD(V, loc, "'%s' on different types", kc_op_text(e->op));
        if ((cmp || logic) && e->type->scalar != KC_S_BOOL)
            BAD(V, loc, "'%s' does not give bool", kc_op_text(e->op));
        if (!cmp && !logic && !kc_type_equal(e->type, e->a->type))
            BAD(V, loc, "'%s' changes the type", kc_op_text(e->op));
        break;
    }
    case KIR_LOAD:
        if (!e->a || e->a->type->kind != KC_TY_SCALAR || !kc_type_is_int(e->a->type))
            BAD(V, loc, "a load whose index is not an integer");
        if (!e->root.var && !e->root.param)
            BAD(V, loc, "a load with no memory");
        if (e->root.var && e->root.var->mem == KIR_MEM_REF && !V->fn->is_kernel)
            break;
        if (e->root.var && !e->root.var->is_array)
            BAD(V, loc, "a load from '%s', which is not an array", e->root.var->name);
        break;
    case KIR_SELECT:
        if (e->a->type->scalar != KC_S_BOOL || !kc_type_equal(e->b->type, e->c->type))
            BAD(V, loc, "a malformed select");
        break;
    default: break;
    }
}

static void check_block(validator *V, const kc_ir_block *b);

static void check_stmt(validator *V, const kc_ir_stmt *s)
{
    switch (s->kind) {
    case KIR_ASSIGN:
        check_expr(V, s->value, s->loc);
        if (s->value && s->lane < 0 && !kc_type_equal(s->var->type, s->value->type))
            BAD(V, s->loc, "'%s' assigned a value of another type", s->var->name);
        break;
    case KIR_STORE:
        if (s->index)
            check_expr(V, s->index, s->loc);
        check_expr(V, s->value, s->loc);
        break;
    case KIR_IF:
        check_expr(V, s->cond, s->loc);
        if (s->cond && s->cond->type->scalar != KC_S_BOOL)
            BAD(V, s->loc, "an if whose condition is not bool");
        check_block(V, &s->then);
        check_block(V, &s->els);
        break;
    case KIR_LOOP:
        check_block(V, &s->init);
        if (s->cond)
            check_expr(V, s->cond, s->loc);
        if (s->post)
            check_expr(V, s->post, s->loc);
        V->loops++, V->breakables++;
        check_block(V, &s->body);
        check_block(V, &s->step);
        V->loops--, V->breakables--;
        break;
    case KIR_SWITCH:
        check_expr(V, s->value, s->loc);
        V->breakables++;
        for (int i = 0; i < s->ncases; i++) {
            if (V->m->specialized && s->cases[i].nvalues && !s->cases[i].values)
                BAD(V, s->loc, "a case without values after specialisation");
            check_block(V, &s->cases[i].body);
        }
        V->breakables--;
        break;
    case KIR_BREAK:
        if (!V->breakables)
            BAD(V, s->loc, "break outside a loop or switch");
        break;
    case KIR_CONTINUE:
        if (!V->loops)
            BAD(V, s->loc, "continue outside a loop");
        break;
    case KIR_RETURN:
        if (s->value)
            check_expr(V, s->value, s->loc);
        if (V->fn->is_kernel && s->value)
            BAD(V, s->loc, "a kernel returning a value");
        break;
    case KIR_ATOMIC:
        check_expr(V, s->value, s->loc);
        if (s->cmp)
            check_expr(V, s->cmp, s->loc);
        break;
    case KIR_CALL:
        if (V->m->helpers.len == 0)
            BAD(V, s->loc, "a call to '%s' left after inlining", s->func->name);
        break;
    case KIR_BARRIER: break;
    }
}

static void check_block(validator *V, const kc_ir_block *b)
{
    for (int i = 0; i < b->len; i++) {
        if (!b->stmts[i]) {
            BAD(V, V->fn->loc, "a missing statement");
            continue;
        }
        check_stmt(V, b->stmts[i]);
    }
}

static void check_func(validator *V, kc_ir_func *f)
{
    V->fn = f;
    check_block(V, &f->body);
    if (V->m->specialized)
        for (int i = 0; i < f->vars.len; i++) {
            const kc_ir_var *v = f->vars.items[i];
            if (v->is_array && v->mem != KIR_MEM_REF && v->len <= 0)
                BAD(V, v->loc, "array '%s' without an extent after specialisation", v->name);
        }
}

bool kc_ir_validate(kc_ir_module *m, const char *after_pass)
{
    validator V = {m, NULL, after_pass, 0, 0, true};
    check_func(&V, m->kernel);
    for (int i = 0; i < m->helpers.len; i++)
        check_func(&V, m->helpers.items[i]);
    return V.ok;
}
