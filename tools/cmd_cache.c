/*
 * cmd_cache.c — `kc cache list|export|import|clear|check|repair`.
 */
#include "kc_cache.h"
#include "kc_tools.h"

#include <stdlib.h>
#include <string.h>

typedef struct cache_opts {
    const char *action, *file, *cache_path, *kernel_tuner;
    kc_cache_filter filter;
    bool json;
} cache_opts;

static int parse(int argc, char **argv, cache_opts *o)
{
    static const kc_opt opts[] = {{"--cache", true}, {"--kernel", true}, {"--device", true}, {"--shape", true},
                                  {"--backend", true}, {"--json", false}, {"--kernel-tuner", true}};
    kc_args a = {"cache", argc, argv, 1, NULL, NULL};
    int r;
    while ((r = kc_next_arg(&a, opts, 7)) != -2) {
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
        }
    }
    if (!o->action)
        return kc_usage_error("cache", "say what to do: list, export, import, clear, check or repair");
    bool file_action = !strcmp(o->action, "export") || !strcmp(o->action, "import");
    bool whole = !strcmp(o->action, "check") || !strcmp(o->action, "repair");
    if (strcmp(o->action, "list") && strcmp(o->action, "clear") && !file_action && !whole)
        return kc_usage_error("cache", "no action '%s' (list, export, import, clear, check, repair)", o->action);
    if (whole && o->file)
        return kc_usage_error("cache", "%s takes no FILE; name the cache with --cache", o->action);
    if (file_action && !o->file && !o->kernel_tuner)
        return kc_usage_error("cache", "%s needs a FILE", o->action);
    return KC_EXIT_OK;
}

static int run(kc_cache *c, const cache_opts *o)
{
    char err[512];
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
