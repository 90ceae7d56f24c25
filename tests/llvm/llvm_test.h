/*
 * llvm_test.h — what the LLVM backend's tests share: finding the tools
 * they check with (LLVM's readelf and objdump, CUDA's ptxas), running
 * them, and sweeping every kernel kc has through a callback.
 */
#ifndef KC_LLVM_TEST_H
#define KC_LLVM_TEST_H

#include "kc_test.h"

#include "kc_dsl.h"
#include "kc_ir.h"
#include "kc_llvm.h"

/* The first of names found (absolute, on PATH, or in the LLVM 19 and CUDA
 * bin directories); NULL if none. The result is static. */
const char *lt_tool(const char *const *names);
/* Exits with KC_TEST_SKIP, saying why, when tool is NULL. */
void lt_need(const char *tool, const char *what);

/* Runs a shell command; its standard output (free it) and exit status. */
char *lt_run(int *status, const char *fmt, ...) KC_PRINTF(2, 3);
/* Writes data to a new temporary file with the suffix; its path (free it). */
char *lt_temp_file(const char *suffix, const void *data, size_t size);

/* Does the kernel contain a barrier; does it read and write shared memory? */
bool lt_has_barrier(const kc_ir_module *m);
bool lt_uses_shared(const kc_ir_module *m);
/* Has it a private array (which AMDGPU may move to LDS)? */
bool lt_has_private_array(const kc_ir_module *m);

/* One kernel variant, compiled to kir, handed to a sweep's callback. */
typedef struct lt_case {
    const char *path;
    const kc_func *k;
    const kc_ir_binding *b;
    const char *variant; /* "WG=64" ("" without tunables) */
    kc_ir_module *m;
    kc_diag *diag;
} lt_case;

typedef void (*lt_fn)(void *user, const lt_case *c);

/* Every kernel of the .kc files in dirs (relative to the source tree),
 * in its default variant and up to extra more spread over its space.
 * Counts files, kernels and variants; a file or variant that does not
 * parse or lower counts as a failure. */
typedef struct lt_sweep {
    int files, kernels, variants, failures;
} lt_sweep;
void lt_sweep_dirs(const char *const *dirs, int extra, lt_fn fn, void *user, lt_sweep *out);
/* The source tree's kernel directories, NULL-terminated. */
extern const char *const lt_kernel_dirs[];
/* Sweeps compile with kc build --checked's bounds checks when set. */
extern bool lt_checked;

/* Compiles a variant; false after printing the diagnostics. */
bool lt_emit(const lt_case *c, const char *target, int cov, kc_llvm_output what, kc_llvm_module *out);

/* A file's first kernel (or the one named), default variant, compiled. */
typedef struct lt_compiled {
    kc_ctx ctx;
    kc_llvm_module mod;
    bool ok;
} lt_compiled;
void lt_compile(lt_compiled *out, const char *rel, const char *kernel, const char *target, int cov,
                kc_llvm_output what, bool optimize);
void lt_compiled_free(lt_compiled *c);

#endif
