/*
 * cmd_cache.c — `kc cache list|defaults|export|import|clear|check|repair`.
 */
#include "kc/kcrt.h"
#include "kc_build.h"
#include "kc_cache.h"
#include "kc_tools.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct cache_opts {
    const char *action, *file, *cache_path, *kernel_tuner, *bundle;
    kc_cache_filter filter;
    bool json;
} cache_opts;

static int parse(int argc, char **argv, cache_opts *o)
{
    static const kc_opt opts[] = {{"--cache", true}, {"--kernel", true}, {"--device", true}, {"--shape", true},
                                  {"--backend", true}, {"--json", false}, {"--kernel-tuner", true},
                                  {"--bundle", true}};
    kc_args a = {"cache", argc, argv, 1, NULL, NULL};
    int r;
    while ((r = kc_next_arg(&a, opts, 8)) != -2) {
        switch (r) {
        case -3: return KC_EXIT_USAGE;
        case -1:
            if (!o->action)
                o->action = a.positional;
            else if (!o->file)
                o->file = a.positional;
            else
                return kc_usage_error("cache", "unexpected '%s'", a.positional);
            break;
        case 0: o->cache_path = a.value; break;
        case 1: o->filter.kernel = a.value; break;
        case 2: o->filter.device_key = a.value; break;
        case 3: o->filter.shape = a.value; break;
        case 4: o->filter.backend = a.value; break;
        case 5: o->json = true; break;
        case 6: o->kernel_tuner = a.value; break;
        case 7: o->bundle = a.value; break;
        }
    }
    if (!o->action)
        return kc_usage_error("cache", "say what to do: list, defaults, export, import, clear, check or repair");
    bool file_action = !strcmp(o->action, "export") || !strcmp(o->action, "import");
    bool whole = !strcmp(o->action, "check") || !strcmp(o->action, "repair");
    bool listing = !strcmp(o->action, "list") || !strcmp(o->action, "defaults");
    if (!listing && strcmp(o->action, "clear") && !file_action && !whole)
        return kc_usage_error("cache", "no action '%s' (list, defaults, export, import, clear, check, repair)",
                              o->action);
    if (!strcmp(o->action, "defaults") && o->filter.shape)
        return kc_usage_error("cache", "defaults weighs every shape measured; it takes no --shape");
    if (!strcmp(o->action, "defaults") && o->file)
        return kc_usage_error("cache", "defaults takes no FILE");
    if (o->bundle && strcmp(o->action, "defaults"))
        return kc_usage_error("cache", "--bundle is for defaults (to score the bundle's current defaults)");
    if (whole && o->file)
        return kc_usage_error("cache", "%s takes no FILE; name the cache with --cache", o->action);
    if (file_action && !o->file && !o->kernel_tuner)
        return kc_usage_error("cache", "%s needs a FILE", o->action);
    return KC_EXIT_OK;
}

/* The type kc.yaml's defaults are keyed by ("cpu", "discrete", ...), when
 * the device is on this machine; NULL otherwise. */
static const char *device_type(const char *device_key, kcrt_device_info *list, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(list[i].key, device_key))
            return list[i].type_name;
    return NULL;
}

/* "WG=64,TM=4" as kc.yaml writes it: "{WG: 64, TM: 4}" */
static void yaml_variant(kc_buf *out, const char *variant)
{
    kc_buf_puts(out, "{");
    for (const char *p = variant; *p; p++) {
        if (*p == '=')
            kc_buf_puts(out, ": ");
        else if (*p == ',')
            kc_buf_puts(out, ", ");
        else
            kc_buf_printf(out, "%c", *p);
    }
    kc_buf_puts(out, "}");
}

/* --bundle: the devices on this machine and the bundle whose defaults
 * are scored beside the proposals */
typedef struct here {
    kcrt_device_info *list;
    int n;
    kc_bundle *b;
} here;

static const char *current_default(void *user, const char *kernel, const char *device_key)
{
    here *h = user;
    const char *why;
    return kc_bundle_default_variant(h->b, kernel, device_type(device_key, h->list, h->n), &why);
}

