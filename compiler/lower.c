/*
 * lower.c — from the checked AST to kir.
 *
 * rv() lowers an expression to a pure kir expression, appending to the
 * current block whatever statements its side effects need, in C's order.
 * A place (an lvalue) is lowered once, so x[i++] += 1 increments i once.
 * && || and ?: stay expressions only when their right side cannot fault;
 * otherwise they become ifs, so `i < n && x[i] > 0` never reads x[n].
 */
#include "ir_private.h"

#include "kc_dsl.h"

#include <string.h>

typedef struct lower {
    kc_arena *a;
    kc_diag *diag;
    const kc_program *prog;
    kc_ir_module *m;
    kc_ir_func *fn;
    const kc_func *ast;
    kc_ir_var **locals;       /* by kc_sym index */
    void **param_map;         /* by parameter index: kc_ir_param* or kc_ir_var* */
    bool *param_is_var;
    kc_map funcs;             /* name -> kc_ir_func* */
    kc_map consts;            /* name -> kc_ir_var* (constant arrays) */
    const kc_expr *compound_lhs; /* a op= b: the node of a inside b */
    kc_ir_expr *compound_value;
    bool failed;
    bool exact; /* lowering kc's math library or a kc_no_contract() argument: float arithmetic is kc_ir_expr.exact */
    kc_ir_options opts;
} lower;

typedef struct place {
    bool is_var;            /* a scalar or vector variable */
    kc_ir_var *var;
    kc_ir_root root;        /* otherwise an element */
    kc_ir_expr *index;
    int lane;
    const kc_type *type;
} place;

static kc_ir_func *lower_func(lower *L, const kc_func *f);
static kc_ir_var *const_var(lower *L, const kc_sym *c);
static kc_ir_expr *rv(lower *L, kc_ir_block *b, const kc_expr *e, bool want);
static void lower_stmt(lower *L, kc_ir_block *b, const kc_stmt *s);

static const kc_type *INT(void) { return kc_type_scalar(KC_S_INT); }

/* ---- small builders ------------------------------------------------------- */

static kc_ir_expr *icon(lower *L, int64_t v) { return kc_ir_const_int(L->a, INT(), (uint64_t)v); }

static kc_ir_expr *binop(lower *L, kc_op op, kc_ir_expr *x, kc_ir_expr *y, const kc_type *t)
{
    kc_ir_expr *e = kc_ir_new_expr(L->a, KIR_BINARY, t);
    e->op = op;
    e->a = x;
    e->b = y;
    e->exact = L->exact && kc_type_is_float(t);
    return e;
}

static kc_ir_expr *cast(lower *L, kc_ir_expr *x, const kc_type *t)
{
    if (kc_type_equal(x->type, t))
        return x;
    kc_ir_expr *e = kc_ir_new_expr(L->a, KIR_CAST, t);
    e->a = x;
    return e;
}

static kc_ir_var *temp(lower *L, const kc_type *t, kc_loc loc)
{
    return kc_ir_new_var(L->a, L->fn, "tmp", t, loc);
}

static void assign(lower *L, kc_ir_block *b, kc_ir_var *v, int lane, kc_ir_expr *value, kc_loc loc)
{
    kc_ir_stmt *s = kc_ir_new_stmt(L->a, KIR_ASSIGN, loc);
    s->var = v;
    s->lane = lane;
    s->value = value;
    kc_ir_push(L->a, b, s);
}

/* Keeps a value in a fresh temporary, so it is evaluated exactly here. */
static kc_ir_expr *save(lower *L, kc_ir_block *b, kc_ir_expr *value, kc_loc loc)
{
    if (value->kind == KIR_CONST || value->kind == KIR_PARAM || value->kind == KIR_TUNABLE)
        return value;
    kc_ir_var *t = temp(L, value->type, loc);
    assign(L, b, t, -1, value, loc);
    return kc_ir_var_ref(L->a, t);
}

/* An integer expression of the source (extents, grid) as kir. */
static kc_ir_expr *ix(lower *L, const kc_iexpr *e)
{
    switch (e->op) {
    case KC_IX_CONST: return icon(L, e->value);
    case KC_IX_NAME: {
        for (int i = 0; i < L->prog->tunables.len; i++) {
            const kc_tunable *t = L->prog->tunables.items[i];
            if (strcmp(t->name, e->name) == 0) {
                kc_ir_expr *r = kc_ir_new_expr(L->a, KIR_TUNABLE, INT());
                r->name = t->name;
                return r;
            }
        }
        for (int i = 0; i < L->fn->nparams; i++) {
            kc_ir_param *p = L->fn->params[i];
            if (strcmp(p->name, e->name) == 0) {
                kc_ir_expr *r = kc_ir_new_expr(L->a, KIR_PARAM, p->type);
                r->param = p;
                return cast(L, r, INT());
            }
        }
        KC_BROKEN_INVARIANT("every name in an extent is a tunable or a scalar parameter");
        kc_error_at(L->diag, L->fn->loc, "internal error: '%s' in an extent has no value", e->name);
        L->failed = true;
        return icon(L, 1);
    }
    default: break;
    }
    const kc_type *b = kc_type_scalar(KC_S_BOOL);
    if (e->op == KC_IX_SELECT) {
        kc_ir_expr *r = kc_ir_new_expr(L->a, KIR_SELECT, INT());
        r->a = cast(L, ix(L, e->a), b), r->b = ix(L, e->b), r->c = ix(L, e->c);
        return r;
    }
    if (e->op == KC_IX_MIN || e->op == KC_IX_MAX || e->op == KC_IX_CDIV) {
        kc_ir_expr *r = kc_ir_new_expr(L->a, KIR_BUILTIN, INT());
        r->builtin = e->op == KC_IX_MIN ? KC_B_MIN : e->op == KC_IX_MAX ? KC_B_MAX : KC_B_CDIV;
        r->nargs = 2;
        r->args = kc_arena_alloc(L->a, sizeof(kc_ir_expr *) * 2);
        r->args[0] = ix(L, e->a);
        r->args[1] = ix(L, e->b);
        return r;
    }
    kc_op op = kc_op_of_iexpr(e->op);
    if (kc_iexpr_arity(e->op) == 1) {
        kc_ir_expr *r = kc_ir_new_expr(L->a, KIR_UNARY, op == KC_OP_NOT ? b : INT());
        r->op = op;
        r->a = op == KC_OP_NOT ? cast(L, ix(L, e->a), b) : ix(L, e->a);
        return cast(L, r, INT());
    }
    bool logical = op == KC_OP_LAND || op == KC_OP_LOR;
    bool compare = op >= KC_OP_LT && op <= KC_OP_NE;
    kc_ir_expr *x = ix(L, e->a), *y = ix(L, e->b);
    if (logical)
        x = cast(L, x, b), y = cast(L, y, b);
    return cast(L, binop(L, op, x, y, logical || compare ? b : INT()), INT());
}

