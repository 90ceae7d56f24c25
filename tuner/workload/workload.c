/*
 * workload.c — the names, extents and buffers of a launch (kc_workload.h).
 */
#include "kc_workload.h"

#include "kcrt_internal.h" /* kcrt_fill */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *kc_workload_shape_value(const char *shape, const char *name, char *buf, size_t len)
{
    size_t n = strlen(name);
    for (const char *at = shape; at && *at;) {
        const char *comma = strchr(at, ',');
        size_t item = comma ? (size_t)(comma - at) : strlen(at);
        if (item > n && strncmp(at, name, n) == 0 && at[n] == '=') {
            snprintf(buf, len, "%.*s", (int)(item - n - 1), at + n + 1);
            return buf;
        }
        at = comma ? comma + 1 : NULL;
    }
    return NULL;
}

int kc_workload_names(const kcrt_kernel_info *ki, const kcrt_arg *args, const char *variant, const char **names,
                      int64_t *values, int max)
{
    int n = 0;
    for (int i = 0; i < ki->nparams && n < max; i++) {
        const kcrt_param_info *p = &ki->params[i];
        if (p->kind != KCRT_PARAM_SCALAR || p->type == KCRT_TYPE_FLOAT || p->type == KCRT_TYPE_HALF)
            continue;
        const kcrt_arg *a = &args[i];
        names[n] = p->name;
        values[n++] = a->type == KCRT_ARG_I32   ? (int64_t)a->v.i32
                      : a->type == KCRT_ARG_U32 ? (int64_t)a->v.u32
                                                : (int64_t)a->v.b;
    }
    for (const char *at = variant; at && *at && n < max;) {
        const char *comma = strchr(at, ','), *eq = strchr(at, '=');
        for (int j = 0; eq && (!comma || eq < comma) && j < ki->ntunables && n < max; j++)
            if (strlen(ki->tunables[j].name) == (size_t)(eq - at) &&
                strncmp(ki->tunables[j].name, at, (size_t)(eq - at)) == 0) {
                names[n] = ki->tunables[j].name;
                values[n++] = strtoll(eq + 1, NULL, 10);
            }
        at = comma ? comma + 1 : NULL;
    }
    return n;
}

bool kc_workload_elements(const kcrt_param_info *p, const char *const *names, const int64_t *values, int nnames,
                          int64_t *elements, char *err, size_t errlen)
{
    char why[256];
    *elements = -1;
    if (!p->extent)
        return true;
    if (kcrt_eval(p->extent, names, values, nnames, elements, why, sizeof(why)) != KCRT_OK) {
        snprintf(err, errlen, "the extent of %s, %s, cannot be evaluated: %s", p->name, p->extent_text, why);
        return false;
    }
    if (*elements < 0 || (uint64_t)*elements > KC_WORKLOAD_MAX_BYTES / p->elem_bytes) {
        snprintf(err, errlen, "the extent of %s, %s, is %lld elements", p->name, p->extent_text,
                 (long long)*elements);
        return false;
    }
    return true;
}

bool kc_workload_buffer(kcrt_context *ctx, const kcrt_param_info *p, int64_t n, uint64_t *seed, kcrt_buffer **buf,
                        void **data, char *err, size_t errlen)
{
    size_t bytes = (size_t)n * p->elem_bytes;
    void *host = malloc(bytes ? bytes : 1);
    if (!host) {
        snprintf(err, errlen, "out of host memory for %s (%zu bytes)", p->name, bytes);
        return false;
    }
    kcrt_fill(p, host, (size_t)n, seed);
    kcrt_status s = kcrt_buffer_create(ctx, bytes ? bytes : 4, buf);
    if (s == KCRT_OK && bytes)
        s = kcrt_buffer_write(*buf, 0, host, bytes);
    if (s != KCRT_OK) {
        snprintf(err, errlen, "buffer %s (%zu bytes): %s", p->name, bytes, kcrt_error(ctx));
        free(host);
        return false;
    }
    if (data)
        *data = host;
    else
        free(host);
    return true;
}

/* The work of one launch at a kc.yaml shape ("cin=256,t_in=1000,..."):
 * its flops: plus its bytes:, or the product of the shape's values where
 * kc.yaml gives neither. */
double kc_workload_shape_work(const kcrt_kernel_info *ki, const char *shape)
{
    char copy[1024];
    const char *names[64];
    int64_t values[64];
    int n = 0;
    snprintf(copy, sizeof(copy), "%s", shape);
    for (char *p = copy; *p && n < 64;) {
        char *end = p + strcspn(p, ","), *eq = strchr(p, '=');
        bool last = !*end;
        *end = 0;
        if (eq && eq < end) {
            *eq = 0;
            names[n] = p;
            values[n++] = strtoll(eq + 1, NULL, 10);
        }
        p = last ? end : end + 1;
    }
    double work = 0, product = 1;
    int64_t v;
    char err[128];
    const char *exprs[] = {ki->flops, ki->bytes};
    for (int i = 0; i < 2; i++)
        if (exprs[i] && kcrt_eval(exprs[i], names, values, n, &v, err, sizeof(err)) == KCRT_OK && v > 0)
            work += (double)v;
    for (int i = 0; i < n; i++)
        product *= values[i] > 1 ? (double)values[i] : 1;
    return work > 0 ? work : product;
}

int kc_workload_smallest_shape(const kcrt_kernel_info *ki, double min_work)
{
    int best = -1, costliest = 0;
    double best_work = 0, most = -1;
    for (int s = 0; s < ki->nshapes; s++) {
        double w = kc_workload_shape_work(ki, ki->shapes[s]);
        if (w > most)
            most = w, costliest = s;
        if (w >= min_work && (best < 0 || w < best_work))
            best = s, best_work = w;
    }
    return best >= 0 ? best : costliest;
}
