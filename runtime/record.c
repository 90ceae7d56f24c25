/*
 * record.c — KCRT_RECORD_SHAPES=FILE: every kernel and shape a context
 * chooses a variant for, appended to FILE once, as "KERNEL SHAPE" lines
 * ("conv1d cin=256,cout=256,t_in=1600,ks=3,dil=1,pad=1"). `kc tune BUNDLE
 * --shapes-from FILE` then tunes each kernel at exactly the shapes the
 * application runs, where kc.yaml's are only near them (docs/tuning.md).
 *
 * Each line is written and flushed when its shape is first seen, so a run
 * that crashes loses nothing, and several processes may append to one
 * file (each line goes out in one write). A context remembers the lines
 * it wrote by a 64-bit hash; other runs' lines may repeat in the file, and
 * kc tune takes each shape once.
 */
#include "rt_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct rt_record {
    FILE *f;
    uint64_t *seen; /* open addressing; 0 is empty */
    size_t nseen, cap;
};

kcrt_status rt_record_open(kcrt_context *ctx)
{
    const char *path = getenv("KCRT_RECORD_SHAPES");
    if (!path || !*path)
        return KCRT_OK;
    rt_record *r = calloc(1, sizeof(*r));
    if (!r)
        return rt_fail(ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    if (!(r->f = fopen(path, "a"))) {
        kcrt_status s = rt_fail(ctx, KCRT_ERROR_IO, "KCRT_RECORD_SHAPES=%s: cannot append to it: %s", path,
                                strerror(errno));
        free(r);
        return s;
    }
    rt_log(ctx, "recording each kernel's shapes in %s (KCRT_RECORD_SHAPES)", path);
    ctx->record = r;
    return KCRT_OK;
}

void rt_record_close(kcrt_context *ctx)
{
    if (!ctx->record)
        return;
    fclose(ctx->record->f);
    free(ctx->record->seen);
    free(ctx->record);
    ctx->record = NULL;
}

static uint64_t hash(const char *a, const char *b)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (const char *s = a; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3u; /* FNV-1a */
    h = (h ^ ' ') * 0x100000001b3u;
    for (const char *s = b; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3u;
    return h ? h : 1;
}

/* Puts h in a table of cap slots with room; false when it was there. */
static bool insert(uint64_t *seen, size_t cap, uint64_t h)
{
    size_t j = h % cap;
    for (; seen[j]; j = (j + 1) % cap)
        if (seen[j] == h)
            return false;
    seen[j] = h;
    return true;
}

/* Adds h; false when it was there already. With no memory to grow, true:
 * a line written twice, rather than one lost. */
static bool remember(rt_record *r, uint64_t h)
{
    if (2 * (r->nseen + 1) > r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        uint64_t *seen = calloc(cap, sizeof(*seen));
        if (!seen)
            return true;
        for (size_t i = 0; i < r->cap; i++)
            if (r->seen[i])
                insert(seen, cap, r->seen[i]);
        free(r->seen);
        r->seen = seen;
        r->cap = cap;
    }
    if (!insert(r->seen, r->cap, h))
        return false;
    r->nseen++;
    return true;
}

void rt_record_shape(kcrt_context *ctx, const char *kernel, const char *shape)
{
    rt_record *r = ctx->record;
    if (!r || !remember(r, hash(kernel, shape)))
        return;
    char line[1024];
    if (!rt_printf(line, sizeof(line), "%s%s%s\n", kernel, *shape ? " " : "", shape))
        return; /* not a shape kc tune could read back */
    if (fputs(line, r->f) < 0 || fflush(r->f) != 0)
        rt_log(ctx, "KCRT_RECORD_SHAPES: writing '%s %s' failed: %s", kernel, shape, strerror(errno));
}
