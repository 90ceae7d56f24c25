/*
 * bounds.c — checked mode: every array access is tested against its
 * array's length, and the first one out of bounds is recorded for libkcrt
 * to report as kernel, file:line:col, array and index. The record's layout
 * and the hidden parameters are support/kc_checked.h's.
 *
 * The pass runs last, on the specialised, unrolled kernel, so it checks
 * exactly the accesses that run. kir expressions have no side effects and
 * every load in them is evaluated (lowering turned && || ?: with faulting
 * sides into ifs), so a statement's index expressions can be evaluated
 * just before it: the checks go there, in the statement's own block. For
 * a loop's conditions that is the end of its init and of its step.
 *
 * A load out of bounds reads element 0 instead, a store or an atomic is
 * skipped (its result is 0): the kernel runs on, and touches nothing
 * outside its arrays.
 */
#include "ir_private.h"

#include "kc_checked.h"

typedef struct bounds {
    kc_ir_module *m;
    kc_arena *a;
    kc_ir_func *fn;
    kc_ir_param *record;
    kc_ir_param *kernel; /* the hidden argument naming the kernel */
    kc_ir_param **len;   /* per parameter index: a buffer's hidden length */
    kc_ir_block *pre;    /* where the checks of the statement at hand go */
    kc_loc loc;
} bounds;

static const kc_type *uint_t(void) { return kc_type_scalar(KC_S_UINT); }

static kc_ir_expr *u32(bounds *B, uint64_t v) { return kc_ir_const_int(B->a, uint_t(), v); }

static kc_ir_expr *binary(bounds *B, kc_op op, const kc_type *t, kc_ir_expr *x, kc_ir_expr *y)
{
    kc_ir_expr *e = kc_ir_new_expr(B->a, KIR_BINARY, t);
    e->op = op;
    e->a = x;
    e->b = y;
    return e;
}

static kc_ir_expr *cast(bounds *B, const kc_type *t, kc_ir_expr *x)
{
    if (kc_type_equal(t, x->type))
        return x;
    kc_ir_expr *e = kc_ir_new_expr(B->a, KIR_CAST, t);
    e->a = x;
    return e;
}

static kc_ir_expr *temp(bounds *B, const char *name, kc_ir_expr *value)
{
    kc_ir_var *v = kc_ir_new_var(B->a, B->fn, name, value->type, B->loc);
    kc_ir_stmt *s = kc_ir_new_stmt(B->a, KIR_ASSIGN, B->loc);
    s->var = v;
    s->value = value;
    kc_ir_push(B->a, B->pre, s);
    return kc_ir_var_ref(B->a, v);
}

static void store_word(bounds *B, kc_ir_block *b, int word, kc_ir_expr *value)
{
    kc_ir_stmt *s = kc_ir_new_stmt(B->a, KIR_STORE, B->loc);
    s->root.param = B->record;
    s->index = kc_ir_const_int(B->a, kc_type_scalar(KC_S_INT), (uint64_t)word);
    s->value = value;
    kc_ir_push(B->a, b, s);
}

/* What the record says about the array: a buffer's parameter index, or
 * the kind of a local array. */
static uint32_t what(const kc_ir_root *r)
{
    if (r->param)
        return (uint32_t)r->param->index;
    return KC_CHECK_LOCAL | (r->var->mem == KIR_MEM_SHARED  ? KC_CHECK_SHARED
                             : r->var->mem == KIR_MEM_CONST ? KC_CHECK_CONST
                                                            : KC_CHECK_PRIVATE);
}

