"""The timing helper the benchmark scripts share (run them as ``python bench/<name>.py``)."""
from __future__ import annotations

import time


def best_time(fn, repeats: int):
    """The best wall time of ``repeats`` calls of ``fn()`` and the last call's result."""
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out
