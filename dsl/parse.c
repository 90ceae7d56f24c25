/*
 * parse.c — recursive descent over preprocessed tokens, producing an
 * unchecked AST (names unresolved, no types yet; sema.c does that).
 *
 * Error recovery is panic mode: the first error in a statement is reported,
 * later ones are suppressed until the parser re-synchronises at a ';', a
 * '}' or a top-level declaration. So a file with ten mistakes gets ten
 * messages, not one and not a hundred.
 *
 * No input can overflow the stack: nesting deeper than KC_MAX_NESTING is
 * an error, after which the nested group is skipped iteratively, and
 * expression trees taller than KC_MAX_EXPR_HEIGHT (a + a + … ) are refused
 * so that later recursive passes stay bounded too.
 */
#include "dsl_private.h"

#include <string.h>

#define KC_MAX_EXPR_HEIGHT 2000

typedef struct parser {
    kc_ctx *c;
    const token *t;
    int n, pos;
    int depth;
    bool panic;
    kc_program *prog;
} parser;

/* ---- token helpers ------------------------------------------------------ */

static void sync_stmt_fwd(struct parser *P);

static const token *peek(parser *P) { return &P->t[P->pos]; }
static const token *peek_at(parser *P, int k)
{
    int i = P->pos + k;
    return &P->t[i < P->n ? i : P->n - 1];
}
static bool at_eof(parser *P) { return peek(P)->kind == TK_EOF; }
static bool is(parser *P, const char *s) { return tok_is(peek(P), s); }

static const token *next(parser *P)
{
    const token *t = peek(P);
    if (t->kind != TK_EOF)
        P->pos++;
    return t;
}

static bool accept(parser *P, const char *s)
{
    if (!is(P, s))
        return false;
    next(P);
    return true;
}

static void error_at(parser *P, kc_loc loc, const char *fmt, ...) KC_PRINTF(3, 4);
static void error_at(parser *P, kc_loc loc, const char *fmt, ...)
{
    if (P->panic)
        return;
    va_list ap;
    va_start(ap, fmt);
    kc_diag_report(&P->c->diag, KC_DIAG_ERROR, loc, fmt, ap);
    va_end(ap);
    P->panic = true;
}

static void fix(parser *P, const char *fmt, const char *arg)
{
    kc_diag_fix(&P->c->diag, fmt, arg);
}

static const char *describe(parser *P, const token *t)
{
    if (t->kind == TK_EOF)
        return "end of file";
    return kc_arena_printf(&P->c->arena, "'%.*s'", t->len > 40 ? 40 : t->len, t->text);
}

static bool expect(parser *P, const char *s, const char *context)
{
    if (accept(P, s))
        return true;
    if (!P->panic) {
        /* A missing ';' is best shown just after the previous token. */
        const token *t = peek(P);
        kc_loc loc = t->loc;
        if (strcmp(s, ";") == 0 && P->pos > 0) {
            const token *prev = &P->t[P->pos - 1];
            loc = prev->loc;
            loc.col += prev->len;
        }
        error_at(P, loc, "expected '%s' %s, found %s", s, context, describe(P, t));
    }
    return false;
}

/* The ';' that ends a statement. When it is missing but the next token
 * starts a new line, the user most likely just forgot it: report it and
 * go on with that line instead of skipping it. */
static void expect_semi(parser *P, const char *context)
{
    if (expect(P, ";", context))
        return;
    if (peek(P)->bol || is(P, "}"))
        P->panic = false;
    else
        sync_stmt_fwd(P);
}

static int type_name_index(const token *t);

/* A name being declared: an identifier that is not a type's name
 * ("float half = ..." would otherwise be taken and fail at its first use). */
static const char *expect_ident(parser *P, const char *what)
{
    const token *t = peek(P);
    if (t->kind != TK_IDENT) {
        error_at(P, t->loc, "expected %s, found %s", what, describe(P, t));
        return NULL;
    }
    if (type_name_index(t) >= 0) {
        error_at(P, t->loc, "'%.*s' is a type, so it cannot be %s", t->len, t->text, what);
        kc_diag_fix(&P->c->diag, "choose another name");
    }
    next(P);
    return tok_str(P->c, t);
}

/* Skips a balanced group starting at an opening bracket, iteratively. */
static void skip_group(parser *P)
{
    int level = 0;
    do {
        const token *t = next(P);
        if (tok_is(t, "(") || tok_is(t, "[") || tok_is(t, "{"))
            level++;
        else if (tok_is(t, ")") || tok_is(t, "]") || tok_is(t, "}"))
            level--;
        if (t->kind == TK_EOF)
            return;
    } while (level > 0);
}

/* Recovery inside a function: to just past the next ';' or to the next
 * '}' (not consumed) at the current nesting. */
static void sync_stmt(parser *P)
{
    while (!at_eof(P)) {
        if (is(P, ";")) {
            next(P);
            break;
        }
        if (is(P, "}"))
            break;
        if (is(P, "(") || is(P, "[") || is(P, "{"))
            skip_group(P);
        else
            next(P);
    }
    P->panic = false;
}

/* After a nesting error deep inside an expression: skip to the end of the
 * statement without consuming it and stay in panic, so the frames above
 * unwind quietly and the statement ends where it should. */
static void skip_expr_rest(parser *P)
{
    while (!at_eof(P) && !is(P, ";") && !is(P, "}")) {
        if (is(P, "(") || is(P, "[") || is(P, "{"))
            skip_group(P);
        else
            next(P);
    }
}

static void sync_stmt_fwd(parser *P) { sync_stmt(P); }

static bool enter(parser *P, kc_loc loc)
{
    if (P->depth >= KC_MAX_NESTING) {
        error_at(P, loc, "nesting is deeper than %d levels", KC_MAX_NESTING);
        return false;
    }
    P->depth++;
    return true;
}

static void leave(parser *P) { P->depth--; }

/* ---- words ---------------------------------------------------------------- */

