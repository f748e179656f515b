"""Benchmark: the compiled attention engine against the plain NumPy layer map.

Both compute the same layers (SA, d = 3, general A and V, beta = 1, dt = 0.1) from
the same start; the NumPy map is ``sim.attention.simulate_reference`` (BLAS Gram
matrix + ``np.exp`` + BLAS products, one layer per Python iteration). Times are
the best of a few repeats after a warm-up call (compilation excluded).
Pair-steps/s = steps * n * n / time.

Run:  .venv/bin/python bench/engine.py [--quick]
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numba  # noqa: E402

from sim import attention as att  # noqa: E402


def best_time(fn, repeats):
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main(quick: bool = False) -> None:
    rng = np.random.default_rng(2024)
    d = 3
    A = rng.standard_normal((d, d))
    V = rng.standard_normal((d, d))
    pair_steps = 2e7 if quick else 1e8          # work per measurement, per size
    repeats = 2 if quick else 3
    print(f"numba {numba.__version__}, threads {numba.get_num_threads()}, "
          f"numpy {np.__version__}; SA, d={d}, general A and V, beta=1, dt=0.1")
    head = (f"{'n':>6} {'steps':>7} {'engine s':>10} {'numpy s':>10} {'ratio':>7} "
            f"{'engine pair-steps/s':>20} {'numpy pair-steps/s':>19} {'max |diff|':>11}")
    print(head)
    print("-" * len(head))
    for n in (32, 128, 1024, 2048):
        Z0 = rng.standard_normal((n, d))
        steps = max(4, int(pair_steps / (n * n)))
        args = (Z0, 1.0, 0.1, steps, A, V, "SA")
        fast = att.simulate(*args, record_every=steps)       # warm-up (and compile)
        ref = att.simulate_reference(*args, record_every=steps)
        t_fast = best_time(lambda: att.simulate(*args, record_every=steps), repeats)
        t_ref = best_time(lambda: att.simulate_reference(*args, record_every=steps), repeats)
        work = steps * n * n
        print(f"{n:>6} {steps:>7} {t_fast:>10.4f} {t_ref:>10.4f} {t_ref / t_fast:>7.2f} "
              f"{work / t_fast:>20.3e} {work / t_ref:>19.3e} {np.abs(fast - ref).max():>11.1e}")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
