/*
 * kc_ir.h — kir, kc's structured IR (DESIGN.md §3), and its passes.
 *
 * kir keeps the shape of the source: blocks of statements with if, loop
 * and switch, because Vulkan SPIR-V needs structured control flow. What it
 * drops is C's convenience:
 *
 *   - expressions have no side effects: assignments, ++, helper calls and
 *     atomics are statements, and && || ?: whose right side could fault
 *     become ifs (kc_ir_lower does this);
 *   - every conversion is an explicit KIR_CAST;
 *   - arrays are one-dimensional: acc[i][j] is acc[i * TN + j];
 *   - tunables are KIR_TUNABLE until specialisation binds them.
 *
 * One kc_ir_module holds a kernel and the helpers it calls; all of it lives
 * in one arena. The pipeline (kc_ir_compile) is:
 *
 *   lower -> specialize -> inline -> fold -> unroll -> fold -> dce
 *
 * with kc_ir_validate after each pass in debug builds. Each pass's name is
 * what `kc emit --emit kir --after PASS` takes.
 */
#ifndef KC_IR_H
#define KC_IR_H

#include "kc_iexpr.h"
#include "kc_lang.h"
#include "kc_support.h"

/* The syntax tree is the front end's (kc_dsl.h): kir is made from it by
 * kc_ir_lower and knows nothing else of it. */
typedef struct kc_program kc_program;
typedef struct kc_func kc_func;
typedef struct kc_tunable kc_tunable;

typedef struct kc_ir_expr kc_ir_expr;
typedef struct kc_ir_stmt kc_ir_stmt;
typedef struct kc_ir_block kc_ir_block;
typedef struct kc_ir_func kc_ir_func;

/* Where a variable or parameter's memory is. */
typedef enum {
    KIR_MEM_PRIVATE, /* a function-local variable or array */
    KIR_MEM_SHARED,  /* KC_SHARED: one copy per workgroup */
    KIR_MEM_CONST,   /* a file-scope constant array, with values */
    KIR_MEM_BUFFER,  /* a kernel's buffer parameter */
    KIR_MEM_REF,     /* a helper's array parameter; gone after inlining */
} kc_ir_mem;

/* A variable: a scalar, a vector, or a one-dimensional array of them. */
typedef struct kc_ir_var {
    const char *name;
    int id;              /* unique in its function; printed as name.id when names clash */
    kc_loc loc;
    const kc_type *type; /* element type for arrays (scalar or vector) */
    bool is_array;
    kc_iexpr *len_expr;  /* arrays: extent over tunables */
    int64_t len;         /* arrays: extent once specialised; -1 before */
    kc_ir_mem mem;
    kc_ir_expr **init;   /* KIR_MEM_CONST: len constant values */
} kc_ir_var;

/* A parameter: a scalar, or a buffer (an array in device memory). */
typedef struct kc_ir_param {
    const char *name;
    int index;           /* position in the signature */
    kc_loc loc;
    bool is_buffer;
    bool readonly;       /* const buffer */
    bool specialize;     /* a kernel's scalar in KC_SPECIALIZE: a pipeline may fix its value */
    const kc_type *type; /* scalar type, or buffer element type */
    kc_iexpr *extent;    /* buffer: total elements over scalar parameters; NULL = unknown */
    kc_vec dims;         /* buffer: kc_iexpr* per dimension, outermost first */
    int binding;         /* buffer: index among buffer parameters */
    kc_ir_var *ref;      /* helpers: an array parameter is a KIR_MEM_REF variable */
    kc_ir_var *local;    /* helpers: a scalar parameter is this variable, set by the inliner */
} kc_ir_param;

/* The root of a memory access: a variable (private, shared, const, ref)
 * or a buffer parameter. */
typedef struct kc_ir_root {
    kc_ir_var *var;
    kc_ir_param *param;
} kc_ir_root;

