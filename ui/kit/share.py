"""Joining a class: the addresses students open, and the share link as a QR code.

``python -m ui.kit.share [PORT]`` prints ``http://<address>:PORT`` for every LAN address of this machine
(``make serve-class`` prints them before it serves on all interfaces). :func:`qr_svg` draws a link
as an SVG QR code (segno) for the sidebar's "Share this view", large enough to scan from the back
of a room when the screen is projected.
"""

from __future__ import annotations

import functools
import ipaddress
import os as _os
import re as _re
import socket
import subprocess
import sys


def lan_addresses() -> list[str]:
    """This machine's IPv4 addresses that other machines can reach (no loopback, no link-local)."""
    found: list[str] = []
    try:
        out = subprocess.run(["ip", "-4", "-o", "addr", "show", "up"], capture_output=True, text=True, timeout=3).stdout
        found += [line.split()[3].split("/")[0] for line in out.splitlines() if len(line.split()) > 3]
    except (OSError, subprocess.SubprocessError):
        pass
    try:  # the address of the default route (a UDP "connect" sends nothing)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))
            found.append(s.getsockname()[0])
    except OSError:
        pass
    try:
        found += [ai[4][0] for ai in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)]
    except OSError:
        pass
    out_: list[str] = []
    for a in found:
        try:
            ip = ipaddress.IPv4Address(a)
        except ValueError:
            continue
        if ip.is_loopback or ip.is_link_local or ip.is_unspecified or a in out_:
            continue
        out_.append(a)
    return out_


_QR = {"error": "m", "micro": False}
_QR_STYLE = {"dark": "#000", "light": "#fff", "border": 3}


@functools.lru_cache(maxsize=256)
def qr_svg(url: str, scale: int = 6) -> str:
    """The SVG document of a QR code of ``url`` (error correction M, dark on white, quiet zone kept),
    with its ``xmlns``: a browser draws an SVG as an image (``<img>``, ``st.image``) only with it."""
    import io

    import segno

    buf = io.BytesIO()
    segno.make(url, **_QR).save(buf, kind="svg", scale=scale, xmldecl=False, svgns=True, **_QR_STYLE)
    return buf.getvalue().decode("utf-8")


@functools.lru_cache(maxsize=256)
def qr_data_uri(url: str) -> str:
    """:func:`qr_svg` as a ``data:image/svg+xml`` URI (for an ``<img>``)."""
    import base64

    return "data:image/svg+xml;base64," + base64.b64encode(qr_svg(url).encode()).decode("ascii")


LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1", "[::1]", "0.0.0.0")


def is_loopback(url: str) -> bool:
    """True when ``url`` names this machine only (localhost, 127.x, ::1): nobody else can open it."""
    from urllib.parse import urlsplit

    try:
        host = (urlsplit(url).hostname or "").lower()
    except ValueError:
        return False
    if host in LOOPBACK_HOSTS or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@functools.lru_cache(maxsize=1)
def _lan_cached() -> tuple[str, ...]:
    return tuple(lan_addresses())


def lan_links(url: str) -> list[str]:
    """``url`` with its loopback host replaced by each LAN address of this machine (as ``make
    serve-class`` prints them): the links other machines in the room can open."""
    from urllib.parse import urlsplit, urlunsplit

    u = urlsplit(url)
    port = f":{u.port}" if u.port else ""
    return [urlunsplit((u.scheme, f"{a}{port}", u.path, u.query, u.fragment)) for a in _lan_cached()]


def loopback_warning(url: str, text) -> None:
    """A warning under a link built from a loopback address: students cannot open it; it names the
    LAN addresses to use instead. ``text`` is a ``ui.kit.i18n.Text`` with ``view.loopback`` /
    ``view.loopback_none`` (common.toml)."""
    import streamlit as st

    if not is_loopback(url):
        return
    links = lan_links(url)
    if links:
        st.warning(text("view.loopback", links="\n".join(f"- `{x}`" for x in links[:4])), icon="⚠️")
    else:
        st.warning(text("view.loopback_none"), icon="⚠️")


