/*
 * test_llvm.c — the LLVM backend without outside tools: the LLVM IR it
 * makes for each kir construct that matters to a host or to correctness
 * (buffer attributes, address spaces, kernel attributes, barriers with
 * their fences, atomics with their scopes), the kernel-argument layout,
 * target names, errors that must be reported rather than kill the
 * process, and that compiling the same variant again and again does not
 * grow the heap (the tuner compiles thousands in one process).
 */
#include "llvm_test.h"

#include <malloc.h>

static lt_compiled ir(const char *rel, const char *kernel, const char *target, bool optimize)
{
    lt_compiled c;
    lt_compile(&c, rel, kernel, target, 0, KC_LLVM_OUT_IR, optimize);
    assert_true(c.ok);
    return c;
}

static void buffers_are_noalias_and_readonly(void **state)
{
    (void)state;
    lt_compiled c = ir("tests/ir/golden/saxpy.kc", NULL, "gfx1100", false);
    ASSERT_CONTAINS(c.mod.data, "ptr addrspace(1) noalias nocapture noundef readonly align 4 %x");
    ASSERT_CONTAINS(c.mod.data, "ptr addrspace(1) noalias nocapture noundef align 4 %y");
    ASSERT_CONTAINS(c.mod.data, "define amdgpu_kernel void @saxpy(");
    lt_compiled_free(&c);
    c = ir("tests/ir/golden/saxpy.kc", NULL, "gfx1100", true); /* they survive O3 */
    ASSERT_CONTAINS(c.mod.data, "noalias");
    ASSERT_CONTAINS(c.mod.data, "readonly");
    lt_compiled_free(&c);
    c = ir("tests/dsl/corpus/ok/may_alias.kc", "residual_add", "gfx1100", false);
    assert_null(strstr(c.mod.data, "noalias"));
    ASSERT_CONTAINS(c.mod.data, "nocapture noundef readonly align 4 %x");
    lt_compiled_free(&c);
    c = ir("tests/ir/golden/saxpy.kc", NULL, "sm_90", false);
    ASSERT_CONTAINS(c.mod.data, "define ptx_kernel void @saxpy(");
    ASSERT_CONTAINS(c.mod.data, "ptr addrspace(1) noalias nocapture noundef readonly align 4 %x");
    lt_compiled_free(&c);
}

static void memory_has_its_address_space(void **state)
{
    (void)state;
    lt_compiled c = ir("tests/spirv/kernels/shared_atomics.kc", NULL, "gfx1100", false);
    ASSERT_CONTAINS(c.mod.data, "@part = internal addrspace(3) global [64 x float] poison");
    ASSERT_CONTAINS(c.mod.data, "@count = internal addrspace(3) global i32 poison");
    ASSERT_CONTAINS(c.mod.data, "alloca float, align 4, addrspace(5)");
    lt_compiled_free(&c);
    c = ir("tests/dsl/corpus/ok/private_arrays.kc", NULL, "gfx1100", false);
    ASSERT_CONTAINS(c.mod.data, "alloca [");
    ASSERT_CONTAINS(c.mod.data, "addrspace(5)");
    lt_compiled_free(&c);
    c = ir("tests/dsl/corpus/ok/global_const_table.kc", NULL, "gfx1100", false);
    ASSERT_CONTAINS(c.mod.data, "@lanczos3 = internal unnamed_addr addrspace(4) constant [7 x float]");
    lt_compiled_free(&c);
    c = ir("tests/dsl/corpus/ok/global_const_table.kc", NULL, "sm_90", false);
    ASSERT_CONTAINS(c.mod.data, "addrspace(4) constant [7 x float]");
    lt_compiled_free(&c);
    c = ir("tests/spirv/kernels/types.kc", NULL, "gfx1100", false); /* bool buffers are 32-bit */
    ASSERT_CONTAINS(c.mod.data, "store i32");
    ASSERT_CONTAINS(c.mod.data, "i32 noundef %on");
    ASSERT_CONTAINS(c.mod.data, "half noundef %hs");
    lt_compiled_free(&c);
}

