/*
 * space.c — a kernel's variants as the strategies see them.
 *
 * The dimensions are the tunables the kernel uses (its own and its
 * helpers'), in declaration order, with the values the source lists. A
 * point is valid when the binding passes every KC_REQUIRE and the
 * workgroup it makes fits the device: each dimension within the device's
 * maximum and the invocations within the maximum per workgroup. What only
 * compiling can tell (shared memory, a feature, a driver that refuses the
 * module) is found when the point is measured and recorded as refused.
 */
#include "device_private.h"

#include <stdlib.h>
#include <string.h>

kc_ir_binding td_binding(kc_arena *a, const td_kernel *tk, const int *point)
{
    kc_ir_binding b = {tk->ndims, tk->names, kc_arena_alloc(a, sizeof(int64_t) * (size_t)(tk->ndims + 1))};
    for (int d = 0; d < tk->ndims; d++)
        b.values[d] = tk->values[d][point[d]];
    return b;
}

const char *td_variant_text(kc_arena *a, const td_kernel *tk, const int *point)
{
    kc_ir_binding b = td_binding(a, tk, point);
    return kc_ir_binding_text(a, &b);
}

bool td_point_of(const td_kernel *tk, const char *variant, int *point)
{
    const char *at = variant;
    for (int d = 0; d < tk->ndims; d++) {
        size_t n = strlen(tk->names[d]);
        if (strncmp(at, tk->names[d], n) != 0 || at[n] != '=')
            return false;
        char *end;
        long long v = strtoll(at + n + 1, &end, 10);
        point[d] = -1;
        for (int i = 0; i < tk->nvalues[d]; i++)
            if (tk->values[d][i] == v)
                point[d] = i;
        if (point[d] < 0 || (*end != (d + 1 < tk->ndims ? ',' : 0)))
            return false;
        at = end + (*end == ',');
    }
    return *at == 0;
}

/* The workgroup size of a point, each dimension; false when it does not
 * evaluate (a tunable the expression needs is missing: a kc bug). */
static bool workgroup(const td_kernel *tk, kc_ir_binding *b, int64_t wg[3])
{
    char err[128];
    for (int d = 0; d < 3; d++)
        if (!tk->k->wg_size[d])
            wg[d] = 1;
        else if (!kc_iexpr_eval(tk->k->wg_size[d], kc_ir_binding_lookup, b, &wg[d], err, sizeof(err)))
            return false;
    return true;
}

const char *td_device_refusal(const td_kernel *tk, const int *point, char *buf, size_t len)
{
    int64_t values[64], wg[3]; /* make_space keeps ndims <= 64 */
    kc_ir_binding b = {tk->ndims, tk->names, values};
    for (int d = 0; d < tk->ndims; d++)
        values[d] = tk->values[d][point[d]];
    if (!workgroup(tk, &b, wg))
        return snprintf(buf, len, "its workgroup size does not evaluate"), buf;
    const kcrt_device_info *dev = tk->dev;
    for (int d = 0; d < 3; d++)
        if (wg[d] < 1 || (uint64_t)wg[d] > dev->max_workgroup_size[d])
            return snprintf(buf, len, "workgroup dimension %d is %lld; the device allows 1 to %u", d,
                            (long long)wg[d], dev->max_workgroup_size[d]),
                   buf;
    int64_t total = wg[0] * wg[1] * wg[2];
    if ((uint64_t)total > dev->max_workgroup_invocations)
        return snprintf(buf, len, "%lld invocations per workgroup; the device allows %u", (long long)total,
                        dev->max_workgroup_invocations),
               buf;
    return NULL;
}

static bool valid(void *user, const int *point)
{
    const td_kernel *tk = user;
    int64_t values[64];
    for (int d = 0; d < tk->ndims; d++)
        values[d] = tk->values[d][point[d]];
    kc_ir_binding b = {tk->ndims, tk->names, values};
    char buf[8];
    return kc_ir_binding_allowed(tk->prog, tk->k, &b) && !td_device_refusal(tk, point, buf, sizeof(buf));
}

/* "WG=64,128;PT=1,2": the space as kc_cache_put_space records it. */
static const char *space_text(td_kernel *tk)
{
    kc_buf b = {0};
    for (int d = 0; d < tk->ndims; d++) {
        kc_buf_printf(&b, "%s%s=", d ? ";" : "", tk->names[d]);
        for (int i = 0; i < tk->nvalues[d]; i++)
            kc_buf_printf(&b, "%s%lld", i ? "," : "", (long long)tk->values[d][i]);
    }
    const char *s = kc_arena_strdup(&tk->ctx.arena, b.data ? b.data : "");
    kc_buf_free(&b);
    return s;
}

/* The dimensions, from the tunables the kernel uses. */
static bool make_space(td_kernel *tk, char *err, size_t errlen)
{
    kc_arena *a = &tk->ctx.arena;
    const kc_tunable *tun[64];
    tk->ndims = kc_ir_kernel_tunables(tk->prog, tk->k, tun, 64);
    if (tk->ndims > 64) {
        snprintf(err, errlen, "kernel '%s' uses %d tunables; kc tune handles 64", tk->name, tk->ndims);
        return false;
    }
    tk->names = kc_arena_alloc(a, sizeof(char *) * (size_t)(tk->ndims + 1));
    tk->nvalues = kc_arena_alloc(a, sizeof(int) * (size_t)(tk->ndims + 1));
    tk->values = kc_arena_alloc(a, sizeof(int64_t *) * (size_t)(tk->ndims + 1));
    tk->start = kc_arena_alloc(a, sizeof(int) * (size_t)(tk->ndims + 1));
    for (int d = 0; d < tk->ndims; d++) {
        tk->names[d] = tun[d]->name;
        tk->nvalues[d] = tun[d]->nvalues;
        tk->values[d] = tun[d]->values;
        for (int i = 0; i < tun[d]->nvalues; i++)
            if (tun[d]->values[i] == tun[d]->def)
                tk->start[d] = i;
    }
    tk->space = (kc_tune_space){.ndims = tk->ndims,
                                .names = tk->names,
                                .nvalues = tk->nvalues,
                                .values = tk->values,
                                .valid = valid,
                                .user = tk,
                                .start = tk->start};
    tk->space_text = space_text(tk);
    return true;
}

bool td_kernel_open(td_kernel *tk, kc_bundle *b, const kcrt_kernel_info *info, const kcrt_device_info *dev,
                    char *err, size_t errlen)
{
    memset(tk, 0, sizeof(*tk));
    kc_ctx_init(&tk->ctx, NULL);
    tk->name = info->name;
    tk->info = info;
    tk->dev = dev;
    kc_program *prog;
    if (!kc_bundle_program(b, info->name, &tk->ctx, &prog, &tk->k, err, errlen))
        return false;
    tk->prog = prog;
    return make_space(tk, err, errlen);
}

void td_kernel_close(td_kernel *tk)
{
    kc_ctx_free(&tk->ctx);
}
