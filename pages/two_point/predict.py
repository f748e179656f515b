"""Predict, then reveal on the page "Two points: SA vs USA" (steps: see ``ui/kit/predict.py``).

The answers are the exact half-angles of both flows at the end of the page's depth window and the
closed-form energy, computed by ``sim.two_point`` for the current parameters.
"""

from __future__ import annotations

from sim import two_point as tp
from ui.kit.figures import params_of
from ui.kit.predict import Step, fmt
from pages.two_point import views as V

TP = params_of(V.angle_figure)  # ("beta", "theta0", "horizon", "dt")


def tp_tau_end(v: dict) -> float:
    """The end of the page's depth window: the layer map runs round(horizon/Δ) layers of Δ."""
    return max(int(round(v["horizon"] / v["dt"])), 1) * v["dt"]


def tp_end_angles(v: dict) -> tuple[float, float]:
    """Exact half-angles (SA, USA) at the end of the depth window."""
    tau = tp_tau_end(v)
    return (
        float(tp.half_angle(v["beta"], v["theta0"], tau, "SA")[0]),
        float(tp.half_angle(v["beta"], v["theta0"], tau, "USA")[0]),
    )


def tp_smaller(v: dict) -> str:
    sa, usa = tp_end_angles(v)
    if abs(sa - usa) <= 1e-9 + 1e-3 * max(sa, usa):
        return "same"
    return "sa" if sa < usa else "usa"


def tp_sa_end(v: dict) -> float:
    return tp_end_angles(v)[0]


def tp_energy0(v: dict) -> float:
    return float(tp.energy_two_point(v["beta"], v["theta0"]))


def _tp_texts(v: dict) -> dict:
    return {"tau_end": f"{tp_tau_end(v):g}"}


STEPS = (
    Step(
        "smaller",
        TP,
        tp_smaller,
        kind="choice",
        choices=("sa", "usa", "same"),
        reveal=V.angle_figure,
        texts=_tp_texts,
        covers=("subtitle", "notice", "questions"),
    ),
    Step(
        "sa_end",
        TP,
        tp_sa_end,
        rtol=0.25,
        atol=0.002,
        texts=_tp_texts,
        metrics=lambda v: [("sa", fmt(tp_end_angles(v)[0])), ("usa", fmt(tp_end_angles(v)[1]))],
    ),
    Step("energy0", ("beta", "theta0"), tp_energy0, rtol=0.05, reveal=V.energy_figure),
)
