"""The instructor's sign-in routes (point 6 of ``ui/server/serve.py``): ``POST /_app/signin``
checks the key under attempt limits and sets a signed, HttpOnly, expiring cookie; ``POST
/_app/signout`` clears it and revokes it on every replica. :func:`signin_routes` makes the two
Starlette routes; :func:`ui.server.adapters.install_signin_routes` adds them to Streamlit's.
"""

from __future__ import annotations

import os

from ui.server.budgets import BROWSER_COOKIE, client_address

SIGNIN_ATTEMPTS = None  # ui.teaching.signin.Attempts, made on first use
MAX_FORM_BYTES = 4096


def signin_attempts(environ=os.environ):
    """The allowances of wrong keys, each a minute: ``APP_SIGNIN_PER_BROWSER_PER_MIN`` per browser (5),
    ``APP_SIGNIN_PER_MIN`` per client address (30: a school behind one address), and
    ``APP_SIGNIN_TOTAL_PER_MIN`` for the whole server (120); shared by every replica through the
    class store when it is Redis. A right key counts nothing."""
    from ui.teaching import signin
    from ui.teaching.class_store import get_store

    def num(name, default):
        try:
            return max(1, int(environ.get(name, default)))
        except ValueError:
            return default

    try:
        store = get_store()
    except Exception:  # noqa: BLE001 - no store could be made: this process counts alone
        store = None
    return signin.Attempts(
        per_browser=num("APP_SIGNIN_PER_BROWSER_PER_MIN", 5),
        per_address=num("APP_SIGNIN_PER_MIN", 30),
        total=num("APP_SIGNIN_TOTAL_PER_MIN", 120),
        store=store,
    )


def safe_next(value) -> str:
    """A path on this server to send the browser back to (anything else: the home page)."""
    v = str(value or "")
    if not v.startswith("/") or v.startswith("//") or len(v) > 1000 or any(c in v for c in "\\\r\n"):
        return "/"
    return v


_PAGE = """<!doctype html><html lang="{lang}"><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>{title}</title>
<style>body{{font-family:system-ui,"Noto Sans CJK SC",sans-serif;max-width:36rem;margin:12vh auto;padding:0 1.25rem;
color:#1f1f1f;line-height:1.5}}h1{{font-size:1.5rem}}p.msg{{font-size:1.15rem}}
a{{display:inline-block;margin-top:1rem;padding:.55rem 1rem;border:1px solid #0b57d0;border-radius:.5rem;
color:#0b57d0;text-decoration:none}}a:focus-visible{{outline:2px solid #0072B2;outline-offset:2px}}</style>
<main><h1>{title}</h1><p class="msg" role="alert">{msg}</p><a href="{link}">{back}</a></main></html>"""


def _reply(status: int, lang: str, text_key: str, back: str, **fmt):
    """A small page in the sign-in's language: its title, the message and a link back to the app. It
    stays until the instructor follows the link (no refresh that takes the message away unread)."""
    import html

    from starlette.responses import HTMLResponse

    from ui.kit.i18n import Text

    lang = lang if lang in ("en", "zh") else "en"
    t = Text("instructor", lang)
    body = _PAGE.format(
        lang="zh-Hans" if lang == "zh" else "en",
        title=html.escape(t("signin.title")),
        msg=html.escape(t(text_key, **fmt)),
        link=html.escape(back, quote=True),
        back=html.escape(t("signin.back")),
    )
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

    from ui.teaching import signin

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
    browser = request.cookies.get(BROWSER_COOKIE)
    wait = SIGNIN_ATTEMPTS.wait(addr, browser)
    if wait:
        return _reply(429, lang, "signin.wait", back, s=int(wait) + 1)
    key, typed = signin.configured_key(), form.get("key", "")
    if key is None or signin.weak_key(key) or not hmac.compare_digest(typed.encode(), key.encode()):
        SIGNIN_ATTEMPTS.failed(addr, browser)
        return _reply(403, lang, "signin.wrong", back)
    resp = RedirectResponse(back, status_code=303)
    resp.set_cookie(
        signin.COOKIE, signin.make_token(key, time.time()), max_age=signin.COOKIE_TTL_S, **_cookie_flags(request)
    )
    return resp


async def signout(request):
    from starlette.responses import RedirectResponse

    from ui.teaching import signin

    form = await _form(request)
    back = safe_next(form.get("next"))
    if _same_origin(request):  # on every replica: the shared store keeps it until the cookie expires
        from ui.teaching.class_store import get_store

        try:
            store = get_store()
        except Exception:  # noqa: BLE001 - no store could be made: this process only
            store = None
        signin.revoke(request.cookies.get(signin.COOKIE), store=store)
    resp = RedirectResponse(back, status_code=303)
    resp.delete_cookie(signin.COOKIE, **_cookie_flags(request))
    return resp


def signin_routes(base: str = "") -> list:
    from starlette.routing import Route

    base = f"/{base.strip('/')}" if base.strip("/") else ""
    return [
        Route(f"{base}/_app/signin", signin, methods=["POST"]),
        Route(f"{base}/_app/signout", signout, methods=["POST"]),
    ]
