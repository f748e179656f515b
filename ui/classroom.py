"""Class sessions in the sidebar: the instructor opens a class, students join and follow.

* Instructor: "Open a class" gives a short code, a join link and its QR code (``segno``, SVG).
  "Push this view" sends the page and its parameters (never the language) to everyone following;
  a live question (a number or a choice, tied to one of the page's questions) collects anonymous
  answers, shown as a histogram as they arrive; "Reveal" shows the exact value to the class.
* Student: joins with ``?class=CODE`` (the link / QR) or by typing the code; a banner says
  "following the class". A fragment that draws nothing reads the class's stamp (one store read)
  every ``POLL_S`` seconds; only when it changed does anything run: a new push opens the pushed
  view, a new question / reveal / close reruns the page (so a push reaches a follower within
  about ``POLL_S`` + one page run). The banner, stop/follow and the answer box are a fragment
  without a timer (its buttons rerun only it). ``class=CODE`` stays in the page's URL
  (:func:`url_flags`): a browser that reconnects to another replica is in the class again, and
  its answer id comes from its cookie (:func:`answer_id`), so an answer is never counted twice.
  "Stop following" keeps the student where they are; "Follow again" jumps to the latest push.
* An instructor can take an open class over by its code ("Continue this class"): another tab,
  or a new session after the instructor's replica died.

State lives in ``ui.class_store`` (in memory, or Redis with ``APP_REDIS_URL``).
"""
from __future__ import annotations

import hashlib
import secrets
from urllib.parse import urlsplit

import streamlit as st

from ui import class_store as cs
from ui.answers import LAST_VIEW
from ui.i18n import Text

POLL_S = 1.0  # see _poll: a poll that finds nothing new is one store read
_CODE = "_class_code"        # session: the class this session belongs to (student or instructor)
_FOLLOW = "_class_follow"    # session: student follows pushes
_SEEN = "_class_seen"        # session: version of the last push applied
_WHO = "_class_who"          # session: random anonymous id for answers
_TEACH = "_class_teach"      # session: code of the class this instructor opened
_STAMP = "_class_stamp"      # session: the class's stamp (version, question, reveals) last drawn
_LEFT = "_class_left"        # session: a class that closed (its code may still be in the URL)


def _store():
    return cs.get_store()


def join_link(code: str) -> str:
    try:
        u = urlsplit(st.context.url or "")
        base = f"{u.scheme}://{u.netloc}" if u.scheme and u.netloc else ""
    except Exception:  # noqa: BLE001 - no browser context (tests)
        base = ""
    return f"{base}/?class={code}"


def qr_svg(text: str) -> str:
    import segno

    return segno.make(text, error="m").svg_inline(scale=4, dark="#000", light="#fff")


def _page(stem: str, lang: str):
    from ui.nav import PAGES, page

    return page(next(e for e in PAGES if e.stem == stem), lang)


# --------------------------------------------------------------------------- student
def answer_id(code: str, cookies) -> str | None:
    """The student's anonymous answer id in class ``code``, from the browser's cookie (nginx's
    sticky ``st_replica``, else Streamlit's ``_streamlit_xsrf``); None without either. The same
    browser gets the same id after reconnecting to another replica, so an answer sent again
    replaces the first instead of counting twice. Hashed with the class code: ids are not
    linkable across classes and no cookie value is stored."""
    base = (cookies or {}).get("st_replica") or (cookies or {}).get("_streamlit_xsrf") or ""
    return hashlib.sha256(f"{code}|{base}".encode()).hexdigest()[:16] if base else None


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
    st.session_state[_CODE] = code
    st.session_state[_FOLLOW] = True
    st.session_state[_SEEN] = 0
    st.session_state.pop(_STAMP, None)
    return True


def _join_from_form() -> None:
    if not _join(st.session_state.get("_class_join_code", "")):
        st.session_state["_class_join_bad"] = True


def _leave() -> None:
    s = st.session_state
    s[_LEFT] = s.get(_CODE)  # the URL may still name it: do not rejoin a closed class
    for k in (_CODE, _FOLLOW, _SEEN, _STAMP):
        s.pop(k, None)


def _apply_latest(lang: str, version: int | None = None) -> None:
    """If a newer push exists, go to its page with its parameters (this session's language)."""
    s = st.session_state
    code = s.get(_CODE)
    if version is not None and version <= s.get(_SEEN, 0):
        return  # the stamp says nothing new: no read of the view
    version, view, _ = _store().current(code)
    if not view or version <= s.get(_SEEN, 0):
        return
    s[_SEEN] = version
    from ui.nav import PAGES

    if view.get("page") not in {e.stem for e in PAGES}:
        return
    query = {str(k): str(v) for k, v in (view.get("query") or {}).items() if k not in ("lang", "class")}
    s["_active_page"] = None  # the page reads its values from the URL again
    st.switch_page(_page(view["page"], lang), query_params={"lang": lang, "class": code, **query})


