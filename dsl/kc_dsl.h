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
#include "kc_lang.h"
#include "kc_support.h"

/* ---- the AST ----------------------------------------------------------- */


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
    bool specialize;      /* a kernel's scalar named by KC_SPECIALIZE */
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
    kc_expr *texel;     /* KC_TEXEL_READS, as written (NULL: none) */
    kc_vec spec;        /* kc_expr*: KC_SPECIALIZE's parameter names, as written */
    kc_loc wg_loc, grid_loc, texel_loc, spec_loc;
    kc_iexpr *wg_size[3];   /* after sema: over tunables */
    kc_iexpr *texel_cond;   /* after sema: over tunables */
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
/* Most scalars a kernel's KC_SPECIALIZE may name: libkcrt keys its
 * pipelines by as many values (VK_SPEC_PARAMS, runtime/vulkan/vk_private.h). */
#define KC_MAX_SPECIALIZE 8

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
