r"""Gaussian width of a set of directions: exact values, bounds, Monte Carlo.

The Gaussian width of a set :math:`S \subset \mathbb{R}^D` is

.. math::

    w(S) = \mathbb{E} \sup_{u \in S} \langle g, u \rangle, \qquad g \sim N(0, I_D).

Five families (``kind``), see ``CONSTRUCTIONS.md`` §3:

``"subspace"`` (``D``, ``k``)
    the unit sphere of a fixed ``k``-dimensional subspace :math:`E`;
    :math:`\sup_{u} \langle g,u\rangle = \|\Pi_E g\|`,
    :math:`w = \sqrt2\,\Gamma(\tfrac{k+1}{2})/\Gamma(\tfrac k2)`, and
    :math:`\sqrt{2k/\pi} \le w \le \sqrt k`, whatever ``D`` is.
``"directions"`` (``D``, ``M``, optional ``correlation`` :math:`\rho`)
    :math:`M` fixed unit directions, equicorrelated
    (:math:`\langle u_i,u_j\rangle = \rho`, see :func:`equicorrelated_directions`),
    with the sup taken of :math:`|\langle g,u_i\rangle|` (the set :math:`\{\pm u_i\}`);
    :math:`\mathbb{E}\max_i|\langle g,u_i\rangle| \le \sqrt{2\log 2M}` and
    :math:`P(\max_i|\langle g,u_i\rangle| \ge r) \le 2M e^{-r^2/2}` for *any*
    correlation.  ``M = 1`` is "one fixed direction": :math:`\sqrt{2/\pi}`.
    Equicorrelated directions need ``M <= D``; any ``M`` (the interesting case of the
    bound is ``M >> D``) with ``layout="random"`` (``M`` independent uniform unit
    directions, :func:`random_directions`, fixed by the seed) or ``vectors=`` (a given
    ``M x D`` matrix): Monte Carlo, exact only for ``D <= 2`` or ``M = 1``.
``"adaptive"`` (``D``)
    the direction picked from the same noise, :math:`u(g) = g/\|g\|`;
    :math:`\langle g, u(g)\rangle = \|g\|`, mean
    :math:`\sqrt2\,\Gamma(\tfrac{D+1}{2})/\Gamma(\tfrac D2) \approx \sqrt D`.
``"hypercube"`` (``D``)
    the :math:`2^D` vertices :math:`\{\pm1\}^D/\sqrt D`;
    :math:`\sup = \|g\|_1/\sqrt D`, :math:`w = \sqrt{2D/\pi}`.
``"circle"`` (``D`` >= 2)
    a unit circle in a fixed 2-plane (a 1-D manifold spanning 2 dimensions):
    :math:`w = \sqrt{\pi/2}`.

Orientation.  Subspace, circle and directions are built on the first ``k``
(2, ``M``) coordinate axes and then turned by an orthogonal matrix
:math:`H = H_3 H_2 H_1` (:math:`H_1` acts first), a product of ``REFLECTIONS``
Householder reflections :math:`H_j = I - 2 v_j v_j^\top` with uniformly random
unit normals :math:`v_j`:
the set's basis is :math:`q_i = H^\top e_i` and
:math:`\langle q_i, g\rangle = (H g)_i`.  Any fixed orientation gives the same
width (:math:`N(0, I_D)` is rotation invariant); the tilt only makes the
simulation use all ``D`` coordinates of ``g``, at O(D) cost per draw instead
of O(D k).  :math:`H` is drawn *before* and independently of ``g``, so the
set is fixed with respect to ``g``.

Sampling.  ``seed`` feeds :class:`numpy.random.SeedSequence`; its first child
draws :math:`v_j`, its second child is split into one
:class:`numpy.random.Generator` per chunk of draws of ``g`` (at most
``CHUNK_NUMBERS`` normals per chunk, so memory stays bounded).  The partition
depends only on ``samples`` and ``D``.  The Numba path draws the *same*
normals as the NumPy reference (Numba's ``Generator.standard_normal``
reproduces NumPy's stream), reflects and reduces them in the same fused
``nogil`` kernel, and runs the chunks on threads; the reference projects on the
explicit basis with BLAS.  Both give the same sup values up to rounding.

What this module does not claim: the width of a set says nothing about how a
particular learned set of directions was obtained; the bounds for fixed
directions need the directions to be independent of ``g``; Monte-Carlo means
carry the standard error they report and nothing better.

References
----------
R. Vershynin, *High-Dimensional Probability*, Cambridge University Press
(2018), §7.5 (Gaussian width) and §2.5 (maxima of sub-Gaussians).
"""
from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit
from scipy import special, stats

