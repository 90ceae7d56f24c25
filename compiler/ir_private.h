/*
 * ir_private.h — what kir's passes share: cloning with substitution, and
 * the walkers.
 */
#ifndef KC_IR_PRIVATE_H
#define KC_IR_PRIVATE_H

#include "kc_ir.h"

/* Cloning maps the variables of one function into another (inlining) or
 * into fresh copies (unrolling), replaces KIR_MEM_REF variables by the
 * caller's arrays, and may replace one variable's reads by a constant. */
struct kc_ir_clone {
    kc_arena *arena;
    kc_ir_func *into;       /* new variables are added here; NULL: keep vars */
    kc_map vars;            /* "%p" of an old var -> new var */
    kc_map refs;            /* "%p" of a REF var -> struct ref_sub */
    const kc_ir_var *subst_var; /* reads of it become subst_value */
    const kc_ir_expr *subst_value;
};

typedef struct kc_ir_ref_sub {
    kc_ir_root root;
    kc_ir_expr *offset; /* first element, or NULL for 0 */
} kc_ir_ref_sub;

void kc_ir_clone_init(kc_ir_clone *cl, kc_arena *a, kc_ir_func *into);
kc_ir_var *kc_ir_clone_var(kc_ir_clone *cl, kc_ir_var *v);
void kc_ir_clone_map_ref(kc_ir_clone *cl, kc_ir_var *ref, kc_ir_root root, kc_ir_expr *offset);
kc_ir_stmt *kc_ir_clone_stmt(kc_ir_clone *cl, const kc_ir_stmt *s);

/* Does the expression read memory or do anything that may not be
 * evaluated speculatively (loads, integer division, subgroup ops)? */
bool kc_ir_expr_may_fault(const kc_ir_expr *e);

/* Rewrites jumps out of a construct: each statement in body that leaves
 * the region (a return, or a break/continue of an enclosing loop that is
 * being dissolved) becomes: optional assignment, flag = true, break. See
 * inline.c and unroll.c for the two users. */
typedef struct kc_ir_exit_rewrite {
    kc_arena *arena;
    kc_ir_func *fn;
    kc_ir_var *flag;        /* created on first use */
    bool returns;           /* rewrite RETURN */
    bool loop_jumps;        /* rewrite BREAK and CONTINUE of the dissolved loop */
    kc_ir_var *result;      /* RETURN value goes here */
    kc_ir_var *broke;       /* loop_jumps: set when BREAK (not CONTINUE) left */
} kc_ir_exit_rewrite;
void kc_ir_rewrite_exits(kc_ir_exit_rewrite *rw, kc_ir_block *body);

/* Rewrites the expressions of s itself (its value, index, condition…),
 * not those of the statements in its blocks. */
void kc_ir_map_own_exprs(kc_ir_stmt *s, kc_ir_expr_fn fn, void *user);

/* Folds one expression tree, or every expression of a block, constants
 * carried through the block's scalar locals in program order (fold.c). */
kc_ir_expr *kc_ir_fold_expr(kc_arena *a, kc_ir_expr *e);
void kc_ir_fold_block(kc_arena *a, kc_ir_block *b);
double kc_ir_round_half(double x);

#define KC_IR_MAX_UNROLL_TRIPS 4096
#define KC_IR_MAX_STMTS 400000

#endif
