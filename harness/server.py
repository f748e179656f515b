"""A server for a test or a benchmark: ``python -m ui.server.serve`` on a free loopback port, started
as ``make run`` starts it (the Makefile's ``SERVE_FLAGS``), and what is read off it (health, CPU, RSS).

Also the first browser-less visit after a start (:func:`first_visit`), which the browser tests and
the benchmarks make before they measure or test anything.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def serve_flags(port: int, address: str = "127.0.0.1") -> list[str]:
    """``SERVE_FLAGS`` from the Makefile (what ``make run`` passes), with port and address filled in."""
    text = (ROOT / "Makefile").read_text()
    m = re.search(r"^SERVE_FLAGS\s*:?=\s*((?:.*\\\n)*.*)$", text, re.M)
    if not m:  # pragma: no cover - Makefile changed shape: fall back to the documented flags
        raw = (
            "--server.port $(PORT) --server.address $(ADDRESS) --server.headless true "
            "--server.fileWatcherType none --browser.gatherUsageStats false"
        )
    else:
        raw = m.group(1).replace("\\\n", " ")
    raw = raw.replace("$(PORT)", str(port)).replace("$(ADDRESS)", address)
    return shlex.split(raw)


def redis_argv(exe: str, sock: str, directory: str, *, append_only: bool = False) -> list[str]:
    """A private redis-server: on the Unix socket ``sock`` alone (no TCP port, owner-only), no
    snapshots; with ``append_only``, an append-only file in ``directory`` written through at every
    command (as compose and k8s run it). Shared by ``scripts/scale_class.py`` and the class tests."""
    keep = ["--appendonly", "yes", "--appendfsync", "always"] if append_only else ["--appendonly", "no"]
    only_socket = ["--port", "0", "--unixsocket", str(sock), "--unixsocketperm", "700"]
    return [exe, *only_socket, "--save", "", *keep, "--dir", str(directory)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mb(pid: int) -> float:
    """Resident set size of a process in MB (VmRSS from /proc; psutil is not installed)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system, all threads) a process has used so far, from /proc/<pid>/stat.

    Unlike wall time this does not grow when other work competes for the cores."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


class ServerExited(RuntimeError):
    """The server process ended before it became healthy."""


def wait_healthy(
    url: str, proc: subprocess.Popen, timeout: float = 120.0, poll: float = 0.2, kill: bool = True
) -> None:
    """Return once ``url/_stcore/health`` answers 200. Raises :class:`ServerExited` when ``proc``
    ends first; after ``timeout`` seconds kills ``proc`` (unless ``kill`` is False: the caller stops
    it) and raises RuntimeError. Shared by :class:`Server`, ``bench/heavy_jobs.py``,
    ``scripts/scale_check.py`` and ``tests/test_security_serve.py``."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if proc.poll() is not None:
            raise ServerExited(f"server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(poll)
    if kill:
        proc.kill()
        proc.wait(10)
    raise RuntimeError(f"server on {url} did not become healthy in {timeout:g} s")


class Server:
    """``python -m ui.server.serve`` (``streamlit run app.py``) as ``make run`` starts it, on loopback;
    a context manager."""

    def __init__(
        self,
        port: int | None = None,
        *,
        warm: bool = True,
        env: dict | None = None,
        extra_flags: list[str] | None = None,
    ):
        self.port = port or free_port()
        self.extra_flags = list(extra_flags or [])  # e.g. ["--runner.postScriptGC", "true"]
        self.url = f"http://127.0.0.1:{self.port}"
        self.warm = warm
        self.env = {**os.environ, **(env or {})}
        self.proc: subprocess.Popen | None = None
        self.startup_s = float("nan")

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def rss_mb(self) -> float:
        return rss_mb(self.pid)

    def start(self, timeout: float = 120.0) -> Server:
        t0 = time.perf_counter()
        if self.warm:
            subprocess.run(
                [sys.executable, "-m", "sim.warm"], cwd=ROOT, env=self.env, check=True, stdout=subprocess.DEVNULL
            )
        cmd = [sys.executable, "-m", "ui.server.serve", *serve_flags(self.port), *self.extra_flags]
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self._wait_healthy(timeout)
        self.startup_s = time.perf_counter() - t0
        return self

    def _wait_healthy(self, timeout: float) -> None:
        try:
            wait_healthy(self.url, self.proc, timeout)
        except ServerExited as exc:
            err = self.proc.stderr.read().decode(errors="replace")[-2000:]
            raise ServerExited(f"{exc}: {err}") from None

    def wait_kernels_ready(self, timeout: float = 600.0) -> float:
        """Seconds until the server printed that every kernel is ready (``sim.warm.READY_ALL``; it
        loads them in the background after a start); its stderr is drained in the background after."""
        import threading

        from sim.warm import READY_ALL

        t0 = time.perf_counter()
        for line in self.proc.stderr:
            if READY_ALL.encode() in line or time.perf_counter() - t0 > timeout:
                break
        threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()
        return time.perf_counter() - t0

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


@contextlib.contextmanager
def served(url: str | None = None, *, warm: bool = True):
    """What a benchmark measures: the server at ``url`` when one is given (already running), else
    one started as ``make run`` starts it and stopped at the end; either way after the first
    browser-less visit (:func:`first_visit`). Yields ``(url, the started Server or None)``."""
    server = None if url else Server(warm=warm).start()
    try:
        url = url or server.url
        first_visit(url)
        yield url, server
    finally:
        if server is not None:
            server.stop()


def url_path(stem: str) -> str:
    """The page's URL path: the default page (home, see ui.kit.nav.navigation) is served at "/"."""
    return "" if stem == "home" else stem


def quiet_streamlit() -> None:
    """Importing page modules outside a server makes st.cache_data warn once per function."""
    try:
        import streamlit.logger

        streamlit.logger.set_log_level("error")
    except Exception:  # noqa: BLE001 - only cosmetics
        pass


def run_async(fn, *args, **kw):
    """``asyncio.run(fn(*args, **kw))`` in a helper thread: Playwright's sync API keeps an
    event loop running in the main thread, where asyncio.run() is refused."""
    import asyncio
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(1) as ex:
        return ex.submit(lambda: asyncio.run(fn(*args, **kw))).result()


def first_visit(url: str, timeout: float = 240.0) -> bool:  # 240 s: harness.browser.WAIT_MS
    """One browser-less session opens the app and switches the language, as the first student
    after a server start would. Returns whether the switch took effect.

    The first session after a server start runs in Streamlit's legacy ``pages/``-folder mode
    until ``st.navigation`` runs; its widgets carry ids from that run and its first widget
    interaction is lost (``test_first_visitor_after_start_can_switch_language``). Making that
    visit here keeps the other browser tests about the pages, and warms imports and Numba.
    """
    from harness.wsclient import StreamlitSession

    async def go():
        async with StreamlitSession(url, timeout=timeout) as s:
            r = await s.rerun(page="", query_string="lang=en")
            if not r.ok:
                raise RuntimeError(f"first visit failed: {r.error or r.exceptions}")
            r = await s.rerun(widgets={"lang": ["中文"]})  # the segmented control sends its label
            if not r.ok:
                raise RuntimeError(f"first visit, language switch failed: {r.error or r.exceptions}")
            return "lang=zh" in s.query_string

    return run_async(go)
