"""Predict, then reveal: the guided steps of every page and how ``sim/`` answers them (issue 16).

Per page, a tuple of ``ui.predict.Step``: the parameters an answer depends on, the function of the
page's parameter values that computes the true answer with ``sim/`` (never a stored number), the
tolerance, and what is revealed once the student has answered (the page's own figure builder, so
the revealed figure is exactly the one further down the page). Texts: ``assets/text/*/predict.toml``.
Simulations (hemisphere) go through the page's cached adapter, which calls ``sim/``: the answer is
the very number the page shows, and it is computed once.
"""
from __future__ import annotations

import math

import numpy as np

from sim import block as bk
from sim import depth_sum as ds
from sim import gaussian_width as gw
from sim import measures as ms
from sim import nonnormal as nn
from sim import two_point as tp
from ui.predict import Step, fmt

# --------------------------------------------------------------------------- two_point
TP = ("beta", "theta0", "horizon", "dt")


def tp_tau_end(v: dict) -> float:
    """The end of the page's depth window: the layer map runs round(horizon/Δ) layers of Δ."""
    return max(int(round(v["horizon"] / v["dt"])), 1) * v["dt"]


def tp_end_angles(v: dict) -> tuple[float, float]:
    """Exact half-angles (SA, USA) at the end of the depth window."""
    tau = tp_tau_end(v)
    return (float(tp.half_angle(v["beta"], v["theta0"], tau, "SA")[0]),
            float(tp.half_angle(v["beta"], v["theta0"], tau, "USA")[0]))


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


def _tp_fig(name):
    def reveal(t, v):
        from views import two_point as page
        return getattr(page, name)(t, *(v[k] for k in TP))
    return reveal


# --------------------------------------------------------------------------- hemisphere
HP = ("n", "d", "beta", "horizon", "dt", "cap", "A", "A_seed", "seed")
CP = ("n", "d", "contrast_beta", "contrast_horizon", "dt", "A", "A_seed", "seed")
COLLAPSED = 1e-2          # "one point": the largest pairwise angle at the end is below 0.01 rad


def hemi_final_diameter(v: dict) -> float:
    from views.hemisphere import hemi_data
    return float(hemi_data(*(v[k] for k in HP))["diam"][-1])


def hemi_collapse(v: dict) -> str:
    return "one" if hemi_final_diameter(v) < COLLAPSED else "spread"


def hemi_clusters(v: dict) -> float:
    from views.hemisphere import contrast_data
    return float(contrast_data(*(v[k] for k in CP))["clusters"][-1])


def _hemi_diam_fig(t, v):
    from views.hemisphere import diam_figure
    return diam_figure(t, *(v[k] for k in HP))


def _hemi_clusters_fig(t, v):
    from views.hemisphere import clusters_figure
    return clusters_figure(t, *(v[k] for k in CP))


# --------------------------------------------------------------------------- gaussian_width
def gw_subspace(v: dict) -> float:
    """Width of the unit sphere of a k-dimensional subspace (k capped at D, as on the page)."""
    return gw.exact("subspace", D=v["D"], k=min(v["k"], v["D"]))


def gw_directions(v: dict) -> float:
    """E max_i |<g, u_i>| for M equicorrelated unit directions (M capped at D, as on the page)."""
    return gw.exact("directions", D=v["D"], M=min(v["M"], v["D"]), correlation=v["correlation"])


def _gw_texts(v: dict) -> dict:
    return {"k_eff": min(v["k"], v["D"]), "M_eff": min(v["M"], v["D"]), "rho": f"{v['correlation']:g}"}


def _gw_overview_fig(t, v):
    from views.gaussian_width import overview_figure
    return overview_figure(t, min(v["k"], v["D"]), v["samples"], v["seed"])


def _gw_tail_fig(t, v):
    from views.gaussian_width import tail_figure
    return tail_figure(t, v["D"], min(v["M"], v["D"]), v["correlation"], v["samples"], v["seed"])


# --------------------------------------------------------------------------- nonnormal
def nn_when(v: dict) -> float:
    return nn.peak(v["M"])[0]


def nn_peak(v: dict) -> float:
    return nn.peak(v["M"])[1]


def nn_regime(v: dict) -> str:
    from views.nonnormal import A_SCALAR
    return nn.euler_regime(A_SCALAR, v["delta"])


def _nn_response_fig(t, v):
    from views.nonnormal import response_figure
    return response_figure(t, v["M"], v["s_max"])


def _nn_euler_fig(t, v):
    from views.nonnormal import euler_scalar_figure
    return euler_scalar_figure(t, v["M"], v["delta"], v["s_max"])


# --------------------------------------------------------------------------- depth_sum
def ds_variance(v: dict) -> float:
    return ds.variance(v["alpha"], v["L"], v["sigma"], v["rho"])


def ds_exponent(v: dict) -> float:
    """Growth exponent of Var S_L between depths L and 2L: log2(Var S_2L / Var S_L)."""
    a, L, s, r = v["alpha"], v["L"], v["sigma"], v["rho"]
    return math.log2(ds.variance(a, 2 * L, s, r) / ds.variance(a, L, s, r))


def ds_residual(v: dict) -> float:
    return ds.residual_energy(v["alpha"], v["L"])


def _ds_fig(name):
    def reveal(t, v):
        from views.depth_sum import FIGURES
        builder, keys = FIGURES[name]
        return builder(t, *(v[k] for k in keys))
    return reveal


