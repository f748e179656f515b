"""Running a lesson (ui/teaching/lesson_run.py, ui/teaching/dashboard.py) in AppTest: a teacher starts
the shipped lesson "attention_first" live from the class console, students follow its steps,
answer (a wrong number gets a second try; the truth is not in what a student's page holds before
the reveal), pacing, pause (the page is not drawn), nicknames hidden until shown, a snapshot, the
CSV; and a student alone at their own pace, whose progress survives a new session (a reload,
another device) and is on the teacher's dashboard (memory store), and a replica change (Redis)."""

from __future__ import annotations

import csv
import io
import re

import pytest

from tests._instructor import router_only, teacher_with_class  # noqa: F401 - fixture
from tests.test_instructor_class import redis_url  # noqa: F401 - fixture
from tests.conftest import app_test, open_page
from ui.teaching import class_store as cs
from ui.teaching import console, dashboard, lesson_run
from ui.teaching import lesson_store as ls
from ui.teaching import lessons
from ui.teaching import responses

LESSON = "attention_first"


def _md(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def _html(at) -> str:
    return "\n".join(h.proto.body for h in at.get("html"))


def _everything(at) -> str:
    """Every text a student's page holds (what the browser was sent, as AppTest sees it)."""
    parts = [_md(at), _html(at)]
    for kind in ("caption", "info", "success", "warning", "error", "text", "code"):
        parts += [str(x.value) for x in getattr(at, kind)]
    return "\n".join(parts)


def _grid(at) -> str:
    """The dashboard's students × steps table (inert HTML)."""
    return next(h.proto.body for h in at.get("html") if 'class="tos-lesson-grid"' in h.proto.body)


def _step_of(kind: str) -> int:
    lesson = lessons.get(LESSON)
    return next(s.index for s in lesson.steps if s.question is not None and s.question.kind == kind)


def _self_paced_run(teacher) -> str:
    """The teacher ends the live class and gives the shipped lesson at each student's pace: its run id."""
    teacher.button(key="_console_close").click().run()
    teacher.button(key="_console_close_yes").click().run()
    teacher.selectbox(key="_lsn_pick").set_value(lessons.get(LESSON)).run()
    teacher.button(key="_lsn_start_self").click().run()
    return teacher.session_state["_lsn_board_run"]


@pytest.fixture
def live(monkeypatch, router_only):  # noqa: F811
    """A teacher on the class console who started the shipped lesson live: (teacher, code)."""
    teacher, code = teacher_with_class(monkeypatch)
    teacher.button(key="_class_close").click().run()
    teacher.button(key="_class_close_yes").click().run()  # the console's own start opens a class
    open_page(teacher, console.CONSOLE_PATH)
    teacher.run()
    teacher.selectbox(key="_lsn_pick").set_value(lessons.get(LESSON)).run()
    teacher.button(key="_lsn_start_live").click().run()
    assert not teacher.exception, [e.value for e in teacher.exception]
    code = teacher.session_state["_class_teach"]
    return teacher, code


def test_live_lesson_steps_answers_pacing_pause_snapshot_csv(live):
    teacher, code = live
    lesson = lessons.get(LESSON)
    run = ls.get_lessons().run(code)
    assert run["lesson"] == LESSON and run["mode"] == "live" and run["step"] == 0
    version, view, _ = cs.get_store().current(code)
    assert view["page"] == lesson.steps[0].page and view["lesson_step"] == 0
    assert view["query"] == lesson.steps[0].query()
    q0 = cs.get_store().question(code)
    assert q0["lesson_step"] == 0 and q0["truth"] == lessons.step_question(lesson.steps[0], "en")["truth"]

    a = app_test("home", {"class": code, "lang": "zh"})
    assert not a.exception, [e.value for e in a.exception]
    a.run()  # the poll applied the push: the step's page
    assert "第 1 步，共 8 步" in _md(a)
    # a nickname (optional), cleaned
    a.text_input(key="_lsn_nick").set_value("小明<b>")
    a.button(key="FormSubmitter:_lsn_nick_form_" + code + "-保存").click().run()
    who_a = a.session_state["_class_who"][1]
    assert ls.get_lessons().nicks(code) == {who_a: "小明b"}

    b = app_test("home", {"class": code, "lang": "en"})
    b.run()
    b.button(key="FormSubmitter:_lsn_nick_form_" + code + "-Stay anonymous").click().run()
    assert "Step 1 of 8" in _md(b)
    # no Back / Next for a student without pacing
    assert not [x for x in b.button if x.key in ("_lsn_next", "_lsn_back")]

    # the teacher jumps to the number step; a wrong answer gets a second try, the truth stays away
    k = _step_of("number")
    teacher.selectbox(key="_lsn_t_goto_0").set_value(k).run()
    assert ls.get_lessons().run(code)["step"] == k
    a.run()
    b.run()
    assert f"Step {k + 1} of 8" in _md(b)
    q = lessons.step_question(lesson.steps[k], "en")
    truth = q["truth"]
    human = responses.q_value(q, "en", truth)
    said = lesson_run.shown(q, "en", truth)  # as the Markdown source holds it (a teacher's unit: escaped)
    assert human not in _everything(b) and said not in _everything(b)
    b.number_input(key=f"_lsn_in_{code}_{k}").set_value(truth * 3)
    b.button(key=f"_lsn_send_{code}_{k}").click().run()
    assert any("one more try" in w.value for w in b.warning)
    assert human not in _everything(b) and said not in _everything(b)
    b.number_input(key=f"_lsn_in_{code}_{k}").set_value(truth * 1.001)
    b.button(key=f"_lsn_send_{code}_{k}").click().run()
    rec = ls.get_lessons().mine(code, k, b.session_state["_class_who"][1])
    assert rec["tries"] == 2 and rec["right"] is True
    assert any("reveals" in i.value for i in b.info)  # live: the teacher reveals
    assert human not in _everything(b) and said not in _everything(b)
    # the class's own count got the answer too (the open question is this step's)
    qid = cs.get_store().question(code)["id"]
    assert cs.get_store().answers(code, qid) == [pytest.approx(truth * 1.001)]
    teacher.button(key=f"_console_class_reveal_{qid}").click().run()
    b.run()
    assert any(said in x.value and "Right" in x.value for x in b.success)

    # the free-text step: shown literally on the dashboard, picked as an anonymous snapshot
    t = _step_of("text")
    teacher.selectbox(key=f"_lsn_t_goto_{k}").set_value(t).run()
    a.run()
    evil = "**bold** <img src=x onerror=alert(1)> $x$"
    a.text_area(key=f"_lsn_in_{code}_{t}").set_value(evil)
    a.button(key=f"_lsn_send_{code}_{t}").click().run()
    assert ls.get_lessons().mine(code, t, who_a)["value"] == evil
    teacher.run()
    assert "&lt;img" in _html(teacher) and "<img src=x" not in _html(teacher)
    shown = _grid(teacher)
    assert "小明b" not in shown and ls.anon(who_a) in shown  # names hidden by default
    assert teacher.selectbox(key=f"_lsn_step_{code}_{t}").value == t  # the step's answers follow the teacher's step
    teacher.checkbox(key=f"_lsn_snap_{code}_{t}_{ls.anon(who_a)[1:]}").check().run()
    teacher.button(key=f"_lsn_show_{code}_{t}").click().run()
    assert ls.get_lessons().run(code)["snap"] == {"step": t, "items": [evil]}
    b.run()
    b.run()
    assert "&lt;img" in _html(b) and "<img src=x" not in _html(b) and "小明" not in _everything(b)

    # pacing: students may move within steps 1..k
    teacher.number_input(key="_lsn_t_pace_0").set_value(t + 2).run()
    b.run()
    b.run()
    assert b.button(key="_lsn_next") and b.button(key="_lsn_back")
    b.button(key="_lsn_next").click().run()
    b.run()
    assert f"Step {t + 2} of 8" in _md(b)
    assert ls.get_lessons().positions(code)[b.session_state["_class_who"][1]] == t + 1
    # the teacher's hold taken off (the sidebar's switch, the console's Unhold): nobody is moved
    from ui.teaching.teacher import hold_only

    cs.get_store().push(code, hold_only(cs.get_store().current(code)[1], False))
    b.run()
    b.run()
    assert f"Step {t + 2} of 8" in _md(b)
    assert ls.get_lessons().positions(code)[b.session_state["_class_who"][1]] == t + 1
    # ahead of the teacher (pacing), the student answers; the dashboard reveals that step
    qn = lessons.step_question(lesson.steps[t + 1], "en")
    b.radio(key=f"_lsn_in_{code}_{t + 1}").set_value(qn["truth"])
    b.button(key=f"_lsn_send_{code}_{t + 1}").click().run()
    right_line = lesson_run.shown(qn, "en", qn["truth"])
    assert any("reveals" in i.value for i in b.info) and not [x for x in b.success if right_line in x.value]
    teacher.selectbox(key=f"_lsn_step_{code}_{t}").set_value(t + 1).run()
    teacher.button(key=f"_lsn_reveal_{code}_{t + 1}").click().run()
    assert ls.get_lessons().run(code)["revealed"] == [t + 1]
    b.run()
    b.run()
    assert any(right_line in x.value and "Right" in x.value for x in b.success)

    # pause: the page is not drawn (no slider to drag); resume: it is back
    sliders = len(b.slider)
    assert sliders > 0
    teacher.button(key="_lsn_t_pause").click().run()
    assert ls.get_lessons().run(code)["paused"] is True
    b.run()
    b.run()
    assert any("eyes on the teacher" in i.value for i in b.info) and len(b.slider) == 0
    teacher.button(key="_lsn_t_pause").click().run()
    b.run()
    b.run()
    assert len(b.slider) == sliders

    # the teacher holds the class: in a lesson, that is the teacher's step, its view included
    cs.get_store().push(code, hold_only(cs.get_store().current(code)[1], True))
    b.run()
    b.run()
    assert f"Step {t + 1} of 8" in _md(b)
    assert b.session_state["_last_view"]["query"] == lesson.steps[t].query() | {"class": code, "lang": "en"}
    assert ls.get_lessons().positions(code)[b.session_state["_class_who"][1]] == t
    cs.get_store().push(code, hold_only(cs.get_store().current(code)[1], False))
    b.run()
    b.button(key="_lsn_next").click().run()  # released: ahead again, within the pacing
    b.run()
    assert f"Step {t + 2} of 8" in _md(b)
    # pacing narrowed again: the student ahead is brought back to the teacher's step, its view included
    teacher.number_input(key=f"_lsn_t_pace_{t + 2}").set_value(0).run()
    b.run()
    b.run()
    assert f"Step {t + 1} of 8" in _md(b) and not [x for x in b.button if x.key in ("_lsn_next", "_lsn_back")]
    assert b.session_state["_last_view"]["query"] == lesson.steps[t].query() | {"class": code, "lang": "en"}
    where = ls.get_lessons().positions(code)
    assert where[b.session_state["_class_who"][1]] == t and where[who_a] == t  # pushes moved them too

    # show names: the dashboard says the nickname
    teacher.toggle(key="_lsn_t_names_0").set_value(True).run()
    assert "小明b" in _grid(teacher)

    # the CSV: one row per student and step, BOM, labels, the nickname or the anonymous id
    text = dashboard.lesson_csv(code, lesson, {s.index: lessons.step_question(s, "en") for s in lesson.steps}, "en")
    assert text.startswith("\ufeffstudent,step,page,prompt,")
    rows = list(csv.DictReader(io.StringIO(text.lstrip("\ufeff"))))
    assert len(rows) == 2 * len(lesson.steps)
    mine = [r for r in rows if r["student"] == "小明b"]
    assert len(mine) == len(lesson.steps) and mine[t]["answer"] == evil and mine[t]["right"] == ""
    theirs = [r for r in rows if r["student"] == ls.anon(b.session_state["_class_who"][1])]
    assert theirs[k]["right"] == "1" and theirs[k]["tries"] == "2"
    assert float(theirs[k]["exact_value"].split()[0]) == pytest.approx(truth, rel=1e-3)
    assert "beta" in rows[0] and rows[0]["page"] == "Two points: SA vs USA"


def test_self_paced_alone_survives_a_new_session_and_shows_on_the_dashboard(live):
    teacher, code = live
    rid = _self_paced_run(teacher)
    assert ls.valid_run_id(rid) and ls.get_lessons().run(rid)["mode"] == "self"
    runs = teacher.selectbox(key="_lsn_runs").options[:2]
    assert runs == [f"{rid}: at each student's pace", f"{code}: a class, ended"]  # the ended class's board stays
    assert any(f"?lesson={rid}" in c.value for c in teacher.code)
    lesson = lessons.get(LESSON)

    s = app_test("home", {"lesson": rid, "lang": "en"})
    assert not s.exception, [e.value for e in s.exception]
    s.text_input(key="_lsn_start_nick").set_value("Ana")
    s.button(key="FormSubmitter:_lsn_start_form-Start the lesson").click().run()
    tok = s.session_state["_lsn_self"][1]
    assert ls.valid_token(tok) and ls.get_lessons().nicks(rid) == {tok: "Ana"}
    assert "Step 1 of 8" in _md(s)
    assert s.query_params.get("me") == [tok] or s.query_params.get("me") == tok
    assert any(f"?lesson={rid}&me={tok}" in c.value for c in s.main.code)  # the student's own resume link
    from ui.kit.share import share_url

    query = {k: (v[0] if isinstance(v, list) else v) for k, v in s.query_params.items()}
    assert query["lesson"] == rid and query["me"] == tok
    shared = share_url(query)
    assert "beta=" in shared and tok not in shared and rid not in shared  # never in "Share this view"
    # every step: answer (right) and Next; the truth appears only after the answer
    for step in lesson.steps[:3]:
        q = lessons.step_question(step, "en")
        if q is not None:
            key = f"_lsn_in_{rid}_{step.index}"
            if q["kind"] == "number":
                page = _everything(s)
                assert lesson_run.shown(q, "en", q["truth"]) not in page
                assert responses.q_value(q, "en", q["truth"]) not in page
                s.number_input(key=key).set_value(q["truth"])
            elif q["kind"] == "choice":
                s.radio(key=key).set_value(q["truth"] or q["options"][0])
            else:
                s.text_area(key=key).set_value("because")
            s.button(key=f"_lsn_send_{rid}_{step.index}").click().run()
            if q["kind"] == "number":
                assert any(lesson_run.shown(q, "en", q["truth"]) in x.value for x in s.success)
        s.button(key="_lsn_next").click().run()
    assert "Step 4 of 8" in _md(s)
    # another device / a reload: a new session with the resume link goes on at step 4
    again = app_test("home", {"lesson": rid, "me": tok, "lang": "en"})
    assert not again.exception
    assert "Step 4 of 8" in _md(again)
    assert again.session_state["_lsn_self"] == (rid, tok)
    # a guessed token is somebody new, never Ana
    other = app_test("home", {"lesson": rid, "me": ls.new_token(), "lang": "en"})
    assert "Step 1 of 8" in _md(other) and "Ana" not in _everything(other)
    # the teacher's dashboard: the student, where they are, their answers
    teacher.run()
    grid = _grid(teacher)
    assert ls.anon(tok) in grid and "Ana" not in grid
    row = re.search(rf"<tr><th[^>]*>{re.escape(ls.anon(tok))}</th>(.*?)</tr>", grid).group(1)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
    assert cells[3] == "▶" and cells[:3] == ["✓", "✓", "✓"] and cells[4:] == [""] * 4
    # the ended class's lesson: its board and CSV are still there (nobody joined it in this test)
    teacher.selectbox(key="_lsn_runs").set_value(code).run()
    assert not teacher.exception and teacher.download_button(key=f"_lsn_csv_{code}")
    # a bad or unknown link: said, no traceback
    for bad in ("x", "../../etc/passwd", "AAAAAAAAAAAA"):
        at = app_test("home", {"lesson": bad, "lang": "en"})
        assert not at.exception and at.warning


def test_free_text_answers_in_responses():
    q = {"kind": "text"}
    assert responses.parse_answer(q, "  because Z ≥ n  ") == ("because Z ≥ n", None)
    assert responses.parse_answer(q, "") == (None, "answer_missing")
    assert responses.parse_answer(q, "x" * (responses.MAX_TEXT + 1)) == (None, "answer_bad")
    assert responses.verdict(q, "anything", "anything") is None
    assert responses.q_value(q, "en", "**x**") == "**x**"


def test_pacing_range():
    run = {"mode": "live", "step": 2, "pace": 0}
    assert list(lesson_run.allowed(run, 8)) == [2]
    assert list(lesson_run.allowed({**run, "pace": 5}, 8)) == [0, 1, 2, 3, 4]
    assert list(lesson_run.allowed({**run, "step": 6, "pace": 3}, 8)) == list(range(7))
    assert list(lesson_run.allowed({**run, "step": 9}, 8)) == [7]
    assert list(lesson_run.allowed({"mode": "self", "step": 0, "pace": 0}, 8)) == list(range(8))
    assert not lesson_run.final({"kind": "number", "truth": 1.0}, {"tries": 1, "right": False})
    assert lesson_run.final({"kind": "number", "truth": 1.0}, {"tries": 2, "right": False})
    assert lesson_run.final({"kind": "choice", "truth": "a"}, {"tries": 1, "right": False})


def test_self_paced_progress_survives_a_replica_change(monkeypatch, redis_url):  # noqa: F811
    """Redis: a student starts alone (no teacher online, no instructor mode), answers, moves on;
    another replica (its own connection, a new session from the same link with the token) goes
    on at the same step with the answer kept and revealed."""
    monkeypatch.setenv(cs.REDIS_ENV, redis_url)
    first = ls.get_lessons()
    assert isinstance(first, ls.RedisLessons)
    rid = ls.new_run_id()
    first.start(rid, LESSON, "self")
    lesson = lessons.get(LESSON)
    s = app_test("home", {"lesson": rid, "lang": "zh"})
    s.button(key="FormSubmitter:_lsn_start_form-开始课程").click().run()
    tok = s.session_state["_lsn_self"][1]
    q = lessons.step_question(lesson.steps[0], "zh")
    s.radio(key=f"_lsn_in_{rid}_0").set_value(q["truth"])
    s.button(key=f"_lsn_send_{rid}_0").click().run()
    assert any(responses.q_value(q, "zh", q["truth"]) in x.value for x in s.success)
    s.button(key="_lsn_next").click().run()
    assert "第 2 步，共 8 步" in _md(s)

    monkeypatch.setattr(cs, "_store", None)  # another replica: nothing of this process's state
    monkeypatch.setattr(ls, "_lessons", None)
    again = app_test("home", {"lesson": rid, "me": tok, "lang": "zh"})
    assert not again.exception and ls.get_lessons() is not first
    assert "第 2 步，共 8 步" in _md(again)
    again.button(key="_lsn_back").click().run()
    assert "第 1 步，共 8 步" in _md(again)
    assert any(responses.q_value(q, "zh", q["truth"]) in x.value for x in again.success)  # kept, no new try
    assert not [w for w in again.button if w.key == f"_lsn_send_{rid}_0"]
    assert ls.get_lessons().mine(rid, 0, tok)["tries"] == 1


def test_a_teachers_own_labels_are_shown_as_typed():
    """A teacher's own choice labels and units are drawn inside Markdown (a radio's options, the
    verdict line): every character Markdown or LaTeX acts on is escaped; a page's own are not."""
    own = {"step": None, "kind": "choice", "labels": {"en": {"a": "**A** [x](http://e.example) $y$"}}}
    got = lesson_run.shown(own, "en", "a")
    assert got == r"\*\*A\*\* \[x\]\(http://e\.example\) \$y\$"
    bank = {**own, "step": "smaller"}
    assert lesson_run.shown(bank, "en", "a") == "**A** [x](http://e.example) $y$"
    assert lesson_run.md_plain("rad\nper  unit") == "rad per unit"
    assert lesson_run.md_plain("弧度/单位深度") == "弧度/单位深度"


def test_the_grid_is_inert_html():
    """st.table would draw its cells as Markdown (a nickname ``**x**`` bold, ``http://…`` a link):
    the grid is HTML text, every cell escaped."""
    html = dashboard.grid_html({"student": ["**x** http://e.example", "<b>y</b>"], "1": ["✓", "▶"]})
    assert "**x** http://e.example" in html and "&lt;b&gt;y&lt;/b&gt;" in html
    assert "<b>" not in html and "<a " not in html and html.count("<tr>") == 3


def test_a_bank_step_covers_the_pages_answer_until_the_student_answered(live):
    """A lesson step that asks one of the page's own "Predict first" questions: until the student
    has answered it in the lesson box, the page's figures and its numbers are covered and the page's
    own step cannot be answered there (its reveal would give the truth first); after it, they show."""
    from tests.conftest import charts
    from ui.kit.i18n import Text

    teacher, code = live
    rid = _self_paced_run(teacher)
    lesson = lessons.get(LESSON)
    step = next(s for s in lesson.steps if s.question is not None and s.question.kind == "bank")
    s = app_test("home", {"lesson": rid, "lang": "en"})
    s.button(key="FormSubmitter:_lsn_start_form-Start the lesson").click().run()
    for _ in range(step.index):
        s.button(key="_lsn_next").click().run()
    s.run()
    assert not s.exception, [e.value for e in s.exception]
    note = Text("predict", "en")("ui.asked_in_class")
    assert any(note in i.value for i in s.info), [i.value for i in s.info]
    assert charts(s) == [], "a figure showed before the lesson question was answered"
    predict_box = Text("predict", "en")("ui.title", n=1).split("(")[0].strip()
    assert not [e for e in s.get("expander") if predict_box in str(e.proto.label)]
    q = lessons.step_question(step, "en")
    key = f"_lsn_in_{rid}_{step.index}"
    if q["kind"] == "choice":
        s.radio(key=key).set_value(q["truth"] or q["options"][0])
    else:
        s.number_input(key=key).set_value(q["truth"])
    s.button(key=f"_lsn_send_{rid}_{step.index}").click().run()
    assert not s.exception
    assert not any(note in i.value for i in s.info)
    assert charts(s), "the page's figures show once the lesson question is answered"