/* ---- places --------------------------------------------------------------- */

/* The number of elements an array type holds per step of its outermost
 * index: the product of the inner extents. */
static kc_ir_expr *stride(lower *L, const kc_type *t)
{
    kc_ir_expr *s = NULL;
    for (const kc_type *u = t->elem; u->kind == KC_TY_ARRAY; u = u->elem)
        s = s ? binop(L, KC_OP_MUL, s, ix(L, u->len), INT()) : ix(L, u->len);
    return s;
}

/* Resolves a name to the root of the array it denotes. */
static bool name_root(lower *L, const kc_sym *sym, kc_ir_root *root)
{
    root->var = NULL;
    root->param = NULL;
    if (sym->kind == KC_SYM_LOCAL) {
        root->var = L->locals[sym->index];
    } else if (sym->kind == KC_SYM_PARAM) {
        if (L->param_is_var[sym->index])
            root->var = L->param_map[sym->index];
        else
            root->param = L->param_map[sym->index];
    } else if (sym->kind == KC_SYM_CONST) {
        root->var = const_var(L, sym);
    }
    return root->var || root->param;
}

/* Lowers a chain of indexing a[i][j]… into (root, flat index); t is set to
 * the type left after the indices given (an array if fewer than all). */
static bool index_chain(lower *L, kc_ir_block *b, const kc_expr *e, kc_ir_root *root, kc_ir_expr **flat,
                        const kc_type **t)
{
    if (e->kind == KC_E_NAME) {
        *t = e->sym->type;
        *flat = NULL;
        return name_root(L, e->sym, root);
    }
    if (e->kind != KC_E_INDEX)
        return false;
    if (!index_chain(L, b, e->a, root, flat, t))
        return false;
    kc_ir_expr *i = cast(L, rv(L, b, e->b, true), INT());
    kc_ir_expr *s = stride(L, *t);
    kc_ir_expr *scaled = s ? binop(L, KC_OP_MUL, i, s, INT()) : i;
    *flat = *flat ? binop(L, KC_OP_ADD, *flat, scaled, INT()) : scaled;
    *t = (*t)->elem;
    return true;
}

static place lower_place(lower *L, kc_ir_block *b, const kc_expr *e)
{
    place p = {0};
    p.lane = -1;
    p.type = e->type;
    if (e->kind == KC_E_MEMBER) {
        p = lower_place(L, b, e->a);
        p.lane = e->lane;
        p.type = e->type;
        return p;
    }
    if (e->kind == KC_E_NAME && e->sym->type->kind != KC_TY_ARRAY) {
        kc_ir_root r;
        if (name_root(L, e->sym, &r) && r.var) {
            p.is_var = true;
            p.var = r.var;
            return p;
        }
    }
    const kc_type *t;
    kc_ir_expr *flat;
    if (!index_chain(L, b, e, &p.root, &flat, &t) || !flat) {
        KC_BROKEN_INVARIANT("sema accepts only places lowering can index");
        kc_error_at(L->diag, e->loc, "internal error: cannot lower this place");
        L->failed = true;
        p.is_var = true;
        p.var = temp(L, e->type, e->loc);
        return p;
    }
    p.index = flat;
    return p;
}

static kc_ir_expr *read_place(lower *L, const place *p)
{
    kc_ir_expr *e;
    if (p->is_var) {
        e = kc_ir_var_ref(L->a, p->var);
    } else {
        e = kc_ir_new_expr(L->a, KIR_LOAD, p->root.var ? p->root.var->type : p->root.param->type);
        e->root = p->root;
        e->a = p->index;
    }
    if (p->lane >= 0) {
        kc_ir_expr *l = kc_ir_new_expr(L->a, KIR_LANE, p->type);
        l->a = e;
        l->lane = p->lane;
        e = l;
    }
    return e;
}

static void write_place(lower *L, kc_ir_block *b, const place *p, kc_ir_expr *value, kc_loc loc)
{
    if (p->is_var) {
        assign(L, b, p->var, p->lane, value, loc);
        return;
    }
    kc_ir_stmt *s = kc_ir_new_stmt(L->a, KIR_STORE, loc);
    s->root = p->root;
    s->index = p->index;
    s->lane = p->lane;
    s->value = value;
    kc_ir_push(L->a, b, s);
}

/* ---- expressions ------------------------------------------------------------- */

static kc_ir_expr *lower_const_name(lower *L, const kc_sym *sym)
{
    if (kc_type_is_float(sym->type))
        return kc_ir_const_float(L->a, sym->type, sym->const_fval);
    return kc_ir_const_int(L->a, sym->type, (uint64_t)sym->const_ival);
}

