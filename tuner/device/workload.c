/*
 * workload.c — one kernel at one shape on the device.
 *
 * The shape gives every integer scalar; the other scalars take fixed
 * values that exercise the kernel without being identities: a bool is
 * true (the branch with more work), a float or half is 0.75. Buffers are
 * sized from their declared extents and filled as kc.yaml's init says,
 * never with zeros, from a seed that changes with each run unless the
 * user fixes it. The writable buffers' first contents stay on the host:
 * before each variant is checked they are written back, so every variant
 * starts from the same inputs, and what they hold afterwards is compared
 * with what the reference variant wrote (relative L2 over all of them).
 */
#include "device_private.h"
#include "kc_workload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    int lanes;
    char kind;
} types[] = {
#define X(name, text, bytes, lanes, kind) {lanes, kind},
    KCRT_TYPES(X)
#undef X
};

static bool is_int_scalar(const kcrt_param_info *p)
{
    return p->kind == KCRT_PARAM_SCALAR && (p->type == KCRT_TYPE_INT || p->type == KCRT_TYPE_UINT);
}

/* The value of name in "a=1,b=2"; false when absent or not a decimal
 * integer. */
static bool shape_value(const char *shape, const char *name, int64_t *v, bool *present)
{
    char buf[64], *end;
    const char *text = kc_workload_shape_value(shape, name, buf, sizeof(buf));
    *present = text != NULL;
    if (!text)
        return false;
    *v = strtoll(text, &end, 10);
    return end != text && !*end;
}

/* Every name in the shape must be an integer scalar of the kernel. */
static bool check_names(const kcrt_kernel_info *info, const char *shape, char *err, size_t errlen)
{
    for (const char *at = shape; *at;) {
        const char *comma = strchr(at, ','), *eq = strchr(at, '=');
        size_t len = comma ? (size_t)(comma - at) : strlen(at);
        if (!eq || eq > at + len) {
            snprintf(err, errlen, "shape '%s': '%.*s' is not name=value", shape, (int)len, at);
            return false;
        }
        bool known = false;
        for (int i = 0; i < info->nparams; i++)
            known |= is_int_scalar(&info->params[i]) && strlen(info->params[i].name) == (size_t)(eq - at) &&
                     strncmp(info->params[i].name, at, (size_t)(eq - at)) == 0;
        if (!known) {
            snprintf(err, errlen, "shape '%s': '%.*s' is not an integer parameter of '%s'", shape,
                     (int)(eq - at), at, info->name);
            return false;
        }
        at += len + (comma != NULL);
    }
    return true;
}

bool td_shape_canonical(const kcrt_kernel_info *info, const char *shape, kc_arena *a, const char **out, char *err,
                        size_t errlen)
{
    if (!check_names(info, shape, err, errlen))
        return false;
    kc_buf b = {0};
    bool ok = true;
    for (int i = 0; i < info->nparams && ok; i++) {
        const kcrt_param_info *p = &info->params[i];
        int64_t v;
        bool present;
        if (!is_int_scalar(p))
            continue;
        if (!shape_value(shape, p->name, &v, &present)) {
            snprintf(err, errlen, present ? "shape '%s': %s is not an integer" : "shape '%s' does not give %s "
                                                                                  "(a shape names every integer "
                                                                                  "parameter)",
                     shape, p->name);
            ok = false;
        } else if (p->type == KCRT_TYPE_INT ? v < INT32_MIN || v > INT32_MAX : v < 0 || v > UINT32_MAX) {
            snprintf(err, errlen, "shape '%s': %s=%lld does not fit its type, %s", shape, p->name, (long long)v,
                     p->type_name);
            ok = false;
        } else
            kc_buf_printf(&b, "%s%s=%lld", b.len ? "," : "", p->name, (long long)v);
    }
    if (ok)
        *out = kc_arena_strdup(a, b.data ? b.data : "");
    kc_buf_free(&b);
    return ok;
}

