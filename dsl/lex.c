/*
 * lex.c — turns a source file into tokens.
 *
 * The lexer never stops early on bad input: a stray byte, an unterminated
 * comment or a string where none belongs is reported once (a run of bad
 * bytes is one error) and lexing goes on, so the parser can report the
 * rest of the file's errors too.
 */
#include "dsl_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void tokvec_push(tokvec *v, const token *t)
{
    if (v->n == v->cap) {
        int cap = v->cap ? v->cap * 2 : 1024;
        token *p = realloc(v->t, sizeof(token) * (size_t)cap);
        if (!p)
            abort();
        v->t = p;
        v->cap = cap;
    }
    v->t[v->n++] = *t;
}

void tokvec_free(tokvec *v)
{
    free(v->t);
    v->t = NULL;
    v->n = v->cap = 0;
}

bool tok_is(const token *t, const char *s)
{
    return (t->kind == TK_PUNCT || t->kind == TK_IDENT) && (int)strlen(s) == t->len &&
           memcmp(t->text, s, (size_t)t->len) == 0;
}

const char *tok_str(kc_ctx *c, const token *t)
{
    return kc_arena_strndup(&c->arena, t->text, (size_t)t->len);
}

typedef struct lexer {
    kc_ctx *c;
    int file;
    const char *start, *p, *end;
    int line;
    const char *line_start;
    bool bol;
    tokvec *out;
} lexer;

static kc_loc here(const lexer *L, const char *at)
{
    return (kc_loc){L->file, L->line, (int)(at - L->line_start) + 1};
}

static bool is_ident_start(int ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
}

static bool is_ident_char(int ch)
{
    return is_ident_start(ch) || (ch >= '0' && ch <= '9');
}

static void newline(lexer *L)
{
    L->line++;
    L->line_start = L->p;
    L->bol = true;
}

/* Skips whitespace, comments and backslash-newlines. Returns false at end. */
static bool skip_space(lexer *L)
{
    while (L->p < L->end) {
        char ch = *L->p;
        if (ch == '\n') {
            L->p++;
            newline(L);
        } else if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v') {
            L->p++;
        } else if (ch == '\\' && L->p + 1 < L->end && (L->p[1] == '\n' || L->p[1] == '\r')) {
            /* line continuation: the next line belongs to this one */
            L->p += L->p[1] == '\r' && L->p + 2 < L->end && L->p[2] == '\n' ? 3 : 2;
            L->line++;
            L->line_start = L->p;
        } else if (ch == '/' && L->p + 1 < L->end && L->p[1] == '/') {
            while (L->p < L->end && *L->p != '\n')
                L->p++;
        } else if (ch == '/' && L->p + 1 < L->end && L->p[1] == '*') {
            kc_loc at = here(L, L->p);
            L->p += 2;
            for (;;) {
                if (L->p >= L->end) {
                    kc_error_at(&L->c->diag, at, "unterminated comment");
                    kc_diag_fix(&L->c->diag, "close it with '*/'");
                    return false;
                }
                if (L->p[0] == '*' && L->p + 1 < L->end && L->p[1] == '/') {
                    L->p += 2;
                    break;
                }
                if (*L->p++ == '\n') {
                    L->line++;
                    L->line_start = L->p;
                }
            }
        } else {
            return true;
        }
    }
    return false;
}

