"""Full page runs take turns: at most ``slots()`` run at once in this server process, first come
first served; the others wait at the top of ``app.py`` before doing anything.

Why: a page run is pure Python under one interpreter lock. When a class's teacher pushes a view,
30 students' sessions start the same page within a second. Without a limit the 30 threads share
the lock in 5 ms slices, so every one of them finishes near the end of the whole wave
(``processor sharing``: the median student waits as long as the last). Taking turns, the k-th
student is served after about k runs, so the median halves and the last is no later. The same
holds for any burst (50 students moving sliders at once).

While a session's full run is in progress its id is in a set (:func:`in_full_run`), and the page
that run ran is kept (:func:`page_of`): the server drops the timed fragment reruns (``run_every``)
that the browser asks for meanwhile, and those asked for from a page the session has left
(``ui.serve``).

What does not take a turn: fragment reruns (the class poll, the class box's buttons: they never
run ``app.py``), and a run while it waits for a shared heavy job (``ui.jobs.heavy`` gives its turn
back with :func:`released` while it only shows progress).

``APP_RUN_SLOTS`` sets the number (default: the number of CPU cores; at least 1). A run that has
waited ``MAX_WAIT_S`` runs anyway: an overloaded server degrades to sharing, it never stalls.
"""
from __future__ import annotations

import collections
import contextlib
import os
import threading
import time

SLOTS_ENV = "APP_RUN_SLOTS"
MAX_WAIT_S = 30.0
_HELD = threading.local()


def slots(environ=os.environ) -> int:
    """How many full runs may execute at once (``APP_RUN_SLOTS``, else the CPU count)."""
    raw = str(environ.get(SLOTS_ENV, "")).strip()
    try:
        n = int(raw) if raw else (os.cpu_count() or 1)
    except ValueError:
        n = os.cpu_count() or 1
    return max(1, min(n, 64))


_sem = threading.Semaphore(slots())
#: sessions whose full run is in progress (between the start and the end of :func:`turn`)
_FULL: set = set()
#: session -> the page (script hash) its latest full run ran: what the browser shows now
_PAGE: "collections.OrderedDict[str, str]" = collections.OrderedDict()
_MAX_SESSIONS = 4096
#: counters for tests and the latency scripts: runs admitted, runs that waited, total wait seconds
stats = {"runs": 0, "waited": 0, "wait_s": 0.0, "timeouts": 0}


@contextlib.contextmanager
def turn():
    """Hold one run slot for the body (re-entrant per thread: a nested call holds nothing more)."""
    if getattr(_HELD, "on", False):
        yield
        return
    t0 = time.perf_counter()
    got = _sem.acquire(blocking=False)
    if not got:
        got = _sem.acquire(timeout=MAX_WAIT_S)
        stats["waited"] += 1
        if not got:
            stats["timeouts"] += 1
    stats["runs"] += 1
    stats["wait_s"] += time.perf_counter() - t0
    _HELD.on = got
    ctx = _run_ctx()
    sid = getattr(ctx, "session_id", None)
    if sid is not None:
        _FULL.add(sid)
    try:
        yield
    finally:
        if sid is not None:
            _FULL.discard(sid)
            page = _page_hash(ctx)
            if page:
                _PAGE[sid] = page
                _PAGE.move_to_end(sid)
                while len(_PAGE) > _MAX_SESSIONS:
                    _PAGE.popitem(last=False)
        if getattr(_HELD, "on", False):  # still held (released() may have failed to take it back)
            _HELD.on = False
            _sem.release()


def _run_ctx():
    """This thread's Streamlit run context, or None (no Streamlit, outside a run)."""
    try:
        from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

        return get_script_run_ctx()
    except Exception:  # noqa: BLE001 - no Streamlit
        return None


def session_id() -> str | None:
    """The id of the session whose run this thread executes, or None."""
    return getattr(_run_ctx(), "session_id", None)


def _page_hash(ctx) -> str | None:
    try:
        return ctx.page_script_hash if ctx is not None else None
    except Exception:  # noqa: BLE001 - no page yet
        return None


def page_of(session_id: str) -> str | None:
    """The page (script hash) that ``session_id``'s latest full run ran, if any (``ui.serve``:
    a fragment rerun asked for from another page is stale, see there)."""
    return _PAGE.get(session_id)


def in_full_run(session_id: str) -> bool:
    """True while a full run of ``session_id`` is in progress (``ui.serve``: a timed fragment
    rerun asked for meanwhile is dropped, see there)."""
    return session_id in _FULL


@contextlib.contextmanager
def released():
    """Inside :func:`turn`: give the slot back for the body (a wait that uses no CPU), take a new
    turn after it. Outside a turn: nothing."""
    if not getattr(_HELD, "on", False):
        yield
        return
    _HELD.on = False
    _sem.release()
    try:
        yield
    finally:
        got = _sem.acquire(timeout=MAX_WAIT_S)
        _HELD.on = got
        if not got:
            stats["timeouts"] += 1
