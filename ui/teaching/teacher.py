"""The instructor's panel (sidebar): "Open a class" gives a short code, a join link and its QR code
(``segno``); a link built from a loopback address warns and names the LAN addresses. The panel
counts the students here now. On a lesson page (drawn from the page's intro, :func:`on_page`, so
the controls are there on the first run of the page), "Push this view" sends the page and its
parameters (never the language; optionally holding the class on that page), and a live question
is picked by its text from the page's own "Predict first" steps (``ui.kit.predict.live_question``:
prompt in both languages, kind, tolerance, and the exact value computed by ``sim/`` for the
view's parameters; :func:`view_bank`) or written ad hoc. Answers arrive as a histogram
(``ui.teaching.responses.histogram``); "Reveal" shows every student the exact value (computed;
the instructor may override it), their own answer and its verdict, and the class's distribution.
The results of every question download as CSV (``ui.teaching.responses.results_csv``).
A class gone (closed, or lost by a store restart) is said so to the instructor.
"""

from __future__ import annotations

import json
import math
import re

import streamlit as st

from ui.teaching import answers as _answers
from ui.teaching import class_store as cs
from ui.teaching import instructor
from ui.teaching.answers import LAST_VIEW
from ui.teaching.live import (
    _BANK,
    _CODE,
    _SLOT,
    _TEACH,
    _VIEW_BANK,
    MAX_PROMPT,
    POLL_S,
    _ct,
    _short,
    _stems,
    _store,
    answers_chart,
    context,
    fold_sheet,
    join_link,
    plain,
    qr_html,
    show_code,
    titles,
)
from ui.teaching.responses import (
    ADHOC_RTOL,
    q_prompt,
    q_value,
    results_csv,
    split_options,
    tolerance,
    verdict,
)
from ui.kit.i18n import Text
from ui.kit.predict import _param_text, live_question, snapshot
from ui.kit.share import loopback_warning

ADHOC = "_adhoc"
_CONFIRM = "_class_confirm_close"  # session: the teacher asked to end the class; confirm it
_LAST_RESULTS = "_class_last_results"  # session: (code, CSV) of the class this session ended
_WITHDRAWN = "_class_withdrawn"  # session: the pages whose answers the end of this session's class withdrew


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
            st.warning(
                ct("teacher.ended" if _store().ended(code) else "teacher.lost", code=code), icon=":material/event_busy:"
            )
            s.pop(_TEACH, None)
            if who:
                _store().set_teaching(who, None)
            code = None
        if code is None:
            last_results(t, "class")
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
        join_box(code, lang, ct, 180)
        present(code, ct)
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


def join_box(code: str, lang: str, ct: Text, size: int) -> None:
    """How students join: the code (its own large element), the QR code (with its text alternative),
    the link (its copy icon beside it, not over it: assets/style.css) and, on a loopback link, the
    warning naming the classroom addresses. The sidebar panel and the console draw the same."""
    link = join_link(code)
    show_code(code, ct("teacher.code_label"))
    st.html(qr_html(link, size))  # it encodes the classroom address: a phone cannot open localhost
    st.caption(ct("teacher.join_how"))
    with st.container(key=f"tos_class_link_{size}"):
        st.code(link, language=None, wrap_lines=True)
    loopback_warning(link, Text("common", lang))


def present(code: str, ct: Text) -> None:
    """The students here now, read again every 2 s (as the console's count: both say the same)."""

    @st.fragment(run_every=2 * POLL_S)
    def here():
        try:
            st.caption(ct("teacher.present", n=_store().present(code)))
        except cs.STORE_ERRORS:
            st.caption(ct("teacher.down"))

    here()


class _Symbols:
    """A page's texts whose parameter labels are cut to their symbol ("β：逆温度" -> "β"), for the
    one-line list of a question's parameters (``ui.kit.predict._param_text`` cuts at dashes only)."""

    def __init__(self, t: Text):
        self.t = t

    def has(self, key: str) -> bool:
        return self.t.has(key)

    def __call__(self, key: str, **fmt) -> str:
        text = self.t(key, **fmt)
        return re.split(r"：|: ", text)[0].strip() if key.endswith(".label") else text


