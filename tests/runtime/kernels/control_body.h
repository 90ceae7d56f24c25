/* control_body.h — integer functions with every control-flow form the
 * language has. Shared by control.kc (compiled by kc) and the test
 * (compiled by the C compiler), so the reference is the same source. */

/* loops with break and continue, nested ifs, a while and a do/while */
static int ctl_loops(int v)
{
    int acc = 0;
    for (int i = 0; i < 40; i++) {
        if (i % 3 == 0)
            continue;
        if ((v + i) % 17 == 0)
            break;
        if (i < 10) {
            if (v & 1)
                acc += i;
            else
                acc -= i;
        } else if (i < 20) {
            acc ^= v + i;
        } else {
            acc += (v >> 2) & i;
        }
    }
    int w = v & 63;
    while (w > 3) {
        w = w / 2 + (w & 1);
        acc += w;
        if (acc > 100000)
            break;
    }
    int k = 0;
    do {
        acc += k * v;
        k++;
    } while (k < (v & 3));
    return acc;
}

/* switch with fallthrough, default in the middle, nested switch */
static int ctl_switch(int v)
{
    int r = 0;
    switch (v & 7) {
    case 0:
        r = 1;
        /* falls through */
    case 1:
        r += 10;
        break;
    default:
        r = -v;
        break;
    case 4:
        switch ((v >> 3) & 1) {
        case 0: r = 100; break;
        case 1: r = 200; break;
        }
        /* falls through */
    case 5:
        r += 5;
        /* falls through */
    case 6:
        r *= 2;
        break;
    }
    return r;
}

/* early returns from nested loops */
static int ctl_find(int v)
{
    for (int i = 1; i < 12; i++) {
        for (int j = 1; j < 12; j++) {
            if (i * j == (v & 127))
                return i * 100 + j;
            if (i * j > 130)
                return -i;
        }
    }
    return v < 0 ? -1 : 7;
}

/* the conditional operator and short-circuit logic */
static int ctl_logic(int v)
{
    int a = v > 10 && v % 2 == 0 ? v / 2 : v * 3;
    int b = (v < -5 || v > 500) ? 1 : 0;
    int c = !(v & 4) ? a + b : a - b;
    return c;
}
