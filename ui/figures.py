"""Figure conventions shared by every page.

Exact / theory: solid lines. Simulation: markers or dashed lines. The same
colour means the same thing on every page (Okabe–Ito, colour-blind safe).
"""
from __future__ import annotations

import base64
import functools
import math

import numpy as np
import plotly.graph_objects as go
import streamlit as st
from plotly.basedatatypes import BaseFigure

# Okabe–Ito palette, by role.
COLORS = {
    "sa": "#0072B2",       # blue: normalised attention / the main exact curve
    "usa": "#D55E00",      # vermillion: unnormalised attention / the contrast
    "exact": "#0072B2",
    "sim": "#D55E00",
    "bound": "#009E73",    # bluish green: bounds and envelopes
    "ref": "#7F7F7F",      # grey: reference lines (slopes, eigenvalue-only predictions)
    "accent": "#CC79A7",   # reddish purple
    "other": "#E69F00",    # orange
    "sky": "#56B4E9",
    "black": "#000000",
}
SEQUENCE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]
CONFIG = {"displaylogo": False, "responsive": True,
          "modeBarButtonsToRemove": ["lasso2d", "select2d"]}


# Glyphs the text font lacks (‖ ⟨ ⟩ √ …) fall through this list in order: a math font before the
# CJK one keeps them proportional (the CJK font draws them full-width, e.g. "‖ e ‖ ₂").
FONT = ("Source Sans Pro, Source Sans, Cambria Math, STIX Two Math, DejaVu Math TeX Gyre, "
        "Noto Sans CJK SC, Microsoft YaHei, PingFang SC, sans-serif")
_AXIS = dict(showline=True, linecolor="#888", mirror=True, zeroline=False, gridcolor="#E5E5E5",
             ticks="outside", tickcolor="#888", exponentformat="power", automargin=True)
# A small template instead of "plotly_white": that one carries defaults for every trace type
# and costs ~50 ms per figure to copy and validate, which dominated a page rerun.
TEMPLATE = {"layout": {"paper_bgcolor": "white", "plot_bgcolor": "white", "colorway": SEQUENCE,
                        "font": {"family": FONT, "size": 13},
                        "xaxis": _AXIS, "yaxis": _AXIS, "hoverlabel": {"namelength": -1}}}


# Log axes: labels at decades only, unlabelled minor ticks (and faint grid lines) in between.
# A page whose log axis spans less than about a decade sets ``dtick="D2"`` on it (1, 2, 5 labels).
_LOG = {"type": "log", "dtick": 1,
        "minor": {"ticks": "outside", "ticklen": 3, "tickcolor": "#AAA", "showgrid": True,
                  "gridcolor": "#F3F3F3"}}


def figure(x_title: str, y_title: str, title: str | None = None, *, log_x: bool = False,
           log_y: bool = False, height: int = 440) -> go.Figure:
    """An empty figure with labelled axes in the house style."""
    # Title at the top of the figure, legend right below it and above the plot area, so that
    # neither can collide with a long axis title.
    return go.Figure(layout={
        "template": TEMPLATE, "height": height,
        "title": {"text": title, "x": 0.0, "xanchor": "left", "y": 0.985, "yanchor": "top",
                  "yref": "container", "font": {"size": 15}} if title else None,
        # b=56: the x-axis title and tick labels need ~53-56 px; starting below that makes automargin
        # grow it after the first layout, and Plotly.js then draws the figure twice (measured on depth_sum).
        "margin": {"l": 60, "r": 20, "t": 95 if title else 60, "b": 56},
        "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.02, "xanchor": "left", "x": 0.0,
                   "bgcolor": "rgba(255,255,255,0.6)"},
        "hovermode": "x unified",
        "xaxis": {"title": {"text": x_title}, **(_LOG if log_x else {"type": "linear"})},
        "yaxis": {"title": {"text": y_title}, **(_LOG if log_y else {"type": "linear"})},
    })


