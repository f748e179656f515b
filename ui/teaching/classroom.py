"""Class sessions: the instructor opens a class, students join and follow.

* Instructor (sidebar panel): "Open a class" gives a short code, a join link and its QR code
  (``segno``); a link built from a loopback address warns and names the LAN addresses. The panel
  counts the students here now. On a lesson page (drawn from the page's intro, :func:`on_page`, so
  the controls are there on the first run of the page), "Push this view" sends the page and its
  parameters (never the language; optionally holding the class on that page), and a live question
  is picked by its text from the page's own "Predict first" steps (``ui.kit.predict.live_question``:
  prompt in both languages, kind, tolerance, and the exact value computed by ``sim/`` for the
  view's parameters) or written ad hoc. Answers arrive as a histogram (:func:`histogram`: any
  finite answers, whatever their spread); "Reveal" shows every student the exact value (computed;
  the instructor may override it), their own answer and its verdict, and the class's distribution.
  The results of every question download as CSV (:func:`results_csv`).
* Student: joins with ``?class=CODE`` (the link / QR) or by typing the code. A slim banner in the
  main area of every page (phone first: nothing of the class is only in the sidebar) says the code,
  following or not, and carries the live question with its answer box and, once revealed, the
  value. A fragment that draws nothing reads the class's stamp every ``POLL_S`` seconds (one store
  read); when it changed, a push opens the pushed view, a question / reveal / release / close
  reruns the page, each with a toast. ``class=CODE`` stays in the page's URL (:func:`url_flags`),
  never in a share link (``ui.kit.share``); the answer id comes from the browser's cookie
  (:func:`answer_id`), so a reload or another replica never counts a student twice.
* The store down: a notice in words ("the class cannot be reached; this page still works"), never
  an error box; an answer sent meanwhile waits in the session and is sent when the store is back.
  A class gone (closed, or lost by a store restart) is said so to the instructor and the students.

State lives in ``ui.teaching.class_store`` (in memory, or Redis with ``APP_REDIS_URL``).
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import secrets
import time
from urllib.parse import urlsplit

import streamlit as st

from ui.teaching import answers as _answers
from ui.teaching import class_store as cs
from ui.teaching import instructor
from ui.teaching.answers import LAST_VIEW
from ui.kit.i18n import Text
from ui.kit.predict import human, live_question, within
from ui.kit.share import loopback_warning

POLL_S = 1.0  # see _poll: a poll that finds nothing new is one store read
BEAT_S = 5.0  # a student tells the store it is here at most this often (the instructor's count)
_CODE = "_class_code"        # session: the class this session belongs to (student)
_FOLLOW = "_class_follow"    # session: student follows pushes
_SEEN = "_class_seen"        # session: version of the last push applied
_VIEW = "_class_view"        # session: the last pushed view applied (its page, whether held)
_WHO = "_class_who"          # session: (code, anonymous id for answers)
_TEACH = "_class_teach"      # session: code of the class this instructor opened
_STAMP = "_class_stamp"      # session: the class's stamp (version, question, reveals) last drawn
_REL = "_class_rel"          # session: the released pages when the page was last drawn
_LEFT = "_class_left"        # session: a class that closed (its code may still be in the URL)
_GONE = "_class_gone"        # session: (code, ended by the teacher?) told in the banner until a new join
_DOWN = "_class_down"        # session: the store could not be reached on the last try
_PENDING = "_class_pending"  # session: {(code, qid): answer} sent while the store was down
_TOASTS = "_class_toasts"    # session: text keys of toasts to show on the next full run
_BEAT = "_class_beat"        # session: when this student last told the store it is here
_SLOT = "_class_slot"        # session (one run): the teacher panel's place for push / ask
_BANK = "_class_bank"        # session (instructor): the lesson page last shown, for the console
_VIEW_BANK = "_class_view_bank"  # session (instructor): (pushed view, its bank), for the console
_GO = "_class_go"            # session: a pushed view to open at the top of the next full run
ADHOC = "_adhoc"
ADHOC_RTOL = 0.05
MAX_PROMPT = 200


def _store():
    return cs.get_store()


def _ct(lang: str) -> Text:
    return Text("console", lang)


def join_link(code: str) -> str:
    try:
        u = urlsplit(st.context.url or "")
        base = f"{u.scheme}://{u.netloc}" if u.scheme and u.netloc else ""
    except Exception:  # noqa: BLE001 - no browser context (tests)
        base = ""
    return f"{base}/?class={code}"


def qr_svg(text: str) -> str:
    from ui.kit.share import qr_svg as _qr

    return _qr(text, 4)


def _page(stem: str, lang: str):
    from ui.kit.nav import PAGES, page

    return page(next(e for e in PAGES if e.stem == stem), lang)


def _stems() -> set[str]:
    from ui.kit.nav import PAGES

    return {e.stem for e in PAGES}


# --------------------------------------------------------------------------- answers, pure
def xsrf_token(raw: str) -> str:
    """The token inside Streamlit's ``_streamlit_xsrf`` cookie. Tornado writes it as
    ``2|mask|masked token|time`` with a new random mask on every page load; the token itself
    (mask XOR masked token) stays the browser's. A value of another form is returned as it is."""
    parts = str(raw or "").split("|")
    if len(parts) == 4 and parts[0] == "2":
        try:
            mask, masked = bytes.fromhex(parts[1]), bytes.fromhex(parts[2])
        except ValueError:
            return str(raw)
        if len(mask) == 4:
            return bytes(b ^ mask[i % 4] for i, b in enumerate(masked)).hex()
    return str(raw or "")


