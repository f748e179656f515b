"""A browser-less Streamlit session over the websocket protocol (asyncio).

One :class:`StreamlitSession` is one browser tab: it opens
``ws://host:port/_stcore/stream`` with the ``streamlit`` subprotocol, sends
``BackMsg.rerun_script`` messages the way the frontend does (page, query
string, widget states, context info) and reads ``ForwardMsg`` messages until
``script_finished``.  Each rerun returns a :class:`RunResult` with the time it
took, the exceptions the page raised (``delta.new_element.exception``), the
``st.error`` alerts it showed and the widgets it rendered.

It keeps what a browser keeps between reruns: the widget values (so a rerun
with one changed slider sends every other widget's current value too), the
query string the page wrote (``page_info_changed``), the current page, the
cookies set by a load balancer (``sticky sessions``) and the server's session
id, which it offers again on :meth:`StreamlitSession.reconnect` like the
frontend does after a dropped connection.

Used by ``bench/classroom.py`` (many sessions against one server),
``scripts/scale_check.py`` (sessions through nginx in front of replicas) and
``scripts/image_check.sh`` (the container image).  Example::

    import asyncio
    from harness.wsclient import StreamlitSession

    async def main():
        async with StreamlitSession("http://127.0.0.1:8501") as s:
            first = await s.rerun()                     # default page
            print(first.seconds, first.exceptions, sorted(s.pages))
            r = await s.rerun(page="two_point")          # another page
            r = await s.rerun(widgets={"beta": 2.0})     # drag a slider
            print(r.seconds, r.ok, s.widget_values["beta"])

    asyncio.run(main())

Command line (a quick probe)::

    python harness/wsclient.py http://127.0.0.1:8501 --page two_point --json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any
from collections.abc import Iterable, Mapping

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

try:  # websockets >= 13
    from websockets.asyncio.client import connect as _ws_connect
except ImportError:  # pragma: no cover - older websockets
    from websockets import connect as _ws_connect  # type: ignore[no-redef]
from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException

__all__ = ["RunResult", "SessionError", "StreamlitSession", "widget_key", "percentile", "http_get"]

#: Reasons ``script_finished`` can carry that end a run the user waits for.
_FINISHED_FINAL = {
    ForwardMsg.FINISHED_SUCCESSFULLY: "ok",
    ForwardMsg.FINISHED_WITH_COMPILE_ERROR: "compile_error",
    ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY: "ok",
}
#: The run was interrupted by another rerun (``st.rerun``, a newer request):
#: keep reading, a new run follows.
_FINISHED_EARLY = ForwardMsg.FINISHED_EARLY_FOR_RERUN

_ID_PREFIX = "$$ID-"


class SessionError(RuntimeError):
    """The session could not connect, or the connection broke during a run."""


def widget_key(element_id: str) -> str | None:
    """The user key of a widget from its element id, or ``None`` if it has none.

    Streamlit ids look like ``$$ID-<hexdigest>-<user key>``; widgets created
    without ``key=`` end in ``-None``.
    """
    if not element_id.startswith(_ID_PREFIX):
        return element_id or None
    parts = element_id.split("-", 2)
    if len(parts) < 3 or parts[2] == "None":
        return None
    return parts[2]


def percentile(values: Iterable[float], q: float) -> float:
    """The q-th percentile (0..100) by linear interpolation; NaN when empty."""
    xs = sorted(values)
    if not xs:
        return float("nan")
    if len(xs) == 1:
        return xs[0]
    pos = (len(xs) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def http_get(
    url: str, *, headers: Mapping[str, str] | None = None, timeout: float = 10.0
) -> tuple[int, dict[str, str], list[str], bytes]:
    """Blocking GET; returns (status, headers, Set-Cookie values, body).

    Non-2xx statuses are returned, not raised.
    """
    req = urllib.request.Request(url, headers=dict(headers or {}))
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310
            status, msg, body = resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as exc:
        status, msg, body = exc.code, exc.headers, exc.read()
    hdrs = {k.lower(): v for k, v in msg.items()}
    return status, hdrs, msg.get_all("Set-Cookie") or [], body


@dataclass
class RunResult:
    """What one rerun produced, as the browser would have seen it."""

    ok: bool
    """Finished, no exception element, no protocol error."""
    seconds: float
    """From sending the rerun request to ``script_finished``."""
    page_script_hash: str = ""
    exceptions: list[str] = field(default_factory=list)
    """``"Type: message"`` of every exception element the run showed."""
    alerts: list[tuple[str, str]] = field(default_factory=list)
    """``(format, body)`` of every ``st.error``/``st.warning``/... shown."""
    element_counts: dict[str, int] = field(default_factory=dict)
    """How many elements of each type (``plotly_chart``, ``slider``...)."""
    media_urls: list[str] = field(default_factory=list)
    """Server-side files the page refers to (download buttons, images): they
    live in the memory of the replica that ran the script."""
    messages: int = 0
    bytes: int = 0
    finished: str = ""
    """``ok``, ``compile_error``, or empty when the run did not finish."""
    error: str | None = None
    """A protocol/transport problem: ``timeout``, ``closed: ...``, ``page_not_found``."""

    @property
    def error_alerts(self) -> list[str]:
        """Bodies of the ``st.error`` alerts."""
        return [body for fmt, body in self.alerts if fmt == "ERROR"]


class StreamlitSession:
    """One Streamlit browser session driven over the websocket protocol.

    Parameters
    ----------
    base_url:
        ``http://host:port`` (optionally with a base path) of the app or the
        load balancer in front of it.
    locale, timezone:
        Sent in ``context_info`` (``st.context.locale`` / ``timezone``).
    headers:
        Extra HTTP headers for the handshake (e.g. ``Origin``).
    cookies:
        Initial cookies; cookies set by responses to :meth:`load_index` are
        added, as a browser would.
    timeout:
        Default seconds a rerun may take before it counts as ``timeout``.
    """

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8501",
        *,
        locale: str = "en-US",
        timezone: str = "UTC",
        headers: Mapping[str, str] | None = None,
        cookies: Mapping[str, str] | None = None,
        timeout: float = 60.0,
        open_timeout: float = 10.0,
        pace_s: float = 0.3,
    ) -> None:
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in ("http", "https"):
            raise ValueError(f"base_url must be http(s)://host:port, got {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self._ws_url = urllib.parse.urlunsplit(
            (
                "wss" if parsed.scheme == "https" else "ws",
                parsed.netloc,
                parsed.path.rstrip("/") + "/_stcore/stream",
                "",
                "",
            )
        )
        self.locale = locale
        self.timezone = timezone
        self.headers = dict(headers or {})
        self.cookies: dict[str, str] = dict(cookies or {})
        self.timeout = timeout
        self.open_timeout = open_timeout
        self.pace_s = pace_s
        """A widget change is sent at least this long after the previous run finished: a browser
        draws a run before a person can act on it. Without it, back-to-back new values look like a
        held key to the server, which waits for a burst's newest value (``ui.server.runs.settled``)."""
        self._run_end: float | None = None

        self._ws: Any = None
        self.session_id: str | None = None
        """Server session id from the first ``new_session`` (kept for reconnects)."""
        self.response_headers: dict[str, str] = {}
        """Headers of the last websocket handshake response (lower-case names)."""
        self.pages: dict[str, dict[str, Any]] = {}
        """Pages from the ``navigation`` message, by url path."""
        self.page_script_hash: str = ""
        """The page the last run showed."""
        self.query_string: str = ""
        """The query string the browser would now show (pages may rewrite it)."""
        self._states: dict[str, WidgetState] = {}
        self._kinds: dict[str, str] = {}
        self._elements: dict[str, Any] = {}
        self._seen_navigation = False
        self.connects = 0
        self.wire_bytes = 0  # what the socket delivered, compressed or not (see _count_wire)
        self.auto_reruns: dict[str, float] = {}
        """Fragments the browser would rerun on a timer (``st.fragment(run_every=)``): id -> seconds."""
        """How many websockets this session opened (1 + reconnects)."""

    # ------------------------------------------------------------------ setup
    async def __aenter__(self) -> StreamlitSession:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def connected(self) -> bool:
        ws = self._ws
        if ws is None:
            return False
        state = getattr(ws, "state", None)
        return getattr(state, "name", "OPEN") == "OPEN"

    def cookie_header(self) -> str:
        return "; ".join(f"{k}={v}" for k, v in self.cookies.items())

    def _take_cookies(self, set_cookie_values: Iterable[str]) -> None:
        for raw in set_cookie_values:
            jar: SimpleCookie = SimpleCookie()
            try:
                jar.load(raw)
            except Exception:  # noqa: BLE001 - a malformed cookie is ignored, as browsers do
                continue
            for name, morsel in jar.items():
                self.cookies[name] = morsel.value

    async def load_index(self, path: str = "/") -> tuple[int, dict[str, str]]:
        """GET the HTML page like a browser's first request; keeps its cookies.

        Returns (status, response headers).  Behind a sticky load balancer this
        is the request that picks the replica.
        """
        hdrs = dict(self.headers)
        if self.cookies:
            hdrs["Cookie"] = self.cookie_header()
        status, rh, set_cookies, _ = await asyncio.to_thread(
            http_get, self.base_url + path, headers=hdrs, timeout=self.open_timeout
        )
        self._take_cookies(set_cookies)
        return status, rh

    async def connect(self, *, resume: bool = False) -> None:
        """Open the websocket.  With ``resume`` offer the old session id.

        The server keeps the session if it still has it (same replica) and
        otherwise starts a new one; either way the next :meth:`rerun` renders
        the page again, as the frontend does after reconnecting.
        """
        protocols = ["streamlit"]
        if resume and self.session_id:
            # Same layout as the frontend: [protocol, xsrf token, session id].
            protocols += ["PLACEHOLDER_AUTH_TOKEN", self.session_id]
        hdrs = dict(self.headers)
        if self.cookies:
            hdrs["Cookie"] = self.cookie_header()
        try:
            self._ws = await _ws_connect(
                self._ws_url,
                subprotocols=protocols,  # type: ignore[arg-type]
                additional_headers=hdrs or None,
                open_timeout=self.open_timeout,
                max_size=None,
                ping_interval=20,
                ping_timeout=20,
            )
        except (TimeoutError, OSError, InvalidStatus, WebSocketException) as exc:
            self._ws = None
            raise SessionError(f"connect {self._ws_url}: {type(exc).__name__}: {exc}") from exc
        self._count_wire(self._ws)
        resp = getattr(self._ws, "response", None)
        self.response_headers = {k.lower(): v for k, v in resp.headers.raw_items()} if resp is not None else {}
        self.connects += 1

    def _count_wire(self, conn) -> None:
        """Count the bytes the socket delivers (``wire_bytes``: frames as sent, compressed when the
        server compresses them), beside ``RunResult.bytes`` (the messages' payloads)."""
        received = getattr(conn, "data_received", None)
        if received is None:  # pragma: no cover - another websockets implementation
            return

        def counted(data: bytes) -> None:
            self.wire_bytes += len(data)
            received(data)

        conn.data_received = counted

    async def reconnect(self, *, attempts: int = 20, delay: float = 0.25, max_delay: float = 2.0) -> int:
        """Reconnect after a dropped websocket, with backoff like the frontend.

        Returns the number of attempts used; raises :class:`SessionError` if
        every attempt failed.
        """
        await self._drop()
        last: Exception | None = None
        for i in range(1, attempts + 1):
            try:
                await self.connect(resume=True)
                return i
            except SessionError as exc:
                last = exc
                await asyncio.sleep(delay)
                delay = min(max_delay, delay * 1.6)
        raise SessionError(f"reconnect failed after {attempts} attempts: {last}")

    async def _drop(self) -> None:
        ws, self._ws = self._ws, None
        if ws is not None:
            try:
                await asyncio.wait_for(ws.close(), 2.0)
            except Exception:  # noqa: BLE001 - the socket is going away anyway
                pass

    async def close(self) -> None:
        await self._drop()

    # ----------------------------------------------------------------- widgets
    @property
    def widget_values(self) -> dict[str, Any]:
        """Current value of every keyed widget the session has seen, by key."""
        out: dict[str, Any] = {}
        for wid, state in self._states.items():
            key = widget_key(wid)
            if key is None:
                continue
            kind = state.WhichOneof("value")
            val = getattr(state, kind) if kind else None
            if kind in ("double_array_value", "int_array_value", "string_array_value"):
                val = list(val.data)
                if len(val) == 1 and self._kinds.get(wid) == "slider":
                    val = val[0]
            out[key] = val
        return out

    def widget(self, key: str) -> Any:
        """The last element proto of the widget with this user key (or id)."""
        for wid, el in self._elements.items():
            if wid == key or widget_key(wid) == key:
                return el
        raise KeyError(f"no widget with key {key!r} on the last page")

    def _id_for(self, key: str) -> str:
        for wid in self._elements:
            if wid == key or widget_key(wid) == key:
                return wid
        raise KeyError(f"no widget with key {key!r}; known: {sorted(k for k in map(widget_key, self._elements) if k)}")

    def set_widget(self, key: str, value: Any) -> None:
        """Set a widget's value for the next rerun, as a user's input would."""
        wid = self._id_for(key)
        kind = self._kinds[wid]
        el = self._elements[wid]
        st = WidgetState(id=wid)
        if kind == "slider":
            vals = value if isinstance(value, (list, tuple)) else [value]
            st.double_array_value.data.extend(float(v) for v in vals)
        elif kind == "number_input":
            st.double_value = float(value)
        elif kind in ("checkbox",):
            st.bool_value = bool(value)
        elif kind in ("selectbox", "radio"):
            opts = list(el.options)
            if isinstance(value, int) and not isinstance(value, bool) and str(value) not in opts:
                value = opts[value]
            st.string_value = str(value)
        elif kind in ("multiselect", "button_group"):
            st.string_array_value.data.extend(str(v) for v in value)
        elif kind == "text_input" or kind == "text_area":
            st.string_value = str(value)
        elif kind in ("button",):
            st.trigger_value = bool(value)
        else:
            raise ValueError(f"setting a {kind} widget is not supported (key {key!r})")
        self._states[wid] = st

    async def clear_caches(self) -> None:
        """Send ``clear_cache`` (the frontend's "Clear caches"): the server empties
        ``st.cache_data`` and ``st.cache_resource`` for *every* session and this session's
        state. For measurements of cold-cache cost (``bench/latency.py --worst``)."""
        if not self.connected:
            raise SessionError("not connected")
        back = BackMsg()
        back.clear_cache = True
        await self._ws.send(back.SerializeToString())

    def click(self, key: str) -> None:
        """Press a button on the next rerun."""
        self.set_widget(key, True)

    @staticmethod
    def _initial_state(kind: str, el: Any) -> WidgetState | None:
        """The value a browser reports for a freshly rendered widget."""
        wid = el.id
        st = WidgetState(id=wid)
        if kind == "slider":
            vals = list(el.value) if el.set_value else list(el.default)
            st.double_array_value.data.extend(vals)
        elif kind == "number_input":
            if el.set_value and el.HasField("value"):
                st.double_value = el.value
            elif el.HasField("default"):
                st.double_value = el.default
            else:
                return None
        elif kind == "checkbox":
            st.bool_value = el.value if el.set_value else el.default
        elif kind in ("selectbox", "radio"):
            if el.set_value and el.HasField("raw_value"):
                st.string_value = el.raw_value
            elif el.HasField("default") and 0 <= el.default < len(el.options):
                st.string_value = el.options[el.default]
            else:
                return None
        else:
            return None
        return st

    def _note_widget(self, kind: str, el: Any) -> None:
        wid = getattr(el, "id", "")
        if not wid:
            return
        self._elements[wid] = el
        self._kinds[wid] = kind
        forced = bool(getattr(el, "set_value", False))
        if wid not in self._states or forced:
            st = self._initial_state(kind, el)
            if st is not None:
                self._states[wid] = st
            elif forced:
                self._states.pop(wid, None)

    # ------------------------------------------------------------------ reruns
    def _fill_context_info(self, msg: Any, url_path: str) -> None:
        msg.timezone = self.timezone
        msg.timezone_offset = 0
        msg.locale = self.locale
        q = f"?{self.query_string}" if self.query_string else ""
        msg.url = f"{self.base_url}/{url_path}{q}"
        msg.is_embedded = False
        msg.color_scheme = "light"

    async def rerun(
        self,
        page: str | None = None,
        *,
        query_string: str | None = None,
        widgets: Mapping[str, Any] | None = None,
        page_script_hash: str | None = None,
        timeout: float | None = None,
    ) -> RunResult:
        """Run the script once and wait for it to finish.

        Parameters
        ----------
        page:
            Url path of the page (``"two_point"``; ``""`` for the default page).
            ``None`` reruns the page shown last (a widget interaction).
        query_string:
            Replaces the browser's query string (without ``?``); ``None`` keeps it.
        widgets:
            ``{key: value}`` set before the rerun (see :meth:`set_widget`).
        page_script_hash:
            Alternative to ``page``.
        """
        if not self.connected:
            raise SessionError("not connected")
        switching = page is not None or page_script_hash is not None
        if query_string is not None:
            self.query_string = query_string.lstrip("?")
        back = BackMsg()
        rs = back.rerun_script
        rs.query_string = self.query_string
        url_path = ""
        if switching:
            # A new page: the browser forgets the old page's widgets.
            self._states.clear()
            self._elements.clear()
            self._kinds.clear()
            if page_script_hash is None and page is not None and page in self.pages:
                page_script_hash = self.pages[page]["page_script_hash"]
            if page_script_hash:
                rs.page_script_hash = page_script_hash
            else:
                rs.page_name = page or ""
            url_path = page or ""
        else:
            rs.page_script_hash = self.page_script_hash
            url_path = next(
                (p for p, info in self.pages.items() if info["page_script_hash"] == self.page_script_hash), ""
            )
        if widgets:
            for key, value in widgets.items():
                self.set_widget(key, value)
            if not switching and self._run_end is not None:  # as a person after the page is drawn
                await asyncio.sleep(max(0.0, self.pace_s - (time.perf_counter() - self._run_end)))
        rs.widget_states.widgets.extend(self._states.values())
        self._fill_context_info(rs.context_info, url_path)
        # Buttons fire once: clear triggers after sending.
        for wid, st in list(self._states.items()):
            if st.WhichOneof("value") == "trigger_value":
                del self._states[wid]
        return await self._run(back.SerializeToString(), timeout or self.timeout)

    async def _run(self, payload: bytes, timeout: float) -> RunResult:
        res = RunResult(ok=False, seconds=0.0)
        counts: dict[str, int] = {}
        t0 = time.perf_counter()
        deadline = t0 + timeout
        ws = self._ws
        try:
            if payload:  # empty: only read what is still on its way (see drain in bench/classclient.py)
                await ws.send(payload)
            while True:
                left = deadline - time.perf_counter()
                if left <= 0:
                    raise TimeoutError
                raw = await asyncio.wait_for(ws.recv(), left)
                if isinstance(raw, str):
                    continue
                res.messages += 1
                res.bytes += len(raw)
                msg = ForwardMsg()
                msg.ParseFromString(raw)
                kind = msg.WhichOneof("type")
                if kind == "new_session":
                    ns = msg.new_session
                    if ns.HasField("initialize") and ns.initialize.session_id:
                        self.session_id = ns.initialize.session_id
                    self.page_script_hash = ns.page_script_hash
                    res.page_script_hash = ns.page_script_hash
                    if not self._seen_navigation:
                        # Only apps without st.navigation list pages here.
                        for p in ns.app_pages:
                            self._note_page(p)
                elif kind == "navigation":
                    # Each navigation message is the complete, current list
                    # (a fresh server may first send the pages/ folder).
                    self.pages.clear()
                    self._seen_navigation = True
                    for p in msg.navigation.app_pages:
                        self._note_page(p)
                    if msg.navigation.page_script_hash:
                        self.page_script_hash = msg.navigation.page_script_hash
                        res.page_script_hash = msg.navigation.page_script_hash
                elif kind == "page_info_changed":
                    self.query_string = msg.page_info_changed.query_string
                elif kind == "auto_rerun":
                    # st.fragment(run_every=...): the browser reruns this fragment on a timer
                    self.auto_reruns[msg.auto_rerun.fragment_id] = msg.auto_rerun.interval
                elif kind == "page_not_found":
                    res.error = "page_not_found"
                elif kind == "delta":
                    self._note_delta(msg, res, counts)
                elif kind == "script_finished":
                    status = msg.script_finished
                    if status == _FINISHED_EARLY:
                        continue
                    res.finished = _FINISHED_FINAL.get(status, str(status))
                    break
        except TimeoutError:
            res.error = f"timeout after {timeout:g} s"
        except ConnectionClosed as exc:
            res.error = f"closed: {exc}"
            self._ws = None
        except (OSError, WebSocketException) as exc:
            res.error = f"{type(exc).__name__}: {exc}"
            self._ws = None
        self._run_end = time.perf_counter()
        res.seconds = self._run_end - t0
        res.element_counts = counts
        if res.finished == "compile_error":
            res.exceptions.append("compile error")
        res.ok = res.finished == "ok" and not res.exceptions and res.error is None
        return res

    def _note_page(self, p: Any) -> None:
        if getattr(p, "external_url", ""):
            return
        self.pages[p.url_pathname] = {
            "page_script_hash": p.page_script_hash,
            "page_name": p.page_name,
            "url_pathname": p.url_pathname,
            "section_header": p.section_header,
            "is_default": p.is_default,
        }

    def _note_delta(self, msg: Any, res: RunResult, counts: dict[str, int]) -> None:
        delta = msg.delta
        if delta.WhichOneof("type") != "new_element":
            return
        el = delta.new_element
        kind = el.WhichOneof("type")
        if kind is None:
            return
        counts[kind] = counts.get(kind, 0) + 1
        if kind == "exception":
            ex = el.exception
            res.exceptions.append(f"{ex.type}: {ex.message}")
        elif kind == "download_button":
            if el.download_button.url:
                res.media_urls.append(el.download_button.url)
        elif kind == "imgs":
            res.media_urls.extend(img.url for img in el.imgs.imgs if img.url)
        elif kind == "alert":
            fmt = el.alert.DESCRIPTOR.fields_by_name["format"].enum_type.values_by_number
            res.alerts.append((fmt[el.alert.format].name, el.alert.body))
        elif kind in (
            "slider",
            "number_input",
            "checkbox",
            "selectbox",
            "radio",
            "multiselect",
            "button_group",
            "text_input",
            "text_area",
            "button",
        ):
            self._note_widget(kind, getattr(el, kind))


