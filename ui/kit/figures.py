"""The figure vocabulary shared by every page, and :func:`show`.

Exact / theory: solid lines. Simulation: markers or dashed lines. The same
colour means the same thing on every page (Okabe–Ito, colour-blind safe).
Frozen figures and the shared figure cache are ``ui.kit.frozen`` (re-exported here:
a page imports its drawing words from one module); fitting log ticks and
legends is ``ui.kit.finish``.
"""

from __future__ import annotations

import inspect
import math
import re

import numpy as np
import plotly.colors
import plotly.graph_objects as go
import streamlit as st

from ui.kit import access, chart, cover, style
from ui.kit.finish import fewer_points_spec, fit_legend, fit_log_ticks, log_tick_label  # noqa: F401 (vocabulary)
from ui.kit.frozen import Frozen, cached_figure, freeze, spec_dict, typed, unchecked  # noqa: F401 (what pages use)
from ui.kit.lang import current_lang
from ui.kit.sphere import axis_names, sphere_scene, sphere_wire  # noqa: F401 (vocabulary)

# Okabe–Ito palette, by role; the three light ones (orange #E69F00 2.25:1, sky blue #56B4E9 2.31:1,
# yellow #F0E442 1.32:1 on white) darkened in hue to the 3:1 that WCAG 2.2 asks of a line or marker
# against the figure's white (tests/test_access_contrast.py computes every ratio). Where two series
# would still be told apart by colour alone (orange next to vermilion), pages give them a dash or a
# marker symbol too.
COLORS = {
    "sa": "#0072B2",  # blue: normalised attention / the main exact curve
    "usa": "#D55E00",  # vermillion: unnormalised attention / the contrast
    "exact": "#0072B2",
    "sim": "#D55E00",
    "bound": "#009E73",  # bluish green: bounds and envelopes
    "ref": "#7F7F7F",  # grey: reference lines (slopes, eigenvalue-only predictions)
    "accent": "#CC79A7",  # reddish purple
    "other": "#BF7300",  # orange, darkened (3.71:1)
    "sky": "#1A9BB5",  # sky blue, darkened towards cyan (3.28:1): ΔE 31 from the blue, as far as before
    "black": "#000000",
}
SEQUENCE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", COLORS["other"], COLORS["sky"], "#867600", "#000000"]
# (#867600: the yellow, darkened to an olive, 4.56:1)
# The chart's config; its toolbar is ui.kit.chart.TOOLBAR (download and reset: on a phone the full
# toolbar covered half of the title).
CONFIG = {"displaylogo": False, "responsive": True}


# Glyphs the text font lacks (‖ ⟨ ⟩ √ …) fall through this list in order: a math font before the
# CJK one keeps them proportional (the CJK font draws them full-width, e.g. "‖ e ‖ ₂").
FONT = (
    "Source Sans Pro, Source Sans, Cambria Math, STIX Two Math, DejaVu Math TeX Gyre, "
    "Noto Sans CJK SC, Microsoft YaHei, PingFang SC, sans-serif"
)
_AXIS = dict(
    showline=True,
    linecolor="#888",
    mirror=True,
    zeroline=False,
    gridcolor="#E5E5E5",
    ticks="outside",
    tickcolor="#888",
    exponentformat="power",
    automargin=True,
)
# A small template instead of "plotly_white": that one carries defaults for every trace type
# and copying and validating it for every figure dominated a page rerun.
TEMPLATE = {
    "layout": {
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "colorway": SEQUENCE,
        "font": {"family": FONT, "size": 13},
        "xaxis": _AXIS,
        "yaxis": _AXIS,
        "hoverlabel": {"namelength": -1},
    }
}


# Log axes: labels at decades only, unlabelled minor ticks (and faint grid lines) in between.
# A short log axis gets full labels at 1, 2, 5 × 10ᵏ from ``fit_log_ticks`` (run on every figure shown).
_LOG = {
    "type": "log",
    "dtick": 1,
    "minor": {"ticks": "outside", "ticklen": 3, "tickcolor": "#AAA", "showgrid": True, "gridcolor": "#F3F3F3"},
}


