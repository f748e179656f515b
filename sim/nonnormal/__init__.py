r"""Non-normal transient growth: stable eigenvalues, large finite-time amplification.

The model operator (``docs/constructions.md``, "Non-normal transient growth") is

.. math::

    A = \begin{pmatrix} -1 & M \\ 0 & -1 \end{pmatrix}, \qquad
    e^{sA} = e^{-s} \begin{pmatrix} 1 & sM \\ 0 & 1 \end{pmatrix}.

Both eigenvalues equal :math:`-1`, so every solution of :math:`\dot x = Ax`
decays eventually, yet :math:`\|e^{sA} e_2\| = e^{-s}\sqrt{1+s^2M^2}` equals
:math:`e^{-1}\sqrt{1+M^2} \ge |M|/e` at :math:`s=1`. The variable ``s`` is the
evolution time of this operator; it is **not** training time and **not** a
layer index.

What the module computes

- :func:`response`, :func:`operator_norm`, :func:`peak`, :func:`circle_image`:
  the Jordan-block flow, its induced 2-norm (closed form) and the maximum of
  that norm over :math:`s \ge 0`.
- :func:`matrix`, :func:`flow`, :func:`flow_norm`, :func:`kappa`: the
  diagonalisable variant :math:`A_\varepsilon = [[-1, M], [0, -1-\varepsilon]]`,
  its eigenvector condition number and the bound
  :math:`\|e^{sA_\varepsilon}\| \le \kappa(V)\,e^{-s}`.
- :func:`pseudospectrum` (Numba, parallel over grid rows) and
  :func:`pseudospectrum_reference` (NumPy SVD): :math:`\sigma_{\min}(zI-A)` on a
  grid of complex :math:`z`.
- :func:`jacobian_products`: ordered products of random near-identity layer
  Jacobians against the product of their norms and against the reversed order.
- :func:`euler_flow`, :func:`euler_scalar`, :func:`euler_regime`: explicit Euler
  against the exact flow, and the scalar case :math:`\dot V = -aV`.

What it does NOT claim: that trained Transformers contain this mechanism. The
2×2 operator shows that spectra and norms answer different questions; whether a
given network amplifies perturbations must be read off its own Jacobians.
"""

from sim.nonnormal.checks import (  # noqa: F401
    EPS_MAX,
    MAX_CIRCLE,
    MAX_DEPTH,
    MAX_DEPTH_WORK,
    MAX_DIM,
    MAX_GRID,
    MAX_STEPS,
    MAX_TIMES,
    M_MAX,
    S_MAX,
    _M,
    _eps,
    _steps,
    _times,
    _x0,
)
from sim.nonnormal.operator import (  # noqa: F401
    _coupling,
    _norm2x2,
    circle_image,
    flow,
    flow_norm,
    flow_norm_grid,
    kappa,
    matrix,
    operator_norm,
    peak,
    response,
)
from sim.nonnormal.pseudospectra import (  # noqa: F401
    _check_grid,
    _sigma_min_kernel,
    kreiss_lower_bound,
    pseudospectrum,
    pseudospectrum_reference,
)
from sim.nonnormal.jacobians import (  # noqa: F401
    _random_jacobians,
    jacobian_products,
)
from sim.nonnormal.euler import (  # noqa: F401
    _euler_iterates,
    euler_flow,
    euler_regime,
    euler_scalar,
)

__all__ = [
    "matrix",
    "response",
    "operator_norm",
    "peak",
    "circle_image",
    "flow",
    "flow_norm",
    "flow_norm_grid",
    "kappa",
    "pseudospectrum",
    "pseudospectrum_reference",
    "kreiss_lower_bound",
    "jacobian_products",
    "euler_flow",
    "euler_scalar",
    "euler_regime",
]


def warm() -> None:
    """Compile (or load from cache) the Numba kernels on tiny inputs; see :mod:`sim.warm`."""
    pseudospectrum(matrix(2.0), [-1.0, 0.0], [0.0, 1.0])
    euler_flow(2.0, 0.5, 1.0, [0.0, 1.0])
