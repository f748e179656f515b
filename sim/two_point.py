r"""Two points on the sphere: normalised (SA) vs unnormalised (USA) attention.

``docs/constructions.md``, "Two points: SA vs USA". Two tokens symmetric about an axis, at angle
:math:`2\vartheta` from each other, :math:`A = V = I`. The self term is
tangent-free and the other contributes :math:`\sin 2\vartheta`, so the half-angle obeys

.. math::

    \text{SA: }\ \dot\vartheta = -\frac{\sin 2\vartheta}{1 + e^{\beta(1-\cos 2\vartheta)}},\qquad
    \text{USA: }\ \dot\vartheta = -\tfrac12\, e^{\beta\cos 2\vartheta}\sin 2\vartheta .

Both collapse to the axis. Since both tokens share the normaliser
:math:`Z = e^{\beta} + e^{\beta\cos 2\vartheta}`, USA is SA run on the clock
:math:`d\tau_{SA} = (Z/n)\,d\tau_{USA}` (:func:`usa_on_sa_clock`). This time change
exists only because of the symmetry; for general configurations the :math:`Z_i`
differ from token to token and no single clock change maps one flow onto the other.

Energy (A symmetric, V = A): :math:`E(z) = -\frac{1}{2\beta n^2}\sum_{i,j} e^{\beta\langle z_i, A z_j\rangle}`,
decreasing along both flows (same energy, different metrics).

Regular simplex (stretch): ``n`` tokens with equal pairwise inner product
:math:`\rho` stay equiangular under SA with
:math:`\dot\rho = 2(1-\rho)\,((n-1)\rho+1)/(e^{\beta(1-\rho)} + n - 1)`.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.integrate import solve_ivp
from scipy.special import logsumexp

from sim import _validate as _v

__all__ = [
    "half_angle",
    "energy",
    "energies",
    "energy_two_point",
    "usa_on_sa_clock",
    "initial_pair",
    "half_angle_of",
    "simplex_rho",
    "simplex_points",
    "discretisation_error",
]

FLOWS = ("SA", "USA")
BETA_MAX = 100.0  # beyond this the USA field e^{β} is astronomically stiff
TAU_MAX = 1e6
MAX_POINTS = 1_000_000
#: default bound on the layers run by one call of :func:`discretisation_error` (a few seconds)
MAX_LAYERS = 4_000_000
#: layers run (and compared with the exact curve) per engine call in :func:`discretisation_error`
CHUNK = 1 << 16
_RTOL, _ATOL = 1e-12, 1e-14


def _rhs(flow: str, beta: float):
    r"""Right-hand side for :math:`y = \log\vartheta` (``f(τ, y) -> [dy/dτ]``).

    In ϑ itself the collapse is stiff: near the axis dϑ/dτ ≈ −cϑ with c up to e^β
    (USA), so an explicit solver needs ~c·τ steps (seconds already for β = 10 over
    τ = 20, and a slightly negative ϑ). In log ϑ the same field tends to the constant −c:
    a few dozen steps, ϑ > 0 by construction, and relative accuracy at tiny angles.
    """

    def s2(th):  # sin(2θ)/θ, → 2 as θ → 0 (θ may underflow to 0 deep in the collapse)
        return math.sin(2 * th) / th if th > 1e-150 else 2.0

    if flow == "SA":

        def f(_, y):
            th = math.exp(y[0])
            # 1 - cos 2θ = 2 sin²θ (no cancellation for small θ); sin 2θ / θ stays accurate
            return [-s2(th) / (1.0 + math.exp(2 * beta * math.sin(th) ** 2))]
    else:

        def f(_, y):
            th = math.exp(y[0])
            return [-0.5 * math.exp(beta * math.cos(2 * th)) * s2(th)]

    return f


def _taus(taus) -> np.ndarray:
    return _v.time_grid("taus", taus, TAU_MAX, MAX_POINTS)


def _solve(f, y0, t: np.ndarray) -> np.ndarray:
    """Integrate an autonomous ODE from τ=0 and sample at ``t`` (any order)."""
    y0 = np.atleast_1d(np.asarray(y0, dtype=float))
    if t.size == 0:
        return np.empty((0, y0.size))
    order = np.argsort(t)
    ts = t[order]
    out = np.empty((t.size, y0.size))
    if ts[-1] == 0:
        out[:] = y0
        return out
    sol = solve_ivp(f, (0.0, ts[-1]), y0, method="DOP853", t_eval=ts, rtol=_RTOL, atol=_ATOL)
    if not sol.success:  # pragma: no cover - DOP853 on these smooth 1-D fields
        raise ValueError(f"ODE integration failed: {sol.message}")
    out[order] = sol.y.T
    return out


def _horizon(t_max: float) -> float:
    """The integration end for a request reaching ``t_max``: the next power of two (>= 1), so that
    requests with nearby windows share one solution."""
    return 2.0 ** max(0, math.ceil(math.log2(t_max))) if t_max > 0 else 1.0


@functools.lru_cache(maxsize=256)
def _dense_log_theta(flow: str, beta: float, theta0: float, t_end: float):
    """The log ϑ trajectory on [0, t_end] as DOP853's dense output (7th-order interpolant)."""
    sol = solve_ivp(
        _rhs(flow, beta), (0.0, t_end), [math.log(theta0)], method="DOP853", dense_output=True, rtol=_RTOL, atol=_ATOL
    )
    if not sol.success:  # pragma: no cover - DOP853 on these smooth 1-D fields
        raise ValueError(f"ODE integration failed: {sol.message}")
    return sol.sol