static void set_scalar(td_workload *w, int i)
{
    const kcrt_param_info *p = &w->info->params[i];
    int64_t v = 0;
    bool present;
    switch (p->type) {
    case KCRT_TYPE_INT: shape_value(w->shape, p->name, &v, &present), w->args[i] = KCRT_I32(v); break;
    case KCRT_TYPE_UINT: shape_value(w->shape, p->name, &v, &present), w->args[i] = KCRT_U32(v); break;
    case KCRT_TYPE_BOOL: w->args[i] = KCRT_BOOL(true); break;
    case KCRT_TYPE_HALF: w->args[i] = KCRT_F16(kcrt_f32_to_f16(KC_WORKLOAD_FLOAT_SCALAR)); break;
    default: w->args[i] = KCRT_F32(KC_WORKLOAD_FLOAT_SCALAR); break;
    }
}

static bool make_buffer(td_workload *w, int i, uint64_t *seed, size_t *largest, char *err, size_t errlen)
{
    const kcrt_param_info *p = &w->info->params[i];
    const char *names[256];
    int64_t values[256], n;
    int nn = kc_workload_names(w->info, w->args, NULL, names, values, 256); /* the scalars set so far */
    void *data;
    if (!kc_workload_elements(p, names, values, nn, &n, err, errlen))
        return false;
    if (n < 0) {
        snprintf(err, errlen, "buffer %s of '%s' has no declared size; kc tune needs one (%s %s[n])", p->name,
                 w->info->name, p->type_name, p->name);
        return false;
    }
    if (!kc_workload_buffer(w->ctx, p, n, seed, &w->bufs[i], &data, err, errlen))
        return false;
    size_t bytes = (size_t)n * p->elem_bytes;
    w->bytes[i] = bytes;
    w->args[i] = KCRT_BUF(w->bufs[i]);
    if (p->readonly)
        free(data);
    else
        w->initial[i] = data;
    *largest = bytes > *largest ? bytes : *largest;
    return true;
}

bool td_workload_init(td_workload *w, kcrt_context *ctx, const kcrt_kernel_info *info, const char *shape,
                      uint64_t seed, char *err, size_t errlen)
{
    memset(w, 0, sizeof(*w));
    w->ctx = ctx;
    w->info = info;
    w->shape = shape;
    w->nargs = info->nparams;
    size_t n = (size_t)info->nparams + 1, largest = 0;
    w->args = calloc(n, sizeof(kcrt_arg));
    w->bufs = calloc(n, sizeof(kcrt_buffer *));
    w->bytes = calloc(n, sizeof(size_t));
    w->initial = calloc(n, sizeof(void *));
    w->reference = calloc(n, sizeof(void *));
    if (!w->args || !w->bufs || !w->bytes || !w->initial || !w->reference) {
        snprintf(err, errlen, "out of host memory");
        return false;
    }
    for (int i = 0; i < w->nargs; i++)
        if (info->params[i].kind == KCRT_PARAM_SCALAR)
            set_scalar(w, i);
    for (int i = 0; i < w->nargs; i++)
        if (info->params[i].kind == KCRT_PARAM_BUFFER && !make_buffer(w, i, &seed, &largest, err, errlen))
            return false;
    if (!(w->scratch = malloc(largest ? largest : 1))) {
        snprintf(err, errlen, "out of host memory");
        return false;
    }
    return true;
}

void td_workload_free(td_workload *w)
{
    for (int i = 0; i < w->nargs && w->bufs; i++) {
        kcrt_buffer_free(w->bufs[i]);
        free(w->initial[i]);
        free(w->reference[i]);
    }
    free(w->args);
    free(w->bufs);
    free(w->bytes);
    free(w->initial);
    free(w->reference);
    free(w->scratch);
    memset(w, 0, sizeof(*w));
}

bool td_workload_restore(td_workload *w)
{
    for (int i = 0; i < w->nargs; i++)
        if (w->initial[i] && w->bytes[i] && kcrt_buffer_write(w->bufs[i], 0, w->initial[i], w->bytes[i]) != KCRT_OK)
            return false;
    return true;
}

