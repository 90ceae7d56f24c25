/*
 * kc_lang.h — the vocabulary of the kc language, below the front end,
 * kir, the backends and libkcrt: its scalar types, its operators and its
 * built-in functions, each an X-macro table whose columns say what every
 * consumer needs (STYLE.md: "tables, not switches").
 *
 *   operators  spelling, postfix word, arity, C precedence; the parser,
 *              the integer expressions (support/kc_iexpr.h), the infix
 *              printer and libkcrt's messages read the same rows
 *   scalars    spelling, bits, float, signed; with the scalar ABI of
 *              kernel arguments (kc_scalar_arg_bytes)
 *   built-ins  name, arity, typing rule; the backends' lowerings are
 *              indexed by the same IDs
 *
 * Adding an operator or a built-in is one row here plus its semantics:
 * docs/contributing.md walks through it. Types are made in lang/types.c.
 */
#ifndef KC_LANG_H
#define KC_LANG_H

#include <stdbool.h>
#include <stdint.h>

#include "kc_support.h"

typedef struct kc_iexpr kc_iexpr;

/* ---- operators --------------------------------------------------------- */

/* C's precedence levels, higher binds tighter. */
enum {
    KC_PREC_SELECT = 1, /* ?: */
    KC_PREC_LOR,
    KC_PREC_LAND,
    KC_PREC_OR,
    KC_PREC_XOR,
    KC_PREC_AND,
    KC_PREC_EQ,
    KC_PREC_REL,
    KC_PREC_SHIFT,
    KC_PREC_ADD,
    KC_PREC_MUL,
    KC_PREC_UNARY,
    KC_PREC_CALL, /* calls and leaves */
};

/*
 * X(ID, spelling in kc source, word in postfix text, arity, precedence,
 *   SPIR-V float, signed, unsigned, bool, LLVM float, signed, unsigned)
 *
 * KC_OPS are the language's operators (kc_op); KC_IEXPR_ONLY_OPS exist
 * only in integer expressions (kc_iexpr_op, which has all rows in this
 * order): min, max and kc_cdiv are calls in the source, ?: is C's.
 *
 * The lowering columns say, by the type of the operands, what each
 * backend emits: a SpvOp name without "SpvOp" (Nop: no such operation on
 * that type; the front end refuses it), and for LLVM an LLVMOpcode name
 * without "LLVM" for arithmetic, or the LLVMRealPredicate /
 * LLVMIntPredicate name for a comparison (None: lowered by hand — the
 * unary operators — or not on that type). Bool counts as unsigned for
 * LLVM, where it is an i1.
 */