def _answer_box(code: str, t: Text) -> None:
    q = _store().question(code)
    if not q:
        return
    qid, who = q["id"], _who(code)
    # the page the question is on, by its title: a student may be on another page (e.g. just joined)
    from ui.nav import PAGES

    stem = q.get("stem")
    page = Text(stem, t.lang)("title") if stem in {e.stem for e in PAGES} else "?"
    st.markdown(t("class.question", n=q.get("q", "?"), page=page))
    rev = _store().revealed(code, qid)
    sent_key = f"_class_sent_{code}_{qid}"  # per class: question ids start at 1 in every class
    sent = st.session_state.get(sent_key)
    if sent is None:
        sent = _store().answered(code, qid, who)  # sent before a reconnect: not asked again
    if sent is None:
        if q.get("kind") == "choice":
            st.radio(t("class.your_answer"), list(q.get("options") or []), key=f"_class_ans_{qid}", index=None)
        else:
            st.number_input(t("class.your_answer"), key=f"_class_ans_{qid}", value=None, format="%g")
        if st.button(t("class.send"), key=f"_class_send_{qid}"):
            v = st.session_state.get(f"_class_ans_{qid}")
            if v is not None:
                v = float(v) if q.get("kind") != "choice" else v
                if q.get("kind") == "choice" and v not in (q.get("options") or []):
                    v = None
            if v is not None:
                _store().answer(code, qid, who, v)
                st.session_state[sent_key] = sent = v
    if sent is not None:
        st.caption(t("class.sent"))
    if rev is not None:
        st.caption(t("class.revealed"))
        st.code(str(rev), language=None)


def _poll(code: str, lang: str) -> None:
    """Every ``POLL_S`` seconds: one read of the class's stamp; nothing drawn. Only when the stamp
    changed: a new push opens the pushed view (following students), a new question, a reveal or a
    close reruns the page so the class box shows it. A poll that finds nothing new costs one
    store read and Streamlit's fragment overhead (no element is sent)."""
    s = st.session_state
    stamp = _store().stamp(code)
    if stamp is None:  # closed
        if s.get(_CODE) == code:
            st.rerun()
        return
    if s.get(_FOLLOW):
        _apply_latest(lang, stamp[0])
    old = s.get(_STAMP)
    if old is not None and old[1:] != stamp[1:]:
        st.rerun()


def _box(code: str, lang: str, t: Text) -> None:
    """The banner, stop/follow, and the answer box (a fragment: its buttons rerun only it)."""
    s = st.session_state
    s[_STAMP] = _store().stamp(code)  # read before what is drawn: a change after it is polled
    if s[_STAMP] is None:
        st.info(t("class.closed"))
        _leave()  # the join box comes back on the next run
        return
    if s.get(_FOLLOW):
        st.success(t("class.following", code=code), icon=":material/cast_for_education:")
        if st.button(t("class.stop"), key="_class_stop"):
            s[_FOLLOW] = False
            st.rerun(scope="fragment")
    else:
        st.info(t("class.not_following", code=code))
        if st.button(t("class.follow"), key="_class_refollow"):
            s[_FOLLOW] = True
            s[_SEEN] = 0
            _apply_latest(lang)
            st.rerun(scope="fragment")
    _answer_box(code, t)


def _student(lang: str, t: Text) -> None:
    s = st.session_state
    raw = st.query_params.get("class")
    raw = None if raw is None else str(raw).strip().upper()
    if raw is not None and s.get(_CODE) != raw and s.get(_LEFT) != raw:
        if not _join(raw):
            st.sidebar.warning(t("class.no_such_class"))
    code = s.get(_CODE)
    if code is None:
        with st.sidebar.expander(t("class.join_title"), icon=":material/groups:"):
            st.text_input(t("class.code"), key="_class_join_code", max_chars=cs.CODE_LEN + 4)
            st.button(t("class.join"), key="_class_join", on_click=_join_from_form)
            if s.pop("_class_join_bad", False):
                st.error(t("class.no_such_class"))
        return

    with st.sidebar:
        st.fragment(_box)(code, lang, t)
        if s.get(_CODE) == code:
            st.fragment(run_every=POLL_S)(_poll)(code, lang)


# --------------------------------------------------------------------------- instructor
def _histogram(values: list, q: dict):
    import numpy as np

    if q.get("kind") == "choice":
        opts = list(q.get("options") or [])
        return {"answer": opts, "count": [sum(1 for v in values if v == o) for o in opts]}
    x = np.asarray([v for v in values if isinstance(v, (int, float))], dtype=float)
    if x.size == 0:
        return {"answer": [], "count": []}
    lo, hi = float(x.min()), float(x.max())
    bins = min(10, max(1, len(np.unique(x))))
    counts, edges = np.histogram(x, bins=bins, range=(lo, hi) if hi > lo else (lo - 0.5, hi + 0.5))
    return {"answer": [f"{(a + b) / 2:.4g}" for a, b in zip(edges[:-1], edges[1:])], "count": counts.tolist()}


