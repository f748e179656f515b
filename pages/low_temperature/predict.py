"""Predict, then reveal on the page "Low temperature" (steps: see ``ui/kit/predict.py``).

The answers come from ``sim.low_temperature`` for the current parameters: the top eigenspace of
S = VBᵀ (where the projection Π sends the tokens), the exact W₂ between the simulated start and
its projection (through the page's cached adapter, so it is the number the page plots), and log β.
"""

from __future__ import annotations

import math

import numpy as np

from sim import low_temperature as lt
from ui.kit.figures import params_of
from ui.kit.predict import Step, fmt
from pages.low_temperature import views as V
from pages.low_temperature import figures as F

KEY = params_of(F.scene_figure)  # ("model", "gap", "log10_beta", "n", "seeds", "T", "dt")
TARGETS = ("poles_e1", "poles_e2", "poles_e3", "circle_z3")  # the choices offered


def target(v: dict) -> str:
    """Where Π sends the tokens: ±e_j when the top eigenspace of S is the axis e_j, the great
    circle z_j = 0 when it is the plane orthogonal to e_j."""
    Q1, _ = lt.dominant_basis(lt.check_pair(*V.matrices(v["model"], v["gap"])))
    P = Q1 @ Q1.T  # projector onto the top eigenspace
    diag = np.diag(P)
    if Q1.shape[1] == 1 and np.max(diag) > 1 - 1e-9:
        out = f"poles_e{int(np.argmax(diag)) + 1}"
    elif Q1.shape[1] == 2 and np.min(diag) < 1e-9:
        out = f"circle_z{int(np.argmin(diag)) + 1}"
    else:
        out = ""
    if out in TARGETS:
        return out
    raise ValueError("the top eigenspace of S is none of the offered axes or the plane z3 = 0")


def _data(v: dict) -> dict:
    return V.lowtemp_data(*(v[k] for k in KEY))


def w2_start(v: dict) -> float:
    """W₂ between the n starting tokens and their projections Π(z_i(0)), mean over the seeds."""
    return float(_data(v)["w2"][-1, :, 0].mean())


def log_beta(v: dict) -> float:
    """The natural logarithm of the largest β on the page: the depth τ ~ log β of the guarantee."""
    return math.log(float(_data(v)["betas"][-1]))


def _texts(v: dict) -> dict:
    return {"beta": f"{10.0 ** v['log10_beta']:.4g}", "n": v["n"], "seeds": v["seeds"]}


STEPS = (
    Step(
        "target",
        ("model", "gap"),
        target,
        kind="choice",
        choices=TARGETS,
        reveal=F.scene_figure,
        covers=("subtitle", "model"),
    ),
    Step(
        "w2_start",
        ("model", "n", "seeds"),
        w2_start,
        rtol=0.15,
        reveal=F.w2_figure,
        texts=_texts,
        metrics=lambda v: [("end", fmt(float(_data(v)["w2"][-1, :, -1].mean()), 3))],
    ),
    Step(
        "log_beta",
        ("log10_beta",),
        log_beta,
        rtol=0.1,
        reveal=F.dist_figure,
        texts=_texts,
        metrics=lambda v: [("log10", fmt(v["log10_beta"], 3))],
        covers=("subtitle",),
    ),
)
