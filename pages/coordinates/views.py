"""Coordinates, metrics and limits: cached data and figure builders for pages/coordinates/page.py (§7)."""

from __future__ import annotations

import math

import numpy as np

from sim import coordinates as co
from ui.kit.figures import COLORS, cached_figure, equal_axes, exact_line, figure, sim_markers, tall_legend, thin
from ui.kit.compute import cached

FINE = 400  # points on each exact curve in training time t
MARKERS = 45  # iterates drawn per metric
LOOP_POINTS = 1200  # points drawn on each loop (x_n is smooth; more only for large n)
ENDPOINT_NS = tuple(2**k for k in range(13))  # n = 1 … 4096 on the log–log panel
AREA_NS = (1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233)
Y0 = np.array([1.0, 0.5])  # start of the driven equation

# (A, B) pairs offered on the page. [B, A] = BA − AB is what the limit reads.
PAIRS = {
    "rotation_shear": (0.5 * np.array([[0.0, 1.0], [-1.0, 0.0]]), 0.5 * np.array([[1.0, 0.0], [0.0, -1.0]])),
    "nilpotent": (np.array([[0.0, 1.0], [0.0, 0.0]]), np.array([[0.0, 0.0], [1.0, 0.0]])),
    "commuting": (np.array([[0.5, 0.2], [0.2, -0.3]]), np.array([[0.0, 0.4], [0.4, -1.6]])),  # B = 2A − I
}


# --------------------------------------------------------------------------- data
def _iterates(a0, b0, y, dt, steps, metric):
    """Step-Δ iterates (t, a, b, θ), or None when the iteration is undefined or diverges."""
    try:
        it = co.gradient_steps(a0, b0, y, dt, steps, metric)
    except ValueError:
        return None
    return np.column_stack([dt * np.arange(steps + 1), it])


def saddle_crossing(a0: float, b0: float, y: float) -> float | None:
    """The time at which the pulled-back flow reaches the saddle a = b = 0 (None if it never does).

    Both flows keep c = a² − b²; with c = 0 (a start on a diagonal a = ±b) the path stays on that
    diagonal, and θ = ab reaches 0 (the saddle) when θ₀ and y have opposite signs or θ₀ = 0 ≠ y.
    The pulled-back θ(t) = y + (θ₀ − y)e^(−t) crosses 0 at t = ln((y − θ₀)/y); there the map
    (a, b) ↦ ab has zero derivative and the pulled-back flow (and its step) is undefined, while the
    Euclidean flow stops at the saddle (θ → 0, not y)."""
    th0 = a0 * b0
    if a0 * a0 - b0 * b0 != 0.0 or y == 0.0 or th0 * y > 0.0:
        return None
    return math.log((y - th0) / y)


@cached
def metric_data(a0: float, b0: float, y: float, horizon: float, dt: float) -> dict:
    """θ(t) for both metrics (exact) and their step-Δ iterates; the exact (a, b) path."""
    steps = max(int(round(horizon / dt)), 1)
    t_end = steps * dt
    t = np.linspace(0.0, t_end, FINE)
    out = {
        "t": t,
        "steps": steps,
        "t_end": t_end,
        "c": a0 * a0 - b0 * b0,
        "theta": {m: co.theta_flow(a0, b0, y, t, m) for m in co.METRICS},
        "ab": co.ab_flow(a0, b0, y, t),
        "iter": {},
        "gap": {},
        "saddle": saddle_crossing(a0, b0, y),
    }
    if out["saddle"] is not None:  # the pulled-back flow ends at the saddle: drawn up to it only
        out["theta"]["pullback"] = np.where(t <= out["saddle"], out["theta"]["pullback"], np.nan)
    for m in co.METRICS:
        if m == "pullback" and out["saddle"] is not None:
            out["iter"][m], out["gap"][m] = None, None
            continue
        it = _iterates(a0, b0, y, dt, steps, m)
        if it is None:
            out["iter"][m], out["gap"][m] = None, None
            continue
        k = thin(it.shape[0], MARKERS)
        out["iter"][m] = it[k]
        out["gap"][m] = float(np.max(np.abs(it[:, 3] - co.theta_flow(a0, b0, y, it[:, 0], m))))
    return out