def answer_id(code: str, cookies) -> str | None:
    """The student's anonymous answer id in class ``code``, from the browser's cookie (nginx's
    sticky ``st_replica``, else the token inside Streamlit's ``_streamlit_xsrf``, unmasked: the
    cookie's string changes on every load, its token does not); None without either. The same
    browser gets the same id after a reload or on another replica, so an answer sent again
    replaces the first. Hashed with the class code: ids are not linkable across classes and no
    cookie value is stored."""
    cookies = cookies or {}
    base = cookies.get("st_replica") or xsrf_token(cookies.get("_streamlit_xsrf") or "")
    return hashlib.sha256(f"{code}|{base}".encode()).hexdigest()[:16] if base else None


def parse_answer(q: dict, v):
    """``(value, None)`` for an answer the question ``q`` accepts, else ``(None, text key)``:
    a number must be finite, a choice one of the question's."""
    if v is None or (isinstance(v, str) and not v.strip()):
        return None, "answer_missing"
    if q.get("kind") == "choice":
        return (v, None) if v in (q.get("options") or []) else (None, "answer_bad")
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None, "answer_bad"
    return (x, None) if math.isfinite(x) else (None, "answer_bad")


def verdict(q: dict, x, y) -> bool | None:
    """Whether answer ``x`` is right for the exact value ``y`` (None when either is missing)."""
    if x is None or y is None:
        return None
    if q.get("kind") == "choice":
        return x == y
    try:
        return within(x, y, float(q.get("rtol", ADHOC_RTOL)), float(q.get("atol", 0.0)))
    except (TypeError, ValueError):
        return None


def _labels(xs: list[float], digits: int = 4) -> list[str]:
    """Labels of ``xs`` distinct enough to tell them apart (more digits until they differ)."""
    for d in range(digits, 18):
        out = [f"{x:.{d}g}" for x in xs]
        if len(set(out)) == len(out):
            return out
    return [f"{x!r}" for x in xs]


