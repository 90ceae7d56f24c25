/*
 * cmd_emit.c — `kc emit FILE [--emit kir|spvasm|spv|llvm|asm|hsaco] [-t TARGET]
 * [--kernel K] [--variant V] [--after PASS] [--amdgpu-cov 4|5] [--checked] [-o OUT]`.
 */
#include "kc_build.h"
#include "kc_dsl.h"
#include "kc_ir.h"
#include "kc_spirv.h"
#include "kc_tools.h"
#ifdef KC_HAVE_LLVM
#include "kc_llvm.h"
#endif

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct emit_opts {
    const char *file, *what, *kernel, *variant, *after, *out, *target;
    int amdgpu_cov;
    bool checked; /* --checked: with kc build --checked's bounds checks */
    kc_includes includes;
} emit_opts;

static bool is(const char *a, const char *b)
{
    return strcmp(a, b) == 0;
}

/* What goes through LLVM: llvm, asm, hsaco. */
static bool wants_llvm(const emit_opts *o)
{
    return is(o->what, "llvm") || is(o->what, "asm") || is(o->what, "hsaco");
}

static int check_target(emit_opts *o)
{
    if (!wants_llvm(o)) {
        if (o->target && !is(o->target, "spirv") && !is(o->what, "kir"))
            return kc_usage_error("emit", "--emit %s is SPIR-V; -t %s needs --emit llvm, asm or hsaco",
                                  o->what, o->target);
        return KC_EXIT_OK;
    }
#ifndef KC_HAVE_LLVM
    return kc_usage_error("emit", "this kc was built without the LLVM backend (KC_WITH_LLVM=OFF)");
#else
    if (!o->target)
        return kc_usage_error("emit", "--emit %s needs a target: -t gfx1100, -t sm_90, …", o->what);
    const kc_target *t = kc_target_find(o->target);
    if (!t || is(o->target, "spirv"))
        return kc_usage_error("emit", "'%s' is not an LLVM target (kc knows: %s)", o->target,
                              kc_target_names());
    if (is(o->what, "hsaco") && strncmp(o->target, "gfx", 3) != 0)
        return kc_usage_error("emit", "--emit hsaco is for AMDGPU targets; for %s, --emit asm is the PTX",
                              o->target);
    return KC_EXIT_OK;
#endif
}

static int parse(int argc, char **argv, emit_opts *o)
{
    static const kc_opt opts[] = {{"--emit", true},   {"--kernel", true},    {"--variant", true},
                                  {"--after", true},  {"-o", true},          {"-t", true},
                                  {"--target", true}, {"--amdgpu-cov", true}, {"-I", true},
                                  {"--checked", false}};
    kc_args a = {"emit", argc, argv, 1, NULL, NULL};
    int r;
    o->what = "kir";
    while ((r = kc_next_arg(&a, opts, (int)KC_COUNT(opts))) != -2) {
        switch (r) {
        case -3: return KC_EXIT_USAGE;
        case -1:
            if (o->file)
                return kc_usage_error("emit", "one file at a time");
            o->file = a.positional;
            break;
        case 0: o->what = a.value; break;
        case 1: o->kernel = a.value; break;
        case 2: o->variant = a.value; break;
        case 3: o->after = a.value; break;
        case 4: o->out = a.value; break;
        case 5:
        case 6: o->target = a.value; break;
        case 7:
            if (!kc_parse_amdgpu_cov(a.value, &o->amdgpu_cov))
                return kc_usage_error("emit", "--amdgpu-cov takes 4 or 5, not '%s'", a.value);
            break;
        case 8:
            if (kc_includes_add(&o->includes, "emit", a.value) != KC_EXIT_OK)
                return KC_EXIT_USAGE;
            break;
        case 9: o->checked = true; break;
        }
    }
    if (!o->file)
        return kc_usage_error("emit", "no file given");
    static const char *const known[] = {"kir", "spvasm", "spv", "llvm", "asm", "hsaco"};
    bool ok = false;
    for (size_t i = 0; i < KC_COUNT(known); i++)
        ok |= is(o->what, known[i]);
    if (!ok)
        return kc_usage_error("emit", "cannot emit '%s' (kc knows: kir, spvasm, spv, llvm, asm, hsaco)",
                              o->what);
    if (!is(o->what, "kir") && o->after)
        return kc_usage_error("emit", "--after applies to --emit kir");
    if (o->after) {
        bool pass = false;
        for (int i = 0; kc_ir_pass_names[i]; i++)
            pass |= is(kc_ir_pass_names[i], o->after);
        if (!pass)
            return kc_usage_error("emit", "no pass '%s' (passes: lower specialize inline fold unroll dce, and bounds with --checked)",
                                  o->after);
    }
    return check_target(o);
}

static int emit_spirv(kc_ctx *c, const kc_ir_module *m, const emit_opts *o, kc_buf *out)
{
    kc_spv_options opts;
    kc_spv_default_options(&opts);
    kc_spv_module spv;
    if (!kc_spv_emit(m, &opts, &spv, &c->diag))
        return KC_EXIT_ERROR;
    int status = KC_EXIT_OK;
    if (is(o->what, "spv")) {
        kc_buf_append(out, spv.words, spv.nwords * 4);
    } else {
        char err[256];
        char *text = kc_spv_disassemble(spv.words, spv.nwords, err, sizeof(err));
        if (text)
            kc_buf_puts(out, text);
        else
            fprintf(stderr, "kc emit: %s\n", err), status = KC_EXIT_ERROR;
        free(text);
    }
    kc_spv_module_free(&spv);
    return status;
}

