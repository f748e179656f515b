"""The teacher's side of a lesson run, drawn on the class console (``ui.teaching.console`` calls
:func:`console_start` when no class is open and :func:`console_live` beside an open class).

* *Start this lesson* opens a class on a lesson (live, teacher-paced); *Give it at the students'
  pace* makes a self-paced run with its own link and QR (homework, a lab).
* Live controls: Back / Next push the step's view to the class and ask its question
  (``ui.teaching.lessons.step_question``: its truth computed by ``sim/``), pacing (students move
  freely within steps 1..k), Pause / Resume, show or hide names; the step's instruction and the
  teacher's own note.
* :func:`board` — one dashboard for both kinds of run: students × steps (where each one is,
  answered or not, right or not), per step the distribution of the answers and the free texts;
  a snapshot puts answers the teacher picks on every student's screen, anonymous; names are hidden
  until the teacher shows them (anonymous labels: ``lesson_store.anon``); the results as CSV
  (:func:`lesson_csv`: one row per student × step, UTF-8 with a byte-order mark, labels not ids).
"""

from __future__ import annotations

import csv
import datetime as _dt
import io

import streamlit as st

from ui.teaching import class_store as cs
from ui.teaching import instructor
from ui.teaching import lesson_store as ls
from ui.teaching import lessons as _lessons
from ui.teaching.lesson_run import ENTRY, _said, _text, final, question_of, shown
from ui.teaching.live import _TEACH, POLL_S, _store, answers_chart, for_phones, join_link, qr_svg
from ui.teaching.responses import q_prompt, q_value
from ui.kit.i18n import Text
from ui.kit.safe import inert_html, literal


BOARD_S = 3 * POLL_S  # the dashboard's redraw


def _bt(lang: str) -> Text:
    return Text("lesson_run", lang)


def _runs() -> ls.Lessons:
    return ls.get_lessons()


def push_step(code: str, lesson, i: int, lang: str) -> None:
    """Step ``i`` to class ``code``: its view pushed (with ``lesson_step``), its question asked."""
    step = lesson.steps[i]
    _store().push(code, {"page": step.page, "query": step.query(), "hold": False, "lesson_step": i})
    q = question_of(lesson, step, lang)
    if q is not None:
        _store().ask(code, q)
    _runs().update(code, step=i)


def start_live(code: str, lesson, lang: str) -> None:
    _runs().start(code, lesson.id, "live", owner=instructor.identity() or "")
    push_step(code, lesson, 0, lang)


def _pick_lesson(lang: str, key: str):
    found = [x for x in _lessons.load_all() if x.steps]
    if not found:
        st.caption(_bt(lang)("board.no_lessons"))
        return None
    return st.selectbox(
        _bt(lang)("board.lesson"), found, key=key, format_func=lambda x: f"{_text(x.title, lang)[:80]} ({len(x.steps)})"
    )


def console_start(lang: str) -> None:
    """No class open: start a lesson live, or give one at the students' pace; your runs (self-paced
    ones, and live ones whose class has ended: their dashboard and CSV stay while the store keeps them)."""
    bt, s = _bt(lang), st.session_state
    st.subheader(bt("board.start_title"))
    lesson = _pick_lesson(lang, "_lsn_pick")
    if lesson is not None:
        c1, c2 = st.columns(2)
        if c1.button(bt("board.start_live"), key="_lsn_start_live", type="primary", icon=":material/play_arrow:"):
            code = s[_TEACH] = _store().create()
            who = instructor.identity()
            if who:
                _store().set_teaching(who, code)
            start_live(code, lesson, lang)
            st.rerun()
        if c2.button(bt("board.start_self"), key="_lsn_start_self", icon=":material/home_work:"):
            rid = ls.new_run_id()
            _runs().start(rid, lesson.id, "self", owner=instructor.identity() or "")
            s["_lsn_board_run"] = s["_lsn_runs"] = rid
    modes = {r: (_runs().run(r) or {}).get("mode") for r in _runs().runs_of(instructor.identity() or "")}
    own = [r for r, m in modes.items() if m == "self" or (m == "live" and not _store().exists(r))]
    typed = st.text_input(bt("board.open_run"), key="_lsn_open_run", max_chars=40).strip()
    typed = typed.rsplit(f"{ENTRY}=", 1)[-1].split("&")[0] if typed else ""
    pick = s.get("_lsn_board_run")
    if ls.valid_run_id(typed) and (_runs().run(typed) or {}).get("mode") == "self":
        pick = typed
    elif own:
        pick = st.selectbox(
            bt("board.runs"),
            own,
            key="_lsn_runs",
            index=own.index(pick) if pick in own else 0,
            format_func=lambda r: bt(f"board.run_{modes[r]}", id=r),
        )
    run = _runs().run(pick) if pick else None
    if run is None:
        return
    lesson = _lessons.get(run["lesson"])
    if lesson is None:
        st.warning(bt("board.lesson_gone", id=run["lesson"]))
        return
    if run["mode"] == "live":  # its class has ended: what the students did, and the CSV
        _said(_text(lesson.title, lang), 120, "tos-lesson-title")
        board(pick, lesson, lang)
        return
    link = join_link("X").split("?", 1)[0] + f"?{ENTRY}={pick}"
    left, right = st.columns([2, 1])
    with left:
        _said(_text(lesson.title, lang), 120, "tos-lesson-title")  # the teacher's text: inert
        st.markdown(bt("board.self_link"))
    left.code(link, language=None, wrap_lines=True)
    right.image(qr_svg(for_phones(link)), width=200)
    board(pick, lesson, lang)


