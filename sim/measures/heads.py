"""Many heads: the velocity averaged over H iid heads against the head distribution's (:mod:`sim.measures`)."""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import njit

from sim import _validate as _v
from sim.attention.exp import exp1 as _exp1

from sim.measures.limits import MAX_HEAD_WORK

# --------------------------------------------------------------------------- many heads
#: Gauss–Hermite nodes per dimension for the head-distribution average (two rules: error estimate)
_GH_NODES = {2: (160, 120), 3: (64, 48), 4: (28, 21)}
#: the two rules must agree to GH_RTOL * sqrt(tr Sigma_U) (else ValueError). The average serves as
#: the reference of H sampled heads, whose error is about sqrt(tr Sigma_U / H): at H = 4096 (the
#: page's hard limit) the allowed quadrature error is 0.64 % of it. (A fixed 1e-5 refused beta = 4.9
#: at d = 3, where the rules differ by 1.2e-5 while the errors measured are ~1e-2.)
GH_RTOL = 1e-4


def _head_tokens(n: int, d: int, seed: int) -> tuple[np.ndarray, np.random.Generator]:
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, d))
    Z /= np.linalg.norm(Z, axis=1, keepdims=True)
    return Z, rng


def _check_head_args(n, d, beta):
    n = _v.integer("n", n, 1, 4096)
    d = _v.integer("d", d, 2, 4)
    beta = _v.real("beta", beta, 0.0, 20.0, lo_open=True)
    return n, d, beta


