"""Predict, then reveal on the page "Depth-sum variance" (steps: see ``ui/kit/predict.py``).

The answers are the closed forms of ``sim.depth_sum``: the variance of S_L, its growth exponent
between depths L and 2L, and the residual network's energy.
"""

from __future__ import annotations

import math

from sim import depth_sum as ds
from ui.kit.predict import Step
from pages.depth_sum import figures as V


from pages.depth_sum import figures_resnet as FR


def ds_variance(v: dict) -> float:
    return ds.variance(v["alpha"], v["L"], v["sigma"], v["rho"])


def ds_exponent(v: dict) -> float:
    """Growth exponent of Var S_L between depths L and 2L: log2(Var S_2L / Var S_L)."""
    a, L, s, r = v["alpha"], v["L"], v["sigma"], v["rho"]
    return math.log2(ds.variance(a, 2 * L, s, r) / ds.variance(a, L, s, r))


def ds_residual(v: dict) -> float:
    return ds.residual_energy(v["alpha"], v["L"])


STEPS = (
    Step(
        "variance",
        ("alpha", "L", "sigma", "rho"),
        ds_variance,
        rtol=0.1,
        reveal=V.hist_figure,
        texts=lambda v: {k: f"{v[k]:g}" for k in ("alpha", "L", "sigma", "rho")},
        covers=("statement", "sums", "variants.intro", "variants.table"),
    ),
    Step(
        "exponent",
        ("alpha", "L", "rho"),
        ds_exponent,
        rtol=0.0,
        atol=0.05,
        digits=3,
        reveal=V.variance_figure,
        texts=lambda v: {"L2": 2 * v["L"]},
        covers=("statement", "sums", "variants.intro"),
    ),
    Step("residual", ("alpha", "L"), ds_residual, rtol=0.1, reveal=FR.residual_figure, covers=("residual.notes",)),
)
