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

Numerical form (exact reformulation, used by every path). Write
:math:`V = s_V \hat V` with :math:`s_V = \max|V_{kl}|`. With a shift
:math:`m_i \ge \max_j \beta\langle z_i, A z_j\rangle` (the NumPy reference uses the
maximum itself; the kernels use the bound :math:`\beta\lVert A^\top z_i\rVert` when it
exceeds the self score :math:`\beta\langle z_i, A z_i\rangle` by at most 600 and is below
1e8, else the maximum), :math:`e_{ij} = e^{\beta\langle z_i, A z_j\rangle - m_i}\in(0,1]`,
:math:`\hat u_i = \sum_j e_{ij}\hat V z_j`, :math:`T_i=\sum_j e_{ij}` and
:math:`e^{\max}_i = \max_j e_{ij}`, the vector :math:`z_i + \Delta u_i` is, up to a positive
factor (which the normalisation removes),

- SA:  :math:`a_i z_i + c_i \hat u_i / T_i` with :math:`\log c_i - \log a_i = \log(\Delta s_V)`;
- USA: :math:`a_i z_i + c_i \hat u_i / e^{\max}_i` with
  :math:`\log c_i - \log a_i = \log(\Delta s_V/n) + M_i`, :math:`M_i = m_i + \log e^{\max}_i`
  the exact row maximum,

where the larger of :math:`a_i, c_i` is 1 (both are computed from their logarithms). Nothing
overflows or underflows, and the norm is taken after dividing by the largest entry, so the map is
computed for every :math:`\beta` and every :math:`V`; the only limit is that the scores themselves
must be floats: :math:`\beta\lVert A\rVert_2 \le 10^{300}` (``SCORE_MAX``).

Symmetric A (:math:`A = A^\top`, e.g. the default identity): the score is symmetric,
:math:`s_{ij} = s_{ji}`, and the kernels compute one exponential per unordered pair,
:math:`E_{ij} = e^{s_{ij} - q_i - q_j}` with :math:`q_i = \tfrac12\beta\lVert A z_i\rVert`
(so :math:`E_{ij}\le 1`), which feeds both rows through :math:`e^{s_{ij}} = E_{ij}
e^{q_i} e^{q_j}` (the row factor :math:`e^{q_i}` cancels in SA and is kept in the log-domain
coefficient in USA). A layer whose :math:`q_i` spread over more than 150 (or whose gap
:math:`2q_i - s_{ii}` exceeds 300) takes the per-row path instead.

Implementations: :func:`simulate_reference` (plain NumPy, kept as the validator),
:func:`simulate` and :func:`simulate_batch` (Numba kernels; :func:`_choose_kernel` is the one
place that picks among per-row, symmetric and, for many small systems, the "lanes" kernel that
puts 64 systems in the SIMD lanes). :func:`simulate_batch_float32` is an optional float32 form of
the lanes kernel (128 systems per block, 8 floats per AVX2 register, a float32 exp with a degree-6
polynomial) for callers that only count clusters; :func:`simulate_reference_float32` is its NumPy
float32 reference. It is never chosen automatically.