def params_line(t: Text, items) -> str:
    """``β = 9, τ = 60, …``: parameters ``(name, value)`` of the page whose texts are ``t``, by their
    symbols, options by their menu text (a question's parameters, the console's pushed view)."""
    return _param_text(_Symbols(t), tuple(items))


def with_context(q: dict, step, stem: str, values: dict) -> dict:
    """A bank question with what a student needs beside it, in every language: the step's own
    instruction (as under "Predict first": which experiment, which setting) and the parameters
    its answer depends on, as the sidebar names them (``about``)."""
    from ui.kit.spec import LANGS

    snap = snapshot(step, values)
    texts = {lang: Text(stem, lang) for lang in LANGS}
    q["instruction"] = {lang: t(f"predict.{step.id}.instruction", **step.args(values)) for lang, t in texts.items()}
    q["about"] = {lang: params_line(t, snap) for lang, t in texts.items()}
    q["sym"] = {
        lang: (t(f"predict.{step.id}.sym") if t.has(f"predict.{step.id}.sym") else "") for lang, t in texts.items()
    }  # the unit after a number (responses.q_value)
    return q


def _bank_of(steps, stem: str, values: dict) -> list[dict]:
    """Page ``stem``'s questions for the class (its "Predict first" steps), for ``values``;
    numbers first (their answers make a histogram), then choices, each in the page's order."""
    steps = sorted((x for x in (steps or ()) if x.kind in ("number", "choice")), key=lambda x: x.kind != "number")
    return [with_context(live_question(x, stem, values), x, stem, values) for x in steps]


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
        got = s[_VIEW_BANK] = (
            key,
            {"stem": view["page"], "query": dict(view.get("query") or {}), "questions": view_bank(view)},
        )
    return got[1]


def on_page(ctx) -> None:
    """Registered under the page's intro (ui/kit/hooks.py): remember the view shown and, for an
    instructor with an open class, draw "Push" and the question box in the panel's place, for
    this page, in this very run (the panel is drawn before the page)."""
    st.session_state[LAST_VIEW] = {"stem": ctx.stem, "values": dict(ctx.values), "query": dict(ctx.query)}
    if st.session_state.get(_CODE):  # a student in a class, on a phone: the sheet folds on a new page
        fold_sheet("page", ctx.stem)
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


def _query_of(ctx) -> dict:
    return {k: v for k, v in ctx.query.items() if k not in ("lang", "class")}


def _push(code: str, ctx, hold: bool) -> int:
    return _store().push(code, {"page": ctx.stem, "query": _query_of(ctx), "hold": bool(hold)})


def hold_only(view: dict, on: bool) -> dict:
    """``view`` again, held or released (``on``), marked as a change of the hold alone: a student
    following stays where they are, with their own slider values (``ui.teaching.student``); only a
    held student who is on another page is brought back. The sidebar's switch and the console's
    Unhold push it."""
    return {**view, "hold": bool(on), "only_hold": True}


def _hold_changed(code: str) -> None:
    """The hold switch's callback: the class's current view, held or released now (before: the
    switch waited for the next Push, and a class released by it stayed held)."""
    try:
        _, view, _ = _store().current(code)
        on = bool(st.session_state.get("_class_hold"))
        if view and bool(view.get("hold")) != on:
            _store().push(code, hold_only(view, on))
    except (*cs.STORE_ERRORS, KeyError):  # down or closed: the switch applies with the next Push
        pass


