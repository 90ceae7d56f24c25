/*
 * iexpr_eval.c — the semantics of integer expressions and the postfix
 * evaluator. This file depends on nothing but libc so that libkcrt can
 * carry it; kc_iexpr.c builds the tree form on top of it.
 */
#include "kc_iexpr.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *text;     /* the postfix word */
    const char *spelling; /* in kc source */
    int arity, prec;
} ops[KC_IX_NOPS] = {
#define X(id, s, w, n, p, ...) [KC_IX_##id] = {w, s, n, p},
    KC_IEXPR_OPS(X)
#undef X
};

_Static_assert(KC_IX_LOR - KC_IX_NEG + 1 == KC_OP_COUNT, "kc_iexpr_op begins with kc_op's rows, in order");

int kc_iexpr_arity(kc_iexpr_op op)
{
    return op > KC_IX_NAME && op < KC_IX_NOPS ? ops[op].arity : 0;
}

const char *kc_iexpr_op_text(kc_iexpr_op op)
{
    return op > KC_IX_NAME && op < KC_IX_NOPS ? ops[op].text : "?";
}

const char *kc_iexpr_op_spelling(kc_iexpr_op op)
{
    return op > KC_IX_NAME && op < KC_IX_NOPS ? ops[op].spelling : "?";
}

int kc_iexpr_precedence(kc_iexpr_op op)
{
    return op > KC_IX_NAME && op < KC_IX_NOPS ? ops[op].prec : KC_PREC_CALL;
}

kc_iexpr_op kc_iexpr_op_from_text(const char *text, size_t len)
{
    for (int op = KC_IX_NAME + 1; op < KC_IX_NOPS; op++)
        if (strlen(ops[op].text) == len && memcmp(ops[op].text, text, len) == 0)
            return (kc_iexpr_op)op;
    return KC_IX_NOPS;
}

static bool fail(char *err, size_t errlen, const char *msg)
{
    if (err && errlen)
        snprintf(err, errlen, "%s", msg);
    return false;
}

bool kc_iexpr_apply(kc_iexpr_op op, const int64_t *v, int64_t *out, char *err, size_t errlen)
{
    int64_t a = v[0], b = kc_iexpr_arity(op) > 1 ? v[1] : 0, r = 0;
    switch (op) {
    case KC_IX_NEG:
        if (a == INT64_MIN)
            return fail(err, errlen, "integer overflow in negation");
        r = -a;
        break;
    case KC_IX_NOT: r = !a; break;
    case KC_IX_BNOT: r = ~a; break;
    case KC_IX_ADD:
        if (__builtin_add_overflow(a, b, &r))
            return fail(err, errlen, "integer overflow in '+'");
        break;
    case KC_IX_SUB:
        if (__builtin_sub_overflow(a, b, &r))
            return fail(err, errlen, "integer overflow in '-'");
        break;
    case KC_IX_MUL:
        if (__builtin_mul_overflow(a, b, &r))
            return fail(err, errlen, "integer overflow in '*'");
        break;
    case KC_IX_DIV:
    case KC_IX_MOD:
    case KC_IX_CDIV:
        if (b == 0)
            return fail(err, errlen, "division by zero");
        if (a == INT64_MIN && b == -1)
            return fail(err, errlen, "integer overflow in division");
        if (op == KC_IX_DIV)
            r = a / b;
        else if (op == KC_IX_MOD)
            r = a % b;
        else /* ceiling division, for any signs */
            r = a / b + ((a % b != 0) && ((a < 0) == (b < 0)));
        break;
    case KC_IX_SHL:
        if (b < 0 || b > 62 || a < 0 || (a >> (62 - b)) != 0)
            return fail(err, errlen, "shift out of range in '<<'");
        r = a << b;
        break;
    case KC_IX_SHR:
        if (b < 0 || b > 63)
            return fail(err, errlen, "shift out of range in '>>'");
        r = a >> b;
        break;
    case KC_IX_AND: r = a & b; break;
    case KC_IX_OR: r = a | b; break;
    case KC_IX_XOR: r = a ^ b; break;
    case KC_IX_LT: r = a < b; break;
    case KC_IX_LE: r = a <= b; break;
    case KC_IX_GT: r = a > b; break;
    case KC_IX_GE: r = a >= b; break;
    case KC_IX_EQ: r = a == b; break;
    case KC_IX_NE: r = a != b; break;
    case KC_IX_LAND: r = a && b; break;
    case KC_IX_LOR: r = a || b; break;
    case KC_IX_MIN: r = a < b ? a : b; break;
    case KC_IX_MAX: r = a > b ? a : b; break;
    case KC_IX_SELECT: r = a ? v[1] : v[2]; break;
    default: return fail(err, errlen, "bad operator");
    }
    *out = r;
    return true;
}

static bool is_name_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_name_char(char c)
{
    return is_name_start(c) || (c >= '0' && c <= '9');
}

