"""Streamlit's AppTest (in-process: no server, no browser) on one page of the app, for the tests
and the scripts that measure a script run (``scripts/rerun_breakdown.py``, ``profile_rerun.py``).

:func:`app_test` resolves ``app.py`` from :data:`ROOT`, but the page scripts read files relative
to the working directory: callers ``os.chdir(ROOT)`` first, as ``tests/conftest.py`` and the
scripts do.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: AppTest's limit for one script run. It is a hang detector, not a speed test: the dearest run (the
#: first one in a process: imports, Numba cache loads, a cold page) costs ~10 s of CPU; with both cores
#: busy with other work and two xdist workers, a process gets a third of a core or less, and such a
#: run takes over 90 s of wall time (it did). Speed is measured in bench/, never by a time-out here.
APPTEST_TIMEOUT = 600.0


def _stems() -> list[str]:
    from ui.kit.nav import PAGES

    return [e.stem for e in PAGES]


STEMS = _stems()


def page_schema(stem: str):
    """The PageSchema declared at the top of pages/<stem>.py (importing does not render)."""
    from ui.kit import files

    return files.page_module(stem).SCHEMA


def open_page(at, stem: str):
    """Point an AppTest at page ``stem`` for its next ``run()``.

    Pages are functions (``st.Page(render, url_path=stem)``, see ui/kit/nav.py), and
    ``AppTest.switch_page`` only resolves file pages; the script hash Streamlit uses for a page is
    the hash of its URL path, which is what a browser session sends as well."""
    matches = [h for h, info in at._registered_pages.items() if info.get("url_pathname") == stem]
    if not matches:
        raise ValueError(f"no registered page {stem!r}: {list(at._registered_pages.values())}")
    at._page_hash = matches[0]
    return at


def new_app_test(timeout: float = APPTEST_TIMEOUT):
    """An AppTest of app.py, not yet run."""
    from streamlit.testing.v1 import AppTest

    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)


def app_test(stem: str, query: dict | None = None, timeout: float = APPTEST_TIMEOUT):
    """An AppTest that runs app.py on page ``stem`` with the given query string."""
    at = new_app_test(timeout)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    if stem != "home":
        open_page(at, stem)
        for k, v in (query or {}).items():
            at.query_params[k] = v
        at.run()
    return at
