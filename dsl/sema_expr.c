/*
 * sema_expr.c — conversions (C's usual arithmetic conversions, with a cast
 * needed where information can be lost) and the typing of expressions.
 */
#include "sema_private.h"

#include <math.h>
#include <string.h>

/* ---- conversions ------------------------------------------------------------- */

static int rank(kc_scalar s)
{
    switch (s) {
    case KC_S_BOOL: return 0;
    case KC_S_INT: return 1;
    case KC_S_UINT: return 2;
    case KC_S_LONG: return 3;
    case KC_S_ULONG: return 4;
    case KC_S_HALF: return 5;
    case KC_S_FLOAT: return 6;
    default: return -1;
    }
}

/* Can a value of scalar `from` convert to `to` without a cast? */
static bool scalar_implicit(kc_scalar from, kc_scalar to)
{
    if (from == to || from == KC_S_BOOL || to == KC_S_BOOL)
        return true;
    bool ff = kc_scalar_is_float(from), tf = kc_scalar_is_float(to);
    if (ff && !tf)
        return false; /* float to integer */
    if (ff && tf)
        return rank(to) > rank(from); /* half to float only */
    if (tf) /* integer to float: int and uint to float, none to half */
        return to == KC_S_FLOAT && kc_scalar_bits(from) == 32;
    /* integer to integer: widen, or flip sign at the same width (as C) */
    return kc_scalar_bits(to) >= kc_scalar_bits(from);
}

static bool implicit_ok(const kc_expr *e, const kc_type *to)
{
    const kc_type *from = e->type;
    if (from->kind == KC_TY_ARRAY || to->kind == KC_TY_ARRAY || to->scalar == KC_S_VOID ||
        from->scalar == KC_S_VOID)
        return false;
    if (from->kind == KC_TY_VECTOR && (to->kind != KC_TY_VECTOR || to->lanes != from->lanes))
        return false;
    if (scalar_implicit(from->scalar, to->scalar))
        return true;
    cval v = sema_fold(e);
    return v.ok && from->kind == KC_TY_SCALAR && sema_const_fits(v, to);
}

/* Converts e to `to`, or reports why it cannot. */
kc_expr *sema_convert(sema *S, kc_expr *e, const kc_type *to, const char *context)
{
    if (is_err(e->type) || is_err(to) || kc_type_equal(e->type, to))
        return e;
    if (implicit_ok(e, to))
        return sema_mk_cast(S, e, to);
    if (e->type->kind == KC_TY_ARRAY || to->kind == KC_TY_ARRAY) {
        ERR(S, sema_start_of(e), "cannot use %s '%s' as '%s' %s",
            e->type->kind == KC_TY_ARRAY ? "array" : "value", tname(S, e->type), tname(S, to), context);
        if (e->type->kind == KC_TY_ARRAY)
            FIX(S, "index it to get an element");
    } else if (e->type->kind != to->kind && to->kind == KC_TY_SCALAR) {
        ERR(S, sema_start_of(e), "cannot convert vector '%s' to '%s' %s", tname(S, e->type), tname(S, to), context);
        FIX(S, "take a component, such as .x");
    } else {
        ERR(S, sema_start_of(e), "converting '%s' to '%s' %s can lose information", tname(S, e->type),
            tname(S, to), context);
        FIX(S, "write the conversion out: (%s)(…)", tname(S, to));
    }
    e->type = kc_type_error();
    return e;
}

kc_expr *sema_to_bool(sema *S, kc_expr *e, const char *context)
{
    if (is_err(e->type))
        return e;
    if (e->type->kind != KC_TY_SCALAR || e->type->scalar == KC_S_VOID) {
        ERR(S, sema_start_of(e), "a %s '%s' cannot be used as a condition %s",
            e->type->kind == KC_TY_ARRAY ? "array" : e->type->kind == KC_TY_VECTOR ? "vector" : "value of type",
            tname(S, e->type), context);
        e->type = kc_type_error();
        return e;
    }
    return e->type->scalar == KC_S_BOOL ? e : sema_mk_cast(S, e, T(KC_S_BOOL));
}

/* The usual arithmetic conversions of C, for two scalar types. */
static kc_scalar common_scalar(kc_scalar a, kc_scalar b)
{
    if (a == KC_S_BOOL)
        a = KC_S_INT;
    if (b == KC_S_BOOL)
        b = KC_S_INT;
    return rank(a) >= rank(b) ? a : b;
}

/* Common type of two operands, by C's usual arithmetic conversions (so
 * `h * 2` is half and `h * 2.0f` is float); a scalar meets a vector by
 * broadcasting. */
