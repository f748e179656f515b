"""What a student's first visit costs: bytes on the wire by asset type, requests, time until the
figures are drawn, the browser's main-thread work and the DOM, per page; then a second lesson page
opened in the same tab (from the sidebar).

Starts the server the way ``make run`` does (``harness.server.Server``; or ``--url``), makes the
first browser-less visit (``harness.server.first_visit``) and runs each measured page once
browser-less and once in an unmeasured browser (a warm server: the teacher has looked at the pages;
its assets are compressed, at brotli's best level once that has settled), then per page opens
``/<page>?lang=en`` in a fresh Chromium context (no cache, 1400 × 1000) and waits until the page
is ready with every figure drawn (``harness.browser.READY_JS``). Reported, per page:

  wire kB    bytes received over HTTP (CDP ``Network.loadingFinished.encodedDataLength``: compressed
             bodies plus headers), by asset type (js, css, font, html, json, img, other),
  decoded kB the same responses decoded (what the browser parses),
  req        HTTP requests (the websocket excluded),
  ws kB      websocket payload received (the page's messages; counted apart, not in wire kB),
  s          navigation start -> ready with figures drawn (wall time: grows with machine load),
  script s   main-thread script time, ``task s`` all main-thread tasks (CDP ``Performance.getMetrics``:
             ScriptDuration, TaskDuration), for the whole visit,
  dom        elements on the page,
  load       the 1-minute load average when the row was measured (other work on the machine
             inflates every time; the bytes do not depend on it),
  hosts      hosts other than 127.0.0.1 the page asked for (must be none).

A second row per lesson page, ``+<page>``: the same tab then opens ``--second`` (another lesson
page) from the sidebar: what a second lesson costs once the app's code is loaded.

    .venv/bin/python bench/first_visit.py                     # home, two_point, hemisphere
    .venv/bin/python bench/first_visit.py --all --repeat 3    # every page, median of 3
    .venv/bin/python bench/first_visit.py --json out.json --assets   # also every asset's bytes
    .venv/bin/python bench/first_visit.py --lighthouse        # and Lighthouse's performance score
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._timing import save_json  # noqa: E402
from harness import browser as b  # noqa: E402
from harness.server import quiet_streamlit, served, url_path  # noqa: E402

DEFAULT_PAGES = ("home", "two_point", "hemisphere")
KINDS = ("js", "css", "font", "html", "json", "img", "other")


def kind_of(url: str, mime: str, rtype: str) -> str:
    """An asset's type for the table, from its MIME type (then its address, then CDP's type)."""
    mime = (mime or "").lower()
    path = urlsplit(url).path.lower()
    if "javascript" in mime or path.endswith((".js", ".mjs")):
        return "js"
    if "css" in mime or path.endswith(".css"):
        return "css"
    if "font" in mime or path.endswith((".woff2", ".woff", ".ttf", ".otf")):
        return "font"
    if "html" in mime or rtype == "Document":
        return "html"
    if "json" in mime:
        return "json"
    if mime.startswith("image/"):
        return "img"
    return "other"


class Recorder:
    """Every HTTP response of a page (CDP Network events) and its websocket payload."""

    def __init__(self, cdp):
        self.cdp = cdp
        self.reqs: dict[str, dict] = {}
        self.ws_bytes = 0
        self.hosts: set[str] = set()
        self.on = True
        cdp.send("Network.enable")
        cdp.send("Network.setCacheDisabled", {"cacheDisabled": False})
        cdp.on("Network.requestWillBeSent", self._sent)
        cdp.on("Network.responseReceived", self._response)
        cdp.on("Network.dataReceived", self._data)
        cdp.on("Network.loadingFinished", self._finished)
        cdp.on("Network.webSocketFrameReceived", self._frame)

    def _sent(self, e):
        host = urlsplit(e["request"]["url"]).hostname
        if host and host != "127.0.0.1" and not e["request"]["url"].startswith("data:"):
            self.hosts.add(host)
        if self.on:
            self.reqs.setdefault(
                e["requestId"],
                {
                    "url": e["request"]["url"],
                    "wire": 0,
                    "decoded": 0,
                    "mime": "",
                    "type": e.get("type", ""),
                    "enc": "",
                    "cached": False,
                },
            )

    def _response(self, e):
        r = self.reqs.get(e["requestId"])
        if r is not None:
            resp = e["response"]
            h = {k.lower(): v for k, v in resp.get("headers", {}).items()}
            r.update(
                mime=resp.get("mimeType", ""),
                type=e.get("type", r["type"]),
                enc=h.get("content-encoding", ""),
                cached=bool(resp.get("fromDiskCache")),
                status=resp.get("status"),
            )

    def _data(self, e):
        r = self.reqs.get(e["requestId"])
        if r is not None:
            r["decoded"] += e.get("dataLength", 0)

    def _finished(self, e):
        r = self.reqs.get(e["requestId"])
        if r is not None:
            r["wire"] = e.get("encodedDataLength", 0)

    def _frame(self, e):
        if self.on:
            self.ws_bytes += len(e["response"].get("payloadData", ""))

    def reset(self):
        self.reqs.clear()
        self.ws_bytes = 0

    def summary(self) -> dict:
        out = {f"{k}_wire": 0 for k in KINDS} | {f"{k}_decoded": 0 for k in KINDS}
        http = [
            r
            for r in self.reqs.values()
            if not r["url"].startswith(("data:", "ws:", "wss:", "blob:")) and r["type"] != "WebSocket"
        ]
        for r in http:
            k = kind_of(r["url"], r["mime"], r["type"])
            out[f"{k}_wire"] += r["wire"]
            out[f"{k}_decoded"] += r["decoded"]
        out["wire"] = sum(r["wire"] for r in http)
        out["decoded"] = sum(r["decoded"] for r in http)
        out["requests"] = len(http)
        out["requests_in_order"] = [(r["url"], r.get("status")) for r in http]
        out["ws"] = self.ws_bytes
        out["uncompressed_text"] = sorted(
            urlsplit(r["url"]).path
            for r in http
            if not r["enc"]
            and r["decoded"] > 1024
            and kind_of(r["url"], r["mime"], r["type"]) in ("js", "css", "html", "json")
        )
        out["assets"] = sorted(
            (
                {
                    "path": urlsplit(r["url"]).path,
                    "wire": r["wire"],
                    "decoded": r["decoded"],
                    "enc": r["enc"],
                    "kind": kind_of(r["url"], r["mime"], r["type"]),
                }
                for r in http
            ),
            key=lambda a: -a["wire"],
        )
        return out


def metrics(cdp) -> dict[str, float]:
    return {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}


def visit(browser, url: str, stem: str, second: str | None, lang: str = "en") -> list[dict]:
    """One first visit of ``stem`` in a fresh context, then (``second``) a sidebar click to it."""
    ctx = browser.new_context(viewport=b.VIEWPORT, locale="en-US")
    rows = []
    try:
        page = ctx.new_page()
        cdp = ctx.new_cdp_session(page)
        rec = Recorder(cdp)
        cdp.send("Performance.enable", {"timeDomain": "threadTicks"})
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        b.goto(page, f"{url}/{url_path(stem)}?lang={lang}")
        s = time.perf_counter() - t0
        m = metrics(cdp)
        row = {
            "page": stem,
            "s": s,
            "script_s": m.get("ScriptDuration", 0.0),
            "task_s": m.get("TaskDuration", 0.0),
            "dom": page.evaluate("() => document.getElementsByTagName('*').length"),
            "charts": b.n_charts(page),
            "load": load,
            **rec.summary(),
            "hosts": sorted(rec.hosts),
        }
        rows.append(row)
        if second and stem != "home":
            page.wait_for_timeout(500)
            rec.reset()
            m0 = metrics(cdp)
            load = os.getloadavg()[0]
            t0 = time.perf_counter()
            b.click_and_wait(page, b.sidebar_link(page, url_path(second)), url_path(second), b.page_title(second, lang))
            s = time.perf_counter() - t0
            page.wait_for_timeout(300)  # late requests (fonts, the chart code) are counted too
            m1 = metrics(cdp)
            rows.append(
                {
                    "page": f"+{second}",
                    "s": s,
                    "script_s": m1.get("ScriptDuration", 0) - m0.get("ScriptDuration", 0),
                    "task_s": m1.get("TaskDuration", 0) - m0.get("TaskDuration", 0),
                    "dom": page.evaluate("() => document.getElementsByTagName('*').length"),
                    "charts": b.n_charts(page),
                    "load": load,
                    **rec.summary(),
                    "hosts": sorted(rec.hosts),
                }
            )
        cdp.detach()
    finally:
        ctx.close()
    return rows


def warm_pages(url: str, pages: list[str]) -> None:
    """Each page run once by a browser-less session (a warm server: the teacher has opened them)."""
    from harness.server import run_async
    from harness.wsclient import StreamlitSession

    async def go():
        async with StreamlitSession(url, timeout=240) as s:
            for stem in pages:
                await s.rerun(page=url_path(stem), query_string="lang=en")

    run_async(go)


def kept_alive_ms(url: str, path: str = "/_stcore/health", n: int = 20) -> float:
    """Median time of a request on a kept-alive connection (one socket, ``n`` requests one after
    the other): what each of a first visit's ~60 JavaScript modules pays after the first on each of
    the browser's six connections. 40 ms while the server's connections had Nagle's algorithm on
    (ui/server/nodelay.py), under 1 ms without."""
    import socket

    parts = urlsplit(url)
    host, port = parts.hostname, parts.port or 80
    times = []
    with socket.create_connection((host, port)) as s, s.makefile("rb") as f:
        for _ in range(n):
            t0 = time.perf_counter()
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
            length = 0
            while (line := f.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            f.read(length)
            times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def settle_assets(url: str, paths: list[str], timeout: float = 180.0) -> None:
    """Wait until the server's brotli body of each of ``paths`` is its final one
    (``ui.server.compress`` sends a fast level first, recompresses at the best level in the
    background and marks each response ``X-Compression: interim`` or ``final``); asked for with
    ``X-Compression: final``, which has the server finish it at once (its background thread runs at
    low priority and under load may take minutes). Raises if they are not final by ``timeout``."""
    import urllib.request

    left, t_end = list(paths), time.monotonic() + timeout
    while left and time.monotonic() < t_end:
        still = []
        for path in left:
            req = urllib.request.Request(url + path, headers={"Accept-Encoding": "br", "X-Compression": "final"})
            with urllib.request.urlopen(req, timeout=120) as r:
                r.read()
                if r.headers.get("X-Compression") == "interim":
                    still.append(path)
        left = still
        if left:
            time.sleep(1.0)
    if left:
        raise TimeoutError(f"not recompressed at the best level within {timeout:g} s: {left}")


def median_rows(runs: list[list[dict]]) -> list[dict]:
    """Per row position, the median of every number over the repeats (bytes barely vary)."""
    out = []
    for rows in zip(*runs, strict=True):
        r = dict(rows[-1])
        for k, v in rows[0].items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                r[k] = statistics.median(x[k] for x in rows)
        r["worst_s"] = max(x["s"] for x in rows)
        out.append(r)
    return out


def table(rows: list[dict]) -> str:
    head = (
        f"{'page':<18}{'wire kB':>9}{'decoded':>9}{'js':>8}{'css':>6}{'font':>7}{'html':>6}{'json':>6}"
        f"{'other':>7}{'req':>5}{'ws kB':>7}{'s':>7}{'worst':>7}{'script':>8}{'task':>7}{'dom':>6}{'load':>6}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        k = lambda n: r[n] / 1024  # noqa: E731
        lines.append(
            f"{r['page']:<18}{k('wire'):>9.0f}{k('decoded'):>9.0f}{k('js_wire'):>8.0f}{k('css_wire'):>6.0f}"
            f"{k('font_wire'):>7.0f}{k('html_wire'):>6.0f}{k('json_wire'):>6.0f}"
            f"{(r['other_wire'] + r['img_wire']) / 1024:>7.0f}{r['requests']:>5.0f}{k('ws'):>7.0f}"
            f"{r['s']:>7.2f}{r.get('worst_s', r['s']):>7.2f}{r['script_s']:>8.2f}{r['task_s']:>7.2f}"
            f"{r['dom']:>6.0f}{r['load']:>6.1f}"
        )
    bad = {r["page"]: r["uncompressed_text"] for r in rows if r["uncompressed_text"]}
    hosts = sorted({h for r in rows for h in r["hosts"]})
    said = "; ".join(f"{p}: {len(v)} ({', '.join(v[:4])} ...)" for p, v in bad.items())
    lines.append("text assets over 1 kB sent uncompressed: " + (said or "none"))
    lines.append("hosts other than 127.0.0.1: " + (", ".join(hosts) if hosts else "none"))
    return "\n".join(lines)


#: what the Lighthouse table shows: (audit id, column, unit divisor)
LH_AUDITS = (
    ("first-contentful-paint", "FCP s", 1000),
    ("largest-contentful-paint", "LCP s", 1000),
    ("speed-index", "SI s", 1000),
    ("total-blocking-time", "TBT s", 1000),
    ("mainthread-work-breakdown", "main s", 1000),  # the "main-thread work" (every task kind)
    ("bootup-time", "JS s", 1000),  # of it: JavaScript (evaluate, compile, parse)
    ("total-byte-weight", "kB", 1024),
)


def lighthouse_performance(url: str, pages: list[str], lang: str = "en") -> list[dict]:
    """Lighthouse's performance category (desktop preset, navigation mode: a fresh profile, so a
    first visit) for each page, in ``harness.browser.CHROMIUM`` with its flags. Lighthouse is
    installed once under artifacts/lighthouse (``bench.a11y.ensure_lighthouse``)."""
    import json
    import subprocess
    import tempfile

    from bench.a11y import ensure_lighthouse

    cli = ensure_lighthouse() / "node_modules" / ".bin" / "lighthouse"
    rows = []
    for stem in pages:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "lh.json"
            load = os.getloadavg()[0]
            subprocess.run(
                [
                    str(cli),
                    f"{url}/{url_path(stem)}?lang={lang}",
                    "--quiet",
                    "--preset=desktop",
                    "--only-categories=performance",
                    "--output=json",
                    f"--output-path={out}",
                    f"--chrome-path={b.CHROMIUM}",
                    "--chrome-flags=" + " ".join(b.CHROMIUM_ARGS),
                    "--max-wait-for-load=120000",
                ],
                capture_output=True,
                timeout=600,
                check=False,
            )
            try:
                rep = json.loads(out.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                rows.append({"page": stem, "score": float("nan"), "load": load})
                continue
        row = {"page": stem, "score": round(100 * (rep["categories"]["performance"]["score"] or 0)), "load": load}
        for audit, col, div in LH_AUDITS:
            row[col] = (rep["audits"].get(audit, {}).get("numericValue") or float("nan")) / div
        rows.append(row)
    return rows


def lighthouse_table(rows: list[dict]) -> str:
    cols = [c for _, c, _ in LH_AUDITS]
    head = f"{'page':<18}{'score':>6}" + "".join(f"{c:>8}" for c in cols) + f"{'load':>6}"
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r['page']:<18}{r['score']:>6}"
            + "".join(f"{r.get(c, float('nan')):>8.2f}" for c in cols[:-1])
            + f"{r.get('kB', float('nan')):>8.0f}{r['load']:>6.1f}"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", help="a running server (default: start one as make run does)")
    ap.add_argument("--pages", nargs="*", default=list(DEFAULT_PAGES))
    ap.add_argument("--all", action="store_true", help="every page")
    ap.add_argument("--second", default="nonnormal", help="the lesson page opened second (sidebar)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--lang", default="en")
    ap.add_argument("--assets", action="store_true", help="print every asset of the first page")
    ap.add_argument("--json")
    ap.add_argument(
        "--lighthouse",
        action="store_true",
        help="then Lighthouse's performance score of each page (desktop preset; needs node and npm)",
    )
    a = ap.parse_args(argv)
    quiet_streamlit()
    pages = list(a.pages)
    if a.all:
        from ui.kit.nav import PAGES

        pages = ["home"] + [e.stem for e in PAGES if e.stem != "home"]
    with served(a.url) as (url, _):
        warm_pages(url, pages)
        with b.chromium() as browser:
            # unmeasured: the browser's own first start, and each page's assets compressed once
            # (the teacher has opened the pages) and then at brotli's best level
            seen = [x for stem in pages for r in visit(browser, url, stem, None, a.lang) for x in r["assets"]]
            settle_assets(url, sorted({x["path"] for x in seen if x["enc"] == "br"}))
            rows = []
            for stem in pages:
                second = a.second if a.second != stem else "two_point"
                runs = [visit(browser, url, stem, second, a.lang) for _ in range(a.repeat)]
                rows += median_rows(runs)
        kept = kept_alive_ms(url)
        lh = []
        if a.lighthouse:  # the median of --repeat runs, each number on its own
            runs = [lighthouse_performance(url, pages, a.lang) for _ in range(a.repeat)]
            for rs in zip(*runs, strict=True):
                lh.append({k: (statistics.median(r[k] for r in rs) if k != "page" else v) for k, v in rs[0].items()})
    print(table(rows))
    print(f"a request on a kept-alive connection: {kept:.1f} ms (median of 20)")
    if lh:
        print("\nLighthouse 12, desktop preset, performance (a fresh profile: a first visit)")
        print(lighthouse_table(lh))
    if a.assets:
        for r in rows:
            print(f"\n{r['page']}:")
            for x in r["assets"][:25]:
                print(
                    f"  {x['wire'] / 1024:8.1f} {x['decoded'] / 1024:8.1f} {x['enc'] or '-':5} {x['kind']:5} "
                    f"{x['path']}"
                )
    return save_json(a.json, rows)


if __name__ == "__main__":
    raise SystemExit(main())
