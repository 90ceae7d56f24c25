/*
 * bench_peaks.c — the device's peak figures for the roofline.
 *
 * `kc bench --calibrate` measures them with kc's own kernels and keeps
 * them in $XDG_CACHE_HOME/kc/peaks.json, beside the tuning cache, one
 * entry per device key (the driver version is part of the key, so a new
 * driver is measured again):
 *
 *   {"format": "kc-peaks/1",
 *    "devices": {"vulkan:10005:…": {"name": "llvmpipe …", "gb_per_s": 8.7,
 *                                    "gflop_per_s": 47.1, "when": "…",
 *                                    "kc_version": "0.1.0", "revision": 2,
 *                                    "detail": "…", "steal": 0.02,
 *                                    "others": 0.01}}}
 *
 * "steal" is the share of the host's CPU time a hypervisor took while
 * they were measured (bench_host.c; absent where unknown), "others" (a CPU
 * device only) the share other processes of the machine kept busy: peaks
 * of a CPU device calibrated under a large one read low.
 *
 * Without a measurement, a few GPUs have their datasheet figures (FP32
 * without tensor cores, and the memory bandwidth) in the table below.
 */
#include "kc_bench.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PEAKS_FORMAT "kc-peaks/1"

/* The calibration's code: bumped when kc compiles its kernels so that they
 * run at another speed, or measures them another way, since peaks measured
 * by the old code would put every kernel's fraction off (an entry without
 * one is revision 1).
 * 2: the SPIR-V backend's wide views (2026-12-05): lavapipe's float4 copy
 * 9.8 -> 12.6 GB/s. 3: the copy's texel reads, TX (2026-12-05). 4: the best of
 * three rounds (2026-12-06): reads higher than one round on a busy host.
 */
#define PEAKS_REVISION 4

/* Datasheet figures: a part of the device name, GB/s, FP32 GFLOP/s. More
 * specific names first. */
static const struct {
    const char *name;
    double gb_per_s, gflop_per_s;
} datasheet[] = {
    {"H100 PCIe", 2000, 51200}, /* NVIDIA H100 PCIe, 80 GB HBM2e */
    {"H100 NVL", 3900, 60000},  /* NVIDIA H100 NVL, 94 GB HBM3 */
    {"H100", 3350, 66900},      /* NVIDIA H100 SXM5, 80 GB HBM3 */
    {"H200 NVL", 4800, 60000},  /* NVIDIA H200 NVL, 141 GB HBM3e */
    {"H200", 4800, 66900},      /* NVIDIA H200 SXM, 141 GB HBM3e */
};

