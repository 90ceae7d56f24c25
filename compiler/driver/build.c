/*
 * build.c — `kc build`: every kernel of a package, for every target, for
 * the default variant (or all of them), into one bundle.
 *
 * The default variant must compile. With --all-variants, a variant that
 * does not (an unrollable loop at one tile size, a private array over the
 * limit) is left out with a note, as the tuner would record it.
 */
#include "bundle_private.h"
#include "kc_binres.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

bool kc_build_variant_with(const kc_program *prog, const kc_func *k, const kc_ir_binding *b, const kc_target *t,
                           const kc_target_options *o, kc_variant_blob *out, kc_diag *diag)
{
    kc_arena a; /* all of one variant's compilation, freed at once */
    kc_arena_init(&a);
    kc_ir_options ir = t->ir;
    ir.bounds_checks = o && o->checked;
    kc_ir_module *m = kc_ir_compile_with(&a, diag, prog, k, b, NULL, &ir);
    bool ok = m && t->compile(t, o, m, out, diag);
    kc_arena_free(&a);
    return ok;
}

bool kc_build_variant(const kc_program *prog, const kc_func *k, const kc_ir_binding *b, const kc_target *t,
                      kc_variant_blob *out, kc_diag *diag)
{
    return kc_build_variant_with(prog, k, b, t, NULL, out, diag);
}

typedef struct job_list {
    kc_arena *arena;
    kc_vec bindings; /* kc_ir_binding* */
} job_list;

static void collect(void *user, const kc_ir_binding *b)
{
    job_list *j = user;
    kc_ir_binding *copy = KC_NEW(j->arena, kc_ir_binding);
    copy->n = b->n;
    copy->names = kc_arena_alloc(j->arena, sizeof(char *) * (size_t)(b->n + 1));
    copy->values = kc_arena_alloc(j->arena, sizeof(int64_t) * (size_t)(b->n + 1));
    memcpy(copy->names, b->names, sizeof(char *) * (size_t)b->n);
    memcpy(copy->values, b->values, sizeof(int64_t) * (size_t)b->n);
    kc_vec_push(j->arena, &j->bindings, copy);
}

/* On a terminal, one line redrawn; in a log (CI), a line per kernel of
 * an --all-variants build and one every 30 s within a long kernel: a log
 * once showed nothing for the 28 minutes of a whole package. */
typedef struct progress {
    FILE *log;
    bool tty, quiet, lines;
    long done, total;
    double start, last_line;
} progress;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void tick(progress *pr, const char *kernel)
{
    pr->done++;
    if (pr->tty && !pr->quiet && (pr->done % 8 == 0 || pr->done == pr->total))
        fprintf(pr->log, "\r  compiling %ld/%ld (%s)\033[K", pr->done, pr->total, kernel);
    if (pr->lines && now_s() - pr->last_line >= 30) {
        pr->last_line = now_s();
        fprintf(pr->log, "kc build: %ld/%ld variants compiled (%s), %.0f s\n", pr->done, pr->total, kernel,
                pr->last_line - pr->start);
        fflush(pr->log);
    }
}

static void kernel_done(progress *pr, const char *kernel, long variants)
{
    if (!pr->lines)
        return;
    pr->last_line = now_s();
    fprintf(pr->log, "kc build: %s: %ld variant%s compiled (%ld/%ld in all), %.0f s\n", kernel, variants,
            variants == 1 ? "" : "s", pr->done, pr->total, pr->last_line - pr->start);
    fflush(pr->log);
}

/* Does the compiled variant spill registers or use scratch (kc_binres.h)?
 * The first one's description goes to first. */
static bool spills(const kc_bundle_variant *v, kc_buf *first)
{
    kc_binres r;
    char err[160];
    if (!kc_binres_read(v->target, v->blob.data, v->blob.size, &r, err, sizeof(err)) || !kc_binres_spills(&r))
        return false;
    if (!first->len) {
        kc_buf_printf(first, "%s for %s: ", *v->tunables ? v->tunables : "the one variant", v->target);
        if (r.vgpr_spills >= 0)
            kc_buf_printf(first, "%ld VGPRs and %ld SGPRs spilled, ", r.vgpr_spills, r.sgpr_spills);
        kc_buf_printf(first, "%ld bytes of %s a %s", r.scratch_bytes, r.vgprs >= 0 ? "scratch" : "local stack",
                      r.vgprs >= 0 ? "lane" : "thread");
    }
    return true;
}

