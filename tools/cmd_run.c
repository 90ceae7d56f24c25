/*
 * cmd_run.c — kc run: launch one kernel of a bundle from the command line.
 *
 *   kc run BUNDLE KERNEL name=value... [buf=@file] [--out buf=file] [--variant V]
 *          [--repeat N] [--cold MIB] [--device N] [--seed N] [--json]
 *
 * Every scalar parameter needs a value. Every buffer is allocated from its
 * declared extent (evaluated with the scalars and the variant's tunables)
 * and filled with random data as the kernel's `init` in the bundle says
 * (uniform in [-1, 1) by default; normal, positive, ones, index) — never
 * zeros — or from a raw file. The kernel runs once (its outputs are what
 * --out writes), then --repeat more times with device timestamps; the
 * median is the time reported. With --cold, MIB mebibytes of a scratch
 * buffer are written before each timed launch (0: libkcrt's default, 256),
 * so that the launch finds its inputs out of the device's caches, as one
 * between other layers of a model does (kcrt_time_launch_cold).
 */
#include "kc_tools.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kc/kcrt.h"
#include "kcrt_internal.h"
#include "kc_stats.h"
#include "kc_workload.h"

enum { MAX_PARAMS = 256, MAX_OUTS = 64 };

typedef struct run_opts {
    const char *bundle, *kernel, *variant;
    const char *assign[MAX_PARAMS]; /* name=value as given */
    int nassign;
    const char *outs[MAX_OUTS]; /* buf=file */
    int nouts;
    int repeat, device;
    uint64_t seed;
    bool json;
    long long cold_mib; /* --cold: -1 when not given */
} run_opts;

/* What one run holds, freed at the end. */
typedef struct run_state {
    kcrt_context *ctx;
    kcrt_bundle *b;
    kcrt_kernel *k;
    const kcrt_kernel_info *ki;
    kcrt_arg args[MAX_PARAMS];
    kcrt_buffer *bufs[MAX_PARAMS];
    size_t bytes[MAX_PARAMS];
    const char *names[MAX_PARAMS + 64]; /* integer scalars and tunables, for expressions */
    int64_t values[MAX_PARAMS + 64];
    int nnames;
    const char *variant, *why;
} run_state;

static int fail(const char *fmt, ...) KC_PRINTF(1, 2);
static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "kc run: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return KC_EXIT_ERROR;
}

/* ---- options ----------------------------------------------------------------------------------- */

static int parse_options(int argc, char **argv, run_opts *o)
{
    static const kc_opt opts[] = {{"--out", true},    {"--variant", true}, {"--repeat", true},
                                  {"--device", true}, {"--seed", true},    {"--json", false},
                                  {"--cold", true}};
    kc_args a = {.cmd = "run", .argc = argc, .argv = argv, .i = 1};
    *o = (run_opts){.repeat = 10, .device = -1, .seed = 1, .cold_mib = -1};
    long long v;
    for (int k; (k = kc_next_arg(&a, opts, 7)) != -2;) {
        switch (k) {
        case -3: return KC_EXIT_USAGE;
        case -1:
            if (!o->bundle)
                o->bundle = a.positional;
            else if (!o->kernel)
                o->kernel = a.positional;
            else if (!strchr(a.positional, '=') || o->nassign == MAX_PARAMS)
                return kc_usage_error("run", "'%s' is not name=value", a.positional);
            else
                o->assign[o->nassign++] = a.positional;
            break;
        case 0:
            if (!strchr(a.value, '=') || o->nouts == MAX_OUTS)
                return kc_usage_error("run", "--out takes buffer=file, not '%s'", a.value);
            o->outs[o->nouts++] = a.value;
            break;
        case 1: o->variant = a.value; break;
        case 2:
            if (!kc_parse_integer(a.value, 0, 100000, &v))
                return kc_usage_error("run", "--repeat takes a count from 0 to 100000, not '%s'", a.value);
            o->repeat = (int)v;
            break;
        case 3:
            if (!kc_parse_integer(a.value, -1, 1000, &v))
                return kc_usage_error("run", "--device takes a device index (see kc devices), not '%s'",
                                      a.value);
            o->device = (int)v;
            break;
        case 4:
            if (!kc_parse_integer(a.value, 0, INT64_MAX, &v))
                return kc_usage_error("run", "--seed takes a number, not '%s'", a.value);
            o->seed = (uint64_t)v;
            break;
        case 5: o->json = true; break;
        default:
            if (!kc_parse_integer(a.value, 0, (long long)(KCRT_FLUSH_MAX_BYTES >> 20), &o->cold_mib))
                return kc_usage_error("run", "--cold takes the MiB to write before each launch, 0 to %zu (0: %zu), not '%s'",
                                      KCRT_FLUSH_MAX_BYTES >> 20, KCRT_FLUSH_BYTES >> 20, a.value);
            break;
        }
    }
    if (!o->bundle || !o->kernel)
        return kc_usage_error("run", "give a bundle and a kernel");
    return KC_EXIT_OK;
}

