/*
 * cmd_devices.c — kc devices: every device libkcrt can run on, with the
 * limits that matter for tuning, as text or JSON. The index printed is the
 * one --device, kcrt_options.device and KCRT_DEVICE take.
 */
#include "kc_tools.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kc/kcrt.h"

static void features(const kcrt_device_info *d, char *out, size_t len)
{
    snprintf(out, len, "%s%s%s%s%s%s%s%s", d->float16 ? " float16" : "", d->int64 ? " int64" : "",
             d->storage16 ? " storage16" : "", d->subgroups ? " subgroups" : "",
             d->subgroup_arithmetic ? " subgroup_arithmetic" : "",
             d->subgroup_shuffle ? " subgroup_shuffle" : "", d->subgroup_ballot ? " subgroup_ballot" : "",
             d->float_atomics ? " float_atomics" : "");
}

static void print_text(FILE *out, const kcrt_device_info *d)
{
    char f[256];
    features(d, f, sizeof(f));
    bool vulkan = strcmp(d->backend, "vulkan") == 0;
    fprintf(out, "%d: %s [%s, %s]\n", d->index, d->name, d->backend, d->type_name);
    fprintf(out, "   vendor       %s (0x%04x), device 0x%04x\n", d->vendor, d->vendor_id, d->device_id);
    if (vulkan)
        fprintf(out, "   driver       %s; API %u.%u.%u\n", d->driver, d->api_version >> 22 & 0x7f,
                d->api_version >> 12 & 0x3ff, d->api_version & 0xfff);
    else
        fprintf(out, "   driver       %s\n", d->driver);
    fprintf(out, "   target       %s\n", d->target);
    fprintf(out, "   subgroup     %u (%u..%u)\n", d->subgroup_size, d->min_subgroup_size,
            d->max_subgroup_size);
    fprintf(out, "   workgroup    %u invocations, at most %u x %u x %u\n", d->max_workgroup_invocations,
            d->max_workgroup_size[0], d->max_workgroup_size[1], d->max_workgroup_size[2]);
    fprintf(out, "   grid         at most %u x %u x %u workgroups\n", d->max_workgroup_count[0],
            d->max_workgroup_count[1], d->max_workgroup_count[2]);
    fprintf(out, "   shared       %u bytes per workgroup\n", d->max_shared_bytes);
    if (vulkan)
        fprintf(out, "   arguments    %u bytes of push constants, %u storage buffers per kernel\n",
                d->max_push_bytes, d->max_storage_buffers);
    else
        fprintf(out, "   arguments    %u bytes of kernel arguments (buffers are 8-byte pointers)\n",
                d->max_push_bytes);
    fprintf(out, "   memory       %.1f GiB%s; one buffer binding up to %.1f MiB\n",
            (double)d->memory_bytes / (1u << 30), d->unified_memory ? ", shared with the host" : "",
            (double)d->max_buffer_bytes / (1u << 20));
    if (d->timestamp_valid_bits)
        fprintf(out, "   timestamps   %g ns per tick, %u valid bits\n", d->timestamp_period_ns,
                d->timestamp_valid_bits);
    else
        fprintf(out, "   timestamps   none\n");
    fprintf(out, "   features    %s\n", f[0] ? f : " (none)");
    fprintf(out, "   key          %s\n", d->key);
    fprintf(out, "   family       %s\n", d->family);
}

static json_t *uint3(const uint32_t v[3])
{
    return json_pack("[I, I, I]", (json_int_t)v[0], (json_int_t)v[1], (json_int_t)v[2]);
}

