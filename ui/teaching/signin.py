"""The instructor's sign-in, what the server's routes (:mod:`ui.server.signin_routes`) and the
instructor check (:mod:`ui.teaching.instructor`) share; no Streamlit here. The right to be an
instructor is a signed cookie the browser must present, not anything a session id brings back.

- :func:`configured_key`: the one place the instructor key is looked up (``$APP_INSTRUCTOR_KEY``,
  else ``[instructor] key`` of Streamlit's secrets); :func:`weak_key`: the strength rule the server
  checks at start and the sign-in applies again.
- :func:`make_token` / :func:`token_ok` / :func:`revoke`: the signed, expiring cookie and its
  sign-out on every replica (through the shared store).
- :class:`Attempts`: how many *wrong* keys are tried, per browser, per client address and for the
  whole server (shared by every replica through the store when Redis is configured). A right key
  is never made to wait for other people's wrong ones: a student at the same school address who
  mistypes uses up only their own browser's allowance; the address's and the server's allowances
  are larger and run out only under a deliberate stream of guesses.
"""

from __future__ import annotations

import hashlib as _hashlib
import hmac as _hmac
import os
import secrets as _secrets
import threading as _threading
import time as _time

KEY_ENV = "APP_INSTRUCTOR_KEY"
COOKIE = "app_instructor"
COOKIE_TTL_S = 8 * 3600  #: a school day; the cookie expires then (and at every key change)
MIN_KEY_LEN = 20
MIN_KEY_DISTINCT = 10
MAKE_KEY = 'python -c "import secrets; print(secrets.token_urlsafe(24))"'
#: fragments that make a key guessable whatever its length
_GUESSABLE = (
    "password",
    "passwort",
    "secret",
    "changeme",
    "change me",
    "letmein",
    "qwerty",
    "123456",
    "abcdef",
    "instructor",
    "teacher",
    "admin",
    "correct horse",
    "example",
    "default",
)


def weak_key(key: str) -> str | None:
    """Why ``key`` is too weak to be the instructor key (None: strong enough)."""
    if len(key) < MIN_KEY_LEN:
        return f"shorter than {MIN_KEY_LEN} characters"
    if len(set(key)) < MIN_KEY_DISTINCT:
        return f"fewer than {MIN_KEY_DISTINCT} different characters"
    low = key.lower()
    hit = next((g for g in _GUESSABLE if g in low), None)
    if hit:
        return f"contains the guessable word {hit!r}"
    return None


def _mac(key: str, text: str) -> str:
    k = _hashlib.sha256(b"app-instructor-cookie-v1\0" + key.encode()).digest()
    return _hmac.new(k, text.encode(), _hashlib.sha256).hexdigest()


def make_token(key: str, now: float | None = None, ttl_s: float = COOKIE_TTL_S) -> str:
    """A cookie value ``<expiry>.<nonce>.<mac>`` signed with (a hash of) the key."""
    exp = int((now if now is not None else _time.time()) + ttl_s)
    body = f"{exp}.{_secrets.token_urlsafe(12)}"
    return f"{body}.{_mac(key, body)}"


#: nonces of tokens signed out through this process (another tab's websocket still carries the
#: cookie). The callers also pass the shared store (``ui.teaching.class_store.get_store()``: Redis when
#: configured), which holds them for every replica; this record covers a store out of reach.
_REVOKED: dict[str, int] = {}
_UNSAVED: dict[str, int] = {}  # revoked here while the store could not be written: written later
_REVOKED_LOCK = _threading.Lock()


def _parts(token) -> tuple[int, str, str] | None:
    if not isinstance(token, str) or len(token) > 200 or token.count(".") != 2:
        return None
    exp, nonce, mac = token.split(".")
    return (int(exp), nonce, mac) if exp.isdigit() and len(exp) < 12 else None


def _warn(what: str, exc: Exception) -> None:
    import logging

    logging.getLogger("ui.teaching.signin").warning("%s (store: %s: %s)", what, type(exc).__name__, exc)


def _flush_unsaved(store) -> None:
    """Write the revocations a failed store write left behind."""
    with _REVOKED_LOCK:
        for n, e in list(_UNSAVED.items()):
            store.revoke(n, e)
            del _UNSAVED[n]


def revoked(nonce: str, store=None) -> bool:
    """True when a token with this nonce was signed out: through this process, or through any
    replica sharing ``store`` (an object with ``revoke(nonce, until)`` and ``revoked(nonce)``). A
    store out of reach leaves this process's own record (and a warning in the log)."""
    if store is not None and _UNSAVED:
        try:
            _flush_unsaved(store)
        except Exception as exc:  # noqa: BLE001 - tried again at the next check
            _warn("a sign-out is known to this process only for now", exc)
    if nonce in _REVOKED:
        return True
    if store is None:
        return False
    try:
        return bool(store.revoked(nonce))
    except Exception as exc:  # noqa: BLE001 - an unreachable store never breaks a page
        _warn("sign-outs through other replicas unknown for now", exc)
        return False


