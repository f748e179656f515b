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
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from sim import _validate as _v

__all__ = [
    "variance", "mean", "unit_sums", "sums_from_units", "sample", "variance_mc", "partial_sums", "increment_rms",
    "increment_rms_mc", "prob_within", "prob_within_mc", "covariance_decomposition",
    "residual_energy", "residual_energy_mc", "residual_energy_profile",
    "one_step", "sgd_step",
]

#: largest alpha accepted (L^{-alpha} for alpha > 2 adds nothing to the lesson)
ALPHA_MAX = 2.0
#: largest depth accepted by the exact (closed-form) functions
L_MAX_EXACT = 10**7
#: bound on trials * L for the Gaussian sums (normals drawn; ≈ 1 s at worst)
MAX_SUM_WORK = 40_000_000
#: bound on the entries of an array returned by :func:`partial_sums`
MAX_PATH_OUTPUT = 4_000_000
#: bound on trials * L * L for :func:`covariance_decomposition`
MAX_COV_WORK = 400_000_000
#: largest depth for :func:`covariance_decomposition` (it returns an L x L matrix)
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
def _unit_terms(rng, rows: int, L: int, rho: float) -> np.ndarray:
    r"""``rows x L`` standard normals with common correlation ``rho``.

    rho >= 0: :math:`\sqrt\rho\,c+\sqrt{1-\rho}\,e_j` (one common normal per row).
    rho < 0: :math:`\sqrt{1-\rho}\,(e-\bar e\mathbf 1)+\sqrt{1+(L-1)\rho}\,\bar e\mathbf 1`
    (the component along :math:`\mathbf 1` is rescaled), whose covariance is
    :math:`(1-\rho)I+\rho\mathbf 1\mathbf 1^\top`.

    Draw order (the same for every rho, so that :func:`unit_sums` serves all of them): the
    ``rows`` common normals, then the ``rows x L`` independent ones, row by row.
    """
    common = rng.standard_normal(rows)
    e = rng.standard_normal((rows, L))
    if rho >= 0.0:
        if rho == 0.0:
            return e
        e *= math.sqrt(1.0 - rho)
        e += math.sqrt(rho) * common[:, None]
        return e
    ebar = e.mean(axis=1, keepdims=True)
    e -= ebar
    e *= math.sqrt(1.0 - rho)
    e += math.sqrt(max(1.0 + (L - 1) * rho, 0.0)) * ebar
    return e


