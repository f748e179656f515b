r"""The "lanes" kernel: many small systems side by side in the SIMD lanes, in float64 or float32.

For many small systems (the phase diagram: n = 32, d = 2) the loops over tokens are too short for
SIMD (a triangle of rows of length 32 .. 1). The lanes kernel puts ``L`` systems side by side,
structure-of-arrays: every array is ``(..., n, L)`` and the innermost loop of every pass runs
over the systems, a compile-time length, so LLVM vectorises it with no remainder. Each pass stores
into one array only (few run-time alias checks), and the per-pair accumulation is split into one
loop per channel for the same reason. The symmetric form (one exponential per unordered pair,
package notes) is used throughout.

The kernel is written once and compiled by Numba for each precision, from the dtype of its
arrays: ``L`` (:data:`LANES`) and the exponential (:func:`sim.attention.exp.exp_lane`) are
fixed per dtype at compile time, and the coefficients arrive in that dtype
(:func:`_coefficients`), so float32 arithmetic stays float32. Both are cached on disk.

- float64 (:func:`sim.attention.simulate_batch`): chosen only when
  :math:`\beta\lVert A\rVert_2 \le` ``LANES_SCORE_MAX``, which guarantees the symmetric form's
  conditions at every layer (:math:`\mathrm{top}_i \le \beta\lVert A\rVert_2`, so spread and gap
  are :math:`\le 2\beta\lVert A\rVert_2 \le` ``_SYM_GAP``).
- float32 (:func:`sim.attention.simulate_batch_float32`): for callers that need no float64
  accuracy (the phase diagram counts clusters at the threshold :math:`\langle z_i, z_j\rangle >
  0.999`, i.e. chord² < 2e-3, far above float32 rounding). A register holds twice as many floats
  as doubles, so every pass does twice the systems per instruction.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from numba import njit, prange, types
from numba.core.errors import NumbaIRAssumptionWarning
from numba.extending import intrinsic, overload
from numba.np.numpy_support import as_dtype

from sim.attention.exp import FM as _FM
from sim.attention.exp import FM_EXP as _FM_EXP
from sim.attention.exp import exp_lane as _exp
from sim.attention.kernels import _scaled
from sim.attention.reference import _v_scale

# Inlining the float32 exp into the loops leaves a phi variable that Numba's pedantic IR check
# reports as "not in scope" when the parallel kernel is compiled; the code is correct (tested equal
# to the float32 reference): only that message is silenced.
warnings.filterwarnings("ignore", message=r"variable 'exp1(_f32)?_v\d+__vphi", category=NumbaIRAssumptionWarning)

__all__ = ["LANES", "LANES_SCORE_MAX", "F32_SCORE_MAX", "run_lanes"]

#: systems per SIMD block, by dtype: the same 512 bytes per row of lanes (as many registers per
#: pass) in both precisions; for float64, 64 lanes beat 16, 32, 128 and 256 on n = 32, d = 2
LANES = {np.dtype(np.float64): 64, np.dtype(np.float32): 128}
#: largest beta |A|_2 for which the float64 lanes kernel is chosen (its symmetric form always applies)
LANES_SCORE_MAX = 140.0
#: largest beta |A|_2 for the float32 kernel with a general symmetric A: the largest term of every
#: row is then >= e^{-2.5 beta |A|_2} >= e^{-62.5}, so the terms that underflow (< e^{-87}) weigh
#: less than n e^{-24.5} < 2e-9 (n <= 64) of the row: below float32 rounding
F32_SCORE_MAX = 25.0


@intrinsic
def _nlanes(typingctx, arr):
    """L = LANES[arr.dtype] as a compile-time constant (so the loops over the lanes have a known
    trip count)."""
    n = LANES[np.dtype(as_dtype(arr.dtype))]
    sig = types.intp(arr)

    def codegen(context, builder, signature, args):
        return context.get_constant(types.intp, n)

    return sig, codegen


def _cast(arr, x):  # pragma: no cover - replaced by its overload in compiled code
    """``x`` converted to the dtype of ``arr`` (compiled code only)."""
    raise NotImplementedError


@overload(_cast, inline="always")
def _cast_overload(arr, x):
    ty = arr.dtype
    return lambda arr, x: ty(x)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM_EXP)
def _pairs(i, Z, BAZ, q, E):
    """E[j, b] = exp(s_ij - q_i - q_j) of system b, for j >= i (no reassociation)."""
    L = _nlanes(E)
    d, n, _ = Z.shape
    qi = q[i]
    if d == 2:
        zi0, zi1 = Z[0, i], Z[1, i]
        for j in range(i, n):
            b0, b1, qj, ej = BAZ[0, j], BAZ[1, j], q[j], E[j]
            for b in range(L):
                ej[b] = _exp(zi0[b] * b0[b] + zi1[b] * b1[b] - qi[b] - qj[b])
    elif d == 3:
        zi0, zi1, zi2 = Z[0, i], Z[1, i], Z[2, i]
        for j in range(i, n):
            b0, b1, b2, qj, ej = BAZ[0, j], BAZ[1, j], BAZ[2, j], q[j], E[j]
            for b in range(L):
                ej[b] = _exp(zi0[b] * b0[b] + zi1[b] * b1[b] + zi2[b] * b2[b] - qi[b] - qj[b])
    else:
        zero = _cast(E, 0.0)
        for j in range(i, n):
            ej = E[j]
            for b in range(L):
                ej[b] = zero
            for k in range(d):
                zik, bjk = Z[k, i], BAZ[k, j]
                for b in range(L):
                    ej[b] += zik[b] * bjk[b]
            qj = q[j]
            for b in range(L):
                ej[b] = _exp(ej[b] - qi[b] - qj[b])


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM)
def _accumulate(i, E, H, TU):
    """Channel c of row i: TU[c, i] += sum_{j >= i} E_ij H[c, j]; of rows j > i:
    TU[c, j] += E_ij H[c, i]. Channels: H = (h, h V^ z) and TU = (T, U) (package notes)."""
    L = _nlanes(E)
    C, n, _ = H.shape
    for c in range(C):
        hi, ti = H[c, i], TU[c, i]
        for j in range(i, n):
            ej, hj = E[j], H[c, j]
            for b in range(L):
                ti[b] += ej[b] * hj[b]
        for j in range(i + 1, n):
            ej, tj = E[j], TU[c, j]
            for b in range(L):
                tj[b] += ej[b] * hi[b]


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM_EXP)
def _h(q, qmax, H):
    """H[0, j] = h_j = exp(q_j - max q) and H[1 + k, j] *= h_j (no reassociation: exp inside)."""
    L = _nlanes(H)
    C, n, _ = H.shape
    for j in range(n):
        qj, hj = q[j], H[0, j]
        for b in range(L):
            hj[b] = _exp(qj[b] - qmax[b])
        for k in range(1, C):
            vk = H[k, j]
            for b in range(L):
                vk[b] *= hj[b]


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM)
def _step(Z, Znew, BA, Vh, a_sa, c_sa, lcn, usa, BAZ, q, qmax, H, TU, E, y):
    """One layer of L systems, Z -> Znew (both (d, n, L)). BA = beta A and Vh = V / s_V; the SA
    coefficients a_sa, c_sa and, for USA, lcn = log(dt s_V / n) are scalars of the arrays' dtype.
    Reassociated: every exp is in a function compiled without it (_pairs, _h), never inlined here."""
    L = _nlanes(Z)
    zero = _cast(Z, 0.0)
    half = _cast(Z, 0.5)
    d, n, _ = Z.shape
    for k in range(d):  # BAZ = beta A z_j, H[1 + k] = (V^ z_j)_k (h applied below)
        for j in range(n):
            bk, vk = BAZ[k, j], H[1 + k, j]
            for b in range(L):
                bk[b] = zero
                vk[b] = zero
            for l in range(d):
                a, v, zl = BA[k, l], Vh[k, l], Z[l, j]
                for b in range(L):
                    bk[b] += a * zl[b]
                    vk[b] += v * zl[b]
    for b in range(L):
        qmax[b] = zero
    for j in range(n):  # q_j = beta |A z_j| / 2 (A = A^T), h_j = exp(q_j - max q)
        qj = q[j]
        for b in range(L):
            qj[b] = zero
        for k in range(d):
            bk = BAZ[k, j]
            for b in range(L):
                qj[b] += bk[b] * bk[b]
        for b in range(L):
            qj[b] = half * np.sqrt(qj[b])
            qmax[b] = max(qmax[b], qj[b])
    _h(q, qmax, H)
    TU[:] = zero
    for i in range(n):
        _pairs(i, Z, BAZ, q, E)
        _accumulate(i, E, H, TU)
    av, cv, big, nrm = y[0], y[1], y[2], y[3]
    for i in range(n):  # as kernels._sym_finish, every pass over the lanes
        t = TU[0, i]
        if usa:
            qi = q[i]
            for b in range(L):
                lc = lcn + qi[b] + qmax[b] + np.log(t[b])
                hb = max(zero, lc)
                av[b] = np.exp(-hb)
                cv[b] = np.exp(lc - hb) / t[b]
        else:
            for b in range(L):
                av[b] = a_sa
                cv[b] = c_sa / t[b]
        for b in range(L):
            big[b] = zero
            nrm[b] = zero
        for k in range(d):
            zk, uk, yk = Z[k, i], TU[1 + k, i], Znew[k, i]
            for b in range(L):
                yk[b] = av[b] * zk[b] + cv[b] * uk[b]
            for b in range(L):
                big[b] = max(big[b], abs(yk[b]))
        for k in range(d):
            yk = Znew[k, i]
            for b in range(L):
                yk[b] = yk[b] / big[b]  # 0/0 -> nan when z_i + dt u_i = 0 (reported by the caller)
                nrm[b] += yk[b] * yk[b]
        for b in range(L):
            nrm[b] = np.sqrt(nrm[b])
        for k in range(d):
            yk = Znew[k, i]
            for b in range(L):
                yk[b] = yk[b] / nrm[b]


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM)
def _block(Z0s, b0, steps, BA, Vh, a_sa, c_sa, lcn, usa, record_every, out):
    """Systems b0 .. b0 + L - 1 (those that exist; the block is padded with copies of its last
    system) for ``steps`` layers, recorded into out."""
    L = _nlanes(out)
    B, n, d = Z0s.shape
    nb = min(L, B - b0)
    Z = np.empty((d, n, L), out.dtype)
    Znew = np.empty((d, n, L), out.dtype)
    for b in range(L):
        src = b0 + min(b, nb - 1)
        for i in range(n):
            for k in range(d):
                Z[k, i, b] = Z0s[src, i, k]
    BAZ = np.empty((d, n, L), out.dtype)
    q = np.empty((n, L), out.dtype)
    qmax = np.empty(L, out.dtype)
    H = np.empty((d + 1, n, L), out.dtype)
    TU = np.empty((d + 1, n, L), out.dtype)
    E = np.empty((n, L), out.dtype)
    y = np.empty((4, L), out.dtype)
    for b in range(nb):
        for i in range(n):
            for k in range(d):
                out[b0 + b, 0, i, k] = Z[k, i, b]
    for st in range(1, steps + 1):
        _step(Z, Znew, BA, Vh, a_sa, c_sa, lcn, usa, BAZ, q, qmax, H, TU, E, y)
        Z, Znew = Znew, Z
        if st % record_every == 0:
            r = st // record_every
            for b in range(nb):
                for i in range(n):
                    for k in range(d):
                        out[b0 + b, r, i, k] = Z[k, i, b]


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FM, parallel=True)
def _run_lanes(Z0s, steps, BA, Vh, a_sa, c_sa, lcn, usa, record_every, out):
    """Blocks of L systems, in parallel over blocks (each block's arrays stay in the core's L2
    cache). Z0s, BA, Vh, out and the three scalars share one dtype."""
    L = _nlanes(out)
    B = Z0s.shape[0]
    for blk in prange((B + L - 1) // L):
        _block(Z0s, blk * L, steps, BA, Vh, a_sa, c_sa, lcn, usa, record_every, out)


def _coefficients(beta, dt, A, V, n, dtype):
    """The kernel's inputs in ``dtype``: beta A, V / s_V, the SA coefficients
    (a, c) = (e^{-max(0, l)}, e^{l - max(0, l)}) with l = log(dt s_V), and log(dt s_V / n)."""
    if np.dtype(dtype) == np.float64:  # as the per-system kernels scale V (same bits)
        Vh, lc0 = _scaled(V, dt)
    else:  # as the NumPy float32 reference scales V
        Vh, log_sv = _v_scale(V)
        lc0 = math.log(dt) + log_sv
    hi = max(0.0, lc0)
    f = np.dtype(dtype).type
    return (
        np.ascontiguousarray((beta * A).astype(f)),
        np.ascontiguousarray(Vh.astype(f)),
        f(math.exp(-hi)),
        f(math.exp(lc0 - hi)),
        f(lc0 - math.log(n)),
    )


def run_lanes(Zs, beta, dt, steps, A, V, usa, record_every, out):
    """Fill ``out`` (B, records, n, d), float64 or float32, with the layers of the systems ``Zs``
    (checked, rows normalised, A symmetric within the bounds above); the precision is
    ``out.dtype``."""
    B, n, _ = Zs.shape
    coef = _coefficients(beta, dt, A, V, n, out.dtype)
    _run_lanes(np.ascontiguousarray(Zs, dtype=out.dtype), steps, *coef, usa, record_every, out)
