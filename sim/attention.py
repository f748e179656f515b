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

Numerical form (exact reformulation, used by every path). With a shift
:math:`m_i \ge \max_j \beta\langle z_i, A z_j\rangle` (the NumPy reference uses the
maximum itself; the kernels use the bound :math:`\beta\lVert A^\top z_i\rVert` when it
exceeds the self score :math:`\beta\langle z_i, A z_i\rangle` by at most 600, else the
maximum) and :math:`e_{ij} = e^{\beta\langle z_i, A z_j\rangle - m_i}\in(0,1]`:

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
import numba
from llvmlite import ir as llvm_ir
from numba import njit, prange, types
from numba.extending import intrinsic

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
# fastmath without "nnan"/"ninf": reductions may be reassociated (SIMD), inf/nan stay honest
_FM = {"reassoc", "contract", "arcp", "nsz"}
# the exp must not be reassociated: that would fold the two-part (Cody-Waite) ln 2
_FM_EXP = {"contract", "arcp", "nsz"}
_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01    # 32 significant bits: k*_LN2_HI is exact for |k| < 2**20
_LN2_LO = 1.90821492927058770002e-10
_EXP_MIN = -708.0                       # below this the result is flushed to 0 (true value < 3.3e-308)
# e^r on |r| <= ln2/2: the degree-11 polynomial interpolating e^r at the 12 Chebyshev nodes
# (computed in extended precision); its own relative error is below 1e-17, so the exp is
# accurate to rounding (about 1 ulp). Taylor would need degree 13 for the same accuracy.
_C0, _C1, _C2, _C3 = 1.0, 1.0, 0.5000000000000018, 0.1666666666666669
_C4, _C5, _C6, _C7 = 0.04166666666648857, 0.008333333333315002, 0.0013888888952271288, 0.00019841269899541455
_C8, _C9, _C10, _C11 = 2.4801485486569327e-05, 2.755723242556338e-06, 2.76326459433635e-07, 2.511274345242859e-08