def console_live(code: str, lang: str) -> None:
    """A class is open: its lesson's controls and dashboard, or a chooser to start one in it."""
    bt = _bt(lang)
    run = _runs().run(code)
    lesson = _lessons.get(run["lesson"]) if run else None
    if run is None or lesson is None or not lesson.steps:
        with st.expander(bt("board.start_in_class"), icon=":material/school:"):
            chosen = _pick_lesson(lang, "_lsn_pick_in_class")
            if chosen is not None and st.button(bt("board.start_live"), key="_lsn_start_in_class"):
                start_live(code, chosen, lang)
                st.rerun()
        return
    _controls(code, run, lesson, lang)
    board(code, lesson, lang)


def _controls(code: str, run: dict, lesson, lang: str) -> None:
    bt, n, i = _bt(lang), len(lesson.steps), min(run["step"], len(lesson.steps) - 1)
    step = lesson.steps[i]
    st.subheader(bt("board.live_title"))
    _said(_text(lesson.title, lang), 120, "tos-lesson-title")
    with st.container(horizontal=True, vertical_alignment="center", key="lsn_controls"):
        if st.button(bt("back"), key="_lsn_t_back", icon=":material/arrow_back:", disabled=i == 0):
            push_step(code, lesson, i - 1, lang)
            st.rerun()
        st.markdown(bt("where", step=i + 1, n=n, page=Text(step.page, lang)("title")))
        if st.button(
            bt("next"), key="_lsn_t_next", icon=":material/arrow_forward:", type="primary", disabled=i >= n - 1
        ):
            push_step(code, lesson, i + 1, lang)
            st.rerun()
        if st.button(
            bt("board.resume" if run["paused"] else "board.pause"),
            key="_lsn_t_pause",
            icon=":material/play_arrow:" if run["paused"] else ":material/pause:",
        ):
            _runs().update(code, paused=not run["paused"])
            st.rerun()
    c0, c1, c2 = st.columns(3)
    jump = c0.selectbox(
        bt("board.goto"),
        range(n),
        index=i,
        key=f"_lsn_t_goto_{i}",
        format_func=lambda k: f"{k + 1}. {Text(lesson.steps[k].page, lang)('title')}",
    )
    if jump != i:
        push_step(code, lesson, jump, lang)
        st.rerun()
    pace = c1.number_input(
        bt("board.pace"),
        min_value=0,
        max_value=n,
        value=int(run["pace"]),
        step=1,
        key=f"_lsn_t_pace_{run['pace']}",
        help=bt("board.pace_help"),
    )
    if int(pace) != run["pace"]:
        _runs().update(code, pace=int(pace))
        st.rerun()
    names = c2.toggle(
        bt("board.names"), value=run["names"], key=f"_lsn_t_names_{int(run['names'])}", help=bt("board.names_help")
    )
    if names != run["names"]:
        _runs().update(code, names=names)
        st.rerun()
    if run["paused"]:
        st.info(bt("paused"), icon=":material/front_hand:")
    if _text(step.instruction, lang):
        st.caption(bt("board.instruction"))
        _said(_text(step.instruction, lang))
    if _text(step.note, lang):
        st.caption(bt("board.note"))
        _said(_text(step.note, lang), cls="tos-lesson-note")
    q = question_of(lesson, step, lang)
    if q is not None and q.get("truth") is not None:
        st.caption(bt("board.truth", value=shown(q, lang, q["truth"])))


