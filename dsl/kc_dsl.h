/*
 * kc_dsl.h — the kc front end: lexer, preprocessor subset, parser and
 * semantic checks for the language of DESIGN.md §2.
 *
 *   kc_program *p = kc_dsl_parse(&ctx, "kernels/saxpy.kc");
 *   if (!p) ... ctx.diag holds every error, each with file:line:col
 *
 * The result is a typed AST: every expression carries its type, every name
 * its symbol, and implicit conversions are explicit KC_E_CAST nodes, so the
 * lowering to kir (compiler/) never has to think about C's rules again.
 * All memory lives in the context's arena.
 */
#ifndef KC_DSL_H
#define KC_DSL_H

#include "kc_iexpr.h"
#include "kc_support.h"

/* ---- types ------------------------------------------------------------ */

/* X(name, C spelling, bits, is_float, is_signed) */
#define KC_SCALARS(X)                                                                              \
    X(VOID, "void", 0, 0, 0)                                                                       \
    X(BOOL, "bool", 32, 0, 0)                                                                      \
    X(INT, "int", 32, 0, 1)                                                                        \
    X(UINT, "uint", 32, 0, 0)                                                                      \
    X(LONG, "long", 64, 0, 1)                                                                      \
    X(ULONG, "ulong", 64, 0, 0)                                                                    \
    X(HALF, "half", 16, 1, 1)                                                                      \
    X(FLOAT, "float", 32, 1, 1)

typedef enum {
#define X(n, s, b, f, sg) KC_S_##n,
    KC_SCALARS(X)
#undef X
        KC_S_COUNT
} kc_scalar;

typedef enum {
    KC_TY_SCALAR, /* lanes == 1 */
    KC_TY_VECTOR, /* lanes 2 or 4 */
    KC_TY_ARRAY,  /* fixed extent; elem may be another array */
    KC_TY_ERROR,  /* after a reported error; silences follow-on errors */
} kc_type_kind;

typedef struct kc_type kc_type;
struct kc_type {
    kc_type_kind kind;
    kc_scalar scalar;   /* scalar and vector: the component type */
    int lanes;          /* 1, 2 or 4 */
    const kc_type *elem; /* array: the element type */
    kc_iexpr *len;      /* array: extent, over tunables and constants */
};

const kc_type *kc_type_scalar(kc_scalar s);
const kc_type *kc_type_vector(kc_scalar s, int lanes); /* lanes 1 gives the scalar */
const kc_type *kc_type_error(void);
const kc_type *kc_type_array(kc_arena *a, const kc_type *elem, kc_iexpr *len);
bool kc_type_equal(const kc_type *a, const kc_type *b);
bool kc_type_is_int(const kc_type *t);   /* int, uint, long, ulong scalar or vector */
bool kc_type_is_float(const kc_type *t); /* half, float scalar or vector */
bool kc_type_is_arith(const kc_type *t); /* int or float, not bool */
bool kc_scalar_is_float(kc_scalar s);
bool kc_scalar_is_signed(kc_scalar s);
int kc_scalar_bits(kc_scalar s);
const char *kc_scalar_name(kc_scalar s);
/* Spells a type as a user would write it: "float", "half4", "float[16][17]". */
const char *kc_type_name(kc_arena *a, const kc_type *t);
/* The innermost non-array type of t. */
const kc_type *kc_type_base(const kc_type *t);

/* ---- built-in functions ---------------------------------------------- */

/*
 * X(ID, "name", nargs, rule)
 * rule says how arguments and result are typed (see sema.c):
 *   ID      int argument (dimension 0..2) -> int       kc_global_id(d)
 *   ID0     no argument -> int                          kc_subgroup_size()
 *   F1      float-ish (float/half scalar or vector) -> same type
 *   F2, F3  two, three of the same float-ish type -> that type
 *   A1..A3  any arithmetic (int/float, vector ok), same type -> same type
 *   SG1     subgroup reduction of an arithmetic scalar -> same
 *   SG2     (value, int lane) -> value's type
 *   ATOM    (&int/uint/float element, value) -> old value
 *   CAS     (&int/uint element, compare, value) -> old value
 *   BAR     no arguments, no result (a statement)
 *   CDIV    (int, int) -> int, integer types only
 *   BITS    bit reinterpretation (fixed types, see sema)
 * The backends read the same table to find their lowering for each ID.
 */
