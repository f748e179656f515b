"""The served process prepares itself at start, so that the first student's page is not the one
that pays for it (``ui.server.serve``, point 9).

What a server did on the first page run after it started, 2-3 s of its CPU (measured: a fresh
server left idle for 10 s, then a new Chromium opening a page by its address; the page drawn
2.9 s (home) to 5.8 s (hemisphere) after the click):

- importing the app: ``app.py``'s modules and every page module (plotly, SciPy, the page kit and
  views: ~2.2 s of CPU on this 2-core machine), which ``app.py`` did in its first run;
- loading each Numba kernel from the on-disk cache by its first call (~0.5 s for the attention
  kernels, ~2.7 s for all, imports of the ``sim`` modules included).

:func:`start` (called by ``ui.server.serve`` before the server starts) does the first in a background
thread at once, and :func:`load_kernels` (called when ``sim.warm``'s background children have made
every module's cache current) the second. The first page run waits for the imports
(:func:`wait`, the first statement of ``app.py``) instead of importing the same modules at the
same time from another thread (two threads importing modules that import each other can fail
with Python's import-deadlock error). Nothing here needs Streamlit's runtime, and no cached
function is called (a ``st.cache_data`` function called before the runtime exists would keep
its entries apart from the runtime's). A process that is not the served one (tests, a plain
``streamlit run``) never calls :func:`start`, and :func:`wait` returns at once.
"""

from __future__ import annotations

import ast
import importlib
import logging
import threading
import time
from pathlib import Path

log = logging.getLogger("ui.server.prepare")

APP = Path(__file__).resolve().parents[2] / "app.py"
#: how long the first page run waits for the background imports at most (then imports itself)
WAIT_S = 60.0

_thread: threading.Thread | None = None
_done = threading.Event()
#: seconds each step took (for the server log and the tests); empty until done
timings: dict[str, float] = {}


def app_modules(path: Path = APP) -> list[str]:
    """The modules ``app.py`` imports at its top level (``from ui import a, b`` gives ``ui.a`` and
    ``ui.b``; a name that is not a module, as in ``from ui.kit.nav import PAGES``, gives ``ui.kit.nav``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.append(node.module)
            out += [f"{node.module}.{a.name}" for a in node.names]
    return out


def import_app() -> None:
    """Import what ``app.py`` imports, then every page module (as ``app.py``'s start-up does)."""
    t0 = time.process_time()
    for name in app_modules():
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:  # a module that is really missing: the first page run says so
                raise
            # ``from ui.kit.nav import PAGES``: a name in a module, not a module
    from ui.kit.nav import PAGES, page_module

    for e in PAGES:
        page_module(e.stem)
    timings["imports_cpu_s"] = time.process_time() - t0


def _run() -> None:
    try:
        import_app()
    except Exception:  # noqa: BLE001 - the first page run imports again and shows what is wrong
        log.exception("ui.server.prepare: importing the app failed")
    finally:
        _done.set()


def start() -> threading.Thread:
    """Import the app in a background thread (idempotent); the server answers meanwhile."""
    global _thread
    if _thread is None:
        _thread = threading.Thread(target=_run, name="ui.server.prepare", daemon=True)
        _thread.start()
    return _thread


def wait(timeout: float = WAIT_S) -> bool:
    """In ``app.py``, before it imports anything of its own: wait for :func:`start`'s imports
    (True when they are done, or when nothing was started)."""
    if _thread is None:
        return True
    return _done.wait(timeout)


def load_kernels() -> None:
    """Load every Numba kernel into this process from the on-disk cache (``sim.warm.warm`` here),
    leaving out the modules whose background child failed (their kernels would be compiled here:
    tens of seconds of the server's CPU). Called by ``sim.warm.start_background`` once every
    module is ready; errors are logged (a kernel not loaded now is loaded by its first call)."""
    from sim import warm

    t0 = time.process_time()
    try:
        warm.warm(only=[m for m in warm.modules() if m not in warm.failed()])
    except Exception:  # noqa: BLE001
        log.exception("ui.server.prepare: loading the kernels failed")
    timings["kernels_cpu_s"] = time.process_time() - t0
