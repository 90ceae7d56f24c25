/*
 * ir.c — kir's building blocks: constructors, deep copies with
 * substitution, walkers, and the rewriting of jumps out of a region that
 * inlining (return) and unrolling (break/continue) share.
 */
#include "ir_private.h"

#include <stdio.h>
#include <string.h>

kc_ir_expr *kc_ir_new_expr(kc_arena *a, kc_ir_expr_kind kind, const kc_type *t)
{
    kc_ir_expr *e = KC_NEW(a, kc_ir_expr);
    e->kind = kind;
    e->type = t;
    e->lane = -1;
    return e;
}

kc_ir_expr *kc_ir_const_int(kc_arena *a, const kc_type *t, uint64_t v)
{
    kc_ir_expr *e = kc_ir_new_expr(a, KIR_CONST, t);
    int bits = kc_scalar_bits(t->scalar);
    if (t->scalar == KC_S_BOOL)
        v = v != 0;
    else if (bits < 64)
        v &= (1ull << bits) - 1;
    e->ival = v;
    return e;
}

kc_ir_expr *kc_ir_const_float(kc_arena *a, const kc_type *t, double v)
{
    kc_ir_expr *e = kc_ir_new_expr(a, KIR_CONST, t);
    e->fval = v;
    return e;
}

kc_ir_stmt *kc_ir_new_stmt(kc_arena *a, kc_ir_stmt_kind kind, kc_loc loc)
{
    kc_ir_stmt *s = KC_NEW(a, kc_ir_stmt);
    s->kind = kind;
    s->loc = loc;
    s->lane = -1;
    return s;
}

void kc_ir_push(kc_arena *a, kc_ir_block *b, kc_ir_stmt *s)
{
    if (b->len == b->cap) {
        int cap = b->cap ? b->cap * 2 : 4;
        kc_ir_stmt **p = kc_arena_alloc(a, sizeof(*p) * (size_t)cap);
        if (b->len)
            memcpy(p, b->stmts, sizeof(*p) * (size_t)b->len);
        b->stmts = p;
        b->cap = cap;
    }
    b->stmts[b->len++] = s;
}

kc_ir_var *kc_ir_new_var(kc_arena *a, kc_ir_func *f, const char *name, const kc_type *t, kc_loc loc)
{
    kc_ir_var *v = KC_NEW(a, kc_ir_var);
    v->name = name;
    v->type = t;
    v->loc = loc;
    v->len = -1;
    v->mem = KIR_MEM_PRIVATE;
    v->id = f->vars.len;
    kc_vec_push(a, &f->vars, v);
    return v;
}

kc_ir_expr *kc_ir_var_ref(kc_arena *a, kc_ir_var *v)
{
    kc_ir_expr *e = kc_ir_new_expr(a, KIR_VAR, v->type);
    e->var = v;
    return e;
}

bool kc_ir_is_const(const kc_ir_expr *e)
{
    return e && e->kind == KIR_CONST;
}

bool kc_ir_const_value(const kc_ir_expr *e, int64_t *v)
{
    if (!e || e->kind != KIR_CONST || e->type->kind != KC_TY_SCALAR || kc_type_is_float(e->type))
        return false;
    uint64_t x = e->ival;
    switch (e->type->scalar) {
    case KC_S_INT: *v = (int32_t)(uint32_t)x; return true;
    case KC_S_UINT: *v = (int64_t)(uint32_t)x; return true;
    case KC_S_BOOL: *v = x != 0; return true;
    default: *v = (int64_t)x; return true;
    }
}

/* ---- cloning ------------------------------------------------------------------ */

static const char *key(kc_arena *a, const void *p)
{
    return kc_arena_printf(a, "%p", p);
}

void kc_ir_clone_init(kc_ir_clone *cl, kc_arena *a, kc_ir_func *into)
{
    memset(cl, 0, sizeof(*cl));
    cl->arena = a;
    cl->into = into;
}