static const char *const reserved[] = {
    "if", "else", "for", "while", "do", "break", "continue", "return", "switch", "case",
    "default", "const", "static", "void", "bool", "int", "uint", "long", "ulong", "half",
    "float", "float2", "float4", "half2", "half4", "int2", "int4", "uint2", "uint4", "true",
    "false", "unsigned", "signed", "goto", "struct", "union", "enum", "typedef", "sizeof",
    "extern", "volatile", "register", "auto", "inline", "restrict", "double", "char", "short",
    "KC_TUNE", "KC_REQUIRE", "KC_KERNEL", "KC_WORKGROUP", "KC_GRID", "KC_SHARED",
    "KC_UNROLL", "KC_MAY_ALIAS", "KC_TEXEL_READS", "KC_SPECIALIZE", "_Bool", "__restrict",
};

static bool is_reserved(const token *t)
{
    if (t->kind != TK_IDENT)
        return false;
    for (size_t i = 0; i < KC_COUNT(reserved); i++)
        if (tok_is(t, reserved[i]))
            return true;
    return false;
}

/* Type names kc knows, and those it refuses with a message. */
static const struct {
    const char *name;
    kc_scalar scalar;
    int lanes;
} type_names[] = {
    {"void", KC_S_VOID, 1},   {"bool", KC_S_BOOL, 1},   {"_Bool", KC_S_BOOL, 1},
    {"int", KC_S_INT, 1},     {"uint", KC_S_UINT, 1},   {"long", KC_S_LONG, 1},
    {"ulong", KC_S_ULONG, 1}, {"half", KC_S_HALF, 1},   {"float", KC_S_FLOAT, 1},
    {"float2", KC_S_FLOAT, 2}, {"float4", KC_S_FLOAT, 4}, {"half2", KC_S_HALF, 2},
    {"half4", KC_S_HALF, 4},  {"int2", KC_S_INT, 2},    {"int4", KC_S_INT, 4},
    {"uint2", KC_S_UINT, 2},  {"uint4", KC_S_UINT, 4},
};

static const struct {
    const char *word, *why, *fix;
} refused_types[] = {
    {"double", "'double' is not in the language", "use 'float'"},
    {"char", "'char' is not in the language", "use 'int'"},
    {"short", "'short' is not in the language", "use 'int', or 'half' for 16-bit floats"},
    {"struct", "structs are not in the language (for now)", "pass each field as its own parameter"},
    {"union", "unions are not in the language", "use kc_as_uint / kc_as_float to reinterpret bits"},
    {"enum", "enums are not in the language", "use '#define NAME value' or 'const int NAME = value;'"},
    {"typedef", "typedef is not in the language", "spell the type out"},
    {"extern", "'extern' is not in the language", "define the function in this file or an included one"},
    {"volatile", "'volatile' is not in the language", "use kc_barrier() or atomics to order memory"},
    {"register", "'register' is not in the language", "remove it"},
    {"auto", "'auto' is not in the language", "spell the type out"},
};

static int type_name_index(const token *t)
{
    for (size_t i = 0; i < KC_COUNT(type_names); i++)
        if (tok_is(t, type_names[i].name))
            return (int)i;
    return -1;
}

static int refused_type_index(const token *t)
{
    for (size_t i = 0; i < KC_COUNT(refused_types); i++)
        if (tok_is(t, refused_types[i].word))
            return (int)i;
    return -1;
}

static bool is_decl_start(parser *P)
{
    const token *t = peek(P);
    return type_name_index(t) >= 0 || refused_type_index(t) >= 0 || tok_is(t, "const") ||
           tok_is(t, "static") || tok_is(t, "KC_SHARED") || tok_is(t, "unsigned") ||
           tok_is(t, "signed") || tok_is(t, "inline");
}

/* ---- nodes ------------------------------------------------------------------ */

static kc_expr *new_expr(parser *P, kc_expr_kind kind, kc_loc loc)
{
    kc_expr *e = KC_NEW(&P->c->arena, kc_expr);
    e->kind = kind;
    e->loc = loc;
    e->builtin = -1;
    e->lane = -1;
    return e;
}

static int height(const kc_expr *e)
{
    return e ? e->height : 0;
}

static kc_expr *error_expr(parser *P, kc_loc loc)
{
    kc_expr *e = new_expr(P, KC_E_INT, loc);
    e->type = kc_type_error();
    return e;
}

static kc_expr *new_binary(parser *P, kc_expr_kind kind, kc_op op, kc_expr *a, kc_expr *b, kc_loc loc)
{
    kc_expr *e = new_expr(P, kind, loc);
    e->op = op;
    e->a = a;
    e->b = b;
    return e;
}

static kc_stmt *new_stmt(parser *P, kc_stmt_kind kind, kc_loc loc)
{
    kc_stmt *s = KC_NEW(&P->c->arena, kc_stmt);
    s->kind = kind;
    s->loc = loc;
    return s;
}

/* ---- expressions ------------------------------------------------------------- */

static kc_expr *expr(parser *P);
static kc_expr *assign(parser *P);
static kc_expr *cast(parser *P);
static kc_expr *initializer(parser *P);

/* The AST height is tracked on the fly so that a 100,000-term sum is
 * refused here, before any recursive pass sees it. */
static kc_expr *track(parser *P, kc_expr *e)
{
    int h = 0;
    const kc_expr *kids[3] = {e->a, e->b, e->c};
    for (int i = 0; i < 3; i++)
        if (kids[i] && height(kids[i]) > h)
            h = height(kids[i]);
    e->height = h + 1;
    if (h + 1 > KC_MAX_EXPR_HEIGHT) {
        error_at(P, e->loc, "expression is too complex (more than %d operators deep)", KC_MAX_EXPR_HEIGHT);
        return error_expr(P, e->loc);
    }
    return e;
}

