/*
 * llvm_stmt.c — kir statements to LLVM basic blocks.
 *
 * LLVM needs no structure, so each kir construct is the obvious blocks:
 * an if is then/else/merge; a loop is header (the condition), body,
 * continue (the step and the post-condition) and exit; a switch is LLVM's
 * switch with the cases laid out in source order, each falling into the
 * next. break goes to the innermost loop's or switch's exit, continue to
 * the innermost loop's continue block.
 *
 * `open` says whether the current block can take instructions. After a
 * branch it is closed, and the rest of a kir block is dead (nothing can
 * jump into the middle of one) and is not emitted. A merge block nothing
 * reaches ends in unreachable.
 */
#include "llvm_private.h"

static void merge_block(lw *W, LLVMBasicBlockRef bb, bool reached)
{
    lw_position(W, bb);
    if (!reached) {
        LLVMBuildUnreachable(W->b);
        W->open = false;
    }
}

static lw_jump *push_jump(lw *W, LLVMBasicBlockRef exit, LLVMBasicBlockRef cont)
{
    if (W->njumps == (int)KC_COUNT(W->jumps)) {
        lw_fail(W, "control flow nested too deeply for the LLVM backend");
        return &W->jumps[W->njumps - 1];
    }
    lw_jump *j = &W->jumps[W->njumps++];
    *j = (lw_jump){exit, cont, false};
    return j;
}

static void emit_if(lw *W, const kc_ir_stmt *s)
{
    LLVMValueRef c = lw_expr(W, s->cond);
    LLVMBasicBlockRef then_bb = lw_block(W, "then"), else_bb = s->els.len ? lw_block(W, "else") : NULL,
                      merge = lw_block(W, "endif");
    LLVMBuildCondBr(W->b, c, then_bb, else_bb ? else_bb : merge);
    bool reached = !else_bb;
    lw_position(W, then_bb);
    lw_stmts(W, &s->then);
    reached |= W->open;
    lw_branch(W, merge);
    if (else_bb) {
        lw_position(W, else_bb);
        lw_stmts(W, &s->els);
        reached |= W->open;
        lw_branch(W, merge);
    }
    merge_block(W, merge, reached);
}

/* init; while (cond) { body } step; until !post */
static void emit_loop(lw *W, const kc_ir_stmt *s)
{
    lw_stmts(W, &s->init);
    if (!W->open)
        return;
    LLVMBasicBlockRef header = lw_block(W, "loop"), body = lw_block(W, "body"), cont = lw_block(W, "step"),
                      exit = lw_block(W, "endloop");
    lw_branch(W, header);
    lw_position(W, header);
    if (s->cond)
        LLVMBuildCondBr(W->b, lw_expr(W, s->cond), body, exit);
    else
        LLVMBuildBr(W->b, body);
    lw_jump *j = push_jump(W, exit, cont);
    lw_position(W, body);
    lw_stmts(W, &s->body);
    lw_branch(W, cont);
    bool broke = j->exit_used;
    W->njumps--;
    lw_position(W, cont);
    lw_stmts(W, &s->step);
    if (W->open && s->post) {
        LLVMBuildCondBr(W->b, lw_expr(W, s->post), header, exit);
        W->open = false;
    }
    lw_branch(W, header);
    merge_block(W, exit, s->cond || s->post || broke);
}

static void emit_switch(lw *W, const kc_ir_stmt *s)
{
    LLVMValueRef v = lw_expr(W, s->value);
    LLVMBasicBlockRef exit = lw_block(W, "endswitch"), deflt = exit;
    LLVMBasicBlockRef *labels = kc_arena_alloc(W->arena, sizeof(LLVMBasicBlockRef) * (size_t)(s->ncases + 1));
    for (int i = 0; i < s->ncases; i++) {
        labels[i] = lw_block(W, s->cases[i].is_default ? "default" : "case");
        if (s->cases[i].is_default)
            deflt = labels[i];
    }
    LLVMValueRef sw = LLVMBuildSwitch(W->b, v, deflt, (unsigned)s->ncases);
    for (int i = 0; i < s->ncases; i++)
        for (int k = 0; k < s->cases[i].nvalues; k++)
            LLVMAddCase(sw, LLVMConstInt(LLVMTypeOf(v), s->cases[i].values[k]->ival, 0), labels[i]);
    W->open = false;
    lw_jump *j = push_jump(W, exit, NULL);
    bool reached = deflt == exit;
    for (int i = 0; i < s->ncases; i++) {
        lw_position(W, labels[i]);
        lw_stmts(W, &s->cases[i].body);
        if (i + 1 == s->ncases)
            reached |= W->open;
        lw_branch(W, i + 1 < s->ncases ? labels[i + 1] : exit); /* fall through */
    }
    reached |= j->exit_used;
    W->njumps--;
    merge_block(W, exit, reached);
}