def exact_line(fig: go.Figure, x, y, name: str, color: str = COLORS["exact"], **kw) -> None:
    """Theory: a solid line (``line=dict(...)`` entries override the defaults)."""
    line = {"color": color, "width": 2.5, **kw.pop("line", {})}
    fig.add_trace(go.Scatter(x=np.asarray(x), y=np.asarray(y), name=name, mode="lines", line=line, **kw))


def sim_markers(fig: go.Figure, x, y, name: str, color: str = COLORS["sim"], symbol: str = "circle",
                **kw) -> None:
    """Simulation: markers (open symbols so the exact line shows through)."""
    fig.add_trace(go.Scatter(x=np.asarray(x), y=np.asarray(y), name=name, mode="markers",
                             marker=dict(color=color, size=7, symbol=f"{symbol}-open",
                                         line=dict(width=1.5, color=color)), **kw))


def sim_line(fig: go.Figure, x, y, name: str, color: str = COLORS["sim"], **kw) -> None:
    """Simulation drawn as a dashed line (for dense data)."""
    fig.add_trace(go.Scatter(x=np.asarray(x), y=np.asarray(y), name=name, mode="lines",
                             line=dict(color=color, width=2, dash="dash"), **kw))


def thin(n: int, max_points: int) -> np.ndarray:
    """Indices of at most ``max_points`` evenly spread samples of ``range(n)``, ends kept."""
    if n <= max_points:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, max_points).round().astype(int))


def fit_log_ticks(fig: go.Figure) -> go.Figure:
    """Fit the labels of log axes to their span, in place.

    Decade-only labels leave an axis that spans less than ~1.5 decades with one label or none,
    and crowd one that spans many decades. Short axes get labels at 1, 2, 5 × 10ᵏ (under ~0.6
    decade: Plotly's automatic ticks), long ones every k-th decade (at most ~8 labels). Only
    axes still on the house default (``dtick=1``, no ``tickvals``) are touched."""
    for name, coord in (("xaxis", "x"), ("yaxis", "y")):
        ax = fig.layout[name]
        if ax.type != "log" or ax.tickvals is not None or ax.dtick != 1:
            continue
        if ax.range is not None:
            span = abs(ax.range[1] - ax.range[0])
        else:
            lo, hi = np.inf, -np.inf
            for tr in fig.data:
                vals = getattr(tr, coord, None)
                if vals is None or getattr(tr, coord + "axis", coord) not in (None, coord):
                    continue
                try:
                    v = np.asarray(vals, dtype=float).ravel()
                except (TypeError, ValueError):  # categories or text
                    continue
                v = v[np.isfinite(v) & (v > 0)]
                if v.size:
                    lo, hi = min(lo, v.min()), max(hi, v.max())
            span = np.log10(hi / lo) if hi > lo else 0.0
        if span < 1.5:
            ax.dtick = "D2" if span >= 0.6 else None  # Plotly's own choice on a short range
        elif span > 7:
            ax.dtick = math.ceil(span / 7)  # at most ~8 labels: every 2nd, 3rd … decade
    return fig


class Frozen(BaseFigure):
    """A finished figure, serialised once and afterwards only read.

    ``st.plotly_chart`` turns a figure into JSON through ``to_dict()``, which deep-copies every
    trace, layout entry and animation frame and re-encodes its arrays — on every rerun of every
    session, ~10–60 ms per figure here (more with frames). A figure kept in a shared cache is
    wrapped once: ``to_dict()`` then returns the stored dict (Plotly's own output, so what reaches
    the browser is identical; ``tests/test_figures.py`` checks that). Read-only by design: there is
    nothing to mutate, and sharing it between reruns and sessions is safe.
    """

    def __init__(self, fig: go.Figure, frames: list[dict] | None = None) -> None:  # noqa: D107
        # BaseFigure.__init__ is skipped on purpose: nothing of a live figure is needed.
        fit_log_ticks(fig)
        spec = fig.to_dict()
        if frames is not None:
            # Animation frames as plain dicts (``{"data": [...], "traces": [...], "name": ...}``):
            # Plotly validates each frame's traces one by one (~1 ms per frame here); these go to
            # the browser as given (numpy arrays are encoded by Plotly's JSON encoder).
            spec["frames"] = [_typed_arrays(f) for f in frames]
        object.__setattr__(self, "_spec", spec)

    def to_dict(self) -> dict:
        return self._spec

    def to_plotly_json(self) -> dict:
        return self._spec

    @property
    def spec(self) -> dict:
        """The serialised figure (``data``, ``layout``, ``frames``): read it, do not change it."""
        return self._spec

    def __repr__(self) -> str:
        return f"Frozen({len(self._spec.get('data', []))} traces, {len(self._spec.get('frames', []))} frames)"


