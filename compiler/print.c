/*
 * print.c — kir as text, for `kc emit --emit kir` and the golden tests.
 *
 *   kernel saxpy(int n, float a, const float x[n] @0, float y[n] @1)
 *     variant WG=128,TM=4
 *     workgroup (128, 1, 1)
 *     grid (kc_cdiv(n, 512), 1, 1)
 *   {
 *     base = ((kc_group_id(0) * 512) + kc_local_id(0))
 *     if ((base < n)) {
 *       y[base] = ((a * x[base]) + y[base])
 *     }
 *   }
 *
 * Binary operations are fully parenthesised, so the text is unambiguous;
 * a variable whose name is not unique in its function prints as name.id.
 */
#include "ir_private.h"

#include <math.h>
#include <string.h>

typedef struct printer {
    kc_buf *out;
    const kc_ir_func *fn;
    kc_arena arena;
    kc_map seen; /* name -> count of variables with it */
} printer;

static void var_name(printer *P, const kc_ir_var *v)
{
    if (v->mem == KIR_MEM_CONST || (intptr_t)kc_map_get(&P->seen, v->name) <= 1)
        kc_buf_puts(P->out, v->name);
    else
        kc_buf_printf(P->out, "%s.%d", v->name, v->id);
}

static void root_name(printer *P, kc_ir_root r)
{
    if (r.var)
        var_name(P, r.var);
    else
        kc_buf_puts(P->out, r.param->name);
}

static const char *lane_name(int lane) { return (const char *[]){"x", "y", "z", "w"}[lane & 3]; }

static void print_const(kc_buf *b, const kc_ir_expr *e)
{
    if (kc_type_is_float(e->type)) {
        double v = e->fval;
        if (isnan(v))
            kc_buf_puts(b, "nan");
        else if (isinf(v))
            kc_buf_puts(b, v < 0 ? "-inf" : "inf");
        else {
            char s[64];
            snprintf(s, sizeof(s), "%.9g", v);
            kc_buf_puts(b, s);
            if (!strpbrk(s, ".e"))
                kc_buf_puts(b, ".0");
        }
        kc_buf_puts(b, e->type->scalar == KC_S_HALF ? "h" : "f");
        return;
    }
    int64_t v;
    kc_ir_const_value(e, &v);
    switch (e->type->scalar) {
    case KC_S_BOOL: kc_buf_puts(b, v ? "true" : "false"); break;
    case KC_S_INT: kc_buf_printf(b, "%lld", (long long)v); break;
    case KC_S_UINT: kc_buf_printf(b, "%lluu", (unsigned long long)v); break;
    case KC_S_LONG: kc_buf_printf(b, "%lldl", (long long)v); break;
    default: kc_buf_printf(b, "%lluul", (unsigned long long)e->ival); break;
    }
}

static void expr(printer *P, const kc_ir_expr *e);

static void args(printer *P, kc_ir_expr **a, int n)
{
    for (int i = 0; i < n; i++) {
        if (i)
            kc_buf_puts(P->out, ", ");
        expr(P, a[i]);
    }
}