static lw_jump *innermost(lw *W, bool loop_only)
{
    for (int i = W->njumps - 1; i >= 0; i--)
        if (!loop_only || W->jumps[i].cont)
            return &W->jumps[i];
    KC_BROKEN_INVARIANT("break and continue are inside a loop or switch");
    lw_fail(W, "internal error: break or continue outside a loop or switch");
    return NULL;
}

static lw_mem *root_mem(lw *W, const kc_ir_root *r)
{
    return lw_mem_of(W, r->var ? (const void *)r->var : (const void *)r->param);
}

/* A relaxed atomic at the default (system) sync scope, as LLVM's C API
 * builds it: what NVPTX and the host use. */
LLVMValueRef lw_atomic_plain(lw *W, kc_builtin op, const lw_mem *mem, LLVMValueRef ptr, LLVMValueRef v,
                             LLVMValueRef cmp, const kc_type *t)
{
    (void)mem;
    LLVMAtomicOrdering relaxed = LLVMAtomicOrderingMonotonic;
    if (op == KC_B_ATOMIC_CAS) {
        LLVMValueRef r = LLVMBuildAtomicCmpXchg(W->b, ptr, cmp, v, relaxed, relaxed, 0);
        return LLVMBuildExtractValue(W->b, r, 0, "");
    }
    bool sg = kc_scalar_is_signed(t->scalar);
    LLVMAtomicRMWBinOp rmw = op == KC_B_ATOMIC_ADD
                                 ? (kc_type_is_float(t) ? LLVMAtomicRMWBinOpFAdd : LLVMAtomicRMWBinOpAdd)
                             : op == KC_B_ATOMIC_MIN ? (sg ? LLVMAtomicRMWBinOpMin : LLVMAtomicRMWBinOpUMin)
                             : op == KC_B_ATOMIC_MAX ? (sg ? LLVMAtomicRMWBinOpMax : LLVMAtomicRMWBinOpUMax)
                                                     : LLVMAtomicRMWBinOpXchg;
    return LLVMBuildAtomicRMW(W->b, rmw, ptr, v, relaxed, 0);
}

static void emit_atomic(lw *W, const kc_ir_stmt *s)
{
    lw_mem *m = root_mem(W, &s->root);
    if (!m)
        return;
    const kc_type *t = s->value->type;
    LLVMValueRef ptr = lw_elem_ptr(W, m, s->index ? lw_index(W, s->index) : NULL, -1, t);
    LLVMValueRef v = lw_expr(W, s->value), cmp = s->cmp ? lw_expr(W, s->cmp) : NULL;
    if (kc_type_is_float(t))
        W->used_float_atomics = true;
    LLVMValueRef old = W->arch->atomic(W, s->atomic, m, ptr, v, cmp, t);
    if (s->var) {
        lw_mem *r = lw_mem_of(W, s->var);
        if (r)
            lw_store(W, r, NULL, -1, old, t);
    }
}

static void emit_store(lw *W, const kc_ir_stmt *s)
{
    lw_mem *m = s->kind == KIR_ASSIGN ? lw_mem_of(W, s->var) : root_mem(W, &s->root);
    LLVMValueRef i = s->index ? lw_index(W, s->index) : NULL;
    LLVMValueRef x = lw_expr(W, s->value);
    if (m)
        lw_store(W, m, i, s->lane, x, s->value->type);
}

static void emit_stmt(lw *W, const kc_ir_stmt *s)
{
    switch (s->kind) {
    case KIR_ASSIGN:
    case KIR_STORE: emit_store(W, s); return;
    case KIR_IF: emit_if(W, s); return;
    case KIR_LOOP: emit_loop(W, s); return;
    case KIR_SWITCH: emit_switch(W, s); return;
    case KIR_BREAK: {
        lw_jump *j = innermost(W, false);
        if (j) {
            j->exit_used = true;
            lw_branch(W, j->exit);
        }
        return;
    }
    case KIR_CONTINUE: {
        lw_jump *j = innermost(W, true);
        if (j)
            lw_branch(W, j->cont);
        return;
    }
    case KIR_RETURN:
        LLVMBuildRetVoid(W->b);
        W->open = false;
        return;
    case KIR_BARRIER: W->arch->barrier(W); return;
    case KIR_ATOMIC: emit_atomic(W, s); return;
    case KIR_CALL:
        KC_BROKEN_INVARIANT("inlining leaves no call");
        lw_fail(W, "internal error: a call reached the LLVM backend"); return;
    }
}

void lw_stmts(lw *W, const kc_ir_block *b)
{
    for (int i = 0; i < b->len && W->open && !W->failed; i++)
        emit_stmt(W, b->stmts[i]);
}
