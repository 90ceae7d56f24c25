/*
 * kc_bundle_schema.h — the bundle file format (DESIGN.md §5), shared by
 * the writer (kc build, kc tune) and the reader (libkcrt).
 *
 * A bundle is one SQLite database. SQLite as an application file format:
 * a build writes a new file and renames it over the old one, so a reader
 * never sees half a bundle; a damaged file fails to open or fails
 * PRAGMA quick_check, which the runtime turns into an error.
 *
 * Integer expressions (workgroup sizes, grids, extents, constraints) are
 * stored in the postfix form of kc_iexpr.h, names meaning scalar
 * parameters or tunables; the runtime evaluates them with
 * kc_iexpr_eval_postfix. Variants are named by their tunables in
 * declaration order: "WG=64,TM=4" ("" for a kernel without tunables).
 *
 * variants.args describes where each argument goes, per parameter in
 * order: "offset:size" for a value (a SPIR-V push-constant offset, or a
 * kernarg offset for code objects and PTX, where buffers are 8-byte
 * pointers), "@binding" for a SPIR-V storage buffer.
 *
 * meta holds, besides format, kc_version, package and created:
 * `digest.KERNEL`, a digest of each kernel's launch description that
 * libkcrt checks (kc_bundle_digest.h; absent in older bundles, which load
 * as before), and for a `kc build --checked` bundle `checked` and
 * `checked.files.KERNEL` (kc_checked.h), whose variants.args then list
 * the hidden parameters after the kernel's own. `default.TYPE.KERNEL`
 * (kc.yaml's `defaults:`, absent in older bundles) names the variant
 * libkcrt launches untuned on a device of that type ("cpu": lavapipe),
 * one the bundle holds for every target it was built for.
 *
 * Versions: `application_id` marks a kc bundle; `user_version` is the
 * format version. A reader refuses a newer major format with a clear
 * message; every change to the tables below bumps KC_BUNDLE_FORMAT.
 */
#ifndef KC_BUNDLE_SCHEMA_H
#define KC_BUNDLE_SCHEMA_H

#define KC_BUNDLE_APPLICATION_ID 0x6b636231 /* "kcb1" */
#define KC_BUNDLE_FORMAT 1

