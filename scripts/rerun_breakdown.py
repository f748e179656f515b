"""Where a distinct rerun's CPU goes, per page (in-process, AppTest): the page's simulation, its figures, the rest.

    .venv/bin/python scripts/rerun_breakdown.py                 # every page
    .venv/bin/python scripts/rerun_breakdown.py nonnormal rotation

For each page: opens it at its defaults, then moves its first slider to 5 new values (the grid of
``bench/classroom.py``) and, for the last 4 moves, reads the CPU time of the page script's thread
(``time.thread_time``) split into: ``data`` (misses of ``@cached`` functions: the simulation at the
new value), ``figfn`` (misses of ``@cached_figure`` builders, without the data they call),
``freeze`` (``ui.kit.figures.freeze``), ``rest`` (widgets, text, metrics, charts sent, cache look-ups);
medians of the 4 moves, each column separately. ``process`` is ``time.process_time`` of the whole
rerun (all threads: Numba's too, and AppTest's own bookkeeping). ``data_all_threads``: the
process CPU (``time.process_time``) during the ``data`` misses, so it includes work a simulation
hands to other threads (Numba ``parallel`` kernels, thread pools, BLAS threads, spinning ones
too), which ``data`` (the script thread only) does not see. A developer tool, not a test;
``tests/test_rerun_cpu.py`` guards the totals and ``scripts/rerun_cpu.py`` measures a real server."""

import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.chdir(ROOT)

import streamlit.logger  # noqa: E402

streamlit.logger.set_log_level("error")
import streamlit.testing.v1.app_test as AT  # noqa: E402
from streamlit.navigation.page import StreamlitPage  # noqa: E402
from streamlit.runtime.caching import cache_utils  # noqa: E402
from streamlit.runtime.scriptrunner.script_cache import ScriptCache  # noqa: E402

_sc = ScriptCache()
AT.ScriptCache = lambda: _sc  # compile app.py once, as a server does (AppTest recompiles every run)

from harness.plans import plans  # noqa: E402
import ui.kit.figures as F  # noqa: E402
from harness.apptest import STEMS, app_test  # noqa: E402

acc = {"run": 0.0, "data": 0.0, "fig": 0.0, "freeze": 0.0, "data_p": 0.0}
stack: list = []


def timed(kind, f):
    def w(*a, **k):
        t0, p0 = time.thread_time(), time.process_time()
        stack.append([kind, 0.0, 0.0])
        try:
            return f(*a, **k)
        finally:
            _, child, child_p = stack.pop()
            dt, dp = time.thread_time() - t0, time.process_time() - p0
            acc[kind] += dt - child
            if kind == "data":
                acc["data_p"] += dp - child_p
            if stack:
                stack[-1][1] += dt
                stack[-1][2] += dp

    return w


_orig_run = StreamlitPage.run


def _run(self):
    t0 = time.thread_time()
    try:
        return _orig_run(self)
    finally:
        acc["run"] += time.thread_time() - t0


_orig_miss = cache_utils.CachedFunc._handle_cache_miss


def _miss(self, *a, **k):
    kind = "fig" if "<frozen>" in getattr(self._info.func, "__qualname__", "") else "data"
    return timed(kind, lambda: _orig_miss(self, *a, **k))()


def main() -> None:
    StreamlitPage.run = _run
    cache_utils.CachedFunc._handle_cache_miss = _miss
    F.freeze = timed("freeze", F.freeze)
    stems = sys.argv[1:] or STEMS
    moves = 4
    pl = {p.stem: p for p in plans(20, stems)}
    for stem in stems:
        at = app_test(stem, {"lang": "en"})
        at.run()
        pp = pl[stem]
        res = []
        vals = pp.slider_values[: moves + 1] if pp.slider else [None] * (moves + 1)
        for i, v in enumerate(vals):
            if v is not None:
                at.slider(key=pp.slider).set_value(v)
            for k in acc:
                acc[k] = 0.0
            c0 = time.process_time()
            at.run()
            tot = time.process_time() - c0
            if i:
                res.append((acc["run"], acc["data"], acc["fig"], acc["freeze"], tot, acc["data_p"]))
            assert not at.exception, at.exception
        med = [statistics.median(x[j] for x in res) * 1e3 for j in range(6)]
        print(
            f"{stem:<16} {str(pp.slider):<8} script {med[0]:6.0f}  data {med[1]:6.0f}  figfn {med[2]:6.0f}  "
            f"freeze {med[3]:6.0f}  rest {med[0] - med[1] - med[2] - med[3]:6.0f}  process {med[4]:6.0f}  "
            f"data_all_threads {med[5]:6.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
