"""Heavy work is shared and bounded (``ui/server/jobs.py``): identical requests run once (also
while running), at most ``workers`` jobs run at a time with the rest queued in order, one queued job
per session, and the hemisphere page's phase diagram goes through it."""

from __future__ import annotations

import threading
import time

import pytest

from tests.conftest import app_test, charts
from ui.server import jobs


def _blocking(gate: threading.Event, log: list, value):
    def fn(progress):
        log.append(("start", value))
        progress(0.5)
        assert gate.wait(20)
        log.append(("end", value))
        return value

    return fn


def _wait(cond, timeout=120.0):  # a hang guard: threads start in ms, later on a loaded machine
    t0 = time.monotonic()
    while not cond():
        assert time.monotonic() - t0 < timeout, "timed out"
        time.sleep(0.01)


def test_identical_requests_share_one_run_also_while_running():
    p = jobs.JobPool(n_workers=1, nice=0)
    gate, log = threading.Event(), []
    a = p.submit("diagram", _blocking(gate, log, 42), session="s1")
    _wait(lambda: a.state == "running")
    assert a.progress == 0.5
    b = p.submit("diagram", _blocking(gate, log, 99), session="s2")  # while the first runs
    assert b is a and a.sessions == {"s1", "s2"}
    gate.set()
    assert a.done.wait(20) and a.result == 42
    c = p.submit("diagram", _blocking(gate, log, 7), session="s3")  # after: the kept result
    assert c is a and c.result == 42
    assert p.runs == 1 and [e for e in log if e[0] == "start"] == [("start", 42)]


def test_server_wide_limit_and_queue_positions():
    p = jobs.JobPool(n_workers=2, nice=0)
    gate, lock = threading.Event(), threading.Lock()
    running, peak = [0], [0]

    def fn_for(v):
        def fn(progress):
            with lock:
                running[0] += 1
                peak[0] = max(peak[0], running[0])
            gate.wait(20)
            with lock:
                running[0] -= 1
            return v

        return fn

    js = [p.submit(("d", i), fn_for(i), session=f"s{i}") for i in range(5)]
    _wait(lambda: sum(j.state == "running" for j in js) == 2)
    time.sleep(0.1)
    assert [p.position(j) for j in js] == [0, 0, 1, 2, 3]
    assert p.status()["queued"] == 3 and p.status()["running"] == 2
    gate.set()
    for j in js:
        assert j.done.wait(20)
    assert [j.result for j in js] == list(range(5))
    assert peak[0] == 2  # never more than the limit at once
    assert [j.seq for j in sorted(js, key=lambda j: j.started)] == [j.seq for j in js]  # first come first


def test_one_queued_job_per_session():
    p = jobs.JobPool(n_workers=1, nice=0)
    gate, log = threading.Event(), []
    a = p.submit("large", _blocking(gate, log, 1), session="s1")
    with pytest.raises(jobs.Busy) as exc:
        p.submit("medium", _blocking(gate, log, 2), session="s1")
    assert exc.value.job is a
    assert p.submit("large", _blocking(gate, log, 3), session="s1") is a  # asking again is fine
    other = p.submit("medium", _blocking(gate, log, 4), session="s2")  # another student queues
    assert p.submit("medium", _blocking(gate, log, 5), session="s1") is other  # attaching is free
    gate.set()
    assert a.done.wait(20) and other.done.wait(20)
    d = p.submit("small", _blocking(gate, log, 6), session="s1")  # free again once done
    assert d.done.wait(20) and d.result == 6


def test_attaching_to_anothers_job_does_not_use_up_the_session():
    p = jobs.JobPool(n_workers=1, nice=0)
    gate, log = threading.Event(), []
    a = p.submit("large", _blocking(gate, log, 1), session="s1")
    _wait(lambda: a.state == "running")
    assert p.submit("large", _blocking(gate, log, 1), session="s2") is a
    b = p.submit("small", _blocking(gate, log, 2), session="s2")  # s2's own job
    assert b is not a and p.position(b) == 1
    gate.set()
    assert b.done.wait(20) and b.result == 2


def test_a_failed_job_is_reported_and_not_kept():
    p = jobs.JobPool(n_workers=1, nice=0)

    def bad(progress):
        raise ValueError("beta must be finite")

    j = p.submit("x", bad, session="s1")
    assert j.done.wait(20) and isinstance(j.error, ValueError) and j.state == "failed"
    assert p.find("x") is None
    ok = p.submit("y", lambda progress: 5, session="s1")  # the session is free
    assert ok.done.wait(20) and ok.result == 5