def _log_theta(flow: str, beta: float, theta0: float, t: np.ndarray) -> np.ndarray:
    """log ϑ at the depths ``t`` (any order), from a cached solution per (flow, β, ϑ0, window).

    One page view asks for ϑ on a dozen grids (exact curves, layer times, the re-timed USA, five
    step sizes of the error plot): solving once per flow and interpolating the dense output
    replaces ~17 integrations by ~2 (the values agree with ``t_eval`` sampling to ~1e-12)."""
    if t.size == 0:
        return np.empty(0)
    sol = _dense_log_theta(flow, beta, theta0, _horizon(float(t.max())))
    out = np.asarray(sol(t), dtype=float).reshape(-1)
    out[t == 0] = math.log(theta0)
    return out


def half_angle(beta, theta0, taus, flow="SA") -> np.ndarray:
    r"""Half-angle :math:`\vartheta(\tau)` of the symmetric pair from the reduced ODE.

    Parameters
    ----------
    beta : float
        Inverse temperature, ``0 <= beta <= 100``.
    theta0 : float
        Initial half-angle in radians, ``0 < theta0 < pi/2``.
    taus : array_like
        Depths (continuous layer time :math:`\tau \ge 0`) at which to report, any order.
    flow : {"SA", "USA"}
        Normalised or unnormalised attention.

    Returns
    -------
    ndarray
        :math:`\vartheta` at each ``tau`` (same shape as ``np.atleast_1d(taus)``),
        accurate to about 1e-10 relative (DOP853 on log ϑ, rtol 1e-12).
    """
    beta = _v.real("beta", beta, 0.0, BETA_MAX)
    theta0 = _v.real("theta0", theta0, 0.0, math.pi / 2, lo_open=True, hi_open=True)
    flow = _v.choice("flow", flow, FLOWS)
    t = _taus(taus)
    return np.exp(_log_theta(flow, beta, theta0, t))


_GL_X, _GL_W = np.polynomial.legendre.leggauss(8)


def usa_on_sa_clock(beta, theta0, taus_usa) -> np.ndarray:
    r"""SA-clock time :math:`\tau_{SA}(\tau_{USA}) = \int_0^{\tau_{USA}} Z(\vartheta_{USA}(s))/n\,ds`.

    Plotting :math:`\vartheta_{USA}(\tau_{USA})` against this clock reproduces
    :math:`\vartheta_{SA}` exactly (two symmetric points only). Here
    :math:`Z/n = (e^{\beta} + e^{\beta\cos 2\vartheta})/2` is integrated by 8-point
    Gauss–Legendre on each step of the (cached) DOP853 solution of the USA half-angle, read
    from its dense output: the integrand is as smooth as that solution, so the result agrees
    with integrating the clock as a second ODE component to about 1e-11 relative.

    Parameters
    ----------
    beta : float
        Inverse temperature :math:`\beta > 0`.
    theta0 : float
        Initial half-angle, :math:`0 < \vartheta_0 < \pi/2`.
    taus_usa : array_like
        Depths :math:`\tau_{USA} \ge 0` on the USA clock (layer index × Δ of the USA flow).

    Returns
    -------
    ndarray
        :math:`\tau_{SA}(\tau_{USA})`, the shape of ``taus_usa``.
    """
    beta = _v.real("beta", beta, 0.0, BETA_MAX)
    theta0 = _v.real("theta0", theta0, 0.0, math.pi / 2, lo_open=True, hi_open=True)
    t = _taus(taus_usa)
    if t.size == 0:
        return np.empty(0)
    sol = _dense_log_theta("USA", beta, theta0, _horizon(float(t.max())))
    ts = np.asarray(sol.ts, dtype=float)
    eb = math.exp(beta)

    def rate(s):  # Z/n along the USA solution
        th = np.exp(np.asarray(sol(s.ravel()), dtype=float).reshape(-1))
        return (0.5 * (eb + np.exp(beta * np.cos(2.0 * th)))).reshape(s.shape)

    a, h = ts[:-1], 0.5 * np.diff(ts)
    steps = h * (rate((a + h)[:, None] + h[:, None] * _GL_X) @ _GL_W)
    before = np.concatenate([[0.0], np.cumsum(steps)])  # the clock at each step boundary
    k = np.clip(np.searchsorted(ts, t, side="right") - 1, 0, a.size - 1)
    hq = 0.5 * (t - ts[k])
    return before[k] + hq * (rate((ts[k] + hq)[:, None] + hq[:, None] * _GL_X) @ _GL_W)