static void kernels_carry_their_workgroup_size(void **state)
{
    (void)state;
    lt_compiled c = ir("tests/llvm/kernels/no_params.kc", NULL, "gfx1100", true);
    ASSERT_CONTAINS(c.mod.data, "\"amdgpu-flat-work-group-size\"=\"64,64\"");
    ASSERT_CONTAINS(c.mod.data, "\"uniform-work-group-size\"=\"true\"");
    ASSERT_CONTAINS(c.mod.data, "!reqd_work_group_size !");
    ASSERT_CONTAINS(c.mod.data, "!{i32 32, i32 2, i32 1}");
    ASSERT_CONTAINS(c.mod.data, "!\"amdhsa_code_object_version\", i32 500}");
    ASSERT_CONTAINS(c.mod.data, "\"amdgpu-no-implicitarg-ptr\""); /* so no hidden arguments */
    lt_compiled_free(&c);
    lt_compile(&c, "tests/llvm/kernels/no_params.kc", NULL, "gfx1100", 4, KC_LLVM_OUT_IR, true);
    assert_true(c.ok);
    ASSERT_CONTAINS(c.mod.data, "!\"amdhsa_code_object_version\", i32 400}");
    lt_compiled_free(&c);
    c = ir("tests/llvm/kernels/no_params.kc", NULL, "sm_80", true);
    ASSERT_CONTAINS(c.mod.data, "!nvvm.annotations");
    ASSERT_CONTAINS(c.mod.data, "!\"kernel\", i32 1}");
    ASSERT_CONTAINS(c.mod.data, "!\"reqntidx\", i32 32}");
    ASSERT_CONTAINS(c.mod.data, "!\"reqntidy\", i32 2}");
    ASSERT_CONTAINS(c.mod.data, "!\"reqntidz\", i32 1}");
    lt_compiled_free(&c);
}

static void barriers_fence_the_workgroup(void **state)
{
    (void)state;
    lt_compiled c = ir("tests/spirv/kernels/shared_atomics.kc", NULL, "gfx90a", true);
    const char *f = strstr(c.mod.data, "fence syncscope(\"workgroup\") release");
    assert_non_null(f);
    const char *b = strstr(f, "call void @llvm.amdgcn.s.barrier()");
    assert_non_null(b);
    assert_non_null(strstr(b, "fence syncscope(\"workgroup\") acquire"));
    assert_null(strstr(c.mod.data, "@kc.barrier")); /* the helper is inlined and gone */
    lt_compiled_free(&c);
    c = ir("tests/spirv/kernels/shared_atomics.kc", NULL, "sm_86", true);
    ASSERT_CONTAINS(c.mod.data, "call void @llvm.nvvm.barrier0()");
    lt_compiled_free(&c);
}

static void atomics_are_relaxed_with_a_scope(void **state)
{
    (void)state;
    lt_compiled c = ir("tests/spirv/kernels/shared_atomics.kc", NULL, "gfx1100", true);
    const char *want[] = {
        "atomicrmw fadd ptr addrspace(1) %sum, float",
        "atomicrmw max ptr addrspace(1) %hist, i32",
        "atomicrmw add ptr addrspace(3) @count, i32 1 syncscope(\"workgroup\") monotonic",
        "atomicrmw umax ptr addrspace(1) %bits",
        "syncscope(\"agent\") monotonic monotonic", /* cmpxchg */
        "atomicrmw xchg",
        "atomicrmw min",
        "!amdgpu.no.fine.grained.memory",
    };
    for (size_t i = 0; i < KC_COUNT(want); i++)
        ASSERT_CONTAINS(c.mod.data, want[i]);
    assert_null(strstr(c.mod.data, "seq_cst"));
    lt_compiled_free(&c);
    c = ir("tests/spirv/kernels/shared_atomics.kc", NULL, "sm_90", true);
    ASSERT_CONTAINS(c.mod.data, "atomicrmw fadd ptr addrspace(1) %sum, float");
    ASSERT_CONTAINS(c.mod.data, "monotonic");
    assert_null(strstr(c.mod.data, "seq_cst"));
    lt_compiled_free(&c);
}

