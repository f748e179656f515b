"""Numbers as a page shows them and the one tolerance rule of an answer; no Streamlit, so the class's
answer logic (ui/teaching/responses.py) and the predict steps share them."""

from __future__ import annotations

import math


def within(x: float, y: float, rtol: float, atol: float) -> bool:
    """The one tolerance rule of a number answer: ``|x - y| <= atol + rtol * |y|``."""
    return abs(float(x) - float(y)) <= atol + rtol * abs(float(y))


_SUP = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def human(y, digits: int = 3) -> str:
    """A number as people write it: ``17400``, ``0.0123``, ``3.2 × 10⁻⁷`` (never ``1.74e+04``)."""
    if isinstance(y, str):
        return y
    y = float(y)
    if not math.isfinite(y):
        return "∞" if y > 0 else ("−∞" if y < 0 else "?")
    if y == 0:
        return "0"
    if 1e-4 <= abs(y) < 1e7:
        e = math.floor(math.log10(abs(y)))
        d = max(digits - 1 - e, 0)
        out = f"{round(y, d):.{d}f}"
        return out.rstrip("0").rstrip(".") if "." in out else out
    m, e = f"{y:.{digits - 1}e}".split("e")
    m = m.rstrip("0").rstrip(".") if "." in m else m
    return f"{m} × 10{str(int(e)).translate(_SUP)}"


def fmt(y, digits: int = 4) -> str:
    """A number in ``digits`` significant figures (``%g``); text as it is."""
    if isinstance(y, str):
        return y
    if y == 0:
        return "0"
    return f"{y:.{digits}g}"
