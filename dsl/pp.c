/*
 * pp.c — the preprocessor subset of DESIGN.md §2:
 *
 *   #include <kc.h>     kc's own header, embedded in the binary
 *   #include "file"     relative to the including file
 *   #define NAME tokens object-like macros only
 *   #undef NAME
 *   #ifdef / #ifndef / #else / #endif, and #pragma once
 *
 * Everything else (function-like macros, #if expressions, #pragma unroll…)
 * is an error that says what to write instead. Include cycles end at
 * KC_MAX_INCLUDE_DEPTH with a message naming the chain, so guarded headers
 * that include each other still work.
 */
#include "dsl_private.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct macro {
    const char *name;
    token *body;
    int nbody;
    kc_loc loc;
    bool expanding; /* inside its own expansion: not expanded again */
} macro;

typedef struct cond {
    kc_loc loc;
    bool outer_active; /* was the group around this one being kept? */
    bool taken;        /* is this branch being kept? */
    bool any_taken;    /* was any branch of this conditional kept? */
    bool seen_else;
} cond;

typedef struct pp {
    kc_ctx *c;
    kc_map macros;
    kc_map once; /* real paths of #pragma once files already read */
    tokvec *out;
    int stack[KC_MAX_INCLUDE_DEPTH]; /* files being read */
    kc_loc include_at[KC_MAX_INCLUDE_DEPTH]; /* the #include that opened each */
    int depth;
    bool aborted; /* an include cycle or a runaway macro: stop reading altogether */
    long expanded; /* tokens produced by macro expansion so far */
    int header_file; /* <kc.h> in the source table, once added */
    int expand_depth;
} pp;

static void pp_file(pp *P, int file);

static macro *find_macro(pp *P, const token *t)
{
    if (t->kind != TK_IDENT)
        return NULL;
    return kc_map_getn(&P->macros, t->text, (size_t)t->len);
}

static void define(pp *P, const char *name, token *body, int nbody, kc_loc loc)
{
    macro *m = KC_NEW(&P->c->arena, macro);
    m->name = name;
    m->body = body;
    m->nbody = nbody;
    m->loc = loc;
    kc_map_put(&P->c->arena, &P->macros, name, m);
}

/* Emits a token, expanding it if it names a macro. Expanded tokens take
 * the location of the use, so errors point where the user wrote the name. */
static void emit(pp *P, const token *t, kc_loc use)
{
    macro *m = find_macro(P, t);
    if (P->aborted)
        return;
    if (!m || m->expanding || t->noexpand) {
        token copy = *t;
        if (use.file >= 0) { /* from a macro: it sits where the macro was used */
            copy.loc = use;
            copy.bol = false;
        }
        if (m)
            copy.noexpand = true;
        tokvec_push(P->out, &copy);
        return;
    }
    if (P->expand_depth >= KC_MAX_NESTING) {
        kc_error_at(&P->c->diag, t->loc, "macro '%s' expands too deeply", m->name);
        return;
    }
    kc_loc at = use.file >= 0 ? use : t->loc;
    P->expanded += m->nbody;
    if (P->expanded > KC_MAX_EXPANSION) { /* #define A B B, #define B C C, …: exponential */
        if (!P->aborted)
            kc_error_at(&P->c->diag, at, "macro '%s' expands to more than %d tokens", m->name, KC_MAX_EXPANSION);
        P->aborted = true;
        return;
    }
    m->expanding = true;
    P->expand_depth++;
    for (int i = 0; i < m->nbody; i++)
        emit(P, &m->body[i], at);
    P->expand_depth--;
    m->expanding = false;
}

/* The tokens of a directive line: from i to the next token at the start of
 * a line. Returns the index just past the line. */
static int line_end(const tokvec *v, int i)
{
    while (i < v->n && !v->t[i].bol)
        i++;
    return i;
}

static void extra_tokens(pp *P, const tokvec *v, int i, int end, const char *dir)
{
    if (i < end)
        kc_warn_at(&P->c->diag, v->t[i].loc, "extra tokens after #%s are ignored", dir);
}

static bool active(const kc_vec *conds)
{
    if (!conds->len)
        return true;
    const cond *c = conds->items[conds->len - 1];
    return c->outer_active && c->taken;
}

static char *dir_of(kc_arena *a, const char *path)
{
    const char *slash = kc_last_separator(path);
    return slash ? kc_arena_strndup(a, path, (size_t)(slash - path + 1)) : kc_arena_strdup(a, "");
}

