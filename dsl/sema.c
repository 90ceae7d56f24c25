/*
 * sema.c — semantic checks: names, types and every rule of DESIGN.md §2;
 * here the scopes, the functions and the program, with kc_sema (the parts:
 * sema_private.h).
 *
 * After sema every kc_expr has a type, every name its symbol, and every
 * implicit conversion is an explicit KC_E_CAST marked implicit. The rule for
 * conversions is C's usual arithmetic conversions, except that a
 * conversion that can lose information (float to int, float to half, long
 * to int, int to half) needs a cast, unless the value is a constant that
 * converts exactly (so `half h = 1.0f;` and `x * 2` are fine).
 *
 * Errors never stop the walk: an expression with an error gets the error
 * type, which silences messages that would only repeat the first.
 */
#include "sema_private.h"

#include <math.h>
#include <string.h>

/* ---- scopes --------------------------------------------------------------- */

void sema_push_scope(sema *S)
{
    scope *s = KC_NEW(&S->c->arena, scope);
    s->up = S->sc;
    S->sc = s;
}

void sema_pop_scope(sema *S) { S->sc = S->sc->up; }

void *sema_lookup(sema *S, const char *name, bool *is_global)
{
    for (scope *s = S->sc; s; s = s->up) {
        kc_sym *sym = kc_map_get(&s->names, name);
        if (sym) {
            *is_global = false;
            return sym;
        }
    }
    *is_global = true;
    return kc_map_get(&S->globals, name);
}

static bool reserved_name(sema *S, const char *name, kc_loc loc);

static bool from_builtin_source(sema *S, kc_loc loc)
{
    return loc.file >= 0 && loc.file < S->c->src.nfiles && S->c->src.files[loc.file]->builtin;
}

void sema_declare(sema *S, kc_sym *sym)
{
    if (reserved_name(S, sym->name, sym->loc))
        return;
    kc_sym *old = kc_map_get(&S->sc->names, sym->name);
    if (old) {
        ERR(S, sym->loc, "'%s' is already declared in this scope", sym->name);
        kc_note_at(&S->c->diag, old->loc, "the earlier declaration is here");
        return;
    }
    /* kc's own sources (<kc_math>, <kc.h>) are written without knowing the
     * kernel's tunables: their locals may share a tunable's name, which they
     * hide as any inner declaration does */
    kc_sym *g = kc_map_get(&S->globals, sym->name);
    if (g && g->kind == KC_SYM_TUNABLE && !from_builtin_source(S, sym->loc)) {
        ERR(S, sym->loc, "'%s' shadows the tunable of the same name", sym->name);
        FIX(S, "rename the %s", sym->kind == KC_SYM_PARAM ? "parameter" : "variable");
    }
    if (kc_builtin_lookup(sym->name) >= 0)
        ERR(S, sym->loc, "'%s' is the name of a built-in function", sym->name);
    kc_map_put(&S->c->arena, &S->sc->names, sym->name, sym);
}

/* ---- nodes ------------------------------------------------------------------ */

kc_expr *sema_mk(sema *S, kc_expr_kind kind, kc_loc loc, const kc_type *type)
{
    kc_expr *e = KC_NEW(&S->c->arena, kc_expr);
    e->kind = kind;
    e->loc = loc;
    e->type = type;
    e->builtin = -1;
    e->lane = -1;
    return e;
}

kc_expr *sema_mk_cast(sema *S, kc_expr *e, const kc_type *to)
{
    kc_expr *c = sema_mk(S, KC_E_CAST, e->loc, to);
    c->a = e;
    c->implicit = true;
    c->height = e->height + 1;
    return c;
}

/* ---- functions ------------------------------------------------------------------ */

static bool kernel_scalar_ok(const kc_type *t)
{
    return t->kind == KC_TY_SCALAR && kc_scalar_arg_bytes(t->scalar) > 0; /* kc_lang.h's scalar ABI */
}

