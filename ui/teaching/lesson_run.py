"""A lesson as a student runs it: the step's instruction and question above the page's view.

Two ways, one step view (:func:`_step_view`):

* **live** (teacher-paced): a class whose code runs a lesson (``ui.teaching.lesson_store``, mode
  ``"live"``). ``ui.teaching.student`` draws :func:`banner`'s box instead of the class banner: the
  step the teacher pushed (the push carries ``lesson_step``), Back / Next within the pacing range,
  a nickname at join (optional), the snapshot the teacher shows; while the teacher pauses, "eyes on
  the teacher" and the page is not drawn at all (:func:`paused`, app.py): nothing to drag. The
  class's own poll follows pushes; :func:`banner`'s poll also reruns the page when the run changes
  (step, pacing, pause, names, snapshot).
* **self-paced** (homework, a lab): ``/?lesson=<run id>`` (link and QR from the console) asks for a
  nickname (optional) and gives the student a random token, kept in the address
  (``&me=<token>``, :func:`url_flags`): progress is in the store under it, so a reload, another
  device with the same link or another replica (Redis) go on where the student was; no teacher
  needs to be online (:func:`alone`, app.py).

A question is answered before its exact value is shown (predict, then reveal): its truth is computed
on the server (``ui.teaching.lessons.step_question``) and kept in this session's state, which stays
on the server; it reaches the browser only in the reveal, after the student's final answer (a wrong
number gets one more try) and, live, once the teacher revealed it. Everything a teacher or a
student typed (instructions, own prompts, free text, snapshots) is shown as inert HTML.
"""

from __future__ import annotations

import re
from urllib.parse import urlparse

import streamlit as st

from ui.teaching import class_store as cs
from ui.teaching import lesson_store as ls
from ui.teaching import lessons as _lessons
from ui.teaching.live import _CODE, _GO, _SEEN, _TOASTS, _VIEW, _page, _stems, _store
from ui.teaching.responses import MAX_TEXT, parse_answer, q_prompt, q_value, verdict
from ui.kit import cover
from ui.kit.i18n import Text
from ui.kit.page import read_url_again
from ui.kit.safe import inert_html

ENTRY = "lesson"  # the query key of a self-paced run: /?lesson=<run id>
ME = "me"  # the query key of a student's token in it
_SELF = "_lsn_self"  # session: (run id, token) of the self-paced run this session is in
_POS = "_lsn_pos"  # session: {run id: the step shown}
_SEEN_PUSH = "_lsn_seen"  # session: {run id: the class push last taken as the step}
_STAMP = "_lsn_stamp"  # session: {run id: the run's stamp last drawn}
_QS = "_lsn_q"  # session: {(lesson, step, text): its question with the truth} (server side only)
_OPENED = "_lsn_opened"  # session: a self-paced run's link opened, before Start
_NICKED = "_lsn_nicked"  # session: runs whose nickname question was answered or skipped


def _lt(lang: str) -> Text:
    return Text("lesson_run", lang)


def _runs() -> ls.Lessons:
    return ls.get_lessons()


def _said(text, limit: int = MAX_TEXT, cls: str = "tos-lesson-text") -> None:
    """A text someone typed, as inert HTML (no Markdown, no LaTeX, no link can come out of it)."""
    st.html(f'<div class="{cls}">{inert_html(text, limit)}</div>')


def _text(d: dict, lang: str) -> str:
    return str((d or {}).get(lang) or (d or {}).get("en") or "")


_MD_ACTIVE = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>$~^&])")


def md_plain(text) -> str:
    """``text`` with every character Markdown (or Streamlit's LaTeX) would act on escaped: shown
    exactly as typed where a label or a sentence is Markdown (a radio's option, an answer's unit)."""
    return _MD_ACTIVE.sub(r"\\\1", " ".join(str(text or "").split()))


def question_of(lesson, step, lang: str) -> dict | None:
    """The step's question with its truth, computed once per session (kept in session state, on
    the server; never drawn before the reveal)."""
    cache = st.session_state.setdefault(_QS, {})
    key = (lesson.id, step.index, repr(step))
    if key not in cache:
        cache[key] = _lessons.step_question(step, lang)
    return cache[key]