#define KC_BUILTINS(X)                                                                             \
    X(GLOBAL_ID, "kc_global_id", 1, ID)                                                            \
    X(LOCAL_ID, "kc_local_id", 1, ID)                                                              \
    X(GROUP_ID, "kc_group_id", 1, ID)                                                              \
    X(GROUP_SIZE, "kc_group_size", 1, ID)                                                          \
    X(NUM_GROUPS, "kc_num_groups", 1, ID)                                                          \
    X(SUBGROUP_SIZE, "kc_subgroup_size", 0, ID0)                                                   \
    X(SUBGROUP_ID, "kc_subgroup_id", 0, ID0)                                                       \
    X(SUBGROUP_LOCAL_ID, "kc_subgroup_local_id", 0, ID0)                                           \
    X(BARRIER, "kc_barrier", 0, BAR)                                                               \
    X(SUBGROUP_ADD, "kc_subgroup_add", 1, SG1)                                                     \
    X(SUBGROUP_MIN, "kc_subgroup_min", 1, SG1)                                                     \
    X(SUBGROUP_MAX, "kc_subgroup_max", 1, SG1)                                                     \
    X(SUBGROUP_SHUFFLE, "kc_subgroup_shuffle", 2, SG2)                                             \
    X(SUBGROUP_BROADCAST, "kc_subgroup_broadcast", 2, SG2)                                         \
    X(ATOMIC_ADD, "kc_atomic_add", 2, ATOM)                                                        \
    X(ATOMIC_MIN, "kc_atomic_min", 2, ATOM)                                                        \
    X(ATOMIC_MAX, "kc_atomic_max", 2, ATOM)                                                        \
    X(ATOMIC_XCHG, "kc_atomic_xchg", 2, ATOM)                                                      \
    X(ATOMIC_CAS, "kc_atomic_cas", 3, CAS)                                                         \
    X(SQRT, "sqrtf", 1, F1)                                                                        \
    X(RSQRT, "rsqrtf", 1, F1)                                                                      \
    X(EXP, "expf", 1, F1)                                                                          \
    X(EXP2, "exp2f", 1, F1)                                                                        \
    X(LOG, "logf", 1, F1)                                                                          \
    X(LOG2, "log2f", 1, F1)                                                                        \
    X(POW, "powf", 2, F2)                                                                          \
    X(SIN, "sinf", 1, F1)                                                                          \
    X(COS, "cosf", 1, F1)                                                                          \
    X(TAN, "tanf", 1, F1)                                                                          \
    X(TANH, "tanhf", 1, F1)                                                                        \
    X(ERF, "erff", 1, F1)                                                                          \
    X(FABS, "fabsf", 1, F1)                                                                        \
    X(FLOOR, "floorf", 1, F1)                                                                      \
    X(CEIL, "ceilf", 1, F1)                                                                        \
    X(ROUND, "roundf", 1, F1)                                                                      \
    X(FMIN, "fminf", 2, F2)                                                                        \
    X(FMAX, "fmaxf", 2, F2)                                                                        \
    X(FMA, "fmaf", 3, F3)                                                                          \
    X(COPYSIGN, "copysignf", 2, F2)                                                                \
    X(MIN, "min", 2, A2)                                                                           \
    X(MAX, "max", 2, A2)                                                                           \
    X(CLAMP, "clamp", 3, A3)                                                                       \
    X(CDIV, "kc_cdiv", 2, CDIV)                                                                    \
    X(FAST_SQRT, "kc_fast_sqrtf", 1, F1)                                                           \
    X(FAST_RSQRT, "kc_fast_rsqrtf", 1, F1)                                                         \
    X(FAST_EXP, "kc_fast_expf", 1, F1)                                                             \
    X(FAST_EXP2, "kc_fast_exp2f", 1, F1)                                                           \
    X(FAST_LOG, "kc_fast_logf", 1, F1)                                                             \
    X(FAST_LOG2, "kc_fast_log2f", 1, F1)                                                           \
    X(FAST_POW, "kc_fast_powf", 2, F2)                                                             \
    X(FAST_SIN, "kc_fast_sinf", 1, F1)                                                             \
    X(FAST_COS, "kc_fast_cosf", 1, F1)                                                             \
    X(FAST_TAN, "kc_fast_tanf", 1, F1)                                                             \
    X(FAST_TANH, "kc_fast_tanhf", 1, F1)                                                           \
    X(FAST_DIV, "kc_fast_divf", 2, F2)                                                             \
    X(AS_UINT, "kc_as_uint", 1, BITS)                                                              \
    X(AS_INT, "kc_as_int", 1, BITS)                                                                \
    X(AS_FLOAT, "kc_as_float", 1, BITS)                                                            \
    X(MUL_HI, "kc_mul_hi", 2, MULHI)

