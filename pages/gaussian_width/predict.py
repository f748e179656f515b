"""Predict, then reveal on the page "Gaussian width" (steps: see ``ui/kit/predict.py``).

The answers are the exact widths of ``sim.gaussian_width`` (k and M capped at D, as on the page).
"""

from __future__ import annotations

import math

from sim import gaussian_width as gw
from ui.kit.predict import Step, fmt
from pages.gaussian_width import figures as F


def gw_subspace(v: dict) -> float:
    """Width of the unit sphere of a k-dimensional subspace (k capped at D, as on the page)."""
    return gw.exact("subspace", D=v["D"], k=min(v["k"], v["D"]))


def gw_directions(v: dict) -> float:
    """E max_i |<g, u_i>| for M equicorrelated unit directions (M capped at D, as on the page)."""
    return gw.exact("directions", D=v["D"], M=min(v["M"], v["D"]), correlation=v["correlation"])


def _gw_texts(v: dict) -> dict:
    return {"k_eff": min(v["k"], v["D"]), "M_eff": min(v["M"], v["D"]), "rho": f"{v['correlation']:g}"}


STEPS = (
    Step(
        "subspace",
        ("D", "k"),
        gw_subspace,
        rtol=0.1,
        reveal=F.overview_figure,
        reveal_args=lambda v: (min(v["k"], v["D"]), v["samples"], v["seed"]),
        texts=_gw_texts,
        metrics=lambda v: [("sqrt_k", fmt(math.sqrt(min(v["k"], v["D"]))))],
        covers=("statement",),
    ),
    Step(
        "directions",
        ("D", "M", "correlation"),
        gw_directions,
        rtol=0.1,
        reveal=F.tail_figure,
        reveal_args=lambda v: (v["D"], min(v["M"], v["D"]), v["correlation"], v["samples"], v["seed"]),
        texts=_gw_texts,
        metrics=lambda v: [("bound", fmt(gw.max_abs_bound(min(v["M"], v["D"]))))],
        covers=("tail.numbers",),
    ),
)
