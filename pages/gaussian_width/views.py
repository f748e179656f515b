"""Gaussian width: cached Monte Carlo and figure builders for pages/gaussian_width/page.py.

What it computes: docs/constructions.md, section “Gaussian width”.
"""
from __future__ import annotations

import math
import time

import numpy as np
import plotly.graph_objects as go

from sim import gaussian_width as gw
from ui.kit.figures import (COLORS, cached_figure, exact_line, figure, figure3d, histogram, line, markers,
                            point, sphere_wire, log_ticks, tall_legend)
from ui.kit.compute import cached, sub_seed

GRID_POINTS = 9               # Monte-Carlo points per sweep (plus the current value)
POINT_BUDGET = 20_000_000     # work (samples * cost per draw) per sweep point at most (samples lowered)
FOCUS_BUDGET = 200_000_000    # the same for the Monte Carlo at the chosen values (histogram, tail)
MIN_POINT_SAMPLES = 200
HIST_BINS = 50
D_SWEEP_MAX = 1024            # the overview and the D-families sweep D = 1, 2, 4, ..., 1024
EXACT_DIRECTIONS_POINTS = 16  # quadratures on the exact line of E max|<g,u_i>| when rho > 0
TAIL_MIN_COUNT = 5            # empirical tail points need at least this many draws above r
LOG_TICKS = [0.5, 1, 2, 5, 10, 20, 50]  # y ticks of the log-scaled width axes
SIGMA_BAR = 2.0               # error bars: mean ± 2 standard errors (≈ 95 %)

FAMILY_COLORS = {"subspace": COLORS["other"], "directions": COLORS["accent"],
                 "hypercube": COLORS["sky"], "circle": COLORS["black"], "adaptive": COLORS["usa"],
                 "fixed": COLORS["sa"]}


def _grid(lo: int, hi: int, n: int) -> np.ndarray:
    return np.unique(np.round(np.geomspace(lo, hi, n)).astype(int)) if hi > lo else np.array([lo])


PICTURE_RANDOM_MAX = 300      # random directions drawn in the 3-D picture at most


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
    return (family, D, k if family == "subspace" else 0, M if family == "directions" else 0,
            rho if family == "directions" else 0.0, samples, seed)


def sweep_args(family, D, rho, samples, seed, M=0) -> tuple:
    """The arguments of :func:`sweep`; for directions with M > D the sweep runs on to M (random)."""
    return (family, D if family in ("subspace", "directions") else 0,
            rho if family == "directions" else 0.0, samples, seed,
            M if random_layout(family, D, M) else 0)


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
    return {"mean": mean, "se": se, "n": v.size, "ms": ms, "exact": w, "lo": lo, "hi": hi,
            "edges": edges, "hist": counts / (v.size * np.diff(edges)), "grid": grid, "dens": dens}


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
    out = {"var": var, "x": xs, "exact": exact, "lo": bounds[:, 0], "hi": bounds[:, 1],
           "x_mc": xs_mc, "mc": r[:, 0], "se": r[:, 1], "n": r[:, 2]}
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
    specs = {"adaptive": lambda d: {"D": d}, "hypercube": lambda d: {"D": d},
             "subspace": lambda d: {"D": d, "k": k}, "fixed": lambda d: {"D": d, "M": 1}}
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
    return {"r": r, "exact": exact, "bound": gw.tail_bound(r, M),
            "r_mc": r_mc, "emp": emp, "se": np.sqrt(emp * (1 - emp) / v.size), "n": v.size,
            "mean": float(v.mean()), "bound_mean": gw.max_abs_bound(M)}


@cached
def picture(family: str, k: int, M: int, rho: float, seed: int) -> dict:
    if random_layout(family, 3, M):  # M random directions of R^3 (at most PICTURE_RANDOM_MAX drawn)
        m = min(M, PICTURE_RANDOM_MAX)
        d = gw.one_draw("directions", seed, D=3, M=m, layout="random")
        d["k"], d["M"] = None, m
        return d
    p = _params(family, 3, min(k, 2), min(M, 3), rho)
    d = gw.one_draw(family, seed, **p)
    d["k"], d["M"] = p.get("k"), p.get("M")
    return d


# --------------------------------------------------------------------------- drawing helpers
def _mc_trace(fig, x, y, se, name, color, symbol="circle", **kw):
    """Monte Carlo means with error bars of ± SIGMA_BAR standard errors."""
    fig.add_trace(markers(x, y, name, color, symbol, size=8, error=SIGMA_BAR * np.asarray(se),
                          error_y=dict(thickness=1.2, width=4), **kw))


def _bound_line(fig, x, y, name, color=COLORS["bound"], dash="dot", **kw):
    fig.add_trace(line(x, y, name, color, width=2, dash=dash, **kw))


