"""The instructor's Lessons page (ui/teaching/lesson_editor.py) under AppTest: students never reach
it; a lesson previewed as students see it (teacher texts literally, notes and answers only here);
a built-in lesson copied into the instructor's folder, edited in place (reorder, delete, the current
view added, a question written), saved with backup and undo, a file edited meanwhile not overwritten."""

from __future__ import annotations

import shutil

import pytest

from tests._instructor import KEY, router_only, signed_in  # noqa: F401
from tests.conftest import app_test, open_page
from ui.teaching import instructor
from ui.teaching import lesson_editor as E
from ui.teaching import lessons as L
from ui.teaching import params_file as pf


@pytest.fixture(autouse=True)
def own(tmp_path, monkeypatch, router_only):  # noqa: F811
    monkeypatch.setenv(L.LESSONS_ENV, str(tmp_path / "lessons"))
    monkeypatch.setenv(instructor.KEY_ENV, KEY)
    return tmp_path / "lessons"


def _texts(at) -> str:
    return "\n".join(x.value for x in at.text)


def _choose(at, path) -> None:
    at.selectbox(key=E._SEL).set_value(str(path)).run()
    assert not at.exception


def test_students_never_reach_the_lessons_page():
    at = app_test("home")
    assert E.URL_PATH not in [info.get("url_pathname") for info in at._registered_pages.values()]
    teacher = signed_in("home")
    hashes = [h for h, info in teacher._registered_pages.items() if info.get("url_pathname") == E.URL_PATH]
    assert len(hashes) == 1
    at._page_hash = hashes[0]  # what a browser sends for /instructor_lessons
    at.run()
    assert not at.exception and not [t for t in at.title if t.value == "Lessons"]


def test_preview_as_students_see_it_with_notes_and_answers_for_the_teacher(own):
    at = signed_in(E.URL_PATH)
    assert [t.value for t in at.title] == ["Lessons"] and not at.exception
    _choose(at, L.BUILTIN_DIR / "attention_first.toml")
    lesson = L.get("attention_first")
    text = _texts(at)
    assert lesson.steps[0].instruction["en"] in text and lesson.steps[0].note["en"] in text
    assert "USA (unnormalised attention)" in text  # the bank question's computed answer
    at.radio(key=f"_le_prev:{lesson.source}").set_value(1).run()
    text = _texts(at)
    assert lesson.steps[1].question.prompt["en"] in text and "-0.1776" in text
    assert "Counted right within 2 %." in [c.value for c in at.caption]  # its tolerance
    at.radio(key=f"_le_prev:{lesson.source}").set_value(5).run()
    assert "Nothing: its hypothesis does not hold" in _texts(at)


