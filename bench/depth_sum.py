"""Benchmark of the Monte Carlo in sim.depth_sum (not a test).

Baseline: the plain-NumPy references, measured in the same run. Both paths draw the same
numbers from ``np.random.default_rng`` (the Numba kernels take the Generator and draw inside
their loops; the references draw whole arrays), so the draws are included on both sides.

1. Gaussian sums: ``unit_sums`` (per sample the common normal and the sum of L normals),
   Numba kernel vs NumPy reference; and ``sums_from_units`` (rescaling those draws).
2. Residual network: ``_residual_norms`` (z_{l+1} = (I + L^-a W_l) z_l, every weight drawn),
   Numba kernel vs NumPy reference (batched matmul).
   And the vector sampler (``_residual_norms_vector``: W_l z_l drawn through its law, same
   distribution, N instead of N^2 normals a layer) against its reference and the matrix kernel.
3. The moments behind the path and covariance panels (``path_moments``, ``column_moments``),
   kernel vs reference, and the cost of rescaling them for a new alpha, sigma, mu, rho.
4. What the page pays for one slider move that the draws do not depend on (alpha, sigma, mu,
   rho): rescaling cached draws at the eleven depths 1 … 1024 of the variance panel.

Run: ``.venv/bin/python bench/depth_sum.py``. Times are CPU seconds of this process (other work
on the machine inflates wall time, not these); min / median of the repeats.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from sim import depth_sum as ds  # noqa: E402


def _sums_drawn_whole(alpha, L, sigma, trials, seed, rho, mu):
    """S_L with every piece drawn as a whole array (rho >= 0), in the draw order of sim.depth_sum:
    what the page computed before it kept the cached draws (the bench's own copy of the pieces)."""
    rng = np.random.default_rng(seed)
    rows, s, out, done = ds._block_rows(L), float(L) ** (-alpha), [], 0
    while done < trials:
        r = min(rows, trials - done)
        common, e = rng.standard_normal(r), rng.standard_normal((r, L))
        x = np.sqrt(1.0 - rho) * e + np.sqrt(rho) * common[:, None]
        out.append(((sigma * x + mu) * s).sum(axis=1))
        done += r
    return np.concatenate(out)


def best(fn, repeat=5):
    ts = []
    for _ in range(repeat):
        t = time.process_time()
        fn()
        ts.append(time.process_time() - t)
    return min(ts), float(np.median(ts))


def numba_and_ref(fn, *args, repeat: int = 3):
    """``best`` of ``fn(*args, True)`` (the Numba kernel) and of ``fn(*args, False)`` (its NumPy reference)."""
    return best(lambda: fn(*args, True), repeat), best(lambda: fn(*args, False), repeat)


#: (depth L, width N, trials) of the residual-network tables
RESIDUAL_SIZES = [(64, 32, 305), (32, 32, 256), (16, 128, 64), (256, 8, 500), (8, 512, 8)]


def _fmt(t):
    return f"{t[0] * 1e3:7.1f}/{t[1] * 1e3:7.1f}"


def _header(*cols) -> None:
    """A table's header: names and column widths, alternating (each name right-aligned)."""
    print(" ".join(f"{name:>{width}}" for name, width in zip(cols[::2], cols[1::2])))


def sums_table():
    print("Gaussian sums: unit_sums(L, trials, seed); ms CPU, min / median of 5")
    _header("L", 5, "trials", 7, "normals", 10, "numba", 15, "numpy ref", 15, "ref/numba", 10, "ns/normal", 10)
    for L, T in [(1, 4000), (64, 4000), (512, 4000), (1024, 3906), (4096, 2000)]:
        nb = best(lambda: ds.unit_sums(L, T, 1, use_numba=True))
        rf = best(lambda: ds.unit_sums(L, T, 1, use_numba=False))
        n = T * (L + 1)
        print(f"{L:>5} {T:>7} {n:>10.2e} {_fmt(nb)} {_fmt(rf)} {rf[0] / nb[0]:10.2f} {nb[0] / n * 1e9:10.2f}")


def moments_table():
    print("\nPath and covariance moments (what the page caches per depth/seed); ms CPU, min / median of 3")
    _header("function", 16, "L", 5, "trials", 7, "numba", 15, "numpy ref", 15, "ref/numba", 10)
    for L, T in [(64, 2000), (512, 2000)]:
        ks = np.unique(np.round(np.logspace(0, np.log10(L), 14)).astype(int))
        nb = best(lambda: ds.path_moments(L, T, 1, ks, 24, use_numba=True), 3)
        rf = best(lambda: ds.path_moments(L, T, 1, ks, 24, use_numba=False), 3)
        print(f"{'path_moments':>16} {L:>5} {T:>7} {_fmt(nb)} {_fmt(rf)} {rf[0] / nb[0]:10.2f}")
    for L, T in [(64, 4000), (128, 2441)]:
        nb = best(lambda: ds.column_moments(L, T, 1, use_numba=True), 3)
        rf = best(lambda: ds.column_moments(L, T, 1, use_numba=False), 3)
        print(f"{'column_moments':>16} {L:>5} {T:>7} {_fmt(nb)} {_fmt(rf)} {rf[0] / nb[0]:10.2f}")
    m = ds.path_moments(64, 2000, 1, np.arange(1, 65, 5), 24)
    cm = ds.column_moments(64, 4000, 1)
    pr = best(lambda: ds.paths_from_moments(0.35, 1.3, m, 0.1, 0.2), 5)
    cr = best(lambda: ds.covariance_from_moments(0.35, 1.3, cm, 0.1), 5)
    print(f"  rescaling for a new alpha/sigma/mu/rho: paths {_fmt(pr)}, covariance {_fmt(cr)}")


def residual_table():
    print("\nResidual network: _residual_norms (draws included); ms CPU, min / median of 3")
    _header("L", 5, "N", 5, "trials", 7, "normals", 10, "numba", 15, "numpy ref", 15, "ref/numba", 10, "ns/normal", 10)
    for L, N, T in RESIDUAL_SIZES:
        nb, rf = numba_and_ref(ds._residual_norms, 0.5, L, N, T, 1)
        n = T * (L * N * N + N)
        print(f"{L:>5} {N:>5} {T:>7} {n:>10.2e} {_fmt(nb)} {_fmt(rf)} {rf[0] / nb[0]:10.2f} {nb[0] / n * 1e9:10.2f}")


def residual_vector_table():
    print("\nResidual network, vector sampler (W z drawn as |z|/sqrt(N) g: same law, N normals a layer):")
    print("_residual_norms_vector vs its NumPy reference and vs the matrix kernel; ms CPU, min / median of 3")
    _header(
        "L", 5, "N", 5, "trials", 7, "vector", 15, "numpy ref", 15, "ref/vector", 10, "matrix", 15, "matrix/vector", 13
    )
    for L, N, T in RESIDUAL_SIZES:
        vb, vr = numba_and_ref(ds._residual_norms_vector, 0.5, L, N, T, 1)
        mb = best(lambda: ds._residual_norms(0.5, L, N, T, 1, True), 3)
        print(f"{L:>5} {N:>5} {T:>7} {_fmt(vb)} {_fmt(vr)} {vr[0] / vb[0]:10.2f} {_fmt(mb)} {mb[0] / vb[0]:13.1f}")


def rescale_table():
    print("\nVariance panel at L = 1 … 1024, trials = 4000: draw vs rescale cached draws; ms CPU")
    Ls = 2 ** np.arange(11)
    trials = [int(min(4000, max(200, 4_000_000 // L))) for L in Ls]
    draw = best(lambda: [ds.unit_sums(int(L), n, i) for i, (L, n) in enumerate(zip(Ls, trials))], 3)
    units = [ds.unit_sums(int(L), n, i) for i, (L, n) in enumerate(zip(Ls, trials))]
    res = best(lambda: [ds.sums_from_units(0.35, int(L), 1.3, c, E, 0.1, 0.2) for L, (c, E) in zip(Ls, units)], 5)
    old = best(
        lambda: [_sums_drawn_whole(0.35, int(L), 1.3, n, i, 0.1, 0.2) for i, (L, n) in enumerate(zip(Ls, trials))], 3
    )
    print(f"{'draw (numba)':>22} {_fmt(draw)}")
    print(f"{'rescale cached draws':>22} {_fmt(res)}")
    print(f"{'pieces drawn (numpy)':>22} {_fmt(old)}   (the page before: every move redrew them)")


if __name__ == "__main__":
    t = time.perf_counter()
    ds.warm()  # compile / load the cache
    print(f"warm() (compile or cache load): {time.perf_counter() - t:.2f} s\n")
    sums_table()
    moments_table()
    residual_table()
    residual_vector_table()
    rescale_table()
