"""The kinds of set, their parameters and the work bounds of :mod:`sim.gaussian_width`, with
the argument checks that raise ``ValueError`` naming the argument.
"""

from __future__ import annotations

import math

import numpy as np

from sim._validate import choice, finite_array, integer, real


KINDS = ("subspace", "directions", "adaptive", "hypercube", "circle")
_PARAMS = {  # required, optional-with-default
    "subspace": (("D", "k"), {}),
    "directions": (("D", "M"), {"correlation": 0.0, "layout": "equicorrelated", "vectors": None}),
    "adaptive": (("D",), {}),
    "hypercube": (("D",), {}),
    "circle": (("D",), {}),
}
_MAX_D_EXACT = 10**12

# Compute caps for Monte Carlo (each keeps one call to a few seconds at most).
MAX_SAMPLES = 2_000_000  # length of the returned sup array (16 MB)
MAX_DRAWS = 50_000_000  # samples * D normals drawn
MAX_BASIS = 4_000_000  # D * k (or D * M) entries of an explicit basis (reference, pictures)
MAX_FLOPS = 2_000_000_000  # samples*D*k (or M): the NumPy reference's projection
MAX_TAIL_POINTS = 2_000  # r points of the correlated tail/density (a 2000-node quadrature each)
LAYOUTS = ("equicorrelated", "random", "given")
REFLECTIONS = 3  # Householder reflections that orient subspace, circle, directions
CHUNK_NUMBERS = 1 << 17  # normals per chunk (1 MiB of float64)


# --------------------------------------------------------------------------
# argument handling
# --------------------------------------------------------------------------
def _params(kind, params):
    kind = choice("kind", kind, KINDS)
    required, optional = _PARAMS[kind]
    for name in params:
        if name not in required and name not in optional:
            raise ValueError(
                f"{name} is not a parameter of kind {kind!r} (expected {', '.join(required + tuple(optional))})"
            )
    params = dict(params)
    if kind == "directions" and params.get("vectors") is not None:
        U = finite_array("vectors", params["vectors"], ndim=2)
        if U.shape[0] < 1 or U.shape[1] < 1:
            raise ValueError(f"vectors must be an M x D matrix with M, D >= 1, got shape {U.shape}")
        for name, n in (("M", U.shape[0]), ("D", U.shape[1])):
            if params.setdefault(name, n) != n:
                raise ValueError(f"{name} = {params[name]!r} does not match vectors of shape {U.shape} (M x D)")
        if U.size > MAX_BASIS:
            raise ValueError(f"vectors has {U.size} entries > {MAX_BASIS}")
        big = np.max(np.abs(U), axis=1, keepdims=True)
        if np.any(big == 0.0):
            raise ValueError(
                "vectors has a zero row: every direction must be a nonzero vector (rows are normalised to unit length)"
            )
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
            raise ValueError(f"k must be <= D (a k-dimensional subspace of R^D), got k={out['k']} > D={out['D']}")
    if kind == "directions":
        out["M"] = integer("M", params["M"], 1)
        out["layout"] = choice("layout", params.get("layout", "equicorrelated"), LAYOUTS)
        out["correlation"] = real("correlation", params.get("correlation", 0.0), 0.0, 1.0)
        if out["layout"] == "equicorrelated" and out["M"] > out["D"]:
            raise ValueError(
                f"M must be <= D for layout 'equicorrelated' (M unit vectors with "
                f"equal pairwise correlation < 1 span M dimensions), got M={out['M']} "
                f"> D={out['D']}; for more directions than dimensions pass "
                "layout='random' (M independent uniform unit directions) or "
                "vectors=<M x D matrix>"
            )
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

    Parameters
    ----------
    M : int
        Number of directions.
    D : int
        Dimension.
    seed : int
        Seed (its own stream, see above).

    Returns
    -------
    ndarray, shape (M, D)
        Unit rows :math:`u_i = g_i/\lVert g_i\rVert`.
    """
    M = integer("M", M, 1)
    D = integer("D", D, 1, _MAX_D_EXACT)
    seed = integer("seed", seed, 0, 2**63 - 1)
    if D * M > MAX_BASIS:
        raise ValueError(f"D*M = {D * M} exceeds {MAX_BASIS}: lower D or M")
    stream = np.random.SeedSequence(seed).spawn(3)[2]  # children 0, 1: orientation and g
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
        raise ValueError(
            f"samples*D = {samples * D} exceeds max_work = {max_work:.3g}: lower "
            "samples or D, or pass a larger max_work="
        )
    if _explicit(p):  # every path projects g on the M x D matrix
        flops = float(samples) * D * p["M"]
        if flops > MAX_FLOPS * max_work / MAX_DRAWS:
            raise ValueError(
                f"samples*D*M = {flops:.3g} exceeds {MAX_FLOPS * max_work / MAX_DRAWS:.3g}"
                " (max_work scales it): lower samples, D or M, or pass a larger "
                "max_work="
            )
        return p, samples, seed
    width = _basis_width(p)
    if width and reference:  # only the NumPy reference builds the basis and projects on it
        if D * width > MAX_BASIS:
            raise ValueError(
                f"D*{'k' if kind == 'subspace' else 'M'} = {D * width} exceeds "
                f"{MAX_BASIS}: lower D or {'k' if kind == 'subspace' else 'M'}"
            )
        flops = samples * D * width
        if flops > MAX_FLOPS:
            raise ValueError(
                f"samples*D*{'k' if kind == 'subspace' else 'M'} = {flops:.3g} "
                f"exceeds {MAX_FLOPS:.3g}: lower samples, D or "
                f"{'k' if kind == 'subspace' else 'M'}"
            )
    return p, samples, seed


def _basis_width(p):
    return {"subspace": p.get("k"), "circle": 2, "directions": p.get("M")}.get(p["kind"], 0)


def max_abs_bound(M) -> float:
    r"""Upper bound :math:`\sqrt{2\log(2M)}` on :math:`\mathbb{E}\max_{i\le M}|X_i|`.

    Valid for any :math:`M` centred Gaussians :math:`X_i` with variance at most
    one, however correlated (moment generating function + Jensen, then optimise
    the free parameter).

    Parameters
    ----------
    M : int
        Number of Gaussians, :math:`M \ge 1`.

    Returns
    -------
    float
        :math:`\sqrt{2\log(2M)}`.
    """
    M = integer("M", M, 1)
    return math.sqrt(2.0 * math.log(2.0 * M))
