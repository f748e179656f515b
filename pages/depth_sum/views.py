"""Depth-sum variance: the cached Monte Carlo behind pages/depth_sum/page.py
(its figures: pages/depth_sum/figures.py)."""

from __future__ import annotations

import math

import numpy as np

from sim import depth_sum as ds
from ui.kit.compute import cached, sub_seed
from ui.kit.figures import thin

L_GRID = 2 ** np.arange(0, 11)  # depths of the Monte Carlo points (1 … 1024)
L_FINE = np.unique(np.round(np.logspace(0, 12, 200, base=2)).astype(int))  # exact curves
GRID_NORMALS = 4_000_000  # normals per grid point at most (trials capped by it)
REGIME_ALPHAS = (0.25, 0.5, 0.75)
N_PATHS = 24  # sample paths drawn
PATH_TRIALS = 2000  # paths used for the increment statistics
HIST_BINS = 60
COV_L_MAX = 128  # the covariance identity is shown at min(L, 128)
COV_WORK = 40_000_000  # trials * L_cov^2 at most
RES_BUDGET = 20_000_000  # normals for the residual profile (trials capped by it)
RES_MIN_TRIALS = 10
SWEEP_L = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
SWEEP_N = (1, 2, 4, 8, 16, 32, 64, 128)
SWEEP_BUDGET = 8_000_000  # normals per sweep point
STEP_L = np.unique(np.round(np.logspace(0, 4, 120)).astype(int))
STEP_L_MARK = (1, 2, 4, 8, 16, 32, 64, 128, 256, 1024, 4096)


# --------------------------------------------------------------------------- cached compute
# One quantity, one number: every panel that shows S_L at a depth L (the headline metrics, the
# histogram, the variance / probability / variant markers on the grid L = 1 … 1024, the CSV and
# the covariance table) uses the SAME draws: depth_units(L, trials, seed), with the sample count
# mc_trials(L, trials) and the seed sub_seed(seed, 1, L). The draws are one common normal and the
# sum of the L independent normals per sample (ds.unit_sums), and every S_L is their exact linear
# combination (ds.sums_from_units), so a slider other than L, trials or seed costs no new random
# numbers. ds.column_moments draws in the same order, so the covariance table sees these draws too.
def mc_trials(L, trials) -> int:
    """Samples of S_L at depth L, the same in every panel: at most ``trials``, at most
    GRID_NORMALS normals in all, and where the covariance table can show L (L <= 128), at most
    COV_WORK pair products (never fewer than 200)."""
    L = int(L)
    n = min(int(trials), max(200, GRID_NORMALS // L))
    if L <= COV_L_MAX:
        n = min(n, max(200, COV_WORK // (L * L)))
    return int(n)


def depth_seed(seed, L) -> int:
    """The seed of the draws of S_L at depth L (shared by every panel)."""
    return sub_seed(seed, 1, int(L))


@cached
def depth_units(L, trials, seed) -> tuple:
    """The draws of S_L at depth L: ``(c, E)`` of ds.unit_sums."""
    return ds.unit_sums(int(L), mc_trials(L, trials), depth_seed(seed, L))


@cached
def grid_units(trials, seed) -> dict:
    """The draws at L = 1 … 1024 (those of depth_units) and the chi-square quantiles."""
    from scipy.stats import chi2

    n = np.array([mc_trials(int(L), trials) for L in L_GRID])
    units = [depth_units(int(L), trials, seed) for L in L_GRID]
    return {
        "n": n,
        "c": [u[0] for u in units],
        "E": [u[1] for u in units],
        "q_hi": chi2.ppf(0.975, n - 1),
        "q_lo": chi2.ppf(0.025, n - 1),
    }


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
        "edges": edges,
        "dens": dens,
        "grid": grid,
        "pdf": np.exp(-0.5 * ((grid - m) / sd) ** 2) / (sd * math.sqrt(2 * math.pi)),
        "mean_mc": float(x.mean()),
        "mean_se": float(x.std(ddof=1) / math.sqrt(n)),
        "mean": m,
        "var_mc": s2,
        "var_se": s2 * math.sqrt(2.0 / (n - 1)),
        "var": v,
        "p_mc": p,
        "p_se": math.sqrt(p * (1 - p) / n),
        "p": ds.prob_within(alpha, L, sigma, a, rho, mu),
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
        rows.append(
            (
                n,
                s2,
                (n - 1) * s2 / u["q_hi"][i],
                (n - 1) * s2 / u["q_lo"][i],
                float(x.mean()),
                float(x.std(ddof=1) / math.sqrt(n)),
                p,
                math.sqrt(p * (1 - p) / n),
            )
        )
    r = np.array(rows)
    return {
        "L": L_GRID,
        "n": r[:, 0],
        "var_mc": r[:, 1],
        "var_lo": r[:, 2],
        "var_hi": r[:, 3],
        "mean_mc": r[:, 4],
        "mean_se": r[:, 5],
        "p_mc": r[:, 6],
        "p_se": r[:, 7],
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
        out[name] = np.array(
            [
                np.var(ds.sums_from_units(alpha, int(L_GRID[i]), sigma, u["c"][i], u["E"][i], r, 0.0), ddof=1)
                for i in idx
            ]
        )
    return out


def _path_ks(L):
    return np.unique(np.round(np.logspace(0, math.log10(L), 14)).astype(int))


@cached
def path_units(L, seed) -> dict:
    """The draws behind the sample paths, reduced to what the two path figures need."""
    n = int(min(PATH_TRIALS, ds.MAX_PATH_OUTPUT // (L + 1)))
    return ds.path_moments(L, n, sub_seed(seed, 4), _path_ks(L), keep=N_PATHS)


@cached
def paths(alpha, L, sigma, rho, mu, seed) -> dict:
    """Sample paths of the partial sums over the layer index and their increments (rescaled draws)."""
    r = ds.paths_from_moments(alpha, sigma, path_units(L, seed), rho, mu)
    ell = np.arange(L + 1)
    k_all = _path_ks(L)
    sd = np.sqrt(np.maximum(sigma * sigma * float(L) ** (-2 * alpha) * (ell + ell * (ell - 1) * rho), 0.0))
    keep = thin(L + 1, 300)
    return {
        "ell": ell[keep],
        "paths": r["paths"][:, keep],
        "mean": mu * ell[keep] * float(L) ** (-alpha),
        "sd": sd[keep],
        "eps": k_all / L,
        "rms_mc": r["rms_mc"],
        "rms": np.array([ds.increment_rms(alpha, L, sigma, int(k), rho, mu) for k in k_all]),
        "n": r["n"],
        "end_sd_mc": r["end_sd"],
    }


def _cov_size(L, trials):
    Lc = int(min(L, COV_L_MAX))
    return Lc, mc_trials(Lc, trials)


@cached
def cov_units(L, trials, seed) -> dict:
    """The draws behind the covariance identity, reduced to column and pair sums: the draws of
    depth_units at min(L, 128) (same seed, count and draw order), so its total is the Var S_L shown
    everywhere else on the page."""
    Lc, n = _cov_size(L, trials)
    return ds.column_moments(Lc, n, depth_seed(seed, Lc))


@cached
def covariance(alpha, L, sigma, rho, trials, seed) -> dict:
    """The covariance identity term by term at min(L, 128) (the mean μ does not enter)."""
    d = ds.covariance_from_moments(alpha, sigma, cov_units(L, trials, seed), rho)
    d.update(L=_cov_size(L, trials)[0])
    return d
