/*
 * fold.c — constant folding and the algebraic identities that are exact.
 *
 * Arithmetic follows the device: integers wrap at their width, float
 * results are rounded to float (or half) once. Nothing is folded whose
 * result the device leaves undefined: division by zero, INT_MIN / -1,
 * shifts by the width or more, float-to-int conversions out of range.
 * Math built-ins are not folded here, so a constant sinf(x) gets the same
 * answer as a variable one.
 */
#include "ir_private.h"

#include <math.h>
#include <string.h>

/* Rounds to the nearest half (binary16), ties to even. */
double kc_ir_round_half(double x)
{
    if (isnan(x) || isinf(x) || x == 0)
        return x;
    double ax = fabs(x);
    if (ax >= 65520.0) /* rounds up past the largest half, 65504 */
        return x < 0 ? -INFINITY : INFINITY;
    int e;
    frexp(ax, &e);               /* ax = m * 2^e, m in [0.5, 1) */
    int q = e - 11 < -24 ? -24 : e - 11; /* quantum: 11 significant bits, subnormals at 2^-24 */
    double r = nearbyint(ldexp(ax, -q));  /* round to nearest even (default mode) */
    return copysign(ldexp(r, q), x);
}

static double round_to(const kc_type *t, double v)
{
    return t->scalar == KC_S_HALF ? kc_ir_round_half(v) : (double)(float)v;
}

typedef struct folder {
    kc_arena *a;
} folder;

static kc_ir_expr *cint(folder *F, const kc_type *t, uint64_t v) { return kc_ir_const_int(F->a, t, v); }

/* Sign- or zero-extends the stored bits of an integer constant. */
static int64_t sval(const kc_ir_expr *e)
{
    int64_t v;
    kc_ir_const_value(e, &v);
    return v;
}

static bool is_int_scalar(const kc_type *t)
{
    return t->kind == KC_TY_SCALAR && (kc_type_is_int(t) || t->scalar == KC_S_BOOL);
}

static bool is_float_scalar(const kc_type *t) { return t->kind == KC_TY_SCALAR && kc_type_is_float(t); }

static kc_ir_expr *fold_cast(folder *F, kc_ir_expr *e)
{
    const kc_ir_expr *x = e->a;
    const kc_type *to = e->type;
    if (!kc_ir_is_const(x) || x->type->kind != KC_TY_SCALAR || to->kind != KC_TY_SCALAR)
        return e;
    if (is_float_scalar(x->type)) {
        if (is_float_scalar(to))
            return kc_ir_const_float(F->a, to, round_to(to, x->fval));
        if (to->scalar == KC_S_BOOL)
            return cint(F, to, x->fval != 0);
        double t = trunc(x->fval);
        bool sign = kc_scalar_is_signed(to->scalar);
        int bits = kc_scalar_bits(to->scalar);
        double lo = sign ? -ldexp(1, bits - 1) : 0, hi = sign ? ldexp(1, bits - 1) : ldexp(1, bits);
        if (isnan(t) || t < lo || t >= hi)
            return e; /* undefined on the device: leave it to the device */
        return cint(F, to, sign ? (uint64_t)(int64_t)t : (uint64_t)t);
    }
    int64_t v = sval(x);
    if (is_float_scalar(to)) {
        double d = x->type->scalar == KC_S_ULONG ? (double)x->ival : (double)v;
        /* int64 to double may round once already: do it via float directly */
        float f = x->type->scalar == KC_S_ULONG ? (float)x->ival : (float)v;
        return kc_ir_const_float(F->a, to, to->scalar == KC_S_HALF ? kc_ir_round_half(d) : (double)f);
    }
    if (to->scalar == KC_S_BOOL)
        return cint(F, to, v != 0);
    return cint(F, to, (uint64_t)v);
}

static kc_ir_expr *fold_unary(folder *F, kc_ir_expr *e)
{
    const kc_ir_expr *x = e->a;
    if (!kc_ir_is_const(x) || x->type->kind != KC_TY_SCALAR)
        return e;
    if (is_float_scalar(x->type))
        return e->op == KC_OP_NEG ? kc_ir_const_float(F->a, e->type, -x->fval) : e;
    switch (e->op) {
    case KC_OP_NEG: return cint(F, e->type, 0 - x->ival);
    case KC_OP_BNOT: return cint(F, e->type, ~x->ival);
    case KC_OP_NOT: return cint(F, e->type, x->ival == 0);
    default: return e;
    }
}

