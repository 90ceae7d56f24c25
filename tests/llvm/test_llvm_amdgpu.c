/*
 * test_llvm_amdgpu.c — AMDGPU code objects, checked with LLVM's own tools
 * (no GPU needed): every kernel kc has, in its default variant and a
 * sample of the others, for one wave32 and one wave64 target, and a few
 * kernels for every listed target, make a code object whose AMDHSA
 * metadata (llvm-readelf --notes) names the target and the kernel and
 * declares exactly the kernel-argument layout kc recorded — offsets,
 * sizes, global_buffer or by_value, the segment size — so the layout the
 * runtime packs is the one the code object expects; kernels with barriers
 * and shared memory show s_barrier and LDS instructions in the
 * disassembly (llvm-objdump -d); code object v4 and v5 are both made on
 * request and say so; kc's own reading of the registers, spills, scratch
 * and LDS (kc_binres_read, what kc info reports) matches llvm-readelf's on
 * every code object. Skips (77) without ld.lld, llvm-readelf or
 * llvm-objdump.
 */
#include "kc_binres.h"
#include "llvm_test.h"

#include <unistd.h>

static const char *readelf, *objdump;

/* ---- the AMDHSA metadata, as llvm-readelf --notes prints it ---------------------------- */

typedef struct note_arg {
    char name[128], kind[32];
    long offset, size;
} note_arg;

typedef struct notes {
    char target[128], name[128], symbol[128];
    long version[2], reqd[3], kernarg_size, wave, group_size;
    long vgprs, sgprs, vgpr_spills, sgpr_spills, private_size;
    int nversion, nreqd, nkernels, nargs;
    note_arg args[64];
} notes;

/* "  .key:   value" -> key and value (without a YAML !str tag) */
static void key_value(char *s, char **key, char **value)
{
    char *colon = strchr(s, ':');
    *key = s;
    *value = "";
    if (!colon)
        return;
    *colon = 0;
    char *v = colon + 1;
    while (*v == ' ')
        v++;
    if (!strncmp(v, "!str ", 5))
        v += 5;
    v[strcspn(v, "\n")] = 0;
    *value = v;
}

static void arg_field(note_arg *a, const char *key, const char *v)
{
    if (!strcmp(key, ".name"))
        snprintf(a->name, sizeof(a->name), "%s", v);
    else if (!strcmp(key, ".value_kind"))
        snprintf(a->kind, sizeof(a->kind), "%s", v);
    else if (!strcmp(key, ".offset"))
        a->offset = atol(v);
    else if (!strcmp(key, ".size"))
        a->size = atol(v);
}

static void kernel_field(notes *n, const char *key, const char *v)
{
    if (!strcmp(key, ".name"))
        snprintf(n->name, sizeof(n->name), "%s", v);
    else if (!strcmp(key, ".symbol"))
        snprintf(n->symbol, sizeof(n->symbol), "%s", v);
    else if (!strcmp(key, ".kernarg_segment_size"))
        n->kernarg_size = atol(v);
    else if (!strcmp(key, ".wavefront_size"))
        n->wave = atol(v);
    else if (!strcmp(key, ".group_segment_fixed_size"))
        n->group_size = atol(v);
    else if (!strcmp(key, ".private_segment_fixed_size"))
        n->private_size = atol(v);
    else if (!strcmp(key, ".vgpr_count"))
        n->vgprs = atol(v);
    else if (!strcmp(key, ".sgpr_count"))
        n->sgprs = atol(v);
    else if (!strcmp(key, ".vgpr_spill_count"))
        n->vgpr_spills = atol(v);
    else if (!strcmp(key, ".sgpr_spill_count"))
        n->sgpr_spills = atol(v);
}

enum { IN_TOP, IN_KERNEL, IN_ARGS, IN_REQD, IN_VERSION };

