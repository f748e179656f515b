"""The closed forms of :mod:`sim.depth_sum`: the law of :math:`S_L`, the increments of its
partial sums, the residual network's energy and the one-step example.
"""

from __future__ import annotations

import math

import numpy as np

from sim import _validate as _v
from sim.depth_sum.checks import L_MAX_EXACT, _alpha, _depth, _mu, _rho, _sigma


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
    r"""Exact mean :math:`\mathbb E S_L = \mu L^{1-\alpha}` (grows with depth if :math:`\alpha<1`).

    Parameters
    ----------
    alpha : float
        Depth exponent: :math:`S_L = L^{-\alpha}\sum_j \xi_j`.
    L : int
        Depth, :math:`L \ge 1`.
    mu : float
        Mean :math:`\mu` of each piece.

    Returns
    -------
    float
        :math:`\mu L^{1-\alpha}`.
    """
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

    Parameters
    ----------
    alpha : float
        Depth exponent: :math:`S_L = L^{-\alpha}\sum_j \xi_j`.
    L : int
        Depth, :math:`L \ge 1`.
    sigma : float
        Standard deviation of each piece.
    c : float
        Half-width :math:`c \ge 0` of the interval.
    rho : float
        Common correlation, :math:`-1/(L-1) \le \rho \le 1`.
    mu : float
        Mean of each piece.

    Returns
    -------
    float
        :math:`P(|S_L|\le c)`.
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

    Parameters
    ----------
    alpha : float
        Depth exponent: :math:`S_L = L^{-\alpha}\sum_j \xi_j`.
    Ls : array_like of int
        Depths.
    sigma : float
        Standard deviation :math:`\sigma` of each piece.
    rho : float
        Common correlation :math:`\rho` of the pieces.

    Returns
    -------
    ndarray
        :math:`\sigma^2L^{-2\alpha}(L + L(L-1)\rho)` at every depth.
    """
    alpha = _alpha(alpha)
    Ls = _depths(Ls)
    sigma = _sigma(sigma)
    rho = _rho(rho, int(Ls.max()) if Ls.size else 1)
    v = sigma * sigma * Ls ** (-2.0 * alpha) * (Ls + Ls * (Ls - 1) * rho)
    return np.maximum(v, 0.0)


def mean_curve(alpha, Ls, mu) -> np.ndarray:
    r""":func:`mean` at every depth of ``Ls``: :math:`\mu L^{1-\alpha}`.

    Parameters
    ----------
    alpha : float
        Depth exponent: :math:`S_L = L^{-\alpha}\sum_j \xi_j`.
    Ls : array_like of int
        Depths.
    mu : float
        Mean of each piece.

    Returns
    -------
    ndarray
        :math:`\mu L^{1-\alpha}` at every depth.
    """
    alpha = _alpha(alpha)
    Ls = _depths(Ls)
    mu = _mu(mu)
    return mu * Ls ** (1.0 - alpha)


def prob_within_curve(alpha, Ls, sigma, c, rho=0.0, mu=0.0) -> np.ndarray:
    r""":func:`prob_within` at every depth of ``Ls`` (``scipy.special.erf``; agrees with the scalar
    version to about 1e-15).

    Parameters
    ----------
    alpha : float
        Depth exponent: :math:`S_L = L^{-\alpha}\sum_j \xi_j`.
    Ls : array_like of int
        Depths.
    sigma, c, rho, mu : float
        As :func:`prob_within`.

    Returns
    -------
    ndarray
        :math:`P(|S_L|\le c)` at every depth.
    """
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

    Parameters
    ----------
    alpha : float
        Depth exponent: :math:`S_L = L^{-\alpha}\sum_j \xi_j`.
    L : int
        Depth, :math:`L \ge 1`.
    sigma : float
        Standard deviation of each piece.
    k : int
        Number of consecutive layers, :math:`1 \le k \le L`.
    rho, mu : float
        Common correlation and mean of the pieces.

    Returns
    -------
    float
        :math:`\sqrt{\mathbb E(P_{\ell+k}-P_\ell)^2}`.
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

    Parameters
    ----------
    alpha : float
        Depth exponent: each residual branch is scaled by :math:`L^{-\alpha}`.
    L : int
        Depth (number of residual layers), :math:`L \ge 1`.

    Returns
    -------
    float
        :math:`(1+L^{-2\alpha})^L` (``inf`` beyond the float range).
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

    Parameters
    ----------
    alpha : float
        Depth exponent: :math:`f = \prod_\ell (1 + L^{-\alpha}w_\ell)`.
    c : float
        Step size in the natural scale (:math:`f` after the step tends to :math:`e^{-c}`).
    L : int
        Depth.
    update : str
        ``"sgd"`` or ``"sign"``.

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
    grad = f0 * df  # gradient of f^2/2
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
