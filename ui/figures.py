"""Figure conventions shared by every page.

Exact / theory: solid lines. Simulation: markers or dashed lines. The same
colour means the same thing on every page (Okabe–Ito, colour-blind safe).
"""
from __future__ import annotations

import base64
import copy
import functools
import math
import re

import numpy as np
import plotly.colors
import plotly.graph_objects as go
import streamlit as st
from plotly.basedatatypes import BaseFigure

from ui import style as _style

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
# Plotly's toolbar sits over the top right of a figure once it is touched or hovered; on a phone its
# seven buttons covered half of the title. Kept: download, box zoom, pan, reset (double-click resets too).
CONFIG = {"displaylogo": False, "responsive": True,
          "modeBarButtonsToRemove": ["lasso2d", "select2d", "zoomIn2d", "zoomOut2d", "autoScale2d"]}


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
# A short log axis gets full labels at 1, 2, 5 × 10ᵏ from ``fit_log_ticks`` (run on every figure shown).
_LOG = {"type": "log", "dtick": 1,
        "minor": {"ticks": "outside", "ticklen": 3, "tickcolor": "#AAA", "showgrid": True,
                  "gridcolor": "#F3F3F3"}}


#: Build figures with Plotly's per-property validation. Off: the house layout and the helpers
#: below are known-valid, and validation costs ~1-3 ms per trace and ~10 ms per layout, paid again
#: for every figure a slider change rebuilds. Tests switch it on (tests/test_rerun_cost.py builds
#: every page's figures validated; tests/test_figures.py checks both ways serialise the same).
VALIDATE = False


def figure(x_title: str, y_title: str, title: str | None = None, data=(), *, log_x: bool = False,
           log_y: bool = False, height: int = 440, shapes=(), annotations=(), xaxis: dict | None = None,
           yaxis: dict | None = None, margin: dict | None = None, **layout) -> go.Figure:
    """A figure with labelled axes in the house style.

    ``data``: its traces (dicts from :func:`line`, :func:`markers`, … or ``go`` traces);
    ``shapes`` (:func:`hline`, :func:`vline`) and ``annotations``; ``xaxis``, ``yaxis`` and
    ``margin`` update the house entries; other keywords are layout entries. More traces can be
    added afterwards (:func:`exact_line`, :func:`sim_markers`, ``fig.add_trace``)."""
    # Title at the top of the figure, legend right below it and above the plot area, so that
    # neither can collide with a long axis title.
    lay = {
        "template": TEMPLATE, "height": height,
        "title": {"text": title, "x": 0.0, "xanchor": "left", "y": 0.985, "yanchor": "top",
                  "yref": "container", "font": {"size": 15}} if title else None,
        # b=56: the x-axis title and tick labels need ~53-56 px; starting below that makes automargin
        # grow it after the first layout, and Plotly.js then draws the figure twice (measured on depth_sum).
        "margin": {"l": 60, "r": 20, "t": 95 if title else 60, "b": 56, **(margin or {})},
        "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.02, "xanchor": "left", "x": 0.0,
                   "bgcolor": "rgba(255,255,255,0.6)"},
        "hovermode": "x unified",
        "xaxis": {"title": {"text": x_title}, **_axis_type(log_x), **(xaxis or {})},
        "yaxis": {"title": {"text": y_title}, **_axis_type(log_y), **(yaxis or {})},
    }
    if shapes:
        lay["shapes"] = list(shapes)
    if annotations:
        lay["annotations"] = list(annotations)
    lay.update(layout)
    return _unchecked(go.Figure(data=list(data), layout=lay, _validate=VALIDATE))


def figure3d(data=(), **layout) -> go.Figure:
    """A 3-D figure in the house template: its traces ``data`` and its layout entries (``scene``,
    ``title``, ``legend``, ``margin``, ``height`` …) as given; built like :func:`figure`."""
    return _unchecked(go.Figure(data=list(data), layout={"template": TEMPLATE, **layout}, _validate=VALIDATE))