typedef enum {
#define X(id, name, n, rule) KC_B_##id,
    KC_BUILTINS(X)
#undef X
        KC_B_COUNT
} kc_builtin;

typedef enum {
    KC_RULE_ID, KC_RULE_ID0, KC_RULE_BAR, KC_RULE_F1, KC_RULE_F2, KC_RULE_F3, KC_RULE_A2,
    KC_RULE_A3, KC_RULE_SG1, KC_RULE_SG2, KC_RULE_ATOM, KC_RULE_CAS, KC_RULE_CDIV,
    KC_RULE_BITS, KC_RULE_MULHI,
} kc_builtin_rule;

typedef struct kc_builtin_info {
    const char *name;
    int nargs;
    kc_builtin_rule rule;
} kc_builtin_info;

extern const kc_builtin_info kc_builtins[KC_B_COUNT];
/* The builtin called name, or -1. */
int kc_builtin_lookup(const char *name);

/* ---- the AST ----------------------------------------------------------- */

/* Operators, shared by the AST and kir. X(ID, spelling) */
#define KC_OPS(X)                                                                                  \
    X(NEG, "-")                                                                                    \
    X(NOT, "!")                                                                                    \
    X(BNOT, "~")                                                                                   \
    X(ADD, "+")                                                                                    \
    X(SUB, "-")                                                                                    \
    X(MUL, "*")                                                                                    \
    X(DIV, "/")                                                                                    \
    X(MOD, "%")                                                                                    \
    X(SHL, "<<")                                                                                   \
    X(SHR, ">>")                                                                                   \
    X(AND, "&")                                                                                    \
    X(OR, "|")                                                                                     \
    X(XOR, "^")                                                                                    \
    X(LT, "<")                                                                                     \
    X(LE, "<=")                                                                                    \
    X(GT, ">")                                                                                     \
    X(GE, ">=")                                                                                    \
    X(EQ, "==")                                                                                    \
    X(NE, "!=")                                                                                    \
    X(LAND, "&&")                                                                                  \
    X(LOR, "||")

typedef enum {
#define X(id, s) KC_OP_##id,
    KC_OPS(X)
#undef X
        KC_OP_COUNT
} kc_op;

const char *kc_op_text(kc_op op);

typedef struct kc_expr kc_expr;
typedef struct kc_stmt kc_stmt;
typedef struct kc_sym kc_sym;
typedef struct kc_func kc_func;

