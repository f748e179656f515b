r"""Hemisphere clustering: initial conditions and diagnostics (``docs/constructions.md``,
"Hemisphere clustering").

Setting: :math:`V = I`, any :math:`A`, any finite :math:`\beta > 0`, softmax (SA)
weights :math:`a_{ij} > 0`. If a unit vector :math:`w` has :math:`\langle w, z_i(0)\rangle > 0`
for every token, then with :math:`r_i = \langle w, z_i\rangle`

.. math::

    \dot r_i = \sum_j a_{ij}\,\bigl(r_j - \langle z_i, z_j\rangle\, r_i\bigr),

and at an index attaining :math:`\min_i r_i` every term is :math:`\ge 0`: the minimum never
decreases and the tokens never leave the hemisphere. The same holds for the discrete layer
map with any step :math:`\Delta > 0`: :math:`z_i + \Delta u_i` with
:math:`u_i = \sum_j a_{ij} z_j` has :math:`\langle w, z_i + \Delta u_i\rangle \ge (1+\Delta) r_{\min}`
while :math:`\lVert z_i + \Delta u_i\rVert \le 1 + \Delta`, so after normalising
:math:`r_i^+ \ge r_{\min}` (see :func:`min_projection`).

This module gives the initial conditions (uniform on a cap, uniform on the sphere), the
matrices A offered by the page, and diagnostics computed from trajectories of
:func:`sim.attention.simulate`: the smallest projection :math:`\min_i r_i`, the diameter
:math:`\max_{i,j}\angle(z_i, z_j)`, the number of clusters, and the phase-diagram protocol of
Geshkovski, Letrouit, Polyanskiy and Rigollet (code of "A mathematical perspective on
Transformers", 2023, ``phase-diagrams.py``) computed with :func:`sim.attention.simulate_batch`.

What this does not claim: the theorem needs V = I (or V with suitable structure) and all
tokens in one open hemisphere; spread-out starts may stay in several clusters for a very long
depth (metastability), and a finite-depth picture cannot tell "stuck" from "slow". Cluster
counts depend on the chosen threshold.
"""

from __future__ import annotations

import math
import time
from typing import NamedTuple
from collections.abc import Callable

import numpy as np
from scipy import special
from numba import njit, prange

from sim import _validate as _v
from sim import attention as _att

__all__ = [
    "sphere_uniform",
    "cap_uniform",
    "random_matrix",
    "MATRIX_KINDS",
    "min_projection",
    "diameter",
    "cluster_count",
    "cluster_labels",
    "cluster_labels_reference",
    "pair_stats",
    "pair_stats_reference",
    "hemisphere_direction",
    "projection_basis",
    "PhaseDiagram",
    "phase_diagram",
]

MAX_N = 100_000
MAX_D = 64
MATRIX_KINDS = ("identity", "gaussian", "symmetric", "spd")


# --------------------------------------------------------------------------- initial conditions
def _rng(seed):
    seed = _v.integer("seed", seed, 0, 2**63 - 1)
    return np.random.default_rng(seed)


def _unit(name, w, d):
    w = _v.finite_array(name, w, shape=(d,))
    nrm = np.linalg.norm(w)
    if nrm < 1e-12:
        raise ValueError(f"{name} must be a nonzero vector")
    return w / nrm


def sphere_uniform(n, d, seed=0):
    r"""``n`` independent points uniform on :math:`S^{d-1}` (rows of an (n, d) array).

    Parameters
    ----------
    n : int
        Number of points.
    d : int
        Dimension of the ambient space (the sphere is :math:`S^{d-1}`).
    seed : int
        Seed of NumPy's default generator.

    Returns
    -------
    ndarray, shape (n, d)
        :math:`z_i = g_i/\lVert g_i\rVert` with :math:`g_i \sim N(0, I_d)`.
    """
    n = _v.integer("n", n, 1, MAX_N)
    d = _v.integer("d", d, 2, MAX_D)
    g = _rng(seed).standard_normal((n, d))
    return g / np.linalg.norm(g, axis=1, keepdims=True)