#define KC_OPS(X)                                                                                                     \
    X(NEG, "-", "neg", 1, KC_PREC_UNARY, FNegate, SNegate, SNegate, Nop, None, None, None)                            \
    X(NOT, "!", "!", 1, KC_PREC_UNARY, Nop, Nop, Nop, LogicalNot, None, None, None)                                   \
    X(BNOT, "~", "~", 1, KC_PREC_UNARY, Not, Not, Not, Not, None, None, None)                                         \
    X(ADD, "+", "+", 2, KC_PREC_ADD, FAdd, IAdd, IAdd, IAdd, FAdd, Add, Add)                                          \
    X(SUB, "-", "-", 2, KC_PREC_ADD, FSub, ISub, ISub, ISub, FSub, Sub, Sub)                                          \
    X(MUL, "*", "*", 2, KC_PREC_MUL, FMul, IMul, IMul, IMul, FMul, Mul, Mul)                                          \
    X(DIV, "/", "/", 2, KC_PREC_MUL, FDiv, SDiv, UDiv, UDiv, FDiv, SDiv, UDiv)                                        \
    X(MOD, "%", "%", 2, KC_PREC_MUL, Nop, SRem, UMod, UMod, None, SRem, URem)                                         \
    X(SHL, "<<", "<<", 2, KC_PREC_SHIFT, Nop, ShiftLeftLogical, ShiftLeftLogical, ShiftLeftLogical, None, Shl, Shl)   \
    X(SHR, ">>", ">>", 2, KC_PREC_SHIFT, Nop, ShiftRightArithmetic, ShiftRightLogical, ShiftRightLogical, None, AShr, LShr) \
    X(AND, "&", "&", 2, KC_PREC_AND, Nop, BitwiseAnd, BitwiseAnd, BitwiseAnd, None, And, And)                         \
    X(OR, "|", "|", 2, KC_PREC_OR, Nop, BitwiseOr, BitwiseOr, BitwiseOr, None, Or, Or)                                \
    X(XOR, "^", "^", 2, KC_PREC_XOR, Nop, BitwiseXor, BitwiseXor, BitwiseXor, None, Xor, Xor)                         \
    X(LT, "<", "<", 2, KC_PREC_REL, FOrdLessThan, SLessThan, ULessThan, ULessThan, RealOLT, IntSLT, IntULT)           \
    X(LE, "<=", "<=", 2, KC_PREC_REL, FOrdLessThanEqual, SLessThanEqual, ULessThanEqual, ULessThanEqual, RealOLE, IntSLE, IntULE) \
    X(GT, ">", ">", 2, KC_PREC_REL, FOrdGreaterThan, SGreaterThan, UGreaterThan, UGreaterThan, RealOGT, IntSGT, IntUGT) \
    X(GE, ">=", ">=", 2, KC_PREC_REL, FOrdGreaterThanEqual, SGreaterThanEqual, UGreaterThanEqual, UGreaterThanEqual, RealOGE, IntSGE, IntUGE) \
    X(EQ, "==", "==", 2, KC_PREC_EQ, FOrdEqual, IEqual, IEqual, LogicalEqual, RealOEQ, IntEQ, IntEQ)                  \
    X(NE, "!=", "!=", 2, KC_PREC_EQ, FUnordNotEqual, INotEqual, INotEqual, LogicalNotEqual, RealUNE, IntNE, IntNE)    \
    X(LAND, "&&", "&&", 2, KC_PREC_LAND, Nop, Nop, Nop, LogicalAnd, None, None, And)                                  \
    X(LOR, "||", "||", 2, KC_PREC_LOR, Nop, Nop, Nop, LogicalOr, None, None, Or)

#define KC_IEXPR_ONLY_OPS(X)                                                                                          \
    X(MIN, "min", "min", 2, KC_PREC_CALL, Nop, Nop, Nop, Nop, None, None, None)                                       \
    X(MAX, "max", "max", 2, KC_PREC_CALL, Nop, Nop, Nop, Nop, None, None, None)                                       \
    X(CDIV, "kc_cdiv", "cdiv", 2, KC_PREC_CALL, Nop, Nop, Nop, Nop, None, None, None)                                 \
    X(SELECT, "?:", "?:", 3, KC_PREC_SELECT, Nop, Nop, Nop, Nop, None, None, None)

typedef enum {
#define X(id, s, w, n, p, ...) KC_OP_##id,
    KC_OPS(X)
#undef X
        KC_OP_COUNT
} kc_op;

/* The spelling of an operator in kc source ("-" for NEG). */
const char *kc_op_text(kc_op op);
/* Its precedence (KC_PREC_*) and number of operands. */
int kc_op_precedence(kc_op op);
int kc_op_arity(kc_op op);

/* ---- types ------------------------------------------------------------ */

/*
 * X(name, C spelling, bits, is_float, is_signed, bytes, arg bytes, push bytes)
 *
 * The scalar ABI, for the backends, the driver and libkcrt alike:
 *   bytes       one element in a buffer or in shared memory (bool: a
 *               32-bit 0 or 1)
 *   arg bytes   a kernel scalar parameter in a kernel-argument block (HIP,
 *               CUDA, the host): half is its 2 IEEE bytes; 0 where the type
 *               cannot be a kernel parameter (void, long, ulong)
 *   push bytes  the same in Vulkan push constants (or their spill buffer):
 *               every parameter is one 32-bit word, half as a float
 * docs/backends.md shows the layouts these make.
 */
