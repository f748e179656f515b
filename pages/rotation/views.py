"""Rotation without equilibrium: cached data and figure builders for pages/rotation/page.py (§11)."""

from __future__ import annotations

import math

import numpy as np

from sim import rotation as ro
from ui.kit.figures import COLORS, cached_figure, equal_axes, figure, heatmap, line, markers, tall_legend, thin
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


# --------------------------------------------------------------------------- figures
def arrows(X: np.ndarray, U: np.ndarray, length: float) -> np.ndarray:
    """Arrows from the points X along U (longest = ``length``), as one NaN-separated polyline.

    Drawing helper (ui.kit.figures has none for vector fields): shaft plus a two-stroke head."""
    n = np.linalg.norm(U, axis=1)
    scale = length / n.max() if n.max() > 0 else 0.0
    V = U * scale
    tip = X + V
    back = -0.3 * V
    side = 0.18 * np.column_stack([-V[:, 1], V[:, 0]])
    nan = np.full_like(X, np.nan)
    seg = np.stack([X, tip, nan, tip + back + side, tip, tip + back - side, nan], axis=1)
    return seg.reshape(-1, 2)


@cached_figure
def cloud_figure(t, angle, kappa, noise_ratio, dt, T, seed):
    d = ou_data(angle, kappa, noise_ratio, dt, T, seed)
    c, b = d["cloud"], d["box"]
    A = arrows(d["grid"], d["J"], 0.9 * 2 * b / (GRID - 1))
    current = t("fig.current") if np.abs(d["J"]).max() > 0 else t("fig.current_zero")
    fig = figure(
        t("fig.x1"),
        t("fig.x2"),
        t("fig.cloud_title"),
        [
            markers(c[:, 0], c[:, 1], t("fig.cloud"), size=3, opacity=0.35),
            line(d["ellipse"][:, 0], d["ellipse"][:, 1], t("fig.ellipse")),
            line(A[:, 0], A[:, 1], current, COLORS["black"], width=1.2),
        ],
        height=480,
        hovermode="closest",
        **equal_axes(b),
    )
    return tall_legend(fig)


@cached_figure
def area_figure(t, angle, kappa, noise_ratio, dt, T, seed):
    d = ou_data(angle, kappa, noise_ratio, dt, T, seed)
    te = np.array([0.0, d["T_end"]])
    fig = figure(
        t("fig.x_time"),
        t("fig.y_area"),
        t("fig.area_title"),
        [
            line(te, d["rate"] * te, t("fig.area_exact")),
            markers(d["t_area"], d["area"], t("fig.area_sim"), COLORS["exact"]),
            line(te, 0.0 * te, t("fig.area0_exact"), COLORS["usa"], dash="dot"),
            markers(d["t_area0"], d["area0"], t("fig.area0_sim"), COLORS["usa"], symbol="square"),
        ],
        height=480,
    )
    return tall_legend(fig)


@cached_figure
def sweep_figure(t, kappa, noise_ratio, seed):
    s = sweep_data(kappa, noise_ratio, seed)
    fig = figure(
        t("fig.x_angle"),
        t("fig.y_rate"),
        t("fig.sweep_title"),
        [
            line(s["fine"], s["exact"], t("fig.rate_exact")),
            markers(s["angles"], s["mc"], t("fig.rate_mc"), error=2 * s["se"], error_y={"thickness": 1.2}),
        ],
    )
    return tall_legend(fig)


@cached_figure
def ffn_figure(t, blend, seed):
    d = ffn_data(blend, seed)
    zmax, s = max(d["max_curl"], 1e-12), d["stream"]
    fig = figure(
        t("fig.x1_ffn"),
        t("fig.x2_ffn"),
        t("fig.ffn_title"),
        [
            heatmap(
                d["g"],
                d["g"],
                d["curl"],
                t("fig.curl"),
                "RdBu_r",
                zmin=-zmax,
                zmax=zmax,
                bar=t("fig.curl"),
                hover=t("fig.curl") + " %{z:.3g}",
                colorbar=dict(title=dict(text=t("fig.curl"), side="top")),
            ),  # above the bar, not on its 0 tick
            line(s[:, 0], s[:, 1], t("fig.stream"), COLORS["black"], width=1.2),
        ],
        height=480,
        hovermode="closest",
        **equal_axes(FFN_BOX),
    )
    return tall_legend(fig)
