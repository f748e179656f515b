"""The language in force and the sidebar switch that sets it."""
from __future__ import annotations

import streamlit as st

from ui.kit.i18n import LANG_NAMES, normalize_lang
from ui.kit.spec import LANGS


def current_lang() -> str:
    """The language in force: widget state, else ``?lang=``, else browser locale, else en."""
    state = st.session_state
    lang = normalize_lang(state.get("lang"))
    if lang:
        return lang
    raw = st.query_params.get("lang")
    lang = normalize_lang(raw)
    if lang is None:
        try:
            lang = normalize_lang(st.context.locale)
        except Exception:  # noqa: BLE001 - no browser context (tests, bare mode)
            lang = None
    return lang or "en"


def language_selector() -> str:
    """Draw the sidebar language switch (once per run, in app.py) and return the language."""
    lang = current_lang()
    raw = st.query_params.get("lang")
    if "lang" not in st.session_state:
        st.session_state["lang"] = lang
        if raw is not None and normalize_lang(raw) is None:
            st.session_state["_lang_notice"] = raw
    st.sidebar.segmented_control(
        "Language / 语言", options=list(LANGS), format_func=LANG_NAMES.get,
        key="lang", required=True, label_visibility="collapsed",
    )
    return normalize_lang(st.session_state.get("lang")) or "en"