def _push_ask(code: str, ctx, t: Text) -> None:
    s = st.session_state
    ct = _ct(ctx.lang)
    try:
        _, now, _ = _store().current(code)
    except cs.STORE_ERRORS:
        now = None
    if now and bool(s.get("_class_hold")) != bool(now.get("hold")):  # the switch says what the class is
        s["_class_hold"] = bool(now.get("hold"))  # under now (the console's Unhold included)
    hold = st.toggle(
        ct("teacher.hold"), key="_class_hold", help=ct("teacher.hold_help"), on_change=_hold_changed, args=(code,)
    )
    if st.button(t("class.push"), key="_class_push", type="primary"):
        st.caption(t("class.pushed", v=_push(code, ctx, hold)))
        now = {"page": ctx.stem, "hold": hold}
    if now and now.get("hold") and now.get("page") in _stems():
        st.caption(ct("teacher.holding", page=Text(now["page"], ctx.lang)("title")))
    qs = {q["step"]: q for q in _bank(ctx)}
    s[_BANK] = {"stem": ctx.stem, "query": _query_of(ctx), "questions": list(qs.values())}
    ids = [*qs, ADHOC]

    def label(i):
        return ct("teacher.adhoc") if i == ADHOC else _short(q_prompt(qs[i], ctx.lang))

    qn = st.selectbox(ct("teacher.bank"), ids, key="_class_qn", format_func=label)
    if qn == ADHOC:
        prompt = st.text_input(ct("teacher.adhoc_prompt"), key="_class_prompt", max_chars=MAX_PROMPT)
        kind = st.selectbox(
            t("class.kind"), ["number", "choice"], key="_class_kind", format_func=lambda k: t(f"class.kind_{k}")
        )
        opts: list[str] = []
        if kind == "choice":
            raw = st.text_input(t("class.options"), key="_class_opts", max_chars=200, value="A, B, C")
            opts = split_options(raw, cs.MAX_ANSWER_LEN)
            if len(opts) < 2:  # said, not just a greyed-out button
                st.caption(t("class.options_need_two"))
        q = {
            "stem": ctx.stem,
            "step": None,
            "kind": kind,
            "options": opts,
            "prompt": prompt.strip(),
            "labels": {},
            "unit": {},
            "truth": None,
            "rtol": ADHOC_RTOL,
            "atol": 0.0,
            "digits": 4,
            "values": dict(ctx.values),
        }
        ready = bool(prompt.strip()) and (kind != "choice" or len(opts) >= 2)
    else:
        q = qs[qn]
        context(q, ctx.lang, ct)  # what the students will read with it
        if q.get("truth") is None:
            st.warning(ct("teacher.no_truth", msg=q.get("error", "")))
        else:
            st.caption(ct("teacher.truth", value=q_value(q, ctx.lang, q["truth"])))
        ready = True
    if st.button(t("class.ask"), key="_class_ask", disabled=not ready):
        ask(code, q, {"page": ctx.stem, "query": _query_of(ctx), "hold": bool(hold)})
        s.pop("_class_rv_prev", None)


def ask(code: str, q: dict, view: dict) -> int:
    """Ask ``q`` of class ``code`` about ``view`` (pushed first unless the class sees it already: the
    class sees the parameters the exact value is for). The question keeps the push it was asked at
    (``version``) and its view (``at``): once the class has moved on to another view, a student's
    banner folds it away."""
    version, shown, _ = _store().current(code)
    if not shown or shown.get("page") != view["page"] or shown.get("query") != view["query"]:
        version = _store().push(code, view)
    return _store().ask(code, {**q, "version": version, "at": {"page": view["page"], "query": view["query"]}})


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
        if q.get("step"):
            st.caption(ct("teacher.n_answers", n=len(values), q=qid, prompt=prompt))
        else:  # the instructor's own text: literal, as ordinary text
            plain(prompt, ct("teacher.n_answers", n=len(values), q=qid, prompt=""))
        if q.get("kind") == "text":  # free text (a lesson's question): no value to reveal; the newest, literal
            if values:
                st.caption(ct("teacher.free_answers", n=min(len(values), 12)))
            for v in values[-12:][::-1]:
                plain(str(v))
            return
        if q.get("kind") == "choice":
            opts = list(q.get("options") or [])
            labels = (q.get("labels") or {}).get(lang) or {}
            idx = opts.index(q["truth"]) if q.get("truth") in opts else None
            rv = st.selectbox(
                t("class.exact"),
                opts,
                key=f"{prefix}_class_rv_{qid}",
                index=idx,
                format_func=lambda c: str(labels.get(c, c)),
            )
        else:
            rv = st.number_input(
                t("class.exact"),
                key=f"{prefix}_class_rv_{qid}",
                value=q.get("truth"),
                format="%g",
                step=None,
                help=ct("teacher.override"),
            )
            if rv is not None and not math.isfinite(float(rv)):
                rv = None
        if st.button(t("class.reveal"), key=f"{prefix}_class_reveal_{qid}", disabled=rv is None):
            try:
                _store().reveal(code, qid, rv)
                shown = rv
            except cs.STORE_ERRORS + (KeyError,):
                st.warning(ct("teacher.down"), icon=":material/cloud_off:")
        if shown is not None:  # what the class sees (the box above may have changed since)
            right = sum(1 for v in values if verdict(q, v, shown))
            st.caption(
                ct(
                    "teacher.revealed_choice" if q.get("kind") == "choice" else "teacher.revealed",
                    value=q_value(q, lang, shown),
                    right=right,
                    n=len(values),
                    tol=tolerance(q, lang),
                )
            )
        try:
            answers_chart(values, q, lang, height, ct("hist.answer"), ct("hist.count"))  # as the students read them
        except Exception:  # noqa: BLE001 - the chart is a bonus; count and Reveal above stand
            st.caption(ct("teacher.no_chart"))

    live()


