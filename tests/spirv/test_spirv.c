/*
 * test_spirv.c — the SPIR-V backend, structurally: every kernel kc has
 * (these tests' own, the kir goldens, the DSL corpus, the shipped
 * package) compiles in every variant to a module that SPIRV-Tools
 * validates for Vulkan 1.1, and for SPIR-V 1.4 and 1.5, whose entry-point
 * rules differ; capabilities appear exactly when a kernel needs them;
 * scalars spill to a storage buffer past the push-constant limit; vector
 * buffers are read through wide views, and every module with views still
 * validates once libkcrt has narrowed them for a device without
 * shaderInt64 (runtime/binary.c). Running the modules is the runtime's
 * tests' job.
 */
#include "kc_test.h"

#include <dirent.h>

#include "kc_dsl.h"
#include "kc_ir.h"
#include "kc_spirv.h"
#include "rt_binary.h"

static long max_variants_per_kernel = 48;
static bool checked_build; /* kc build --checked: bounds checks in every module */

typedef struct sweep {
    kc_ctx *c;
    const kc_program *p;
    const kc_func *k;
    long modules, failures, seen, stride;
} sweep;

static long narrowed_modules; /* modules with views, narrowed and validated again */

static bool declares_int64(const uint32_t *w, size_t n)
{
    for (size_t i = 5; i < n; i += w[i] >> 16)
        if ((w[i] & 0xffff) == 17 && w[i + 1] == 11) /* OpCapability Int64 */
            return true;
    return false;
}

/* The module as libkcrt runs it on a device without shaderInt64: valid,
 * with no Int64 capability. NULL when it is, else what is wrong. */
static char *narrowed_problem(const kc_spv_module *m, int minor)
{
    size_t bytes = 0;
    uint32_t *w = rt_spirv_narrow_views(m->words, m->nwords * 4, &bytes);
    if (!w)
        return strdup("libkcrt could not narrow its views");
    char *msg = kc_spv_validate(w, bytes / 4, minor);
    if (!msg && declares_int64(w, bytes / 4))
        msg = strdup("the narrowed module still declares Int64");
    free(w);
    return msg;
}

static bool emit(kc_ctx *c, const kc_program *p, const kc_func *k, const kc_ir_binding *b, int minor,
                 kc_spv_module *out)
{
    kc_ir_options checked = {.bounds_checks = true};
    kc_ir_module *m = kc_ir_compile_with(&c->arena, &c->diag, p, k, b, NULL, checked_build ? &checked : NULL);
    if (!m)
        return false;
    kc_spv_options o;
    kc_spv_default_options(&o);
    o.spirv_minor = minor;
    return kc_spv_emit(m, &o, out, &c->diag);
}

static void one_variant(void *user, const kc_ir_binding *b)
{
    sweep *s = user;
    if (s->seen++ % s->stride)
        return; /* large spaces: an even sample */
    for (int minor = 3; minor <= 5; minor++) {
        kc_spv_module m;
        if (emit(s->c, s->p, s->k, b, minor, &m)) {
            s->modules++;
            char *problem = NULL;
            if (rt_spirv_has_views(m.words, m.nwords * 4)) {
                narrowed_modules++;
                problem = narrowed_problem(&m, minor);
            }
            if (problem) {
                fprintf(stderr, "%s %s (SPIR-V 1.%d) narrowed: %s\n", s->k->name,
                        kc_ir_binding_text(&s->c->arena, b), minor, problem);
                s->failures++;
                free(problem);
            }
            kc_spv_module_free(&m);
        } else {
            fprintf(stderr, "%s %s (SPIR-V 1.%d) failed:\n%s\n", s->k->name, kc_ir_binding_text(&s->c->arena, b),
                    minor, s->c->diag.text.data ? s->c->diag.text.data : "");
            s->failures++;
        }
    }
}