# --------------------------------------------------------------------------- figures
# Built once per (language, text version, inputs) and shared between reruns and sessions.
@cached_figure
def sweep_figure(t, family, D, k, M, rho, samples, seed) -> go.Figure:
    f = focus(*focus_args(family, D, k, M, rho, samples, seed))
    s = sweep(*sweep_args(family, D, rho, samples, seed, M))
    cur = {"k": k, "M": M, "D": D}[s["var"]]
    var = s["var"]
    log_x = var in ("M", "D")
    log_y = family in ("hypercube", "adaptive")  # √D growth: a straight line of slope ½
    fig = figure(t(f"fig.x_{var}"), t("fig.y_width"), t(f"fig.sweep_title.{family}"), log_x=log_x,
                 log_y=log_y)
    if log_y:
        fig.update_yaxes(**log_ticks(LOG_TICKS))
    exact_line(fig, s["x"], s["exact"], t(f"fig.exact.{family}"))
    if np.isnan(s["exact"]).any():  # directions beyond M = D: the exact line stops at M = D
        fig.add_trace(line([D, D], [0.0, float(np.nanmax(s["hi"]))], t("fig.M_equals_D"), COLORS["ref"],
                           width=1, dash="dot"))
    _bound_line(fig, s["x"], s["hi"], t(f"fig.upper.{family}"))
    _bound_line(fig, s["x"], s["lo"], t(f"fig.lower.{family}"), dash="dash")
    if "count" in s:
        _bound_line(fig, s["x"], s["count"], t("fig.count_bound"), color=COLORS["ref"], dash="dashdot")
    _mc_trace(fig, s["x_mc"], s["mc"], s["se"], t("fig.mc_points"), COLORS["sim"])
    fig.add_trace(point([cur], [f["mean"]], t("fig.your_value", var=var, v=cur, n=f["n"]), COLORS["sim"],
                        error_y=dict(type="data", array=[SIGMA_BAR * f["se"]], color=COLORS["sim"], thickness=1.5,
                                     width=6)))
    tall_legend(fig, 1, height=420)
    return fig


@cached_figure
def hist_figure(t, *fa) -> go.Figure:
    """``fa``: the arguments of :func:`focus` (see :func:`focus_args`)."""
    family, f = fa[0], focus(*fa)
    fig = figure(t("fig.x_sup"), t("fig.y_density"), t(f"fig.hist_title.{family}"))
    e = f["edges"]
    fig.add_trace(histogram(e, f["hist"], t("fig.hist_mc", n=f["n"])))
    if f["dens"] is not None:
        exact_line(fig, f["grid"], f["dens"], t(f"fig.density.{family}"))
    top = float(max(f["hist"].max(), 0 if f["dens"] is None else f["dens"].max()))
    if f["exact"] is not None:
        fig.add_trace(line([f["exact"]] * 2, [0, 1.05 * top], t("fig.exact_mean"), COLORS["black"], width=1.5))
    fig.add_trace(line([f["mean"]] * 2, [0, 1.05 * top], t("fig.mc_mean"), COLORS["sim"], width=2, dash="dot"))
    tall_legend(fig, 1, height=420)  # one entry per row: two columns ran into each other at half page width
    return fig


@cached_figure
def overview_figure(t, k, samples, seed) -> go.Figure:
    o = overview(k, samples, seed)
    fig = figure(t("fig.x_D"), t("fig.y_width"), t("fig.overview_title"), log_x=True, log_y=True)
    names = {"adaptive": t("fig.ov_adaptive"), "hypercube": t("fig.ov_hypercube"),
             "subspace": t("fig.ov_subspace", k=k), "fixed": t("fig.ov_fixed")}
    symbols = {"adaptive": "circle", "hypercube": "square", "subspace": "diamond", "fixed": "triangle-up"}
    for name in ("adaptive", "hypercube", "subspace", "fixed"):
        x, y = o[name]
        col = FAMILY_COLORS[name]
        exact_line(fig, x, y, names[name], color=col, legendgroup=name)
        xm, ym, se = o[name + "_mc"]
        _mc_trace(fig, xm, ym, se, t("fig.ov_mc"), col, symbol=symbols[name], legendgroup=name,
                  showlegend=(name == "fixed"))
    _bound_line(fig, o["x"], np.full(o["x"].size, o["fixed_bound"]), t("fig.ov_fixed_bound"))
    fig.update_yaxes(**log_ticks(LOG_TICKS))
    tall_legend(fig, 3, height=420)
    return fig


@cached_figure
def tail_figure(t, D, M, rho, samples, seed) -> go.Figure:
    d = tail(D, M, rho, samples, seed)
    fig = figure(t("fig.x_r"), t("fig.y_tail"), t("fig.tail_title", M=M, rho=f"{rho:g}"), log_y=True)
    floor = 0.3 / d["n"]
    if d["exact"] is not None:
        exact_line(fig, d["r"], np.maximum(d["exact"], 1e-300), t("fig.tail_exact"))
    _bound_line(fig, d["r"], d["bound"], t("fig.tail_bound", M=M))
    keep = d["emp"] * d["n"] >= TAIL_MIN_COUNT  # fewer exceedances: the fraction is mostly noise
    _mc_trace(fig, d["r_mc"][keep], d["emp"][keep], d["se"][keep],
              t("fig.tail_mc", n=d["n"]), COLORS["sim"])
    fig.update_yaxes(range=[math.log10(floor), 0.15])
    tall_legend(fig, 1, height=420)
    return fig