static kc_ir_expr *lower_name(lower *L, const kc_expr *e)
{
    const kc_sym *sym = e->sym;
    switch (sym->kind) {
    case KC_SYM_TUNABLE: {
        kc_ir_expr *r = kc_ir_new_expr(L->a, KIR_TUNABLE, INT());
        r->name = sym->name;
        return r;
    }
    case KC_SYM_CONST: return lower_const_name(L, sym);
    case KC_SYM_PARAM:
        if (!L->param_is_var[sym->index]) {
            kc_ir_expr *r = kc_ir_new_expr(L->a, KIR_PARAM, e->type);
            r->param = L->param_map[sym->index];
            return r;
        }
        return kc_ir_var_ref(L->a, L->param_map[sym->index]);
    case KC_SYM_LOCAL: return kc_ir_var_ref(L->a, L->locals[sym->index]);
    default: break;
    }
    KC_BROKEN_INVARIANT("sema resolves every name to something readable");
    kc_error_at(L->diag, e->loc, "internal error: '%s' cannot be read here", sym->name);
    L->failed = true;
    return icon(L, 0);
}

/* a && b, a || b: as an expression when b is safe, else with an if. */
static kc_ir_expr *lower_logical(lower *L, kc_ir_block *b, const kc_expr *e)
{
    kc_ir_expr *x = rv(L, b, e->a, true);
    kc_ir_block rhs = {0};
    kc_ir_expr *y = rv(L, &rhs, e->b, true);
    if (rhs.len == 0 && !kc_ir_expr_may_fault(y))
        return binop(L, e->op, x, y, e->type);
    kc_ir_var *t = temp(L, e->type, e->loc);
    assign(L, b, t, -1, x, e->loc);
    kc_ir_stmt *s = kc_ir_new_stmt(L->a, KIR_IF, e->loc);
    kc_ir_expr *test = kc_ir_var_ref(L->a, t);
    if (e->op == KC_OP_LOR) {
        kc_ir_expr *n = kc_ir_new_expr(L->a, KIR_UNARY, e->type);
        n->op = KC_OP_NOT;
        n->a = test;
        test = n;
    }
    s->cond = test;
    s->then = rhs;
    assign(L, &s->then, t, -1, y, e->loc);
    kc_ir_push(L->a, b, s);
    return kc_ir_var_ref(L->a, t);
}

static kc_ir_expr *lower_cond(lower *L, kc_ir_block *b, const kc_expr *e)
{
    kc_ir_expr *c = rv(L, b, e->a, true);
    kc_ir_block bt = {0}, bf = {0};
    kc_ir_expr *x = rv(L, &bt, e->b, true), *y = rv(L, &bf, e->c, true);
    if (!bt.len && !bf.len && !kc_ir_expr_may_fault(x) && !kc_ir_expr_may_fault(y)) {
        kc_ir_expr *r = kc_ir_new_expr(L->a, KIR_SELECT, e->type);
        r->a = c, r->b = x, r->c = y;
        return r;
    }
    kc_ir_var *t = temp(L, e->type, e->loc);
    kc_ir_stmt *s = kc_ir_new_stmt(L->a, KIR_IF, e->loc);
    s->cond = c;
    s->then = bt;
    s->els = bf;
    assign(L, &s->then, t, -1, x, e->loc);
    assign(L, &s->els, t, -1, y, e->loc);
    kc_ir_push(L->a, b, s);
    return kc_ir_var_ref(L->a, t);
}

static kc_ir_expr *lower_assign(lower *L, kc_ir_block *b, const kc_expr *e, bool want)
{
    place p = lower_place(L, b, e->a);
    kc_ir_expr *value;
    if (e->has_op) {
        const kc_expr *saved_lhs = L->compound_lhs;
        kc_ir_expr *saved_value = L->compound_value;
        L->compound_lhs = e->a;
        L->compound_value = read_place(L, &p);
        value = rv(L, b, e->b, true);
        L->compound_lhs = saved_lhs;
        L->compound_value = saved_value;
    } else {
        value = rv(L, b, e->b, true);
    }
    if (want)
        value = save(L, b, value, e->loc);
    write_place(L, b, &p, value, e->loc);
    return value;
}

static kc_ir_expr *one_of(lower *L, const kc_type *t)
{
    kc_ir_expr *one = kc_type_is_float(t) ? kc_ir_const_float(L->a, kc_type_scalar(t->scalar), 1.0)
                                          : kc_ir_const_int(L->a, kc_type_scalar(t->scalar), 1);
    if (t->lanes == 1)
        return one;
    kc_ir_expr *v = kc_ir_new_expr(L->a, KIR_VEC, t);
    v->nargs = 1;
    v->args = kc_arena_alloc(L->a, sizeof(kc_ir_expr *));
    v->args[0] = one;
    return v;
}

static kc_ir_expr *lower_incdec(lower *L, kc_ir_block *b, const kc_expr *e, bool want)
{
    place p = lower_place(L, b, e->a);
    kc_ir_expr *old = read_place(L, &p);
    if (want && e->is_post)
        old = save(L, b, old, e->loc);
    kc_ir_expr *next = binop(L, e->op, old, one_of(L, e->type), e->type);
    if (want && !e->is_post)
        next = save(L, b, next, e->loc);
    write_place(L, b, &p, next, e->loc);
    return e->is_post ? old : next;
}

static kc_ir_expr **lower_args(lower *L, kc_ir_block *b, const kc_expr *e)
{
    kc_ir_expr **args = kc_arena_alloc(L->a, sizeof(kc_ir_expr *) * (size_t)(e->args.len + 1));
    for (int i = 0; i < e->args.len; i++)
        args[i] = rv(L, b, e->args.items[i], true);
    return args;
}