/* ---- scalars ------------------------------------------------------------------------------------ */

/* The value given for a parameter (after "name="), or NULL. */
static const char *given(const run_opts *o, const char *name)
{
    size_t n = strlen(name);
    for (int i = 0; i < o->nassign; i++)
        if (strncmp(o->assign[i], name, n) == 0 && o->assign[i][n] == '=')
            return o->assign[i] + n + 1;
    return NULL;
}

static int parse_scalar(const kcrt_param_info *p, const char *text, kcrt_arg *out)
{
    long long v;
    char *end;
    switch (p->type) {
    case KCRT_TYPE_INT:
        if (!kc_parse_integer(text, INT32_MIN, INT32_MAX, &v))
            return fail("%s is an int: '%s' is not one", p->name, text);
        *out = KCRT_I32(v);
        return KC_EXIT_OK;
    case KCRT_TYPE_UINT:
        if (!kc_parse_integer(text, 0, UINT32_MAX, &v))
            return fail("%s is a uint: '%s' is not one", p->name, text);
        *out = KCRT_U32(v);
        return KC_EXIT_OK;
    case KCRT_TYPE_BOOL:
        if (strcmp(text, "1") == 0 || strcmp(text, "true") == 0)
            *out = KCRT_BOOL(true);
        else if (strcmp(text, "0") == 0 || strcmp(text, "false") == 0)
            *out = KCRT_BOOL(false);
        else
            return fail("%s is a bool: give 0, 1, true or false, not '%s'", p->name, text);
        return KC_EXIT_OK;
    default: {
        errno = 0;
        float f = strtof(text, &end);
        if (!*text || *end || errno)
            return fail("%s is a %s: '%s' is not a number", p->name, p->type_name, text);
        if (p->type == KCRT_TYPE_HALF && isfinite(f) && fabsf(f) > 65504.0f)
            return fail("%s is a half: %s is past its largest value, 65504", p->name, text);
        if (p->type == KCRT_TYPE_HALF && f != 0 && fabsf(f) < 5.9604645e-8f / 2)
            return fail("%s is a half: %s is below its smallest value, 6e-8, and would be 0", p->name, text);
        *out = p->type == KCRT_TYPE_HALF ? KCRT_F16(kcrt_f32_to_f16(f)) : KCRT_F32(f);
        return KC_EXIT_OK;
    }
    }
}

static void list_params(const kcrt_kernel_info *ki, char *out, size_t len)
{
    size_t at = 0;
    out[0] = 0;
    for (int i = 0; i < ki->nparams && at < len; i++)
        at += (size_t)snprintf(out + at, len - at, "%s%s", i ? ", " : "", ki->params[i].name);
}

/* Every name=value names a parameter; every scalar has one; a buffer's is @file. */
static int check_assignments(const run_opts *o, const kcrt_kernel_info *ki)
{
    char list[1024];
    list_params(ki, list, sizeof(list));
    for (int i = 0; i < o->nassign; i++) {
        const char *eq = strchr(o->assign[i], '=');
        int j = 0;
        while (j < ki->nparams &&
               (strlen(ki->params[j].name) != (size_t)(eq - o->assign[i]) ||
                strncmp(ki->params[j].name, o->assign[i], (size_t)(eq - o->assign[i])) != 0))
            j++;
        if (j == ki->nparams)
            return fail("kernel '%s' has no parameter '%.*s' (its parameters: %s)", ki->name,
                        (int)(eq - o->assign[i]), o->assign[i], list);
        for (int k = 0; k < i; k++) /* n=1000 … n=2000: which did the user mean? */
            if (strncmp(o->assign[k], o->assign[i], (size_t)(eq - o->assign[i]) + 1) == 0)
                return fail("%.*s is given twice ('%s' and '%s')", (int)(eq - o->assign[i]), o->assign[i],
                            o->assign[k], o->assign[i]);
        if (ki->params[j].kind == KCRT_PARAM_BUFFER && eq[1] != '@')
            return fail("%s is a buffer: give %s=@FILE, or nothing for random data", ki->params[j].name,
                        ki->params[j].name);
    }
    for (int j = 0; j < ki->nparams; j++)
        if (ki->params[j].kind == KCRT_PARAM_SCALAR && !given(o, ki->params[j].name))
            return fail("missing scalar '%s' (%s): give %s=VALUE", ki->params[j].name,
                        ki->params[j].type_name, ki->params[j].name);
    return KC_EXIT_OK;
}