def _hyperbola(a0: float, b0: float, box: float) -> np.ndarray:
    """Points of the branch of a² − b² = a0² − b0² through (a0, b0), inside |a|, |b| <= box."""
    p0, q0 = a0 + b0, a0 - b0  # a = (p+q)/2, b = (p−q)/2, pq = c
    c = p0 * q0
    u = np.linspace(-2.0 * box, 2.0 * box, 801)
    if c == 0.0:
        p, q = (u, np.zeros_like(u)) if p0 != 0.0 else (np.zeros_like(u), u)
    else:
        p = math.copysign(1.0, p0) * np.geomspace(abs(c) / (2.0 * box), 2.0 * box, 801)
        q = c / p
    a, b = 0.5 * (p + q), 0.5 * (p - q)
    keep = (np.abs(a) <= box) & (np.abs(b) <= box)
    return np.column_stack([a[keep], b[keep]])


@cached
def loop_data(n: int, pair: str) -> dict:
    """Loops x_n, their Lévy areas, and the driven end point against its limits for growing n."""
    A, B = PAIRS[pair]
    s = np.linspace(0.0, 2.0 * math.pi, max(LOOP_POINTS, 24 * n + 1))
    shown = sorted({1, 4, n})
    limit = co.area_limit(A, B, Y0)
    ns = np.array(sorted(set(ENDPOINT_NS) | {n}))
    ends = np.array([co.driven_endpoint(int(k), A, B, Y0) for k in ns])
    return {
        "s": s,
        "shown": shown,
        "loops": {k: co.loop(k, s) for k in shown},
        "loop_areas": {k: co.levy_area(k) for k in shown},
        "area_ns": np.array(AREA_NS),
        "areas": np.array([co.levy_area(k) for k in AREA_NS]),
        "area_n": co.levy_area(n),
        "ns": ns,
        "ends": ends,
        "limit": limit,
        "err_limit": np.linalg.norm(ends - limit, axis=1),
        "err_y0": np.linalg.norm(ends - Y0, axis=1),
        "end_n": ends[list(ns).index(n)],
        "gap_limit_y0": float(np.linalg.norm(limit - Y0)),
        "commutator": B @ A - A @ B,
        "slope": _fit_slope(ns, np.linalg.norm(ends - limit, axis=1)),
    }


def _fit_slope(ns, err):
    """Least-squares slope of log err against log n over n >= 8 (None when the error is rounding:
    commuting matrices, where there is nothing to converge)."""
    keep = (ns >= 8) & (err > 1e-10)
    if keep.sum() < 2:
        return None
    return float(np.polyfit(np.log(ns[keep]), np.log(err[keep]), 1)[0])


# --------------------------------------------------------------------------- figures
_METRIC_STYLE = {"euclidean": (COLORS["usa"], "square"), "pullback": (COLORS["sa"], "circle")}


@cached_figure
def theta_figure(t, a0, b0, y, horizon, dt):
    d = metric_data(a0, b0, y, horizon, dt)
    fig = figure(t("fig.x_train"), t("fig.y_theta"), t("fig.theta_title"))
    exact_line(fig, [0.0, d["t_end"]], [y, y], t("fig.target"), color=COLORS["ref"], line=dict(dash="dot", width=1.5))
    for m in co.METRICS:
        col, sym = _METRIC_STYLE[m]
        if np.isfinite(d["theta"][m]).any():
            exact_line(fig, d["t"], d["theta"][m], t(f"fig.{m}_exact"), color=col)
        it = d["iter"][m]
        if it is not None:
            sim_markers(fig, it[:, 0], it[:, 3], t(f"fig.{m}_steps"), color=col, symbol=sym)
    return tall_legend(fig)


