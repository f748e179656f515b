"""Serve the app: ``python -m ui.server.serve [options]`` is ``streamlit run app.py [options]`` plus nine fixes.

1. **Routing.** Streamlit treats an app with a folder named ``pages/`` beside its main script as a
   legacy (v1) multipage app until some session has executed ``st.navigation`` — a process-wide
   flag decided when the first session starts. The first visitor after a server start therefore ran
   in legacy mode: a deep link ran the page script without app.py, and that session's widget ids
   came from the legacy run, so its first interaction (a slider, the language switch) was silently
   dropped. This app always routes with ``st.navigation``, so the flag is cleared before the server
   starts. (Checked against the pinned streamlit 1.67; ``ui.kit.page`` keeps a fallback for a plain
   ``streamlit run``.)
2. **No cache clearing from the network.** Any websocket client can send the ``clear_cache``
   BackMsg (the "Clear caches" menu item; ``toolbarMode = "viewer"`` only hides the item): the
   server then empties ``st.cache_data`` and ``st.cache_resource`` for *every* session, and the
   whole class pays the cold cost again. The served process refuses it (a warning in the server
   log) unless the development setting ``APP_ALLOW_CLEAR_CACHE=1`` is in its environment.
3. **A thread-safe Numba threading layer.** Several sessions call parallel kernels at once; Numba's
   ``workqueue`` layer (its fallback when neither OpenMP nor TBB loads) aborts the process on
   concurrent use. ``NUMBA_THREADING_LAYER`` is set to ``threadsafe`` (OpenMP or TBB, whichever
   loads) before anything imports numba, and a missing safe layer stops the server at start with
   a message instead of crashing it under load.

4. **No wait for kernel compilation.** The server answers at once; the Numba kernels are compiled
   (or loaded from the on-disk cache) by low-priority child processes, and each is loaded into the
   server from the cache by its first call once its module is ready
   (:func:`sim.warm.start_background`); until then ``sim.attention``, ``sim.depth_sum`` and
   ``sim.width`` take their NumPy reference paths, which give the same numbers.

5. **One client cannot take the server** (:class:`Guard`, installed by :func:`install_guards`).
   Every websocket message passes a per-session and a per-browser budget (token buckets: a browser
   is its address plus its cookie, so many tabs share one budget, and a class behind one NAT does
   not). A message over budget is *slowed*: the session's latest rerun is held and delivered when
   the budget allows (earlier held ones are superseded, as Streamlit's own fast reruns do); a
   client that keeps sending far over budget is *disconnected* (close code 1008, with the reason
   as its notice, and a line in the server log). A hand on a slider sends a few reruns a second
   and never reaches either. Widget states with ids Streamlit never made (``_instructor``, a bare
   session-state name) are dropped before the session sees them. Inbound websocket frames are
   capped at :data:`INBOUND_MAX_BYTES` by uvicorn before they are buffered (the app's own are a
   few kB; uploads go over HTTP); outbound messages keep Streamlit's limit.
6. **The instructor's sign-in route** (:func:`signin_routes`): ``POST /_app/signin`` checks the
   key under per-address and server-wide attempt limits (:class:`ui.kit.safe.Attempts`) and sets a
   signed, HttpOnly, expiring cookie (:func:`ui.kit.safe.make_token`); ``POST /_app/signout`` clears
   it and revokes it on every replica (in the shared class store, :mod:`ui.teaching.class_store`, until the
   cookie's expiry). A short or guessable key stops the server at start (:func:`check_key_strength`).

7. **Fragment reruns on the page shown** (:func:`_stale_fragment`, :func:`_fragments_on_the_page_shown`):
   a fragment rerun that names a page the session has left (the class poll, in flight while a
   push switched the page) is dropped if timed, or run on the page shown; otherwise Streamlit 1.67
   tells the browser it is on the old page and the browser drops the new page's elements. The
   same wrapper notes where each run came from (widget values from the browser, on the page shown)
   for ``ui.server.runs.settled``, which lets a held key's stale values go before they are computed.

8. **A download made on click lives until it is fetched** (:func:`_keep_fresh_downloads`). A
   download button whose data is made on click (``data=callable``: the class results, a figure's
   data) answers the click with the address of a file the browser then fetches. Streamlit 1.67
   stores that file unreferenced, and the end of *any* session's run deletes unreferenced
   downloads on its second pass: in a class, where every student's poll ends a run each second,
   the file could be gone before the browser asked for it (the teacher's results download
   "canceled" in a loaded browser run). Such a file is kept for :data:`FRESH_DOWNLOAD_S` seconds.

9. **Ready before the first visit** (:mod:`ui.server.prepare`): the app's and every page's modules are
   imported in a background thread as the server starts (the first page run waits for them
   instead of importing them itself), and every Numba kernel is loaded from the on-disk cache
   once ``sim.warm``'s children have made it current. A fresh server left idle for 10 s, then a
   new Chromium opening a page by its address: drawn 2.9 -> 1.2 s (home), 5.2 -> 3.0 s
   (two_point), 5.8 -> 4.4 s (hemisphere); the server's CPU during that visit 2.0-3.0 -> 0.4-0.7 s.

``make run``, the Docker image, the tests and the benchmarks all start the server this way.
"""
from __future__ import annotations