def histogram(values: list, q: dict, bins: int = 8) -> dict:
    """The answers as bars ``{"answer": [labels], "count": [counts]}``, for any answers: choices in
    the order asked; numbers (finite ones; anything else is not counted) one bar per value when
    at most ``bins + 2`` values differ at four digits (``2`` and ``2.0000000000000004`` are one
    bar), else ``bins`` equal bins over the middle 90 % of the answers plus one bar each for those
    below and above when the whole range is over ten times the middle's (an answer of ``1e16`` does not squeeze everyone else into one bar). Never
    raises: no ``np.histogram``, edges computed without overflow."""
    if q.get("kind") == "choice":
        opts = list(q.get("options") or [])
        return {"answer": opts, "count": [sum(1 for v in values if v == o) for o in opts]}
    x = sorted(float(v) for v in values
               if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v))
    if not x:
        return {"answer": [], "count": []}
    groups: dict[str, int] = {}
    for v in x:
        key = f"{v:.4g}"
        groups[key] = groups.get(key, 0) + 1
    if len(groups) <= bins + 2:
        return {"answer": list(groups), "count": list(groups.values())}
    n = len(x)
    lo, hi = x[int(0.05 * n)], x[max(math.ceil(0.95 * n) - 1, 0)]
    if not hi > lo or x[-1] / 2 - x[0] / 2 <= 5 * (hi / 2 - lo / 2):
        lo, hi = x[0], x[-1]  # no far outliers (or all in the middle are one value): the whole range
    edges = [lo * (1 - k / bins) + hi * (k / bins) for k in range(bins + 1)]
    counts = [0] * bins
    below = above = 0
    for v in x:
        if v < lo:
            below += 1
        elif v > hi:
            above += 1
        else:
            k = 0
            while k < bins - 1 and v >= edges[k + 1]:
                k += 1
            counts[k] += 1
    names = _labels(edges)
    out = {"answer": [f"{a} – {b}" for a, b in zip(names[:-1], names[1:])], "count": counts}
    if below:
        out["answer"].insert(0, f"< {names[0]}")
        out["count"].insert(0, below)
    if above:
        out["answer"].append(f"> {names[-1]}")
        out["count"].append(above)
    return out


_histogram = histogram


def results_csv(store, code: str) -> str:
    """Every question of class ``code``: one row per answer (question, page, parameters, exact
    value, the answer, its verdict); answers anonymous (numbered per question, no id)."""
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["question", "page", "prompt", "parameters", "exact_value", "answer_no", "answer", "right"])
    for q in store.questions(code):
        qid = q.get("id")
        exact = store.revealed(code, qid)
        exact = q.get("truth") if exact is None else exact
        prompt = (q.get("prompt") or {}).get("en", "") if isinstance(q.get("prompt"), dict) else str(q.get("prompt") or "")
        params = json.dumps(q.get("values") or {}, sort_keys=True, ensure_ascii=False)
        got = store.answers(code, qid)
        for i, a in enumerate(got or [None], 1):
            ok = verdict(q, a, exact)
            w.writerow([qid, q.get("stem", ""), prompt, params, "" if exact is None else exact,
                        i if a is not None else "", "" if a is None else a, "" if ok is None else int(ok)])
    return out.getvalue()


def q_prompt(q: dict, lang: str) -> str:
    p = q.get("prompt")
    if isinstance(p, dict):
        return str(p.get(lang) or p.get("en") or "")
    return str(p or "")


def q_value(q: dict, lang: str, v) -> str:
    """An answer or exact value as a student reads it: a choice's label, a number with its unit."""
    if v is None:
        return "—"
    if q.get("kind") == "choice":
        return str(((q.get("labels") or {}).get(lang) or {}).get(v, v))
    unit = ((q.get("unit") or {}).get(lang) or "") if isinstance(q.get("unit"), dict) else ""
    return f"{human(v, int(q.get('digits', 4)))}{' ' + unit if unit else ''}"


# --------------------------------------------------------------------------- student
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


def _toast(key: str) -> None:
    st.session_state.setdefault(_TOASTS, []).append(key)


def _show_toasts(lang: str) -> None:
    ct = _ct(lang)
    for key in dict.fromkeys(st.session_state.pop(_TOASTS, [])):
        st.toast(ct(f"toast.{key}"), icon=":material/notifications:")


