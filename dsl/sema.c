/*
 * sema.c — semantic checks: names, types and every rule of DESIGN.md §2.
 *
 * After sema every kc_expr has a type, every name its symbol, and every
 * implicit conversion is an explicit KC_E_CAST marked implicit. The rule for
 * conversions is C's usual arithmetic conversions, except that a
 * conversion that can lose information (float to int, float to half, long
 * to int, int to half) needs a cast, unless the value is a constant that
 * converts exactly (so `half h = 1.0f;` and `x * 2` are fine).
 *
 * Errors never stop the walk: an expression with an error gets the error
 * type, which silences messages that would only repeat the first.
 */
#include "dsl_private.h"

#include <math.h>
#include <string.h>

typedef struct scope scope;
struct scope {
    scope *up;
    kc_map names;
};

typedef struct sema {
    kc_ctx *c;
    kc_program *prog;
    kc_map globals; /* tunables, constants, functions */
    scope *sc;
    kc_func *fn;    /* the function being checked */
    int loops, switches;
    kc_vec *cases;  /* KC_S_CASE of the innermost switch */
    bool seen_default;
    kc_stmt *switch_body; /* the block of the innermost switch */
    kc_stmt *block;       /* the block being checked */
} sema;

static const kc_type *T(kc_scalar s) { return kc_type_scalar(s); }
static bool is_err(const kc_type *t) { return !t || t->kind == KC_TY_ERROR; }

#define ERR(S, loc, ...) kc_error_at(&(S)->c->diag, (loc), __VA_ARGS__)
#define FIX(S, ...) kc_diag_fix(&(S)->c->diag, __VA_ARGS__)

static const char *tname(sema *S, const kc_type *t) { return kc_type_name(&S->c->arena, t); }

/* ---- scopes --------------------------------------------------------------- */

static void push_scope(sema *S)
{
    scope *s = KC_NEW(&S->c->arena, scope);
    s->up = S->sc;
    S->sc = s;
}

static void pop_scope(sema *S) { S->sc = S->sc->up; }

static void *lookup(sema *S, const char *name, bool *is_global)
{
    for (scope *s = S->sc; s; s = s->up) {
        kc_sym *sym = kc_map_get(&s->names, name);
        if (sym) {
            *is_global = false;
            return sym;
        }
    }
    *is_global = true;
    return kc_map_get(&S->globals, name);
}

static bool reserved_name(sema *S, const char *name, kc_loc loc);

static void declare(sema *S, kc_sym *sym)
{
    if (reserved_name(S, sym->name, sym->loc))
        return;
    kc_sym *old = kc_map_get(&S->sc->names, sym->name);
    if (old) {
        ERR(S, sym->loc, "'%s' is already declared in this scope", sym->name);
        kc_note_at(&S->c->diag, old->loc, "the earlier declaration is here");
        return;
    }
    kc_sym *g = kc_map_get(&S->globals, sym->name);
    if (g && g->kind == KC_SYM_TUNABLE) {
        ERR(S, sym->loc, "'%s' shadows the tunable of the same name", sym->name);
        FIX(S, "rename the %s", sym->kind == KC_SYM_PARAM ? "parameter" : "variable");
    }
    if (kc_builtin_lookup(sym->name) >= 0)
        ERR(S, sym->loc, "'%s' is the name of a built-in function", sym->name);
    kc_map_put(&S->c->arena, &S->sc->names, sym->name, sym);
}

/* ---- nodes ------------------------------------------------------------------ */

static kc_expr *mk(sema *S, kc_expr_kind kind, kc_loc loc, const kc_type *type)
{
    kc_expr *e = KC_NEW(&S->c->arena, kc_expr);
    e->kind = kind;
    e->loc = loc;
    e->type = type;
    e->builtin = -1;
    e->lane = -1;
    return e;
}

static kc_expr *mk_cast(sema *S, kc_expr *e, const kc_type *to)
{
    kc_expr *c = mk(S, KC_E_CAST, e->loc, to);
    c->a = e;
    c->implicit = true;
    c->height = e->height + 1;
    return c;
}

/* ---- constants ----------------------------------------------------------------- */

typedef struct cval {
    bool ok, is_float;
    int64_t i;
    double f;
} cval;

/* Folds an expression of literals and file-scope constants (not tunables:
 * their value depends on the variant). Used for case labels, exactness of
 * implicit conversions, and dimension arguments. */
static cval fold(const kc_expr *e)
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
        cval a = fold(e->a);
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
        cval a = fold(e->a);
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
        cval a = fold(e->a), b = fold(e->b);
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
static bool const_fits(cval v, const kc_type *to)
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
static kc_loc start_of(const kc_expr *e)
{
    while ((e->kind == KC_E_BINARY || e->kind == KC_E_ASSIGN || e->kind == KC_E_COND || e->kind == KC_E_COMMA ||
            (e->kind == KC_E_INCDEC && e->is_post) || (e->kind == KC_E_CAST && e->implicit)) &&
           e->a)
        e = e->a;
    return e->loc;
}

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
    cval v = fold(e);
    return v.ok && from->kind == KC_TY_SCALAR && const_fits(v, to);
}

/* Converts e to `to`, or reports why it cannot. */
static kc_expr *convert(sema *S, kc_expr *e, const kc_type *to, const char *context)
{
    if (is_err(e->type) || is_err(to) || kc_type_equal(e->type, to))
        return e;
    if (implicit_ok(e, to))
        return mk_cast(S, e, to);
    if (e->type->kind == KC_TY_ARRAY || to->kind == KC_TY_ARRAY) {
        ERR(S, start_of(e), "cannot use %s '%s' as '%s' %s",
            e->type->kind == KC_TY_ARRAY ? "array" : "value", tname(S, e->type), tname(S, to), context);
        if (e->type->kind == KC_TY_ARRAY)
            FIX(S, "index it to get an element");
    } else if (e->type->kind != to->kind && to->kind == KC_TY_SCALAR) {
        ERR(S, start_of(e), "cannot convert vector '%s' to '%s' %s", tname(S, e->type), tname(S, to), context);
        FIX(S, "take a component, such as .x");
    } else {
        ERR(S, start_of(e), "converting '%s' to '%s' %s can lose information", tname(S, e->type),
            tname(S, to), context);
        FIX(S, "write the conversion out: (%s)(…)", tname(S, to));
    }
    e->type = kc_type_error();
    return e;
}

