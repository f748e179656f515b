"""Non-normal growth: cached data for pages/nonnormal/page.py (its figures: figures.py).

What it computes: docs/constructions.md, section “Non-normal transient growth”.
"""

from __future__ import annotations

import math
import time

import numpy as np

from sim import nonnormal as nn
from ui.kit.compute import cached

FINE = 400  # points on each exact curve in s
N_DIRS = 6  # unit initial vectors x0 at angles k*pi/N_DIRS
FRAMES = 61  # frames of the ellipse animation
CIRCLE = 97  # points on the animated circle
EPS_SWEEP = np.logspace(-4, 1, 101)  # epsilon values of the kappa(V) panel
EULER_MARKERS = 120  # Euler iterates drawn at most
A_SCALAR = 1.0  # rate a of the scalar case (the diagonal of A)


def _window(M: float) -> float:
    """Half-width of the pseudospectrum window: sigma_min = 1 at distance sqrt(|M|+1) (Jordan case)."""
    return max(2.5, 1.4 * math.sqrt(abs(M) + 1.0))


# --------------------------------------------------------------------------- cached compute
@cached
def flow_data(M: float, s_max: float) -> dict:
    """Responses from several unit x0, the norm envelope, the peak and the ellipse frames."""
    s = np.linspace(0.0, s_max, FINE)
    angles = np.arange(N_DIRS) * np.pi / N_DIRS
    dirs = np.stack([np.cos(angles), np.sin(angles)], 1)
    resp = np.array([np.linalg.norm(nn.response(M, s, x0), axis=1) for x0 in dirs])
    s_star, peak = nn.peak(M)
    sf = np.linspace(0.0, s_max, FRAMES)
    ellipse = nn.circle_image(M, sf, n_points=CIRCLE)
    pts = np.stack([nn.response(M, sf, x0) for x0 in np.concatenate([dirs, -dirs])], 1)  # (F, 2N, 2)
    E = nn.flow(M, sf)
    axis = np.empty((FRAMES, 2))
    for k, Ek in enumerate(E):  # major semi-axis = sigma_max * left singular vector
        U, S, _ = np.linalg.svd(Ek)
        axis[k] = S[0] * U[:, 0]
    return {
        "s": s,
        "angles": angles,
        "resp": resp,
        "norm": nn.operator_norm(M, s),
        "eig": np.exp(-s),
        "s_star": s_star,
        "peak": peak,
        "e2_at_1": math.exp(-1.0) * math.sqrt(1.0 + M * M),
        "sf": sf,
        "ellipse": ellipse,
        "pts": pts,
        "axis": axis,
    }


def true_sup(M: float, eps: float, s_grid: np.ndarray) -> float:
    """sup_s ||e^{sA_eps}||_2: the grid's best point refined by a bounded scalar search between its
    neighbours (a grid of step h alone misses up to ~|f''| h²/8: 5e-5 at M = 50, h = 0.005, which
    the page's four decimals show)."""
    from scipy.optimize import minimize_scalar

    vals = nn.flow_norm(M, s_grid, eps)
    i = int(np.argmax(vals))
    if i == 0 or i == s_grid.size - 1:
        return float(vals[i])
    r = minimize_scalar(
        lambda x: -float(nn.flow_norm(M, np.array([x]), eps)[0]),
        bounds=(float(s_grid[i - 1]), float(s_grid[i + 1])),
        method="bounded",
        options={"xatol": 1e-12},
    )
    return max(float(vals[i]), -float(r.fun))


@cached
def kappa_data(M: float, eps: float, s_max: float) -> dict:
    s = np.linspace(0.0, s_max, FINE)
    kap = nn.kappa(M, eps)
    s_long = np.linspace(0.0, max(s_max, 12.0), 1200)
    sup_norm = nn.flow_norm_grid(M, s_long, EPS_SWEEP).max(axis=1)
    return {
        "s": s,
        "norm_eps": nn.flow_norm(M, s, eps),
        "norm_jordan": nn.operator_norm(M, s),
        "bound": kap * np.exp(-s),
        "eig": np.exp(-s),
        "kappa": kap,
        "eps_sweep": EPS_SWEEP,
        "kappa_sweep": np.array([nn.kappa(M, e) for e in EPS_SWEEP]),
        "sup_sweep": sup_norm,
        "sup_eps": true_sup(M, eps, s_long),
    }


@cached(max_entries=16)
def pseudo_data(M: float, eps: float, grid: int) -> dict:
    A = nn.matrix(M, eps)
    R = _window(M)
    center = -1.0 - eps / 2.0
    re = np.linspace(center - R, center + R, grid)
    im = np.linspace(-R, R, grid)
    ms = math.inf
    for _ in range(3):  # best of 3: the kernel takes well under a millisecond
        t0 = time.perf_counter()
        sig = nn.pseudospectrum(A, re, im)
        ms = min(ms, (time.perf_counter() - t0) * 1e3)
    kreiss = nn.kreiss_lower_bound(A, re, im, sigma=sig)
    right = re > 0
    at = (np.nan, np.nan)
    if right.any():
        ratio = re[right][None, :] / np.maximum(sig[:, right], 1e-300)
        k, j = np.unravel_index(np.argmax(ratio), ratio.shape)
        at = (float(re[right][j]), float(im[k]))
    with np.errstate(divide="ignore"):
        logsig = np.log10(np.maximum(sig, 1e-12)).astype(np.float32)
    s_long = np.linspace(0.0, 12.0, 2400)
    return {
        "re": re,
        "im": im,
        "logsig": logsig,
        "ms": ms,
        "points": grid * grid,
        "eig": np.linalg.eigvals(A),
        "kreiss": kreiss,
        "kreiss_at": at,
        "sup": true_sup(M, eps, s_long),
    }


@cached
def jacobian_data(L: int, d: int, eta: float, seed: int) -> dict:
    return nn.jacobian_products(L, d, eta, seed)


@cached
def euler_data(M: float, delta: float, s_max: float) -> dict:
    e2 = [0.0, 1.0]
    fl = nn.euler_flow(M, delta, s_max, e2)
    s = np.linspace(0.0, s_max, FINE)
    sc = nn.euler_scalar(A_SCALAR, delta, s_max, 1.0)
    return {
        "s": s,
        "exact": nn.response(M, s, e2),
        "sk": fl["s"],
        "euler": fl["euler"],
        "flow_err": float(np.max(np.linalg.norm(fl["euler"] - fl["exact"], axis=1))),
        "sc_s": sc["s"],
        "sc_euler": sc["euler"],
        "sc_exact": np.exp(-A_SCALAR * s),
        "sc_err": float(np.max(sc["error"])),
        "bound": sc["bound"],
        "factor": sc["factor"],
        "regime": sc["regime"],
    }
