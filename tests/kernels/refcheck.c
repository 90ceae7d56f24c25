/*
 * refcheck.c — runs one reference implementation on inputs from files,
 * for refcheck.py to compare with numpy.
 *
 *   refcheck KERNEL DIR
 *
 * DIR/params holds "name value" lines (the kernel's scalars), DIR/NAME.f32
 * each input buffer as raw little-endian float32 (saxpy's y too); the
 * output goes to DIR/out.f32. Sizes follow from the scalars, and a file of
 * the wrong size is an error (exit 1), so a mismatch between the two
 * programs cannot pass quietly.
 */
#include "reference.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARAMS 16

typedef struct run {
    const char *dir;
    int n;
    char names[MAX_PARAMS][32];
    double values[MAX_PARAMS];
    float *inputs[8];
    int ninputs;
} run;

static void die(const char *fmt, const char *what)
{
    fprintf(stderr, "refcheck: ");
    fprintf(stderr, fmt, what);
    fputc('\n', stderr);
    exit(1);
}

static void read_params(run *r)
{
    char path[4096], name[32];
    snprintf(path, sizeof(path), "%s/params", r->dir);
    FILE *f = fopen(path, "r");
    if (!f)
        die("cannot open %s", path);
    double v;
    while (r->n < MAX_PARAMS && fscanf(f, "%31s %lf", name, &v) == 2) {
        strcpy(r->names[r->n], name);
        r->values[r->n++] = v;
    }
    fclose(f);
}

static double param(const run *r, const char *name)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->names[i], name) == 0)
            return r->values[i];
    die("no parameter '%s'", name);
    return 0;
}

static int iparam(const run *r, const char *name)
{
    return (int)param(r, name);
}

/* DIR/NAME.f32, which must hold exactly count floats */
static float *input(run *r, const char *name, long count)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s.f32", r->dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        die("cannot open %s", path);
    float *p = malloc(sizeof(float) * (size_t)(count > 0 ? count : 1));
    if (!p)
        die("out of memory for %s", name);
    size_t got = fread(p, sizeof(float), (size_t)count, f);
    int extra = fgetc(f);
    fclose(f);
    if ((long)got != count || extra != EOF)
        die("%s does not hold the number of floats its shape says", path);
    r->inputs[r->ninputs++] = p;
    return p;
}

static void output(const run *r, const float *y, long count)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/out.f32", r->dir);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(y, sizeof(float), (size_t)count, f) != (size_t)count || fclose(f) != 0)
        die("cannot write %s", path);
}

static float *zeros(long count)
{
    float *p = calloc((size_t)(count > 0 ? count : 1), sizeof(float));
    if (!p)
        die("%s", "out of memory");
    return p;
}

static int saxpy(run *r)
{
    int n = iparam(r, "n");
    const float *x = input(r, "x", n);
    float *y = input(r, "y", n);
    kc_ref_saxpy(n, (float)param(r, "a"), x, y);
    output(r, y, n);
    return 0;
}

static int elementwise(run *r)
{
    int n = iparam(r, "n");
    const float *x = input(r, "x", n), *z = input(r, "z", n);
    float *y = zeros(n);
    kc_ref_elementwise(n, iparam(r, "op"), (float)param(r, "alpha"), x, z, y);
    output(r, y, n);
    free(y);
    return 0;
}

static int pad1d(run *r)
{
    int rows = iparam(r, "rows"), t_in = iparam(r, "t_in"), left = iparam(r, "left"), right = iparam(r, "right");
    long t_out = t_in + left + right;
    const float *x = input(r, "x", (long)rows * t_in);
    float *y = zeros(rows * t_out);
    kc_ref_pad1d(rows, t_in, left, right, iparam(r, "mode"), (float)param(r, "value"), x, y);
    output(r, y, rows * t_out);
    free(y);
    return 0;
}

static int interp1d(run *r)
{
    int rows = iparam(r, "rows"), t_in = iparam(r, "t_in"), t_out = iparam(r, "t_out");
    const float *x = input(r, "x", (long)rows * t_in);
    float *y = zeros((long)rows * t_out);
    kc_ref_interp1d(rows, t_in, t_out, iparam(r, "mode"), iparam(r, "align_corners"), (float)param(r, "scale"), x,
                    y);
    output(r, y, (long)rows * t_out);
    free(y);
    return 0;
}