static const kc_type *common_type(sema *S, kc_expr *a, kc_expr *b, kc_loc loc, const char *op)
{
    const kc_type *ta = a->type, *tb = b->type;
    if (is_err(ta) || is_err(tb))
        return kc_type_error();
    if (ta->kind == KC_TY_ARRAY || tb->kind == KC_TY_ARRAY || ta->scalar == KC_S_VOID ||
        tb->scalar == KC_S_VOID) {
        const kc_type *bad = ta->kind == KC_TY_ARRAY || ta->scalar == KC_S_VOID ? ta : tb;
        const kc_expr *arr = ta->kind == KC_TY_ARRAY ? a : b;
        bool buffer = bad->kind == KC_TY_ARRAY && arr->kind == KC_E_NAME && arr->sym && arr->sym->is_buffer;
        if (buffer && (strcmp(op, "+") == 0 || strcmp(op, "-") == 0)) {
            ERR(S, loc, "pointer arithmetic is not in the language: '%s' is a buffer", arr->sym->name);
            FIX(S, "index it with the offset instead: %s[i + k]", arr->sym->name);
        } else {
            ERR(S, loc, "operator '%s' cannot take %s '%s'", op, bad->kind == KC_TY_ARRAY ? "array" : "a value of type",
                tname(S, bad));
            if (bad->kind == KC_TY_ARRAY)
                FIX(S, "index it to get an element");
        }
        return kc_type_error();
    }
    if (ta->kind == KC_TY_VECTOR && tb->kind == KC_TY_VECTOR && ta->lanes != tb->lanes) {
        ERR(S, loc, "operator '%s' cannot mix '%s' and '%s'", op, tname(S, ta), tname(S, tb));
        return kc_type_error();
    }
    int lanes = ta->lanes > tb->lanes ? ta->lanes : tb->lanes;
    return kc_type_vector(common_scalar(ta->scalar, tb->scalar), lanes);
}

/* ---- expressions ------------------------------------------------------------------ */


kc_expr *sema_fail(kc_expr *e)
{
    e->type = kc_type_error();
    return e;
}

/* Is e something that can be assigned to? Reports why not. */
static bool check_lvalue(sema *S, const kc_expr *e, const char *what)
{
    if (is_err(e->type))
        return false;
    const kc_expr *root = e;
    while (root->kind == KC_E_INDEX || root->kind == KC_E_MEMBER)
        root = root->a;
    if (root->kind != KC_E_NAME || !root->sym) {
        ERR(S, sema_start_of(e), "cannot %s this expression: it is not a variable or an element", what);
        return false;
    }
    kc_sym *sym = root->sym;
    if (sym->kind == KC_SYM_TUNABLE || sym->kind == KC_SYM_CONST || sym->kind == KC_SYM_FUNC) {
        ERR(S, root->loc, "cannot %s '%s': it is a %s", what, sym->name,
            sym->kind == KC_SYM_TUNABLE ? "tunable (a compile-time constant)" : sym->kind == KC_SYM_CONST ? "constant" : "function");
        return false;
    }
    if (sym->is_const) {
        ERR(S, root->loc, "cannot %s '%s': it is declared const", what, sym->name);
        if (sym->is_buffer)
            FIX(S, "remove 'const' from the parameter to make the buffer writable");
        return false;
    }
    if (e->type->kind == KC_TY_ARRAY) {
        ERR(S, root->loc, "cannot %s a whole array", what);
        FIX(S, "assign element by element in a loop");
        return false;
    }
    return true;
}

static kc_expr *check_name(sema *S, kc_expr *e)
{
    bool global;
    kc_sym *sym = sema_lookup(S, e->name, &global);
    if (!sym) {
        if (kc_builtin_lookup(e->name) >= 0) {
            ERR(S, e->loc, "'%s' is a built-in function; call it", e->name);
            return sema_fail(e);
        }
        ERR(S, e->loc, "'%s' is not declared", e->name);
        return sema_fail(e);
    }
    if (sym->kind == KC_SYM_FUNC) {
        ERR(S, e->loc, "'%s' is a function; call it", e->name);
        FIX(S, "function pointers are not in the language");
        return sema_fail(e);
    }
    sym->used = true;
    e->sym = sym;
    if (sym->kind == KC_SYM_TUNABLE) {
        sema_use_tunable(S, sym->tunable);
        e->type = T(KC_S_INT);
        return e;
    }
    e->type = sym->type;
    return e;
}

static int lane_of(const char *name)
{
    if (!name || name[0] == 0 || name[1] != 0)
        return -1;
    switch (name[0]) {
    case 'x': case 'r': return 0;
    case 'y': case 'g': return 1;
    case 'z': case 'b': return 2;
    case 'w': case 'a': return 3;
    default: return -1;
    }
}

static kc_expr *check_member(sema *S, kc_expr *e)
{
    e->a = sema_check(S, e->a);
    if (is_err(e->a->type) || !e->name)
        return sema_fail(e);
    if (e->a->type->kind != KC_TY_VECTOR) {
        ERR(S, e->loc, "'.%s' needs a vector, but this is '%s'", e->name, tname(S, e->a->type));
        return sema_fail(e);
    }
    e->lane = lane_of(e->name);
    if (e->lane < 0 || e->lane >= e->a->type->lanes) {
        ERR(S, e->loc, "'%s' has no component '%s'", tname(S, e->a->type), e->name);
        FIX(S, "a %s has %s", tname(S, e->a->type), e->a->type->lanes == 2 ? ".x and .y" : ".x, .y, .z and .w");
        return sema_fail(e);
    }
    e->type = kc_type_scalar(e->a->type->scalar);
    return e;
}