static void subgroups_reduce_over_active_lanes(void **state)
{
    (void)state;
    lt_compiled c = ir("tests/llvm/kernels/subgroup_2d.kc", NULL, "gfx1100", true);
    ASSERT_CONTAINS(c.mod.data, "@llvm.amdgcn.ballot.i32(i1 true)"); /* wave32 */
    ASSERT_CONTAINS(c.mod.data, "@llvm.amdgcn.ds.bpermute");         /* the butterfly */
    ASSERT_CONTAINS(c.mod.data, "@llvm.amdgcn.readlane");            /* lane by lane */
    ASSERT_CONTAINS(c.mod.data, "@llvm.cttz.i32");
    ASSERT_CONTAINS(c.mod.data, "@llvm.amdgcn.mbcnt.lo");
    assert_null(strstr(c.mod.data, "@llvm.amdgcn.mbcnt.hi"));
    lt_compiled_free(&c);
    c = ir("tests/llvm/kernels/subgroup_2d.kc", NULL, "gfx942", true);
    ASSERT_CONTAINS(c.mod.data, "@llvm.amdgcn.ballot.i64(i1 true)"); /* wave64 */
    ASSERT_CONTAINS(c.mod.data, "@llvm.amdgcn.mbcnt.hi");
    ASSERT_CONTAINS(c.mod.data, "@llvm.cttz.i64");
    lt_compiled_free(&c);
    c = ir("tests/llvm/kernels/subgroup_2d.kc", NULL, "sm_89", true);
    ASSERT_CONTAINS(c.mod.data, "@llvm.nvvm.activemask()");
    ASSERT_CONTAINS(c.mod.data, "@llvm.nvvm.shfl.sync.bfly.i32(i32 -1,");
    ASSERT_CONTAINS(c.mod.data, "@llvm.nvvm.shfl.sync.idx.i32");
    ASSERT_CONTAINS(c.mod.data, "@llvm.nvvm.read.ptx.sreg.laneid()");
    lt_compiled_free(&c);
}

static void math_is_native_where_kc_says_so(void **state)
{
    (void)state;
    lt_compiled c = ir("tests/dsl/corpus/ok/math_accurate.kc", NULL, "gfx1100", true);
    ASSERT_CONTAINS(c.mod.data, "@llvm.sqrt.f32"); /* correctly rounded by default */
    ASSERT_CONTAINS(c.mod.data, "@llvm.round.f32");
    /* the transcendental functions are kc's math library, not instructions */
    assert_null(strstr(c.mod.data, "@llvm.amdgcn.sin.f32"));
    assert_null(strstr(c.mod.data, "@llvm.sin.f32")); /* no range reduction on AMDGPU */
    assert_null(strstr(c.mod.data, "@llvm.tanh"));    /* does not lower on AMDGPU */
    ASSERT_CONTAINS(c.mod.data, "__kc_two_over_pi");  /* the library's exact argument reduction */
    lt_compiled_free(&c);
    c = ir("tests/dsl/corpus/ok/math_fast.kc", NULL, "sm_90", true);
    ASSERT_CONTAINS(c.mod.data, "tanh.approx.f32");
    ASSERT_CONTAINS(c.mod.data, "@llvm.nvvm.sin.approx.f");
    ASSERT_CONTAINS(c.mod.data, "@llvm.nvvm.ex2.approx.f");
    lt_compiled_free(&c);
}

static int occurrences(const char *text, const char *word)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, word)); p += strlen(word))
        n++;
    return n;
}

/* docs/language.md: a * b + c may be fused. The gemm's multiply-adds are
 * FMAs on both backends; its GELU epilogue (kc's exp2f, whose steps are
 * exact) keeps separate multiplies and adds. */
