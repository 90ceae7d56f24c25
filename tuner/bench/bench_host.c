/*
 * bench_host.c — how much of the host's CPU time a hypervisor took while
 * kc bench measured ("steal").
 *
 * On a CPU device (lavapipe) a kernel runs on the host's cores, so on a
 * virtual machine whose host is oversubscribed every raw time reads slow
 * by the share the hypervisor gives to other guests: on kc's 2-core CI
 * machine kind `kc bench --calibrate` has read FMA 40 GFLOP/s idle and
 * 6.7 GFLOP/s with 42% of the CPU time stolen (2026-12-03). The ratios
 * against the interleaved reference kernel suffer it on both sides; GB/s,
 * GFLOP/s and the roofline fraction do not, and the peaks they divide by
 * may have been calibrated under a different share. So the run measures
 * the share and the report says it.
 *
 * Linux counts stolen time per CPU in /proc/stat (the "steal" column,
 * since 2.6.11); elsewhere the share is unknown (-1) and nothing is said.
 *
 * The same counters, less this process's own CPU time (getrusage), give
 * the share other processes of the machine kept busy: on a CPU device a
 * build beside a tune takes the cores its variants run on, unevenly, and
 * put one default 1.69x off its winner on the 2-core machine when timed
 * alone it was 1.07-1.14x (docs/benchmarks.md).
 */
#include "kc_bench.h"
#include "kc_platform.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

bool kc_bench_cpu_parse(const char *text, kc_bench_cpu *out)
{
    /* the first line, "cpu  user nice system idle iowait irq softirq steal ..."
     * in ticks since boot, summed over every CPU */
    unsigned long long v[8];
    int used = 0;
    if (!text || strncmp(text, "cpu ", 4) != 0 ||
        sscanf(text + 4, "%llu %llu %llu %llu %llu %llu %llu %llu%n", &v[0], &v[1], &v[2], &v[3], &v[4],
               &v[5], &v[6], &v[7], &used) != 8)
        return false;
    out->busy = v[0] + v[1] + v[2] + v[5] + v[6];
    out->idle = v[3] + v[4];
    out->steal = v[7];
    out->self = 0;
    return true;
}

/* This process's CPU time, user and system, in the ticks /proc/stat counts. */
static unsigned long long self_ticks(void)
{
#ifdef _SC_CLK_TCK
    long hz = sysconf(_SC_CLK_TCK);
#else
    long hz = 0; /* no /proc/stat either (Windows): kc_bench_cpu_now fails first */
#endif
    return hz > 0 ? (unsigned long long)(kc_process_cpu_seconds() * (double)hz) : 0;
}

bool kc_bench_cpu_now(kc_bench_cpu *out)
{
    char line[512];
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return false;
    bool ok = fgets(line, sizeof(line), f) && kc_bench_cpu_parse(line, out);
    fclose(f);
    if (ok)
        out->self = self_ticks();
    return ok;
}

double kc_bench_cpu_steal(const kc_bench_cpu *before, const kc_bench_cpu *after)
{
    if (after->busy < before->busy || after->idle < before->idle || after->steal < before->steal)
        return -1; /* not two samples of one machine */
    unsigned long long busy = after->busy - before->busy, idle = after->idle - before->idle,
                       steal = after->steal - before->steal;
    /* under a few ticks (10 ms each) the share means nothing */
    if (busy + idle + steal < 10)
        return -1;
    return (double)steal / (double)(busy + idle + steal);
}

double kc_bench_cpu_others(const kc_bench_cpu *before, const kc_bench_cpu *after)
{
    if (kc_bench_cpu_steal(before, after) < 0 || after->self < before->self)
        return -1;
    unsigned long long busy = after->busy - before->busy, self = after->self - before->self,
                       all = busy + (after->idle - before->idle) + (after->steal - before->steal);
    /* the two clocks round differently: this process can read a tick or two
     * busier than the whole machine */
    return busy > self ? (double)(busy - self) / (double)all : 0;
}
