/*
 * bench_inputs.c — a kernel's arguments for one benchmark shape.
 *
 * A shape names integer scalars ("n=4096,ks=3", kc.yaml's shapes: or
 * --shape); every integer scalar of the kernel must have a value there,
 * since it sizes the problem. A bool the shape does not name is true and
 * a float or half 0.75 (--shape may name them too), as kc tune sets them
 * (tuner/device/workload.c: the branch with more work, no identity), so
 * that kc bench measures the workload the tuned choice was made for.
 * Buffers are sized from their declared extents and filled as kc run
 * fills them (kcrt_fill), from a fixed seed.
 */
#include "kc_bench.h"
#include "kc_workload.h"
#include "kcrt_internal.h"

#include <stdlib.h>
#include <string.h>

/* Every name in the shape is a scalar parameter of the kernel. */
static bool check_shape_names(const kcrt_kernel_info *ki, const char *shape, char *err, size_t errlen)
{
    for (const char *at = shape; at && *at;) {
        const char *comma = strchr(at, ','), *eq = strchr(at, '=');
        size_t item = comma ? (size_t)(comma - at) : strlen(at);
        if (!eq || (comma && eq > comma) || eq == at) {
            snprintf(err, errlen, "shape '%s': '%.*s' is not name=value", shape, (int)item, at);
            return false;
        }
        bool found = false;
        for (int i = 0; i < ki->nparams && !found; i++)
            found = ki->params[i].kind == KCRT_PARAM_SCALAR &&
                    strlen(ki->params[i].name) == (size_t)(eq - at) &&
                    strncmp(ki->params[i].name, at, (size_t)(eq - at)) == 0;
        if (!found) {
            size_t used = (size_t)snprintf(
                err, errlen, "shape '%s' names '%.*s', which is not a scalar of %s (its scalars:", shape,
                (int)(eq - at), at, ki->name);
            for (int i = 0; i < ki->nparams && used < errlen; i++)
                if (ki->params[i].kind == KCRT_PARAM_SCALAR)
                    used += (size_t)snprintf(err + used, errlen - used, " %s", ki->params[i].name);
            if (used < errlen)
                snprintf(err + used, errlen - used, ")");
            return false;
        }
        at = comma ? comma + 1 : NULL;
    }
    return true;
}

static bool scalar_arg(const kcrt_param_info *p, const char *shape, kcrt_arg *out, char *err, size_t errlen)
{
    char buf[64];
    const char *text = kc_workload_shape_value(shape, p->name, buf, sizeof(buf));
    long long v = 1; /* a bool not named: true */
    bool is_int = p->type == KCRT_TYPE_INT || p->type == KCRT_TYPE_UINT;
    if (!text && is_int) {
        snprintf(
            err, errlen,
            "shape '%s' gives no value for the integer scalar '%s' (add it to kc.yaml's shapes or --shape)",
            shape, p->name);
        return false;
    }
    if (p->type == KCRT_TYPE_INT || p->type == KCRT_TYPE_UINT || p->type == KCRT_TYPE_BOOL) {
        long long lo = p->type == KCRT_TYPE_INT ? INT32_MIN : 0, hi = p->type == KCRT_TYPE_BOOL  ? 1
                                                                      : p->type == KCRT_TYPE_INT ? INT32_MAX
                                                                                                 : UINT32_MAX;
        if (text && !kc_parse_integer(text, lo, hi, &v)) {
            snprintf(err, errlen, "%s is a %s: '%s' is not one", p->name, p->type_name, text);
            return false;
        }
        *out = p->type == KCRT_TYPE_INT    ? KCRT_I32(v)
               : p->type == KCRT_TYPE_UINT ? KCRT_U32(v)
                                           : KCRT_BOOL(v != 0);
        return true;
    }
    char *end;
    float f = text ? strtof(text, &end) : KC_WORKLOAD_FLOAT_SCALAR;
    if (text && (!*text || *end)) {
        snprintf(err, errlen, "%s is a %s: '%s' is not a number", p->name, p->type_name, text);
        return false;
    }
    *out = p->type == KCRT_TYPE_HALF ? KCRT_F16(kcrt_f32_to_f16(f)) : KCRT_F32(f);
    return true;
}

static bool make_buffer(kc_bench_args *a, kcrt_context *ctx, const kcrt_param_info *p, int i, uint64_t *rng,
                        char *err, size_t errlen)
{
    int64_t n;
    if (!kc_workload_elements(p, a->names, a->values, a->nnames, &n, err, errlen))
        return false;
    if (n < 0) {
        snprintf(err, errlen, "the size of buffer %s is not declared, so kc bench cannot allocate it", p->name);
        return false;
    }
    if (!kc_workload_buffer(ctx, p, n, rng, &a->bufs[i], NULL, err, errlen))
        return false;
    a->args[i] = KCRT_BUF(a->bufs[i]);
    a->buffer_bytes += (size_t)n * p->elem_bytes;
    return true;
}

bool kc_bench_args_make(kcrt_kernel *k, const char *shape, uint64_t seed, kc_bench_args *a, char *err,
                        size_t errlen)
{
    memset(a, 0, sizeof(*a));
    const kcrt_kernel_info *ki = kcrt_kernel_info_get(k);
    kcrt_context *ctx = kcrt_kernel_context(k);
    if (ki->nparams > KC_BENCH_MAX_PARAMS) {
        snprintf(err, errlen, "%s has %d parameters; kc bench takes at most %d", ki->name, ki->nparams,
                 KC_BENCH_MAX_PARAMS);
        return false;
    }
    if (!check_shape_names(ki, shape, err, errlen))
        return false;
    a->nargs = ki->nparams;
    kcrt_buffer *probe = NULL;
    if (kcrt_buffer_create(ctx, 4, &probe) != KCRT_OK) {
        snprintf(err, errlen, "%s", kcrt_error(ctx));
        return false;
    }
    bool ok = true;
    for (int i = 0; i < ki->nparams && ok; i++)
        if (ki->params[i].kind == KCRT_PARAM_SCALAR)
            ok = scalar_arg(&ki->params[i], shape, &a->args[i], err, errlen);
        else
            a->args[i] = KCRT_BUF(probe); /* only for the choice of variant */
    const char *variant = NULL;
    if (ok && kcrt_kernel_choose(k, a->args, (size_t)a->nargs, &variant, NULL) != KCRT_OK) {
        snprintf(err, errlen, "%s", kcrt_error(ctx));
        ok = false;
    }
    if (ok)
        a->nnames = kc_workload_names(ki, a->args, variant, a->names, a->values, KC_BENCH_MAX_PARAMS * 2);
    uint64_t rng = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int i = 0; i < ki->nparams && ok; i++)
        if (ki->params[i].kind == KCRT_PARAM_BUFFER)
            ok = make_buffer(a, ctx, &ki->params[i], i, &rng, err, errlen);
    kcrt_buffer_free(probe);
    if (!ok)
        kc_bench_args_free(a);
    return ok;
}

void kc_bench_args_free(kc_bench_args *a)
{
    for (int i = 0; i < KC_BENCH_MAX_PARAMS; i++)
        if (a->bufs[i])
            kcrt_buffer_free(a->bufs[i]);
    memset(a, 0, sizeof(*a));
}

double kc_bench_args_eval(const kc_bench_args *a, const char *postfix)
{
    char err[128];
    int64_t v;
    if (!postfix || kcrt_eval(postfix, a->names, a->values, a->nnames, &v, err, sizeof(err)) != KCRT_OK)
        return -1;
    return (double)v;
}