kc_ir_var *kc_ir_clone_var(kc_ir_clone *cl, kc_ir_var *v)
{
    if (!v || !cl->into || v->mem == KIR_MEM_CONST)
        return v;
    const char *k = key(cl->arena, v);
    kc_ir_var *n = kc_map_get(&cl->vars, k);
    if (n)
        return n;
    n = kc_ir_new_var(cl->arena, cl->into, v->name, v->type, v->loc);
    int id = n->id;
    *n = *v;
    n->id = id;
    kc_map_put(cl->arena, &cl->vars, k, n);
    return n;
}

void kc_ir_clone_map_ref(kc_ir_clone *cl, kc_ir_var *ref, kc_ir_root root, kc_ir_expr *offset)
{
    kc_ir_ref_sub *s = KC_NEW(cl->arena, kc_ir_ref_sub);
    s->root = root;
    s->offset = offset;
    kc_map_put(cl->arena, &cl->refs, key(cl->arena, ref), s);
}

/* A root through the ref map; *offset gets the element it starts at. */
static kc_ir_root clone_root(kc_ir_clone *cl, kc_ir_root r, kc_ir_expr **offset)
{
    *offset = NULL;
    if (r.var && r.var->mem == KIR_MEM_REF && cl->refs.len) {
        kc_ir_ref_sub *s = kc_map_get(&cl->refs, key(cl->arena, r.var));
        if (s) {
            /* the offset is already in the caller's variables: a plain copy */
            kc_ir_clone plain;
            kc_ir_clone_init(&plain, cl->arena, NULL);
            *offset = kc_ir_clone_expr(&plain, s->offset);
            return s->root;
        }
    }
    r.var = kc_ir_clone_var(cl, r.var);
    return r;
}

static kc_ir_expr *offset_index(kc_ir_clone *cl, kc_ir_expr *index, kc_ir_expr *offset)
{
    if (!offset)
        return index;
    kc_ir_expr *e = kc_ir_new_expr(cl->arena, KIR_BINARY, kc_type_scalar(KC_S_INT));
    e->op = KC_OP_ADD;
    e->a = offset;
    e->b = index;
    return e;
}

kc_ir_expr *kc_ir_clone_expr(kc_ir_clone *cl, const kc_ir_expr *e)
{
    if (!e)
        return NULL;
    kc_arena *a = cl->arena;
    if (e->kind == KIR_VAR && e->var == cl->subst_var)
        return kc_ir_clone_expr(cl, cl->subst_value);
    kc_ir_expr *n = KC_NEW(a, kc_ir_expr);
    *n = *e;
    n->a = kc_ir_clone_expr(cl, e->a);
    n->b = kc_ir_clone_expr(cl, e->b);
    n->c = kc_ir_clone_expr(cl, e->c);
    if (e->nargs) {
        n->args = kc_arena_alloc(a, sizeof(kc_ir_expr *) * (size_t)e->nargs);
        for (int i = 0; i < e->nargs; i++)
            n->args[i] = kc_ir_clone_expr(cl, e->args[i]);
    }
    if (e->kind == KIR_VAR)
        n->var = kc_ir_clone_var(cl, e->var);
    if (e->kind == KIR_LOAD) {
        kc_ir_expr *off;
        n->root = clone_root(cl, e->root, &off);
        n->a = offset_index(cl, n->a, off);
    }
    return n;
}

static kc_ir_expr **clone_list(kc_ir_clone *cl, kc_ir_expr **list, int n)
{
    if (!list)
        return NULL;
    kc_ir_expr **out = kc_arena_alloc(cl->arena, sizeof(kc_ir_expr *) * (size_t)(n + 1));
    for (int i = 0; i < n; i++)
        out[i] = kc_ir_clone_expr(cl, list[i]);
    return out;
}