static bool is_const_eq(const kc_ir_expr *e, double v)
{
    if (!kc_ir_is_const(e) || e->type->kind != KC_TY_SCALAR)
        return false;
    if (is_float_scalar(e->type))
        return e->fval == v && !signbit(e->fval);
    return sval(e) == (int64_t)v;
}

static kc_ir_expr *fold_int_binary(folder *F, kc_ir_expr *e)
{
    const kc_type *t = e->a->type; /* operand type; e->type is bool for comparisons */
    bool sign = kc_scalar_is_signed(t->scalar);
    int bits = kc_scalar_bits(t->scalar);
    int64_t a = sval(e->a), b = sval(e->b);
    uint64_t ua = e->a->ival, ub = e->b->ival, r;
    switch (e->op) {
    case KC_OP_ADD: r = ua + ub; break;
    case KC_OP_SUB: r = ua - ub; break;
    case KC_OP_MUL: r = ua * ub; break;
    case KC_OP_DIV:
    case KC_OP_MOD:
        if (b == 0 || (sign && b == -1 && a == (bits == 64 ? INT64_MIN : -(1ll << (bits - 1)))))
            return e;
        if (sign)
            r = (uint64_t)(e->op == KC_OP_DIV ? a / b : a % b);
        else
            r = e->op == KC_OP_DIV ? ua / ub : ua % ub;
        break;
    case KC_OP_SHL:
    case KC_OP_SHR:
        if (ub >= (uint64_t)bits)
            return e;
        if (e->op == KC_OP_SHL)
            r = ua << ub;
        else
            r = sign ? (uint64_t)(a >> b) : ua >> ub;
        break;
    case KC_OP_AND: r = ua & ub; break;
    case KC_OP_OR: r = ua | ub; break;
    case KC_OP_XOR: r = ua ^ ub; break;
    case KC_OP_LAND: r = ua && ub; break;
    case KC_OP_LOR: r = ua || ub; break;
    case KC_OP_LT: r = sign ? a < b : ua < ub; break;
    case KC_OP_LE: r = sign ? a <= b : ua <= ub; break;
    case KC_OP_GT: r = sign ? a > b : ua > ub; break;
    case KC_OP_GE: r = sign ? a >= b : ua >= ub; break;
    case KC_OP_EQ: r = ua == ub; break;
    case KC_OP_NE: r = ua != ub; break;
    default: return e;
    }
    return cint(F, e->type, r);
}

static kc_ir_expr *fold_float_binary(folder *F, kc_ir_expr *e)
{
    double a = e->a->fval, b = e->b->fval;
    switch (e->op) {
    case KC_OP_ADD: return kc_ir_const_float(F->a, e->type, round_to(e->type, a + b));
    case KC_OP_SUB: return kc_ir_const_float(F->a, e->type, round_to(e->type, a - b));
    case KC_OP_MUL: return kc_ir_const_float(F->a, e->type, round_to(e->type, a * b));
    case KC_OP_DIV: return kc_ir_const_float(F->a, e->type, round_to(e->type, a / b));
    case KC_OP_LT: return cint(F, e->type, a < b);
    case KC_OP_LE: return cint(F, e->type, a <= b);
    case KC_OP_GT: return cint(F, e->type, a > b);
    case KC_OP_GE: return cint(F, e->type, a >= b);
    case KC_OP_EQ: return cint(F, e->type, a == b);
    case KC_OP_NE: return cint(F, e->type, a != b);
    default: return e;
    }
}

/* Identities that hold for every value, including NaN and -0.0. */
static kc_ir_expr *simplify(kc_ir_expr *e)
{
    bool ints = kc_type_is_int(e->type);
    const kc_ir_expr *a = e->a, *b = e->b;
    switch (e->op) {
    case KC_OP_ADD:
        if (ints && is_const_eq(b, 0)) return e->a;
        if (ints && is_const_eq(a, 0)) return e->b;
        break;
    case KC_OP_SUB:
        if (ints && is_const_eq(b, 0)) return e->a;
        break;
    case KC_OP_MUL:
        if (is_const_eq(b, 1) && b->type->kind == KC_TY_SCALAR && e->a->type == e->type) return e->a;
        if (is_const_eq(a, 1) && a->type->kind == KC_TY_SCALAR && e->b->type == e->type) return e->b;
        if (ints && e->type->kind == KC_TY_SCALAR && is_const_eq(b, 0)) return e->b;
        if (ints && e->type->kind == KC_TY_SCALAR && is_const_eq(a, 0)) return e->a;
        break;
    case KC_OP_DIV:
        if (is_const_eq(b, 1) && e->a->type == e->type) return e->a;
        break;
    case KC_OP_SHL:
    case KC_OP_SHR:
        if (ints && is_const_eq(b, 0)) return e->a;
        break;
    case KC_OP_LAND:
        if (kc_ir_is_const(a)) return a->ival ? e->b : e->a;
        if (kc_ir_is_const(b) && b->ival) return e->a;
        break;
    case KC_OP_LOR:
        if (kc_ir_is_const(a)) return a->ival ? e->a : e->b;
        if (kc_ir_is_const(b) && !b->ival) return e->a;
        break;
    default: break;
    }
    return e;
}

