"""The depth_sum page's residual-network figures: its energy over depth, the sweeps over L and N,
one training step and the learning rate (their data: views_resnet.py)."""

from __future__ import annotations

import math

import numpy as np

from sim import depth_sum as ds
from ui.kit.figures import COLORS, cached_figure, figure, line, markers
from pages.depth_sum.figures_marks import MARGIN, _ref, _mc_bars, _vline, _your_L, _eline
from pages.depth_sum.views import SWEEP_L, SWEEP_N
from pages.depth_sum.views_resnet import _sweep_data, one_step_data, residual


@cached_figure
def residual_figure(t, alpha, L, N, trials, seed):
    r = residual(alpha, L, N, trials, seed)
    return figure(
        t("fig.x_ell", L=L),
        t("fig.y_energy"),
        t("fig.res_title", N=N, n=r["n"]),
        [
            line(r["fine"], r["exact"], t("fig.res_exact")),
            _mc_bars(r["ell"], r["mean"], t("fig.res_mc"), size=7, error=2 * r["se"], error_y={"thickness": 1}),
        ],
        **_eline(alpha),
        margin=MARGIN,
    )


@cached_figure
def sweep_L_figure(t, alpha, L, N, trials, seed):
    sw = _sweep_data(alpha, L, N, trials, seed)
    Lf = np.unique(np.round(np.logspace(0, math.log10(SWEEP_L[-1]), 200)).astype(int))
    return figure(
        t("fig.x_L"),
        t("fig.y_energy_final"),
        t("fig.sweep_L_title", N=N),
        [
            line(Lf, [ds.residual_energy(alpha, int(x)) for x in Lf], t("fig.sweep_exact")),
            _mc_bars(sw["L"], sw["L_mean"], t("fig.res_mc"), error=2 * sw["L_se"]),
        ],
        log_x=True,
        log_y=alpha < 0.5,
        **_eline(alpha),
        margin=MARGIN,
    )


@cached_figure
def sweep_N_figure(t, alpha, L, N, trials, seed):
    sw = _sweep_data(alpha, L, N, trials, seed)
    ex = ds.residual_energy(alpha, L)
    return figure(
        t("fig.x_N"),
        t("fig.y_energy_final"),
        t("fig.sweep_N_title", L=L),
        [
            line([SWEEP_N[0], SWEEP_N[-1]], [ex, ex], t("fig.sweep_exact_N")),
            _mc_bars(sw["N"], sw["N_mean"], t("fig.res_mc"), error=2 * sw["N_se"]),
            {
                "type": "scatter",
                "x": sw["N"],
                "y": sw["N_sd"],
                "mode": "lines+markers",
                "name": t("fig.sweep_sd"),
                "line": {"color": COLORS["accent"], "dash": "dash"},
                "marker": {"symbol": "square-open", "color": COLORS["accent"]},
            },
        ],
        log_x=True,
        log_y=True,
        margin=MARGIN,
    )


@cached_figure
def step_figure(t, alpha, L, c):
    s = one_step_data(alpha, c)
    ends = [s["L"][0], s["L"][-1]]
    return figure(
        t("fig.x_L_step"),
        t("fig.y_f"),
        t("fig.step_title", c=f"{c:g}"),
        [
            line(s["L"], s["f"], t("fig.step_exact")),
            _ref(ends, [s["lim"]] * 2, t("fig.step_lim")),
            _ref(ends, [s["lin"]] * 2, t("fig.step_lin"), color=COLORS["bound"], dash="dashdot", width=2),
            markers(s["L_mark"], s["f_sgd"], t("fig.step_sgd")),
            {
                "type": "scatter",
                "x": s["L_mark"],
                "y": s["f_sign"],
                "mode": "markers",
                "name": t("fig.step_sign"),
                "marker": {
                    "size": 10,
                    "symbol": "x-thin",
                    "color": COLORS["accent"],
                    "line": {"width": 2, "color": COLORS["accent"]},
                },
            },
            _your_L(t("fig.your_L")),
        ],
        log_x=True,
        shapes=[_vline(L)],
        margin={**MARGIN, "r": 28},
    )


@cached_figure
def lr_figure(t, alpha, c):
    s = one_step_data(alpha, c)
    Lm = s["L_mark"].astype(float)
    return figure(
        t("fig.x_L_step"),
        t("fig.y_lr"),
        t("fig.lr_title", al=f"{alpha:g}"),
        [
            line(Lm, s["lr_sgd"], t("fig.lr_sgd", s=f"{2 * alpha - 1:.2f}")),
            line(Lm, s["lr_sign"], t("fig.lr_sign", s=f"{alpha - 1:.2f}"), color=COLORS["accent"]),
            _ref(Lm, np.abs(s["dw"]), t("fig.lr_dw", s=f"{alpha - 1:.2f}")),
        ],
        log_x=True,
        log_y=True,
        margin={**MARGIN, "l": 75},
    )