import collections
import functools
import os
import sys
from pathlib import Path

#: threading layers that tolerate kernels launched from several threads at once
SAFE_LAYERS = ("threadsafe", "omp", "tbb")
LAYER_ENV = "NUMBA_THREADING_LAYER"
#: the development setting that lets a client clear the server's caches
ALLOW_CLEAR_ENV = "APP_ALLOW_CLEAR_CACHE"


def safe_threading_layer(environ=os.environ) -> str:
    """Put a thread-safe ``NUMBA_THREADING_LAYER`` into ``environ`` and return it.

    An explicit safe choice (``omp``, ``tbb``, ``threadsafe``) is kept; anything else (unset,
    ``workqueue``, ``default``, ``safe``…) becomes ``threadsafe``. Must run before numba is
    imported: numba reads the variable once, at import.
    """
    cur = environ.get(LAYER_ENV, "").strip().lower()
    if cur not in SAFE_LAYERS:
        environ[LAYER_ENV] = "threadsafe"
    return environ[LAYER_ENV]


#: OpenBLAS's worker threads busy-wait: with every core already running sessions, a small matrix
#: product cost many times more CPU with its default threads than with one. The server's parallelism is its sessions (and Numba's pool), not BLAS.
BLAS_ENV = "OPENBLAS_NUM_THREADS"


def single_thread_blas(environ=os.environ) -> str:
    """One OpenBLAS thread unless the environment says otherwise; must run before NumPy loads."""
    environ.setdefault(BLAS_ENV, "1")
    return environ[BLAS_ENV]


# At import of this module: ``python -m ui.server.serve`` imports nothing else before it (ui/__init__ is
# a docstring), so the variables are in place before streamlit, the app or sim/ import numba/numpy.
safe_threading_layer()
single_thread_blas()

APP = Path(__file__).resolve().parents[2] / "app.py"