kc_ir_stmt *kc_ir_clone_stmt(kc_ir_clone *cl, const kc_ir_stmt *s)
{
    kc_ir_stmt *n = KC_NEW(cl->arena, kc_ir_stmt);
    *n = *s;
    n->var = kc_ir_clone_var(cl, s->var);
    n->index = kc_ir_clone_expr(cl, s->index);
    n->value = kc_ir_clone_expr(cl, s->value);
    n->cmp = kc_ir_clone_expr(cl, s->cmp);
    n->cond = kc_ir_clone_expr(cl, s->cond);
    n->post = kc_ir_clone_expr(cl, s->post);
    if (s->kind == KIR_STORE || s->kind == KIR_ATOMIC) {
        kc_ir_expr *off;
        n->root = clone_root(cl, s->root, &off);
        if (n->index)
            n->index = offset_index(cl, n->index, off);
        else if (off)
            n->index = off;
    }
    memset(&n->then, 0, sizeof(n->then));
    memset(&n->els, 0, sizeof(n->els));
    memset(&n->init, 0, sizeof(n->init));
    memset(&n->body, 0, sizeof(n->body));
    memset(&n->step, 0, sizeof(n->step));
    kc_ir_clone_block(cl, &n->then, &s->then);
    kc_ir_clone_block(cl, &n->els, &s->els);
    kc_ir_clone_block(cl, &n->init, &s->init);
    kc_ir_clone_block(cl, &n->body, &s->body);
    kc_ir_clone_block(cl, &n->step, &s->step);
    if (s->ncases) {
        n->cases = kc_arena_alloc(cl->arena, sizeof(kc_ir_case) * (size_t)s->ncases);
        for (int i = 0; i < s->ncases; i++) {
            n->cases[i] = s->cases[i];
            n->cases[i].values = clone_list(cl, s->cases[i].values, s->cases[i].nvalues);
            memset(&n->cases[i].body, 0, sizeof(n->cases[i].body));
            kc_ir_clone_block(cl, &n->cases[i].body, &s->cases[i].body);
        }
    }
    if (s->kind == KIR_CALL) {
        n->args = clone_list(cl, s->args, s->nargs);
        n->refs = kc_arena_alloc(cl->arena, sizeof(kc_ir_root) * (size_t)(s->nargs + 1));
        n->ref_offsets = kc_arena_alloc(cl->arena, sizeof(kc_ir_expr *) * (size_t)(s->nargs + 1));
        for (int i = 0; i < s->nargs; i++) {
            if (!s->refs[i].var && !s->refs[i].param)
                continue;
            kc_ir_expr *off;
            n->refs[i] = clone_root(cl, s->refs[i], &off);
            kc_ir_expr *mine = kc_ir_clone_expr(cl, s->ref_offsets[i]);
            n->ref_offsets[i] = mine ? offset_index(cl, mine, off) : off;
        }
    }
    return n;
}

void kc_ir_clone_block(kc_ir_clone *cl, kc_ir_block *dst, const kc_ir_block *src)
{
    for (int i = 0; i < src->len; i++)
        kc_ir_push(cl->arena, dst, kc_ir_clone_stmt(cl, src->stmts[i]));
}

/* ---- walking ------------------------------------------------------------------- */

static void walk_stmt(kc_ir_stmt *s, void (*fn)(void *, kc_ir_stmt *), void *user);

void kc_ir_walk(kc_ir_block *b, void (*fn)(void *user, kc_ir_stmt *s), void *user)
{
    for (int i = 0; i < b->len; i++)
        walk_stmt(b->stmts[i], fn, user);
}

static void walk_stmt(kc_ir_stmt *s, void (*fn)(void *, kc_ir_stmt *), void *user)
{
    fn(user, s);
    kc_ir_walk(&s->then, fn, user);
    kc_ir_walk(&s->els, fn, user);
    kc_ir_walk(&s->init, fn, user);
    kc_ir_walk(&s->body, fn, user);
    kc_ir_walk(&s->step, fn, user);
    for (int i = 0; i < s->ncases; i++)
        kc_ir_walk(&s->cases[i].body, fn, user);
}

