"""What a student sees of a class: joins with ``?class=CODE`` (the link / QR) or by typing the
code. A slim banner in the main area of every page (phone first: nothing of the class is only in
the sidebar) says the code, following or not, and carries the live question with its answer box
and, once revealed, the value. A fragment that draws nothing reads the class's stamp every
``POLL_S`` seconds (one store read); when it changed, a push opens the pushed view, a question /
reveal / release / close reruns the page, each with a toast. ``class=CODE`` stays in the page's
URL (:func:`url_flags`), never in a share link (``ui.kit.share``); the answer id comes from the
browser's cookie (``ui.teaching.responses.answer_id``), so a reload or another replica never
counts a student twice.

The store down: a notice in words ("the class cannot be reached; this page still works"), never
an error box; an answer sent meanwhile waits in the session and is sent when the store is back.
A class gone (closed, or lost by a store restart) is said so to the students.
"""

from __future__ import annotations

import math
import secrets
import time

import streamlit as st

from ui.teaching import answers as _answers
from ui.teaching import class_store as cs
from ui.teaching import lesson_run
from ui.teaching.live import (
    _BEAT,
    _CODE,
    _DOWN,
    _FOLLOW,
    _GO,
    _GONE,
    _LEFT,
    _PENDING,
    _REL,
    _SEEN,
    _STAMP,
    _TOASTS,
    _VIEW,
    _WHO,
    BEAT_S,
    POLL_S,
    _ct,
    _page,
    answers_chart,
    _stems,
    _store,
    _toast,
    context,
    fold_sheet,
    plain,
    titles,
)
from ui.teaching.responses import answer_id, parse_answer, q_prompt, q_value, tolerance, verdict
from ui.kit import cover
from ui.kit.i18n import Text
from ui.kit.page import page_shown, read_url_again


def _who(code: str) -> str:
    s = st.session_state
    if s.get(_WHO, ("", ""))[0] != code:
        try:
            cookies = dict(st.context.cookies)
        except Exception:  # noqa: BLE001 - no browser context (tests)
            cookies = {}
        s[_WHO] = (code, answer_id(code, cookies) or secrets.token_hex(8))
    return s[_WHO][1]


def url_flags() -> dict:
    """``{"class": CODE}`` while this session is a student in a class: the pages keep it in their
    URL, so a browser that reconnects to another replica (or reloads) is in the class again."""
    code = st.session_state.get(_CODE)
    return {"class": code} if code else {}


def _join(code: str) -> bool:
    code = (code or "").strip().upper()
    if not cs.valid_code(code) or not _store().exists(code):
        return False
    s = st.session_state
    s[_CODE], s[_FOLLOW], s[_SEEN] = code, True, 0
    s.pop(_STAMP, None)
    s.pop(_LEFT, None)
    s.pop(_GONE, None)
    return True


def _join_from_form() -> None:
    try:
        ok = _join(st.session_state.get("_class_join_code", ""))
    except cs.STORE_ERRORS:
        ok = False
    if not ok:
        st.session_state["_class_join_bad"] = True


def _leave() -> None:
    s = st.session_state
    s[_LEFT] = s.get(_CODE)  # the URL may still name it: do not rejoin a closed class
    for k in (_CODE, _FOLLOW, _SEEN, _STAMP, _VIEW):
        s.pop(k, None)


def _show_toasts(lang: str) -> None:
    """The toasts noted since the last full run, each once (the same toast noted twice: shown once)."""
    ct = _ct(lang)
    for item in dict.fromkeys(st.session_state.pop(_TOASTS, [])):
        key, values = (item, ()) if isinstance(item, str) else item  # a bare text key: no values
        st.toast(ct(f"toast.{key}", **dict(values)), icon=":material/notifications:")


def _go(view: dict, lang: str, code: str) -> None:
    """Open ``view`` (its page and parameters, this session's language and class). Called only at
    the top of a full run (:func:`follow_push`), never inside a fragment: the poll and the banner's
    buttons ask for it with :func:`_go_next`."""
    if view.get("page") not in _stems():
        return
    query = {str(k): str(v) for k, v in (view.get("query") or {}).items() if k not in ("lang", "class")}
    read_url_again()  # the page reads its values from the URL (the pushed view) again
    st.switch_page(_page(view["page"], lang), query_params={"lang": lang, "class": code, **query})


