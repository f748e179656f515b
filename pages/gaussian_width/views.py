"""Gaussian width: cached Monte Carlo for pages/gaussian_width/page.py (its figures: figures.py).

What it computes: docs/constructions.md, section “Gaussian width”.
"""

from __future__ import annotations

import math
import time

import numpy as np

from sim import gaussian_width as gw
from ui.kit.compute import cached, sub_seed

GRID_POINTS = 9  # Monte-Carlo points per sweep (plus the current value)
POINT_BUDGET = 20_000_000  # work (samples * cost per draw) per sweep point at most (samples lowered)
FOCUS_BUDGET = 200_000_000  # the same for the Monte Carlo at the chosen values (histogram, tail)
MIN_POINT_SAMPLES = 200
HIST_BINS = 50
D_SWEEP_MAX = 1024  # the overview and the D-families sweep D = 1, 2, 4, ..., 1024
EXACT_DIRECTIONS_POINTS = 16  # quadratures on the exact line of E max|<g,u_i>| when rho > 0
TAIL_MIN_COUNT = 5  # empirical tail points need at least this many draws above r
LOG_TICKS = [0.5, 1, 2, 5, 10, 20, 50]  # y ticks of the log-scaled width axes
SIGMA_BAR = 2.0  # error bars: mean ± 2 standard errors (≈ 95 %)


def _grid(lo: int, hi: int, n: int) -> np.ndarray:
    return np.unique(np.round(np.geomspace(lo, hi, n)).astype(int)) if hi > lo else np.array([lo])


def random_layout(family: str, D: int, M: int) -> bool:
    """More fixed directions than dimensions: M independent uniform random unit directions
    (fixed by the seed); M <= D keeps the equicorrelated construction (orthonormal at ρ = 0)."""
    return family == "directions" and M > D


