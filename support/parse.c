/*
 * parse.c — numbers from the command line, kc.yaml and shape strings, read
 * strictly: the whole text or nothing.
 */
#include "kc_support.h"

#include <errno.h>
#include <stdlib.h>

bool kc_parse_integer(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 0);
    if (!*s || *end || errno || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}
