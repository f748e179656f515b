r"""How small per-layer pieces add up over depth (CONSTRUCTIONS.md §5).

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
below are those of the pieces drawn whole by the plain reference ``partial_sums`` (and ``sample``,
``covariance_decomposition``) in ``tests/_reference_depth_sum.py``, which the tests compare them with.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from sim import _ready  # NumPy references while the kernels compile at server start
from sim import _validate as _v

__all__ = [
    "variance", "mean", "variance_curve", "mean_curve", "prob_within_curve", "unit_sums",
    "sums_from_units", "path_moments", "paths_from_moments",
    "column_moments", "covariance_from_moments", "increment_rms", "prob_within",
    "residual_energy", "residual_energy_mc", "residual_energy_profile",
    "one_step", "sgd_step",
]

#: largest alpha accepted (L^{-alpha} for alpha > 2 adds nothing to the lesson)
ALPHA_MAX = 2.0
#: largest depth accepted by the exact (closed-form) functions
L_MAX_EXACT = 10**7
#: bound on trials * L for the Gaussian sums (normals drawn; ≈ 1 s at worst)
MAX_SUM_WORK = 40_000_000
#: bound on the entries of the sample paths (trials * (L + 1)) drawn at once
MAX_PATH_OUTPUT = 4_000_000
#: bound on trials * L * L for the covariance identity
MAX_COV_WORK = 400_000_000
#: largest depth for the covariance identity (an L x L matrix)
L_MAX_COV = 1024
#: bound on trials * L * width**2 for the residual network (normals drawn)
MAX_RESIDUAL_WORK = 100_000_000
#: largest depth for the residual network Monte Carlo (alpha = 0 grows like 2^{L/2})
L_MAX_RESIDUAL = 512
#: largest width for the residual network Monte Carlo
WIDTH_MAX = 1024
#: float64 entries drawn per block (keeps memory at ≈ 16 MB whatever the sizes)
_BLOCK = 2**21
#: largest seed (numpy accepts any non-negative int; we keep it in int64)
SEED_MAX = 2**63 - 1


# --------------------------------------------------------------------------- validation
def _alpha(alpha):
    return _v.real("alpha", alpha, 0.0, ALPHA_MAX)


def _depth(L, hi=L_MAX_EXACT):
    return _v.integer("L", L, 1, hi)


def _sigma(sigma):
    return _v.real("sigma", sigma, 0.0, 1e6, lo_open=True)


def _rho(rho, L):
    rho = _v.real("rho", rho, -1.0, 1.0)
    if L > 1 and rho < -1.0 / (L - 1) * (1.0 + 1e-12):
        raise ValueError(
            f"rho must be >= -1/(L-1) = {-1.0 / (L - 1):.6g} for L = {L}: L equally "
            f"correlated terms cannot all be that negatively correlated (the covariance "
            f"matrix (1-rho) I + rho 11^T has eigenvalue 1+(L-1)rho < 0), got {rho}")
    return rho


def _mu(mu):
    return _v.real("mu", mu, -1e6, 1e6)


def _trials(trials, lo=2):
    return _v.integer("trials", trials, lo)


def _seed(seed):
    return _v.integer("seed", seed, 0, SEED_MAX)


def _check_work(what: str, work: float, cap: float, hint: str):
    if work > cap:
        raise ValueError(f"{what} = {work:.3g} exceeds the bound {cap:.3g}: {hint}")


# --------------------------------------------------------------------------- exact laws
def variance(alpha, L, sigma, rho=0.0) -> float:
    r"""Exact variance of :math:`S_L=L^{-\alpha}\sum_{j\le L}\xi_j`.

    .. math:: \operatorname{Var} S_L = \sigma^2 L^{-2\alpha}\,\bigl(L + L(L-1)\rho\bigr)

    Parameters
    ----------
    alpha : float in [0, 2]
        Branch exponent (each piece is multiplied by :math:`L^{-\alpha}`).
    L : int >= 1
        Depth (number of pieces).
    sigma : float > 0
        Standard deviation of one piece.
    rho : float in [-1/(L-1), 1]
        Common correlation of distinct pieces (0: independent, 1: identical).

    Returns
    -------
    float
        :math:`\sigma^2L^{1-2\alpha}` at :math:`\rho=0`, :math:`\sigma^2L^{2-2\alpha}` at
        :math:`\rho=1`; 0 at the lower end :math:`\rho=-1/(L-1)`.
    """
    alpha = _alpha(alpha)
    L = _depth(L)
    sigma = _sigma(sigma)
    rho = _rho(rho, L)
    return _variance(alpha, L, sigma, rho)


def _variance(alpha, L, sigma, rho, k=None):
    """Variance of L^{-alpha} times a sum of k (default L) of the pieces."""
    k = L if k is None else k
    v = sigma * sigma * float(L) ** (-2.0 * alpha) * (k + k * (k - 1) * rho)
    return max(v, 0.0)  # rho = -1/(L-1) gives 0 up to rounding


def mean(alpha, L, mu) -> float:
    r"""Exact mean :math:`\mathbb E S_L = \mu L^{1-\alpha}` (grows with depth if :math:`\alpha<1`)."""
    alpha = _alpha(alpha)
    L = _depth(L)
    mu = _mu(mu)
    return mu * float(L) ** (1.0 - alpha)


def prob_within(alpha, L, sigma, c, rho=0.0, mu=0.0) -> float:
    r"""Exact :math:`P(|S_L|\le c)` for :math:`S_L\sim N(m, v)`, :math:`m=\mu L^{1-\alpha}`.

    .. math::

        P(|S_L|\le c) = \tfrac12\Bigl[\operatorname{erf}\frac{c-m}{\sqrt{2v}}
        - \operatorname{erf}\frac{-c-m}{\sqrt{2v}}\Bigr].

    For :math:`\alpha<\tfrac12` (and :math:`\rho=\mu=0`) this tends to 0 as :math:`L\to\infty`,
    at :math:`\alpha=\tfrac12` it does not depend on :math:`L`, for :math:`\alpha>\tfrac12` it tends to 1.
    When :math:`v=0` (only at :math:`\rho=-1/(L-1)`) it is 1 if :math:`|m|\le c` else 0.
    """
    alpha = _alpha(alpha)
    L = _depth(L)
    sigma = _sigma(sigma)
    c = _v.real("c", c, 0.0)
    rho = _rho(rho, L)
    mu = _mu(mu)
    m = mu * float(L) ** (1.0 - alpha)
    v = _variance(alpha, L, sigma, rho)
    if v == 0.0:
        return 1.0 if abs(m) <= c else 0.0
    s = math.sqrt(2.0 * v)
    return 0.5 * (math.erf((c - m) / s) - math.erf((-c - m) / s))


def _depths(Ls):
    """A 1-D array of depths in [1, L_MAX_EXACT] (float64, integral values)."""
    Ls = _v.finite_array("Ls", Ls, ndim=1)
    if Ls.size and (np.any(Ls != np.round(Ls)) or Ls.min() < 1 or Ls.max() > L_MAX_EXACT):
        raise ValueError(f"Ls must hold integer depths in [1, {L_MAX_EXACT}]")
    return Ls


def variance_curve(alpha, Ls, sigma, rho=0.0) -> np.ndarray:
    r""":func:`variance` at every depth of ``Ls`` (one array operation; same formula and rounding).

    ``rho`` must be admissible at the largest depth, :math:`\rho\ge-1/(\max L-1)`.
    """
    alpha = _alpha(alpha)
    Ls = _depths(Ls)
    sigma = _sigma(sigma)
    rho = _rho(rho, int(Ls.max()) if Ls.size else 1)
    v = sigma * sigma * Ls ** (-2.0 * alpha) * (Ls + Ls * (Ls - 1) * rho)
    return np.maximum(v, 0.0)


def mean_curve(alpha, Ls, mu) -> np.ndarray:
    r""":func:`mean` at every depth of ``Ls``: :math:`\mu L^{1-\alpha}`."""
    alpha = _alpha(alpha)
    Ls = _depths(Ls)
    mu = _mu(mu)
    return mu * Ls ** (1.0 - alpha)


def prob_within_curve(alpha, Ls, sigma, c, rho=0.0, mu=0.0) -> np.ndarray:
    r""":func:`prob_within` at every depth of ``Ls`` (``scipy.special.erf``; agrees with the scalar
    version to about 1e-15)."""
    from scipy.special import erf

    c = _v.real("c", c, 0.0)
    v = variance_curve(alpha, Ls, sigma, rho)
    m = mean_curve(alpha, Ls, mu)
    out = np.where(np.abs(m) <= c, 1.0, 0.0)
    pos = v > 0.0
    sq = np.sqrt(2.0 * v[pos])
    out[pos] = 0.5 * (erf((c - m[pos]) / sq) - erf((-c - m[pos]) / sq))
    return out


def increment_rms(alpha, L, sigma, k, rho=0.0, mu=0.0) -> float:
    r"""Exact RMS of the change of the partial sum over ``k`` consecutive layers.

    With :math:`P_\ell = L^{-\alpha}\sum_{j\le\ell}\xi_j`,

    .. math::

        \sqrt{\mathbb E(P_{\ell+k}-P_\ell)^2}
        = \sqrt{\sigma^2L^{-2\alpha}(k+k(k-1)\rho) + (\mu k L^{-\alpha})^2},

    which is :math:`\sigma\sqrt{\varepsilon}` for :math:`k=\varepsilon L`, :math:`\alpha=\tfrac12`,
    :math:`\rho=\mu=0` (square-root, Brownian-like scaling over the layer index).
    """
    alpha = _alpha(alpha)
    L = _depth(L)
    sigma = _sigma(sigma)
    k = _v.integer("k", k, 1, L)
    rho = _rho(rho, L)
    mu = _mu(mu)
    m = mu * k * float(L) ** (-alpha)
    return math.sqrt(_variance(alpha, L, sigma, rho, k) + m * m)


def residual_energy(alpha, L) -> float:
    r"""Exact :math:`\mathbb E\lVert z_L\rVert^2/\lVert z_0\rVert^2 = (1+L^{-2\alpha})^L`.

    Computed as :math:`\exp(L\,\mathrm{log1p}(L^{-2\alpha}))`. Limits: :math:`e` at
    :math:`\alpha=\tfrac12`, 1 for :math:`\alpha>\tfrac12`, :math:`\infty` for :math:`\alpha<\tfrac12`.
    Returns ``inf`` if the value exceeds the float range (only for small alpha and huge L).
    It does not depend on the width N (a second-moment identity at initialisation).
    """
    alpha = _alpha(alpha)
    L = _depth(L)
    x = L * math.log1p(float(L) ** (-2.0 * alpha))
    return math.exp(x) if x < 709.0 else math.inf


def one_step(c, L):
    r"""One SGD step on :math:`f=\prod_{\ell\le L}(1+L^{-\alpha}w_\ell)` from :math:`w=0`.

    With learning rate :math:`cL^{2\alpha-1}` every multiplier becomes :math:`1-c/L`
    (independently of :math:`\alpha`), hence

    .. math:: f(1) = (1-c/L)^L \;\to\; e^{-c},\qquad f_{\mathrm{lin}}(1) = 1-c,

    where :math:`f_{\mathrm{lin}}` linearises the whole network in its parameters at
    :math:`w=0`. See :func:`sgd_step` for the step computed from the gradient.

    Parameters
    ----------
    c : float in [0, 1e3]
        Rescaled learning rate.
    L : int >= 1
        Depth.

    Returns
    -------
    (float, float)
        ``(f_after_step, f_linearised)``.
    """
    c = _v.real("c", c, 0.0, 1e3)
    L = _depth(L)
    q = c / L
    f = math.exp(L * math.log1p(-q)) if q < 1.0 else (1.0 - q) ** L
    return float(f), 1.0 - c


def sgd_step(alpha, c, L, update="sgd") -> dict:
    r"""Carry out the step of :func:`one_step` from the gradient, for SGD or a sign update.

    Loss :math:`f^2/2` with target 0; :math:`\partial f/\partial w_\ell = L^{-\alpha}
    \prod_{k\ne\ell}(1+L^{-\alpha}w_k)`. ``update="sgd"``: :math:`\Delta w=-\eta\,\nabla`,
    :math:`\eta=cL^{2\alpha-1}`. ``update="sign"``: :math:`\Delta w=-\eta\,\mathrm{sign}(\nabla)`,
    :math:`\eta=cL^{\alpha-1}`. Both give :math:`\Delta w_\ell=-cL^{\alpha-1}`.

    Returns
    -------
    dict
        ``lr`` (raw learning rate), ``dw`` (the common update of one parameter),
        ``multiplier`` (one layer's factor after the step), ``f_after`` (product after the
        step, computed from the updated parameters), ``f_linearised`` (first-order
        prediction :math:`f(0)+\nabla f(0)\cdot\Delta w`), ``dw_max_dev`` (largest spread of
        the per-layer updates, 0 up to rounding).
    """
    alpha = _alpha(alpha)
    c = _v.real("c", c, 0.0, 1e3)
    L = _depth(L, 10**6)
    update = _v.choice("update", update, ("sgd", "sign"))
    s = float(L) ** (-alpha)
    w = np.zeros(L)
    fac = 1.0 + s * w
    f0 = float(np.prod(fac))
    # d f / d w_l = s * prod_{k != l} fac_k  (all factors are 1 here; computed generally
    # through prefix/suffix products, which never divide by a factor)
    pre = np.concatenate(([1.0], np.cumprod(fac)[:-1]))
    suf = np.concatenate((np.cumprod(fac[::-1])[::-1][1:], [1.0]))
    df = s * pre * suf
    grad = f0 * df                      # gradient of f^2/2
    if update == "sgd":
        lr = c * float(L) ** (2.0 * alpha - 1.0)
        dw = -lr * grad
    else:
        lr = c * float(L) ** (alpha - 1.0)
        dw = -lr * np.sign(grad)
    w1 = w + dw
    logs = np.log1p(s * w1) if np.all(s * w1 > -1.0) else None
    f1 = float(np.exp(np.sum(logs))) if logs is not None else float(np.prod(1.0 + s * w1))
    return {
        "lr": float(lr),
        "dw": float(dw[0]),
        "multiplier": float(1.0 + s * w1[0]),
        "f_after": f1,
        "f_linearised": float(f0 + df @ dw),
        "dw_max_dev": float(np.max(np.abs(dw - dw[0]))),
    }


# --------------------------------------------------------------------------- Gaussian sums
def _block_rows(L: int) -> int:
    """Samples per block of drawn pieces (rows x L ≈ _BLOCK doubles)."""
    return max(1, _BLOCK // L)


@njit(cache=True, nogil=True)
def _unit_sums_kernel(rng, L, rows, c, E):  # pragma: no cover - compiled
    """Fill ``c[t]`` (the common normal) and ``E[t]`` (the sum of ``L`` independent normals),
    drawing from ``rng`` in the draw order (module docstring): per block of ``rows`` samples the
    common normals, then the pieces row by row. Nothing but the two sums is stored."""
    T = c.shape[0]
    t0 = 0
    while t0 < T:
        r = min(rows, T - t0)
        for i in range(r):
            c[t0 + i] = rng.standard_normal()
        for i in range(r):
            acc = 0.0
            for _ in range(L):
                acc += rng.standard_normal()
            E[t0 + i] = acc
        t0 += r


def _unit_sums_reference(rng, L, rows, c, E):
    """Plain-NumPy reference of :func:`_unit_sums_kernel` (same draws; whole blocks drawn)."""
    T = c.shape[0]
    t0 = 0
    while t0 < T:
        r = min(rows, T - t0)
        c[t0:t0 + r] = rng.standard_normal(r)
        E[t0:t0 + r] = rng.standard_normal((r, L)).sum(axis=1)
        t0 += r


def _units_args(L, trials, seed):
    L = _depth(L, L_MAX_EXACT)
    trials = _trials(trials, 1)
    seed = _seed(seed)
    _check_work("trials * L", float(trials) * L, MAX_SUM_WORK,
                "lower trials or L (each sample draws L normals)")
    return L, trials, seed


def unit_sums(L, trials, seed, use_numba=True):
    r"""The random part of :math:`S_L`: per sample, the common normal :math:`c` and the sum
    :math:`E=\sum_{j=1}^L e_j` of the ``L`` independent standard normals :math:`e_j`.

    The pieces of :math:`S_L` are :math:`\xi_j=\mu+\sigma x_j` with
    :math:`x_j=\sqrt{1-\rho}\,e_j+\sqrt\rho\,c` (:math:`\rho\ge0`), so their sum is a fixed linear
    combination of :math:`E` and :math:`c` (:func:`sums_from_units`): these draws serve every
    :math:`\alpha,\sigma,\mu,\rho` (common random numbers). All ``L`` pieces are still drawn and
    added; only the sum is kept.

    Parameters
    ----------
    L : int >= 1
    trials : int >= 1
        ``trials * L`` is bounded by :data:`MAX_SUM_WORK`.
    seed : int >= 0
        Seed of ``np.random.default_rng``; the stream is that of the pieces drawn whole (module docstring).
    use_numba : bool
        Numba kernel (default) or the NumPy reference; both return the same numbers up to the
        summation order (about ``1e-15 * sqrt(L)``).

    Returns
    -------
    (np.ndarray, np.ndarray)
        ``(c, E)``, each of shape (trials,); :math:`c\sim N(0,1)`, :math:`E\sim N(0,L)`, independent.
    """
    L, trials, seed = _units_args(L, trials, seed)
    c, E = np.empty(trials), np.empty(trials)
    step = _unit_sums_kernel if use_numba and _ready.ready("depth_sum") else _unit_sums_reference
    step(np.random.default_rng(seed), L, _block_rows(L), c, E)
    return c, E


def sums_from_units(alpha, L, sigma, c, E, rho=0.0, mu=0.0) -> np.ndarray:
    r"""Samples of :math:`S_L` from the draws of :func:`unit_sums` (exact algebra, no new draws).

    .. math::

        S_L = L^{-\alpha}\sum_{j=1}^{L}\bigl(\mu+\sigma x_j\bigr)
            = L^{-\alpha}\Bigl(L\mu+\sigma\bigl(\sqrt{1-\rho}\,E+L\sqrt\rho\,c\bigr)\Bigr)
            \quad(\rho\ge0),

    and :math:`L^{-\alpha}\bigl(L\mu+\sigma\sqrt{1+(L-1)\rho}\,E\bigr)` for :math:`\rho<0` (there the
    pieces' deviations from their mean cancel in the sum, see the module docstring).
    """
    alpha = _alpha(alpha)
    L = _depth(L)
    sigma = _sigma(sigma)
    rho = _rho(rho, L)
    mu = _mu(mu)
    c = _v.finite_array("c", c, ndim=1)
    E = _v.finite_array("E", E, shape=c.shape)
    if rho >= 0.0:
        u = math.sqrt(1.0 - rho) * E
        if rho > 0.0:
            u += (L * math.sqrt(rho)) * c
    else:
        u = math.sqrt(max(1.0 + (L - 1) * rho, 0.0)) * E
    u *= sigma
    u += L * mu
    u *= float(L) ** (-alpha)
    return u


# --------------------------------------------------------------------------- moments of the draws
# The page rescales these for every alpha, sigma, mu and rho instead of drawing again: the
# pieces are x_j = a e_j + h_t with a = sqrt(1-rho) and a per-sample constant h_t (sqrt(rho) c_t
# for rho >= 0, (sqrt(1+(L-1) rho) - a) ebar_t for rho < 0, see _unit_terms), so every sample
# moment below is an exact (bilinear) combination of moments of e, c and ebar.
#: bound on trials * L * (1 + len(ks)) for :func:`path_moments`
MAX_PATH_WORK = 100_000_000


def _shape_rho(L, rho):
    """(a, b, h): x_j = a e_j + b c + h E (E = sum of the e_j), for the correlation rho."""
    a = math.sqrt(1.0 - rho)
    if rho >= 0.0:
        return a, math.sqrt(rho), 0.0
    return a, 0.0, (math.sqrt(max(1.0 + (L - 1) * rho, 0.0)) - a) / L


@njit(cache=True, nogil=True)
def _path_moments_kernel(rng, L, rows, ks, c, E, U_keep, SD, SD2, SDc, SDE):  # pragma: no cover
    """Draw the pieces in the draw order (module docstring; per block of ``rows`` paths: the
    common normals, then the pieces row by row), form each path's unit partial sums
    ``U_l = e_1 + … + e_l`` and accumulate, for every ``k`` in ``ks``, the sums over all windows
    ``D = U_{w+k} - U_w`` of D, D², D·c and D·E. Keeps the first ``len(U_keep)`` paths whole."""
    T = c.shape[0]
    keep = U_keep.shape[0]
    U = np.zeros(L + 1)
    t0 = 0
    while t0 < T:
        r = min(rows, T - t0)
        for i in range(r):
            c[t0 + i] = rng.standard_normal()
        for i in range(r):
            t = t0 + i
            acc = 0.0
            for j in range(L):
                acc += rng.standard_normal()
                U[j + 1] = acc
            E[t] = acc
            if t < keep:
                U_keep[t, :] = U
            for q in range(ks.shape[0]):
                k = ks[q]
                s1 = 0.0
                s2 = 0.0
                for w in range(L - k + 1):
                    d = U[w + k] - U[w]
                    s1 += d
                    s2 += d * d
                SD[q] += s1
                SD2[q] += s2
                SDc[q] += s1 * c[t]
                SDE[q] += s1 * acc
        t0 += r


def _path_moments_reference(rng, L, rows, ks, c, E, U_keep, SD, SD2, SDc, SDE):
    """Plain-NumPy reference of :func:`_path_moments_kernel` (same draws; whole blocks)."""
    T = c.shape[0]
    keep = U_keep.shape[0]
    t0 = 0
    while t0 < T:
        r = min(rows, T - t0)
        c[t0:t0 + r] = rng.standard_normal(r)
        U = np.zeros((r, L + 1))
        np.cumsum(rng.standard_normal((r, L)), axis=1, out=U[:, 1:])
        E[t0:t0 + r] = U[:, -1]
        if t0 < keep:
            U_keep[t0:min(keep, t0 + r)] = U[:keep - t0]
        for q, k in enumerate(ks):
            D = U[:, k:] - U[:, :-k]
            d1 = D.sum(axis=1)
            SD[q] += d1.sum()
            SD2[q] += (D * D).sum()
            SDc[q] += d1 @ c[t0:t0 + r]
            SDE[q] += d1 @ E[t0:t0 + r]
        t0 += r


def path_moments(L, trials, seed, ks, keep=24, use_numba=True) -> dict:
    r"""Moments of the draws behind the sample paths :math:`P_\ell` that the increment statistics need.

    For each window length :math:`k` in ``ks``: the sums over all windows :math:`w` and paths
    :math:`t` of :math:`D`, :math:`D^2`, :math:`D\,c_t` and :math:`D\,E_t`, where
    :math:`D=U_{w+k}-U_w` and :math:`U_\ell=\sum_{j\le\ell}e_j` are the unit partial sums; plus
    every path's :math:`c_t`, :math:`E_t=U_L` and the first ``keep`` paths :math:`U`. All ``L``
    pieces of every path are drawn (same stream as the paths drawn whole); only these sums are
    kept. :func:`paths_from_moments` turns them into paths and RMS increments for any
    :math:`\alpha,\sigma,\mu,\rho`.

    Parameters
    ----------
    L : int >= 1
    trials : int >= 2
        Number of paths; ``trials * L * (1 + len(ks))`` is bounded by :data:`MAX_PATH_WORK`.
    seed : int >= 0
    ks : sequence of int in [1, L]
    keep : int in [0, trials]
        Paths returned whole.
    use_numba : bool
        Numba kernel (default) or the NumPy reference (same draws; sums agree to ~1e-13).

    Returns
    -------
    dict
        ``L``, ``ks``, ``c``, ``E`` (shape (trials,)), ``U`` (keep, L + 1), ``SD``, ``SD2``,
        ``SDc``, ``SDE`` (shape (len(ks),)), ``windows`` (L - k + 1 per k).
    """
    L = _depth(L, L_MAX_EXACT)
    trials = _trials(trials, 2)
    seed = _seed(seed)
    ks = np.asarray(_v.finite_array("ks", ks, ndim=1), dtype=np.float64)
    if ks.size == 0 or np.any(ks != np.round(ks)) or ks.min() < 1 or ks.max() > L:
        raise ValueError(f"ks must hold integers in [1, L = {L}]")
    ks = ks.astype(np.int64)
    keep = _v.integer("keep", keep, 0, trials)
    _check_work("trials * L * (1 + len(ks))", float(trials) * L * (1 + ks.size), MAX_PATH_WORK,
                "lower trials, L or the number of window lengths")
    c, E = np.empty(trials), np.empty(trials)
    U = np.empty((keep, L + 1))
    sums = [np.zeros(ks.size) for _ in range(4)]
    step = _path_moments_kernel if use_numba and _ready.ready("depth_sum") else _path_moments_reference
    step(np.random.default_rng(seed), L, _block_rows(L), ks, c, E, U, *sums)
    return {"L": L, "ks": ks, "c": c, "E": E, "U": U, "SD": sums[0], "SD2": sums[1], "SDc": sums[2],
            "SDE": sums[3], "windows": (L - ks + 1).astype(np.float64)}


def paths_from_moments(alpha, sigma, moments, rho=0.0, mu=0.0) -> dict:
    r"""Sample paths, pooled RMS increments and the spread of :math:`S_L`, from :func:`path_moments`.

    With :math:`x_j=a\,e_j+h_t` (:math:`a=\sqrt{1-\rho}`, :math:`h_t` constant along a path) the
    change over a window is :math:`\Delta P=L^{-\alpha}\bigl(k\mu+\sigma(aD+k h_t)\bigr)`, so its mean
    square over all windows and paths is

    .. math::

        L^{-2\alpha}\Bigl[\overline{(k\mu+\sigma k h_t)^2}
        + \frac{2\sigma a}{nW}\sum_{t,w}(k\mu+\sigma k h_t)D + \frac{\sigma^2a^2}{nW}\sum_{t,w}D^2\Bigr],

    the same number as the RMS increment of the paths drawn whole (up to rounding).

    Returns
    -------
    dict
        ``paths`` (keep x (L+1), :math:`P_\ell`), ``rms_mc`` (per k), ``end_sd`` (sample s.d. of
        :math:`P_L` over all paths), ``n`` (paths).
    """
    m = moments
    L = int(m["L"])
    alpha = _alpha(alpha)
    sigma = _sigma(sigma)
    rho = _rho(rho, L)
    mu = _mu(mu)
    a, b, hE = _shape_rho(L, rho)
    s = float(L) ** (-alpha)
    c, E = m["c"], m["E"]
    h = b * c + hE * E                      # per-path constant part of every piece
    n = c.size
    k = m["ks"].astype(np.float64)
    A = mu + sigma * h                      # (k mu + sigma k h_t) = k * A_t
    sq = np.mean(A * A) * k * k
    cross = 2.0 * sigma * a * k * (mu * m["SD"] + sigma * (b * m["SDc"] + hE * m["SDE"])) / (n * m["windows"])
    quad = sigma * sigma * a * a * m["SD2"] / (n * m["windows"])
    ell = np.arange(L + 1, dtype=np.float64)
    keep = m["U"].shape[0]
    P = s * (ell * mu + sigma * (a * m["U"] + ell * h[:keep, None]))
    end = s * (L * mu + sigma * (a * E + L * h))
    return {"paths": P, "rms_mc": s * np.sqrt(np.maximum(sq + cross + quad, 0.0)),
            "end_sd": float(np.std(end, ddof=1)), "n": n}


@njit(cache=True, nogil=True)
def _pair_sum(e):  # pragma: no cover - compiled
    """sum over i < j of e_i e_j, as sum_i e_i (e_{i+1} + … + e_L) with a running suffix sum
    (every pair once; not the square of the row sum minus the squares)."""
    off = 0.0
    suffix = 0.0
    for p in range(e.shape[0] - 1, -1, -1):
        off += e[p] * suffix
        suffix += e[p]
    return off


@njit(cache=True, nogil=True)
def _column_moments_kernel(rng, L, rows, c, E, colsum):  # pragma: no cover - compiled
    """Draw in the draw order (module docstring); fill ``c``, ``E`` (row sums) and ``colsum`` (column
    sums of the pieces); return the total sum of squares and the sum over all pairs of distinct
    columns i < j of the products e_i e_j (:func:`_pair_sum`; the off-diagonal part of the
    cross-product matrix, not derived from the squared row sums)."""
    T = c.shape[0]
    e = np.empty(L)
    sq = 0.0
    off = 0.0
    t0 = 0
    while t0 < T:
        r = min(rows, T - t0)
        for i in range(r):
            c[t0 + i] = rng.standard_normal()
        for i in range(r):
            acc = 0.0
            for j in range(L):
                x = rng.standard_normal()
                e[j] = x
                acc += x
                colsum[j] += x
                sq += x * x
            E[t0 + i] = acc
            off += _pair_sum(e)
        t0 += r
    return sq, off


def _column_moments_reference(rng, L, rows, c, E, colsum):
    """Plain-NumPy reference of :func:`_column_moments_kernel` (the cross-product matrix by BLAS)."""
    T = c.shape[0]
    sq = off = 0.0
    t0 = 0
    while t0 < T:
        r = min(rows, T - t0)
        c[t0:t0 + r] = rng.standard_normal(r)
        e = rng.standard_normal((r, L))
        E[t0:t0 + r] = e.sum(axis=1)
        colsum += e.sum(axis=0)
        S = e.T @ e
        sq += float(np.trace(S))
        off += float(np.triu(S, 1).sum())
        t0 += r
    return sq, off


def column_moments(L, trials, seed, use_numba=True) -> dict:
    r"""Moments of the draws behind the covariance identity (same stream): per sample the
    common normal :math:`c_t` and :math:`E_t=\sum_je_{tj}`; the column sums; the total sum of squares
    and the sum over pairs :math:`i<j` of :math:`\sum_te_{ti}e_{tj}`. From these,
    :func:`covariance_from_moments` gives the covariance identity for any :math:`\alpha,\sigma,\mu,\rho`
    in :math:`O(1)` instead of an :math:`L\times L` matrix per setting.

    ``trials * L * L`` is bounded by :data:`MAX_COV_WORK`, ``L`` by :data:`L_MAX_COV`.
    """
    L = _depth(L, L_MAX_COV)
    trials = _trials(trials, 2)
    seed = _seed(seed)
    _check_work("trials * L * L", float(trials) * L * L, MAX_COV_WORK,
                "lower trials or L (the pair sums cost trials * L^2)")
    c, E, colsum = np.empty(trials), np.empty(trials), np.zeros(L)
    step = _column_moments_kernel if use_numba and _ready.ready("depth_sum") else _column_moments_reference
    sq, off = step(np.random.default_rng(seed), L, _block_rows(L), c, E, colsum)
    return {"L": L, "c": c, "E": E, "colsum": colsum, "sq": float(sq), "off": float(off)}


def covariance_from_moments(alpha, sigma, moments, rho=0.0) -> dict:
    r"""The terms of the covariance identity (without the matrix) from :func:`column_moments`.

    With :math:`x_j=a\,e_j+b\,c+h\,E` (see :func:`_shape_rho`) and :math:`Y_j=L^{-\alpha}(\mu+\sigma x_j)`,
    bilinearity of the sample covariance gives, with :math:`V_e=\sum_j\widehat{\operatorname{Var}}(e_j)`
    and :math:`O_e=\sum_{i\ne j}\widehat{\operatorname{Cov}}(e_i,e_j)` (from the pair sums of the
    cross products),

    .. math::

        \sum_j\widehat{\operatorname{Var}}(x_j) &= a^2V_e + Lb^2\hat v_c + 2ab\,\hat c_{Ec}
            + Lh^2\hat v_E + 2ah\,\hat v_E + 2Lbh\,\hat c_{Ec},\\
        \sum_{i\ne j}\widehat{\operatorname{Cov}}(x_i,x_j) &= a^2O_e + L(L-1)b^2\hat v_c
            + 2(L-1)ab\,\hat c_{Ec} + L(L-1)h^2\hat v_E + 2(L-1)ah\,\hat v_E + 2L(L-1)bh\,\hat c_{Ec},

    times :math:`\sigma^2L^{-2\alpha}` (the mean :math:`\mu` drops out). ``var_total`` is the sample
    variance of :math:`\sum_jY_j`, computed from :math:`E` and :math:`c` directly: the first two
    add up to it only because :math:`V_e+O_e=\hat v_E`, the covariance identity for the drawn pieces,
    which these sums check rather than assume.

    Returns
    -------
    dict
        ``sum_var``, ``sum_cov2``, ``var_total`` (sample moments), their ``*_exact`` values,
        ``n_var_terms``, ``n_cov_terms`` and ``n`` (samples).
    """
    m = moments
    L = int(m["L"])
    alpha = _alpha(alpha)
    sigma = _sigma(sigma)
    rho = _rho(rho, L)
    c, E, cs = m["c"], m["E"], m["colsum"]
    n = c.size
    V_e = (m["sq"] - float(cs @ cs) / n) / (n - 1)
    O_e = (2.0 * m["off"] - (float(cs.sum()) ** 2 - float(cs @ cs)) / n) / (n - 1)
    v_c = float(np.var(c, ddof=1))
    v_E = float(np.var(E, ddof=1))
    c_Ec = float(np.sum((E - E.mean()) * (c - c.mean())) / (n - 1))
    a, b, h = _shape_rho(L, rho)
    diag = (a * a * V_e + L * b * b * v_c + 2 * a * b * c_Ec + L * h * h * v_E + 2 * a * h * v_E
            + 2 * L * b * h * c_Ec)
    offd = (a * a * O_e + (L - 1) * (L * b * b * v_c + 2 * a * b * c_Ec + L * h * h * v_E + 2 * a * h * v_E
                                     + 2 * L * b * h * c_Ec))
    g = a + L * h                            # sum_j x_j = g E + L b c
    total = g * g * v_E + L * L * b * b * v_c + 2 * L * g * b * c_Ec
    base = sigma * sigma * float(L) ** (-2.0 * alpha)
    return {
        "sum_var": base * diag,
        "sum_cov2": base * offd,
        "var_total": base * total,
        "sum_var_exact": L * base,
        "sum_cov2_exact": L * (L - 1) * rho * base,
        "var_total_exact": _variance(alpha, L, sigma, rho),
        "n_var_terms": L,
        "n_cov_terms": L * (L - 1) // 2,
        "n": n,
    }


# --------------------------------------------------------------------------- residual network
@njit(cache=True, nogil=True)
def _residual_kernel(rng, z, scale, norms, l0, lb):  # pragma: no cover - compiled
    """Advance ``z[t]`` through ``lb`` layers in place; fill ``norms[t, l0+1 .. l0+lb]``.

    One layer is ``z <- z + scale * W z`` with ``scale = L^{-alpha} / sqrt(N)`` and ``W`` an
    N x N matrix of standard normals, drawn from ``rng`` inside the loop in the order of
    ``rng.standard_normal((T, lb, N, N))`` (trial, layer, row, column): exactly the draws that
    :func:`_residual_reference` receives as an array, without storing them. One stream, so one
    thread; ``nogil`` lets other sessions' Python run meanwhile.
    """
    T, N = z.shape[0], z.shape[1]
    y = np.empty(N)
    for t in range(T):
        zt = z[t]
        for l in range(lb):
            for i in range(N):
                acc = 0.0
                for j in range(N):
                    acc += rng.standard_normal() * zt[j]
                y[i] = acc
            nrm = 0.0
            for i in range(N):
                zt[i] += scale * y[i]
                nrm += zt[i] * zt[i]
            norms[t, l0 + l + 1] = nrm


def _residual_reference(rng, z, scale, norms, l0, lb):
    """Plain-NumPy reference of :func:`_residual_kernel` (same arguments, same draws, same effect)."""
    W = rng.standard_normal((z.shape[0], lb, z.shape[1], z.shape[1]))
    for l in range(lb):
        z += scale * np.matmul(W[:, l], z[:, :, None])[:, :, 0]
        norms[:, l0 + l + 1] = np.einsum("ti,ti->t", z, z)


def _residual_blocks(L: int, N: int, trials: int):
    """(rows, lb): trials per group and layers per weight block (≈ _BLOCK doubles a block, at
    least a few trials per group). They fix the draw order, so both paths use them."""
    rows_min = min(trials, 16, max(1, 4 * _BLOCK // (N * N)))
    lb = min(L, max(1, _BLOCK // (rows_min * N * N)))
    rows = min(trials, max(rows_min, _BLOCK // (lb * N * N)))
    return rows, lb


def _residual_norms(alpha, L, width, trials, seed, use_numba=True) -> np.ndarray:
    r"""Per-trial :math:`\lVert z_\ell\rVert^2/\lVert z_0\rVert^2`, shape (trials, L + 1).

    Draw order from ``np.random.default_rng(seed)``: for each group of ``rows`` trials, the
    starting vectors ``z_0`` (rows x N), then the weights layer block by layer block
    (rows x lb x N x N standard normals). The Numba kernel draws them one by one inside its
    loop, the NumPy reference as arrays: the same numbers either way. Arguments are assumed
    validated.
    """
    N = width
    rng = np.random.default_rng(seed)
    rows, lb = _residual_blocks(L, N, trials)
    scale = float(L) ** (-alpha) / math.sqrt(N)
    step = _residual_kernel if use_numba and _ready.ready("depth_sum") else _residual_reference
    out = np.empty((trials, L + 1))
    t0 = 0
    while t0 < trials:
        r = min(rows, trials - t0)
        z = rng.standard_normal((r, N))
        z /= np.linalg.norm(z, axis=1, keepdims=True)
        norms = np.empty((r, L + 1))
        norms[:, 0] = 1.0
        l0 = 0
        while l0 < L:
            b = min(lb, L - l0)
            step(rng, z, scale, norms, l0, b)
            l0 += b
        out[t0:t0 + r] = norms
        t0 += r
    if not np.all(np.isfinite(out)):
        raise ValueError("the energy ratio overflowed the float range: raise alpha or lower L")
    return out


# The same network sampled through the law of W_l z_l: for W_l with iid N(0, 1/N) entries,
# independent of z_l, W_l z_l given z_l is exactly N(0, |z_l|^2/N I_N). So
#   z_{l+1} = z_l + L^{-alpha} |z_l| / sqrt(N) g_l,   g_l ~ N(0, I_N) iid,
# has the same joint law of (z_0, ..., z_L) as the matrix recursion (not an approximation), with
# N normals per layer instead of N^2 (29x less CPU at the page's defaults). The page says so
# (assets/text/*/depth_sum.toml); the matrix sampler stays as the literal reference.
RESIDUAL_SAMPLERS = ("matrix", "vector")
#: the sampler of residual_energy_mc / residual_energy_profile
RESIDUAL_SAMPLER = "vector"


@njit(cache=True, nogil=True)
def _residual_vector_kernel(rng, z, scale, norms):  # pragma: no cover - compiled
    """``z_{l+1} = z_l + scale |z_l| g_l`` for every row of ``z`` (in place) through
    ``norms.shape[1] - 1`` layers, ``g_l`` drawn from ``rng`` in the order of
    ``rng.standard_normal((T, L, N))``; ``norms[t, l] = |z_l|^2`` for l >= 1."""
    T, N = z.shape[0], z.shape[1]
    L = norms.shape[1] - 1
    for t in range(T):
        zt = z[t]
        nrm = 0.0
        for i in range(N):
            nrm += zt[i] * zt[i]
        for l in range(L):
            c = scale * math.sqrt(nrm)
            nrm = 0.0
            for i in range(N):
                zt[i] += c * rng.standard_normal()
                nrm += zt[i] * zt[i]
            norms[t, l + 1] = nrm


def _residual_vector_reference(rng, z, scale, norms):
    """Plain-NumPy reference of :func:`_residual_vector_kernel` (same draws, same effect)."""
    L = norms.shape[1] - 1
    G = rng.standard_normal((z.shape[0], L, z.shape[1]))
    for l in range(L):
        z += (scale * np.sqrt(np.einsum("ti,ti->t", z, z)))[:, None] * G[:, l]
        norms[:, l + 1] = np.einsum("ti,ti->t", z, z)


def _residual_norms_vector(alpha, L, width, trials, seed, use_numba=True) -> np.ndarray:
    r"""As :func:`_residual_norms` (same law, other draws): per group of trials the unit starts
    ``z_0`` (rows x N), then ``g`` (rows x L x N) from ``np.random.default_rng(seed)``."""
    N = width
    rng = np.random.default_rng(seed)
    rows = int(min(trials, max(1, _BLOCK // (L * N))))
    scale = float(L) ** (-alpha) / math.sqrt(N)
    step = (_residual_vector_kernel if use_numba and _ready.ready("depth_sum")
            else _residual_vector_reference)
    out = np.empty((trials, L + 1))
    for t0 in range(0, trials, rows):
        r = min(rows, trials - t0)
        z = rng.standard_normal((r, N))
        z /= np.linalg.norm(z, axis=1, keepdims=True)
        norms = np.empty((r, L + 1))
        norms[:, 0] = 1.0
        step(rng, z, scale, norms)
        out[t0:t0 + r] = norms
    if not np.all(np.isfinite(out)):
        raise ValueError("the energy ratio overflowed the float range: raise alpha or lower L")
    return out


def _residual_sample(alpha, L, width, trials, seed) -> np.ndarray:
    """The per-trial energy ratios of the sampler RESIDUAL_SAMPLER (arguments validated)."""
    f = _residual_norms_vector if RESIDUAL_SAMPLER == "vector" else _residual_norms
    return f(alpha, L, width, trials, seed)


def _residual_args(alpha, L, width, trials, seed):
    alpha = _alpha(alpha)
    L = _depth(L, L_MAX_RESIDUAL)
    width = _v.integer("width", width, 1, WIDTH_MAX)
    trials = _trials(trials, 2)
    seed = _seed(seed)
    _check_work("trials * L * width^2", float(trials) * L * width * width, MAX_RESIDUAL_WORK,
                "lower trials, L or width (each layer draws a width x width matrix)")
    return alpha, L, width, trials, seed


def residual_energy_mc(alpha, L, width, trials, seed):
    r"""Monte Carlo :math:`\lVert z_L\rVert^2/\lVert z_0\rVert^2` of the linear residual network.

    .. math:: z_{\ell+1} = (I + L^{-\alpha}W_\ell)\,z_\ell,\qquad (W_\ell)_{ik}\sim N(0,1/N)\ \text{iid},

    with a fresh uniformly random unit :math:`z_0` and fresh weights in every trial
    (every weight matrix is drawn; Numba kernel). Compare with :func:`residual_energy`.

    Parameters
    ----------
    alpha : float in [0, 2]
    L : int in [1, 512]
        Depth.
    width : int in [1, 1024]
        Width N.
    trials : int >= 2
        ``trials * L * width**2`` is bounded by :data:`MAX_RESIDUAL_WORK`.
    seed : int >= 0

    Returns
    -------
    (float, float)
        ``(mean, stderr)`` over trials, ``stderr = std(ddof=1)/sqrt(trials)``.
    """
    alpha, L, width, trials, seed = _residual_args(alpha, L, width, trials, seed)
    r = _residual_sample(alpha, L, width, trials, seed)[:, -1]
    # mean and std of r / max(r), then scaled back: r itself may be ~1e154 (alpha = 0), whose
    # squares in a plain std would overflow to inf
    top = float(r.max()) or 1.0
    q = r / top
    return float(top * q.mean()), float(top * (q.std(ddof=1) / math.sqrt(trials)))


def residual_energy_profile(alpha, L, width, trials, seed):
    r"""Monte Carlo mean and standard error of :math:`\lVert z_\ell\rVert^2/\lVert z_0\rVert^2`
    for every layer :math:`\ell=0,\dots,L` (exact: :math:`(1+L^{-2\alpha})^\ell`).

    Same draws as :func:`residual_energy_mc`, whose result is the last entry.

    Returns
    -------
    (np.ndarray, np.ndarray)
        ``(mean, stderr)``, each of shape (L + 1,).
    """
    alpha, L, width, trials, seed = _residual_args(alpha, L, width, trials, seed)
    r = _residual_sample(alpha, L, width, trials, seed)
    top = r.max(axis=0)                     # per layer, as in residual_energy_mc (no overflow)
    top[top == 0.0] = 1.0
    q = r / top
    return top * q.mean(axis=0), top * (q.std(axis=0, ddof=1) / math.sqrt(trials))


def warm() -> None:
    """Compile (or load from cache) the Numba kernels on tiny inputs; see :mod:`sim.warm`."""
    unit_sums(2, 2, 0, use_numba=True)
    path_moments(2, 2, 0, [1], keep=1, use_numba=True)
    column_moments(2, 2, 0, use_numba=True)
    _residual_norms(0.5, 2, 2, 2, 0, use_numba=True)
    _residual_norms_vector(0.5, 2, 2, 2, 0, use_numba=True)