def test_copy_edit_save_undo_and_a_conflict(own):
    at = signed_in("two_point")
    at.slider(key="beta").set_value(2.0).run()
    open_page(at, E.URL_PATH)
    at.run()
    _choose(at, L.BUILTIN_DIR / "depth_width.toml")
    at.text_input(key="_le_copy_id").input("dw_ours").run()
    at.button(key="_le_copy").click().run()
    path = own / "dw_ours.toml"
    assert path.exists() and not at.exception
    copy = path.read_text(encoding="utf-8")
    assert 'id = "dw_ours"' in copy and copy.count("#") == (L.BUILTIN_DIR / "depth_width.toml").read_text().count("#")
    assert at.selectbox(key=E._SEL).value == str(path)  # the copy is the lesson shown
    assert L.get("dw_ours").problems == () and not L.get("dw_ours").builtin
    gen = lambda: at.session_state[E._GEN] if E._GEN in at.session_state else 0  # noqa: E731
    # reorder: step 1 down; delete the last step; add the view last seen (two_point, beta = 2)
    at.button(key=f"_le:{gen()}:0:down").click().run()
    at.button(key=f"_le:{gen()}:8:del").click().run()
    at.button(key="_le_add_view").click().run()
    work = at.session_state[E._WORK]["text"]
    steps = L.parse(work, "dw_ours.toml").steps
    assert [s.page for s in steps[:2]] == ["depth_sum", "depth_sum"]
    assert steps[0].params["alpha"] == 0.25 and steps[1].params["alpha"] == 0.5
    assert len(steps) == 9 and steps[-1].page == "two_point" and steps[-1].values()["beta"] == 2.0
    # the new step gets an own question, typed with Markdown, HTML and LaTeX in it
    k = f"_le:{gen()}:8"
    at.text_area(key=f"{k}:instruction:en").input("Drag **β** <b>now</b> $x$").run()
    at.selectbox(key=f"{k}:kind").set_value("text").run()
    at.text_input(key=f"{k}:prompt:en").input("Why [this](http://example.org)?")
    at.text_input(key=f"{k}:prompt:zh").input("为什么？").run()
    at.button(key=f"{k}:apply").click().run()
    assert not at.exception
    assert not at.button(key="_le_save").disabled, [c.value for c in at.code]
    at.button(key="_le_save").click().run()
    saved = L.get("dw_ours")
    assert saved.problems == () and saved.steps[-1].question.kind == "text"
    assert saved.steps[-1].instruction["en"] == "Drag **β** <b>now</b> $x$"
    assert pf.backup_path(path).read_text(encoding="utf-8") == copy
    assert [c for c in path.read_text().splitlines() if c.startswith("#")] == [
        c for c in copy.splitlines() if c.startswith("#")
    ]
    # the preview shows the teacher's text literally (st.text), never as Markdown
    last = saved.steps[-1]
    at.radio(key=f"_le_prev:{saved.source}").set_value(8).run()
    assert "Drag **β** <b>now</b> $x$" in _texts(at) and "Why [this](http://example.org)?" in _texts(at)
    assert not any("<b>now</b>" in m.value or "example.org" in m.value for m in at.markdown)
    assert L.step_question(last, "en")["step"] is None
    # undo puts the copy back; the file edited by hand meanwhile is never overwritten
    at.button(key="_le_undo").click().run()
    assert path.read_text(encoding="utf-8") == copy
    at.button(key=f"_le:{gen()}:0:del").click().run()
    path.write_text(copy.replace("Depth and width", "Edited by hand"), encoding="utf-8")
    at.run()
    assert any("changed on disk" in w.value for w in at.warning)
    at.button(key="_le_save").click().run()
    assert "Edited by hand" in path.read_text(encoding="utf-8")
    assert any("Not saved" in e.value for e in at.error)


def test_an_invalid_edit_cannot_be_saved_and_names_the_step(own):
    own.mkdir()
    shutil.copy(L.BUILTIN_DIR / "attention_first.toml", own / "attention_first.toml")
    at = signed_in(E.URL_PATH)
    _choose(at, own / "attention_first.toml")
    k = "_le:0:6"
    at.selectbox(key=f"{k}:kind").set_value("choice").run()  # step 7: a choice with one option only
    at.text_input(key=f"{k}:prompt:en").input("Pick")
    at.text_input(key=f"{k}:prompt:zh").input("选")
    at.text_area(key=f"{k}:options:en").input("only one")
    at.text_area(key=f"{k}:options:zh").input("唯一").run()
    at.button(key=f"{k}:apply").click().run()
    msgs = "\n".join(c.value for c in at.code)
    assert "attention_first.toml: step 7: question: options: give 2 to 8" in msgs
    assert at.button(key="_le_save").disabled
    before = (own / "attention_first.toml").read_bytes()
    at.button(key="_le_save").proto.disabled = False  # a forged click writes nothing
    at.button(key="_le_save").click().run()
    assert (own / "attention_first.toml").read_bytes() == before


@pytest.mark.parametrize("lang", ["zh"])
def test_the_page_in_chinese(own, lang):
    at = signed_in(E.URL_PATH, {"lang": lang})
    assert [t.value for t in at.title] == ["课程"] and not at.exception
    assert any("第 1 步，共 8 步" in s.value for s in at.subheader)