/* The longest punctuator at p: three characters, then two, then one. */
static int punct_len(const char *p, const char *end)
{
    static const char three[][4] = {"<<=", ">>=", "..."};
    static const char two[][3] = {"->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&",
                                  "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "##"};
    size_t n = (size_t)(end - p);
    for (size_t i = 0; n >= 3 && i < KC_COUNT(three); i++)
        if (p[0] == three[i][0] && p[1] == three[i][1] && p[2] == three[i][2])
            return 3;
    for (size_t i = 0; n >= 2 && i < KC_COUNT(two); i++)
        if (p[0] == two[i][0] && p[1] == two[i][1])
            return 2;
    return n >= 1 && *p && strchr("()[]{}.,;:?+-*/%&|^~!<>=#", *p) ? 1 : 0;
}

static void emit(lexer *L, token *t)
{
    t->bol = L->bol;
    L->bol = false;
    tokvec_push(L->out, t);
}

/* A preprocessing number: digits, letters, '.', and signs after e/E/p/P. */
static const char *scan_number(const char *p, const char *end)
{
    while (p < end) {
        if ((p[0] == 'e' || p[0] == 'E' || p[0] == 'p' || p[0] == 'P') && p + 1 < end &&
            (p[1] == '+' || p[1] == '-'))
            p += 2;
        else if (is_ident_char((unsigned char)*p) || *p == '.')
            p++;
        else
            break;
    }
    return p;
}

static bool parse_int_suffix(token *t, const char *s, const char *end)
{
    bool u = false, l = false;
    for (; s < end; s++) {
        if ((*s == 'u' || *s == 'U') && !u)
            u = true;
        else if ((*s == 'l' || *s == 'L') && !l) {
            l = true;
            if (s + 1 < end && s[1] == s[0])
                s++; /* ll */
        } else
            return false;
    }
    t->int_unsigned = u;
    t->int_long = l;
    return true;
}

static void lex_number(lexer *L, token *t)
{
    const char *s = L->p, *e = scan_number(L->p, L->end);
    char buf[128];
    size_t n = (size_t)(e - s);
    t->text = s;
    t->len = (int)n;
    L->p = e;
    if (n >= sizeof(buf)) {
        kc_error_at(&L->c->diag, t->loc, "number is too long");
        t->kind = TK_INT;
        return;
    }
    memcpy(buf, s, n);
    buf[n] = 0;
    bool hex = n > 1 && buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X');
    bool is_float = strpbrk(buf, ".") || (!hex && strpbrk(buf, "eE")) || (hex && strpbrk(buf, "pP"));
    char *end;
    errno = 0;
    if (is_float) {
        t->kind = TK_FLOAT;
        t->fval = strtod(buf, &end);
        if (*end == 'f' || *end == 'F')
            t->float_suffix = true, end++;
        if (*end || end == buf) {
            kc_error_at(&L->c->diag, t->loc, "malformed floating-point number '%s'", buf);
            return;
        }
        return;
    }
    t->kind = TK_INT;
    int base = 10;
    const char *digits = buf;
    if (hex)
        base = 16, digits = buf + 2;
    else if (buf[0] == '0' && n > 1 && buf[1] >= '0' && buf[1] <= '9')
        base = 8, digits = buf + 1;
    else if (n > 1 && buf[0] == '0' && (buf[1] == 'b' || buf[1] == 'B'))
        base = 2, digits = buf + 2;
    t->ival = strtoull(digits, &end, base);
    if (end == digits && base != 8) {
        kc_error_at(&L->c->diag, t->loc, "malformed number '%s'", buf);
        return;
    }
    if (errno == ERANGE) {
        kc_error_at(&L->c->diag, t->loc, "integer literal '%s' is too large", buf);
        return;
    }
    if (!parse_int_suffix(t, end, buf + n)) {
        if ((*end == 'f' || *end == 'F') && base == 10)
            kc_error_at(&L->c->diag, t->loc, "'%s' needs a decimal point to be a float", buf),
                kc_diag_fix(&L->c->diag, "write '%.*s.0f'", (int)(end - buf), buf);
        else
            kc_error_at(&L->c->diag, t->loc, "malformed number '%s'", buf);
    }
}

/* Strings and character literals only appear after #include; elsewhere the
 * parser reports them. Unterminated ones end at the end of the line. */
static void lex_quoted(lexer *L, token *t, char close)
{
    const char *s = L->p++;
    while (L->p < L->end && *L->p != close && *L->p != '\n') {
        if (*L->p == '\\' && L->p + 1 < L->end && L->p[1] != '\n')
            L->p++;
        L->p++;
    }
    if (L->p >= L->end || *L->p != close) {
        kc_error_at(&L->c->diag, t->loc, "missing terminating %c character", close);
    } else {
        L->p++;
    }
    t->kind = TK_STRING;
    t->text = s;
    t->len = (int)(L->p - s);
}

/* Just after "#include", a <header> is one token. */
static bool after_include(const lexer *L)
{
    int n = L->out->n;
    return n >= 2 && tok_is(&L->out->t[n - 1], "include") && tok_is(&L->out->t[n - 2], "#") &&
           L->out->t[n - 2].bol && L->out->t[n - 1].loc.file == L->file;
}

static void lex_header_name(lexer *L, token *t)
{
    const char *s = L->p++;
    while (L->p < L->end && *L->p != '>' && *L->p != '\n')
        L->p++;
    if (L->p >= L->end || *L->p != '>')
        kc_error_at(&L->c->diag, t->loc, "missing terminating '>' in #include");
    else
        L->p++;
    t->kind = TK_HEADER;
    t->text = s;
    t->len = (int)(L->p - s);
}

/* Reports bad input; returns true when t is still worth emitting. */
static bool stray(lexer *L, token *t)
{
    unsigned char ch = (unsigned char)*L->p;
    if (ch == '\'') {
        lex_quoted(L, t, '\'');
        kc_error_at(&L->c->diag, t->loc, "character literals are not in the language");
        kc_diag_fix(&L->c->diag, "use the character's integer code");
        t->kind = TK_INT; /* keeps the parser from a second error */
        return true;
    }
    if (ch >= 0x20 && ch < 0x7f)
        kc_error_at(&L->c->diag, t->loc, "stray '%c' in program", ch);
    else
        kc_error_at(&L->c->diag, t->loc, "stray byte 0x%02x in program%s", ch,
                    ch == 0 ? " (a NUL byte)" : ch >= 0x80 ? " (kernel source is ASCII)" : "");
    /* one error for a whole run of bad bytes */
    while (L->p < L->end) {
        unsigned char b = (unsigned char)*L->p;
        if (b == '\n' || b == ' ' || b == '\t' || (b >= 0x20 && b < 0x7f && b != '@' && b != '$' &&
                                                   b != '`' && b != '\\' && b != '\''))
            break;
        L->p++;
    }
    return false;
}

void kc_lex_file(kc_ctx *c, int file, tokvec *out)
{
    const kc_src_file *f = c->src.files[file];
    lexer L = {c, file, f->text, f->text, f->text + f->len, 1, f->text, true, out};
    while (skip_space(&L)) {
        token t = {0};
        t.loc = here(&L, L.p);
        unsigned char ch = (unsigned char)*L.p;
        if (is_ident_start(ch)) {
            const char *s = L.p;
            while (L.p < L.end && is_ident_char((unsigned char)*L.p))
                L.p++;
            t.kind = TK_IDENT;
            t.text = s;
            t.len = (int)(L.p - s);
        } else if ((ch >= '0' && ch <= '9') || (ch == '.' && L.p + 1 < L.end && L.p[1] >= '0' && L.p[1] <= '9')) {
            lex_number(&L, &t);
        } else if (ch == '"') {
            lex_quoted(&L, &t, '"');
        } else if (ch == '<' && after_include(&L)) {
            lex_header_name(&L, &t);
        } else if (punct_len(L.p, L.end) > 0) {
            t.kind = TK_PUNCT;
            t.text = L.p;
            t.len = punct_len(L.p, L.end);
            L.p += t.len;
        } else {
            if (!stray(&L, &t))
                continue;
        }
        emit(&L, &t);
        if (kc_diag_too_many(&c->diag))
            break;
    }
}