static kc_ir_expr *fold_binary(folder *F, kc_ir_expr *e)
{
    if (kc_ir_is_const(e->a) && kc_ir_is_const(e->b) && e->a->type->kind == KC_TY_SCALAR &&
        e->b->type->kind == KC_TY_SCALAR) {
        if (is_int_scalar(e->a->type))
            return fold_int_binary(F, e);
        return fold_float_binary(F, e);
    }
    return simplify(e);
}

static kc_ir_expr *fold_builtin(folder *F, kc_ir_expr *e)
{
    if (e->nargs != 2 || !kc_ir_is_const(e->args[0]) || !kc_ir_is_const(e->args[1]) ||
        !is_int_scalar(e->type))
        return e;
    int64_t a = sval(e->args[0]), b = sval(e->args[1]), r;
    bool sign = kc_scalar_is_signed(e->type->scalar);
    uint64_t ua = e->args[0]->ival, ub = e->args[1]->ival;
    switch (e->builtin) {
    case KC_B_MIN: return cint(F, e->type, sign ? (uint64_t)(a < b ? a : b) : (ua < ub ? ua : ub));
    case KC_B_MAX: return cint(F, e->type, sign ? (uint64_t)(a > b ? a : b) : (ua > ub ? ua : ub));
    case KC_B_CDIV: {
        int64_t args[2] = {a, b};
        if (!sign || !kc_iexpr_apply(KC_IX_CDIV, args, &r, NULL, 0))
            return e;
        return cint(F, e->type, (uint64_t)r);
    }
    default: return e;
    }
}

static kc_ir_expr *fold_expr(void *user, kc_ir_expr *e)
{
    folder *F = user;
    switch (e->kind) {
    case KIR_CAST:
        if (kc_type_equal(e->type, e->a->type))
            return e->a;
        return fold_cast(F, e);
    case KIR_UNARY: return fold_unary(F, e);
    case KIR_BINARY: return fold_binary(F, e);
    case KIR_SELECT:
        if (kc_ir_is_const(e->a))
            return e->a->ival ? e->b : e->c;
        return e;
    case KIR_LANE:
        if (e->a->kind == KIR_VEC)
            return e->a->nargs == 1 ? e->a->args[0] : e->a->args[e->lane];
        return e;
    case KIR_BUILTIN: return fold_builtin(F, e);
    default: return e;
    }
}

static void fold_func(folder *F, kc_ir_func *f)
{
    kc_ir_map_exprs(&f->body, fold_expr, F);
}

/* Folds one expression tree in place, bottom-up. */
static kc_ir_expr *fold_tree(folder *F, kc_ir_expr *e)
{
    if (!e)
        return e;
    e->a = fold_tree(F, e->a);
    e->b = fold_tree(F, e->b);
    e->c = fold_tree(F, e->c);
    for (int i = 0; i < e->nargs; i++)
        e->args[i] = fold_tree(F, e->args[i]);
    return fold_expr(F, e);
}

kc_ir_expr *kc_ir_fold_expr(kc_arena *a, kc_ir_expr *e)
{
    folder F = {a};
    return fold_tree(&F, e);
}

/*
 * Constant propagation in program order: after `nh = 4` (a scalar local
 * assigned a constant) every read of nh up to its next write is 4, and
 * folds. The single-write rule below cannot see this once a loop is
 * unrolled, since each copy of the body writes nh again with its own
 * constant (`int nh = BKV >> (st + 1)` in a KC_UNROLL loop over st); this
 * makes the inner loop's bound `e < nh` and an index `s[e + nh]` constant,
 * so the inner loop unrolls and the array stays in registers.
 *
 * What is known is undone where control flow joins: after an if, every
 * variable either branch writes is forgotten; a loop or a switch forgets
 * the variables it writes before its condition and body are read (a value
 * reaches the next iteration or falls into the next case), and what its
 * blocks learn stays inside them. Known values sit in slots by variable
 * id, with an undo log to return to the state before a block.
 */