/* kc.yaml's defaults per device type (checked when the package was read),
 * each once, beside the default variant. */
static void add_type_defaults(kc_arena *a, const kc_bundle_kernel *bk, job_list *jobs)
{
    const kc_vec *ds = &bk->cfg->defaults;
    for (int i = 0; i < ds->len; i++) {
        const kc_type_default *d = ds->items[i];
        bool seen = false;
        for (int j = 0; j < jobs->bindings.len && !seen; j++)
            seen = strcmp(kc_ir_binding_text(a, jobs->bindings.items[j]), d->tunables) == 0;
        kc_ir_binding b;
        char err[256];
        if (!seen && kc_ir_parse_binding(a, bk->file->prog, bk->kernel, d->tunables, &b, err, sizeof(err)))
            collect(jobs, &b);
    }
}

/* Is text one of the kernel's defaults (a type's included)? Its errors are
 * printed and fail the build. */
static bool is_a_default(const kc_bundle_kernel *bk, const char *text)
{
    bool is = strcmp(text, bk->default_variant) == 0;
    for (int i = 0; i < bk->cfg->defaults.len && !is; i++)
        is = strcmp(((const kc_type_default *)bk->cfg->defaults.items[i])->tunables, text) == 0;
    return is;
}

/* Compiles one kernel's variants for every target. */
static bool build_kernel(kc_arena *a, kc_bundle_kernel *bk, const kc_target *const *targets, int ntargets,
                         const kc_build_options *o, kc_vec *variants, progress *pr)
{
    const kc_program *prog = bk->file->prog;
    job_list jobs = {a, {0}};
    kc_ir_binding def = kc_ir_default_binding(a, prog, bk->kernel);
    bk->default_variant = kc_ir_binding_text(a, &def);
    if (o->all_variants) {
        kc_ir_each_variant(a, prog, bk->kernel, collect, &jobs);
    } else {
        collect(&jobs, &def);
        add_type_defaults(a, bk, &jobs);
    }
    bool ok = true;
    long left_out = 0, spilling = 0;
    kc_buf first_failure = {0}, first_spill = {0};
    for (int t = 0; t < ntargets; t++) {
        for (int i = 0; i < jobs.bindings.len; i++) {
            const kc_ir_binding *b = jobs.bindings.items[i];
            const char *text = kc_ir_binding_text(a, b);
            bool is_default = is_a_default(bk, text);
            kc_diag quiet; /* a non-default variant's errors are summarised, not printed */
            kc_diag_init(&quiet, &bk->file->ctx.src, NULL);
            kc_diag *d = is_default ? (kc_diag *)&bk->file->ctx.diag : &quiet;
            kc_bundle_variant *v = KC_NEW(a, kc_bundle_variant);
            v->kernel = bk;
            v->tunables = text;
            v->target = targets[t]->name;
            if (kc_build_variant_with(prog, bk->kernel, b, targets[t], &o->target, &v->blob, d)) {
                kc_vec_push(a, variants, v);
                if (spills(v, &first_spill))
                    spilling++;
            } else if (is_default) {
                ok = false;
            } else {
                if (!left_out++)
                    kc_buf_printf(&first_failure, "%s (%s): %s", text, targets[t]->name, quiet.text.data ? quiet.text.data : "");
            }
            kc_diag_free(&quiet);
            tick(pr, bk->kernel->name);
        }
    }
    kernel_done(pr, bk->kernel->name, (long)jobs.bindings.len * ntargets - left_out);
    if (left_out) {
        if (pr->tty && !pr->quiet)
            fputc('\n', pr->log);
        fprintf(pr->log, "kc build: note: %ld variant%s of '%s' do not compile and are left out; the first, %s", left_out,
                left_out == 1 ? "" : "s", bk->kernel->name, first_failure.data);
    }
    if (spilling && !pr->quiet) {
        if (pr->tty)
            fputc('\n', pr->log);
        fprintf(pr->log,
                "kc build: note: %ld variant%s of '%s' %s registers or %s scratch memory (slow on a GPU; "
                "`kc info` lists them; kc tune skips AMDGPU variants that spill): the first, %s\n",
                spilling, spilling == 1 ? "" : "s", bk->kernel->name, spilling == 1 ? "spills" : "spill",
                spilling == 1 ? "uses" : "use", first_spill.data);
    }
    kc_buf_free(&first_failure);
    kc_buf_free(&first_spill);
    return ok;
}