static kc_expr *check_index(sema *S, kc_expr *e)
{
    e->a = sema_check(S, e->a);
    e->b = sema_check(S, e->b);
    if (is_err(e->a->type))
        return sema_fail(e);
    if (e->a->type->kind != KC_TY_ARRAY) {
        ERR(S, e->loc, "cannot index '%s': it is not an array or a buffer", tname(S, e->a->type));
        return sema_fail(e);
    }
    if (!is_err(e->b->type)) {
        if (!kc_type_is_int(e->b->type) || e->b->type->kind != KC_TY_SCALAR) {
            ERR(S, e->b->loc, "an index must be an integer, not '%s'", tname(S, e->b->type));
            if (kc_type_is_float(e->b->type))
                FIX(S, "convert it: (int)(…)");
            return sema_fail(e);
        }
        cval v = sema_fold(e->b);
        int64_t n;
        if (v.ok && (v.i < 0 || (sema_iexpr_value(e->a->type->len, &n) && v.i >= n))) {
            ERR(S, e->b->loc, "index %lld is out of bounds", (long long)v.i);
            return sema_fail(e);
        }
    }
    e->type = e->a->type->elem;
    return e;
}

static kc_expr *check_unary(sema *S, kc_expr *e)
{
    e->a = sema_check(S, e->a);
    const kc_type *t = e->a->type;
    if (is_err(t))
        return sema_fail(e);
    if (e->op == KC_OP_NOT) {
        e->a = sema_to_bool(S, e->a, "for '!'");
        e->type = T(KC_S_BOOL);
        return e;
    }
    if (t->kind == KC_TY_ARRAY || !kc_type_is_arith(t) ? t->scalar != KC_S_BOOL || t->kind == KC_TY_ARRAY : false) {
        ERR(S, e->loc, "operator '%s' cannot take '%s'", kc_op_text(e->op), tname(S, t));
        return sema_fail(e);
    }
    if (e->op == KC_OP_BNOT && !kc_type_is_int(t) && t->scalar != KC_S_BOOL) {
        ERR(S, e->loc, "operator '~' needs an integer, not '%s'", tname(S, t));
        return sema_fail(e);
    }
    if (t->scalar == KC_S_BOOL)
        e->a = sema_mk_cast(S, e->a, kc_type_vector(KC_S_INT, t->lanes));
    e->type = e->a->type;
    return e;
}

static bool is_int_op(kc_op op)
{
    return op == KC_OP_MOD || op == KC_OP_SHL || op == KC_OP_SHR || op == KC_OP_AND ||
           op == KC_OP_OR || op == KC_OP_XOR;
}

static bool is_compare(kc_op op)
{
    return op >= KC_OP_LT && op <= KC_OP_NE;
}

/* Types a binary operation whose operands are already checked. */
static kc_expr *type_binary(sema *S, kc_expr *e)
{
    const char *op = kc_op_text(e->op);
    if (e->op == KC_OP_LAND || e->op == KC_OP_LOR) {
        e->a = sema_to_bool(S, e->a, kc_arena_printf(&S->c->arena, "for '%s'", op));
        e->b = sema_to_bool(S, e->b, kc_arena_printf(&S->c->arena, "for '%s'", op));
        e->type = T(KC_S_BOOL);
        return e;
    }
    if (e->op == KC_OP_SHL || e->op == KC_OP_SHR) {
        if (is_err(e->a->type) || is_err(e->b->type))
            return sema_fail(e);
        if (!(kc_type_is_int(e->a->type) || e->a->type->scalar == KC_S_BOOL) || e->a->type->kind == KC_TY_ARRAY ||
            !kc_type_is_int(e->b->type) || e->b->type->lanes > e->a->type->lanes) {
            ERR(S, e->loc, "operator '%s' needs integers, not '%s' and '%s'", op, tname(S, e->a->type),
                tname(S, e->b->type));
            return sema_fail(e);
        }
        if (e->a->type->scalar == KC_S_BOOL)
            e->a = sema_mk_cast(S, e->a, T(KC_S_INT));
        cval amount = sema_fold(e->b);
        if (amount.ok && !amount.is_float && (amount.i < 0 || amount.i >= kc_scalar_bits(e->a->type->scalar))) {
            ERR(S, e->b->loc, "shifting a '%s' by %lld is out of range (0 to %d)", tname(S, e->a->type),
                (long long)amount.i, kc_scalar_bits(e->a->type->scalar) - 1);
            return sema_fail(e);
        }
        e->b = sema_mk_cast(S, e->b, e->a->type);
        e->type = e->a->type;
        return e;
    }
    const kc_type *t = common_type(S, e->a, e->b, e->loc, op);
    if (is_err(t))
        return sema_fail(e);
    if (t->scalar == KC_S_BOOL && !is_compare(e->op))
        t = kc_type_vector(KC_S_INT, t->lanes);
    if (is_int_op(e->op) && !kc_type_is_int(t) && t->scalar != KC_S_BOOL) {
        ERR(S, e->loc, "operator '%s' needs integers, not '%s'", op, tname(S, t));
        if (e->op == KC_OP_MOD)
            FIX(S, "kc has no fmodf; compute x - floorf(x / y) * y");
        return sema_fail(e);
    }
    if (is_compare(e->op) && t->kind == KC_TY_VECTOR) {
        ERR(S, e->loc, "operator '%s' cannot compare vectors", op);
        FIX(S, "compare the components, such as a.x %s b.x", op);
        return sema_fail(e);
    }
    char ctx[64];
    snprintf(ctx, sizeof(ctx), "for operator '%s'", op);
    e->a = sema_convert(S, e->a, t, ctx);
    e->b = sema_convert(S, e->b, t, ctx);
    if (is_err(e->a->type) || is_err(e->b->type))
        return sema_fail(e);
    e->type = is_compare(e->op) ? T(KC_S_BOOL) : t;
    if ((e->op == KC_OP_DIV || e->op == KC_OP_MOD) && kc_type_is_int(t)) {
        cval d = sema_fold(e->b);
        if (d.ok && !d.is_float && d.i == 0)
            ERR(S, e->b->loc, "division by zero");
    }
    return e;
}

