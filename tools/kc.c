/*
 * kc.c — the kc program: finds the subcommand and runs it.
 */
#include "kc_dsl.h"
#include "kc_tools.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const kc_command kc_commands[] = {
    {"bench", kc_cmd_bench, "benchmark a bundle's kernels; check them against a baseline",
     "usage: kc bench BUNDLE [--kernel K]... [--shape n=...]... [--shapes-from FILE]\n"
     "                [--repeat N] [--device N]\n"
     "                [--json FILE] [--junit FILE] [--markdown FILE] [--record FILE]\n"
     "                [--baseline FILE [--max-regression P%] [--alpha A]\n"
     "                                 [--allow-other-device | --skip-other-device]]\n"
     "                [--against OLD.kcb [--max-regression P%] [--alpha A]]\n"
     "       kc bench --calibrate [--device N] [--peaks FILE] [--calibration-bundle FILE]\n"
     "\n"
     "Runs every kernel of BUNDLE at every shape kc.yaml lists for it, with the\n"
     "variant libkcrt chooses (tuned for this device and shape, else the default),\n"
     "timed with device timestamps, and prints per kernel and shape the median\n"
     "time per launch, its spread (IQR / median), the samples (rounds x launches),\n"
     "GB/s and GFLOP/s where kc.yaml gives bytes: and flops:, the fraction of\n"
     "the device's roofline when its peaks are known, and (vs copy) how long a\n"
     "plain copy of the same bytes takes in one launch, as a share of the kernel's\n"
     "time: near 100%, no kernel moving these bytes in one launch is much faster.\n"
     "\n"
     "Noise: each benchmark's launches are interleaved with a fixed reference\n"
     "kernel of kc's, and each round's sample is the ratio of the two; baselines\n"
     "compare ratios, so a slower or busier machine does not read as a regression.\n"
     "Raw times do read long on a busy one: the report says when a hypervisor's\n"
     "other guests, or on a CPU device this machine's other processes, took the CPUs.\n"
     "  --kernel K         only kernel K (again for more)\n"
     "  --shape n=4096,... these shapes instead of kc.yaml's (again for more); every\n"
     "                     integer scalar needs a value; bools not named are true,\n"
     "                     floats 0.75 (as kc tune sets them)\n"
     "  --smallest         each kernel at its cheapest kc.yaml shape only (the least\n"
     "                     flops + bytes as kc.yaml gives them) of at least 1 Mi\n"
     "                     (smaller launches are mostly their dispatch; the\n"
     "                     costliest when all are smaller): every kernel of a\n"
     "                     package of real model shapes within a CI step's time\n"
     "  --shapes-from F    each kernel at the shapes an application launched, as\n"
     "                     libkcrt records them in F (KCRT_RECORD_SHAPES=F)\n"
     "  --repeat N         rounds, that is ratio samples, per benchmark (default 15;\n"
     "                     fewer when a benchmark would take longer than --max-time)\n"
     "  --max-time S       seconds one benchmark may take (default 20)\n"
     "  --device N         the device (see kc devices; default: the best)\n"
     "  --seed N           the seed of the random inputs (default 1; as kc run's)\n"
     "  --json FILE        every number and sample as JSON (the baseline format)\n"
     "  --junit FILE       JUnit XML: a test case per kernel and shape, a failure per\n"
     "                     regression\n"
     "  --markdown FILE    a Markdown table (for a job summary or a pull request)\n"
     "  --record FILE      write this run as a baseline (the same JSON)\n"
     "  --baseline FILE    compare with a baseline: a regression is a median ratio\n"
     "                     more than P% above the baseline's that a one-sided\n"
     "                     Mann-Whitney U test finds significant (p < A), measured\n"
     "                     twice; each verdict comes with its confidence (1 - p)\n"
     "  --against OLD.kcb  compare with another bundle in the same run: each kernel\n"
     "                     is interleaved with OLD.kcb's kernel of the same name at\n"
     "                     the same shape (instead of the reference kernel), and a\n"
     "                     regression is a median time more than P% above OLD's\n"
     "                     that the U test finds significant, twice. Nothing from\n"
     "                     another day: a change of host or driver moves both sides\n"
     "                     (the CI check's way: the last accepted build's bundle)\n"
     "  --max-regression P the threshold (default 10%)\n"
     "  --alpha A          the p-value a verdict needs (default 0.01)\n"
     "  --allow-other-device  compare with a baseline recorded on another device or\n"
     "                     driver (refused otherwise: its ratios mean something else)\n"
     "  --skip-other-device  measure nothing and exit 0 when the baseline is another\n"
     "                     device's (CI runners of mixed hardware)\n"
     "  --calibrate        measure the device's copy bandwidth and FMA throughput with\n"
     "                     kc's own kernels and keep them for the roofline column\n"
     "  --peaks FILE       where peaks are kept (default $XDG_CACHE_HOME/kc/peaks.json)\n"
     "  --calibration-bundle FILE  kc's calibration kernels from FILE (kc build\n"
     "                     bench/calibrate --all-variants -t TARGET) instead of compiling\n"
     "                     them: for a kc without LLVM on a HIP or CUDA device\n"
     "  --verbose          the reference kernel's time per row, every comparison explained\n"
     "  --quiet            no progress on stderr (otherwise a line redrawn on a\n"
     "                     terminal, a line per benchmark in a log)\n"
     "Exit status: 0 when no regression was found, 1 on a regression, a benchmark\n"
     "that failed, another device's baseline or any other error, 2 on bad usage.\n"
     "docs/benchmarks.md tells how to wire it into CI.\n"},
    {"build", kc_cmd_build, "compile kernels into a bundle",
     "usage: kc build DIR|FILE... [-t TARGET]... [-o OUT.kcb] [--all-variants] [--amdgpu-cov 4|5] [--quiet]\n"
     "                [-I DIR]... [--checked]\n"
     "\n"
     "Compiles every kernel of the given files, or of the .kc files in each\n"
     "directory (with the directory's kc.yaml), into one bundle file.\n"
     "  -t TARGET        a target to build for; give it again for more (default: spirv):\n"
     "                   spirv (Vulkan), an AMD GPU (gfx1100 gfx1101 gfx1102 gfx1030\n"
     "                   gfx1031 gfx1032 gfx90a gfx942 gfx906; all-amd for all of them)\n"
     "                   or an NVIDIA one (sm_75 sm_80 sm_86 sm_89 sm_90; all-nvidia)\n"
     "  -o OUT.kcb       the bundle to write (default: PACKAGE.kcb)\n"
     "  --all-variants   every variant of each kernel, not just the default\n"
     "  --amdgpu-cov N   AMDGPU code object version, 4 or 5 (default 5); 4 for ROCm\n"
     "                   runtimes older than 5.3, which cannot load v5\n"
     "  --quiet          no progress or summary\n"
     "  -I DIR           another folder whose files #include may read; a kernel\n"
     "                   reads only files under its own folder otherwise\n"
     "                   (docs/security.md)\n"
     "  --checked        bounds checks in the code: every array access is tested,\n"
     "                   and libkcrt reports the first one out of bounds (kernel,\n"
     "                   file:line:col, array, index) when the work completes;\n"
     "                   for finding bugs, not for shipping (docs/runtime.md)\n"
     "The bundle is written atomically: an interrupted build leaves no partial file.\n"},
    {"cache", kc_cmd_cache, "list, export, import, clear, check or repair tuning results; propose defaults",
     "usage: kc cache list [--json] [FILTERS]\n"
     "       kc cache defaults [--bundle FILE] [FILTERS]\n"
     "       kc cache export FILE [FILTERS]\n"
     "       kc cache export --kernel-tuner FILE [FILTERS]\n"
     "       kc cache import FILE\n"
     "       kc cache clear [FILTERS]\n"
     "       kc cache check|repair [--cache FILE]\n"
     "\n"
     "The tuning cache keeps every measurement kc tune made, keyed by the\n"
     "kernel's source hash, kc's version, the device, the shape and the variant,\n"
     "so nothing is measured twice and an interrupted tune resumes.\n"
     "  list            a table, or with --json one object per result with the\n"
     "                  keys kernel, device, backend, shape, variant, status, time_ns\n"
     "  defaults        for each kernel and device, the variant closest to every\n"
     "                  measured shape's winner (the smallest geometric mean of\n"
     "                  its slowdowns), as a kc.yaml `defaults:` line for that\n"
     "                  kind of device; the newest source of the kernel only;\n"
     "                  --bundle FILE scores the bundle's current default beside\n"
     "                  it (kc.yaml's for the device's type, else the source's)\n"
     "  export FILE     every result as JSON, for `kc cache import` on another machine\n"
     "  --kernel-tuner FILE   one kernel, device and shape in Kernel Tuner's cache\n"
     "                  format, which `kc tune --replay` reads\n"
     "  import FILE     merge an export: for a configuration both have, the\n"
     "                  result with more samples wins (then the smaller spread)\n"
     "  clear           delete results\n"
     "  check           is the cache whole? (SQLite's integrity check, in words)\n"
     "  repair          move a damaged cache aside (FILE.damaged-TIME) and start a\n"
     "                  new one with every result that can still be read\n"
     "filters: --kernel K, --device KEY, --shape n=…, --backend B\n"
     "  --cache FILE    another cache than $XDG_CACHE_HOME/kc/tuning.db\n"},
    {"check", kc_cmd_check, "check kernel files with the front end",
     "usage: kc check FILE... [-I DIR]...\n"
     "\n"
     "Reads each kernel file and reports every error it finds, each with\n"
     "file:line:col, the line and a caret. Prints one line per good file.\n"
     "  -I DIR          another folder whose files #include may read\n"
     "Exit status: 0 when every file is good, 1 otherwise.\n"},
    {"emit", kc_cmd_emit, "print a kernel's IR, SPIR-V, LLVM IR or assembly",
     "usage: kc emit FILE [--emit WHAT] [-t TARGET] [--kernel K] [--variant WG=64,TM=4]\n"
     "               [--after PASS] [--amdgpu-cov 4|5] [--checked] [-o OUT] [-I DIR]...\n"
     "\n"
     "Compiles each kernel of FILE (or only K) for one variant (the default\n"
     "unless --variant names one) and prints the result.\n"
     "  --emit kir      kc's structured IR (the default)\n"
     "  --emit spvasm   the Vulkan SPIR-V module, disassembled\n"
     "  --emit spv      the SPIR-V module itself (binary; use with -o)\n"
     "  --emit llvm     LLVM IR after optimisation, for -t TARGET\n"
     "  --emit asm      AMDGPU assembly, or the PTX for an NVIDIA target\n"
     "  --emit hsaco    the AMDGPU code object (binary; one kernel; use with -o)\n"
     "  -t TARGET       gfx1100, gfx90a, sm_90, … (see kc help build)\n"
     "  --after PASS    stop after a pass: lower, specialize, inline, fold, unroll, dce\n"
     "                  (and bounds, with --checked)\n"
     "  --amdgpu-cov N  AMDGPU code object version, 4 or 5 (default 5)\n"
     "  --checked       with kc build --checked's bounds checks\n"
     "  -o OUT          write to OUT instead of standard output\n"
     "  -I DIR          another folder whose files #include may read\n"},
    {"info", kc_cmd_info, "describe a bundle",
     "usage: kc info BUNDLE [--json]\n"
     "\n"
     "Lists the bundle's kernels: signature, workgroup and grid expressions,\n"
     "tunables and constraints, kc.yaml's shapes and settings, the variants\n"
     "built per target, and the tuned table (the variant measured fastest per\n"
     "device and shape). --json prints one JSON object instead.\n"},
    {"export", kc_cmd_export, "write a bundle's binaries as plain files",
     "usage: kc export BUNDLE -o DIR\n"
     "\n"
     "Writes every variant's binary as DIR/<kernel>.<variant>.<target>.spv\n"
     "(.hsaco for AMD code objects, .ptx for NVIDIA) and DIR/manifest.yaml,\n"
     "which says for each: the entry point, workgroup size, grid expression,\n"
     "and where each argument goes (descriptor binding or push-constant or\n"
     "kernarg offset), for people who load the binaries with their own runtime.\n"},
    {"variants", kc_cmd_variants, "list a kernel's search space",
     "usage: kc variants FILE [--kernel K] [-I DIR]...\n"
     "\n"
     "Prints every variant of each kernel (the product of the tunables it\n"
     "uses, less those breaking a KC_REQUIRE), one per line:\n"
     "  KERNEL VARIANT\n"
     "with the default variant marked by a trailing '*'. A summary per\n"
     "kernel goes to standard error.\n"},
    {"tune", kc_cmd_tune, "tune a bundle's kernels on this machine's GPU",
     "usage: kc tune BUNDLE [--kernel K]... [--shape n=48000,...]... [--shapes-from FILE]\n"
     "               [--device N] [--backend B] [--strategy S] [--budget N|all] [--time 10m]\n"
     "               [--cache FILE] [--report FILE.html|.svg] [--report-axes A,B]\n"
     "               [--seed S] [--input-seed N] [--timeout 5s] [--timing-cap 1s]\n"
     "               [--smallest] [--apply-only] [--no-racing] [--no-transfer] [--allow-spills]\n"
     "               [--compile-limit 1m] [--cold MIB] [--quiet]\n"
     "       kc tune --replay FILE [--strategy S] [--budget N | --budget-fraction F]\n"
     "               [--repeat R] [--seed S] [--json]\n"
     "       kc tune --list-strategies\n"
     "\n"
     "On a device: for each kernel of BUNDLE and each of its shapes (kc.yaml's,\n"
     "--shape's or --shapes-from's), searches the kernel's variants that pass\n"
     "KC_REQUIRE and fit the device. Each is compiled, loaded (not timed), run\n"
     "once on random inputs and checked against the default variant's outputs\n"
     "(relative L2 within kc.yaml's tolerance), then timed with device\n"
     "timestamps until its median is stable. Every result goes to the cache at\n"
     "once: stop the tune any way you like and run it again to go on; nothing\n"
     "is measured twice. After each kernel and shape the fastest variant the\n"
     "cache knows for this device goes into BUNDLE (its binary and a row of the\n"
     "tuned table), and libkcrt launches it from then on. Ctrl-C stops after\n"
     "the measurement in flight and still writes the winners so far.\n"
     "  --kernel K        only K (repeatable)\n"
     "  --shape S         tune at S instead of kc.yaml's shapes (repeatable); a\n"
     "                    shape names every integer parameter: M=140,N=768,K=768\n"
     "  --smallest        each kernel at its cheapest kc.yaml shape only (the least\n"
     "                    flops + bytes): a quick tune of a whole package on a slow\n"
     "                    device; other shapes use the nearest tuned row\n"
     "  --shapes-from F   each kernel at the shapes an application launched, as\n"
     "                    libkcrt records them in F (KCRT_RECORD_SHAPES=F: one\n"
     "                    \"KERNEL SHAPE\" a line), instead of kc.yaml's\n"
     "  --device N        the device (kc devices lists them); --backend vulkan|hip|cuda\n"
     "  --strategy S      default, exhaustive, random, ils, forest, anneal or genetic\n"
     "                    (default: exhaustive when the space fits the budget, else ils)\n"
     "  --budget N        evaluations per kernel and shape (default 100); 'all': no limit\n"
     "  --time D          the whole tune's limit (90s, 10m, 1h30m), shared out over\n"
     "                    the searches; alone it lifts the evaluation budget\n"
     "  --cache FILE      instead of $XDG_CACHE_HOME/kc/tuning.db\n"
     "  --report FILE     draw what the cache holds for the kernels tuned: time per\n"
     "                    variant per shape, best marked, and a heat map over two\n"
     "                    tunables (--report-axes A,B; default the two with most values)\n"
     "  --seed S          the search's seed (default 1): the same seed walks the same\n"
     "                    points, so a resumed tune picks up exactly where it stopped\n"
     "  --input-seed N    the random inputs' seed (default: fresh each run)\n"
     "  --timeout D       a launch slower than D is a timeout (default: 50 times the\n"
     "                    default variant's, at least 1 s)\n"
     "  --timing-cap D    time spent timing one variant at most (default 1s)\n"
     "  --no-racing       time every variant to 1%, even one whose every launch is\n"
     "                    over 1.5 times the best so far (racing stops those early)\n"
     "  --no-transfer     start each search from the default variant only, not also\n"
     "                    from the winners of this kernel at the nearest other shapes\n"
     "                    (the cache) and on another device of the family (the bundle)\n"
     "  --allow-spills    measure AMDGPU variants whose code spills vector registers\n"
     "                    to scratch memory (skipped otherwise, the default variant\n"
     "                    excepted; kc info shows the spills)\n"
     "  --compile-limit D refuse a variant whose compile (kc's, for the device's\n"
     "                    target) takes longer than D (default: 1 minute, or ten\n"
     "                    times the default variant's compile if longer); a higher\n"
     "                    limit later tries the refused ones again\n"
     "  --cold MIB        time each launch after writing MIB MiB of scratch memory\n"
     "                    (0: 256), so that its inputs come from memory, not from a\n"
     "                    cache warmed by the launch before, as between a model's\n"
     "                    layers; cold results are kept apart in the cache\n"
     "  --apply-only      measure nothing: write the cache's winners to BUNDLE\n"
     "  --quiet           only errors and the files written\n"
     "Scalars that are not in the shape take fixed values: bool true, float and\n"
     "half 0.75. Results: 'kc cache list', 'kc info BUNDLE' (its tuned table).\n"
     "\n"
     "--replay: runs a search strategy against a recorded tuning space instead\n"
     "of a GPU and reports how close it came to the space's optimum. FILE is a\n"
     "Kernel Tuner cache file: JSON, plain or gzip; a file cut short by an\n"
     "interrupted tuner is repaired. The tunables are its tune_params; the\n"
     "configurations in its cache are the valid points, and those whose time is\n"
     "not a number fail when measured: they cost an evaluation and are never\n"
     "the best.\n"
     "  --budget N           at most N evaluations per run (N >= 1)\n"
     "  --budget-fraction F  at most ceil(F x configurations) evaluations\n"
     "                       (the default, with F = 0.1)\n"
     "  --repeat R           R runs, with seeds S, S+1, ..., S+R-1 (default 1)\n"
     "  --json               print one JSON object instead of text\n"
     "Prints the number of configurations in the file, the optimum and its\n"
     "configuration, and over the runs the mean fraction of optimum (optimum\n"
     "time / best time found; 0 for a run that found nothing valid) and the mean\n"
     "evaluations used. With --json: the keys space_size, optimum,\n"
     "optimum_config, strategy, resolved_strategy, budget, runs, seeds,\n"
     "mean_fraction_of_optimum, min_/max_fraction_of_optimum, mean_evaluations,\n"
     "and per run fractions and evaluations.\n"
     "Exit status: 0 on success, 1 on an error (a bundle or file that cannot be\n"
     "read, no device, a kernel or shape that does not fit), 2 on bad usage.\n"},
    {"devices", kc_cmd_devices, "list the devices kernels can run on",
     "usage: kc devices [--json] [--backend B]\n"
     "\n"
     "Lists every device libkcrt can run kernels on, through every backend\n"
     "that loads (HIP, then CUDA, then Vulkan: one GPU may be listed twice),\n"
     "with what matters for tuning: type, vendor, driver, the kc target (-t)\n"
     "it runs, subgroup size, workgroup and grid limits, shared memory,\n"
     "argument space, memory, timestamps, optional features, and the device\n"
     "key and family the tuned table uses. The number before each device is\n"
     "what --device, KCRT_DEVICE and kcrt_options.device take.\n"
     "  --json           one JSON array of objects instead of text\n"
     "  --backend B      only the devices of backend B (hip, cuda, vulkan;\n"
     "                   default: all)\n"
     "Exit status: 0 when a device was found, 1 when none was (the reason on\n"
     "standard error, backend by backend), 2 on bad usage.\n"},
    {"run", kc_cmd_run, "run one kernel of a bundle and time it",
     "usage: kc run BUNDLE KERNEL name=value... [buf=@FILE]... [--out buf=FILE]...\n"
     "              [--variant V] [--repeat N] [--cold MIB] [--device N] [--seed N]\n"
     "              [--json]\n"
     "\n"
     "Launches KERNEL of BUNDLE once on a device, then N more times with device\n"
     "timestamps, and reports the median time per launch (and GB/s and GFLOP/s\n"
     "when kc.yaml gave bytes: and flops: for the kernel).\n"
     "  name=value       every scalar parameter needs one (int, uint, float,\n"
     "                   half as a decimal number; bool as 0, 1, true, false)\n"
     "  buf=@FILE        fill a buffer from a raw file (host byte order; half as\n"
     "                   binary16, bool as 4 bytes); it must hold the declared extent\n"
     "                   Other buffers are allocated from their declared extent and\n"
     "                   filled with random data as the kernel's init: in kc.yaml\n"
     "                   says: uniform in [-1, 1) (the default), normal, positive,\n"
     "                   ones or index; integers: uniform in [-1000, 1000).\n"
     "  --out buf=FILE   write a buffer, as the first launch left it, to FILE (raw)\n"
     "  --variant V      run variant V (\"WG=64,TM=4\") instead of the one libkcrt\n"
     "                   chooses (tuned for this device and shape, or the default)\n"
     "  --repeat N       timed launches after the first (default 10; 0: no timing)\n"
     "  --cold MIB       write MIB MiB of a scratch buffer before each timed launch\n"
     "                   (0: 256), so that it finds its inputs out of the device's\n"
     "                   caches, as between a model's layers; MIB should exceed the\n"
     "                   last-level cache (GPU L2 or Infinity Cache, a CPU's L3)\n"
     "  --device N       the device to use (see kc devices; default: the best)\n"
     "  --seed N         the seed of the random inputs (default 1)\n"
     "  --json           one JSON object instead of text\n"
     "KCRT_LOG=debug says which device and variant were chosen and why.\n"
     "Exit status: 0 on success, 1 on an error (unknown kernel, missing scalar,\n"
     "file too short, a launch the kernel refuses, no device), 2 on bad usage.\n"},
    {"help", kc_cmd_help, "show help for a command", "usage: kc help [COMMAND]\n"},
    {NULL, NULL, NULL, NULL},
};