static const char *output_path(kc_arena *a, const kc_build_options *o, const kc_package *p)
{
    return o->output ? o->output : kc_arena_printf(a, "%s.kcb", p->name);
}

/* The -t arguments as targets, each once ("-t all-amd -t gfx1100" builds
 * gfx1100 once); -1 after a message for an unknown name. */
static int expand_targets(const kc_build_options *o, FILE *log, const kc_target **targets, int max)
{
    int ntargets = 0;
    for (int i = 0; i < (o->ntargets ? o->ntargets : 1); i++) {
        const char *name = o->ntargets ? o->targets[i] : "spirv";
        const kc_target *found[64];
        int n = kc_target_expand(name, found, 64);
        if (n < 0) {
            fprintf(log, "kc build: unknown target '%s' (kc knows: %s)\n", name, kc_target_names());
            return -1;
        }
        for (int k = 0; k < n; k++) {
            bool seen = false;
            for (int j = 0; j < ntargets; j++)
                seen |= targets[j] == found[k];
            if (!seen && ntargets < max)
                targets[ntargets++] = found[k];
        }
    }
    return ntargets;
}

int kc_build(const kc_build_options *o)
{
    FILE *log = o->log ? o->log : stderr;
    const kc_target *targets[64];
    int ntargets = expand_targets(o, log, targets, 64);
    if (ntargets < 0)
        return 1;
    kc_package p;
    kc_package_options po = {o->inputs, o->ninputs, o->include_dirs, o->ninclude_dirs};
    if (!kc_package_load(&p, &po, log)) {
        fprintf(log, "kc build: %d error%s; no bundle written\n", p.nerrors, p.nerrors == 1 ? "" : "s");
        kc_package_free(&p);
        return 1;
    }
    kc_arena a;
    kc_arena_init(&a);
    kc_vec kernels = {0}, variants = {0};
    bool tty = kc_is_terminal(log);
    progress pr = {log, tty, o->quiet, !tty && !o->quiet && o->all_variants, 0, 0, now_s(), now_s()};
    for (int f = 0; f < p.files.len; f++) {
        kc_pkg_file *file = p.files.items[f];
        for (int i = 0; i < file->prog->funcs.len; i++) {
            const kc_func *k = file->prog->funcs.items[i];
            if (!k->is_kernel)
                continue;
            kc_bundle_kernel *bk = KC_NEW(&a, kc_bundle_kernel);
            bk->id = kernels.len + 1;
            bk->kernel = k;
            bk->file = file;
            bk->cfg = kc_package_cfg(&p, k->name);
            kc_vec_push(&a, &kernels, bk);
            pr.total += (o->all_variants ? kc_ir_each_variant(&a, file->prog, k, NULL, NULL) : 1) * ntargets;
        }
    }
    bool ok = kernels.len > 0;
    if (!ok)
        fprintf(log, "kc build: the package has no kernels\n");
    for (int i = 0; i < kernels.len; i++)
        ok &= build_kernel(&a, kernels.items[i], targets, ntargets, o, &variants, &pr);
    if (pr.tty && !o->quiet && pr.total >= 8)
        fputc('\n', log);
    const char *out = output_path(&a, o, &p);
    kc_buf err = {0};
    if (ok && !kc_bundle_write(out, &p, &kernels, &variants, o->target.checked, &err)) {
        fprintf(log, "kc build: %s\n", err.data);
        ok = false;
    }
    if (ok && !o->quiet)
        fprintf(log, "kc build: wrote %s: %d kernel%s, %d variant%s (%d target%s)\n", out, kernels.len,
                kernels.len == 1 ? "" : "s", variants.len, variants.len == 1 ? "" : "s", ntargets,
                ntargets == 1 ? "" : "s");
    else if (!ok)
        fprintf(log, "kc build: no bundle written\n");
    for (int i = 0; i < variants.len; i++)
        kc_variant_blob_free(&((kc_bundle_variant *)variants.items[i])->blob);
    kc_buf_free(&err);
    kc_arena_free(&a);
    kc_package_free(&p);
    return ok ? 0 : 1;
}
