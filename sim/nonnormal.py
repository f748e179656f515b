r"""Non-normal transient growth: stable eigenvalues, large finite-time amplification.

The model operator (CONSTRUCTIONS.md §4) is

.. math::

    A = \begin{pmatrix} -1 & M \\ 0 & -1 \end{pmatrix}, \qquad
    e^{sA} = e^{-s} \begin{pmatrix} 1 & sM \\ 0 & 1 \end{pmatrix}.

Both eigenvalues equal :math:`-1`, so every solution of :math:`\dot x = Ax`
decays eventually, yet :math:`\|e^{sA} e_2\| = e^{-s}\sqrt{1+s^2M^2}` equals
:math:`e^{-1}\sqrt{1+M^2} \ge |M|/e` at :math:`s=1`. The variable ``s`` is the
evolution time of this operator; it is **not** training time and **not** a
layer index.

What the module computes

- :func:`response`, :func:`operator_norm`, :func:`peak`, :func:`circle_image`:
  the Jordan-block flow, its induced 2-norm (closed form) and the maximum of
  that norm over :math:`s \ge 0`.
- :func:`matrix`, :func:`flow`, :func:`flow_norm`, :func:`kappa`: the
  diagonalisable variant :math:`A_\varepsilon = [[-1, M], [0, -1-\varepsilon]]`,
  its eigenvector condition number and the bound
  :math:`\|e^{sA_\varepsilon}\| \le \kappa(V)\,e^{-s}`.
- :func:`pseudospectrum` (Numba, parallel over grid rows) and
  :func:`pseudospectrum_reference` (NumPy SVD): :math:`\sigma_{\min}(zI-A)` on a
  grid of complex :math:`z`.
- :func:`jacobian_products`: ordered products of random near-identity layer
  Jacobians against the product of their norms and against the reversed order.
- :func:`euler_flow`, :func:`euler_scalar`, :func:`euler_regime`: explicit Euler
  against the exact flow, and the scalar case :math:`\dot V = -aV`.

What it does NOT claim: that trained Transformers contain this mechanism. The
2×2 operator shows that spectra and norms answer different questions; whether a
given network amplifies perturbations must be read off its own Jacobians.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from sim._validate import finite_array, integer, real

__all__ = [
    "matrix", "response", "operator_norm", "peak", "circle_image",
    "flow", "flow_norm", "flow_norm_grid", "kappa",
    "pseudospectrum", "pseudospectrum_reference", "kreiss_lower_bound",
    "jacobian_products",
    "euler_flow", "euler_scalar", "euler_regime",
]

# Caps that keep every call to at most a few seconds on two cores.
M_MAX = 1.0e6           # |M|
EPS_MAX = 1.0e3         # epsilon of the diagonalisable variant
S_MAX = 1.0e4           # evolution time s
MAX_TIMES = 1_000_000   # len(s)
MAX_CIRCLE = 2_000_000  # len(s) * n_points for circle_image
MAX_GRID = 4_000_000    # pseudospectrum grid points
MAX_DEPTH = 5_000       # depth L of Jacobian products
MAX_DIM = 64            # dimension of the Jacobians
MAX_DEPTH_WORK = 5_000_000  # L * d**3
MAX_STEPS = 1_000_000   # Euler steps horizon / delta


# ---------------------------------------------------------------------------
# argument helpers
# ---------------------------------------------------------------------------

def _M(M) -> float:
    return real("M", M, -M_MAX, M_MAX)


def _eps(eps) -> float:
    return real("eps", eps, 0.0, EPS_MAX)


def _times(s, name: str = "s", max_size: int = MAX_TIMES) -> np.ndarray:
    arr = finite_array(name, s, max_size=max_size)
    if arr.ndim > 1:
        raise ValueError(f"{name} must be a scalar or 1-dimensional, got shape {arr.shape}")
    arr = np.atleast_1d(arr)
    if arr.size and (arr.min() < 0.0 or arr.max() > S_MAX):
        raise ValueError(f"{name} must lie in [0, {S_MAX}] (evolution time s >= 0)")
    return arr


def _x0(x0) -> np.ndarray:
    return finite_array("x0", x0, ndim=1, shape=(2,))


def _steps(delta: float, horizon: float, max_work=MAX_STEPS) -> int:
    max_work = real("max_work", max_work, 1.0)
    n = int(math.floor(horizon / delta + 1e-9))
    if n > max_work:
        raise ValueError(f"horizon/delta = {horizon / delta:.3g} steps exceeds max_work = "
                         f"{max_work:.3g}: lower horizon, raise delta, or pass a larger max_work=")
    return n


# ---------------------------------------------------------------------------
# the Jordan-block operator and its diagonalisable variant
# ---------------------------------------------------------------------------

def matrix(M, eps=0.0) -> np.ndarray:
    r"""The operator :math:`A_\varepsilon = [[-1, M], [0, -1-\varepsilon]]`.

    Parameters
    ----------
    M : float
        Off-diagonal coupling, :math:`|M| \le 10^6`.
    eps : float, optional
        Eigenvalue split :math:`\varepsilon \ge 0`; ``0`` gives the Jordan-type
        block of CONSTRUCTIONS.md §4 (not diagonalisable when :math:`M \ne 0`).

    Returns
    -------
    numpy.ndarray
        Shape ``(2, 2)``.
    """
    M = _M(M)
    eps = _eps(eps)
    return np.array([[-1.0, M], [0.0, -1.0 - eps]])


def _coupling(M: float, eps: float, s: np.ndarray) -> np.ndarray:
    r"""Upper-right entry of :math:`e^{sA_\varepsilon}`, stable as eps -> 0.

    .. math:: M\,\frac{e^{-s} - e^{-(1+\varepsilon)s}}{\varepsilon}
              = M s e^{-s}\,\frac{1-e^{-\varepsilon s}}{\varepsilon s}.
    """
    x = eps * s
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(x > 0.0, -np.expm1(-x) / np.where(x > 0.0, x, 1.0), 1.0)
    return M * s * np.exp(-s) * ratio


def flow(M, s, eps=0.0) -> np.ndarray:
    r"""The matrices :math:`e^{sA_\varepsilon}` at each evolution time ``s``.

    .. math::

        e^{sA_\varepsilon} = \begin{pmatrix} e^{-s} &
            M\,\dfrac{e^{-s}-e^{-(1+\varepsilon)s}}{\varepsilon} \\
            0 & e^{-(1+\varepsilon)s} \end{pmatrix},

    which tends to :math:`e^{-s}[[1, sM], [0, 1]]` as :math:`\varepsilon\to0`
    (the ``eps = 0`` case is evaluated exactly, not as a limit).

    Parameters
    ----------
    M : float
    s : float or array_like
        Evolution times, ``0 <= s <= 1e4``; this is the operator's own time,
        not training time or a layer index.
    eps : float, optional
        ``eps >= 0``.

    Returns
    -------
    numpy.ndarray
        Shape ``(len(s), 2, 2)``.
    """
    M = _M(M)
    eps = _eps(eps)
    s = _times(s)
    out = np.zeros((s.size, 2, 2))
    out[:, 0, 0] = np.exp(-s)
    out[:, 0, 1] = _coupling(M, eps, s)
    out[:, 1, 1] = np.exp(-(1.0 + eps) * s)
    return out


def _norm2x2(a, b, c, d):
    r"""Largest singular value of real 2×2 matrices ``[[a, b], [c, d]]``.

    .. math:: \sigma_{\max} = \tfrac12\left(\sqrt{(a+d)^2+(b-c)^2}
              + \sqrt{(a-d)^2+(b+c)^2}\right)
    """
    return 0.5 * (np.hypot(a + d, b - c) + np.hypot(a - d, b + c))


def flow_norm(M, s, eps=0.0) -> np.ndarray:
    r""":math:`\|e^{sA_\varepsilon}\|_2` from the exact 2×2 singular-value formula.

    Parameters
    ----------
    M, s, eps
        As in :func:`flow`.

    Returns
    -------
    numpy.ndarray
        Shape ``(len(s),)``.
    """
    E = flow(M, s, eps)
    return _norm2x2(E[:, 0, 0], E[:, 0, 1], E[:, 1, 0], E[:, 1, 1])


def flow_norm_grid(M, s, eps) -> np.ndarray:
    r""":func:`flow_norm` for every :math:`\varepsilon` of ``eps`` at once: row ``i`` is
    ``flow_norm(M, s, eps[i])`` (the same formula, broadcast; no 2×2 matrices stored).

    Parameters
    ----------
    M, s
        As in :func:`flow`.
    eps : array_like, 1-D
        Values :math:`\varepsilon \ge 0`; ``len(eps) * len(s)`` at most ``MAX_TIMES``.

    Returns
    -------
    numpy.ndarray
        Shape ``(len(eps), len(s))``.
    """
    M = _M(M)
    s = _times(s)
    e = finite_array("eps", eps, ndim=1, max_size=MAX_TIMES)
    if e.size and (e.min() < 0.0 or e.max() > EPS_MAX):
        raise ValueError(f"eps must lie in [0, {EPS_MAX}]")
    if e.size * s.size > MAX_TIMES:
        raise ValueError(f"len(eps) * len(s) = {e.size * s.size} exceeds {MAX_TIMES}")
    S, E = s[None, :], e[:, None]
    a = np.broadcast_to(np.exp(-s)[None, :], (e.size, s.size))
    return _norm2x2(a, _coupling(M, E, S), 0.0, np.exp(-(1.0 + E) * S))


def response(M, s, x0) -> np.ndarray:
    r"""The trajectory :math:`x(s) = e^{sA} x_0` for :math:`A = [[-1, M], [0, -1]]`.

    .. math:: e^{sA}x_0 = e^{-s}\,(x_{0,1} + sM\,x_{0,2},\; x_{0,2}).

    Parameters
    ----------
    M : float
        Coupling, :math:`|M| \le 10^6` (any sign).
    s : float or array_like
        Evolution times, ``0 <= s <= 1e4`` (operator time, not training time or
        layer index), at most ``1e6`` of them.
    x0 : array_like, shape (2,)
        Initial vector (need not be a unit vector).

    Returns
    -------
    numpy.ndarray
        Shape ``(len(s), 2)``.

    Notes
    -----
    From :math:`x_0 = e_2`, :math:`\|x(1)\| = e^{-1}\sqrt{1+M^2} \ge |M|/e`
    although both eigenvalues are :math:`-1`.
    """
    M = _M(M)
    s = _times(s)
    x0 = _x0(x0)
    decay = np.exp(-s)
    out = np.empty((s.size, 2))
    out[:, 0] = decay * x0[0] + M * s * decay * x0[1]
    out[:, 1] = decay * x0[1]
    return out


def operator_norm(M, s) -> np.ndarray:
    r"""Induced 2-norm :math:`\|e^{sA}\|_2` for :math:`A = [[-1, M], [0, -1]]`.

    .. math::

        \|e^{sA}\|_2 = e^{-s}\left(\frac{s|M|}{2}
                       + \sqrt{1+\left(\frac{s|M|}{2}\right)^2}\right)
                     = \exp\!\left(-s + \operatorname{arsinh}\frac{s|M|}{2}\right),

    the second form is what is evaluated (no overflow of :math:`e^{-s}` times a
    large factor, no cancellation). The norm depends on :math:`|M|` only.

    Parameters
    ----------
    M : float
    s : float or array_like
        Evolution times ``0 <= s <= 1e4``.

    Returns
    -------
    numpy.ndarray
        Shape ``(len(s),)``.
    """
    m = abs(_M(M))
    s = _times(s)
    return np.exp(-s + np.arcsinh(0.5 * m * s))


def peak(M) -> tuple[float, float]:
    r"""Maximum of :math:`\|e^{sA}\|_2` over :math:`s \ge 0`.

    With :math:`g(s) = -s + \operatorname{arsinh}(s|M|/2)` the log-norm,
    :math:`g'(s) = -1 + (|M|/2)/\sqrt{1+(s|M|/2)^2}` is decreasing, so

    .. math::

        s_* = \sqrt{1 - 4/M^2}, \qquad
        \|e^{s_*A}\|_2 = \frac{|M|}{2}\,(1+s_*)\,e^{-s_*}
        \qquad (|M| > 2),

    and for :math:`|M| \le 2` the norm never exceeds its value 1 at
    :math:`s_*=0` (no transient growth). Note :math:`s_* < 1` always and
    :math:`s_* \to 1`, peak :math:`\sim |M|/e`, as :math:`|M|\to\infty`.

    Parameters
    ----------
    M : float

    Returns
    -------
    (float, float)
        ``(s_star, value)``.
    """
    m = abs(_M(M))
    if m <= 2.0:
        return 0.0, 1.0
    s_star = math.sqrt((1.0 - 2.0 / m) * (1.0 + 2.0 / m))
    return s_star, 0.5 * m * (1.0 + s_star) * math.exp(-s_star)


def circle_image(M, s, n_points=121, eps=0.0, *, max_work=MAX_CIRCLE) -> np.ndarray:
    r"""Image of the unit circle under :math:`e^{sA_\varepsilon}`: an ellipse per ``s``.

    The semi-axes are the singular values of :math:`e^{sA_\varepsilon}`, so the
    largest radius equals :func:`flow_norm` (and :func:`operator_norm` for
    ``eps = 0``).

    Parameters
    ----------
    M, s, eps
        As in :func:`flow`.
    n_points : int
        Points on the circle, ``3 <= n_points``; the first point is repeated
        at the end so the curve closes. ``len(s) * n_points <= max_work`` (default 2e6).

    Returns
    -------
    numpy.ndarray
        Shape ``(len(s), n_points, 2)``.
    """
    max_work = real("max_work", max_work, 1.0)
    n_points = integer("n_points", n_points, 3, max(3, int(max_work)))
    s = _times(s)
    if s.size * n_points > max_work:
        raise ValueError(f"len(s) * n_points = {s.size * n_points} exceeds max_work = "
                         f"{max_work:.3g} (pass a larger max_work= to allow more)")
    E = flow(M, s, eps)
    theta = np.linspace(0.0, 2.0 * np.pi, n_points)
    U = np.stack([np.cos(theta), np.sin(theta)])          # (2, n)
    return np.einsum("kij,jn->kni", E, U)


def kappa(M, eps) -> float:
    r"""Eigenvector condition number :math:`\kappa(V) = \|V\|_2\|V^{-1}\|_2`.

    For :math:`A_\varepsilon = [[-1, M], [0, -1-\varepsilon]]`, :math:`\varepsilon > 0`,
    the unit eigenvectors are :math:`v_1 = e_1` and
    :math:`v_2 = (-M, \varepsilon)/\sqrt{M^2+\varepsilon^2}`; with
    :math:`c = |v_1\cdot v_2|` the singular values of :math:`V` are
    :math:`\sqrt{1\pm c}`, hence

    .. math::

        \kappa(V) = \sqrt{\frac{1+c}{1-c}}
                  = \frac{|M| + \sqrt{M^2+\varepsilon^2}}{\varepsilon}
                  \sim \frac{2|M|}{\varepsilon} \quad (\varepsilon\to0),

    and :math:`\|e^{sA_\varepsilon}\|_2 \le \kappa(V)\,e^{-s}` for all
    :math:`s \ge 0`. The bound blows up as the eigenvectors merge while the
    norm itself stays bounded; at ``eps = 0`` there is no eigenbasis
    (``inf`` is returned when ``M != 0``).

    Parameters
    ----------
    M : float
    eps : float
        ``eps >= 0``.

    Returns
    -------
    float
        :math:`\kappa(V) \ge 1`.
    """
    M = _M(M)
    eps = _eps(eps)
    m = abs(M)
    if m == 0.0:
        return 1.0
    if eps == 0.0:
        return math.inf
    return (m + math.hypot(m, eps)) / eps


# ---------------------------------------------------------------------------
# pseudospectra
# ---------------------------------------------------------------------------

def _check_grid(A, re, im, max_work=MAX_GRID):
    max_work = real("max_work", max_work, 1.0)
    A = finite_array("A", A, ndim=2, shape=(2, 2))
    re = finite_array("re", re, ndim=1, max_size=int(max_work))
    im = finite_array("im", im, ndim=1, max_size=int(max_work))
    if re.size == 0 or im.size == 0:
        raise ValueError("re and im must be non-empty")
    if re.size * im.size > max_work:
        raise ValueError(f"grid has {re.size * im.size} points > max_work = {max_work:.3g} "
                         "(pass a larger max_work= to allow more)")
    return A, re, im


@njit(cache=True, parallel=True, nogil=True)
def _sigma_min_kernel(a, b, c, d, re, im, out):  # pragma: no cover - compiled
    # B = zI - A = [[z-a, -b], [-c, z-d]], z = x + iy.  B^H B = [[p, q], [conj q, r]].
    # scale t: sigma_min(tB) = t sigma_min(B); entries are divided by t when they are large
    # or tiny, so that squares neither overflow (|z| ~ 1e308) nor underflow
    big = max(abs(a), abs(b), abs(c), abs(d))
    for k in prange(im.size):
        y0 = im[k]
        for j in range(re.size):
            t = max(big, abs(re[j]), abs(y0))
            if t > 1e150 or (0.0 < t < 1e-150):
                t = 2.0 ** math.floor(math.log2(t))     # a power of two: exact scaling
            else:
                t = 1.0
            x = re[j] / t
            y = y0 / t
            ar = x - a / t       # z - a, real part (imag part is y)
            dr = x - d / t       # z - d, real part
            b_ = b / t
            c_ = c / t
            p = ar * ar + y * y + c_ * c_
            r = b_ * b_ + dr * dr + y * y
            # q = conj(z-a)*(-b) + (-c)*(z-d)
            qr = -b_ * ar - c_ * dr
            qi = b_ * y - c_ * y
            half = 0.5 * (p - r)
            h = math.hypot(half, math.hypot(qr, qi))
            smax2 = 0.5 * (p + r) + h
            # det B = (z-a)(z-d) - b c
            detr = ar * dr - y * y - b_ * c_
            deti = y * (ar + dr)
            det = math.hypot(detr, deti)
            if smax2 > 0.0:
                out[k, j] = t * (det / math.sqrt(smax2))
            else:
                out[k, j] = 0.0


def pseudospectrum(A, re, im, *, max_work=MAX_GRID) -> np.ndarray:
    r"""Smallest singular value :math:`\sigma_{\min}(zI - A)` on a grid (Numba).

    The :math:`\varepsilon`-pseudospectrum is
    :math:`\{z : \sigma_{\min}(zI-A) < \varepsilon\}`; its level sets show where
    a resolvent norm :math:`\|(zI-A)^{-1}\| = 1/\sigma_{\min}` is large, which can
    be far from the eigenvalues for non-normal ``A``. For a 2×2 matrix
    :math:`B` with :math:`B^HB = [[p, q], [\bar q, r]]`,

    .. math::

        \sigma_{\max}^2 = \frac{p+r}{2} + \sqrt{\Big(\frac{p-r}{2}\Big)^2 + |q|^2},
        \qquad \sigma_{\min} = \frac{|\det B|}{\sigma_{\max}},

    a form with no cancellation (the discriminant is a sum of squares). The
    kernel runs in parallel over the rows of the grid.

    Parameters
    ----------
    A : array_like, shape (2, 2)
        Real matrix.
    re, im : array_like, 1-D
        Real and imaginary parts of :math:`z`; ``len(re) * len(im) <= max_work``
        (keyword-only, default ``MAX_GRID`` = 4e6).

    Returns
    -------
    numpy.ndarray
        Shape ``(len(im), len(re))``; entry ``[k, j]`` is at ``re[j] + 1j*im[k]``.
    """
    A, re, im = _check_grid(A, re, im, max_work)
    out = np.empty((im.size, re.size))
    _sigma_min_kernel(A[0, 0], A[0, 1], A[1, 0], A[1, 1], re, im, out)
    return out


def pseudospectrum_reference(A, re, im, *, max_work=MAX_GRID) -> np.ndarray:
    r"""NumPy reference for :func:`pseudospectrum`: batched ``np.linalg.svd``.

    Same parameters and return value as :func:`pseudospectrum`.
    """
    A, re, im = _check_grid(A, re, im, max_work)
    Z = re[None, :] + 1j * im[:, None]
    B = np.zeros(Z.shape + (2, 2), dtype=np.complex128)
    B[..., 0, 0] = Z - A[0, 0]
    B[..., 0, 1] = -A[0, 1]
    B[..., 1, 0] = -A[1, 0]
    B[..., 1, 1] = Z - A[1, 1]
    return np.linalg.svd(B, compute_uv=False)[..., -1]


def kreiss_lower_bound(A, re, im, sigma=None, *, max_work=MAX_GRID) -> float:
    r"""Lower bound on :math:`\sup_{s\ge0}\|e^{sA}\|_2` read off a pseudospectrum grid.

    For every :math:`z` with :math:`\operatorname{Re} z > 0`, the Laplace transform
    :math:`(zI-A)^{-1} = \int_0^\infty e^{-zs}e^{sA}\,ds` gives
    :math:`\|(zI-A)^{-1}\| \le \sup_s\|e^{sA}\| / \operatorname{Re} z`, hence

    .. math::

        \sup_{s\ge0}\|e^{sA}\|_2 \;\ge\; \max_{\text{grid},\ \operatorname{Re}z>0}
        \frac{\operatorname{Re} z}{\sigma_{\min}(zI-A)}

    (the Kreiss constant restricted to the grid; 0 if no grid point has
    :math:`\operatorname{Re} z > 0`). A pseudospectrum that reaches far into the
    right half-plane forces transient growth even when every eigenvalue is stable.

    Parameters
    ----------
    A, re, im
        As in :func:`pseudospectrum`.
    sigma : array_like, optional
        A grid already computed by :func:`pseudospectrum` for the same
        ``A, re, im`` (shape ``(len(im), len(re))``), to avoid recomputing it.

    Returns
    -------
    float
    """
    A, re, im = _check_grid(A, re, im, max_work)
    if sigma is None:
        sigma = pseudospectrum(A, re, im, max_work=max_work)
    else:
        sigma = finite_array("sigma", sigma, ndim=2, shape=(im.size, re.size))
    right = re > 0.0
    if not right.any():
        return 0.0
    sub = sigma[:, right]
    if np.any(sub <= 0.0):
        k, j = np.argwhere(sub <= 0.0)[0]
        raise ValueError(f"A has an eigenvalue at the grid point z = {re[right][j]:g}"
                         f"{im[k]:+g}i with Re z > 0: sup_s ||e^(sA)|| is infinite there "
                         "(A is not stable)")
    # Re z / sigma_min with both factors scaled below 1 first: no overflow for |z| near 1e308
    # (sigma_min >= (Re z - max Re eig) > 0 is of the size of Re z far out)
    ratio = re[right][None, :] / sub
    if not np.all(np.isfinite(ratio)):
        ratio = np.exp(np.log(re[right])[None, :] - np.log(sub))
        if not np.all(np.isfinite(ratio)):
            raise ValueError("the Kreiss ratio Re z / sigma_min(zI - A) exceeds the float range on "
                             "this grid: sigma_min is below 1e-308 times Re z (z is within rounding "
                             "of an unstable eigenvalue)")
    return float(ratio.max())


# ---------------------------------------------------------------------------
# ordered products of layer Jacobians
# ---------------------------------------------------------------------------

def _random_jacobians(L: int, d: int, eta: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((L, d, d))
    return np.eye(d)[None] + (eta / math.sqrt(d)) * G


def jacobian_products(L, d=4, eta=0.3, seed=0, *, max_work=MAX_DEPTH_WORK) -> dict:
    r"""Ordered products of random near-identity Jacobians versus norm products.

    Draws :math:`J_\ell = I + (\eta/\sqrt d)\,G_\ell`, :math:`G_\ell` with
    independent standard normal entries (non-normal almost surely), for
    :math:`\ell = 0,\dots,L-1`, and for each depth :math:`k = 1..L` returns the
    natural logarithms of

    - ``ordered``:  :math:`\|J_{k-1}\cdots J_1 J_0\|_2` (the forward order),
    - ``reversed``: :math:`\|J_0 J_1\cdots J_{k-1}\|_2` (same factors, reversed),
    - ``norm_product``: :math:`\prod_{\ell<k}\|J_\ell\|_2`, the submultiplicative
      bound :math:`\|J_{k-1}\cdots J_0\|_2 \le \prod_\ell\|J_\ell\|_2`,
    - ``radius_product``: :math:`\prod_{\ell<k}\rho(J_\ell)`, the spectral radii
      alone (an eigenvalue-only guess; neither a bound nor an estimate).

    Products are renormalised at every step, so depth does not overflow.

    Parameters
    ----------
    L : int
        Depth, ``1 <= L <= 5000``.
    d : int
        Dimension, ``1 <= d <= 64``, with ``L * d**3 <= max_work`` (keyword-only, default
        ``MAX_DEPTH_WORK`` = 5e6).
    eta : float
        Perturbation size, ``0 <= eta <= 10``.
    seed : int
        Seed of ``np.random.default_rng``.

    Returns
    -------
    dict
        Keys ``depth`` (``1..L``), ``ordered``, ``reversed``, ``norm_product``,
        ``radius_product`` (arrays of length ``L``, natural logs).

    Notes
    -----
    The layer index here is a discrete depth :math:`\ell`, unrelated to the
    evolution time ``s`` of the 2×2 operator. Random Gaussian layers are an
    illustration of ordered products, not a model of trained networks.
    """
    L = integer("L", L, 1, MAX_DEPTH)
    d = integer("d", d, 1, MAX_DIM)
    eta = real("eta", eta, 0.0, 10.0)
    seed = integer("seed", seed, 0, 2**63 - 1)
    max_work = real("max_work", max_work, 1.0)
    if L * d ** 3 > max_work:
        raise ValueError(f"L * d**3 = {L * d ** 3} exceeds max_work = {max_work:.3g} "
                         "(pass a larger max_work= to allow more)")
    J = _random_jacobians(L, d, eta, seed)
    norms = np.linalg.norm(J, ord=2, axis=(1, 2))
    radii = np.max(np.abs(np.linalg.eigvals(J)), axis=1)
    with np.errstate(divide="ignore"):
        log_norm_product = np.cumsum(np.log(norms))
        log_radius_product = np.cumsum(np.log(radii))
    ordered = np.empty(L)
    backward = np.empty(L)
    P = np.eye(d)
    R = np.eye(d)
    log_p = 0.0
    log_r = 0.0
    for k in range(L):
        P = J[k] @ P
        R = R @ J[k]
        np_ = np.linalg.norm(P, 2)
        nr = np.linalg.norm(R, 2)
        # norms of the two products are equal in law but differ per sample
        log_p += math.log(np_) if np_ > 0 else -math.inf
        log_r += math.log(nr) if nr > 0 else -math.inf
        ordered[k] = log_p
        backward[k] = log_r
        if np_ > 0:
            P = P / np_
        if nr > 0:
            R = R / nr
    return {
        "depth": np.arange(1, L + 1),
        "ordered": ordered,
        "reversed": backward,
        "norm_product": log_norm_product,
        "radius_product": log_radius_product,
    }


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
        raise ValueError(f"the Euler iterates overflow float64 at step {bad} (s = {s[bad]:.6g}): "
                         f"the factors 1-delta = {1 - delta:g} and 1-delta(1+eps) = "
                         f"{1 - delta * (1 + eps):g} make them grow (delta > 2 is unstable); "
                         f"choose horizon < {s[bad]:.6g} or a smaller delta")
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
        euler = V0 * factor ** j
    if not np.all(np.isfinite(euler)):
        k = int(np.argmin(np.isfinite(euler)))
        raise ValueError(f"the Euler iterates overflow float64 at step {k} (s = {s[k]:.6g}): the "
                         f"factor 1 - a*delta = {factor:g} has modulus > 1; choose horizon < "
                         f"{s[k]:.6g} or a smaller delta")
    exact = V0 * np.exp(-a * s)
    if a * delta < 1.0:
        bound = a * a * horizon * delta * abs(V0) / (2.0 * (1.0 - a * delta))
    else:
        bound = math.inf
    return {
        "s": s, "euler": euler, "exact": exact, "error": np.abs(euler - exact),
        "factor": factor, "bound": bound, "regime": euler_regime(a, delta),
    }


def warm() -> None:
    """Compile (or load from cache) the Numba kernels on tiny inputs; see :mod:`sim.warm`."""
    pseudospectrum(matrix(2.0), [-1.0, 0.0], [0.0, 1.0])
    euler_flow(2.0, 0.5, 1.0, [0.0, 1.0])