static void expr(printer *P, const kc_ir_expr *e)
{
    kc_buf *b = P->out;
    if (!e) {
        kc_buf_puts(b, "<null>");
        return;
    }
    switch (e->kind) {
    case KIR_CONST: print_const(b, e); return;
    case KIR_TUNABLE: kc_buf_puts(b, e->name); return;
    case KIR_PARAM: kc_buf_puts(b, e->param->name); return;
    case KIR_VAR: var_name(P, e->var); return;
    case KIR_LOAD:
        root_name(P, e->root);
        kc_buf_putc(b, '[');
        expr(P, e->a);
        kc_buf_putc(b, ']');
        return;
    case KIR_UNARY: { /* -(-a), not --a */
        bool paren = e->a->kind == KIR_UNARY || (e->a->kind == KIR_CONST && !kc_type_is_float(e->a->type) &&
                                                  kc_scalar_is_signed(e->a->type->scalar) && (int64_t)e->a->ival < 0);
        kc_buf_puts(b, kc_op_text(e->op));
        kc_buf_puts(b, paren ? "(" : "");
        expr(P, e->a);
        kc_buf_puts(b, paren ? ")" : "");
        return;
    }
    case KIR_BINARY:
        kc_buf_putc(b, '(');
        expr(P, e->a);
        kc_buf_printf(b, " %s ", kc_op_text(e->op));
        expr(P, e->b);
        kc_buf_putc(b, ')');
        return;
    case KIR_SELECT:
        kc_buf_putc(b, '(');
        expr(P, e->a);
        kc_buf_puts(b, " ? ");
        expr(P, e->b);
        kc_buf_puts(b, " : ");
        expr(P, e->c);
        kc_buf_putc(b, ')');
        return;
    case KIR_CAST:
        kc_buf_printf(b, "(%s)", kc_type_name(&P->arena, e->type));
        expr(P, e->a);
        return;
    case KIR_LANE:
        expr(P, e->a);
        kc_buf_printf(b, ".%s", lane_name(e->lane));
        return;
    case KIR_VEC:
        kc_buf_printf(b, "%s(", kc_type_name(&P->arena, e->type));
        args(P, e->args, e->nargs);
        kc_buf_putc(b, ')');
        return;
    case KIR_BUILTIN:
        kc_buf_printf(b, "%s(", kc_builtins[e->builtin].name);
        args(P, e->args, e->nargs);
        kc_buf_putc(b, ')');
        return;
    }
}

void kc_ir_print_expr(kc_buf *out, const kc_ir_expr *e)
{
    printer P = {out, NULL, {0}, {0}};
    kc_arena_init(&P.arena);
    expr(&P, e);
    kc_arena_free(&P.arena);
}

static void indent(printer *P, int depth)
{
    for (int i = 0; i < depth; i++)
        kc_buf_puts(P->out, "  ");
}

static void block(printer *P, const kc_ir_block *b, int depth);

static void place(printer *P, const kc_ir_stmt *s)
{
    if (s->kind == KIR_ASSIGN) {
        var_name(P, s->var);
    } else {
        root_name(P, s->root);
        if (s->index) {
            kc_buf_putc(P->out, '[');
            expr(P, s->index);
            kc_buf_putc(P->out, ']');
        }
    }
    if (s->lane >= 0)
        kc_buf_printf(P->out, ".%s", lane_name(s->lane));
}

