"""Two points: cached data and figure builders for pages/two_point/page.py.

What it computes: docs/constructions.md, section “Two points: SA versus USA (normalised vs unnormalised attention)”.
"""

from __future__ import annotations

import math

import numpy as np

from sim import two_point as tp
from sim.attention import simulate
from ui.kit.figures import COLORS, cached_figure, exact_line, figure, sim_markers, thin, vline_label
from ui.kit.compute import cached

MAX_RECORDS = 150  # markers per curve (the kernel records every k-th layer)
FINE = 400  # points on each exact curve
ERROR_HALVINGS = 5  # Δ, Δ/2, …, Δ/16 in the error plot
SIMPLEX_MAX_LAYERS = 2000


@cached
def two_point_data(beta: float, theta0: float, horizon: float, dt: float) -> dict:
    """Exact curves and layer-map trajectories for both flows (small arrays only)."""
    steps = max(int(round(horizon / dt)), 1)
    tau_end = steps * dt
    every = max(1, -(-steps // MAX_RECORDS))
    fine = np.linspace(0.0, tau_end, FINE)
    Z0 = tp.initial_pair(theta0)
    out = {"steps": steps, "tau_end": tau_end, "fine": fine}
    for flow in ("SA", "USA"):
        traj = simulate(Z0, beta, dt, steps, flow=flow, record_every=every)
        tau = np.arange(traj.shape[0]) * every * dt
        th_sim = tp.half_angle_of(traj)
        out[flow] = {
            "exact": tp.half_angle(beta, theta0, fine, flow),
            "tau": tau,
            "sim": th_sim,
            "E_sim": tp.energies(traj, beta),
        }
        out[flow]["E_exact"] = tp.energy_two_point(beta, out[flow]["exact"])
    # USA re-timed onto the SA clock, inside the plotted SA depth window: the clock runs at
    # Z/n >= cosh β, so USA depth tau_end / cosh β already reaches SA depth tau_end (at β = 50 that
    # is ~2e-21: a USA grid up to tau_end put every point but the first far beyond the SA window)
    tu = np.linspace(0.0, tau_end / math.cosh(beta), 4 * FINE)
    ts = tp.usa_on_sa_clock(beta, theta0, tu)
    keep = ts <= tau_end
    ts, th_usa = ts[keep], tp.half_angle(beta, theta0, tu[keep], "USA")
    out["retime_gap"] = float(np.max(np.abs(th_usa - tp.half_angle(beta, theta0, ts, "SA"))))
    pick = np.searchsorted(ts, np.linspace(0.0, ts[-1], 40)).clip(0, ts.size - 1)
    out["retimed"] = (ts[pick], th_usa[pick])
    dts = dt / 2.0 ** np.arange(ERROR_HALVINGS)
    out["dts"] = dts
    # the largest error over every layer (sim.two_point.discretisation_error runs them all); at
    # dts[0] = Δ it is the gap of the layer map drawn above, whose markers are every k-th layer only
    out["err"] = {f: tp.discretisation_error(beta, theta0, tau_end, dts, f) for f in ("SA", "USA")}
    for f in ("SA", "USA"):
        out[f]["gap"] = float(out["err"][f][0])
    # local slopes between neighbouring Δ: 1 for a first-order map; USA reaches 1 only once Δe^β ≪ 1
    with np.errstate(divide="ignore", invalid="ignore"):
        out["slopes"] = {f: np.diff(np.log(e)) / np.diff(np.log(dts)) for f, e in out["err"].items()}
    out["dte"] = dt * math.exp(beta)
    return out


@cached
def simplex_data(beta: float, n: int, rho0: float, horizon: float, dt: float) -> dict:
    steps = max(int(round(horizon / dt)), 1)
    dt_s = dt if steps <= SIMPLEX_MAX_LAYERS else horizon / SIMPLEX_MAX_LAYERS
    steps = min(steps, SIMPLEX_MAX_LAYERS)
    every = max(1, -(-steps // 60))
    traj = simulate(tp.simplex_points(n, rho0), beta, dt_s, steps, record_every=every)
    off = ~np.eye(n, dtype=bool)
    rho_sim = np.array([(Z @ Z.T)[off].mean() for Z in traj])
    tau = np.arange(traj.shape[0]) * every * dt_s
    fine = np.linspace(0.0, steps * dt_s, FINE)
    return {"tau": tau, "sim": rho_sim, "fine": fine, "exact": tp.simplex_rho(beta, n, rho0, fine), "dt": dt_s}


def _flows(fig, t, d: dict, exact_key: str, sim_key: str, max_markers: int) -> None:
    """For SA and USA: the exact curve (solid) and the layer map (markers), same colour."""
    for flow, col, sym in (("SA", COLORS["sa"], "circle"), ("USA", COLORS["usa"], "square")):
        key = flow.lower()
        exact_line(fig, d["fine"], d[flow][exact_key], t(f"fig.{key}_exact"), color=col)
        k = thin(d[flow]["tau"].size, max_markers)
        sim_markers(fig, d[flow]["tau"][k], d[flow][sim_key][k], t(f"fig.{key}_sim"), color=col, symbol=sym)


def _flows_figure(t, d: dict, what: str, exact_key: str, sim_key: str, max_markers: int):
    """Against depth: SA and USA, exact and layer map (``what``: "angle" or "energy")."""
    fig = figure(t("fig.x_depth"), t(f"fig.y_{what}"), t(f"fig.{what}_title"))
    _flows(fig, t, d, exact_key, sim_key, max_markers)
    return fig


# --------------------------------------------------------------------------- figures
# Built once per (language, parameters) and shared: see ui.kit.figures.cached_figure.
@cached_figure
def time_figure(t, beta, theta0, horizon, dt):
    d = two_point_data(beta, theta0, horizon, dt)
    fig = figure(t("fig.x_depth_sa"), t("fig.y_angle"), t("fig.time_title"))
    exact_line(fig, d["fine"], d["SA"]["exact"], t("fig.sa_exact"), color=COLORS["sa"])
    sim_markers(fig, *d["retimed"], t("fig.usa_retimed"), color=COLORS["usa"], symbol="diamond")
    return fig


@cached_figure
def angle_figure(t, beta, theta0, horizon, dt):
    return _flows_figure(t, two_point_data(beta, theta0, horizon, dt), "angle", "exact", "sim", 50)


@cached_figure
def energy_figure(t, beta, theta0, horizon, dt):
    return _flows_figure(t, two_point_data(beta, theta0, horizon, dt), "energy", "E_exact", "E_sim", 40)


@cached_figure
def error_figure(t, beta, theta0, horizon, dt):
    d = two_point_data(beta, theta0, horizon, dt)
    fig = figure(t("fig.x_dt"), t("fig.y_err"), t("fig.error_title"), log_x=True, log_y=True)
    dts = d["dts"]
    for flow, col, sym in (("SA", COLORS["sa"], "circle"), ("USA", COLORS["usa"], "square")):
        err = d["err"][flow]
        fig.add_scatter(
            x=dts,
            y=err,
            mode="lines+markers",
            name=t(f"fig.{flow.lower()}_err"),
            line=dict(color=col, dash="dash"),
            marker=dict(color=col, symbol=sym, size=8),
        )
    ref0 = max(np.max(d["err"]["SA"]), np.max(d["err"]["USA"]))
    exact_line(fig, dts, ref0 * dts / dts[0], t("fig.slope1"), color=COLORS["ref"], line=dict(dash="dot"))
    # A vline annotation on a log axis stretches the autorange (it is placed at log10-space
    # coordinates), so draw the line and its label by hand and pin the range to the data.
    lx = np.log10(dts)
    fig.add_shape(type="line", x0=dt, x1=dt, y0=0, y1=1, yref="paper", line=dict(color=COLORS["ref"], width=1))
    # label at the bottom: the errors grow with Δ, so the bottom-right corner is free of markers
    fig.add_annotation(**vline_label(dt, t("fig.your_dt")))
    fig.update_xaxes(range=[lx.min() - 0.08, lx.max() + 0.08], dtick="D2")
    return fig


@cached_figure
def simplex_figure(t, beta, n, rho0, horizon, dt):
    s = simplex_data(beta, n, rho0, horizon, dt)
    fig = figure(t("fig.x_depth"), t("fig.y_rho"), t("fig.simplex_title"))
    exact_line(fig, s["fine"], s["exact"], t("fig.exact_rho"))
    sim_markers(fig, s["tau"], s["sim"], t("fig.sim_rho"))
    return fig
