"""What every figure gets before it is shown or frozen: log-axis labels and a legend that fit.

:func:`fit_log_ticks` labels log axes in full at a density that suits their span; :func:`fit_legend`
(on a live figure) and :func:`fit_legend_spec` (on a serialised one) keep the house legend clear of
the title and the plot on a narrow screen. Imports nothing of the project: ``ui.frozen`` and
``ui.figures`` both build on it.
"""
from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

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



# --------------------------------------------------------------------------- legends on narrow screens
#: a horizontal legend takes at most this share of the figure's height, then scrolls
LEGEND_MAX = 0.3
TITLE_PX = 34  # the house title (15 px font at the top of the figure) ends above this line


def fit_legend(fig) -> None:
    """Keep a house legend clear of the title and of the plot at any width, in place.

    The house legend sits above the plot, anchored to the plot's top edge; on a phone its entries
    wrap onto more rows, grow upwards into the title and push the plot down to a sliver. A legend
    in that place (on a 2-D or a 3-D figure with a title at the top) is anchored instead to the figure, right under the title: the plot
    then starts below its last row whatever the width (Plotly reserves that room), and beyond
    ``LEGEND_MAX`` of the height it scrolls. Legends a page placed itself keep their place (a
    horizontal one gets the same height cap)."""
    lg = fig.layout.legend
    if lg.orientation != "h" or lg.maxheight is not None:
        return
    title = fig.layout.title
    house = (lg.y is not None and lg.y >= 1.0 and lg.yanchor == "bottom" and lg.yref in (None, "paper")
             and title.text and title.yref in (None, "container") and (title.y is None or title.y > 0.9)
             and fig.layout.height)
    if house:
        fig.update_layout(legend=dict(yref="container", yanchor="top", y=1.0 - TITLE_PX / fig.layout.height,
                                      maxheight=LEGEND_MAX))
    else:
        fig.update_layout(legend=dict(maxheight=LEGEND_MAX))


def fit_legend_spec(layout: dict) -> None:
    """:func:`fit_legend` on a serialised figure's ``layout`` dict (``fig.to_dict()["layout"]``), in place.

    The same entries as ``fit_legend`` on the live figure, without Plotly's property machinery
    (``update_layout`` validates and walks the layout tree for every figure, paid by every
    distinct rerun; this is a few dict look-ups). ``ui.figures.Frozen`` uses it."""
    lg = layout.get("legend") or {}
    if lg.get("orientation") != "h" or lg.get("maxheight") is not None:
        return
    title = layout.get("title") or {}
    height = layout.get("height")
    house = (lg.get("y") is not None and lg["y"] >= 1.0 and lg.get("yanchor") == "bottom"
             and lg.get("yref") in (None, "paper") and title.get("text")
             and title.get("yref") in (None, "container") and (title.get("y") is None or title["y"] > 0.9)
             and height)
    lg = layout["legend"] = dict(lg)
    if house:
        lg.update(yref="container", yanchor="top", y=1.0 - TITLE_PX / height, maxheight=LEGEND_MAX)
    else:
        lg["maxheight"] = LEGEND_MAX