typedef enum {
    KC_E_INT,     /* integer literal: ival */
    KC_E_FLOAT,   /* floating literal: fval */
    KC_E_BOOL,    /* true / false: ival */
    KC_E_NAME,    /* name: sym after sema */
    KC_E_UNARY,   /* op a */
    KC_E_BINARY,  /* a op b */
    KC_E_ASSIGN,  /* a = b, or a op= b when has_op */
    KC_E_INCDEC,  /* ++a, a++, --a, a--: is_post, op ADD or SUB */
    KC_E_COND,    /* a ? b : c */
    KC_E_CALL,    /* name(args): builtin >= 0, or func (a helper), or ctor (vector) */
    KC_E_INDEX,   /* a[b] */
    KC_E_MEMBER,  /* a.x: lane 0..3 */
    KC_E_CAST,    /* (type)a, also implicit conversions made explicit by sema */
    KC_E_ADDR,    /* &a: only as the first argument of kc_atomic_* */
    KC_E_INIT,    /* { args }: only in array initialisers */
    KC_E_COMMA,   /* a, b */
} kc_expr_kind;

struct kc_expr {
    kc_expr_kind kind;
    kc_loc loc;
    const kc_type *type; /* after sema */
    kc_op op;
    bool has_op;       /* KC_E_ASSIGN: a compound assignment */
    bool is_post;      /* KC_E_INCDEC: a++ rather than ++a */
    bool implicit;     /* KC_E_CAST inserted by sema */
    bool lit_unsigned, lit_long; /* KC_E_INT suffixes u and l */
    int height;        /* of the tree below, bounded by the parser */
    int lane;            /* KC_E_MEMBER */
    int builtin;         /* KC_E_CALL: kc_builtin or -1 */
    const kc_type *ctor; /* KC_E_CALL of kc_float4(...) and friends */
    const char *name;    /* KC_E_NAME, KC_E_CALL */
    kc_sym *sym;         /* KC_E_NAME after sema */
    kc_func *func;       /* KC_E_CALL of a helper, after sema */
    uint64_t ival;
    double fval;
    kc_expr *a, *b, *c;
    kc_vec args;         /* kc_expr*: KC_E_CALL, KC_E_INIT */
};

typedef enum {
    KC_SYM_LOCAL,   /* a variable in a function (shared arrays too) */
    KC_SYM_PARAM,   /* a function parameter */
    KC_SYM_TUNABLE, /* KC_TUNE */
    KC_SYM_CONST,   /* file-scope const scalar or array */
    KC_SYM_FUNC,
} kc_sym_kind;

/* Where a variable's memory is. KC_STORE_REF: a helper's array parameter,
 * which refers to whatever array the caller passes. */
typedef enum { KC_STORE_PRIVATE, KC_STORE_SHARED, KC_STORE_BUFFER, KC_STORE_CONST, KC_STORE_REF } kc_storage;

struct kc_sym {
    kc_sym_kind kind;
    kc_loc loc;
    const char *name;
    const kc_type *type;  /* a buffer parameter: its element type */
    kc_storage storage;
    bool is_const;        /* const variable, or read-only buffer */
    bool is_buffer;       /* a pointer/array parameter */
    kc_vec dim_exprs;     /* kc_expr* extents as written; an empty [] is a KC_E_INIT */
    kc_vec dims;          /* buffer parameter: kc_iexpr* extents, outermost first */
    kc_expr *init;        /* KC_SYM_CONST and locals: the initialiser */
    int index;            /* parameter position; tunable index; local id */
    kc_func *func;        /* KC_SYM_FUNC */
    struct kc_tunable *tunable;
    int64_t const_ival;   /* KC_SYM_CONST scalar, folded */
    double const_fval;
    bool used;
};

typedef enum {
    KC_S_EXPR, KC_S_DECL, KC_S_BLOCK, KC_S_IF, KC_S_FOR, KC_S_WHILE, KC_S_DO, KC_S_BREAK,
    KC_S_CONTINUE, KC_S_RETURN, KC_S_SWITCH, KC_S_CASE, KC_S_DEFAULT, KC_S_EMPTY,
} kc_stmt_kind;

