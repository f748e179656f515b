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
(``ui.server.serve``).

What does not take a turn: fragment reruns (the class poll, the class box's buttons: they never
run ``app.py``), and a run while it waits for a shared heavy job (``ui.server.jobs.heavy`` gives its turn
back with :func:`released` while it only shows progress).

``APP_RUN_SLOTS`` sets the number (default: the number of CPU cores; at least 1). A run that has
waited ``MAX_WAIT_S`` runs anyway: an overloaded server degrades to sharing, it never stalls.

Bursts (:func:`settled`, around every full run in ``app.py``): a held arrow key or a dragged
slider sends a new value every 30-80 ms, or as fast as the browser gets to it between drawing
runs. A run at a new value often takes less than that on the server, so most values of a burst
ran to their end and were sent, and the browser drew each in turn (hemisphere: ten full pages of
~770 kB, about 0.3 s of the browser's main thread each: the page settled 2.1-2.3 s after the key
was let go). On a page whose runs send many bytes of figures (:data:`BURST_DRAWN_BYTES`), a run
with new values asked for before the browser can have drawn the previous run (or in a burst that
goes on) now first waits, up to :data:`SETTLE_S` and without holding a turn, for a newer value; a
newer one stops it there, before it has computed or sent anything. A single step (the browser asks
for the next one only after drawing the last), a first visit, a navigation, a rerun at the same
values, a run the server starts itself (``st.rerun``) and a fragment rerun never wait.
"""

from __future__ import annotations

import collections
import contextlib
import os
import threading
import time
from dataclasses import dataclass

from ui import streamlit_internals

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
_PAGE: collections.OrderedDict[str, str] = collections.OrderedDict()
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
                _remember(_PAGE, sid, page)
        if getattr(_HELD, "on", False):  # still held (released() may have failed to take it back)
            _HELD.on = False
            _sem.release()


# --------------------------------------------------------------------------- bursts
#: a run the browser asks for with new widget values while the session's previous run is still
#: going, or this soon (seconds) after it ended, starts a burst: the browser asked before it can
#: have drawn that run (a step taken after looking came 0.2-0.34 s after the run's end in
#: bench/latency.py, a test driver acting as soon as the page was drawn) ...
BURST_GAP_S = 0.15
#: ... and the burst goes on while each new value comes this soon after the previous run ended
#: (the browser, busy drawing, sends a held key's values late and unevenly: 30-300 ms apart)
BURST_KEEP_S = 0.5
#: ... and a run of the burst waits for a newer value, from its start, 1.5 times as long as the
#: browser took between its last two values (a key repeats every 30-80 ms; slower while the browser
#: is busy drawing), at least SETTLE_MIN_S and at most SETTLE_S, before computing
SETTLE_MIN_S = 0.08
SETTLE_S = 0.25
#: ... on a page whose runs send at least this many bytes of figures (the latest finished run's):
#: lighter runs the browser draws within a key repeat or two. At the defaults hemisphere sends
#: 438 kB (two 3-D scenes with their animation frames; held key 2.1-2.3 s without waiting), the
#: other pages 33-294 kB (held key 0.15-0.38 s without waiting: a wait would only add to it)
BURST_DRAWN_BYTES = 350_000
_ORIGIN = threading.local()


@dataclass
class _Last:
    """A session's latest full run."""

    values: int | None  # the widget values it was asked for with (None: not by the browser)
    burst: bool  # it was part of a burst
    started: float = 0.0  # when it started (``time.monotonic``)
    ended: float | None = None  # when it ended; None while it goes on
    drawn: int = 0  # bytes of figures the session's latest finished run sent


_LAST: collections.OrderedDict[str, _Last] = collections.OrderedDict()
_LAST_LOCK = threading.Lock()
#: counters for tests and benchmarks: runs that waited in a burst, and those a newer value ended
burst_stats = {"waited": 0, "superseded": 0}


def note_origin(rerun_data, session_id: str | None = None) -> None:
    """Called by ``ui.server.adapters`` as each script run starts (``ScriptRunner._run_script``, on the run's
    own thread): did the browser ask for it with widget values, on the page the session already
    shows, and which values? Read once by :func:`settled`."""
    states = getattr(rerun_data, "widget_states", None)
    page = getattr(rerun_data, "page_script_hash", "")
    same_page = not page or session_id is None or page_of(session_id) in (None, page)
    browser = states is not None and not getattr(rerun_data, "fragment_id_queue", None) and same_page
    _ORIGIN.values = hash(states.SerializeToString(deterministic=True)) if browser else None