def clear_cache_allowed(environ=os.environ) -> bool:
    """True when the development setting allows clients to clear the server's caches."""
    return environ.get(ALLOW_CLEAR_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def refuse_clear_cache() -> None:
    """Make the websocket ``clear_cache`` message a logged no-op in this process."""
    import logging

    from streamlit.runtime.app_session import AppSession

    if getattr(AppSession._handle_clear_cache_request, "_refused", False):
        return
    log = logging.getLogger("ui.server.serve")

    def _refused(self) -> None:
        log.warning("refused a clear_cache request from session %s (set %s=1 to allow it while "
                    "developing)", getattr(self, "id", "?"), ALLOW_CLEAR_ENV)

    _refused._refused = True  # type: ignore[attr-defined]
    AppSession._handle_clear_cache_request = _refused


def check_threading_layer() -> str:
    """Load the configured layer now; exit with a message if none loads.

    Numba's own loader (``numba.np.ufunc.parallel._launch_threads``, what the first parallel kernel
    calls) is quick; compiling a tiny parallel kernel to the same end cost far more CPU at every
    start, so that is only the fallback for a Numba without that function."""
    import numba

    def _probe_compiled():
        import numpy as np

        @numba.njit(parallel=True, cache=False)
        def _probe(x):
            s = 0.0
            for i in numba.prange(x.size):
                s += x[i]
            return s

        _probe(np.ones(4))

    try:
        from numba.np.ufunc import parallel
        launch = getattr(parallel, "_launch_threads", None) or _probe_compiled
        launch()
    except Exception as exc:  # noqa: BLE001 - numba raises ValueError/ImportError variants
        sys.exit(f"ui.server.serve: no thread-safe Numba threading layer ({LAYER_ENV}="
                 f"{os.environ.get(LAYER_ENV)}): {exc}\nInstall OpenMP (Debian: libgomp1) or "
                 f"`pip install tbb`; the 'workqueue' layer crashes the server when sessions "
                 f"run parallel kernels at the same time.")
    return numba.threading_layer()


# --------------------------------------------------------------------------- guards
#: the largest websocket frame a client may send (uvicorn refuses larger ones before buffering them)
INBOUND_MAX_BYTES = 2**20
#: Streamlit makes every widget id with this prefix (``streamlit.runtime.state.common``)
WIDGET_ID_PREFIX = "$$ID-"
MAX_WIDGET_ID = 400


def clean_widget_states(widget_states) -> int:
    """Drop the entries of a ``WidgetStates`` proto whose ids Streamlit never makes (a bare
    session-state name such as ``_instructor``, an empty or huge id). Returns how many."""
    bad = [i for i, w in enumerate(widget_states.widgets)
           if not (w.id.startswith(WIDGET_ID_PREFIX) and len(w.id) <= MAX_WIDGET_ID)]
    for i in reversed(bad):
        del widget_states.widgets[i]
    return len(bad)


class Bucket:
    """Token buckets by key: ``rate`` tokens a second, at most ``burst`` saved up."""

    MAX_KEYS = 20_000

    def __init__(self, rate: float, burst: float):
        self.rate, self.burst = float(rate), float(burst)
        self._state: dict = {}

    def take(self, key, cost: float, now: float) -> float:
        """0.0 and the cost taken when ``key`` can pay now; else the seconds until it can (nothing taken)."""
        if len(self._state) > self.MAX_KEYS:   # forget keys whose bucket has refilled (idle ones)
            self._state = {k: v for k, v in self._state.items()
                           if v[0] + (now - v[1]) * self.rate < self.burst}
        tokens, then = self._state.get(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - then) * self.rate)
        if tokens >= cost:
            self._state[key] = (tokens - cost, now)
            return 0.0
        self._state[key] = (tokens, now)
        return (cost - tokens) / self.rate

    def refund(self, key, cost: float) -> None:
        tokens, then = self._state.get(key, (self.burst, 0.0))
        self._state[key] = (min(self.burst, tokens + cost), then)

    def forget(self, key) -> None:
        self._state.pop(key, None)

    def __len__(self) -> int:
        return len(self._state)


