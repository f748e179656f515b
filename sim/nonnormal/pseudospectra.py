"""Pseudospectra: the smallest singular value of :math:`zI - A` on a grid (a Numba kernel and its
NumPy reference) and the Kreiss lower bound read off it.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from sim._validate import finite_array, real
from sim.nonnormal.checks import MAX_GRID


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
        raise ValueError(
            f"grid has {re.size * im.size} points > max_work = {max_work:.3g} (pass a larger max_work= to allow more)"
        )
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
                t = 2.0 ** math.floor(math.log2(t))  # a power of two: exact scaling
            else:
                t = 1.0
            x = re[j] / t
            y = y0 / t
            ar = x - a / t  # z - a, real part (imag part is y)
            dr = x - d / t  # z - d, real part
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

    Parameters
    ----------
    A, re, im, max_work
        As :func:`pseudospectrum`.

    Returns
    -------
    ndarray, shape (len(im), len(re))
        :math:`\sigma_{\min}(zI - A)` on the grid :math:`z = x + iy`.
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
        raise ValueError(
            f"A has an eigenvalue at the grid point z = {re[right][j]:g}"
            f"{im[k]:+g}i with Re z > 0: sup_s ||e^(sA)|| is infinite there "
            "(A is not stable)"
        )
    # Re z / sigma_min with both factors scaled below 1 first: no overflow for |z| near 1e308
    # (sigma_min >= (Re z - max Re eig) > 0 is of the size of Re z far out)
    ratio = re[right][None, :] / sub
    if not np.all(np.isfinite(ratio)):
        ratio = np.exp(np.log(re[right])[None, :] - np.log(sub))
        if not np.all(np.isfinite(ratio)):
            raise ValueError(
                "the Kreiss ratio Re z / sigma_min(zI - A) exceeds the float range on "
                "this grid: sigma_min is below 1e-308 times Re z (z is within rounding "
                "of an unstable eigenvalue)"
            )
    return float(ratio.max())
