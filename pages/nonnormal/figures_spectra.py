"""The nonnormal page's spectral figures: the pseudospectra, the Jacobian's spectrum and the Euler
flow's growth (the transient-growth figures: figures.py)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ui.kit.figures import (
    COLORS,
    cached_figure,
    exact_line,
    figure,
    hline,
    line,
    point,
    sim_line,
    sim_markers,
    thin,
)
from pages.nonnormal.views import (
    A_SCALAR,
    EULER_MARKERS,
    euler_data,
    jacobian_data,
    pseudo_data,
)
from pages.nonnormal.figures import _LOW


#: the named scale as Plotly's validation spells it out (what a validated go.Contour sends)
_VIRIDIS = [list(c) for c in go.Contour(colorscale="Viridis").colorscale]


@cached_figure(max_entries=16)
def pseudo_figure(t, M: float, eps: float, grid: int):
    p = pseudo_data(M, eps, grid)
    data = [
        {
            "type": "contour",
            "x": p["re"],
            "y": p["im"],
            "z": p["logsig"],
            "name": t("fig.pseudo_levels"),
            "contours": dict(start=-3.0, end=0.5, size=0.5, coloring="lines", showlabels=True, labelfont=dict(size=11)),
            "colorscale": _VIRIDIS,
            "line": dict(width=1.8),
            "showscale": True,
            "colorbar": dict(title=dict(text=t("fig.log_sigma"), side="right"), thickness=14),
            "hovertemplate": "z = %{x:.3f} %{y:+.3f}i<br>log10 σ_min = %{z:.2f}<extra></extra>",
        },
        point(p["eig"].real, p["eig"].imag, t("fig.eigenvalues"), COLORS["usa"], "x", 12),
    ]
    if np.isfinite(p["kreiss_at"][0]):
        data.append(
            point(
                [p["kreiss_at"][0]],
                [p["kreiss_at"][1]],
                t("fig.kreiss_point"),
                COLORS["accent"],
                "diamond-open",
                11,
                marker=dict(line=dict(width=2, color=COLORS["accent"])),
            )
        )
    data.append(
        line([0.0, 0.0], [p["im"][0], p["im"][-1]], t("fig.imag_axis"), COLORS["ref"], 1.5, "dash", hoverinfo="skip")
    )
    # one figure(...) call with the whole layout: no validated update_* afterwards
    return figure(
        t("fig.x_re"),
        t("fig.y_im"),
        t("fig.pseudo_title", eps=f"{eps:g}"),
        data,
        height=560,
        hovermode="closest",
        yaxis={"scaleanchor": "x", "scaleratio": 1},
        **_LOW,
    )


@cached_figure
def jacobian_figure(t, L: int, d: int, eta: float, seed: int):
    j = jacobian_data(L, d, eta, seed)
    fig = figure(t("fig.x_depth"), t("fig.y_product"), t("fig.jac_title", d=d, eta=f"{eta:g}"), log_y=True, **_LOW)

    def ex(x):
        return np.exp(np.clip(x, -700.0, 700.0))

    exact_line(fig, j["depth"], ex(j["norm_product"]), t("fig.norm_product"), color=COLORS["bound"])
    sim_line(fig, j["depth"], ex(j["ordered"]), t("fig.ordered"), color=COLORS["exact"])
    sim_line(fig, j["depth"], ex(j["reversed"]), t("fig.reversed"), color=COLORS["usa"])
    fig.add_trace(line(j["depth"], ex(j["radius_product"]), t("fig.radius_product"), COLORS["ref"], 2, "dot"))
    return fig


def _euler_figure(t, M: float, delta: float, s_max: float, y_title: str, title: str):
    """The Euler run, its thinned marker indices and an empty figure against s."""
    e = euler_data(M, delta, s_max)
    return e, thin(e["sk"].size, EULER_MARKERS), figure(t("fig.x_s_short"), y_title, title, **_LOW)


@cached_figure
def euler_flow_figure(t, M: float, delta: float, s_max: float):
    e, idx, fig = _euler_figure(t, M, delta, s_max, t("fig.y_component"), t("fig.euler_title", delta=f"{delta:g}"))
    exact_line(fig, e["s"], e["exact"][:, 0], t("fig.x1_exact"), color=COLORS["exact"])
    exact_line(fig, e["s"], e["exact"][:, 1], t("fig.x2_exact"), color=COLORS["bound"])
    sim_markers(fig, e["sk"][idx], e["euler"][idx, 0], t("fig.x1_euler"), color=COLORS["exact"])
    sim_markers(fig, e["sk"][idx], e["euler"][idx, 1], t("fig.x2_euler"), color=COLORS["bound"], symbol="square")
    return fig


@cached_figure
def euler_scalar_figure(t, M: float, delta: float, s_max: float):
    e, idx, fig = _euler_figure(t, M, delta, s_max, t("fig.y_V"), t("fig.scalar_title", ad=f"{A_SCALAR * delta:g}"))
    exact_line(fig, e["s"], e["sc_exact"], t("fig.V_exact"), color=COLORS["exact"])
    sim_markers(fig, e["sc_s"][idx], e["sc_euler"][idx], t("fig.V_euler"), color=COLORS["sim"])
    fig.add_shape(hline(0.0))
    return fig