@intrinsic
def _as_float(typingctx, bits):
    """Reinterpret the bits of an int64 as a float64 (an LLVM bitcast: free, vectorisable)."""
    sig = types.float64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], llvm_ir.DoubleType())

    return sig, codegen


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM_EXP, inline="always")
def _exp1(y):
    """exp(y) = 2^k e^r with k = round(y / ln 2), r = y - k ln 2.

    The two-part ln 2 makes r exact to about an ulp; e^r is a degree-11 polynomial (error
    < 1e-17 on |r| <= ln2/2); 2^k is built in the exponent bits. Branch-free, so a flat
    loop over it vectorises (no SVML needed). Relative error about 1 ulp; y < _EXP_MIN
    gives 0; y > 709.78 gives inf. Inlined into its callers, which must not allow
    reassociation (that would fold the two parts of ln 2).
    """
    yc = max(y, _EXP_MIN)
    kf = np.floor(yc * _LOG2E + 0.5)
    r = (yc - kf * _LN2_HI) - kf * _LN2_LO
    p = _C11
    p = p * r + _C10
    p = p * r + _C9
    p = p * r + _C8
    p = p * r + _C7
    p = p * r + _C6
    p = p * r + _C5
    p = p * r + _C4
    p = p * r + _C3
    p = p * r + _C2
    p = p * r + _C1
    p = p * r + _C0
    e = p * _as_float((np.int64(kf) + 1023) << 52)
    return e if y >= _EXP_MIN else 0.0


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM_EXP)
def fast_exp(x):
    """Vectorised exp of a 1-D float64 array: the engine's exp, exposed for tests.

    Relative error about 1 ulp for x >= -708; smaller arguments give 0 (true value
    below 3.3e-308); overflows to inf above about 709.78 like ``np.exp``.
    """
    out = np.empty_like(x)
    for j in range(x.size):
        out[j] = _exp1(x[j])
    return out


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM_EXP)
def _weights(i0, rows, Z, BAZT, top, s, mv):
    """s[r*n + j] = exp(beta <z_i, A z_j> - m_i) and mv[r] = m_i, for i = i0 + r, r < rows.

    The shift m_i is the Cauchy-Schwarz bound top[i] = beta |A^T z_i| >= max_j s_ij when it
    is within _SHIFT_GAP of the self score s_ii <= max_j s_ij: then every weight is <= 1 and
    the largest is >= e^{-_SHIFT_GAP} (no overflow, no harmful underflow), and scores and
    exp are computed in one flat pass. Otherwise (very large beta |A|) it is the exact row
    maximum, from stored scores. Softmax is shift-invariant, so both give the same weights
    up to rounding. d = 2 and d = 3 are written out by hand.
    """
    n, d = Z.shape
    for r in range(rows):
        i = i0 + r
        sr = s[r * n:(r + 1) * n]          # a view: indices provably >= 0, so loops vectorise
        sii = 0.0
        for k in range(d):
            sii += Z[i, k] * BAZT[k, i]
        m = top[i]
        near = m - sii <= _SHIFT_GAP
        if near and d == 3:
            z0, z1, z2 = Z[i, 0], Z[i, 1], Z[i, 2]
            b0, b1, b2 = BAZT[0], BAZT[1], BAZT[2]
            for j in range(n):
                sr[j] = _exp1(z0 * b0[j] + z1 * b1[j] + z2 * b2[j] - m)
        elif near and d == 2:
            z0, z1 = Z[i, 0], Z[i, 1]
            b0, b1 = BAZT[0], BAZT[1]
            for j in range(n):
                sr[j] = _exp1(z0 * b0[j] + z1 * b1[j] - m)
        else:
            for j in range(n):
                sr[j] = 0.0
            for k in range(d):
                zk = Z[i, k]
                bk = BAZT[k]
                for j in range(n):
                    sr[j] += zk * bk[j]
            if not near:
                m = sr[0]
                for j in range(1, n):
                    m = max(m, sr[j])
            for j in range(n):
                sr[j] = _exp1(sr[j] - m)
        mv[r] = m


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM, inline="always")
def _rows(i0, i1, Z, BAZT, VZT, top, dt, usa, s, mv, u, Znew):
    """New rows i0 <= i < i1 (at most len(mv) of them) into Znew.

    BAZT[k, j] = beta (A z_j)_k and VZT[k, j] = (V z_j)_k (both d x n). Two passes over j:
    the shifted weights of the whole block (one call, no reassociation), then the row sums
    of the weights and weighted values (reassociated, so the reductions vectorise).
    """
    n, d = Z.shape
    rows = i1 - i0
    _weights(i0, rows, Z, BAZT, top, s, mv)
    for r in range(rows):
        i = i0 + r
        sr = s[r * n:(r + 1) * n]
        tot = 0.0
        if d == 3:
            v0, v1, v2 = VZT[0], VZT[1], VZT[2]
            a0 = 0.0
            a1 = 0.0
            a2 = 0.0
            for j in range(n):
                e = sr[j]
                tot += e
                a0 += e * v0[j]
                a1 += e * v1[j]
                a2 += e * v2[j]
            u[0] = a0
            u[1] = a1
            u[2] = a2
        elif d == 2:
            v0, v1 = VZT[0], VZT[1]
            a0 = 0.0
            a1 = 0.0
            for j in range(n):
                e = sr[j]
                tot += e
                a0 += e * v0[j]
                a1 += e * v1[j]
            u[0] = a0
            u[1] = a1
        else:
            for j in range(n):
                tot += sr[j]
            for k in range(d):
                vk = VZT[k]
                acc = 0.0
                for j in range(n):
                    acc += sr[j] * vk[j]
                u[k] = acc
        m = mv[r]
        if usa:          # u_i = e^m * u / n; divide everything by e^m when m > 0
            if m > 0.0:
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
            u[k] = y
            nrm += y * y
        nrm = np.sqrt(nrm)
        for k in range(d):
            Znew[i, k] = u[k] / nrm


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM, inline="always")
def _prep(Z, beta, A, V, BAZT, VZT, top):
    """BAZT = beta A Z^T, VZT = V Z^T (d x n) and top[i] = beta |A^T z_i| (row shift bound)."""
    n, d = Z.shape
    for k in range(d):
        for j in range(n):
            a = 0.0
            v = 0.0
            for l in range(d):
                a += A[k, l] * Z[j, l]
                v += V[k, l] * Z[j, l]
            BAZT[k, j] = beta * a
            VZT[k, j] = v
    for i in range(n):
        q = 0.0
        for l in range(d):
            a = 0.0
            for k in range(d):
                a += A[k, l] * Z[i, k]
            q += a * a
        top[i] = beta * np.sqrt(q)


