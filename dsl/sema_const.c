/*
 * sema_const.c — constant folding (case labels, exact implicit conversions,
 * dimensions) and the integer expressions of sizes, grids and constraints.
 */
#include "sema_private.h"

#include <math.h>
#include <string.h>

/* Folds an expression of literals and file-scope constants (not tunables:
 * their value depends on the variant). Used for case labels, exactness of
 * implicit conversions, and dimension arguments. */
cval sema_fold(const kc_expr *e)
{
    cval r = {0};
    if (!e || is_err(e->type))
        return r;
    switch (e->kind) {
    case KC_E_INT:
    case KC_E_BOOL:
        r.ok = true, r.i = (int64_t)e->ival;
        return r;
    case KC_E_FLOAT:
        r.ok = r.is_float = true, r.f = e->fval;
        return r;
    case KC_E_NAME:
        if (e->sym && e->sym->kind == KC_SYM_CONST && e->sym->type->kind != KC_TY_ARRAY && e->sym->init) {
            r.ok = true;
            r.is_float = kc_type_is_float(e->sym->type);
            r.i = e->sym->const_ival, r.f = e->sym->const_fval;
        }
        return r;
    case KC_E_CAST: {
        cval a = sema_fold(e->a);
        if (!a.ok || e->type->kind != KC_TY_SCALAR)
            return r;
        r.ok = true;
        if (kc_type_is_float(e->type)) {
            r.is_float = true;
            r.f = a.is_float ? a.f : (double)a.i;
            if (e->type->scalar == KC_S_FLOAT)
                r.f = (float)r.f;
        } else if (a.is_float) {
            if (!(a.f > -9.2e18 && a.f < 9.2e18))
                return (cval){0};
            r.i = (int64_t)a.f;
        } else {
            r.i = a.i;
        }
        if (e->type->scalar == KC_S_INT)
            r.i = (int32_t)r.i;
        else if (e->type->scalar == KC_S_UINT)
            r.i = (uint32_t)r.i;
        else if (e->type->scalar == KC_S_BOOL)
            r.i = r.is_float ? r.f != 0 : r.i != 0, r.is_float = false;
        return r;
    }
    case KC_E_UNARY: {
        cval a = sema_fold(e->a);
        if (!a.ok)
            return r;
        r = a;
        if (e->op == KC_OP_NEG) {
            if (a.is_float)
                r.f = -a.f;
            else
                r.i = (int64_t)(0 - (uint64_t)a.i);
        } else if (e->op == KC_OP_NOT) {
            r.is_float = false, r.i = a.is_float ? a.f == 0 : a.i == 0;
        } else if (e->op == KC_OP_BNOT && !a.is_float) {
            r.i = ~a.i;
        } else {
            return (cval){0};
        }
        return r;
    }
    case KC_E_BINARY: {
        cval a = sema_fold(e->a), b = sema_fold(e->b);
        if (!a.ok || !b.ok)
            return r;
        r.ok = true;
        if (a.is_float || b.is_float) {
            double x = a.is_float ? a.f : (double)a.i, y = b.is_float ? b.f : (double)b.i;
            r.is_float = kc_type_is_float(e->type);
            switch (e->op) {
            case KC_OP_ADD: r.f = x + y; break;
            case KC_OP_SUB: r.f = x - y; break;
            case KC_OP_MUL: r.f = x * y; break;
            case KC_OP_DIV: r.f = x / y; break;
            case KC_OP_LT: r.i = x < y; break;
            case KC_OP_LE: r.i = x <= y; break;
            case KC_OP_GT: r.i = x > y; break;
            case KC_OP_GE: r.i = x >= y; break;
            case KC_OP_EQ: r.i = x == y; break;
            case KC_OP_NE: r.i = x != y; break;
            default: return (cval){0};
            }
            if (r.is_float && e->type->scalar == KC_S_FLOAT)
                r.f = (float)r.f;
            return r;
        }
        int64_t args[2] = {a.i, b.i}, out;
        if (!kc_iexpr_apply(kc_iexpr_op_of(e->op), args, &out, NULL, 0))
            return (cval){0};
        r.i = out;
        return r;
    }
    default:
        return r;
    }
}

/* Does a constant convert to type `to` without changing its value? */
bool sema_const_fits(cval v, const kc_type *to)
{
    kc_scalar s = to->scalar;
    if (kc_scalar_is_float(s)) {
        double x = v.is_float ? v.f : (double)v.i;
        if (!v.is_float && (double)(int64_t)x != (double)v.i)
            return false;
        if (s == KC_S_FLOAT)
            return isnan(x) || (double)(float)x == x;
        /* half: 11 significant bits, exponent -24 .. 15 */
        if (isnan(x) || isinf(x) || x == 0)
            return true;
        double ax = fabs(x);
        if (ax > 65504)
            return false;
        int ex;
        frexp(ax, &ex);
        double q = ldexp(1, ex - 11 < -24 ? -24 : ex - 11);
        return fmod(ax, q) == 0;
    }
    if (v.is_float)
        return false;
    switch (s) {
    case KC_S_BOOL: return v.i == 0 || v.i == 1;
    case KC_S_INT: return v.i >= INT32_MIN && v.i <= INT32_MAX;
    case KC_S_UINT: return v.i >= 0 && v.i <= (int64_t)UINT32_MAX;
    case KC_S_LONG: return true;
    case KC_S_ULONG: return v.i >= 0;
    default: return false;
    }
}

/* Where an expression starts in the source: the best place to point at
 * when the whole expression is wrong (its node's own location is its
 * operator). */