def test_finished_results_are_bounded():
    p = jobs.JobPool(n_workers=1, keep=3, nice=0)
    for i in range(6):
        assert p.submit(i, lambda progress, i=i: i).done.wait(20)
    assert p.status()["kept"] == 3 and p.find(0) is None and p.find(5).result == 5


def test_workers_at_most_one_per_core(monkeypatch):
    monkeypatch.setattr(jobs, "cores", lambda: 4)
    assert jobs.workers({}) == 3
    assert jobs.workers({"APP_HEAVY_JOBS": "2"}) == 2
    assert jobs.workers({"APP_HEAVY_JOBS": "64"}) == 4
    assert jobs.workers({"APP_HEAVY_JOBS": "0"}) == 1
    assert jobs.workers({"APP_HEAVY_JOBS": "many"}) == 3
    monkeypatch.setattr(jobs, "cores", lambda: 1)
    assert jobs.workers({}) == 1


def _fresh_pools(monkeypatch):
    """Fresh pools for a page test, at normal CPU priority: on a shared, overloaded test machine a
    niced worker can wait minutes for a core (production runs them niced, see ui.server.jobs.NICE)."""
    monkeypatch.setattr(jobs, "_POOLS", {lane: jobs.JobPool(n(), nice=0) for lane, n in jobs.LANES.items()})


def test_phase_diagram_button_runs_once_for_two_sessions(monkeypatch):
    """Two students click the same phase diagram: one computation (through the server-wide pool),
    both see the figures; on main every click recomputed in the session's own thread."""
    from sim import hemisphere as hs

    real, runs = hs.phase_diagram, []

    def counted(B, n_betas, progress=None, **kw):
        runs.append((B, n_betas))
        return real(B=4, n_betas=3, n_times=5, progress=progress)

    monkeypatch.setattr(hs, "phase_diagram", counted)
    _fresh_pools(monkeypatch)
    shown = []
    for _ in range(2):
        at = app_test("hemisphere", {"lang": "en", "phase_size": "small"})
        assert not at.exception
        before = len(charts(at))
        at.button(key="_hemi_phase_btn").click().run()
        assert not at.exception, [e.message for e in at.exception]
        shown.append(len(charts(at)) - before)
    assert shown == [2, 2]  # both sessions see both heatmaps
    assert runs == [(32, 18)]  # ... from one run
    assert jobs.pool("panel").status()["runs"] == 1


def test_depth_sum_sweep_button_goes_through_the_pool(monkeypatch):
    """The other button-triggered heavy panel: the residual-network sweep is one shared job."""
    import ui.kit.page

    _fresh_pools(monkeypatch)
    # AppTest marks the app as a legacy multipage app on every run, and ui.kit.page answers with an extra
    # rerun that swallows a plain button's click; the served app (ui.server.serve) never has that flag
    monkeypatch.setattr(ui.kit.page, "leave_mpa_v1", lambda: None)
    q = {"lang": "en", "trials": "1000"}
    counts = []
    for _ in range(2):
        at = app_test("depth_sum", q)
        assert not at.exception
        before = len(charts(at))
        at.button(key="_ds_sweep_btn").click().run()
        assert not at.exception, [e.message for e in at.exception]
        counts.append(len(charts(at)) - before)
    assert counts == [2, 2]  # sweep over L and over N, both sessions
    assert jobs.pool("panel").status()["runs"] == 1


def test_large_cold_hemisphere_load_runs_in_the_load_lane(monkeypatch):
    """A cold hemisphere load above the page's work threshold runs once, in the 'load' lane (one per
    core), and the page shows the same numbers as a direct computation; small views do not queue."""
    import pages.hemisphere.page as hp_page

    _fresh_pools(monkeypatch)
    at = app_test("hemisphere", {"lang": "en"})  # defaults: far below the threshold
    assert not at.exception
    assert jobs.pool("load").status()["runs"] == 0
    q = {"lang": "en", "n": "400", "seed": "11"}
    at = app_test("hemisphere", q)
    assert not at.exception, [e.message for e in at.exception]
    assert jobs.pool("load").status()["runs"] == 1
    v = {p.name: p.default for p in hp_page.SCHEMA.params}
    h = hp_page.hemi_data(400, v["d"], v["beta"], v["horizon"], v["dt"], v["cap"], v["A"], v["A_seed"], 11)
    shown = [m.value for m in at.metric]
    from ui.kit.numbers import fmt

    assert fmt(h["rmin"][0], 4) in shown and fmt(h["diam"][-1], 3) in shown  # as the page writes them
    at2 = app_test("hemisphere", q)  # another session: shared, no rerun
    assert not at2.exception and jobs.pool("load").status()["runs"] == 1
