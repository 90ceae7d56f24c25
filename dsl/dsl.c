/*
 * dsl.c — the front end's pipeline: preprocess, parse, check.
 */
#include "dsl_private.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void kc_ctx_init(kc_ctx *c, FILE *out)
{
    kc_arena_init(&c->arena);
    kc_src_init(&c->src, &c->arena);
    kc_diag_init(&c->diag, &c->src, out);
    c->include_dirs = (kc_vec){0};
}

bool kc_ctx_allow_dir(kc_ctx *c, const char *dir)
{
    char buf[KC_PATH_MAX];
    struct stat st;
    if (!kc_real_path(*dir ? dir : ".", buf, sizeof(buf)) || stat(buf, &st) != 0)
        return false;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return false;
    }
    size_t n = strlen(buf);
    if (n > 1 && buf[n - 1] == '/')
        buf[--n] = 0;
    kc_vec_push(&c->arena, &c->include_dirs, kc_arena_strdup(&c->arena, buf));
    return true;
}

bool kc_ctx_may_include(const kc_ctx *c, const char *real)
{
    for (int i = 0; i < c->include_dirs.len; i++) {
        const char *dir = c->include_dirs.items[i];
        size_t n = strlen(dir);
        if (strcmp(dir, "/") == 0 || (strncmp(real, dir, n) == 0 && real[n] == '/'))
            return true;
    }
    return false;
}

/* The folder of the file being parsed: its own includes may read it. */
static void allow_dir_of(kc_ctx *c, const char *path)
{
    const char *slash = kc_last_separator(path);
    const char *dir = slash ? kc_arena_strndup(&c->arena, path, (size_t)(slash - path + 1)) : ".";
    kc_ctx_allow_dir(c, dir);
}

void kc_ctx_free(kc_ctx *c)
{
    kc_diag_free(&c->diag);
    kc_src_free(&c->src);
    kc_arena_free(&c->arena);
}

/* The source hash covers the preprocessed tokens, so comments and layout
 * do not change it, but any change to what is compiled does. */
static void hash_tokens(const tokvec *v, char out[65])
{
    kc_sha256 h;
    unsigned char d[32];
    kc_sha256_init(&h);
    for (int i = 0; i < v->n; i++) {
        kc_sha256_update(&h, v->t[i].text, (size_t)v->t[i].len);
        kc_sha256_update(&h, " ", 1);
    }
    kc_sha256_final(&h, d);
    for (int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static kc_program *parse_file(kc_ctx *c, int file)
{
    kc_diag_defer(&c->diag);
    tokvec toks = {0};
    kc_pp_file(c, file, &toks);
    kc_program *p = NULL;
    if (!kc_diag_too_many(&c->diag)) {
        p = kc_parse_tokens(c, toks.t, toks.n);
        hash_tokens(&toks, p->source_hash);
        p->main_file = file;
        /* sema runs after syntax errors too: error nodes carry the error
         * type, which keeps it from repeating them, and the user gets the
         * file's other mistakes in one go */
        if (!kc_diag_too_many(&c->diag))
            kc_sema(c, p);
    }
    tokvec_free(&toks);
    kc_diag_flush(&c->diag);
    return c->diag.nerrors ? NULL : p;
}

kc_program *kc_dsl_parse(kc_ctx *c, const char *path)
{
    int file = kc_src_load(&c->src, path, KC_MAX_SOURCE_BYTES);
    if (file < 0 && errno == EFBIG) {
        kc_error_at(&c->diag, KC_NO_LOC, "'%s' is too large; kernel files may be up to %u MiB", path,
                    KC_MAX_SOURCE_BYTES >> 20);
        return NULL;
    }
    if (file < 0) {
        kc_error_at(&c->diag, KC_NO_LOC, "cannot read '%s': %s", path, kc_read_error(errno));
        return NULL;
    }
    allow_dir_of(c, path);
    return parse_file(c, file);
}

kc_program *kc_dsl_parse_text(kc_ctx *c, const char *path, const char *text, size_t len)
{
    if (len > KC_MAX_SOURCE_BYTES) {
        kc_error_at(&c->diag, KC_NO_LOC, "'%s' is too large; kernel files may be up to %u MiB", path,
                    KC_MAX_SOURCE_BYTES >> 20);
        return NULL;
    }
    allow_dir_of(c, path);
    return parse_file(c, kc_src_add(&c->src, path, text, len, false));
}

kc_func *kc_program_func(const kc_program *p, const char *name)
{
    for (int i = 0; i < p->funcs.len; i++) {
        kc_func *f = p->funcs.items[i];
        if (f->name && strcmp(f->name, name) == 0)
            return f;
    }
    return NULL;
}