/* type-name = "unsigned" ("int" | "long")? | "signed" "int"? | "long" "long"? | name */
static const kc_type *type_name(parser *P, bool quiet)
{
    const token *t = peek(P);
    if (tok_is(t, "unsigned") || tok_is(t, "signed")) {
        bool u = tok_is(t, "unsigned");
        next(P);
        if (accept(P, "long")) {
            accept(P, "long");
            accept(P, "int");
            return kc_type_scalar(u ? KC_S_ULONG : KC_S_LONG);
        }
        if (is(P, "char") || is(P, "short")) {
            error_at(P, peek(P)->loc, "'%s' is not in the language", tok_str(P->c, peek(P)));
            fix(P, "use '%s'", u ? "uint" : "int");
            next(P);
            return kc_type_error();
        }
        accept(P, "int");
        return kc_type_scalar(u ? KC_S_UINT : KC_S_INT);
    }
    int r = refused_type_index(t);
    if (r >= 0) {
        error_at(P, t->loc, "%s", refused_types[r].why);
        fix(P, "%s", refused_types[r].fix);
        next(P);
        if (is(P, "{") )
            skip_group(P);
        else if (peek(P)->kind == TK_IDENT && (tok_is(t, "struct") || tok_is(t, "union") || tok_is(t, "enum"))) {
            next(P);
            if (is(P, "{"))
                skip_group(P);
        }
        return kc_type_error();
    }
    int i = type_name_index(t);
    if (i < 0) {
        if (!quiet)
            error_at(P, t->loc, "expected a type, found %s", describe(P, t));
        return NULL;
    }
    next(P);
    if (tok_is(t, "long")) {
        accept(P, "long");
        accept(P, "int");
    }
    return kc_type_vector(type_names[i].scalar, type_names[i].lanes);
}

/* args = "(" (assign ("," assign)*)? ")" */
static void call_args(parser *P, kc_expr *call)
{
    if (!accept(P, ")")) {
        do {
            kc_vec_push(&P->c->arena, &call->args, assign(P));
        } while (accept(P, ","));
        expect(P, ")", "after the arguments");
    }
}

/* primary = int | float | "true" | "false" | ident | ident args | "(" expr ")" */
static kc_expr *primary(parser *P)
{
    const token *t = peek(P);
    if (t->kind == TK_INT) {
        next(P);
        kc_expr *e = new_expr(P, KC_E_INT, t->loc);
        e->ival = t->ival;
        e->lit_unsigned = t->int_unsigned;
        e->lit_long = t->int_long;
        e->name = kc_arena_strndup(&P->c->arena, t->text, (size_t)t->len);
        return e;
    }
    if (t->kind == TK_FLOAT) {
        next(P);
        kc_expr *e = new_expr(P, KC_E_FLOAT, t->loc);
        e->fval = t->fval;
        e->name = kc_arena_strndup(&P->c->arena, t->text, (size_t)t->len);
        return e;
    }
    if (tok_is(t, "true") || tok_is(t, "false")) {
        next(P);
        kc_expr *e = new_expr(P, KC_E_BOOL, t->loc);
        e->ival = tok_is(t, "true");
        return e;
    }
    if (t->kind == TK_STRING) {
        next(P);
        error_at(P, t->loc, "string literals are not in the language");
        return error_expr(P, t->loc);
    }
    if (tok_is(t, "(")) {
        if (!enter(P, t->loc)) {
            skip_group(P);
            return error_expr(P, t->loc);
        }
        next(P);
        kc_expr *e = expr(P);
        expect(P, ")", "to close the parenthesis");
        leave(P);
        return e;
    }
    if (tok_is(t, "sizeof")) {
        error_at(P, t->loc, "sizeof is not in the language");
        kc_diag_fix(&P->c->diag, "write the size: float is 4 bytes, half 2, float4 16");
        next(P);
        if (is(P, "("))
            skip_group(P);
        return error_expr(P, t->loc);
    }
    if (t->kind == TK_IDENT && !is_reserved(t)) {
        next(P);
        if (is(P, "(")) {
            next(P);
            kc_expr *e = new_expr(P, KC_E_CALL, t->loc);
            e->name = tok_str(P->c, t);
            call_args(P, e);
            return e;
        }
        kc_expr *e = new_expr(P, KC_E_NAME, t->loc);
        e->name = tok_str(P->c, t);
        return e;
    }
    if (t->kind == TK_IDENT && type_name_index(t) >= 0 && tok_is(peek_at(P, 1), "(")) {
        error_at(P, t->loc, "'%s(…)' is not a constructor in kc", tok_str(P->c, t));
        kc_diag_fix(&P->c->diag, "write kc_%s(…) to build a vector, or (%s)x to convert a scalar",
                    tok_str(P->c, t), tok_str(P->c, t));
        next(P);
        skip_group(P);
        return error_expr(P, t->loc);
    }
    error_at(P, t->loc, "expected an expression, found %s", describe(P, t));
    return error_expr(P, t->loc);
}

/* postfix = primary ("[" expr "]" | "." ident | "->" ident | "++" | "--")* */
static kc_expr *postfix(parser *P)
{
    kc_expr *e = primary(P);
    for (;;) {
        const token *t = peek(P);
        if (tok_is(t, "[")) {
            next(P);
            kc_expr *idx = expr(P);
            expect(P, "]", "to close the index");
            e = track(P, new_binary(P, KC_E_INDEX, 0, e, idx, e->loc));
        } else if (tok_is(t, ".")) {
            next(P);
            const token *f = peek(P);
            const char *name = expect_ident(P, "a component name (x, y, z or w)");
            kc_expr *m = new_expr(P, KC_E_MEMBER, e->loc);
            (void)f;
            m->a = e;
            m->name = name;
            e = track(P, m);
        } else if (tok_is(t, "->")) {
            error_at(P, t->loc, "'->' is not in the language (there are no structs or pointers)");
            next(P);
            next(P);
        } else if (tok_is(t, "++") || tok_is(t, "--")) {
            next(P);
            kc_expr *u = new_expr(P, KC_E_INCDEC, t->loc);
            u->op = tok_is(t, "++") ? KC_OP_ADD : KC_OP_SUB;
            u->is_post = true;
            u->a = e;
            e = track(P, u);
        } else {
            return e;
        }
    }
}