def _results_and_close(code: str, t, ct, key: str, down, close) -> None:
    """The class's results as CSV (in ``down``) and *Close the class* (in ``close``): the sidebar
    panel and the console draw the same two controls, under keys ``_<key>_csv`` / ``_<key>_close``."""
    down.download_button(
        ct("teacher.results"),
        data=lambda: results_csv(_store(), code, ct.lang),
        file_name=f"class_{code}_results.csv",
        mime="text/csv",
        key=f"_{key}_csv",
        on_click="ignore",
        icon=":material/download:",
    )
    s = st.session_state
    if not s.get(_CONFIRM):
        if close.button(t("class.close"), key=f"_{key}_close"):
            s[_CONFIRM] = True  # one click never ends a class: asked again, away from the results button
            st.rerun()
        return
    close.warning(t("class.close_confirm"), icon=":material/event_busy:")
    yes, no = close.columns(2)
    if no.button(t("class.close_cancel"), key=f"_{key}_close_cancel"):
        s.pop(_CONFIRM, None)
        st.rerun()
    if yes.button(t("class.close_yes"), key=f"_{key}_close_yes", type="primary"):
        # the results as they are now, kept in this session: the store forgets the class at once
        s[_LAST_RESULTS] = (code, results_csv(_store(), code, ct.lang))
        # worked answers released during the class do not stay public after it
        s[_WITHDRAWN] = _answers.withdraw_class(code)
        _store().close(code)
        s.pop(_TEACH, None)
        s.pop(_CONFIRM, None)
        who = instructor.identity()
        if who:
            _store().set_teaching(who, None)
        st.rerun()


def last_results(t, key: str) -> None:
    """After a class ended in this session: its results, still downloadable (until the tab closes),
    and which pages' worked answers its end withdrew; then every page whose answers are still
    public (released outside a class), each with a button that withdraws them."""
    s = st.session_state
    kept = s.get(_LAST_RESULTS)
    ct = _ct(t.lang)
    if kept:
        code, text = kept
        st.download_button(
            t("class.last_results", code=code),
            data=text.encode("utf-8"),
            file_name=f"class_{code}_results.csv",
            mime="text/csv",
            key=f"_{key}_last_csv",
            on_click="ignore",
            icon=":material/download:",
        )
    if s.get(_WITHDRAWN):
        st.caption(ct("teacher.withdrawn", pages=titles(s[_WITHDRAWN], t.lang)))
    for stem in sorted(_answers.released_pages() & _stems()):
        if st.button(
            ct("console.withdraw_page", page=titles([stem], t.lang)),
            key=f"_{key}_withdraw_{stem}",
            icon=":material/visibility_off:",
        ):
            _answers.release(stem, False)
            st.rerun()