static void parse_notes(char *text, notes *n)
{
    memset(n, 0, sizeof(*n));
    int state = IN_TOP;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        int indent = (int)strspn(line, " ");
        char *s = line + indent;
        bool item = !strncmp(s, "- ", 2);
        if (item)
            s += 2, indent += 2;
        char *key, *v;
        if (!strncmp(s, "amdhsa.", 7)) {
            key_value(s, &key, &v);
            state = !strcmp(key, "amdhsa.version") ? IN_VERSION : IN_TOP;
            if (!strcmp(key, "amdhsa.target"))
                snprintf(n->target, sizeof(n->target), "%s", v);
        } else if (s[0] == '.' && indent == 4) {
            n->nkernels += item;
            key_value(s, &key, &v);
            state = !strcmp(key, ".args")                  ? IN_ARGS
                    : !strcmp(key, ".reqd_workgroup_size") ? IN_REQD
                                                           : IN_KERNEL;
            kernel_field(n, key, v);
        } else if (s[0] == '.' && indent == 8 && state == IN_ARGS) {
            if (item && n->nargs < 64)
                n->nargs++;
            key_value(s, &key, &v);
            if (n->nargs)
                arg_field(&n->args[n->nargs - 1], key, v);
        } else if (item && state == IN_REQD && n->nreqd < 3) {
            n->reqd[n->nreqd++] = atol(s);
        } else if (item && state == IN_VERSION && n->nversion < 2) {
            n->version[n->nversion++] = atol(s);
        }
    }
}

/* ---- one code object ------------------------------------------------------------------ */

