/*
 * dce.c — removes what cannot run or cannot matter:
 *   statements after break/continue/return in the same block;
 *   ifs on constants (the taken side is spliced in) and empty ifs;
 *   loops whose condition is false on entry;
 *   one-iteration wrappers left by inlining and unrolling once nothing
 *     jumps out of them early;
 *   assignments and private-array stores nobody reads (to a fixed point);
 *   variables nothing mentions.
 */
#include "ir_private.h"

#include <string.h>

typedef struct dce {
    kc_ir_module *m;
    kc_ir_func *fn;
    kc_map read;  /* "%p" of a var -> 1 when some expression reads it */
    bool changed;
} dce;

static const char *key(dce *D, const void *p) { return kc_arena_printf(D->m->arena, "%p", p); }

static kc_ir_expr *mark_reads(void *user, kc_ir_expr *e)
{
    dce *D = user;
    if (e->kind == KIR_VAR)
        kc_map_put(D->m->arena, &D->read, key(D, e->var), (void *)1);
    if (e->kind == KIR_LOAD && e->root.var)
        kc_map_put(D->m->arena, &D->read, key(D, e->root.var), (void *)1);
    return e;
}

static bool is_read(dce *D, const kc_ir_var *v)
{
    return v->mem != KIR_MEM_PRIVATE || kc_map_get(&D->read, key(D, v));
}

static bool ends_flow(const kc_ir_stmt *s)
{
    return s->kind == KIR_BREAK || s->kind == KIR_CONTINUE || s->kind == KIR_RETURN;
}

/* Does a break or continue in b leave the loop that holds b? */
static bool leaves_loop(const kc_ir_block *b, bool in_switch)
{
    for (int i = 0; i < b->len; i++) {
        const kc_ir_stmt *s = b->stmts[i];
        if (s->kind == KIR_CONTINUE || (s->kind == KIR_BREAK && !in_switch))
            return true;
        if (s->kind == KIR_IF && (leaves_loop(&s->then, in_switch) || leaves_loop(&s->els, in_switch)))
            return true;
        if (s->kind == KIR_SWITCH)
            for (int k = 0; k < s->ncases; k++)
                if (leaves_loop(&s->cases[k].body, true))
                    return true;
    }
    return false;
}

static void dce_block(dce *D, kc_ir_block *b);

static void splice(dce *D, kc_ir_block *out, kc_ir_block *in)
{
    for (int i = 0; i < in->len; i++)
        kc_ir_push(D->m->arena, out, in->stmts[i]);
    D->changed = true;
}

/* A loop that runs its body once and leaves: `loop { …; break }`. */
static bool is_once(const kc_ir_stmt *s)
{
    if (s->kind != KIR_LOOP || s->cond || s->post || s->step.len || !s->body.len ||
        s->body.stmts[s->body.len - 1]->kind != KIR_BREAK)
        return false;
    kc_ir_block inner = s->body;
    inner.len--;
    return !leaves_loop(&inner, false);
}

static void dce_stmt(dce *D, kc_ir_block *out, kc_ir_stmt *s)
{
    kc_arena *a = D->m->arena;
    switch (s->kind) {
    case KIR_IF:
        if (kc_ir_is_const(s->cond)) {
            kc_ir_block *taken = s->cond->ival ? &s->then : &s->els;
            dce_block(D, taken);
            splice(D, out, taken);
            return;
        }
        dce_block(D, &s->then);
        dce_block(D, &s->els);
        if (!s->then.len && !s->els.len && !kc_ir_expr_may_fault(s->cond)) {
            D->changed = true;
            return;
        }
        break;
    case KIR_LOOP:
        if (s->cond && kc_ir_is_const(s->cond) && !s->cond->ival) {
            splice(D, out, &s->init);
            return;
        }
        dce_block(D, &s->init);
        dce_block(D, &s->body);
        dce_block(D, &s->step);
        if (is_once(s)) {
            splice(D, out, &s->init);
            s->body.len--;
            splice(D, out, &s->body);
            return;
        }
        break;
    case KIR_SWITCH:
        for (int i = 0; i < s->ncases; i++)
            dce_block(D, &s->cases[i].body);
        break;
    case KIR_ASSIGN:
        if (!is_read(D, s->var)) {
            D->changed = true;
            return;
        }
        break;
    case KIR_STORE:
        if (s->root.var && s->root.var->mem == KIR_MEM_PRIVATE && !is_read(D, s->root.var)) {
            D->changed = true;
            return;
        }
        break;
    case KIR_ATOMIC:
        if (s->var && !is_read(D, s->var))
            s->var = NULL;
        break;
    default: break;
    }
    kc_ir_push(a, out, s);
}

static void dce_block(dce *D, kc_ir_block *b)
{
    kc_ir_block out = {0};
    for (int i = 0; i < b->len; i++) {
        dce_stmt(D, &out, b->stmts[i]);
        if (ends_flow(b->stmts[i])) {
            if (i + 1 < b->len)
                D->changed = true;
            break;
        }
    }
    *b = out;
}

static kc_ir_expr *mark_any(void *user, kc_ir_expr *e)
{
    return mark_reads(user, e);
}

static void mark_stmt_vars(void *user, kc_ir_stmt *s)
{
    dce *D = user;
    kc_ir_var *vs[3] = {s->var, s->root.var, NULL};
    for (int i = 0; vs[i] || i < 2; i++)
        if (vs[i])
            kc_map_put(D->m->arena, &D->read, key(D, vs[i]), (void *)1);
}

/* Drops variables that no statement or expression mentions any more. */
static void prune_vars(dce *D, kc_ir_func *f)
{
    D->read = (kc_map){0};
    kc_ir_map_exprs(&f->body, mark_any, D);
    kc_ir_walk(&f->body, mark_stmt_vars, D);
    kc_vec kept = {0};
    for (int i = 0; i < f->vars.len; i++) {
        kc_ir_var *v = f->vars.items[i];
        if (kc_map_get(&D->read, key(D, v)))
            kc_vec_push(D->m->arena, &kept, v);
    }
    f->vars = kept;
}

static void dce_func(dce *D, kc_ir_func *f)
{
    D->fn = f;
    for (int round = 0; round < 64; round++) {
        D->changed = false;
        D->read = (kc_map){0};
        kc_ir_map_exprs(&f->body, mark_reads, D);
        dce_block(D, &f->body);
        if (!D->changed)
            break;
    }
    prune_vars(D, f);
}

bool kc_ir_dce(kc_ir_module *m)
{
    dce D = {m, NULL, {0}, false};
    dce_func(&D, m->kernel);
    for (int i = 0; i < m->helpers.len; i++)
        dce_func(&D, m->helpers.items[i]);
    return true;
}