#define KC_BUNDLE_SCHEMA                                                                           \
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);\n"                               \
    /* every source file a kernel was built from, so kc tune can build more variants */             \
    "CREATE TABLE sources(path TEXT PRIMARY KEY, text TEXT NOT NULL);\n"                            \
    "CREATE TABLE kernels(\n"                                                                       \
    "  id INTEGER PRIMARY KEY,\n"                                                                   \
    "  name TEXT NOT NULL UNIQUE,\n"                                                                \
    "  source_path TEXT NOT NULL REFERENCES sources(path),\n"                                       \
    "  source_hash TEXT NOT NULL,\n"      /* sha256 of the preprocessed tokens */                   \
    "  wg TEXT NOT NULL,\n"               /* three postfix expressions over tunables, ';'-joined */ \
    "  grid TEXT NOT NULL,\n"             /* three over scalar parameters and tunables */           \
    "  may_alias INTEGER NOT NULL,\n"                                                               \
    "  default_variant TEXT NOT NULL,\n"                                                            \
    "  tolerance REAL NOT NULL,\n"        /* relative L2 against the default variant (kc.yaml) */   \
    "  init TEXT NOT NULL,\n"             /* buffer initialisation: 'x=normal,y=uniform' */         \
    "  bytes TEXT,\n"                     /* postfix over scalars: bytes moved per launch */        \
    "  flops TEXT\n"                      /* postfix over scalars: flops per launch */              \
    ");\n"                                                                                          \
    "CREATE TABLE params(\n"                                                                        \
    "  kernel_id INTEGER NOT NULL REFERENCES kernels(id),\n"                                        \
    "  idx INTEGER NOT NULL,\n"                                                                     \
    "  name TEXT NOT NULL,\n"                                                                       \
    "  kind TEXT NOT NULL CHECK(kind IN ('buffer','scalar')),\n"                                    \
    "  type TEXT NOT NULL,\n"             /* 'float', 'half4', 'int', … (element type for buffers) */ \
    "  readonly INTEGER NOT NULL,\n"                                                                \
    "  extent TEXT,\n"                    /* buffers: elements, postfix over scalars; NULL = unknown */ \
    "  dims TEXT,\n"                      /* buffers: each dimension, ';'-joined, '?' if unknown */ \
    "  PRIMARY KEY(kernel_id, idx)\n"                                                               \
    ");\n"                                                                                          \
    "CREATE TABLE tunables(\n"                                                                      \
    "  kernel_id INTEGER NOT NULL REFERENCES kernels(id),\n"                                        \
    "  idx INTEGER NOT NULL,\n"                                                                     \
    "  name TEXT NOT NULL,\n"                                                                       \
    "  def INTEGER NOT NULL,\n"                                                                     \
    "  vals TEXT NOT NULL,\n"             /* '64,128,256' */                                       \
    "  PRIMARY KEY(kernel_id, idx)\n"                                                               \
    ");\n"                                                                                          \
    "CREATE TABLE constraints(\n"                                                                   \
    "  kernel_id INTEGER NOT NULL REFERENCES kernels(id),\n"                                        \
    "  expr TEXT NOT NULL,\n"             /* postfix over tunables */                               \
    "  text TEXT NOT NULL\n"              /* as written, for people */                              \
    ");\n"                                                                                          \
    "CREATE TABLE shapes(\n"                                                                        \
    "  kernel_id INTEGER NOT NULL REFERENCES kernels(id),\n"                                        \
    "  idx INTEGER NOT NULL,\n"                                                                     \
    "  shape TEXT NOT NULL,\n"            /* 'n=48000,m=3': integer scalars by name */              \
    "  PRIMARY KEY(kernel_id, idx)\n"                                                               \
    ");\n"                                                                                          \
    "CREATE TABLE variants(\n"                                                                      \
    "  id INTEGER PRIMARY KEY,\n"                                                                   \
    "  kernel_id INTEGER NOT NULL REFERENCES kernels(id),\n"                                        \
    "  tunables TEXT NOT NULL,\n"         /* 'WG=64,TM=4' */                                       \
    "  target TEXT NOT NULL,\n"           /* 'spirv', 'gfx1100', 'sm_90', … */                      \
    "  binary BLOB NOT NULL,\n"           /* SPIR-V words, code object, or PTX text */              \
    "  wg_x INTEGER NOT NULL, wg_y INTEGER NOT NULL, wg_z INTEGER NOT NULL,\n"                       \
    "  args TEXT NOT NULL,\n"             /* per parameter, ';'-joined: see below */         \
    "  args_size INTEGER NOT NULL,\n"     /* push-constant bytes, or kernarg segment bytes */       \
    "  spilled INTEGER NOT NULL,\n"       /* spirv: scalars in a storage buffer at binding nbuffers */ \
    "  shared_bytes INTEGER NOT NULL,\n"  /* workgroup memory the variant uses */                   \
    "  features TEXT NOT NULL,\n"         /* what the device must offer: 'float16,int64,…' */       \
    "  checksum TEXT NOT NULL,\n"         /* sha256 of binary: a damaged binary is caught at load */ \
    "  UNIQUE(kernel_id, tunables, target)\n"                                                       \
    ");\n"                                                                                          \
    /* measured winners: the variant to launch for a device and a shape */                         \
    "CREATE TABLE tuned(\n"                                                                         \
    "  device_key TEXT NOT NULL,\n"       /* 'vulkan:10005:0000:llvmpipe…:drv' — see kcrt */        \
    "  device_family TEXT NOT NULL,\n"    /* vendor and architecture, for the family fallback */    \
    "  backend TEXT NOT NULL,\n"                                                                    \
    "  kernel_id INTEGER NOT NULL REFERENCES kernels(id),\n"                                        \
    "  shape TEXT NOT NULL,\n"                                                                      \
    "  variant TEXT NOT NULL,\n"                                                                    \
    "  time_ns REAL NOT NULL,\n"                                                                    \
    "  PRIMARY KEY(device_key, kernel_id, shape)\n"                                                 \
    ");\n"

#endif
