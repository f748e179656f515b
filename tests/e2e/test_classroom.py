"""A small classroom (10 sessions at once) over the websocket protocol: zero errors.

The benchmark with N = 50, p95 and memory targets is ``bench/classroom.py``; this test reuses
its code against the e2e server and asserts only what must never happen: an exception, an error
message, a dropped session or a page that never finishes. The ten sessions move each page's first
slider to three values between them (session ``i`` to value ``i % 3``): distinct simulations run at
once on the server's threads beside identical requests that share one (ten distinct values cost this
test ~100 s of a loaded CI run; concurrency and sharing are what it checks, the per-session cost at
N = 50 is the benchmark's). The table goes to ``artifacts/classroom_n10.txt``.
"""

from __future__ import annotations

from bench.classroom import run_classroom
from harness.plans import plans
from harness.browser import WAIT_MS
from tests.e2e.conftest import ROOT, run_async
from ui.kit.nav import PAGES

STEMS = [e.stem for e in PAGES]

N = 10
DISTINCT = 3


def test_ten_sessions_every_page_zero_errors(server_proc):
    res = run_async(run_classroom, server_proc.url, N, server_proc.pid, timeout=WAIT_MS / 1000, distinct=DISTINCT)
    out = ROOT / "artifacts"
    out.mkdir(exist_ok=True)
    (out / "classroom_n10.txt").write_text(res.table() + "\n")
    print(res.table())
    assert not res.dropped, res.dropped[:5]
    assert not res.exceptions, res.exceptions[:5]
    assert not res.error_alerts, res.error_alerts[:5]
    per_session = sum(3 if p.slider else 2 for p in plans(N, distinct=DISTINCT))  # defaults, slider, link
    assert res.stems == STEMS
    for s in res.sessions:  # every session ran every page, each run finished cleanly
        runs = [x for x in s.samples if x.stem in STEMS]
        assert len(runs) == per_session, (s.index, len(runs), per_session)
        assert all(x.ok for x in runs), [x for x in runs if not x.ok][:3]
