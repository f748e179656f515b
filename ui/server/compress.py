"""Text assets compressed once and served compressed: Streamlit's static files (its JavaScript,
CSS, the page document), the app's own ``/_app/`` assets (plotly.js), fonts that are not already
compressed.

Streamlit 1.67 serves its ``/static/`` files and the root document uncompressed on purpose
(``starlette_gzip_middleware._should_bypass_gzip``): Starlette's GZip middleware compresses every
response again and keeps nothing, and at a class's first minute that CPU competes with the page
runs. Here a response is compressed (gzip, level 9) the first time, in a worker thread, and the
result kept in memory keyed by its address and ``ETag`` (what Starlette's ``StaticFiles`` and
``FileResponse`` set from the file's size and time: a changed file is a new entry); thirty first
visits compress each file once. A response without an ``ETag`` (a page run's data, the health
check) is left to Streamlit's own middleware, which compresses the ones it compresses.

Brotli where the browser accepts it (every current browser does, over HTTPS and on localhost; 15-30 %
smaller than gzip on this JavaScript), gzip otherwise. Brotli's best level (11) costs about 1.2 s of
CPU per MB, so a body is first compressed at a fast level (5, ~20 ms per MB: the first visitor does
not wait) and then, on one background thread at low priority, once more at level 11; the cache then
holds the smaller body. gzip is level 9 at once (fast enough).

Only ``GET`` responses with status 200, no ``Content-Encoding`` and a text type
(:data:`COMPRESSIBLE`), for a client that accepts gzip or brotli; never the websocket. Streamlit's
fonts that have a subset (``ui.server.fonts``) are answered here too, before Streamlit sees the
request. The page document gets ``assets/first_paint.css`` (:func:`document_head`): what must hold
before the app's own CSS arrives with the first run. Installed by ``ui.server.adapters`` in
``make run`` / ``make serve-class`` and, at its first page run, in a plain ``streamlit run app.py``.
"""

from __future__ import annotations

import asyncio
import functools
import gzip
import hashlib
import json
import os
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ui.server import fonts

try:
    import brotli
except ImportError:  # an install without it: gzip only
    brotli = None

#: media types worth compressing (text); woff/woff2 fonts and images are compressed already
COMPRESSIBLE = (
    "text/",
    "application/javascript",
    "application/x-javascript",
    "application/json",
    "application/manifest+json",
    "image/svg+xml",
    "application/wasm",
    "font/ttf",
    "font/otf",
    "application/x-font-ttf",
    "application/vnd.ms-fontobject",
    "application/xml",
)
#: smaller bodies are sent as they are (a gzip header and a round of CPU are not worth it)
MIN_BYTES = 1024
#: the compressed bodies kept, at most (Streamlit's and the app's text assets a visit asks for
#: are ~3 MB compressed; every static file of Streamlit 1.67 together ~9 MB)
MAX_CACHED_BYTES = 48 * 2**20
LEVEL = 9  # gzip
BROTLI_FAST, BROTLI_BEST = 5, 11


def compressible(content_type: str) -> bool:
    ct = content_type.split(";", 1)[0].strip().lower()
    return ct.startswith(COMPRESSIBLE)


def _accepted(headers: list[tuple[bytes, bytes]]) -> set[str]:
    """The content codings a request's ``Accept-Encoding`` allows (q > 0)."""
    out: set[str] = set()
    for k, v in headers:
        if k.lower() == b"accept-encoding":
            for part in v.decode("latin-1").lower().split(","):
                name, _, q = part.strip().partition(";")
                if q.replace(" ", "") not in ("q=0", "q=0.0", "q=0.00", "q=0.000"):
                    out.add(name.strip())
    return out


def accepts_gzip(headers: list[tuple[bytes, bytes]]) -> bool:
    return bool(_accepted(headers) & {"gzip", "*"})


def encoding_for(headers: list[tuple[bytes, bytes]]) -> str | None:
    """``"br"``, ``"gzip"`` or None (send it as it is), for a request's headers."""
    ok = _accepted(headers)
    if brotli is not None and "br" in ok:
        return "br"
    return "gzip" if ok & {"gzip", "*"} else None


