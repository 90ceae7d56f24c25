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
    kc_buf_free(&d->text);
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

/* Appends the source line of loc with a caret under its column. Bytes that
 * would garble a terminal (control characters, NUL) print as '?'. */
static void show_line(kc_buf *b, const kc_src_file *f, kc_loc loc)
{
    const char *p = f->text, *end = f->text + f->len;
    for (int line = 1; line < loc.line && p < end; p++)
        if (*p == '\n')
            line++;
    const char *eol = p;
    while (eol < end && *eol != '\n' && eol - p < 200)
        eol++;
    kc_buf_printf(b, "%5d | ", loc.line);
    for (const char *q = p; q < eol; q++) {
        unsigned char c = (unsigned char)*q;
        kc_buf_putc(b, (c == '\t' || c >= 0x20) && c != 0x7f ? (char)c : '?');
    }
    kc_buf_puts(b, "\n      | ");
    for (int i = 1; i < loc.col && i <= 200; i++)
        kc_buf_putc(b, p + i - 1 < eol && p[i - 1] == '\t' ? '\t' : ' ');
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
    size_t start = d->text.len;
    const kc_src_file *f = NULL;
    if (d->src && loc.file >= 0 && loc.file < d->src->nfiles)
        f = d->src->files[loc.file];
    if (f)
        kc_buf_printf(&d->text, "%s:%d:%d: ", f->path, loc.line, loc.col);
    else
        kc_buf_puts(&d->text, "kc: ");
    kc_buf_printf(&d->text, "%s: ", level_name(level));
    kc_buf_vprintf(&d->text, fmt, ap);
    kc_buf_putc(&d->text, '\n');
    if (f && loc.line > 0)
        show_line(&d->text, f, loc);
    if (level == KC_DIAG_ERROR && d->nerrors == (d->max_errors ? d->max_errors : 100))
        kc_buf_puts(&d->text, "kc: too many errors; stopping here\n");
    if (d->out)
        fputs(d->text.data + start, d->out);
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
    size_t start = d->text.len;
    va_list ap;
    va_start(ap, fmt);
    kc_buf_puts(&d->text, "  fix: ");
    kc_buf_vprintf(&d->text, fmt, ap);
    kc_buf_putc(&d->text, '\n');
    va_end(ap);
    if (d->out)
        fputs(d->text.data + start, d->out);
}
