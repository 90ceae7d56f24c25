/*
 * kc_build.h — the driver: kernel packages in, bundles out.
 *
 *   package   the .kc files of a directory (or files given one by one) and
 *             the directory's kc.yaml (shapes, input initialisation,
 *             tolerance, bytes and flops per launch)
 *   targets   the backends, by name ("spirv", "gfx1100", "sm_90", …), each a
 *             struct of function pointers (STYLE.md §3)
 *   build     every kernel × target × variant (the default, or all) into a
 *             bundle written atomically
 *
 * kc tune uses the same pieces to compile more variants later.
 */
#ifndef KC_BUILD_H
#define KC_BUILD_H

#include "kc_dsl.h"
#include "kc_ir.h"

/* ---- packages ------------------------------------------------------------------ */

/* kc.yaml's `defaults: {cpu: {WG: 128, TQ: 4}}`: the variant libkcrt
 * launches, where no tuned row fits, on a device of that type. */
typedef struct kc_type_default {
    const char *type;       /* a kcrt_device_info.type_name: "cpu", "integrated", … */
    const char *tunables;   /* "TQ=4,WG=128" as written; in declaration order once checked */
    kc_loc loc;
} kc_type_default;

/* The device types `defaults:` may name, NULL-terminated. */
extern const char *const kc_device_types[];

/* A kernel's entry in kc.yaml. */
typedef struct kc_kernel_cfg {
    const char *name;
    kc_loc loc;
    kc_vec shapes;          /* const char* "n=48000,m=3" */
    const char *init;       /* "x=normal,y=uniform" ("" = uniform everywhere) */
    double tolerance;       /* relative L2 against the default variant */
    kc_iexpr *bytes, *flops; /* per launch, over integer scalars; may be NULL */
    kc_loc bytes_loc, flops_loc; /* where kc.yaml gives them */
    kc_vec defaults;        /* kc_type_default*, one a device type */
} kc_kernel_cfg;

typedef struct kc_pkg_file {
    const char *path;
    kc_ctx ctx;             /* owns the file's AST and its diagnostics */
    kc_program *prog;       /* NULL when the file has errors */
} kc_pkg_file;

typedef struct kc_package {
    kc_arena arena;
    const char *name;       /* kc.yaml's package:, or the directory's name */
    const char *yaml_path;  /* NULL when there is none */
    kc_vec files;           /* kc_pkg_file* */
    kc_vec cfgs;            /* kc_kernel_cfg* */
    kc_ctx yaml_ctx;        /* diagnostics that point into kc.yaml */
    int nerrors;
} kc_package;

#define KC_DEFAULT_TOLERANCE 1e-5

typedef struct kc_package_options {
    const char *const *inputs;       /* directories and .kc files */
    int ninputs;
    const char *const *include_dirs; /* -I: more folders #include may read */
    int ninclude_dirs;
} kc_package_options;

/* Reads every input (directories: their *.kc files and kc.yaml). Errors
 * are printed to `out` as they come; returns false when there were any. */
bool kc_package_load(kc_package *p, const kc_package_options *o, FILE *out);
void kc_package_free(kc_package *p);
/* The kernel called name, with its file; NULL if none. */
const kc_func *kc_package_kernel(const kc_package *p, const char *name, const kc_pkg_file **file);
/* kc.yaml's entry for a kernel, or a default one. */
const kc_kernel_cfg *kc_package_cfg(kc_package *p, const char *kernel);

/* ---- targets ---------------------------------------------------------------------- */

/* One compiled variant, ready for the bundle. */
typedef struct kc_variant_blob {
    void *data;
    size_t size;
    uint32_t wg[3];
    char *args;             /* per parameter "offset:size", ';'-joined */
    uint32_t args_size;
    bool spilled;
    uint32_t shared_bytes;
    char *features;         /* "float16,int64,…" */
} kc_variant_blob;

void kc_variant_blob_free(kc_variant_blob *b);

/* Choices that reach the backends (kc build, kc emit, later kc tune). */
typedef struct kc_target_options {
    int amdgpu_cov;         /* AMDGPU code object version, 4 or 5; 0 = the default, 5 */
    bool checked;           /* bounds checks in the code (kc build --checked) */
} kc_target_options;

typedef struct kc_target kc_target;
struct kc_target {
    const char *name;       /* "spirv", "gfx1100", "sm_90" */
    const char *backend;    /* the runtime backend that loads it: "vulkan", "hip", "cuda" */
    const char *group;      /* the -t name that includes it with its family ("all-amd"), or NULL */
    kc_ir_options ir;       /* what the target does natively (a correctly rounded sqrt) */
    /* Compiles one specialised kir module; o may be NULL (defaults). */
    bool (*compile)(const kc_target *t, const kc_target_options *o, const kc_ir_module *m, kc_variant_blob *out,
                    kc_diag *diag);
};

