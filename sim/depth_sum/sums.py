"""Monte Carlo of the scaled sums :math:`S_L`: the draws (:func:`unit_sums`, a Numba kernel and
its NumPy reference, in the same draw order) and the exact algebra that turns them into samples
of :math:`S_L` for every alpha, sigma, mu, rho (:func:`sums_from_units`, :func:`sample`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from sim import _ready  # NumPy references while the kernels compile at server start
from sim import _validate as _v
from sim.depth_sum.checks import L_MAX_EXACT, MAX_SUM_WORK, _BLOCK, _check_work, _depth, _draws, _mu, _scales


# --------------------------------------------------------------------------- Gaussian sums
def _block_rows(L: int) -> int:
    """Samples per block of drawn pieces (rows x L ≈ _BLOCK doubles)."""
    return max(1, _BLOCK // L)


@njit(cache=True, nogil=True)
def _common_block(rng, c, t0, rows):  # pragma: no cover - compiled
    """Draw the next block's common normals ``c[t0:t0 + r]`` one by one (the draw order); return r."""
    r = min(rows, c.shape[0] - t0)
    for i in range(r):
        c[t0 + i] = rng.standard_normal()
    return r


@njit(cache=True, nogil=True)
def _unit_sums_kernel(rng, L, rows, c, E):  # pragma: no cover - compiled
    """Fill ``c[t]`` (the common normal) and ``E[t]`` (the sum of ``L`` independent normals),
    drawing from ``rng`` in the draw order (module docstring): per block of ``rows`` samples the
    common normals, then the pieces row by row. Nothing but the two sums is stored."""
    T = c.shape[0]
    for t0 in range(0, T, rows):
        r = _common_block(rng, c, t0, rows)
        for i in range(r):
            acc = 0.0
            for _ in range(L):
                acc += rng.standard_normal()
            E[t0 + i] = acc


def _unit_sums_reference(rng, L, rows, c, E):
    """Plain-NumPy reference of :func:`_unit_sums_kernel` (same draws; whole blocks drawn)."""
    T = c.shape[0]
    t0 = 0
    while t0 < T:
        r = min(rows, T - t0)
        c[t0 : t0 + r] = rng.standard_normal(r)
        E[t0 : t0 + r] = rng.standard_normal((r, L)).sum(axis=1)
        t0 += r


def _units_args(L, trials, seed, lo_trials=1):
    L, trials, seed = _draws(L, trials, seed, L_MAX_EXACT, lo_trials)
    _check_work("trials * L", float(trials) * L, MAX_SUM_WORK, "lower trials or L (each sample draws L normals)")
    return L, trials, seed


def unit_sums(L, trials, seed, use_numba=True):
    r"""The random part of :math:`S_L`: per sample, the common normal :math:`c` and the sum
    :math:`E=\sum_{j=1}^L e_j` of the ``L`` independent standard normals :math:`e_j`.

    The pieces of :math:`S_L` are :math:`\xi_j=\mu+\sigma x_j` with
    :math:`x_j=\sqrt{1-\rho}\,e_j+\sqrt\rho\,c` (:math:`\rho\ge0`), so their sum is a fixed linear
    combination of :math:`E` and :math:`c` (:func:`sums_from_units`): these draws serve every
    :math:`\alpha,\sigma,\mu,\rho` (common random numbers). All ``L`` pieces are still drawn and
    added; only the sum is kept.

    Parameters
    ----------
    L : int >= 1
    trials : int >= 1
        ``trials * L`` is bounded by :data:`MAX_SUM_WORK`.
    seed : int >= 0
        Seed of ``np.random.default_rng``; the stream is that of the pieces drawn whole (module docstring).
    use_numba : bool
        Numba kernel (default) or the NumPy reference; both return the same numbers up to the
        summation order (about ``1e-15 * sqrt(L)``).

    Returns
    -------
    (np.ndarray, np.ndarray)
        ``(c, E)``, each of shape (trials,); :math:`c\sim N(0,1)`, :math:`E\sim N(0,L)`, independent.
    """
    L, trials, seed = _units_args(L, trials, seed)
    c, E = np.empty(trials), np.empty(trials)
    step = _unit_sums_kernel if use_numba and _ready.ready("depth_sum") else _unit_sums_reference
    step(np.random.default_rng(seed), L, _block_rows(L), c, E)
    return c, E