typedef struct known_entry {
    int id;
    const kc_ir_var *var;
    kc_ir_expr *value;
} known_entry;

typedef struct known {
    folder *F;
    const kc_ir_var **var; /* by id: the variable the slot belongs to */
    kc_ir_expr **value;    /* its constant, or NULL */
    int cap;
    known_entry *log;      /* earlier slot contents, newest last */
    int nlog, caplog;
} known;

static kc_ir_expr *known_value(const known *K, const kc_ir_var *v)
{
    return v->id < K->cap && K->var[v->id] == v ? K->value[v->id] : NULL;
}

/* Grows an arena array of n items of size sz to at least need. */
static void *grow(kc_arena *a, void *old, int *n, int need, size_t sz)
{
    int cap = *n ? *n : 16;
    while (cap < need)
        cap *= 2;
    void *p = kc_arena_alloc(a, (size_t)cap * sz);
    if (*n)
        memcpy(p, old, (size_t)*n * sz);
    *n = cap;
    return p;
}

static void know(known *K, const kc_ir_var *v, kc_ir_expr *value)
{
    if (!value && !known_value(K, v))
        return; /* nothing to forget */
    if (v->id >= K->cap) {
        int cap = K->cap;
        K->var = grow(K->F->a, K->var, &cap, v->id + 1, sizeof(*K->var));
        K->value = grow(K->F->a, K->value, &K->cap, v->id + 1, sizeof(*K->value));
    }
    if (K->nlog == K->caplog)
        K->log = grow(K->F->a, K->log, &K->caplog, K->nlog + 1, sizeof(*K->log));
    K->log[K->nlog++] = (known_entry){v->id, K->var[v->id], K->value[v->id]};
    K->var[v->id] = v;
    K->value[v->id] = value;
}

static void undo_to(known *K, int mark)
{
    while (K->nlog > mark) {
        known_entry e = K->log[--K->nlog];
        K->var[e.id] = e.var;
        K->value[e.id] = e.value;
    }
}

static void forget_write(void *user, kc_ir_stmt *s)
{
    if (s->var && (s->kind == KIR_ASSIGN || s->kind == KIR_ATOMIC || s->kind == KIR_CALL))
        know(user, s->var, NULL);
}

/* Forgets every variable that s or a statement inside it writes. */
static void forget_writes(known *K, kc_ir_stmt *s)
{
    kc_ir_block one = {&s, 1, 1};
    kc_ir_walk(&one, forget_write, K);
}

static kc_ir_expr *use_known(void *user, kc_ir_expr *e)
{
    known *K = user;
    kc_ir_expr *c = e->kind == KIR_VAR ? known_value(K, e->var) : NULL;
    if (!c)
        return fold_expr(K->F, e);
    /* a copy: passes after this one rewrite expressions in place */
    return kc_type_is_float(c->type) ? kc_ir_const_float(K->F->a, c->type, c->fval)
                                     : kc_ir_const_int(K->F->a, c->type, c->ival);
}

static bool holds_constant(const kc_ir_stmt *s)
{
    return s->kind == KIR_ASSIGN && s->lane < 0 && s->var->mem == KIR_MEM_PRIVATE && !s->var->is_array &&
           s->value->type->kind == KC_TY_SCALAR && kc_ir_is_const(s->value);
}

static void flow_block(known *K, kc_ir_block *b);

/* Reads of b see what is known now; what b learns is forgotten after. */
static void flow_inside(known *K, kc_ir_block *b)
{
    int mark = K->nlog;
    flow_block(K, b);
    undo_to(K, mark);
}