static kc_expr *to_bool(sema *S, kc_expr *e, const char *context)
{
    if (is_err(e->type))
        return e;
    if (e->type->kind != KC_TY_SCALAR || e->type->scalar == KC_S_VOID) {
        ERR(S, start_of(e), "a %s '%s' cannot be used as a condition %s",
            e->type->kind == KC_TY_ARRAY ? "array" : e->type->kind == KC_TY_VECTOR ? "vector" : "value of type",
            tname(S, e->type), context);
        e->type = kc_type_error();
        return e;
    }
    return e->type->scalar == KC_S_BOOL ? e : mk_cast(S, e, T(KC_S_BOOL));
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

/* ---- integer expressions for sizes, grids and constraints ------------------------ */

/* IX_TUNABLES: constants and tunables (extents, workgroup, constraints);
 * IX_PARAMS: also integer scalar parameters (buffer extents);
 * IX_GRID: like IX_PARAMS, with only the operators DESIGN.md lists for
 * KC_GRID: + - * / % << >> min max kc_cdiv. */
typedef enum { IX_TUNABLES, IX_PARAMS, IX_GRID } ix_mode;

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
static kc_iexpr *to_iexpr(sema *S, const kc_expr *e, ix_mode mode, const char *what)
{
    kc_arena *a = &S->c->arena;
    if (is_err(e->type))
        return NULL;
    cval v = fold(e);
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
            return to_iexpr(S, e->a, mode, what);
        break;
    case KC_E_UNARY: {
        kc_iexpr *x = to_iexpr(S, e->a, mode, what);
        if (!x)
            return NULL;
        return kc_iexpr_make(a, kc_iexpr_op_of(e->op), x, NULL, NULL);
    }
    case KC_E_BINARY: {
        kc_iexpr *x = to_iexpr(S, e->a, mode, what), *y = to_iexpr(S, e->b, mode, what);
        return x && y ? kc_iexpr_make(a, kc_iexpr_op_of(e->op), x, y, NULL) : NULL;
    }
    case KC_E_COND: {
        kc_iexpr *x = to_iexpr(S, e->a, mode, what), *y = to_iexpr(S, e->b, mode, what),
                 *z = to_iexpr(S, e->c, mode, what);
        return x && y && z ? kc_iexpr_make(a, KC_IX_SELECT, x, y, z) : NULL;
    }
    case KC_E_CALL:
        if (e->builtin == KC_B_MIN || e->builtin == KC_B_MAX || e->builtin == KC_B_CDIV) {
            kc_iexpr *x = to_iexpr(S, e->args.items[0], mode, what);
            kc_iexpr *y = to_iexpr(S, e->args.items[1], mode, what);
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
static bool iexpr_value(const kc_iexpr *e, int64_t *out)
{
    return e && kc_iexpr_eval(e, NULL, NULL, out, NULL, 0);
}

/* Records that the current function uses a tunable. */
static void use_tunable(sema *S, kc_tunable *t)
{
    if (!S->fn)
        return;
    for (int i = 0; i < S->fn->tunables.len; i++)
        if (S->fn->tunables.items[i] == t)
            return;
    kc_vec_push(&S->c->arena, &S->fn->tunables, t);
}

/* ---- expressions ------------------------------------------------------------------ */

static kc_expr *check(sema *S, kc_expr *e);
static void check_stmt(sema *S, kc_stmt *s);

static kc_expr *fail(kc_expr *e)
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
        ERR(S, start_of(e), "cannot %s this expression: it is not a variable or an element", what);
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
    kc_sym *sym = lookup(S, e->name, &global);
    if (!sym) {
        if (kc_builtin_lookup(e->name) >= 0) {
            ERR(S, e->loc, "'%s' is a built-in function; call it", e->name);
            return fail(e);
        }
        ERR(S, e->loc, "'%s' is not declared", e->name);
        return fail(e);
    }
    if (sym->kind == KC_SYM_FUNC) {
        ERR(S, e->loc, "'%s' is a function; call it", e->name);
        FIX(S, "function pointers are not in the language");
        return fail(e);
    }
    sym->used = true;
    e->sym = sym;
    if (sym->kind == KC_SYM_TUNABLE) {
        use_tunable(S, sym->tunable);
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
    e->a = check(S, e->a);
    if (is_err(e->a->type) || !e->name)
        return fail(e);
    if (e->a->type->kind != KC_TY_VECTOR) {
        ERR(S, e->loc, "'.%s' needs a vector, but this is '%s'", e->name, tname(S, e->a->type));
        return fail(e);
    }
    e->lane = lane_of(e->name);
    if (e->lane < 0 || e->lane >= e->a->type->lanes) {
        ERR(S, e->loc, "'%s' has no component '%s'", tname(S, e->a->type), e->name);
        FIX(S, "a %s has %s", tname(S, e->a->type), e->a->type->lanes == 2 ? ".x and .y" : ".x, .y, .z and .w");
        return fail(e);
    }
    e->type = kc_type_scalar(e->a->type->scalar);
    return e;
}

static kc_expr *check_index(sema *S, kc_expr *e)
{
    e->a = check(S, e->a);
    e->b = check(S, e->b);
    if (is_err(e->a->type))
        return fail(e);
    if (e->a->type->kind != KC_TY_ARRAY) {
        ERR(S, e->loc, "cannot index '%s': it is not an array or a buffer", tname(S, e->a->type));
        return fail(e);
    }
    if (!is_err(e->b->type)) {
        if (!kc_type_is_int(e->b->type) || e->b->type->kind != KC_TY_SCALAR) {
            ERR(S, e->b->loc, "an index must be an integer, not '%s'", tname(S, e->b->type));
            if (kc_type_is_float(e->b->type))
                FIX(S, "convert it: (int)(…)");
            return fail(e);
        }
        cval v = fold(e->b);
        int64_t n;
        if (v.ok && (v.i < 0 || (iexpr_value(e->a->type->len, &n) && v.i >= n))) {
            ERR(S, e->b->loc, "index %lld is out of bounds", (long long)v.i);
            return fail(e);
        }
    }
    e->type = e->a->type->elem;
    return e;
}

static kc_expr *check_unary(sema *S, kc_expr *e)
{
    e->a = check(S, e->a);
    const kc_type *t = e->a->type;
    if (is_err(t))
        return fail(e);
    if (e->op == KC_OP_NOT) {
        e->a = to_bool(S, e->a, "for '!'");
        e->type = T(KC_S_BOOL);
        return e;
    }
    if (t->kind == KC_TY_ARRAY || !kc_type_is_arith(t) ? t->scalar != KC_S_BOOL || t->kind == KC_TY_ARRAY : false) {
        ERR(S, e->loc, "operator '%s' cannot take '%s'", kc_op_text(e->op), tname(S, t));
        return fail(e);
    }
    if (e->op == KC_OP_BNOT && !kc_type_is_int(t) && t->scalar != KC_S_BOOL) {
        ERR(S, e->loc, "operator '~' needs an integer, not '%s'", tname(S, t));
        return fail(e);
    }
    if (t->scalar == KC_S_BOOL)
        e->a = mk_cast(S, e->a, kc_type_vector(KC_S_INT, t->lanes));
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
        e->a = to_bool(S, e->a, kc_arena_printf(&S->c->arena, "for '%s'", op));
        e->b = to_bool(S, e->b, kc_arena_printf(&S->c->arena, "for '%s'", op));
        e->type = T(KC_S_BOOL);
        return e;
    }
    if (e->op == KC_OP_SHL || e->op == KC_OP_SHR) {
        if (is_err(e->a->type) || is_err(e->b->type))
            return fail(e);
        if (!(kc_type_is_int(e->a->type) || e->a->type->scalar == KC_S_BOOL) || e->a->type->kind == KC_TY_ARRAY ||
            !kc_type_is_int(e->b->type) || e->b->type->lanes > e->a->type->lanes) {
            ERR(S, e->loc, "operator '%s' needs integers, not '%s' and '%s'", op, tname(S, e->a->type),
                tname(S, e->b->type));
            return fail(e);
        }
        if (e->a->type->scalar == KC_S_BOOL)
            e->a = mk_cast(S, e->a, T(KC_S_INT));
        cval amount = fold(e->b);
        if (amount.ok && !amount.is_float && (amount.i < 0 || amount.i >= kc_scalar_bits(e->a->type->scalar))) {
            ERR(S, e->b->loc, "shifting a '%s' by %lld is out of range (0 to %d)", tname(S, e->a->type),
                (long long)amount.i, kc_scalar_bits(e->a->type->scalar) - 1);
            return fail(e);
        }
        e->b = mk_cast(S, e->b, e->a->type);
        e->type = e->a->type;
        return e;
    }
    const kc_type *t = common_type(S, e->a, e->b, e->loc, op);
    if (is_err(t))
        return fail(e);
    if (t->scalar == KC_S_BOOL && !is_compare(e->op))
        t = kc_type_vector(KC_S_INT, t->lanes);
    if (is_int_op(e->op) && !kc_type_is_int(t) && t->scalar != KC_S_BOOL) {
        ERR(S, e->loc, "operator '%s' needs integers, not '%s'", op, tname(S, t));
        if (e->op == KC_OP_MOD)
            FIX(S, "kc has no fmodf; compute x - floorf(x / y) * y");
        return fail(e);
    }
    if (is_compare(e->op) && t->kind == KC_TY_VECTOR) {
        ERR(S, e->loc, "operator '%s' cannot compare vectors", op);
        FIX(S, "compare the components, such as a.x %s b.x", op);
        return fail(e);
    }
    char ctx[64];
    snprintf(ctx, sizeof(ctx), "for operator '%s'", op);
    e->a = convert(S, e->a, t, ctx);
    e->b = convert(S, e->b, t, ctx);
    if (is_err(e->a->type) || is_err(e->b->type))
        return fail(e);
    e->type = is_compare(e->op) ? T(KC_S_BOOL) : t;
    if ((e->op == KC_OP_DIV || e->op == KC_OP_MOD) && kc_type_is_int(t)) {
        cval d = fold(e->b);
        if (d.ok && !d.is_float && d.i == 0)
            ERR(S, e->b->loc, "division by zero");
    }
    return e;
}

static kc_expr *check_binary(sema *S, kc_expr *e)
{
    e->a = check(S, e->a);
    e->b = check(S, e->b);
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
    e->a = check(S, e->a);
    e->b = check(S, e->b);
    if (buffer_pointer_op(S, e->a, "assigned"))
        return fail(e);
    if (is_err(e->a->type) || is_err(e->b->type))
        return fail(e);
    if (!check_lvalue(S, e->a, "assign to"))
        return fail(e);
    if (e->has_op) {
        /* a op= b is a = (type of a)(a op b): the operation is typed as the
         * binary one would be, then converted back with the usual check.
         * e->b becomes that whole value; it shares the node e->a, which the
         * lowering evaluates once (as the place it stores to). */
        kc_expr *op = mk(S, KC_E_BINARY, e->loc, NULL);
        op->op = e->op;
        op->a = e->a;
        op->b = e->b;
        op = type_binary(S, op);
        if (is_err(op->type))
            return fail(e);
        op = convert(S, op, e->a->type, kc_arena_printf(&S->c->arena, "in '%s='", kc_op_text(e->op)));
        if (is_err(op->type))
            return fail(e);
        e->b = op;
    } else {
        e->b = convert(S, e->b, e->a->type, "in the assignment");
    }
    e->type = e->a->type;
    return e;
}

static kc_expr *check_incdec(sema *S, kc_expr *e)
{
    e->a = check(S, e->a);
    if (buffer_pointer_op(S, e->a, e->op == KC_OP_ADD ? "incremented" : "decremented"))
        return fail(e);
    if (is_err(e->a->type) || !check_lvalue(S, e->a, e->op == KC_OP_ADD ? "increment" : "decrement"))
        return fail(e);
    if (!kc_type_is_arith(e->a->type)) {
        ERR(S, e->loc, "'%s' needs a number, not '%s'", e->op == KC_OP_ADD ? "++" : "--", tname(S, e->a->type));
        return fail(e);
    }
    e->type = e->a->type;
    return e;
}

static kc_expr *check_cond(sema *S, kc_expr *e)
{
    e->a = to_bool(S, check(S, e->a), "in '?:'");
    e->b = check(S, e->b);
    e->c = check(S, e->c);
    if (is_err(e->a->type) || is_err(e->b->type) || is_err(e->c->type))
        return fail(e);
    const kc_type *t;
    if (e->b->type->scalar == KC_S_BOOL && e->c->type->scalar == KC_S_BOOL && e->b->type->lanes == 1 &&
        e->c->type->lanes == 1)
        t = T(KC_S_BOOL);
    else
        t = common_type(S, e->b, e->c, e->loc, "?:");
    if (is_err(t))
        return fail(e);
    e->b = convert(S, e->b, t, "in '?:'");
    e->c = convert(S, e->c, t, "in '?:'");
    e->type = t;
    return e;
}

static kc_expr *check_cast(sema *S, kc_expr *e)
{
    e->a = check(S, e->a);
    const kc_type *from = e->a->type, *to = e->type;
    if (is_err(from) || is_err(to))
        return fail(e);
    if (to->scalar == KC_S_VOID) {
        e->type = T(KC_S_VOID);
        return e;
    }
    if (from->kind == KC_TY_ARRAY || from->scalar == KC_S_VOID) {
        ERR(S, e->loc, "cannot convert '%s' to '%s'", tname(S, from), tname(S, to));
        return fail(e);
    }
    if (from->lanes != to->lanes && from->lanes != 1) {
        ERR(S, e->loc, "cannot convert '%s' to '%s': the number of components differs", tname(S, from), tname(S, to));
        return fail(e);
    }
    return e;
}

/* Vector constructors: kc_float4(a, b, c, d), or one scalar for all lanes. */
static const kc_type *ctor_type(const char *name)
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
    if (e->args.len != t->lanes && e->args.len != 1) {
        ERR(S, e->loc, "'%s' takes %d components (or 1 for all), but %d are given", e->name, t->lanes, e->args.len);
        return fail(e);
    }
    bool bad = false;
    for (int i = 0; i < e->args.len; i++) {
        kc_expr *a = e->args.items[i];
        if (!is_err(a->type) && a->type->kind != KC_TY_SCALAR) {
            ERR(S, a->loc, "a component of '%s' must be a scalar, not '%s'", e->name, tname(S, a->type));
            bad = true;
            continue;
        }
        e->args.items[i] = a = convert(S, a, kc_type_scalar(t->scalar), kc_arena_printf(&S->c->arena, "in '%s'", e->name));
        bad |= is_err(a->type);
    }
    return bad ? fail(e) : e;
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
            cval v = fold(e->args.items[i]);
            if (!(v.ok && t->scalar != KC_S_FLOAT && const_fits(v, T(KC_S_HALF))))
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
        return fail(e);
    }
    kc_expr *target = p->a;
    if (is_err(target->type))
        return fail(e);
    const kc_expr *root = target;
    while (root->kind == KC_E_INDEX)
        root = root->a;
    if (root->kind != KC_E_NAME || !root->sym ||
        (root->sym->storage != KC_STORE_BUFFER && root->sym->storage != KC_STORE_SHARED)) {
        ERR(S, p->loc, "%s needs an element of a buffer or of KC_SHARED memory", b->name);
        return fail(e);
    }
    if (!check_lvalue(S, target, "update"))
        return fail(e);
    const kc_type *t = target->type;
    bool is_int = t->kind == KC_TY_SCALAR && (t->scalar == KC_S_INT || t->scalar == KC_S_UINT);
    bool is_float = t->kind == KC_TY_SCALAR && t->scalar == KC_S_FLOAT;
    if (!is_int && !(is_float && b == &kc_builtins[KC_B_ATOMIC_ADD])) {
        ERR(S, p->loc, "%s works on int and uint elements%s, not '%s'", b->name,
            b == &kc_builtins[KC_B_ATOMIC_ADD] ? " (and float)" : "", tname(S, t));
        return fail(e);
    }
    p->type = t;
    for (int i = 1; i < e->args.len; i++)
        e->args.items[i] = convert(S, e->args.items[i], t, kc_arena_printf(&S->c->arena, "in %s", b->name));
    S->fn->uses_atomics = true;
    e->type = t;
    return e;
}

