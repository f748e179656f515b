"""Ordered products of random layer Jacobians: how their norm grows with depth."""

from __future__ import annotations

import math

import numpy as np

from sim._validate import integer, real
from sim.nonnormal.checks import MAX_DEPTH, MAX_DEPTH_WORK, MAX_DIM


# ---------------------------------------------------------------------------
# ordered products of layer Jacobians
# ---------------------------------------------------------------------------


def _random_jacobians(L: int, d: int, eta: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((L, d, d))
    return np.eye(d)[None] + (eta / math.sqrt(d)) * G


def jacobian_products(L, d=4, eta=0.3, seed=0, *, max_work=MAX_DEPTH_WORK) -> dict:
    r"""Ordered products of random near-identity Jacobians versus norm products.

    Draws :math:`J_\ell = I + (\eta/\sqrt d)\,G_\ell`, :math:`G_\ell` with
    independent standard normal entries (non-normal almost surely), for
    :math:`\ell = 0,\dots,L-1`, and for each depth :math:`k = 1..L` returns the
    natural logarithms of

    - ``ordered``:  :math:`\|J_{k-1}\cdots J_1 J_0\|_2` (the forward order),
    - ``reversed``: :math:`\|J_0 J_1\cdots J_{k-1}\|_2` (same factors, reversed),
    - ``norm_product``: :math:`\prod_{\ell<k}\|J_\ell\|_2`, the submultiplicative
      bound :math:`\|J_{k-1}\cdots J_0\|_2 \le \prod_\ell\|J_\ell\|_2`,
    - ``radius_product``: :math:`\prod_{\ell<k}\rho(J_\ell)`, the spectral radii
      alone (an eigenvalue-only guess; neither a bound nor an estimate).

    Products are renormalised at every step, so depth does not overflow.

    Parameters
    ----------
    L : int
        Depth, ``1 <= L <= 5000``.
    d : int
        Dimension, ``1 <= d <= 64``, with ``L * d**3 <= max_work`` (keyword-only, default
        ``MAX_DEPTH_WORK`` = 5e6).
    eta : float
        Perturbation size, ``0 <= eta <= 10``.
    seed : int
        Seed of ``np.random.default_rng``.

    Returns
    -------
    dict
        Keys ``depth`` (``1..L``), ``ordered``, ``reversed``, ``norm_product``,
        ``radius_product`` (arrays of length ``L``, natural logs).

    Notes
    -----
    The layer index here is a discrete depth :math:`\ell`, unrelated to the
    evolution time ``s`` of the 2×2 operator. Random Gaussian layers are an
    illustration of ordered products, not a model of trained networks.
    """
    L = integer("L", L, 1, MAX_DEPTH)
    d = integer("d", d, 1, MAX_DIM)
    eta = real("eta", eta, 0.0, 10.0)
    seed = integer("seed", seed, 0, 2**63 - 1)
    max_work = real("max_work", max_work, 1.0)
    if L * d**3 > max_work:
        raise ValueError(
            f"L * d**3 = {L * d**3} exceeds max_work = {max_work:.3g} (pass a larger max_work= to allow more)"
        )
    J = _random_jacobians(L, d, eta, seed)
    norms = np.linalg.norm(J, ord=2, axis=(1, 2))
    radii = np.max(np.abs(np.linalg.eigvals(J)), axis=1)
    with np.errstate(divide="ignore"):
        log_norm_product = np.cumsum(np.log(norms))
        log_radius_product = np.cumsum(np.log(radii))
    ordered = np.empty(L)
    backward = np.empty(L)
    P = np.eye(d)
    R = np.eye(d)
    log_p = 0.0
    log_r = 0.0
    for k in range(L):
        P = J[k] @ P
        R = R @ J[k]
        np_ = np.linalg.norm(P, 2)
        nr = np.linalg.norm(R, 2)
        # norms of the two products are equal in law but differ per sample
        log_p += math.log(np_) if np_ > 0 else -math.inf
        log_r += math.log(nr) if nr > 0 else -math.inf
        ordered[k] = log_p
        backward[k] = log_r
        if np_ > 0:
            P = P / np_
        if nr > 0:
            R = R / nr
    return {
        "depth": np.arange(1, L + 1),
        "ordered": ordered,
        "reversed": backward,
        "norm_product": log_norm_product,
        "radius_product": log_radius_product,
    }
