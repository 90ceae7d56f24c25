/* activ.h — activation functions; uses #pragma once and includes a sibling
 * header relative to its own folder. */
#pragma once
#include "common.h"

static float sigmoidf(float v) { return 1.0f / (1.0f + expf(-v)); }

static float silu(float v) { return v * sigmoidf(v); }

static float gelu_erf(float v) { return 0.5f * v * (1.0f + erff(v * 0.70710678f)); }

static float gelu_tanh(float v)
{
    float inner = 0.79788456f * (v + 0.044715f * v * v * v);
    return 0.5f * v * (1.0f + tanhf(inner));
}

static float leaky(float v, float slope) { return v >= 0.0f ? v : v * slope; }

/* Snake activation (BigVGAN): x + 1/alpha * sin^2(alpha * x). */
static float snake(float v, float alpha)
{
    float s = sinf(alpha * v);
    return v + sq(s) / (alpha + 1e-9f);
}
