/*
 * reference.c — the kernels' definitions as plain loops (reference.h).
 *
 * Nothing here is clever on purpose: each function is the formula of
 * docs/kernels.md with double accumulation. conv_transpose1d is written
 * as the scatter that defines it (every input sample adds ks taps), not
 * as the gather the kernel uses, so that the two formulations check each
 * other.
 */
#include "reference.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double kc_ref_activate(int act, double alpha, double x)
{
    switch (act) {
    case KC_REF_ACT_RELU: return x > 0 ? x : 0;
    case KC_REF_ACT_GELU: return 0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case KC_REF_ACT_LEAKY: return x >= 0 ? x : alpha * x;
    default: return x;
    }
}

double kc_ref_elementwise_one(int op, double alpha, double x, double z)
{
    switch (op) {
    case KC_REF_EW_RELU: return x > 0 ? x : 0;
    case KC_REF_EW_LEAKY: return x >= 0 ? x : alpha * x;
    case KC_REF_EW_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case KC_REF_EW_TANH: return tanh(x);
    case KC_REF_EW_SILU: return x / (1.0 + exp(-x));
    case KC_REF_EW_GELU: return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case KC_REF_EW_GELU_TANH: return kc_ref_activate(KC_REF_ACT_GELU, 0, x);
    case KC_REF_EW_ADD: return x + alpha * z;
    case KC_REF_EW_MUL: return x * z;
    case KC_REF_EW_ADD_SCALAR: return x + alpha;
    case KC_REF_EW_MUL_SCALAR: return x * alpha;
    case KC_REF_EW_LOG: return log(x);
    case KC_REF_EW_EXP: return exp(x);
    case KC_REF_EW_CLAMP_MIN: return x < alpha ? alpha : x;
    case KC_REF_EW_CLAMP_MAX: return x > alpha ? alpha : x;
    default: return x;
    }
}

void kc_ref_elementwise(int n, int op, float alpha, const float *x, const float *z, float *y)
{
    for (int i = 0; i < n; i++)
        y[i] = (float)kc_ref_elementwise_one(op, alpha, x[i], z[i]);
}

/* An outside position s folded back into 0..t_in-1: reflect bounces off
 * the end samples (without repeating them) as often as it takes. */
static int ref_pad_source(int mode, long s, int t_in)
{
    if (mode == 2)
        return s < 0 ? 0 : t_in - 1;
    if (mode == 3)
        return (int)(((s % t_in) + t_in) % t_in);
    if (t_in == 1)
        return 0;
    long period = 2L * (t_in - 1), m = ((s % period) + period) % period;
    return (int)(m < t_in ? m : period - m);
}

void kc_ref_pad1d(int rows, int t_in, int left, int right, int mode, float value, const float *x, float *y)
{
    int t_out = t_in + left + right;
    for (int r = 0; r < rows; r++)
        for (int t = 0; t < t_out; t++) {
            long s = (long)t - left;
            bool inside = s >= 0 && s < t_in;
            y[(long)r * t_out + t] = inside        ? x[(long)r * t_in + s]
                                     : mode == 0 ? value
                                                 : x[(long)r * t_in + ref_pad_source(mode, s, t_in)];
        }
}

void kc_ref_interp1d(int rows, int t_in, int t_out, int mode, int align_corners, float scale, const float *x,
                     float *y)
{
    for (int r = 0; r < rows; r++)
        for (int t = 0; t < t_out; t++) {
            const float *row = x + (long)r * t_in;
            double v;
            if (mode == 0) {
                long i = (long)floorf((float)t * scale);
                v = row[i < t_in - 1 ? (i < 0 ? 0 : i) : t_in - 1];
            } else {
                float s = align_corners ? scale * (float)t : scale * ((float)t + 0.5f) - 0.5f;
                if (s < 0)
                    s = 0;
                long i = (long)s;
                i = i > t_in - 1 ? t_in - 1 : i;
                long j = i + 1 < t_in ? i + 1 : t_in - 1;
                double w = (double)s - (double)i;
                v = (1.0 - w) * row[i] + w * row[j];
            }
            y[(long)r * t_out + t] = (float)v;
        }
}