/* unary = ("+" | "-" | "!" | "~" | "++" | "--" | "&" | "*") cast | postfix */
static kc_expr *unary(parser *P)
{
    const token *t = peek(P);
    static const struct {
        const char *s;
        kc_op op;
    } ops[] = {{"-", KC_OP_NEG}, {"!", KC_OP_NOT}, {"~", KC_OP_BNOT}};
    if (!tok_is(t, "+") && !tok_is(t, "-") && !tok_is(t, "!") && !tok_is(t, "~") && !tok_is(t, "++") &&
        !tok_is(t, "--") && !tok_is(t, "&") && !tok_is(t, "*"))
        return postfix(P);
    if (!enter(P, t->loc)) {
        while (tok_is(peek(P), "-") || tok_is(peek(P), "+") || tok_is(peek(P), "!") ||
               tok_is(peek(P), "~") || tok_is(peek(P), "&") || tok_is(peek(P), "*") ||
               tok_is(peek(P), "++") || tok_is(peek(P), "--") || tok_is(peek(P), "("))
            tok_is(peek(P), "(") ? skip_group(P) : (void)next(P);
        return error_expr(P, t->loc);
    }
    next(P);
    kc_expr *e;
    if (tok_is(t, "+")) {
        e = cast(P);
    } else if (tok_is(t, "++") || tok_is(t, "--")) {
        e = new_expr(P, KC_E_INCDEC, t->loc);
        e->op = tok_is(t, "++") ? KC_OP_ADD : KC_OP_SUB;
        e->a = cast(P);
    } else if (tok_is(t, "&")) {
        e = new_expr(P, KC_E_ADDR, t->loc);
        e->a = cast(P);
    } else if (tok_is(t, "*")) {
        error_at(P, t->loc, "pointer dereference is not in the language");
        kc_diag_fix(&P->c->diag, "index the buffer instead: x[i]");
        e = cast(P);
    } else {
        e = new_expr(P, KC_E_UNARY, t->loc);
        for (size_t i = 0; i < KC_COUNT(ops); i++)
            if (tok_is(t, ops[i].s))
                e->op = ops[i].op;
        e->a = cast(P);
    }
    leave(P);
    return track(P, e);
}

/* cast = "(" type-name ")" cast | unary */
static kc_expr *cast(parser *P)
{
    const token *t = peek(P);
    const token *u = peek_at(P, 1);
    if (tok_is(t, "(") && (type_name_index(u) >= 0 || refused_type_index(u) >= 0 ||
                           tok_is(u, "unsigned") || tok_is(u, "signed") || tok_is(u, "const"))) {
        if (!enter(P, t->loc)) {
            skip_group(P);
            return error_expr(P, t->loc);
        }
        next(P);
        accept(P, "const");
        const kc_type *ty = type_name(P, false);
        if (is(P, "*")) {
            error_at(P, peek(P)->loc, "pointer casts are not in the language");
            while (accept(P, "*"))
                ;
        }
        expect(P, ")", "after the type in a cast");
        kc_expr *e = new_expr(P, KC_E_CAST, t->loc);
        e->type = ty ? ty : kc_type_error();
        e->a = cast(P);
        leave(P);
        return track(P, e);
    }
    return unary(P);
}

/* Binary operators by precedence (kc_lang.h), lowest first; each level
 * is level = next-level (op next-level)*, left-associative. */
static int binop_at(parser *P, int prec)
{
    for (int op = 0; op < KC_OP_COUNT; op++)
        if (kc_op_arity(op) == 2 && kc_op_precedence(op) == prec && is(P, kc_op_text(op)))
            return op;
    return -1;
}

static kc_expr *binary(parser *P, int prec)
{
    if (prec > KC_PREC_MUL)
        return cast(P);
    kc_expr *e = binary(P, prec + 1);
    int op;
    while ((op = binop_at(P, prec)) >= 0) {
        const token *t = next(P);
        kc_expr *rhs = binary(P, prec + 1);
        e = track(P, new_binary(P, KC_E_BINARY, (kc_op)op, e, rhs, t->loc));
    }
    return e;
}

/* conditional = binary ("?" expr ":" conditional)? */
static kc_expr *conditional(parser *P)
{
    kc_expr *e = binary(P, KC_PREC_LOR);
    const token *t = peek(P);
    if (!tok_is(t, "?"))
        return e;
    if (!enter(P, t->loc)) {
        skip_expr_rest(P);
        return error_expr(P, t->loc);
    }
    next(P);
    kc_expr *c = new_expr(P, KC_E_COND, t->loc);
    c->a = e;
    c->b = expr(P);
    expect(P, ":", "in the conditional expression");
    c->c = conditional(P);
    leave(P);
    return track(P, c);
}

/* assign = conditional (assign-op assign)? */
static kc_expr *assign(parser *P)
{
    kc_expr *lhs = conditional(P);
    static const struct {
        const char *s;
        kc_op op;
        bool has_op;
    } aops[] = {
        {"=", 0, false},          {"+=", KC_OP_ADD, true}, {"-=", KC_OP_SUB, true},
        {"*=", KC_OP_MUL, true},  {"/=", KC_OP_DIV, true}, {"%=", KC_OP_MOD, true},
        {"&=", KC_OP_AND, true},  {"|=", KC_OP_OR, true},  {"^=", KC_OP_XOR, true},
        {"<<=", KC_OP_SHL, true}, {">>=", KC_OP_SHR, true},
    };
    for (size_t i = 0; i < KC_COUNT(aops); i++) {
        if (!is(P, aops[i].s))
            continue;
        const token *t = next(P);
        if (!enter(P, t->loc)) {
            skip_expr_rest(P);
            return error_expr(P, t->loc);
        }
        kc_expr *e = new_binary(P, KC_E_ASSIGN, aops[i].op, lhs, assign(P), t->loc);
        e->has_op = aops[i].has_op;
        leave(P);
        return track(P, e);
    }
    return lhs;
}

/* expr = assign ("," assign)* */
static kc_expr *expr(parser *P)
{
    kc_expr *e = assign(P);
    while (is(P, ",")) {
        const token *t = next(P);
        e = track(P, new_binary(P, KC_E_COMMA, 0, e, assign(P), t->loc));
    }
    return e;
}

