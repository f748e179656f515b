"""Test-only helpers for sim/gaussian_width.py: explicit equicorrelated directions, to check the
law that the module's Monte Carlo uses without building them."""

from __future__ import annotations

import numpy as np

from sim._validate import integer
from sim.gaussian_width import MAX_BASIS, _equicorr_coeffs, _params, _set_basis


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