from sim._validate import choice, finite_array, integer, real

__all__ = [
    "KINDS", "exact", "bound", "monte_carlo", "sup_samples", "sup_density",
    "equicorrelated_directions", "tail_bound", "tail_exact", "empirical_tail",
    "one_draw", "max_abs_bound", "random_directions", "warm",
]

KINDS = ("subspace", "directions", "adaptive", "hypercube", "circle")
_PARAMS = {  # required, optional-with-default
    "subspace": (("D", "k"), {}),
    "directions": (("D", "M"), {"correlation": 0.0, "layout": "equicorrelated", "vectors": None}),
    "adaptive": (("D",), {}),
    "hypercube": (("D",), {}),
    "circle": (("D",), {}),
}
_MAX_D_EXACT = 10**12

# Compute caps for Monte Carlo (each bounds one call to well under a few seconds
# on 2 cores; see bench/gaussian_width.py).
MAX_SAMPLES = 2_000_000          # length of the returned sup array (16 MB)
MAX_DRAWS = 50_000_000           # samples * D normals drawn
MAX_BASIS = 4_000_000            # D * k (or D * M) entries of an explicit basis (reference, pictures)
MAX_FLOPS = 2_000_000_000        # samples*D*k (or M): the NumPy reference's projection
MAX_TAIL_POINTS = 2_000         # r points of the correlated tail/density (a 2000-node quadrature each)
LAYOUTS = ("equicorrelated", "random", "given")
REFLECTIONS = 3                  # Householder reflections that orient subspace, circle, directions
CHUNK_NUMBERS = 1 << 17          # normals per chunk (1 MiB of float64)


# --------------------------------------------------------------------------
# argument handling
# --------------------------------------------------------------------------
def _params(kind, params):
    kind = choice("kind", kind, KINDS)
    required, optional = _PARAMS[kind]
    for name in params:
        if name not in required and name not in optional:
            raise ValueError(f"{name} is not a parameter of kind {kind!r} "
                             f"(expected {', '.join(required + tuple(optional))})")
    params = dict(params)
    if kind == "directions" and params.get("vectors") is not None:
        U = finite_array("vectors", params["vectors"], ndim=2)
        if U.shape[0] < 1 or U.shape[1] < 1:
            raise ValueError(f"vectors must be an M x D matrix with M, D >= 1, got shape {U.shape}")
        for name, n in (("M", U.shape[0]), ("D", U.shape[1])):
            if params.setdefault(name, n) != n:
                raise ValueError(f"{name} = {params[name]!r} does not match vectors of shape "
                                 f"{U.shape} (M x D)")
        if U.size > MAX_BASIS:
            raise ValueError(f"vectors has {U.size} entries > {MAX_BASIS}")
        big = np.max(np.abs(U), axis=1, keepdims=True)
        if np.any(big == 0.0):
            raise ValueError("vectors has a zero row: every direction must be a nonzero vector "
                             "(rows are normalised to unit length)")
        U = U / big
        params["vectors"] = U / np.linalg.norm(U, axis=1, keepdims=True)
        if params.get("layout", "given") != "given":
            raise ValueError("layout must be 'given' (or omitted) when vectors is passed")
        params["layout"] = "given"
    for name in required:
        if name not in params:
            raise ValueError(f"{name} is required for kind {kind!r}")
    out = {"kind": kind}
    out["D"] = integer("D", params["D"], 2 if kind == "circle" else 1, _MAX_D_EXACT)
    if kind == "subspace":
        out["k"] = integer("k", params["k"], 1)
        if out["k"] > out["D"]:
            raise ValueError(f"k must be <= D (a k-dimensional subspace of R^D), "
                             f"got k={out['k']} > D={out['D']}")
    if kind == "directions":
        out["M"] = integer("M", params["M"], 1)
        out["layout"] = choice("layout", params.get("layout", "equicorrelated"), LAYOUTS)
        out["correlation"] = real("correlation", params.get("correlation", 0.0), 0.0, 1.0)
        if out["layout"] == "equicorrelated" and out["M"] > out["D"]:
            raise ValueError(f"M must be <= D for layout 'equicorrelated' (M unit vectors with "
                             f"equal pairwise correlation < 1 span M dimensions), got M={out['M']} "
                             f"> D={out['D']}; for more directions than dimensions pass "
                             "layout='random' (M independent uniform unit directions) or "
                             "vectors=<M x D matrix>")
        if out["layout"] == "given" and params.get("vectors") is None:
            raise ValueError("layout 'given' needs vectors=<M x D matrix>")
        if out["layout"] != "equicorrelated":
            if "correlation" in params and out["correlation"] != 0.0:
                raise ValueError("correlation applies to layout 'equicorrelated' only")
            if out["D"] * out["M"] > MAX_BASIS:
                raise ValueError(f"D*M = {out['D'] * out['M']} exceeds {MAX_BASIS}: lower D or M")
            out["vectors"] = params.get("vectors")
    return out