static kc_ir_expr *lower_atomic(lower *L, kc_ir_block *b, const kc_expr *e, bool want)
{
    const kc_expr *target = ((const kc_expr *)e->args.items[0])->a;
    place p = lower_place(L, b, target);
    kc_ir_stmt *s = kc_ir_new_stmt(L->a, KIR_ATOMIC, e->loc);
    s->atomic = (kc_builtin)e->builtin;
    if (p.is_var) { /* a KC_SHARED scalar */
        s->root.var = p.var;
        s->index = NULL;
    } else {
        s->root = p.root;
        s->index = p.index;
    }
    s->lane = -1;
    if (e->builtin == KC_B_ATOMIC_CAS) {
        s->cmp = rv(L, b, e->args.items[1], true);
        s->value = rv(L, b, e->args.items[2], true);
    } else {
        s->value = rv(L, b, e->args.items[1], true);
    }
    if (want)
        s->var = temp(L, e->type, e->loc);
    kc_ir_push(L->a, b, s);
    return want ? kc_ir_var_ref(L->a, s->var) : NULL;
}

static kc_ir_expr *lower_helper_call(lower *L, kc_ir_block *b, const kc_expr *e)
{
    kc_ir_func *f = lower_func(L, e->func);
    kc_ir_stmt *s = kc_ir_new_stmt(L->a, KIR_CALL, e->loc);
    s->func = f;
    s->nargs = e->args.len;
    s->args = kc_arena_alloc(L->a, sizeof(kc_ir_expr *) * (size_t)(s->nargs + 1));
    s->refs = kc_arena_alloc(L->a, sizeof(kc_ir_root) * (size_t)(s->nargs + 1));
    s->ref_offsets = kc_arena_alloc(L->a, sizeof(kc_ir_expr *) * (size_t)(s->nargs + 1));
    for (int i = 0; i < s->nargs; i++) {
        const kc_expr *arg = e->args.items[i];
        if (f->params[i]->is_buffer) {
            /* the chain's flat index is already in elements, for a whole
             * array (NULL) or a row of a larger one */
            const kc_type *t;
            if (!index_chain(L, b, arg, &s->refs[i], &s->ref_offsets[i], &t)) {
                KC_BROKEN_INVARIANT("sema accepts only arrays lowering can pass");
                kc_error_at(L->diag, arg->loc, "internal error: cannot pass this array");
                L->failed = true;
            }
        } else {
            s->args[i] = rv(L, b, arg, true);
        }
    }
    if (f->ret->scalar != KC_S_VOID)
        s->var = temp(L, f->ret, e->loc);
    kc_ir_push(L->a, b, s);
    return s->var ? kc_ir_var_ref(L->a, s->var) : NULL;
}

/* ---- the math library ---------------------------------------------------------- */

/* kc's accurate math built-ins are written in kc itself (compiler/libm/
 * kc_math.kc, read before every program): sinf(x) becomes a call of
 * __kc_sinf, which the inliner pastes in, so every backend runs the same
 * code. half goes through float (exactly), vectors component by component. */
static const kc_func *libm_func(lower *L, kc_builtin b)
{
    if (b == KC_B_SQRT && L->opts.native_sqrt)
        return NULL; /* the target's own sqrt is correctly rounded */
    switch (b) {
    case KC_B_SQRT: case KC_B_RSQRT: case KC_B_EXP: case KC_B_EXP2: case KC_B_LOG: case KC_B_LOG2:
    case KC_B_POW: case KC_B_SIN: case KC_B_COS: case KC_B_TAN: case KC_B_TANH: case KC_B_ERF:
    case KC_B_LOG10: case KC_B_FMOD: case KC_B_ATAN2: break;
    default: return NULL;
    }
    char name[64];
    snprintf(name, sizeof(name), "__kc_%s", kc_builtins[b].name);
    return kc_program_func(L->prog, name);
}

static kc_ir_expr *lane_of(lower *L, kc_ir_expr *v, int lane)
{
    if (v->type->lanes == 1)
        return v;
    kc_ir_expr *e = kc_ir_new_expr(L->a, KIR_LANE, kc_type_scalar(v->type->scalar));
    e->a = v;
    e->lane = lane;
    return e;
}

static kc_ir_expr *call_libm(lower *L, kc_ir_block *b, const kc_func *fn, kc_ir_expr **args, int nargs,
                             const kc_type *t, kc_loc loc)
{
    const kc_type *f32 = kc_type_scalar(KC_S_FLOAT);
    kc_ir_func *f = lower_func(L, fn);
    kc_ir_expr *lanes[4];
    for (int l = 0; l < t->lanes; l++) {
        kc_ir_stmt *s = kc_ir_new_stmt(L->a, KIR_CALL, loc);
        s->func = f;
        s->nargs = nargs;
        s->args = kc_arena_alloc(L->a, sizeof(kc_ir_expr *) * (size_t)(nargs + 1));
        s->refs = kc_arena_alloc(L->a, sizeof(kc_ir_root) * (size_t)(nargs + 1));
        s->ref_offsets = kc_arena_alloc(L->a, sizeof(kc_ir_expr *) * (size_t)(nargs + 1));
        for (int i = 0; i < nargs; i++)
            s->args[i] = cast(L, lane_of(L, args[i], l), f32);
        s->var = temp(L, f32, loc);
        kc_ir_push(L->a, b, s);
        lanes[l] = cast(L, kc_ir_var_ref(L->a, s->var), kc_type_scalar(t->scalar));
    }
    if (t->lanes == 1)
        return lanes[0];
    kc_ir_expr *v = kc_ir_new_expr(L->a, KIR_VEC, t);
    v->nargs = t->lanes;
    v->args = kc_arena_alloc(L->a, sizeof(kc_ir_expr *) * (size_t)t->lanes);
    for (int l = 0; l < t->lanes; l++)
        v->args[l] = save(L, b, lanes[l], loc);
    return v;
}

