"""What every browser-less student does on each page (``bench/classroom.py``, ``scripts/rerun_cpu.py``,
``scripts/rerun_breakdown.py``): open it at its defaults, move its first slider to a value of its
own, open it from a shared link with every parameter changed."""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.server import quiet_streamlit


@dataclass
class PagePlan:
    stem: str
    slider: str | None = None  # first numeric parameter
    slider_values: list = field(default_factory=list)  # grid values, one picked per session
    link_query: dict = field(default_factory=dict)  # every parameter away from its default


def _grid(p, k: int) -> list:
    """k distinct non-default values of numeric parameter p spread over its range."""
    vals = []
    for i in range(1, 4 * k + 1):
        v = p.clamp(p.min + (p.max - p.min) * ((i * 0.6180339887) % 1.0))
        if v != p.default and v not in vals:
            vals.append(v)
        if len(vals) == k:
            break
    return vals or [p.clamp(p.max)]


def plans(
    n_sessions: int, stems: list[str] | None = None, same_values: bool = False, distinct: int | None = None
) -> list[PagePlan]:
    """What every student does on each page. ``same_values``: everyone moves the first slider
    to the same value (cache hits after the first: isolates per-session cost and memory);
    ``distinct``: the sessions share that many values (student ``i`` takes value ``i % distinct``:
    identical requests at the same instant beside distinct ones)."""

    quiet_streamlit()
    from ui.kit import spec
    from ui.kit.nav import PAGES
    from ui.kit.page import fmt_value

    out = []
    for e in PAGES:
        if stems and e.stem not in stems:
            continue
        from ui.kit import files

        res = spec.resolve(files.page_module(e.stem).SCHEMA)
        plan = PagePlan(e.stem)
        first = next((p for p in res.params.values() if p.kind in ("float", "int")), None)
        if first is not None:
            plan.slider = first.name
            k = 1 if same_values else max(min(distinct or n_sessions, n_sessions), 1)
            plan.slider_values = _grid(first, k)
        plan.link_query = {"lang": "en", **{n: fmt_value(p, p.other_value()) for n, p in res.params.items()}}
        out.append(plan)
    return out
