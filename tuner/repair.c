/*
 * repair.c — closing a JSON text that an interrupted tuner left open.
 *
 * A tuner that appends each result to its cache file and is killed leaves
 * a prefix of a valid document. The cut can fall anywhere: inside a
 * string, a number ("3.14" cut to "3.1" would still parse, wrongly), after
 * a key, after a comma. So rather than patch the last token, go back to
 * the last place where a value had just ended and nothing half-written
 * follows:
 *
 *   after an opening bracket        {"cache": {|
 *   after a closing bracket         {"a": [1, 2]|
 *   before a comma                  {"a": 1|, "b": 2.7
 *
 * cut there (which also drops a trailing comma) and append the closing
 * brackets still open at that point. Strings are tracked, escapes
 * included, so brackets and commas inside them do not count. The cost is
 * at most one partly written record, which is better dropped than trusted.
 */
#include "tune_private.h"

#include <ctype.h>

/* Scans s[0, n): leaves the brackets open at its end in stack (innermost
 * last) and the last safe cut in *cut (-1 if none); returns whether it
 * ends inside a string. */
static bool scan(const char *s, size_t n, kc_buf *stack, long *cut)
{
    bool str = false, esc = false;
    *cut = -1;
    stack->len = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (str) {
            if (esc)
                esc = false;
            else if (c == '\\')
                esc = true;
            else if (c == '"')
                str = false;
        } else if (c == '"') {
            str = true;
        } else if (c == '{' || c == '[') {
            kc_buf_putc(stack, c);
            *cut = (long)i + 1;
        } else if (c == '}' || c == ']') {
            stack->len -= stack->len > 0;
            *cut = (long)i + 1;
        } else if (c == ',') {
            *cut = (long)i;
        }
    }
    return str;
}

kc_tune_repair kc_tune_json_repair(kc_buf *text)
{
    kc_tune_repair r = {0, 0};
    kc_buf stack = {0};
    long cut;
    bool in_string = scan(text->data, text->len, &stack, &cut);
    if ((in_string || stack.len) && cut >= 0) { /* open, and something to save */
        for (size_t i = (size_t)cut; i < text->len; i++)
            r.dropped += !isspace((unsigned char)text->data[i]);
        text->len = (size_t)cut;
        scan(text->data, text->len, &stack, &cut);
        for (size_t i = stack.len; i-- > 0; r.closers++)
            kc_buf_putc(text, stack.data[i] == '{' ? '}' : ']');
        kc_buf_putc(text, 0); /* keep it a C string too */
        text->len--;
    }
    kc_buf_free(&stack);
    return r;
}
