/*
 * dsl.c — the front end's pipeline: preprocess, parse, check.
 */
#include "dsl_private.h"

#include <errno.h>
#include <string.h>

void kc_ctx_init(kc_ctx *c, FILE *out)
{
    kc_arena_init(&c->arena);
    kc_src_init(&c->src, &c->arena);
    kc_diag_init(&c->diag, &c->src, out);
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
    int file = kc_src_load(&c->src, path);
    if (file < 0) {
        kc_error_at(&c->diag, KC_NO_LOC, "cannot read '%s': %s", path, strerror(errno));
        return NULL;
    }
    if (c->src.files[file]->len > KC_MAX_SOURCE_BYTES) {
        kc_error_at(&c->diag, KC_NO_LOC, "'%s' is too large (%zu MiB); kernel files may be up to %u MiB", path,
                    c->src.files[file]->len >> 20, KC_MAX_SOURCE_BYTES >> 20);
        return NULL;
    }
    return parse_file(c, file);
}

kc_program *kc_dsl_parse_text(kc_ctx *c, const char *path, const char *text, size_t len)
{
    if (len > KC_MAX_SOURCE_BYTES) {
        kc_error_at(&c->diag, KC_NO_LOC, "'%s' is too large; kernel files may be up to %u MiB", path,
                    KC_MAX_SOURCE_BYTES >> 20);
        return NULL;
    }
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
