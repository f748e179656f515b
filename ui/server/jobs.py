"""Heavy work, shared and bounded: one server-wide queue for the expensive panels.

Without it any visitor could make the server slow for the whole class: every click on a heavy
button (the hemisphere phase diagram) recomputed in that session's own thread, nothing was
shared between sessions, and ten clicks meant ten computations fighting over two cores.

Rules:

- **Identical requests are computed once and shared**: a job is named by a key (the panel and its
  parameters). A second session asking for the same key attaches to the job already queued or
  running and waits for that run; a finished result is kept (the last :data:`KEEP` results) and
  handed out at once.
- **A server-wide limit**: at most :func:`workers` jobs run at the same time (one per core at most;
  by default one core is left to the interactive reruns of the class: ``cores - 1``, at least 1;
  ``APP_HEAVY_JOBS`` overrides it, capped at the number of cores). Each job runs its Numba kernels
  on one thread, at a lower CPU priority (``nice`` +:data:`NICE`), so the slider reruns of the
  class go first. Other jobs wait in a first-come queue; the page shows the position and then the
  progress.
- **One job per session**: a session whose own job is still queued or running cannot queue another
  (it is told so and can wait for the first); attaching to someone else's identical job is free.
- **Cold loads: one running and one queued per session, sessions served in turn** (the ``load``
  lane, ``submit(..., replaces=session)``): a newer load takes the place of the session's queued one;
  a session's queued load waits while its previous one still runs (one session never holds two
  workers), and a free worker takes the queued job of the session served longest ago (one never
  served first), so a session that keeps asking cannot push another student's load back by more
  than the one job it already has running. A running load nobody waits for any more (its session
  asked for another one) stops at its next progress step.

A page uses it in one call at the place where it used to compute::

    res = heavy(("hemisphere.phase", size), functools.partial(hs.phase_diagram, B=..., n_betas=...),
                start=clicked, t=t)

``fn(progress=callback)`` runs in a worker thread (no Streamlit calls inside; ``st.cache_data``
functions are fine) and may call ``callback(fraction)``. ``heavy`` returns the result, or ``None``
when this session has not asked for it yet (or was refused, with a notice). While it waits it draws
a progress bar and polls; a slider move interrupts the wait, and the next rerun picks the same job
up again (the job itself keeps running).
"""

from __future__ import annotations

import collections
import itertools
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable, Hashable

from ui.server.runs import released, session_id

__all__ = ["Busy", "Superseded", "Job", "JobPool", "calls", "heavy", "pool", "workers"]

log = logging.getLogger(__name__)

KEEP = 32  #: finished results kept (least recently used dropped first)
POLL_S = 0.25  #: how often a waiting page redraws its progress bar
NICE = 5  #: CPU priority offset of worker threads (Linux: per thread)
ENV = "APP_HEAVY_JOBS"