typedef enum {
    KIR_CONST,   /* scalar constant: ival (integers, bool) or fval */
    KIR_TUNABLE, /* name; int; gone after specialisation */
    KIR_PARAM,   /* a scalar parameter's value */
    KIR_VAR,     /* a scalar or vector variable's value */
    KIR_LOAD,    /* root[a], a is an int index (element of an array) */
    KIR_UNARY,   /* op a */
    KIR_BINARY,  /* a op b; LAND/LOR only with operands that cannot fault */
    KIR_SELECT,  /* a ? b : c, all evaluated */
    KIR_CAST,    /* (type) a */
    KIR_LANE,    /* a.lane */
    KIR_VEC,     /* vector from args (lanes of them, or one to splat) */
    KIR_BUILTIN, /* builtin(args): ids, math, subgroup ops, bits */
} kc_ir_expr_kind;

struct kc_ir_expr {
    kc_ir_expr_kind kind;
    const kc_type *type; /* scalar or vector */
    kc_op op;
    int lane;
    kc_builtin builtin;
    uint64_t ival;       /* KIR_CONST integers and bool (zero-extended bits) */
    double fval;         /* KIR_CONST float, half */
    const char *name;    /* KIR_TUNABLE */
    kc_ir_param *param;  /* KIR_PARAM */
    kc_ir_var *var;      /* KIR_VAR */
    kc_ir_root root;     /* KIR_LOAD */
    kc_ir_expr *a, *b, *c;
    kc_ir_expr **args;
    int nargs;
    /* float arithmetic of kc's math library, whose error-free steps must run
     * as written, or inside a kernel's kc_no_contract(): SPIR-V marks it
     * NoContraction, without which a driver (Mesa's, for one) may fuse or
     * rearrange it and lose the low bits; LLVM gets no 'contract' flag */
    bool exact;
};

struct kc_ir_block {
    kc_ir_stmt **stmts;
    int len, cap;
};

typedef enum {
    KIR_ASSIGN,   /* var (.lane when lane >= 0) = value */
    KIR_STORE,    /* root[index] (.lane) = value */
    KIR_IF,       /* if (cond) then else els */
    KIR_LOOP,     /* init; while (cond) { body } step; until !post */
    KIR_SWITCH,   /* switch (value) cases */
    KIR_BREAK,    /* out of the innermost loop or switch */
    KIR_CONTINUE, /* to the innermost loop's step */
    KIR_RETURN,   /* value for helpers, NULL for kernels */
    KIR_BARRIER,  /* workgroup execution and shared-memory barrier */
    KIR_ATOMIC,   /* result = atomic op(root[index], value, cmp) */
    KIR_CALL,     /* result = func(args); gone after inlining */
} kc_ir_stmt_kind;

typedef struct kc_ir_case {
    kc_ir_expr **values; /* constant ints; none for default alone */
    int nvalues;
    kc_iexpr **value_exprs; /* before specialisation: over tunables */
    bool is_default;
    kc_ir_block body;    /* falls into the next case unless it ends in break/return */
} kc_ir_case;

struct kc_ir_stmt {
    kc_ir_stmt_kind kind;
    kc_loc loc;
    kc_ir_var *var;       /* ASSIGN target; ATOMIC and CALL result (may be NULL) */
    int lane;             /* ASSIGN, STORE: -1 or the component written */
    kc_ir_root root;      /* STORE, ATOMIC */
    kc_ir_expr *index;    /* STORE, ATOMIC; NULL for a shared scalar */
    kc_ir_expr *value;    /* ASSIGN, STORE, RETURN, ATOMIC, SWITCH */
    kc_ir_expr *cmp;      /* ATOMIC cas: the expected value */
    kc_builtin atomic;    /* ATOMIC: KC_B_ATOMIC_* */
    kc_ir_expr *cond;     /* IF; LOOP: tested before each iteration, NULL = true */
    kc_ir_expr *post;     /* LOOP: tested after the step, NULL = true (do-while) */
    kc_ir_block then, els; /* IF */
    kc_ir_block init, body, step; /* LOOP */
    bool unroll;          /* LOOP: KC_UNROLL (an error if it cannot be unrolled) */
    bool unroll_small;    /* LOOP: unroll if short (made by the compiler, no error) */
    kc_ir_case *cases;    /* SWITCH */
    int ncases;
    kc_ir_func *func;     /* CALL */
    kc_ir_expr **args;    /* CALL: value arguments; NULL where an array is passed */
    kc_ir_root *refs;     /* CALL: array arguments' roots */
    kc_ir_expr **ref_offsets; /* CALL: array arguments' starting element */
    int nargs;
};

