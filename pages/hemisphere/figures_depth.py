"""The hemisphere page's curves over depth: the smallest height, the diameter, the clusters and the
phase portraits (the spheres: figures.py)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from sim import hemisphere as hs
from ui.kit.figures import (
    COLORS,
    cached_figure,
    figure,
    hline,
    sim_line,
    sim_markers,
    thin,
)
from pages.hemisphere.views import DIAM_POINTS, contrast_data, hemi_data


@cached_figure
def rmin_figure(t, *hp):
    h = hemi_data(*hp)
    # the title states monotonicity only where the theorem gives it (a cap under 90°)
    title = t("fig.rmin_title") if hp[5] < 90 else t("fig.rmin_title_wide")
    fig = figure(t("fig.x_depth_short"), t("fig.y_rmin"), title, height=320)
    k = thin(h["tau"].size, DIAM_POINTS)
    r0 = float(h["rmin"][0])
    shapes = [hline(r0, color=COLORS["bound"], width=2)]
    if hp[5] < 90:
        shapes.append(hline(0.0, dash="dot"))
    sim_markers(fig, h["tau"][k], h["rmin"][k], t("fig.rmin_sim"), color=COLORS["sa"])
    fig.update_layout(
        showlegend=False,
        shapes=shapes,
        annotations=[
            dict(
                text=t("fig.rmin0_line"),
                showarrow=False,
                xref="x domain",
                x=1,
                xanchor="right",
                yref="y",
                y=r0,
                yanchor="top",
            )
        ],
    )
    return fig


@cached_figure
def diam_figure(t, *hp):
    h = hemi_data(*hp)
    fig = figure(t("fig.x_depth_short"), t("fig.y_diam"), t("fig.diam_title"), log_y=True, height=320)
    sim_markers(
        fig, h["diam_tau"], np.maximum(h["diam"], 1e-17), t("fig.diam_sim"), color=COLORS["usa"], symbol="square"
    )
    fig.update_layout(showlegend=False)
    return fig


@cached_figure
def clusters_figure(t, *cp):
    c = contrast_data(*cp)
    fig = figure(t("fig.x_depth_short"), t("fig.y_clusters"), t("fig.clusters_title"), height=340)
    sim_line(fig, c["tau"], c["clusters"], t("fig.clusters_sim"), color=COLORS["sa"], line={"shape": "hv"})
    fig.update_layout(showlegend=False)
    fig.update_yaxes(rangemode="tozero")
    return fig


# --------------------------------------------------------------------------- phase diagram
def phase_figures(pd: hs.PhaseDiagram, t) -> tuple[go.Figure, go.Figure]:
    figs = []
    # the median count starts near n = 32; the colour scale stops at 8 so that 1..8 stay readable
    for z, key, scale, zmin, zmax in (
        (pd.one_cluster, "one", "Blues", 0.0, 1.0),
        (pd.median_clusters, "median", "Oranges", 1.0, 8.0),
    ):
        fig = figure(t("phase.x"), t("phase.y"), t(f"phase.{key}_title"), height=420)
        fig.update_layout(hovermode="closest")
        fig.add_trace(
            go.Heatmap(
                x=pd.times,
                y=pd.betas,
                z=z,
                colorscale=scale,
                zmin=zmin,
                zmax=zmax,
                colorbar=dict(title=dict(text=t(f"phase.{key}_bar"), side="right")),
                hovertemplate="τ=%{x:.3g}<br>β=%{y:.3g}<br>%{z:.3g}<extra></extra>",
            )
        )
        figs.append(fig)
    return figs[0], figs[1]