/* ---- buffers ------------------------------------------------------------------------------------- */

/* The elements a buffer parameter needs, or -1 when its extent is unknown. */
static int elements(run_state *st, const kcrt_param_info *p, int64_t *n)
{
    char err[512];
    if (!kc_workload_elements(p, st->names, st->values, st->nnames, n, err, sizeof(err)))
        return fail("%s", err);
    return KC_EXIT_OK;
}

static int make_buffer(run_state *st, const run_opts *o, int i, uint64_t *r)
{
    const kcrt_param_info *p = &st->ki->params[i];
    int64_t n;
    int rc = elements(st, p, &n);
    if (rc)
        return rc;
    const char *file = given(o, p->name);
    size_t have = 0, need = n < 0 ? 0 : (size_t)n * p->elem_bytes;
    unsigned char *data = NULL;
    if (file) {
        if (!(data = (unsigned char *)kc_read_file(file + 1, &have)))
            return fail("cannot read %s for %s: %s", file + 1, p->name, kc_read_error(errno));
        if (n < 0)
            need = have;
        if (have < need) {
            free(data);
            return fail("%s has %zu bytes, but %s needs %zu (%lld elements of %s)", file + 1, have, p->name,
                        need, (long long)n, p->type_name);
        }
    } else if (n < 0) {
        return fail("the size of %s is not declared: give %s=@FILE", p->name, p->name);
    }
    if (data) {
        kcrt_status s = kcrt_buffer_create(st->ctx, need ? need : 4, &st->bufs[i]);
        if (s == KCRT_OK && need)
            s = kcrt_buffer_write(st->bufs[i], 0, data, need);
        free(data);
        if (s != KCRT_OK)
            return fail("buffer %s (%zu bytes): %s", p->name, need, kcrt_error(st->ctx));
    } else {
        char err[512];
        if (!kc_workload_buffer(st->ctx, p, n, r, &st->bufs[i], NULL, err, sizeof(err)))
            return fail("%s", err);
    }
    st->bytes[i] = need;
    st->args[i] = KCRT_BUF(st->bufs[i]);
    return KC_EXIT_OK;
}

/* ---- the kernel -----------------------------------------------------------------------------------------
 */

/* Names for expressions: integer scalars, then the chosen variant's tunables. */
static int collect_names(run_state *st)
{
    st->nnames = kc_workload_names(st->ki, st->args, st->variant, st->names, st->values, MAX_PARAMS + 64);
    return KC_EXIT_OK;
}

/* The kernel, its scalars, and the variant it will run. */
static int prepare(run_state *st, const run_opts *o)
{
    kcrt_status s = o->variant ? kcrt_kernel_get_variant(st->b, o->kernel, o->variant, &st->k)
                               : kcrt_kernel_get(st->b, o->kernel, &st->k);
    if (s != KCRT_OK)
        return fail("%s", kcrt_error(st->ctx));
    st->ki = kcrt_kernel_info_get(st->k);
    int rc = check_assignments(o, st->ki);
    if (rc)
        return rc;
    kcrt_buffer *probe;
    if (kcrt_buffer_create(st->ctx, 4, &probe) != KCRT_OK)
        return fail("%s", kcrt_error(st->ctx));
    for (int i = 0; i < st->ki->nparams && !rc; i++)
        if (st->ki->params[i].kind == KCRT_PARAM_SCALAR)
            rc = parse_scalar(&st->ki->params[i], given(o, st->ki->params[i].name), &st->args[i]);
        else
            st->args[i] = KCRT_BUF(probe); /* for the choice of variant only */
    if (!rc &&
        kcrt_kernel_choose(st->k, st->args, (size_t)st->ki->nparams, &st->variant, &st->why) != KCRT_OK)
        rc = fail("%s", kcrt_error(st->ctx));
    kcrt_buffer_free(probe);
    return rc ? rc : collect_names(st);
}