What this does not claim: it is the idealised layer of the interacting-particle
model (one head, tied weights across layers, no MLP, no layer norm parameters);
it is not a trained Transformer.
"""
from __future__ import annotations

import math

import numpy as np
import numba
from llvmlite import ir as llvm_ir
from numba import njit, prange, types
from numba.extending import intrinsic

from sim import _ready
from sim import _validate as _v

__all__ = ["simulate", "simulate_batch", "simulate_reference", "simulate_batch_float32",
           "simulate_reference_float32"]

FLOWS = ("SA", "USA")
#: bound on steps * n * n * d (work) for one call (≈ a few seconds at worst)
MAX_WORK = 1e10
#: bound on the number of float64 entries in the returned array (≈ 160 MB)
MAX_OUTPUT = 20_000_000
#: bound on beta * ||A||_2, the largest possible |score| beta <z_i, A z_j> (float64 ends at 1.8e308)
SCORE_MAX = 1e300


# --------------------------------------------------------------------------- validation
def _check_common(beta, dt, steps, A, V, flow, record_every, d):
    beta = _v.real("beta", beta, 0.0, lo_open=True)
    dt = _v.real("dt", dt, 0.0, lo_open=True)
    steps = _v.integer("steps", steps, 0)
    flow = _v.choice("flow", flow, FLOWS)
    record_every = _v.integer("record_every", record_every, 1)
    A = np.eye(d) if A is None else _v.finite_array("A", A, shape=(d, d))
    V = np.eye(d) if V is None else _v.finite_array("V", V, shape=(d, d))
    sA = float(np.max(np.abs(A)))
    if sA > 0.0:   # log(beta ||A||_2) without overflow (A may hold entries near 1e308)
        log_score = math.log(beta) + math.log(sA) + math.log(np.linalg.norm(A / sA, 2))
        if log_score > math.log(SCORE_MAX):
            name = "beta" if beta > sA else "A"
            e10 = log_score / math.log(10.0)
            raise ValueError(f"{name} too large: beta*||A||_2 = {10 ** (e10 % 1):.3g}e+"
                             f"{int(e10 // 1)} exceeds {SCORE_MAX:.0e}; "
                             "the attention scores beta<z_i, A z_j> would not fit in a float64 "
                             "(beta = " f"{beta:.3g}, max|A_kl| = {sA:.3g})")
    return beta, dt, steps, np.ascontiguousarray(A), np.ascontiguousarray(V), flow, record_every


def _normalise_rows(name: str, Z: np.ndarray) -> np.ndarray:
    """Rows divided by their norms; each row is first divided by its largest entry, so rows with
    entries near 1e308 or 1e-300 are normalised without overflow or underflow."""
    big = np.max(np.abs(Z), axis=-1, keepdims=True)
    if np.any(big == 0.0):
        raise ValueError(f"{name} has a zero row: every token must be a nonzero vector "
                         "(it is normalised onto the sphere)")
    Z = Z / big
    return np.ascontiguousarray(Z / np.linalg.norm(Z, axis=-1, keepdims=True))


def _check_size(name_shape: str, B: int, steps: int, n: int, d: int, record_every: int,
                max_work: float = MAX_WORK):
    max_work = _v.real("max_work", max_work, 0.0)
    work = float(B) * steps * n * n * d
    if work > max_work:
        raise ValueError(f"steps too large for this {name_shape}: steps*n*n*d"
                         f"{'*B' if B > 1 else ''} = {work:.3g} > max_work = {max_work:.3g} "
                         "(pass a larger max_work= to allow more)")
    out = float(B) * (steps // record_every + 1) * n * d
    if out > MAX_OUTPUT:
        raise ValueError(f"record_every too small: the output would hold {out:.3g} numbers "
                         f"> {MAX_OUTPUT}; record fewer layers (larger record_every) or fewer steps")


def _prepare(Z0, beta, dt, steps, A, V, flow, record_every, max_work=MAX_WORK):
    Z0 = _v.finite_array("Z0", Z0, ndim=2)
    n, d = Z0.shape
    if n < 1 or d < 1:
        raise ValueError(f"Z0 must have at least one row and one column, got shape {Z0.shape}")
    beta, dt, steps, A, V, flow, record_every = _check_common(beta, dt, steps, A, V, flow,
                                                              record_every, d)
    _check_size("Z0", 1, steps, n, d, record_every, max_work)
    return _normalise_rows("Z0", Z0), beta, dt, steps, A, V, flow, record_every


def _check_output(out: np.ndarray) -> np.ndarray:
    if not np.all(np.isfinite(out)):
        raise ValueError("dt hits a singular step for this configuration: some z_i + dt*u_i is "
                         "exactly 0, so the layer map is undefined there (only possible when V "
                         "has negative directions); change dt")
    return out


# --------------------------------------------------------------------------- NumPy reference
def _v_scale(V):
    """(V / s_V, log s_V) with s_V = max |V_kl| (log s_V = -inf for V = 0)."""
    sV = float(np.max(np.abs(V)))
    return (V / sV, math.log(sV)) if sV > 0.0 else (V, -math.inf)


def _layer_numpy(Z, beta, dt, A, V, usa):
    """One layer; A z_j and V z_j are the matrix-vector products (no transpose of A or V)."""
    n = Z.shape[0]
    Vh, log_sv = _v_scale(V)
    S = beta * (Z @ (Z @ A.T).T)                   # S_ij = beta <z_i, A z_j> = beta z_i^T A z_j
    M = S.max(axis=1, keepdims=True)               # the exact row maximum
    E = np.exp(S - M)                              # e_ij in (0, 1], max_j e_ij = 1
    U = E @ (Z @ Vh.T)                             # sum_j e_ij Vh z_j
    if usa:       # z_i + dt e^{M_i} U_i s_V / n  ~  e^{-M_i} z_i + (dt s_V / n) U_i
        la = -M
        lc = np.full_like(M, math.log(dt) + log_sv - math.log(n))
    else:         # z_i + dt s_V U_i / T_i
        la = np.zeros_like(M)
        lc = np.full_like(M, math.log(dt) + log_sv)
        U = U / E.sum(axis=1, keepdims=True)
    top = np.maximum(la, lc)
    Y = np.exp(la - top) * Z + np.exp(lc - top) * U
    Y = Y / np.max(np.abs(Y), axis=1, keepdims=True)      # 0/0 -> nan when z_i + dt u_i = 0
    return Y / np.linalg.norm(Y, axis=1, keepdims=True)


def simulate_reference(Z0, beta, dt, steps, A=None, V=None, flow="SA", record_every=1, *,
                       max_work=MAX_WORK):
    """Plain NumPy version of :func:`simulate` (same arguments, same result).

    Kept as the validator of the compiled paths; it is also the baseline of
    ``bench/engine.py``.
    """
    Z, beta, dt, steps, A, V, flow, record_every = _prepare(Z0, beta, dt, steps, A, V, flow,
                                                            record_every, max_work)
    n, d = Z.shape
    out = np.empty((steps // record_every + 1, n, d))
    out[0] = Z
    usa = flow == "USA"
    with np.errstate(invalid="ignore", divide="ignore", under="ignore"):
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
_SHIFTER = 6755399441055744.0         # 1.5 * 2**52: t = x + _SHIFTER rounds x to an integer k
_SHIFTER_BITS = 0x4338000000000000     # the bits of _SHIFTER; bits(t) - _SHIFTER_BITS = k
_EXP_MIN = -708.0                       # below this the result is flushed to 0 (true value < 3.3e-308)
# e^r on |r| <= ln2/2: the degree-11 polynomial interpolating e^r at the 12 Chebyshev nodes
# (computed in extended precision); its own relative error is below 1e-17, so the exp is
# accurate to rounding (about 1 ulp). Taylor would need degree 13 for the same accuracy.
_C0, _C1, _C2, _C3 = 1.0, 1.0, 0.5000000000000018, 0.1666666666666669
_C4, _C5, _C6, _C7 = 0.04166666666648857, 0.008333333333315002, 0.0013888888952271288, 0.00019841269899541455
_C8, _C9, _C10, _C11 = 2.4801485486569327e-05, 2.755723242556338e-06, 2.76326459433635e-07, 2.511274345242859e-08


@intrinsic
def _as_int(typingctx, x):
    """Reinterpret the bits of a float64 as an int64 (an LLVM bitcast: free, vectorisable)."""
    sig = types.int64(types.float64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], llvm_ir.IntType(64))

    return sig, codegen


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

    k is rounded by adding 1.5 * 2^52 (the "shifter"): the sum holds k in its low mantissa
    bits, so the integer k comes out of a bit cast and an integer subtraction (AVX2 has no
    vector float -> int64 conversion: ``np.int64(kf)`` made LLVM fall back to four scalar
    conversions per vector). The two-part ln 2 makes r exact to about an ulp; e^r is a
    degree-11 polynomial (error < 1e-17 on |r| <= ln2/2); 2^k is built in the exponent bits.
    Branch-free, so a flat loop over it vectorises (no SVML needed). Measured: at most 1 ulp
    from ``np.exp`` on [-708, 709.4] (``bench/engine.py``); y < _EXP_MIN gives 0; from
    y >= 1023.5 ln 2 = 709.44 on it gives inf (k = 1024; the engine's arguments are <= ~0).
    Inlined into its callers, which must not allow reassociation (that would fold the two
    parts of ln 2 and the shifter).
    """
    yc = max(y, _EXP_MIN)
    t = yc * _LOG2E + _SHIFTER             # round-to-nearest of y / ln 2, in the low bits of t
    kf = t - _SHIFTER
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
    e = p * _as_float((_as_int(t) - _SHIFTER_BITS + 1023) << 52)
    return e if y >= _EXP_MIN else 0.0


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM_EXP)
def fast_exp(x):
    """Vectorised exp of a 1-D float64 array: the engine's exp, exposed for tests.

    At most 1 ulp from ``np.exp`` on [-708, 709.4]; smaller arguments give 0 (true value
    below 3.3e-308); from 709.44 on it gives inf (``np.exp`` overflows at 709.78).
    """
    out = np.empty_like(x)
    for j in range(x.size):
        out[j] = _exp1(x[j])
    return out


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM_EXP)
def _weights(i0, rows, Z, BAZT, top, s, mv):
    """s[r*n + j] = exp(beta <z_i, A z_j> - m_i) and mv[r] = m_i, for i = i0 + r, r < rows.

    The shift m_i is the Cauchy-Schwarz bound top[i] = beta |A^T z_i| >= max_j s_ij when it
    is within _SHIFT_GAP of the self score s_ii <= max_j s_ij and at most _NEAR_MAX (so the
    rounding of the scores, about 1e-16 top[i], cannot push a weight above 1 by more than
    1e-7): then every weight is <= 1 and the largest is >= e^{-_SHIFT_GAP} (no overflow, no
    harmful underflow), and scores and exp are computed in one flat pass. Otherwise (very
    large beta |A|) it is the exact row maximum, from stored scores. Softmax is shift-invariant, so both give the same weights
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
        near = m - sii <= _SHIFT_GAP and m <= _NEAR_MAX
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
def _rows(i0, i1, Z, BAZT, VZT, top, lc0, usa, s, mv, u, Znew):
    """New rows i0 <= i < i1 (at most len(mv) of them) into Znew.

    BAZT[k, j] = beta (A z_j)_k and VZT[k, j] = (V z_j)_k / s_V (both d x n);
    lc0 = log(dt s_V). Two passes over j: the shifted weights of the whole block (one call,
    no reassociation), then the row sums of the weights and weighted values (reassociated, so
    the reductions vectorise). The new row is a z_i + c u with log-domain coefficients (the
    larger is 1) and is normalised after division by its largest entry (module notes).
    """
    n, d = Z.shape
    rows = i1 - i0
    _weights(i0, rows, Z, BAZT, top, s, mv)
    for r in range(rows):
        i = i0 + r
        sr = s[r * n:(r + 1) * n]
        tot = 0.0
        emax = 1.0
        if usa:
            emax = 0.0
            for j in range(n):
                emax = max(emax, sr[j])
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
        if usa:          # e^{-M} z_i + (dt s_V / n) u / emax, M = m + log(emax) the row maximum
            la = -(mv[r] + np.log(emax))
            lc = lc0 - np.log(n)
            div = emax
        else:            # z_i + dt s_V u / tot
            la = 0.0
            lc = lc0
            div = tot
        hi = max(la, lc)
        a = np.exp(la - hi)
        c = np.exp(lc - hi) / div
        nrm = 0.0
        for k in range(d):
            y = a * Z[i, k] + c * u[k]
            u[k] = y
            nrm += y * y
        if not 1e-280 < nrm < 1e280:     # rare: rescale by the largest entry before the norm
            big = 0.0
            for k in range(d):
                big = max(big, abs(u[k]))
            nrm = 0.0
            for k in range(d):
                y = u[k] / big           # 0/0 -> nan when z_i + dt u_i = 0 (reported by the caller)
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
#: largest bound top[i] used as the shift (above it, score rounding could exceed 1e-7)
_NEAR_MAX = 1e8

#: rows per block: the exp pass runs over about this many scores at once
_BLOCK = 1024


@njit(cache=True, nogil=True, error_model="numpy")
def _scaled(V, dt):
    """(V / s_V, log(dt s_V)) with s_V = max |V_kl|; (V, -inf) for V = 0 (then u_i = 0)."""
    sV = 0.0
    for k in range(V.shape[0]):
        for l in range(V.shape[1]):
            sV = max(sV, abs(V[k, l]))
    if sV == 0.0:
        return V.copy(), -np.inf
    return V / sV, np.log(dt) + np.log(sV)


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
    Vh, lc0 = _scaled(V, dt)
    out[0] = Z
    for st in range(1, steps + 1):
        _prep(Z, beta, A, Vh, BAZT, VZT, top)
        for i0 in range(0, n, R):
            _rows(i0, min(n, i0 + R), Z, BAZT, VZT, top, lc0, usa, s, mv, u, Znew)
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
    Vh, lc0 = _scaled(V, dt)
    out[0] = Z
    size = (n + nchunks - 1) // nchunks
    R = max(1, min(size, _BLOCK // n))
    for st in range(1, steps + 1):
        _prep(Z, beta, A, Vh, BAZT, VZT, top)
        for c in prange(nchunks):
            s = np.empty(R * n)
            mv = np.empty(R)
            u = np.empty(d)
            hi = min(n, (c + 1) * size)
            for i0 in range(c * size, hi, R):
                _rows(i0, min(hi, i0 + R), Z, BAZT, VZT, top, lc0, usa, s, mv, u, Znew)
        Z, Znew = Znew, Z
        if st % record_every == 0:
            out[st // record_every] = Z


# --------------------------------------------------------------------------- symmetric A
# With A = A^T the score is symmetric, s_ij = s_ji, and one exponential serves both tokens of a
# pair. Write q_i = top_i / 2 (top_i = beta |A z_i| >= s_ij for every j, by Cauchy-Schwarz, and
# so s_ij <= min(top_i, top_j) <= q_i + q_j) and
#     E_ij = exp(s_ij - q_i - q_j) = E_ji in (0, 1],     h_j = exp(q_j - max_k q_k).
# Then exp(s_ij) = E_ij h_j e^{q_i + max q}: the row factor e^{q_i + max q} is common to row i,
# so the SA weights are E_ij h_j / sum_k E_ik h_k, and the USA sum is e^{q_i + max q} times
# sum_j E_ij h_j V z_j. Each unordered pair {i, j} costs one exponential and feeds both rows.
# Used when the gaps top_i - s_ii and the spread max top - min top are at most _SYM_GAP:
# then the largest term of row i, at least E_ii h_i >= e^{-_SYM_GAP - _SYM_GAP/2}, is a normal
# float and nothing underflows that matters; otherwise the step takes the per-row path.

#: largest gap top_i - s_ii and largest spread of top for which the symmetric form is used
_SYM_GAP = 300.0


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM_EXP)
def _sym_shifts(Z, BAZT, top, q, h):
    """q_i = top_i / 2 and h_i = exp(q_i - max q); False when the symmetric form is not used."""
    n, d = Z.shape
    tmax = top[0]
    tmin = top[0]
    for i in range(n):
        tmax = max(tmax, top[i])
        tmin = min(tmin, top[i])
        sii = 0.0
        for k in range(d):
            sii += Z[i, k] * BAZT[k, i]
        if not top[i] - sii <= _SYM_GAP:
            return False
    if not (tmax <= _NEAR_MAX and tmax - tmin <= _SYM_GAP):
        return False
    qmax = 0.5 * tmax
    for i in range(n):
        q[i] = 0.5 * top[i]
        h[i] = _exp1(q[i] - qmax)
    return True


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM_EXP)
def _sym_weights(i0, i1, Z, BAZT, q, e):
    """e[(i - i0)*n + j] = E_ij = exp(s_ij - q_i - q_j) for i0 <= i < i1 and j >= i (no
    reassociation: the exponential is inlined here). The loops run over views that start at
    column i, so their indices are provably >= 0 and they vectorise."""
    n, d = Z.shape
    for i in range(i0, i1):
        r = i - i0
        er = e[r * n + i:(r + 1) * n]          # columns j = i .. n-1
        qr = q[i:]
        m = n - i
        qi = q[i]
        if d == 2:
            z0, z1 = Z[i, 0], Z[i, 1]
            b0, b1 = BAZT[0, i:], BAZT[1, i:]
            for j in range(m):
                er[j] = _exp1(z0 * b0[j] + z1 * b1[j] - qi - qr[j])
        elif d == 3:
            z0, z1, z2 = Z[i, 0], Z[i, 1], Z[i, 2]
            b0, b1, b2 = BAZT[0, i:], BAZT[1, i:], BAZT[2, i:]
            for j in range(m):
                er[j] = _exp1(z0 * b0[j] + z1 * b1[j] + z2 * b2[j] - qi - qr[j])
        else:
            for j in range(m):
                er[j] = 0.0
            for k in range(d):
                zk = Z[i, k]
                bk = BAZT[k, i:]
                for j in range(m):
                    er[j] += zk * bk[j]
            for j in range(m):
                er[j] = _exp1(er[j] - qi - qr[j])


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM, inline="always")
def _sym_accumulate(i0, i1, VZT, h, e, T, U):
    """Add the pairs (i, j), i0 <= i < i1, j >= i, to T_i = sum_j E_ij h_j and
    U[:, i] = sum_j E_ij h_j VZT[:, j], each pair i < j to both rows (views from column i + 1,
    as in :func:`_sym_weights`)."""
    d, n = VZT.shape
    for i in range(i0, i1):
        r = i - i0
        hi = h[i]
        w = e[r * n + i] * hi              # the diagonal term, once
        t = w
        er = e[r * n + i + 1:(r + 1) * n]  # columns j = i+1 .. n-1
        hr = h[i + 1:]
        Tr = T[i + 1:]
        m = n - i - 1
        if d == 2:
            v0, v1 = VZT[0, i + 1:], VZT[1, i + 1:]
            u0, u1 = U[0, i + 1:], U[1, i + 1:]
            vi0 = VZT[0, i] * hi
            vi1 = VZT[1, i] * hi
            a0 = w * VZT[0, i]
            a1 = w * VZT[1, i]
            for j in range(m):
                ej = er[j]
                wj = ej * hr[j]
                t += wj
                a0 += wj * v0[j]
                a1 += wj * v1[j]
                Tr[j] += ej * hi
                u0[j] += ej * vi0
                u1[j] += ej * vi1
            U[0, i] += a0
            U[1, i] += a1
        elif d == 3:
            v0, v1, v2 = VZT[0, i + 1:], VZT[1, i + 1:], VZT[2, i + 1:]
            u0, u1, u2 = U[0, i + 1:], U[1, i + 1:], U[2, i + 1:]
            vi0 = VZT[0, i] * hi
            vi1 = VZT[1, i] * hi
            vi2 = VZT[2, i] * hi
            a0 = w * VZT[0, i]
            a1 = w * VZT[1, i]
            a2 = w * VZT[2, i]
            for j in range(m):
                ej = er[j]
                wj = ej * hr[j]
                t += wj
                a0 += wj * v0[j]
                a1 += wj * v1[j]
                a2 += wj * v2[j]
                Tr[j] += ej * hi
                u0[j] += ej * vi0
                u1[j] += ej * vi1
                u2[j] += ej * vi2
            U[0, i] += a0
            U[1, i] += a1
            U[2, i] += a2
        else:
            for j in range(m):
                ej = er[j]
                t += ej * hr[j]
                Tr[j] += ej * hi
            for k in range(d):
                vk = VZT[k, i + 1:]
                uk = U[k, i + 1:]
                vik = VZT[k, i] * hi
                a = w * VZT[k, i]
                for j in range(m):
                    ej = er[j]
                    a += ej * hr[j] * vk[j]
                    uk[j] += ej * vik
                U[k, i] += a
        T[i] += t


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM, inline="always")
def _sym_finish(i0, i1, Z, T, U, q, qmax, lc0, usa, u, Znew):
    """New rows i0 <= i < i1 from T and U (log-domain coefficients as in :func:`_rows`)."""
    n, d = Z.shape
    logn = np.log(n)
    a_sa = np.exp(-max(0.0, lc0))          # SA: the coefficients are the same for every row
    c_sa = np.exp(lc0 - max(0.0, lc0))
    for i in range(i0, i1):
        t = T[i]
        if usa:      # z_i + (dt s_V / n) e^{q_i + max q} U_i
            lc = lc0 - logn + q[i] + qmax + np.log(t)
            hi = max(0.0, lc)
            a = np.exp(-hi)
            c = np.exp(lc - hi) / t
        else:        # z_i + dt s_V U_i / T_i
            a = a_sa
            c = c_sa / t
        big = 0.0
        for k in range(d):
            y = a * Z[i, k] + c * U[k, i]
            u[k] = y
            big = max(big, abs(y))
        nrm = 0.0
        for k in range(d):
            y = u[k] / big               # 0/0 -> nan when z_i + dt u_i = 0 (reported by the caller)
            u[k] = y
            nrm += y * y
        nrm = np.sqrt(nrm)
        for k in range(d):
            Znew[i, k] = u[k] / nrm


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM)
def _run_serial_sym(Z0, beta, dt, steps, A, V, usa, record_every, out):
    """:func:`_run_serial` for a symmetric A: one exponential per unordered pair (module notes
    above); a layer whose shifts are too far apart takes the per-row path."""
    n, d = Z0.shape
    Z = Z0.copy()
    Znew = np.empty_like(Z)
    BAZT = np.empty((d, n))
    VZT = np.empty((d, n))
    top = np.empty(n)
    R = max(1, min(n, _BLOCK // n))
    e = np.empty(R * n)
    mv = np.empty(R)
    u = np.empty(d)
    q = np.empty(n)
    h = np.empty(n)
    T = np.empty(n)
    U = np.empty((d, n))
    Vh, lc0 = _scaled(V, dt)
    out[0] = Z
    for st in range(1, steps + 1):
        _prep(Z, beta, A, Vh, BAZT, VZT, top)
        if _sym_shifts(Z, BAZT, top, q, h):
            T[:] = 0.0
            U[:] = 0.0
            for i0 in range(0, n, R):
                i1 = min(n, i0 + R)
                _sym_weights(i0, i1, Z, BAZT, q, e)
                _sym_accumulate(i0, i1, VZT, h, e, T, U)
            _sym_finish(0, n, Z, T, U, q, 0.5 * top.max(), lc0, usa, u, Znew)
        else:
            for i0 in range(0, n, R):
                _rows(i0, min(n, i0 + R), Z, BAZT, VZT, top, lc0, usa, e, mv, u, Znew)
        Z, Znew = Znew, Z
        if st % record_every == 0:
            out[st // record_every] = Z


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM, parallel=True)
def _run_parallel_sym(Z0, beta, dt, steps, A, V, usa, record_every, out, nchunks):
    """:func:`_run_parallel` for a symmetric A: chunk c owns the rows [lo_c, lo_{c+1}) of the
    upper triangle (about equal numbers of pairs) and adds into its own T and U; the chunks'
    sums are then added."""
    n, d = Z0.shape
    Z = Z0.copy()
    Znew = np.empty_like(Z)
    BAZT = np.empty((d, n))
    VZT = np.empty((d, n))
    top = np.empty(n)
    q = np.empty(n)
    h = np.empty(n)
    Tc = np.empty((nchunks, n))
    Uc = np.empty((nchunks, d, n))
    T = np.empty(n)
    U = np.empty((d, n))
    Vh, lc0 = _scaled(V, dt)
    out[0] = Z
    lo = np.empty(nchunks + 1, dtype=np.int64)
    for c in range(nchunks + 1):     # rows [0, x) hold about n x - x^2/2 of the n^2/2 pairs
        lo[c] = min(n, int(round(n * (1.0 - np.sqrt(max(0.0, 1.0 - c / nchunks))))))
    lo[nchunks] = n
    size = (n + nchunks - 1) // nchunks
    R = max(1, min(n, _BLOCK // n))
    for st in range(1, steps + 1):
        _prep(Z, beta, A, Vh, BAZT, VZT, top)
        if _sym_shifts(Z, BAZT, top, q, h):
            for c in prange(nchunks):
                e = np.empty(R * n)
                Tk = Tc[c]
                Uk = Uc[c]
                Tk[:] = 0.0
                Uk[:] = 0.0
                for i0 in range(lo[c], lo[c + 1], R):
                    i1 = min(lo[c + 1], i0 + R)
                    _sym_weights(i0, i1, Z, BAZT, q, e)
                    _sym_accumulate(i0, i1, VZT, h, e, Tk, Uk)
            T[:] = Tc[0]
            U[:] = Uc[0]
            for c in range(1, nchunks):
                T += Tc[c]
                U += Uc[c]
            qmax = 0.5 * top.max()
            for c in prange(nchunks):
                u = np.empty(d)
                _sym_finish(c * size, min(n, (c + 1) * size), Z, T, U, q, qmax, lc0, usa, u, Znew)
        else:
            Rr = max(1, min(size, _BLOCK // n))
            for c in prange(nchunks):
                s = np.empty(Rr * n)
                mv = np.empty(Rr)
                u = np.empty(d)
                hi = min(n, (c + 1) * size)
                for i0 in range(c * size, hi, Rr):
                    _rows(i0, min(hi, i0 + Rr), Z, BAZT, VZT, top, lc0, usa, s, mv, u, Znew)
        Z, Znew = Znew, Z
        if st % record_every == 0:
            out[st // record_every] = Z


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM, parallel=True)
def _run_batch(Z0s, beta, dt, steps, A, V, usa, record_every, out, sym):
    for b in prange(Z0s.shape[0]):
        if sym:
            _run_serial_sym(Z0s[b], beta, dt, steps, A, V, usa, record_every, out[b])
        else:
            _run_serial(Z0s[b], beta, dt, steps, A, V, usa, record_every, out[b])


# --------------------------------------------------------------------------- batched, lanes = systems
# For many small systems (the phase diagram: n = 32, d = 2) the loops over tokens are too short
# for SIMD (a triangle of rows of length 32 .. 1). The "lanes" kernels put _LANES systems side by
# side, structure-of-arrays: every array is (..., n, _LANES) and the innermost loop of every
# pass runs over the systems, a compile-time length, so LLVM vectorises it (4 doubles per AVX2
# register) with no remainder. Each pass stores into one array only (few run-time alias checks),
# and the per-pair accumulation is split into one loop per channel for the same reason. The
# symmetric form (one exponential per unordered pair, module notes) is used throughout; it is
# chosen only when beta |A|_2 <= _LANES_SCORE_MAX, which guarantees its conditions at every
# layer (top_i <= beta |A|_2, so spread and gap are <= 2 beta |A|_2 <= _SYM_GAP).

#: systems per SIMD block (measured: 64 beats 16, 32, 128, 256 on n = 32, d = 2; bench/engine.py)
_LANES = 64
#: largest beta |A|_2 for which the lanes kernel is chosen (its symmetric form always applies)
_LANES_SCORE_MAX = 140.0


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM_EXP)
def _lanes_pairs(i, Z, BAZ, q, E):
    """E[j, b] = exp(s_ij - q_i - q_j) of system b, for j >= i (no reassociation)."""
    d, n, _ = Z.shape
    qi = q[i]
    if d == 2:
        zi0, zi1 = Z[0, i], Z[1, i]
        for j in range(i, n):
            b0, b1, qj, ej = BAZ[0, j], BAZ[1, j], q[j], E[j]
            for b in range(_LANES):
                ej[b] = _exp1(zi0[b] * b0[b] + zi1[b] * b1[b] - qi[b] - qj[b])
    elif d == 3:
        zi0, zi1, zi2 = Z[0, i], Z[1, i], Z[2, i]
        for j in range(i, n):
            b0, b1, b2, qj, ej = BAZ[0, j], BAZ[1, j], BAZ[2, j], q[j], E[j]
            for b in range(_LANES):
                ej[b] = _exp1(zi0[b] * b0[b] + zi1[b] * b1[b] + zi2[b] * b2[b] - qi[b] - qj[b])
    else:
        for j in range(i, n):
            ej = E[j]
            for b in range(_LANES):
                ej[b] = 0.0
            for k in range(d):
                zik, bjk = Z[k, i], BAZ[k, j]
                for b in range(_LANES):
                    ej[b] += zik[b] * bjk[b]
            qj = q[j]
            for b in range(_LANES):
                ej[b] = _exp1(ej[b] - qi[b] - qj[b])


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM)
def _lanes_accumulate(i, E, H, TU):
    """Channel c of row i: TU[c, i] += sum_{j >= i} E_ij H[c, j]; of rows j > i:
    TU[c, j] += E_ij H[c, i]. Channels: H = (h, h V^ z) and TU = (T, U) (module notes)."""
    C, n, _ = H.shape
    for c in range(C):
        hi, ti = H[c, i], TU[c, i]
        for j in range(i, n):
            ej, hj = E[j], H[c, j]
            for b in range(_LANES):
                ti[b] += ej[b] * hj[b]
        for j in range(i + 1, n):
            ej, tj = E[j], TU[c, j]
            for b in range(_LANES):
                tj[b] += ej[b] * hi[b]


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM_EXP)
def _lanes_h(q, qmax, H):
    """H[0, j] = h_j = exp(q_j - max q) and H[1 + k, j] *= h_j (no reassociation: exp inside)."""
    C, n, _ = H.shape
    for j in range(n):
        qj, hj = q[j], H[0, j]
        for b in range(_LANES):
            hj[b] = _exp1(qj[b] - qmax[b])
        for k in range(1, C):
            vk = H[k, j]
            for b in range(_LANES):
                vk[b] *= hj[b]


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM)
def _lanes_step(Z, Znew, beta, A, Vh, lc0, usa, BAZ, q, qmax, H, TU, E, y):
    """One layer of _LANES systems, Z -> Znew (both (d, n, _LANES)). Reassociated: every exp
    is in a function compiled without it (_lanes_pairs, _lanes_h), never inlined here."""
    d, n, _ = Z.shape
    for k in range(d):                 # BAZ = beta A z_j, H[1 + k] = (V^ z_j)_k (h applied below)
        for j in range(n):
            bk, vk = BAZ[k, j], H[1 + k, j]
            for b in range(_LANES):
                bk[b] = 0.0
                vk[b] = 0.0
            for l in range(d):
                a, v, zl = beta * A[k, l], Vh[k, l], Z[l, j]
                for b in range(_LANES):
                    bk[b] += a * zl[b]
                    vk[b] += v * zl[b]
    for b in range(_LANES):
        qmax[b] = 0.0
    for j in range(n):                 # q_j = beta |A z_j| / 2 (A = A^T), h_j = exp(q_j - max q)
        qj = q[j]
        for b in range(_LANES):
            qj[b] = 0.0
        for k in range(d):
            bk = BAZ[k, j]
            for b in range(_LANES):
                qj[b] += bk[b] * bk[b]
        for b in range(_LANES):
            qj[b] = 0.5 * np.sqrt(qj[b])
            qmax[b] = max(qmax[b], qj[b])
    _lanes_h(q, qmax, H)
    TU[:] = 0.0
    for i in range(n):
        _lanes_pairs(i, Z, BAZ, q, E)
        _lanes_accumulate(i, E, H, TU)
    logn = np.log(n)
    a_sa = np.exp(-max(0.0, lc0))
    c_sa = np.exp(lc0 - max(0.0, lc0))
    av, cv, big, nrm = y[0], y[1], y[2], y[3]
    for i in range(n):                 # as _sym_finish, every pass over the lanes (vectorised)
        t = TU[0, i]
        if usa:
            qi = q[i]
            for b in range(_LANES):
                lc = lc0 - logn + qi[b] + qmax[b] + np.log(t[b])
                hb = max(0.0, lc)
                av[b] = np.exp(-hb)
                cv[b] = np.exp(lc - hb) / t[b]
        else:
            for b in range(_LANES):
                av[b] = a_sa
                cv[b] = c_sa / t[b]
        for b in range(_LANES):
            big[b] = 0.0
            nrm[b] = 0.0
        for k in range(d):
            zk, uk, yk = Z[k, i], TU[1 + k, i], Znew[k, i]
            for b in range(_LANES):
                yk[b] = av[b] * zk[b] + cv[b] * uk[b]
            for b in range(_LANES):
                big[b] = max(big[b], abs(yk[b]))
        for k in range(d):
            yk = Znew[k, i]
            for b in range(_LANES):
                yk[b] = yk[b] / big[b]     # 0/0 -> nan when z_i + dt u_i = 0 (reported by the caller)
                nrm[b] += yk[b] * yk[b]
        for b in range(_LANES):
            nrm[b] = np.sqrt(nrm[b])
        for k in range(d):
            yk = Znew[k, i]
            for b in range(_LANES):
                yk[b] = yk[b] / nrm[b]


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM)
def _lanes_block(Z0s, b0, beta, steps, A, Vh, lc0, usa, record_every, out):
    """Systems b0 .. b0 + _LANES - 1 (those that exist; the block is padded with copies of its
    last system) for ``steps`` layers, recorded into out."""
    B, n, d = Z0s.shape
    nb = min(_LANES, B - b0)
    Z = np.empty((d, n, _LANES))
    Znew = np.empty((d, n, _LANES))
    for b in range(_LANES):
        src = b0 + min(b, nb - 1)
        for i in range(n):
            for k in range(d):
                Z[k, i, b] = Z0s[src, i, k]
    BAZ = np.empty((d, n, _LANES))
    q = np.empty((n, _LANES))
    qmax = np.empty(_LANES)
    H = np.empty((d + 1, n, _LANES))
    TU = np.empty((d + 1, n, _LANES))
    E = np.empty((n, _LANES))
    y = np.empty((4, _LANES))
    for b in range(nb):
        for i in range(n):
            for k in range(d):
                out[b0 + b, 0, i, k] = Z[k, i, b]
    for st in range(1, steps + 1):
        _lanes_step(Z, Znew, beta, A, Vh, lc0, usa, BAZ, q, qmax, H, TU, E, y)
        Z, Znew = Znew, Z
        if st % record_every == 0:
            r = st // record_every
            for b in range(nb):
                for i in range(n):
                    for k in range(d):
                        out[b0 + b, r, i, k] = Z[k, i, b]


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM, parallel=True)
def _run_batch_lanes(Z0s, beta, dt, steps, A, V, usa, record_every, out):
    """simulate_batch for a symmetric A with beta |A|_2 <= _LANES_SCORE_MAX: blocks of _LANES
    systems, in parallel over blocks (each block's arrays stay in the core's L2 cache)."""
    B = Z0s.shape[0]
    Vh, lc0 = _scaled(V, dt)
    for blk in prange((B + _LANES - 1) // _LANES):
        _lanes_block(Z0s, blk * _LANES, beta, steps, A, Vh, lc0, usa, record_every, out)


# --------------------------------------------------------------------------- float32 lanes
# An optional float32 form of the lanes kernel, for callers that need no float64 accuracy (the
# phase diagram counts clusters at the threshold <z_i, z_j> > 0.999, i.e. chord^2 < 2e-3, far above
# float32 rounding). An AVX2 register holds 8 floats instead of 4 doubles, so every pass does twice
# the systems per instruction; the exp is a float32 Cody-Waite exp with a degree-6 polynomial.
# Every constant below is an np.float32 (a Python float would turn float32 arithmetic into float64).
# Used only through :func:`simulate_batch_float32` (and ``sim.hemisphere.phase_diagram(...,
# precision="float32")``); :func:`simulate_reference_float32` is its NumPy float32 reference.

_F0 = np.float32(0.0)
_F1 = np.float32(1.0)
_FHALF = np.float32(0.5)
_LOG2E_F = np.float32(1.4426950408889634)
_LN2_HI_F = np.float32(0.693359375)           # 9 significant bits: k*_LN2_HI_F exact for |k| < 2**15
_LN2_LO_F = np.float32(-2.12194440e-4)         # ln 2 - _LN2_HI_F
_SHIFTER_F = np.float32(12582912.0)           # 1.5 * 2**23: t = x + _SHIFTER_F rounds x to an integer k
_SHIFTER_F_BITS = 0x4B400000                  # the bits of _SHIFTER_F
_EXP_MIN_F = np.float32(-87.0)                # below this the result is flushed to 0 (true value < 1.7e-38)
# e^r on |r| <= ln2/2: the degree-6 polynomial interpolating e^r at the 7 Chebyshev nodes, coefficients
# rounded to float32; its own relative error is 2.0e-8 (0.34 of 2^-24), so the exp is within about
# 1 ulp (float32) of np.exp (measured in bench/engine.py, pinned in tests/test_sim_float32.py).
_D0, _D1, _D2, _D3 = np.float32(1.0), np.float32(1.0), np.float32(0.5), np.float32(0.16666415333747864)
_D4, _D5, _D6 = np.float32(0.04166635125875473), np.float32(0.00837512593716383), np.float32(0.0013941108481958508)


@intrinsic
def _pow2_from_shifted(typingctx, t):
    """2^k as a float32 from t = k + _SHIFTER_F (float32): ((bits(t) - bits(_SHIFTER_F) + 127) << 23)
    reinterpreted, all in int32 (bit casts and integer ops: free, vectorisable). k = 128 gives inf."""
    sig = types.float32(types.float32)

    def codegen(context, builder, signature, args):
        i32 = llvm_ir.IntType(32)
        bits = builder.bitcast(args[0], i32)
        e = builder.sub(bits, llvm_ir.Constant(i32, _SHIFTER_F_BITS - 127))
        e = builder.shl(e, llvm_ir.Constant(i32, 23))
        return builder.bitcast(e, llvm_ir.FloatType())

    return sig, codegen


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM_EXP, inline="always")
def _exp1_f32(y):
    """float32 exp(y) = 2^k e^r, k = round(y / ln 2), as :func:`_exp1` with float32 constants: the
    shifter 1.5 * 2^23, a two-part ln 2 (9 + 24 bits) and a degree-6 polynomial. y < -87 gives 0;
    from 88.38 on it gives inf (np.exp(float32) overflows at 88.72; the engine's arguments are <= ~0).
    Inlined into callers compiled without reassociation."""
    yc = max(y, _EXP_MIN_F)
    t = yc * _LOG2E_F + _SHIFTER_F
    kf = t - _SHIFTER_F
    r = (yc - kf * _LN2_HI_F) - kf * _LN2_LO_F
    p = _D6
    p = p * r + _D5
    p = p * r + _D4
    p = p * r + _D3
    p = p * r + _D2
    p = p * r + _D1
    p = p * r + _D0
    e = p * _pow2_from_shifted(t)
    return e if y >= _EXP_MIN_F else _F0


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM_EXP)
def fast_exp_float32(x):
    """Vectorised exp of a 1-D float32 array: the float32 engine's exp, exposed for tests.

    Within 1 ulp (float32) of ``np.exp`` on [-87, 88.3] (measured: ``bench/engine.py``); smaller
    arguments give 0, from 88.38 on it gives inf.
    """
    out = np.empty_like(x)
    for j in range(x.size):
        out[j] = _exp1_f32(x[j])
    return out


#: systems per float32 block (twice _LANES: the same number of registers per pass as float64)
_LANES_F = 128
#: largest beta |A|_2 for the float32 kernel with a general symmetric A: the largest term of every
#: row is then >= e^{-2.5 beta |A|_2} >= e^{-62.5}, so the terms that underflow (< e^{-87}) weigh
#: less than n e^{-24.5} < 2e-9 (n <= 64) of the row: below float32 rounding
F32_SCORE_MAX = 25.0


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM_EXP)
def _lanes_f_pairs(i, Z, BAZ, q, E):
    """E[j, b] = exp(s_ij - q_i - q_j) of system b, for j >= i (float32, no reassociation)."""
    d, n, _ = Z.shape
    qi = q[i]
    if d == 2:
        zi0, zi1 = Z[0, i], Z[1, i]
        for j in range(i, n):
            b0, b1, qj, ej = BAZ[0, j], BAZ[1, j], q[j], E[j]
            for b in range(_LANES_F):
                ej[b] = _exp1_f32(zi0[b] * b0[b] + zi1[b] * b1[b] - qi[b] - qj[b])
    elif d == 3:
        zi0, zi1, zi2 = Z[0, i], Z[1, i], Z[2, i]
        for j in range(i, n):
            b0, b1, b2, qj, ej = BAZ[0, j], BAZ[1, j], BAZ[2, j], q[j], E[j]
            for b in range(_LANES_F):
                ej[b] = _exp1_f32(zi0[b] * b0[b] + zi1[b] * b1[b] + zi2[b] * b2[b] - qi[b] - qj[b])
    else:
        for j in range(i, n):
            ej = E[j]
            for b in range(_LANES_F):
                ej[b] = _F0
            for k in range(d):
                zik, bjk = Z[k, i], BAZ[k, j]
                for b in range(_LANES_F):
                    ej[b] += zik[b] * bjk[b]
            qj = q[j]
            for b in range(_LANES_F):
                ej[b] = _exp1_f32(ej[b] - qi[b] - qj[b])


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM)
def _lanes_f_accumulate(i, E, H, TU):
    """:func:`_lanes_accumulate` in float32."""
    C, n, _ = H.shape
    for c in range(C):
        hi, ti = H[c, i], TU[c, i]
        for j in range(i, n):
            ej, hj = E[j], H[c, j]
            for b in range(_LANES_F):
                ti[b] += ej[b] * hj[b]
        for j in range(i + 1, n):
            ej, tj = E[j], TU[c, j]
            for b in range(_LANES_F):
                tj[b] += ej[b] * hi[b]


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM_EXP)
def _lanes_f_h(q, qmax, H):
    """:func:`_lanes_h` in float32."""
    C, n, _ = H.shape
    for j in range(n):
        qj, hj = q[j], H[0, j]
        for b in range(_LANES_F):
            hj[b] = _exp1_f32(qj[b] - qmax[b])
        for k in range(1, C):
            vk = H[k, j]
            for b in range(_LANES_F):
                vk[b] *= hj[b]


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM)
def _lanes_f_step(Z, Znew, BA, Vh, a_sa, c_sa, lcn, usa, BAZ, q, qmax, H, TU, E, y):
    """One layer of _LANES_F systems in float32 (as :func:`_lanes_step`). BA = beta A and Vh = V/s_V
    (float32); SA coefficients a_sa, c_sa and, for USA, lcn = log(dt s_V / n) are float32 scalars."""
    d, n, _ = Z.shape
    for k in range(d):
        for j in range(n):
            bk, vk = BAZ[k, j], H[1 + k, j]
            for b in range(_LANES_F):
                bk[b] = _F0
                vk[b] = _F0
            for l in range(d):
                a, v, zl = BA[k, l], Vh[k, l], Z[l, j]
                for b in range(_LANES_F):
                    bk[b] += a * zl[b]
                    vk[b] += v * zl[b]
    for b in range(_LANES_F):
        qmax[b] = _F0
    for j in range(n):
        qj = q[j]
        for b in range(_LANES_F):
            qj[b] = _F0
        for k in range(d):
            bk = BAZ[k, j]
            for b in range(_LANES_F):
                qj[b] += bk[b] * bk[b]
        for b in range(_LANES_F):
            qj[b] = _FHALF * np.sqrt(qj[b])
            qmax[b] = max(qmax[b], qj[b])
    _lanes_f_h(q, qmax, H)
    TU[:] = _F0
    for i in range(n):
        _lanes_f_pairs(i, Z, BAZ, q, E)
        _lanes_f_accumulate(i, E, H, TU)
    av, cv, big, nrm = y[0], y[1], y[2], y[3]
    for i in range(n):
        t = TU[0, i]
        if usa:
            qi = q[i]
            for b in range(_LANES_F):
                lc = lcn + qi[b] + qmax[b] + np.log(t[b])
                hb = max(_F0, lc)
                av[b] = np.exp(-hb)
                cv[b] = np.exp(lc - hb) / t[b]
        else:
            for b in range(_LANES_F):
                av[b] = a_sa
                cv[b] = c_sa / t[b]
        for b in range(_LANES_F):
            big[b] = _F0
            nrm[b] = _F0
        for k in range(d):
            zk, uk, yk = Z[k, i], TU[1 + k, i], Znew[k, i]
            for b in range(_LANES_F):
                yk[b] = av[b] * zk[b] + cv[b] * uk[b]
            for b in range(_LANES_F):
                big[b] = max(big[b], abs(yk[b]))
        for k in range(d):
            yk = Znew[k, i]
            for b in range(_LANES_F):
                yk[b] = yk[b] / big[b]
                nrm[b] += yk[b] * yk[b]
        for b in range(_LANES_F):
            nrm[b] = np.sqrt(nrm[b])
        for k in range(d):
            yk = Znew[k, i]
            for b in range(_LANES_F):
                yk[b] = yk[b] / nrm[b]


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM)
def _lanes_f_block(Z0s, b0, steps, BA, Vh, a_sa, c_sa, lcn, usa, record_every, out):
    """Systems b0 .. b0 + _LANES_F - 1 in float32 (padded with copies of the last one)."""
    B, n, d = Z0s.shape
    nb = min(_LANES_F, B - b0)
    Z = np.empty((d, n, _LANES_F), np.float32)
    Znew = np.empty((d, n, _LANES_F), np.float32)
    for b in range(_LANES_F):
        src = b0 + min(b, nb - 1)
        for i in range(n):
            for k in range(d):
                Z[k, i, b] = Z0s[src, i, k]
    BAZ = np.empty((d, n, _LANES_F), np.float32)
    q = np.empty((n, _LANES_F), np.float32)
    qmax = np.empty(_LANES_F, np.float32)
    H = np.empty((d + 1, n, _LANES_F), np.float32)
    TU = np.empty((d + 1, n, _LANES_F), np.float32)
    E = np.empty((n, _LANES_F), np.float32)
    y = np.empty((4, _LANES_F), np.float32)
    for b in range(nb):
        for i in range(n):
            for k in range(d):
                out[b0 + b, 0, i, k] = Z[k, i, b]
    for st in range(1, steps + 1):
        _lanes_f_step(Z, Znew, BA, Vh, a_sa, c_sa, lcn, usa, BAZ, q, qmax, H, TU, E, y)
        Z, Znew = Znew, Z
        if st % record_every == 0:
            r = st // record_every
            for b in range(nb):
                for i in range(n):
                    for k in range(d):
                        out[b0 + b, r, i, k] = Z[k, i, b]


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM, parallel=True)
def _run_batch_lanes_f32(Z0s, steps, BA, Vh, a_sa, c_sa, lcn, usa, record_every, out):
    """Blocks of _LANES_F systems in float32, in parallel over blocks (Z0s float32, out float32)."""
    B = Z0s.shape[0]
    for blk in prange((B + _LANES_F - 1) // _LANES_F):
        _lanes_f_block(Z0s, blk * _LANES_F, steps, BA, Vh, a_sa, c_sa, lcn, usa, record_every, out)


def _f32_coefficients(beta, dt, A, V, n):
    """float32 inputs of the float32 kernel: beta A, V / s_V, the SA coefficients
    (a, c) = (e^{-max(0, l)}, e^{l - max(0, l)}) with l = log(dt s_V), and log(dt s_V / n)."""
    Vh, log_sv = _v_scale(V)
    lc0 = math.log(dt) + log_sv
    hi = max(0.0, lc0)
    f = np.float32
    return (np.ascontiguousarray((beta * A).astype(f)), np.ascontiguousarray(Vh.astype(f)),
            f(math.exp(-hi)), f(math.exp(lc0 - hi)), f(lc0 - math.log(n)))


#: below this many tokens one thread is faster than a parallel region per layer
PARALLEL_MIN_N = 256


def _symmetric(A) -> bool:
    """True when A = A^T exactly (then one exponential serves both tokens of a pair)."""
    return bool(np.array_equal(A, A.T))


#: the lanes kernel (systems in SIMD lanes) is chosen for at least this many systems of at most
#: LANES_MAX_N tokens (a block is padded to _LANES systems; measured on one thread, n = 32, 200
#: layers, load 9: B = 16: 38 vs 22 ms per-system, B = 24: 37 vs 35, B = 32: 32 vs 44, B = 64: 37
#: vs 86); LANES_MAX_N = 64 is not tuned (larger n: the per-system kernels vectorise over tokens)
LANES_MIN_B = 32
LANES_MAX_N = 64


def _choose_kernel(B: int, n: int, beta: float, A, threads: int) -> str:
    """The one place that picks the compiled path (every path is tested against the reference).

    One system (``B = 0``, :func:`simulate`): "serial_sym" / "serial" below PARALLEL_MIN_N tokens
    or on one thread, else "parallel_sym" / "parallel" (over tokens). Many systems
    (:func:`simulate_batch`): "lanes" (systems in SIMD lanes) for a symmetric A with
    beta |A|_2 <= _LANES_SCORE_MAX, B >= LANES_MIN_B and n <= LANES_MAX_N, else "batch_sym" /
    "batch" (parallel over systems, one system per thread at a time).
    """
    sym = _symmetric(A)
    if B == 0:
        kind = "serial" if n < PARALLEL_MIN_N or threads == 1 else "parallel"
        return kind + ("_sym" if sym else "")
    if (sym and B >= LANES_MIN_B and n <= LANES_MAX_N
            and beta * np.linalg.norm(A, 2) <= _LANES_SCORE_MAX):
        return "lanes"
    return "batch_sym" if sym else "batch"


def _run(Z, beta, dt, steps, A, V, usa, record_every, out):
    threads = numba.get_num_threads()
    kind = _choose_kernel(0, Z.shape[0], beta, A, threads)
    if kind.startswith("serial"):
        (_run_serial_sym if kind == "serial_sym" else _run_serial)(Z, beta, dt, steps, A, V, usa,
                                                                  record_every, out)
    else:
        (_run_parallel_sym if kind == "parallel_sym" else _run_parallel)(
            Z, beta, dt, steps, A, V, usa, record_every, out, min(threads, Z.shape[0]))


def _run_many(Zs, beta, dt, steps, A, V, usa, record_every, out):
    B, n, _ = Zs.shape
    kind = _choose_kernel(B, n, beta, A, numba.get_num_threads())
    if kind == "lanes":
        _run_batch_lanes(Zs, beta, dt, steps, A, V, usa, record_every, out)
    else:
        _run_batch(Zs, beta, dt, steps, A, V, usa, record_every, out, kind == "batch_sym")


def simulate(Z0, beta, dt, steps, A=None, V=None, flow="SA", record_every=1, *,
             max_work=MAX_WORK):
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
        Number of layers, ``>= 0``; ``steps*n*n*d`` is capped at ``max_work``.
    A, V : array_like, shape (d, d), optional
        Query-key matrix :math:`A = Q^\top K` and value matrix; identity when omitted.
    flow : {"SA", "USA"}
        Softmax-normalised or unnormalised (``1/n``) attention.
    record_every : int
        Keep every ``record_every``-th layer (layer 0 is always kept).
    max_work : float, keyword-only
        Bound on ``steps*n*n*d`` (default ``MAX_WORK`` = 1e10, a few seconds); raise it to
        allow a longer run.

    Returns
    -------
    ndarray, shape (steps // record_every + 1, n, d)
        ``out[r]`` is the configuration after ``r*record_every`` layers.

    Notes
    -----
    .. math::

        z_i^{+} = \frac{z_i + \Delta u_i}{\lVert z_i + \Delta u_i\rVert},\quad
        u_i = \sum_j w_{ij} V z_j .

    The score is :math:`\langle z_i, A z_j\rangle = z_i^\top A z_j` and the value is
    :math:`V z_j` (matrix times vector; neither matrix is transposed).

    Raises ``ValueError`` naming the argument for invalid input (complex entries included),
    naming ``beta`` (or ``A``) when :math:`\beta\lVert A\rVert_2 > 10^{300}` (the scores would
    not be floats), and naming ``dt`` if some :math:`z_i + \Delta u_i` is exactly 0 (possible
    only for V with negative directions). Any finite ``V`` and any row scale of ``Z0`` work.
    """
    if not _ready.ready("attention"):   # kernels still compiling at server start (sim._ready)
        return simulate_reference(Z0, beta, dt, steps, A, V, flow, record_every, max_work=max_work)
    Z, beta, dt, steps, A, V, flow, record_every = _prepare(Z0, beta, dt, steps, A, V, flow,
                                                            record_every, max_work)
    n, d = Z.shape
    out = np.empty((steps // record_every + 1, n, d))
    _run(Z, beta, dt, steps, A, V, flow == "USA", record_every, out)
    return _check_output(out)


def simulate_batch(Z0s, beta, dt, steps, A=None, V=None, flow="SA", record_every=1, *,
                   max_work=MAX_WORK):
    """Run :func:`simulate` on ``B`` independent systems ``Z0s`` of shape (B, n, d).

    Returns an array of shape ``(B, steps // record_every + 1, n, d)``; ``B*steps*n*n*d`` is
    capped at ``max_work``.
    """
    Z0s = _v.finite_array("Z0s", Z0s, ndim=3)
    B, n, d = Z0s.shape
    if B < 1 or n < 1 or d < 1:
        raise ValueError(f"Z0s must have shape (B, n, d) with B, n, d >= 1, got {Z0s.shape}")
    beta, dt, steps, A, V, flow, record_every = _check_common(beta, dt, steps, A, V, flow,
                                                              record_every, d)
    _check_size("Z0s", B, steps, n, d, record_every, max_work)
    Zs = _normalise_rows("Z0s", Z0s)
    out = np.empty((B, steps // record_every + 1, n, d))
    if not _ready.ready("attention"):   # kernels still compiling at server start (sim._ready)
        for b in range(B):
            out[b] = simulate_reference(Zs[b], beta, dt, steps, A, V, flow, record_every,
                                        max_work=max_work)
        return out
    _run_many(Zs, beta, dt, steps, A, V, flow == "USA", record_every, out)
    return _check_output(out)


def _check_float32(A, beta):
    """The float32 kernel's conditions (module notes): A symmetric; beta |A|_2 <= F32_SCORE_MAX, or
    <= _LANES_SCORE_MAX when A is a positive multiple of the identity (every row's largest term is
    then its diagonal term, 1)."""
    if not _symmetric(A):
        raise ValueError("A must be symmetric (A = A^T) for the float32 path: its kernel computes one "
                         "exponential per pair of tokens; use simulate_batch for a general A")
    d = A.shape[0]
    scalar = d > 0 and A[0, 0] > 0.0 and np.array_equal(A, A[0, 0] * np.eye(d))
    bound = _LANES_SCORE_MAX if scalar else F32_SCORE_MAX
    score = beta * float(np.linalg.norm(A, 2))
    if score > bound:
        raise ValueError(f"beta too large for the float32 path: beta*||A||_2 = {score:.3g} > {bound:g} "
                         f"({'A a multiple of I' if scalar else 'general symmetric A'}); beyond it the "
                         "float32 weights could underflow: use simulate_batch (float64)")


def simulate_reference_float32(Z0, beta, dt, steps, A=None, V=None, flow="SA", record_every=1, *,
                               max_work=MAX_WORK):
    """:func:`simulate_reference` computed in float32 (NumPy, float32 arrays throughout).

    The validator of :func:`simulate_batch_float32`: the same formulas (module notes), float32
    rounding (unit roundoff 6e-8). Returns a float32 array of shape (steps // record_every + 1, n, d).
    """
    Z, beta, dt, steps, A, V, flow, record_every = _prepare(Z0, beta, dt, steps, A, V, flow,
                                                            record_every, max_work)
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


def simulate_batch_float32(Z0s, beta, dt, steps, A=None, V=None, flow="SA", record_every=1, *,
                           max_work=MAX_WORK):
    r""":func:`simulate_batch` in float32: the lanes kernel with 8 floats per SIMD register.

    For callers that need no float64 accuracy (cluster counts at a threshold; the hemisphere
    page's phase diagram). Same arguments and layer map as :func:`simulate_batch`, same formulas
    (one exponential per pair, module notes); returns a float32 array of shape
    ``(B, steps // record_every + 1, n, d)``. Rounding: float32 (unit roundoff 6e-8) in every
    score, exponential (:func:`fast_exp_float32`, about 1 ulp) and sum, so trajectories differ
    from the float64 ones by about 1e-6 after a few layers, more where the dynamics amplify
    differences (near a saddle); tests/test_sim_float32.py measures it.

    Conditions (``ValueError`` otherwise): ``A`` symmetric, and
    :math:`\beta\lVert A\rVert_2 \le` ``F32_SCORE_MAX`` = 25, or :math:`\le 140` when ``A`` is a
    positive multiple of the identity (the default): beyond that the float32 weights could
    underflow. ``B*steps*n*n*d`` is capped at ``max_work``.
    """
    Z0s = _v.finite_array("Z0s", Z0s, ndim=3)
    B, n, d = Z0s.shape
    if B < 1 or n < 1 or d < 1:
        raise ValueError(f"Z0s must have shape (B, n, d) with B, n, d >= 1, got {Z0s.shape}")
    beta, dt, steps, A, V, flow, record_every = _check_common(beta, dt, steps, A, V, flow,
                                                              record_every, d)
    _check_float32(A, beta)
    _check_size("Z0s", B, steps, n, d, record_every, max_work)
    Zs = _normalise_rows("Z0s", Z0s)
    out = np.empty((B, steps // record_every + 1, n, d), np.float32)
    if not _ready.ready("attention"):   # kernels still compiling at server start (sim._ready)
        for b in range(B):
            out[b] = simulate_reference_float32(Zs[b], beta, dt, steps, A, V, flow, record_every,
                                                max_work=max_work)
        return out
    BA, Vh, a_sa, c_sa, lcn = _f32_coefficients(beta, dt, A, V, n)
    _run_batch_lanes_f32(Zs.astype(np.float32), steps, BA, Vh, a_sa, c_sa, lcn, flow == "USA",
                         record_every, out)
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
            _run_serial_sym(Zn, 1.0, 0.1, 1, np.eye(d), np.eye(d), usa, 1, out)
            _run_parallel_sym(Zn, 1.0, 0.1, 1, np.eye(d), np.eye(d), usa, 1, out, 2)
        simulate_batch(Z[None], 1.0, 0.1, 1)
        simulate_batch(Z[None], 1.0, 0.1, 1, A=Z.T @ Z)
        _run_batch_lanes(np.repeat(Zn[None], 2, axis=0), 1.0, 0.1, 1, np.eye(d), np.eye(d), False,
                         1, np.empty((2, 2, 4, d)))
        Zf = np.repeat(Zn[None], 2, axis=0).astype(np.float32)
        for usa in (False, True):
            _run_batch_lanes_f32(Zf, 1, *_f32_coefficients(1.0, 0.1, np.eye(d), np.eye(d), 4), usa, 1,
                                 np.empty((2, 2, 4, d), np.float32))
    fast_exp(np.zeros(2))
    fast_exp_float32(np.zeros(2, np.float32))