#: Build figures with Plotly's per-property validation. Off: the house layout and the helpers
#: below are known-valid, and validation costs time per trace and per layout, paid again
#: for every figure a slider change rebuilds. Tests switch it on (tests/test_rerun_cost.py builds
#: every page's figures validated; tests/test_figures.py checks both ways serialise the same).
VALIDATE = False


def figure(
    x_title: str,
    y_title: str,
    title: str | None = None,
    data=(),
    *,
    log_x: bool = False,
    log_y: bool = False,
    height: int = 440,
    shapes=(),
    annotations=(),
    xaxis: dict | None = None,
    yaxis: dict | None = None,
    margin: dict | None = None,
    **layout,
) -> go.Figure:
    """A figure with labelled axes in the house style.

    ``data``: its traces (dicts from :func:`line`, :func:`markers`, … or ``go`` traces);
    ``shapes`` (:func:`hline`, :func:`vline`) and ``annotations``; ``xaxis``, ``yaxis`` and
    ``margin`` update the house entries; other keywords are layout entries. More traces can be
    added afterwards (:func:`exact_line`, :func:`sim_markers`, ``fig.add_trace``)."""
    # Title at the top of the figure, legend right below it and above the plot area, so that
    # neither can collide with a long axis title.
    lay = {
        "template": TEMPLATE,
        "height": height,
        "title": {
            "text": title,
            "x": 0.0,
            "xanchor": "left",
            "y": 0.985,
            "yanchor": "top",
            "yref": "container",
            "font": {"size": 15},
        }
        if title
        else None,
        # b=56: the x-axis title and tick labels need ~53-56 px; starting below that makes automargin
        # grow it after the first layout, and Plotly.js then draws the figure twice (measured on depth_sum).
        "margin": {"l": 60, "r": 20, "t": 95 if title else 60, "b": 56, **(margin or {})},
        "legend": {
            "orientation": "h",
            "yanchor": "bottom",
            "y": 1.02,
            "xanchor": "left",
            "x": 0.0,
            "bgcolor": "rgba(255,255,255,0.6)",
        },
        "hovermode": "x unified",
        "xaxis": {"title": {"text": x_title}, **_axis_type(log_x), **(xaxis or {})},
        "yaxis": {"title": {"text": y_title}, **_axis_type(log_y), **(yaxis or {})},
    }
    if shapes:
        lay["shapes"] = list(shapes)
    if annotations:
        lay["annotations"] = list(annotations)
    lay.update(layout)
    return unchecked(go.Figure(data=list(data), layout=lay, _validate=VALIDATE), VALIDATE)


def figure3d(data=(), **layout) -> go.Figure:
    """A 3-D figure in the house template: its traces ``data`` and its layout entries (``scene``,
    ``title``, ``legend``, ``margin``, ``height`` …) as given; built like :func:`figure`."""
    return unchecked(go.Figure(data=list(data), layout={"template": TEMPLATE, **layout}, _validate=VALIDATE), VALIDATE)


def _axis_type(log: bool) -> dict:
    return {**_LOG, "minor": dict(_LOG["minor"])} if log else {"type": "linear"}


# --------------------------------------------------------------------------- traces and shapes
# One helper per drawing idea. Each returns a plain dict (a Plotly trace or shape): pass them to
# figure(..., data=[...], shapes=[...]), or add one to a figure with fig.add_trace / fig.add_shape.
def line(x, y, name: str, color: str = COLORS["exact"], width: float = 2.5, dash: str | None = None, **kw) -> dict:
    """Theory: a line (solid; ``dash="dot"``, ``"dash"`` … for references: slopes, limits, bounds).
    ``line=dict(...)`` entries override the line style; other keywords are trace entries."""
    style = {"color": color, "width": width, **({"dash": dash} if dash else {}), **kw.pop("line", {})}
    return {
        "type": "scatter",
        "x": np.asarray(x),
        "y": np.asarray(y),
        "name": name,
        "mode": "lines",
        "line": style,
        **kw,
    }