def _compress(raw: bytes, encoding: str, best: bool) -> bytes:
    if encoding == "br":
        return brotli.compress(raw, quality=BROTLI_BEST if best else BROTLI_FAST)
    return gzip.compress(raw, LEVEL, mtime=0)


def _low_priority() -> None:
    try:  # this thread only (Linux: a thread is a task of its own); elsewhere it stays as it is
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 15)
    except (AttributeError, OSError):
        pass


#: the one thread that recompresses at brotli's best level, one body at a time
_BEST = ThreadPoolExecutor(max_workers=1, thread_name_prefix="brotli-best", initializer=_low_priority)


class Cache:
    """Compressed bodies by (path, ETag, coding), least recently used first out beyond
    :data:`MAX_CACHED_BYTES`; one compression per key however many ask at once (and, for brotli,
    one later recompression at its best level, which replaces the body in place)."""

    def __init__(self, max_bytes: int = MAX_CACHED_BYTES):
        self.max_bytes = max_bytes
        self.items: OrderedDict[tuple, bytes] = OrderedDict()
        self.size = 0
        self.compressions = 0
        self.recompressions = 0
        self.hits = 0
        self.final: set[tuple] = set()  # keys whose body will not change (gzip; brotli once recompressed)
        self._lock = threading.Lock()
        self._pending: dict[tuple, asyncio.Future] = {}

    def get(self, key) -> bytes | None:
        with self._lock:
            body = self.items.get(key)
            if body is not None:
                self.items.move_to_end(key)
                self.hits += 1
            return body

    def put(self, key, body: bytes) -> None:
        with self._lock:
            if key in self.items or len(body) > self.max_bytes:
                return
            self.items[key] = body
            self.size += len(body)
            while self.size > self.max_bytes:
                gone, old = self.items.popitem(last=False)
                self.size -= len(old)
                self.final.discard(gone)

    def _better(self, key, raw: bytes) -> None:
        """Recompress at brotli's best level and keep the result if the entry is still there."""
        with self._lock:
            if key in self.final or key not in self.items:  # done already (asked for: finish)
                return
        body = _compress(raw, "br", best=True)
        with self._lock:
            old = self.items.get(key)
            if old is None:
                return
            if len(body) < len(old):
                self.items[key] = body
                self.size += len(body) - len(old)
                self.recompressions += 1
            self.final.add(key)

    async def finish(self, key, raw: bytes, encoding: str) -> bytes | None:
        """The body for ``key`` at its final level now: a client asked for it (``X-Compression:
        final``, a benchmark or a deploy's warm-up that measures or fills the cache as a class
        will meet it). A brotli body still interim is recompressed at once, at normal priority,
        instead of waiting for the low-priority thread (under load it may wait minutes); once
        per entry however many ask, and never again later."""
        key = (*key, encoding)
        if key not in self.final:
            await self._once(("best", *key), lambda: asyncio.to_thread(self._better, key, raw))
        return self.get(key)

    async def _once(self, mark, work):
        """``await work()`` once for ``mark`` however many ask at the same time: the others wait for
        that one's result (or its exception)."""
        waiting = self._pending.get(mark)
        if waiting is not None:
            return await asyncio.shield(waiting)
        fut = asyncio.get_running_loop().create_future()
        self._pending[mark] = fut
        try:
            result = await work()
            fut.set_result(result)
            return result
        except BaseException as exc:
            fut.set_exception(exc)
            fut.exception()  # retrieved: no "never retrieved" warning when nobody else waited
            raise
        finally:
            self._pending.pop(mark, None)

    def is_final(self, key, encoding: str) -> bool:
        """Whether the body kept for ``key`` in ``encoding`` is the one it will keep (a brotli body
        may still be replaced by its best-level recompression)."""
        with self._lock:
            return (*key, encoding) in self.final

    async def compressed(self, key, raw: bytes, encoding: str = "gzip") -> bytes:
        key = (*key, encoding)
        hit = self.get(key)
        if hit is not None:
            return hit

        async def work() -> bytes:
            body = await asyncio.to_thread(_compress, raw, encoding, False)
            self.compressions += 1
            self.put(key, body)
            if encoding == "br":
                _BEST.submit(self._better, key, raw)
            else:
                with self._lock:
                    self.final.add(key)
            return body

        return await self._once(key, work)