/* initializer = "{" (initializer ("," initializer)* ","?)? "}" | assign */
static kc_expr *initializer(parser *P)
{
    const token *t = peek(P);
    if (!tok_is(t, "{"))
        return assign(P);
    if (!enter(P, t->loc)) {
        skip_group(P);
        return error_expr(P, t->loc);
    }
    next(P);
    kc_expr *e = new_expr(P, KC_E_INIT, t->loc);
    while (!is(P, "}") && !at_eof(P)) {
        kc_vec_push(&P->c->arena, &e->args, initializer(P));
        if (!accept(P, ","))
            break;
    }
    expect(P, "}", "to close the initialiser");
    leave(P);
    return e;
}

/* ---- declarations ------------------------------------------------------------ */

typedef struct specs {
    kc_loc loc;
    const kc_type *type;
    bool is_const, is_static, is_shared, is_inline;
} specs;

/* Is the token one edit (a changed, added or dropped letter) from word? */
static bool near_miss(const token *t, const char *word)
{
    int n = (int)strlen(word), m = t->len, i = 0;
    if (m - n > 1 || n - m > 1)
        return false;
    while (i < m && i < n && t->text[i] == word[i])
        i++;
    if (i == m && i == n)
        return false; /* the word itself ("KC_UNROLL" where a type belongs): nothing misspelt */
    if (m == n)
        return strncmp(t->text + i + 1, word + i + 1, (size_t)(n - i - 1)) == 0;
    return m > n ? strncmp(t->text + i + 1, word + i, (size_t)(n - i)) == 0
                 : strncmp(t->text + i, word + i + 1, (size_t)(m - i)) == 0;
}

/* specs = ("const" | "static" | "KC_SHARED" | "inline" | type-name)+ */
static bool decl_specs(parser *P, specs *s)
{
    memset(s, 0, sizeof(*s));
    s->loc = peek(P)->loc;
    for (;;) {
        const token *t = peek(P);
        if (tok_is(t, "const"))
            s->is_const = true, next(P);
        else if (tok_is(t, "static"))
            s->is_static = true, next(P);
        else if (tok_is(t, "KC_SHARED"))
            s->is_shared = true, next(P);
        else if (tok_is(t, "inline"))
            s->is_inline = true, next(P);
        else if (tok_is(t, "restrict") || tok_is(t, "__restrict"))
            next(P);
        else if (!s->type && (type_name_index(t) >= 0 || refused_type_index(t) >= 0 ||
                              tok_is(t, "unsigned") || tok_is(t, "signed")))
            s->type = type_name(P, false);
        else
            break;
    }
    if (!s->type) {
        const token *t = peek(P);
        error_at(P, t->loc, "expected a type, found %s", describe(P, t));
        static const char *const words[] = {"KC_KERNEL", "KC_WORKGROUP", "KC_GRID", "KC_SHARED", "KC_MAY_ALIAS",
                                            "KC_TEXEL_READS", "KC_SPECIALIZE", "KC_TUNE", "KC_REQUIRE",
                                            "KC_UNROLL"};
        for (size_t i = 0; t->kind == TK_IDENT && t->len > 3 && !strncmp(t->text, "KC_", 3) && i < KC_COUNT(words); i++)
            if (near_miss(t, words[i])) {
                kc_diag_fix(&P->c->diag, "did you mean %s?", words[i]);
                break;
            }
        return false;
    }
    return true;
}

/* array-dims = ("[" expr? "]")*; extents are kept as expressions for sema. */
static void array_dims(parser *P, kc_vec *dims)
{
    while (is(P, "[")) {
        const token *t = next(P);
        kc_expr *len = NULL;
        if (!is(P, "]"))
            len = expr(P);
        else
            len = new_expr(P, KC_E_INIT, t->loc); /* marks an empty [] */
        expect(P, "]", "to close the array extent");
        kc_vec_push(&P->c->arena, dims, len);
    }
}

/* The dims of a declarator are kept on the symbol until sema turns them
 * into a type; an empty [] is a KC_E_INIT with no arguments. */
static kc_sym *new_sym(parser *P, kc_sym_kind kind, const char *name, kc_loc loc, const specs *s)
{
    kc_sym *sym = KC_NEW(&P->c->arena, kc_sym);
    sym->kind = kind;
    sym->name = name;
    sym->loc = loc;
    sym->type = s->type;
    sym->is_const = s->is_const;
    sym->storage = s->is_shared ? KC_STORE_SHARED : KC_STORE_PRIVATE;
    return sym;
}

/* param = specs ("*" ("const"|"restrict")*)* ident array-dims */
static kc_sym *param(parser *P)
{
    specs s;
    if (!decl_specs(P, &s))
        return NULL;
    int stars = 0;
    while (is(P, "*") || is(P, "const") || is(P, "restrict") || is(P, "__restrict"))
        if (next(P)->text[0] == '*')
            stars++;
    if (stars > 1) {
        error_at(P, peek(P)->loc, "pointers to pointers are not in the language");
    }
    const token *t = peek(P);
    const char *name;
    if (is(P, ",") || is(P, ")") || is(P, "[")) /* unnamed, as in a prototype */
        name = kc_arena_printf(&P->c->arena, "<unnamed %d:%d>", t->loc.line, t->loc.col);
    else if (is(P, "(")) {
        error_at(P, t->loc, "function pointers are not in the language");
        return NULL;
    } else if (!(name = expect_ident(P, "a parameter name")))
        return NULL;
    kc_sym *sym = new_sym(P, KC_SYM_PARAM, name, t->loc, &s);
    array_dims(P, &sym->dim_exprs);
    if (s.is_shared)
        error_at(P, s.loc, "a parameter cannot be KC_SHARED");
    if (s.is_static)
        error_at(P, s.loc, "a parameter cannot be static");
    if (stars) {
        sym->is_buffer = true;
        if (sym->dim_exprs.len)
            error_at(P, t->loc, "'%s' is both a pointer and an array", name);
    } else if (sym->dim_exprs.len) {
        sym->is_buffer = true;
    }
    return sym;
}