const kc_command *kc_find_command(const char *name)
{
    for (const kc_command *c = kc_commands; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

int kc_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "kc %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(see 'kc help %s')\n", cmd);
    va_end(ap);
    return KC_EXIT_USAGE;
}

bool kc_parse_amdgpu_cov(const char *value, int *cov)
{
    if (strcmp(value, "4") != 0 && strcmp(value, "5") != 0)
        return false;
    *cov = value[0] - '0';
    return true;
}

int kc_next_arg(kc_args *a, const kc_opt *opts, int nopts)
{
    if (a->i >= a->argc)
        return -2;
    char *arg = a->argv[a->i++];
    if (arg[0] != '-' || arg[1] == 0 || strcmp(arg, "--") == 0) {
        a->positional = arg;
        return -1;
    }
    const char *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    for (int k = 0; k < nopts; k++) {
        if (strlen(opts[k].name) != len || strncmp(opts[k].name, arg, len) != 0)
            continue;
        a->value = NULL;
        if (opts[k].has_value) {
            if (eq)
                a->value = eq + 1;
            else if (a->i < a->argc)
                a->value = a->argv[a->i++];
            else {
                kc_usage_error(a->cmd, "%s needs a value", opts[k].name);
                return -3;
            }
        } else if (eq) {
            kc_usage_error(a->cmd, "%s takes no value", opts[k].name);
            return -3;
        }
        return k;
    }
    kc_usage_error(a->cmd, "unknown option '%s'", arg);
    return -3;
}