def _people(rid: str) -> tuple[list[str], dict, dict, dict]:
    asked, pos, recs = _runs().nicks(rid, everyone=True), _runs().positions(rid), _runs().records(rid)
    nicks = {w: n for w, n in asked.items() if n}
    who = set(asked) | set(pos) | {w for per in recs.values() for w in per}  # everyone who joined
    return sorted(who, key=ls.anon), nicks, pos, recs  # by anonymous label: the order tells no name


def grid_html(columns: dict[str, list[str]]) -> str:
    """The students × steps table as inert HTML (``st.table`` draws its cells as Markdown: a
    nickname such as ``http://…`` or ``**x**`` would turn into a link or bold): every cell escaped."""
    heads = list(columns)
    n = len(columns[heads[0]]) if heads else 0
    css = 'style="border:1px solid #ccc;padding:0.25em 0.6em;text-align:left"'

    def cell(tag: str, text, extra: str = "") -> str:
        return f"<{tag}{extra} {css}>{inert_html(text, 40)}</{tag}>"

    head = "".join(cell("th", h, ' scope="col"') for h in heads)
    body = "".join(
        "<tr>"
        + cell("th", columns[heads[0]][i], ' scope="row"')
        + "".join(cell("td", columns[h][i]) for h in heads[1:])
        + "</tr>"
        for i in range(n)
    )
    return (
        f'<table class="tos-lesson-grid" style="border-collapse:collapse;width:100%">'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )


def _cell(q: dict | None, rec: dict | None, here: bool) -> str:
    mark = ""
    if rec is not None and q is not None:
        if rec.get("right") is None:
            mark = "✎"
        elif rec["right"]:
            mark = "✓"
        else:
            mark = "✗" if final(q, rec) else "…"
    return (("▶ " if here else "") + mark).strip()


def board(rid: str, lesson, lang: str) -> None:
    """Students × steps, each step's answers, snapshots and the CSV (live and self-paced alike);
    redrawn every ``BOARD_S`` seconds (a fragment: answers arrive without a click)."""
    st.fragment(run_every=BOARD_S)(_board)(rid, lesson, lang)


def _board(rid: str, lesson, lang: str) -> None:
    try:
        _board_now(rid, lesson, lang)
    except cs.STORE_ERRORS:  # the store unreachable: said in words; the next redraw tries again
        st.warning(Text("console", lang)("teacher.down"), icon=":material/cloud_off:")


def _board_now(rid: str, lesson, lang: str) -> None:
    bt = _bt(lang)
    run = _runs().run(rid)
    if run is None:
        return
    people, nicks, pos, recs = _people(rid)
    if run["names"]:  # names shown: in their order, the anonymous after them
        people.sort(key=lambda w: (w not in nicks, nicks.get(w, "")))
    qs = {s.index: question_of(lesson, s, lang) for s in lesson.steps}
    st.markdown(bt("board.title", n=len(people)))
    if not people:
        st.caption(bt("board.nobody"))
    else:

        def label(w):
            return nicks[w] if run["names"] and nicks.get(w) else ls.anon(w)

        cols = [str(k + 1) for k in range(len(lesson.steps))]
        where = run["step"] if run["mode"] == "live" else None
        rows = {bt("board.student"): [label(w) for w in people]}
        for k, c in enumerate(cols):
            rows[c] = [_cell(qs[k], recs.get(k, {}).get(w), pos.get(w, where) == k) for w in people]
        with st.container(key="lsn_grid"):  # a plain table: large on a projector, text in the page
            st.html(grid_html(rows))
        st.caption(bt("board.legend"))
    _step_answers(rid, run, lesson, qs, recs, nicks, lang)
    st.download_button(
        bt("board.csv"),
        data=lambda: lesson_csv(rid, lesson, qs, lang),
        key=f"_lsn_csv_{rid}",
        file_name=f"lesson_{lesson.id}_{rid}.csv",
        mime="text/csv",
        on_click="ignore",
        icon=":material/download:",
    )