struct kc_stmt {
    kc_stmt_kind kind;
    kc_loc loc;
    kc_expr *expr;      /* EXPR, IF/WHILE/DO/FOR condition, RETURN value, SWITCH value */
    kc_stmt *init;      /* FOR */
    kc_expr *step;      /* FOR */
    kc_stmt *then, *els; /* IF; loop and switch bodies in then */
    kc_vec body;        /* BLOCK: kc_stmt*; DECL: kc_sym* declared */
    bool unroll;        /* KC_UNROLL before a loop */
    kc_expr *case_expr; /* CASE, as written */
    kc_iexpr *case_value; /* CASE after sema: constant, or over tunables */
};

typedef struct kc_tunable {
    const char *name;
    kc_loc loc;
    kc_vec exprs;    /* kc_expr*: the default, then the values, as written */
    int64_t def;     /* after sema */
    int64_t *values; /* after sema: distinct, in the order written */
    int nvalues;
    int index;
} kc_tunable;

typedef struct kc_require {
    kc_loc loc;
    kc_expr *expr;
    kc_iexpr *cond; /* after sema */
} kc_require;

struct kc_func {
    const char *name;
    kc_loc loc;
    bool is_kernel, is_static, may_alias, defined;
    const kc_type *ret;
    kc_vec params;      /* kc_sym* */
    kc_stmt *body;
    kc_expr *wg[3];     /* KC_WORKGROUP, as written */
    kc_expr *grid[3];   /* KC_GRID, as written */
    kc_loc wg_loc, grid_loc;
    kc_iexpr *wg_size[3];   /* after sema: over tunables */
    kc_iexpr *grid_size[3]; /* after sema: over scalar parameters and tunables */
    kc_vec tunables;    /* kc_tunable* the function uses, itself or through callees */
    kc_vec callees;     /* kc_func* called directly */
    kc_vec call_sites;  /* kc_expr* of those calls, in the same order */
    int nlocals;
    bool uses_shared, uses_subgroups, uses_atomics, uses_half, uses_long;
};

typedef struct kc_program {
    kc_vec tunables; /* kc_tunable* in declaration order */
    kc_vec requires; /* kc_require* */
    kc_vec funcs;    /* kc_func*, kernels and helpers, in order */
    kc_vec consts;   /* kc_sym* file-scope constants */
    char source_hash[65]; /* sha256 of every token the program is made of */
    int main_file;
} kc_program;

/* ---- the front end ---------------------------------------------------- */

typedef struct kc_ctx {
    kc_arena arena;
    kc_src src;
    kc_diag diag;
    /* The folders whose files `#include "file"` may read (DESIGN.md §11,
     * docs/security.md), as real paths: the main file's folder, added when
     * it is parsed, and those of kc_ctx_allow_dir (-I). */
    kc_vec include_dirs;
} kc_ctx;

/* out: where diagnostics are printed as they come (NULL: only kept). */
void kc_ctx_init(kc_ctx *c, FILE *out);
void kc_ctx_free(kc_ctx *c);
/* Lets #include read regular files under dir and its subfolders; false
 * (errno set) when dir is not a folder that exists. */
bool kc_ctx_allow_dir(kc_ctx *c, const char *dir);
/* Is the real path inside one of the folders includes may read? */
bool kc_ctx_may_include(const kc_ctx *c, const char *real);

/* Largest source file the front end reads. */
#define KC_MAX_SOURCE_BYTES (16u << 20)

/* Parses and checks a file; NULL when there were errors (all reported). */
kc_program *kc_dsl_parse(kc_ctx *c, const char *path);
/* The same for text in memory (tests, the fuzzer). */
kc_program *kc_dsl_parse_text(kc_ctx *c, const char *path, const char *text, size_t len);

/* The embedded <kc.h>, as shipped in dsl/include/kc.h. */
extern const char kc_dsl_header[];
extern const size_t kc_dsl_header_len;
/* kc's math library (compiler/libm/kc_math.kc), read before every program
 * as the file "<kc_math>"; its names start with __kc_. */
extern const char kc_dsl_libm[];
extern const size_t kc_dsl_libm_len;

/* Finds a kernel or helper by name. */
kc_func *kc_program_func(const kc_program *p, const char *name);

#endif
