/*
 * fuzz_kcyaml.c — the libFuzzer target for kc.yaml.
 *
 * Each input is a package's kc.yaml, next to a small kernel file (so that
 * names, shapes and expressions can match a kernel: one with an int, a
 * float and two buffers, one with two ints and a uint); the package is read as kc build reads it. Any diagnostic is a
 * fine answer; a crash, a hang, a leak or a sanitizer report is not.
 * Seeds: every kc.yaml of the project (tests/fuzz/run.sh gathers them).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kc_build.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];

static const char kernels[] =
    "#include <kc.h>\n"
    "KC_TUNE(WG, 64, 32, 64)\n"
    "KC_KERNEL KC_WORKGROUP(WG, 1, 1) KC_GRID(kc_cdiv(n, WG), 1, 1)\n"
    "void saxpy(int n, float a, const float x[n], float y[n])\n"
    "{ int i = kc_global_id(0); if (i < n) y[i] = a * x[i] + y[i]; }\n"
    "KC_KERNEL KC_WORKGROUP(64, 1, 1) KC_GRID(rows, 1, 1)\n"
    "void softmax(int rows, int n, uint flags, const float x[rows * n], float y[rows * n])\n"
    "{ int r = kc_group_id(0); if (kc_local_id(0) == 0 && flags == 0u) y[r * n] = x[r * n]; }\n";

static void remove_dir(void)
{
    static const char *const names[] = {"k.kc", "kc.yaml"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char p[128];
        snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
}

static void setup(void)
{
    if (dir[0])
        return;
    atexit(remove_dir);
    snprintf(dir, sizeof(dir), "/tmp/kc-fuzz-kcyaml-%ld", (long)getpid());
    mkdir(dir, 0700);
    char path[128];
    snprintf(path, sizeof(path), "%s/k.kc", dir);
    if (kc_write_file_atomic(path, kernels, sizeof(kernels) - 1) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    char yaml[128];
    snprintf(yaml, sizeof(yaml), "%s/kc.yaml", dir);
    FILE *f = fopen(yaml, "wb"); /* not kc_write_file_atomic: its fsync would cost more than the rest */
    if (!f || fwrite(data, 1, size, f) != size)
        abort();
    fclose(f);
    FILE *devnull = fopen("/dev/null", "w");
    const char *inputs[] = {dir};
    kc_package_options o = {inputs, 1, NULL, 0};
    kc_package p;
    if (kc_package_load(&p, &o, devnull)) {
        for (int i = 0; i < p.cfgs.len; i++)
            kc_package_cfg(&p, ((const kc_kernel_cfg *)p.cfgs.items[i])->name);
    }
    kc_package_free(&p);
    fclose(devnull);
    return 0;
}