class Guard:
    """The budgets of the websocket messages (see the module's point 5). Time is passed in, so the
    rules are tested without a clock; :func:`install_guards` feeds it the server's messages."""

    #: what a message costs: a full rerun 1, a fragment rerun (the class poll, a fragment button) 0.25
    COST = {"rerun": 1.0, "fragment": 0.25, "other": 0.1}

    def __init__(self, session_rate=3.0, session_burst=12.0, client_rate=4.0, client_burst=16.0,
                 address_rate=60.0, address_burst=240.0, strike_window_s=20.0, strikes_to_close=300):
        self.session = Bucket(session_rate, session_burst)
        self.client = Bucket(client_rate, client_burst)
        #: a ceiling per address (a class behind one NAT shares it; clients without cookies too)
        self.address = Bucket(address_rate, address_burst)
        self.strike_window_s, self.strikes_to_close = strike_window_s, strikes_to_close
        self._strikes: dict = {}
        self.slowed = self.closed = 0
        self.dropped_polls = 0  #: stale timed fragment reruns dropped (:func:`_stale_fragment`)

    def admit(self, session_id: str, client_key, kind: str, now: float,
              address: str | None = None) -> tuple[str, float]:
        """``("ok", 0)``, ``("later", seconds)`` (slowed) or ``("close", 0)`` (disconnect)."""
        cost = self.COST.get(kind, self.COST["other"])
        taken, wait = [], 0.0
        for bucket, key in ((self.session, session_id), (self.client, client_key), (self.address, address)):
            if key is None:
                continue
            wait = bucket.take(key, cost, now)
            if wait:
                for b, k in taken:
                    b.refund(k, cost)
                break
            taken.append((bucket, key))
        if wait == 0.0:
            return "ok", 0.0
        if len(self._strikes) > Bucket.MAX_KEYS:
            self._strikes = {k: v for k, v in self._strikes.items() if v and now - v[-1] < self.strike_window_s}
        strikes = self._strikes.setdefault(client_key, collections.deque())
        strikes.append(now)
        while strikes and now - strikes[0] > self.strike_window_s:
            strikes.popleft()
        if len(strikes) >= self.strikes_to_close:
            strikes.clear()
            self.closed += 1
            return "close", 0.0
        self.slowed += 1
        return "later", wait

    def forget(self, session_id: str) -> None:
        self.session.forget(session_id)


GUARD = Guard()
#: sessions whose held rerun was delivered late: their next run says why (app.py, :func:`was_slowed`)
SLOWED: set = set()


def was_slowed() -> bool:
    """True once for a session whose rerun this server held back (called by the page run)."""
    if not SLOWED:
        return False
    try:
        from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

        ctx = get_script_run_ctx()
        sid = ctx.session_id if ctx is not None else None
    except Exception:  # noqa: BLE001 - outside a run
        return False
    if sid in SLOWED:
        SLOWED.discard(sid)
        return True
    return False
#: the reason a disconnected client is given (a websocket close reason: at most 123 bytes)
CLOSE_REASON = "Too many requests from this browser: slowed, then disconnected. Reload the page."


def _kind(msg) -> str:
    if msg.WhichOneof("type") != "rerun_script":
        return "other"
    return "fragment" if msg.rerun_script.fragment_id else "rerun"


TRUSTED_PROXIES = ("127.0.0.1", "::1")
#: more proxies whose ``X-Real-IP`` is believed, comma-separated: addresses (``10.213.0.10``, the
#: nginx container of ``deploy/docker-compose.yml``), networks (``10.0.0.0/8``, the pod network
#: where the ingress controller runs) or, as before, prefixes ending in ``.`` or ``:`` (``172.18.``)
TRUSTED_ENV = "APP_TRUSTED_PROXIES"


def trusted_proxies(environ=os.environ) -> tuple:
    """The entries of :data:`TRUSTED_ENV`: ``ipaddress`` networks (an address is a /32 or /128)
    and prefix strings; an entry that is neither is ignored (with a warning in the log, once)."""
    return _parse_trusted(environ.get(TRUSTED_ENV, ""))


@functools.lru_cache(maxsize=8)
def _parse_trusted(value: str) -> tuple:
    import ipaddress
    import logging

    out = []
    for raw in value.split(","):
        e = raw.strip()
        if not e:
            continue
        if e.endswith((".", ":")) and "/" not in e:
            out.append(e)
            continue
        try:
            out.append(ipaddress.ip_network(e, strict=False))
        except ValueError:
            logging.getLogger("ui.server.serve").warning("%s: %r is not an address, a network or a prefix; "
                                                  "ignored", TRUSTED_ENV, e)
    return tuple(out)


