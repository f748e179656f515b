"""Glossary: the app's words in English and Chinese, from one file (assets/glossary.toml)."""
from __future__ import annotations

import streamlit as st

from ui.i18n import Text
from ui.nav import PAGES
from ui.page import setup
from ui.spec import PageSchema
from views.glossary import rows

SCHEMA = PageSchema("glossary", params=())


def render() -> None:
    ctx = setup(SCHEMA)
    ctx.section("intro")
    titles = {e.stem: Text(e.stem, ctx.lang)("title") for e in PAGES}
    with ctx.guard():
        table = rows(ctx.lang, titles)
    head = [ctx.t(f"col.{c}") for c in ("en", "zh", "meaning", "pages")]
    # one entry per term (a four-column table does not fit a phone)
    st.markdown("\n".join(f"- **{en}** · **{zh}** — {meaning}  \n  *{head[3]}: {pages}*"
                          for en, zh, meaning, pages in table))
    ctx.section("note")
    ctx.csv_download("glossary.csv", {h: [r[i] for r in table] for i, h in enumerate(head)})
    ctx.footer()


if __name__ == "__main__":
    render()
