"""Instructor mode: who is an instructor, and the sidebar sign-in.

Configuration (nothing configured -> instructor mode is off and nothing of it is shown):

* **Shared key** — ``APP_INSTRUCTOR_KEY`` in the environment, or in ``.streamlit/secrets.toml``::

      [instructor]
      key = "..."     # make one: python -c "import secrets; print(secrets.token_urlsafe(24))"

  A short or guessable key (:func:`ui.teaching.signin.weak_key`) stops ``ui.server.serve`` at start with a message
  saying how to make one (elsewhere it counts as not configured). The sidebar's sign-in box is a
  plain HTML form that posts the key to the server's route ``/_app/signin`` (``ui.server.serve``): it is
  compared there in constant time, attempts are limited per client address (10 a minute) and for
  the whole server, and a right key sets a signed, HttpOnly cookie (:data:`ui.teaching.signin.COOKIE`) that
  expires after :data:`ui.teaching.signin.COOKIE_TTL_S`. Every run checks that cookie (the one the browser
  presented when its websocket opened), never anything kept in the session: a reload keeps the
  teacher signed in, a bare session id does not, and the key never travels in a link.

* **OpenID Connect** — an ``[auth]`` block in ``.streamlit/secrets.toml`` (see Streamlit's
  ``st.login``; needs the ``Authlib`` package). Then the sidebar shows "Sign in" and, optionally,
  only the listed addresses are instructors (otherwise anyone the provider lets in)::

      [auth]
      redirect_uri = "https://example.org/oauth2callback"
      cookie_secret = "..."
      client_id = "..."
      client_secret = "..."
      server_metadata_url = "https://accounts.example.org/.well-known/openid-configuration"

      [instructor]
      emails = ["teacher@example.org"]

  When ``[auth]`` is configured it is used instead of the shared key. With named providers only
  (``[auth.google]`` …, no ``client_id`` in ``[auth]`` itself) the first one is used. An address on
  the list counts only if the provider says it is verified (``email_verified = true``).
  Signing out (``st.logout``) also signs out at the provider when it offers an
  ``end_session_endpoint``. Streamlit brings the browser back to the app's home page after either.

With the key the sign-in is the cookie: every tab of that browser, until it expires or "Sign out"
(which clears it and revokes it in this server process). Changing the key signs every browser out
on its next run (the cookie is signed with a hash of the key).
With OpenID Connect the sign-in is Streamlit's signed cookie (every tab, 30 days) until "Sign out".
"""

from __future__ import annotations

import hashlib
import logging
import os
import time

import streamlit as st
from streamlit.errors import StreamlitAuthError

from ui.teaching import signin
from ui.kit.i18n import Text
from ui.kit.safe import literal

KEY_ENV = signin.KEY_ENV
MIN_KEY_LEN = signin.MIN_KEY_LEN
SIGNIN_PATH = "/_app/signin"  # the server's routes (ui.server.serve)
SIGNOUT_PATH = "/_app/signout"
_now = time.monotonic  # replaced by tests
_log = logging.getLogger(__name__)


# --------------------------------------------------------------------------- configuration
#: (id of st.secrets, time read, {section: dict}) — reading st.secrets when there is no secrets file
#: is slow on every access (it looks for the files again each time); sections are re-read at most
#: once a second, or at once when Streamlit swaps its secrets object (AppTest does).
_secrets_cache: tuple | None = None
RECHECK_S = 1.0


def _read_sections() -> dict:
    out = {}
    try:
        for name in ("auth", "instructor"):
            if name in st.secrets:
                sec = st.secrets[name]
                out[name] = dict(sec) if hasattr(sec, "keys") else sec
    except Exception:  # noqa: BLE001 - no secrets.toml, unreadable file: not configured
        pass
    return out


def _secrets_section(name: str):
    """``st.secrets[name]`` as a plain dict, or None (no secrets file, no such section)."""
    global _secrets_cache
    now = _now()
    c = _secrets_cache
    if c is None or c[0] != id(st.secrets) or not 0 <= now - c[1] < RECHECK_S:
        c = _secrets_cache = (id(st.secrets), now, _read_sections())
    return c[2].get(name)