static kc_expr *check_binary(sema *S, kc_expr *e)
{
    e->a = sema_check(S, e->a);
    e->b = sema_check(S, e->b);
    return type_binary(S, e);
}

/* x = …, x += 4, x++ on a buffer parameter: pointer arithmetic, say so. */
static bool buffer_pointer_op(sema *S, const kc_expr *lhs, const char *op)
{
    if (lhs->kind != KC_E_NAME || !lhs->sym || !lhs->sym->is_buffer)
        return false;
    ERR(S, lhs->loc, "'%s' is a buffer and cannot be %s: pointer arithmetic is not in the language", lhs->sym->name, op);
    FIX(S, "keep an integer offset and index with it: %s[i + offset]", lhs->sym->name);
    return true;
}

static kc_expr *check_assign(sema *S, kc_expr *e)
{
    e->a = sema_check(S, e->a);
    e->b = sema_check(S, e->b);
    if (buffer_pointer_op(S, e->a, "assigned"))
        return sema_fail(e);
    if (is_err(e->a->type) || is_err(e->b->type))
        return sema_fail(e);
    if (!check_lvalue(S, e->a, "assign to"))
        return sema_fail(e);
    if (e->has_op) {
        /* a op= b is a = (type of a)(a op b): the operation is typed as the
         * binary one would be, then converted back with the usual check.
         * e->b becomes that whole value; it shares the node e->a, which the
         * lowering evaluates once (as the place it stores to). */
        kc_expr *op = sema_mk(S, KC_E_BINARY, e->loc, NULL);
        op->op = e->op;
        op->a = e->a;
        op->b = e->b;
        op = type_binary(S, op);
        if (is_err(op->type))
            return sema_fail(e);
        op = sema_convert(S, op, e->a->type, kc_arena_printf(&S->c->arena, "in '%s='", kc_op_text(e->op)));
        if (is_err(op->type))
            return sema_fail(e);
        e->b = op;
    } else {
        e->b = sema_convert(S, e->b, e->a->type, "in the assignment");
    }
    e->type = e->a->type;
    return e;
}

static kc_expr *check_incdec(sema *S, kc_expr *e)
{
    e->a = sema_check(S, e->a);
    if (buffer_pointer_op(S, e->a, e->op == KC_OP_ADD ? "incremented" : "decremented"))
        return sema_fail(e);
    if (is_err(e->a->type) || !check_lvalue(S, e->a, e->op == KC_OP_ADD ? "increment" : "decrement"))
        return sema_fail(e);
    if (!kc_type_is_arith(e->a->type)) {
        ERR(S, e->loc, "'%s' needs a number, not '%s'", e->op == KC_OP_ADD ? "++" : "--", tname(S, e->a->type));
        return sema_fail(e);
    }
    e->type = e->a->type;
    return e;
}

static kc_expr *check_cond(sema *S, kc_expr *e)
{
    e->a = sema_to_bool(S, sema_check(S, e->a), "in '?:'");
    e->b = sema_check(S, e->b);
    e->c = sema_check(S, e->c);
    if (is_err(e->a->type) || is_err(e->b->type) || is_err(e->c->type))
        return sema_fail(e);
    const kc_type *t;
    if (e->b->type->scalar == KC_S_BOOL && e->c->type->scalar == KC_S_BOOL && e->b->type->lanes == 1 &&
        e->c->type->lanes == 1)
        t = T(KC_S_BOOL);
    else
        t = common_type(S, e->b, e->c, e->loc, "?:");
    if (is_err(t))
        return sema_fail(e);
    e->b = sema_convert(S, e->b, t, "in '?:'");
    e->c = sema_convert(S, e->c, t, "in '?:'");
    e->type = t;
    return e;
}

static kc_expr *check_cast(sema *S, kc_expr *e)
{
    e->a = sema_check(S, e->a);
    const kc_type *from = e->a->type, *to = e->type;
    if (is_err(from) || is_err(to))
        return sema_fail(e);
    if (to->scalar == KC_S_VOID) {
        e->type = T(KC_S_VOID);
        return e;
    }
    if (from->kind == KC_TY_ARRAY || from->scalar == KC_S_VOID) {
        ERR(S, e->loc, "cannot convert '%s' to '%s'", tname(S, from), tname(S, to));
        return sema_fail(e);
    }
    if (from->lanes != to->lanes && from->lanes != 1) {
        ERR(S, e->loc, "cannot convert '%s' to '%s': the number of components differs", tname(S, from), tname(S, to));
        return sema_fail(e);
    }
    return e;
}

