"""Depth-sum variance: the figure builders of pages/depth_sum/page.py (their data: pages/depth_sum/views.py)."""

from __future__ import annotations


import numpy as np

from ui.kit.figures import COLORS, cached_figure, figure, histogram, line, markers
from pages.depth_sum.figures_resnet import lr_figure, residual_figure, step_figure, sweep_L_figure, sweep_N_figure
from pages.depth_sum.figures_marks import MARGIN, _ref, _mc_bars, _vline, _your_L
from pages.depth_sum.views import (
    REGIME_ALPHAS,
    at_depth,
    covariance,
    over_depth,
    paths,
    variants,
)


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
