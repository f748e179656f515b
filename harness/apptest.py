"""In-process and first-session helpers shared by bench/, scripts/ and the tests.

bench/ and scripts/ import the product and each other, never tests/ (``tests/test_layering.py``);
the tests import these from here (``tests/conftest.py``, ``tests/e2e/conftest.py`` re-export them).

:func:`app_test` resolves ``app.py`` from :data:`ROOT`, but the page scripts read files relative
to the working directory: callers ``os.chdir(ROOT)`` first, as ``tests/conftest.py`` and the
scripts do.
"""
from __future__ import annotations

from pathlib import Path

from bench.browser import WAIT_MS

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


def run_async(fn, *args, **kw):
    """``asyncio.run(fn(*args, **kw))`` in a helper thread: Playwright's sync API keeps an
    event loop running in the main thread, where asyncio.run() is refused."""
    import asyncio
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(1) as ex:
        return ex.submit(lambda: asyncio.run(fn(*args, **kw))).result()


def first_visit(url: str, timeout: float = WAIT_MS / 1000) -> bool:
    """One browser-less session opens the app and switches the language, as the first student
    after a server start would. Returns whether the switch took effect.

    The first session after a server start runs in Streamlit's legacy ``pages/``-folder mode
    until ``st.navigation`` runs; its widgets carry ids from that run and its first widget
    interaction is lost (``test_first_visitor_after_start_can_switch_language``). Making that
    visit here keeps the other browser tests about the pages, and warms imports and Numba.
    """
    from bench.wsclient import StreamlitSession

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
