/*
 * targets.c — the backends kc can build for, chosen by name in this one
 * place. A target is a struct of function pointers (STYLE.md §3).
 */
#include "kc_build.h"
#include "kc_spirv.h"
#ifdef KC_HAVE_LLVM
#include "kc_llvm.h"
#endif

#include <stdlib.h>
#include <string.h>

void kc_variant_blob_free(kc_variant_blob *b)
{
    free(b->data);
    free(b->args);
    free(b->features);
    memset(b, 0, sizeof(*b));
}

/* Workgroup memory a module uses: the shared variables after specialisation. */
static uint32_t shared_bytes(const kc_ir_module *m)
{
    uint64_t n = 0;
    for (int i = 0; i < m->kernel->vars.len; i++) {
        const kc_ir_var *v = m->kernel->vars.items[i];
        if (v->mem != KIR_MEM_SHARED)
            continue;
        uint64_t elem = (uint64_t)kc_type_bytes(v->type);
        n += elem * (uint64_t)(v->is_array ? v->len : 1);
    }
    return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

static char *join_features(const kc_spv_layout *l)
{
    kc_buf b = {0};
    const struct {
        bool on;
        const char *name;
    } f[] = {{l->needs_float16, "float16"}, {l->needs_int64, "int64"}, {l->needs_storage16, "storage16"},
             {l->needs_subgroups, "subgroups"}, {l->needs_float_atomics, "float_atomics"}};
    for (size_t i = 0; i < KC_COUNT(f); i++)
        if (f[i].on)
            kc_buf_printf(&b, "%s%s", b.len ? "," : "", f[i].name);
    return kc_buf_take(&b);
}

static bool compile_spirv(const kc_target *t, const kc_target_options *opts, const kc_ir_module *m,
                          kc_variant_blob *out, kc_diag *diag)
{
    (void)t;
    (void)opts;
    kc_spv_options o;
    kc_spv_default_options(&o);
    kc_spv_module spv;
    if (!kc_spv_emit(m, &o, &spv, diag))
        return false;
    memset(out, 0, sizeof(*out));
    out->data = spv.words;
    out->size = spv.nwords * 4;
    spv.words = NULL;
    for (int i = 0; i < 3; i++)
        out->wg[i] = spv.layout.wg[i];
    kc_buf args = {0};
    const kc_ir_func *k = m->kernel;
    for (int i = 0; i < k->nparams; i++) {
        if (i)
            kc_buf_putc(&args, ';');
        if (k->params[i]->is_buffer)
            kc_buf_printf(&args, "@%d", k->params[i]->binding);
        else
            kc_buf_printf(&args, "%d:4", spv.layout.push_offset[i]);
    }
    out->args = kc_buf_take(&args);
    out->args_size = spv.layout.push_size;
    out->spilled = spv.layout.spilled;
    out->shared_bytes = shared_bytes(m);
    out->features = join_features(&spv.layout);
    kc_spv_module_free(&spv);
    return true;
}

#ifdef KC_HAVE_LLVM
static char *llvm_features(const kc_llvm_layout *l)
{
    kc_buf b = {0};
    const struct {
        bool on;
        const char *name;
    } f[] = {{l->needs_float16, "float16"}, {l->needs_int64, "int64"}, {l->needs_subgroups, "subgroups"},
             {l->needs_float_atomics, "float_atomics"}};
    for (size_t i = 0; i < KC_COUNT(f); i++)
        if (f[i].on)
            kc_buf_printf(&b, "%s%s", b.len ? "," : "", f[i].name);
    return kc_buf_take(&b);
}

/* AMDGPU code objects and PTX: every argument is "offset:size" in the
 * kernel-argument buffer (kc_llvm.h says how it is laid out). */
static bool compile_llvm(const kc_target *t, const kc_target_options *opts, const kc_ir_module *m,
                         kc_variant_blob *out, kc_diag *diag)
{
    kc_llvm_options o;
    kc_llvm_default_options(&o);
    o.target = t->name;
    if (opts && opts->amdgpu_cov)
        o.amdgpu_cov = opts->amdgpu_cov;
    kc_llvm_module lm;
    if (!kc_llvm_emit(m, &o, KC_LLVM_OUT_BINARY, &lm, diag))
        return false;
    memset(out, 0, sizeof(*out));
    out->data = lm.data;
    out->size = lm.size;
    lm.data = NULL;
    for (int i = 0; i < 3; i++)
        out->wg[i] = lm.layout.wg[i];
    kc_buf args = {0};
    for (int i = 0; i < lm.layout.nparams; i++)
        kc_buf_printf(&args, "%s%u:%u", i ? ";" : "", lm.layout.arg_offset[i], lm.layout.arg_size[i]);
    out->args = kc_buf_take(&args);
    out->args_size = lm.layout.args_size;
    out->shared_bytes = lm.layout.shared_bytes;
    out->features = llvm_features(&lm.layout);
    kc_llvm_module_free(&lm);
    return true;
}

#define AMD(name) {name, "hip", "all-amd", {.native_sqrt = true}, compile_llvm},
#define NVIDIA(name) {name, "cuda", "all-nvidia", {.native_sqrt = true}, compile_llvm},
#else
#define AMD(name)
#define NVIDIA(name)
#endif

/* Every target kc builds for, chosen here and nowhere else. */
static const kc_target targets[] = {
    {"spirv", "vulkan", NULL, {.native_sqrt = false}, compile_spirv},
    /* RDNA3, RDNA2 (wave32); CDNA2, CDNA3 and Vega 20 (wave64) */
    AMD("gfx1100") AMD("gfx1101") AMD("gfx1102") AMD("gfx1030") AMD("gfx1031") AMD("gfx1032")
    AMD("gfx90a") AMD("gfx942") AMD("gfx906")
    /* Turing to Hopper: what CUDA 13 still assembles */
    NVIDIA("sm_75") NVIDIA("sm_80") NVIDIA("sm_86") NVIDIA("sm_89") NVIDIA("sm_90")
};

const kc_target *kc_target_find(const char *name)
{
    for (size_t i = 0; i < KC_COUNT(targets); i++)
        if (strcmp(targets[i].name, name) == 0)
            return &targets[i];
    return NULL;
}

int kc_target_expand(const char *name, const kc_target **out, int max)
{
    const kc_target *t = kc_target_find(name);
    if (t) {
        if (max < 1)
            return -1;
        out[0] = t;
        return 1;
    }
    int n = 0;
    for (size_t i = 0; i < KC_COUNT(targets); i++)
        if (targets[i].group && strcmp(targets[i].group, name) == 0) {
            if (n == max)
                return -1;
            out[n++] = &targets[i];
        }
    return n ? n : -1;
}

const char *kc_target_names(void)
{
    static char names[512];
    if (!names[0]) {
        size_t at = 0;
        for (size_t i = 0; i < KC_COUNT(targets); i++)
            at += (size_t)snprintf(names + at, sizeof(names) - at, "%s%s", i ? " " : "", targets[i].name);
#ifdef KC_HAVE_LLVM
        snprintf(names + at, sizeof(names) - at, " all-amd all-nvidia");
#endif
    }
    return names;
}
