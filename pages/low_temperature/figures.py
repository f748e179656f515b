"""Figures of the page "Low temperature: concentration, then drift" (§9); their data: pages/low_temperature/views.py.

The builders (``@cached_figure``, signature ``(t, *params)``) read the adapters' dicts and draw with the
shared vocabulary of :mod:`ui.kit.figures` (the seeds' spread is a ``band``, the 3-D scene a
``figure3d`` around ``sphere_wire``).
"""

from __future__ import annotations

import math

import numpy as np

from ui.kit.figures import (
    COLORS,
    axis_names,
    band,
    cached_figure,
    figure,
    figure3d,
    line,
    markers,
    sphere_scene,
    sphere_wire,
    tall_legend,
    typed,
    vline,
)
from pages.low_temperature.views import BETA_COLORS, lowtemp_data, rate_data


# --------------------------------------------------------------------------- figures
def _beta_label(beta: float) -> str:
    return f"β = {beta:.4g}"


@cached_figure
def w2_figure(t, model, gap, log10_beta, n, seeds, T, dt):
    d = lowtemp_data(model, gap, log10_beta, n, seeds, T, dt)
    x = d["t"]
    data = []
    for b, beta in enumerate(d["betas"]):
        col = BETA_COLORS[b]
        w = d["w2"][b]
        data += [
            *band(x, w.min(axis=0), w.max(axis=0), _beta_label(beta), col, alpha=0.15),
            line(x, w.mean(axis=0), t("fig.w2_mean", beta=_beta_label(beta)), col, width=2, dash="dash"),
        ]
        plateau = np.mean(np.sqrt(4.0 * d["k"][b] / n)) if model == "axis" else 0.0
        if plateau > 0:  # k = 0 for every seed: no plateau (log axis)
            data.append(markers([x[-1]], [plateau], t("fig.k_marker", beta=_beta_label(beta)), col, symbol="x"))
    return tall_legend(figure(t("fig.x_depth"), t("fig.y_w2"), t("fig.w2_title"), data, log_y=True))


@cached_figure
def dist_figure(t, model, gap, log10_beta, n, seeds, T, dt):
    d = lowtemp_data(model, gap, log10_beta, n, seeds, T, dt)
    x = d["t"][1:]  # the distance is 0 at τ = 0
    floor = 1e-16
    data, shapes = [], []
    for b, beta in enumerate(d["betas"]):
        col = BETA_COLORS[b]
        D = np.maximum(d["dist"][b][:, 1:], floor)
        data += [
            *band(x, D.min(axis=0), D.max(axis=0), _beta_label(beta), col, alpha=0.15),
            line(x, D.mean(axis=0), t("fig.dist_mean", beta=_beta_label(beta)), col, width=2, dash="dash"),
        ]
        lb = math.log(beta)
        if 0.0 < lb < d["t"][-1]:
            shapes.append(vline(lb, col, dash="dot"))
    if shapes:  # what the dotted lines are, once
        data.append(line([None], [None], t("fig.log_beta_key"), COLORS["ref"], width=1, dash="dot"))
    return tall_legend(figure(t("fig.x_depth"), t("fig.y_dist"), t("fig.dist_title"), data, log_y=True, shapes=shapes))


@cached_figure
def rate_figure(t, model, gap, n, seeds, dt):
    r = rate_data(model, gap, n, seeds, dt)
    # a seed's distance can reach rounding (~1e-16) at large β: the error bars then stretch the axis over
    # many decades, which the house tick rule (it sees the markers only) would label one by one
    ends = np.concatenate([r["lo"], r["hi"], r["C"] * r["rate"]])
    pos = ends[ends > 0]
    span = math.log10(pos.max() / pos.min()) if pos.size else 0.0
    return figure(
        t("fig.x_beta"),
        t("fig.y_dist_rate", depth=f"{r['depth']:.3g}"),
        t("fig.rate_title"),
        [
            line(r["betas"], r["C"] * r["rate"], t("fig.rate_line"), COLORS["bound"]),
            markers(
                r["betas"],
                r["mean"],
                t("fig.rate_sim"),
                error=(r["hi"] - r["mean"], r["mean"] - r["lo"]),
                error_y=dict(thickness=1),
            ),
        ],
        log_x=True,
        log_y=True,
        yaxis=dict(dtick=math.ceil(span / 6)) if span > 7 else None,
    )


