r"""The discrete attention layer map on the unit sphere (``docs/constructions.md``, the
introduction: "The attention layer used by the sphere pages").

One layer with residual step :math:`\Delta` moves every token :math:`z_i\in S^{d-1}` by

.. math::

    z_i^{+} = \frac{z_i + \Delta\,u_i}{\lVert z_i + \Delta\,u_i\rVert},\qquad
    u_i = \sum_{j=1}^{n} w_{ij}\, V z_j ,

with attention weights

.. math::

    w_{ij}^{\mathrm{SA}} = \frac{e^{\beta\langle z_i, A z_j\rangle}}
                               {\sum_{k} e^{\beta\langle z_i, A z_k\rangle}},\qquad
    w_{ij}^{\mathrm{USA}} = \frac{e^{\beta\langle z_i, A z_j\rangle}}{n}.

:math:`u_i` is *not* projected onto the tangent space: the normalisation does that
to first order in :math:`\Delta`, so the map is a first-order method for the sphere
flow :math:`\dot z_i = P_{z_i} u_i` (global error :math:`O(\Delta)` on a fixed depth).

Numerical form (exact reformulation, used by every path). Write
:math:`V = s_V \hat V` with :math:`s_V = \max|V_{kl}|`. With a shift
:math:`m_i \ge \max_j \beta\langle z_i, A z_j\rangle` (the NumPy reference uses the
maximum itself; the kernels use the bound :math:`\beta\lVert A^\top z_i\rVert` when it
exceeds the self score :math:`\beta\langle z_i, A z_i\rangle` by at most 600 and is below
1e8, else the maximum), :math:`e_{ij} = e^{\beta\langle z_i, A z_j\rangle - m_i}\in(0,1]`,
:math:`\hat u_i = \sum_j e_{ij}\hat V z_j`, :math:`T_i=\sum_j e_{ij}` and
:math:`e^{\max}_i = \max_j e_{ij}`, the vector :math:`z_i + \Delta u_i` is, up to a positive
factor (which the normalisation removes),

- SA:  :math:`a_i z_i + c_i \hat u_i / T_i` with :math:`\log c_i - \log a_i = \log(\Delta s_V)`;
- USA: :math:`a_i z_i + c_i \hat u_i / e^{\max}_i` with
  :math:`\log c_i - \log a_i = \log(\Delta s_V/n) + M_i`, :math:`M_i = m_i + \log e^{\max}_i`
  the exact row maximum,

where the larger of :math:`a_i, c_i` is 1 (both are computed from their logarithms). Nothing
overflows or underflows, and the norm is taken after dividing by the largest entry, so the map is
computed for every :math:`\beta` and every :math:`V`; the only limit is that the scores themselves
must be floats: :math:`\beta\lVert A\rVert_2 \le 10^{300}` (``SCORE_MAX``).

Symmetric A (:math:`A = A^\top`, e.g. the default identity): the score is symmetric,
:math:`s_{ij} = s_{ji}`, and the kernels compute one exponential per unordered pair,
:math:`E_{ij} = e^{s_{ij} - q_i - q_j}` with :math:`q_i = \tfrac12\beta\lVert A z_i\rVert`
(so :math:`E_{ij}\le 1`), which feeds both rows through :math:`e^{s_{ij}} = E_{ij}
e^{q_i} e^{q_j}` (the row factor :math:`e^{q_i}` cancels in SA and is kept in the log-domain
coefficient in USA). A layer whose :math:`q_i` spread over more than 150 (or whose gap
:math:`2q_i - s_{ii}` exceeds 300) takes the per-row path instead.

The package, in reading order:

- :mod:`sim.attention.api` — :func:`simulate`, :func:`simulate_batch`,
  :func:`simulate_batch_float32` and ``_choose_kernel``, the one place that picks a kernel;
- :mod:`sim.attention.validation` — argument checks and work bounds;
- :mod:`sim.attention.reference` — :func:`simulate_reference` (plain NumPy, the validator) and
  its float32 form :func:`simulate_reference_float32`;
- :mod:`sim.attention.exp` — the vectorisable exponential (:func:`fast_exp`, :func:`fast_exp_float32`);
- :mod:`sim.attention.kernels` — per-row and symmetric kernels of one system, and the batch of
  systems in parallel;
- :mod:`sim.attention.lanes` — the "lanes" kernel for many small systems (systems in the SIMD
  lanes), written once and compiled for float64 (64 lanes) and float32 (128 lanes). The float32
  form (:func:`simulate_batch_float32`) is for callers that only count clusters; it is never
  chosen automatically.

What this does not claim: it is the idealised layer of the interacting-particle
model (one head, tied weights across layers, no MLP, no layer norm parameters);
it is not a trained Transformer.
"""

from sim.attention.api import (
    LANES_MAX_N,
    LANES_MIN_B,
    PARALLEL_MIN_N,
    simulate,
    simulate_batch,
    simulate_batch_float32,
    warm,
)
from sim.attention.exp import fast_exp, fast_exp_float32
from sim.attention.lanes import F32_SCORE_MAX, LANES_SCORE_MAX
from sim.attention.reference import simulate_reference, simulate_reference_float32
from sim.attention.validation import FLOWS, MAX_OUTPUT, MAX_WORK, SCORE_MAX

__all__ = [
    "simulate",
    "simulate_batch",
    "simulate_reference",
    "simulate_batch_float32",
    "simulate_reference_float32",
    "fast_exp",
    "fast_exp_float32",
    "warm",
    "FLOWS",
    "MAX_WORK",
    "MAX_OUTPUT",
    "SCORE_MAX",
    "PARALLEL_MIN_N",
    "LANES_MIN_B",
    "LANES_MAX_N",
    "LANES_SCORE_MAX",
    "F32_SCORE_MAX",
]
