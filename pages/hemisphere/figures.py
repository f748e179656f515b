"""Hemisphere clustering: the figure builders of pages/hemisphere/page.py (their data: pages/hemisphere/views.py)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ui.kit.figures import (
    COLORS,
    SEQUENCE,
    Frozen,
    animation,
    axis_names,
    cached_figure,
    figure3d,
    sphere_scene,
    sphere_wire,
    typed,
)
from pages.hemisphere.views import contrast_data, hemi_data


# --------------------------------------------------------------------------- 3-D figure
def _f32(a):
    """Drawing data as float32 in Plotly's typed-array form (no per-array validation, half the bytes)."""
    return typed(a, np.float32)


def _paths(lines: np.ndarray):
    """(records, n, 3) -> x, y, z of all token paths, separated by NaN (one trace)."""
    R, n, _ = lines.shape
    seg = np.concatenate([lines.transpose(1, 0, 2), np.full((n, 1, 3), np.nan, np.float32)], axis=1)
    seg = seg.reshape(-1, 3)
    return _f32(seg[:, 0]), _f32(seg[:, 1]), _f32(seg[:, 2])


def _sphere_figure(data: dict, labels: dict, color: dict, show_w: bool) -> Frozen:
    """Tokens on the sphere (a wireframe), their paths, w and the boundary circle; frames over depth.

    ``show_w=False`` (the contrast run) leaves out w and the hemisphere boundary: that theorem does
    not apply there.

    Browser cost: Streamlit derives a chart's element id from its spec (even with a key), so a
    changed figure is a new chart: the browser builds a fresh WebGL scene (context, ~50 shader
    programs) for each 3-D figure that changed. Animation frames and paths hardly matter there
    (12 instead of 48 frames, or no paths at all: no measurable difference in headless Chromium);
    a translucent surface did (software WebGL redraws it at a high CPU cost on every slider change),
    hence the wireframe.
    """
    fr, ftau = data["frames"], data["frame_tau"]
    xyz = [{c: _f32(fr[k, :, i]) for i, c in enumerate("xyz")} for k in range(fr.shape[0])]
    th = np.linspace(0.0, 2 * np.pi, 121)
    traces = [
        go.Scatter3d(
            **sphere_wire(),
            mode="lines",
            hoverinfo="skip",
            name=labels["sphere"],
            showlegend=False,
            line=dict(color="#C6DBEF", width=1.5),
        ),
        go.Scatter3d(
            x=_f32(np.cos(th)),
            y=_f32(np.sin(th)),
            z=_f32(np.zeros_like(th)),
            mode="lines",
            hoverinfo="skip",
            line=dict(color=COLORS["bound"], width=5),
            name=labels["boundary"],
            visible=show_w,
        ),
        go.Scatter3d(
            x=[0.0, 0.0],
            y=[0.0, 0.0],
            z=[0.0, 1.12],  # inside the scene's cube (half-width 1.15): beyond it the label "w" was clipped away
            mode="lines+text",
            text=["", "w"],
            textposition="top center",
            hoverinfo="skip",
            visible=show_w,
            line=dict(color=COLORS["usa"], width=7),
            name=labels["w"],
        ),
        go.Scatter3d(
            **dict(zip("xyz", _paths(data["lines"]))),
            mode="lines",
            hoverinfo="skip",
            opacity=0.35,
            line=dict(color=COLORS["ref"], width=2),
            name=labels["paths"],
        ),
        # coloured by cluster: the legend would show one arbitrary cluster colour; the title says it
        go.Scatter3d(
            **xyz[0],
            mode="markers",
            name=labels["tokens"],
            showlegend="colorscale" not in color,
            marker=dict(size=5, line=dict(width=0), **color),
        ),
    ]
    # plain frame dicts: Plotly would validate 2 x 48 frames one by one (see ui.kit.figures.Frozen)
    frames = [{"data": [{"type": "scatter3d", **xyz[k]}], "traces": [4], "name": f"{k}"} for k in range(fr.shape[0])]
    # no tick values (sphere_scene): that also keeps the animation controls below the scene free of clutter
    fig = figure3d(
        traces,
        height=650,
        margin=dict(l=0, r=0, t=100, b=70),
        # the title pinned to the top edge (Plotly centres it in the 100 px margin, where the legend goes)
        title=dict(
            text=labels["title"],
            x=0.0,
            xanchor="left",
            y=1.0 - 8.0 / 650,
            yanchor="top",
            yref="container",
            font=dict(size=15),
        ),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0.0),
        # every axis named inside the scene: Plotly's own titles fell outside the drawn area at this
        # camera (z₂ missing; z₃ missing on a phone and turned on its side at the left edge on a
        # laptop). The horizontal axes at their positive ends; the vertical one below the sphere,
        # where no token is (w is named at its top end)
        scene=sphere_scene(
            1.15,
            0.1,
            ("", "", ""),
            (1.2, 1.05, 0.65),
            annotations=axis_names(
                (1.12, 0.0, 0.0, labels["x"]), (0.0, 1.12, 0.0, labels["y"]), (0.0, 0.0, -1.12, labels["z"])
            ),
        ),
        # step labels feed the "depth τ = …" read-out; the tick labels under the slider (odd values
        # at every frame) are hidden by a transparent slider font
        # the buttons on their own row above a full-width slider: beside it (the slider from 24 % of the
        # width) the buttons covered the slider's handle on a phone
        **animation(
            [f"{k}" for k in range(fr.shape[0])],
            [f"{x:.3g}" for x in ftau],
            labels["play"],
            labels["pause"],
            labels["slider"],
            duration=90,
            redraw=True,
            y=0.1,
            slider_x=0.0,
            slider_y=0.045,
            currentvalue=dict(xanchor="right"),
            font=dict(color="rgba(0,0,0,0)"),
            ticklen=3,
        ),
    )
    return Frozen(fig, frames=frames)


