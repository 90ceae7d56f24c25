/*
 * sema_stmt.c — declarations and statements: initialisers, scopes, switch
 * and case rules, returns and fall-through.
 */
#include "sema_private.h"

#include <string.h>

/* ---- declarations -------------------------------------------------------------- */

/* Builds the type of a declarator from its element type and extents.
 * mode: IX_PARAMS for kernel buffers (extents over scalar parameters). An
 * empty [] is allowed only outermost, and only where allow_open. */
const kc_type *sema_declarator_type(sema *S, kc_sym *sym, ix_mode mode, bool allow_open, int init_count)
{
    const kc_type *t = sym->type;
    if (is_err(t))
        return t;
    if (t->scalar == KC_S_VOID) {
        ERR(S, sym->loc, "'%s' cannot have type void", sym->name);
        return kc_type_error();
    }
    kc_iexpr *lens[16];
    int n = sym->dim_exprs.len;
    if (n > 16) {
        ERR(S, sym->loc, "'%s' has more than 16 dimensions", sym->name);
        return kc_type_error();
    }
    for (int i = 0; i < n; i++) {
        kc_expr *d = sym->dim_exprs.items[i];
        lens[i] = NULL;
        if (d->kind == KC_E_INIT && !d->args.len && !d->type) { /* [] */
            if (i == 0 && allow_open)
                continue;
            if (i == 0 && init_count > 0) {
                lens[i] = kc_iexpr_const(&S->c->arena, init_count);
                continue;
            }
            ERR(S, d->loc, "the extent of '%s' is missing", sym->name);
            return kc_type_error();
        }
        d = sym->dim_exprs.items[i] = sema_check_value(S, d);
        if (is_err(d->type))
            return kc_type_error();
        if (!sema_int_scalar(d)) {
            ERR(S, d->loc, "an array extent must be an integer, not '%s'", tname(S, d->type));
            return kc_type_error();
        }
        lens[i] = sema_to_iexpr(S, d, mode, "an array extent");
        if (!lens[i])
            return kc_type_error();
        int64_t v;
        if (sema_iexpr_value(lens[i], &v) && v <= 0) {
            ERR(S, d->loc, "the extent of '%s' must be positive, not %lld", sym->name, (long long)v);
            return kc_type_error();
        }
        if (mode == IX_PARAMS)
            kc_vec_push(&S->c->arena, &sym->dims, lens[i]);
    }
    for (int i = n - 1; i >= 0; i--)
        t = kc_type_array(&S->c->arena, t, lens[i]);
    return t;
}


kc_expr *sema_check_scalar_init(sema *S, kc_sym *sym, const kc_type *t, kc_expr *init, bool need_const)
{
    if (init->kind == KC_E_INIT) {
        ERR(S, init->loc, "a braced list cannot initialise '%s' of type '%s'", sym->name, tname(S, t));
        return sema_fail(init);
    }
    init = sema_convert(S, sema_check_value(S, init), t, kc_arena_printf(&S->c->arena, "in the initialisation of '%s'", sym->name));
    if (need_const && !is_err(init->type) && !sema_fold(init).ok) {
        ERR(S, init->loc, "the value of constant '%s' must be a constant expression", sym->name);
        return sema_fail(init);
    }
    return init;
}

void sema_check_init_list(sema *S, kc_sym *sym, const kc_type *t, kc_expr *init, bool need_const)
{
    if (init->kind != KC_E_INIT) {
        ERR(S, init->loc, "array '%s' needs a braced list of values: {…}", sym->name);
        return;
    }
    int64_t len;
    if (sema_iexpr_value(t->len, &len) && init->args.len > len) {
        ERR(S, init->loc, "too many values for '%s': %d given, room for %lld", sym->name, init->args.len,
            (long long)len);
        return;
    }
    init->type = t;
    for (int i = 0; i < init->args.len; i++) {
        kc_expr *item = init->args.items[i];
        if (t->elem->kind == KC_TY_ARRAY) {
            if (item->kind != KC_E_INIT) {
                ERR(S, item->loc, "nest the braces to initialise '%s': {{…}, {…}}", sym->name);
                return;
            }
            sema_check_init_list(S, sym, t->elem, item, need_const);
        } else {
            init->args.items[i] = sema_check_scalar_init(S, sym, t->elem, item, need_const);
        }
    }
}