static kc_ir_expr *lower_call(lower *L, kc_ir_block *b, const kc_expr *e, bool want)
{
    if (e->func)
        return lower_helper_call(L, b, e);
    if (e->ctor) {
        kc_ir_expr *v = kc_ir_new_expr(L->a, KIR_VEC, e->type);
        v->nargs = e->args.len;
        v->args = lower_args(L, b, e);
        return v;
    }
    if (e->builtin == KC_B_NO_CONTRACT) { /* its float + - * round as written, like the library's */
        bool outer = L->exact;
        L->exact = true;
        kc_ir_expr *r = rv(L, b, e->args.items[0], true);
        L->exact = outer;
        return r;
    }
    switch (kc_builtins[e->builtin].rule) {
    case KC_RULE_BAR:
        kc_ir_push(L->a, b, kc_ir_new_stmt(L->a, KIR_BARRIER, e->loc));
        return NULL;
    case KC_RULE_ATOM:
    case KC_RULE_CAS:
        return lower_atomic(L, b, e, want);
    default: break;
    }
    const kc_func *libm = libm_func(L, (kc_builtin)e->builtin);
    if (libm)
        return call_libm(L, b, libm, lower_args(L, b, e), e->args.len, e->type, e->loc);
    kc_ir_expr *r = kc_ir_new_expr(L->a, KIR_BUILTIN, e->type);
    r->builtin = (kc_builtin)e->builtin;
    r->nargs = e->args.len;
    r->args = lower_args(L, b, e);
    return r;
}

/* Lowers an expression; want is false when its value is not used. */
static kc_ir_expr *rv(lower *L, kc_ir_block *b, const kc_expr *e, bool want)
{
    if (e == L->compound_lhs)
        return L->compound_value;
    switch (e->kind) {
    case KC_E_INT:
    case KC_E_BOOL: return kc_ir_const_int(L->a, e->type, e->ival);
    case KC_E_FLOAT: return kc_ir_const_float(L->a, e->type, e->fval);
    case KC_E_NAME: return lower_name(L, e);
    case KC_E_UNARY: {
        kc_ir_expr *r = kc_ir_new_expr(L->a, KIR_UNARY, e->type);
        r->op = e->op;
        r->a = rv(L, b, e->a, true);
        return r;
    }
    case KC_E_BINARY:
        if (e->op == KC_OP_LAND || e->op == KC_OP_LOR)
            return lower_logical(L, b, e);
        {
            kc_ir_expr *x = rv(L, b, e->a, true);
            kc_ir_expr *y = rv(L, b, e->b, true);
            return binop(L, e->op, x, y, e->type);
        }
    case KC_E_ASSIGN: return lower_assign(L, b, e, want);
    case KC_E_INCDEC: return lower_incdec(L, b, e, want);
    case KC_E_COND: return lower_cond(L, b, e);
    case KC_E_CALL: return lower_call(L, b, e, want);
    case KC_E_INDEX:
    case KC_E_MEMBER:
        if (e->kind == KC_E_MEMBER && e->a->kind != KC_E_INDEX && e->a->kind != KC_E_NAME) {
            kc_ir_expr *l = kc_ir_new_expr(L->a, KIR_LANE, e->type);
            l->a = rv(L, b, e->a, true);
            l->lane = e->lane;
            return l;
        } else {
            place p = lower_place(L, b, e);
            return read_place(L, &p);
        }
    case KC_E_CAST: {
        kc_ir_expr *x = rv(L, b, e->a, e->type->scalar != KC_S_VOID || want);
        if (e->type->scalar == KC_S_VOID || !x)
            return NULL;
        return cast(L, x, e->type);
    }
    case KC_E_COMMA:
        rv(L, b, e->a, false);
        return rv(L, b, e->b, want);
    default: break;
    }
    KC_BROKEN_INVARIANT("lowering knows every expression sema makes");
    kc_error_at(L->diag, e->loc, "internal error: unexpected expression");
    L->failed = true;
    return icon(L, 0);
}

/* ---- statements ---------------------------------------------------------------- */

static kc_ir_expr *zero_of(lower *L, const kc_type *t)
{
    kc_ir_expr *z = kc_type_is_float(t) ? kc_ir_const_float(L->a, kc_type_scalar(t->scalar), 0)
                                        : kc_ir_const_int(L->a, kc_type_scalar(t->scalar), 0);
    if (t->lanes == 1)
        return z;
    kc_ir_expr *v = kc_ir_new_expr(L->a, KIR_VEC, t);
    v->nargs = 1;
    v->args = kc_arena_alloc(L->a, sizeof(kc_ir_expr *));
    v->args[0] = z;
    return v;
}

static void store_elem(lower *L, kc_ir_block *b, kc_ir_var *v, kc_ir_expr *index, kc_ir_expr *value, kc_loc loc)
{
    kc_ir_stmt *s = kc_ir_new_stmt(L->a, KIR_STORE, loc);
    s->root.var = v;
    s->index = index;
    s->lane = -1;
    s->value = value;
    kc_ir_push(L->a, b, s);
}

/* Stores a braced initialiser, element by element, from base. */
static void init_array(lower *L, kc_ir_block *b, kc_ir_var *v, const kc_type *t, const kc_expr *init,
                       kc_ir_expr *base)
{
    kc_ir_expr *st = stride(L, t);
    for (int i = 0; i < init->args.len; i++) {
        const kc_expr *item = init->args.items[i];
        kc_ir_expr *at = st ? binop(L, KC_OP_MUL, icon(L, i), st, INT()) : icon(L, i);
        if (base)
            at = binop(L, KC_OP_ADD, base, at, INT());
        if (t->elem->kind == KC_TY_ARRAY)
            init_array(L, b, v, t->elem, item, at);
        else
            store_elem(L, b, v, at, rv(L, b, item, true), item->loc);
    }
}

