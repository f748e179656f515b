"""Test-only references for sim/low_temperature.py: the zero-temperature flow and the RMS distance
between token sets, to check the page numbers against.
"""

from __future__ import annotations

import math

import numpy as np

from scipy.integrate import solve_ivp

from sim.low_temperature import MAX_WORK, _zero_prep
from sim import _validate as _v

#: tolerance (relative and absolute) of the time change in :func:`zero_temperature_flow`
_RTOL = 1e-12


def zero_temperature_flow(Z0, B, V, t, *, max_work: float = MAX_WORK) -> np.ndarray:
    r"""The zero-temperature (:math:`\beta=\infty`, mean-field) flow of every token at depths t.

    Each token follows :math:`\dot z = P_z S z/\lVert B^\top z\rVert` on its own. Along the
    Oja path :math:`y(s) = e^{sS}z_0/\lVert e^{sS}z_0\rVert` (exact, in the eigenbasis of S,
    shifted by :math:`\mu_1` so nothing overflows) the depth is a time change,

    .. math::

        z(t) = y(s(t)),\qquad \frac{ds}{dt} = \frac{1}{\lVert B^\top y(s)\rVert},\quad s(0)=0,

    integrated by ``scipy.integrate.solve_ivp`` (DOP853, tolerances 1e-12: errors about 1e-10 on
    the page's depths). For orthogonal B, :math:`s = t` exactly.

    Parameters
    ----------
    Z0 : array_like, shape (n, d)
        Initial tokens (nonzero rows, normalised here).
    B, V : array_like, shape (d, d)
        As in :func:`run` (:math:`VB^\top` symmetric, B invertible).
    t : array_like, shape (m,)
        Depths, ``>= 0`` and nondecreasing.
    max_work : float
        Bound on the estimated work ``1e3 * (t_max * max(1, ||S||) * cond(B) + 1) * n * d``.

    Returns
    -------
    ndarray, shape (m, n, d)
    """
    Z0, B, S = _zero_prep(Z0, B, V)
    t = _v.finite_array("t", t, ndim=1)
    if t.size and (t[0] < 0 or np.any(np.diff(t) < 0)):
        raise ValueError("t must be nonnegative and nondecreasing")
    n, d = Z0.shape
    mu, Q = np.linalg.eigh(S)
    C0 = Z0 @ Q  # coordinates in the eigenbasis
    shift = mu - mu[-1]  # <= 0

    def path(s):  # s: (n,) -> y(s): (n, d)
        Y = (C0 * np.exp(np.outer(s, shift))) @ Q.T
        return Y / np.linalg.norm(Y, axis=1, keepdims=True)

    out = np.empty((t.size, n, d))
    orth = np.allclose(B @ B.T, np.eye(d), atol=1e-13, rtol=0)
    if orth:
        for k, tk in enumerate(t):
            out[k] = path(np.full(n, tk))
        return out
    tmax = float(t[-1]) if t.size else 0.0
    max_work = _v.real("max_work", max_work, 1.0)
    est = (tmax * max(1.0, float(np.max(np.abs(mu)))) * np.linalg.cond(B) + 1.0) * 1e3 * n * d
    if est > max_work:
        raise ValueError(f"t up to {tmax:.3g} for {n} tokens: estimated work {est:.3g} > max_work = {max_work:.3g}")

    def rate(_, s):
        return 1.0 / np.linalg.norm(path(s) @ B, axis=1)  # ds/dt = 1 / ||B^T y(s)||

    if tmax == 0.0:
        out[:] = Z0
        return out
    sol = solve_ivp(rate, (0.0, tmax), np.zeros(n), method="DOP853", t_eval=t, rtol=_RTOL, atol=_RTOL)
    if not sol.success:  # pragma: no cover - smooth, bounded right-hand side
        raise ValueError(f"the time change could not be integrated: {sol.message}")
    for k in range(t.size):
        out[k] = path(sol.y[:, k])
    return out


def rms_distance(X, Y) -> float:
    r"""Root-mean-square distance of matched rows, :math:`\big(\frac1n\sum_i\lVert x_i-y_i\rVert^2\big)^{1/2}`.

    For X the tokens and Y their images under another flow from the same start, this is the
    cost of the coupling "same token", so it bounds :math:`W_2` of the two empirical measures
    from above.
    """
    X = _v.finite_array("X", X, ndim=2)
    Y = _v.finite_array("Y", Y, ndim=2)
    if X.shape != Y.shape or X.shape[0] < 1:
        raise ValueError(f"X and Y must have the same nonempty shape, got {X.shape} and {Y.shape}")
    D = X - Y
    return float(math.sqrt(float(np.einsum("ij,ij->", D, D)) / X.shape[0]))
