"""Predict, then reveal on the page "Inside a block" (steps: see ``ui/kit/predict.py``).

The answers come from ``sim.block``: the gain of RMSNorm at the origin and the sink's capacity.
"""

from __future__ import annotations

import math

import numpy as np

from sim import block as bk
from ui.kit.predict import Step, fmt


def bk_gain0(v: dict) -> float:
    """Largest gain of RMSNorm at x = 0 (ε = 10^log_eps), in dimension norm_d."""
    return bk.rmsnorm_gain(np.zeros(v["norm_d"]), 10.0 ** v["log_eps"])


def bk_sink(v: dict) -> float:
    """Largest number of tokens among which the sink keeps the chosen share (real-valued)."""
    return bk.sink_capacity(v["sink_delta"], v["sink_share"])


STEPS = (
    Step(
        "gain0",
        ("norm_d", "log_eps"),
        bk_gain0,
        rtol=0.1,
        texts=lambda v: {"eps": f"$10^{{{v['log_eps']:g}}}$"},
        metrics=lambda v: [("gain", fmt(bk_gain0(v)))],
        covers=("norm", "notice"),
    ),
    Step(
        "sink",
        ("sink_delta", "sink_share"),
        bk_sink,
        rtol=0.1,
        texts=lambda v: {"gap": f"{v['sink_delta']:g}", "share": f"{v['sink_share']:g}"},
        metrics=lambda v: [("nmax", fmt(bk_sink(v))), ("floor", f"{math.floor(bk_sink(v)):d}")],
        covers=("sink",),
    ),
)