static void stmt(printer *P, const kc_ir_stmt *s, int depth)
{
    kc_buf *b = P->out;
    indent(P, depth);
    switch (s->kind) {
    case KIR_ASSIGN:
    case KIR_STORE:
        place(P, s);
        kc_buf_puts(b, " = ");
        expr(P, s->value);
        break;
    case KIR_IF:
        kc_buf_puts(b, "if (");
        expr(P, s->cond);
        kc_buf_puts(b, ") {\n");
        block(P, &s->then, depth + 1);
        indent(P, depth);
        kc_buf_putc(b, '}');
        if (s->els.len) {
            kc_buf_puts(b, " else {\n");
            block(P, &s->els, depth + 1);
            indent(P, depth);
            kc_buf_putc(b, '}');
        }
        break;
    case KIR_LOOP:
        if (s->init.len) {
            kc_buf_puts(b, "init {\n");
            block(P, &s->init, depth + 1);
            indent(P, depth);
            kc_buf_puts(b, "}\n");
            indent(P, depth);
        }
        kc_buf_puts(b, "loop");
        if (s->unroll)
            kc_buf_puts(b, " unroll");
        if (s->unroll_small)
            kc_buf_puts(b, " unroll_small");
        if (s->cond) {
            kc_buf_puts(b, " while (");
            expr(P, s->cond);
            kc_buf_putc(b, ')');
        }
        kc_buf_puts(b, " {\n");
        block(P, &s->body, depth + 1);
        indent(P, depth);
        kc_buf_putc(b, '}');
        if (s->step.len) {
            kc_buf_puts(b, " step {\n");
            block(P, &s->step, depth + 1);
            indent(P, depth);
            kc_buf_putc(b, '}');
        }
        if (s->post) {
            kc_buf_puts(b, " until !(");
            expr(P, s->post);
            kc_buf_putc(b, ')');
        }
        break;
    case KIR_SWITCH:
        kc_buf_puts(b, "switch (");
        expr(P, s->value);
        kc_buf_puts(b, ") {\n");
        for (int i = 0; i < s->ncases; i++) {
            const kc_ir_case *c = &s->cases[i];
            indent(P, depth);
            for (int k = 0; k < c->nvalues; k++) {
                kc_buf_puts(b, "case ");
                if (c->values)
                    expr(P, c->values[k]);
                else
                    kc_iexpr_write_infix(b, c->value_exprs[k]);
                kc_buf_puts(b, ": ");
            }
            if (c->is_default)
                kc_buf_puts(b, "default: ");
            kc_buf_puts(b, "{\n");
            block(P, &c->body, depth + 1);
            indent(P, depth);
            kc_buf_puts(b, "}\n");
        }
        indent(P, depth);
        kc_buf_putc(b, '}');
        break;
    case KIR_BREAK: kc_buf_puts(b, "break"); break;
    case KIR_CONTINUE: kc_buf_puts(b, "continue"); break;
    case KIR_RETURN:
        kc_buf_puts(b, "return");
        if (s->value) {
            kc_buf_putc(b, ' ');
            expr(P, s->value);
        }
        break;
    case KIR_BARRIER: kc_buf_puts(b, "barrier"); break;
    case KIR_ATOMIC:
        if (s->var) {
            var_name(P, s->var);
            kc_buf_puts(b, " = ");
        }
        kc_buf_printf(b, "%s(", kc_builtins[s->atomic].name);
        place(P, s);
        if (s->cmp) {
            kc_buf_puts(b, ", ");
            expr(P, s->cmp);
        }
        kc_buf_puts(b, ", ");
        expr(P, s->value);
        kc_buf_putc(b, ')');
        break;
    case KIR_CALL:
        if (s->var) {
            var_name(P, s->var);
            kc_buf_puts(b, " = ");
        }
        kc_buf_printf(b, "call %s(", s->func->name);
        for (int i = 0; i < s->nargs; i++) {
            if (i)
                kc_buf_puts(b, ", ");
            if (s->func->params[i]->is_buffer) {
                kc_buf_putc(b, '&');
                root_name(P, s->refs[i]);
                if (s->ref_offsets[i]) {
                    kc_buf_putc(b, '[');
                    expr(P, s->ref_offsets[i]);
                    kc_buf_putc(b, ']');
                }
            } else {
                expr(P, s->args[i]);
            }
        }
        kc_buf_putc(b, ')');
        break;
    }
    kc_buf_putc(b, '\n');
}

static void block(printer *P, const kc_ir_block *b, int depth)
{
    for (int i = 0; i < b->len; i++)
        stmt(P, b->stmts[i], depth);
}

static void count_names(printer *P, const kc_ir_func *f)
{
    for (int i = 0; i < f->nparams; i++) /* a variable named like a parameter gets its id */
        kc_map_put(&P->arena, &P->seen, f->params[i]->name, (void *)1);
    for (int i = 0; i < f->vars.len; i++) {
        const kc_ir_var *v = f->vars.items[i];
        intptr_t n = (intptr_t)kc_map_get(&P->seen, v->name);
        kc_map_put(&P->arena, &P->seen, v->name, (void *)(n + 1));
    }
}

static const char *mem_name(kc_ir_mem m)
{
    switch (m) {
    case KIR_MEM_SHARED: return "shared ";
    case KIR_MEM_CONST: return "const ";
    case KIR_MEM_REF: return "ref ";
    default: return "";
    }
}