def _teacher(lang: str, t: Text) -> None:
    s = st.session_state
    with st.sidebar.expander(t("class.teach_title"), icon=":material/groups:", expanded=_TEACH in s):
        code = s.get(_TEACH)
        if code is None or not _store().exists(code):
            if st.button(t("class.open"), key="_class_open"):
                s[_TEACH] = _store().create()
                st.rerun()
            # Another instructor session (a new tab, or after this replica died) takes the class over.
            st.text_input(t("class.resume_code"), key="_class_resume_code", max_chars=cs.CODE_LEN + 4)
            if st.button(t("class.resume"), key="_class_resume"):
                typed = str(st.session_state.get("_class_resume_code") or "").strip().upper()
                if cs.valid_code(typed) and _store().exists(typed):
                    s[_TEACH] = typed
                    st.rerun()
                st.error(t("class.no_such_class"))
            return
        link = join_link(code)
        st.markdown(t("class.code_is", code=code))
        st.code(link, language=None, wrap_lines=True)
        st.image(qr_svg(link), width=180)
        view = s.get(LAST_VIEW)
        if st.button(t("class.push"), key="_class_push", disabled=not view, type="primary"):
            q = {k: v for k, v in (view.get("query") or {}).items() if k != "lang"}
            version = _store().push(code, {"page": view["stem"], "query": q})
            st.caption(t("class.pushed", v=version))
        _ask_box(code, view, t)
        if st.button(t("class.close"), key="_class_close"):
            _store().close(code)
            s.pop(_TEACH, None)
            st.rerun()
    if code is not None and _store().exists(code):
        with st.sidebar:
            _live_answers(code, t)


def _ask_box(code: str, view: dict | None, t: Text) -> None:
    if not view:
        return
    from ui.answers import answers as page_answers
    from ui.i18n import Text as _T

    n = max(len(page_answers(_T(view["stem"], "en"))), 1)
    # one under the other: side by side, the sidebar cut "a number" to "a numb"
    qn = st.selectbox(t("class.which"), list(range(1, n + 1)), key="_class_qn")
    kind = st.selectbox(t("class.kind"), ["number", "choice"], key="_class_kind",
                        format_func=lambda k: t(f"class.kind_{k}"))
    opts = []
    if kind == "choice":
        raw = st.text_input(t("class.options"), key="_class_opts", max_chars=200, value="A, B, C")
        opts = [o.strip()[:cs.MAX_ANSWER_LEN] for o in raw.split(",") if o.strip()][:8]
    if st.button(t("class.ask"), key="_class_ask", disabled=kind == "choice" and len(opts) < 2):
        _store().ask(code, {"stem": view["stem"], "q": int(qn), "kind": kind, "options": opts})


def _live_answers(code: str, t: Text) -> None:
    @st.fragment(run_every=2 * POLL_S)
    def live():
        q = _store().question(code)
        if not q:
            return
        values = _store().answers(code, q["id"])
        st.caption(t("class.n_answers", n=len(values), q=q.get("q", "?")))
        h = _histogram(values, q)
        if h["answer"]:  # in the order asked (choices) / of the bins (numbers), labels readable across
            st.bar_chart(h, x="answer", y="count", height=180, horizontal=True, sort=False,
                         x_label=t("class.hist_answer"), y_label=t("class.hist_count"))
        if q.get("kind") == "choice":
            rv = st.selectbox(t("class.exact"), list(q.get("options") or []), key=f"_class_rv_{q['id']}")
        else:
            rv = st.number_input(t("class.exact"), key=f"_class_rv_{q['id']}", value=None, format="%g")
        if st.button(t("class.reveal"), key=f"_class_reveal_{q['id']}", disabled=rv is None):
            _store().reveal(code, q["id"], rv)
        shown = _store().revealed(code, q["id"])
        if shown is not None:  # what the class sees (the box above may have changed since)
            st.caption(t("class.revealed"))
            st.code(str(shown), language=None)

    live()


def sidebar(lang: str, teacher: bool) -> None:
    """The class box: the instructor's panel, or the student's join / follow box."""
    t = Text("instructor", lang)
    try:
        (_teacher if teacher else _student)(lang, t)
    except cs.STORE_ERRORS as exc:  # the store is unreachable: say so, keep the page
        st.sidebar.warning(t("class.store_down"))
        st.sidebar.code(type(exc).__name__, language=None)
