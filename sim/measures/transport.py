"""Stability by transport: n tokens on the circle against a large reference system (:mod:`sim.measures`)."""

from __future__ import annotations

import functools
import math

import numpy as np

from sim import _validate as _v
from sim.attention import simulate

from sim.measures.circle import w1_circle
from sim.measures.limits import MAX_STABILITY_WORK, TWO_PI

# --------------------------------------------------------------------------- stability
#: Fourier coefficients of the initial density ρ₀(θ) = (1 + a₁ cos θ + a₂ cos 2θ) / 2π
_RHO_A1, _RHO_A2 = 0.5, 0.45


def initial_density(theta) -> np.ndarray:
    r"""The initial measure of :func:`stability`:
    :math:`\rho_0(\theta) = (1 + \tfrac12\cos\theta + 0.45\cos 2\theta)/2\pi`.

    Two unequal bumps (at 0 and π), positive everywhere (minimum :math:`0.05/2\pi`).

    Parameters
    ----------
    theta : array_like
        Angles (rad).
    """
    th = np.asarray(theta, dtype=float)
    return (1.0 + _RHO_A1 * np.cos(th) + _RHO_A2 * np.cos(2.0 * th)) / TWO_PI


def initial_cdf(theta) -> np.ndarray:
    r""":math:`F_0(\theta) = (\theta + \tfrac12\sin\theta + 0.225\sin 2\theta)/2\pi` on :math:`[0, 2\pi]`.

    Parameters
    ----------
    theta : array_like
        Angles in :math:`[0, 2\pi]`.
    """
    th = np.asarray(theta, dtype=float)
    return (th + _RHO_A1 * np.sin(th) + 0.5 * _RHO_A2 * np.sin(2.0 * th)) / TWO_PI


def initial_quantile(q) -> np.ndarray:
    r""":math:`F_0^{-1}(q)` for ``q`` in [0, 1] (bisection to 1e-15 rad; F₀ is strictly increasing).

    Parameters
    ----------
    q : array_like
        Probabilities in [0, 1].

    Returns
    -------
    ndarray
        Angles :math:`\theta` with :math:`F_0(\theta) = q`.
    """
    q = np.asarray(q, dtype=float)
    lo = np.zeros_like(q)
    hi = np.full_like(q, TWO_PI)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        below = initial_cdf(mid) < q
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    return 0.5 * (lo + hi)


