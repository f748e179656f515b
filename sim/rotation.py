r"""Rotation without equilibrium: SGD's stationary current and the FFN's curl (``docs/constructions.md``,
"Rotation without equilibrium").

**SGD near a minimum** is modelled by the Ornstein–Uhlenbeck process

.. math::

    dx = -Hx\,dt + \sqrt{2D}\,dW

(:math:`H` the Hessian, :math:`D` the gradient-noise covariance). Its stationary law is
:math:`N(0, \Sigma)` with :math:`H\Sigma + \Sigma H^\top = 2D`. Detailed balance holds iff
:math:`H\Sigma` is symmetric (for symmetric :math:`H, D`: iff :math:`HD = DH`). Otherwise the
stationary probability current :math:`J(x) = (D\Sigma^{-1} - H)\,x\,p(x)` circulates and the Lévy
area :math:`\tfrac12\int (x^1 dx^2 - x^2 dx^1)` grows at the mean rate

.. math::

    \tfrac12\big((H\Sigma)_{12} - (H\Sigma)_{21}\big)

per unit time, a linear drift instead of a random walk. For :math:`H = \mathrm{diag}(h_1, h_2)` this
is :math:`(h_1 - h_2)D_{12}/(h_1 + h_2)`.

**FFN vorticity.** :math:`f(x) = W_\text{out}\tanh(W_\text{in}x)` has Jacobian
:math:`J = W_\text{out}\,\mathrm{diag}(\tanh'(W_\text{in}x))\,W_\text{in}`; its curl
:math:`J_{21} - J_{12}` vanishes everywhere when :math:`W_\text{out} = W_\text{in}^\top` (then
:math:`f = \nabla\sum_i \log\cosh\langle w_i, x\rangle`), and generic weights make the field rotate.

The Euler–Maruyama path runs in a Numba kernel (:func:`_em_kernel`) that only fills an array from
noise drawn here; :func:`simulate_ou_reference` is the plain loop it is tested equal to
(``bench/rotation.py`` prints the ratio).

References
----------
``docs/constructions.md``, section "Rotation without equilibrium" (SGD's stationary current, the FFN's curl).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from scipy.linalg import solve_continuous_lyapunov, solve_discrete_lyapunov

from sim import _validate as _v

__all__ = [
    "stationary_covariance",
    "area_rate",
    "simulate_ou",
    "simulate_ou_reference",
    "area_mc",
    "em_covariance",
    "em_area_rate",
    "current_field",
    "ffn_field",
    "ffn_curl",
    "area_increments",
    "batch_means",
]

DIM_MAX = 8
ENTRY_MAX = 1e3  # |entries| of H and D
MAX_STEPS = 2_000_000  # default work bound of one path
MAX_POINTS = 1_000_000  # default bound on evaluation points
HIDDEN_MAX = 4096


# --------------------------------------------------------------------------- checks
def _matrix(name: str, M, d: int | None = None) -> np.ndarray:
    M = _v.finite_array(name, M, ndim=2, max_size=DIM_MAX * DIM_MAX)
    if M.shape[0] != M.shape[1] or M.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty square matrix, got shape {M.shape}")
    if d is not None and M.shape[0] != d:
        raise ValueError(f"{name} must have shape ({d}, {d}), got {M.shape}")
    if np.abs(M).max() > ENTRY_MAX:
        raise ValueError(f"{name} must have entries of size <= {ENTRY_MAX:g}, got {np.abs(M).max():g}")
    return M


def _check_HD(H, D, two_d: bool = False):
    H = _matrix("H", H)
    d = H.shape[0]
    if two_d and d != 2:
        raise ValueError(f"H must be 2×2 here (a Lévy area lives in a plane), got shape {H.shape}")
    D = _matrix("D", D, d)
    scale = max(1.0, np.abs(D).max())
    if np.abs(D - D.T).max() > 1e-12 * scale:
        raise ValueError("D must be symmetric (a covariance)")
    D = 0.5 * (D + D.T)
    if np.linalg.eigvalsh(D).min() < -1e-12 * scale:
        raise ValueError("D must be positive semi-definite (a covariance)")
    re = np.linalg.eigvals(H).real.min()
    if re <= 1e-9 * max(1.0, np.abs(H).max()):
        raise ValueError(
            f"every eigenvalue of H must have positive real part (a stable minimum), got min Re λ = {re:.3g}"
        )
    return H, D


def _check_dt(H, dt) -> float:
    dt = _v.real("dt", dt, 0.0, None, lo_open=True)
    rho = np.abs(np.linalg.eigvals(np.eye(H.shape[0]) - dt * H)).max()
    if rho >= 1.0:
        raise ValueError(
            f"dt = {dt:g} is too large: the Euler–Maruyama chain is unstable "
            f"(spectral radius of I − dt·H is {rho:.4g} >= 1)"
        )
    return dt


# --------------------------------------------------------------------------- exact
def stationary_covariance(H, D) -> np.ndarray:
    r"""Stationary covariance Σ of :math:`dx = -Hx\,dt + \sqrt{2D}\,dW`: :math:`H\Sigma + \Sigma H^\top = 2D`.

    Parameters
    ----------
    H : array_like, shape (d, d)
        Every eigenvalue with positive real part; :math:`d \le 8`, entries :math:`\le 10^3`.
    D : array_like, shape (d, d)
        Symmetric positive semi-definite.

    Returns
    -------
    ndarray, shape (d, d)
        Symmetric, from ``scipy.linalg.solve_continuous_lyapunov``.
    """
    H, D = _check_HD(H, D)
    S = solve_continuous_lyapunov(H, 2.0 * D)
    return 0.5 * (S + S.T)


def area_rate(H, D) -> float:
    r"""Stationary mean rate of Lévy area, :math:`\tfrac12((H\Sigma)_{12} - (H\Sigma)_{21})`, for 2×2 H, D.

    :math:`\tfrac12 E[x^1 dx^2 - x^2 dx^1]/dt` with :math:`E[x^i (Hx)^j] = (H\Sigma)_{ji}`; the noise
    term drops out because :math:`D` is symmetric. Zero iff :math:`H\Sigma` is symmetric (detailed
    balance). Arguments as :func:`stationary_covariance`, with :math:`d = 2`.

    Parameters
    ----------
    H : array_like, shape (2, 2)
        Drift (curvature) matrix of :math:`dx = -Hx\,dt + \sqrt{2D}\,dW`, eigenvalues with positive real part.
    D : array_like, shape (2, 2)
        Symmetric positive semidefinite noise (diffusion) matrix.

    Returns
    -------
    float
        :math:`\tfrac12((H\Sigma)_{12} - (H\Sigma)_{21})` per unit SDE time, with :math:`\Sigma` from
        :func:`stationary_covariance` (:math:`H\Sigma + \Sigma H^\top = 2D`).
    """
    H, D = _check_HD(H, D, two_d=True)
    HS = H @ stationary_covariance(H, D)
    return float(0.5 * (HS[0, 1] - HS[1, 0]))


def em_covariance(H, D, dt) -> np.ndarray:
    r"""Stationary covariance of the Euler–Maruyama chain :math:`x_{k+1} = (I - \Delta H)x_k + \sqrt{2\Delta D}\,\xi_k`.

    Solves :math:`\Sigma_\Delta = M\Sigma_\Delta M^\top + 2\Delta D`, :math:`M = I - \Delta H`
    (``solve_discrete_lyapunov``); :math:`\Sigma_\Delta = \Sigma + O(\Delta)`. ``dt`` must keep the
    chain stable (spectral radius of :math:`M` below 1).

    Parameters
    ----------
    H, D : array_like, shape (d, d)
        Drift and (symmetric) noise matrices, as :func:`stationary_covariance`.
    dt : float
        Step :math:`\Delta > 0` of the chain.

    Returns
    -------
    ndarray, shape (d, d)
        :math:`\Sigma_\Delta`.
    """
    H, D = _check_HD(H, D)
    dt = _check_dt(H, dt)
    M = np.eye(H.shape[0]) - dt * H
    S = solve_discrete_lyapunov(M, 2.0 * dt * D)
    return 0.5 * (S + S.T)


def em_area_rate(H, D, dt) -> float:
    r"""Exact mean area rate of the Euler–Maruyama chain: :func:`area_rate`'s formula with :math:`\Sigma_\Delta`.

    Per step, :math:`E[\tfrac12(x^1_k \Delta x^2_k - x^2_k \Delta x^1_k)] = \tfrac{\Delta}{2}((H\Sigma_\Delta)_{12}
    - (H\Sigma_\Delta)_{21})`: this is what :func:`area_mc` estimates without bias at step ``dt``.

    Parameters
    ----------
    H, D : array_like, shape (2, 2)
        Drift and noise matrices.
    dt : float
        Step :math:`\Delta > 0`.

    Returns
    -------
    float
        :math:`\tfrac12((H\Sigma_\Delta)_{12} - (H\Sigma_\Delta)_{21})` per unit SDE time.
    """
    H, D = _check_HD(H, D, two_d=True)
    HS = H @ em_covariance(H, D, dt)
    return float(0.5 * (HS[0, 1] - HS[1, 0]))


def current_field(H, D, X) -> np.ndarray:
    r"""Stationary probability current :math:`J(x) = (D\Sigma^{-1} - H)\,x\,p(x)` at the 2-D points ``X``.

    :math:`p` is the density of :math:`N(0, \Sigma)`. :math:`\nabla\cdot J = 0`; :math:`J \equiv 0`
    under detailed balance; :math:`\tfrac12\int (x^1 J^2 - x^2 J^1)\,dx` equals :func:`area_rate`.
    ``X`` has shape (N, 2), :math:`N \le 10^6`; a singular Σ (the law on an invariant line) gives 0.

    Parameters
    ----------
    H, D : array_like, shape (2, 2)
        Drift and noise matrices.
    X : array_like, shape (N, 2)
        Points :math:`x`.

    Returns
    -------
    ndarray, shape (N, 2)
        :math:`J(x)` at every point.
    """
    H, D = _check_HD(H, D, two_d=True)
    X = _v.finite_array("X", X, ndim=2, shape=(None, 2), max_size=2 * MAX_POINTS)
    S = stationary_covariance(H, D)
    det = np.linalg.det(S)
    if not det > 1e-12 * np.trace(S) ** 2:
        # Σv = 0 gives vᵀDv = 0 (Lyapunov), so Dv = 0 and SHᵀv = 0: v is an eigenvector of Hᵀ and
        # the law lies on the invariant line v⊥, a 1-D OU process in detailed balance: J ≡ 0.
        return np.zeros_like(X)
    Si = np.linalg.inv(S)
    p = np.exp(-0.5 * np.einsum("ni,ij,nj->n", X, Si, X)) / (2.0 * math.pi * math.sqrt(det))
    return (X @ (D @ Si - H).T) * p[:, None]


# --------------------------------------------------------------------------- simulation
@njit(cache=True, nogil=True)
def _em_kernel(M, S, x0, xi, out):  # pragma: no cover - compiled
    """out[0] = x0; out[k+1] = M out[k] + S xi[k] (2-D; fills ``out`` only)."""
    a, b, c, d = M[0, 0], M[0, 1], M[1, 0], M[1, 1]
    p, q, r, s = S[0, 0], S[0, 1], S[1, 0], S[1, 1]
    x, y = x0[0], x0[1]
    out[0, 0], out[0, 1] = x, y
    for k in range(xi.shape[0]):
        u, v = xi[k, 0], xi[k, 1]
        x, y = a * x + b * y + p * u + q * v, c * x + d * y + r * u + s * v
        out[k + 1, 0], out[k + 1, 1] = x, y


def _prepare(H, D, dt, steps, seed, x0, max_work):
    H, D = _check_HD(H, D, two_d=True)
    dt = _check_dt(H, dt)
    max_work = _v.integer("max_work", max_work, 1)
    steps = _v.integer("steps", steps, 1, max_work)
    seed = _v.integer("seed", seed, 0, 2**63 - 1)
    rng = np.random.default_rng(seed)
    if x0 is None:
        w, V = np.linalg.eigh(stationary_covariance(H, D))
        x0 = V @ (np.sqrt(np.clip(w, 0.0, None)) * rng.standard_normal(2))
    else:
        x0 = _v.finite_array("x0", x0, shape=(2,))
        if np.abs(x0).max() > 1e6:
            raise ValueError(f"x0 must have entries of size <= 1e6, got {np.abs(x0).max():g}")
    w, V = np.linalg.eigh(D)
    S = math.sqrt(2.0 * dt) * (V * np.sqrt(np.clip(w, 0.0, None))) @ V.T  # √(2 dt D), symmetric
    M = np.eye(2) - dt * H
    xi = rng.standard_normal((steps, 2))
    return M, S, x0, xi


def simulate_ou(H, D, dt, steps, seed, x0=None, *, max_work: int = MAX_STEPS) -> np.ndarray:
    r"""Euler–Maruyama path of :math:`dx = -Hx\,dt + \sqrt{2D}\,dW` in the plane.

    :math:`x_{k+1} = (I - \Delta H)x_k + \sqrt{2\Delta}\,D^{1/2}\xi_k`, :math:`\xi_k` i.i.d. standard
    normal from ``numpy.random.default_rng(seed)`` (drawn after ``x0``).

    Parameters
    ----------
    H, D : array_like, shape (2, 2)
        As :func:`stationary_covariance`.
    dt : float
        Step :math:`\Delta > 0` with the chain stable (spectral radius of :math:`I - \Delta H` < 1).
    steps : int
        ``1 <= steps <= max_work``.
    seed : int
        Non-negative.
    x0 : array_like, shape (2,), optional
        Start; by default a draw from the stationary law :math:`N(0, \Sigma)` (first draw of the
        generator), so the path starts in equilibrium up to the :math:`O(\Delta)` bias of the scheme.
    max_work : int
        Largest accepted ``steps`` (default 2·10⁶).

    Returns
    -------
    ndarray, shape (steps + 1, 2)
    """
    M, S, x0, xi = _prepare(H, D, dt, steps, seed, x0, max_work)
    out = np.empty((xi.shape[0] + 1, 2))
    _em_kernel(M, S, x0, xi, out)
    if not np.all(np.isfinite(out)):  # pragma: no cover - excluded by the stability check
        raise ValueError("the Euler–Maruyama path overflowed")
    return out


def simulate_ou_reference(H, D, dt, steps, seed, x0=None, *, max_work: int = MAX_STEPS) -> np.ndarray:
    r"""Plain NumPy loop, same draws as :func:`simulate_ou` (the reference the kernel is tested against).

    Parameters
    ----------
    H, D, dt, steps, seed, x0, max_work
        As :func:`simulate_ou`.

    Returns
    -------
    ndarray, shape (steps + 1, 2)
        The path :math:`x_{k+1} = x_k - \Delta H x_k + \sqrt{2\Delta D}\,\xi_k`.
    """
    M, S, x0, xi = _prepare(H, D, dt, steps, seed, x0, max_work)
    out = np.empty((xi.shape[0] + 1, 2))
    out[0] = x0
    for k in range(xi.shape[0]):
        out[k + 1] = M @ out[k] + S @ xi[k]
    return out


def area_increments(path) -> np.ndarray:
    r"""Lévy-area increments :math:`\tfrac12(x^1_k x^2_{k+1} - x^2_k x^1_{k+1})` of a sampled 2-D path.

    Parameters
    ----------
    path : array_like, shape (K + 1, 2)
        A sampled path :math:`x_0, \dots, x_K` (e.g. from :func:`simulate_ou`).

    Returns
    -------
    ndarray, shape (K,)
        The increments; their cumulative sum is the swept area :math:`\mathcal A(t_k)`.
    """
    path = _v.finite_array("path", path, ndim=2, shape=(None, 2))  # already in memory: no bound
    return 0.5 * (path[:-1, 0] * path[1:, 1] - path[:-1, 1] * path[1:, 0])


def area_mc(
    H, D, T, dt, seed, *, burn_in: float = 0.1, batches: int = 20, max_work: int = MAX_STEPS
) -> tuple[float, float]:
    r"""The Lévy-area rate estimated from one long Euler–Maruyama path, with a batch-means standard error.

    The first ``burn_in`` fraction of the path is discarded; the rest is cut into ``batches``
    contiguous batches, each gives the rate (area of its increments / its duration), and
    :math:`\text{stderr} = \mathrm{sd}(\text{batch rates})/\sqrt{\text{batches}}`. The estimate is
    unbiased for :func:`em_area_rate` (the scheme's own rate), which is :func:`area_rate`
    :math:`+\,O(\Delta)`.

    Parameters
    ----------
    H, D, dt, seed
        As :func:`simulate_ou`.
    T : float
        Total simulated time; ``T/dt`` steps (at most ``max_work``). Each batch must last at least
        10 relaxation times :math:`1/\min\mathrm{Re}\,\lambda(H)`, or the batch means are correlated.
    burn_in : float
        Fraction in [0, 0.5].
    batches : int
        Number of batches, 5 to 1000.

    Returns
    -------
    (rate, stderr) : tuple of float
    """
    H, D = _check_HD(H, D, two_d=True)
    T = _v.real("T", T, 0.0, None, lo_open=True)
    dt = _check_dt(H, dt)
    burn_in = _v.real("burn_in", burn_in, 0.0, 0.5)
    batches = _v.integer("batches", batches, 5, 1000)
    max_work = _v.integer("max_work", max_work, 1)
    if T / dt > max_work:
        raise ValueError(f"T/dt = {T / dt:.3g} steps exceeds the work bound max_work = {max_work}")
    steps = max(int(round(T / dt)), 1)
    relax = 1.0 / np.linalg.eigvals(H).real.min()
    batch_time = (1.0 - burn_in) * steps * dt / batches
    if batch_time < 10.0 * relax:
        raise ValueError(
            f"T = {T:g} is too short for {batches} batches: each would last {batch_time:.3g}, "
            f"less than 10 relaxation times ({10 * relax:.3g}); need T >= "
            f"{10 * relax * batches / (1 - burn_in):.3g}"
        )
    inc = area_increments(simulate_ou(H, D, dt, steps, seed, max_work=max_work))
    return batch_means(inc, dt, burn_in=burn_in, batches=batches)


def batch_means(increments, dt, *, burn_in: float = 0.1, batches: int = 20) -> tuple[float, float]:
    r"""Rate and batch-means standard error from the per-step area increments of one path.

    The first ``ceil(burn_in · len)`` increments are dropped, then the remainder at the start so that
    ``batches`` equal contiguous batches are left; each batch gives (sum of its increments) / (its
    duration), and :math:`\text{stderr} = \mathrm{sd}(\text{batch rates})/\sqrt{\text{batches}}`.
    This is the second half of :func:`area_mc`, for a caller that already holds the path (same numbers).

    Parameters
    ----------
    increments : array_like, shape (K,)
        Per-step area increments (:func:`area_increments`).
    dt : float
        Step :math:`\Delta` (SDE time per increment).
    burn_in : float
        Fraction of the increments dropped at the start.
    batches : int
        Number of contiguous batches.

    Returns
    -------
    (rate, stderr) : tuple of float
        Mean area rate per unit SDE time and its batch-means standard error.
    """
    inc = _v.finite_array("increments", increments, ndim=1)
    dt = _v.real("dt", dt, 0.0, None, lo_open=True)
    burn_in = _v.real("burn_in", burn_in, 0.0, 0.5)
    batches = _v.integer("batches", batches, 5, 1000)
    inc = inc[int(math.ceil(burn_in * inc.size)) :]
    per = inc.size // batches
    if per < 1:
        raise ValueError(f"increments: {inc.size} after the burn-in, fewer than batches = {batches}")
    inc = inc[inc.size - per * batches :]  # drop the remainder at the start
    rates = inc.reshape(batches, per).sum(axis=1) / (per * dt)
    return float(rates.mean()), float(rates.std(ddof=1) / math.sqrt(batches))


# --------------------------------------------------------------------------- FFN
def _check_ffn(W_in, W_out, X):
    W_in = _v.finite_array("W_in", W_in, ndim=2, shape=(None, 2), max_size=2 * HIDDEN_MAX)
    m = W_in.shape[0]
    if m == 0:
        raise ValueError("W_in must have at least one row (hidden unit)")
    W_out = _v.finite_array("W_out", W_out, shape=(2, m))
    for name, W in (("W_in", W_in), ("W_out", W_out)):
        if np.abs(W).max() > ENTRY_MAX:
            raise ValueError(f"{name} must have entries of size <= {ENTRY_MAX:g}")
    X = _v.finite_array("X", X, ndim=2, shape=(None, 2), max_size=2 * MAX_POINTS)
    if X.shape[0] * m > 50 * MAX_POINTS:
        raise ValueError(f"len(X) × hidden units = {X.shape[0] * m} exceeds the work bound {50 * MAX_POINTS}")
    return W_in, W_out, X


def ffn_field(W_in, W_out, X) -> np.ndarray:
    r"""The field :math:`f(x) = W_\text{out}\tanh(W_\text{in}x)` at the 2-D points ``X``; shape (len(X), 2).

    Parameters
    ----------
    W_in : array_like, shape (h, 2)
        First layer (h hidden units).
    W_out : array_like, shape (2, h)
        Second layer.
    X : array_like, shape (N, 2)
        Points :math:`x` of the plane where the field is evaluated (at most ``MAX_POINTS`` = 10⁶
        rows).

    Returns
    -------
    ndarray, shape (N, 2)
        :math:`f(x)` at every point.
    """
    W_in, W_out, X = _check_ffn(W_in, W_out, X)
    return np.tanh(X @ W_in.T) @ W_out.T


def ffn_curl(W_in, W_out, X) -> np.ndarray:
    r"""Curl :math:`J_{21} - J_{12}` of :math:`f(x) = W_\text{out}\tanh(W_\text{in}x)` at the 2-D points ``X``.

    .. math::

        J_{21} - J_{12} = \sum_i \big(1 - \tanh^2\langle w_i, x\rangle\big)
        \big(W_{\text{out},2i}W_{\text{in},i1} - W_{\text{out},1i}W_{\text{in},i2}\big),

    identically 0 when :math:`W_\text{out} = W_\text{in}^\top`.

    Parameters
    ----------
    W_in : array_like, shape (m, 2)
    W_out : array_like, shape (2, m)
    X : array_like, shape (N, 2)

    Returns
    -------
    ndarray, shape (N,)
    """
    W_in, W_out, X = _check_ffn(W_in, W_out, X)
    s = 1.0 - np.tanh(X @ W_in.T) ** 2  # (N, m)
    return s @ (W_out[1] * W_in[:, 0] - W_out[0] * W_in[:, 1])


def warm() -> None:
    """Compile (or load from cache) the Euler–Maruyama kernel; see :mod:`sim.warm`."""
    simulate_ou(np.eye(2), np.eye(2), 0.1, 2, 0)