static void declare_local(sema *S, kc_sym *sym)
{
    kc_func *f = S->fn;
    bool shared = sym->storage == KC_STORE_SHARED;
    int count = sym->init && sym->init->kind == KC_E_INIT ? sym->init->args.len : 0;
    sym->type = sema_declarator_type(S, sym, IX_TUNABLES, false, count);
    if (shared) {
        if (!f->is_kernel)
            ERR(S, sym->loc, "KC_SHARED memory can only be declared in a kernel, not in helper '%s'", f->name),
                FIX(S, "declare it in the kernel and pass it to the helper as an array parameter");
        if (sym->init) {
            ERR(S, sym->init->loc, "KC_SHARED memory cannot have an initialiser");
            FIX(S, "fill it in the kernel, then call kc_barrier()");
        }
        if (sym->is_const)
            ERR(S, sym->loc, "KC_SHARED memory cannot be const");
        f->uses_shared = true;
    } else if (sym->init && !is_err(sym->type)) {
        if (sym->type->kind == KC_TY_ARRAY)
            sema_check_init_list(S, sym, sym->type, sym->init, false);
        else
            sym->init = sema_check_scalar_init(S, sym, sym->type, sym->init, false);
    } else if (sym->is_const && !sym->init) {
        ERR(S, sym->loc, "const '%s' needs a value", sym->name);
    }
    sym->index = f->nlocals++;
    sema_declare(S, sym);
}

/* ---- statements -------------------------------------------------------------- */

static void check_body(sema *S, kc_stmt *s)
{
    sema_push_scope(S);
    sema_check_stmt(S, s);
    sema_pop_scope(S);
}

static void check_case(sema *S, kc_stmt *s)
{
    if (!S->switches) {
        ERR(S, s->loc, "'%s' outside a switch", s->kind == KC_S_CASE ? "case" : "default");
        return;
    }
    if (S->block != S->switch_body) {
        ERR(S, s->loc, "a '%s' label must be directly inside its switch's braces",
            s->kind == KC_S_CASE ? "case" : "default");
        return;
    }
    if (s->kind == KC_S_DEFAULT) {
        if (S->seen_default)
            ERR(S, s->loc, "more than one 'default' in this switch");
        S->seen_default = true;
        return;
    }
    s->case_expr = sema_check_value(S, s->case_expr);
    if (is_err(s->case_expr->type))
        return;
    if (!sema_int_scalar(s->case_expr)) {
        ERR(S, s->case_expr->loc, "a case value must be an integer, not '%s'", tname(S, s->case_expr->type));
        return;
    }
    s->case_value = sema_to_iexpr(S, s->case_expr, IX_TUNABLES, "a case value");
    int64_t v, w;
    if (!s->case_value || !sema_iexpr_value(s->case_value, &v))
        return;
    for (int i = 0; i < S->cases->len; i++) {
        kc_stmt *o = S->cases->items[i];
        if (sema_iexpr_value(o->case_value, &w) && v == w) {
            ERR(S, s->loc, "duplicate case value %lld", (long long)v);
            kc_note_at(&S->c->diag, o->loc, "the first is here");
            return;
        }
    }
    kc_vec_push(&S->c->arena, S->cases, s);
}

static void check_switch(sema *S, kc_stmt *s)
{
    s->expr = sema_check_value(S, s->expr);
    if (!is_err(s->expr->type)) {
        if (!sema_int_scalar(s->expr) && s->expr->type->scalar != KC_S_BOOL)
            ERR(S, s->expr->loc, "switch needs an integer, not '%s'", tname(S, s->expr->type));
        else if (kc_scalar_bits(s->expr->type->scalar) != 32 || s->expr->type->scalar == KC_S_BOOL)
            s->expr = sema_convert(S, s->expr, T(KC_S_INT), "in switch");
    }
    if (s->then->kind != KC_S_BLOCK) {
        ERR(S, s->then->loc, "the body of a switch must be a block: switch (…) { case …: }");
        return;
    }
    kc_stmt *saved_body = S->switch_body;
    kc_vec *saved_cases = S->cases;
    bool saved_default = S->seen_default;
    kc_vec cases = {0};
    S->cases = &cases;
    S->seen_default = false;
    S->switch_body = s->then;
    S->switches++;
    check_body(S, s->then);
    S->switches--;
    S->cases = saved_cases;
    S->seen_default = saved_default;
    S->switch_body = saved_body;
}

static void check_return(sema *S, kc_stmt *s)
{
    kc_func *f = S->fn;
    if (f->ret->scalar == KC_S_VOID && f->ret->kind == KC_TY_SCALAR) {
        if (s->expr) {
            s->expr = sema_check(S, s->expr);
            ERR(S, s->loc, "%s '%s' returns no value", f->is_kernel ? "kernel" : "function", f->name);
            if (f->is_kernel)
                FIX(S, "write results to a buffer parameter");
        }
        return;
    }
    if (!s->expr) {
        ERR(S, s->loc, "'%s' must return a '%s'", f->name, tname(S, f->ret));
        return;
    }
    s->expr = sema_convert(S, sema_check_value(S, s->expr), f->ret, "in the return value");
}

