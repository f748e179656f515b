"""Predict, then reveal on the page "Hemisphere clustering" (steps: see ``ui/kit/predict.py``).

The simulations go through the page's cached adapters (``pages.hemisphere.views``), which call ``sim/``:
the answer is the very number the page shows, and it is computed once.
"""

from __future__ import annotations

from ui.kit.predict import Step
from pages.hemisphere import views as V
from pages.hemisphere import figures_depth as C

COLLAPSED = 1e-2  # "one point": the largest pairwise angle at the end is below 0.01 rad


def hemi_final_diameter(v: dict) -> float:
    return float(V.hemi_data(*V.hemi_args(v))["diam"][-1])


def hemi_collapse(v: dict) -> str:
    return "one" if hemi_final_diameter(v) < COLLAPSED else "spread"


def hemi_clusters(v: dict) -> float:
    return float(V.contrast_data(*V.contrast_args(v))["clusters"][-1])


STEPS = (
    Step(
        "collapse",
        V.HP,
        hemi_collapse,
        kind="choice",
        choices=("one", "spread"),
        reveal=C.diam_figure,
        reveal_args=V.hemi_args,
        metrics=lambda v: [("diam", f"{hemi_final_diameter(v):.2e}")],
        covers=("subtitle", "statement", "notice"),
    ),
    Step(
        "clusters",
        V.CP,
        hemi_clusters,
        rtol=0.0,
        atol=0.5,
        reveal=C.clusters_figure,
        reveal_args=V.contrast_args,
        texts=lambda v: {"cb": f"{v['contrast_beta']:g}", "ch": f"{v['contrast_horizon']:g}"},
        covers=("contrast.numbers",),
    ),
)
