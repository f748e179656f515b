"""Moments of the draws behind the path and covariance panels: :func:`path_moments` and
:func:`column_moments` keep only sums of the pieces (Numba kernels with NumPy references in the
same draw order), and :func:`paths_from_moments`, :func:`covariance_from_moments` rescale them.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from sim import _ready  # NumPy references while the kernels compile at server start
from sim import _validate as _v
from sim.depth_sum.checks import L_MAX_COV, L_MAX_EXACT, MAX_COV_WORK, _check_work, _draws, _mu, _scales
from sim.depth_sum.exact import _variance
from sim.depth_sum.sums import _block_rows, _common_block


# --------------------------------------------------------------------------- moments of the draws
# The page rescales these for every alpha, sigma, mu and rho instead of drawing again: the
# pieces are x_j = a e_j + h_t with a = sqrt(1-rho) and a per-sample constant h_t (sqrt(rho) c_t
# for rho >= 0, (sqrt(1+(L-1) rho) - a) ebar_t for rho < 0, see _unit_terms), so every sample
# moment below is an exact (bilinear) combination of moments of e, c and ebar.
#: bound on trials * L * (1 + len(ks)) for :func:`path_moments`
MAX_PATH_WORK = 100_000_000


def _shape_rho(L, rho):
    """(a, b, h): x_j = a e_j + b c + h E (E = sum of the e_j), for the correlation rho."""
    a = math.sqrt(1.0 - rho)
    if rho >= 0.0:
        return a, math.sqrt(rho), 0.0
    return a, 0.0, (math.sqrt(max(1.0 + (L - 1) * rho, 0.0)) - a) / L


@njit(cache=True, nogil=True)
def _path_moments_kernel(rng, L, rows, ks, c, E, U_keep, SD, SD2, SDc, SDE):  # pragma: no cover
    """Draw the pieces in the draw order (module docstring; per block of ``rows`` paths: the
    common normals, then the pieces row by row), form each path's unit partial sums
    ``U_l = e_1 + … + e_l`` and accumulate, for every ``k`` in ``ks``, the sums over all windows
    ``D = U_{w+k} - U_w`` of D, D², D·c and D·E. Keeps the first ``len(U_keep)`` paths whole."""
    T = c.shape[0]
    keep = U_keep.shape[0]
    U = np.zeros(L + 1)
    for t0 in range(0, T, rows):
        r = _common_block(rng, c, t0, rows)
        for i in range(r):
            t = t0 + i
            acc = 0.0
            for j in range(L):
                acc += rng.standard_normal()
                U[j + 1] = acc
            E[t] = acc
            if t < keep:
                U_keep[t, :] = U
            for q in range(ks.shape[0]):
                k = ks[q]
                s1 = 0.0
                s2 = 0.0
                for w in range(L - k + 1):
                    d = U[w + k] - U[w]
                    s1 += d
                    s2 += d * d
                SD[q] += s1
                SD2[q] += s2
                SDc[q] += s1 * c[t]
                SDE[q] += s1 * acc


def _path_moments_reference(rng, L, rows, ks, c, E, U_keep, SD, SD2, SDc, SDE):
    """Plain-NumPy reference of :func:`_path_moments_kernel` (same draws; whole blocks)."""
    T = c.shape[0]
    keep = U_keep.shape[0]
    t0 = 0
    while t0 < T:
        r = min(rows, T - t0)
        c[t0 : t0 + r] = rng.standard_normal(r)
        U = np.zeros((r, L + 1))
        np.cumsum(rng.standard_normal((r, L)), axis=1, out=U[:, 1:])
        E[t0 : t0 + r] = U[:, -1]
        if t0 < keep:
            U_keep[t0 : min(keep, t0 + r)] = U[: keep - t0]
        for q, k in enumerate(ks):
            D = U[:, k:] - U[:, :-k]
            d1 = D.sum(axis=1)
            SD[q] += d1.sum()
            SD2[q] += (D * D).sum()
            SDc[q] += d1 @ c[t0 : t0 + r]
            SDE[q] += d1 @ E[t0 : t0 + r]
        t0 += r


def path_moments(L, trials, seed, ks, keep=24, use_numba=True) -> dict:
    r"""Moments of the draws behind the sample paths :math:`P_\ell` that the increment statistics need.

    For each window length :math:`k` in ``ks``: the sums over all windows :math:`w` and paths
    :math:`t` of :math:`D`, :math:`D^2`, :math:`D\,c_t` and :math:`D\,E_t`, where
    :math:`D=U_{w+k}-U_w` and :math:`U_\ell=\sum_{j\le\ell}e_j` are the unit partial sums; plus
    every path's :math:`c_t`, :math:`E_t=U_L` and the first ``keep`` paths :math:`U`. All ``L``
    pieces of every path are drawn (same stream as the paths drawn whole); only these sums are
    kept. :func:`paths_from_moments` turns them into paths and RMS increments for any
    :math:`\alpha,\sigma,\mu,\rho`.

    Parameters
    ----------
    L : int >= 1
    trials : int >= 2
        Number of paths; ``trials * L * (1 + len(ks))`` is bounded by :data:`MAX_PATH_WORK`.
    seed : int >= 0
    ks : sequence of int in [1, L]
    keep : int in [0, trials]
        Paths returned whole.
    use_numba : bool
        Numba kernel (default) or the NumPy reference (same draws; sums agree to ~1e-13).

    Returns
    -------
    dict
        ``L``, ``ks``, ``c``, ``E`` (shape (trials,)), ``U`` (keep, L + 1), ``SD``, ``SD2``,
        ``SDc``, ``SDE`` (shape (len(ks),)), ``windows`` (L - k + 1 per k).
    """
    L, trials, seed = _draws(L, trials, seed, L_MAX_EXACT)
    ks = np.asarray(_v.finite_array("ks", ks, ndim=1), dtype=np.float64)
    if ks.size == 0 or np.any(ks != np.round(ks)) or ks.min() < 1 or ks.max() > L:
        raise ValueError(f"ks must hold integers in [1, L = {L}]")
    ks = ks.astype(np.int64)
    keep = _v.integer("keep", keep, 0, trials)
    _check_work(
        "trials * L * (1 + len(ks))",
        float(trials) * L * (1 + ks.size),
        MAX_PATH_WORK,
        "lower trials, L or the number of window lengths",
    )
    c, E = np.empty(trials), np.empty(trials)
    U = np.empty((keep, L + 1))
    sums = [np.zeros(ks.size) for _ in range(4)]
    step = _path_moments_kernel if use_numba and _ready.ready("depth_sum") else _path_moments_reference
    step(np.random.default_rng(seed), L, _block_rows(L), ks, c, E, U, *sums)
    return {
        "L": L,
        "ks": ks,
        "c": c,
        "E": E,
        "U": U,
        "SD": sums[0],
        "SD2": sums[1],
        "SDc": sums[2],
        "SDE": sums[3],
        "windows": (L - ks + 1).astype(np.float64),
    }


def paths_from_moments(alpha, sigma, moments, rho=0.0, mu=0.0) -> dict:
    r"""Sample paths, pooled RMS increments and the spread of :math:`S_L`, from :func:`path_moments`.

    With :math:`x_j=a\,e_j+h_t` (:math:`a=\sqrt{1-\rho}`, :math:`h_t` constant along a path) the
    change over a window is :math:`\Delta P=L^{-\alpha}\bigl(k\mu+\sigma(aD+k h_t)\bigr)`, so its mean
    square over all windows and paths is

    .. math::

        L^{-2\alpha}\Bigl[\overline{(k\mu+\sigma k h_t)^2}
        + \frac{2\sigma a}{nW}\sum_{t,w}(k\mu+\sigma k h_t)D + \frac{\sigma^2a^2}{nW}\sum_{t,w}D^2\Bigr],

    the same number as the RMS increment of the paths drawn whole (up to rounding).

    Parameters
    ----------
    alpha : float
        Depth exponent.
    sigma : float
        Standard deviation of each piece.
    moments : dict
        What :func:`path_moments` returned.
    rho, mu : float
        Common correlation and mean of the pieces.

    Returns
    -------
    dict
        ``paths`` (keep x (L+1), :math:`P_\ell`), ``rms_mc`` (per k), ``end_sd`` (sample s.d. of
        :math:`P_L` over all paths), ``n`` (paths).
    """
    m = moments
    L = int(m["L"])
    alpha, sigma, rho = _scales(alpha, sigma, rho, L)
    mu = _mu(mu)
    a, b, hE = _shape_rho(L, rho)
    s = float(L) ** (-alpha)
    c, E = m["c"], m["E"]
    h = b * c + hE * E  # per-path constant part of every piece
    n = c.size
    k = m["ks"].astype(np.float64)
    A = mu + sigma * h  # (k mu + sigma k h_t) = k * A_t
    sq = np.mean(A * A) * k * k
    cross = 2.0 * sigma * a * k * (mu * m["SD"] + sigma * (b * m["SDc"] + hE * m["SDE"])) / (n * m["windows"])
    quad = sigma * sigma * a * a * m["SD2"] / (n * m["windows"])
    ell = np.arange(L + 1, dtype=np.float64)
    keep = m["U"].shape[0]
    P = s * (ell * mu + sigma * (a * m["U"] + ell * h[:keep, None]))
    end = s * (L * mu + sigma * (a * E + L * h))
    return {
        "paths": P,
        "rms_mc": s * np.sqrt(np.maximum(sq + cross + quad, 0.0)),
        "end_sd": float(np.std(end, ddof=1)),
        "n": n,
    }


@njit(cache=True, nogil=True)
def _pair_sum(e):  # pragma: no cover - compiled
    """sum over i < j of e_i e_j, as sum_i e_i (e_{i+1} + … + e_L) with a running suffix sum
    (every pair once; not the square of the row sum minus the squares)."""
    off = 0.0
    suffix = 0.0
    for p in range(e.shape[0] - 1, -1, -1):
        off += e[p] * suffix
        suffix += e[p]
    return off


@njit(cache=True, nogil=True)
def _column_moments_kernel(rng, L, rows, c, E, colsum):  # pragma: no cover - compiled
    """Draw in the draw order (module docstring); fill ``c``, ``E`` (row sums) and ``colsum`` (column
    sums of the pieces); return the total sum of squares and the sum over all pairs of distinct
    columns i < j of the products e_i e_j (:func:`_pair_sum`; the off-diagonal part of the
    cross-product matrix, not derived from the squared row sums)."""
    T = c.shape[0]
    e = np.empty(L)
    sq = 0.0
    off = 0.0
    for t0 in range(0, T, rows):
        r = _common_block(rng, c, t0, rows)
        for i in range(r):
            acc = 0.0
            for j in range(L):
                x = rng.standard_normal()
                e[j] = x
                acc += x
                colsum[j] += x
                sq += x * x
            E[t0 + i] = acc
            off += _pair_sum(e)
    return sq, off


def _column_moments_reference(rng, L, rows, c, E, colsum):
    """Plain-NumPy reference of :func:`_column_moments_kernel` (the cross-product matrix by BLAS)."""
    T = c.shape[0]
    sq = off = 0.0
    t0 = 0
    while t0 < T:
        r = min(rows, T - t0)
        c[t0 : t0 + r] = rng.standard_normal(r)
        e = rng.standard_normal((r, L))
        E[t0 : t0 + r] = e.sum(axis=1)
        colsum += e.sum(axis=0)
        S = e.T @ e
        sq += float(np.trace(S))
        off += float(np.triu(S, 1).sum())
        t0 += r
    return sq, off


def column_moments(L, trials, seed, use_numba=True) -> dict:
    r"""Moments of the draws behind the covariance identity (same stream): per sample the
    common normal :math:`c_t` and :math:`E_t=\sum_je_{tj}`; the column sums; the total sum of squares
    and the sum over pairs :math:`i<j` of :math:`\sum_te_{ti}e_{tj}`. From these,
    :func:`covariance_from_moments` gives the covariance identity for any :math:`\alpha,\sigma,\mu,\rho`
    in :math:`O(1)` instead of an :math:`L\times L` matrix per setting.

    ``trials * L * L`` is bounded by :data:`MAX_COV_WORK`, ``L`` by :data:`L_MAX_COV`.

    Parameters
    ----------
    L : int
        Depth (number of pieces), at most :data:`L_MAX_COV`.
    trials : int
        Samples.
    seed : int
        Seed (the stream of :func:`unit_sums`).
    use_numba : bool
        Numba kernel or the NumPy reference.

    Returns
    -------
    dict
        The moments named above, and ``n`` (samples).
    """
    L, trials, seed = _draws(L, trials, seed, L_MAX_COV)
    _check_work(
        "trials * L * L", float(trials) * L * L, MAX_COV_WORK, "lower trials or L (the pair sums cost trials * L^2)"
    )
    c, E, colsum = np.empty(trials), np.empty(trials), np.zeros(L)
    step = _column_moments_kernel if use_numba and _ready.ready("depth_sum") else _column_moments_reference
    sq, off = step(np.random.default_rng(seed), L, _block_rows(L), c, E, colsum)
    return {"L": L, "c": c, "E": E, "colsum": colsum, "sq": float(sq), "off": float(off)}


def covariance_from_moments(alpha, sigma, moments, rho=0.0) -> dict:
    r"""The terms of the covariance identity (without the matrix) from :func:`column_moments`.

    With :math:`x_j=a\,e_j+b\,c+h\,E` (see :func:`_shape_rho`) and :math:`Y_j=L^{-\alpha}(\mu+\sigma x_j)`,
    bilinearity of the sample covariance gives, with :math:`V_e=\sum_j\widehat{\operatorname{Var}}(e_j)`
    and :math:`O_e=\sum_{i\ne j}\widehat{\operatorname{Cov}}(e_i,e_j)` (from the pair sums of the
    cross products),

    .. math::

        \sum_j\widehat{\operatorname{Var}}(x_j) &= a^2V_e + Lb^2\hat v_c + 2ab\,\hat c_{Ec}
            + Lh^2\hat v_E + 2ah\,\hat v_E + 2Lbh\,\hat c_{Ec},\\
        \sum_{i\ne j}\widehat{\operatorname{Cov}}(x_i,x_j) &= a^2O_e + L(L-1)b^2\hat v_c
            + 2(L-1)ab\,\hat c_{Ec} + L(L-1)h^2\hat v_E + 2(L-1)ah\,\hat v_E + 2L(L-1)bh\,\hat c_{Ec},

    times :math:`\sigma^2L^{-2\alpha}` (the mean :math:`\mu` drops out). ``var_total`` is the sample
    variance of :math:`\sum_jY_j`, computed from :math:`E` and :math:`c` directly: the first two
    add up to it only because :math:`V_e+O_e=\hat v_E`, the covariance identity for the drawn pieces,
    which these sums check rather than assume.

    Parameters
    ----------
    alpha : float
        Depth exponent.
    sigma : float
        Standard deviation of each piece.
    moments : dict
        What :func:`column_moments` returned.
    rho : float
        Common correlation of the pieces.

    Returns
    -------
    dict
        ``sum_var``, ``sum_cov2``, ``var_total`` (sample moments), their ``*_exact`` values,
        ``n_var_terms``, ``n_cov_terms`` and ``n`` (samples).
    """
    m = moments
    L = int(m["L"])
    alpha, sigma, rho = _scales(alpha, sigma, rho, L)
    c, E, cs = m["c"], m["E"], m["colsum"]
    n = c.size
    V_e = (m["sq"] - float(cs @ cs) / n) / (n - 1)
    O_e = (2.0 * m["off"] - (float(cs.sum()) ** 2 - float(cs @ cs)) / n) / (n - 1)
    v_c = float(np.var(c, ddof=1))
    v_E = float(np.var(E, ddof=1))
    c_Ec = float(np.sum((E - E.mean()) * (c - c.mean())) / (n - 1))
    a, b, h = _shape_rho(L, rho)
    diag = a * a * V_e + L * b * b * v_c + 2 * a * b * c_Ec + L * h * h * v_E + 2 * a * h * v_E + 2 * L * b * h * c_Ec
    offd = a * a * O_e + (L - 1) * (
        L * b * b * v_c + 2 * a * b * c_Ec + L * h * h * v_E + 2 * a * h * v_E + 2 * L * b * h * c_Ec
    )
    g = a + L * h  # sum_j x_j = g E + L b c
    total = g * g * v_E + L * L * b * b * v_c + 2 * L * g * b * c_Ec
    base = sigma * sigma * float(L) ** (-2.0 * alpha)
    return {
        "sum_var": base * diag,
        "sum_cov2": base * offd,
        "var_total": base * total,
        "sum_var_exact": L * base,
        "sum_cov2_exact": L * (L - 1) * rho * base,
        "var_total_exact": _variance(alpha, L, sigma, rho),
        "n_var_terms": L,
        "n_cov_terms": L * (L - 1) // 2,
        "n": n,
    }
