"""ui/server/runs.py: full page runs take turns (at most ``slots()`` at once, first come first served)."""

from __future__ import annotations

import threading
import time

import pytest

from ui.server import runs


@pytest.fixture
def fresh(monkeypatch):
    """A private semaphore of 1 slot and zeroed counters for one test."""
    monkeypatch.setattr(runs, "_sem", threading.Semaphore(1))
    monkeypatch.setattr(runs, "stats", {"runs": 0, "waited": 0, "wait_s": 0.0, "timeouts": 0})
    return runs


@pytest.mark.parametrize("raw, expect", [("3", 3), (" 1 ", 1), ("0", 1), ("-4", 1), ("999", 64)])
def test_slots_from_the_environment(raw, expect):
    assert runs.slots({runs.SLOTS_ENV: raw}) == expect


@pytest.mark.parametrize("raw", ["", "two", "1.5", "nan"])
def test_slots_default_is_the_core_count(raw):
    import os

    assert runs.slots({runs.SLOTS_ENV: raw}) == max(1, min(os.cpu_count() or 1, 64))


def test_turns_are_first_come_first_served(fresh):
    """One slot, a holder and 6 runs arriving one after the other: they run in arrival order, one
    at a time (never two inside at once)."""
    order, inside, most = [], [0], [0]
    lock = threading.Lock()
    gate = threading.Event()

    def run(i):
        with fresh.turn():
            with lock:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
            if i == -1:
                gate.wait(5)
            time.sleep(0.01)
            order.append(i)
            with lock:
                inside[0] -= 1

    holder = threading.Thread(target=run, args=(-1,))
    holder.start()
    time.sleep(0.05)
    threads = []
    for i in range(6):
        th = threading.Thread(target=run, args=(i,))
        th.start()
        threads.append(th)
        time.sleep(0.03)  # arrival order is 0, 1, 2, ...
    gate.set()
    for th in [holder, *threads]:
        th.join(10)
    assert order == [-1, 0, 1, 2, 3, 4, 5]
    assert most[0] == 1
    assert fresh.stats["runs"] == 7 and fresh.stats["waited"] == 6


def test_released_lets_another_run_in_and_takes_a_turn_back(fresh):
    """A run that only waits (a heavy job's progress bar) gives its slot away meanwhile."""
    got_in = threading.Event()
    back = threading.Event()

    def other():
        with fresh.turn():
            got_in.set()
            time.sleep(0.05)

    with fresh.turn():
        th = threading.Thread(target=other)
        th.start()
        assert not got_in.wait(0.2), "the slot is held"
        with fresh.released():
            assert got_in.wait(2), "released: the other run goes in"
            th.join(5)
        back.set()
        # holding again: a third run has to wait
        third_in = threading.Event()
        t3 = threading.Thread(target=lambda: (fresh.turn().__enter__(), third_in.set()))
        t3.daemon = True
        t3.start()
        assert not third_in.wait(0.2)
    assert third_in.wait(2)  # our turn ended: the third gets in


def test_nested_turn_holds_nothing_more_and_released_outside_a_turn_is_a_no_op(fresh):
    with fresh.released():
        pass
    with fresh.turn():
        with fresh.turn():
            pass
        assert not fresh._sem.acquire(blocking=False), "still held by the outer turn"
    assert fresh._sem.acquire(blocking=False), "given back once"
    fresh._sem.release()


def test_a_run_that_waited_too_long_runs_anyway(fresh, monkeypatch):
    """Overload degrades to sharing, never a stall: after MAX_WAIT_S the run goes in without a slot,
    and giving nothing back leaves the slot count right."""
    monkeypatch.setattr(fresh, "MAX_WAIT_S", 0.1)
    ran = []
    with fresh.turn():
        th = threading.Thread(target=lambda: fresh.turn().__enter__() or ran.append(1))
        th.start()
        th.join(5)
        assert ran == [1] and fresh.stats["timeouts"] == 1
    assert fresh._sem.acquire(blocking=False)
    assert not fresh._sem.acquire(blocking=False), "exactly one slot, as before"
    fresh._sem.release()