/* The elements an initialiser leaves out are zero (C). A loop fills them;
 * unroll_small unrolls it when short. */
static void zero_fill(lower *L, kc_ir_block *b, kc_ir_var *v, kc_loc loc)
{
    kc_ir_var *i = kc_ir_new_var(L->a, L->fn, "i", INT(), loc);
    kc_ir_stmt *s = kc_ir_new_stmt(L->a, KIR_LOOP, loc);
    assign(L, &s->init, i, -1, icon(L, 0), loc);
    s->cond = binop(L, KC_OP_LT, kc_ir_var_ref(L->a, i), ix(L, v->len_expr), kc_type_scalar(KC_S_BOOL));
    store_elem(L, &s->body, v, kc_ir_var_ref(L->a, i), zero_of(L, v->type), loc);
    assign(L, &s->step, i, -1, binop(L, KC_OP_ADD, kc_ir_var_ref(L->a, i), icon(L, 1), INT()), loc);
    s->unroll_small = true;
    kc_ir_push(L->a, b, s);
}

static kc_iexpr *total_len(lower *L, const kc_type *t)
{
    kc_iexpr *n = NULL;
    for (; t->kind == KC_TY_ARRAY; t = t->elem)
        n = n ? kc_iexpr_make(L->a, KC_IX_MUL, n, t->len, NULL) : t->len;
    return n;
}

static kc_ir_var *new_local(lower *L, const kc_sym *sym)
{
    const kc_type *t = sym->type;
    kc_ir_var *v = kc_ir_new_var(L->a, L->fn, sym->name, kc_type_base(t), sym->loc);
    if (t->kind == KC_TY_ARRAY) {
        v->is_array = true;
        v->len_expr = total_len(L, t);
    }
    v->mem = sym->storage == KC_STORE_SHARED ? KIR_MEM_SHARED : KIR_MEM_PRIVATE;
    return v;
}

static void lower_decl(lower *L, kc_ir_block *b, const kc_sym *sym)
{
    kc_ir_var *v = L->locals[sym->index] = new_local(L, sym);
    if (!sym->init)
        return;
    if (!v->is_array) {
        assign(L, b, v, -1, rv(L, b, sym->init, true), sym->loc);
        return;
    }
    /* elements the list leaves out are zero: unless a one-dimensional
     * list is complete, zero everything first, then store the list */
    int64_t len;
    bool complete = sym->type->elem->kind != KC_TY_ARRAY &&
                    kc_iexpr_eval(v->len_expr, NULL, NULL, &len, NULL, 0) && sym->init->args.len == len;
    if (!complete)
        zero_fill(L, b, v, sym->loc);
    init_array(L, b, v, sym->type, sym->init, NULL);
}

/* A loop condition with side effects is tested inside the body. */
static void loop_cond(lower *L, kc_ir_stmt *loop, const kc_expr *cond, bool at_end)
{
    if (!cond)
        return;
    kc_ir_block pre = {0};
    kc_ir_expr *c = rv(L, &pre, cond, true);
    if (!pre.len) {
        if (at_end)
            loop->post = c;
        else
            loop->cond = c;
        return;
    }
    kc_ir_stmt *exit = kc_ir_new_stmt(L->a, KIR_IF, cond->loc);
    kc_ir_expr *n = kc_ir_new_expr(L->a, KIR_UNARY, c->type);
    n->op = KC_OP_NOT;
    n->a = c;
    exit->cond = n;
    kc_ir_push(L->a, &exit->then, kc_ir_new_stmt(L->a, KIR_BREAK, cond->loc));
    kc_ir_block *into = at_end ? &loop->step : &loop->body;
    kc_ir_block old = *into;
    *into = pre;
    kc_ir_push(L->a, into, exit);
    for (int i = 0; i < old.len; i++)
        kc_ir_push(L->a, into, old.stmts[i]);
}

static void lower_loop(lower *L, kc_ir_block *b, const kc_stmt *s)
{
    kc_ir_stmt *loop = kc_ir_new_stmt(L->a, KIR_LOOP, s->loc);
    loop->unroll = s->unroll;
    if (s->kind == KC_S_FOR && s->init)
        lower_stmt(L, &loop->init, s->init);
    lower_stmt(L, &loop->body, s->then);
    if (s->kind == KC_S_FOR && s->step)
        rv(L, &loop->step, s->step, false);
    loop_cond(L, loop, s->expr, s->kind == KC_S_DO);
    kc_ir_push(L->a, b, loop);
}

static void lower_switch(lower *L, kc_ir_block *b, const kc_stmt *s)
{
    kc_ir_stmt *sw = kc_ir_new_stmt(L->a, KIR_SWITCH, s->loc);
    sw->value = rv(L, b, s->expr, true);
    const kc_stmt *body = s->then;
    sw->cases = kc_arena_alloc(L->a, sizeof(kc_ir_case) * (size_t)(body->body.len + 1));
    kc_ir_case *cur = NULL;
    bool label_run = false; /* consecutive labels share one case */
    for (int i = 0; i < body->body.len; i++) {
        const kc_stmt *st = body->body.items[i];
        if (st->kind == KC_S_CASE || st->kind == KC_S_DEFAULT) {
            if (!label_run) {
                int run = 0; /* the labels of this case, to size its list */
                for (int k = i; k < body->body.len && (((const kc_stmt *)body->body.items[k])->kind == KC_S_CASE ||
                                                        ((const kc_stmt *)body->body.items[k])->kind == KC_S_DEFAULT);
                     k++)
                    run++;
                cur = &sw->cases[sw->ncases++];
                cur->value_exprs = kc_arena_alloc(L->a, sizeof(kc_iexpr *) * (size_t)(run + 1));
            }
            label_run = true;
            if (st->kind == KC_S_DEFAULT)
                cur->is_default = true;
            else
                cur->value_exprs[cur->nvalues++] = st->case_value;
            continue;
        }
        label_run = false;
        if (!cur) {
            if (st->kind != KC_S_EMPTY)
                kc_warn_at(L->diag, st->loc, "this statement comes before any case label and never runs");
            continue;
        }
        lower_stmt(L, &cur->body, st);
    }
    kc_ir_push(L->a, b, sw);
}