static void multiply_adds_become_fmas(void **state)
{
    (void)state;
    lt_compiled c;
    lt_compile(&c, "kernels/gemm.kc", NULL, "sm_90", 0, KC_LLVM_OUT_ASM, true);
    assert_true(c.ok);
    int fma = occurrences(c.mod.data, "fma.rn.f32");
    assert_true(fma >= 256); /* TM x TN x BK = 4 x 4 x 16 per tile */
    lt_compiled_free(&c);
    lt_compile(&c, "kernels/gemm.kc", NULL, "gfx1100", 0, KC_LLVM_OUT_ASM, true);
    assert_true(c.ok);
    fma = occurrences(c.mod.data, "v_fma") + occurrences(c.mod.data, "v_pk_fma");
    assert_true(fma >= 128);
    lt_compiled_free(&c);
    c = ir("kernels/gemm.kc", NULL, "sm_90", false);
    ASSERT_CONTAINS(c.mod.data, "fmul contract");
    assert_true(occurrences(c.mod.data, "fadd float") > 0); /* the library's exact steps */
    lt_compiled_free(&c);
}

/* kc_no_contract(a * b + c) rounds twice on both backends: no FMA in the
 * kernel that writes it, where its twin without it has one for each
 * multiply-add (a scalar and a float4's four). */
static void no_contract_keeps_multiply_and_add(void **state)
{
    (void)state;
    static const struct {
        const char *target, *fma[2];
    } t[] = {{"sm_90", {"fma.rn.f32", NULL}}, {"gfx1100", {"v_fma", "v_pk_fma"}}};
    for (int i = 0; i < 2; i++) {
        int fma[2];
        const char *kernel[2] = {"rounded_twice", "may_fuse"};
        for (int k = 0; k < 2; k++) {
            lt_compiled c;
            lt_compile(&c, "tests/spirv/kernels/no_contract.kc", kernel[k], t[i].target, 0, KC_LLVM_OUT_ASM, true);
            assert_true(c.ok);
            fma[k] = occurrences(c.mod.data, t[i].fma[0]) + (t[i].fma[1] ? occurrences(c.mod.data, t[i].fma[1]) : 0);
            lt_compiled_free(&c);
        }
        print_message("%s: %d FMAs with kc_no_contract, %d without\n", t[i].target, fma[0], fma[1]);
        assert_int_equal(0, fma[0]);
        assert_true(fma[1] >= 5);
    }
}

static void kernarg_layout_is_natural_alignment(void **state)
{
    (void)state;
    lt_compiled c;
    lt_compile(&c, "tests/llvm/kernels/kernargs.kc", NULL, "gfx1100", 0, KC_LLVM_OUT_IR, false);
    assert_true(c.ok);
    const kc_llvm_layout *L = &c.mod.layout;
    static const uint32_t offset[] = {0, 4, 8, 16, 24, 32, 40, 44, 48}, size[] = {4, 2, 4, 8, 4, 8, 4, 2, 8};
    assert_int_equal(9, L->nparams);
    for (int i = 0; i < 9; i++) {
        assert_int_equal(offset[i], L->arg_offset[i]);
        assert_int_equal(size[i], L->arg_size[i]);
    }
    assert_int_equal(56, L->args_size);
    assert_int_equal(32, L->wave_size);
    lt_compiled_free(&c);
    lt_compile(&c, "tests/llvm/kernels/no_params.kc", NULL, "gfx906", 0, KC_LLVM_OUT_IR, false);
    assert_true(c.ok);
    assert_int_equal(0, c.mod.layout.args_size);
    assert_int_equal(64, c.mod.layout.wave_size);
    assert_int_equal(4, c.mod.layout.shared_bytes);
    lt_compiled_free(&c);
}

static void target_names(void **state)
{
    (void)state;
    kc_llvm_target t;
    assert_true(kc_llvm_target_parse("gfx1100", &t));
    assert_int_equal(KC_LLVM_AMDGPU, t.arch);
    assert_int_equal(32, t.wave_size);
    assert_true(kc_llvm_target_parse("gfx90a", &t));
    assert_int_equal(64, t.wave_size);
    assert_true(kc_llvm_target_parse("gfx942", &t));
    assert_int_equal(64, t.wave_size);
    assert_true(kc_llvm_target_parse("sm_90", &t));
    assert_int_equal(KC_LLVM_NVPTX, t.arch);
    assert_int_equal(32, t.wave_size);
    const char *bad[] = {"gfx", "gfx9", "gfx11000", "gfx110X", "sm_9", "sm_", "spirv", "sm_900a", ""};
    for (size_t i = 0; i < KC_COUNT(bad); i++)
        assert_false(kc_llvm_target_parse(bad[i], &t));
}