int kc_includes_add(kc_includes *inc, const char *cmd, const char *dir)
{
    if (inc->n == (int)KC_COUNT(inc->dirs))
        return kc_usage_error(cmd, "too many -I folders");
    inc->dirs[inc->n++] = dir;
    return KC_EXIT_OK;
}

bool kc_includes_apply(const kc_includes *inc, kc_ctx *ctx, const char *cmd)
{
    for (int i = 0; i < inc->n; i++)
        if (!kc_ctx_allow_dir(ctx, inc->dirs[i])) {
            fprintf(stderr, "kc %s: -I '%s': %s\n", cmd, inc->dirs[i], strerror(errno));
            return false;
        }
    return true;
}

static void overview(FILE *out)
{
    fprintf(out, "kc %s — a kernel compiler and autotuner for GPUs\n\n"
                 "usage: kc COMMAND [ARGS]\n\ncommands:\n", KC_VERSION);
    for (const kc_command *c = kc_commands; c->name; c++)
        fprintf(out, "  %-10s %s\n", c->name, c->summary);
    fprintf(out, "\n'kc help COMMAND' tells more; 'kc --version' prints the version.\n");
}

int kc_cmd_help(int argc, char **argv)
{
    if (argc < 2) {
        overview(stdout);
        return KC_EXIT_OK;
    }
    const kc_command *c = kc_find_command(argv[1]);
    if (!c)
        return kc_usage_error("help", "no command '%s'", argv[1]);
    fputs(c->usage, stdout);
    return KC_EXIT_OK;
}

char **kc_main_argv;

int main(int argc, char **argv)
{
    kc_main_argv = argv;
    if (argc < 2) {
        overview(stderr);
        return KC_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        printf("kc %s\n", KC_VERSION);
        return KC_EXIT_OK;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return kc_cmd_help(1, argv + 1);
    const kc_command *c = kc_find_command(argv[1]);
    if (!c) {
        fprintf(stderr, "kc: no command '%s'\n\n", argv[1]);
        overview(stderr);
        return KC_EXIT_USAGE;
    }
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return kc_cmd_help(2, (char *[]){"help", (char *)c->name, NULL});
    return c->run(argc - 1, argv + 1);
}