def _explicit(p) -> bool:
    """True for direction sets given as an explicit matrix (layouts 'random' and 'given')."""
    return p["kind"] == "directions" and p["layout"] != "equicorrelated"


def random_directions(M, D, seed) -> np.ndarray:
    r"""The ``M`` independent uniformly random unit directions of :math:`\mathbb{R}^D` that
    ``layout="random"`` uses with this ``seed`` (rows of an ``(M, D)`` array; any ``M``, also
    ``M > D``). They are drawn from their own stream of ``seed``, independent of the draws of
    ``g`` (the set is fixed with respect to ``g``). Pass them as ``vectors=`` to :func:`exact`.
    """
    M = integer("M", M, 1)
    D = integer("D", D, 1, _MAX_D_EXACT)
    seed = integer("seed", seed, 0, 2**63 - 1)
    if D * M > MAX_BASIS:
        raise ValueError(f"D*M = {D * M} exceeds {MAX_BASIS}: lower D or M")
    stream = np.random.SeedSequence(seed).spawn(3)[2]   # children 0, 1: orientation and g
    U = np.random.default_rng(stream).standard_normal((M, D))
    return U / np.linalg.norm(U, axis=1, keepdims=True)


def _vectors(p, seed):
    return p["vectors"] if p["layout"] == "given" else random_directions(p["M"], p["D"], seed)


def _mc_args(kind, samples, seed, params, reference=False, max_work=MAX_DRAWS):
    p = _params(kind, params)
    samples = integer("samples", samples, 2, MAX_SAMPLES)
    seed = integer("seed", seed, 0, 2**63 - 1)
    max_work = real("max_work", max_work, 1.0)
    D = p["D"]
    if samples * D > max_work:
        raise ValueError(f"samples*D = {samples * D} exceeds max_work = {max_work:.3g}: lower "
                         "samples or D, or pass a larger max_work=")
    if _explicit(p):      # every path projects g on the M x D matrix
        flops = float(samples) * D * p["M"]
        if flops > MAX_FLOPS * max_work / MAX_DRAWS:
            raise ValueError(f"samples*D*M = {flops:.3g} exceeds {MAX_FLOPS * max_work / MAX_DRAWS:.3g}"
                             " (max_work scales it): lower samples, D or M, or pass a larger "
                             "max_work=")
        return p, samples, seed
    width = _basis_width(p)
    if width and reference:  # only the NumPy reference builds the basis and projects on it
        if D * width > MAX_BASIS:
            raise ValueError(f"D*{'k' if kind == 'subspace' else 'M'} = {D * width} exceeds "
                             f"{MAX_BASIS}: lower D or {'k' if kind == 'subspace' else 'M'}")
        flops = samples * D * width
        if flops > MAX_FLOPS:
            raise ValueError(f"samples*D*{'k' if kind == 'subspace' else 'M'} = {flops:.3g} "
                             f"exceeds {MAX_FLOPS:.3g}: lower samples, D or "
                             f"{'k' if kind == 'subspace' else 'M'}")
    return p, samples, seed


def _basis_width(p):
    return {"subspace": p.get("k"), "circle": 2, "directions": p.get("M")}.get(p["kind"], 0)