def follow_push() -> None:
    """First thing in a full run (app.py, before the run waits for its turn): a push that the poll
    saw (:func:`_go_next`) opens its page now, in this session's language, before anything is
    drawn."""
    s = st.session_state
    view = s.pop(_GO, None)
    code = s.get(_CODE)
    if view is not None and code is not None:
        from ui.kit.lang import current_lang

        _go(view, current_lang(), code)


def _go_next(view: dict) -> None:
    """From a fragment (the poll, the banner): open ``view`` on a full run of the app, now: the
    page switch then takes Streamlit's ordinary path, before anything is drawn. (Fragment reruns
    still on their way from the page left are handled by the server: ``ui.server.serve``, point 7.)"""
    st.session_state[_GO] = view
    st.rerun()


def _apply_latest(version: int | None = None) -> None:
    """If a newer push exists, go to its page with its parameters (this session's language)."""
    s = st.session_state
    code = s.get(_CODE)
    if version is not None and version <= s.get(_SEEN, 0):
        return  # the stamp says nothing new: no read of the view
    version, view, _ = _store().current(code)
    if not view or version <= s.get(_SEEN, 0):
        return
    old = s.get(_VIEW)
    s[_SEEN], s[_VIEW] = version, view
    lesson_hold = view.get("hold") and view.get("lesson_step") is not None  # a lesson held: its step, as a push
    if view.get("only_hold") and old and _place(old) == _place(view) and not lesson_hold:
        # the teacher held or released the class on the view it has: nobody is moved (a student's
        # own slider values stay); held, the poll brings back a student who is on another page
        _toast("held" if view.get("hold") else "unheld")
        st.rerun()  # the banner says it
    _toast("held" if view.get("hold") else "pushed")
    _go_next(view)


def _place(view: dict) -> tuple:
    """Where a view opens: its page and its parameters."""
    return view.get("page"), view.get("query") or {}


def _flush(code: str) -> None:
    """Send the answers kept while the store was down (a closed class: dropped)."""
    pend = st.session_state.get(_PENDING) or {}
    for (c, qid), v in list(pend.items()):
        try:
            _store().answer(c, qid, _who(c), v)
            st.session_state[f"_class_sent_{c}_{qid}"] = v
        except (KeyError, ValueError):
            pass
        pend.pop((c, qid), None)
        _toast("sent_later")


def _send(code: str, q: dict, lang: str) -> None:
    """The Send button's callback: check the answer, store it (or keep it while the store is down)."""
    s = st.session_state
    qid = q["id"]
    v, bad = parse_answer(q, s.get(f"_class_ans_{qid}"))
    s[f"_class_err_{qid}"] = bad
    if bad:
        return
    try:
        _store().answer(code, qid, _who(code), v)
    except cs.STORE_ERRORS:
        s.setdefault(_PENDING, {})[(code, qid)] = v
        s[_DOWN] = True
        return
    except KeyError:
        s[f"_class_err_{qid}"] = "answer_closed"
        return
    s[f"_class_sent_{code}_{qid}"] = v
    s.pop(f"_class_edit_{code}_{qid}", None)


def _change(code: str, qid: int) -> None:
    """ "Change my answer": the box again; the answer sent stays until a new one replaces it."""
    st.session_state[f"_class_edit_{code}_{qid}"] = True
    st.session_state.pop(f"_class_sent_{code}_{qid}", None)


