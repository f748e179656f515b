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
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in r) + " |" for r in table]
    st.markdown("\n".join(lines))
    ctx.section("note")
    ctx.csv_download("glossary.csv", {h: [r[i] for r in table] for i, h in enumerate(head)})
    ctx.footer()


if __name__ == "__main__":
    render()