static void print_current(const kc_cache_proposal *p, const here *h, const char *type, const char *bundle)
{
    const char *why = "";
    if (!p->current) {
        printf("  current    (%s has no kernel %s)\n", bundle, p->kernel);
        return;
    }
    kc_bundle_default_variant(h->b, p->kernel, type, &why);
    printf("  current    %-40s ", p->current);
    if (isnan(p->current_mean))
        printf("not run correctly at any compared shape");
    else
        printf("%.2fx each shape's winner, at worst %.2fx", p->current_mean, p->current_worst);
    if (p->current_missing && !isnan(p->current_mean))
        printf(", and not run correctly at %d of the %d", p->current_missing, p->shapes);
    printf(" (%s%s in %s)\n", p->variant && !strcmp(p->variant, p->current) ? "the proposal; " : "", why, bundle);
    if (!type)
        printf("             (the device is not on this machine, so kc.yaml's default for its type is not known "
               "here)\n");
}

static void print_proposal(const kc_cache_proposal *p, const char *type, const here *h, const char *bundle)
{
    printf("%s on %s (%s; source %.12s)\n", p->kernel, p->device, p->backend, p->source_hash);
    if (!p->variant) {
        printf("  no variant ran correctly at every shape measured\n\n");
        return;
    }
    printf("  %d shape%s compared, %d variant%s measured at every one\n", p->shapes, p->shapes == 1 ? "" : "s",
           p->candidates, p->candidates == 1 ? "" : "s");
    if (p->left_out)
        printf("  left out, too few variants measured: %s\n", p->left_out);
    printf("  proposed   %-40s %.2fx each shape's winner (geometric mean), at worst %.2fx (%s)\n", p->variant,
           p->mean_slowdown, p->worst_slowdown, p->worst_shape);
    if (p->runner_up)
        printf("  next       %-40s %.2fx\n", p->runner_up, p->runner_up_mean);
    if (h->b)
        print_current(p, h, type, bundle);
    if (p->candidates < 3 && p->shapes > 1)
        printf("  few to choose from: the others failed somewhere or were measured at some shapes only "
               "(`kc cache list --kernel %s` says which); `kc tune --budget all` measures every variant\n",
               p->kernel);
    kc_buf yaml = {0};
    yaml_variant(&yaml, p->variant);
    printf("  kc.yaml    defaults: {%s: %s}\n\n", type ? type : "TYPE", yaml.data);
    kc_buf_free(&yaml);
}

/* The devices on this machine (their types name kc.yaml's defaults). */
static kcrt_device_info *local_devices(int *n)
{
    char err[256];
    kcrt_device_info *list = NULL;
    *n = 0;
    if (kcrt_devices(NULL, NULL, 0, n, err, sizeof(err)) == KCRT_OK && *n > 0) {
        list = calloc((size_t)*n, sizeof(*list));
        if (!list || kcrt_devices(NULL, list, *n, n, err, sizeof(err)) != KCRT_OK)
            *n = 0;
    }
    return list;
}

/* `kc cache defaults`: a proposed kc.yaml default per kernel and device,
 * with --bundle the bundle's current default scored beside it. */
static int propose(kc_cache *c, const cache_opts *o)
{
    here h = {0};
    char err[512];
    if (o->bundle && !(h.b = kc_bundle_open(o->bundle, false, err, sizeof(err))))
        return fprintf(stderr, "kc cache: %s\n", err), KC_EXIT_ERROR;
    h.list = local_devices(&h.n);
    kc_arena a;
    kc_arena_init(&a);
    kc_cache_proposal *p;
    int n = kc_cache_propose_defaults(c, &o->filter, h.b ? current_default : NULL, &h, &p, &a);
    bool untyped = false;
    for (int i = 0; i < n; i++) {
        const char *type = device_type(p[i].device_key, h.list, h.n);
        untyped |= p[i].variant && !type;
        print_proposal(&p[i], type, &h, o->bundle);
    }
    if (!n)
        fprintf(stderr, "kc cache: no results match; see kc cache list\n");
    if (untyped)
        printf("TYPE: the device's type as `kc devices` names it there (cpu, integrated, discrete, virtual, other)\n");
    free(h.list);
    if (h.b)
        kc_bundle_close(h.b);
    kc_arena_free(&a);
    return n < 0 ? KC_EXIT_ERROR : KC_EXIT_OK;
}