def max_abs_bound(M) -> float:
    r"""Upper bound :math:`\sqrt{2\log(2M)}` on :math:`\mathbb{E}\max_{i\le M}|X_i|`.

    Valid for any :math:`M` centred Gaussians :math:`X_i` with variance at most
    one, however correlated (moment generating function + Jensen, then optimise
    the free parameter).
    """
    M = integer("M", M, 1)
    return math.sqrt(2.0 * math.log(2.0 * M))


# --------------------------------------------------------------------------
# exact values and bounds
# --------------------------------------------------------------------------
def _chi_mean(k: int) -> float:
    r""":math:`\mathbb{E}\|g_k\| = \sqrt2\,\Gamma((k+1)/2)/\Gamma(k/2)`, accurate for every k.

    For ``k <= 200`` the Gamma values are finite and used directly.  Beyond,
    the difference ``gammaln((k+1)/2) - gammaln(k/2)`` of two large numbers
    would lose about ``k * 1e-16`` relative accuracy (4e-11 at k = 1e6, 2e-6 at
    k = 1e9), so the log-ratio comes from its asymptotic series in x = k/2,

    .. math::

        \log\frac{\Gamma(x+\frac12)}{\Gamma(x)} = \tfrac12\log x - \frac1{8x}
        + \frac1{192x^3} - \frac1{640x^5} + \frac{17}{14336x^7} - \frac{31}{18432x^9}
        + O(x^{-11}),

    whose truncation error is below 1e-19 for x > 100.
    """
    if k <= 200:
        return math.sqrt(2.0) * math.gamma((k + 1) / 2.0) / math.gamma(k / 2.0)
    x = k / 2.0
    y = 1.0 / (x * x)
    series = (-1.0 / 8.0 + y * (1.0 / 192.0 + y * (-1.0 / 640.0 + y * (17.0 / 14336.0
                                                                     - y * 31.0 / 18432.0)))) / x
    return math.sqrt(2.0 * x) * math.exp(series)


def exact(kind, **params) -> float:
    r"""Exact Gaussian width of the set ``kind``.

    .. math::

        w_{\text{subspace}}(D,k) &= \sqrt2\,\frac{\Gamma(\frac{k+1}{2})}{\Gamma(\frac k2)}
        \quad(\text{independent of } D),\\
        w_{\text{adaptive}}(D) &= \mathbb{E}\|g\| = \sqrt2\,\frac{\Gamma(\frac{D+1}{2})}{\Gamma(\frac D2)},\\
        w_{\text{hypercube}}(D) &= \sqrt{2D/\pi}, \qquad w_{\text{circle}} = \sqrt{\pi/2}.

    ``"directions"`` (an addition to the four closed forms) returns
    :math:`\mathbb{E}\max_i|\langle g,u_i\rangle|`. For an explicit set (``vectors=`` or
    ``layout="random"``) the value is exact where a closed form exists: ``D = 1`` or
    ``M = 1`` give :math:`\sqrt{2/\pi}`; ``D = 2``, with the directions at angles
    :math:`\theta_i` (mod :math:`\pi`) leaving gaps :math:`\gamma_k` (summing to :math:`\pi`),
    gives :math:`\sqrt{2/\pi}\sum_k \sin(\gamma_k/2)` (:math:`\|g\|` and its angle are
    independent, and the nearest direction is :math:`\min(t, \gamma_k - t)` away inside a gap).
    Otherwise there is no exact value (``ValueError``: use :func:`monte_carlo`).
    For the equicorrelated construction it is computed by quadrature: writing
    :math:`\langle g,u_i\rangle = \sqrt\rho Z + \sqrt{1-\rho}\,Y_i` with
    :math:`Z, Y_i` iid standard normal,

    .. math::

        \mathbb{E}\max_i|\langle g,u_i\rangle|
        = \int \varphi(z)\, \sqrt{1-\rho}\; H\!\Big(\tfrac{\sqrt\rho z}{\sqrt{1-\rho}}\Big)\,dz,
        \qquad H(c) = \int_0^\infty 1 - \big(\Phi(r-c) - \Phi(-r-c)\big)^M\,dr,

    with composite Gauss–Legendre rules (relative accuracy about 1e-10).

    Parameters
    ----------
    kind : {"subspace", "adaptive", "hypercube", "circle", "directions"}
    **params
        ``D`` (all kinds), ``k`` (subspace, 1 <= k <= D), ``M`` (directions) with
        ``layout="equicorrelated"`` (default; optional ``correlation`` in [0, 1],
        1 <= M <= D), or ``vectors`` (an M x D matrix of directions, any M; rows are
        normalised; D and M may then be omitted).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        naming the offending argument, or saying that the set has no exact value here.
    """
    p = _params(kind, params)
    kind = p["kind"]
    if _explicit(p):
        if p["layout"] == "random":
            raise ValueError("layout 'random' is a different set for every seed: pass "
                             "vectors=random_directions(M, D, seed) to get its exact value")
        return _explicit_mean(p["vectors"])
    if kind == "subspace":
        return _chi_mean(p["k"])
    if kind == "adaptive":
        return _chi_mean(p["D"])
    if kind == "hypercube":
        return math.sqrt(2.0 * p["D"] / math.pi)
    if kind == "circle":
        return math.sqrt(math.pi / 2.0)
    return _directions_mean(p["M"], p["correlation"])