def max_M(D: int) -> int:
    """The largest M the page computes at dimension D (the M x D matrix of directions, D*M <= MAX_BASIS)."""
    return int(gw.MAX_BASIS // D)


def _params(family: str, D: int, k: int, M: int, rho: float) -> dict:
    if family == "subspace":
        return {"D": D, "k": k}
    if family == "directions":
        if M > D:
            return {"D": D, "M": M, "layout": "random"}
        return {"D": D, "M": M, "correlation": rho}
    return {"D": D}


def _cost_per_draw(family: str, p: dict) -> int:
    """Work per draw of the Numba path: D normals, plus 2 passes per reflection for tilted sets;
    for random directions the projection on the M x D matrix (D*M)."""
    D = p["D"]
    if p.get("layout") == "random":
        return D * p["M"]
    return D * (1 + 2 * gw.REFLECTIONS) if family in ("subspace", "directions", "circle") else D


def _point_samples(family: str, p: dict, samples: int, budget: int = POINT_BUDGET) -> int:
    """Samples lowered so that the work stays within ``budget``, samples * D within the sim's cap,
    and for random directions samples * D * M within gw.MAX_FLOPS."""
    D = p["D"]
    n = min(samples, budget // _cost_per_draw(family, p), gw.MAX_DRAWS // D)
    if p.get("layout") == "random":
        n = min(n, gw.MAX_FLOPS // (D * p["M"]))
    return int(max(min(MIN_POINT_SAMPLES, samples), n))


def _exact(family: str, p: dict, seed: int):
    """The exact width, or None where there is none (random directions in D >= 3: Monte Carlo only)."""
    if p.get("layout") == "random":
        if p["D"] > 2:
            return None
        return gw.exact("directions", vectors=gw.random_directions(p["M"], p["D"], seed))
    return gw.exact(family, **p)


def _mc(family: str, p: dict, samples: int, seed: int) -> tuple[float, float, int]:
    n = _point_samples(family, p, samples)
    m, se = gw.monte_carlo(family, n, seed, **p)
    return m, se, n


def focus_args(family, D, k, M, rho, samples, seed) -> tuple:
    """The arguments of :func:`focus`, with the ones this family ignores set to neutral values."""
    return (
        family,
        D,
        k if family == "subspace" else 0,
        M if family == "directions" else 0,
        rho if family == "directions" else 0.0,
        samples,
        seed,
    )


def sweep_args(family, D, rho, samples, seed, M=0) -> tuple:
    """The arguments of :func:`sweep`; for directions with M > D the sweep runs on to M (random)."""
    return (
        family,
        D if family in ("subspace", "directions") else 0,
        rho if family == "directions" else 0.0,
        samples,
        seed,
        M if random_layout(family, D, M) else 0,
    )


# --------------------------------------------------------------------------- cached compute
@cached
def focus(family: str, D: int, k: int, M: int, rho: float, samples: int, seed: int) -> dict:
    """Monte Carlo at the chosen values: mean, s.e., histogram, exact value, bounds, density."""
    p = _params(family, D, k, M, rho)
    n = _point_samples(family, p, samples, FOCUS_BUDGET)
    t0 = time.perf_counter()
    v = gw.sup_samples(family, n, seed, **p)
    ms = 1e3 * (time.perf_counter() - t0)
    w = _exact(family, p, seed)
    lo, hi = gw.bound(family, **p)
    mean, se = float(v.mean()), float(v.std(ddof=1) / math.sqrt(v.size))
    a, b = float(v.min()), float(v.max())
    pad = 0.05 * (b - a + 1e-9)
    counts, edges = np.histogram(v, bins=HIST_BINS, range=(max(0.0, a - pad), b + pad))
    grid = np.linspace(edges[0], edges[-1], 300)
    dens = None if family == "hypercube" or p.get("layout") == "random" else gw.sup_density(family, grid, **p)
    return {
        "mean": mean,
        "se": se,
        "n": v.size,
        "ms": ms,
        "exact": w,
        "lo": lo,
        "hi": hi,
        "edges": edges,
        "hist": counts / (v.size * np.diff(edges)),
        "grid": grid,
        "dens": dens,
    }


@cached
def sweep(family: str, D: int, rho: float, samples: int, seed: int, m_top: int = 0) -> dict:
    """Width against the family's own variable (k or M up to D; or D itself): exact line,
    bounds, MC points with s.e.  Does not depend on the current k, M (or D for the D-families),
    so moving that slider only moves the highlighted point, computed by :func:`focus`."""
    if family == "subspace":
        var = "k"
        xs_mc = np.unique(np.round(np.linspace(1, D, GRID_POINTS)).astype(int))
        xs = np.arange(1, D + 1) if D <= 300 else np.unique(np.linspace(1, D, 300).round().astype(int))
        pars = [{"D": D, "k": int(x)} for x in xs]
        mc_pars = [{"D": D, "k": int(x)} for x in xs_mc]
    elif family == "directions":
        var = "M"
        xs_mc = _grid(1, D, GRID_POINTS)
        xs = _grid(1, D, EXACT_DIRECTIONS_POINTS if 0.0 < rho < 1.0 else 200)
        pars = [{"D": D, "M": int(x), "correlation": rho} for x in xs]
        mc_pars = [{"D": D, "M": int(x), "correlation": rho} for x in xs_mc]
    else:
        var = "D"
        d0 = 2 if family == "circle" else 1
        xs_mc = 2 ** np.arange(int(math.log2(d0)), int(math.log2(D_SWEEP_MAX)) + 1)
        xs = _grid(d0, D_SWEEP_MAX, 200)
        pars = [{"D": int(x)} for x in xs]
        mc_pars = [{"D": int(x)} for x in xs_mc]
    exact = np.array([gw.exact(family, **q) for q in pars])
    bounds = np.array([gw.bound(family, **q) for q in pars])
    if m_top > D:  # beyond M = D: random directions, Monte Carlo only (the bounds hold for any set)
        xr = _grid(D + 1, m_top, GRID_POINTS)
        xr_fine = _grid(D + 1, m_top, 100)
        mc_pars = mc_pars + [{"D": D, "M": int(x), "layout": "random"} for x in xr]
        xs_mc = np.concatenate([xs_mc, xr])
        bounds = np.vstack([bounds, [gw.bound("directions", D=D, M=int(x), layout="random") for x in xr_fine]])
        xs = np.concatenate([xs, xr_fine])
        exact = np.concatenate([exact, np.full(xr_fine.size, np.nan)])
    r = np.array([_mc(family, q, samples, sub_seed(seed, 1, int(x))) for x, q in zip(xs_mc, mc_pars)])
    out = {
        "var": var,
        "x": xs,
        "exact": exact,
        "lo": bounds[:, 0],
        "hi": bounds[:, 1],
        "x_mc": xs_mc,
        "mc": r[:, 0],
        "se": r[:, 1],
        "n": r[:, 2],
    }
    if family == "hypercube":  # the bound from counting 2^(D-1) antipodal pairs of vertices
        out["count"] = np.sqrt(2.0 * xs * math.log(2.0))
    return out


@cached
def overview(k: int, samples: int, seed: int) -> dict:
    """Width against D for the whole sphere (= adaptive direction), cube vertices, a k-subspace
    and one fixed direction (M = 1)."""
    xs = _grid(1, D_SWEEP_MAX, 200)
    xs_mc = 2 ** np.arange(0, int(math.log2(D_SWEEP_MAX)) + 1)
    out = {"x": xs, "x_mc": xs_mc}
    specs = {
        "adaptive": lambda d: {"D": d},
        "hypercube": lambda d: {"D": d},
        "subspace": lambda d: {"D": d, "k": k},
        "fixed": lambda d: {"D": d, "M": 1},
    }
    for j, (name, mk) in enumerate(specs.items()):
        kind = "directions" if name == "fixed" else name
        ok = xs >= (k if name == "subspace" else 1)
        out[name] = (xs[ok], np.array([gw.exact(kind, **mk(int(d))) for d in xs[ok]]))
        okm = xs_mc >= (k if name == "subspace" else 1)
        r = np.array([_mc(kind, mk(int(d)), samples, sub_seed(seed, 2, j, int(d))) for d in xs_mc[okm]])
        out[name + "_mc"] = (xs_mc[okm], r[:, 0], r[:, 1]) if r.size else (xs_mc[:0], xs_mc[:0], xs_mc[:0])
    out["fixed_bound"] = gw.max_abs_bound(1)
    return out


@cached
def tail(D: int, M: int, rho: float, samples: int, seed: int) -> dict:
    """Empirical P(max_i |<g,u_i>| >= r) against the exact tail and the union bound 2M e^{-r^2/2}."""
    p = _params("directions", D, 0, M, rho)
    v = gw.sup_samples("directions", _point_samples("directions", p, samples, FOCUS_BUDGET), seed, **p)
    r_max = max(float(v.max()), gw.max_abs_bound(M) + 1.0)
    r = np.linspace(0.0, r_max, 240)
    r_mc = np.linspace(0.0, r_max, 48)
    emp = gw.empirical_tail(v, r_mc)
    exact = None if p.get("layout") == "random" else gw.tail_exact(r, M, rho)  # random set: no exact law
    return {
        "r": r,
        "exact": exact,
        "bound": gw.tail_bound(r, M),
        "r_mc": r_mc,
        "emp": emp,
        "se": np.sqrt(emp * (1 - emp) / v.size),
        "n": v.size,
        "mean": float(v.mean()),
        "bound_mean": gw.max_abs_bound(M),
    }