static void check_param(sema *S, kc_func *f, kc_sym *p)
{
    if (!p->is_buffer) {
        if (!is_err(p->type) && p->type->scalar == KC_S_VOID)
            ERR(S, p->loc, "parameter '%s' cannot have type void", p->name);
        else if (f->is_kernel && !is_err(p->type) && !kernel_scalar_ok(p->type)) {
            ERR(S, p->loc, "kernel parameter '%s' cannot be '%s'", p->name, tname(S, p->type));
            FIX(S, "a kernel's scalars are int, uint, float, half or bool; pass vectors in a buffer");
        }
        sema_declare(S, p);
        return;
    }
    /* Buffers (kernels) and array references (helpers); the extents of a
     * kernel buffer may name the integer parameters declared before it. */
    p->storage = f->is_kernel ? KC_STORE_BUFFER : KC_STORE_REF;
    p->type = sema_declarator_type(S, p, f->is_kernel ? IX_PARAMS : IX_TUNABLES, true, 0);
    if (p->dim_exprs.len == 0 && !is_err(p->type)) /* float *x */
        p->type = kc_type_array(&S->c->arena, p->type, NULL);
    if (f->is_kernel && !is_err(p->type) && p->type->kind == KC_TY_ARRAY && !p->type->len && p->dim_exprs.len == 0)
        kc_vec_push(&S->c->arena, &p->dims, NULL);
    sema_declare(S, p);
}

/* KC_SPECIALIZE(a, b, ...): each a scalar integer or bool parameter of the
 * kernel, named once, at most KC_MAX_SPECIALIZE of them. A pipeline may fix
 * such a parameter's value when it is made (compiler/spirv/spirv.c), so it
 * suits a mode switch or a size that is a model's constant. */
static void check_specialize(sema *S, kc_func *f)
{
    if (f->spec.len > KC_MAX_SPECIALIZE) {
        const kc_expr *e = f->spec.items[KC_MAX_SPECIALIZE];
        ERR(S, e->loc, "KC_SPECIALIZE names %d scalars, and a kernel may specialise at most %d", f->spec.len,
            KC_MAX_SPECIALIZE);
        FIX(S, "keep the scalars that take a few values in practice; the others stay plain launch arguments");
    }
    for (int i = 0; i < f->spec.len; i++) {
        const kc_expr *e = f->spec.items[i];
        if (e->type && is_err(e->type))
            continue; /* the parser said what is wrong */
        if (e->kind != KC_E_NAME) {
            ERR(S, e->loc, "KC_SPECIALIZE takes parameter names");
            continue;
        }
        kc_sym *p = NULL;
        for (int j = 0; j < f->params.len && !p; j++)
            if (!strcmp(((kc_sym *)f->params.items[j])->name, e->name))
                p = f->params.items[j];
        if (!p) {
            ERR(S, e->loc, "'%s' in KC_SPECIALIZE is not a parameter of kernel '%s'", e->name, f->name);
            continue;
        }
        bool integer = !is_err(p->type) && p->type->kind == KC_TY_SCALAR &&
                       (p->type->scalar == KC_S_INT || p->type->scalar == KC_S_UINT || p->type->scalar == KC_S_BOOL);
        if (p->is_buffer || !integer) {
            ERR(S, e->loc, "KC_SPECIALIZE takes int, uint or bool scalars, and '%s' is not one", e->name);
            FIX(S, "name a mode switch such as an op code, or a size a model fixes; floats stay launch arguments");
        } else if (p->specialize) {
            ERR(S, e->loc, "'%s' is named twice in KC_SPECIALIZE", e->name);
        }
        p->specialize = true;
    }
}