class _TracesUnchecked:
    """A figure's trace validator that builds traces without Plotly's per-property validation.

    ``go.Figure(_validate=False)`` skips validation in the constructor only: ``fig.add_trace`` (what
    ``exact_line``, ``sim_markers`` and many builders use) still validates every property of the new
    trace, ~1-3 ms per trace, and its arrays go through Plotly's generic (narwhals) array checks.
    With ``VALIDATE`` off this passes ``_validate=False`` there too; the tests build every page's
    figures with ``VALIDATE`` on (tests/test_rerun_cost.py)."""

    def __init__(self, inner) -> None:
        self._inner = inner

    def validate_coerce(self, v, skip_invalid=False, _validate=False):
        return self._inner.validate_coerce(v, skip_invalid=skip_invalid, _validate=False)

    def __getattr__(self, name):
        return getattr(self._inner, name)


def _unchecked(fig: go.Figure) -> go.Figure:
    """``fig`` whose ``add_trace``/``add_traces`` skip validation when ``VALIDATE`` is off."""
    if not VALIDATE:
        fig._data_validator = _TracesUnchecked(fig._data_validator)
    return fig


def _axis_type(log: bool) -> dict:
    return {**_LOG, "minor": dict(_LOG["minor"])} if log else {"type": "linear"}


# --------------------------------------------------------------------------- traces and shapes
# One helper per drawing idea. Each returns a plain dict (a Plotly trace or shape): pass them to
# figure(..., data=[...], shapes=[...]), or add one to a figure with fig.add_trace / fig.add_shape.
def line(x, y, name: str, color: str = COLORS["exact"], width: float = 2.5, dash: str | None = None,
         **kw) -> dict:
    """Theory: a line (solid; ``dash="dot"``, ``"dash"`` … for references: slopes, limits, bounds).
    ``line=dict(...)`` entries override the line style; other keywords are trace entries."""
    style = {"color": color, "width": width, **({"dash": dash} if dash else {}), **kw.pop("line", {})}
    return {"type": "scatter", "x": np.asarray(x), "y": np.asarray(y), "name": name, "mode": "lines",
            "line": style, **kw}


def markers(x, y, name: str, color: str = COLORS["sim"], symbol: str = "circle", size: float = 7,
            error=None, **kw) -> dict:
    """Simulation: open markers (the exact line shows through), optionally with error bars:
    ``error`` an array (symmetric) or ``(plus, minus)``; ``error_y=dict(...)`` entries override."""
    tr = {"type": "scatter", "x": np.asarray(x), "y": np.asarray(y), "name": name, "mode": "markers",
          "marker": {"color": color, "size": size, "symbol": f"{symbol}-open",
                     "line": {"width": 1.5, "color": color}}}
    extra = kw.pop("error_y", {})
    if error is not None:
        bars = ({"symmetric": False, "array": np.asarray(error[0]), "arrayminus": np.asarray(error[1])}
                if isinstance(error, tuple) else {"array": np.asarray(error)})
        tr["error_y"] = {"type": "data", **bars, "color": color, **extra}
    elif extra:
        tr["error_y"] = extra
    tr.update(kw)
    return tr


def point(x, y, name: str, color: str = COLORS["black"], symbol: str = "star", size: float = 14, **kw) -> dict:
    """A highlighted mark (filled): the chosen value, a peak, eigenvalues. ``marker=dict(...)``
    entries override the marker; other keywords are trace entries (``error_y`` …)."""
    marker = {"color": color, "size": size, "symbol": symbol, **kw.pop("marker", {})}
    return {"type": "scatter", "x": np.asarray(x), "y": np.asarray(y), "name": name, "mode": "markers",
            "marker": marker, **kw}


def histogram(edges, density, name: str, color: str = COLORS["sim"],
              fill: str = "rgba(213,94,0,0.12)") -> dict:
    """Simulation: a histogram (``density`` per bin between ``edges``) as a dashed step line over a
    light fill, so that an exact density drawn on top stays visible."""
    e = np.asarray(edges)
    return {"type": "scatter", "x": np.repeat(e, 2)[1:-1], "y": np.repeat(np.asarray(density), 2),
            "mode": "lines", "name": name, "fill": "tozeroy", "fillcolor": fill,
            "line": {"color": color, "width": 1.5, "dash": "dash"}}