static void sweep_file(const char *path, long *modules, long *failures)
{
    kc_ctx c;
    kc_ctx_init(&c, stderr);
    kc_program *p = kc_dsl_parse(&c, path);
    if (!p) {
        (*failures)++;
        kc_ctx_free(&c);
        return;
    }
    for (int i = 0; i < p->funcs.len; i++) {
        const kc_func *k = p->funcs.items[i];
        if (!k->is_kernel)
            continue;
        long n = kc_ir_each_variant(&c.arena, p, k, NULL, NULL);
        sweep s = {&c, p, k, 0, 0, 0, n > max_variants_per_kernel ? n / max_variants_per_kernel + 1 : 1};
        kc_ir_each_variant(&c.arena, p, k, one_variant, &s);
        *modules += s.modules;
        *failures += s.failures;
    }
    kc_ctx_free(&c);
}

static void sweep_dir(const char *dir, long *modules, long *failures, int *files)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 3, ".kc") != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        sweep_file(path, modules, failures);
        (*files)++;
    }
    closedir(d);
}

static void every_kernel_validates(void **state)
{
    (void)state;
    long modules = 0, failures = 0;
    int files = 0;
    sweep_dir(KC_SRC("tests/spirv/kernels"), &modules, &failures, &files);
    sweep_dir(KC_SRC("tests/ir/golden"), &modules, &failures, &files);
    sweep_dir(KC_SRC("tests/dsl/corpus/ok"), &modules, &failures, &files);
    sweep_dir(KC_SRC("kernels"), &modules, &failures, &files);
    fprintf(stderr, "validated %ld modules from %d files, %ld of them narrowed too\n", modules, files,
            narrowed_modules);
    assert_true(files >= 4);
    assert_true(narrowed_modules >= modules / 4); /* most kernels read float4s */
    assert_int_equal(0, failures);
}

/* The same with checked mode's bounds checks (fewer variants: the checks
 * do not depend on the tunables' values, only on what the code accesses). */
static void every_checked_kernel_validates(void **state)
{
    (void)state;
    long modules = 0, failures = 0;
    int files = 0;
    checked_build = true;
    max_variants_per_kernel = 4;
    sweep_dir(KC_SRC("tests/spirv/kernels"), &modules, &failures, &files);
    sweep_dir(KC_SRC("tests/ir/golden"), &modules, &failures, &files);
    sweep_dir(KC_SRC("tests/dsl/corpus/ok"), &modules, &failures, &files);
    sweep_dir(KC_SRC("kernels"), &modules, &failures, &files);
    checked_build = false;
    max_variants_per_kernel = 48;
    fprintf(stderr, "validated %ld checked modules from %d files\n", modules, files);
    assert_true(files >= 4);
    assert_int_equal(0, failures);
}

/* ---- one kernel at a time -------------------------------------------------------- */

typedef struct compiled {
    kc_ctx c;
    kc_spv_module m;
    char *text;
} compiled;

/* The kernel of rel in its default variant, with tunable (when not NULL)
 * set to value. */
static void compile_variant(compiled *out, const char *rel, int minor, const char *tunable, int64_t value)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", KC_SOURCE_DIR, rel);
    kc_ctx_init(&out->c, stderr);
    kc_program *p = kc_dsl_parse(&out->c, path);
    assert_non_null(p);
    const kc_func *k = NULL;
    for (int i = 0; i < p->funcs.len && !k; i++)
        if (((const kc_func *)p->funcs.items[i])->is_kernel)
            k = p->funcs.items[i];
    kc_ir_binding b = kc_ir_default_binding(&out->c.arena, p, k);
    for (int i = 0; tunable && i < b.n; i++)
        if (strcmp(b.names[i], tunable) == 0)
            b.values[i] = value;
    assert_true(emit(&out->c, p, k, &b, minor, &out->m));
    char err[256];
    out->text = kc_spv_disassemble(out->m.words, out->m.nwords, err, sizeof(err));
    assert_non_null(out->text);
}

static void compile_file(compiled *out, const char *rel, int minor)
{
    compile_variant(out, rel, minor, NULL, 0);
}

