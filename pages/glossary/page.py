"""Glossary: the app's words in English and Chinese, from one file (assets/glossary.toml)."""

from __future__ import annotations

import streamlit as st

from ui.kit.i18n import Text
from ui.kit.nav import PAGES, page
from ui.kit.page import setup
from ui.kit.spec import PageSchema
from pages.glossary.views import rows

SCHEMA = PageSchema("glossary", params=())
ENTRIES = {e.stem: e for e in PAGES}


def _link(stem: str, title: str, lang: str) -> None:
    """A link to the page ``stem`` (client-side, keeping the language)."""
    try:
        st.page_link(page(ENTRIES[stem], lang), label=title, icon=ENTRIES[stem].icon, query_params={"lang": lang})
    except st.errors.StreamlitAPIException:
        # Streamlit's legacy pages/-folder mode (AppTest, the first pass of a deep link after a
        # start) registers file pages, not these: link by URL instead (as ui/kit/share.py does).
        st.markdown(f"[{title}]({stem}?lang={lang})")


def render() -> None:
    ctx = setup(SCHEMA)
    ctx.section("intro")
    titles = {e.stem: Text(e.stem, ctx.lang)("title") for e in PAGES}
    with ctx.guard():
        table = rows(ctx.lang, titles)
    used_on = ctx.t("col.pages") + ("：" if ctx.lang == "zh" else ":")
    # one entry per term (a four-column table does not fit a phone); the pages it is used on as links
    for en, zh, meaning, pages in table:
        with st.container(gap=None):
            st.markdown(f"**{en}** · **{zh}** — {meaning}")
            with st.container(horizontal=True, gap="small", vertical_alignment="center"):
                st.caption(used_on, width="content")
                for stem, title in pages:
                    _link(stem, title, ctx.lang)
    ctx.section("note")
    ctx.footer()


if __name__ == "__main__":
    render()
