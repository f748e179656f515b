r"""Plain-NumPy references for sim/depth_sum.py that only the tests (and bench/depth_sum.py) call.

They draw all ``L`` pieces of every sample as whole arrays, in the draw order of sim/depth_sum.py
(module docstring), and add them up: :func:`partial_sums` (the paths
:math:`P_\ell`) and :func:`covariance_decomposition` (the covariance identity with the L x L sample
matrix). The app uses the fast paths of sim/depth_sum.py (``unit_sums`` + ``sums_from_units``,
``path_moments``, ``column_moments``), which keep only the sums of the same draws; the tests check
both give the same numbers on the same seeds. Same validation and work bounds as the module.
"""

from __future__ import annotations

import math

import numpy as np

from sim import _validate as _v
from sim.depth_sum import (
    L_MAX_COV,
    MAX_COV_WORK,
    MAX_PATH_OUTPUT,
    _block_rows,
    _check_work,
    _sum_args,
    _trials,
    _variance,
    sample,
)


def _unit_terms(rng, rows: int, L: int, rho: float) -> np.ndarray:
    r"""``rows x L`` standard normals with common correlation ``rho``.

    rho >= 0: :math:`\sqrt\rho\,c+\sqrt{1-\rho}\,e_j` (one common normal per row).
    rho < 0: :math:`\sqrt{1-\rho}\,(e-\bar e\mathbf 1)+\sqrt{1+(L-1)\rho}\,\bar e\mathbf 1`
    (the component along :math:`\mathbf 1` is rescaled), whose covariance is
    :math:`(1-\rho)I+\rho\mathbf 1\mathbf 1^\top`.

    Draw order (the same for every rho, so that :func:`unit_sums` serves all of them): the
    ``rows`` common normals, then the ``rows x L`` independent ones, row by row.
    """
    common = rng.standard_normal(rows)
    e = rng.standard_normal((rows, L))
    if rho >= 0.0:
        if rho == 0.0:
            return e
        e *= math.sqrt(1.0 - rho)
        e += math.sqrt(rho) * common[:, None]
        return e
    ebar = e.mean(axis=1, keepdims=True)
    e -= ebar
    e *= math.sqrt(1.0 - rho)
    e += math.sqrt(max(1.0 + (L - 1) * rho, 0.0)) * ebar
    return e


def _term_blocks(alpha, L, sigma, trials, seed, rho, mu):
    """Yield blocks of scaled pieces Y = L^{-alpha} xi (rows x L), same stream for all users."""
    rng = np.random.default_rng(seed)
    rows = _block_rows(L)
    s = float(L) ** (-alpha)
    done = 0
    while done < trials:
        r = min(rows, trials - done)
        x = _unit_terms(rng, r, L, rho)
        x *= sigma
        x += mu
        x *= s
        yield x
        done += r