def _configured_key() -> str | None:
    key = signin.configured_key(os.environ, _secrets_section)
    if key is None:
        return None
    weak = signin.weak_key(key)
    if weak:
        _log.warning("instructor key ignored: %s (make one with: %s)", weak, signin.MAKE_KEY)
        return None
    return key


def mode() -> str | None:
    """``"oidc"`` (an ``[auth]`` block), ``"key"`` (a shared key) or None (instructor mode off)."""
    if _secrets_section("auth"):
        return "oidc"
    if _configured_key() is not None:
        return "key"
    return None


def _request_cookies():
    """The cookies the browser sent when this session's websocket opened (``st.context.cookies``)."""
    try:
        return st.context.cookies
    except Exception:  # noqa: BLE001 - no script context
        return {}


#: where the cookies come from; tests replace it (AppTest cannot send cookies)
_cookie_source = _request_cookies


def _oidc_user() -> dict | None:
    """The signed-in account's claims (``st.user``), or None when nobody is signed in."""
    try:
        user = st.user
        return dict(user.to_dict()) if user.is_logged_in else None
    except Exception:  # noqa: BLE001 - no script context, no [auth] block
        return None


def _verified(user: dict) -> bool:
    """True only when the provider says the address is verified (``email_verified = true``; a few
    providers send the string ``"true"``). A missing claim is not a verification: anyone can open
    an account at some providers with an address they do not own."""
    v = user.get("email_verified")
    return v is True or (isinstance(v, str) and v.strip().lower() == "true")


def _oidc_instructor() -> bool:
    user = _oidc_user()
    if user is None:
        return False
    sec = _secrets_section("instructor")
    allowed = sec.get("emails") if isinstance(sec, dict) else None
    if not allowed:
        _warn_open_list()
        return True
    if isinstance(allowed, str):  # emails = "one@example.org" instead of a list
        allowed = [allowed]
    email = str(user.get("email") or "").strip().lower()
    return bool(email) and _verified(user) and email in {str(e).strip().lower() for e in allowed}


_warned_open = False


def _warn_open_list() -> None:
    """Once per process: with no list, a public provider (Google, Microsoft) admits anyone."""
    global _warned_open
    if not _warned_open:
        _warned_open = True
        _log.warning(
            "OpenID Connect sign-in without [instructor] emails: every account the provider "
            "admits is an instructor (set the list unless the provider admits instructors only)"
        )


def _oidc_provider() -> str | None:
    """The provider ``st.login`` uses: None (Streamlit's default, the keys in ``[auth]`` itself)
    or, when ``[auth]`` has only named provider tables, the first of them."""
    auth = _secrets_section("auth") or {}
    if "client_id" in auth or "server_metadata_url" in auth:
        return None
    named = [k for k, v in auth.items() if hasattr(v, "keys") and "client_id" in v]
    return named[0] if named else None


def _revocations():
    """Where sign-outs are kept for every replica: the class store (Redis when configured)."""
    from ui.teaching.class_store import get_store

    try:
        return get_store()
    except Exception:  # noqa: BLE001 - a store that cannot even be made: this process's record only
        return None


def is_instructor() -> bool:
    """True when this browser session is signed in as an instructor (and the mode is still on)."""
    m = mode()
    if m == "oidc":
        return _oidc_instructor()
    if m == "key":
        try:
            token = _cookie_source().get(signin.COOKIE)
        except Exception:  # noqa: BLE001 - a cookie jar of another shape: no cookie
            token = None
        return signin.token_ok(token, _configured_key(), store=_revocations())
    return False


def identity() -> str | None:
    """Who is signed in as an instructor, as a name for the class store (not a secret, never shown):
    the signed cookie's nonce (one sign-in: every tab and reload that carries the cookie), or a hash
    of the provider's account address. None when this session is not an instructor's."""
    if not is_instructor():
        return None
    if mode() == "oidc":
        email = str((_oidc_user() or {}).get("email") or "").strip().lower()
        return "oidc:" + hashlib.sha256(email.encode()).hexdigest()[:32]
    try:
        p = signin._parts(_cookie_source().get(signin.COOKIE))
    except Exception:  # noqa: BLE001 - a cookie jar of another shape
        p = None
    return f"key:{p[1]}" if p else None


