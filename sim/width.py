r"""Width: lazy (NTK) training against mean-field training, and the frozen kernel.

A shallow tanh network of width :math:`N` (even) with scalar input, trained by
gradient flow on a small data set :math:`(x_m, y_m)_{m=1}^M` with the loss
:math:`L = \tfrac12\sum_m (f(x_m) - y_m)^2` (``docs/constructions.md``,
"Width: lazy training and the frozen kernel").  Two scalings
of the same parameters :math:`(w_i, a_i)`:

.. math::

    \text{lazy:}\quad f(x) = N^{-1/2}\sum_i a_i\,\sigma(w_i x),\qquad
    \text{mean-field:}\quad \tilde f(x) = N^{-1}\sum_i a_i\,\sigma(w_i x),

with :math:`\sigma = \tanh`; the mean-field network is trained :math:`N` times
faster.  Writing the output factor as :math:`c` and the training speed as
:math:`\gamma` (lazy :math:`c = N^{-1/2}, \gamma = 1`; mean-field
:math:`c = N^{-1}, \gamma = N`), the gradient flow in **training time** :math:`t` is

.. math::

    \dot a_i = -\gamma c \sum_m r_m\,\sigma(w_i x_m),\qquad
    \dot w_i = -\gamma c\, a_i \sum_m r_m\,\sigma'(w_i x_m)\,x_m,\qquad
    r_m = f(x_m) - y_m,

and the residual obeys :math:`\dot r = -K(t)\,r` with the tangent kernel
(:math:`\gamma c^2 = N^{-1}` in both scalings, so both share it)

.. math::

    K(x, x') = N^{-1}\sum_i \big[\sigma(w_i x)\sigma(w_i x')
               + a_i^2\,\sigma'(w_i x)\sigma'(w_i x')\,x x'\big].

Frozen kernel: :math:`r_0(t) = e^{-K_0 t} r(0)`; if
:math:`\|K(s) - K_0\| \le \varepsilon` on :math:`[0, t]` then
:math:`\|r(t) - r_0(t)\| \le t\,\varepsilon\,\|r(0)\|`.

What the module computes

- :func:`paired_init` (the paired start: :math:`f \equiv 0`), :func:`random_init`
  (unpaired: independent :math:`w_i` and signs :math:`a_i = \pm1`).
- :func:`kernel`, :func:`network`, :func:`loss_gradient`.
- :func:`train` (paired start) and :func:`train_from` (any start): classical
  fourth-order Runge–Kutta with a fixed step, records of loss, parameter and
  kernel motion, the residual, the frozen-kernel prediction and the bound.
- :func:`width_sweep` and :func:`slope`: the motion at the final time against
  :math:`N`, and least-squares slopes on log–log axes.

What it does NOT claim: that wide networks in general are kernel machines.  The
:math:`N^{-1/2}` statement is a bound for this network on a fixed time interval
with a bounded start; the measured kernel change is often smaller (for the
paired start and, on average, for random signs it is :math:`\sim N^{-1}`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from sim import _ready
from sim._validate import choice, finite_array, integer, real

__all__ = [
    "SCALINGS",
    "STARTS",
    "DATASETS",
    "dataset",
    "paired_init",
    "random_init",
    "kernel",
    "train",
    "train_from",
    "width_sweep",
    "slope",
]

SCALINGS = ("lazy", "mean_field")
STARTS = ("paired", "random")

N_MAX = 1 << 16  # width
M_MAX = 64  # data points
T_MAX = 1.0e3  # training time
X_MAX = 1.0e3  # |x_m|, |y_m|
RECORD_MAX = 10_000
MAX_WORK = 2.0e7  # default bound on steps * N * M (8e7 tanh evaluations: a few seconds)
MAX_STEPS = 1_000_000  # RK4 steps of one run
STABLE = 2.5  # RK4 is stable on the negative real axis for h*lambda < 2.785


# Small data sets (x_m, y_m) for the page presets: no two of them identical.
DATASETS: dict[str, tuple[tuple[float, ...], tuple[float, ...]]] = {
    "one_point": ((1.0,), (1.0,)),
    "three_points": ((-1.5, 0.5, 1.2), (-0.6, 0.8, 0.3)),
    "close_pair": ((0.9, 1.1), (1.0, -1.0)),
    "odd_pair": ((-1.0, 1.0), (1.0, 1.0)),
    "wave": ((-1.8, -1.0, -0.3, 0.5, 1.3, 2.0), (-0.4, -1.0, -0.45, 0.7, 0.9, -0.3)),
}


def dataset(name: str) -> tuple[np.ndarray, np.ndarray]:
    r"""The inputs ``xs`` and targets ``ys`` of a named data set (see :data:`DATASETS`).

    Parameters
    ----------
    name : str
        A key of :data:`DATASETS` (e.g. ``"three_points"``).

    Returns
    -------
    (xs, ys) : tuple of ndarray, shape (M,)
        Inputs :math:`x_m` and targets :math:`y_m`.
    """
    choice("name", name, DATASETS)
    xs, ys = DATASETS[name]
    return np.array(xs, dtype=float), np.array(ys, dtype=float)


# ---------------------------------------------------------------------------
# argument helpers
# ---------------------------------------------------------------------------


def _width(N) -> int:
    N = integer("N", N, 2, N_MAX)
    if N % 2:
        raise ValueError(f"N must be even (units come in pairs), got {N}")
    return N


def _seed(seed) -> int:
    return integer("seed", seed, 0, 2**32 - 1)


def _data(xs, ys=None):
    xs = finite_array("xs", xs, ndim=1, max_size=M_MAX)
    if xs.size == 0:
        raise ValueError("xs must hold at least one data point")
    if np.max(np.abs(xs)) > X_MAX:
        raise ValueError(f"xs must lie in [-{X_MAX:g}, {X_MAX:g}]")
    if ys is None:
        return xs
    ys = finite_array("ys", ys, ndim=1, shape=(xs.size,))
    if np.max(np.abs(ys)) > X_MAX:
        raise ValueError(f"ys must lie in [-{X_MAX:g}, {X_MAX:g}]")
    return xs, ys


def _params(w, a):
    w = finite_array("w", w, ndim=1, max_size=N_MAX)
    a = finite_array("a", a, ndim=1, shape=(w.size,))
    if w.size == 0:
        raise ValueError("w must hold at least one unit")
    if max(np.max(np.abs(w)), np.max(np.abs(a))) > X_MAX:
        raise ValueError(f"w and a must lie in [-{X_MAX:g}, {X_MAX:g}]")
    return w, a


def _scale(scaling: str, N: int) -> tuple[float, float]:
    """Output factor c and training speed gamma of a scaling."""
    choice("scaling", scaling, SCALINGS)
    return (N**-0.5, 1.0) if scaling == "lazy" else (1.0 / N, float(N))


# ---------------------------------------------------------------------------
# starts, kernel, network, gradient
# ---------------------------------------------------------------------------


def paired_init(N, seed):
    r"""The paired start: units in pairs with the same :math:`w` and :math:`a = +1, -1`.

    Units ``2k`` and ``2k+1`` share :math:`w_{2k} = w_{2k+1} \sim \mathcal N(0, 1)`
    (drawn from ``numpy.random.default_rng(seed)``) and have :math:`a_{2k} = 1`,
    :math:`a_{2k+1} = -1`, so every pair cancels and :math:`f(0, x) = 0` for every
    :math:`x`, in both scalings.

    Parameters
    ----------
    N : int
        Even width, ``2 <= N <= 65536``.
    seed : int
        Seed of the generator, ``0 <= seed < 2**32``.

    Returns
    -------
    w, a : numpy.ndarray
        Shape ``(N,)`` each.
    """
    N = _width(N)
    rng = np.random.default_rng(_seed(seed))
    w = np.repeat(rng.standard_normal(N // 2), 2)
    a = np.tile(np.array([1.0, -1.0]), N // 2)
    return w, a


def random_init(N, seed):
    r"""An unpaired random start: :math:`w_i \sim \mathcal N(0,1)`, :math:`a_i = \pm 1` independent.

    The same law of :math:`K(0)` as :func:`paired_init` (:math:`a_i^2 = 1`), but
    :math:`f(0, \cdot) \ne 0`: in the lazy scaling it is a random function of
    size :math:`O(1)`, in the mean-field scaling :math:`O(N^{-1/2})`.

    Parameters
    ----------
    N : int
        Even width, ``2 <= N <= 65536`` (even so that it compares with the paired start).
    seed : int

    Returns
    -------
    w, a : numpy.ndarray
        As :func:`paired_init`: shape ``(N,)`` each.
    """
    N = _width(N)
    rng = np.random.default_rng(_seed(seed))
    w = rng.standard_normal(N)
    a = np.where(rng.random(N) < 0.5, -1.0, 1.0)
    return w, a


def _features(w, a, xs):
    S = np.tanh(np.outer(w, xs))  # sigma(w_i x_m), (N, M)
    D = (1.0 - S * S) * xs  # sigma'(w_i x_m) x_m
    return S, D


def _kernel(S, D, a):
    N = S.shape[0]
    Da = D * a[:, None]
    return (S.T @ S + Da.T @ Da) / N


def kernel(w, a, xs):
    r"""The tangent kernel on the data points (the same for both scalings).

    .. math::

        K(x_m, x_{m'}) = N^{-1}\sum_{i=1}^N \big[\tanh(w_i x_m)\tanh(w_i x_{m'})
        + a_i^2\,\tanh'(w_i x_m)\tanh'(w_i x_{m'})\,x_m x_{m'}\big].

    Parameters
    ----------
    w, a : array_like
        Shape ``(N,)``, finite, ``|w_i|, |a_i| <= 1000``.
    xs : array_like
        Shape ``(M,)``, ``1 <= M <= 64``.

    Returns
    -------
    numpy.ndarray
        Symmetric positive semi-definite, shape ``(M, M)``.
    """
    w, a = _params(w, a)
    xs = _data(xs)
    S, D = _features(w, a, xs)
    return _kernel(S, D, a)


# ---------------------------------------------------------------------------
# training
# ---------------------------------------------------------------------------


def _velocity(w, a, xs, ys, c, gc):
    """(dw/dt, da/dt, S, D) at (w, a); gc = gamma * c."""
    S = np.tanh(np.outer(w, xs))
    D = (1.0 - S * S) * xs
    r = c * (a @ S) - ys
    return -gc * a * (D @ r), -gc * (S @ r), S, D


def _spectral_norms(stack):
    """Spectral norms of a stack of symmetric matrices."""
    return np.max(np.abs(np.linalg.eigvalsh(stack)), axis=-1)


def _steps_per_record(T: float, dt: float, record: int) -> int:
    return max(1, math.ceil(T / (record - 1) / dt - 1e-9))


def _integrate_reference(w, a, xs, ys, c, gc, h, steps, k, K0):
    """NumPy RK4 (the reference): records of residual and parameter shift, per-step kernel shift.

    Returns ``(resid (record, M), pshift (record,), knorm (steps + 1,), w, a, ok)``."""
    M, record = xs.size, steps // k + 1
    w0, a0 = w.copy(), a.copy()
    resid = np.empty((record, M))
    pshift = np.empty(record)
    knorm = np.empty(steps + 1)  # ||K(s) - K(0)||_2 at every step s = n h
    buf = np.empty((min(steps, 256), M, M))  # K(s) - K(0), flushed through one batched eigvalsh
    resid[0], pshift[0] = c * (a @ np.tanh(np.outer(w, xs))) - ys, 0.0
    j, nb = 1, 0
    for n in range(steps):
        dw1, da1, S, D = _velocity(w, a, xs, ys, c, gc)
        buf[nb] = _kernel(S, D, a) - K0
        nb += 1
        if nb == buf.shape[0]:
            knorm[n + 1 - nb : n + 1] = _spectral_norms(buf)
            nb = 0
        dw2, da2, _, _ = _velocity(w + 0.5 * h * dw1, a + 0.5 * h * da1, xs, ys, c, gc)
        dw3, da3, _, _ = _velocity(w + 0.5 * h * dw2, a + 0.5 * h * da2, xs, ys, c, gc)
        dw4, da4, _, _ = _velocity(w + h * dw3, a + h * da3, xs, ys, c, gc)
        w = w + (h / 6.0) * (dw1 + 2.0 * dw2 + 2.0 * dw3 + dw4)
        a = a + (h / 6.0) * (da1 + 2.0 * da2 + 2.0 * da3 + da4)
        if (n + 1) % k == 0:
            if not (np.all(np.isfinite(w)) and np.all(np.isfinite(a))):
                return resid, pshift, knorm, w, a, False
            resid[j] = c * (a @ np.tanh(np.outer(w, xs))) - ys
            pshift[j] = max(np.max(np.abs(w - w0)), np.max(np.abs(a - a0)))
            j += 1
    if nb:
        knorm[steps - nb : steps] = _spectral_norms(buf[:nb])
    S, D = _features(w, a, xs)
    knorm[steps] = _spectral_norms((_kernel(S, D, a) - K0)[None])[0]
    return resid, pshift, knorm, w, a, True


@njit(cache=True, nogil=True)
def _stage(w, a, xs, ys, c, gc, S, f, r, dw, da):  # pragma: no cover - compiled
    """One evaluation of the velocity field into dw, da; leaves tanh(w_i x_m) in S."""
    N, M = S.shape
    for m in range(M):
        f[m] = 0.0
    for i in range(N):
        for m in range(M):
            s = math.tanh(w[i] * xs[m])
            S[i, m] = s
            f[m] += a[i] * s
    for m in range(M):
        r[m] = c * f[m] - ys[m]
    for i in range(N):
        ga = 0.0
        gw = 0.0
        for m in range(M):
            s = S[i, m]
            ga += r[m] * s
            gw += r[m] * (1.0 - s * s) * xs[m]
        da[i] = -gc * ga
        dw[i] = -gc * a[i] * gw


@njit(cache=True, nogil=True)
def _kernel_shift_norm(S, a, xs, K0, Kd):  # pragma: no cover - compiled
    """||K - K0||_2 for the kernel of tanh values S and output weights a."""
    N, M = S.shape
    for m in range(M):
        for q in range(M):
            Kd[m, q] = 0.0
    for i in range(N):
        a2 = a[i] * a[i]
        for m in range(M):
            sm = S[i, m]
            dm = (1.0 - sm * sm) * xs[m]
            for q in range(m + 1):
                sq = S[i, q]
                Kd[m, q] += sm * sq + a2 * dm * (1.0 - sq * sq) * xs[q]
    for m in range(M):
        for q in range(m + 1):
            v = Kd[m, q] / N - K0[m, q]
            Kd[m, q] = v
            Kd[q, m] = v
    ev = np.linalg.eigvalsh(Kd)
    return max(abs(ev[0]), abs(ev[-1]))


@njit(cache=True, nogil=True)
def _integrate_kernel(w, a, xs, ys, c, gc, h, steps, k, K0, resid, pshift, knorm):  # pragma: no cover - compiled
    """The loop of :func:`_integrate_reference`, fused (same arithmetic order per unit)."""
    N, M = w.size, xs.size
    w0 = w.copy()
    a0 = a.copy()
    S = np.empty((N, M))
    S2 = np.empty((N, M))
    f = np.empty(M)
    r = np.empty(M)
    Kd = np.empty((M, M))
    k1w, k1a = np.empty(N), np.empty(N)
    k2w, k2a = np.empty(N), np.empty(N)
    k3w, k3a = np.empty(N), np.empty(N)
    k4w, k4a = np.empty(N), np.empty(N)
    tw, ta = np.empty(N), np.empty(N)
    _stage(w, a, xs, ys, c, gc, S, f, r, k1w, k1a)
    for m in range(M):
        resid[0, m] = r[m]
    pshift[0] = 0.0
    j = 1
    fresh = True  # k1 and S hold the velocity at the current state
    for n in range(steps):
        if not fresh:
            _stage(w, a, xs, ys, c, gc, S, f, r, k1w, k1a)
        fresh = False
        knorm[n] = _kernel_shift_norm(S, a, xs, K0, Kd)
        for i in range(N):
            tw[i] = w[i] + 0.5 * h * k1w[i]
            ta[i] = a[i] + 0.5 * h * k1a[i]
        _stage(tw, ta, xs, ys, c, gc, S2, f, r, k2w, k2a)
        for i in range(N):
            tw[i] = w[i] + 0.5 * h * k2w[i]
            ta[i] = a[i] + 0.5 * h * k2a[i]
        _stage(tw, ta, xs, ys, c, gc, S2, f, r, k3w, k3a)
        for i in range(N):
            tw[i] = w[i] + h * k3w[i]
            ta[i] = a[i] + h * k3a[i]
        _stage(tw, ta, xs, ys, c, gc, S2, f, r, k4w, k4a)
        for i in range(N):
            w[i] += (h / 6.0) * (k1w[i] + 2.0 * k2w[i] + 2.0 * k3w[i] + k4w[i])
            a[i] += (h / 6.0) * (k1a[i] + 2.0 * k2a[i] + 2.0 * k3a[i] + k4a[i])
        if (n + 1) % k == 0:
            shift = 0.0
            for i in range(N):
                if not (math.isfinite(w[i]) and math.isfinite(a[i])):
                    return False
                shift = max(shift, abs(w[i] - w0[i]), abs(a[i] - a0[i]))
            _stage(w, a, xs, ys, c, gc, S, f, r, k1w, k1a)  # also the next step's first stage
            for m in range(M):
                resid[j, m] = r[m]
            pshift[j] = shift
            j += 1
            fresh = True
    knorm[steps] = _kernel_shift_norm(S, a, xs, K0, Kd)
    return True


def _integrate_numba(w, a, xs, ys, c, gc, h, steps, k, K0):
    """The Numba kernel with the reference's interface."""
    M, record = xs.size, steps // k + 1
    w, a = w.copy(), a.copy()
    resid = np.empty((record, M))
    pshift = np.empty(record)
    knorm = np.empty(steps + 1)
    ok = _integrate_kernel(w, a, xs, ys, c, gc, h, steps, k, np.ascontiguousarray(K0), resid, pshift, knorm)
    return resid, pshift, knorm, w, a, ok