def _fig_labels(t, title_key: str, projected: bool) -> dict:
    keys = ("sphere", "boundary", "w", "paths", "tokens", "play", "pause", "slider")
    lab = {k: t(f"fig3d.{k}") for k in keys}
    lab["title"] = t(title_key)
    axes = ("xp", "yp", "zp") if projected else ("x", "y", "z")
    lab.update(x=t(f"fig3d.{axes[0]}"), y=t(f"fig3d.{axes[1]}"), z=t(f"fig3d.{axes[2]}"))
    return lab


def _cluster_colors(lab: np.ndarray) -> dict:
    """Marker colours by cluster: SEQUENCE[label mod 8] through a stepped colour scale.

    The same colours as a list of colour strings, but one typed array instead of n strings that
    Plotly would validate one by one."""
    k = len(SEQUENCE)
    scale = [[pos, c] for i, c in enumerate(SEQUENCE) for pos in (i / k, (i + 1) / k)]
    return {"color": _f32(lab % k), "colorscale": scale, "cmin": -0.5, "cmax": k - 0.5, "showscale": False}


# --------------------------------------------------------------------------- figures
# Built once per (language, parameters) and shared read-only: see ui.kit.figures.cached_figure.
# ``hp``: the hemisphere run's parameters (``HP``, as ``hemi_args`` gives them);
# ``cp``: the contrast run's (``CP``, as ``contrast_args`` gives them).
@cached_figure(max_entries=16)
def hemi_sphere_figure(t, *hp):
    h = hemi_data(*hp)
    return _sphere_figure(h, _fig_labels(t, "fig3d.title_hemi", hp[1] > 3), {"color": COLORS["sa"]}, True)


@cached_figure(max_entries=16)
def contrast_sphere_figure(t, *cp):
    c = contrast_data(*cp)
    return _sphere_figure(c, _fig_labels(t, "fig3d.title_contrast", cp[1] > 3), _cluster_colors(c["labels"]), False)
