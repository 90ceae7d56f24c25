"""launch_py.py BUNDLE KERNEL — launch_c.c's loop through the kcrt package:
host time per k.launch(...) with Buffers, median of 9 rounds of 1000."""
import sys
import time

import kcrt

N, LAUNCHES, ROUNDS = 256, 1000, 9
ctx = kcrt.open()
k = ctx.load(sys.argv[1]).kernel(sys.argv[2])
x, y = ctx.buffer(N * 4), ctx.buffer(N * 4)
per = []
for r in range(-1, ROUNDS):
    t0 = time.perf_counter()
    for i in range(LAUNCHES):
        k.launch(N, 1.0, x, y)
        if i % 100 == 99:
            ctx.finish()
    ctx.finish()
    if r >= 0:
        per.append((time.perf_counter() - t0) * 1e6 / LAUNCHES)
per.sort()
print("%.3f" % per[ROUNDS // 2])