/* Vector constructors: kc_float4(a, b, c, d), one scalar for all lanes,
 * or a vector of as many lanes converted lane by lane (kc_float4(h) of a
 * half4: C has no cast between vector types, clang's __builtin_convertvector
 * in kc.h). */
const kc_type *sema_ctor_type(const char *name)
{
    static const struct {
        const char *name;
        kc_scalar s;
        int lanes;
    } ctors[] = {
        {"kc_float2", KC_S_FLOAT, 2}, {"kc_float4", KC_S_FLOAT, 4}, {"kc_half2", KC_S_HALF, 2},
        {"kc_half4", KC_S_HALF, 4},   {"kc_int2", KC_S_INT, 2},     {"kc_int4", KC_S_INT, 4},
        {"kc_uint2", KC_S_UINT, 2},   {"kc_uint4", KC_S_UINT, 4},
    };
    for (size_t i = 0; i < KC_COUNT(ctors); i++)
        if (strcmp(ctors[i].name, name) == 0)
            return kc_type_vector(ctors[i].s, ctors[i].lanes);
    return NULL;
}

static kc_expr *check_ctor(sema *S, kc_expr *e, const kc_type *t)
{
    e->ctor = t;
    e->type = t;
    if (e->args.len == 1 && ((kc_expr *)e->args.items[0])->type->kind == KC_TY_VECTOR) {
        kc_expr *a = e->args.items[0];
        if (a->type->lanes != t->lanes || a->type->scalar == KC_S_BOOL || a->type->scalar == KC_S_LONG ||
            a->type->scalar == KC_S_ULONG) {
            ERR(S, a->loc, "'%s' converts a vector of %d numbers (float, half, int, uint), not '%s'", e->name,
                t->lanes, tname(S, a->type));
            return sema_fail(e);
        }
        return kc_type_equal(a->type, t) ? a : sema_mk_cast(S, a, t);
    }
    if (e->args.len != t->lanes && e->args.len != 1) {
        ERR(S, e->loc, "'%s' takes %d components (or 1 for all), but %d are given", e->name, t->lanes, e->args.len);
        return sema_fail(e);
    }
    bool bad = false;
    for (int i = 0; i < e->args.len; i++) {
        kc_expr *a = e->args.items[i];
        if (!is_err(a->type) && a->type->kind != KC_TY_SCALAR) {
            ERR(S, a->loc, "a component of '%s' must be a scalar, not '%s'", e->name, tname(S, a->type));
            bad = true;
            continue;
        }
        e->args.items[i] = a = sema_convert(S, a, kc_type_scalar(t->scalar), kc_arena_printf(&S->c->arena, "in '%s'", e->name));
        bad |= is_err(a->type);
    }
    return bad ? sema_fail(e) : e;
}

/* The float type that float built-ins compute in for these arguments. */
static const kc_type *float_args(sema *S, kc_expr *e)
{
    int lanes = 1;
    kc_scalar s = KC_S_HALF;
    bool any_float = false;
    for (int i = 0; i < e->args.len; i++) {
        const kc_type *t = ((kc_expr *)e->args.items[i])->type;
        if (is_err(t))
            return kc_type_error();
        if (t->kind == KC_TY_ARRAY || t->scalar == KC_S_VOID) {
            ERR(S, ((kc_expr *)e->args.items[i])->loc, "'%s' needs numbers, not '%s'", e->name, tname(S, t));
            return kc_type_error();
        }
        if (t->lanes > 1) {
            if (lanes > 1 && lanes != t->lanes) {
                ERR(S, e->loc, "'%s' cannot mix vectors of %d and %d components", e->name, lanes, t->lanes);
                return kc_type_error();
            }
            lanes = t->lanes;
        }
        if (t->scalar == KC_S_FLOAT || !kc_scalar_is_float(t->scalar)) {
            cval v = sema_fold(e->args.items[i]);
            if (!(v.ok && t->scalar != KC_S_FLOAT && sema_const_fits(v, T(KC_S_HALF))))
                s = KC_S_FLOAT;
        }
        any_float |= kc_scalar_is_float(t->scalar);
    }
    (void)any_float;
    return kc_type_vector(s, lanes);
}