# --------------------------------------------------------------------------- sidebar
def sidebar(lang: str) -> bool | None:
    """The sign-in box in the sidebar; draws nothing and returns None when instructor mode is off,
    else returns whether this session is an instructor's (app.py then draws the class box,
    ``ui.teaching.classroom.sidebar``)."""
    m = mode()
    if m is None:
        return None
    t = Text("instructor", lang)
    teacher = is_instructor()
    user = _oidc_user() if m == "oidc" else None
    with st.sidebar:
        if teacher:
            st.caption(t("signin.signed_in"))
            if user:
                _account(t, user)
            _sign_out_button(t, m)
        else:
            # an account that is signed in but not an instructor: say so at once (box open)
            with st.expander(t("signin.title"), icon=":material/school:", expanded=user is not None):
                if m == "oidc":
                    if user is not None:
                        st.caption(t("signin.not_listed"))
                        _account(t, user)
                        _sign_out_button(t, m)
                    else:
                        _login_button(t)
                else:
                    _key_form(t)
    return teacher


def _account(t: Text, user: dict) -> None:
    """The signed-in account (the provider's text: shown literally)."""
    who = str(user.get("email") or user.get("name") or user.get("sub") or "?").strip()
    st.caption(t("signin.account", who=literal(who)))


def _login_button(t: Text) -> None:
    if st.button(t("signin.oidc"), key="_instructor_login"):
        try:
            st.login(_oidc_provider())
        except StreamlitAuthError as e:  # an incomplete [auth] block: say so, details in the log
            _log.error("instructor sign-in is misconfigured: %s", e)
            st.error(t("signin.misconfigured"))


def _sign_out_button(t: Text, m: str) -> None:
    if m == "key":  # the cookie is HttpOnly: only the server's route can clear it
        st.html(_form(SIGNOUT_PATH, t, "", t("signin.sign_out")))
        return
    if st.button(t("signin.sign_out"), key="_instructor_out"):
        if m == "oidc":
            # the browser goes to /auth/logout (the cookie is cleared, then the provider's logout)
            # and comes back to a new session. No st.rerun() here: a rerun clears the session's
            # outgoing queue and could drop that redirect (the cookie would stay signed in).
            st.logout()
        else:
            st.rerun()


def _here() -> str:
    """This page's path and query (where the sign-in route sends the browser back)."""
    from urllib.parse import urlsplit

    from urllib.parse import urlencode

    try:
        path = urlsplit(str(st.context.url or "")).path or "/"
    except Exception:  # noqa: BLE001 - no context (tests)
        path = "/"
    try:  # the page's current view (st.context.url is the address the session started with)
        query = urlencode(st.query_params.to_dict())
    except Exception:  # noqa: BLE001
        query = ""
    return path + (f"?{query}" if query else "")


def _base_path() -> str:
    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}" if base else ""


def _form(path: str, t: Text, field: str, button: str) -> str:
    """A plain HTML form posting to the server's route (escaped: nothing in it is Markdown)."""
    import html

    e = lambda v: html.escape(str(v), quote=True)  # noqa: E731
    return (
        f'<form method="post" action="{e(_base_path() + path)}" class="app-signin">'
        f'<input type="hidden" name="next" value="{e(_here())}">'
        # not name="lang": Streamlit's HTML sanitizer drops names that shadow a DOM property
        f'<input type="hidden" name="ui_lang" value="{e(t.lang)}">{field}'
        f'<button type="submit">{e(button)}</button></form>' + _FORM_CSS
    )


_FORM_CSS = """<style>
.app-signin { display: flex; flex-direction: column; gap: 0.5rem; }
.app-signin label { font-size: 0.875rem; display: flex; flex-direction: column; gap: 0.25rem; }
.app-signin input[type=password] { padding: 0.45rem 0.6rem; border-radius: 0.5rem;
  border: 1px solid rgba(128,128,128,0.5); background: transparent; color: inherit; font: inherit; }
.app-signin button { align-self: flex-start; padding: 0.35rem 0.9rem; border-radius: 0.5rem;
  border: 1px solid rgba(128,128,128,0.5); background: transparent; color: inherit; font: inherit;
  cursor: pointer; }
</style>"""


def _key_form(t: Text) -> None:
    import html

    field = (
        f'<label>{html.escape(t("signin.key"))}<input type="password" name="key" required '
        f'maxlength="200" autocomplete="current-password"></label>'
    )
    st.html(_form(SIGNIN_PATH, t, field, t("signin.submit")))
