"""Monte Carlo of the supremum: Numba kernels that only fill arrays, the NumPy reference beside
them, and the public estimators :func:`sup_samples`, :func:`monte_carlo`, :func:`one_draw`.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

from sim import _interrupt
from sim._validate import choice, integer
from sim.gaussian_width.params import CHUNK_NUMBERS, MAX_DRAWS, _basis_width, _explicit, _mc_args, _params, _vectors
from sim.gaussian_width.tails import _equicorr_coeffs, _reflectors, _set_basis, _streams


# --------------------------------------------------------------------------
# Monte Carlo: Numba kernels (fill arrays only) and the NumPy reference
# --------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _fused_norm(gen, D, out):  # pragma: no cover - compiled
    for i in range(out.size):
        s = 0.0
        for _ in range(D):
            x = gen.standard_normal()
            s += x * x
        out[i] = math.sqrt(s)


@njit(cache=True, nogil=True)
def _fused_abs_sum(gen, D, out):  # pragma: no cover - compiled
    c = 1.0 / math.sqrt(D)
    for i in range(out.size):
        s = 0.0
        for _ in range(D):
            s += abs(gen.standard_normal())
        out[i] = s * c


@njit(cache=True, nogil=True)
def _fused_reflect(gen, V, width, alpha, beta, mode, out):  # pragma: no cover - compiled
    """Per draw: g (drawn here), h = H g by the reflections in V, then reduce h[:width]:
    mode 0: ||h[:width]||; mode 1: max_i |alpha h_i + beta sum_j h_j|."""
    r, D = V.shape
    g = np.empty(D)
    for i in range(out.size):
        for j in range(D):
            g[j] = gen.standard_normal()
        for m in range(r):
            s = 0.0
            for j in range(D):
                s += V[m, j] * g[j]
            s *= 2.0
            for j in range(D):
                g[j] -= s * V[m, j]
        if mode == 0:
            s = 0.0
            for j in range(width):
                s += g[j] * g[j]
            out[i] = math.sqrt(s)
        else:
            s = 0.0
            for j in range(width):
                s += g[j]
            bs = beta * s
            best = 0.0
            for j in range(width):
                v = abs(alpha * g[j] + bs)
                if v > best:
                    best = v
            out[i] = best


def _chunks(samples: int, D: int, g_ss):
    rows = max(1, CHUNK_NUMBERS // D)
    starts = list(range(0, samples, rows))
    children = g_ss.spawn(len(starts))
    return [(a, min(a + rows, samples), child) for a, child in zip(starts, children)]


def _chunk_numpy(p, Q, gen, n, out):
    kind, D = p["kind"], p["D"]
    G = gen.standard_normal((n, D))
    if kind == "adaptive":
        out[:] = np.sqrt(np.einsum("ij,ij->i", G, G))
    elif kind == "hypercube":
        out[:] = np.abs(G).sum(axis=1) / math.sqrt(D)
    elif kind in ("subspace", "circle"):
        out[:] = np.linalg.norm(G @ Q, axis=1)
    else:  # directions: explicit U (M x D), |<g,u_i>| maximised
        U = Q  # here Q is the explicit direction matrix
        out[:] = np.abs(G @ U.T).max(axis=1)


def _chunk_explicit(p, U, gen, n, out):
    """Both methods, explicit directions U (M x D): g drawn as a block (the same stream as the
    kernels), max_i |<g, u_i>| over blocks of rows of U (temporary arrays stay <= 2^20 entries)."""
    G = gen.standard_normal((n, p["D"]))
    step = max(1, (1 << 20) // max(n, 1))
    best = np.zeros(n)
    for a in range(0, U.shape[0], step):
        np.maximum(best, np.abs(G @ U[a : a + step].T).max(axis=1), out=best)
    out[:] = best


def _chunk_numba(p, V, gen, n, out):
    kind, D = p["kind"], p["D"]
    if kind == "adaptive":
        _fused_norm(gen, D, out)
        return
    if kind == "hypercube":
        _fused_abs_sum(gen, D, out)
        return
    alpha, beta = _equicorr_coeffs(p["M"], p["correlation"]) if kind == "directions" else (1.0, 0.0)
    _fused_reflect(gen, V, _basis_width(p), alpha, beta, 1 if kind == "directions" else 0, out)


def sup_samples(kind, samples, seed, *, method="numba", threads=None, max_work=MAX_DRAWS, **params) -> np.ndarray:
    r"""``samples`` independent draws of :math:`\sup_{u\in S}\langle g, u\rangle`.

    Parameters
    ----------
    kind, **params
        as in :func:`exact` (``"directions"`` takes ``D``, ``M``, ``correlation``).
    samples : int
        number of draws of ``g``, 2 <= samples <= ``MAX_SAMPLES``.
    seed : int
        non-negative; fixes both the orientation of the set and the draws.
    method : {"numba", "numpy"}
        ``"numpy"`` is the plain reference: draw a block of ``g``, project it
        with BLAS on the explicit basis (directions: on the explicit ``M x D``
        matrix of directions), reduce with NumPy; cost ``samples*D*k``.
        ``"numba"`` draws the same normals inside one ``nogil`` kernel fused
        with the reflections and the reduction (no block of ``g`` is stored);
        cost ``samples*D*(1 + 2*REFLECTIONS)``, independent of ``k`` and ``M``.
        Chunks run on threads.
    threads : int, optional
        worker threads for ``"numba"`` (default: ``os.cpu_count()``); the
        result does not depend on it.
    max_work : int, optional
        bound on ``samples*D`` (default ``MAX_DRAWS`` = 5e7); for explicit
        directions ``samples*D*M`` is bounded by ``MAX_FLOPS*max_work/MAX_DRAWS``.

    Notes
    -----
    ``"directions"`` with ``layout="random"`` (the ``M`` unit directions of
    :func:`random_directions` for this seed, any ``M``, also ``M > D``) or ``vectors=``
    (a given M x D matrix) projects each ``g`` on the explicit matrix in both methods
    (cost ``samples*D*M``).

    Returns
    -------
    ndarray, shape (samples,)

    Raises
    ------
    ValueError
        on bad arguments, and when ``samples*D`` exceeds ``MAX_DRAWS`` (and,
        for the reference, ``samples*D*k`` exceeds ``MAX_FLOPS`` or ``D*k``
        exceeds ``MAX_BASIS``).
    """
    method = choice("method", method, ("numba", "numpy"))
    p, samples, seed = _mc_args(kind, samples, seed, params, reference=(method == "numpy"), max_work=max_work)
    if threads is None:
        threads = os.cpu_count() or 1
    threads = integer("threads", threads, 1, 64)
    if _explicit(p):
        Q = _vectors(p, seed)
    elif method == "numpy":
        Q = _set_basis(p, seed)
        if p["kind"] == "directions":
            alpha, beta = _equicorr_coeffs(p["M"], p["correlation"])
            Q = alpha * Q.T + beta * Q.sum(axis=1)[None, :]  # explicit U = C Q^T
    else:
        Q = _reflectors(p["D"], seed) if _basis_width(p) else None
    _, g_ss = _streams(seed)
    out = np.empty(samples)
    jobs = _chunks(samples, p["D"], g_ss)
    worker = _chunk_explicit if _explicit(p) else _chunk_numpy if method == "numpy" else _chunk_numba

    def run(job):
        a, b, child = job
        worker(p, Q, np.random.default_rng(child), b - a, out[a:b])

    if (method == "numba" or _explicit(p)) and threads > 1 and len(jobs) > 1:
        with ThreadPoolExecutor(max_workers=min(threads, len(jobs))) as ex:
            futures = [ex.submit(run, job) for job in jobs]
            try:
                for f in futures:  # a stopping point after each chunk (sim._interrupt)
                    f.result()
                    _interrupt.checkpoint()
            except BaseException:
                for f in futures:  # stopped (or failed): chunks not started never run
                    f.cancel()
                raise
    else:
        for job in jobs:
            _interrupt.checkpoint()
            run(job)
    return out


def monte_carlo(kind, samples, seed, *, max_work=MAX_DRAWS, **params) -> tuple[float, float]:
    r"""Monte-Carlo estimate of :math:`w(S)` and its standard error.

    .. math::

        \hat w = \frac1n\sum_{j=1}^n \sup_{u\in S}\langle g_j,u\rangle, \qquad
        \widehat{\mathrm{se}} = \frac{s_{n-1}}{\sqrt n},

    with ``n = samples`` iid draws :math:`g_j \sim N(0, I_D)` (see
    :func:`sup_samples`, Numba path).  For ``"directions"`` the sup is
    :math:`\max_i |\langle g,u_i\rangle|`.

    Parameters
    ----------
    kind : str
        The family, as for :func:`exact`.
    samples : int
        Number :math:`n` of Gaussian draws :math:`g_j`, :math:`n \ge 2`.
    seed : int
        Seed of NumPy's default generator (the same seed gives the same estimate).
    max_work : int
        Bound on ``samples * D`` (raise it to allow more work).
    **params
        The family's parameters, as for :func:`exact`.

    Returns
    -------
    (mean, stderr) : tuple of float
    """
    v = sup_samples(kind, samples, seed, max_work=max_work, **params)
    return float(v.mean()), float(v.std(ddof=1) / math.sqrt(v.size))


def one_draw(kind, seed, **params) -> dict:
    r"""The first draw of ``g`` of :func:`sup_samples` with this seed, and its maximiser.

    Returns a dict with ``g`` (D,), ``u`` (D,) the maximising unit vector,
    ``sup`` = :math:`\langle g, u\rangle`, and the set: ``basis`` (D x k,
    orthonormal; subspace, circle), ``points`` (finite sets: the 2^D cube
    vertices for D <= 10, or the directions ``u_i``; the set is
    :math:`\{\pm u_i\}`), or neither (adaptive: ``u = g/‖g‖`` ranges over the
    whole sphere).  Meant for small pictures (D = 2 or 3); D <= 1000.

    Parameters
    ----------
    kind : str
        The family, as for :func:`exact`.
    seed : int
        Seed, as for :func:`sup_samples`.
    **params
        The family's parameters.
    """
    p = _params(kind, params)
    seed = integer("seed", seed, 0, 2**63 - 1)
    D, kind = p["D"], p["kind"]
    if D > 1000:
        raise ValueError(f"D must be <= 1000 for one_draw, got {D}")
    Q = None if _explicit(p) else _set_basis(p, seed)
    _, g_ss = _streams(seed)
    child = _chunks(2, D, g_ss)[0][2]
    g = np.random.default_rng(child).standard_normal(D)
    res = {"g": g}
    if kind in ("subspace", "circle"):
        h = Q.T @ g
        u = Q @ h / np.linalg.norm(h)
        res["basis"] = Q
    elif kind == "adaptive":
        u = g / np.linalg.norm(g)
    elif kind == "hypercube":
        u = np.where(g >= 0, 1.0, -1.0) / math.sqrt(D)
        if D <= 10:
            grid = np.array(np.meshgrid(*([[-1.0, 1.0]] * D), indexing="ij"))
            res["points"] = grid.reshape(D, -1).T / math.sqrt(D)
    else:
        if _explicit(p):
            U = _vectors(p, seed)
        else:
            alpha, beta = _equicorr_coeffs(p["M"], p["correlation"])
            U = alpha * Q.T + beta * Q.sum(axis=1)[None, :]
        x = U @ g
        i = int(np.argmax(np.abs(x)))
        u = np.sign(x[i]) * U[i] if x[i] != 0 else U[i]
        res["points"] = U
        res["index"] = i
    res["u"] = u
    res["sup"] = float(g @ u)
    return res