@cached_figure
def ab_figure(t, a0, b0, y, horizon, dt):
    d = metric_data(a0, b0, y, horizon, dt)
    ab = d["ab"]
    box = 1.15 * max(np.abs(ab).max(), math.sqrt(abs(y)) + 0.2, 0.5)
    fig = figure(t("fig.x_a"), t("fig.y_b"), t("fig.ab_title"))
    hyp = _hyperbola(a0, b0, box)
    exact_line(fig, hyp[:, 0], hyp[:, 1], t("fig.hyperbola"), color=COLORS["ref"], line=dict(width=1.5))
    if y != 0.0:  # the minimisers ab = y, both branches
        a = np.geomspace(abs(y) / box, box, 300)
        a = np.concatenate([a, [np.nan], -a])  # one trace, the branches NaN-separated: one legend entry
        exact_line(fig, a, y / a, t("fig.minimisers"), color=COLORS["bound"], line=dict(dash="dot", width=1.5))
    exact_line(fig, ab[:, 0], ab[:, 1], t("fig.euclidean_exact"), color=COLORS["usa"])
    it = d["iter"]["euclidean"]
    if it is not None:
        sim_markers(fig, it[:, 1], it[:, 2], t("fig.euclidean_steps"), color=COLORS["usa"], symbol="square")
    fig.update_layout(hovermode="closest", **equal_axes(box))
    return tall_legend(fig)


@cached_figure
def loops_figure(t, n, pair):
    d = loop_data(n, pair)
    fig = figure(t("fig.x_loop1"), t("fig.y_loop2"), t("fig.loops_title"))
    # a dash as well as a colour for each loop: orange and vermilion are close for a colour-blind eye
    for k, col, dash in zip(d["shown"], (COLORS["sa"], COLORS["other"], COLORS["usa"]), ("solid", "dash", "dot")):
        x = d["loops"][k]
        exact_line(
            fig,
            x[:, 0],
            x[:, 1],
            t("fig.loop_n", n=k, area=f"{d['loop_areas'][k]:.4f}"),
            color=col,
            line=dict(width=1.5, dash=dash),
        )
    fig.update_layout(hovermode="closest", **equal_axes(1.1))
    return tall_legend(fig)


@cached_figure
def area_figure(t, n, pair):
    d = loop_data(n, pair)
    ns = d["area_ns"]
    fig = figure(t("fig.x_n"), t("fig.y_area"), t("fig.area_title"), log_x=True)
    exact_line(fig, ns, np.full(ns.size, math.pi), t("fig.area_pi"), color=COLORS["sa"])
    sim_markers(fig, ns, d["areas"], t("fig.area_numeric"), color=COLORS["sa"])
    exact_line(fig, ns, 1.0 / np.sqrt(ns), t("fig.sup_norm"), color=COLORS["usa"])
    fig.update_yaxes(rangemode="tozero")
    return tall_legend(fig)


@cached_figure
def endpoint_figure(t, n, pair):
    d = loop_data(n, pair)
    ns = d["ns"]
    floor = 1e-16 * max(1.0, np.linalg.norm(Y0))  # rounding level: zeros cannot sit on a log axis
    fig = figure(t("fig.x_n"), t("fig.y_err"), t("fig.endpoint_title"), log_x=True, log_y=True)
    sim_markers(fig, ns, np.maximum(d["err_y0"], floor), t("fig.err_y0"), color=COLORS["usa"], symbol="square")
    sim_markers(fig, ns, np.maximum(d["err_limit"], floor), t("fig.err_limit"), color=COLORS["sa"])
    if d["gap_limit_y0"] > 1e-12:
        exact_line(fig, ns, np.full(ns.size, d["gap_limit_y0"]), t("fig.gap_limit_y0"), color=COLORS["usa"])
        ref = d["err_limit"][-1] * np.sqrt(ns[-1] / ns)
        exact_line(fig, ns, ref, t("fig.slope_half"), color=COLORS["ref"], line=dict(dash="dot", width=1.5))
    fig.update_layout(hovermode="closest")
    return tall_legend(fig)