static bool int_scalar(const kc_expr *a)
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
        return fail(e);
    }
    for (int i = 0; i < e->args.len; i++) {
        kc_expr *a = e->args.items[i];
        if (a->kind == KC_E_ADDR && i == 0 && (b->rule == KC_RULE_ATOM || b->rule == KC_RULE_CAS)) {
            a->a = check(S, a->a);
            a->type = a->a->type; /* the element's type; check_atomic checks the rest */
        } else
            e->args.items[i] = check(S, a);
        if (is_err(((kc_expr *)e->args.items[i])->type))
            return fail(e); /* the argument's own error was reported */
    }
    kc_expr **args = (kc_expr **)e->args.items;
    switch (b->rule) {
    case KC_RULE_ID: {
        cval v = fold(args[0]);
        if (!v.ok || v.is_float || v.i < 0 || v.i > 2) {
            ERR(S, args[0]->loc, "the dimension of %s must be 0, 1 or 2", b->name);
            return fail(e);
        }
        args[0] = convert(S, args[0], T(KC_S_INT), "");
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
            return fail(e);
        for (int i = 0; i < e->args.len; i++)
            args[i] = convert(S, args[i], t, kc_arena_printf(&S->c->arena, "in '%s'", b->name));
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
            return fail(e);
        if (t->scalar == KC_S_BOOL)
            t = T(KC_S_INT);
        for (int i = 0; i < e->args.len; i++)
            args[i] = convert(S, args[i], t, kc_arena_printf(&S->c->arena, "in '%s'", b->name));
        e->type = t;
        return e;
    }
    case KC_RULE_SG1:
    case KC_RULE_SG2: {
        const kc_type *t = args[0]->type;
        if (!kc_type_is_arith(t) || (b->rule == KC_RULE_SG1 && t->kind != KC_TY_SCALAR)) {
            ERR(S, args[0]->loc, "%s needs a number%s, not '%s'", b->name,
                b->rule == KC_RULE_SG1 ? " (a scalar)" : "", tname(S, t));
            return fail(e);
        }
        if (b->rule == KC_RULE_SG2) {
            if (!int_scalar(args[1])) {
                ERR(S, args[1]->loc, "the lane of %s must be an integer", b->name);
                return fail(e);
            }
            args[1] = convert(S, args[1], T(KC_S_INT), "");
        }
        S->fn->uses_subgroups = true;
        e->type = t;
        return e;
    }
    case KC_RULE_ATOM:
    case KC_RULE_CAS:
        return check_atomic(S, e, b);
    case KC_RULE_CDIV: {
        if (!int_scalar(args[0]) || !int_scalar(args[1])) {
            ERR(S, e->loc, "kc_cdiv needs two integers");
            return fail(e);
        }
        const kc_type *t = common_type(S, args[0], args[1], e->loc, b->name);
        args[0] = convert(S, args[0], t, "in kc_cdiv");
        args[1] = convert(S, args[1], t, "in kc_cdiv");
        cval d = fold(args[1]);
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
            return fail(e);
        }
        kc_scalar out = id == KC_B_AS_UINT ? KC_S_UINT : id == KC_B_AS_INT ? KC_S_INT : KC_S_FLOAT;
        e->type = kc_type_vector(out, t->lanes);
        return e;
    }
    case KC_RULE_MULHI:
        for (int i = 0; i < 2; i++) {
            if (!int_scalar(args[i]) || kc_scalar_bits(args[i]->type->scalar) != 32) {
                ERR(S, args[i]->loc, "kc_mul_hi takes two 32-bit integers");
                return fail(e);
            }
            args[i] = convert(S, args[i], T(KC_S_UINT), "");
        }
        e->type = T(KC_S_UINT);
        return e;
    }
    return fail(e);
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
        return fail(e);
    }
    if (e->args.len != f->params.len) {
        ERR(S, e->loc, "'%s' takes %d argument%s, but %d %s given", f->name, f->params.len,
            f->params.len == 1 ? "" : "s", e->args.len, e->args.len == 1 ? "is" : "are");
        kc_note_at(&S->c->diag, f->loc, "'%s' is declared here", f->name);
        return fail(e);
    }
    bool bad = false;
    for (int i = 0; i < e->args.len; i++) {
        kc_sym *p = f->params.items[i];
        kc_expr *a = e->args.items[i] = check(S, e->args.items[i]);
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
        e->args.items[i] = convert(S, a, p->type, kc_arena_printf(&S->c->arena, "for parameter '%s' of '%s'", p->name, f->name));
        bad |= is_err(((kc_expr *)e->args.items[i])->type);
    }
    if (S->fn) {
        kc_vec_push(&S->c->arena, &S->fn->callees, f);
        kc_vec_push(&S->c->arena, &S->fn->call_sites, e);
    }
    return bad ? fail(e) : e;
}

