/*
 * reference.h — plain C reference implementations of the kernels in
 * kernels/, for the device tests: the same signatures (minus the
 * workgroup machinery), layouts and semantics (padding, bias, activation,
 * edges), written as the straightforward loops of the definitions in
 * docs/kernels.md. Sums are accumulated in double and rounded to float
 * once, so a reference is at least as accurate as any variant;
 * tests/kernels/refcheck.py proves each against numpy.
 *
 * Every array is a plain row-major float array (the kernels' float4
 * buffers are views of the same floats). Output arrays are written
 * completely; inputs are not modified, except y in saxpy.
 */
#ifndef KC_REFERENCE_H
#define KC_REFERENCE_H

#include <stdbool.h>
#include <stdint.h>

/* The activations of include/act.kch (0 none, 1 ReLU, 2 GELU tanh, 3 leaky). */
enum { KC_REF_ACT_NONE = 0, KC_REF_ACT_RELU = 1, KC_REF_ACT_GELU = 2, KC_REF_ACT_LEAKY = 3 };
double kc_ref_activate(int act, double alpha, double x);

/* elementwise.kc's ops (its header lists them): y = f(x, z), n floats */
enum {
    KC_REF_EW_RELU, KC_REF_EW_LEAKY, KC_REF_EW_SIGMOID, KC_REF_EW_TANH, KC_REF_EW_SILU, KC_REF_EW_GELU,
    KC_REF_EW_GELU_TANH, KC_REF_EW_ADD, KC_REF_EW_MUL, KC_REF_EW_ADD_SCALAR, KC_REF_EW_MUL_SCALAR, KC_REF_EW_LOG,
    KC_REF_EW_EXP, KC_REF_EW_CLAMP_MIN, KC_REF_EW_CLAMP_MAX, KC_REF_EW_COUNT
};
double kc_ref_elementwise_one(int op, double alpha, double x, double z);
void kc_ref_elementwise(int n, int op, float alpha, const float *x, const float *z, float *y);

/* pad1d.kc: rows x t_in padded to rows x (t_in + left + right); mode 0
 * constant (value), 1 reflect, 2 replicate, 3 circular */
void kc_ref_pad1d(int rows, int t_in, int left, int right, int mode, float value, const float *x, float *y);

/* interp1d.kc: rows x t_in resampled to rows x t_out, mode 0 nearest, 1
 * linear; scale as PyTorch computes it (the kernel's header). Positions
 * are computed in float as the kernel and PyTorch do, the blend in double. */
void kc_ref_interp1d(int rows, int t_in, int t_out, int mode, int align_corners, float scale, const float *x,
                     float *y);

/* stft.kc: frames of batch signals (len samples each), extended by
 * pad_mode (0 zeros, 1 reflect, 2 replicate) and centred when center,
 * times window (nfft), transformed by a plain DFT in double; bins
 * 0..nbins-1 as [batch][bin][frame] x width (2: re, im; 1: |X| or |X|^2
 * by power). mag (may be NULL) gets each frame's sum |x w|, [batch][frame]:
 * the scale of its rounding errors. */
void kc_ref_stft(int batch, int len, int nfft, int hop, int frames, int nbins, int pad_mode, int center, int width,
                 int power, const float *x, const float *window, float *out, double *mag);

/* attention.kc: out = softmax(scale q k^T + mask, causal: keys j <= i) v
 * for bh problems, in double; a row with no key left is NaN. mag (may be
 * NULL) gets, per output element, sum_j p_j |v_j| (the scale of its
 * rounding errors) and, per row in rowscale[bh * lq] (may be NULL), the
 * largest sum |q| |k| times scale over its keys. */
void kc_ref_attention(int bh, int lq, int lk, int d, int dv, float scale, int mask_mode, int causal,
                      const float *q, const float *k, const float *v, const float *mask, float *out, double *mag,
                      double *rowscale);

/* resample.kc: y[b][f new + p] = sum_k xp[f orig + k] h[p][k] (xp: x
 * after width zeros), the first t_out outputs of each signal, in double;
 * mag (may be NULL) gets sum_k |x h| per output. */
void kc_ref_resample(int batch, int len, int t_out, int orig, int new_rate, int width, int taps, const float *x,
                     const float *h, float *y, double *mag);

/* sine_source.kc: phi = (the upsampled rad's cumulative sum) mod 1 in
 * double; sine = amp sin(2 pi phi) uv + namp noise, nz = namp noise, uv per
 * sample ([batch][frames upp][dim] and [batch][frames upp]). */
void kc_ref_sine_source(int batch, int frames, int upp, int dim, float amp, float noise_std, const float *rad,
                        const float *uvf, const float *noise, float *sine, float *nz, float *uv);

