/*
 * test_rt_cuda_decls.c — libkcrt's own CUDA declarations
 * (runtime/cuda/cuda_api.h) against the CUDA toolkit's cuda.h, where one is
 * installed (CMake builds this test only then; libkcrt never needs it).
 *
 * At compile time: every constant has cuda.h's value; every entry point,
 * declared with cuda.h's types (KCU_TYPES_FROM_CUDA_H), takes cuda.h's
 * function without a cast, so the parameters and results agree; libkcrt's
 * own types have the size and signedness of cuda.h's. At run time: the
 * first symbol libkcrt looks up for each entry point is the one cuda.h's
 * name expands to (cuMemAlloc -> cuMemAlloc_v2), so libkcrt calls what a
 * program built with this toolkit would.
 */
#include "kc_test.h"

#include <cuda.h>

#define KCU_TYPES_FROM_CUDA_H
#include "cuda/cuda_api.h"

/* ---- constants ---------------------------------------------------------------------------------- */

#define SAME_VALUE(name, value)                                                                              \
    _Static_assert((int)K##name == (int)name && (value) == (int)name, #name " differs from cuda.h");
CU_CONSTANTS(SAME_VALUE)

/* The launch markers libkcrt does not pass (it uses kernelParams), checked
 * all the same since docs/backends.md names them. */
_Static_assert(CU_LAUNCH_PARAM_END_AS_INT == 0 && CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT == 1 &&
                   CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT == 2,
               "launch markers");

/* ---- libkcrt's own types, when cuda.h is not there ----------------------------------------------------- */

_Static_assert(sizeof(CUresult) == sizeof(int) && sizeof(CUdevice_attribute) == sizeof(int) &&
                   sizeof(CUjit_option) == sizeof(int) && sizeof(CUfunction_attribute) == sizeof(int),
               "enums libkcrt declares as int");
_Static_assert(__builtin_types_compatible_p(CUdevice, int), "CUdevice is an int");
_Static_assert(__builtin_types_compatible_p(CUdeviceptr, unsigned long long), "CUdeviceptr");
_Static_assert(sizeof(CUcontext) == sizeof(void *) && sizeof(CUstream) == sizeof(void *) &&
                   sizeof(CUevent) == sizeof(void *) && sizeof(CUmodule) == sizeof(void *) &&
                   sizeof(CUfunction) == sizeof(void *),
               "handles are pointers");

/* ---- entry points ----------------------------------------------------------------------------------------
 */

#define STR_(x) #x
#define STR(x) STR_(x)

typedef struct entry {
    const char *declared; /* what cuda.h's name expands to */
    const char *looked_up;
} entry;

/* `name` expands through cuda.h's macros to the versioned function, whose
 * type must be the pointer type libkcrt declares (compared, not called:
 * nothing links libcuda). */
#define ENTRY(ret, name, params, ...)                                                                        \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&name), ret(*) params),                           \
                   #name " is declared otherwise in cuda.h");                                                \
    {                                                                                                        \
        static const char *const symbols[] = {__VA_ARGS__};                                                  \
        entries[n++] = (entry){STR(name), symbols[0]};                                                       \
    }

static void test_symbols_are_cuda_h_names(void **state)
{
    (void)state;
    entry entries[64];
    int n = 0;
    CU_FNS(ENTRY)
    for (int i = 0; i < n; i++)
        if (strcmp(entries[i].declared, entries[i].looked_up) != 0)
            fail_msg("cuda.h calls %s, libkcrt looks up %s", entries[i].declared, entries[i].looked_up);
    printf("%d entry points and their constants agree with cuda.h (CUDA_VERSION %d)\n", n, CUDA_VERSION);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_symbols_are_cuda_h_names)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