bool kc_ir_any_stmt(const kc_ir_block *b, bool (*pred)(const kc_ir_stmt *s))
{
    for (int i = 0; i < b->len; i++) {
        const kc_ir_stmt *s = b->stmts[i];
        if (pred(s) || kc_ir_any_stmt(&s->then, pred) || kc_ir_any_stmt(&s->els, pred) ||
            kc_ir_any_stmt(&s->init, pred) || kc_ir_any_stmt(&s->body, pred) ||
            kc_ir_any_stmt(&s->step, pred))
            return true;
        for (int k = 0; k < s->ncases; k++)
            if (kc_ir_any_stmt(&s->cases[k].body, pred))
                return true;
    }
    return false;
}

static void count(void *user, kc_ir_stmt *s)
{
    (void)s;
    (*(long *)user)++;
}

long kc_ir_count_stmts(const kc_ir_block *b)
{
    long n = 0;
    kc_ir_walk((kc_ir_block *)b, count, &n);
    return n;
}

static kc_ir_expr *map_expr(kc_ir_expr *e, kc_ir_expr_fn fn, void *user)
{
    if (!e)
        return NULL;
    e->a = map_expr(e->a, fn, user);
    e->b = map_expr(e->b, fn, user);
    e->c = map_expr(e->c, fn, user);
    for (int i = 0; i < e->nargs; i++)
        e->args[i] = map_expr(e->args[i], fn, user);
    return fn(user, e);
}

typedef struct map_ctx {
    kc_ir_expr_fn fn;
    void *user;
} map_ctx;

static void map_stmt(void *user, kc_ir_stmt *s)
{
    map_ctx *m = user;
    s->index = map_expr(s->index, m->fn, m->user);
    s->value = map_expr(s->value, m->fn, m->user);
    s->cmp = map_expr(s->cmp, m->fn, m->user);
    s->cond = map_expr(s->cond, m->fn, m->user);
    s->post = map_expr(s->post, m->fn, m->user);
    for (int i = 0; i < s->nargs; i++) {
        if (s->args)
            s->args[i] = map_expr(s->args[i], m->fn, m->user);
        if (s->ref_offsets)
            s->ref_offsets[i] = map_expr(s->ref_offsets[i], m->fn, m->user);
    }
    for (int i = 0; i < s->ncases; i++)
        for (int k = 0; k < s->cases[i].nvalues; k++)
            if (s->cases[i].values)
                s->cases[i].values[k] = map_expr(s->cases[i].values[k], m->fn, m->user);
}

void kc_ir_map_exprs(kc_ir_block *b, kc_ir_expr_fn fn, void *user)
{
    map_ctx m = {fn, user};
    kc_ir_walk(b, map_stmt, &m);
}

void kc_ir_map_own_exprs(kc_ir_stmt *s, kc_ir_expr_fn fn, void *user)
{
    map_ctx m = {fn, user};
    map_stmt(&m, s);
}

bool kc_ir_expr_may_fault(const kc_ir_expr *e)
{
    if (!e)
        return false;
    if (e->kind == KIR_LOAD)
        return true;
    if (e->kind == KIR_BINARY && (e->op == KC_OP_DIV || e->op == KC_OP_MOD) && kc_type_is_int(e->type))
        return true;
    if (e->kind == KIR_BUILTIN &&
        ((e->builtin >= KC_B_SUBGROUP_ADD && e->builtin <= KC_B_SUBGROUP_EXCLUSIVE_ADD) ||
         e->builtin == KC_B_CDIV))
        return true;
    if (kc_ir_expr_may_fault(e->a) || kc_ir_expr_may_fault(e->b) || kc_ir_expr_may_fault(e->c))
        return true;
    for (int i = 0; i < e->nargs; i++)
        if (kc_ir_expr_may_fault(e->args[i]))
            return true;
    return false;
}

/* ---- leaving a region early ----------------------------------------------------- */

static kc_ir_var *flag_var(kc_ir_exit_rewrite *rw)
{
    if (!rw->flag)
        rw->flag = kc_ir_new_var(rw->arena, rw->fn, "exit", kc_type_scalar(KC_S_BOOL), rw->fn->loc);
    return rw->flag;
}