def hline(y: float, color: str = COLORS["ref"], width: float = 1, dash: str | None = None) -> dict:
    """A horizontal line across the plot at ``y`` (the shape ``fig.add_hline`` makes, without its cost)."""
    return {"type": "line", "xref": "x domain", "x0": 0, "x1": 1, "yref": "y", "y0": y, "y1": y,
            "line": {"color": color, "width": width, **({"dash": dash} if dash else {})}}


def vline(x: float, color: str = COLORS["ref"], width: float = 1, dash: str | None = None) -> dict:
    """A vertical line through the plot at ``x`` (also right on a log axis, unlike ``add_vline``)."""
    return {"type": "line", "xref": "x", "x0": x, "x1": x, "yref": "y domain", "y0": 0, "y1": 1,
            "line": {"color": color, "width": width, **({"dash": dash} if dash else {})}}


def exact_line(fig: go.Figure, x, y, name: str, color: str = COLORS["exact"], **kw) -> None:
    """Theory: add a solid :func:`line` to ``fig`` (``line=dict(...)`` entries override the defaults)."""
    fig.add_trace(line(x, y, name, color, **kw))


def sim_markers(fig: go.Figure, x, y, name: str, color: str = COLORS["sim"], symbol: str = "circle",
                **kw) -> None:
    """Simulation: add open :func:`markers` to ``fig``."""
    fig.add_trace(markers(x, y, name, color, symbol, **kw))


def sim_line(fig: go.Figure, x, y, name: str, color: str = COLORS["sim"], **kw) -> None:
    """Simulation drawn as a dashed line (for dense data)."""
    fig.add_trace(line(x, y, name, color, width=2, dash="dash", **kw))


def animation(names: list[str], labels: list[str], play: str, pause: str, prefix: str, *, duration: int,
              redraw: bool, y: float, slider_x: float, slider_y: float | None = None, active: int = 0,
              currentvalue: dict | None = None, **slider) -> dict:
    """Layout entries (``updatemenus``, ``sliders``) of an animation: play/pause buttons at the left,
    a slider over the frames ``names`` (step ``labels``: the read-out after ``prefix``) to their right.

    ``duration``: ms per frame when playing; ``redraw``: whether each frame redraws the plot (3-D
    scenes need it); ``slider`` entries (tick length, fonts) and ``currentvalue`` override the slider's."""
    def now():
        return dict(mode="immediate", frame=dict(duration=0, redraw=redraw), transition=dict(duration=0))

    steps = [dict(method="animate", label=lab, args=[[name], now()]) for name, lab in zip(names, labels)]
    return dict(
        updatemenus=[dict(type="buttons", direction="left", x=0.0, y=y, xanchor="left", yanchor="top",
                          showactive=False, pad=dict(t=0, r=10),
                          buttons=[dict(label=play, method="animate",
                                        args=[None, dict(frame=dict(duration=duration, redraw=redraw),
                                                         transition=dict(duration=0), fromcurrent=True)]),
                                   dict(label=pause, method="animate", args=[[None], now()])])],
        sliders=[dict(active=active, steps=steps, x=slider_x, len=round(1.0 - slider_x, 9),
                      y=y if slider_y is None else slider_y, yanchor="top",
                      currentvalue=dict(prefix=prefix, font=dict(size=13, color="#333"), **(currentvalue or {})),
                      pad=dict(t=0, b=0), **slider)],
    )


