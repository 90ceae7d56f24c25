/*
 * inline.c — replaces every helper call by the helper's body.
 *
 * Scalar parameters become fresh variables assigned from the arguments;
 * array parameters are substituted by the caller's array (plus the row
 * offset when a row of a larger array is passed), so a helper writes
 * exactly the memory C says it writes. A helper whose only return is its
 * last statement is pasted in as is; otherwise its body runs inside a
 * one-iteration loop and each return becomes a break (kc_ir_rewrite_exits),
 * which keeps the control flow structured for SPIR-V.
 */
#include "ir_private.h"

#include <string.h>

typedef struct inliner {
    kc_ir_module *m;
    kc_ir_func *into;
    long budget; /* statements we may still add */
    bool ok;
} inliner;

static bool is_return(const kc_ir_stmt *s) { return s->kind == KIR_RETURN; }

/* Only the last top-level statement returns? */
static bool simple_return(const kc_ir_block *body)
{
    for (int i = 0; i < body->len; i++) {
        const kc_ir_stmt *s = body->stmts[i];
        if (i == body->len - 1 && s->kind == KIR_RETURN)
            return true;
        if (s->kind == KIR_RETURN)
            return false;
        kc_ir_block one = {(kc_ir_stmt **)&body->stmts[i], 1, 1};
        if (kc_ir_any_stmt(&one, is_return))
            return false;
    }
    return true;
}

static void inline_block(inliner *I, kc_ir_block *b);

/* The statements that replace one call. */
static void expand(inliner *I, kc_ir_block *out, const kc_ir_stmt *call)
{
    kc_arena *a = I->m->arena;
    kc_ir_func *f = call->func;
    kc_ir_clone cl;
    kc_ir_clone_init(&cl, a, I->into);
    for (int i = 0; i < f->nparams; i++) {
        kc_ir_param *p = f->params[i];
        if (p->is_buffer) {
            kc_ir_clone_map_ref(&cl, p->ref, call->refs[i], call->ref_offsets[i]);
        } else {
            kc_ir_stmt *s = kc_ir_new_stmt(a, KIR_ASSIGN, call->loc);
            s->var = kc_ir_clone_var(&cl, p->local);
            s->value = call->args[i];
            kc_ir_push(a, out, s);
        }
    }
    kc_ir_block body = {0};
    kc_ir_clone_block(&cl, &body, &f->body);
    if (simple_return(&f->body)) {
        kc_ir_stmt *last = body.len ? body.stmts[body.len - 1] : NULL;
        if (last && last->kind == KIR_RETURN) {
            body.len--;
            if (last->value && call->var) {
                kc_ir_stmt *s = kc_ir_new_stmt(a, KIR_ASSIGN, last->loc);
                s->var = call->var;
                s->value = last->value;
                kc_ir_push(a, &body, s);
            }
        }
        for (int i = 0; i < body.len; i++)
            kc_ir_push(a, out, body.stmts[i]);
        return;
    }
    kc_ir_exit_rewrite rw = {a, I->into, NULL, true, false, call->var, NULL};
    kc_ir_rewrite_exits(&rw, &body);
    kc_ir_stmt *once = kc_ir_new_stmt(a, KIR_LOOP, call->loc);
    once->body = body;
    kc_ir_push(a, &once->body, kc_ir_new_stmt(a, KIR_BREAK, call->loc));
    kc_ir_push(a, out, once);
}

static void inline_stmt(inliner *I, kc_ir_block *out, kc_ir_stmt *s)
{
    if (s->kind != KIR_CALL) {
        inline_block(I, &s->then);
        inline_block(I, &s->els);
        inline_block(I, &s->init);
        inline_block(I, &s->body);
        inline_block(I, &s->step);
        for (int i = 0; i < s->ncases; i++)
            inline_block(I, &s->cases[i].body);
        kc_ir_push(I->m->arena, out, s);
        return;
    }
    I->budget -= kc_ir_count_stmts(&s->func->body);
    if (I->budget < 0) {
        if (I->ok)
            kc_error_at(I->m->diag, s->loc, "inlining '%s' makes kernel '%s' larger than %d statements", s->func->name,
                        I->into->name, KC_IR_MAX_STMTS);
        I->ok = false;
        return;
    }
    kc_ir_block expanded = {0};
    expand(I, &expanded, s);
    inline_block(I, &expanded); /* calls inside the helper */
    for (int i = 0; i < expanded.len; i++)
        kc_ir_push(I->m->arena, out, expanded.stmts[i]);
}

static void inline_block(inliner *I, kc_ir_block *b)
{
    if (!I->ok)
        return;
    kc_ir_block out = {0};
    for (int i = 0; i < b->len; i++)
        inline_stmt(I, &out, b->stmts[i]);
    *b = out;
}

bool kc_ir_inline(kc_ir_module *m)
{
    inliner I = {m, m->kernel, KC_IR_MAX_STMTS, true};
    inline_block(&I, &m->kernel->body);
    m->helpers.len = 0;
    return I.ok;
}
