/*
 * logic.h — code that is both kc and C. exec.kc runs it on the host target
 * through kc's LLVM backend; test_llvm_host.c compiles it with the C
 * compiler (with uint, half, kc_cdiv, kc_mul_hi, min, max and clamp
 * defined as kc defines them) and compares every result. Floating literals
 * carry an f: in kc every literal is a float, in C not.
 */

static int early(int i)
{
    if (i % 3 == 0)
        return -i;
    for (int k = 0; k < 5; k++)
        if (k * k > i)
            return k;
    return 99;
}

/* Control flow: loops with break and continue, do-while, a switch whose
 * default sits between cases and falls through, short circuits with side
 * effects, compound assignment, helpers that return early, unrolled loops
 * (kc unrolls them before the backend sees them; C ignores KC_UNROLL), and
 * constants kc folds. */
static void logic_control(int i, int r[12])
{
    int acc = 0;
    for (int k = 0; k < 10; k++) {
        if (k == i % 7)
            continue;
        if (k > 8 - i % 3)
            break;
        acc += k * (i + 1);
    }
    r[0] = acc;
    int j = i + 1, steps = 0;
    do {
        j = j % 2 == 0 ? j / 2 : 3 * j + 1;
        steps++;
    } while (j != 1 && steps < 200);
    r[1] = steps;
    int s = 0;
    switch (i % 6) {
    case 0: s += 1; /* fall through */
    case 1: s += 10; break;
    default: s += 100; /* fall through */
    case 4: s += 1000; /* fall through */
    case 5: s += 10000; break;
    }
    r[2] = s;
    int t = 0, u = i;
    while (u > 0) {
        if ((u & 3) == 3) {
            u >>= 2;
            continue;
        }
        t += u & 1;
        u >>= 1;
    }
    r[3] = t;
    int c = 0;
    if (i > 3 && (c++ > -1 || c++ > 0))
        c += 5;
    if (i < 2 || c++ == 6)
        c *= 3;
    r[4] = c * 100 + i;
    int m = 0;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
            if (a == b)
                continue;
            if (a + b > i % 6)
                break;
            m += a * 4 + b;
        }
    r[5] = m;
    r[6] = early(i);
    int x = i;
    x += 3;
    x *= 2;
    x -= i;
    x /= 3;
    x %= 5;
    x <<= 2;
    x >>= 1;
    x |= 8;
    x &= 13;
    x ^= 6;
    int z = i > 5 ? i-- : ++i;
    r[7] = x + z * 1000 + i;
    int un = 0;
    KC_UNROLL for (int k = 0; k < 6; k++) {
        if (k == 4)
            break;
        if (k == i % 3)
            continue;
        un += k * k + i;
    }
    r[8] = un;
    int w = 0, left = 3;
    KC_UNROLL while (left > 0) {
        w = w * 10 + left + i % 4;
        left--;
    }
    r[9] = w;
    r[10] = (7 / 2) * 3 + (-7 % 3) + (1 << 4) - (-7 / 2) + (int)(7.9f) + (int)(-7.9f) + (int)(3u - 5u > 0u);
    long big = (long)i * 1000000007l + 0x7fffffffl;
    r[11] = (int)(big % 1000l) + (int)(big >> 33) + (int)((ulong)big / 3ul % 1000ul);
}

/* Integers: C's division and remainder, kc_cdiv for any signs, shifts,
 * unsigned wrap-around, 64-bit products, comparisons, min/max/clamp. */
static void logic_int(int a, int b, int r[16])
{
    uint ua = (uint)a, ub = (uint)b;
    r[0] = a / b;
    r[1] = a % b;
    r[2] = kc_cdiv(a, b);
    r[3] = (int)(ua / (ub | 1u));
    r[4] = (int)(ua % (ub | 1u));
    r[5] = a >> (b & 31);
    r[6] = (int)(ua >> (ub & 31u));
    r[7] = (int)(ua << (ub & 31u));
    r[8] = min(a, b);
    r[9] = max(a, b);
    r[10] = clamp(a, -100, 100);
    long p = (long)a * (long)b;
    r[11] = (int)(p >> 20);
    r[12] = (int)p;
    r[13] = (int)kc_mul_hi(ua, ub);
    r[14] = (a < b) + (a <= b) * 2 + (a == b) * 4 + (a != b) * 8 + (ua < ub) * 16 + (ua >= ub) * 32;
    r[15] = (~a ^ (a & b)) | ((a - b) * 3 + (int)(ua * ub));
}

/* Floats: arithmetic, C's rounding functions, NaN in comparisons and in
 * fminf/fmaxf, conversions to integers and half. */
static void logic_float(float x, float y, float r[16])
{
    r[0] = x + y * 0.5f;
    r[1] = x / (y == 0.0f ? 1.0f : y);
    r[2] = roundf(x * 10.0f);
    r[3] = floorf(x);
    r[4] = ceilf(x);
    r[5] = fabsf(x);
    r[6] = fminf(x, y);
    r[7] = fmaxf(x, y);
    r[8] = copysignf(y, x);
    r[9] = fmaf(x, y, 1.0f);
    r[10] = sqrtf(fabsf(x));
    r[11] = (float)((x != y) + 2 * (x < y) + 4 * (x == y) + 8 * !x + 16 * (bool)y + 32 * (x >= y));
    r[12] = fabsf(x) < 1000.0f ? (float)(int)(x * 3.0f) : 0.0f;
    r[13] = fabsf(x) < 1000.0f ? (float)(uint)(fabsf(x) * 7.0f) : 0.0f;
    half h = (half)x;
    r[14] = (float)h;
    r[15] = x > y ? x - y : y - x;
}