static void lower_stmt(lower *L, kc_ir_block *b, const kc_stmt *s)
{
    switch (s->kind) {
    case KC_S_EXPR: rv(L, b, s->expr, false); return;
    case KC_S_DECL:
        for (int i = 0; i < s->body.len; i++)
            lower_decl(L, b, s->body.items[i]);
        return;
    case KC_S_BLOCK:
        for (int i = 0; i < s->body.len; i++)
            lower_stmt(L, b, s->body.items[i]);
        return;
    case KC_S_IF: {
        kc_ir_stmt *st = kc_ir_new_stmt(L->a, KIR_IF, s->loc);
        st->cond = rv(L, b, s->expr, true);
        lower_stmt(L, &st->then, s->then);
        if (s->els)
            lower_stmt(L, &st->els, s->els);
        kc_ir_push(L->a, b, st);
        return;
    }
    case KC_S_FOR:
    case KC_S_WHILE:
    case KC_S_DO: lower_loop(L, b, s); return;
    case KC_S_SWITCH: lower_switch(L, b, s); return;
    case KC_S_BREAK:
    case KC_S_CONTINUE:
        kc_ir_push(L->a, b, kc_ir_new_stmt(L->a, s->kind == KC_S_BREAK ? KIR_BREAK : KIR_CONTINUE, s->loc));
        return;
    case KC_S_RETURN: {
        kc_ir_stmt *r = kc_ir_new_stmt(L->a, KIR_RETURN, s->loc);
        if (s->expr)
            r->value = rv(L, b, s->expr, true);
        kc_ir_push(L->a, b, r);
        return;
    }
    case KC_S_CASE:
    case KC_S_DEFAULT:
    case KC_S_EMPTY: return;
    }
}

/* ---- functions --------------------------------------------------------------- */

/* Does the body assign to (or take the address of) a parameter? Then the
 * kernel keeps it in a variable. */
static bool assigns(const kc_expr *e, const kc_sym *sym)
{
    if (!e)
        return false;
    if ((e->kind == KC_E_ASSIGN || e->kind == KC_E_INCDEC) && e->a->kind == KC_E_NAME && e->a->sym == sym)
        return true;
    if ((e->kind == KC_E_ASSIGN || e->kind == KC_E_INCDEC) && e->a->kind == KC_E_MEMBER &&
        e->a->a->kind == KC_E_NAME && e->a->a->sym == sym)
        return true;
    if (assigns(e->a, sym) || assigns(e->b, sym) || assigns(e->c, sym))
        return true;
    for (int i = 0; i < e->args.len; i++)
        if (assigns(e->args.items[i], sym))
            return true;
    return false;
}

static bool stmt_assigns(const kc_stmt *s, const kc_sym *sym)
{
    if (!s)
        return false;
    if (assigns(s->expr, sym) || assigns(s->step, sym) || stmt_assigns(s->init, sym) ||
        stmt_assigns(s->then, sym) || stmt_assigns(s->els, sym))
        return true;
    if (s->kind == KC_S_BLOCK)
        for (int i = 0; i < s->body.len; i++)
            if (stmt_assigns(s->body.items[i], sym))
                return true;
    if (s->kind == KC_S_DECL)
        for (int i = 0; i < s->body.len; i++)
            if (assigns(((kc_sym *)s->body.items[i])->init, sym))
                return true;
    return false;
}

static kc_iexpr *buffer_extent(lower *L, const kc_sym *p)
{
    kc_iexpr *n = NULL;
    for (int i = 0; i < p->dims.len; i++) {
        kc_iexpr *d = p->dims.items[i];
        if (!d)
            return NULL;
        n = n ? kc_iexpr_make(L->a, KC_IX_MUL, n, d, NULL) : d;
    }
    return n;
}

static void lower_params(lower *L, kc_ir_func *f, const kc_func *ast)
{
    f->nparams = ast->params.len;
    f->params = kc_arena_alloc(L->a, sizeof(kc_ir_param *) * (size_t)(f->nparams + 1));
    L->param_map = kc_arena_alloc(L->a, sizeof(void *) * (size_t)(f->nparams + 1));
    L->param_is_var = kc_arena_alloc(L->a, sizeof(bool) * (size_t)(f->nparams + 1));
    for (int i = 0; i < f->nparams; i++) {
        const kc_sym *s = ast->params.items[i];
        kc_ir_param *p = KC_NEW(L->a, kc_ir_param);
        p->name = s->name;
        p->index = i;
        p->loc = s->loc;
        p->is_buffer = s->is_buffer;
        p->readonly = s->is_const;
        p->specialize = s->specialize && ast->is_kernel;
        p->type = kc_type_base(s->type);
        f->params[i] = p;
        if (s->is_buffer && ast->is_kernel) {
            p->binding = f->nbuffers++;
            p->dims = s->dims;
            p->extent = buffer_extent(L, s);
            L->param_map[i] = p;
        } else if (s->is_buffer) { /* a helper's array: a reference */
            p->ref = kc_ir_new_var(L->a, f, s->name, kc_type_base(s->type), s->loc);
            p->ref->is_array = true;
            p->ref->mem = KIR_MEM_REF;
            p->ref->len = -1;
            L->param_map[i] = p->ref;
            L->param_is_var[i] = true;
        } else if (!ast->is_kernel || stmt_assigns(ast->body, s)) {
            kc_ir_var *v = kc_ir_new_var(L->a, f, s->name, s->type, s->loc);
            L->param_map[i] = v;
            L->param_is_var[i] = true;
            if (ast->is_kernel) { /* the kernel's copy starts as the argument */
                kc_ir_expr *r = kc_ir_new_expr(L->a, KIR_PARAM, s->type);
                r->param = p;
                assign(L, &f->body, v, -1, r, s->loc);
            } else {
                p->local = v; /* the inliner assigns the argument to it */
            }
        } else {
            L->param_map[i] = p;
        }
    }
}