kc_loc sema_start_of(const kc_expr *e)
{
    while ((e->kind == KC_E_BINARY || e->kind == KC_E_ASSIGN || e->kind == KC_E_COND || e->kind == KC_E_COMMA ||
            (e->kind == KC_E_INCDEC && e->is_post) || (e->kind == KC_E_CAST && e->implicit)) &&
           e->a)
        e = e->a;
    return e->loc;
}

static bool grid_operator(const kc_expr *e)
{
    switch (e->kind) {
    case KC_E_INT: case KC_E_NAME: case KC_E_CAST: return true;
    case KC_E_UNARY: return e->op == KC_OP_NEG;
    case KC_E_BINARY:
        return e->op == KC_OP_ADD || e->op == KC_OP_SUB || e->op == KC_OP_MUL || e->op == KC_OP_DIV ||
               e->op == KC_OP_MOD || e->op == KC_OP_SHL || e->op == KC_OP_SHR;
    case KC_E_CALL: return e->builtin == KC_B_MIN || e->builtin == KC_B_MAX || e->builtin == KC_B_CDIV;
    default: return false;
    }
}

/* Turns an AST integer expression into a kc_iexpr. Tunables and constants
 * are always allowed; integer scalar parameters only in IX_PARAMS mode. */
kc_iexpr *sema_to_iexpr(sema *S, const kc_expr *e, ix_mode mode, const char *what)
{
    kc_arena *a = &S->c->arena;
    if (is_err(e->type))
        return NULL;
    cval v = sema_fold(e);
    if (v.ok && !v.is_float)
        return kc_iexpr_const(a, v.i);
    if (mode == IX_GRID && !grid_operator(e)) {
        ERR(S, e->loc, "KC_GRID allows only + - * / %% << >>, min, max and kc_cdiv");
        if (e->kind == KC_E_COND)
            FIX(S, "write min(a, b) or max(a, b) instead of a comparison");
        return NULL;
    }
    switch (e->kind) {
    case KC_E_NAME:
        if (e->sym && e->sym->kind == KC_SYM_TUNABLE)
            return kc_iexpr_name(a, e->sym->name);
        if (e->sym && e->sym->kind == KC_SYM_PARAM && mode != IX_TUNABLES && !e->sym->is_buffer &&
            kc_type_is_int(e->sym->type) && e->sym->type->kind == KC_TY_SCALAR)
            return kc_iexpr_name(a, e->sym->name);
        if (e->sym && e->sym->is_buffer)
            ERR(S, e->loc, "%s cannot use buffer '%s'; it may use integer scalar parameters, tunables and constants",
                what, e->name);
        else if (mode == IX_TUNABLES && e->sym && e->sym->kind != KC_SYM_FUNC)
            ERR(S, e->loc, "%s must be known when the kernel is compiled: constants and tunables only, and '%s' is a %s",
                what, e->name, e->sym->kind == KC_SYM_PARAM ? "parameter" : "variable");
        else
            ERR(S, e->loc, "%s may use only integer scalar parameters, tunables and constants; '%s' is not one", what,
                e->name);
        return NULL;
    case KC_E_CAST:
        if (e->implicit || kc_type_is_int(e->type))
            return sema_to_iexpr(S, e->a, mode, what);
        break;
    case KC_E_UNARY: {
        kc_iexpr *x = sema_to_iexpr(S, e->a, mode, what);
        if (!x)
            return NULL;
        return kc_iexpr_make(a, kc_iexpr_op_of(e->op), x, NULL, NULL);
    }
    case KC_E_BINARY: {
        kc_iexpr *x = sema_to_iexpr(S, e->a, mode, what), *y = sema_to_iexpr(S, e->b, mode, what);
        return x && y ? kc_iexpr_make(a, kc_iexpr_op_of(e->op), x, y, NULL) : NULL;
    }
    case KC_E_COND: {
        kc_iexpr *x = sema_to_iexpr(S, e->a, mode, what), *y = sema_to_iexpr(S, e->b, mode, what),
                 *z = sema_to_iexpr(S, e->c, mode, what);
        return x && y && z ? kc_iexpr_make(a, KC_IX_SELECT, x, y, z) : NULL;
    }
    case KC_E_CALL:
        if (e->builtin == KC_B_MIN || e->builtin == KC_B_MAX || e->builtin == KC_B_CDIV) {
            kc_iexpr *x = sema_to_iexpr(S, e->args.items[0], mode, what);
            kc_iexpr *y = sema_to_iexpr(S, e->args.items[1], mode, what);
            kc_iexpr_op op = e->builtin == KC_B_MIN ? KC_IX_MIN : e->builtin == KC_B_MAX ? KC_IX_MAX : KC_IX_CDIV;
            return x && y ? kc_iexpr_make(a, op, x, y, NULL) : NULL;
        }
        break;
    default:
        break;
    }
    ERR(S, e->loc, "%s must be an integer expression of %s, tunables and constants", what,
        mode == IX_PARAMS ? "integer parameters" : "constants");
    FIX(S, "it may use + - * / %% << >>, comparisons, ?:, min, max and kc_cdiv");
    return NULL;
}

/* Value of an iexpr that uses no names, for early checks; false if it
 * depends on a tunable. */
bool sema_iexpr_value(const kc_iexpr *e, int64_t *out)
{
    return e && kc_iexpr_eval(e, NULL, NULL, out, NULL, 0);
}

/* Records that the current function uses a tunable. */
void sema_use_tunable(sema *S, kc_tunable *t)
{
    if (!S->fn)
        return;
    for (int i = 0; i < S->fn->tunables.len; i++)
        if (S->fn->tunables.items[i] == t)
            return;
    kc_vec_push(&S->c->arena, &S->fn->tunables, t);
}