/* if (!ok) { if (cas(record[HIT], 0, 1) == 0) { record[...] = ... } } */
static void record_violation(bounds *B, kc_ir_expr *ok, kc_ir_expr *index, const kc_ir_root *r, kc_ir_expr *len)
{
    kc_ir_stmt *miss = kc_ir_new_stmt(B->a, KIR_IF, B->loc);
    miss->cond = kc_ir_new_expr(B->a, KIR_UNARY, kc_type_scalar(KC_S_BOOL));
    miss->cond->op = KC_OP_NOT;
    miss->cond->a = ok;
    kc_ir_stmt *cas = kc_ir_new_stmt(B->a, KIR_ATOMIC, B->loc);
    cas->atomic = KC_B_ATOMIC_CAS;
    cas->root.param = B->record;
    cas->index = kc_ir_const_int(B->a, kc_type_scalar(KC_S_INT), KC_CHECK_HIT);
    cas->cmp = u32(B, 0);
    cas->value = u32(B, 1);
    cas->var = kc_ir_new_var(B->a, B->fn, "__kc_first", uint_t(), B->loc);
    kc_ir_push(B->a, &miss->then, cas);

    kc_ir_stmt *first = kc_ir_new_stmt(B->a, KIR_IF, B->loc);
    first->cond = binary(B, KC_OP_EQ, kc_type_scalar(KC_S_BOOL), kc_ir_var_ref(B->a, cas->var), u32(B, 0));
    kc_ir_block *fill = &first->then;
    bool wide = kc_scalar_bits(index->type->scalar) == 64;
    bool is_signed = index->type->scalar == KC_S_INT || index->type->scalar == KC_S_LONG;
    kc_ir_expr *hi = wide        ? cast(B, uint_t(), binary(B, KC_OP_SHR, index->type, index,
                                                                kc_ir_const_int(B->a, index->type, 32)))
                     : is_signed ? cast(B, uint_t(), binary(B, KC_OP_SHR, index->type, index,
                                                                kc_ir_const_int(B->a, index->type, 31)))
                                 : u32(B, 0);
    kc_ir_expr *kernel = kc_ir_new_expr(B->a, KIR_PARAM, uint_t());
    kernel->param = B->kernel;
    store_word(B, fill, KC_CHECK_KERNEL, kernel);
    store_word(B, fill, KC_CHECK_FILE, u32(B, (uint64_t)(B->loc.file < 0 ? 0 : B->loc.file)));
    store_word(B, fill, KC_CHECK_LINE, u32(B, (uint64_t)B->loc.line));
    store_word(B, fill, KC_CHECK_COL, u32(B, (uint64_t)B->loc.col));
    store_word(B, fill, KC_CHECK_INDEX_LO, cast(B, uint_t(), index));
    store_word(B, fill, KC_CHECK_INDEX_HI, hi);
    store_word(B, fill, KC_CHECK_WHAT, u32(B, what(r)));
    store_word(B, fill, KC_CHECK_LEN, cast(B, uint_t(), len));
    kc_ir_push(B->a, &miss->then, first);
    kc_ir_push(B->a, B->pre, miss);
}

/* Checks root[*index] in B->pre; *index becomes a temporary (evaluated
 * once) and the result says whether it is in bounds. NULL for what needs
 * no check (a shared scalar, a constant index that is in bounds). */
static kc_ir_expr *check(bounds *B, const kc_ir_root *r, kc_ir_expr **index)
{
    int64_t at;
    if (!*index)
        return NULL;
    if (r->var && kc_ir_const_value(*index, &at) && at >= 0 && at < r->var->len)
        return NULL; /* an unrolled loop's constant index into a local array */
    kc_ir_expr *len;
    if (r->param) {
        len = kc_ir_new_expr(B->a, KIR_PARAM, uint_t());
        len->param = B->len[r->param->index];
    } else {
        len = u32(B, (uint64_t)r->var->len);
    }
    kc_ir_expr *i = temp(B, "__kc_index", *index);
    /* unsigned, so that a negative index is out of bounds too */
    const kc_type *ut = kc_type_scalar(kc_scalar_bits(i->type->scalar) == 64 ? KC_S_ULONG : KC_S_UINT);
    kc_ir_expr *ok = temp(B, "__kc_in_bounds",
                          binary(B, KC_OP_LT, kc_type_scalar(KC_S_BOOL), cast(B, ut, i), cast(B, ut, len)));
    record_violation(B, ok, i, r, len);
    *index = i;
    return ok;
}

/* Checks every load in e (innermost first); an out-of-bounds load reads
 * element 0. */
static kc_ir_expr *guard_expr(bounds *B, kc_ir_expr *e)
{
    if (!e)
        return NULL;
    e->a = guard_expr(B, e->a);
    e->b = guard_expr(B, e->b);
    e->c = guard_expr(B, e->c);
    for (int i = 0; i < e->nargs; i++)
        e->args[i] = guard_expr(B, e->args[i]);
    if (e->kind != KIR_LOAD)
        return e;
    kc_ir_expr *ok = check(B, &e->root, &e->a);
    if (ok) {
        kc_ir_expr *sel = kc_ir_new_expr(B->a, KIR_SELECT, e->a->type);
        sel->a = ok;
        sel->b = e->a;
        sel->c = kc_ir_const_int(B->a, e->a->type, 0);
        e->a = sel;
    }
    return e;
}

static void guard_block(bounds *B, kc_ir_block *b);

/* The checks of a loop condition, where it is evaluated: after init and
 * after step (where post, if any, must hold first). */