static int emit_llvm(kc_ctx *c, const kc_ir_module *m, const emit_opts *o, kc_buf *out)
{
#ifdef KC_HAVE_LLVM
    kc_llvm_options opts;
    kc_llvm_default_options(&opts);
    opts.target = o->target;
    if (o->amdgpu_cov)
        opts.amdgpu_cov = o->amdgpu_cov;
    kc_llvm_output what = is(o->what, "llvm")  ? KC_LLVM_OUT_IR
                          : is(o->what, "asm") ? KC_LLVM_OUT_ASM
                                               : KC_LLVM_OUT_BINARY;
    kc_llvm_module lm;
    if (!kc_llvm_emit(m, &opts, what, &lm, &c->diag))
        return KC_EXIT_ERROR;
    kc_buf_append(out, lm.data, lm.size);
    kc_llvm_module_free(&lm);
    return KC_EXIT_OK;
#else
    (void)c, (void)m, (void)o, (void)out;
    return KC_EXIT_ERROR;
#endif
}

static int emit_kernel(kc_ctx *c, const kc_program *p, const kc_func *k, const emit_opts *o, kc_buf *out)
{
    kc_ir_binding b;
    char err[256];
    if (o->variant) {
        if (!kc_ir_parse_binding(&c->arena, p, k, o->variant, &b, err, sizeof(err))) {
            fprintf(stderr, "kc emit: %s\n", err);
            return KC_EXIT_ERROR;
        }
    } else {
        b = kc_ir_default_binding(&c->arena, p, k);
    }
    const kc_target *t = o->target ? kc_target_find(o->target) : NULL; /* what it does natively */
    kc_ir_options ir = t ? t->ir : (kc_ir_options){0};
    ir.bounds_checks = o->checked;
    kc_ir_module *m = kc_ir_compile_with(&c->arena, &c->diag, p, k, &b, o->after, t || o->checked ? &ir : NULL);
    if (!m)
        return KC_EXIT_ERROR;
    if (is(o->what, "kir")) {
        kc_ir_print(out, m);
        return KC_EXIT_OK;
    }
    return wants_llvm(o) ? emit_llvm(c, m, o, out) : emit_spirv(c, m, o, out);
}

static int write_out(const emit_opts *o, const kc_buf *out)
{
    if (!o->out) {
        fwrite(out->data ? out->data : "", 1, out->len, stdout);
        return KC_EXIT_OK;
    }
    if (kc_write_file_atomic(o->out, out->data ? out->data : "", out->len) != 0) {
        fprintf(stderr, "kc emit: cannot write '%s': %s\n", o->out, strerror(errno));
        return KC_EXIT_ERROR;
    }
    return KC_EXIT_OK;
}

/* A code object holds one kernel here: several would be glued together. */
static int count_kernels(const kc_program *p, const emit_opts *o)
{
    int n = 0;
    for (int i = 0; i < p->funcs.len; i++) {
        const kc_func *f = p->funcs.items[i];
        n += f->is_kernel && (!o->kernel || is(o->kernel, f->name));
    }
    return n;
}

int kc_cmd_emit(int argc, char **argv)
{
    emit_opts o = {0};
    int status = parse(argc, argv, &o);
    if (status != KC_EXIT_OK)
        return status;
    kc_ctx c;
    kc_ctx_init(&c, stderr);
    if (!kc_includes_apply(&o.includes, &c, "emit")) {
        kc_ctx_free(&c);
        return KC_EXIT_ERROR;
    }
    kc_program *p = kc_dsl_parse(&c, o.file);
    if (p && is(o.what, "hsaco") && count_kernels(p, &o) > 1) {
        fprintf(stderr, "kc emit: %s has %d kernels; --emit %s writes one: choose it with --kernel\n", o.file,
                count_kernels(p, &o), o.what);
        kc_ctx_free(&c);
        return KC_EXIT_ERROR;
    }
    kc_buf out = {0};
    int shown = 0;
    for (int i = 0; p && i < p->funcs.len && status == KC_EXIT_OK; i++) {
        const kc_func *f = p->funcs.items[i];
        if (!f->is_kernel || (o.kernel && !is(o.kernel, f->name)))
            continue;
        if (shown++ && !is(o.what, "hsaco"))
            kc_buf_putc(&out, '\n');
        status = emit_kernel(&c, p, f, &o, &out);
    }
    if (!p)
        status = KC_EXIT_ERROR;
    else if (!shown && status == KC_EXIT_OK) {
        fprintf(stderr, "kc emit: %s has no kernel%s%s\n", o.file, o.kernel ? " " : "s",
                o.kernel ? o.kernel : "");
        status = KC_EXIT_ERROR;
    }
    if (status == KC_EXIT_OK)
        status = write_out(&o, &out);
    kc_buf_free(&out);
    kc_ctx_free(&c);
    return status;
}
