"""A live lesson rehearsed in Chromium: one instructor, three students, one server (memory store).

The instructor (desktop, Chinese) signs in, opens a class on the home page and goes to a lesson:
"Push" and the question bank are there at once. Two phone students (390 px, Chinese and English)
and a laptop student (English) join by the link and see, in the main area of the page (the phone's
sidebar stays closed), each push, each question and each reveal. Two questions come from the page's
bank, their exact values computed (each reaching the students with its step's instruction: the class
trial, item 2); one student answers ``1e16`` (the count, the histogram and Reveal stay), one reloads
and changes their answer (counted once). The instructor reveals,
releases the page's worked answers (they reach the students without a reload), reloads, opens the
class console, downloads the results there and ends the class; every student is told.
Screenshots: ``screenshots/rehearsal_*``.
"""

from __future__ import annotations

import csv
import io

import pytest

from harness import browser as b
from harness.browser import WAIT_MS
from tests.e2e.conftest import ROOT
from tests.e2e.test_instructor import MAIN, SB, STEM, T, button, open_class, open_nav_link, open_nav_page, see, sign_in
from tests.e2e.test_instructor_more import flip, pick, release_switch
from ui.teaching import live, responses
from ui.teaching.teacher import with_context
from ui.kit.i18n import Text
from ui.kit.predict import human, live_question
from pages.two_point.predict import STEPS

BANNER = ".st-key-class_banner"
ARTIFACTS = ROOT / "artifacts"
PHONE = {"width": 390, "height": 844}


def C(lang: str) -> Text:
    return Text("console", lang)


@pytest.fixture
def people(browser):
    """``people(viewport, **context)``: a tab in a fresh browser context (a Streamlit session of its
    own) of that size; any JavaScript error in any of them fails the test."""
    made = []

    def new(viewport, **more):
        ctx = browser.new_context(viewport=viewport, locale="en-US", accept_downloads=True, **more)
        ctx.set_default_timeout(WAIT_MS)
        pg = ctx.new_page()
        pg.js_errors = []
        pg.on("pageerror", lambda exc: pg.js_errors.append(str(exc)))
        made.append(ctx)
        return pg

    yield new
    for i, ctx in enumerate(made):  # the last state of every tab (read them when the test fails)
        for pg in ctx.pages:
            try:
                pg.screenshot(path=str(ARTIFACTS / f"rehearsal_last_{i}.png"), animations="disabled")
            except Exception:  # noqa: BLE001 - a tab already gone
                pass
        ctx.close()


def _in_banner(pg, text: str, timeout: float = WAIT_MS):
    loc = pg.locator(BANNER, has_text=text).first
    loc.wait_for(state="visible", timeout=timeout)
    return loc


def _banner_on_screen(pg) -> None:
    """The banner is in the main area and on screen (a phone's sidebar stays closed)."""
    box = pg.locator(BANNER).first.bounding_box()
    vp = pg.viewport_size
    assert box and box["y"] < vp["height"] and box["x"] >= 0 and box["x"] + box["width"] <= vp["width"] + 1, box
    assert pg.locator(f"{MAIN} {BANNER}").count() == 1


_until = b.until


def _answer(pg, lang: str, qid: int, value) -> None:
    """Choose or type the answer, wait until the page holds it, send it, wait for "sent"."""
    if isinstance(value, str):  # a choice, by its label
        radio = pg.locator(f".st-key-_class_ans_{qid}")
        radio.wait_for(timeout=WAIT_MS)
        label = radio.locator("label", has_text=value).first
        _until(pg, label.click, lambda ms: label.locator("input:checked").wait_for(state="attached", timeout=ms))
    else:
        box = pg.locator(f".st-key-_class_ans_{qid} input")
        box.wait_for(timeout=WAIT_MS)
        b.commit_text(pg, box, f"{value:.10g}")
    b.wait_ready(pg)
    _until(
        pg,
        button(pg, T(lang)("class.send"), BANNER).click,
        lambda ms: _in_banner(pg, T(lang)("class.sent"), timeout=ms),
    )


def _ask(teacher, q: dict, qid: int) -> None:
    """Pick bank question ``q`` (its computed exact value shown), ask it: its live panel appears."""
    pick(teacher, "_class_qn", live._short(q["prompt"]["zh"]))
    see(teacher, C("zh")("teacher.truth", value=responses.q_value(q, "zh", q["truth"])), SB)
    b.wait_ready(teacher)
    _until(
        teacher,
        button(teacher, T("zh")("class.ask"), SB).click,
        lambda ms: teacher.locator(f".st-key-_class_reveal_{qid} button").wait_for(timeout=ms),
    )


def _reveal(teacher, qid: int) -> None:
    _until(
        teacher,
        teacher.locator(f".st-key-_class_reveal_{qid} button").click,
        lambda ms: see(teacher, C("zh")("teacher.revealed", value="", right="", n="")[:4], SB, timeout=ms),
    )