def cores() -> int:
    """CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def workers(environ=os.environ) -> int:
    """How many heavy jobs may run at once: ``$APP_HEAVY_JOBS`` or ``cores - 1``, in [1, cores]."""
    n = cores()
    raw = environ.get(ENV, "").strip()
    try:
        want = int(raw) if raw else n - 1
    except ValueError:
        log.warning("%s=%r is not an integer; using %d", ENV, raw, n - 1)
        want = n - 1
    return min(max(1, want), n)


class Superseded(Exception):
    """A cold load withdrawn because its session asked for another one (queued: dropped; running:
    stopped at its next progress step)."""


class Busy(Exception):
    """This session already has a job queued or running (``.job``)."""

    def __init__(self, job: Job):
        super().__init__(f"session already waits for job {job.key!r}")
        self.job = job


@dataclass(eq=False)
class Job:
    """One heavy computation and everyone waiting for it."""

    key: Hashable
    fn: Callable[..., Any]
    seq: int
    state: str = "queued"  # queued | running | done | failed
    progress: float = 0.0
    result: Any = None
    error: BaseException | None = None
    sessions: set = field(default_factory=set)
    submitted: float = field(default_factory=time.monotonic)
    started: float | None = None
    finished: float | None = None
    done: threading.Event = field(default_factory=threading.Event)
    cancelled: bool = False  # a running cold load nobody waits for: stop at the next progress

    @property
    def seconds(self) -> float | None:
        """Run time (not counting the queue), once finished."""
        return None if self.finished is None or self.started is None else self.finished - self.started

    def _set_progress(self, f) -> None:
        if self.cancelled:
            raise Superseded(self.key)
        try:
            self.progress = min(max(float(f), 0.0), 1.0)
        except (TypeError, ValueError):
            pass


class JobPool:
    """The queue and its worker threads (one pool per server process: :func:`pool`)."""

    def __init__(self, n_workers: int | None = None, keep: int = KEEP, threads_per_job: int = 1, nice: int = NICE):
        self.n_workers = workers() if n_workers is None else max(1, int(n_workers))
        self.keep = keep
        self.threads_per_job = threads_per_job
        self.nice = nice
        self._cv = threading.Condition()
        self._queue: collections.deque[Job] = collections.deque()
        self._active: dict[Hashable, Job] = {}  # queued or running
        self._finished: collections.OrderedDict[Hashable, Job] = collections.OrderedDict()
        self._by_session: dict[str, Job] = {}  # the session's own job
        self._queued_by: dict[str, Job] = {}  # its one queued replaceable job
        self._running_by: dict[str, Job] = {}  # its one running replaceable job
        self._served: collections.OrderedDict[str, float] = collections.OrderedDict()  # last start
        self._seq = itertools.count(1)
        self._threads: list[threading.Thread] = []
        self.runs = 0  # jobs actually computed

    # ------------------------------------------------------------------ requests
    def submit(
        self, key: Hashable, fn: Callable[..., Any], session: str | None = None, replaces: str | None = None
    ) -> Job:
        """The job for ``key``: a finished one, the one queued/running, or a new one queued.

        Raises :class:`Busy` when ``session`` already has a different job queued or running.
        ``replaces`` (a session id; the cold-load lane): that session has at most one job *queued*
        here — a new one takes the place of its earlier queued one (which is dropped when nobody
        else waits for it: the student has moved on), so one session cannot fill the queue; its
        running one, when nobody else waits for it, stops at its next progress step; and its queued
        job starts only once its running one has ended (see the module's rules)."""
        with self._cv:
            job = self.find(key)
            if job is not None:
                if session is not None:
                    job.sessions.add(session)
                if replaces is not None:  # the session moved on to this job
                    if self._queued_by.get(replaces) is not job:
                        self._drop_queued(replaces)
                    self._leave_running(replaces, job)
                    if not job.done.is_set():
                        job.sessions.add(replaces)
                        job.cancelled = False
                        if job.state == "queued":
                            self._queued_by[replaces] = job
                return job
            if replaces is not None:
                self._drop_queued(replaces)
                self._leave_running(replaces, None)
            own = self._by_session.get(session) if session is not None else None
            if own is not None and not own.done.is_set():
                raise Busy(own)
            job = Job(key, fn, next(self._seq))
            if session is not None:
                job.sessions.add(session)
                self._by_session[session] = job
            if replaces is not None:
                job.sessions.add(replaces)
                self._queued_by[replaces] = job
            self._active[key] = job
            self._queue.append(job)
            self._start_workers()
            self._cv.notify_all()
            return job

    def _drop_queued(self, session: str) -> None:
        """Withdraw ``session``'s queued job of this lane (kept when another session waits for it)."""
        old = self._queued_by.pop(session, None)
        if old is None or old.state != "queued":
            return
        old.sessions.discard(session)
        if old.sessions:
            return
        try:
            self._queue.remove(old)
        except ValueError:
            return
        self._active.pop(old.key, None)
        old.state, old.error, old.fn = "failed", Superseded(old.key), None
        old.done.set()

    def _leave_running(self, session: str, keep: Job | None) -> None:
        """``session`` moved on from its running job of this lane (unless it is ``keep``): that job
        stops at its next progress step when nobody else waits for it."""
        run = self._running_by.get(session)
        if run is None or run is keep or run.done.is_set():
            return
        run.sessions.discard(session)
        if not run.sessions:
            run.cancelled = True

    def _blocked(self, job: Job) -> bool:
        """Every session waiting for ``job`` already has a job of this lane running."""
        return bool(job.sessions) and all(s in self._running_by for s in job.sessions)

    def _order(self) -> list[Job]:
        """The queue in the order the workers take it: jobs that may start now first, each by the
        time its longest-waiting session was last served (never served: first), then first come."""

        def rank(j: Job):
            last = min((self._served.get(s, float("-inf")) for s in j.sessions), default=float("-inf"))
            return (self._blocked(j), last, j.seq)

        return sorted(self._queue, key=rank)

    def _next(self) -> Job | None:
        for job in self._order():
            if not self._blocked(job):
                return job
        return None

    def find(self, key: Hashable) -> Job | None:
        """The queued, running or finished (still kept) job for ``key``, or None."""
        with self._cv:
            job = self._active.get(key)
            if job is None:
                job = self._finished.get(key)
                if job is not None:
                    self._finished.move_to_end(key)
            return job

    def position(self, job: Job) -> int:
        """0 when running or finished, else 1 + the number of queued jobs ahead of it."""
        with self._cv:
            if job.state != "queued":
                return 0
            for i, j in enumerate(self._order()):
                if j is job:
                    return i + 1
            return 0

    def status(self) -> dict:
        with self._cv:
            return {
                "workers": self.n_workers,
                "queued": len(self._queue),
                "running": sum(j.state == "running" for j in self._active.values()),
                "kept": len(self._finished),
                "runs": self.runs,
            }

    # ------------------------------------------------------------------ workers
    def _start_workers(self) -> None:
        while len(self._threads) < self.n_workers:
            th = threading.Thread(target=self._work, name=f"heavy-job-{len(self._threads) + 1}", daemon=True)
            self._threads.append(th)
            th.start()

    def _lower_priority(self) -> None:
        if self.nice:
            try:  # Linux: a thread id is a process id for setpriority, so this affects this thread only
                os.setpriority(
                    os.PRIO_PROCESS, threading.get_native_id(), os.getpriority(os.PRIO_PROCESS, 0) + self.nice
                )
            except (AttributeError, OSError, PermissionError):  # pragma: no cover - other systems
                pass
        try:
            import numba

            numba.set_num_threads(max(1, min(self.threads_per_job, numba.config.NUMBA_NUM_THREADS)))
        except Exception:  # noqa: BLE001 - numba missing or not configured: nothing to limit
            pass

    def _work(self) -> None:
        self._lower_priority()
        while True:
            with self._cv:
                job = self._next()
                while job is None:
                    self._cv.wait()
                    job = self._next()
                self._queue.remove(job)
                job.state, job.started = "running", time.monotonic()
                for s in [s for s, j in self._queued_by.items() if j is job]:
                    del self._queued_by[s]
                    self._running_by[s] = job
                for s in job.sessions:
                    self._served[s] = job.started
                    self._served.move_to_end(s)
                while len(self._served) > 10_000:
                    self._served.popitem(last=False)
            try:
                result, error = job.fn(progress=job._set_progress), None
            except BaseException as exc:  # noqa: BLE001 - handed to every waiting page
                result, error = None, exc
            with self._cv:
                job.result, job.error = result, error
                job.state = "failed" if error is not None else "done"
                job.finished = time.monotonic()
                job.progress = 1.0
                job.fn = None  # drop the closure (and what it holds)
                self.runs += 1
                self._active.pop(job.key, None)
                for s in [s for s, j in self._by_session.items() if j is job]:
                    del self._by_session[s]
                for s in [s for s, j in self._running_by.items() if j is job]:
                    del self._running_by[s]
                if error is None:
                    self._finished[job.key] = job
                    while len(self._finished) > self.keep:
                        self._finished.popitem(last=False)
                job.done.set()
                self._cv.notify_all()  # a session's next load may start now
            if isinstance(error, Superseded):
                pass
            elif error is not None:
                log.warning("heavy job %r failed: %s", job.key, error)


_POOLS: dict[str, JobPool] = {}
_POOL_LOCK = threading.Lock()
#: lanes: button-triggered panels (long: seconds to a minute) share ``workers()`` places; cold page
#: loads above a page's work threshold (a few seconds at most) have their own, one per core, so a
#: student's page never waits behind someone's phase diagram
LANES = {"panel": workers, "load": cores}


def pool(lane: str = "panel") -> JobPool:
    """The process-wide pool of a lane (created on first use)."""
    p = _POOLS.get(lane)
    if p is None:
        with _POOL_LOCK:
            p = _POOLS.get(lane)
            if p is None:
                p = _POOLS[lane] = JobPool(LANES[lane]())
    return p


# --------------------------------------------------------------------------- the page side
def _label(t, key: str, fallback: str, **fmt) -> str:
    if t is not None and t(f"ui.{key}") != f"ui.{key}":  # common.toml [ui], English as fallback
        return t(f"ui.{key}", **fmt)
    return fallback.format(**fmt)


def calls(*steps: tuple[Callable[..., Any], tuple]) -> Callable[..., None]:
    """A job function that makes the calls ``f(*args)`` in order (to fill ``st.cache_data`` caches
    in a worker) and reports progress after each; its result is ``True``."""

    def run(progress=lambda f: None):
        for i, (f, args) in enumerate(steps):
            f(*args)
            progress((i + 1) / len(steps))
        return True

    return run


def heavy(
    key: Hashable,
    fn: Callable[..., Any],
    *,
    start: bool,
    t=None,
    text: str | None = None,
    lane: str = "panel",
    jobs: JobPool | None = None,
):
    """Run ``fn`` as a shared, queued heavy job and wait for it with a progress bar.

    Parameters
    ----------
    key:
        Names the result (page, panel and every parameter it depends on).
    fn:
        ``fn(progress=callable)`` computing the result in a worker thread.
    start:
        True when this session asks for it now (its button was clicked). Without it the call only
        returns a result this session asked for before (or is waiting for), else ``None``.
    t:
        The page's :class:`ui.kit.i18n.Text` (labels ``ui.job_*`` of common.toml).
    text:
        Label of the progress bar while the job runs (default ``ui.job_running``).
    lane:
        ``"panel"`` (a button's optional panel: one per session) or ``"load"`` (what a page needs
        to show at all: not counted as the session's panel job, its own places, see :data:`LANES`;
        one running and one queued per session, the newest replacing the queued one).

    Returns the result, or ``None``. A failed job re-raises its exception here (``ctx.guard``
    turns a ``ValueError`` into a message).
    """
    import streamlit as st

    p = jobs or pool(lane)
    sid = session_id()
    mine = st.session_state.setdefault("_jobs_mine", set())  # keys this session asked for
    job = p.find(key)
    if start:
        try:
            # a panel is the session's one job; a cold load replaces the session's queued one
            job = p.submit(key, fn, sid, None) if lane == "panel" else p.submit(key, fn, None, sid)
        except Busy as b:
            st.warning(
                _label(
                    t,
                    "job_busy",
                    "You already have a computation in the queue (position "
                    "{pos}); it has to finish before you start another.",
                    pos=max(p.position(b.job), 1),
                ),
                icon="⏳",
            )
            return None
        mine.add(key)
    elif job is None or key not in mine:
        return None
    if not job.done.is_set():
        bar = st.empty()
        with released():  # only waiting: other sessions' page runs take this run's turn meanwhile
            _wait_drawing(p, job, bar, t, text)
        bar.empty()
    if job.error is not None:
        mine.discard(key)
        if isinstance(job.error, Superseded):
            return None
        raise job.error
    return job.result


def _wait_drawing(p, job, bar, t, text) -> None:
    """Until ``job`` is done: its queue position or progress in ``bar``, every ``POLL_S``."""
    while not job.done.wait(POLL_S):
        pos = p.position(job)
        if pos:
            bar.progress(
                0.0, text=_label(t, "job_queued", "Waiting for a free worker: position {pos} in the queue.", pos=pos)
            )
        else:
            pct = int(round(100 * job.progress))
            label = text or _label(t, "job_running", "Computing… {pct} %", pct=pct)
            bar.progress(job.progress, text=label)
