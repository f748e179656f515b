"""Benchmark: pseudospectrum grid, Numba kernel vs NumPy SVD reference.

Run with ``.venv/bin/python bench/nonnormal.py``. Prints, for several grid
sizes, the best-of-N wall time of :func:`sim.nonnormal.pseudospectrum` (closed
form 2×2 smallest singular value, Numba parallel over rows) and of
:func:`sim.nonnormal.pseudospectrum_reference` (batched ``np.linalg.svd``),
their ratio and the largest relative difference; then the Euler iterates of
:func:`sim.nonnormal.euler_flow` (compiled loop) against the plain Python loop
``x = step @ x`` it replaced. Not a test.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from numba import get_num_threads  # noqa: E402

from sim import nonnormal as nn  # noqa: E402
from _timing import best_time  # noqa: E402 - bench/ is on sys.path when run as a script

GRIDS = [(101, 101), (201, 201), (401, 401), (801, 801), (1601, 1601)]
M = 6.0


def main():
    A = nn.matrix(M)
    t0 = time.perf_counter()
    nn.pseudospectrum(A, [0.0], [0.0])
    warm = time.perf_counter() - t0
    print(
        f"pseudospectrum of A = [[-1, {M:g}], [0, -1]]; numba threads = {get_num_threads()}; "
        f"first call (compile or cache load) {warm * 1e3:.0f} ms"
    )
    print(
        f"{'grid':>11} {'points':>9} {'numba ms':>9} {'numpy svd ms':>13} {'speed-up':>9} "
        f"{'ns/point':>9} {'max rel diff':>13}"
    )
    for nx, ny in GRIDS:
        re = np.linspace(-4.0, 2.0, nx)
        im = np.linspace(-3.0, 3.0, ny)
        reps = 20 if nx * ny <= 200_000 else 3
        t_fast, fast = best_time(lambda: nn.pseudospectrum(A, re, im), reps)
        t_ref, ref = best_time(lambda: nn.pseudospectrum_reference(A, re, im), max(1, reps // 4))
        mask = ref > 1e-12
        rel = np.max(np.abs(fast[mask] - ref[mask]) / ref[mask])
        print(
            f"{nx:>5}x{ny:<5} {nx * ny:>9} {t_fast * 1e3:>9.2f} {t_ref * 1e3:>13.1f} "
            f"{t_ref / t_fast:>8.0f}x {t_fast / (nx * ny) * 1e9:>9.2f} {rel:>13.1e}"
        )


def euler_table():
    """euler_flow's compiled iterates vs the Python loop of 2x2 products (same arithmetic)."""
    x0 = np.array([0.3, 1.0])
    nn.euler_flow(3.0, 0.5, 1.0, x0)
    print(f"\n{'euler steps':>11} {'numba ms':>9} {'python ms':>10} {'speed-up':>9} {'max rel diff':>13}")
    for n in (10_000, 100_000, 1_000_000):
        delta = 1e4 / n
        step = np.eye(2) + delta * nn.matrix(3.0)

        def loop():
            out = np.empty((n + 1, 2))
            x = x0.copy()
            out[0] = x
            for k in range(1, n + 1):
                x = step @ x
                out[k] = x
            return out

        t_fast, fast = best_time(lambda: nn.euler_flow(3.0, delta, 1e4, x0)["euler"], 5)
        t_ref, ref = best_time(loop, 1)
        mask = np.abs(ref) > 1e-300
        rel = np.max(np.abs(fast[mask] - ref[mask]) / np.abs(ref[mask]))
        print(f"{n:>11} {t_fast * 1e3:>9.2f} {t_ref * 1e3:>10.1f} {t_ref / t_fast:>8.0f}x {rel:>13.1e}")


if __name__ == "__main__":
    main()
    euler_table()
