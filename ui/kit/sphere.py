"""The unit sphere in 3-D figures: its light wireframe (:func:`sphere_wire`) and the scene that
frames tokens on it (:func:`sphere_scene`); used through :mod:`ui.kit.figures`."""

from __future__ import annotations

import functools

import numpy as np

from ui.kit.frozen import typed


@functools.cache
def sphere_wire(
    parallels: tuple = (-60, -30, 30, 60), meridians: int = 8, pole_gap: float = 15.0, step: float = 3.75
) -> dict:
    """The unit sphere as a light wireframe: ``x, y, z`` (float32, typed) of one NaN-separated line.

    Parallels at the latitudes ``parallels`` (degrees), ``meridians`` half-meridians evenly spaced in
    longitude that stop ``pole_gap`` degrees short of the poles (where clusters gather), points every
    ``step`` degrees. Shared and read-only: pass it as ``go.Scatter3d(**sphere_wire(), ...)``.
    (A translucent surface looks softer but costs the browser far more CPU per slider change:
    software WebGL redraws a 3-D scene from scratch.)"""
    th = np.radians(np.linspace(0.0, 360.0, int(round(360.0 / step)) + 1))
    gap = np.full((1, 3), np.nan)
    parts = []
    for lat in np.radians(parallels):
        parts += [
            np.column_stack([np.cos(lat) * np.cos(th), np.cos(lat) * np.sin(th), np.full_like(th, np.sin(lat))]),
            gap,
        ]
    top = 90.0 - pole_gap
    lat = np.radians(np.linspace(-top, top, int(round(2 * top / step)) + 1))
    for lon in np.radians(np.arange(meridians) * 360.0 / meridians):
        parts += [np.column_stack([np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon), np.sin(lat)]), gap]
    P = np.concatenate(parts)
    return {c: typed(P[:, i], np.float32) for i, c in enumerate("xyz")}


#: behind an axis name in a 3-D scene: tokens pass behind it as the figure plays (readable over them)
LABEL_BG = "rgba(255,255,255,0.8)"


def axis_names(*named: tuple) -> list[dict]:
    """Scene annotations naming the axes inside the scene, each ``(x, y, z, text)``: plotly.js puts
    a 3-D axis title on an edge of the scene's cube that, at the cameras these figures use, can fall
    outside the drawn area (missing on a phone, on its side at the canvas's edge on a laptop)."""
    return [
        dict(
            x=x,
            y=y,
            z=z,
            text=text,
            showarrow=False,
            font=dict(size=15),
            bgcolor=LABEL_BG,
            xanchor="center",
            yanchor="middle",
        )
        for x, y, z, text in named
    ]


def sphere_scene(half: float, bottom: float, titles: tuple, eye: tuple, **more) -> dict:
    """The ``scene`` of a figure of tokens on the unit sphere: a cube of half-width ``half``, a light
    grid and no ticks or background (tick values carry no information on the sphere), the axes
    titled ``titles`` (x, y, z), the camera at ``eye``, the scene from ``bottom`` to the top of
    the figure; ``more``: other scene entries (``annotations``)."""
    ax = dict(range=[-half, half], showbackground=False, gridcolor="#E5E5E5", zeroline=False, showticklabels=False)
    x, y, z = (dict(title=dict(text=text), **ax) for text in titles)
    return dict(
        aspectmode="cube",
        domain=dict(x=[0.0, 1.0], y=[bottom, 1.0]),
        xaxis=x,
        yaxis=y,
        zaxis=z,
        **more,
        camera=dict(eye=dict(zip("xyz", eye))),
    )