static int write_outputs(run_state *st, const run_opts *o)
{
    for (int k = 0; k < o->nouts; k++) {
        const char *eq = strchr(o->outs[k], '=');
        int i = 0;
        while (i < st->ki->nparams &&
               (strlen(st->ki->params[i].name) != (size_t)(eq - o->outs[k]) ||
                strncmp(st->ki->params[i].name, o->outs[k], (size_t)(eq - o->outs[k])) != 0))
            i++;
        if (i == st->ki->nparams || !st->bufs[i])
            return fail("--out %s: '%.*s' is not a buffer parameter of %s", o->outs[k],
                        (int)(eq - o->outs[k]), o->outs[k], st->ki->name);
        unsigned char *data = malloc(st->bytes[i] ? st->bytes[i] : 1);
        if (!data || kcrt_buffer_read(st->bufs[i], 0, data, st->bytes[i]) != KCRT_OK) {
            free(data);
            return fail("reading %s: %s", st->ki->params[i].name, kcrt_error(st->ctx));
        }
        FILE *f = fopen(eq + 1, "wb");
        bool ok = f && fwrite(data, 1, st->bytes[i], f) == st->bytes[i];
        ok = f && fclose(f) == 0 && ok;
        free(data);
        if (!ok)
            return fail("cannot write %s: %s", eq + 1, strerror(errno));
    }
    return KC_EXIT_OK;
}

/* ---- report
 * ------------------------------------------------------------------------------------------------ */


typedef struct timing {
    double median, min, max;
    int64_t grid[3];
    double bytes, flops; /* per launch; < 0 when the bundle does not say */
} timing;

static void measure_extras(run_state *st, timing *t)
{
    char err[256];
    const char *at = st->ki->grid;
    for (int d = 0; d < 3; d++) {
        const char *semi = strchr(at, ';');
        char e[256];
        snprintf(e, sizeof(e), "%.*s", (int)(semi ? (size_t)(semi - at) : strlen(at)), at);
        at = semi ? semi + 1 : at + strlen(at);
        if (kcrt_eval(e, st->names, st->values, st->nnames, &t->grid[d], err, sizeof(err)) != KCRT_OK)
            t->grid[d] = 0;
    }
    int64_t v;
    t->bytes = st->ki->bytes &&
                       kcrt_eval(st->ki->bytes, st->names, st->values, st->nnames, &v, err, sizeof(err)) == 0
                   ? (double)v
                   : -1;
    t->flops = st->ki->flops &&
                       kcrt_eval(st->ki->flops, st->names, st->values, st->nnames, &v, err, sizeof(err)) == 0
                   ? (double)v
                   : -1;
}

static void report_text(run_state *st, const run_opts *o, const timing *t)
{
    printf("kernel   %s\nvariant  %s (%s)\ndevice   %s [%s]\ngrid     %lld x %lld x %lld workgroups\n",
           st->ki->name, *st->variant ? st->variant : "(no tunables)", st->why, kcrt_device_name(st->ctx),
           kcrt_backend_name(st->ctx), (long long)t->grid[0], (long long)t->grid[1], (long long)t->grid[2]);
    if (o->repeat == 0)
        return;
    /* kcrt_time_launch: on a CPU Vulkan driver a timestamp pair brackets
     * up to 8 launches, so min and max are those groups' means */
    bool grouped = o->cold_mib < 0 && kcrt_device_info_get(st->ctx)->type == KCRT_DEVICE_CPU &&
                   !strcmp(kcrt_backend_name(st->ctx), "vulkan") && o->repeat > 1;
    printf("time     %.3f us median of %d (min %.3f, max %.3f), device timestamps%s\n", t->median / 1e3,
           o->repeat, t->min / 1e3, t->max / 1e3,
           o->cold_mib >= 0 ? ", cold caches"
           : grouped        ? ", up to 8 launches a timestamp pair (a CPU driver: docs/benchmarks.md)"
                            : "");
    if (t->bytes >= 0)
        printf("memory   %.2f GB/s\n", t->bytes / t->median);
    if (t->flops >= 0)
        printf("compute  %.2f GFLOP/s\n", t->flops / t->median);
}