_ENGINES = {"numba": _integrate_numba, "numpy": _integrate_reference}


def train_from(w, a, scaling, T, dt, xs, ys, record=50, *, max_work=MAX_WORK, engine="numba"):
    r"""Gradient flow of the network from the start ``(w, a)``; see :func:`train`.

    Parameters
    ----------
    w, a : array_like
        The start, shape ``(N,)`` each (any finite values with ``|.| <= 1000``).
    scaling, T, dt, xs, ys, record, max_work
        As in :func:`train`.
    engine : {"numba", "numpy"}, optional
        The compiled RK4 loop or its plain-NumPy reference (same numbers to rounding).

    Returns
    -------
    dict
        As in :func:`train`.
    """
    w, a = _params(w, a)
    N = w.size
    c, gamma = _scale(scaling, N)
    T = real("T", T, 0.0, T_MAX, lo_open=True)
    dt = real("dt", dt, 0.0, T, lo_open=True)
    xs, ys = _data(xs, ys)
    record = integer("record", record, 2, RECORD_MAX)
    max_work = real("max_work", max_work, 1.0)
    choice("engine", engine, _ENGINES)
    M = xs.size
    k = _steps_per_record(T, dt, record)
    steps = k * (record - 1)
    work = float(steps) * N * M
    if steps > MAX_STEPS:
        raise ValueError(f"T/dt needs {steps} steps, more than {MAX_STEPS}: raise dt or lower T")
    if work > max_work:
        raise ValueError(
            f"steps x N x M = {steps} x {N} x {M} = {work:.3g} exceeds max_work = "
            f"{max_work:.3g}: lower N or T, or raise dt"
        )
    h = T / steps

    S, D = _features(w, a, xs)
    K0 = _kernel(S, D, a)
    lam0, Q = np.linalg.eigh(K0)
    lam0 = np.clip(lam0, 0.0, None)  # K0 is PSD; clip rounding below zero
    if h * lam0[-1] > STABLE:
        raise ValueError(
            f"dt = {dt:g} is too large for a stable step: dt x (largest eigenvalue of "
            f"K(0) = {lam0[-1]:.3g}) must stay below {STABLE}"
        )
    r0 = c * (a @ S) - ys
    if engine == "numba" and not _ready.ready("width"):  # compiling at server start (sim._ready)
        engine = "numpy"
    resid, pshift, knorm, w_end, a_end, ok = _ENGINES[engine](w.copy(), a.copy(), xs, ys, c, gamma * c, h, steps, k, K0)
    knorm[0] = 0.0  # K(0) - K(0); the engines' own sums differ by rounding
    if not ok or not (np.all(np.isfinite(resid)) and np.all(np.isfinite(knorm))):
        raise ValueError(f"the integration diverged (dt = {dt:g}): lower dt")
    lam_max = lam0[-1] + np.max(knorm)  # >= ||K(s)|| for all s
    if h * lam_max > STABLE:
        raise ValueError(
            f"dt = {dt:g} is too large for a stable step: the kernel grew to norm "
            f"{lam_max:.3g} during training, dt x norm must stay below {STABLE}"
        )
    t_rec = np.linspace(0.0, T, record)
    idx = np.arange(record) * k
    running = np.maximum.accumulate(knorm)
    frozen = (Q * np.exp(-np.outer(t_rec, lam0))[:, None, :]) @ (Q.T @ r0)
    S, D = _features(w_end, a_end, xs)
    K_end = _kernel(S, D, a_end)
    return {
        "t": t_rec,
        "loss": 0.5 * np.sum(resid * resid, axis=1),
        "param_shift": pshift,
        "kernel_shift": knorm[idx],
        "residual": resid,
        "frozen": frozen,
        "bound": t_rec * running[idx] * np.linalg.norm(r0),
        "K0": K0,
        "K_end": K_end,
        "eig0": lam0[::-1].copy(),
        "eig_end": np.clip(np.linalg.eigvalsh(K_end), 0.0, None)[::-1].copy(),
        "steps": steps,
        "h": h,
    }