#define KC_SCALARS(X)                                                                              \
    X(VOID, "void", 0, 0, 0, 0, 0, 0)                                                              \
    X(BOOL, "bool", 32, 0, 0, 4, 4, 4)                                                             \
    X(INT, "int", 32, 0, 1, 4, 4, 4)                                                               \
    X(UINT, "uint", 32, 0, 0, 4, 4, 4)                                                             \
    X(LONG, "long", 64, 0, 1, 8, 0, 0)                                                             \
    X(ULONG, "ulong", 64, 0, 0, 8, 0, 0)                                                           \
    X(HALF, "half", 16, 1, 1, 2, 2, 4)                                                             \
    X(FLOAT, "float", 32, 1, 1, 4, 4, 4)

typedef enum {
#define X(n, s, b, f, sg, ...) KC_S_##n,
    KC_SCALARS(X)
#undef X
        KC_S_COUNT
} kc_scalar;

typedef enum {
    KC_TY_SCALAR, /* lanes == 1 */
    KC_TY_VECTOR, /* lanes 2 or 4 */
    KC_TY_ARRAY,  /* fixed extent; elem may be another array */
    KC_TY_ERROR,  /* after a reported error; silences follow-on errors */
} kc_type_kind;

typedef struct kc_type kc_type;
struct kc_type {
    kc_type_kind kind;
    kc_scalar scalar;   /* scalar and vector: the component type */
    int lanes;          /* 1, 2 or 4 */
    const kc_type *elem; /* array: the element type */
    kc_iexpr *len;      /* array: extent, over tunables and constants */
};

const kc_type *kc_type_scalar(kc_scalar s);
const kc_type *kc_type_vector(kc_scalar s, int lanes); /* lanes 1 gives the scalar */
const kc_type *kc_type_error(void);
const kc_type *kc_type_array(kc_arena *a, const kc_type *elem, kc_iexpr *len);
bool kc_type_equal(const kc_type *a, const kc_type *b);
bool kc_type_is_int(const kc_type *t);   /* int, uint, long, ulong scalar or vector */
bool kc_type_is_float(const kc_type *t); /* half, float scalar or vector */
bool kc_type_is_arith(const kc_type *t); /* int or float, not bool */
bool kc_scalar_is_float(kc_scalar s);
bool kc_scalar_is_signed(kc_scalar s);
int kc_scalar_bits(kc_scalar s);
const char *kc_scalar_name(kc_scalar s);
/* The scalar ABI (KC_SCALARS' last columns). */
int kc_scalar_bytes(kc_scalar s);
int kc_scalar_arg_bytes(kc_scalar s);
int kc_scalar_push_bytes(kc_scalar s);
/* Bytes of one element of a scalar or vector type in memory. */
int kc_type_bytes(const kc_type *t);
/* Spells a type as a user would write it: "float", "half4", "float[16][17]". */
const char *kc_type_name(kc_arena *a, const kc_type *t);
/* The innermost non-array type of t. */
const kc_type *kc_type_base(const kc_type *t);

/* ---- built-in functions ---------------------------------------------- */

/*
 * X(ID, "name", nargs, rule, glsl, llvm)
 * rule says how arguments and result are typed (see sema.c):
 *   ID      int argument (dimension 0..2) -> int       kc_global_id(d)
 *   ID0     no argument -> int                          kc_subgroup_size()
 *   F1      float-ish (float/half scalar or vector) -> same type
 *   F2, F3  two, three of the same float-ish type -> that type
 *   A1..A3  any arithmetic (int/float, vector ok), same type -> same type
 *   SG1     subgroup reduction or scan of an arithmetic scalar -> same
 *   SG2     (value, int lane, delta or mask) -> value's type
 *   ATOM    (&int/uint/float element, value) -> old value
 *   CAS     (&int/uint element, compare, value) -> old value
 *   BAR     no arguments, no result (a statement)
 *   CDIV    (int, int) -> int, integer types only
 *   BITS    bit reinterpretation (fixed types, see sema)
 *   I1      a 32-bit int or uint (vector ok) -> same type
 * glsl: the GLSL.std.450 instruction (without "GLSLstd450") that SPIR-V
 * lowers it to on floats, Bad where the lowering is code (ids, subgroups,
 * atomics, clamp, round, copysign, cdiv; min and max on integers) or a call to
 * kc's math library (the accurate functions, inlined before the backend).
 * llvm: the overloaded LLVM intrinsic that computes it exactly, NULL where
 * the lowering is code (the kc_fast_ forms use each target's native
 * instruction: llvm_amdgpu.c, llvm_nvptx.c).
 */