def token_ok(token, key: str | None, now: float | None = None, store=None) -> bool:
    """True for an unexpired token signed with ``key`` and not revoked (see :func:`revoked`)."""
    p = _parts(token)
    if p is None or not key:
        return False
    exp, nonce, mac = p
    now = now if now is not None else _time.time()
    return exp > now and _hmac.compare_digest(mac, _mac(key, f"{exp}.{nonce}")) and not revoked(nonce, store)


def revoke(token, now: float | None = None, store=None) -> None:
    """Sign a token out: in this process and, when given, in the shared ``store`` until the token's
    own expiry (its time to live there), so every replica refuses it (expired entries are dropped
    here as new ones come)."""
    p = _parts(token)
    if p is None:
        return
    now = now if now is not None else _time.time()
    exp, nonce = p[0], p[1]
    with _REVOKED_LOCK:
        for d in (_REVOKED, _UNSAVED):
            for n in [n for n, e in d.items() if e <= now]:
                del d[n]
        if exp <= now:
            return
        _REVOKED[nonce] = exp
    if store is None:
        return
    try:
        _flush_unsaved(store)
        store.revoke(nonce, exp)
    except Exception as exc:  # noqa: BLE001 - written at the next chance
        with _REVOKED_LOCK:
            _UNSAVED[nonce] = exp
        _warn("a sign-out is known to this process only for now", exc)


def configured_key(environ=os.environ, secrets=None) -> str | None:
    """The instructor key as configured (``$APP_INSTRUCTOR_KEY``, else ``[instructor] key`` of the
    secrets), or None when none is. ``secrets``: a function giving a secrets section by name (the
    instructor check passes its cached reader); by default Streamlit's ``st.secrets`` is read."""
    key = environ.get(KEY_ENV, "")
    if not key:
        try:
            sec = (secrets or _secrets_section)("instructor") or {}
            key = sec.get("key", "") if hasattr(sec, "get") else ""
        except Exception:  # noqa: BLE001 - no secrets file, or an unreadable one
            key = ""
    return key if isinstance(key, str) and key.strip() else None


def _secrets_section(name: str):
    import streamlit as st

    return st.secrets.get(name) if name in st.secrets else None


class Attempts:
    """Wrong sign-in keys, counted per browser (its address and browser cookie), per client address
    and for the whole server, each over ``window_s``. :meth:`wait` says how long a sign-in must wait
    before its key is even checked (0.0: check it now); :meth:`failed` counts a wrong key. A right key
    counts nothing. With a ``store`` that has ``add_failure``/``failures`` (the class store: Redis
    when configured) the counts are shared by every replica; without one, or when the store cannot
    be reached, this process counts alone."""

    def __init__(
        self, per_browser: int = 5, per_address: int = 30, total: int = 120, window_s: float = 60.0, store=None
    ):
        self.limits = {"browser": per_browser, "address": per_address, "total": total}
        self.window_s, self.store = window_s, store
        self._seen: dict[str, list[float]] = {}
        self._lock = _threading.Lock()

    def _scopes(self, address: str, browser: str | None) -> dict[str, str]:
        a = str(address)[:64]
        return {"browser": f"b:{a}:{str(browser or '-')[:64]}", "address": f"a:{a}", "total": "t"}

    def _local(self, key: str, now: float, add: bool) -> tuple[int, float]:
        with self._lock:
            if len(self._seen) > 20_000:  # forget quiet browsers and addresses
                self._seen = {k: v for k, v in self._seen.items() if v and now - v[-1] < self.window_s}
            times = [t for t in self._seen.get(key, ()) if now - t < self.window_s]
            if add:
                times.append(now)
            self._seen[key] = times
            return len(times), (self.window_s - (now - times[0])) if times else 0.0

    def _shared(self, key: str, now: float, add: bool) -> tuple[int, float] | None:
        if self.store is None or not hasattr(self.store, "failures"):
            return None
        try:
            n = (self.store.add_failure if add else self.store.failures)(key, self.window_s, now)
        except Exception as exc:  # noqa: BLE001 - the store is out of reach: count here
            _warn("sign-in attempts are counted by this process only for now", exc)
            return None
        return int(n), self.window_s - (now % self.window_s)

    def _count(self, key: str, now: float, add: bool) -> tuple[int, float]:
        local = self._local(key, now, add)
        shared = self._shared(key, now, add)
        return max(local, shared) if shared is not None else local

    def wait(self, address: str, browser: str | None = None, now: float | None = None) -> float:
        """Seconds before a key from this browser may be checked (0.0: now); counts nothing."""
        now = now if now is not None else _time.time()
        waits = [
            left
            for scope, key in self._scopes(address, browser).items()
            for n, left in [self._count(key, now, False)]
            if n >= self.limits[scope]
        ]
        return max(max(waits), 0.01) if waits else 0.0

    def failed(self, address: str, browser: str | None = None, now: float | None = None) -> None:
        """Count one wrong key from this browser."""
        now = now if now is not None else _time.time()
        for key in self._scopes(address, browser).values():
            self._count(key, now, True)
