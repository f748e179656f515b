r"""From tokens to a measure: finite n, many heads (``docs/constructions.md``, "From tokens to a measure").

Four questions about the mean-field picture, each with an exact yardstick.

**W₁ on the circle.** For probability measures :math:`\mu, \nu` on the unit circle with the
geodesic (arc-length) distance, with distribution functions :math:`F, G` on :math:`[0, 2\pi)`,

.. math::

    W_1(\mu, \nu) = \min_{c\in\mathbb R} \int_0^{2\pi} \lvert F(\theta) - G(\theta) - c\rvert\,d\theta ,

and a minimising :math:`c` is a median of :math:`F - G` under :math:`d\theta`
(:func:`w1_circle`, :func:`w1_uniform_circle`; both exact, no transport solver).

**Sampling error.** For :math:`n` iid uniform angles, :math:`\mathbb E\,W_1 \propto n^{-1/2}`
(:func:`sampling_error`). Exact companions: :func:`fixed_shift_mean` (the same integral with
:math:`c` fixed at the mean of :math:`F-G` instead of the median, an upper bound whose
expectation is :math:`2\pi\,\mathbb E\lvert \bar U - \tfrac12\rvert`, computed exactly) and
:func:`equispaced_w1` (:math:`\pi/(2n)`, the best any :math:`n` equal atoms can do).

**Many heads.** :func:`head_average_error`: the velocity averaged over :math:`H` iid heads
against the velocity averaged over the head distribution; :math:`O(H^{-1/2})`, with the exact
large-:math:`H` constant and an exact upper bound from :func:`head_error_theory`.

**Stability.** :func:`stability`: an :math:`n`-token system against a large reference system on
the circle, with the Gronwall bound :math:`e^{C\tau}W_1(0)` for a constant derived in
:func:`stability_constant`.

What this does not claim: the tokens of a real sequence are not iid samples; the constant of the
stability bound is explicit, not sharp; the rates on :math:`S^{d-1}` for :math:`d > 2` are quoted
in the page text, not computed here.

References
----------
``docs/constructions.md``, section "From tokens to a measure: finite n, many heads" (stability by transport,
sampling rates, the limit of many heads).
"""

from __future__ import annotations

import numpy as np

from sim.measures.circle import equispaced_w1, fixed_shift_mean, sampling_error, w1_circle, w1_uniform_circle
from sim.measures.heads import GH_RTOL, _head_sum, head_average_error, head_error_theory, head_mean_velocity  # noqa: F401
from sim.measures.limits import (  # noqa: F401 - the bounds, sim.measures.<NAME> as before
    EXACT_IRWIN_HALL_MAX,
    MAX_ANGLE,
    MAX_HEAD_WORK,
    MAX_POINTS,
    MAX_SAMPLES,
    MAX_STABILITY_WORK,
    TWO_PI,
)
from sim.measures.transport import initial_cdf, initial_density, initial_quantile, stability, stability_constant

__all__ = [
    "w1_circle",
    "w1_uniform_circle",
    "sampling_error",
    "fixed_shift_mean",
    "equispaced_w1",
    "head_average_error",
    "head_error_theory",
    "head_mean_velocity",
    "stability",
    "stability_constant",
    "initial_density",
    "initial_cdf",
    "initial_quantile",
]


def warm() -> None:
    """Compile (or load from cache) the head-sum kernel on tiny inputs (see :mod:`sim.warm`)."""
    Z = np.eye(3)
    for d in (2, 3):
        _head_sum(Z[:, :d].copy(), np.zeros((1, d, d)), 1.0, np.zeros((3, d)))