def markers(
    x, y, name: str, color: str = COLORS["sim"], symbol: str = "circle", size: float = 7, error=None, **kw
) -> dict:
    """Simulation: open markers (the exact line shows through), optionally with error bars:
    ``error`` an array (symmetric) or ``(plus, minus)``; ``error_y=dict(...)`` entries override."""
    tr = {
        "type": "scatter",
        "x": np.asarray(x),
        "y": np.asarray(y),
        "name": name,
        "mode": "markers",
        "marker": {"color": color, "size": size, "symbol": f"{symbol}-open", "line": {"width": 1.5, "color": color}},
    }
    extra = kw.pop("error_y", {})
    if error is not None:
        bars = (
            {"symmetric": False, "array": np.asarray(error[0]), "arrayminus": np.asarray(error[1])}
            if isinstance(error, tuple)
            else {"array": np.asarray(error)}
        )
        tr["error_y"] = {"type": "data", **bars, "color": color, **extra}
    elif extra:
        tr["error_y"] = extra
    tr.update(kw)
    return tr


def point(x, y, name: str, color: str = COLORS["black"], symbol: str = "star", size: float = 14, **kw) -> dict:
    """A highlighted mark (filled): the chosen value, a peak, eigenvalues. ``marker=dict(...)``
    entries override the marker; other keywords are trace entries (``error_y`` …)."""
    marker = {"color": color, "size": size, "symbol": symbol, **kw.pop("marker", {})}
    return {
        "type": "scatter",
        "x": np.asarray(x),
        "y": np.asarray(y),
        "name": name,
        "mode": "markers",
        "marker": marker,
        **kw,
    }


def histogram(edges, density, name: str, color: str = COLORS["sim"], fill: str = "rgba(213,94,0,0.12)") -> dict:
    """Simulation: a histogram (``density`` per bin between ``edges``) as a dashed step line over a
    light fill, so that an exact density drawn on top stays visible."""
    e = np.asarray(edges)
    return {
        "type": "scatter",
        "x": np.repeat(e, 2)[1:-1],
        "y": np.repeat(np.asarray(density), 2),
        "mode": "lines",
        "name": name,
        "fill": "tozeroy",
        "fillcolor": fill,
        "line": {"color": color, "width": 1.5, "dash": "dash"},
    }


def hline(y: float, color: str = COLORS["ref"], width: float = 1, dash: str | None = None) -> dict:
    """A horizontal line across the plot at ``y`` (the shape ``fig.add_hline`` makes, without its cost)."""
    return {
        "type": "line",
        "xref": "x domain",
        "x0": 0,
        "x1": 1,
        "yref": "y",
        "y0": y,
        "y1": y,
        "line": {"color": color, "width": width, **({"dash": dash} if dash else {})},
    }


def vline(x: float, color: str = COLORS["ref"], width: float = 1, dash: str | None = None) -> dict:
    """A vertical line through the plot at ``x`` (also right on a log axis, unlike ``add_vline``)."""
    return {
        "type": "line",
        "xref": "x",
        "x0": x,
        "x1": x,
        "yref": "y domain",
        "y0": 0,
        "y1": 1,
        "line": {"color": color, "width": width, **({"dash": dash} if dash else {})},
    }


def vline_label(x: float, text: str) -> dict:
    """An annotation ``text`` at the foot of a :func:`vline` at ``x`` on a log x axis, just left of
    the line (annotations sit at log10 coordinates there)."""
    return dict(
        x=math.log10(x),
        y=0,
        yref="paper",
        text=text,
        showarrow=False,
        xanchor="right",
        yanchor="bottom",
        xshift=-4,
        yshift=4,
    )


def exact_line(fig: go.Figure, x, y, name: str, color: str = COLORS["exact"], **kw) -> None:
    """Theory: add a solid :func:`line` to ``fig`` (``line=dict(...)`` entries override the defaults)."""
    fig.add_trace(line(x, y, name, color, **kw))


def sim_markers(fig: go.Figure, x, y, name: str, color: str = COLORS["sim"], symbol: str = "circle", **kw) -> None:
    """Simulation: add open :func:`markers` to ``fig``."""
    fig.add_trace(markers(x, y, name, color, symbol, **kw))


