/*
 * cmd_info.c — `kc info BUNDLE [--json]`: what a bundle holds.
 */
#include "kc_build.h"
#include "kc_tools.h"

int kc_cmd_info(int argc, char **argv)
{
    static const kc_opt opts[] = {{"--json", false}};
    kc_args a = {"info", argc, argv, 1, NULL, NULL};
    const char *path = NULL;
    bool json = false;
    int r;
    while ((r = kc_next_arg(&a, opts, 1)) != -2) {
        if (r == -3)
            return KC_EXIT_USAGE;
        if (r == 0)
            json = true;
        else if (path)
            return kc_usage_error("info", "one bundle at a time");
        else
            path = a.positional;
    }
    if (!path)
        return kc_usage_error("info", "no bundle given");
    char err[512];
    kc_bundle *b = kc_bundle_open(path, false, err, sizeof(err));
    if (!b) {
        fprintf(stderr, "kc info: %s\n", err);
        return KC_EXIT_ERROR;
    }
    kc_buf out = {0};
    bool ok = kc_bundle_describe(b, &out, json, err, sizeof(err));
    if (ok)
        fputs(out.data, stdout);
    else
        fprintf(stderr, "kc info: %s\n", err);
    kc_buf_free(&out);
    kc_bundle_close(b);
    return ok ? KC_EXIT_OK : KC_EXIT_ERROR;
}