/* torch's padding of a frame past the signal's ends */
static float ref_stft_sample(const float *x, int len, long p, int pad_mode)
{
    if (p >= 0 && p < len)
        return x[p];
    if (pad_mode == 0)
        return 0;
    if (pad_mode == 2)
        return x[p < 0 ? 0 : len - 1];
    long period = 2L * (len - 1);
    if (period == 0)
        return x[0];
    p %= period;
    p = p < 0 ? p + period : p;
    return x[p >= len ? period - p : p];
}

void kc_ref_stft(int batch, int len, int nfft, int hop, int frames, int nbins, int pad_mode, int center, int width,
                 int power, const float *x, const float *window, float *out, double *mag)
{
    double *c = malloc(sizeof(double) * (size_t)nfft), *s = malloc(sizeof(double) * (size_t)nfft),
           *v = malloc(sizeof(double) * (size_t)nfft);
    for (int k = 0; k < nfft; k++)
        c[k] = cos(2 * M_PI * k / nfft), s[k] = -sin(2 * M_PI * k / nfft);
    for (int b = 0; b < batch; b++)
        for (int t = 0; t < frames; t++) {
            long start = (long)t * hop - (center ? nfft / 2 : 0);
            double sum = 0;
            for (int i = 0; i < nfft; i++) {
                v[i] = (double)ref_stft_sample(x + (long)b * len, len, start + i, pad_mode) * window[i];
                sum += fabs(v[i]);
            }
            if (mag)
                mag[(long)b * frames + t] = sum;
            for (int f = 0; f < nbins; f++) {
                double re = 0, im = 0;
                for (int i = 0; i < nfft; i++) {
                    int k = (int)((long)f * i % nfft);
                    re += v[i] * c[k], im += v[i] * s[k];
                }
                float *o = out + (((long)b * nbins + f) * frames + t) * width;
                if (width == 2)
                    o[0] = (float)re, o[1] = (float)im;
                else
                    o[0] = (float)(power == 2 ? re * re + im * im : sqrt(re * re + im * im));
            }
        }
    free(c), free(s), free(v);
}

void kc_ref_attention(int bh, int lq, int lk, int d, int dv, float scale, int mask_mode, int causal,
                      const float *q, const float *k, const float *v, const float *mask, float *out, double *mag,
                      double *rowscale)
{
    double *sc = malloc(sizeof(double) * (size_t)(lk ? lk : 1));
    for (int p = 0; p < bh; p++)
        for (int i = 0; i < lq; i++) {
            const float *qi = q + ((long)p * lq + i) * d;
            double big = -INFINITY, worst = 0;
            for (int j = 0; j < lk; j++) {
                const float *kj = k + ((long)p * lk + j) * d;
                double dot = 0, a = 0;
                for (int c = 0; c < d; c++)
                    dot += (double)qi[c] * kj[c], a += fabs((double)qi[c] * kj[c]);
                worst = fmax(worst, a * scale);
                double mv = mask_mode == 0 ? 0 : mask[(mask_mode == 2 ? (long)p * lq * lk : 0) + (long)i * lk + j];
                sc[j] = causal && j > i ? -INFINITY : dot * scale + mv;
                big = fmax(big, sc[j]);
            }
            if (rowscale)
                rowscale[(long)p * lq + i] = worst;
            double sum = 0;
            for (int j = 0; j < lk; j++)
                sum += sc[j] = big == -INFINITY ? 0 : exp(sc[j] - big);
            for (int c = 0; c < dv; c++) {
                double o = 0, a = 0;
                for (int j = 0; j < lk; j++) {
                    double vj = v[((long)p * lk + j) * dv + c];
                    o += sc[j] * vj, a += sc[j] * fabs(vj);
                }
                long at = ((long)p * lq + i) * dv + c;
                out[at] = big == -INFINITY ? NAN : (float)(o / sum);
                if (mag)
                    mag[at] = big == -INFINITY ? 0 : a / sum;
            }
        }
    free(sc);
}

void kc_ref_resample(int batch, int len, int t_out, int orig, int new_rate, int width, int taps, const float *x,
                     const float *h, float *y, double *mag)
{
    for (int b = 0; b < batch; b++)
        for (int o = 0; o < t_out; o++) {
            long start = (long)(o / new_rate) * orig - width;
            const float *hp = h + (long)(o % new_rate) * taps;
            double acc = 0, a = 0;
            for (int k = 0; k < taps; k++) {
                long i = start + k;
                if (i >= 0 && i < len) {
                    double t = (double)x[(long)b * len + i] * hp[k];
                    acc += t, a += fabs(t);
                }
            }
            y[(long)b * t_out + o] = (float)acc;
            if (mag)
                mag[(long)b * t_out + o] = a;
        }
}