def shown(q: dict, lang: str, v) -> str:
    """An answer or exact value for a Markdown sentence: a teacher's own question's unit and choice
    labels are the teacher's text, escaped (:func:`md_plain`); a page's own are the app's."""
    text = q_value(q, lang, v)
    return text if q.get("step") else md_plain(text)


def allowed(run: dict, n: int) -> range:
    """The steps a student may be on: every step at their own pace; live, the teacher's step, or
    steps 1..k with pacing k (at least up to the teacher's)."""
    if run["mode"] == "self":
        return range(n)
    if run["pace"]:
        return range(0, min(max(run["pace"], run["step"] + 1), n))
    return range(min(run["step"], n - 1), min(run["step"] + 1, n))


def final(q: dict, rec: dict | None) -> bool:
    """Whether the answer ``rec`` is the last one: a wrong number gets one more try."""
    if rec is None:
        return False
    return q.get("kind") != "number" or q.get("truth") is None or bool(rec.get("right")) or rec.get("tries", 0) >= 2


def _class_reveal(code: str, index: int):
    """The value the teacher revealed for lesson step ``index`` in class ``code`` (None before)."""
    for q in reversed(_store().questions(code)):
        if q.get("lesson_step") == index:
            v = _store().revealed(code, q["id"])
            if v is not None:
                return v
    return None


def _send(rid: str, index: int, q: dict, who: str, code: str | None) -> None:
    """The Send button's callback: check, judge (on the server), store; live, also as the class's
    answer to its open question when that is this step's (its count, histogram and Reveal)."""
    s = st.session_state
    err = f"_lsn_err_{rid}_{index}"
    v, bad = parse_answer(q, s.get(f"_lsn_in_{rid}_{index}"))
    s[err] = bad
    if bad:
        return
    try:
        _runs().record(rid, index, who, v, verdict(q, v, q.get("truth")))
        if code:
            open_q = _store().question(code)
            if open_q and open_q.get("lesson_step") == index:
                try:
                    _store().answer(code, open_q["id"], who, v)
                except (KeyError, ValueError):
                    pass  # a text longer than the class store keeps: it is in the lesson's record
    except cs.STORE_ERRORS:
        s[err] = "down"
    except KeyError:
        s[err] = "closed"


def _question_box(rid: str, run: dict, lesson, step, who: str, lang: str, code: str | None) -> None:
    lt = _lt(lang)
    q = question_of(lesson, step, lang)
    if q is None:
        return
    prompt = q_prompt(q, lang)
    with st.container(border=True, key=f"lsn_q_{step.index}"):
        if q.get("step"):  # a page's own question: its text is the app's
            st.markdown(lt("question", prompt=prompt))
        else:
            st.markdown(lt("question", prompt=""))
            _said(prompt, 300)
        rec = _runs().mine(rid, step.index, who)
        if not final(q, rec):
            if q.get("step"):  # a page's own step: its figures wait until it is answered
                cover.question_open(step.page, q["step"])
            if rec is not None:
                st.warning(lt("try_again", value=shown(q, lang, rec["value"])), icon=":material/replay:")
            _answer_form(rid, step.index, q, who, code, lang)
            return
        if q.get("kind") == "text":
            st.caption(lt("yours_text"))
            _said(rec["value"])
            st.caption(lt("no_verdict"))
            return
        st.caption(lt("yours", value=shown(q, lang, rec["value"])))
        if run["mode"] == "self" or step.index in run.get("revealed", ()):
            truth = q.get("truth")
        else:  # live: once the teacher revealed it (the dashboard's reveal, or the class's own Reveal)
            truth = _class_reveal(code, step.index)
        if run["mode"] == "live" and truth is None:
            st.info(lt("wait_reveal"), icon=":material/hourglass_top:")
            return
        if truth is None:
            st.caption(lt("poll"))
            return
        ok = verdict(q, rec["value"], truth)
        line = lt("exact", value=shown(q, lang, truth)) + " " + lt("right" if ok else "wrong")
        (st.success if ok else st.info)(line, icon=":material/check_circle:" if ok else ":material/info:")