def sums_from_units(alpha, L, sigma, c, E, rho=0.0, mu=0.0) -> np.ndarray:
    r"""Samples of :math:`S_L` from the draws of :func:`unit_sums` (exact algebra, no new draws).

    .. math::

        S_L = L^{-\alpha}\sum_{j=1}^{L}\bigl(\mu+\sigma x_j\bigr)
            = L^{-\alpha}\Bigl(L\mu+\sigma\bigl(\sqrt{1-\rho}\,E+L\sqrt\rho\,c\bigr)\Bigr)
            \quad(\rho\ge0),

    and :math:`L^{-\alpha}\bigl(L\mu+\sigma\sqrt{1+(L-1)\rho}\,E\bigr)` for :math:`\rho<0` (there the
    pieces' deviations from their mean cancel in the sum, see the module docstring).

    Parameters
    ----------
    alpha : float
        Depth exponent: :math:`S_L = L^{-\alpha}\sum_j \xi_j`.
    L : int
        Depth, :math:`L \ge 1`.
    sigma : float
        Standard deviation of each piece.
    c, E : ndarray, shape (trials,)
        The common normal :math:`c` and the sum :math:`E=\sum_j e_j` of the L independent normals,
        from :func:`unit_sums`.
    rho : float
        Common correlation, :math:`-1/(L-1) \le \rho \le 1`.
    mu : float
        Mean of each piece.

    Returns
    -------
    ndarray, shape (trials,)
        The samples of :math:`S_L`.
    """
    L = _depth(L)
    alpha, sigma, rho = _scales(alpha, sigma, rho, L)
    mu = _mu(mu)
    c = _v.finite_array("c", c, ndim=1)
    E = _v.finite_array("E", E, shape=c.shape)
    if rho >= 0.0:
        u = math.sqrt(1.0 - rho) * E
        if rho > 0.0:
            u += (L * math.sqrt(rho)) * c
    else:
        u = math.sqrt(max(1.0 + (L - 1) * rho, 0.0)) * E
    u *= sigma
    u += L * mu
    u *= float(L) ** (-alpha)
    return u


def _sum_args(alpha, L, sigma, trials, seed, rho, mu, lo_trials=1):
    L, trials, seed = _units_args(L, trials, seed, lo_trials)
    alpha, sigma, rho = _scales(alpha, sigma, rho, L)
    mu = _mu(mu)
    return alpha, L, sigma, trials, seed, rho, mu


def sample(alpha, L, sigma, trials, seed, rho=0.0, mu=0.0) -> np.ndarray:
    r"""Monte Carlo samples of :math:`S_L = L^{-\alpha}\sum_{j=1}^L\xi_j`.

    Each sample draws all ``L`` pieces :math:`\xi_j=\mu+\sigma x_j` (standard normals
    :math:`x_j` with common correlation ``rho``, in the draw order of the module notes) and adds
    them; it does not draw :math:`S_L` from its known normal law.

    Parameters
    ----------
    alpha : float
        Scaling exponent, ``0 <= alpha <= ALPHA_MAX``.
    L : int
        Depth, ``L >= 1``.
    sigma : float
        Standard deviation of each piece, ``sigma >= 0``.
    trials : int
        Number of samples, ``>= 1``; ``trials * L`` is bounded by :data:`MAX_SUM_WORK`.
    seed : int
        Seed of ``np.random.default_rng``, ``0 <= seed <= SEED_MAX``.
    rho : float, optional
        Common correlation of the pieces, in :math:`[-1/(L-1), 1]`.
    mu : float, optional
        Mean of each piece.

    Returns
    -------
    np.ndarray, shape (trials,)
        The samples of :math:`S_L`; their law is
        :math:`N(\mu L^{1-\alpha}, \mathrm{variance}(\alpha, L, \sigma, \rho))`. Computed as
        ``sums_from_units(alpha, L, sigma, *unit_sums(L, trials, seed), rho, mu)``.

    Raises
    ------
    ValueError
        Naming the argument that is out of range or not a finite real number, or when
        ``trials * L`` exceeds the work bound.
    """
    alpha, L, sigma, trials, seed, rho, mu = _sum_args(alpha, L, sigma, trials, seed, rho, mu)
    return sums_from_units(alpha, L, sigma, *unit_sums(L, trials, seed), rho, mu)
