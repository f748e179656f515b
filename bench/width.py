"""Benchmark: RK4 training of the width page, Numba kernel vs NumPy reference.

Run with ``.venv/bin/python bench/width.py``. Prints, for several widths N, the best-of-N wall time
of :func:`sim.width.train_from` with ``engine="numba"`` (one fused loop per run) and with
``engine="numpy"`` (the reference: vectorised over units, one Python iteration per RK4 step), their
ratio and the largest difference of the recorded residuals. Not a test.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sim import width as W  # noqa: E402
from _timing import best_time  # noqa: E402 - bench/ is on sys.path when run as a script

WIDTHS = [16, 64, 256, 1024]
T, DT, DATA = 4.0, 0.01, "three_points"


def main():
    xs, ys = W.dataset(DATA)
    t0 = time.perf_counter()
    W.warm()
    print(
        f"train_from, data '{DATA}' (M = {xs.size}), T = {T}, dt = {DT}, lazy scaling; "
        f"first call (compile or cache load) {(time.perf_counter() - t0) * 1e3:.0f} ms"
    )
    print(f"{'N':>6} {'steps':>6} {'numba ms':>9} {'numpy ms':>9} {'speed-up':>9} {'max |diff|':>11}")
    for N in WIDTHS:
        w, a = W.paired_init(N, 0)
        reps = 5 if N <= 256 else 2
        tf, fast = best_time(lambda: W.train_from(w, a, "lazy", T, DT, xs, ys), reps)
        tr, ref = best_time(lambda: W.train_from(w, a, "lazy", T, DT, xs, ys, engine="numpy"), reps)
        diff = np.max(np.abs(fast["residual"] - ref["residual"]))
        print(f"{N:>6} {fast['steps']:>6} {tf * 1e3:>9.1f} {tr * 1e3:>9.1f} {tr / tf:>8.1f}x {diff:>11.1e}")


if __name__ == "__main__":
    main()