static const char *real_path(kc_arena *a, const char *path)
{
    char buf[KC_PATH_MAX];
    return kc_real_path(path, buf, sizeof(buf)) ? kc_arena_strdup(a, buf) : path;
}

/* Too deep: find the first file that includes itself again and report
 * the #include that closes that cycle, once. */
static void report_cycle(pp *P, kc_loc deepest)
{
    kc_ctx *c = P->c;
    for (int j = 1; j < P->depth; j++) {
        const char *pj = real_path(&c->arena, c->src.files[P->stack[j]]->path);
        for (int i = 0; i < j; i++) {
            if (strcmp(pj, real_path(&c->arena, c->src.files[P->stack[i]]->path)) != 0)
                continue;
            kc_buf chain = {0};
            for (int k = i; k <= j; k++)
                kc_buf_printf(&chain, "%s'%s'", k > i ? " includes " : "", c->src.files[P->stack[k]]->path);
            kc_error_at(&c->diag, P->include_at[i + 1], "#include cycle: %s", chain.data);
            kc_diag_fix(&c->diag, "add an include guard or '#pragma once' to the headers, or break the cycle");
            kc_buf_free(&chain);
            return;
        }
    }
    kc_error_at(&c->diag, deepest, "#include nested more than %d deep", KC_MAX_INCLUDE_DEPTH);
}

/* Reads an included file if DESIGN.md §11 lets a package read it: a
 * regular file, under the package's folder or one given with -I, within
 * the size bound. Its contents are never echoed before they are known to
 * be kernel source, so nothing of a refused file reaches a diagnostic.
 * Returns the file's index, -1 when it is skipped (#pragma once) or an
 * error was reported. */
static int open_include(pp *P, const char *path, kc_loc at)
{
    kc_ctx *c = P->c;
    char buf[KC_PATH_MAX];
    if (!kc_real_path(path, buf, sizeof(buf))) {
        kc_error_at(&c->diag, at, "cannot open included file '%s': %s", path, strerror(errno));
        return -1;
    }
    if (!kc_ctx_may_include(c, buf)) {
        kc_error_at(&c->diag, at, "included file '%s' is outside the package's folder", path);
        kc_diag_fix(&c->diag, "a kernel may include files of its own folder and its subfolders; "
                              "pass -I DIR to kc to allow another folder");
        return -1;
    }
    if (kc_map_get(&P->once, buf))
        return -1;
    int file = kc_src_load(&c->src, buf, KC_MAX_SOURCE_BYTES);
    if (file < 0 && errno == EFBIG)
        kc_error_at(&c->diag, at, "included file '%s' is too large (over %u MiB)", path, KC_MAX_SOURCE_BYTES >> 20);
    else if (file < 0)
        kc_error_at(&c->diag, at, "cannot open included file '%s': %s", path, kc_read_error(errno));
    else
        c->src.files[file]->path = kc_arena_strdup(&c->arena, path);
    return file;
}

static void do_include(pp *P, const tokvec *v, int i, int end)
{
    kc_ctx *c = P->c;
    const token *name = i < end ? &v->t[i] : NULL;
    kc_loc loc = v->t[i - 1].loc;
    if (!name || (name->kind != TK_STRING && name->kind != TK_HEADER)) {
        kc_error_at(&c->diag, name ? name->loc : loc, "#include expects \"file\" or <kc.h>");
        return;
    }
    extra_tokens(P, v, i + 1, end, "include");
    if (name->len < 2 || name->text[name->len - 1] != (name->kind == TK_STRING ? '"' : '>'))
        return; /* the lexer reported the missing terminator */
    const char *inner = kc_arena_strndup(&c->arena, name->text + 1, (size_t)name->len - 2);
    int file;
    if (name->kind == TK_HEADER) {
        if (strcmp(inner, "kc.h") != 0) {
            kc_error_at(&c->diag, name->loc, "<%s> is not available to kernels", inner);
            kc_diag_fix(&c->diag, "only <kc.h> is included with <>; include your own files with \"file\"");
            return;
        }
        if (P->header_file < 0)
            P->header_file = kc_src_add(&c->src, "<kc.h>", kc_dsl_header, kc_dsl_header_len, true);
        file = P->header_file;
    } else {
        if (!*inner) {
            kc_error_at(&c->diag, name->loc, "empty file name in #include");
            return;
        }
        const char *from = c->src.files[name->loc.file]->path;
        const char *path = kc_path_is_absolute(inner) ? inner : kc_arena_printf(&c->arena, "%s%s", dir_of(&c->arena, from), inner);
        file = open_include(P, path, name->loc);
        if (file < 0)
            return;
    }
    if (P->depth >= KC_MAX_INCLUDE_DEPTH) {
        report_cycle(P, name->loc);
        P->aborted = true;
        return;
    }
    P->include_at[P->depth] = name->loc;
    pp_file(P, file);
}

