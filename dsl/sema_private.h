/*
 * sema_private.h — what the parts of sema share: its state, constant
 * values, and the functions one part calls in another.
 *
 *   sema.c        scopes, nodes, functions and the program (kc_sema)
 *   sema_const.c  constant folding and the integer expressions of sizes,
 *                 grids and constraints
 *   sema_expr.c   conversions and expressions
 *   sema_stmt.c   declarations and statements
 *   sema_uniform.c  barriers every thread of a workgroup must reach
 */
#ifndef KC_SEMA_PRIVATE_H
#define KC_SEMA_PRIVATE_H

#include "dsl_private.h"

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

static inline const kc_type *T(kc_scalar s) { return kc_type_scalar(s); }
static inline bool is_err(const kc_type *t) { return !t || t->kind == KC_TY_ERROR; }

#define ERR(S, loc, ...) kc_error_at(&(S)->c->diag, (loc), __VA_ARGS__)
#define FIX(S, ...) kc_diag_fix(&(S)->c->diag, __VA_ARGS__)

static inline const char *tname(sema *S, const kc_type *t) { return kc_type_name(&S->c->arena, t); }

typedef struct cval {
    bool ok, is_float;
    int64_t i;
    double f;
} cval;

/* IX_TUNABLES: constants and tunables (extents, workgroup, constraints);
 * IX_PARAMS: also integer scalar parameters (buffer extents);
 * IX_GRID: like IX_PARAMS, with only the operators DESIGN.md lists for
 * KC_GRID: + - * / % << >> min max kc_cdiv. */
typedef enum { IX_TUNABLES, IX_PARAMS, IX_GRID } ix_mode;

/* sema.c */
void sema_declare(sema *S, kc_sym *sym);
void *sema_lookup(sema *S, const char *name, bool *is_global);
kc_expr *sema_mk(sema *S, kc_expr_kind kind, kc_loc loc, const kc_type *type);
kc_expr *sema_mk_cast(sema *S, kc_expr *e, const kc_type *to);
void sema_pop_scope(sema *S);
void sema_push_scope(sema *S);

/* sema_const.c */
bool sema_const_fits(cval v, const kc_type *to);
cval sema_fold(const kc_expr *e);
bool sema_iexpr_value(const kc_iexpr *e, int64_t *out);
kc_loc sema_start_of(const kc_expr *e);
kc_iexpr *sema_to_iexpr(sema *S, const kc_expr *e, ix_mode mode, const char *what);
void sema_use_tunable(sema *S, kc_tunable *t);

/* sema_expr.c */
kc_expr *sema_check(sema *S, kc_expr *e);
kc_expr *sema_check_value(sema *S, kc_expr *e);
kc_expr *sema_convert(sema *S, kc_expr *e, const kc_type *to, const char *context);
const kc_type *sema_ctor_type(const char *name);
kc_expr *sema_fail(kc_expr *e);
bool sema_int_scalar(const kc_expr *a);
kc_expr *sema_to_bool(sema *S, kc_expr *e, const char *context);

/* sema_stmt.c */
void sema_check_init_list(sema *S, kc_sym *sym, const kc_type *t, kc_expr *init, bool need_const);
kc_expr *sema_check_scalar_init(sema *S, kc_sym *sym, const kc_type *t, kc_expr *init, bool need_const);
void sema_check_stmt(sema *S, kc_stmt *s);
const kc_type *sema_declarator_type(sema *S, kc_sym *sym, ix_mode mode, bool allow_open, int init_count);
bool sema_falls_through(const kc_stmt *s);

/* sema_uniform.c: reports barriers only some threads reach; the program
 * must be free of errors (typed, no recursion). */
void sema_check_barriers(sema *S, kc_program *p);

#endif
