"""A real server (started as ``make run`` starts it) and headless Debian Chromium.

One server and one browser tab serve the whole e2e run (a Chromium page costs ~0.3 GB and a
server start a few seconds on two cores). ``server`` is the URL; ``server_proc`` the
:class:`bench.classroom.Server` (pid for RSS readings).
"""
from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.classroom import Server, free_port  # noqa: E402,F401 - free_port re-exported
# Re-exported for the tests: the browser-less first visit and the Chromium settings live in bench/.
from bench.browser import CHROMIUM, CHROMIUM_ARGS, VIEWPORT, WAIT_MS  # noqa: E402,F401
from bench.harness import first_visit, run_async  # noqa: E402,F401

SHOTS = ROOT / "screenshots"


@pytest.fixture(scope="session")
def server_proc():
    # make test runs `python -m sim.warm` just before; ui.serve loads the kernels in the background.
    srv = Server(warm=False)
    srv.start()
    try:
        srv.first_visitor_switched_language = first_visit(srv.url)
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="session")
def server(server_proc) -> str:
    return server_proc.url


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (make test installs it)")
        pytest.skip("chromium is not installed: run scripts/ensure_chromium.sh")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def _tab(browser):
    ctx = browser.new_context(viewport=VIEWPORT, locale="en-US")
    ctx.set_default_timeout(WAIT_MS)
    pg = ctx.new_page()
    pg.js_errors = []  # uncaught errors in the page's JavaScript
    pg.on("pageerror", lambda exc: pg.js_errors.append(str(exc)))
    yield pg
    ctx.close()


@pytest.fixture
def page(_tab):
    """The one browser tab, reset: normal viewport, no recorded JS errors."""
    _tab.set_viewport_size(VIEWPORT)
    _tab.js_errors.clear()
    yield _tab
    assert not _tab.js_errors, f"JavaScript errors in the page: {_tab.js_errors[:3]}"


@contextlib.contextmanager
def fresh_tabs(browser, **context):
    """Yields ``new(**more)``: a tab in a fresh browser context (a new Streamlit session, no cookies)
    that records the page's JavaScript errors; at the end every context is closed and any error fails."""
    made = []

    def new(**more):
        ctx = browser.new_context(viewport=VIEWPORT, **{**context, **more})
        ctx.set_default_timeout(WAIT_MS)
        pg = ctx.new_page()
        pg.js_errors = []
        pg.on("pageerror", lambda exc: pg.js_errors.append(str(exc)))
        made.append((ctx, pg))
        return pg

    yield new
    errors = [e for _, pg in made for e in pg.js_errors]
    for ctx, _ in made:
        ctx.close()
    assert not errors, f"JavaScript errors in the page: {errors[:3]}"


@pytest.fixture(scope="session")
def shots() -> Path:
    SHOTS.mkdir(exist_ok=True)
    return SHOTS