@functools.cache
def sphere_wire(parallels: tuple = (-60, -30, 30, 60), meridians: int = 8, pole_gap: float = 15.0,
                step: float = 3.75) -> dict:
    """The unit sphere as a light wireframe: ``x, y, z`` (float32, typed) of one NaN-separated line.

    Parallels at the latitudes ``parallels`` (degrees), ``meridians`` half-meridians evenly spaced in
    longitude that stop ``pole_gap`` degrees short of the poles (where clusters gather), points every
    ``step`` degrees. Shared and read-only: pass it as ``go.Scatter3d(**sphere_wire(), ...)``.
    (A translucent surface looks softer but cost the browser ~1.3 s of CPU per slider change:
    software WebGL redraws a 3-D scene from scratch.)"""
    th = np.radians(np.linspace(0.0, 360.0, int(round(360.0 / step)) + 1))
    gap = np.full((1, 3), np.nan)
    parts = []
    for lat in np.radians(parallels):
        parts += [np.column_stack([np.cos(lat) * np.cos(th), np.cos(lat) * np.sin(th),
                                   np.full_like(th, np.sin(lat))]), gap]
    top = 90.0 - pole_gap
    lat = np.radians(np.linspace(-top, top, int(round(2 * top / step)) + 1))
    for lon in np.radians(np.arange(meridians) * 360.0 / meridians):
        parts += [np.column_stack([np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon), np.sin(lat)]), gap]
    P = np.concatenate(parts)
    return {c: typed(P[:, i], np.float32) for i, c in enumerate("xyz")}


def thin(n: int, max_points: int) -> np.ndarray:
    """Indices of at most ``max_points`` evenly spread samples of ``range(n)``, ends kept."""
    if n <= max_points:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, max_points).round().astype(int))


_SUPER = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def log_tick_label(v: float) -> str:
    """The full label of a log-axis tick: ``0.5``, ``20``, ``2×10⁻⁵`` (never a bare digit)."""
    e = math.floor(math.log10(v) + 1e-9)
    m = v / 10.0 ** e
    if -3 <= e <= 4:
        return f"{v:.6g}"
    mant = f"{m:.3g}"
    return (f"10{str(e).translate(_SUPER)}" if mant == "1"
            else f"{mant}×10{str(e).translate(_SUPER)}")


def _short_log_ticks(lo: float, hi: float) -> list[float]:
    """Tick values for a log axis spanning less than ~1.5 decades: 1, 2, 5 × 10ᵏ, or every digit
    when that leaves fewer than three inside, or evenly spaced round numbers on a very short span."""
    k0, k1 = math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1
    for digits in ((1, 2, 5), tuple(range(1, 10))):
        vals = [float(f"{d}e{k}") for k in range(k0, k1 + 1) for d in digits]
        inside = [v for v in vals if lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9)]
        if len(inside) >= 3:
            return inside
    # very short span: round linear steps (1, 2, 5 × 10ᵏ) with three to six ticks
    raw = (hi - lo) / 4
    e = math.floor(math.log10(raw))
    step = next(d * 10.0 ** e for d in (1, 2, 5, 10) if d * 10.0 ** e >= raw)
    first = math.ceil(lo / step)
    return [float(f"{i * step:.12g}") for i in range(first, math.floor(hi / step) + 1) if i > 0]


def fit_log_ticks(fig: go.Figure) -> go.Figure:
    """Fit the labels of log axes to their span, in place; every label is a full number.

    Decade-only labels leave an axis that spans less than ~1.5 decades with one label or none,
    and crowd one that spans many decades. Plotly's own choice on a short log axis (``dtick`` "D1"
    / "D2", also what it picks automatically) labels 0.5 and 0.2 as bare digits "5", "2", which
    reads as 5 and 2 when no 10ᵏ label is in sight. So: a long axis gets every k-th decade (at most
    ~8 labels); a short one explicit ticks at 1, 2, 5 × 10ᵏ (or finer) labelled in full
    (:func:`log_tick_label`). Axes a page gave its own ``tickvals`` or a numeric ``dtick`` other
    than 1 are kept (Plotly labels array ticks on a log axis in full)."""
    names = [k for k in fig.layout.to_plotly_json() if k.startswith(("xaxis", "yaxis"))]
    for name in names or ("xaxis", "yaxis"):
        ax = fig.layout[name]
        if ax.type != "log" or ax.tickvals is not None:
            continue
        if ax.dtick not in (None, 1, "D1", "D2"):
            continue
        coord, ref = name[0], name[0] + name[5:]
        if ax.range is not None:
            lo, hi = sorted(10.0 ** np.asarray(ax.range, dtype=float))
        else:
            lo, hi = np.inf, -np.inf
            for tr in fig.data:
                vals = getattr(tr, coord, None)
                if vals is None or (getattr(tr, coord + "axis", None) or coord) != ref:
                    continue
                try:
                    v = np.asarray(vals, dtype=float).ravel()
                except (TypeError, ValueError):  # categories or text
                    continue
                v = v[np.isfinite(v) & (v > 0)]
                if v.size:
                    lo, hi = min(lo, v.min()), max(hi, v.max())
        if not (np.isfinite(lo) and np.isfinite(hi) and hi > 0 and lo > 0):
            ax.dtick = 1  # nothing to fit to: decades only (full labels)
            continue
        span = np.log10(hi / lo) if hi > lo else 0.0
        if span > 7:
            ax.dtick = math.ceil(span / 7)  # at most ~8 labels: every 2nd, 3rd … decade
        elif span >= 1.5:
            ax.dtick = 1
        else:
            if hi <= lo:
                lo, hi = lo / 1.5, hi * 1.5
            vals = _short_log_ticks(float(lo), float(hi))
            ax.dtick = None
            ax.tickvals = vals
            ax.ticktext = [log_tick_label(v) for v in vals]
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
        spec = spec_dict(fig)
        _style.fit_legend_spec(spec["layout"])  # on the dict: Plotly's update_layout costs ms per figure
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


