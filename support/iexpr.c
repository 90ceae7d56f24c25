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

void kc_iexpr_write_infix(kc_buf *b, const kc_iexpr *e)
{
    kc_buf post = {0};
    kc_iexpr_write_postfix(&post, e);
    size_t len = 4 * post.len + 64; /* infix adds at most "kc_", parentheses and ", " per postfix word */
    char *text = malloc(len);
    if (text) {
        kc_iexpr_postfix_to_infix(post.data, true, text, len);
        kc_buf_puts(b, text);
    }
    free(text);
    kc_buf_free(&post);
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
        r = ip_expr(P, KC_PREC_SELECT);
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
            kc_iexpr *x = ip_expr(P, KC_PREC_SELECT);
            if (!ip_accept(P, ","))
                ip_fail(P, "expected ','");
            kc_iexpr *y = ip_expr(P, KC_PREC_SELECT);
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

/* The binary operator the text begins with, the longest ("<=" before
 * "<"); KC_IX_NOPS when none. */
static kc_iexpr_op binary_at(const char *p)
{
    kc_iexpr_op best = KC_IX_NOPS;
    size_t longest = 0;
    for (int op = KC_IX_NEG; op < KC_IX_NOPS; op++) {
        const char *s = kc_iexpr_op_spelling((kc_iexpr_op)op);
        size_t n = strlen(s);
        if (kc_iexpr_arity((kc_iexpr_op)op) == 2 && kc_iexpr_precedence((kc_iexpr_op)op) < KC_PREC_CALL &&
            n > longest && strncmp(p, s, n) == 0)
            best = (kc_iexpr_op)op, longest = n;
    }
    return best;
}

/* Precedence climbing over C's binary operators, then ?: at the lowest. */
static kc_iexpr *ip_expr(infix_parser *P, int min_prec)
{
    kc_iexpr *lhs = ip_primary(P);
    for (;;) {
        ip_space(P);
        kc_iexpr_op op = binary_at(P->p);
        if (op == KC_IX_NOPS || kc_iexpr_precedence(op) < min_prec || P->failed)
            break;
        P->p += strlen(kc_iexpr_op_spelling(op));
        kc_iexpr *rhs = ip_expr(P, kc_iexpr_precedence(op) + 1);
        lhs = kc_iexpr_make(P->a, op, lhs, rhs, NULL);
    }
    if (min_prec <= KC_PREC_SELECT && ip_accept(P, "?")) {
        kc_iexpr *b = ip_expr(P, KC_PREC_SELECT);
        if (!ip_accept(P, ":"))
            ip_fail(P, "expected ':'");
        kc_iexpr *c = ip_expr(P, KC_PREC_SELECT);
        lhs = kc_iexpr_make(P->a, KC_IX_SELECT, lhs, b, c);
    }
    return lhs;
}

kc_iexpr *kc_iexpr_parse_infix(kc_arena *a, const char *text, char *err, size_t errlen)
{
    infix_parser P = {a, text, err, errlen, 0, false};
    kc_iexpr *e = ip_expr(&P, KC_PREC_SELECT);
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
