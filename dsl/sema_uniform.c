/*
 * sema_uniform.c — every thread of a workgroup must reach a kc_barrier()
 * together (Vulkan, CUDA and HIP all leave the alternative undefined, and
 * the usual result is a hang or silently wrong shared memory). This pass
 * finds barriers, and calls of helpers that contain one, that only some
 * threads may reach: under an if, loop or switch whose condition differs
 * between the threads of a workgroup, or after some threads returned.
 *
 * A value "varies" when it may differ between the threads of one
 * workgroup: the thread ids (kc_local_id, kc_global_id, the subgroup
 * ids), what atomics and subgroup operations return, a load whose index
 * varies, a private array or variable that was ever assigned a varying
 * value or assigned under varying control, and anything computed from
 * those. Parameters, tunables, constants, group ids and loads at a
 * uniform index of a buffer or shared array do not vary. A helper's
 * parameters are taken as uniform (a call with varying arguments gives
 * a varying result), so the check errs towards silence: it never rejects
 * a kernel whose barriers every thread reaches.
 *
 * Variables become varying as the walk finds assignments, so the body is
 * walked until nothing changes (the set only grows), then once more to
 * report.
 */
#include <string.h>

#include "sema_private.h"

typedef struct fn_facts {
    bool has_barrier;     /* the function or a callee calls kc_barrier */
    bool returns_varying; /* with uniform arguments */
} fn_facts;

typedef struct uni {
    sema *S;
    kc_map *facts;      /* function name -> fn_facts* */
    bool *varying;      /* by local id */
    kc_map loops;       /* kc_stmt* (as a key string) of loops some threads leave early */
    bool changed, report, returns_varying;
    int depth;          /* nesting of varying control */
    kc_loc why;         /* the outermost varying condition, or the return */
    const char *why_what;
    bool returned;      /* some threads may have returned */
    int loop_depth_at[64];
    int nloops;
    const kc_stmt *loop_stack[64];
    fn_facts *self;
} uni;

static fn_facts *facts_of(uni *U, const kc_func *f);

static bool varies(uni *U, const kc_expr *e);

static bool any_arg_varies(uni *U, const kc_expr *e)
{
    bool v = false;
    for (int i = 0; i < e->args.len; i++)
        v |= varies(U, e->args.items[i]);
    return v;
}

/* Whether a or b varies; both are walked, never short-circuited, so the
 * assignments inside each are marked. */
static bool either_varies(uni *U, const kc_expr *a, const kc_expr *b)
{
    bool va = varies(U, a);
    bool vb = varies(U, b);
    return va || vb;
}

/* The variable an assignment writes: the root of a[i][j] or v.x. */
static const kc_sym *root_sym(const kc_expr *e)
{
    while (e && (e->kind == KC_E_INDEX || e->kind == KC_E_MEMBER))
        e = e->a;
    return e && e->kind == KC_E_NAME ? e->sym : NULL;
}

static void mark(uni *U, const kc_expr *target, bool v)
{
    const kc_sym *s = root_sym(target);
    if (!s || s->kind != KC_SYM_LOCAL || s->storage == KC_STORE_SHARED || s->index < 0 ||
        s->index >= U->S->fn->nlocals)
        return;
    if ((v || U->depth > 0 || U->returned) && !U->varying[s->index]) {
        U->varying[s->index] = true;
        U->changed = true;
    }
}

static bool call_varies(uni *U, const kc_expr *e)
{
    bool args = any_arg_varies(U, e);
    if (e->func)
        return args || facts_of(U, e->func)->returns_varying;
    if (e->builtin < 0)
        return args;
    switch ((kc_builtin)e->builtin) {
    case KC_B_GROUP_ID:
    case KC_B_GROUP_SIZE:
    case KC_B_NUM_GROUPS:
    case KC_B_SUBGROUP_SIZE: return false;
    case KC_B_LOCAL_ID:
    case KC_B_GLOBAL_ID:
    case KC_B_SUBGROUP_ID:
    case KC_B_SUBGROUP_LOCAL_ID: return true;
    default: break;
    }
    const kc_builtin_info *b = &kc_builtins[e->builtin];
    if (b->rule == KC_RULE_ATOM || b->rule == KC_RULE_CAS || b->rule == KC_RULE_SG1 || b->rule == KC_RULE_SG2)
        return true; /* a subgroup's result differs between subgroups */
    return args;
}

