/*
 * diag.c — diagnostics in the form chibicc taught us:
 *
 *   kernels/gemm.kc:12:17: error: 'acc' is not declared
 *      12 |     float s = acc[i];
 *         |               ^
 *     fix: declare it before use, e.g. 'float acc[TM];'
 *
 * Messages are printed as they come (to kc_diag.out) and kept in
 * kc_diag.text for tests and callers that want them as a string.
 */
#include "kc_support.h"

#include <stdlib.h>
#include <string.h>

void kc_diag_init(kc_diag *d, const kc_src *src, FILE *out)
{
    memset(d, 0, sizeof(*d));
    d->src = src;
    d->out = out;
    d->max_errors = 100;
}

void kc_diag_free(kc_diag *d)
{
    kc_diag_flush(d);
    kc_buf_free(&d->text);
    free(d->pending);
    d->pending = NULL;
}

void kc_diag_defer(kc_diag *d)
{
    d->deferring = true;
}

static int by_location(const void *x, const void *y)
{
    const kc_diag_entry *a = x, *b = y;
    if (a->loc.file != b->loc.file)
        return a->loc.file - b->loc.file;
    if (a->loc.line != b->loc.line)
        return a->loc.line - b->loc.line;
    if (a->loc.col != b->loc.col)
        return a->loc.col - b->loc.col;
    return a->seq - b->seq;
}

void kc_diag_flush(kc_diag *d)
{
    if (d->npending > 1) /* qsort(NULL, 0, …) is undefined behaviour (UBSan stops on it) */
        qsort(d->pending, (size_t)d->npending, sizeof(*d->pending), by_location);
    for (int i = 0; i < d->npending; i++) {
        kc_buf *t = &d->pending[i].text;
        if (t->len) {
            kc_buf_append(&d->text, t->data, t->len);
            if (d->out)
                fwrite(t->data, 1, t->len, d->out);
        }
        kc_buf_free(t);
    }
    d->npending = 0;
    d->deferring = false;
}

/* The buffer a new message goes to: the text itself, or a pending entry. */
static kc_buf *sink(kc_diag *d, kc_diag_level level, kc_loc loc)
{
    if (!d->deferring)
        return &d->text;
    if (level == KC_DIAG_NOTE && d->npending) /* a note belongs to the message before it */
        return &d->pending[d->npending - 1].text;
    if (d->npending == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 16;
        d->pending = realloc(d->pending, sizeof(*d->pending) * (size_t)d->cap);
        if (!d->pending)
            abort();
    }
    kc_diag_entry *e = &d->pending[d->npending];
    e->loc = loc.file < 0 ? (kc_loc){INT32_MAX, 0, 0} : loc;
    e->seq = d->npending++;
    e->text = (kc_buf){0};
    return &e->text;
}

bool kc_diag_too_many(const kc_diag *d)
{
    return d->nerrors >= (d->max_errors ? d->max_errors : 100);
}

static const char *level_name(kc_diag_level level)
{
    switch (level) {
    case KC_DIAG_ERROR: return "error";
    case KC_DIAG_WARNING: return "warning";
    case KC_DIAG_NOTE: return "note";
    }
    return "error";
}

/* Appends the source line of loc with a caret under its column. A long
 * line is shown as a window around the column. Bytes that would garble a
 * terminal (control characters, NUL, non-ASCII) print as '?'. */
static void show_line(kc_buf *b, const kc_src_file *f, kc_loc loc)
{
    const char *p = f->text, *end = f->text + f->len;
    for (int line = 1; line < loc.line && p < end; p++)
        if (*p == '\n')
            line++;
    const char *eol = p;
    while (eol < end && *eol != '\n')
        eol++;
    const char *from = p, *to = eol;
    int col = loc.col;
    if (col > 100) { /* keep 60 characters of context before the caret */
        from = p + (col - 61);
        col = 61 + 3;
    }
    if (from > eol)
        from = eol;
    if (to - from > 160)
        to = from + 160;
    kc_buf_printf(b, "%5d | %s", loc.line, from > p ? "..." : "");
    for (const char *q = from; q < to; q++) {
        unsigned char c = (unsigned char)*q;
        kc_buf_putc(b, c == '\t' || (c >= 0x20 && c < 0x7f) ? (char)c : '?');
    }
    kc_buf_puts(b, to < eol ? "...\n      | " : "\n      | ");
    for (int i = 1; i < col; i++) {
        const char *q = from + i - 1 - (from > p ? 3 : 0);
        kc_buf_putc(b, q >= from && q < to && *q == '\t' ? '\t' : ' ');
    }
    kc_buf_puts(b, "^\n");
}

void kc_diag_report(kc_diag *d, kc_diag_level level, kc_loc loc, const char *fmt, va_list ap)
{
    if (level == KC_DIAG_ERROR) {
        d->nerrors++;
        int max = d->max_errors ? d->max_errors : 100;
        if (d->nerrors > max)
            return;
    } else if (level == KC_DIAG_WARNING) {
        d->nwarnings++;
    }
    kc_buf *b = sink(d, level, loc);
    size_t start = b->len;
    const kc_src_file *f = NULL;
    if (d->src && loc.file >= 0 && loc.file < d->src->nfiles)
        f = d->src->files[loc.file];
    if (f)
        kc_buf_printf(b, "%s:%d:%d: ", f->path, loc.line, loc.col);
    else
        kc_buf_puts(b, "kc: ");
    kc_buf_printf(b, "%s: ", level_name(level));
    kc_buf_vprintf(b, fmt, ap);
    kc_buf_putc(b, '\n');
    if (f && loc.line > 0)
        show_line(b, f, loc);
    if (level == KC_DIAG_ERROR && d->nerrors == (d->max_errors ? d->max_errors : 100))
        kc_buf_puts(b, "kc: too many errors; stopping here\n");
    if (d->out && !d->deferring)
        fputs(b->data + start, d->out);
}

#define REPORT(level)                                                                             \
    do {                                                                                          \
        va_list ap;                                                                               \
        va_start(ap, fmt);                                                                        \
        kc_diag_report(d, level, loc, fmt, ap);                                                   \
        va_end(ap);                                                                               \
    } while (0)

void kc_error_at(kc_diag *d, kc_loc loc, const char *fmt, ...) { REPORT(KC_DIAG_ERROR); }
void kc_warn_at(kc_diag *d, kc_loc loc, const char *fmt, ...) { REPORT(KC_DIAG_WARNING); }
void kc_note_at(kc_diag *d, kc_loc loc, const char *fmt, ...) { REPORT(KC_DIAG_NOTE); }

void kc_diag_fix(kc_diag *d, const char *fmt, ...)
{
    if (d->nerrors > (d->max_errors ? d->max_errors : 100))
        return;
    kc_buf *b = d->deferring && d->npending ? &d->pending[d->npending - 1].text : &d->text;
    size_t start = b->len;
    va_list ap;
    va_start(ap, fmt);
    kc_buf_puts(b, "  fix: ");
    kc_buf_vprintf(b, fmt, ap);
    kc_buf_putc(b, '\n');
    va_end(ap);
    if (d->out && !d->deferring)
        fputs(b->data + start, d->out);
}