static int stft(run *r)
{
    int batch = iparam(r, "batch"), len = iparam(r, "len"), nfft = iparam(r, "nfft"), frames = iparam(r, "frames"),
        nbins = iparam(r, "nbins"), width = iparam(r, "width");
    const float *x = input(r, "x", (long)batch * len), *w = input(r, "window", nfft);
    long n = (long)batch * nbins * frames * width;
    float *y = zeros(n);
    kc_ref_stft(batch, len, nfft, iparam(r, "hop"), frames, nbins, iparam(r, "pad_mode"), iparam(r, "center"), width,
                iparam(r, "power"), x, w, y, NULL);
    output(r, y, n);
    free(y);
    return 0;
}

static int attention(run *r)
{
    int bh = iparam(r, "bh"), lq = iparam(r, "lq"), lk = iparam(r, "lk"), d = iparam(r, "d"), dv = iparam(r, "dv"),
        mm = iparam(r, "mask_mode");
    const float *q = input(r, "q", (long)bh * lq * d), *k = input(r, "k", (long)bh * lk * d),
                *v = input(r, "v", (long)bh * lk * dv);
    const float *mask = input(r, "mask", mm == 2 ? (long)bh * lq * lk : mm == 1 ? (long)lq * lk : 1);
    long n = (long)bh * lq * dv;
    float *y = zeros(n);
    kc_ref_attention(bh, lq, lk, d, dv, (float)param(r, "scale"), mm, iparam(r, "causal"), q, k, v, mask, y, NULL,
                     NULL);
    output(r, y, n);
    free(y);
    return 0;
}

static int resample(run *r)
{
    int batch = iparam(r, "batch"), len = iparam(r, "len"), t_out = iparam(r, "t_out"),
        new_rate = iparam(r, "new_rate"), taps = iparam(r, "taps");
    const float *x = input(r, "x", (long)batch * len), *h = input(r, "h", (long)new_rate * taps);
    float *y = zeros((long)batch * t_out);
    kc_ref_resample(batch, len, t_out, iparam(r, "orig"), new_rate, iparam(r, "width"), taps, x, h, y, NULL);
    output(r, y, (long)batch * t_out);
    free(y);
    return 0;
}

static int sine_source(run *r)
{
    int batch = iparam(r, "batch"), frames = iparam(r, "frames"), upp = iparam(r, "upp"), dim = iparam(r, "dim");
    long t_out = (long)frames * upp, n = (long)batch * t_out * dim;
    const float *rad = input(r, "rad", (long)batch * frames * dim), *uvf = input(r, "uvf", (long)batch * frames),
                *noise = input(r, "noise", n);
    float *sine = zeros(n), *nz = zeros(n), *uv = zeros((long)batch * t_out);
    kc_ref_sine_source(batch, frames, upp, dim, (float)param(r, "amp"), (float)param(r, "noise_std"), rad, uvf, noise,
                       sine, nz, uv);
    output(r, sine, n); /* the sine output; nz and uv are checked on the device */
    free(sine), free(nz), free(uv);
    return 0;
}

static int yin(run *r)
{
    int batch = iparam(r, "batch"), len = iparam(r, "len"), frames = iparam(r, "frames");
    const float *x = input(r, "x", (long)batch * len);
    float *f0 = zeros((long)batch * frames * 2);
    kc_ref_yin(batch, len, iparam(r, "frame_length"), iparam(r, "hop"), frames, iparam(r, "center"),
               iparam(r, "tau_min"), iparam(r, "tau_max"), (float)param(r, "threshold"), (float)param(r, "sr"), x, f0,
               f0 + (long)batch * frames);
    output(r, f0, (long)batch * frames * 2); /* f0, then the aperiodicity */
    free(f0);
    return 0;
}

