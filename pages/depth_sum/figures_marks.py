"""The depth_sum page's drawing helpers shared by its figures: the bottom margin, the reference
line style, the chosen depth's line and legend entry, the line at e."""

from __future__ import annotations

import functools
import math

from ui.kit.figures import COLORS, hline, line, markers, vline


# Every figure is built in one figure(...) call from plain trace dicts (ui.kit.figures: no per-property
# validation; an alpha change rebuilds all eleven). The margin: room for the
# x tick labels and title from the start: automargin pushed the bottom margin of every figure here
# to 53-56 px, and each push makes Plotly.js draw the figure a second time. It still pushes if needed.
MARGIN = {"b": 60}
_REF_LINE = {"color": COLORS["ref"], "width": 1.2, "dash": "longdash"}
#: an exact reference curve drawn thinner and patterned (slopes, limits, other regimes)
_ref = functools.partial(line, color=COLORS["ref"], width=1.5, dash="dot")
#: Monte Carlo means with error bars
_mc_bars = functools.partial(markers, size=8)


def _vline(L) -> dict:
    """A thin vertical line at the chosen depth."""
    return vline(L, **_REF_LINE)


def _your_L(text) -> dict:
    """The legend entry of the vertical line at the chosen depth (a text label inside the plot ran
    into the error bars and markers)."""
    return {
        "type": "scatter",
        "x": [None],
        "y": [None],
        "mode": "lines",
        "line": _REF_LINE,
        "name": text,
        "hoverinfo": "skip",
    }


def _eline(alpha: float) -> dict:
    """At alpha = 1/2 the horizontal line at e with its label (what fig.add_hline(annotation_text="e")
    makes), as the ``shapes`` and ``annotations`` of :func:`figure`; nothing at other alpha."""
    if alpha != 0.5:
        return {}
    label = {
        "showarrow": False,
        "text": "e",
        "x": 1,
        "xanchor": "right",
        "xref": "x domain",
        "y": math.e,
        "yanchor": "top",
        "yref": "y",
    }
    return {"shapes": [hline(math.e, dash="dot")], "annotations": [label]}
