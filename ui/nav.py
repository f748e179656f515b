"""The page registry: order, grouping and icons in one place.

Titles come from each page's text file (``title``), so the navigation follows
the language. To add a page: create ``pages/<stem>.py`` and its texts, then add
one ``Entry`` line below.
"""
from __future__ import annotations

from dataclasses import dataclass

from ui.i18n import Text


@dataclass(frozen=True)
class Entry:
    stem: str
    group: str  # key into common.toml [groups]
    icon: str


PAGES: tuple[Entry, ...] = (
    Entry("home", "start", ":material/home:"),
    Entry("two_point", "sphere", ":material/compare_arrows:"),
    Entry("hemisphere", "sphere", ":material/bubble_chart:"),
    Entry("gaussian_width", "width", ":material/blur_on:"),
    Entry("nonnormal", "depth", ":material/trending_up:"),
    Entry("depth_sum", "depth", ":material/stacked_line_chart:"),
)


def navigation(lang: str):
    """Build the ``st.navigation`` mapping {group title: [st.Page, ...]}."""
    import streamlit as st

    common = Text("common", lang)
    groups: dict[str, list] = {}
    for e in PAGES:
        page = st.Page(f"pages/{e.stem}.py", title=Text(e.stem, lang)("title"), icon=e.icon,
                       url_path=e.stem, default=(e.stem == "home"))
        groups.setdefault(common(f"groups.{e.group}"), []).append(page)
    return groups
