"""Real servers (started as ``make run`` starts them) and headless Debian Chromium.

Per xdist worker, made on first use and shared by every module that worker runs (a Chromium page
costs ~0.3 GB and a server start a few seconds of CPU):

- ``server`` / ``server_proc``: the plain server (no instructor key), its URL and its
  :class:`harness.server.Server` (pid for RSS readings);
- ``teacher_server``: a server with instructor mode on (``tests._instructor.KEY``) and ``params``,
  this worker's own copy of the parameter file (the editor writes to it; ``pristine`` restores it
  around a test). Tests on one worker run one after another, so they never edit the copy at once;
- ``browser``: one Chromium; ``page`` one reusable tab; ``fresh_tabs`` tabs in new contexts.

No module is pinned to one worker (no ``xdist_group``) unless it must share one expensive fixture
(test_oidc.py: its provider). ``pytest_collection_modifyitems`` puts the long class-session tests
first, so that ``--dist load`` starts them at once and the short ones fill the workers around them.

How a test waits for what an action caused (each rule was a test that failed now and then, with
four workers on two cores):

- wait for something only the new state shows, never for text or an element that may already be
  there. The first words of "Your answer: 3" are also the label of the input box, and an alert
  may be the previous step's;
- after an edit, wait for the run it starts (``harness.browser.after_rerun``), not a fixed sleep
  and then ``wait_ready``: the previous run's finished page also looks ready;
- wait for every element that is checked, not for one of them (every chart named, every toolbar
  in the new language);
- a click that lands while a fragment or the page is redrawn is lost with the element it hit:
  click again when what it causes does not come (``harness.browser.until``, ``open_nav_page``
  and ``flip``). Never retry a click whose effect may only be slow, unless a second click is
  harmless (a second Send replaces the first);
- the teacher's sidebar (Push, Ask) is the same on every page: after a navigation, wait for the
  page's address (``open_nav_page``) before using it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from harness.server import Server, free_port  # noqa: E402,F401 - free_port re-exported

# Re-exported for the tests: the browser-less first visit and the Chromium settings live in harness/.
from harness.browser import CHROMIUM, CHROMIUM_ARGS, VIEWPORT, WAIT_MS, chromium  # noqa: E402,F401
from harness.server import first_visit, run_async  # noqa: E402,F401

SHOTS = ROOT / "screenshots"

#: Tests that take much longer than the rest (several sessions, a whole class): run first. Matched
#: against the node id; the rest keep their order after these.
LONG_FIRST = (
    "test_rehearsal.py",
    "test_lesson.py",
    "test_anywhere.py",
    "test_class_open_join_push",
    "test_choice_question",
    "test_import_refuses",
    "test_released_answers",
    "test_presets_edited",
    "test_oidc.py",
    "test_editor_",
    "test_sign_in_",
    "test_classroom.py",
    "test_link_language_slider_preset[hemisphere]",
)


def pytest_collection_modifyitems(items):
    def rank(item):
        return next((i for i, k in enumerate(LONG_FIRST) if k in item.nodeid), len(LONG_FIRST))

    items.sort(key=rank)  # stable: equal ranks keep the collection order


@pytest.fixture(scope="session")
def server_proc():
    # make test runs `python -m sim.warm` just before; ui.server.serve loads the kernels in the background.
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
def params(tmp_path_factory):
    """This worker's copy of the shipped parameter file (the teacher server's APP_PARAMS_FILE)."""
    from ui.kit.spec import DEFAULT_PARAMS_FILE

    f = tmp_path_factory.mktemp("instructor") / "params.toml"
    shutil.copy(DEFAULT_PARAMS_FILE, f)
    return f


@pytest.fixture(scope="session")
def teacher_server(params):
    """A server with instructor mode on (a shared key) and this worker's parameter file."""
    from tests._instructor import KEY
    from ui.teaching import instructor
    from ui.kit.spec import PARAMS_ENV

    srv = Server(
        warm=False,
        env={
            instructor.KEY_ENV: KEY,
            PARAMS_ENV: str(params),
            "APP_SIGNIN_PER_MIN": "1000",
            "APP_SIGNIN_TOTAL_PER_MIN": "1000",
        },
    )
    srv.start()
    try:
        first_visit(srv.url)
        yield srv.url
    finally:
        srv.stop()


@pytest.fixture
def pristine(params):
    """The parameter file as shipped before and after the test (no backup left behind)."""
    from ui.teaching import params_file as pf
    from ui.kit.spec import DEFAULT_PARAMS_FILE

    original = DEFAULT_PARAMS_FILE.read_text()
    params.write_text(original)
    pf.backup_path(params).unlink(missing_ok=True)
    yield original
    params.write_text(original)
    pf.backup_path(params).unlink(missing_ok=True)


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (make test installs it)")
        pytest.skip("chromium is not installed: run scripts/ensure_chromium.sh")
    with chromium() as b:
        yield b


@contextlib.contextmanager
def watched_tab(browser, **context):
    """A tab in a new browser context (``context``: Playwright's options) whose uncaught JavaScript
    errors are kept in ``tab.js_errors``; closed at the end."""
    ctx = browser.new_context(**context)
    ctx.set_default_timeout(WAIT_MS)
    pg = ctx.new_page()
    pg.js_errors = []  # uncaught errors in the page's JavaScript
    pg.on("pageerror", lambda exc: pg.js_errors.append(str(exc)))
    try:
        yield pg
    finally:
        ctx.close()


@pytest.fixture(scope="session")
def _tab(browser):
    with watched_tab(browser, viewport=VIEWPORT, locale="en-US") as pg:
        yield pg


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


def _tree_cpu_s(root: int) -> dict[str, float]:
    """CPU seconds of ``root``'s live descendants (their reaped children included), by kind:
    Chromium's processes, everything else (this worker's servers)."""
    tick = os.sysconf("SC_CLK_TCK")
    kids, cpu, comm = {}, {}, {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            head, rest = (d / "stat").read_text().rsplit(")", 1)
        except OSError:
            continue
        f = rest.split()
        kids.setdefault(int(f[1]), []).append(int(d.name))
        cpu[int(d.name)] = sum(int(x) for x in f[11:15]) / tick  # utime stime cutime cstime
        comm[int(d.name)] = head.split("(", 1)[1]
    out, todo = {"chromium": 0.0, "other": 0.0}, list(kids.get(root, []))
    while todo:
        p = todo.pop()
        out["chromium" if "chrom" in comm.get(p, "") else "other"] += cpu.get(p, 0.0)
        todo += kids.get(p, [])
    return out


@pytest.fixture(autouse=True)
def _cpu_per_test(request):
    """With ``E2E_CPU=<file>``, append per test the CPU its worker's Chromium and servers spent
    (a loaded run's wall time says little about what a test costs): ``E2E_CPU=cpu.tsv make e2e``."""
    path = os.environ.get("E2E_CPU")
    if not path:
        yield
        return
    c0 = _tree_cpu_s(os.getpid())
    yield
    c1 = _tree_cpu_s(os.getpid())
    with open(path, "a") as f:
        f.write(f"{request.node.nodeid}\t{c1['chromium'] - c0['chromium']:.1f}\t{c1['other'] - c0['other']:.1f}\n")
