"""The app where a school puts it: a plain ``streamlit run app.py`` from a virtual environment made
with pip from requirements.txt (as Streamlit's own hosting and most tutorials start an app), opened
by a domain name the server knows nothing of.

- every lesson page draws every chart, and no page asks any host but its own server (no font, icon
  or script from the internet: a school network may have none);
- the share box gives a full link on that domain name with a QR code that renders.

The browser resolves ``sphere.school.test`` to 127.0.0.1 (Chromium's ``--host-resolver-rules``):
nothing leaves this machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from harness.browser import CHROMIUM, CHROMIUM_ARGS, VIEWPORT, WAIT_MS, goto
from harness.server import free_port, wait_healthy
from ui.kit.nav import PAGES

ROOT = Path(__file__).resolve().parents[2]
HOST = "sphere.school.test"
LESSONS = [e.stem for e in PAGES if e.stem not in ("home", "glossary")]


@pytest.fixture(scope="module")
def plain_venv(tmp_path_factory):
    """A fresh virtual environment with pip and ``pip install -r requirements.txt``, nothing else."""
    venv = tmp_path_factory.mktemp("plain") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    pip = subprocess.run(
        [
            str(venv / "bin" / "pip"),
            "install",
            "-q",
            "--disable-pip-version-check",
            "-r",
            str(ROOT / "requirements.txt"),
        ],
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert pip.returncode == 0, pip.stderr[-3000:]
    return venv


@pytest.fixture(scope="module")
def plain_server(plain_venv):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STREAMLIT_", "APP_", "NUMBA_", "VIRTUAL_ENV"))}
    env["PATH"] = f"{plain_venv / 'bin'}:{env.get('PATH', '')}"
    proc = subprocess.Popen(
        [
            "streamlit",
            "run",
            "app.py",
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--server.headless",
            "true",
            "--browser.gatherUsageStats",
            "false",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_healthy(f"http://127.0.0.1:{port}", proc, timeout=300)
        yield port, proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="module")
def school_browser(browser):
    """A second Chromium from the worker's own Playwright (one sync Playwright per process), told
    that the school's domain name is this machine."""
    br = browser.browser_type.launch(
        executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, f"--host-resolver-rules=MAP {HOST} 127.0.0.1"]
    )
    try:
        yield br
    finally:
        br.close()


def test_plain_streamlit_run_on_a_domain_name(plain_server, school_browser):
    port, _ = plain_server
    own = f"{HOST}:{port}"
    ctx = school_browser.new_context(viewport=VIEWPORT)
    ctx.set_default_timeout(WAIT_MS)  # as every browser test: a busy machine takes its time
    seen: list[str] = []
    ctx.on("request", lambda r: seen.append(r.url))
    page = ctx.new_page()
    try:
        for stem in LESSONS:
            goto(page, f"http://{own}/{stem}?lang=en")  # waits until every chart is drawn
            n = page.locator('[data-testid="appPlotlyChart"] .main-svg').count()
            assert n > 0, f"{stem}: no chart drawn"
            assert page.locator('[data-testid="stException"]').count() == 0, stem
        elsewhere = sorted(
            {urlsplit(u).netloc for u in seen if urlsplit(u).scheme in ("http", "https", "ws", "wss")} - {own}
        )
        assert elsewhere == [], f"requests to other hosts: {elsewhere}"
        assert any("/_app/plotly-" in u for u in seen)  # the chart library from this server
        _share_box_gives_a_full_link_and_a_qr_code(page, port)
    finally:
        ctx.close()


def _share_box_gives_a_full_link_and_a_qr_code(page, port):
    """On that domain name, the share box gives the full link and a QR image that renders (in the same
    test as the pages: one venv and one server are set up once, whichever worker runs it)."""
    goto(page, f"http://{HOST}:{port}/two_point?lang=en&beta=2.5")
    box = page.locator('[data-testid="stSidebar"] .st-key-_share_open')
    assert box.locator("summary").inner_text().strip().endswith("Share this view")  # its text, not a key
    box.locator("summary").click()
    img = page.locator(".tos-qr img")
    img.wait_for(timeout=WAIT_MS)
    link = box.locator("code").first.inner_text().strip()
    assert link.startswith(f"http://{HOST}:{port}/two_point?") and "beta=2.5" in link, link
    # the QR image renders (a decoded <img> of real size), and holds the link (its alt text)
    page.wait_for_function("(el) => el.complete && el.naturalWidth > 100", arg=img.element_handle(), timeout=WAIT_MS)
    assert img.get_attribute("alt") == f"QR: {link}"