static kc_expr *check_call(sema *S, kc_expr *e)
{
    bool global;
    kc_sym *sym = lookup(S, e->name, &global);
    if (sym && sym->kind == KC_SYM_FUNC)
        return check_helper_call(S, e, sym->func);
    if (sym) {
        ERR(S, e->loc, "'%s' is not a function", e->name);
        return fail(e);
    }
    const kc_type *ct = ctor_type(e->name);
    int id = kc_builtin_lookup(e->name);
    if (ct || id < 0) {
        for (int i = 0; i < e->args.len; i++)
            e->args.items[i] = check(S, e->args.items[i]);
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
    return fail(e);
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
            return fail(e);
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

static kc_expr *check(sema *S, kc_expr *e)
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
        e->a = check(S, e->a);
        e->b = check(S, e->b);
        e->type = e->b->type;
        return e;
    case KC_E_ADDR:
        ERR(S, e->loc, "'&' is only allowed on the first argument of kc_atomic_*");
        FIX(S, "pointers are not in the language");
        return fail(e);
    case KC_E_INIT:
        ERR(S, e->loc, "a braced list is only allowed to initialise an array");
        return fail(e);
    }
    return fail(e);
}

/* An expression whose value is needed (not a statement by itself). */
static kc_expr *check_value(sema *S, kc_expr *e)
{
    e = check(S, e);
    if (!is_err(e->type) && e->type->scalar == KC_S_VOID && e->type->kind == KC_TY_SCALAR) {
        ERR(S, e->loc, "this expression has no value");
        return fail(e);
    }
    if (!is_err(e->type) && e->kind == KC_E_NAME && e->sym && e->sym->storage == KC_STORE_BUFFER) {
        ERR(S, e->loc, "'%s' is a buffer; index it to get an element: %s[i]", e->sym->name, e->sym->name);
        return fail(e);
    }
    return e;
}

