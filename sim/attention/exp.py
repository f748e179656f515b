"""The vector exponential of the attention kernels, in float64 and float32.

``np.exp`` inside a Numba loop is a call to libm per element, which stops the loop from being
vectorised. :func:`exp1` and :func:`exp1_f32` are branch-free Cody-Waite exponentials built
from bit casts, integer arithmetic and a polynomial, so a flat loop over them vectorises with
no SVML. They are inlined into the kernels (``inline="always"``), which must be compiled
without reassociation (``FM_EXP``): reassociating would fold the two parts of ln 2 and the
rounding shifter. :func:`exp_lane` picks one of them from its argument's type at compile time,
for the kernels that are written once for both precisions (:mod:`sim.attention.lanes`).

:func:`fast_exp` and :func:`fast_exp_float32` apply them to a whole 1-D array, so that their
accuracy can be checked against ``np.exp``.

Numba's on-disk cache of a kernel is keyed on the kernel's own file: after editing this file,
clear the cache (``make clean``) so that the kernels that inline it are compiled again.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir as llvm_ir
from numba import njit, types
from numba.extending import intrinsic, overload

__all__ = ["fast_exp", "fast_exp_float32", "exp1", "exp1_f32", "exp_lane", "FM", "FM_EXP"]

#: fastmath flags of the kernels, without "nnan"/"ninf": reductions may be reassociated (SIMD),
#: inf/nan stay honest
FM = {"reassoc", "contract", "arcp", "nsz"}
#: fastmath flags of every function that inlines an exp: no reassociation (module notes)
FM_EXP = {"contract", "arcp", "nsz"}

# --------------------------------------------------------------------------- float64
_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # 32 significant bits: k*_LN2_HI is exact for |k| < 2**20
_LN2_LO = 1.90821492927058770002e-10
_SHIFTER = 6755399441055744.0  # 1.5 * 2**52: t = x + _SHIFTER rounds x to an integer k
_SHIFTER_BITS = 0x4338000000000000  # the bits of _SHIFTER; bits(t) - _SHIFTER_BITS = k
_EXP_MIN = -708.0  # below this the result is flushed to 0 (true value < 3.3e-308)
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


@njit(cache=True, nogil=True, error_model="numpy", fastmath=FM_EXP, inline="always")
def exp1(y):
    """exp(y) = 2^k e^r with k = round(y / ln 2), r = y - k ln 2.

    k is rounded by adding 1.5 * 2^52 (the "shifter"): the sum holds k in its low mantissa
    bits, so the integer k comes out of a bit cast and an integer subtraction (AVX2 has no
    vector float -> int64 conversion: ``np.int64(kf)`` would make LLVM fall back to scalar
    conversions). The two-part ln 2 makes r exact to about an ulp; e^r is a degree-11
    polynomial (error < 1e-17 on |r| <= ln2/2); 2^k is built in the exponent bits.
    Branch-free, so a flat loop over it vectorises (no SVML needed). At most 1 ulp from
    ``np.exp`` on [-708, 709.4]; y < _EXP_MIN gives 0; from y >= 1023.5 ln 2 = 709.44 on it
    gives inf (k = 1024; the engine's arguments are <= ~0).
    """
    yc = max(y, _EXP_MIN)
    t = yc * _LOG2E + _SHIFTER  # round-to-nearest of y / ln 2, in the low bits of t
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


@njit(cache=True, nogil=True, error_model="numpy", fastmath=FM_EXP)
def fast_exp(x):
    """Vectorised exp of a 1-D float64 array: the attention kernels' exp (:func:`exp1`).

    Parameters
    ----------
    x : ndarray of float64, 1-D

    Returns
    -------
    ndarray of float64
        At most 1 ulp from ``np.exp`` on [-708, 709.4]; smaller arguments give 0 (true value
        below 3.3e-308); from 709.44 on it gives inf (``np.exp`` overflows at 709.78).
    """
    out = np.empty_like(x)
    for j in range(x.size):
        out[j] = exp1(x[j])
    return out


# --------------------------------------------------------------------------- float32
# Every constant below is an np.float32 (a Python float would turn float32 arithmetic into float64).
_F0 = np.float32(0.0)
_LOG2E_F = np.float32(1.4426950408889634)
_LN2_HI_F = np.float32(0.693359375)  # 9 significant bits: k*_LN2_HI_F exact for |k| < 2**15
_LN2_LO_F = np.float32(-2.12194440e-4)  # ln 2 - _LN2_HI_F
_SHIFTER_F = np.float32(12582912.0)  # 1.5 * 2**23: t = x + _SHIFTER_F rounds x to an integer k
_SHIFTER_F_BITS = 0x4B400000  # the bits of _SHIFTER_F
_EXP_MIN_F = np.float32(-87.0)  # below this the result is flushed to 0 (true value < 1.7e-38)
# e^r on |r| <= ln2/2: the degree-6 polynomial interpolating e^r at the 7 Chebyshev nodes, coefficients
# rounded to float32; its own relative error is 2.0e-8 (0.34 of 2^-24), so the exp is within about
# 1 ulp (float32) of np.exp.
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


@njit(cache=True, nogil=True, error_model="numpy", fastmath=FM_EXP, inline="always")
def exp1_f32(y):
    """float32 exp(y) = 2^k e^r, k = round(y / ln 2), as :func:`exp1` with float32 constants: the
    shifter 1.5 * 2^23, a two-part ln 2 (9 + 24 bits) and a degree-6 polynomial. y < -87 gives 0;
    from 88.38 on it gives inf (np.exp(float32) overflows at 88.72; the engine's arguments are <= ~0)."""
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


@njit(cache=True, nogil=True, error_model="numpy", fastmath=FM_EXP)
def fast_exp_float32(x):
    """Vectorised exp of a 1-D float32 array: the float32 kernels' exp (:func:`exp1_f32`).

    Parameters
    ----------
    x : ndarray of float32, 1-D

    Returns
    -------
    ndarray of float32
        Within 1 ulp (float32) of ``np.exp`` on [-87, 88.3]; smaller arguments give 0, from
        88.38 on it gives inf.
    """
    out = np.empty_like(x)
    for j in range(x.size):
        out[j] = exp1_f32(x[j])
    return out


# --------------------------------------------------------------------------- either, by type
def exp_lane(y):  # pragma: no cover - replaced by its overload in compiled code
    """:func:`exp1` for a float64 ``y``, :func:`exp1_f32` for a float32 one (chosen when the
    calling kernel is compiled; only callable from compiled code)."""
    raise NotImplementedError("exp_lane is only available in Numba-compiled code")


@overload(exp_lane, inline="always")
def _exp_lane_overload(y):
    # the plain Python bodies: inlined once into the caller (an inlined call of an inline="always"
    # function would be inlined twice)
    if y == types.float32:
        return exp1_f32.py_func
    if y == types.float64:
        return exp1.py_func
    return None
