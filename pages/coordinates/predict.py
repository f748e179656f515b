"""Predict, then reveal on the page "Coordinates, metrics and limits" (steps: see ``ui/kit/predict.py``).

Every answer is computed by ``sim.coordinates`` for the current parameters: the closed-form flows
at the end of the training window, the Lévy area of the loop, and the limit exp(π[B, A]) y₀.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from sim import coordinates as co
from ui.kit.figures import params_of
from ui.kit.predict import Step, fmt
from pages.coordinates import views as V

METRIC = params_of(V.theta_figure)  # ("a0", "b0", "y", "horizon", "dt")
LIMIT_GAP = 1e-9  # |exp(π[B, A]) y₀ − y₀| below this: the loop's limit is y₀ itself


def t_end(v: dict) -> float:
    """The end of the page's training window: round(t_max/Δ) steps of Δ (at least one)."""
    return max(int(round(v["horizon"] / v["dt"])), 1) * v["dt"]


def pullback_end(v: dict) -> float:
    """θ(t_end) of gradient flow in the pulled-back metric (undefined once it reaches the saddle)."""
    ts = V.saddle_crossing(v["a0"], v["b0"], v["y"])
    if ts is not None and ts <= t_end(v):
        raise ValueError(
            f"from this start the pulled-back flow reaches the saddle a = b = 0 at t = {ts:.3g}, "
            "where it is undefined; choose a start off the diagonals a = ±b"
        )
    return float(co.theta_flow(v["a0"], v["b0"], v["y"], [t_end(v)], "pullback")[0])


def euclidean_end(v: dict) -> float:
    return float(co.theta_flow(v["a0"], v["b0"], v["y"], [t_end(v)], "euclidean")[0])


def a_end(v: dict) -> float:
    """a(t_end) of Euclidean gradient flow in (a, b)."""
    return float(co.ab_flow(v["a0"], v["b0"], v["y"], [t_end(v)])[0, 0])


def area(v: dict) -> float:
    """Lévy area of the loop x_n (sampled, as on the page)."""
    return co.levy_area(v["n"])


def endpoint(v: dict) -> str:
    """Where y_n(2π) goes as n grows: back to y₀ ("start") or to exp(π[B, A]) y₀ ≠ y₀ ("elsewhere")."""
    A, B = V.PAIRS[v["pair"]]
    gap = float(np.linalg.norm(co.area_limit(A, B, V.Y0) - V.Y0))
    return "start" if gap <= LIMIT_GAP * max(1.0, float(np.linalg.norm(V.Y0))) else "elsewhere"


def saddle_time(v: dict) -> float | None:
    """When the pulled-back flow reaches the saddle a = b = 0 inside the window (None: it does not)."""
    ts = V.saddle_crossing(v["a0"], v["b0"], v["y"])
    return ts if ts is not None and ts <= t_end(v) else None


def _texts(v: dict) -> dict:
    ts = saddle_time(v)
    return {
        "t_s": "—" if ts is None else f"{ts:.3g}",
        "t_end": f"{t_end(v):g}",
        "a0": f"{v['a0']:g}",
        "b0": f"{v['b0']:g}",
        "y": f"{v['y']:g}",
        "theta0": f"{v['a0'] * v['b0']:.4g}",
        "c": f"{v['a0'] ** 2 - v['b0'] ** 2:.4g}",
        "n": v["n"],
    }


def _limit_metrics(v: dict) -> list:
    A, B = V.PAIRS[v["pair"]]
    lim = co.area_limit(A, B, V.Y0)
    return [
        ("limit", "(" + ", ".join(fmt(float(x), 4) for x in lim) + ")"),
        ("gap", fmt(float(np.linalg.norm(lim - V.Y0)), 3)),
    ]


PULLBACK_END = Step(
    "pullback_end",
    METRIC,
    pullback_end,
    rtol=0.05,
    atol=0.02,
    reveal=V.theta_figure,
    texts=_texts,
    metrics=lambda v: [("euclidean", fmt(euclidean_end(v)))],
    covers=("metric",),
)
A_END = Step(
    "a_end",
    METRIC,
    a_end,
    rtol=0.1,
    atol=0.02,
    reveal=V.ab_figure,
    texts=_texts,
    metrics=lambda v: [("b_end", fmt(float(co.ab_flow(v["a0"], v["b0"], v["y"], [t_end(v)])[0, 1])))],
    covers=("metric",),
)

#: in place of "pullback_end" for a start whose pulled-back flow meets the saddle inside the window (a
#: diagonal a = ±b with ab of the other sign than y, or a = b = 0): there θ has no value to predict in
#: that metric, so the step asks for the Euclidean flow's θ, which is defined for every t
SADDLE_END = replace(
    PULLBACK_END,
    id="saddle_end",
    answer=euclidean_end,
    metrics=lambda v: [("t_saddle", fmt(saddle_time(v) or 0.0, 3))],
    covers=(),
)
#: in place of "a_end" at such a start: the same value, but the path slides into the saddle (θ → 0), not to y
SADDLE_A_END = replace(A_END, id="saddle_a_end", covers=())

#: steps a page may show in place of one of STEPS (their texts are checked like STEPS' own)
ALTERNATE_STEPS = (SADDLE_END, SADDLE_A_END)


def steps_for(v: dict) -> tuple:
    """The page's steps for these values: :data:`STEPS`, with :data:`SADDLE_END` and
    :data:`SADDLE_A_END` in place of "pullback_end" and "a_end" when the pulled-back flow meets the
    saddle before the end of the window."""
    if saddle_time(v) is None:
        return STEPS
    swap = {"pullback_end": SADDLE_END, "a_end": SADDLE_A_END}
    return tuple(swap.get(s.id, s) for s in STEPS)


STEPS = (
    PULLBACK_END,
    A_END,
    Step(
        "area",
        ("n",),
        area,
        rtol=0.02,
        reveal=V.area_figure,
        texts=_texts,
        metrics=lambda v: [("radius", fmt(1.0 / math.sqrt(v["n"]), 3))],
        covers=("limit", "notice"),
    ),
    Step(
        "endpoint",
        ("pair",),
        endpoint,
        kind="choice",
        choices=("start", "elsewhere"),
        reveal=V.endpoint_figure,
        metrics=_limit_metrics,
        covers=("limit", "notice"),
    ),
)
