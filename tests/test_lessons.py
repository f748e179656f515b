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
    import tomllib

    raw = tomllib.loads((L.BUILTIN_DIR / f"{lid}.toml").read_text(encoding="utf-8"))
    for s in raw["step"]:  # written in both languages (a teacher's own lesson may have one)
        for key in ("instruction", "note"):
            assert set(s[key]) == {"en", "zh"} and all(v.strip() for v in s[key].values())
        q = s.get("question", {})
        for key in ("prompt", "unit"):
            assert key not in q or set(q[key]) == {"en", "zh"}
        assert all(set(o) == {"en", "zh"} for o in q.get("options", []))
    assert set(raw["lesson"]["title"]) == set(raw["lesson"]["description"]) == {"en", "zh"}
    kinds = {s.question.kind for s in lesson.steps if s.question}
    assert kinds == {"bank", "number", "choice", "text"}


def test_attention_first_truths():
    s = _shipped("attention_first").steps
    q = [L.step_question(x, "en") for x in s]
    # 1: which half-angle is smaller at the end of the window (tau = 5): the two scalar equations of
    # docs/constructions.md integrated here by SciPy (not the page's solver): USA's
    from scipy.integrate import solve_ivp

    sa = solve_ivp(
        lambda t, y: -np.sin(2 * y) / (1 + np.exp(1.0 * (1 - np.cos(2 * y)))), (0, 5), [1.0], rtol=1e-10, atol=1e-12
    ).y[0, -1]
    usa = solve_ivp(
        lambda t, y: -0.5 * np.exp(1.0 * np.cos(2 * y)) * np.sin(2 * y), (0, 5), [1.0], rtol=1e-10, atol=1e-12
    ).y[0, -1]
    assert usa < sa * (1 - 1e-3) and q[0]["truth"] == "usa"
    # 2: the SA rate at tau = 0, beta = 1, theta = 1, from the closed form
    rate = -math.sin(2.0) / (1 + math.exp(1.0 * (1 - math.cos(2.0))))
    assert abs(q[1]["truth"] - rate) <= 1e-4 * abs(rate)
    from sim import measures as ms
    from sim import two_point as tp

    h = 1e-5  # and sim's solution: a central difference of the half-angle around tau = h
    th = tp.half_angle(1.0, 1.0, np.array([0.0, 2 * h]), "SA")
    assert abs((th[1] - th[0]) / (2 * h) - q[1]["truth"]) <= 1e-4 * abs(rate)
    # 3: the pair's energy -(e^b + e^{b cos 2t})/(4b) at beta = 2.5, theta = 1
    e = -(math.exp(2.5) + math.exp(2.5 * math.cos(2.0))) / (4 * 2.5)
    assert abs(q[2]["truth"] - e) <= 1e-12 * abs(e)
    assert q[3]["kind"] == "text" and q[3]["truth"] is None and q[3]["step"] is None
    # 5: the 64 tokens of the 80° cap after 100 layers of dt = 0.1 (beta = 2, A = V = I), by sim's plain
    # NumPy layer map: the largest angle between two of them below 0.01 rad ("one point", the page's rule)
    from sim.attention.reference import simulate_reference
    from sim import hemisphere as hs

    v = s[4].values()
    Z = simulate_reference(
        hs.cap_uniform(v["n"], v["d"], math.radians(v["cap"]), seed=v["seed"]),
        v["beta"],
        v["dt"],
        round(v["horizon"] / v["dt"]),
    )[-1]
    diam = float(np.arccos(np.clip(np.min(Z @ Z.T), -1, 1)))
    assert diam < 1e-2 and q[4]["truth"] == "one"
    # 6: "its hypothesis does not hold": no open hemisphere holds these 64 starting tokens. The margin
    # max_w min_i <w, z_i> from sim's linear programme is negative, and no token direction does better

    assert q[5]["truth"] == "c" and "hypothesis" in q[5]["labels"]["en"]["c"]
    v = s[5].values()
    Z0 = hs.cap_uniform(v["n"], v["d"], math.radians(v["cap"]), seed=v["seed"])
    assert hs.hemisphere_direction(Z0)[1] < -0.1
    assert np.max(np.min(Z0 @ Z0.T, axis=1)) < 0  # a simple check: no token's own hemisphere holds all
    # 7: n evenly spaced points are at pi/(2n) from the uniform measure
    assert abs(q[6]["truth"] - math.pi / 64) <= 1e-12
    # 8: the stability constant ((1+b) + (1+2b)e^{2b})/(1-dt) at b = 1, dt = 0.1
    c = (2 + 3 * np.exp(2.0)) / 0.9
    assert abs(ms.stability_constant(1.0, 0.1) - c) <= 1e-12 * c
    assert abs(q[7]["truth"] - c) <= 1e-3 * c
    assert round(c * 4) == 107 and f"{math.pi / 64:.3f}" == "0.049"  # the notes' e^{107} and 0.049
    assert [x["lesson_step"] for x in q] == list(range(len(s)))


