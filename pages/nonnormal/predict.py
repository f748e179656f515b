"""Predict, then reveal on the page "Non-normal transient growth" (steps: see ``ui/kit/predict.py``).

The answers come from ``sim.nonnormal``: the peak of ‖e^{sA}‖ and the regime of the Euler step.
"""

from __future__ import annotations

import math

from sim import nonnormal as nn
from ui.kit.predict import Step, fmt
from pages.nonnormal import views as V
from pages.nonnormal import figures as F
from pages.nonnormal import figures_spectra as S


def nn_when(v: dict) -> float:
    return nn.peak(v["M"])[0]


def nn_peak(v: dict) -> float:
    return nn.peak(v["M"])[1]


def nn_regime(v: dict) -> str:
    return nn.euler_regime(V.A_SCALAR, v["delta"])


STEPS = (
    Step(
        "when",
        ("M",),
        nn_when,
        rtol=0.0,
        atol=0.1,
        texts=lambda v: {"M_s": f"{v['M']:g}"},
        metrics=lambda v: [("s_star", fmt(nn_when(v)))],
        covers=("statement", "notice"),
    ),
    Step(
        "peak",
        ("M",),
        nn_peak,
        rtol=0.1,
        reveal=F.response_figure,
        metrics=lambda v: [("m_over_e", fmt(abs(v["M"]) / math.e))],
        covers=("subtitle", "statement", "notice"),
    ),
    Step(
        "regime",
        ("delta",),
        nn_regime,
        kind="choice",
        choices=("monotone", "zero", "alternating", "neutral", "divergent"),
        reveal=S.euler_scalar_figure,
        texts=lambda v: {"delta_s": f"{v['delta']:g}"},
        covers=("euler.result",),
    ),
)