static int run(kc_cache *c, const cache_opts *o)
{
    char err[512];
    if (!strcmp(o->action, "defaults"))
        return propose(c, o);
    if (!strcmp(o->action, "list")) {
        kc_buf out = {0};
        kc_cache_list(c, &o->filter, o->json, &out);
        fputs(out.data ? out.data : "", stdout);
        kc_buf_free(&out);
        return KC_EXIT_OK;
    }
    if (!strcmp(o->action, "clear")) {
        long n = kc_cache_clear(c, &o->filter, err, sizeof(err));
        if (n < 0)
            return fprintf(stderr, "kc cache: %s\n", err), KC_EXIT_ERROR;
        fprintf(stderr, "kc cache: removed %ld result%s\n", n, n == 1 ? "" : "s");
        return KC_EXIT_OK;
    }
    if (!strcmp(o->action, "import")) {
        long added, replaced, kept;
        if (!kc_cache_import(c, o->file, &added, &replaced, &kept, err, sizeof(err)))
            return fprintf(stderr, "kc cache: %s\n", err), KC_EXIT_ERROR;
        fprintf(stderr, "kc cache: %ld added, %ld replaced by better-supported results, %ld kept\n", added, replaced,
                kept);
        return KC_EXIT_OK;
    }
    bool ok = o->kernel_tuner ? kc_cache_export_kernel_tuner(c, &o->filter, o->kernel_tuner, err, sizeof(err))
                              : kc_cache_export(c, &o->filter, o->file, err, sizeof(err));
    if (!ok)
        return fprintf(stderr, "kc cache: %s\n", err), KC_EXIT_ERROR;
    fprintf(stderr, "kc cache: wrote %s\n", o->kernel_tuner ? o->kernel_tuner : o->file);
    return KC_EXIT_OK;
}

/* check and repair work on the file as it is, without opening it as a
 * cache (which refuses a damaged one). */
static int check_or_repair(const char *path, const cache_opts *o)
{
    if (!strcmp(o->action, "check")) {
        kc_buf report = {0};
        bool ok = kc_cache_check(path, &report);
        fputs(report.data ? report.data : "", ok ? stdout : stderr);
        kc_buf_free(&report);
        return ok ? KC_EXIT_OK : KC_EXIT_ERROR;
    }
    char err[512];
    kc_cache_repair_report r;
    if (!kc_cache_repair(path, &r, err, sizeof(err)))
        return fprintf(stderr, "kc cache: %s\n", err), KC_EXIT_ERROR;
    fprintf(stderr,
            "kc cache: kept %ld result%s and %ld search space%s in a new %s (%ld damaged place%s skipped); the old "
            "file is %s\n",
            r.results, r.results == 1 ? "" : "s", r.spaces, r.spaces == 1 ? "" : "s", path, r.skips,
            r.skips == 1 ? "" : "s", r.aside);
    return KC_EXIT_OK;
}

int kc_cmd_cache(int argc, char **argv)
{
    cache_opts o = {0};
    int status = parse(argc, argv, &o);
    if (status != KC_EXIT_OK)
        return status;
    char err[512];
    char *path = o.cache_path ? strdup(o.cache_path) : kc_cache_default_path(err, sizeof(err));
    if (!path)
        return fprintf(stderr, "kc cache: %s\n", err), KC_EXIT_ERROR;
    if (!strcmp(o.action, "check") || !strcmp(o.action, "repair")) {
        status = check_or_repair(path, &o);
        free(path);
        return status;
    }
    kc_cache *c = kc_cache_open(path, err, sizeof(err));
    if (!c) {
        fprintf(stderr, "kc cache: %s\n", err);
        free(path);
        return KC_EXIT_ERROR;
    }
    status = run(c, &o);
    kc_cache_close(c);
    free(path);
    return status;
}