def _cap_angles(rng, n, d, alpha):
    r"""Polar angles theta in [0, alpha] with density proportional to sin(theta)^(d-2).

    Exact inverse CDF: for a uniform point of :math:`S^{d-1}`, :math:`\sin^2(\theta/2)` has the
    law Beta(a, a), a = (d-1)/2, so :math:`\theta = 2\arcsin\sqrt{I^{-1}_{a,a}(u\,I_{a,a}(x_\alpha))}`
    with :math:`x_\alpha = \sin^2(\alpha/2)` (``scipy.special.betaincinv``; d = 3 is
    :math:`x = u x_\alpha`). When :math:`I_{a,a}(x_\alpha)` is below 1e-280 (tiny caps in high
    dimension, where it would underflow) the cap is narrower than 1e-3 rad and the CDF is
    :math:`\propto \theta^{m+1}(1 - \frac{m(m+1)}{6(m+3)}\theta^2 + O(\theta^4))`, m = d - 2,
    inverted in log form by fixed-point steps (relative error below 1e-13).
    """
    u = rng.random(n)
    if d == 2:
        return alpha * u  # signed side chosen by the caller's direction
    a = 0.5 * (d - 1)
    x_alpha = math.sin(0.5 * alpha) ** 2
    c = special.betainc(a, a, x_alpha) if alpha < math.pi else 1.0
    if c > 1e-280:
        x = special.betaincinv(a, a, u * c)
        return 2.0 * np.arcsin(np.sqrt(x))
    m = d - 2
    k = m * (m + 1) / (6.0 * (m + 3))

    def g(t):
        return (m + 1) * np.log(t) + np.log1p(-k * t * t)

    with np.errstate(divide="ignore"):
        target = np.log(u) + g(alpha)
        theta = alpha * u ** (1.0 / (m + 1))
        for _ in range(4):
            theta = np.where(u > 0, theta * np.exp((target - g(np.maximum(theta, 1e-300))) / (m + 1)), 0.0)
    return np.minimum(theta, alpha)


def cap_uniform(n, d, half_angle, center=None, seed=0):
    r"""``n`` points uniform on the cap :math:`\{z \in S^{d-1} : \angle(z, w) \le \alpha\}`.

    Parameters
    ----------
    n, d : int
        Number of points and ambient dimension (d >= 2).
    half_angle : float
        Cap half-angle :math:`\alpha \in (0, \pi]` in radians; :math:`\alpha < \pi/2` puts
        every point in the open hemisphere around ``center``; :math:`\alpha = \pi` is the
        whole sphere.
    center : array_like (d,), optional
        Cap centre :math:`w` (normalised); the last basis vector by default.
    seed : int

    Notes
    -----
    The polar angle has density :math:`\propto \sin^{d-2}\theta` on :math:`[0, \alpha]`; the
    direction around :math:`w` is uniform on :math:`S^{d-2}`.
    """
    n = _v.integer("n", n, 1, MAX_N)
    d = _v.integer("d", d, 2, MAX_D)
    alpha = _v.real("half_angle", half_angle, 0.0, math.pi, lo_open=True)
    w = np.eye(d)[-1] if center is None else _unit("center", center, d)
    rng = _rng(seed)
    theta = _cap_angles(rng, n, d, alpha)
    # directions orthogonal to w
    g = rng.standard_normal((n, d))
    g -= np.outer(g @ w, w)
    g /= np.linalg.norm(g, axis=1, keepdims=True)
    Z = np.cos(theta)[:, None] * w[None, :] + np.sin(theta)[:, None] * g
    return Z / np.linalg.norm(Z, axis=1, keepdims=True)