def variance_mc(alpha, L, sigma, trials, seed, rho=0.0, mu=0.0, level=0.95):
    r"""Sample variance of :func:`sample` with its chi-square confidence interval.

    Since :math:`S_L` is normal, :math:`(n-1)\hat s^2/\operatorname{Var}S_L\sim\chi^2_{n-1}`, so
    :math:`[(n-1)\hat s^2/\chi^2_{n-1}((1+\ell)/2),\,(n-1)\hat s^2/\chi^2_{n-1}((1-\ell)/2)]`
    covers the true variance with probability ``level``.

    Returns
    -------
    (float, float, float)
        ``(var_hat, lo, hi)``.
    """
    from scipy.stats import chi2

    level = _v.real("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    x = sample(alpha, L, sigma, _trials(trials, 2), seed, rho, mu)
    n = x.size
    s2 = float(np.var(x, ddof=1))
    lo = (n - 1) * s2 / chi2.ppf(0.5 + level / 2, n - 1)
    hi = (n - 1) * s2 / chi2.ppf(0.5 - level / 2, n - 1)
    return s2, float(lo), float(hi)


def prob_within_mc(alpha, L, sigma, c, trials, seed, rho=0.0, mu=0.0):
    r"""Monte Carlo :math:`P(|S_L|\le c)` with its binomial standard error.

    Returns
    -------
    (float, float)
        ``(p_hat, stderr)`` with ``stderr = sqrt(p_hat (1 - p_hat) / trials)``.
    """
    c = _v.real("c", c, 0.0)
    x = sample(alpha, L, sigma, trials, seed, rho, mu)
    p = float(np.mean(np.abs(x) <= c))
    return p, math.sqrt(p * (1.0 - p) / x.size)


def partial_sums(alpha, L, sigma, trials, seed, rho=0.0, mu=0.0) -> np.ndarray:
    r"""Sample paths of the partial sums over the layer index :math:`\ell`.

    .. math:: P_\ell = L^{-\alpha}\sum_{j=1}^{\ell}\xi_j,\qquad \ell = 0,1,\dots,L,

    (:math:`P_0=0`, :math:`P_L=S_L`). At :math:`\alpha=\tfrac12` a path looks like a Brownian
    path on :math:`[0,1]` with time :math:`\ell/L` (layer index, not training time).

    Returns
    -------
    np.ndarray, shape (trials, L + 1)
        Same random stream as :func:`sample`; ``trials * (L+1)`` is bounded by
        :data:`MAX_PATH_OUTPUT`.
    """
    alpha, L, sigma, trials, seed, rho, mu = _sum_args(alpha, L, sigma, trials, seed, rho, mu)
    _check_work(
        "trials * (L+1)", float(trials) * (L + 1), MAX_PATH_OUTPUT, "lower trials or L (the whole paths are returned)"
    )
    out = np.zeros((trials, L + 1))
    i = 0
    for y in _term_blocks(alpha, L, sigma, trials, seed, rho, mu):
        np.cumsum(y, axis=1, out=out[i : i + y.shape[0], 1:])
        i += y.shape[0]
    return out


def increment_rms_mc(paths, k):
    r"""Empirical RMS of :math:`P_{\ell+k}-P_\ell` pooled over all :math:`\ell` and paths.

    Overlapping windows are correlated, so no standard error is returned; compare with
    :func:`increment_rms`.
    """
    paths = _v.finite_array("paths", paths, ndim=2)
    k = _v.integer("k", k, 1, paths.shape[1] - 1)
    d = paths[:, k:] - paths[:, :-k]
    return float(np.sqrt(np.mean(d * d)))


def covariance_decomposition(alpha, L, sigma, trials, seed, rho=0.0, mu=0.0) -> dict:
    r"""The identity :math:`\operatorname{Var}\sum Y_j=\sum\operatorname{Var}Y_j+2\sum_{i<j}\operatorname{Cov}(Y_i,Y_j)`
    term by term, from samples of :math:`Y_j=L^{-\alpha}\xi_j` (same stream as :func:`sample`).

    All sample moments use ``ddof=1``, so the identity holds for the estimates exactly
    (up to rounding), not only in expectation.

    Returns
    -------
    dict
        ``cov`` (L x L sample covariance of the :math:`Y_j`), ``sum_var`` (its trace),
        ``sum_cov2`` (:math:`2\sum_{i<j}` of its entries), ``var_total`` (sample variance of
        :math:`\sum_jY_j`), ``sum_var_exact`` (:math:`L\sigma^2L^{-2\alpha}`), ``sum_cov2_exact``
        (:math:`L(L-1)\rho\sigma^2L^{-2\alpha}`), ``var_total_exact`` (:func:`variance`),
        ``n_var_terms`` (L) and ``n_cov_terms`` (L(L-1)/2).
    """
    alpha, L, sigma, trials, seed, rho, mu = _sum_args(alpha, L, sigma, trials, seed, rho, mu, 2)
    if L > L_MAX_COV:
        raise ValueError(f"L must be <= {L_MAX_COV} here (an L x L matrix is returned), got {L}")
    _check_work(
        "trials * L * L",
        float(trials) * L * L,
        MAX_COV_WORK,
        "lower trials or L (the sample covariance costs trials * L^2)",
    )
    # one pass: accumulate first and second moments, centred on the first block's mean
    shift = None
    s1 = np.zeros(L)
    s2 = np.zeros((L, L))
    n = 0
    for y in _term_blocks(alpha, L, sigma, trials, seed, rho, mu):
        if shift is None:
            shift = y.mean(axis=0)
        yc = y - shift
        s1 += yc.sum(axis=0)
        s2 += yc.T @ yc
        n += y.shape[0]
    m = s1 / n
    cov = (s2 - n * np.outer(m, m)) / (n - 1)
    cov = 0.5 * (cov + cov.T)
    sum_var = float(np.trace(cov))
    total = float(cov.sum())
    base = sigma * sigma * float(L) ** (-2.0 * alpha)
    return {
        "cov": cov,
        "sum_var": sum_var,
        "sum_cov2": total - sum_var,
        "var_total": total,
        "sum_var_exact": L * base,
        "sum_cov2_exact": L * (L - 1) * rho * base,
        "var_total_exact": _variance(alpha, L, sigma, rho),
        "n_var_terms": L,
        "n_cov_terms": L * (L - 1) // 2,
    }