def train(N, scaling, T, dt, seed, xs, ys, record=50, *, max_work=MAX_WORK):
    r"""Gradient flow from the paired start, integrated with classical RK4.

    Integrates :math:`\dot w, \dot a` (module docstring) on :math:`[0, T]` in
    training time with the classical fourth-order Runge–Kutta method and a fixed
    step :math:`h \le` ``dt`` (the largest step with a whole number of steps
    between consecutive records), from :func:`paired_init` ``(N, seed)``.

    Recorded at ``record`` equally spaced times :math:`t_j` from 0 to ``T``
    inclusive:

    - ``"t"`` ``(record,)``;
    - ``"loss"`` ``(record,)``: :math:`\tfrac12\sum_m r_m(t)^2`;
    - ``"param_shift"`` ``(record,)``: :math:`\max_i \max(|w_i(t)-w_i(0)|, |a_i(t)-a_i(0)|)`;
    - ``"kernel_shift"`` ``(record,)``: :math:`\|K(t) - K(0)\|_2` (spectral norm);
    - ``"residual"`` ``(record, M)``: :math:`r_m(t) = f(x_m, t) - y_m`;
    - ``"frozen"`` ``(record, M)``: :math:`e^{-K(0)t} r(0)` (exact, by eigendecomposition);
    - ``"bound"`` ``(record,)``: :math:`t\,\max_{s\le t}\|K(s)-K(0)\|_2\,\|r(0)\|_2`, the
      maximum taken over every integration step :math:`s = nh \le t`;

    and, once: ``"K0"``, ``"K_end"`` (the kernels at 0 and ``T``), ``"eig0"``,
    ``"eig_end"`` (their eigenvalues, descending), ``"steps"`` and ``"h"``.

    Parameters
    ----------
    N : int
        Even width, ``2 <= N <= 65536``.
    scaling : {"lazy", "mean_field"}
        Lazy: :math:`f = N^{-1/2}\sum a_i\tanh(w_i x)`, speed 1. Mean-field:
        :math:`f = N^{-1}\sum a_i\tanh(w_i x)`, speed :math:`N`. Both start with
        the same :func:`kernel`.
    T : float
        Training time, ``0 < T <= 1000``.
    dt : float
        Largest RK4 step, ``0 < dt <= T``; ``dt`` times the largest eigenvalue of
        the kernel must stay below 2.5 (stability), else ``ValueError``.
    seed : int
        Seed of :func:`paired_init`.
    xs, ys : array_like
        Data inputs and targets, shape ``(M,)``, ``1 <= M <= 64``, ``|.| <= 1000``.
    record : int, optional
        Number of recorded times, ``2 <= record <= 10000``.
    max_work : float, optional
        Bound on ``steps * N * M`` (default ``2e7``, a few seconds): larger
        requests raise ``ValueError`` before any work.

    Returns
    -------
    dict
        The keys above.

    Notes
    -----
    With the paired start the first-order kernel changes of the two units of a
    pair cancel, so :math:`\dot K(0) = 0` and :math:`K(t) - K(0) = O(t^2)`: the
    bound starts like :math:`t^3`. A first-order (Euler) step makes errors of
    size :math:`O(h\,t)` and leaves it; RK4's :math:`O(h^4 t)` does not at the
    step sizes of the page (tested).
    """
    w, a = paired_init(N, seed)
    return train_from(w, a, scaling, T, dt, xs, ys, record, max_work=max_work)


