"""The Jordan-block operator and its diagonalisable variant: the flow :math:`e^{sA}`, its norm,
the peak of the norm, the image of the unit circle and the condition number of the eigenbasis.
"""

from __future__ import annotations

import math

import numpy as np

from sim._validate import finite_array, integer, real
from sim.nonnormal.checks import EPS_MAX, MAX_CIRCLE, MAX_TIMES, _M, _eps, _times, _x0


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
        block of the model operator (not diagonalisable when :math:`M \ne 0`).

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
        raise ValueError(
            f"len(s) * n_points = {s.size * n_points} exceeds max_work = "
            f"{max_work:.3g} (pass a larger max_work= to allow more)"
        )
    E = flow(M, s, eps)
    theta = np.linspace(0.0, 2.0 * np.pi, n_points)
    U = np.stack([np.cos(theta), np.sin(theta)])  # (2, n)
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