def _go(view: dict, lang: str, code: str) -> None:
    """Open ``view`` (its page and parameters, this session's language and class). Called only at
    the top of a full run (:func:`follow_push`), never inside a fragment: the poll and the banner's
    buttons ask for it with :func:`_go_next`."""
    if view.get("page") not in _stems():
        return
    query = {str(k): str(v) for k, v in (view.get("query") or {}).items() if k not in ("lang", "class")}
    st.session_state["_active_page"] = None  # the page reads its values from the URL again
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
    s[_SEEN], s[_VIEW] = version, view
    _toast("held" if view.get("hold") else "pushed")
    _go_next(view)


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
    """"Change my answer": the box again; the answer sent stays until a new one replaces it."""
    st.session_state[f"_class_edit_{code}_{qid}"] = True
    st.session_state.pop(f"_class_sent_{code}_{qid}", None)


def _answer_box(code: str, q: dict, lang: str, t: Text) -> None:
    ct = _ct(lang)
    s = st.session_state
    qid, who = q["id"], _who(code)
    stem = q.get("stem")
    page = Text(stem, lang)("title") if stem in _stems() else ""
    prompt = q_prompt(q, lang)
    # an ad-hoc question is the instructor's own text: shown literally
    shown = prompt if q.get("step") else _literal(prompt)
    st.markdown(ct("banner.question", page=page, prompt=shown))
    rev = _store().revealed(code, qid)
    sent_key = f"_class_sent_{code}_{qid}"  # per class: question ids start at 1 in every class
    editing = s.get(f"_class_edit_{code}_{qid}", False)
    sent = None if editing else s.get(sent_key)
    if sent is None and not editing:
        sent = _store().answered(code, qid, who)  # sent before a reload: not asked again
    pending = (code, qid) in (s.get(_PENDING) or {})
    if sent is None and rev is None and not pending:
        with st.container(horizontal=True, vertical_alignment="bottom", key=f"_class_row_{qid}"):
            if q.get("kind") == "choice":
                labels = (q.get("labels") or {}).get(lang) or {}
                st.radio(t("class.your_answer"), list(q.get("options") or []), key=f"_class_ans_{qid}",
                         index=None, horizontal=True, format_func=lambda c: str(labels.get(c, c)))
            else:
                unit = (q.get("unit") or {}).get(lang) if isinstance(q.get("unit"), dict) else ""
                label = t("class.your_answer") + (f" ({unit})" if unit else "")
                st.number_input(label, key=f"_class_ans_{qid}", value=None, format="%g", step=None,
                                placeholder=ct("banner.placeholder"), width=220)
            st.button(t("class.send"), key=f"_class_send_{qid}", type="primary",
                      on_click=_send, args=(code, q, lang))
        err = s.get(f"_class_err_{qid}")
        if err:
            st.warning(ct(f"banner.{err}"), icon=":material/edit:")
    elif pending:
        st.caption(ct("banner.pending"))
    elif rev is None:
        with st.container(horizontal=True, vertical_alignment="center", key=f"_class_sent_row_{qid}"):
            st.caption(t("class.sent") + " " + ct("banner.your", value=q_value(q, lang, sent)))
            st.button(ct("banner.change"), key=f"_class_change_{qid}", type="tertiary",
                      on_click=_change, args=(code, qid))
    if rev is not None:
        ok = verdict(q, sent, rev)
        line = ct("banner.exact", value=q_value(q, lang, rev))
        if sent is not None:
            line += " " + ct("banner.your", value=q_value(q, lang, sent))
            line += " " + ct("banner.right" if ok else "banner.wrong")
        (st.success if ok else st.info)(line, icon=":material/check_circle:" if ok else ":material/info:")
        _distribution(code, q, ct)


def _literal(text: str) -> str:
    from ui.kit.safe import literal

    return literal(text, MAX_PROMPT)


