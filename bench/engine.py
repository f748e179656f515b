"""Benchmark: the compiled attention engine against the plain NumPy layer map.

Both compute the same layers (SA, d = 3, general A and V, beta = 1, dt = 0.1) from the
same start. The baseline is ``sim.attention.simulate_reference``: one layer per Python
iteration with a BLAS Gram matrix, ``np.exp`` and BLAS products. "engine" is the public
``simulate`` (parallel over tokens from ``PARALLEL_MIN_N`` tokens on); "1 thread" is its
serial kernel alone. Every figure is the best of several repeats, taken in turns so that
load from other processes hits all columns alike; compilation is excluded.
Pair-steps/s = steps * n * n / time.

Run:  .venv/bin/python bench/engine.py [--quick]

NumPy's BLAS keeps its default threads. On a machine shared with other work its spinning
threads slow the baseline a lot (which flatters the ratio); ``OPENBLAS_NUM_THREADS=1`` gives
a steadier, more conservative baseline for the Gram products of width d = 3.
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numba  # noqa: E402

from sim import attention as att  # noqa: E402


def main(quick: bool = False) -> None:
    rng = np.random.default_rng(2024)
    d = 3
    A = rng.standard_normal((d, d))
    V = rng.standard_normal((d, d))
    pair_steps = 1e7 if quick else 4e7          # work per measurement, per size
    repeats = 3 if quick else 7
    att.warm()                                  # compile or load every kernel first
    print(f"numba {numba.__version__} (threading layer {numba.threading_layer()}), "
          f"threads {numba.get_num_threads()}, numpy {np.__version__}, cores {os.cpu_count()}, "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"SA, d={d}, general A and V, beta=1, dt=0.1; best of {repeats}")
    head = (f"{'n':>6} {'steps':>6} {'engine ms':>10} {'1 thread ms':>12} {'numpy ms':>10} "
            f"{'ratio':>7} {'engine pair-steps/s':>20} {'numpy pair-steps/s':>19} {'max |diff|':>11}")
    print(head)
    print("-" * len(head))
    for n in (32, 128, 1024, 2048):
        Z0 = rng.standard_normal((n, d))
        Zn = Z0 / np.linalg.norm(Z0, axis=1, keepdims=True)
        steps = max(4, int(pair_steps / (n * n)))
        args = (Z0, 1.0, 0.1, steps, A, V, "SA")
        out1 = np.empty((2, n, d))

        def engine():
            return att.simulate(*args, record_every=steps)

        def serial():
            att._run_serial(Zn, 1.0, 0.1, steps, A, V, False, steps, out1)

        def numpy_map():
            return att.simulate_reference(*args, record_every=steps)

        fast, ref = engine(), numpy_map()       # warm-up (and compile)
        serial()
        best = {"engine": np.inf, "serial": np.inf, "numpy": np.inf}
        for _ in range(repeats):
            for name, fn in (("engine", engine), ("serial", serial), ("numpy", numpy_map)):
                t0 = time.perf_counter()
                fn()
                best[name] = min(best[name], time.perf_counter() - t0)
        work = steps * n * n
        print(f"{n:>6} {steps:>6} {best['engine'] * 1e3:>10.2f} {best['serial'] * 1e3:>12.2f} "
              f"{best['numpy'] * 1e3:>10.2f} {best['numpy'] / best['engine']:>7.2f} "
              f"{work / best['engine']:>20.3e} {work / best['numpy']:>19.3e} "
              f"{np.abs(fast - ref).max():>11.1e}")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
