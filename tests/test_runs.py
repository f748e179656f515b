"""ui/runs.py: full page runs take turns (at most ``slots()`` at once, first come first served)."""
from __future__ import annotations

import threading
import time

import pytest

from ui import runs


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
    """ui.jobs.heavy waits for a shared job inside ``released()``: a page run that waits for a long
    computation does not keep other students' runs out."""
    import inspect

    from ui import jobs

    src = inspect.getsource(jobs.heavy)
    assert "with released():" in src and "_wait_drawing(" in src
    assert "done.wait" in inspect.getsource(jobs._wait_drawing)


def test_app_runs_inside_a_turn():
    """app.py takes a turn around everything it draws (one full run = one turn)."""
    import ast

    from ui.spec import ROOT

    tree = ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))
    withs = [n for n in tree.body if isinstance(n, ast.With)]
    assert len(withs) == 1 and ast.unparse(withs[0].items[0].context_expr) == "runs.turn()"
    calls = {ast.unparse(n.func) for n in ast.walk(withs[0]) if isinstance(n, ast.Call)}
    assert {"page.run", "st.set_page_config", "language_selector"} <= calls
