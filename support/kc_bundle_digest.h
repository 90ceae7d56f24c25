/*
 * kc_bundle_digest.h — the digest of a bundle's launch description: what
 * libkcrt evaluates to launch a kernel and that no other check covers.
 *
 * variants.checksum guards each binary; quick_check guards SQLite's
 * structure; neither sees a byte changed inside a value. A grid of
 * "n 2 / …" instead of "n …" launches half the workgroups and leaves half
 * the output unwritten, silently. So the writer (kc build) stores, per
 * kernel, meta `digest.KERNEL`: sha256 over the kernel's row (name,
 * workgroup, grid, may_alias) and its parameters (name, kind, type,
 * readonly, extent, dims), and libkcrt recomputes it at load. kc tune adds
 * variants and tuned rows, never kernels or parameters, so it stays true.
 * Bundles from before the digest have no key and are read as before.
 */
#ifndef KC_BUNDLE_DIGEST_H
#define KC_BUNDLE_DIGEST_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

/* The digest of kernel id's launch description, as 64 hex digits; false
 * when the rows cannot be read. */
bool kc_bundle_kernel_digest(sqlite3 *db, int64_t kernel_id, char hex[65]);

#endif