char *kc_bench_peaks_default_path(char *err, size_t errlen)
{
    char *base = kc_user_cache_dir();
    if (!base) {
        snprintf(err, errlen, "%s; give the file with --peaks FILE", KC_USER_CACHE_VARS);
        return NULL;
    }
    char dir[KC_PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/kc", base);
    free(base);
    if (kc_make_dirs(dir, 0755) != 0) {
        snprintf(err, errlen, "cannot create '%s': %s", dir, strerror(errno));
        return NULL;
    }
    size_t n = strlen(dir) + sizeof("/peaks.json");
    char *path = malloc(n);
    if (path)
        snprintf(path, n, "%s/peaks.json", dir);
    return path;
}

static json_t *load(const char *path)
{
    json_error_t e;
    json_t *root = path ? json_load_file(path, 0, &e) : NULL;
    json_t *fmt = json_object_get(root, "format");
    if (!json_is_object(root) || !json_is_string(fmt) || strcmp(json_string_value(fmt), PEAKS_FORMAT) != 0 ||
        !json_is_object(json_object_get(root, "devices"))) {
        json_decref(root);
        return NULL;
    }
    return root;
}

/* a share of CPU time kept in an entry, 0..1; -1 where absent or not one */
static double share(json_t *entry, const char *key)
{
    json_t *v = json_object_get(entry, key);
    return json_is_number(v) && json_number_value(v) >= 0 && json_number_value(v) <= 1 ? json_number_value(v) : -1;
}

void kc_bench_peaks_find(const char *path, const kcrt_device_info *dev, kc_bench_peaks *out)
{
    memset(out, 0, sizeof(*out));
    json_t *root = load(path);
    json_t *d = json_object_get(json_object_get(root, "devices"), dev->key);
    double bw = json_number_value(json_object_get(d, "gb_per_s")),
           fl = json_number_value(json_object_get(d, "gflop_per_s"));
    json_t *rev = json_object_get(d, "revision");
    if (bw > 0 && fl > 0 && (json_is_integer(rev) ? json_integer_value(rev) : 1) != PEAKS_REVISION) {
        out->stale = true;
        snprintf(out->when, sizeof(out->when), "%s",
                 json_string_value(json_object_get(d, "when")) ? json_string_value(json_object_get(d, "when"))
                                                               : "");
    } else if (bw > 0 && fl > 0) {
        *out = (kc_bench_peaks){.known = true, .gb_per_s = bw, .gflop_per_s = fl};
        snprintf(out->source, sizeof(out->source), "measured");
        snprintf(out->when, sizeof(out->when), "%s",
                 json_string_value(json_object_get(d, "when")) ? json_string_value(json_object_get(d, "when"))
                                                               : "");
        snprintf(out->detail, sizeof(out->detail), "%s",
                 json_string_value(json_object_get(d, "detail"))
                     ? json_string_value(json_object_get(d, "detail"))
                     : "");
        out->steal = share(d, "steal");
        out->others = share(d, "others");
    }
    json_decref(root);
    for (size_t i = 0; !out->known && i < KC_COUNT(datasheet); i++)
        if (strstr(dev->name, datasheet[i].name)) {
            *out = (kc_bench_peaks){
                .known = true, .gb_per_s = datasheet[i].gb_per_s, .gflop_per_s = datasheet[i].gflop_per_s};
            snprintf(out->source, sizeof(out->source), "datasheet");
            snprintf(out->detail, sizeof(out->detail), "%s: FP32 without tensor cores, memory bandwidth",
                     datasheet[i].name);
        }
    if (!out->known || strcmp(out->source, "datasheet") == 0)
        out->steal = out->others = -1;
}

bool kc_bench_peaks_store(const char *path, const kcrt_device_info *dev, const kc_bench_peaks *p, char *err,
                          size_t errlen)
{
    json_t *root = load(path);
    if (!root)
        root = json_pack("{s:s, s:{}}", "format", PEAKS_FORMAT, "devices");
    json_t *entry = json_pack("{s:s, s:f, s:f, s:s, s:s, s:i, s:s}", "name", dev->name, "gb_per_s", p->gb_per_s,
                              "gflop_per_s", p->gflop_per_s, "when", p->when, "kc_version", KC_VERSION, "revision",
                              PEAKS_REVISION, "detail", p->detail);
    if (p->steal >= 0)
        json_object_set_new(entry, "steal", json_real(p->steal));
    if (p->others >= 0)
        json_object_set_new(entry, "others", json_real(p->others));
    json_object_set_new(json_object_get(root, "devices"), dev->key, entry);
    char *text = json_dumps(root, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(6));
    json_decref(root);
    bool ok = text && kc_write_file_atomic(path, text, strlen(text)) == 0;
    if (!ok)
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
    free(text);
    return ok;
}

double kc_bench_roofline(const kc_bench_peaks *p, double bytes, double flops, double ns, const char **bound)
{
    *bound = NULL;
    if (!p->known || bytes <= 0 || !(ns > 0))
        return -1;
    double bw = p->gb_per_s; /* bytes per ns */
    if (flops <= 0) {        /* only bytes known: the bandwidth's share */
        *bound = "memory";
        return bytes / ns / bw;
    }
    double attainable = fmin(p->gflop_per_s, flops / bytes * bw); /* flops per ns */
    *bound = p->gflop_per_s < flops / bytes * bw ? "compute" : "memory";
    return flops / ns / attainable;
}