def test_depth_width_truths():
    from sim import depth_sum as ds
    from sim import nonnormal as nn
    from sim import width as W
    from pages.width import views as WV

    s = _shipped("depth_width").steps
    q = [L.step_question(x, "en") for x in s]
    # Var S_L = sigma^2 L^{-2a}(L + L(L-1)rho): 1 at a = 1/2; 8 at a = 1/4 (the teacher's value)
    assert abs(q[0]["truth"] - 1.0) <= 1e-12
    assert q[1]["truth"] == 8.0 and abs(ds.variance(0.25, 64, 1.0, 0.0) - 8.0) <= 1e-12
    assert abs(64**0.5 - q[1]["truth"]) <= 1e-12
    # the growth exponent with rho = 0.1: log2((1 + 127 rho)/(1 + 63 rho))
    assert abs(q[2]["truth"] - math.log2(13.7 / 7.3)) <= 1e-12
    # (1 + 1/L)^L -> e: option 2 ("e")
    assert q[3]["truth"] == "b" and q[3]["labels"]["en"]["b"] == "e"
    assert abs((1 + 1 / 64) ** 64 - math.e) < 0.05 and f"{(1 + 1 / 64) ** 64:.2f}" == "2.70"  # the note's value
    # the lazy parameter slope: the same sweep run here through sim/ and fitted by NumPy
    xs, ys = W.dataset("three_points")
    sw = W.width_sweep(WV.SWEEP_NS, 4.0, WV.sweep_step(4.0, xs.size), 0, xs, ys, start="paired")
    fit = np.polyfit(np.log(sw["N"]), np.log(sw["lazy_param"]), 1)[0]
    assert abs(q[4]["truth"] - fit) <= 1e-9 and -0.65 < fit < -0.35
    assert q[5]["truth"] == "c"
    # the peak of ||e^{sA}||: (|M|/2)(1 + s*) e^{-s*}, s* = sqrt(1 - 4/M^2); and a dense maximum
    ss = math.sqrt(1 - 4 / 36)
    assert abs(q[6]["truth"] - 3 * (1 + ss) * math.exp(-ss)) <= 1e-9
    grid = np.linspace(0, 5, 200001)
    dense = np.max(np.exp(-grid) * (3 * grid + np.sqrt(1 + (3 * grid) ** 2)))
    assert abs(q[6]["truth"] - dense) <= 1e-8
    # ||e^{A} e2|| at M = 6: sqrt(37)/e, and sim's response; the teacher's 2.2377 within 1e-4
    r = np.linalg.norm(nn.response(6.0, np.array([1.0]), np.array([0.0, 1.0])))
    assert abs(r - math.sqrt(37) / math.e) <= 1e-12
    assert abs(q[7]["truth"] - r) <= 1e-4 * r
    assert q[8]["kind"] == "text" and q[8]["truth"] is None


# --------------------------------------------------------------------------- validation
GOOD = """[lesson]
id = "t"
title = { en = "T", zh = "T" }

[[step]]
page = "two_point"
params = { beta = 2.0 }

[[step]]
page = "measures"
params = { n = 16 }
[step.question]
kind = "bank"
bank = "equispaced"
"""