def _trusted(remote: str, environ=os.environ) -> bool:
    if remote in TRUSTED_PROXIES:
        return True
    entries = trusted_proxies(environ)
    if not entries:
        return False
    import ipaddress

    try:
        ip = ipaddress.ip_address(remote)
        if getattr(ip, "ipv4_mapped", None) is not None:
            ip = ip.ipv4_mapped
    except ValueError:
        ip = None
    for e in entries:
        if isinstance(e, str):
            if remote.startswith(e):
                return True
        elif ip is not None and ip.version == e.version and ip in e:
            return True
    return False


def client_address(headers, remote: str | None) -> str:
    """The client's address: ``X-Real-IP`` when the connection comes from a trusted proxy (nginx
    on this machine; :data:`TRUSTED_ENV` adds others), else the connection's own address (a
    student on the LAN cannot choose the address it is counted under)."""
    remote = remote or "?"
    if _trusted(remote):
        for k, v in headers:
            if k.lower() == "x-real-ip" and v.strip():
                return v.strip()[:64]
    return remote


#: the cookie this server gives every browser (:class:`BrowserCookie`), then nginx's sticky key
BROWSER_COOKIE = "app_browser"
BROWSER_COOKIES = (BROWSER_COOKIE, "st_replica")


def client_key(client) -> tuple[str, str]:
    """``(address, browser mark)``: the mark is the browser's cookie (all its tabs share it), ``""``
    for a client without one (a script: then each of its sessions has its own budget and its
    address shares the per-address ceiling)."""
    try:
        ctx = client.client_context
        addr = client_address(list(ctx.headers), ctx.remote_ip)
        cookies = ctx.cookies
        mark = next((str(cookies[c])[:80] for c in BROWSER_COOKIES if c in cookies), "")
    except Exception:  # noqa: BLE001 - another kind of client (tests)
        return "?", ""
    return addr, mark