def _step_answers(rid, run, lesson, qs, recs, nicks, lang) -> None:
    bt = _bt(lang)
    asked = [k for k, q in qs.items() if q is not None]
    if not asked:
        return
    default = run["step"] if run["step"] in asked else asked[0]
    k = st.selectbox(
        bt("board.step"),
        asked,
        index=asked.index(default),
        key=f"_lsn_step_{rid}_{run['step']}",
        format_func=lambda j: f"{j + 1}. {q_prompt(qs[j], lang)[:80]}",
    )
    q, got = qs[k], recs.get(k, {})
    if q.get("kind") in ("number", "choice"):
        answers_chart([r["value"] for r in got.values()], q, lang, 200, bt("board.answer"), bt("board.count"))
    if run["mode"] == "live" and q.get("truth") is not None and k not in run["revealed"]:
        if st.button(bt("board.reveal", step=k + 1), key=f"_lsn_reveal_{rid}_{k}", icon=":material/visibility:"):
            _runs().update(rid, revealed=[*run["revealed"], k])  # every student who answered step k sees it
            st.rerun()
    elif run["mode"] == "live" and k in run["revealed"]:
        st.caption(bt("board.revealed", step=k + 1))
    items = {w: q_value(q, lang, r["value"]) for w, r in got.items()}
    if not items:
        st.caption(bt("board.no_answers"))
        return
    st.caption(bt("board.pick"))
    picked = []
    for w, text in items.items():  # each answer as typed (inert), and a box to pick it for the snapshot
        who, tag = (nicks[w] if run["names"] and nicks.get(w) else ls.anon(w)), ls.anon(w)[1:]
        with st.container(horizontal=True, vertical_alignment="center", key=f"lsn_ans_{k}_{tag}"):
            if st.checkbox(bt("board.pick_one", who=literal(who, ls.MAX_NICK)), key=f"_lsn_snap_{rid}_{k}_{tag}"):
                picked.append(w)
            _said(text)
    c1, c2 = st.columns(2)
    if c1.button(bt("board.show"), key=f"_lsn_show_{rid}_{k}", disabled=not picked, icon=":material/slideshow:"):
        shown = [f"{nicks[w]}: {items[w]}" if run["names"] and nicks.get(w) else items[w] for w in picked]
        _runs().show(rid, k, shown)
        st.rerun()
    if run.get("snap") and c2.button(bt("board.hide"), key=f"_lsn_hide_{rid}"):
        _runs().show(rid, None, [])
        st.rerun()


def _cell_text(text: str) -> str:
    """A typed text as a spreadsheet cell that stays text (not a formula: ``=…`` gets a quote)."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def lesson_csv(rid: str, lesson, qs: dict, lang: str = "en") -> str:
    """One row per student × step, as a spreadsheet opens it: the nickname (or the anonymous id),
    the step, its page, the prompt in ``lang``, one column per parameter, the exact value, the
    answer (choices by their labels), tries, the verdict (1/0, empty without one), when (UTC)."""
    people, nicks, pos, recs = _people(rid)
    params: list[str] = []
    for q in qs.values():
        params += [p for p in ((q or {}).get("values") or {}) if p not in params]
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(
        ["student", "step", "page", "prompt", *params, "exact_value", "answer", "tries", "right", "answered_utc"]
    )
    for who in people:
        for step in lesson.steps:
            q = qs.get(step.index) or {}
            rec = recs.get(step.index, {}).get(who)
            vals = q.get("values") or step.values()
            when = _dt.datetime.fromtimestamp(float(rec["at"]), _dt.UTC).strftime("%Y-%m-%d %H:%M:%S") if rec else ""
            right = "" if not rec or rec.get("right") is None else int(rec["right"])
            answer = q_value(q, lang, rec["value"]) if rec else ""
            if rec and isinstance(rec["value"], str):
                answer = _cell_text(answer)
            w.writerow(
                [
                    _cell_text(nicks.get(who) or ls.anon(who)),
                    step.index + 1,
                    Text(step.page, lang)("title"),
                    q_prompt(q, lang) if q else "",
                    *[vals.get(p, "") for p in params],
                    q_value(q, lang, q.get("truth")) if q and q.get("truth") is not None else "",
                    answer,
                    rec["tries"] if rec else "",
                    right,
                    when,
                ]
            )
    return "\ufeff" + out.getvalue()
