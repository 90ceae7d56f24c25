/*
 * recorded.c — the shapes an application launched, as libkcrt records
 * them (KCRT_RECORD_SHAPES=FILE, docs/runtime.md), for `kc tune BUNDLE
 * --shapes-from FILE`: each kernel tuned at exactly the shapes the
 * application runs, not only at kc.yaml's.
 *
 * One "KERNEL SHAPE" a line ("conv1d cin=256,cout=256,t_in=1600,...");
 * blank lines and what follows a '#' are ignored. Every run of the
 * application appends to the same file, so a shape may come more than
 * once: the caller keeps the first. The shape itself is checked against
 * the kernel later (td_shape_canonical), where the kernel is known.
 */
#include "device_private.h"

#include <ctype.h>
#include <errno.h>
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

/* One line, comment and spaces gone; false with err when it is not
 * "KERNEL [SHAPE]". *r->kernel stays NULL for a line with nothing. */
static bool parse_line(char *text, td_recorded *r, kc_arena *a, char *err, size_t errlen)
{
    text[strcspn(text, "#\r\n")] = 0;
    char *at = text;
    while (isspace((unsigned char)*at))
        at++;
    if (!*at)
        return true;
    size_t nk = strcspn(at, " \t"), ns;
    char *shape = at + nk;
    while (isspace((unsigned char)*shape))
        shape++;
    ns = strcspn(shape, " \t");
    const char *rest = shape + ns;
    while (isspace((unsigned char)*rest))
        rest++;
    if (!is_name(at, nk) || *rest) {
        snprintf(err, errlen, "'%.80s' is not KERNEL SHAPE (as \"conv1d cin=256,cout=256,...\")", at);
        return false;
    }
    at[nk] = 0;
    shape[ns] = 0;
    r->kernel = kc_arena_strdup(a, at);
    r->shape = kc_arena_strdup(a, shape);
    return true;
}

bool td_recorded_read(const char *path, kc_arena *a, td_recorded **out, int *n, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return false;
    }
    kc_vec lines = {0};
    char text[LINE_MAX_CHARS + 2];
    bool ok = true;
    for (int line = 1; ok && fgets(text, sizeof(text), f); line++) {
        if (strlen(text) > LINE_MAX_CHARS && !strchr(text, '\n')) {
            snprintf(err, errlen, "%s:%d: a line longer than %d characters", path, line, LINE_MAX_CHARS);
            ok = false;
            break;
        }
        td_recorded r = {.line = line};
        char why[256];
        if (!(ok = parse_line(text, &r, a, why, sizeof(why))))
            snprintf(err, errlen, "%s:%d: %s", path, line, why);
        else if (r.kernel) {
            td_recorded *copy = kc_arena_alloc(a, sizeof(*copy));
            *copy = r;
            kc_vec_push(a, &lines, copy);
        }
    }
    if (ok && ferror(f)) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        ok = false;
    }
    fclose(f);
    if (!ok)
        return false;
    *out = kc_arena_alloc(a, sizeof(td_recorded) * (size_t)(lines.len + 1));
    for (int i = 0; i < lines.len; i++)
        (*out)[i] = *(td_recorded *)lines.items[i];
    *n = lines.len;
    return true;
}
