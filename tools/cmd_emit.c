/*
 * cmd_emit.c — `kc emit FILE --emit kir [--variant V] [--after PASS]`.
 */
#include "kc_dsl.h"
#include "kc_ir.h"
#include "kc_spirv.h"
#include "kc_tools.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct emit_opts {
    const char *file, *what, *kernel, *variant, *after, *out;
} emit_opts;

static int parse(int argc, char **argv, emit_opts *o)
{
    static const kc_opt opts[] = {{"--emit", true}, {"--kernel", true}, {"--variant", true},
                                  {"--after", true}, {"-o", true}};
    kc_args a = {"emit", argc, argv, 1, NULL, NULL};
    int r;
    o->what = "kir";
    while ((r = kc_next_arg(&a, opts, 5)) != -2) {
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
        }
    }
    if (!o->file)
        return kc_usage_error("emit", "no file given");
    if (strcmp(o->what, "kir") != 0 && strcmp(o->what, "spvasm") != 0 && strcmp(o->what, "spv") != 0)
        return kc_usage_error("emit", "cannot emit '%s' (kc knows: kir, spvasm, spv)", o->what);
    if (strcmp(o->what, "kir") != 0 && o->after)
        return kc_usage_error("emit", "--after applies to --emit kir");
    if (o->after) {
        bool known = false;
        for (int i = 0; kc_ir_pass_names[i]; i++)
            known |= strcmp(kc_ir_pass_names[i], o->after) == 0;
        if (!known)
            return kc_usage_error("emit", "no pass '%s' (passes: lower specialize inline fold unroll dce)", o->after);
    }
    return KC_EXIT_OK;
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
    kc_ir_module *m = kc_ir_compile(&c->arena, &c->diag, p, k, &b, o->after);
    if (!m)
        return KC_EXIT_ERROR;
    if (strcmp(o->what, "kir") == 0) {
        kc_ir_print(out, m);
        return KC_EXIT_OK;
    }
    kc_spv_options opts;
    kc_spv_default_options(&opts);
    kc_spv_module spv;
    if (!kc_spv_emit(m, &opts, &spv, &c->diag))
        return KC_EXIT_ERROR;
    int status = KC_EXIT_OK;
    if (strcmp(o->what, "spv") == 0) {
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

int kc_cmd_emit(int argc, char **argv)
{
    emit_opts o = {0};
    int status = parse(argc, argv, &o);
    if (status != KC_EXIT_OK)
        return status;
    kc_ctx c;
    kc_ctx_init(&c, stderr);
    kc_program *p = kc_dsl_parse(&c, o.file);
    kc_buf out = {0};
    int shown = 0;
    for (int i = 0; p && i < p->funcs.len && status == KC_EXIT_OK; i++) {
        const kc_func *f = p->funcs.items[i];
        if (!f->is_kernel || (o.kernel && strcmp(o.kernel, f->name) != 0))
            continue;
        if (shown++)
            kc_buf_putc(&out, '\n');
        status = emit_kernel(&c, p, f, &o, &out);
    }
    if (!p)
        status = KC_EXIT_ERROR;
    else if (!shown && status == KC_EXIT_OK) {
        fprintf(stderr, "kc emit: %s has no kernel%s%s\n", o.file, o.kernel ? " " : "s", o.kernel ? o.kernel : "");
        status = KC_EXIT_ERROR;
    }
    if (status == KC_EXIT_OK) {
        if (o.out) {
            if (kc_write_file_atomic(o.out, out.data ? out.data : "", out.len) != 0) {
                fprintf(stderr, "kc emit: cannot write '%s': %s\n", o.out, strerror(errno));
                status = KC_EXIT_ERROR;
            }
        } else {
            fwrite(out.data ? out.data : "", 1, out.len, stdout);
        }
    }
    kc_buf_free(&out);
    kc_ctx_free(&c);
    return status;
}
