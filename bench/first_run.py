"""How long a newcomer waits before the first page: ``python bench/first_run.py [--fresh-clone]``.

Default (uses this checkout's Python): the kernel part of a first start and of a later one.

- ``warm (empty cache)``: ``python -m sim.warm`` with an empty ``NUMBA_CACHE_DIR`` (what a fresh
  clone compiles once); ``warm (cached)``: the same again (every later start).
- ``server -> first page``: start the server as ``make run`` does (``ui.serve``; app.py loads the
  kernels in ``_start_up``), then one websocket session opens the home page; with an empty cache
  and with the cache filled.

``--fresh-clone``: additionally ``git clone`` this repository into a temporary folder and time
``make run`` there (venv + install + kernels) until the home page answers. It needs the package
index that ``pip`` uses; it prints each phase.

Prints a table; nothing is asserted (a benchmark, not a test).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.classroom import Server, free_port  # noqa: E402


def warm_s(cache: str) -> float:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "sim.warm"], cwd=ROOT, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def first_page(url: str, timeout: float = 600.0) -> float:
    from bench.wsclient import StreamlitSession

    async def go():
        t0 = time.perf_counter()
        async with StreamlitSession(url, timeout=timeout) as s:
            r = await s.rerun(page="", query_string="lang=en")
            if not r.ok:
                raise RuntimeError(f"first page failed: {r.error or r.exceptions}")
        return time.perf_counter() - t0

    return asyncio.run(go())


def server_to_first_page(cache: str) -> tuple[float, float]:
    """(seconds from start to healthy, seconds from start to the first page drawn)."""
    t0 = time.perf_counter()
    srv = Server(warm=False, env={"NUMBA_CACHE_DIR": cache})
    srv.start(timeout=600)
    healthy = time.perf_counter() - t0
    try:
        first_page(srv.url)
        return healthy, time.perf_counter() - t0
    finally:
        srv.stop()


def fresh_clone() -> list[tuple[str, float]]:
    import urllib.request

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        dst = Path(tmp) / "app"
        t0 = time.perf_counter()
        subprocess.run(["git", "clone", "-q", str(ROOT), str(dst)], check=True)
        rows.append(("git clone", time.perf_counter() - t0))
        port = free_port()
        t1 = time.perf_counter()
        proc = subprocess.Popen(["make", "run", f"PORT={port}"], cwd=dst, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True)
        try:
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2):
                        break
                except OSError:
                    if proc.poll() is not None:
                        raise RuntimeError("make run ended: " + (proc.stdout.read() or "")[-2000:])
                    time.sleep(0.5)
            rows.append(("make run -> healthy (install + kernels + start)", time.perf_counter() - t1))
            first_page(f"http://127.0.0.1:{port}")
            rows.append(("make run -> first page drawn", time.perf_counter() - t1))
        finally:
            os.killpg(proc.pid, 15)
            proc.wait(30)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fresh-clone", action="store_true", help="also time make run in a fresh clone")
    args = ap.parse_args()
    rows = []
    cache = tempfile.mkdtemp(prefix="numba-first-run-")
    try:
        rows.append(("warm (empty cache: first start)", warm_s(cache)))
        rows.append(("warm (cached: later starts)", warm_s(cache)))
        shutil.rmtree(cache)
        os.makedirs(cache)
        h, f = server_to_first_page(cache)
        rows += [("server start -> healthy, empty cache", h), ("server start -> first page, empty cache", f)]
        h, f = server_to_first_page(cache)
        rows += [("server start -> healthy, cached", h), ("server start -> first page, cached", f)]
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    if args.fresh_clone:
        rows += fresh_clone()
    print(f"{'phase':<52s} {'seconds':>8s}")
    for name, s in rows:
        print(f"{name:<52s} {s:8.1f}")
    print(f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
