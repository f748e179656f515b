"""What every figure gets before it is shown or frozen: log-axis labels and a legend that fit.

:func:`fit_log_ticks` labels log axes in full at a density that suits their span; :func:`fit_legend`
(on a live figure) and :func:`fit_legend_spec` (on a serialised one) keep the house legend clear of
the title and the plot on a narrow screen. Imports nothing of the project: ``ui.kit.frozen`` and
``ui.kit.figures`` both build on it.
"""

from __future__ import annotations

import math
import re

import numpy as np
import plotly.graph_objects as go

_SUPER = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def log_tick_label(v: float) -> str:
    """The full label of a log-axis tick: ``0.5``, ``20``, ``2×10⁻⁵`` (never a bare digit)."""
    e = math.floor(math.log10(v) + 1e-9)
    m = v / 10.0**e
    if -3 <= e <= 4:
        return f"{v:.6g}"
    mant = f"{m:.3g}"
    return f"10{str(e).translate(_SUPER)}" if mant == "1" else f"{mant}×10{str(e).translate(_SUPER)}"


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
    step = next(d * 10.0**e for d in (1, 2, 5, 10) if d * 10.0**e >= raw)
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


# --------------------------------------------------------------------------- legends on narrow screens
#: the legend is never capped below this share of the figure's height (Plotly's default cap for a
#: horizontal legend is 0.5, beyond which it scrolls inside a box and hides entries)
LEGEND_MAX = 1.0
TITLE_PX = 34  # the house title (15 px font at the top of the figure) ends above this line
#: a phone's plot width (390 px screen, the page's padding, the house margins) that the legend's
#: rows are counted for, the height of one row, and how many rows the house top margin already holds
PHONE_PLOT_PX = 286
ROW_PX = 20
HOUSE_ROWS = 2
_CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]")
_TAG = re.compile(r"<[^>]+>")


def _text_px(name: str, size: float = 13.0) -> float:
    """About how wide ``name`` is drawn (tags dropped): a CJK character is ``size`` wide, others ~0.5."""
    text = _TAG.sub("", name)
    cjk = len(_CJK.findall(text))
    return size * (cjk + 0.5 * (len(text) - cjk))


def phone_rows(names, width: float = PHONE_PLOT_PX) -> int:
    """How many rows a horizontal legend of ``names`` wraps onto on a phone (Plotly packs entries
    left to right: the symbol and its gap, ~50 px, then the text)."""
    rows, used = 0, width
    for n in names:
        w = 50.0 + _text_px(n)
        if used + w > width:
            rows, used = rows + 1, 0.0
        used += w
    return rows


def _entries(traces) -> list[str]:
    """The legend entries of ``traces`` (dicts or Plotly traces): named, not hidden from the legend,
    one per legend group."""
    out, groups = [], set()
    for tr in traces:
        get = tr.get if isinstance(tr, dict) else (lambda k, tr=tr: getattr(tr, k, None))
        if get("showlegend") is False or not get("name"):
            continue
        g = get("legendgroup")
        if g and g in groups:
            continue
        groups.add(g)
        out.append(str(get("name")))
    return out


def _plan(lg: dict, title: dict, height, names: list[str], showlegend) -> dict | None:
    """What :func:`fit_legend` changes in the layout: ``None``, or the legend entries and the new
    height. Shared by the live and the serialised figure, so that both get the same."""
    if lg.get("orientation") != "h" or lg.get("maxheight") is not None:
        return None
    if showlegend is False or (showlegend is None and len(names) < 2):
        return {"legend": {"maxheight": LEGEND_MAX}}  # nothing drawn; the entries are harmless
    house = (
        lg.get("y") is not None
        and lg["y"] >= 1.0
        and lg.get("yanchor") == "bottom"
        and lg.get("yref") in (None, "paper")
        and title.get("text")
        and title.get("yref") in (None, "container")
        and (title.get("y") is None or title["y"] > 0.9)
        and height
    )
    if not house:
        return {"legend": {"maxheight": LEGEND_MAX}}
    out = {"legend": {"yref": "container", "yanchor": "top", "y": 1.0 - TITLE_PX / height, "maxheight": LEGEND_MAX}}
    if lg.get("entrywidthmode") != "fraction":  # rows of free width: as many as a phone needs
        extra = max(0, phone_rows(names) - HOUSE_ROWS) * ROW_PX
        if extra:
            out["height"] = height + extra
            out["legend"]["y"] = 1.0 - TITLE_PX / (height + extra)
    return out


def fit_legend(fig) -> None:
    """Keep a house legend clear of the title and of the plot at any width, and whole, in place.

    The house legend sits above the plot, anchored to the plot's top edge; on a phone its entries
    wrap onto more rows, grow upwards into the title and push the plot down to a sliver. A legend
    in that place (on a 2-D or a 3-D figure with a title at the top) is anchored instead to the
    figure, right under the title: the plot then starts below its last row whatever the width
    (Plotly reserves that room). No legend is capped (a capped one scrolls inside a box and hides
    entries): the figure is made taller by the rows a phone needs beyond the ones the house margin
    holds (:func:`phone_rows`), so that the plot keeps its height on a phone; on a wide screen the
    plot gets that room. A legend laid out in rows by ``ui.kit.figures.tall_legend`` has its rows
    reserved already. Legends a page placed itself keep their place."""
    lg = fig.layout.legend
    title = fig.layout.title
    plan = _plan(
        {
            "orientation": lg.orientation,
            "maxheight": lg.maxheight,
            "y": lg.y,
            "yanchor": lg.yanchor,
            "yref": lg.yref,
            "entrywidthmode": lg.entrywidthmode,
        },
        {"text": title.text, "yref": title.yref, "y": title.y},
        fig.layout.height,
        _entries(fig.data),
        fig.layout.showlegend,
    )
    if plan:
        fig.update_layout(**plan)


