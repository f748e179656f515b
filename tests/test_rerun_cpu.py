"""CPU per distinct rerun (the classroom stress case): one student moves a page's first
slider to a value nobody used before, so every datum and figure that depends on it is computed
afresh. The CPU seconds (``time.process_time``: this process, all threads — the page script, Numba,
AppTest's own bookkeeping) of that one rerun must stay within the page's budget.

The budgets are twice what was measured here (docs/performance.md, *CPU per distinct rerun*: the table per page, and
``scripts/rerun_cpu.py`` for the same number on a real server): a page that gets twice as expensive
per slider move fails. Most of a distinct rerun is the page's own simulation at the new value;
see docs/performance.md for what is left above the 40 ms the issue asked for. The measured numbers are
printed (``pytest -s``)."""
from __future__ import annotations

import importlib
import time

import pytest

from tests.conftest import STEMS, app_test

#: ms of CPU per distinct rerun: 2x the larger of two runs of this test (docs/performance.md), rounded up to 10;
#: two_point, measures, low_temperature, nonnormal and block lowered on 2026-12-01 (branch rerun2,
#: two runs at load average ~6 on 2 cores: 200/126, 63/100, 124/145, 97/142, 72/104 ms)
BUDGET_MS = {
    "home": 70, "glossary": 50,             # no slider: a same-state rerun
    "two_point": 400, "hemisphere": 300, "measures": 200, "low_temperature": 290,
    "gaussian_width": 350, "width": 260, "nonnormal": 290, "depth_sum": 930,
    "coordinates": 120, "rotation": 110, "block": 210,
}


@pytest.fixture(autouse=True)
def _one_script_cache(monkeypatch):
    """AppTest compiles app.py afresh on every run (a new ScriptCache per run); a server compiles it
    once. Share one cache, so that the measurement is the server's work, not AppTest's."""
    import streamlit.testing.v1.app_test as app_test_mod
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache

    cache = ScriptCache()
    monkeypatch.setattr(app_test_mod, "ScriptCache", lambda: cache)


def _first_slider(stem: str):
    from bench.classroom import _grid
    from ui import spec

    res = spec.resolve(importlib.import_module(f"pages.{stem}").SCHEMA)
    p = next((p for p in res.params.values() if p.kind in ("float", "int")), None)
    # values off the usual presets and test values: far into the golden-ratio grid of bench/classroom.py
    return (p.name, _grid(p, 40)[-2:]) if p is not None else (None, [None, None])


def distinct_rerun_ms(stem: str) -> float:
    """CPU ms (process_time) of the cheaper of two reruns, each after moving the first slider to a new value."""
    at = app_test(stem, {"lang": "en"})
    assert not at.exception
    name, values = _first_slider(stem)
    out = []
    for v in values:
        if name is not None:
            at.slider(key=name).set_value(v)
        c0 = time.process_time()
        at.run()
        out.append(1e3 * (time.process_time() - c0))
        assert not at.exception, (stem, name, v, [e.value for e in at.exception])
        if name is not None:
            assert at.slider(key=name).value == v
    return min(out)


def test_every_page_has_a_budget():
    assert set(BUDGET_MS) == set(STEMS)


@pytest.mark.parametrize("stem", STEMS)
def test_distinct_rerun_cpu_within_budget(stem):
    ms = distinct_rerun_ms(stem)
    print(f"\n{stem}: {ms:.0f} ms CPU per distinct rerun (budget {BUDGET_MS[stem]} ms)")
    assert ms <= BUDGET_MS[stem], f"{stem}: {ms:.0f} ms of CPU per distinct rerun > budget {BUDGET_MS[stem]} ms"
