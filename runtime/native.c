/*
 * native.c — what the HIP and CUDA backends share: their library, the
 * module of a variant, PCI ids (rt_native.h; running work is
 * native_exec.c's).
 */
#include "rt_native.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "kc_platform.h"

/* ---- the library ------------------------------------------------------------------------------ */

void *rt_native_open(const char *env, const char *const *names, const char *what, const char *install,
                     const char **path, char *err, size_t errlen)
{
    const char *chosen = getenv(env);
    const char *one[2] = {chosen, NULL};
    const char *const *list = chosen && *chosen ? one : names;
    char tried[512] = "";
    char why[256] = "not found";
    for (int i = 0; list[i]; i++) {
        void *so = kc_lib_open(list[i], why, sizeof(why));
        if (so) {
            *path = list[i];
            return so;
        }
        size_t at = strlen(tried);
        rt_printf(tried + at, sizeof(tried) - at, "%s%s", at ? ", " : "", list[i]);
    }
    if (list == one)
        rt_printf(err, errlen, "%s is not available: cannot load %s (%s); %s=%s names it", what, tried, why,
                  env, chosen);
    else
        rt_printf(err, errlen, "%s is not available: cannot load %s (the last: %s); %s, or set %s", what,
                  tried, why, install, env);
    return NULL;
}

/* The first of `names` that the library has, written to the function
 * pointer at fn. */
static bool find_symbol(void *so, const char *const *names, void *fn)
{
    for (int i = 0; names[i]; i++) {
        void *sym = kc_lib_symbol(so, names[i]);
        if (sym) {
            /* POSIX lets a function pointer come from dlsym's void *; the copy keeps -Wpedantic quiet */
            memcpy(fn, &sym, sizeof(sym));
            return true;
        }
    }
    return false;
}

bool rt_native_bind(void *so, const char *path, const char *what, const rt_native_symbol *syms, size_t nsyms,
                    void *table, char *err, size_t errlen)
{
    for (size_t i = 0; i < nsyms; i++)
        if (!find_symbol(so, syms[i].names, (char *)table + syms[i].offset)) {
            const char *const *n = syms[i].names;
            while (n[1])
                n++; /* the last name: the one the API reference gives today */
            rt_printf(err, errlen, "%s is not %s: it has no %s", path, what, *n);
            return false;
        }
    return true;
}

/* ---- modules and arguments ----------------------------------------------------------------------- */

kcrt_status rt_native_module_new(kcrt_context *ctx, const rt_module_desc *m, rt_native_module **out)
{
    rt_native_module *mod = calloc(1, sizeof(*mod));
    int np = m->nparams;
    if (mod) {
        mod->slots = calloc((size_t)(np ? np : 1), sizeof(rt_slot));
        mod->params = calloc((size_t)(np ? np : 1), sizeof(void *));
        mod->block = calloc(1, m->args_size < 8 ? 8 : m->args_size);
    }
    if (!mod || !mod->slots || !mod->params || !mod->block) {
        rt_native_module_free(mod);
        return rt_fail(ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    }
    for (int i = 0; i < np; i++) {
        assert(!m->slots[i].is_binding); /* kernel-argument targets have no bindings */
        assert(m->slots[i].offset + m->slots[i].size <= m->args_size);
        mod->slots[i] = m->slots[i];
        mod->params[i] = mod->block + m->slots[i].offset;
    }
    mod->nparams = np;
    mod->args_size = m->args_size;
    memcpy(mod->wg, m->wg, sizeof(mod->wg));
    rt_printf(mod->name, sizeof(mod->name), "%s[%s]", m->kernel, m->variant);
    *out = mod;
    return KCRT_OK;
}

void rt_native_module_free(rt_native_module *m)
{
    if (!m)
        return;
    free(m->slots);
    free(m->params);
    free(m->block);
    free(m);
}

/* ---- describing a device --------------------------------------------------------------------------- */

bool rt_read_line(const char *path, char *out, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fgets(out, (int)len, f) != NULL;
    fclose(f);
    if (ok)
        out[strcspn(out, "\r\n")] = 0;
    return ok && out[0];
}

uint32_t rt_pci_device_id(const char *bus_id)
{
    char path[128], line[32], id[32];
    size_t n = strspn(bus_id, "0123456789abcdefABCDEF:.");
    if (n == 0 || n >= sizeof(id) || bus_id[n])
        return 0;
    for (size_t i = 0; i <= n; i++) /* sysfs names are lower case */
        id[i] = (char)(bus_id[i] >= 'A' && bus_id[i] <= 'F' ? bus_id[i] - 'A' + 'a' : bus_id[i]);
    rt_printf(path, sizeof(path), "/sys/bus/pci/devices/%s/device", id);
    if (!rt_read_line(path, line, sizeof(line)))
        return 0;
    return (uint32_t)strtoul(line, NULL, 16);
}

void rt_native_key(kcrt_device_info *info)
{
    rt_printf(info->key, sizeof(info->key), "%s:%04x:%04x:%s:%s", info->backend, info->vendor_id,
              info->device_id, info->name, info->driver);
}

void rt_native_features(kcrt_device_info *info)
{
    info->float16 = info->int64 = info->storage16 = true;
    info->subgroups = info->subgroup_arithmetic = info->subgroup_shuffle = info->subgroup_ballot = true;
    info->float_atomics = true;
}