def random_matrix(d, kind="gaussian", seed=0):
    r"""A query-key matrix :math:`A` of one of the kinds the page offers.

    ``identity``: :math:`I`. ``gaussian``: :math:`G/\lVert G\rVert_2` with iid normal entries.
    ``symmetric``: :math:`S/\lVert S\rVert_2`, :math:`S = (G + G^\top)/2` (indefinite in general).
    ``spd``: :math:`M/\lVert M\rVert_2`, :math:`M = I + 0.9\,S/\lVert S\rVert_2` (symmetric positive definite).
    All have spectral norm 1, so :math:`\beta` keeps its scale across kinds.

    Parameters
    ----------
    d : int
        Dimension.
    kind : str
        ``"identity"``, ``"gaussian"``, ``"symmetric"`` or ``"spd"``.
    seed : int
        Seed of NumPy's default generator (ignored for ``"identity"``).

    Returns
    -------
    ndarray, shape (d, d)
        :math:`A` with :math:`\lVert A\rVert_2 = 1`.
    """
    d = _v.integer("d", d, 1, MAX_D)
    kind = _v.choice("kind", kind, MATRIX_KINDS)
    if kind == "identity":
        return np.eye(d)
    G = _rng(seed).standard_normal((d, d))
    if kind == "gaussian":
        return G / np.linalg.norm(G, 2)
    S = (G + G.T) / 2
    S /= np.linalg.norm(S, 2)
    if kind == "symmetric":
        return S
    M = np.eye(d) + 0.9 * S  # eigenvalues in [0.1, 1.9]; the top one is 1.9 only if S's is +1
    return M / np.linalg.norm(M, 2)


def hemisphere_direction(Z):
    r"""A unit :math:`w` maximising :math:`\min_i \langle w, z_i\rangle` over the box, and that minimum.

    Solves the linear programme :math:`\max t` s.t. :math:`\langle w, z_i\rangle \ge t`,
    :math:`-1 \le w_k \le 1`, and returns ``(w/|w|, min_i <w/|w|, z_i>)``. A positive second
    value means all tokens lie in the open hemisphere around ``w``; otherwise no open
    hemisphere contains them all (and ``w`` is only the best try).

    Parameters
    ----------
    Z : array_like, shape (n, d)
        Unit tokens of one configuration.

    Returns
    -------
    (w, margin) : tuple of (ndarray, shape (d,)) and float
        The unit direction and :math:`\min_i\langle w, z_i\rangle` (positive: an open hemisphere holds them all).
    """
    from scipy.optimize import linprog

    Z = _v.finite_array("Z", Z, ndim=2)
    n, d = Z.shape
    c = np.zeros(d + 1)
    c[-1] = -1.0
    A_ub = np.hstack([-Z, np.ones((n, 1))])
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(n), bounds=[(-1, 1)] * d + [(-2, 2)], method="highs")
    w = res.x[:d] if res.status == 0 else np.zeros(d)
    nrm = np.linalg.norm(w)
    if nrm < 1e-12:
        w = np.eye(d)[-1]
    else:
        w = w / nrm
    return w, float(np.min(Z @ w))


def projection_basis(d, w=None):
    r"""A 3 x d matrix with orthonormal rows whose last row is ``w`` (default e_d).

    Used to show d > 3 configurations: ``Z @ P.T`` are coordinates in a 3-D subspace that
    contains w. This is a projection: points land inside the unit ball, not on a sphere.

    Parameters
    ----------
    d : int
        Dimension, :math:`d \ge 3`.
    w : array_like, shape (d,), optional
        Unit direction kept as the third displayed axis (default :math:`e_d`).

    Returns
    -------
    ndarray, shape (3, d)
        :math:`P` with :math:`PP^\top = I_3` and last row ``w``.
    """
    d = _v.integer("d", d, 3, MAX_D)
    w = np.eye(d)[-1] if w is None else _unit("w", w, d)
    rows = [w]
    for e in np.eye(d):
        v = e - sum((e @ r) * r for r in rows)
        if np.linalg.norm(v) > 1e-8:
            rows.append(v / np.linalg.norm(v))
        if len(rows) == 3:
            break
    return np.array([rows[1], rows[2], rows[0]])