static void free_compiled(compiled *c)
{
    free(c->text);
    kc_spv_module_free(&c->m);
    kc_ctx_free(&c->c);
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p++)
        n++;
    return n;
}

static void capabilities_only_when_used(void **state)
{
    (void)state;
    compiled c;
    compile_file(&c, "tests/spirv/kernels/control_flow.kc", 3);
    assert_int_equal(1, count(c.text, "OpCapability"));
    ASSERT_CONTAINS(c.text, "OpCapability Shader");
    assert_true(count(c.text, "OpLoopMerge") >= 4);
    assert_true(count(c.text, "OpSelectionMerge") >= 4);
    ASSERT_CONTAINS(c.text, "OpSwitch");
    assert_false(c.m.layout.needs_float16 || c.m.layout.needs_subgroups || c.m.layout.needs_int64);
    free_compiled(&c);

    compile_file(&c, "tests/spirv/kernels/types.kc", 3);
    ASSERT_CONTAINS(c.text, "OpCapability Int64");
    ASSERT_CONTAINS(c.text, "OpCapability Float16");
    ASSERT_CONTAINS(c.text, "OpCapability StorageBuffer16BitAccess");
    ASSERT_CONTAINS(c.text, "ArrayStride 2"); /* half */
    ASSERT_CONTAINS(c.text, "ArrayStride 8"); /* half4, long, float2 */
    ASSERT_CONTAINS(c.text, "ArrayStride 16"); /* float4, int4 */
    assert_true(c.m.layout.needs_float16 && c.m.layout.needs_int64 && c.m.layout.needs_storage16);
    free_compiled(&c);

    compile_file(&c, "tests/spirv/kernels/shared_atomics.kc", 3);
    ASSERT_CONTAINS(c.text, "OpCapability GroupNonUniformArithmetic");
    ASSERT_CONTAINS(c.text, "OpControlBarrier");
    ASSERT_CONTAINS(c.text, "OpAtomicCompareExchange"); /* float atomic add as a CAS loop */
    ASSERT_CONTAINS(c.text, "OpAtomicSMax");
    ASSERT_CONTAINS(c.text, "OpAtomicUMax");
    ASSERT_CONTAINS(c.text, "Workgroup");
    free_compiled(&c);
}

/* Only the math library's float arithmetic carries NoContraction: one
 * kernel with logf has some, the user's multiply-add in it has none. */
static void library_arithmetic_is_exact(void **state)
{
    (void)state;
    compiled c;
    compile_file(&c, "tests/spirv/kernels/exact_libm.kc", 3);
    ASSERT_CONTAINS(c.text, "OpCapability GroupNonUniformShuffleRelative");
    ASSERT_CONTAINS(c.text, "OpGroupNonUniformShuffleUp");
    int exact = count(c.text, "NoContraction");
    int arith = count(c.text, "= OpFAdd ") + count(c.text, "= OpFSub ") + count(c.text, "= OpFMul ");
    assert_true(exact >= 20);
    assert_int_equal(3, arith - exact); /* the kernel's own v * up + 3 + ... */
    free_compiled(&c);
}

/* kc_no_contract(e): every float multiply, add and subtract written in e
 * is NoContraction, scalar and vector, and nothing else changes. */
static void no_contract_marks_its_arithmetic(void **state)
{
    (void)state;
    compiled c;
    compile_file(&c, "tests/spirv/kernels/no_contract.kc", 3); /* its first kernel, rounded_twice */
    int exact = count(c.text, "NoContraction");
    int arith = count(c.text, "= OpFAdd ") + count(c.text, "= OpFSub ") + count(c.text, "= OpFMul ");
    assert_int_equal(4, arith);
    assert_int_equal(4, exact);
    assert_int_equal(1, count(c.text, "= OpFMul %v4float "));
    free_compiled(&c);
}