/* ---- declarations -------------------------------------------------------------- */

/* Builds the type of a declarator from its element type and extents.
 * mode: IX_PARAMS for kernel buffers (extents over scalar parameters). An
 * empty [] is allowed only outermost, and only where allow_open. */
static const kc_type *declarator_type(sema *S, kc_sym *sym, ix_mode mode, bool allow_open, int init_count)
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
        d = sym->dim_exprs.items[i] = check_value(S, d);
        if (is_err(d->type))
            return kc_type_error();
        if (!int_scalar(d)) {
            ERR(S, d->loc, "an array extent must be an integer, not '%s'", tname(S, d->type));
            return kc_type_error();
        }
        lens[i] = to_iexpr(S, d, mode, "an array extent");
        if (!lens[i])
            return kc_type_error();
        int64_t v;
        if (iexpr_value(lens[i], &v) && v <= 0) {
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

static void check_init_list(sema *S, kc_sym *sym, const kc_type *t, kc_expr *init, bool need_const);

static kc_expr *check_scalar_init(sema *S, kc_sym *sym, const kc_type *t, kc_expr *init, bool need_const)
{
    if (init->kind == KC_E_INIT) {
        ERR(S, init->loc, "a braced list cannot initialise '%s' of type '%s'", sym->name, tname(S, t));
        return fail(init);
    }
    init = convert(S, check_value(S, init), t, kc_arena_printf(&S->c->arena, "in the initialisation of '%s'", sym->name));
    if (need_const && !is_err(init->type) && !fold(init).ok) {
        ERR(S, init->loc, "the value of constant '%s' must be a constant expression", sym->name);
        return fail(init);
    }
    return init;
}

static void check_init_list(sema *S, kc_sym *sym, const kc_type *t, kc_expr *init, bool need_const)
{
    if (init->kind != KC_E_INIT) {
        ERR(S, init->loc, "array '%s' needs a braced list of values: {…}", sym->name);
        return;
    }
    int64_t len;
    if (iexpr_value(t->len, &len) && init->args.len > len) {
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
            check_init_list(S, sym, t->elem, item, need_const);
        } else {
            init->args.items[i] = check_scalar_init(S, sym, t->elem, item, need_const);
        }
    }
}

static void declare_local(sema *S, kc_sym *sym)
{
    kc_func *f = S->fn;
    bool shared = sym->storage == KC_STORE_SHARED;
    int count = sym->init && sym->init->kind == KC_E_INIT ? sym->init->args.len : 0;
    sym->type = declarator_type(S, sym, IX_TUNABLES, false, count);
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
            check_init_list(S, sym, sym->type, sym->init, false);
        else
            sym->init = check_scalar_init(S, sym, sym->type, sym->init, false);
    } else if (sym->is_const && !sym->init) {
        ERR(S, sym->loc, "const '%s' needs a value", sym->name);
    }
    sym->index = f->nlocals++;
    declare(S, sym);
}

/* ---- statements -------------------------------------------------------------- */

static void check_body(sema *S, kc_stmt *s)
{
    push_scope(S);
    check_stmt(S, s);
    pop_scope(S);
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
    s->case_expr = check_value(S, s->case_expr);
    if (is_err(s->case_expr->type))
        return;
    if (!int_scalar(s->case_expr)) {
        ERR(S, s->case_expr->loc, "a case value must be an integer, not '%s'", tname(S, s->case_expr->type));
        return;
    }
    s->case_value = to_iexpr(S, s->case_expr, IX_TUNABLES, "a case value");
    int64_t v, w;
    if (!s->case_value || !iexpr_value(s->case_value, &v))
        return;
    for (int i = 0; i < S->cases->len; i++) {
        kc_stmt *o = S->cases->items[i];
        if (iexpr_value(o->case_value, &w) && v == w) {
            ERR(S, s->loc, "duplicate case value %lld", (long long)v);
            kc_note_at(&S->c->diag, o->loc, "the first is here");
            return;
        }
    }
    kc_vec_push(&S->c->arena, S->cases, s);
}