static bool varies(uni *U, const kc_expr *e)
{
    if (!e)
        return false;
    switch (e->kind) {
    case KC_E_INT:
    case KC_E_FLOAT:
    case KC_E_BOOL: return false;
    case KC_E_NAME: {
        const kc_sym *s = e->sym;
        return s && s->kind == KC_SYM_LOCAL && s->storage != KC_STORE_SHARED && s->index >= 0 &&
               s->index < U->S->fn->nlocals && U->varying[s->index];
    }
    case KC_E_ASSIGN: {
        bool v = varies(U, e->b);
        v = (e->has_op && varies(U, e->a)) || v;
        /* a private array written at a varying index differs between threads */
        bool at = e->a->kind == KC_E_INDEX && varies(U, e->a->b);
        mark(U, e->a, v || at);
        return v;
    }
    case KC_E_INCDEC:
        mark(U, e->a, false);
        return varies(U, e->a);
    case KC_E_CALL: return call_varies(U, e);
    case KC_E_INDEX: /* shared memory and buffers hold one value for all threads */
        return either_varies(U, e->a, e->b);
    default: {
        bool v = either_varies(U, e->a, e->b);
        return any_arg_varies(U, e) || varies(U, e->c) || v;
    }
    }
}

/* ---- statements ------------------------------------------------------------------------ */

static void walk(uni *U, const kc_stmt *s);

static void barrier_at(uni *U, kc_loc loc, const char *what)
{
    if (!U->report || (U->depth == 0 && !U->returned))
        return;
    ERR(U->S, loc, "%s is reached by only some threads of the workgroup", what);
    kc_note_at(&U->S->c->diag, U->why, "%s", U->why_what);
    FIX(U->S, "every thread of a workgroup must reach each barrier: guard the work, not the barrier");
}

/* Barriers inside an expression: kc_barrier() itself, or a helper with one. */
static void find_barriers(uni *U, const kc_expr *e)
{
    if (!e)
        return;
    if (e->kind == KC_E_CALL) {
        if (e->builtin == KC_B_BARRIER)
            barrier_at(U, e->loc, "kc_barrier()");
        else if (e->func && facts_of(U, e->func)->has_barrier)
            barrier_at(U, e->loc, kc_arena_printf(&U->S->c->arena, "'%s', which has a kc_barrier(),", e->func->name));
        if (e->builtin == KC_B_BARRIER || (e->func && facts_of(U, e->func)->has_barrier))
            U->self->has_barrier = true;
    }
    find_barriers(U, e->a);
    find_barriers(U, e->b);
    find_barriers(U, e->c);
    for (int i = 0; i < e->args.len; i++)
        find_barriers(U, e->args.items[i]);
}

static void expr_stmt(uni *U, const kc_expr *e)
{
    find_barriers(U, e);
    varies(U, e);
}

/* Runs body with the condition's variance added to the control. */
static void under(uni *U, const kc_expr *cond, bool v, const kc_stmt *a, const kc_stmt *b)
{
    if (v && U->depth++ == 0 && !U->returned) {
        U->why = cond ? cond->loc : a->loc;
        U->why_what = "the condition here differs between threads";
    }
    walk(U, a);
    walk(U, b);
    if (v)
        U->depth--;
}

static char *loop_key(uni *U, const kc_stmt *s)
{
    return kc_arena_printf(&U->S->c->arena, "%p", (const void *)s);
}

static void loop(uni *U, const kc_stmt *s)
{
    bool v = varies(U, s->expr) || kc_map_get(&U->loops, loop_key(U, s)) != NULL;
    if (U->nloops < 64) {
        U->loop_stack[U->nloops] = s;
        U->loop_depth_at[U->nloops] = U->depth;
    }
    U->nloops++;
    walk(U, s->init);
    if (s->step)
        varies(U, s->step);
    /* the condition again: the body may have made its variables vary */
    v |= varies(U, s->expr);
    under(U, s->expr, v, s->then, NULL);
    if (s->step)
        expr_stmt(U, s->step);
    U->nloops--;
}