#: largest gap top[i] - s_ii for which the bound top[i] is used as the softmax shift
_SHIFT_GAP = 600.0

#: rows per block: the exp pass runs over about this many scores at once
_BLOCK = 1024


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM)
def _run_serial(Z0, beta, dt, steps, A, V, usa, record_every, out):
    n, d = Z0.shape
    Z = Z0.copy()
    Znew = np.empty_like(Z)
    BAZT = np.empty((d, n))
    VZT = np.empty((d, n))
    top = np.empty(n)
    R = max(1, min(n, _BLOCK // n))
    s = np.empty(R * n)
    mv = np.empty(R)
    u = np.empty(d)
    out[0] = Z
    for st in range(1, steps + 1):
        _prep(Z, beta, A, V, BAZT, VZT, top)
        for i0 in range(0, n, R):
            _rows(i0, min(n, i0 + R), Z, BAZT, VZT, top, dt, usa, s, mv, u, Znew)
        Z, Znew = Znew, Z
        if st % record_every == 0:
            out[st // record_every] = Z


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM, parallel=True)
def _run_parallel(Z0, beta, dt, steps, A, V, usa, record_every, out, nchunks):
    n, d = Z0.shape
    Z = Z0.copy()
    Znew = np.empty_like(Z)
    BAZT = np.empty((d, n))
    VZT = np.empty((d, n))
    top = np.empty(n)
    out[0] = Z
    size = (n + nchunks - 1) // nchunks
    R = max(1, min(size, _BLOCK // n))
    for st in range(1, steps + 1):
        _prep(Z, beta, A, V, BAZT, VZT, top)
        for c in prange(nchunks):
            s = np.empty(R * n)
            mv = np.empty(R)
            u = np.empty(d)
            hi = min(n, (c + 1) * size)
            for i0 in range(c * size, hi, R):
                _rows(i0, min(hi, i0 + R), Z, BAZT, VZT, top, dt, usa, s, mv, u, Znew)
        Z, Znew = Znew, Z
        if st % record_every == 0:
            out[st // record_every] = Z


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM, parallel=True)
def _run_batch(Z0s, beta, dt, steps, A, V, usa, record_every, out):
    for b in prange(Z0s.shape[0]):
        _run_serial(Z0s[b], beta, dt, steps, A, V, usa, record_every, out[b])


#: below this many tokens one thread is faster than a parallel region per layer
PARALLEL_MIN_N = 256


def _run(Z, beta, dt, steps, A, V, usa, record_every, out):
    n = Z.shape[0]
    threads = numba.get_num_threads()
    if n < PARALLEL_MIN_N or threads == 1:
        _run_serial(Z, beta, dt, steps, A, V, usa, record_every, out)
    else:
        _run_parallel(Z, beta, dt, steps, A, V, usa, record_every, out, min(threads, n))


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
    _run(Z, beta, dt, steps, A, V, flow == "USA", record_every, out)
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
    _run_batch(Zs, beta, dt, steps, A, V, flow == "USA", record_every, out)
    return _check_output(out)


def warm() -> None:
    """Compile (or load from cache) every kernel on tiny inputs (see :mod:`sim.warm`)."""
    rng = np.random.default_rng(0)
    for d in (2, 3, 4):
        Z = rng.standard_normal((4, d))
        out = np.empty((2, 4, d))
        Zn = Z / np.linalg.norm(Z, axis=1, keepdims=True)
        for usa in (False, True):
            _run_serial(Zn, 1.0, 0.1, 1, np.eye(d), np.eye(d), usa, 1, out)
            _run_parallel(Zn, 1.0, 0.1, 1, np.eye(d), np.eye(d), usa, 1, out, 2)
        simulate_batch(Z[None], 1.0, 0.1, 1)
    fast_exp(np.zeros(2))
