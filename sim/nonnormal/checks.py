"""Bounds on the arguments and work of :mod:`sim.nonnormal`, and the argument checks."""

from __future__ import annotations

import math

import numpy as np

from sim._validate import finite_array, real, time_grid


# Caps that keep every call to a few seconds at most.
M_MAX = 1.0e6  # |M|
EPS_MAX = 1.0e3  # epsilon of the diagonalisable variant
S_MAX = 1.0e4  # evolution time s
MAX_TIMES = 1_000_000  # len(s)
MAX_CIRCLE = 2_000_000  # len(s) * n_points for circle_image
MAX_GRID = 4_000_000  # pseudospectrum grid points
MAX_DEPTH = 5_000  # depth L of Jacobian products
MAX_DIM = 64  # dimension of the Jacobians
MAX_DEPTH_WORK = 5_000_000  # L * d**3
MAX_STEPS = 1_000_000  # Euler steps horizon / delta


# ---------------------------------------------------------------------------
# argument helpers
# ---------------------------------------------------------------------------


def _M(M) -> float:
    return real("M", M, -M_MAX, M_MAX)


def _eps(eps) -> float:
    return real("eps", eps, 0.0, EPS_MAX)


def _times(s, name: str = "s", max_size: int = MAX_TIMES) -> np.ndarray:
    return time_grid(name, s, S_MAX, max_size, " (evolution time s >= 0)")


def _x0(x0) -> np.ndarray:
    return finite_array("x0", x0, ndim=1, shape=(2,))


def _steps(delta: float, horizon: float, max_work=MAX_STEPS) -> int:
    max_work = real("max_work", max_work, 1.0)
    n = int(math.floor(horizon / delta + 1e-9))
    if n > max_work:
        raise ValueError(
            f"horizon/delta = {horizon / delta:.3g} steps exceeds max_work = "
            f"{max_work:.3g}: lower horizon, raise delta, or pass a larger max_work="
        )
    return n