# --------------------------------------------------------------------------- diagnostics
def _traj(name, Z):
    Z = _v.finite_array(name, Z)
    if Z.ndim == 2:
        Z = Z[None]
    if Z.ndim != 3 or Z.shape[1] < 1 or Z.shape[2] < 1:
        raise ValueError(f"{name} must have shape (n, d) or (records, n, d), got {Z.shape}")
    return np.ascontiguousarray(Z)


def min_projection(Z, w):
    r""":math:`\min_i \langle w, z_i\rangle` for each record of ``Z`` ((n, d) or (T, n, d)).

    For V = I and SA weights this is non-decreasing along the discrete layer map for every
    step :math:`\Delta > 0` once it is positive: with :math:`m = \min_j r_j > 0`,
    :math:`\langle w, z_i + \Delta u_i\rangle = r_i + \Delta\sum_j a_{ij} r_j \ge (1+\Delta) m`
    and :math:`\lVert z_i + \Delta u_i\rVert \le 1 + \Delta` (the weights sum to 1), hence
    :math:`r_i^+ \ge m`.

    Parameters
    ----------
    Z : array_like, shape (n, d) or (T, n, d)
        Unit tokens :math:`z_i` (one configuration, or T recorded layers).
    w : array_like, shape (d,)
        Unit direction :math:`w`.

    Returns
    -------
    float or ndarray, shape (T,)
        :math:`\min_i \langle w, z_i\rangle` per configuration.
    """
    Z = _traj("Z", Z)
    w = _unit("w", w, Z.shape[2])
    return (Z @ w).min(axis=1)


@njit(cache=True, nogil=True)
def _find(parent, i):
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@njit(cache=True, nogil=True, parallel=True)
def _pair_stats_kernel(Z, tol2, maxd2, comps, close):
    """Per configuration k: max squared chord, connected components and count of pairs
    i<j with |z_i - z_j|^2 < tol2 (union-find on the closeness graph)."""
    K, n, d = Z.shape
    for k in prange(K):
        parent = np.arange(n)
        count = n
        mx = 0.0
        cl = 0
        for i in range(n):
            for j in range(i + 1, n):
                s = 0.0
                for l in range(d):
                    t = Z[k, i, l] - Z[k, j, l]
                    s += t * t
                if s > mx:
                    mx = s
                if s < tol2:
                    cl += 1
                    ri = _find(parent, i)
                    rj = _find(parent, j)
                    if ri != rj:
                        parent[ri] = rj
                        count -= 1
        maxd2[k] = mx
        comps[k] = count
        close[k] = cl


@njit(cache=True, nogil=True, parallel=True)
def _components_kernel(Z, tol2, comps):
    """Per configuration k: the connected components of the graph |z_i - z_j|^2 < tol2, the graph
    of :func:`_pair_stats_kernel` found without testing every pair: tokens sorted by their first
    coordinate, a pair is tested only while (x_j - x_i)^2 < tol2 (the squared chord is at least
    that, computed the same way, so every skipped pair is far apart: the same graph); done as soon
    as one component is left."""
    K, n, d = Z.shape
    for k in prange(K):
        order = np.argsort(Z[k, :, 0], kind="mergesort")
        parent = np.arange(n)
        count = n
        for a in range(n):
            i = order[a]
            for b in range(a + 1, n):
                j = order[b]
                t = Z[k, i, 0] - Z[k, j, 0]
                if t * t >= tol2:
                    break
                s = 0.0
                for l in range(d):
                    t = Z[k, i, l] - Z[k, j, l]
                    s += t * t
                if s < tol2:
                    ri = _find(parent, i)
                    rj = _find(parent, j)
                    if ri != rj:
                        parent[ri] = rj
                        count -= 1
            if count == 1:  # one component: no pair can change that
                break
        comps[k] = count


class PairStats(NamedTuple):
    diameter: np.ndarray  # max_{i,j} angle(z_i, z_j), radians
    clusters: np.ndarray  # connected components of the graph <z_i, z_j> > threshold
    close_fraction: np.ndarray  # fraction of pairs i<j with <z_i, z_j> > threshold
    one_cluster: np.ndarray  # all pairs have <z_i, z_j> > threshold


