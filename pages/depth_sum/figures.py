"""Depth-sum variance: the figure builders of pages/depth_sum/page.py (their data: pages/depth_sum/views.py)."""

from __future__ import annotations

import functools
import math

import numpy as np

from sim import depth_sum as ds
from ui.kit.figures import COLORS, cached_figure, figure, histogram, hline, line, markers, vline
from pages.depth_sum.views import (
    REGIME_ALPHAS,
    SWEEP_L,
    SWEEP_N,
    _sweep_data,
    at_depth,
    covariance,
    one_step_data,
    over_depth,
    paths,
    residual,
    variants,
)

# --------------------------------------------------------------------------- figures
# Every figure is built in one figure(...) call from plain trace dicts (ui.kit.figures: no per-property
# validation; an alpha change rebuilds all eleven). The margin: room for the
# x tick labels and title from the start: automargin pushed the bottom margin of every figure here
# to 53-56 px, and each push makes Plotly.js draw the figure a second time. It still pushes if needed.
MARGIN = {"b": 60}
_REF_LINE = {"color": COLORS["ref"], "width": 1.2, "dash": "longdash"}
#: an exact reference curve drawn thinner and patterned (slopes, limits, other regimes)
_ref = functools.partial(line, color=COLORS["ref"], width=1.5, dash="dot")
#: Monte Carlo means with error bars
_mc_bars = functools.partial(markers, size=8)


def _vline(L) -> dict:
    """A thin vertical line at the chosen depth."""
    return vline(L, **_REF_LINE)


def _your_L(text) -> dict:
    """The legend entry of the vertical line at the chosen depth (a text label inside the plot ran
    into the error bars and markers)."""
    return {
        "type": "scatter",
        "x": [None],
        "y": [None],
        "mode": "lines",
        "line": _REF_LINE,
        "name": text,
        "hoverinfo": "skip",
    }


def _eline(alpha: float) -> dict:
    """At alpha = 1/2 the horizontal line at e with its label (what fig.add_hline(annotation_text="e")
    makes), as the ``shapes`` and ``annotations`` of :func:`figure`; nothing at other alpha."""
    if alpha != 0.5:
        return {}
    label = {
        "showarrow": False,
        "text": "e",
        "x": 1,
        "xanchor": "right",
        "xref": "x domain",
        "y": math.e,
        "yanchor": "top",
        "yref": "y",
    }
    return {"shapes": [hline(math.e, dash="dot")], "annotations": [label]}


@cached_figure
def hist_figure(t, alpha, L, sigma, rho, mu, a, trials, seed):
    d = at_depth(alpha, L, sigma, rho, mu, a, trials, seed)
    e = d["edges"]
    return figure(
        t("fig.x_sum"),
        t("fig.y_density"),
        t("fig.hist_title"),
        [
            histogram(e, d["dens"], t("fig.hist_mc", n=d["n"])),
            line(d["grid"], d["pdf"], t("fig.hist_exact")),
        ],
        margin=MARGIN,
    )


@cached_figure
def variance_figure(t, alpha, L, sigma, rho, mu, a, trials, seed):
    g = over_depth(alpha, sigma, rho, mu, a, trials, seed)
    ref = g["var_indep"][0] * g["fine"] ** (1 - 2 * alpha) / g["fine"][0] ** (1 - 2 * alpha)
    return figure(
        t("fig.x_L"),
        t("fig.y_var"),
        t("fig.var_title"),
        [
            line(g["fine"], g["var"], t("fig.var_exact")),
            _mc_bars(
                g["L"],
                g["var_mc"],
                t("fig.var_mc"),
                error=(g["var_hi"] - g["var_mc"], g["var_mc"] - g["var_lo"]),
                error_y={"thickness": 1},
            ),
            _ref(g["fine"], ref, t("fig.slope_ref", s=f"{1 - 2 * alpha:.2f}")),
            _your_L(t("fig.your_L")),
        ],
        log_x=True,
        log_y=True,
        shapes=[_vline(L)],
        margin={**MARGIN, "l": 68},
    )


@cached_figure
def regime_figure(t, alpha, L, sigma, rho, mu, a, trials, seed):
    g = over_depth(alpha, sigma, rho, mu, a, trials, seed)
    styles = {0.25: "dot", 0.5: "dash", 0.75: "dashdot"}
    # the grey references go on top (thin, patterned): at the defaults the α = 0.5 one coincides
    # with the exact curve and would otherwise be hidden under it
    return figure(
        t("fig.x_L"),
        t("fig.y_prob", a=f"{a:g}"),
        t("fig.regime_title"),
        [
            line(g["fine"], g["p"], t("fig.regime_exact", al=f"{alpha:g}")),
            *(
                _ref(g["fine"], g["p_ref"][al], t("fig.regime_ref", al=f"{al:g}"), dash=styles[al])
                for al in REGIME_ALPHAS
            ),
            _mc_bars(g["L"], g["p_mc"], t("fig.regime_mc"), error=2 * g["p_se"], error_y={"thickness": 1}),
            _your_L(t("fig.your_L")),
        ],
        log_x=True,
        shapes=[_vline(L)],
        yaxis={"range": [-0.03, 1.03]},
        margin=MARGIN,
    )