def sim_line(fig: go.Figure, x, y, name: str, color: str = COLORS["sim"], **kw) -> None:
    """Simulation drawn as a dashed line (for dense data)."""
    fig.add_trace(line(x, y, name, color, width=2, dash="dash", **kw))


def animation(
    names: list[str],
    labels: list[str],
    play: str,
    pause: str,
    prefix: str,
    *,
    duration: int,
    redraw: bool,
    y: float,
    slider_x: float,
    slider_y: float | None = None,
    active: int = 0,
    currentvalue: dict | None = None,
    **slider,
) -> dict:
    """Layout entries (``updatemenus``, ``sliders``) of an animation: play/pause buttons at the left,
    a slider over the frames ``names`` (step ``labels``: the read-out after ``prefix``) to their right.

    ``duration``: ms per frame when playing; ``redraw``: whether each frame redraws the plot (3-D
    scenes need it); ``slider`` entries (tick length, fonts) and ``currentvalue`` override the slider's."""

    def now():
        return dict(mode="immediate", frame=dict(duration=0, redraw=redraw), transition=dict(duration=0))

    steps = [dict(method="animate", label=lab, args=[[name], now()]) for name, lab in zip(names, labels)]
    return dict(
        updatemenus=[
            dict(
                type="buttons",
                direction="left",
                x=0.0,
                y=y,
                xanchor="left",
                yanchor="top",
                showactive=False,
                pad=dict(t=0, r=10),
                buttons=[
                    dict(
                        label=play,
                        method="animate",
                        args=[
                            None,
                            dict(
                                frame=dict(duration=duration, redraw=redraw),
                                transition=dict(duration=0),
                                fromcurrent=True,
                            ),
                        ],
                    ),
                    dict(label=pause, method="animate", args=[[None], now()]),
                ],
            )
        ],
        sliders=[
            dict(
                active=active,
                steps=steps,
                x=slider_x,
                len=round(1.0 - slider_x, 9),
                y=y if slider_y is None else slider_y,
                yanchor="top",
                currentvalue=dict(prefix=prefix, font=dict(size=13, color="#333"), **(currentvalue or {})),
                pad=dict(t=0, b=0),
                **slider,
            )
        ],
    )


def thin(n: int, max_points: int) -> np.ndarray:
    """Indices of at most ``max_points`` evenly spread samples of ``range(n)``, ends kept."""
    if n <= max_points:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, max_points).round().astype(int))


def params_of(builder) -> tuple[str, ...]:
    """The page parameters a figure builder ``builder(t, ...)`` takes, by name (its signature after
    the page text ``t``; a ``cached_figure`` builder reports the function it wraps)."""
    names = tuple(inspect.signature(builder).parameters)
    return names[1:]


def build(builder, t, values: dict):
    """``builder(t, ...)`` with the page's ``values`` its signature names, in its order: the one
    place that turns a page's parameter values into a builder's arguments."""
    return builder(t, *(values[name] for name in params_of(builder)))


#: thinned variants of shared frozen figures, keyed by the figure's id (kept alive beside it)
_THINNED: dict[int, tuple[object, Frozen]] = {}
_MAX_THINNED = 256


def screen_points(fig):
    """``fig`` with its long lines thinned to what a 1400 px screen can show (``ui.kit.finish.
    fewer_points_spec``): itself when nothing is that long (every page at its defaults), else a
    frozen variant built once per shared figure. Live figures are sent as they are."""
    if not isinstance(fig, Frozen):
        return fig
    hit = _THINNED.get(id(fig))
    if hit is not None and hit[0] is fig:
        return hit[1]
    spec = fewer_points_spec(fig.spec)
    if spec is fig.spec:
        return fig
    out = Frozen.__new__(Frozen)
    object.__setattr__(out, "_spec", spec)
    if len(_THINNED) >= _MAX_THINNED:
        _THINNED.pop(next(iter(_THINNED)), None)
    _THINNED[id(fig)] = (fig, out)
    return out


