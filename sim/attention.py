r"""The discrete attention layer map on the unit sphere (CONSTRUCTIONS.md §1).

One layer with residual step :math:`\Delta` moves every token :math:`z_i\in S^{d-1}` by

.. math::

    z_i^{+} = \frac{z_i + \Delta\,u_i}{\lVert z_i + \Delta\,u_i\rVert},\qquad
    u_i = \sum_{j=1}^{n} w_{ij}\, V z_j ,

with attention weights

.. math::

    w_{ij}^{\mathrm{SA}} = \frac{e^{\beta\langle z_i, A z_j\rangle}}
                               {\sum_{k} e^{\beta\langle z_i, A z_k\rangle}},\qquad
    w_{ij}^{\mathrm{USA}} = \frac{e^{\beta\langle z_i, A z_j\rangle}}{n}.

:math:`u_i` is *not* projected onto the tangent space: the normalisation does that
to first order in :math:`\Delta`, so the map is a first-order method for the sphere
flow :math:`\dot z_i = P_{z_i} u_i` (global error :math:`O(\Delta)` on a fixed depth).

Numerical form (exact reformulation, used by every path). With
:math:`m_i = \max_j \beta\langle z_i, A z_j\rangle` and
:math:`e_{ij} = e^{\beta\langle z_i, A z_j\rangle - m_i}\in(0,1]`:

- SA:  :math:`z_i + \Delta u_i = z_i + \Delta \sum_j e_{ij} V z_j / \sum_j e_{ij}`;
- USA: :math:`z_i + \Delta u_i = z_i + \Delta c_i \tilde u_i` with
  :math:`\tilde u_i = \sum_j e_{ij} V z_j/n` and :math:`c_i = e^{m_i}`. When
  :math:`m_i>0` the vector is divided by :math:`c_i` before normalising
  (:math:`e^{-m_i} z_i + \Delta \tilde u_i`), which leaves :math:`z_i^+` unchanged and
  never overflows, so USA is computed for every finite :math:`\beta`.

Implementations: :func:`simulate_reference` (plain NumPy, kept as the validator),
:func:`simulate` and :func:`simulate_batch` (Numba kernels).

What this does not claim: it is the idealised layer of the interacting-particle
model (one head, tied weights across layers, no MLP, no layer norm parameters);
it is not a trained Transformer.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from sim import _validate as _v

__all__ = ["simulate", "simulate_batch", "simulate_reference"]

FLOWS = ("SA", "USA")
#: bound on steps * n * n * d (work) for one call (≈ a few seconds at worst)
MAX_WORK = 1e10
#: bound on the number of float64 entries in the returned array (≈ 160 MB)
MAX_OUTPUT = 20_000_000
#: rows with a norm below this are rejected (cannot be normalised meaningfully)
MIN_ROW_NORM = 1e-100


# --------------------------------------------------------------------------- validation
def _check_common(beta, dt, steps, A, V, flow, record_every, d):
    beta = _v.real("beta", beta, 0.0, lo_open=True)
    dt = _v.real("dt", dt, 0.0, lo_open=True)
    steps = _v.integer("steps", steps, 0)
    flow = _v.choice("flow", flow, FLOWS)
    record_every = _v.integer("record_every", record_every, 1)
    A = np.eye(d) if A is None else _v.finite_array("A", A, shape=(d, d))
    V = np.eye(d) if V is None else _v.finite_array("V", V, shape=(d, d))
    return beta, dt, steps, np.ascontiguousarray(A), np.ascontiguousarray(V), flow, record_every


def _normalise_rows(name: str, Z: np.ndarray) -> np.ndarray:
    nrm = np.linalg.norm(Z, axis=-1, keepdims=True)
    if np.any(nrm < MIN_ROW_NORM):
        raise ValueError(f"{name} has a zero (or vanishing) row: every token must be a nonzero "
                         "vector (it is normalised onto the sphere)")
    return np.ascontiguousarray(Z / nrm)


def _check_size(name_shape: str, B: int, steps: int, n: int, d: int, record_every: int):
    work = float(B) * steps * n * n * d
    if work > MAX_WORK:
        raise ValueError(f"steps too large for this {name_shape}: steps*n*n*d"
                         f"{'*B' if B > 1 else ''} = {work:.3g} > {MAX_WORK:.0e}")
    out = float(B) * (steps // record_every + 1) * n * d
    if out > MAX_OUTPUT:
        raise ValueError(f"record_every too small: the output would hold {out:.3g} numbers "
                         f"> {MAX_OUTPUT}; record fewer layers (larger record_every) or fewer steps")


def _prepare(Z0, beta, dt, steps, A, V, flow, record_every):
    Z0 = _v.finite_array("Z0", Z0, ndim=2)
    n, d = Z0.shape
    if n < 1 or d < 1:
        raise ValueError(f"Z0 must have at least one row and one column, got shape {Z0.shape}")
    beta, dt, steps, A, V, flow, record_every = _check_common(beta, dt, steps, A, V, flow,
                                                              record_every, d)
    _check_size("Z0", 1, steps, n, d, record_every)
    return _normalise_rows("Z0", Z0), beta, dt, steps, A, V, flow, record_every


def _check_output(out: np.ndarray) -> np.ndarray:
    if not np.all(np.isfinite(out)):
        raise ValueError("dt too large for this configuration: some z_i + dt*u_i vanished, so the "
                         "layer map is undefined (only possible when V has negative directions)")
    return out


# --------------------------------------------------------------------------- NumPy reference
def _layer_numpy(Z, beta, dt, A, V, usa):
    S = beta * (Z @ (Z @ A.T).T)                   # S_ij = beta <z_i, A z_j>
    m = S.max(axis=1, keepdims=True)
    E = np.exp(S - m)                              # e_ij in (0, 1]
    VZ = Z @ V.T                                   # rows V z_j
    if usa:
        Ut = (E @ VZ) / Z.shape[0]                 # u_i = e^{m_i} * Ut_i
        m = m[:, 0]
        big = m > 0
        Y = np.where(big[:, None], np.exp(-np.where(big, m, 0.0))[:, None] * Z,
                     Z) + dt * np.where(big[:, None], Ut,
                                        np.exp(np.where(big, 0.0, m))[:, None] * Ut)
    else:
        Y = Z + dt * (E @ VZ) / E.sum(axis=1, keepdims=True)
    return Y / np.linalg.norm(Y, axis=1, keepdims=True)


def simulate_reference(Z0, beta, dt, steps, A=None, V=None, flow="SA", record_every=1):
    """Plain NumPy version of :func:`simulate` (same arguments, same result).

    Kept as the validator of the compiled paths; it is also the baseline of
    ``bench/engine.py``.
    """
    Z, beta, dt, steps, A, V, flow, record_every = _prepare(Z0, beta, dt, steps, A, V, flow,
                                                            record_every)
    n, d = Z.shape
    out = np.empty((steps // record_every + 1, n, d))
    out[0] = Z
    usa = flow == "USA"
    with np.errstate(invalid="ignore", divide="ignore"):
        for s in range(1, steps + 1):
            Z = _layer_numpy(Z, beta, dt, A, V, usa)
            if s % record_every == 0:
                out[s // record_every] = Z
    return _check_output(out)


# --------------------------------------------------------------------------- Numba kernels
@njit(cache=True, nogil=True, error_model="numpy")
def _layer_simple(Z, beta, dt, A, V, usa, Znew):
    n, d = Z.shape
    AZ = Z @ A.T
    VZ = Z @ V.T
    s = np.empty(n)
    for i in range(n):
        m = -np.inf
        for j in range(n):
            acc = 0.0
            for k in range(d):
                acc += Z[i, k] * AZ[j, k]
            s[j] = beta * acc
            if s[j] > m:
                m = s[j]
        tot = 0.0
        u = np.zeros(d)
        for j in range(n):
            e = np.exp(s[j] - m)
            tot += e
            for k in range(d):
                u[k] += e * VZ[j, k]
        if usa:
            if m > 0:
                a = np.exp(-m)
                c = dt / n
            else:
                a = 1.0
                c = dt * np.exp(m) / n
        else:
            a = 1.0
            c = dt / tot
        nrm = 0.0
        for k in range(d):
            y = a * Z[i, k] + c * u[k]
            Znew[i, k] = y
            nrm += y * y
        nrm = np.sqrt(nrm)
        for k in range(d):
            Znew[i, k] /= nrm


@njit(cache=True, nogil=True, error_model="numpy")
def _run_simple(Z0, beta, dt, steps, A, V, usa, record_every, out):
    Z = Z0.copy()
    Znew = np.empty_like(Z)
    out[0] = Z
    for s in range(1, steps + 1):
        _layer_simple(Z, beta, dt, A, V, usa, Znew)
        Z, Znew = Znew, Z
        if s % record_every == 0:
            out[s // record_every] = Z


def simulate(Z0, beta, dt, steps, A=None, V=None, flow="SA", record_every=1):
    r"""Run ``steps`` layers of the attention map from ``Z0``.

    Parameters
    ----------
    Z0 : array_like, shape (n, d)
        Initial tokens; each nonzero row is normalised onto :math:`S^{d-1}`.
    beta : float
        Inverse temperature :math:`\beta > 0`.
    dt : float
        Residual step :math:`\Delta > 0` (continuous depth advances by ``dt`` per layer).
    steps : int
        Number of layers, ``>= 0``; ``steps*n*n*d`` is capped at ``MAX_WORK``.
    A, V : array_like, shape (d, d), optional
        Query-key matrix :math:`A = Q^\top K` and value matrix; identity when omitted.
    flow : {"SA", "USA"}
        Softmax-normalised or unnormalised (``1/n``) attention.
    record_every : int
        Keep every ``record_every``-th layer (layer 0 is always kept).

    Returns
    -------
    ndarray, shape (steps // record_every + 1, n, d)
        ``out[r]`` is the configuration after ``r*record_every`` layers.

    Notes
    -----
    .. math::

        z_i^{+} = \frac{z_i + \Delta u_i}{\lVert z_i + \Delta u_i\rVert},\quad
        u_i = \sum_j w_{ij} V z_j .

    Raises ``ValueError`` naming the argument for invalid input, and naming ``dt``
    if some :math:`z_i + \Delta u_i` vanishes (possible only for non-positive V).
    """
    Z, beta, dt, steps, A, V, flow, record_every = _prepare(Z0, beta, dt, steps, A, V, flow,
                                                            record_every)
    n, d = Z.shape
    out = np.empty((steps // record_every + 1, n, d))
    _run_simple(Z, beta, dt, steps, A, V, flow == "USA", record_every, out)
    return _check_output(out)


def simulate_batch(Z0s, beta, dt, steps, A=None, V=None, flow="SA", record_every=1):
    """Run :func:`simulate` on ``B`` independent systems ``Z0s`` of shape (B, n, d).

    Returns an array of shape ``(B, steps // record_every + 1, n, d)``.
    """
    Z0s = _v.finite_array("Z0s", Z0s, ndim=3)
    B, n, d = Z0s.shape
    if B < 1 or n < 1 or d < 1:
        raise ValueError(f"Z0s must have shape (B, n, d) with B, n, d >= 1, got {Z0s.shape}")
    beta, dt, steps, A, V, flow, record_every = _check_common(beta, dt, steps, A, V, flow,
                                                              record_every, d)
    _check_size("Z0s", B, steps, n, d, record_every)
    Zs = _normalise_rows("Z0s", Z0s)
    out = np.empty((B, steps // record_every + 1, n, d))
    for b in range(B):
        _run_simple(Zs[b], beta, dt, steps, A, V, flow == "USA", record_every, out[b])
    return _check_output(out)