static void flow_stmt(known *K, kc_ir_stmt *s)
{
    if (s->kind == KIR_LOOP || s->kind == KIR_SWITCH)
        forget_writes(K, s);
    kc_ir_map_own_exprs(s, use_known, K);
    switch (s->kind) {
    case KIR_ASSIGN: know(K, s->var, holds_constant(s) ? s->value : NULL); return;
    case KIR_IF:
        if (kc_ir_is_const(s->cond)) { /* only one branch ever runs */
            flow_block(K, s->cond->ival ? &s->then : &s->els);
            return;
        }
        flow_inside(K, &s->then);
        flow_inside(K, &s->els);
        forget_writes(K, s);
        return;
    case KIR_LOOP:
        flow_inside(K, &s->init);
        flow_inside(K, &s->body);
        flow_inside(K, &s->step);
        return;
    case KIR_SWITCH:
        for (int i = 0; i < s->ncases; i++)
            flow_inside(K, &s->cases[i].body);
        return;
    default:
        if (s->var)
            know(K, s->var, NULL); /* an atomic's or a call's result */
        return;
    }
}

static void flow_block(known *K, kc_ir_block *b)
{
    for (int i = 0; i < b->len; i++)
        flow_stmt(K, b->stmts[i]);
}

static void fold_in_order(folder *F, kc_ir_block *b)
{
    known K = {.F = F};
    flow_block(&K, b);
}

void kc_ir_fold_block(kc_arena *a, kc_ir_block *b)
{
    folder F = {a};
    kc_ir_map_exprs(b, fold_expr, &F);
    fold_in_order(&F, b);
}

/*
 * Constant propagation, of the one kind that needs no data-flow analysis:
 * a scalar variable written by exactly one statement, which assigns it a
 * constant, holds that constant wherever it is read (a read before the
 * write sees an indeterminate value, and the constant is as good as any).
 * Inlining makes many of these (a helper's parameter bound to a constant
 * argument), and a KC_UNROLL loop in the helper then has a constant bound.
 */
typedef struct writes {
    kc_arena *a;
    kc_map count;   /* "%p" of a var -> number of statements writing it */
    kc_map value;   /* "%p" of a var -> its constant, if that one write assigns one */
} writes;

static const char *var_key(kc_arena *a, const kc_ir_var *v) { return kc_arena_printf(a, "%p", (const void *)v); }

static void count_writes(void *user, kc_ir_stmt *s)
{
    writes *W = user;
    if (!s->var || !(s->kind == KIR_ASSIGN || s->kind == KIR_ATOMIC || s->kind == KIR_CALL))
        return;
    const char *k = var_key(W->a, s->var);
    intptr_t n = (intptr_t)kc_map_get(&W->count, k);
    kc_map_put(W->a, &W->count, k, (void *)(n + 1));
    bool constant = s->kind == KIR_ASSIGN && s->lane < 0 && s->var->mem == KIR_MEM_PRIVATE && !s->var->is_array &&
                    kc_ir_is_const(s->value) && s->value->type->kind == KC_TY_SCALAR;
    kc_map_put(W->a, &W->value, k, constant ? s->value : NULL);
}

typedef struct propagate {
    writes *w;
    bool changed;
} propagate;

static kc_ir_expr *replace_read(void *user, kc_ir_expr *e)
{
    propagate *P = user;
    if (e->kind != KIR_VAR)
        return e;
    const char *k = var_key(P->w->a, e->var);
    kc_ir_expr *c = kc_map_get(&P->w->value, k);
    if (!c || (intptr_t)kc_map_get(&P->w->count, k) != 1)
        return e;
    P->changed = true;
    return kc_type_is_float(c->type) ? kc_ir_const_float(P->w->a, c->type, c->fval)
                                     : kc_ir_const_int(P->w->a, c->type, c->ival);
}

static bool propagate_constants(kc_arena *a, kc_ir_func *f)
{
    writes W = {a, {0}, {0}};
    kc_ir_walk(&f->body, count_writes, &W);
    propagate P = {&W, false};
    kc_ir_map_exprs(&f->body, replace_read, &P);
    return P.changed;
}

bool kc_ir_fold(kc_ir_module *m)
{
    folder F = {m->arena};
    for (int i = 0; i < m->consts.len; i++) {
        kc_ir_var *v = m->consts.items[i];
        for (int64_t k = 0; k < v->len; k++)
            v->init[k] = fold_tree(&F, v->init[k]);
    }
    /* folding makes constants, which propagate, which fold further */
    for (int round = 0; round < 8; round++) {
        fold_func(&F, m->kernel);
        if (!propagate_constants(m->arena, m->kernel))
            break;
    }
    fold_in_order(&F, &m->kernel->body);
    for (int i = 0; i < m->helpers.len; i++)
        fold_func(&F, m->helpers.items[i]);
    return true;
}