static void do_define(pp *P, const tokvec *v, int i, int end)
{
    kc_ctx *c = P->c;
    if (i >= end || v->t[i].kind != TK_IDENT) {
        kc_error_at(&c->diag, i < end ? v->t[i].loc : v->t[i - 1].loc, "#define expects a name");
        return;
    }
    const token *name = &v->t[i];
    if (i + 1 < end && tok_is(&v->t[i + 1], "(") && v->t[i + 1].loc.line == name->loc.line &&
        v->t[i + 1].loc.col == name->loc.col + name->len) {
        kc_error_at(&c->diag, name->loc, "function-like macros are not supported");
        kc_diag_fix(&c->diag, "write a static helper function; kc inlines it");
        return;
    }
    int n = end - (i + 1);
    token *body = kc_arena_alloc(&c->arena, sizeof(token) * (size_t)(n ? n : 1));
    for (int k = 0; k < n; k++) {
        body[k] = v->t[i + 1 + k];
        if (tok_is(&body[k], "#") || tok_is(&body[k], "##")) {
            kc_error_at(&c->diag, body[k].loc, "'%.*s' is not supported in macros", body[k].len, body[k].text);
            return;
        }
    }
    const char *s = tok_str(c, name);
    macro *old = kc_map_get(&P->macros, s);
    if (old && old->loc.file >= 0) {
        bool same = old->nbody == n;
        for (int k = 0; same && k < n; k++)
            same = old->body[k].len == body[k].len &&
                   memcmp(old->body[k].text, body[k].text, (size_t)body[k].len) == 0;
        if (!same) {
            kc_warn_at(&c->diag, name->loc, "'%s' redefined", s);
            kc_note_at(&c->diag, old->loc, "previous definition is here");
        }
    }
    define(P, s, body, n, name->loc);
}

static void do_ifdef(pp *P, kc_vec *conds, const tokvec *v, int i, int end, bool want_defined)
{
    kc_ctx *c = P->c;
    cond *k = KC_NEW(&c->arena, cond);
    k->loc = v->t[i - 1].loc;
    k->outer_active = active(conds);
    if (i >= end || v->t[i].kind != TK_IDENT) {
        kc_error_at(&c->diag, k->loc, "#%s expects a name", want_defined ? "ifdef" : "ifndef");
        k->taken = true;
    } else {
        k->taken = (find_macro(P, &v->t[i]) != NULL) == want_defined;
        extra_tokens(P, v, i + 1, end, want_defined ? "ifdef" : "ifndef");
    }
    k->any_taken = k->taken;
    kc_vec_push(&c->arena, conds, k);
}