/* Whole vector elements go through uint, ulong and ulong2 views of their
 * buffers (compiler/spirv/spirv.c says why); a buffer also stored to one
 * lane at a time keeps its vector view, both Aliased. The 64-bit views
 * need Int64, which libkcrt narrows away for a device without it, to a
 * module that validates. A kernel that uses 64-bit integers itself gets
 * no names, and libkcrt leaves it alone. */
static void vector_buffers_use_wide_views(void **state)
{
    (void)state;
    compiled c;
    compile_file(&c, "tests/spirv/kernels/views.kc", 3);
    ASSERT_CONTAINS(c.text, "OpCapability Int64");
    assert_true(c.m.layout.needs_int64);
    ASSERT_CONTAINS(c.text, "OpName %kc_view64 \"kc.view64\"");
    ASSERT_CONTAINS(c.text, "OpLoad %kc_view64x2 "); /* x */
    assert_int_equal(2, count(c.text, "OpLoad %kc_view64 ")); /* h, k */
    assert_int_equal(1, count(c.text, "OpLoad %uint ")); /* g */
    assert_int_equal(4, count(c.text, "= OpBitcast %v")); /* the four loads, as vectors */
    assert_int_equal(1, count(c.text, "= OpBitcast %kc_view64x2 ")); /* y's store */
    assert_int_equal(1, count(c.text, "= OpBitcast %kc_view64 ")); /* z's whole store */
    assert_int_equal(2, count(c.text, "Aliased")); /* z's two views */
    ASSERT_CONTAINS(c.text, "OpDecorate %z Binding 5"); /* one binding, two variables */
    ASSERT_CONTAINS(c.text, "OpDecorate %z_0 Binding 5");
    assert_true(rt_spirv_has_views(c.m.words, c.m.nwords * 4));
    char *problem = narrowed_problem(&c.m, 3);
    if (problem)
        fail_msg("%s", problem);
    free_compiled(&c);

    compile_file(&c, "tests/spirv/kernels/views_half_storage.kc", 3); /* 16-bit storage, no Float16 */
    assert_int_equal(0, count(c.text, "OpCapability Float16"));
    assert_int_equal(0, count(c.text, "kc.view64"));
    ASSERT_CONTAINS(c.text, "= OpLoad %v4half ");
    free_compiled(&c);

    compile_file(&c, "tests/spirv/kernels/types.kc", 3); /* long and ulong of its own */
    assert_true(c.m.layout.needs_int64);
    assert_int_equal(0, count(c.text, "kc.view64"));
    assert_false(rt_spirv_has_views(c.m.words, c.m.nwords * 4));
    free_compiled(&c);
}

/* KC_TEXEL_READS: the eligible const buffers become UniformConstant
 * sampled images of dimension Buffer, one image type per format, read
 * with OpImageFetch, and libkcrt finds their bindings and formats in the
 * module (runtime/binary.c). Where the condition is 0 the module has no
 * image at all. */
