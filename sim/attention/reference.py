"""The plain NumPy form of the attention layer map: the validator of every compiled path.

:func:`simulate_reference` computes the same map as :func:`sim.attention.simulate` with whole-array
NumPy operations, in the numerical form of the package notes (log-domain coefficients, largest
entry divided out before every norm). It is also what the public functions run while their
kernels are still compiling at server start (:mod:`sim._ready`). :func:`simulate_reference_float32`
is the same computation in float32, the validator of the float32 lanes kernel.
"""

from __future__ import annotations

import math

import numpy as np

from sim import _interrupt
from sim.attention.validation import MAX_WORK, _check_output, _prepare

__all__ = ["simulate_reference", "simulate_reference_float32"]


def _v_scale(V):
    """(V / s_V, log s_V) with s_V = max |V_kl| (log s_V = -inf for V = 0)."""
    sV = float(np.max(np.abs(V)))
    return (V / sV, math.log(sV)) if sV > 0.0 else (V, -math.inf)


def _layer_numpy(Z, beta, dt, A, V, usa):
    """One layer; A z_j and V z_j are the matrix-vector products (no transpose of A or V)."""
    n = Z.shape[0]
    Vh, log_sv = _v_scale(V)
    S = beta * (Z @ (Z @ A.T).T)  # S_ij = beta <z_i, A z_j> = beta z_i^T A z_j
    M = S.max(axis=1, keepdims=True)  # the exact row maximum
    E = np.exp(S - M)  # e_ij in (0, 1], max_j e_ij = 1
    U = E @ (Z @ Vh.T)  # sum_j e_ij Vh z_j
    if usa:  # z_i + dt e^{M_i} U_i s_V / n  ~  e^{-M_i} z_i + (dt s_V / n) U_i
        la = -M
        lc = np.full_like(M, math.log(dt) + log_sv - math.log(n))
    else:  # z_i + dt s_V U_i / T_i
        la = np.zeros_like(M)
        lc = np.full_like(M, math.log(dt) + log_sv)
        U = U / E.sum(axis=1, keepdims=True)
    top = np.maximum(la, lc)
    Y = np.exp(la - top) * Z + np.exp(lc - top) * U
    Y = Y / np.max(np.abs(Y), axis=1, keepdims=True)  # 0/0 -> nan when z_i + dt u_i = 0
    return Y / np.linalg.norm(Y, axis=1, keepdims=True)


def simulate_reference(Z0, beta, dt, steps, A=None, V=None, flow="SA", record_every=1, *, max_work=MAX_WORK):
    """Plain NumPy version of :func:`sim.attention.simulate` (same arguments, same result).

    Parameters
    ----------
    Z0, beta, dt, steps, A, V, flow, record_every, max_work
        As in :func:`sim.attention.simulate`.

    Returns
    -------
    ndarray, shape (steps // record_every + 1, n, d)
        Equal to :func:`sim.attention.simulate` up to rounding.
    """
    Z, beta, dt, steps, A, V, flow, record_every = _prepare(Z0, beta, dt, steps, A, V, flow, record_every, max_work)
    n, d = Z.shape
    out = np.empty((steps // record_every + 1, n, d))
    out[0] = Z
    usa = flow == "USA"
    with np.errstate(invalid="ignore", divide="ignore", under="ignore"):
        for s in range(1, steps + 1):
            _interrupt.checkpoint()  # a stopping point per layer (sim._interrupt; nothing by default)
            Z = _layer_numpy(Z, beta, dt, A, V, usa)
            if s % record_every == 0:
                out[s // record_every] = Z
    return _check_output(out)


def simulate_reference_float32(Z0, beta, dt, steps, A=None, V=None, flow="SA", record_every=1, *, max_work=MAX_WORK):
    r""":func:`simulate_reference` computed in float32 (NumPy, float32 arrays throughout).

    The validator of :func:`sim.attention.simulate_batch_float32`: the same formulas, float32
    rounding (unit roundoff 6e-8).

    Parameters
    ----------
    Z0, beta, dt, steps, A, V, flow, record_every, max_work
        As :func:`simulate_reference` (and :func:`sim.attention.simulate`).

    Returns
    -------
    ndarray of float32, shape (steps // record_every + 1, n, d)
    """
    Z, beta, dt, steps, A, V, flow, record_every = _prepare(Z0, beta, dt, steps, A, V, flow, record_every, max_work)
    f = np.float32
    Z, A, V = Z.astype(f), A.astype(f), V.astype(f)
    n, d = Z.shape
    out = np.empty((steps // record_every + 1, n, d), f)
    out[0] = Z
    usa = flow == "USA"
    with np.errstate(invalid="ignore", divide="ignore", under="ignore", over="ignore"):
        for s in range(1, steps + 1):
            Z = _layer_numpy(Z, f(beta), f(dt), A, V, usa).astype(f)
            if s % record_every == 0:
                out[s // record_every] = Z
    return _check_output(out)
