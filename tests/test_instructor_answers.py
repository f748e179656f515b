"""Worked answers: one per question in both languages; hidden from students, shown to instructors,
released to the class by the instructor or by a preset flag."""

from __future__ import annotations

import re
import shutil

import pytest

from tests.conftest import STEMS, app_test
from ui.teaching import answers as ans
from ui.teaching import instructor
from ui.kit.i18n import Text
from ui.kit.spec import DEFAULT_PARAMS_FILE, PARAMS_ENV

from tests._instructor import KEY, TEST_COOKIES, cookie

PAGE = "two_point"


def _n_questions(t: Text) -> int:
    return len(re.findall(r"(?m)^\d+\. ", t("questions.body"))) if t.has("questions.body") else 0


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("stem", STEMS)
def test_one_answer_per_question(stem, lang):
    t = Text(stem, lang)
    n = _n_questions(t)
    got = ans.answers(t)
    assert len(got) == n, f"{lang}/{stem}: {n} questions, {len(got)} answers"
    assert all(len(a) > 40 or "$" in a for a in got)  # real answers, not placeholders
    assert not t.has(f"answers.q{n + 1}")


def _answer_expanders(at) -> list[str]:
    return [e.label for e in at.expander if re.fullmatch(r"(Answer|答案) \d+", e.label or "")]


@pytest.fixture
def key_env(monkeypatch):
    monkeypatch.setenv(instructor.KEY_ENV, KEY)
    yield
    ans.release(PAGE, False)


def _as_instructor(at):
    at.session_state[TEST_COOKIES] = cookie()
    at.run()
    return at


def test_hidden_from_students_shown_to_instructors_and_released(key_env):
    student = app_test(PAGE)
    assert not student.exception
    assert _answer_expanders(student) == []
    assert not [w for w in student.toggle if w.key == f"_release_{PAGE}"]

    teacher = _as_instructor(app_test(PAGE))
    n = _n_questions(Text(PAGE, "en"))
    assert _answer_expanders(teacher) == [f"Answer {i}" for i in range(1, n + 1)]
    body = [m.value for m in teacher.markdown]
    assert any("convex" in b and "cosh" in b for b in body)  # the first answer's text is on the page
    assert any("Only instructors" in c.value for c in teacher.caption)

    # a forged instructor flag (wrong hash) shows nothing
    forged = app_test(PAGE)
    forged.session_state[TEST_COOKIES] = cookie("a cookie signed with another key, Zx81")
    forged.run()
    assert _answer_expanders(forged) == []

    teacher.toggle(key=f"_release_{PAGE}").set_value(True).run()
    assert ans.released(PAGE)
    student.run()
    assert _answer_expanders(student) == [f"Answer {i}" for i in range(1, n + 1)]
    teacher.toggle(key=f"_release_{PAGE}").set_value(False).run()
    student.run()
    assert _answer_expanders(student) == []


def test_preset_flag_shows_answers_in_chinese(tmp_path, monkeypatch):
    monkeypatch.delenv(instructor.KEY_ENV, raising=False)
    f = tmp_path / "params.toml"
    shutil.copy(DEFAULT_PARAMS_FILE, f)
    with open(f, "a", encoding="utf-8") as fh:
        fh.write(
            '\n[two_point.presets.solutions]\ntitle = { en = "With answers", zh = "附答案" }\n'
            "values = { beta = 1.0 }\nanswers = true\n"
        )
    monkeypatch.setenv(PARAMS_ENV, str(f))
    at = app_test(PAGE, {"preset": "solutions", "lang": "zh"})
    assert not at.exception and not at.error
    n = _n_questions(Text(PAGE, "zh"))
    assert _answer_expanders(at) == [f"答案 {i}" for i in range(1, n + 1)]
    plain = app_test(PAGE, {"preset": "hot", "lang": "zh"})
    assert _answer_expanders(plain) == []


def test_a_read_begun_before_the_switch_does_not_undo_it(monkeypatch):
    """A student's thread reads the store (old state) while the teacher releases the page; that
    read ends after the release. The teacher's own next read must see the release (else the switch
    springs back off on the teacher's screen and stays so: seen in a loaded browser rehearsal)."""
    import threading

    from ui.teaching import class_store as cs

    store = cs.MemoryStore()
    began, finish = threading.Event(), threading.Event()
    real = store.released_pages

    def slow_read():
        old = real()  # the state before the switch ...
        began.set()
        finish.wait(10)  # ... delivered after it
        return old

    monkeypatch.setattr(cs, "get_store", lambda: store)
    monkeypatch.setattr(ans, "_seen", {"at": -1e9, "pages": frozenset(), "gen": 0})
    monkeypatch.setattr(store, "released_pages", slow_read)
    got = {}
    student = threading.Thread(target=lambda: got.setdefault("student", ans.released_pages()))
    student.start()
    assert began.wait(10)
    monkeypatch.setattr(store, "released_pages", real)
    ans.release(PAGE, True)
    finish.set()
    student.join(10)
    assert got["student"] == {PAGE}, "the late read returned the state before the switch"
    assert ans.released(PAGE), "the late read overwrote the switch"
    ans.release(PAGE, False)
    assert not ans.released(PAGE)