def _distribution(code: str, q: dict, ct: Text) -> None:
    try:
        h = histogram(_store().answers(code, q["id"]), q)
        if q.get("kind") == "choice":
            h["answer"] = [q_value(q, ct.lang, a) for a in h["answer"]]
        if h["answer"]:
            st.bar_chart(h, x="answer", y="count", height=140, horizontal=True, sort=False,
                         x_label=ct("hist.answer"), y_label=ct("hist.count"))
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
        here = s.get("_active_page")
        if view.get("hold") and here is not None and here != view.get("page"):
            _toast("held")
            _go_next(view)
    old = s.get(_STAMP)
    if old is not None and old[1:] != stamp[1:]:
        _toast("question" if stamp[1] != old[1] else "revealed")
        st.rerun()
    rel = _answers.released_pages()
    if s.get(_REL) is not None and rel != s.get(_REL):
        if rel - s[_REL]:
            _toast("released")
        st.rerun()


def _box(code: str, lang: str, t: Text) -> None:
    """The banner: code, following or not, the live question and its answer box (a fragment: its
    buttons rerun only it)."""
    s = st.session_state
    ct = _ct(lang)
    _show_toasts(lang)
    try:
        s[_STAMP] = _store().stamp(code)  # read before what is drawn: a change after it is polled
        s[_REL] = _answers.released_pages()
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
            _answer_box(code, q, lang, t)
        except cs.STORE_ERRORS:
            st.warning(ct("banner.down", code=code), icon=":material/cloud_off:")


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
                st.info(_ct(lang)("banner.ended" if gone[1] else "banner.lost", code=gone[0]),
                        icon=":material/event_busy:")
        with st.sidebar.expander(t("class.join_title"), icon=":material/groups:"):
            st.text_input(t("class.code"), key="_class_join_code", max_chars=cs.CODE_LEN + 4)
            st.button(t("class.join"), key="_class_join", on_click=_join_from_form)
            if s.pop("_class_join_bad", False):
                st.error(t("class.no_such_class"))
        return
    # the main area, above the page: on a phone the sidebar is closed
    with st.container(border=True, key="class_banner"):
        st.fragment(_box)(code, lang, t)
        if s.get(_CODE) == code:
            st.fragment(run_every=POLL_S)(_poll)(code, lang)


# --------------------------------------------------------------------------- instructor
def _teacher(lang: str, t: Text) -> None:
    s = st.session_state
    ct = _ct(lang)
    who = instructor.identity()
    if _TEACH not in s and who:  # a reload (a new session, the same sign-in): the class it taught
        back = _store().teaching(who)
        if back is not None and _store().exists(back):
            s[_TEACH] = back
    code = s.get(_TEACH)
    with st.sidebar.expander(t("class.teach_title"), icon=":material/groups:", expanded=_TEACH in s):
        if code is not None and not _store().exists(code):
            st.warning(ct("teacher.ended" if _store().ended(code) else "teacher.lost", code=code),
                       icon=":material/event_busy:")
            s.pop(_TEACH, None)
            if who:
                _store().set_teaching(who, None)
            code = None
        if code is None:
            if st.button(t("class.open"), key="_class_open"):
                s[_TEACH] = _store().create()
                if who:
                    _store().set_teaching(who, s[_TEACH])
                st.rerun()
            # Another instructor session (a new tab, or after this replica died) takes the class over.
            st.text_input(t("class.resume_code"), key="_class_resume_code", max_chars=cs.CODE_LEN + 4)
            if st.button(t("class.resume"), key="_class_resume"):
                typed = str(st.session_state.get("_class_resume_code") or "").strip().upper()
                if cs.valid_code(typed) and _store().exists(typed):
                    s[_TEACH] = typed
                    if who:
                        _store().set_teaching(who, typed)
                    st.rerun()
                st.error(t("class.no_such_class"))
            return
        link = join_link(code)
        st.markdown(t("class.code_is", code=code))
        st.code(link, language=None, wrap_lines=True)
        loopback_warning(link, Text("common", lang))
        st.image(qr_svg(link), width=180)
        st.caption(ct("teacher.present", n=_store().present(code)))
        # push and ask: drawn by the page's intro (on_page), which knows the page being shown
        # Left empty here: until the page fills it, what the last run drew stays on screen (a full
        # rerun does not make the bank's menu blink away under the instructor's click)
        slot = st.empty()
        if s.get(LAST_VIEW) is None:
            slot.caption(ct("teacher.open_a_page"))
        s[_SLOT] = (code, slot)
        _results_and_close(code, t, ct, "class", st, st)
    with st.sidebar:
        _live_answers(code, lang, t)


