/*
 * unroll.c — full unrolling of KC_UNROLL loops (and of the short loops
 * the compiler itself makes, such as zero-filling an initialised array).
 *
 * A loop unrolls when it counts a variable from a constant start, its
 * condition and step depend only on that variable and constants, and the
 * body never assigns the variable: `for (int t = 0; t < TM; t++)` once TM
 * is bound. The trip count is found by running the loop header at compile
 * time. Outer loops unroll first, so an inner bound that uses the outer
 * counter (a triangle) becomes constant too.
 *
 * Each copy of the body sees the counter as a constant. With break or
 * continue inside, every copy runs in a one-iteration loop (continue
 * leaves it), all copies in another (break leaves that): structured
 * control flow, as SPIR-V needs.
 */
#include "ir_private.h"

#define SMALL_TRIPS 16
#define SMALL_BODY 64
/* A loop the compiler made also unrolls when all its copies come to at
 * most this many statements: zero-filling `float2 v[64] = {0}` is 64
 * stores, and left a loop it indexes v at run time, which puts every
 * such array in scratch memory on lavapipe and AMD (kc info says so;
 * stft's register FFT ran 5x slower for it). */
#define SMALL_TOTAL 1024

typedef struct unroller {
    kc_ir_module *m;
    kc_ir_func *fn;
    bool ok;
    long total; /* statements in the kernel so far, every copy counted */
} unroller;

typedef struct assigns_ctx {
    const kc_ir_var *v;
    bool hit;
} assigns_ctx;

static void assigns_var(void *user, kc_ir_stmt *s)
{
    assigns_ctx *c = user;
    if ((s->kind == KIR_ASSIGN || s->kind == KIR_ATOMIC || s->kind == KIR_CALL) && s->var == c->v)
        c->hit = true;
}


/* Does the body break or continue this loop (not an inner one)? */
static bool jumps_out(const kc_ir_block *b, bool in_switch)
{
    for (int i = 0; i < b->len; i++) {
        const kc_ir_stmt *s = b->stmts[i];
        if (s->kind == KIR_CONTINUE || (s->kind == KIR_BREAK && !in_switch))
            return true;
        if (s->kind == KIR_IF && (jumps_out(&s->then, in_switch) || jumps_out(&s->els, in_switch)))
            return true;
        if (s->kind == KIR_SWITCH)
            for (int k = 0; k < s->ncases; k++)
                if (jumps_out(&s->cases[k].body, true))
                    return true;
    }
    return false;
}

/* Evaluates e with v bound to value; false unless it folds to a constant. */
static bool eval_at(unroller *U, const kc_ir_expr *e, const kc_ir_var *v, kc_ir_expr *value, int64_t *out)
{
    kc_ir_clone cl;
    kc_ir_clone_init(&cl, U->m->arena, NULL);
    cl.subst_var = v;
    cl.subst_value = value;
    kc_ir_expr *r = kc_ir_fold_expr(U->m->arena, kc_ir_clone_expr(&cl, e));
    return kc_ir_const_value(r, out);
}

typedef struct trip {
    kc_ir_var *var;
    int64_t *values; /* the counter at the start of each iteration */
    int n;
    int64_t final;   /* the counter when the loop ends */
} trip;

static bool fail(unroller *U, const kc_ir_stmt *loop, const char *why)
{
    if (loop->unroll) {
        kc_error_at(U->m->diag, loop->loc, "KC_UNROLL cannot unroll this loop: %s", why);
        kc_diag_fix(U->m->diag, "write it as for (int i = A; i < B; i += C) with A, B, C constants or tunables");
        U->ok = false;
    }
    return false;
}