/* params = "(" ("void" | param ("," param)*)? ")" */
static void params(parser *P, kc_func *f)
{
    expect(P, "(", "after the function name");
    if (is(P, "void") && tok_is(peek_at(P, 1), ")")) {
        next(P);
    } else if (!is(P, ")")) {
        do {
            if (is(P, "...")) {
                error_at(P, peek(P)->loc, "variadic functions are not in the language");
                next(P);
                continue;
            }
            kc_sym *s = param(P);
            if (s) {
                s->index = f->params.len;
                kc_vec_push(&P->c->arena, &f->params, s);
            } else {
                while (!at_eof(P) && !is(P, ",") && !is(P, ")") && !is(P, "{"))
                    next(P);
            }
        } while (accept(P, ","));
    }
    expect(P, ")", "to close the parameter list");
}

static kc_stmt *stmt(parser *P);
static kc_stmt *compound(parser *P);

/* local-decl = specs declarator ("=" initializer)? ("," declarator ("=" initializer)?)* ";"
 * declarator = ident array-dims */
static kc_stmt *local_decl(parser *P)
{
    kc_stmt *d = new_stmt(P, KC_S_DECL, peek(P)->loc);
    specs s;
    if (!decl_specs(P, &s)) {
        sync_stmt(P);
        return d;
    }
    if (s.is_static && !s.is_shared) {
        error_at(P, s.loc, "static local variables are not in the language");
        kc_diag_fix(&P->c->diag, "use KC_SHARED for memory shared by the workgroup, or a plain local");
    }
    do {
        if (is(P, "(") && tok_is(peek_at(P, 1), "*")) {
            error_at(P, peek(P)->loc, "function pointers are not in the language");
            kc_diag_fix(&P->c->diag, "call the function directly; kc inlines helpers");
            sync_stmt(P);
            return d;
        }
        if (is(P, "*")) {
            error_at(P, peek(P)->loc, "pointer variables are not in the language");
            kc_diag_fix(&P->c->diag, "index the buffer directly: x[i]");
            while (accept(P, "*"))
                ;
        }
        const token *t = peek(P);
        const char *name = expect_ident(P, "a variable name");
        if (!name)
            break;
        kc_sym *sym = new_sym(P, KC_SYM_LOCAL, name, t->loc, &s);
        array_dims(P, &sym->dim_exprs);
        if (is(P, "(")) {
            error_at(P, peek(P)->loc, "functions cannot be declared inside a function");
            skip_group(P);
        }
        if (accept(P, "="))
            sym->init = initializer(P);
        kc_vec_push(&P->c->arena, &d->body, sym);
    } while (accept(P, ","));
    expect_semi(P, "after the declaration");
    return d;
}

/* for = "for" "(" (local-decl | expr? ";") expr? ";" expr? ")" stmt */
static kc_stmt *for_stmt(parser *P, const token *kw)
{
    kc_stmt *s = new_stmt(P, KC_S_FOR, kw->loc);
    expect(P, "(", "after 'for'");
    if (is_decl_start(P))
        s->init = local_decl(P);
    else if (!accept(P, ";")) {
        s->init = new_stmt(P, KC_S_EXPR, peek(P)->loc);
        s->init->expr = expr(P);
        expect(P, ";", "after the loop's initialisation");
    }
    if (!is(P, ";"))
        s->expr = expr(P);
    expect(P, ";", "after the loop condition");
    if (!is(P, ")"))
        s->step = expr(P);
    expect(P, ")", "to close the loop header");
    s->then = stmt(P);
    return s;
}

static kc_stmt *cond_stmt(parser *P, kc_stmt_kind kind, const token *kw)
{
    kc_stmt *s = new_stmt(P, kind, kw->loc);
    expect(P, "(", kc_arena_printf(&P->c->arena, "after '%.*s'", kw->len, kw->text));
    s->expr = expr(P);
    expect(P, ")", "to close the condition");
    s->then = stmt(P);
    if (kind == KC_S_IF && accept(P, "else"))
        s->els = stmt(P);
    return s;
}

/* stmt = compound | if | for | while | do | switch | case | default | break
 *      | continue | return | "KC_UNROLL" loop | local-decl | expr? ";" */