def _bank_of(steps, stem: str, values: dict) -> list[dict]:
    """Page ``stem``'s questions for the class (its "Predict first" steps), for ``values``;
    numbers first (their answers make a histogram), then choices, each in the page's order."""
    steps = sorted((x for x in (steps or ()) if x.kind in ("number", "choice")), key=lambda x: x.kind != "number")
    return [live_question(x, stem, values) for x in steps]


def _bank(ctx) -> list[dict]:
    """The questions of the page shown, for the values shown."""
    return _bank_of(ctx.steps, ctx.stem, ctx.values)


def view_bank(view: dict) -> list[dict]:
    """The questions of a pushed view (``{"page", "query"}``): its page's steps with the exact
    values for the view's parameters (read from its query as the students' pages read it), not
    for whatever page the instructor looked at last."""
    from ui.kit import spec
    from ui.kit.nav import PAGES, page_module
    from ui.kit.page import view_values

    schema = page_module(view["page"]).SCHEMA
    res = spec.resolve(schema, known_pages=tuple(e.stem for e in PAGES))
    return _bank_of(schema.steps, view["page"], view_values(res, dict(view.get("query") or {})))


def _pushed_bank(view: dict | None) -> dict | None:
    """The console's bank: the pushed view's (computed once per view in the session), or, before
    anything was pushed, the bank of the lesson page shown last (asking it pushes that page)."""
    s = st.session_state
    if not view or view.get("page") not in _stems():
        return s.get(_BANK)
    key = json.dumps([view["page"], view.get("query") or {}], sort_keys=True)
    got = s.get(_VIEW_BANK)
    if not got or got[0] != key:
        got = s[_VIEW_BANK] = (key, {"stem": view["page"], "query": dict(view.get("query") or {}),
                                     "questions": view_bank(view)})
    return got[1]


def on_page(ctx) -> None:
    """Registered under the page's intro (ui/kit/hooks.py): remember the view shown and, for an
    instructor with an open class, draw "Push" and the question box in the panel's place, for
    this page, in this very run (the panel is drawn before the page)."""
    st.session_state[LAST_VIEW] = {"stem": ctx.stem, "values": dict(ctx.values), "query": dict(ctx.query)}
    got = st.session_state.pop(_SLOT, None)
    if not got:
        return
    code, slot = got
    t = Text("instructor", ctx.lang)
    with slot.container():
        try:
            _push_ask(code, ctx, t)
        except cs.STORE_ERRORS:
            st.warning(_ct(ctx.lang)("teacher.down"), icon=":material/cloud_off:")


def _short(text: str, n: int = 90) -> str:
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def _query_of(ctx) -> dict:
    return {k: v for k, v in ctx.query.items() if k not in ("lang", "class")}


def _push(code: str, ctx, hold: bool) -> int:
    return _store().push(code, {"page": ctx.stem, "query": _query_of(ctx), "hold": bool(hold)})


