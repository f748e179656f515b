"""The adapters to Streamlit's internals: each replaces (wraps) one private piece of Streamlit 1.67
for a fix listed in ``ui/server/serve.py`` and is installed once by :func:`install_all`.

The logic is here; what is replaced, why, and the check that it is still the Streamlit it was
written for are in the table of :mod:`ui.streamlit_internals`, through whose :func:`replace
<ui.streamlit_internals.replace>` every adapter is installed (a replacement whose target differs
from the verified Streamlit is skipped and named in the server log).
"""

from __future__ import annotations

import os
import threading
import time

from ui import streamlit_internals as internals

from ui.server.budgets import (
    CLOSE_REASON,
    GUARD,
    INBOUND_MAX_BYTES,
    SLOWED,
    BrowserCookie,
    Bucket,
    Guard,
    _kind,
    clean_widget_states,
    client_key,
)
from ui.server import nodelay
from ui.server.signin_routes import signin_routes

#: the development setting that lets a client clear the server's caches
ALLOW_CLEAR_ENV = "APP_ALLOW_CLEAR_CACHE"


def clear_cache_allowed(environ=os.environ) -> bool:
    """True when the development setting allows clients to clear the server's caches."""
    return environ.get(ALLOW_CLEAR_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def refuse_clear_cache() -> bool:
    """Make the websocket ``clear_cache`` message a logged no-op in this process."""
    import logging

    log = logging.getLogger("ui.server.serve")

    def wrap(_streamlits):
        def _refused(self) -> None:
            log.warning(
                "refused a clear_cache request from session %s (set %s=1 to allow it while developing)",
                getattr(self, "id", "?"),
                ALLOW_CLEAR_ENV,
            )

        _refused._refused = True  # type: ignore[attr-defined]
        return _refused

    return internals.replace("clear_cache", wrap)


def _stale_fragment(rerun, session_id: str, runs) -> bool:
    """Whether a fragment rerun request is stale: True drops it, and a click's request asked for
    from a page the session has just left is moved to the page it is on now.

    A browser's timed fragment (``run_every``: the class poll) asks to rerun with the page it
    shows. After the server switched the session to another page (a teacher's push), requests
    already on their way still name the old page; Streamlit 1.67 runs such a fragment rerun with
    that old page and tells the browser so, and the browser then drops every element of the page
    it has just drawn: a student's page left blank under the class banner until the next full run
    (seen in loaded browser runs; the websocket frames show the new page's elements arriving, then
    fragment runs naming the old page). Timed requests are dropped (the timer asks again within
    its interval, with the right page), also while the session's full run is in progress (it
    would run back to back with the full run, which draws the fragment anyway)."""
    if rerun.is_auto_rerun and runs.in_full_run(session_id):
        return True
    now = runs.page_of(session_id)
    if now and rerun.page_script_hash and rerun.page_script_hash != now:
        if rerun.is_auto_rerun:
            return True
        rerun.page_script_hash = now  # a click in the banner as the page switched: kept
    return False


def _fragments_on_the_page_shown() -> None:
    """A fragment rerun already queued when the session was switched to another page runs on the
    page the session shows now (``ScriptRunner._run_script`` wrapped once; see
    :func:`_stale_fragment` for why: its run would tell the browser it is on the old page, and the
    browser would drop the new page's elements). Recorded websocket frames of a blank student
    page showed such a run right after the pushed page's run: a poll request accepted while the
    old page was still the session's, queued behind the push's own runs."""
    import dataclasses

    from ui.server import runs

    def wrap(orig):
        def run(self, rerun_data):
            sid = internals.runner_session_id(self)
            if rerun_data.fragment_id_queue and rerun_data.page_script_hash:
                now = runs.page_of(sid)
                if now and now != rerun_data.page_script_hash:
                    rerun_data = dataclasses.replace(rerun_data, page_script_hash=now)
            runs.note_origin(rerun_data, sid)  # bursts: see ui.server.runs
            return orig(self, rerun_data)

        run._on_page_shown = True  # type: ignore[attr-defined]
        return run

    internals.replace("run_script", wrap)


#: seconds a download made on click is kept for its fetch, whatever runs end meanwhile
FRESH_DOWNLOAD_S = 60.0


def download_file_id(url: str) -> str:
    """The media file id in a download address (``<endpoint>/<id><.ext>``)."""
    return url.rsplit("/", 1)[-1].split(".", 1)[0]


_FRESH: dict[str, float] = {}  # file id -> until when it is kept (time.monotonic)
_FRESH_LOCK = threading.Lock()


def _keep_fresh_downloads() -> None:
    """Keep each file made by a deferred download for :data:`FRESH_DOWNLOAD_S` seconds
    (``MediaFileManager.execute_deferred`` and ``_get_inactive_file_ids`` wrapped once; see point 8
    of ``ui/server/serve.py``)."""
    now = time.monotonic

    def wrap_deferred(run_deferred):
        def execute_deferred(self, file_id: str) -> str:
            url = run_deferred(self, file_id)
            with _FRESH_LOCK:
                _FRESH[download_file_id(url)] = now() + FRESH_DOWNLOAD_S
                if len(_FRESH) > 4096:  # a flood of clicks: the oldest go first
                    _FRESH.pop(next(iter(_FRESH)))
            return url

        execute_deferred._keeps_fresh = True  # type: ignore[attr-defined]
        return execute_deferred

    def wrap_inactive(inactive):
        def inactive_ids(self) -> set[str]:
            ids = inactive(self)
            t = now()
            with _FRESH_LOCK:
                for k in [k for k, until in _FRESH.items() if until <= t]:
                    del _FRESH[k]
                return ids - _FRESH.keys()

        inactive_ids._streamlit = inactive  # type: ignore[attr-defined]
        return inactive_ids

    if internals.replace("execute_deferred", wrap_deferred):
        internals.replace("inactive_files", wrap_inactive)


def install_guards(guard: Guard | None = None, late: bool = False) -> None:
    """Patch the runtime's websocket entry (``Runtime.handle_backmsg``) with :class:`Guard`, clean
    widget states, and (before the server starts, not ``late``) cap inbound frames at
    :data:`INBOUND_MAX_BYTES` and name each browser by a cookie."""
    import asyncio
    import logging
    import time

    from ui.server import runs

    g = guard or GUARD
    log = logging.getLogger("ui.server.serve")
    held: dict = {}  # session id -> (latest held message, client, timer handle)
    tabs: dict = {}  # browser key -> {session id: client}: a disconnect closes all its tabs

    def _mark_slowed(runtime, session_id: str) -> None:
        """The page's next run shows the notice (app.py asks :func:`was_slowed`)."""
        if len(SLOWED) < Bucket.MAX_KEYS:
            SLOWED.add(session_id)

    def _close(client) -> None:
        ws = internals.client_websocket(client)
        if ws is not None:
            asyncio.ensure_future(ws.close(code=1008, reason=CLOSE_REASON))

    def _release(self, session_id: str) -> None:
        entry = held.pop(session_id, None)
        if entry is not None:
            _mark_slowed(self, session_id)
            guarded(self, session_id, entry[0], client=entry[1])

    def guarded(self, session_id, msg, *, client=None):
        if msg.WhichOneof("type") == "rerun_script" and clean_widget_states(msg.rerun_script.widget_states):
            log.warning("dropped widget states with ids Streamlit never made (session %s)", session_id)
        kind = _kind(msg)
        addr, mark = client_key(client)
        ck = f"{addr}|{mark}" if mark else f"{addr}|session:{session_id}"
        mine = tabs.setdefault(ck, {})
        mine[session_id] = client
        if len(mine) > 64:
            mine.pop(next(iter(mine)))
        if len(tabs) > Bucket.MAX_KEYS:
            tabs.pop(next(iter(tabs)))
        if kind == "fragment" and _stale_fragment(msg.rerun_script, session_id, runs):
            g.dropped_polls += 1
            return None
        verdict, wait = g.admit(session_id, ck, kind, time.monotonic(), addr)
        if verdict == "ok":
            return orig(self, session_id, msg, client=client)
        if verdict == "close":
            log.warning("disconnected a browser over its message budget (%d tabs)", len(mine))
            for sid, c in tabs.pop(ck, {}).items():
                entry = held.pop(sid, None)
                if entry is not None:
                    entry[2].cancel()
                g.forget(sid)
                _close(c)
            return None
        if kind == "other":
            return None  # heartbeats and the like: dropped while over budget
        entry = held.get(session_id)
        if entry is not None:  # the newest rerun supersedes the held one ...
            if not (kind == "fragment" and _kind(entry[0]) == "rerun"):
                held[session_id] = (msg, client, entry[2])
            return None  # ... but a fragment's never a full one's (which redraws it too)
        loop = asyncio.get_event_loop()
        held[session_id] = (msg, client, loop.call_later(wait, _release, self, session_id))
        return None

    orig = None

    def wrap_backmsg(streamlits):
        nonlocal orig
        orig = streamlits
        return guarded

    guarded._guarded = True  # type: ignore[attr-defined]
    internals.replace("backmsg", wrap_backmsg)
    _fragments_on_the_page_shown()
    if late:  # uvicorn and the middleware stack are already built
        return

    def wrap_kwargs(kwargs):
        def capped_kwargs(*a, **k):
            out = kwargs(*a, **k)
            out["ws_max_size"] = min(int(out.get("ws_max_size") or INBOUND_MAX_BYTES), INBOUND_MAX_BYTES)
            out.setdefault("http", nodelay.protocol())  # each connection without Nagle (ui.server.nodelay)
            return out

        return capped_kwargs

    internals.replace("uvicorn_kwargs", wrap_kwargs)

    from starlette.middleware import Middleware

    from ui.server.compress import CompressedAssets

    def wrap_middleware(make_mw):
        def with_browser_cookie(*a, **k):  # and text assets compressed once (ui.server.compress)
            return [*make_mw(*a, **k), Middleware(BrowserCookie), Middleware(CompressedAssets)]

        return with_browser_cookie

    internals.replace("middleware", wrap_middleware)


def install_signin_routes() -> None:
    """Streamlit's routes with the sign-in/sign-out routes and the chart asset route before them."""

    def wrap(make):
        def with_signin(runtime):
            import streamlit as st

            from ui.kit.chart import asset_routes

            base = str(st.get_option("server.baseUrlPath") or "")
            return signin_routes(base) + asset_routes(base) + list(make(runtime))

        with_signin._with_signin = True  # type: ignore[attr-defined]
        return with_signin

    internals.replace("routes", wrap)


def leave_mpa_v1() -> None:
    """Clear Streamlit's process-wide "legacy multipage app" flag (point 1 of ``ui/server/serve.py``)."""
    internals.set_uses_pages_directory(False)


def install_all() -> None:
    """Every adapter of the served process, before Streamlit starts (idempotent); the outcome is in
    ``ui.streamlit_internals.APPLIED`` / ``NOT_APPLIED``."""
    leave_mpa_v1()
    if not clear_cache_allowed():
        refuse_clear_cache()
    install_guards()
    _keep_fresh_downloads()
    install_signin_routes()


#: what a plain ``streamlit run app.py`` cannot have (docs/deploy.md): the server was built before
#: the app's code ran, so these are missing there (names of :data:`ui.streamlit_internals.TABLE`)
LATE_MISSING = ("uvicorn_kwargs", "middleware")


def install_late() -> tuple[str, ...]:
    """For a plain ``streamlit run app.py`` (as Streamlit's own hosting starts an app), at its first
    run: every adapter that still applies once the server runs (the class-level replacements, and the
    sign-in and chart routes added to the running application). Returns the names of what is missing
    that way; ``()`` in the served process (``python -m ui.server``), which installed all before start
    (checked first: :func:`ui.streamlit_internals.server_running` looks through the live objects), and
    where no server runs (AppTest)."""
    if internals.APPLIED.get("routes") or not internals.server_running():
        return ()
    leave_mpa_v1()
    if not clear_cache_allowed():
        refuse_clear_cache()
    install_guards(late=True)
    _keep_fresh_downloads()
    import streamlit as st

    from ui.kit.chart import asset_routes

    from ui.server.compress import CompressedAssets

    base = str(st.get_option("server.baseUrlPath") or "")
    added = internals.add_routes_now(signin_routes(base) + asset_routes(base))
    compressed = internals.wrap_running_app(CompressedAssets)
    nodelay.listeners()  # connections accepted from now on without Nagle (ui.server.nodelay)
    return LATE_MISSING + (() if added else ("routes",)) + (() if compressed else ("middleware_stack",))
