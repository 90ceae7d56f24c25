/*
 * cmd_build.c — `kc build DIR|FILE… [-t TARGET]… [-o out.kcb] [--all-variants] [--amdgpu-cov 4|5] [-I DIR]… [--checked]`.
 */
#include "kc_build.h"
#include "kc_tools.h"

int kc_cmd_build(int argc, char **argv)
{
    static const kc_opt opts[] = {{"-t", true}, {"--target", true}, {"-o", true}, {"--all-variants", false},
                                  {"--quiet", false}, {"--amdgpu-cov", true}, {"-I", true},
                                  {"--checked", false}};
    kc_args a = {"build", argc, argv, 1, NULL, NULL};
    const char *inputs[256], *targets[64], *include_dirs[64];
    kc_build_options o = {.inputs = inputs, .targets = targets, .include_dirs = include_dirs, .log = stderr};
    int r;
    while ((r = kc_next_arg(&a, opts, (int)KC_COUNT(opts))) != -2) {
        switch (r) {
        case -3: return KC_EXIT_USAGE;
        case -1:
            if (o.ninputs == 256)
                return kc_usage_error("build", "too many inputs");
            inputs[o.ninputs++] = a.positional;
            break;
        case 0:
        case 1:
            if (o.ntargets == 64)
                return kc_usage_error("build", "too many targets");
            targets[o.ntargets++] = a.value;
            break;
        case 2: o.output = a.value; break;
        case 3: o.all_variants = true; break;
        case 4: o.quiet = true; break;
        case 5:
            if (!kc_parse_amdgpu_cov(a.value, &o.target.amdgpu_cov))
                return kc_usage_error("build", "--amdgpu-cov takes 4 or 5, not '%s'", a.value);
            break;
        case 6:
            if (o.ninclude_dirs == 64)
                return kc_usage_error("build", "too many -I folders");
            include_dirs[o.ninclude_dirs++] = a.value;
            break;
        case 7: o.target.checked = true; break;
        }
    }
    if (!o.ninputs)
        return kc_usage_error("build", "no kernel files or directories given");
    return kc_build(&o) == 0 ? KC_EXIT_OK : KC_EXIT_ERROR;
}
