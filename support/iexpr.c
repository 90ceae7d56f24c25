/*
 * iexpr.c — integer expression trees: construction, evaluation, and the
 * postfix (bundle) and infix (human) text forms. Operator semantics live in
 * iexpr_eval.c, once.
 */
#include "kc_iexpr.h"

#include <stdlib.h>
#include <string.h>

kc_iexpr *kc_iexpr_const(kc_arena *a, int64_t v)
{
    kc_iexpr *e = KC_NEW(a, kc_iexpr);
    e->op = KC_IX_CONST;
    e->value = v;
    return e;
}

kc_iexpr *kc_iexpr_name(kc_arena *a, const char *name)
{
    kc_iexpr *e = KC_NEW(a, kc_iexpr);
    e->op = KC_IX_NAME;
    e->name = name;
    return e;
}

kc_iexpr *kc_iexpr_make(kc_arena *a, kc_iexpr_op op, kc_iexpr *x, kc_iexpr *y, kc_iexpr *z)
{
    kc_iexpr *e = KC_NEW(a, kc_iexpr);
    e->op = op;
    e->a = x, e->b = y, e->c = z;
    return e;
}

bool kc_iexpr_eval(const kc_iexpr *e, kc_iexpr_lookup lookup, void *user, int64_t *out,
                   char *err, size_t errlen)
{
    if (e->op == KC_IX_CONST) {
        *out = e->value;
        return true;
    }
    if (e->op == KC_IX_NAME) {
        if (lookup && lookup(user, e->name, out))
            return true;
        if (err && errlen)
            snprintf(err, errlen, "'%s' has no value", e->name);
        return false;
    }
    int64_t v[3] = {0, 0, 0};
    /* && || ?: short-circuit, so a guarded division is fine. */
    if (!kc_iexpr_eval(e->a, lookup, user, &v[0], err, errlen))
        return false;
    if (e->op == KC_IX_LAND && !v[0])
        return *out = 0, true;
    if (e->op == KC_IX_LOR && v[0])
        return *out = 1, true;
    if (e->op == KC_IX_SELECT)
        return kc_iexpr_eval(v[0] ? e->b : e->c, lookup, user, out, err, errlen);
    if (e->b && !kc_iexpr_eval(e->b, lookup, user, &v[1], err, errlen))
        return false;
    return kc_iexpr_apply(e->op, v, out, err, errlen);
}

void kc_iexpr_write_postfix(kc_buf *b, const kc_iexpr *e)
{
    switch (e->op) {
    case KC_IX_CONST: kc_buf_printf(b, "%lld", (long long)e->value); return;
    case KC_IX_NAME: kc_buf_puts(b, e->name); return;
    default: break;
    }
    kc_iexpr_write_postfix(b, e->a);
    if (e->b)
        kc_buf_putc(b, ' '), kc_iexpr_write_postfix(b, e->b);
    if (e->c)
        kc_buf_putc(b, ' '), kc_iexpr_write_postfix(b, e->c);
    kc_buf_printf(b, " %s", kc_iexpr_op_text(e->op));
}

/* C precedence levels, higher binds tighter. */
static int prec(kc_iexpr_op op)
{
    switch (op) {
    case KC_IX_SELECT: return 1;
    case KC_IX_LOR: return 2;
    case KC_IX_LAND: return 3;
    case KC_IX_OR: return 4;
    case KC_IX_XOR: return 5;
    case KC_IX_AND: return 6;
    case KC_IX_EQ: case KC_IX_NE: return 7;
    case KC_IX_LT: case KC_IX_LE: case KC_IX_GT: case KC_IX_GE: return 8;
    case KC_IX_SHL: case KC_IX_SHR: return 9;
    case KC_IX_ADD: case KC_IX_SUB: return 10;
    case KC_IX_MUL: case KC_IX_DIV: case KC_IX_MOD: return 11;
    case KC_IX_NEG: case KC_IX_NOT: case KC_IX_BNOT: return 12;
    default: return 13; /* leaves and calls */
    }
}