def _count(teacher, n: int) -> None:
    teacher.wait_for_function(
        "([n, zh]) => document.querySelector('[data-testid=\"stSidebar\"]').innerText.includes(zh.replace('{n}', n))",
        arg=[str(n), "目前 {n} 个答案"],
        timeout=WAIT_MS,
    )


#: what a student's page showed when something expected never came (said by a failing test): its
#: address, the class banner, the sidebar, the expanders' titles, the toasts seen, the run state
STATE_JS = """() => ({
  url: location.href,
  banner: (document.querySelector('.st-key-class_banner') || {}).innerText || null,
  sidebar: ((document.querySelector('[data-testid="stSidebarUserContent"]') || {}).innerText || '').slice(0, 2000),
  expanders: [...document.querySelectorAll('[data-testid="stExpander"] summary')]
    .map((e) => e.innerText.trim().slice(0, 40)),
  toasts: window.__toasts || null,
  script: (document.querySelector('[data-testid="stApp"]') || {getAttribute: () => null})
    .getAttribute('data-test-script-state'),
  stale: document.querySelectorAll('[data-stale="true"]').length,
  connection: !!document.querySelector('[data-testid="stStatusWidget"]'),
})"""


def page_said(pg) -> dict:
    """What ``pg`` showed (:data:`STATE_JS`, each text cut to 200 characters, no sidebar): for a
    failure's own line, as a CI run's screenshots are not kept."""
    return {k: (v[:200] if isinstance(v, str) else v) for k, v in pg.evaluate(STATE_JS).items() if k != "sidebar"}


def _shot(pg, path) -> None:
    pg.screenshot(path=str(path), animations="disabled")


