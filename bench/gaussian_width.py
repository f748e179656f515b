"""What each Monte-Carlo path of sim.gaussian_width costs, against the NumPy reference.

Run:  .venv/bin/python bench/gaussian_width.py

For each set family and size, times (best of 3, after one warm-up call):
  numpy      the reference: rng.standard_normal block, BLAS projection on the explicit
             basis (cost samples*D*k), NumPy reduction
  numba x1   same normals drawn inside one nogil Numba kernel, fused with the three
             Householder reflections that orient the set and with the reduction
             (cost samples*D*7, whatever k or M), one thread
  numba xT   the same on T = os.cpu_count() threads (the default path)
and checks that both paths return the same sup values (max |difference|).
Also times the quadratures behind exact("directions") and tail_exact.
Not a test: numbers depend on the machine.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from sim import gaussian_width as gw  # noqa: E402


def best(fn, reps=3):
    fn()  # warm-up (compilation, caches)
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


CASES = [
    ("adaptive", 200_000, dict(D=100)),
    ("adaptive", 20_000, dict(D=2_000)),
    ("hypercube", 200_000, dict(D=100)),
    ("hypercube", 1_000_000, dict(D=10)),
    ("subspace", 100_000, dict(D=200, k=20)),
    ("subspace", 10_000, dict(D=1_000, k=64)),
    ("subspace", 2_000, dict(D=1_000, k=1_000)),
    ("circle", 200_000, dict(D=100)),
    ("directions", 50_000, dict(D=200, M=100, correlation=0.3)),
    ("directions", 2_000, dict(D=1_000, M=1_000, correlation=0.9)),
]


def main():
    T = os.cpu_count() or 1
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"cpu_count = {T}; load average {load:.2f} (other work skews BLAS timings); "
        f"times in ms (best of 3); ratio = numpy / path"
    )
    head = (
        f"{'kind':<11}{'params':<30}{'samples':>9}{'numpy':>9}{'numba x1':>10}"
        f"{'ratio':>7}{'numba x' + str(T):>10}{'ratio':>7}{'ns/normal':>10}{'max|diff|':>11}"
    )
    print(head)
    print("-" * len(head))
    for kind, n, p in CASES:
        ref = gw.sup_samples(kind, n, 1, method="numpy", **p)
        fast = gw.sup_samples(kind, n, 1, **p)
        t_np = best(lambda: gw.sup_samples(kind, n, 1, method="numpy", **p))
        t_1 = best(lambda: gw.sup_samples(kind, n, 1, threads=1, **p))
        t_T = best(lambda: gw.sup_samples(kind, n, 1, threads=T, **p))
        ps = ", ".join(f"{k}={v}" for k, v in p.items())
        print(
            f"{kind:<11}{ps:<30}{n:>9}{t_np * 1e3:>9.1f}{t_1 * 1e3:>10.1f}{t_np / t_1:>7.2f}"
            f"{t_T * 1e3:>10.1f}{t_np / t_T:>7.2f}{t_T / (n * p['D']) * 1e9:>10.2f}"
            f"{np.max(np.abs(ref - fast)):>11.1e}"
        )
    print()
    print("quadratures (exact values; no NumPy alternative, times only):")
    for M, rho in [(100, 0.0), (100, 0.3), (10_000, 0.9)]:
        t = best(lambda: gw.exact("directions", D=M, M=M, correlation=rho))
        r = np.linspace(0.0, 6.0, 200)
        t2 = best(lambda: gw.tail_exact(r, M, rho))
        print(f"  M={M:<6} rho={rho:<4}  exact {t * 1e3:7.1f} ms   tail_exact(200 r) {t2 * 1e3:7.1f} ms")


if __name__ == "__main__":
    main()