static void check_attrs(sema *S, kc_func *f)
{
    if (!f->is_kernel) {
        if (f->wg[0] || f->grid[0])
            ERR(S, f->wg[0] ? f->wg_loc : f->grid_loc, "only kernels take KC_WORKGROUP and KC_GRID");
        if (f->may_alias)
            ERR(S, f->loc, "KC_MAY_ALIAS marks kernels, and '%s' is not one", f->name);
        if (f->texel)
            ERR(S, f->texel_loc, "KC_TEXEL_READS marks kernels, and '%s' is not one", f->name);
        if (f->spec.len)
            ERR(S, f->spec_loc, "KC_SPECIALIZE marks kernels, and '%s' is not one", f->name);
        return;
    }
    check_specialize(S, f);
    if (f->texel) {
        f->texel = sema_check_value(S, f->texel);
        f->texel_cond = sema_to_iexpr(S, f->texel, IX_TUNABLES, "KC_TEXEL_READS");
    }
    if (!f->wg[0]) {
        ERR(S, f->loc, "kernel '%s' needs KC_WORKGROUP(x, y, z)", f->name);
        FIX(S, "add KC_WORKGROUP(64, 1, 1) before the return type, or a tunable size");
    }
    if (!f->grid[0]) {
        ERR(S, f->loc, "kernel '%s' needs KC_GRID(x, y, z): how many workgroups to launch", f->name);
        FIX(S, "for n items and a workgroup of WG: KC_GRID(kc_cdiv(n, WG), 1, 1)");
    }
    for (int i = 0; i < 3; i++) {
        if (f->wg[i]) {
            f->wg[i] = sema_check_value(S, f->wg[i]);
            f->wg_size[i] = sema_to_iexpr(S, f->wg[i], IX_TUNABLES, "KC_WORKGROUP");
            int64_t v;
            if (f->wg_size[i] && sema_iexpr_value(f->wg_size[i], &v) && (v < 1 || v > 1024))
                ERR(S, f->wg[i]->loc, "a workgroup size must be between 1 and 1024, not %lld", (long long)v);
        }
        if (f->grid[i]) {
            f->grid[i] = sema_check(S, f->grid[i]); /* to_iexpr says what a buffer name is doing here */
            f->grid_size[i] = sema_to_iexpr(S, f->grid[i], IX_GRID, "KC_GRID");
        }
    }
}

static void check_func(sema *S, kc_func *f)
{
    S->fn = f;
    S->loops = S->switches = 0;
    S->block = S->switch_body = NULL;
    sema_push_scope(S);
    if (!is_err(f->ret) && f->ret->kind == KC_TY_SCALAR && f->is_kernel && f->ret->scalar != KC_S_VOID)
        ERR(S, f->loc, "kernel '%s' must return void", f->name);
    for (int i = 0; i < f->params.len; i++)
        check_param(S, f, f->params.items[i]);
    check_attrs(S, f);
    sema_check_stmt(S, f->body);
    if (!f->is_kernel && f->ret->scalar != KC_S_VOID && !is_err(f->ret) && sema_falls_through(f->body)) {
        ERR(S, f->loc, "'%s' can reach its end without returning a value", f->name);
        FIX(S, "end every path with 'return …;'");
    }
    sema_pop_scope(S);
    S->fn = NULL;
}

static bool same_signature(const kc_func *a, const kc_func *b)
{
    if (a->params.len != b->params.len || a->is_kernel != b->is_kernel || !kc_type_equal(a->ret, b->ret))
        return false;
    for (int i = 0; i < a->params.len; i++) {
        const kc_sym *p = a->params.items[i], *q = b->params.items[i];
        if (p->is_buffer != q->is_buffer || !kc_type_equal(p->type, q->type))
            return false;
    }
    return true;
}

/* Names starting with __kc_ belong to kc's own math library. */
static bool reserved_name(sema *S, const char *name, kc_loc loc)
{
    if (strncmp(name, "__kc_", 5) != 0 || (loc.file >= 0 && S->c->src.files[loc.file]->builtin))
        return false;
    ERR(S, loc, "names starting with '__kc_' are reserved for kc");
    return true;
}

