"""Gaussian width: the figure builders of pages/gaussian_width/page.py (their data: pages/gaussian_width/views.py)."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from ui.kit.figures import (
    COLORS,
    cached_figure,
    exact_line,
    figure,
    histogram,
    line,
    markers,
    point,
    log_ticks,
    tall_legend,
)
from pages.gaussian_width.views import (
    LOG_TICKS,
    SIGMA_BAR,
    TAIL_MIN_COUNT,
    focus,
    focus_args,
    overview,
    sweep,
    sweep_args,
    tail,
)


FAMILY_COLORS = {
    "subspace": COLORS["other"],
    "directions": COLORS["accent"],
    "hypercube": COLORS["sky"],
    "circle": COLORS["black"],
    "adaptive": COLORS["usa"],
    "fixed": COLORS["sa"],
}


# --------------------------------------------------------------------------- drawing helpers
def _mc_trace(fig, x, y, se, name, color, symbol="circle", **kw):
    """Monte Carlo means with error bars of ± SIGMA_BAR standard errors."""
    fig.add_trace(
        markers(
            x,
            y,
            name,
            color,
            symbol,
            size=8,
            error=SIGMA_BAR * np.asarray(se),
            error_y=dict(thickness=1.2, width=4),
            **kw,
        )
    )


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
    fig = figure(t(f"fig.x_{var}"), t("fig.y_width"), t(f"fig.sweep_title.{family}"), log_x=log_x, log_y=log_y)
    if log_y:
        fig.update_yaxes(**log_ticks(LOG_TICKS))
    exact_line(fig, s["x"], s["exact"], t(f"fig.exact.{family}"))
    if np.isnan(s["exact"]).any():  # directions beyond M = D: the exact line stops at M = D
        fig.add_trace(
            line([D, D], [0.0, float(np.nanmax(s["hi"]))], t("fig.M_equals_D"), COLORS["ref"], width=1, dash="dot")
        )
    _bound_line(fig, s["x"], s["hi"], t(f"fig.upper.{family}"))
    _bound_line(fig, s["x"], s["lo"], t(f"fig.lower.{family}"), dash="dash")
    if "count" in s:
        _bound_line(fig, s["x"], s["count"], t("fig.count_bound"), color=COLORS["ref"], dash="dashdot")
    _mc_trace(fig, s["x_mc"], s["mc"], s["se"], t("fig.mc_points"), COLORS["sim"])
    fig.add_trace(
        point(
            [cur],
            [f["mean"]],
            t("fig.your_value", var=var, v=cur, n=f["n"]),
            COLORS["sim"],
            error_y=dict(type="data", array=[SIGMA_BAR * f["se"]], color=COLORS["sim"], thickness=1.5, width=6),
        )
    )
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
    names = {
        "adaptive": t("fig.ov_adaptive"),
        "hypercube": t("fig.ov_hypercube"),
        "subspace": t("fig.ov_subspace", k=k),
        "fixed": t("fig.ov_fixed"),
    }
    symbols = {"adaptive": "circle", "hypercube": "square", "subspace": "diamond", "fixed": "triangle-up"}
    for name in ("adaptive", "hypercube", "subspace", "fixed"):
        x, y = o[name]
        col = FAMILY_COLORS[name]
        exact_line(fig, x, y, names[name], color=col, legendgroup=name)
        xm, ym, se = o[name + "_mc"]
        _mc_trace(
            fig, xm, ym, se, t("fig.ov_mc"), col, symbol=symbols[name], legendgroup=name, showlegend=(name == "fixed")
        )
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
    _mc_trace(fig, d["r_mc"][keep], d["emp"][keep], d["se"][keep], t("fig.tail_mc", n=d["n"]), COLORS["sim"])
    fig.update_yaxes(range=[math.log10(floor), 0.15])
    tall_legend(fig, 1, height=420)
    return fig