def _answer_box(code: str, q: dict, lang: str, t: Text) -> None:
    ct = _ct(lang)
    s = st.session_state
    qid, who = q["id"], _who(code)
    stem = q.get("stem")
    page = Text(stem, lang)("title") if stem in _stems() else ""
    prompt = q_prompt(q, lang)
    if q.get("step"):  # a page's step: its instruction (which experiment, which setting) and parameters
        st.markdown(ct("banner.head", page=page))
        context(q, lang, ct)
        st.markdown(f"**{prompt}**")
    else:  # the instructor's own text: shown literally, as ordinary text
        plain(prompt, ct("banner.asked", page=page))
    rev = _store().revealed(code, qid)
    sent_key = f"_class_sent_{code}_{qid}"  # per class: question ids start at 1 in every class
    editing = s.get(f"_class_edit_{code}_{qid}", False)
    sent = None if editing else s.get(sent_key)
    if sent is None and not editing:
        sent = _store().answered(code, qid, who)  # sent before a reload: not asked again
    pending = (code, qid) in (s.get(_PENDING) or {})
    if sent is None and rev is None and not pending:
        if q.get("step") and stem:  # a page's own step: its figures wait until it is answered
            cover.question_open(stem, q["step"])
        with st.container(horizontal=True, vertical_alignment="bottom", key=f"_class_row_{qid}"):
            if q.get("kind") == "choice":
                labels = (q.get("labels") or {}).get(lang) or {}
                st.radio(
                    t("class.your_answer"),
                    list(q.get("options") or []),
                    key=f"_class_ans_{qid}",
                    index=None,
                    horizontal=True,
                    format_func=lambda c: str(labels.get(c, c)),
                )
            else:
                unit = (q.get("unit") or {}).get(lang) if isinstance(q.get("unit"), dict) else ""
                unit = "" if unit in ct("banner.no_unit").split("|") else unit  # "no unit": said by nothing
                label = ct("banner.your_answer_unit", unit=unit) if unit else t("class.your_answer")
                st.number_input(
                    label,
                    key=f"_class_ans_{qid}",
                    value=None,
                    format="%g",
                    step=None,
                    placeholder=ct("banner.placeholder"),
                    width=220,
                )
            st.button(t("class.send"), key=f"_class_send_{qid}", type="primary", on_click=_send, args=(code, q, lang))
        err = s.get(f"_class_err_{qid}")
        if err:
            st.warning(ct(f"banner.{err}"), icon=":material/edit:")
    elif pending:
        st.caption(ct("banner.pending"))
    elif rev is None:
        with st.container(horizontal=True, vertical_alignment="center", key=f"_class_sent_row_{qid}"):
            st.caption(t("class.sent") + " " + ct("banner.your", value=q_value(q, lang, sent)))
            st.button(
                ct("banner.change"), key=f"_class_change_{qid}", type="tertiary", on_click=_change, args=(code, qid)
            )
    if rev is not None:
        ok = verdict(q, sent, rev)
        line = ct("banner.exact", value=q_value(q, lang, rev))
        if sent is not None:
            line += " " + ct("banner.your", value=q_value(q, lang, sent))
            if q.get("kind") == "choice":  # a choice is right or not: no tolerance
                line += " " + ct("banner.right_choice" if ok else "banner.wrong_choice")
            else:
                line += " " + ct("banner.right" if ok else "banner.wrong", tol=tolerance(q, lang))
        (st.success if ok else st.info)(line, icon=":material/check_circle:" if ok else ":material/info:")
        _distribution(code, q, ct)


def _distribution(code: str, q: dict, ct: Text) -> None:
    try:
        answers_chart(_store().answers(code, q["id"]), q, ct.lang, 140, ct("hist.answer"), ct("hist.count"))
    except cs.STORE_ERRORS:
        raise
    except Exception:  # noqa: BLE001 - the chart is a bonus; the verdict above stands
        pass


def _poll(code: str, lang: str) -> None:
    """Every ``POLL_S`` seconds: one read of the class's stamp; nothing drawn. Only when it
    changed: a new push opens the pushed view (following students), a new question, a reveal, a
    release of answers or a close reruns the page (with a toast); a held class brings a student who
    wandered off back to the pushed page. The store down: the page reruns once to say so."""
    s = st.session_state
    try:
        if s.get(_PENDING):
            _flush(code)
        stamp = _store().stamp(code)
        now = time.monotonic()
        if stamp is not None and now - s.get(_BEAT, -math.inf) >= BEAT_S:
            s[_BEAT] = now
            _store().here(code, _who(code))
    except cs.STORE_ERRORS:
        if not s.get(_DOWN):
            s[_DOWN] = True
            st.rerun()
        return
    if s.get(_DOWN):
        s[_DOWN] = False
        st.rerun()
    if stamp is None:  # closed, or lost
        if s.get(_CODE) == code:
            _toast("ended")
            st.rerun()
        return
    if s.get(_FOLLOW):
        _apply_latest(stamp[0])
        view = s.get(_VIEW) or {}
        here = page_shown()
        if view.get("hold") and here is not None and here != view.get("page"):
            _go_next(view)  # no second toast: the banner says the class is held
    old = s.get(_STAMP)
    if old is not None and old[1:] != stamp[1:]:
        _toast("question" if stamp[1] != old[1] else "revealed")
        st.rerun()
    rel = _answers.released_pages()
    if s.get(_REL) is not None and rel != s.get(_REL):
        new = titles(sorted(rel - s[_REL]), lang)
        if new:  # which pages: a student on another page knows where to look
            _toast("released", pages=new)
        st.rerun()


