r"""Gaussian width of a set of directions: exact values, bounds, Monte Carlo.

The Gaussian width of a set :math:`S \subset \mathbb{R}^D` is

.. math::

    w(S) = \mathbb{E} \sup_{u \in S} \langle g, u \rangle, \qquad g \sim N(0, I_D).

Five families (``kind``), see ``docs/constructions.md``, section "Gaussian width":

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

from sim.gaussian_width.params import (  # noqa: F401
    CHUNK_NUMBERS,
    KINDS,
    LAYOUTS,
    MAX_BASIS,
    MAX_DRAWS,
    MAX_FLOPS,
    MAX_SAMPLES,
    MAX_TAIL_POINTS,
    REFLECTIONS,
    _MAX_D_EXACT,
    _PARAMS,
    _basis_width,
    _explicit,
    _mc_args,
    _params,
    _vectors,
    max_abs_bound,
    random_directions,
)
from sim.gaussian_width.exact import (  # noqa: F401
    _chi_mean,
    _explicit_mean,
    bound,
    exact,
)
from sim.gaussian_width.tails import (  # noqa: F401
    _GL_W,
    _GL_X,
    _H,
    _basis,
    _breaks,
    _check_tail_work,
    _directions_mean,
    _equicorr_coeffs,
    _gl_intervals,
    _gl_nodes,
    _one_minus_pow,
    _phi,
    _r_array,
    _reflectors,
    _set_basis,
    _streams,
    _tail_and_density,
    empirical_tail,
    sup_density,
    tail_bound,
    tail_exact,
)
from sim.gaussian_width.monte_carlo import (  # noqa: F401
    _chunk_explicit,
    _chunk_numba,
    _chunk_numpy,
    _chunks,
    _fused_abs_sum,
    _fused_norm,
    _fused_reflect,
    monte_carlo,
    one_draw,
    sup_samples,
)

__all__ = [
    "KINDS",
    "exact",
    "bound",
    "monte_carlo",
    "sup_samples",
    "sup_density",
    "tail_bound",
    "tail_exact",
    "empirical_tail",
    "one_draw",
    "max_abs_bound",
    "random_directions",
    "warm",
]


def warm() -> None:
    r"""Compile (or load from the cache) every Numba kernel of this module on tiny inputs.

    Returns
    -------
    None
    """
    for kind, p in (
        ("adaptive", {"D": 2}),
        ("hypercube", {"D": 2}),
        ("subspace", {"D": 3, "k": 2}),
        ("directions", {"D": 3, "M": 2, "correlation": 0.5}),
    ):
        sup_samples(kind, 2, 0, threads=1, **p)