static kc_expr *check_atomic(sema *S, kc_expr *e, const kc_builtin_info *b)
{
    kc_expr *p = e->args.items[0];
    if (p->kind != KC_E_ADDR) {
        ERR(S, p->loc, "the first argument of %s must be the address of an element, like &x[i]", b->name);
        return sema_fail(e);
    }
    kc_expr *target = p->a;
    if (is_err(target->type))
        return sema_fail(e);
    const kc_expr *root = target;
    while (root->kind == KC_E_INDEX)
        root = root->a;
    if (root->kind != KC_E_NAME || !root->sym ||
        (root->sym->storage != KC_STORE_BUFFER && root->sym->storage != KC_STORE_SHARED)) {
        ERR(S, p->loc, "%s needs an element of a buffer or of KC_SHARED memory", b->name);
        return sema_fail(e);
    }
    if (!check_lvalue(S, target, "update"))
        return sema_fail(e);
    const kc_type *t = target->type;
    bool is_int = t->kind == KC_TY_SCALAR && (t->scalar == KC_S_INT || t->scalar == KC_S_UINT);
    bool is_float = t->kind == KC_TY_SCALAR && t->scalar == KC_S_FLOAT;
    if (!is_int && !(is_float && b == &kc_builtins[KC_B_ATOMIC_ADD])) {
        ERR(S, p->loc, "%s works on int and uint elements%s, not '%s'", b->name,
            b == &kc_builtins[KC_B_ATOMIC_ADD] ? " (and float)" : "", tname(S, t));
        return sema_fail(e);
    }
    p->type = t;
    for (int i = 1; i < e->args.len; i++)
        e->args.items[i] = sema_convert(S, e->args.items[i], t, kc_arena_printf(&S->c->arena, "in %s", b->name));
    S->fn->uses_atomics = true;
    e->type = t;
    return e;
}

bool sema_int_scalar(const kc_expr *a)
{
    return a->type->kind == KC_TY_SCALAR && kc_type_is_int(a->type);
}

static kc_expr *check_builtin(sema *S, kc_expr *e, int id)
{
    const kc_builtin_info *b = &kc_builtins[id];
    e->builtin = id;
    if (e->args.len != b->nargs) {
        ERR(S, e->loc, "'%s' takes %d argument%s, but %d %s given", b->name, b->nargs, b->nargs == 1 ? "" : "s",
            e->args.len, e->args.len == 1 ? "is" : "are");
        return sema_fail(e);
    }
    for (int i = 0; i < e->args.len; i++) {
        kc_expr *a = e->args.items[i];
        if (a->kind == KC_E_ADDR && i == 0 && (b->rule == KC_RULE_ATOM || b->rule == KC_RULE_CAS)) {
            a->a = sema_check(S, a->a);
            a->type = a->a->type; /* the element's type; check_atomic checks the rest */
        } else
            e->args.items[i] = sema_check(S, a);
        if (is_err(((kc_expr *)e->args.items[i])->type))
            return sema_fail(e); /* the argument's own error was reported */
    }
    kc_expr **args = (kc_expr **)e->args.items;
    switch (b->rule) {
    case KC_RULE_ID: {
        cval v = sema_fold(args[0]);
        if (!v.ok || v.is_float || v.i < 0 || v.i > 2) {
            ERR(S, args[0]->loc, "the dimension of %s must be 0, 1 or 2", b->name);
            return sema_fail(e);
        }
        args[0] = sema_convert(S, args[0], T(KC_S_INT), "");
        e->type = T(KC_S_INT);
        return e;
    }
    case KC_RULE_ID0:
        /* the subgroup size alone is a constant of the device: no subgroup operations needed */
        S->fn->uses_subgroups |= id != KC_B_SUBGROUP_SIZE;
        e->type = T(KC_S_INT);
        return e;
    case KC_RULE_BAR:
        e->type = T(KC_S_VOID);
        return e;
    case KC_RULE_F1:
    case KC_RULE_F2:
    case KC_RULE_F3: {
        const kc_type *t = float_args(S, e);
        if (is_err(t))
            return sema_fail(e);
        for (int i = 0; i < e->args.len; i++)
            args[i] = sema_convert(S, args[i], t, kc_arena_printf(&S->c->arena, "in '%s'", b->name));
        e->type = t;
        return e;
    }
    case KC_RULE_A2:
    case KC_RULE_A3: {
        const kc_type *t = common_type(S, args[0], args[1], e->loc, b->name);
        if (b->rule == KC_RULE_A3 && !is_err(t)) {
            kc_expr tmp = *args[0];
            tmp.type = t;
            t = common_type(S, &tmp, args[2], e->loc, b->name);
        }
        if (is_err(t))
            return sema_fail(e);
        if (t->scalar == KC_S_BOOL)
            t = T(KC_S_INT);
        for (int i = 0; i < e->args.len; i++)
            args[i] = sema_convert(S, args[i], t, kc_arena_printf(&S->c->arena, "in '%s'", b->name));
        e->type = t;
        return e;
    }
    case KC_RULE_SG1:
    case KC_RULE_SG2: {
        const kc_type *t = args[0]->type;
        if (!kc_type_is_arith(t) || (b->rule == KC_RULE_SG1 && t->kind != KC_TY_SCALAR)) {
            ERR(S, args[0]->loc, "%s needs a number%s, not '%s'", b->name,
                b->rule == KC_RULE_SG1 ? " (a scalar)" : "", tname(S, t));
            return sema_fail(e);
        }
        if (b->rule == KC_RULE_SG2) {
            if (!sema_int_scalar(args[1])) {
                ERR(S, args[1]->loc, "the %s of %s must be an integer",
                    id == KC_B_SUBGROUP_SHUFFLE_XOR                                  ? "mask"
                    : id == KC_B_SUBGROUP_SHUFFLE_UP || id == KC_B_SUBGROUP_SHUFFLE_DOWN ? "delta"
                                                                                     : "lane",
                    b->name);
                return sema_fail(e);
            }
            args[1] = sema_convert(S, args[1], T(KC_S_INT), "");
        }
        S->fn->uses_subgroups = true;
        e->type = t;
        return e;
    }
    case KC_RULE_ATOM:
    case KC_RULE_CAS:
        return check_atomic(S, e, b);
    case KC_RULE_CDIV: {
        if (!sema_int_scalar(args[0]) || !sema_int_scalar(args[1])) {
            ERR(S, e->loc, "kc_cdiv needs two integers");
            return sema_fail(e);
        }
        const kc_type *t = common_type(S, args[0], args[1], e->loc, b->name);
        args[0] = sema_convert(S, args[0], t, "in kc_cdiv");
        args[1] = sema_convert(S, args[1], t, "in kc_cdiv");
        cval d = sema_fold(args[1]);
        if (d.ok && !d.is_float && d.i == 0)
            ERR(S, args[1]->loc, "division by zero in kc_cdiv");
        e->type = t;
        return e;
    }
    case KC_RULE_BITS: {
        const kc_type *t = args[0]->type;
        bool want_float_arg = id != KC_B_AS_FLOAT;
        bool ok = t->kind != KC_TY_ARRAY &&
                  (want_float_arg ? t->scalar == KC_S_FLOAT : (t->scalar == KC_S_INT || t->scalar == KC_S_UINT));
        if (!ok) {
            ERR(S, args[0]->loc, "%s takes %s, not '%s'", b->name, want_float_arg ? "a float" : "an int or a uint",
                tname(S, t));
            return sema_fail(e);
        }
        kc_scalar out = id == KC_B_AS_UINT ? KC_S_UINT : id == KC_B_AS_INT ? KC_S_INT : KC_S_FLOAT;
        e->type = kc_type_vector(out, t->lanes);
        return e;
    }
    case KC_RULE_MULHI:
        for (int i = 0; i < 2; i++) {
            if (!sema_int_scalar(args[i]) || kc_scalar_bits(args[i]->type->scalar) != 32) {
                ERR(S, args[i]->loc, "kc_mul_hi takes two 32-bit integers");
                return sema_fail(e);
            }
            args[i] = sema_convert(S, args[i], T(KC_S_UINT), "");
        }
        e->type = T(KC_S_UINT);
        return e;
    case KC_RULE_I1: {
        const kc_type *t = args[0]->type;
        if (t->kind == KC_TY_ARRAY || (t->scalar != KC_S_INT && t->scalar != KC_S_UINT)) {
            ERR(S, args[0]->loc, "%s takes a 32-bit int or uint (or a vector of them), not '%s'", b->name,
                tname(S, t));
            return sema_fail(e);
        }
        e->type = t;
        return e;
    }
    }
    return sema_fail(e);
}

