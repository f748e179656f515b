"""Benchmark of the residual-network Monte Carlo in sim.depth_sum (not a test).

Baseline: the plain-NumPy reference (batched matmul) measured in the same run.
Two tables:
1. kernel only: one call of the Numba kernel vs the NumPy reference on the same
   pre-drawn weight block (no random number generation);
2. whole Monte Carlo: ``_residual_norms`` with each path, random draws included
   (this is what the page pays; both paths draw the same numbers).

Run: ``.venv/bin/python bench/depth_sum.py``. On a busy 2-core machine the ``omp``
threading layer's spinning barrier costs ~8-16 ms per parallel region; compare with
``OMP_WAIT_POLICY=PASSIVE`` or ``NUMBA_THREADING_LAYER=workqueue`` in the environment.
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from sim import depth_sum as ds  # noqa: E402


def best(fn, repeat=5):
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return min(ts), float(np.median(ts))


def kernel_table():
    print("kernel only (one block, pre-drawn weights); times are min / median of 5, ms")
    print(f"{'T':>5} {'lb':>4} {'N':>5} {'numba':>15} {'numpy ref':>15} {'ref/numba':>10}")
    rng = np.random.default_rng(0)
    for T, lb, N in [(64, 32, 16), (64, 32, 32), (16, 16, 128), (4, 2, 512)]:
        W = rng.standard_normal((T, lb, N, N))
        z0 = rng.standard_normal((T, N))
        norms = np.empty((T, lb + 1))
        res = {}
        for name, fn in (("numba", ds._residual_kernel), ("numpy", ds._residual_reference)):
            fn(z0.copy(), W, 0.1, norms, 0)

            def go(fn=fn):
                fn(z0.copy(), W, 0.1, norms, 0)
            res[name] = best(go)
        nb, rf = res["numba"], res["numpy"]
        print(f"{T:>5} {lb:>4} {N:>5} {nb[0]*1e3:7.2f}/{nb[1]*1e3:7.2f} "
              f"{rf[0]*1e3:7.2f}/{rf[1]*1e3:7.2f} {rf[0]/nb[0]:10.2f}")


def mc_table():
    print("\nwhole Monte Carlo (draws included); times are min / median of 3, ms")
    print(f"{'L':>5} {'N':>5} {'trials':>7} {'normals':>10} {'numba':>15} {'numpy ref':>15} "
          f"{'ref/numba':>10} {'draw only':>10}")
    for L, N, T in [(32, 32, 256), (64, 16, 512), (16, 128, 64), (256, 8, 500), (8, 512, 8)]:
        res = {}
        for name, flag in (("numba", True), ("numpy", False)):
            res[name] = best(lambda flag=flag: ds._residual_norms(0.5, L, N, T, 1, flag), 3)
        draws = T * (L * N * N + N)
        rng = np.random.default_rng(1)
        dr = best(lambda: rng.standard_normal(draws), 3)
        nb, rf = res["numba"], res["numpy"]
        print(f"{L:>5} {N:>5} {T:>7} {draws:>10.2e} {nb[0]*1e3:7.1f}/{nb[1]*1e3:7.1f} "
              f"{rf[0]*1e3:7.1f}/{rf[1]*1e3:7.1f} {rf[0]/nb[0]:10.2f} {dr[0]*1e3:10.1f}")


if __name__ == "__main__":
    t = time.perf_counter()
    ds._residual_norms(0.5, 2, 2, 2, 0, True)  # compile / load the cache
    print(f"first kernel call (compile or cache load): {time.perf_counter() - t:.2f} s")
    import numba
    print(f"numba threads: {numba.get_num_threads()}, threading layer: "
          f"{numba.threading_layer()}\n")
    kernel_table()
    mc_table()