static void directive(pp *P, kc_vec *conds, const tokvec *v, int hash, int end)
{
    kc_ctx *c = P->c;
    int i = hash + 1;
    if (i >= end)
        return; /* the null directive */
    const token *d = &v->t[i++];
    bool on = active(conds);
    if (tok_is(d, "ifdef") || tok_is(d, "ifndef")) {
        do_ifdef(P, conds, v, i, end, tok_is(d, "ifdef"));
    } else if (tok_is(d, "if") || tok_is(d, "elif")) {
        /* refused wherever C would evaluate it; its group is never kept
         * (kc cannot know the value), so only one error comes of it */
        cond *k = tok_is(d, "elif") && conds->len ? conds->items[conds->len - 1] : NULL;
        if (tok_is(d, "if") ? on : !k || k->outer_active) {
            kc_error_at(&c->diag, d->loc, "#%.*s expressions are not supported", d->len, d->text);
            kc_diag_fix(&c->diag, "use #ifdef NAME / #ifndef NAME");
        }
        if (tok_is(d, "if")) {
            k = KC_NEW(&c->arena, cond);
            k->loc = d->loc;
            k->outer_active = on;
            kc_vec_push(&c->arena, conds, k);
        } else if (k) {
            k->taken = false;
        }
    } else if (tok_is(d, "else") || tok_is(d, "endif")) {
        if (!conds->len) {
            kc_error_at(&c->diag, d->loc, "#%.*s without #ifdef", d->len, d->text);
            return;
        }
        cond *k = conds->items[conds->len - 1];
        extra_tokens(P, v, i, end, tok_is(d, "else") ? "else" : "endif");
        if (tok_is(d, "endif")) {
            conds->len--;
        } else if (k->seen_else) {
            kc_error_at(&c->diag, d->loc, "#else after #else");
        } else {
            k->seen_else = true;
            k->taken = !k->any_taken;
        }
    } else if (!on) {
        return; /* other directives in a skipped group are not read */
    } else if (tok_is(d, "include")) {
        do_include(P, v, i, end);
    } else if (tok_is(d, "define")) {
        do_define(P, v, i, end);
    } else if (tok_is(d, "undef")) {
        if (i >= end || v->t[i].kind != TK_IDENT)
            kc_error_at(&c->diag, d->loc, "#undef expects a name");
        else
            kc_map_put(&c->arena, &P->macros, tok_str(c, &v->t[i]), NULL);
    } else if (tok_is(d, "pragma")) {
        if (i < end && tok_is(&v->t[i], "once")) {
            const char *path = c->src.files[d->loc.file]->path;
            kc_map_put(&c->arena, &P->once, real_path(&c->arena, path), (void *)1);
        } else if (i < end && tok_is(&v->t[i], "unroll")) {
            kc_error_at(&c->diag, d->loc, "#pragma unroll is not supported");
            kc_diag_fix(&c->diag, "write KC_UNROLL before the loop");
        } else {
            kc_error_at(&c->diag, d->loc, "unknown #pragma");
            kc_diag_fix(&c->diag, "kc knows only '#pragma once'");
        }
    } else if (tok_is(d, "error")) {
        kc_buf msg = {0};
        for (int k = i; k < end; k++)
            kc_buf_printf(&msg, "%s%.*s", k > i ? " " : "", v->t[k].len, v->t[k].text);
        kc_error_at(&c->diag, d->loc, "#error %s", msg.data ? msg.data : "");
        kc_buf_free(&msg);
    } else {
        kc_error_at(&c->diag, d->loc, "#%.*s is not supported", d->len, d->text);
        kc_diag_fix(&c->diag, "kc's preprocessor knows #include, #define, #undef, #ifdef, #ifndef, "
                              "#else, #endif, #error and #pragma once");
    }
}

static void pp_file(pp *P, int file)
{
    kc_ctx *c = P->c;
    tokvec v = {0};
    kc_lex_file(c, file, &v);
    P->stack[P->depth++] = file;
    kc_vec conds = {0};
    int i = 0;
    while (i < v.n && !kc_diag_too_many(&c->diag) && !P->aborted) {
        const token *t = &v.t[i];
        if (t->bol && tok_is(t, "#")) {
            int end = line_end(&v, i + 1);
            directive(P, &conds, &v, i, end);
            i = end;
            continue;
        }
        if (active(&conds))
            emit(P, t, KC_NO_LOC);
        i++;
    }
    for (int k = conds.len - 1; k >= 0 && !P->aborted; k--) {
        const cond *u = conds.items[k];
        kc_error_at(&c->diag, u->loc, "unterminated conditional: no #endif");
    }
    P->depth--;
    tokvec_free(&v);
}

void kc_pp_file(kc_ctx *c, int file, tokvec *out)
{
    pp P = {0};
    P.c = c;
    P.out = out;
    P.header_file = -1;
    static token one = {.kind = TK_INT, .text = "1", .len = 1, .ival = 1, .loc = {-1, 0, 0}};
    define(&P, "__KC__", &one, 1, KC_NO_LOC);
    /* kc's math library comes first; the macros it defines for itself are
     * forgotten before the user's file begins */
    int libm = kc_src_add(&c->src, "<kc_math>", kc_dsl_libm, kc_dsl_libm_len, true);
    pp_file(&P, libm);
    for (int i = 0; i < P.macros.cap; i++)
        if (P.macros.keys[i] && P.macros.vals[i] && ((macro *)P.macros.vals[i])->loc.file == libm)
            P.macros.vals[i] = NULL;
    pp_file(&P, file);
    token eof = {0};
    eof.kind = TK_EOF;
    eof.text = "";
    eof.loc = out->n ? out->t[out->n - 1].loc : (kc_loc){file, 1, 1};
    if (out->n) {
        eof.loc.col += out->t[out->n - 1].len;
    }
    tokvec_push(out, &eof);
}