static int conv2d(run *r)
{
    kc_conv2d_shape sh = {iparam(r, "batch"), iparam(r, "cin"), iparam(r, "h"),  iparam(r, "w"),
                          iparam(r, "cout"),  iparam(r, "kh"),  iparam(r, "kw"), iparam(r, "oh"),
                          iparam(r, "ow"),    iparam(r, "sh"),  iparam(r, "sw"), iparam(r, "ph"),
                          iparam(r, "pw"),    iparam(r, "dh"),  iparam(r, "dw"), iparam(r, "groups")};
    const float *x = input(r, "x", (long)sh.batch * sh.cin * sh.h * sh.w),
                *wt = input(r, "wt", (long)sh.cout * (sh.cin / sh.groups) * sh.kh * sh.kw),
                *b = input(r, "bias", sh.cout);
    long n = (long)sh.batch * sh.cout * sh.oh * sh.ow;
    float *y = zeros(n);
    kc_ref_conv2d(&sh, x, wt, b, y, NULL);
    output(r, y, n);
    free(y);
    return 0;
}

static int gru_step(run *r)
{
    int batch = iparam(r, "batch"), hidden = iparam(r, "hidden"), t = iparam(r, "t"), steps = iparam(r, "steps");
    const float *gi = input(r, "gi", (long)steps * batch * 3 * hidden), *whh = input(r, "whh", 3L * hidden * hidden),
                *bhh = input(r, "bhh", 3L * hidden), *h = input(r, "h_in", (long)batch * hidden);
    float *y = zeros((long)batch * hidden);
    kc_ref_gru_step(batch, hidden, t, gi, whh, bhh, h, y, NULL);
    output(r, y, (long)batch * hidden);
    free(y);
    return 0;
}

static int gemm_f16(run *r)
{
    int M = iparam(r, "M"), N = iparam(r, "N"), K = iparam(r, "K");
    const float *a = input(r, "A", (long)M * K), *b = input(r, "B", (long)K * N), *bias = input(r, "bias", N);
    uint16_t *A = malloc(2 * (size_t)M * K + 2), *B = malloc(2 * (size_t)K * N + 2), *C = malloc(2 * (size_t)M * N + 2);
    for (long i = 0; i < (long)M * K; i++)
        A[i] = kc_ref_float_to_half(a[i]);
    for (long i = 0; i < (long)K * N; i++)
        B[i] = kc_ref_float_to_half(b[i]);
    kc_ref_gemm_f16(M, N, K, iparam(r, "has_bias"), A, B, bias, C, NULL);
    float *y = zeros((long)M * N);
    for (long i = 0; i < (long)M * N; i++)
        y[i] = kc_ref_half_to_float(C[i]);
    output(r, y, (long)M * N);
    free(A), free(B), free(C), free(y);
    return 0;
}

static int gemm(run *r)
{
    int M = iparam(r, "M"), N = iparam(r, "N"), K = iparam(r, "K");
    const float *A = input(r, "A", (long)M * K), *B = input(r, "B", (long)K * N), *bias = input(r, "bias", N);
    float *C = zeros((long)M * N);
    kc_ref_gemm(M, N, K, iparam(r, "has_bias") != 0, iparam(r, "act"), (float)param(r, "alpha"), A, B, bias,
                C);
    output(r, C, (long)M * N);
    free(C);
    return 0;
}

static int bmm(run *r)
{
    int batch = iparam(r, "batch"), M = iparam(r, "M"), N = iparam(r, "N"), K = iparam(r, "K");
    int sa = iparam(r, "sa"), sb = iparam(r, "sb");
    const float *A = input(r, "A", (long)(batch - 1) * sa + (long)M * K),
                *B = input(r, "B", (long)(batch - 1) * sb + (long)K * N), *bias = input(r, "bias", N);
    float *C = zeros((long)batch * M * N);
    kc_ref_bmm(batch, M, N, K, sa, sb, iparam(r, "has_bias") != 0, iparam(r, "act"), (float)param(r, "alpha"), A, B,
               bias, C);
    output(r, C, (long)batch * M * N);
    free(C);
    return 0;
}

static int gemv(run *r)
{
    int N = iparam(r, "N"), K = iparam(r, "K");
    const float *W = input(r, "W", (long)N * K), *x = input(r, "x", K), *bias = input(r, "bias", N);
    float *y = zeros(N);
    kc_ref_gemv(N, K, iparam(r, "has_bias") != 0, W, x, bias, y);
    output(r, y, N);
    free(y);
    return 0;
}