def _threshold(threshold):
    return _v.real("threshold", threshold, -1.0, 1.0, lo_open=True, hi_open=True)


def _finish(maxd2, comps, close, n, tol2):
    diam = 2.0 * np.arcsin(np.minimum(1.0, np.sqrt(maxd2) / 2.0))
    pairs = n * (n - 1) / 2
    frac = close / pairs if pairs > 0 else np.ones_like(maxd2)
    return PairStats(diam, comps, frac, maxd2 < tol2)


def pair_stats(Z, threshold=0.999):
    r"""Diameter, cluster count, close-pair fraction and "one cluster" flag per configuration.

    ``Z`` has shape (n, d), (T, n, d) or (B, T, n, d); results have the leading shape.
    Two tokens are *close* when :math:`\langle z_i, z_j\rangle >` ``threshold``, computed as
    :math:`\lVert z_i - z_j\rVert^2 < 2(1 - \text{threshold})` (no cancellation); clusters are
    the connected components of the closeness graph; "one cluster" means every pair is close.
    The diameter :math:`\max_{i,j}\angle(z_i,z_j) = 2\arcsin(\max\lVert z_i - z_j\rVert/2)` is
    accurate down to about 1e-16 rad.

    Parameters
    ----------
    Z : array_like, shape (n, d), (T, n, d) or (B, T, n, d)
        Unit tokens.
    threshold : float
        Closeness threshold on :math:`\langle z_i, z_j\rangle`.

    Returns
    -------
    PairStats
        Fields ``diameter`` (rad), ``clusters``, ``close_fraction`` (of the :math:`n(n-1)/2` pairs)
        and ``one_cluster``, each of the leading shape of ``Z``.
    """
    thr = _threshold(threshold)
    Z = _v.finite_array("Z", Z)
    if Z.ndim < 2 or Z.ndim > 4 or min(Z.shape) < 1:
        raise ValueError(f"Z must have shape (n, d), (T, n, d) or (B, T, n, d), got {Z.shape}")
    lead = Z.shape[:-2]
    n, d = Z.shape[-2:]
    if float(np.prod(lead)) * n * n * d > 2e9:
        raise ValueError(f"Z too large for pair statistics: {Z.shape}")
    flat = np.ascontiguousarray(Z.reshape((-1, n, d)))
    K = flat.shape[0]
    maxd2 = np.empty(K)
    comps = np.empty(K, np.int64)
    close = np.empty(K, np.int64)
    tol2 = 2.0 * (1.0 - thr)
    _pair_stats_kernel(flat, tol2, maxd2, comps, close)
    st = _finish(maxd2, comps, close, n, tol2)
    return PairStats(*(a.reshape(lead) for a in st))


def pair_stats_reference(Z, threshold=0.999):
    r"""Plain NumPy/SciPy version of :func:`pair_stats` (validator; small inputs only).

    Parameters
    ----------
    Z, threshold
        As :func:`pair_stats`.

    Returns
    -------
    PairStats
        As :func:`pair_stats`.
    """
    from scipy.sparse.csgraph import connected_components

    thr = _threshold(threshold)
    Z = _v.finite_array("Z", Z)
    lead = Z.shape[:-2]
    n, d = Z.shape[-2:]
    flat = Z.reshape((-1, n, d))
    tol2 = 2.0 * (1.0 - thr)
    maxd2, comps, close = [], [], []
    iu = np.triu_indices(n, 1)
    for X in flat:
        D2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
        maxd2.append(D2[iu].max() if n > 1 else 0.0)
        close.append(int((D2[iu] < tol2).sum()))
        adj = (D2 < tol2).astype(np.int8)
        comps.append(connected_components(adj, directed=False)[0])
    st = _finish(np.array(maxd2), np.array(comps), np.array(close), n, tol2)
    return PairStats(*(np.asarray(a).reshape(lead) for a in st))


