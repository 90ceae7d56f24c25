/*
 * bundle_private.h — the driver's in-memory view of what goes into a bundle.
 */
#ifndef KC_BUNDLE_PRIVATE_H
#define KC_BUNDLE_PRIVATE_H

#include <sqlite3.h>

#include "kc_build.h"

/* An open bundle (kc_bundle_open, bundle_info.c). */
struct kc_bundle {
    struct kcrt_bundle *file; /* what libkcrt's reader read */
    sqlite3 *db;              /* for kc tune's writes */
    kc_arena arena;
};

typedef struct kc_bundle_kernel {
    int64_t id;
    const kc_func *kernel;
    const kc_pkg_file *file;
    const kc_kernel_cfg *cfg;
    const char *default_variant;
} kc_bundle_kernel;

typedef struct kc_bundle_variant {
    const kc_bundle_kernel *kernel;
    const char *tunables;
    const char *target;
    kc_variant_blob blob;
} kc_bundle_variant;

/* Writes a whole new bundle atomically; false with a message in err. */
/* checked: a `kc build --checked` bundle (support/kc_checked.h's meta). */
bool kc_bundle_write(const char *path, const kc_package *p, const kc_vec *kernels, const kc_vec *variants, bool checked,
                     kc_buf *err);
/* Adds (or replaces) one variant in an open bundle. */
bool kc_bundle_write_variant(sqlite3 *db, int64_t kernel_id, const char *tunables, const char *target,
                             const kc_variant_blob *b, kc_buf *err);

#endif