typedef struct check {
    const char *target;
    int cov, wave;
    long objects, disassembled, failures;
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

static bool check_notes(const lt_case *c, check *ck, const kc_llvm_module *co, notes *n)
{
    bool ok = true;
    const kc_llvm_layout *L = &co->layout;
    char want[160];
    snprintf(want, sizeof(want), "amdgcn-amd-amdhsa--%s", ck->target);
    CHECK(!strcmp(n->target, want), "target '%s'", n->target);
    CHECK(n->nversion == 2 && n->version[0] == 1 && n->version[1] == (ck->cov == 4 ? 1 : 2),
          "amdhsa.version %ld.%ld", n->version[0], n->version[1]);
    CHECK(n->nkernels == 1, "%d kernels", n->nkernels);
    CHECK(!strcmp(n->name, c->k->name), "kernel name '%s'", n->name);
    snprintf(want, sizeof(want), "%s.kd", c->k->name);
    CHECK(!strcmp(n->symbol, want), "symbol '%s'", n->symbol);
    CHECK(n->kernarg_size == L->args_size, ".kernarg_segment_size %ld, kc recorded %u", n->kernarg_size,
          L->args_size);
    CHECK(n->wave == L->wave_size, ".wavefront_size %ld, kc's subgroup size %d", n->wave, L->wave_size);
    CHECK(n->nreqd == 3 && n->reqd[0] == L->wg[0] && n->reqd[1] == L->wg[1] && n->reqd[2] == L->wg[2],
          ".reqd_workgroup_size");
    /* LLVM may drop unused shared variables, and may move private arrays
     * to LDS (AMDGPUPromoteAlloca) within what is left */
    CHECK(n->group_size <= (lt_has_private_array(c->m) ? 65536 : (long)L->shared_bytes),
          ".group_segment_fixed_size %ld > %u", n->group_size, L->shared_bytes);
    /* kc's own reading of the note (kc info's resources) against llvm-readelf's */
    kc_binres r;
    char err[160];
    bool read = kc_binres_read(ck->target, co->data, co->size, &r, err, sizeof(err));
    CHECK(read && r.known, "kc_binres_read: %s", read ? "nothing known" : err);
    CHECK(r.vgprs == n->vgprs && r.sgprs == n->sgprs && r.vgpr_spills == n->vgpr_spills &&
              r.sgpr_spills == n->sgpr_spills && r.scratch_bytes == n->private_size && r.shared_bytes == n->group_size,
          "kc_binres_read: %ld/%ld VGPRs, %ld/%ld SGPRs, spills %ld/%ld and %ld/%ld, scratch %ld/%ld, LDS %ld/%ld "
          "(kc/llvm-readelf)",
          r.vgprs, n->vgprs, r.sgprs, n->sgprs, r.vgpr_spills, n->vgpr_spills, r.sgpr_spills, n->sgpr_spills,
          r.scratch_bytes, n->private_size, r.shared_bytes, n->group_size);
    const kc_ir_func *k = c->m->kernel;
    CHECK(n->nargs == k->nparams, "%d arguments declared, %d parameters", n->nargs, k->nparams);
    for (int i = 0; ok && i < k->nparams; i++) {
        const note_arg *a = &n->args[i];
        const char *kind = k->params[i]->is_buffer ? "global_buffer" : "by_value";
        CHECK(!strcmp(a->name, k->params[i]->name), "argument %d is '%s'", i, a->name);
        CHECK(!strcmp(a->kind, kind), "argument %s is %s", a->name, a->kind);
        CHECK(a->offset == L->arg_offset[i] && a->size == L->arg_size[i],
              "argument %s at %ld:%ld, kc recorded %u:%u", a->name, a->offset, a->size, L->arg_offset[i],
              L->arg_size[i]);
    }
    return ok;
}

/* An LDS instruction that reads or writes memory (ds_read, ds_write,
 * ds_load, ds_store, ds_add, …; not the lane permutes). */
static bool lds_access(const char *dis)
{
    for (const char *p = dis; (p = strstr(p, "\tds_")); p++)
        if (strncmp(p + 1, "ds_bpermute", 11) && strncmp(p + 1, "ds_permute", 10) &&
            strncmp(p + 1, "ds_swizzle", 10))
            return true;
    return false;
}

static bool check_code(const lt_case *c, check *ck, const char *path)
{
    bool ok = true;
    /* a workgroup of one wave needs no s_barrier, and LLVM leaves it out */
    const int64_t *wg = c->m->kernel->wg_size;
    bool barrier = lt_has_barrier(c->m) && wg[0] * wg[1] * wg[2] > ck->wave;
    bool shared = lt_uses_shared(c->m);
    if (!barrier && !shared)
        return true;
    int status;
    char *dis = lt_run(&status, "'%s' -d '%s'", objdump, path);
    CHECK(status == 0, "llvm-objdump failed");
    CHECK(!barrier || strstr(dis, "s_barrier"), "a barrier, but no s_barrier");
    CHECK(!shared || lds_access(dis), "shared memory, but no LDS instruction");
    free(dis);
    ck->disassembled++;
    return ok;
}

static void one_object(void *user, const lt_case *c)
{
    check *ck = user;
    kc_llvm_module co;
    if (!lt_emit(c, ck->target, ck->cov, KC_LLVM_OUT_BINARY, &co)) {
        ck->failures++;
        return;
    }
    char *path = lt_temp_file(".hsaco", co.data, co.size);
    int status;
    char *text = lt_run(&status, "'%s' --notes '%s'", readelf, path);
    notes n;
    parse_notes(text, &n);
    bool ok = status == 0 && check_notes(c, ck, &co, &n) && check_code(c, ck, path);
    ck->objects++;
    ck->failures += !ok;
    free(text);
    unlink(path);
    free(path);
    kc_llvm_module_free(&co);
}

static int wave_of(const char *target)
{
    kc_llvm_target t;
    assert_true(kc_llvm_target_parse(target, &t));
    return t.wave_size;
}

static void sweep(const char *target, int extra)
{
    check ck = {target, 5, wave_of(target), 0, 0, 0};
    lt_sweep s;
    lt_sweep_dirs(lt_kernel_dirs, extra, one_object, &ck, &s);
    fprintf(stderr, "%s: %ld code objects from %d kernels in %d files (%ld disassembled), %ld failures\n",
            target, ck.objects, s.kernels, s.files, ck.disassembled, ck.failures + s.failures);
    assert_true(s.files >= 90);
    assert_int_equal(0, ck.failures + s.failures);
}

static void every_kernel_wave32(void **state)
{
    (void)state;
    sweep("gfx1100", 2);
}

static void every_kernel_wave64(void **state)
{
    (void)state;
    sweep("gfx90a", 1);
}

/* kc build --checked: default variants with bounds checks */
static void every_kernel_checked(void **state)
{
    (void)state;
    lt_checked = true;
    sweep("gfx1100", 0);
    lt_checked = false;
}

/* ---- every listed target, a few kernels ------------------------------------------------------ */

static const char *const amd_targets[] = {"gfx1100", "gfx1101", "gfx1102", "gfx1030", "gfx1031",
                                          "gfx1032", "gfx90a",  "gfx942",  "gfx906"};

static void few(void *user, const lt_case *c)
{
    static const char *const names[] = {"reduce", "types",   "control_flow", "sg2d",
                                        "mix",    "nothing", "gemm_tiled"};
    for (size_t i = 0; i < KC_COUNT(names); i++)
        if (!strcmp(c->k->name, names[i]))
            one_object(user, c);
}

static void every_target(void **state)
{
    (void)state;
    const char *const dirs[] = {"tests/spirv/kernels", "tests/llvm/kernels", "tests/dsl/corpus/ok", NULL};
    for (size_t t = 0; t < KC_COUNT(amd_targets); t++) {
        check ck = {amd_targets[t], 5, wave_of(amd_targets[t]), 0, 0, 0};
        lt_sweep s;
        lt_sweep_dirs(dirs, 0, few, &ck, &s);
        fprintf(stderr, "%s: %ld code objects\n", amd_targets[t], ck.objects);
        assert_true(ck.objects >= 7);
        assert_int_equal(0, ck.failures);
    }
}

/* ---- code object versions ---------------------------------------------------------------------- */

static void abi_version(const char *target, int cov, int want)
{
    lt_compiled c;
    lt_compile(&c, "tests/llvm/kernels/kernargs.kc", NULL, target, cov, KC_LLVM_OUT_BINARY, true);
    assert_true(c.ok);
    char *path = lt_temp_file(".hsaco", c.mod.data, c.mod.size);
    int status;
    char *head = lt_run(&status, "'%s' -h '%s'", readelf, path);
    char line[64];
    snprintf(line, sizeof(line), "ABI Version:                       %d", want);
    ASSERT_CONTAINS(head, line); /* ELFABIVERSION_AMDGPU_HSA_V4 = 2, V5 = 3 */
    char *text = lt_run(&status, "'%s' --notes '%s'", readelf, path);
    notes n;
    parse_notes(text, &n);
    assert_int_equal(cov == 4 ? 1 : 2, n.version[1]);
    assert_int_equal(56, n.kernarg_size); /* no hidden arguments in either */
    assert_int_equal(9, n.nargs);
    free(head);
    free(text);
    unlink(path);
    free(path);
    lt_compiled_free(&c);
}

static void code_object_versions(void **state)
{
    (void)state;
    abi_version("gfx1100", 5, 3);
    abi_version("gfx1100", 4, 2);
    abi_version("gfx906", 4, 2);
    abi_version("gfx942", 5, 3);
}

int main(int argc, char **argv)
{
    const char *const re[] = {"llvm-readelf-19", "llvm-readelf", NULL};
    const char *const od[] = {"llvm-objdump-19", "llvm-objdump", NULL};
    lt_need(kc_llvm_lld_path(), "ld.lld (lld-19)");
    readelf = lt_tool(re);
    objdump = lt_tool(od);
    lt_need(readelf, "llvm-readelf");
    lt_need(objdump, "llvm-objdump");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_kernel_wave32),
        cmocka_unit_test(every_kernel_wave64),
        cmocka_unit_test(every_kernel_checked),
        cmocka_unit_test(every_target),
        cmocka_unit_test(code_object_versions),
    };
    return kc_test_run("test_llvm_amdgpu", tests, sizeof tests / sizeof tests[0], argc, argv, NULL, NULL);
}