@njit(cache=True, nogil=True)
def _labels_kernel(Z, tol2, parent):
    """Union-find roots of the closeness graph |z_i - z_j|^2 < tol2 of one configuration."""
    n, d = Z.shape
    for i in range(n):
        parent[i] = i
    for i in range(n):
        for j in range(i + 1, n):
            s = 0.0
            for l in range(d):
                t = Z[i, l] - Z[j, l]
                s += t * t
            if s < tol2:
                ri = _find(parent, i)
                rj = _find(parent, j)
                if ri != rj:
                    parent[ri] = rj
    for i in range(n):
        parent[i] = _find(parent, i)


def _rank_labels(lab):
    """Relabel components 0, 1, ... by decreasing size (ties: first appearance of the label)."""
    _, first, inv, counts = np.unique(lab, return_index=True, return_inverse=True, return_counts=True)
    order = np.lexsort((first, -counts))
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return rank[inv]


def cluster_labels(Z, threshold=0.999):
    r"""Cluster label of each token of one configuration ``Z`` (n, d), largest cluster first.

    Clusters are the connected components of the graph :math:`\langle z_i, z_j\rangle >`
    ``threshold``, i.e. :math:`\lVert z_i - z_j\rVert^2 < 2(1 - \text{threshold})` (as in
    :func:`pair_stats`); labels are 0, 1, ... by decreasing size, equal sizes in the order of
    their first token. :func:`cluster_labels_reference` is the SciPy version.

    Parameters
    ----------
    Z : array_like, shape (n, d)
        Unit tokens of one configuration.
    threshold : float
        Closeness threshold on :math:`\langle z_i, z_j\rangle`.

    Returns
    -------
    ndarray of int, shape (n,)
        Label of each token, 0 for (a token of) the largest cluster.
    """
    thr = _threshold(threshold)
    Z = np.ascontiguousarray(_v.finite_array("Z", Z, ndim=2), dtype=np.float64)
    n = Z.shape[0]
    if n > 20_000:
        raise ValueError(f"Z has too many rows for cluster_labels ({n} > 20000)")
    parent = np.empty(n, np.int64)
    _labels_kernel(Z, 2.0 * (1.0 - thr), parent)
    return _rank_labels(parent)


def cluster_labels_reference(Z, threshold=0.999):
    r"""SciPy version of :func:`cluster_labels` (validator).

    Parameters
    ----------
    Z, threshold
        As :func:`cluster_labels`.

    Returns
    -------
    ndarray of int, shape (n,)
        The same labels as :func:`cluster_labels`.
    """
    from scipy.sparse.csgraph import connected_components

    thr = _threshold(threshold)
    Z = _v.finite_array("Z", Z, ndim=2)
    D2 = ((Z[:, None, :] - Z[None, :, :]) ** 2).sum(-1)
    _, lab = connected_components((D2 < 2.0 * (1.0 - thr)).astype(np.int8), directed=False)
    return _rank_labels(lab)


def diameter(Z):
    r""":math:`\max_{i,j}\angle(z_i, z_j)` in radians, per record of ``Z``.

    Parameters
    ----------
    Z : array_like, shape (n, d) or (T, n, d)
        Unit tokens :math:`z_i` (one configuration, or T recorded layers).

    Returns
    -------
    float or ndarray, shape (T,)
        :math:`\max_{i,j}\arccos\langle z_i, z_j\rangle` (rad) per configuration.
    """
    return pair_stats(Z).diameter


def cluster_count(Z, threshold=0.999):
    r"""Number of clusters (components of the graph <z_i, z_j> > threshold) per record.

    Parameters
    ----------
    Z : array_like, shape (n, d) or (T, n, d)
        Unit tokens :math:`z_i` (one configuration, or T recorded layers).
    threshold : float
        Two tokens are close when :math:`\langle z_i, z_j\rangle >` ``threshold``.

    Returns
    -------
    int or ndarray, shape (T,)
        Number of connected components of the closeness graph per configuration: the
        ``clusters`` of :func:`pair_stats` (the same graph; only pairs that can be close are
        tested, so it is several times faster on spread tokens).
    """
    thr = _threshold(threshold)
    Z = _v.finite_array("Z", Z)
    if Z.ndim < 2 or Z.ndim > 4 or min(Z.shape) < 1:  # (B, T, n, d) too, as pair_stats
        raise ValueError(f"Z must have shape (n, d) or (T, n, d), got {Z.shape}")
    n, d = Z.shape[-2:]
    flat = np.ascontiguousarray(Z.reshape((-1, n, d)))
    if float(flat.shape[0]) * n * n * d > 2e9:
        raise ValueError(f"Z too large for pair statistics: {Z.shape}")
    comps = np.empty(flat.shape[0], np.int64)
    _components_kernel(flat, 2.0 * (1.0 - thr), comps)
    return comps.reshape(Z.shape[:-2])