static kc_sym *global_sym(sema *S, kc_sym_kind kind, const char *name, kc_loc loc)
{
    if (reserved_name(S, name, loc))
        return NULL;
    kc_sym *old = kc_map_get(&S->globals, name);
    if (old) {
        ERR(S, loc, "'%s' is already defined", name);
        kc_note_at(&S->c->diag, old->loc, "the earlier definition is here");
        return NULL;
    }
    if (kc_builtin_lookup(name) >= 0 || sema_ctor_type(name)) {
        ERR(S, loc, "'%s' is the name of a built-in function", name);
        return NULL;
    }
    kc_sym *sym = KC_NEW(&S->c->arena, kc_sym);
    sym->kind = kind;
    sym->name = name;
    sym->loc = loc;
    kc_map_put(&S->c->arena, &S->globals, name, sym);
    return sym;
}

/* Merges prototypes with definitions; returns the functions to check. */
static void declare_funcs(sema *S, kc_program *p)
{
    kc_vec defined = {0};
    for (int i = 0; i < p->funcs.len; i++) {
        kc_func *f = p->funcs.items[i];
        kc_sym *old = kc_map_get(&S->globals, f->name);
        if (old && old->kind == KC_SYM_FUNC) {
            kc_func *g = old->func;
            if (g->defined && f->defined) {
                ERR(S, f->loc, "'%s' is defined twice", f->name);
                kc_note_at(&S->c->diag, g->loc, "the first definition is here");
                continue;
            }
            if (!same_signature(f, g)) {
                ERR(S, f->loc, "'%s' does not match its earlier declaration", f->name);
                kc_note_at(&S->c->diag, g->loc, "declared here");
            }
            if (f->defined) {
                old->func = f;
                for (int k = 0; k < defined.len; k++)
                    if (defined.items[k] == g)
                        defined.items[k] = f;
                g->body = NULL;
                f->is_static |= g->is_static;
            }
            continue;
        }
        kc_sym *sym = global_sym(S, KC_SYM_FUNC, f->name, f->loc);
        if (!sym)
            continue;
        sym->func = f;
        kc_vec_push(&S->c->arena, &defined, f);
    }
    p->funcs = defined;
}

static void check_tunables(sema *S, kc_program *p)
{
    for (int i = 0; i < p->tunables.len; i++) {
        kc_tunable *t = p->tunables.items[i];
        kc_sym *sym = global_sym(S, KC_SYM_TUNABLE, t->name, t->loc);
        if (sym)
            sym->tunable = t, sym->type = T(KC_S_INT);
        if (t->exprs.len < 2) {
            ERR(S, t->loc, "KC_TUNE(%s, …) needs a default and the values to try", t->name);
            FIX(S, "KC_TUNE(%s, 64, 32, 64, 128): the default first, then every candidate", t->name);
            continue;
        }
        if (t->exprs.len - 1 > KC_MAX_TUNABLE_VALUES) {
            ERR(S, t->loc, "tunable '%s' has %d values; the limit is %d", t->name, t->exprs.len - 1, KC_MAX_TUNABLE_VALUES);
            continue;
        }
        t->values = kc_arena_alloc(&S->c->arena, sizeof(int64_t) * (size_t)t->exprs.len);
        for (int k = 0; k < t->exprs.len; k++) {
            kc_expr *e = t->exprs.items[k] = sema_check_value(S, t->exprs.items[k]);
            cval v = sema_fold(e);
            if (is_err(e->type))
                continue;
            if (!v.ok || v.is_float || !sema_const_fits(v, T(KC_S_INT))) {
                ERR(S, e->loc, "a value of tunable '%s' must be an integer constant", t->name);
                continue;
            }
            if (k == 0) {
                t->def = v.i;
                continue;
            }
            bool dup = false;
            for (int j = 0; j < t->nvalues; j++)
                dup |= t->values[j] == v.i;
            if (dup)
                kc_warn_at(&S->c->diag, e->loc, "%lld is listed twice for '%s'", (long long)v.i, t->name);
            else
                t->values[t->nvalues++] = v.i;
        }
        bool found = false;
        for (int j = 0; j < t->nvalues; j++)
            found |= t->values[j] == t->def;
        if (!found && t->nvalues) {
            ERR(S, ((kc_expr *)t->exprs.items[0])->loc, "the default of '%s' (%lld) is not one of its values",
                t->name, (long long)t->def);
            FIX(S, "add %lld to the list of values", (long long)t->def);
        }
    }
}

