"""Equicorrelated directions: their coefficients, the tilted bases that orient them, and the exact
law of their supremum (tail, density, mean) by Gauss-Legendre quadrature.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special, stats

from sim._validate import finite_array, integer, real
from sim.gaussian_width.params import MAX_BASIS, MAX_TAIL_POINTS, REFLECTIONS, _basis_width, _explicit, _params


# --------------------------------------------------------------------------
# the equicorrelated directions and their exact law
# --------------------------------------------------------------------------
def _equicorr_coeffs(M: int, rho: float) -> tuple[float, float]:
    """alpha, beta with (alpha I + beta 11^T)^2 = (1-rho) I + rho 11^T."""
    alpha = math.sqrt(1.0 - rho)
    beta = (math.sqrt(1.0 - rho + M * rho) - alpha) / M
    return alpha, beta


def _streams(seed: int):
    set_ss, g_ss = np.random.SeedSequence(seed).spawn(2)
    return set_ss, g_ss


def _reflectors(D: int, seed: int) -> np.ndarray:
    """Unit normals v_1..v_r (rows) of the Householder reflections that orient the set."""
    set_ss, _ = _streams(seed)
    V = np.random.default_rng(set_ss).standard_normal((REFLECTIONS, D))
    return V / np.linalg.norm(V, axis=1, keepdims=True)


def _basis(V: np.ndarray, k: int) -> np.ndarray:
    """Q = H^T[:, :k] for H = H_r ... H_1 (H_1, from V[0], acts on g first), so (Q^T g)_i = (H g)_i."""
    D = V.shape[1]
    Q = np.eye(D, k)
    for v in V[::-1]:
        Q -= 2.0 * np.outer(v, v @ Q)
    return Q


def _set_basis(p, seed):
    """The explicit orthonormal basis of the set for this seed (None for adaptive/hypercube)."""
    width = _basis_width(p)
    if not width:
        return None
    if p["D"] * width > MAX_BASIS:
        raise ValueError(
            f"D*{'k' if p['kind'] == 'subspace' else 'M'} = {p['D'] * width} exceeds "
            f"{MAX_BASIS}: lower D or {'k' if p['kind'] == 'subspace' else 'M'}"
        )
    return _basis(_reflectors(p["D"], seed), width)


_GL_X, _GL_W = np.polynomial.legendre.leggauss(10)


def _gl_nodes(breaks: np.ndarray):
    """Composite 10-point Gauss-Legendre nodes and weights on sorted breakpoints."""
    a, b = breaks[:-1], breaks[1:]
    half = 0.5 * (b - a)
    x = (0.5 * (a + b))[:, None] + half[:, None] * _GL_X[None, :]
    w = half[:, None] * _GL_W[None, :]
    return x.ravel(), w.ravel()


def _breaks(lo, hi, coarse, fine_lo=None, fine_hi=None, fine=None):
    pts = [np.arange(lo, hi, coarse), [hi]]
    if fine is not None and fine_hi > lo and fine_lo < hi:
        a, b = max(lo, fine_lo), min(hi, fine_hi)
        n = max(1, int(math.ceil((b - a) / fine)))
        pts.append(np.linspace(a, b, n + 1))
    x = np.unique(np.concatenate(pts))
    return x[(x >= lo) & (x <= hi)]


def _one_minus_pow(q, M):
    """1 - (1 - q)^M, accurate for small q and large M."""
    q = np.clip(q, 0.0, 1.0)
    with np.errstate(divide="ignore"):
        return -np.expm1(M * np.log1p(-q))


def _H(c: np.ndarray, M: int) -> np.ndarray:
    """H(c) = E max_i |c + Y_i| for M iid standard normals Y_i (vectorised in c)."""
    c = np.abs(np.asarray(c, dtype=float))
    R = math.sqrt(2.0 * math.log(2.0 * M)) + 9.0
    out = np.empty_like(c)
    # the integrand 1 - P(max < r) is 1 to within 1e-19*M for r < |c| - 9
    x, w = _gl_nodes(np.arange(0.0, 9.0 + R + 0.2, 0.2))  # offsets t in [0, 9+R]
    for idx, ci in enumerate(c):
        start = max(0.0, ci - 9.0)
        r = start + x
        q = special.ndtr(ci - r) + special.ndtr(-r - ci)  # P(|c+Y| >= r)
        out[idx] = start + np.sum(w * _one_minus_pow(q, M))
    return out


def _directions_mean(M: int, rho: float) -> float:
    if rho >= 1.0:
        return math.sqrt(2.0 / math.pi)
    if rho == 0.0:
        return float(_H(np.array([0.0]), M)[0])
    s, sr = math.sqrt(1.0 - rho), math.sqrt(rho)
    scale = s / sr  # z-scale on which H(sr z / s) bends
    L = math.sqrt(2.0 * math.log(2.0 * M)) + 10.0
    z, w = _gl_nodes(_breaks(0.0, 9.0, 0.25, 0.0, L * scale, 0.5 * scale))
    vals = s * _H(sr * z / s, M)
    return float(2.0 * np.sum(w * _phi(z) * vals))


def _tail_and_density(r: np.ndarray, M: int, rho: float):
    """P(max_i |X_i| >= r) and its density, X_i = sqrt(rho) Z + sqrt(1-rho) Y_i."""
    r = np.asarray(r, dtype=float)
    if rho >= 1.0:
        return special.erfc(r / math.sqrt(2.0)), 2.0 * _phi(r)
    if rho == 0.0:
        q = special.erfc(r / math.sqrt(2.0))
        tail = _one_minus_pow(q, M)
        with np.errstate(divide="ignore", invalid="ignore"):
            pm1 = np.exp((M - 1) * np.log1p(-np.minimum(q, 1.0))) if M > 1 else 1.0
        return tail, np.nan_to_num(M * pm1 * 2.0 * _phi(r))
    s, sr = math.sqrt(1.0 - rho), math.sqrt(rho)
    lm = math.sqrt(2.0 * math.log(2.0 * M))
    tail = np.empty_like(r)
    dens = np.empty_like(r)
    for lo in range(0, r.size, 256):  # blocks of r bound the memory
        rb = r[lo : lo + 256, None]
        # z in [0, 9] split at the transition zone of the integrand (in z, width ~ s/sr)
        z1 = np.clip((rb - s * (lm + 9.0)) / sr, 0.0, 9.0)
        z2 = np.clip((rb + 9.0 * s) / sr, 0.0, 9.0)
        zero, nine = np.zeros_like(rb), np.full_like(rb, 9.0)
        z, w = _gl_intervals([(zero, z1, 36), (z1, z2, 128), (z2, nine, 36)])
        a = sr * z
        q = special.ndtr((a - rb) / s) + special.ndtr((-rb - a) / s)
        phi = _phi(z)
        tail[lo : lo + 256] = 2.0 * np.sum(w * phi * _one_minus_pow(q, M), axis=1)
        dp = (_phi((rb - a) / s) + _phi((rb + a) / s)) / s
        with np.errstate(divide="ignore", invalid="ignore"):
            pm1 = np.exp((M - 1) * np.log1p(-np.clip(q, 0.0, 1.0))) if M > 1 else 1.0
        dens[lo : lo + 256] = 2.0 * np.sum(w * phi * M * np.nan_to_num(pm1) * dp, axis=1)
    return np.clip(tail, 0.0, 1.0), dens


def _phi(x):
    return np.exp(-0.5 * x * x) * (1.0 / math.sqrt(2.0 * math.pi))


def _gl_intervals(pieces):
    """Gauss-Legendre nodes/weights, row-wise: each piece (lo, hi, n_panels) of (n,1) arrays."""
    xs, ws = [], []
    for lo, hi, n in pieces:
        edges = lo + (hi - lo) * (np.arange(n + 1) / n)[None, :]  # (n_r, n+1)
        a, b = edges[:, :-1, None], edges[:, 1:, None]
        half = 0.5 * (b - a)
        xs.append((0.5 * (a + b) + half * _GL_X).reshape(lo.shape[0], -1))
        ws.append(np.broadcast_to(half * _GL_W, half.shape[:2] + (_GL_W.size,)).reshape(lo.shape[0], -1))
    return np.concatenate(xs, axis=1), np.concatenate(ws, axis=1)


def _r_array(name, r):
    if isinstance(r, (str, bytes)) or np.iscomplexobj(r):
        raise ValueError(f"{name} must be a finite real number or 1-D array")
    arr = np.atleast_1d(finite_array(name, r))
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a finite real number or 1-D array")
    if arr.size > 100_000:
        raise ValueError(f"{name} has {arr.size} points (> 100000)")
    return arr


def tail_bound(r, M) -> np.ndarray:
    r"""Union bound :math:`\min(1, 2M e^{-r^2/2})` on :math:`P(\max_i|\langle g,u_i\rangle| \ge r)`.

    Valid for any ``M`` fixed unit directions (any correlation), ``r >= 0``.

    Parameters
    ----------
    r : array_like
        Thresholds :math:`r \ge 0`.
    M : int
        Number of directions.

    Returns
    -------
    ndarray
        :math:`\min(1, 2Me^{-r^2/2})`, the shape of ``r``.
    """
    M = integer("M", M, 1)
    r = _r_array("r", r)
    if np.any(r < 0):
        raise ValueError("r must be >= 0")
    return np.minimum(1.0, 2.0 * M * np.exp(-0.5 * r * r))


def _check_tail_work(points: int, rho: float, max_work):
    max_work = real("max_work", max_work, 1.0)
    if 0.0 < rho < 1.0 and points > max_work:
        raise ValueError(
            f"{points} points for a correlated tail exceed max_work = {max_work:.3g}: "
            "each costs a 2000-node quadrature; use fewer points or "
            "pass a larger max_work="
        )


def tail_exact(r, M, correlation=0.0, *, max_work=MAX_TAIL_POINTS) -> np.ndarray:
    r"""Exact :math:`P(\max_i|\langle g,u_i\rangle| \ge r)` for the equicorrelated directions.

    .. math::

        P(\max_i|X_i| \ge r) = 1 - \int\varphi(z)\Big[\Phi\big(\tfrac{r-\sqrt\rho z}{\sqrt{1-\rho}}\big)
        - \Phi\big(\tfrac{-r-\sqrt\rho z}{\sqrt{1-\rho}}\big)\Big]^M dz

    (closed form for :math:`\rho \in \{0, 1\}`, up to 1e5 points; Gauss–Legendre quadrature
    otherwise, at most ``max_work`` points, default ``MAX_TAIL_POINTS`` = 2000, checked before
    the work starts). Independent of ``D`` (only the Gram matrix of the directions matters).

    Parameters
    ----------
    r : array_like
        Thresholds :math:`r \ge 0` (any shape; the result has the same).
    M : int
        Number of directions, :math:`M \ge 1`: the maximum is over :math:`M` correlated Gaussian
        coordinates.
    correlation : float
        Common correlation :math:`\rho \in [0, 1]` of the directions.
    max_work : int
        Quadrature points allowed.

    Returns
    -------
    ndarray
        :math:`P(\max_i|\langle g,u_i\rangle| \ge r)`, the shape of ``r``.
    """
    M = integer("M", M, 1)
    rho = real("correlation", correlation, 0.0, 1.0)
    r = _r_array("r", r)
    if np.any(r < 0):
        raise ValueError("r must be >= 0")
    _check_tail_work(r.size, rho, max_work)
    return _tail_and_density(r, M, rho)[0]


def empirical_tail(values, r) -> np.ndarray:
    r"""Fraction of ``values`` that are ``>= r`` for each threshold in ``r``.

    Parameters
    ----------
    values : array_like
        Monte Carlo values (e.g. from :func:`sup_samples`).
    r : array_like
        Thresholds.

    Returns
    -------
    ndarray
        :math:`\#\{v \ge r\}/n` for every threshold.
    """
    v = np.asarray(values, dtype=float)
    if v.ndim != 1 or v.size == 0 or not np.all(np.isfinite(v)):
        raise ValueError("values must be a non-empty finite 1-D array")
    r = _r_array("r", r)
    v = np.sort(v)
    return 1.0 - np.searchsorted(v, r, side="left") / v.size


def sup_density(kind, x, *, max_work=MAX_TAIL_POINTS, **params) -> np.ndarray:
    r"""Exact probability density of :math:`\sup_{u\in S}\langle g,u\rangle` at ``x``.

    Subspace (``k``), circle (``k = 2``) and adaptive (``k = D``): the chi
    density with ``k`` degrees of freedom,
    :math:`x^{k-1}e^{-x^2/2}/(2^{k/2-1}\Gamma(k/2))`.  Directions: minus the
    derivative of :func:`tail_exact` (equicorrelated layout only; for
    :math:`0 < \rho < 1` at most ``max_work`` points, default 2000, as there).  Hypercube: no
    closed form here (:math:`\|g\|_1/\sqrt D` is a scaled sum of half-normals), raises ValueError.

    Parameters
    ----------
    kind : str
        ``"subspace"``, ``"circle"``, ``"adaptive"`` or ``"directions"``.
    x : array_like
        Points :math:`x \ge 0` at which the density is evaluated.
    max_work : int
        Quadrature points allowed for correlated directions.
    **params
        The family's parameters, as for :func:`exact`.

    Returns
    -------
    ndarray
        The density at ``x``.
    """
    p = _params(kind, params)
    x = _r_array("x", x)
    kind = p["kind"]
    if kind == "hypercube":
        raise ValueError("kind 'hypercube' has no closed-form density here")
    if kind == "directions":
        if _explicit(p):
            raise ValueError("the density of max_i |<g,u_i>| has a closed form here only for the equicorrelated layout")
        xx = np.maximum(x, 0.0)
        _check_tail_work(x.size, p["correlation"], max_work)
        return np.where(x < 0, 0.0, _tail_and_density(xx, p["M"], p["correlation"])[1])
    k = {"subspace": p.get("k"), "circle": 2, "adaptive": p["D"]}[kind]
    return stats.chi.pdf(x, k)
