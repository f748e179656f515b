"""Benchmark: Euler–Maruyama OU path, Numba kernel vs the plain NumPy loop (same draws).

Run with ``.venv/bin/python bench/rotation.py``. Prints, for several path lengths, the best-of-N wall
time of :func:`sim.rotation.simulate_ou` (noise drawn in NumPy, the recursion in an ``@njit``
kernel) and of :func:`sim.rotation.simulate_ou_reference` (the same recursion as a Python loop of
2×2 NumPy products), their ratio and the largest difference. Not a test.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sim import rotation as R  # noqa: E402
from _timing import best_time  # noqa: E402 - bench/ is on sys.path when run as a script

H = np.diag([1.0, 4.0])
_c, _s = np.cos(0.5), np.sin(0.5)
_Q = np.array([[_c, -_s], [_s, _c]])
D = _Q @ np.diag([1.0, 0.1]) @ _Q.T
DT = 0.01


def main():
    t0 = time.perf_counter()
    R.warm()
    print(
        f"OU path, H = diag(1, 4), D turned by 0.5 rad, dt = {DT}; first call (compile or cache load) "
        f"{(time.perf_counter() - t0) * 1e3:.0f} ms"
    )
    print(f"{'steps':>9} {'numba ms':>9} {'numpy loop ms':>14} {'speed-up':>9} {'ns/step':>8} {'max diff':>9}")
    for steps in (10_000, 100_000, 400_000):
        t_fast, fast = best_time(lambda: R.simulate_ou(H, D, DT, steps, 0), 5)
        t_ref, ref = best_time(lambda: R.simulate_ou_reference(H, D, DT, steps, 0), 1 if steps > 10**5 else 2)
        print(
            f"{steps:>9d} {t_fast * 1e3:>9.2f} {t_ref * 1e3:>14.1f} {t_ref / t_fast:>8.0f}x "
            f"{t_fast / steps * 1e9:>8.1f} {np.abs(fast - ref).max():>9.1e}"
        )
    t_mc, _ = best_time(lambda: R.area_mc(H, D, 1000.0, DT, 0), 3)
    print(f"area_mc(T = 1000, dt = {DT}) = 1e5 steps incl. batch means: {t_mc * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