def settle(timeout: float | None = None) -> None:
    """Wait until every best-level recompression asked for so far is done (tests, benchmarks)."""
    _BEST.submit(lambda: None).result(timeout)


CACHE = Cache()


FIRST_PAINT_CSS = Path(__file__).resolve().parent.parent.parent / "assets" / "first_paint.css"


#: Classes on ``<html>`` from the start, each removed once the page has reached a state (then
#: first_paint.css's rules for it stop): ``[class, removed when this exists, or this many ms after
#: that exists while this does not]`` (``null``: only the first condition, and the 15 s cap on
#: every class). tos-boot: until the sidebar is drawn; tos-wait: the page's column (transparent)
#: until KaTeX has drawn a formula, on a page without one 0.8 s after its first element with no
#: Streamlit placeholder (``stSkeleton``, 40 px, that grows when its element's code arrives) left in
#: it: under load the code of Streamlit's Markdown and KaTeX came more than 0.8 s after the first
#: element, the column was shown and its text grew in view (two_point 0.47 in a full browser run);
#: tos-nav: the sidebar's controls (transparent) until the page list above them is drawn.
_SKELETON = '[data-testid="stMain"] [data-testid="stSkeleton"]'
_HOLDS = [
    ["tos-boot", '[data-testid="stSidebar"]', None, 0, None],
    [
        "tos-wait",
        '[data-testid="stMain"] .katex',
        '[data-testid="stMain"] [data-testid="stElementContainer"]',
        800,
        _SKELETON,
    ],
    ["tos-nav", '[data-testid="stSidebarNavItems"]', '[data-testid="stSidebarUserContent"]', 800, None],
]
_BOOT_JS = (
    b"""<script>(function (holds) {
  var root = document.documentElement, left = holds.length;
  var off = function (h) { if (h.done) return; h.done = true; left--; root.classList.remove(h[0]); };
  holds.forEach(function (h) { root.classList.add(h[0]); });
  var o = new MutationObserver(function () {
    holds.forEach(function (h) {
      if (h.done) return;
      if (document.querySelector(h[1])) off(h);
      else if (h[4] && document.querySelector(h[4])) { clearTimeout(h.timer); h.timer = null; }
      else if (h[2] && !h.timer && document.querySelector(h[2])) h.timer = setTimeout(function () { off(h); }, h[3]);
    });
    if (!left) o.disconnect();
  });
  o.observe(root, {childList: true, subtree: true});
  setTimeout(function () { holds.forEach(off); o.disconnect(); }, 15000);
})("""
    + json.dumps(_HOLDS).encode()
    + b""");</script>"""
)


#: KaTeX's two fonts that every formula uses, fetched at once (Streamlit's own document preloads
#: only Source Sans): a formula was drawn in a fallback font first and then again, wider or
#: narrower, when its font arrived
EARLY_FONTS = ("KaTeX_Main-Regular.*.woff2", "KaTeX_Math-Italic.*.woff2")


def _streamlit_media() -> Path | None:
    try:
        import streamlit

        return Path(streamlit.__file__).resolve().parent / "static" / "static" / "media"
    except Exception:  # noqa: BLE001 - an addition must never break the document
        return None


@functools.cache
def document_head() -> tuple[bytes, str]:
    """What the page document gets before its ``</head>``: ``assets/first_paint.css`` as a style
    element and the script that holds it until the sidebar is drawn, and a short hash of it;
    ``(b"", "")`` when the file is missing."""
    try:
        css = FIRST_PAINT_CSS.read_bytes()
    except OSError:
        return b"", ""
    head = b"<style>" + css.replace(b"</", b"<\\/") + b"</style>" + _BOOT_JS
    media = _streamlit_media()
    for pattern in EARLY_FONTS if media is not None else ():
        for f in sorted(media.glob(pattern))[:1]:
            head += b'<link rel="preload" href="./static/media/%s" as="font" type="font/woff2" crossorigin>' % (
                f.name.encode()
            )
    return head, hashlib.sha256(head).hexdigest()[:12]