# ---------------------------------------------------------------------------
# motion against width
# ---------------------------------------------------------------------------


def width_sweep(Ns, T, dt, seed, xs, ys, start="paired", *, max_work=MAX_WORK):
    r"""Parameter and kernel motion at the final time ``T`` for each width in ``Ns``.

    For every :math:`N` and both scalings, :func:`train_from` from
    :func:`paired_init` or :func:`random_init` ``(N, seed)`` with two records.

    Parameters
    ----------
    Ns : array_like of int
        Even widths (at most 32 of them).
    T, dt, seed, xs, ys
        As in :func:`train`.
    start : {"paired", "random"}
    max_work : float, optional
        Bound on the total ``steps * N * M`` of all runs.

    Returns
    -------
    dict
        ``"N"`` ``(len(Ns),)``; for each scaling ``s``: ``s + "_param"`` and
        ``s + "_kernel"`` ``(len(Ns),)``, the values of ``param_shift`` and
        ``kernel_shift`` at ``T``.
    """
    Ns_arr = finite_array("Ns", Ns, ndim=1, max_size=32)
    if Ns_arr.size < 1:
        raise ValueError("Ns must hold at least one width")
    Ns_int = [_width(n) for n in Ns_arr]
    choice("start", start, STARTS)
    T = real("T", T, 0.0, T_MAX, lo_open=True)
    dt = real("dt", dt, 0.0, T, lo_open=True)
    xs, ys = _data(xs, ys)
    max_work = real("max_work", max_work, 1.0)
    steps = _steps_per_record(T, dt, 2)
    total = float(steps) * xs.size * sum(Ns_int) * len(SCALINGS)
    if total > max_work:
        raise ValueError(
            f"the sweep needs {total:.3g} > max_work = {max_work:.3g} units of work: "
            f"fewer or smaller widths, or a larger dt"
        )
    init = paired_init if start == "paired" else random_init
    out = {"N": np.array(Ns_int)}
    for s in SCALINGS:
        ps, ks = [], []
        for n in Ns_int:
            w, a = init(n, seed)
            res = train_from(w, a, s, T, dt, xs, ys, record=2, max_work=max_work)
            ps.append(res["param_shift"][-1])
            ks.append(res["kernel_shift"][-1])
        out[s + "_param"] = np.array(ps)
        out[s + "_kernel"] = np.array(ks)
    return out


def slope(Ns, values):
    r"""Least-squares slope of :math:`\log(\text{values})` against :math:`\log N`.

    Parameters
    ----------
    Ns, values : array_like
        Same length (at least 2), all positive and finite.

    Returns
    -------
    float
    """
    Ns = finite_array("Ns", Ns, ndim=1)
    values = finite_array("values", values, ndim=1, shape=(Ns.size,))
    if Ns.size < 2 or np.min(Ns) <= 0 or np.min(values) <= 0 or np.ptp(Ns) == 0:
        raise ValueError("slope needs at least two distinct positive Ns and positive values")
    return float(np.polyfit(np.log(Ns), np.log(values), 1)[0])


def warm() -> None:
    """Compile or load the Numba kernel (``python -m sim.warm``)."""
    xs, ys = dataset("three_points")
    train(4, "lazy", 0.1, 0.05, 0, xs, ys, record=2)
