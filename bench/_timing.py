"""The timing, report and option helpers the benchmark scripts share (run them as ``python bench/<name>.py``)."""

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


def add_flag_option(ap) -> None:
    """The ``--flag OPTION=VALUE`` option (repeatable) of a benchmark that starts its own servers."""
    ap.add_argument(
        "--flag",
        action="append",
        default=[],
        metavar="OPTION=VALUE",
        help="extra streamlit option for the server, e.g. runner.postScriptGC=true",
    )


def flag_args(flags: list[str]) -> list[str]:
    """``--flag`` values as streamlit arguments: ``["a.b=1"]`` -> ``["--a.b", "1"]``."""
    return [x for f in flags for x in (f"--{f.split('=', 1)[0]}", f.split("=", 1)[1])]