struct kc_ir_func {
    const char *name;
    kc_loc loc;
    bool is_kernel, may_alias;
    const kc_type *ret;
    kc_ir_param **params;
    int nparams;
    int nbuffers;
    kc_vec vars;          /* kc_ir_var*, every variable of the function */
    kc_ir_block body;
    kc_iexpr *wg[3];      /* kernels: workgroup size over tunables */
    kc_iexpr *grid[3];    /* kernels: workgroups over scalar parameters and tunables */
    int64_t wg_size[3];   /* kernels, once specialised */
    kc_iexpr *texel;      /* kernels: KC_TEXEL_READS over tunables (NULL: none) */
    bool texel_reads;     /* kernels, once specialised: SPIR-V reads const buffers as texels */
    kc_ir_var *ret_var;   /* helpers: where inlining puts the result */
};

/* One binding of tunables to values: a variant. */
typedef struct kc_ir_binding {
    int n;
    const char **names;
    int64_t *values;
} kc_ir_binding;

typedef struct kc_ir_module {
    kc_arena *arena;
    kc_diag *diag;
    kc_ir_binding defaults; /* every tunable of the program at its default */
    kc_ir_func *kernel;
    kc_vec helpers;       /* kc_ir_func*, until inlined */
    kc_vec consts;        /* kc_ir_var* file-scope constant arrays used */
    kc_ir_binding binding;
    bool specialized;
    /* what the kernel needs from a target, known after the pipeline */
    bool uses_shared, uses_subgroups, uses_atomics, uses_float_atomics, uses_half,
        uses_half_arith, uses_long, uses_barrier;
} kc_ir_module;

/* ---- building ------------------------------------------------------------ */

kc_ir_expr *kc_ir_const_int(kc_arena *a, const kc_type *t, uint64_t v);
kc_ir_expr *kc_ir_const_float(kc_arena *a, const kc_type *t, double v);
kc_ir_expr *kc_ir_new_expr(kc_arena *a, kc_ir_expr_kind kind, const kc_type *t);
kc_ir_stmt *kc_ir_new_stmt(kc_arena *a, kc_ir_stmt_kind kind, kc_loc loc);
void kc_ir_push(kc_arena *a, kc_ir_block *b, kc_ir_stmt *s);
kc_ir_var *kc_ir_new_var(kc_arena *a, kc_ir_func *f, const char *name, const kc_type *t, kc_loc loc);
kc_ir_expr *kc_ir_var_ref(kc_arena *a, kc_ir_var *v);
bool kc_ir_is_const(const kc_ir_expr *e);
/* Is e a constant integer (of any integer type), and which? */
bool kc_ir_const_value(const kc_ir_expr *e, int64_t *v);
/* Deep copies, for unrolling and inlining; vars through a map (NULL: same). */
typedef struct kc_ir_clone kc_ir_clone;
kc_ir_expr *kc_ir_clone_expr(kc_ir_clone *cl, const kc_ir_expr *e);
void kc_ir_clone_block(kc_ir_clone *cl, kc_ir_block *dst, const kc_ir_block *src);

/* ---- walking ------------------------------------------------------------- */

/* Calls fn on every statement of a block, depth first, before its
 * children. */
void kc_ir_walk(kc_ir_block *b, void (*fn)(void *user, kc_ir_stmt *s), void *user);
/* Does the statement (or anything in it) satisfy pred? */
bool kc_ir_any_stmt(const kc_ir_block *b, bool (*pred)(const kc_ir_stmt *s));
/* Counts statements, for size limits on unrolling and inlining. */
long kc_ir_count_stmts(const kc_ir_block *b);
/* Rewrites every expression in a statement tree. */
typedef kc_ir_expr *(*kc_ir_expr_fn)(void *user, kc_ir_expr *e);
void kc_ir_map_exprs(kc_ir_block *b, kc_ir_expr_fn fn, void *user);
/* ---- the pipeline ---------------------------------------------------------- */

