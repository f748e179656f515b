"""How long a newcomer waits before the first page: ``python bench/first_run.py [--fresh-clone]``.

Default (uses this checkout's Python): the kernel part of a first start and of a later one.

- ``warm (empty cache)``: ``python -m sim.warm`` (one process per core) with an empty
  ``NUMBA_CACHE_DIR`` (what a fresh clone compiles once); ``warm (cached)``: the same again.
- ``server -> first page``: start the server as ``make run`` does (``ui.server.serve``: it answers at
  once and compiles the kernels in the background), then one websocket session opens the home
  page; with an empty cache and with the cache filled.

``--fresh-clone``: ``git clone`` this branch into a temporary folder, run
``make run`` there (venv + install from the lock files + server) and time each phase until the
home page and the two_point page are rendered (the server ran each page script to the end with no
exception or error and sent every element, two_point's figures included) and until every kernel's
on-disk cache is current (compiled by the background processes; each kernel is loaded by its first
call); then stop it and time a second ``make run`` (everything installed, the
cache current). The install uses uv's download cache of this machine (a first install ever also
downloads the wheels). Each time comes with the CPU seconds the server process had used by then
(on an idle machine the wall time of the first pages is close to it) and the load average
(1/5/15 min) when it was taken. ``--later-start N``: the same phases for N starts of this
checkout's server (``python -m ui.server.serve``, the cache as it is).

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

from harness.server import Server, free_port  # noqa: E402


def warm_s(cache: str) -> float:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "sim.warm"], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def first_page(url: str, timeout: float = 600.0) -> float:
    from harness.wsclient import StreamlitSession

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


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def server_cpu(sid: int) -> float:
    """CPU seconds (user + system) used so far by the ``ui.server.serve`` process of session ``sid``
    (what a student's first page waits on; the warm-up children run beside it at low priority)."""
    tick = os.sysconf("SC_CLK_TCK")
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            f = (d / "stat").read_text().rsplit(")", 1)[1].split()
            if int(f[3]) == sid and b"ui.server.serve" in (d / "cmdline").read_bytes():
                return (int(f[11]) + int(f[12])) / tick
        except (OSError, IndexError, ValueError):
            continue
    return float("nan")


def render_pages(url: str, timeout: float = 600.0) -> list[tuple[str, float]]:
    """One websocket session opens the home page, then two_point; each must finish with no exception
    or error alert, and two_point must have sent its figures. Returns (page, seconds when done)."""
    from harness.wsclient import StreamlitSession

    async def go():
        done = []
        async with StreamlitSession(url, timeout=timeout) as s:
            for page in ("", "two_point"):
                r = await s.rerun(page=page, query_string="lang=en")
                charts = r.element_counts.get("plotly_chart", 0)
                if not r.ok or r.error_alerts or (page and charts < 2):
                    raise RuntimeError(
                        f"page {page or 'home'} not rendered: {r.error or r.exceptions} "
                        f"{r.error_alerts} charts={charts}"
                    )
                done.append((page or "home", time.perf_counter()))
        return done

    return asyncio.run(go())


def make_run(
    dst: Path, label: str, timeout: float = 900.0, cmd: list[str] | None = None
) -> list[tuple[str, float, float, str]]:
    """``make run`` in ``dst``; rows (phase, seconds since make started, load average then).

    Phases: install done (make prints the ``ui.server.serve`` command), server healthy, home page and
    two_point page rendered (the server ran each page and sent every element, figures included;
    the browser's own drawing, ~0.1-1 s, is not counted), every kernel's cache current (the
    server prints ``sim.warm: every kernel ready``). The server CPU of both pages is read after
    the second one.
    """
    import threading
    import urllib.request

    from sim.warm import READY_ALL

    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "VIRTUAL_ENV")}
    marks: dict[str, float] = {}
    loads: dict[str, str] = {}
    cpu: dict[str, float] = {}
    log: list[str] = []

    def mark(name: str, t: float | None = None) -> None:
        if name not in marks:
            marks[name] = time.perf_counter() if t is None else t
            loads[name] = _load()
            cpu[name] = server_cpu(proc.pid)
            print(
                f"  .. {label}: {name} after {marks[name] - t0:.1f} s (server CPU {cpu[name]:.1f} s, "
                f"load {loads[name]})",
                file=sys.stderr,
                flush=True,
            )

    t0 = time.perf_counter()
    if cmd is not None:  # this checkout's server (python -m ui.server.serve) instead of make run
        from harness.server import serve_flags

        cmd = [*cmd, *serve_flags(port)]
    proc = subprocess.Popen(
        cmd or ["make", "run", f"PORT={port}"],
        cwd=dst,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        env=env,
    )

    def read() -> None:
        for line in proc.stdout:
            log.append(line)
            if "-m ui.server.serve" in line:
                mark("install done, server starting")
            if READY_ALL in line:
                mark("every kernel cache current")

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.perf_counter() - t0 > timeout:
                    raise RuntimeError("make run ended or hung: " + "".join(log)[-3000:])
                time.sleep(0.2)
        mark("server healthy")
        for page, t in render_pages(f"http://127.0.0.1:{port}"):
            mark(f"{page} page rendered", t)
        while "every kernel cache current" not in marks:
            if proc.poll() is not None or time.perf_counter() - t0 > timeout:
                raise RuntimeError("kernels never ready: " + "".join(log)[-3000:])
            time.sleep(0.2)
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(30)
    return [(f"{label}: {k}", v - t0, cpu[k], loads[k]) for k, v in sorted(marks.items(), key=lambda kv: kv[1])]