static kc_stmt *stmt_inner(parser *P)
{
    const token *t = peek(P);
    if (tok_is(t, "{"))
        return compound(P);
    if (tok_is(t, ";")) {
        next(P);
        return new_stmt(P, KC_S_EMPTY, t->loc);
    }
    if (tok_is(t, "if") || tok_is(t, "while") || tok_is(t, "switch")) {
        next(P);
        return cond_stmt(P, tok_is(t, "if") ? KC_S_IF : tok_is(t, "while") ? KC_S_WHILE : KC_S_SWITCH, t);
    }
    if (tok_is(t, "for")) {
        next(P);
        return for_stmt(P, t);
    }
    if (tok_is(t, "do")) {
        next(P);
        kc_stmt *s = new_stmt(P, KC_S_DO, t->loc);
        s->then = stmt(P);
        expect(P, "while", "after the body of 'do'");
        expect(P, "(", "after 'while'");
        s->expr = expr(P);
        expect(P, ")", "to close the condition");
        expect(P, ";", "after 'do … while (…)'");
        return s;
    }
    if (tok_is(t, "KC_UNROLL")) {
        next(P);
        kc_stmt *s = stmt(P);
        if (s->kind == KC_S_FOR || s->kind == KC_S_WHILE || s->kind == KC_S_DO)
            s->unroll = true;
        else
            error_at(P, t->loc, "KC_UNROLL must come just before a loop");
        return s;
    }
    if (tok_is(t, "case")) {
        next(P);
        kc_stmt *s = new_stmt(P, KC_S_CASE, t->loc);
        s->case_expr = conditional(P);
        expect(P, ":", "after the case value");
        return s;
    }
    if (tok_is(t, "default")) {
        next(P);
        expect(P, ":", "after 'default'");
        return new_stmt(P, KC_S_DEFAULT, t->loc);
    }
    if (tok_is(t, "break") || tok_is(t, "continue")) {
        next(P);
        expect_semi(P, kc_arena_printf(&P->c->arena, "after '%.*s'", t->len, t->text));
        return new_stmt(P, tok_is(t, "break") ? KC_S_BREAK : KC_S_CONTINUE, t->loc);
    }
    if (tok_is(t, "return")) {
        next(P);
        kc_stmt *s = new_stmt(P, KC_S_RETURN, t->loc);
        if (!is(P, ";"))
            s->expr = expr(P);
        expect_semi(P, "after the return value");
        return s;
    }
    if (tok_is(t, "else")) {
        error_at(P, t->loc, "'else' without a matching 'if'");
        kc_diag_fix(&P->c->diag, "check the braces of the 'if' before it");
        next(P);
        return new_stmt(P, KC_S_EMPTY, t->loc);
    }
    if (t->kind == TK_IDENT && !is_reserved(t) && peek_at(P, 1)->kind == TK_IDENT && !is_reserved(peek_at(P, 1)) &&
        (tok_is(peek_at(P, 2), "=") || tok_is(peek_at(P, 2), ";") || tok_is(peek_at(P, 2), "[") ||
         tok_is(peek_at(P, 2), ","))) {
        /* "float3 p;": a declaration with a type kc does not have */
        error_at(P, t->loc, "unknown type '%s'", tok_str(P->c, t));
        if (t->len > 1 && (t->text[t->len - 1] == '3' || t->text[t->len - 1] == '8'))
            kc_diag_fix(&P->c->diag, "kc's vectors have 2 or 4 components: float2, float4, half2, half4, int2, int4, uint2, uint4");
        else if (tok_is(t, "__half") || tok_is(t, "_Float16"))
            kc_diag_fix(&P->c->diag, "write 'half'");
        else
            kc_diag_fix(&P->c->diag, "kc's types are bool, int, uint, long, ulong, half, float and their 2- and 4-vectors");
        sync_stmt(P);
        return new_stmt(P, KC_S_EMPTY, t->loc);
    }
    if (tok_is(t, "goto")) {
        error_at(P, t->loc, "goto is not in the language");
        kc_diag_fix(&P->c->diag, "use break, continue or a flag");
        sync_stmt(P);
        return new_stmt(P, KC_S_EMPTY, t->loc);
    }
    if (t->kind == TK_IDENT && tok_is(peek_at(P, 1), ":") && !is_reserved(t)) {
        error_at(P, t->loc, "labels are not in the language");
        next(P), next(P);
        return new_stmt(P, KC_S_EMPTY, t->loc);
    }
    if (is_decl_start(P))
        return local_decl(P);
    kc_stmt *s = new_stmt(P, KC_S_EXPR, t->loc);
    s->expr = expr(P);
    expect_semi(P, "after the expression");
    return s;
}

static kc_stmt *stmt(parser *P)
{
    const token *t = peek(P);
    if (!enter(P, t->loc)) {
        if (tok_is(t, "{") || tok_is(t, "("))
            skip_group(P);
        sync_stmt(P);
        return new_stmt(P, KC_S_EMPTY, t->loc);
    }
    kc_stmt *s = stmt_inner(P);
    leave(P);
    return s;
}

/* compound = "{" stmt* "}" */
static kc_stmt *compound(parser *P)
{
    const token *open = peek(P);
    kc_stmt *b = new_stmt(P, KC_S_BLOCK, open->loc);
    expect(P, "{", "to open a block");
    while (!is(P, "}") && !at_eof(P) && !kc_diag_too_many(&P->c->diag)) {
        int before = P->pos;
        kc_stmt *s = stmt(P);
        kc_vec_push(&P->c->arena, &b->body, s);
        /* after an error, skip to the statement's end, unless it already
         * ended there: the next statement deserves its own check */
        if (P->panic) {
            const token *last = P->pos ? &P->t[P->pos - 1] : NULL;
            if (last && (tok_is(last, ";") || tok_is(last, "}")))
                P->panic = false;
            else
                sync_stmt(P);
        }
        if (P->pos == before) /* no progress: skip a token rather than loop */
            next(P);
    }
    if (!accept(P, "}")) {
        P->panic = false;
        error_at(P, open->loc, "this '{' is never closed");
    }
    return b;
}

/* ---- file scope -------------------------------------------------------------- */

/* tune = "KC_TUNE" "(" ident "," expr ("," expr)* ")" ";"? */
static void tune_decl(parser *P, const token *kw)
{
    kc_tunable *t = KC_NEW(&P->c->arena, kc_tunable);
    t->loc = kw->loc;
    expect(P, "(", "after KC_TUNE");
    const token *nt = peek(P);
    t->name = expect_ident(P, "the tunable's name");
    if (t->name)
        t->loc = nt->loc;
    while (accept(P, ","))
        kc_vec_push(&P->c->arena, &t->exprs, conditional(P));
    expect(P, ")", "to close KC_TUNE");
    accept(P, ";");
    if (t->name) {
        t->index = P->prog->tunables.len;
        kc_vec_push(&P->c->arena, &P->prog->tunables, t);
    }
}

/* require = "KC_REQUIRE" "(" expr ")" ";"? */
static void require_decl(parser *P, const token *kw)
{
    kc_require *r = KC_NEW(&P->c->arena, kc_require);
    r->loc = kw->loc;
    expect(P, "(", "after KC_REQUIRE");
    r->expr = expr(P);
    expect(P, ")", "to close KC_REQUIRE");
    accept(P, ";");
    kc_vec_push(&P->c->arena, &P->prog->requires, r);
}

/* attr3 = "(" conditional "," conditional "," conditional ")" */
static void attr3(parser *P, kc_expr *out[3], const char *what)
{
    expect(P, "(", kc_arena_printf(&P->c->arena, "after %s", what));
    for (int i = 0; i < 3; i++) {
        if (i > 0 && !expect(P, ",", kc_arena_printf(&P->c->arena, "between %s's three sizes", what)))
            break;
        out[i] = conditional(P);
    }
    expect(P, ")", kc_arena_printf(&P->c->arena, "to close %s", what));
}