#: parallels of the wireframe sphere (degrees): with the equator, where the "plane" model gathers
WIRE_LATITUDES = (-60, -30, 0, 30, 60)


def _xyz(P: np.ndarray) -> dict:
    return {c: typed(P[:, i], np.float32) for i, c in enumerate("xyz")}


def _scatter3d(xyz: dict, mode: str, name: str, **kw) -> dict:
    return {"type": "scatter3d", **xyz, "mode": mode, "name": name, **kw}


def _eigenspace(Q1: np.ndarray) -> np.ndarray:
    """Points drawing the dominant eigenspace: a diameter (1-D) or a great circle (2-D)."""
    if Q1.shape[1] == 1:
        return np.outer([-1.3, 1.3], Q1[:, 0])
    th = np.linspace(0.0, 2 * np.pi, 121)
    return np.outer(np.cos(th), Q1[:, 0]) + np.outer(np.sin(th), Q1[:, 1])


@cached_figure
def scene_figure(t, model, gap, log10_beta, n, seeds, T, dt):
    d = lowtemp_data(model, gap, log10_beta, n, seeds, T, dt)
    sc = d["scene"]
    marker = dict(size=4, line=dict(width=0))
    traces = [
        _scatter3d(
            sphere_wire(WIRE_LATITUDES, meridians=12, pole_gap=0.0, step=5.0),
            "lines",
            "sphere",
            hoverinfo="skip",
            showlegend=False,
            line=dict(color="#D9E4EE", width=1.5),
        ),
        _scatter3d(
            _xyz(_eigenspace(d["Q1"])),
            "lines",
            t("fig3d.eigenspace"),
            line=dict(color=COLORS["bound"], width=6),
            hoverinfo="skip",
        ),
    ]
    if model == "drift":
        traces.append(
            _scatter3d(
                _xyz(np.outer([-1.3, 1.3], d["v_axis"])),
                "lines",
                t("fig3d.v_axis"),
                hoverinfo="skip",
                line=dict(color=COLORS["usa"], width=5, dash="dash"),
            )
        )
    traces += [
        _scatter3d(
            _xyz(sc["start"]), "markers", t("fig3d.start"), marker=dict(color=COLORS["ref"], opacity=0.45, **marker)
        ),
        _scatter3d(
            _xyz(sc["target"]),
            "markers",
            t("fig3d.target"),
            marker=dict(color=COLORS["bound"], symbol="diamond-open", size=6),
        ),
    ]
    if sc["mid"] is not None:
        traces.append(
            _scatter3d(
                _xyz(sc["mid"]),
                "markers",
                t("fig3d.mid", tau=f"{sc['t_mid']:.3g}"),
                marker=dict(color=COLORS["other"], **marker),
            )
        )
    traces.append(
        _scatter3d(
            _xyz(sc["end"]),
            "markers",
            t("fig3d.end", tau=f"{sc['t_end']:.3g}"),
            marker=dict(color=COLORS["sa"], **{**marker, "size": 7}),
        )
    )
    # legend below the scene: its 4-6 entries wrap on a narrow column and would run into the title
    return figure3d(
        traces,
        height=600,
        margin=dict(l=0, r=0, t=40, b=10),
        title=dict(text=t("fig3d.title", beta=_beta_label(d["betas"][-1])), x=0.0, xanchor="left", font=dict(size=15)),
        legend=dict(orientation="h", yanchor="top", y=0.16, x=0.0),
        # the axes named inside the scene at their positive ends: Plotly's own title of the vertical
        # axis fell outside the drawn area at this camera (z₃ missing at 390 and at 1400 px)
        scene=sphere_scene(
            1.35,
            0.18,
            ("", "", ""),
            (1.35, 1.15, 0.7),
            annotations=axis_names((1.3, 0.0, 0.0, "z₁"), (0.0, 1.3, 0.0, "z₂"), (0.0, 0.0, 1.3, "z₃")),
        ),
    )
