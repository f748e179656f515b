r"""Explicit Euler against the exact flow, and the scalar case :math:`\dot V = -aV`."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from sim._validate import real
from sim.nonnormal.checks import MAX_STEPS, S_MAX, _steps, _x0
from sim.nonnormal.operator import _coupling, matrix


# ---------------------------------------------------------------------------
# explicit Euler versus the exact flow
# ---------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _euler_iterates(step, x0, n, out):  # pragma: no cover - compiled
    """out[k] = step^k x0 for k = 0..n (the same products as a Python loop of ``step @ x``);
    returns the first k whose iterate is not finite (n + 1 if none)."""
    x = x0[0]
    y = x0[1]
    out[0, 0] = x
    out[0, 1] = y
    for k in range(1, n + 1):
        x, y = step[0, 0] * x + step[0, 1] * y, step[1, 0] * x + step[1, 1] * y
        out[k, 0] = x
        out[k, 1] = y
        if not (math.isfinite(x) and math.isfinite(y)):
            return k
    return n + 1


def euler_flow(M, delta, horizon, x0, eps=0.0, *, max_work=MAX_STEPS) -> dict:
    r"""Explicit Euler :math:`x_{k+1} = (I+\Delta A_\varepsilon)x_k` versus :math:`e^{s_kA_\varepsilon}x_0`.

    For the Jordan case the iterates are known in closed form,

    .. math::

        (I+\Delta A)^k = (1-\Delta)^k\begin{pmatrix}1 & \dfrac{k\Delta M}{1-\Delta}\\
        0 & 1\end{pmatrix}\ (\Delta \ne 1),

    so the discrete amplification factor is :math:`1-\Delta` in place of
    :math:`e^{-\Delta}`: positive and decaying for :math:`\Delta<1`, sign
    alternating for :math:`1<\Delta<2`, non-decaying for :math:`\Delta\ge2`.

    Parameters
    ----------
    M : float
    delta : float
        Step size in evolution time, ``0 < delta <= 10``.
    horizon : float
        Last time, ``0 <= horizon <= 1e4``; steps ``s_k = k*delta <= horizon``,
        at most ``max_work`` of them.
    x0 : array_like, shape (2,)
    eps : float, optional
    max_work : int, keyword-only
        Bound on the number of steps (default ``MAX_STEPS`` = 1e6, a few milliseconds).

    Returns
    -------
    dict
        ``s`` (step times), ``euler`` and ``exact`` (both ``(len(s), 2)``).

    Raises
    ------
    ValueError
        for bad arguments, and when the Euler iterates leave the float range (for
        :math:`\Delta > 2` they grow like :math:`|1-\Delta|^k`): the message gives the
        last step time that is representable.
    """
    A = matrix(M, eps)
    M = float(A[0, 1])
    eps = -1.0 - float(A[1, 1])
    delta = real("delta", delta, 0.0, 10.0, lo_open=True)
    horizon = real("horizon", horizon, 0.0, S_MAX)
    x0 = _x0(x0)
    n = _steps(delta, horizon, max_work)
    s = delta * np.arange(n + 1)
    step = np.eye(2) + delta * A
    euler = np.empty((n + 1, 2))
    bad = _euler_iterates(step, x0, n, euler)
    if bad <= n:
        raise ValueError(
            f"the Euler iterates overflow float64 at step {bad} (s = {s[bad]:.6g}): "
            f"the factors 1-delta = {1 - delta:g} and 1-delta(1+eps) = "
            f"{1 - delta * (1 + eps):g} make them grow (delta > 2 is unstable); "
            f"choose horizon < {s[bad]:.6g} or a smaller delta"
        )
    exact = np.empty((n + 1, 2))
    exact[:, 0] = np.exp(-s) * x0[0] + _coupling(M, eps, s) * x0[1]
    exact[:, 1] = np.exp(-(1.0 + eps) * s) * x0[1]
    return {"s": s, "euler": euler, "exact": exact}


def euler_regime(a, delta) -> str:
    r"""Qualitative behaviour of Euler for :math:`\dot V = -aV`, :math:`a>0`.

    The Euler factor is :math:`1 - a\Delta`; for :math:`V_0 > 0`

    - ``"monotone"``:    :math:`a\Delta < 1`, positive and decreasing,
    - ``"zero"``:        :math:`a\Delta = 1`, zero after one step (still nonnegative),
    - ``"alternating"``: :math:`1 < a\Delta < 2`, tends to 0 with alternating sign,
    - ``"neutral"``:     :math:`a\Delta = 2`, alternates without decaying,
    - ``"divergent"``:   :math:`a\Delta > 2`, grows in modulus.

    Nonnegative iff :math:`a\Delta\le1`; decays iff :math:`a\Delta<2`.

    Parameters
    ----------
    a : float
        Decay rate :math:`a > 0`.
    delta : float
        Step :math:`\Delta > 0` (operator time per Euler step).

    Returns
    -------
    str
        One of the five regimes above.
    """
    a = real("a", a, 0.0, 1e6, lo_open=True)
    delta = real("delta", delta, 0.0, 1e6, lo_open=True)
    x = a * delta
    if x < 1.0:
        return "monotone"
    if x == 1.0:
        return "zero"
    if x < 2.0:
        return "alternating"
    if x == 2.0:
        return "neutral"
    return "divergent"


def euler_scalar(a, delta, horizon, V0=1.0, *, max_work=MAX_STEPS) -> dict:
    r"""Euler :math:`V_{j+1} = (1-a\Delta)V_j` versus exact :math:`V_0e^{-aj\Delta}`.

    For :math:`0 < a\Delta < 1` and :math:`j\Delta \le H`, with
    :math:`\delta = -\log(1-a\Delta) - a\Delta \le (a\Delta)^2/(2(1-a\Delta))`,

    .. math::

        |V_j - V_0e^{-aj\Delta}| = |V_0|e^{-aj\Delta}(1-e^{-j\delta})
        \le |V_0|\,j\delta \le \frac{a^2 H\Delta\,|V_0|}{2(1-a\Delta)}.

    The bound is returned as ``inf`` when :math:`a\Delta \ge 1` (it does not apply).

    Parameters
    ----------
    a : float
        Rate, ``0 < a <= 100``.
    delta : float
        Step, ``0 < delta <= 100``.
    horizon : float
        :math:`H`, ``0 <= H``, with at most ``max_work`` (default 1e6) steps.
    V0 : float, optional

    Returns
    -------
    dict
        ``s`` (step times), ``euler``, ``exact``, ``error`` (absolute),
        ``factor`` (:math:`1-a\Delta`), ``bound``, ``regime`` (see
        :func:`euler_regime`).
    """
    a = real("a", a, 0.0, 100.0, lo_open=True)
    delta = real("delta", delta, 0.0, 100.0, lo_open=True)
    horizon = real("horizon", horizon, 0.0, S_MAX)
    V0 = real("V0", V0, -1e6, 1e6)
    n = _steps(delta, horizon, max_work)
    j = np.arange(n + 1)
    s = delta * j
    factor = 1.0 - a * delta
    with np.errstate(over="ignore"):
        euler = V0 * factor**j
    if not np.all(np.isfinite(euler)):
        k = int(np.argmin(np.isfinite(euler)))
        raise ValueError(
            f"the Euler iterates overflow float64 at step {k} (s = {s[k]:.6g}): the "
            f"factor 1 - a*delta = {factor:g} has modulus > 1; choose horizon < "
            f"{s[k]:.6g} or a smaller delta"
        )
    exact = V0 * np.exp(-a * s)
    if a * delta < 1.0:
        bound = a * a * horizon * delta * abs(V0) / (2.0 * (1.0 - a * delta))
    else:
        bound = math.inf
    return {
        "s": s,
        "euler": euler,
        "exact": exact,
        "error": np.abs(euler - exact),
        "factor": factor,
        "bound": bound,
        "regime": euler_regime(a, delta),
    }