/* attr1 = "(" conditional ")" */
static kc_expr *attr1(parser *P, const char *what)
{
    expect(P, "(", kc_arena_printf(&P->c->arena, "after %s", what));
    kc_expr *e = conditional(P);
    expect(P, ")", kc_arena_printf(&P->c->arena, "to close %s", what));
    return e;
}

/* attr-list = "(" conditional { "," conditional } ")" */
static void attr_list(parser *P, kc_vec *out, const char *what)
{
    expect(P, "(", kc_arena_printf(&P->c->arena, "after %s", what));
    do
        kc_vec_push(&P->c->arena, out, conditional(P));
    while (accept(P, ","));
    expect(P, ")", kc_arena_printf(&P->c->arena, "to close %s", what));
}

/* Skips to the next thing that can start a top-level declaration. */
static void sync_top(parser *P)
{
    while (!at_eof(P)) {
        const token *t = peek(P);
        if (tok_is(t, ";")) {
            next(P);
            break;
        }
        if (tok_is(t, "{")) {
            skip_group(P);
            break;
        }
        if (t->bol && (tok_is(t, "KC_TUNE") || tok_is(t, "KC_REQUIRE") || tok_is(t, "KC_KERNEL") ||
                       tok_is(t, "static")))
            break;
        if (tok_is(t, "(") || tok_is(t, "["))
            skip_group(P);
        else
            next(P);
    }
    P->panic = false;
}

/* const-decl = specs ident array-dims "=" initializer ";" */
static void global_decl(parser *P, const specs *s, const token *name_tok)
{
    const char *name = tok_str(P->c, name_tok);
    kc_sym *sym = new_sym(P, KC_SYM_CONST, name, name_tok->loc, s);
    array_dims(P, &sym->dim_exprs);
    if (!s->is_const) {
        error_at(P, name_tok->loc, "global variables are not in the language");
        kc_diag_fix(&P->c->diag, "make it 'const' with an initialiser, a kernel parameter, or a local");
        sync_top(P);
        return;
    }
    if (!expect(P, "=", "after a file-scope constant (it needs a value)")) {
        sync_top(P);
        return;
    }
    sym->init = initializer(P);
    sym->storage = KC_STORE_CONST;
    kc_vec_push(&P->c->arena, &P->prog->consts, sym);
    if (!expect(P, ";", "after the constant"))
        sync_top(P);
}

/* function = attrs specs ident params (compound | ";") */
static void top_decl(parser *P)
{
    kc_func *f = KC_NEW(&P->c->arena, kc_func);
    f->loc = peek(P)->loc;
    /* attributes may come in any order, before or among the specifiers */
    for (;;) {
        const token *t = peek(P);
        if (tok_is(t, "KC_KERNEL"))
            f->is_kernel = true, next(P);
        else if (tok_is(t, "KC_MAY_ALIAS"))
            f->may_alias = true, next(P);
        else if (tok_is(t, "KC_WORKGROUP"))
            next(P), f->wg_loc = t->loc, attr3(P, f->wg, "KC_WORKGROUP");
        else if (tok_is(t, "KC_GRID"))
            next(P), f->grid_loc = t->loc, attr3(P, f->grid, "KC_GRID");
        else if (tok_is(t, "KC_TEXEL_READS"))
            next(P), f->texel_loc = t->loc, f->texel = attr1(P, "KC_TEXEL_READS");
        else if (tok_is(t, "KC_SPECIALIZE"))
            next(P), f->spec_loc = t->loc, attr_list(P, &f->spec, "KC_SPECIALIZE");
        else
            break;
    }
    specs s;
    if (!decl_specs(P, &s)) {
        sync_top(P);
        return;
    }
    f->is_static = s.is_static;
    f->ret = s.type;
    if (is(P, "*")) {
        error_at(P, peek(P)->loc, "functions cannot return pointers");
        while (accept(P, "*"))
            ;
    }
    const token *nt = peek(P);
    if (tok_is(nt, "(") && tok_is(peek_at(P, 1), "*")) {
        error_at(P, nt->loc, "function pointers are not in the language");
        kc_diag_fix(&P->c->diag, "call the function directly; kc inlines helpers");
        sync_top(P);
        return;
    }
    if (nt->kind != TK_IDENT || is_reserved(nt)) {
        error_at(P, nt->loc, "expected a name, found %s", describe(P, nt));
        sync_top(P);
        return;
    }
    next(P);
    if (!is(P, "(")) {
        if (f->is_kernel)
            error_at(P, nt->loc, "KC_KERNEL must mark a function");
        global_decl(P, &s, nt);
        return;
    }
    f->name = tok_str(P->c, nt);
    f->loc = nt->loc;
    params(P, f);
    if (accept(P, ";")) {
        kc_vec_push(&P->c->arena, &P->prog->funcs, f); /* a prototype */
        return;
    }
    if (!is(P, "{")) {
        error_at(P, peek(P)->loc, "expected '{' to start the body of '%s', found %s", f->name,
                 describe(P, peek(P)));
        sync_top(P);
        return;
    }
    P->depth = 0;
    f->body = compound(P);
    f->defined = true;
    kc_vec_push(&P->c->arena, &P->prog->funcs, f);
}

kc_program *kc_parse_tokens(kc_ctx *c, const token *toks, int ntoks)
{
    parser P = {c, toks, ntoks, 0, 0, false, KC_NEW(&c->arena, kc_program)};
    while (!at_eof(&P) && !kc_diag_too_many(&c->diag)) {
        const token *t = peek(&P);
        int before = P.pos;
        P.depth = 0;
        if (tok_is(t, "KC_TUNE"))
            next(&P), tune_decl(&P, t);
        else if (tok_is(t, "KC_REQUIRE"))
            next(&P), require_decl(&P, t);
        else if (tok_is(t, ";"))
            next(&P);
        else
            top_decl(&P);
        if (P.panic)
            sync_top(&P);
        if (P.pos == before)
            next(&P);
    }
    return P.prog;
}
