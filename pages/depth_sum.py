"""Page: Depth-sum variance — how small per-layer pieces add up over depth (CONSTRUCTIONS.md §5)."""
from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from sim import depth_sum as ds
from ui.figures import COLORS, cached_figure, figure as _base_figure, show, thin
from ui.jobs import calls, heavy
from ui.page import cached, setup
from ui.spec import PageSchema, Param

SCHEMA = PageSchema("depth_sum", params=(
    Param("alpha", "float", default=0.5, min=0.0, max=1.5, step=0.05, lo=0.0, hi=2.0),
    Param("L", "int", default=64, min=2, max=512, step=1, lo=2, hi=512),
    Param("sigma", "float", default=1.0, min=0.1, max=3.0, step=0.1, lo=0.01, hi=10.0),
    Param("N", "int", default=32, min=1, max=128, step=1, lo=1, hi=128),
    Param("rho", "float", default=0.0, min=0.0, max=1.0, step=0.01, lo=0.0, hi=1.0),
    Param("mu", "float", default=0.0, min=-1.0, max=1.0, step=0.05, lo=-5.0, hi=5.0),
    Param("a", "float", default=1.0, min=0.1, max=3.0, step=0.1, lo=0.01, hi=10.0),
    Param("c", "float", default=1.0, min=0.0, max=3.0, step=0.05, lo=0.0, hi=10.0),
    Param("trials", "int", default=4000, min=200, max=20000, step=100, lo=100, hi=20000),
    Param("seed", "int", default=0, min=0, max=9999, step=1, lo=0, hi=10**6),
))

L_GRID = 2 ** np.arange(0, 11)          # depths of the Monte Carlo points (1 … 1024)
L_FINE = np.unique(np.round(np.logspace(0, 12, 200, base=2)).astype(int))   # exact curves
GRID_NORMALS = 4_000_000                # normals per grid point at most (trials capped by it)
REGIME_ALPHAS = (0.25, 0.5, 0.75)
N_PATHS = 24                            # sample paths drawn
PATH_TRIALS = 2000                      # paths used for the increment statistics
HIST_BINS = 60
COV_L_MAX = 128                         # the covariance identity is shown at min(L, 128)
COV_WORK = 40_000_000                   # trials * L_cov^2 at most
RES_BUDGET = 20_000_000                 # normals for the residual profile (trials capped by it)
RES_MIN_TRIALS = 10
SWEEP_L = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
SWEEP_N = (1, 2, 4, 8, 16, 32, 64, 128)
SWEEP_BUDGET = 8_000_000                # normals per sweep point
STEP_L = np.unique(np.round(np.logspace(0, 4, 120)).astype(int))
STEP_L_MARK = (1, 2, 4, 8, 16, 32, 64, 128, 256, 1024, 4096)


def _seed(seed: int, *tags: int) -> int:
    """An independent seed for each sub-experiment (grid point, panel)."""
    return int(np.random.SeedSequence([seed, *tags]).generate_state(1, np.uint64)[0] >> 1)


# --------------------------------------------------------------------------- cached compute
# The Monte Carlo sums share their draws across α, σ, μ, ρ and a: the draws (one common normal
# and the sum of the L independent normals per sample, ds.unit_sums) are cached per
# (depth, trials, seed), and every S_L is their exact linear combination (ds.sums_from_units).
# A slider other than L, trials or seed then costs no new random numbers.
@cached
def depth_units(L, trials, seed) -> tuple:
    """The draws behind the histogram at the chosen depth."""
    return ds.unit_sums(L, trials, _seed(seed, 1))


