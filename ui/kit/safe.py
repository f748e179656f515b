"""Showing untrusted text (URL values, parameter-file keys and values, file names) literally, and
the instructor sign-in's primitives (the end of this module: the signed cookie, the attempt limits,
the key-strength rule) that the server's route (``ui.server.serve``) and ``ui.teaching.instructor`` share.

Every Streamlit text element except ``st.text``/``st.code`` renders Markdown with LaTeX
(``$…$``), GitHub autolinks, emoji and colour directives, so a value such as
``x` [Log in again](https://…)`` echoed inside a notice would close the notice's code span and
put a working link inside the app's own warning box. :func:`literal` turns any value into one
inline code span that CommonMark cannot leave: the fence is one backtick longer than the longest
run of backticks inside, so no character of the value can close it, and a code span's content is
never parsed as Markdown, HTML, LaTeX, a link or a directive. Line breaks and other invisible or
direction-changing characters are shown as escapes (a paragraph break would end the span), and
the value is cut to ``limit`` characters so a 10 kB link cannot flood the page.

Use it for every piece of user-controlled text placed into a Markdown string::

    st.warning(t("ui.notice_invalid", value=literal(f"{name}={raw}"), default=...))
"""
from __future__ import annotations

import html
import re

__all__ = ["inert_html", "literal", "visible"]

_TICKS = re.compile(r"`+")


def visible(value, limit: int = 60) -> str:
    """``value`` as a single line of visible characters, at most ``limit`` long (``…`` marks a cut).

    Line breaks, tabs, control and format characters (including bidi overrides such as U+202E)
    become their Python escapes (``\\n``, ``\\u202e``), so what is shown is what was sent.
    """
    s = str(value)
    if len(s) > 4 * limit:                      # never walk a huge string character by character
        s = s[: 4 * limit]
    s = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in s)
    if len(s) > limit or len(str(value)) > 4 * limit:
        s = s[: max(limit - 1, 0)] + "…"
    return s


def literal(value, limit: int = 60) -> str:
    """A Markdown inline code span that shows ``value`` (cut to ``limit`` characters) exactly.

    Inert in ``st.markdown``/``st.warning``/``st.error``/captions/labels: no link, no HTML, no
    LaTeX, no emphasis, no directive can come out of it, whatever the value holds.
    """
    s = visible(value, limit)
    if not s:
        return "` `"
    longest = max((len(m) for m in _TICKS.findall(s)), default=0)
    fence = "`" * (longest + 1)
    # CommonMark strips one space from each end when both ends are spaces; a value that starts or
    # ends with a backtick needs the space so the fence is not extended by it.
    pad = " " if (s[0] in "` " or s[-1] in "` ") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def inert_html(value, limit: int = 200) -> str:
    """``value`` (cut to ``limit`` characters, invisible characters as escapes) as HTML text for
    ``st.html``: every ``<``, ``&`` and quote escaped, so it is shown exactly as written. Used
    where a code span would look wrong (a preset's title under the sidebar's preset box): HTML
    text is never Markdown, so no autolink (``https://…``, ``www.…``, an e-mail address), no
    emphasis, no LaTeX and no directive can come out of it."""
    return html.escape(visible(value, limit), quote=True)


# --------------------------------------------------------------------------- the instructor's sign-in
# What the server's sign-in route (ui.server.serve) and the instructor check (ui.teaching.instructor) share; no
# Streamlit here. The right to be an instructor is a signed cookie the browser must present, not
# anything a session id brings back.
import hashlib as _hashlib
import hmac as _hmac
import secrets as _secrets
import threading as _threading
import time as _time

COOKIE = "app_instructor"
COOKIE_TTL_S = 8 * 3600           #: a school day; the cookie expires then (and at every key change)
MIN_KEY_LEN = 20
MIN_KEY_DISTINCT = 10
MAKE_KEY = 'python -c "import secrets; print(secrets.token_urlsafe(24))"'
#: fragments that make a key guessable whatever its length
_GUESSABLE = ("password", "passwort", "secret", "changeme", "change me", "letmein", "qwerty", "123456",
              "abcdef", "instructor", "teacher", "admin", "correct horse", "example", "default")


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
_UNSAVED: dict[str, int] = {}     # revoked here while the store could not be written: written later
_REVOKED_LOCK = _threading.Lock()


def _parts(token) -> tuple[int, str, str] | None:
    if not isinstance(token, str) or len(token) > 200 or token.count(".") != 2:
        return None
    exp, nonce, mac = token.split(".")
    return (int(exp), nonce, mac) if exp.isdigit() and len(exp) < 12 else None


def _warn(what: str, exc: Exception) -> None:
    import logging

    logging.getLogger("ui.kit.safe").warning("%s (store: %s: %s)", what, type(exc).__name__, exc)


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
    return (exp > now and _hmac.compare_digest(mac, _mac(key, f"{exp}.{nonce}"))
            and not revoked(nonce, store))


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


class Attempts:
    """Sign-in attempts: at most ``per_address`` a ``window_s`` per client address and ``total``
    a ``window_s`` for the whole server (a new session or connection does not reset either)."""

    def __init__(self, per_address: int = 10, total: int = 60, window_s: float = 60.0):
        self.per_address, self.total, self.window_s = per_address, total, window_s
        self._by: dict[str, list[float]] = {}
        self._all: list[float] = []
        self._lock = _threading.Lock()

    def wait(self, address: str, now: float | None = None) -> float:
        """0.0 and the attempt counted, or the seconds to wait (nothing counted)."""
        now = now if now is not None else _time.monotonic()
        with self._lock:
            self._all = [t for t in self._all if now - t < self.window_s]
            mine = [t for t in self._by.get(address, ()) if now - t < self.window_s]
            if len(self._by) > 10_000:          # forget quiet addresses
                self._by = {a: v for a, v in self._by.items() if v and now - v[-1] < self.window_s}
            waits = []
            if len(mine) >= self.per_address:
                waits.append(self.window_s - (now - mine[0]))
            if len(self._all) >= self.total:
                waits.append(self.window_s - (now - self._all[0]))
            if waits:
                self._by[address] = mine
                return max(max(waits), 0.01)
            mine.append(now)
            self._all.append(now)
            self._by[address] = mine
            return 0.0