#define KC_BUILTINS(X)                                                                             \
    X(GLOBAL_ID, "kc_global_id", 1, ID, Bad, NULL)                                                  \
    X(LOCAL_ID, "kc_local_id", 1, ID, Bad, NULL)                                                    \
    X(GROUP_ID, "kc_group_id", 1, ID, Bad, NULL)                                                    \
    X(GROUP_SIZE, "kc_group_size", 1, ID, Bad, NULL)                                                \
    X(NUM_GROUPS, "kc_num_groups", 1, ID, Bad, NULL)                                                \
    X(SUBGROUP_SIZE, "kc_subgroup_size", 0, ID0, Bad, NULL)                                         \
    X(SUBGROUP_ID, "kc_subgroup_id", 0, ID0, Bad, NULL)                                             \
    X(SUBGROUP_LOCAL_ID, "kc_subgroup_local_id", 0, ID0, Bad, NULL)                                 \
    X(BARRIER, "kc_barrier", 0, BAR, Bad, NULL)                                                     \
    X(SUBGROUP_ADD, "kc_subgroup_add", 1, SG1, Bad, NULL)                                           \
    X(SUBGROUP_MIN, "kc_subgroup_min", 1, SG1, Bad, NULL)                                           \
    X(SUBGROUP_MAX, "kc_subgroup_max", 1, SG1, Bad, NULL)                                           \
    X(SUBGROUP_SHUFFLE, "kc_subgroup_shuffle", 2, SG2, Bad, NULL)                                   \
    X(SUBGROUP_BROADCAST, "kc_subgroup_broadcast", 2, SG2, Bad, NULL)                               \
    X(SUBGROUP_SHUFFLE_UP, "kc_subgroup_shuffle_up", 2, SG2, Bad, NULL)                             \
    X(SUBGROUP_SHUFFLE_DOWN, "kc_subgroup_shuffle_down", 2, SG2, Bad, NULL)                         \
    X(SUBGROUP_SHUFFLE_XOR, "kc_subgroup_shuffle_xor", 2, SG2, Bad, NULL)                           \
    X(SUBGROUP_INCLUSIVE_ADD, "kc_subgroup_inclusive_add", 1, SG1, Bad, NULL)                       \
    X(SUBGROUP_EXCLUSIVE_ADD, "kc_subgroup_exclusive_add", 1, SG1, Bad, NULL)                       \
    X(ATOMIC_ADD, "kc_atomic_add", 2, ATOM, Bad, NULL)                                              \
    X(ATOMIC_MIN, "kc_atomic_min", 2, ATOM, Bad, NULL)                                              \
    X(ATOMIC_MAX, "kc_atomic_max", 2, ATOM, Bad, NULL)                                              \
    X(ATOMIC_XCHG, "kc_atomic_xchg", 2, ATOM, Bad, NULL)                                            \
    X(ATOMIC_CAS, "kc_atomic_cas", 3, CAS, Bad, NULL)                                               \
    X(SQRT, "sqrtf", 1, F1, Bad, "llvm.sqrt")                                                       \
    X(RSQRT, "rsqrtf", 1, F1, Bad, NULL)                                                            \
    X(EXP, "expf", 1, F1, Bad, NULL)                                                                \
    X(EXP2, "exp2f", 1, F1, Bad, NULL)                                                              \
    X(LOG, "logf", 1, F1, Bad, NULL)                                                                \
    X(LOG2, "log2f", 1, F1, Bad, NULL)                                                              \
    X(POW, "powf", 2, F2, Bad, NULL)                                                                \
    X(SIN, "sinf", 1, F1, Bad, NULL)                                                                \
    X(COS, "cosf", 1, F1, Bad, NULL)                                                                \
    X(TAN, "tanf", 1, F1, Bad, NULL)                                                                \
    X(TANH, "tanhf", 1, F1, Bad, NULL)                                                              \
    X(ERF, "erff", 1, F1, Bad, NULL)                                                                \
    X(LOG10, "log10f", 1, F1, Bad, NULL)                                                            \
    X(FMOD, "fmodf", 2, F2, Bad, NULL)                                                              \
    X(ATAN2, "atan2f", 2, F2, Bad, NULL)                                                            \
    X(FABS, "fabsf", 1, F1, FAbs, "llvm.fabs")                                                      \
    X(FLOOR, "floorf", 1, F1, Floor, "llvm.floor")                                                  \
    X(CEIL, "ceilf", 1, F1, Ceil, "llvm.ceil")                                                      \
    X(ROUND, "roundf", 1, F1, Bad, "llvm.round")                                                    \
    X(FMIN, "fminf", 2, F2, NMin, "llvm.minnum")                                                    \
    X(FMAX, "fmaxf", 2, F2, NMax, "llvm.maxnum")                                                    \
    X(FMA, "fmaf", 3, F3, Fma, "llvm.fma")                                                          \
    X(COPYSIGN, "copysignf", 2, F2, Bad, "llvm.copysign")                                           \
    X(MIN, "min", 2, A2, NMin, NULL)                                                                \
    X(MAX, "max", 2, A2, NMax, NULL)                                                                \
    X(CLAMP, "clamp", 3, A3, Bad, NULL)                                                             \
    X(CDIV, "kc_cdiv", 2, CDIV, Bad, NULL)                                                          \
    X(FAST_SQRT, "kc_fast_sqrtf", 1, F1, Sqrt, NULL)                                                \
    X(FAST_RSQRT, "kc_fast_rsqrtf", 1, F1, InverseSqrt, NULL)                                       \
    X(FAST_EXP, "kc_fast_expf", 1, F1, Exp, NULL)                                                   \
    X(FAST_EXP2, "kc_fast_exp2f", 1, F1, Exp2, NULL)                                                \
    X(FAST_LOG, "kc_fast_logf", 1, F1, Log, NULL)                                                   \
    X(FAST_LOG2, "kc_fast_log2f", 1, F1, Log2, NULL)                                                \
    X(FAST_POW, "kc_fast_powf", 2, F2, Pow, NULL)                                                   \
    X(FAST_SIN, "kc_fast_sinf", 1, F1, Sin, NULL)                                                   \
    X(FAST_COS, "kc_fast_cosf", 1, F1, Cos, NULL)                                                   \
    X(FAST_TAN, "kc_fast_tanf", 1, F1, Tan, NULL)                                                   \
    X(FAST_TANH, "kc_fast_tanhf", 1, F1, Tanh, NULL)                                                \
    X(FAST_DIV, "kc_fast_divf", 2, F2, Bad, NULL)                                                   \
    X(AS_UINT, "kc_as_uint", 1, BITS, Bad, NULL)                                                    \
    X(AS_INT, "kc_as_int", 1, BITS, Bad, NULL)                                                      \
    X(AS_FLOAT, "kc_as_float", 1, BITS, Bad, NULL)                                                  \
    X(MUL_HI, "kc_mul_hi", 2, MULHI, Bad, NULL)                                                     \
    X(POPCOUNT, "kc_popcount", 1, I1, Bad, NULL)                                                    \
    X(BITREVERSE, "kc_bitreverse", 1, I1, Bad, NULL)                                                \
    X(NO_CONTRACT, "kc_no_contract", 1, F1, Bad, NULL)

typedef enum {
#define X(id, name, n, rule, ...) KC_B_##id,
    KC_BUILTINS(X)
#undef X
        KC_B_COUNT
} kc_builtin;

typedef enum {
    KC_RULE_ID, KC_RULE_ID0, KC_RULE_BAR, KC_RULE_F1, KC_RULE_F2, KC_RULE_F3, KC_RULE_A2,
    KC_RULE_A3, KC_RULE_SG1, KC_RULE_SG2, KC_RULE_ATOM, KC_RULE_CAS, KC_RULE_CDIV,
    KC_RULE_BITS, KC_RULE_MULHI, KC_RULE_I1,
} kc_builtin_rule;

typedef struct kc_builtin_info {
    const char *name;
    int nargs;
    kc_builtin_rule rule;
} kc_builtin_info;

extern const kc_builtin_info kc_builtins[KC_B_COUNT];
/* The builtin called name, or -1. */
int kc_builtin_lookup(const char *name);

#endif
