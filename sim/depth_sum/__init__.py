r"""How small per-layer pieces add up over depth (``docs/constructions.md``, "Depth: how per-layer
pieces add up").

Depth index. Everything here is indexed by the *layer index* :math:`\ell=1,\dots,L`
(depth :math:`L`); training time appears only in :func:`one_step`, as a single step.

Scaled sum of per-layer pieces
------------------------------
With :math:`\xi_j = \mu + \sigma x_j` and :math:`(x_1,\dots,x_L)` standard normals of
common pairwise correlation :math:`\rho`,

.. math::

    S_L = L^{-\alpha}\sum_{j=1}^{L}\xi_j \sim
    N\!\bigl(\mu L^{1-\alpha},\;\sigma^2 L^{-2\alpha}\,(L + L(L-1)\rho)\bigr).

:math:`\rho=0`: independent terms, variance :math:`\sigma^2L^{1-2\alpha}` (law independent
of :math:`L` at :math:`\alpha=\tfrac12`); :math:`\rho=1`: identical terms, variance
:math:`\sigma^2L^{2-2\alpha}`. The covariance matrix :math:`\sigma^2[(1-\rho)I+\rho\mathbf 1\mathbf 1^\top]`
is positive semidefinite iff :math:`-1/(L-1)\le\rho\le1`. In general

.. math::

    \operatorname{Var}\Bigl(\sum_j Y_j\Bigr) = \sum_j\operatorname{Var}(Y_j)
    + 2\sum_{i<j}\operatorname{Cov}(Y_i,Y_j),

with :math:`L(L-1)/2` covariance terms.

Linear residual network at initialisation
-----------------------------------------
:math:`z_{\ell+1}=(I+L^{-\alpha}W_\ell)z_\ell`, :math:`W_\ell` with iid :math:`N(0,1/N)` entries,
independent of :math:`z_\ell`:

.. math::

    \mathbb E\lVert z_L\rVert^2 = (1+L^{-2\alpha})^L\,\lVert z_0\rVert^2
    \;\to\; e \quad(\alpha=\tfrac12).

One SGD step on a scalar product network
----------------------------------------
:math:`f=\prod_{\ell=1}^L(1+L^{-\alpha}w_\ell)`, :math:`w=0`, loss :math:`f^2/2`, learning
rate :math:`cL^{2\alpha-1}` (or a sign update with :math:`cL^{\alpha-1}`): every multiplier
becomes :math:`1-c/L`, so :math:`f(1)=(1-c/L)^L\to e^{-c}`, while the linearisation of the whole
network at :math:`w=0` predicts :math:`1-c`.

What this does not claim: the sums use independent (or equicorrelated) Gaussian
pieces chosen by construction; real residual branches depend on earlier layers and
become correlated in training. The residual-network identity is a second moment at
initialisation, not a statement about every path or about trained weights. The zero
initialisation of the one-step example is deliberately special.

Implementations. The Gaussian sums are drawn in two parts per sample, the common normal
:math:`c` and the sum :math:`E=\sum_j e_j` of the :math:`L` independent normals
(:func:`unit_sums`); every :math:`S_L` is then the exact linear combination
:math:`L^{-\alpha}\bigl(L\mu+\sigma(\sqrt{1-\rho}\,E+L\sqrt\rho\,c)\bigr)` of the pieces
(:func:`sums_from_units`), so one set of draws serves every :math:`\alpha,\sigma,\mu,\rho`
(common random numbers). The draws and the residual-network Monte Carlo have Numba kernels
(:func:`_unit_sums_kernel`, :func:`_residual_kernel`) that take the ``np.random.Generator``
and draw inside the loop, in exactly the order of their plain-NumPy references
(:func:`_unit_sums_reference`, :func:`_residual_reference`), which draw whole arrays; the
tests compare the two paths on the same seeds.

Pieces and draw order. The correlated standard normals of one sample are
:math:`x_j=\sqrt\rho\,c+\sqrt{1-\rho}\,e_j` for :math:`\rho\ge0` (one common normal :math:`c`), and
:math:`\sqrt{1-\rho}\,(e_j-\bar e)+\sqrt{1+(L-1)\rho}\,\bar e` for :math:`\rho<0`, covariance
:math:`(1-\rho)I+\rho\mathbf 1\mathbf 1^\top`. Per block of samples the common normals are drawn
first, then the :math:`e_j` row by row; every function here draws in this order, so the moments
below are those of the pieces drawn whole (the test suite checks them against a plain reference
that keeps every piece), and :func:`sample` adds up exactly these draws.
"""

from sim.depth_sum.checks import (  # noqa: F401
    ALPHA_MAX,
    L_MAX_COV,
    L_MAX_EXACT,
    L_MAX_RESIDUAL,
    MAX_COV_WORK,
    MAX_PATH_OUTPUT,
    MAX_RESIDUAL_WORK,
    MAX_SUM_WORK,
    SEED_MAX,
    WIDTH_MAX,
    _BLOCK,
    _check_work,
    _trials,
)
from sim.depth_sum.exact import (  # noqa: F401
    _depths,
    _variance,
    increment_rms,
    mean,
    mean_curve,
    one_step,
    prob_within,
    prob_within_curve,
    residual_energy,
    sgd_step,
    variance,
    variance_curve,
)
from sim.depth_sum.sums import (  # noqa: F401
    _block_rows,
    _sum_args,
    _unit_sums_kernel,
    _unit_sums_reference,
    _units_args,
    sample,
    sums_from_units,
    unit_sums,
)
from sim.depth_sum.moments import (  # noqa: F401
    MAX_PATH_WORK,
    _column_moments_kernel,
    _column_moments_reference,
    _pair_sum,
    _path_moments_kernel,
    _path_moments_reference,
    _shape_rho,
    column_moments,
    covariance_from_moments,
    path_moments,
    paths_from_moments,
)
from sim.depth_sum.residual import (  # noqa: F401
    RESIDUAL_SAMPLER,
    RESIDUAL_SAMPLERS,
    _residual_args,
    _residual_blocks,
    _residual_kernel,
    _residual_norms,
    _residual_norms_vector,
    _residual_reference,
    _residual_sample,
    _residual_vector_kernel,
    _residual_vector_reference,
    residual_energy_mc,
    residual_energy_profile,
)

__all__ = [
    "variance",
    "mean",
    "variance_curve",
    "mean_curve",
    "prob_within_curve",
    "unit_sums",
    "sums_from_units",
    "path_moments",
    "paths_from_moments",
    "column_moments",
    "covariance_from_moments",
    "increment_rms",
    "prob_within",
    "residual_energy",
    "residual_energy_mc",
    "residual_energy_profile",
    "sample",
    "one_step",
    "sgd_step",
]


def warm() -> None:
    """Compile (or load from cache) the Numba kernels on tiny inputs; see :mod:`sim.warm`."""
    unit_sums(2, 2, 0, use_numba=True)
    path_moments(2, 2, 0, [1], keep=1, use_numba=True)
    column_moments(2, 2, 0, use_numba=True)
    _residual_norms(0.5, 2, 2, 2, 0, use_numba=True)
    _residual_norms_vector(0.5, 2, 2, 2, 0, use_numba=True)