/* Finds the counter and runs the header at compile time. */
static bool count_trips(unroller *U, const kc_ir_stmt *loop, trip *t)
{
    if (loop->step.len != 1 || loop->step.stmts[0]->kind != KIR_ASSIGN || loop->step.stmts[0]->lane >= 0)
        return fail(U, loop, "its step is not a single update of a counter");
    const kc_ir_stmt *step = loop->step.stmts[0];
    t->var = step->var;
    if (t->var->type->kind != KC_TY_SCALAR || !kc_type_is_int(t->var->type))
        return fail(U, loop, "its counter is not an integer");
    const kc_ir_expr *start = NULL;
    for (int i = 0; i < loop->init.len; i++)
        if (loop->init.stmts[i]->kind == KIR_ASSIGN && loop->init.stmts[i]->var == t->var)
            start = loop->init.stmts[i]->value;
    int64_t v;
    if (!start || !kc_ir_const_value(start, &v))
        return fail(U, loop, "its counter does not start at a constant");
    if (!loop->cond && !loop->post)
        return fail(U, loop, "it has no condition");
    assigns_ctx ac = {t->var, false};
    kc_ir_walk((kc_ir_block *)&loop->body, assigns_var, &ac);
    if (ac.hit)
        return fail(U, loop, "its body changes the counter");
    t->values = kc_arena_alloc(U->m->arena, sizeof(int64_t) * (KC_IR_MAX_UNROLL_TRIPS + 1));
    t->n = 0;
    for (;;) {
        kc_ir_expr *at = kc_ir_const_int(U->m->arena, t->var->type, (uint64_t)v);
        int64_t c = 1;
        if (loop->cond && !eval_at(U, loop->cond, t->var, at, &c))
            return fail(U, loop, "its trip count is not a compile-time constant");
        if (!c)
            break;
        if (t->n == KC_IR_MAX_UNROLL_TRIPS)
            return fail(U, loop, kc_arena_printf(U->m->arena, "it runs more than %d times", KC_IR_MAX_UNROLL_TRIPS));
        t->values[t->n++] = v;
        if (!eval_at(U, step->value, t->var, at, &v))
            return fail(U, loop, "its step is not a compile-time constant");
        at = kc_ir_const_int(U->m->arena, t->var->type, (uint64_t)v);
        if (loop->post && (!eval_at(U, loop->post, t->var, at, &c) || !c))
            break;
    }
    t->final = v;
    return true;
}

static kc_ir_stmt *assign_const(unroller *U, kc_ir_var *v, int64_t value, kc_loc loc)
{
    kc_ir_stmt *s = kc_ir_new_stmt(U->m->arena, KIR_ASSIGN, loc);
    s->var = v;
    s->value = kc_ir_const_int(U->m->arena, v->type, (uint64_t)value);
    return s;
}

static void unroll_block(unroller *U, kc_ir_block *b);

/* The straight-line (or once-looped) copies of a loop. */
static void expand(unroller *U, kc_ir_block *out, kc_ir_stmt *loop, const trip *t)
{
    kc_arena *a = U->m->arena;
    for (int i = 0; i < loop->init.len; i++)
        kc_ir_push(a, out, loop->init.stmts[i]);
    bool jumps = jumps_out(&loop->body, false);
    kc_ir_block body = loop->body;
    kc_ir_var *broke = NULL;
    if (jumps) {
        broke = kc_ir_new_var(a, U->fn, "broke", kc_type_scalar(KC_S_BOOL), loop->loc);
        kc_ir_exit_rewrite rw = {a, U->fn, NULL, false, true, NULL, broke};
        kc_ir_clone cl;
        kc_ir_clone_init(&cl, a, NULL);
        body = (kc_ir_block){0};
        kc_ir_clone_block(&cl, &body, &loop->body);
        kc_ir_rewrite_exits(&rw, &body);
    }
    kc_ir_block seq = {0};
    if (jumps)
        kc_ir_push(a, out, assign_const(U, broke, 0, loop->loc));
    for (int k = 0; k < t->n; k++) {
        kc_ir_clone cl;
        kc_ir_clone_init(&cl, a, NULL);
        cl.subst_var = t->var;
        cl.subst_value = kc_ir_const_int(a, t->var->type, (uint64_t)t->values[k]);
        kc_ir_push(a, &seq, assign_const(U, t->var, t->values[k], loop->loc));
        kc_ir_block copy = {0};
        kc_ir_clone_block(&cl, &copy, &body);
        kc_ir_fold_block(a, &copy);
        if (!jumps) {
            for (int i = 0; i < copy.len; i++)
                kc_ir_push(a, &seq, copy.stmts[i]);
            continue;
        }
        kc_ir_stmt *once = kc_ir_new_stmt(a, KIR_LOOP, loop->loc);
        once->body = copy;
        kc_ir_push(a, &once->body, kc_ir_new_stmt(a, KIR_BREAK, loop->loc));
        kc_ir_push(a, &seq, once);
        kc_ir_stmt *test = kc_ir_new_stmt(a, KIR_IF, loop->loc);
        test->cond = kc_ir_var_ref(a, broke);
        kc_ir_push(a, &test->then, kc_ir_new_stmt(a, KIR_BREAK, loop->loc));
        kc_ir_push(a, &seq, test);
    }
    kc_ir_push(a, &seq, assign_const(U, t->var, t->final, loop->loc));
    unroll_block(U, &seq); /* inner loops, now with constants */
    if (!jumps) {
        for (int i = 0; i < seq.len; i++)
            kc_ir_push(a, out, seq.stmts[i]);
        return;
    }
    kc_ir_stmt *outer = kc_ir_new_stmt(a, KIR_LOOP, loop->loc);
    outer->body = seq;
    kc_ir_push(a, &outer->body, kc_ir_new_stmt(a, KIR_BREAK, loop->loc));
    kc_ir_push(a, out, outer);
}

