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

Only ``GET`` responses with status 200, no ``Content-Encoding`` and a text type
(:data:`COMPRESSIBLE`), for a client that accepts gzip; never the websocket. Installed by
``ui.server.adapters`` in ``make run`` / ``make serve-class`` and, at its first page run, in a
plain ``streamlit run app.py``.
"""

from __future__ import annotations

import asyncio
import gzip
import threading
from collections import OrderedDict

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
LEVEL = 9


def compressible(content_type: str) -> bool:
    ct = content_type.split(";", 1)[0].strip().lower()
    return ct.startswith(COMPRESSIBLE)


def accepts_gzip(headers: list[tuple[bytes, bytes]]) -> bool:
    for k, v in headers:
        if k.lower() == b"accept-encoding":
            for part in v.decode("latin-1").lower().split(","):
                name, _, q = part.strip().partition(";")
                if name.strip() in ("gzip", "*") and q.replace(" ", "") not in ("q=0", "q=0.0", "q=0.00", "q=0.000"):
                    return True
    return False


class Cache:
    """Compressed bodies by (path, ETag), least recently used first out beyond
    :data:`MAX_CACHED_BYTES`; one compression per key however many ask at once."""

    def __init__(self, max_bytes: int = MAX_CACHED_BYTES):
        self.max_bytes = max_bytes
        self.items: OrderedDict[tuple[str, str], bytes] = OrderedDict()
        self.size = 0
        self.compressions = 0
        self.hits = 0
        self._lock = threading.Lock()
        self._pending: dict[tuple[str, str], asyncio.Future] = {}

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
                _, old = self.items.popitem(last=False)
                self.size -= len(old)

    async def compressed(self, key, raw: bytes) -> bytes:
        hit = self.get(key)
        if hit is not None:
            return hit
        waiting = self._pending.get(key)
        if waiting is not None:
            return await asyncio.shield(waiting)
        fut = asyncio.get_running_loop().create_future()
        self._pending[key] = fut
        try:
            body = await asyncio.to_thread(gzip.compress, raw, LEVEL, mtime=0)
            self.compressions += 1
            self.put(key, body)
            fut.set_result(body)
            return body
        except BaseException as exc:
            fut.set_exception(exc)
            fut.exception()  # retrieved: no "never retrieved" warning when nobody else waited
            raise
        finally:
            self._pending.pop(key, None)


CACHE = Cache()


class CompressedAssets:
    """ASGI middleware: see the module's docstring."""

    def __init__(self, app, cache: Cache | None = None):
        self.app = app
        self.cache = cache or CACHE

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("method") != "GET" or not accepts_gzip(scope.get("headers", [])):
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
        state: dict = {"start": None, "parts": [], "pass": False}

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
                return
            if message["type"] == "http.response.body" and state["start"] is not None:
                state["parts"].append(message.get("body", b""))
                if message.get("more_body", False):
                    return
                await self._send_compressed(path, state, send)
                return
            await send(message)

        await self.app(scope, receive, capture)

    async def _send_compressed(self, path: str, state: dict, send) -> None:
        start, raw = state["start"], b"".join(state["parts"])
        if len(raw) < MIN_BYTES:
            await send(start)
            await send({"type": "http.response.body", "body": raw, "more_body": False})
            return
        body = await self.cache.compressed((path, state["etag"]), raw)
        headers = [
            (k, v) for k, v in start.get("headers", []) if k.lower() not in (b"content-length", b"etag", b"vary")
        ]
        etag = state["etag"]
        headers += [
            (b"content-encoding", b"gzip"),
            (b"content-length", str(len(body)).encode()),
            (b"vary", b"Accept-Encoding"),
            # a weak tag: the same resource, another encoding (what nginx's gzip does); the
            # static handler's If-None-Match check strips the W/ and still answers 304
            (b"etag", (etag if etag.startswith("W/") else f"W/{etag}").encode("latin-1")),
        ]
        await send({**start, "headers": headers})
        await send({"type": "http.response.body", "body": body, "more_body": False})
