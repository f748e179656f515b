"""Take-home copies of a lesson (ui/teaching/lesson_export.py): the whole lesson as one notebook that
runs and reproduces every step's page numbers, and the printable handout (one step per page, answers
only in the instructor's copy, a teacher's text shown literally)."""

from __future__ import annotations

import html
import re

import nbformat
import pytest

from tests.conftest import ROOT
from tests.test_notebook import CELL_TIMEOUT, _close, kernel_env  # noqa: F401
from ui.kit import notebook as nbk
from ui.teaching import lesson_export as X
from ui.teaching import lessons as L

SHIPPED = sorted(p.stem for p in L.BUILTIN_DIR.glob("*.toml"))


def _numbers_per_step(nb) -> list[dict]:
    out = []
    for cell in nb.cells:
        for o in cell.get("outputs", ()):
            for line in "".join(o.get("text", "")).splitlines():
                if line.startswith(nbk.NUMBERS_TAG):
                    out.append(__import__("json").loads(line[len(nbk.NUMBERS_TAG) :]))
    return out


@pytest.mark.parametrize("lid", SHIPPED)
def test_the_lesson_notebook_runs_and_each_section_reproduces_its_page(lid, kernel_env, monkeypatch):  # noqa: F811
    from nbclient import NotebookClient

    for k, v in kernel_env.items():
        monkeypatch.setenv(k, v)
    lesson = L.get(lid)
    nb = nbformat.from_dict(X.notebook(lesson, "zh"))
    nbformat.validate(nb)
    setup = [c for c in nb.cells if c.cell_type == "code" and "import plotly.graph_objects" in c.source]
    assert len(setup) == 1  # the set-up once, before the first section
    statements = [
        c
        for c in nb.cells
        if c.cell_type == "markdown" and c.source.startswith("## ") and not c.source.startswith("## 第 ")
    ]
    assert len(statements) == len({s.page for s in lesson.steps}) * 2  # each page's two sections, once
    NotebookClient(
        nb, timeout=CELL_TIMEOUT, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
    ).execute()
    got = _numbers_per_step(nb)
    steps = [s for s in lesson.steps if nbk.recipe(s.page) is not None]
    assert len(got) == len(steps) == len(lesson.steps)
    for s, numbers in zip(steps, got):
        rec = nbk.recipe(s.page)
        want = {k: float(v) for k, v in rec.expected(s.values()).items()}
        bad = {
            k: (numbers.get(k), want[k])
            for k in want
            if k not in numbers or not _close(numbers[k], want[k], rec.rtol, rec.atol)
        }
        assert not bad, f"{lid} step {s.index + 1} ({s.page}): notebook vs page {bad}"
    from ui.kit.i18n import Text

    heads = [c.source.split("\n")[0] for c in nb.cells if c.cell_type == "markdown" and c.source.startswith("## ")]
    n = len(lesson.steps)
    assert [h for h in heads if h.startswith("## 第 ")] == [
        f"## 第 {k} 步，共 {n} 步：{Text(s.page, 'zh')('title')}" for k, s in enumerate(lesson.steps, 1)
    ]


def test_teacher_text_is_literal_in_the_notebook_and_the_handout():
    evil = "**b** <img src=x onerror=alert(1)> $\\\\alpha$ [l](http://e.org) `c`"
    text = f"""[lesson]\ntitle = "T"\n[[step]]\npage = "measures"\ninstruction = "{evil}"\nnote = "secret note"
[step.question]\nkind = "choice"\nprompt = "{evil}"\noptions = ["<b>x</b>", "y"]\ncorrect = 2\n"""
    lesson = L.parse(text, "t.toml")
    assert lesson.problems == ()
    nb = X.notebook(lesson, "en")
    md = "\n".join(c["source"] for c in nb["cells"] if c["cell_type"] == "markdown")
    typed = [c["source"].split(".** ", 1)[1] for c in nb["cells"] if "onerror" in c["source"]]
    assert len(typed) == 2  # the instruction and the question
    for cell in typed:  # every Markdown character of the typed text escaped
        assert not re.search(r"(?<!\\)[<\[\]`*$]", cell.split("\n")[0]), cell
    assert "\\<img" in md and "\\$" in md
    # every escaped character comes back: the Markdown shows exactly the typed text
    typed = lesson.steps[0].instruction["en"]
    assert re.sub(r"\\(.)", r"\1", X._md_literal(typed)) == typed
    for teacher in (False, True):
        h = X.handout(lesson, "en", teacher=teacher)
        assert "<img" not in h and html.escape(lesson.steps[0].instruction["en"], quote=True) in h
        assert "&lt;b&gt;x&lt;/b&gt;" in h and ("secret note" in h) == teacher


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_handout_one_step_per_page_answers_only_in_the_instructors_copy(lang):
    lesson = L.get("attention_first")
    student = X.handout(lesson, lang, teacher=False, base="http://127.0.0.1:8501/")
    teacher = X.handout(lesson, lang, teacher=True, base="http://127.0.0.1:8501/")
    n = len(lesson.steps)
    assert student.count('<section class="sheet">') == n and teacher.count('<section class="sheet">') == n + 1
    assert "break-before: page" in student
    # the free-text question leaves space to write, the choices are listed, the numbers have a line
    assert student.count('class="write"') == 1 and student.count('<ol class="options">') == 3
    # each step's link opens exactly its view, in the handout's language
    assert "http://127.0.0.1:8501/two_point?preset=" not in student
    link = "http://127.0.0.1:8501/measures?n=32&amp;beta=1&amp;depth=4&amp;dt=0.1&amp;seed=0&amp;H=256"
    assert f"{link}&amp;lang={lang}" in student
    # answers: computed values only in the instructor's copy
    c = f"{(2 + 3 * 2.718281828459045**2) / 0.9:.4g}"
    assert "26.85" in teacher and "26.85" not in student and c == "26.85"
    assert "0.04909" in teacher and "0.04909" not in student
    want = " (counted right within 2 %)" if lang == "en" else "（误差在 2 % 以内判为正确）"
    unit = "rad per unit depth" if lang == "en" else "弧度/单位深度"
    assert f"-0.1776 {unit}{want}" in teacher  # an own number: its value, unit and tolerance
    for step in lesson.steps:
        if step.note:
            assert html.escape(step.note[lang], quote=True) in teacher
            assert html.escape(step.note[lang], quote=True) not in student


def test_tolerances_and_the_pages_formulas_read_as_text_in_print():
    lesson = L.get("depth_width")
    h = X.handout(lesson, "en", teacher=True)
    assert "$" not in h  # the page's LaTeX as text: nothing to render in print
    assert "The exponent p with Var S_2L = 2^p Var S_L" in h
    assert "0.908 exponent (counted right within ± 0.05)" in h
    t = X.Text("lessons", "en")
    assert X.tolerance({"rtol": 0.25, "atol": 0.002}, t) == "25 % or ± 0.002"
    assert X.tolerance({"rtol": 0.0, "atol": 0.0}, t) == "exactly"
