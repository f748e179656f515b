"""The served process (``python -m ui.server.serve``): clients cannot clear the server's caches, and Numba
runs on a thread-safe threading layer.

One real server on a loopback port, driven over the websocket protocol (``bench/wsclient.py``)."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys

import pytest

from harness.server import serve_flags, wait_healthy
from bench.numba_threads import concurrent_kernels_script
from tests.conftest import ROOT

PY = sys.executable


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("APP_ALLOW_CLEAR_CACHE", "APP_PARAMS_FILE")}
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra)
    return env


def _start(port: int, log, **env):
    proc = subprocess.Popen(
        [PY, "-m", "ui.server.serve", *serve_flags(port)],
        cwd=ROOT,
        env=_env(**env),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    wait_healthy(f"http://127.0.0.1:{port}", proc, 300, poll=0.3)  # a start costs ~5 s of CPU; longer when busy
    return proc


#: a hemisphere view whose cold computation is ~1-3 s here, cached ~0.1 s
HEAVY = "lang=en&n=512&horizon=40&contrast_horizon=200&seed=7"


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (all its threads), from /proc."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _visit(url: str, query: str, pid: int):
    """The server's CPU seconds for one visit to the heavy view (CPU, not wall time: other jobs
    on the cores stretch wall time, not the work the server does)."""
    from harness.wsclient import StreamlitSession

    async with StreamlitSession(url, timeout=600) as s:
        await s.rerun()  # the home page (navigation, start-up)
        c0 = _cpu_s(pid)
        r = await s.rerun(page="hemisphere", query_string=query)
        assert r.ok, (r.error, r.exceptions)
        return _cpu_s(pid) - c0


async def _clear(url: str):
    from harness.wsclient import StreamlitSession

    async with StreamlitSession(url, timeout=600) as s:
        assert (await s.rerun()).ok
        await s.clear_caches()
        await asyncio.sleep(0.5)
        r = await s.rerun()  # the sender's own session still works
        assert r.ok, (r.error, r.exceptions)


def test_clear_cache_from_a_client_is_refused(tmp_path):
    """A cached result survives another client's ``clear_cache``: the second visit to the same heavy
    view stays a cache hit (on main it was a cold recomputation), and the server log says why."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = tmp_path / "server.log"
    with open(log_path, "w") as log:
        proc = _start(port, log)
        try:
            cold = asyncio.run(_visit(url, HEAVY, proc.pid))
            asyncio.run(_clear(url))
            warm = asyncio.run(_visit(url, HEAVY, proc.pid))
        finally:
            proc.terminate()
            proc.wait(10)
    text = log_path.read_text()
    assert "refused a clear_cache request" in text, text[-2000:]
    assert warm < 0.5 * cold, f"second visit {warm:.2f} s vs cold {cold:.2f} s of server CPU: the cache was cleared"


def test_clear_cache_is_a_development_setting(monkeypatch):
    """``APP_ALLOW_CLEAR_CACHE=1`` keeps Streamlit's handler (development only); otherwise the
    handler is replaced by a refusal that leaves every cache alone."""
    import streamlit as st
    from streamlit.runtime.app_session import AppSession

    from ui import streamlit_internals as internals
    from ui.server import adapters

    assert not adapters.clear_cache_allowed({})
    assert not adapters.clear_cache_allowed({"APP_ALLOW_CLEAR_CACHE": "0"})
    assert adapters.clear_cache_allowed({"APP_ALLOW_CLEAR_CACHE": "1"})
    # Streamlit's own handler on the real AppSession (another test on this worker may have replaced it)
    monkeypatch.setattr(
        AppSession, "_handle_clear_cache_request", internals.original(AppSession._handle_clear_cache_request)
    )
    calls = []

    @st.cache_data
    def probe(x):
        calls.append(x)
        return x

    probe(1)
    assert adapters.refuse_clear_cache() is True
    assert AppSession._handle_clear_cache_request.__door__ == "clear_cache"  # installed through the door
    AppSession._handle_clear_cache_request(object())  # what a client's clear_cache runs
    probe(1)
    assert calls == [1], "the refused request still cleared st.cache_data"
    probe.clear()


CONCURRENT = concurrent_kernels_script(prelude="import ui.server.serve")


@pytest.mark.parametrize("given", ["workqueue"])
def test_serve_sets_a_thread_safe_numba_layer(given):
    """Importing ``ui.server.serve`` (what ``python -m ui.server.serve`` does first) gives Numba a thread-safe layer
    before numba is imported: parallel kernels called from four threads at once do not abort the
    process (with ``workqueue`` they do: rc 134 on main)."""
    env = _env(NUMBA_THREADING_LAYER=given)
    r = subprocess.run([PY, "-c", CONCURRENT], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    layer = r.stdout.split("LAYER")[-1].strip()
    assert layer in ("omp", "tbb"), r.stdout


def test_safe_layer_choice():
    from ui.server.start import safe_threading_layer

    for given, want in (
        ("workqueue", "threadsafe"),
        ("", "threadsafe"),
        ("default", "threadsafe"),
        ("omp", "omp"),
        ("tbb", "tbb"),
        ("threadsafe", "threadsafe"),
    ):
        env = {"NUMBA_THREADING_LAYER": given} if given else {}
        assert safe_threading_layer(env) == want == env["NUMBA_THREADING_LAYER"]


def test_serve_uses_one_blas_thread_unless_told():
    """``python -m ui.server.serve`` loads NumPy with one OpenBLAS thread (busy-waiting BLAS threads cost
    ~50x the CPU of a small product on a machine whose cores run sessions); an explicit setting wins."""
    from ui.server.start import single_thread_blas

    env = {}
    assert single_thread_blas(env) == "1" == env["OPENBLAS_NUM_THREADS"]
    env = {"OPENBLAS_NUM_THREADS": "4"}
    assert single_thread_blas(env) == "4"
    # set before NumPy is loaded (OpenBLAS reads it once, when NumPy loads it)
    probe = "import sys, os, ui.server.serve; print('BLAS', os.environ['OPENBLAS_NUM_THREADS'], 'numpy' in sys.modules)"
    env = {k: v for k, v in _env().items() if k != "OPENBLAS_NUM_THREADS"}
    r = subprocess.run([PY, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split("BLAS")[-1].split() == ["1", "False"], r.stdout


def test_make_run_sets_the_layer():
    """``make run`` serves and ``make warm`` / ``make test`` warm with the safe layer (not only the
    image); the server's background warm-up processes inherit it from ``ui.server.serve``'s environment."""
    out = "".join(
        subprocess.run(
            ["make", "-n", target, "PYTHON=python3"], cwd=ROOT, capture_output=True, text=True, timeout=600
        ).stdout
        for target in ("run", "warm")
    )
    lines = [ln for ln in out.splitlines() if "sim.warm" in ln or "ui.server.serve" in ln]
    assert any("ui.server.serve" in ln for ln in lines) and any("sim.warm" in ln for ln in lines), out
    for ln in lines:
        assert "NUMBA_THREADING_LAYER=threadsafe" in ln, ln
