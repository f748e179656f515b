"""Streamlit's fonts served as the subsets under ``assets/vendor/fonts/`` (``scripts/vendor_fonts.py``).

A first visit loaded 600-770 kB of fonts: Material Symbols (366 kB, 4,009 icons; the app and
Streamlit's frontend name 632 of them), Source Sans 3 upright and italic (301 kB; Latin, Greek and
Cyrillic). The subsets keep what this app draws: 64 kB of icons, 97 + 81 kB of text fonts.

A request for ``…/static/media/<name>`` whose name the manifest lists is answered with the subset
(same address: Streamlit's CSS names its fonts by a hash of the original, so a Streamlit upgrade
brings new names and the subsets simply stop applying). A subset is served only when its file has
the manifest's sha256 and the manifest was built from the installed Streamlit; otherwise the
original is served (logged once), so a missing or stale subset never breaks a page. Answered by
:class:`ui.server.compress.CompressedAssets` (``make run``, ``make serve-class`` and a plain
``streamlit run``), with the headers Streamlit's static handler gives a hashed file (immutable for
a year) and a strong ``ETag`` of the subset.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
VENDOR = ROOT / "assets" / "vendor" / "fonts"
MANIFEST = VENDOR / "manifest.json"
PREFIX = "/static/media/"
CACHE_CONTROL = b"public, max-age=31536000, immutable"
log = logging.getLogger("ui.server.fonts")


def _streamlit_version() -> str:
    import streamlit

    return streamlit.__version__


@functools.cache
def table() -> dict[str, tuple[bytes, bytes]]:
    """``{file name: (subset bytes, ETag)}`` of every usable subset (``{}`` when none is)."""
    try:
        m = json.loads(MANIFEST.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        log.warning("%s is missing or unreadable: Streamlit's whole fonts are served", MANIFEST)
        return {}
    if m.get("streamlit") != _streamlit_version():
        log.warning(
            "the font subsets were built for Streamlit %s, not the installed %s: the whole fonts are served",
            m.get("streamlit"),
            _streamlit_version(),
        )
        return {}
    out = {}
    for name, f in (m.get("fonts") or {}).items():
        path = VENDOR / str(f.get("file", ""))
        try:
            body = path.read_bytes()
        except OSError:
            log.warning("font subset %s is missing: the whole font is served", path.name)
            continue
        digest = hashlib.sha256(body).hexdigest()
        if digest != f.get("sha256") or "/" in name:
            log.warning("font subset %s differs from its manifest: the whole font is served", path.name)
            continue
        out[name] = (body, f'"{digest[:32]}"'.encode())
    return out


def subset_for(path: str) -> tuple[bytes, bytes] | None:
    """The subset (bytes, ETag) that answers a request for ``path``, or None."""
    head, sep, name = path.rpartition(PREFIX)
    if not sep or "/" in name:
        return None
    return table().get(name)


def _matches(if_none_match: bytes, etag: bytes) -> bool:
    tags = {t.strip().removeprefix(b"W/") for t in if_none_match.split(b",")}
    return etag in tags or b"*" in tags


async def send_subset(scope, send, found: tuple[bytes, bytes]) -> None:
    """Answer a GET or HEAD with a subset: 200 with the bytes, or 304 when the client has them."""
    body, etag = found
    headers = {k.lower(): v for k, v in scope.get("headers", [])}
    not_modified = _matches(headers.get(b"if-none-match", b""), etag)
    out = [
        (b"content-type", b"font/woff2"),
        (b"cache-control", CACHE_CONTROL),
        (b"etag", etag),
    ]
    if not_modified:
        await send({"type": "http.response.start", "status": 304, "headers": out})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        return
    out.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": 200, "headers": out})
    await send({"type": "http.response.body", "body": b"" if scope.get("method") == "HEAD" else body})
