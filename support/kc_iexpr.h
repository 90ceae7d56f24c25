/*
 * kc_iexpr.h — small integer expressions over kernel scalars and tunables.
 *
 * KC_GRID, KC_WORKGROUP, buffer extents (float x[n*m]) and KC_REQUIRE are
 * all integer expressions that must outlive the compiler: the bundle stores
 * them and libkcrt evaluates them at launch. The compiler builds them as
 * trees (in an arena); the bundle stores them as text in postfix order,
 * names for leaves, so that the runtime's evaluator is fifty lines with no
 * allocation:
 *
 *     kc_cdiv(n, WG * TM)   <->   "n WG TM * cdiv"
 *
 * Names are kernel scalar parameters or tunables (the front end forbids a
 * parameter that shadows a tunable, so a name means one thing). Arithmetic
 * is on int64; overflow, division by zero and out-of-range shifts are
 * errors, never wrapped values. Comparisons and && || ! give 0 or 1.
 */
#ifndef KC_IEXPR_H
#define KC_IEXPR_H

#include <stdbool.h>
#include <stdint.h>

#include "kc_support.h"

/* X(op, text, arity) — the one table of operators. */
#define KC_IEXPR_OPS(X)                                                                            \
    X(NEG, "neg", 1)                                                                               \
    X(NOT, "!", 1)                                                                                 \
    X(BNOT, "~", 1)                                                                                \
    X(ADD, "+", 2)                                                                                 \
    X(SUB, "-", 2)                                                                                 \
    X(MUL, "*", 2)                                                                                 \
    X(DIV, "/", 2)                                                                                 \
    X(MOD, "%", 2)                                                                                 \
    X(SHL, "<<", 2)                                                                                \
    X(SHR, ">>", 2)                                                                                \
    X(AND, "&", 2)                                                                                 \
    X(OR, "|", 2)                                                                                  \
    X(XOR, "^", 2)                                                                                 \
    X(LT, "<", 2)                                                                                  \
    X(LE, "<=", 2)                                                                                 \
    X(GT, ">", 2)                                                                                  \
    X(GE, ">=", 2)                                                                                 \
    X(EQ, "==", 2)                                                                                 \
    X(NE, "!=", 2)                                                                                 \
    X(LAND, "&&", 2)                                                                               \
    X(LOR, "||", 2)                                                                                \
    X(MIN, "min", 2)                                                                               \
    X(MAX, "max", 2)                                                                               \
    X(CDIV, "cdiv", 2)                                                                             \
    X(SELECT, "?:", 3)

typedef enum {
    KC_IX_CONST,
    KC_IX_NAME, /* a scalar parameter or a tunable */
#define X(op, text, arity) KC_IX_##op,
    KC_IEXPR_OPS(X)
#undef X
        KC_IX_NOPS
} kc_iexpr_op;

typedef struct kc_iexpr kc_iexpr;
struct kc_iexpr {
    kc_iexpr_op op;
    int64_t value;      /* KC_IX_CONST */
    const char *name;   /* KC_IX_NAME */
    kc_iexpr *a, *b, *c;
};

/* Looks a name up; returns false when the name has no value. */
typedef bool (*kc_iexpr_lookup)(void *user, const char *name, int64_t *value);

kc_iexpr *kc_iexpr_const(kc_arena *a, int64_t v);
kc_iexpr *kc_iexpr_name(kc_arena *a, const char *name);
kc_iexpr *kc_iexpr_make(kc_arena *a, kc_iexpr_op op, kc_iexpr *x, kc_iexpr *y, kc_iexpr *z);
int kc_iexpr_arity(kc_iexpr_op op);
const char *kc_iexpr_op_text(kc_iexpr_op op);

/* Evaluates a tree; on failure returns false and writes why into err. */
bool kc_iexpr_eval(const kc_iexpr *e, kc_iexpr_lookup lookup, void *user, int64_t *out,
                   char *err, size_t errlen);
/* Postfix text form, for the bundle. */
void kc_iexpr_write_postfix(kc_buf *b, const kc_iexpr *e);
/* C-like infix form, for people (kc info, manifests, messages). */
void kc_iexpr_write_infix(kc_buf *b, const kc_iexpr *e);
/* Parses the postfix form back into a tree; NULL and err on bad text. */
kc_iexpr *kc_iexpr_parse_postfix(kc_arena *a, const char *text, char *err, size_t errlen);
/* Parses C-like infix text ("4 * n * m + kc_cdiv(n, 2)") into a tree:
 * integers, names, + - * / % << >> & | ^ comparisons && || ! ~ ?: and the
 * calls min, max, kc_cdiv. NULL and a message in err on bad text. */
kc_iexpr *kc_iexpr_parse_infix(kc_arena *a, const char *text, char *err, size_t errlen);
/* Folds every subtree without names into a constant (where it evaluates). */
kc_iexpr *kc_iexpr_fold(kc_arena *a, kc_iexpr *e);
/* Calls fn for every name the expression mentions. */
void kc_iexpr_each_name(const kc_iexpr *e, void (*fn)(void *user, const char *name), void *user);

/* Evaluates postfix text directly, without allocating: the runtime's path.
 * Also the single definition of each operator's semantics: the tree
 * evaluator goes through kc_iexpr_apply. */
bool kc_iexpr_eval_postfix(const char *text, kc_iexpr_lookup lookup, void *user, int64_t *out,
                           char *err, size_t errlen);
bool kc_iexpr_apply(kc_iexpr_op op, const int64_t *args, int64_t *out, char *err, size_t errlen);
/* Maps operator text ("cdiv", "+") to its op; KC_IX_NOPS when unknown. */
kc_iexpr_op kc_iexpr_op_from_text(const char *text, size_t len);

#endif