static void check_consts(sema *S, kc_program *p)
{
    for (int i = 0; i < p->consts.len; i++) {
        kc_sym *c = p->consts.items[i];
        int count = c->init && c->init->kind == KC_E_INIT ? c->init->args.len : 0;
        c->type = sema_declarator_type(S, c, IX_TUNABLES, false, count);
        if (!is_err(c->type) && c->type->kind == KC_TY_ARRAY) {
            int64_t n;
            if (!sema_iexpr_value(c->type->len, &n))
                ERR(S, c->loc, "the extent of constant array '%s' must be a constant, not a tunable", c->name);
            else
                sema_check_init_list(S, c, c->type, c->init, true);
        } else if (!is_err(c->type)) {
            c->init = sema_check_scalar_init(S, c, c->type, c->init, true);
            cval v = sema_fold(c->init);
            c->const_ival = v.i;
            c->const_fval = v.is_float ? v.f : (double)v.i;
        }
        kc_sym *sym = global_sym(S, KC_SYM_CONST, c->name, c->loc);
        if (sym)
            kc_map_put(&S->c->arena, &S->globals, c->name, c);
    }
}

static bool tunable_default(void *user, const char *name, int64_t *v)
{
    const kc_program *p = user;
    for (int i = 0; i < p->tunables.len; i++) {
        const kc_tunable *t = p->tunables.items[i];
        if (strcmp(t->name, name) == 0) {
            *v = t->def;
            return true;
        }
    }
    return false;
}

static void check_requires(sema *S, kc_program *p)
{
    for (int i = 0; i < p->requires.len; i++) {
        kc_require *r = p->requires.items[i];
        r->expr = sema_check_value(S, r->expr);
        if (is_err(r->expr->type))
            continue;
        r->cond = sema_to_iexpr(S, r->expr, IX_TUNABLES, "KC_REQUIRE");
        int64_t v;
        if (r->cond && sema_iexpr_value(r->cond, &v) && !v)
            ERR(S, r->loc, "this KC_REQUIRE is always false");
        else if (r->cond && kc_iexpr_eval(r->cond, tunable_default, p, &v, NULL, 0) && !v) {
            /* the runtime falls back to the default variant: it must be valid */
            ERR(S, r->loc, "the tunables' defaults break this KC_REQUIRE");
            FIX(S, "pick defaults that satisfy it");
        }
    }
}

/* Recursion is refused, once per cycle, at the call that closes it; the
 * walk also folds each callee's tunables and feature flags into its
 * callers, so a kernel knows its whole space. */
static void report_cycle(sema *S, const kc_vec *stack, const kc_func *f, const kc_expr *call)
{
    int from = stack->len - 1;
    while (from > 0 && stack->items[from] != f)
        from--;
    kc_buf chain = {0};
    for (int i = from; i < stack->len; i++)
        kc_buf_printf(&chain, "'%s' calls ", ((const kc_func *)stack->items[i])->name);
    kc_buf_printf(&chain, "'%s'", f->name);
    ERR(S, call->loc, "recursion is not in the language: %s", chain.data);
    FIX(S, "rewrite it as a loop");
    kc_buf_free(&chain);
}