/* What a target does natively that kir would otherwise spell out. */
typedef struct kc_ir_options {
    /* sqrtf as the target's own instruction, because it is correctly
     * rounded there (AMDGPU, NVPTX, CPUs); otherwise kc's math library
     * computes it (Vulkan's is not). */
    bool native_sqrt;
    /* Checked mode (`kc build --checked`): every array access tested, the
     * first one out of bounds recorded (bounds.c, support/kc_checked.h). */
    bool bounds_checks;
} kc_ir_options;

/* Lowers one kernel of a checked program, with its helpers. NULL on error
 * (reported in diag). o may be NULL (no native shortcuts). */
kc_ir_module *kc_ir_lower(kc_arena *a, kc_diag *diag, const kc_program *prog, const kc_func *kernel,
                          const kc_ir_options *o);

/* The passes, in pipeline order. Each returns false after reporting an
 * error (an unrollable KC_UNROLL loop, an extent that is not positive…). */
bool kc_ir_specialize(kc_ir_module *m, const kc_ir_binding *b);
bool kc_ir_inline(kc_ir_module *m);
bool kc_ir_fold(kc_ir_module *m);
bool kc_ir_unroll(kc_ir_module *m);
bool kc_ir_dce(kc_ir_module *m);
/* Checked mode, last and only when kc_ir_options.bounds_checks: adds the
 * hidden parameters of support/kc_checked.h and a test before every array
 * access. */
bool kc_ir_check_bounds(kc_ir_module *m);
/* Checks invariants; returns false and reports each broken one. A broken
 * invariant is a compiler bug, so the message says so. */
bool kc_ir_validate(kc_ir_module *m, const char *after_pass);

/* Runs the pipeline; stop_after names a pass to stop after ("lower",
 * "specialize", …, or NULL for all). NULL on error. */
kc_ir_module *kc_ir_compile(kc_arena *a, kc_diag *diag, const kc_program *prog, const kc_func *kernel,
                            const kc_ir_binding *b, const char *stop_after);
/* The same for a target with native shortcuts (o may be NULL). */
kc_ir_module *kc_ir_compile_with(kc_arena *a, kc_diag *diag, const kc_program *prog, const kc_func *kernel,
                                 const kc_ir_binding *b, const char *stop_after, const kc_ir_options *o);
/* The names of the passes, NULL-terminated, for --after. */
extern const char *const kc_ir_pass_names[];

/* ---- printing ---------------------------------------------------------------- */

void kc_ir_print(kc_buf *out, const kc_ir_module *m);
void kc_ir_print_expr(kc_buf *out, const kc_ir_expr *e);

/* ---- variants (the search space) ------------------------------------------- */

/* The tunables a kernel uses, in declaration order. */
int kc_ir_kernel_tunables(const kc_program *p, const kc_func *k, const kc_tunable **out, int max);
/* Does a binding satisfy every KC_REQUIRE that mentions the kernel's
 * tunables? (tunables it does not use take their defaults) */
bool kc_ir_binding_allowed(const kc_program *p, const kc_func *k, const kc_ir_binding *b);
/* Calls fn for each variant of the kernel's space that passes KC_REQUIRE,
 * in a fixed order (the first tunable varies slowest). Returns the count;
 * fn may be NULL to count. */
long kc_ir_each_variant(kc_arena *a, const kc_program *p, const kc_func *k,
                        void (*fn)(void *user, const kc_ir_binding *b), void *user);
/* The default variant. */
kc_ir_binding kc_ir_default_binding(kc_arena *a, const kc_program *p, const kc_func *k);
/* Parses "WG=64,TM=4" into a binding over the kernel's tunables; names it
 * does not give take their defaults. false with a message in err. */
bool kc_ir_parse_binding(kc_arena *a, const kc_program *p, const kc_func *k, const char *text,
                         kc_ir_binding *out, char *err, size_t errlen);
/* "WG=64,TM=4" in declaration order ("" for a kernel without tunables). */
const char *kc_ir_binding_text(kc_arena *a, const kc_ir_binding *b);
bool kc_ir_binding_lookup(void *binding, const char *name, int64_t *value);

#endif