/* yin.kc: de Cheveigné & Kawahara's steps 2-5 in double per frame (the
 * kernel's header): f0 = sr / tau and the aperiodicity d'(tau). */
void kc_ref_yin(int batch, int len, int frame_length, int hop, int frames, int center, int tau_min, int tau_max,
                float threshold, float sr, const float *x, float *f0, float *aperiodicity);

/* conv2d.kc: NCHW, weights (cout, cin / groups, kh, kw), stride, zero
 * padding, dilation, groups; in double; mag (may be NULL) gets per output
 * |bias| + sum of |x w|. */
typedef struct kc_conv2d_shape {
    int batch, cin, h, w, cout, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw, groups;
} kc_conv2d_shape;
void kc_ref_conv2d(const kc_conv2d_shape *s, const float *x, const float *wt, const float *bias, float *y,
                   double *mag);

/* gru_step.kc: one GRU step (torch.nn.GRU's equations) in double: h_out
 * from h_in, step t's input projections gi and whh, bhh; mag (may be NULL)
 * gets per unit the sum of the magnitudes of its three dot products' terms
 * and biases (the scale of the rounding errors). */
void kc_ref_gru_step(int batch, int hidden, int t, const float *gi, const float *whh, const float *bhh,
                     const float *h_in, float *h_out, double *mag);

/* gemm_f16.kc: C = A B (+ bias) with A, B, C as IEEE half bit patterns,
 * the products and sums in double, C rounded to half once; mag (may be
 * NULL) gets per element |bias| + sum |a b|. */
void kc_ref_gemm_f16(int M, int N, int K, bool has_bias, const uint16_t *A, const uint16_t *B, const float *bias,
                     uint16_t *C, double *mag);
float kc_ref_half_to_float(uint16_t h);
uint16_t kc_ref_float_to_half(double v);

/* y = a x + y, n floats */
void kc_ref_saxpy(int n, float a, const float *x, float *y);

/* C (M x N) = act(A (M x K) · B (K x N) + bias (N, when has_bias)) */
void kc_ref_gemm(int M, int N, int K, bool has_bias, int act, float alpha, const float *A, const float *B,
                 const float *bias, float *C);

/* bmm.kc: C[b] (M x N, packed) = act(A[b] · B[b] + bias) for b < batch,
 * A[b] starting at float b sa of A and B[b] at b sb of B (0: broadcast) */
void kc_ref_bmm(int batch, int M, int N, int K, int sa, int sb, bool has_bias, int act, float alpha, const float *A,
                const float *B, const float *bias, float *C);

/* y (N) = W (N x K) · x (K) + bias (N, when has_bias) */
void kc_ref_gemv(int N, int K, bool has_bias, const float *W, const float *x, const float *bias, float *y);

/* each row of x (rows x n): y = exp(x - max) / sum(exp(x - max)), or with
 * log_out (x - max) - log(sum(exp(x - max))) */
void kc_ref_softmax(int rows, int n, int log_out, const float *x, float *y);

/* each row of x (rows x n): (x - mean) / sqrt(var + eps) * gamma + beta, var biased */
void kc_ref_layernorm(int rows, int n, float eps, const float *x, const float *gamma, const float *beta,
                      float *y);

/* torch's group_norm of x (n x c x s): each (batch, group) segment of
 * c / groups channels normalised as layernorm's rows, then per channel
 * y = z gamma[ch] + beta[ch] */
void kc_ref_group_norm(int n, int c, int groups, int s, float eps, const float *x, const float *gamma,
                       const float *beta, float *y);

/* conv1d's output length: t_in + 2 pad - dil (ks - 1) */
int kc_ref_conv1d_len(int t_in, int ks, int dil, int pad);
/* y (cout x t_out) = leaky_relu(conv1d(x (cin x t_in), w (cout x cin x ks)) + bias, slope),
 * stride 1, zero padding pad on both sides */
void kc_ref_conv1d(int cin, int cout, int t_in, int ks, int dil, int pad, float slope, const float *x,
                   const float *w, const float *bias, float *y);

/* conv_transpose1d's output length: (t_in - 1) stride - 2 pad + ks + out_pad */
int kc_ref_conv_transpose1d_len(int t_in, int ks, int stride, int pad, int out_pad);
/* y (cout x t_out) = ConvTranspose1d(x (cin x t_in), w (cin x cout/groups x ks), groups) + bias, PyTorch's
 * semantics; groups divides cin and cout */
void kc_ref_conv_transpose1d(int cin, int cout, int t_in, int ks, int stride, int pad, int out_pad, int groups,
                             const float *x, const float *w, const float *bias, float *y);

#endif
