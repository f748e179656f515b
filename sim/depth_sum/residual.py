r"""Monte Carlo of the linear residual network at initialisation: :math:`\lVert z_L\rVert^2 /
\lVert z_0\rVert^2` with every weight drawn (matrix sampler) or each :math:`W_\ell z_\ell`
drawn through its law (vector sampler); Numba kernels with NumPy references in the same draw order.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from sim import _ready  # NumPy references while the kernels compile at server start
from sim import _validate as _v
from sim.depth_sum.checks import (
    L_MAX_RESIDUAL,
    MAX_RESIDUAL_WORK,
    WIDTH_MAX,
    _BLOCK,
    _alpha,
    _check_work,
    _depth,
    _seed,
    _trials,
)


# --------------------------------------------------------------------------- residual network
@njit(cache=True, nogil=True)
def _residual_kernel(rng, z, scale, norms, l0, lb):  # pragma: no cover - compiled
    """Advance ``z[t]`` through ``lb`` layers in place; fill ``norms[t, l0+1 .. l0+lb]``.

    One layer is ``z <- z + scale * W z`` with ``scale = L^{-alpha} / sqrt(N)`` and ``W`` an
    N x N matrix of standard normals, drawn from ``rng`` inside the loop in the order of
    ``rng.standard_normal((T, lb, N, N))`` (trial, layer, row, column): exactly the draws that
    :func:`_residual_reference` receives as an array, without storing them. One stream, so one
    thread; ``nogil`` lets other sessions' Python run meanwhile.
    """
    T, N = z.shape[0], z.shape[1]
    y = np.empty(N)
    for t in range(T):
        zt = z[t]
        for l in range(lb):
            for i in range(N):
                acc = 0.0
                for j in range(N):
                    acc += rng.standard_normal() * zt[j]
                y[i] = acc
            nrm = 0.0
            for i in range(N):
                zt[i] += scale * y[i]
                nrm += zt[i] * zt[i]
            norms[t, l0 + l + 1] = nrm


def _residual_reference(rng, z, scale, norms, l0, lb):
    """Plain-NumPy reference of :func:`_residual_kernel` (same arguments, same draws, same effect)."""
    W = rng.standard_normal((z.shape[0], lb, z.shape[1], z.shape[1]))
    for l in range(lb):
        z += scale * np.matmul(W[:, l], z[:, :, None])[:, :, 0]
        norms[:, l0 + l + 1] = np.einsum("ti,ti->t", z, z)


def _residual_blocks(L: int, N: int, trials: int):
    """(rows, lb): trials per group and layers per weight block (≈ _BLOCK doubles a block, at
    least a few trials per group). They fix the draw order, so both paths use them."""
    rows_min = min(trials, 16, max(1, 4 * _BLOCK // (N * N)))
    lb = min(L, max(1, _BLOCK // (rows_min * N * N)))
    rows = min(trials, max(rows_min, _BLOCK // (lb * N * N)))
    return rows, lb


def _residual_norms(alpha, L, width, trials, seed, use_numba=True) -> np.ndarray:
    r"""Per-trial :math:`\lVert z_\ell\rVert^2/\lVert z_0\rVert^2`, shape (trials, L + 1).

    Draw order from ``np.random.default_rng(seed)``: for each group of ``rows`` trials, the
    starting vectors ``z_0`` (rows x N), then the weights layer block by layer block
    (rows x lb x N x N standard normals). The Numba kernel draws them one by one inside its
    loop, the NumPy reference as arrays: the same numbers either way. Arguments are assumed
    validated.
    """
    N = width
    rng = np.random.default_rng(seed)
    rows, lb = _residual_blocks(L, N, trials)
    scale = float(L) ** (-alpha) / math.sqrt(N)
    step = _residual_kernel if use_numba and _ready.ready("depth_sum") else _residual_reference
    out = np.empty((trials, L + 1))
    t0 = 0
    while t0 < trials:
        r = min(rows, trials - t0)
        z = rng.standard_normal((r, N))
        z /= np.linalg.norm(z, axis=1, keepdims=True)
        norms = np.empty((r, L + 1))
        norms[:, 0] = 1.0
        l0 = 0
        while l0 < L:
            b = min(lb, L - l0)
            step(rng, z, scale, norms, l0, b)
            l0 += b
        out[t0 : t0 + r] = norms
        t0 += r
    if not np.all(np.isfinite(out)):
        raise ValueError("the energy ratio overflowed the float range: raise alpha or lower L")
    return out


# The same network sampled through the law of W_l z_l: for W_l with iid N(0, 1/N) entries,
# independent of z_l, W_l z_l given z_l is exactly N(0, |z_l|^2/N I_N). So
#   z_{l+1} = z_l + L^{-alpha} |z_l| / sqrt(N) g_l,   g_l ~ N(0, I_N) iid,
# has the same joint law of (z_0, ..., z_L) as the matrix recursion (not an approximation), with
# N normals per layer instead of N^2, so much less work at the page's sizes. The page says so;
# the matrix sampler stays as the literal reference.
RESIDUAL_SAMPLERS = ("matrix", "vector")
#: the sampler of residual_energy_mc / residual_energy_profile
RESIDUAL_SAMPLER = "vector"


@njit(cache=True, nogil=True)
def _residual_vector_kernel(rng, z, scale, norms):  # pragma: no cover - compiled
    """``z_{l+1} = z_l + scale |z_l| g_l`` for every row of ``z`` (in place) through
    ``norms.shape[1] - 1`` layers, ``g_l`` drawn from ``rng`` in the order of
    ``rng.standard_normal((T, L, N))``; ``norms[t, l] = |z_l|^2`` for l >= 1."""
    T, N = z.shape[0], z.shape[1]
    L = norms.shape[1] - 1
    for t in range(T):
        zt = z[t]
        nrm = 0.0
        for i in range(N):
            nrm += zt[i] * zt[i]
        for l in range(L):
            c = scale * math.sqrt(nrm)
            nrm = 0.0
            for i in range(N):
                zt[i] += c * rng.standard_normal()
                nrm += zt[i] * zt[i]
            norms[t, l + 1] = nrm


def _residual_vector_reference(rng, z, scale, norms):
    """Plain-NumPy reference of :func:`_residual_vector_kernel` (same draws, same effect)."""
    L = norms.shape[1] - 1
    G = rng.standard_normal((z.shape[0], L, z.shape[1]))
    for l in range(L):
        z += (scale * np.sqrt(np.einsum("ti,ti->t", z, z)))[:, None] * G[:, l]
        norms[:, l + 1] = np.einsum("ti,ti->t", z, z)


def _residual_norms_vector(alpha, L, width, trials, seed, use_numba=True) -> np.ndarray:
    r"""As :func:`_residual_norms` (same law, other draws): per group of trials the unit starts
    ``z_0`` (rows x N), then ``g`` (rows x L x N) from ``np.random.default_rng(seed)``."""
    N = width
    rng = np.random.default_rng(seed)
    rows = int(min(trials, max(1, _BLOCK // (L * N))))
    scale = float(L) ** (-alpha) / math.sqrt(N)
    step = _residual_vector_kernel if use_numba and _ready.ready("depth_sum") else _residual_vector_reference
    out = np.empty((trials, L + 1))
    for t0 in range(0, trials, rows):
        r = min(rows, trials - t0)
        z = rng.standard_normal((r, N))
        z /= np.linalg.norm(z, axis=1, keepdims=True)
        norms = np.empty((r, L + 1))
        norms[:, 0] = 1.0
        step(rng, z, scale, norms)
        out[t0 : t0 + r] = norms
    if not np.all(np.isfinite(out)):
        raise ValueError("the energy ratio overflowed the float range: raise alpha or lower L")
    return out


def _residual_sample(alpha, L, width, trials, seed) -> np.ndarray:
    """The per-trial energy ratios of the sampler RESIDUAL_SAMPLER (arguments validated)."""
    f = _residual_norms_vector if RESIDUAL_SAMPLER == "vector" else _residual_norms
    return f(alpha, L, width, trials, seed)


def _residual_args(alpha, L, width, trials, seed):
    alpha = _alpha(alpha)
    L = _depth(L, L_MAX_RESIDUAL)
    width = _v.integer("width", width, 1, WIDTH_MAX)
    trials = _trials(trials, 2)
    seed = _seed(seed)
    _check_work(
        "trials * L * width^2",
        float(trials) * L * width * width,
        MAX_RESIDUAL_WORK,
        "lower trials, L or width (each layer draws a width x width matrix)",
    )
    return alpha, L, width, trials, seed


def residual_energy_mc(alpha, L, width, trials, seed):
    r"""Monte Carlo :math:`\lVert z_L\rVert^2/\lVert z_0\rVert^2` of the linear residual network.

    .. math:: z_{\ell+1} = (I + L^{-\alpha}W_\ell)\,z_\ell,\qquad (W_\ell)_{ik}\sim N(0,1/N)\ \text{iid},

    with a fresh uniformly random unit :math:`z_0` and fresh weights in every trial
    (every weight matrix is drawn; Numba kernel). Compare with :func:`residual_energy`.

    Parameters
    ----------
    alpha : float in [0, 2]
    L : int in [1, 512]
        Depth.
    width : int in [1, 1024]
        Width N.
    trials : int >= 2
        ``trials * L * width**2`` is bounded by :data:`MAX_RESIDUAL_WORK`.
    seed : int >= 0

    Returns
    -------
    (float, float)
        ``(mean, stderr)`` over trials, ``stderr = std(ddof=1)/sqrt(trials)``.
    """
    alpha, L, width, trials, seed = _residual_args(alpha, L, width, trials, seed)
    r = _residual_sample(alpha, L, width, trials, seed)[:, -1]
    # mean and std of r / max(r), then scaled back: r itself may be ~1e154 (alpha = 0), whose
    # squares in a plain std would overflow to inf
    top = float(r.max()) or 1.0
    q = r / top
    return float(top * q.mean()), float(top * (q.std(ddof=1) / math.sqrt(trials)))


def residual_energy_profile(alpha, L, width, trials, seed):
    r"""Monte Carlo mean and standard error of :math:`\lVert z_\ell\rVert^2/\lVert z_0\rVert^2`
    for every layer :math:`\ell=0,\dots,L` (exact: :math:`(1+L^{-2\alpha})^\ell`).

    Same draws as :func:`residual_energy_mc`, whose result is the last entry.

    Parameters
    ----------
    alpha : float
        Depth exponent of the residual branches.
    L : int
        Depth.
    width : int
        Width N of each layer.
    trials : int
        Networks drawn.
    seed : int
        Seed of NumPy's default generator.

    Returns
    -------
    (np.ndarray, np.ndarray)
        ``(mean, stderr)``, each of shape (L + 1,).
    """
    alpha, L, width, trials, seed = _residual_args(alpha, L, width, trials, seed)
    r = _residual_sample(alpha, L, width, trials, seed)
    top = r.max(axis=0)  # per layer, as in residual_energy_mc (no overflow)
    top[top == 0.0] = 1.0
    q = r / top
    return top * q.mean(axis=0), top * (q.std(axis=0, ddof=1) / math.sqrt(trials))