static void errors_are_reported_not_fatal(void **state)
{
    (void)state;
    lt_compiled c;
    lt_compile(&c, "tests/llvm/errors/too_much_shared.kc", NULL, "gfx1100", 0, KC_LLVM_OUT_ASM, true);
    assert_false(c.ok); /* LLVM's "local memory exceeds limit", through kc's handler */
    ASSERT_CONTAINS(c.ctx.diag.text.data, "local memory (81920) exceeds limit (65536)");
    assert_null(c.mod.data);
    lt_compiled_free(&c);
    lt_compile(&c, "tests/llvm/errors/too_much_shared.kc", NULL, "sm_90", 0, KC_LLVM_OUT_ASM, true);
    assert_false(c.ok);
    ASSERT_CONTAINS(c.ctx.diag.text.data, "49152 bytes of static shared memory");
    lt_compiled_free(&c);
    lt_compile(&c, "tests/llvm/errors/too_many_invocations.kc", NULL, "sm_80", 0, KC_LLVM_OUT_ASM, true);
    assert_false(c.ok);
    ASSERT_CONTAINS(c.ctx.diag.text.data,
                    "a workgroup of 2048 invocations (64 x 32 x 1); NVIDIA GPUs run at most 1024");
    lt_compiled_free(&c);
    lt_compile(&c, "tests/llvm/errors/too_many_invocations.kc", NULL, "gfx942", 0, KC_LLVM_OUT_BINARY, true);
    assert_false(c.ok);
    lt_compiled_free(&c);
    lt_compile(&c, "tests/ir/golden/saxpy.kc", NULL, "z80", 0, KC_LLVM_OUT_IR, true);
    assert_false(c.ok);
    ASSERT_CONTAINS(c.ctx.diag.text.data, "not an LLVM target");
    lt_compiled_free(&c);
}

/* Bytes in use on the heap (glibc); the sanitizer build checks leaks itself. */
static size_t heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

static void compile(const char *target, kc_llvm_output what)
{
    lt_compiled c;
    lt_compile(&c, "tests/spirv/kernels/shared_atomics.kc", NULL, target, 0, what, true);
    assert_true(c.ok);
    lt_compiled_free(&c);
}

static void repeated_compiles_do_not_grow_the_heap(void **state)
{
    (void)state;
    for (int i = 0; i < 4; i++) { /* LLVM's one-time state: targets, pass registries */
        compile("gfx1100", KC_LLVM_OUT_ASM);
        compile("sm_90", KC_LLVM_OUT_ASM);
    }
    size_t before = heap_in_use();
    for (int i = 0; i < 24; i++) {
        compile("gfx1100", KC_LLVM_OUT_ASM);
        compile("sm_90", KC_LLVM_OUT_ASM);
    }
    size_t after = heap_in_use();
    fprintf(stderr, "heap: %zu bytes before 48 compiles, %zu after\n", before, after);
#ifndef __SANITIZE_ADDRESS__
    assert_true(after < before + 64 * 1024);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(buffers_are_noalias_and_readonly),
        cmocka_unit_test(memory_has_its_address_space),
        cmocka_unit_test(kernels_carry_their_workgroup_size),
        cmocka_unit_test(barriers_fence_the_workgroup),
        cmocka_unit_test(atomics_are_relaxed_with_a_scope),
        cmocka_unit_test(subgroups_reduce_over_active_lanes),
        cmocka_unit_test(math_is_native_where_kc_says_so),
        cmocka_unit_test(multiply_adds_become_fmas),
        cmocka_unit_test(no_contract_keeps_multiply_and_add),
        cmocka_unit_test(kernarg_layout_is_natural_alignment),
        cmocka_unit_test(target_names),
        cmocka_unit_test(errors_are_reported_not_fatal),
        cmocka_unit_test(repeated_compiles_do_not_grow_the_heap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