# --------------------------------------------------------------------------- measures
def ms_equispaced(v: dict) -> float:
    """W1 between n equally spaced tokens on the circle and the uniform measure."""
    return ms.equispaced_w1(v["n"])


def ms_fixed_shift(v: dict) -> float:
    """The mean of the fixed-shift bound on W1 for n independent uniform tokens."""
    return ms.fixed_shift_mean(v["n"])


# --------------------------------------------------------------------------- block
def bk_gain0(v: dict) -> float:
    """Largest gain of RMSNorm at x = 0 (ε = 10^log_eps), in dimension norm_d."""
    return bk.rmsnorm_gain(np.zeros(v["norm_d"]), 10.0 ** v["log_eps"])


def bk_sink(v: dict) -> float:
    """Largest number of tokens among which the sink keeps the chosen share (real-valued)."""
    return bk.sink_capacity(v["sink_delta"], v["sink_share"])


# --------------------------------------------------------------------------- the steps
STEPS: dict[str, tuple[Step, ...]] = {
    "two_point": (
        Step("smaller", TP, tp_smaller, kind="choice", choices=("sa", "usa", "same"),
             reveal=_tp_fig("angle_figure"), texts=_tp_texts),
        Step("sa_end", TP, tp_sa_end, rtol=0.25, atol=0.002, texts=_tp_texts,
             metrics=lambda v: [("sa", fmt(tp_end_angles(v)[0])), ("usa", fmt(tp_end_angles(v)[1]))]),
        Step("energy0", ("beta", "theta0"), tp_energy0, rtol=0.05, reveal=_tp_fig("energy_figure")),
    ),
    "hemisphere": (
        Step("collapse", HP, hemi_collapse, kind="choice", choices=("one", "spread"),
             reveal=_hemi_diam_fig, metrics=lambda v: [("diam", f"{hemi_final_diameter(v):.2e}")]),
        Step("clusters", CP, hemi_clusters, rtol=0.0, atol=0.5, reveal=_hemi_clusters_fig,
             texts=lambda v: {"cb": f"{v['contrast_beta']:g}", "ch": f"{v['contrast_horizon']:g}"}),
    ),
    "gaussian_width": (
        Step("subspace", ("D", "k"), gw_subspace, rtol=0.1, reveal=_gw_overview_fig, texts=_gw_texts,
             metrics=lambda v: [("sqrt_k", fmt(math.sqrt(min(v["k"], v["D"]))))]),
        Step("directions", ("D", "M", "correlation"), gw_directions, rtol=0.1, reveal=_gw_tail_fig,
             texts=_gw_texts,
             metrics=lambda v: [("bound", fmt(gw.max_abs_bound(min(v["M"], v["D"]))))]),
    ),
    "nonnormal": (
        Step("when", ("M",), nn_when, rtol=0.0, atol=0.1, texts=lambda v: {"M_s": f"{v['M']:g}"},
             metrics=lambda v: [("s_star", fmt(nn_when(v)))]),
        Step("peak", ("M",), nn_peak, rtol=0.1, reveal=_nn_response_fig,
             metrics=lambda v: [("m_over_e", fmt(abs(v["M"]) / math.e))]),
        Step("regime", ("delta",), nn_regime, kind="choice",
             choices=("monotone", "zero", "alternating", "neutral", "divergent"), reveal=_nn_euler_fig,
             texts=lambda v: {"delta_s": f"{v['delta']:g}"}),
    ),
    "depth_sum": (
        Step("variance", ("alpha", "L", "sigma", "rho"), ds_variance, rtol=0.1, reveal=_ds_fig("hist"),
             texts=lambda v: {k: f"{v[k]:g}" for k in ("alpha", "L", "sigma", "rho")}),
        Step("exponent", ("alpha", "L", "rho"), ds_exponent, rtol=0.0, atol=0.05, digits=3,
             reveal=_ds_fig("var"), texts=lambda v: {"L2": 2 * v["L"]}),
        Step("residual", ("alpha", "L"), ds_residual, rtol=0.1, reveal=_ds_fig("res")),
    ),
    "measures": (
        Step("equispaced", ("n",), ms_equispaced, rtol=0.1, texts=lambda v: {"n": v["n"]},
             metrics=lambda v: [("w1", fmt(ms_equispaced(v)))]),
        Step("fixed_shift", ("n",), ms_fixed_shift, rtol=0.15,
             metrics=lambda v: [("mean", fmt(ms_fixed_shift(v))),
                                ("ratio", fmt(ms_fixed_shift(v) / ms_equispaced(v), 3))]),
    ),
    "block": (
        Step("gain0", ("norm_d", "log_eps"), bk_gain0, rtol=0.1,
             texts=lambda v: {"eps": f"$10^{{{v['log_eps']:g}}}$"},
             metrics=lambda v: [("gain", fmt(bk_gain0(v)))]),
        Step("sink", ("sink_delta", "sink_share"), bk_sink, rtol=0.1,
             texts=lambda v: {"gap": f"{v['sink_delta']:g}", "share": f"{v['sink_share']:g}"},
             metrics=lambda v: [("nmax", fmt(bk_sink(v))), ("floor", f"{math.floor(bk_sink(v)):d}")]),
    ),
}

# --------------------------------------------------------------------------- pages with their own module
from views import predict_coordinates, predict_low_temperature, predict_rotation, predict_width  # noqa: E402

STEPS.update({
    "width": predict_width.STEPS,
    "low_temperature": predict_low_temperature.STEPS,
    "coordinates": predict_coordinates.STEPS,
    "rotation": predict_rotation.STEPS,
})
