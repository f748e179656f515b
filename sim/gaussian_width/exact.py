"""Exact Gaussian widths and the bounds stated on the page, for every kind of set."""

from __future__ import annotations

import math

import numpy as np

from sim.gaussian_width.params import _explicit, _params, max_abs_bound
from sim.gaussian_width.tails import _directions_mean


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
    series = (-1.0 / 8.0 + y * (1.0 / 192.0 + y * (-1.0 / 640.0 + y * (17.0 / 14336.0 - y * 31.0 / 18432.0)))) / x
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
            raise ValueError(
                "layout 'random' is a different set for every seed: pass "
                "vectors=random_directions(M, D, seed) to get its exact value"
            )
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
    raise ValueError(
        f"no exact value for {M} general directions in D = {D} >= 3 (only the "
        "equicorrelated layout, D <= 2 or M = 1 have one): use monte_carlo"
    )


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

    Parameters
    ----------
    kind : str
        ``"subspace"``, ``"adaptive"``, ``"circle"``, ``"directions"`` or ``"hypercube"``.
    **params
        The family's parameters, as for :func:`exact` (``D``, ``k``, ``M``, ``correlation``, ``layout``).

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
