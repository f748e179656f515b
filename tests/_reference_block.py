"""Test-only references for sim/block.py."""

from __future__ import annotations


import numpy as np

from sim.block import MAX_WORK, _range_args, _rope_freqs, _rope_range


def rope_similarity_range(n_from, n_to, k, base=10000.0, *, max_work=MAX_WORK) -> np.ndarray:
    r"""``sim(N)`` at every integer distance :math:`n_{from} \le N \le n_{to}` (fast: angle addition).

    .. math:: \cos\big((N_0+m)\theta_j\big) = \cos(N_0\theta_j)\cos(m\theta_j)
              - \sin(N_0\theta_j)\sin(m\theta_j),

    so blocks of consecutive distances are two matrix products of cosine / sine tables: about
    :math:`2\sqrt{n}\,k` trigonometric evaluations for :math:`n` distances instead of
    :math:`n k`. It agrees with :func:`rope_similarity` to within
    :math:`4(n_{to}+k+8)\,2^{-52}` (both round the phases :math:`N\theta_j`, of size up to
    :math:`n_{to}`); :func:`rope_window_extremes` and :func:`rope_largest_return` use it to
    locate the extremes and then evaluate :func:`rope_similarity` itself there.

    Parameters
    ----------
    n_from, n_to : int
        :math:`0 \le n_{from} \le n_{to} \le 10^9`, at most :data:`RANGE_MAX` distances.
    k : int
        Rotation planes, :math:`1 \le k \le 4096`.
    base : float, optional
        RoPE base, :math:`1 \le b \le 10^9`.
    max_work : float, optional
        Bound on ``(n_to - n_from + 1) * k``.

    Returns
    -------
    numpy.ndarray
        Shape ``(n_to - n_from + 1,)``.
    """
    k, n_from, n_to, base = _range_args(k, n_from, n_to, base, max_work, "rope_similarity_range")
    return _rope_range(n_from, n_to, _rope_freqs(k, base))
