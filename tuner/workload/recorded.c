/*
 * recorded.c — the shapes an application launched, as libkcrt records
 * them (KCRT_RECORD_SHAPES=FILE, runtime/record.c), for `kc tune BUNDLE
 * --shapes-from FILE` (each kernel tuned at exactly the shapes the
 * application runs, not only at kc.yaml's) and `kc bench --shapes-from`.
 *
 * One "KERNEL SHAPE" a line ("conv1d cin=256,cout=256,t_in=1600,...");
 * blank lines and what follows a '#' are ignored. Every run of the
 * application appends to the same file, so a shape may come more than
 * once: the callers keep the first. The shape itself is checked against
 * the kernel later, where the kernel is known.
 */
#include "kc_workload.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LINE_MAX_CHARS = 4096 };

static bool is_name(const char *s, size_t n)
{
    if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return false;
    for (size_t i = 1; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
            return false;
    return true;
}

static char *copy(const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (!c)
        abort();
    return memcpy(c, s, n);
}

/* One line, comment and spaces gone; false with err when it is not
 * "KERNEL [SHAPE]". r->kernel stays NULL for a line with nothing. */
static bool parse_line(char *text, kc_recorded_shape *r, char *err, size_t errlen)
{
    text[strcspn(text, "#\r\n")] = 0;
    char *at = text;
    while (isspace((unsigned char)*at))
        at++;
    if (!*at)
        return true;
    size_t nk = strcspn(at, " \t");
    char *shape = at + nk;
    while (isspace((unsigned char)*shape))
        shape++;
    size_t ns = strcspn(shape, " \t");
    const char *rest = shape + ns;
    while (isspace((unsigned char)*rest))
        rest++;
    if (!is_name(at, nk) || *rest) {
        snprintf(err, errlen, "'%.80s' is not KERNEL SHAPE (as \"conv1d cin=256,cout=256,...\")", at);
        return false;
    }
    at[nk] = 0;
    shape[ns] = 0;
    r->kernel = copy(at);
    r->shape = copy(shape);
    return true;
}

static void push(kc_recorded *rec, int *cap, kc_recorded_shape r)
{
    if (rec->n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        rec->lines = realloc(rec->lines, sizeof(*rec->lines) * (size_t)*cap);
        if (!rec->lines)
            abort();
    }
    rec->lines[rec->n++] = r;
}

bool kc_workload_read_recorded(const char *path, kc_recorded *out, char *err, size_t errlen)
{
    *out = (kc_recorded){0};
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return false;
    }
    char text[LINE_MAX_CHARS + 2];
    int cap = 0;
    bool ok = true;
    for (int line = 1; ok && fgets(text, sizeof(text), f); line++) {
        kc_recorded_shape r = {.line = line};
        char why[256];
        if (strlen(text) > LINE_MAX_CHARS && !strchr(text, '\n')) {
            snprintf(err, errlen, "%s:%d: a line longer than %d characters", path, line, LINE_MAX_CHARS);
            ok = false;
        } else if (!(ok = parse_line(text, &r, why, sizeof(why))))
            snprintf(err, errlen, "%s:%d: %s", path, line, why);
        else if (r.kernel)
            push(out, &cap, r);
    }
    if (ok && ferror(f)) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        ok = false;
    }
    fclose(f);
    if (!ok)
        kc_workload_recorded_free(out);
    return ok;
}

void kc_workload_recorded_free(kc_recorded *r)
{
    for (int i = 0; i < r->n; i++)
        free(r->lines[i].kernel), free(r->lines[i].shape);
    free(r->lines);
    *r = (kc_recorded){0};
}
