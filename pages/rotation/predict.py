"""Predict, then reveal on the page "Rotation without equilibrium" (steps: see ``ui/kit/predict.py``).

The answers come from ``sim.rotation`` for the current parameters: the exact stationary area rate
of the Ornstein–Uhlenbeck model, and the curl of the feed-forward field on the page's grid.
"""

from __future__ import annotations

import numpy as np

from sim import rotation as ro
from ui.kit.figures import params_of
from ui.kit.predict import Step
from pages.rotation import views as V
from pages.rotation import figures as F

OU = ("angle", "kappa", "noise_ratio")
FFN = params_of(F.ffn_figure)  # ("blend", "seed")
ZERO = 1e-9  # a rate or curl below this (relative to the model's own scale) is rounding, not rotation


def rate(v: dict) -> float:
    """Exact stationary mean rate of Lévy area, ½((HΣ)₁₂ − (HΣ)₂₁)."""
    return ro.area_rate(*V.example(*(v[k] for k in OU)))


def current(v: dict) -> str:
    """ "rotates" when the stationary current is non-zero (H and D do not commute), else "balanced"."""
    H, D = V.example(*(v[k] for k in OU))
    scale = float(np.abs(H).max() * np.abs(D).max())
    return "rotates" if abs(ro.area_rate(H, D)) > ZERO * scale else "balanced"


def max_curl(v: dict) -> float:
    return V.ffn_data(*(v[k] for k in FFN))["max_curl"]


def curl(v: dict) -> str:
    """ "gradient" when the FFN field has no curl anywhere on the page's grid, else "curl"."""
    W_in, W_out = V.ffn_weights(*(v[k] for k in FFN))
    scale = float(np.abs(W_in).max() * np.abs(W_out).max())
    return "curl" if max_curl(v) > ZERO * scale * W_in.shape[0] else "gradient"


def _texts(v: dict) -> dict:
    return {
        "angle": f"{v['angle']:g}",
        "kappa": f"{v['kappa']:g}",
        "r": f"{v['noise_ratio']:g}",
        "blend": f"{v['blend']:g}",
    }


def _mc(v: dict) -> list:
    rate_mc, se = V.ou_data(*(v[k] for k in params_of(F.cloud_figure)))["mc"]
    return [("mc", f"{rate_mc:.4f} ± {se:.4f}")]


STEPS = (
    Step(
        "current",
        OU,
        current,
        kind="choice",
        choices=("rotates", "balanced"),
        reveal=F.cloud_figure,
        texts=_texts,
        covers=("subtitle", "sgd", "sgd_notice"),
    ),
    Step(
        "rate",
        OU,
        rate,
        rtol=0.1,
        atol=0.005,
        reveal=F.area_figure,
        texts=_texts,
        metrics=_mc,
        covers=("sgd", "sgd_notice"),
    ),
    Step(
        "curl",
        FFN,
        curl,
        kind="choice",
        choices=("gradient", "curl"),
        reveal=F.ffn_figure,
        texts=_texts,
        metrics=lambda v: [("max_curl", f"{max_curl(v):.3e}")],
        covers=("subtitle", "ffn", "notice"),
    ),
)