static void infix(kc_buf *b, const kc_iexpr *e, int outer)
{
    int p = prec(e->op);
    bool paren = p < outer;
    if (paren)
        kc_buf_putc(b, '(');
    switch (e->op) {
    case KC_IX_CONST: kc_buf_printf(b, "%lld", (long long)e->value); break;
    case KC_IX_NAME: kc_buf_puts(b, e->name); break;
    case KC_IX_NEG: kc_buf_putc(b, '-'), infix(b, e->a, p); break;
    case KC_IX_NOT: case KC_IX_BNOT:
        kc_buf_puts(b, kc_iexpr_op_text(e->op)), infix(b, e->a, p);
        break;
    case KC_IX_MIN: case KC_IX_MAX: case KC_IX_CDIV:
        kc_buf_puts(b, e->op == KC_IX_CDIV ? "kc_cdiv(" : kc_iexpr_op_text(e->op));
        if (e->op != KC_IX_CDIV)
            kc_buf_putc(b, '(');
        infix(b, e->a, 0), kc_buf_puts(b, ", "), infix(b, e->b, 0), kc_buf_putc(b, ')');
        break;
    case KC_IX_SELECT:
        infix(b, e->a, p + 1), kc_buf_puts(b, " ? "), infix(b, e->b, p + 1);
        kc_buf_puts(b, " : "), infix(b, e->c, p);
        break;
    default: /* binary, left-associative */
        infix(b, e->a, p), kc_buf_printf(b, " %s ", kc_iexpr_op_text(e->op)), infix(b, e->b, p + 1);
        break;
    }
    if (paren)
        kc_buf_putc(b, ')');
}

void kc_iexpr_write_infix(kc_buf *b, const kc_iexpr *e)
{
    infix(b, e, 0);
}

kc_iexpr *kc_iexpr_parse_postfix(kc_arena *a, const char *text, char *err, size_t errlen)
{
    kc_iexpr *stack[64];
    int sp = 0;
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        const char *start = p;
        while (*p && *p != ' ')
            p++;
        size_t len = (size_t)(p - start);
        kc_iexpr_op op = kc_iexpr_op_from_text(start, len);
        kc_iexpr *e;
        if (op != KC_IX_NOPS) {
            int n = kc_iexpr_arity(op);
            if (sp < n)
                goto bad;
            sp -= n;
            e = kc_iexpr_make(a, op, stack[sp], n > 1 ? stack[sp + 1] : NULL, n > 2 ? stack[sp + 2] : NULL);
        } else if ((*start >= '0' && *start <= '9') || *start == '-') {
            char *end;
            long long v = strtoll(start, &end, 10);
            if (end != p)
                goto bad;
            e = kc_iexpr_const(a, v);
        } else {
            e = kc_iexpr_name(a, kc_arena_strndup(a, start, len));
        }
        if (sp == 64)
            goto bad;
        stack[sp++] = e;
    }
    if (sp == 1)
        return stack[0];
bad:
    if (err && errlen)
        snprintf(err, errlen, "malformed expression '%s'", text);
    return NULL;
}

void kc_iexpr_each_name(const kc_iexpr *e, void (*fn)(void *user, const char *name), void *user)
{
    if (!e)
        return;
    if (e->op == KC_IX_NAME)
        fn(user, e->name);
    kc_iexpr_each_name(e->a, fn, user);
    kc_iexpr_each_name(e->b, fn, user);
    kc_iexpr_each_name(e->c, fn, user);
}

/* ---- infix text ---------------------------------------------------------------- */

typedef struct infix_parser {
    kc_arena *a;
    const char *p;
    char *err;
    size_t errlen;
    int depth;
    bool failed;
} infix_parser;

static kc_iexpr *ip_expr(infix_parser *P, int min_prec);

static void ip_fail(infix_parser *P, const char *what)
{
    if (!P->failed && P->err && P->errlen)
        snprintf(P->err, P->errlen, "%s at '%.20s'", what, *P->p ? P->p : "end");
    P->failed = true;
}

static void ip_space(infix_parser *P)
{
    while (*P->p == ' ' || *P->p == '\t')
        P->p++;
}

static bool ip_accept(infix_parser *P, const char *s)
{
    ip_space(P);
    size_t n = strlen(s);
    if (strncmp(P->p, s, n) != 0)
        return false;
    P->p += n;
    return true;
}