BROKEN = {  # a second step as written -> what its message must name
    'page = "nowhere"': ("step 2: page:", 1),
    'page = "two_point"\nparams = { beta = 99.0 }': ("step 2: params.beta: 99.0 is outside", 1),
    'page = "two_point"\nparams = { beta = 1.05 }': ("step 2: params.beta: 1.05 is not on the slider's steps", 1),
    'page = "two_point"\nparams = { gamma = 1.0 }': ("step 2: params.gamma: unknown parameter", 1),
    'page = "two_point"\nparams = { beta = "hot" }': ("step 2: params.beta:", 1),
    'page = "two_point"\nparams = 3': ("step 2: params: expected a table", 1),
    'page = "two_point"\npreset = "nope"': ("step 2: preset: 'nope' is not a preset", 1),
    'page = "two_point"\ncolour = 1': ("step 2: colour: unknown key", 2),
    'page = "two_point"\ninstruction = 5': ("step 2: instruction: expected a string", 2),
    'page = "two_point"\nnote = { en = "x", fr = "y" }': ("step 2: note.fr: unknown language", 2),
    'page = "two_point"\nquestion = { kind = "essay" }': ("step 2: question: kind: 'essay' is not one of", 2),
    'page = "two_point"\nquestion = { kind = "bank", bank = "nope" }': ("step 2: question: bank: 'nope'", 2),
    'page = "two_point"\nquestion = { kind = "number", prompt = "p" }': ("step 2: question: value: expected", 2),
    'page = "two_point"\nquestion = { kind = "number", prompt = "p", value = 1, tol = 0 }': (
        "step 2: question: tol:",
        2,
    ),
    'page = "two_point"\nquestion = { kind = "choice", prompt = "p", options = ["a"] }': (
        "step 2: question: options: give 2 to 8",
        2,
    ),
    'page = "two_point"\nquestion = { kind = "choice", prompt = "p", options = ["a", "b"], correct = 3 }': (
        "step 2: question: correct:",
        2,
    ),
    'page = "two_point"\nquestion = { kind = "text" }': ("step 2: question: prompt: missing", 2),
    'page = "two_point"\nquestion = { kind = "text", prompt = "p", value = 2 }': (
        "step 2: question: value: unknown key",
        2,
    ),
}


def _with_second(step: str) -> str:
    return f"""[lesson]\nid = "t"\ntitle = "T"\n\n[[step]]\npage = "two_point"\n\n[[step]]\n{step}\n
[[step]]\npage = "nonnormal"\nparams = {{ M = 3.0 }}\n"""


def test_a_good_lesson_has_no_problems_and_its_views_open_exactly():
    from ui.kit.page import view_values

    lesson = L.parse(GOOD, "t.toml")
    assert lesson.problems == () and [s.page for s in lesson.steps] == ["two_point", "measures"]
    assert lesson.title == {"en": "T", "zh": "T"}
    s = lesson.steps[0]
    assert s.query()["beta"] == "2" and s.values()["beta"] == 2.0
    assert view_values(L._resolved("two_point"), s.query()) == s.values()
    assert s.values()["theta0"] == L._resolved("two_point").params["theta0"].default
    q = L.step_question(lesson.steps[1], "zh")
    assert q["truth"] == pytest.approx(math.pi / 32, rel=1e-12) and q["step"] == "equispaced"
    assert L.step_question(s, "en") is None


@pytest.mark.parametrize("step", BROKEN)
def test_each_problem_names_file_step_and_key_and_the_rest_runs(step):
    want, kept = BROKEN[step]
    lesson = L.parse(_with_second(step), "lessons/t.toml")
    assert any(p.startswith("t.toml: ") and want in p for p in lesson.problems), lesson.problems
    assert all(p.startswith("t.toml: ") for p in lesson.problems)
    # a broken view drops its step; a broken question or text only itself
    assert len(lesson.steps) == 2 + (kept == 2)
    assert lesson.steps[-1].page == "nonnormal" and lesson.steps[-1].index == len(lesson.steps) - 1
    if kept == 2:
        assert lesson.steps[1].question is None or "unknown key" in want


