"""Lesson files (ui/teaching/lessons.py): the shipped lessons load without a problem and the truth of
every question is the one an independent computation gives."""
from __future__ import annotations

import math

import numpy as np
import pytest

from ui.teaching import lessons as L

SHIPPED = sorted(p.stem for p in L.BUILTIN_DIR.glob("*.toml"))


def _shipped(lid: str) -> L.Lesson:
    path = L.BUILTIN_DIR / f"{lid}.toml"
    return L.parse(path.read_text(encoding="utf-8"), str(path), builtin=True)


@pytest.mark.parametrize("lid", SHIPPED)
def test_shipped_lessons_have_no_problems(lid):
    lesson = _shipped(lid)
    assert lesson.problems == ()
    assert lesson.id == lid and 6 <= len(lesson.steps) <= 10
    assert len({s.page for s in lesson.steps}) >= 3
    for s in lesson.steps:
        for text in (s.instruction, s.note):
            assert set(text) == {"en", "zh"} and all(v.strip() for v in text.values())
    kinds = {s.question.kind for s in lesson.steps if s.question}
    assert kinds == {"bank", "number", "choice", "text"}


def test_attention_first_truths():
    s = _shipped("attention_first").steps
    q = [L.step_question(x, "en") for x in s]
    # 1: which half-angle is smaller at the end of the window (tau = 5): USA's (Z/n >= 1)
    assert q[0]["truth"] == "usa"
    # 2: the SA rate at tau = 0, beta = 1, theta = 1, from the closed form
    rate = -math.sin(2.0) / (1 + math.exp(1.0 * (1 - math.cos(2.0))))
    assert abs(q[1]["truth"] - rate) <= 1e-4 * abs(rate)
    # 3: the pair's energy -(e^b + e^{b cos 2t})/(4b) at beta = 2.5, theta = 1
    e = -(math.exp(2.5) + math.exp(2.5 * math.cos(2.0))) / (4 * 2.5)
    assert abs(q[2]["truth"] - e) <= 1e-12 * abs(e)
    assert q[3]["kind"] == "text" and q[3]["truth"] is None and q[3]["step"] is None
    # 7: n evenly spaced points are at pi/(2n) from the uniform measure
    assert abs(q[6]["truth"] - math.pi / 64) <= 1e-12
    # 8: the stability constant ((1+b) + (1+2b)e^{2b})/(1-dt) at b = 1, dt = 0.1
    c = (2 + 3 * np.exp(2.0)) / 0.9
    assert abs(q[7]["truth"] - c) <= 1e-3 * c
    assert [x["lesson_step"] for x in q] == list(range(len(s)))