def _gh_moments(Z: np.ndarray, beta: float, m: int) -> tuple[np.ndarray, np.ndarray]:
    """E U and E U Uᵀ over x ~ N(0, I_d), U(x) = Σ_j softmax_j(β⟨x, z_j⟩/√d) z_j (tensor GH rule)."""
    n, d = Z.shape
    x1, w1 = np.polynomial.hermite_e.hermegauss(m)
    w1 = w1 / w1.sum()
    X = np.stack(np.meshgrid(*([x1] * d), indexing="ij"), axis=-1).reshape(-1, d)
    W = np.prod(np.stack(np.meshgrid(*([w1] * d), indexing="ij"), axis=-1).reshape(-1, d), axis=1)
    keep = W > 1e-22
    X, W = X[keep], W[keep]
    mean = np.zeros(d)
    second = np.zeros((d, d))
    step = max(1, 400_000 // n)
    for s in range(0, X.shape[0], step):
        S = (beta / math.sqrt(d)) * (X[s : s + step] @ Z.T)
        S -= S.max(axis=1, keepdims=True)
        E = np.exp(S)
        U = (E @ Z) / E.sum(axis=1, keepdims=True)
        w = W[s : s + step]
        mean += w @ U
        second += (U * w[:, None]).T @ U
    return mean, second


def head_mean_velocity(Z, beta) -> tuple[np.ndarray, np.ndarray, float]:
    r"""The head-distribution average of the attention output, exactly (quadrature).

    Heads: :math:`A` with iid :math:`N(0, 1/d)` entries, :math:`V = I`. For a unit token
    :math:`z_i`, :math:`g = A^\top z_i \sim N(0, I_d/d)` whatever :math:`i` is, and the head's
    output at :math:`z_i` is :math:`U(g) = \sum_j \mathrm{softmax}_j(\beta\langle g, z_j\rangle)\,z_j`.
    So the averaged velocity is :math:`\bar b_i = P_{z_i} F` with one vector
    :math:`F = \mathbb E_g U(g)` for all tokens, and the covariance of the head velocity at
    :math:`z_i` is :math:`P_{z_i}\Sigma_U P_{z_i}`, :math:`\Sigma_U = \mathrm{Cov}_g U(g)`.
    Both are :math:`d`-dimensional Gaussian integrals, computed with a tensor Gauss–Hermite rule
    (``_GH_NODES`` nodes per axis) and checked against a coarser rule.

    Parameters
    ----------
    Z : array_like, shape (n, d)
        Unit tokens.
    beta : float
        Inverse temperature.

    Returns
    -------
    (F, Sigma_U, err) : (ndarray (d,), ndarray (d, d), float)
        ``err`` is the largest difference between the two rules (``<= GH_RTOL * sqrt(tr Sigma_U)``, else ValueError).
    """
    Z = _v.finite_array("Z", Z, ndim=2)
    n, d = Z.shape
    _check_head_args(n, d, beta)
    beta = float(beta)
    nrm = np.linalg.norm(Z, axis=1)
    if np.any(np.abs(nrm - 1.0) > 1e-9):
        raise ValueError("Z must have unit rows (tokens on the sphere)")
    fine, coarse = _GH_NODES[d]
    F, M2 = _gh_moments(Z, beta, fine)
    F2, M22 = _gh_moments(Z, beta, coarse)
    err = float(max(np.max(np.abs(F - F2)), np.max(np.abs(M2 - M22))))
    Sig = M2 - np.outer(F, F)
    tol = GH_RTOL * math.sqrt(max(float(np.trace(Sig)), 0.0))
    if not err <= tol:
        raise ValueError(
            f"beta = {beta:g} is too large for the quadrature of the head average in "
            f"d = {d} (rules differ by {err:.1e} > {tol:.1e}); use a smaller beta"
        )
    return F, Sig, err


@functools.lru_cache(maxsize=32)
def _head_reference(n: int, d: int, beta: float, seed: int):
    """:func:`head_mean_velocity` of the tokens drawn from ``seed`` (cached: the costly part of the panel)."""
    F, Sig, err = head_mean_velocity(_head_tokens(n, d, seed)[0], beta)
    F.setflags(write=False)
    Sig.setflags(write=False)
    return F, Sig, err


def _expected_norm(lam: np.ndarray) -> np.ndarray:
    r""":math:`\mathbb E\lVert X\rVert` for :math:`X \sim N(0, \mathrm{diag}(\lambda))`, per row of ``lam``.

    .. math::

        \mathbb E\lVert X\rVert = \frac{1}{2\sqrt\pi}\int_0^\infty
        \Big(1 - \prod_k (1 + 2t\lambda_k)^{-1/2}\Big)\,t^{-3/2}\,dt

    (from :math:`\sqrt a = \frac{1}{2\sqrt\pi}\int_0^\infty (1 - e^{-ta})\,t^{-3/2}\,dt`). With
    :math:`t = e^v/\lambda_{\max}` the integrand is analytic and decays like :math:`e^{-|v|/2}`,
    so the trapezoid rule on :math:`v\in[-90, 90]`, step 1/32, is accurate to rounding.
    """
    lam = np.clip(np.atleast_2d(np.asarray(lam, dtype=float)), 0.0, None)
    top = lam.max(axis=1)
    scale = np.where(top > 0, top, 1.0)
    v = np.arange(-90.0, 90.0 + 1e-9, 1.0 / 32.0)
    t = np.exp(v)[None, :, None]
    # 1 - prod (1 + 2 t λ)^(-1/2) without cancellation
    one_minus = -np.expm1(-0.5 * np.log1p(2.0 * t * (lam / scale[:, None])[:, None, :]).sum(axis=2))
    val = (one_minus * np.exp(-0.5 * v)[None, :]).sum(axis=1) / 32.0
    return np.where(top > 0, np.sqrt(scale) * val / (2.0 * math.sqrt(math.pi)), 0.0)


def head_error_theory(n=32, d=3, beta=1.0, seed=0) -> dict:
    r"""Exact companions of :func:`head_average_error` for the same tokens (same ``seed``).

    With :math:`\Sigma_i = P_{z_i}\Sigma_U P_{z_i}` (see :func:`head_mean_velocity`), the error
    :math:`e_i(H) = \lVert H^{-1}\sum_h b_i^{(h)} - \bar b_i\rVert` satisfies, for every :math:`H`,

    .. math::

        \mathbb E\,e_i(H) \le \sqrt{\operatorname{tr}\Sigma_i / H}
        \quad\text{and}\quad
        \sqrt H\,\mathbb E\,e_i(H) \to \mathbb E\lVert N(0,\Sigma_i)\rVert \quad (H\to\infty).

    Parameters
    ----------
    n, d, beta, seed
        Tokens, dimension, inverse temperature and seed, as :func:`head_average_error`.

    Returns
    -------
    dict
        ``"bound"``: :math:`n^{-1}\sum_i\sqrt{\operatorname{tr}\Sigma_i}` (times :math:`H^{-1/2}`
        bounds the mean error); ``"asymptote"``: :math:`n^{-1}\sum_i\mathbb E\lVert N(0,\Sigma_i)\rVert`
        (times :math:`H^{-1/2}` is the large-:math:`H` law); ``"F"``; ``"quad_error"``.
    """
    n, d, beta = _check_head_args(n, d, beta)
    seed = _v.integer("seed", seed, 0)
    Z, _ = _head_tokens(n, d, seed)
    F, Sig, err = _head_reference(n, d, beta, seed)
    P = np.eye(d)[None] - Z[:, :, None] * Z[:, None, :]
    S = P @ Sig @ P  # (n, d, d): Σ_i
    tr = np.clip(np.trace(S, axis1=1, axis2=2), 0.0, None)
    lam = np.linalg.eigvalsh(0.5 * (S + np.swapaxes(S, 1, 2)))
    return {
        "bound": float(np.sqrt(tr).mean()),
        "asymptote": float(_expected_norm(lam).mean()),
        "F": F,
        "quad_error": err,
    }


def _head_sum_numpy(Z: np.ndarray, A: np.ndarray, beta: float, acc: np.ndarray) -> None:
    """acc[i] += Σ_h Σ_j softmax_j(β z_iᵀ A_h z_j) z_j (NumPy reference of :func:`_head_sum`)."""
    n, d = Z.shape
    G = np.matmul(Z, A).reshape(-1, d)  # rows (A_hᵀ z_i)ᵀ, head-major
    S = G @ (beta * Z.T)  # (h*n, n): β z_iᵀ A_h z_j
    S -= S.max(axis=1, keepdims=True)
    np.exp(S, out=S)
    acc += ((S @ Z) / S.sum(axis=1, keepdims=True)).reshape(A.shape[0], n, d).sum(axis=0)


@njit(cache=True, nogil=True, error_model="numpy", fastmath={"contract", "arcp", "nsz"})
def _head_sum(Z, A, beta, acc):
    """Numba kernel: the same sum as :func:`_head_sum_numpy`, without the (h*n, n) score matrix.

    Per head and token: g = β A_hᵀ z_i, scores g·z_j shifted by their maximum, the engine's
    vectorised exp (:func:`sim.attention.exp.exp1`), then the weighted mean of the z_j.
    """
    n, d = Z.shape
    ZT = np.ascontiguousarray(Z.T)
    g = np.empty(d)
    s = np.empty(n)
    for h in range(A.shape[0]):
        for i in range(n):
            for l in range(d):
                a = 0.0
                for k in range(d):
                    a += Z[i, k] * A[h, k, l]
                g[l] = beta * a
            for j in range(n):
                s[j] = 0.0
            for l in range(d):
                gl = g[l]
                zl = ZT[l]
                for j in range(n):
                    s[j] += gl * zl[j]
            m = s[0]
            for j in range(1, n):
                m = max(m, s[j])
            tot = 0.0
            for j in range(n):
                e = _exp1(s[j] - m)
                s[j] = e
                tot += e
            for l in range(d):
                zl = ZT[l]
                u = 0.0
                for j in range(n):
                    u += s[j] * zl[j]
                acc[i, l] += u / tot


def head_average_error(
    H, trials, seed, n=32, d=3, beta=1.0, *, max_work: float = MAX_HEAD_WORK, _reference: bool = False
) -> tuple[float, float]:
    r"""Error of the velocity averaged over ``H`` random heads, against the average over all heads.

    ``n`` tokens :math:`z_i` uniform on :math:`S^{d-1}` (drawn once from ``seed``); each trial
    draws ``H`` heads :math:`A_h` with iid :math:`N(0, 1)/\sqrt d` entries, :math:`V = I`, and
    measures

    .. math::

        e(H) = \frac1n\sum_i \Big\lVert \frac1H\sum_{h=1}^H b_i^{(h)} - \bar b_i\Big\rVert ,\qquad
        b_i^{(h)} = P_{z_i}\sum_j \frac{e^{\beta\langle z_i, A_h z_j\rangle}}
        {\sum_k e^{\beta\langle z_i, A_h z_k\rangle}}\, z_j ,

    where :math:`\bar b_i = \mathbb E_A b_i^{(A)} = P_{z_i}F` is computed exactly by quadrature
    (:func:`head_mean_velocity`; not with a finite number of heads).

    Parameters
    ----------
    H : int
        Heads per trial, ``>= 1``.
    trials : int
        Independent draws of the ``H`` heads, ``>= 2``.
    seed : int
        Seed of ``np.random.default_rng`` (tokens first, then heads).
    n, d, beta
        Tokens (``1..4096``), dimension (``2..4``: the exact reference is a ``d``-dimensional
        quadrature), inverse temperature (``(0, 20]``).
    max_work : float
        Bound on ``trials * H * n * n * d``.

    Returns
    -------
    (mean, stderr) : tuple of float
        Mean of :math:`e(H)` over the trials and its standard error.

    Notes
    -----
    The sum over heads runs in a Numba kernel (:func:`_head_sum`); ``_reference=True`` uses the
    plain NumPy version :func:`_head_sum_numpy` instead (same random numbers, same result to
    rounding; ``bench/measures.py`` compares their speed).
    """
    H = _v.integer("H", H, 1)
    trials = _v.integer("trials", trials, 2)
    seed = _v.integer("seed", seed, 0)
    n, d, beta = _check_head_args(n, d, beta)
    max_work = _v.real("max_work", max_work, 1.0)
    work = float(trials) * H * n * n * d
    if work > max_work:
        raise ValueError(f"trials*H*n*n*d = {work:.3g} > max_work={max_work:.3g}; use fewer heads, trials or tokens")
    Z, rng = _head_tokens(n, d, seed)
    F, _, _ = _head_reference(n, d, beta, seed)
    P = np.eye(d)[None] - Z[:, :, None] * Z[:, None, :]  # (n, d, d) tangent projections
    per_block = max(1, 2_000_000 // (n * n))  # heads per block (memory bound)
    head_sum = _head_sum_numpy if _reference else _head_sum
    errs = np.empty(trials)
    for tr in range(trials):
        acc = np.zeros((n, d))
        for s in range(0, H, per_block):
            A = rng.standard_normal((min(per_block, H - s), d, d)) / math.sqrt(d)
            head_sum(Z, A, beta, acc)
        diff = np.einsum("ikl,il->ik", P, acc / H - F[None, :])
        errs[tr] = np.linalg.norm(diff, axis=1).mean()
    return float(errs.mean()), float(errs.std(ddof=1) / math.sqrt(trials))