SHAPES = {  # own lesson files of every broken shape: the page shows their problems and stays usable
    "not_toml": "[lesson\ntitle = 'x'\n",
    "deep": "x = " + "[" * 3000 + "]" * 3000 + "\n",
    "steps_table": "[lesson]\ntitle = 'x'\n[step]\npage = 'two_point'\n",
    "question_string": "[lesson]\ntitle = 'x'\n[[step]]\npage = 'two_point'\nquestion = 'why?'\n",
    "everything_wrong": "lesson = 3\n[[step]]\npage = 5\nparams = [1]\n[[step]]\nquestion = {kind = 'choice', "
    "options = 'ab', correct = true}\n",
    "binary": "\x00\x01\ufffe",
    "markdown_page": "[lesson]\ntitle = '**T** [x](http://e.org)'\n[[step]]\npage = '**bad** [x](http://e.org) $y$'\n",
}


def test_broken_own_lessons_are_listed_with_their_problems_and_the_page_stays_usable(own):
    own.mkdir()
    for name, text in SHAPES.items():
        (own / f"{name}.toml").write_text(text, encoding="utf-8")
    (own / "latin1.toml").write_bytes("title = 'caf\xe9'".encode("latin-1"))  # "latin1.toml: not UTF-8 text"
    at = signed_in(E.URL_PATH)
    for name in [*SHAPES, "latin1"]:
        _choose(at, own / f"{name}.toml")
        assert any(c.value.startswith(f"{name}.toml: ") for c in at.code), (name, [c.value[:80] for c in at.code])
        assert not at.exception, name
        if name == "markdown_page":  # a typed value in a label (labels render Markdown): one inert code span
            assert any(x.label.endswith("`**bad** [x](http://e.org) $y$`") for x in at.expander)
        # the Edit tab is drawn in the same run: each of its edits leaves the page usable
        for b in at.button:
            if b.key and b.key.startswith("_le:") and b.key.endswith((":down", ":del")) and not b.disabled:
                b.click().run()
                assert not at.exception, (name, b.key)
                break
        assert at.button(key="_le_save").disabled  # a lesson with problems is never written
        # a typed value in a label (they render Markdown) is one inert code span
        assert not any("http://e.org" in x.label and "`" not in x.label for x in at.expander), name


def test_new_lesson_from_the_current_view_and_upload(own):
    at = signed_in("measures")
    at.slider(key="n").set_value(64).run()
    open_page(at, E.URL_PATH)
    at.run()
    at.text_input(key="_le_new_id").input("week3")
    at.text_input(key="_le_new_title").input("Week 3 <b>").run()
    at.button(key="_le_create").click().run()
    assert not at.exception
    mine = L.get("week3")
    assert mine is not None and not mine.builtin and mine.problems == () and mine.title["zh"] == "Week 3 <b>"
    assert [s.page for s in mine.steps] == ["measures"] and mine.steps[0].values()["n"] == 64
    assert at.selectbox(key=E._SEL).value == mine.source
    at.button(key="_le_create").click().run()  # the same name again: refused, the file kept
    assert any("already have a lesson named week3" in e.value for e in at.error)
    # an upload with a problem: named by the uploaded file's name, nothing written
    good = (
        (L.BUILTIN_DIR / "attention_first.toml")
        .read_text(encoding="utf-8")
        .replace('id = "attention_first"', 'id = "week3"')
    )
    bad = good.replace("beta = 2.5", "beta = 99.0", 1)
    at.file_uploader(key="_le_upload_0").upload("from_colleague.toml", bad.encode(), "application/toml").run()
    assert any(c.value.startswith("from_colleague.toml: step 3: params.beta: 99.0 is outside") for c in at.code)
    assert not [b for b in at.button if b.key == "_le_upload_save"]
    at.file_uploader(key="_le_upload_0").upload("from_colleague.toml", good.encode(), "application/toml").run()
    before = (own / "week3.toml").read_text(encoding="utf-8")
    at.button(key="_le_upload_save").click().run()  # replaces my week3, the old one is the backup
    assert not at.exception
    assert L.get("week3").title["en"] == "Attention moves tokens: a first lesson" and len(L.get("week3").steps) == 8
    assert pf.backup_path(own / "week3.toml").read_text(encoding="utf-8") == before