def test_a_live_lesson_rehearsed(teacher_server, people, shots):
    tz, cz = T("zh"), C("zh")
    teacher = people(viewport={"width": 1400, "height": 1000})
    b.goto(teacher, f"{teacher_server}/?lang=zh")
    sign_in(teacher, "zh")
    see(teacher, tz("signin.signed_in"), SB)
    link, code = open_class(teacher, teacher_server, "zh")
    assert "class=" in link and code in link

    # the lesson page: Push and the question bank on its first run (no slider moved)
    open_nav_page(teacher, Text(STEM, "zh")("title"), STEM)
    teacher.locator(".st-key-_class_qn").wait_for(timeout=WAIT_MS)
    push = button(teacher, tz("class.push"), SB)
    assert push.is_enabled()

    students = [
        (people(viewport=PHONE, is_mobile=True, has_touch=True), "zh", "phone_zh"),
        (people(viewport=PHONE, is_mobile=True, has_touch=True), "en", "phone_en"),
        (people(viewport={"width": 1280, "height": 800}), "en", "laptop_en"),
    ]
    for pg, lang, _ in students:
        pg.goto(f"{link}&lang={lang}", wait_until="domcontentloaded")
        _in_banner(pg, code)
    push.click()
    for pg, lang, name in students:
        pg.wait_for_function(f"() => location.pathname.endsWith('/{STEM}')", timeout=WAIT_MS)
        pg.wait_for_function(
            "(t) => { const h = document.querySelector('[data-testid=\"stMain\"] h1');"
            " return h && h.innerText.trim() === t; }",
            arg=Text(STEM, lang)("title"),
            timeout=WAIT_MS,
        )
        _in_banner(pg, code)
        _banner_on_screen(pg)

    # question 1 from the bank: the SA half-angle, its exact value computed for the view
    values = {n: p.default for n, p in b.resolved(STEM).params.items()}
    steps = {s.id: s for s in STEPS}
    q1 = with_context(live_question(steps["sa_end"], STEM, values), steps["sa_end"], STEM, values)
    _ask(teacher, q1, 1)
    truth = q1["truth"]
    for pg, lang, _ in students:  # with its instruction and its parameters, in each student's language
        _in_banner(pg, q1["prompt"][lang][:20])
        _in_banner(pg, q1["instruction"][lang][:20])
    for pg, lang, name in students[:1]:
        _shot(pg, shots / f"rehearsal_{name}_question.png")
    (z, _, _), (e, _, _), (lap, _, _) = students
    _answer(z, "zh", 1, truth * 1.01)
    _answer(e, "en", 1, 1e16)
    _answer(lap, "en", 1, truth * 3)
    _count(teacher, 3)
    # the laptop reloads: its answer is still its own; it changes it; still three answers
    lap.reload(wait_until="domcontentloaded")
    _in_banner(lap, T("en")("class.sent"))
    # (right after a reload the page's first run is still drawing: a click then may be lost, as
    # any click on a fragment being redrawn; the student clicks again, and so does the test)
    _until(
        lap,
        button(lap, C("en")("banner.change"), BANNER).click,
        lambda ms: lap.locator(".st-key-_class_ans_1 input").wait_for(timeout=ms),
    )
    _answer(lap, "en", 1, truth)
    _count(teacher, 3)  # (that the change replaced the first answer: the results' verdicts below)
    teacher.locator(f'{SB} [data-testid="stVegaLiteChart"], {SB} [data-testid="stArrowVegaLiteChart"]').first.wait_for()
    reveal = teacher.locator(".st-key-_class_reveal_1 button")
    assert reveal.is_enabled()
    _shot(teacher, shots / "rehearsal_teacher_zh_1400.png")
    _reveal(teacher, 1)
    shown = human(truth, 4)
    for (pg, lang, name), ok in zip(students, (True, False, True)):
        _in_banner(pg, C(lang)("banner.right" if ok else "banner.wrong", tol=responses.tolerance(q1, lang)))
        assert shown in pg.locator(BANNER).inner_text()
        _shot(pg, shots / f"rehearsal_{name}_revealed.png")

    # question 2 from the bank: a choice
    q2 = live_question(steps["smaller"], STEM, values)
    _ask(teacher, q2, 2)
    for (pg, lang, _), pick_ in zip(
        students, (q2["truth"], q2["truth"], next(c for c in q2["options"] if c != q2["truth"]))
    ):
        _in_banner(pg, q2["prompt"][lang][:20])
        _answer(pg, lang, 2, q2["labels"][lang][pick_])
    _count(teacher, 3)
    _reveal(teacher, 2)
    for (pg, lang, name), ok in zip(students, (True, True, False)):
        _in_banner(pg, C(lang)("banner.right_choice" if ok else "banner.wrong_choice"))

    # the page's worked answers released: on the students' pages without a reload
    release_switch(teacher).scroll_into_view_if_needed()
    flip(teacher, True, "zh")
    for pg, lang, name in students:
        summary = pg.locator(f'{MAIN} [data-testid="stExpander"] summary', has_text=T(lang)("answers.title", i=1))
        try:
            summary.first.wait_for(timeout=WAIT_MS)
        except Exception as exc:  # noqa: BLE001 - said with what the student's page showed instead
            _shot(pg, shots / f"rehearsal_{name}_no_answers.png")
            seen = pg.evaluate(STATE_JS)
            raise AssertionError(f"{name}: the released answers never appeared; the page showed {seen}") from exc
    # ... and hidden again: released answers are the server's, and this worker's server goes on
    # to serve other tests (test_instructor.py checks that a student sees no answers)
    flip(teacher, False, "zh")
    for pg, lang, _ in students:
        pg.wait_for_function(
            "([sel, t]) => ![...document.querySelectorAll(sel)].some(e => e.innerText.includes(t))",
            arg=[f'{MAIN} [data-testid="stExpander"] summary', T(lang)("answers.title", i=1)],
            timeout=WAIT_MS,
        )

    # the instructor reloads: still signed in (the signed cookie) and in charge of the class (the
    # store keeps which class this sign-in teaches), nothing typed again
    teacher.reload(wait_until="domcontentloaded")
    b.wait_ready(teacher)
    see(teacher, tz("signin.signed_in"), SB)
    teacher.locator(".st-key-_class_csv button").wait_for(timeout=WAIT_MS)

    # the class console: results, then the end of the class
    open_nav_link(teacher, cz("title"))
    teacher.locator(".st-key-_console_csv button").wait_for(timeout=WAIT_MS)
    assert code in teacher.locator(MAIN).inner_text()
    teacher.locator(f"{MAIN} .tos-class-qr img").first.wait_for()
    b.wait_ready(teacher)
    _shot(teacher, shots / "rehearsal_console_zh_1400.png")
    with teacher.expect_download(timeout=WAIT_MS) as dl:
        teacher.locator(".st-key-_console_csv button").click()
    raw = open(dl.value.path(), encoding="utf-8").read()
    assert raw.startswith("\ufeff")  # a spreadsheet in a Chinese locale reads it as UTF-8
    rows = list(csv.DictReader(io.StringIO(raw[1:])))
    assert [r["question"] for r in rows].count("1") == 3 and [r["question"] for r in rows].count("2") == 3
    one = [r for r in rows if r["question"] == "1"]
    assert sorted(r["right"] for r in one) == ["0", "1", "1"]
    assert any(float(r["answer"]) == 1e16 for r in one)
    assert all(float(r["exact_value"]) == pytest.approx(truth) for r in one)
    button(teacher, tz("class.close"), MAIN).click()
    button(teacher, tz("class.close_yes"), MAIN).click()  # asked again before the class ends
    for pg, lang, name in students:
        pg.wait_for_function(
            "(t) => document.querySelector('[data-testid=\"stMain\"]').innerText.includes(t)",
            arg=C(lang)("banner.ended", code=code)[-8:],
            timeout=WAIT_MS,
        )
        _shot(pg, shots / f"rehearsal_{name}_ended.png")
    # the results stay downloadable on the console after the end, in the teacher's language
    with teacher.expect_download(timeout=WAIT_MS) as dl:
        teacher.locator(".st-key-_console_last_csv button").click()
    after = open(dl.value.path(), encoding="utf-8").read()
    assert after.startswith("\ufeffquestion,") and after.count("\n") == raw.count("\n")
