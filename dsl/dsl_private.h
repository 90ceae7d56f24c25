/*
 * dsl_private.h — what the front end's stages share among themselves:
 * tokens, the lexer and preprocessor entry points, the parser and sema.
 */
#ifndef KC_DSL_PRIVATE_H
#define KC_DSL_PRIVATE_H

#include "kc_dsl.h"

typedef enum {
    TK_IDENT,
    TK_INT,    /* ival, int_unsigned, int_long */
    TK_FLOAT,  /* fval */
    TK_PUNCT,
    TK_STRING, /* "…": only meaningful after #include */
    TK_HEADER, /* <…> after #include */
    TK_EOF,
} tk_kind;

typedef struct token {
    tk_kind kind;
    kc_loc loc;
    const char *text; /* not NUL-terminated; len bytes */
    int len;
    bool bol;         /* first token on its line */
    bool noexpand;    /* a macro name inside its own expansion */
    bool int_unsigned, int_long, float_suffix;
    uint64_t ival;
    double fval;
} token;

typedef struct tokvec {
    token *t;
    int n, cap;
} tokvec;

void tokvec_push(tokvec *v, const token *t);
void tokvec_free(tokvec *v);

/* Lexes one source file, appending its tokens (no TK_EOF) to out. */
void kc_lex_file(kc_ctx *c, int file, tokvec *out);
/* Preprocesses a file: directives, includes and macros. Appends to out,
 * then a TK_EOF. Reports errors in c->diag. */
void kc_pp_file(kc_ctx *c, int file, tokvec *out);

bool tok_is(const token *t, const char *s);
/* The token's text as a NUL-terminated arena string. */
const char *tok_str(kc_ctx *c, const token *t);

/* Parses tokens into an unchecked program; errors go to c->diag. */
kc_program *kc_parse_tokens(kc_ctx *c, const token *toks, int ntoks);
/* Resolves names, types every expression, checks every rule of §2. */
void kc_sema(kc_ctx *c, kc_program *p);

/* Deepest nesting of expressions, statements or includes the front end
 * accepts; beyond it, a clear error instead of a stack overflow. */
#define KC_MAX_NESTING 256
#define KC_MAX_INCLUDE_DEPTH 64
#define KC_MAX_EXPANSION (1 << 22) /* tokens all macro expansions may produce */
#define KC_MAX_TUNABLE_VALUES 4096
#define KC_MAX_SPACE (1 << 20) /* variants in one kernel's search space */

#endif