/* Is an argument a valid reference to array storage for a helper's array
 * parameter? (a buffer, a shared or private array, or a row of one) */
static bool is_array_ref(const kc_expr *a)
{
    const kc_expr *root = a;
    while (root->kind == KC_E_INDEX)
        root = root->a;
    return root->kind == KC_E_NAME && root->sym && a->type->kind == KC_TY_ARRAY;
}

static bool ref_is_const(const kc_expr *a)
{
    while (a->kind == KC_E_INDEX)
        a = a->a;
    return a->sym->is_const || a->sym->kind == KC_SYM_CONST;
}

static kc_expr *check_helper_call(sema *S, kc_expr *e, kc_func *f)
{
    e->func = f;
    e->type = f->ret;
    if (f->is_kernel) {
        ERR(S, e->loc, "'%s' is a kernel; kernels cannot be called", f->name);
        FIX(S, "move the shared code into a static helper function");
        return sema_fail(e);
    }
    if (e->args.len != f->params.len) {
        ERR(S, e->loc, "'%s' takes %d argument%s, but %d %s given", f->name, f->params.len,
            f->params.len == 1 ? "" : "s", e->args.len, e->args.len == 1 ? "is" : "are");
        kc_note_at(&S->c->diag, f->loc, "'%s' is declared here", f->name);
        return sema_fail(e);
    }
    bool bad = false;
    for (int i = 0; i < e->args.len; i++) {
        kc_sym *p = f->params.items[i];
        kc_expr *a = e->args.items[i] = sema_check(S, e->args.items[i]);
        if (is_err(a->type) || is_err(p->type)) {
            bad = true;
            continue;
        }
        if (p->is_buffer) {
            if (!is_array_ref(a) || !kc_type_equal(kc_type_base(a->type), kc_type_base(p->type))) {
                ERR(S, a->loc, "argument %d of '%s' must be an array of '%s', not '%s'", i + 1, f->name,
                    tname(S, p->type->elem), tname(S, a->type));
                bad = true;
            } else if (ref_is_const(a) && !p->is_const) {
                ERR(S, a->loc, "'%s' may write to its parameter '%s' (it is not const), but this array is read-only",
                    f->name, p->name);
                FIX(S, "declare the parameter 'const %s %s[]'", tname(S, p->type->elem), p->name);
                bad = true;
            }
            continue;
        }
        e->args.items[i] = sema_convert(S, a, p->type, kc_arena_printf(&S->c->arena, "for parameter '%s' of '%s'", p->name, f->name));
        bad |= is_err(((kc_expr *)e->args.items[i])->type);
    }
    if (S->fn) {
        kc_vec_push(&S->c->arena, &S->fn->callees, f);
        kc_vec_push(&S->c->arena, &S->fn->call_sites, e);
    }
    return bad ? sema_fail(e) : e;
}