def _explicit_mean(U: np.ndarray) -> float:
    """E max_i |<g, u_i>| for explicit unit rows u_i, where a closed form exists (D <= 2, M = 1)."""
    M, D = U.shape
    if D == 1 or M == 1:
        return math.sqrt(2.0 / math.pi)
    if D == 2:
        th = np.sort(np.mod(np.arctan2(U[:, 1], U[:, 0]), math.pi))
        gaps = np.diff(np.concatenate([th, [th[0] + math.pi]]))
        return math.sqrt(2.0 / math.pi) * float(np.sum(np.sin(0.5 * gaps)))
    raise ValueError(f"no exact value for {M} general directions in D = {D} >= 3 (only the "
                     "equicorrelated layout, D <= 2 or M = 1 have one): use monte_carlo")


def bound(kind, **params) -> tuple[float, float]:
    r"""Lower and upper bounds on the Gaussian width that the text states.

    - ``"subspace"``: :math:`\sqrt{2k/\pi} \le w \le \sqrt k`
      (lower: :math:`\|x\|_2 \ge \|x\|_1/\sqrt k` and
      :math:`\mathbb{E}|g_i| = \sqrt{2/\pi}`; upper: Jensen,
      :math:`\mathbb{E}\|g_k\|^2 = k`).
    - ``"adaptive"``: the same with :math:`k = D`:
      :math:`\sqrt{2D/\pi} \le \mathbb{E}\|g\| \le \sqrt D`.
    - ``"circle"``: the circle is the unit sphere of a 2-plane, so
      :math:`2/\sqrt\pi \le w \le \sqrt2`.
    - ``"directions"``: :math:`\sqrt{2/\pi} \le \mathbb{E}\max_i|\langle g,u_i\rangle|
      \le \sqrt{2\log 2M}` (lower: the max is at least :math:`|\langle g,u_1\rangle|`,
      whose mean is :math:`\sqrt{2/\pi}`; upper: valid for any correlation).
    - ``"hypercube"``: :math:`\sqrt{2/\pi} \le w \le \sqrt D` (lower: one
      antipodal pair of vertices, i.e. what "a finite, zero-dimensional set"
      would suggest; upper: the vertices lie on the unit sphere).  The exact
      value :math:`\sqrt{2D/\pi}` sits close to the upper end.  (The finite-set
      bound with :math:`2^{D-1}` antipodal pairs, :math:`\sqrt{2D\log 2}`, has
      the right order :math:`\sqrt D` but is larger than :math:`\sqrt D`.)

    Returns
    -------
    (lower, upper) : tuple of float
    """
    p = _params(kind, params)
    kind = p["kind"]
    if kind == "subspace":
        k = p["k"]
        return math.sqrt(2.0 * k / math.pi), math.sqrt(k)
    if kind == "adaptive":
        D = p["D"]
        return math.sqrt(2.0 * D / math.pi), math.sqrt(D)
    if kind == "circle":
        return 2.0 / math.sqrt(math.pi), math.sqrt(2.0)
    if kind == "hypercube":
        return math.sqrt(2.0 / math.pi), math.sqrt(p["D"])
    return math.sqrt(2.0 / math.pi), max_abs_bound(p["M"])


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
        raise ValueError(f"D*{'k' if p['kind'] == 'subspace' else 'M'} = {p['D'] * width} exceeds "
                         f"{MAX_BASIS}: lower D or {'k' if p['kind'] == 'subspace' else 'M'}")
    return _basis(_reflectors(p["D"], seed), width)