static void report_json(run_state *st, const run_opts *o, const timing *t)
{
    json_t *r = json_pack("{s:s, s:s, s:s, s:s, s:s, s:[I, I, I], s:i}", "kernel", st->ki->name, "variant",
                          st->variant, "why", st->why, "device", kcrt_device_name(st->ctx), "backend",
                          kcrt_backend_name(st->ctx), "grid", (json_int_t)t->grid[0], (json_int_t)t->grid[1],
                          (json_int_t)t->grid[2], "repeat", o->repeat);
    json_object_set_new(r, "cold", json_boolean(o->cold_mib >= 0));
    if (o->repeat) {
        json_object_set_new(r, "median_ns", json_real(t->median));
        json_object_set_new(r, "min_ns", json_real(t->min));
        json_object_set_new(r, "max_ns", json_real(t->max));
    }
    if (o->repeat && t->bytes >= 0) {
        json_object_set_new(r, "bytes", json_real(t->bytes));
        json_object_set_new(r, "gb_per_s", json_real(t->bytes / t->median));
    }
    if (o->repeat && t->flops >= 0) {
        json_object_set_new(r, "flops", json_real(t->flops));
        json_object_set_new(r, "gflop_per_s", json_real(t->flops / t->median));
    }
    json_dumpf(r, stdout, JSON_REAL_PRECISION(10));
    printf("\n");
    json_decref(r);
}

static int launch_and_time(run_state *st, const run_opts *o)
{
    size_t n = (size_t)st->ki->nparams;
    kcrt_status s = kcrt_launch(st->k, st->args, n);
    if (s == KCRT_OK)
        s = kcrt_finish(st->ctx);
    if (s != KCRT_OK && s != KCRT_ERROR_OUT_OF_BOUNDS)
        return fail("%s", kcrt_error(st->ctx));
    int rc = write_outputs(st, o);
    if (rc || s == KCRT_ERROR_OUT_OF_BOUNDS) /* a checked build's report is on stderr already (libkcrt's) */
        return rc ? rc : KC_EXIT_ERROR;
    timing t = {0};
    measure_extras(st, &t);
    if (o->repeat > 0) {
        double *ns = calloc((size_t)o->repeat, sizeof(double));
        kcrt_status ts = !ns ? KCRT_ERROR_OUT_OF_MEMORY
                         : o->cold_mib >= 0
                            ? kcrt_time_launch_cold(st->k, st->args, n, o->repeat, (size_t)o->cold_mib << 20, ns)
                            : kcrt_time_launch(st->k, st->args, n, o->repeat, ns);
        if (ts != KCRT_OK) {
            free(ns);
            return fail("timing: %s", kcrt_error(st->ctx));
        }
        kc_stats_summary sum;
        kc_stats_summarize(ns, o->repeat, &sum);
        t.min = sum.min, t.max = sum.max, t.median = sum.median;
        free(ns);
    }
    if (o->json)
        report_json(st, o, &t);
    else
        report_text(st, o, &t);
    return KC_EXIT_OK;
}

static int run(run_state *st, const run_opts *o)
{
    kcrt_options opts = {"auto", o->device};
    if (kcrt_open(&st->ctx, &opts) != KCRT_OK)
        return fail("%s", kcrt_error(st->ctx));
    if (kcrt_bundle_load(st->ctx, o->bundle, &st->b) != KCRT_OK)
        return fail("%s", kcrt_error(st->ctx));
    int rc = prepare(st, o);
    uint64_t r = o->seed * 0x9E3779B97F4A7C15ull + 1;
    for (int i = 0; !rc && i < st->ki->nparams; i++)
        if (st->ki->params[i].kind == KCRT_PARAM_BUFFER)
            rc = make_buffer(st, o, i, &r);
    return rc ? rc : launch_and_time(st, o);
}

int kc_cmd_run(int argc, char **argv)
{
    run_opts *o = calloc(1, sizeof(run_opts));
    run_state *st = calloc(1, sizeof(run_state));
    int rc = !o || !st ? fail("out of memory") : parse_options(argc, argv, o);
    if (rc == KC_EXIT_OK)
        rc = run(st, o);
    if (st)
        kcrt_close(st->ctx); /* and the bundle and buffers with it */
    free(o);
    free(st);
    return rc;
}