_JS_TYPES = {"float32": "f4", "float64": "f8", "int8": "i1", "uint8": "u1", "int16": "i2",
             "uint16": "u2", "int32": "i4", "uint32": "u4"}


def typed(a, dtype=None):
    """A numeric array in Plotly's typed-array form ``{"dtype", "bdata"[, "shape"]}``.

    This is what ``Figure.to_dict`` sends to the browser anyway; handing Plotly (or a frame dict) the
    encoded form skips its per-array validation. ``dtype=np.float32`` halves the bytes of drawing
    data (~1e-7 relative). 64-bit integers are narrowed to 32 bits as Plotly does (plotly.js has
    none); what cannot be encoded is returned as a list."""
    a = np.ascontiguousarray(a, dtype=dtype)
    if a.dtype.kind in "iu" and a.dtype.itemsize == 8 and a.size:
        narrow = np.int32 if a.dtype.kind == "i" else np.uint32
        if np.iinfo(narrow).min <= a.min() and a.max() <= np.iinfo(narrow).max:
            a = a.astype(narrow)
    code = _JS_TYPES.get(a.dtype.name)
    if code is None or a.size == 0:
        return a.tolist()
    spec = {"dtype": code, "bdata": base64.b64encode(a).decode("ascii")}
    if a.ndim > 1:
        spec["shape"] = str(a.shape)[1:-1]
    return spec


def _typed_arrays(obj):
    """numpy arrays inside ``obj`` (nested dicts and lists) -> :func:`typed` form."""
    if isinstance(obj, dict):
        return {k: _typed_arrays(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_typed_arrays(v) for v in obj]
    if isinstance(obj, np.ndarray) and obj.dtype.kind in "fiu":
        return typed(obj)
    return obj


def freeze(fig: go.Figure | Frozen) -> Frozen:
    """``fig`` as a :class:`Frozen` figure (unchanged when it already is one)."""
    return fig if isinstance(fig, Frozen) else Frozen(fig)


def cached_figure(fn=None, *, max_entries: int = 64):
    """Decorator: build a page figure once and share it between reruns and sessions.

    ``fn(t, *args) -> go.Figure | Frozen``, where ``t`` is the page's :class:`ui.i18n.Text`. The result is
    :class:`Frozen` and kept in ``st.cache_resource`` (at most ``max_entries`` figures per builder),
    keyed on the language, the version of the text files and ``args`` (hashed by Streamlit: pass the
    page's parameter values and let the builder read its data from the ``cached`` compute
    functions). A cached rerun then pays neither Plotly's validation nor its deep copy.
    """
    def deco(fn):
        def build(stem: str, lang: str, version: tuple, *args):
            from ui.i18n import Text

            return freeze(fn(Text(stem, lang), *args))

        # Streamlit keys a cache on module + qualified name + source: make each builder distinct.
        build.__module__, build.__qualname__ = fn.__module__, f"{fn.__qualname__}.<frozen>"
        shared = st.cache_resource(max_entries=max_entries, show_spinner=False)(build)

        @functools.wraps(fn)
        def call(t, *args) -> Frozen:
            return shared(t.stem, t.lang, t.version, *args)

        call.clear = shared.clear
        return call

    return deco(fn) if fn is not None else deco


def show(fig: go.Figure | Frozen, key: str | None = None) -> None:
    if not isinstance(fig, Frozen):
        fit_log_ticks(fig)
    st.plotly_chart(fig, width="stretch", theme=None, config=CONFIG, key=key)