/* A break, continue or return under varying control inside a loop makes
 * the threads run different numbers of iterations. */
static void leave(uni *U, const kc_stmt *s)
{
    int n = U->nloops < 64 ? U->nloops : 64;
    for (int i = n - 1; i >= 0; i--) {
        if (U->depth > U->loop_depth_at[i] && !kc_map_get(&U->loops, loop_key(U, U->loop_stack[i]))) {
            kc_map_put(&U->S->c->arena, &U->loops, loop_key(U, U->loop_stack[i]), (void *)s);
            U->changed = true;
        }
        if (s->kind != KC_S_RETURN)
            break;
    }
}

static void walk(uni *U, const kc_stmt *s)
{
    if (!s)
        return;
    switch (s->kind) {
    case KC_S_EXPR: expr_stmt(U, s->expr); break;
    case KC_S_DECL:
        for (int i = 0; i < s->body.len; i++) {
            kc_sym *sym = s->body.items[i];
            if (sym->storage == KC_STORE_SHARED || !sym->init)
                continue;
            find_barriers(U, sym->init);
            kc_expr name = {.kind = KC_E_NAME, .sym = sym};
            mark(U, &name, varies(U, sym->init));
        }
        break;
    case KC_S_BLOCK:
        for (int i = 0; i < s->body.len; i++)
            walk(U, s->body.items[i]);
        break;
    case KC_S_IF:
        find_barriers(U, s->expr);
        under(U, s->expr, varies(U, s->expr), s->then, s->els);
        break;
    case KC_S_SWITCH:
        find_barriers(U, s->expr);
        under(U, s->expr, varies(U, s->expr), s->then, NULL);
        break;
    case KC_S_FOR:
    case KC_S_WHILE:
    case KC_S_DO: loop(U, s); break;
    case KC_S_BREAK:
    case KC_S_CONTINUE: leave(U, s); break;
    case KC_S_RETURN:
        find_barriers(U, s->expr);
        if (varies(U, s->expr) || U->depth > 0)
            U->returns_varying = true;
        if (U->depth > 0) {
            leave(U, s);
            if (!U->returned) {
                U->returned = true;
                U->why = s->loc;
                U->why_what = "some threads may return here";
            }
        }
        break;
    default: break;
    }
}

static void check_function(uni *U, const kc_func *f)
{
    bool *varying = kc_arena_alloc(&U->S->c->arena, sizeof(bool) * (size_t)(f->nlocals + 1));
    memset(varying, 0, sizeof(bool) * (size_t)(f->nlocals + 1));
    U->varying = varying;
    kc_func *saved = U->S->fn;
    U->S->fn = (kc_func *)f;
    for (int round = 0; round < 1000; round++) {
        U->changed = false;
        U->depth = U->nloops = 0;
        U->returned = U->returns_varying = false;
        walk(U, f->body);
        if (!U->changed)
            break;
    }
    U->report = true;
    U->depth = U->nloops = 0;
    U->returned = false;
    walk(U, f->body);
    U->report = false;
    U->S->fn = saved;
}

static fn_facts *facts_of(uni *U, const kc_func *f)
{
    fn_facts *k = kc_map_get(U->facts, f->name);
    if (k)
        return k;
    k = KC_NEW(&U->S->c->arena, fn_facts);
    kc_map_put(&U->S->c->arena, U->facts, f->name, k);
    if (!f->body)
        return k;
    uni V = {.S = U->S, .facts = U->facts, .self = k};
    check_function(&V, f);
    k->returns_varying = V.returns_varying;
    return k;
}

void sema_check_barriers(sema *S, kc_program *p)
{
    kc_map facts = {0};
    for (int i = 0; i < p->funcs.len; i++) {
        uni U = {.S = S, .facts = &facts};
        facts_of(&U, p->funcs.items[i]);
    }
}