def test_whole_file_problems():
    for text, want in [
        ("[lesson\n", "not valid TOML"),
        ("x = " + "[" * 3000 + "]" * 3000, "not valid TOML"),
        ("step = 3", "step: expected [[step]] tables"),
        ("[other]\n", "[other]: unknown key"),
        ('[lesson]\nid = "Bad Id"\n', "lesson: id:"),
        ("[lesson]\n", "lesson: title: missing"),
        ("lesson = 1", "lesson: expected a table"),
        ("# " + "x" * L.MAX_BYTES, "bytes, at most"),
    ]:
        lesson = L.parse(text, "f.toml")
        assert any(want in p for p in lesson.problems), (text[:40], lesson.problems)
        assert lesson.steps == () and lesson.id in ("f", "lesson")
    many = "[lesson]\ntitle = 'x'\n" + '[[step]]\npage = "two_point"\n' * (L.MAX_STEPS + 5)
    lesson = L.parse(many, "f.toml")
    assert len(lesson.steps) == L.MAX_STEPS and any("at most 40" in p for p in lesson.problems)
    assert L.parse(None, "f.toml").problems  # not even text: a message, no exception


def test_own_questions_in_the_class_shape():
    text = _with_second(
        'page = "two_point"\nparams = { beta = 3.0 }\n[step.question]\nkind = "choice"\n'
        'prompt = { en = "<b>which</b> $x$", zh = "哪个" }\noptions = ["A", { en = "B", zh = "乙" }]\n'
        "correct = 2"
    )
    lesson = L.parse(text, "t.toml")
    assert lesson.problems == ()
    q = L.step_question(lesson.steps[1], "en")
    # the keys of the console's own question (ui.teaching.teacher._push_ask) and the lesson's index
    assert set(q) == {
        "stem",
        "step",
        "kind",
        "options",
        "prompt",
        "labels",
        "unit",
        "truth",
        "rtol",
        "atol",
        "digits",
        "values",
        "lesson_step",
    }
    assert q["step"] is None and q["prompt"]["en"] == "<b>which</b> $x$"  # kept as typed: shown literally
    assert q["options"] == ["a", "b"] and q["labels"]["zh"] == {"a": "A", "b": "乙"} and q["truth"] == "b"
    assert q["values"]["beta"] == 3.0 and q["lesson_step"] == 1
    import json

    assert json.loads(json.dumps(q)) == q  # the store keeps JSON


def test_loading_own_lessons_beside_the_builtin_ones(tmp_path, monkeypatch):
    import os
    import shutil

    monkeypatch.setenv(L.LESSONS_ENV, str(tmp_path))
    shutil.copy(L.BUILTIN_DIR / "depth_width.toml", tmp_path / "my_depth.toml")
    got = {x.id: x for x in L.load_all()}
    assert set(SHIPPED) <= set(got) and "my_depth" in got
    assert not got["my_depth"].builtin and got["depth_width"].builtin
    assert any("differs from the file name" in p for p in got["my_depth"].problems)  # its id says depth_width
    text = (tmp_path / "my_depth.toml").read_text(encoding="utf-8").replace('id = "depth_width"', 'id = "my_depth"')
    text = text.replace("Depth and width", "Depth and width, our version")
    (tmp_path / "my_depth.toml").write_text(text, encoding="utf-8")
    os.utime(tmp_path / "my_depth.toml", ns=(1, 10**18))  # a change the cache sees even within one tick
    mine = L.get("my_depth")
    assert mine.problems == () and mine.title["en"] == "Depth and width, our version"
    (tmp_path / "depth_width.toml").write_text(text.replace('id = "my_depth"', 'id = "depth_width"'), encoding="utf-8")
    assert not L.get("depth_width").builtin  # an own copy under the same id is the one opened
    monkeypatch.delenv(L.LESSONS_ENV)
    monkeypatch.setenv("APP_PARAMS_FILE", str(tmp_path / "class.toml"))
    assert L.own_dir() == tmp_path / "lessons"


# --------------------------------------------------------------------------- random shapes
WORDS = [
    "lesson",
    "step",
    "id",
    "title",
    "description",
    "page",
    "params",
    "preset",
    "instruction",
    "note",
    "question",
    "kind",
    "bank",
    "prompt",
    "unit",
    "value",
    "tol",
    "options",
    "correct",
    "en",
    "zh",
    "two_point",
    "measures",
    "beta",
    "n",
    "number",
    "choice",
    "text",
    "equispaced",
    "hot",
]