class BrowserCookie:
    """ASGI middleware: a response to a request without :data:`BROWSER_COOKIE` sets one (random,
    HttpOnly), so the tabs of one browser share one message budget without nginx too."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope.get("type") != "http" or any(
                k == b"cookie" and f"{BROWSER_COOKIE}=".encode() in v for k, v in scope.get("headers", ())):
            return await self.app(scope, receive, send)
        import secrets

        value = f"{BROWSER_COOKIE}={secrets.token_urlsafe(12)}; Path=/; HttpOnly; SameSite=Lax".encode()

        async def send_with_cookie(msg):
            if msg.get("type") == "http.response.start":
                msg = {**msg, "headers": [*msg.get("headers", []), (b"set-cookie", value)]}
            await send(msg)

        return await self.app(scope, receive, send_with_cookie)


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
        rerun.page_script_hash = now   # a click in the banner as the page switched: kept
    return False


def _fragments_on_the_page_shown() -> None:
    """A fragment rerun already queued when the session was switched to another page runs on the
    page the session shows now (``ScriptRunner._run_script`` wrapped once; see
    :func:`_stale_fragment` for why: its run would tell the browser it is on the old page, and the
    browser would drop the new page's elements). Recorded websocket frames of a blank student
    page showed such a run right after the pushed page's run: a poll request accepted while the
    old page was still the session's, queued behind the push's own runs."""
    import dataclasses

    from streamlit.runtime.scriptrunner.script_runner import ScriptRunner

    from ui.server import runs

    if getattr(ScriptRunner._run_script, "_on_page_shown", False):
        return
    orig = ScriptRunner._run_script

    def run(self, rerun_data):
        if rerun_data.fragment_id_queue and rerun_data.page_script_hash:
            now = runs.page_of(getattr(self, "_session_id", None))
            if now and now != rerun_data.page_script_hash:
                rerun_data = dataclasses.replace(rerun_data, page_script_hash=now)
        runs.note_origin(rerun_data, getattr(self, "_session_id", None))  # bursts: see ui.server.runs
        return orig(self, rerun_data)

    run._on_page_shown = True  # type: ignore[attr-defined]
    ScriptRunner._run_script = run


#: seconds a download made on click is kept for its fetch, whatever runs end meanwhile
FRESH_DOWNLOAD_S = 60.0


def download_file_id(url: str) -> str:
    """The media file id in a download address (``<endpoint>/<id><.ext>``)."""
    return url.rsplit("/", 1)[-1].split(".", 1)[0]


def _keep_fresh_downloads() -> None:
    """Keep each file made by a deferred download for :data:`FRESH_DOWNLOAD_S` seconds
    (``MediaFileManager.execute_deferred`` and ``_get_inactive_file_ids`` wrapped once; see point 8
    of the module's docstring)."""
    import threading
    import time

    from streamlit.runtime.media_file_manager import MediaFileManager

    if getattr(MediaFileManager.execute_deferred, "_keeps_fresh", False):
        return
    now = time.monotonic
    fresh: dict[str, float] = {}     # file id -> until when it is kept
    lock = threading.Lock()
    run_deferred, inactive = MediaFileManager.execute_deferred, MediaFileManager._get_inactive_file_ids

    def execute_deferred(self, file_id: str) -> str:
        url = run_deferred(self, file_id)
        with lock:
            fresh[download_file_id(url)] = now() + FRESH_DOWNLOAD_S
            if len(fresh) > 4096:            # a flood of clicks: the oldest go first
                fresh.pop(next(iter(fresh)))
        return url

    def inactive_ids(self) -> set[str]:
        ids = inactive(self)
        t = now()
        with lock:
            for k in [k for k, until in fresh.items() if until <= t]:
                del fresh[k]
            return ids - fresh.keys()

    execute_deferred._keeps_fresh = True  # type: ignore[attr-defined]
    inactive_ids._streamlit = inactive  # type: ignore[attr-defined]
    MediaFileManager.execute_deferred = execute_deferred
    MediaFileManager._get_inactive_file_ids = inactive_ids


def install_guards(guard: Guard | None = None) -> None:
    """Patch the runtime's websocket entry (``Runtime.handle_backmsg``) with :class:`Guard`, clean
    widget states, and cap inbound frames at :data:`INBOUND_MAX_BYTES`."""
    import asyncio
    import logging
    import time

    from streamlit.runtime.runtime import Runtime
    from streamlit.web.server.starlette import starlette_server

    from ui.server import runs

    if getattr(Runtime.handle_backmsg, "_guarded", False):
        return
    g = guard or GUARD
    log = logging.getLogger("ui.server.serve")
    orig = Runtime.handle_backmsg
    held: dict = {}   # session id -> (latest held message, client, timer handle)
    tabs: dict = {}   # browser key -> {session id: client}: a disconnect closes all its tabs

    def _mark_slowed(runtime, session_id: str) -> None:
        """The page's next run shows the notice (app.py asks :func:`was_slowed`)."""
        if len(SLOWED) < Bucket.MAX_KEYS:
            SLOWED.add(session_id)

    def _close(client) -> None:
        ws = getattr(client, "_websocket", None)
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
            return None          # heartbeats and the like: dropped while over budget
        entry = held.get(session_id)
        if entry is not None:    # the newest rerun supersedes the held one ...
            if not (kind == "fragment" and _kind(entry[0]) == "rerun"):
                held[session_id] = (msg, client, entry[2])
            return None          # ... but a fragment's never a full one's (which redraws it too)
        loop = asyncio.get_event_loop()
        held[session_id] = (msg, client, loop.call_later(wait, _release, self, session_id))
        return None

    guarded._guarded = True  # type: ignore[attr-defined]
    Runtime.handle_backmsg = guarded
    _fragments_on_the_page_shown()

    kwargs = starlette_server._get_uvicorn_config_kwargs

    def capped_kwargs(*a, **k):
        out = kwargs(*a, **k)
        out["ws_max_size"] = min(int(out.get("ws_max_size") or INBOUND_MAX_BYTES), INBOUND_MAX_BYTES)
        return out

    starlette_server._get_uvicorn_config_kwargs = capped_kwargs

    from starlette.middleware import Middleware
    from streamlit.web.server.starlette import starlette_app

    make_mw = starlette_app.create_streamlit_middleware

    def with_browser_cookie(*a, **k):
        return [*make_mw(*a, **k), Middleware(BrowserCookie)]

    starlette_app.create_streamlit_middleware = with_browser_cookie


# --------------------------------------------------------------------------- sign-in
SIGNIN_ATTEMPTS = None   # ui.kit.safe.Attempts, made on first use
MAX_FORM_BYTES = 4096


def signin_attempts(environ=os.environ):
    """The sign-in limits: ``APP_SIGNIN_PER_MIN`` per address (10) and ``APP_SIGNIN_TOTAL_PER_MIN``
    for the whole server (60), both a minute."""
    from ui.kit import safe

    def num(name, default):
        try:
            return max(1, int(environ.get(name, default)))
        except ValueError:
            return default

    return safe.Attempts(per_address=num("APP_SIGNIN_PER_MIN", 10),
                         total=num("APP_SIGNIN_TOTAL_PER_MIN", 60))


def configured_key(environ=os.environ) -> str | None:
    """The instructor key: ``$APP_INSTRUCTOR_KEY``, else ``[instructor] key`` of the secrets."""
    key = environ.get("APP_INSTRUCTOR_KEY", "")
    if not key:
        try:
            import streamlit as st

            sec = st.secrets.get("instructor", {}) if "instructor" in st.secrets else {}
            key = sec.get("key", "") if hasattr(sec, "get") else ""
        except Exception:  # noqa: BLE001 - no secrets file
            key = ""
    return key if isinstance(key, str) and key.strip() else None


def check_key_strength(environ=os.environ) -> None:
    """Stop the server at start when the configured instructor key is short or guessable."""
    from ui.kit.safe import MAKE_KEY, weak_key

    key = configured_key(environ)
    why = weak_key(key) if key else None
    if why:
        sys.exit(f"ui.server.serve: the instructor key (APP_INSTRUCTOR_KEY or [instructor] key in "
                 f".streamlit/secrets.toml) is refused: {why}. Make a strong one with\n"
                 f"    {MAKE_KEY}\nand set it again.")


def safe_next(value) -> str:
    """A path on this server to send the browser back to (anything else: the home page)."""
    v = str(value or "")
    if not v.startswith("/") or v.startswith("//") or len(v) > 1000 or any(c in v for c in "\\\r\n"):
        return "/"
    return v


def _reply(status: int, lang: str, text_key: str, back: str, **fmt):
    """A small page in the sign-in's language with its message and a link back."""
    import html

    from starlette.responses import HTMLResponse

    from ui.kit.i18n import Text

    t = Text("instructor", lang if lang in ("en", "zh") else "en")
    msg, link = html.escape(t(text_key, **fmt)), html.escape(back, quote=True)
    body = (f'<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="4;url={link}">'
            f'<title>{html.escape(t("signin.title"))}</title><p>{msg}</p><p><a href="{link}">←</a></p>')
    return HTMLResponse(body, status_code=status, headers={"Cache-Control": "no-store"})


async def _form(request) -> dict:
    from urllib.parse import parse_qs

    raw = b""
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_FORM_BYTES:
            return {}
    return {k: v[0] for k, v in parse_qs(raw.decode("utf-8", "replace")).items()}


def _same_origin(request) -> bool:
    from urllib.parse import urlsplit

    origin = request.headers.get("origin")
    return origin is None or urlsplit(origin).netloc == request.headers.get("host", "")


def _cookie_flags(request) -> dict:
    https = request.headers.get("x-forwarded-proto", request.url.scheme) == "https"
    return {"httponly": True, "samesite": "strict", "secure": https, "path": "/"}


async def signin(request):
    import hmac
    import time

    from starlette.responses import RedirectResponse

    from ui.kit import safe

    global SIGNIN_ATTEMPTS
    if SIGNIN_ATTEMPTS is None:
        SIGNIN_ATTEMPTS = signin_attempts()
    form = await _form(request)
    back, lang = safe_next(form.get("next")), form.get("ui_lang") or form.get("lang", "en")
    if lang in ("en", "zh") and "lang=" not in back:  # back in the language the form was shown in
        back += ("&" if "?" in back else "?") + f"lang={lang}"
    if not _same_origin(request):
        return _reply(403, lang, "signin.wrong", back)
    addr = client_address(request.headers.items(), request.client.host if request.client else None)
    wait = SIGNIN_ATTEMPTS.wait(addr)
    if wait:
        return _reply(429, lang, "signin.wait", back, s=int(wait) + 1)
    key, typed = configured_key(), form.get("key", "")
    if key is None or safe.weak_key(key) or not hmac.compare_digest(typed.encode(), key.encode()):
        return _reply(403, lang, "signin.wrong", back)
    resp = RedirectResponse(back, status_code=303)
    resp.set_cookie(safe.COOKIE, safe.make_token(key, time.time()), max_age=safe.COOKIE_TTL_S,
                    **_cookie_flags(request))
    return resp


async def signout(request):
    from starlette.responses import RedirectResponse

    from ui.kit import safe

    form = await _form(request)
    back = safe_next(form.get("next"))
    if _same_origin(request):   # on every replica: the shared store keeps it until the cookie expires
        from ui.teaching.class_store import get_store

        try:
            store = get_store()
        except Exception:  # noqa: BLE001 - no store could be made: this process only
            store = None
        safe.revoke(request.cookies.get(safe.COOKIE), store=store)
    resp = RedirectResponse(back, status_code=303)
    resp.delete_cookie(safe.COOKIE, **_cookie_flags(request))
    return resp


def signin_routes(base: str = "") -> list:
    from starlette.routing import Route

    base = f"/{base.strip('/')}" if base.strip("/") else ""
    return [Route(f"{base}/_app/signin", signin, methods=["POST"]),
            Route(f"{base}/_app/signout", signout, methods=["POST"])]


def install_signin_routes() -> None:
    from streamlit import config
    from streamlit.web.server.starlette import starlette_app

    make = starlette_app.create_streamlit_routes
    if getattr(make, "_with_signin", False):
        return

    def with_signin(runtime):
        from ui.kit.chart import asset_routes

        base = str(config.get_option("server.baseUrlPath") or "")
        return signin_routes(base) + asset_routes(base) + list(make(runtime))

    with_signin._with_signin = True  # type: ignore[attr-defined]
    starlette_app.create_streamlit_routes = with_signin


def main(argv: list[str] | None = None) -> None:
    safe_threading_layer()
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.web import cli

    check_threading_layer()
    from sim.warm import start_background

    from ui.server import prepare

    prepare.start()  # app and page modules imported in the background, before the first visit
    # kernels compile in child processes (pages use NumPy paths until then), then load here
    start_background(on_ready=prepare.load_kernels)
    PagesManager.uses_pages_directory = False
    if not clear_cache_allowed():
        refuse_clear_cache()
    install_guards()
    _keep_fresh_downloads()
    install_signin_routes()
    check_key_strength()
    os.environ.setdefault("STREAMLIT_SERVER_MAX_WIDGET_STATE_SIZE", "1")  # MB, after parsing too
    args = sys.argv[1:] if argv is None else argv
    cli.main(["run", str(APP), *args], prog_name="streamlit")


if __name__ == "__main__":
    main()