def _push_ask(code: str, ctx, t: Text) -> None:
    s = st.session_state
    ct = _ct(ctx.lang)
    hold = st.toggle(ct("teacher.hold"), key="_class_hold", help=ct("teacher.hold_help"))
    if st.button(t("class.push"), key="_class_push", type="primary"):
        st.caption(t("class.pushed", v=_push(code, ctx, hold)))
    qs = {q["step"]: q for q in _bank(ctx)}
    s[_BANK] = {"stem": ctx.stem, "query": _query_of(ctx), "questions": list(qs.values())}
    ids = [*qs, ADHOC]

    def label(i):
        return ct("teacher.adhoc") if i == ADHOC else _short(q_prompt(qs[i], ctx.lang))

    qn = st.selectbox(ct("teacher.bank"), ids, key="_class_qn", format_func=label)
    if qn == ADHOC:
        prompt = st.text_input(ct("teacher.adhoc_prompt"), key="_class_prompt", max_chars=MAX_PROMPT)
        kind = st.selectbox(t("class.kind"), ["number", "choice"], key="_class_kind",
                            format_func=lambda k: t(f"class.kind_{k}"))
        opts: list[str] = []
        if kind == "choice":
            raw = st.text_input(t("class.options"), key="_class_opts", max_chars=200, value="A, B, C")
            opts = list(dict.fromkeys(o.strip()[:cs.MAX_ANSWER_LEN] for o in raw.split(",") if o.strip()))[:8]
        q = {"stem": ctx.stem, "step": None, "kind": kind, "options": opts, "prompt": prompt.strip(),
             "labels": {}, "unit": {}, "truth": None, "rtol": ADHOC_RTOL, "atol": 0.0, "digits": 4,
             "values": dict(ctx.values)}
        ready = bool(prompt.strip()) and (kind != "choice" or len(opts) >= 2)
    else:
        q = qs[qn]
        if q.get("truth") is None:
            st.warning(ct("teacher.no_truth", msg=q.get("error", "")))
        else:
            st.caption(ct("teacher.truth", value=q_value(q, ctx.lang, q["truth"])))
        ready = True
    if st.button(t("class.ask"), key="_class_ask", disabled=not ready):
        version, view, _ = _store().current(code)
        if not view or view.get("page") != ctx.stem or view.get("query") != _query_of(ctx):
            _push(code, ctx, hold)  # the class sees the parameters the exact value is for
        _store().ask(code, q)
        s.pop("_class_rv_prev", None)


def _live_answers(code: str, lang: str, t: Text, height: int = 180, prefix: str = "") -> None:
    """The live question's count, Reveal and histogram (every 2 s); ``prefix`` keeps the widget
    keys of a second copy (the console) apart from the sidebar's."""
    ct = _ct(lang)

    @st.fragment(run_every=2 * POLL_S)
    def live():
        try:
            q = _store().question(code)
            if not q:
                return
            values = _store().answers(code, q["id"])
            shown = _store().revealed(code, q["id"])
        except cs.STORE_ERRORS:
            st.warning(ct("teacher.down"), icon=":material/cloud_off:")
            return
        qid = q["id"]
        # the count and Reveal first: nothing below them can take them away
        prompt = q_prompt(q, lang)[:120]
        st.caption(ct("teacher.n_answers", n=len(values), q=qid, prompt=prompt if q.get("step") else _literal(prompt)))
        if q.get("kind") == "choice":
            opts = list(q.get("options") or [])
            labels = (q.get("labels") or {}).get(lang) or {}
            idx = opts.index(q["truth"]) if q.get("truth") in opts else None
            rv = st.selectbox(t("class.exact"), opts, key=f"{prefix}_class_rv_{qid}", index=idx,
                              format_func=lambda c: str(labels.get(c, c)))
        else:
            rv = st.number_input(t("class.exact"), key=f"{prefix}_class_rv_{qid}", value=q.get("truth"), format="%g",
                                 step=None, help=ct("teacher.override"))
            if rv is not None and not math.isfinite(float(rv)):
                rv = None
        if st.button(t("class.reveal"), key=f"{prefix}_class_reveal_{qid}", disabled=rv is None):
            try:
                _store().reveal(code, qid, rv)
                shown = rv
            except (cs.STORE_ERRORS + (KeyError,)):
                st.warning(ct("teacher.down"), icon=":material/cloud_off:")
        if shown is not None:  # what the class sees (the box above may have changed since)
            right = sum(1 for v in values if verdict(q, v, shown))
            st.caption(ct("teacher.revealed", value=q_value(q, lang, shown), right=right, n=len(values)))
        try:
            h = histogram(values, q)
            if q.get("kind") == "choice":
                h["answer"] = [q_value(q, lang, a) for a in h["answer"]]
            if h["answer"]:  # in the order asked (choices) / of the bins (numbers), labels readable across
                st.bar_chart(h, x="answer", y="count", height=height, horizontal=True, sort=False,
                             x_label=t("class.hist_answer"), y_label=t("class.hist_count"))
        except Exception:  # noqa: BLE001 - the chart is a bonus; count and Reveal above stand
            st.caption(ct("teacher.no_chart"))

    live()


