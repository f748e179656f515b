"""A class opening the same lesson page at once: N clients (default 30) within a window (default
10 s), each fetching every asset a browser's first visit fetches and running the page over its own
websocket, against one server started as ``make run`` / ``make serve-class`` start it (loopback).

The asset list is recorded first from one real Chromium visit of the page (``bench/first_visit.py``:
every HTTP request, in order; the page's images under ``/media/`` are fetched after the run that made
them, as a browser does). A client fetches them six at a time (a browser's connections per host)
with ``Accept-Encoding: gzip, deflate, br`` while its websocket session (``harness.wsclient``) runs the
page; it is done when both are: its figures have reached it and every script, style and font is in.
What a client does not do is evaluate the JavaScript and draw (1-4 s of a browser's own CPU,
``bench/first_visit.py`` measures that): the time here is the server's and the network's share.

Reported: clients done / lost (an HTTP status other than the browser's, a run that did not finish,
an error), p50 / p95 / max seconds from a client's start until done, MB on the wire (HTTP bodies
as sent, compressed, and the websocket's frames as the socket delivered them, beside the size of its
messages: the server compresses them, ``server.enableWebsocketCompression``), the server's CPU
seconds, this process's own (all clients run in it: on a 2-core machine it competes with the
server, and its share bounds the times) and the load average.

    .venv/bin/python bench/class_at_once.py                       # 30 clients, two_point, 10 s
    .venv/bin/python bench/class_at_once.py --clients 30 --page hemisphere --json out.json
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._timing import save_json  # noqa: E402
from harness.server import cpu_s, quiet_streamlit, served, url_path  # noqa: E402

#: a browser's parallel connections to one host (HTTP/1.1)
PER_HOST = 6


def recorded_assets(url: str, stem: str) -> list[tuple[str, int]]:
    """``(path with query, status)`` of each request a fresh Chromium makes on a first visit of
    ``stem``, in order (Streamlit's frontend first asks for ``/<page>/_stcore/...``: 404, as here)."""
    from urllib.parse import urlsplit

    from bench.first_visit import visit
    from harness import browser as b

    with b.chromium() as browser:
        row = visit(browser, url, stem, None)[0]
    out = []
    for a, status in row["requests_in_order"]:
        u = urlsplit(a)
        out.append((u.path + (f"?{u.query}" if u.query else ""), status or 200))
    return out


async def one_client(url: str, stem: str, assets: list[tuple[str, int]], delay: float, timeout: float) -> dict:
    import httpx

    from harness.wsclient import StreamlitSession

    await asyncio.sleep(delay)
    t0 = time.perf_counter()
    res = {
        "ok": False,
        "s": float("nan"),
        "http_bytes": 0,
        "ws_bytes": 0,
        "ws_wire": 0,
        "requests": 0,
        "retries": 0,
        "error": "",
    }
    later = [a for a in assets if a[0].startswith("/media/")]
    first = [a for a in assets if not a[0].startswith("/media/")]
    limits = httpx.Limits(max_connections=PER_HOST, max_keepalive_connections=PER_HOST)
    try:
        async with httpx.AsyncClient(
            base_url=url, limits=limits, timeout=timeout, headers={"Accept-Encoding": "gzip, deflate, br"}
        ) as http:

            async def get(asset):
                path, status = asset
                for attempt in (0, 1):
                    try:  # bodies as sent: not decoded (this process's CPU)
                        async with http.stream("GET", path) as r:
                            async for _ in r.aiter_raw():
                                pass
                        break
                    except (httpx.RemoteProtocolError, httpx.ReadError):
                        # a kept-alive connection the server closed as it was reused: a browser
                        # sends such a GET again on a new connection, and so does this
                        if attempt:
                            raise
                        res["retries"] += 1
                res["requests"] += 1
                res["http_bytes"] += r.num_bytes_downloaded
                if r.status_code != status:
                    raise RuntimeError(f"{path}: HTTP {r.status_code} (the browser had {status})")

            async def session():
                async with StreamlitSession(url, timeout=timeout, open_timeout=timeout) as s:
                    r = await s.rerun(page=url_path(stem), query_string="lang=en")
                    res["ws_bytes"] += r.bytes
                    res["ws_wire"] += s.wire_bytes
                    if not r.ok:
                        raise RuntimeError(f"run: {r.error or r.exceptions}")
                await asyncio.gather(*(get(p) for p in later))

            outcome = await asyncio.gather(session(), *(get(p) for p in first), return_exceptions=True)
            failed = [o for o in outcome if isinstance(o, BaseException)]
            if failed:
                raise failed[0]
        res["ok"] = True
    except Exception as exc:  # noqa: BLE001 - counted as lost, with its reason
        res["error"] = f"{type(exc).__name__}: {exc}"[:200]
    res["s"] = time.perf_counter() - t0
    return res


async def class_at_once(
    url: str, stem: str, assets: list[tuple[str, int]], clients: int, window: float, timeout: float, seed: int = 1
) -> list[dict]:
    rng = random.Random(seed)
    delays = sorted(rng.uniform(0, window) for _ in range(clients))
    return await asyncio.gather(*(one_client(url, stem, assets, d, timeout) for d in delays))


def summary(results: list[dict], cpu: float, load: tuple[float, float]) -> dict:
    done = [r["s"] for r in results if r["ok"]]
    q = statistics.quantiles(done, n=20) if len(done) >= 2 else [float("nan")] * 19
    return {
        "clients": len(results),
        "done": len(done),
        "lost": len(results) - len(done),
        "p50_s": statistics.median(done) if done else float("nan"),
        "p95_s": q[18],
        "max_s": max(done) if done else float("nan"),
        "http_MB": sum(r["http_bytes"] for r in results) / 1e6,
        "ws_MB": sum(r["ws_bytes"] for r in results) / 1e6,
        "ws_wire_MB": sum(r["ws_wire"] for r in results) / 1e6,
        "requests": sum(r["requests"] for r in results),
        "retries": sum(r["retries"] for r in results),
        "server_cpu_s": cpu,
        "load_before": load[0],
        "load_after": load[1],
        "errors": sorted({r["error"] for r in results if r["error"]})[:5],
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", help="a running server (default: start one as make run does)")
    ap.add_argument("--pid", type=int, help="with --url: the server's process id (for its CPU seconds)")
    ap.add_argument("--page", default="two_point")
    ap.add_argument("--clients", type=int, default=30)
    ap.add_argument("--window", type=float, default=10.0, help="seconds over which the clients arrive")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    quiet_streamlit()
    with served(a.url) as (url, server):
        assets = recorded_assets(url, a.page)
        pid = server.pid if server else a.pid
        c0 = cpu_s(pid) if pid else float("nan")
        l0 = os.getloadavg()[0]
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        results = asyncio.run(class_at_once(url, a.page, assets, a.clients, a.window, a.timeout))
        cpu = (cpu_s(pid) - c0) if pid else float("nan")
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        out = summary(results, cpu, (l0, os.getloadavg()[0]))
        out["client_cpu_s"] = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    out["page"], out["assets_per_client"] = a.page, len(assets)
    print(
        f"{out['clients']} clients on {a.page} within {a.window:g} s ({len(assets)} requests each + a websocket "
        f"run): done {out['done']}, lost {out['lost']}; until done p50 {out['p50_s']:.2f} s, p95 "
        f"{out['p95_s']:.2f} s, max {out['max_s']:.2f} s; on the wire {out['http_MB']:.1f} MB HTTP + "
        f"{out['ws_wire_MB']:.1f} MB websocket ({out['ws_MB']:.1f} MB of messages); server CPU "
        f"{out['server_cpu_s']:.1f} s, this client's "
        f"{out['client_cpu_s']:.1f} s; load {out['load_before']:.1f}"
        f" -> {out['load_after']:.1f}"
    )
    for e in out["errors"]:
        print("  lost:", e)
    return save_json(a.json, out)


if __name__ == "__main__":
    raise SystemExit(main())