bool kc_iexpr_eval_postfix(const char *text, kc_iexpr_lookup lookup, void *user, int64_t *out,
                           char *err, size_t errlen)
{
    int64_t stack[64];
    int sp = 0;
    const char *p = text;
    if (!p)
        return fail(err, errlen, "missing expression");
    for (;;) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        const char *start = p;
        while (*p && *p != ' ')
            p++;
        size_t len = (size_t)(p - start);
        char word[64];
        if (len >= sizeof(word))
            return fail(err, errlen, "malformed expression: word too long");
        memcpy(word, start, len);
        word[len] = 0;
        kc_iexpr_op op = kc_iexpr_op_from_text(word, len);
        if ((word[0] >= '0' && word[0] <= '9') || (word[0] == '-' && len > 1 && op == KC_IX_NOPS)) {
            char *end;
            errno = 0;
            long long v = strtoll(word, &end, 10);
            if (*end || errno == ERANGE)
                return fail(err, errlen, "malformed expression: bad number");
            if (sp == 64)
                return fail(err, errlen, "malformed expression: too deep");
            stack[sp++] = v;
        } else if (op != KC_IX_NOPS) {
            int n = kc_iexpr_arity(op);
            if (sp < n)
                return fail(err, errlen, "malformed expression: missing operand");
            sp -= n;
            if (!kc_iexpr_apply(op, stack + sp, &stack[sp], err, errlen))
                return false;
            sp++;
        } else if (is_name_start(word[0])) {
            for (size_t i = 1; i < len; i++)
                if (!is_name_char(word[i]))
                    return fail(err, errlen, "malformed expression: bad name");
            if (sp == 64)
                return fail(err, errlen, "malformed expression: too deep");
            if (!lookup || !lookup(user, word, &stack[sp])) {
                if (err && errlen)
                    snprintf(err, errlen, "'%s' has no value", word);
                return false;
            }
            sp++;
        } else {
            return fail(err, errlen, "malformed expression: unknown word");
        }
    }
    if (sp != 1)
        return fail(err, errlen, "malformed expression: operands left over");
    *out = stack[0];
    return true;
}

/* ---- the infix printer ---------------------------------------------------------------------------- */

/* One token of the postfix text and, for an operator, its operands. */
typedef struct infix_node {
    const char *text;
    size_t len;
    kc_iexpr_op op; /* KC_IX_NOPS for a leaf */
    int kid[3];
} infix_node;

typedef struct infix_writer {
    const infix_node *nodes;
    bool source;
    char *out;
    size_t len, at; /* at: what is written, or would be without the cut */
} infix_writer;

static void put(infix_writer *w, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++, w->at++)
        if (w->at + 1 < w->len)
            w->out[w->at] = s[i];
}

static void puts_(infix_writer *w, const char *s) { put(w, s, strlen(s)); }

static void write_node(infix_writer *w, int i, int outer)
{
    const infix_node *n = &w->nodes[i];
    kc_iexpr_op op = n->op;
    if (op == KC_IX_NOPS) {
        put(w, n->text, n->len);
        return;
    }
    int p = ops[op].prec;
    if (p < outer)
        puts_(w, "(");
    if (ops[op].arity == 1) {
        puts_(w, ops[op].spelling);
        write_node(w, n->kid[0], p);
    } else if (op == KC_IX_SELECT) {
        write_node(w, n->kid[0], p + 1), puts_(w, " ? ");
        write_node(w, n->kid[1], p + 1), puts_(w, " : ");
        write_node(w, n->kid[2], p);
    } else if (p == KC_PREC_CALL) {
        puts_(w, w->source ? ops[op].spelling : ops[op].text), puts_(w, "(");
        write_node(w, n->kid[0], 0), puts_(w, ", "), write_node(w, n->kid[1], 0), puts_(w, ")");
    } else { /* binary, left-associative: the right operand needs parentheses at equal precedence */
        write_node(w, n->kid[0], p), puts_(w, " "), puts_(w, ops[op].spelling), puts_(w, " ");
        write_node(w, n->kid[1], p + 1);
    }
    if (p < outer)
        puts_(w, ")");
}

/* Splits the postfix text into nodes, each operator over the ones before
 * it; the root's index, or -1 when the text is not one expression or nests
 * too deep. */
static int infix_tree(const char *text, infix_node *nodes, int *depth, int max)
{
    int stack[KC_IEXPR_MAX_DEPTH], sp = 0, n = 0;
    for (const char *p = text; *p;) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        const char *s = p;
        while (*p && *p != ' ')
            p++;
        if (n == max)
            return -1;
        infix_node *x = &nodes[n];
        *x = (infix_node){s, (size_t)(p - s), kc_iexpr_op_from_text(s, (size_t)(p - s)), {0}};
        int arity = x->op == KC_IX_NOPS ? 0 : ops[x->op].arity, d = 0;
        if (arity > sp || (arity == 0 && sp == KC_IEXPR_MAX_DEPTH))
            return -1;
        for (int k = 0; k < arity; k++) {
            x->kid[k] = stack[sp - arity + k];
            d = depth[x->kid[k]] > d ? depth[x->kid[k]] : d;
        }
        depth[n] = d + 1;
        if (depth[n] > KC_IEXPR_MAX_DEPTH)
            return -1;
        sp -= arity;
        stack[sp++] = n++;
    }
    return sp == 1 ? stack[0] : -1;
}

bool kc_iexpr_postfix_to_infix(const char *postfix, bool source, char *out, size_t len)
{
    if (!len)
        return false;
    postfix = postfix ? postfix : "";
    int max = (int)(strlen(postfix) / 2 + 1); /* tokens are separated by spaces */
    infix_node *nodes = malloc(sizeof(*nodes) * (size_t)max);
    int *depth = malloc(sizeof(int) * (size_t)max);
    int root = nodes && depth ? infix_tree(postfix, nodes, depth, max) : -1;
    if (root >= 0) {
        infix_writer w = {nodes, source, out, len, 0};
        write_node(&w, root, 0);
        out[w.at < len ? w.at : len - 1] = 0;
    } else {
        snprintf(out, len, "%s", postfix); /* not an expression: as it is */
    }
    free(nodes);
    free(depth);
    return root >= 0;
}