# --------------------------------------------------------------------------- the console
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
            return
        left, right = st.columns([1, 2], gap="large")
        with left:
            link = join_link(code)
            st.markdown(ct("console.code", code=code))
            st.code(link, language=None, wrap_lines=True)
            loopback_warning(link, Text("common", lang))
            st.image(qr_svg(link), width=260)
        with right:
            _console_state(code, lang, ct, t)
            _live_answers(code, lang, t, height=260, prefix="_console")
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
        params = ", ".join(f"{k} = {v}" for k, v in (view.get("query") or {}).items() if k != "preset")
        st.markdown(ct("console.pushed", page=title, v=version))
        st.caption(params)
        cols = st.columns(3)
        query = {"lang": lang, **{str(k): str(v) for k, v in (view.get("query") or {}).items()}}
        cols[0].page_link(_page(view["page"], lang), label=ct("console.go"), icon=":material/open_in_new:",
                          query_params=query)
        if view.get("hold") and cols[1].button(ct("console.unhold"), key="_console_unhold"):
            _store().push(code, {**view, "hold": False})
            st.rerun()
        rel = _answers.released(view["page"])
        if cols[2].button(ct("console.withdraw" if rel else "console.release"), key="_console_release"):
            _answers.release(view["page"], not rel)
            st.rerun()
    else:
        st.caption(ct("teacher.open_a_page"))
    bank = _pushed_bank(view)
    if bank and bank.get("stem") in _stems() and bank.get("questions"):
        qs = {q["step"]: q for q in bank["questions"]}
        st.markdown(ct("console.bank", page=Text(bank["stem"], lang)("title")))
        pick = st.selectbox(ct("teacher.bank"), list(qs), key="_console_qn",
                            format_func=lambda i: _short(q_prompt(qs[i], lang)))
        q = qs[pick]
        if q.get("truth") is not None:
            st.caption(ct("teacher.truth", value=q_value(q, lang, q["truth"])))
        if st.button(t("class.ask"), key="_console_ask"):
            if not view or view.get("page") != bank["stem"] or view.get("query") != bank["query"]:
                _store().push(code, {"page": bank["stem"], "query": bank["query"], "hold": False})
            _store().ask(code, q)
            st.rerun()
    c1, c2 = st.columns(2)
    _results_and_close(code, t, ct, "console", c1, c2)


def _results_and_close(code: str, t, ct, key: str, down, close) -> None:
    """The class's results as CSV (in ``down``) and *Close the class* (in ``close``): the sidebar
    panel and the console draw the same two controls, under keys ``_<key>_csv`` / ``_<key>_close``."""
    down.download_button(ct("teacher.results"), data=lambda: results_csv(_store(), code),
                         file_name=f"class_{code}_results.csv", mime="text/csv", key=f"_{key}_csv",
                         on_click="ignore", icon=":material/download:")
    if close.button(t("class.close"), key=f"_{key}_close"):
        _store().close(code)
        st.session_state.pop(_TEACH, None)
        who = instructor.identity()
        if who:
            _store().set_teaching(who, None)
        st.rerun()


def sidebar(lang: str, teacher: bool) -> None:
    """The class box: the instructor's panel, or the student's banner / join box."""
    t = Text("instructor", lang)
    try:
        (_teacher if teacher else _student)(lang, t)
    except cs.STORE_ERRORS:  # the store is unreachable: say so in words, keep the page
        st.session_state.pop(_SLOT, None)
        (st.sidebar if teacher else st).warning(_ct(lang)("teacher.down" if teacher else "banner.down",
                                                          code=st.session_state.get(_CODE, "")),
                                                icon=":material/cloud_off:")