static void var_decl(printer *P, const kc_ir_var *v)
{
    kc_buf *b = P->out;
    kc_buf_printf(b, "  var %s", mem_name(v->mem));
    var_name(P, v);
    kc_buf_printf(b, ": %s", kc_type_name(&P->arena, v->type));
    if (v->is_array) {
        kc_buf_putc(b, '[');
        if (v->len >= 0)
            kc_buf_printf(b, "%lld", (long long)v->len);
        else if (v->len_expr)
            kc_iexpr_write_infix(b, v->len_expr);
        kc_buf_putc(b, ']');
    }
    if (v->mem == KIR_MEM_CONST && v->init) {
        kc_buf_puts(b, " = {");
        for (int64_t i = 0; i < v->len && i < 64; i++) {
            kc_buf_puts(b, i ? ", " : "");
            expr(P, v->init[i]);
        }
        kc_buf_puts(b, v->len > 64 ? ", …}" : "}");
    }
    kc_buf_putc(b, '\n');
}

static void func(printer *P, const kc_ir_func *f, const kc_ir_module *m)
{
    kc_buf *b = P->out;
    P->fn = f;
    P->seen = (kc_map){0};
    count_names(P, f);
    kc_buf_printf(b, "%s %s(", f->is_kernel ? "kernel" : kc_type_name(&P->arena, f->ret), f->name);
    for (int i = 0; i < f->nparams; i++) {
        const kc_ir_param *p = f->params[i];
        kc_buf_printf(b, "%s%s%s %s", i ? ", " : "", p->readonly ? "const " : "", kc_type_name(&P->arena, p->type),
                      p->name);
        if (p->is_buffer) {
            kc_buf_putc(b, '[');
            if (p->extent)
                kc_iexpr_write_infix(b, p->extent);
            kc_buf_putc(b, ']');
            if (f->is_kernel)
                kc_buf_printf(b, " @%d", p->binding);
        }
    }
    kc_buf_puts(b, ")\n");
    if (f->is_kernel) {
        if (m->specialized && m->binding.n)
            kc_buf_printf(b, "  variant %s\n", kc_ir_binding_text(&P->arena, &m->binding));
        if (f->may_alias)
            kc_buf_puts(b, "  may_alias\n");
        kc_buf_puts(b, "  workgroup (");
        for (int i = 0; i < 3; i++) {
            if (i)
                kc_buf_puts(b, ", ");
            if (m->specialized)
                kc_buf_printf(b, "%lld", (long long)f->wg_size[i]);
            else
                kc_iexpr_write_infix(b, f->wg[i]);
        }
        kc_buf_puts(b, ")\n  grid (");
        for (int i = 0; i < 3; i++) {
            if (i)
                kc_buf_puts(b, ", ");
            kc_iexpr_write_infix(b, f->grid[i]);
        }
        kc_buf_puts(b, ")\n");
    }
    for (int i = 0; i < f->vars.len; i++) {
        const kc_ir_var *v = f->vars.items[i];
        if (v->is_array || v->mem != KIR_MEM_PRIVATE)
            var_decl(P, v);
    }
    kc_buf_puts(b, "{\n");
    block(P, &f->body, 1);
    kc_buf_puts(b, "}\n");
}

void kc_ir_print(kc_buf *out, const kc_ir_module *m)
{
    printer P = {out, NULL, {0}, {0}};
    kc_arena_init(&P.arena);
    for (int i = 0; i < m->consts.len; i++) {
        P.seen = (kc_map){0};
        var_decl(&P, m->consts.items[i]);
    }
    for (int i = 0; i < m->helpers.len; i++) {
        func(&P, m->helpers.items[i], m);
        kc_buf_putc(out, '\n');
    }
    func(&P, m->kernel, m);
    kc_arena_free(&P.arena);
}