# --------------------------------------------------------------------------- phase diagram
class PhaseDiagram(NamedTuple):
    betas: np.ndarray  # (nb,)
    times: np.ndarray  # (nt,) depth tau of the checkpoints
    one_cluster: np.ndarray  # (nb, nt) fraction of systems with all pairs close
    close_pairs: np.ndarray  # (nb, nt) fraction of close pairs i != j (the paper's colour)
    median_clusters: np.ndarray  # (nb, nt) median over systems of the cluster count
    seconds: float  # wall time of the computation


#: default size: small enough for a page to wait for
PHASE_DEFAULT = dict(B=32, n_betas=18)
#: arithmetic of the phase diagram's layers (``phase_diagram(precision=...)``)
PRECISIONS = ("float64", "float32")
MAX_PHASE_WORK = 4e10


def phase_diagram(
    B=32,
    n_betas=18,
    beta_max=9.0,
    beta_min=0.1,
    n=32,
    d=2,
    dt=0.1,
    T=30.0,
    n_times=31,
    threshold=0.999,
    seed=0,
    progress: Callable[[float], None] | None = None,
    *,
    max_work=MAX_PHASE_WORK,
    precision="float64",
):
    r"""Clustering phase diagram over (depth :math:`\tau`, :math:`\beta`).

    Protocol of Geshkovski et al.'s ``phase-diagrams.py`` (defaults of that script except the
    number of systems and of grid points): ``B`` systems of ``n`` = 32 tokens drawn uniformly
    on the circle (``d`` = 2), A = V = I, SA weights, step ``dt`` = 0.1 up to depth ``T`` = 30,
    :math:`\beta` on ``linspace(beta_min, beta_max, n_betas)``. At ``n_times`` checkpoints it
    records the fraction of systems in one cluster (every pair with
    :math:`\langle z_i, z_j\rangle >` ``threshold`` = 0.999), the fraction of close pairs
    :math:`i \ne j` (the script's colour) and the median number of clusters (connected
    components; the script uses the rank of the thresholded Gram matrix instead).

    The same ``B`` initial configurations (seeded) are used for every :math:`\beta`.
    ``progress``, if given, is called with a fraction in [0, 1] after each :math:`\beta`.
    ``max_work`` bounds ``B*n_betas*steps*n*n*d`` (default ``MAX_PHASE_WORK`` = 4e10), checked
    before any simulation.

    ``precision="float32"`` (keyword-only) runs the layers with
    :func:`sim.attention.simulate_batch_float32` (the lanes kernel in float32, twice the systems
    per SIMD instruction) instead of :func:`sim.attention.simulate_batch` (float64); it needs
    ``beta_max`` <= 140. The statistics are computed in float64 from the float32 positions. The
    float32 per-system cluster counts equal the float64 ones in at least 99 % of systems and the
    close-pair fractions differ by at most 0.01 (checked by the test suite on the phase-diagram protocol): the
    threshold 0.999 is a chord of 0.045, far above float32 rounding, and a count can only change
    for a system that sits at the threshold or near a saddle at a checkpoint.

    Parameters
    ----------
    B : int
        Systems per :math:`\beta`.
    n_betas : int
        Grid points in :math:`\beta`, from ``beta_min`` to ``beta_max``.
    beta_max, beta_min : float
        Range of :math:`\beta`.
    n, d : int
        Tokens per system and dimension.
    dt : float
        Step :math:`\Delta`; depth :math:`\tau` = layer index × Δ, up to ``T``.
    T : float
        Final depth.
    n_times : int
        Checkpoints in depth (ends included).
    threshold : float
        Closeness threshold on :math:`\langle z_i, z_j\rangle`.
    seed : int
        Seed of the initial configurations.
    progress : callable, optional
        Called with the fraction done.
    max_work : float
        Bound on ``B*n_betas*steps*n*n*d``.
    precision : str
        ``"float64"`` or ``"float32"``.

    Returns
    -------
    PhaseDiagram
        ``betas`` (nb,), ``times`` (nt,: depth of the checkpoints), and per (:math:`\beta`, depth), shape
        (nb, nt): ``one_cluster`` (fraction of systems), ``close_pairs`` (fraction of pairs),
        ``median_clusters``; ``seconds`` (wall time).
    """
    B = _v.integer("B", B, 1, 100_000)
    n_betas = _v.integer("n_betas", n_betas, 1, 1000)
    beta_max = _v.real("beta_max", beta_max, 0.0, 1e4, lo_open=True)
    beta_min = _v.real("beta_min", beta_min, 0.0, beta_max, lo_open=True)
    n = _v.integer("n", n, 2, 1000)
    d = _v.integer("d", d, 2, MAX_D)
    dt = _v.real("dt", dt, 0.0, 10.0, lo_open=True)
    T = _v.real("T", T, 0.0, 1e4, lo_open=True)
    steps = max(1, int(round(T / dt)))
    n_times = _v.integer("n_times", n_times, 2, steps + 1)
    thr = _threshold(threshold)
    if progress is not None and not callable(progress):
        raise ValueError("progress must be a callable taking a fraction, or None")
    max_work = _v.real("max_work", max_work, 0.0)
    precision = _v.choice("precision", precision, PRECISIONS)
    if precision == "float32" and beta_max > _att.LANES_SCORE_MAX:
        raise ValueError(
            f"beta_max = {beta_max:g} is too large for precision='float32' (at most "
            f"{_att.LANES_SCORE_MAX:g}: beyond it float32 weights could underflow); "
            "use precision='float64'"
        )
    work = float(B) * n_betas * steps * n * n * d
    if work > max_work:
        raise ValueError(
            f"phase diagram too large: B*n_betas*steps*n*n*d = {work:.3g} > "
            f"max_work = {max_work:.3g}; lower B or n_betas, or pass a larger "
            "max_work="
        )
    t0 = time.perf_counter()
    rec = max(1, steps // (n_times - 1))
    steps = rec * (n_times - 1)
    times = np.arange(n_times) * rec * dt
    g = _rng(seed).standard_normal((B, n, d))
    Z0s = g / np.linalg.norm(g, axis=2, keepdims=True)
    betas = np.linspace(beta_min, beta_max, n_betas)
    one = np.empty((n_betas, n_times))
    close = np.empty((n_betas, n_times))
    med = np.empty((n_betas, n_times))
    for b, beta in enumerate(betas):
        run = _att.simulate_batch_float32 if precision == "float32" else _att.simulate_batch
        traj = run(
            Z0s, beta, dt, steps, flow="SA", record_every=rec, max_work=max_work
        )  # one beta: part of the work checked above
        st = pair_stats(traj, thr)  # (B, n_times)
        one[b] = st.one_cluster.mean(axis=0)
        close[b] = st.close_fraction.mean(axis=0)
        med[b] = np.median(st.clusters, axis=0)
        if progress is not None:
            progress((b + 1) / n_betas)
    return PhaseDiagram(betas, times, one, close, med, time.perf_counter() - t0)


def warm() -> None:
    """Compile (or load from cache) the kernels on tiny inputs (see :mod:`sim.warm`)."""
    pair_stats(sphere_uniform(3, 3, seed=0))
    pair_stats(sphere_uniform(3, 2, seed=0))
    cluster_count(sphere_uniform(3, 3, seed=0))
    cluster_labels(sphere_uniform(3, 3, seed=0))