def settle_s(last: _Last, now: float) -> float:
    """How long a run of a burst starting at ``now`` waits for a newer value, after the session's
    ``last`` run (see :data:`SETTLE_S`)."""
    return min(SETTLE_S, max(SETTLE_MIN_S, 1.5 * (now - last.started)))


def in_burst(last: _Last | None, values: int | None, now: float) -> bool:
    """Whether a run with widget ``values`` from the browser (``None``: not from the browser)
    starting at ``now`` is part of a burst, after the session's ``last`` run (see :func:`settled`)."""
    if values is None or last is None or last.values == values or last.drawn < BURST_DRAWN_BYTES:
        return False
    if last.ended is None:  # still going: Streamlit stops it for this one (fast reruns)
        return True
    return now - last.ended <= (BURST_KEEP_S if last.burst else BURST_GAP_S)


@contextlib.contextmanager
def settled(*, clock=time.monotonic, sleep=time.sleep):
    """The body is one full run of a page, entered once the newest value of a burst is known.

    A held key or a dragged slider sends values faster than the browser can draw the runs (see the
    module's docstring). A run is part of a burst when the browser asked for it with new widget
    values while the session's previous run was still going (Streamlit stops that one and starts
    this one at once), or at most :data:`BURST_GAP_S` after it ended, or at most
    :data:`BURST_KEEP_S` after a run of the same burst ended. Such a run first waits from its
    start, holding no turn, for a newer value (:func:`settle_s`: 1.5 times the browser's last gap
    between two values, :data:`SETTLE_MIN_S` to :data:`SETTLE_S`); a newer one stops it there
    (Streamlit's own stop, at this run's yield check), before it has computed or sent anything.
    A single step (the browser asks for the next one after drawing the last) starts no
    burst; nor does a rerun at the same values, one the server asks for itself (``st.rerun``), a
    navigation or a fragment rerun."""
    values = getattr(_ORIGIN, "values", None)
    _ORIGIN.values = None  # once per run
    ctx = _run_ctx()
    sid = getattr(ctx, "session_id", None)
    if sid is None:
        yield
        return
    t = clock()
    from ui.kit.chart import take_sent_bytes

    take_sent_bytes()  # this thread's count starts with this run
    with _LAST_LOCK:
        last = _LAST.get(sid)
        burst = in_burst(last, values, t)
        wait = settle_s(last, t) if burst else 0.0
        me = _Last(values, burst, started=t, drawn=last.drawn if last is not None else 0)
        _remember(_LAST, sid, me)
    try:
        if burst:
            burst_stats["waited"] += 1
            check = getattr(ctx, "yield_check", None) or (lambda: None)
            while True:
                check()  # a newer value is waiting: Streamlit stops this run here
                left = wait - (clock() - t)
                if left < 0.001:  # (not <= 0: a clock that a sleep of 1e-17 s does not move)
                    break
                sleep(min(0.01, left))
        yield
    except BaseException as exc:  # Streamlit's stop or rerun exception: a newer request ended it
        burst_stats["superseded"] += type(exc).__name__ in ("StopException", "RerunException")
        raise
    else:
        me.drawn = take_sent_bytes()  # finished: what the browser draws for a run of this page
    finally:
        with _LAST_LOCK:
            if _LAST.get(sid) is me:  # a newer run may have started meanwhile: it is the latest
                me.ended = clock()


def _remember(table: collections.OrderedDict, sid: str, value) -> None:
    """``table[sid] = value``, the newest last; the oldest sessions go beyond :data:`_MAX_SESSIONS`."""
    table[sid] = value
    table.move_to_end(sid)
    while len(table) > _MAX_SESSIONS:
        table.popitem(last=False)


def _run_ctx():
    """This thread's Streamlit run context, or None (no Streamlit, outside a run)."""
    return streamlit_internals.run_ctx()


def session_id() -> str | None:
    """The id of the session whose run this thread executes, or None."""
    return getattr(_run_ctx(), "session_id", None)


def _page_hash(ctx) -> str | None:
    return streamlit_internals.page_script_hash(ctx)


def page_of(session_id: str) -> str | None:
    """The page (script hash) that ``session_id``'s latest full run ran, if any (``ui.server.adapters``:
    a fragment rerun asked for from another page is stale, see there)."""
    return _PAGE.get(session_id)


def in_full_run(session_id: str) -> bool:
    """True while a full run of ``session_id`` is in progress (``ui.server.adapters``: a timed fragment
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
