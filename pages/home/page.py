"""Home page: what the app teaches and where to start."""

from __future__ import annotations

import streamlit as st

from ui.kit.page import setup
from ui.kit.spec import PageSchema
from pages.home.views import page_cards

SCHEMA = PageSchema("home", params=())


def render() -> None:
    ctx = setup(SCHEMA)
    ctx.section("intro")
    st.subheader(ctx.t("pages_title"))
    for target, title, icon, subtitle in page_cards(ctx.lang):
        with st.container(border=True):
            st.page_link(target, label=title, icon=icon)
            st.caption(subtitle)
    ctx.section("times")
    ctx.section("howto")
    ctx.footer()


if __name__ == "__main__":
    render()
