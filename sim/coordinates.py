r"""Coordinates, metrics and limits: what a change of description keeps (``docs/constructions.md``,
"Coordinates, metrics and limits").

**Metric.** The function :math:`f_{a,b}(x) = a b x` is described by :math:`\theta = ab`. With the
loss :math:`L(\theta) = \tfrac12(\theta - y)^2`, Euclidean gradient flow in :math:`(a, b)`,

.. math::

    \dot a = -(ab - y)\,b,\qquad \dot b = -(ab - y)\,a,

conserves :math:`c = a^2 - b^2` and gives :math:`\dot\theta = -\sqrt{c^2 + 4\theta^2}\,(\theta - y)`,
whereas the pulled-back (minimum-norm) metric gives :math:`\dot\theta = -(\theta - y)`, i.e.
:math:`\theta(t) = y + (\theta_0 - y)e^{-t}`. Same function, same loss, another clock and curve.

Closed form of the Euclidean flow (used here, no ODE solver): in the light-cone coordinates
:math:`p = a + b`, :math:`q = a - b` one has :math:`\dot p = -(\theta - y)p`,
:math:`\dot q = (\theta - y)q`, :math:`pq = c`, :math:`\theta = (p^2 - q^2)/4`. So
:math:`w = p^2` solves the constant-coefficient Riccati equation
:math:`\dot w = -\tfrac12 (w - w_+)(w - w_-)`, :math:`w_\pm = 2y \pm R`, :math:`R = \sqrt{4y^2 + c^2}`,
whose solution, with :math:`E = e^{-Rt}`, is

.. math::

    w(t) = \frac{w_0\,(w_+ - w_- E) + c^2 (1 - E)}{w_0 (1 - E) + w_+ E - w_-}

(every term is :math:`\ge 0`: no cancellation). :math:`v = q^2` obeys the same law with
:math:`y \to -y`. For :math:`a_0 = b_0` and :math:`\theta_0, y > 0` this is the logistic curve
:math:`\theta(t) = y / (1 + (y/\theta_0 - 1)e^{-2yt})`.

**Limit.** The loops :math:`x_n(s) = n^{-1/2}(\cos ns, \sin ns)`, :math:`s \in [0, 2\pi]`, tend to
the point 0 uniformly, yet their Lévy area :math:`\tfrac12\int (x^1 dx^2 - x^2 dx^1) = \pi` for
every :math:`n`. The linear equation :math:`dy = (A\,dx^1 + B\,dx^2)\,y` reads that area:
:math:`y_n(2\pi) \to \exp(\pi[B, A])\,y_0` (:math:`[B, A] = BA - AB`, error :math:`\propto n^{-1/2}`),
not :math:`y_0`, the answer on the limit path.

References
----------
``docs/constructions.md``, section "Coordinates, metrics and limits" (metrics, limits of loops).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.integrate import solve_ivp
from scipy.linalg import expm

from sim import _validate as _v

__all__ = ["theta_flow", "ab_flow", "levy_area", "driven_endpoint", "area_limit", "gradient_steps", "loop"]

METRICS = ("euclidean", "pullback")
VALUE_MAX = 1e3  # |a0|, |b0|, |y|: beyond this the flow is a numerical stunt, not a lesson
MAX_TIMES = 1_000_000  # default work bound: entries of t, samples of a loop, steps
DIM_MAX = 16  # y0 in R^d, d <= DIM_MAX
MATRIX_MAX = 50.0  # largest |entry| of A, B
N_MAX = 1_000_000  # loops x_n with n <= N_MAX turns
PER_TURN = 1024  # default samples per turn of x_n in levy_area
_RTOL, _ATOL = 1e-13, 1e-15


# --------------------------------------------------------------------------- metric
def _check_abt(a0, b0, y, t, max_work):
    a0 = _v.real("a0", a0, -VALUE_MAX, VALUE_MAX)
    b0 = _v.real("b0", b0, -VALUE_MAX, VALUE_MAX)
    y = _v.real("y", y, -VALUE_MAX, VALUE_MAX)
    max_work = _v.integer("max_work", max_work, 1)
    t = _v.finite_array("t", t, ndim=1, max_size=max_work)
    if t.size and t.min() < 0:
        raise ValueError(f"t must be >= 0 (training time), got min {t.min()}")
    return a0, b0, y, t


def _riccati_square(s0: float, y: float, c2: float, t: np.ndarray) -> np.ndarray:
    r"""Solution :math:`w(t) \ge 0` of :math:`\dot w = -\tfrac12 w^2 + 2yw + \tfrac12 c^2`, :math:`w(0) = s_0`.

    Written so that every term is non-negative (roots :math:`w_+ \ge 0 \ge w_-` with
    :math:`w_+ w_- = -c^2` taken from the larger one), hence accurate to rounding.
    """
    R = math.hypot(2.0 * y, math.sqrt(c2))
    if R == 0.0:  # y = 0 and c = 0: w' = -w²/2
        return s0 / (1.0 + 0.5 * s0 * t)
    big = R + 2.0 * abs(y)  # the root of larger modulus, > 0
    small = c2 / big  # the other one's modulus
    wp, mwm = (big, small) if y >= 0 else (small, big)  # w_+ and -w_-
    E = np.exp(-R * t)
    one_m_E = -np.expm1(-R * t)
    num = s0 * (wp + mwm * E) + c2 * one_m_E
    den = s0 * one_m_E + wp * E + mwm
    return num / den


def _pq(a0: float, b0: float, y: float, t: np.ndarray):
    """p = a + b and q = a − b of the Euclidean flow at times t (signs of p, q never change)."""
    p0, q0 = a0 + b0, a0 - b0
    c2 = (p0 * q0) ** 2
    w = _riccati_square(p0 * p0, y, c2, t)
    v = _riccati_square(q0 * q0, -y, c2, t)
    return math.copysign(1.0, p0) * np.sqrt(w), math.copysign(1.0, q0) * np.sqrt(v)


def theta_flow(a0, b0, y, t, metric="euclidean", *, max_work: int = MAX_TIMES) -> np.ndarray:
    r"""θ(t) = a(t) b(t) of gradient flow on :math:`L(\theta) = \tfrac12(\theta - y)^2`.

    Parameters
    ----------
    a0, b0 : float
        Initial parameters, :math:`|a_0|, |b_0| \le 10^3`; :math:`\theta_0 = a_0 b_0`.
    y : float
        Target, :math:`|y| \le 10^3`.
    t : array_like, 1-D
        Training times :math:`t \ge 0`.
    metric : {"euclidean", "pullback"}
        ``"euclidean"``: gradient flow in :math:`(a, b)`,
        :math:`\dot\theta = -\sqrt{c^2 + 4\theta^2}\,(\theta - y)` with :math:`c = a_0^2 - b_0^2`,
        in closed form (module docstring). ``"pullback"``: the minimum-norm pulled-back metric,
        :math:`\theta(t) = y + (\theta_0 - y)e^{-t}`.
    max_work : int
        Largest accepted ``len(t)``.

    Returns
    -------
    ndarray, shape (len(t),)
        Accurate to rounding (relative :math:`\sim 10^{-15}` away from θ = 0).
    """
    a0, b0, y, t = _check_abt(a0, b0, y, t, max_work)
    metric = _v.choice("metric", metric, METRICS)
    if metric == "pullback":
        return y + (a0 * b0 - y) * np.exp(-t)
    p, q = _pq(a0, b0, y, t)
    return 0.25 * (p * p - q * q)


def ab_flow(a0, b0, y, t, *, max_work: int = MAX_TIMES) -> np.ndarray:
    r"""The path :math:`(a(t), b(t))` of Euclidean gradient flow in :math:`(a, b)`.

    It stays on the hyperbola :math:`a^2 - b^2 = a_0^2 - b_0^2` (conserved, since
    :math:`\tfrac{d}{dt}(a^2 - b^2) = -2(\theta - y)(ab - ba) = 0`). Closed form via
    :math:`p = a + b`, :math:`q = a - b` (module docstring); arguments as :func:`theta_flow`.

    Parameters
    ----------
    a0, b0 : float
        Start of the two coordinates; :math:`\theta(0) = a_0 b_0`.
    y : float
        Target of :math:`f(a, b) = \tfrac12(ab - y)^2`.
    t : array_like
        Training times :math:`t \ge 0` (at most ``max_work`` of them).
    max_work : int
        Largest accepted number of times.

    Returns
    -------
    ndarray, shape (len(t), 2)
        Columns a and b.
    """
    a0, b0, y, t = _check_abt(a0, b0, y, t, max_work)
    p, q = _pq(a0, b0, y, t)
    return np.column_stack([0.5 * (p + q), 0.5 * (p - q)])


def gradient_steps(a0, b0, y, dt, steps, metric="euclidean", *, max_work: int = MAX_TIMES) -> np.ndarray:
    r"""The explicit step-size-Δ iteration of either flow, in the coordinates (a, b).

    Euclidean: :math:`(a, b) \leftarrow (a, b) - \Delta\,(ab - y)\,(b, a)`. Pullback
    (minimum-norm step :math:`\eta \leftarrow \eta - \Delta\,H^+ (\theta - y)`,
    :math:`H = (b, a)`): :math:`(a, b) \leftarrow (a, b) - \Delta\,(ab - y)\,(b, a)/(a^2 + b^2)`.
    Both are first-order: the gap to :func:`theta_flow` at :math:`t = k\Delta` is :math:`O(\Delta)`.

    Parameters
    ----------
    a0, b0, y : float
        As :func:`theta_flow`.
    dt : float
        Step size :math:`0 < \Delta \le 1`.
    steps : int
        Number of steps, ``0 <= steps <= max_work``.
    metric : {"euclidean", "pullback"}

    Returns
    -------
    ndarray, shape (steps + 1, 3)
        Columns a, b, θ = ab after 0, 1, …, steps steps.
    """
    a0, b0, y, _ = _check_abt(a0, b0, y, [], max_work)
    dt = _v.real("dt", dt, 0.0, 1.0, lo_open=True)
    steps = _v.integer("steps", steps, 0, max_work)
    metric = _v.choice("metric", metric, METRICS)
    if metric == "pullback" and a0 == 0.0 and b0 == 0.0:
        raise ValueError("a0 and b0 must not both be 0 for the pullback step (H = 0 there)")
    out = np.empty((steps + 1, 3))
    a, b = a0, b0
    for k in range(steps + 1):  # Python floats: an overflow becomes inf/nan, caught below
        out[k] = a, b, a * b
        g = a * b - y
        if metric == "pullback":
            g /= a * a + b * b
        a, b = a - dt * g * b, b - dt * g * a
    if not np.all(np.isfinite(out)):
        raise ValueError(f"the step-size-{dt} iteration diverged; choose a smaller dt")
    return out


# --------------------------------------------------------------------------- limit
def loop(n, s) -> np.ndarray:
    r"""The loop :math:`x_n(s) = n^{-1/2}(\cos ns, \sin ns)` at the points ``s``; shape (len(s), 2).

    Parameters
    ----------
    n : int
        Number of turns, :math:`n \ge 1`.
    s : array_like
        Loop parameters :math:`s \in [0, 2\pi]`.

    Returns
    -------
    ndarray, shape (len(s), 2)
        The points :math:`x_n(s)`.
    """
    n = _v.integer("n", n, 1, N_MAX)
    s = _v.finite_array("s", s, ndim=1, max_size=MAX_TIMES)
    return np.column_stack([np.cos(n * s), np.sin(n * s)]) / math.sqrt(n)


def levy_area(n, points=None, *, max_work: int = 4 * MAX_TIMES) -> float:
    r"""Lévy area :math:`\tfrac12\int_0^{2\pi}(x^1 dx^2 - x^2 dx^1)` of :math:`x_n`, from samples.

    The loop is sampled at ``points`` equally spaced parameters :math:`s_k` on :math:`[0, 2\pi]`
    (ends included) and the area of the polygon through the samples is summed,
    :math:`\tfrac12\sum_k (x^1_k x^2_{k+1} - x^2_k x^1_{k+1})`. For a polygon that is exact; for
    the smooth loop it equals :math:`\frac{N}{2n}\sin\frac{2\pi n}{N}` (:math:`N` = points − 1),
    which tends to π with relative error :math:`\approx (2\pi n/N)^2/6`.

    Parameters
    ----------
    n : int
        Number of turns, :math:`1 \le n \le 10^6`.
    points : int, optional
        Samples on :math:`[0, 2\pi]`, at least :math:`2n + 1` (two segments per turn). Default
        :math:`1024\,n + 1` (relative error :math:`6\cdot 10^{-6}`).
    max_work : int
        Largest accepted ``points``.

    Returns
    -------
    float
        The polygon's area :math:`\tfrac12\sum_k (x^1_k x^2_{k+1} - x^2_k x^1_{k+1})` (close to π).
    """
    n = _v.integer("n", n, 1, N_MAX)
    max_work = _v.integer("max_work", max_work, 1)
    if points is None:
        points = min(PER_TURN * n + 1, max_work)
    points = _v.integer("points", points, 2 * n + 1, max_work)
    # x_n sampled through s, as a student would; the area is the shoelace sum of the samples.
    s = np.linspace(0.0, 2.0 * math.pi, points)
    x1, x2 = np.cos(n * s) / math.sqrt(n), np.sin(n * s) / math.sqrt(n)
    return float(0.5 * np.sum(x1[:-1] * x2[1:] - x2[:-1] * x1[1:]))


def _check_ABy(A, B, y0):
    y0 = _v.finite_array("y0", y0, ndim=1, max_size=DIM_MAX)
    d = y0.size
    if d == 0:
        raise ValueError("y0 must have at least one entry")
    A = _v.finite_array("A", A, shape=(d, d))
    B = _v.finite_array("B", B, shape=(d, d))
    for name, M in (("A", A), ("B", B)):
        if np.abs(M).max() > MATRIX_MAX:
            raise ValueError(f"{name} must have entries of size <= {MATRIX_MAX}, got {np.abs(M).max():g}")
    if np.abs(y0).max() > 1e6:
        raise ValueError(f"y0 must have entries of size <= 1e6, got {np.abs(y0).max():g}")
    return A, B, y0


def driven_endpoint(n, A, B, y0) -> np.ndarray:
    r""":math:`y(2\pi)` for :math:`dy = (A\,dx_n^1 + B\,dx_n^2)\,y`, :math:`y(0) = y_0`.

    Along :math:`x_n`, :math:`dx_n^1 = -\sqrt n \sin(ns)\,ds` and :math:`dx_n^2 = \sqrt n\cos(ns)\,ds`.
    The coefficient has period :math:`2\pi/n`, so :math:`y(2\pi) = \Phi^n y_0` with :math:`\Phi` the
    propagator of one turn; in :math:`u = ns` that turn is
    :math:`d\Phi/du = n^{-1/2}(-\sin u\,A + \cos u\,B)\,\Phi` on :math:`[0, 2\pi]`, solved with DOP853
    (rtol :math:`10^{-13}`), then raised to the power :math:`n` by repeated squaring.
    Commuting :math:`A, B` give :math:`y_0` exactly (the loop closes); in general
    :math:`y_n(2\pi) = \exp(\pi[B, A])\,y_0 + O(n^{-1/2})` (:func:`area_limit`).

    Parameters
    ----------
    n : int
        Number of turns, :math:`1 \le n \le 10^6`.
    A, B : array_like, shape (d, d)
        Real matrices, entries of size :math:`\le 50`, :math:`d \le 16`.
    y0 : array_like, shape (d,)

    Returns
    -------
    ndarray, shape (d,)
        Relative error about :math:`10^{-11} + 10^{-15}n` (one-turn errors add up over the
        :math:`n` turns): below :math:`10^{-8}` for every allowed :math:`n` (checked against a
        fourth-order Magnus integrator: :math:`9\cdot 10^{-12}` at :math:`n = 4096`,
        :math:`10^{-9}` at :math:`n = 10^6`).
    """
    n = _v.integer("n", n, 1, N_MAX)
    A, B, y0 = _check_ABy(A, B, y0)
    d = y0.size
    eps = 1.0 / math.sqrt(n)

    def rhs(u, z):
        P = z.reshape(d, d)
        return (eps * (-math.sin(u) * A + math.cos(u) * B) @ P).ravel()

    sol = solve_ivp(rhs, (0.0, 2.0 * math.pi), np.eye(d).ravel(), method="DOP853", rtol=_RTOL, atol=_ATOL)
    if not sol.success:  # pragma: no cover - DOP853 on a bounded smooth field
        raise ValueError(f"the one-turn propagator could not be computed: {sol.message}")
    Phi = sol.y[:, -1].reshape(d, d)
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.linalg.matrix_power(Phi, n) @ y0
    if not np.all(np.isfinite(out)):
        raise ValueError("y(2π) overflows for these A, B and n; use smaller matrix entries")
    return out


def area_limit(A, B, y0) -> np.ndarray:
    r"""The limit :math:`\exp(\pi[B, A])\,y_0`, :math:`[B, A] = BA - AB`, of :func:`driven_endpoint`.

    Leading Magnus term of one turn: :math:`\tfrac12\varepsilon^2\int_0^{2\pi}\!\int_0^u
    [C(u), C(v)]\,dv\,du = (\pi/n)[B, A]` with :math:`C(u) = -\sin u\,A + \cos u\,B`,
    :math:`\varepsilon = n^{-1/2}`; :math:`n` turns give :math:`\pi[B, A]`, i.e. the Lévy area π
    times the commutator. Arguments as :func:`driven_endpoint`.

    Parameters
    ----------
    A, B : array_like, shape (d, d)
        The two driving matrices of :func:`driven_endpoint`.
    y0 : array_like, shape (d,)
        Start of the driven equation.

    Returns
    -------
    ndarray, shape (d,)
        :math:`\exp(\pi[B, A])\,y_0` (a matrix exponential, ``scipy.linalg.expm``).
    """
    A, B, y0 = _check_ABy(A, B, y0)
    out = expm(math.pi * (B @ A - A @ B)) @ y0
    if not np.all(np.isfinite(out)):
        raise ValueError("exp(π[B, A]) y0 overflows; use smaller matrix entries")
    return out