void kc_ref_sine_source(int batch, int frames, int upp, int dim, float amp, float noise_std, const float *rad,
                        const float *uvf, const float *noise, float *sine, float *nz, float *uv)
{
    long t_out = (long)frames * upp;
    for (int b = 0; b < batch; b++)
        for (int h = 0; h < dim; h++) {
            double phi = 0;
            for (long t = 0; t < t_out; t++) {
                long f = t / upp, o = ((long)b * t_out + t) * dim + h;
                phi = fmod(phi + rad[((long)b * frames + f) * dim + h], 1.0);
                double v = uvf[(long)b * frames + f], namp = v * noise_std + (1 - v) * amp / 3.0;
                nz[o] = (float)(namp * noise[o]);
                sine[o] = (float)(amp * sin(2 * M_PI * phi) * v + namp * noise[o]);
                if (h == 0)
                    uv[(long)b * t_out + t] = (float)v;
            }
        }
}

void kc_ref_yin(int batch, int len, int frame_length, int hop, int frames, int center, int tau_min, int tau_max,
                float threshold, float sr, const float *x, float *f0, float *aperiodicity)
{
    int W = frame_length - tau_max;
    double *fr = malloc(sizeof(double) * (size_t)frame_length), *d = malloc(sizeof(double) * (size_t)(tau_max + 1));
    for (int b = 0; b < batch; b++)
        for (int t = 0; t < frames; t++) {
            long start = (long)t * hop - (center ? frame_length / 2 : 0);
            for (int i = 0; i < frame_length; i++) {
                long p = start + i;
                fr[i] = p >= 0 && p < len ? x[(long)b * len + p] : 0;
            }
            for (int tau = 0; tau <= tau_max; tau++) {
                double acc = 0;
                for (int j = 0; j < W; j++)
                    acc += (fr[j] - fr[j + tau]) * (fr[j] - fr[j + tau]);
                d[tau] = acc;
            }
            double cum = 0;
            for (int tau = 1; tau <= tau_max; tau++) {
                cum += d[tau];
                d[tau] = cum > 0 ? d[tau] * tau / cum : 1;
            }
            d[0] = 1;
            int tau = tau_min;
            while (tau < tau_max && !(d[tau] < threshold))
                tau++;
            if (tau < tau_max) {
                while (tau + 1 < tau_max && d[tau + 1] < d[tau])
                    tau++;
            } else {
                tau = tau_min;
                for (int k = tau_min + 1; k < tau_max; k++)
                    if (d[k] < d[tau])
                        tau = k;
            }
            double shift = 0;
            if (tau > 1 && tau + 1 <= tau_max) {
                double a = d[tau - 1], m = d[tau], c = d[tau + 1], den = a - 2 * m + c;
                if (den > 0)
                    shift = fmin(fmax(0.5 * (a - c) / den, -1), 1);
            }
            f0[(long)b * frames + t] = (float)(sr / (tau + shift));
            aperiodicity[(long)b * frames + t] = (float)d[tau];
        }
    free(fr), free(d);
}

void kc_ref_conv2d(const kc_conv2d_shape *s, const float *x, const float *wt, const float *bias, float *y,
                   double *mag)
{
    int cig = s->cin / s->groups, cog = s->cout / s->groups;
    for (int n = 0; n < s->batch; n++)
        for (int o = 0; o < s->cout; o++)
            for (int i = 0; i < s->oh; i++)
                for (int j = 0; j < s->ow; j++) {
                    double acc = bias[o], a = fabs(bias[o]);
                    for (int c = 0; c < cig; c++)
                        for (int p = 0; p < s->kh; p++)
                            for (int q = 0; q < s->kw; q++) {
                                int r = i * s->sh - s->ph + p * s->dh, t = j * s->sw - s->pw + q * s->dw;
                                if (r < 0 || r >= s->h || t < 0 || t >= s->w)
                                    continue;
                                double v = (double)x[(((long)n * s->cin + (long)(o / cog) * cig + c) * s->h + r) * s->w + t] *
                                           wt[(((long)o * cig + c) * s->kh + p) * s->kw + q];
                                acc += v, a += fabs(v);
                            }
                    long at = (((long)n * s->cout + o) * s->oh + i) * s->ow + j;
                    y[at] = (float)acc;
                    if (mag)
                        mag[at] = a;
                }
}

