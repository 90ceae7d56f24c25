/*
 * exhaustive.c — every one of the 2^32 floats through each one-argument
 * function of kc_math.kc, against the double reference. Too slow for CI
 * (about 2 minutes a function on 2 cores); built but not run by ctest.
 * Its figures are the ones in docs/math.md.
 *
 *   build/tests/libm/libm_exhaustive [NAME...]     (default: all)
 *
 * Prints for each function the largest error and where, and how many
 * results are not correctly rounded (error above 0.5 ulp). powf, with
 * 2^64 inputs, gets a random sample of 2^28 pairs instead.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "libm_check.h"

typedef struct part {
    const libm_fn *f;
    uint64_t begin, end;
    double worst;
    uint32_t worst_at;
    uint64_t not_rounded, wrong;
} part;

static void *run_part(void *arg)
{
    part *p = arg;
    for (uint64_t i = p->begin; i < p->end; i++) {
        float x = kc_as_float((uint32_t)i);
        double e = libm_ulp_error(p->f->fn(x), p->f->ref((double)x));
        if (e > 0.5)
            p->not_rounded++;
        if (e >= LIBM_WRONG)
            p->wrong++;
        if (e > p->worst) {
            p->worst = e;
            p->worst_at = (uint32_t)i;
        }
    }
    return NULL;
}

static void check(const libm_fn *f, int nthreads)
{
    part parts[64];
    pthread_t th[64];
    uint64_t step = (1ull << 32) / (uint64_t)nthreads;
    for (int t = 0; t < nthreads; t++) {
        parts[t] = (part){
            f, step * (uint64_t)t, t == nthreads - 1 ? 1ull << 32 : step * (uint64_t)(t + 1), 0, 0, 0, 0};
        pthread_create(&th[t], NULL, run_part, &parts[t]);
    }
    part all = {f, 0, 0, 0, 0, 0, 0};
    for (int t = 0; t < nthreads; t++) {
        pthread_join(th[t], NULL);
        all.not_rounded += parts[t].not_rounded;
        all.wrong += parts[t].wrong;
        if (parts[t].worst > all.worst) {
            all.worst = parts[t].worst;
            all.worst_at = parts[t].worst_at;
        }
    }
    float x = kc_as_float(all.worst_at);
    printf("%-7s max %.4f ulp at x = %a (%.9g): got %a, exact %a; not correctly rounded: %llu (%.4f%%); "
           "wrong: %llu\n",
           f->name, all.worst, x, x, f->fn(x), f->ref(x), (unsigned long long)all.not_rounded,
           100.0 * (double)all.not_rounded / 4294967296.0, (unsigned long long)all.wrong);
    fflush(stdout);
}

/* powf has 2^64 inputs: a sample of 2^28 pairs, |y log2 x| <= 160. */
static void *run_pow(void *arg)
{
    part *p = arg;
    uint32_t s = (uint32_t)p->begin * 2654435761u + 1u;
    for (uint64_t i = p->begin; i < p->end; i++) {
        float x = kc_as_float(libm_next(&s) & 0x7fffffffu);
        double l = fabs(log2((double)x));
        float y = (float)((double)(int32_t)libm_next(&s) * 0x1p-31 * 160.0 / (l < 1e-30 ? 1.0 : l));
        if (libm_next(&s) & 1u) { /* an integer power of a negative number */
            x = -x;
            y = truncf(y);
        }
        double e = libm_ulp_error(__kc_powf(x, y), pow((double)x, (double)y));
        if (e > p->worst) {
            p->worst = e;
            p->worst_at = kc_as_uint(x);
            p->wrong = kc_as_uint(y); /* here: where */
        }
        if (e > 0.5)
            p->not_rounded++;
    }
    return NULL;
}

static void check_pow(int nthreads)
{
    part parts[64];
    pthread_t th[64];
    uint64_t n = 1ull << 28, step = n / (uint64_t)nthreads;
    for (int t = 0; t < nthreads; t++) {
        parts[t] = (part){NULL, step * (uint64_t)t, step * (uint64_t)(t + 1), 0, 0, 0, 0};
        pthread_create(&th[t], NULL, run_pow, &parts[t]);
    }
    part all = {NULL, 0, 0, 0, 0, 0, 0};
    for (int t = 0; t < nthreads; t++) {
        pthread_join(th[t], NULL);
        all.not_rounded += parts[t].not_rounded;
        if (parts[t].worst > all.worst)
            all = (part){NULL, 0, 0, parts[t].worst, parts[t].worst_at, all.not_rounded, parts[t].wrong};
    }
    float x = kc_as_float(all.worst_at), y = kc_as_float((uint32_t)all.wrong);
    printf("powf    max %.4f ulp at (%a, %a) of 2^28 sampled pairs: got %a, exact %a; not correctly rounded: "
           "%.4f%%\n",
           all.worst, x, y, __kc_powf(x, y), pow(x, y), 100.0 * (double)all.not_rounded / (double)n);
}

int main(int argc, char **argv)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    int nthreads = n < 1 ? 1 : n > 64 ? 64 : (int)n;
    (void)__kc_fmodf; /* exact, so test_libm compares it with glibc's bit for bit */
    (void)__kc_atan2f; /* two arguments: test_libm samples the plane */
    for (int i = 0; i < LIBM_NFNS; i++) {
        bool wanted = argc == 1;
        for (int a = 1; a < argc; a++)
            wanted |= strcmp(argv[a], libm_fns[i].name) == 0;
        if (wanted)
            check(&libm_fns[i], nthreads);
    }
    bool pow_wanted = argc == 1;
    for (int a = 1; a < argc; a++)
        pow_wanted |= strcmp(argv[a], "powf") == 0;
    if (pow_wanted)
        check_pow(nthreads);
    return 0;
}