def spec_dict(fig: go.Figure) -> dict:
    """``fig.to_dict()``, the same dict, built without its deep copy.

    ``to_dict`` deep-copies every trace, the layout and the frames, then replaces numpy arrays by
    Plotly's typed-array form (``convert_to_base64``); the copy (a Python call per list element)
    and Plotly's array checks were ~60 % of freezing a page's figures after a slider move (e.g.
    nonnormal: ~40 ms of ~100 ms). Here the containers are copied while walking and arrays encoded
    directly, the way Plotly encodes them; scalars and strings are shared (immutable). The figure
    itself is not changed. ``tests/test_figures.py`` checks the result equals ``fig.to_dict()``."""
    res = {"data": [_spec_tree(tr) for tr in fig._data], "layout": _spec_tree(fig._layout)}
    frames = [_spec_tree(f._props) for f in fig._frame_objs]
    if frames:
        res["frames"] = frames
    return res


_SKIPPED = frozenset(("geojson", "layer", "layers", "range"))  # plotly's is_skipped_key: kept as they are
_NARROW = {"int64": (np.int8, np.int16, np.int32), "uint64": (np.uint8, np.uint16, np.uint32)}


def _spec_tree(obj):
    """A copy of one node of a figure's property tree, numpy arrays in typed-array form."""
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if k in _SKIPPED:
                out[k] = copy.deepcopy(v)
            elif isinstance(v, np.ndarray):
                out[k] = _plotly_typed(v)
            elif isinstance(v, (dict, list, tuple)):
                out[k] = _spec_tree(v)
            else:
                out[k] = v
        return out
    if isinstance(obj, list):
        return [_spec_tree(v) if isinstance(v, (dict, list, tuple, np.ndarray)) else v for v in obj]
    if isinstance(obj, tuple):
        return tuple(_spec_tree(v) if isinstance(v, (dict, list, tuple, np.ndarray)) else v for v in obj)
    if isinstance(obj, np.ndarray):  # an array inside a list: Plotly leaves it (a copy) as an array
        return obj.copy()
    return obj