/* The target called name, or NULL. */
const kc_target *kc_target_find(const char *name);
/* Expands a -t argument into targets: a target's name, or a family's
 * ("all-amd": every AMDGPU target, "all-nvidia": every NVIDIA one).
 * Returns how many were written to out, or -1 for an unknown name. */
int kc_target_expand(const char *name, const kc_target **out, int max);
/* Names of every target, for messages and `kc help build`. */
const char *kc_target_names(void);

/* ---- building ------------------------------------------------------------------------ */

typedef struct kc_build_options {
    const char *const *inputs;
    int ninputs;
    const char *const *include_dirs; /* -I */
    int ninclude_dirs;
    const char *const *targets; /* NULL: spirv */
    int ntargets;
    bool all_variants;
    const char *output;         /* NULL: <package>.kcb */
    FILE *log;                  /* progress and diagnostics */
    bool quiet;
    kc_target_options target;   /* zeroed: the defaults */
} kc_build_options;

/* Builds a bundle. Returns 0 on success, 1 after reporting errors. */
int kc_build(const kc_build_options *o);

/* Compiles one variant of a kernel for a target into a blob; false after
 * reporting in diag. */
bool kc_build_variant(const kc_program *prog, const kc_func *k, const kc_ir_binding *b, const kc_target *t,
                      kc_variant_blob *out, kc_diag *diag);
/* The same with backend options (NULL: the defaults). */
bool kc_build_variant_with(const kc_program *prog, const kc_func *k, const kc_ir_binding *b, const kc_target *t,
                           const kc_target_options *o, kc_variant_blob *out, kc_diag *diag);

/* ---- reading bundles (kc info, kc export, kc tune) --------------------------------- */

typedef struct kc_bundle kc_bundle;

/* Opens a bundle read-only (or for writing), checks that it is one and
 * not damaged; NULL with a message in err. */
kc_bundle *kc_bundle_open(const char *path, bool writable, char *err, size_t errlen);
void kc_bundle_close(kc_bundle *b);
/* The SQLite handle, for queries beyond the helpers here. */
struct sqlite3 *kc_bundle_db(kc_bundle *b);
const char *kc_bundle_meta(kc_bundle *b, const char *key);
/* The variant libkcrt launches untuned: kc.yaml's default for device_type
 * ("cpu", ...; NULL: none) where the kernel has one, else its source's
 * KC_TUNE defaults; NULL when the bundle has no such kernel. *why says
 * which ("kc.yaml's cpu default", "the source's default"). */
const char *kc_bundle_default_variant(kc_bundle *b, const char *kernel, const char *device_type, const char **why);

/* Rebuilds a kernel's program from the sources the bundle carries (written
 * to a temporary directory so that #include works as it did at build
 * time), and checks it is the program the bundle was built from (the
 * source hash). *k is the kernel; ctx owns the program. */
bool kc_bundle_program(kc_bundle *b, const char *kernel, kc_ctx *ctx, kc_program **prog, const kc_func **k,
                       char *err, size_t errlen);
/* Does the bundle hold this variant's binary for this target? */
bool kc_bundle_has_variant(kc_bundle *b, const char *kernel, const char *tunables, const char *target);
/* Adds a variant's binary (a bundle opened writable). */
bool kc_bundle_put_variant(kc_bundle *b, const char *kernel, const char *tunables, const char *target,
                           const kc_variant_blob *blob, char *err, size_t errlen);
/* Records the winner for a device and a shape, replacing an older one. */
typedef struct kc_tuned_row {
    const char *device_key, *device_family, *backend, *kernel, *shape, *variant;
    double time_ns;
} kc_tuned_row;
bool kc_bundle_put_tuned(kc_bundle *b, const kc_tuned_row *r, char *err, size_t errlen);
/* Groups writes into one transaction ("BEGIN", "COMMIT", "ROLLBACK"). */
bool kc_bundle_exec(kc_bundle *b, const char *sql, char *err, size_t errlen);

/* Writes the bundle's description: kernels, signatures, tunables,
 * constraints, shapes, variants and targets, tuned rows. */
bool kc_bundle_describe(kc_bundle *b, kc_buf *out, bool json, char *err, size_t errlen);
/* Writes every variant's binary to DIR/<kernel>.<variant>.<target>.<ext>
 * and DIR/manifest.yaml; false with a message. */
bool kc_bundle_export(kc_bundle *b, const char *dir, FILE *log, char *err, size_t errlen);

#endif
