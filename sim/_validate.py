"""Argument checks shared by the public functions of :mod:`sim`.

Every public function validates its inputs with these helpers before any
work starts, so bad input (wrong type, NaN, inf, out of range, absurdly large
sizes) raises ``ValueError`` naming the argument instead of crashing a kernel
or starting unbounded compute.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = ["real", "integer", "choice", "finite_array"]


def real(
    name: str, value, lo: float | None = None, hi: float | None = None, *, lo_open: bool = False, hi_open: bool = False
) -> float:
    """Return ``value`` as a finite float in ``[lo, hi]`` (open ends optional)."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v}")
    if lo is not None and (v < lo or (lo_open and v == lo)):
        raise ValueError(f"{name} must be {'>' if lo_open else '>='} {lo}, got {v}")
    if hi is not None and (v > hi or (hi_open and v == hi)):
        raise ValueError(f"{name} must be {'<' if hi_open else '<='} {hi}, got {v}")
    return v


def integer(name: str, value, lo: int | None = None, hi: int | None = None) -> int:
    """Return ``value`` as an int in ``[lo, hi]``; floats are accepted only if integral."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if isinstance(value, (numbers.Integral, np.integer)):
        v = int(value)
    elif isinstance(value, (numbers.Real, np.floating)) and math.isfinite(float(value)) and float(value).is_integer():
        v = int(value)
    else:
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if lo is not None and v < lo:
        raise ValueError(f"{name} must be >= {lo}, got {v}")
    if hi is not None and v > hi:
        raise ValueError(f"{name} must be <= {hi}, got {v}")
    return v


def choice(name: str, value, options) -> str:
    """Return ``value`` if it is one of ``options``."""
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name} must be one of {sorted(options)}, got {value!r}")
    return value


def finite_array(name: str, value, ndim: int | None = None, shape=None, max_size: int | None = None) -> np.ndarray:
    """Return ``value`` as a finite float64 array with the given ndim/shape.

    ``shape`` may contain ``None`` for free axes.
    """
    try:
        cplx = np.iscomplexobj(value)
    except (TypeError, ValueError):
        cplx = False  # ragged or odd input: the float conversion below reports it
    if cplx:
        raise ValueError(
            f"{name} must be real: complex entries are refused (the imaginary part would be silently dropped)"
        )
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a real array: {exc}") from None
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if shape is not None:
        if arr.ndim != len(shape) or any(s is not None and s != a for s, a in zip(shape, arr.shape)):
            raise ValueError(f"{name} must have shape {tuple('*' if s is None else s for s in shape)}, got {arr.shape}")
    if max_size is not None and arr.size > max_size:
        raise ValueError(f"{name} is too large ({arr.size} entries > {max_size})")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite numbers")
    return arr


def time_grid(name: str, value, hi: float, max_size: int, what: str = "") -> np.ndarray:
    """A finite scalar or 1-D array of times in ``[0, hi]``, returned 1-D (``what``: a note in the message)."""
    arr = finite_array(name, value, max_size=max_size)
    if arr.ndim > 1:
        raise ValueError(f"{name} must be a scalar or 1-D array, got shape {arr.shape}")
    arr = np.atleast_1d(arr)
    if arr.size and (arr.min() < 0.0 or arr.max() > hi):
        raise ValueError(f"{name} must lie in [0, {hi:g}]{what}, got range [{arr.min()}, {arr.max()}]")
    return arr
