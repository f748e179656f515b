"""The gaussian_width page's picture: the set in three dimensions with g, u* and the width
(its data: picture() here; the other figures: figures.py)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from sim import gaussian_width as gw
from ui.kit.compute import cached
from ui.kit.figures import COLORS, cached_figure, figure3d, sphere_wire
from pages.gaussian_width.figures import FAMILY_COLORS
from pages.gaussian_width.views import _params, random_layout


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


PICTURE_RANDOM_MAX = 300  # random directions drawn in the 3-D picture at most


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