def test_heavy_job_wait_gives_the_turn_away(fresh):
    """ui.server.jobs.heavy waits for a shared job inside ``released()``: a page run that waits for a long
    computation does not keep other students' runs out."""
    import inspect

    from ui.server import jobs

    src = inspect.getsource(jobs.heavy)
    assert "with released():" in src and "_wait_drawing(" in src
    assert "done.wait" in inspect.getsource(jobs._wait_drawing)


def test_app_runs_inside_a_turn():
    """app.py takes a turn around everything it draws (one full run = one turn), after waiting for
    a burst's newest value (``runs.settled``, outside the turn: a wait holds no slot)."""
    import ast

    from ui.kit.spec import ROOT

    tree = ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))
    withs = [n for n in tree.body if isinstance(n, ast.With)]
    assert len(withs) == 1
    assert [ast.unparse(i.context_expr) for i in withs[0].items] == ["runs.settled()", "runs.turn()"]
    calls = {ast.unparse(n.func) for n in ast.walk(withs[0]) if isinstance(n, ast.Call)}
    assert {"page.run", "st.set_page_config", "language_selector"} <= calls


# --------------------------------------------------------------------------- bursts
class _States:
    """A stand-in for Streamlit's WidgetStates proto: only its serialisation is read."""

    def __init__(self, blob: bytes):
        self.blob = blob

    def SerializeToString(self, deterministic=False):  # noqa: N802 - the proto's name
        return self.blob


class _Rerun:
    def __init__(self, states=None, page="p1", fragments=()):
        self.widget_states = states
        self.page_script_hash = page
        self.fragment_id_queue = list(fragments)


class _Stop(Exception):
    """Stands for Streamlit's StopException (what a run's yield check raises when stopped)."""


_Stop.__name__ = "StopException"


class _Ctx:
    def __init__(self, sid="s1"):
        self.session_id = sid
        self.stop_after = None  # the yield check raises once the clock passes this
        self.clock = None

    def yield_check(self):
        if self.stop_after is not None and self.clock() >= self.stop_after:
            raise _Stop()


class _Clock:
    def __init__(self):
        self.t = 100.0
        self.slept = 0.0

    def __call__(self):
        return self.t

    def sleep(self, s):
        self.t += s
        self.slept += s


@pytest.fixture
def burst(monkeypatch):
    """A fake run context and clock; no session history."""
    ctx, clock = _Ctx(), _Clock()
    ctx.clock = clock
    monkeypatch.setattr(runs, "_run_ctx", lambda: ctx)
    monkeypatch.setattr(runs, "_LAST", __import__("collections").OrderedDict())
    monkeypatch.setattr(runs, "burst_stats", {"waited": 0, "superseded": 0})
    monkeypatch.setattr(runs, "page_of", lambda sid: "p1")
    import ui.kit.chart

    drawn = {"bytes": runs.BURST_DRAWN_BYTES}  # what each run's figures weigh: a heavy page
    monkeypatch.setattr(ui.kit.chart, "take_sent_bytes", lambda: drawn["bytes"])
    ctx.drawn = drawn
    return ctx, clock


def _run(clock, states, *, page="p1", body_s=0.05, sid="s1"):
    """One full run asked for with ``states``: returns (ran the body, seconds waited before it)."""
    runs.note_origin(_Rerun(states, page), sid)
    t0, ran = clock.t, []
    with runs.settled(clock=clock, sleep=clock.sleep):
        ran.append(clock.t - t0)
        clock.t += body_s
    return ran[0]


def test_note_origin_only_browser_runs_on_the_page_shown(burst):
    runs.note_origin(_Rerun(_States(b"a")), "s1")
    assert runs._ORIGIN.values == hash(b"a")
    for rd in (_Rerun(None), _Rerun(_States(b"a"), fragments=["f"]), _Rerun(_States(b"a"), page="other")):
        runs.note_origin(rd, "s1")
        assert runs._ORIGIN.values is None


def test_single_steps_never_wait(burst):
    """A student's steps one at a time (the next asked for after the page is drawn: >= 0.25 s
    after the run ended), the first visit and reruns at the same values run at once."""
    ctx, clock = burst
    assert _run(clock, _States(b"v0")) == 0.0  # first visit
    for i in range(1, 6):
        clock.t += runs.BURST_GAP_S + 0.05  # the browser drew the run, then the next step
        assert _run(clock, _States(b"v%d" % i)) == 0.0
    assert _run(clock, _States(b"v5")) == 0.0  # same values right away: no burst
    runs.note_origin(_Rerun(None), "s1")  # st.rerun right away: not from the browser
    with runs.settled(clock=clock, sleep=clock.sleep):
        pass
    assert clock.slept == 0.0 and runs.burst_stats["waited"] == 0