void kc_ref_gru_step(int batch, int hidden, int t, const float *gi, const float *whh, const float *bhh,
                     const float *h_in, float *h_out, double *mag)
{
    for (int b = 0; b < batch; b++)
        for (int u = 0; u < hidden; u++) {
            double a[3], m = 0;
            for (int q = 0; q < 3; q++) {
                a[q] = bhh[q * hidden + u], m += fabs(a[q]);
                for (int k = 0; k < hidden; k++) {
                    double v = (double)h_in[(long)b * hidden + k] * whh[((long)q * hidden + u) * hidden + k];
                    a[q] += v, m += fabs(v);
                }
            }
            const float *g = gi + ((long)t * batch + b) * 3 * hidden;
            double r = 1 / (1 + exp(-(g[u] + a[0]))), z = 1 / (1 + exp(-(g[hidden + u] + a[1])));
            double n = tanh(g[2 * hidden + u] + r * a[2]);
            h_out[(long)b * hidden + u] = (float)((1 - z) * n + z * h_in[(long)b * hidden + u]);
            if (mag)
                mag[(long)b * hidden + u] = m + fabs(g[u]) + fabs(g[hidden + u]) + fabs(g[2 * hidden + u]);
        }
}

float kc_ref_half_to_float(uint16_t h)
{
    _Float16 v;
    memcpy(&v, &h, 2);
    return (float)v;
}

uint16_t kc_ref_float_to_half(double v)
{
    _Float16 h = (_Float16)v; /* one rounding, to nearest even */
    uint16_t bits;
    memcpy(&bits, &h, 2);
    return bits;
}

void kc_ref_gemm_f16(int M, int N, int K, bool has_bias, const uint16_t *A, const uint16_t *B, const float *bias,
                     uint16_t *C, double *mag)
{
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            double acc = has_bias ? bias[n] : 0, a = fabs(acc);
            for (int k = 0; k < K; k++) {
                double v = (double)kc_ref_half_to_float(A[(long)m * K + k]) * kc_ref_half_to_float(B[(long)k * N + n]);
                acc += v, a += fabs(v);
            }
            C[(long)m * N + n] = kc_ref_float_to_half(acc);
            if (mag)
                mag[(long)m * N + n] = a;
        }
}

void kc_ref_saxpy(int n, float a, const float *x, float *y)
{
    for (int i = 0; i < n; i++)
        y[i] = (float)((double)a * x[i] + y[i]);
}

void kc_ref_gemm(int M, int N, int K, bool has_bias, int act, float alpha, const float *A, const float *B,
                 const float *bias, float *C)
{
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            double s = has_bias ? bias[n] : 0.0;
            for (int k = 0; k < K; k++)
                s += (double)A[(long)m * K + k] * B[(long)k * N + n];
            C[(long)m * N + n] = (float)kc_ref_activate(act, alpha, s);
        }
}

void kc_ref_bmm(int batch, int M, int N, int K, int sa, int sb, bool has_bias, int act, float alpha, const float *A,
                const float *B, const float *bias, float *C)
{
    for (int b = 0; b < batch; b++)
        kc_ref_gemm(M, N, K, has_bias, act, alpha, A + (long)b * sa, B + (long)b * sb, bias, C + (long)b * M * N);
}

void kc_ref_gemv(int N, int K, bool has_bias, const float *W, const float *x, const float *bias, float *y)
{
    for (int n = 0; n < N; n++) {
        double s = has_bias ? bias[n] : 0.0;
        for (int k = 0; k < K; k++)
            s += (double)W[(long)n * K + k] * x[k];
        y[n] = (float)s;
    }
}

