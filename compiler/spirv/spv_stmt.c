/*
 * spv_stmt.c — kir statements to structured SPIR-V control flow.
 *
 * Every kir construct becomes its SPIR-V construct (SPIR-V 2.11): an if
 * is a selection with OpSelectionMerge, a loop has a header with
 * OpLoopMerge, a continue target holding the step and the back edge, and a
 * merge; a switch is a selection around OpSwitch whose cases fall through
 * in source order. break branches to the innermost loop's or switch's
 * merge, continue to the innermost loop's continue target.
 *
 * `open` says whether the current block can still get instructions. After
 * a branch it is closed, and the rest of a kir block is dead code and is
 * not emitted. A merge block nobody branches to holds only OpUnreachable.
 */
#include "spv_private.h"

void spv_label(spv *S, uint32_t label)
{
    spv_op(&S->code, SpvOpLabel, 1, (uint32_t[]){label});
    S->open = true;
}

void spv_branch(spv *S, uint32_t target)
{
    if (!S->open)
        return;
    spv_op(&S->code, SpvOpBranch, 1, (uint32_t[]){target});
    S->open = false;
}

/* Starts a merge block; if nothing reaches it, it is unreachable. */
static void merge_block(spv *S, uint32_t merge, bool reached)
{
    spv_label(S, merge);
    if (!reached) {
        spv_op(&S->code, SpvOpUnreachable, 0, NULL);
        S->open = false;
    }
}

static spv_target *push_target(spv *S, uint32_t merge, uint32_t cont, bool is_loop)
{
    if (S->ntargets == (int)KC_COUNT(S->targets)) {
        kc_error_at(S->diag, S->fn->loc, "control flow nested too deeply for the SPIR-V backend");
        S->failed = true;
        return &S->targets[S->ntargets - 1];
    }
    spv_target *t = &S->targets[S->ntargets++];
    *t = (spv_target){merge, cont, is_loop, false};
    return t;
}

/* A Function variable for the backend's own use. */
static uint32_t fn_var(spv *S, uint32_t type)
{
    uint32_t id = spv_id(S);
    spv_op(&S->fnvars, SpvOpVariable, 3,
           (uint32_t[]){spv_type_ptr(S, SpvStorageClassFunction, type), id, SpvStorageClassFunction});
    return id;
}

static void emit_if(spv *S, const kc_ir_stmt *s)
{
    uint32_t c = spv_expr(S, s->cond);
    uint32_t then_l = spv_id(S), else_l = s->els.len ? spv_id(S) : 0, merge = spv_id(S);
    spv_op(&S->code, SpvOpSelectionMerge, 2, (uint32_t[]){merge, SpvSelectionControlMaskNone});
    spv_op(&S->code, SpvOpBranchConditional, 3, (uint32_t[]){c, then_l, else_l ? else_l : merge});
    S->open = false;
    bool reached = !else_l;
    spv_label(S, then_l);
    spv_block(S, &s->then);
    reached |= S->open;
    spv_branch(S, merge);
    if (else_l) {
        spv_label(S, else_l);
        spv_block(S, &s->els);
        reached |= S->open;
        spv_branch(S, merge);
    }
    merge_block(S, merge, reached);
}

static void emit_loop(spv *S, const kc_ir_stmt *s)
{
    spv_block(S, &s->init);
    if (!S->open)
        return;
    uint32_t header = spv_id(S), body = spv_id(S), cont = spv_id(S), merge = spv_id(S);
    spv_branch(S, header);
    spv_label(S, header);
    uint32_t c = s->cond ? spv_expr(S, s->cond) : 0;
    spv_op(&S->code, SpvOpLoopMerge, 3, (uint32_t[]){merge, cont, SpvLoopControlMaskNone});
    if (c)
        spv_op(&S->code, SpvOpBranchConditional, 3, (uint32_t[]){c, body, merge});
    else
        spv_op(&S->code, SpvOpBranch, 1, (uint32_t[]){body});
    S->open = false;
    spv_target *t = push_target(S, merge, cont, true);
    spv_label(S, body);
    spv_block(S, &s->body);
    spv_branch(S, cont);
    bool broke = t->merge_used;
    S->ntargets--;
    /* the continue construct: the step, then the back edge */
    spv_label(S, cont);
    spv_block(S, &s->step);
    if (S->open && s->post) {
        uint32_t p = spv_expr(S, s->post);
        spv_op(&S->code, SpvOpBranchConditional, 3, (uint32_t[]){p, header, merge});
        S->open = false;
    } else {
        spv_branch(S, header);
    }
    merge_block(S, merge, c || s->post || broke);
}

