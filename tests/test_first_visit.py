"""A first visit that is small: text assets compressed by the app's own server (once, on
a real server: ``make run`` and a plain ``streamlit run app.py``), the partial plotly.js bundles
pinned by hash and holding every trace type the pages send, the chart toolbar reduced.
(The browser's side, bytes by page and the same figures drawn: tests/e2e/test_first_visit.py.)"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request

import brotli
import pytest

from harness.apptest import STEMS
from harness.server import ROOT, Server, first_visit, free_port, serve_flags, wait_healthy
from tests.conftest import app_test, charts
from ui.kit import bundles, chart
from ui.server import compress, fonts

STATIC = ROOT / ".venv/lib/python3.11/site-packages/streamlit/static"


# --------------------------------------------------------------------------- the vendored bundles
def test_the_vendored_bundles_are_the_pinned_plotly_js_with_the_recorded_hashes():
    m = bundles.manifest()
    assert m["plotly.js"] == chart.plotly_js_version(), "re-vendor after a plotly upgrade: scripts/vendor_plotly.sh"
    lock = json.loads((bundles.VENDOR / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/plotly.js"]["version"] == m["plotly.js"]
    assert lock["packages"]["node_modules/esbuild"]["version"] == m["esbuild"]
    assert lock["packages"]["node_modules/plotly.js"]["integrity"].startswith("sha512-")
    for name, b in m["bundles"].items():
        data = (bundles.VENDOR / b["file"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == b["sha256"], name
        assert len(data) == b["bytes"]
        assert f"plotly.js v{m['plotly.js']}" in data[:300].decode()
        assert len(data) < 0.4 * chart.plotly_js().stat().st_size, name  # the point of it
    assert [n for n, _, _ in bundles.usable(chart.plotly_js_version())] == list(m["bundles"])


def test_a_missing_or_altered_bundle_falls_back_to_the_full_one(tmp_path, monkeypatch):
    m = bundles.manifest()
    b2 = m["bundles"]["2d"]
    (tmp_path / "manifest.json").write_text(json.dumps(m))
    (tmp_path / b2["file"]).write_bytes((bundles.VENDOR / b2["file"]).read_bytes() + b"\n// altered")
    monkeypatch.setattr(bundles, "VENDOR", tmp_path)
    monkeypatch.setattr(bundles, "MANIFEST", tmp_path / "manifest.json")
    bundles.manifest.cache_clear()
    bundles.usable.cache_clear()
    try:
        assert bundles.usable(chart.plotly_js_version()) == ()  # 2d altered, 3d missing
        assert bundles.choose({"scatter"}, chart.plotly_js_version()) == []
        assert bundles.usable("0.0.1") == ()  # another plotly.js
        from starlette.applications import Starlette
        from starlette.testclient import TestClient

        with TestClient(Starlette(routes=chart.asset_routes(""))) as c:
            r = c.get(chart.asset_path("2d"))
            assert r.status_code == 200 and r.content == chart.plotly_js().read_bytes()
    finally:
        bundles.manifest.cache_clear()
        bundles.usable.cache_clear()


def _page_charts(stem: str):
    at = app_test(stem, {"lang": "en"})
    at.run()  # a second run: the page is known to draw a 3-D scene (ui.kit.chart._SCENE_PAGES)
    assert not at.exception, stem
    preload = [el.proto.body for el in at.get("html") if "tosPlotly(" in el.proto.body]
    return [json.loads(el.proto.bytes.decode()) for el in charts(at)], preload


@pytest.mark.parametrize("stem", [s for s in STEMS if s not in ("home", "glossary")])
def test_every_trace_type_a_page_sends_is_in_the_one_bundle_it_loads(stem):
    msgs, preload = _page_charts(stem)
    assert msgs, stem
    m = bundles.manifest()["bundles"]
    urls = {msg["url"] for msg in msgs}
    assert len(urls) == 1, f"{stem}: its charts ask for {urls}"
    name = next(n for n in m if chart.plotly_url(n) in urls)
    sent = set().union(*(bundles.trace_types(msg["fig"]) for msg in msgs))
    assert sent <= set(m[name]["traces"]), f"{stem} sends {sent - set(m[name]['traces'])}, not in {name}"
    scene = any(bundles.has_scene(msg["fig"]) for msg in msgs)
    assert name == ("3d" if scene else "2d"), stem
    # the page fetches that bundle ahead, while its run goes on (once it is known to draw a scene)
    assert len(preload) == 1 and f'"{chart.plotly_url(name)}"' in preload[0], stem
    for msg in msgs:  # the toolbar: download and the reset that fits, nothing that posts elsewhere
        buttons = msg["config"]["modeBarButtons"]
        assert buttons == [["toImage", "resetCameraDefault3d" if bundles.has_scene(msg["fig"]) else "resetScale2d"]]
        assert msg["config"]["showSendToCloud"] is False and msg["config"]["showEditInChartStudio"] is False


def test_the_toolbar_buttons_kept_exist_in_the_bundles():
    for b in bundles.manifest()["bundles"].values():
        text = (bundles.VENDOR / b["file"]).read_text(encoding="utf-8")
        for name in chart.TOOLBAR:
            if name != "resetCameraDefault3d" or "scatter3d" in b["traces"]:
                assert re.search(rf'name:"{name}"', text), (b["file"], name)


# --------------------------------------------------------------------------- compression
def test_each_asset_is_compressed_once_however_many_ask_at_once():
    cache = compress.Cache()
    raw = b"function f(){return 1}\n" * 5000

    async def many(encoding):
        return await asyncio.gather(*(cache.compressed(("/a.js", '"1"'), raw, encoding) for _ in range(30)))

    out = asyncio.run(many("gzip"))
    assert cache.compressions == 1 and all(o == out[0] for o in out)
    assert gzip.decompress(out[0]) == raw and len(out[0]) < len(raw) / 20
    assert compress.compressible("text/javascript; charset=utf-8") and compress.compressible("image/svg+xml")
    assert not compress.compressible("font/woff2") and not compress.compressible("image/png")
    assert compress.accepts_gzip([(b"accept-encoding", b"gzip, deflate, br")])
    assert not compress.accepts_gzip([(b"accept-encoding", b"br, gzip;q=0")])
    # brotli: its own entry, compressed once at the fast level, then once more at the best level
    # (on real JavaScript: 200 kB of the 2-D bundle)
    raw = (bundles.VENDOR / bundles.manifest()["bundles"]["2d"]["file"]).read_bytes()[:200_000]
    fast = asyncio.run(many("br"))
    assert cache.compressions == 2 and all(o == fast[0] for o in fast) and brotli.decompress(fast[0]) == raw
    compress.settle(120)
    assert cache.is_final(("/a.js", '"1"'), "br") and cache.is_final(("/a.js", '"1"'), "gzip")
    best = cache.get(("/a.js", '"1"', "br"))
    assert cache.recompressions == 1 and brotli.decompress(best) == raw and len(best) < 0.95 * len(fast[0])
    assert cache.get(("/a.js", '"1"', "gzip")) == out[0]  # the gzip entry is its own


def test_a_client_asking_for_the_final_body_gets_it_at_once_and_it_is_made_once(monkeypatch):
    """X-Compression: final (bench/first_visit.py's settle_assets): the brotli body is finished at
    normal priority without waiting for the low-priority thread, once however many ask, and that
    thread then has nothing left to do for it."""
    cache = compress.Cache()
    raw = (bundles.VENDOR / bundles.manifest()["bundles"]["2d"]["file"]).read_bytes()[:200_000]
    gate = threading.Event()
    compress._BEST.submit(gate.wait, 60)  # the background thread busy: the finish may not wait for it
    try:

        async def go():
            fast = await cache.compressed(("/b.js", '"2"'), raw, "br")
            assert not cache.is_final(("/b.js", '"2"'), "br")
            done = await asyncio.gather(*(cache.finish(("/b.js", '"2"'), raw, "br") for _ in range(5)))
            return fast, done

        fast, done = asyncio.run(go())
        assert cache.is_final(("/b.js", '"2"'), "br") and cache.recompressions == 1
        assert all(d == done[0] for d in done) and brotli.decompress(done[0]) == raw and len(done[0]) < len(fast)
    finally:
        gate.set()
    compress.settle(120)
    assert cache.recompressions == 1 and cache.get(("/b.js", '"2"', "br")) == done[0]


@pytest.mark.parametrize(
    "accept, chosen",
    [
        ("gzip, deflate, br", "br"),
        ("br;q=0, gzip", "gzip"),
        ("gzip;q=0, br", "br"),
        ("*", "gzip"),
        ("identity", None),
        ("gzip;q=0, br;q=0", None),
        ("", None),
    ],
)
def test_the_coding_follows_what_the_browser_accepts(accept, chosen):
    assert compress.encoding_for([(b"accept-encoding", accept.encode())]) == chosen


def _get(url: str, enc: str = "gzip, deflate, br"):
    with urllib.request.urlopen(urllib.request.Request(url, headers={"Accept-Encoding": enc}), timeout=120) as r:
        return r.status, r.headers, r.read()


#: what a request accepting it gets, and how to read it back
CODINGS = {"gzip": ("gzip, deflate", gzip.decompress), "br": ("gzip, deflate, br", brotli.decompress)}


def _check_compressed(url: str, coding: str) -> dict[str, int]:
    """Every text asset of a first visit compressed, byte for byte the file; sizes on the wire."""
    accept, decompress = CODINGS[coding]
    status, h, body = _get(url + "/", accept)
    assert status == 200 and h["Content-Encoding"] == coding and h["Cache-Control"] == "no-cache"
    html = decompress(body).decode()
    # the first paint's CSS and the class that holds it until the sidebar is drawn
    head = html.split("</head>", 1)[0]
    assert "tos-boot" in head and (ROOT / "assets" / "first_paint.css").read_text()[:60] in head
    main_js = re.search(r'src="\.?(/static/js/index\.[^"]+\.js)"', html).group(1)
    css = re.search(r'href="\.?(/static/css/[^"]+\.css)"', html).group(1)
    sizes = {}
    two_d = bundles.VENDOR / bundles.manifest()["bundles"]["2d"]["file"]
    for path, raw in (
        (main_js, (STATIC / main_js.lstrip("/")).read_bytes()),
        (css, (STATIC / css.lstrip("/")).read_bytes()),
        (chart.asset_path("2d"), two_d.read_bytes()),
        (chart.asset_path(), chart.plotly_js().read_bytes()),
    ):
        status, h, body = _get(url + path, accept)
        assert status == 200 and h["Content-Encoding"] == coding, path
        assert decompress(body) == raw, path
        assert int(h["Content-Length"]) == len(body) < 0.45 * len(raw), path
        assert "immutable" in h["Cache-Control"] and "max-age=31536000" in h["Cache-Control"], path
        assert h["Vary"] == "Accept-Encoding" and h["ETag"].startswith('W/"'), path
        assert h["X-Compression"] == "final" if coding == "gzip" else h["X-Compression"] in ("interim", "final")
        sizes[path] = len(body)
        _, h, plain = _get(url + path, "identity")  # a client that does not accept gzip
        assert "Content-Encoding" not in h and plain == raw, path
        if coding == "br":  # a client that waits for the best level gets it at once
            req = urllib.request.Request(url + path, headers={"Accept-Encoding": accept, "X-Compression": "final"})
            with urllib.request.urlopen(req, timeout=120) as r:
                best = r.read()
                assert r.headers["X-Compression"] == "final" and decompress(best) == raw, path
                assert len(best) <= len(body), path
    return sizes


def test_the_first_paint_holds_make_content_transparent_never_hidden():
    """Each class the document's script puts on <html> has its rules in first_paint.css, and the
    holds that cover the page's text and controls only make them transparent: laid out, read by a
    screen reader, clickable and focusable while held (and not counted as layout shifts)."""
    css = (ROOT / "assets" / "first_paint.css").read_text(encoding="utf-8")
    rules = re.findall(r"([^{}]+)\{([^{}]*)\}", re.sub(r"/\*.*?\*/", "", css, flags=re.S))
    holds = {h[0] for h in compress._HOLDS}
    assert holds == {"tos-boot", "tos-wait", "tos-nav"}
    for cls in holds:
        mine = [body for sel, body in rules if f".{cls} " in sel]
        assert mine, cls
        if cls != "tos-boot":
            assert all(re.fullmatch(r"\s*opacity:\s*0;\s*", body) for body in mine), (cls, mine)
    head, _ = compress.document_head()
    assert b"15000" in head and all(json.dumps(h).encode() in head for h in compress._HOLDS)


def _check_fonts(url: str) -> None:
    """Streamlit's fonts that have a subset are answered with it (and a 304 for a client that has
    it); the others as Streamlit serves them."""
    subsets = json.loads(fonts.MANIFEST.read_text(encoding="utf-8"))["fonts"]
    assert len(subsets) == 5
    for name, f in subsets.items():
        status, h, body = _get(f"{url}/static/media/{name}")
        assert status == 200 and h["Content-Type"] == "font/woff2" and "Content-Encoding" not in h, name
        assert body == (fonts.VENDOR / f["file"]).read_bytes() and len(body) < 0.8 * f["source_bytes"], name
        assert "immutable" in h["Cache-Control"], name
        req = urllib.request.Request(f"{url}/static/media/{name}", headers={"If-None-Match": h["ETag"]})
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(req, timeout=60)
        assert e.value.code == 304, name
    whole = next(p for p in (STATIC / "static" / "media").glob("KaTeX_Main-Regular.*.woff2"))
    status, _, body = _get(f"{url}/static/media/{whole.name}")
    assert status == 200 and body == whole.read_bytes()


def _check_websocket(url: str) -> None:
    """The websocket's messages arrive compressed (permessage-deflate, as uvicorn's websockets set
    it up: a 4 KiB window): a page's run on the wire is about half its messages' size (two_point:
    120 -> 63 kB)."""
    from harness.wsclient import StreamlitSession

    async def run():
        async with StreamlitSession(url, timeout=120, open_timeout=60) as s:
            r = await s.rerun(page="two_point", query_string="lang=en")
            return s.response_headers.get("sec-websocket-extensions", ""), r, s.wire_bytes

    ext, r, wire = asyncio.run(run())
    assert r.ok and "permessage-deflate" in ext, ext
    assert r.bytes > 50_000 and wire < 0.65 * r.bytes, (wire, r.bytes)


def test_make_run_compresses_text_assets():
    with Server(warm=False) as s:
        sizes = _check_compressed(s.url, "gzip")
        _check_compressed(s.url, "gzip")  # the second time from the cache: the same bytes
        br = _check_compressed(s.url, "br")
        _check_fonts(s.url)
        _check_websocket(s.url)
    assert sizes[chart.asset_path("2d")] < 450_000
    assert br[chart.asset_path("2d")] < 0.97 * sizes[chart.asset_path("2d")]


def test_a_plain_streamlit_run_compresses_them_after_its_first_page_run():
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", *serve_flags(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_healthy(url, proc)
        first_visit(url)  # the app's code runs: install_late wraps the running server
        _check_compressed(url, "br")
        _check_fonts(url)
        _check_websocket(url)  # .streamlit/config.toml: the same for a plain `streamlit run`
    finally:
        proc.terminate()
        proc.wait(20)


def test_the_shipped_nginx_compresses_what_arrives_plain():
    from tests.test_security_deploy import parse_nginx

    text = (ROOT / "deploy" / "nginx.conf").read_text()
    parse_nginx(text)  # well formed (tests/test_security_deploy.py also runs nginx -t on it)
    conf = " ".join(line.split("#", 1)[0] for line in text.splitlines())
    assert re.search(r"\bgzip on;", conf) and re.search(r"\bgzip_proxied any;", conf)
    types = re.search(r"\bgzip_types ([^;]+);", conf).group(1).split()
    assert {"text/css", "application/javascript", "text/javascript", "application/json", "image/svg+xml"} <= set(types)
    assert not {"font/woff2", "image/png"} & set(types)


def test_every_trace_type_named_in_the_code_is_in_a_bundle():
    """Beyond the defaults the AppTest runs draw: each trace type a page or the kit names anywhere
    (``go.Heatmap(``, ``"type": "bar"``, ``type="contour"``) is in a vendored bundle."""
    import plotly.graph_objects as go
    from plotly.basedatatypes import BaseTraceType

    classes = {n: getattr(go, n) for n in dir(go) if n[:1].isupper()}  # (plotly loads them lazily)
    traces = {n.lower() for n, c in classes.items() if isinstance(c, type) and issubclass(c, BaseTraceType)}
    named = set()
    for path in [*(ROOT / "pages").rglob("*.py"), *(ROOT / "ui").rglob("*.py")]:
        text = path.read_text(encoding="utf-8")
        named |= {m.lower() for m in re.findall(r"\bgo\.([A-Z]\w*)\(", text)} & traces
        named |= set(re.findall(r"""\btype["']?\s*[:=]\s*["'](\w+)["']""", text)) & traces
    have = set().union(*(b["traces"] for b in bundles.manifest()["bundles"].values()))
    assert {"scatter", "scatter3d", "heatmap"} <= named  # the scan finds what it is for
    assert named <= have, f"no bundle has {named - have}: add them to assets/vendor/plotly/manifest.json"
