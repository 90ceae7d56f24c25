/*
 * cmd_export.c — `kc export BUNDLE -o DIR`: a bundle's binaries as files,
 * every name kept inside DIR (docs/security.md).
 */
#include "kc_build.h"
#include "kc_tools.h"

int kc_cmd_export(int argc, char **argv)
{
    static const kc_opt opts[] = {{"-o", true}};
    kc_args a = {"export", argc, argv, 1, NULL, NULL};
    const char *path = NULL, *dir = NULL;
    int r;
    while ((r = kc_next_arg(&a, opts, 1)) != -2) {
        if (r == -3)
            return KC_EXIT_USAGE;
        if (r == 0)
            dir = a.value;
        else if (path)
            return kc_usage_error("export", "one bundle at a time");
        else
            path = a.positional;
    }
    if (!path || !dir)
        return kc_usage_error("export", "usage: kc export BUNDLE -o DIR");
    char err[512];
    kc_bundle *b = kc_bundle_open(path, false, err, sizeof(err));
    if (!b) {
        fprintf(stderr, "kc export: %s\n", err);
        return KC_EXIT_ERROR;
    }
    bool ok = kc_bundle_export(b, dir, stderr, err, sizeof(err));
    if (!ok)
        fprintf(stderr, "kc export: %s\n", err);
    kc_bundle_close(b);
    return ok ? KC_EXIT_OK : KC_EXIT_ERROR;
}
