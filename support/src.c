/*
 * src.c — the source files of a compilation, and whole-file I/O.
 * Every token and node points back here through a kc_loc, so diagnostics
 * can print the offending line long after lexing.
 */
#include "kc_support.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
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

/* A lone CR (classic Mac OS line endings) ends a line as LF does; CRLF
 * needs nothing, as the lexer takes CR for a space. Without this a file
 * of CR-only lines was one long line, a comment or a directive to its
 * end, and passed as "ok (0 kernels)". */
static void lone_cr_to_lf(char *text, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\r' && (i + 1 == len || text[i + 1] != '\n'))
            text[i] = '\n';
}

static int add_file(kc_src *s, kc_src_file *f)
{
    if (!f->builtin)
        lone_cr_to_lf((char *)f->text, f->len);
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

int kc_src_load(kc_src *s, const char *path, size_t max)
{
    size_t len;
    char *text = kc_read_file_max(path, max, &len);
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

/* Opened without blocking (a FIFO would wait for a writer forever) and
 * checked to be a regular file before anything is read: /dev/zero,
 * /dev/stdin and named pipes are refused, and a file is never read past
 * max, whatever its size says (files under /proc say 0). */
char *kc_read_file_max(const char *path, size_t max, size_t *len)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) { /* Windows cannot open one: EACCES */
        errno = EISDIR;
        return NULL;
    }
    int fd = kc_open_read(path);
    if (fd < 0)
        return NULL;
    int err = 0;
    if (fstat(fd, &st) != 0)
        err = errno;
    else if (S_ISDIR(st.st_mode))
        err = EISDIR;
    else if (!S_ISREG(st.st_mode))
        err = ENODEV;
    else if ((uintmax_t)st.st_size > max)
        err = EFBIG;
    kc_buf b = {0};
    while (!err) {
        char chunk[65536];
        ssize_t n = read(fd, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            err = errno;
        else if (n == 0)
            break;
        else if (b.len + (size_t)n > max)
            err = EFBIG;
        else
            kc_buf_append(&b, chunk, (size_t)n);
    }
    close(fd);
    if (err) {
        kc_buf_free(&b);
        errno = err;
        return NULL;
    }
    if (len)
        *len = b.len;
    return kc_buf_take(&b);
}

char *kc_read_file(const char *path, size_t *len)
{
    return kc_read_file_max(path, KC_MAX_FILE_BYTES, len);
}

const char *kc_read_error(int err)
{
    switch (err) {
    case ENODEV: return "not a regular file";
    case EFBIG: return "too large";
    default: return strerror(err);
    }
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
    if (kc_file_sync(fd) != 0)
        goto fail;
    if (kc_file_set_new_mode(fd) != 0)
        goto fail;
    if (close(fd) != 0) {
        fd = -1;
        goto fail;
    }
    if (kc_file_replace(tmp, path) != 0) {
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