static kc_ir_func *lower_func(lower *L, const kc_func *ast)
{
    kc_ir_func *done = kc_map_get(&L->funcs, ast->name);
    if (done)
        return done;
    kc_ir_func *f = KC_NEW(L->a, kc_ir_func);
    f->name = ast->name;
    f->loc = ast->loc;
    f->is_kernel = ast->is_kernel;
    f->may_alias = ast->may_alias;
    f->ret = ast->ret;
    kc_map_put(L->a, &L->funcs, ast->name, f);
    /* the state of the caller, restored below: helpers are lowered on
     * first call, in the middle of their caller */
    lower saved = *L;
    L->fn = f;
    L->ast = ast;
    L->exact = strncmp(ast->name, "__kc_", 5) == 0; /* only kc's own library may use the prefix */
    L->locals = kc_arena_alloc(L->a, sizeof(kc_ir_var *) * (size_t)(ast->nlocals + 1));
    L->compound_lhs = NULL;
    lower_params(L, f, ast);
    if (ast->is_kernel)
        for (int i = 0; i < 3; i++)
            f->wg[i] = ast->wg_size[i], f->grid[i] = ast->grid_size[i];
    f->texel = ast->texel_cond;
    lower_stmt(L, &f->body, ast->body);
    if (!ast->is_kernel)
        kc_vec_push(L->a, &L->m->helpers, f);
    saved.failed = L->failed;
    saved.funcs = L->funcs;
    *L = saved;
    return f;
}

/* A file-scope constant array becomes a KIR_MEM_CONST variable with its
 * values, the first time a function uses it (so a kernel carries only the
 * tables it reads, not every table of kc's math library). */
static kc_ir_var *const_var(lower *L, const kc_sym *c)
{
    kc_ir_var *v = kc_map_get(&L->consts, c->name);
    if (v)
        return v;
    v = KC_NEW(L->a, kc_ir_var);
    v->name = c->name;
    v->loc = c->loc;
    v->type = kc_type_base(c->type);
    v->is_array = true;
    v->mem = KIR_MEM_CONST;
    v->len_expr = total_len(L, c->type);
    kc_iexpr_eval(v->len_expr, NULL, NULL, &v->len, NULL, 0);
    v->init = kc_arena_alloc(L->a, sizeof(kc_ir_expr *) * (size_t)v->len);
    for (int64_t k = 0; k < v->len; k++)
        v->init[k] = zero_of(L, v->type);
    /* flatten the (nested) initialiser into element order */
    int64_t strides[17];
    int depth = 0;
    for (const kc_type *t = c->type; t->kind == KC_TY_ARRAY; t = t->elem, depth++) {
        int64_t s = 1;
        for (const kc_type *u = t->elem; u->kind == KC_TY_ARRAY; u = u->elem) {
            int64_t n;
            kc_iexpr_eval(u->len, NULL, NULL, &n, NULL, 0);
            s *= n;
        }
        strides[depth] = s;
    }
    struct frame { const kc_expr *list; int64_t base; int depth; } fr[17];
    int sp = 0;
    fr[sp++] = (struct frame){c->init, 0, 0};
    kc_ir_block scratch = {0}; /* constant values need no statements */
    while (sp > 0) {
        struct frame top = fr[--sp];
        for (int k = top.list->args.len - 1; k >= 0; k--) {
            const kc_expr *item = top.list->args.items[k];
            int64_t pos = top.base + k * strides[top.depth];
            if (item->kind == KC_E_INIT)
                fr[sp++] = (struct frame){item, pos, top.depth + 1};
            else if (pos < v->len)
                v->init[pos] = rv(L, &scratch, item, true);
        }
    }
    kc_map_put(L->a, &L->consts, c->name, v);
    kc_vec_push(L->a, &L->m->consts, v);
    return v;
}

/* Every tunable of the program at its default: what specialisation gives
 * a tunable the binding does not name. */
static kc_ir_binding tunable_defaults(kc_arena *a, const kc_program *prog)
{
    kc_ir_binding b = {prog->tunables.len, NULL, NULL};
    b.names = kc_arena_alloc(a, sizeof(const char *) * (size_t)(b.n + 1));
    b.values = kc_arena_alloc(a, sizeof(int64_t) * (size_t)(b.n + 1));
    for (int i = 0; i < b.n; i++) {
        const kc_tunable *t = prog->tunables.items[i];
        b.names[i] = t->name;
        b.values[i] = t->def;
    }
    return b;
}

kc_ir_module *kc_ir_lower(kc_arena *a, kc_diag *diag, const kc_program *prog, const kc_func *kernel,
                          const kc_ir_options *o)
{
    lower L = {0};
    if (o)
        L.opts = *o;
    L.a = a;
    L.diag = diag;
    L.prog = prog;
    L.m = KC_NEW(a, kc_ir_module);
    L.m->arena = a;
    L.m->diag = diag;
    L.m->defaults = tunable_defaults(a, prog);
    L.m->kernel = lower_func(&L, kernel);
    return L.failed ? NULL : L.m;
}