static void check_switch(sema *S, kc_stmt *s)
{
    s->expr = check_value(S, s->expr);
    if (!is_err(s->expr->type)) {
        if (!int_scalar(s->expr) && s->expr->type->scalar != KC_S_BOOL)
            ERR(S, s->expr->loc, "switch needs an integer, not '%s'", tname(S, s->expr->type));
        else if (kc_scalar_bits(s->expr->type->scalar) != 32 || s->expr->type->scalar == KC_S_BOOL)
            s->expr = convert(S, s->expr, T(KC_S_INT), "in switch");
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
            s->expr = check(S, s->expr);
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
    s->expr = convert(S, check_value(S, s->expr), f->ret, "in the return value");
}

static void check_stmt(sema *S, kc_stmt *s)
{
    if (kc_diag_too_many(&S->c->diag))
        return;
    switch (s->kind) {
    case KC_S_EXPR:
        s->expr = check(S, s->expr);
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
        push_scope(S);
        for (int i = 0; i < s->body.len; i++)
            check_stmt(S, s->body.items[i]);
        pop_scope(S);
        S->block = saved;
        return;
    }
    case KC_S_IF:
        s->expr = to_bool(S, check_value(S, s->expr), "in 'if'");
        check_body(S, s->then);
        if (s->els)
            check_body(S, s->els);
        return;
    case KC_S_WHILE:
    case KC_S_DO:
        s->expr = to_bool(S, check_value(S, s->expr), s->kind == KC_S_DO ? "in 'do … while'" : "in 'while'");
        S->loops++;
        check_body(S, s->then);
        S->loops--;
        return;
    case KC_S_FOR:
        push_scope(S);
        if (s->init)
            check_stmt(S, s->init);
        if (s->expr)
            s->expr = to_bool(S, check_value(S, s->expr), "in the loop condition");
        if (s->step)
            s->step = check(S, s->step);
        S->loops++;
        check_body(S, s->then);
        S->loops--;
        pop_scope(S);
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

static bool falls_through(const kc_stmt *s)
{
    if (!s)
        return true;
    switch (s->kind) {
    case KC_S_RETURN: return false;
    case KC_S_BLOCK:
        for (int i = 0; i < s->body.len; i++)
            if (!falls_through(s->body.items[i]))
                return false;
        return true;
    case KC_S_IF: return !s->els || falls_through(s->then) || falls_through(s->els);
    case KC_S_WHILE:
    case KC_S_FOR: {
        cval v = fold(s->expr);
        bool forever = !s->expr || (v.ok && (v.is_float ? v.f != 0 : v.i != 0));
        return !forever || has_break(s->then, 0);
    }
    case KC_S_DO: return falls_through(s->then) || has_break(s->then, 0);
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
            if (!falls_through(body->body.items[i]))
                return false;
        return true;
    }
    default: return true;
    }
}

/* ---- functions ------------------------------------------------------------------ */

static bool kernel_scalar_ok(const kc_type *t)
{
    return t->kind == KC_TY_SCALAR && kc_scalar_arg_bytes(t->scalar) > 0; /* kc_lang.h's scalar ABI */
}

static void check_param(sema *S, kc_func *f, kc_sym *p)
{
    if (!p->is_buffer) {
        if (!is_err(p->type) && p->type->scalar == KC_S_VOID)
            ERR(S, p->loc, "parameter '%s' cannot have type void", p->name);
        else if (f->is_kernel && !is_err(p->type) && !kernel_scalar_ok(p->type)) {
            ERR(S, p->loc, "kernel parameter '%s' cannot be '%s'", p->name, tname(S, p->type));
            FIX(S, "a kernel's scalars are int, uint, float, half or bool; pass vectors in a buffer");
        }
        declare(S, p);
        return;
    }
    /* Buffers (kernels) and array references (helpers); the extents of a
     * kernel buffer may name the integer parameters declared before it. */
    p->storage = f->is_kernel ? KC_STORE_BUFFER : KC_STORE_REF;
    p->type = declarator_type(S, p, f->is_kernel ? IX_PARAMS : IX_TUNABLES, true, 0);
    if (p->dim_exprs.len == 0 && !is_err(p->type)) /* float *x */
        p->type = kc_type_array(&S->c->arena, p->type, NULL);
    if (f->is_kernel && !is_err(p->type) && p->type->kind == KC_TY_ARRAY && !p->type->len && p->dim_exprs.len == 0)
        kc_vec_push(&S->c->arena, &p->dims, NULL);
    declare(S, p);
}

static void check_attrs(sema *S, kc_func *f)
{
    if (!f->is_kernel) {
        if (f->wg[0] || f->grid[0])
            ERR(S, f->wg[0] ? f->wg_loc : f->grid_loc, "only kernels take KC_WORKGROUP and KC_GRID");
        if (f->may_alias)
            ERR(S, f->loc, "KC_MAY_ALIAS marks kernels, and '%s' is not one", f->name);
        return;
    }
    if (!f->wg[0]) {
        ERR(S, f->loc, "kernel '%s' needs KC_WORKGROUP(x, y, z)", f->name);
        FIX(S, "add KC_WORKGROUP(64, 1, 1) before the return type, or a tunable size");
    }
    if (!f->grid[0]) {
        ERR(S, f->loc, "kernel '%s' needs KC_GRID(x, y, z): how many workgroups to launch", f->name);
        FIX(S, "for n items and a workgroup of WG: KC_GRID(kc_cdiv(n, WG), 1, 1)");
    }
    for (int i = 0; i < 3; i++) {
        if (f->wg[i]) {
            f->wg[i] = check_value(S, f->wg[i]);
            f->wg_size[i] = to_iexpr(S, f->wg[i], IX_TUNABLES, "KC_WORKGROUP");
            int64_t v;
            if (f->wg_size[i] && iexpr_value(f->wg_size[i], &v) && (v < 1 || v > 1024))
                ERR(S, f->wg[i]->loc, "a workgroup size must be between 1 and 1024, not %lld", (long long)v);
        }
        if (f->grid[i]) {
            f->grid[i] = check(S, f->grid[i]); /* to_iexpr says what a buffer name is doing here */
            f->grid_size[i] = to_iexpr(S, f->grid[i], IX_GRID, "KC_GRID");
        }
    }
}

static void check_func(sema *S, kc_func *f)
{
    S->fn = f;
    S->loops = S->switches = 0;
    S->block = S->switch_body = NULL;
    push_scope(S);
    if (!is_err(f->ret) && f->ret->kind == KC_TY_SCALAR && f->is_kernel && f->ret->scalar != KC_S_VOID)
        ERR(S, f->loc, "kernel '%s' must return void", f->name);
    for (int i = 0; i < f->params.len; i++)
        check_param(S, f, f->params.items[i]);
    check_attrs(S, f);
    check_stmt(S, f->body);
    if (!f->is_kernel && f->ret->scalar != KC_S_VOID && !is_err(f->ret) && falls_through(f->body)) {
        ERR(S, f->loc, "'%s' can reach its end without returning a value", f->name);
        FIX(S, "end every path with 'return …;'");
    }
    pop_scope(S);
    S->fn = NULL;
}

static bool same_signature(const kc_func *a, const kc_func *b)
{
    if (a->params.len != b->params.len || a->is_kernel != b->is_kernel || !kc_type_equal(a->ret, b->ret))
        return false;
    for (int i = 0; i < a->params.len; i++) {
        const kc_sym *p = a->params.items[i], *q = b->params.items[i];
        if (p->is_buffer != q->is_buffer || !kc_type_equal(p->type, q->type))
            return false;
    }
    return true;
}

/* Names starting with __kc_ belong to kc's own math library. */
static bool reserved_name(sema *S, const char *name, kc_loc loc)
{
    if (strncmp(name, "__kc_", 5) != 0 || (loc.file >= 0 && S->c->src.files[loc.file]->builtin))
        return false;
    ERR(S, loc, "names starting with '__kc_' are reserved for kc");
    return true;
}

static kc_sym *global_sym(sema *S, kc_sym_kind kind, const char *name, kc_loc loc)
{
    if (reserved_name(S, name, loc))
        return NULL;
    kc_sym *old = kc_map_get(&S->globals, name);
    if (old) {
        ERR(S, loc, "'%s' is already defined", name);
        kc_note_at(&S->c->diag, old->loc, "the earlier definition is here");
        return NULL;
    }
    if (kc_builtin_lookup(name) >= 0 || ctor_type(name)) {
        ERR(S, loc, "'%s' is the name of a built-in function", name);
        return NULL;
    }
    kc_sym *sym = KC_NEW(&S->c->arena, kc_sym);
    sym->kind = kind;
    sym->name = name;
    sym->loc = loc;
    kc_map_put(&S->c->arena, &S->globals, name, sym);
    return sym;
}

/* Merges prototypes with definitions; returns the functions to check. */
static void declare_funcs(sema *S, kc_program *p)
{
    kc_vec defined = {0};
    for (int i = 0; i < p->funcs.len; i++) {
        kc_func *f = p->funcs.items[i];
        kc_sym *old = kc_map_get(&S->globals, f->name);
        if (old && old->kind == KC_SYM_FUNC) {
            kc_func *g = old->func;
            if (g->defined && f->defined) {
                ERR(S, f->loc, "'%s' is defined twice", f->name);
                kc_note_at(&S->c->diag, g->loc, "the first definition is here");
                continue;
            }
            if (!same_signature(f, g)) {
                ERR(S, f->loc, "'%s' does not match its earlier declaration", f->name);
                kc_note_at(&S->c->diag, g->loc, "declared here");
            }
            if (f->defined) {
                old->func = f;
                for (int k = 0; k < defined.len; k++)
                    if (defined.items[k] == g)
                        defined.items[k] = f;
                g->body = NULL;
                f->is_static |= g->is_static;
            }
            continue;
        }
        kc_sym *sym = global_sym(S, KC_SYM_FUNC, f->name, f->loc);
        if (!sym)
            continue;
        sym->func = f;
        kc_vec_push(&S->c->arena, &defined, f);
    }
    p->funcs = defined;
}

static void check_tunables(sema *S, kc_program *p)
{
    for (int i = 0; i < p->tunables.len; i++) {
        kc_tunable *t = p->tunables.items[i];
        kc_sym *sym = global_sym(S, KC_SYM_TUNABLE, t->name, t->loc);
        if (sym)
            sym->tunable = t, sym->type = T(KC_S_INT);
        if (t->exprs.len < 2) {
            ERR(S, t->loc, "KC_TUNE(%s, …) needs a default and the values to try", t->name);
            FIX(S, "KC_TUNE(%s, 64, 32, 64, 128): the default first, then every candidate", t->name);
            continue;
        }
        if (t->exprs.len - 1 > KC_MAX_TUNABLE_VALUES) {
            ERR(S, t->loc, "tunable '%s' has %d values; the limit is %d", t->name, t->exprs.len - 1, KC_MAX_TUNABLE_VALUES);
            continue;
        }
        t->values = kc_arena_alloc(&S->c->arena, sizeof(int64_t) * (size_t)t->exprs.len);
        for (int k = 0; k < t->exprs.len; k++) {
            kc_expr *e = t->exprs.items[k] = check_value(S, t->exprs.items[k]);
            cval v = fold(e);
            if (is_err(e->type))
                continue;
            if (!v.ok || v.is_float || !const_fits(v, T(KC_S_INT))) {
                ERR(S, e->loc, "a value of tunable '%s' must be an integer constant", t->name);
                continue;
            }
            if (k == 0) {
                t->def = v.i;
                continue;
            }
            bool dup = false;
            for (int j = 0; j < t->nvalues; j++)
                dup |= t->values[j] == v.i;
            if (dup)
                kc_warn_at(&S->c->diag, e->loc, "%lld is listed twice for '%s'", (long long)v.i, t->name);
            else
                t->values[t->nvalues++] = v.i;
        }
        bool found = false;
        for (int j = 0; j < t->nvalues; j++)
            found |= t->values[j] == t->def;
        if (!found && t->nvalues) {
            ERR(S, ((kc_expr *)t->exprs.items[0])->loc, "the default of '%s' (%lld) is not one of its values",
                t->name, (long long)t->def);
            FIX(S, "add %lld to the list of values", (long long)t->def);
        }
    }
}

static void check_consts(sema *S, kc_program *p)
{
    for (int i = 0; i < p->consts.len; i++) {
        kc_sym *c = p->consts.items[i];
        int count = c->init && c->init->kind == KC_E_INIT ? c->init->args.len : 0;
        c->type = declarator_type(S, c, IX_TUNABLES, false, count);
        if (!is_err(c->type) && c->type->kind == KC_TY_ARRAY) {
            int64_t n;
            if (!iexpr_value(c->type->len, &n))
                ERR(S, c->loc, "the extent of constant array '%s' must be a constant, not a tunable", c->name);
            else
                check_init_list(S, c, c->type, c->init, true);
        } else if (!is_err(c->type)) {
            c->init = check_scalar_init(S, c, c->type, c->init, true);
            cval v = fold(c->init);
            c->const_ival = v.i;
            c->const_fval = v.is_float ? v.f : (double)v.i;
        }
        kc_sym *sym = global_sym(S, KC_SYM_CONST, c->name, c->loc);
        if (sym)
            kc_map_put(&S->c->arena, &S->globals, c->name, c);
    }
}

static bool tunable_default(void *user, const char *name, int64_t *v)
{
    const kc_program *p = user;
    for (int i = 0; i < p->tunables.len; i++) {
        const kc_tunable *t = p->tunables.items[i];
        if (strcmp(t->name, name) == 0) {
            *v = t->def;
            return true;
        }
    }
    return false;
}

static void check_requires(sema *S, kc_program *p)
{
    for (int i = 0; i < p->requires.len; i++) {
        kc_require *r = p->requires.items[i];
        r->expr = check_value(S, r->expr);
        if (is_err(r->expr->type))
            continue;
        r->cond = to_iexpr(S, r->expr, IX_TUNABLES, "KC_REQUIRE");
        int64_t v;
        if (r->cond && iexpr_value(r->cond, &v) && !v)
            ERR(S, r->loc, "this KC_REQUIRE is always false");
        else if (r->cond && kc_iexpr_eval(r->cond, tunable_default, p, &v, NULL, 0) && !v) {
            /* the runtime falls back to the default variant: it must be valid */
            ERR(S, r->loc, "the tunables' defaults break this KC_REQUIRE");
            FIX(S, "pick defaults that satisfy it");
        }
    }
}

/* Recursion is refused, once per cycle, at the call that closes it; the
 * walk also folds each callee's tunables and feature flags into its
 * callers, so a kernel knows its whole space. */
static void report_cycle(sema *S, const kc_vec *stack, const kc_func *f, const kc_expr *call)
{
    int from = stack->len - 1;
    while (from > 0 && stack->items[from] != f)
        from--;
    kc_buf chain = {0};
    for (int i = from; i < stack->len; i++)
        kc_buf_printf(&chain, "'%s' calls ", ((const kc_func *)stack->items[i])->name);
    kc_buf_printf(&chain, "'%s'", f->name);
    ERR(S, call->loc, "recursion is not in the language: %s", chain.data);
    FIX(S, "rewrite it as a loop");
    kc_buf_free(&chain);
}

static void visit_calls(sema *S, kc_func *f, kc_map *state, kc_vec *stack)
{
    kc_map_put(&S->c->arena, state, f->name, (void *)1);
    kc_vec_push(&S->c->arena, stack, f);
    for (int i = 0; i < f->callees.len; i++) {
        kc_func *g = f->callees.items[i];
        const kc_expr *call = f->call_sites.items[i];
        if (!g->defined) {
            ERR(S, call->loc, "'%s' is declared but never defined", g->name);
            g->defined = true; /* once */
            continue;
        }
        intptr_t st = (intptr_t)kc_map_get(state, g->name);
        if (st == 1) {
            report_cycle(S, stack, g, call);
            continue;
        }
        if (st == 0)
            visit_calls(S, g, state, stack);
        S->fn = f;
        for (int k = 0; k < g->tunables.len; k++)
            use_tunable(S, g->tunables.items[k]);
        S->fn = NULL;
        f->uses_subgroups |= g->uses_subgroups;
        f->uses_atomics |= g->uses_atomics;
        f->uses_half |= g->uses_half;
        f->uses_long |= g->uses_long;
    }
    stack->len--;
    kc_map_put(&S->c->arena, state, f->name, (void *)2);
}

/* A safety net: after sema without errors, every expression has a type.
 * A node without one means a check returned early without a message,
 * which must never let a broken program through. */
static bool typed_expr(const kc_expr *e, kc_loc *where)
{
    if (!e)
        return true;
    if (!e->type || e->type->kind == KC_TY_ERROR) {
        *where = e->loc;
        return false;
    }
    if (!typed_expr(e->a, where) || !typed_expr(e->b, where) || !typed_expr(e->c, where))
        return false;
    for (int i = 0; i < e->args.len; i++)
        if (!typed_expr(e->args.items[i], where))
            return false;
    return true;
}

static bool typed_stmt(const kc_stmt *s, kc_loc *where)
{
    if (!s)
        return true;
    if (!typed_expr(s->expr, where) || !typed_expr(s->step, where) || !typed_stmt(s->init, where) ||
        !typed_stmt(s->then, where) || !typed_stmt(s->els, where))
        return false;
    if (s->kind == KC_S_CASE && !typed_expr(s->case_expr, where))
        return false;
    for (int i = 0; i < s->body.len; i++) {
        if (s->kind == KC_S_DECL) {
            const kc_sym *sym = s->body.items[i];
            if (sym->storage != KC_STORE_SHARED && !typed_expr(sym->init, where))
                return false;
        } else if (!typed_stmt(s->body.items[i], where)) {
            return false;
        }
    }
    return true;
}

void kc_sema(kc_ctx *c, kc_program *p)
{
    sema S = {0};
    S.c = c;
    S.prog = p;
    check_tunables(&S, p);
    check_consts(&S, p);
    declare_funcs(&S, p);
    check_requires(&S, p);
    for (int i = 0; i < p->funcs.len; i++) {
        kc_func *f = p->funcs.items[i];
        if (f->body)
            check_func(&S, f);
        else if (f->is_kernel)
            ERR(&S, f->loc, "kernel '%s' is declared but has no body", f->name);
        if (kc_diag_too_many(&c->diag))
            return;
    }
    kc_map state = {0};
    kc_vec stack = {0};
    for (int i = 0; i < p->funcs.len; i++)
        if (!kc_map_get(&state, ((kc_func *)p->funcs.items[i])->name))
            visit_calls(&S, p->funcs.items[i], &state, &stack);
    for (int i = 0; i < p->funcs.len; i++) { /* a space kc can list, build and tune */
        const kc_func *f = p->funcs.items[i];
        double size = 1;
        for (int k = 0; f->is_kernel && k < f->tunables.len; k++)
            size *= ((const kc_tunable *)f->tunables.items[k])->nvalues;
        if (size > KC_MAX_SPACE)
            ERR(&S, f->loc, "kernel '%s' has a search space of %.0f variants; the limit is %d", f->name, size,
                KC_MAX_SPACE);
    }
    for (int i = 0; !c->diag.nerrors && i < p->funcs.len; i++) {
        kc_loc where;
        const kc_func *f = p->funcs.items[i];
        if (f->body && !typed_stmt(f->body, &where))
            kc_error_at(&c->diag, where, "internal error: kc could not check this expression; please report it");
    }
}