def _shapes():
    from hypothesis import strategies as hs

    scalars = hs.one_of(
        hs.booleans(),
        hs.integers(min_value=-(2**63), max_value=2**63 - 1),
        hs.floats(allow_nan=True, allow_infinity=True),
        hs.text(max_size=8),
        hs.sampled_from(WORDS),
    )
    values = hs.recursive(
        scalars,
        lambda inner: hs.one_of(
            hs.lists(inner, max_size=4), hs.dictionaries(hs.sampled_from(WORDS), inner, max_size=5)
        ),
        max_leaves=30,
    )
    step = hs.fixed_dictionaries(
        {"page": hs.sampled_from(["two_point", "measures", "x"])},
        optional={k: values for k in ("params", "preset", "instruction", "note", "question")},
    )
    return hs.fixed_dictionaries({}, optional={"lesson": values, "step": hs.one_of(values, hs.lists(step, max_size=4))})


def test_random_shapes_never_raise():
    import tomlkit
    from hypothesis import HealthCheck, given, settings

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(_shapes())
    def check(data):
        try:
            text = tomlkit.dumps(data)
        except Exception:  # noqa: BLE001 - a shape tomlkit cannot write
            return
        lesson = L.parse(text, "f.toml")
        assert all(isinstance(p, str) and p.startswith("f.toml") for p in lesson.problems)
        assert not any("could not be read" in p for p in lesson.problems), lesson.problems
        for s in lesson.steps:
            assert s.page in ("two_point", "measures")
            q = L.step_question(s, "en") if s.question is None or s.question.kind != "bank" else None
            assert q is None or q["kind"] == s.question.kind

    check()


def test_the_documented_example_is_a_valid_lesson():
    doc = (L.BUILTIN_DIR.parent.parent / "docs" / "lessons.md").read_text(encoding="utf-8")
    example = doc.split("```toml\n", 1)[1].split("```", 1)[0]
    lesson = L.parse(example, "week3.toml")
    assert lesson.problems == () and [s.question.kind for s in lesson.steps] == ["bank", "number", "choice", "text"]
    assert lesson.steps[1].preset == "strong" and lesson.steps[2].question.correct == 1
    # the messages the doc shows are the ones written
    bad = example.replace("params = { beta = 2.5, theta0 = 1.0 }", "params = { beta = 99.0 }", 1)
    assert "week3.toml: step 1: params.beta: 99.0 is outside [0.1, 10.0]" in L.parse(bad, "week3.toml").problems
    bad = example.replace("correct = 2", "correct = 3")
    assert (
        "week3.toml: step 3: question: correct: the number of the right option, 1 to 2 (leave it out for a poll), got 3"
    ) in L.parse(bad, "week3.toml").problems


def test_editing_the_text_keeps_comments_and_reports_what_no_longer_fits():
    from ui.teaching import lesson_doc as D

    text = (L.BUILTIN_DIR / "depth_width.toml").read_text(encoding="utf-8")
    comments = [x for x in text.splitlines() if x.startswith("#")]
    t2 = D.set_view(text, 0, "two_point", {"beta": 2.0, "theta0": 0.5})
    lesson = L.parse(t2, "depth_width.toml")
    assert (
        "depth_width.toml: step 1: question: bank: 'variance' is not a question of two_point "
        "(its questions: smaller, sa_end, energy0); question left out" in lesson.problems
    )
    assert lesson.steps[0].values()["theta0"] == 0.5
    assert lesson.steps[0].instruction == _shipped("depth_width").steps[0].instruction
    t3 = D.set_step(t2, 0, {"en": "a"}, {}, {"kind": "bank", "bank": "energy0"})
    assert L.parse(t3, "depth_width.toml").problems == ()
    t4 = D.move(D.delete(t3, 8), 0, 1)
    steps = L.parse(t4, "depth_width.toml").steps
    assert [s.page for s in steps[:2]] == ["depth_sum", "two_point"] and len(steps) == 8
    assert [x for x in t4.splitlines() if x.startswith("#")] == comments
    assert D.move(t4, 0, -1) == t4 and D.delete(t4, 99) == t4  # out of range: nothing changes
    assert D.check(D.set_head(t4, title={"en": "", "zh": ""}), "x.toml") == [
        "x.toml: lesson: title: missing (give title.en and title.zh)"
    ]