static void texel_reads_fetch_const_buffers(void **state)
{
    (void)state;
    for (int minor = 3; minor <= 5; minor += 2) {
        compiled c;
        compile_file(&c, "tests/spirv/kernels/texel_reads.kc", minor);
        ASSERT_CONTAINS(c.text, "OpCapability SampledBuffer");
        assert_int_equal(4, count(c.text, "= OpTypeImage ")); /* Rgba32f (x, u), R32f (w), R32i (k), Rgba16f (g) */
        assert_int_equal(1, count(c.text, "OpTypeImage %float Buffer 0 0 0 1 Rgba32f"));
        assert_int_equal(1, count(c.text, "OpTypeImage %float Buffer 0 0 0 1 R32f"));
        assert_int_equal(1, count(c.text, "OpTypeImage %int Buffer 0 0 0 1 R32i"));
        assert_int_equal(1, count(c.text, "OpTypeImage %float Buffer 0 0 0 1 Rgba16f"));
        assert_int_equal(6, count(c.text, "= OpImageFetch ")); /* x, u, w, k, g twice */
        assert_int_equal(1, count(c.text, "= OpFConvert %v4half ")); /* g[i].w: floats back to a half4 */
        assert_int_equal(5, count(c.text, "= OpVariable %_ptr_UniformConstant"));
        ASSERT_CONTAINS(c.text, "OpDecorate %p Binding 4"); /* float2: a storage buffer still */
        ASSERT_CONTAINS(c.text, "OpDecorate %h Binding 5");
        ASSERT_CONTAINS(c.text, "OpDecorate %g Binding 6");
        ASSERT_CONTAINS(c.text, "OpDecorate %y Binding 7");
        rt_texel t[8];
        assert_true(rt_spirv_texel_bindings(c.m.words, c.m.nwords * 4, t, 8));
        const rt_texel want[8] = {RT_TEXEL_RGBA32F, RT_TEXEL_R32F, RT_TEXEL_R32I,     RT_TEXEL_RGBA32F,
                                  RT_TEXEL_NONE,    RT_TEXEL_NONE, RT_TEXEL_RGBA16F, RT_TEXEL_NONE};
        for (int b = 0; b < 8; b++)
            assert_int_equal(want[b], t[b]);
        free_compiled(&c);
    }
    compiled c;
    compile_variant(&c, "tests/spirv/kernels/texel_reads.kc", 3, "TX", 0);
    assert_int_equal(0, count(c.text, "OpTypeImage"));
    assert_int_equal(0, count(c.text, "SampledBuffer"));
    rt_texel t[8];
    assert_false(rt_spirv_texel_bindings(c.m.words, c.m.nwords * 4, t, 8));
    free_compiled(&c);
}

/* KC_SPECIALIZE: each named scalar is also a specialisation constant,
 * SpecId its parameter index, default KC_SPV_SPEC_UNSET, selected over the
 * push constant; the others stay push constants only; libkcrt finds the
 * SpecIds in the module (runtime/binary.c). */
static void specialize_makes_spec_constants(void **state)
{
    (void)state;
    compiled c;
    compile_file(&c, "tests/runtime/kernels/specialize.kc", 3);
    assert_int_equal(2, count(c.text, "= OpSpecConstant "));
    ASSERT_CONTAINS(c.text, "SpecId 1\n"); /* op */
    ASSERT_CONTAINS(c.text, "SpecId 3\n"); /* neg */
    assert_int_equal(2, count(c.text, " SpecId "));
    ASSERT_CONTAINS(c.text, "OpSpecConstant %int -2147483648");
    ASSERT_CONTAINS(c.text, "OpSpecConstant %uint 2147483648");
    assert_int_equal(1, count(c.text, "= OpSelect %int ")); /* op: the constant or the pushed value */
    assert_int_equal(1, count(c.text, "= OpSelect %uint ")); /* neg, before it becomes a bool */
    uint32_t ids[4];
    assert_int_equal(2, rt_spirv_spec_ids(c.m.words, c.m.nwords * 4, ids, 4));
    assert_int_equal(1, ids[0]);
    assert_int_equal(3, ids[1]);
    assert_int_equal(2, rt_spirv_spec_ids(c.m.words, c.m.nwords * 4, ids, 1)); /* more than fit */
    assert_int_equal(1, ids[0]);
    assert_int_equal(0, rt_spirv_spec_ids(c.m.words, c.m.nwords * 4 - 2, ids, 4)); /* not whole words */
    free_compiled(&c);
    compile_file(&c, "tests/runtime/kernels/saxpy.kc", 3);
    assert_int_equal(0, count(c.text, "OpSpecConstant"));
    assert_int_equal(0, rt_spirv_spec_ids(c.m.words, c.m.nwords * 4, ids, 4));
    free_compiled(&c);
}

/* Vulkan leaves OpSRem and OpSMod undefined for negative operands (NVIDIA
 * returns other values): a signed % is a - (a / b) * b through OpSDiv. */