class CompressedAssets:
    """ASGI middleware: see the module's docstring."""

    def __init__(self, app, cache: Cache | None = None):
        self.app = app
        self.cache = cache or CACHE

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("method") not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        found = fonts.subset_for(scope.get("path", ""))
        if found is not None:
            await fonts.send_subset(scope, send, found)
            return
        encoding = encoding_for(scope.get("headers", []))
        if scope.get("method") != "GET" or encoding is None:
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        if "/_app/" in path:
            # the app's own assets: Streamlit's gzip middleware, inside this one in a plain
            # `streamlit run` (this one wraps the built stack there), would compress them on every
            # request; without the header it leaves them to this one
            scope = {
                **scope,
                "headers": [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"accept-encoding"],
            }
        # "X-Compression: final": this client waits for the best level (Cache.finish)
        want = any(k.lower() == b"x-compression" and v.strip().lower() == b"final" for k, v in scope.get("headers", []))
        state: dict = {"start": None, "parts": [], "pass": False, "want_final": want}

        async def capture(message):
            if state["pass"]:
                await send(message)
                return
            if message["type"] == "http.response.start":
                h = {k.lower(): v for k, v in message.get("headers", [])}
                etag = h.get(b"etag", b"").decode("latin-1")
                if (
                    message.get("status") != 200
                    or b"content-encoding" in h
                    or not etag
                    or not compressible(h.get(b"content-type", b"").decode("latin-1"))
                ):
                    state["pass"] = True
                    await send(message)
                    return
                state["start"] = message
                state["etag"] = etag
                state["html"] = h.get(b"content-type", b"").lower().startswith(b"text/html")
                return
            if message["type"] == "http.response.body" and state["start"] is not None:
                state["parts"].append(message.get("body", b""))
                if message.get("more_body", False):
                    return
                await self._send_compressed(path, state, send, encoding)
                return
            await send(message)

        await self.app(scope, receive, capture)

    async def _send_compressed(self, path: str, state: dict, send, encoding: str) -> None:
        start, raw = state["start"], b"".join(state["parts"])
        head, tag = document_head()
        if state["html"] and head and b"</head>" in raw:
            raw = raw.replace(b"</head>", head + b"</head>", 1)
            state["etag"] = f"{state['etag']}+{tag}"
        if len(raw) < MIN_BYTES:
            await send(start)
            await send({"type": "http.response.body", "body": raw, "more_body": False})
            return
        body = await self.cache.compressed((path, state["etag"]), raw, encoding)
        final = self.cache.is_final((path, state["etag"]), encoding)
        if state["want_final"] and not final:
            body = await self.cache.finish((path, state["etag"]), raw, encoding) or body
            final = self.cache.is_final((path, state["etag"]), encoding)
        headers = [
            (k, v) for k, v in start.get("headers", []) if k.lower() not in (b"content-length", b"etag", b"vary")
        ]
        etag = state["etag"]
        headers += [
            (b"content-encoding", encoding.encode()),
            (b"content-length", str(len(body)).encode()),
            (b"vary", b"Accept-Encoding"),
            # "interim": a fast brotli level, to be replaced by the best level (bench/first_visit.py
            # and the browser test wait for "final" before they measure)
            (b"x-compression", b"final" if final else b"interim"),
            # a weak tag: the same resource, another encoding (what nginx's gzip does); the
            # static handler's If-None-Match check strips the W/ and still answers 304
            (b"etag", (etag if etag.startswith("W/") else f"W/{etag}").encode("latin-1")),
        ]
        await send({**start, "headers": headers})
        await send({"type": "http.response.body", "body": body, "more_body": False})