/* primary = integer | name | name "(" expr "," expr ")" | "(" expr ")" | unary primary */
static kc_iexpr *ip_primary(infix_parser *P)
{
    ip_space(P);
    if (++P->depth > 200) {
        ip_fail(P, "expression nested too deeply");
        return NULL;
    }
    kc_iexpr *r = NULL;
    const char *s = P->p;
    if (ip_accept(P, "(")) {
        r = ip_expr(P, 1);
        if (!ip_accept(P, ")"))
            ip_fail(P, "expected ')'");
    } else if (*s == '-' || *s == '!' || *s == '~' || *s == '+') {
        P->p++;
        kc_iexpr *x = ip_primary(P);
        r = *s == '+' ? x : kc_iexpr_make(P->a, *s == '-' ? KC_IX_NEG : *s == '!' ? KC_IX_NOT : KC_IX_BNOT, x, NULL, NULL);
    } else if (*s >= '0' && *s <= '9') {
        char *end;
        long long v = strtoll(s, &end, 0);
        P->p = end;
        r = kc_iexpr_const(P->a, v);
    } else if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_') {
        while ((*P->p >= 'a' && *P->p <= 'z') || (*P->p >= 'A' && *P->p <= 'Z') || *P->p == '_' ||
               (*P->p >= '0' && *P->p <= '9'))
            P->p++;
        size_t n = (size_t)(P->p - s);
        if (ip_accept(P, "(")) {
            kc_iexpr_op op = n == 3 && !strncmp(s, "min", 3)       ? KC_IX_MIN
                             : n == 3 && !strncmp(s, "max", 3)     ? KC_IX_MAX
                             : n == 7 && !strncmp(s, "kc_cdiv", 7) ? KC_IX_CDIV
                                                                   : KC_IX_NOPS;
            if (op == KC_IX_NOPS)
                ip_fail(P, "unknown function");
            kc_iexpr *x = ip_expr(P, 1);
            if (!ip_accept(P, ","))
                ip_fail(P, "expected ','");
            kc_iexpr *y = ip_expr(P, 1);
            if (!ip_accept(P, ")"))
                ip_fail(P, "expected ')'");
            r = kc_iexpr_make(P->a, op, x, y, NULL);
        } else {
            r = kc_iexpr_name(P->a, kc_arena_strndup(P->a, s, n));
        }
    } else {
        ip_fail(P, "expected a number or a name");
    }
    P->depth--;
    return r;
}

static const struct {
    const char *s;
    kc_iexpr_op op;
    int prec;
} infix_ops[] = {
    {"||", KC_IX_LOR, 2}, {"&&", KC_IX_LAND, 3}, {"==", KC_IX_EQ, 7}, {"!=", KC_IX_NE, 7},
    {"<=", KC_IX_LE, 8},  {">=", KC_IX_GE, 8},   {"<<", KC_IX_SHL, 9}, {">>", KC_IX_SHR, 9},
    {"|", KC_IX_OR, 4},   {"^", KC_IX_XOR, 5},   {"&", KC_IX_AND, 6},  {"<", KC_IX_LT, 8},
    {">", KC_IX_GT, 8},   {"+", KC_IX_ADD, 10},  {"-", KC_IX_SUB, 10}, {"*", KC_IX_MUL, 11},
    {"/", KC_IX_DIV, 11}, {"%", KC_IX_MOD, 11},
};

/* Precedence climbing over C's binary operators, then ?: at the lowest. */
static kc_iexpr *ip_expr(infix_parser *P, int min_prec)
{
    kc_iexpr *lhs = ip_primary(P);
    for (;;) {
        ip_space(P);
        int k = -1; /* the longest operator here (two-character ones are listed first) */
        for (size_t i = 0; i < KC_COUNT(infix_ops) && k < 0; i++)
            if (strncmp(P->p, infix_ops[i].s, strlen(infix_ops[i].s)) == 0)
                k = (int)i;
        if (k < 0 || infix_ops[k].prec < min_prec || P->failed)
            break;
        P->p += strlen(infix_ops[k].s);
        kc_iexpr *rhs = ip_expr(P, infix_ops[k].prec + 1);
        lhs = kc_iexpr_make(P->a, infix_ops[k].op, lhs, rhs, NULL);
    }
    if (min_prec <= 1 && ip_accept(P, "?")) {
        kc_iexpr *b = ip_expr(P, 1);
        if (!ip_accept(P, ":"))
            ip_fail(P, "expected ':'");
        kc_iexpr *c = ip_expr(P, 1);
        lhs = kc_iexpr_make(P->a, KC_IX_SELECT, lhs, b, c);
    }
    return lhs;
}

kc_iexpr *kc_iexpr_parse_infix(kc_arena *a, const char *text, char *err, size_t errlen)
{
    infix_parser P = {a, text, err, errlen, 0, false};
    kc_iexpr *e = ip_expr(&P, 1);
    ip_space(&P);
    if (*P.p)
        ip_fail(&P, "unexpected text");
    return P.failed ? NULL : e;
}

kc_iexpr *kc_iexpr_fold(kc_arena *a, kc_iexpr *e)
{
    if (!e || e->op == KC_IX_CONST || e->op == KC_IX_NAME)
        return e;
    e->a = kc_iexpr_fold(a, e->a);
    e->b = kc_iexpr_fold(a, e->b);
    e->c = kc_iexpr_fold(a, e->c);
    int64_t v;
    return kc_iexpr_eval(e, NULL, NULL, &v, NULL, 0) ? kc_iexpr_const(a, v) : e;
}