def stability_constant(beta, dt) -> float:
    r"""The constant :math:`C` of :func:`stability`'s bound :math:`W_1(\tau) \le e^{C\tau}W_1(0)`.

    .. math::

        C(\beta, \Delta) = \frac{(1 + \beta) + (1 + 2\beta)\,e^{2\beta}}{1 - \Delta},
        \qquad 0 < \Delta < 1 .

    Derivation (circle, :math:`A = V = I`, SA; the layer map of :mod:`sim.attention`). Write
    tokens as angles. For a probability measure :math:`\nu` let
    :math:`m(\theta,\nu) = \int k(\psi-\theta)\,e^{i(\psi-\theta)}\,d\nu(\psi) / \int k(\psi-\theta)\,d\nu(\psi)`,
    :math:`k(x) = e^{\beta\cos x}`: the attention output seen from the token, :math:`|m|\le 1`.
    One layer moves every token of a system with empirical measure :math:`\nu` by
    :math:`T_\nu(\theta) = \theta + \arg(1 + \Delta\,m(\theta,\nu))` (this is exactly
    :math:`z \mapsto (z + \Delta u)/\lVert z+\Delta u\rVert`).

    1. :math:`\arg` is :math:`1/(1-\Delta)`-Lipschitz on the disc :math:`|w - 1|\le\Delta`.
    2. Position: :math:`\partial_\theta m = -i\,m + \beta\,\mathrm{Cov}_p(\sin x, e^{ix})`
       (:math:`p` the softmax weights, :math:`x = \psi-\theta`), and
       :math:`|\mathrm{Cov}_p| \le \sqrt{\mathrm{Var}_p\sin x}\sqrt{1-|m|^2}\le 1`, so
       :math:`|\partial_\theta m| \le 1 + \beta =: L_x`.
    3. Measure: along :math:`\nu_t = (1-t)\mu + t\nu`,
       :math:`\partial_t m = \int h_t\,d(\nu-\mu)` with
       :math:`h_t = k(x)(e^{ix} - m_t)/Z_t`; :math:`|h_t'| \le e^{\beta}(1 + 2\beta)/e^{-\beta}`,
       so by Kantorovich–Rubinstein :math:`|m(\theta,\nu)-m(\theta,\mu)| \le L_\nu W_1(\nu,\mu)`,
       :math:`L_\nu = (1 + 2\beta)e^{2\beta}`.
    4. Push an optimal coupling of :math:`\nu, \mu` through :math:`(T_\nu, T_\mu)`:
       :math:`W_1^{+} \le W_1 + \tfrac{\Delta}{1-\Delta}(L_x + L_\nu) W_1 = (1 + \Delta C) W_1`,
       hence after :math:`k` layers :math:`W_1 \le (1+\Delta C)^k W_1(0) \le e^{C\tau}W_1(0)`,
       :math:`\tau = k\Delta`.

    The bound holds for *any* two systems moved by the same layer map (finite particle
    systems are exact solutions of the measure equation); it is explicit, not sharp: the factor
    :math:`e^{2\beta}` pays for the worst case of a softmax denominator.

    Parameters
    ----------
    beta : float
        Inverse temperature, :math:`\beta \ge 0`.
    dt : float
        Step, :math:`0 < \Delta < 1`.

    Returns
    -------
    float
        :math:`C(\beta, \Delta)`.
    """
    beta = _v.real("beta", beta, 0.0, lo_open=True)
    dt = _v.real("dt", dt, 0.0, 1.0, lo_open=True, hi_open=True)
    if beta > 300.0:
        raise ValueError(f"beta must be <= 300 for a finite stability constant (e^(2β) overflows), got {beta}")
    return ((1.0 + beta) + (1.0 + 2.0 * beta) * math.exp(2.0 * beta)) / (1.0 - dt)


#: reference runs of stability() kept in memory (layers * n_ref angles at most, each)
_REF_CACHE_MAX = 2_000_000


def _circle_run(th0, beta, dt, steps, every):
    """Angles in [0, 2π) of the SA layer map (A = V = I) from the angles ``th0``, every
    ``every``-th layer and the last one; and those layers."""
    Z0 = np.stack([np.cos(th0), np.sin(th0)], axis=1)
    tr = simulate(Z0, beta, dt, steps, record_every=every)
    layers = np.arange(tr.shape[0]) * every
    if layers[-1] != steps:  # keep the last layer too
        tr = np.concatenate([tr, simulate(tr[-1], beta, dt, steps - layers[-1])[-1:]])
        layers = np.append(layers, steps)
    return np.mod(np.arctan2(tr[..., 1], tr[..., 0]), TWO_PI), layers


@functools.lru_cache(maxsize=16)
def _reference_run(beta, dt, steps, every, n_ref):
    """The reference system of :func:`stability`: it depends on neither ``n`` nor ``seed``, so a
    page that moves those reuses it (validated arguments; read-only result, callers copy)."""
    theta_ref = _circle_run(initial_quantile((np.arange(n_ref) + 0.5) / n_ref), beta, dt, steps, every)[0]
    theta_ref.setflags(write=False)
    return theta_ref