static int softmax(run *r)
{
    int rows = iparam(r, "rows"), n = iparam(r, "n");
    const float *x = input(r, "x", (long)rows * n);
    float *y = zeros((long)rows * n);
    kc_ref_softmax(rows, n, iparam(r, "log_out"), x, y);
    output(r, y, (long)rows * n);
    free(y);
    return 0;
}

static int layernorm(run *r)
{
    int rows = iparam(r, "rows"), n = iparam(r, "n");
    const float *x = input(r, "x", (long)rows * n), *g = input(r, "gamma", n), *b = input(r, "beta", n);
    float *y = zeros((long)rows * n);
    kc_ref_layernorm(rows, n, (float)param(r, "eps"), x, g, b, y);
    output(r, y, (long)rows * n);
    free(y);
    return 0;
}

static int group_norm(run *r)
{
    int n = iparam(r, "n"), c = iparam(r, "c"), groups = iparam(r, "groups"), s = iparam(r, "s");
    long len = (long)n * c * s;
    const float *x = input(r, "x", len), *g = input(r, "gamma", c), *b = input(r, "beta", c);
    float *y = zeros(len);
    kc_ref_group_norm(n, c, groups, s, (float)param(r, "eps"), x, g, b, y);
    output(r, y, len);
    free(y);
    return 0;
}

static int conv1d(run *r)
{
    int cin = iparam(r, "cin"), cout = iparam(r, "cout"), t_in = iparam(r, "t_in"), ks = iparam(r, "ks");
    int dil = iparam(r, "dil"), pad = iparam(r, "pad");
    long t_out = kc_ref_conv1d_len(t_in, ks, dil, pad);
    const float *x = input(r, "x", (long)cin * t_in), *w = input(r, "w", (long)cout * cin * ks);
    const float *bias = input(r, "bias", cout);
    float *y = zeros(cout * t_out);
    kc_ref_conv1d(cin, cout, t_in, ks, dil, pad, (float)param(r, "slope"), x, w, bias, y);
    output(r, y, cout * t_out);
    free(y);
    return 0;
}

static int conv_transpose1d(run *r)
{
    int cin = iparam(r, "cin"), cout = iparam(r, "cout"), t_in = iparam(r, "t_in"), ks = iparam(r, "ks");
    int stride = iparam(r, "stride"), pad = iparam(r, "pad"), out_pad = iparam(r, "out_pad");
    int groups = iparam(r, "groups");
    long t_out = kc_ref_conv_transpose1d_len(t_in, ks, stride, pad, out_pad);
    const float *x = input(r, "x", (long)cin * t_in), *w = input(r, "w", (long)cin * (cout / groups) * ks);
    const float *bias = input(r, "bias", cout);
    float *y = zeros(cout * t_out);
    kc_ref_conv_transpose1d(cin, cout, t_in, ks, stride, pad, out_pad, groups, x, w, bias, y);
    output(r, y, cout * t_out);
    free(y);
    return 0;
}

static const struct {
    const char *name;
    int (*fn)(run *r);
} kernels[] = {
    {"saxpy", saxpy},
    {"elementwise", elementwise},
    {"pad1d", pad1d},
    {"interp1d", interp1d},
    {"stft", stft},
    {"attention", attention},
    {"resample", resample},
    {"sine_source", sine_source},
    {"yin", yin},
    {"conv2d", conv2d},
    {"gru_step", gru_step},
    {"gemm_f16", gemm_f16},
    {"gemm", gemm},
    {"bmm", bmm},
    {"gemv", gemv},
    {"softmax", softmax},
    {"layernorm", layernorm},
    {"group_norm", group_norm},
    {"conv1d", conv1d},
    {"conv_transpose1d", conv_transpose1d},
};

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: refcheck KERNEL DIR\n");
        return 2;
    }
    run r = {.dir = argv[2]};
    for (size_t i = 0; i < sizeof(kernels) / sizeof(kernels[0]); i++) {
        if (strcmp(kernels[i].name, argv[1]) == 0) {
            read_params(&r);
            int status = kernels[i].fn(&r);
            for (int j = 0; j < r.ninputs; j++)
                free(r.inputs[j]);
            return status;
        }
    }
    fprintf(stderr, "refcheck: no reference for kernel '%s'\n", argv[1]);
    return 2;
}
