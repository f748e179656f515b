"""Benchmark: the Numba head-sum kernel of sim.measures against its NumPy reference.

Both add up, for H random heads, the softmax-weighted mean of the tokens seen from every
token (``_head_sum`` vs ``_head_sum_numpy``: the same numbers to rounding). The NumPy version
builds the (H*n, n) score matrix with BLAS and ``np.exp``; the kernel loops per head and token
with the engine's vectorised exp and no large temporaries. Best of several repeats, taken in
turns; compilation excluded. Entries/s = H * n * n / time.

Run:  .venv/bin/python bench/measures.py [--quick]
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from sim import measures as M  # noqa: E402


def _best(fn, repeats):
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main(quick: bool = False) -> None:
    M.warm()
    repeats = 3 if quick else 7
    rng = np.random.default_rng(0)
    print(f"{'n':>5} {'d':>2} {'H':>6} {'numpy ms':>10} {'kernel ms':>10} {'ratio':>7} {'kernel entries/s':>17}")
    for n, d, H in [(16, 3, 1024), (32, 3, 1024), (32, 2, 1024), (64, 3, 512), (128, 4, 128)]:
        Z, _ = M._head_tokens(n, d, 1)
        A = rng.standard_normal((H, d, d)) / np.sqrt(d)
        acc = np.zeros((n, d))
        M._head_sum(Z, A[:2], 1.0, acc)
        t_np = _best(lambda: M._head_sum_numpy(Z, A, 1.0, np.zeros((n, d))), repeats)
        t_nb = _best(lambda: M._head_sum(Z, A, 1.0, np.zeros((n, d))), repeats)
        print(f"{n:5d} {d:2d} {H:6d} {1e3 * t_np:10.2f} {1e3 * t_nb:10.2f} {t_np / t_nb:7.1f} {H * n * n / t_nb:17.3g}")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