static void emit_switch(spv *S, const kc_ir_stmt *s)
{
    uint32_t v = spv_expr(S, s->value);
    uint32_t merge = spv_id(S), deflt = merge;
    uint32_t *labels = kc_arena_alloc(S->arena, sizeof(uint32_t) * (size_t)(s->ncases + 1));
    int nlit = 0;
    for (int i = 0; i < s->ncases; i++) {
        labels[i] = spv_id(S);
        if (s->cases[i].is_default)
            deflt = labels[i];
        nlit += s->cases[i].nvalues;
    }
    bool wide = kc_scalar_bits(s->value->type->scalar) == 64;
    uint32_t *w = kc_arena_alloc(S->arena, sizeof(uint32_t) * (size_t)(2 + nlit * 3));
    int n = 0;
    w[n++] = v;
    w[n++] = deflt;
    for (int i = 0; i < s->ncases; i++)
        for (int k = 0; k < s->cases[i].nvalues; k++) {
            uint64_t lit = s->cases[i].values[k]->ival;
            w[n++] = (uint32_t)lit;
            if (wide)
                w[n++] = (uint32_t)(lit >> 32);
            w[n++] = labels[i];
        }
    spv_op(&S->code, SpvOpSelectionMerge, 2, (uint32_t[]){merge, SpvSelectionControlMaskNone});
    spv_op(&S->code, SpvOpSwitch, n, w);
    S->open = false;
    spv_target *t = push_target(S, merge, 0, false);
    bool reached = deflt == merge;
    for (int i = 0; i < s->ncases; i++) {
        spv_label(S, labels[i]);
        spv_block(S, &s->cases[i].body);
        if (i + 1 == s->ncases)
            reached |= S->open;
        spv_branch(S, i + 1 < s->ncases ? labels[i + 1] : merge); /* fall through */
    }
    reached |= t->merge_used;
    S->ntargets--;
    merge_block(S, merge, reached);
}

static spv_target *innermost(spv *S, bool loop_only)
{
    for (int i = S->ntargets - 1; i >= 0; i--)
        if (!loop_only || S->targets[i].is_loop)
            return &S->targets[i];
    KC_BROKEN_INVARIANT("break and continue are inside a construct");
    kc_error_at(S->diag, S->fn->loc, "internal error: break or continue outside a construct");
    S->failed = true;
    return NULL;
}

static uint32_t scope_and_ptr(spv *S, const kc_ir_stmt *s, spv_var **v, uint32_t *ptr)
{
    *v = spv_var_of(S, s->root.var ? (const void *)s->root.var : (const void *)s->root.param);
    if (!*v)
        return 0;
    uint32_t index = s->index ? spv_expr(S, s->index) : 0;
    *ptr = spv_elem_ptr(S, *v, index, -1, s->value->type);
    return spv_const_u32(S, (*v)->scope);
}

/* Float atomic add without the extension: a compare-and-swap loop on the
 * bits, retried until no other invocation changed the value in between. */
static uint32_t float_add_cas(spv *S, uint32_t ptr, uint32_t scope, uint32_t value)
{
    uint32_t u = spv_type_scalar(S, KC_S_UINT), f = spv_type_scalar(S, KC_S_FLOAT);
    uint32_t b = spv_type_scalar(S, KC_S_BOOL), none = spv_const_u32(S, 0);
    uint32_t expected = fn_var(S, u);
    uint32_t first = spv_emit_op(S, SpvOpAtomicLoad, u, 3, (uint32_t[]){ptr, scope, none});
    spv_op(&S->code, SpvOpStore, 2, (uint32_t[]){expected, first});
    uint32_t header = spv_id(S), body = spv_id(S), cont = spv_id(S), merge = spv_id(S);
    spv_branch(S, header);
    spv_label(S, header);
    spv_op(&S->code, SpvOpLoopMerge, 3, (uint32_t[]){merge, cont, SpvLoopControlMaskNone});
    spv_op(&S->code, SpvOpBranch, 1, (uint32_t[]){body});
    spv_label(S, body);
    uint32_t e = spv_emit_op(S, SpvOpLoad, u, 1, (uint32_t[]){expected});
    uint32_t sum = spv_emit_op(S, SpvOpFAdd, f, 2,
                               (uint32_t[]){spv_emit_op(S, SpvOpBitcast, f, 1, (uint32_t[]){e}), value});
    uint32_t bits = spv_emit_op(S, SpvOpBitcast, u, 1, (uint32_t[]){sum});
    uint32_t got = spv_emit_op(S, SpvOpAtomicCompareExchange, u, 6, (uint32_t[]){ptr, scope, none, none, bits, e});
    uint32_t done = spv_emit_op(S, SpvOpIEqual, b, 2, (uint32_t[]){got, e});
    spv_op(&S->code, SpvOpStore, 2, (uint32_t[]){expected, got});
    spv_op(&S->code, SpvOpBranch, 1, (uint32_t[]){cont});
    spv_label(S, cont);
    spv_op(&S->code, SpvOpBranchConditional, 3, (uint32_t[]){done, merge, header});
    spv_label(S, merge);
    uint32_t old = spv_emit_op(S, SpvOpLoad, u, 1, (uint32_t[]){expected});
    return spv_emit_op(S, SpvOpBitcast, f, 1, (uint32_t[]){old});
}

