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

#include "kc_lang.h"
#include "kc_support.h"

/* Every operator of an integer expression: the language's (kc_lang.h's
 * KC_OPS, in their order) and then min, max, cdiv and ?:. */
#define KC_IEXPR_OPS(X) KC_OPS(X) KC_IEXPR_ONLY_OPS(X)

typedef enum {
    KC_IX_CONST,
    KC_IX_NAME, /* a scalar parameter or a tunable */
#define X(id, s, w, n, p, ...) KC_IX_##id,
    KC_IEXPR_OPS(X)
#undef X
        KC_IX_NOPS
} kc_iexpr_op;

/* The integer-expression operator of a language operator: the same row. */
static inline kc_iexpr_op kc_iexpr_op_of(kc_op op) { return (kc_iexpr_op)(KC_IX_NEG + (int)op); }
/* The language operator of an integer-expression one; KC_OP_COUNT for
 * min, max, cdiv and ?:. */
static inline kc_op kc_op_of_iexpr(kc_iexpr_op op)
{
    return op >= KC_IX_NEG && op < KC_IX_NEG + KC_OP_COUNT ? (kc_op)(op - KC_IX_NEG) : KC_OP_COUNT;
}

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
/* An operator as kc source spells it ("-" for neg, "kc_cdiv" for cdiv). */
const char *kc_iexpr_op_spelling(kc_iexpr_op op);
/* Its C precedence (kc_lang.h's KC_PREC_*); KC_PREC_CALL for leaves. */
int kc_iexpr_precedence(kc_iexpr_op op);

/* The one infix printer: postfix text as C-like infix, parenthesised only
 * where C needs it ("n WG * 2 +" -> "n * WG + 2"), into out (always
 * terminated, cut at len). min, max and cdiv are written as calls, spelled
 * as kc source does (kc_cdiv) when `source`, else as in the postfix text.
 * Text that is not one expression, or nests deeper than
 * KC_IEXPR_MAX_DEPTH, is copied as it is, and the result is false. */
enum { KC_IEXPR_MAX_DEPTH = 64 };
bool kc_iexpr_postfix_to_infix(const char *postfix, bool source, char *out, size_t len);

#endif
