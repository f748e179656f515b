"""The budgets of the websocket messages (point 5 of ``ui/server/serve.py``): token buckets per
session, per browser and per address (:class:`Guard`), who a client is (:func:`client_address`,
:func:`client_key`, the :class:`BrowserCookie` middleware), the widget states Streamlit never makes
(:func:`clean_widget_states`) and the notice a slowed session gets (:func:`was_slowed`). Time is
passed in; :func:`ui.server.adapters.install_guards` feeds the server's messages through them.
"""

from __future__ import annotations

import collections
import functools
import os

#: the largest websocket frame a client may send (uvicorn refuses larger ones before buffering them)
INBOUND_MAX_BYTES = 2**20
#: Streamlit makes every widget id with this prefix (``streamlit.runtime.state.common``)
WIDGET_ID_PREFIX = "$$ID-"
MAX_WIDGET_ID = 400


def clean_widget_states(widget_states) -> int:
    """Drop the entries of a ``WidgetStates`` proto whose ids Streamlit never makes (a bare
    session-state name such as ``_instructor``, an empty or huge id). Returns how many."""
    bad = [
        i
        for i, w in enumerate(widget_states.widgets)
        if not (w.id.startswith(WIDGET_ID_PREFIX) and len(w.id) <= MAX_WIDGET_ID)
    ]
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
        if len(self._state) > self.MAX_KEYS:  # forget keys whose bucket has refilled (idle ones)
            self._state = {k: v for k, v in self._state.items() if v[0] + (now - v[1]) * self.rate < self.burst}
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

    def __init__(
        self,
        session_rate=3.0,
        session_burst=12.0,
        client_rate=4.0,
        client_burst=16.0,
        address_rate=60.0,
        address_burst=240.0,
        strike_window_s=20.0,
        strikes_to_close=300,
    ):
        self.session = Bucket(session_rate, session_burst)
        self.client = Bucket(client_rate, client_burst)
        #: a ceiling per address (a class behind one NAT shares it; clients without cookies too)
        self.address = Bucket(address_rate, address_burst)
        self.strike_window_s, self.strikes_to_close = strike_window_s, strikes_to_close
        self._strikes: dict = {}
        self.slowed = self.closed = 0
        self.dropped_polls = 0  #: stale timed fragment reruns dropped (:func:`_stale_fragment`)

    def admit(
        self, session_id: str, client_key, kind: str, now: float, address: str | None = None
    ) -> tuple[str, float]:
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
    from ui import streamlit_internals

    sid = streamlit_internals.session_id()
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
            logging.getLogger("ui.server.serve").warning(
                "%s: %r is not an address, a network or a prefix; ignored", TRUSTED_ENV, e
            )
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
    """The client's address: when the connection comes from a trusted proxy (nginx on this
    machine; :data:`TRUSTED_ENV` adds others), its ``X-Real-IP`` (nginx sets it), else the last
    entry of ``X-Forwarded-For`` (the address that proxy itself saw: Envoy and the Gateway API
    example of deploy/k8s append it; entries before it are the client's to choose); else the
    connection's own address (a student on the LAN cannot choose the address it is counted under)."""
    remote = remote or "?"
    if _trusted(remote):
        forwarded = ""
        for k, v in headers:
            if k.lower() == "x-real-ip" and v.strip():
                return v.strip()[:64]
            if k.lower() == "x-forwarded-for":
                forwarded = v  # the last such header: the nearest proxy's
        last = forwarded.rsplit(",", 1)[-1].strip()
        if last:
            return last[:64]
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
            k == b"cookie" and f"{BROWSER_COOKIE}=".encode() in v for k, v in scope.get("headers", ())
        ):
            return await self.app(scope, receive, send)
        import secrets

        value = f"{BROWSER_COOKIE}={secrets.token_urlsafe(12)}; Path=/; HttpOnly; SameSite=Lax".encode()

        async def send_with_cookie(msg):
            if msg.get("type") == "http.response.start":
                msg = {**msg, "headers": [*msg.get("headers", []), (b"set-cookie", value)]}
            await send(msg)

        return await self.app(scope, receive, send_with_cookie)