def _answer_form(rid: str, index: int, q: dict, who: str, code: str | None, lang: str) -> None:
    lt = _lt(lang)
    key = f"_lsn_in_{rid}_{index}"
    with st.container(horizontal=True, vertical_alignment="bottom", key=f"lsn_row_{index}"):
        if q.get("kind") == "choice":
            labels = (q.get("labels") or {}).get(lang) or {}
            own = not q.get("step")  # a teacher's own labels: as typed (a radio's options are Markdown)
            st.radio(
                lt("your_answer"),
                list(q.get("options") or []),
                key=key,
                index=None,
                format_func=lambda c: md_plain(labels.get(c, c)) if own else str(labels.get(c, c)),
            )
        elif q.get("kind") == "text":
            st.text_area(lt("your_answer"), key=key, max_chars=MAX_TEXT, height=90, placeholder=lt("text_ph"))
        else:
            unit = (q.get("unit") or {}).get(lang) if isinstance(q.get("unit"), dict) else ""
            unit = unit if q.get("step") else md_plain(unit)
            st.number_input(
                lt("your_answer") + (f" ({unit})" if unit else ""),
                key=key,
                value=None,
                format="%g",
                step=None,
                placeholder=lt("number_ph"),
                width=220,
            )
        st.button(
            lt("send"), key=f"_lsn_send_{rid}_{index}", type="primary", on_click=_send, args=(rid, index, q, who, code)
        )
    err = st.session_state.get(f"_lsn_err_{rid}_{index}")
    if err:
        st.warning(lt(f"err.{err}"), icon=":material/edit:")


def _snapshot(run: dict, lang: str) -> None:
    snap = run.get("snap")
    if not snap or not snap.get("items"):
        return
    with st.container(border=True, key="lsn_snapshot"):
        st.markdown(_lt(lang)("snapshot", step=int(snap.get("step", 0)) + 1))
        for item in snap["items"]:
            _said(item, cls="tos-lesson-snap")


def _nickname(rid: str, who: str, lang: str) -> None:
    """Once per session and run: an optional nickname (the teacher's dashboard; never other students)."""
    s = st.session_state
    if rid in s.get(_NICKED, ()) or who in _runs().nicks(rid, everyone=True):  # asked before a reload
        return
    lt = _lt(lang)
    with st.form(key=f"_lsn_nick_form_{rid}", border=False):
        st.text_input(lt("nick"), key="_lsn_nick", max_chars=ls.MAX_NICK, help=lt("nick_help"))
        c1, c2 = st.columns(2)
        save = c1.form_submit_button(lt("nick_save"))
        skip = c2.form_submit_button(lt("nick_skip"), type="tertiary")
    if save or skip:
        try:  # skipped: an empty nickname (anonymous), so that a reload does not ask again
            _runs().set_nick(rid, who, s.get("_lsn_nick", "") if save else "")
        except KeyError:  # the run ended meanwhile: nothing to name
            pass
        s.setdefault(_NICKED, set()).add(rid)
        st.rerun()


def _step_view(rid: str, run: dict, lesson, pos: int, who: str, lang: str, go, code: str | None = None) -> None:
    """The lesson's step ``pos`` as the student sees it: where they are, the instruction, the
    question, Back / Next within :func:`allowed` (``go(step)`` opens a step's view)."""
    lt = _lt(lang)
    step = lesson.steps[pos]
    n = len(lesson.steps)
    ok = allowed(run, n)
    with st.container(horizontal=True, vertical_alignment="center", key="lsn_head"):
        st.markdown(lt("where", step=pos + 1, n=n, page=Text(step.page, lang)("title")))
        if pos - 1 in ok and st.button(lt("back"), key="_lsn_back", icon=":material/arrow_back:", type="tertiary"):
            go(pos - 1)
        if pos + 1 in ok and st.button(lt("next"), key="_lsn_next", icon=":material/arrow_forward:"):
            go(pos + 1)
    if _text(step.instruction, lang):
        _said(_text(step.instruction, lang))
    _question_box(rid, run, lesson, step, who, lang, code)
    if run["mode"] == "self" and pos == n - 1:
        recs = _runs().records(rid)
        done = sum(1 for s in recs.values() if who in s)
        right = sum(1 for s in recs.values() if (s.get(who) or {}).get("right"))
        st.success(lt("end", done=done, right=right), icon=":material/flag:")
    _snapshot(run, lang)


