"""Predict, then reveal on the page "From tokens to a measure" (steps: see ``ui/kit/predict.py``).

The answers are the closed forms of ``sim.measures`` for n tokens.
"""

from __future__ import annotations

from sim import measures as ms
from ui.kit.predict import Step, fmt


def ms_equispaced(v: dict) -> float:
    """W1 between n equally spaced tokens on the circle and the uniform measure."""
    return ms.equispaced_w1(v["n"])


def ms_fixed_shift(v: dict) -> float:
    """The mean of the fixed-shift bound on W1 for n independent uniform tokens."""
    return ms.fixed_shift_mean(v["n"])


STEPS = (
    Step(
        "equispaced",
        ("n",),
        ms_equispaced,
        rtol=0.1,
        texts=lambda v: {"n": v["n"]},
        metrics=lambda v: [("w1", fmt(ms_equispaced(v)))],
        covers=("statement", "sampling"),
    ),
    Step(
        "fixed_shift",
        ("n",),
        ms_fixed_shift,
        rtol=0.15,
        metrics=lambda v: [("mean", fmt(ms_fixed_shift(v))), ("ratio", fmt(ms_fixed_shift(v) / ms_equispaced(v), 3))],
        covers=("sampling",),
    ),
)
