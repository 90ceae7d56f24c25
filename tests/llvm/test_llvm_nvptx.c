/*
 * test_llvm_nvptx.c — PTX, checked with CUDA's ptxas (no GPU needed):
 * every kernel kc has, in its default variant and a sample of the others,
 * for sm_90 and sm_75, and a few kernels for every listed target, makes
 * PTX that ptxas assembles for that target; the entry is named after the
 * kernel, declares one parameter per kernel parameter with the size kc
 * recorded (8-byte pointers, 4-byte int/float/bool, 2-byte half), and
 * .reqntid with the workgroup size; kernels with barriers and shared
 * memory show bar.sync and .shared. Skips (77) without ptxas.
 */
#include "llvm_test.h"

#include <unistd.h>

static const char *ptxas;

typedef struct check {
    const char *target;
    long modules, failures;
} check;

#define CHECK(cond, ...)                                                                                     \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "%s: %s %s for %s: ", c->path, c->k->name, c->variant, ck->target);              \
            fprintf(stderr, __VA_ARGS__);                                                                    \
            fputc('\n', stderr);                                                                             \
            ok = false;                                                                                      \
        }                                                                                                    \
    } while (0)

/* The size of one ".param" line of an entry: .u64, .u32, .f32, .b16, or
 * ".align 2 .b8 name[2]". */
static long param_size(const char *line)
{
    const char *b = strchr(line, '[');
    if (strstr(line, ".b8") && b)
        return atol(b + 1);
    static const struct {
        const char *type;
        long size;
    } types[] = {{".u64", 8}, {".b64", 8}, {".s64", 8}, {".u32", 4}, {".b32", 4},
                 {".s32", 4}, {".f32", 4}, {".u16", 2}, {".b16", 2}, {".f16", 2}};
    for (size_t i = 0; i < KC_COUNT(types); i++)
        if (strstr(line, types[i].type))
            return types[i].size;
    return -1;
}

static bool check_params(const lt_case *c, check *ck, const char *ptx, const kc_llvm_layout *L)
{
    bool ok = true;
    char entry[256];
    snprintf(entry, sizeof(entry), ".visible .entry %s(", c->k->name);
    const char *e = strstr(ptx, entry);
    CHECK(e, "no '%s'", entry);
    if (!e)
        return false;
    const char *end = strstr(e, "\n)");
    int n = 0;
    for (const char *p = strstr(e, ".param"); p && end && p < end; p = strstr(p + 1, ".param")) {
        char line[256];
        snprintf(line, sizeof(line), "%.*s", (int)strcspn(p, "\n"), p);
        long size = param_size(line);
        CHECK(n < L->nparams && size == (long)L->arg_size[n], "parameter %d: '%s', kc recorded %u bytes", n,
              line, n < L->nparams ? L->arg_size[n] : 0);
        n++;
    }
    CHECK(n == L->nparams, "%d parameters in the PTX, %d in the kernel", n, L->nparams);
    return ok;
}

static bool check_ptx(const lt_case *c, check *ck, const char *ptx, const kc_llvm_layout *L)
{
    bool ok = true;
    char want[128];
    snprintf(want, sizeof(want), ".target %s\n", ck->target);
    CHECK(strstr(ptx, want), "no '%s'", want);
    CHECK(strstr(ptx, ".version 7.8\n"), "not PTX 7.8");
    snprintf(want, sizeof(want), ".reqntid %u, %u, %u\n", L->wg[0], L->wg[1], L->wg[2]);
    CHECK(strstr(ptx, want), "no '%s'", want);
    CHECK(!lt_has_barrier(c->m) || strstr(ptx, "bar.sync"), "a barrier, but no bar.sync");
    CHECK(!lt_uses_shared(c->m) || strstr(ptx, ".shared"), "shared memory, but no .shared");
    return ok && check_params(c, ck, ptx, L);
}

static void one_module(void *user, const lt_case *c)
{
    check *ck = user;
    kc_llvm_module ptx;
    if (!lt_emit(c, ck->target, 0, KC_LLVM_OUT_BINARY, &ptx)) {
        ck->failures++;
        return;
    }
    bool ok = check_ptx(c, ck, ptx.data, &ptx.layout);
    char *path = lt_temp_file(".ptx", ptx.data, ptx.size);
    int status;
    char *out = lt_run(&status, "'%s' --gpu-name %s -o /dev/null '%s' 2>&1", ptxas, ck->target, path);
    if (status != 0) {
        fprintf(stderr, "%s: %s %s: ptxas --gpu-name %s refuses it:\n%s\n", c->path, c->k->name, c->variant,
                ck->target, out);
        ok = false;
    }
    ck->modules++;
    ck->failures += !ok;
    free(out);
    unlink(path);
    free(path);
    kc_llvm_module_free(&ptx);
}

static void sweep(const char *target, int extra)
{
    check ck = {target, 0, 0};
    lt_sweep s;
    lt_sweep_dirs(lt_kernel_dirs, extra, one_module, &ck, &s);
    fprintf(stderr, "%s: %ld PTX modules from %d kernels in %d files assembled, %ld failures\n", target,
            ck.modules, s.kernels, s.files, ck.failures + s.failures);
    assert_true(s.files >= 90);
    assert_int_equal(0, ck.failures + s.failures);
}

static void every_kernel_sm_90(void **state)
{
    (void)state;
    sweep("sm_90", 2);
}

static void every_kernel_sm_75(void **state)
{
    (void)state;
    sweep("sm_75", 0);
}

/* kc build --checked: default variants with bounds checks */
static void every_kernel_checked(void **state)
{
    (void)state;
    lt_checked = true;
    sweep("sm_90", 0);
    lt_checked = false;
}

static void few(void *user, const lt_case *c)
{
    static const char *const names[] = {"reduce", "types",   "control_flow", "sg2d",
                                        "mix",    "nothing", "gemm_tiled"};
    for (size_t i = 0; i < KC_COUNT(names); i++)
        if (!strcmp(c->k->name, names[i]))
            one_module(user, c);
}

static void every_target(void **state)
{
    (void)state;
    static const char *const targets[] = {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90"};
    const char *const dirs[] = {"tests/spirv/kernels", "tests/llvm/kernels", "tests/dsl/corpus/ok", NULL};
    for (size_t t = 0; t < KC_COUNT(targets); t++) {
        check ck = {targets[t], 0, 0};
        lt_sweep s;
        lt_sweep_dirs(dirs, 0, few, &ck, &s);
        fprintf(stderr, "%s: %ld PTX modules assembled\n", targets[t], ck.modules);
        assert_true(ck.modules >= 7);
        assert_int_equal(0, ck.failures);
    }
}

int main(int argc, char **argv)
{
    const char *const names[] = {"ptxas", NULL};
    ptxas = lt_tool(names);
    lt_need(ptxas, "ptxas (the CUDA toolkit)");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_kernel_sm_90),
        cmocka_unit_test(every_kernel_sm_75),
        cmocka_unit_test(every_kernel_checked),
        cmocka_unit_test(every_target),
    };
    return kc_test_run("test_llvm_nvptx", tests, sizeof tests / sizeof tests[0], argc, argv, NULL, NULL);
}