def _set_traces(t, family: str, d: dict, traces: list) -> None:
    """The set of directions of the picture: a pair of points, a circle, points or cube vertices
    (with the cube's edges), or the whole sphere (the wireframe ``traces[0]`` recoloured)."""
    col = FAMILY_COLORS[family]
    name = t(f"pic.set.{family}")
    if "basis" in d:
        B = d["basis"]
        if B.shape[1] == 1:
            q = B[:, 0]
            traces.append(go.Scatter3d(x=[-q[0], q[0]], y=[-q[1], q[1]], z=[-q[2], q[2]], mode="markers",
                                       name=name, marker=dict(size=7, color=col)))
        elif B.shape[1] == 2:
            th = np.linspace(0, 2 * np.pi, 181)
            c = np.outer(B[:, 0], np.cos(th)) + np.outer(B[:, 1], np.sin(th))
            traces.append(go.Scatter3d(x=c[0], y=c[1], z=c[2], mode="lines", name=name,
                                       line=dict(color=col, width=7)))
        else:  # k = 3: the whole sphere is the set
            traces[0].update(line=dict(color=col, width=2.5), name=name)
    elif family == "adaptive":
        traces[0].update(line=dict(color=col, width=2.5), name=name)
    else:
        P = d["points"]
        if family == "directions":
            P = np.vstack([P, -P])
        else:  # cube edges as a guide: vertices differing in one sign
            ex, ey, ez = [], [], []
            for i in range(P.shape[0]):
                for j in range(i + 1, P.shape[0]):
                    if np.sum(np.abs(P[i] - P[j]) > 1e-9) == 1:
                        ex += [P[i, 0], P[j, 0], None]
                        ey += [P[i, 1], P[j, 1], None]
                        ez += [P[i, 2], P[j, 2], None]
            traces.append(go.Scatter3d(x=ex, y=ey, z=ez, mode="lines", hoverinfo="skip",
                                       name=t("pic.cube_edges"), line=dict(color=col, width=2, dash="dot")))
        traces.append(go.Scatter3d(x=P[:, 0], y=P[:, 1], z=P[:, 2], mode="markers", name=name,
                                   marker=dict(size=6, color=col)))


@cached_figure
def picture_figure(t, family, k, M, rho, seed) -> go.Figure:
    d = picture(family, k, M, rho, seed)
    g, u = d["g"], d["u"]
    traces = []
    wire = sphere_wire(parallels=(-60, -30, 0, 30, 60), meridians=12, pole_gap=0.0, step=5.0)
    traces.append(go.Scatter3d(**wire, mode="lines", hoverinfo="skip", name=t("pic.sphere"),
                               line=dict(color="#C8C8C8", width=1.5)))
    _set_traces(t, family, d, traces)
    foot = float(g @ u) * u
    traces += [
        go.Scatter3d(x=[0, g[0]], y=[0, g[1]], z=[0, g[2]], mode="lines+markers+text", name=t("pic.g"),
                     text=["", "g"], textposition="bottom center", line=dict(color=COLORS["black"], width=7),
                     marker=dict(size=[0, 6], color=COLORS["black"])),
        go.Scatter3d(x=[0, u[0]], y=[0, u[1]], z=[0, u[2]], mode="lines+markers+text", name=t("pic.u"),
                     text=["", "u*"], textposition="top center", line=dict(color=COLORS["sim"], width=9),
                     marker=dict(size=[0, 8], color=COLORS["sim"])),
        go.Scatter3d(x=[g[0], foot[0]], y=[g[1], foot[1]], z=[g[2], foot[2]], mode="lines",
                     name=t("pic.proj", v=f"{d['sup']:.3f}"), line=dict(color=COLORS["ref"], width=3,
                                                                         dash="dash")),
    ]
    m = max(1.15, float(np.max(np.abs(g))) * 1.1)
    ax = dict(range=[-m, m], showbackground=False, showgrid=False, zeroline=False, showticklabels=False,
              title=dict(text=""), showspikes=False)
    return figure3d(
        traces, height=540, margin=dict(l=0, r=0, t=120, b=0),
        title=dict(text=t("pic.title"), x=0.0, xanchor="left", y=0.985, yanchor="top", yref="container",
                   font=dict(size=15)),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0.0, entrywidth=0.5,
                    entrywidthmode="fraction"),
        scene=dict(aspectmode="cube", xaxis=ax, yaxis=ax, zaxis=ax, domain=dict(x=[0, 1], y=[0, 1]),
                   camera=dict(eye=dict(x=1.0, y=0.85, z=0.55))))
