/*
 * types.c — kc's types, and the rows of kc_lang.h's tables of scalars,
 * operators and built-ins that code reads.
 * Scalar and vector types are singletons, so most comparisons are pointer
 * comparisons; arrays are made in the arena.
 */
#include "kc_lang.h"

#include "kc_iexpr.h"

#include <string.h>

static const struct {
    const char *name;
    int bits;
    bool is_float, is_signed;
    int bytes, arg_bytes, push_bytes;
} scalars[KC_S_COUNT] = {
#define X(n, s, b, f, sg, by, ab, pb) [KC_S_##n] = {s, b, f, sg, by, ab, pb},
    KC_SCALARS(X)
#undef X
};

/* One constant table of every scalar and vector type (lanes 1, 2, 4). */
#define ROW(s)                                                                                     \
    {{KC_TY_ERROR, s, 0, NULL, NULL}, {KC_TY_SCALAR, s, 1, NULL, NULL},                             \
     {KC_TY_VECTOR, s, 2, NULL, NULL}, {KC_TY_ERROR, s, 0, NULL, NULL},                             \
     {KC_TY_VECTOR, s, 4, NULL, NULL}}
static const kc_type table[KC_S_COUNT][5] = {
#define X(n, ...) [KC_S_##n] = ROW(KC_S_##n),
    KC_SCALARS(X)
#undef X
};
static const kc_type error_type = {KC_TY_ERROR, KC_S_VOID, 1, NULL, NULL};

const kc_type *kc_type_vector(kc_scalar s, int lanes)
{
    return &table[s][lanes == 2 || lanes == 4 ? lanes : 1];
}

const kc_type *kc_type_scalar(kc_scalar s) { return kc_type_vector(s, 1); }
const kc_type *kc_type_error(void) { return &error_type; }

const kc_type *kc_type_array(kc_arena *a, const kc_type *elem, kc_iexpr *len)
{
    kc_type *t = KC_NEW(a, kc_type);
    t->kind = KC_TY_ARRAY;
    t->scalar = elem->scalar;
    t->lanes = elem->lanes;
    t->elem = elem;
    t->len = len;
    return t;
}

bool kc_type_equal(const kc_type *a, const kc_type *b)
{
    if (a == b)
        return true;
    if (a->kind != b->kind)
        return false;
    if (a->kind != KC_TY_ARRAY)
        return a->scalar == b->scalar && a->lanes == b->lanes;
    if (!kc_type_equal(a->elem, b->elem))
        return false;
    if (!a->len || !b->len)
        return true;
    return a->len->op == KC_IX_CONST && b->len->op == KC_IX_CONST && a->len->value == b->len->value;
}

bool kc_scalar_is_float(kc_scalar s) { return scalars[s].is_float; }
bool kc_scalar_is_signed(kc_scalar s) { return scalars[s].is_signed; }
int kc_scalar_bits(kc_scalar s) { return scalars[s].bits; }
const char *kc_scalar_name(kc_scalar s) { return scalars[s].name; }
int kc_scalar_bytes(kc_scalar s) { return scalars[s].bytes; }
int kc_scalar_arg_bytes(kc_scalar s) { return scalars[s].arg_bytes; }
int kc_scalar_push_bytes(kc_scalar s) { return scalars[s].push_bytes; }
int kc_type_bytes(const kc_type *t) { return scalars[t->scalar].bytes * t->lanes; }

bool kc_type_is_int(const kc_type *t)
{
    return (t->kind == KC_TY_SCALAR || t->kind == KC_TY_VECTOR) && !scalars[t->scalar].is_float &&
           t->scalar != KC_S_BOOL && t->scalar != KC_S_VOID;
}

bool kc_type_is_float(const kc_type *t)
{
    return (t->kind == KC_TY_SCALAR || t->kind == KC_TY_VECTOR) && scalars[t->scalar].is_float;
}

bool kc_type_is_arith(const kc_type *t) { return kc_type_is_int(t) || kc_type_is_float(t); }

const kc_type *kc_type_base(const kc_type *t)
{
    while (t->kind == KC_TY_ARRAY)
        t = t->elem;
    return t;
}

const char *kc_type_name(kc_arena *a, const kc_type *t)
{
    if (t->kind == KC_TY_ERROR)
        return "<error>";
    if (t->kind == KC_TY_SCALAR)
        return scalars[t->scalar].name;
    if (t->kind == KC_TY_VECTOR)
        return kc_arena_printf(a, "%s%d", scalars[t->scalar].name, t->lanes);
    kc_buf b = {0};
    kc_buf_puts(&b, kc_type_name(a, kc_type_base(t)));
    for (const kc_type *u = t; u->kind == KC_TY_ARRAY; u = u->elem) {
        kc_buf_putc(&b, '[');
        if (u->len)
            kc_iexpr_write_infix(&b, u->len);
        kc_buf_putc(&b, ']');
    }
    const char *s = kc_arena_strdup(a, b.data);
    kc_buf_free(&b);
    return s;
}

const kc_builtin_info kc_builtins[KC_B_COUNT] = {
#define X(id, name, n, rule, ...) [KC_B_##id] = {name, n, KC_RULE_##rule},
    KC_BUILTINS(X)
#undef X
};

int kc_builtin_lookup(const char *name)
{
    for (int i = 0; i < KC_B_COUNT; i++)
        if (strcmp(kc_builtins[i].name, name) == 0)
            return i;
    return -1;
}

const char *kc_op_text(kc_op op)
{
    return op < KC_OP_COUNT ? kc_iexpr_op_spelling(kc_iexpr_op_of(op)) : "?";
}

int kc_op_precedence(kc_op op)
{
    return kc_iexpr_precedence(kc_iexpr_op_of(op));
}

int kc_op_arity(kc_op op)
{
    return kc_iexpr_arity(kc_iexpr_op_of(op));
}