static void emit_atomic(spv *S, const kc_ir_stmt *s)
{
    spv_var *v;
    uint32_t ptr = 0, scope = scope_and_ptr(S, s, &v, &ptr);
    if (!v)
        return;
    const kc_type *t = s->value->type;
    uint32_t value = spv_expr(S, s->value), rt = spv_type(S, t), none = spv_const_u32(S, 0), old;
    bool sg = kc_scalar_is_signed(t->scalar);
    if (kc_type_is_float(t)) {
        if (S->o->native_float_atomics) {
            S->need_float_atomic = true;
            old = spv_emit_op(S, SpvOpAtomicFAddEXT, rt, 4, (uint32_t[]){ptr, scope, none, value});
        } else {
            old = float_add_cas(S, ptr, scope, value);
        }
    } else if (s->atomic == KC_B_ATOMIC_CAS) {
        uint32_t cmp = spv_expr(S, s->cmp);
        old = spv_emit_op(S, SpvOpAtomicCompareExchange, rt, 6, (uint32_t[]){ptr, scope, none, none, value, cmp});
    } else {
        SpvOp op = s->atomic == KC_B_ATOMIC_ADD   ? SpvOpAtomicIAdd
                   : s->atomic == KC_B_ATOMIC_MIN ? (sg ? SpvOpAtomicSMin : SpvOpAtomicUMin)
                   : s->atomic == KC_B_ATOMIC_MAX ? (sg ? SpvOpAtomicSMax : SpvOpAtomicUMax)
                                                  : SpvOpAtomicExchange;
        old = spv_emit_op(S, op, rt, 4, (uint32_t[]){ptr, scope, none, value});
    }
    if (s->var) {
        spv_var *r = spv_var_of(S, s->var);
        if (r)
            spv_store_elem(S, r, 0, -1, old, t);
    }
}

static void emit_stmt(spv *S, const kc_ir_stmt *s)
{
    switch (s->kind) {
    case KIR_ASSIGN: {
        spv_var *v = spv_var_of(S, s->var);
        uint32_t x = spv_expr(S, s->value);
        if (v)
            spv_store_elem(S, v, 0, s->lane, x, s->value->type);
        return;
    }
    case KIR_STORE: {
        spv_var *v = spv_var_of(S, s->root.var ? (const void *)s->root.var : (const void *)s->root.param);
        uint32_t i = s->index ? spv_expr(S, s->index) : 0;
        uint32_t x = spv_expr(S, s->value);
        if (v)
            spv_store_elem(S, v, i, s->lane, x, s->value->type);
        return;
    }
    case KIR_IF: emit_if(S, s); return;
    case KIR_LOOP: emit_loop(S, s); return;
    case KIR_SWITCH: emit_switch(S, s); return;
    case KIR_BREAK: {
        spv_target *t = innermost(S, false);
        if (t) {
            t->merge_used = true;
            spv_branch(S, t->merge);
        }
        return;
    }
    case KIR_CONTINUE: {
        spv_target *t = innermost(S, true);
        if (t)
            spv_branch(S, t->cont);
        return;
    }
    case KIR_RETURN:
        spv_op(&S->code, SpvOpReturn, 0, NULL);
        S->open = false;
        return;
    case KIR_BARRIER: {
        /* workgroup execution barrier that also orders shared and buffer
         * memory within the workgroup, like CUDA's __syncthreads */
        uint32_t wg = spv_const_u32(S, SpvScopeWorkgroup);
        uint32_t sem = spv_const_u32(S, SpvMemorySemanticsAcquireReleaseMask | SpvMemorySemanticsWorkgroupMemoryMask |
                                            SpvMemorySemanticsUniformMemoryMask);
        spv_op(&S->code, SpvOpControlBarrier, 3, (uint32_t[]){wg, wg, sem});
        return;
    }
    case KIR_ATOMIC: emit_atomic(S, s); return;
    case KIR_CALL:
        KC_BROKEN_INVARIANT("inlining leaves no call");
        kc_error_at(S->diag, s->loc, "internal error: a call reached the SPIR-V backend");
        S->failed = true;
        return;
    }
}

void spv_block(spv *S, const kc_ir_block *b)
{
    for (int i = 0; i < b->len && S->open && !S->failed; i++)
        emit_stmt(S, b->stmts[i]);
}
