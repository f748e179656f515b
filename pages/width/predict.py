"""Predict, then reveal on the page "Width: lazy training" (steps: see ``ui/kit/predict.py``).

The answers are read from the page's own cached adapters (``pages.width.views``), which call
``sim.width``: the sweep over widths (fitted log–log slopes) and the kernel ``K(0)`` of the run.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from sim import width as W
from ui.kit.figures import params_of
from ui.kit.predict import Step, fmt
from pages.width import views as V
from pages.width import figures as F

SWEEP = ("start", "T", "data", "seed")  # what the sweep over widths depends on (the figure also marks N)
RUN = params_of(F.eigen_figure)  # what one run at width N depends on: N, start, T, dt, data, seed


def _sweep(v: dict) -> dict:
    return V.sweep_data(*(v[k] for k in SWEEP))


def _slope(v: dict, key: str) -> float:
    s = _sweep(v)["slope_" + key]
    if not math.isfinite(s):
        raise ValueError("some run did not move at all, so there is no power law to fit")
    return float(s)


def param_slope(v: dict) -> float:
    """Fitted exponent p of the lazy parameter motion at time T: max shift ∝ N^p."""
    return _slope(v, "lazy_param")


def kernel_slope(v: dict) -> float:
    """Fitted exponent p of the lazy kernel motion at time T: ‖K(T) − K(0)‖ ∝ N^p."""
    return _slope(v, "lazy_kernel")


def eig0(v: dict) -> np.ndarray:
    """Eigenvalues of the kernel K(0) of the run at width N (largest first)."""
    return V.run_data(v["N"], "lazy", *(v[k] for k in RUN[1:]))["eig0"]


def learned(v: dict) -> float:
    """Number of eigenvalues of K(0) at or above 1/T: directions mostly learned by time T."""
    return float(np.sum(eig0(v) >= 1.0 / v["T"]))


def _texts(v: dict) -> dict:
    return {"T": f"{v['T']:g}", "N": v["N"], "inv_T": f"{1.0 / v['T']:.3g}", "M": int(W.dataset(v["data"])[0].size)}


#: every step here: an absolute tolerance (fitted exponents, a count), three digits, the same texts
_step = partial(Step, rtol=0.0, digits=3, texts=_texts)

STEPS = (
    _step(
        "param_slope",
        SWEEP,
        param_slope,
        atol=0.15,
        reveal=F.motion_figure,
        metrics=lambda v: [("mf", fmt(_slope(v, "mean_field_param"), 3))],
        covers=("width.body", "notice"),
    ),
    _step(
        "kernel_slope",
        SWEEP,
        kernel_slope,
        atol=0.2,
        reveal=F.kernel_figure,
        covers=("width.body", "notice"),
    ),
    _step(
        "learned",
        RUN,
        learned,
        atol=0.5,
        reveal=F.eigen_figure,
        metrics=lambda v: [("lam1", fmt(float(eig0(v)[0]), 3)), ("inv_T", fmt(1.0 / v["T"], 3))],
    ),
)