def energy(Z, beta, A, *, max_work=25_000_000) -> float:
    r"""Interaction energy :math:`E = -\frac{1}{2\beta n^2}\sum_{i,j} e^{\beta\langle z_i, A z_j\rangle}`.

    Parameters
    ----------
    Z : array_like, shape (n, d)
        Points (used as given; normally unit vectors).
    beta : float
        ``beta > 0``.
    A : array_like, shape (d, d) or None
        Interaction matrix (identity if None); the exponent is
        :math:`\beta\langle z_i, A z_j\rangle = \beta z_i^\top A z_j`.
    max_work : int, keyword-only
        Bound on the ``n*n`` pairs (default 2.5e7, n = 5000).

    Returns
    -------
    float
        Finite; ``ValueError`` when :math:`|E|` exceeds the float64 range (huge ``beta``).
    """
    Z = _v.finite_array("Z", Z, ndim=2, max_size=10_000_000)
    n, d = Z.shape
    if n < 1 or d < 1:
        raise ValueError(f"Z must have at least one point and one coordinate, got shape {Z.shape}")
    beta = _v.real("beta", beta, 0.0, lo_open=True)
    A = np.eye(d) if A is None else _v.finite_array("A", A, shape=(d, d))
    max_work = _v.real("max_work", max_work, 1.0)
    if n * n > max_work:
        raise ValueError(
            f"Z has too many points for the O(n^2) energy: n*n = {n * n} > max_work"
            f" = {max_work:.3g} (pass a larger max_work= to allow more)"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        S = beta * (Z @ A @ Z.T)  # S_ij = beta z_i^T A z_j
    log_abs = float(logsumexp(S)) - math.log(2 * beta * n * n) if np.all(np.isfinite(S)) else math.inf
    if not log_abs < 709.78:  # |E| = e^{log_abs} would overflow float64
        raise ValueError(
            f"beta too large: the energy -e^{{{log_abs:.4g}}} is below the float64 "
            "range (the scores beta<z_i, A z_j> are too large)"
        )
    return -math.exp(log_abs)


def energies(traj, beta, A=None, *, max_work=25_000_000) -> np.ndarray:
    r""":func:`energy` of every configuration of a trajectory, in one array operation.

    .. math:: E_r = -\frac{1}{2\beta n^2}\sum_{i,j} e^{\beta\langle z^{(r)}_i, A z^{(r)}_j\rangle}

    Parameters
    ----------
    traj : array_like, shape (T, n, d)
        Configurations (e.g. the output of :func:`sim.attention.simulate`).
    beta, A
        As in :func:`energy`.
    max_work : int, keyword-only
        Bound on the ``T*n*n`` pairs (default 2.5e7).

    Returns
    -------
    numpy.ndarray, shape (T,)
        ``energies(traj)[r] == energy(traj[r])`` (to rounding); ``ValueError`` as in
        :func:`energy` when some :math:`|E_r|` exceeds the float64 range.
    """
    X = _v.finite_array("traj", traj, ndim=3, max_size=10_000_000)
    T, n, d = X.shape
    if n < 1 or d < 1:
        raise ValueError(f"traj must have at least one point and one coordinate, got shape {X.shape}")
    beta = _v.real("beta", beta, 0.0, lo_open=True)
    A = np.eye(d) if A is None else _v.finite_array("A", A, shape=(d, d))
    max_work = _v.real("max_work", max_work, 1.0)
    if float(T) * n * n > max_work:
        raise ValueError(
            f"traj has too many pairs for the O(T n^2) energies: T*n*n = {T * n * n} > "
            f"max_work = {max_work:.3g} (pass a larger max_work= to allow more)"
        )
    if T == 0:
        return np.empty(0)
    with np.errstate(over="ignore", invalid="ignore"):
        S = beta * np.einsum("rid,rjd->rij", X @ A, X)  # S_rij = beta z_i^T A z_j
    log_abs = np.full(T, math.inf)
    ok = np.all(np.isfinite(S), axis=(1, 2))
    log_abs[ok] = logsumexp(S[ok], axis=(1, 2)) - math.log(2 * beta * n * n)
    if not np.all(log_abs < 709.78):
        raise ValueError(
            f"beta too large: an energy -e^{{{float(np.max(log_abs)):.4g}}} is below the "
            "float64 range (the scores beta<z_i, A z_j> are too large)"
        )
    return -np.exp(log_abs)


def energy_two_point(beta, theta) -> np.ndarray:
    r"""Closed form for the symmetric pair, A = I: :math:`E = -\frac{e^{\beta} + e^{\beta\cos 2\vartheta}}{4\beta}`.

    Parameters
    ----------
    beta : float
        Inverse temperature :math:`\beta > 0`.
    theta : array_like
        Half-angles :math:`\vartheta` (rad).

    Returns
    -------
    ndarray
        :math:`E(\vartheta)`, the shape of ``theta``.
    """
    beta = _v.real("beta", beta, 0.0, BETA_MAX, lo_open=True)
    th = _v.finite_array("theta", theta, max_size=MAX_POINTS)
    return -(math.exp(beta) + np.exp(beta * np.cos(2 * th))) / (4 * beta)


def initial_pair(theta0, d: int = 3) -> np.ndarray:
    r"""The symmetric pair at half-angle ``theta0`` about the axis e_1, in R^d (d >= 2).

    Parameters
    ----------
    theta0 : float
        Half-angle :math:`\vartheta_0` (rad): :math:`z_{1,2} = \cos\vartheta_0\,e_1 \pm \sin\vartheta_0\,e_2`.
    d : int
        Dimension, :math:`d \ge 2`.

    Returns
    -------
    ndarray, shape (2, d)
        The two unit tokens.
    """
    theta0 = _v.real("theta0", theta0, 0.0, math.pi / 2, lo_open=True, hi_open=True)
    d = _v.integer("d", d, 2, 64)
    Z = np.zeros((2, d))
    Z[:, 0] = math.cos(theta0)
    Z[0, 1], Z[1, 1] = math.sin(theta0), -math.sin(theta0)
    return Z


def half_angle_of(traj) -> np.ndarray:
    r"""Half-angle between the two tokens of a trajectory ``(T, 2, d)``.

    Uses :math:`\vartheta = \operatorname{atan2}(\lVert z_1-z_2\rVert, \lVert z_1+z_2\rVert)`,
    accurate also for tiny angles (unlike ``arccos``).

    Parameters
    ----------
    traj : array_like, shape (T, 2, d)
        Recorded layers of two tokens (e.g. from :func:`sim.attention.simulate`).

    Returns
    -------
    ndarray, shape (T,)
        :math:`\vartheta` at every recorded layer (rad).
    """
    traj = np.asarray(traj, dtype=float)
    if traj.ndim != 3 or traj.shape[1] != 2:
        raise ValueError(f"traj must have shape (T, 2, d), got {traj.shape}")
    a = np.linalg.norm(traj[:, 0] - traj[:, 1], axis=-1)
    b = np.linalg.norm(traj[:, 0] + traj[:, 1], axis=-1)
    return np.arctan2(a, b)


def discretisation_error(beta, theta0, horizon, dts, flow="SA", *, max_work=MAX_LAYERS) -> np.ndarray:
    r"""Global error :math:`\max_k |\vartheta_\Delta(k\Delta) - \vartheta(k\Delta)|` over the depth window.

    For each step Δ in ``dts`` the layer map (:func:`sim.attention.simulate`, A = V = I, the
    pair of :func:`initial_pair`) runs ``K = max(1, round(horizon/Δ))`` layers of step
    :math:`h = \text{horizon}/K` (so the window ends exactly at ``horizon``; layer ``k`` sits at
    depth :math:`\tau = kh`); the error is the largest gap to the exact half-angle
    :func:`half_angle` over **every** layer ``k = 0..K`` (the layers are run in chunks of
    ``CHUNK`` and reduced on the way: memory stays bounded, no layer is skipped). First-order
    method: the error is :math:`O(\Delta)` (slope 1 on log-log axes) once Δ is small enough; for
    USA only once :math:`\Delta e^{\beta} \ll 1`.

    Parameters
    ----------
    beta, theta0, flow
        As in :func:`half_angle`.
    horizon : float
        Depth window, ``0 < horizon <= 1e4``.
    dts : array_like, 1-D, at most 64 entries
        Positive steps Δ.
    max_work : int, keyword-only
        Bound on the total number of layers :math:`\sum_\Delta K` (default ``MAX_LAYERS`` =
        4e6, a few seconds); checked before any work starts.
    """
    from sim.attention import simulate

    horizon = _v.real("horizon", horizon, 0.0, 1e4, lo_open=True)
    dts = _v.finite_array("dts", dts, ndim=1, max_size=64)
    if np.any(dts <= 0):
        raise ValueError("dts must be positive")
    max_work = _v.real("max_work", max_work, 1.0)
    beta = _v.real("beta", beta, 0.0, BETA_MAX)
    flow = _v.choice("flow", flow, FLOWS)
    layers = np.maximum(np.round(horizon / dts), 1.0)
    if layers.sum() > max_work:
        raise ValueError(
            f"dts too small for this horizon: sum of horizon/dt = {layers.sum():.3g} "
            f"layers > max_work = {max_work:.3g} (about a second per 1.3e6 layers); "
            "use larger dts, a shorter horizon, or pass a larger max_work="
        )
    Z0 = initial_pair(theta0)
    out = np.empty(dts.size)
    for k, steps in enumerate(layers.astype(np.int64)):
        steps, h = int(steps), horizon / int(steps)
        Z, done, worst = Z0, 0, 0.0
        while done < steps:  # every layer, CHUNK layers at a time
            m = min(CHUNK, steps - done)
            traj = simulate(Z, beta, h, m, flow=flow)
            tau = (done + np.arange(m + 1)) * h
            worst = max(worst, float(np.max(np.abs(half_angle_of(traj) - half_angle(beta, theta0, tau, flow)))))
            Z, done = traj[-1], done + m
        out[k] = worst
    return out


def simplex_rho(beta, n, rho0, taus) -> np.ndarray:
    r"""Common inner product :math:`\rho(\tau)` of ``n`` equiangular tokens under SA (A = V = I).

    Parameters
    ----------
    beta : float
        Inverse temperature :math:`\beta > 0`.
    n : int
        Number of tokens, :math:`n \ge 2`.
    rho0 : float
        Initial common inner product, :math:`-1/(n-1) < \rho_0 < 1`.
    taus : array_like
        Depths :math:`\tau \ge 0` (layer index × Δ).

    Returns
    -------
    ndarray
        :math:`\rho(\tau)`, the shape of ``taus``: the solution of the reduced SA equation
        :math:`\dot\rho = 2(1-\rho)\,(1+(n-1)\rho)\,/\,(e^{\beta(1-\rho)} + n - 1)`, :math:`\rho(0) = \rho_0`.
    """
    beta = _v.real("beta", beta, 0.0, BETA_MAX)
    n = _v.integer("n", n, 2, 10_000)
    rho0 = _v.real("rho0", rho0, -1.0 / (n - 1), 1.0, lo_open=True, hi_open=True)
    t = _taus(taus)

    def f(_, y):
        r = y[0]
        return [2 * (1 - r) * ((n - 1) * r + 1) / (math.exp(beta * (1 - r)) + n - 1)]

    return _solve(f, [rho0], t)[:, 0]


def simplex_points(n, rho0) -> np.ndarray:
    r"""``n`` unit vectors in R^n with all pairwise inner products equal to ``rho0``.

    Parameters
    ----------
    n : int
        Number of tokens (and the dimension), :math:`n \ge 2`.
    rho0 : float
        Common inner product :math:`\langle z_i, z_j\rangle`, :math:`-1/(n-1) \le \rho_0 < 1`.

    Returns
    -------
    ndarray, shape (n, n)
        One unit token per row: :math:`z_i = \sqrt{1-\rho_0}\,e_i + c\,\mathbf 1` with :math:`c` chosen so that
        :math:`\lVert z_i\rVert = 1`.
    """
    n = _v.integer("n", n, 2, 10_000)
    rho0 = _v.real("rho0", rho0, -1.0 / (n - 1), 1.0, hi_open=True)
    a = math.sqrt(1 - rho0)
    c = (-a + math.sqrt(max(a * a + n * rho0, 0.0))) / n
    return a * np.eye(n) + c