def stability(
    n, beta, T, dt, seed, n_ref=2048, *, max_records: int = 200, max_work: float = MAX_STABILITY_WORK
) -> dict:
    r"""W₁ over depth between ``n`` tokens and a large reference system, with the Gronwall bound.

    Circle (:math:`d = 2`), :math:`A = V = I`, SA layer map with step ``dt``
    (:func:`sim.attention.simulate`). Initial measure :math:`\mu_0` = :func:`initial_density`.
    The ``n`` tokens are iid samples of :math:`\mu_0` (``seed``); the reference is the refinement
    :math:`\theta^{\mathrm{ref}}_j = F_0^{-1}((j-\tfrac12)/n_{\mathrm{ref}})` of the same
    :math:`\mu_0` (its own W₁ to :math:`\mu_0` is :math:`O(1/n_{\mathrm{ref}})`).

    Parameters
    ----------
    n : int
        Tokens, ``1 <= n <= n_ref``.
    beta : float
        Inverse temperature, ``0 < beta <= 50``.
    T : float
        Depth horizon :math:`\tau_{\max} > 0`; ``round(T/dt)`` layers are run.
    dt : float
        Step :math:`\Delta \in (0, 1)`.
    seed : int
        Seed of the ``n`` samples.
    n_ref : int
        Reference tokens, ``>= 2``.
    max_records : int
        At most this many recorded layers (evenly spaced; layer 0 and the last kept).
    max_work : float
        Bound on ``layers * n_ref**2``.

    Returns
    -------
    dict
        ``"t"``: depth :math:`\tau` of the recorded layers; ``"w1"``: exact W₁ (geodesic)
        between the two systems there; ``"bound"``: :math:`\min(e^{C\tau}W_1(0),\ \pi)` with
        :math:`C` = :func:`stability_constant` ``(beta, dt)`` (π, the diameter, bounds every W₁
        on the circle; the cap keeps the number finite where :math:`e^{C\tau}` overflows);
        ``"log_bound"``: :math:`C\tau + \log W_1(0)` uncapped; ``"C"``; ``"theta"`` (layers, n)
        and ``"theta_ref"`` (layers, n_ref): the angles in :math:`[0, 2\pi)`.
    """
    n = _v.integer("n", n, 1)
    n_ref = _v.integer("n_ref", n_ref, 2)
    if n > n_ref:
        raise ValueError(f"n = {n} must be <= n_ref = {n_ref} (the reference is the large system)")
    beta = _v.real("beta", beta, 0.0, 50.0, lo_open=True)
    T = _v.real("T", T, 0.0, 1e4, lo_open=True)
    dt = _v.real("dt", dt, 0.0, 1.0, lo_open=True, hi_open=True)
    seed = _v.integer("seed", seed, 0)
    max_records = _v.integer("max_records", max_records, 2, 100_000)
    max_work = _v.real("max_work", max_work, 1.0)
    steps = max(int(round(T / dt)), 1)
    work = float(steps) * n_ref * n_ref
    if work > max_work:
        raise ValueError(
            f"layers*n_ref^2 = {work:.3g} > max_work={max_work:.3g}: use a larger dt, a "
            "smaller depth T or fewer reference tokens n_ref"
        )
    C = stability_constant(beta, dt)
    rng = np.random.default_rng(seed)
    th0 = initial_quantile(rng.random(n))
    every = max(1, -(-steps // (max_records - 1)))
    theta, layers = _circle_run(th0, beta, dt, steps, every)
    if layers.size * n_ref <= _REF_CACHE_MAX:
        theta_ref = _reference_run(beta, dt, steps, every, n_ref).copy()
    else:
        theta_ref = _reference_run.__wrapped__(beta, dt, steps, every, n_ref)
    w1 = np.array([w1_circle(a, b) for a, b in zip(theta, theta_ref)])
    t = layers * dt
    with np.errstate(divide="ignore"):
        log_bound = C * t + np.log(w1[0])
    bound = np.where(log_bound < math.log(math.pi), np.exp(np.clip(log_bound, -800.0, 2.0)), math.pi)
    return {
        "t": t,
        "w1": w1,
        "bound": bound,
        "log_bound": log_bound,
        "C": C,
        "theta": theta,
        "theta_ref": theta_ref,
        "layers": layers,
    }