# ---------------------------------------------------------------------- CLI
async def _probe(args: argparse.Namespace) -> int:
    s = StreamlitSession(args.url, locale=args.locale, timeout=args.timeout)
    out: dict[str, Any] = {"url": args.url}
    try:
        await s.connect()
        runs = []
        r = await s.rerun(page=args.page or "", query_string=args.query or "")
        runs.append(r)
        for _ in range(args.repeat - 1):
            runs.append(await s.rerun())
        for item in args.set or []:
            key, _, val = item.partition("=")
            try:
                value: Any = json.loads(val)
            except json.JSONDecodeError:
                value = val
            runs.append(await s.rerun(widgets={key: value}))
        out.update(
            session_id=s.session_id,
            pages=sorted(s.pages),
            page_script_hash=s.page_script_hash,
            query_string=s.query_string,
            widgets=s.widget_values,
            runs=[
                {
                    "ok": x.ok,
                    "seconds": round(x.seconds, 4),
                    "exceptions": x.exceptions,
                    "alerts": x.alerts,
                    "elements": x.element_counts,
                    "error": x.error,
                }
                for x in runs
            ],
        )
        ok = all(x.ok for x in runs)
    except SessionError as exc:
        out["error"] = str(exc)
        ok = False
    finally:
        await s.close()
    if args.json:
        print(json.dumps(out, default=str))
    else:
        for i, x in enumerate(out.get("runs", [])):
            print(
                f"run {i}: ok={x['ok']} {x['seconds'] * 1000:.0f} ms elements={x['elements']} "
                f"exceptions={x['exceptions']} error={x['error']}"
            )
        print(f"pages={out.get('pages')} widgets={out.get('widgets')} error={out.get('error')}")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("url", nargs="?", default="http://127.0.0.1:8501")
    ap.add_argument("--page", default="", help="url path of the page ('' = default page)")
    ap.add_argument("--query", default="", help="query string, without '?'")
    ap.add_argument("--set", action="append", metavar="KEY=JSON", help="then rerun with a widget changed")
    ap.add_argument("--repeat", type=int, default=1, help="reruns at the same state")
    ap.add_argument("--locale", default="en-US")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--json", action="store_true")
    return asyncio.run(_probe(ap.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