# --------------------------------------------------------------------------- live
def banner(code: str, box, poll, who):
    """What ``ui.teaching.student`` draws for a student of class ``code``: the class's own ``box``
    and ``poll``, or, when the class runs a lesson, the lesson's step view in the box's place and a
    poll that also reruns the page when the run changes (``who(code)``: the student's anonymous
    answer id in the class)."""
    try:
        run = _runs().run(code)
    except cs.STORE_ERRORS:
        return box, poll
    if run is None or run["mode"] != "live" or _lessons.get(run["lesson"]) is None:
        return box, poll

    def lesson_box(code: str, lang: str, t: Text) -> None:
        try:
            if _store().stamp(code) is None:
                box(code, lang, t)  # closed or lost: the class banner says so
                return
            _live(code, lang, box, t, who(code))
        except cs.STORE_ERRORS:
            box(code, lang, t)

    def lesson_poll(code: str, lang: str) -> None:
        # the class's own poll first: a push (the teacher's Next) opens its view at once, and that
        # full run draws the run's new state too (checked first, the run's stamp cost one more
        # full run before the push was seen: about a poll period more per Next)
        poll(code, lang)
        s = st.session_state
        try:
            stamp = _runs().stamp(code)
        except cs.STORE_ERRORS:
            stamp = None
        if stamp is not None and stamp != s.setdefault(_STAMP, {}).get(code, stamp):
            s[_STAMP][code] = stamp
            st.rerun()  # the whole page: a pause hides it, a resume draws it again

    return lesson_box, lesson_poll


def _live(code: str, lang: str, box, t: Text, who: str) -> None:
    s = st.session_state
    run = _runs().run(code)
    lesson = _lessons.get(run["lesson"]) if run else None
    if run is None or lesson is None or not lesson.steps:
        box(code, lang, t)
        return
    s.setdefault(_STAMP, {})[code] = run["stamp"]
    s.pop(_TOASTS, None)  # the class poll's toasts ("a view was pushed", "a new question"): the step view says it
    lt = _lt(lang)
    st.markdown(lt("live_head", code=code))
    _said(_text(lesson.title, lang), 120, "tos-lesson-title")
    if run["paused"]:
        st.info(lt("paused"), icon=":material/front_hand:")
        return
    _nickname(code, who, lang)
    seen = s.get(_SEEN)
    was = pos = s.setdefault(_POS, {}).get(code)
    view = s.get(_VIEW) or {}
    released = view.get("only_hold") and not view.get("hold")  # the hold taken off: nobody moves
    if s.setdefault(_SEEN_PUSH, {}).get(code) != seen and not released:  # a new push: the teacher's step
        s[_SEEN_PUSH][code] = seen
        pushed = view.get("lesson_step")
        pos = pushed if isinstance(pushed, int) else run["step"]
    n = len(lesson.steps)
    forced = pos is not None and pos not in allowed(run, n)  # ahead, and the teacher narrowed the pacing
    if pos is None or forced:
        pos = min(run["step"], n - 1)
    s[_POS][code] = pos

    def go(i: int) -> None:
        s[_POS][code] = i
        _runs().move(code, who, i)
        st.session_state[_GO] = {"page": lesson.steps[i].page, "query": lesson.steps[i].query()}
        st.rerun()  # the whole app: ui.teaching.student.follow_push opens the step's view first

    if forced:
        go(pos)  # back to the teacher's step, its view included
    if pos != was:
        _runs().move(code, who, pos)  # where the dashboard shows the student (a push moved them)
    _step_view(code, run, lesson, pos, who, lang, go, code)


def paused() -> bool:
    """Whether this session is a student of a class whose lesson the teacher paused: app.py then
    does not draw the page (nothing to drag; the banner asks for eyes on the teacher)."""
    code = st.session_state.get(_CODE)
    if not code:
        return False
    try:
        run = _runs().run(code)
    except cs.STORE_ERRORS:
        return False
    return bool(run and run["mode"] == "live" and run["paused"])


# --------------------------------------------------------------------------- self-paced
def url_flags() -> dict:
    """``{"lesson": run id, "me": token}`` while this session does a self-paced lesson: every page
    keeps them in its URL (a reload, another replica). Never in a share link (``ui.kit.share``)."""
    got = st.session_state.get(_SELF)
    if got:
        return {ENTRY: got[0], ME: got[1]}
    opened = st.session_state.get(_OPENED)
    return {ENTRY: opened} if opened else {}