void sema_check_stmt(sema *S, kc_stmt *s)
{
    if (kc_diag_too_many(&S->c->diag))
        return;
    switch (s->kind) {
    case KC_S_EXPR:
        s->expr = sema_check(S, s->expr);
        if (!is_err(s->expr->type) && s->expr->kind == KC_E_NAME && s->expr->sym &&
            s->expr->sym->storage == KC_STORE_BUFFER)
            ERR(S, s->expr->loc, "'%s' is a buffer; index it: %s[i]", s->expr->sym->name, s->expr->sym->name);
        return;
    case KC_S_DECL:
        for (int i = 0; i < s->body.len; i++)
            declare_local(S, s->body.items[i]);
        return;
    case KC_S_BLOCK: {
        kc_stmt *saved = S->block;
        S->block = s;
        sema_push_scope(S);
        for (int i = 0; i < s->body.len; i++)
            sema_check_stmt(S, s->body.items[i]);
        sema_pop_scope(S);
        S->block = saved;
        return;
    }
    case KC_S_IF:
        s->expr = sema_to_bool(S, sema_check_value(S, s->expr), "in 'if'");
        check_body(S, s->then);
        if (s->els)
            check_body(S, s->els);
        return;
    case KC_S_WHILE:
    case KC_S_DO:
        s->expr = sema_to_bool(S, sema_check_value(S, s->expr), s->kind == KC_S_DO ? "in 'do … while'" : "in 'while'");
        S->loops++;
        check_body(S, s->then);
        S->loops--;
        return;
    case KC_S_FOR:
        sema_push_scope(S);
        if (s->init)
            sema_check_stmt(S, s->init);
        if (s->expr)
            s->expr = sema_to_bool(S, sema_check_value(S, s->expr), "in the loop condition");
        if (s->step)
            s->step = sema_check(S, s->step);
        S->loops++;
        check_body(S, s->then);
        S->loops--;
        sema_pop_scope(S);
        return;
    case KC_S_SWITCH:
        check_switch(S, s);
        return;
    case KC_S_CASE:
    case KC_S_DEFAULT:
        check_case(S, s);
        return;
    case KC_S_BREAK:
        if (!S->loops && !S->switches)
            ERR(S, s->loc, "'break' outside a loop or switch");
        return;
    case KC_S_CONTINUE:
        if (!S->loops)
            ERR(S, s->loc, "'continue' outside a loop");
        return;
    case KC_S_RETURN:
        check_return(S, s);
        return;
    case KC_S_EMPTY:
        return;
    }
}

/* Can control reach the end of s? Conservative: loops with a constant true
 * condition and no break do not fall through; everything else may. */
static bool has_break(const kc_stmt *s, int depth)
{
    if (!s)
        return false;
    switch (s->kind) {
    case KC_S_BREAK: return depth == 0;
    case KC_S_BLOCK:
        for (int i = 0; i < s->body.len; i++)
            if (has_break(s->body.items[i], depth))
                return true;
        return false;
    case KC_S_IF: return has_break(s->then, depth) || has_break(s->els, depth);
    case KC_S_FOR: case KC_S_WHILE: case KC_S_DO: case KC_S_SWITCH: return has_break(s->then, depth + 1);
    default: return false;
    }
}

bool sema_falls_through(const kc_stmt *s)
{
    if (!s)
        return true;
    switch (s->kind) {
    case KC_S_RETURN: return false;
    case KC_S_BLOCK:
        for (int i = 0; i < s->body.len; i++)
            if (!sema_falls_through(s->body.items[i]))
                return false;
        return true;
    case KC_S_IF: return !s->els || sema_falls_through(s->then) || sema_falls_through(s->els);
    case KC_S_WHILE:
    case KC_S_FOR: {
        cval v = sema_fold(s->expr);
        bool forever = !s->expr || (v.ok && (v.is_float ? v.f != 0 : v.i != 0));
        return !forever || has_break(s->then, 0);
    }
    case KC_S_DO: return sema_falls_through(s->then) || has_break(s->then, 0);
    case KC_S_SWITCH: {
        /* the end is reached without a default, through a break, or by
         * running off the statements after the last label */
        const kc_stmt *body = s->then;
        if (!body || body->kind != KC_S_BLOCK || has_break(body, 0))
            return true;
        bool has_default = false;
        int last_label = -1;
        for (int i = 0; i < body->body.len; i++) {
            const kc_stmt *st = body->body.items[i];
            if (st->kind == KC_S_DEFAULT)
                has_default = true;
            if (st->kind == KC_S_CASE || st->kind == KC_S_DEFAULT)
                last_label = i;
        }
        if (!has_default)
            return true;
        for (int i = last_label + 1; i < body->body.len; i++)
            if (!sema_falls_through(body->body.items[i]))
                return false;
        return true;
    }
    default: return true;
    }
}