static void signed_remainder_avoids_opsrem(void **state)
{
    (void)state;
    const char *files[] = {"tests/runtime/kernels/atomics.kc", "tests/runtime/kernels/convert.kc",
                           "tests/runtime/kernels/control.kc"};
    for (int i = 0; i < 3; i++) {
        compiled c;
        compile_file(&c, files[i], 3);
        assert_int_equal(0, count(c.text, "OpSRem"));
        assert_int_equal(0, count(c.text, "OpSMod"));
        assert_true(count(c.text, "= OpSDiv ") >= 1);
        free_compiled(&c);
    }
}

static void scalars_spill_past_the_limit(void **state)
{
    (void)state;
    compiled c;
    compile_file(&c, "tests/spirv/kernels/many_scalars.kc", 3);
    assert_true(c.m.layout.spilled);
    assert_int_equal(36 * 4, c.m.layout.push_size);
    assert_int_equal(1, c.m.layout.nbuffers);
    assert_int_equal(-1, c.m.layout.push_offset[0]);
    assert_int_equal(0, c.m.layout.push_offset[1]);
    assert_int_equal(35 * 4, c.m.layout.push_offset[36]);
    assert_false(c.m.layout.needs_float16); /* half scalars are read as the float the host passes */
    assert_int_equal(0, count(c.text, "PushConstant"));
    ASSERT_CONTAINS(c.text, "OpDecorate %scalars Binding 1");
    free_compiled(&c);

    compile_file(&c, "tests/ir/golden/saxpy.kc", 3);
    assert_false(c.m.layout.spilled);
    assert_int_equal(8, c.m.layout.push_size);
    ASSERT_CONTAINS(c.text, "PushConstant");
    free_compiled(&c);
}

static void interface_lists_follow_the_version(void **state)
{
    (void)state;
    compiled c;
    compile_file(&c, "tests/ir/golden/saxpy.kc", 3);
    /* 1.3: only the Input variables */
    const char *ep = strstr(c.text, "OpEntryPoint");
    assert_non_null(ep);
    char line[512];
    snprintf(line, sizeof(line), "%.*s", (int)(strchr(ep, '\n') - ep), ep);
    assert_null(strstr(line, "%x"));
    free_compiled(&c);
    compile_file(&c, "tests/ir/golden/saxpy.kc", 4);
    ep = strstr(c.text, "OpEntryPoint");
    snprintf(line, sizeof(line), "%.*s", (int)(strchr(ep, '\n') - ep), ep);
    ASSERT_CONTAINS(line, "%x"); /* 1.4: every global the entry point uses */
    ASSERT_CONTAINS(line, "%scalars");
    free_compiled(&c);
}

static void validator_catches_a_broken_module(void **state)
{
    (void)state;
    compiled c;
    compile_file(&c, "tests/ir/golden/saxpy.kc", 3);
    /* corrupt the id bound: the validator must refuse it */
    uint32_t saved = c.m.words[3];
    c.m.words[3] = 2;
    char *msg = kc_spv_validate(c.m.words, c.m.nwords, 3);
    assert_non_null(msg);
    free(msg);
    c.m.words[3] = saved;
    msg = kc_spv_validate(c.m.words, c.m.nwords, 3);
    assert_null(msg);
    free_compiled(&c);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_kernel_validates),
        cmocka_unit_test(every_checked_kernel_validates),
        cmocka_unit_test(capabilities_only_when_used),
        cmocka_unit_test(library_arithmetic_is_exact),
        cmocka_unit_test(no_contract_marks_its_arithmetic),
        cmocka_unit_test(vector_buffers_use_wide_views),
        cmocka_unit_test(specialize_makes_spec_constants),
        cmocka_unit_test(texel_reads_fetch_const_buffers),
        cmocka_unit_test(signed_remainder_avoids_opsrem),
        cmocka_unit_test(scalars_spill_past_the_limit),
        cmocka_unit_test(interface_lists_follow_the_version),
        cmocka_unit_test(validator_catches_a_broken_module),
    };
    return kc_test_run("test_spirv", tests, sizeof tests / sizeof tests[0], argc, argv, NULL, NULL);
}