def equicorrelated_directions(M, D, correlation=0.0, seed=None) -> np.ndarray:
    r"""``M`` unit vectors in :math:`\mathbb{R}^D` with all pairwise inner products ``correlation``.

    Construction: let :math:`C = \alpha I_M + \beta \mathbf 1\mathbf 1^\top` with
    :math:`\alpha = \sqrt{1-\rho}` and
    :math:`\beta = (\sqrt{1-\rho+M\rho} - \sqrt{1-\rho})/M`, so that

    .. math::

        C^2 = (1-\rho) I_M + \rho\,\mathbf 1\mathbf 1^\top

    (unit diagonal, every off-diagonal entry :math:`\rho`).  With
    :math:`Q \in \mathbb{R}^{D\times M}` having orthonormal columns, the rows of
    :math:`U = C Q^\top` are the directions: :math:`u_i = \alpha q_i + \beta\sum_j q_j`
    and :math:`U U^\top = C^2`.  ``seed=None`` takes :math:`Q` = the first ``M``
    coordinate axes; an integer seed takes the tilted :math:`Q` (see the module
    notes: three random Householder reflections) that :func:`monte_carlo` uses
    with the same seed.  Needs ``M <= D`` and
    :math:`0 \le \rho \le 1` (:math:`\rho = 1`: all directions coincide).

    Then :math:`\langle g,u_i\rangle = \alpha h_i + \beta\sum_j h_j` with
    :math:`h = Q^\top g \sim N(0, I_M)`, which has the law of
    :math:`\sqrt\rho Z + \sqrt{1-\rho}\,Y_i` (Z, Y iid standard normal).

    Returns
    -------
    ndarray, shape (M, D)
    """
    p = _params("directions", {"D": D, "M": M, "correlation": correlation})
    M, D, rho = p["M"], p["D"], p["correlation"]
    if D * M > MAX_BASIS:
        raise ValueError(f"D*M = {D * M} exceeds {MAX_BASIS}: lower D or M")
    alpha, beta = _equicorr_coeffs(M, rho)
    if seed is None:
        Q = np.eye(D, M)
    else:
        seed = integer("seed", seed, 0, 2**63 - 1)
        Q = _set_basis(p, seed)
    return alpha * Q.T + beta * Q.sum(axis=1)[None, :]


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
        rb = r[lo:lo + 256, None]
        # z in [0, 9] split at the transition zone of the integrand (in z, width ~ s/sr)
        z1 = np.clip((rb - s * (lm + 9.0)) / sr, 0.0, 9.0)
        z2 = np.clip((rb + 9.0 * s) / sr, 0.0, 9.0)
        zero, nine = np.zeros_like(rb), np.full_like(rb, 9.0)
        z, w = _gl_intervals([(zero, z1, 36), (z1, z2, 128), (z2, nine, 36)])
        a = sr * z
        q = special.ndtr((a - rb) / s) + special.ndtr((-rb - a) / s)
        phi = _phi(z)
        tail[lo:lo + 256] = 2.0 * np.sum(w * phi * _one_minus_pow(q, M), axis=1)
        dp = (_phi((rb - a) / s) + _phi((rb + a) / s)) / s
        with np.errstate(divide="ignore", invalid="ignore"):
            pm1 = np.exp((M - 1) * np.log1p(-np.clip(q, 0.0, 1.0))) if M > 1 else 1.0
        dens[lo:lo + 256] = 2.0 * np.sum(w * phi * M * np.nan_to_num(pm1) * dp, axis=1)
    return np.clip(tail, 0.0, 1.0), dens


def _phi(x):
    return np.exp(-0.5 * x * x) * (1.0 / math.sqrt(2.0 * math.pi))


