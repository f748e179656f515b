"""The page registry: order, grouping and icons in one place.

Titles come from each page's text file (``title``), so the navigation follows
the language. To add a page: docs/architecture.md, "A new page: the checklist"
(tests/test_new_page_checklist.py enforces it); its registry line goes below.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ui.kit import files
from ui.kit.i18n import Text


@dataclass(frozen=True)
class Entry:
    stem: str
    group: str  # key into common.toml [groups]
    icon: str


# stem, group, icon: one page a line, in menu order
_TABLE = """
    home             start     :material/home:
    glossary         start     :material/translate:
    two_point        sphere    :material/compare_arrows:
    hemisphere       sphere    :material/bubble_chart:
    measures         sphere    :material/scatter_plot:
    low_temperature  sphere    :material/ac_unit:
    gaussian_width   width     :material/blur_on:
    width            width     :material/expand:
    nonnormal        depth     :material/trending_up:
    depth_sum        depth     :material/stacked_line_chart:
    coordinates      training  :material/swap_horiz:
    rotation         training  :material/cyclone:
    block            block     :material/view_in_ar:
"""
PAGES: tuple[Entry, ...] = tuple(Entry(*line.split()) for line in _TABLE.strip().splitlines())


def page_module(stem: str):
    """The page module of ``stem`` (``pages/<stem>/page.py``, imported once per process)."""
    return files.page_module(stem)


def page(e: Entry, lang: str):
    """The ``st.Page`` of one entry (also what ``st.page_link`` needs to link to it)."""
    import streamlit as st

    return st.Page(
        page_module(e.stem).render,
        title=Text(e.stem, lang)("title"),
        icon=e.icon,
        url_path=e.stem,
        default=(e.stem == "home"),
    )


def navigation(lang: str):
    """Build the ``st.navigation`` mapping {group title: [st.Page, ...]}.

    Each page is its module's ``render`` function, not its file: a file page is re-executed on
    every rerun (Streamlit's AST "magic", then every ``SCHEMA`` and every cache decorator built
    anew on every rerun); a function page runs only ``render()``. The URL path is the
    stem (``/two_point``).
    """
    common = Text("common", lang)
    groups: dict[str, list] = {}
    for e in PAGES:
        groups.setdefault(common(f"groups.{e.group}"), []).append(page(e, lang))
    return groups


def take_unknown_page(known: frozenset | set = frozenset()) -> str | None:
    """If the browser asked for a path that is no page (``/nosuchpage``), make this run open the
    home page quietly and return the path asked for (for a notice in the reader's language).
    ``known``: the url paths of the pages registered in this run besides the topic pages (the
    instructor's console, editor and Lessons page: a teacher reloading one of them stays there).

    Streamlit itself would open the home page too, but with its own English "Page not found"
    dialog. It resolves a first request by the URL path (``intended_page_name``); an empty intent
    resolves to the default page without that dialog. (Pinned streamlit 1.67.)"""
    from ui import streamlit_internals

    ctx = streamlit_internals.run_ctx()
    intent = streamlit_internals.intended_page(ctx) if ctx is not None else None
    if intent is None:  # no script context (bare mode) or another streamlit
        return None
    name, page_hash = intent
    if page_hash or not name or name.strip("/") in {e.stem for e in PAGES} | set(known):
        return None
    streamlit_internals.clear_intent(ctx)
    return name


def unknown_page_notice(path: str, lang: str) -> str:
    """The notice for an unknown path; the path is shown literally (only letters, digits, ``_``,
    ``-``, ``.`` and ``/`` kept, at most 40 of them), inside a code span."""
    shown = re.sub(r"[^A-Za-z0-9_./-]", "", str(path).strip("/"))[:40] or "?"
    return Text("common", lang)("nav.unknown_page", path=shown)


def leave_mpa_v1() -> None:
    """Make sure the page runs inside app.py's ``st.navigation``.

    Streamlit treats an app with a folder named ``pages/`` as a v1 multipage app until
    some session has run ``st.navigation`` (a process-wide flag). If the first request
    after a server start is a deep link such as ``/two_point``, it would run the page
    script alone, without the router (no language switch, no titles). Clearing the flag
    and rerunning routes the request through app.py. (Pinned streamlit 1.67.)
    """
    import streamlit as st

    from ui import streamlit_internals

    if streamlit_internals.uses_pages_directory() and streamlit_internals.set_uses_pages_directory(False):
        st.rerun()
