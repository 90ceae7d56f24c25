/*
 * cmd_devices.c — kc devices: every device libkcrt can run on, with the
 * limits that matter for tuning, as text or JSON. The index printed is the
 * one --device, kcrt_options.device and KCRT_DEVICE take.
 */
#include "kc_tools.h"

#include <stdlib.h>
#include <string.h>

#include "kc/kcrt.h"

static void print_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

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

static void print_json(FILE *out, const kcrt_device_info *d, bool last)
{
    fprintf(out, "  {\"index\": %d, \"name\": ", d->index);
    print_json_string(out, d->name);
    fprintf(out, ", \"backend\": \"%s\", \"type\": \"%s\", \"vendor\": ", d->backend, d->type_name);
    print_json_string(out, d->vendor);
    fprintf(out, ", \"vendor_id\": %u, \"device_id\": %u, \"driver_version\": %u, \"driver\": ", d->vendor_id,
            d->device_id, d->driver_version);
    print_json_string(out, d->driver);
    fprintf(out,
            ",\n   \"api_version\": \"%u.%u.%u\", \"subgroup_size\": %u, \"min_subgroup_size\": %u, "
            "\"max_subgroup_size\": %u,\n",
            d->api_version >> 22 & 0x7f, d->api_version >> 12 & 0x3ff, d->api_version & 0xfff,
            d->subgroup_size, d->min_subgroup_size, d->max_subgroup_size);
    fprintf(out,
            "   \"max_workgroup_invocations\": %u, \"max_workgroup_size\": [%u, %u, %u], "
            "\"max_workgroup_count\": [%u, %u, %u],\n",
            d->max_workgroup_invocations, d->max_workgroup_size[0], d->max_workgroup_size[1],
            d->max_workgroup_size[2], d->max_workgroup_count[0], d->max_workgroup_count[1],
            d->max_workgroup_count[2]);
    fprintf(out,
            "   \"max_shared_bytes\": %u, \"max_push_bytes\": %u, \"max_storage_buffers\": %u, "
            "\"max_buffer_bytes\": %llu, \"memory_bytes\": %llu, \"unified_memory\": %s,\n",
            d->max_shared_bytes, d->max_push_bytes, d->max_storage_buffers,
            (unsigned long long)d->max_buffer_bytes, (unsigned long long)d->memory_bytes,
            d->unified_memory ? "true" : "false");
    fprintf(out, "   \"timestamp_period_ns\": %g, \"timestamp_valid_bits\": %u,\n", d->timestamp_period_ns,
            d->timestamp_valid_bits);
    fprintf(out,
            "   \"features\": {\"float16\": %s, \"int64\": %s, \"storage16\": %s, \"subgroups\": %s, "
            "\"subgroup_arithmetic\": %s, \"subgroup_shuffle\": %s, \"subgroup_ballot\": %s, "
            "\"float_atomics\": %s},\n",
            d->float16 ? "true" : "false", d->int64 ? "true" : "false", d->storage16 ? "true" : "false",
            d->subgroups ? "true" : "false", d->subgroup_arithmetic ? "true" : "false",
            d->subgroup_shuffle ? "true" : "false", d->subgroup_ballot ? "true" : "false",
            d->float_atomics ? "true" : "false");
    fprintf(out, "   \"key\": ");
    print_json_string(out, d->key);
    fprintf(out, ", \"family\": ");
    print_json_string(out, d->family);
    fprintf(out, ", \"target\": ");
    print_json_string(out, d->target);
    fprintf(out, "}%s\n", last ? "" : ",");
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
    if (json)
        printf("[\n");
    for (int i = 0; i < n; i++)
        if (json)
            print_json(stdout, &list[i], i == n - 1);
        else
            print_text(stdout, &list[i]);
    if (json)
        printf("]\n");
    else if (n == 0)
        printf("no devices\n");
    free(list);
    if (n == 0) {
        fprintf(stderr, "kc devices: no %s device found\n", backend ? backend : "HIP, CUDA or Vulkan");
        return KC_EXIT_ERROR;
    }
    return KC_EXIT_OK;
}