void kc_ref_softmax(int rows, int n, int log_out, const float *x, float *y)
{
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (long)r * n;
        float *yr = y + (long)r * n;
        double mx = -INFINITY, sum = 0;
        for (int i = 0; i < n; i++)
            mx = xr[i] > mx ? xr[i] : mx;
        for (int i = 0; i < n; i++)
            sum += exp(xr[i] - mx);
        for (int i = 0; i < n; i++)
            yr[i] = (float)(log_out ? (xr[i] - mx) - log(sum) : exp(xr[i] - mx) / sum);
    }
}

void kc_ref_layernorm(int rows, int n, float eps, const float *x, const float *gamma, const float *beta,
                      float *y)
{
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (long)r * n;
        float *yr = y + (long)r * n;
        double mean = 0, var = 0;
        for (int i = 0; i < n; i++)
            mean += xr[i];
        mean /= n;
        for (int i = 0; i < n; i++)
            var += (xr[i] - mean) * (xr[i] - mean);
        var /= n;
        double rstd = 1.0 / sqrt(var + eps);
        for (int i = 0; i < n; i++)
            yr[i] = (float)((xr[i] - mean) * rstd * gamma[i] + beta[i]);
    }
}

void kc_ref_group_norm(int n, int c, int groups, int s, float eps, const float *x, const float *gamma,
                       const float *beta, float *y)
{
    long per = c / groups, len = per * s;
    for (long seg = 0; seg < (long)n * groups; seg++) {
        const float *xs = x + seg * len;
        float *ys = y + seg * len;
        double mean = 0, var = 0;
        for (long i = 0; i < len; i++)
            mean += xs[i];
        mean /= len;
        for (long i = 0; i < len; i++)
            var += (xs[i] - mean) * (xs[i] - mean);
        var /= len;
        double rstd = 1.0 / sqrt(var + eps);
        for (long i = 0; i < len; i++) {
            long ch = seg % groups * per + i / s;
            ys[i] = (float)((xs[i] - mean) * rstd * gamma[ch] + beta[ch]);
        }
    }
}

int kc_ref_conv1d_len(int t_in, int ks, int dil, int pad)
{
    return t_in + 2 * pad - dil * (ks - 1);
}

void kc_ref_conv1d(int cin, int cout, int t_in, int ks, int dil, int pad, float slope, const float *x,
                   const float *w, const float *bias, float *y)
{
    int t_out = kc_ref_conv1d_len(t_in, ks, dil, pad);
    for (int o = 0; o < cout; o++)
        for (int t = 0; t < t_out; t++) {
            double s = bias[o];
            for (int c = 0; c < cin; c++)
                for (int j = 0; j < ks; j++) {
                    int at = t + j * dil - pad;
                    if (at >= 0 && at < t_in)
                        s += (double)w[((long)o * cin + c) * ks + j] * x[(long)c * t_in + at];
                }
            y[(long)o * t_out + t] = (float)(s >= 0 ? s : slope * s);
        }
}

int kc_ref_conv_transpose1d_len(int t_in, int ks, int stride, int pad, int out_pad)
{
    return (t_in - 1) * stride - 2 * pad + ks + out_pad;
}

void kc_ref_conv_transpose1d(int cin, int cout, int t_in, int ks, int stride, int pad, int out_pad, int groups,
                             const float *x, const float *w, const float *bias, float *y)
{
    int t_out = kc_ref_conv_transpose1d_len(t_in, ks, stride, pad, out_pad);
    int cin_g = cin / groups, cout_g = cout / groups;
    double *acc = calloc((size_t)cout * (size_t)(t_out > 0 ? t_out : 1), sizeof(double));
    if (!acc)
        abort();
    for (int c = 0; c < cin; c++)
        for (int s = 0; s < t_in; s++)
            for (int og = 0; og < cout_g; og++)
                for (int j = 0; j < ks; j++) {
                    int t = s * stride + j - pad; /* the full result, shifted by pad */
                    int o = c / cin_g * cout_g + og; /* c's group's outputs */
                    if (t >= 0 && t < t_out)
                        acc[(long)o * t_out + t] +=
                            (double)x[(long)c * t_in + s] * w[((long)c * cout_g + og) * ks + j];
                }
    for (int o = 0; o < cout; o++)
        for (int t = 0; t < t_out; t++)
            y[(long)o * t_out + t] = (float)(acc[(long)o * t_out + t] + bias[o]);
    free(acc);
}