static kc_expr *check_call(sema *S, kc_expr *e)
{
    bool global;
    kc_sym *sym = sema_lookup(S, e->name, &global);
    if (sym && sym->kind == KC_SYM_FUNC)
        return check_helper_call(S, e, sym->func);
    if (sym) {
        ERR(S, e->loc, "'%s' is not a function", e->name);
        return sema_fail(e);
    }
    const kc_type *ct = sema_ctor_type(e->name);
    int id = kc_builtin_lookup(e->name);
    if (ct || id < 0) {
        for (int i = 0; i < e->args.len; i++)
            e->args.items[i] = sema_check(S, e->args.items[i]);
    }
    if (ct)
        return check_ctor(S, e, ct);
    if (id >= 0)
        return check_builtin(S, e, id);
    ERR(S, e->loc, "'%s' is not declared", e->name);
    if (strcmp(e->name, "__syncthreads") == 0 || strcmp(e->name, "barrier") == 0)
        FIX(S, "write kc_barrier()");
    else if (strcmp(e->name, "atomicAdd") == 0)
        FIX(S, "write kc_atomic_add(&x[i], v)");
    else if (strcmp(e->name, "sqrt") == 0 || strcmp(e->name, "exp") == 0 || strcmp(e->name, "sin") == 0 ||
             strcmp(e->name, "cos") == 0 || strcmp(e->name, "log") == 0 || strcmp(e->name, "fabs") == 0 ||
             strcmp(e->name, "tanh") == 0 || strcmp(e->name, "pow") == 0)
        FIX(S, "kc's math functions have float names: %sf", e->name);
    return sema_fail(e);
}

static kc_expr *check_literal(sema *S, kc_expr *e)
{
    if (e->type)
        return e; /* an error node made by the parser */
    if (e->kind == KC_E_BOOL) {
        e->type = T(KC_S_BOOL);
        return e;
    }
    if (e->kind == KC_E_FLOAT) {
        if (isinf((float)e->fval)) { /* kc has no way to spell infinity, so it is an overflow */
            ERR(S, e->loc, "'%s' is too large for a float", e->name);
            return sema_fail(e);
        }
        e->type = T(KC_S_FLOAT);
        e->fval = (float)e->fval;
        return e;
    }
    /* C's rules: the first of int, (uint for hex/octal), long, ulong that fits */
    bool decimal = e->name && !(e->name[0] == '0' && e->name[1]);
    uint64_t v = e->ival;
    kc_scalar s;
    if (!e->lit_long && !e->lit_unsigned && v <= INT32_MAX)
        s = KC_S_INT;
    else if (!e->lit_long && (e->lit_unsigned || !decimal) && v <= UINT32_MAX)
        s = KC_S_UINT;
    else if (!e->lit_unsigned && v <= INT64_MAX)
        s = KC_S_LONG;
    else
        s = KC_S_ULONG;
    e->type = T(s);
    return e;
}

kc_expr *sema_check(sema *S, kc_expr *e)
{
    if (!e)
        return e;
    switch (e->kind) {
    case KC_E_INT:
    case KC_E_FLOAT:
    case KC_E_BOOL: return check_literal(S, e);
    case KC_E_NAME: return check_name(S, e);
    case KC_E_UNARY: return check_unary(S, e);
    case KC_E_BINARY: return check_binary(S, e);
    case KC_E_ASSIGN: return check_assign(S, e);
    case KC_E_INCDEC: return check_incdec(S, e);
    case KC_E_COND: return check_cond(S, e);
    case KC_E_CALL: return check_call(S, e);
    case KC_E_INDEX: return check_index(S, e);
    case KC_E_MEMBER: return check_member(S, e);
    case KC_E_CAST: return check_cast(S, e);
    case KC_E_COMMA:
        e->a = sema_check(S, e->a);
        e->b = sema_check(S, e->b);
        e->type = e->b->type;
        return e;
    case KC_E_ADDR:
        ERR(S, e->loc, "'&' is only allowed on the first argument of kc_atomic_*");
        FIX(S, "pointers are not in the language");
        return sema_fail(e);
    case KC_E_INIT:
        ERR(S, e->loc, "a braced list is only allowed to initialise an array");
        return sema_fail(e);
    }
    return sema_fail(e);
}

/* An expression whose value is needed (not a statement by itself). */
kc_expr *sema_check_value(sema *S, kc_expr *e)
{
    e = sema_check(S, e);
    if (!is_err(e->type) && e->type->scalar == KC_S_VOID && e->type->kind == KC_TY_SCALAR) {
        ERR(S, e->loc, "this expression has no value");
        return sema_fail(e);
    }
    if (!is_err(e->type) && e->kind == KC_E_NAME && e->sym && e->sym->storage == KC_STORE_BUFFER) {
        ERR(S, e->loc, "'%s' is a buffer; index it to get an element: %s[i]", e->sym->name, e->sym->name);
        return sema_fail(e);
    }
    return e;
}
