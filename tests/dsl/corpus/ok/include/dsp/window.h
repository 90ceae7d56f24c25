/* dsp/window.h — analysis windows; include guard, and a relative include
 * that climbs one folder ("../common.h"). */
#ifndef CORPUS_DSP_WINDOW_H
#define CORPUS_DSP_WINDOW_H
#include "../common.h"

#ifndef WINDOW_KIND
#define WINDOW_KIND 1   /* 0 = rectangular, 1 = Hann, 2 = Hamming */
#endif

static float hann(int i, int n) { return 0.5f - 0.5f * cosf(CORPUS_TWO_PI * (float)i / (float)n); }

static float hamming(int i, int n) { return 0.54f - 0.46f * cosf(CORPUS_TWO_PI * (float)i / (float)n); }

static float window_at(int i, int n)
{
    switch (WINDOW_KIND) {
    case 0:
        return 1.0f;
    case 1:
        return hann(i, n);
    default:
        return hamming(i, n);
    }
}

#endif