def resume_link(rid: str, token: str) -> str:
    """The address that opens this student's progress anywhere (another device)."""
    from ui.teaching.live import join_link

    return join_link("X").split("?", 1)[0] + f"?{ENTRY}={rid}&{ME}={token}"


def _on_a_page() -> str | None:
    try:
        path = urlparse(str(st.context.url or "")).path.rstrip("/")
    except Exception:  # noqa: BLE001 - no browser context (tests)
        return None
    last = path.rsplit("/", 1)[-1]
    return last if last in _stems() else None


def _open_self(rid: str, token: str, step, lang: str) -> None:
    read_url_again()
    st.switch_page(_page(step.page, lang), query_params={"lang": lang, ENTRY: rid, ME: token, **step.query()})


def alone(lang: str) -> None:
    """Every full run (app.py): a self-paced lesson, when the address (or this session) names one."""
    s = st.session_state
    rid, token = st.query_params.get(ENTRY), st.query_params.get(ME)
    if rid is None and s.get(_SELF):
        rid, token = s[_SELF]
    elif rid is None:
        rid = s.get(_OPENED)  # a first visit's page run wrote its own URL: the link is remembered
    if rid is None:
        return
    lt = _lt(lang)
    if not ls.valid_run_id(rid):
        st.warning(lt("bad_link"), icon=":material/link_off:")
        return
    try:
        run = _runs().run(rid)
        lesson = _lessons.get(run["lesson"]) if run else None
        if run is None or run["mode"] != "self" or lesson is None or not lesson.steps:
            s.pop(_SELF, None)
            st.warning(lt("gone"), icon=":material/event_busy:")
            return
        with st.container(border=True, key="lesson_banner"):
            if not ls.valid_token(token):
                s[_OPENED] = rid
                _start(rid, lesson, lang)
                return
            s.pop(_OPENED, None)
            s[_SELF] = (rid, token)
            pos = s.setdefault(_POS, {}).get(rid)
            if pos is None:  # a new session: where the store says this student was
                pos = _runs().positions(rid).get(token, 0)
            pos = max(0, min(int(pos), len(lesson.steps) - 1))
            s[_POS][rid] = pos
            if s.get("_lsn_entered") != (rid, token) and _on_a_page() != lesson.steps[pos].page:
                s["_lsn_entered"] = (rid, token)
                _open_self(rid, token, lesson.steps[pos], lang)
            s["_lsn_entered"] = (rid, token)
            st.markdown(lt("self_head"))
            _said(_text(lesson.title, lang), 120, "tos-lesson-title")

            def go(i: int) -> None:
                s[_POS][rid] = i
                _runs().move(rid, token, i)
                _open_self(rid, token, lesson.steps[i], lang)

            _step_view(rid, run, lesson, pos, token, lang, go)
            with st.expander(lt("resume_title"), icon=":material/devices:"):
                st.caption(lt("resume_help"))
                st.code(resume_link(rid, token), language=None, wrap_lines=True)
    except cs.STORE_ERRORS:
        st.warning(lt("down"), icon=":material/cloud_off:")


def _start(rid: str, lesson, lang: str) -> None:
    """A first visit: the lesson's title and description, a nickname (optional), Start."""
    lt = _lt(lang)
    st.markdown(lt("start_head", n=len(lesson.steps)))
    _said(_text(lesson.title, lang), 120, "tos-lesson-title")
    if _text(lesson.description, lang):
        _said(_text(lesson.description, lang))
    with st.form(key="_lsn_start_form", border=False):
        st.text_input(lt("nick"), key="_lsn_start_nick", max_chars=ls.MAX_NICK, help=lt("nick_help"))
        go = st.form_submit_button(lt("start"), type="primary")
    if go:
        token = ls.new_token()
        nick = st.session_state.get("_lsn_start_nick", "")
        if ls.clean_nick(nick):
            _runs().set_nick(rid, token, nick)
        _runs().move(rid, token, 0)
        st.session_state[_SELF] = (rid, token)
        st.session_state.setdefault(_POS, {})[rid] = 0
        st.session_state["_lsn_entered"] = (rid, token)
        _open_self(rid, token, lesson.steps[0], lang)
