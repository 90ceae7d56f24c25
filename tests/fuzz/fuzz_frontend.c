/*
 * fuzz_frontend.c — the libFuzzer target for kc's front end and kir.
 *
 * Every input is parsed and checked; when it is a valid program, each
 * kernel's default variant also goes through the whole kir pipeline. The
 * fuzzer looks for crashes, hangs, leaks and sanitizer reports; any
 * diagnostic is a fine answer.
 */
#include <stddef.h>
#include <stdint.h>

#include "kc_dsl.h"
#include "kc_ir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kc_ctx c;
    kc_ctx_init(&c, NULL);
    kc_program *p = kc_dsl_parse_text(&c, "fuzz.kc", (const char *)data, size);
    for (int i = 0; p && i < p->funcs.len; i++) {
        const kc_func *f = p->funcs.items[i];
        if (!f->is_kernel)
            continue;
        kc_ir_binding b = kc_ir_default_binding(&c.arena, p, f);
        kc_ir_module *m = kc_ir_compile(&c.arena, &c.diag, p, f, &b, NULL);
        if (m) {
            kc_buf out = {0};
            kc_ir_print(&out, m);
            kc_buf_free(&out);
        }
    }
    kc_ctx_free(&c);
    return 0;
}
