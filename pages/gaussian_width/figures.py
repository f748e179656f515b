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
    figure3d,
    histogram,
    line,
    markers,
    point,
    sphere_wire,
    log_ticks,
    tall_legend,
)
from pages.gaussian_width.views import (
    FAMILY_COLORS,
    LOG_TICKS,
    SIGMA_BAR,
    TAIL_MIN_COUNT,
    focus,
    focus_args,
    overview,
    picture,
    sweep,
    sweep_args,
    tail,
)


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


def _set_traces(t, family: str, d: dict, traces: list) -> None:
    """The set of directions of the picture: a pair of points, a circle, points or cube vertices
    (with the cube's edges), or the whole sphere (the wireframe ``traces[0]`` recoloured)."""
    col = FAMILY_COLORS[family]
    name = t(f"pic.set.{family}")
    if "basis" in d:
        B = d["basis"]
        if B.shape[1] == 1:
            q = B[:, 0]
            traces.append(
                go.Scatter3d(
                    x=[-q[0], q[0]],
                    y=[-q[1], q[1]],
                    z=[-q[2], q[2]],
                    mode="markers",
                    name=name,
                    marker=dict(size=7, color=col),
                )
            )
        elif B.shape[1] == 2:
            th = np.linspace(0, 2 * np.pi, 181)
            c = np.outer(B[:, 0], np.cos(th)) + np.outer(B[:, 1], np.sin(th))
            traces.append(go.Scatter3d(x=c[0], y=c[1], z=c[2], mode="lines", name=name, line=dict(color=col, width=7)))
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
            traces.append(
                go.Scatter3d(
                    x=ex,
                    y=ey,
                    z=ez,
                    mode="lines",
                    hoverinfo="skip",
                    name=t("pic.cube_edges"),
                    line=dict(color=col, width=2, dash="dot"),
                )
            )
        traces.append(
            go.Scatter3d(x=P[:, 0], y=P[:, 1], z=P[:, 2], mode="markers", name=name, marker=dict(size=6, color=col))
        )


def _arrow(v, name: str, label: str, where: str, color: str, width: float, tip: float) -> go.Scatter3d:
    """The vector ``v`` from the origin: a line of ``width`` with a marker of size ``tip`` at its end,
    labelled ``label`` at ``where``."""
    return go.Scatter3d(
        x=[0, v[0]],
        y=[0, v[1]],
        z=[0, v[2]],
        mode="lines+markers+text",
        name=name,
        text=["", label],
        textposition=where,
        line=dict(color=color, width=width),
        marker=dict(size=[0, tip], color=color),
    )


@cached_figure
def picture_figure(t, family, k, M, rho, seed) -> go.Figure:
    d = picture(family, k, M, rho, seed)
    g, u = d["g"], d["u"]
    traces = []
    wire = sphere_wire(parallels=(-60, -30, 0, 30, 60), meridians=12, pole_gap=0.0, step=5.0)
    traces.append(
        go.Scatter3d(
            **wire, mode="lines", hoverinfo="skip", name=t("pic.sphere"), line=dict(color="#C8C8C8", width=1.5)
        )
    )
    _set_traces(t, family, d, traces)
    foot = float(g @ u) * u
    traces += [
        _arrow(g, t("pic.g"), "g", "bottom center", COLORS["black"], 7, 6),
        _arrow(u, t("pic.u"), "u*", "top center", COLORS["sim"], 9, 8),
        go.Scatter3d(
            x=[g[0], foot[0]],
            y=[g[1], foot[1]],
            z=[g[2], foot[2]],
            mode="lines",
            name=t("pic.proj", v=f"{d['sup']:.3f}"),
            line=dict(color=COLORS["ref"], width=3, dash="dash"),
        ),
    ]
    m = max(1.15, float(np.max(np.abs(g))) * 1.1)
    ax = dict(
        range=[-m, m],
        showbackground=False,
        showgrid=False,
        zeroline=False,
        showticklabels=False,
        title=dict(text=""),
        showspikes=False,
    )
    return figure3d(
        traces,
        height=540,
        margin=dict(l=0, r=0, t=120, b=0),
        title=dict(
            text=t("pic.title"), x=0.0, xanchor="left", y=0.985, yanchor="top", yref="container", font=dict(size=15)
        ),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0.0, entrywidth=0.5, entrywidthmode="fraction"),
        scene=dict(
            aspectmode="cube",
            xaxis=ax,
            yaxis=ax,
            zaxis=ax,
            domain=dict(x=[0, 1], y=[0, 1]),
            camera=dict(eye=dict(x=1.0, y=0.85, z=0.55)),
        ),
    )