static void guard_loop_conds(bounds *B, kc_ir_stmt *s)
{
    kc_ir_block *saved = B->pre;
    if (s->post) {
        B->pre = &s->step;
        s->post = guard_expr(B, s->post);
    }
    if (s->cond) {
        kc_ir_block checks = {0};
        B->pre = &checks;
        s->cond = guard_expr(B, s->cond);
        for (int i = 0; i < checks.len; i++)
            kc_ir_push(B->a, &s->init, checks.stmts[i]);
        kc_ir_block *step = &s->step;
        if (s->post && checks.len) { /* the condition is evaluated only when post held */
            kc_ir_stmt *when = kc_ir_new_stmt(B->a, KIR_IF, s->loc);
            when->cond = s->post;
            kc_ir_push(B->a, step, when);
            step = &when->then;
        }
        kc_ir_clone cl;
        kc_ir_clone_init(&cl, B->a, NULL);
        for (int i = 0; i < checks.len; i++) /* a second copy: a statement lives in one block */
            kc_ir_push(B->a, step, kc_ir_clone_stmt(&cl, checks.stmts[i]));
    }
    B->pre = saved;
}

/* s, wrapped so that it runs only when ok holds; an atomic's result is 0
 * otherwise. */
static kc_ir_stmt *only_if(bounds *B, kc_ir_stmt *s, kc_ir_expr *ok)
{
    if (!ok)
        return s;
    kc_ir_stmt *w = kc_ir_new_stmt(B->a, KIR_IF, s->loc);
    w->cond = ok;
    kc_ir_push(B->a, &w->then, s);
    if (s->kind == KIR_ATOMIC && s->var) {
        kc_ir_stmt *zero = kc_ir_new_stmt(B->a, KIR_ASSIGN, s->loc);
        zero->var = s->var;
        zero->value = kc_type_is_float(s->var->type) ? kc_ir_const_float(B->a, s->var->type, 0)
                                                      : kc_ir_const_int(B->a, s->var->type, 0);
        kc_ir_push(B->a, &w->els, zero);
    }
    return w;
}

static kc_ir_stmt *guard_stmt(bounds *B, kc_ir_stmt *s)
{
    B->loc = s->loc;
    switch (s->kind) {
    case KIR_IF:
        guard_block(B, &s->then);
        guard_block(B, &s->els);
        B->loc = s->loc;
        s->cond = guard_expr(B, s->cond);
        return s;
    case KIR_LOOP:
        guard_block(B, &s->init);
        guard_block(B, &s->body);
        guard_block(B, &s->step);
        B->loc = s->loc;
        guard_loop_conds(B, s);
        return s;
    case KIR_SWITCH:
        for (int i = 0; i < s->ncases; i++)
            guard_block(B, &s->cases[i].body);
        B->loc = s->loc;
        s->value = guard_expr(B, s->value);
        return s;
    case KIR_ASSIGN:
    case KIR_RETURN:
        s->value = guard_expr(B, s->value);
        return s;
    case KIR_STORE:
    case KIR_ATOMIC:
        s->value = guard_expr(B, s->value);
        s->cmp = guard_expr(B, s->cmp);
        s->index = guard_expr(B, s->index);
        return only_if(B, s, check(B, &s->root, &s->index));
    default:
        return s;
    }
}

static void guard_block(bounds *B, kc_ir_block *b)
{
    kc_ir_block out = {0};
    kc_ir_block *saved = B->pre;
    for (int i = 0; i < b->len; i++) {
        B->pre = &out;
        kc_ir_stmt *s = guard_stmt(B, b->stmts[i]);
        kc_ir_push(B->a, &out, s);
    }
    B->pre = saved;
    *b = out;
}

static kc_ir_param *hidden_param(bounds *B, const char *name, bool is_buffer)
{
    kc_ir_func *f = B->fn;
    kc_ir_param *p = KC_NEW(B->a, kc_ir_param);
    p->name = name;
    p->index = f->nparams;
    p->loc = f->loc;
    p->is_buffer = is_buffer;
    p->type = uint_t();
    if (is_buffer)
        p->binding = f->nbuffers++;
    kc_ir_param **grown = kc_arena_alloc(B->a, sizeof(kc_ir_param *) * (size_t)(f->nparams + 2));
    for (int i = 0; i < f->nparams; i++)
        grown[i] = f->params[i];
    grown[f->nparams++] = p;
    f->params = grown;
    return p;
}

bool kc_ir_check_bounds(kc_ir_module *m)
{
    bounds B = {.m = m, .a = m->arena, .fn = m->kernel};
    int nparams = m->kernel->nparams;
    B.len = kc_arena_alloc(B.a, sizeof(kc_ir_param *) * (size_t)(nparams + 1));
    for (int i = 0; i < nparams; i++) {
        const kc_ir_param *p = m->kernel->params[i];
        if (p->is_buffer)
            B.len[i] = hidden_param(&B, kc_arena_printf(B.a, KC_CHECK_LEN_PREFIX "%s", p->name), false);
    }
    B.kernel = hidden_param(&B, KC_CHECK_KERNEL_PARAM, false);
    B.record = hidden_param(&B, KC_CHECK_RECORD, true);
    guard_block(&B, &m->kernel->body);
    return true;
}