def _plotly_typed(v: np.ndarray):
    """``_plotly_utils.utils.to_typed_array_spec`` for a numeric numpy array, without its generic
    (narwhals) array checks; anything else goes through Plotly's own function."""
    if v.dtype.kind not in "iuf" or v.size == 0 or v.dtype.byteorder not in "=|":
        from _plotly_utils.utils import to_typed_array_spec

        return to_typed_array_spec(v)
    v = np.ascontiguousarray(v)
    name = v.dtype.name
    if name in _NARROW:
        lo, hi = v.min(), v.max()
        for t in _NARROW[name]:
            if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max:
                v = v.astype(t)
                break
        else:
            return v.copy()
    code = _JS_TYPES.get(v.dtype.name)
    if code is None:
        return v.copy()
    spec = {"dtype": code, "bdata": base64.b64encode(v).decode("ascii")}
    if v.ndim > 1:
        spec["shape"] = str(v.shape)[1:-1]
    return spec


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
    functions). A cached rerun then pays neither Plotly's validation nor its deep copy, nor (for
    hashable arguments: numbers, strings, tuples) Streamlit's argument hashing. ``builder.clear()``
    empties both.
    """
    def deco(fn):
        def build(stem: str, lang: str, version: tuple, *args):
            from ui.i18n import Text

            return freeze(fn(Text(stem, lang), *args))

        # Streamlit keys a cache on module + qualified name + source: make each builder distinct.
        build.__module__, build.__qualname__ = fn.__module__, f"{fn.__qualname__}.<frozen>"
        shared = st.cache_resource(max_entries=max_entries, show_spinner=False)(build)

        # In front of Streamlit's cache: a plain dict keyed on the arguments themselves (with their
        # types: 1 and 1.0 stay apart). Streamlit hashes a call's arguments on every call (~1 ms per
        # figure, paid by every rerun of every session); a dict look-up is ~1 µs. Misses, arguments
        # that cannot be hashed, and concurrent first builds go through st.cache_resource as before.
        memo: dict = {}

        @functools.wraps(fn)
        def call(t, *args) -> Frozen:
            try:
                key = (t.stem, t.lang, t.version, *((type(a), a) for a in args))
                hit = memo.get(key)
            except TypeError:  # an unhashable argument
                return shared(t.stem, t.lang, t.version, *args)
            if hit is None:
                hit = memo[key] = shared(t.stem, t.lang, t.version, *args)
                while len(memo) > max_entries:  # oldest first; another thread may have removed it
                    try:
                        memo.pop(next(iter(memo)), None)
                    except (StopIteration, RuntimeError):
                        break
            return hit

        def clear() -> None:
            memo.clear()
            shared.clear()

        call.clear = clear
        call.cached_figure = True   # marks a shared builder (tests/test_rerun_cost.py finds them so)
        return call

    return deco(fn) if fn is not None else deco


def show(fig: go.Figure | Frozen, key: str | None = None, alt: str | None = None) -> None:
    """Draw ``fig``; under it a one-line text alternative (``alt``, else one made from the figure's
    title, axes and data) and its plotted data one click away (``ui.access``)."""
    from ui import access, predict, style

    if predict.covered(key):  # the student chose to predict first (ui/predict.py)
        from ui.page import current_lang

        predict.cover_note(current_lang())
        return
    if not isinstance(fig, Frozen):
        fit_log_ticks(fig)
        style.fit_legend(fig)
    st.plotly_chart(style.for_screen(fig), width="stretch", theme=None, config=CONFIG, key=key)
    access.describe_below(fig, key, alt)


# --------------------------------------------------------------------------- legends and fields
# (added with the pages coordinates, rotation and block; used by several pages)
_CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]")


def tall_legend(fig: go.Figure, columns: int | None = None, height: int | None = None) -> go.Figure:
    """Lay the house legend (above the plot, under the title) out in rows and reserve them in the
    top margin, in place: several entries never reach up into the title, even where they wrap on a
    phone, and the plot area keeps its size.

    ``columns`` defaults to 2, or 1 when an entry is longer than 16 Latin characters (a CJK character
    counts two): the columns are fractions of the plot's width, and on a phone (~280 px of plot) a
    longer entry runs into its neighbour. ``height``:
    the figure's height without the legend rows (default: its current height). Returns ``fig``."""
    names = [re.sub(r"<[^>]+>", "", tr.name or "") for tr in fig.data if tr.showlegend is not False]
    if columns is None:
        width = max((len(n) + len(_CJK.findall(n)) for n in names), default=0)
        columns = 1 if width > 16 else 2
    rows = -(-len(names) // columns)
    fig.update_layout(legend={"entrywidth": 1.0 / columns - 0.01, "entrywidthmode": "fraction"},
                      margin={"t": 62 + 21 * rows}, height=(height or fig.layout.height or 440) + 21 * rows)
    return fig


def heatmap(x, y, z, name: str, colorscale, zmin: float | None = None, zmax: float | None = None,
            bar: str | None = None, hover: str | None = None, **kw) -> dict:
    """A field on a grid as a coloured map: ``z[i, j]`` at ``(x[j], y[i])``. ``bar``: the colour bar's
    title (None: no colour bar); ``hover``: the hover text (Plotly's ``%{z}`` …, no trace box).
    ``colorscale``: a list of ``[position, colour]`` or a Plotly name (``"RdBu_r"``: reversed), resolved
    here because plotly.js knows no ``_r`` names. Other keywords are trace entries
    (``colorbar=dict(...)`` entries override the bar's)."""
    if isinstance(colorscale, str):
        colorscale = plotly.colors.get_colorscale(colorscale)
    tr = {"type": "heatmap", "x": np.asarray(x), "y": np.asarray(y), "z": np.asarray(z), "name": name,
          "colorscale": [list(c) for c in colorscale], "showscale": bar is not None, "showlegend": False}
    if zmin is not None:
        tr["zmin"] = zmin
    if zmax is not None:
        tr["zmax"] = zmax
    if bar is not None:
        tr["colorbar"] = {"title": {"text": bar, "side": "right"}, "thickness": 12, "exponentformat": "power",
                          **kw.pop("colorbar", {})}   # powers of ten like the axes, not SI prefixes ("1p")
    if hover is not None:
        tr["hovertemplate"] = hover + "<extra></extra>"
    tr.update(kw)
    return tr


def equal_axes(half: float) -> dict:
    """Layout entries of a square picture of the plane, ``[-half, half]²`` with one scale on both axes
    (circles look round, arrows keep their angles): pass them as ``figure(..., **equal_axes(h))``.
    The plot area shrinks to a square instead of widening the range on a wide screen."""
    r = [-half, half]
    return {"xaxis": {"range": r, "constrain": "domain"},
            "yaxis": {"range": r, "scaleanchor": "x", "scaleratio": 1, "constrain": "domain"}}


def log_ticks(values) -> dict:
    """Axis entries that label a log axis at exactly ``values`` (printed with ``:g``), without the
    house minor ticks and grid (drawn between explicit labels they crowd the axis):
    ``figure(..., yaxis=log_ticks([0.1, 0.2, 0.5, 1]))`` or ``fig.update_yaxes(**log_ticks(...))``."""
    vals = [float(v) for v in values]
    return {"tickvals": vals, "ticktext": [f"{v:g}" for v in vals], "minor": {"ticks": "", "showgrid": False}}


# --------------------------------------------------------------------------- bands
# A range drawn as a light filled band (a bound around a prediction, the spread of several seeds):
# used by the width and low-temperature pages.
def rgba(color: str, alpha: float) -> str:
    """``"#RRGGBB"`` -> ``"rgba(r,g,b,alpha)"`` (a palette colour made translucent)."""
    h = color.lstrip("#")
    return f"rgba({int(h[0:2], 16)},{int(h[2:4], 16)},{int(h[4:6], 16)},{alpha:g})"


def band(x, lo, hi, name: str, color: str = COLORS["ref"], alpha: float = 0.18, **kw) -> list[dict]:
    """A filled band between the curves ``lo`` and ``hi`` over ``x``: two traces, the lower edge
    (unnamed) and the upper one (named ``name``, ``y = hi``) filled down to it. No outline, no hover and no legend
    entry of its own (``showlegend=True`` gives one); other keywords (``legendgroup`` …) go on both.
    Add both, in this order: ``figure(..., data=[*band(...), ...])`` or ``fig.add_traces(band(...))``."""
    x = np.asarray(x)
    edge = {"type": "scatter", "x": x, "mode": "lines", "line": {"width": 0, "color": color},
            "hoverinfo": "skip", "showlegend": False}
    lower = {**edge, "y": np.asarray(lo), **kw, "showlegend": False}
    lower.pop("name", None)
    upper = {**edge, "y": np.asarray(hi), "name": name, "fill": "tonexty", "fillcolor": rgba(color, alpha), **kw}
    return [lower, upper]