def fit_legend_spec(layout: dict, data=()) -> None:
    """:func:`fit_legend` on a serialised figure's ``layout`` dict (``fig.to_dict()["layout"]``) and
    its traces ``data``, in place.

    The same entries as ``fit_legend`` on the live figure, without Plotly's property machinery
    (``update_layout`` validates and walks the layout tree for every figure, paid by every
    distinct rerun; this is a few dict look-ups). ``ui.kit.figures.Frozen`` uses it."""
    lg = layout.get("legend") or {}
    plan = _plan(lg, layout.get("title") or {}, layout.get("height"), _entries(data), layout.get("showlegend"))
    if plan:
        layout["legend"] = {**lg, **plan["legend"]}
        if "height" in plan:
            layout["height"] = plan["height"]


# --------------------------------------------------------------------------- points the screen can show
#: points of one line the browser is sent at most: a figure 1400 px wide has ~1300 px of plot, and
#: each pixel column shows at most its lowest and highest value (:func:`fewer_points_spec`)
MAX_LINE_POINTS = 2800
_ITEM = {"f8": 8, "f4": 4, "i4": 4, "u4": 4, "i2": 2, "u2": 2, "i1": 1, "u1": 1}
#: trace entries that hold one value per point: a trace with any of them as an array is left whole
_PER_POINT = (
    "text",
    "hovertext",
    "customdata",
    "ids",
    "marker",
    "error_x",
    "error_y",
    "selectedpoints",
    "width",
    "base",
    "offset",
)


def _n_points(v) -> int:
    """How many values a serialised array holds, without decoding it (typed form: from its length)."""
    if isinstance(v, dict) and "bdata" in v:
        if "shape" in v:
            return -1  # a 2-D array: not a line
        return len(v["bdata"]) * 3 // 4 // _ITEM.get(v.get("dtype"), 1)
    if isinstance(v, (list, tuple, np.ndarray)):
        return len(v)
    return 0


def _array(v) -> np.ndarray | None:
    if isinstance(v, dict) and "bdata" in v:
        import base64

        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
    try:
        a = np.asarray(v, dtype=float)
    except (TypeError, ValueError):
        return None
    return a if a.ndim == 1 else None


def _like(v, a: np.ndarray):
    """``a`` in the form ``v`` came in (typed, list or array)."""
    if isinstance(v, dict) and "bdata" in v:
        import base64

        return {"dtype": v["dtype"], "bdata": base64.b64encode(np.ascontiguousarray(a)).decode("ascii")}
    if isinstance(v, np.ndarray):
        return a
    return a.tolist()


def minmax_keep(y: np.ndarray, buckets: int) -> np.ndarray:
    """Indices of ``y`` that draw the same line on ``buckets`` pixel columns: in each of ``buckets``
    equal runs of consecutive samples its lowest and its highest (in their order), and both ends.
    Every extreme of the line is kept: a peak stays as high, a dip as deep."""
    n = y.size
    edges = np.linspace(0, n, buckets + 1).round().astype(int)
    keep = [0, n - 1]
    for a, b in zip(edges[:-1], edges[1:]):
        if b > a:
            seg = y[a:b]
            keep += [a + int(np.argmin(seg)), a + int(np.argmax(seg))]
    return np.unique(np.asarray(keep))


def fewer_points_trace(tr: dict, max_points: int = MAX_LINE_POINTS) -> dict | None:
    """A serialised 2-D line trace with more than ``max_points`` points, thinned to what a screen
    can show (:func:`minmax_keep` over ``max_points // 2`` columns); ``None`` when it is left as it
    is: fewer points, not a plain line (markers, text, per-point hover or error bars, fills between
    traces), x not monotone (a curve that turns back: a column's extremes would not be its shape)
    or gaps (NaN)."""
    if tr.get("type", "scatter") != "scatter" or tr.get("mode", "lines") != "lines":
        return None
    x, y = tr.get("x"), tr.get("y")
    n = _n_points(y)
    if n <= max_points or x is None or _n_points(x) != n:
        return None
    if (
        any(isinstance(tr.get(k), (dict, list, tuple, np.ndarray)) and k != "marker" for k in _PER_POINT)
        or isinstance((tr.get("marker") or {}).get("color"), (dict, list, np.ndarray))
        or tr.get("fill") not in (None, "none")
    ):
        return None
    xa, ya = _array(x), _array(y)
    if xa is None or ya is None or xa.dtype.kind not in "iuf" or ya.dtype.kind not in "iuf":
        return None
    if not (np.isfinite(xa).all() and np.isfinite(ya).all()):
        return None
    dx = np.diff(xa)
    if not ((dx >= 0).all() or (dx <= 0).all()):
        return None
    k = minmax_keep(ya, max_points // 2)
    return {**tr, "x": _like(x, xa[k]), "y": _like(y, ya[k])}


def fewer_points_spec(spec: dict, max_points: int = MAX_LINE_POINTS) -> dict:
    """``spec`` (a serialised figure) with its long 2-D lines thinned (:func:`fewer_points_trace`):
    ``spec`` itself when there is nothing to thin (the usual case: a dict look-up per trace), else a
    new dict sharing everything else. The figure's CSV (``ui.kit.access``) keeps every point."""
    data = spec.get("data") or []
    out = None
    for i, tr in enumerate(data):
        if not isinstance(tr, dict) or _n_points(tr.get("y")) <= max_points:
            continue
        thin = fewer_points_trace(tr, max_points)
        if thin is not None:
            if out is None:
                out = list(data)
            out[i] = thin
    return spec if out is None else {**spec, "data": out}