def _gl_intervals(pieces):
    """Gauss-Legendre nodes/weights, row-wise: each piece (lo, hi, n_panels) of (n,1) arrays."""
    xs, ws = [], []
    for lo, hi, n in pieces:
        edges = lo + (hi - lo) * (np.arange(n + 1) / n)[None, :]      # (n_r, n+1)
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
    """
    M = integer("M", M, 1)
    r = _r_array("r", r)
    if np.any(r < 0):
        raise ValueError("r must be >= 0")
    return np.minimum(1.0, 2.0 * M * np.exp(-0.5 * r * r))


def _check_tail_work(points: int, rho: float, max_work):
    max_work = real("max_work", max_work, 1.0)
    if 0.0 < rho < 1.0 and points > max_work:
        raise ValueError(f"{points} points for a correlated tail exceed max_work = {max_work:.3g}: "
                         "each costs a 2000-node quadrature (about 1 ms); use fewer points or "
                         "pass a larger max_work=")


def tail_exact(r, M, correlation=0.0, *, max_work=MAX_TAIL_POINTS) -> np.ndarray:
    r"""Exact :math:`P(\max_i|\langle g,u_i\rangle| \ge r)` for the equicorrelated directions.

    .. math::

        P(\max_i|X_i| \ge r) = 1 - \int\varphi(z)\Big[\Phi\big(\tfrac{r-\sqrt\rho z}{\sqrt{1-\rho}}\big)
        - \Phi\big(\tfrac{-r-\sqrt\rho z}{\sqrt{1-\rho}}\big)\Big]^M dz

    (closed form for :math:`\rho \in \{0, 1\}`, up to 1e5 points; Gauss–Legendre quadrature
    otherwise, at most ``max_work`` points, default ``MAX_TAIL_POINTS`` = 2000, checked before
    the work starts). Independent of ``D`` (only the Gram matrix of the directions matters).
    """
    M = integer("M", M, 1)
    rho = real("correlation", correlation, 0.0, 1.0)
    r = _r_array("r", r)
    if np.any(r < 0):
        raise ValueError("r must be >= 0")
    _check_tail_work(r.size, rho, max_work)
    return _tail_and_density(r, M, rho)[0]


def empirical_tail(values, r) -> np.ndarray:
    """Fraction of ``values`` that are ``>= r`` for each threshold in ``r``."""
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
    """
    p = _params(kind, params)
    x = _r_array("x", x)
    kind = p["kind"]
    if kind == "hypercube":
        raise ValueError("kind 'hypercube' has no closed-form density here")
    if kind == "directions":
        if _explicit(p):
            raise ValueError("the density of max_i |<g,u_i>| has a closed form here only for the "
                             "equicorrelated layout")
        xx = np.maximum(x, 0.0)
        _check_tail_work(x.size, p["correlation"], max_work)
        return np.where(x < 0, 0.0, _tail_and_density(xx, p["M"], p["correlation"])[1])
    k = {"subspace": p.get("k"), "circle": 2, "adaptive": p["D"]}[kind]
    return stats.chi.pdf(x, k)


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
        np.maximum(best, np.abs(G @ U[a:a + step].T).max(axis=1), out=best)
    out[:] = best


def _chunk_numba(p, V, gen, n, out):
    kind, D = p["kind"], p["D"]
    if kind == "adaptive":
        _fused_norm(gen, D, out)
        return
    if kind == "hypercube":
        _fused_abs_sum(gen, D, out)
        return
    alpha, beta = (_equicorr_coeffs(p["M"], p["correlation"]) if kind == "directions"
                   else (1.0, 0.0))
    _fused_reflect(gen, V, _basis_width(p), alpha, beta, 1 if kind == "directions" else 0, out)


def sup_samples(kind, samples, seed, *, method="numba", threads=None, max_work=MAX_DRAWS,
                **params) -> np.ndarray:
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
    p, samples, seed = _mc_args(kind, samples, seed, params, reference=(method == "numpy"),
                                max_work=max_work)
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
    worker = (_chunk_explicit if _explicit(p) else
              _chunk_numpy if method == "numpy" else _chunk_numba)

    def run(job):
        a, b, child = job
        worker(p, Q, np.random.default_rng(child), b - a, out[a:b])

    if (method == "numba" or _explicit(p)) and threads > 1 and len(jobs) > 1:
        with ThreadPoolExecutor(max_workers=min(threads, len(jobs))) as ex:
            list(ex.map(run, jobs))
    else:
        for job in jobs:
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


def warm() -> None:
    """Compile (or load from the cache) every Numba kernel of this module on tiny inputs."""
    for kind, p in (("adaptive", {"D": 2}), ("hypercube", {"D": 2}), ("subspace", {"D": 3, "k": 2}),
                    ("directions", {"D": 3, "M": 2, "correlation": 0.5})):
        sup_samples(kind, 2, 0, threads=1, **p)