def _grid_trials(L, trials):
    return int(min(trials, max(200, GRID_NORMALS // L)))


@cached
def grid_units(trials, seed) -> dict:
    """The draws at L = 1 … 1024 (one seed per grid point) and the chi-square quantiles."""
    from scipy.stats import chi2

    n = np.array([_grid_trials(int(L), trials) for L in L_GRID])
    units = [ds.unit_sums(int(L), int(k), _seed(seed, 2, i)) for i, (L, k) in enumerate(zip(L_GRID, n))]
    return {"n": n, "c": [u[0] for u in units], "E": [u[1] for u in units],
            "q_hi": chi2.ppf(0.975, n - 1), "q_lo": chi2.ppf(0.025, n - 1)}


@cached
def at_depth(alpha, L, sigma, rho, mu, a, trials, seed) -> dict:
    """Monte Carlo S_L at the chosen depth: histogram, variance, P(|S_L| <= a)."""
    x = ds.sums_from_units(alpha, L, sigma, *depth_units(L, trials, seed), rho, mu)
    m, v = ds.mean(alpha, L, mu), ds.variance(alpha, L, sigma, rho)
    sd = math.sqrt(v)
    lo, hi = min(m - 4.5 * sd, x.min()), max(m + 4.5 * sd, x.max())
    counts, edges = np.histogram(x, bins=HIST_BINS, range=(lo, hi))
    dens = counts / (x.size * np.diff(edges))
    grid = np.linspace(lo, hi, 400)
    n = x.size
    s2 = float(np.var(x, ddof=1))
    p = float(np.mean(np.abs(x) <= a))
    return {
        "edges": edges, "dens": dens, "grid": grid,
        "pdf": np.exp(-0.5 * ((grid - m) / sd) ** 2) / (sd * math.sqrt(2 * math.pi)),
        "mean_mc": float(x.mean()), "mean_se": float(x.std(ddof=1) / math.sqrt(n)), "mean": m,
        "var_mc": s2, "var_se": s2 * math.sqrt(2.0 / (n - 1)), "var": v,
        "p_mc": p, "p_se": math.sqrt(p * (1 - p) / n), "p": ds.prob_within(alpha, L, sigma, a, rho, mu),
        "n": n,
    }


@cached
def over_depth(alpha, sigma, rho, mu, a, trials, seed) -> dict:
    """Monte Carlo variance (chi-square 95% interval), mean and P(|S_L| <= a) at L = 1 … 1024."""
    u = grid_units(trials, seed)
    rows = []
    for i, L in enumerate(L_GRID):
        x = ds.sums_from_units(alpha, int(L), sigma, u["c"][i], u["E"][i], rho, mu)
        n = x.size
        s2 = float(np.var(x, ddof=1))
        p = float(np.mean(np.abs(x) <= a))
        rows.append((n, s2, (n - 1) * s2 / u["q_hi"][i], (n - 1) * s2 / u["q_lo"][i],
                     float(x.mean()), float(x.std(ddof=1) / math.sqrt(n)), p, math.sqrt(p * (1 - p) / n)))
    r = np.array(rows)
    return {
        "L": L_GRID, "n": r[:, 0], "var_mc": r[:, 1], "var_lo": r[:, 2], "var_hi": r[:, 3],
        "mean_mc": r[:, 4], "mean_se": r[:, 5], "p_mc": r[:, 6], "p_se": r[:, 7],
        "fine": L_FINE,
        "var": ds.variance_curve(alpha, L_FINE, sigma, rho),
        "var_indep": ds.variance_curve(alpha, L_FINE, sigma, 0.0),
        "var_ident": ds.variance_curve(alpha, L_FINE, sigma, 1.0),
        "mean": ds.mean_curve(alpha, L_FINE, mu),
        "p": ds.prob_within_curve(alpha, L_FINE, sigma, a, rho, mu),
        "p_ref": {al: ds.prob_within_curve(al, L_FINE, sigma, a) for al in REGIME_ALPHAS},
        "slope_mc": float(np.polyfit(np.log(L_GRID), np.log(r[:, 1]), 1)[0]),
    }


@cached
def variants(alpha, sigma, rho, trials, seed) -> dict:
    """Monte Carlo variance for independent, equicorrelated and identical pieces (μ = 0), from the
    same draws as the variance panel (common random numbers: the three are exact recombinations
    of one set of pieces, so their differences are not sampling noise)."""
    u = grid_units(trials, seed)
    idx = range(1, len(L_GRID), 2)
    out = {"L": L_GRID[1::2]}
    for name, r in (("indep", 0.0), ("corr", rho), ("ident", 1.0)):
        out[name] = np.array([np.var(ds.sums_from_units(alpha, int(L_GRID[i]), sigma, u["c"][i], u["E"][i],
                                                        r, 0.0), ddof=1) for i in idx])
    return out


def _path_ks(L):
    return np.unique(np.round(np.logspace(0, math.log10(L), 14)).astype(int))


@cached
def path_units(L, seed) -> dict:
    """The draws behind the sample paths, reduced to what the two path figures need."""
    n = int(min(PATH_TRIALS, ds.MAX_PATH_OUTPUT // (L + 1)))
    return ds.path_moments(L, n, _seed(seed, 4), _path_ks(L), keep=N_PATHS)


@cached
def paths(alpha, L, sigma, rho, mu, seed) -> dict:
    """Sample paths of the partial sums over the layer index and their increments (rescaled draws)."""
    r = ds.paths_from_moments(alpha, sigma, path_units(L, seed), rho, mu)
    ell = np.arange(L + 1)
    k_all = _path_ks(L)
    sd = np.sqrt(np.maximum(sigma * sigma * float(L) ** (-2 * alpha) * (ell + ell * (ell - 1) * rho), 0.0))
    keep = thin(L + 1, 300)
    return {
        "ell": ell[keep], "paths": r["paths"][:, keep], "mean": mu * ell[keep] * float(L) ** (-alpha),
        "sd": sd[keep], "eps": k_all / L, "rms_mc": r["rms_mc"],
        "rms": np.array([ds.increment_rms(alpha, L, sigma, int(k), rho, mu) for k in k_all]),
        "n": r["n"], "end_sd_mc": r["end_sd"],
    }


def _cov_size(L, trials):
    Lc = int(min(L, COV_L_MAX))
    return Lc, int(max(200, min(trials, COV_WORK // (Lc * Lc))))


@cached
def cov_units(L, trials, seed) -> dict:
    """The draws behind the covariance identity, reduced to column and pair sums."""
    Lc, n = _cov_size(L, trials)
    return ds.column_moments(Lc, n, _seed(seed, 5))


@cached
def covariance(alpha, L, sigma, rho, trials, seed) -> dict:
    """The covariance identity term by term at min(L, 128) (the mean μ does not enter)."""
    d = ds.covariance_from_moments(alpha, sigma, cov_units(L, trials, seed), rho)
    d.update(L=_cov_size(L, trials)[0])
    return d


def _res_trials(L, N, trials, budget):
    return int(max(RES_MIN_TRIALS, min(trials, budget // (L * N * N))))


@cached
def residual(alpha, L, N, trials, seed) -> dict:
    n = _res_trials(L, N, trials, RES_BUDGET)
    m, se = ds.residual_energy_profile(alpha, L, N, n, _seed(seed, 6))
    ell = np.arange(L + 1)
    keep = thin(L + 1, 60)
    fine = np.linspace(0, L, 300)
    return {"ell": ell[keep], "mean": m[keep], "se": se[keep], "n": n,
            "fine": fine, "exact": (1.0 + float(L) ** (-2 * alpha)) ** fine,
            "final": float(m[-1]), "final_se": float(se[-1]), "final_exact": ds.residual_energy(alpha, L)}


@cached(max_entries=512)
def residual_point(alpha, L, N, trials, seed, tag) -> tuple:
    n = _res_trials(L, N, trials, SWEEP_BUDGET)
    m, se = ds.residual_energy_mc(alpha, L, N, n, _seed(seed, 7, tag, L, N))
    return m, se, n


@cached
def one_step_data(alpha, c) -> dict:
    f = np.array([ds.one_step(c, int(L))[0] for L in STEP_L])
    marks = {u: [ds.sgd_step(alpha, c, int(L), u) for L in STEP_L_MARK] for u in ("sgd", "sign")}
    return {"L": STEP_L, "f": f, "lin": 1.0 - c, "lim": math.exp(-c), "L_mark": np.array(STEP_L_MARK),
            "f_sgd": np.array([r["f_after"] for r in marks["sgd"]]),
            "f_sign": np.array([r["f_after"] for r in marks["sign"]]),
            "lin_sgd": np.array([r["f_linearised"] for r in marks["sgd"]]),
            "lr_sgd": np.array([r["lr"] for r in marks["sgd"]]),
            "lr_sign": np.array([r["lr"] for r in marks["sign"]]),
            "dw": np.array([r["dw"] for r in marks["sgd"]])}


# --------------------------------------------------------------------------- figures
# Traces and layout entries are plain dicts put into the house figure (ui.figures.figure) in one
# go.Figure call without Plotly's per-property validation (~3 ms a figure less; an alpha change
# rebuilds all eleven). tests/test_sim_depth_sum.py builds every figure once more with
# validation and checks that both specs are identical.
_VALIDATE = False
_REF_LINE = {"color": COLORS["ref"], "width": 1.2, "dash": "longdash"}
_MARGIN_B = 60


def figure(x_title, y_title, title=None, data=(), *, log_x=False, log_y=False, shapes=(),
           annotations=(), xaxis=None, yaxis=None, margin=None, **layout) -> go.Figure:
    """The house figure (legend above the plot, clear of the long axis titles) with ``data``.

    ``margin``: starting margins (px) where this figure's tick labels usually need more than the
    house default (automargin still widens them when the labels need it)."""
    lay = _base_figure(x_title, y_title, title, log_x=log_x, log_y=log_y).layout.to_plotly_json()
    # Room for the x tick labels and title from the start: automargin pushed the bottom margin
    # of every figure here from 40 to 53-56 px, and each push makes Plotly.js draw the figure a
    # second time (the browser redraw of all eleven took ~2x as long). It still pushes if needed.
    lay["margin"]["b"] = max(lay["margin"]["b"], _MARGIN_B)
    lay["margin"].update(margin or {})
    lay["xaxis"].update(xaxis or {})
    lay["yaxis"].update(yaxis or {})
    if shapes:
        lay["shapes"] = list(shapes)
    if annotations:
        lay["annotations"] = list(annotations)
    lay.update(layout)
    if _VALIDATE:
        return go.Figure(data=list(data), layout=lay)
    return go.Figure(data=list(data), layout=lay, _validate=False)


def _line(x, y, name, color=COLORS["exact"], width=2.5, **kw) -> dict:
    """Theory: a solid line (as ui.figures.exact_line draws it)."""
    line = {"color": color, "width": width, **kw.pop("line", {})}
    return {"type": "scatter", "x": np.asarray(x), "y": np.asarray(y), "name": name, "mode": "lines",
            "line": line, **kw}


def _ref(x, y, name, color=COLORS["ref"], dash="dot", width=1.5, **kw) -> dict:
    """An exact reference curve drawn thinner and patterned (slopes, limits, other regimes)."""
    return _line(x, y, name, color=color, line={"width": width, "dash": dash}, **kw)


def _markers(x, y, name, color=COLORS["sim"], symbol="circle", size=7, **kw) -> dict:
    """Simulation: open markers (as ui.figures.sim_markers draws them)."""
    return {"type": "scatter", "x": np.asarray(x), "y": np.asarray(y), "name": name, "mode": "markers",
            "marker": {"color": color, "size": size, "symbol": f"{symbol}-open",
                       "line": {"width": 1.5, "color": color}}, **kw}


def _mc_bars(x, y, name, err, size=8, **err_kw) -> dict:
    """Monte Carlo points with error bars (``err``: symmetric, or ``(plus, minus)``)."""
    e = ({"type": "data", "array": err, "color": COLORS["sim"], **err_kw} if not isinstance(err, tuple)
         else {"type": "data", "symmetric": False, "array": err[0], "arrayminus": err[1],
               "color": COLORS["sim"], **err_kw})
    return {"type": "scatter", "x": np.asarray(x), "y": np.asarray(y), "name": name, "mode": "markers",
            "marker": {"color": COLORS["sim"], "size": size, "symbol": "circle-open", "line": {"width": 1.5}},
            "error_y": e}


def _vline(L) -> dict:
    """A thin vertical line at the chosen depth (what fig.add_vline makes)."""
    return {"type": "line", "x0": L, "x1": L, "xref": "x", "y0": 0, "y1": 1, "yref": "y domain",
            "line": _REF_LINE}


def _your_L(text) -> dict:
    """The legend entry of the vertical line at the chosen depth (a text label inside the plot ran
    into the error bars and markers)."""
    return {"type": "scatter", "x": [None], "y": [None], "mode": "lines", "line": _REF_LINE, "name": text,
            "hoverinfo": "skip"}


def _e_line(y=math.e) -> tuple[dict, dict]:
    """The horizontal line at e with its label (what fig.add_hline(annotation_text="e") makes)."""
    return ({"type": "line", "x0": 0, "x1": 1, "xref": "x domain", "y0": y, "y1": y, "yref": "y",
             "line": {"color": COLORS["ref"], "dash": "dot", "width": 1}},
            {"showarrow": False, "text": "e", "x": 1, "xanchor": "right", "xref": "x domain", "y": y,
             "yanchor": "top", "yref": "y"})


def _hist_figure(t, alpha, L, sigma, rho, mu, a, trials, seed):
    d = at_depth(alpha, L, sigma, rho, mu, a, trials, seed)
    e = d["edges"]
    return figure(t("fig.x_sum"), t("fig.y_density"), t("fig.hist_title"), [
        {"type": "scatter", "x": np.repeat(e, 2)[1:-1], "y": np.repeat(d["dens"], 2), "mode": "lines",
         "name": t("fig.hist_mc", n=d["n"]), "fill": "tozeroy", "fillcolor": "rgba(213,94,0,0.12)",
         "line": {"color": COLORS["sim"], "width": 1.5, "dash": "dash"}},
        _line(d["grid"], d["pdf"], t("fig.hist_exact")),
    ])


def _variance_figure(t, alpha, L, sigma, rho, mu, a, trials, seed):
    g = over_depth(alpha, sigma, rho, mu, a, trials, seed)
    ref = g["var_indep"][0] * g["fine"] ** (1 - 2 * alpha) / g["fine"][0] ** (1 - 2 * alpha)
    return figure(t("fig.x_L"), t("fig.y_var"), t("fig.var_title"), [
        _line(g["fine"], g["var"], t("fig.var_exact")),
        _mc_bars(g["L"], g["var_mc"], t("fig.var_mc"), (g["var_hi"] - g["var_mc"], g["var_mc"] - g["var_lo"]),
                 thickness=1),
        _ref(g["fine"], ref, t("fig.slope_ref", s=f"{1 - 2 * alpha:.2f}")),
        _your_L(t("fig.your_L")),
    ], log_x=True, log_y=True, shapes=[_vline(L)], margin={"l": 68})


def _regime_figure(t, alpha, L, sigma, rho, mu, a, trials, seed):
    g = over_depth(alpha, sigma, rho, mu, a, trials, seed)
    styles = {0.25: "dot", 0.5: "dash", 0.75: "dashdot"}
    # the grey references go on top (thin, patterned): at the defaults the α = 0.5 one coincides
    # with the exact curve and would otherwise be hidden under it
    return figure(t("fig.x_L"), t("fig.y_prob", a=f"{a:g}"), t("fig.regime_title"), [
        _line(g["fine"], g["p"], t("fig.regime_exact", al=f"{alpha:g}")),
        *(_ref(g["fine"], g["p_ref"][al], t("fig.regime_ref", al=f"{al:g}"), dash=styles[al])
          for al in REGIME_ALPHAS),
        _mc_bars(g["L"], g["p_mc"], t("fig.regime_mc"), 2 * g["p_se"], thickness=1),
        _your_L(t("fig.your_L")),
    ], log_x=True, shapes=[_vline(L)], yaxis={"range": [-0.03, 1.03]})


def _paths_figure(t, alpha, L, sigma, rho, mu, seed):
    p = paths(alpha, L, sigma, rho, mu, seed)
    ell = p["ell"]
    # all sample paths in one trace, separated by gaps (NaN): one SVG path instead of 24 traces
    # (Plotly.js redraws it ~4x faster; a path no longer darkens where it crosses another)
    gap = np.full((len(p["paths"]), 1), np.nan)
    return figure(t("fig.x_ell", L=L), t("fig.y_partial"), t("fig.paths_title"), [
        {"type": "scatter", "x": np.hstack([np.broadcast_to(ell, p["paths"].shape), gap]).ravel(),
         "y": np.hstack([p["paths"], gap]).ravel(), "mode": "lines", "name": t("fig.paths_mc"),
         "hoverinfo": "skip", "line": {"color": COLORS["sim"], "width": 0.8}, "opacity": 0.45},
        _line(ell, p["mean"], t("fig.paths_mean")),
        _line(ell, p["mean"] + 2 * p["sd"], t("fig.paths_band"), color=COLORS["bound"]),
        _line(ell, p["mean"] - 2 * p["sd"], t("fig.paths_band"), color=COLORS["bound"], showlegend=False),
    ])


def _increment_figure(t, alpha, L, sigma, rho, mu, seed):
    p = paths(alpha, L, sigma, rho, mu, seed)
    return figure(t("fig.x_eps"), t("fig.y_rms"), t("fig.rms_title"), [
        _line(p["eps"], p["rms"], t("fig.rms_exact")),
        _markers(p["eps"], p["rms_mc"], t("fig.rms_mc", n=p["n"])),
    ], log_x=True, log_y=True)


def _variants_figure(t, alpha, sigma, rho, mu, a, trials, seed):
    g = over_depth(alpha, sigma, rho, mu, a, trials, seed)
    vr = variants(alpha, sigma, rho, trials, seed)
    data = []
    for key, col, sym, label in (("indep", COLORS["exact"], "circle", t("fig.v_indep", s=f"{1 - 2 * alpha:.2f}")),
                                 ("corr", COLORS["accent"], "diamond", t("fig.v_corr", rho=f"{rho:g}")),
                                 ("ident", COLORS["other"], "square", t("fig.v_ident", s=f"{2 - 2 * alpha:.2f}"))):
        y = {"indep": g["var_indep"], "ident": g["var_ident"], "corr": g["var"]}[key]
        data += [_line(g["fine"], y, label, color=col),
                 _markers(vr["L"], vr[key], t("fig.v_mc"), color=col, symbol=sym, showlegend=(key == "ident"))]
    return figure(t("fig.x_L"), t("fig.y_var"), t("fig.variants_title"), data, log_x=True, log_y=True,
                  margin={"l": 68})


def _mean_figure(t, alpha, sigma, rho, mu, a, trials, seed):
    g = over_depth(alpha, sigma, rho, mu, a, trials, seed)
    return figure(t("fig.x_L"), t("fig.y_mean"), t("fig.mean_title", mu=f"{mu:g}"), [
        _line(g["fine"], g["mean"], t("fig.mean_exact", s=f"{1 - alpha:.2f}")),
        _mc_bars(g["L"], g["mean_mc"], t("fig.mean_mc"), 2 * g["mean_se"], thickness=1),
    ], log_x=True, margin={"l": 78})


def _cov_figure(t, alpha, L, sigma, rho, trials, seed):
    cv = covariance(alpha, L, sigma, rho, trials, seed)
    names = [t("fig.cov_var", n=cv["n_var_terms"]), t("fig.cov_cov", n=cv["n_cov_terms"]),
             t("fig.cov_total")]
    exact = [cv["sum_var_exact"], cv["sum_cov2_exact"], cv["var_total_exact"]]
    mc = [cv["sum_var"], cv["sum_cov2"], cv["var_total"]]
    return figure("", t("fig.y_cov"), t("fig.cov_title", L=cv["L"], n=cv["n"]), [
        {"type": "bar", "x": names, "y": exact, "name": t("fig.cov_exact"), "marker": {"color": COLORS["exact"]}},
        {"type": "bar", "x": names, "y": mc, "name": t("fig.cov_mc"), "marker": {
            "color": "rgba(0,0,0,0)", "line": {"color": COLORS["sim"], "width": 2},
            "pattern": {"shape": "/", "fgcolor": COLORS["sim"]}}},
    ], barmode="group", hovermode="closest", xaxis={"type": "category"})


def _residual_figure(t, alpha, L, N, trials, seed):
    r = residual(alpha, L, N, trials, seed)
    e = _e_line() if alpha == 0.5 else ()
    return figure(t("fig.x_ell", L=L), t("fig.y_energy"), t("fig.res_title", N=N, n=r["n"]), [
        _line(r["fine"], r["exact"], t("fig.res_exact")),
        _mc_bars(r["ell"], r["mean"], t("fig.res_mc"), 2 * r["se"], size=7, thickness=1),
    ], shapes=e[:1], annotations=e[1:])


def _sweep_jobs(L, N):
    return [("L", x, x, N) for x in SWEEP_L] + [("N", x, L, x) for x in SWEEP_N]


def _sweep_data(alpha, L, N, trials, seed) -> dict:
    res = {"L": [], "N": []}
    for kind, x, LL, NN in _sweep_jobs(L, N):
        res[kind].append((x, *residual_point(alpha, LL, NN, trials, seed, 0 if kind == "L" else 1)))
    out = {}
    for kind in ("L", "N"):
        arr = np.array(res[kind], dtype=float)
        out[kind] = arr[:, 0]
        out[f"{kind}_mean"], out[f"{kind}_se"], out[f"{kind}_n"] = arr[:, 1], arr[:, 2], arr[:, 3]
    out["N_sd"] = out["N_se"] * np.sqrt(out["N_n"])
    return out


def _sweep_L_figure(t, alpha, L, N, trials, seed):
    sw = _sweep_data(alpha, L, N, trials, seed)
    Lf = np.unique(np.round(np.logspace(0, math.log10(SWEEP_L[-1]), 200)).astype(int))
    e = _e_line() if alpha == 0.5 else ()
    return figure(t("fig.x_L"), t("fig.y_energy_final"), t("fig.sweep_L_title", N=N), [
        _line(Lf, [ds.residual_energy(alpha, int(x)) for x in Lf], t("fig.sweep_exact")),
        _mc_bars(sw["L"], sw["L_mean"], t("fig.res_mc"), 2 * sw["L_se"]),
    ], log_x=True, log_y=alpha < 0.5, shapes=e[:1], annotations=e[1:])


def _sweep_N_figure(t, alpha, L, N, trials, seed):
    sw = _sweep_data(alpha, L, N, trials, seed)
    ex = ds.residual_energy(alpha, L)
    return figure(t("fig.x_N"), t("fig.y_energy_final"), t("fig.sweep_N_title", L=L), [
        _line([SWEEP_N[0], SWEEP_N[-1]], [ex, ex], t("fig.sweep_exact_N")),
        _mc_bars(sw["N"], sw["N_mean"], t("fig.res_mc"), 2 * sw["N_se"]),
        {"type": "scatter", "x": sw["N"], "y": sw["N_sd"], "mode": "lines+markers", "name": t("fig.sweep_sd"),
         "line": {"color": COLORS["accent"], "dash": "dash"},
         "marker": {"symbol": "square-open", "color": COLORS["accent"]}},
    ], log_x=True, log_y=True)


def _step_figure(t, alpha, L, c):
    s = one_step_data(alpha, c)
    ends = [s["L"][0], s["L"][-1]]
    return figure(t("fig.x_L_step"), t("fig.y_f"), t("fig.step_title", c=f"{c:g}"), [
        _line(s["L"], s["f"], t("fig.step_exact")),
        _ref(ends, [s["lim"]] * 2, t("fig.step_lim")),
        _ref(ends, [s["lin"]] * 2, t("fig.step_lin"), color=COLORS["bound"], dash="dashdot", width=2),
        _markers(s["L_mark"], s["f_sgd"], t("fig.step_sgd")),
        {"type": "scatter", "x": s["L_mark"], "y": s["f_sign"], "mode": "markers", "name": t("fig.step_sign"),
         "marker": {"size": 10, "symbol": "x-thin", "color": COLORS["accent"],
                    "line": {"width": 2, "color": COLORS["accent"]}}},
        _your_L(t("fig.your_L")),
    ], log_x=True, shapes=[_vline(L)], margin={"r": 28})


def _lr_figure(t, alpha, c):
    s = one_step_data(alpha, c)
    Lm = s["L_mark"].astype(float)
    return figure(t("fig.x_L_step"), t("fig.y_lr"), t("fig.lr_title", al=f"{alpha:g}"), [
        _line(Lm, s["lr_sgd"], t("fig.lr_sgd", s=f"{2 * alpha - 1:.2f}")),
        _line(Lm, s["lr_sign"], t("fig.lr_sign", s=f"{alpha - 1:.2f}"), color=COLORS["accent"]),
        _ref(Lm, np.abs(s["dw"]), t("fig.lr_dw", s=f"{alpha - 1:.2f}")),
    ], log_x=True, log_y=True, margin={"l": 75})


#: figure builders and the page parameters each one depends on (its cache key)
FIGURES = {
    "hist": (_hist_figure, ("alpha", "L", "sigma", "rho", "mu", "a", "trials", "seed")),
    "var": (_variance_figure, ("alpha", "L", "sigma", "rho", "mu", "a", "trials", "seed")),
    "regime": (_regime_figure, ("alpha", "L", "sigma", "rho", "mu", "a", "trials", "seed")),
    "paths": (_paths_figure, ("alpha", "L", "sigma", "rho", "mu", "seed")),
    "rms": (_increment_figure, ("alpha", "L", "sigma", "rho", "mu", "seed")),
    "variants": (_variants_figure, ("alpha", "sigma", "rho", "mu", "a", "trials", "seed")),
    "mean": (_mean_figure, ("alpha", "sigma", "rho", "mu", "a", "trials", "seed")),
    "cov": (_cov_figure, ("alpha", "L", "sigma", "rho", "trials", "seed")),
    "res": (_residual_figure, ("alpha", "L", "N", "trials", "seed")),
    "sweep_L": (_sweep_L_figure, ("alpha", "L", "N", "trials", "seed")),
    "sweep_N": (_sweep_N_figure, ("alpha", "L", "N", "trials", "seed")),
    "step": (_step_figure, ("alpha", "L", "c")),
    "lr": (_lr_figure, ("alpha", "c")),
}


#: the same builders, Frozen and shared between reruns and sessions (ui.figures.cached_figure:
#: keyed on language, text-file version and the inputs above, so an edited text file shows)
_FROZEN = {name: cached_figure(fn) for name, (fn, _) in FIGURES.items()}


def _show(name: str, ctx) -> None:
    args = tuple(ctx.values[k] for k in FIGURES[name][1])
    show(_FROZEN[name](ctx.t, *args), key=f"fig_{name}")


# --------------------------------------------------------------------------- page
def _show_pair(left: str, right: str, ctx) -> None:
    """Two figures side by side."""
    c1, c2 = st.columns(2)
    with c1:
        _show(left, ctx)
    with c2:
        _show(right, ctx)


def render() -> None:
    ctx = setup(SCHEMA)
    t, v = ctx.t, ctx.values
    alpha, L, sigma, N = v["alpha"], v["L"], v["sigma"], v["N"]
    rho, mu, a, c, trials, seed = v["rho"], v["mu"], v["a"], v["c"], v["trials"], v["seed"]
    ctx.section("intro")
    ctx.section("statement")

    # Each section computes its data just before it is drawn, so the first figures reach the browser
    # (and are redrawn there) while the server still simulates the ones further down.
    with ctx.guard():
        d = at_depth(alpha, L, sigma, rho, mu, a, trials, seed)

    f_step, f_lin = ds.one_step(c, L)
    m = st.columns(4)
    m[0].metric(t("metrics.var", L=L), f"{d['var']:.4g}")
    m[0].caption(t("metrics.mc_pm", x=f"{d['var_mc']:.4g}", se=f"{d['var_se']:.2g}"))
    m[1].metric(t("metrics.prob", a=f"{a:g}"), f"{d['p']:.4f}")
    m[1].caption(t("metrics.mc_pm", x=f"{d['p_mc']:.4f}", se=f"{d['p_se']:.1g}"))
    m[2].metric(t("metrics.energy"), f"{ds.residual_energy(alpha, L):.4g}")
    energy_mc = m[2].empty()  # the residual-network Monte Carlo runs further down
    m[3].metric(t("metrics.step"), f"{f_step:.4f}")
    m[3].caption(t("metrics.step_delta", lim=f"{math.exp(-c):.4f}", lin=f"{f_lin:.4f}"))
    st.caption(t("metrics.caption"))

    with ctx.guard():
        g = over_depth(alpha, sigma, rho, mu, a, trials, seed)
        st.subheader(t("sums.title"))
        _show_pair("hist", "var", ctx)
        st.markdown(t("sums.body", slope=f"{g['slope_mc']:.3f}", s=f"{1 - 2 * alpha:.2f}"))

        st.subheader(t("regimes.title"))
        _show("regime", ctx)
        st.markdown(t("regimes.body"))

        p = paths(alpha, L, sigma, rho, mu, seed)
        st.subheader(t("paths.title"))
        _show_pair("paths", "rms", ctx)
        st.markdown(t("paths.body"))

        cv = covariance(alpha, L, sigma, rho, trials, seed)
        st.subheader(t("variants.title"))
        st.markdown(t("variants.intro"))
        _show_pair("variants", "mean", ctx)
        st.markdown(t("variants.identity"))  # full width: the identity overflowed a narrow column
        chk = abs(cv['sum_var'] + cv['sum_cov2'] - cv['var_total'])
        chk = t("variants.chk_exact") if chk < 1e-12 else t("variants.chk_within", d=f"{chk:.1e}")
        c7, c8 = st.columns([3, 2])
        with c7:
            _show("cov", ctx)
        with c8:
            st.markdown(t("variants.table",
                          L=cv["L"], n=cv["n"], nv=cv["n_var_terms"], nc=cv["n_cov_terms"],
                          sv=f"{cv['sum_var']:.4g}", sve=f"{cv['sum_var_exact']:.4g}",
                          sc=f"{cv['sum_cov2']:.4g}", sce=f"{cv['sum_cov2_exact']:.4g}",
                          vt=f"{cv['var_total']:.4g}", vte=f"{cv['var_total_exact']:.4g}",
                          chk=chk))

        r = residual(alpha, L, N, trials, seed)
        energy_mc.caption(t("metrics.mc_pm", x=f"{r['final']:.4g}", se=f"{r['final_se']:.2g}"))
        st.subheader(t("residual.title"))
        st.markdown(t("residual.body"))
        c9, c10 = st.columns([3, 2])
        with c9:
            _show("res", ctx)
        with c10:
            st.markdown(t("residual.notes", n=r["n"], ex=f"{r['final_exact']:.4f}",
                          mc=f"{r['final']:.4f}", se=f"{r['final_se']:.2g}"))
            run = st.button(t("residual.sweep_button"), key="_ds_sweep_btn", width="stretch")
        key = (alpha, L, N, trials, seed)
        with ctx.guard():  # one shared, queued run for the whole server (ui.jobs)
            fill = calls(*((residual_point, (alpha, LL, NN, trials, seed, int(k == "N")))
                           for k, _, LL, NN in _sweep_jobs(L, N)))
            if heavy(("depth_sum.sweep", *key), fill, start=run, t=t, text=t("residual.sweep_progress")):
                st.session_state["_ds_sweep"] = key
        if st.session_state.get("_ds_sweep") == key:
            _show_pair("sweep_L", "sweep_N", ctx)
            st.markdown(t("residual.sweep_body"))
        else:
            st.caption(t("residual.sweep_hint"))

        s = one_step_data(alpha, c)
        st.subheader(t("step.title"))
        st.markdown(t("step.body"))
        _show_pair("step", "lr", ctx)
        st.markdown(t("step.notes", L=L, lr_sgd=f"{c * L ** (2 * alpha - 1):.4g}",
                      lr_sign=f"{c * L ** (alpha - 1):.4g}", dw=f"{-c * L ** (alpha - 1):.4g}",
                      mult=f"{1 - c / L:.4g}", f=f"{f_step:.4f}", lim=f"{math.exp(-c):.4f}",
                      lin=f"{f_lin:.4f}"))

    ctx.section("notice")
    ctx.section("questions")
    ctx.section("limits")
    ctx.csv_download("depth_sum.csv", {
        "hist_left_edge": d["edges"][:-1], "hist_density_mc": d["dens"],
        "x": d["grid"], "normal_density_exact": d["pdf"],
        "L_grid": g["L"], "var_mc": g["var_mc"], "var_ci_lo": g["var_lo"], "var_ci_hi": g["var_hi"],
        "mean_mc": g["mean_mc"], "prob_mc": g["p_mc"], "prob_se": g["p_se"], "trials_at_L": g["n"],
        "L_fine": g["fine"], "var_exact": g["var"], "mean_exact": g["mean"], "prob_exact": g["p"],
        "eps": p["eps"], "rms_exact": p["rms"], "rms_mc": p["rms_mc"],
        "ell": r["ell"], "energy_mc": r["mean"], "energy_se": r["se"],
        "energy_exact": (1.0 + float(L) ** (-2 * alpha)) ** r["ell"],
        "L_step": s["L"], "f_after_step_exact": s["f"],
    })
    ctx.footer()


if __name__ == "__main__":
    render()