def main(argv: list[str]) -> int:
    port = argv[0] if argv else "8501"
    addrs = lan_addresses()
    print("Students open one of these addresses (same network as this machine):")
    for a in addrs or ["<this machine's address>"]:
        print(f"    http://{a}:{port}")
    if not addrs:
        print("  (no LAN address found: is this machine on the classroom network?)")
    print("Each page's sidebar, 'Share this view', shows the link and its QR code.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))


def show_qr(url: str, caption: str) -> None:
    """The QR code of ``url`` under the share link (sidebar), with one line on how to use it."""
    import html

    import streamlit as st

    if not url.startswith(("http://", "https://")):
        return  # no address known (tests, bare mode): a code of a relative link would not open
    from ui.kit.i18n import Text
    from ui.kit.lang import current_lang

    loopback_warning(url, Text("common", current_lang()))
    # an <img> of the SVG: st.html's sanitiser drops inline <svg>
    st.html(f'<div class="tos-qr"><img alt="QR: {html.escape(url)}" src="{qr_data_uri(url)}"></div>')
    st.caption(caption)


def glossary_link(stem: str, lang: str, label: str) -> None:
    """The footer's link to the glossary page (on every page but the glossary itself)."""
    import streamlit as st

    from ui.kit.nav import PAGES, page

    entry = next((e for e in PAGES if e.stem == "glossary"), None)
    if entry is None or stem == "glossary":
        return
    st.divider()
    try:
        st.page_link(page(entry, lang), label=label, icon=":material/translate:", query_params={"lang": lang})
    except st.errors.StreamlitAPIException:
        # A run in Streamlit's legacy pages/-folder mode (the first pass of a deep link right after a
        # start, and AppTest) has registered pages/glossary/page.py as a file page: link by URL instead.
        st.markdown(f":material/translate: [{label}](glossary?lang={lang})")


#: query entries a share link never carries: sharing a view must not share the class, nor a
#: student's own progress in a self-paced lesson (ui.teaching.lesson_run)
PRIVATE_QUERY = ("class", "lesson", "me")


def share_url(query: dict) -> str:
    """This page's address with ``query`` as its query string (the sidebar's share link), built
    from the server's own idea of its address (:func:`share_base`), never the address a client
    reports; never with a class code (:data:`PRIVATE_QUERY`); at most :data:`MAX_SHARE_URL`
    characters."""
    import streamlit as st
    from urllib.parse import urlencode

    try:
        ctx = st.context
        base = share_base(ctx.url or "", ctx.headers.get("Host"), ctx.headers.get("X-Forwarded-Proto"))
    except Exception:  # noqa: BLE001 - no context (tests)
        base = ""
    url = f"{base}?{urlencode({k: v for k, v in query.items() if k not in PRIVATE_QUERY})}"
    return url if len(url) <= MAX_SHARE_URL else f"{base}"


# --------------------------------------------------------------------------- the server's address
# (the share link's part owned with the server's safety: a client cannot make the QR encoder work on
# an address of its choosing, nor put a foreign host into the link the class scans)
PUBLIC_URL_ENV = "APP_PUBLIC_URL"  #: e.g. https://sphere.example.org (behind a proxy: set it)
MAX_SHARE_URL = 2000
_PAGE = _re.compile(r"[A-Za-z0-9_-]{0,60}")
_HOST = _re.compile(r"[A-Za-z0-9.-]{1,253}(:[0-9]{1,5})?|\[[0-9A-Fa-f:.]{2,45}\](:[0-9]{1,5})?")


def share_base(reported_url: str, host: str | None, proto: str | None = None, environ=_os.environ) -> str:
    """``scheme://host[/base]/<page>`` for the share link and the class join link: the configured
    public address (``APP_PUBLIC_URL``, set it where a proxy rewrites the address) or else the address
    the browser itself used (its Host header, as every proxy passes it on, and the scheme it reports
    through ``X-Forwarded-Proto``), under Streamlit's ``server.baseUrlPath``. A Host that is not a
    host name or address (a path, a user, a 5 MB string) gives ``""``: no link, no QR code. Only the
    page's name is taken from the URL the client reports, and a client can only ever change its own
    link: the server does the same bounded work (at most :data:`MAX_SHARE_URL` characters to encode)
    whatever it sends."""
    from urllib.parse import urlsplit

    try:
        seg = urlsplit(str(reported_url)[:500]).path.rstrip("/").rsplit("/", 1)[-1]
    except ValueError:
        seg = ""
    page = seg if _PAGE.fullmatch(seg) else ""
    public = str(environ.get(PUBLIC_URL_ENV, "")).strip().rstrip("/")
    if public.startswith(("http://", "https://")) and len(public) <= 200:
        return f"{public}/{page}"
    h = str(host or "")[:300]
    if not _HOST.fullmatch(h):
        return ""
    scheme = "https" if str(proto or "").split(",")[0].strip().lower() == "https" else "http"
    return f"{scheme}://{h}{_base_path()}/{page}"


def _base_path() -> str:
    """Streamlit's ``server.baseUrlPath`` as ``/path`` (``""`` when the app is served at the root)."""
    try:
        import streamlit as st

        path = str(st.get_option("server.baseUrlPath") or "").strip("/")
    except Exception:  # noqa: BLE001 - no config
        path = ""
    return f"/{path}" if path and _re.fullmatch(r"[A-Za-z0-9._~/-]{1,100}", path) else ""