@cached_figure
def paths_figure(t, alpha, L, sigma, rho, mu, seed):
    p = paths(alpha, L, sigma, rho, mu, seed)
    ell = p["ell"]
    # all sample paths in one trace, separated by gaps (NaN): one SVG path instead of 24 traces
    # (Plotly.js redraws it ~4x faster; a path no longer darkens where it crosses another)
    gap = np.full((len(p["paths"]), 1), np.nan)
    return figure(
        t("fig.x_ell", L=L),
        t("fig.y_partial"),
        t("fig.paths_title"),
        [
            {
                "type": "scatter",
                "x": np.hstack([np.broadcast_to(ell, p["paths"].shape), gap]).ravel(),
                "y": np.hstack([p["paths"], gap]).ravel(),
                "mode": "lines",
                "name": t("fig.paths_mc"),
                "hoverinfo": "skip",
                "line": {"color": COLORS["sim"], "width": 0.8},
                "opacity": 0.45,
            },
            line(ell, p["mean"], t("fig.paths_mean")),
            line(ell, p["mean"] + 2 * p["sd"], t("fig.paths_band"), color=COLORS["bound"]),
            line(ell, p["mean"] - 2 * p["sd"], t("fig.paths_band"), color=COLORS["bound"], showlegend=False),
        ],
        margin=MARGIN,
    )


@cached_figure
def increment_figure(t, alpha, L, sigma, rho, mu, seed):
    p = paths(alpha, L, sigma, rho, mu, seed)
    return figure(
        t("fig.x_eps"),
        t("fig.y_rms"),
        t("fig.rms_title"),
        [
            line(p["eps"], p["rms"], t("fig.rms_exact")),
            markers(p["eps"], p["rms_mc"], t("fig.rms_mc", n=p["n"])),
        ],
        log_x=True,
        log_y=True,
        margin=MARGIN,
    )


@cached_figure
def variants_figure(t, alpha, sigma, rho, mu, a, trials, seed):
    g = over_depth(alpha, sigma, rho, mu, a, trials, seed)
    vr = variants(alpha, sigma, rho, trials, seed)
    data = []
    for key, col, sym, label in (
        ("indep", COLORS["exact"], "circle", t("fig.v_indep", s=f"{1 - 2 * alpha:.2f}")),
        ("corr", COLORS["accent"], "diamond", t("fig.v_corr", rho=f"{rho:g}")),
        ("ident", COLORS["other"], "square", t("fig.v_ident", s=f"{2 - 2 * alpha:.2f}")),
    ):
        y = {"indep": g["var_indep"], "ident": g["var_ident"], "corr": g["var"]}[key]
        data += [
            line(g["fine"], y, label, color=col),
            markers(vr["L"], vr[key], t("fig.v_mc"), color=col, symbol=sym, showlegend=(key == "ident")),
        ]
    return figure(
        t("fig.x_L"), t("fig.y_var"), t("fig.variants_title"), data, log_x=True, log_y=True, margin={**MARGIN, "l": 68}
    )


@cached_figure
def mean_figure(t, alpha, sigma, rho, mu, a, trials, seed):
    g = over_depth(alpha, sigma, rho, mu, a, trials, seed)
    return figure(
        t("fig.x_L"),
        t("fig.y_mean"),
        t("fig.mean_title", mu=f"{mu:g}"),
        [
            line(g["fine"], g["mean"], t("fig.mean_exact", s=f"{1 - alpha:.2f}")),
            _mc_bars(g["L"], g["mean_mc"], t("fig.mean_mc"), error=2 * g["mean_se"], error_y={"thickness": 1}),
        ],
        log_x=True,
        margin={**MARGIN, "l": 78},
    )


@cached_figure
def cov_figure(t, alpha, L, sigma, rho, trials, seed):
    cv = covariance(alpha, L, sigma, rho, trials, seed)
    names = [t("fig.cov_var", n=cv["n_var_terms"]), t("fig.cov_cov", n=cv["n_cov_terms"]), t("fig.cov_total")]
    exact = [cv["sum_var_exact"], cv["sum_cov2_exact"], cv["var_total_exact"]]
    mc = [cv["sum_var"], cv["sum_cov2"], cv["var_total"]]
    return figure(
        "",
        t("fig.y_cov"),
        t("fig.cov_title", L=cv["L"], n=cv["n"]),
        [
            {"type": "bar", "x": names, "y": exact, "name": t("fig.cov_exact"), "marker": {"color": COLORS["exact"]}},
            {
                "type": "bar",
                "x": names,
                "y": mc,
                "name": t("fig.cov_mc"),
                "marker": {
                    "color": "rgba(0,0,0,0)",
                    "line": {"color": COLORS["sim"], "width": 2},
                    "pattern": {"shape": "/", "fgcolor": COLORS["sim"]},
                },
            },
        ],
        barmode="group",
        hovermode="closest",
        xaxis={"type": "category"},
        margin=MARGIN,
    )


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


#: the figures by name, with the page parameters each one depends on (its cache key)


#: the figures by name (the name is also the figure's key on the page: ``fig_<name>``)
FIGURES = {
    "hist": hist_figure,
    "var": variance_figure,
    "regime": regime_figure,
    "paths": paths_figure,
    "rms": increment_figure,
    "variants": variants_figure,
    "mean": mean_figure,
    "cov": cov_figure,
    "res": residual_figure,
    "sweep_L": sweep_L_figure,
    "sweep_N": sweep_N_figure,
    "step": step_figure,
    "lr": lr_figure,
}
