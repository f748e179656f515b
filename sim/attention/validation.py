"""Argument checks and work bounds shared by every path of :mod:`sim.attention`.

Each public function validates here first, so the NumPy reference and the compiled kernels see
the same cleaned arguments: finite real arrays of the right shape, rows normalised onto the
sphere, and a bound on the work and on the size of the returned array.
"""

from __future__ import annotations

import math

import numpy as np

from sim import _validate as _v

FLOWS = ("SA", "USA")
#: bound on steps * n * n * d (work) for one call (a few seconds at worst)
MAX_WORK = 1e10
#: bound on the number of float64 entries in the returned array (about 160 MB)
MAX_OUTPUT = 20_000_000
#: bound on beta * ||A||_2, the largest possible |score| beta <z_i, A z_j> (float64 ends at 1.8e308)
SCORE_MAX = 1e300


def _check_common(beta, dt, steps, A, V, flow, record_every, d):
    beta = _v.real("beta", beta, 0.0, lo_open=True)
    dt = _v.real("dt", dt, 0.0, lo_open=True)
    steps = _v.integer("steps", steps, 0)
    flow = _v.choice("flow", flow, FLOWS)
    record_every = _v.integer("record_every", record_every, 1)
    A = np.eye(d) if A is None else _v.finite_array("A", A, shape=(d, d))
    V = np.eye(d) if V is None else _v.finite_array("V", V, shape=(d, d))
    sA = float(np.max(np.abs(A)))
    if sA > 0.0:  # log(beta ||A||_2) without overflow (A may hold entries near 1e308)
        log_score = math.log(beta) + math.log(sA) + math.log(np.linalg.norm(A / sA, 2))
        if log_score > math.log(SCORE_MAX):
            name = "beta" if beta > sA else "A"
            e10 = log_score / math.log(10.0)
            raise ValueError(
                f"{name} too large: beta*||A||_2 = {10 ** (e10 % 1):.3g}e+"
                f"{int(e10 // 1)} exceeds {SCORE_MAX:.0e}; "
                "the attention scores beta<z_i, A z_j> would not fit in a float64 "
                "(beta = "
                f"{beta:.3g}, max|A_kl| = {sA:.3g})"
            )
    return beta, dt, steps, np.ascontiguousarray(A), np.ascontiguousarray(V), flow, record_every


def _normalise_rows(name: str, Z: np.ndarray) -> np.ndarray:
    """Rows divided by their norms; each row is first divided by its largest entry, so rows with
    entries near 1e308 or 1e-300 are normalised without overflow or underflow."""
    big = np.max(np.abs(Z), axis=-1, keepdims=True)
    if np.any(big == 0.0):
        raise ValueError(
            f"{name} has a zero row: every token must be a nonzero vector (it is normalised onto the sphere)"
        )
    Z = Z / big
    return np.ascontiguousarray(Z / np.linalg.norm(Z, axis=-1, keepdims=True))


def _check_size(name_shape: str, B: int, steps: int, n: int, d: int, record_every: int, max_work: float = MAX_WORK):
    max_work = _v.real("max_work", max_work, 0.0)
    work = float(B) * steps * n * n * d
    if work > max_work:
        raise ValueError(
            f"steps too large for this {name_shape}: steps*n*n*d"
            f"{'*B' if B > 1 else ''} = {work:.3g} > max_work = {max_work:.3g} "
            "(pass a larger max_work= to allow more)"
        )
    out = float(B) * (steps // record_every + 1) * n * d
    if out > MAX_OUTPUT:
        raise ValueError(
            f"record_every too small: the output would hold {out:.3g} numbers "
            f"> {MAX_OUTPUT}; record fewer layers (larger record_every) or fewer steps"
        )


def _prepare(Z0, beta, dt, steps, A, V, flow, record_every, max_work=MAX_WORK):
    """The checked arguments of one system (:func:`sim.attention.simulate`), rows normalised."""
    Z0 = _v.finite_array("Z0", Z0, ndim=2)
    n, d = Z0.shape
    if n < 1 or d < 1:
        raise ValueError(f"Z0 must have at least one row and one column, got shape {Z0.shape}")
    beta, dt, steps, A, V, flow, record_every = _check_common(beta, dt, steps, A, V, flow, record_every, d)
    _check_size("Z0", 1, steps, n, d, record_every, max_work)
    return _normalise_rows("Z0", Z0), beta, dt, steps, A, V, flow, record_every


def _prepare_batch(Z0s, beta, dt, steps, A, V, flow, record_every, max_work=MAX_WORK):
    """The checked arguments of ``B`` systems (:func:`sim.attention.simulate_batch`)."""
    Z0s = _v.finite_array("Z0s", Z0s, ndim=3)
    B, n, d = Z0s.shape
    if B < 1 or n < 1 or d < 1:
        raise ValueError(f"Z0s must have shape (B, n, d) with B, n, d >= 1, got {Z0s.shape}")
    beta, dt, steps, A, V, flow, record_every = _check_common(beta, dt, steps, A, V, flow, record_every, d)
    return Z0s, beta, dt, steps, A, V, flow, record_every


def _check_output(out: np.ndarray) -> np.ndarray:
    if not np.all(np.isfinite(out)):
        raise ValueError(
            "dt hits a singular step for this configuration: some z_i + dt*u_i is "
            "exactly 0, so the layer map is undefined there (only possible when V "
            "has negative directions); change dt"
        )
    return out