static json_t *device_json(const kcrt_device_info *d)
{
    char api[32];
    snprintf(api, sizeof(api), "%u.%u.%u", d->api_version >> 22 & 0x7f, d->api_version >> 12 & 0x3ff,
             d->api_version & 0xfff);
    json_t *o = json_pack("{s:i, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:s, s:s, s:I, s:I, s:I}", "index", d->index,
                          "name", d->name, "backend", d->backend, "type", d->type_name, "vendor", d->vendor,
                          "vendor_id", (json_int_t)d->vendor_id, "device_id", (json_int_t)d->device_id,
                          "driver_version", (json_int_t)d->driver_version, "driver", d->driver, "api_version", api,
                          "subgroup_size", (json_int_t)d->subgroup_size, "min_subgroup_size",
                          (json_int_t)d->min_subgroup_size, "max_subgroup_size", (json_int_t)d->max_subgroup_size);
    json_object_set_new(o, "max_workgroup_invocations", json_integer(d->max_workgroup_invocations));
    json_object_set_new(o, "max_workgroup_size", uint3(d->max_workgroup_size));
    json_object_set_new(o, "max_workgroup_count", uint3(d->max_workgroup_count));
    json_object_set_new(o, "max_shared_bytes", json_integer(d->max_shared_bytes));
    json_object_set_new(o, "max_push_bytes", json_integer(d->max_push_bytes));
    json_object_set_new(o, "max_storage_buffers", json_integer(d->max_storage_buffers));
    json_object_set_new(o, "max_buffer_bytes", json_integer((json_int_t)d->max_buffer_bytes));
    json_object_set_new(o, "memory_bytes", json_integer((json_int_t)d->memory_bytes));
    json_object_set_new(o, "unified_memory", json_boolean(d->unified_memory));
    json_object_set_new(o, "timestamp_period_ns", json_real(d->timestamp_period_ns));
    json_object_set_new(o, "timestamp_valid_bits", json_integer(d->timestamp_valid_bits));
    json_object_set_new(o, "features",
                        json_pack("{s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:b}", "float16", d->float16, "int64",
                                  d->int64, "storage16", d->storage16, "subgroups", d->subgroups,
                                  "subgroup_arithmetic", d->subgroup_arithmetic, "subgroup_shuffle",
                                  d->subgroup_shuffle, "subgroup_ballot", d->subgroup_ballot, "float_atomics",
                                  d->float_atomics));
    json_object_set_new(o, "key", json_string(d->key));
    json_object_set_new(o, "family", json_string(d->family));
    json_object_set_new(o, "target", json_string(d->target));
    return o;
}

int kc_cmd_devices(int argc, char **argv)
{
    static const kc_opt opts[] = {{"--json", false}, {"--backend", true}};
    kc_args a = {.cmd = "devices", .argc = argc, .argv = argv, .i = 1};
    bool json = false;
    const char *backend = NULL;
    for (int k; (k = kc_next_arg(&a, opts, 2)) != -2;) {
        if (k == -3)
            return KC_EXIT_USAGE;
        if (k == -1)
            return kc_usage_error("devices", "unexpected argument '%s'", a.positional);
        if (k == 0)
            json = true;
        else
            backend = a.value;
    }
    char err[1024];
    int n = 0;
    kcrt_status s = kcrt_devices(backend, NULL, 0, &n, err, sizeof(err));
    kcrt_device_info *list = s == KCRT_OK && n > 0 ? calloc((size_t)n, sizeof(*list)) : NULL;
    if (s == KCRT_OK && n > 0 &&
        (!list || (s = kcrt_devices(backend, list, n, &n, err, sizeof(err))) != KCRT_OK)) {
        free(list);
        list = NULL;
    }
    if (s != KCRT_OK) {
        fprintf(stderr, "kc devices: %s\n", err);
        return KC_EXIT_ERROR;
    }
    json_t *all = json ? json_array() : NULL;
    for (int i = 0; i < n; i++)
        if (json)
            json_array_append_new(all, device_json(&list[i]));
        else
            print_text(stdout, &list[i]);
    if (json) {
        json_dumpf(all, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
        printf("\n");
        json_decref(all);
    } else if (n == 0) {
        printf("no devices\n");
    }
    free(list);
    if (n == 0) {
        fprintf(stderr, "kc devices: no %s device found\n", backend ? backend : "HIP, CUDA or Vulkan");
        return KC_EXIT_ERROR;
    }
    return KC_EXIT_OK;
}
