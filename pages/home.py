"""Home page: what the app teaches and where to start."""
from __future__ import annotations

import streamlit as st

from ui.i18n import Text
from ui.nav import PAGES, page
from ui.page import setup
from ui.spec import PageSchema

SCHEMA = PageSchema("home", params=())


def render() -> None:
    ctx = setup(SCHEMA)
    ctx.section("intro")
    st.subheader(ctx.t("pages_title"))
    for e in PAGES:
        if e.stem == "home":
            continue
        pt = Text(e.stem, ctx.lang)
        with st.container(border=True):
            st.page_link(page(e, ctx.lang), label=pt("title"), icon=e.icon)
            st.caption(pt("subtitle"))
    ctx.section("times")
    ctx.section("howto")
    ctx.footer()


if __name__ == "__main__":
    render()
