"""Rotation without equilibrium: cached data and figure builders for pages/rotation/page.py (§11)."""

from __future__ import annotations

import math

import numpy as np

from sim import rotation as ro
from ui.kit.figures import thin
from ui.kit.compute import cached

CLOUD = 1500  # points of the path drawn as the cloud
AREA_MARKERS = 120  # markers per accumulated-area curve
GRID = 13  # current arrows per axis
HIDDEN = 16  # hidden units of the FFN
FFN_BOX = 3.0  # the FFN panels show [-3, 3]²
CURL_GRID = 81
STREAM_SEEDS = 7  # streamline seeds per axis
STREAM_STEPS, STREAM_H = 40, 0.04
SWEEP_ANGLES = np.arange(0.0, 91.0, 15.0)  # degrees, MC markers of the rate-vs-angle panel
SWEEP_T, SWEEP_DT = 1000.0, 0.005  # each sweep marker: 2·10⁵ Euler–Maruyama steps


def example(angle: float, kappa: float, noise_ratio: float) -> tuple[np.ndarray, np.ndarray]:
    """H = diag(1, κ) (curvature axes = coordinate axes); D with eigenvalues (1, noise_ratio) along
    axes turned by ``angle`` degrees. H and D commute iff the angle is 0 or 90° (or κ = 1, or noise_ratio = 1)."""
    a = math.radians(angle)
    Q = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    return np.diag([1.0, kappa]), Q @ np.diag([1.0, noise_ratio]) @ Q.T


def _density(S: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Density of N(0, S) at the rows of X."""
    Si = np.linalg.inv(S)
    return np.exp(-0.5 * np.einsum("ni,ij,nj->n", X, Si, X)) / (2.0 * math.pi * math.sqrt(np.linalg.det(S)))


def _area_curve(H, D, dt, steps, seed):
    """One path: its accumulated area (thinned) and the rate ± stderr of ``ro.area_mc`` from the same path."""
    path = ro.simulate_ou(H, D, dt, steps, seed)
    inc = ro.area_increments(path)
    area = np.concatenate([[0.0], np.cumsum(inc)])
    k = thin(area.size, AREA_MARKERS)
    return path, dt * k, area[k], ro.batch_means(inc, dt)


@cached(max_entries=32)
def ou_data(angle: float, kappa: float, noise_ratio: float, dt: float, T: float, seed: int) -> dict:
    """Cloud, stationary ellipse, current arrows, accumulated area (with its detailed-balance twin)."""
    H, D = example(angle, kappa, noise_ratio)
    H0, D0 = example(0.0, kappa, noise_ratio)  # same spectra, commuting: detailed balance
    steps = max(int(round(T / dt)), 1)
    path, t_area, area, mc = _area_curve(H, D, dt, steps, seed)
    _, t0_area, area0, mc0 = _area_curve(H0, D0, dt, steps, seed)
    S = ro.stationary_covariance(H, D)
    w, V = np.linalg.eigh(S)
    w = np.clip(w, 0.0, None)  # a singular Σ (no noise across its line)
    phi = np.linspace(0.0, 2.0 * math.pi, 200)
    ellipse = (V * (2.0 * np.sqrt(w))) @ np.array([np.cos(phi), np.sin(phi)])  # 2σ contour
    box = 2.6 * math.sqrt(w.max())
    g = np.linspace(-box, box, GRID)
    X = np.array(np.meshgrid(g, g, indexing="xy")).reshape(2, -1).T
    J = ro.current_field(H, D, X)
    # the drift's own flux |Hx| p sets the scale: a current below 1e-9 of it is rounding, not rotation
    ref = float(np.max(np.linalg.norm(X @ H.T, axis=1) * _density(S, X))) if J.any() else 0.0
    if np.abs(J).max() <= 1e-9 * ref:
        J = np.zeros_like(J)
    k = thin(steps + 1, CLOUD)
    return {
        "H": H,
        "D": D,
        "Sigma": S,
        "steps": steps,
        "cloud": path[k],
        "ellipse": ellipse.T,
        "box": box,
        "grid": X,
        "J": J,
        "t_area": t_area,
        "area": area,
        "t_area0": t0_area,
        "area0": area0,
        "rate": ro.area_rate(H, D),
        "rate_dt": ro.em_area_rate(H, D, dt),
        "mc": mc,
        "mc0": mc0,
        "T_end": steps * dt,
    }


@cached(max_entries=32)
def sweep_data(kappa: float, noise_ratio: float, seed: int) -> dict:
    """Area rate against the angle between noise and curvature axes: exact curve, MC markers."""
    fine = np.linspace(0.0, 90.0, 181)
    exact = np.array([ro.area_rate(*example(a, kappa, noise_ratio)) for a in fine])
    mc = np.array(
        [
            ro.area_mc(*example(a, kappa, noise_ratio), SWEEP_T, SWEEP_DT, seed + 1 + i)
            for i, a in enumerate(SWEEP_ANGLES)
        ]
    )
    return {"fine": fine, "exact": exact, "angles": SWEEP_ANGLES, "mc": mc[:, 0], "se": mc[:, 1]}


def ffn_weights(blend: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """W_in (m, 2) and W_out = (1 − blend)·W_inᵀ + blend·(independent weights), from ``seed``."""
    rng = np.random.default_rng(seed)
    W_in = rng.standard_normal((HIDDEN, 2)) / math.sqrt(2.0)
    W_ind = rng.standard_normal((2, HIDDEN)) / math.sqrt(2.0)
    return W_in, (1.0 - blend) * W_in.T + blend * W_ind


def _streamlines(W_in, W_out) -> np.ndarray:
    """Curves along the FFN field (RK4 on the unit-speed field, both directions), NaN-separated."""

    def unit(P):
        F = ro.ffn_field(W_in, W_out, P)
        return F / np.maximum(np.linalg.norm(F, axis=1, keepdims=True), 1e-12)

    s = np.linspace(-0.85 * FFN_BOX, 0.85 * FFN_BOX, STREAM_SEEDS)
    seeds = np.array(np.meshgrid(s, s)).reshape(2, -1).T
    pieces = []
    for sign in (1.0, -1.0):
        P = seeds.copy()
        tracks = [P]
        for _ in range(STREAM_STEPS):
            k1 = unit(P)
            k2 = unit(P + 0.5 * STREAM_H * sign * k1)
            k3 = unit(P + 0.5 * STREAM_H * sign * k2)
            k4 = unit(P + STREAM_H * sign * k3)
            P = P + STREAM_H * sign / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
            tracks.append(P)
        pieces.append(np.stack(tracks, 1))  # (seeds, steps+1, 2)
    both = np.concatenate([pieces[1][:, ::-1], pieces[0][:, 1:]], axis=1)
    gap = np.full((both.shape[0], 1, 2), np.nan)
    return np.concatenate([both, gap], axis=1).reshape(-1, 2)


@cached(max_entries=32)
def ffn_data(blend: float, seed: int) -> dict:
    W_in, W_out = ffn_weights(blend, seed)
    g = np.linspace(-FFN_BOX, FFN_BOX, CURL_GRID)
    X = np.array(np.meshgrid(g, g, indexing="xy")).reshape(2, -1).T
    curl = ro.ffn_curl(W_in, W_out, X).reshape(CURL_GRID, CURL_GRID)
    return {
        "g": g,
        "curl": curl,
        "stream": _streamlines(W_in, W_out),
        "max_curl": float(np.abs(curl).max()),
        "asym": float(np.linalg.norm(W_out - W_in.T) / np.linalg.norm(W_in)),
    }