static bool has_continue(const kc_ir_stmt *s) { return s->kind == KIR_CONTINUE; }

/*
 * `int i = 0; KC_UNROLL while (i < N) { …; i++; }` (and do/while) counts
 * like a for loop: the counter is set to a constant by the last straight
 * assignment before the loop, and the body's last statement steps it.
 * Without a continue (which would skip the step) the loop is the same as
 * for (i = 0; i < N; i++) { … }, so it gets that shape and unrolls as one.
 */
static void as_for_loop(unroller *U, const kc_ir_block *before, kc_ir_stmt *s)
{
    if (s->init.len || s->step.len || !s->body.len)
        return;
    kc_ir_stmt *last = s->body.stmts[s->body.len - 1];
    if (last->kind != KIR_ASSIGN || last->lane >= 0 || kc_ir_any_stmt(&s->body, has_continue))
        return;
    const kc_ir_stmt *start = NULL;
    for (int i = before->len - 1; i >= 0 && !start; i--) {
        const kc_ir_stmt *b = before->stmts[i];
        if (b->kind != KIR_ASSIGN)
            return; /* control flow might change the counter */
        if (b->var == last->var)
            start = b;
    }
    int64_t v;
    if (!start || !kc_ir_const_value(start->value, &v))
        return;
    kc_ir_push(U->m->arena, &s->init, (kc_ir_stmt *)start);
    kc_ir_push(U->m->arena, &s->step, last);
    s->body.len--;
}

static void unroll_stmt(unroller *U, kc_ir_block *out, kc_ir_stmt *s)
{
    if (s->kind == KIR_LOOP && (s->unroll || s->unroll_small) && U->ok) {
        as_for_loop(U, out, s);
        trip t;
        if (count_trips(U, s, &t)) {
            long size = kc_ir_count_stmts(&s->body) + 2;
            bool small = (t.n <= SMALL_TRIPS && size <= SMALL_BODY) || (long)t.n * size <= SMALL_TOTAL;
            if (s->unroll && size * t.n > KC_IR_MAX_STMTS) {
                fail(U, s, kc_arena_printf(U->m->arena, "%d copies of its body would exceed %d statements", t.n,
                                           KC_IR_MAX_STMTS));
            } else if ((s->unroll || small) && U->total + size * t.n > KC_IR_MAX_STMTS) {
                /* each loop fits alone, but nested ones multiply: two
                 * 4,096-trip loops once grew kc emit past 5 GB. A loop the
                 * compiler chose to unroll just stays a loop. */
                if (s->unroll) {
                    kc_error_at(U->m->diag, s->loc,
                                "KC_UNROLL cannot unroll this loop: %d copies would make the kernel more than %d "
                                "statements (nested unrolled loops multiply)",
                                t.n, KC_IR_MAX_STMTS);
                    kc_diag_fix(U->m->diag, "unroll only the inner loop, or fewer trips");
                    U->ok = false;
                }
            } else if (s->unroll || small) {
                U->total += size * t.n;
                expand(U, out, s, &t);
                return;
            }
        }
    }
    unroll_block(U, &s->then);
    unroll_block(U, &s->els);
    unroll_block(U, &s->init);
    unroll_block(U, &s->body);
    unroll_block(U, &s->step);
    for (int i = 0; i < s->ncases; i++)
        unroll_block(U, &s->cases[i].body);
    s->unroll_small = false;
    kc_ir_push(U->m->arena, out, s);
}

static void unroll_block(unroller *U, kc_ir_block *b)
{
    kc_ir_block out = {0};
    for (int i = 0; i < b->len; i++)
        unroll_stmt(U, &out, b->stmts[i]);
    *b = out;
}

bool kc_ir_unroll(kc_ir_module *m)
{
    unroller U = {m, m->kernel, true, kc_ir_count_stmts(&m->kernel->body)};
    unroll_block(&U, &m->kernel->body);
    return U.ok;
}