def test_a_held_key_waits_for_its_newest_value(burst):
    """New values right after each other on a heavy page: the first runs at once, the next waits
    for a newer one (as long as the browser's pace says); a value that comes late but while the
    burst goes on still waits; a value long after the burst is a single step again."""
    ctx, clock = burst
    assert _run(clock, _States(b"v0")) == 0.0
    clock.t += 0.03  # the next key, before the browser drew v0
    assert _run(clock, _States(b"v1")) == pytest.approx(1.5 * (0.05 + 0.03))  # since v0 started
    clock.t += runs.BURST_KEEP_S - 0.05  # a late key (the browser was busy drawing)
    assert _run(clock, _States(b"v2")) == pytest.approx(runs.SETTLE_S)  # waits longer
    clock.t += runs.BURST_KEEP_S + 0.05  # the key was let go long ago
    assert _run(clock, _States(b"v3")) == 0.0
    assert runs.burst_stats == {"waited": 2, "superseded": 0}


def test_the_wait_follows_the_browsers_pace(burst):
    """1.5 times the gap between the last two values, within [SETTLE_MIN_S, SETTLE_S]."""
    last = runs._Last(1, True, started=10.0)
    assert runs.settle_s(last, 10.03) == runs.SETTLE_MIN_S
    assert runs.settle_s(last, 10.1) == pytest.approx(0.15)
    assert runs.settle_s(last, 10.4) == runs.SETTLE_S


def test_light_pages_never_wait(burst):
    """A page whose runs send few bytes of figures: the browser draws every value of a held key
    in time, a wait would only delay the last one."""
    ctx, clock = burst
    ctx.drawn["bytes"] = runs.BURST_DRAWN_BYTES - 1
    assert _run(clock, _States(b"v0")) == 0.0
    for i in range(1, 6):
        clock.t += 0.03
        assert _run(clock, _States(b"v%d" % i)) == 0.0
    assert runs.burst_stats["waited"] == 0


def test_a_newer_value_stops_the_waiting_run_before_it_computes(burst):
    """While a run of the burst waits, a newer request stops it (Streamlit's yield check raises):
    its body (the page) never runs, and the next value still counts as part of the burst."""
    ctx, clock = burst
    _run(clock, _States(b"v0"))
    clock.t += 0.01
    ctx.stop_after = clock.t + 0.05  # the next key comes 50 ms into the wait
    with pytest.raises(_Stop):
        _run(clock, _States(b"v1"))
    assert runs.burst_stats == {"waited": 1, "superseded": 1}
    assert clock.slept == pytest.approx(0.05)
    ctx.stop_after = None
    assert _run(clock, _States(b"v2")) == pytest.approx(runs.SETTLE_MIN_S)


def test_a_run_still_going_makes_the_next_one_wait(burst):
    """Fast reruns: Streamlit starts the new run while the old one is being stopped. The old one's
    end, recorded after the new one started, does not overwrite the newer run's record."""
    ctx, clock = burst
    _run(clock, _States(b"start"))  # the page as it was drawn
    clock.t += 1.0
    runs.note_origin(_Rerun(_States(b"v0")), "s1")
    old = runs.settled(clock=clock, sleep=clock.sleep)
    old.__enter__()  # v0 is running ...
    clock.t += 0.02
    assert _run(clock, _States(b"v1")) == pytest.approx(runs.SETTLE_MIN_S)  # ... when v1 comes
    mine = runs._LAST["s1"]
    old.__exit__(None, None, None)  # v0 ends late
    assert runs._LAST["s1"] is mine and mine.values == hash(b"v1")


def test_sessions_do_not_share_bursts(burst):
    ctx, clock = burst
    _run(clock, _States(b"a"), sid="s1")
    ctx.session_id = "s2"
    clock.t += 0.01
    assert _run(clock, _States(b"b"), sid="s2") == 0.0  # another student's first step
