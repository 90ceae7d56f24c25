/*
 * src.c — the source files of a compilation, and whole-file I/O.
 * Every token and node points back here through a kc_loc, so diagnostics
 * can print the offending line long after lexing.
 */
#include "kc_support.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void kc_src_init(kc_src *s, kc_arena *a)
{
    memset(s, 0, sizeof(*s));
    s->arena = a;
}

void kc_src_free(kc_src *s)
{
    for (int i = 0; i < s->nfiles; i++)
        if (!s->files[i]->builtin)
            free((void *)s->files[i]->text);
    free(s->files);
    memset(s, 0, sizeof(*s));
}

static int add_file(kc_src *s, kc_src_file *f)
{
    if (s->nfiles == s->cap) {
        int cap = s->cap ? s->cap * 2 : 16;
        kc_src_file **files = realloc(s->files, sizeof(*files) * (size_t)cap);
        if (!files)
            abort();
        s->files = files;
        s->cap = cap;
    }
    s->files[s->nfiles] = f;
    return s->nfiles++;
}

int kc_src_load(kc_src *s, const char *path)
{
    size_t len;
    char *text = kc_read_file(path, &len);
    if (!text)
        return -1;
    kc_src_file *f = KC_NEW(s->arena, kc_src_file);
    f->path = kc_arena_strdup(s->arena, path);
    f->text = text;
    f->len = len;
    return add_file(s, f);
}

int kc_src_add(kc_src *s, const char *path, const char *text, size_t len, bool builtin)
{
    kc_src_file *f = KC_NEW(s->arena, kc_src_file);
    f->path = kc_arena_strdup(s->arena, path);
    if (builtin) {
        f->text = text;
    } else {
        char *copy = malloc(len + 1);
        if (!copy)
            abort();
        memcpy(copy, text, len);
        copy[len] = 0;
        f->text = copy;
    }
    f->len = len;
    f->builtin = builtin;
    return add_file(s, f);
}

char *kc_read_file(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    struct stat st;
    if (fstat(fileno(fp), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(fp);
        errno = EISDIR;
        return NULL;
    }
    kc_buf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), fp)) > 0)
        kc_buf_append(&b, chunk, n);
    int err = ferror(fp) ? errno : 0;
    fclose(fp);
    if (err) {
        kc_buf_free(&b);
        errno = err;
        return NULL;
    }
    if (len)
        *len = b.len;
    return kc_buf_take(&b);
}

int kc_write_file_atomic(const char *path, const void *data, size_t len)
{
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 16);
    if (!tmp)
        abort();
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp.XXXXXX", 12);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        free(tmp);
        return -1;
    }
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            goto fail;
        }
        p += w;
        left -= (size_t)w;
    }
    if (fsync(fd) != 0)
        goto fail;
    if (fchmod(fd, 0644) != 0)
        goto fail;
    if (close(fd) != 0) {
        fd = -1;
        goto fail;
    }
    if (rename(tmp, path) != 0) {
        fd = -1;
        goto fail;
    }
    free(tmp);
    return 0;
fail: {
    int err = errno;
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    free(tmp);
    errno = err;
    return -1;
}
}