def fresh_clone() -> list[tuple[str, float, str]]:
    """``git clone`` this branch into /tmp, ``make run`` there (empty venv, empty Numba cache; the
    installer's download cache of this machine is used), stop it, ``make run`` again."""
    branch = subprocess.run(
        ["git", "rev-parse", "--abbrev-ref", "HEAD"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        dst = Path(tmp) / "app"
        t0 = time.perf_counter()
        subprocess.run(["git", "clone", "-q", "-b", branch, str(ROOT), str(dst)], check=True)
        rows = [("git clone", time.perf_counter() - t0, float("nan"), _load())]
        rows += make_run(dst, "first make run")
        rows += make_run(dst, "second make run")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--fresh-clone", action="store_true", help="time make run in a fresh clone (first and second start) instead"
    )
    ap.add_argument("--repeat", type=int, default=1, help="repeat the fresh-clone measurement")
    ap.add_argument(
        "--later-start",
        type=int,
        default=0,
        metavar="N",
        help="start this checkout's server N times (its Numba cache as it is: current "
        "after one run) and time each start the same way",
    )
    args = ap.parse_args()
    print(f"(load average {_load()} on {os.cpu_count()} cores at the start)", flush=True)
    if args.later_start:
        print(
            f"{'phase (seconds since the server started)':<54s} {'wall s':>7s} {'server CPU s':>12s}  load 1/5/15 min"
        )
        for i in range(args.later_start):
            for name, sec, cpu, load in make_run(ROOT, f"start {i + 1}", cmd=[sys.executable, "-m", "ui.server.serve"]):
                print(f"{name:<54s} {sec:7.1f} {cpu:12.1f}  {load}", flush=True)
        return
    if args.fresh_clone:
        print(f"{'phase (seconds since make run started)':<54s} {'wall s':>7s} {'server CPU s':>12s}  load 1/5/15 min")
        for _ in range(args.repeat):
            for name, sec, cpu, load in fresh_clone():
                print(f"{name:<54s} {sec:7.1f} {cpu:12.1f}  {load}", flush=True)
        return
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
    print(f"{'phase':<52s} {'seconds':>8s}")
    for name, s in rows:
        print(f"{name:<52s} {s:8.1f}")
    print(f"(load average {_load()} on {os.cpu_count()} cores at the end)")


if __name__ == "__main__":
    main()