static kc_ir_stmt *set(kc_ir_exit_rewrite *rw, kc_ir_var *v, kc_ir_expr *value, kc_loc loc)
{
    kc_ir_stmt *s = kc_ir_new_stmt(rw->arena, KIR_ASSIGN, loc);
    s->var = v;
    s->value = value;
    return s;
}

static kc_ir_expr *truth(kc_ir_exit_rewrite *rw, bool v)
{
    return kc_ir_const_int(rw->arena, kc_type_scalar(KC_S_BOOL), v);
}

/*
 * depth counts the breakable constructs (loops, switches) between the
 * statement and the region's own loop. A jump out at depth 0 is a plain
 * break; deeper, it sets the flag and breaks, and each construct it
 * leaves is followed by "if (flag) break;". A CONTINUE of the dissolved
 * loop only counts loops (a switch does not capture continue).
 */
static bool rewrite_block(kc_ir_exit_rewrite *rw, kc_ir_block *b, int depth, int loop_depth);

static bool rewrite_stmt(kc_ir_exit_rewrite *rw, kc_ir_block *out, kc_ir_stmt *s, int depth, int loop_depth)
{
    bool is_exit = (s->kind == KIR_RETURN && rw->returns) ||
                   (rw->loop_jumps && s->kind == KIR_CONTINUE && loop_depth == 0) ||
                   (rw->loop_jumps && s->kind == KIR_BREAK && depth == 0);
    if (is_exit) {
        if (s->kind == KIR_RETURN && s->value && rw->result)
            kc_ir_push(rw->arena, out, set(rw, rw->result, s->value, s->loc));
        if (s->kind == KIR_BREAK && rw->broke)
            kc_ir_push(rw->arena, out, set(rw, rw->broke, truth(rw, true), s->loc));
        if (depth > 0)
            kc_ir_push(rw->arena, out, set(rw, flag_var(rw), truth(rw, true), s->loc));
        kc_ir_push(rw->arena, out, kc_ir_new_stmt(rw->arena, KIR_BREAK, s->loc));
        return depth > 0;
    }
    bool left = false;
    switch (s->kind) {
    case KIR_IF:
        left |= rewrite_block(rw, &s->then, depth, loop_depth);
        left |= rewrite_block(rw, &s->els, depth, loop_depth);
        break;
    case KIR_LOOP:
        left |= rewrite_block(rw, &s->body, depth + 1, loop_depth + 1);
        left |= rewrite_block(rw, &s->step, depth + 1, loop_depth + 1);
        break;
    case KIR_SWITCH:
        for (int i = 0; i < s->ncases; i++)
            left |= rewrite_block(rw, &s->cases[i].body, depth + 1, loop_depth);
        break;
    default: break;
    }
    kc_ir_push(rw->arena, out, s);
    if (left && (s->kind == KIR_LOOP || s->kind == KIR_SWITCH)) {
        kc_ir_stmt *test = kc_ir_new_stmt(rw->arena, KIR_IF, s->loc);
        test->cond = kc_ir_var_ref(rw->arena, flag_var(rw));
        kc_ir_push(rw->arena, &test->then, kc_ir_new_stmt(rw->arena, KIR_BREAK, s->loc));
        kc_ir_push(rw->arena, out, test);
        return depth > 0;
    }
    return left;
}

static bool rewrite_block(kc_ir_exit_rewrite *rw, kc_ir_block *b, int depth, int loop_depth)
{
    kc_ir_block out = {0};
    bool left = false;
    for (int i = 0; i < b->len; i++)
        left |= rewrite_stmt(rw, &out, b->stmts[i], depth, loop_depth);
    *b = out;
    return left;
}

void kc_ir_rewrite_exits(kc_ir_exit_rewrite *rw, kc_ir_block *body)
{
    rewrite_block(rw, body, 0, 0);
    if (rw->flag) { /* the flag starts false each time the region runs */
        kc_ir_block out = {0};
        kc_ir_push(rw->arena, &out, set(rw, rw->flag, truth(rw, false), rw->fn->loc));
        for (int i = 0; i < body->len; i++)
            kc_ir_push(rw->arena, &out, body->stmts[i]);
        *body = out;
    }
}
