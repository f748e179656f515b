"""The timing and report helpers the benchmark scripts share (run them as ``python bench/<name>.py``)."""

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


def save_json(path, obj, indent: int = 1) -> int:
    """Write ``obj`` as JSON to ``path`` (a ``--json`` option; nothing when it is None); returns 0,
    the exit code of a report that was printed."""
    if path is not None:
        import json
        from pathlib import Path

        Path(path).write_text(json.dumps(obj, indent=indent, default=float))
    return 0
