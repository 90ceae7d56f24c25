/*
 * kc_binres.h — what a compiled variant costs the device, read from the
 * binary itself: registers, spills, scratch and shared memory.
 *
 *   AMDGPU code objects: the AMDHSA metadata note (NT_AMDGPU_METADATA, a
 *   MessagePack map; what `llvm-readelf --notes` prints as YAML):
 *   .vgpr_count, .sgpr_count, .vgpr_spill_count, .sgpr_spill_count,
 *   .private_segment_fixed_size (scratch per lane) and
 *   .group_segment_fixed_size (LDS per workgroup) of its one kernel.
 *
 *   PTX text: the local depot (`.local ... __local_depotN[bytes]`: the
 *   per-thread stack, where LLVM puts private arrays it could not keep in
 *   registers) and the `.shared` arrays, each placed at its alignment as
 *   ptxas places them (checked against ptxas -v on an H100 machine:
 *   tests/gpu/ptxas_resources.sh). PTX has virtual registers only;
 *   ptxas allocates the real ones when the driver loads the module, so the
 *   register and spill counts are unknown (-1) here.
 *
 *   SPIR-V: the driver allocates registers on the device, so only what
 *   the module itself shows: the private (Function-storage) arrays that
 *   some access indexes with a run-time value. A driver can keep an array
 *   indexed by constants in registers; one indexed at run time most keep
 *   in scratch memory (lavapipe does: docs/kernels.md). Not a spill: the
 *   tuner measures these variants like any other.
 *
 *   Host objects: nothing is known.
 *
 * The reader takes any bytes: a damaged binary is an error, never a read
 * outside them (the fuzzer's rule for everything in a bundle).
 */
#ifndef KC_BINRES_H
#define KC_BINRES_H

#include <stdbool.h>
#include <stddef.h>

typedef struct kc_binres {
    bool known;                    /* false: the target's binaries say nothing */
    long vgprs, sgprs;             /* AMDGPU registers per lane and per wave; -1 unknown */
    long vgpr_spills, sgpr_spills; /* registers spilled to scratch; -1 unknown */
    long scratch_bytes;            /* private memory per lane (AMDGPU) or thread (PTX) */
    long shared_bytes;             /* LDS / .shared per workgroup */
    long private_indexed;          /* SPIR-V: private arrays indexed at run time; -1 unknown */
} kc_binres;

/* Reads the resources of a variant compiled for target ("gfx1100",
 * "sm_90", "spirv", …). False, with a message in err, when the binary is
 * not what its target makes (or is damaged). */
bool kc_binres_read(const char *target, const void *data, size_t size, kc_binres *out, char *err, size_t errlen);

/* Does the variant spill registers or use scratch memory? (Known only.) */
bool kc_binres_spills(const kc_binres *r);

#endif