static void visit_calls(sema *S, kc_func *f, kc_map *state, kc_vec *stack)
{
    kc_map_put(&S->c->arena, state, f->name, (void *)1);
    kc_vec_push(&S->c->arena, stack, f);
    for (int i = 0; i < f->callees.len; i++) {
        kc_func *g = f->callees.items[i];
        const kc_expr *call = f->call_sites.items[i];
        if (!g->defined) {
            ERR(S, call->loc, "'%s' is declared but never defined", g->name);
            g->defined = true; /* once */
            continue;
        }
        intptr_t st = (intptr_t)kc_map_get(state, g->name);
        if (st == 1) {
            report_cycle(S, stack, g, call);
            continue;
        }
        if (st == 0)
            visit_calls(S, g, state, stack);
        S->fn = f;
        for (int k = 0; k < g->tunables.len; k++)
            sema_use_tunable(S, g->tunables.items[k]);
        S->fn = NULL;
        f->uses_subgroups |= g->uses_subgroups;
        f->uses_atomics |= g->uses_atomics;
        f->uses_half |= g->uses_half;
        f->uses_long |= g->uses_long;
    }
    stack->len--;
    kc_map_put(&S->c->arena, state, f->name, (void *)2);
}

/* A safety net: after sema without errors, every expression has a type.
 * A node without one means a check returned early without a message,
 * which must never let a broken program through. */
static bool typed_expr(const kc_expr *e, kc_loc *where)
{
    if (!e)
        return true;
    if (!e->type || e->type->kind == KC_TY_ERROR) {
        *where = e->loc;
        return false;
    }
    if (!typed_expr(e->a, where) || !typed_expr(e->b, where) || !typed_expr(e->c, where))
        return false;
    for (int i = 0; i < e->args.len; i++)
        if (!typed_expr(e->args.items[i], where))
            return false;
    return true;
}

static bool typed_stmt(const kc_stmt *s, kc_loc *where)
{
    if (!s)
        return true;
    if (!typed_expr(s->expr, where) || !typed_expr(s->step, where) || !typed_stmt(s->init, where) ||
        !typed_stmt(s->then, where) || !typed_stmt(s->els, where))
        return false;
    if (s->kind == KC_S_CASE && !typed_expr(s->case_expr, where))
        return false;
    for (int i = 0; i < s->body.len; i++) {
        if (s->kind == KC_S_DECL) {
            const kc_sym *sym = s->body.items[i];
            if (sym->storage != KC_STORE_SHARED && !typed_expr(sym->init, where))
                return false;
        } else if (!typed_stmt(s->body.items[i], where)) {
            return false;
        }
    }
    return true;
}

void kc_sema(kc_ctx *c, kc_program *p)
{
    sema S = {0};
    S.c = c;
    S.prog = p;
    check_tunables(&S, p);
    check_consts(&S, p);
    declare_funcs(&S, p);
    check_requires(&S, p);
    for (int i = 0; i < p->funcs.len; i++) {
        kc_func *f = p->funcs.items[i];
        if (f->body)
            check_func(&S, f);
        else if (f->is_kernel)
            ERR(&S, f->loc, "kernel '%s' is declared but has no body", f->name);
        if (kc_diag_too_many(&c->diag))
            return;
    }
    kc_map state = {0};
    kc_vec stack = {0};
    for (int i = 0; i < p->funcs.len; i++)
        if (!kc_map_get(&state, ((kc_func *)p->funcs.items[i])->name))
            visit_calls(&S, p->funcs.items[i], &state, &stack);
    if (!c->diag.nerrors)
        sema_check_barriers(&S, p);
    for (int i = 0; i < p->funcs.len; i++) { /* a space kc can list, build and tune */
        const kc_func *f = p->funcs.items[i];
        double size = 1;
        for (int k = 0; f->is_kernel && k < f->tunables.len; k++)
            size *= ((const kc_tunable *)f->tunables.items[k])->nvalues;
        if (size > KC_MAX_SPACE)
            ERR(&S, f->loc, "kernel '%s' has a search space of %.0f variants; the limit is %d", f->name, size,
                KC_MAX_SPACE);
    }
    for (int i = 0; !c->diag.nerrors && i < p->funcs.len; i++) {
        kc_loc where;
        const kc_func *f = p->funcs.items[i];
        if (f->body && !typed_stmt(f->body, &where)) {
            KC_BROKEN_INVARIANT("sema types every expression");
            kc_error_at(&c->diag, where, "internal error: kc could not check this expression; please report it");
        }
    }
}
