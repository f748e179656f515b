"""The class console (a page of its own, for the instructor only: :func:`pages`) and the class box
of the sidebar (:func:`sidebar`: the instructor's panel, or the student's banner / join box)."""

from __future__ import annotations

import streamlit as st

from ui.teaching import answers as _answers
from ui.teaching import class_store as cs
from ui.teaching import dashboard as _lesson
from ui.teaching.live import _CODE, _SLOT, _TEACH, POLL_S, _ct, _page, _short, _stems, _store, context
from ui.teaching.responses import q_prompt, q_value
from ui.teaching.student import _student
from ui.teaching.teacher import (
    _live_answers,
    _pushed_bank,
    _results_and_close,
    _teacher,
    ask,
    hold_only,
    join_box,
    last_results,
    params_line,
)
from ui.kit.i18n import Text
from ui.kit.page import read_url_again


CONSOLE_PATH = "class_console"


def pages(groups: dict, lang: str, teacher: bool) -> dict:
    """The navigation plus the class console for an instructor (registered for nobody else, as
    the parameter editor: a student opening its URL gets the home page)."""
    if not teacher:
        return groups
    page = st.Page(console, title=_ct(lang)("title"), icon=":material/co_present:", url_path=CONSOLE_PATH)
    group = Text("instructor", lang)("editor.group")
    return {**groups, group: [*groups.get(group, []), page]}


def console() -> None:
    """The class console: everything of a live lesson on one page, for the projector-free screen
    of the instructor (the sidebar panel has the same controls beside the lesson)."""
    from ui.teaching import instructor
    from ui.kit.lang import current_lang

    lang = current_lang()
    ct, t = _ct(lang), Text("instructor", lang)
    if not instructor.is_instructor():  # not registered for students; belt and braces
        st.stop()
    st.title(ct("title"))
    st.caption(ct("subtitle"))
    s = st.session_state
    try:
        code = s.get(_TEACH)
        if code is None or not _store().exists(code):
            st.info(ct("console.none"), icon=":material/groups:")
            last_results(t, "console")  # the class this session just ended: its results stay here
            _lesson.console_start(lang)  # a prepared lesson: live, or at the students' pace
            return
        left, right = st.columns([1, 2], gap="large")
        with left:  # the code and the QR first: above the fold on a projector (1400 x 900)
            join_box(code, lang, ct, 260)
        with right:
            _console_state(code, lang, ct, t)
            _live_answers(code, lang, t, height=260, prefix="_console")
        _lesson.console_live(code, lang)  # the class's lesson: its controls and dashboard
    except cs.STORE_ERRORS:
        st.warning(ct("teacher.down"), icon=":material/cloud_off:")


def _console_state(code: str, lang: str, ct: Text, t: Text) -> None:
    @st.fragment(run_every=2 * POLL_S)
    def here():
        try:
            st.metric(ct("console.present"), _store().present(code))
        except cs.STORE_ERRORS:
            st.warning(ct("teacher.down"), icon=":material/cloud_off:")

    here()
    version, view, _ = _store().current(code)
    if view and view.get("page") in _stems():
        title = Text(view["page"], lang)("title")
        params = params_line(
            Text(view["page"], lang),
            ((k, v) for k, v in (view.get("query") or {}).items() if k not in ("preset", "lang", "class")),
        )
        st.markdown(ct("console.pushed", page=title, v=version))
        st.caption(params)
        cols = st.columns(3)
        query = {"lang": lang, **{str(k): str(v) for k, v in (view.get("query") or {}).items()}}
        # a button, not a link: the page must read the pushed view from its URL (read_url_again),
        # not keep what this session last had on it (a question asked there would push that instead)
        if cols[0].button(ct("console.go"), icon=":material/open_in_new:", key="_console_go"):
            read_url_again()
            st.switch_page(_page(view["page"], lang), query_params=query)
        if view.get("hold") and cols[1].button(ct("console.unhold"), key="_console_unhold"):
            _store().push(code, hold_only(view, False))
            st.rerun()
        rel = _answers.released(view["page"])
        if cols[2].button(ct("console.withdraw" if rel else "console.release"), key="_console_release"):
            _answers.release(view["page"], not rel, code)  # tied to the class: its end withdraws it
            st.rerun()
    else:
        st.caption(ct("teacher.open_a_page"))
    bank = _pushed_bank(view)
    if bank and bank.get("stem") in _stems() and bank.get("questions"):
        qs = {q["step"]: q for q in bank["questions"]}
        st.markdown(ct("console.bank", page=Text(bank["stem"], lang)("title")))
        pick = st.selectbox(
            ct("teacher.bank"), list(qs), key="_console_qn", format_func=lambda i: _short(q_prompt(qs[i], lang))
        )
        q = qs[pick]
        context(q, lang, ct)  # what the students will read with it
        if q.get("truth") is not None:
            st.caption(ct("teacher.truth", value=q_value(q, lang, q["truth"])))
        if st.button(t("class.ask"), key="_console_ask"):
            ask(code, q, {"page": bank["stem"], "query": bank["query"], "hold": bool((view or {}).get("hold"))})
            st.rerun()
    c1, c2 = st.columns(2)
    _results_and_close(code, t, ct, "console", c1, c2)


def sidebar(lang: str, teacher: bool) -> None:
    """The class box: the instructor's panel, or the student's banner / join box."""
    t = Text("instructor", lang)
    try:
        (_teacher if teacher else _student)(lang, t)
    except cs.STORE_ERRORS:  # the store is unreachable: say so in words, keep the page
        st.session_state.pop(_SLOT, None)
        (st.sidebar if teacher else st).warning(
            _ct(lang)("teacher.down" if teacher else "banner.down", code=st.session_state.get(_CODE, "")),
            icon=":material/cloud_off:",
        )