def _box(code: str, lang: str, t: Text) -> None:
    """The banner: code, following or not, the live question and its answer box (a fragment: its
    buttons rerun only it)."""
    s = st.session_state
    ct = _ct(lang)
    _show_toasts(lang)
    try:
        s[_STAMP] = _store().stamp(code)  # read before what is drawn: a change after it is polled
        q = _store().question(code) if s[_STAMP] is not None else None
        ended = _store().ended(code) if s[_STAMP] is None else False
    except cs.STORE_ERRORS:
        s[_DOWN] = True
        st.warning(ct("banner.down", code=code), icon=":material/cloud_off:")
        return
    s[_DOWN] = False
    if s[_STAMP] is None:
        s[_GONE] = (code, bool(ended))  # told on every later run too, until the student joins again
        st.info(ct("banner.ended" if ended else "banner.lost", code=code), icon=":material/event_busy:")
        _leave()  # the join box comes back on the next run
        return
    with st.container(horizontal=True, vertical_alignment="center", key="_class_head"):
        if s.get(_FOLLOW):
            view = s.get(_VIEW) or {}
            if view.get("hold") and view.get("page") in _stems():  # said in the banner, not only in a toast
                st.markdown(ct("banner.held", code=code, page=Text(view["page"], lang)("title")))
            else:
                st.markdown(ct("banner.following", code=code))
            if st.button(t("class.stop"), key="_class_stop", type="tertiary"):
                s[_FOLLOW] = False
                st.rerun(scope="fragment")
        else:
            st.markdown(ct("banner.not_following", code=code))
            if st.button(t("class.follow"), key="_class_refollow", type="tertiary"):
                s[_FOLLOW] = True
                s[_SEEN] = 0
                _apply_latest()
                st.rerun(scope="fragment")
    if q:
        try:
            if _moved_on(code, q):  # revealed, and the class went on: folded away, not the first screen
                with st.expander(ct("banner.earlier", n=q["id"]), icon=":material/history:"):
                    _answer_box(code, q, lang, t)
            else:
                _answer_box(code, q, lang, t)
        except cs.STORE_ERRORS:
            st.warning(ct("banner.down", code=code), icon=":material/cloud_off:")


def _moved_on(code: str, q: dict) -> bool:
    """The live question was revealed and the class has been sent another view since it was asked
    (its ``version``, the push it was asked at): what the student now looks at is elsewhere."""
    version = q.get("version")
    if not isinstance(version, int) or _store().revealed(code, q["id"]) is None:
        return False
    now, view, _ = _store().current(code)
    at = q.get("at")
    if isinstance(at, dict) and view and _place(view) == _place(at):
        return False  # pushed again, or held or released, on the view it was asked about
    return now > version


def _student(lang: str, t: Text) -> None:
    s = st.session_state
    raw = st.query_params.get("class")
    raw = None if raw is None else str(raw).strip().upper()
    if raw is not None and s.get(_CODE) != raw and s.get(_LEFT) != raw:
        try:
            ok = _join(raw)
        except cs.STORE_ERRORS:
            ok = None
        if ok is False:
            st.warning(t("class.no_such_class"), icon=":material/event_busy:")
        elif ok is None:
            st.warning(_ct(lang)("banner.down", code=raw), icon=":material/cloud_off:")
    code = s.get(_CODE)
    if code is None:
        gone = s.get(_GONE)
        if gone:  # the class this student was in ended (or was lost): said where the banner was
            with st.container(border=True, key="class_banner"):
                st.info(
                    _ct(lang)("banner.ended" if gone[1] else "banner.lost", code=gone[0]), icon=":material/event_busy:"
                )
        with st.sidebar.expander(t("class.join_title"), icon=":material/groups:"):
            st.text_input(t("class.code"), key="_class_join_code", max_chars=cs.CODE_LEN + 4)
            st.button(t("class.join"), key="_class_join", on_click=_join_from_form)
            if s.pop("_class_join_bad", False):
                st.error(t("class.no_such_class"))
        return
    # The released answers are drawn by the page, not by the banner: what the page was drawn with
    # is noted here, in the full run, and never by the banner's own reruns (a student answering in
    # the banner after a release would otherwise note it, and the poll would never redraw the page)
    s[_REL] = _answers.released_pages()
    # the main area, above the page: on a phone the sidebar is closed
    with st.container(border=True, key="class_banner"):
        fold_sheet("join", code)  # a phone: the sheet the code was typed in folds away
        box, poll = lesson_run.banner(code, _box, _poll, _who)  # a class running a lesson: its step view
        st.fragment(box)(code, lang, t)
        if s.get(_CODE) == code:
            st.fragment(run_every=POLL_S)(poll)(code, lang)