/* Element j's lane l of a buffer of type t, as a double. */
static double lane(const void *data, kcrt_type t, size_t at)
{
    switch (types[t].kind) {
    case 'h': return kcrt_f16_to_f32(((const uint16_t *)data)[at]);
    case 'f': return ((const float *)data)[at];
    case 'b':
    case 'i':
        return t == KCRT_TYPE_LONG ? (double)((const int64_t *)data)[at] : ((const int32_t *)data)[at];
    default: return t == KCRT_TYPE_ULONG ? (double)((const uint64_t *)data)[at] : ((const uint32_t *)data)[at];
    }
}

/* The first value of buffer i's reference that is not finite, or -1. */
static long first_not_finite(const td_workload *w, int i)
{
    const kcrt_param_info *p = &w->info->params[i];
    size_t n = w->bytes[i] / p->elem_bytes * (size_t)types[p->type].lanes;
    for (size_t j = 0; j < n; j++)
        if (!isfinite(lane(w->reference[i], p->type, j)))
            return (long)j;
    return -1;
}

bool td_workload_keep_reference(td_workload *w, char *why, size_t len)
{
    for (int i = 0; i < w->nargs; i++) {
        if (!w->initial[i])
            continue;
        free(w->reference[i]);
        if (!(w->reference[i] = malloc(w->bytes[i] ? w->bytes[i] : 1)) ||
            (w->bytes[i] && kcrt_buffer_read(w->bufs[i], 0, w->reference[i], w->bytes[i]) != KCRT_OK)) {
            snprintf(why, len, "reading %s back: %s", w->info->params[i].name, kcrt_error(w->ctx));
            return false;
        }
        long j = first_not_finite(w, i);
        if (j >= 0) {
            snprintf(why, len,
                     "the reference writes %g to %s[%ld], so no variant can be checked against it "
                     "(are kc.yaml's init and the shape right for this kernel?)",
                     lane(w->reference[i], w->info->params[i].type, (size_t)j), w->info->params[i].name, j);
            return false;
        }
    }
    return true;
}

typedef struct l2 {
    double diff, norm;
} l2;

/* Adds one buffer's differences; false with why at the first value that is
 * not finite (the reference's all are). */
static bool add_buffer(const td_workload *w, int i, l2 *acc, char *why, size_t len)
{
    const kcrt_param_info *p = &w->info->params[i];
    size_t n = w->bytes[i] / p->elem_bytes * (size_t)types[p->type].lanes;
    for (size_t j = 0; j < n; j++) {
        double got = lane(w->scratch, p->type, j), want = lane(w->reference[i], p->type, j);
        if (!isfinite(got)) {
            snprintf(why, len, "%s[%zu] is %g where the reference has %g", p->name, j, got, want);
            return false;
        }
        acc->diff += (got - want) * (got - want);
        acc->norm += want * want;
    }
    return true;
}

bool td_workload_check(td_workload *w, double tolerance, double *rel_l2, char *why, size_t len)
{
    l2 acc = {0, 0};
    *rel_l2 = 0;
    for (int i = 0; i < w->nargs; i++) {
        if (!w->initial[i] || !w->bytes[i])
            continue;
        if (kcrt_buffer_read(w->bufs[i], 0, w->scratch, w->bytes[i]) != KCRT_OK) {
            snprintf(why, len, "reading %s back: %s", w->info->params[i].name, kcrt_error(w->ctx));
            return false;
        }
        if (!add_buffer(w, i, &acc, why, len))
            return *rel_l2 = INFINITY, false;
    }
    *rel_l2 = acc.norm > 0 ? sqrt(acc.diff / acc.norm) : sqrt(acc.diff);
    if (*rel_l2 <= tolerance) /* false for NaN */
        return true;
    snprintf(why, len, "relative L2 error %.3g against the reference exceeds the tolerance %.3g", *rel_l2,
             tolerance);
    return false;
}
