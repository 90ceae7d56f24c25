/*
 * specialize.c — binds tunables to the values of one variant: every
 * KIR_TUNABLE becomes a constant, array extents and the workgroup size
 * become numbers, case values become constants (checked for duplicates,
 * which only now can be known).
 */
#include "ir_private.h"

#include <assert.h>
#include <string.h>

#define KC_IR_MAX_PRIVATE_ELEMS (1 << 16)

typedef struct spec {
    kc_ir_module *m;
    const kc_ir_binding *b;
    bool ok;
} spec;

static kc_ir_expr *bind(void *user, kc_ir_expr *e)
{
    spec *S = user;
    if (e->kind != KIR_TUNABLE)
        return e;
    int64_t v = 0;
    bool bound = kc_ir_binding_lookup((void *)S->b, e->name, &v) ||
                 kc_ir_binding_lookup((void *)&S->m->defaults, e->name, &v);
    assert(bound && "lowering makes KIR_TUNABLE only of a declared tunable");
    (void)bound;
    return kc_ir_const_int(S->m->arena, e->type, (uint64_t)v);
}

/* Substitutes tunables in an integer expression, leaving other names. */
static kc_iexpr *bind_iexpr(spec *S, const kc_iexpr *e)
{
    if (!e)
        return NULL;
    kc_arena *a = S->m->arena;
    if (e->op == KC_IX_NAME) {
        int64_t v;
        if (kc_ir_binding_lookup((void *)S->b, e->name, &v))
            return kc_iexpr_const(a, v);
        return kc_iexpr_name(a, e->name);
    }
    if (e->op == KC_IX_CONST)
        return kc_iexpr_const(a, e->value);
    kc_iexpr *r = kc_iexpr_make(a, e->op, bind_iexpr(S, e->a), bind_iexpr(S, e->b), bind_iexpr(S, e->c));
    int64_t v;
    if (kc_iexpr_eval(r, NULL, NULL, &v, NULL, 0))
        return kc_iexpr_const(a, v);
    return r;
}

static bool eval_now(spec *S, const kc_iexpr *e, int64_t *v, kc_loc loc, const char *what)
{
    char err[128];
    if (!kc_iexpr_eval(e, kc_ir_binding_lookup, (void *)S->b, v, err, sizeof(err))) {
        kc_error_at(S->m->diag, loc, "%s: %s in variant %s", what, err,
                    kc_ir_binding_text(S->m->arena, S->b));
        S->ok = false;
        return false;
    }
    return true;
}

static void spec_switch(void *user, kc_ir_stmt *s)
{
    spec *S = user;
    if (s->kind != KIR_SWITCH)
        return;
    for (int i = 0; i < s->ncases; i++) {
        kc_ir_case *c = &s->cases[i];
        c->values = kc_arena_alloc(S->m->arena, sizeof(kc_ir_expr *) * (size_t)(c->nvalues + 1));
        for (int k = 0; k < c->nvalues; k++) {
            int64_t v = 0;
            eval_now(S, c->value_exprs[k], &v, s->loc, "a case value");
            c->values[k] = kc_ir_const_int(S->m->arena, s->value->type, (uint64_t)v);
            for (int j = 0; j <= i; j++)
                for (int l = 0; l < (j == i ? k : s->cases[j].nvalues); l++)
                    if (s->cases[j].values[l]->ival == c->values[k]->ival) {
                        kc_error_at(S->m->diag, s->loc, "duplicate case value %lld in variant %s", (long long)v,
                                    kc_ir_binding_text(S->m->arena, S->b));
                        S->ok = false;
                    }
        }
    }
}

static void spec_vars(spec *S, kc_ir_func *f)
{
    for (int i = 0; i < f->vars.len; i++) {
        kc_ir_var *v = f->vars.items[i];
        if (!v->is_array || !v->len_expr)
            continue;
        if (!eval_now(S, v->len_expr, &v->len, v->loc, kc_arena_printf(S->m->arena, "the extent of '%s'", v->name)))
            continue;
        if (v->len <= 0) {
            kc_error_at(S->m->diag, v->loc, "the extent of '%s' is %lld in variant %s; it must be positive",
                        v->name, (long long)v->len, kc_ir_binding_text(S->m->arena, S->b));
            S->ok = false;
        } else if (v->mem == KIR_MEM_PRIVATE && v->len > KC_IR_MAX_PRIVATE_ELEMS) {
            kc_error_at(S->m->diag, v->loc, "private array '%s' has %lld elements in variant %s; the limit is %d",
                        v->name, (long long)v->len, kc_ir_binding_text(S->m->arena, S->b), KC_IR_MAX_PRIVATE_ELEMS);
            S->ok = false;
        }
    }
}

static void spec_func(spec *S, kc_ir_func *f)
{
    kc_ir_map_exprs(&f->body, bind, S);
    kc_ir_walk(&f->body, spec_switch, S);
    spec_vars(S, f);
    for (int i = 0; i < f->nparams; i++) {
        kc_ir_param *p = f->params[i];
        p->extent = bind_iexpr(S, p->extent);
        kc_vec dims = {0};
        for (int d = 0; d < p->dims.len; d++)
            kc_vec_push(S->m->arena, &dims, bind_iexpr(S, p->dims.items[d]));
        p->dims = dims;
    }
    if (!f->is_kernel)
        return;
    for (int i = 0; i < 3; i++) {
        if (eval_now(S, f->wg[i], &f->wg_size[i], f->loc, "the workgroup size") && f->wg_size[i] < 1) {
            kc_error_at(S->m->diag, f->loc, "the workgroup size is %lld in variant %s", (long long)f->wg_size[i],
                        kc_ir_binding_text(S->m->arena, S->b));
            S->ok = false;
        }
        f->grid[i] = bind_iexpr(S, f->grid[i]);
    }
    int64_t texel = 0;
    f->texel_reads = f->texel && eval_now(S, f->texel, &texel, f->loc, "KC_TEXEL_READS") && texel != 0;
}

bool kc_ir_specialize(kc_ir_module *m, const kc_ir_binding *b)
{
    spec S = {m, b, true};
    m->binding = *b;
    spec_func(&S, m->kernel);
    for (int i = 0; i < m->helpers.len; i++)
        spec_func(&S, m->helpers.items[i]);
    m->specialized = true;
    return S.ok;
}