def show(fig: go.Figure | Frozen, key: str | None = None, alt: str | None = None) -> None:
    """Draw ``fig``; under it a one-line text alternative (``alt``, else one made from the figure's
    title, axes and data) and its plotted data one click away (``ui.kit.access``)."""
    if cover.covered(key):  # the student chose to predict first (ui/kit/predict.py)
        cover.cover_note(current_lang())
        return
    if not isinstance(fig, Frozen):
        fit_log_ticks(fig)
        fit_legend(fig)
    # updated in place (ui/kit/chart.py); the toolbar in the page's language
    chart.draw(style.for_screen(screen_points(fig)), key, chart.localized(CONFIG, current_lang()))
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
    fig.update_layout(
        legend={"entrywidth": 1.0 / columns - 0.01, "entrywidthmode": "fraction"},
        margin={"t": 62 + 21 * rows},
        height=(height or fig.layout.height or 440) + 21 * rows,
    )
    return fig


def heatmap(
    x,
    y,
    z,
    name: str,
    colorscale,
    zmin: float | None = None,
    zmax: float | None = None,
    bar: str | None = None,
    hover: str | None = None,
    **kw,
) -> dict:
    """A field on a grid as a coloured map: ``z[i, j]`` at ``(x[j], y[i])``. ``bar``: the colour bar's
    title (None: no colour bar); ``hover``: the hover text (Plotly's ``%{z}`` …, no trace box).
    ``colorscale``: a list of ``[position, colour]`` or a Plotly name (``"RdBu_r"``: reversed), resolved
    here because plotly.js knows no ``_r`` names. Other keywords are trace entries
    (``colorbar=dict(...)`` entries override the bar's)."""
    if isinstance(colorscale, str):
        colorscale = plotly.colors.get_colorscale(colorscale)
    tr = {
        "type": "heatmap",
        "x": np.asarray(x),
        "y": np.asarray(y),
        "z": np.asarray(z),
        "name": name,
        "colorscale": [list(c) for c in colorscale],
        "showscale": bar is not None,
        "showlegend": False,
    }
    if zmin is not None:
        tr["zmin"] = zmin
    if zmax is not None:
        tr["zmax"] = zmax
    if bar is not None:
        tr["colorbar"] = {
            "title": {"text": bar, "side": "right"},
            "thickness": 12,
            "exponentformat": "power",
            **kw.pop("colorbar", {}),
        }  # powers of ten like the axes, not SI prefixes ("1p")
    if hover is not None:
        tr["hovertemplate"] = hover + "<extra></extra>"
    tr.update(kw)
    return tr


def equal_axes(half: float) -> dict:
    """Layout entries of a square picture of the plane, ``[-half, half]²`` with one scale on both axes
    (circles look round, arrows keep their angles): pass them as ``figure(..., **equal_axes(h))``.
    The plot area shrinks to a square instead of widening the range on a wide screen."""
    r = [-half, half]
    return {
        "xaxis": {"range": r, "constrain": "domain"},
        "yaxis": {"range": r, "scaleanchor": "x", "scaleratio": 1, "constrain": "domain"},
    }


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
    edge = {
        "type": "scatter",
        "x": x,
        "mode": "lines",
        "line": {"width": 0, "color": color},
        "hoverinfo": "skip",
        "showlegend": False,
    }
    lower = {**edge, "y": np.asarray(lo), **kw, "showlegend": False}
    lower.pop("name", None)
    upper = {**edge, "y": np.asarray(hi), "name": name, "fill": "tonexty", "fillcolor": rgba(color, alpha), **kw}
    return [lower, upper]


# --------------------------------------------------------------------------- layouts pages share
def show_pair(left: tuple, right: tuple) -> None:
    """Two figures side by side, each given as ``(figure, key)``."""
    for col, (fig, key) in zip(st.columns(2), (left, right)):
        with col:
            show(fig, key=key)


def figure_beside(fig, key: str, ctx=None, metrics=None, side: str | None = None):
    """A figure in 3/5 of the width; beside it headline numbers (stacked, through ``ctx``) and a note.
    Returns the side column, for anything more."""
    main, aside = st.columns([3, 2])
    with main:
        show(fig, key=key)
    with aside:
        if metrics:
            ctx.metrics(metrics, stacked=True)
        if side:
            st.markdown(side)
    return aside