def _rows(L: int) -> int:
    """Samples per block of drawn pieces (rows x L ≈ _BLOCK doubles)."""
    return max(1, _BLOCK // L)


def _term_blocks(alpha, L, sigma, trials, seed, rho, mu):
    """Yield blocks of scaled pieces Y = L^{-alpha} xi (rows x L), same stream for all users."""
    rng = np.random.default_rng(seed)
    rows = _rows(L)
    s = float(L) ** (-alpha)
    done = 0
    while done < trials:
        r = min(rows, trials - done)
        x = _unit_terms(rng, r, L, rho)
        x *= sigma
        x += mu
        x *= s
        yield x
        done += r


def _sum_args(alpha, L, sigma, trials, seed, rho, mu, lo_trials=1):
    alpha = _alpha(alpha)
    L = _depth(L, L_MAX_EXACT)
    sigma = _sigma(sigma)
    trials = _trials(trials, lo_trials)
    seed = _seed(seed)
    rho = _rho(rho, L)
    mu = _mu(mu)
    _check_work("trials * L", float(trials) * L, MAX_SUM_WORK,
                "lower trials or L (each sample draws L normals)")
    return alpha, L, sigma, trials, seed, rho, mu


@njit(cache=True, nogil=True)
def _unit_sums_kernel(rng, L, rows, c, E):  # pragma: no cover - compiled
    """Fill ``c[t]`` (the common normal) and ``E[t]`` (the sum of ``L`` independent normals),
    drawing from ``rng`` in the order of :func:`_unit_terms`: per block of ``rows`` samples the
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
    r"""The random part of :func:`sample`: per sample, the common normal :math:`c` and the sum
    :math:`E=\sum_{j=1}^L e_j` of the ``L`` independent standard normals :math:`e_j`.

    The pieces of :func:`sample` are :math:`\xi_j=\mu+\sigma x_j` with
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
        Seed of ``np.random.default_rng``; the stream is that of :func:`partial_sums`.
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
    step = _unit_sums_kernel if use_numba else _unit_sums_reference
    step(np.random.default_rng(seed), L, _rows(L), c, E)
    return c, E


def sums_from_units(alpha, L, sigma, c, E, rho=0.0, mu=0.0) -> np.ndarray:
    r"""Samples of :math:`S_L` from the draws of :func:`unit_sums` (exact algebra, no new draws).

    .. math::

        S_L = L^{-\alpha}\sum_{j=1}^{L}\bigl(\mu+\sigma x_j\bigr)
            = L^{-\alpha}\Bigl(L\mu+\sigma\bigl(\sqrt{1-\rho}\,E+L\sqrt\rho\,c\bigr)\Bigr)
            \quad(\rho\ge0),

    and :math:`L^{-\alpha}\bigl(L\mu+\sigma\sqrt{1+(L-1)\rho}\,E\bigr)` for :math:`\rho<0` (there the
    pieces' deviations from their mean cancel in the sum, see :func:`_unit_terms`).
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


def sample(alpha, L, sigma, trials, seed, rho=0.0, mu=0.0) -> np.ndarray:
    r"""Monte Carlo samples of :math:`S_L = L^{-\alpha}\sum_{j=1}^L\xi_j`.

    Each sample draws all ``L`` pieces :math:`\xi_j=\mu+\sigma x_j` (standard normals
    :math:`x_j` with common correlation ``rho``, see :func:`_unit_terms`) and adds them; it
    does not draw :math:`S_L` from its known normal law.

    Parameters
    ----------
    alpha, L, sigma, rho, mu
        As in :func:`variance` / :func:`mean`. ``rho`` must lie in :math:`[-1/(L-1), 1]`.
    trials : int >= 1
        Number of samples; ``trials * L`` is bounded by :data:`MAX_SUM_WORK`.
    seed : int >= 0
        Seed of ``np.random.default_rng``.

    Returns
    -------
    np.ndarray, shape (trials,)
        Equals the last column of :func:`partial_sums` with the same arguments (up to
        rounding of the summation order). Computed as
        ``sums_from_units(alpha, L, sigma, *unit_sums(L, trials, seed), rho, mu)``.
    """
    alpha, L, sigma, trials, seed, rho, mu = _sum_args(alpha, L, sigma, trials, seed, rho, mu)
    return sums_from_units(alpha, L, sigma, *unit_sums(L, trials, seed), rho, mu)


def variance_mc(alpha, L, sigma, trials, seed, rho=0.0, mu=0.0, level=0.95):
    r"""Sample variance of :func:`sample` with its chi-square confidence interval.

    Since :math:`S_L` is normal, :math:`(n-1)\hat s^2/\operatorname{Var}S_L\sim\chi^2_{n-1}`, so
    :math:`[(n-1)\hat s^2/\chi^2_{n-1}((1+\ell)/2),\,(n-1)\hat s^2/\chi^2_{n-1}((1-\ell)/2)]`
    covers the true variance with probability ``level``.

    Returns
    -------
    (float, float, float)
        ``(var_hat, lo, hi)``.
    """
    from scipy.stats import chi2

    level = _v.real("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    x = sample(alpha, L, sigma, _trials(trials, 2), seed, rho, mu)
    n = x.size
    s2 = float(np.var(x, ddof=1))
    lo = (n - 1) * s2 / chi2.ppf(0.5 + level / 2, n - 1)
    hi = (n - 1) * s2 / chi2.ppf(0.5 - level / 2, n - 1)
    return s2, float(lo), float(hi)


def prob_within_mc(alpha, L, sigma, c, trials, seed, rho=0.0, mu=0.0):
    r"""Monte Carlo :math:`P(|S_L|\le c)` with its binomial standard error.

    Returns
    -------
    (float, float)
        ``(p_hat, stderr)`` with ``stderr = sqrt(p_hat (1 - p_hat) / trials)``.
    """
    c = _v.real("c", c, 0.0)
    x = sample(alpha, L, sigma, trials, seed, rho, mu)
    p = float(np.mean(np.abs(x) <= c))
    return p, math.sqrt(p * (1.0 - p) / x.size)


def partial_sums(alpha, L, sigma, trials, seed, rho=0.0, mu=0.0) -> np.ndarray:
    r"""Sample paths of the partial sums over the layer index :math:`\ell`.

    .. math:: P_\ell = L^{-\alpha}\sum_{j=1}^{\ell}\xi_j,\qquad \ell = 0,1,\dots,L,

    (:math:`P_0=0`, :math:`P_L=S_L`). At :math:`\alpha=\tfrac12` a path looks like a Brownian
    path on :math:`[0,1]` with time :math:`\ell/L` (layer index, not training time).

    Returns
    -------
    np.ndarray, shape (trials, L + 1)
        Same random stream as :func:`sample`; ``trials * (L+1)`` is bounded by
        :data:`MAX_PATH_OUTPUT`.
    """
    alpha, L, sigma, trials, seed, rho, mu = _sum_args(alpha, L, sigma, trials, seed, rho, mu)
    _check_work("trials * (L+1)", float(trials) * (L + 1), MAX_PATH_OUTPUT,
                "lower trials or L (the whole paths are returned)")
    out = np.zeros((trials, L + 1))
    i = 0
    for y in _term_blocks(alpha, L, sigma, trials, seed, rho, mu):
        np.cumsum(y, axis=1, out=out[i:i + y.shape[0], 1:])
        i += y.shape[0]
    return out


def increment_rms_mc(paths, k):
    r"""Empirical RMS of :math:`P_{\ell+k}-P_\ell` pooled over all :math:`\ell` and paths.

    Overlapping windows are correlated, so no standard error is returned; compare with
    :func:`increment_rms`.
    """
    paths = _v.finite_array("paths", paths, ndim=2)
    k = _v.integer("k", k, 1, paths.shape[1] - 1)
    d = paths[:, k:] - paths[:, :-k]
    return float(np.sqrt(np.mean(d * d)))


def covariance_decomposition(alpha, L, sigma, trials, seed, rho=0.0, mu=0.0) -> dict:
    r"""The identity :math:`\operatorname{Var}\sum Y_j=\sum\operatorname{Var}Y_j+2\sum_{i<j}\operatorname{Cov}(Y_i,Y_j)`
    term by term, from samples of :math:`Y_j=L^{-\alpha}\xi_j` (same stream as :func:`sample`).

    All sample moments use ``ddof=1``, so the identity holds for the estimates exactly
    (up to rounding), not only in expectation.

    Returns
    -------
    dict
        ``cov`` (L x L sample covariance of the :math:`Y_j`), ``sum_var`` (its trace),
        ``sum_cov2`` (:math:`2\sum_{i<j}` of its entries), ``var_total`` (sample variance of
        :math:`\sum_jY_j`), ``sum_var_exact`` (:math:`L\sigma^2L^{-2\alpha}`), ``sum_cov2_exact``
        (:math:`L(L-1)\rho\sigma^2L^{-2\alpha}`), ``var_total_exact`` (:func:`variance`),
        ``n_var_terms`` (L) and ``n_cov_terms`` (L(L-1)/2).
    """
    alpha, L, sigma, trials, seed, rho, mu = _sum_args(alpha, L, sigma, trials, seed, rho, mu, 2)
    if L > L_MAX_COV:
        raise ValueError(f"L must be <= {L_MAX_COV} here (an L x L matrix is returned), got {L}")
    _check_work("trials * L * L", float(trials) * L * L, MAX_COV_WORK,
                "lower trials or L (the sample covariance costs trials * L^2)")
    # one pass: accumulate first and second moments, centred on the first block's mean
    shift = None
    s1 = np.zeros(L)
    s2 = np.zeros((L, L))
    n = 0
    for y in _term_blocks(alpha, L, sigma, trials, seed, rho, mu):
        if shift is None:
            shift = y.mean(axis=0)
        yc = y - shift
        s1 += yc.sum(axis=0)
        s2 += yc.T @ yc
        n += y.shape[0]
    m = s1 / n
    cov = (s2 - n * np.outer(m, m)) / (n - 1)
    cov = 0.5 * (cov + cov.T)
    sum_var = float(np.trace(cov))
    total = float(cov.sum())
    base = sigma * sigma * float(L) ** (-2.0 * alpha)
    return {
        "cov": cov,
        "sum_var": sum_var,
        "sum_cov2": total - sum_var,
        "var_total": total,
        "sum_var_exact": L * base,
        "sum_cov2_exact": L * (L - 1) * rho * base,
        "var_total_exact": _variance(alpha, L, sigma, rho),
        "n_var_terms": L,
        "n_cov_terms": L * (L - 1) // 2,
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
    step = _residual_kernel if use_numba else _residual_reference
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
    r = _residual_norms(alpha, L, width, trials, seed)[:, -1]
    return float(r.mean()), float(r.std(ddof=1) / math.sqrt(trials))


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
    r = _residual_norms(alpha, L, width, trials, seed)
    return r.mean(axis=0), r.std(axis=0, ddof=1) / math.sqrt(trials)


def warm() -> None:
    """Compile (or load from cache) the Numba kernels on tiny inputs; see :mod:`sim.warm`."""
    unit_sums(2, 2, 0, use_numba=True)
    _residual_norms(0.5, 2, 2, 2, 0, use_numba=True)
